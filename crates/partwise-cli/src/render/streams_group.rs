//! How `partwise kafka group` prints a Kafka Streams group of the streams
//! protocol: the header line, the members with their tasks, the
//! sub-topologies with their topics, each active task's partitions, and the
//! findings; the JSON document is the report's own serialization.

use crate::exit::Result;
use crate::output::{visible, Table};
use partwise::streams_group::{StreamsReport, Task};
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
    for f in &r.findings {
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
