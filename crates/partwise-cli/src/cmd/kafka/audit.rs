//! `partwise kafka audit`: per-partition counts with skew statistics, a
//! read-only sample that tells which partitioner (and key encoding) wrote
//! each topic, the misrouted and keyless records, and whether the topics are
//! co-partitioned, in the findings `partwise check` prints (same `kind`,
//! words and JSON). Exit 1 when something is off (misrouted keys, topics
//! that are missing or not co-partitioned, a partial result).

use super::{kerr, stderr_is_terminal, ConnArgs};
use crate::cmd::parse::{self, Partitioners};
use crate::exit::{ExitCode, Result};
use crate::output::{key_cell, visible, Format, Table};
use crate::render::audit::{report_json, topic_finding, topic_json};
use partwise::routing::{candidates, Candidate, Forensics, Routing};
use partwise::{KeyFormat, Partitioner};
use partwise_kafka::audit::{audit, summarize, AuditOptions, AuditReport, Progress};
use serde_json::json;
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

/// Rows of split keys and unexplained records in the table.
const FORENSIC_ROWS: usize = 10;

fn write_forensics(f: &Forensics, out: &mut impl Write) -> Result<()> {
    if let Some(m) = &f.mixture {
        if m.members.is_empty() {
            writeln!(
                out,
                "  mixture: no known partitioner explains more of the keyed records than chance does (1 in {})",
                m.partitions
            )?;
        } else if m.members.len() == 1 {
            writeln!(
                out,
                "  mixture: 1 known partitioner explains {} of {} keyed records, more than chance (1 in {}) can",
                m.explained,
                m.explained + m.unexplained,
                m.partitions
            )?;
        } else {
            writeln!(
                out,
                "  mixture: {} partitioners together explain {} of {} keyed records, each more than chance (1 in {}) can ({})",
                m.members.len(),
                m.explained,
                m.explained + m.unexplained,
                m.partitions,
                if m.minimal {
                    "no fewer can"
                } else {
                    "found greedily: fewer may"
                }
            )?;
        }
        if !m.members.is_empty() {
            let mut tab = Table::new([
                "    SHARE",
                "RECORDS",
                "ONLY",
                "SHARED",
                "KEYS",
                "PARTITIONER",
                "SETTING",
                "EQUIVALENT",
            ]);
            for x in &m.members {
                let p = x.primary();
                let others: Vec<String> = x
                    .family
                    .iter()
                    .filter(|&&c| c != p)
                    .map(ToString::to_string)
                    .collect();
                tab.row([
                    format!("    {:.1}%", 100.0 * x.share),
                    x.records.to_string(),
                    x.records_only.to_string(),
                    x.records_shared.to_string(),
                    format!("{} ({:.0}%)", x.keys, 100.0 * x.key_share),
                    p.to_string(),
                    p.partitioner.setting(),
                    if others.is_empty() {
                        "-".into()
                    } else {
                        summarize_names(&others)
                    },
                ]);
            }
            tab.write(out)?;
        }
        if m.unexplained > 0 {
            writeln!(
                out,
                "  unexplained: {} keyed records ({:.1}%) no known partitioner explains more than chance: an unknown partitioner, or explicit partitions",
                m.unexplained,
                100.0 * m.unexplained_share()
            )?;
            for u in m.unexplained_records.iter().take(FORENSIC_ROWS) {
                writeln!(
                    out,
                    "    {} in partition {} at offset {}",
                    key_cell(&u.key),
                    u.partition,
                    u.offset
                )?;
            }
        }
    }
    if f.split_keys_total > 0 {
        let of = f
            .distinct_keys
            .map_or(String::new(), |k| format!(" of {k}"));
        writeln!(
            out,
            "  split keys: {}{of} keys are on more than one partition: the join breaks for these keys",
            f.split_keys_total
        )?;
        for k in f.split_keys.iter().take(FORENSIC_ROWS) {
            let parts: Vec<String> = k
                .partitions
                .iter()
                .map(|(p, n)| format!("{p} ({n} records)"))
                .collect();
            writeln!(
                out,
                "    {} on partitions {}",
                key_cell(&k.key),
                parts.join(", ")
            )?;
        }
        let rest = f.split_keys_total.saturating_sub(FORENSIC_ROWS as u64);
        if rest > 0 {
            writeln!(
                out,
                "    +{rest} more (--format json lists {} of them)",
                f.split_keys.len()
            )?;
        }
    }
    for s in &f.switches {
        let span = if s.earliest < s.offset {
            format!(
                " (between offsets {} and {}: the records there fit both)",
                s.earliest, s.offset
            )
        } else {
            String::new()
        };
        writeln!(
            out,
            "  switch: partition {} at offset {}{span}: {} before ({} records), {} from it on ({} records)",
            s.partition,
            s.offset,
            family_name(&s.from),
            s.before,
            family_name(&s.to),
            s.after
        )?;
    }
    Ok(())
}

/// A family as printed: the name it goes by (its client default) first.
fn family_name(c: &[Candidate]) -> String {
    let Some(p) = partwise::routing::primary(c) else {
        return "-".into();
    };
    match c.len() {
        1 => p.to_string(),
        n => format!("{p} (and {} equivalent)", n - 1),
    }
}

fn summarize_names(names: &[String]) -> String {
    partwise::findings::summarize(names)
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
                let mixed = ro
                    .forensics
                    .as_ref()
                    .and_then(|f| f.mixture.as_ref())
                    .is_some();
                // The forensics say more than the records one partitioner
                // misplaces: which partitioners explain the records more
                // than chance, and the records none of them explains.
                for m in ro.misrouted.iter().filter(|_| !mixed) {
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
            if let Some(f) = &ro.forensics {
                write_forensics(f, out)?;
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
        if let Some(f) = topic_finding(t) {
            crate::render::write_wrapped(out, "  ", &f.to_string())?;
            crate::render::write_wrapped(out, "  fix: ", &f.fix())?;
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
            let mut said: Vec<String> = Vec::new();
            for finding in &v.findings {
                crate::render::write_wrapped(out, "  - ", &finding.to_string())?;
                let fix = finding.fix();
                if !fix.is_empty() && !said.contains(&fix) {
                    crate::render::write_wrapped(out, "    fix: ", &fix)?;
                    said.push(fix);
                }
            }
        }
    }
    if r.partial() {
        writeln!(out, "result: PARTIAL (see the topics marked PARTIAL)")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use partwise::findings::Reason;
    use partwise_kafka::audit::Verdict;

    /// Two findings with one fix print it once, in the table and in JSON.
    #[test]
    fn a_fix_two_findings_share_is_printed_once() {
        let encodings = |t: &str| Reason::ObservedKeyEncodingsDiffer {
            encodings: vec![(t.into(), "string".into()), ("z".into(), "int32".into())],
        };
        let (a, b) = (encodings("a"), encodings("b"));
        assert_eq!(a.fix(), b.fix());
        let r = AuditReport {
            topics: Vec::new(),
            verdict: Some(Verdict {
                copartitioned: false,
                findings: vec![a.clone(), b],
                common: Vec::new(),
            }),
        };
        let mut out = Vec::new();
        write_table(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("fix: ").count(), 1, "{text}");
        assert_eq!(
            text.matches("  - key encodings differ").count(),
            2,
            "{text}"
        );
        let v = report_json(&r);
        assert_eq!(v["copartitioning"]["fixes"], json!([a.fix()]));
        assert_eq!(v["copartitioning"]["findings"].as_array().unwrap().len(), 2);
    }
}
