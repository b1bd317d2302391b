//! Assignor simulations against real assignments: KafkaJS's own results,
//! Apache Kafka's assignor test suites (transcribed with citations), and
//! librdkafka consumers in a real group on a broker
//! (`tests/vectors/regen/gen_assignments.py`); and the co-partitioned
//! assignor's properties.

use partwise::assign::{
    colocation, colocation_of, copartition_groups, kafkajs_roundrobin_ordered, Assignment,
    Assignor, Group, Member, Topic, Tp,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors")
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// member id -> sorted [(topic, partition)].
type ById = BTreeMap<String, Vec<(String, u32)>>;

/// member id -> sorted [(topic, partition)] of an assignment.
fn by_id(group: &Group, a: &Assignment) -> ById {
    group
        .members
        .iter()
        .zip(&a.partitions)
        .map(|(m, list)| {
            let mut v: Vec<(String, u32)> = list
                .iter()
                .map(|tp| (group.topics[tp.topic as usize].name.clone(), tp.partition))
                .collect();
            v.sort();
            (m.id.clone(), v)
        })
        .collect()
}

fn pairs(v: &Value) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_str().unwrap().to_string(),
                p[1].as_u64().unwrap() as u32,
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn kafkajs_roundrobin_matches_kafkajs() {
    let cases = lines(&vectors().join("reference/kafkajs_roundrobin_assigner.jsonl"));
    assert!(!cases.is_empty());
    for c in &cases {
        let names: Vec<&str> = c["topics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        let order: Vec<Vec<u32>> = names
            .iter()
            .map(|t| {
                c["partition_metadata_order"][t]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p.as_u64().unwrap() as u32)
                    .collect()
            })
            .collect();
        let topics = names
            .iter()
            .zip(&order)
            .map(|(n, o)| Topic::new(*n, o.len() as u32))
            .collect();
        let members = c["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| Member::new(m.as_str().unwrap(), names.iter().copied()))
            .collect();
        let group = Group::new(members, topics);
        let got = by_id(&group, &kafkajs_roundrobin_ordered(&group, &order).unwrap());
        let mut want = BTreeMap::new();
        for r in c["result"].as_array().unwrap() {
            let mut v = Vec::new();
            for (t, ps) in r["assignment"].as_object().unwrap() {
                for p in ps.as_array().unwrap() {
                    v.push((t.clone(), p.as_u64().unwrap() as u32));
                }
            }
            v.sort();
            want.insert(r["memberId"].as_str().unwrap().to_string(), v);
        }
        assert_eq!(got, want, "{c}");
        // With partitions in ascending order, the spec-based path agrees.
        if order.iter().all(|o| o.windows(2).all(|w| w[0] < w[1])) {
            let spec = Assignor::KafkajsRoundRobin.assign(&group).unwrap();
            assert_eq!(by_id(&group, &spec), want);
        }
    }
}

#[test]
fn java_assignors_match_upstream_tests() {
    let mut seen = 0;
    for file in [
        "java_range_upstream.jsonl",
        "java_roundrobin_upstream.jsonl",
    ] {
        for c in lines(&vectors().join("assignors").join(file)) {
            let topics = c["topics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| Topic::new(t[0].as_str().unwrap(), t[1].as_u64().unwrap() as u32))
                .collect();
            let members = c["members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    let mut mem = Member::new(
                        m["id"].as_str().unwrap(),
                        m["topics"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|t| t.as_str().unwrap()),
                    );
                    mem.instance_id = m["instance_id"].as_str().map(str::to_string);
                    mem
                })
                .collect();
            let group = Group::new(members, topics);
            let assignor: Assignor = c["assignor"].as_str().unwrap().parse().unwrap();
            let got = by_id(&group, &assignor.assign(&group).unwrap());
            let want: BTreeMap<String, Vec<(String, u32)>> = c["expected"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), pairs(v)))
                .collect();
            assert_eq!(got, want, "{}", c["source"]);
            // KIP-848's server-side range computes the classic range assignment.
            if assignor == Assignor::JavaRange {
                let kip = Assignor::Kip848Range.assign(&group).unwrap();
                assert_eq!(by_id(&group, &kip), want, "kip848:range {}", c["source"]);
            }
            seen += 1;
        }
    }
    assert!(seen >= 15);
}

#[test]
fn librdkafka_assignors_match_a_real_group() {
    let mut seen = 0;
    for (file, assignor) in [
        ("librdkafka_range.jsonl", Assignor::LibrdkafkaRange),
        (
            "librdkafka_roundrobin.jsonl",
            Assignor::LibrdkafkaRoundRobin,
        ),
    ] {
        for c in lines(&vectors().join("assignors").join(file)) {
            let names: Vec<String> = c["topics"].as_object().unwrap().keys().cloned().collect();
            let topics = c["topics"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(n, k)| Topic::new(n.clone(), k.as_u64().unwrap() as u32))
                .collect();
            let members: Vec<Member> = c["members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| Member::new(m["member_id"].as_str().unwrap(), names.iter().cloned()))
                .collect();
            let group = Group::new(members, topics);
            let got = by_id(&group, &assignor.assign(&group).unwrap());
            let want: BTreeMap<String, Vec<(String, u32)>> = c["members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    (
                        m["member_id"].as_str().unwrap().to_string(),
                        pairs(&m["assignment"]),
                    )
                })
                .collect();
            assert_eq!(got, want, "{assignor} {}", c["topics"]);
            seen += 1;
        }
    }
    assert_eq!(
        seen, 30,
        "real groups: 3 topic sets x 5 sizes x 2 strategies"
    );
}

fn homogeneous(members: usize, topics: &[(&str, u32)]) -> Group {
    let names: Vec<&str> = topics.iter().map(|t| t.0).collect();
    Group::new(
        (0..members)
            .map(|i| Member::new(format!("m{i:02}"), names.iter().copied()))
            .collect(),
        topics.iter().map(|&(n, k)| Topic::new(n, k)).collect(),
    )
}

#[test]
fn sticky_from_scratch_deals_like_roundrobin() {
    // With equal subscriptions and nothing owned, ConstrainedAssignmentBuilder
    // deals the name-sorted partitions over the id-sorted members in turn.
    for m in 1..7 {
        for topics in [&[("a", 6), ("b", 6)][..], &[("a", 5), ("b", 3), ("c", 7)]] {
            let g = homogeneous(m, topics);
            let rr = Assignor::JavaRoundRobin.assign(&g).unwrap();
            let st = Assignor::JavaSticky.assign(&g).unwrap();
            assert_eq!(rr.partitions, st.partitions, "m={m} {topics:?}");
        }
    }
}

#[test]
fn sticky_keeps_owned_and_cooperative_withholds_moves() {
    // Three members owned 4 partitions each; m02 leaves, a new m03 joins.
    let mut g = homogeneous(3, &[("a", 6), ("b", 6)]);
    let first = Assignor::JavaSticky.assign(&g).unwrap();
    for (m, list) in g.members.iter_mut().zip(&first.partitions) {
        m.owned = list.clone();
        m.generation = Some(1);
    }
    g.members.push(Member::new("m03", ["a", "b"]));
    let second = Assignor::JavaSticky.assign(&g).unwrap();
    let moved: usize = (0..3)
        .map(|m| {
            first.partitions[m]
                .iter()
                .filter(|tp| !second.partitions[m].contains(tp))
                .count()
        })
        .sum();
    assert_eq!(
        moved, 3,
        "12 partitions over 4 members: each old member gives one"
    );
    assert_eq!(second.partitions[3].len(), 3);
    let coop = Assignor::JavaCooperativeSticky.assign(&g).unwrap();
    assert_eq!(coop.withheld.len(), 3);
    assert!(coop.partitions[3].is_empty());
}

#[test]
fn uniform_splits_the_trivial_case() {
    // The reference harness: 2 topics x 4 partitions, 2 members: every index split.
    let g = homogeneous(2, &[("orders", 4), ("payments", 4)]);
    let a = Assignor::Kip848Uniform.assign(&g).unwrap();
    assert_eq!(colocation(&g, &a).split_count(), 4);
    assert!(a.partitions.iter().all(|l| l.len() == 4));
}

#[test]
fn specs_round_trip_and_aliases() {
    for a in Assignor::ALL {
        assert_eq!(a.spec().parse::<Assignor>().unwrap(), a);
    }
    assert!(matches!(
        "RangeAssignor".parse::<Assignor>(),
        Err(partwise::Error::Assign(
            partwise::assign::AssignError::UnknownAssignor { spec, known }
        )) if spec == "RangeAssignor" && known.split(", ").any(|k| k == "java:range")
    ));
    assert_eq!(
        "java:RangeAssignor".parse::<Assignor>().unwrap(),
        Assignor::JavaRange
    );
    assert_eq!(
        "java:CooperativeStickyAssignor"
            .parse::<Assignor>()
            .unwrap(),
        Assignor::JavaCooperativeSticky
    );
    assert_eq!(
        "kip848".parse::<Assignor>().unwrap(),
        Assignor::Kip848Uniform
    );
    assert_eq!(
        "librdkafka:round_robin".parse::<Assignor>().unwrap(),
        Assignor::LibrdkafkaRoundRobin
    );
    assert!("java:bogus".parse::<Assignor>().is_err());
}

// ---- the co-partitioned assignor ----

/// Random groups: topics with a few partition counts; members subscribing to
/// all topics (`equal`) or to random subsets.
fn arb_group(equal: bool) -> impl Strategy<Value = Group> {
    (
        prop::collection::vec(
            (prop::sample::select(vec![1u32, 2, 3, 4, 6, 8, 12]), 0u8..3),
            1..6,
        ),
        1usize..9,
        prop::collection::vec(prop::collection::vec(any::<bool>(), 6), 9),
    )
        .prop_map(move |(topics, members, subs)| {
            let topics: Vec<Topic> = topics
                .iter()
                .enumerate()
                .map(|(i, &(n, _))| Topic::new(format!("t{i}"), n))
                .collect();
            let members = (0..members)
                .map(|m| {
                    let names: Vec<String> = topics
                        .iter()
                        .enumerate()
                        .filter(|(t, _)| equal || subs[m][*t] || *t == m % topics.len())
                        .map(|(_, t)| t.name.clone())
                        .collect();
                    Member::new(format!("m{m:02}"), names)
                })
                .collect();
            Group::new(members, topics)
        })
}

fn check_invariants(g: &Group, a: &Assignment) {
    // Every subscribed partition exactly once, only to subscribers.
    let mut count: HashMap<Tp, usize> = HashMap::new();
    for (m, list) in a.partitions.iter().enumerate() {
        for tp in list {
            *count.entry(*tp).or_default() += 1;
            assert!(g.members[m]
                .topics
                .contains(&g.topics[tp.topic as usize].name));
        }
    }
    for (t, topic) in g.topics.iter().enumerate() {
        let subscribed = g.members.iter().any(|m| m.topics.contains(&topic.name));
        for p in 0..topic.partitions {
            let c = count
                .get(&Tp {
                    topic: t as u32,
                    partition: p,
                })
                .copied()
                .unwrap_or(0);
            assert_eq!(c, usize::from(subscribed), "{}-{p}", topic.name);
        }
    }
    // Never a split index within a co-partition group.
    for cg in copartition_groups(g) {
        assert_eq!(colocation_of(g, a, &cg).split_count(), 0, "group {cg:?}");
    }
}

fn units(g: &Group, a: &Assignment) -> Vec<usize> {
    let groups = copartition_groups(g);
    a.partitions
        .iter()
        .map(|list| {
            groups
                .iter()
                .map(|cg| list.iter().filter(|tp| tp.topic == cg[0]).count())
                .sum()
        })
        .collect()
}

/// One churn step: members leave (by position) and join (fresh ids).
#[derive(Clone, Debug)]
struct Churn {
    leave: Vec<usize>,
    join: usize,
}

fn arb_churn() -> impl Strategy<Value = Vec<Churn>> {
    prop::collection::vec(
        (prop::collection::vec(0usize..10, 0..3), 0usize..3)
            .prop_map(|(leave, join)| Churn { leave, join }),
        1..8,
    )
}

/// Runs `assignor` through the churn; returns total partitions moved.
fn run_churn(start: &Group, steps: &[Churn], assignor: Assignor, check: bool) -> usize {
    let mut g = start.clone();
    let mut prev = assignor.assign(&g).unwrap();
    let names: Vec<String> = g.topics.iter().map(|t| t.name.clone()).collect();
    let mut next_id = g.members.len();
    let mut moves = 0;
    for step in steps {
        let mut owner = prev.owner_map(&g);
        for (m, list) in g.members.iter_mut().zip(&prev.partitions) {
            m.owned = list.clone();
        }
        for &l in &step.leave {
            if g.members.len() > 1 {
                let i = l % g.members.len();
                g.members.remove(i);
            }
        }
        for _ in 0..step.join {
            g.members
                .push(Member::new(format!("m{next_id:02}"), names.iter().cloned()));
            next_id += 1;
        }
        let next = assignor.assign(&g).unwrap();
        moves += next.moves_from(&g, &owner);
        if check {
            check_invariants(&g, &next);
        }
        owner.clear();
        prev = next;
    }
    moves
}

proptest! {
    #[test]
    fn copartitioned_colocates_and_covers(g in arb_group(false)) {
        let a = Assignor::Copartitioned.assign(&g).unwrap();
        check_invariants(&g, &a);
        prop_assert_eq!(Assignor::Copartitioned.assign(&g).unwrap(), a);
    }

    #[test]
    fn copartitioned_balances_units(g in arb_group(true)) {
        let a = Assignor::Copartitioned.assign(&g).unwrap();
        check_invariants(&g, &a);
        let u = units(&g, &a);
        prop_assert!(u.iter().max().unwrap() - u.iter().min().unwrap() <= 1, "{:?}", u);
    }

    #[test]
    fn copartitioned_survives_churn(g in arb_group(true), steps in arb_churn()) {
        run_churn(&g, &steps, Assignor::Copartitioned, true);
    }
}

#[test]
fn copartitioned_moves_fewer_than_range_on_average() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut cp, mut range) = (0usize, 0usize);
    for _ in 0..200 {
        let g = arb_group(true).new_tree(&mut runner).unwrap().current();
        let steps = arb_churn().new_tree(&mut runner).unwrap().current();
        cp += run_churn(&g, &steps, Assignor::Copartitioned, false);
        range += run_churn(&g, &steps, Assignor::JavaRange, false);
    }
    // Not every sequence: range sometimes moves less by luck (one step of 1 vs 2).
    // Over 200 random sequences the co-partitioned assignor moves well under 2/3.
    assert!(
        cp * 3 < range * 2,
        "copartitioned moved {cp} partitions, range {range}"
    );
}

#[test]
fn copartitioned_leaver_moves_only_its_units() {
    let mut g = homogeneous(10, &[("a", 100), ("b", 100), ("c", 100)]);
    let first = Assignor::Copartitioned.assign(&g).unwrap();
    let owner = first.owner_map(&g);
    for (m, list) in g.members.iter_mut().zip(&first.partitions) {
        m.owned = list.clone();
    }
    let leaver = g.members.remove(4);
    let second = Assignor::Copartitioned.assign(&g).unwrap();
    let leaver_parts = owner.values().filter(|o| **o == leaver.id).count();
    assert_eq!(leaver_parts, 30);
    assert_eq!(second.moves_from(&g, &owner), leaver_parts);
}

#[test]
fn copartitioned_balances_weights() {
    // One hot partition index: weighted balancing gives its member less else.
    let mut g = homogeneous(3, &[("a", 6), ("b", 6)]);
    g.topics[0].weights = Some(vec![10, 1, 1, 1, 1, 1]);
    g.topics[1].weights = Some(vec![10, 1, 1, 1, 1, 1]);
    let a = Assignor::Copartitioned.assign(&g).unwrap();
    check_invariants(&g, &a);
    let loads: Vec<u64> = a
        .partitions
        .iter()
        .map(|l| {
            l.iter()
                .map(|tp| {
                    g.topics[tp.topic as usize].weights.as_ref().unwrap()[tp.partition as usize]
                })
                .sum()
        })
        .collect();
    // Units weigh 20, 2, 2, 2, 2, 2: the best split is 20 | 6 | 4.
    let mut sorted = loads.clone();
    sorted.sort();
    assert_eq!(sorted, vec![4, 6, 20], "{loads:?}");
}

// ---- librdkafka cooperative-sticky in a real group under churn ----

/// member id -> sorted assignment of one recorded snapshot.
fn snapshot_map(members: &Value) -> BTreeMap<String, Vec<(String, u32)>> {
    members
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["member_id"].as_str().unwrap().to_string(),
                pairs(&m["assignment"]),
            )
        })
        .collect()
}

/// Each recorded step's members, owning what they held when the previous step
/// settled (newcomers own nothing), go through the cooperative rounds: the
/// first withholds partitions whose owner changes, the next hands them out.
/// The last round must equal the settled assignment, and every member must
/// have been seen holding what the first round gave it.
#[test]
fn librdkafka_cooperative_sticky_matches_a_real_group_under_churn() {
    let cases = lines(&vectors().join("assignors/librdkafka_cooperative_sticky.jsonl"));
    let mut previous: HashMap<String, BTreeMap<String, Vec<(String, u32)>>> = HashMap::new();
    let (mut steps, mut withholding_steps) = (0, 0);
    for c in &cases {
        let scenario = c["scenario"].as_str().unwrap().to_string();
        let topics: Vec<Topic> = c["topics"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(n, k)| Topic::new(n.clone(), k.as_u64().unwrap() as u32))
            .collect();
        let names: Vec<String> = topics.iter().map(|t| t.name.clone()).collect();
        let before = previous.remove(&scenario).unwrap_or_default();
        let ids: Vec<String> = c["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["member_id"].as_str().unwrap().to_string())
            .collect();
        let mut group = Group::new(
            ids.iter()
                .map(|id| Member::new(id.clone(), names.iter().cloned()))
                .collect(),
            topics,
        );
        let own = |group: &mut Group, held: &BTreeMap<String, Vec<(String, u32)>>, gen: i32| {
            for i in 0..group.members.len() {
                let Some(list) = held.get(&group.members[i].id) else {
                    continue;
                };
                let owned: Vec<Tp> = list
                    .iter()
                    .map(|(t, p)| Tp {
                        topic: group.topic_index(t).unwrap(),
                        partition: *p,
                    })
                    .collect();
                group.members[i].owned = owned;
                group.members[i].generation = Some(gen);
            }
        };
        own(&mut group, &before, 1);
        let first = Assignor::LibrdkafkaCooperativeSticky
            .assign(&group)
            .unwrap();
        let mut last = first.clone();
        let mut rounds = 1;
        while !last.withheld.is_empty() {
            assert!(rounds < 3, "{scenario} {}: withholds forever", c["event"]);
            let held = by_id(&group, &last);
            own(&mut group, &held, 1 + rounds);
            last = Assignor::LibrdkafkaCooperativeSticky
                .assign(&group)
                .unwrap();
            rounds += 1;
        }
        let settled = snapshot_map(&c["members"]);
        assert_eq!(
            by_id(&group, &last),
            settled,
            "{scenario} step {} ({})",
            c["step"],
            c["event"]
        );
        if !first.withheld.is_empty() {
            // Members see their round-one assignment at different moments (a
            // slow member may still hold what another already gave up), so
            // each member's own view is checked, not whole snapshots.
            let observed: Vec<BTreeMap<String, Vec<(String, u32)>>> = c["observed"]
                .as_array()
                .unwrap()
                .iter()
                .map(snapshot_map)
                .collect();
            for (id, want) in by_id(&group, &first) {
                assert!(
                    observed.iter().any(|s| s.get(&id) == Some(&want)),
                    "{scenario} step {}: {id} never held its first-round {want:?}",
                    c["step"]
                );
            }
            withholding_steps += 1;
        }
        previous.insert(scenario, settled);
        steps += 1;
    }
    assert_eq!(
        steps, 9,
        "two churn scenarios: 4 and 3 joins, then 1 leave each"
    );
    assert!(
        withholding_steps >= 4,
        "joins that move owned partitions withhold them"
    );
}

// ---- upstream sticky-assignor test suites ----

/// A group from an upstream-test line: `topics` as `[name, partitions]`,
/// members with `id`, `topics` and optional `owned` (partitions of topics
/// the group no longer has are left out, as the assignors drop them).
fn upstream_group(c: &Value) -> Group {
    let topics: Vec<Topic> = c["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| Topic::new(t[0].as_str().unwrap(), t[1].as_u64().unwrap() as u32))
        .collect();
    let mut group = Group::new(Vec::new(), topics);
    for m in c["members"].as_array().unwrap() {
        let mut mem = Member::new(
            m["id"].as_str().unwrap(),
            m["topics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap()),
        );
        if let Some(owned) = m["owned"].as_array() {
            mem.owned = owned
                .iter()
                .filter_map(|p| {
                    Some(Tp {
                        topic: group.topic_index(p[0].as_str().unwrap())?,
                        partition: p[1].as_u64().unwrap() as u32,
                    })
                })
                .collect();
            mem.generation = m["generation"].as_i64().map(|g| g as i32).or(Some(1));
        }
        mem.instance_id = m["instance_id"].as_str().map(str::to_string);
        group.members.push(mem);
    }
    group
}

/// Validity: every partition of a subscribed topic has exactly one owner,
/// which subscribes to its topic.
fn assert_valid(g: &Group, a: &Assignment, what: &str) {
    let mut count: HashMap<(u32, u32), usize> = HashMap::new();
    for (m, list) in a.partitions.iter().enumerate() {
        for tp in list {
            let name = &g.topics[tp.topic as usize].name;
            assert!(
                g.members[m].topics.contains(name),
                "{what}: {} got {name}-{} without subscribing",
                g.members[m].id,
                tp.partition
            );
            *count.entry((tp.topic, tp.partition)).or_default() += 1;
        }
    }
    for (t, topic) in g.topics.iter().enumerate() {
        if !g.members.iter().any(|m| m.topics.contains(&topic.name)) {
            continue;
        }
        for p in 0..topic.partitions {
            assert_eq!(
                count.get(&(t as u32, p)).copied().unwrap_or(0),
                1,
                "{what}: {}-{p} not assigned exactly once",
                topic.name
            );
        }
    }
}

/// Balance as the upstream tests define it: when two members' counts differ
/// by more than one, the larger holds no partition the smaller could take.
fn assert_balanced(g: &Group, a: &Assignment, what: &str) {
    for i in 0..g.members.len() {
        for j in 0..g.members.len() {
            if a.partitions[i].len() <= a.partitions[j].len() + 1 {
                continue;
            }
            for tp in &a.partitions[i] {
                let name = &g.topics[tp.topic as usize].name;
                assert!(
                    !g.members[j].topics.contains(name),
                    "{what}: {name}-{} could move from {} ({}) to {} ({})",
                    tp.partition,
                    g.members[i].id,
                    a.partitions[i].len(),
                    g.members[j].id,
                    a.partitions[j].len()
                );
            }
        }
    }
}

/// No partition is given to two members (what the upstream tests check when
/// they do not check full validity).
fn assert_disjoint(a: &Assignment, what: &str) {
    let mut seen = std::collections::HashSet::new();
    for tp in a.partitions.iter().flatten() {
        assert!(seen.insert(*tp), "{what}: {tp:?} assigned twice");
    }
}

fn assert_fully_balanced(a: &Assignment, what: &str) {
    let min = a.partitions.iter().map(Vec::len).min().unwrap_or(0);
    let max = a.partitions.iter().map(Vec::len).max().unwrap_or(0);
    assert!(max <= min + 1, "{what}: sizes {min}..{max}");
}

/// Runs every line of an upstream sticky-test file: exact expectations where
/// the upstream test has them, its properties always. A step without `owned`
/// owns what the previous step of the same test gave it.
fn check_sticky_upstream(file: &str, run: impl Fn(&str, &Group) -> Assignment) -> usize {
    let mut checked = 0;
    let mut before: Option<(String, ById)> = None;
    for c in lines(&vectors().join("assignors").join(file)) {
        let test = c["source"]["test"].as_str().unwrap().to_string();
        let what = format!("{file} {test} step {}", c["source"]["step"]);
        let mut g = upstream_group(&c);
        if c["source"]["step"].as_u64().unwrap_or(1) > 1 {
            let (prev_test, held) = before.as_ref().expect("a previous step");
            assert_eq!(prev_test, &test, "{what}: steps out of order");
            for m in &mut g.members {
                if c["members"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x["id"] == m.id.as_str() && x.get("owned").is_some())
                {
                    continue;
                }
                if let Some(list) = held.get(&m.id) {
                    m.owned = list
                        .iter()
                        .filter_map(|(t, p)| {
                            Some(Tp {
                                topic: g.topics.iter().position(|x| &x.name == t)? as u32,
                                partition: *p,
                            })
                        })
                        .collect();
                    m.generation = Some(1);
                }
            }
        }
        let a = run(c["assignor"].as_str().unwrap(), &g);
        if let Some(want) = c["expected"].as_object() {
            let want: BTreeMap<String, Vec<(String, u32)>> =
                want.iter().map(|(k, v)| (k.clone(), pairs(v))).collect();
            assert_eq!(by_id(&g, &a), want, "{what}");
        }
        for p in c["properties"].as_array().into_iter().flatten() {
            match p.as_str().unwrap() {
                "valid" => assert_valid(&g, &a, &what),
                "balanced" => assert_balanced(&g, &a, &what),
                "fully_balanced" => assert_fully_balanced(&a, &what),
                "disjoint" => assert_disjoint(&a, &what),
                other => panic!("{what}: unknown property {other}"),
            }
        }
        if let Some(range) = c["size_range"].as_array() {
            let (lo, hi) = (range[0].as_u64().unwrap(), range[1].as_u64().unwrap());
            for (m, list) in a.partitions.iter().enumerate() {
                let n = list.len() as u64;
                assert!(
                    (lo..=hi).contains(&n),
                    "{what}: {} has {n} partitions, outside {lo}..={hi}",
                    g.members[m].id
                );
            }
        }
        // Lines of the eager assignor name what the cooperative one would withhold;
        // cooperative lines are checked here, eager ones by their own test.
        if c["assignor"] == "java:cooperative-sticky" {
            let withheld: Vec<(String, u32)> = a
                .withheld
                .iter()
                .map(|tp| (g.topics[tp.topic as usize].name.clone(), tp.partition))
                .collect();
            assert_eq!(withheld, pairs(&c["transferring"]), "{what}: withheld");
        }
        before = Some((test, by_id(&g, &a)));
        checked += 1;
    }
    checked
}

#[test]
fn librdkafka_sticky_matches_its_unit_tests() {
    let n = check_sticky_upstream("librdkafka_sticky_upstream.jsonl", |spec, g| {
        assert_eq!(spec, "librdkafka:sticky-unadjusted");
        partwise::assign::librdkafka_sticky_unadjusted(g).unwrap()
    });
    assert_eq!(n, 22);
}

/// Apache Kafka's `AbstractStickyAssignorTest` cases with equal
/// subscriptions (the constrained path): the eager assignor must give the
/// expected assignment, and the cooperative one must withhold exactly the
/// partitions the test expects in `partitionsTransferringOwnership`.
#[test]
fn java_sticky_matches_upstream_tests() {
    let n = check_sticky_upstream("java_sticky_upstream.jsonl", |spec, g| {
        spec.parse::<Assignor>().unwrap().assign(g).unwrap()
    });
    assert_eq!(n, 11);
    for c in lines(&vectors().join("assignors/java_sticky_upstream.jsonl")) {
        let g = upstream_group(&c);
        let eager = Assignor::JavaSticky.assign(&g).unwrap();
        let coop = Assignor::JavaCooperativeSticky.assign(&g).unwrap();
        let transferring = pairs(&c["transferring"]);
        let withheld: Vec<(String, u32)> = coop
            .withheld
            .iter()
            .map(|tp| (g.topics[tp.topic as usize].name.clone(), tp.partition))
            .collect();
        assert_eq!(withheld, transferring, "{}", c["source"]["test"]);
        // Apart from what it withholds, the cooperative assignor agrees with the eager one.
        let mut kept = by_id(&g, &eager);
        for list in kept.values_mut() {
            list.retain(|p| !transferring.contains(p));
        }
        assert_eq!(by_id(&g, &coop), kept, "{}", c["source"]["test"]);
    }
}

/// Apache Kafka's `AbstractStickyAssignorTest` cases with unequal
/// subscriptions (the general path): exact assignments where the test has
/// them, validity, balance and sizes otherwise, and what the cooperative
/// assignor withholds.
#[test]
fn java_sticky_general_matches_upstream_tests() {
    let n = check_sticky_upstream("java_sticky_general_upstream.jsonl", |spec, g| {
        spec.parse::<Assignor>().unwrap().assign(g).unwrap()
    });
    assert_eq!(n, 18);
}

/// Apache Kafka's `UniformHeterogeneousAssignmentBuilderTest`: every case
/// whose expected assignment the test states (`builder: heterogeneous` marks
/// the case the test runs through that builder with equal subscriptions).
#[test]
fn kip848_uniform_heterogeneous_matches_upstream_tests() {
    let mut checked = 0;
    for c in lines(&vectors().join("assignors/kip848_uniform_heterogeneous_upstream.jsonl")) {
        let what = c["source"]["test"].as_str().unwrap().to_string();
        let g = upstream_group(&c);
        let a = if c["builder"] == "heterogeneous" {
            partwise::assign::kip848_uniform_heterogeneous(&g).unwrap()
        } else {
            c["assignor"]
                .as_str()
                .unwrap()
                .parse::<Assignor>()
                .unwrap()
                .assign(&g)
                .unwrap()
        };
        let want: BTreeMap<String, Vec<(String, u32)>> = c["expected"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), pairs(v)))
            .collect();
        assert_eq!(by_id(&g, &a), want, "{what}");
        assert_valid(&g, &a, &what);
        checked += 1;
    }
    assert_eq!(checked, 9);
}

/// Random groups with unequal subscriptions, as in
/// `testReassignmentWithRandomSubscriptionsAndChanges`: topic `i` has `i + 1`
/// partitions, each member subscribes to a random non-empty subset.
fn arb_unequal_group() -> impl Strategy<Value = (Group, Vec<Vec<bool>>)> {
    (2usize..8, 2usize..12).prop_flat_map(|(topics, members)| {
        (
            prop::collection::vec(prop::collection::vec(any::<bool>(), topics), members),
            prop::collection::vec(prop::collection::vec(any::<bool>(), topics), members),
        )
            .prop_map(move |(first, second)| {
                let names: Vec<String> = (0..topics).map(|i| format!("t{i:02}")).collect();
                let pick = |row: &Vec<bool>| -> Vec<String> {
                    let mut v: Vec<String> = names
                        .iter()
                        .zip(row)
                        .filter(|(_, &b)| b)
                        .map(|(n, _)| n.clone())
                        .collect();
                    if v.is_empty() {
                        v.push(names[0].clone());
                    }
                    v
                };
                let group = Group::new(
                    first
                        .iter()
                        .enumerate()
                        .map(|(i, row)| Member::new(format!("c{i:02}"), pick(row)))
                        .collect(),
                    (0..topics)
                        .map(|i| Topic::new(names[i].clone(), i as u32 + 1))
                        .collect(),
                );
                (group, second)
            })
    })
}

proptest! {
    /// The upstream random test's assertions: valid and balanced from
    /// scratch and after every member changes its subscription while owning
    /// its previous assignment; the cooperative assignor withholds exactly
    /// the partitions that change owner.
    #[test]
    fn java_sticky_general_is_valid_and_balanced((g, second) in arb_unequal_group()) {
        let first = Assignor::JavaSticky.assign(&g).unwrap();
        assert_valid(&g, &first, "first");
        assert_balanced(&g, &first, "first");
        let mut g2 = g.clone();
        for (k, m) in g2.members.iter_mut().enumerate() {
            let names: Vec<String> = g.topics.iter().map(|t| t.name.clone()).collect();
            let mut topics: Vec<String> = names
                .iter()
                .zip(&second[k])
                .filter(|(_, &b)| b)
                .map(|(n, _)| n.clone())
                .collect();
            if topics.is_empty() {
                topics.push(names[0].clone());
            }
            m.topics = topics;
            m.owned = first.partitions[k].clone();
            m.generation = Some(1);
        }
        let again = Assignor::JavaSticky.assign(&g2).unwrap();
        assert_valid(&g2, &again, "second");
        assert_balanced(&g2, &again, "second");
        let coop = Assignor::JavaCooperativeSticky.assign(&g2).unwrap();
        for (k, list) in again.partitions.iter().enumerate() {
            for tp in list {
                let moving = !g2.members[k].owned.contains(tp)
                    && g2.members.iter().any(|m| m.owned.contains(tp));
                prop_assert_eq!(coop.withheld.contains(tp), moving);
                prop_assert_eq!(coop.partitions[k].contains(tp), !moving);
            }
        }
    }

    /// KIP-848 `uniform` with unequal subscriptions: every partition of a
    /// subscribed topic goes to exactly one subscriber, and the same input
    /// gives the same output.
    #[test]
    fn kip848_uniform_heterogeneous_is_valid((g, _) in arb_unequal_group()) {
        let a = Assignor::Kip848Uniform.assign(&g).unwrap();
        assert_valid(&g, &a, "uniform");
        prop_assert_eq!(Assignor::Kip848Uniform.assign(&g).unwrap(), a);
    }
}

// ---- real kafka-clients consumers in live groups ----

fn tps(group: &Group, v: &Value) -> Vec<Tp> {
    v.as_array()
        .unwrap()
        .iter()
        .filter_map(|p| {
            Some(Tp {
                topic: group.topic_index(p[0].as_str().unwrap())?,
                partition: p[1].as_u64().unwrap() as u32,
            })
        })
        .collect()
}

fn by_member(v: &Value) -> ById {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(id, a)| (id.clone(), pairs(a)))
        .collect()
}

/// Apache Kafka's own assignors (kafka-clients 4.1.1) in live classic groups
/// of real `KafkaConsumer`s on Apache Kafka 4.1.1
/// (`tests/vectors/regen/java/run assignors`): every assign() call of a group
/// leader through join/leave sequences, replayed with the members in the
/// leader's map order, their subscriptions and, for the sticky assignors, the
/// owned partitions and generation their subscription user data carried.
#[test]
fn java_assignors_match_live_groups() {
    let (mut calls, mut sticky_with_owned, mut withholding) = (0, 0, 0);
    for (file, assignor) in [
        ("java_live_range.jsonl", Assignor::JavaRange),
        ("java_live_roundrobin.jsonl", Assignor::JavaRoundRobin),
        ("java_live_sticky.jsonl", Assignor::JavaSticky),
        (
            "java_live_cooperative_sticky.jsonl",
            Assignor::JavaCooperativeSticky,
        ),
    ] {
        let cases = lines(&vectors().join("assignors").join(file));
        assert!(cases.len() >= 13, "{file}: {} calls", cases.len());
        for c in &cases {
            assert_eq!(c["assignor"], assignor.spec(), "{file}");
            let what = format!(
                "{file}: {} event {} ({}) call {}",
                c["scenario"], c["event"], c["what"], c["call"]
            );
            let topics = c["topics"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(n, k)| Topic::new(n.clone(), k.as_u64().unwrap() as u32))
                .collect();
            let mut group = Group::new(Vec::new(), topics);
            let mut owned_any = false;
            for m in c["members"].as_array().unwrap() {
                let mut mem = Member::new(
                    m["member_id"].as_str().unwrap(),
                    m["topics"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| t.as_str().unwrap()),
                );
                mem.instance_id = m["instance_id"].as_str().map(str::to_string);
                // What the assignor reads as owned: the sticky ones their user
                // data (the eager protocol sends no owned partitions), the
                // others the subscription's.
                let (owned, generation) = match m.get("member_data") {
                    Some(d) => (&d["partitions"], &d["generation"]),
                    None => (&m["owned_partitions"], &m["subscription_generation"]),
                };
                mem.owned = tps(&group, owned);
                mem.generation = generation.as_i64().map(|g| g as i32);
                owned_any |= !mem.owned.is_empty();
                group.members.push(mem);
            }
            let got = assignor.assign(&group).unwrap();
            let want = by_member(&c["assignment"]);
            assert_eq!(by_id(&group, &got), want, "{what}");
            assert!(c["generation"].is_i64(), "{what}: no member received it");
            if c["settled"] == true {
                assert_eq!(by_member(&c["consumers"]), want, "{what}: consumers saw");
            } else {
                assert!(
                    !got.withheld.is_empty(),
                    "{what}: a round before the last withholds"
                );
            }
            if assignor.is_sticky() && owned_any {
                sticky_with_owned += 1;
            }
            if !got.withheld.is_empty() {
                withholding += 1;
            }
            calls += 1;
        }
    }
    assert!(calls >= 52, "{calls} leader calls");
    assert!(
        sticky_with_owned >= 10,
        "sticky calls that keep owned partitions: {sticky_with_owned}"
    );
    assert!(
        withholding >= 3,
        "cooperative rounds that withhold: {withholding}"
    );
}

/// kafka-clients 4.4.0's own Range, RoundRobin, Sticky and CooperativeSticky
/// assignors called on groups with unequal subscriptions, claims from mixed
/// generations, static members and claims past a topic's count
/// (`tests/vectors/regen/java-groups/run`): each line's group, read as a
/// group file (`assign --group`), gives the jar's assignment exactly, or
/// the exception it threw, and a finding says what the Java leader does
/// wrong with stale claims.
#[test]
fn java_group_cases_match_kafka_clients_4_4_0() {
    use partwise::assign::{group_file, AssignError};
    use partwise::findings::{leader_findings, LeaderFinding};
    let cases = lines(&vectors().join("assignors/java_group_cases.jsonl"));
    let mut bad = Vec::new();
    let (mut threw, mut missing, mut unequal_or_mixed) = (0, 0, 0);
    for c in &cases {
        assert_eq!(c["kafka_clients"], "4.4.0");
        let assignor: Assignor = c["assignor"].as_str().unwrap().parse().unwrap();
        let what = format!("{} {} ({})", c["case"], assignor, c["kind"]);
        let file = group_file::parse(&c["group"].to_string()).unwrap();
        let group = &file.group;
        if c["kind"] != "stale-claims" {
            unequal_or_mixed += 1;
        }
        let got = assignor.assign(group);
        let result = got.as_ref().map_err(|e| e.assign().unwrap());
        let findings = leader_findings(assignor, group, result);
        match (&got, c["error"].is_null()) {
            (Ok(a), true) => {
                let want = by_member(&c["assignment"]);
                if by_id(group, a) != want {
                    bad.push(format!("{what}: got {:?}, want {want:?}", by_id(group, a)));
                }
                let holes = want
                    .values()
                    .flatten()
                    .filter(|(t, p)| {
                        *p >= group.topics[group.topic_index(t).unwrap() as usize].partitions
                    })
                    .count();
                let said = findings
                    .iter()
                    .filter(|f| matches!(f, LeaderFinding::MissingPartition { .. }))
                    .count();
                if holes != said {
                    bad.push(format!(
                        "{what}: {holes} missing partitions, {said} findings"
                    ));
                }
                missing += holes;
            }
            (Err(e), false) => match e.assign() {
                Some(AssignError::LeaderThrows {
                    exception, message, ..
                }) if *exception == c["error"]["class"] && *message == c["error"]["message"] => {
                    threw += 1;
                    assert_eq!(findings.len(), 1, "{what}");
                    assert_eq!(findings[0].kind(), "java-leader-throws");
                }
                _ => bad.push(format!("{what}: got {e}, want {}", c["error"])),
            },
            (Ok(_), false) => bad.push(format!("{what}: no exception, want {}", c["error"])),
            (Err(e), true) => bad.push(format!("{what}: {e}")),
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} differ:\n{}",
        bad.len(),
        cases.len(),
        bad.join("\n")
    );
    assert_eq!(cases.len(), 244);
    assert!(
        threw >= 5 && missing >= 10,
        "{threw} threw, {missing} missing"
    );
    assert!(unequal_or_mixed >= 160);
}

/// Claims past a topic's count reach only Java's sticky assignors, whose real
/// code keeps them: every other assignor, partwise's `copartitioned` (the
/// runtime's leader) among them, assigns only partitions that exist, each
/// once, whatever the members claim.
#[test]
fn only_java_sticky_keeps_claims_past_a_count() {
    let mut group = Group::new(
        (0..3)
            .map(|i| Member::new(format!("c{i}"), ["a", "b"]))
            .collect(),
        vec![Topic::new("a", 4), Topic::new("b", 4)],
    );
    for (i, m) in group.members.iter_mut().enumerate() {
        m.generation = Some(5);
        for p in [i as u32, i as u32 + 3, i as u32 + 6] {
            m.owned.push(Tp {
                topic: 0,
                partition: p,
            });
            m.owned.push(Tp {
                topic: 1,
                partition: p,
            });
        }
    }
    assert!(group.has_stale_claims());
    for a in Assignor::ALL {
        let java_sticky = matches!(a, Assignor::JavaSticky | Assignor::JavaCooperativeSticky);
        match a.assign(&group) {
            Ok(got) => {
                let all: Vec<Tp> = got.partitions.iter().flatten().copied().collect();
                let stale = all.iter().any(|tp| tp.partition >= 4);
                let unique: std::collections::HashSet<Tp> = all.iter().copied().collect();
                if !java_sticky {
                    assert!(!stale, "{a}: {all:?}");
                    assert_eq!(unique.len(), all.len(), "{a}: a partition given twice");
                    assert_eq!(unique.len() + got.withheld.len(), 8, "{a}");
                }
            }
            Err(e) => assert!(java_sticky, "{a}: {e}"),
        }
    }
}
