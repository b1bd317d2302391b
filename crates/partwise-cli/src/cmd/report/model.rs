//! The report's content: one typed model assembled from what the library
//! computes (the `check` report, partition maps, co-location matrices and
//! split sweeps, skew, resize plans, Redis slots), and the verdict drawn from
//! it. The JSON twin and the HTML page are both rendered from this model, so
//! they cannot say different things.

use super::live::{LiveKafka, LiveRedis};
use partwise::assign::{colocation_of, Assignor, Colocation};
use partwise::check::topic_drift;
use partwise::check::{check, Report};
use partwise::findings::Drift;
use partwise::group::placement::{self, PlacementVerdict, Sweep};
use partwise::strategy::resize::{self, Plan};
use partwise::topology::{partition_map, PartitionMap, Topology};
use partwise::traffic::{self, ReportOptions, Tally};
use partwise::verdict;
use partwise::{KeyFormat, PartitionCount, Partitioner};

use crate::output::MAX_KEY_ROWS;
use partwise::group::placement::MAX_SWEEP_MEMBERS;

/// Rows of a co-location matrix shown (the rest are counted, not drawn):
/// the matrix shows how an assignor splits, which its first couple of
/// thousand indices show as well as all of them, and a page or document
/// of every index of a 200,000-partition group would not be read.
pub const MAX_MATRIX_ROWS: usize = 2_000;
/// Heavy hitters shown per topic.
const TOP: usize = 10;
/// Counters of each topic's heavy-hitter summary (as `skew`'s default).
const CAPACITY: usize = 1024;
/// Sample keys encoded at a time for a topic's tally.
const BATCH: usize = 4096;

/// Everything the report shows.
pub struct Model {
    /// The topology file, as named on the command line.
    pub file: String,
    /// The sample keys (`-i`, or the keys of `--counts`), logical keys as given.
    pub samples: Vec<Vec<u8>>,
    /// The count of each sample, with `--counts`: only then is a
    /// partition's load known, and a partition called hot.
    pub weights: Option<Vec<u64>>,
    /// The `check` report: findings and fixes.
    pub check: Report,
    /// One partition map per co-partition group, of the first
    /// [`Model::key_rows`] sample keys.
    pub maps: Vec<PartitionMap>,
    /// One entry per consumer group and co-partition group it reads.
    pub placements: Vec<Placement>,
    /// Skew of the sample keys, per topic with a keyed producer.
    pub skew: Vec<TopicSkew>,
    /// Resize impact for nearby counts, per topic with a keyed producer.
    pub resize: Vec<TopicResize>,
    /// Slots of the sample keys, per Redis family.
    pub redis: Vec<FamilySlots>,
    /// The topology as declared, for the live state to be held against.
    pub declared: Topology,
    /// The Kafka cluster's state, with `-b`.
    pub live_kafka: Option<LiveKafka>,
    /// The Redis Cluster's placement of the families, with `-c`.
    pub live_redis: Option<LiveRedis>,
    /// The live window the weights are of, with `--counts live:...`.
    pub live_weights: Option<crate::cmd::LiveWeights>,
}

/// A consumer group on a co-partition group: its verdict, the co-location
/// matrix at one member count, and the split sweep for every assignor.
pub struct Placement {
    /// The verdict, as `check` gives it.
    pub verdict: PlacementVerdict,
    /// The group's subscribed topics with their partition counts (the matrix's columns).
    pub topics: Vec<(String, u32)>,
    /// Which of `topics` belong to the co-partition group.
    pub unit_topics: Vec<u32>,
    /// The co-location matrices: at the declared count (the first that
    /// splits, for a range), and when that keeps units whole, at the first
    /// count of the sweep where the declared assignor splits them.
    pub matrices: Vec<Matrix>,
    /// The member counts of the sweep.
    pub sweep_counts: Vec<u32>,
    /// One row per assignor, a cell per count of `sweep_counts` (`None`:
    /// not run, the simulation budget ran out).
    pub sweep: Vec<Sweep>,
}

/// One co-location matrix: who owns each partition index of each topic.
pub struct Matrix {
    /// The member ids.
    pub members: Vec<String>,
    /// Whether this count is one the file declares.
    pub declared: bool,
    /// The matrix, or why the assignor could not run.
    pub colocation: Result<Colocation, String>,
}

/// The skew of the sample keys over one topic.
pub struct TopicSkew {
    /// The topic.
    pub topic: String,
    /// Its first keyed producer's partitioner.
    pub partitioner: Partitioner,
    /// Its partition count.
    pub partitions: PartitionCount,
    /// The consumer group whose shares are shown (the first that subscribes).
    pub consumer_group: Option<String>,
    /// That group's assignor (`java:range` when none, unused then).
    pub assignor: Assignor,
    /// The tally of the sample keys.
    pub tally: Tally,
    /// Its report.
    pub report: traffic::Report,
    /// Whether the tally is of records (`--counts`) or of keys, each
    /// weighing one: then no partition is hot, the load being unknown.
    pub weighted: bool,
}

/// What nearby partition counts would do to one topic.
pub struct TopicResize {
    /// The topic.
    pub topic: String,
    /// Its first keyed producer's partitioner.
    pub partitioner: Partitioner,
    /// Its partition count.
    pub from: u32,
    /// One plan per nearby count: the count, the plan, and how many sample keys move.
    pub to: Vec<(u32, Plan, usize)>,
}

/// The slot of each sample key's family members.
pub struct FamilySlots {
    /// The family.
    pub name: String,
    /// Its patterns (the columns).
    pub patterns: Vec<String>,
    /// One row per sample key of the first [`Model::key_rows`]: the slot
    /// of each pattern's key.
    pub rows: Vec<Vec<u16>>,
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
        let report = check(topology, &refs);
        // Rows for the first keys only; the check counts every key.
        let listed = &refs[..refs.len().min(MAX_KEY_ROWS)];
        let maps = topology
            .copartition_groups
            .iter()
            .map(|g| partition_map(topology, g, listed))
            .collect();
        let placements = report
            .placements
            .iter()
            .filter_map(|v| placement_of(topology, v))
            .collect();
        let skew = if refs.is_empty() {
            Vec::new()
        } else {
            topology
                .topics
                .iter()
                .filter_map(|t| skew_of(topology, t, &refs, weights.as_deref()))
                .collect()
        };
        let resize = topology
            .topics
            .iter()
            .filter_map(|t| resize_of(topology, t, &refs, weights.as_deref()))
            .collect();
        let redis = topology
            .redis_families
            .iter()
            .map(|f| FamilySlots {
                name: f.name.clone(),
                patterns: f.patterns.clone(),
                rows: listed
                    .iter()
                    .map(|k| {
                        f.patterns
                            .iter()
                            .map(|p| {
                                partwise::redis::slot::key_slot(&partwise::redis::family::fill(
                                    p, k,
                                ))
                            })
                            .collect()
                    })
                    .collect(),
            })
            .collect();
        Model {
            file,
            samples,
            weights,
            check: report,
            maps,
            placements,
            skew,
            resize,
            redis,
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
        for (i, g) in self.check.groups.iter().enumerate() {
            out.push(line(verdict::layout(g), format!("layout-{i}")));
        }
        for (i, p) in self.placements.iter().enumerate() {
            out.push(line(
                verdict::placement(&p.verdict),
                format!("placement-{i}"),
            ));
        }
        for (i, f) in self.check.families.iter().enumerate() {
            out.push(line(verdict::family(f), format!("redis-{i}")));
        }
        // Sample keys without counts weigh one each: a partition with more
        // of them is no hotter, so only weighed tallies give a verdict.
        for (i, s) in self.skew.iter().enumerate().filter(|(_, s)| s.weighted) {
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

fn placement_of(t: &Topology, v: &PlacementVerdict) -> Option<Placement> {
    let cg = t
        .consumer_groups
        .iter()
        .find(|c| c.name == v.consumer_group)?;
    let g = t
        .copartition_groups
        .iter()
        .find(|g| g.name == v.copartition)?;
    // The first count that splits shows the split; otherwise the first declared.
    let at = v
        .counts
        .iter()
        .find(|c| !c.ok())
        .or(v.counts.first())
        .map_or_else(|| placement::declared_counts(&cg.members)[0], |c| c.members);
    let members = placement::members_at(cg, at);
    let group = placement::group_of(t, cg, &members);
    let (unit_topics, indices) = placement::unit_topics(&group, g);
    let matrix = |members: Vec<String>, declared: bool| {
        let group = placement::group_of(t, cg, &members);
        let colocation = v
            .assignor
            .assign(&group)
            .map(|a| colocation_of(&group, &a, &unit_topics))
            .map_err(|e| e.to_string());
        Matrix {
            members,
            declared,
            colocation,
        }
    };
    // The check's sweep, run once: the report shows its first counts (up to
    // the indices plus two) and the declared ones.
    let shown = indices.saturating_add(2).clamp(1, MAX_SWEEP_MEMBERS);
    let declared = placement::declared_counts(&cg.members);
    let keep: Vec<usize> = v
        .sweep_counts
        .iter()
        .enumerate()
        .filter(|(_, k)| **k <= shown || declared.binary_search(k).is_ok())
        .map(|(i, _)| i)
        .collect();
    let sweep_counts: Vec<u32> = keep.iter().map(|&i| v.sweep_counts[i]).collect();
    let sweep: Vec<Sweep> = v
        .sweep
        .iter()
        .map(|s| Sweep {
            assignor: s.assignor,
            counts: keep.iter().map(|&i| s.counts[i].clone()).collect(),
        })
        .collect();
    let mut matrices = vec![matrix(members, true)];
    if v.ok() {
        // Units whole as declared: show where the same assignor would split them.
        let mine = sweep.iter().find(|s| s.assignor == v.assignor);
        if let Some(c) = mine.and_then(|s| s.counts.iter().flatten().find(|c| c.split_count > 0)) {
            matrices.push(matrix(placement::members_at(cg, c.members), false));
        }
    }
    Some(Placement {
        verdict: v.clone(),
        topics: group
            .topics
            .iter()
            .map(|x| (x.name.clone(), x.partitions))
            .collect(),
        unit_topics,
        matrices,
        sweep_counts,
        sweep,
    })
}

/// The encoded keys of `samples` under `format`, those it can encode, each
/// with its count (`weights[i]` for `samples[i]`; 1 without counts).
fn encoded(samples: &[&[u8]], weights: Option<&[u64]>, format: KeyFormat) -> Vec<(Vec<u8>, u64)> {
    samples
        .iter()
        .enumerate()
        .filter_map(|(i, k)| {
            let w = weights.map_or(1, |w| w[i]);
            format.encode(k).ok().map(|b| (b, w))
        })
        .collect()
}

fn skew_of(
    t: &Topology,
    topic: &partwise::topology::Topic,
    samples: &[&[u8]],
    weights: Option<&[u64]>,
) -> Option<TopicSkew> {
    let (p, format) = resize::producer_defaults(topic)?;
    let n = topic.partitions;
    let mut tally = Tally::new(n, CAPACITY);
    let mut lines = 0u64;
    // A batch at a time: the encoded keys of a whole file would be another
    // copy of it.
    for (at, batch) in samples.chunks(BATCH).enumerate() {
        let weights = weights.map(|w| &w[at * BATCH..]);
        let (keys, counts): (Vec<Vec<u8>>, Vec<u64>) =
            encoded(batch, weights, format).into_iter().unzip();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        for &w in &counts {
            // The reader refused counts whose sum overflows.
            tally.weigh(w).ok()?;
        }
        tally.add(p, n, &refs, &counts);
        lines += refs.len() as u64;
    }
    if lines == 0 {
        return None;
    }
    // `add` tallies load; the lines are the reader's count, and here every key is one.
    tally.lines = lines;
    let reader = t
        .consumer_groups
        .iter()
        .find(|c| c.subscriptions.contains(&topic.name))
        .and_then(|c| {
            let a: Assignor = c.assignor.parse().ok()?;
            let m = *placement::declared_counts(&c.members).first()?;
            Some((c.name.clone(), a, m))
        });
    let opts = ReportOptions {
        top: TOP,
        consumers: reader.as_ref().map(|(_, a, m)| (*a, *m)),
        // The topology declares no rates, so there is no lag to forecast.
        lag: None,
    };
    let mut report = tally.report(p, n, &opts).ok()?;
    if weights.is_none() {
        // Keys per partition are not traffic: no partition is hot from them.
        report.stats.hot_partitions.clear();
    }
    Some(TopicSkew {
        weighted: weights.is_some(),
        topic: topic.name.clone(),
        partitioner: p,
        partitions: n,
        assignor: reader.as_ref().map_or(Assignor::JavaRange, |r| r.1),
        consumer_group: reader.map(|r| r.0),
        tally,
        report,
    })
}

fn resize_of(
    t: &Topology,
    topic: &partwise::topology::Topic,
    samples: &[&[u8]],
    weights: Option<&[u64]>,
) -> Option<TopicResize> {
    let (p, format) = resize::producer_defaults(topic)?;
    let from = topic.partitions;
    let n = from.get();
    // Each encodable sample with its count (1 without counts): the plan's
    // fixes are judged on them, and with counts its records moved.
    let keys = encoded(samples, weights, format);
    let measured: Vec<(&[u8], u64)> = keys.iter().map(|(k, w)| (k.as_slice(), *w)).collect();
    let mut nearby = vec![
        n.saturating_sub(1),
        n.saturating_add(1),
        n.saturating_mul(2),
    ];
    nearby.dedup();
    let to = nearby
        .into_iter()
        .filter(|&m| m != n)
        .filter_map(|m| PartitionCount::new(m).ok())
        .map(|to| {
            let plan = resize::plan_measured(
                p,
                from,
                to,
                resize::change_together(t, &topic.name),
                (!measured.is_empty()).then_some(&measured[..]),
            );
            let moved = plan.measured.map_or(0, |m| m.keys_moved as usize);
            (to.get(), plan, moved)
        })
        .collect();
    Some(TopicResize {
        topic: topic.name.clone(),
        partitioner: p,
        from: n,
        to,
    })
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
