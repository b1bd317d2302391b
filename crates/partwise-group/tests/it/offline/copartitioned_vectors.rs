//! The runtime's leader replays the copartitioned consistency vectors
//! (`tests/vectors/copartitioned/vectors.txt`, which the Java port and the
//! KafkaJS binding replay too): each case's members, with their owned
//! partitions, through `leader_sync_assignments`, the bytes this runtime
//! sends in SyncGroup, decoded: every member's partitions and user data as
//! the file says. The file is written by the example `copartitioned_vectors`
//! from the same leader, so a change to the leader that changes an answer
//! fails here until the file is regenerated (and then every port must follow).

use partwise_group::protocol::{Assignment, Subscription};
use partwise_group::units::{leader_sync_assignments, JoinedMember};
use std::collections::BTreeMap;
use std::path::Path;

struct Case {
    name: String,
    counts: BTreeMap<String, i32>,
    members: Vec<JoinedMember>,
    expect: BTreeMap<String, Vec<(String, i32)>>,
    userdata: Vec<u8>,
}

fn list(s: &str) -> Vec<String> {
    if s == "-" {
        Vec::new()
    } else {
        s.split(',').map(String::from).collect()
    }
}

fn partitions(s: &str) -> Vec<(String, i32)> {
    list(s)
        .iter()
        .map(|tp| {
            let (t, p) = tp.rsplit_once(':').expect("TOPIC:P");
            (t.to_string(), p.parse().expect("a partition"))
        })
        .collect()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn cases() -> Vec<Case> {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/copartitioned/vectors.txt");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut out = Vec::new();
    let mut c: Option<Case> = None;
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f[0] {
            "case" => {
                c = Some(Case {
                    name: f[1].into(),
                    counts: BTreeMap::new(),
                    members: Vec::new(),
                    expect: BTreeMap::new(),
                    userdata: Vec::new(),
                })
            }
            "topic" => {
                c.as_mut()
                    .unwrap()
                    .counts
                    .insert(f[1].into(), f[2].parse().unwrap());
            }
            "member" => {
                let owned = partitions(f[4]);
                c.as_mut().unwrap().members.push(JoinedMember {
                    member_id: f[1].into(),
                    instance_id: (f[2] != "-").then(|| f[2].to_string()),
                    subscription: Subscription {
                        topics: list(f[3]),
                        // What every replay of the file assumes: claims
                        // are of generation 1, no claims of none.
                        generation: if owned.is_empty() { -1 } else { 1 },
                        owned,
                        user_data: None,
                    },
                });
            }
            "expect" => {
                c.as_mut()
                    .unwrap()
                    .expect
                    .insert(f[1].into(), partitions(f[2]));
            }
            "userdata" => c.as_mut().unwrap().userdata = hex(f[1]),
            "end" => out.push(c.take().unwrap()),
            _ => panic!("{}: unexpected line {line:?}", file.display()),
        }
    }
    out
}

#[test]
fn the_runtimes_leader_sends_what_the_vectors_say() {
    let cases = cases();
    assert!(cases.len() >= 878, "{} cases", cases.len());
    assert!(cases.iter().any(|c| c.members.len() > 100));
    assert!(cases.iter().any(|c| c.name.starts_with("claims-")));
    for c in &cases {
        let sent = leader_sync_assignments("copartitioned", &c.members, &c.counts).unwrap();
        assert_eq!(sent.len(), c.members.len(), "{}", c.name);
        for (member, bytes) in sent {
            let got = Assignment::decode(bytes).unwrap();
            let mut want = c.expect.get(&member).cloned().unwrap_or_default();
            want.sort();
            let mut parts = got.partitions.clone();
            parts.sort();
            assert_eq!(parts, want, "{} member {member}", c.name);
            assert_eq!(
                got.user_data.as_deref(),
                Some(&c.userdata[..]),
                "{} member {member}: user data",
                c.name
            );
        }
    }
}
