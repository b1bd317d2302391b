//! The reference side of the co-partitioned consistency vectors: reads one
//! group as JSON on stdin and prints the core's `copartitioned` assignment
//! and co-partition groups as JSON, so the bindings in other runtimes
//! (`bindings/kafkajs`, `bindings/java`) can be compared with the Rust
//! assignor on shapes the CLI cannot state (unequal subscriptions, static
//! members).
//!
//! Input: `{"topics": {"a": 6, ...}, "members": [{"id": "m0",
//! "instance_id": null, "topics": ["a"], "owned": [["a", 0]]}, ...]}`.
//! Output: `{"assignment": {"m0": [["a", 0], ...]}, "unit_groups": [["a",
//! "b"], ...]}`. Run: `cargo run -q -p partwise --example copartitioned_json
//! < group.json`.

use partwise::assign::units::{named_group, unit_groups};
use partwise::assign::{Assignor, Member};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::Read;
use std::process::ExitCode;

fn group(v: &Value) -> Result<partwise::assign::Group, String> {
    let counts: BTreeMap<String, u32> = v["topics"]
        .as_object()
        .ok_or("topics: expected an object of topic to partition count")?
        .iter()
        .map(|(t, n)| {
            let n = n.as_u64().ok_or(format!("topics: {t}: not a count"))?;
            Ok((
                t.clone(),
                u32::try_from(n).map_err(|e| format!("{t}: {e}"))?,
            ))
        })
        .collect::<Result<_, String>>()?;
    let members = v["members"]
        .as_array()
        .ok_or("members: expected a list")?
        .iter()
        .map(|m| {
            let id = m["id"].as_str().ok_or("member: id missing")?;
            let topics: Vec<String> = m["topics"]
                .as_array()
                .ok_or(format!("member {id}: topics missing"))?
                .iter()
                .filter_map(|t| t.as_str().map(String::from))
                .collect();
            let mut member = Member::new(id, topics);
            member.instance_id = m["instance_id"].as_str().map(String::from);
            let owned = m["owned"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|tp| Some((tp[0].as_str()?.to_string(), tp[1].as_i64()? as i32)))
                .collect();
            Ok((member, owned))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(named_group(members, &counts))
}

fn main() -> ExitCode {
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        eprintln!("error: stdin: {e}");
        return ExitCode::from(2);
    }
    let parsed = serde_json::from_str::<Value>(&text)
        .map_err(|e| format!("stdin: not JSON: {e}"))
        .and_then(|v| group(&v));
    let g = match parsed {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let a = match Assignor::Copartitioned.assign(&g) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: assignor: {e}");
            return ExitCode::from(2);
        }
    };
    let mut out = Map::new();
    for (m, parts) in a.partitions.iter().enumerate() {
        let list: Vec<Value> = parts
            .iter()
            .map(|tp| json!([g.topics[tp.topic as usize].name, tp.partition]))
            .collect();
        out.insert(g.members[m].id.clone(), Value::Array(list));
    }
    println!(
        "{}",
        json!({"assignment": out, "unit_groups": unit_groups(&g)})
    );
    ExitCode::SUCCESS
}
