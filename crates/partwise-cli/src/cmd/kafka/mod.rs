//! `partwise kafka ...`: the live commands, against a real cluster. The
//! connection flags follow kcat (`-b`, `-X key=value`, `-F FILE`) plus
//! `--timeout`; secret property values are never printed, not even with
//! `--verbose`.

pub mod audit;
pub mod consume;
pub mod group;
pub mod measure;
pub mod produce;
pub mod readiness;
pub mod topics;

pub use crate::cmd::conn::{kerr, stderr_is_terminal, ConnArgs};
use crate::exit::{CliError, ExitCode, Result};
use crate::output::{visible, Format};
use partwise_kafka::group::GroupDescription;
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Topics with their partition counts, grouped by count (the co-partitioning candidates)
    Topics(topics::Args),
    /// Counts, skew and the partitioner that wrote each topic, from a read-only sample
    Audit(audit::Args),
    /// A consumer group's members, assignments and co-location of partition indices
    Group(group::Args),
    /// Produce lines of KEY[<TAB>VALUE] to one topic, routed by a partwise partitioner
    Produce(produce::Args),
    /// Measure one partition's produce and consume throughput (needs --allow-write)
    Measure(measure::Args),
    /// Join a consumer group with the co-partitioned assignor and print what it handles
    Consume(consume::Args),
}

pub fn run(a: Args) -> Result<ExitCode> {
    match a.command {
        Command::Topics(a) => topics::run(a),
        Command::Audit(a) => audit::run(a),
        // --readiness is its own question, answered by its own command.
        Command::Group(a) if a.readiness => {
            readiness::run(&a.conn.connection()?, &a.group, a.format.format)
        }
        Command::Group(a) => group::run(a),
        Command::Produce(a) => produce::run(a),
        Command::Measure(a) => measure::run(a),
        Command::Consume(a) => consume::run(a),
    }
}

/// A group the coordinator does not know is an error naming it.
pub fn not_found(d: &GroupDescription, group: &str) -> Result<()> {
    if d.not_found() {
        return Err(CliError::msg(format!(
            "group {group}: not found (the coordinator reports state '{}' and no members)",
            visible(&d.state)
        )));
    }
    Ok(())
}

/// [`not_found`], saying so when the brokers have no streams groups at all
/// (Apache Kafka before 4.2), where a Kafka Streams group of the streams
/// protocol cannot be.
pub fn not_found_here(
    conn: &partwise_kafka::Connection,
    d: &partwise_kafka::group::GroupDescription,
    group: &str,
) -> Result<()> {
    not_found(d, group).map_err(
        |e| match partwise_kafka::streams::streams_groups_offered(conn) {
            Ok(false) => CliError::msg(format!(
                "{e}; {}",
                partwise_kafka::streams::NO_STREAMS_GROUPS
            )),
            _ => e,
        },
    )
}

/// A streams-protocol group: its table or JSON, exit 1 with findings
/// (NOT_READY is one); `readiness` is what `--readiness` says first.
pub fn streams_group(
    r: &partwise::streams::group::StreamsReport,
    format: Format,
    readiness: Option<&str>,
) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match format {
        Format::Table => {
            if let Some(words) = readiness {
                writeln!(out, "readiness: {words}\n")?;
            }
            crate::render::streams_group::write_table(
                &mut crate::output::Visible::new(&mut out),
                r,
            )?
        }
        format => {
            /// What `--readiness` says of a streams-protocol group.
            #[derive(serde::Serialize)]
            struct Readiness<'a> {
                group_protocol: &'static str,
                summary: &'a str,
            }
            /// The group, marked as one of the streams protocol.
            #[derive(serde::Serialize)]
            struct Doc<'a> {
                #[serde(flatten)]
                report: &'a partwise::streams::group::StreamsReport,
                group_protocol: &'static str,
                #[serde(skip_serializing_if = "Option::is_none")]
                readiness: Option<Readiness<'a>>,
            }
            let doc = Doc {
                report: r,
                group_protocol: "streams",
                readiness: readiness.map(|summary| Readiness {
                    group_protocol: "streams",
                    summary,
                }),
            };
            crate::output::write_doc(&mut out, format, &doc)?
        }
    }
    out.flush()?;
    Ok(if r.findings.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}
