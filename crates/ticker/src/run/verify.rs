//! `ticker verify`: both topics read whole, what Redis must hold recomputed
//! by the oracle, and compared with what it holds.

use super::plan::{bootstrap, keys, plan, redis_seeds, Plan, Result};
use crate::flags::{Common, Format};
use crate::model::{expected, Alert, Fired, Tick};
use partwise_redis::Writer;
use rdkafka::consumer::{BaseConsumer, Consumer as _};
use rdkafka::message::Message;
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub(super) common: Common,
    /// Keep checking until it holds or this long has passed (the workers may still be catching up)
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = crate::flags::span)]
    pub(super) wait: Duration,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    pub(super) format: Format,
}

/// Every record of `topic`, from the beginning to the end offsets as they
/// are now, with no group (nothing is committed anywhere).
pub(super) fn read_topic(b: &str, topic: &str) -> Result<Vec<(i32, i64, Vec<u8>)>> {
    // librdkafka's consumer wants a group.id even for assign(); with no
    // subscribe and no commits, no group is ever joined or written.
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", b)
        .set("group.id", "ticker-verify")
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("enable.partition.eof", "false")
        .set("fetch.wait.max.ms", "50")
        .create()
        .map_err(|e| format!("{b}: {e}"))?;
    let md = c
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .map_err(|e| format!("{b}: metadata of {topic}: {e}"))?;
    let t = md
        .topics()
        .iter()
        .find(|t| t.name() == topic && t.error().is_none())
        .ok_or_else(|| format!("{b}: topic {topic} does not exist (run `ticker up`)"))?;
    let mut ends = HashMap::new();
    let mut tpl = TopicPartitionList::new();
    for p in t.partitions() {
        let (lo, hi) = c
            .fetch_watermarks(topic, p.id(), Duration::from_secs(10))
            .map_err(|e| format!("{b}: watermarks of {topic}-{}: {e}", p.id()))?;
        if hi > lo {
            ends.insert(p.id(), hi);
            tpl.add_partition_offset(topic, p.id(), Offset::Offset(lo))
                .map_err(|e| e.to_string())?;
        }
    }
    c.assign(&tpl).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !ends.is_empty() {
        if Instant::now() > deadline {
            return Err(format!("{b}: reading {topic} took more than 120 s"));
        }
        let Some(m) = c.poll(Duration::from_millis(500)) else {
            continue;
        };
        let m = m.map_err(|e| format!("{b}: reading {topic}: {e}"))?;
        let (p, o) = (m.partition(), m.offset());
        if let Some(&end) = ends.get(&p) {
            if o < end {
                out.push((p, o, m.payload().unwrap_or_default().to_vec()));
            }
            if o + 1 >= end {
                ends.remove(&p);
            }
        }
    }
    Ok(out)
}

/// What verify found.
pub(super) struct Verdict {
    pub(super) ticks: usize,
    pub(super) alerts: usize,
    pub(super) expected_fired: usize,
    pub(super) pending: usize,
    pub(super) missing: Vec<String>,
    pub(super) unexpected: Vec<String>,
    pub(super) wrong: Vec<String>,
    pub(super) stale: Vec<String>,
    pub(super) symbols: usize,
    /// Per symbol: how many alerts must have fired (symbols with none are absent).
    pub(super) due: BTreeMap<String, usize>,
    /// Per symbol: how many of those are not in Redis (symbols with none are absent).
    pub(super) missing_by_symbol: BTreeMap<String, usize>,
}

impl Verdict {
    pub(super) fn ok(&self) -> bool {
        self.missing.is_empty()
            && self.unexpected.is_empty()
            && self.wrong.is_empty()
            && self.stale.is_empty()
    }
}

pub(super) fn hash(v: &redis::Value) -> HashMap<String, String> {
    let mut m = HashMap::new();
    let as_str = |v: &redis::Value| match v {
        redis::Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        redis::Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    };
    match v {
        redis::Value::Array(items) => {
            for kv in items.chunks(2) {
                if let [k, v] = kv {
                    if let (Some(k), Some(v)) = (as_str(k), as_str(v)) {
                        m.insert(k, v);
                    }
                }
            }
        }
        redis::Value::Map(pairs) => {
            for (k, v) in pairs {
                if let (Some(k), Some(v)) = (as_str(k), as_str(v)) {
                    m.insert(k, v);
                }
            }
        }
        _ => {}
    }
    m
}

pub(super) fn verify_once(c: &Common, p: &Plan) -> Result<Verdict> {
    let b = bootstrap(c)?;
    let mut ticks = Vec::new();
    let mut bad = 0;
    for (_, off, v) in read_topic(&b, &p.market)? {
        match serde_json::from_slice::<Tick>(&v) {
            Ok(t) => ticks.push((t, off)),
            Err(_) => bad += 1,
        }
    }
    let mut alerts = Vec::new();
    for (_, _, v) in read_topic(&b, &p.notif)? {
        match serde_json::from_slice::<Alert>(&v) {
            Ok(a) => alerts.push(a),
            Err(_) => bad += 1,
        }
    }
    if bad > 0 {
        eprintln!("ticker verify: {bad} records that are not ticker records were ignored");
    }
    let want = expected(&ticks, &alerts);
    let mut symbols: BTreeSet<String> = want.last_tick.keys().cloned().collect();
    symbols.extend(alerts.iter().map(|a| a.symbol.clone()));
    let mut w = Writer::connect(&redis_seeds(c)?, Duration::from_secs(2))
        .map_err(|e| format!("--redis: {e}"))?;
    let mut v = Verdict {
        ticks: ticks.len(),
        alerts: alerts.len(),
        expected_fired: want.fired.len(),
        pending: want.pending,
        missing: Vec::new(),
        unexpected: Vec::new(),
        wrong: Vec::new(),
        stale: Vec::new(),
        symbols: symbols.len(),
        due: BTreeMap::new(),
        missing_by_symbol: BTreeMap::new(),
    };
    for (sym, _) in want.fired.values() {
        *v.due.entry(sym.clone()).or_default() += 1;
    }
    let mut stored_fired: BTreeMap<String, (String, Fired)> = BTreeMap::new();
    for sym in &symbols {
        let (mk, nk) = keys(p.ns.as_deref(), sym);
        let r = w
            .transaction(&[&mk, &nk], |pp| {
                pp.cmd("HGETALL").arg(&mk).cmd("HGETALL").arg(&nk);
            })
            .map_err(|e| format!("--redis: {e}"))?;
        let (market, fired) = (hash(&r[0]), hash(&r[1]));
        if let Some((t, _)) = want.last_tick.get(sym) {
            let ok = market.get("seq").map(String::as_str) == Some(&t.seq.to_string())
                && market.get("run") == Some(&t.run)
                && market.get("price").map(String::as_str) == Some(&t.price.to_string());
            if !ok {
                v.stale.push(format!(
                    "{mk} holds {} (seq {}), the last tick is {} (seq {}, run {})",
                    market.get("price").map_or("nothing", String::as_str),
                    market.get("seq").map_or("-", String::as_str),
                    t.price,
                    t.seq,
                    t.run
                ));
            }
        }
        for (id, json) in fired {
            match serde_json::from_str::<Fired>(&json) {
                Ok(f) => {
                    stored_fired.insert(id, (sym.clone(), f));
                }
                Err(_) => v
                    .wrong
                    .push(format!("{nk} field {id}: not a fired alert: {json}")),
            }
        }
    }
    for (id, (sym, f)) in &want.fired {
        match stored_fired.get(id) {
            None => {
                *v.missing_by_symbol.entry(sym.clone()).or_default() += 1;
                v.missing.push(format!(
                    "{id} ({sym}, {} {:?} {}) should have fired on tick {}",
                    f.user, f.direction, f.threshold, f.tick_seq
                ))
            }
            Some((_, got)) if got != f => v.wrong.push(format!(
                "{id} ({sym}) fired on tick {}, expected tick {}",
                got.tick_seq, f.tick_seq
            )),
            Some(_) => {}
        }
    }
    for (id, (sym, f)) in &stored_fired {
        if !want.fired.contains_key(id) {
            v.unexpected.push(format!(
                "{id} ({sym}) fired on tick {} but no tick crosses it",
                f.tick_seq
            ));
        }
    }
    Ok(v)
}

pub(super) fn verdict_json(v: &Verdict) -> Value {
    json!({"ok": v.ok(), "ticks": v.ticks, "alerts": v.alerts, "symbols": v.symbols,
           "expected_fired": v.expected_fired, "pending": v.pending,
           "missing": v.missing, "unexpected": v.unexpected, "wrong": v.wrong, "stale": v.stale})
}

pub(super) fn print_verdict(v: &Verdict, format: Format) {
    if format == Format::Json {
        println!(
            "{}",
            serde_json::to_string_pretty(&verdict_json(v)).expect("json")
        );
        return;
    }
    println!(
        "verify: {} ticks, {} alerts over {} symbols; {} alerts must have fired, {} are still pending",
        v.ticks, v.alerts, v.symbols, v.expected_fired, v.pending
    );
    for (what, list) in [
        ("missing", &v.missing),
        ("unexpected", &v.unexpected),
        ("wrong", &v.wrong),
        ("stale", &v.stale),
    ] {
        for line in list.iter().take(20) {
            println!("  {what}: {line}");
        }
        if list.len() > 20 {
            println!("  ... {} more {what}", list.len() - 20);
        }
    }
    if v.ok() {
        println!("verify: OK: every fired alert is in Redis exactly as the topics imply, none missing, none extra, every market:{{SYM}} holds its last tick");
    } else {
        println!(
            "verify: FAILED: {} missing, {} unexpected, {} wrong, {} stale",
            v.missing.len(),
            v.unexpected.len(),
            v.wrong.len(),
            v.stale.len()
        );
    }
}

pub fn verify(a: &VerifyArgs) -> Result<u8> {
    let p = plan(&a.common)?;
    let wait = a.wait;
    let deadline = Instant::now() + wait;
    loop {
        // Within --wait, an error (a Redis node not back yet) is waited out too.
        match verify_once(&a.common, &p) {
            Ok(v) if v.ok() || Instant::now() >= deadline => {
                print_verdict(&v, a.format);
                return Ok(if v.ok() { 0 } else { 1 });
            }
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(e) => eprintln!("ticker verify: {e}; trying again"),
            Ok(_) => {}
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}
