//! The Go clients' balancers against their real code: franz-go 1.22.3,
//! Sarama 1.61.1 and kafka-go 0.4.51 called through their public balancer
//! APIs on 56 groups (`tests/vectors/regen/go-groups/run`), each 200 times
//! with new Go map orders. Every line's group, read as a group file
//! (`assign --group`), must give exactly the set of outcomes the library
//! gave: one where the library gave one, every one where it gave several,
//! and no other.

use super::client_vectors::{by_id, by_member, cases, ById};
use partwise::assign::{group_file, Assignor};
use std::collections::{BTreeMap, BTreeSet};

/// Seeds enough to meet every Go map order of these groups' topics (at
/// most four) and doubly claimed partitions.
const SEEDS: u64 = 400;

#[test]
fn go_balancers_match_their_libraries() {
    let lines = cases("go_group_cases.jsonl");
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
    // Sarama's sticky strategies have their own file and replay
    // (`sarama_sticky`): their outcomes are too many to list.
    let sticky = [Assignor::SaramaSticky, Assignor::SaramaCooperativeSticky];
    for a in Assignor::GO.into_iter().filter(|a| !sticky.contains(a)) {
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
