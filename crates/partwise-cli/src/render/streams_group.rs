//! How `partwise kafka group` prints a Kafka Streams group of the streams
//! protocol: the header line, the members with their tasks, the
//! sub-topologies with their topics, each active task's partitions, and the
//! findings; the JSON document is the report's own serialization. For a
//! classic-protocol Streams group, what its members' Streams user data
//! says, after the classic group's own table ([`write_classic`]).

use crate::exit::Result;
use crate::output::{visible, Table};
use partwise::findings::Finding;
use partwise::streams::group::{ClassicStreamsReport, StreamsReport, Task, TaskHolding};
use std::io::Write;

fn list(tasks: &[Task]) -> String {
    if tasks.is_empty() {
        "-".to_string()
    } else {
        tasks
            .iter()
            .map(Task::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }
}

fn names(v: &[String]) -> String {
    if v.is_empty() {
        "-".to_string()
    } else {
        v.join(",")
    }
}

pub fn write_table(out: &mut impl Write, r: &StreamsReport) -> Result<()> {
    let g = &r.group;
    writeln!(
        out,
        "group {}: state {}, streams protocol, group epoch {}, target assignment epoch {}, {} members",
        visible(&g.group),
        visible(&g.state),
        g.group_epoch,
        g.target_assignment_epoch,
        g.members.len()
    )?;
    let mut t = Table::new([
        "MEMBER", "PROCESS", "CLIENT", "HOST", "EPOCH", "ACTIVE", "STANDBY", "WARMUP",
    ]);
    for m in &g.members {
        t.row([
            m.member_id.clone(),
            m.process_id.clone(),
            m.client_id.clone(),
            m.client_host.clone(),
            m.member_epoch.to_string(),
            list(&m.assignment.active),
            list(&m.assignment.standby),
            list(&m.assignment.warmup),
        ]);
    }
    t.write(&mut *out)?;
    match &g.subtopologies {
        None => writeln!(
            out,
            "\ntopology: not configured by the coordinator{}",
            g.topology_epoch
                .map(|e| format!(" (topology epoch {e})"))
                .unwrap_or_default()
        )?,
        Some(subs) => {
            writeln!(out)?;
            let mut t = Table::new([
                "SUB-TOPOLOGY",
                "SOURCE TOPICS",
                "REPARTITION SOURCES",
                "REPARTITION SINKS",
            ]);
            for s in subs {
                t.row([
                    s.id.clone(),
                    names(&s.source_topics),
                    names(
                        &s.repartition_source_topics
                            .iter()
                            .map(|(n, _)| n.clone())
                            .collect::<Vec<_>>(),
                    ),
                    names(&s.repartition_sink_topics),
                ]);
            }
            t.write(&mut *out)?;
        }
    }
    if !r.tasks.is_empty() {
        writeln!(out)?;
        let mut t = Table::new(["TASK", "MEMBER", "PARTITIONS HELD", "MISSING"]);
        for tp in &r.tasks {
            t.row([
                tp.task.to_string(),
                tp.member_id.clone(),
                names(
                    &tp.holds
                        .iter()
                        .map(|(topic, p)| format!("{topic}[{p}]"))
                        .collect::<Vec<_>>(),
                ),
                names(&tp.missing),
            ]);
        }
        t.write(&mut *out)?;
    }
    write_findings(out, &r.findings)
}

fn holdings(hs: &[TaskHolding]) -> String {
    if hs.is_empty() {
        return "-".to_string();
    }
    hs.iter()
        .map(|h| h.task.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn partitions(tps: &[(String, i32)]) -> String {
    names(
        &tps.iter()
            .map(|(topic, p)| format!("{topic}[{p}]"))
            .collect::<Vec<_>>(),
    )
}

/// A classic-protocol Streams group's members as their user data says
/// (process, active and standby tasks; "unknown" with why where it does not
/// decode), each task's partitions, and the findings.
pub fn write_classic(out: &mut impl Write, r: &ClassicStreamsReport) -> Result<()> {
    writeln!(
        out,
        "\nKafka Streams (classic protocol, assignor stream): {} members",
        r.members.len()
    )?;
    let mut t = Table::new(["MEMBER", "PROCESS", "CLIENT", "ACTIVE", "STANDBY"]);
    for m in &r.members {
        let (active, standby) = match &m.unknown {
            Some(_) => ("unknown".to_string(), "unknown".to_string()),
            None => (holdings(&m.active), holdings(&m.standby)),
        };
        t.row([
            m.member_id.clone(),
            m.process_id.clone().unwrap_or_else(|| "unknown".into()),
            m.client_id.clone(),
            active,
            standby,
        ]);
    }
    t.write(&mut *out)?;
    let mut t = Table::new(["TASK", "KIND", "MEMBER", "PARTITIONS HELD", "MISSING"]);
    let mut rows = 0;
    for tp in &r.tasks {
        t.row([
            tp.task.to_string(),
            "active".to_string(),
            tp.member_id.clone(),
            partitions(&tp.holds),
            names(&tp.missing),
        ]);
        rows += 1;
    }
    for m in &r.members {
        for h in &m.standby {
            t.row([
                h.task.to_string(),
                "standby".to_string(),
                m.member_id.clone(),
                partitions(&h.partitions),
                "-".to_string(),
            ]);
            rows += 1;
        }
    }
    if rows > 0 {
        writeln!(out)?;
        t.write(&mut *out)?;
    }
    for m in &r.members {
        if let Some(why) = &m.unknown {
            writeln!(
                out,
                "\nmember {}: process and tasks unknown ({})",
                visible(&m.member_id),
                visible(why)
            )?;
        }
    }
    write_findings(out, &r.findings)
}

/// Each finding with its fix, after the tables.
fn write_findings(out: &mut impl Write, findings: &[Finding]) -> Result<()> {
    for f in findings {
        writeln!(
            out,
            "\n{}: {}\n  fix: {}",
            f.kind,
            visible(&f.message),
            visible(&f.fix)
        )?;
    }
    Ok(())
}
