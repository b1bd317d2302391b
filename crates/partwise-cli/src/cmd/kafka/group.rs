//! `partwise kafka group -g GROUP`: the group's members and their
//! assignments as the coordinator describes them, and for topics with equal
//! partition counts the co-location matrix of the partition indices. A broker
//! that returns members without assignment bytes is reported as such (Apache
//! Kafka does while the group rebalances; tansu always did). With
//! `--assignor`, what that assignor would give the described members, side by
//! side with the live assignment. One call of [`partwise_kafka::group::analysis`];
//! the printing is [`crate::render::group`]'s.

use super::{kerr, ConnArgs};
use crate::cmd::parse;
use crate::exit::{CliError, ExitCode, Result};
use crate::output::Format;
use crate::render::group::{model_line, to_json, write_table};
use partwise::assign::Assignor;
use partwise::group::described::PredictError;
use partwise_kafka::group::ServerModelJson;
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub(super) conn: ConnArgs,
    /// Consumer group id
    #[arg(short = 'g', long = "group", value_name = "GROUP", value_parser = parse::not_blank)]
    pub(super) group: String,
    #[arg(short = 'a', long = "assignor", value_name = "SPEC", value_parser = parse::assignor,
          help = crate::cmd::flags::ASSIGNOR,
          long_help = "Predict the assignment with this assignor spec for the described members (shown beside the live one, or instead of it when the broker returns none)")]
    assignor: Option<Assignor>,
    /// Topics every member subscribes to, for --assignor (default: each member's
    /// subscription as the broker describes it)
    #[arg(
        short = 't',
        long = "topic",
        value_name = "TOPIC",
        requires = "assignor",
        value_parser = parse::not_blank
    )]
    topics: Vec<String>,
    /// Whether the group is ready for the consumer protocol (KIP-848): for a
    /// classic group, would an online upgrade be refused, would server range
    /// keep its co-partitioned indices together, which group.remote.assignor
    /// names the brokers accept, and which client each member runs and
    /// whether it can speak the consumer protocol at all (KafkaJS and Sarama
    /// cannot); for a consumer-protocol group, the co-location
    /// of the broker's target and of the current assignment. Read-only
    #[arg(long, conflicts_with = "assignor")]
    pub(super) readiness: bool,
    #[arg(
        help = crate::cmd::flags::STREAMS,
        long_help = "For a Kafka Streams group (streams protocol, or classic with assignor `stream`): the application's Topology#describe() text, which says which source topics are joined (a task that holds partition p of one joined source and not of the other is a finding; merged sources of different counts are not)",
       long = "streams", value_name = "DESCRIBE", conflicts_with = "assignor")]
    streams: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub(super) format: crate::cmd::flags::FormatFlag,
}

fn predict_error(e: PredictError) -> CliError {
    CliError::msg(match e {
        PredictError::NoSubscription { member } => format!(
            "--assignor: the broker returned no subscription for member {member}; name the topics with -t"
        ),
        PredictError::NoTopic { topic } => format!("-t/--topic: topic {topic} does not exist"),
        PredictError::Assign { assignor, error } => {
            return CliError::context(format!("--assignor {}", assignor.spec()), error)
        }
        other => format!("--assignor {other}"),
    })
}

pub fn run(a: Args) -> Result<ExitCode> {
    let conn = a.conn.connection()?;
    let predict = a.assignor.map(|asg| (asg, a.topics.as_slice()));
    let g = partwise_kafka::group::analysis(&conn, &a.group, predict).map_err(kerr)?;
    let d = &g.description;
    let joins = match &a.streams {
        Some(path) => joins(path, &a.group)?,
        None => Vec::new(),
    };
    if d.not_found() {
        // Not a classic or consumer group: a Kafka Streams group of the
        // streams protocol is described by its own API.
        match partwise_kafka::streams::streams_analysis(&conn, &a.group, &joins) {
            Ok(Some(r)) => return super::streams_group(&r, a.format.format, None),
            Ok(None) => {}
            // Still not found (exit 2), with why the streams question failed.
            Err(e) => {
                return Err(CliError::context(
                    format!(
                        "group {}: not found as a classic or consumer group, and not \
                         described as a streams group",
                        crate::output::visible(&a.group)
                    ),
                    e,
                ))
            }
        }
    }
    super::not_found_here(&conn, d, &a.group)?;
    let r = g.analysis.map_err(predict_error)?;
    // A classic group of Kafka Streams (assignor `stream`): each member's
    // process and tasks, from its Streams user data.
    let streams = partwise_kafka::streams::classic_streams_analysis(d, &joins);
    let model = a.assignor.zip(g.server_model);
    let mut out = std::io::stdout().lock();
    match a.format.format {
        Format::Table => {
            write_table(&mut crate::output::Visible::new(&mut out), d, &r)?;
            if let Some(s) = &streams {
                crate::render::streams_group::write_classic(
                    &mut crate::output::Visible::new(&mut out),
                    s,
                )?;
            }
            if let Some((asg, m)) = &model {
                writeln!(
                    out,
                    "
{}",
                    model_line(*asg, m)
                )?;
            }
        }
        format => {
            let mut doc = to_json(d, &r);
            doc.streams = streams.as_ref();
            if let (Some((_, m)), Some(p)) = (&model, doc.prediction.as_mut()) {
                p.server = Some(ServerModelJson::of(m));
            }
            crate::output::write_doc(&mut out, format, &doc)?
        }
    }
    out.flush()?;
    Ok(
        if r.not_returned > 0
            || r.split_count > 0
            || !r.findings.is_empty()
            || streams.is_some_and(|s| !s.findings.is_empty())
        {
            ExitCode::Findings
        } else {
            ExitCode::Ok
        },
    )
}

/// The source topics application `group` joins, as named on the cluster:
/// `describe()` prints the topics Streams creates without the
/// `<application.id>-` prefix they carry there.
fn joins(path: &std::path::Path, group: &str) -> Result<Vec<Vec<String>>> {
    let app = crate::load::load_streams(path)?;
    Ok(app
        .copartition_groups()
        .into_iter()
        .map(|g| {
            let mut topics = g.external;
            topics.extend(g.internal.iter().map(|t| format!("{group}-{t}")));
            topics
        })
        .collect())
}
