//! `ticker feed`: reproducible ticks and alerts, routed by the topology's
//! partitioners; and the feed as a child process, for the demo's phases.

use super::plan::{connection, now_ms, plan, Result};
use crate::flags::Common;
use crate::model::{Event, Generator, MAX_PRICE, SYMBOLS};
use partwise_kafka::produce::RoutedProducer;
use serde_json::json;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct FeedArgs {
    #[command(flatten)]
    pub(super) common: Common,
    /// Events (ticks and alerts) per second, 1 to 100000
    #[arg(long, default_value = "200", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub(super) rate: u32,
    /// How long to feed (10s, 500ms, 2m, 1h; a bare number is seconds)
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = crate::flags::span)]
    pub(super) duration: Duration,
    /// Seed of the random walk and the alerts: the same seed, the same feed
    #[arg(long, default_value = "1")]
    pub(super) seed: u64,
    /// Symbols, one per line, each one of the seed's ten or SYMBOL,START_PRICE
    #[arg(long, value_name = "FILE")]
    pub(super) symbols: Option<PathBuf>,
    /// Users who set alerts
    #[arg(long, default_value = "50")]
    pub(super) users: u64,
    /// The run's id (default: from the clock); alert ids are RUN-SEQ
    #[arg(long)]
    pub(super) run: Option<String>,
}

pub(super) fn symbols(file: Option<&PathBuf>) -> Result<Vec<(String, i64)>> {
    let Some(path) = file else {
        return Ok(SYMBOLS.iter().map(|(s, p)| (s.to_string(), *p)).collect());
    };
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("--symbols {}: {e}", path.display()))?;
    let mut out: Vec<(String, i64)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("--symbols {}: line {}", path.display(), i + 1);
        let (sym, price) = match line.split_once(',') {
            Some((s, p)) => {
                let price: i64 = p
                    .trim()
                    .parse()
                    .ok()
                    .filter(|v| (1..=MAX_PRICE).contains(v))
                    .ok_or_else(|| {
                        format!(
                            "{}: '{}' is not a price from 1 to {MAX_PRICE} rupiah",
                            at(),
                            p.trim()
                        )
                    })?;
                (s.trim().to_string(), price)
            }
            None => {
                let known = SYMBOLS.iter().find(|(s, _)| *s == line).ok_or_else(|| {
                    format!(
                        "{}: unknown symbol '{line}' (the seed's ten are {}; give others as SYMBOL,START_PRICE)",
                        at(),
                        SYMBOLS.map(|(s, _)| s).join(", ")
                    )
                })?;
                (line.to_string(), known.1)
            }
        };
        if sym.is_empty() || sym.contains(['{', '}']) {
            return Err(format!("{}: '{sym}' is not a symbol", at()));
        }
        if out.iter().any(|(s, _)| *s == sym) {
            return Err(format!("{}: '{sym}' is listed twice", at()));
        }
        out.push((sym, price));
    }
    if out.is_empty() {
        return Err(format!("--symbols {}: no symbols", path.display()));
    }
    Ok(out)
}

pub fn feed(a: &FeedArgs) -> Result<u8> {
    let p = plan(&a.common)?;
    let syms = symbols(a.symbols.as_ref())?;
    let dur = a.duration;
    let conn = connection(&a.common, Duration::from_secs(10))?;
    let mut producers: HashMap<String, RoutedProducer> = HashMap::new();
    for topic in [&p.market, &p.notif] {
        let (partitioner, _) = p.routing[topic];
        let mut rp = RoutedProducer::new(&conn, partitioner).map_err(|e| e.to_string())?;
        rp.partition_count(topic)
            .map_err(|e| format!("{e} (run `ticker up` first)"))?;
        producers.insert(topic.clone(), rp);
    }
    let run = a.run.clone().unwrap_or_else(|| format!("r{}", now_ms()));
    let mut g = Generator::new(&run, a.seed, syms, a.users)?;
    let total = ((a.rate as f64) * dur.as_secs_f64()).round() as u64;
    let start = Instant::now();
    let (mut ticks, mut alerts) = (0u64, 0u64);
    for i in 0..total {
        // Paced: event i goes out at i / rate seconds.
        let due = start + Duration::from_secs_f64(i as f64 / a.rate as f64);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let (topic, symbol, value) = match g.next(now_ms()) {
            Event::Tick(t) => {
                ticks += 1;
                (&p.market, t.symbol.clone(), serde_json::to_vec(&t))
            }
            Event::Alert(al) => {
                alerts += 1;
                (&p.notif, al.symbol.clone(), serde_json::to_vec(&al))
            }
        };
        let value = value.map_err(|e| e.to_string())?;
        let (_, format) = p.routing[topic];
        let key = format
            .encode(symbol.as_bytes())
            .map_err(|e| format!("key {symbol}: {e}"))?;
        let rp = producers
            .get_mut(topic)
            .expect("both topics have a producer");
        rp.send(topic, Some(&key), Some(&value), &[], i as usize)
            .map_err(|e| e.to_string())?;
        if i % 256 == 0 {
            for d in rp.poll_deliveries() {
                if let Some(e) = d.error {
                    return Err(format!("{topic}: record {}: {e}", d.id));
                }
            }
        }
    }
    for (topic, rp) in &mut producers {
        for d in rp.flush().map_err(|e| e.to_string())? {
            if let Some(e) = d.error {
                return Err(format!("{topic}: record {}: {e}", d.id));
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{}",
        json!({"event": "fed", "run": run, "seed": a.seed, "ticks": ticks, "alerts": alerts,
               "seconds": secs, "rate": (ticks + alerts) as f64 / secs.max(1e-9)})
    );
    Ok(0)
}

/// `ticker feed` for the demo's phases, as a child process.
pub(super) fn feed_command(
    common: &Common,
    rate: u32,
    dur: Duration,
    seed: u64,
) -> Result<Command> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut c = Command::new(&exe);
    c.arg("feed")
        .args(common.kafka_args())
        .args([
            "--redis",
            common.redis_nodes(),
            "--namespace",
            common.namespace.as_deref().expect("set by demo"),
            "--rate",
            &rate.to_string(),
        ])
        .args([
            "--duration",
            &format!("{}ms", dur.as_millis()),
            "--seed",
            &seed.to_string(),
        ])
        .arg("--topology")
        .arg(&common.topology)
        .stdout(Stdio::piped());
    Ok(c)
}
