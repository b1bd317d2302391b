//! `partwise kafka topics`: every topic with its partition count, grouped by
//! count: only topics in one group can be co-partitioned.

use super::{kerr, ConnArgs};
use crate::exit::{ExitCode, Result};
use crate::output::{visible, Format, Table};
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
    let r = partwise_kafka::topics::topics_by_count(&conn, a.internal).map_err(kerr)?;
    let mut out = std::io::stdout().lock();
    match a.format.format {
        Format::Table => {
            let mut tab = Table::new(["PARTITIONS", "TOPICS"]);
            for g in &r.groups {
                tab.row([g.partitions.to_string(), g.topics.join(" ")]);
            }
            tab.write(&mut out)?;
            if !r.leaderless_partitions.is_empty() {
                writeln!(
                    out,
                    "\npartitions without a leader: {}",
                    visible(&r.leaderless_partitions.join(" "))
                )?;
            }
        }
        Format::Json | Format::Ndjson => {
            if a.format.format == Format::Json {
                serde_json::to_writer_pretty(&mut out, &r)?;
                writeln!(out)?;
            } else {
                for g in &r.groups {
                    serde_json::to_writer(&mut out, g)?;
                    writeln!(out)?;
                }
            }
        }
    }
    out.flush()?;
    Ok(if r.leaderless_partitions.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}
