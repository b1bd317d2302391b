//! The JSON twin of the report: [`crate::ops::report::model::Model`] serialized, with the
//! `check` findings in the very JSON `check --format json` prints and each
//! topic's skew in `skew --format json`'s.

use crate::ops::report::model::{Model, Verdict, MAX_MATRIX_ROWS};
use crate::render::audit::report_json as audit_json;
use crate::render::findings::ReportJson;
use crate::render::group::to_json as group_json;
use crate::render::skew;
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// A sample key, as every row of the report names it.
#[derive(Serialize)]
struct KeyCell<'a> {
    #[serde(serialize_with = "partwise::ser::key_text")]
    key: &'a [u8],
    #[serde(serialize_with = "partwise::ser::key_hex")]
    key_hex: &'a [u8],
}

#[derive(Serialize)]
struct VerdictLine<'a> {
    area: &'a str,
    ok: bool,
    text: &'a str,
    fixes: &'a [String],
    section: &'a str,
}

impl<'a> VerdictLine<'a> {
    fn of(v: &'a Verdict) -> Self {
        VerdictLine {
            area: v.area,
            ok: v.ok,
            text: &v.text,
            fixes: &v.fixes,
            section: &v.anchor,
        }
    }
}

/// One row of a co-partition group's partition map.
#[derive(Serialize)]
struct MapRow<'a> {
    #[serde(flatten)]
    key: KeyCell<'a>,
    partitions: &'a [Option<u32>],
    aligned: bool,
}

/// A co-partition group's partition map. The keys past the rows are
/// counted here; the check's `sample_keys` and `aligned_keys` count them all.
#[derive(Serialize)]
struct MapDoc<'a> {
    name: &'a str,
    producers: &'a [partwise::findings::ProducerRef],
    partitions: &'a [u32],
    rows: Vec<MapRow<'a>>,
    rows_omitted: usize,
}

/// One row of a co-location matrix: its owners by their index in `members`.
#[derive(Serialize)]
struct MatrixRow<'a> {
    index: usize,
    owners: &'a [Option<usize>],
    split: bool,
}

/// A co-location matrix; each member is named once.
#[derive(Serialize)]
struct MatrixDoc<'a> {
    members: &'a [String],
    declared: bool,
    #[serde(flatten)]
    body: MatrixBody<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum MatrixBody<'a> {
    Rows {
        rows: Vec<MatrixRow<'a>>,
        rows_omitted: usize,
        /// The split indices among the rows shown; `split_count` has them all.
        split_indices: &'a [u32],
        split_count: usize,
    },
    Error {
        error: &'a str,
    },
}

impl<'a> MatrixDoc<'a> {
    fn of(mx: &'a crate::ops::report::model::Matrix) -> Self {
        let body = match &mx.colocation {
            Ok(co) => {
                let shown = co
                    .split
                    .partition_point(|&p| (p as usize) < MAX_MATRIX_ROWS);
                MatrixBody::Rows {
                    rows: co
                        .owners
                        .iter()
                        .take(MAX_MATRIX_ROWS)
                        .enumerate()
                        .map(|(i, owners)| MatrixRow {
                            index: i,
                            owners,
                            split: co.split.binary_search(&(i as u32)).is_ok(),
                        })
                        .collect(),
                    rows_omitted: co.owners.len().saturating_sub(MAX_MATRIX_ROWS),
                    split_indices: &co.split[..shown],
                    split_count: co.split.len(),
                }
            }
            Err(e) => MatrixBody::Error { error: e },
        };
        MatrixDoc {
            members: &mx.members,
            declared: mx.declared,
            body,
        }
    }
}

/// One assignor's row of the split sweep.
#[derive(Serialize)]
struct SweepRow<'a> {
    assignor: partwise::assign::Assignor,
    split_counts: Vec<Option<u32>>,
    errors: Vec<Option<&'a str>>,
}

#[derive(Serialize)]
struct SweepDoc<'a> {
    member_counts: &'a [u32],
    assignors: Vec<SweepRow<'a>>,
}

#[derive(Serialize)]
struct PlacementDoc<'a> {
    verdict: &'a partwise::group::placement::PlacementVerdict,
    matrix_topics: Vec<&'a str>,
    matrices: Vec<MatrixDoc<'a>>,
    sweep: SweepDoc<'a>,
}

/// A topic's skew as `skew --format json` gives it, with the group whose
/// shares it shows.
#[derive(Serialize)]
struct SkewDoc<'a> {
    #[serde(flatten)]
    report: Value,
    topic: &'a str,
    consumer_group: Option<&'a str>,
    weighted: bool,
    load_unit: &'static str,
}

#[derive(Serialize)]
struct TogetherDoc<'a> {
    group: &'a str,
    topics: Vec<&'a str>,
}

/// What one nearby count would move.
#[derive(Serialize)]
struct ResizeTo<'a> {
    partitions: u32,
    expected_moved_fraction: Option<f64>,
    sample_keys_moved: usize,
    records_moved: Option<u64>,
    records_moved_share: Option<f64>,
    together: Vec<TogetherDoc<'a>>,
    fixes: Vec<String>,
}

#[derive(Serialize)]
struct ResizeDoc<'a> {
    topic: &'a str,
    partitioner: partwise::Partitioner,
    partitions: u32,
    to: Vec<ResizeTo<'a>>,
}

/// One row of a Redis family's slots.
#[derive(Serialize)]
struct SlotRow<'a> {
    #[serde(flatten)]
    key: KeyCell<'a>,
    slots: &'a [u16],
    colocated: bool,
}

#[derive(Serialize)]
struct RedisDoc<'a> {
    name: &'a str,
    patterns: &'a [String],
    rows: Vec<SlotRow<'a>>,
    rows_omitted: usize,
}

/// The whole model as one document.
#[derive(Serialize)]
struct ModelDoc<'a> {
    file: &'a str,
    ok: bool,
    verdict: Vec<VerdictLine<'a>>,
    sample_keys: usize,
    weights: &'a Option<crate::cmd::LiveWeights>,
    check: Value,
    partition_maps: Vec<MapDoc<'a>>,
    placements: Vec<PlacementDoc<'a>>,
    skew: Vec<SkewDoc<'a>>,
    resize: Vec<ResizeDoc<'a>>,
    redis_families: Vec<RedisDoc<'a>>,
    live: Value,
}

/// The check as `check --format json` gives it, with each group's records
/// when the samples came with counts.
fn weighted_check_json(m: &Model) -> Value {
    let records = match &m.weights {
        Some(w) => {
            let refs: Vec<&[u8]> = m.samples.iter().map(Vec::as_slice).collect();
            partwise::topology::group_records(&m.declared, &refs, w)
        }
        None => Vec::new(),
    };
    serde_json::to_value(ReportJson::of(
        Path::new(&m.file),
        &m.topology.check,
        &records,
    ))
    .unwrap_or_default()
}

/// The whole model as one JSON document.
pub fn model(m: &Model) -> Value {
    let key = |i: usize| KeyCell {
        key: &m.samples[i],
        key_hex: &m.samples[i],
    };
    let verdict = m.verdict();
    let doc = ModelDoc {
        file: &m.file,
        ok: m.ok(),
        verdict: verdict.iter().map(VerdictLine::of).collect(),
        sample_keys: m.samples.len(),
        weights: &m.live_weights,
        check: weighted_check_json(m),
        partition_maps: m
            .topology
            .maps
            .iter()
            .map(|pm| MapDoc {
                name: &pm.name,
                producers: &pm.producers,
                partitions: &pm.partitions,
                rows: pm
                    .rows
                    .iter()
                    .enumerate()
                    .map(|(i, r)| MapRow {
                        key: key(i),
                        partitions: r,
                        aligned: pm.aligned(i),
                    })
                    .collect(),
                rows_omitted: m.keys_omitted(),
            })
            .collect(),
        placements: m
            .topology
            .placements
            .iter()
            .map(|p| PlacementDoc {
                verdict: &p.verdict,
                matrix_topics: p
                    .unit_topics
                    .iter()
                    .map(|&i| p.topics[i as usize].0.as_str())
                    .collect(),
                matrices: p.matrices.iter().map(MatrixDoc::of).collect(),
                sweep: SweepDoc {
                    member_counts: &p.sweep_counts,
                    assignors: p
                        .sweep
                        .iter()
                        .map(|s| SweepRow {
                            assignor: s.assignor,
                            split_counts: s
                                .counts
                                .iter()
                                .map(|c| c.as_ref().map(|c| c.split_count))
                                .collect(),
                            errors: s
                                .counts
                                .iter()
                                .map(|c| c.as_ref().and_then(|c| c.error.as_deref()))
                                .collect(),
                        })
                        .collect(),
                },
            })
            .collect(),
        skew: m
            .topology
            .skew
            .iter()
            .map(|s| SkewDoc {
                report: skew::report_json(&s.report),
                topic: &s.topic,
                consumer_group: s.consumer_group.as_deref(),
                weighted: s.weighted,
                load_unit: if s.weighted { "records" } else { "keys" },
            })
            .collect(),
        resize: m
            .topology
            .resize
            .iter()
            .map(|r| ResizeDoc {
                topic: &r.topic,
                partitioner: r.partitioner,
                partitions: r.from,
                to: r
                    .to
                    .iter()
                    .map(|(n, plan, moved)| {
                        let measured = plan.measured.filter(|_| m.weighted());
                        ResizeTo {
                            partitions: *n,
                            expected_moved_fraction: plan.expected.map(|f| f.value()),
                            sample_keys_moved: *moved,
                            records_moved: measured.map(|x| x.records_moved),
                            records_moved_share: measured.and_then(|x| x.records_share()),
                            together: plan
                                .together
                                .iter()
                                .map(|t| TogetherDoc {
                                    group: &t.group,
                                    topics: t.topics.iter().map(|x| x.0.as_str()).collect(),
                                })
                                .collect(),
                            fixes: plan.fixes.iter().map(ToString::to_string).collect(),
                        }
                    })
                    .collect(),
            })
            .collect(),
        redis_families: m
            .topology
            .redis
            .iter()
            .map(|f| RedisDoc {
                name: &f.name,
                patterns: &f.patterns,
                rows: f
                    .rows
                    .iter()
                    .enumerate()
                    .map(|(i, slots)| SlotRow {
                        key: key(i),
                        slots,
                        colocated: slots.windows(2).all(|w| w[0] == w[1]),
                    })
                    .collect(),
                rows_omitted: m.keys_omitted(),
            })
            .collect(),
        live: live(m),
    };
    serde_json::to_value(doc).unwrap_or_default()
}

/// The live state: each part in its live command's own JSON.
#[derive(Serialize)]
struct LiveJson<'a> {
    kafka: Option<KafkaJson<'a>>,
    redis: Option<RedisJson<'a>>,
}

/// `-b`: each co-partition group's audit, each consumer group, the streams
/// groups (as `kafka group --format json` prints them) and every group of
/// the cluster with its type, or why they could not be listed.
#[derive(Serialize)]
struct KafkaJson<'a> {
    audits: Vec<AuditEntry<'a>>,
    groups: Vec<GroupEntry<'a>>,
    streams_groups: &'a [partwise::streams::group::StreamsReport],
    cluster_groups: &'a crate::ops::report::live::Listing,
}

#[derive(Serialize)]
struct AuditEntry<'a> {
    copartition_group: &'a str,
    #[serde(flatten)]
    outcome: AuditOutcome<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum AuditOutcome<'a> {
    Audited {
        topics: Vec<TopicLiveJson>,
        audit: crate::render::audit::AuditJson<'a>,
    },
    Failed {
        error: &'a str,
    },
}

/// One audited topic beside its declaration.
#[derive(Serialize)]
struct TopicLiveJson {
    topic: String,
    declared_partitions: Option<u32>,
    live_partitions: Option<u32>,
    declared_partitioner: Option<&'static str>,
    inferred: Vec<String>,
    differences: Vec<String>,
    drifts: Vec<partwise::findings::Finding>,
}

impl TopicLiveJson {
    fn of(t: crate::ops::report::model::TopicLive) -> Self {
        TopicLiveJson {
            declared_partitioner: t.partitioner.map(|p| p.spec()),
            differences: t.differences.iter().map(ToString::to_string).collect(),
            drifts: t.differences.iter().map(|d| d.finding()).collect(),
            topic: t.name,
            declared_partitions: t.declared,
            live_partitions: t.live,
            inferred: t.inferred,
        }
    }
}

#[derive(Serialize)]
struct GroupEntry<'a> {
    consumer_group: &'a str,
    #[serde(flatten)]
    outcome: GroupOutcome<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_assignor_model: Option<ServerModelJson<'a>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum GroupOutcome<'a> {
    Described {
        group: Box<crate::render::group::GroupDoc<'a>>,
    },
    Failed {
        error: &'a str,
    },
}

/// The broker's server assignor as partwise models it, with the evidence.
#[derive(Serialize)]
struct ServerModelJson<'a> {
    model: Option<&'static str>,
    kafka_versions: Option<&'static str>,
    broker_release_line: Option<&'static str>,
    evidence: &'a str,
}

/// `-c`: each Redis family as `redis check` gives it, with its hot tags.
#[derive(Serialize)]
struct RedisJson<'a> {
    seed: &'a str,
    families: Vec<FamilyLiveJson<'a>>,
    node_load: crate::render::redis::ClusterLoadJson,
}

#[derive(Serialize)]
struct FamilyLiveJson<'a> {
    /// The family's check (absent when its patterns make no family).
    #[serde(flatten)]
    check: Option<crate::render::redis::CheckDoc>,
    name: &'a str,
    hot_tags: Vec<crate::render::redis::HotTagJson>,
    hot_tags_measure: &'a partwise_redis::Measure,
    hot_tags_unsampled: &'a [String],
}

fn live(m: &Model) -> Value {
    let kafka = m.live_kafka.as_ref().map(|k| KafkaJson {
        audits: k
            .audits
            .iter()
            .map(|(g, r)| AuditEntry {
                copartition_group: g,
                outcome: match r {
                    Ok(r) => AuditOutcome::Audited {
                        topics: m
                            .topics_live(r)
                            .into_iter()
                            .map(TopicLiveJson::of)
                            .collect(),
                        audit: audit_json(r),
                    },
                    Err(e) => AuditOutcome::Failed { error: e },
                },
            })
            .collect(),
        groups: k
            .groups
            .iter()
            .zip(&k.server_models)
            .map(|((g, r), model)| GroupEntry {
                consumer_group: g,
                outcome: match r {
                    Ok((d, a)) => GroupOutcome::Described {
                        group: Box::new(group_json(d, a)),
                    },
                    Err(e) => GroupOutcome::Failed { error: e },
                },
                server_assignor_model: model.as_ref().map(|m| ServerModelJson {
                    model: m.assignor.map(|a| a.spec()),
                    kafka_versions: m.assignor.and_then(|a| a.kafka_versions()),
                    broker_release_line: m.line,
                    evidence: &m.evidence,
                }),
            })
            .collect(),
        streams_groups: &k.streams,
        cluster_groups: &k.listing,
    });
    let redis = m.live_redis.as_ref().map(|r| RedisJson {
        seed: &r.seed,
        families: m
            .declared
            .redis_families
            .iter()
            .zip(&r.families)
            .zip(&r.hot)
            .map(|((f, c), (hot, unsampled))| FamilyLiveJson {
                check: partwise_redis::Family::new(&f.patterns)
                    .ok()
                    .map(|family| crate::render::redis::CheckDoc::of(c, &family)),
                name: &f.name,
                hot_tags: hot
                    .iter()
                    .map(crate::render::redis::HotTagJson::of)
                    .collect(),
                hot_tags_measure: &r.load.measure,
                hot_tags_unsampled: unsampled,
            })
            .collect(),
        node_load: crate::render::redis::ClusterLoadJson::of(&r.load),
    });
    serde_json::to_value(LiveJson { kafka, redis }).unwrap_or_default()
}
