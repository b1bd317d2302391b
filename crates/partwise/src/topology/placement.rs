//! Placement: whether a declared consumer group keeps the units of its
//! co-partition groups whole.
//!
//! Layout is not placement. Two topics can be co-partitioned and a join still
//! fail, because the group's assignor gives partition `p` of one topic to one
//! member and partition `p` of the other to another. This module owns that
//! check: it runs a topology's `[[consumer_group]]` assignor over its members
//! and subscriptions (the declared count, or every count of a range) and
//! reports, for each co-partition group the consumer group reads, the member
//! counts that split a partition index, with the fix: the assignors and the
//! member counts that would not split, and what to set in that client.
//!
//! ```
//! use partwise::placement::placements;
//! use partwise::topology::Topology;
//!
//! let t = Topology::parse(r#"
//! [[topic]]
//! name = "market-updates"
//! partitions = 6
//! [[topic]]
//! name = "notifications"
//! partitions = 6
//! [[copartition]]
//! name = "ticker"
//! topics = ["market-updates", "notifications"]
//! [[consumer_group]]
//! name = "joiner"
//! assignor = "kafkajs:roundrobin"
//! members = 4
//! subscriptions = ["market-updates", "notifications"]
//! "#).unwrap();
//! let v = &placements(&t)[0];
//! assert_eq!(v.splitting_counts(), vec![4]);
//! let fix = v.fix.as_ref().unwrap();
//! assert!(fix.assignors.iter().any(|a| a.spec() == "copartitioned"));
//! assert!(fix.member_counts.contains(&3));
//! ```

use super::{ConsumerGroup, CopartitionGroup, Members, Topology};
use crate::assign::{colocation_of, member_names, Assignor, Group, Member, Topic};

/// The largest member count the fix searches: beyond the largest partition
/// count, more members only idle.
const MAX_FIX_MEMBERS: u32 = 64;

/// One member count of a consumer group, under its assignor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountResult {
    /// The member count.
    pub members: u32,
    /// The partition indices whose topics are not all owned by one member.
    pub split: Vec<u32>,
    /// The partition indices the co-partition group has (its largest count).
    pub indices: u32,
    /// Why the assignor could not run, if it could not.
    pub error: Option<String>,
}

impl CountResult {
    /// Whether every unit stays whole at this count.
    pub fn ok(&self) -> bool {
        self.split.is_empty() && self.error.is_none()
    }
}

/// What would keep the units whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementFix {
    /// Assignors that split no index at any of the checked member counts.
    pub assignors: Vec<Assignor>,
    /// Member counts (up to the largest partition count) at which the
    /// declared assignor splits nothing.
    pub member_counts: Vec<u32>,
    /// The change to make, in the client's own terms.
    pub advice: String,
}

/// The placement verdict of one consumer group on one co-partition group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementVerdict {
    /// The consumer group.
    pub consumer_group: String,
    /// Its assignor.
    pub assignor: Assignor,
    /// The co-partition group.
    pub copartition: String,
    /// The co-partition group's topics.
    pub topics: Vec<String>,
    /// Topics of the co-partition group that the consumer group does not
    /// subscribe to: their partitions are never in its members' hands.
    pub unsubscribed: Vec<String>,
    /// One result per checked member count, ascending.
    pub counts: Vec<CountResult>,
    /// The fix, when something splits.
    pub fix: Option<PlacementFix>,
}

impl PlacementVerdict {
    /// Whether every checked count keeps every unit whole.
    pub fn ok(&self) -> bool {
        self.unsubscribed.is_empty() && self.counts.iter().all(CountResult::ok)
    }

    /// The member counts that split some index.
    pub fn splitting_counts(&self) -> Vec<u32> {
        self.counts
            .iter()
            .filter(|c| !c.ok())
            .map(|c| c.members)
            .collect()
    }

    /// A stable identifier of the finding: `unsubscribed_topics` or `units_split`.
    pub fn kind(&self) -> Option<&'static str> {
        if !self.unsubscribed.is_empty() {
            Some("unsubscribed_topics")
        } else if !self.ok() {
            Some("units_split")
        } else {
            None
        }
    }
}

/// Placement verdicts of every consumer group of `t` on every co-partition
/// group it reads (subscribes to at least one of its topics), in file order.
pub fn placements(t: &Topology) -> Vec<PlacementVerdict> {
    let mut out = Vec::new();
    for cg in &t.consumer_groups {
        // Validation parsed the spec; a file built by hand may still hold junk.
        let Ok(assignor) = cg.assignor.parse::<Assignor>() else {
            continue;
        };
        for g in &t.copartition_groups {
            if g.topics.iter().any(|x| cg.subscriptions.contains(x)) {
                out.push(verdict(t, cg, assignor, g));
            }
        }
    }
    out
}

/// The member id lists to check: the declared ones, or every count of a range.
pub fn member_sets(m: &Members) -> Vec<Vec<String>> {
    match m {
        Members::Count(n) => vec![member_names(*n as usize)],
        Members::Ids(ids) => vec![ids.clone()],
        Members::Range(lo, hi) => (*lo..=*hi).map(|k| member_names(k as usize)).collect(),
    }
}

/// The group the assignor simulations run for `cg` with members `ids`: its
/// subscribed topics (declared ones only) and every member subscribing to all.
pub fn group_of(t: &Topology, cg: &ConsumerGroup, ids: &[String]) -> Group {
    let topics = cg
        .subscriptions
        .iter()
        .filter_map(|n| t.topic(n))
        .map(|x| Topic::new(x.name.clone(), x.partitions.get()))
        .collect();
    let members = ids
        .iter()
        .map(|id| Member::new(id.clone(), cg.subscriptions.iter().cloned()))
        .collect();
    Group::new(members, topics)
}

/// The topics of `group` (indices into its topics) that belong to the
/// co-partition group `g`, and the partition indices `g` has (its largest count).
pub fn unit_topics(group: &Group, g: &CopartitionGroup) -> (Vec<u32>, u32) {
    // Validation guarantees subscriptions name declared topics.
    let unit_topics: Vec<u32> = group
        .topics
        .iter()
        .enumerate()
        .filter(|(_, x)| g.topics.contains(&x.name))
        .map(|(i, _)| i as u32)
        .collect();
    let indices = unit_topics
        .iter()
        .map(|&i| group.topics[i as usize].partitions)
        .max()
        .unwrap_or(0);
    (unit_topics, indices)
}

/// One assignor's results over a range of member counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sweep {
    /// The assignor.
    pub assignor: Assignor,
    /// One result per member count, in the order asked.
    pub counts: Vec<CountResult>,
}

/// The split sweep of consumer group `cg` on co-partition group `g`: for
/// every assignor, what each of `members` (anonymous member counts) splits,
/// so the report can show which assignor and count keep units whole.
pub fn sweep(
    t: &Topology,
    cg: &ConsumerGroup,
    g: &CopartitionGroup,
    members: &[u32],
) -> Vec<Sweep> {
    let groups: Vec<Group> = members
        .iter()
        .map(|&k| group_of(t, cg, &member_names(k as usize)))
        .collect();
    let Some(first) = groups.first() else {
        return Vec::new();
    };
    let (unit_topics, indices) = unit_topics(first, g);
    Assignor::ALL
        .into_iter()
        .map(|assignor| Sweep {
            assignor,
            counts: groups
                .iter()
                .map(|grp| run(grp, assignor, &unit_topics, indices))
                .collect(),
        })
        .collect()
}

fn run(group: &Group, assignor: Assignor, unit_topics: &[u32], indices: u32) -> CountResult {
    let members = group.members.len() as u32;
    match assignor.assign(group) {
        Ok(a) => CountResult {
            members,
            split: colocation_of(group, &a, unit_topics).split,
            indices,
            error: None,
        },
        Err(e) => CountResult {
            members,
            split: Vec::new(),
            indices,
            error: Some(e.to_string()),
        },
    }
}

fn verdict(
    t: &Topology,
    cg: &ConsumerGroup,
    assignor: Assignor,
    g: &CopartitionGroup,
) -> PlacementVerdict {
    let unsubscribed: Vec<String> = g
        .topics
        .iter()
        .filter(|x| !cg.subscriptions.contains(x))
        .cloned()
        .collect();
    let sets = member_sets(&cg.members);
    let groups: Vec<Group> = sets.iter().map(|ids| group_of(t, cg, ids)).collect();
    let (unit_topics, indices) = unit_topics(&groups[0], g);
    let counts: Vec<CountResult> = groups
        .iter()
        .map(|grp| run(grp, assignor, &unit_topics, indices))
        .collect();
    let mut v = PlacementVerdict {
        consumer_group: cg.name.clone(),
        assignor,
        copartition: g.name.clone(),
        topics: g.topics.clone(),
        unsubscribed,
        counts,
        fix: None,
    };
    if !v.ok() {
        v.fix = Some(fix(t, cg, assignor, &groups, &unit_topics, indices, &v));
    }
    v
}

fn fix(
    t: &Topology,
    cg: &ConsumerGroup,
    assignor: Assignor,
    groups: &[Group],
    unit_topics: &[u32],
    indices: u32,
    v: &PlacementVerdict,
) -> PlacementFix {
    if !v.unsubscribed.is_empty() {
        return PlacementFix {
            assignors: Vec::new(),
            member_counts: Vec::new(),
            advice: format!(
                "subscribe consumer group {} to {} as well: a local join needs partition p of every topic of {} in one member",
                cg.name,
                v.unsubscribed.join(", "),
                v.copartition
            ),
        };
    }
    let make = |k: u32| group_of(t, cg, &member_names(k as usize));
    units_fix(assignor, groups, &make, unit_topics, indices)
}

/// What keeps the units of `unit_topics` (indices into the groups' topics)
/// whole when `assignor` splits them in some of `groups`: the assignors that
/// split none of them, the member counts (`make(k)`: the group with `k`
/// members) at which `assignor` splits nothing, and the advice in its
/// client's terms.
pub fn units_fix(
    assignor: Assignor,
    groups: &[Group],
    make: &dyn Fn(u32) -> Group,
    unit_topics: &[u32],
    indices: u32,
) -> PlacementFix {
    let assignors: Vec<Assignor> = Assignor::ALL
        .into_iter()
        .filter(|a| {
            groups
                .iter()
                .all(|grp| run(grp, *a, unit_topics, indices).ok())
        })
        .collect();
    let member_counts: Vec<u32> = (1..=indices.clamp(1, MAX_FIX_MEMBERS))
        .filter(|&k| run(&make(k), assignor, unit_topics, indices).ok())
        .collect();
    let counts = list(&member_counts);
    let holds = |spec: &str| assignors.iter().any(|a| a.spec() == spec);
    let advice = match assignor.spec().split(':').next().unwrap_or_default() {
        "kafkajs" => format!(
            "KafkaJS has only its round-robin assigner built in: give the consumer a custom assigner that keeps partition p of every topic together (partwise's copartitioned), or run {counts} members"
        ),
        "java" if holds("java:range") => format!(
            "set partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor (equal subscriptions and partition counts keep units whole), or run {counts} members"
        ),
        "librdkafka" if holds("librdkafka:range") => format!(
            "set partition.assignment.strategy=range, or run {counts} members"
        ),
        "kip848" if holds("kip848:range") => format!(
            "set group.remote.assignor=range on the consumers, or run {counts} members"
        ),
        _ => format!(
            "use an assignor that keeps units whole ({}), or run {counts} members",
            assignors
                .iter()
                .map(|a| a.spec())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    PlacementFix {
        assignors,
        member_counts,
        advice,
    }
}

/// `1, 2, 3 or 6`.
fn list(counts: &[u32]) -> String {
    let s: Vec<String> = counts.iter().map(u32::to_string).collect();
    match s.split_last() {
        None => "no number of".into(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topology(assignor: &str, members: &str, subs: &str) -> Topology {
        Topology::parse(&format!(
            r#"
[[topic]]
name = "a"
partitions = 6
[[topic]]
name = "b"
partitions = 6
[[topic]]
name = "c"
partitions = 4
[[copartition]]
name = "ab"
topics = ["a", "b"]
[[consumer_group]]
name = "g"
assignor = "{assignor}"
members = {members}
subscriptions = {subs}
"#
        ))
        .unwrap()
    }

    #[test]
    fn kafkajs_round_robin_splits_at_counts_that_do_not_divide_the_partitions() {
        let t = topology("kafkajs:roundrobin", "\"1..6\"", r#"["a", "b"]"#);
        let v = placements(&t);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].splitting_counts(), vec![4, 5]);
        assert_eq!(v[0].kind(), Some("units_split"));
        let fix = v[0].fix.as_ref().unwrap();
        assert_eq!(fix.member_counts, vec![1, 2, 3, 6]);
        let specs: Vec<&str> = fix.assignors.iter().map(|a| a.spec()).collect();
        assert!(specs.contains(&"copartitioned") && specs.contains(&"java:range"));
        assert!(!specs.contains(&"kafkajs:roundrobin"));
        assert!(fix.advice.contains("custom assigner"), "{}", fix.advice);
        assert!(fix.advice.contains("1, 2, 3 or 6"), "{}", fix.advice);
    }

    #[test]
    fn range_and_copartitioned_hold_at_every_count() {
        for a in ["java:range", "copartitioned", "librdkafka:range"] {
            let t = topology(a, "\"1..9\"", r#"["a", "b"]"#);
            let v = placements(&t);
            assert!(v[0].ok(), "{a}: {:?}", v[0].splitting_counts());
            assert_eq!(v[0].counts.len(), 9);
            assert!(v[0].fix.is_none());
        }
    }

    #[test]
    fn another_subscribed_topic_can_make_range_hold_and_roundrobin_split() {
        // With c in the subscription, Java round-robin deals c's partitions
        // in between and splits a/b units even at 2 members.
        let t = topology("java:roundrobin", "[\"x\", \"y\"]", r#"["a", "b", "c"]"#);
        let v = placements(&t);
        assert_eq!(v[0].counts[0].members, 2);
        let rr_split = !v[0].ok();
        let t = topology("java:range", "[\"x\", \"y\"]", r#"["a", "b", "c"]"#);
        assert!(placements(&t)[0].ok());
        // Whatever round-robin does here, the verdict agrees with `assign`.
        let g = group_of(&t, &t.consumer_groups[0], &["x".into(), "y".into()]);
        let a = Assignor::JavaRoundRobin.assign(&g).unwrap();
        assert_eq!(colocation_of(&g, &a, &[0, 1]).split_count() > 0, rr_split);
    }

    #[test]
    fn a_topic_of_the_unit_left_out_of_the_subscription_is_named() {
        let t = topology("copartitioned", "3", r#"["a"]"#);
        let v = placements(&t);
        assert_eq!(v[0].unsubscribed, vec!["b".to_string()]);
        assert_eq!(v[0].kind(), Some("unsubscribed_topics"));
        assert!(v[0].fix.as_ref().unwrap().advice.contains("subscribe"));
    }

    #[test]
    fn a_group_that_reads_none_of_the_topics_is_not_judged() {
        let t = topology("copartitioned", "3", r#"["c"]"#);
        assert!(placements(&t).is_empty());
    }
}
