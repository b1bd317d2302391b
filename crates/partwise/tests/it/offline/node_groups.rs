//! @platformatic/kafka's group assigners against the real package: release
//! 2.12.1's `roundRobinAssigner` and `cooperativeStickyAssigner`, called as
//! its Consumer's leader calls them (`tests/vectors/regen/node-groups/run`)
//! on 52 groups each: fresh members, owned claims, mixed generations,
//! unequal subscriptions, static members and a named leader. Both are plain
//! functions of their input, so every line's group, read as a group file
//! (`assign --group`), must give exactly the package's one assignment, and
//! the withheld partitions of the cooperative one are exactly those the
//! package gave no one although a member subscribed to them.

use super::client_vectors::{by_id, by_member, cases};
use partwise::assign::{group_file, Assignor, Tp};
use std::collections::{BTreeMap, BTreeSet};

#[test]
fn platformatic_assigners_match_the_package() {
    let lines = cases("node_group_cases.jsonl");
    assert_eq!(lines.len(), 104);
    let mut bad = Vec::new();
    let mut checked: BTreeMap<String, usize> = BTreeMap::new();
    let mut kinds: BTreeSet<String> = BTreeSet::new();
    let mut withheld_seen = 0;
    let mut led = 0;
    for c in &lines {
        let spec = c["assignor"].as_str().unwrap();
        let assignor: Assignor = spec.parse().unwrap();
        assert!(assignor.deterministic(), "{spec}");
        assert_eq!(
            assignor.library_version().unwrap(),
            format!("@platformatic/kafka {}", c["version"].as_str().unwrap())
        );
        let what = format!("{} {spec} ({})", c["case"], c["kind"]);
        assert!(c["error"].is_null(), "{what}: the package threw");
        let group = group_file::parse(&c["group"].to_string()).unwrap().group;
        if group.leader.is_some_and(|l| l > 0) {
            led += 1;
        }
        let outcomes = c["outcomes"].as_array().unwrap();
        assert_eq!(outcomes.len(), 1, "{what}");
        let want = by_member(&outcomes[0]["assignment"]);
        let got = match assignor.assign(&group) {
            Ok(a) => a,
            Err(e) => {
                bad.push(format!("{what}: {e}"));
                continue;
            }
        };
        if by_id(&group, &got) != want {
            bad.push(format!(
                "{what}:\n  got  {:?}\n  want {want:?}",
                by_id(&group, &got)
            ));
            continue;
        }
        // What the package gave no one of the topics it dealt, a member
        // subscribing, is what partwise withholds.
        if assignor == Assignor::PlatformaticCooperativeSticky {
            let given: BTreeSet<(String, u32)> = want.values().flatten().cloned().collect();
            let leader = &group.members[group.leader.unwrap_or(0)];
            let mut missing = BTreeSet::new();
            for name in &leader.topics {
                let t = group.topic_index(name).unwrap();
                if !group.members.iter().any(|m| m.topics.contains(name)) {
                    continue;
                }
                for p in 0..group.topics[t as usize].partitions {
                    if !given.contains(&(name.clone(), p)) {
                        missing.insert(Tp {
                            topic: t,
                            partition: p,
                        });
                    }
                }
            }
            let withheld: BTreeSet<Tp> = got.withheld.iter().copied().collect();
            if withheld != missing {
                bad.push(format!(
                    "{what}: withheld {withheld:?}, unassigned {missing:?}"
                ));
            }
            withheld_seen += withheld.len();
        }
        kinds.insert(c["kind"].as_str().unwrap().to_string());
        *checked.entry(spec.to_string()).or_default() += 1;
    }
    assert!(
        bad.is_empty(),
        "{} of {} differ:\n{}",
        bad.len(),
        lines.len(),
        bad.join("\n")
    );
    for a in Assignor::PLATFORMATIC {
        let n = checked.get(a.spec()).copied().unwrap_or(0);
        assert!(n >= 40, "{a}: {n} groups checked");
    }
    for k in [
        "fresh",
        "owned-claims",
        "mixed-generations",
        "unequal-subscriptions",
        "static-members",
        "leader",
    ] {
        assert!(kinds.contains(k), "no {k} case");
    }
    assert!(withheld_seen > 0, "no case withholds a partition");
    assert!(
        led >= 10,
        "{led} lines with a leader other than the first member"
    );
}
