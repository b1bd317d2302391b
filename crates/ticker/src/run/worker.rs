//! `ticker worker`: one join worker, on partwise's group runtime
//! (`copartitioned`) or on a librdkafka `roundrobin` group (the seeds'
//! counter-example); what it does with the records is the sink's.

use super::plan::{brokers, connection, plan, rt, security, Plan, Result};
use super::sink::Sink;
use crate::flags::{Common, Runtime};
use partwise_group::{Config, Consumer, GroupAssignor, OffsetReset};
use partwise_kafka::subscribe::{Member, MemberOptions, Rebalance};
use partwise_kafka::Connection;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub(super) common: Common,
    /// The worker's name in events
    #[arg(long, default_value = "w0")]
    pub(super) id: String,
    /// Consumer group id
    #[arg(long, default_value = "ticker-joiner")]
    pub(super) group: String,
    /// session.timeout.ms: 45s, 500ms (a bare number is milliseconds)
    #[arg(long = "session-timeout", alias = "session-timeout-ms", value_name = "DURATION", default_value = "45s", value_parser = crate::flags::timeout)]
    pub(super) session_timeout: Duration,
    /// heartbeat.interval.ms: 3s, 500ms (a bare number is milliseconds)
    #[arg(long = "heartbeat-interval", alias = "heartbeat-interval-ms", value_name = "DURATION", default_value = "3s", value_parser = crate::flags::timeout)]
    pub(super) heartbeat_interval: Duration,
    /// How long a Redis write is retried (a node paused or failing over) before the worker gives up (a bare number is seconds)
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = crate::flags::span)]
    pub(super) redis_retry: Duration,
    /// The group runtime: partwise (copartitioned assignor) or librdkafka-roundrobin (the seed's counter-example)
    #[arg(long, value_enum, default_value = "partwise")]
    pub(super) runtime: Runtime,
    /// Append each written tick's produce-to-Redis latency (ms, one per line) to FILE at exit (bench/ticker)
    #[arg(long, value_name = "FILE", hide = true)]
    pub(super) latency_file: Option<PathBuf>,
}

pub fn worker(a: &WorkerArgs) -> Result<u8> {
    let p = plan(&a.common)?;
    let conn = connection(&a.common, Duration::from_secs(10))?;
    let mut sink = Sink::new(&a.common, &a.id, a.redis_retry, a.latency_file.clone(), &p)?;
    if a.runtime == Runtime::LibrdkafkaRoundrobin {
        return worker_librdkafka(a, &conn, &p, sink);
    }
    let b = conn.brokers().to_string();
    let mut cfg = Config::new(
        brokers(&conn),
        a.group.clone(),
        vec![p.market.clone(), p.notif.clone()],
    );
    cfg.assignor = GroupAssignor::Copartitioned;
    cfg.auto_offset_reset = OffsetReset::Earliest;
    // The join's state is rebuilt from whole partitions on every assignment
    // and its writes are idempotent, so nothing is committed.
    cfg.commit_offsets = false;
    cfg.client_id = format!("ticker-{}", a.id);
    cfg.session_timeout = a.session_timeout;
    cfg.heartbeat_interval = a.heartbeat_interval;
    cfg.fetch_max_wait = Duration::from_millis(100);
    cfg.request_timeout = conn.timeout();
    cfg.security = security(&conn)?;
    // Redis writes block; the heartbeat task runs on the other thread meanwhile.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    rt.block_on(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).map_err(|e| e.to_string())?;
        let mut int = signal(SignalKind::interrupt()).map_err(|e| e.to_string())?;
        let mut consumer = Consumer::new(cfg).await.map_err(|e| format!("{b}: {e}"))?;
        loop {
            let ev = tokio::select! {
                e = consumer.poll() => e.map_err(|e| format!("group {}: {e}", consumer.member_id()))?,
                _ = term.recv() => break,
                _ = int.recv() => break,
            };
            match ev {
                partwise_group::Event::Assigned(asg) => {
                    let units: Vec<i32> = asg.units.iter().map(|u| u.partition).collect();
                    sink.assigned(asg.generation, json!(units));
                }
                partwise_group::Event::Revoked(_) => sink.revoked(),
                partwise_group::Event::Unstored(u) => eprintln!("worker {}: {u}; rejoining", a.id),
                partwise_group::Event::Records { records, .. } => {
                    for r in &records {
                        sink.record(r.topic, r.offset, r.value);
                    }
                    sink.flush()?;
                }
            }
        }
        let _ = consumer.close().await;
        sink.summary();
        Ok(0)
    })
}

/// The seed's counter-example: the same join, but its group is a librdkafka
/// group under `roundrobin` (what KafkaJS's only built-in assigner does too),
/// which can give partition p of the two topics to two different workers.
pub(super) fn worker_librdkafka(
    a: &WorkerArgs,
    conn: &Connection,
    p: &Plan,
    mut sink: Sink,
) -> Result<u8> {
    let b = conn.brokers();
    let opts = MemberOptions {
        group: a.group.clone(),
        client_id: format!("ticker-{}", a.id),
        assignment_strategy: "roundrobin".into(),
        session_timeout: a.session_timeout,
        heartbeat_interval: a.heartbeat_interval,
    };
    let member = Member::join(conn, &opts, &[p.market.as_str(), p.notif.as_str()])
        .map_err(|e| format!("{b}: {e}"))?;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    std::thread::spawn(move || {
        let Ok(rt) = rt() else { return };
        rt.block_on(async {
            use tokio::signal::unix::{signal, SignalKind};
            let (Ok(mut term), Ok(mut int)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {},
                _ = int.recv() => {},
            }
        });
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let mut generation = 0;
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        let polled = member.poll(Duration::from_millis(100));
        for r in polled.rebalances {
            match r {
                Rebalance::Assigned(parts) => {
                    generation += 1;
                    let parts: Vec<Value> = parts.into_iter().map(|(t, p)| json!([t, p])).collect();
                    sink.assigned(generation, json!(parts));
                }
                // A failed rebalance leaves the member nothing, as a
                // revocation does.
                Rebalance::Revoked(_) | Rebalance::Failed(_) => sink.revoked(),
            }
        }
        match polled.record {
            Some(Ok(r)) => sink.record(r.topic(), r.offset(), r.value()),
            Some(Err(e)) => eprintln!("ticker worker {}: {e}", a.id),
            None => sink.flush()?,
        }
    }
    sink.flush()?;
    drop(member);
    sink.summary();
    Ok(0)
}
