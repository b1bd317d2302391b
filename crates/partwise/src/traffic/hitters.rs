//! Heavy hitters: the keys that carry most of a window of records, by
//! records and by bytes, per partition and overall.
//!
//! A [`KeyTally`] is fed the records of a window (the newest records of a
//! topic, or any other) one by one; [`KeyTally::finish`] ranks the keys. The
//! tally holds one entry per distinct (partition, key) it was fed, so its
//! memory is bounded by the window the caller reads, never by the topic.
//! The same tally gives the window's `KEY,COUNT` lines ([`KeyTally::counts`]),
//! the weights every `--counts` analysis takes.

use serde::Serialize;
use std::collections::HashMap;

/// What a key carried in the window (or in one partition of it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Load {
    records: u64,
    bytes: u64,
}

impl Load {
    fn add(&mut self, bytes: u64) {
        self.records += 1;
        self.bytes = self.bytes.saturating_add(bytes);
    }
}

/// A partition's whole load and each of its keys'.
type PartLoads<'a> = (Load, Vec<(&'a [u8], Load)>);

/// Counts records and bytes per key and partition.
#[derive(Clone, Debug, Default)]
pub struct KeyTally {
    loads: HashMap<(u32, Vec<u8>), Load>,
    keyless: Load,
    total: Load,
    /// Records of keys first seen once [`MAX_KEYS`] were held.
    untracked: Load,
}

/// Distinct (partition, key) pairs a tally holds; records of further keys
/// are counted in the totals only ([`HeavyHitters::untracked`]).
pub const MAX_KEYS: usize = 1 << 20;

/// One key of a ranking.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hitter {
    /// The key's bytes as stored (UTF-8 text in JSON, `null` when it is not).
    #[serde(serialize_with = "crate::ser::key_text")]
    pub key: Vec<u8>,
    /// The same bytes in hex, so that any key can be told apart.
    #[serde(rename = "key_hex", serialize_with = "crate::ser::key_hex")]
    pub key_bytes: Vec<u8>,
    /// Its records in the scope (the partition, or the window).
    pub records: u64,
    /// Its records' key and value bytes in the scope.
    pub bytes: u64,
    /// `records` over the scope's records.
    pub record_share: f64,
    /// `bytes` over the scope's bytes.
    pub byte_share: f64,
}

/// The heaviest keys of one partition.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionHitters {
    /// The partition.
    pub partition: u32,
    /// Records of the window in it.
    pub records: u64,
    /// Their key and value bytes.
    pub bytes: u64,
    /// The keys that carry the most records, most first.
    pub by_records: Vec<Hitter>,
    /// The keys that carry the most bytes, most first.
    pub by_bytes: Vec<Hitter>,
}

/// The heavy hitters of a window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HeavyHitters {
    /// Records tallied (keyless ones included).
    pub records: u64,
    /// Their key and value bytes.
    pub bytes: u64,
    /// Records without a key (no key is their hitter).
    pub keyless: u64,
    /// Distinct keys.
    pub distinct_keys: usize,
    /// Keyed records left out of the rankings and counts because the tally
    /// already held [`MAX_KEYS`] keys.
    pub untracked: u64,
    /// Over the window, the keys that carry the most records, most first.
    pub by_records: Vec<Hitter>,
    /// Over the window, the keys that carry the most bytes, most first.
    pub by_bytes: Vec<Hitter>,
    /// Per partition with records, by partition id.
    pub partitions: Vec<PartitionHitters>,
}

impl HeavyHitters {
    /// The heaviest key of the window by records, when it has one.
    pub fn top(&self) -> Option<&Hitter> {
        self.by_records.first()
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// The `top` keys of `loads` by `by`, ties by key bytes so the ranking
/// does not depend on hashing order.
fn rank(loads: &[(&[u8], Load)], whole: Load, top: usize, by: fn(&Load) -> u64) -> Vec<Hitter> {
    let mut v: Vec<&(&[u8], Load)> = loads.iter().collect();
    v.sort_by(|a, b| by(&b.1).cmp(&by(&a.1)).then_with(|| a.0.cmp(b.0)));
    v.into_iter()
        .take(top)
        .map(|(k, l)| Hitter {
            key: k.to_vec(),
            key_bytes: k.to_vec(),
            records: l.records,
            bytes: l.bytes,
            record_share: share(l.records, whole.records),
            byte_share: share(l.bytes, whole.bytes),
        })
        .collect()
}

impl KeyTally {
    /// An empty tally.
    pub fn new() -> KeyTally {
        KeyTally::default()
    }

    /// One record of `partition` with `key` (`None`: keyless) and
    /// `value_len` value bytes.
    pub fn add(&mut self, partition: u32, key: Option<&[u8]>, value_len: usize) {
        let bytes = (key.map_or(0, <[u8]>::len) + value_len) as u64;
        self.total.add(bytes);
        match key {
            None => self.keyless.add(bytes),
            Some(k) => {
                if self.loads.len() >= MAX_KEYS
                    && !self.loads.contains_key(&(partition, k.to_vec()))
                {
                    self.untracked.add(bytes);
                } else {
                    self.loads
                        .entry((partition, k.to_vec()))
                        .or_default()
                        .add(bytes);
                }
            }
        }
    }

    /// Records tallied.
    pub fn records(&self) -> u64 {
        self.total.records
    }

    /// Every key with its records over all partitions, most first (ties by
    /// key bytes): the window's `KEY,COUNT` weights.
    pub fn counts(&self) -> Vec<(Vec<u8>, u64)> {
        let mut by_key: HashMap<&[u8], u64> = HashMap::new();
        for ((_, k), l) in &self.loads {
            *by_key.entry(k.as_slice()).or_default() += l.records;
        }
        let mut v: Vec<(Vec<u8>, u64)> = by_key.into_iter().map(|(k, c)| (k.to_vec(), c)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    }

    /// The `top` heaviest keys overall and per partition.
    pub fn finish(&self, top: usize) -> HeavyHitters {
        let mut by_key: HashMap<&[u8], Load> = HashMap::new();
        let mut by_part: HashMap<u32, PartLoads<'_>> = HashMap::new();
        for ((p, k), l) in &self.loads {
            let e = by_key.entry(k.as_slice()).or_default();
            e.records += l.records;
            e.bytes = e.bytes.saturating_add(l.bytes);
            let pe = by_part.entry(*p).or_default();
            pe.0.records += l.records;
            pe.0.bytes = pe.0.bytes.saturating_add(l.bytes);
            pe.1.push((k.as_slice(), *l));
        }
        let keyed: Vec<(&[u8], Load)> = by_key.into_iter().collect();
        let mut partitions: Vec<PartitionHitters> = by_part
            .into_iter()
            .map(|(partition, (whole, loads))| PartitionHitters {
                partition,
                records: whole.records,
                bytes: whole.bytes,
                by_records: rank(&loads, whole, top, |l| l.records),
                by_bytes: rank(&loads, whole, top, |l| l.bytes),
            })
            .collect();
        partitions.sort_by_key(|p| p.partition);
        HeavyHitters {
            records: self.total.records,
            bytes: self.total.bytes,
            keyless: self.keyless.records,
            distinct_keys: keyed.len(),
            untracked: self.untracked.records,
            by_records: rank(&keyed, self.total, top, |l| l.records),
            by_bytes: rank(&keyed, self.total, top, |l| l.bytes),
            partitions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_by_records_and_by_bytes_apart() {
        let mut t = KeyTally::new();
        for _ in 0..6 {
            t.add(0, Some(b"many"), 1);
        }
        t.add(1, Some(b"big"), 1000);
        t.add(1, Some(b"many"), 1);
        t.add(2, None, 10);
        let h = t.finish(5);
        assert_eq!((h.records, h.keyless, h.distinct_keys), (9, 1, 2));
        assert_eq!(h.top().unwrap().key, b"many");
        assert_eq!(h.top().unwrap().records, 7);
        assert!((h.top().unwrap().record_share - 7.0 / 9.0).abs() < 1e-12);
        assert_eq!(h.by_bytes[0].key, b"big");
        assert_eq!(h.partitions.len(), 2, "the keyless partition has no hitter");
        assert_eq!(h.partitions[1].by_records[0].key, b"big");
        assert_eq!(h.partitions[1].by_records[0].records, 1);
        assert_eq!(
            t.counts(),
            vec![(b"many".to_vec(), 7), (b"big".to_vec(), 1)]
        );
        let j = serde_json::to_value(&h.by_bytes[0]).unwrap();
        assert_eq!(j["key"], "big");
        assert_eq!(j["key_hex"], "626967");
    }

    #[test]
    fn ties_rank_by_key_and_a_binary_key_has_no_text() {
        let mut t = KeyTally::new();
        t.add(0, Some(b"b"), 0);
        t.add(0, Some(&[0xff]), 0);
        t.add(0, Some(b"a"), 0);
        let h = t.finish(2);
        let keys: Vec<&[u8]> = h.by_records.iter().map(|x| x.key.as_slice()).collect();
        assert_eq!(keys, [&b"a"[..], &b"b"[..]]);
        let j = serde_json::to_value(KeyTally::new().finish(1)).unwrap();
        assert_eq!(j["records"], 0);
        let mut t = KeyTally::new();
        t.add(0, Some(&[0xff]), 0);
        let j = serde_json::to_value(&t.finish(1).by_records[0]).unwrap();
        assert!(j["key"].is_null());
        assert_eq!(j["key_hex"], "ff");
    }
}
