//! The counter-example's prediction and verdict: what `partwise check` says
//! a round-robin group of 4 splits, and whether verify found that.

use super::plan::{Plan, Result};
use super::verify::Verdict;
use partwise::assign::colocation_of;
use partwise::check::check;
use partwise::group::placement;
use partwise::topology::{ConsumerGroup, Members, Topology};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The members of the counter-example's round-robin group, by client id:
/// librdkafka's member ids begin with it, so the order the broker's
/// assignor deals in is this order.
pub(super) fn rr_members() -> Vec<String> {
    (0..4).map(|i| format!("ticker-r{i}")).collect()
}

/// The counter-example's feed: fixed, so that what it must show does not
/// depend on `--rate` and `--duration` (with seed 1 every one of the seed's
/// symbols has alerts due; a test holds it to that).
pub(super) const RR_RATE: u32 = 300;
pub(super) const RR_FEED: Duration = Duration::from_secs(2);

/// The topology `check` judges for the counter-example: the file's, under the
/// counter-example's namespace, with its consumer group replaced by the
/// round-robin group the demo runs (librdkafka `roundrobin`, the placement
/// KafkaJS's `RoundRobinAssigner` gives as well), members by client id.
pub(super) fn round_robin_topology(p: &Plan, group: &str, members: &[String]) -> Topology {
    let mut t = p.topology.clone();
    if let Some(ns) = &p.ns {
        let name = |n: &str| format!("{ns}-{n}");
        for x in &mut t.topics {
            x.name = name(&x.name);
        }
        for g in &mut t.copartition_groups {
            for x in &mut g.topics {
                *x = name(x);
            }
        }
    }
    t.consumer_groups = vec![ConsumerGroup {
        name: group.to_string(),
        assignor: "librdkafka:roundrobin".into(),
        members: Members::Ids(members.to_vec()),
        subscriptions: vec![p.market.clone(), p.notif.clone()],
    }];
    t
}

/// What `partwise check` says of the round-robin group: the partition
/// indices it splits, and where each symbol lands.
pub(super) struct Prediction {
    pub(super) split: BTreeSet<u32>,
    /// Symbol -> its partition (the same in both topics: `up` checked the
    /// layout).
    pub(super) partition: BTreeMap<String, u32>,
}

impl Prediction {
    pub(super) fn symbols(&self) -> BTreeSet<String> {
        self.partition
            .iter()
            .filter(|(_, p)| self.split.contains(p))
            .map(|(s, _)| s.clone())
            .collect()
    }
}

pub(super) fn predict(
    p: &Plan,
    group: &str,
    members: &[String],
    symbols: &[&str],
) -> Result<Prediction> {
    let t = round_robin_topology(p, group, members);
    let report = check(&t, &[]);
    let k = members.len() as u32;
    let (v, c) = report
        .placements
        .iter()
        .find(|v| v.topics.contains(&p.market) && v.topics.contains(&p.notif))
        .and_then(|v| v.counts.iter().find(|c| c.members == k).map(|c| (v, c)))
        .ok_or_else(|| format!("partwise check judged no placement of {k} members"))?;
    if let Some(e) = &c.error {
        return Err(format!(
            "partwise check: {} at {k} members: {e}",
            v.assignor.spec()
        ));
    }
    let split: BTreeSet<u32> = if c.split.len() == c.split_count as usize {
        c.split.iter().copied().collect()
    } else {
        // check lists the first few indices only: the whole list from the
        // assignor itself.
        let cg = &t.consumer_groups[0];
        let g = placement::group_of(&t, cg, members);
        let (units, _) = placement::unit_topics(&g, &t.copartition_groups[0]);
        let a = v.assignor.assign(&g).map_err(|e| e.to_string())?;
        colocation_of(&g, &a, &units).split.into_iter().collect()
    };
    let (partitioner, format) = p.routing[&p.market];
    let n = t
        .topic(&p.market)
        .expect("the plan's topic is declared")
        .partitions;
    let mut partition = BTreeMap::new();
    for sym in symbols {
        let key = format
            .encode(sym.as_bytes())
            .map_err(|e| format!("key {sym}: {e}"))?;
        let at = partitioner
            .place(Some(&key), n)
            .partition()
            .ok_or_else(|| {
                format!(
                    "{}: {partitioner} does not place a key on a fixed partition: no symbol can be predicted",
                    p.market
                )
            })?;
        partition.insert(sym.to_string(), at);
    }
    Ok(Prediction { split, partition })
}

/// The counter-example's verdict and its lines: the table (symbol, its
/// partition, check's split, alerts due, missing), both sets, and whether
/// they are equal (on the symbols with alerts due), with nothing unexpected,
/// wrong or stale, on the one assignment check judged (`kept`).
pub(super) fn judge(pred: &Prediction, v: &Verdict, kept: bool) -> (bool, Vec<String>) {
    let predicted = pred.symbols();
    let mut out = Vec::new();
    let observed: BTreeSet<String> = v.missing_by_symbol.keys().cloned().collect();
    // A symbol with no alert due in this feed has nothing to miss: the
    // prediction is held to the symbols where a miss can show.
    let observable: BTreeSet<String> = predicted
        .iter()
        .filter(|s| v.due.contains_key(*s))
        .cloned()
        .collect();
    out.push("   symbol  partition  check: split  alerts due  missing in Redis".to_string());
    for (sym, q) in &pred.partition {
        out.push(format!(
            "   {sym:<6}  {q:>9}  {:<12}  {:>10}  {:>16}",
            if pred.split.contains(q) { "yes" } else { "no" },
            v.due.get(sym).copied().unwrap_or(0),
            v.missing_by_symbol.get(sym).copied().unwrap_or(0)
        ));
    }
    out.push(format!(
        "   predicted split symbols: {}",
        join_strs(&predicted)
    ));
    out.push(format!(
        "   symbols with missing alerts: {}",
        join_strs(&observed)
    ));
    let quiet: BTreeSet<String> = predicted.difference(&observable).cloned().collect();
    if !quiet.is_empty() {
        out.push(format!(
            "   no alert was due on {} in this feed: nothing there to miss",
            join_strs(&quiet)
        ));
    }
    let mut ok = observable == observed;
    if !kept {
        ok = false;
        out.push(
            "   the group rebalanced while the feed ran: what verify saw is not that assignment's alone"
                .to_string(),
        );
    }
    for (what, list) in [
        ("unexpected", &v.unexpected),
        ("wrong", &v.wrong),
        ("stale", &v.stale),
    ] {
        if !list.is_empty() {
            ok = false;
            out.push(format!("   {} {what} (a round-robin group misses alerts, it must not invent them or lose ticks):", list.len()));
            for line in list.iter().take(5) {
                out.push(format!("     {line}"));
            }
        }
    }
    if ok {
        out.push(format!(
            "== counter-example: as predicted: the round-robin group missed alerts on exactly the {} symbol(s) partwise check named",
            observed.len()
        ));
    } else {
        out.push(
            "== counter-example: MISMATCH between check's prediction and what verify found"
                .to_string(),
        );
    }
    (ok, out)
}

pub(super) fn join_nums(s: &BTreeSet<u32>) -> String {
    s.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
}

pub(super) fn join_strs(s: &BTreeSet<String>) -> String {
    if s.is_empty() {
        "none".to_string()
    } else {
        s.iter().cloned().collect::<Vec<_>>().join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::Common;
    use crate::model::{expected, Event, Generator, SYMBOLS};
    use crate::run::plan::plan;

    fn example_plan(ns: &str) -> Plan {
        plan(&Common {
            bootstrap: None,
            props: Vec::new(),
            files: Vec::new(),
            redis: None,
            namespace: Some(ns.into()),
            topology: crate::flags::default_topology(),
        })
        .unwrap()
    }

    /// Round-robin deals the 12 partitions of the two topics (sorted by
    /// name) to 4 members in turn: partition p of market-updates goes to
    /// member p mod 4, partition p of notifications to (6 + p) mod 4, never
    /// the same one, whatever the member order. So every index is split and
    /// every symbol is predicted; at 3 members (6 mod 3 = 0) none is.
    #[test]
    fn check_predicts_every_symbol_split_for_4_round_robin_members() {
        let p = example_plan("ticker-demo-1-2-roundrobin");
        let syms: Vec<&str> = SYMBOLS.iter().map(|(s, _)| *s).collect();
        let g = "ticker-demo-1-2-roundrobin-joiner";
        let four = predict(&p, g, &rr_members(), &syms).unwrap();
        assert_eq!(four.split, (0..6).collect());
        assert_eq!(four.symbols(), syms.iter().map(|s| s.to_string()).collect());
        let t = round_robin_topology(&p, g, &rr_members());
        assert_eq!(
            t.topics.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(),
            [
                "ticker-demo-1-2-roundrobin-market-updates",
                "ticker-demo-1-2-roundrobin-notifications"
            ]
        );
        let three = predict(&p, g, &rr_members()[..3], &syms).unwrap();
        assert!(three.split.is_empty() && three.symbols().is_empty());
    }

    fn verdict(due: &[(&str, usize)], missing: &[(&str, usize)]) -> Verdict {
        let map = |l: &[(&str, usize)]| l.iter().map(|(s, n)| (s.to_string(), *n)).collect();
        Verdict {
            ticks: 10,
            alerts: 5,
            expected_fired: due.iter().map(|(_, n)| n).sum(),
            pending: 0,
            missing: missing
                .iter()
                .map(|(s, _)| format!("r-1 ({s}, ...)"))
                .collect(),
            unexpected: Vec::new(),
            wrong: Vec::new(),
            stale: Vec::new(),
            symbols: 3,
            due: map(due),
            missing_by_symbol: map(missing),
        }
    }

    /// The counter-example passes only when verify's symbols are check's
    /// (on the symbols with alerts due), on the assignment check judged,
    /// with nothing invented: a miss outside the prediction, a predicted
    /// symbol whose alerts all fired, an unexpected alert or a rebalance
    /// fail it.
    #[test]
    fn the_counter_example_passes_only_when_verify_finds_what_check_predicted() {
        let pred = Prediction {
            split: [0].into(),
            partition: [("AAA", 0), ("BBB", 0), ("CCC", 1)]
                .map(|(s, p)| (s.to_string(), p))
                .into(),
        };
        let due = [("AAA", 2), ("BBB", 1), ("CCC", 3)];
        let (ok, lines) = judge(&pred, &verdict(&due, &[("AAA", 2), ("BBB", 1)]), true);
        assert!(ok, "{lines:?}");
        assert!(lines.contains(&"   predicted split symbols: AAA BBB".to_string()));
        assert!(lines.contains(&"   symbols with missing alerts: AAA BBB".to_string()));
        assert!(lines
            .iter()
            .any(|l| l.starts_with("   CCC") && l.contains(" no ")));
        for (what, missing, kept) in [
            (
                "a miss outside",
                &[("AAA", 2), ("BBB", 1), ("CCC", 1)][..],
                true,
            ),
            ("a predicted symbol fired", &[("AAA", 2)][..], true),
            ("a rebalance", &[("AAA", 2), ("BBB", 1)][..], false),
        ] {
            let (ok, lines) = judge(&pred, &verdict(&due, missing), kept);
            assert!(!ok, "{what}: {lines:?}");
            assert!(lines.last().unwrap().contains("MISMATCH"), "{what}");
        }
        let mut invented = verdict(&due, &[("AAA", 2), ("BBB", 1)]);
        invented
            .unexpected
            .push("r-9 (CCC) fired on tick 3 but no tick crosses it".into());
        assert!(!judge(&pred, &invented, true).0);
        // No alert due on BBB: nothing there to miss, and the demo says so.
        let (ok, lines) = judge(
            &pred,
            &verdict(&[("AAA", 2), ("CCC", 3)], &[("AAA", 2)]),
            true,
        );
        assert!(ok, "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("no alert was due on BBB")));
    }

    /// The counter-example's fixed feed (seed 1) has alerts due on every one
    /// of the seed's symbols, so each split symbol has alerts to miss.
    #[test]
    fn the_counter_example_feed_has_alerts_due_on_every_symbol() {
        let n = (f64::from(RR_RATE) * RR_FEED.as_secs_f64()).round() as u64;
        let syms = SYMBOLS.iter().map(|(s, p)| (s.to_string(), *p)).collect();
        let mut g = Generator::new("r1", 1, syms, 50).unwrap();
        let (mut ticks, mut alerts) = (Vec::new(), Vec::new());
        for i in 0..n {
            match g.next(0) {
                Event::Tick(t) => ticks.push((t, i as i64)),
                Event::Alert(a) => alerts.push(a),
            }
        }
        let want = expected(&ticks, &alerts);
        let due: BTreeSet<&str> = want.fired.values().map(|(s, _)| s.as_str()).collect();
        assert_eq!(due, SYMBOLS.iter().map(|(s, _)| *s).collect());
    }
}
