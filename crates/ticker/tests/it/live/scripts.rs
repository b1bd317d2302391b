//! `scripts/redis-cluster-up` never tears down or recreates a cluster it did
//! not start: a port held by a server it did not start is refused, and so is
//! a cluster of its own that someone is pausing with SIGSTOP (it only looks
//! unhealthy). Each case on ports of its own, never the shared 7100-7102.

use partwise_faults::live::{repo, Reaped};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// BASE..BASE+2 free, and their bus ports (+10000).
fn free_base(salt: u16) -> u16 {
    let free = |p: u16| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
    (0..300u16)
        .map(|i| 26000 + ((std::process::id() as u16 % 500) + salt * 97 + i * 41) % 3000 * 3)
        .find(|&b| (0..3).all(|k| free(b + k) && free(b + k + 10000)))
        .expect("three free ports")
}

fn script(name: &str, base: u16, dir: &Path) -> Output {
    Command::new("bash")
        .arg(repo().join("scripts").join(name))
        .arg(base.to_string())
        .env("PARTWISE_REDIS_DIR", dir)
        .output()
        .unwrap()
}

fn cli(port: u16, args: &[&str]) -> String {
    let o = Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn redis_cluster_up_refuses_a_port_held_by_a_server_it_did_not_start() {
    let base = free_base(1);
    let dir = tempfile::tempdir().unwrap();
    // Someone's own redis-server (no pid file of the script's names it).
    let data = tempfile::tempdir().unwrap();
    let theirs = Reaped(
        Command::new("redis-server")
            .args([
                "--port",
                &base.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .arg("--dir")
            .arg(data.path())
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while cli(base, &["ping"]) != "PONG" {
        assert!(Instant::now() < deadline, "redis-server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(cli(base, &["set", "their-key", "kept"]), "OK");
    let o = script("redis-cluster-up", base, dir.path());
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains(&format!("127.0.0.1:{base} is in use")) && e.contains("refusing"),
        "{e}"
    );
    assert_eq!(cli(base, &["get", "their-key"]), "kept");
    drop(theirs);
}

#[test]
fn redis_cluster_up_leaves_a_paused_cluster_of_its_own_alone() {
    let base = free_base(2);
    let dir = tempfile::tempdir().unwrap();
    let up = script("redis-cluster-up", base, dir.path());
    assert!(up.status.success(), "{}", stderr(&up));
    let pid_of = |k: u16| {
        std::fs::read_to_string(dir.path().join((base + k).to_string()).join("redis.pid"))
            .unwrap()
            .trim()
            .to_string()
    };
    let before: Vec<String> = (0..3).map(pid_of).collect();
    let paused = &before[1];
    Command::new("kill")
        .args(["-STOP", paused])
        .status()
        .unwrap();
    let o = script("redis-cluster-up", base, dir.path());
    Command::new("kill")
        .args(["-CONT", paused])
        .status()
        .unwrap();
    let after: Vec<String> = (0..3).map(pid_of).collect();
    let down = script("redis-cluster-down", base, dir.path());
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("SIGSTOP") && e.contains("refusing"), "{e}");
    assert_eq!(
        before, after,
        "the paused cluster was torn down and made anew"
    );
    assert!(down.status.success(), "{}", stderr(&down));
}

/// A node that cannot start (its cluster-bus port is taken) fails the whole
/// start, and the nodes that did start are stopped, not left running.
#[test]
fn redis_cluster_up_stops_the_nodes_it_started_when_one_fails() {
    let base = free_base(3);
    let dir = tempfile::tempdir().unwrap();
    let bus = std::net::TcpListener::bind(("127.0.0.1", base + 1 + 10000)).unwrap();
    let o = script("redis-cluster-up", base, dir.path());
    drop(bus);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains(&format!("port {} did not start", base + 1)),
        "{e}"
    );
    for p in [base, base + 2] {
        let deadline = Instant::now() + Duration::from_secs(5);
        while std::net::TcpStream::connect(("127.0.0.1", p)).is_ok() {
            assert!(
                Instant::now() < deadline,
                "a node it started still runs on {p}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
