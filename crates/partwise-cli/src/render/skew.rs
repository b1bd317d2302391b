//! The JSON of a skew report: `skew --format json`, and each topic's skew
//! in `report`'s JSON twin.

use crate::output::{hex, key_json};
use partwise::assign::Assignor;
use partwise::traffic::{Report, Tally};
use partwise::{PartitionCount, Partitioner};
use serde_json::{json, Value};

/// A skew report as JSON: `skew --format json`, and each topic's skew in
/// `report`'s JSON twin.
pub fn report_json(
    partitioner: Partitioner,
    n: PartitionCount,
    assignor: Assignor,
    tally: &Tally,
    r: &Report,
) -> Value {
    let total = r.total;
    let stats = &r.stats;
    let hh: Vec<Value> = r
        .heavy
        .iter()
        .map(|h| {
            json!({
                "key": key_json(&h.hitter.key),
                "key_hex": hex(&h.hitter.key),
                "estimate": h.hitter.estimate,
                "max_error": h.hitter.error,
                "share": h.hitter.estimate as f64 / total as f64,
                "partition": h.partition,
            })
        })
        .collect();
    let mut v = json!({
        "partitioner": partitioner.spec(),
        "partitions": n.get(),
        "keys": tally.lines,
        "total": total,
        "not_fixed": tally.not_fixed,
        "loads": tally.loads,
        "mean": stats.mean,
        "max": stats.max,
        "max_over_mean": stats.max_over_mean,
        "cv": stats.cv,
        "gini": stats.gini,
        "hot_partitions": stats.hot_partitions,
        "idle_partitions": stats.idle_partitions,
        "heavy_hitters": hh,
        "heavy_hitter_error_bound": r.error_bound,
    });
    if let Some(cs) = &r.consumers {
        let members: Vec<Value> = cs
            .iter()
            .map(|c| {
                json!({"member": c.member, "partitions": c.partitions, "load": c.load, "share": c.load as f64 / total as f64})
            })
            .collect();
        let idle: Vec<&str> = cs
            .iter()
            .filter(|c| c.load == 0)
            .map(|c| c.member.as_str())
            .collect();
        v["consumers"] = json!({"assignor": assignor.spec(), "members": members, "idle": idle});
    }
    if let Some(lag) = &r.lag {
        let hot_consumer = lag.hot_consumer.as_ref().map(|(member, g)| {
            json!({"member": member, "lag_growth_mbps": g, "lag_growth_mb_per_hour": g * 3600.0})
        });
        v["lag"] = json!({
            "consume_mbps_per_partition": lag.consume_mbps_per_partition,
            "inflow_mbps": lag.inflow_mbps,
            "lag_growth_mbps": lag.growth_mbps,
            "hot_consumer": hot_consumer,
        });
    }
    v
}
