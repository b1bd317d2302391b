//! A split's fixes, in the client's words: the assignors and member
//! counts that would keep the units whole, and making a group's partition
//! counts equal when they differ.

use super::*;

pub(super) fn fix(
    cg: &ConsumerGroup,
    v: &PlacementVerdict,
    declared_at: &[usize],
    indices: u32,
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
            realign: None,
        };
    }
    // An assignor is named only when it ran, and split nothing, at every
    // declared count.
    let assignors: Vec<Assignor> = v
        .sweep
        .iter()
        .filter(|s| {
            declared_at
                .iter()
                .all(|&i| s.counts[i].as_ref().is_some_and(CountResult::ok))
        })
        .map(|s| s.assignor)
        .collect();
    let mine = v.sweep.iter().find(|s| s.assignor == v.assignor);
    let member_counts: Vec<u32> = (1..=indices.clamp(1, MAX_FIX_MEMBERS))
        .filter(|&k| {
            mine.and_then(|s| s.counts[k as usize - 1].as_ref())
                .is_some_and(CountResult::ok)
        })
        .collect();
    fix_of(v.assignor, assignors, member_counts)
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
    // Counts that differ: no assignor keeps the join, whatever it does.
    if let Some(g) = groups.first() {
        let counts: Vec<(String, u32)> = unit_topics
            .iter()
            .filter_map(|&i| g.topics.get(i as usize))
            .map(|x| (x.name.clone(), x.partitions))
            .collect();
        if let Some(r) = realign_counts("the assigned topics", &counts) {
            return realign_fix(r);
        }
    }
    let assignors: Vec<Assignor> = assignor
        .alternatives()
        .into_iter()
        .filter(|a| {
            groups
                .iter()
                .all(|grp| simulate(grp, *a, unit_topics, indices).ok())
        })
        .collect();
    let member_counts: Vec<u32> = (1..=indices.clamp(1, MAX_FIX_MEMBERS))
        .filter(|&k| simulate(&make(k), assignor, unit_topics, indices).ok())
        .collect();
    fix_of(assignor, assignors, member_counts)
}

pub(super) fn realign_fix(r: Realign) -> PlacementFix {
    PlacementFix {
        assignors: Vec::new(),
        member_counts: Vec::new(),
        advice: r.why(),
        realign: Some(r),
    }
}

impl PlacementFix {
    /// Every line of the fix: the advice, then each procedure when the
    /// counts differ.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![self.advice.clone()];
        if let Some(r) = &self.realign {
            out.extend(Procedure::ALL.iter().map(|&p| r.procedure(p)));
        }
        out
    }
}

pub(crate) fn fix_of(
    assignor: Assignor,
    assignors: Vec<Assignor>,
    member_counts: Vec<u32>,
) -> PlacementFix {
    // No member count keeps the units whole: say nothing of running more
    // or fewer members rather than offer an empty list.
    let or_run = match list(&member_counts) {
        Some(counts) => format!(", or run {counts} members"),
        None => String::new(),
    };
    let holds = |spec: &str| assignors.iter().any(|a| a.spec() == spec);
    let advice = match assignor.spec().split(':').next().unwrap_or_default() {
        "kafkajs" => format!(
            "KafkaJS has only its round-robin assigner built in: give the consumer a custom assigner that keeps partition p of every topic together (partwise's copartitioned){or_run}"
        ),
        "java" if holds("java:range") => format!(
            "set partition.assignment.strategy=org.apache.kafka.clients.consumer.RangeAssignor (equal subscriptions and partition counts keep units whole){or_run}"
        ),
        "librdkafka" if holds("librdkafka:range") => {
            format!("set partition.assignment.strategy=range{or_run}")
        }
        "kip848" if holds("kip848:range") => {
            format!("set group.remote.assignor=range on the consumers{or_run}")
        }
        // Go, Python and Node consumers are told their own setting, never
        // Java's class name.
        prefix if crate::group::clients::Client::of_spec(prefix).is_some() && holds(&format!("{prefix}:range")) => {
            let c = crate::group::clients::Client::of_spec(prefix).expect("matched above");
            format!("use {}{or_run}", c.facts().keep_units)
        }
        _ => match list_specs(&assignors) {
            Some(specs) => format!("use an assignor that keeps units whole ({specs}){or_run}"),
            None if or_run.is_empty() => format!(
                "no assignor partwise knows was seen to keep every unit whole at the declared member counts, and no member count keeps them whole under {}: give every member the same subscriptions, or a custom assignor that keeps partition p of every co-partitioned topic in one member",
                assignor.spec()
            ),
            None => format!(
                "no assignor partwise knows was seen to keep every unit whole at the declared member counts: run {} members",
                list(&member_counts).unwrap_or_default()
            ),
        },
    };
    PlacementFix {
        assignors,
        member_counts,
        advice,
        realign: None,
    }
}

/// `1, 2, 3 or 6`; `None` for no counts.
fn list(counts: &[u32]) -> Option<String> {
    let s: Vec<String> = counts.iter().map(u32::to_string).collect();
    match s.split_last() {
        None => None,
        Some((last, [])) => Some(last.clone()),
        Some((last, rest)) => Some(format!("{} or {last}", rest.join(", "))),
    }
}

/// `copartitioned, java:range`; `None` for no assignors.
fn list_specs(assignors: &[Assignor]) -> Option<String> {
    (!assignors.is_empty()).then(|| {
        assignors
            .iter()
            // A Python team is told its own consumer option, not a spec.
            .map(|a| a.python_setting().unwrap_or(a.spec()))
            .collect::<Vec<_>>()
            .join(", ")
    })
}
