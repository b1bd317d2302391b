//! The live slot map: which primary (and which replicas) serve each of the
//! 16384 slots, read from `CLUSTER SHARDS` (Redis 7) or, on older servers,
//! `CLUSTER SLOTS`, under RESP2 or RESP3.

use crate::error::Error;
use crate::node::{NodeAddr, NodeConn};
use partwise::redis::slot::SLOTS;
use redis::Value;
use std::time::Duration;

/// A node's role in its shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Serves the shard's slots.
    Primary,
    /// Copies a primary.
    Replica,
}

impl Role {
    /// `primary` or `replica`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Primary => "primary",
            Role::Replica => "replica",
        }
    }
}

/// One node of the cluster as the seed node sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The node id (40 hex digits).
    pub id: String,
    /// Where clients reach it.
    pub addr: NodeAddr,
    /// Primary or replica.
    pub role: Role,
    /// `online`, `failed` or `loading` (`CLUSTER SHARDS`); `unknown` when the
    /// map came from `CLUSTER SLOTS`, which does not say.
    pub health: String,
}

/// A primary, its replicas and the slot ranges they serve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Inclusive slot ranges, ascending.
    pub ranges: Vec<(u16, u16)>,
    /// The primary.
    pub primary: Node,
    /// Its replicas.
    pub replicas: Vec<Node>,
}

impl Shard {
    /// The number of slots the shard serves.
    pub fn slot_count(&self) -> u32 {
        self.ranges
            .iter()
            .map(|&(a, b)| u32::from(b) - u32::from(a) + 1)
            .sum()
    }
}

/// Which command the map was read with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `CLUSTER SHARDS` (Redis 7.0 and later).
    Shards,
    /// `CLUSTER SLOTS` (older servers).
    Slots,
}

/// The cluster's slot map as one node reported it.
#[derive(Clone, Debug)]
pub struct SlotMap {
    /// The node that answered.
    pub seed: NodeAddr,
    /// The command that produced the map.
    pub source: Source,
    /// `cluster_state` from `CLUSTER INFO`: `ok` or `fail`.
    pub state: String,
    /// Shards, in ascending order of their first slot (shards without slots last).
    pub shards: Vec<Shard>,
    owner: Vec<u16>,
}

const NO_OWNER: u16 = u16::MAX;

impl SlotMap {
    /// Reads the map from the first of `seeds` that answers. When none does,
    /// the error is the first seed's.
    pub fn fetch(seeds: &[NodeAddr], timeout: Duration) -> Result<SlotMap, Error> {
        let mut first = None;
        for seed in seeds {
            match NodeConn::open(seed, timeout).and_then(|mut c| SlotMap::read(&mut c)) {
                Ok(map) => return Ok(map),
                // A node that is not in a cluster is a wrong address, not a
                // node that is down: trying the next seed would hide that.
                Err(e @ Error::NotACluster { .. }) => return Err(e),
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        Err(first.unwrap_or_else(|| Error::Address {
            input: String::new(),
            reason: "no seed node given".to_string(),
        }))
    }

    /// Reads the map over an open connection.
    pub fn read(conn: &mut NodeConn) -> Result<SlotMap, Error> {
        let info: String = conn.query(redis::cmd("CLUSTER").arg("INFO"), "CLUSTER INFO")?;
        let state = info
            .lines()
            .find_map(|l| l.trim().strip_prefix("cluster_state:"))
            .unwrap_or("unknown")
            .to_string();
        let seed = conn.addr().clone();
        let (source, shards) = match conn
            .query::<Value>(redis::cmd("CLUSTER").arg("SHARDS"), "CLUSTER SHARDS")
        {
            Ok(v) => (Source::Shards, parse_shards(&v, &seed)?),
            Err(Error::Server { reason, .. })
                if reason.to_ascii_lowercase().contains("unknown subcommand") =>
            {
                let v: Value = conn.query(redis::cmd("CLUSTER").arg("SLOTS"), "CLUSTER SLOTS")?;
                (Source::Slots, parse_slots(&v, &seed)?)
            }
            Err(e) => return Err(e),
        };
        Ok(SlotMap::new(seed, source, state, shards))
    }

    /// A map from its parts (for tests and for callers with their own source).
    pub fn new(seed: NodeAddr, source: Source, state: String, mut shards: Vec<Shard>) -> SlotMap {
        for s in &mut shards {
            s.ranges.sort_unstable();
        }
        shards.sort_by_key(|s| s.ranges.first().map_or(u32::MAX, |r| u32::from(r.0)));
        let mut owner = vec![NO_OWNER; usize::from(SLOTS)];
        for (i, s) in shards.iter().enumerate() {
            for &(a, b) in &s.ranges {
                for slot in a..=b.min(SLOTS - 1) {
                    owner[usize::from(slot)] = i as u16;
                }
            }
        }
        SlotMap {
            seed,
            source,
            state,
            shards,
            owner,
        }
    }

    /// The shard serving `slot`, if any.
    pub fn owner(&self, slot: u16) -> Option<&Shard> {
        match *self.owner.get(usize::from(slot))? {
            NO_OWNER => None,
            i => self.shards.get(usize::from(i)),
        }
    }

    /// Slot ranges that no shard serves.
    pub fn unassigned(&self) -> Vec<(u16, u16)> {
        let mut out: Vec<(u16, u16)> = Vec::new();
        for slot in 0..SLOTS {
            if self.owner[usize::from(slot)] != NO_OWNER {
                continue;
            }
            match out.last_mut() {
                Some(r) if r.1 + 1 == slot => r.1 = slot,
                _ => out.push((slot, slot)),
            }
        }
        out
    }

    /// Every node: each shard's primary, then its replicas.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.shards
            .iter()
            .flat_map(|s| std::iter::once(&s.primary).chain(&s.replicas))
    }

    /// Keys on each node (`DBSIZE`), in [`SlotMap::nodes`] order. A node that
    /// does not answer has its error in place of a count.
    pub fn key_counts(&self, timeout: Duration) -> Vec<(Node, Result<u64, Error>)> {
        self.nodes()
            .map(|n| {
                let count = NodeConn::open(&n.addr, timeout)
                    .and_then(|mut c| c.query::<u64>(&redis::cmd("DBSIZE"), "DBSIZE"));
                (n.clone(), count)
            })
            .collect()
    }
}

fn malformed(seed: &NodeAddr, command: &str, what: &str) -> Error {
    Error::Server {
        node: seed.clone(),
        command: command.to_string(),
        reason: format!("unexpected reply: {what}"),
        cause: None,
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        Value::VerbatimString { text, .. } => Some(text.clone()),
        Value::Int(i) => Some(i.to_string()),
        Value::Okay => Some("OK".to_string()),
        _ => None,
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        _ => text(v)?.parse().ok(),
    }
}

fn seq(v: &Value) -> Option<&[Value]> {
    match v {
        Value::Array(a) | Value::Set(a) => Some(a),
        _ => None,
    }
}

/// The fields of a reply that is a RESP3 map or a RESP2 flat array of
/// alternating names and values.
fn fields(v: &Value) -> Option<Vec<(String, &Value)>> {
    match v {
        Value::Map(m) => m.iter().map(|(k, v)| Some((text(k)?, v))).collect(),
        Value::Array(a) if a.len() % 2 == 0 => {
            a.chunks(2).map(|p| Some((text(&p[0])?, &p[1]))).collect()
        }
        _ => None,
    }
}

fn field<'a>(f: &[(String, &'a Value)], name: &str) -> Option<&'a Value> {
    f.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
}

/// The host clients should use: the announced endpoint, else the IP. An empty
/// or `?` endpoint means the node does not know its own address, which Redis
/// documents as "the host of the node you asked".
fn host_of(endpoint: Option<String>, ip: Option<String>, seed: &NodeAddr) -> String {
    [endpoint, ip]
        .into_iter()
        .flatten()
        .find(|h| !h.is_empty() && h != "?")
        .unwrap_or_else(|| seed.host.clone())
}

fn slot_number(v: &Value, seed: &NodeAddr, command: &str) -> Result<u16, Error> {
    int(v)
        .and_then(|i| u16::try_from(i).ok())
        .filter(|&s| s < SLOTS)
        .ok_or_else(|| malformed(seed, command, "a slot number out of range"))
}

fn parse_shards(v: &Value, seed: &NodeAddr) -> Result<Vec<Shard>, Error> {
    const CMD: &str = "CLUSTER SHARDS";
    let bad = |what: &str| malformed(seed, CMD, what);
    let mut shards = Vec::new();
    for shard in seq(v).ok_or_else(|| bad("not a list of shards"))? {
        let f = fields(shard).ok_or_else(|| bad("a shard that is not a map"))?;
        let slots = seq(field(&f, "slots").ok_or_else(|| bad("a shard without slots"))?)
            .ok_or_else(|| bad("slots that are not a list"))?;
        if slots.len() % 2 != 0 {
            return Err(bad("an odd number of slot bounds"));
        }
        let mut ranges = Vec::new();
        for pair in slots.chunks(2) {
            let (a, b) = (
                slot_number(&pair[0], seed, CMD)?,
                slot_number(&pair[1], seed, CMD)?,
            );
            if a > b {
                return Err(bad("a slot range that ends before it starts"));
            }
            ranges.push((a, b));
        }
        let mut primary = None;
        let mut replicas = Vec::new();
        for n in seq(field(&f, "nodes").ok_or_else(|| bad("a shard without nodes"))?)
            .ok_or_else(|| bad("nodes that are not a list"))?
        {
            let nf = fields(n).ok_or_else(|| bad("a node that is not a map"))?;
            let get = |k: &str| field(&nf, k).and_then(text);
            let port = field(&nf, "port")
                .or_else(|| field(&nf, "tls-port"))
                .and_then(int)
                .and_then(|p| u16::try_from(p).ok())
                .ok_or_else(|| bad("a node without a port"))?;
            let role = match get("role").as_deref() {
                Some("master") | Some("primary") => Role::Primary,
                _ => Role::Replica,
            };
            let node = Node {
                id: get("id").unwrap_or_default(),
                addr: NodeAddr::new(host_of(get("endpoint"), get("ip"), seed), port),
                role,
                health: get("health").unwrap_or_else(|| "unknown".to_string()),
            };
            if role == Role::Primary && primary.is_none() {
                primary = Some(node);
            } else {
                replicas.push(node);
            }
        }
        let Some(primary) = primary else {
            // A shard whose primary failed with no replica to take over: its
            // slots have no one to serve them.
            if ranges.is_empty() {
                continue;
            }
            if replicas.is_empty() {
                return Err(bad("a shard without nodes"));
            }
            let mut p = replicas.remove(0);
            p.role = Role::Primary;
            shards.push(Shard {
                ranges,
                primary: p,
                replicas,
            });
            continue;
        };
        shards.push(Shard {
            ranges,
            primary,
            replicas,
        });
    }
    Ok(shards)
}

fn parse_slots(v: &Value, seed: &NodeAddr) -> Result<Vec<Shard>, Error> {
    const CMD: &str = "CLUSTER SLOTS";
    let bad = |what: &str| malformed(seed, CMD, what);
    let mut shards: Vec<Shard> = Vec::new();
    for entry in seq(v).ok_or_else(|| bad("not a list of slot ranges"))? {
        let e = seq(entry).ok_or_else(|| bad("a range that is not a list"))?;
        if e.len() < 3 {
            return Err(bad("a range without a node"));
        }
        let (a, b) = (
            slot_number(&e[0], seed, CMD)?,
            slot_number(&e[1], seed, CMD)?,
        );
        let mut nodes = Vec::new();
        for (i, n) in e[2..].iter().enumerate() {
            let n = seq(n).ok_or_else(|| bad("a node that is not a list"))?;
            let port = n
                .get(1)
                .and_then(int)
                .and_then(|p| u16::try_from(p).ok())
                .ok_or_else(|| bad("a node without a port"))?;
            nodes.push(Node {
                id: n.get(2).and_then(text).unwrap_or_default(),
                addr: NodeAddr::new(host_of(n.first().and_then(text), None, seed), port),
                role: if i == 0 { Role::Primary } else { Role::Replica },
                health: "unknown".to_string(),
            });
        }
        let primary = nodes.remove(0);
        match shards
            .iter_mut()
            .find(|s| s.primary.id == primary.id && s.primary.addr == primary.addr)
        {
            Some(s) => s.ranges.push((a, b)),
            None => shards.push(Shard {
                ranges: vec![(a, b)],
                primary,
                replicas: nodes,
            }),
        }
    }
    Ok(shards)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    fn seed() -> NodeAddr {
        NodeAddr::new("10.0.0.1", 7000)
    }

    fn node_resp2(id: &str, port: i64, endpoint: &str, role: &str) -> Value {
        Value::Array(vec![
            bulk("id"),
            bulk(id),
            bulk("port"),
            Value::Int(port),
            bulk("ip"),
            bulk("127.0.0.1"),
            bulk("endpoint"),
            bulk(endpoint),
            bulk("role"),
            bulk(role),
            bulk("health"),
            bulk("online"),
        ])
    }

    #[test]
    fn shards_resp2_and_resp3() {
        let resp2 = Value::Array(vec![
            Value::Array(vec![
                bulk("slots"),
                Value::Array(vec![Value::Int(5461), Value::Int(16383)]),
                bulk("nodes"),
                Value::Array(vec![
                    node_resp2("b", 7001, "?", "master"),
                    node_resp2("c", 7002, "", "replica"),
                ]),
            ]),
            Value::Array(vec![
                bulk("slots"),
                Value::Array(vec![Value::Int(0), Value::Int(5460)]),
                bulk("nodes"),
                Value::Array(vec![node_resp2("a", 7000, "h1", "master")]),
            ]),
        ]);
        let map = SlotMap::new(
            seed(),
            Source::Shards,
            "ok".into(),
            parse_shards(&resp2, &seed()).unwrap(),
        );
        assert_eq!(
            map.owner(0).unwrap().primary.addr,
            NodeAddr::new("h1", 7000)
        );
        // '?' endpoint falls back to the IP.
        assert_eq!(
            map.owner(16383).unwrap().primary.addr,
            NodeAddr::new("127.0.0.1", 7001)
        );
        assert_eq!(map.owner(16383).unwrap().replicas[0].id, "c");
        assert!(map.unassigned().is_empty());
        assert_eq!(map.shards[0].slot_count(), 5461);

        let to_map = |v: &Value| match v {
            Value::Array(a) => {
                Value::Map(a.chunks(2).map(|p| (p[0].clone(), p[1].clone())).collect())
            }
            _ => unreachable!(),
        };
        let resp3 = Value::Array(vec![Value::Map(vec![
            (
                bulk("slots"),
                Value::Array(vec![Value::Int(0), Value::Int(99)]),
            ),
            (
                bulk("nodes"),
                Value::Array(vec![to_map(&node_resp2("a", 7000, "", "master"))]),
            ),
        ])]);
        let map = SlotMap::new(
            seed(),
            Source::Shards,
            "fail".into(),
            parse_shards(&resp3, &seed()).unwrap(),
        );
        assert_eq!(map.owner(99).unwrap().primary.addr.port, 7000);
        assert!(map.owner(100).is_none());
        assert_eq!(map.unassigned(), vec![(100, 16383)]);
    }

    #[test]
    fn slots_groups_ranges_by_primary() {
        let n = |host: &str, port: i64, id: &str| {
            Value::Array(vec![bulk(host), Value::Int(port), bulk(id)])
        };
        let v = Value::Array(vec![
            Value::Array(vec![
                Value::Int(0),
                Value::Int(10),
                n("", 7000, "a"),
                n("h", 7003, "d"),
            ]),
            Value::Array(vec![Value::Int(11), Value::Int(16383), n("h", 7001, "b")]),
            Value::Array(vec![Value::Int(20), Value::Int(30), n("", 7000, "a")]),
        ]);
        let shards = parse_slots(&v, &seed()).unwrap();
        assert_eq!(shards.len(), 2);
        assert_eq!(shards[0].ranges, vec![(0, 10), (20, 30)]);
        // An empty host means the node we asked.
        assert_eq!(shards[0].primary.addr, NodeAddr::new("10.0.0.1", 7000));
        assert_eq!(shards[0].replicas[0].addr, NodeAddr::new("h", 7003));
    }

    #[test]
    fn malformed_replies_are_errors_naming_the_node() {
        for v in [
            Value::Int(3),
            Value::Array(vec![Value::Int(3)]),
            Value::Array(vec![Value::Array(vec![
                bulk("slots"),
                Value::Array(vec![Value::Int(0), Value::Int(20000)]),
                bulk("nodes"),
                Value::Array(vec![]),
            ])]),
            Value::Array(vec![Value::Array(vec![
                bulk("slots"),
                Value::Array(vec![Value::Int(9), Value::Int(3)]),
                bulk("nodes"),
                Value::Array(vec![]),
            ])]),
        ] {
            let e = parse_shards(&v, &seed()).unwrap_err();
            assert!(e.to_string().contains("10.0.0.1:7000"), "{e}");
        }
        assert!(parse_slots(
            &Value::Array(vec![Value::Array(vec![Value::Int(0)])]),
            &seed()
        )
        .is_err());
    }
}
