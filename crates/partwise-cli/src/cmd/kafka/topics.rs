//! `partwise kafka topics`: every topic with its partition count, grouped by
//! count: only topics in one group can be co-partitioned.

use super::{kerr, ConnArgs};
use crate::exit::{ExitCode, Result};
use crate::output::{visible, Format, Table};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: ConnArgs,
    /// Also list internal topics (names starting with "__")
    #[arg(long)]
    internal: bool,
    #[command(flatten)]
    format: crate::cmd::flags::FormatFlag,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let conn = a.conn.connection()?;
    let topics = partwise_kafka::cluster::list_topics(&conn).map_err(kerr)?;
    let mut by_count: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut leaderless: Vec<String> = Vec::new();
    for t in topics {
        if t.error.is_some() || (!a.internal && t.name.starts_with("__")) {
            continue;
        }
        for p in &t.partitions {
            if p.leader.is_none() {
                leaderless.push(format!("{}/{}", t.name, p.id));
            }
        }
        by_count.entry(t.partitions.len()).or_default().push(t.name);
    }
    let mut out = std::io::stdout().lock();
    match a.format.format {
        Format::Table => {
            let mut tab = Table::new(["PARTITIONS", "TOPICS"]);
            for (n, names) in &by_count {
                tab.row([n.to_string(), names.join(" ")]);
            }
            tab.write(&mut out)?;
            if !leaderless.is_empty() {
                writeln!(
                    out,
                    "\npartitions without a leader: {}",
                    visible(&leaderless.join(" "))
                )?;
            }
        }
        Format::Json | Format::Ndjson => {
            let rows: Vec<serde_json::Value> = by_count
                .iter()
                .map(|(n, names)| json!({"partitions": n, "topics": names}))
                .collect();
            if a.format.format == Format::Json {
                let doc = json!({"groups": rows, "leaderless_partitions": leaderless});
                serde_json::to_writer_pretty(&mut out, &doc)?;
                writeln!(out)?;
            } else {
                for r in rows {
                    serde_json::to_writer(&mut out, &r)?;
                    writeln!(out)?;
                }
            }
        }
    }
    out.flush()?;
    Ok(if leaderless.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}
