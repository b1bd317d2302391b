//! `partwise batching`: the sticky partitioner's batches for key-less records.

use crate::common::{fails_with as fails, partwise};
use serde_json::Value;

#[test]
fn batching_sticky_fills_batches() {
    let out = partwise()
        .args([
            "batching",
            "--messages",
            "100000",
            "--size",
            "200",
            "--partitions",
            "12",
            "--batch-size",
            "16384",
            "--linger-ms",
            "5",
            "--rate",
            "50000",
            "--format",
            "ndjson",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let rows: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (rr, sticky) = (&rows[0], &rows[1]);
    assert_eq!(rr["strategy"], "round-robin");
    assert!(sticky["batches"].as_u64() < rr["batches"].as_u64());
    assert!(sticky["mean_fill"].as_f64() > rr["mean_fill"].as_f64());
    assert!(sticky["compression_ratio"].as_f64() < rr["compression_ratio"].as_f64());
    fails(
        &[
            "batching",
            "--messages",
            "-1",
            "--size",
            "1",
            "--partitions",
            "1",
            "--rate",
            "1",
        ],
        "-1",
    );
    fails(
        &[
            "batching",
            "--messages",
            "10",
            "--size",
            "1",
            "--partitions",
            "0",
            "--rate",
            "1",
        ],
        "partitions",
    );
}
