//! `partwise kafka audit`: per-partition counts with skew statistics, a
//! read-only sample that tells which partitioner (and key encoding) wrote
//! each topic, the misrouted and keyless records, and whether the topics are
//! co-partitioned, in the findings `partwise check` prints (same `kind`,
//! words and JSON). Exit 1 when something is off (misrouted keys, topics
//! that are missing or not co-partitioned, a partial result).

use super::{kerr, stderr_is_terminal, ConnArgs};
use crate::cmd::check::reason_json;
use crate::cmd::parse::{self, Partitioners};
use crate::exit::{ExitCode, Result};
use crate::output::{hex, key_cell, key_json, visible, Format, Table};
use partwise::routing::{candidates, Routing};
use partwise::{KeyFormat, Partitioner};
use partwise_kafka::audit::{audit, summarize, AuditOptions, AuditReport, Progress, TopicAudit};
use serde_json::{json, Value};
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: ConnArgs,
    /// Topic to audit (repeatable; two or more get a co-partitioning verdict)
    #[arg(short = 't', long = "topic", value_name = "TOPIC", required = true, value_parser = parse::not_blank)]
    topics: Vec<String>,
    /// Records to read from the start of each partition (0: counts only)
    #[arg(long, value_name = "N", default_value_t = 1000)]
    sample: u64,
    /// Candidate partitioner (repeatable; default: every client's)
    #[arg(short = 'P', long = "partitioner", value_name = "SPEC", value_parser = parse::partitioner_or_all)]
    partitioners: Vec<Partitioners>,
    /// Also test producers that hash the logical key encoded as F (repeatable)
    #[arg(long = "key-format", value_name = "F", value_parser = parse::key_format)]
    key_formats: Vec<KeyFormat>,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

struct Config {
    opts: AuditOptions,
    out: Format,
}

impl Config {
    fn new(a: &Args) -> Result<Config> {
        let mut parts: Vec<Partitioner> = Vec::new();
        for s in &a.partitioners {
            match s {
                Partitioners::All => parts.extend(Partitioner::all()),
                Partitioners::One(p) => parts.push(*p),
            }
        }
        if parts.is_empty() {
            parts.extend(Partitioner::all());
        }
        parts.dedup();
        let formats = a.key_formats.clone();
        Ok(Config {
            opts: AuditOptions {
                topics: a.topics.clone(),
                sample: a.sample,
                candidates: candidates(&parts, &formats),
            },
            out: a.format,
        })
    }
}

pub fn run(a: Args) -> Result<ExitCode> {
    let cfg = Config::new(&a)?;
    let conn = a.conn.connection()?;
    let bar = (stderr_is_terminal() && cfg.opts.sample > 0).then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} records {per_sec}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let mut on_progress = |p: Progress<'_>| {
        if let Some(b) = &bar {
            match p {
                Progress::Start { topic, target } => {
                    b.reset();
                    b.set_length(target);
                    b.set_message(format!("sampling {topic}"));
                }
                Progress::Read { read } => b.set_position(read),
            }
        }
    };
    let report = audit(&conn, &cfg.opts, &mut on_progress).map_err(kerr)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut out = std::io::stdout().lock();
    match cfg.out {
        Format::Table => write_table(&report, &mut crate::output::Visible::new(&mut out))?,
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &report_json(&report))?;
            writeln!(out)?;
        }
        Format::Ndjson => {
            for t in &report.topics {
                serde_json::to_writer(&mut out, &topic_json(t))?;
                writeln!(out)?;
            }
            if let Some(v) = report_json(&report).get("copartitioning") {
                serde_json::to_writer(&mut out, &json!({"copartitioning": v}))?;
                writeln!(out)?;
            }
        }
    }
    out.flush()?;
    Ok(exit_code(&report))
}

fn exit_code(r: &AuditReport) -> ExitCode {
    let bad_topic = r.topics.iter().any(|t| {
        t.error.is_some()
            || t.partitions.iter().any(|p| p.error.is_some())
            || t.routing.as_ref().is_some_and(|x| x.misrouted_total > 0)
    });
    let split = r.verdict.as_ref().is_some_and(|v| !v.copartitioned);
    if bad_topic || split || r.partial() {
        ExitCode::Findings
    } else {
        ExitCode::Ok
    }
}

fn routing_json(r: &Routing) -> Value {
    json!({
        "sampled": r.sampled,
        "keyed": r.keyed,
        "keyless": r.keyless,
        "empty_keys": r.empty_keys,
        "key_encoding": r.encoding.map(|e| e.to_string()),
        "inferred": r.inferred.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "match_rates": r.rates.iter().map(|m| json!({
            "partitioner": m.candidate.partitioner.spec(),
            "key_format": m.candidate.format.map_or("stored".to_string(), |f| f.to_string()),
            "matched": m.matched,
            "keyed": m.keyed,
            "rate": m.rate(),
        })).collect::<Vec<_>>(),
        "misrouted_total": r.misrouted_total,
        "misrouted": r.misrouted.iter().map(|m| json!({
            "key": key_json(&m.key),
            "key_hex": hex(&m.key),
            "partition": m.partition,
            "offset": m.offset,
            "expected": m.expected,
        })).collect::<Vec<_>>(),
    })
}

fn topic_json(t: &TopicAudit) -> Value {
    json!({
        "topic": t.name,
        "error": t.error,
        "partial": t.partial,
        "partitions": t.partition_count(),
        "per_partition": t.partitions.iter().map(|p| json!({
            "partition": p.partition,
            "leader": p.leader,
            "low": p.low,
            "high": p.high,
            "records": p.records,
            "sampled": p.sampled,
            "error": p.error,
        })).collect::<Vec<_>>(),
        "skew": t.skew.as_ref().map(|s| json!({
            "total": s.total,
            "mean": s.mean,
            "max": s.max,
            "max_over_mean": s.max_over_mean,
            "cv": s.cv,
            "gini": s.gini,
            "hot_partitions": s.hot_partitions,
            "idle_partitions": s.idle_partitions,
        })),
        "routing": t.routing.as_ref().map(routing_json),
    })
}

/// An audit as JSON (`kafka audit --format json`, and `report -b`).
pub fn report_json(r: &AuditReport) -> Value {
    let mut doc = json!({
        "topics": r.topics.iter().map(topic_json).collect::<Vec<_>>(),
        "partial": r.partial(),
    });
    if let Some(v) = &r.verdict {
        doc["copartitioning"] = json!({
            "copartitioned": v.copartitioned,
            "reasons": v.findings.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "fixes": v.findings.iter().map(|f| f.fix()).collect::<Vec<_>>(),
            "findings": v.findings.iter().map(reason_json).collect::<Vec<_>>(),
            "common_partitioners": v.common.iter().map(ToString::to_string).collect::<Vec<_>>(),
        });
    }
    doc
}

/// Rows of the match table.
const RATE_ROWS: usize = 8;

/// The distinct match figures, best first, each with its candidates.
fn rate_rows(ro: &Routing) -> Vec<(f64, Vec<String>)> {
    let mut rows: Vec<((u64, u64), f64, Vec<String>)> = Vec::new();
    for m in &ro.rates {
        let key = (m.matched, m.keyed);
        match rows.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, _, names)) => names.push(m.candidate.to_string()),
            None => rows.push((key, m.rate(), vec![m.candidate.to_string()])),
        }
    }
    rows.into_iter().map(|(_, r, n)| (r, n)).collect()
}

/// Why a partition's record count is not HIGH - LOW, when it is not.
fn partition_note(p: &partwise_kafka::audit::PartitionAudit) -> String {
    if let Some(e) = &p.error {
        return e.clone();
    }
    if p.records > (p.high - p.low).max(0) as u64 {
        return format!(
            "read {} records past HIGH: the broker reported a high watermark below what it served",
            p.records - (p.high - p.low).max(0) as u64
        );
    }
    String::new()
}

fn write_table(r: &AuditReport, out: &mut impl Write) -> Result<()> {
    for t in &r.topics {
        writeln!(out, "topic {}", visible(&t.name))?;
        if let Some(e) = &t.error {
            writeln!(out, "  error: {}\n", visible(&e.to_string()))?;
            continue;
        }
        if let Some(p) = &t.partial {
            writeln!(out, "  PARTIAL: {}", visible(&p.to_string()))?;
        }
        let mut tab = Table::new([
            "  PARTITION",
            "LEADER",
            "LOW",
            "HIGH",
            "RECORDS",
            "SAMPLED",
            "NOTE",
        ]);
        for p in &t.partitions {
            tab.row([
                format!("  {}", p.partition),
                p.leader.map_or("-".into(), |l| l.to_string()),
                p.low.to_string(),
                p.high.to_string(),
                p.records.to_string(),
                p.sampled.to_string(),
                partition_note(p),
            ]);
        }
        tab.write(out)?;
        if let Some(s) = &t.skew {
            writeln!(
                out,
                "  skew: total {}, max/mean {:.2}, cv {:.3}, gini {:.3}, hot {:?}, idle {:?}",
                s.total, s.max_over_mean, s.cv, s.gini, s.hot_partitions, s.idle_partitions
            )?;
        }
        if let Some(ro) = &t.routing {
            writeln!(
                out,
                "  sample: {} records, {} keyed ({}), {} keyless, {} empty keys",
                ro.sampled,
                ro.keyed,
                ro.encoding.map_or("-".into(), |e| e.to_string()),
                ro.keyless,
                ro.empty_keys
            )?;
            if ro.keyed == 0 {
                writeln!(out, "  partitioner: unknown (no keyed records)")?;
            } else if !ro.inferred.is_empty() {
                writeln!(
                    out,
                    "  partitioner: {} (explains every keyed record)",
                    summarize(&ro.inferred)
                )?;
            } else {
                let best = &ro.rates[0];
                writeln!(
                    out,
                    "  partitioner: none explains every keyed record; best {} at {:.1}%, {} misrouted",
                    best.candidate,
                    100.0 * best.rate(),
                    ro.misrouted_total
                )?;
                for m in &ro.misrouted {
                    writeln!(
                        out,
                        "    {} in partition {} at offset {}, expected {}",
                        key_cell(&m.key),
                        m.partition,
                        m.offset,
                        m.expected
                            .map_or("no fixed partition".into(), |e| e.to_string())
                    )?;
                }
            }
            // One row per match figure, with every candidate that has it
            // (equivalent partitioners); the best eight rows, then a count.
            let rows = rate_rows(ro);
            let mut rates = Table::new(["    MATCH", "CANDIDATES"]);
            for (rate, names) in rows.iter().take(RATE_ROWS) {
                rates.row([format!("    {:.1}%", 100.0 * rate), names.join(", ")]);
            }
            if ro.keyed > 0 {
                rates.write(out)?;
                let rest: usize = rows.iter().skip(RATE_ROWS).map(|(_, n)| n.len()).sum();
                if rest > 0 {
                    writeln!(
                        out,
                        "    +{rest} more candidates below (--format json lists every one)"
                    )?;
                }
            }
        }
        writeln!(out)?;
    }
    if let Some(v) = &r.verdict {
        if v.copartitioned {
            writeln!(
                out,
                "co-partitioned: yes ({} topics, {})",
                r.topics.len(),
                summarize(&v.common)
            )?;
        } else {
            writeln!(out, "co-partitioned: NO")?;
            for finding in &v.findings {
                writeln!(out, "  - {finding}")?;
                let fix = finding.fix();
                if !fix.is_empty() {
                    writeln!(out, "    fix: {fix}")?;
                }
            }
        }
    }
    if r.partial() {
        writeln!(out, "result: PARTIAL (see the topics marked PARTIAL)")?;
    }
    Ok(())
}
