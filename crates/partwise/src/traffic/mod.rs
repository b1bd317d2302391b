//! What a measured key stream does to a topic and its consumers: the load
//! per partition as keys are counted ([`Tally`], one per reader thread,
//! merged at the end), and the report `partwise skew` renders from it
//! ([`Tally::report`]): the skew statistics, the heavy hitters with their
//! partitions, what each consumer of a group carries, and how fast the lag
//! grows when a partition's inflow exceeds what one consumer processes.
//! Measured keys with their weights (`--counts FILE`) give loads directly
//! ([`weighted_loads`]), and what the busiest member of a group carries
//! ([`busiest_consumer`]).
//!
//! The consumers are named as `partwise assign` names them
//! ([`crate::assign::member_names`]), at any group size, so the two commands
//! agree on who owns what.
//!
//! ```
//! use partwise::traffic::{Report, ReportOptions, Tally};
//! use partwise::{PartitionCount, Partitioner};
//! let java: Partitioner = "java".parse()?;
//! let n = PartitionCount::new(6)?;
//! let keys: Vec<&[u8]> = vec![b"BBCA", b"BBCA", b"BBCA", b"TLKM"];
//! let mut t = Tally::new(n, 16);
//! t.add(java, n, &keys, &[]);
//! t.lines = keys.len() as u64;
//! let r: Report = t.report(java, n, &ReportOptions { top: 10, ..Default::default() })?;
//! assert_eq!(r.stats.max, 3);
//! assert_eq!(r.heavy[0].hitter.key, b"BBCA".to_vec());
//! assert_eq!(r.heavy[0].partition, Some(0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod hitters;
pub mod skew;

use crate::assign::{member_names, Assignor, Group, Member, Topic};
use crate::traffic::skew::{HeavyHitter, HeavyHitters, SkewStats};
use crate::{Error, PartitionCount, Partitioner};
use serde::ser::{Serialize, SerializeStruct, Serializer};

/// The load of a key stream as counted so far.
#[derive(Clone, Debug)]
pub struct Tally {
    /// Load per partition.
    pub loads: Vec<u64>,
    /// Load the partitioner put on no fixed partition.
    pub not_fixed: u64,
    /// Lines read (the reader counts them: blank lines are no keys).
    pub lines: u64,
    /// The heavy-hitter summary.
    pub heavy: HeavyHitters,
    /// Sum of the weights given to [`Tally::weigh`].
    weight: u64,
    /// Placements of the batch being added, kept to reuse the allocation.
    parts: Vec<u32>,
}

impl Tally {
    /// An empty tally for a topic of `n` partitions, with a heavy-hitter
    /// summary of `capacity` counters.
    pub fn new(n: PartitionCount, capacity: usize) -> Tally {
        Tally {
            loads: vec![0; n.get() as usize],
            not_fixed: 0,
            lines: 0,
            heavy: HeavyHitters::new(capacity),
            weight: 0,
            parts: Vec::new(),
        }
    }

    /// Counts a weight before its key is added, so that no load or total
    /// can overflow; an error when the weights add up to more than 2^64 - 1.
    pub fn weigh(&mut self, w: u64) -> Result<(), Error> {
        self.weight = self.weight.checked_add(w).ok_or_else(overflow)?;
        Ok(())
    }

    /// Adds `keys` as `p` places them over `n` partitions, each with weight
    /// 1 when `weights` is empty, else with its weight.
    pub fn add(&mut self, p: Partitioner, n: PartitionCount, keys: &[&[u8]], weights: &[u64]) {
        self.parts.resize(keys.len(), 0);
        p.place_batch(keys, n, &mut self.parts);
        if weights.is_empty() {
            // One key per line: the common case, without a weight stream.
            for &part in &self.parts {
                match self.loads.get_mut(part as usize) {
                    Some(l) => *l += 1,
                    None => self.not_fixed += 1,
                }
            }
            self.heavy.add_each(keys);
        } else {
            for ((&part, key), &w) in self.parts.iter().zip(keys).zip(weights) {
                match self.loads.get_mut(part as usize) {
                    Some(l) => *l += w,
                    None => self.not_fixed += w,
                }
                self.heavy.add(key, w);
            }
        }
    }

    /// Adds another reader's tally of the same topic.
    pub fn merge(&mut self, other: Tally) -> Result<(), Error> {
        self.weight = self.weight.checked_add(other.weight).ok_or_else(overflow)?;
        for (a, b) in self.loads.iter_mut().zip(&other.loads) {
            *a += b;
        }
        self.not_fixed += other.not_fixed;
        self.lines += other.lines;
        self.heavy.merge(other.heavy);
        Ok(())
    }

    /// All the load counted, placed or not.
    pub fn total(&self) -> u64 {
        self.loads.iter().sum::<u64>() + self.not_fixed
    }

    /// What the tally means for the topic and, per `opts`, its consumers.
    pub fn report(
        &self,
        p: Partitioner,
        n: PartitionCount,
        opts: &ReportOptions,
    ) -> Result<Report, Error> {
        let total = self.total();
        let heavy = self
            .heavy
            .top()
            .into_iter()
            .take(opts.top)
            .map(|hitter| HotKey {
                partition: p.place(Some(&hitter.key), n).partition(),
                share: hitter.estimate as f64 / total as f64,
                hitter,
            })
            .collect();
        let consumers = match opts.consumers {
            None => None,
            Some((assignor, m)) => {
                let members: Vec<ConsumerLoad> = consumer_partitions(assignor, n, m)?
                    .into_iter()
                    .map(|(member, partitions)| {
                        let load = partitions.iter().map(|&q| self.loads[q as usize]).sum();
                        ConsumerLoad {
                            share: load as f64 / total as f64,
                            load,
                            member,
                            partitions,
                        }
                    })
                    .collect();
                let idle = members
                    .iter()
                    .filter(|c| c.load == 0)
                    .map(|c| c.member.clone())
                    .collect();
                Some(Consumers {
                    assignor,
                    members,
                    idle,
                })
            }
        };
        let lag = opts.lag.map(|(rate, per)| {
            lag_forecast(
                &self.loads,
                rate,
                per,
                consumers.as_ref().map(|c| c.members.as_slice()),
            )
        });
        Ok(Report {
            partitioner: p,
            partitions: n.get(),
            keys: self.lines,
            total,
            not_fixed: self.not_fixed,
            loads: self.loads.clone(),
            stats: SkewStats::of(&self.loads),
            heavy,
            error_bound: self.heavy.error_bound(),
            consumers,
            lag,
        })
    }
}

fn overflow() -> Error {
    Error::Invalid {
        what: "counts".into(),
        reason: "they add up to more than 2^64 - 1".into(),
    }
}

/// What [`Tally::report`] looks at beyond the partitions.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReportOptions {
    /// Heavy hitters to report.
    pub top: usize,
    /// The consumer group: its assignor and member count.
    pub consumers: Option<(Assignor, u32)>,
    /// The lag forecast: total produce rate into the topic and what one
    /// consumer processes from one partition, both MB/s.
    pub lag: Option<(f64, f64)>,
}

/// One heavy hitter and the partition it lands on.
#[derive(Clone, Debug, PartialEq)]
pub struct HotKey {
    /// The key with its estimate.
    pub hitter: HeavyHitter,
    /// Where the partitioner puts it (`None`: no fixed partition).
    pub partition: Option<u32>,
    /// Its estimate over all the load.
    pub share: f64,
}

// The key twice (its text, `null` when not UTF-8, and its hex), which a
// derive cannot write from one field.
impl Serialize for HotKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Hex<'a>(&'a [u8]);
        impl Serialize for Hex<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                crate::ser::key_hex(self.0, s)
            }
        }
        struct Text<'a>(&'a [u8]);
        impl Serialize for Text<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                crate::ser::key_text(self.0, s)
            }
        }
        let mut st = s.serialize_struct("HotKey", 6)?;
        st.serialize_field("key", &Text(&self.hitter.key))?;
        st.serialize_field("key_hex", &Hex(&self.hitter.key))?;
        st.serialize_field("estimate", &self.hitter.estimate)?;
        st.serialize_field("max_error", &self.hitter.error)?;
        st.serialize_field("share", &self.share)?;
        st.serialize_field("partition", &self.partition)?;
        st.end()
    }
}

/// What one consumer of the group carries.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ConsumerLoad {
    /// Its name, as `partwise assign` names members.
    pub member: String,
    /// The partitions the assignor gives it.
    pub partitions: Vec<u32>,
    /// The load of those partitions.
    pub load: u64,
    /// That load over all the load (of the report, or of the loads given
    /// to [`consumer_loads`]).
    pub share: f64,
}

/// The consumer group of a report: who carries what.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Consumers {
    /// The group's assignor.
    pub assignor: Assignor,
    /// What each member carries, in member order.
    pub members: Vec<ConsumerLoad>,
    /// The members that carry nothing.
    pub idle: Vec<String>,
}

/// How lag grows when partitions receive more than a consumer processes.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LagForecast {
    /// What one consumer processes from one partition, MB/s.
    pub consume_mbps_per_partition: f64,
    /// Inflow per partition, MB/s: the rate split as the keyed load is.
    pub inflow_mbps: Vec<f64>,
    /// Lag growth per partition, MB/s (0 where the consumer keeps up).
    #[serde(rename = "lag_growth_mbps")]
    pub growth_mbps: Vec<f64>,
    /// The busiest consumer and its partitions' lag growth.
    pub hot_consumer: Option<HotConsumer>,
}

/// The busiest consumer of a [`LagForecast`].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct HotConsumer {
    /// Its name.
    pub member: String,
    /// Its partitions' lag growth, MB/s.
    pub lag_growth_mbps: f64,
    /// The same per hour, MB.
    pub lag_growth_mb_per_hour: f64,
}

/// The report of a tally: what `partwise skew` prints (its JSON: the
/// fields in this order).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Report {
    /// The partitioner that placed the keys.
    pub partitioner: Partitioner,
    /// The topic's partition count.
    pub partitions: u32,
    /// Keys read (the tally's lines).
    pub keys: u64,
    /// All the load, placed or not.
    pub total: u64,
    /// The load placed on no fixed partition.
    pub not_fixed: u64,
    /// Load per partition.
    pub loads: Vec<u64>,
    /// Skew statistics of the partition loads.
    #[serde(flatten)]
    pub stats: SkewStats,
    /// The heaviest keys, heaviest first.
    #[serde(rename = "heavy_hitters")]
    pub heavy: Vec<HotKey>,
    /// Every estimate is at most this far below the true count.
    #[serde(rename = "heavy_hitter_error_bound")]
    pub error_bound: u64,
    /// What each consumer carries, when a group was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consumers: Option<Consumers>,
    /// The lag forecast, when rates were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lag: Option<LagForecast>,
}

/// The partitions each of `m` members owns when the group reads one topic
/// of `n` partitions under `assignor`, each member named as `partwise
/// assign` names it.
pub fn consumer_partitions(
    assignor: Assignor,
    n: PartitionCount,
    m: u32,
) -> Result<Vec<(String, Vec<u32>)>, Error> {
    const TOPIC: &str = "topic";
    let names = member_names(m as usize);
    let members = names
        .iter()
        .map(|id| Member::new(id.clone(), [TOPIC]))
        .collect();
    let group = Group::new(members, vec![Topic::new(TOPIC, n.get())]);
    let a = assignor.assign(&group)?;
    Ok(names
        .into_iter()
        .zip(&a.partitions)
        .map(|(name, tps)| (name, tps.iter().map(|tp| tp.partition).collect()))
        .collect())
}

/// The load per partition of measured keys, each with its weight (the
/// records it carries, as `--counts FILE` gives them), placed by `p` over
/// `n`; and the load placed on no fixed partition. Saturates rather than
/// overflow (the readers refuse counts whose sum overflows).
pub fn weighted_loads(p: Partitioner, n: PartitionCount, keys: &[(&[u8], u64)]) -> (Vec<u64>, u64) {
    let mut loads = vec![0u64; n.get() as usize];
    let mut not_fixed = 0u64;
    for (k, w) in keys {
        match p.place(Some(k), n).partition() {
            Some(q) => loads[q as usize] = loads[q as usize].saturating_add(*w),
            None => not_fixed = not_fixed.saturating_add(*w),
        }
    }
    (loads, not_fixed)
}

/// What each of `m` members carries when they read one topic of
/// `loads.len()` partitions under `assignor` (the members named as
/// [`consumer_partitions`] names them).
pub fn consumer_loads(
    assignor: Assignor,
    loads: &[u64],
    m: u32,
) -> Result<Vec<ConsumerLoad>, Error> {
    let n = PartitionCount::new(loads.len() as u32)?;
    let total: u64 = loads.iter().sum();
    Ok(consumer_partitions(assignor, n, m)?
        .into_iter()
        .map(|(member, partitions)| {
            let load = partitions.iter().map(|&q| loads[q as usize]).sum();
            ConsumerLoad {
                share: load as f64 / total as f64,
                load,
                member,
                partitions,
            }
        })
        .collect())
}

/// The busiest of [`consumer_loads`] (the first among equals), or `None`
/// for a group of no member.
pub fn busiest_consumer(
    assignor: Assignor,
    loads: &[u64],
    m: u32,
) -> Result<Option<ConsumerLoad>, Error> {
    let cs = consumer_loads(assignor, loads, m)?;
    Ok(cs
        .into_iter()
        .fold(None, |best: Option<ConsumerLoad>, c| match best {
            Some(b) if b.load >= c.load => Some(b),
            _ => Some(c),
        }))
}

/// The lag forecast for `loads` when `rate` MB/s flows into the topic and
/// one consumer processes `per_partition` MB/s of each partition.
fn lag_forecast(
    loads: &[u64],
    rate: f64,
    per_partition: f64,
    consumers: Option<&[ConsumerLoad]>,
) -> LagForecast {
    // Records with no fixed partition follow no key: the rate is split as
    // the placed load is.
    let fixed: u64 = loads.iter().sum();
    let inflow: Vec<f64> = loads
        .iter()
        .map(|&l| rate * l as f64 / fixed.max(1) as f64)
        .collect();
    let growth: Vec<f64> = inflow
        .iter()
        .map(|&i| (i - per_partition).max(0.0))
        .collect();
    let hot_consumer = consumers.and_then(|cs| {
        // Among equally busy consumers, the last one (as max_by_key picks).
        let busiest = cs.iter().max_by_key(|c| c.load)?;
        let g: f64 = busiest.partitions.iter().map(|&q| growth[q as usize]).sum();
        Some(HotConsumer {
            member: busiest.member.clone(),
            lag_growth_mbps: g,
            lag_growth_mb_per_hour: g * 3600.0,
        })
    });
    LagForecast {
        consume_mbps_per_partition: per_partition,
        inflow_mbps: inflow,
        growth_mbps: growth,
        hot_consumer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(x: u32) -> PartitionCount {
        PartitionCount::new(x).unwrap()
    }

    #[test]
    fn tallies_merge_to_the_tally_of_the_whole() {
        let java: Partitioner = "java".parse().unwrap();
        let keys: Vec<Vec<u8>> = (0..500)
            .map(|i| format!("k{}", i % 37).into_bytes())
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut whole = Tally::new(n(7), 64);
        whole.add(java, n(7), &refs, &[]);
        let mut a = Tally::new(n(7), 64);
        let mut b = Tally::new(n(7), 64);
        a.add(java, n(7), &refs[..200], &[]);
        let w: Vec<u64> = vec![1; 300];
        for &x in &w {
            b.weigh(x).unwrap();
        }
        b.add(java, n(7), &refs[200..], &w);
        a.merge(b).unwrap();
        assert_eq!(a.loads, whole.loads);
        assert_eq!(a.total(), 500);
        assert_eq!(a.heavy.top(), whole.heavy.top());
        let mut big = Tally::new(n(1), 1);
        big.weigh(u64::MAX).unwrap();
        assert!(big.weigh(1).is_err());
        let mut other = Tally::new(n(1), 1);
        other.weigh(1).unwrap();
        assert!(big.merge(other).is_err());
    }

    #[test]
    fn consumers_and_lag() {
        let java: Partitioner = "java".parse().unwrap();
        let mut t = Tally::new(n(4), 8);
        t.loads = vec![60, 20, 20, 0];
        let opts = ReportOptions {
            top: 0,
            consumers: Some(("java:range".parse().unwrap(), 2)),
            lag: Some((10.0, 2.0)),
        };
        let r = t.report(java, n(4), &opts).unwrap();
        let cs = r.consumers.unwrap();
        assert_eq!(
            cs.members,
            vec![
                ConsumerLoad {
                    member: "m00".into(),
                    partitions: vec![0, 1],
                    load: 80,
                    share: 0.8,
                },
                ConsumerLoad {
                    member: "m01".into(),
                    partitions: vec![2, 3],
                    load: 20,
                    share: 0.2,
                },
            ]
        );
        assert!(cs.idle.is_empty());
        let lag = r.lag.unwrap();
        assert_eq!(lag.inflow_mbps, vec![6.0, 2.0, 2.0, 0.0]);
        assert_eq!(lag.growth_mbps, vec![4.0, 0.0, 0.0, 0.0]);
        let hot = lag.hot_consumer.unwrap();
        assert_eq!((hot.member.as_str(), hot.lag_growth_mbps), ("m00", 4.0));
        assert_eq!(hot.lag_growth_mb_per_hour, 14_400.0);
        let names: Vec<String> = consumer_partitions("java:range".parse().unwrap(), n(300), 150)
            .unwrap()
            .into_iter()
            .map(|(m, _)| m)
            .collect();
        assert_eq!(names, member_names(150));
    }

    #[test]
    fn weighted_loads_and_the_busiest_consumer() {
        let java: Partitioner = "java".parse().unwrap();
        let keys: Vec<(&[u8], u64)> = vec![(b"BBCA", 81), (b"TLKM", 11), (b"ASII", 11)];
        let (loads, none) = weighted_loads(java, n(6), &keys);
        assert_eq!(none, 0);
        let mut expect = vec![0u64; 6];
        for (k, w) in &keys {
            expect[java.place(Some(k), n(6)).partition().unwrap() as usize] += w;
        }
        assert_eq!(loads, expect);
        // Range over 6 partitions and 2 members: 0-2 and 3-5.
        let b = busiest_consumer("java:range".parse().unwrap(), &loads, 2)
            .unwrap()
            .unwrap();
        let halves = [loads[..3].iter().sum::<u64>(), loads[3..].iter().sum()];
        assert_eq!(b.load, halves[0].max(halves[1]));
        let rr: Partitioner = "java:round-robin".parse().unwrap();
        assert_eq!(weighted_loads(rr, n(6), &keys).1, 103);
    }
}
