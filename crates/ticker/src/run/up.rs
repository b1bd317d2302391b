//! `ticker up`: the topology checked, then both topics created with its
//! count; an existing topic is never changed.

use super::plan::{brokers, connection, plan, rt, security, Result};
use crate::flags::Common;
use partwise::check::check;
use partwise_group::cluster::Cluster;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct UpArgs {
    #[command(flatten)]
    pub(super) common: Common,
}

pub fn up(a: &UpArgs) -> Result<u8> {
    up_created(&a.common).map(|(code, _)| code)
}

/// `up`, and the topics it created (the demo removes those, and only those).
pub(super) fn up_created(common: &Common) -> Result<(u8, Vec<String>)> {
    let p = plan(common)?;
    let report = check(&p.topology, &[]);
    if !report.ok() {
        println!(
            "refused: {} fails partwise check:",
            common.topology.display()
        );
        for g in &report.groups {
            for r in &g.reasons {
                println!("  - {r}\n    fix: {}", r.fix());
            }
        }
        for f in &report.families {
            for r in &f.reasons {
                println!("  - {r}\n    fix: {}", r.fix());
            }
        }
        for v in report.placements.iter().filter(|v| !v.ok()) {
            if v.realign().is_some() {
                println!(
                    "  - consumer group {} ({}): the partition counts differ, so no assignor keeps the join across members",
                    v.consumer_group, v.assignor
                );
            } else {
                println!(
                    "  - consumer group {} ({}) splits units at {:?} members",
                    v.consumer_group,
                    v.assignor,
                    v.splitting_counts()
                );
            }
            // The advice, then each procedure when the counts differ.
            for (i, line) in v.fix.iter().flat_map(|f| f.lines()).enumerate() {
                if i == 0 {
                    println!("    fix: {line}");
                } else {
                    println!("         {i}. {line}");
                }
            }
        }
        return Ok((1, Vec::new()));
    }
    let conn = connection(common, Duration::from_secs(10))?;
    let security = security(&conn)?;
    let b = conn.brokers();
    rt()?.block_on(async {
        let mut c =
            Cluster::new(brokers(&conn), "ticker", conn.timeout()).with_security(security);
        let names = vec![p.market.clone(), p.notif.clone()];
        let meta = c.metadata(&names).await.map_err(|e| format!("{b}: {e}"))?;
        let mut refused = false;
        for name in &names {
            if let Some(m) = meta.get(name) {
                if m.leaders.len() as u32 != p.partitions {
                    println!(
                        "refused: topic {name} exists with {} partitions; {} says {}. ticker never changes an existing topic (a new count moves keys: partwise resize --from {} --to {} shows which)",
                        m.leaders.len(),
                        common.topology.display(),
                        p.partitions,
                        m.leaders.len(),
                        p.partitions
                    );
                    refused = true;
                } else {
                    println!("topic {name}: exists with {} partitions", p.partitions);
                }
            }
        }
        if refused {
            return Ok((1, Vec::new()));
        }
        let missing: Vec<(&str, i32)> = names
            .iter()
            .filter(|n| !meta.contains_key(*n))
            .map(|n| (n.as_str(), p.partitions as i32))
            .collect();
        if !missing.is_empty() {
            c.create_topics(&missing).await.map_err(|e| format!("{b}: {e}"))?;
            // Creation is asynchronous: wait until every partition has a leader.
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let m = c.metadata(&names).await.map_err(|e| format!("{b}: {e}"))?;
                if names.iter().all(|n| m.get(n).is_some_and(|t| t.leaders.iter().all(|&l| l >= 0))) {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(format!("{b}: the topics got no leaders within 30 s"));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            for (n, k) in &missing {
                println!("topic {n}: created with {k} partitions");
            }
        }
        Ok((0, missing.iter().map(|(n, _)| n.to_string()).collect()))
    })
}
