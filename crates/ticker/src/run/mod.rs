//! The commands: each turns its flags into values, talks to Kafka and Redis
//! through partwise's adapters, and returns an exit code (0 ok, 1 findings)
//! or an error (exit 2).

use crate::model::{expected, Alert, Event, Fired, Generator, Joiner, Tick, MAX_PRICE, SYMBOLS};
use crate::Common;
use partwise::assign::colocation_of;
use partwise::placement;
use partwise::topology::{check, ConsumerGroup, Members, Topology};
use partwise::{KeyFormat, Partitioner};
use partwise_group::cluster::Cluster;
use partwise_group::{Config, Consumer, GroupAssignor, OffsetReset};
use partwise_kafka::produce::RoutedProducer;
use partwise_kafka::Connection;
use partwise_redis::{NodeAddr, Writer};
use rdkafka::consumer::{BaseConsumer, Consumer as _};
use rdkafka::message::Message;
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub type Result<T> = std::result::Result<T, String>;

/// The two topics of the ticker, as the topology declares them.
struct Plan {
    market: String,
    notif: String,
    partitions: u32,
    /// Per topic: its first producer's partitioner and key format.
    routing: HashMap<String, (Partitioner, KeyFormat)>,
    topology: Topology,
    /// `--namespace`: in front of both topic names and every Redis key.
    ns: Option<String>,
}

/// A namespace as `--namespace` takes it: it goes into topic names (Kafka
/// allows letters, digits, '.', '_', '-') and in front of the Redis keys,
/// where a brace would become the keys' hash tag and move them off their
/// symbol's slot.
fn namespace(c: &Common) -> Result<Option<String>> {
    match c.namespace.as_deref() {
        None => Ok(None),
        Some(ns)
            if !ns.is_empty()
                && ns.len() <= 100
                && ns
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) =>
        {
            Ok(Some(ns.to_string()))
        }
        Some(ns) => Err(format!(
            "--namespace: '{ns}' must be 1 to 100 letters, digits, '.', '_' or '-' (it goes into topic names and in front of Redis keys)"
        )),
    }
}

/// The Redis keys of one symbol, the last tick and the fired alerts: hash
/// tagged by the symbol, so both share its slot whatever the namespace.
fn keys(ns: Option<&str>, sym: &str) -> (String, String) {
    let pre = ns.map_or(String::new(), |n| format!("{n}:"));
    (
        format!("{pre}market:{{{sym}}}"),
        format!("{pre}notif:{{{sym}}}"),
    )
}

/// The topology's plan under the flags' namespace: the topics the command
/// reads and writes are `NS-NAME` for each NAME the file declares.
fn plan(c: &Common) -> Result<Plan> {
    let ns = namespace(c)?;
    let mut p = plan_file(&c.topology)?;
    if let Some(ns) = &ns {
        let name = |t: &str| format!("{ns}-{t}");
        p.routing = p.routing.into_iter().map(|(t, r)| (name(&t), r)).collect();
        p.market = name(&p.market);
        p.notif = name(&p.notif);
    }
    p.ns = ns;
    Ok(p)
}

fn plan_file(path: &Path) -> Result<Plan> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read topology file {}: {e}", path.display()))?;
    let topology = Topology::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let group = topology.copartition_groups.first().ok_or_else(|| {
        format!(
            "{}: no [[copartition]] group: the ticker joins two topics",
            path.display()
        )
    })?;
    let [market, notif] = &group.topics[..] else {
        return Err(format!(
            "{}: co-partition group {} has {} topics; the ticker joins two (ticks, then alerts)",
            path.display(),
            group.name,
            group.topics.len()
        ));
    };
    let mut routing = HashMap::new();
    let mut partitions = 0;
    for name in [market, notif] {
        let t = topology.topic(name).expect("validated");
        partitions = t.partitions.get();
        let p = t.producers.first().ok_or_else(|| {
            format!(
                "{}: topic {name} declares no producer (its partitioner)",
                path.display()
            )
        })?;
        let partitioner = p
            .partitioner
            .unwrap_or_else(|| "java".parse().expect("java is a spec"));
        routing.insert(name.clone(), (partitioner, p.key_format));
    }
    Ok(Plan {
        market: market.clone(),
        notif: notif.clone(),
        partitions,
        routing,
        topology,
        ns: None,
    })
}

fn bootstrap(c: &Common) -> Result<String> {
    c.bootstrap
        .clone()
        .filter(|b| !b.trim().is_empty())
        .ok_or_else(|| "no brokers: give -b HOST:PORT (or set PARTWISE_KAFKA_BOOTSTRAP)".into())
}

fn brokers(b: &str) -> Vec<String> {
    b.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn redis_seeds(c: &Common) -> Result<Vec<NodeAddr>> {
    c.redis_nodes()
        .split(',')
        .map(|s| {
            s.trim()
                .parse::<NodeAddr>()
                .map_err(|e| format!("--redis: '{s}': {e}"))
        })
        .collect()
}

fn rt() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// `10`, `10s`, `500ms`, `2m`.
fn duration(flag: &str, s: &str) -> Result<Duration> {
    let s = s.trim();
    let (n, unit) = match s.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let v: f64 = n
        .parse()
        .map_err(|_| format!("{flag}: '{s}' is not a duration (10s, 500ms, 2m)"))?;
    let secs = match unit {
        "ms" => v / 1000.0,
        "s" => v,
        "m" => v * 60.0,
        _ => return Err(format!("{flag}: '{s}': unknown unit '{unit}' (ms, s, m)")),
    };
    if !(0.0..=86_400.0).contains(&secs) {
        return Err(format!("{flag}: '{s}' is out of range (0 to 24 h)"));
    }
    Ok(Duration::from_secs_f64(secs))
}

// ---- up

#[derive(clap::Args)]
pub struct UpArgs {
    #[command(flatten)]
    common: Common,
}

pub fn up(a: &UpArgs) -> Result<u8> {
    up_created(&a.common).map(|(code, _)| code)
}

/// `up`, and the topics it created (the demo removes those, and only those).
fn up_created(common: &Common) -> Result<(u8, Vec<String>)> {
    let p = plan(common)?;
    let report = check(&p.topology, &[]);
    if !report.ok() {
        println!(
            "refused: {} fails partwise check:",
            common.topology.display()
        );
        for g in &report.groups {
            for r in &g.reasons {
                println!("  - {r}\n    fix: {}", r.fix());
            }
        }
        for f in &report.families {
            for r in &f.reasons {
                println!("  - {r}\n    fix: {}", r.fix());
            }
        }
        for v in report.placements.iter().filter(|v| !v.ok()) {
            if v.realign().is_some() {
                println!(
                    "  - consumer group {} ({}): the partition counts differ, so no assignor keeps the join across members",
                    v.consumer_group, v.assignor
                );
            } else {
                println!(
                    "  - consumer group {} ({}) splits units at {:?} members",
                    v.consumer_group,
                    v.assignor,
                    v.splitting_counts()
                );
            }
            // The advice, then each procedure when the counts differ.
            for (i, line) in v.fix.iter().flat_map(|f| f.lines()).enumerate() {
                if i == 0 {
                    println!("    fix: {line}");
                } else {
                    println!("         {i}. {line}");
                }
            }
        }
        return Ok((1, Vec::new()));
    }
    let b = bootstrap(common)?;
    rt()?.block_on(async {
        let mut c = Cluster::new(brokers(&b), "ticker", Duration::from_secs(10));
        let names = vec![p.market.clone(), p.notif.clone()];
        let meta = c.metadata(&names).await.map_err(|e| format!("{b}: {e}"))?;
        let mut refused = false;
        for name in &names {
            if let Some(m) = meta.get(name) {
                if m.leaders.len() as u32 != p.partitions {
                    println!(
                        "refused: topic {name} exists with {} partitions; {} says {}. ticker never changes an existing topic (a new count moves keys: partwise resize --from {} --to {} shows which)",
                        m.leaders.len(),
                        common.topology.display(),
                        p.partitions,
                        m.leaders.len(),
                        p.partitions
                    );
                    refused = true;
                } else {
                    println!("topic {name}: exists with {} partitions", p.partitions);
                }
            }
        }
        if refused {
            return Ok((1, Vec::new()));
        }
        let missing: Vec<(&str, i32)> = names
            .iter()
            .filter(|n| !meta.contains_key(*n))
            .map(|n| (n.as_str(), p.partitions as i32))
            .collect();
        if !missing.is_empty() {
            c.create_topics(&missing).await.map_err(|e| format!("{b}: {e}"))?;
            // Creation is asynchronous: wait until every partition has a leader.
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let m = c.metadata(&names).await.map_err(|e| format!("{b}: {e}"))?;
                if names.iter().all(|n| m.get(n).is_some_and(|t| t.leaders.iter().all(|&l| l >= 0))) {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(format!("{b}: the topics got no leaders within 30 s"));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            for (n, k) in &missing {
                println!("topic {n}: created with {k} partitions");
            }
        }
        Ok((0, missing.iter().map(|(n, _)| n.to_string()).collect()))
    })
}

// ---- feed

#[derive(clap::Args)]
pub struct FeedArgs {
    #[command(flatten)]
    common: Common,
    /// Events (ticks and alerts) per second
    #[arg(long, default_value = "200")]
    rate: u32,
    /// How long to feed (10s, 500ms, 2m; a bare number is seconds)
    #[arg(long, default_value = "10s")]
    duration: String,
    /// Seed of the random walk and the alerts: the same seed, the same feed
    #[arg(long, default_value = "1")]
    seed: u64,
    /// Symbols, one per line, each one of the seed's ten or SYMBOL,START_PRICE
    #[arg(long, value_name = "FILE")]
    symbols: Option<PathBuf>,
    /// Users who set alerts
    #[arg(long, default_value = "50")]
    users: u64,
    /// The run's id (default: from the clock); alert ids are RUN-SEQ
    #[arg(long)]
    run: Option<String>,
}

fn symbols(file: Option<&PathBuf>) -> Result<Vec<(String, i64)>> {
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
    let dur = duration("--duration", &a.duration)?;
    if a.rate == 0 || a.rate > 100_000 {
        return Err(format!(
            "--rate: {} must be between 1 and 100000 events/s",
            a.rate
        ));
    }
    let b = bootstrap(&a.common)?;
    let mut conn = Connection::new(Duration::from_secs(10));
    conn.bootstrap(&b).map_err(|e| e.to_string())?;
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

// ---- worker

#[derive(clap::Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    common: Common,
    /// The worker's name in events
    #[arg(long, default_value = "w0")]
    id: String,
    /// Consumer group id
    #[arg(long, default_value = "ticker-joiner")]
    group: String,
    /// session.timeout.ms
    #[arg(long, default_value = "45000")]
    session_timeout_ms: u64,
    /// heartbeat.interval.ms
    #[arg(long, default_value = "3000")]
    heartbeat_interval_ms: u64,
    /// How long a Redis write is retried (a node paused or failing over) before the worker gives up
    #[arg(long, default_value = "60s")]
    redis_retry: String,
    /// The group runtime: partwise (copartitioned assignor) or librdkafka-roundrobin (the seed's counter-example)
    #[arg(long, default_value = "partwise")]
    runtime: String,
    /// Append each written tick's produce-to-Redis latency (ms, one per line) to FILE at exit (bench/ticker)
    #[arg(long, value_name = "FILE", hide = true)]
    latency_file: Option<PathBuf>,
}

/// A worker's own count of what it did, for its last line.
#[derive(Default)]
struct Stats {
    ticks: u64,
    alerts: u64,
    fired: u64,
    writes: u64,
    bad: u64,
    latency_ms: Vec<i64>,
}

fn out(v: Value) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{v}");
    let _ = o.flush();
}

/// Writes the join's output for one symbol in one MULTI/EXEC on the primary
/// of its slot: the newest tick (only if newer than what Redis holds: a
/// replay after a rebalance must not move it back) and the fired alerts
/// (by id, so writing one again changes nothing).
fn write_symbol(
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
            let r = w.transaction(&[&mk], |p| {
                p.cmd("HGET").arg(&mk).arg("offset");
            })?;
            let o = match r.first() {
                Some(redis::Value::BulkString(b)) => std::str::from_utf8(b)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(-1),
                _ => -1,
            };
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
    w.transaction(&[&mk, &nk], |p| {
        if let Some((t, o)) = tick {
            p.cmd("HSET")
                .arg(&mk)
                .arg("price")
                .arg(t.price)
                .arg("seq")
                .arg(t.seq)
                .arg("run")
                .arg(&t.run)
                .arg("offset")
                .arg(*o)
                .arg("ts_ms")
                .arg(t.ts_ms)
                .ignore();
        }
        for (id, f) in &fired_json {
            p.cmd("HSET").arg(&nk).arg(id).arg(f).ignore();
        }
    })?;
    if let Some((_, o)) = tick {
        stored.insert(sym.to_string(), *o);
    }
    Ok(true)
}

/// What a worker does with the records it is handed, whatever group runtime
/// hands them: the join, its writes to Redis, and its own counts.
struct Sink {
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
    fn new(a: &WorkerArgs, p: &Plan) -> Result<Sink> {
        let seeds = redis_seeds(&a.common)?;
        let writer =
            Writer::connect(&seeds, Duration::from_secs(2)).map_err(|e| format!("--redis: {e}"))?;
        Ok(Sink {
            id: a.id.clone(),
            market: p.market.clone(),
            notif: p.notif.clone(),
            ns: p.ns.clone(),
            seeds,
            retry: duration("--redis-retry", &a.redis_retry)?,
            writer,
            join: Joiner::default(),
            stored: HashMap::new(),
            stats: Stats::default(),
            generation: -1,
            seen: BTreeSet::new(),
            started_ms: now_ms(),
            last_write_ms: 0,
            latency_file: a.latency_file.clone(),
        })
    }

    fn report_symbols(&mut self) {
        if self.generation >= 0 {
            out(
                json!({"event": "symbols", "worker": self.id, "generation": self.generation,
                       "symbols": std::mem::take(&mut self.seen)}),
            );
        }
    }

    /// A new assignment: the state is rebuilt by replaying its partitions.
    fn assigned(&mut self, generation: i32, units: Value) {
        self.report_symbols();
        self.generation = generation;
        self.join.clear();
        self.stored.clear();
        out(
            json!({"event": "assigned", "worker": self.id, "generation": generation, "units": units}),
        );
    }

    fn revoked(&mut self) {
        self.report_symbols();
        self.join.clear();
        self.stored.clear();
        out(json!({"event": "revoked", "worker": self.id, "generation": self.generation}));
    }

    fn record(&mut self, topic: &str, offset: i64, value: Option<&[u8]>) {
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
    fn flush(&mut self) -> Result<()> {
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

    fn summary(mut self) {
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

pub fn worker(a: &WorkerArgs) -> Result<u8> {
    let p = plan(&a.common)?;
    let b = bootstrap(&a.common)?;
    let mut sink = Sink::new(a, &p)?;
    match a.runtime.as_str() {
        "partwise" => {}
        "librdkafka-roundrobin" => return worker_librdkafka(a, &b, &p, sink),
        other => {
            return Err(format!(
                "--runtime: '{other}' is not partwise or librdkafka-roundrobin"
            ))
        }
    }
    let mut cfg = Config::new(
        brokers(&b),
        a.group.clone(),
        vec![p.market.clone(), p.notif.clone()],
    );
    cfg.assignor = GroupAssignor::Copartitioned;
    cfg.auto_offset_reset = OffsetReset::Earliest;
    // The join's state is rebuilt from whole partitions on every assignment
    // and its writes are idempotent, so nothing is committed.
    cfg.commit_offsets = false;
    cfg.client_id = format!("ticker-{}", a.id);
    cfg.session_timeout = Duration::from_millis(a.session_timeout_ms);
    cfg.heartbeat_interval = Duration::from_millis(a.heartbeat_interval_ms);
    cfg.fetch_max_wait = Duration::from_millis(100);
    cfg.request_timeout = Duration::from_secs(10);
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
                partwise_group::Event::Records { records, .. } => {
                    for r in &records {
                        sink.record(&r.topic, r.offset, r.value.as_deref());
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

/// A rebalance: the partitions assigned, or `None` for a revocation.
type Rebalance = Option<Vec<(String, i32)>>;

/// Rebalances seen by a librdkafka consumer, for the poll loop.
struct Rebalances {
    pending: Mutex<Vec<Rebalance>>,
}

impl rdkafka::ClientContext for Rebalances {}

impl rdkafka::consumer::ConsumerContext for Rebalances {
    fn post_rebalance(&self, _: &BaseConsumer<Self>, r: &rdkafka::consumer::Rebalance<'_>) {
        let ev = match r {
            rdkafka::consumer::Rebalance::Assign(tpl) => Some(
                tpl.elements()
                    .iter()
                    .map(|e| (e.topic().to_string(), e.partition()))
                    .collect(),
            ),
            _ => None,
        };
        self.pending.lock().expect("poisoned").push(ev);
    }
}

/// The seed's counter-example: the same join, but its group is a librdkafka
/// group under `roundrobin` (what KafkaJS's only built-in assigner does too),
/// which can give partition p of the two topics to two different workers.
fn worker_librdkafka(a: &WorkerArgs, b: &str, p: &Plan, mut sink: Sink) -> Result<u8> {
    let c: BaseConsumer<Rebalances> = ClientConfig::new()
        .set("bootstrap.servers", b)
        .set("group.id", &a.group)
        .set("client.id", format!("ticker-{}", a.id))
        .set("partition.assignment.strategy", "roundrobin")
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .set("session.timeout.ms", a.session_timeout_ms.to_string())
        .set("heartbeat.interval.ms", a.heartbeat_interval_ms.to_string())
        .set("fetch.wait.max.ms", "100")
        .create_with_context(Rebalances {
            pending: Mutex::new(Vec::new()),
        })
        .map_err(|e| format!("{b}: {e}"))?;
    c.subscribe(&[p.market.as_str(), p.notif.as_str()])
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
        let m = c.poll(Duration::from_millis(100));
        for ev in std::mem::take(&mut *c.context().pending.lock().expect("poisoned")) {
            match ev {
                Some(parts) => {
                    generation += 1;
                    let parts: Vec<Value> = parts.into_iter().map(|(t, p)| json!([t, p])).collect();
                    sink.assigned(generation, json!(parts));
                }
                None => sink.revoked(),
            }
        }
        match m {
            Some(Ok(m)) => sink.record(m.topic(), m.offset(), m.payload()),
            Some(Err(e)) => eprintln!("ticker worker {}: {e}", a.id),
            None => sink.flush()?,
        }
    }
    sink.flush()?;
    drop(c);
    sink.summary();
    Ok(0)
}

// ---- join

#[derive(clap::Args)]
pub struct JoinArgs {
    #[command(flatten)]
    common: Common,
    /// Worker processes
    #[arg(long, default_value = "3")]
    workers: u32,
    /// Consumer group id
    #[arg(long, default_value = "ticker-joiner")]
    group: String,
    /// session.timeout.ms of each worker
    #[arg(long, default_value = "45000")]
    session_timeout_ms: u64,
}

/// A worker process and what it printed.
pub struct WorkerProc {
    pub name: String,
    child: Child,
    events: Arc<Mutex<Vec<Value>>>,
}

impl WorkerProc {
    fn start(
        common: &Common,
        name: &str,
        group: &str,
        session_ms: u64,
        runtime: &str,
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
            .args(["--session-timeout-ms", &session_ms.to_string()])
            .args(["--runtime", runtime])
            .args([
                "--heartbeat-interval-ms",
                &(session_ms / 6).max(100).to_string(),
            ]);
        if let Some(b) = &common.bootstrap {
            cmd.args(["-b", b]);
        }
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

    fn events(&self) -> Vec<Value> {
        self.events.lock().expect("poisoned").clone()
    }

    fn signal(&self, sig: &str) {
        let _ = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .stderr(Stdio::null())
            .status();
    }

    /// SIGTERM, then waits up to `limit` (then SIGKILL): a clean leave.
    fn stop(&mut self, limit: Duration) {
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

    fn kill(&mut self) {
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
    bootstrap(&a.common)?;
    if a.workers == 0 || a.workers > 64 {
        return Err(format!("--workers: {} must be between 1 and 64", a.workers));
    }
    let mut procs: Vec<WorkerProc> = (0..a.workers)
        .map(|i| {
            WorkerProc::start(
                &a.common,
                &format!("w{i}"),
                &a.group,
                a.session_timeout_ms,
                "partwise",
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

// ---- verify

#[derive(clap::Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    common: Common,
    /// Keep checking until it holds or this long has passed (the workers may still be catching up)
    #[arg(long, default_value = "0s")]
    wait: String,
    /// Output format: table or json
    #[arg(long, default_value = "table")]
    format: String,
}

/// Every record of `topic`, from the beginning to the end offsets as they
/// are now, with no group (nothing is committed anywhere).
fn read_topic(b: &str, topic: &str) -> Result<Vec<(i32, i64, Vec<u8>)>> {
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
struct Verdict {
    ticks: usize,
    alerts: usize,
    expected_fired: usize,
    pending: usize,
    missing: Vec<String>,
    unexpected: Vec<String>,
    wrong: Vec<String>,
    stale: Vec<String>,
    symbols: usize,
    /// Per symbol: how many alerts must have fired (symbols with none are absent).
    due: BTreeMap<String, usize>,
    /// Per symbol: how many of those are not in Redis (symbols with none are absent).
    missing_by_symbol: BTreeMap<String, usize>,
}

impl Verdict {
    fn ok(&self) -> bool {
        self.missing.is_empty()
            && self.unexpected.is_empty()
            && self.wrong.is_empty()
            && self.stale.is_empty()
    }
}

fn hash(v: &redis::Value) -> HashMap<String, String> {
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

fn verify_once(c: &Common, p: &Plan) -> Result<Verdict> {
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

fn verdict_json(v: &Verdict) -> Value {
    json!({"ok": v.ok(), "ticks": v.ticks, "alerts": v.alerts, "symbols": v.symbols,
           "expected_fired": v.expected_fired, "pending": v.pending,
           "missing": v.missing, "unexpected": v.unexpected, "wrong": v.wrong, "stale": v.stale})
}

fn print_verdict(v: &Verdict, format: &str) {
    if format == "json" {
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
    if a.format != "table" && a.format != "json" {
        return Err(format!("--format: '{}' is not table or json", a.format));
    }
    let p = plan(&a.common)?;
    let wait = duration("--wait", &a.wait)?;
    let deadline = Instant::now() + wait;
    loop {
        // Within --wait, an error (a Redis node not back yet) is waited out too.
        match verify_once(&a.common, &p) {
            Ok(v) if v.ok() || Instant::now() >= deadline => {
                print_verdict(&v, &a.format);
                return Ok(if v.ok() { 0 } else { 1 });
            }
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(e) => eprintln!("ticker verify: {e}; trying again"),
            Ok(_) => {}
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

// ---- demo

#[derive(clap::Args)]
pub struct DemoArgs {
    #[command(flatten)]
    common: Common,
    /// Events per second the feed writes
    #[arg(long, default_value = "200")]
    rate: u32,
    /// How long the feed runs
    #[arg(long, default_value = "12s")]
    duration: String,
    /// Seed of the feed
    #[arg(long, default_value = "1")]
    seed: u64,
    /// Session timeout of the workers (a killed worker's units move after it)
    #[arg(long, default_value = "6000")]
    session_timeout_ms: u64,
    /// Skip the counter-example (the seeds' 4 round-robin workers, which miss
    /// alerts on the symbols `partwise check` predicts) and run the fixed
    /// system's drill only
    #[arg(long)]
    skip_counter_example: bool,
}

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Runs one of the repository's scripts (with `env` added); its last stdout line.
fn script(name: &str, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Result<String> {
    let out = Command::new("bash")
        .arg(repo().join("scripts").join(name))
        .args(args)
        .envs(env.iter().copied())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("scripts/{name}: {e}"))?;
    if !out.status.success() {
        return Err(format!("scripts/{name} failed ({})", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or_default()
        .trim()
        .to_string())
}

/// What the demo started, stopped when it ends (on an error too): a Kafka
/// node and a Redis Cluster of its own, in a directory of its own, on free
/// ports. Nothing it did not start is stopped.
struct Started {
    dir: PathBuf,
    kafka: bool,
    redis: Option<u16>,
}

impl Started {
    fn kafka(&mut self) -> Result<String> {
        let kdir = self.dir.join("kafka");
        println!(
            "== starting Apache Kafka of the demo's own (scripts/kafka-up --dir {} --port 0)",
            kdir.display()
        );
        self.kafka = true;
        script(
            "kafka-up",
            &["--dir", &kdir.to_string_lossy(), "--port", "0"],
            &[],
        )
    }

    fn redis(&mut self) -> Result<String> {
        let base = free_redis_base()?;
        println!(
            "== starting a Redis Cluster of the demo's own on 127.0.0.1:{base}-{} (scripts/redis-cluster-up {base})",
            base + 2
        );
        self.redis = Some(base);
        script(
            "redis-cluster-up",
            &[&base.to_string()],
            &[("PARTWISE_REDIS_DIR", self.dir.join("redis").as_os_str())],
        )?;
        Ok(format!("127.0.0.1:{base}"))
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if let Some(base) = self.redis {
            let dir = self.dir.join("redis");
            if let Err(e) = script(
                "redis-cluster-down",
                &[&base.to_string()],
                &[("PARTWISE_REDIS_DIR", dir.as_os_str())],
            ) {
                eprintln!("ticker demo: stopping its Redis Cluster: {e}");
            }
        }
        if self.kafka {
            let kdir = self.dir.join("kafka");
            if let Err(e) = script(
                "kafka-up",
                &["--dir", &kdir.to_string_lossy(), "--stop"],
                &[],
            ) {
                eprintln!("ticker demo: stopping its Kafka: {e}");
            }
        }
        // Made by the demo alone (create_dir, not create_dir_all, below).
        if self.kafka || self.redis.is_some() {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// Three free loopback ports BASE..BASE+2 whose cluster-bus ports (+10000)
/// are free too, for a Redis Cluster of the demo's own.
fn free_redis_base() -> Result<u16> {
    let free = |p: u16| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
    let spread = std::process::id() as u64 ^ now_ms() as u64;
    (0..400u64)
        .map(|i| 20000 + ((spread + i * 37) % 2000) as u16 * 3)
        .find(|&b| (0..3).all(|k| free(b + k) && free(b + k + 10000)))
        .ok_or_else(|| {
            "no three free ports (with free bus ports) for the demo's Redis Cluster in 20000-25999"
                .into()
        })
}

/// The demo's keys: those of the symbols it feeds, under its namespace.
fn demo_keys(ns: &str) -> Vec<(String, String)> {
    SYMBOLS.iter().map(|(s, _)| keys(Some(ns), s)).collect()
}

pub fn demo(a: &DemoArgs) -> Result<u8> {
    let run = format!("{}-{}", now_ms(), std::process::id());
    let mut common = a.common.clone();
    // Its own names: a run id in the topics, the group and every key, so that
    // nothing of another ticker (or anything else) at the plain names is read,
    // overwritten or removed.
    let ns = match namespace(&common)? {
        Some(ns) => ns,
        None => format!("ticker-demo-{run}"),
    };
    common.namespace = Some(ns.clone());
    // The counter-example has names of its own too, beside the fixed
    // system's: its workers must not write the keys verify reads for the
    // other, nor join the other's group.
    let rr_ns = format!("{ns}-roundrobin");
    let mut rr_common = common.clone();
    rr_common.namespace = Some(rr_ns.clone());
    let counter = !a.skip_counter_example;
    if counter && namespace(&rr_common).is_err() {
        return Err(format!(
            "--namespace: '{ns}' is too long for the counter-example's namespace {rr_ns} (at most 100 characters): give a shorter one, or --skip-counter-example"
        ));
    }
    let dir = std::env::temp_dir().join(format!("ticker-demo-{run}"));
    std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut started = Started {
        dir,
        kafka: false,
        redis: None,
    };
    if common
        .bootstrap
        .as_deref()
        .is_none_or(|b| b.trim().is_empty())
    {
        common.bootstrap = Some(started.kafka()?);
    }
    if common.redis.is_none() {
        common.redis = Some(started.redis()?);
    }
    rr_common.bootstrap.clone_from(&common.bootstrap);
    rr_common.redis.clone_from(&common.redis);
    let b = common.bootstrap.clone().expect("set above");
    println!("== namespace {ns}: topics {ns}-*, keys {ns}:market:{{SYM}} and {ns}:notif:{{SYM}}; the demo removes what it creates when it ends");
    if counter {
        println!("== the counter-example's namespace {rr_ns}: topics {rr_ns}-*, keys {rr_ns}:market:{{SYM}} and {rr_ns}:notif:{{SYM}}, removed too");
    }
    let mut namespaces = vec![ns.clone()];
    if counter {
        namespaces.push(rr_ns.clone());
    }
    let mut w = Writer::connect(&redis_seeds(&common)?, Duration::from_secs(2))
        .map_err(|e| format!("--redis: {e}"))?;
    // The keys it will remove at the end must be ones it wrote: none may
    // exist before it starts.
    for n in &namespaces {
        for (mk, nk) in demo_keys(n) {
            let r = w
                .transaction(&[&mk, &nk], |pp| {
                    pp.cmd("EXISTS").arg(&mk).arg(&nk);
                })
                .map_err(|e| format!("--redis: {e}"))?;
            if !matches!(r.first(), Some(redis::Value::Int(0))) {
                return Err(format!(
                    "--namespace {ns}: {} already holds {mk} or {nk}; the demo writes (and removes) only keys of its own: give another --namespace",
                    common.redis_nodes()
                ));
            }
        }
    }
    let group = format!("{ns}-joiner");
    let rr_group = format!("{rr_ns}-joiner");
    // What the demo made, to remove at the end (an error part way through too).
    let mut created: Vec<String> = Vec::new();
    let mut groups: Vec<&str> = Vec::new();
    let mut result = (|| -> Result<u8> {
        println!("== up: topics from {} on {b}", common.topology.display());
        let (code, made) = up_created(&common)?;
        created.extend(made);
        if code != 0 {
            return Ok(code);
        }
        let mut counter_ok = None;
        if counter {
            let (code, made) = up_created(&rr_common)?;
            created.extend(made);
            if code != 0 {
                return Ok(code);
            }
            groups.push(&rr_group);
            counter_ok = Some(counter_example(a, &rr_common, &rr_group)?);
        }
        groups.push(&group);
        let code = drill(a, &common, &group)?;
        let fixed = if code == 0 {
            "verify passed"
        } else {
            "verify FAILED"
        };
        match counter_ok {
            None => println!("== demo: {fixed}"),
            Some(true) => println!(
                "== demo: counter-example as predicted (round-robin: alerts missing on exactly the symbols check named); fixed system (copartitioned): {fixed}"
            ),
            Some(false) => println!(
                "== demo: counter-example did NOT match check's prediction; fixed system (copartitioned): {fixed}"
            ),
        }
        Ok(if code == 0 && counter_ok != Some(false) {
            0
        } else {
            1
        })
    })();
    // The workers have stopped (drill and counter_example wait for them, or
    // drop them, which kills them): nothing writes the keys any more.
    println!(
        "== removing what the demo created: its keys and {} topic(s)",
        created.len()
    );
    let mut cleanup = Vec::new();
    for n in &namespaces {
        for (mk, nk) in demo_keys(n) {
            if let Err(e) = w.transaction(&[&mk, &nk], |pp| {
                pp.cmd("DEL").arg(&mk).arg(&nk).ignore();
            }) {
                cleanup.push(format!("--redis: removing {mk} and {nk}: {e}"));
            }
        }
    }
    // A broker of the demo's own goes with its directory.
    if !started.kafka && !created.is_empty() {
        if let Err(e) = delete_topics(&b, &created) {
            cleanup.push(e);
        }
        // The groups (those whose workers ran) commit nothing, so the
        // broker would drop them in time anyway; a member whose session has
        // not run out yet keeps one alive, which is why this is only a warning.
        for g in &groups {
            if let Err(e) = delete_group(&b, g) {
                eprintln!("ticker demo: {e}");
            }
        }
    }
    drop(started);
    if !cleanup.is_empty() && result.is_ok() {
        result = Err(cleanup.join("; "));
    }
    result
}

/// The members of the counter-example's round-robin group, by client id:
/// librdkafka's member ids begin with it, so the order the broker's
/// assignor deals in is this order.
fn rr_members() -> Vec<String> {
    (0..4).map(|i| format!("ticker-r{i}")).collect()
}

/// The counter-example's feed: fixed, so that what it must show does not
/// depend on `--rate` and `--duration` (with seed 1 every one of the seed's
/// symbols has alerts due; a test holds it to that).
const RR_RATE: u32 = 300;
const RR_FEED: Duration = Duration::from_secs(2);

/// The topology `check` judges for the counter-example: the file's, under the
/// counter-example's namespace, with its consumer group replaced by the
/// round-robin group the demo runs (librdkafka `roundrobin`, the placement
/// KafkaJS's `RoundRobinAssigner` gives as well), members by client id.
fn round_robin_topology(p: &Plan, group: &str, members: &[String]) -> Topology {
    let mut t = p.topology.clone();
    if let Some(ns) = &p.ns {
        let name = |n: &str| format!("{ns}-{n}");
        for x in &mut t.topics {
            x.name = name(&x.name);
        }
        for g in &mut t.copartition_groups {
            for x in &mut g.topics {
                *x = name(x);
            }
        }
    }
    t.consumer_groups = vec![ConsumerGroup {
        name: group.to_string(),
        assignor: "librdkafka:roundrobin".into(),
        members: Members::Ids(members.to_vec()),
        subscriptions: vec![p.market.clone(), p.notif.clone()],
    }];
    t
}

/// What `partwise check` says of the round-robin group: the partition
/// indices it splits, and where each symbol lands.
struct Prediction {
    split: BTreeSet<u32>,
    /// Symbol -> its partition (the same in both topics: `up` checked the
    /// layout).
    partition: BTreeMap<String, u32>,
}

impl Prediction {
    fn symbols(&self) -> BTreeSet<String> {
        self.partition
            .iter()
            .filter(|(_, p)| self.split.contains(p))
            .map(|(s, _)| s.clone())
            .collect()
    }
}

fn predict(p: &Plan, group: &str, members: &[String], symbols: &[&str]) -> Result<Prediction> {
    let t = round_robin_topology(p, group, members);
    let report = check(&t, &[]);
    let k = members.len() as u32;
    let (v, c) = report
        .placements
        .iter()
        .find(|v| v.topics.contains(&p.market) && v.topics.contains(&p.notif))
        .and_then(|v| v.counts.iter().find(|c| c.members == k).map(|c| (v, c)))
        .ok_or_else(|| format!("partwise check judged no placement of {k} members"))?;
    if let Some(e) = &c.error {
        return Err(format!(
            "partwise check: {} at {k} members: {e}",
            v.assignor.spec()
        ));
    }
    let split: BTreeSet<u32> = if c.split.len() == c.split_count as usize {
        c.split.iter().copied().collect()
    } else {
        // check lists the first few indices only: the whole list from the
        // assignor itself.
        let cg = &t.consumer_groups[0];
        let g = placement::group_of(&t, cg, members);
        let (units, _) = placement::unit_topics(&g, &t.copartition_groups[0]);
        let a = v.assignor.assign(&g).map_err(|e| e.to_string())?;
        colocation_of(&g, &a, &units).split.into_iter().collect()
    };
    let (partitioner, format) = p.routing[&p.market];
    let n = t
        .topic(&p.market)
        .expect("the plan's topic is declared")
        .partitions;
    let mut partition = BTreeMap::new();
    for sym in symbols {
        let key = format
            .encode(sym.as_bytes())
            .map_err(|e| format!("key {sym}: {e}"))?;
        let at = partitioner
            .place(Some(&key), n)
            .partition()
            .ok_or_else(|| {
                format!(
                    "{}: {partitioner} does not place a key on a fixed partition: no symbol can be predicted",
                    p.market
                )
            })?;
        partition.insert(sym.to_string(), at);
    }
    Ok(Prediction { split, partition })
}

/// The group's assignment once it has settled: every worker's last event is
/// an assignment, and together they hold every partition of `topics` exactly
/// once. `None` while a rebalance is still going on.
fn settled(events: &[Vec<Value>], topics: &[(&str, u32)]) -> Option<Vec<BTreeSet<(String, u32)>>> {
    let mut held = Vec::new();
    let mut all = BTreeSet::new();
    for ev in events {
        let last = ev
            .iter()
            .rev()
            .find(|e| e["event"] == "assigned" || e["event"] == "revoked")?;
        if last["event"] != "assigned" {
            return None;
        }
        let mut mine = BTreeSet::new();
        for u in last["units"].as_array()? {
            let tp = (
                u[0].as_str()?.to_string(),
                u32::try_from(u[1].as_u64()?).ok()?,
            );
            if !all.insert(tp.clone()) {
                return None;
            }
            mine.insert(tp);
        }
        if mine.is_empty() {
            return None;
        }
        held.push(mine);
    }
    let want: usize = topics.iter().map(|(_, n)| *n as usize).sum();
    let known = all
        .iter()
        .all(|(t, p)| topics.iter().any(|(n, k)| n == t && p < k));
    (all.len() == want && known).then_some(held)
}

/// The seeds' failure beside the fix: `partwise check` predicts which
/// symbols a round-robin group of 4 splits, 4 such workers join and the feed
/// runs, and verify must find alerts missing on exactly those symbols.
/// Whether the observation matched the prediction.
fn counter_example(a: &DemoArgs, common: &Common, group: &str) -> Result<bool> {
    let p = plan(common)?;
    let members = rr_members();
    let syms: Vec<&str> = SYMBOLS.iter().map(|(s, _)| *s).collect();
    println!(
        "== counter-example: the seeds' group, {} workers under librdkafka roundrobin (KafkaJS's RoundRobinAssigner deals the same way), group {group}",
        members.len()
    );
    let pred = predict(&p, group, &members, &syms)?;
    let predicted = pred.symbols();
    println!(
        "   partwise check, that group declared with {} members: {}",
        members.len(),
        if pred.split.is_empty() {
            "no partition index split".to_string()
        } else {
            format!(
                "UNITS SPLIT at partition(s) {}: the join misses alerts on {}",
                join_nums(&pred.split),
                join_strs(&predicted)
            )
        }
    );
    let mut workers: Vec<WorkerProc> = members
        .iter()
        .map(|m| {
            let name = m.strip_prefix("ticker-").expect("rr_members' names");
            WorkerProc::start(
                common,
                name,
                group,
                a.session_timeout_ms,
                "librdkafka-roundrobin",
                false,
            )
        })
        .collect::<Result<_>>()?;
    let n = p.partitions;
    let topics = [(p.market.as_str(), n), (p.notif.as_str(), n)];
    // The feed waits for all of them: a generation with fewer members deals
    // otherwise (3 round-robin members over 2x6 keep every unit whole) and
    // would write alerts a 4-member group cannot.
    let deadline = Instant::now() + Duration::from_secs(40);
    let held = loop {
        let events: Vec<Vec<Value>> = workers.iter().map(WorkerProc::events).collect();
        if let Some(h) = settled(&events, &topics) {
            break h;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the {} round-robin workers did not settle on one assignment within 40 s",
                workers.len()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let owner = |t: &str, q: u32| held.iter().position(|h| h.contains(&(t.to_string(), q)));
    let dealt: BTreeSet<u32> = (0..n)
        .filter(|&q| owner(&p.market, q) != owner(&p.notif, q))
        .collect();
    for (w, h) in workers.iter().zip(&held) {
        let part = |t: &str| {
            let ps: BTreeSet<u32> = h.iter().filter(|(x, _)| x == t).map(|(_, q)| *q).collect();
            if ps.is_empty() {
                "-".to_string()
            } else {
                join_nums(&ps)
            }
        };
        // The namespace is on every line above: the topics by their file names.
        let short = |t: &'_ str| -> String {
            p.ns.as_deref()
                .and_then(|ns| t.strip_prefix(ns)?.strip_prefix('-'))
                .unwrap_or(t)
                .to_string()
        };
        println!(
            "   {} holds {} {}, {} {}",
            w.name,
            short(&p.market),
            part(&p.market),
            short(&p.notif),
            part(&p.notif)
        );
    }
    println!(
        "   the broker's assignment splits partition(s) {}",
        if dealt.is_empty() {
            "none".to_string()
        } else {
            join_nums(&dealt)
        }
    );
    println!(
        "== counter-example feed: {RR_RATE} events/s for {RR_FEED:?}, seed {}",
        a.seed
    );
    let fed = feed_command(common, RR_RATE, RR_FEED, a.seed)?
        .output()
        .map_err(|e| format!("cannot start the feed: {e}"))?;
    if !fed.status.success() {
        return Err(format!(
            "the counter-example's feed failed ({})",
            fed.status
        ));
    }
    // Verify once the workers have caught up: every market:{SYM} holds its
    // last tick, and no alert is missing that check said the group keeps
    // (a late one is lag, not the split); the deadline ends the wait either way.
    let deadline = Instant::now() + Duration::from_secs(30);
    let v = loop {
        match verify_once(common, &p) {
            Ok(v)
                if Instant::now() >= deadline
                    || (v.stale.is_empty()
                        && v.missing_by_symbol.keys().all(|s| predicted.contains(s))) =>
            {
                break v
            }
            Err(e) if Instant::now() >= deadline => return Err(e),
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    // The prediction is of one assignment: a rebalance while the feed ran
    // (a worker lost) would make the observation another group's.
    let events: Vec<Vec<Value>> = workers.iter().map(WorkerProc::events).collect();
    let kept = settled(&events, &topics).as_ref() == Some(&held);
    stop_all(&mut workers, Duration::from_secs(20));
    println!(
        "   verify: {} ticks, {} alerts; {} alerts must have fired, {} of them are not in Redis",
        v.ticks,
        v.alerts,
        v.expected_fired,
        v.missing.len()
    );
    let (ok, lines) = judge(&pred, &v, kept);
    for l in lines {
        println!("{l}");
    }
    Ok(ok)
}

/// The counter-example's verdict and its lines: the table (symbol, its
/// partition, check's split, alerts due, missing), both sets, and whether
/// they are equal (on the symbols with alerts due), with nothing unexpected,
/// wrong or stale, on the one assignment check judged (`kept`).
fn judge(pred: &Prediction, v: &Verdict, kept: bool) -> (bool, Vec<String>) {
    let predicted = pred.symbols();
    let mut out = Vec::new();
    let observed: BTreeSet<String> = v.missing_by_symbol.keys().cloned().collect();
    // A symbol with no alert due in this feed has nothing to miss: the
    // prediction is held to the symbols where a miss can show.
    let observable: BTreeSet<String> = predicted
        .iter()
        .filter(|s| v.due.contains_key(*s))
        .cloned()
        .collect();
    out.push("   symbol  partition  check: split  alerts due  missing in Redis".to_string());
    for (sym, q) in &pred.partition {
        out.push(format!(
            "   {sym:<6}  {q:>9}  {:<12}  {:>10}  {:>16}",
            if pred.split.contains(q) { "yes" } else { "no" },
            v.due.get(sym).copied().unwrap_or(0),
            v.missing_by_symbol.get(sym).copied().unwrap_or(0)
        ));
    }
    out.push(format!(
        "   predicted split symbols: {}",
        join_strs(&predicted)
    ));
    out.push(format!(
        "   symbols with missing alerts: {}",
        join_strs(&observed)
    ));
    let quiet: BTreeSet<String> = predicted.difference(&observable).cloned().collect();
    if !quiet.is_empty() {
        out.push(format!(
            "   no alert was due on {} in this feed: nothing there to miss",
            join_strs(&quiet)
        ));
    }
    let mut ok = observable == observed;
    if !kept {
        ok = false;
        out.push(
            "   the group rebalanced while the feed ran: what verify saw is not that assignment's alone"
                .to_string(),
        );
    }
    for (what, list) in [
        ("unexpected", &v.unexpected),
        ("wrong", &v.wrong),
        ("stale", &v.stale),
    ] {
        if !list.is_empty() {
            ok = false;
            out.push(format!("   {} {what} (a round-robin group misses alerts, it must not invent them or lose ticks):", list.len()));
            for line in list.iter().take(5) {
                out.push(format!("     {line}"));
            }
        }
    }
    if ok {
        out.push(format!(
            "== counter-example: as predicted: the round-robin group missed alerts on exactly the {} symbol(s) partwise check named",
            observed.len()
        ));
    } else {
        out.push(
            "== counter-example: MISMATCH between check's prediction and what verify found"
                .to_string(),
        );
    }
    (ok, out)
}

fn join_nums(s: &BTreeSet<u32>) -> String {
    s.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
}

fn join_strs(s: &BTreeSet<String>) -> String {
    if s.is_empty() {
        "none".to_string()
    } else {
        s.iter().cloned().collect::<Vec<_>>().join(" ")
    }
}

/// SIGTERM to every worker, then waits for each (then SIGKILL): they leave
/// together, rather than each one's leave rebalancing the ones still there.
fn stop_all(ws: &mut [WorkerProc], limit: Duration) {
    for w in ws.iter_mut() {
        if let Ok(None) = w.child.try_wait() {
            w.signal("-TERM");
        }
    }
    for w in ws.iter_mut() {
        w.stop(limit);
    }
}

/// `ticker feed` for the demo's phases, as a child process.
fn feed_command(common: &Common, rate: u32, dur: Duration, seed: u64) -> Result<Command> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut c = Command::new(&exe);
    c.arg("feed")
        .args([
            "-b",
            common.bootstrap.as_deref().expect("set by demo"),
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

/// Deletes the demo's consumer group (its name has the run id).
fn delete_group(b: &str, group: &str) -> Result<()> {
    use rdkafka::admin::{AdminClient, AdminOptions};
    use rdkafka::client::DefaultClientContext;
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", b)
        .create()
        .map_err(|e| format!("{b}: {e}"))?;
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    let results = rt()?
        .block_on(admin.delete_groups(&[group], &opts))
        .map_err(|e| format!("{b}: deleting group {group}: {e}"))?;
    match results.into_iter().find_map(|r| r.err()) {
        None => Ok(()),
        Some((g, e)) => Err(format!("{b}: deleting group {g}: {e}")),
    }
}

/// Deletes topics the demo created, and waits until the broker confirms.
fn delete_topics(b: &str, names: &[String]) -> Result<()> {
    use rdkafka::admin::{AdminClient, AdminOptions};
    use rdkafka::client::DefaultClientContext;
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", b)
        .create()
        .map_err(|e| format!("{b}: {e}"))?;
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    let results = rt()?
        .block_on(admin.delete_topics(&names, &opts))
        .map_err(|e| format!("{b}: deleting {}: {e}", names.join(", ")))?;
    let failed: Vec<String> = results
        .into_iter()
        .filter_map(|r| r.err().map(|(t, e)| format!("{t}: {e}")))
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{b}: deleting the demo's topics: {}",
            failed.join(", ")
        ))
    }
}

/// The drill on the demo's topics and keys: workers, feed, a SIGKILL, a new
/// worker, a clean leave, verify.
fn drill(a: &DemoArgs, common: &Common, group: &str) -> Result<u8> {
    let common = common.clone();
    println!("== join: 3 workers in group {group} (copartitioned assignor)");
    let mut workers: Vec<WorkerProc> = (0..3)
        .map(|i| {
            WorkerProc::start(
                &common,
                &format!("w{i}"),
                group,
                a.session_timeout_ms,
                "partwise",
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
    let dur = duration("--duration", &a.duration)?;
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
        a.session_timeout_ms,
        "partwise",
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
        wait: "90s".into(),
        format: "table".into(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Generator;
    use partwise::slot::key_slot;

    fn example_plan(ns: &str) -> Plan {
        plan(&Common {
            bootstrap: None,
            redis: None,
            namespace: Some(ns.into()),
            topology: crate::default_topology(),
        })
        .unwrap()
    }

    /// Round-robin deals the 12 partitions of the two topics (sorted by
    /// name) to 4 members in turn: partition p of market-updates goes to
    /// member p mod 4, partition p of notifications to (6 + p) mod 4, never
    /// the same one, whatever the member order. So every index is split and
    /// every symbol is predicted; at 3 members (6 mod 3 = 0) none is.
    #[test]
    fn check_predicts_every_symbol_split_for_4_round_robin_members() {
        let p = example_plan("ticker-demo-1-2-roundrobin");
        let syms: Vec<&str> = SYMBOLS.iter().map(|(s, _)| *s).collect();
        let g = "ticker-demo-1-2-roundrobin-joiner";
        let four = predict(&p, g, &rr_members(), &syms).unwrap();
        assert_eq!(four.split, (0..6).collect());
        assert_eq!(four.symbols(), syms.iter().map(|s| s.to_string()).collect());
        let t = round_robin_topology(&p, g, &rr_members());
        assert_eq!(
            t.topics.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(),
            [
                "ticker-demo-1-2-roundrobin-market-updates",
                "ticker-demo-1-2-roundrobin-notifications"
            ]
        );
        let three = predict(&p, g, &rr_members()[..3], &syms).unwrap();
        assert!(three.split.is_empty() && three.symbols().is_empty());
    }

    fn verdict(due: &[(&str, usize)], missing: &[(&str, usize)]) -> Verdict {
        let map = |l: &[(&str, usize)]| l.iter().map(|(s, n)| (s.to_string(), *n)).collect();
        Verdict {
            ticks: 10,
            alerts: 5,
            expected_fired: due.iter().map(|(_, n)| n).sum(),
            pending: 0,
            missing: missing
                .iter()
                .map(|(s, _)| format!("r-1 ({s}, ...)"))
                .collect(),
            unexpected: Vec::new(),
            wrong: Vec::new(),
            stale: Vec::new(),
            symbols: 3,
            due: map(due),
            missing_by_symbol: map(missing),
        }
    }

    /// The counter-example passes only when verify's symbols are check's
    /// (on the symbols with alerts due), on the assignment check judged,
    /// with nothing invented: a miss outside the prediction, a predicted
    /// symbol whose alerts all fired, an unexpected alert or a rebalance
    /// fail it.
    #[test]
    fn the_counter_example_passes_only_when_verify_finds_what_check_predicted() {
        let pred = Prediction {
            split: [0].into(),
            partition: [("AAA", 0), ("BBB", 0), ("CCC", 1)]
                .map(|(s, p)| (s.to_string(), p))
                .into(),
        };
        let due = [("AAA", 2), ("BBB", 1), ("CCC", 3)];
        let (ok, lines) = judge(&pred, &verdict(&due, &[("AAA", 2), ("BBB", 1)]), true);
        assert!(ok, "{lines:?}");
        assert!(lines.contains(&"   predicted split symbols: AAA BBB".to_string()));
        assert!(lines.contains(&"   symbols with missing alerts: AAA BBB".to_string()));
        assert!(lines
            .iter()
            .any(|l| l.starts_with("   CCC") && l.contains(" no ")));
        for (what, missing, kept) in [
            (
                "a miss outside",
                &[("AAA", 2), ("BBB", 1), ("CCC", 1)][..],
                true,
            ),
            ("a predicted symbol fired", &[("AAA", 2)][..], true),
            ("a rebalance", &[("AAA", 2), ("BBB", 1)][..], false),
        ] {
            let (ok, lines) = judge(&pred, &verdict(&due, missing), kept);
            assert!(!ok, "{what}: {lines:?}");
            assert!(lines.last().unwrap().contains("MISMATCH"), "{what}");
        }
        let mut invented = verdict(&due, &[("AAA", 2), ("BBB", 1)]);
        invented
            .unexpected
            .push("r-9 (CCC) fired on tick 3 but no tick crosses it".into());
        assert!(!judge(&pred, &invented, true).0);
        // No alert due on BBB: nothing there to miss, and the demo says so.
        let (ok, lines) = judge(
            &pred,
            &verdict(&[("AAA", 2), ("CCC", 3)], &[("AAA", 2)]),
            true,
        );
        assert!(ok, "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("no alert was due on BBB")));
    }

    /// The feed starts only on one whole assignment of the 4 members.
    #[test]
    fn settled_waits_for_one_whole_assignment() {
        let topics = [("m", 2), ("n", 2)];
        let asg = |u: Value| json!({"event": "assigned", "units": u});
        let whole = vec![
            vec![asg(json!([["m", 0], ["n", 1]]))],
            vec![
                asg(json!([["m", 0]])),
                json!({"event": "revoked"}),
                asg(json!([["m", 1], ["n", 0]])),
            ],
        ];
        let held = settled(&whole, &topics).unwrap();
        assert!(held[1].contains(&("n".to_string(), 0)));
        // A member still revoked, one without an assignment yet, an overlap
        // (one member's stale generation), a partition nobody holds.
        let revoked = vec![
            whole[0].clone(),
            vec![
                asg(json!([["m", 1], ["n", 0]])),
                json!({"event": "revoked"}),
            ],
        ];
        let waiting = vec![whole[0].clone(), vec![]];
        let overlap = vec![
            whole[0].clone(),
            vec![asg(json!([["m", 0], ["m", 1], ["n", 0]]))],
        ];
        let short = vec![whole[0].clone(), vec![asg(json!([["m", 1]]))]];
        for (what, ev) in [
            ("revoked", revoked),
            ("waiting", waiting),
            ("overlap", overlap),
            ("short", short),
        ] {
            assert!(settled(&ev, &topics).is_none(), "{what}");
        }
    }

    /// The counter-example's fixed feed (seed 1) has alerts due on every one
    /// of the seed's symbols, so each split symbol has alerts to miss.
    #[test]
    fn the_counter_example_feed_has_alerts_due_on_every_symbol() {
        let n = (f64::from(RR_RATE) * RR_FEED.as_secs_f64()).round() as u64;
        let syms = SYMBOLS.iter().map(|(s, p)| (s.to_string(), *p)).collect();
        let mut g = Generator::new("r1", 1, syms, 50).unwrap();
        let (mut ticks, mut alerts) = (Vec::new(), Vec::new());
        for i in 0..n {
            match g.next(0) {
                Event::Tick(t) => ticks.push((t, i as i64)),
                Event::Alert(a) => alerts.push(a),
            }
        }
        let want = expected(&ticks, &alerts);
        let due: BTreeSet<&str> = want.fired.values().map(|(s, _)| s.as_str()).collect();
        assert_eq!(due, SYMBOLS.iter().map(|(s, _)| *s).collect());
    }

    /// A namespace goes in front of the keys and leaves the symbol the hash
    /// tag: both keys of a symbol stay in the symbol's own slot.
    #[test]
    fn namespaced_keys_keep_the_symbols_slot() {
        for sym in ["BBCA", "GOTO", "S1X9"] {
            let want = key_slot(sym.as_bytes());
            let (mk, nk) = keys(Some("ticker-demo-1796-42"), sym);
            assert_eq!(mk, format!("ticker-demo-1796-42:market:{{{sym}}}"));
            assert_eq!(
                (key_slot(mk.as_bytes()), key_slot(nk.as_bytes())),
                (want, want)
            );
            assert_eq!(keys(None, sym).0, format!("market:{{{sym}}}"));
        }
    }
}
