//! Partitioners compared over the same keys: how often each pair places a
//! key differently ([`Agreement`], the totals after `partwise route -P A -P
//! B`), and what a producer migration from one partitioner to another moves
//! ([`Migration`], `partwise route --from A --to B`): the keys, the known
//! partitioners that would move none, and the fix in the new client's terms.
//!
//! Two placements agree only on one fixed partition: a key two clients both
//! place at random lands apart as often as not.
//!
//! ```
//! use partwise::partitioner::compare::Migration;
//! use partwise::{PartitionCount, Partitioner};
//! let (java, rdk): (Partitioner, Partitioner) = ("java".parse()?, "librdkafka".parse()?);
//! let mut m = Migration::new(java, rdk, &[PartitionCount::new(12)?]);
//! for key in [&b"BBCA"[..], b"TLKM", b"ASII"] {
//!     m.add(key);
//! }
//! let r = m.finish();
//! assert!(r.moved[0] > 0);
//! assert_eq!(r.fix.unwrap().to_string(), "set partitioner=murmur2_random (librdkafka 0.11.4 or later) in the librdkafka producer (librdkafka:murmur2_random) and no key moves");
//! # Ok::<(), partwise::Error>(())
//! ```

use crate::partitioner::KeyRule;
use crate::{PartitionCount, Partitioner, Placement};
use std::fmt;

/// Whether two placements put a key on one fixed partition.
pub fn same(a: Placement, b: Placement) -> bool {
    a.partition().is_some() && a == b
}

/// Whether every placement puts the key on one fixed partition.
pub fn agree(ps: &[Placement]) -> bool {
    ps.iter().all(|p| p.partition().is_some() && *p == ps[0])
}

/// How often partitioners place a key differently, per partition count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agreement {
    /// Keys added.
    pub keys: u64,
    /// Every pair of partitioner indices `(a, b)`, `a < b`.
    pub pairs: Vec<(usize, usize)>,
    /// `differ[c][pair]`: keys that pair places differently at count `c`.
    pub differ: Vec<Vec<u64>>,
    /// `any[c]`: keys placed differently by at least two partitioners.
    pub any: Vec<u64>,
    partitioners: usize,
}

impl Agreement {
    /// Counters for `partitioners` partitioners at `counts` partition counts.
    pub fn new(partitioners: usize, counts: usize) -> Agreement {
        let pairs: Vec<(usize, usize)> = (0..partitioners)
            .flat_map(|a| (a + 1..partitioners).map(move |b| (a, b)))
            .collect();
        Agreement {
            keys: 0,
            differ: vec![vec![0; pairs.len()]; counts],
            any: vec![0; counts],
            pairs,
            partitioners,
        }
    }

    /// Adds one key: `placements[c][p]` is where partitioner `p` puts it at
    /// count `c`.
    pub fn add(&mut self, placements: &[Vec<Placement>]) {
        self.keys += 1;
        for (c, ps) in placements.iter().enumerate() {
            if !agree(ps) {
                self.any[c] += 1;
            }
            for (i, &(a, b)) in self.pairs.iter().enumerate() {
                if !same(ps[a], ps[b]) {
                    self.differ[c][i] += 1;
                }
            }
        }
    }

    /// Whether any key landed differently at any count.
    pub fn disagree(&self) -> bool {
        self.any.iter().any(|&n| n > 0)
    }

    /// Partitioners that place every key alike at count `c`, in the order
    /// given.
    pub fn groups(&self, c: usize) -> Vec<Vec<usize>> {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        'next: for p in 0..self.partitioners {
            for g in &mut groups {
                let pair = self.pairs.iter().position(|&x| x == (g[0], p));
                if pair.is_some_and(|i| self.differ[c][i] == 0) {
                    g.push(p);
                    continue 'next;
                }
            }
            groups.push(vec![p]);
        }
        groups
    }
}

/// Where one key goes at one count before and after a migration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The partition count.
    pub partitions: PartitionCount,
    /// Under the old partitioner.
    pub from: Placement,
    /// Under the new one.
    pub to: Placement,
    /// Whether new records of the key land elsewhere than old ones.
    pub moved: bool,
}

/// A producer migration from one partitioner to another, key by key.
#[derive(Clone, Debug)]
pub struct Migration {
    from: Partitioner,
    to: Partitioner,
    counts: Vec<PartitionCount>,
    /// Every known partitioner, tried against `from` so that the answer can
    /// name the ones that keep every key where it is.
    candidates: Vec<Partitioner>,
    keeps: Vec<bool>,
    /// Candidates with `from`'s key rule: they place every non-empty key
    /// where `from` does, so only empty keys need hashing for them (the
    /// twins of the default are most of the table, and hashing them for every
    /// key of a large input was most of the time).
    twins: Vec<bool>,
    keys: u64,
    moved: Vec<u64>,
    steps: Vec<Step>,
}

/// Whether `a` and `b` place every non-empty key alike by their key rules
/// alone (a priority partitioner also looks at which keys match its rules).
fn same_for_keys(a: Partitioner, b: Partitioner) -> bool {
    a.priority().is_none()
        && b.priority().is_none()
        && matches!(a.key_rule(), KeyRule::Hash(..))
        && a.key_rule() == b.key_rule()
}

impl Migration {
    /// A migration from `from` to `to` at each of `counts` (at least one).
    pub fn new(from: Partitioner, to: Partitioner, counts: &[PartitionCount]) -> Migration {
        let candidates: Vec<Partitioner> = Partitioner::all().collect();
        let twins = candidates.iter().map(|p| same_for_keys(from, *p)).collect();
        Migration {
            from,
            to,
            keeps: vec![true; candidates.len()],
            twins,
            candidates,
            counts: counts.to_vec(),
            keys: 0,
            moved: vec![0; counts.len()],
            steps: Vec::with_capacity(counts.len()),
        }
    }

    /// Adds one key; where it goes at each count, in the order given.
    pub fn add(&mut self, key: &[u8]) -> &[Step] {
        self.keys += 1;
        self.steps.clear();
        for (c, &n) in self.counts.iter().enumerate() {
            let (a, z) = (self.from.place(Some(key), n), self.to.place(Some(key), n));
            let moved = !same(a, z);
            if moved {
                self.moved[c] += 1;
            }
            for (k, p) in self.candidates.iter().enumerate() {
                if self.keeps[k]
                    && (!self.twins[k] || key.is_empty())
                    && !same(a, p.place(Some(key), n))
                {
                    self.keeps[k] = false;
                }
            }
            self.steps.push(Step {
                partitions: n,
                from: a,
                to: z,
                moved,
            });
        }
        &self.steps
    }

    /// What the keys added say.
    pub fn finish(self) -> MigrationReport {
        let keys = self.keys;
        let move_nothing: Vec<Partitioner> = self
            .candidates
            .iter()
            .zip(&self.keeps)
            .filter(|(_, &k)| k && keys > 0)
            .map(|(p, _)| *p)
            .collect();
        // The same client's settings first: that is the change a team can
        // make; among them, the one that also treats null and empty keys as
        // `from` does (librdkafka's murmur2_random, not murmur2, matches Java
        // there).
        let (from, to, n) = (self.from, self.to, self.counts[0]);
        let edge_mismatch = |p: Partitioner| {
            let null =
                from.place(None, n).partition().is_some() != p.place(None, n).partition().is_some();
            let empty = !same(from.place(Some(b""), n), p.place(Some(b""), n));
            (null, empty)
        };
        let mut same_client: Vec<Partitioner> = move_nothing
            .iter()
            .filter(|p| p.client() == to.client())
            .copied()
            .collect();
        same_client.sort_by_key(|&p| edge_mismatch(p));
        let fix = match (self.moved.iter().any(|&m| m > 0), same_client.first()) {
            (false, _) => None,
            (true, Some(&p)) => Some(MigrationFix::Use { partitioner: p }),
            (true, None) => Some(MigrationFix::NoneKeeps { from, to }),
        };
        MigrationReport {
            keys,
            moved: self.moved,
            move_nothing,
            fix,
        }
    }
}

/// What a migration moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigrationReport {
    /// Keys added.
    pub keys: u64,
    /// Keys that move, per count.
    pub moved: Vec<u64>,
    /// Known partitioners that keep every key where the old one puts it
    /// (none when no key was added).
    pub move_nothing: Vec<Partitioner>,
    /// How to move nothing, when something moves.
    pub fix: Option<MigrationFix>,
}

/// How to migrate without moving keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrationFix {
    /// A partitioner of the new client that moves no key.
    Use {
        /// The partitioner.
        partitioner: Partitioner,
    },
    /// No partitioner of the new client keeps the keys.
    NoneKeeps {
        /// The old partitioner.
        from: Partitioner,
        /// The new one.
        to: Partitioner,
    },
}

impl fmt::Display for MigrationFix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            MigrationFix::Use { partitioner } => write!(
                f,
                "set {} in the {} producer ({}) and no key moves",
                partitioner.setting_and_version(),
                partitioner.client(),
                partitioner.spec()
            ),
            MigrationFix::NoneKeeps { from, to } => write!(
                f,
                "no {} partitioner keeps these keys where {} puts them: the keys that move lose their order and co-partitioning unless every producer and topic moves at once",
                to.client(),
                from.spec()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(spec: &str) -> Partitioner {
        spec.parse().unwrap()
    }

    #[test]
    fn pairs_and_groups() {
        let parts = [p("java"), p("sarama"), p("librdkafka:murmur2_random")];
        let n = PartitionCount::new(12).unwrap();
        let mut a = Agreement::new(parts.len(), 1);
        for i in 0..200 {
            let key = format!("key-{i}");
            a.add(&[parts
                .iter()
                .map(|q| q.place(Some(key.as_bytes()), n))
                .collect()]);
        }
        assert_eq!(a.pairs, [(0, 1), (0, 2), (1, 2)]);
        // Java and librdkafka's murmur2_random hash alike; Sarama does not.
        assert_eq!(a.differ[0][1], 0);
        assert!(a.differ[0][0] > 0 && a.disagree());
        assert_eq!(a.groups(0), vec![vec![0, 2], vec![1]]);
        assert!(!same(Placement::Sticky, Placement::Sticky));
        assert!(agree(&[Placement::Partition(3), Placement::Partition(3)]));
    }

    /// Skipping the hash for `from`'s twins changes no answer: the same
    /// keepers as hashing every candidate for every key, empty keys included.
    #[test]
    fn the_keepers_are_those_that_place_every_key_as_from_does() {
        let counts = [
            PartitionCount::new(6).unwrap(),
            PartitionCount::new(9).unwrap(),
        ];
        let mut keys: Vec<Vec<u8>> = (0..300).map(|i| format!("k{i}").into_bytes()).collect();
        for empty_too in [false, true] {
            if empty_too {
                keys.push(Vec::new());
            }
            for from in Partitioner::all() {
                let mut m = Migration::new(from, p("java"), &counts);
                for k in &keys {
                    m.add(k);
                }
                let fast = m.finish().move_nothing;
                let slow: Vec<Partitioner> = Partitioner::all()
                    .filter(|q| {
                        keys.iter().all(|k| {
                            counts
                                .iter()
                                .all(|&n| same(from.place(Some(k), n), q.place(Some(k), n)))
                        })
                    })
                    .collect();
                assert_eq!(fast, slow, "from {from:?}, empty key: {empty_too}");
            }
        }
    }

    #[test]
    fn a_migration_with_no_keeping_partitioner_says_so() {
        let n = [PartitionCount::new(7).unwrap()];
        let mut m = Migration::new(p("sarama"), p("java"), &n);
        let steps = m.add(b"BBCA").to_vec();
        assert_eq!(steps.len(), 1);
        for i in 0..100 {
            m.add(format!("k{i}").as_bytes());
        }
        let r = m.finish();
        assert_eq!(r.keys, 101);
        assert!(
            r.move_nothing.contains(&p("sarama")) && r.move_nothing.contains(&p("kafka-go:hash"))
        );
        assert!(r.move_nothing.iter().all(|q| q.client() != "java"));
        let fix = r.fix.unwrap().to_string();
        assert!(
            fix.starts_with("no java partitioner keeps these keys where sarama puts them"),
            "{fix}"
        );
        let none = Migration::new(p("java"), p("java"), &n).finish();
        assert_eq!((none.keys, none.fix, none.move_nothing.len()), (0, None, 0));
    }
}
