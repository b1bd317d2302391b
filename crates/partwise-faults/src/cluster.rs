//! Private Apache Kafka clusters for tests that kill brokers.
//!
//! A test that SIGKILLs a broker cannot share the cluster `bash scripts/test`
//! starts, so it gets one of its own: [`KafkaCluster::start`] runs
//! `scripts/kafka-up` (the one launcher of the repository, the same broker
//! and configuration as every other live test) in a fresh directory with
//! `--port 0`, and drives its `--kill N` / `--restart N` / `--stop`.
//!
//! The nodes run in a session of their own (the script starts them with
//! `setsid`), so they would outlive a test process that is itself killed.
//! A small watchdog, also in its own session, stops the cluster and removes
//! its directory when the test process is gone, whatever ended it.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

/// `scripts/kafka-up` of this repository.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/kafka-up")
}

/// A running Apache Kafka cluster of this test's own, in KRaft mode (every
/// node is broker and controller). Dropping it kills every node and removes
/// its state.
///
/// ```no_run
/// use partwise_faults::KafkaCluster;
///
/// let kafka = KafkaCluster::start_with(3, &["min.insync.replicas=2"]).unwrap();
/// // Point clients at kafka.bootstrap(); find a coordinator's node by its address.
/// let node = kafka.node_at(&kafka.addr(2)).unwrap();
/// kafka.kill(node).unwrap(); // SIGKILL; its log directory stays
/// kafka.restart(node).unwrap(); // back on the same log and ports
/// ```
pub struct KafkaCluster {
    dir: PathBuf,
    nodes: Vec<i32>,
    bootstrap: String,
    watchdog: Option<Child>,
}

impl KafkaCluster {
    /// Starts `nodes` nodes (1..=9) with the script's defaults.
    pub fn start(nodes: usize) -> io::Result<KafkaCluster> {
        KafkaCluster::start_with(nodes, &[])
    }

    /// Starts `nodes` nodes with extra broker properties (`key=value`, as
    /// `kafka-up --set`), e.g. `min.insync.replicas=2`.
    pub fn start_with(nodes: usize, settings: &[&str]) -> io::Result<KafkaCluster> {
        KafkaCluster::start_with_jars(nodes, settings, &[])
    }

    /// [`start_with`](KafkaCluster::start_with), with `jars` on the nodes'
    /// class path (`kafka-up --classpath`), e.g. a broker-side assignor.
    pub fn start_with_jars(
        nodes: usize,
        settings: &[&str],
        jars: &[&Path],
    ) -> io::Result<KafkaCluster> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "partwise-kafka-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        // A directory left by an earlier process of the same pid is stale.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        // Tests start clusters in parallel; on a machine without the jars
        // yet, each start would resolve them into the same directory at once.
        static RESOLVED: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
        {
            let mut done = RESOLVED.lock().unwrap_or_else(|e| e.into_inner());
            if !*done {
                let out = Command::new("bash")
                    .arg(script())
                    .arg("--dir")
                    .arg(&dir)
                    .arg("--resolve-only")
                    .stdin(Stdio::null())
                    .output()?;
                if !out.status.success() {
                    let _ = std::fs::remove_dir_all(&dir);
                    return Err(io::Error::other(format!(
                        "kafka-up --resolve-only failed ({}): {}",
                        out.status,
                        String::from_utf8_lossy(&out.stderr)
                    )));
                }
                *done = true;
            }
        }
        let watchdog = spawn_watchdog(&dir).ok();
        let mut cluster = KafkaCluster {
            dir,
            nodes: (1..=nodes as i32).collect(),
            bootstrap: String::new(),
            watchdog,
        };
        let n = nodes.to_string();
        let mut args = vec!["--port", "0", "--brokers", &n, "--heap", "384m"];
        for s in settings {
            args.extend(["--set", s]);
        }
        let jars: Vec<String> = jars.iter().map(|j| j.display().to_string()).collect();
        for j in &jars {
            args.extend(["--classpath", j.as_str()]);
        }
        // The script picks free ports, but another process may take one
        // before the node binds it; a second start in the same directory
        // begins afresh with new ones.
        let out = match cluster.run(&args) {
            Ok(out) => out,
            Err(first) => cluster
                .run(&args)
                .map_err(|e| io::Error::other(format!("{first}\nand again: {e}")))?,
        };
        cluster.bootstrap = String::from_utf8_lossy(&out)
            .lines()
            .last()
            .unwrap_or_default()
            .trim()
            .to_string();
        if cluster.bootstrap.is_empty() {
            return Err(io::Error::other("kafka-up printed no bootstrap"));
        }
        Ok(cluster)
    }

    /// Runs the script on this cluster's directory; its stdout.
    fn run(&self, args: &[&str]) -> io::Result<Vec<u8>> {
        let out = Command::new("bash")
            .arg(script())
            .arg("--dir")
            .arg(&self.dir)
            .args(args)
            .stdin(Stdio::null())
            .output()?;
        if !out.status.success() {
            return Err(io::Error::other(format!(
                "kafka-up {} failed ({}): {}",
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(out.stdout)
    }

    /// The PLAINTEXT bootstrap list, `host:port` of every node, comma-separated.
    pub fn bootstrap(&self) -> &str {
        &self.bootstrap
    }

    /// The node ids, 1..=n (a node's id is also its broker id in Metadata).
    pub fn nodes(&self) -> &[i32] {
        &self.nodes
    }

    /// The PLAINTEXT `host:port` of `node`, the address Metadata and
    /// FindCoordinator give for it.
    pub fn addr(&self, node: i32) -> String {
        let ports = std::fs::read_to_string(self.dir.join(format!("node-{node}/ports")))
            .unwrap_or_default();
        let port = ports.split_whitespace().next().unwrap_or("0");
        format!("127.0.0.1:{port}")
    }

    /// The node listening at `addr` (`host:port`), if it is one of ours.
    pub fn node_at(&self, addr: &str) -> Option<i32> {
        self.nodes.iter().copied().find(|&n| self.addr(n) == addr)
    }

    /// SIGKILLs `node`: no controlled shutdown, its log directory stays.
    pub fn kill(&self, node: i32) -> io::Result<()> {
        self.run(&["--kill", &node.to_string()]).map(drop)
    }

    /// Starts `node` again on its log directory and ports; returns when it
    /// reports itself started.
    pub fn restart(&self, node: i32) -> io::Result<()> {
        self.run(&["--restart", &node.to_string()]).map(drop)
    }

    /// Whether `node`'s process is alive.
    pub fn running(&self, node: i32) -> bool {
        std::fs::read_to_string(self.dir.join(format!("node-{node}/pid")))
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok())
            .is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists())
    }

    /// The state directory (logs of node N in `node-N/server.log`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for KafkaCluster {
    fn drop(&mut self) {
        // The state goes with the cluster, so there is nothing a controlled
        // shutdown would save; SIGKILL is also what a panicking test needs.
        for n in self.nodes.clone() {
            let _ = self.kill(n);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
    }
}

/// Stops the cluster in `dir` once this process has exited.
fn spawn_watchdog(dir: &Path) -> io::Result<Child> {
    let body = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; \
         [ -d \"$1\" ] && bash \"$2\" --dir \"$1\" --stop; rm -rf \"$1\"",
        pid = std::process::id()
    );
    Command::new("setsid")
        .args(["bash", "-c", &body, "partwise-kafka-watchdog"])
        .arg(dir)
        .arg(script())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
}
