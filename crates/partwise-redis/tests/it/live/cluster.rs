//! Against a real Redis Cluster of three primaries: the one
//! `scripts/services` starts, found through `PARTWISE_REDIS`.

use partwise::redis::slot::key_slot;
use partwise_faults::live::{free_port, redis_node, RedisStandalone};
use partwise_redis::{
    check, common_slot, sample, Error, Family, NodeAddr, NodeConn, SlotMap, Source, Writer,
};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(2);
const SYMBOLS: [&str; 10] = [
    "BBCA", "ANTM", "ASII", "UNVR", "TLKM", "BBRI", "BMRI", "GOTO", "ADRO", "ICBP",
];

/// The cluster under test. Unset is a failure, not a skip: a green run must
/// mean the live tests ran.
fn seed() -> NodeAddr {
    let v = redis_node();
    v.parse().unwrap_or_else(|e| panic!("PARTWISE_REDIS: {e}"))
}

fn map() -> SlotMap {
    SlotMap::fetch(&[seed()], TIMEOUT).expect("slot map of the test cluster")
}

fn owner(map: &SlotMap, key: &[u8]) -> NodeAddr {
    map.owner(key_slot(key))
        .expect("slot served")
        .primary
        .addr
        .clone()
}

/// Reads through redis-rs' own cluster client, which follows MOVED itself: an
/// oracle independent of partwise's slot map.
fn cluster_get(keys: &[&[u8]]) -> Vec<Option<Vec<u8>>> {
    let client = redis::cluster::ClusterClient::new(vec![format!("redis://{}/", seed())])
        .expect("cluster client");
    let mut conn = client.get_connection().expect("cluster connection");
    keys.iter()
        .map(|k| redis::cmd("GET").arg(*k).query(&mut conn).expect("GET"))
        .collect()
}

fn delete(keys: &[&[u8]]) {
    let map = map();
    for k in keys {
        let mut c = NodeConn::open(&owner(&map, k), TIMEOUT).expect("owner");
        let _: i64 = c.query(redis::cmd("DEL").arg(*k), "DEL").expect("DEL");
    }
}

/// xorshift64*: reproducible keys without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn slot_map_has_three_primaries_covering_every_slot() {
    let map = map();
    assert_eq!(map.source, Source::Shards);
    assert_eq!(map.state, "ok");
    assert_eq!(map.shards.len(), 3, "{:?}", map.shards);
    assert!(map.unassigned().is_empty());
    assert_eq!(
        map.shards.iter().map(|s| s.slot_count()).sum::<u32>(),
        16384
    );
    for s in &map.shards {
        assert_eq!(s.primary.health, "online");
    }
    let counts = map.key_counts(TIMEOUT);
    assert_eq!(counts.len(), 3);
    assert!(counts.iter().all(|(_, c)| c.is_ok()), "{counts:?}");
}

#[test]
fn live_slot_of_1000_random_keys_is_keyslot_and_partwise() {
    let map = map();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let keys: Vec<Vec<u8>> = (0..1000)
        .map(|i| {
            let len = 1 + (rng.next() % 24) as usize;
            // Braces often, so that hash tags (empty, nested, unclosed) are exercised.
            let alphabet = b"{}{}ab:cdefXYZ019_-\x00\xff";
            let mut k: Vec<u8> = (0..len)
                .map(|_| alphabet[(rng.next() % alphabet.len() as u64) as usize])
                .collect();
            k.extend_from_slice(format!(":{i}").as_bytes());
            k
        })
        .collect();

    let mut seed_conn = NodeConn::open(&seed(), TIMEOUT).unwrap();
    let mut pipe = redis::pipe();
    for k in &keys {
        pipe.cmd("CLUSTER").arg("KEYSLOT").arg(k);
    }
    let server: Vec<u16> = seed_conn.query_pipe(&pipe, "CLUSTER KEYSLOT").unwrap();

    let mut conns: Vec<(NodeAddr, NodeConn)> = map
        .shards
        .iter()
        .map(|s| {
            (
                s.primary.addr.clone(),
                NodeConn::open(&s.primary.addr, TIMEOUT).unwrap(),
            )
        })
        .collect();
    for (k, live) in keys.iter().zip(server) {
        let slot = key_slot(k);
        assert_eq!(live, slot, "CLUSTER KEYSLOT vs key_slot for {k:?}");
        let home = owner(&map, k);
        for (addr, c) in &mut conns {
            // EXISTS is read-only: the owner answers, every other primary
            // redirects, naming the slot and the owner.
            let r = c.query::<i64>(redis::cmd("EXISTS").arg(k), "EXISTS");
            if *addr == home {
                assert!(r.is_ok(), "{addr} should own {k:?}: {r:?}");
            } else {
                let e = r.expect_err("a non-owner answered").to_string();
                assert!(e.contains(&format!("Moved: {slot} {home}")), "{e}");
            }
        }
    }
}

#[test]
fn seed_symbols_tagged_co_locate_10_of_10_untagged_0_of_10() {
    let map = map();
    let keys: Vec<Vec<u8>> = SYMBOLS.iter().map(|s| s.as_bytes().to_vec()).collect();
    let tagged = check(
        &map,
        &Family::new(&["market:{%s}", "notif:{%s}"]).unwrap(),
        &keys,
        TIMEOUT,
    );
    assert!(tagged.errors.is_empty(), "{:?}", tagged.errors);
    assert_eq!((tagged.co_located(), tagged.same_node()), (10, 10));
    assert!(tagged.ok() && tagged.lints.is_empty());
    for k in &tagged.keys {
        assert!(k.verified());
        for m in &k.members {
            assert_eq!(m.live_slot, Some(m.slot));
            assert_eq!(m.node.as_ref(), Some(&owner(&map, &m.key)));
        }
    }

    let plain = check(
        &map,
        &Family::new(&["market:%s", "notif:%s"]).unwrap(),
        &keys,
        TIMEOUT,
    );
    assert!(plain.errors.is_empty(), "{:?}", plain.errors);
    assert_eq!(plain.co_located(), 0);
    assert_eq!(plain.unverified(), 0);
    assert!(!plain.ok());
    assert_eq!(plain.lints.len(), 2);
    // Different slots may still share a node by chance; the count is real
    // placement, checked against the map.
    let same_node = plain
        .keys
        .iter()
        .filter(|k| owner(&map, &k.members[0].key) == owner(&map, &k.members[1].key))
        .count();
    assert_eq!(plain.same_node(), same_node);
}

#[test]
fn tagged_family_writes_atomically() {
    let family = Family::new(&["partwise-test:market:{%s}", "partwise-test:notif:{%s}"]).unwrap();
    let mut w = Writer::connect(&[seed()], TIMEOUT).unwrap();
    for s in SYMBOLS {
        let value = format!("{s}-tick");
        w.set_family(&family, s.as_bytes(), &[value.as_bytes(), b"alert"])
            .unwrap();
        let keys = family.keys(s.as_bytes());
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        assert_eq!(
            cluster_get(&refs),
            vec![Some(value.into_bytes()), Some(b"alert".to_vec())]
        );
        // One transaction: EXEC returns both replies together.
        let replies = w
            .transaction(&keys, |p| {
                for k in &keys {
                    p.cmd("APPEND").arg(k).arg("!");
                }
            })
            .unwrap();
        assert_eq!(replies.len(), 2);
        delete(&refs);
    }
}

#[test]
fn untagged_family_gets_crossslot_before_anything_is_sent() {
    let family = Family::new(&["partwise-test:market:%s", "partwise-test:notif:%s"]).unwrap();
    let mut w = Writer::connect(&[seed()], TIMEOUT).unwrap();
    for s in SYMBOLS {
        let e = w
            .set_family(&family, s.as_bytes(), &[b"1", b"2"])
            .unwrap_err();
        assert!(matches!(e, Error::CrossSlot { .. }), "{e}");
        let keys = family.keys(s.as_bytes());
        assert!(e.to_string().contains(&format!(
            "{} (slot {})",
            String::from_utf8_lossy(&keys[0]),
            key_slot(&keys[0])
        )));
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        assert_eq!(cluster_get(&refs), vec![None, None], "nothing written");
    }
}

#[test]
fn server_crossslot_is_the_same_error_and_writes_nothing() {
    let mut w = Writer::connect(&[seed()], TIMEOUT).unwrap();
    let declared: &[u8] = b"partwise-test:{xs}:a";
    // Same node, other slot: the server, not partwise, must refuse it.
    let map = w.slot_map().clone();
    let other = (0..)
        .map(|i| format!("partwise-test:other:{i}").into_bytes())
        .find(|k| key_slot(k) != key_slot(declared) && owner(&map, k) == owner(&map, declared))
        .unwrap();
    let e = w
        .transaction(&[declared], |p| {
            p.cmd("MSET").arg(declared).arg("1").arg(&other).arg("2");
        })
        .unwrap_err();
    assert!(matches!(e, Error::CrossSlot { .. }), "{e}");
    assert!(e.to_string().starts_with("CROSSSLOT"), "{e}");
    assert_eq!(cluster_get(&[declared, &other]), vec![None, None]);
    // partwise's own check refuses the same pair without asking the server.
    assert!(matches!(
        common_slot(&[declared, &other]),
        Err(Error::CrossSlot { .. })
    ));
}

#[test]
fn hot_sampling_names_the_tag_that_crowds_one_node() {
    let map = map();
    let hot_key = |i: usize| format!("partwise-test:{{hot-tag}}:{i}").into_bytes();
    let cold_key = |i: usize| format!("partwise-test:{{cold-{i}}}:x").into_bytes();
    let hot: Vec<Vec<u8>> = (0..300).map(hot_key).collect();
    let cold: Vec<Vec<u8>> = (0..60).map(cold_key).collect();
    for k in hot.iter().chain(&cold) {
        let mut c = NodeConn::open(&owner(&map, k), TIMEOUT).unwrap();
        let _: () = c.query(redis::cmd("SET").arg(k).arg("1"), "SET").unwrap();
    }
    let report = sample(&map, 10_000, TIMEOUT);
    let all: Vec<&[u8]> = hot.iter().chain(&cold).map(Vec::as_slice).collect();
    delete(&all);

    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.nodes.len(), 3);
    let top = &report.tags[0];
    assert_eq!(top.tag, b"hot-tag");
    assert_eq!(top.sampled, 300);
    assert_eq!(top.node, owner(&map, b"{hot-tag}"));
    assert_eq!(top.slot, key_slot(b"hot-tag"));
    let rule = partwise_redis::HotRule::default();
    let hot_tags: Vec<&[u8]> = report.hot_tags(rule).map(|t| t.tag.as_slice()).collect();
    assert_eq!(hot_tags, [b"hot-tag".as_slice()]);
    assert_eq!(report.slots[0].slot, key_slot(b"hot-tag"));
}

#[test]
fn a_standalone_server_is_not_a_cluster() {
    let s = RedisStandalone::start();
    let addr = NodeAddr::new("127.0.0.1", s.port);
    let e = SlotMap::fetch(std::slice::from_ref(&addr), TIMEOUT).unwrap_err();
    assert_eq!(e, Error::NotACluster { node: addr.clone() });
    assert!(e.to_string().contains(&addr.to_string()));
}

#[test]
fn an_unreachable_node_is_named_and_the_next_seed_is_tried() {
    let dead = NodeAddr::new("127.0.0.1", free_port());
    let start = Instant::now();
    let e = SlotMap::fetch(std::slice::from_ref(&dead), TIMEOUT).unwrap_err();
    assert!(start.elapsed() < TIMEOUT * 2);
    assert!(
        matches!(&e, Error::Unreachable { node, .. } if *node == dead),
        "{e}"
    );
    assert!(e.to_string().contains(&dead.to_string()), "{e}");
    let map = SlotMap::fetch(&[dead, seed()], TIMEOUT).unwrap();
    assert_eq!(map.seed, seed());
}
