//! A co-partition group caught with different partition counts (mid-resize):
//! why no assignor keeps its join, and the two procedures that do, with what
//! each costs from the real counts.
//!
//! While the counts differ, a key hashed to `h` lands on `h mod 9` in one
//! topic and `h mod 6` in the other: different partition numbers for most
//! keys. An assignor only decides which member owns which partition; keeping
//! partition `p` of every topic in one member does not bring a key's records
//! together when they are not on the same `p`. So the fix is never an
//! assignor or a member count: the counts must be made equal, by one of two
//! procedures.
//!
//! ```
//! use partwise::strategy::resize::joined::{realign, Procedure};
//! use partwise::topology::Topology;
//!
//! let t = Topology::parse(r#"
//! [[topic]]
//! name = "market-updates"
//! partitions = 9
//! [[topic]]
//! name = "notifications"
//! partitions = 6
//! [[copartition]]
//! name = "ticker"
//! topics = ["market-updates", "notifications"]
//! "#).unwrap();
//! let r = realign(&t, &t.copartition_groups[0], &[], None).unwrap();
//! assert_eq!(r.to, 9);
//! assert_eq!(r.raise[0].topic, "notifications");
//! // 6 -> 9: of every 18 hash values, 6 stay where they were.
//! let f = r.raise[0].moved.unwrap();
//! assert_eq!((f.moved, f.period), (2, 3));
//! assert!(r.procedure(Procedure::DrainAndResize).contains("--partitions 9"));
//! ```

use super::{expected_moved_fraction, producer_defaults, Fraction};
use crate::count::PartitionCount;
use crate::partitioner::Partitioner;
use crate::topology::{CopartitionGroup, Topology};

/// A count of things that move out of a total (sample keys, or records
/// when the keys carry weights).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Moved {
    /// How many move.
    pub moved: u64,
    /// Out of how many.
    pub of: u64,
}

/// One topic whose count must change to match the group's largest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raise {
    /// The topic.
    pub topic: String,
    /// Its count now.
    pub from: u32,
    /// The count it must have.
    pub to: u32,
    /// The fraction of uniformly hashed keys whose partition changes
    /// (`None`: its producer's partitioner ignores keys).
    pub moved: Option<Fraction>,
    /// Sample keys whose partition changes, under the topic's first keyed
    /// producer (its partitioner and key format), when sample keys and such
    /// a producer are given.
    pub sample_keys: Option<Moved>,
    /// Records whose key's partition changes, when the sample keys carry
    /// weights (record counts).
    pub records: Option<Moved>,
}

/// What brings a co-partition group's topics back to one count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Realign {
    /// The co-partition group.
    pub group: String,
    /// Every topic of the group with its count, in the group's order.
    pub counts: Vec<(String, u32)>,
    /// The count every topic must have: the largest (Kafka cannot lower a
    /// topic's partition count).
    pub to: u32,
    /// The topics below it, in the group's order.
    pub raise: Vec<Raise>,
}

/// A procedure that makes the counts equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Procedure {
    /// Stop the producers, let the consumers drain, add partitions to every
    /// topic below the count, restart.
    DrainAndResize,
    /// Create topics at the count, replay or dual-write into them, then
    /// switch the consumers.
    NewTopics,
}

impl Procedure {
    /// Both procedures, the one with fewer moving parts first.
    pub const ALL: [Procedure; 2] = [Procedure::DrainAndResize, Procedure::NewTopics];

    /// A stable identifier: `drain_and_resize` or `new_topics`.
    pub fn kind(self) -> &'static str {
        match self {
            Procedure::DrainAndResize => "drain_and_resize",
            Procedure::NewTopics => "new_topics",
        }
    }
}

/// `2/3 of keys (0.6667)`, with the sample and record figures when known.
fn moved_words(r: &Raise) -> String {
    let mut s = match r.moved {
        Some(f) => format!(
            "{}/{} of keys ({:.4}) move to another partition of {}",
            f.moved,
            f.period,
            f.value(),
            r.topic
        ),
        None => format!(
            "{}'s producer ignores keys, so no key has a fixed partition",
            r.topic
        ),
    };
    let mut figures = Vec::new();
    if let Some(k) = r.sample_keys {
        figures.push(format!("{} of {} sample keys", k.moved, k.of));
    }
    if let Some(w) = r.records {
        figures.push(format!("{} of {} records", w.moved, w.of));
    }
    if !figures.is_empty() {
        s.push_str(&format!(" ({})", figures.join("; ")));
    }
    s
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(list: &[&str]) -> String {
    match list.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => list.join(""),
    }
}

impl Realign {
    /// Why no assignor or member count keeps the join while the counts differ.
    pub fn why(&self) -> String {
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(t, n)| format!("{t} {n}"))
            .collect();
        let mods: Vec<String> = self
            .counts
            .iter()
            .map(|(t, n)| format!("h mod {n} in {t}"))
            .collect();
        format!(
            "while the partition counts differ ({}), no assignor keeps the join across members: a key hashed to h lands on {}, different partition numbers for most keys, so keeping partition p of every topic in one member does not bring a key's records together; make the counts equal first",
            counts.join(", "),
            mods.join(" and ")
        )
    }

    /// One procedure in words, with its cost from the real counts.
    pub fn procedure(&self, p: Procedure) -> String {
        let to = self.to;
        let topics: Vec<&str> = self.counts.iter().map(|(t, _)| t.as_str()).collect();
        match p {
            Procedure::DrainAndResize => {
                let alters: Vec<String> = self
                    .raise
                    .iter()
                    .map(|r| {
                        format!(
                            "raise {} from {} to {to} partitions (kafka-topics --alter --topic {} --partitions {to})",
                            r.topic, r.from, r.topic
                        )
                    })
                    .collect();
                let costs: Vec<String> = self.raise.iter().map(moved_words).collect();
                format!(
                    "drain and resize in one window: stop the producers of {}, let every consumer reach the end of every partition, {}, then restart the producers; costs: a window with the producers stopped, and {}: records already written stay on their old partitions, so the window must drain them first",
                    and_list(&topics),
                    alters.join(", "),
                    costs.join("; ")
                )
            }
            Procedure::NewTopics => {
                let raised: Vec<&str> = self.raise.iter().map(|r| r.topic.as_str()).collect();
                let copies = and_list(&raised);
                let one = self.raise.len() == 1;
                format!(
                    "new topics at {to} partitions: create {} {copies} with {to} partitions (kafka-topics --create --partitions {to}), replay the old records into {} or have the producers write both (dual-write) until {} caught up, then switch the consumer group to {}; costs: storage for a second copy of {copies} while both exist, producers and consumers changed to the new topic name{}, and a cut-over that starts the group on the new topic where it left the old; no key is split between old and new partitions, since every record in the new topic is placed by {to}",
                    if one { "a copy of" } else { "copies of" },
                    if one { "it" } else { "them" },
                    if one { "it has" } else { "they have" },
                    if one { "it" } else { "them" },
                    if one { "" } else { "s" },
                )
            }
        }
    }
}

/// The counts of `g`'s declared topics, when they are not all equal: the
/// topics to raise to the largest, with what each raise moves. `samples`
/// are logical keys (each encoded with the topic's producer's key format);
/// `weights`, when given, holds one record count per sample key.
pub fn realign(
    t: &Topology,
    g: &CopartitionGroup,
    samples: &[&[u8]],
    weights: Option<&[u64]>,
) -> Option<Realign> {
    let topics: Vec<&crate::topology::Topic> =
        g.topics.iter().filter_map(|name| t.topic(name)).collect();
    let counts: Vec<(String, u32)> = topics
        .iter()
        .map(|x| (x.name.clone(), x.partitions.get()))
        .collect();
    let to = counts.iter().map(|(_, n)| *n).max()?;
    if counts.iter().all(|(_, n)| *n == to) {
        return None;
    }
    let target = PartitionCount::new(to).ok()?;
    let weights = weights.filter(|w| w.len() == samples.len());
    let raise = topics
        .iter()
        .filter(|x| x.partitions.get() < to)
        .map(|x| {
            let from = x.partitions;
            let keyed = producer_defaults(x);
            // The fraction is the same for every key-hashing partitioner: it
            // depends on the counts alone.
            let fraction_of =
                keyed.map_or_else(|| "java".parse::<Partitioner>().ok(), |(p, _)| Some(p));
            let mut sample_keys = None;
            let mut records = None;
            if let (Some((p, format)), false) = (keyed, samples.is_empty()) {
                let (mut k, mut w) = (Moved { moved: 0, of: 0 }, Moved { moved: 0, of: 0 });
                for (i, key) in samples.iter().enumerate() {
                    let weight = weights.map_or(0, |ws| ws[i]);
                    k.of += 1;
                    w.of += weight;
                    let moved = match format.encode(key) {
                        Ok(bytes) => super::key_move(p, Some(&bytes), from, target).moved(),
                        Err(_) => true,
                    };
                    if moved {
                        k.moved += 1;
                        w.moved += weight;
                    }
                }
                sample_keys = Some(k);
                records = weights.map(|_| w);
            }
            Raise {
                topic: x.name.clone(),
                from: from.get(),
                to,
                moved: fraction_of.and_then(|p| expected_moved_fraction(p, from, target)),
                sample_keys,
                records,
            }
        })
        .collect();
    Some(Realign {
        group: g.name.clone(),
        counts,
        to,
        raise,
    })
}

/// [`realign`] for topics given by name and count alone (no producers, no
/// sample keys): what `assign` knows.
pub fn realign_counts(group: &str, counts: &[(String, u32)]) -> Option<Realign> {
    let to = counts.iter().map(|(_, n)| *n).max()?;
    if counts.iter().all(|(_, n)| *n == to) {
        return None;
    }
    let target = PartitionCount::new(to).ok()?;
    let java: Partitioner = "java".parse().ok()?;
    let raise = counts
        .iter()
        .filter(|(_, n)| *n < to)
        .map(|(name, n)| Raise {
            topic: name.clone(),
            from: *n,
            to,
            moved: PartitionCount::new(*n)
                .ok()
                .and_then(|from| expected_moved_fraction(java, from, target)),
            sample_keys: None,
            records: None,
        })
        .collect();
    Some(Realign {
        group: group.to_string(),
        counts: counts.to_vec(),
        to,
        raise,
    })
}

/// The count to reach, each topic to raise with what it moves, and the
/// procedures with their costs.
impl serde::Serialize for Realign {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        #[derive(serde::Serialize)]
        struct Count<'a> {
            topic: &'a str,
            partitions: u32,
        }
        #[derive(serde::Serialize)]
        struct RaiseDoc<'a> {
            topic: &'a str,
            from: u32,
            to: u32,
            moved_fraction: Option<f64>,
            moved: Option<String>,
            sample_keys: Option<Moved>,
            records: Option<Moved>,
        }
        #[derive(serde::Serialize)]
        struct ProcedureDoc {
            kind: &'static str,
            text: String,
        }
        let mut m = s.serialize_map(Some(4))?;
        let counts: Vec<Count> = self
            .counts
            .iter()
            .map(|(t, n)| Count {
                topic: t,
                partitions: *n,
            })
            .collect();
        m.serialize_entry("counts", &counts)?;
        m.serialize_entry("to", &self.to)?;
        let raise: Vec<RaiseDoc> = self
            .raise
            .iter()
            .map(|x| RaiseDoc {
                topic: &x.topic,
                from: x.from,
                to: x.to,
                moved_fraction: x.moved.map(|f| f.value()),
                moved: x.moved.map(|f| format!("{}/{}", f.moved, f.period)),
                sample_keys: x.sample_keys,
                records: x.records,
            })
            .collect();
        m.serialize_entry("raise", &raise)?;
        let procedures: Vec<ProcedureDoc> = Procedure::ALL
            .iter()
            .map(|&p| ProcedureDoc {
                kind: p.kind(),
                text: self.procedure(p),
            })
            .collect();
        m.serialize_entry("procedures", &procedures)?;
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(a: u32, b: u32, partitioner: &str) -> Topology {
        Topology::parse(&format!(
            r#"
[[topic]]
name = "market-updates"
partitions = {a}
[[topic.producer]]
partitioner = "{partitioner}"
[[topic]]
name = "notifications"
partitions = {b}
[[topic.producer]]
partitioner = "{partitioner}"
[[copartition]]
name = "ticker"
topics = ["market-updates", "notifications"]
"#
        ))
        .unwrap()
    }

    #[test]
    fn equal_counts_need_nothing() {
        let t = pair(6, 6, "kafkajs");
        assert!(realign(&t, &t.copartition_groups[0], &[], None).is_none());
    }

    #[test]
    fn the_moved_keys_and_records_are_counted_by_the_producers_partitioner() {
        let t = pair(9, 6, "kafkajs");
        let keys: [&[u8]; 4] = [b"BBCA", b"ANTM", b"ASII", b"UNVR"];
        let weights = [45u64, 20, 20, 15];
        let r = realign(&t, &t.copartition_groups[0], &keys, Some(&weights)).unwrap();
        let java: Partitioner = "java".parse().unwrap();
        let (six, nine) = (
            PartitionCount::new(6).unwrap(),
            PartitionCount::new(9).unwrap(),
        );
        // Counted independently of `realign`: the partition each key has at 6 and at 9.
        let mut moved = 0;
        let mut records = 0;
        for (k, w) in keys.iter().zip(weights) {
            if java.place(Some(k), six) != java.place(Some(k), nine) {
                moved += 1;
                records += w;
            }
        }
        let raise = &r.raise[0];
        assert_eq!(
            (raise.topic.as_str(), raise.from, raise.to),
            ("notifications", 6, 9)
        );
        assert_eq!(raise.sample_keys, Some(Moved { moved, of: 4 }));
        assert_eq!(
            raise.records,
            Some(Moved {
                moved: records,
                of: 100
            })
        );
        let text = r.procedure(Procedure::DrainAndResize);
        assert!(
            text.contains(&format!(
                "{moved} of 4 sample keys; {records} of 100 records"
            )),
            "{text}"
        );
    }

    #[test]
    fn the_words_name_every_topic_and_the_count() {
        let t = pair(9, 6, "sarama");
        let r = realign(&t, &t.copartition_groups[0], &[], None).unwrap();
        let why = r.why();
        assert!(why.contains("market-updates 9, notifications 6"), "{why}");
        assert!(
            why.contains("h mod 9 in market-updates and h mod 6 in notifications"),
            "{why}"
        );
        let drain = r.procedure(Procedure::DrainAndResize);
        assert!(
            drain.contains("raise notifications from 6 to 9 partitions"),
            "{drain}"
        );
        assert!(drain.contains("2/3 of keys (0.6667)"), "{drain}");
        let copy = r.procedure(Procedure::NewTopics);
        assert!(
            copy.contains("a copy of notifications with 9 partitions"),
            "{copy}"
        );
        assert!(copy.contains("storage"), "{copy}");
    }
}
