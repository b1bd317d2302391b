//! What every subcommand shares: the topology's plan of the two topics
//! under the flags' namespace, the Redis keys of a symbol, the brokers and
//! Redis seeds from the flags, a runtime and the clock.

use crate::flags::Common;
use partwise::topology::Topology;
use partwise::{KeyFormat, Partitioner};
use partwise_kafka::Connection;
use partwise_redis::NodeAddr;
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub(super) type Result<T> = std::result::Result<T, String>;

/// The two topics of the ticker, as the topology declares them.
pub(super) struct Plan {
    pub(super) market: String,
    pub(super) notif: String,
    pub(super) partitions: u32,
    /// Per topic: its first producer's partitioner and key format.
    pub(super) routing: HashMap<String, (Partitioner, KeyFormat)>,
    pub(super) topology: Topology,
    /// `--namespace`: in front of both topic names and every Redis key.
    pub(super) ns: Option<String>,
}

/// The Redis keys of one symbol, the last tick and the fired alerts: hash
/// tagged by the symbol, so both share its slot whatever the namespace.
pub(super) fn keys(ns: Option<&str>, sym: &str) -> (String, String) {
    let pre = ns.map_or(String::new(), |n| format!("{n}:"));
    (
        format!("{pre}market:{{{sym}}}"),
        format!("{pre}notif:{{{sym}}}"),
    )
}

/// The topology's plan under the flags' namespace: the topics the command
/// reads and writes are `NS-NAME` for each NAME the file declares.
pub(super) fn plan(c: &Common) -> Result<Plan> {
    let ns = c.namespace.clone();
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

pub(super) fn plan_file(path: &Path) -> Result<Plan> {
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

/// The Kafka settings of the flags (`-F`, `-X`, `-b`), every property
/// checked by librdkafka; they may name no broker (see [`connection`]).
pub(super) fn settings(c: &Common, timeout: Duration) -> Result<Connection> {
    let conn = c
        .kafka_flags(timeout)
        .connection()
        .map_err(|e| Common::kafka_flag_error(&e))?;
    conn.check_properties().map_err(|e| e.to_string())?;
    Ok(conn)
}

/// The Kafka connection of the flags, which must name a broker; each
/// operation on it gives up after `timeout`.
pub(super) fn connection(c: &Common, timeout: Duration) -> Result<Connection> {
    let conn = settings(c, timeout)?;
    if !has_brokers(&conn) {
        return Err(
            "no brokers: give -b HOST:PORT (or set PARTWISE_KAFKA_BOOTSTRAP, or bootstrap.servers with -X or -F)"
                .into(),
        );
    }
    Ok(conn)
}

pub(super) fn has_brokers(conn: &Connection) -> bool {
    conn.get("bootstrap.servers")
        .is_some_and(|b| !b.trim().is_empty())
}

/// The bootstrap brokers one by one, for partwise's own clients.
pub(super) fn brokers(conn: &Connection) -> Vec<String> {
    conn.brokers()
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The TLS and SASL settings of the connection, for partwise's own clients
/// (the group runtime, topic creation), which take what librdkafka does.
pub(super) fn security(conn: &Connection) -> Result<partwise_group::Security> {
    conn.security().map(|(s, _)| s).map_err(|e| e.to_string())
}

pub(super) fn redis_seeds(c: &Common) -> Result<Vec<NodeAddr>> {
    c.redis_nodes()
        .split(',')
        .map(|s| {
            s.trim()
                .parse::<NodeAddr>()
                .map_err(|e| format!("--redis: '{s}': {e}"))
        })
        .collect()
}

pub(super) fn rt() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

pub(super) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use partwise::redis::slot::key_slot;

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
