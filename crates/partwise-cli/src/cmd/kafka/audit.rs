//! `partwise kafka audit`: per-partition counts with skew statistics, a
//! read-only sample that tells which partitioner (and key encoding) wrote
//! each topic, the misrouted and keyless records, and whether the topics are
//! co-partitioned, in the findings `partwise check` prints (same `kind`,
//! words and JSON). Exit 1 when something is off (misrouted keys, topics
//! that are missing or not co-partitioned, a partial result).

use super::{kerr, stderr_is_terminal, ConnArgs};
use crate::cmd::duration;
use crate::cmd::parse::{self, Partitioners};
use crate::exit::{CliError, ExitCode, Result};
use crate::outfile::Output;
use crate::output::{key_cell, visible, Format, Table};
use crate::render::audit::{report_json, topic_finding, topic_json, window_label};
use partwise::inference::{candidates, Candidate, Forensics, Routing};
use partwise::Partitioner;
use partwise_kafka::audit::{
    audit, summarize, AuditOptions, AuditReport, Progress, Window, WindowTraffic,
};
use std::io::Write;

#[derive(clap::Args)]
#[command(
    mut_arg("partitioners", |a| a.long_help(
        "Candidate partitioner (repeatable; default: every client's)"
    )),
    mut_arg("key_formats", |a| a.long_help(
        "Also test producers that hash the logical key encoded as F (repeatable)"
    ))
)]
pub struct Args {
    #[command(flatten)]
    conn: ConnArgs,
    /// Topic to audit (repeatable; two or more get a co-partitioning verdict)
    #[arg(short = 't', long = "topic", value_name = "TOPIC", required = true, value_parser = parse::not_blank)]
    topics: Vec<String>,
    #[arg(
        help = crate::cmd::flags::SAMPLE,
        long_help = "Records to read per partition (0: counts only): from its start, or the newest ones with --since or --from-end",
       long, value_name = "N", default_value_t = 1000)]
    sample: u64,
    /// Sample the records written in the last DURATION (10m, 1h) instead of
    /// the oldest: skew, heavy hitters and the partitioner are of that window
    #[arg(long, value_name = "DURATION", value_parser = duration::window, conflicts_with = "from_end")]
    since: Option<std::time::Duration>,
    /// Sample the newest N records of each partition instead of the oldest
    #[arg(long = "from-end", value_name = "N", value_parser = parse::positive_u64)]
    from_end: Option<u64>,
    /// Write the sampled window's keys as KEY,COUNT lines to FILE, for any
    /// --counts (the newest records with --since or --from-end)
    #[arg(long = "counts-out", value_name = "FILE")]
    counts_out: Option<std::path::PathBuf>,
    #[command(flatten)]
    partitioners: crate::cmd::flags::Partitioners,
    #[command(flatten)]
    key_formats: crate::cmd::flags::KeyFormats,
    #[command(flatten)]
    format: crate::cmd::flags::FormatFlag,
}

struct Config {
    opts: AuditOptions,
    out: Format,
    counts_out: Option<Output>,
}

impl Config {
    fn new(a: &Args) -> Result<Config> {
        let mut parts: Vec<Partitioner> = Vec::new();
        for s in &a.partitioners.partitioners {
            match s {
                Partitioners::All => parts.extend(Partitioner::all()),
                Partitioners::One(p) => parts.push(*p),
            }
        }
        if parts.is_empty() {
            parts.extend(Partitioner::all());
        }
        parts.dedup();
        let formats = a.key_formats.key_formats.clone();
        let window = match (a.since, a.from_end) {
            (Some(d), _) => Window::Since(d),
            (None, Some(n)) => Window::FromEnd(n),
            (None, None) => Window::Oldest,
        };
        let counts_out = match &a.counts_out {
            None => None,
            Some(path) => {
                if a.sample == 0 {
                    return Err(CliError::msg(
                        "--counts-out needs records: --sample 0 reads none",
                    ));
                }
                let mut o = Output::new("--counts-out", path);
                o.inputs("-F", a.conn.files())?;
                Some(o)
            }
        };
        Ok(Config {
            opts: AuditOptions {
                topics: a.topics.clone(),
                sample: a.sample,
                candidates: candidates(&parts, &formats),
                window,
            },
            out: a.format.format,
            counts_out,
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
    if let Some(o) = &cfg.counts_out {
        let (bytes, left_out) = counts_lines(&report);
        o.write(&bytes)?;
        if left_out > 0 {
            eprintln!(
                "warning: --counts-out: {left_out} keys with a line break or a carriage return left out (a KEY,COUNT line cannot hold them)"
            );
        }
    }
    let mut out = std::io::stdout().lock();
    match cfg.out {
        Format::Table => write_table(
            &report,
            cfg.opts.sample,
            &mut crate::output::Visible::new(&mut out),
        )?,
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &report_json(&report))?;
            writeln!(out)?;
        }
        Format::Ndjson => {
            for t in &report.topics {
                serde_json::to_writer(&mut out, &topic_json(t))?;
                writeln!(out)?;
            }
            if let Some(copartitioning) = report_json(&report).copartitioning {
                /// The last line: the verdict over the topics together.
                #[derive(serde::Serialize)]
                struct Verdict {
                    copartitioning: crate::render::audit::CopartitioningJson,
                }
                serde_json::to_writer(&mut out, &Verdict { copartitioning })?;
                writeln!(out)?;
            }
        }
    }
    out.flush()?;
    Ok(exit_code(&report))
}

/// The window's `KEY,COUNT` lines over every audited topic (a key in two
/// topics counted in both), most records first, and how many keys were
/// left out because a line cannot hold them.
fn counts_lines(r: &AuditReport) -> (Vec<u8>, usize) {
    let keys = partwise_kafka::audit::window_counts(&r.topics);
    let mut out = Vec::new();
    let mut left_out = 0;
    for (k, c) in keys {
        if k.contains(&b'\n') || k.contains(&b'\r') {
            left_out += 1;
            continue;
        }
        out.extend_from_slice(&k);
        out.push(b',');
        out.extend_from_slice(c.to_string().as_bytes());
        out.push(b'\n');
    }
    (out, left_out)
}

/// Rows of each heavy-hitter ranking in the table.
const HITTER_ROWS: usize = 5;

fn write_traffic(t: &WindowTraffic, sample: u64, out: &mut impl Write) -> Result<()> {
    let h = &t.hitters;
    writeln!(
        out,
        "  window: {} (at most {sample} per partition): {} records, {} bytes, {} keys, {} keyless",
        window_label(t.window),
        h.records,
        h.bytes,
        h.distinct_keys,
        h.keyless
    )?;
    if h.by_records.is_empty() {
        return Ok(());
    }
    let mut tab = Table::new(["    KEY", "RECORDS", "SHARE", "BYTES", "BYTE SHARE"]);
    for x in h.by_records.iter().take(HITTER_ROWS) {
        tab.row([
            format!("    {}", key_cell(&x.key)),
            x.records.to_string(),
            format!("{:.1}%", 100.0 * x.record_share),
            x.bytes.to_string(),
            format!("{:.1}%", 100.0 * x.byte_share),
        ]);
    }
    writeln!(out, "  heavy hitters by records:")?;
    tab.write(out)?;
    if h.by_bytes.first().map(|x| &x.key) != h.by_records.first().map(|x| &x.key) {
        if let Some(x) = h.by_bytes.first() {
            writeln!(
                out,
                "  heaviest by bytes: {} ({} bytes, {:.1}%)",
                key_cell(&x.key),
                x.bytes,
                100.0 * x.byte_share
            )?;
        }
    }
    let mut tab = Table::new(["    PARTITION", "RECORDS", "TOP KEY", "ITS SHARE"]);
    for p in &h.partitions {
        if let Some(x) = p.by_records.first() {
            tab.row([
                format!("    {}", p.partition),
                p.records.to_string(),
                key_cell(&x.key),
                format!("{:.1}%", 100.0 * x.record_share),
            ]);
        }
    }
    writeln!(out, "  per partition:")?;
    tab.write(out)?;
    Ok(())
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
    let Some(p) = partwise::inference::primary(c) else {
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

fn write_table(r: &AuditReport, sample: u64, out: &mut impl Write) -> Result<()> {
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
        if let Some(w) = &t.traffic {
            write_traffic(w, sample, out)?;
        }
        if let Some(s) = &t.skew {
            writeln!(
                out,
                "  skew{}: total {}, max/mean {:.2}, cv {:.3}, gini {:.3}, hot {:?}, idle {:?}",
                if t.traffic.is_some() {
                    " (of the window's records)"
                } else {
                    ""
                },
                s.total,
                s.max_over_mean,
                s.cv,
                s.gini,
                s.hot_partitions,
                s.idle_partitions
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
        write_table(&r, 1000, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("fix: ").count(), 1, "{text}");
        assert_eq!(
            text.matches("  - key encodings differ").count(),
            2,
            "{text}"
        );
        let v = report_json(&r).copartitioning.unwrap();
        assert_eq!(v.fixes, [a.fix()]);
        assert_eq!(v.findings.len(), 2);
    }
}
