//! `partwise salt`: salting a hot key, for producers and readers, and for a
//! key of a co-partition group every topic alike.

use crate::common::{
    fails_with as fails, json_doc as json, ndjson, output, partwise, temp_file as file,
};
use serde_json::Value;

#[test]
fn salt_seed_example() {
    let v = json(
        &[
            "salt",
            "--key",
            "ID",
            "--share",
            "0.95",
            "-p",
            "12",
            "--target-ratio",
            "4",
        ],
        0,
    );
    let s = v["range"].as_u64().unwrap();
    assert!(v["after_max_over_mean"].as_f64().unwrap() <= 4.0);
    assert!(v["before_max_over_mean"].as_f64().unwrap() > 11.0);
    assert_eq!(v["salted_keys"][0], "ID_1");
    assert!(v["spans"].as_array().unwrap().len() as u64 <= s);
    // Salting over 3 spreads ID over up to 3 partitions (the seed's example).
    let three = partwise()
        .args([
            "route", "ID_1", "ID_2", "ID_3", "-p", "12", "--format", "ndjson",
        ])
        .output()
        .unwrap();
    let parts: std::collections::BTreeSet<u64> = String::from_utf8(three.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["partition"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert!((1..=3).contains(&parts.len()));
    fails(
        &["salt", "--key", "ID", "--share", "1.5", "-p", "12"],
        "share",
    );
    fails(
        &["salt", "--key", "ID", "--share", "0.9", "-p", "-2"],
        "negative",
    );
}

/// The partition `partwise route` puts `key` on at `n` (the independent path).
fn routed(key: &str, n: &str) -> u64 {
    let out = partwise()
        .args(["route", key, "-p", n, "--format", "ndjson"])
        .output()
        .unwrap();
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["partition"]
        .as_u64()
        .unwrap()
}

#[test]
fn salt_puts_the_unsalted_key_where_route_does() {
    // Before salting, ID is written as ID, not ID_1.
    let v = json(&["salt", "--key", "ID", "--share", "0.95", "-p", "20"], 0);
    let before: Vec<f64> = v["before"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let hot = before
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .unwrap()
        .0;
    assert_eq!(hot as u64, routed("ID", "20"));
    // A target no range reaches is a finding, with the best found.
    let v = json(
        &[
            "salt",
            "--key",
            "ID",
            "--share",
            "0.95",
            "-p",
            "12",
            "--target-ratio",
            "1.0",
            "--max-range",
            "20",
        ],
        1,
    );
    assert_eq!(v["range"], Value::Null);
    assert_eq!(v["target_reached"], false);
}

#[test]
fn salt_reads_the_measured_counts_and_cools_the_busiest_consumer() {
    let mut text = String::from("ID,950000\n");
    for i in 0..50 {
        text.push_str(&format!("user-{i},1000\n"));
    }
    let f = file(text.as_bytes());
    let path = f.path().to_str().unwrap();
    let args = [
        "salt",
        "-i",
        path,
        "--counts",
        "-p",
        "12",
        "--consumers",
        "4",
        "--target-ratio",
        "1.5",
    ];
    let v = json(&args, 0);
    // Only the heavy key is salted (the default threshold is 1/12 of traffic).
    assert_eq!(v["salted"].as_array().unwrap().len(), 1);
    assert_eq!(v["salted"][0]["key"], "ID");
    assert_eq!(
        v["salted"][0]["partition"].as_u64(),
        Some(routed("ID", "12"))
    );
    assert_eq!(v["target_on"], "consumers");
    let c = &v["consumers"];
    let (before, after) = (
        c["busiest_before"].as_f64().unwrap(),
        c["busiest_after"].as_f64().unwrap(),
    );
    assert!(before > 0.9, "{v}");
    // 4 consumers: the mean is 1/4 of the traffic; the busiest is under 1.5 x.
    assert!(after <= 1.5 / 4.0 + 1e-9, "{after}");
    assert!(v["after_max_over_mean"].as_f64().unwrap() <= 1.5 + 1e-9);
    // The loads come from the file: everything but ID is where route puts it.
    let after_loads: Vec<f64> = v["after"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!((after_loads.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    // The table says the same, and who carries what.
    let out = partwise().args(args).output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("busiest consumer") && table.contains("m03"),
        "{table}"
    );
    // Named keys that are not in the file are an error naming them.
    fails(
        &["salt", "-i", path, "--counts", "-p", "12", "--key", "nope"],
        "'nope'",
    );
    // Unreachable with more consumers than partitions: exit 1.
    json(
        &[
            "salt",
            "-i",
            path,
            "--counts",
            "-p",
            "12",
            "--consumers",
            "16",
            "--target-ratio",
            "1.1",
            "--max-range",
            "50",
        ],
        1,
    );
}

/// The seeds' ten symbols with BBCA at 45% of the ticks.
const TICKER_COUNTS: &str = "BBCA,4500\nANTM,611\nASII,611\nUNVR,611\nTLKM,611\nBBRI,611\nBMRI,611\nGOTO,611\nADRO,611\nICBP,611\n";

/// Where `partwise route` puts each key with this partitioner and count.
fn routed_all(keys: &[String], partitions: u64, spec: &str) -> Vec<u64> {
    let p = partitions.to_string();
    let mut args = vec!["route", "-p", &p, "-P", spec];
    args.extend(keys.iter().map(String::as_str));
    let v = json(&args, 0);
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r["partition"].as_u64().unwrap())
        .collect()
}

#[test]
fn salting_a_joined_key_salts_every_topic_alike_and_the_join_still_holds() {
    let counts = file(TICKER_COUNTS);
    let path = counts.path().to_str().unwrap();
    let topology = crate::common::example("ticker.toml");
    let args = [
        "salt",
        "--topology",
        &topology,
        "--topic",
        "market-updates",
        "-i",
        path,
        "--counts",
        "--key",
        "BBCA",
    ];
    let v = json(&args, 0);
    assert_eq!(v["feasible"], true, "{v}");
    assert_eq!(v["groups"], serde_json::json!(["ticker"]));
    // Every topic of the group, each with its declared producer and its change.
    let topics = v["topics"].as_array().unwrap();
    let names: Vec<&str> = topics.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["market-updates", "notifications"]);
    let producers: Vec<&str> = topics
        .iter()
        .flat_map(|t| t["producers"].as_array().unwrap())
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(producers, ["market-feed", "alert-service"]);
    let s = v["range_used"].as_u64().unwrap();
    assert!(s > 1 && v["target_reached"] == true, "{v}");
    for t in topics {
        for p in t["producers"].as_array().unwrap() {
            let change = p["change"].as_str().unwrap();
            assert!(change.contains(&format!("BBCA_1 .. BBCA_{s}")), "{change}");
            assert!(
                change.contains("Partitioners.DefaultPartitioner"),
                "{change}"
            );
        }
    }
    // Route the proposed sub-keys through each topic's own producer: every
    // one lands on one partition number in both topics.
    let subs: Vec<String> = (1..=s).map(|i| format!("BBCA_{i}")).collect();
    let mut per_topic = Vec::new();
    for t in topics {
        let n = t["partitions"].as_u64().unwrap();
        for p in t["producers"].as_array().unwrap() {
            per_topic.push(routed_all(&subs, n, p["partitioner"].as_str().unwrap()));
        }
    }
    assert_eq!(per_topic.len(), 2);
    assert_eq!(per_topic[0], per_topic[1]);
    // And they are the partitions the plan shows.
    for (i, row) in v["sub_keys"].as_array().unwrap().iter().enumerate() {
        assert_eq!(row["partitions"]["market-updates"], per_topic[0][i]);
        assert_eq!(row["partitions"]["notifications"], per_topic[1][i]);
    }
    // Salting market-updates alone, as before: the alerts stay keyed BBCA,
    // so the ticks of some sub-keys land where no alert of BBCA is.
    let alerts = routed_all(&["BBCA".to_string()], 6, "kafkajs")[0];
    assert!(per_topic[0].iter().any(|&q| q != alerts), "{per_topic:?}");
    let spans = v["salted"][0]["spans"].as_array().unwrap();
    assert_eq!(v["salted"][0]["join_units"], spans.len());
    assert!(spans.len() > 1);
    // The join-keeping alternative, from the same counts: BBCA alone on the
    // partition it has now, carrying exactly its own share.
    let iso = &v["isolation"];
    assert_eq!(iso["reserved"][0]["partition"], alerts);
    let spec = iso["spec"].as_str().unwrap();
    let keys: Vec<String> = TICKER_COUNTS
        .lines()
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    let isolated = routed_all(&keys, 6, spec);
    for (k, q) in keys.iter().zip(&isolated) {
        assert_eq!(*q == alerts, k == "BBCA", "{k} on {q}");
    }
    let busiest = iso["busiest"].as_f64().unwrap();
    assert!((busiest - 4500.0 / 9999.0).abs() < 1e-9, "{iso}");
    let table = String::from_utf8(output(&args, 0).stdout).unwrap();
    for needle in [
        "market-feed",
        "alert-service",
        "notifications",
        "join state is spread over",
        "keeps the join whole",
    ] {
        assert!(table.contains(needle), "{needle}: {table}");
    }
}

#[test]
fn salting_a_joined_key_is_refused_when_a_partner_producer_places_sub_keys_elsewhere() {
    let counts = file(TICKER_COUNTS);
    let path = counts.path().to_str().unwrap();
    // The seeds' Go service also writes notifications, with Sarama's default hash.
    let text = std::fs::read_to_string(crate::common::example("ticker.toml"))
        .unwrap()
        .replace(
            "[[copartition]]",
            "[[topic.producer]]\nname = \"go-alerts\"\npartitioner = \"sarama\"\n\n[[copartition]]",
        );
    let topo = file(text);
    let t = topo.path().to_str().unwrap();
    let v = json(
        &[
            "salt",
            "--topology",
            t,
            "--topic",
            "market-updates",
            "-i",
            path,
            "--counts",
            "--key",
            "BBCA",
        ],
        1,
    );
    assert_eq!(v["feasible"], false);
    let r = &v["refusals"][0];
    assert_eq!(r["kind"], "sub-keys-land-apart");
    let m = r["message"].as_str().unwrap();
    assert!(
        m.contains("go-alerts") && m.contains("sarama.NewHashPartitioner"),
        "{m}"
    );
    let fix = r["fix"].as_str().unwrap();
    assert!(fix.contains("sarama.NewMurmur2Partitioner"), "{fix}");
    // Isolation is still offered: every producer switches to one partitioner.
    assert!(v["isolation"]["spec"]
        .as_str()
        .unwrap()
        .starts_with("priority:"));
}

#[test]
fn salt_without_a_topology_says_joined_partners_need_the_same_sub_keys() {
    let counts = file(TICKER_COUNTS);
    let path = counts.path().to_str().unwrap();
    let v = json(
        &["salt", "-i", path, "--counts", "-p", "6", "--key", "BBCA"],
        0,
    );
    assert!(v["note"].as_str().unwrap().contains("--topology"), "{v}");
    let o = output(&["salt", "--key", "ID", "--share", "0.6", "-p", "20"], 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains("note: if this topic is joined"));
    // A topic of a topology joined to nothing is salted alone, without the note.
    let solo = file(
        "[[topic]]\nname = \"solo\"\npartitions = 6\nproducer = [{ partitioner = \"kafkajs\" }]\n",
    );
    let solo_path = solo.path().to_str().unwrap();
    let args = [
        "salt",
        "--topology",
        solo_path,
        "--topic",
        "solo",
        "-i",
        path,
        "--counts",
        "--key",
        "BBCA",
    ];
    let o = output(&[&args[..], &["--format", "json"]].concat(), 0);
    assert!(String::from_utf8_lossy(&o.stderr).contains("solo is in no co-partition group"));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.get("note").is_none(), "{v}");
    assert_eq!(v["partitioner"], "kafkajs");
    let topology = crate::common::example("ticker.toml");
    fails(
        &[
            "salt",
            "--topology",
            &topology,
            "--topic",
            "nope",
            "-i",
            path,
            "--counts",
        ],
        "--topic 'nope' is not a [[topic]]",
    );
    fails(
        &[
            "salt",
            "--topology",
            &topology,
            "--topic",
            "market-updates",
            "-i",
            path,
            "-p",
            "6",
        ],
        "cannot be used with",
    );
}

/// `salt`'s `before` row is the topic as it is now: the unsalted key on the
/// partition `route` gives it, not on the partition of `KEY_1`.
#[test]
fn salt_before_row_puts_the_unsalted_key_where_route_does() {
    let rows = ndjson(&["route", "ID", "-p", "20"]);
    let routed = rows[0]["partition"].as_u64().unwrap();
    assert_eq!(routed, 19, "route ID -p 20");
    let first_salt = ndjson(&["route", "ID_1", "-p", "20"])[0]["partition"]
        .as_u64()
        .unwrap();
    assert_ne!(first_salt, routed, "the test needs KEY_1 elsewhere");
    let hottest = |v: &Value| -> usize {
        let loads: Vec<f64> = v["before"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let max = loads.iter().cloned().fold(0.0, f64::max);
        loads.iter().position(|&x| x == max).unwrap()
    };
    // One JSON document from a run that must exit with one of `codes`.
    let json = |args: &[&str], codes: &[i32]| -> Value {
        let out = partwise()
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        let code = out.status.code().unwrap_or(-1);
        assert!(
            codes.contains(&code),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = json(&["salt", "--key", "ID", "--share", "0.6", "-p", "20"], &[0]);
    assert_eq!(hottest(&v), routed as usize, "{v}");
    let before = v["before"][routed as usize].as_f64().unwrap();
    assert!((before - (0.6 + 0.4 / 20.0)).abs() < 1e-9, "{before}");
    // The measured distribution: ID at 60% of the lines, the rest spread.
    let mut lines = String::from("ID,600\n");
    for i in 0..400 {
        lines.push_str(&format!("k{i},1\n"));
    }
    let f = file(lines.as_bytes());
    let file = f.path().to_str().unwrap();
    let v = json(&["salt", "-i", file, "--counts", "-p", "20"], &[0, 1]);
    assert_eq!(hottest(&v), routed as usize, "{v}");
    assert_eq!(v["salted"][0]["partition"], routed, "{v}");
}

#[test]
fn salting_never_proposes_a_key_the_counts_already_hold() {
    // Real keys BBCA_1 and BBCA_2 beside BBCA: sub-keys BBCA_1 .. BBCA_S
    // would write into them, and a reader stripping the suffix would fold
    // them into BBCA.
    let counts = file(format!("{TICKER_COUNTS}BBCA_1,5\nBBCA_2,7\n"));
    let path = counts.path().to_str().unwrap();
    let topology = crate::common::example("ticker.toml");
    let joined = [
        "salt",
        "--topology",
        &topology,
        "--topic",
        "market-updates",
        "-i",
        path,
        "--counts",
        "--key",
        "BBCA",
    ];
    let v = json(&joined, 0);
    assert_eq!(v["feasible"], true, "{v}");
    assert_eq!(v["separator"]["separator"], "-", "{v}");
    assert_eq!(
        v["separator"]["existing_sub_keys"],
        serde_json::json!(["BBCA_1", "BBCA_2"])
    );
    let held: Vec<&str> = TICKER_COUNTS
        .lines()
        .map(|l| l.split(',').next().unwrap())
        .chain(["BBCA_1", "BBCA_2"])
        .collect();
    for row in v["sub_keys"].as_array().unwrap() {
        let sub = row["sub_key"].as_str().unwrap();
        assert!(sub.starts_with("BBCA-"), "{sub}");
        assert!(!held.contains(&sub), "{sub} is a real key");
    }
    let change = v["topics"][0]["producers"][0]["change"].as_str().unwrap();
    assert!(change.contains("BBCA-1 .. BBCA-"), "{change}");
    let mut table = joined.to_vec();
    table.extend(["--format", "table"]);
    let out = crate::common::text(&partwise().args(&table).output().unwrap().stdout);
    assert!(out.contains("already hold BBCA_1, BBCA_2"), "{out}");
    // The same without the topology.
    let alone = ["salt", "-p", "6", "-i", path, "--counts", "--key", "BBCA"];
    let v = json(&alone, 0);
    assert_eq!(v["separator"]["separator"], "-", "{v}");
    // Every separator taken: refused, the keys named.
    let all: String = ["_", "-", "#", "~", "|", "."]
        .iter()
        .map(|s| format!("BBCA{s}1,3\n"))
        .collect();
    let counts = file(format!("{TICKER_COUNTS}{all}"));
    let path = counts.path().to_str().unwrap();
    fails(
        &["salt", "-p", "6", "-i", path, "--counts", "--key", "BBCA"],
        "BBCA_1",
    );
}
