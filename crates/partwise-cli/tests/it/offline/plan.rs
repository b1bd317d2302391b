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
