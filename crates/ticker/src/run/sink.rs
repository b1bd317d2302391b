//! What a worker does with its records, whatever runtime hands them: the
//! join, its idempotent writes to Redis (one MULTI/EXEC per symbol), and the
//! worker's own counts.

use super::plan::{keys, now_ms, redis_seeds, Plan, Result};
use crate::flags::Common;
use crate::model::{Alert, Fired, Joiner, Tick};
use partwise_redis::{Command, NodeAddr, Reply, Writer};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A worker's own count of what it did, for its last line.
#[derive(Default)]
pub(super) struct Stats {
    ticks: u64,
    alerts: u64,
    fired: u64,
    writes: u64,
    bad: u64,
    latency_ms: Vec<i64>,
}

pub(super) fn out(v: Value) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{v}");
    let _ = o.flush();
}

/// Writes the join's output for one symbol in one MULTI/EXEC on the primary
/// of its slot: the newest tick (only if newer than what Redis holds: a
/// replay after a rebalance must not move it back) and the fired alerts
/// (by id, so writing one again changes nothing).
pub(super) fn write_symbol(
    w: &mut Writer,
    ns: Option<&str>,
    stored: &mut HashMap<String, i64>,
    sym: &str,
    tick: Option<&(Tick, i64)>,
    fired: &[(String, Fired)],
) -> std::result::Result<bool, partwise_redis::Error> {
    let (mk, nk) = keys(ns, sym);
    let have = match stored.get(sym) {
        Some(&o) => o,
        None => {
            let r = w.exec(&[Command::HGet(mk.clone().into_bytes(), "offset".into())])?;
            let o = r
                .first()
                .and_then(Reply::value)
                .and_then(|b| std::str::from_utf8(b).ok())
                .and_then(|s| s.parse().ok())
                .unwrap_or(-1);
            stored.insert(sym.to_string(), o);
            o
        }
    };
    let tick = tick.filter(|(_, o)| *o > have);
    if tick.is_none() && fired.is_empty() {
        return Ok(false);
    }
    let fired_json: Vec<(String, String)> = fired
        .iter()
        .map(|(id, f)| (id.clone(), serde_json::to_string(f).expect("plain struct")))
        .collect();
    // Integers are written as their decimal text, as the redis crate wrote them.
    let mut commands = Vec::new();
    if let Some((t, o)) = tick {
        commands.push(Command::HSet(
            mk.clone().into_bytes(),
            vec![
                ("price".into(), t.price.to_string()),
                ("seq".into(), t.seq.to_string()),
                ("run".into(), t.run.clone()),
                ("offset".into(), o.to_string()),
                ("ts_ms".into(), t.ts_ms.to_string()),
            ],
        ));
    }
    for (id, f) in fired_json {
        commands.push(Command::HSet(nk.clone().into_bytes(), vec![(id, f)]));
    }
    if commands.is_empty() {
        return Ok(false);
    }
    w.exec(&commands)?;
    if let Some((_, o)) = tick {
        stored.insert(sym.to_string(), *o);
    }
    Ok(true)
}

/// What a worker does with the records it is handed, whatever group runtime
/// hands them: the join, its writes to Redis, and its own counts.
pub(super) struct Sink {
    id: String,
    market: String,
    notif: String,
    ns: Option<String>,
    seeds: Vec<NodeAddr>,
    retry: Duration,
    writer: Writer,
    join: Joiner,
    stored: HashMap<String, i64>,
    stats: Stats,
    generation: i32,
    seen: BTreeSet<String>,
    /// Latency counts ticks produced while this worker ran: a replay of
    /// older ticks measures the replay, not the join.
    started_ms: i64,
    last_write_ms: i64,
    latency_file: Option<PathBuf>,
}

impl Sink {
    /// The sink of worker `id` (its flags' Redis seeds, how long a write is
    /// retried, where its latencies go) on the plan's topics.
    pub(super) fn new(
        common: &Common,
        id: &str,
        retry: Duration,
        latency_file: Option<PathBuf>,
        p: &Plan,
    ) -> Result<Sink> {
        let seeds = redis_seeds(common)?;
        let writer =
            Writer::connect(&seeds, Duration::from_secs(2)).map_err(|e| format!("--redis: {e}"))?;
        Ok(Sink {
            id: id.to_string(),
            market: p.market.clone(),
            notif: p.notif.clone(),
            ns: p.ns.clone(),
            seeds,
            retry,
            writer,
            join: Joiner::default(),
            stored: HashMap::new(),
            stats: Stats::default(),
            generation: -1,
            seen: BTreeSet::new(),
            started_ms: now_ms(),
            last_write_ms: 0,
            latency_file,
        })
    }

    pub(super) fn report_symbols(&mut self) {
        if self.generation >= 0 {
            out(
                json!({"event": "symbols", "worker": self.id, "generation": self.generation,
                       "symbols": std::mem::take(&mut self.seen)}),
            );
        }
    }

    /// A new assignment: the state is rebuilt by replaying its partitions.
    pub(super) fn assigned(&mut self, generation: i32, units: Value) {
        self.report_symbols();
        self.generation = generation;
        self.join.clear();
        self.stored.clear();
        out(
            json!({"event": "assigned", "worker": self.id, "generation": generation, "units": units}),
        );
    }

    pub(super) fn revoked(&mut self) {
        self.report_symbols();
        self.join.clear();
        self.stored.clear();
        out(json!({"event": "revoked", "worker": self.id, "generation": self.generation}));
    }

    pub(super) fn record(&mut self, topic: &str, offset: i64, value: Option<&[u8]>) {
        let Some(v) = value else {
            self.stats.bad += 1;
            return;
        };
        if topic == self.market {
            match serde_json::from_slice::<Tick>(v) {
                Ok(t) => {
                    self.stats.ticks += 1;
                    self.seen.insert(t.symbol.clone());
                    self.join.tick(t, offset);
                }
                Err(_) => self.stats.bad += 1,
            }
        } else if topic == self.notif {
            match serde_json::from_slice::<Alert>(v) {
                Ok(al) => {
                    self.stats.alerts += 1;
                    self.seen.insert(al.symbol.clone());
                    self.join.alert(al);
                }
                Err(_) => self.stats.bad += 1,
            }
        }
    }

    /// Writes what the join produced; a failing node is retried for
    /// `--redis-retry` (a paused primary, a failover), reconnecting each time.
    pub(super) fn flush(&mut self) -> Result<()> {
        for (sym, w) in self.join.take_writes() {
            let since = Instant::now();
            loop {
                match write_symbol(
                    &mut self.writer,
                    self.ns.as_deref(),
                    &mut self.stored,
                    &sym,
                    w.tick.as_ref(),
                    &w.fired,
                ) {
                    Ok(wrote) => {
                        if wrote {
                            self.last_write_ms = now_ms();
                            self.stats.writes += 1;
                            self.stats.fired += w.fired.len() as u64;
                            if let Some((t, _)) =
                                w.tick.as_ref().filter(|(t, _)| t.ts_ms >= self.started_ms)
                            {
                                self.stats.latency_ms.push(now_ms() - t.ts_ms);
                            }
                        }
                        break;
                    }
                    Err(e) if since.elapsed() < self.retry => {
                        eprintln!(
                            "ticker worker {}: Redis write for {sym} failed ({e}); retrying",
                            self.id
                        );
                        std::thread::sleep(Duration::from_millis(500));
                        if let Ok(fresh) = Writer::connect(&self.seeds, Duration::from_secs(2)) {
                            self.writer = fresh;
                        }
                    }
                    Err(e) => {
                        return Err(format!(
                            "Redis write for {sym}: {e} (retried {:?})",
                            self.retry
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn summary(mut self) {
        self.report_symbols();
        let mut lat = std::mem::take(&mut self.stats.latency_ms);
        lat.sort_unstable();
        if let Some(path) = &self.latency_file {
            let text: String = lat.iter().map(|l| format!("{l}\n")).collect();
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| f.write_all(text.as_bytes()));
            if let Err(e) = written {
                eprintln!(
                    "ticker worker {}: --latency-file {}: {e}",
                    self.id,
                    path.display()
                );
            }
        }
        let q = |f: f64| -> Value {
            if lat.is_empty() {
                Value::Null
            } else {
                lat[((lat.len() - 1) as f64 * f).round() as usize].into()
            }
        };
        let st = &self.stats;
        out(
            json!({"event": "summary", "worker": self.id, "ticks": st.ticks, "alerts": st.alerts,
                   "fired_written": st.fired, "writes": st.writes, "bad_records": st.bad,
                   "last_write_ms": self.last_write_ms,
                   "latency_ms": {"p50": q(0.5), "p99": q(0.99), "count": lat.len()}}),
        );
    }
}
