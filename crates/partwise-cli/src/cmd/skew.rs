//! `partwise skew`: per-partition load of a key stream, the hot partitions and
//! the heavy-hitter keys that make them, and what that means for consumers.
//!
//! Input is one key per line, or `key,count` with `--weighted` (the count after
//! the last comma). A regular file is cut into newline-aligned ranges read by
//! one thread each; every thread keeps its own loads and heavy-hitter summary,
//! merged at the end, so memory stays bounded however large the file.

use crate::exit::{CliError, ExitCode, Result};
use crate::input::{
    fold_line_groups, for_each_line_group, for_each_line_group_mapped, input_name,
    looks_like_counts, split_count,
};
use crate::output::{key_cell, Format, Table};
use crate::render::skew::report_json;
use partwise::assign::Assignor;
use partwise::traffic::skew::HeavyHitters;
use partwise::traffic::{Report, ReportOptions, Tally};
use partwise::{KeyFormat, PartitionCount, Partitioner};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
#[command(
    mut_arg("partitioner", |a| a.long_help(
        "Partitioner spec (`partwise partitioners` lists them)"
    )),
    mut_arg("input", |a| a.required(true).long_help(
        "Keys, one per line ('-' reads stdin)"
    )),
    mut_arg("key_format", |a| a.long_help(
        "How text becomes key bytes (see `partwise route --help`)"
    ))
)]
pub struct Args {
    #[command(flatten)]
    routing: super::Routing,
    #[command(flatten)]
    input: super::flags::InputFlag,
    /// Lines of -i are KEY,COUNT (the count after the last comma): each key weighs its count
    #[arg(long = "weighted", alias = "counts")]
    counts: bool,
    #[command(flatten)]
    key_format: super::flags::KeyFormatFlag,
    #[arg(long, value_name = "M", allow_negative_numbers = true, value_parser = super::parse::positive_u32,
          help = super::flags::CONSUMERS,
          long_help = "How many consumers the group has: each one's share of the load under --assignor, and the idle ones")]
    consumers: Option<u32>,
    #[arg(short = 'a', long = "assignor", value_name = "SPEC", default_value = "java:range", value_parser = super::parse::assignor,
          help = super::flags::ASSIGNOR,
          long_help = "The consumer group's assignor (any spec of `partwise assign`), for --consumers")]
    assignor: Assignor,
    /// Total produce rate into the topic, MB/s, for the lag forecast
    #[arg(long, value_name = "MBPS", allow_negative_numbers = true)]
    rate_mbps: Option<f64>,
    /// What one consumer processes from one partition, MB/s, for the lag forecast
    #[arg(long, value_name = "MBPS", allow_negative_numbers = true)]
    consume_mbps_per_partition: Option<f64>,
    #[arg(
        help = super::flags::TOP,
        long_help = "Heavy hitters to report",
       long, value_name = "N", default_value_t = 10)]
    top: usize,
    /// Counters of the heavy-hitter summary (error <= total / (capacity + 1))
    #[arg(long, value_name = "N", default_value = "1024", value_parser = super::parse::positive_usize)]
    capacity: usize,
    /// Write an SVG bar chart of partition load to FILE
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    #[arg(
        help = super::flags::THREADS,
        long_help = "Threads reading a regular file (default: all cores)",
       long, value_name = "N")]
    threads: Option<usize>,
    #[command(flatten)]
    format: super::flags::FormatFlag,
}

struct Config {
    n: PartitionCount,
    partitioner: Partitioner,
    input: PathBuf,
    counts: bool,
    format: KeyFormat,
    consumers: Option<u32>,
    assignor: Assignor,
    lag: Option<(f64, f64)>,
    top: usize,
    capacity: usize,
    plot: Option<PathBuf>,
    threads: usize,
    out: Format,
}

impl Config {
    fn new(a: Args) -> Result<Config> {
        let (n, partitioner) = a.routing.parse()?;
        crate::limits::counted_partitions("-p", n.get())?;
        let format = a.key_format.key_format;
        if let Some(m) = a.consumers {
            crate::limits::members("--consumers", u64::from(m))?;
        }
        let (consumers, assignor) = (a.consumers, a.assignor);
        let lag = match (a.rate_mbps, a.consume_mbps_per_partition) {
            (None, None) => None,
            (Some(r), Some(c)) => {
                if !(r >= 0.0 && r.is_finite()) {
                    return Err(CliError::msg(format!("--rate-mbps: {r} is not a rate")));
                }
                if !(c > 0.0 && c.is_finite()) {
                    return Err(CliError::msg(format!(
                        "--consume-mbps-per-partition: {c} is not a positive rate"
                    )));
                }
                Some((r, c))
            }
            _ => {
                return Err(CliError::msg(
                    "the lag forecast needs both --rate-mbps and --consume-mbps-per-partition",
                ))
            }
        };
        for (flag, v) in [("--capacity", a.capacity), ("--top", a.top)] {
            if v > HeavyHitters::MAX_CAPACITY {
                return Err(CliError::msg(format!(
                    "{flag} {v}: the heavy-hitter summary keeps at most {} counters",
                    HeavyHitters::MAX_CAPACITY
                )));
            }
        }
        // Every thread keeps its own loads and summary: fewer threads when
        // both are large keeps the whole under about 1 GiB.
        let per_thread = u64::from(n.get()) * 8 + HeavyHitters::table_bytes(a.capacity.max(a.top));
        let threads = a
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .clamp(1, 64)
            .min(((1u64 << 30) / per_thread.max(1)).max(1) as usize);
        Ok(Config {
            n,
            partitioner,
            input: a
                .input
                .input
                .ok_or_else(|| CliError::msg("-i/--input: required"))?,
            counts: a.counts,
            format,
            consumers,
            assignor,
            lag,
            top: a.top,
            capacity: a.capacity.max(a.top),
            plot: a.plot,
            threads,
            out: a.format.format,
        })
    }
}

const COUNTS_OVERFLOW: &str = "the counts add up to more than 2^64 - 1";

/// A bad line, numbered within the range its thread read.
struct LineError {
    line: u64,
    msg: String,
}

/// One reader's tally, with the buffers it decodes keys into.
struct Scan {
    t: Tally,
    arena: Vec<u8>,
    spans: Vec<(usize, usize)>,
    weights: Vec<u64>,
}

impl Scan {
    fn new(cfg: &Config) -> Scan {
        Scan {
            t: Tally::new(cfg.n, cfg.capacity),
            arena: Vec::new(),
            spans: Vec::new(),
            weights: Vec::new(),
        }
    }

    /// Tallies one group of lines, `first` the 0-based number of its first.
    fn group(
        &mut self,
        cfg: &Config,
        first: u64,
        group: &[&[u8]],
    ) -> std::result::Result<(), LineError> {
        let Scan {
            t,
            arena,
            spans,
            weights,
        } = self;
        weights.clear();
        let decoded: Vec<&[u8]>;
        let keys: &[&[u8]] = if cfg.counts || !cfg.format.is_identity() {
            arena.clear();
            spans.clear();
            for (i, line) in group.iter().enumerate() {
                let fail = |msg: String| LineError {
                    line: first + i as u64 + 1,
                    msg,
                };
                let (key, w) = if cfg.counts {
                    split_count(line).map_err(fail)?
                } else {
                    (*line, 1)
                };
                t.weigh(w).map_err(|_| fail(COUNTS_OVERFLOW.to_string()))?;
                let s = arena.len();
                cfg.format
                    .encode_into(key, arena)
                    .map_err(|e| fail(e.to_string()))?;
                spans.push((s, arena.len()));
                weights.push(w);
            }
            decoded = spans.iter().map(|&(s, e)| &arena[s..e]).collect();
            &decoded
        } else {
            group
        };
        t.add(cfg.partitioner, cfg.n, keys, weights);
        Ok(())
    }
}

impl From<CliError> for LineError {
    fn from(e: CliError) -> LineError {
        LineError {
            line: 0,
            msg: e.to_string(),
        }
    }
}

fn line_error(name: &str, base: u64, e: LineError) -> CliError {
    if e.line > 0 {
        CliError::msg(format!("{name} line {}: {}", base + e.line, e.msg))
    } else {
        CliError::msg(e.msg)
    }
}

/// Regular files at least this large are read on several threads: below
/// it each thread's heavy-hitter table costs more than the split saves.
const PARALLEL_MIN_BYTES: u64 = 8 << 20;

/// Reads the whole input, in parallel when it is a large regular file.
fn scan_file(cfg: &Config) -> Result<Tally> {
    let name = input_name(&cfg.input);
    let path: &Path = &cfg.input;
    let read = fold_line_groups(
        path,
        cfg.threads,
        PARALLEL_MIN_BYTES,
        || Scan::new(cfg),
        |s: &mut Scan, first, group: &[&[u8]]| s.group(cfg, first, group),
    )?;
    let Some((parts, lines)) = read else {
        let mut s = Scan::new(cfg);
        let per_group = |first, group: &[&[u8]]| s.group(cfg, first, group);
        let lines = if path.as_os_str() == "-" {
            for_each_line_group(&mut std::io::stdin().lock(), &name, per_group)
        } else {
            for_each_line_group_mapped(path, per_group)
        }
        .map_err(|e| line_error(&name, 0, e))?;
        s.t.lines = lines;
        return Ok(s.t);
    };
    let mut total: Option<Tally> = None;
    for part in parts {
        match &mut total {
            None => total = Some(part.t),
            Some(t) => t
                .merge(part.t)
                .map_err(|_| CliError::msg(format!("{name}: {COUNTS_OVERFLOW}")))?,
        }
    }
    let mut total =
        total.ok_or_else(|| CliError::msg(format!("{name}: no keys (the input is empty)")))?;
    total.lines = lines;
    Ok(total)
}

pub fn run(a: Args) -> Result<ExitCode> {
    // `--counts FILE` is a KEY,COUNT file everywhere else.
    super::flags::note_deprecated("skew", "--counts", "--weighted");
    let cfg = Config::new(a)?;
    // Never the key file itself: refused before it is read.
    let plot = match &cfg.plot {
        Some(path) => {
            let mut o = crate::outfile::Output::new("--plot", path);
            o.input("-i/--input", &cfg.input)?;
            Some(o)
        }
        None => None,
    };
    if !cfg.counts && cfg.input.as_os_str() != "-" && looks_like_counts(&cfg.input) {
        say!(
            "partwise: warning: every line of {} looks like KEY,COUNT but --weighted was not given: each whole line is hashed as a key (add --weighted to weigh keys by their counts)",
            cfg.input.display()
        );
    }
    let tally = scan_file(&cfg)?;
    let name = input_name(&cfg.input);
    if tally.lines == 0 {
        return Err(CliError::msg(format!(
            "{name}: no keys (the input is empty)"
        )));
    }
    if tally.total() == 0 {
        return Err(CliError::msg(format!(
            "{name}: every count is 0, there is no load to analyse"
        )));
    }
    let opts = ReportOptions {
        top: cfg.top,
        consumers: cfg.consumers.map(|m| (cfg.assignor, m)),
        lag: cfg.lag,
    };
    let report = tally
        .report(cfg.partitioner, cfg.n, &opts)
        .map_err(|e| CliError::context(format!("--assignor {}", cfg.assignor.spec()), e))?;
    if let Some(plot) = &plot {
        let title = format!(
            "{}: load per partition ({} partitions, {})",
            name,
            cfg.n,
            cfg.partitioner.spec()
        );
        let svg = crate::render::svg::load_svg(&tally.loads, &report.stats, &title, None);
        plot.write(svg.as_bytes())?;
    }
    let mut out = std::io::stdout().lock();
    match cfg.out {
        Format::Json | Format::Ndjson => {
            crate::output::write_doc(&mut out, cfg.out, &report_json(&report))?;
        }
        Format::Table => write_table(&mut out, &cfg, &tally, &report)?,
    }
    Ok(if report.stats.hot_partitions.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

fn write_table(out: &mut impl Write, cfg: &Config, tally: &Tally, r: &Report) -> Result<()> {
    let (total, stats) = (r.total, &r.stats);
    writeln!(
        out,
        "{} keys, total load {} over {} partitions ({}): max/mean {:.2}, cv {:.3}, gini {:.3}",
        tally.lines,
        total,
        cfg.n,
        cfg.partitioner.spec(),
        stats.max_over_mean,
        stats.cv,
        stats.gini
    )?;
    if tally.not_fixed > 0 {
        writeln!(
            out,
            "{} of the load has no fixed partition under this partitioner",
            tally.not_fixed
        )?;
    }
    let mut t = Table::new(["PARTITION", "LOAD", "SHARE", ""]);
    for (p, &l) in tally.loads.iter().enumerate() {
        let share = l as f64 / total as f64;
        let mark = if stats.hot_partitions.contains(&(p as u32)) {
            "HOT"
        } else if l == 0 {
            "idle"
        } else {
            ""
        };
        t.row([
            p.to_string(),
            l.to_string(),
            format!("{:.1}%", share * 100.0),
            mark.to_string(),
        ]);
    }
    t.write(&mut *out)?;
    writeln!(
        out,
        "\nheavy hitters (estimates are at most {} below the true count):",
        r.error_bound
    )?;
    let mut t = Table::new(["KEY", "ESTIMATE", "SHARE", "PARTITION"]);
    for h in &r.heavy {
        t.row([
            key_cell(&h.hitter.key),
            h.hitter.estimate.to_string(),
            format!("{:.1}%", h.hitter.estimate as f64 * 100.0 / total as f64),
            h.partition.map_or("-".into(), |p| p.to_string()),
        ]);
    }
    t.write(&mut *out)?;
    if let Some(cs) = &r.consumers {
        writeln!(out, "\nconsumers ({}):", cfg.assignor.spec())?;
        let mut t = Table::new(["MEMBER", "PARTITIONS", "SHARE", ""]);
        for c in &cs.members {
            let list: Vec<String> = c.partitions.iter().map(u32::to_string).collect();
            t.row([
                c.member.clone(),
                list.join(","),
                format!("{:.1}%", c.load as f64 * 100.0 / total as f64),
                if c.load == 0 {
                    "idle".to_string()
                } else {
                    String::new()
                },
            ]);
        }
        t.write(&mut *out)?;
    }
    if let Some(lag) = &r.lag {
        let worst = lag.growth_mbps.iter().cloned().fold(0.0, f64::max);
        writeln!(
            out,
            "\nlag forecast at {} MB/s per partition: the hottest partition's lag grows {worst:.2} MB/s ({:.0} MB per hour)",
            lag.consume_mbps_per_partition,
            worst * 3600.0
        )?;
    }
    if let Some(p) = &cfg.plot {
        writeln!(out, "\nplot written to {}", p.display())?;
    }
    Ok(())
}
