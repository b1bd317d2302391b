//! Where each partition starts (the committed offset, or the reset point)
//! and the fetch loop: one pipelined connection per partition leader, the
//! records of whole units queued as events.

use super::commit::{Positions, Tp};
use super::{
    Config, Consumer, Event, Generation, PartitionRecords, Records, State, UnitAssignment,
};
use crate::error::{Error, Result};
use crate::units::Unit;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_protocol::messages::{
    BrokerId, FetchRequest, FetchResponse, OffsetFetchRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError::{
    self, FencedLeaderEpoch, LeaderNotAvailable, NotLeaderOrFollower, OffsetOutOfRange,
    UnknownLeaderEpoch, UnknownTopicOrPartition,
};
use partwise_client::cluster::{stable_offsets, Cluster};
use partwise_client::wire::{Connection, Submitted};
use partwise_wire::records::decode_runs;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// A leader's fetch connection and the fetch written to it, with the offsets
/// it asked for.
pub(super) struct Fetcher {
    conn: Connection,
    pending: Option<(Submitted<FetchRequest>, Offsets)>,
}

/// Fetch offsets by (topic, partition).
type Offsets = BTreeMap<Tp, i64>;

impl Consumer {
    /// Positions of the partitions of whole units: the committed offset, or
    /// the reset point when nothing is committed.
    pub(super) async fn start_positions(&mut self, a: &UnitAssignment) -> Result<Positions> {
        let mut positions = Positions::default();
        let mut want: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for u in &a.units {
            for t in &u.topics {
                want.entry(t.as_str()).or_default().push(u.partition);
            }
        }
        if want.is_empty() {
            return Ok(positions);
        }
        let coord = self.coordinator().await?;
        let req = OffsetFetchRequest::default()
            .with_group_id(self.group_id())
            .with_require_stable(stable_offsets(&mut self.cluster, &coord).await?)
            .with_topics(Some(
                want.iter()
                    .map(|(t, ps)| {
                        OffsetFetchRequestTopic::default()
                            .with_name(TopicName(StrBytes::from_string(t.to_string())))
                            .with_partition_indexes(ps.clone())
                    })
                    .collect(),
            ));
        let timeout = self.cfg.request_timeout;
        let (resp, _) = self.cluster.send_to(&coord, &req, timeout).await?;
        if resp.error_code != 0 {
            self.coordinator_moved(resp.error_code);
            return Err(Error::protocol(&coord, "OffsetFetch", resp.error_code));
        }
        let mut missing = Vec::new();
        for t in &resp.topics {
            for p in &t.partitions {
                let tp = (t.name.0.to_string(), p.partition_index);
                if p.error_code != 0 {
                    return Err(Error::protocol(&coord, "OffsetFetch", p.error_code));
                }
                if p.committed_offset >= 0 {
                    self.committed.insert(tp.clone(), p.committed_offset);
                    positions.next.insert(tp, p.committed_offset);
                } else {
                    missing.push(tp);
                }
            }
        }
        for (t, ps) in &want {
            for p in ps {
                let tp = (t.to_string(), *p);
                if !positions.next.contains_key(&tp) && !missing.contains(&tp) {
                    missing.push(tp);
                }
            }
        }
        if !missing.is_empty() {
            let ts = self.cfg.auto_offset_reset.timestamp();
            positions
                .next
                .extend(self.cluster.list_offsets(&missing, ts).await?);
        }
        Ok(positions)
    }

    /// Reads one fetch response from every leader of an owned partition and
    /// queues its records as events. Each leader has its own connection with
    /// the next fetch already written to it before the records are handed
    /// out, so the broker reads the log while the application handles the
    /// last batch.
    pub(super) async fn fetch(&mut self) -> Result<()> {
        let State::Stable(g) = &mut self.state else {
            return Ok(());
        };
        let Generation {
            assignment,
            positions,
            fetchers,
            fetched,
        } = g.as_mut();
        if assignment.units.is_empty() {
            // Nothing to fetch: wait like an empty fetch would, so rebalances
            // are still noticed promptly.
            tokio::time::sleep(self.cfg.fetch_max_wait).await;
            return Ok(());
        }
        let unit_of: HashMap<Tp, Unit> = assignment
            .units
            .iter()
            .flat_map(|u| {
                u.topics
                    .iter()
                    .map(move |t| ((t.clone(), u.partition), u.clone()))
            })
            .collect();
        let mut round = Round {
            cfg: &self.cfg,
            cluster: &mut self.cluster,
            positions,
            fetchers,
            unit_of,
            per_unit: fetched,
        };
        let result = round.run().await;
        self.queue_fetched();
        result
    }

    /// Queues the records fetched so far as events, one per unit.
    pub(super) fn queue_fetched(&mut self) {
        let State::Stable(g) = &mut self.state else {
            return;
        };
        for (unit, records) in std::mem::take(&mut g.fetched) {
            self.pending.push_back(Event::Records { unit, records });
        }
    }
}

/// One fetch round over every leader, with what it borrows from the member.
struct Round<'a> {
    cfg: &'a Config,
    cluster: &'a mut Cluster,
    positions: &'a mut Positions,
    fetchers: &'a mut HashMap<String, Fetcher>,
    unit_of: HashMap<Tp, Unit>,
    /// Records read, by unit (the generation's `fetched`): queued as events
    /// even when the round fails or is dropped.
    per_unit: &'a mut BTreeMap<Unit, Records>,
}

impl Round<'_> {
    async fn run(&mut self) -> Result<()> {
        let mut tps: Vec<(Tp, i64)> = self
            .positions
            .next
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        tps.sort();
        let mut by_leader: BTreeMap<String, Offsets> = BTreeMap::new();
        for (tp, off) in tps {
            let leader = self.cluster.leader_or_refresh(&tp.0, tp.1).await?;
            by_leader.entry(leader).or_default().insert(tp, off);
        }
        self.fetchers.retain(|addr, _| by_leader.contains_key(addr));
        // A leader that fails ends the round, but what the others already
        // returned is queued: their positions moved past those records.
        for (leader, parts) in by_leader {
            self.leader(&leader, &parts).await?;
        }
        Ok(())
    }

    /// The fetch of one leader's partitions: the response to the fetch in
    /// flight (or to one written now), then the next fetch written.
    async fn leader(&mut self, leader: &str, parts: &Offsets) -> Result<()> {
        let timeout = self.cfg.request_timeout + self.cfg.fetch_max_wait;
        if !self.fetchers.contains_key(leader) {
            let conn = match Connection::connect_with(
                leader,
                &self.cfg.client_id,
                self.cfg.request_timeout,
                &self.cfg.security,
            )
            .await
            {
                Ok(c) => c,
                Err(e) => return Err(self.lost_leader(leader, parts, e.into())),
            };
            self.fetchers.insert(
                leader.to_string(),
                Fetcher {
                    conn,
                    pending: None,
                },
            );
        }
        let f = self.fetchers.get_mut(leader).expect("inserted above");
        let (sub, asked) = match f.pending.take() {
            Some(p) => p,
            None => {
                let req = fetch_request(self.cfg, parts);
                match f.conn.submit(&req, timeout).await {
                    Ok(sub) => (sub, parts.clone()),
                    Err(e) => return Err(self.lost_leader(leader, parts, e.into())),
                }
            }
        };
        let f = self.fetchers.get_mut(leader).expect("inserted above");
        let resp = match f.conn.receive(sub, timeout).await {
            Ok((resp, _)) => resp,
            Err(e) => return Err(self.lost_leader(leader, parts, e.into())),
        };
        if resp.error_code != 0 {
            self.fetchers.remove(leader);
            return Err(Error::protocol(leader, "Fetch", resp.error_code));
        }
        self.records(leader, resp, &asked).await?;
        // The next fetch of this leader's partitions, from where this one ended.
        let next: Offsets = parts
            .keys()
            .filter_map(|tp| self.positions.next.get(tp).map(|o| (tp.clone(), *o)))
            .collect();
        let req = fetch_request(self.cfg, &next);
        let f = self.fetchers.get_mut(leader).expect("inserted above");
        match f.conn.submit(&req, timeout).await {
            Ok(sub) => f.pending = Some((sub, next)),
            // Reconnected on the next fetch.
            Err(_) => {
                self.fetchers.remove(leader);
            }
        }
        Ok(())
    }

    /// The records of one leader's response to the fetch that `asked` for
    /// these offsets, by unit; positions move past them.
    async fn records(&mut self, leader: &str, resp: FetchResponse, asked: &Offsets) -> Result<()> {
        for t in resp.responses {
            // One topic name per topic of the response, shared by its
            // partitions' records.
            let topic: Arc<str> = Arc::from(t.topic.0.as_str());
            for p in t.partitions {
                let tp = (topic.to_string(), p.partition_index);
                // A position that moved since this fetch was written
                // (reset, or not owned any more) makes its data stale.
                let Some(&from) = self.positions.next.get(&tp) else {
                    continue;
                };
                if asked.get(&tp) != Some(&from) {
                    continue;
                }
                match ResponseError::try_from_code(p.error_code) {
                    None => {}
                    Some(OffsetOutOfRange) => {
                        let ts = self.cfg.auto_offset_reset.timestamp();
                        match self.cluster.list_offset(&tp.0, tp.1, ts).await {
                            Ok(off) => self.positions.next.insert(tp, off),
                            Err(e) => {
                                self.fetchers.remove(leader);
                                return Err(e.into());
                            }
                        };
                        continue;
                    }
                    Some(
                        NotLeaderOrFollower
                        | LeaderNotAvailable
                        | UnknownTopicOrPartition
                        | FencedLeaderEpoch
                        | UnknownLeaderEpoch,
                    ) => {
                        self.cluster.invalidate(&topic);
                        continue;
                    }
                    Some(_) => {
                        self.fetchers.remove(leader);
                        return Err(Error::protocol(
                            &format!("{leader} ({topic}-{})", tp.1),
                            "Fetch",
                            p.error_code,
                        ));
                    }
                }
                let runs = match decode_runs(p.records, from) {
                    Ok(r) => r,
                    Err(e) => {
                        self.fetchers.remove(leader);
                        return Err(e.into());
                    }
                };
                let records = PartitionRecords::new(topic.clone(), tp.1, runs);
                let Some(next) = records.next_offset() else {
                    continue;
                };
                self.positions.next.insert(tp.clone(), next);
                self.positions.delivered.insert(tp.clone(), next);
                let Some(unit) = self.unit_of.get(&tp) else {
                    continue;
                };
                self.per_unit.entry(unit.clone()).or_default().push(records);
            }
        }
        Ok(())
    }

    /// Drops the fetch connection of a leader that cannot be reached, and
    /// the cached leaders of its partitions: a broker that died stays the
    /// leader in the cache until Metadata is asked again, and the next fetch
    /// must go to whichever broker took its partitions over. Returns `e`.
    fn lost_leader(&mut self, leader: &str, parts: &Offsets, e: Error) -> Error {
        self.fetchers.remove(leader);
        let topics: BTreeSet<&str> = parts.keys().map(|(t, _)| t.as_str()).collect();
        for t in topics {
            self.cluster.invalidate(t);
        }
        e
    }
}

/// The Fetch request for `parts` (partition -> offset) of one leader.
fn fetch_request(cfg: &Config, parts: &Offsets) -> FetchRequest {
    let mut topics: BTreeMap<&str, Vec<FetchPartition>> = BTreeMap::new();
    for ((t, p), off) in parts {
        topics.entry(t.as_str()).or_default().push(
            FetchPartition::default()
                .with_partition(*p)
                .with_current_leader_epoch(-1)
                .with_fetch_offset(*off)
                .with_last_fetched_epoch(-1)
                .with_log_start_offset(-1)
                .with_partition_max_bytes(cfg.max_partition_fetch_bytes),
        );
    }
    FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(cfg.fetch_max_wait.as_millis() as i32)
        .with_min_bytes(1)
        .with_max_bytes(50 * 1024 * 1024)
        .with_isolation_level(0)
        .with_session_id(0)
        .with_session_epoch(-1)
        .with_topics(
            topics
                .into_iter()
                .map(|(t, ps)| {
                    FetchTopic::default()
                        .with_topic(TopicName(StrBytes::from_string(t.to_string())))
                        .with_partitions(ps)
                })
                .collect(),
        )
}
