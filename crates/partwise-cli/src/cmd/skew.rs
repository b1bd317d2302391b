//! `partwise skew`: per-partition load of a key stream, the hot partitions and
//! the heavy-hitter keys that make them, and what that means for consumers.
//!
//! Input is one key per line, or `key,count` with `--counts` (the count after
//! the last comma). A regular file is cut into newline-aligned ranges read by
//! one thread each; every thread keeps its own loads and heavy-hitter summary,
//! merged at the end, so memory stays bounded however large the file.

use crate::exit::{CliError, ExitCode, Result};
use crate::input::{
    for_each_line_group, for_each_line_group_mapped, input_name, line_ranges, lines_before,
    looks_like_counts, split_count,
};
use crate::output::{hex, key_cell, key_json, Format, Table};
use partwise::assign::Assignor;
use partwise::skew::{HeavyHitters, SkewStats};
use partwise::traffic::{Report, ReportOptions, Tally};
use partwise::{KeyFormat, PartitionCount, Partitioner};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    routing: super::Routing,
    /// Keys, one per line ('-' reads stdin)
    #[arg(short = 'i', long = "input", value_name = "FILE", required = true)]
    input: PathBuf,
    /// Lines are KEY,COUNT (the count after the last comma)
    #[arg(long)]
    counts: bool,
    /// How text becomes key bytes (see `partwise route --help`)
    #[arg(long = "key-format", value_name = "F", default_value = "utf8", value_parser = super::parse::key_format)]
    key_format: KeyFormat,
    /// Consumers in the group, to show each one's share and the idle ones
    #[arg(long, value_name = "M", allow_negative_numbers = true, value_parser = super::parse::positive_u32)]
    consumers: Option<u32>,
    /// Assignor of the consumer group (any spec of `partwise assign`)
    #[arg(long, value_name = "SPEC", default_value = "java:range", value_parser = super::parse::assignor)]
    assignor: Assignor,
    /// Total produce rate into the topic, MB/s, for the lag forecast
    #[arg(long, value_name = "MBPS", allow_negative_numbers = true)]
    rate_mbps: Option<f64>,
    /// What one consumer processes from one partition, MB/s, for the lag forecast
    #[arg(long, value_name = "MBPS", allow_negative_numbers = true)]
    consume_mbps_per_partition: Option<f64>,
    /// Heavy hitters to report
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
    /// Counters of the heavy-hitter summary (error <= total / (capacity + 1))
    #[arg(long, value_name = "N", default_value = "1024", value_parser = super::parse::positive_usize)]
    capacity: usize,
    /// Write an SVG bar chart of partition load to FILE
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Threads reading a regular file (default: all cores)
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
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
        let format = a.key_format;
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
            input: a.input,
            counts: a.counts,
            format,
            consumers,
            assignor,
            lag,
            top: a.top,
            capacity: a.capacity.max(a.top),
            plot: a.plot,
            threads,
            out: a.format,
        })
    }
}

const COUNTS_OVERFLOW: &str = "the counts add up to more than 2^64 - 1";

/// A bad line, numbered within the range its thread read.
struct LineError {
    line: u64,
    msg: String,
}

/// Where one reader thread reads: stdin, or a byte range of a regular file.
enum Source<'a> {
    Stdin,
    File(&'a Path, u64, Option<u64>),
}

/// Reads one stream of lines into a tally.
fn scan(cfg: &Config, source: Source<'_>, name: &str) -> std::result::Result<Tally, LineError> {
    let mut t = Tally::new(cfg.n, cfg.capacity);
    let mut arena = Vec::new();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut weights: Vec<u64> = Vec::new();
    let per_group = |first: u64, group: &[&[u8]]| {
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
                    .encode_into(key, &mut arena)
                    .map_err(|e| fail(e.to_string()))?;
                spans.push((s, arena.len()));
                weights.push(w);
            }
            decoded = spans.iter().map(|&(s, e)| &arena[s..e]).collect();
            &decoded
        } else {
            group
        };
        t.add(cfg.partitioner, cfg.n, keys, &weights);
        Ok::<(), LineError>(())
    };
    t.lines = match source {
        Source::Stdin => for_each_line_group(&mut std::io::stdin().lock(), name, per_group)?,
        Source::File(path, start, end) => for_each_line_group_mapped(path, start, end, per_group)?,
    };
    Ok(t)
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

/// Reads the whole input, in parallel when it is a large regular file.
fn scan_file(cfg: &Config) -> Result<Tally> {
    let name = input_name(&cfg.input);
    let path: &Path = &cfg.input;
    let parallel = path.as_os_str() != "-"
        && cfg.threads > 1
        && std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= 8 << 20);
    if !parallel {
        let source = if path.as_os_str() == "-" {
            Source::Stdin
        } else {
            Source::File(path, 0, None)
        };
        return scan(cfg, source, &name).map_err(|e| line_error(&name, 0, e));
    }
    let ranges = line_ranges(path, cfg.threads)?;
    let results: Vec<(u64, std::result::Result<Tally, LineError>)> = std::thread::scope(|s| {
        let handles: Vec<_> = ranges
            .iter()
            .map(|&(start, end)| {
                let name = &name;
                s.spawn(move || (start, scan(cfg, Source::File(path, start, Some(end)), name)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("reader thread panicked"))
            .collect()
    });
    let mut total: Option<Tally> = None;
    for (start, r) in results {
        let part = match r {
            Ok(p) => p,
            Err(e) => return Err(line_error(&name, lines_before(path, start)?, e)),
        };
        match &mut total {
            None => total = Some(part),
            Some(t) => t
                .merge(part)
                .map_err(|_| CliError::msg(format!("{name}: {COUNTS_OVERFLOW}")))?,
        }
    }
    total.ok_or_else(|| CliError::msg(format!("{name}: no keys (the input is empty)")))
}

/// The bar chart of partition loads: `--plot`'s file, and (with `inline`,
/// an id prefix unique in the page) the chart of `report`'s page. Hot bars
/// are hatched and labelled as well as red, so the chart reads without colour.
pub fn load_svg(loads: &[u64], stats: &SkewStats, title: &str, inline: Option<&str>) -> String {
    let (w, h, pad) = (900.0, 360.0, 40.0);
    let n = loads.len().max(1) as f64;
    let max = stats.max.max(1) as f64;
    let bw = (w - 2.0 * pad) / n;
    // Invisible characters escaped as the tables show them (and C0
    // controls are not even allowed in XML 1.0).
    let esc = |t: &str| {
        crate::output::visible(t)
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let id = inline.unwrap_or("plot");
    let open = match inline {
        // In a page the SVG namespace is implied, and the chart is one image
        // named by its title for screen readers.
        Some(_) => format!(
            "<svg class=\"chart\" role=\"img\" aria-labelledby=\"{id}-title\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n<title id=\"{id}-title\">{}</title>\n",
            esc(title)
        ),
        None => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n"
        ),
    };
    let mut s = format!(
        "{open}<defs><pattern id=\"{id}-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><path d=\"M0 0H6V6H0Z\" fill=\"#d62728\"/><path d=\"M0 0V6\" stroke=\"#fff\" stroke-width=\"2\"/></pattern></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{pad}\" y=\"24\" font-family=\"sans-serif\" font-size=\"14\">{}</text>\n",
        esc(title)
    );
    for (p, &l) in loads.iter().enumerate() {
        let bh = (h - 2.0 * pad) * l as f64 / max;
        let hot = stats.hot_partitions.contains(&(p as u32));
        s.push_str(&format!(
            "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"{}\"><title>partition {p}: {l}{}</title></rect>\n",
            pad + p as f64 * bw,
            h - pad - bh,
            (bw * 0.9).max(0.5),
            bh,
            if hot { format!("url(#{id}-hatch)") } else { "#1f77b4".to_string() },
            if hot { " (hot)" } else { "" }
        ));
    }
    // Labels only while they fit: past a few dozen they would overlap.
    if stats.hot_partitions.len() <= 24 {
        for &p in &stats.hot_partitions {
            let l = loads[p as usize];
            let bh = (h - 2.0 * pad) * l as f64 / max;
            s.push_str(&format!(
                "<text x=\"{:.2}\" y=\"{:.2}\" font-family=\"sans-serif\" font-size=\"11\" text-anchor=\"middle\">HOT {p}</text>\n",
                pad + (p as f64 + 0.45) * bw,
                (h - pad - bh - 4.0).max(36.0)
            ));
        }
    }
    let my = h - pad - (h - 2.0 * pad) * stats.mean / max;
    s.push_str(&format!(
        "<line x1=\"{pad}\" x2=\"{:.2}\" y1=\"{my:.2}\" y2=\"{my:.2}\" stroke=\"black\" stroke-dasharray=\"4 3\"/>\n<text x=\"{:.2}\" y=\"{:.2}\" font-family=\"sans-serif\" font-size=\"11\">mean</text>\n",
        w - pad,
        w - pad - 30.0,
        my - 4.0
    ));
    s.push_str(&format!(
        "<text x=\"{pad}\" y=\"{:.2}\" font-family=\"sans-serif\" font-size=\"11\">partitions 0..{} (hatched red: hot, above {} x mean)</text>\n</svg>\n",
        h - 12.0,
        loads.len().saturating_sub(1),
        partwise::skew::HOT_FACTOR
    ));
    s
}

pub fn run(a: Args) -> Result<ExitCode> {
    let cfg = Config::new(a)?;
    if !cfg.counts && cfg.input.as_os_str() != "-" && looks_like_counts(&cfg.input) {
        say!(
            "partwise: warning: every line of {} looks like KEY,COUNT but --counts was not given: each whole line is hashed as a key (add --counts to weigh keys by their counts)",
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
    if let Some(path) = &cfg.plot {
        let title = format!(
            "{}: load per partition ({} partitions, {})",
            name,
            cfg.n,
            cfg.partitioner.spec()
        );
        let svg = load_svg(&tally.loads, &report.stats, &title, None);
        crate::outfile::write("--plot", path, svg.as_bytes())?;
    }
    let mut out = std::io::stdout().lock();
    match cfg.out {
        Format::Json | Format::Ndjson => {
            crate::output::write_doc(
                &mut out,
                cfg.out,
                &report_json(cfg.partitioner, cfg.n, cfg.assignor, &tally, &report),
            )?;
        }
        Format::Table => write_table(&mut out, &cfg, &tally, &report)?,
    }
    Ok(if report.stats.hot_partitions.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

/// A skew report as JSON: `skew --format json`, and each topic's skew in
/// `report`'s JSON twin.
pub fn report_json(
    partitioner: Partitioner,
    n: PartitionCount,
    assignor: Assignor,
    tally: &Tally,
    r: &Report,
) -> Value {
    let total = r.total;
    let stats = &r.stats;
    let hh: Vec<Value> = r
        .heavy
        .iter()
        .map(|h| {
            json!({
                "key": key_json(&h.hitter.key),
                "key_hex": hex(&h.hitter.key),
                "estimate": h.hitter.estimate,
                "max_error": h.hitter.error,
                "share": h.hitter.estimate as f64 / total as f64,
                "partition": h.partition,
            })
        })
        .collect();
    let mut v = json!({
        "partitioner": partitioner.spec(),
        "partitions": n.get(),
        "keys": tally.lines,
        "total": total,
        "not_fixed": tally.not_fixed,
        "loads": tally.loads,
        "mean": stats.mean,
        "max": stats.max,
        "max_over_mean": stats.max_over_mean,
        "cv": stats.cv,
        "gini": stats.gini,
        "hot_partitions": stats.hot_partitions,
        "idle_partitions": stats.idle_partitions,
        "heavy_hitters": hh,
        "heavy_hitter_error_bound": r.error_bound,
    });
    if let Some(cs) = &r.consumers {
        let members: Vec<Value> = cs
            .iter()
            .map(|c| {
                json!({"member": c.member, "partitions": c.partitions, "load": c.load, "share": c.load as f64 / total as f64})
            })
            .collect();
        let idle: Vec<&str> = cs
            .iter()
            .filter(|c| c.load == 0)
            .map(|c| c.member.as_str())
            .collect();
        v["consumers"] = json!({"assignor": assignor.spec(), "members": members, "idle": idle});
    }
    if let Some(lag) = &r.lag {
        let hot_consumer = lag.hot_consumer.as_ref().map(|(member, g)| {
            json!({"member": member, "lag_growth_mbps": g, "lag_growth_mb_per_hour": g * 3600.0})
        });
        v["lag"] = json!({
            "consume_mbps_per_partition": lag.consume_mbps_per_partition,
            "inflow_mbps": lag.inflow_mbps,
            "lag_growth_mbps": lag.growth_mbps,
            "hot_consumer": hot_consumer,
        });
    }
    v
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
        for c in cs {
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
