//! The demo's drill on the fixed system: workers, feed, a SIGKILL, a new
//! worker, a clean leave, verify.

use super::feed::feed_command;
use super::join::WorkerProc;
use super::plan::Result;
use super::verify::{verify, VerifyArgs};
use crate::flags::{Common, Runtime};
use serde_json::Value;
use std::time::{Duration, Instant};

/// The drill on the demo's topics and keys: workers, feed, a SIGKILL, a new
/// worker, a clean leave, verify.
/// What the demo's phases (the counter-example and the drill) take from its
/// flags.
pub(super) struct Phase {
    /// The workers' session timeout.
    pub(super) session_timeout: Duration,
    /// The drill's feed: events per second.
    pub(super) rate: u32,
    /// How long the drill's feed runs.
    pub(super) duration: Duration,
    /// The seed of both feeds.
    pub(super) seed: u64,
}

pub(super) fn drill(a: &Phase, common: &Common, group: &str) -> Result<u8> {
    let common = common.clone();
    println!("== join: 3 workers in group {group} (copartitioned assignor)");
    let mut workers: Vec<WorkerProc> = (0..3)
        .map(|i| {
            WorkerProc::start(
                &common,
                &format!("w{i}"),
                group,
                a.session_timeout,
                Runtime::Partwise,
                false,
            )
        })
        .collect::<Result<_>>()?;
    // Wait for the first assignments (Apache Kafka holds a new group's first
    // join for group.initial.rebalance.delay.ms).
    let deadline = Instant::now() + Duration::from_secs(30);
    while workers
        .iter()
        .any(|w| !w.events().iter().any(|e| e["event"] == "assigned"))
    {
        if Instant::now() > deadline {
            return Err("the workers got no assignment within 30 s".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let dur = a.duration;
    println!("== feed: {} events/s for {dur:?}, seed {}", a.rate, a.seed);
    let feeder = feed_command(&common, a.rate, dur, a.seed)?
        .spawn()
        .map_err(|e| format!("cannot start the feed: {e}"))?;
    std::thread::sleep(dur / 3);
    println!("== SIGKILL worker w1 mid-feed");
    workers[1].kill();
    std::thread::sleep(dur / 6);
    println!("== start worker w3");
    workers.push(WorkerProc::start(
        &common,
        "w3",
        group,
        a.session_timeout,
        Runtime::Partwise,
        false,
    )?);
    std::thread::sleep(dur / 6);
    println!("== worker w2 leaves cleanly (SIGTERM: it finishes its writes and leaves the group)");
    workers[2].stop(Duration::from_secs(20));
    let fed = feeder.wait_with_output().map_err(|e| e.to_string())?;
    if !fed.status.success() {
        return Err(format!("the feed failed ({})", fed.status));
    }
    let fed: Value = serde_json::from_slice(
        String::from_utf8_lossy(&fed.stdout)
            .lines()
            .last()
            .unwrap_or("{}")
            .as_bytes(),
    )
    .unwrap_or(Value::Null);
    println!(
        "   fed {} ticks and {} alerts (run {})",
        fed["ticks"], fed["alerts"], fed["run"]
    );
    println!("== verify (waiting up to 90 s for the workers to catch up)");
    let code = verify(&VerifyArgs {
        common: common.clone(),
        wait: Duration::from_secs(90),
        format: crate::flags::Format::Table,
    })?;
    for w in &mut workers {
        w.stop(Duration::from_secs(20));
    }
    println!("== who held which symbols, per generation");
    let mut fired = 0;
    for w in &workers {
        for e in w.events() {
            match e["event"].as_str() {
                Some("symbols") if e["symbols"].as_array().is_some_and(|s| !s.is_empty()) => {
                    let syms: Vec<&str> = e["symbols"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter_map(|s| s.as_str())
                        .collect();
                    println!(
                        "   {} generation {}: {}",
                        w.name,
                        e["generation"],
                        syms.join(" ")
                    );
                }
                Some("summary") => {
                    fired += e["fired_written"].as_u64().unwrap_or(0);
                    println!(
                        "   {} summary: {} ticks, {} alerts read, {} Redis transactions, tick->Redis latency p50 {} ms, p99 {} ms",
                        w.name, e["ticks"], e["alerts"], e["writes"], e["latency_ms"]["p50"], e["latency_ms"]["p99"]
                    );
                }
                _ => {}
            }
        }
    }
    if workers[1].events().iter().all(|e| e["event"] != "summary") {
        println!("   w1 was killed with SIGKILL: no summary; its units moved to the others after its session timed out");
    }
    println!("   alerts fired (written, replays included): {fired}");
    Ok(code)
}
