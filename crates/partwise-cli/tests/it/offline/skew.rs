//! `partwise skew`: load per partition and consumer, heavy hitters, lag.

use crate::common::{fails_with as fails, json_doc as json, partwise, temp_file as file};
use serde_json::Value;
use std::collections::HashMap;

/// The seed: 95% of traffic on key ID.
fn seed_skew_file() -> tempfile::NamedTempFile {
    let mut s = String::new();
    for i in 0..1000 {
        if i % 20 == 0 {
            s.push_str(&format!("country-{}\n", i % 37));
        } else {
            s.push_str("ID\n");
        }
    }
    file(s.as_bytes())
}

#[test]
fn skew_seed_one_partition_takes_95_percent() {
    let f = seed_skew_file();
    let path = f.path().to_str().unwrap();
    let v = json(&["skew", "-p", "6", "-i", path, "--consumers", "6"], 1);
    let loads: Vec<u64> = v["loads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let total: u64 = loads.iter().sum();
    assert_eq!(total, 1000);
    let hot = *loads.iter().max().unwrap() as f64 / total as f64;
    assert!(hot >= 0.95, "{loads:?}");
    assert_eq!(v["hot_partitions"].as_array().unwrap().len(), 1);
    assert_eq!(v["heavy_hitters"][0]["key"], "ID");
    assert_eq!(v["heavy_hitters"][0]["estimate"], 950);
    // Its consumer takes ~95%; every other one next to nothing.
    let members = v["consumers"]["members"].as_array().unwrap();
    let mut shares: Vec<f64> = members
        .iter()
        .map(|m| m["share"].as_f64().unwrap())
        .collect();
    shares.sort_by(|a, b| b.partial_cmp(a).unwrap());
    assert!(shares[0] >= 0.95);
    assert!(shares[1..].iter().all(|&s| s <= 0.03), "{shares:?}");
    for k in [
        "max_over_mean",
        "cv",
        "gini",
        "hot_partitions",
        "heavy_hitters",
    ] {
        assert!(!v[k].is_null(), "{k}");
    }
}

#[test]
fn skew_counts_lag_and_plot() {
    let f = file(b"ID,950\nSG,30\nUS,20\n");
    let plot = tempfile::Builder::new().suffix(".svg").tempfile().unwrap();
    let v = json(
        &[
            "skew",
            "-p",
            "6",
            "-i",
            f.path().to_str().unwrap(),
            "--counts",
            "--consumers",
            "3",
            "--rate-mbps",
            "50",
            "--consume-mbps-per-partition",
            "2.5",
            "--plot",
            plot.path().to_str().unwrap(),
        ],
        1,
    );
    assert_eq!(v["total"], 1000);
    // ID's partition receives 95% of 50 MB/s (plus whatever else shares it) and drains 2.5.
    let hot = v["lag"]["hot_consumer"]["lag_growth_mbps"]
        .as_f64()
        .unwrap();
    assert!(hot >= 0.95 * 50.0 - 2.5 - 1e-9, "{hot}");
    let svg = std::fs::read_to_string(plot.path()).unwrap();
    assert!(svg.starts_with("<svg") && svg.matches("<rect").count() == 7);
}

#[test]
fn skew_bad_input() {
    let empty = file(b"");
    fails(
        &["skew", "-p", "6", "-i", empty.path().to_str().unwrap()],
        "empty",
    );
    let bad = file(b"a,1\nb,two\n");
    fails(
        &[
            "skew",
            "-p",
            "6",
            "-i",
            bad.path().to_str().unwrap(),
            "--counts",
        ],
        "line 2",
    );
    let neg = file(b"a,1\nb,2\nc,-3\n");
    fails(
        &[
            "skew",
            "-p",
            "6",
            "-i",
            neg.path().to_str().unwrap(),
            "--counts",
        ],
        "line 3",
    );
    let nocomma = file(b"a\n");
    fails(
        &[
            "skew",
            "-p",
            "6",
            "-i",
            nocomma.path().to_str().unwrap(),
            "--counts",
        ],
        "KEY,COUNT",
    );
    let ok = file(b"a\n");
    let p = ok.path().to_str().unwrap();
    fails(&["skew", "-p", "0", "-i", p], "partition");
    fails(
        &[
            "skew",
            "-p",
            "6",
            "-i",
            p,
            "--rate-mbps",
            "-1",
            "--consume-mbps-per-partition",
            "2",
        ],
        "-1",
    );
    fails(&["skew", "-p", "6", "-i", p, "--rate-mbps", "10"], "both");
    fails(
        &["skew", "-p", "6", "-i", p, "--consumers", "0"],
        "--consumers",
    );
    fails(
        &["skew", "-p", "6", "-i", "/nonexistent/keys"],
        "/nonexistent/keys",
    );
}

/// Heavy hitters against exact counting, and the parallel scan against the
/// single-threaded one, on a file large enough to be split.
#[test]
fn skew_heavy_hitters_and_threads_agree() {
    let mut s = String::new();
    let mut exact: HashMap<String, u64> = HashMap::new();
    let mut x = 12345u64;
    for _ in 0..900_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // A Zipf-like mix: a few heavy keys, a long tail.
        let key = match x % 100 {
            0..=29 => "hot-a".to_string(),
            30..=39 => "hot-b".to_string(),
            40..=44 => "hot-c".to_string(),
            _ => format!("user-{:08}", x % 1_000_000),
        };
        s.push_str(&key);
        s.push('\n');
        *exact.entry(key).or_default() += 1;
    }
    assert!(s.len() > 8 << 20);
    let f = file(s.as_bytes());
    let p = f.path().to_str().unwrap();
    let one = json(
        &[
            "skew",
            "-p",
            "12",
            "-i",
            p,
            "--threads",
            "1",
            "--capacity",
            "64",
        ],
        1,
    );
    let two = json(
        &[
            "skew",
            "-p",
            "12",
            "-i",
            p,
            "--threads",
            "2",
            "--capacity",
            "64",
        ],
        1,
    );
    assert_eq!(one["loads"], two["loads"]);
    assert_eq!(one["keys"], 900_000);
    for v in [&one, &two] {
        let bound = v["heavy_hitter_error_bound"].as_u64().unwrap();
        assert!(bound <= 900_000 / 65);
        let hh = v["heavy_hitters"].as_array().unwrap();
        let names: Vec<&str> = hh
            .iter()
            .take(3)
            .map(|h| h["key"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["hot-a", "hot-b", "hot-c"]);
        for h in hh {
            let t = exact[h["key"].as_str().unwrap()];
            let e = h["estimate"].as_u64().unwrap();
            assert!(e <= t && t <= e + bound, "{h}");
        }
    }
    // The java partitions of the heavy keys agree with `route`.
    let r = partwise()
        .args(["route", "hot-a", "-p", "12", "--format", "ndjson"])
        .output()
        .unwrap();
    let row: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(row["partition"], one["heavy_hitters"][0]["partition"]);
}

#[test]
fn skew_warns_when_lines_look_like_counts() {
    let f = file(b"ID,950000\nuser-1,1000\nuser-2,1000\n");
    let path = f.path().to_str().unwrap();
    let out = partwise()
        .args(["skew", "-i", path, "-p", "12"])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("looks like KEY,COUNT") && err.contains("--weighted"),
        "{err}"
    );
    let out = partwise()
        .args(["skew", "-i", path, "-p", "12", "--weighted"])
        .output()
        .unwrap();
    assert!(!String::from_utf8(out.stderr).unwrap().contains("warning"));
    let keys = file(b"BBCA\nANTM\na,b\n");
    let out = partwise()
        .args(["skew", "-i", keys.path().to_str().unwrap(), "-p", "12"])
        .output()
        .unwrap();
    assert!(!String::from_utf8(out.stderr).unwrap().contains("warning"));
}
