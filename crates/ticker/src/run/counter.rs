//! The demo's counter-example: the seeds' round-robin group of 4 workers,
//! run, settled, fed and verified against check's prediction.

use super::drill::Phase;
use super::feed::feed_command;
use super::join::{stop_all, WorkerProc};
use super::plan::{plan, Result};
use super::predict::{join_nums, join_strs, judge, predict, rr_members, RR_FEED, RR_RATE};
use super::verify::verify_once;
use crate::flags::{Common, Runtime};
use crate::model::SYMBOLS;
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// The group's assignment once it has settled: every worker's last event is
/// an assignment, and together they hold every partition of `topics` exactly
/// once. `None` while a rebalance is still going on.
pub(super) fn settled(
    events: &[Vec<Value>],
    topics: &[(&str, u32)],
) -> Option<Vec<BTreeSet<(String, u32)>>> {
    let mut held = Vec::new();
    let mut all = BTreeSet::new();
    for ev in events {
        let last = ev
            .iter()
            .rev()
            .find(|e| e["event"] == "assigned" || e["event"] == "revoked")?;
        if last["event"] != "assigned" {
            return None;
        }
        let mut mine = BTreeSet::new();
        for u in last["units"].as_array()? {
            let tp = (
                u[0].as_str()?.to_string(),
                u32::try_from(u[1].as_u64()?).ok()?,
            );
            if !all.insert(tp.clone()) {
                return None;
            }
            mine.insert(tp);
        }
        if mine.is_empty() {
            return None;
        }
        held.push(mine);
    }
    let want: usize = topics.iter().map(|(_, n)| *n as usize).sum();
    let known = all
        .iter()
        .all(|(t, p)| topics.iter().any(|(n, k)| n == t && p < k));
    (all.len() == want && known).then_some(held)
}

/// The seeds' failure beside the fix: `partwise check` predicts which
/// symbols a round-robin group of 4 splits, 4 such workers join and the feed
/// runs, and verify must find alerts missing on exactly those symbols.
/// Whether the observation matched the prediction.
pub(super) fn counter_example(a: &Phase, common: &Common, group: &str) -> Result<bool> {
    let p = plan(common)?;
    let members = rr_members();
    let syms: Vec<&str> = SYMBOLS.iter().map(|(s, _)| *s).collect();
    println!(
        "== counter-example: the seeds' group, {} workers under librdkafka roundrobin (KafkaJS's RoundRobinAssigner deals the same way), group {group}",
        members.len()
    );
    let pred = predict(&p, group, &members, &syms)?;
    let predicted = pred.symbols();
    println!(
        "   partwise check, that group declared with {} members: {}",
        members.len(),
        if pred.split.is_empty() {
            "no partition index split".to_string()
        } else {
            format!(
                "UNITS SPLIT at partition(s) {}: the join misses alerts on {}",
                join_nums(&pred.split),
                join_strs(&predicted)
            )
        }
    );
    let mut workers: Vec<WorkerProc> = members
        .iter()
        .map(|m| {
            let name = m.strip_prefix("ticker-").expect("rr_members' names");
            WorkerProc::start(
                common,
                name,
                group,
                a.session_timeout,
                Runtime::LibrdkafkaRoundrobin,
                false,
            )
        })
        .collect::<Result<_>>()?;
    let n = p.partitions;
    let topics = [(p.market.as_str(), n), (p.notif.as_str(), n)];
    // The feed waits for all of them: a generation with fewer members deals
    // otherwise (3 round-robin members over 2x6 keep every unit whole) and
    // would write alerts a 4-member group cannot.
    let deadline = Instant::now() + Duration::from_secs(40);
    let held = loop {
        let events: Vec<Vec<Value>> = workers.iter().map(WorkerProc::events).collect();
        if let Some(h) = settled(&events, &topics) {
            break h;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the {} round-robin workers did not settle on one assignment within 40 s",
                workers.len()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let owner = |t: &str, q: u32| held.iter().position(|h| h.contains(&(t.to_string(), q)));
    let dealt: BTreeSet<u32> = (0..n)
        .filter(|&q| owner(&p.market, q) != owner(&p.notif, q))
        .collect();
    for (w, h) in workers.iter().zip(&held) {
        let part = |t: &str| {
            let ps: BTreeSet<u32> = h.iter().filter(|(x, _)| x == t).map(|(_, q)| *q).collect();
            if ps.is_empty() {
                "-".to_string()
            } else {
                join_nums(&ps)
            }
        };
        // The namespace is on every line above: the topics by their file names.
        let short = |t: &'_ str| -> String {
            p.ns.as_deref()
                .and_then(|ns| t.strip_prefix(ns)?.strip_prefix('-'))
                .unwrap_or(t)
                .to_string()
        };
        println!(
            "   {} holds {} {}, {} {}",
            w.name,
            short(&p.market),
            part(&p.market),
            short(&p.notif),
            part(&p.notif)
        );
    }
    println!(
        "   the broker's assignment splits partition(s) {}",
        if dealt.is_empty() {
            "none".to_string()
        } else {
            join_nums(&dealt)
        }
    );
    println!(
        "== counter-example feed: {RR_RATE} events/s for {RR_FEED:?}, seed {}",
        a.seed
    );
    let fed = feed_command(common, RR_RATE, RR_FEED, a.seed)?
        .output()
        .map_err(|e| format!("cannot start the feed: {e}"))?;
    if !fed.status.success() {
        return Err(format!(
            "the counter-example's feed failed ({})",
            fed.status
        ));
    }
    // Verify once the workers have caught up: every market:{SYM} holds its
    // last tick, and no alert is missing that check said the group keeps
    // (a late one is lag, not the split); the deadline ends the wait either way.
    let deadline = Instant::now() + Duration::from_secs(30);
    let v = loop {
        match verify_once(common, &p) {
            Ok(v)
                if Instant::now() >= deadline
                    || (v.stale.is_empty()
                        && v.missing_by_symbol.keys().all(|s| predicted.contains(s))) =>
            {
                break v
            }
            Err(e) if Instant::now() >= deadline => return Err(e),
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    // The prediction is of one assignment: a rebalance while the feed ran
    // (a worker lost) would make the observation another group's.
    let events: Vec<Vec<Value>> = workers.iter().map(WorkerProc::events).collect();
    let kept = settled(&events, &topics).as_ref() == Some(&held);
    stop_all(&mut workers, Duration::from_secs(20));
    println!(
        "   verify: {} ticks, {} alerts; {} alerts must have fired, {} of them are not in Redis",
        v.ticks,
        v.alerts,
        v.expected_fired,
        v.missing.len()
    );
    let (ok, lines) = judge(&pred, &v, kept);
    for l in lines {
        println!("{l}");
    }
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The feed starts only on one whole assignment of the 4 members.
    #[test]
    fn settled_waits_for_one_whole_assignment() {
        let topics = [("m", 2), ("n", 2)];
        let asg = |u: Value| json!({"event": "assigned", "units": u});
        let whole = vec![
            vec![asg(json!([["m", 0], ["n", 1]]))],
            vec![
                asg(json!([["m", 0]])),
                json!({"event": "revoked"}),
                asg(json!([["m", 1], ["n", 0]])),
            ],
        ];
        let held = settled(&whole, &topics).unwrap();
        assert!(held[1].contains(&("n".to_string(), 0)));
        // A member still revoked, one without an assignment yet, an overlap
        // (one member's stale generation), a partition nobody holds.
        let revoked = vec![
            whole[0].clone(),
            vec![
                asg(json!([["m", 1], ["n", 0]])),
                json!({"event": "revoked"}),
            ],
        ];
        let waiting = vec![whole[0].clone(), vec![]];
        let overlap = vec![
            whole[0].clone(),
            vec![asg(json!([["m", 0], ["m", 1], ["n", 0]]))],
        ];
        let short = vec![whole[0].clone(), vec![asg(json!([["m", 1]]))]];
        for (what, ev) in [
            ("revoked", revoked),
            ("waiting", waiting),
            ("overlap", overlap),
            ("short", short),
        ] {
            assert!(settled(&ev, &topics).is_none(), "{what}");
        }
    }
}
