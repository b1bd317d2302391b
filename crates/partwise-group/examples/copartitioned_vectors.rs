//! The one set of consistency vectors of the `copartitioned` assignor: many
//! group shapes and churn sequences run through the Rust leader's own path
//! (`leader_assignment`, `leader_unit_groups`, `encode_unit_groups`),
//! printed as text that every consumer replays: the Rust leader itself
//! (`crates/partwise-group/tests/it/offline/copartitioned_vectors.rs`), the
//! Java port (`bindings/java/test`) and the KafkaJS binding
//! (`bindings/kafkajs/tests/vectors.test.js`). Not known answers: the
//! vectors say what the Rust leader does, so a port that matches them writes
//! the same assignment and user data bytes as a Rust leader for the same
//! group.
//!
//! ```sh
//! cargo run -q -p partwise-group --example copartitioned_vectors > tests/vectors/copartitioned/vectors.txt
//! ```
//!
//! Format, one case per block (names never contain spaces, `,` or `:`):
//!
//! ```text
//! case NAME
//! topic NAME COUNT                         (name order, as the leader sees them)
//! member ID INSTANCE|- TOPIC,..|- TOPIC:P,..|-   (subscription, owned)
//! expect ID TOPIC:P,..|-                   (the leader's assignment, its order)
//! userdata HEX                             (every member's assignment user data)
//! end
//! ```

use partwise_group::protocol::Subscription;
use partwise_group::units::{leader_assignment, leader_unit_groups, JoinedMember};
use partwise_wire::consumer::encode_unit_groups;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// splitmix64: a fixed seed gives the same vectors on every machine without
/// a random-number crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

// Names that Java's UTF-16 order sorts unlike UTF-8 byte order (U+FF61 vs
// U+1F600), accents, and plain ASCII that sorts by length and case.
const TOPICS: &[&str] = &[
    "orders",
    "payments",
    "Quotes",
    "trades",
    "ümlaut",
    "\u{FF61}half",
    "\u{1F600}smile",
    "a",
    "a-b",
    "z",
];
const IDS: &[&str] = &[
    "consumer-1",
    "consumer-10",
    "consumer-2",
    "Consumer-3",
    "\u{FF61}m",
    "\u{1F600}m",
    "m",
    "éa",
];

struct Shape {
    counts: BTreeMap<String, i32>,
    members: Vec<JoinedMember>,
}

fn fresh_member(rng: &mut Rng, serial: usize, topics: &[String]) -> JoinedMember {
    let id = format!("{}-{serial}", IDS[rng.below(IDS.len())]);
    let instance_id = rng
        .chance(20)
        .then(|| format!("{}-i{serial}", IDS[rng.below(IDS.len())]));
    let subscribed: Vec<String> = if rng.chance(65) {
        topics.to_vec()
    } else {
        let picked: Vec<String> = topics.iter().filter(|_| rng.chance(60)).cloned().collect();
        if picked.is_empty() {
            vec![topics[rng.below(topics.len())].clone()]
        } else {
            picked
        }
    };
    JoinedMember {
        member_id: id,
        instance_id,
        subscription: Subscription {
            topics: subscribed,
            owned: Vec::new(),
            generation: -1,
            user_data: None,
        },
    }
}

fn shape(rng: &mut Rng, serial: &mut usize, big: bool) -> Shape {
    let n_topics = 1 + rng.below(5);
    let mut counts = BTreeMap::new();
    // Few distinct counts, so that topics share units.
    let sizes: &[i32] = if big {
        &[60, 64, 100, 100, 256]
    } else {
        &[1, 2, 3, 4, 6, 6, 8, 12, 16]
    };
    while counts.len() < n_topics {
        counts.insert(
            TOPICS[rng.below(TOPICS.len())].to_string(),
            sizes[rng.below(sizes.len())],
        );
    }
    let topics: Vec<String> = counts.keys().cloned().collect();
    let n_members = if big {
        20 + rng.below(120)
    } else {
        1 + rng.below(9)
    };
    let mut members = Vec::new();
    for _ in 0..n_members {
        *serial += 1;
        members.push(fresh_member(rng, *serial, &topics));
    }
    // Sometimes a topic nobody can see: the leader drops subscriptions to it.
    if rng.chance(15) {
        let m = rng.below(members.len());
        members[m].subscription.topics.push("missing".into());
    }
    Shape { counts, members }
}

fn parts(list: &[(String, i32)]) -> String {
    if list.is_empty() {
        return "-".into();
    }
    let v: Vec<String> = list.iter().map(|(t, p)| format!("{t}:{p}")).collect();
    v.join(",")
}

/// Runs the Rust leader on `s` and prints one case; returns the assignment.
fn case(out: &mut String, name: &str, s: &Shape) -> BTreeMap<String, Vec<(String, i32)>> {
    let plan = leader_assignment("copartitioned", &s.members, &s.counts).expect("assigns");
    let groups = leader_unit_groups(&s.members, &s.counts);
    let _ = writeln!(out, "case {name}");
    for (t, n) in &s.counts {
        let _ = writeln!(out, "topic {t} {n}");
    }
    for m in &s.members {
        let topics = if m.subscription.topics.is_empty() {
            "-".to_string()
        } else {
            m.subscription.topics.join(",")
        };
        let _ = writeln!(
            out,
            "member {} {} {} {}",
            m.member_id,
            m.instance_id.as_deref().unwrap_or("-"),
            topics,
            parts(&m.subscription.owned)
        );
    }
    let mut got = BTreeMap::new();
    for m in &s.members {
        let list = plan.get(&m.member_id).cloned().unwrap_or_default();
        let _ = writeln!(out, "expect {} {}", m.member_id, parts(&list));
        got.insert(m.member_id.clone(), list);
    }
    let hex: String = encode_unit_groups(&groups)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let _ = writeln!(out, "userdata {hex}\nend");
    got
}

/// One generation of churn: members leave (or are killed: the same to the
/// leader), join, change subscriptions; topics grow. Survivors claim what
/// they got last time, sometimes a stale claim on someone else's partition.
fn churn(
    rng: &mut Rng,
    s: &mut Shape,
    prev: &BTreeMap<String, Vec<(String, i32)>>,
    serial: &mut usize,
) {
    for m in &mut s.members {
        m.subscription.owned = prev.get(&m.member_id).cloned().unwrap_or_default();
        m.subscription.generation = 1;
    }
    let leave = rng.below(3);
    for _ in 0..leave {
        if s.members.len() > 1 {
            let i = rng.below(s.members.len());
            s.members.remove(i);
        }
    }
    let topics: Vec<String> = s.counts.keys().cloned().collect();
    for _ in 0..rng.below(3) {
        *serial += 1;
        s.members.push(fresh_member(rng, *serial, &topics));
    }
    if rng.chance(15) {
        let i = rng.below(s.members.len());
        let fresh = fresh_member(rng, 0, &topics);
        s.members[i].subscription.topics = fresh.subscription.topics;
    }
    if rng.chance(15) && s.members.len() > 1 {
        let (a, b) = (rng.below(s.members.len()), rng.below(s.members.len()));
        let stolen = s.members[b].subscription.owned.first().cloned();
        if let Some(tp) = stolen {
            s.members[a].subscription.owned.push(tp);
        }
    }
    if rng.chance(10) {
        let t = topics[rng.below(topics.len())].clone();
        *s.counts.get_mut(&t).expect("a known topic") *= 2;
    }
    // The coordinator lists members in join order, which a port must not
    // depend on: shuffle it.
    for i in (1..s.members.len()).rev() {
        let j = rng.below(i + 1);
        s.members.swap(i, j);
    }
}

fn main() {
    let mut rng = Rng(16);
    let mut out = String::new();
    let mut serial = 0;
    // 200 small groups, then 12 large ones (up to 139 members, 256 partitions
    // a topic); new kinds of case go after them, so the earlier ones stay
    // byte for byte what every port has replayed.
    for c in 0..212 {
        let mut s = shape(&mut rng, &mut serial, c >= 200);
        let mut prev = case(&mut out, &format!("shape-{c}-gen-0"), &s);
        if c % 2 == 0 {
            for g in 1..=6 {
                churn(&mut rng, &mut s, &prev, &mut serial);
                prev = case(&mut out, &format!("shape-{c}-gen-{g}"), &s);
            }
        }
    }
    // The seeds' shape: two topics of 6 partitions, 1 to 6 members.
    for k in 1..=6 {
        let counts: BTreeMap<String, i32> = [
            ("market-updates".to_string(), 6),
            ("notifications".to_string(), 6),
        ]
        .into_iter()
        .collect();
        let topics: Vec<String> = counts.keys().cloned().collect();
        let members = (0..k)
            .map(|_| {
                serial += 1;
                let mut m = fresh_member(&mut rng, serial, &topics);
                m.subscription.topics = topics.clone();
                m
            })
            .collect();
        case(
            &mut out,
            &format!("seed-{k}-members"),
            &Shape { counts, members },
        );
    }
    // Claims from a generation nobody here computed: some on a partition
    // another member claims too, some past a topic's count (a topic
    // recreated with fewer partitions), which the leader must drop.
    for c in 0..24 {
        let mut s = shape(&mut rng, &mut serial, false);
        let n = s.members.len();
        for m in &mut s.members {
            m.subscription.generation = 1;
            for (t, count) in &s.counts {
                for p in 0..=*count {
                    if rng.below(n) == 0 {
                        m.subscription.owned.push((t.clone(), p));
                    }
                }
            }
        }
        case(&mut out, &format!("claims-{c}"), &s);
    }
    print!("{out}");
}
