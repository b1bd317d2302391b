//! `partwise kafka group -g GROUP`: the group's members and their
//! assignments as the coordinator describes them, and for topics with equal
//! partition counts the co-location matrix of the partition indices. A broker
//! that returns members without assignment bytes is reported as such (Apache
//! Kafka does while the group rebalances; tansu always did). With
//! `--assignor`, what that assignor would give the described members, side by
//! side with the live assignment.

use super::{kerr, not_found, ConnArgs};
use crate::cmd::parse;
use crate::exit::{CliError, ExitCode, Result};
use crate::output::Format;
use crate::render::group::{to_json, write_table};
use partwise::assign::Assignor;
use partwise::described::{analyze, ClusterTopic, DescribedMember, PredictError};
use partwise_kafka::group::{describe_group, AssignmentData, GroupDescription};
use serde_json::json;
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: ConnArgs,
    /// Consumer group id
    #[arg(short = 'g', long = "group", value_name = "GROUP", value_parser = parse::not_blank)]
    group: String,
    /// Predict the assignment with this assignor spec for the described members
    /// (shown beside the live one, or instead of it when the broker returns none)
    #[arg(long, value_name = "SPEC", value_parser = parse::assignor)]
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
    readiness: bool,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

/// The description in the core's terms.
pub fn described(d: &GroupDescription) -> Vec<DescribedMember> {
    d.members
        .iter()
        .map(|m| DescribedMember {
            id: m.id.clone(),
            subscription: m.subscription.clone(),
            assignment: match &m.assignment {
                AssignmentData::Assigned(a) => Some(a.clone()),
                AssignmentData::NotReturned => None,
            },
            undecodable: m.undecodable.clone(),
        })
        .collect()
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
    if a.readiness {
        return super::readiness::run(&conn, &a.group, a.format);
    }
    let d = describe_group(&conn, &a.group).map_err(kerr)?;
    not_found(&d, &a.group)?;
    let no_data = d
        .members
        .iter()
        .any(|m| m.assignment == AssignmentData::NotReturned);
    let assignor = a.assignor;
    // The topics' partition counts, read only when something needs them.
    let cluster: Vec<ClusterTopic> = if !no_data || assignor.is_some() {
        partwise_kafka::cluster::list_topics(&conn)
            .map_err(kerr)?
            .into_iter()
            .map(|t| ClusterTopic {
                partitions: t.partitions.len() as u32,
                healthy: t.error.is_none(),
                name: t.name,
            })
            .collect()
    } else {
        Vec::new()
    };
    let r = analyze(
        &described(&d),
        &cluster,
        assignor.map(|asg| (asg, a.topics.as_slice())),
    )
    .map_err(predict_error)?;
    let model = assignor.and_then(|asg| server_model(&conn, asg));
    let mut out = std::io::stdout().lock();
    match a.format {
        Format::Table => {
            write_table(&mut crate::output::Visible::new(&mut out), &d, &r)?;
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
            let mut doc = to_json(&d, &r);
            if let (Some((_, m)), Some(p)) = (&model, doc.get_mut("prediction")) {
                p["server_assignor_model"] = json!(m.assignor.map(|x| x.spec()));
                p["server_assignor_kafka_versions"] =
                    json!(m.assignor.and_then(|x| x.kafka_versions()));
                p["broker_release_line"] = json!(m.line);
                p["server_assignor_evidence"] = json!(m.evidence);
            }
            crate::output::write_doc(&mut out, format, &doc)?
        }
    }
    out.flush()?;
    Ok(
        if r.not_returned > 0 || r.split_count > 0 || !r.findings.is_empty() {
            ExitCode::Findings
        } else {
            ExitCode::Ok
        },
    )
}

/// For a KIP-848 `--assignor`, the model the broker's own release runs,
/// read from its API versions (an unreadable answer is the evidence).
fn server_model(
    conn: &partwise_kafka::Connection,
    asg: Assignor,
) -> Option<(Assignor, partwise::assign::BrokerModel)> {
    let name = match asg {
        Assignor::Kip848Uniform | Assignor::Kip848Uniform400 => "uniform",
        Assignor::Kip848Range => "range",
        _ => return None,
    };
    let m = partwise_kafka::group::server_assignor_model(conn, name).unwrap_or_else(|e| {
        partwise::assign::BrokerModel {
            line: None,
            assignor: None,
            evidence: format!("the broker's API versions could not be read: {e}"),
        }
    });
    Some((asg, m))
}

/// The text line naming the broker's model and how the prediction relates to it.
fn model_line(asg: Assignor, m: &partwise::assign::BrokerModel) -> String {
    match m.assignor {
        Some(x) if x == asg => format!(
            "server assignor model: {} (the broker: {})",
            x.label(),
            m.evidence
        ),
        Some(x) => format!(
            "server assignor model: {} (the broker: {}); the prediction used {}: \
             predict with --assignor {} for this broker",
            x.label(),
            m.evidence,
            asg.label(),
            x.spec()
        ),
        None => format!(
            "server assignor model: undecided ({}); the prediction used {}",
            m.evidence,
            asg.label()
        ),
    }
}
