//! `partwise partitioners`: the specs partwise knows, one line on each:
//! every partitioner, then every consumer-group assignor (`Assignor::catalog`).

use crate::exit::{ExitCode, Result};
use crate::output::{Format, JsonStream, Table};
use partwise::assign::{Assignor, CatalogEntry};
use partwise::partitioner::{KeyRule, Reduce};
use partwise::{PartitionCount, Partitioner, Placement};
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    format: super::flags::FormatFlag,
}

fn null_key_word(p: Partitioner) -> &'static str {
    // Two counts tell a null key hashed like an empty one from one sent to
    // partition 0 (@platformatic/kafka's compatibilityPartitioner).
    let at = |n: u32| PartitionCount::new(n).expect("a valid count");
    let like_empty = [7, 12]
        .into_iter()
        .all(|n| p.null_key(at(n)) == p.place(Some(b""), at(n)));
    match p.null_key(at(12)) {
        Placement::Partition(_) if like_empty => "fixed (hashed like an empty key)",
        Placement::Partition(0) => "partition 0",
        Placement::Partition(_) => "fixed",
        other => other.behaviour(),
    }
}

fn empty_key_word(p: Partitioner) -> &'static str {
    match p.place(
        Some(b""),
        PartitionCount::new(12).expect("12 is a valid count"),
    ) {
        Placement::Partition(_) => "hashed",
        other => other.behaviour(),
    }
}

fn rule(p: Partitioner) -> (String, Option<String>) {
    match p.key_rule() {
        KeyRule::Hash(h, r) => {
            let reduce = match r {
                Reduce::Mask => "(h & 0x7fffffff) % n",
                Reduce::Abs => "|h as int32| % n",
                Reduce::Unsigned => "h % n (unsigned)",
            };
            (format!("{h:?}").to_lowercase(), Some(reduce.to_string()))
        }
        KeyRule::Ignore(pl) => (format!("ignores keys ({})", pl.behaviour()), None),
    }
}

/// A partitioner's line in the JSON stream.
#[derive(serde::Serialize)]
struct PartitionerRow {
    kind: &'static str,
    spec: Partitioner,
    client: &'static str,
    aliases: &'static [&'static str],
    hash: String,
    reduce: Option<String>,
    null_key: &'static str,
    empty_key: &'static str,
    about: &'static str,
    setting: String,
    since: Option<&'static str>,
}

impl PartitionerRow {
    fn of(p: Partitioner) -> PartitionerRow {
        let (hash, reduce) = rule(p);
        PartitionerRow {
            kind: "partitioner",
            spec: p,
            client: p.client(),
            aliases: p.aliases(),
            hash,
            reduce,
            null_key: null_key_word(p),
            empty_key: empty_key_word(p),
            about: p.about(),
            setting: p.setting(),
            since: p.since(),
        }
    }
}

/// An assignor's line in the JSON stream, told from a partitioner's by `kind`.
#[derive(serde::Serialize)]
struct AssignorRow<'a> {
    kind: &'static str,
    #[serde(flatten)]
    entry: &'a CatalogEntry,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match args.format.format {
        Format::Table => {
            let mut t = Table::new(["SPEC", "NULL KEY", "EMPTY KEY", "ABOUT"]);
            for p in Partitioner::all() {
                t.row([p.spec(), null_key_word(p), empty_key_word(p), p.about()]);
            }
            t.write(&mut out)?;
            writeln!(out, "\nA spec is CLIENT[:NAME]; CLIENT alone is its default. '-P all' routes through every one.\n")?;
            let mut t = Table::new(["ASSIGNOR", "CLIENT", "DETERMINISTIC", "SIMULATED", "ABOUT"]);
            for e in Assignor::catalog() {
                let det = match e.deterministic {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "-",
                };
                let sim = if e.simulated { "yes" } else { "no" };
                t.row([
                    e.spec,
                    e.client,
                    det,
                    sim,
                    &crate::render::catalog::assignor_about(&e),
                ]);
            }
            t.write(&mut out)?;
            writeln!(out, "\nAn assignor spec goes to assign -a, check --assignor and kafka group --assignor.")?;
        }
        f => {
            let mut s = JsonStream::new(out, f)?;
            for p in Partitioner::all() {
                s.write(&PartitionerRow::of(p))?;
            }
            for e in &Assignor::catalog() {
                s.write(&AssignorRow {
                    kind: "assignor",
                    entry: e,
                })?;
            }
            drop(s.finish()?);
        }
    }
    Ok(ExitCode::Ok)
}
