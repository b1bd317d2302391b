//! `salt --topology FILE --topic T -i FILE`: a key of a co-partition group,
//! salted in every topic of the group or refused, and its table.

use super::{consumers, counts, reached, select, Args, MAX_LOADS, MAX_RANGE};
use crate::exit::{CliError, ExitCode, Result};
use crate::output::{key_cell, visible, Format, Table};
use partwise::strategy::salt::report::{
    joined as joined_report, IsolationReport, JoinedReport, TargetOn, TRADE_OFF,
};
use std::io::Write;

/// Sub-keys listed per salted key in the table (JSON lists every one).
const SUB_KEY_ROWS: usize = 12;

pub(super) fn run(a: &Args, file: &std::path::Path, topic: &str) -> Result<ExitCode> {
    let topology = crate::load::load_topology(file)?;
    let Some(t) = topology.topic(topic) else {
        let known: Vec<&str> = topology.topics.iter().map(|t| t.name.as_str()).collect();
        return Err(CliError::msg(format!(
            "--topic '{topic}' is not a [[topic]] of {} (its topics: {})",
            file.display(),
            known.join(", ")
        )));
    };
    let n = t.partitions;
    crate::limits::counted_partitions("the topic's partitions", n.get())?;
    if let Some(m) = a.consumers {
        crate::limits::members("--consumers", u64::from(m))?;
    }
    let loads = u64::from(n.get()) * u64::from(a.max_range);
    if loads > MAX_LOADS || a.max_range == 0 || a.max_range > MAX_RANGE {
        return Err(CliError::msg(format!(
            "--max-range {}: between 1 and {MAX_RANGE}, and at most {MAX_LOADS} partition loads with {n} partitions",
            a.max_range
        )));
    }
    let path = a
        .input
        .input
        .as_deref()
        .expect("clap requires -i with --topology");
    let selection = select(a, path, n)?;
    let consumers = consumers(a, n)?;
    let name = file.display().to_string();
    let report = joined_report(&topology, &name, topic, &selection.measured(a), consumers)
        .map_err(|e| CliError::context(name.clone(), e))?;
    let Some(report) = report else {
        // Joined to nothing: salting it alone moves no join.
        let p = t
            .producers
            .iter()
            .find_map(|p| p.keyed_partitioner())
            .ok_or_else(|| {
                CliError::msg(format!(
                    "{}: topic '{topic}' has no producer that places records by key, so no key of it has a partition to salt",
                    file.display()
                ))
            })?;
        say!(
            "partwise: {topic} is in no co-partition group of {}: salting it moves no join (its keys placed by {})",
            file.display(),
            p.spec()
        );
        return counts(a, path, n, p, false);
    };
    let mut out = std::io::stdout().lock();
    match a.format.format {
        Format::Json | Format::Ndjson => {
            crate::output::write_doc(&mut out, a.format.format, &report)?
        }
        Format::Table => table(&mut out, &report)?,
    }
    Ok(reached(report.feasible && report.target_reached))
}

fn table(out: &mut impl Write, r: &JoinedReport) -> Result<()> {
    let plan = &r.plan;
    let what = if r.target_on == TargetOn::Consumers {
        "busiest consumer"
    } else {
        "busiest partition"
    };
    if r.salted.is_empty() {
        writeln!(
            out,
            "no key is above {:.1}% of {}'s traffic: nothing to salt ({what} {:.2} x mean)",
            r.threshold_used * 100.0,
            visible(&r.topic),
            r.before_max_over_mean
        )?;
        return Ok(());
    }
    let partners: Vec<String> = r.topics[1..]
        .iter()
        .map(|t| visible(&t.name).into_owned())
        .collect();
    writeln!(
        out,
        "{} of {} is joined with {} (co-partition group {}): salting it salts every topic of the group with the same sub-keys, {}",
        r.names,
        visible(&r.topic),
        partners.join(", "),
        visible(&r.groups.join(", ")),
        r.sub_key_range
    )?;
    if let Some(why) = r.separator.note() {
        writeln!(out, "{why}")?;
    }
    if r.feasible {
        match r.range {
            Some(s) => writeln!(
                out,
                "salt over S = {s}: {what} {:.2} x mean -> {:.2} x mean (target {})",
                r.before_max_over_mean, r.after_max_over_mean, r.target_ratio
            )?,
            None => writeln!(
                out,
                "no salt range up to {} brings the {what} under {} x mean; the best is S = {} at {:.2} x mean (before {:.2} x)",
                r.max_range, r.target_ratio, r.range_used, r.after_max_over_mean, r.before_max_over_mean
            )?,
        }
        writeln!(out, "\nchange, in every topic of the group:")?;
        for t in &r.topics {
            writeln!(out, "  {} ({} partitions):", visible(&t.name), t.partitions)?;
            for p in &t.producers {
                writeln!(out, "    {}: {}", visible(&p.label), visible(&p.change))?;
            }
        }
        writeln!(
            out,
            "\nthe join holds: each sub-key lands on one partition number in every topic"
        )?;
        let mut head = vec!["SUB-KEY".to_string()];
        head.extend(r.topics.iter().map(|t| t.name.clone()));
        let mut tab = Table::new(head);
        let rows: usize = plan.placements.iter().map(|(_, s)| s.len()).sum();
        for (_, subs) in &plan.placements {
            for s in subs.iter().take(SUB_KEY_ROWS) {
                let mut row = vec![key_cell(&s.sub_key)];
                row.extend(
                    s.partitions
                        .iter()
                        .map(|q| q.map_or_else(|| "-".to_string(), |q| q.to_string())),
                );
                tab.row(row);
            }
        }
        tab.write(&mut *out)?;
        let shown: usize = plan
            .placements
            .iter()
            .map(|(_, s)| s.len().min(SUB_KEY_ROWS))
            .sum();
        if shown < rows {
            writeln!(
                out,
                "({} more sub-keys, each on one number in every topic: --format json lists them all)",
                rows - shown
            )?;
        }
        writeln!(out)?;
        for k in &r.salted {
            writeln!(out, "cost to the consumers: {}", k.join_cost)?;
        }
    } else {
        writeln!(
            out,
            "refused: the sub-keys cannot land together in every topic of the group, so salting would break {}'s join:",
            r.names
        )?;
        for x in &r.refusals {
            writeln!(out, "  - {} ({})", visible(&x.message), x.kind)?;
            writeln!(out, "    fix: {}", visible(&x.fix))?;
        }
    }
    if r.before.iter().all(|&x| x == 0.0) {
        writeln!(
            out,
            "\nthe counts give no partition loads: no producer of {} can place these keys (it writes no keys, or they do not fit its key format)",
            visible(&r.topic)
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "\nfrom the counts of {} ({} records), the {what}'s share:",
        visible(&r.topic),
        r.total
    )?;
    let mut tab = Table::new(["OPTION", "BUSIEST", "MAX/MEAN", "KEEPS THE JOIN", "MOVES"]);
    tab.row([
        "as now".to_string(),
        format!("{:.1}%", r.busiest_before * 100.0),
        format!("{:.2}", r.before_max_over_mean),
        if !r.already_split.is_empty() {
            "no (already split)".to_string()
        } else if r.feasible {
            "yes".to_string()
        } else {
            "unknown (refused)".to_string()
        },
        "nothing".to_string(),
    ]);
    tab.row([
        format!("salt over S = {} in every topic", r.range_used),
        format!("{:.1}%", r.busiest_after * 100.0),
        format!("{:.2}", r.after_max_over_mean),
        if r.feasible {
            "per sub-key".to_string()
        } else {
            "no (refused)".to_string()
        },
        format!("{} only", r.names),
    ]);
    let reserved = |word: &str| -> Vec<String> {
        match &r.isolation {
            IsolationReport::Offered { reserved, .. } => reserved
                .iter()
                .map(|x| format!("{} {word} partition {}", key_cell(&x.key), x.partition))
                .collect(),
            IsolationReport::Unavailable { .. } => Vec::new(),
        }
    };
    if let IsolationReport::Offered {
        busiest,
        max_over_mean,
        moved,
        ..
    } = &r.isolation
    {
        tab.row([
            format!("isolate {} in every topic", reserved("on").join(", ")),
            format!("{:.1}%", busiest * 100.0),
            format!("{:.2}", max_over_mean),
            "yes, whole".to_string(),
            format!("{:.1}% of records", moved * 100.0),
        ]);
    }
    tab.write(&mut *out)?;
    match &r.isolation {
        IsolationReport::Offered {
            spec, moved, rest, ..
        } => {
            writeln!(
                out,
                "\nthe alternative that keeps the join whole: every producer of the group sends {} and hashes every other key with murmur2 (sign bit masked) over the other {rest} partitions (partwise's spec {}):",
                reserved("to").join(", "),
                visible(spec)
            )?;
            for t in &r.topics {
                for p in &t.producers {
                    if let Some(how) = p.isolate_with {
                        writeln!(
                            out,
                            "  {} of {}: {how}",
                            visible(&p.label),
                            visible(&t.name)
                        )?;
                    }
                }
            }
            writeln!(
                out,
                "  it moves {:.1}% of the records to another partition (switch every producer of the group at once, after draining, as for a resize), and the key's partition still carries its own share",
                moved * 100.0
            )?;
        }
        IsolationReport::Unavailable { unavailable } => writeln!(
            out,
            "\nisolating the key on its own partition is not offered: {}",
            visible(unavailable)
        )?,
    }
    if r.feasible {
        writeln!(out, "trade-off: {TRADE_OFF}")?;
    }
    Ok(())
}
