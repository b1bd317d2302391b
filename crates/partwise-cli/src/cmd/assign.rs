//! `partwise assign`: simulate a consumer-group assignor and show which
//! partition indices it co-locates.

use crate::exit::{CliError, ExitCode, Result};
use crate::output::{colocation_table, Format, JsonStream, Table};
use partwise::assign::{
    group_file, member_names, Assignor, Group, Member, Topic, Tp, SIMULATED_RUNS,
};
use partwise::findings::LeaderFinding;
use partwise::group::simulated::{self, Assigned, Outcomes, Simulated, SweepRow};
use serde_json::Value;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use super::parse::{self, TopicCount};

#[derive(clap::Args)]
pub struct Args {
    #[arg(short = 'a', long = "assignor", value_name = "SPEC", value_parser = parse::assignor,
          help = super::flags::ASSIGNOR, long_help = crate::render::catalog::assignor_help())]
    assignor: Assignor,
    /// Number of members, named m00, m01, ...
    #[arg(short = 'm', long = "members", value_name = "K", conflicts_with_all = ["member", "sweep", "group"], value_parser = parse::members)]
    members: Option<usize>,
    /// A member id (repeatable; in the coordinator's member order)
    #[arg(long = "member", value_name = "ID", conflicts_with_all = ["sweep", "group"])]
    member: Vec<String>,
    /// A topic and its partition count, NAME:N (repeatable; order kept)
    #[arg(short = 't', long = "topic", value_name = "NAME:N", required_unless_present = "group", conflicts_with = "group", value_parser = parse::topic_count)]
    topic: Vec<TopicCount>,
    /// Previous generation: JSON object of member id to [[topic, partition], ...]
    /// (or a previous `partwise assign --format json` output)
    #[arg(long = "owned", value_name = "FILE", conflicts_with = "group")]
    owned: Option<PathBuf>,
    /// The whole group as its coordinator sees it, JSON in `kafka group --format json`'s
    /// shape plus "topics": members with their own subscriptions, owned partitions,
    /// generation and instance id, and "leader", the member id that leads (default:
    /// the first member) ("-": stdin)
    #[arg(
        long = "group-file",
        alias = "group",
        value_name = "FILE",
        conflicts_with = "sweep"
    )]
    group: Option<PathBuf>,
    /// Print the split count for every group size in A..B (e.g. 1..12)
    #[arg(long = "sweep", value_name = "A..B", value_parser = parse::member_range)]
    sweep: Option<(usize, usize)>,
    #[command(flatten)]
    format: super::flags::FormatFlag,
}

struct Config {
    assignor: Assignor,
    /// The group of `--group-file`, whole.
    file: Option<Group>,
    topics: Vec<Topic>,
    members: Vec<String>,
    owned: Option<Value>,
    sweep: Option<(usize, usize)>,
    format: Format,
}

impl Config {
    fn new(a: Args) -> Result<Config> {
        let assignor = a.assignor;
        if let Some(p) = &a.group {
            let text = crate::input::read_capped(p, 256 << 20, "--group-file")?;
            let name = p.display();
            let text = std::str::from_utf8(&text)
                .map_err(|_| CliError::msg(format!("--group-file {name}: not UTF-8 text")))?;
            let file = group_file::parse(text)
                .map_err(|e| CliError::msg(format!("--group-file {name}: {e}")))?;
            if file.topic_order_unknown && assignor.kafka_versions().is_some() {
                say!(
                    "partwise: warning: --group-file {name}: two topic ids share a bucket of the coordinator's HashSet<Uuid>, whose order {assignor} follows; that order is the one the topics were added in, which no description shows, so the file's is used and the broker's placement may differ"
                );
            }
            let group = file.group;
            let partitions: u64 = group.total_partitions();
            crate::limits::assigned("--group-file", partitions, group.members.len() as u64, 1)?;
            let java_sticky = matches!(
                assignor,
                Assignor::JavaSticky | Assignor::JavaCooperativeSticky
            );
            if !java_sticky {
                for (m, tp) in group.stale_claims() {
                    let t = &group.topics[tp.topic as usize];
                    say!(
                        "partwise: warning: --group-file {name}: member '{}' claims {}-{}, but {} has {} partitions ({assignor} drops the claim)",
                        group.members[m].id, t.name, tp.partition, t.name, t.partitions
                    );
                }
            }
            return Ok(Config {
                assignor,
                topics: group.topics.clone(),
                members: group.members.iter().map(|m| m.id.clone()).collect(),
                file: Some(group),
                owned: None,
                sweep: None,
                format: a.format.format,
            });
        }
        let mut topics: Vec<Topic> = Vec::new();
        for t in &a.topic {
            if topics.iter().any(|x| x.name == t.name) {
                return Err(CliError::msg(format!("--topic: '{}' given twice", t.name)));
            }
            topics.push(Topic::new(t.name.clone(), t.partitions.get()));
        }
        let sweep = a.sweep;
        let members = match (a.members, a.member.is_empty()) {
            (Some(k), true) => member_names(k),
            (None, false) => a.member.clone(),
            (None, true) if sweep.is_some() => Vec::new(),
            _ => {
                return Err(CliError::msg(
                    "give --members K, or --member ID (repeatable), or --sweep A..B",
                ))
            }
        };
        let partitions: u64 = topics.iter().map(|t| u64::from(t.partitions)).sum();
        let runs = sweep.map_or(1, |(lo, hi)| (hi - lo + 1) as u64);
        let most = sweep.map_or(members.len(), |(_, hi)| hi) as u64;
        crate::limits::assigned("--topic", partitions, most, runs)?;
        // A set, not a scan of the ids before: 100,000 members would take
        // billions of comparisons.
        let mut seen = std::collections::HashSet::with_capacity(members.len());
        for m in &members {
            if m.is_empty() {
                return Err(CliError::msg("--member: empty member id"));
            }
            if !seen.insert(m.as_str()) {
                return Err(CliError::msg(format!("--member: '{m}' given twice")));
            }
        }
        let owned = match &a.owned {
            None => None,
            Some(p) => {
                let text = crate::input::read_capped(p, 256 << 20, "--owned")?;
                let v: Value = serde_json::from_slice(&text).map_err(|e| {
                    CliError::msg(format!("--owned {}: not JSON: {e}", p.display()))
                })?;
                let v = match v.get("assignment") {
                    Some(inner) => inner.clone(),
                    None => v,
                };
                if !v.is_object() {
                    return Err(CliError::msg(format!(
                        "--owned {}: expected an object of member id to [[topic, partition], ...]",
                        p.display()
                    )));
                }
                for w in owned_warnings(&v, &topics, assignor) {
                    say!("partwise: warning: --owned {}: {w}", p.display());
                }
                Some(v)
            }
        };
        Ok(Config {
            assignor,
            file: None,
            topics,
            members,
            owned,
            sweep,
            format: a.format.format,
        })
    }

    fn group(&self, ids: &[String]) -> Result<Group> {
        if let Some(g) = &self.file {
            return Ok(g.clone());
        }
        let names: Vec<&str> = self.topics.iter().map(|t| t.name.as_str()).collect();
        let mut group = Group::new(
            ids.iter()
                .map(|id| Member::new(id.clone(), names.iter().copied()))
                .collect(),
            self.topics.clone(),
        );
        if let Some(owned) = &self.owned {
            for (id, list) in owned.as_object().into_iter().flatten() {
                let bad = || {
                    CliError::msg(format!(
                        "--owned: member '{id}': expected a list of [topic, partition]"
                    ))
                };
                let list = list.as_array().ok_or_else(bad)?;
                let Some(m) = group.members.iter().position(|m| &m.id == id) else {
                    continue; // a member that left
                };
                for item in list {
                    let (t, p) = match item.as_array().map(Vec::as_slice) {
                        Some([t, p]) => (t.as_str().ok_or_else(bad)?, p.as_u64().ok_or_else(bad)?),
                        _ => return Err(bad()),
                    };
                    // Claims of topics that do not exist are dropped, as every
                    // assignor does; a claim past a topic's count is kept for the
                    // core, where only Java's sticky assignors keep it, as
                    // kafka-clients does.
                    if let Some(ti) = group.topic_index(t) {
                        if p <= i32::MAX as u64 {
                            group.members[m].owned.push(Tp {
                                topic: ti,
                                partition: p as u32,
                            });
                        }
                    }
                }
            }
        }
        Ok(group)
    }
}

/// What an `--owned` file claims that the group cannot have: partitions of
/// unknown topics or past a topic's count, and partitions claimed twice.
/// Every assignor drops the first; the second only Java's sticky ones keep
/// (as kafka-clients does, with a finding for what follows); a doubly owned
/// partition goes to one member, as the real assignors decide with a stale
/// generation. So these are warnings, not errors; but a typo would
/// otherwise pass unseen.
fn owned_warnings(owned: &Value, topics: &[Topic], assignor: Assignor) -> Vec<String> {
    let past = if matches!(
        assignor,
        Assignor::JavaSticky | Assignor::JavaCooperativeSticky
    ) {
        format!("{assignor} keeps the claim, as kafka-clients does")
    } else {
        format!("{assignor} drops the claim")
    };
    let mut warnings = Vec::new();
    let mut owner: std::collections::HashMap<(&str, u64), &str> = Default::default();
    for (id, list) in owned.as_object().into_iter().flatten() {
        for item in list.as_array().into_iter().flatten() {
            let Some([t, p]) = item.as_array().map(Vec::as_slice) else {
                continue; // malformed items are errors, reported when the group is built
            };
            let (Some(t), Some(p)) = (t.as_str(), p.as_u64()) else {
                continue;
            };
            match topics.iter().find(|x| x.name == t) {
                None => warnings.push(format!(
                    "member '{id}' owns {t}:{p}, but there is no topic '{t}' (dropped)"
                )),
                Some(x) if p >= u64::from(x.partitions) => warnings.push(format!(
                    "member '{id}' owns {t}:{p}, but {t} has {} partitions ({past})",
                    x.partitions
                )),
                Some(_) => {
                    if let Some(first) = owner.insert((t, p), id.as_str()) {
                        warnings.push(format!(
                            "{t}:{p} is owned by both '{first}' and '{id}' (a partition has one owner per generation)"
                        ));
                    }
                }
            }
        }
    }
    warnings
}

pub fn run(args: Args) -> Result<ExitCode> {
    // `--group` is a group id in `kafka`.
    super::flags::note_deprecated("assign", "--group", "--group-file");
    let cfg = Config::new(args)?;
    let context = |e: partwise::Error| CliError::context(format!("--assignor {}", cfg.assignor), e);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let problems = match cfg.sweep {
        Some((lo, hi)) => {
            let mut rows = Vec::with_capacity(hi - lo + 1);
            for k in lo..=hi {
                let group = cfg.group(&member_names(k))?;
                rows.push(simulated::sweep_row(cfg.assignor, &group).map_err(context)?);
            }
            write_sweep(cfg.assignor, &rows, cfg.format, &mut out)?;
            rows.iter().map(|r| r.split_count).sum()
        }
        None => {
            let group = cfg.group(&cfg.members)?;
            let report = simulated::simulate(cfg.assignor, &group).map_err(context)?;
            match cfg.format {
                Format::Json | Format::Ndjson => {
                    crate::output::write_doc(&mut out, cfg.format, &report)?
                }
                Format::Table => write_table(&report, &mut out)?,
            }
            report.problems()
        }
    };
    out.flush()?;
    Ok(if problems == 0 {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

fn write_findings(found: &[LeaderFinding], out: &mut impl Write) -> Result<()> {
    for f in found {
        writeln!(out, "\n{}: {}\n  fix: {}", f.kind(), f, f.fix())?;
    }
    Ok(())
}

/// The line that says what the simulated runs of an assignor that is not
/// deterministic came to.
fn simulation_text(sim: &Outcomes, assignor: Assignor) -> String {
    let cfg_varies = assignor.varies_by().unwrap_or_default();
    // Runs by the number of indices they split: a sticky balancer can give
    // as many outcomes as runs, which one line each would drown.
    let mut by_split: std::collections::BTreeMap<usize, usize> = Default::default();
    for o in &sim.outcomes {
        *by_split.entry(o.split_count).or_default() += o.runs;
    }
    let counts: Vec<String> = by_split
        .iter()
        .map(|(split, runs)| format!("{split} split in {runs} runs"))
        .collect();
    format!(
        "not deterministic (the real assignor follows {}): {} distinct \
         outcomes in {} simulated runs ({}); some index split in {} of {} runs. \
         Shown: the outcome that splits most.",
        cfg_varies,
        sim.outcomes.len(),
        sim.runs,
        counts.join(", "),
        sim.split_runs,
        sim.runs
    )
}

fn write_table(report: &Simulated, out: &mut impl Write) -> Result<()> {
    match report {
        Simulated::Thrown(t) => {
            writeln!(
                out,
                "assignor {}, {} members: no assignment",
                t.assignor,
                t.members.len()
            )?;
            write_findings(&t.findings, out)?;
        }
        Simulated::Assigned(a) => {
            table(a, out)?;
            if let Some(sim) = &a.simulation {
                writeln!(out, "{}", simulation_text(sim, a.assignor))?;
            }
            if let Some(f) = &a.fix {
                crate::render::findings::write_fix(f, "", out)?;
            }
            write_findings(&a.findings, out)?;
        }
    }
    Ok(())
}

/// Partitions of one topic as compact ranges: `0-2,5`.
fn ranges(mut ps: Vec<u32>) -> String {
    ps.sort_unstable();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ps.len() {
        let mut j = i;
        while j + 1 < ps.len() && ps[j + 1] == ps[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            ps[i].to_string()
        } else {
            format!("{}-{}", ps[i], ps[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

fn table(a: &Assigned, out: &mut impl Write) -> Result<()> {
    writeln!(
        out,
        "assignor {}, {} members",
        a.assignor.label(),
        a.group_members.len()
    )?;
    let mut t = Table::new(["MEMBER", "COUNT", "PARTITIONS"]);
    for (id, tps) in &a.assignment {
        let mut cells: Vec<String> = Vec::new();
        for (topic, _) in &a.topics {
            let ps: Vec<u32> = tps
                .iter()
                .filter(|(t, _)| t == topic)
                .map(|&(_, p)| p)
                .collect();
            if !ps.is_empty() {
                cells.push(format!("{topic}[{}]", ranges(ps)));
            }
        }
        t.row([
            id.clone(),
            tps.len().to_string(),
            if cells.is_empty() {
                "-".to_string()
            } else {
                cells.join(" ")
            },
        ]);
    }
    t.write(out)?;
    if !a.withheld.is_empty() {
        let list: Vec<String> = a.withheld.iter().map(|(t, p)| format!("{t}-{p}")).collect();
        writeln!(
            out,
            "withheld until revoked (cooperative): {}",
            list.join(" ")
        )?;
    }
    writeln!(out)?;
    let m = colocation_table(&a.topics, &a.colocation, |o| a.group_members[o].clone());
    m.write(out)?;
    writeln!(
        out,
        "\n{} of {} indices split",
        a.split_count,
        a.colocation.owners.len()
    )?;
    Ok(())
}

fn write_sweep(
    assignor: Assignor,
    rows: &[SweepRow],
    format: Format,
    out: &mut impl Write,
) -> Result<()> {
    match format {
        Format::Json | Format::Ndjson => {
            let mut s = JsonStream::new(&mut *out, format)?;
            for row in rows {
                s.write(row)?;
            }
            s.finish()?;
        }
        Format::Table => {
            writeln!(out, "assignor {}", assignor.label())?;
            if !assignor.deterministic() {
                writeln!(
                    out,
                    "not deterministic ({}): each size simulated \
                     {SIMULATED_RUNS} times; SPLIT is the outcome that splits most, RUNS \
                     how many runs split some index",
                    assignor.varies_by().unwrap_or_default()
                )?;
            }
            let mut head = vec!["MEMBERS", "SPLIT", "OF", "SPLIT INDICES"];
            if !assignor.deterministic() {
                head.push("RUNS");
            }
            let mut t = Table::new(head);
            for r in rows {
                let mut row = vec![
                    r.members.to_string(),
                    r.split_count.to_string(),
                    r.colocation.owners.len().to_string(),
                    if r.split_indices.is_empty() {
                        "-".to_string()
                    } else {
                        ranges(r.split_indices.clone())
                    },
                ];
                if let (Some(split), Some(runs)) = (r.split_runs, r.runs) {
                    row.push(format!("{split}/{runs}"));
                }
                t.row(row);
            }
            t.write(out)?;
        }
    }
    Ok(())
}
