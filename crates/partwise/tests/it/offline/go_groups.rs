//! The Go clients' balancers against their real code: franz-go 1.22.3,
//! Sarama 1.61.1 and kafka-go 0.4.51 called through their public balancer
//! APIs on 56 groups (`tests/vectors/regen/go-groups/run`), each 200 times
//! with new Go map orders. Every line's group, read as a group file
//! (`assign --group`), must give exactly the set of outcomes the library
//! gave: one where the library gave one, every one where it gave several,
//! and no other.

use partwise::assign::{group_file, Assignment, Assignor, Group};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type ById = BTreeMap<String, Vec<(String, u32)>>;

fn by_id(group: &Group, a: &Assignment) -> ById {
    group
        .members
        .iter()
        .zip(&a.partitions)
        .map(|(m, list)| {
            let mut v: Vec<(String, u32)> = list
                .iter()
                .map(|tp| (group.topics[tp.topic as usize].name.clone(), tp.partition))
                .collect();
            v.sort();
            (m.id.clone(), v)
        })
        .collect()
}

fn by_member(v: &Value) -> ById {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(id, list)| {
            let mut v: Vec<(String, u32)> = list
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    (
                        p[0].as_str().unwrap().to_string(),
                        p[1].as_u64().unwrap() as u32,
                    )
                })
                .collect();
            v.sort();
            (id.clone(), v)
        })
        .collect()
}

fn cases() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/vectors/assignors/go_group_cases.jsonl");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Seeds enough to meet every Go map order of these groups' topics (at
/// most four) and doubly claimed partitions.
const SEEDS: u64 = 400;

#[test]
fn go_balancers_match_their_libraries() {
    let lines = cases();
    assert_eq!(lines.len(), 448);
    let mut bad = Vec::new();
    let mut checked: BTreeMap<String, usize> = BTreeMap::new();
    let mut several = 0;
    let mut unequal = 0;
    for c in &lines {
        let spec = c["assignor"].as_str().unwrap();
        let assignor: Assignor = spec.parse().unwrap();
        let version = c["version"].as_str().unwrap();
        assert_eq!(
            assignor.library_version().unwrap(),
            format!(
                "{} {}",
                client_name(c["client"].as_str().unwrap()),
                &version[1..]
            ),
        );
        let what = format!("{} {spec} ({})", c["case"], c["kind"]);
        let group = group_file::parse(&c["group"].to_string()).unwrap().group;
        assert!(c["error"].is_null(), "{what}: the library erred");
        let want: BTreeSet<ById> = c["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| by_member(&o["assignment"]))
            .collect();
        if want.len() > 1 {
            several += 1;
            if assignor.deterministic() {
                bad.push(format!("{what}: the library gave {} outcomes", want.len()));
                continue;
            }
        }
        let mut got = BTreeSet::new();
        let seeds = if assignor.deterministic() { 1 } else { SEEDS };
        let mut err = None;
        for seed in 0..seeds {
            match assignor.assign_seeded(&group, seed) {
                Ok(a) => {
                    got.insert(by_id(&group, &a));
                }
                Err(e) => {
                    err = Some(e.to_string());
                    break;
                }
            }
        }
        if let Some(e) = err {
            bad.push(format!("{what}: {e}"));
            continue;
        }
        if c["kind"] == "unequal-subscriptions" {
            unequal += 1;
        }
        if got != want {
            bad.push(format!(
                "{what}: got {} outcomes, want {}:\n  got  {got:?}\n  want {want:?}",
                got.len(),
                want.len()
            ));
        }
        *checked.entry(spec.to_string()).or_default() += 1;
    }
    assert!(
        bad.is_empty(),
        "{} of {} differ:\n{}",
        bad.len(),
        lines.len(),
        bad.join("\n")
    );
    for a in Assignor::GO {
        let n = checked.get(a.spec()).copied().unwrap_or(0);
        assert!(n >= 40, "{a}: {n} groups checked");
    }
    assert!(several >= 20, "{several} groups with several outcomes");
    assert!(unequal >= 80, "{unequal} unequal subscriptions");
}

fn client_name(c: &str) -> &str {
    match c {
        "sarama" => "Sarama",
        other => other,
    }
}
