//! `ticker join`: the supervisor of K worker processes, and the worker
//! process handle the demo uses too.

use super::plan::{connection, plan, rt, Result};
use crate::flags::{Common, Runtime};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct JoinArgs {
    #[command(flatten)]
    pub(super) common: Common,
    /// Worker processes, 1 to 64
    #[arg(long, default_value = "3", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(super) workers: u32,
    /// Consumer group id
    #[arg(long, default_value = "ticker-joiner")]
    pub(super) group: String,
    /// session.timeout.ms of each worker: 45s, 500ms (a bare number is milliseconds)
    #[arg(long = "session-timeout", alias = "session-timeout-ms", value_name = "DURATION", default_value = "45s", value_parser = crate::flags::timeout)]
    pub(super) session_timeout: Duration,
}

/// A worker process and what it printed.
pub struct WorkerProc {
    pub name: String,
    pub(super) child: Child,
    pub(super) events: Arc<Mutex<Vec<Value>>>,
}

impl WorkerProc {
    pub(super) fn start(
        common: &Common,
        name: &str,
        group: &str,
        session: Duration,
        runtime: Runtime,
        echo: bool,
    ) -> Result<WorkerProc> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut cmd = Command::new(exe);
        cmd.arg("worker")
            .args([
                "--id",
                name,
                "--group",
                group,
                "--redis",
                common.redis_nodes(),
            ])
            .arg("--topology")
            .arg(&common.topology)
            .args(["--session-timeout", &format!("{}ms", session.as_millis())])
            .args(["--runtime", runtime.name()])
            .args([
                "--heartbeat-interval",
                &format!("{}ms", (session.as_millis() / 6).max(100)),
            ]);
        cmd.args(common.kafka_args());
        if let Some(ns) = &common.namespace {
            cmd.args(["--namespace", ns]);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start worker {name}: {e}"))?;
        let stdout = child.stdout.take().expect("piped");
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if echo {
                    println!("{line}");
                }
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    sink.lock().expect("poisoned").push(v);
                }
            }
        });
        Ok(WorkerProc {
            name: name.to_string(),
            child,
            events,
        })
    }

    pub(super) fn events(&self) -> Vec<Value> {
        self.events.lock().expect("poisoned").clone()
    }

    pub(super) fn signal(&self, sig: &str) {
        let _ = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .stderr(Stdio::null())
            .status();
    }

    /// SIGTERM, then waits up to `limit` (then SIGKILL): a clean leave.
    pub(super) fn stop(&mut self, limit: Duration) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        self.signal("-TERM");
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                std::thread::sleep(Duration::from_millis(100));
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub(super) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for WorkerProc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn join(a: &JoinArgs) -> Result<u8> {
    plan(&a.common)?;
    connection(&a.common, Duration::from_secs(10))?;
    // The workers' flags, secrets in a private file rather than on their
    // command lines; removed once they are stopped.
    let (common, _secrets) = a.common.for_children()?;
    let mut procs: Vec<WorkerProc> = (0..a.workers)
        .map(|i| {
            WorkerProc::start(
                &common,
                &format!("w{i}"),
                &a.group,
                a.session_timeout,
                Runtime::Partwise,
                true,
            )
        })
        .collect::<Result<_>>()?;
    rt()?.block_on(async {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).map_err(|e| e.to_string())?;
        let mut int = signal(SignalKind::interrupt()).map_err(|e| e.to_string())?;
        tokio::select! {
            _ = term.recv() => {},
            _ = int.recv() => {},
        }
        Ok::<(), String>(())
    })?;
    for p in &mut procs {
        p.stop(Duration::from_secs(20));
    }
    Ok(0)
}

/// SIGTERM to every worker, then waits for each (then SIGKILL): they leave
/// together, rather than each one's leave rebalancing the ones still there.
pub(super) fn stop_all(ws: &mut [WorkerProc], limit: Duration) {
    for w in ws.iter_mut() {
        if let Ok(None) = w.child.try_wait() {
            w.signal("-TERM");
        }
    }
    for w in ws.iter_mut() {
        w.stop(limit);
    }
}
