//! A local join over co-partitioned units: prints, per unit, how many
//! records of each topic it handled.
//!
//! ```sh
//! bash scripts/kafka-up && source /tmp/partwise-kafka/env
//! cargo run -p partwise-group --example join -- "$PARTWISE_KAFKA_BOOTSTRAP" my-group market-updates notifications
//! ```

use partwise_group::{Config, Consumer, Event, OffsetReset};
use std::collections::BTreeMap;
use std::time::Duration;

// A hostile broker's absurd array count must be an error, not an abort
// (see partwise_alloc).
#[global_allocator]
static ALLOC: partwise_alloc::ReserveHuge = partwise_alloc::ReserveHuge;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), partwise_group::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: join BROKER GROUP TOPIC [TOPIC...]");
        std::process::exit(2);
    }
    let mut cfg = Config::new(vec![args[0].clone()], args[1].clone(), args[2..].to_vec());
    cfg.auto_offset_reset = OffsetReset::Earliest;
    let mut consumer = Consumer::new(cfg).await?;
    // Per unit, per topic: records seen. A real join keeps state per unit here,
    // dropping it on Revoked: both sides of every key of unit p arrive in this process.
    let mut state: BTreeMap<i32, BTreeMap<String, usize>> = BTreeMap::new();
    // Ends after 15 s without an event (the first join alone can take seconds); a dropped poll only costs a reconnect.
    while let Ok(event) = tokio::time::timeout(Duration::from_secs(15), consumer.poll()).await {
        match event? {
            Event::Assigned(a) => {
                println!(
                    "generation {}: units {:?}",
                    a.generation,
                    a.units.iter().map(|u| u.partition).collect::<Vec<_>>()
                );
            }
            Event::Revoked(a) => {
                for u in &a.units {
                    state.remove(&u.partition);
                }
            }
            Event::Unstored(u) => eprintln!("{u}"),
            Event::Records { unit, records } => {
                let counts = state.entry(unit.partition).or_default();
                for r in &records {
                    *counts.entry(r.topic.to_string()).or_default() += 1;
                }
                println!("unit {}: {:?}", unit.partition, counts);
            }
        }
    }
    consumer.close().await
}
