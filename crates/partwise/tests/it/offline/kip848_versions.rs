//! The KIP-848 server assignors of each Kafka release against the answers of
//! that release's own `kafka-group-coordinator` jar
//! (`tests/vectors/kip848/kip848_<version>.jsonl`, made by
//! `tests/vectors/kip848/run`): every line must match exactly.

use partwise::assign::{Assignor, Group, Member, Topic, Tp};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The releases whose jars produced the committed known answers.
const VERSIONS: [&str; 6] = ["4.0.0", "4.0.2", "4.1.1", "4.2.0", "4.3.0", "4.4.0"];

fn group(c: &Value) -> Group {
    let topics: Vec<Topic> = c["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| Topic::new(t[0].as_str().unwrap(), t[1].as_u64().unwrap() as u32))
        .collect();
    let mut g = Group::new(Vec::new(), topics);
    for m in c["members"].as_array().unwrap() {
        let topics = m["topics"].as_array().unwrap().iter();
        let mut mem = Member::new(
            m["id"].as_str().unwrap(),
            topics.map(|t| t.as_str().unwrap()),
        );
        mem.owned = m["owned"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| Tp {
                topic: g.topic_index(p[0].as_str().unwrap()).unwrap(),
                partition: p[1].as_u64().unwrap() as u32,
            })
            .collect();
        mem.instance_id = m["instance_id"].as_str().map(str::to_string);
        g.members.push(mem);
    }
    g
}

type ById = BTreeMap<String, Vec<(String, u32)>>;

fn expected(c: &Value) -> ById {
    c["expected"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, v)| {
            let mut list: Vec<(String, u32)> = v
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
            list.sort();
            (id.clone(), list)
        })
        .collect()
}

#[test]
fn kip848_assignors_match_each_release_jar() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/kip848");
    let mut checked = 0;
    let mut wrong: Vec<String> = Vec::new();
    for v in VERSIONS {
        let path = dir.join(format!("kip848_{v}.jsonl"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let c: Value = serde_json::from_str(line).unwrap();
            assert_eq!(c["version"], v, "{}", path.display());
            let spec = format!("{}@{v}", c["assignor"].as_str().unwrap());
            let what = format!("{spec} {}", c["case"].as_str().unwrap());
            let a: Assignor = spec.parse().unwrap_or_else(|e| panic!("{what}: {e}"));
            let g = group(&c);
            checked += 1;
            // The coordinator's memberIds() order, which uniform walks.
            let ids: Vec<&str> = g.members.iter().map(|m| m.id.as_str()).collect();
            let order: Vec<&str> = partwise::assign::order::java_hashmap_order(&ids)
                .into_iter()
                .map(|i| ids[i])
                .collect();
            let want: Vec<&str> = c["member_ids_order"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            if order != want {
                wrong.push(format!(
                    "{what}: memberIds() order {order:?}, the jar {want:?}"
                ));
            }
            match a.assign(&g) {
                Ok(got) if c.get("error").is_none() => {
                    let got: ById = g
                        .members
                        .iter()
                        .zip(&got.partitions)
                        .map(|(m, list)| {
                            let mut l: Vec<(String, u32)> = list
                                .iter()
                                .map(|tp| (g.topics[tp.topic as usize].name.clone(), tp.partition))
                                .collect();
                            l.sort();
                            (m.id.clone(), l)
                        })
                        .collect();
                    if got != expected(&c) {
                        wrong.push(format!("{what}: got {got:?}, the jar {:?}", expected(&c)));
                    }
                }
                Ok(_) => wrong.push(format!("{what}: assigned, the jar threw {}", c["error"])),
                Err(e) if c.get("error").is_none() => wrong.push(format!("{what}: {e}")),
                Err(_) => {}
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {checked} cases differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert_eq!(checked, 6 * 102);
}

#[test]
fn kip848_versions_pick_the_release_model() {
    let p = |s: &str| s.parse::<Assignor>();
    assert_eq!(p("kip848:uniform").unwrap(), Assignor::Kip848Uniform);
    assert_eq!(
        p("kip848:uniform@4.0.0").unwrap(),
        Assignor::Kip848Uniform400
    );
    for v in [
        "4.0.1", "4.0.2", "4.1", "4.1.1", "4.2", "4.3.2", "4.4", "4.4.0",
    ] {
        assert_eq!(
            p(&format!("kip848:uniform@{v}")).unwrap(),
            Assignor::Kip848Uniform,
            "{v}"
        );
        assert_eq!(
            p(&format!("kip848:range@{v}")).unwrap(),
            Assignor::Kip848Range,
            "{v}"
        );
    }
    assert_eq!(p("kip848:range@4.0").unwrap(), Assignor::Kip848Range);
    // The canonical spec round-trips.
    for a in [
        Assignor::Kip848Uniform,
        Assignor::Kip848Uniform400,
        Assignor::Kip848Range,
    ] {
        assert_eq!(p(a.spec()).unwrap(), a);
    }
    for bad in [
        "kip848:uniform@4.0",
        "kip848:uniform@3.9",
        "kip848:range@5.0",
        "java:range@4.1",
        "kip848:uniform@",
    ] {
        let e = p(bad).unwrap_err();
        assert!(e.is_unknown_spec(), "{bad}: {e}");
        assert!(e.to_string().contains(bad), "{bad}: {e}");
    }
}

/// The smallest case, from the committed answers of 4.0.0 and 4.1.1.
#[test]
fn kip848_uniform_smallest_case_by_release() {
    let g = Group::new(
        partwise::assign::member_names(3)
            .into_iter()
            .map(|id| Member::new(id, ["clicks.v2"]))
            .collect(),
        vec![Topic::new("clicks.v2", 1)],
    );
    let owner = |spec: &str| {
        let a = spec.parse::<Assignor>().unwrap().assign(&g).unwrap();
        g.members[a.partitions.iter().position(|l| !l.is_empty()).unwrap()]
            .id
            .clone()
    };
    assert_eq!(owner("kip848:uniform@4.0.0"), "m00");
    assert_eq!(owner("kip848:uniform@4.1.1"), "m01");
    assert_eq!(owner("kip848:uniform@4.4.0"), "m01");
    assert_eq!(owner("kip848:uniform"), "m01");
}

/// Each release's own API versions (read from its kafka-clients jar's
/// message schemas by `tests/vectors/kip848/api_versions.py`) pick its line
/// and, from 4.1 on, its `uniform` model; a 4.0 broker's `uniform` stays
/// undecided (4.0.0 and 4.0.2 advertise the same versions).
#[test]
fn kip848_model_from_each_release_api_versions() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/kip848/api_versions.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let releases = v["max_stable"].as_object().unwrap();
    assert_eq!(releases.len(), 6);
    for (release, apis) in releases {
        let apis: Vec<(i16, i16)> = apis
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.parse().unwrap(), v.as_i64().unwrap() as i16))
            .collect();
        let line = &release[..3];
        let u = partwise::assign::kip848_model_for_broker("uniform", &apis);
        let r = partwise::assign::kip848_model_for_broker("range", &apis);
        assert_eq!(u.line, Some(line), "{release}: {}", u.evidence);
        assert_eq!(r.assignor, Some(Assignor::Kip848Range), "{release}");
        let want = (line != "4.0").then_some(Assignor::Kip848Uniform);
        assert_eq!(u.assignor, want, "{release}: {}", u.evidence);
        assert!(
            u.evidence.contains(&format!("Kafka {line}")),
            "{release}: {}",
            u.evidence
        );
    }
    let none = partwise::assign::kip848_model_for_broker("uniform", &[(0, 9)]);
    assert_eq!((none.line, none.assignor), (None, None));
}
