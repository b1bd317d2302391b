//! `partwise plan`: partitions from produce and consume rates.

use crate::common::{fails_with as fails, json_doc as json};

const SEED_PLAN: [&str; 9] = [
    "plan",
    "--produce-mbps",
    "50",
    "--partition-produce-mbps",
    "10",
    "--consume-mbps",
    "50",
    "--partition-consume-mbps",
    "2.5",
];

#[test]
fn plan_seed_example_gives_20_and_24() {
    let v = json(&SEED_PLAN, 0);
    assert_eq!(v["required"], 20);
    assert_eq!(v["with_headroom"], 24);
    assert_eq!(v["binding"], "consume");
    let mut args = SEED_PLAN.to_vec();
    args.extend(["--headroom", "0.3"]);
    assert_eq!(json(&args, 0)["with_headroom"], 26);
}

#[test]
fn plan_rejects_bad_rates() {
    let mut args = SEED_PLAN.to_vec();
    args[2] = "-50";
    fails(&args, "-50");
    let mut args = SEED_PLAN.to_vec();
    args[8] = "0";
    fails(&args, "per-partition consume rate");
    let mut args = SEED_PLAN.to_vec();
    args[4] = "ten";
    fails(&args, "ten");
}

/// `plan` with the produce rate replaced.
fn plan_at(tp: &str, headroom: &str) -> Vec<String> {
    let mut args: Vec<String> = SEED_PLAN.iter().map(|s| s.to_string()).collect();
    args[2] = tp.into();
    args[4] = "1".into();
    args[6] = "1".into();
    args[8] = "1".into();
    args.extend(["--headroom".into(), headroom.into()]);
    args
}

#[test]
fn plan_answers_ten_million_partitions_in_a_second() {
    // The divisor search once walked every number up to each candidate:
    // this rate ran past a minute.
    let args = plan_at("10000000", "0.2");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let t = std::time::Instant::now();
    let v = json(&args, 0);
    assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
    assert_eq!(v["required"], 10_000_000);
    assert_eq!(v["with_headroom"], 12_000_000);
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("10000 partitions in one operation"),
        "{warnings}"
    );
}

#[test]
fn plan_past_what_a_topic_can_have_is_an_error_with_the_numbers() {
    // It printed "with_headroom": 4294967295, a count saturated by a cast.
    let args = plan_at("2147483647", "10");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(&args, "23622320117 with 1000% headroom");
    fails(&args, "--produce-mbps");
    fails(&args, "2147483647 a topic can have");
}
