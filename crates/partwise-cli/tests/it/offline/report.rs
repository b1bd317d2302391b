//! The contract of `partwise report`: the page and its JSON twin on the
//! seeds' ticker, exit codes, the same answers as `check` and `skew`, escaping
//! of hostile names, a page that fetches nothing, and the committed example
//! being what the command makes now.

use crate::common::{example, fails_with, output, partwise, repo, temp_file, text};
use serde_json::Value;

fn ticker_args() -> Vec<String> {
    vec![
        "report".into(),
        example("ticker.toml"),
        "-i".into(),
        example("symbols.txt"),
    ]
}

/// The ticker with its traffic: `examples/ticks.csv`, BBCA 45% of the ticks.
fn ticker_counts_args() -> Vec<String> {
    vec![
        "report".into(),
        example("ticker.toml"),
        "--counts".into(),
        example("ticks.csv"),
    ]
}

fn run(args: &[String], code: i32) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    text(&output(&args, code).stdout)
}

fn json(args: &[String], code: i32) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format".into(), "json".into()]);
    serde_json::from_str(&run(&a, code)).unwrap()
}

fn areas(v: &Value) -> Vec<(&str, bool)> {
    v["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["area"].as_str().unwrap(), x["ok"].as_bool().unwrap()))
        .collect()
}

#[test]
fn ticker_json_twin_carries_every_part() {
    // Ten sample keys over six partitions put three on partition 0 and 2,
    // but keys without counts are no traffic: nothing is hot, and the
    // check holds (exit 0).
    let v = json(&ticker_args(), 0);
    assert_eq!(v["ok"], true);
    assert_eq!(v["check"]["ok"], true);
    assert_eq!(v["sample_keys"], 10);
    assert_eq!(
        areas(&v),
        [("layout", true), ("placement", true), ("redis", true)]
    );
    assert_eq!(v["skew"][0]["weighted"], false);
    assert_eq!(v["skew"][0]["load_unit"], "keys");
    assert_eq!(v["skew"][0]["hot_partitions"], serde_json::json!([]));
    // With the ticks, BBCA's 45% makes partition 0 hot: findings (exit 1).
    let w = json(&ticker_counts_args(), 1);
    assert_eq!(w["ok"], false);
    assert_eq!(
        areas(&w),
        [
            ("layout", true),
            ("placement", true),
            ("redis", true),
            ("skew", false),
            ("skew", false)
        ]
    );
    let hot = &w["verdict"][3];
    assert!(
        hot["text"].as_str().unwrap().contains("HOT partition 0"),
        "{hot}"
    );
    assert!(!hot["fixes"].as_array().unwrap().is_empty());
    assert_eq!(w["skew"][0]["load_unit"], "records");

    // The partition map: every symbol on one partition in both topics.
    let map = &v["partition_maps"][0];
    assert_eq!(map["name"], "ticker");
    assert_eq!(map["producers"].as_array().unwrap().len(), 2);
    let rows = map["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 10);
    assert_eq!(rows[0]["key"], "BBCA");
    assert!(rows
        .iter()
        .all(|r| r["aligned"] == true && r["partitions"][0] == r["partitions"][1]));

    // Placement: whole at the declared 3 members; the second matrix is at 4,
    // where KafkaJS's round-robin splits all six indices.
    let p = &v["placements"][0];
    assert_eq!(p["verdict"]["units_whole"], true);
    let m = p["matrices"].as_array().unwrap();
    assert_eq!(m.len(), 2);
    assert_eq!(
        (
            m[0]["declared"].clone(),
            m[0]["members"].as_array().unwrap().len()
        ),
        (Value::Bool(true), 3)
    );
    assert_eq!(m[0]["split_indices"], serde_json::json!([]));
    assert_eq!(
        (
            m[1]["declared"].clone(),
            m[1]["members"].as_array().unwrap().len()
        ),
        (Value::Bool(false), 4)
    );
    assert_eq!(m[1]["split_indices"], serde_json::json!([0, 1, 2, 3, 4, 5]));
    let sweep = &p["sweep"];
    assert_eq!(
        sweep["member_counts"],
        serde_json::json!([1, 2, 3, 4, 5, 6, 7, 8])
    );
    let rr = sweep["assignors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["assignor"] == "kafkajs:roundrobin")
        .unwrap();
    assert_eq!(
        rr["split_counts"],
        serde_json::json!([0, 0, 0, 6, 6, 0, 6, 6])
    );
    let co = sweep["assignors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["assignor"] == "copartitioned")
        .unwrap();
    assert!(co["split_counts"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c == 0));

    // Resize: 6 -> 12 moves exactly half of uniformly hashed keys.
    let r = &v["resize"][0];
    assert_eq!(r["partitions"], 6);
    let twelve = r["to"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["partitions"] == 12)
        .unwrap();
    assert_eq!(twelve["expected_moved_fraction"], 0.5);
    assert!(twelve["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f.as_str().unwrap().contains("notifications")));

    // Redis: both members of every symbol in one slot.
    let f = &v["redis_families"][0];
    assert!(f["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["colocated"] == true));
}

#[test]
fn ticker_agrees_with_check_and_skew() {
    let v = json(&ticker_counts_args(), 1);
    let check = output(
        &[
            "check",
            &example("ticker.toml"),
            "--counts",
            &example("ticks.csv"),
            "--format",
            "json",
        ],
        0,
    );
    let check: Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(v["check"], check);
    assert_eq!(check["copartition_groups"][0]["records"], 18000);
    let skew = output(
        &[
            "skew",
            "-p",
            "6",
            "-P",
            "kafkajs",
            "-i",
            &example("ticks.csv"),
            "--counts",
            "--consumers",
            "3",
            "--assignor",
            "kafkajs:roundrobin",
            "--format",
            "json",
        ],
        1,
    );
    let skew: Value = serde_json::from_slice(&skew.stdout).unwrap();
    let mine = &v["skew"][0];
    assert_eq!(mine["topic"], "market-updates");
    for field in [
        "loads",
        "hot_partitions",
        "idle_partitions",
        "heavy_hitters",
        "consumers",
        "keys",
        "total",
    ] {
        assert_eq!(mine[field], skew[field], "{field}");
    }
}

#[test]
fn html_page_is_the_verdict_first_and_fetches_nothing() {
    let page = run(&ticker_counts_args(), 1);
    let v = json(&ticker_counts_args(), 1);
    assert!(page.starts_with("<!DOCTYPE html>"));
    // Every verdict line of the twin is on the page, before any other section.
    let first_section = page.find("<section id=\"layout\"").unwrap();
    for x in v["verdict"].as_array().unwrap() {
        let t = x["text"].as_str().unwrap();
        let at = page
            .find(t)
            .unwrap_or_else(|| panic!("'{t}' not on the page"));
        assert!(at < first_section, "'{t}' after the verdict");
    }
    assert!(page.contains("class=\"split\">&#10007; SPLIT</td>"));
    assert!(page.contains("&#9650; HOT"));
    // Nothing remote: no URL, no src, no stylesheet or font link, no url() but to the page's own ids.
    for needle in ["http://", "https://", "src=", "<link", "@import", "//fonts"] {
        assert!(!page.contains(needle), "the page holds {needle}");
    }
    let urls: Vec<&str> = page
        .match_indices("url(")
        .map(|(i, _)| &page[i..i + 5])
        .collect();
    assert!(
        page.match_indices("url(")
            .all(|(i, _)| page[i + 4..].starts_with('#')),
        "{urls:?}"
    );
    // Keyboard and print: a skip link to a focusable verdict, headers with scope, print styles.
    assert!(page.contains("<a class=\"skip\" href=\"#verdict\">"));
    assert!(page.contains("<section id=\"verdict\" tabindex=\"-1\""));
    assert!(page.contains("<th scope=\"col\">") && page.contains("<th scope=\"row\">"));
    assert!(page.contains("@media print"));
}

#[test]
fn hostile_names_are_escaped() {
    let keys = temp_file("<script>alert(1)</script>\n\"onmouseover='x'&amp;\nBBCA\n");
    let topo = std::fs::read_to_string(example("ticker.toml"))
        .unwrap()
        .replace(
            "members = 3",
            "members = [\"<img onerror=x>\", \"m&1\", \"m'2\"]",
        );
    let topo = temp_file(topo);
    let args: Vec<String> = vec![
        "report".into(),
        topo.path().to_str().unwrap().into(),
        "-i".into(),
        keys.path().to_str().unwrap().into(),
    ];
    let page = run(&args, 0);
    assert!(
        !page.contains("<script>alert"),
        "a key's markup reached the page"
    );
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("&quot;onmouseover=&#39;x&#39;&amp;amp;"));
    assert!(
        !page.contains("<img onerror"),
        "a member id's markup reached the page"
    );
    assert!(page.contains("&lt;img onerror=x&gt;"));
    assert!(page.contains("m&amp;1"));
    // The only script is the report's own.
    assert_eq!(page.matches("<script").count(), 1);
    // The twin has them as they are.
    let v = json(&args, 0);
    assert_eq!(
        v["partition_maps"][0]["rows"][0]["key"],
        "<script>alert(1)</script>"
    );
}

#[test]
fn exit_codes() {
    // No sample keys: nothing hot, the check holds: 0.
    let page = run(&["report".into(), example("ticker.toml")], 0);
    assert!(page.contains("Verdict: everything holds"));
    // A declared count that splits: 1.
    let topo = temp_file(
        std::fs::read_to_string(example("ticker.toml"))
            .unwrap()
            .replace("members = 3", "members = 4"),
    );
    let v = json(&["report".into(), topo.path().to_str().unwrap().into()], 1);
    assert_eq!(v["placements"][0]["verdict"]["units_whole"], false);
    assert!(v["verdict"][1]["text"]
        .as_str()
        .unwrap()
        .contains("SPLITS the units of ticker at 4 members"));
    assert!(v["verdict"][1]["fixes"][0]
        .as_str()
        .unwrap()
        .contains("custom assigner"));
    // Bad input: 2, naming it.
    fails_with(
        &["report", "/nonexistent/topology.toml"],
        "/nonexistent/topology.toml",
    );
    let bad = temp_file("[[topic]]\nname = \"a\"\npartitions = 0\n");
    fails_with(&["report", bad.path().to_str().unwrap()], "partitions");
    fails_with(
        &["report", &example("ticker.toml"), "-i", "/nonexistent/keys"],
        "/nonexistent/keys",
    );
    fails_with(
        &[
            "report",
            &example("ticker.toml"),
            "-o",
            "/nonexistent/dir/r.html",
        ],
        "-o/--output /nonexistent/dir/r.html",
    );
    fails_with(
        &["report", &example("ticker.toml"), "--format", "pdf"],
        "pdf",
    );
}

#[test]
fn output_file_holds_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    let mut args = ticker_counts_args();
    args.extend(["-o".into(), out.to_str().unwrap().into()]);
    let printed = run(&args, 1);
    assert_eq!(printed, "");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        run(&ticker_counts_args(), 1)
    );
    // Written whole: no temporary file left beside it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn committed_example_is_what_the_command_makes() {
    // Run from the repository root with relative paths, as the README says.
    let out = partwise()
        .current_dir(repo())
        .args([
            "report",
            "examples/ticker.toml",
            "--counts",
            "examples/ticks.csv",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let committed = std::fs::read_to_string(repo().join("examples/ticker-report.html")).unwrap();
    assert!(
        committed == text(&out.stdout),
        "examples/ticker-report.html is stale: partwise report examples/ticker.toml --counts examples/ticks.csv -o examples/ticker-report.html"
    );
}

#[test]
fn a_pair_caught_mid_resize_shows_the_procedures_on_the_page_and_in_json() {
    let t = std::fs::read_to_string(example("ticker.toml")).unwrap();
    let i = t.find("partitions = 6").unwrap();
    let mid = format!(
        "{}partitions = 9{}",
        &t[..i],
        &t[i + "partitions = 6".len()..]
    );
    let f = temp_file(&mid);
    let args: Vec<String> = vec![
        "report".into(),
        f.path().to_str().unwrap().into(),
        "-i".into(),
        example("symbols.txt"),
    ];
    let v = json(&args, 1);
    let placement = v["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["area"] == "placement")
        .unwrap();
    let words = placement["text"].as_str().unwrap();
    assert!(words.contains("no assignor keeps the join"), "{words}");
    let fixes: Vec<&str> = placement["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(fixes.len(), 3, "{fixes:?}");
    assert!(fixes[1].starts_with("drain and resize"), "{}", fixes[1]);
    assert!(fixes[2].starts_with("new topics at 9"), "{}", fixes[2]);
    let page = run(&args, 1);
    assert!(page.contains("PARTITION COUNTS DIFFER"), "page title");
    assert!(
        page.contains("<li>drain and resize in one window"),
        "page procedures"
    );
}

#[test]
fn salting_advice_for_a_joined_topic_names_its_partners_and_the_isolation() {
    // BBCA counted 50 times, each other symbol once: the heaviest key.
    let mut counts = String::from("BBCA,50\n");
    for sym in std::fs::read_to_string(example("symbols.txt"))
        .unwrap()
        .lines()
    {
        if sym != "BBCA" {
            counts.push_str(&format!("{sym},1\n"));
        }
    }
    let counts = temp_file(counts);
    let v = json(
        &[
            "report".into(),
            example("ticker.toml"),
            "--counts".into(),
            counts.path().to_str().unwrap().into(),
        ],
        1,
    );
    let fixes: Vec<&str> = v["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["area"] == "skew" && x["section"] == "skew-0")
        .flat_map(|x| x["fixes"].as_array().unwrap())
        .map(|f| f.as_str().unwrap())
        .collect();
    let salt = fixes
        .iter()
        .find(|f| f.contains("heaviest key BBCA"))
        .unwrap_or_else(|| panic!("{fixes:?}"));
    for needle in [
        "joined with notifications",
        "co-partition group ticker",
        "every topic of the group with the same sub-keys",
        "isolate it on its own partition",
        "--topic market-updates",
    ] {
        assert!(salt.contains(needle), "{needle}: {salt}");
    }
}

/// Past the first 2,000 sample keys the partition map and the slot table
/// list no rows: the JSON says how many keys it left out, the page how many
/// and how many of those break, which with the rows shown add up to what
/// the check counts over every key.
#[test]
fn per_key_rows_stop_at_2000_and_count_the_rest() {
    // Two partitioners that disagree, and a family split by its tags.
    let topology = temp_file(
        "[[topic]]\nname = \"a\"\npartitions = 6\n[[topic.producer]]\npartitioner = \"java\"\n\
         [[topic]]\nname = \"b\"\npartitions = 6\n[[topic.producer]]\npartitioner = \"librdkafka\"\n\
         [[copartition]]\nname = \"g\"\ntopics = [\"a\", \"b\"]\n\
         [[redis_family]]\nname = \"f\"\npatterns = [\"x:{%s}\", \"y:%s\"]\n",
    );
    let keys: String = (0..2500).map(|i| format!("k{i}\n")).collect();
    let keys = temp_file(keys);
    let args = vec![
        "report".to_string(),
        topology.path().display().to_string(),
        "-i".into(),
        keys.path().display().to_string(),
    ];
    let v = json(&args, 1);
    let group = &v["check"]["copartition_groups"][0];
    let family = &v["check"]["redis_families"][0];
    let apart = 2500 - group["aligned_keys"].as_u64().unwrap() as usize;
    let split = 2500 - family["colocated_keys"].as_u64().unwrap() as usize;
    let map = &v["partition_maps"][0];
    let slots = &v["redis_families"][0];
    for l in [map, slots] {
        assert_eq!(l["rows"].as_array().unwrap().len(), 2000);
        assert_eq!(l["rows_omitted"], 500);
    }
    let shown_apart = map["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["aligned"] == false)
        .count();
    let shown_split = slots["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["colocated"] == false)
        .count();
    assert!(
        apart > shown_apart && shown_apart > 0,
        "{apart} {shown_apart}"
    );
    assert!(
        split > shown_split && shown_split > 0,
        "{split} {shown_split}"
    );
    let page = run(&args, 1);
    let a = format!(
        "<p>500 more sample keys not shown ({} of them on different partitions).</p>",
        apart - shown_apart
    );
    let s = format!(
        "<p>500 more sample keys not shown ({} of them in more than one slot).</p>",
        split - shown_split
    );
    assert!(page.contains(&a), "{a}");
    assert!(page.contains(&s), "{s}");
    assert_eq!(page.matches("<tr><th scope=\"row\">k").count(), 4000);
}
