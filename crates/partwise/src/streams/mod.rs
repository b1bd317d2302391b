//! Kafka Streams topologies: the text `Topology#describe()` prints, read
//! back, and the co-partition groups Streams enforces for it.
//!
//! Streams puts partition p of every source topic of a sub-topology into one
//! task, and at start-up checks that the sources of each join have equal
//! partition counts (its `CopartitionedTopicsEnforcer`). It never checks that
//! their producers place a key on the same partition number, which is what
//! [`Application::copartition_groups`] hands to partwise's own check.
//!
//! A join is two processors sharing a state store: the stream side looks up
//! the store the other side fills (`KSTREAM-JOIN` and the table's
//! `KTABLE-SOURCE`, `JOINTHIS` and `JOINOTHER` windows, an aggregate's store
//! and the stream joined to it, both halves of a foreign-key join). So two
//! source topics of a sub-topology must be co-partitioned when some store is
//! used by processors downstream of each; a global store's sub-topology makes
//! no tasks and joins nothing. This rule reproduces the groups kafka-streams
//! itself records (`tests/vectors/streams/`, written by kafka-streams'
//! own `InternalTopologyBuilder`).
//!
//! ```
//! use partwise::streams::Application;
//! let text = "Topologies:
//!    Sub-topology: 0
//!     Source: S1 (topics: [market-updates])
//!       --> J
//!     Source: S2 (topics: [notifications])
//!       --> T
//!     Processor: J (stores: [rules])
//!       --> none
//!       <-- S1
//!     Processor: T (stores: [rules])
//!       --> none
//!       <-- S2
//! ";
//! let app = Application::parse(text)?;
//! let groups = app.copartition_groups();
//! assert_eq!(groups[0].external, ["market-updates", "notifications"]);
//! # Ok::<(), partwise::Error>(())
//! ```

pub mod group;

use crate::encoding::KeyFormat;
use crate::topology::{CopartitionGroup, Producer, Topic, Topology};
use crate::{Error, PartitionCount, Partitioner};
use std::collections::{BTreeMap, BTreeSet};

/// The most nodes one description may hold: a real topology has hundreds.
pub const MAX_NODES: usize = 100_000;

/// One node of a sub-topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// Reads topics (`Source: NAME (topics: [a, b])`), or a pattern.
    Source {
        /// The topics it reads, as printed.
        topics: Vec<String>,
        /// The pattern it subscribes to, when it reads by pattern.
        pattern: Option<String>,
    },
    /// Processes records, with the state stores it uses.
    Processor {
        /// Its stores.
        stores: Vec<String>,
    },
    /// Writes a topic (`Sink: NAME (topic: t)`); `None` for a topic chosen
    /// per record (a topic name extractor).
    Sink {
        /// The topic it writes.
        topic: Option<String>,
    },
}

/// A sub-topology: its nodes by name and the edges between them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubTopology {
    /// Its number, as printed.
    pub id: u32,
    /// A global store's sub-topology: it makes no tasks.
    pub global: bool,
    /// Its nodes, in the order printed.
    pub nodes: Vec<(String, Node)>,
    /// `from --> to` edges.
    pub edges: Vec<(String, String)>,
}

/// One application's topology, as `Topology#describe()` printed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Application {
    /// Its sub-topologies, in the order printed.
    pub sub_topologies: Vec<SubTopology>,
}

/// Topics Streams will require to be co-partitioned: the sources of the
/// joins of one sub-topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamsGroup {
    /// The sub-topology.
    pub sub_topology: u32,
    /// Topics the application reads but does not write: written by others,
    /// so their producers decide where a key lands. Sorted.
    pub external: Vec<String>,
    /// Topics the application writes itself for the join (repartition and
    /// foreign-key subscription topics, named here as `describe()` prints
    /// them, without the `<application.id>-` prefix they have on the
    /// cluster): Streams creates them with the count of the group's other
    /// topics and writes them with the Java client's default partitioner.
    /// Sorted.
    pub internal: Vec<String>,
    /// The join's processors, which share a store across the sources.
    pub processors: Vec<String>,
}

fn bad(line: usize, reason: impl Into<String>) -> Error {
    Error::Invalid {
        what: "Kafka Streams topology".into(),
        reason: format!("line {line}: {}", reason.into()),
    }
}

/// The text between the last `(` of `rest` opened after the name and its `)`,
/// after `label:`; `None` when the line is not shaped so.
fn inside<'a>(rest: &'a str, label: &str) -> Option<&'a str> {
    let open = rest.find(" (")?;
    let body = rest[open + 2..].strip_suffix(')')?;
    body.strip_prefix(label)?.strip_prefix(':').map(str::trim)
}

fn list(s: &str) -> Option<Vec<String>> {
    let body = s.strip_prefix('[')?.strip_suffix(']')?;
    Some(
        body.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(String::from)
            .collect(),
    )
}

impl Application {
    /// Reads the text `Topology#describe()` prints (`TopologyDescription`'s
    /// `toString()`); lines that are not part of it (a log around it) are
    /// errors naming the line, so a wrong file is not read as an empty
    /// topology.
    pub fn parse(text: &str) -> Result<Application, Error> {
        let mut subs: Vec<SubTopology> = Vec::new();
        let mut seen_header = false;
        let mut last: Option<String> = None;
        let mut count = 0usize;
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            if line == "Topologies:" {
                if seen_header {
                    return Err(bad(
                        n,
                        "a second 'Topologies:': give one application's describe() per file",
                    ));
                }
                seen_header = true;
                continue;
            }
            if !seen_header {
                return Err(bad(
                    n,
                    "expected 'Topologies:', the first line Topology#describe() prints",
                ));
            }
            if let Some(rest) = line.strip_prefix("Sub-topology:") {
                let rest = rest.trim();
                let (id, global) = match rest.split_once(' ') {
                    Some((id, tail)) if tail.contains("global store") => (id, true),
                    Some(_) => {
                        return Err(bad(
                            n,
                            format!("unexpected text after the sub-topology number: '{rest}'"),
                        ))
                    }
                    None => (rest, false),
                };
                let id: u32 = id
                    .parse()
                    .map_err(|_| bad(n, format!("'{id}' is not a sub-topology number")))?;
                subs.push(SubTopology {
                    id,
                    global,
                    nodes: Vec::new(),
                    edges: Vec::new(),
                });
                last = None;
                continue;
            }
            let Some(sub) = subs.last_mut() else {
                return Err(bad(n, "a node before any 'Sub-topology:' line"));
            };
            if let Some(rest) = line.strip_prefix("-->") {
                let from = last
                    .clone()
                    .ok_or_else(|| bad(n, "an edge before any node"))?;
                for to in rest
                    .split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty() && *t != "none")
                {
                    sub.edges.push((from.clone(), to.to_string()));
                }
                continue;
            }
            if line.starts_with("<--") {
                // The same edges seen from the other end.
                if last.is_none() {
                    return Err(bad(n, "an edge before any node"));
                }
                continue;
            }
            let (kind, rest) = line
                .split_once(':')
                .ok_or_else(|| bad(n, format!("'{line}' is not a line of Topology#describe()")))?;
            let rest = rest.trim();
            let name = rest
                .split(" (")
                .next()
                .filter(|s| !s.is_empty())
                .ok_or_else(|| bad(n, "a node without a name"))?
                .to_string();
            let node = match kind {
                "Source" => {
                    if let Some(t) = inside(rest, "topics") {
                        Node::Source {
                            topics: list(t)
                                .ok_or_else(|| bad(n, format!("'{t}' is not a list of topics")))?,
                            pattern: None,
                        }
                    } else if let Some(p) = inside(rest, "topic pattern") {
                        Node::Source {
                            topics: Vec::new(),
                            pattern: Some(p.to_string()),
                        }
                    } else {
                        return Err(bad(n, format!("source '{name}' names no topics")));
                    }
                }
                "Processor" => Node::Processor {
                    stores: inside(rest, "stores")
                        .and_then(list)
                        .ok_or_else(|| bad(n, format!("processor '{name}' lists no stores")))?,
                },
                "Sink" => Node::Sink {
                    topic: inside(rest, "topic").map(String::from),
                },
                other => {
                    return Err(bad(
                        n,
                        format!("'{other}' is no node kind of Topology#describe()"),
                    ))
                }
            };
            count += 1;
            if count > MAX_NODES {
                return Err(bad(n, format!("more than {MAX_NODES} nodes")));
            }
            sub.nodes.push((name.clone(), node));
            last = Some(name);
        }
        if !seen_header {
            return Err(bad(
                1,
                "no 'Topologies:' line: not the text Topology#describe() prints",
            ));
        }
        Ok(Application {
            sub_topologies: subs,
        })
    }

    /// Topics some sink of the application writes.
    fn written(&self) -> BTreeSet<&str> {
        self.sub_topologies
            .iter()
            .flat_map(|s| &s.nodes)
            .filter_map(|(_, n)| match n {
                Node::Sink { topic: Some(t) } => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The source topics read by pattern: which topics those are is not in
    /// the description.
    pub fn patterns(&self) -> Vec<String> {
        self.sub_topologies
            .iter()
            .flat_map(|s| &s.nodes)
            .filter_map(|(_, n)| match n {
                Node::Source {
                    pattern: Some(p), ..
                } => Some(p.clone()),
                _ => None,
            })
            .collect()
    }

    /// The co-partition groups Streams enforces: per sub-topology, the
    /// source topics joined through a shared store, with the topics split
    /// into those written by others and those the application writes for
    /// the join itself.
    pub fn copartition_groups(&self) -> Vec<StreamsGroup> {
        let written = self.written();
        let mut out = Vec::new();
        for sub in self.sub_topologies.iter().filter(|s| !s.global) {
            let index: BTreeMap<&str, usize> = sub
                .nodes
                .iter()
                .enumerate()
                .map(|(i, (name, _))| (name.as_str(), i))
                .collect();
            let mut next: Vec<Vec<usize>> = vec![Vec::new(); sub.nodes.len()];
            for (a, b) in &sub.edges {
                if let (Some(&a), Some(&b)) = (index.get(a.as_str()), index.get(b.as_str())) {
                    next[a].push(b);
                }
            }
            // Which source topics reach each node.
            let mut reach: Vec<BTreeSet<&str>> = vec![BTreeSet::new(); sub.nodes.len()];
            for (i, (_, node)) in sub.nodes.iter().enumerate() {
                let Node::Source { topics, .. } = node else {
                    continue;
                };
                let mut stack = vec![i];
                let mut seen = vec![false; sub.nodes.len()];
                while let Some(j) = stack.pop() {
                    if std::mem::replace(&mut seen[j], true) {
                        continue;
                    }
                    reach[j].extend(topics.iter().map(String::as_str));
                    stack.extend(&next[j]);
                }
            }
            // Topics joined through a store, with the processors that join them.
            let mut by_store: BTreeMap<&str, (BTreeSet<&str>, Vec<&str>)> = BTreeMap::new();
            for (i, (name, node)) in sub.nodes.iter().enumerate() {
                if let Node::Processor { stores } = node {
                    for s in stores {
                        let e = by_store.entry(s.as_str()).or_default();
                        e.0.extend(reach[i].iter().copied());
                        e.1.push(name.as_str());
                    }
                }
            }
            let mut groups: Vec<(BTreeSet<&str>, BTreeSet<&str>)> = Vec::new();
            for (topics, procs) in by_store.into_values() {
                if topics.len() < 2 {
                    continue;
                }
                let procs: BTreeSet<&str> = procs.into_iter().collect();
                // Merge with every group it shares a topic with.
                let mut merged = (topics, procs);
                groups.retain(|g| {
                    if g.0.is_disjoint(&merged.0) {
                        true
                    } else {
                        merged.0.extend(g.0.iter().copied());
                        merged.1.extend(g.1.iter().copied());
                        false
                    }
                });
                groups.push(merged);
            }
            groups.sort();
            for (topics, procs) in groups {
                let (internal, external): (Vec<&str>, Vec<&str>) =
                    topics.into_iter().partition(|t| written.contains(t));
                out.push(StreamsGroup {
                    sub_topology: sub.id,
                    external: external.into_iter().map(String::from).collect(),
                    internal: internal.into_iter().map(String::from).collect(),
                    processors: procs.into_iter().map(String::from).collect(),
                });
            }
        }
        out
    }
}

/// The label of the producer Streams runs for its internal topics.
pub const STREAMS_PRODUCER: &str = "Kafka Streams (its own producer)";

/// Adds the co-partition groups of `app` (named `<name>:<sub-topology>`)
/// to `topology` as declared `[[copartition]]` groups, so that the one
/// check judges them: each external topic is the topology's own, or gets
/// its count from `counts` (with no producer declared: who writes it is
/// then unknown, and the check says so); each internal topic gets the
/// count Streams gives it (the group's largest; Streams refuses to start
/// when the external ones differ) and Streams' own producer, the Java
/// client's default partitioner over the key bytes the group's first
/// producer writes. Groups of one topic are left out. Returns the names of
/// the groups added.
pub fn declare(
    topology: &mut Topology,
    name: &str,
    app: &Application,
    counts: &[(String, PartitionCount)],
) -> Result<Vec<String>, Error> {
    let java: Partitioner = "java".parse().expect("java is a partitioner spec");
    let mut added = Vec::new();
    for g in app.copartition_groups() {
        if g.external.len() + g.internal.len() < 2 {
            continue;
        }
        let mut sizes = Vec::new();
        let mut format = None;
        for t in &g.external {
            if topology.topic(t).is_none() {
                let Some((_, n)) = counts.iter().find(|(c, _)| c == t) else {
                    return Err(Error::Invalid {
                        what: "Kafka Streams topology".into(),
                        reason: format!(
                            "{name}: sub-topology {} joins '{t}', whose partition count is not known: declare it in the topology file or give its count",
                            g.sub_topology
                        ),
                    });
                };
                topology.topics.push(Topic {
                    name: t.clone(),
                    partitions: *n,
                    key: None,
                    producers: Vec::new(),
                });
            }
            let topic = topology.topic(t).expect("added above");
            sizes.push(topic.partitions);
            format = format.or_else(|| topic.producers.first().map(|p| p.key_format));
        }
        let Some(largest) = sizes.iter().max_by_key(|n| n.get()).copied() else {
            // Only internal topics: Streams sizes and writes all of them.
            continue;
        };
        for t in &g.internal {
            if topology.topic(t).is_none() {
                topology.topics.push(Topic {
                    name: t.clone(),
                    partitions: largest,
                    key: None,
                    producers: vec![Producer {
                        name: Some(STREAMS_PRODUCER.into()),
                        partitioner: Some(java),
                        key_format: format.unwrap_or(KeyFormat::Utf8),
                        keyless: false,
                    }],
                });
            }
        }
        let group = format!("{name}:{}", g.sub_topology);
        let mut topics = g.external.clone();
        topics.extend(g.internal.iter().cloned());
        topology.copartition_groups.push(CopartitionGroup {
            name: group.clone(),
            topics,
        });
        added.push(group);
    }
    Ok(added)
}

/// The label of a producer partwise read from a topic's records on the
/// cluster (`check --streams -b`).
pub const OBSERVED_PRODUCER: &str = "sampled on the cluster";

/// What the cluster says of one source topic: its partition count and,
/// when its sampled keyed records are explained by a known partitioner,
/// that partitioner (the client default among equivalent ones, as the
/// audit names it) over the stored key bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    /// The topic.
    pub topic: String,
    /// Its live partition count.
    pub partitions: PartitionCount,
    /// What wrote its keyed records; `None` when nothing partwise knows
    /// explains every sampled keyed record (the audit's own finding says
    /// what it found instead).
    pub writer: Option<crate::inference::Candidate>,
}

impl Observed {
    /// The observation of `topic` from its live count and the routing of its
    /// sampled records.
    pub fn new(
        topic: &str,
        partitions: PartitionCount,
        routing: Option<&crate::inference::Routing>,
    ) -> Observed {
        let writer = routing
            .filter(|r| r.keyed > 0)
            .and_then(|r| crate::inference::primary(&r.inferred));
        Observed {
            topic: topic.to_string(),
            partitions,
            writer,
        }
    }
}

/// Puts what the cluster says of a source topic into `topology` before
/// [`declare`] and the check: the live count replaces a declared one (the
/// count Streams will see), and the observed writer is added to the
/// topic's producers (declared producers stay: one that disagrees with
/// what the records say is then a finding). A topic the file does not
/// declare is added. Returns the declared count when it differed.
pub fn observe(topology: &mut Topology, seen: &Observed) -> Option<PartitionCount> {
    let producer = seen.writer.map(|c| Producer {
        name: Some(OBSERVED_PRODUCER.into()),
        partitioner: Some(c.partitioner),
        key_format: c.format.unwrap_or(KeyFormat::Utf8),
        keyless: false,
    });
    match topology.topics.iter_mut().find(|t| t.name == seen.topic) {
        Some(t) => {
            let before = std::mem::replace(&mut t.partitions, seen.partitions);
            t.producers.extend(producer);
            (before != seen.partitions).then_some(before)
        }
        None => {
            topology.topics.push(Topic {
                name: seen.topic.clone(),
                partitions: seen.partitions,
                key: None,
                producers: producer.into_iter().collect(),
            });
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_an_error_naming_the_line() {
        for (text, needle) in [
            ("", "no 'Topologies:'"),
            ("hello", "line 1"),
            (
                "Topologies:\n  Source: X (topics: [a])",
                "before any 'Sub-topology:'",
            ),
            ("Topologies:\n Sub-topology: x", "not a sub-topology number"),
            (
                "Topologies:\n Sub-topology: 0\n --> A",
                "edge before any node",
            ),
            (
                "Topologies:\n Sub-topology: 0\n Source: S (topics: a)",
                "not a list of topics",
            ),
            (
                "Topologies:\n Sub-topology: 0\n Widget: S (x: [])",
                "no node kind",
            ),
            ("Topologies:\nTopologies:", "second 'Topologies:'"),
        ] {
            let e = Application::parse(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_parses_or_errs_without_panicking(s in "(Topologies:\n)?([ A-Za-z0-9:\\[\\](),<>\\-]{0,40}\n){0,12}") {
            if let Ok(app) = Application::parse(&s) {
                let _ = app.copartition_groups();
            }
        }
    }
}
