//! Key-less records: the sticky partitioner, and a simulation of how it batches
//! compared with round-robin.
//!
//! [`StickyPartitioner`] models the producer's key-less path: KIP-480 (Kafka
//! 2.4 to 3.2, librdkafka's `sticky.partitioning.linger.ms`): stay on one
//! partition until its batch is sent, then pick another at random, never the
//! same one twice in a row; and KIP-794 (Kafka 3.3+, the `BuiltInPartitioner`):
//! switch after `batch.size` bytes have been produced to the partition; and
//! librdkafka's: re-pick a random partition every
//! `sticky.partitioning.linger.ms` (10 ms by default).
//!
//! [`simulate`] runs a producer's record accumulator over a stream of
//! records: a batch closes when the next record does not fit in `batch.size`,
//! or `linger.ms` after its first record; when one partition's batch is ready,
//! the sender drains every partition of the same broker, as the Java client's
//! `RecordAccumulator.drain` does, into one request per broker. It counts
//! batches, requests and the mean batch fill, and estimates the compression
//! gain by compressing batches of the simulated mean size with DEFLATE.

use crate::Error;

/// How a sticky partitioner decides to move on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StickyMode {
    /// KIP-480: a new partition when a new batch is started for the current
    /// one, never the same partition twice in a row.
    NewBatch,
    /// KIP-794: a new partition after `batch.size` bytes went to the current one.
    Bytes(u64),
    /// librdkafka: a new random partition (possibly the same) every this
    /// many seconds (`sticky.partitioning.linger.ms` / 1000).
    Linger(f64),
}

/// The key-less partitioner of Kafka producers since 2.4.
#[derive(Clone, Debug)]
pub struct StickyPartitioner {
    partitions: u32,
    mode: StickyMode,
    current: Option<u32>,
    produced: u64,
    since: f64,
    rng: u64,
}

impl StickyPartitioner {
    /// A sticky partitioner over `partitions` partitions, seeded for reproducibility.
    pub fn new(partitions: u32, mode: StickyMode, seed: u64) -> StickyPartitioner {
        StickyPartitioner {
            partitions: partitions.max(1),
            mode,
            current: None,
            produced: 0,
            since: 0.0,
            rng: seed | 1,
        }
    }

    fn random(&mut self) -> u32 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        ((self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) % u64::from(self.partitions)) as u32
    }

    fn switch(&mut self, now: f64) {
        let old = self.current;
        let mut p = self.random();
        // KIP-480 never picks the previous partition again, when there is a choice.
        if self.mode == StickyMode::NewBatch && self.partitions > 1 && Some(p) == old {
            p = (p + 1 + self.random() % (self.partitions - 1)) % self.partitions;
        }
        self.current = Some(p);
        self.produced = 0;
        self.since = now;
    }

    /// The partition for the next record of `size` bytes.
    pub fn partition(&mut self, size: u64) -> u32 {
        self.partition_at(self.since, size)
    }

    /// The partition for a record of `size` bytes produced at `now` seconds
    /// (only the librdkafka mode looks at the time).
    pub fn partition_at(&mut self, now: f64, size: u64) -> u32 {
        match (self.current, self.mode) {
            (None, _) => self.switch(now),
            (Some(_), StickyMode::Bytes(limit)) if self.produced >= limit => self.switch(now),
            (Some(_), StickyMode::Linger(period)) if now - self.since >= period => self.switch(now),
            _ => {}
        }
        self.produced += size;
        self.current.expect("set above")
    }

    /// Tells the partitioner that the batch of `partition` was closed
    /// (KIP-480's `onNewBatch`).
    pub fn on_new_batch(&mut self, partition: u32) {
        if self.mode == StickyMode::NewBatch && self.current == Some(partition) {
            self.switch(self.since);
        }
    }
}

/// Which key-less strategy to simulate (in JSON, its [`Strategy::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Strategy {
    /// One record per partition in turn (Java's `RoundRobinPartitioner`, pre-2.4 null keys).
    #[serde(rename = "round-robin")]
    RoundRobin,
    /// KIP-480 sticky batching.
    #[serde(rename = "sticky (KIP-480)")]
    Sticky,
    /// KIP-794 sticky batching (switch after `batch.size` bytes).
    #[serde(rename = "sticky (KIP-794)")]
    StickyBytes,
    /// librdkafka sticky batching (switch every `sticky.partitioning.linger.ms`).
    #[serde(rename = "sticky (librdkafka)")]
    StickyLinger,
}

impl Strategy {
    /// How reports name it: the partitioner, and the KIP or client whose
    /// batching it is.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::RoundRobin => "round-robin",
            Strategy::Sticky => "sticky (KIP-480)",
            Strategy::StickyBytes => "sticky (KIP-794)",
            Strategy::StickyLinger => "sticky (librdkafka)",
        }
    }
}

/// Inputs of [`simulate`].
#[derive(Clone, Debug, PartialEq)]
pub struct BatchingInput {
    /// Number of records.
    pub messages: u64,
    /// Bytes per record.
    pub size: u64,
    /// Partitions of the topic.
    pub partitions: u32,
    /// Brokers leading them (partition p on broker p mod brokers).
    pub brokers: u32,
    /// Producer `batch.size` in bytes.
    pub batch_size: u64,
    /// Producer `linger.ms`.
    pub linger_ms: f64,
    /// Records per second the application produces.
    pub rate: f64,
    /// librdkafka's `sticky.partitioning.linger.ms` (10 by default).
    pub sticky_linger_ms: f64,
    /// Seed for the sticky choices.
    pub seed: u64,
}

/// What one strategy did.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BatchingReport {
    /// The strategy.
    pub strategy: Strategy,
    /// Batches sent.
    pub batches: u64,
    /// Produce requests sent (one per broker per drain).
    pub requests: u64,
    /// Mean records per batch.
    pub mean_records_per_batch: f64,
    /// Mean batch fill: bytes in a batch over `batch.size`.
    pub mean_fill: f64,
    /// Estimated compressed bytes over raw bytes for batches of the mean size.
    pub compression_ratio: f64,
}

struct Open {
    bytes: u64,
    records: u64,
    created: f64,
}

/// Simulates the strategies over the same stream of records.
pub fn simulate(input: &BatchingInput, strategy: Strategy) -> Result<BatchingReport, Error> {
    let bad = |what: &str, reason: &str| Error::Invalid {
        what: what.into(),
        reason: reason.into(),
    };
    if input.messages == 0 {
        return Err(bad("messages", "must be at least 1"));
    }
    if input.size == 0 || input.batch_size == 0 {
        return Err(bad(
            "size",
            "record and batch sizes must be at least 1 byte",
        ));
    }
    if input.partitions == 0 || input.brokers == 0 {
        return Err(bad(
            "partitions",
            "partitions and brokers must be at least 1",
        ));
    }
    if !input.rate.is_finite() || input.rate <= 0.0 {
        return Err(bad(
            "rate",
            "must be a positive number of records per second",
        ));
    }
    if !input.sticky_linger_ms.is_finite() || input.sticky_linger_ms < 0.0 {
        return Err(bad(
            "sticky.partitioning.linger.ms",
            "must be zero or positive",
        ));
    }
    if !input.linger_ms.is_finite() || input.linger_ms < 0.0 {
        return Err(bad("linger.ms", "must be zero or positive"));
    }
    let n = input.partitions as usize;
    let linger = input.linger_ms / 1000.0;
    let mut open: Vec<Option<Open>> = (0..n).map(|_| None).collect();
    let mut sticky = StickyPartitioner::new(
        input.partitions,
        match strategy {
            Strategy::StickyBytes => StickyMode::Bytes(input.batch_size),
            Strategy::StickyLinger => StickyMode::Linger(input.sticky_linger_ms / 1000.0),
            _ => StickyMode::NewBatch,
        },
        input.seed,
    );
    let (mut batches, mut requests, mut records_sent, mut bytes_sent) = (0u64, 0u64, 0u64, 0u64);
    let mut rr = 0u32;
    // The earliest linger expiry among open batches, so that most records skip
    // the scan below.
    let mut next_expiry = f64::INFINITY;

    // Sends every open batch on `broker`'s partitions: one request.
    let mut drain = |open: &mut Vec<Option<Open>>, broker: u32, sticky: &mut StickyPartitioner| {
        let mut any = false;
        for p in (broker as usize..n).step_by(input.brokers as usize) {
            if let Some(b) = open[p].take() {
                batches += 1;
                records_sent += b.records;
                bytes_sent += b.bytes;
                any = true;
                sticky.on_new_batch(p as u32);
            }
        }
        requests += u64::from(any);
    };

    for i in 0..input.messages {
        let t = i as f64 / input.rate;
        // Batches whose linger expired before this record: their brokers send.
        if t >= next_expiry {
            loop {
                let expired =
                    (0..n).find(|&p| open[p].as_ref().is_some_and(|b| b.created + linger <= t));
                match expired {
                    Some(p) => drain(&mut open, (p as u32) % input.brokers, &mut sticky),
                    None => break,
                }
            }
            next_expiry = open
                .iter()
                .flatten()
                .map(|b| b.created + linger)
                .fold(f64::INFINITY, f64::min);
        }
        let p = match strategy {
            Strategy::RoundRobin => {
                rr = (rr + 1) % input.partitions;
                rr as usize
            }
            _ => sticky.partition_at(t, input.size) as usize,
        };
        // A record that does not fit closes the batch: it is ready at once.
        if open[p]
            .as_ref()
            .is_some_and(|b| b.bytes + input.size > input.batch_size)
        {
            drain(&mut open, (p as u32) % input.brokers, &mut sticky);
        }
        let p = match strategy {
            // KIP-480 may have moved on when the batch closed.
            Strategy::Sticky => sticky.partition(0) as usize,
            _ => p,
        };
        let b = open[p].get_or_insert_with(|| {
            next_expiry = next_expiry.min(t + linger);
            Open {
                bytes: 0,
                records: 0,
                created: t,
            }
        });
        b.bytes += input.size;
        b.records += 1;
    }
    for broker in 0..input.brokers {
        drain(&mut open, broker, &mut sticky);
    }
    let mean_records = records_sent as f64 / batches as f64;
    Ok(BatchingReport {
        strategy,
        batches,
        requests,
        mean_records_per_batch: mean_records,
        mean_fill: bytes_sent as f64 / batches as f64 / input.batch_size as f64,
        compression_ratio: compression_ratio(
            mean_records.round().max(1.0) as usize,
            input.size as usize,
        ),
    })
}

/// Compressed over raw size of one batch of `records` records of `size` bytes
/// of JSON-like ticks (repetitive field names, varying numbers), with DEFLATE.
/// Larger batches share more context, which is the seed's claim about sticky
/// batching and compression.
pub fn compression_ratio(records: usize, size: usize) -> f64 {
    use std::io::Write;
    let symbols = [
        "BBCA", "ANTM", "ASII", "UNVR", "TLKM", "BBRI", "BMRI", "GOTO", "ADRO", "ICBP",
    ];
    let mut raw = Vec::with_capacity(records * size);
    let mut x = 0x9e37_79b9_u64;
    for i in 0..records.min(20_000) {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut rec = format!(
            "{{\"symbol\":\"{}\",\"price\":{},\"volume\":{},\"ts\":{}}}",
            symbols[(x >> 60) as usize % symbols.len()],
            9000 + (x >> 40) % 500,
            (x >> 20) % 100_000,
            1_700_000_000_000u64 + i as u64
        )
        .into_bytes();
        rec.resize(size, b' ');
        raw.extend_from_slice(&rec);
    }
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&raw).expect("writing to memory");
    let compressed = enc.finish().expect("writing to memory");
    compressed.len() as f64 / raw.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> BatchingInput {
        BatchingInput {
            messages: 50_000,
            size: 100,
            partitions: 12,
            brokers: 3,
            batch_size: 16384,
            linger_ms: 5.0,
            rate: 20_000.0,
            sticky_linger_ms: 10.0,
            seed: 42,
        }
    }

    #[test]
    fn sticky_beats_round_robin_on_batching() {
        let rr = simulate(&input(), Strategy::RoundRobin).unwrap();
        let st = simulate(&input(), Strategy::Sticky).unwrap();
        let sb = simulate(&input(), Strategy::StickyBytes).unwrap();
        let sl = simulate(&input(), Strategy::StickyLinger).unwrap();
        assert!(sl.batches < rr.batches, "{sl:?} vs {rr:?}");
        // Every record is sent exactly once.
        for r in [&rr, &st, &sb, &sl] {
            assert!((r.mean_records_per_batch * r.batches as f64 - 50_000.0).abs() < 1e-6);
        }
        assert!(st.batches < rr.batches, "{st:?} vs {rr:?}");
        assert!(st.mean_fill > rr.mean_fill);
        assert!(st.requests <= rr.requests);
        assert!(st.compression_ratio < rr.compression_ratio);
        assert!(sb.batches < rr.batches);
    }

    #[test]
    fn sticky_never_repeats_a_partition() {
        let mut s = StickyPartitioner::new(4, StickyMode::NewBatch, 9);
        let mut last = s.partition(10);
        for _ in 0..1000 {
            s.on_new_batch(last);
            let p = s.partition(10);
            assert_ne!(p, last);
            last = p;
        }
        let mut one = StickyPartitioner::new(1, StickyMode::Bytes(10), 1);
        assert!((0..50).all(|_| one.partition(7) == 0));
    }

    #[test]
    fn bad_input() {
        let mut i = input();
        i.messages = 0;
        assert!(simulate(&i, Strategy::Sticky).is_err());
        let mut i = input();
        i.rate = -1.0;
        assert!(simulate(&i, Strategy::Sticky).is_err());
        let mut i = input();
        i.partitions = 0;
        assert!(simulate(&i, Strategy::Sticky).is_err());
    }
}
