//! `partwise kafka group -g GROUP`: the group's members and their
//! assignments as the coordinator describes them, and for topics with equal
//! partition counts the co-location matrix of the partition indices. A broker
//! that returns members without assignment bytes is reported as such.

use super::{kerr, ConnArgs};
use crate::exit::{CliError, ExitCode, Result};
use crate::output::{Format, Table};
use partwise::assign::{colocation_of, Assignment, Assignor, Group, Member, Topic, Tp};
use partwise_kafka::group::{describe_group, AssignmentData, GroupDescription};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: ConnArgs,
    /// Consumer group id
    #[arg(short = 'g', long = "group", value_name = "GROUP")]
    group: String,
    /// When the broker returns no assignment data: predict it with this assignor spec
    #[arg(long, value_name = "SPEC", requires = "topics")]
    assignor: Option<String>,
    /// Topics every member subscribes to, for --assignor
    #[arg(short = 't', long = "topic", value_name = "TOPIC")]
    topics: Vec<String>,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

/// The assignment rebuilt in the assign module's model, with each topic's
/// partition count from the cluster.
fn model(
    conn: &partwise_kafka::Connection,
    d: &GroupDescription,
) -> Result<Option<(Group, Assignment)>> {
    let mut topics: BTreeSet<String> = BTreeSet::new();
    for m in &d.members {
        match &m.assignment {
            AssignmentData::Assigned(a) => topics.extend(a.iter().map(|(t, _)| t.clone())),
            AssignmentData::NotReturned => return Ok(None),
        }
    }
    let all = partwise_kafka::cluster::list_topics(conn).map_err(kerr)?;
    let topics: Vec<Topic> = topics
        .into_iter()
        .map(|t| {
            let n = all
                .iter()
                .find(|i| i.name == t)
                .map_or(0, |i| i.partitions.len() as u32);
            Topic::new(t, n)
        })
        .collect();
    let members: Vec<Member> = d
        .members
        .iter()
        .map(|m| Member::new(m.id.clone(), topics.iter().map(|t| t.name.clone())))
        .collect();
    let group = Group::new(members, topics);
    let partitions: Vec<Vec<Tp>> = d
        .members
        .iter()
        .map(|m| match &m.assignment {
            AssignmentData::Assigned(a) => a
                .iter()
                .flat_map(|(t, ps)| {
                    let ti = group.topic_index(t).unwrap_or(0);
                    ps.iter().map(move |&p| Tp {
                        topic: ti,
                        partition: p,
                    })
                })
                .collect(),
            AssignmentData::NotReturned => Vec::new(),
        })
        .collect();
    let a = Assignment {
        order: (0..d.members.len()).collect(),
        partitions,
        withheld: Vec::new(),
    };
    Ok(Some((group, a)))
}

/// The assignment `asg` would make for the described members, all subscribed
/// to `topics` (partition counts from the cluster).
fn predict(
    conn: &partwise_kafka::Connection,
    d: &GroupDescription,
    asg: Assignor,
    topics: &[String],
) -> Result<(Group, Assignment)> {
    let all = partwise_kafka::cluster::list_topics(conn).map_err(kerr)?;
    let mut ts = Vec::new();
    for t in topics {
        let info = all
            .iter()
            .find(|i| &i.name == t && i.error.is_none())
            .ok_or_else(|| CliError::msg(format!("-t/--topic: topic {t} does not exist")))?;
        ts.push(Topic::new(t.clone(), info.partitions.len() as u32));
    }
    let members: Vec<Member> = d
        .members
        .iter()
        .map(|m| Member::new(m.id.clone(), topics.iter().cloned()))
        .collect();
    let g = Group::new(members, ts);
    let a = asg
        .assign(&g)
        .map_err(|e| CliError::msg(format!("--assignor {}: {e}", asg.spec())))?;
    Ok((g, a))
}

pub fn run(a: Args) -> Result<ExitCode> {
    if a.group.trim().is_empty() {
        return Err(CliError::msg("-g/--group: empty group id"));
    }
    let conn = a.conn.connection()?;
    let d = describe_group(&conn, &a.group).map_err(kerr)?;
    if d.members.is_empty() && (d.state == "Dead" || d.state.is_empty()) {
        return Err(CliError::msg(format!(
            "group {}: not found (the coordinator reports state '{}' and no members)",
            a.group, d.state
        )));
    }
    let no_data = d
        .members
        .iter()
        .any(|m| m.assignment == AssignmentData::NotReturned);
    let assignor: Option<Assignor> = a
        .assignor
        .as_deref()
        .map(|s| {
            s.parse()
                .map_err(|e| CliError::msg(format!("--assignor: {e}")))
        })
        .transpose()?;
    let mut source = "broker".to_string();
    let mut model = model(&conn, &d)?;
    if let (None, Some(asg)) = (&model, assignor) {
        model = Some(predict(&conn, &d, asg, &a.topics)?);
        source = format!("predicted by {}", asg.spec());
    }
    // Co-partition candidates: assigned topics that share a partition count.
    let mut by_count: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    if let Some((g, _)) = &model {
        for (i, t) in g.topics.iter().enumerate() {
            by_count.entry(t.partitions).or_default().push(i as u32);
        }
    }
    let sets: Vec<Vec<u32>> = by_count.into_values().filter(|v| v.len() >= 2).collect();
    let mut split_total = 0;
    let mut matrices: Vec<Value> = Vec::new();
    let mut out = std::io::stdout().lock();
    let table = a.format == Format::Table;
    if table {
        writeln!(
            out,
            "group {}: state {}, protocol {} ({}), {} members",
            d.name,
            d.state,
            if d.protocol.is_empty() {
                "-"
            } else {
                &d.protocol
            },
            if d.protocol_type.is_empty() {
                "-"
            } else {
                &d.protocol_type
            },
            d.members.len()
        )?;
        let mut t = Table::new(["MEMBER", "CLIENT", "HOST", "SUBSCRIPTION", "ASSIGNMENT"]);
        for m in &d.members {
            t.row([
                m.id.clone(),
                m.client_id.clone(),
                m.client_host.clone(),
                m.subscription
                    .as_ref()
                    .map_or("(not returned)".into(), |s| s.join(",")),
                match &m.assignment {
                    AssignmentData::NotReturned => "(not returned)".to_string(),
                    AssignmentData::Assigned(a) => a
                        .iter()
                        .map(|(t, ps)| {
                            format!(
                                "{t}[{}]",
                                ps.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                },
            ]);
        }
        t.write(&mut out)?;
        if no_data {
            writeln!(
                out,
                "\nbroker returned no assignment data for {} member(s): assignments and co-location cannot be shown \
                 (ask each member for its own assignment, or predict it with `partwise assign`)",
                d.members.iter().filter(|m| m.assignment == AssignmentData::NotReturned).count()
            )?;
        }
    }
    if let Some((g, asg)) = &model {
        for set in &sets {
            let co = colocation_of(g, asg, set);
            split_total += co.split_count();
            let names: Vec<&str> = set
                .iter()
                .map(|&t| g.topics[t as usize].name.as_str())
                .collect();
            if table {
                writeln!(out, "\nco-location of {} ({source})", names.join(", "))?;
                let mut header = vec!["INDEX".to_string()];
                header.extend(names.iter().map(|s| s.to_string()));
                header.push("CO-LOCATED".into());
                let mut t = Table::new(header);
                for (p, row) in co.owners.iter().enumerate() {
                    let mut cells = vec![p.to_string()];
                    for &ti in set {
                        cells.push(
                            row[ti as usize].map_or("(none)".into(), |o| g.members[o].id.clone()),
                        );
                    }
                    cells.push(
                        if co.split.contains(&(p as u32)) {
                            "SPLIT"
                        } else {
                            "yes"
                        }
                        .into(),
                    );
                    t.row(cells);
                }
                t.write(&mut out)?;
                writeln!(
                    out,
                    "{} of {} indices split",
                    co.split_count(),
                    co.owners.len()
                )?;
            }
            matrices.push(json!({
                "topics": names,
                "owners": co.owners.iter().map(|row| set.iter().map(|&ti| row[ti as usize].map(|o| g.members[o].id.clone())).collect::<Vec<_>>()).collect::<Vec<_>>(),
                "split_indices": co.split,
            }));
        }
    }
    if !table {
        let doc = json!({
            "group": d.name,
            "state": d.state,
            "protocol_type": d.protocol_type,
            "protocol": d.protocol,
            "assignment_data": if no_data { "not returned by the broker" } else { "returned" },
            "members": d.members.iter().map(|m| json!({
                "id": m.id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "subscription": m.subscription,
                "assignment": match &m.assignment {
                    AssignmentData::NotReturned => Value::Null,
                    AssignmentData::Assigned(a) => a.iter().map(|(t, ps)| json!([t, ps])).collect(),
                },
            })).collect::<Vec<_>>(),
            "colocation": matrices,
            "colocation_source": source,
        });
        if a.format == Format::Json {
            serde_json::to_writer_pretty(&mut out, &doc)?;
        } else {
            serde_json::to_writer(&mut out, &doc)?;
        }
        writeln!(out)?;
    }
    out.flush()?;
    Ok(if no_data || split_total > 0 {
        ExitCode::Findings
    } else {
        ExitCode::Ok
    })
}
