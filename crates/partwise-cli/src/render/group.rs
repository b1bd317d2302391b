//! How `partwise kafka group` prints a group: the header line and the
//! members' table, the co-location matrices of the live assignment and of a
//! prediction, the findings, and the JSON document (`kafka group --format
//! json`, `report -b`'s groups). `kafka group --readiness` prints its
//! members and matrices with the same functions.

use crate::exit::Result;
use crate::output::{colocation_table, visible, Table};
use partwise::assign::Assignor;
use partwise::group::described::{Analysis, TopicSet, View};
use partwise_kafka::group::{AssignmentData, GroupDescription};
use serde_json::{json, Value};
use std::io::Write;

pub fn write_matrices(out: &mut impl Write, view: &View, source: &str) -> Result<()> {
    let g = &view.group;
    for TopicSet {
        topics: names,
        colocation: co,
    } in &view.sets
    {
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

pub fn matrices_json(view: &View) -> Vec<Value> {
    let g = &view.group;
    view.sets
        .iter()
        .map(|TopicSet { topics, colocation: co }| {
            json!({
                "topics": topics,
                "owners": co.owners.iter().map(|row| row.iter().map(|o| o.map(|o| g.members[o].id.clone())).collect::<Vec<_>>()).collect::<Vec<_>>(),
                "split_indices": co.split,
            })
        })
        .collect()
}

/// The text line naming the broker's model and how the prediction relates to it.
pub fn model_line(asg: Assignor, m: &partwise::assign::BrokerModel) -> String {
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

/// The group's header line and its members' table.
pub fn write_members(out: &mut impl Write, d: &GroupDescription) -> Result<()> {
    writeln!(
        out,
        "group {}: state {}, {} protocol, assignor {} ({}), {} members",
        visible(&d.name),
        visible(&d.state),
        visible(&d.group_protocol),
        visible(if d.protocol.is_empty() {
            "-"
        } else {
            &d.protocol
        }),
        visible(if d.protocol_type.is_empty() {
            "-"
        } else {
            &d.protocol_type
        }),
        d.members.len()
    )?;
    let mut t = Table::new(["MEMBER", "CLIENT", "HOST", "SUBSCRIPTION", "ASSIGNMENT"]);
    for m in &d.members {
        t.row([
            m.id.clone(),
            m.client_id.clone(),
            m.client_host.clone(),
            match (&m.subscription, &m.undecodable) {
                (Some(s), _) => s.join(","),
                (None, Some(_)) => "(could not be decoded)".into(),
                (None, None) => "(not returned)".into(),
            },
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
    t.write(&mut *out)?;
    Ok(())
}

pub fn write_table(out: &mut impl Write, d: &GroupDescription, r: &Analysis) -> Result<()> {
    let no_data = r.not_returned > 0;
    write_members(&mut *out, d)?;
    if no_data {
        let why = if d.state == "Stable" {
            String::new()
        } else {
            format!(
                "; the group is in state {}, and the coordinator describes members without them until it is Stable: run again",
                visible(&d.state)
            )
        };
        writeln!(
            out,
            "\nbroker returned no assignment data for {} member(s): assignments and co-location cannot be shown \
             (ask each member for its own assignment, or predict it with --assignor){why}",
            d.members.iter().filter(|m| m.assignment == AssignmentData::NotReturned).count()
        )?;
    }
    write_findings(&mut *out, d, r)?;
    if let Some(view) = &r.live {
        write_matrices(&mut *out, view, "broker")?;
    }
    if let Some((asg, view)) = &r.predicted {
        write_matrices(&mut *out, view, &format!("predicted by {}", asg.spec()))?;
        if !asg.deterministic() {
            writeln!(
                out,
                "\n{} is not deterministic (the real balancer follows {}): \
                 the prediction is the outcome that splits most of {} simulated runs, and a \
                 live assignment may be another",
                asg.spec(),
                asg.varies_by().unwrap_or_default(),
                partwise::assign::SIMULATED_RUNS
            )?;
        }
        match r.matches_live {
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
    Ok(())
}

/// The analysis' findings (members whose bytes could not be decoded), each
/// with the member's client and host and the fix.
pub fn write_findings(out: &mut impl Write, d: &GroupDescription, r: &Analysis) -> Result<()> {
    for f in &r.findings {
        let client = d
            .members
            .iter()
            .find(|m| f.message.starts_with(&format!("member {}:", m.id)))
            .map(|m| format!(" (client '{}', host {})", m.client_id, m.client_host))
            .unwrap_or_default();
        writeln!(out, "\n{}{client}: {}\n  fix: {}", f.kind, f.message, f.fix)?;
    }
    Ok(())
}

/// Topics with their partitions, as `[topic, [partitions]]` pairs.
pub fn parts_json(a: &[(String, Vec<u32>)]) -> Value {
    a.iter().map(|(t, ps)| json!([t, ps])).collect()
}

pub fn members_json(d: &GroupDescription) -> Vec<Value> {
    d.members
        .iter()
        .map(|m| {
            let mut v = json!({
                "id": m.id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "subscription": m.subscription,
                "owned_partitions": m.owned_partitions.as_deref().map(parts_json),
                "generation": m.generation,
                "assignment": match &m.assignment {
                    AssignmentData::NotReturned => Value::Null,
                    AssignmentData::Assigned(a) => parts_json(a),
                },
            });
            if let Some(t) = &m.target {
                v["target_assignment"] = parts_json(t);
            }
            if let Some(why) = &m.undecodable {
                v["undecodable"] = json!(why);
            }
            v
        })
        .collect()
}

/// The topics of the live assignment (else of the prediction) with their
/// counts, in `assign --group-file`'s shape; `null` when neither was made.
/// A consumer-protocol group's topics carry their ids (Kafka's base64
/// form), which `assign --group-file` reads for the coordinator's topic order.
pub fn topics_json(d: &GroupDescription, r: &Analysis) -> Value {
    let view = r.live.as_ref().or(r.predicted.as_ref().map(|(_, v)| v));
    match view {
        Some(v) => v
            .group
            .topics
            .iter()
            .map(|t| {
                let mut o = json!({"name": t.name, "partitions": t.partitions});
                if let Some((_, id)) = d.topic_ids.iter().find(|(n, _)| *n == t.name) {
                    o["id"] = json!(partwise::assign::group_file::topic_id_text(id));
                }
                o
            })
            .collect(),
        None => Value::Null,
    }
}

/// A group's description and analysis as JSON (`kafka group --format json`, and `report -b`).
pub fn to_json(d: &GroupDescription, r: &Analysis) -> Value {
    let no_data = r.not_returned > 0;
    let (colocation, source) = match (&r.live, &r.predicted) {
        (Some(view), _) => (matrices_json(view), "broker".to_string()),
        (None, Some((asg, view))) => (matrices_json(view), format!("predicted by {}", asg.spec())),
        (None, None) => (Vec::new(), "broker".to_string()),
    };
    let mut doc = json!({
        "group": d.name,
        "state": d.state,
        "protocol_type": d.protocol_type,
        "group_protocol": d.group_protocol,
        "protocol": d.protocol,
        "assignment_data": if no_data { "not returned by the broker" } else { "returned" },
        "members": members_json(d),
        "topics": topics_json(d, r),
        "colocation": colocation,
        "colocation_source": source,
        "split_count": r.split_count,
        "findings": r.findings,
    });
    if let Some((asg, view)) = &r.predicted {
        doc["prediction"] = json!({
            "assignor": asg.spec(),
            "deterministic": asg.deterministic(),
            "assignment": view.owned_by(),
            "colocation": matrices_json(view),
            "split_count": view.split_count(),
            "matches_live": r.matches_live,
        });
    }
    doc
}
