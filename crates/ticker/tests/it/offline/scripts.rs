//! The launch scripts signal only the servers they started: a pid file left
//! behind by a server that died may name any process by now (here a `sleep`
//! standing for another user's program), and stopping must leave it alone.
//! Offline: no server is started, only the pid files are forged.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::Duration;

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts")
        .join(name)
}

/// A process that is not a server of ours; killed when the test ends.
struct Bystander(Child);

impl Bystander {
    fn start() -> Bystander {
        Bystander(Command::new("sleep").arg("300").spawn().unwrap())
    }

    fn pid(&self) -> String {
        self.0.id().to_string()
    }

    fn alive(&mut self) -> bool {
        // A signalled process needs a moment to die.
        std::thread::sleep(Duration::from_millis(300));
        self.0.try_wait().unwrap().is_none()
    }
}

impl Drop for Bystander {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn redis_cluster_down_leaves_a_process_a_stale_pid_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut sleep = Bystander::start();
    let node = dir.path().join("7391");
    std::fs::create_dir_all(&node).unwrap();
    std::fs::write(node.join("redis.pid"), sleep.pid()).unwrap();
    // Something of the user's in the same directory, not made by the script.
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let o = Command::new("bash")
        .arg(script("redis-cluster-down"))
        .arg("7390")
        .env("PARTWISE_REDIS_DIR", dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        sleep.alive(),
        "redis-cluster-down killed a sleep: {}",
        stderr(&o)
    );
    let e = stderr(&o);
    assert!(
        e.contains(&sleep.pid()) && e.contains("not a redis-server") && e.contains("left alone"),
        "{e}"
    );
    assert!(
        dir.path().join("notes.txt").exists(),
        "a file it did not make was removed"
    );
    assert!(!node.exists(), "its own node directory stays");
}

#[test]
fn kafka_up_stop_and_kill_leave_a_process_a_stale_pid_file_names() {
    for action in [vec!["--stop"], vec!["--kill", "1"]] {
        let dir = tempfile::tempdir().unwrap();
        let mut sleep = Bystander::start();
        let node = dir.path().join("node-1");
        std::fs::create_dir_all(&node).unwrap();
        std::fs::write(node.join("server.properties"), "node.id=1\n").unwrap();
        std::fs::write(node.join("pid"), sleep.pid()).unwrap();
        let o = Command::new("bash")
            .arg(script("kafka-up"))
            .arg("--dir")
            .arg(dir.path())
            .args(&action)
            .output()
            .unwrap();
        assert!(o.status.success(), "{action:?}: {}", stderr(&o));
        assert!(
            sleep.alive(),
            "kafka-up {action:?} killed a sleep: {}",
            stderr(&o)
        );
        let e = stderr(&o);
        assert!(
            e.contains(&sleep.pid()) && e.contains("left alone"),
            "{action:?}: {e}"
        );
    }
}
