//! `ticker demo`: services of its own when none is given, namespaces of its
//! own, the counter-example and the drill, then the removal of what it
//! created.

use super::counter::counter_example;
use super::drill::{drill, Phase};
use super::plan::{connection, has_brokers, keys, now_ms, redis_seeds, settings, Result};
use super::up::up_created;
use crate::flags::Common;
use crate::model::SYMBOLS;
use partwise_kafka::admin;
use partwise_redis::{Command as RedisCommand, Reply, Writer};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

#[derive(clap::Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub(super) common: Common,
    /// Events per second the feed writes, 1 to 100000
    #[arg(long, default_value = "200", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub(super) rate: u32,
    /// How long the feed runs (a bare number is seconds)
    #[arg(long, value_name = "DURATION", default_value = "12s", value_parser = crate::flags::span)]
    pub(super) duration: Duration,
    /// Seed of the feed
    #[arg(long, default_value = "1")]
    pub(super) seed: u64,
    /// Session timeout of the workers (a killed worker's units move after it): 6s, 500ms (a bare number is milliseconds)
    #[arg(long = "session-timeout", alias = "session-timeout-ms", value_name = "DURATION", default_value = "6s", value_parser = crate::flags::timeout)]
    pub(super) session_timeout: Duration,
    /// Skip the counter-example (the seeds' 4 round-robin workers, which miss
    /// alerts on the symbols `partwise check` predicts) and run the fixed
    /// system's drill only
    #[arg(long)]
    pub(super) skip_counter_example: bool,
}

pub(super) fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Runs one of the repository's scripts (with `env` added); its last stdout line.
pub(super) fn script(
    name: &str,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> Result<String> {
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
pub(super) struct Started {
    dir: PathBuf,
    kafka: bool,
    redis: Option<u16>,
}

impl Started {
    pub(super) fn kafka(&mut self) -> Result<String> {
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

    pub(super) fn redis(&mut self) -> Result<String> {
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
pub(super) fn free_redis_base() -> Result<u16> {
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
pub(super) fn demo_keys(ns: &str) -> Vec<(String, String)> {
    SYMBOLS.iter().map(|(s, _)| keys(Some(ns), s)).collect()
}

pub fn demo(a: &DemoArgs) -> Result<u8> {
    let run = format!("{}-{}", now_ms(), std::process::id());
    // Every worker and feed it starts takes these flags, secrets in a
    // private file rather than on their command lines; removed on return.
    let (mut common, _secrets) = a.common.for_children()?;
    // Its own names: a run id in the topics, the group and every key, so that
    // nothing of another ticker (or anything else) at the plain names is read,
    // overwritten or removed.
    let ns = match &common.namespace {
        Some(ns) => ns.clone(),
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
    if counter && crate::flags::namespace(&rr_ns).is_err() {
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
    // Deleting a topic waits for the controller's confirmation, which may
    // take longer than the other requests' 10 s.
    let timeout = Duration::from_secs(30);
    if !has_brokers(&settings(&common, timeout)?) {
        common.bootstrap = Some(started.kafka()?);
    }
    if common.redis.is_none() {
        common.redis = Some(started.redis()?);
    }
    rr_common.bootstrap.clone_from(&common.bootstrap);
    rr_common.redis.clone_from(&common.redis);
    let conn = connection(&common, timeout)?;
    let b = conn.brokers().to_string();
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
                .exec(&[RedisCommand::Exists(vec![
                    mk.clone().into_bytes(),
                    nk.clone().into_bytes(),
                ])])
                .map_err(|e| format!("--redis: {e}"))?;
            if r.first().and_then(Reply::int) != Some(0) {
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
    let phase = Phase {
        session_timeout: a.session_timeout,
        rate: a.rate,
        duration: a.duration,
        seed: a.seed,
    };
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
            counter_ok = Some(counter_example(&phase, &rr_common, &rr_group)?);
        }
        groups.push(&group);
        let code = drill(&phase, &common, &group)?;
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
            if let Err(e) = w.exec(&[RedisCommand::Del(vec![
                mk.clone().into_bytes(),
                nk.clone().into_bytes(),
            ])]) {
                cleanup.push(format!("--redis: removing {mk} and {nk}: {e}"));
            }
        }
    }
    // A broker of the demo's own goes with its directory.
    if !started.kafka && !created.is_empty() {
        let names: Vec<&str> = created.iter().map(String::as_str).collect();
        if let Err(e) = admin::delete_topics(&conn, &names) {
            cleanup.push(format!("{b}: removing the demo's topics: {e}"));
        }
        // The groups (those whose workers ran) commit nothing, so the
        // broker would drop them in time anyway; a member whose session has
        // not run out yet keeps one alive, which is why this is only a warning.
        for g in &groups {
            if let Err(e) = admin::delete_groups(&conn, &[g]) {
                eprintln!("ticker demo: {b}: {e}");
            }
        }
    }
    drop(started);
    if !cleanup.is_empty() && result.is_ok() {
        result = Err(cleanup.join("; "));
    }
    result
}
