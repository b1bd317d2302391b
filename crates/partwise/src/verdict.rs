//! The verdict of a topology file over its sample keys (what `partwise
//! report` shows first): one line per co-partition group, consumer group
//! placement, Redis family and weighed topic, each holding or not, in one
//! sentence, with its fixes. The page and its JSON twin render these lines;
//! the words are decided here, once.

use crate::group::placement::PlacementVerdict;
use crate::topology::{FamilyVerdict, GroupVerdict, Topology};
use crate::traffic::{Report, Tally};

/// What a line of the verdict is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Area {
    /// A co-partition group's layout.
    Layout,
    /// A consumer group's placement of the units.
    Placement,
    /// A Redis key family.
    Redis,
    /// A topic's load over its partitions.
    Skew,
    /// The live cluster against the declaration.
    Live,
}

impl Area {
    /// Its stable name (`layout`, `placement`, `redis`, `skew`, `live`).
    pub fn name(self) -> &'static str {
        match self {
            Area::Layout => "layout",
            Area::Placement => "placement",
            Area::Redis => "redis",
            Area::Skew => "skew",
            Area::Live => "live",
        }
    }
}

/// One line of the verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// What it is about.
    pub area: Area,
    /// Whether it holds.
    pub ok: bool,
    /// What holds or breaks, in one sentence.
    pub text: String,
    /// What to do, when it breaks.
    pub fixes: Vec<String>,
}

/// A co-partition group: co-partitioned, or not and why.
pub fn layout(g: &GroupVerdict) -> Line {
    let text = if g.ok() {
        format!(
            "co-partition group {} ({}) is co-partitioned",
            g.name,
            g.topics.join(", ")
        )
    } else {
        format!(
            "co-partition group {} ({}) is NOT co-partitioned: {}",
            g.name,
            g.topics.join(", "),
            g.reasons
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        )
    };
    Line {
        area: Area::Layout,
        ok: g.ok(),
        text,
        fixes: g.reasons.iter().map(|r| r.fix().to_string()).collect(),
    }
}

/// A consumer group's placement: units whole, or how they split.
pub fn placement(v: &PlacementVerdict) -> Line {
    let text = if v.ok() {
        format!(
            "consumer group {} ({}) keeps the units of {} whole",
            v.consumer_group, v.assignor, v.copartition
        )
    } else if v.kind() == Some("placement-unchecked") {
        format!(
            "consumer group {} ({}) on {}: not every declared member count was checked ({})",
            v.consumer_group,
            v.assignor,
            v.copartition,
            v.cut.as_ref().map(|c| c.note()).unwrap_or_default()
        )
    } else if let Some(r) = v.realign() {
        let counts: Vec<String> = r.counts.iter().map(|(t, n)| format!("{t} {n}")).collect();
        format!(
            "consumer group {} ({}) on {}: the partition counts differ ({}), so no assignor keeps the join across members",
            v.consumer_group,
            v.assignor,
            v.copartition,
            counts.join(", ")
        )
    } else if !v.unsubscribed.is_empty() {
        format!(
            "consumer group {} does not subscribe to {}: placement of {} is split",
            v.consumer_group,
            v.unsubscribed.join(", "),
            v.copartition
        )
    } else {
        format!(
            "consumer group {} ({}) SPLITS the units of {} at {} members",
            v.consumer_group,
            v.assignor,
            v.copartition,
            v.splitting_counts()
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Line {
        area: Area::Placement,
        ok: v.ok(),
        text,
        fixes: v.fix.iter().flat_map(|f| f.lines()).collect(),
    }
}

/// A Redis family: co-located, or not and why.
pub fn family(f: &FamilyVerdict) -> Line {
    let text = if f.ok() {
        format!(
            "redis family {} ({}) is co-located",
            f.name,
            f.patterns.join(", ")
        )
    } else {
        format!(
            "redis family {} ({}) is NOT co-located: {}",
            f.name,
            f.patterns.join(", "),
            f.reasons
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        )
    };
    Line {
        area: Area::Redis,
        ok: f.ok(),
        text,
        fixes: f.reasons.iter().map(|r| r.fix().to_string()).collect(),
    }
}

/// A weighed topic's load: no hot partition, or which are hot. When one
/// is, the first fix is `heavy_fix` of the heaviest key and its share of
/// the load in percent (the caller words the key as it prints keys: see
/// [`salt_fix`]), then the partition count's.
pub fn skew(
    topic: &str,
    tally: &Tally,
    report: &Report,
    heavy_fix: impl FnOnce(&[u8], f64) -> String,
) -> Line {
    let stats = &report.stats;
    let ok = stats.hot_partitions.is_empty();
    let text = if ok {
        format!(
            "topic {topic}: no hot partition over the records of the {} keys counted (max/mean {:.2})",
            tally.lines, stats.max_over_mean
        )
    } else {
        let hot: Vec<String> = stats
            .hot_partitions
            .iter()
            .map(|p| {
                let load = tally.loads[*p as usize];
                format!("partition {p} ({load} of {})", report.total)
            })
            .collect();
        format!(
            "topic {topic}: HOT {} (above {} x the mean load of {:.1})",
            hot.join(", "),
            crate::traffic::skew::HOT_FACTOR,
            stats.mean
        )
    };
    let mut fixes = Vec::new();
    if !ok {
        if let Some(h) = report.heavy.first() {
            fixes.push(heavy_fix(
                &h.hitter.key,
                h.hitter.estimate as f64 * 100.0 / report.total.max(1) as f64,
            ));
        }
        fixes.push(
            "choose a partition count that puts less of these records on the hottest partition and the busiest consumer: partwise resize --suggest, given the same --counts, ranks counts by it; kafka-topics --alter --partitions sets the one chosen, for every topic of the co-partition group in one window".to_string(),
        );
    }
    Line {
        area: Area::Skew,
        ok,
        text,
        fixes,
    }
}

/// The fix for a heavy key of `topic` (`key` as the caller prints it, the
/// topology read from `file`): salting, which for a joined topic means
/// every topic of its co-partition group alike, or isolating it.
pub fn salt_fix(declared: &Topology, file: &str, topic: &str, key: &str, percent: f64) -> String {
    let groups: Vec<&crate::topology::CopartitionGroup> = declared.groups_of(topic).collect();
    if groups.is_empty() {
        return format!(
            "the heaviest key {key} makes {percent:.0}% of the load: salt it (partwise salt) or give it its own topic"
        );
    }
    let mut partners: Vec<&str> = groups
        .iter()
        .flat_map(|g| g.topics.iter().map(String::as_str))
        .filter(|t| *t != topic)
        .collect();
    partners.dedup();
    let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
    format!(
        "the heaviest key {key} makes {percent:.0}% of the load, and {topic} is joined with {} (co-partition group {}): salting {key} in {topic} alone breaks its join, so salt it in every topic of the group with the same sub-keys, or isolate it on its own partition in every topic with one priority partitioner (partwise salt --topology {file} --topic {topic}, with the key counts as -i and --weighted, shows both with their costs, or why salting is refused)",
        partners.join(", "),
        names.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check;

    /// The ticker's file: both lines hold, in the report's words; the seeds'
    /// round-robin group of 4 splits, with the counts and a fix.
    #[test]
    fn the_tickers_layout_holds_and_a_round_robin_group_of_4_splits() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/ticker.toml"
        ))
        .unwrap();
        let t: Topology = text.parse().unwrap();
        let r = check(&t, &[]);
        let l = layout(&r.groups[0]);
        assert!(l.ok && l.fixes.is_empty());
        assert_eq!(
            l.text,
            "co-partition group ticker (market-updates, notifications) is co-partitioned"
        );
        let p = placement(&r.placements[0]);
        assert!(p.ok && p.fixes.is_empty(), "{p:?}");
        let t: Topology = text.replace("members = 3", "members = 4").parse().unwrap();
        let r = check(&t, &[]);
        let p = placement(&r.placements[0]);
        assert!(!p.ok && !p.fixes.is_empty(), "{p:?}");
        assert!(
            p.text.contains("SPLITS the units of ticker at 4 members"),
            "{}",
            p.text
        );
        assert_eq!(p.area.name(), "placement");
    }

    /// A joined topic's heavy key is salted in every topic of its group or
    /// isolated; a topic of no group is salted alone.
    #[test]
    fn the_salt_fix_names_the_partners_of_a_joined_topic() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/ticker.toml"
        ))
        .unwrap();
        let t: Topology = text.parse().unwrap();
        let f = salt_fix(&t, "ticker.toml", "market-updates", "BBCA", 45.0);
        assert!(
            f.contains("joined with notifications (co-partition group ticker)"),
            "{f}"
        );
        let alone = salt_fix(&t, "ticker.toml", "orders", "K", 50.0);
        assert!(
            alone.starts_with("the heaviest key K makes 50% of the load: salt it"),
            "{alone}"
        );
    }
}
