//! What the client-vector replays share (`go_groups`, `python_groups`,
//! `node_groups`): the committed cases, and assignments keyed by member id
//! as the generators write them.

use partwise::assign::{Assignment, Group};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A member id's (topic, partition) list, sorted.
pub type ById = BTreeMap<String, Vec<(String, u32)>>;

/// The simulation's assignment, keyed by member id.
pub fn by_id(group: &Group, a: &Assignment) -> ById {
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

/// A library's assignment as a generator wrote it, keyed by member id.
pub fn by_member(v: &Value) -> ById {
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

/// The lines of `tests/vectors/assignors/FILE`.
pub fn cases(file: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/vectors/assignors")
        .join(file);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
