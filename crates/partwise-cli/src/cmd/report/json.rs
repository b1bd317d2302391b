//! The JSON twin of the report: [`super::model::Model`] serialized, with the
//! `check` findings in the very JSON `check --format json` prints and each
//! topic's skew in `skew --format json`'s.

use super::model::{Model, Verdict, MAX_MATRIX_ROWS};
use crate::output::{hex, key_json};
use crate::render::audit::report_json as audit_json;
use crate::render::findings::{placement_json, producer_json, report_json};
use crate::render::group::to_json as group_json;
use crate::render::redis::check_json;
use crate::render::skew;
use serde_json::{json, Value};
use std::path::Path;

fn verdict_json(v: &Verdict) -> Value {
    json!({"area": v.area, "ok": v.ok, "text": v.text, "fixes": v.fixes, "section": v.anchor})
}

/// The check as `check --format json` gives it, with each group's records
/// when the samples came with counts.
fn weighted_check_json(m: &Model) -> Value {
    let mut doc = report_json(Path::new(&m.file), &m.check);
    if let Some(w) = &m.weights {
        let refs: Vec<&[u8]> = m.samples.iter().map(Vec::as_slice).collect();
        crate::render::findings::with_records(
            &mut doc,
            &crate::render::findings::group_records(&m.declared, &refs, w),
        );
    }
    doc
}

/// The whole model as one JSON document.
pub fn model(m: &Model) -> Value {
    let key = |i: usize| {
        let k = &m.samples[i];
        json!({"key": key_json(k), "key_hex": hex(k)})
    };
    let maps: Vec<Value> = m
        .maps
        .iter()
        .map(|pm| {
            let rows: Vec<Value> = pm
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let mut v = key(i);
                    v["partitions"] = json!(r);
                    v["aligned"] = pm.aligned(i).into();
                    v
                })
                .collect();
            // The keys past the rows are counted here; the check's
            // `sample_keys` and `aligned_keys` count them all.
            json!({
                "name": pm.name,
                "producers": pm.producers.iter().map(producer_json).collect::<Vec<_>>(),
                "partitions": pm.partitions,
                "rows": rows,
                "rows_omitted": m.keys_omitted(),
            })
        })
        .collect();
    let placements: Vec<Value> = m
        .placements
        .iter()
        .map(|p| {
            let matrices: Vec<Value> = p
                .matrices
                .iter()
                .map(|mx| {
                    // Each member is named once; a row names its owners by
                    // their index in `members`.
                    let mut v = json!({"members": mx.members, "declared": mx.declared});
                    match &mx.colocation {
                        Ok(co) => {
                            let rows: Vec<Value> = co
                                .owners
                                .iter()
                                .take(MAX_MATRIX_ROWS)
                                .enumerate()
                                .map(|(i, owners)| {
                                    json!({"index": i, "owners": owners, "split": co.split.binary_search(&(i as u32)).is_ok()})
                                })
                                .collect();
                            v["rows"] = rows.into();
                            v["rows_omitted"] = co.owners.len().saturating_sub(MAX_MATRIX_ROWS).into();
                            // The split indices among the rows shown; `split_count` has them all.
                            let shown = co.split.partition_point(|&p| (p as usize) < MAX_MATRIX_ROWS);
                            v["split_indices"] = json!(co.split[..shown]);
                            v["split_count"] = co.split.len().into();
                        }
                        Err(e) => v["error"] = e.clone().into(),
                    }
                    v
                })
                .collect();
            let sweep: Vec<Value> = p
                .sweep
                .iter()
                .map(|s| {
                    json!({
                        "assignor": s.assignor.spec(),
                        "split_counts": s.counts.iter().map(|c| c.as_ref().map(|c| c.split_count)).collect::<Vec<_>>(),
                        "errors": s.counts.iter().map(|c| c.as_ref().and_then(|c| c.error.clone())).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let unit: Vec<&str> = p
                .unit_topics
                .iter()
                .map(|&i| p.topics[i as usize].0.as_str())
                .collect();
            json!({
                "verdict": placement_json(&p.verdict),
                "matrix_topics": unit,
                "matrices": matrices,
                "sweep": {"member_counts": p.sweep_counts, "assignors": sweep},
            })
        })
        .collect();
    let skews: Vec<Value> = m
        .skew
        .iter()
        .map(|s| {
            let mut v = skew::report_json(&s.report);
            v["topic"] = s.topic.clone().into();
            v["consumer_group"] = json!(s.consumer_group);
            v["weighted"] = s.weighted.into();
            v["load_unit"] = if s.weighted { "records" } else { "keys" }.into();
            v
        })
        .collect();
    let resizes: Vec<Value> = m
        .resize
        .iter()
        .map(|r| {
            let to: Vec<Value> = r
                .to
                .iter()
                .map(|(n, plan, moved)| {
                    json!({
                        "partitions": n,
                        "expected_moved_fraction": plan.expected.map(|f| f.value()),
                        "sample_keys_moved": moved,
                        "records_moved": plan.measured.filter(|_| m.weighted()).map(|x| x.records_moved),
                        "records_moved_share": plan.measured.filter(|_| m.weighted()).and_then(|x| x.records_share()),
                        "together": plan.together.iter().map(|t| json!({"group": t.group, "topics": t.topics.iter().map(|x| &x.0).collect::<Vec<_>>()})).collect::<Vec<_>>(),
                        "fixes": plan.fixes.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    })
                })
                .collect();
            json!({"topic": r.topic, "partitioner": r.partitioner.spec(), "partitions": r.from, "to": to})
        })
        .collect();
    let redis: Vec<Value> = m
        .redis
        .iter()
        .map(|f| {
            let rows: Vec<Value> = f
                .rows
                .iter()
                .enumerate()
                .map(|(i, slots)| {
                    let mut v = key(i);
                    v["slots"] = json!(slots);
                    v["colocated"] = slots.windows(2).all(|w| w[0] == w[1]).into();
                    v
                })
                .collect();
            json!({"name": f.name, "patterns": f.patterns, "rows": rows, "rows_omitted": m.keys_omitted()})
        })
        .collect();
    json!({
        "file": m.file,
        "ok": m.ok(),
        "verdict": m.verdict().iter().map(verdict_json).collect::<Vec<_>>(),
        "sample_keys": m.samples.len(),
        "weights": m.live_weights,
        "check": weighted_check_json(m),
        "partition_maps": maps,
        "placements": placements,
        "skew": skews,
        "resize": resizes,
        "redis_families": redis,
        "live": live(m),
    })
}

/// The live state: each part in its live command's own JSON.
fn live(m: &Model) -> Value {
    let kafka = m.live_kafka.as_ref().map(|k| {
        let audits: Vec<Value> = k
            .audits
            .iter()
            .map(|(g, r)| match r {
                Ok(r) => {
                    let topics: Vec<Value> = m
                        .topics_live(r)
                        .iter()
                        .map(|t| {
                            json!({
                                "topic": t.name,
                                "declared_partitions": t.declared,
                                "live_partitions": t.live,
                                "declared_partitioner": t.partitioner.map(|p| p.spec()),
                                "inferred": t.inferred,
                                "differences": t.differences.iter().map(ToString::to_string).collect::<Vec<_>>(),
                                "drifts": t.differences.iter().map(|d| d.finding()).collect::<Vec<_>>(),
                            })
                        })
                        .collect();
                    json!({"copartition_group": g, "topics": topics, "audit": audit_json(r)})
                }
                Err(e) => json!({"copartition_group": g, "error": e}),
            })
            .collect();
        let groups: Vec<Value> = k
            .groups
            .iter()
            .zip(&k.server_models)
            .map(|((g, r), model)| {
                let mut v = match r {
                    Ok((d, a)) => json!({"consumer_group": g, "group": group_json(d, a)}),
                    Err(e) => json!({"consumer_group": g, "error": e}),
                };
                if let Some(m) = model {
                    v["server_assignor_model"] = json!({
                        "model": m.assignor.map(|a| a.spec()),
                        "kafka_versions": m.assignor.and_then(|a| a.kafka_versions()),
                        "broker_release_line": m.line,
                        "evidence": m.evidence,
                    });
                }
                v
            })
            .collect();
        let mut v = json!({"audits": audits, "groups": groups});
        // The streams groups, as `kafka group --format json` prints them.
        v["streams_groups"] = serde_json::to_value(&k.streams).unwrap_or_default();
        // Every group of the cluster with its type, or why they could not be listed.
        v["cluster_groups"] = serde_json::to_value(&k.listing).unwrap_or_default();
        v
    });
    let redis = m.live_redis.as_ref().map(|r| {
        let families: Vec<Value> = m
            .declared
            .redis_families
            .iter()
            .zip(&r.families)
            .zip(&r.hot)
            .map(|((f, c), (hot, unsampled))| {
                let mut v = partwise_redis::Family::new(&f.patterns)
                    .map_or(Value::Null, |family| check_json(c, &family));
                v["name"] = f.name.clone().into();
                let hot: Vec<crate::render::redis::HotTagJson> = hot
                    .iter()
                    .map(crate::render::redis::HotTagJson::of)
                    .collect();
                v["hot_tags"] = serde_json::to_value(hot).unwrap_or(Value::Null);
                v["hot_tags_measure"] = serde_json::to_value(r.load.measure).unwrap_or(Value::Null);
                v["hot_tags_unsampled"] = serde_json::to_value(unsampled).unwrap_or(Value::Null);
                v
            })
            .collect();
        json!({
            "seed": r.seed,
            "families": families,
            "node_load": crate::render::redis::ClusterLoadJson::of(&r.load),
        })
    });
    json!({"kafka": kafka, "redis": redis})
}
