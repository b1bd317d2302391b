//! `partwise redis`: a live Redis Cluster. `slots` prints the slot map,
//! `check` places key families on the real nodes, `hot` samples keys for the
//! hash tags that crowd one node. All three only read.
//!
//! A node that fails mid-command does not hide what the others answered: the
//! partial report is printed, then the failures, and the exit code is 2.

use super::{key_source, parse};
use crate::exit::{CliError, ExitCode, Result};
use crate::output::{key_cell, visible, Format, JsonStream, Table};
use crate::render::redis::{check_summary, CheckDoc, ClusterLoadJson, TrafficJson};
use partwise_redis::{
    check, choose_measure, enable_slot_stats, read_slot_stats, sample_matching, slots_report,
    weigh, CheckReport, Error, Family, HotReport, HotRule, KeyRow, Measure, NodeAddr,
    NodeSlotStats, SlotMap, SlotsReport, TrafficReport, SETTING,
};
use std::ffi::OsString;
use std::io::{BufWriter, Write};
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// The live slot map: primaries, replicas, slot ranges (and keys per node with --key-counts)
    Slots(SlotsArgs),
    /// Slot and node of every family member per logical key, and a lint of the patterns
    Check(CheckArgs),
    /// Sample keys (SCAN per primary, never KEYS) for hash tags that crowd one node
    Hot(HotArgs),
}

#[derive(clap::Args)]
#[command(
    mut_arg("cluster", |a| a.required(true).long_help(
        "A cluster node, HOST:PORT (repeatable: the next is tried when one does not answer)"
    )),
    mut_arg("timeout", |a| a.default_value("2s").long_help(
        "Give up on a node after this long: 500ms, 2s, 1m (a bare number is seconds)"
    ))
)]
struct Conn {
    #[command(flatten)]
    cluster: super::flags::RedisConn,
    #[command(flatten)]
    timeout: super::flags::TimeoutFlag,
}

#[derive(clap::Args)]
#[command(
    mut_arg("format", |a| a.long_help(
        "Output format: table, json (one document) or ndjson (one line per node)"
    ))
)]
struct SlotsArgs {
    #[command(flatten)]
    conn: Conn,
    /// Also count keys on every node (DBSIZE)
    #[arg(long = "key-counts", alias = "counts")]
    counts: bool,
    #[command(flatten)]
    format: super::flags::FormatFlag,
}

#[derive(clap::Args)]
#[command(
    mut_arg("input", |a| a.long_help(
        "Read logical keys from FILE, one per line ('-' reads stdin)"
    )),
    mut_arg("key_format", |a| a.long_help(
        "How text becomes key bytes: utf8, hex, base64, string, int32, int64, avro-sr:ID"
    )),
    mut_arg("format", |a| a.long_help(
        "Output format: table, json (one document) or ndjson (one line per key, then a summary)"
    ))
)]
struct CheckArgs {
    #[command(flatten)]
    conn: Conn,
    /// A key pattern with %s where the logical key goes, e.g. 'market:{%s}' (at least two)
    #[arg(long = "family", value_name = "PATTERN", required = true)]
    family: Vec<String>,
    /// Logical keys (e.g. symbols)
    #[arg(value_name = "KEY")]
    keys: Vec<OsString>,
    #[command(flatten)]
    input: super::flags::InputFlag,
    #[command(flatten)]
    key_format: super::flags::KeyFormatFlag,
    #[command(flatten)]
    format: super::flags::FormatFlag,
}

#[derive(clap::Args)]
#[command(
    mut_arg("format", |a| a.long_help(
        "Output format: table or json (one document); ndjson gives one line per tag"
    ))
)]
struct HotArgs {
    #[command(flatten)]
    conn: Conn,
    #[arg(
        help = super::flags::SAMPLE,
        long_help = "Keys to sample per primary",
        long,
        value_name = "N",
        default_value = "10000",
        allow_negative_numbers = true,
        value_parser = parse::positive_usize
    )]
    sample: usize,
    #[arg(
        help = super::flags::TOP,
        long_help = "Tags and slots to list",
        long,
        value_name = "N",
        default_value = "10",
        allow_negative_numbers = true,
        value_parser = parse::positive_usize
    )]
    top: usize,
    /// A tag is hot when its keys are at least this many times what one slot in use
    /// holds (the other slots' mean), on its node and in the cluster
    #[arg(
        long,
        value_name = "X",
        default_value = "3",
        allow_negative_numbers = true,
        value_parser = parse::at_least_one
    )]
    margin: f64,
    /// ... and it has at least this many keys (estimated), so a handful is never hot
    #[arg(
        long = "min-keys",
        value_name = "N",
        default_value = "50",
        allow_negative_numbers = true,
        value_parser = parse::positive_usize
    )]
    min_keys: usize,
    /// ... and it holds at least this fraction of its node's keys
    #[arg(
        long = "min-share",
        value_name = "F",
        default_value = "0.05",
        allow_negative_numbers = true,
        value_parser = parse::fraction
    )]
    min_share: f64,
    /// ... and at least this fraction of all the cluster's keys, so that a few
    /// keys on a near-empty node are not called hot
    #[arg(
        long = "min-cluster-share",
        value_name = "F",
        default_value = "0.01",
        allow_negative_numbers = true,
        value_parser = parse::fraction_or_zero
    )]
    min_cluster_share: f64,
    /// Only keys matching this SCAN MATCH glob (e.g. 'myapp:*'): the whole
    /// keyspace of each node is scanned to count them
    #[arg(long = "match", value_name = "GLOB", value_parser = parse::not_blank)]
    pattern: Option<String>,
    /// Weigh tags by keys, or by the CPU or network bytes their slots cost
    /// (CLUSTER SLOT-STATS, Valkey 8.0+ and Redis 8.2+; default cpu, and key
    /// counts where a server cannot give it, saying why)
    #[arg(long, value_enum, value_name = "MEASURE")]
    by: Option<By>,
    /// Set cluster-slot-stats-enabled yes on primaries where it is no (a
    /// server setting; without this flag partwise only reads it)
    #[arg(long = "enable-slot-stats")]
    enable_slot_stats: bool,
    #[command(flatten)]
    format: super::flags::FormatFlag,
}

/// What `--by` weighs a tag by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// Its keys (sampled by SCAN)
    Keys,
    /// The CPU time spent on its slot
    Cpu,
    /// The network bytes in and out for its slot
    Net,
}

impl By {
    pub fn measure(self) -> Measure {
        match self {
            By::Keys => Measure::Keys,
            By::Cpu => Measure::Cpu,
            By::Net => Measure::Net,
        }
    }
}

/// The measure a command weighs by on this cluster, why, and the slot
/// statistics when it is work: read on `primaries` (those that answered),
/// the setting enabled first only when `enable` says so.
pub fn measure_for(
    primaries: &[NodeAddr],
    by: Option<By>,
    enable: bool,
    timeout: Duration,
) -> Result<(Measure, String, Vec<NodeSlotStats>)> {
    if by == Some(By::Keys) {
        let (m, why) = choose_measure(&[], Some(Measure::Keys));
        return Ok((m, why, Vec::new()));
    }
    let (mut stats, errors) = read_slot_stats(primaries, timeout);
    if let Some(e) = errors.first() {
        return Err(redis_err(e.clone()));
    }
    if enable {
        let changed = enable_slot_stats(&stats, timeout).map_err(redis_err)?;
        if !changed.is_empty() {
            let names: Vec<String> = changed.iter().map(ToString::to_string).collect();
            say!(
                "partwise: set {SETTING} yes on {} (--enable-slot-stats); their counters start now",
                names.join(", ")
            );
            let (again, errors) = read_slot_stats(primaries, timeout);
            if let Some(e) = errors.first() {
                return Err(redis_err(e.clone()));
            }
            stats = again;
        }
    }
    let (m, why) = choose_measure(&stats, by.map(By::measure));
    Ok((m, why, stats))
}

pub fn run(args: Args) -> Result<ExitCode> {
    match args.command {
        Sub::Slots(a) => {
            // `--counts` is a file of KEY,COUNT lines everywhere else.
            super::flags::note_deprecated("redis slots", "--counts", "--key-counts");
            slots(a)
        }
        Sub::Check(a) => check_cmd(a),
        Sub::Hot(a) => hot(a),
    }
}

/// Seeds and timeout, validated.
struct Cluster {
    seeds: Vec<NodeAddr>,
    timeout: Duration,
}

impl Conn {
    fn validate(&self) -> Result<Cluster> {
        Ok(Cluster {
            seeds: self.cluster.cluster.clone(),
            timeout: self.timeout.timeout,
        })
    }
}

impl Cluster {
    fn slot_map(&self) -> Result<SlotMap> {
        SlotMap::fetch(&self.seeds, self.timeout).map_err(redis_err)
    }
}

fn redis_err(e: Error) -> CliError {
    CliError::lib(e)
}

/// Prints node failures after a partial report and turns them into exit 2.
fn fail_partial(errors: &[Error], what: &str) -> Result<ExitCode> {
    let mut lines: Vec<String> = errors.iter().map(Error::to_string).collect();
    lines.dedup();
    let last = lines.pop().unwrap_or_default();
    for l in &lines {
        say!("partwise: error: {l}");
    }
    Err(CliError::msg(format!("{last} ({what})")))
}

// ---- slots

fn ranges_text(ranges: &[[u16; 2]]) -> String {
    if ranges.is_empty() {
        return "-".to_string();
    }
    ranges
        .iter()
        .map(|&[a, b]| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn slots(args: SlotsArgs) -> Result<ExitCode> {
    let cluster = args.conn.validate()?;
    let report = slots_report(&cluster.seeds, cluster.timeout, args.counts).map_err(redis_err)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    match args.format.format {
        Format::Json => crate::output::write_doc(&mut out, Format::Json, &report)?,
        Format::Ndjson => {
            let mut s = JsonStream::new(&mut out, Format::Ndjson)?;
            for line in report.lines() {
                s.write(&line)?;
            }
            s.finish()?;
        }
        Format::Table => slots_table(&report, &mut out)?,
    }
    out.flush()?;
    drop(out);
    if args.counts && !report.errors.is_empty() {
        return fail_partial(&report.errors, "key counts missing for that node");
    }
    for e in &report.errors {
        say!("partwise: {e}");
        say!("  fix: the cluster still lists that node; check it (a frozen or overloaded node fails over after cluster-node-timeout)");
    }
    Ok(if report.healthy() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

fn slots_table(report: &SlotsReport, out: &mut impl Write) -> Result<()> {
    let mut header = vec!["NODE", "ROLE", "HEALTH", "SLOTS", "COUNT"];
    if report.with_keys {
        header.push("KEYS");
    }
    header.push("ID");
    let mut t = Table::new(header);
    for (shard, n) in report.nodes() {
        let mut row = vec![
            n.addr.clone(),
            n.role.to_string(),
            if n.answered {
                n.health.clone()
            } else {
                format!("{} but no answer", n.health)
            },
            ranges_text(&shard.slots),
            shard.slot_count.to_string(),
        ];
        if report.with_keys {
            row.push(match n.keys {
                Some(Some(c)) => c.to_string(),
                _ => "?".to_string(),
            });
        }
        row.push(n.id.chars().take(8).collect());
        t.row(row);
    }
    t.write(&mut *out)?;
    writeln!(
        out,
        "cluster_state:{} ({} from {})",
        visible(&report.cluster_state),
        report.source,
        report.seed
    )?;
    if !report.unassigned.is_empty() {
        writeln!(out, "unassigned slots: {}", ranges_text(&report.unassigned))?;
    }
    Ok(())
}

// ---- check

fn check_cmd(args: CheckArgs) -> Result<ExitCode> {
    let cluster = args.conn.validate()?;
    let family = Family::new(&args.family).map_err(|e| CliError::context("--family", e))?;
    if family.patterns().len() < 2 {
        return Err(CliError::msg(
            "--family: give at least two patterns, e.g. --family 'market:{%s}' --family 'notif:{%s}'",
        ));
    }
    let source = key_source(args.keys, args.input.input, args.key_format.key_format);
    if source.is_empty() {
        return Err(CliError::msg(
            "no keys: give logical KEY arguments or -i FILE ('-' for stdin)",
        ));
    }
    let mut keys = Vec::new();
    let held = crate::input::Held::new("the logical keys", "");
    source.for_each_held(held, |b| {
        keys.extend(b.keys.iter().map(|k| k.to_vec()));
        Ok(())
    })?;
    let map = cluster.slot_map()?;
    let report = check(&map, &family, &keys, cluster.timeout);
    let load = partwise_redis::cluster_load(&map, cluster.timeout);
    let mut out = BufWriter::new(std::io::stdout().lock());
    write_check(&report, &family, &load, args.format.format, &mut out)?;
    out.flush()?;
    drop(out);
    if !report.errors.is_empty() {
        let what = format!(
            "partial report: {} of {} logical keys not verified",
            report.unverified(),
            report.keys.len()
        );
        return fail_partial(&report.errors, &what);
    }
    Ok(if report.ok() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

fn write_check(
    report: &CheckReport,
    family: &Family,
    load: &partwise_redis::ClusterLoad,
    format: Format,
    out: &mut impl Write,
) -> Result<()> {
    match format {
        Format::Json => {
            let mut doc = CheckDoc::of(report, family);
            doc.node_load = Some(ClusterLoadJson::of(load));
            crate::output::write_doc(&mut *out, Format::Json, &doc)?;
        }
        Format::Ndjson => {
            /// The last line: the summary and the load per primary.
            #[derive(serde::Serialize)]
            struct Last {
                #[serde(flatten)]
                counts: partwise_redis::CheckSummary<serde_json::Value>,
                summary: bool,
                node_load: ClusterLoadJson,
            }
            let mut s = JsonStream::new(&mut *out, Format::Ndjson)?;
            for k in &report.keys {
                s.write(&KeyRow::of(k))?;
            }
            s.write(&Last {
                counts: check_summary(report, family),
                summary: true,
                node_load: ClusterLoadJson::of(load),
            })?;
            s.finish()?;
        }
        Format::Table => {
            let mut header = vec!["KEY".to_string()];
            header.extend(family.patterns().iter().map(|p| p.as_str().to_string()));
            header.push("CO-LOCATED".to_string());
            let mut t = Table::new(header);
            for k in &report.keys {
                let mut row = vec![key_cell(&k.key)];
                for m in &k.members {
                    let node = m
                        .node
                        .as_ref()
                        .map_or_else(|| "no node".to_string(), ToString::to_string);
                    let mark = if m.live_slot.is_some() {
                        ""
                    } else {
                        " (unverified)"
                    };
                    row.push(format!("{} @ {node}{mark}", m.slot));
                }
                row.push(
                    if k.co_located() {
                        "yes"
                    } else if k.same_node() {
                        "no (same node, different slots)"
                    } else {
                        "no"
                    }
                    .to_string(),
                );
                t.row(row);
            }
            t.write(out)?;
            for l in &report.lints {
                let level = if l.is_problem() { "lint" } else { "note" };
                writeln!(out, "{level}: {l}")?;
                if l.is_problem() {
                    writeln!(out, "  fix: {}", l.fix())?;
                }
            }
            writeln!(
                out,
                "{} of {} logical keys co-located (one slot); {} on one node{}",
                report.co_located(),
                report.keys.len(),
                report.same_node(),
                if report.unverified() > 0 {
                    format!("; {} not verified", report.unverified())
                } else {
                    String::new()
                }
            )?;
            writeln!(out)?;
            crate::render::redis::write_load(load, out)?;
        }
    }
    Ok(())
}

// ---- hot

fn hot(args: HotArgs) -> Result<ExitCode> {
    let cluster = args.conn.validate()?;
    let (per_node, top) = (args.sample, args.top);
    let min_share = HotRule {
        margin: args.margin,
        min_keys: args.min_keys as f64,
        node_share: args.min_share,
        cluster_share: args.min_cluster_share,
    };
    let map = cluster.slot_map()?;
    let pattern = args.pattern.as_deref().map(str::as_bytes);
    let report = sample_matching(&map, per_node, pattern, cluster.timeout);
    let answered: Vec<NodeAddr> = report.nodes.iter().map(|n| n.node.clone()).collect();
    let (measure, why, stats) =
        measure_for(&answered, args.by, args.enable_slot_stats, cluster.timeout)?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    let any_hot = if measure == Measure::Keys {
        write_hot(&report, top, min_share, &why, args.format.format, &mut out)?;
        report.hot_tags(min_share).next().is_some()
    } else {
        let traffic = weigh(&report, &stats, measure, min_share, top);
        write_traffic(
            &traffic,
            &report,
            top,
            min_share,
            &why,
            args.format.format,
            &mut out,
        )?;
        let hot = traffic.hot_tags().next().is_some();
        hot
    };
    out.flush()?;
    drop(out);
    if !report.errors.is_empty() {
        return fail_partial(
            &report.errors,
            "partial report: that node's keys are not counted",
        );
    }
    if map.state != "ok" {
        // The sample may look fine while the cluster serves no keys at all.
        say!(
            "partwise: cluster_state:{} (from {}): the cluster is not serving every slot, so clients fail whatever the tags",
            map.state, map.seed
        );
        say!("  fix: partwise redis slots -c {} shows the unassigned slots and the nodes that do not answer", map.seed);
        return Ok(ExitCode::Findings);
    }
    Ok(if any_hot {
        ExitCode::Findings
    } else {
        ExitCode::Ok
    })
}

fn write_traffic(
    t: &TrafficReport,
    sample: &HotReport,
    top: usize,
    rule: HotRule,
    why: &str,
    format: Format,
    out: &mut impl Write,
) -> Result<()> {
    let doc = TrafficJson::of(t, sample, top, rule, why);
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        Format::Ndjson => {
            let mut s = JsonStream::new(&mut *out, Format::Ndjson)?;
            for tag in &doc.tags {
                s.write(&serde_json::to_value(tag)?)?;
            }
            s.finish()?;
        }
        Format::Table => {
            let unit = t.measure.unit();
            writeln!(out, "measure: {} ({})", t.measure.name(), visible(why))?;
            let mut tab = Table::new(["NODE", "SERVER", unit, "SHARE", "BUSY SLOTS"]);
            for n in &t.nodes {
                tab.row([
                    n.node.to_string(),
                    visible(&n.server).into_owned(),
                    n.load.to_string(),
                    format!("{:.1}%", 100.0 * n.share),
                    n.slots_in_use.to_string(),
                ]);
            }
            tab.write(out)?;
            writeln!(out)?;
            let mut tab = Table::new([
                "TAG",
                "SLOT",
                "NODE",
                "EST. KEYS",
                &format!("SLOT {unit}"),
                "NODE SHARE",
                "CLUSTER SHARE",
                "SLOTS' WORTH (NODE/CLUSTER)",
                "HOT",
            ]);
            for tag in t.tags.iter().take(top) {
                let v = tag.verdict;
                tab.row([
                    key_cell(&tag.tag),
                    tag.slot.to_string(),
                    tag.node.to_string(),
                    format!("{:.0}", tag.estimated_keys),
                    if tag.slot_tags > 1 {
                        format!("{} (shared by {} tags)", tag.load, tag.slot_tags)
                    } else {
                        tag.load.to_string()
                    },
                    format!("{:.1}%", v.node_share * 100.0),
                    format!("{:.1}%", v.cluster_share * 100.0),
                    format!("{:.1} / {:.1}", v.node_ratio, v.cluster_ratio),
                    if v.hot { "hot" } else { "" }.to_string(),
                ]);
            }
            tab.write(out)?;
            let hot: Vec<String> = t
                .hot_tags()
                .map(|x| {
                    format!(
                        "{{{}}} on {}",
                        key_cell(&x.tag),
                        visible(&x.node.to_string())
                    )
                })
                .collect();
            let rule_text = format!(
                "{:.1} times the {unit} of one busy slot on its node and in the cluster, {:.0}% of its node's and {:.0}% of the cluster's",
                rule.margin,
                rule.node_share * 100.0,
                rule.cluster_share * 100.0
            );
            if hot.is_empty() {
                writeln!(
                    out,
                    "no tag is hot by {unit} (a hot tag's slot costs {rule_text})"
                )?;
            } else {
                writeln!(
                    out,
                    "hot tags by {unit} (each one's slot costs {rule_text}): {}",
                    hot.join(", ")
                )?;
                writeln!(
                    out,
                    "fix: spread each hot tag's keys over more tags (e.g. {{tag:0}} .. {{tag:N}}, as key salting does for Kafka) unless they must share a slot for MULTI/EXEC"
                )?;
            }
        }
    }
    Ok(())
}

fn write_hot(
    report: &HotReport,
    top: usize,
    min_share: HotRule,
    why: &str,
    format: Format,
    out: &mut impl Write,
) -> Result<()> {
    let is_hot = |t: &partwise_redis::TagLoad| report.is_hot(t, min_share);
    match format {
        Format::Json => crate::output::write_doc(
            &mut *out,
            Format::Json,
            &report.by_keys(top, min_share, why),
        )?,
        Format::Ndjson => {
            let mut s = JsonStream::new(&mut *out, Format::Ndjson)?;
            for t in report.by_keys(top, min_share, why).tags {
                s.write(&t)?;
            }
            s.finish()?;
        }
        Format::Table => {
            writeln!(out, "measure: keys ({})", visible(why))?;
            let mut t = Table::new(["NODE", "KEYS", "SAMPLED", "UNTAGGED"]);
            for n in &report.nodes {
                t.row([
                    n.node.to_string(),
                    n.keys.to_string(),
                    n.sampled.to_string(),
                    n.untagged.to_string(),
                ]);
            }
            t.write(out)?;
            writeln!(out)?;
            let mut t = Table::new([
                "TAG",
                "SLOT",
                "NODE",
                "SAMPLED",
                "EST. KEYS",
                "NODE SHARE",
                "SLOTS' WORTH (NODE/CLUSTER)",
                "HOT",
            ]);
            for tag in report.tags.iter().take(top) {
                t.row([
                    key_cell(&tag.tag),
                    tag.slot.to_string(),
                    tag.node.to_string(),
                    tag.sampled.to_string(),
                    format!("{:.0}", tag.estimated_keys),
                    format!("{:.1}%", tag.node_share * 100.0),
                    {
                        let v = report.verdict(tag, min_share);
                        format!("{:.1} / {:.1}", v.node_ratio, v.cluster_ratio)
                    },
                    if is_hot(tag) { "hot" } else { "" }.to_string(),
                ]);
            }
            t.write(out)?;
            let hot: Vec<String> = report
                .hot_tags(min_share)
                .map(|t| {
                    format!(
                        "{{{}}} on {}",
                        key_cell(&t.tag),
                        visible(&t.node.to_string())
                    )
                })
                .collect();
            let rule = format!(
                "{:.1} times what one slot in use holds on its node and in the cluster, at least {:.0} keys, {:.0}% of its node's and {:.0}% of the cluster's",
                min_share.margin,
                min_share.min_keys,
                min_share.node_share * 100.0,
                min_share.cluster_share * 100.0
            );
            if hot.is_empty() {
                writeln!(out, "no tag is hot (a hot tag holds {rule})")?;
            } else {
                writeln!(out, "hot tags (each holds {rule}): {}", hot.join(", "))?;
                writeln!(
                    out,
                    "fix: spread each hot tag's keys over more tags (e.g. {{tag:0}} .. {{tag:N}}, as key salting does for Kafka) unless they must share a slot for MULTI/EXEC"
                )?;
            }
        }
    }
    Ok(())
}
