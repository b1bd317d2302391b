//! How `partwise kafka group` prints a group: the header line and the
//! members' table, the co-location matrices of the live assignment and of a
//! prediction, the findings, and the JSON document (`kafka group --format
//! json`, `report -b`'s groups). `kafka group --readiness` prints its
//! members and matrices with the same functions.

use crate::exit::Result;
use crate::output::{colocation_table, visible, Table};
use partwise::assign::Assignor;
use partwise::group::described::{Analysis, TopicSet, View};
use partwise_kafka::group::{
    AssignmentData, Colocations, GroupDescription, GroupJson, MemberDescription, PredictionJson,
};
use serde::Serialize;
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

/// The co-location matrices of `view` as JSON.
pub fn matrices_json(view: &View) -> Colocations<'_> {
    Colocations::of(view)
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

/// The members as JSON.
pub fn members_json(d: &GroupDescription) -> &[MemberDescription] {
    &d.members
}

/// A finding of the analysis, as `kafka group --format json` has always
/// printed it: its kind, message and fix.
#[derive(Serialize)]
pub struct BriefFinding<'a> {
    kind: &'static str,
    message: &'a str,
    fix: &'a str,
}

/// A group's description and analysis as JSON (`kafka group --format
/// json`, and `report -b`): the library's description, then the analysis'
/// findings, then the prediction when one was made.
#[derive(Serialize)]
pub struct GroupDoc<'a> {
    #[serde(flatten)]
    pub group: GroupJson<'a>,
    pub findings: Vec<BriefFinding<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction: Option<PredictionJson<'a>>,
    /// A classic Kafka Streams group's processes and tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streams: Option<&'a partwise::streams::group::ClassicStreamsReport>,
}

pub fn to_json<'a>(d: &'a GroupDescription, r: &'a Analysis) -> GroupDoc<'a> {
    GroupDoc {
        group: GroupJson::new(d, r),
        findings: r
            .findings
            .iter()
            .map(|f| BriefFinding {
                kind: f.kind,
                message: &f.message,
                fix: &f.fix,
            })
            .collect(),
        prediction: PredictionJson::of(r),
        streams: None,
    }
}
