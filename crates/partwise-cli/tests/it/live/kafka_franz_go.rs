//! A real franz-go group (3 consumers with kgo's default
//! CooperativeStickyBalancer, `tests/live/franz-go-group`, franz-go 1.22.3)
//! over two 6-partition topics on the broker at PARTWISE_KAFKA_BOOTSTRAP
//! splits as `partwise assign -a franz-go` and `check` predict: its
//! assignment is one of the simulated outcomes for the same members, and
//! every index is split.
//! Needs Go (the member program is built with `go build -mod=readonly`).

use crate::common::{partwise, repo};
use partwise_faults::live::{create_topics, kafka_bootstrap as bootstrap, unique};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::process::Command;

#[test]
fn a_franz_go_group_splits_as_predicted() {
    let b = bootstrap();
    let (t1, t2) = (unique("fg-market"), unique("fg-notif"));
    create_topics(&b, &[(&t1, 6), (&t2, 6)]);
    let dir = repo().join("tests/live/franz-go-group");
    let bin = repo().join(".cache/franz-go-group");
    let built = Command::new("go")
        .args(["build", "-mod=readonly", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(&dir)
        .status()
        .expect("go (Go 1.26+) is needed to build tests/live/franz-go-group");
    assert!(built.success(), "go build");
    let group = unique("fg-group");
    let out = Command::new(&bin)
        .args([
            "-bootstrap",
            &b,
            "-group",
            &group,
            "-members",
            "3",
            "-partitions",
            "12",
        ])
        .args(["-topics", &format!("{t1},{t2}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let live: Value = serde_json::from_slice(&out.stdout).unwrap();
    let live = live.as_object().unwrap();
    assert_eq!(live.len(), 3);
    // Every index split in the live group.
    let mut owner: BTreeMap<(String, u64), String> = BTreeMap::new();
    for (id, list) in live {
        for tp in list.as_array().unwrap() {
            owner.insert(
                (tp[0].as_str().unwrap().into(), tp[1].as_u64().unwrap()),
                id.clone(),
            );
        }
    }
    assert_eq!(owner.len(), 12, "{live:?}");
    let split = (0..6)
        .filter(|&p| owner[&(t1.clone(), p)] != owner[&(t2.clone(), p)])
        .count();
    // The prediction for these members, fresh (all three joined the first
    // generation together).
    let file = json!({
        "topics": [{"name": t1, "partitions": 6}, {"name": t2, "partitions": 6}],
        "members": live.keys().map(|id| json!({"id": id, "subscription": [t1, t2]})).collect::<Vec<_>>(),
    });
    let mut f = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut f, file.to_string().as_bytes()).unwrap();
    let pred = partwise()
        .args(["assign", "-a", "franz-go", "--group"])
        .arg(f.path())
        .args(["--format", "json"])
        .output()
        .unwrap();
    let pred: Value = serde_json::from_slice(&pred.stdout).unwrap();
    assert_eq!(pred["deterministic"], false);
    let live_doc = Value::Object(live.clone());
    let hit = pred["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["assignment"] == live_doc);
    assert!(
        hit.is_some(),
        "live {live_doc} not among {}",
        pred["outcomes"]
    );
    assert_eq!(hit.unwrap()["split_count"], split);
    assert_eq!(split, 6, "the live group splits every index");
    // And `assign -m 3` (anonymous members) says the same split.
    let (m, n) = (t1.as_str(), t2.as_str());
    let anon = partwise()
        .args([
            "assign",
            "-a",
            "franz-go",
            "-m",
            "3",
            "-t",
            &format!("{m}:6"),
            "-t",
            &format!("{n}:6"),
        ])
        .args(["--format", "json"])
        .output()
        .unwrap();
    let anon: Value = serde_json::from_slice(&anon.stdout).unwrap();
    assert_eq!(anon["split_count"], 6);
    assert_eq!(anon["split_runs"], anon["runs"]);
    // And `check` of the live topics, joined and read by a 3-member group
    // declared `franz-go`, says the units split as the live group did.
    let toml = format!(
        "[[topic]]\nname = \"{m}\"\npartitions = 6\n\n[[topic]]\nname = \"{n}\"\npartitions = 6\n\n\
         [[copartition]]\nname = \"joined\"\ntopics = [\"{m}\", \"{n}\"]\n\n\
         [[consumer_group]]\nname = \"{group}\"\nassignor = \"franz-go\"\nmembers = 3\n\
         subscriptions = [\"{m}\", \"{n}\"]\n"
    );
    let mut t = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut t, toml.as_bytes()).unwrap();
    let out = partwise()
        .arg("check")
        .arg(t.path())
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["placements"][0];
    assert_eq!(p["assignor"], "franz-go:cooperative-sticky", "{v}");
    assert_eq!(p["units_whole"], false, "{v}");
    assert_eq!(p["counts"][0]["split_count"], split, "{v}");
}
