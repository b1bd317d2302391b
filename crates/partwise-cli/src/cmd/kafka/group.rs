//! `partwise kafka group -g GROUP`: the group's members and their
//! assignments as the coordinator describes them, and for topics with equal
//! partition counts the co-location matrix of the partition indices. A broker
//! that returns members without assignment bytes is reported as such (Apache
//! Kafka does while the group rebalances; tansu always did). With
//! `--assignor`, what that assignor would give the described members, side by
//! side with the live assignment.

use super::{kerr, ConnArgs};
use crate::cmd::parse;
use crate::exit::{CliError, ExitCode, Result};
use crate::output::{colocation_table, Format, Table};
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
        .map(|m| match &m.subscription {
            Some(sub) => Member::new(m.id.clone(), sub.iter().cloned()),
            None => Member::new(m.id.clone(), topics.iter().map(|t| t.name.clone())),
        })
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

/// The assignment `asg` would make for the described members, each subscribed
/// to `topics` or, when none are given, to its described subscription
/// (partition counts from the cluster).
fn predict(
    conn: &partwise_kafka::Connection,
    d: &GroupDescription,
    asg: Assignor,
    topics: &[String],
) -> Result<(Group, Assignment)> {
    let subs: Vec<Vec<String>> = if topics.is_empty() {
        d.members
            .iter()
            .map(|m| {
                m.subscription.clone().ok_or_else(|| {
                    CliError::msg(format!(
                        "--assignor: the broker returned no subscription for member {}; name the topics with -t",
                        m.id
                    ))
                })
            })
            .collect::<Result<_>>()?
    } else {
        vec![topics.to_vec(); d.members.len()]
    };
    let names: BTreeSet<&String> = subs.iter().flatten().collect();
    let all = partwise_kafka::cluster::list_topics(conn).map_err(kerr)?;
    let mut ts = Vec::new();
    for t in names {
        let info = all
            .iter()
            .find(|i| &i.name == t && i.error.is_none())
            .ok_or_else(|| CliError::msg(format!("-t/--topic: topic {t} does not exist")))?;
        ts.push(Topic::new(t.clone(), info.partitions.len() as u32));
    }
    let members: Vec<Member> = d
        .members
        .iter()
        .zip(subs)
        .map(|(m, sub)| Member::new(m.id.clone(), sub))
        .collect();
    let g = Group::new(members, ts);
    let a = asg
        .assign(&g)
        .map_err(|e| CliError::context(format!("--assignor {}", asg.spec()), e))?;
    Ok((g, a))
}

/// Member id -> sorted (topic, partition) pairs.
fn owned_by(g: &Group, a: &Assignment) -> BTreeMap<String, Vec<(String, u32)>> {
    g.members
        .iter()
        .zip(&a.partitions)
        .map(|(m, ps)| {
            let mut v: Vec<(String, u32)> = ps
                .iter()
                .map(|tp| (g.topics[tp.topic as usize].name.clone(), tp.partition))
                .collect();
            v.sort();
            (m.id.clone(), v)
        })
        .collect()
}

/// The co-location of every set of assigned topics that share a partition
/// count: (topic names, colocation) per set.
fn colocations(g: &Group, a: &Assignment) -> Vec<(Vec<String>, partwise::assign::Colocation)> {
    let mut by_count: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (i, t) in g.topics.iter().enumerate() {
        by_count.entry(t.partitions).or_default().push(i as u32);
    }
    by_count
        .into_values()
        .filter(|v| v.len() >= 2)
        .map(|set| {
            let co = colocation_of(g, a, &set);
            let names = set
                .iter()
                .map(|&t| g.topics[t as usize].name.clone())
                .collect();
            // Only the set's columns, in the set's order.
            let owners = co
                .owners
                .iter()
                .map(|row| set.iter().map(|&t| row[t as usize]).collect())
                .collect();
            (
                names,
                partwise::assign::Colocation {
                    owners,
                    split: co.split,
                },
            )
        })
        .collect()
}

fn write_matrices(
    out: &mut impl Write,
    g: &Group,
    sets: &[(Vec<String>, partwise::assign::Colocation)],
    source: &str,
) -> Result<()> {
    for (names, co) in sets {
        writeln!(out, "\nco-location of {} ({source})", names.join(", "))?;
        // Every topic of a set has the same count: no blank cells.
        let n = co.owners.len() as u32;
        let topics: Vec<(String, u32)> = names.iter().map(|t| (t.clone(), n)).collect();
        let t = colocation_table(&topics, co, |o| g.members[o].id.clone());
        t.write(&mut *out)?;
        writeln!(
            out,
            "{} of {} indices split",
            co.split_count(),
            co.owners.len()
        )?;
    }
    Ok(())
}

fn matrices_json(g: &Group, sets: &[(Vec<String>, partwise::assign::Colocation)]) -> Vec<Value> {
    sets.iter()
        .map(|(names, co)| {
            json!({
                "topics": names,
                "owners": co.owners.iter().map(|row| row.iter().map(|o| o.map(|o| g.members[o].id.clone())).collect::<Vec<_>>()).collect::<Vec<_>>(),
                "split_indices": co.split,
            })
        })
        .collect()
}

pub fn run(a: Args) -> Result<ExitCode> {
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
    let assignor = a.assignor;
    let live = model(&conn, &d)?;
    let predicted = match assignor {
        Some(asg) => Some((asg, predict(&conn, &d, asg, &a.topics)?)),
        None => None,
    };
    let live_sets = live.as_ref().map(|(g, asg)| colocations(g, asg));
    let predicted_sets = predicted.as_ref().map(|(_, (g, asg))| colocations(g, asg));
    // The live assignment when the broker describes it, else the prediction.
    let split_total: usize = live_sets
        .as_ref()
        .or(predicted_sets.as_ref())
        .map_or(0, |sets| sets.iter().map(|(_, co)| co.split_count()).sum());
    let matches = match (&live, &predicted) {
        (Some((lg, la)), Some((_, (pg, pa)))) => Some(owned_by(lg, la) == owned_by(pg, pa)),
        _ => None,
    };
    let mut out = std::io::stdout().lock();
    let table = a.format == Format::Table;
    if table {
        writeln!(
            out,
            "group {}: state {}, {} protocol, assignor {} ({}), {} members",
            d.name,
            d.state,
            d.group_protocol,
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
            let why = if d.state == "Stable" {
                String::new()
            } else {
                format!(
                    "; the group is in state {}, and the coordinator describes members without them until it is Stable: run again",
                    d.state
                )
            };
            writeln!(
                out,
                "\nbroker returned no assignment data for {} member(s): assignments and co-location cannot be shown \
                 (ask each member for its own assignment, or predict it with --assignor){why}",
                d.members.iter().filter(|m| m.assignment == AssignmentData::NotReturned).count()
            )?;
        }
        if let (Some((g, _)), Some(sets)) = (&live, &live_sets) {
            write_matrices(&mut out, g, sets, "broker")?;
        }
        if let (Some((asg, (g, _))), Some(sets)) = (&predicted, &predicted_sets) {
            write_matrices(&mut out, g, sets, &format!("predicted by {}", asg.spec()))?;
            match matches {
                Some(true) => writeln!(
                    out,
                    "\nprediction by {} equals the live assignment",
                    asg.spec()
                )?,
                Some(false) => writeln!(
                    out,
                    "\nprediction by {} differs from the live assignment",
                    asg.spec()
                )?,
                None => {}
            }
        }
    } else {
        let (colocation, source) = match (&live, &live_sets, &predicted, &predicted_sets) {
            (Some((g, _)), Some(sets), _, _) => (matrices_json(g, sets), "broker".to_string()),
            (_, _, Some((asg, (g, _))), Some(sets)) => (
                matrices_json(g, sets),
                format!("predicted by {}", asg.spec()),
            ),
            _ => (Vec::new(), "broker".to_string()),
        };
        let mut doc = json!({
            "group": d.name,
            "state": d.state,
            "protocol_type": d.protocol_type,
            "group_protocol": d.group_protocol,
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
            "colocation": colocation,
            "colocation_source": source,
            "split_count": split_total,
        });
        if let (Some((asg, (g, pa))), Some(sets)) = (&predicted, &predicted_sets) {
            doc["prediction"] = json!({
                "assignor": asg.spec(),
                "assignment": owned_by(g, pa),
                "colocation": matrices_json(g, sets),
                "split_count": sets.iter().map(|(_, co)| co.split_count()).sum::<usize>(),
                "matches_live": matches,
            });
        }
        crate::output::write_doc(&mut out, a.format, &doc)?;
    }
    out.flush()?;
    Ok(if no_data || split_total > 0 {
        ExitCode::Findings
    } else {
        ExitCode::Ok
    })
}
