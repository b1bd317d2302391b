//! `partwise slot`: Redis Cluster slots of keys, hash tags included.

use crate::common::{ndjson, SYMBOLS};
use serde_json::Value;

#[test]
fn redis_seed_symbols() {
    let mut args = vec!["slot"];
    let keys: Vec<String> = SYMBOLS
        .iter()
        .flat_map(|s| {
            [
                format!("market:{{{s}}}"),
                format!("notif:{{{s}}}"),
                format!("market:{s}"),
                format!("notif:{s}"),
            ]
        })
        .collect();
    args.extend(keys.iter().map(String::as_str));
    let rows = ndjson(&args);
    let (mut tagged, mut plain) = (0, 0);
    for q in rows.chunks(4) {
        tagged += usize::from(q[0]["slot"] == q[1]["slot"]);
        plain += usize::from(q[2]["slot"] == q[3]["slot"]);
        assert_eq!(q[0]["hashtag"], q[1]["hashtag"]);
        assert_eq!(q[2]["hashtag"], Value::Null);
    }
    assert_eq!((tagged, plain), (10, 0));
    assert_eq!(rows[0]["slot"], 12355);
}

#[test]
fn slot_fields_and_tricky_braces() {
    let rows = ndjson(&["slot", "{}", "{{a}}", "a{b}{c}", "}{a}"]);
    let keys: Vec<&str> = rows[0]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert!(keys.starts_with(&["key", "key_hex", "hashtag"]) && keys.contains(&"slot"));
    let tags: Vec<Value> = rows.iter().map(|r| r["hashtag"].clone()).collect();
    assert_eq!(tags, [Value::Null, "{a".into(), "b".into(), "a".into()]);
}
