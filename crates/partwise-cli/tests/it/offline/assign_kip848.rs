//! `partwise assign -a kip848:uniform@VERSION`: each Kafka release's model
//! (the answers are the real jars', `tests/vectors/kip848/`).

use crate::common::{fails_with, partwise, text};
use serde_json::Value;

fn owner_of_the_one_partition(spec: &str) -> (String, Value) {
    let out = partwise()
        .args([
            "assign", "-a", spec, "--member", "m00", "--member", "m01", "--member", "m02",
        ])
        .args(["-t", "clicks.v2:1", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{spec}: {}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let owner = v["assignment"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, ps)| !ps.as_array().unwrap().is_empty())
        .map(|(m, _)| m.clone())
        .unwrap();
    (owner, v)
}

#[test]
fn kip848_uniform_smallest_case_per_release() {
    // Kafka 4.0.0's jar gives the partition to m00, 4.1.1's and 4.4.0's to m01.
    let (o, v) = owner_of_the_one_partition("kip848:uniform@4.0.0");
    assert_eq!(o, "m00");
    assert_eq!(v["assignor"], "kip848:uniform@4.0.0");
    assert_eq!(v["kafka_versions"], "4.0.0");
    for spec in [
        "kip848:uniform@4.1.1",
        "kip848:uniform@4.4.0",
        "kip848:uniform",
    ] {
        let (o, v) = owner_of_the_one_partition(spec);
        assert_eq!(o, "m01", "{spec}");
        assert_eq!(v["assignor"], "kip848:uniform", "{spec}");
        assert_eq!(v["kafka_versions"], "4.0.1 to 4.4.0", "{spec}");
    }
    let out = partwise()
        .args([
            "assign",
            "-a",
            "kip848:uniform@4.0.0",
            "-m",
            "3",
            "-t",
            "clicks.v2:1",
        ])
        .output()
        .unwrap();
    assert!(
        text(&out.stdout).starts_with("assignor kip848:uniform@4.0.0 (Kafka 4.0.0), 3 members"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn kip848_versions_refused_name_the_input() {
    fails_with(
        &["assign", "-a", "kip848:uniform@4.0", "-m", "3", "-t", "t:1"],
        "say @4.0.0 or @4.0.1",
    );
    fails_with(
        &["assign", "-a", "kip848:range@3.9", "-m", "3", "-t", "t:1"],
        "kip848:range@3.9",
    );
    fails_with(
        &["assign", "-a", "java:range@4.1", "-m", "3", "-t", "t:1"],
        "only the KIP-848",
    );
}
