//! `ticker verify`: both topics read whole, what Redis must hold recomputed
//! by the oracle, and compared with what it holds.

use super::plan::{connection, keys, plan, redis_seeds, Plan, Result};
use crate::flags::{Common, Format};
use crate::model::{expected, Alert, Fired, Tick};
use partwise_kafka::fetch::{read_topic as read_to_end, OwnedRecord};
use partwise_kafka::Connection;
use partwise_redis::{Command, Writer};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
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
/// are now, with no group (nothing is joined or committed anywhere).
fn read_topic(conn: &Connection, topic: &str) -> Result<Vec<OwnedRecord>> {
    read_to_end(conn, topic, Duration::from_secs(120)).map_err(|e| match e {
        partwise_kafka::Error::UnknownTopic(_) => {
            format!("{}: {e} (run `ticker up`)", conn.brokers())
        }
        e => format!("{}: {e}", conn.brokers()),
    })
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

pub(super) fn verify_once(c: &Common, p: &Plan) -> Result<Verdict> {
    let conn = connection(c, Duration::from_secs(10))?;
    let mut ticks = Vec::new();
    let mut bad = 0;
    // A null value is no ticker record either.
    for r in read_topic(&conn, &p.market)? {
        match serde_json::from_slice::<Tick>(r.value.as_deref().unwrap_or_default()) {
            Ok(t) => ticks.push((t, r.offset)),
            Err(_) => bad += 1,
        }
    }
    let mut alerts = Vec::new();
    for r in read_topic(&conn, &p.notif)? {
        match serde_json::from_slice::<Alert>(r.value.as_deref().unwrap_or_default()) {
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
            .exec(&[
                Command::HGetAll(mk.clone().into_bytes()),
                Command::HGetAll(nk.clone().into_bytes()),
            ])
            .map_err(|e| format!("--redis: {e}"))?;
        let (market, fired) = (r[0].hash_text(), r[1].hash_text());
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
