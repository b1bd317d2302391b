//! The report's content: one typed model, what the library computes of the
//! topology ([`partwise::report::topology`]: the `check` report, partition
//! maps, co-location matrices and split sweeps, skew, resize plans, Redis
//! slots) beside the live state, and the verdict drawn from it. The JSON twin and the HTML page are both rendered from this model, so
//! they cannot say different things.

use super::live::{LiveKafka, LiveRedis};
use partwise::check::topic_drift;
use partwise::findings::Drift;
use partwise::topology::Topology;
use partwise::verdict;
use partwise::Partitioner;

use crate::output::MAX_KEY_ROWS;
pub use partwise::report::{Matrix, Placement, TopologyReport};

/// Rows of a co-location matrix shown (the rest are counted, not drawn):
/// the matrix shows how an assignor splits, which its first couple of
/// thousand indices show as well as all of them, and a page or document
/// of every index of a 200,000-partition group would not be read.
pub const MAX_MATRIX_ROWS: usize = 2_000;

/// Everything the report shows.
pub struct Model {
    /// The topology file, as named on the command line.
    pub file: String,
    /// The sample keys (`-i`, or the keys of `--counts`), logical keys as given.
    pub samples: Vec<Vec<u8>>,
    /// The count of each sample, with `--counts`: only then is a
    /// partition's load known, and a partition called hot.
    pub weights: Option<Vec<u64>>,
    /// What the topology comes to over the samples, offline: the check,
    /// partition maps, placements, skew, resize and Redis slots (the maps
    /// and slot tables of the first [`Model::key_rows`] sample keys).
    pub topology: TopologyReport,
    /// The topology as declared, for the live state to be held against.
    pub declared: Topology,
    /// The Kafka cluster's state, with `-b`.
    pub live_kafka: Option<LiveKafka>,
    /// The Redis Cluster's placement of the families, with `-c`.
    pub live_redis: Option<LiveRedis>,
    /// The live window the weights are of, with `--counts live:...`.
    pub live_weights: Option<crate::ops::weights::LiveWeights>,
}

/// One line of the verdict.
pub struct Verdict {
    /// What it is about: [`verdict::Area::name`].
    pub area: &'static str,
    /// Whether it holds.
    pub ok: bool,
    /// What holds or breaks, in one sentence.
    pub text: String,
    /// What to do, when it breaks.
    pub fixes: Vec<String>,
    /// The section id that shows it.
    pub anchor: String,
}

impl Model {
    /// Builds the model of `topology` over `samples`, each with its count
    /// when `weights` is given (one per sample, in order). The topology must
    /// have passed [`crate::load::bounded`].
    pub fn build(
        file: String,
        topology: &Topology,
        samples: Vec<Vec<u8>>,
        weights: Option<Vec<u64>>,
        live_kafka: Option<LiveKafka>,
        live_redis: Option<LiveRedis>,
    ) -> Model {
        let refs: Vec<&[u8]> = samples.iter().map(Vec::as_slice).collect();
        let r = partwise::report::topology(topology, &refs, weights.as_deref(), MAX_KEY_ROWS);
        Model {
            file,
            samples,
            weights,
            topology: r,
            declared: topology.clone(),
            live_kafka,
            live_redis,
            live_weights: None,
        }
    }

    /// Sample keys with a row in the partition maps and slot tables.
    pub fn key_rows(&self) -> usize {
        self.samples.len().min(MAX_KEY_ROWS)
    }

    /// Sample keys without a row: counted by the check, not listed.
    pub fn keys_omitted(&self) -> usize {
        self.samples.len() - self.key_rows()
    }

    /// Whether the samples carry their traffic (`--counts`).
    pub fn weighted(&self) -> bool {
        self.weights.is_some()
    }

    /// Whether nothing breaks: every line of the verdict holds (the check,
    /// no hot partition, the live state as declared).
    pub fn ok(&self) -> bool {
        self.verdict().iter().all(|v| v.ok)
    }

    /// The verdict, in the order the page shows it: layout, placement,
    /// Redis, hot partitions; each with its fixes. The words are the core's
    /// ([`partwise::verdict`]); the anchors, the page's.
    pub fn verdict(&self) -> Vec<Verdict> {
        let line = |l: verdict::Line, anchor: String| Verdict {
            area: l.area.name(),
            ok: l.ok,
            text: l.text,
            fixes: l.fixes,
            anchor,
        };
        let mut out = Vec::new();
        for (i, g) in self.topology.check.groups.iter().enumerate() {
            out.push(line(verdict::layout(g), format!("layout-{i}")));
        }
        for (i, p) in self.topology.placements.iter().enumerate() {
            out.push(line(
                verdict::placement(&p.verdict),
                format!("placement-{i}"),
            ));
        }
        for (i, f) in self.topology.check.families.iter().enumerate() {
            out.push(line(verdict::family(f), format!("redis-{i}")));
        }
        // Sample keys without counts weigh one each: a partition with more
        // of them is no hotter, so only weighed tallies give a verdict.
        for (i, s) in self
            .topology
            .skew
            .iter()
            .enumerate()
            .filter(|(_, s)| s.weighted)
        {
            let heavy_fix = |key: &[u8], percent: f64| {
                verdict::salt_fix(
                    &self.declared,
                    &self.file,
                    &s.topic,
                    &crate::output::key_cell(key),
                    percent,
                )
            };
            out.push(line(
                verdict::skew(&s.topic, &s.tally, &s.report, heavy_fix),
                format!("skew-{i}"),
            ));
        }
        self.live_verdict(&mut out);
        out
    }
}

/// One audited topic beside its declaration.
pub struct TopicLive {
    /// The topic.
    pub name: String,
    /// The declared partition count.
    pub declared: Option<u32>,
    /// The live partition count (`None`: missing or unreadable).
    pub live: Option<u32>,
    /// The declared partitioner of its first keyed producer.
    pub partitioner: Option<Partitioner>,
    /// What the sampled records say wrote it (empty: nothing to tell).
    pub inferred: Vec<String>,
    /// Every way the live topic differs from the declared one.
    pub differences: Vec<Drift>,
}

impl Model {
    /// The audited topics of `r` beside their declarations: the core
    /// finds the drifts.
    pub fn topics_live(&self, r: &partwise_kafka::audit::AuditReport) -> Vec<TopicLive> {
        r.topics
            .iter()
            .map(|t| {
                let live = t.partition_count();
                let d = topic_drift(
                    &self.declared,
                    &t.name,
                    t.error.as_deref(),
                    live,
                    t.routing.as_ref(),
                );
                TopicLive {
                    name: t.name.clone(),
                    declared: self.declared.topic(&t.name).map(|d| d.partitions.get()),
                    live,
                    partitioner: d.partitioner,
                    inferred: d.inferred,
                    differences: d.drifts,
                }
            })
            .collect()
    }

    fn live_verdict(&self, out: &mut Vec<Verdict>) {
        if let Some(k) = &self.live_kafka {
            for (i, (g, r)) in k.audits.iter().enumerate() {
                let anchor = format!("live-kafka-{i}");
                let v = match r {
                    Err(e) => Verdict {
                        area: verdict::Area::Live.name(),
                        ok: false,
                        text: format!("live co-partition group {g}: the audit failed: {e}"),
                        fixes: vec!["check that the brokers answer and the topics exist (partwise kafka topics)".into()],
                        anchor,
                    },
                    Ok(r) => {
                        let mut diffs: Vec<String> = self
                            .topics_live(r)
                            .into_iter()
                            .flat_map(|t| t.differences)
                            .map(|d| d.to_string())
                            .collect();
                        let mut fixes = Vec::new();
                        if let Some(v) = &r.verdict {
                            for f in &v.findings {
                                diffs.push(f.to_string());
                                let fix = f.fix().to_string();
                                // Each fix once: two findings can share one.
                                if !fixes.contains(&fix) {
                                    fixes.push(fix);
                                }
                            }
                        }
                        if r.partial() {
                            diffs.push(Drift::Partial.to_string());
                        }
                        if !diffs.is_empty() && fixes.is_empty() {
                            fixes.push(format!(
                                "bring the topology file and the cluster together: {}",
                                Drift::Partial.fix()
                            ));
                        }
                        let ok = diffs.is_empty();
                        Verdict {
                            area: verdict::Area::Live.name(),
                            ok,
                            text: if ok {
                                format!("live co-partition group {g}: the cluster matches the declaration")
                            } else {
                                format!("live co-partition group {g} DIFFERS from the declaration: {}", diffs.join("; "))
                            },
                            fixes,
                            anchor,
                        }
                    }
                };
                out.push(v);
            }
            for (i, (g, r)) in k.groups.iter().enumerate() {
                let anchor = format!("live-group-{i}");
                let (ok, text, fixes) = match r {
                    Err(e) => (false, format!("live consumer group {g}: {e}"), vec![]),
                    Ok((d, _)) if d.members.is_empty() => (
                        false,
                        format!(
                            "live consumer group {g} has no members (state {})",
                            if d.state.is_empty() {
                                "unknown"
                            } else {
                                &d.state
                            }
                        ),
                        vec!["start its consumers to see their assignment".to_string()],
                    ),
                    Ok((d, a)) => {
                        let mut what = Vec::new();
                        if a.not_returned > 0 {
                            what.push(format!(
                                "{} members' assignments not returned by the broker",
                                a.not_returned
                            ));
                        }
                        if a.split_count > 0 {
                            what.push(format!(
                                "SPLITS {} partition indices across members",
                                a.split_count
                            ));
                        }
                        if a.matches_live == Some(false) {
                            what.push("its assignment is not what the declared assignor gives its members".into());
                        }
                        let undecodable: Vec<String> =
                            a.findings.iter().map(|f| f.message.clone()).collect();
                        what.extend(undecodable.iter().cloned());
                        let head = format!(
                            "live consumer group {g} ({} members, assignor {})",
                            d.members.len(),
                            if d.protocol.is_empty() {
                                "-"
                            } else {
                                &d.protocol
                            }
                        );
                        if what.is_empty() {
                            (
                                true,
                                format!("{head} keeps partition p of each topic together"),
                                vec![],
                            )
                        } else {
                            let mut fixes: Vec<String> =
                                a.findings.iter().map(|f| f.fix.clone()).collect();
                            if what.len() > undecodable.len() {
                                fixes.push("run the declared assignor (the placement fix above), or declare the one that runs".to_string());
                            }
                            fixes.dedup();
                            (false, format!("{head}: {}", what.join("; ")), fixes)
                        }
                    }
                };
                out.push(Verdict {
                    area: verdict::Area::Live.name(),
                    ok,
                    text,
                    fixes,
                    anchor,
                });
            }
        }
        if let Some(k) = &self.live_kafka {
            for (i, r) in k.streams.iter().enumerate() {
                let g = &r.group;
                let head = format!(
                    "live streams group {} (state {}, {} members, {} active tasks{})",
                    g.group,
                    g.state,
                    g.members.len(),
                    r.tasks.len(),
                    if k.undeclared_streams.contains(&g.group) {
                        "; not declared, found on the cluster reading the file's topics"
                    } else {
                        ""
                    }
                );
                let ok = r.findings.is_empty();
                out.push(Verdict {
                    area: verdict::Area::Live.name(),
                    ok,
                    text: if ok {
                        format!("{head}: each task holds partition p of its sources")
                    } else {
                        format!(
                            "{head}: {}",
                            r.findings
                                .iter()
                                .map(|f| f.message.as_str())
                                .collect::<Vec<_>>()
                                .join("; ")
                        )
                    },
                    fixes: r.findings.iter().map(|f| f.fix.clone()).collect(),
                    anchor: format!("live-streams-{i}"),
                });
            }
            // What the listing could not tell: the streams groups that read
            // the file's topics without being declared are unknown then.
            match &k.listing {
                super::live::Listing::Failed { error } => out.push(Verdict {
                    area: verdict::Area::Live.name(),
                    ok: false,
                    text: format!(
                        "live group listing: the cluster's groups could not be listed ({error}); \
                         streams groups the file does not declare were not looked for"
                    ),
                    fixes: vec!["run again when every broker answers ListGroups".to_string()],
                    anchor: "live-groups".to_string(),
                }),
                super::live::Listing::Listed(l) => {
                    for g in l.groups.iter().filter(|g| g.error.is_some()) {
                        out.push(Verdict {
                            area: verdict::Area::Live.name(),
                            ok: false,
                            text: format!(
                                "live streams group {} (not declared) could not be described, so \
                                 whether it reads the file's topics is unknown: {}",
                                g.group,
                                g.error.as_deref().unwrap_or_default()
                            ),
                            fixes: vec![format!(
                                "run `partwise kafka group -g {}` to see why",
                                g.group
                            )],
                            anchor: "live-groups".to_string(),
                        });
                    }
                }
            }
        }
        if let Some(r) = &self.live_redis {
            for (i, (f, c)) in self
                .declared
                .redis_families
                .iter()
                .zip(&r.families)
                .enumerate()
            {
                let ok = c.ok() && c.errors.is_empty();
                let mut text = format!(
                    "live redis family {} (cluster at {}): {} of {} sample keys in one slot, {} on one node",
                    f.name,
                    r.seed,
                    c.co_located(),
                    c.keys.len(),
                    c.same_node()
                );
                if !c.errors.is_empty() {
                    text.push_str(&format!(
                        "; {} of them unverified: {}",
                        c.unverified(),
                        c.errors
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    ));
                }
                out.push(Verdict {
                    area: verdict::Area::Live.name(),
                    ok,
                    text,
                    fixes: c
                        .lints
                        .iter()
                        .filter(|l| l.is_problem())
                        .map(|l| l.fix().to_string())
                        .collect(),
                    anchor: format!("live-redis-{i}"),
                });
            }
        }
    }
}
