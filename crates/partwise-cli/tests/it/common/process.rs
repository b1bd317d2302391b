//! Member processes of the live tests (`partwise kafka consume`, the Java
//! harness): what such a process prints, read on threads while it runs, and
//! its signals and exit.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A child's stdout as NDJSON events and its stderr as text, collected as
/// they arrive, so a test can look at them while the process runs.
pub struct Captured {
    pub events: Arc<Mutex<Vec<Value>>>,
    pub stderr: Arc<Mutex<String>>,
    threads: Vec<JoinHandle<()>>,
}

impl Captured {
    /// Takes `child`'s piped stdout and stderr. With `echo`, stderr is also
    /// passed on, so a failing test still shows it.
    pub fn start(child: &mut Child, echo: bool) -> Captured {
        let (out, err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let events = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = events.clone();
        let t1 = std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                let v: Value =
                    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
                sink.lock().unwrap().push(v);
            }
        });
        let err_sink = stderr.clone();
        let t2 = std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                if echo {
                    eprintln!("{line}");
                }
                let mut s = err_sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        Captured {
            events,
            stderr,
            threads: vec![t1, t2],
        }
    }

    /// The events so far.
    pub fn events(&self) -> Vec<Value> {
        self.events.lock().unwrap().clone()
    }

    /// Stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits for the readers, which end when the process has closed its
    /// output: after this, nothing it printed is missing.
    pub fn join(&mut self) {
        for t in self.threads.drain(..) {
            t.join().unwrap();
        }
    }
}

/// Waits up to `limit` for `child` to exit (after a SIGTERM); its exit
/// code (-1 for a signal). Past `limit` it is killed and the test fails.
pub fn wait_exit(child: &mut Child, limit: Duration) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code().unwrap_or(-1);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("member did not exit within {limit:?} of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
