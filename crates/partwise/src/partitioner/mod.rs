//! The key-to-partition functions of every major Kafka client, addressed by spec.
//!
//! A spec is `CLIENT[:NAME]`, where NAME is the client's own name for the
//! partitioner (`librdkafka:murmur2_random`, `sarama:reference-hash`). `CLIENT`
//! alone means the client's default. Matching ignores case and treats `_` and `-`
//! alike, but [`Partitioner::spec`] always prints the canonical form.
//!
//! # Masking, not `abs`
//!
//! The Java client computes `murmur2(key) & 0x7fffffff` (`Utils.toPositive`), then
//! `% n`. Articles, including partwise's own seed text, often write
//! `abs(murmur2(key)) % n`: the two differ for every key whose hash is negative
//! (`BBCA` hashes to -907233518: masking gives partition 0 of 6, `abs` gives 2).
//! partwise implements what the clients do. Only Sarama's `NewHashPartitioner`,
//! kafka-go's `Hash` and librdkafka's `fnv1a` take an absolute value, and they
//! take it of FNV-1a, not murmur2.
//!
//! # Keys that do not pick a partition
//!
//! A record without a key (null) is placed by a stateful strategy in most clients:
//! sticky batches, random choice or round-robin. Some partitioners also ignore the
//! key altogether, or treat an empty key like a null one. partwise reports these
//! as [`Placement::Sticky`], [`Placement::Random`] or [`Placement::RoundRobin`]
//! instead of inventing a number.
//!
//! ```
//! use partwise::{Partitioner, PartitionCount, Placement};
//! let java: Partitioner = "java".parse().unwrap();
//! let six = PartitionCount::new(6).unwrap();
//! assert_eq!(java.place(Some(b"BBCA"), six), Placement::Partition(0));
//! assert_eq!(java.place(Some(b"BBCA"), PartitionCount::new(8).unwrap()), Placement::Partition(2));
//! assert_eq!(java.place(None, six), Placement::Sticky);
//!
//! let rdk: Partitioner = "librdkafka".parse().unwrap();
//! assert_eq!(rdk.spec(), "librdkafka:consistent_random");
//! assert_eq!(rdk.place(Some(b""), six), Placement::Sticky);
//! ```

pub mod bulk;
pub mod compare;
mod landing;
pub mod priority;
mod table;

use crate::count::PartitionCount;
use crate::hash;
pub use crate::partitioner::landing::Placement;
use crate::partitioner::priority::{Priority, RestHash};
use crate::Error;
use std::fmt;
use std::str::FromStr;
use table::TABLE;

/// Which hash a partitioner applies to the key bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HashFn {
    /// Kafka's murmur2 ([`hash::murmur2`]).
    Murmur2,
    /// KafkaJS 1.x's float-mangled murmur2 ([`hash::kafkajs_legacy_murmur2`]).
    KafkajsLegacyMurmur2,
    /// 32-bit FNV-1a ([`hash::fnv1a32`]).
    Fnv1a,
    /// CRC-32 IEEE ([`hash::crc32`]).
    Crc32,
}

impl HashFn {
    /// The 32-bit hash of `key`.
    #[inline]
    pub fn hash(self, key: &[u8]) -> u32 {
        match self {
            HashFn::Murmur2 => hash::murmur2(key),
            HashFn::KafkajsLegacyMurmur2 => hash::kafkajs_legacy_murmur2(key) as u32,
            HashFn::Fnv1a => hash::fnv1a32(key),
            HashFn::Crc32 => hash::crc32(key),
        }
    }
}

/// How a partitioner turns a 32-bit hash into a partition of `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduce {
    /// `(h & 0x7fffffff) % n`: Java's `toPositive`, and every murmur2 client.
    Mask,
    /// `|h as i32| % n`, with `|i32::MIN| = 2^31`: Sarama's `NewHashPartitioner`,
    /// kafka-go's `Hash`, librdkafka's `fnv1a`.
    Abs,
    /// `h % n` on the unsigned hash: librdkafka's `consistent`, Sarama's
    /// consistent-CRC, franz-go's `SaramaHasher` on 64-bit platforms.
    Unsigned,
}

impl Reduce {
    /// The partition for hash `h`.
    #[inline(always)]
    pub fn apply(self, h: u32, n: PartitionCount) -> u32 {
        match self {
            Reduce::Mask => n.modulo(h & 0x7fff_ffff),
            Reduce::Abs => n.modulo((h as i32).unsigned_abs()),
            Reduce::Unsigned => n.modulo(h),
        }
    }
}

/// What a partitioner does with a record that has a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyRule {
    /// Hash the key bytes, then reduce.
    Hash(HashFn, Reduce),
    /// Ignore the key.
    Ignore(Placement),
}

/// What a partitioner does with a null key, or an empty one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keyless {
    /// Hash zero bytes, exactly as an empty key (librdkafka's `murmur2`, `fnv1a`
    /// and `consistent`, kafka-go's consistent balancers).
    AsEmpty,
    /// A key-independent placement.
    Place(Placement),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Builtin {
    JavaDefault,
    JavaRoundRobin,
    LibrdkafkaConsistentRandom,
    LibrdkafkaConsistent,
    LibrdkafkaMurmur2,
    LibrdkafkaMurmur2Random,
    LibrdkafkaFnv1a,
    LibrdkafkaFnv1aRandom,
    LibrdkafkaRandom,
    KafkaPython,
    Aiokafka,
    KafkajsDefault,
    KafkajsLegacy,
    SaramaHash,
    SaramaReferenceHash,
    SaramaConsistentCrc,
    SaramaMurmur2,
    KafkaGoRoundRobin,
    KafkaGoHash,
    KafkaGoReferenceHash,
    KafkaGoCrc32,
    KafkaGoCrc32Consistent,
    KafkaGoMurmur2,
    KafkaGoMurmur2Consistent,
    FranzGo,
    FranzGoSaramaCompat,
    FranzGoSaramaHasher,
    Platformatic,
    PlatformaticCompatibility,
    ConfluentKafkaJavascript,
}

struct Info {
    builtin: Builtin,
    spec: &'static str,
    aliases: &'static [&'static str],
    key: KeyRule,
    null_key: Keyless,
    /// Whether an empty (zero-byte, non-null) key is placed like a null key.
    empty_as_null: bool,
    about: &'static str,
    /// How a producer of the client selects it, in the client's own words.
    setting: &'static str,
    /// The first client release that has the setting, when not every
    /// release does (`Sarama 1.50.0`).
    since: Option<&'static str>,
    /// What releases before `since` call it, when they have it by another name.
    older: Option<&'static str>,
}

use Builtin as B;
use HashFn::Murmur2;
use Placement::Sticky;
use Reduce::{Abs, Mask};

const MURMUR2: KeyRule = KeyRule::Hash(Murmur2, Mask);

/// A partitioner: a real client's, chosen by spec, or a priority-isolation
/// partitioner ([`crate::partitioner::priority`]).
#[derive(Clone, Copy)]
pub struct Partitioner {
    kind: Kind,
}

#[derive(Clone, Copy)]
enum Kind {
    Builtin(Builtin),
    Priority(&'static Priority),
}

impl PartialEq for Partitioner {
    fn eq(&self, other: &Partitioner) -> bool {
        self.spec() == other.spec()
    }
}

impl Eq for Partitioner {}

impl std::hash::Hash for Partitioner {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.spec().hash(state)
    }
}

const PRIORITY_INFO: Info = Info {
    builtin: B::JavaDefault,
    spec: "priority",
    aliases: &[],
    key: MURMUR2,
    null_key: Keyless::Place(Sticky),
    empty_as_null: false,
    about: "priority isolation: matching records go to reserved partitions, the rest are hashed (murmur2) over the others",
    setting: "",
    since: None,
    older: None,
};

impl Partitioner {
    #[inline(always)]
    fn info(self) -> &'static Info {
        match self.kind {
            // TABLE is in the order of `Builtin` (checked by a test).
            Kind::Builtin(b) => &TABLE[b as usize],
            Kind::Priority(_) => &PRIORITY_INFO,
        }
    }

    /// Every client partitioner partwise knows, in a stable order (the
    /// client's default first). Priority partitioners need parameters and are
    /// not listed.
    pub fn all() -> impl Iterator<Item = Partitioner> {
        TABLE.iter().map(|i| Partitioner {
            kind: Kind::Builtin(i.builtin),
        })
    }

    /// The canonical spec, e.g. `librdkafka:consistent_random`.
    pub fn spec(self) -> &'static str {
        match self.kind {
            Kind::Builtin(b) => TABLE[b as usize].spec,
            Kind::Priority(p) => p.spec(),
        }
    }

    /// The priority rules, when this is a priority-isolation partitioner.
    pub fn priority(self) -> Option<&'static Priority> {
        match self.kind {
            Kind::Priority(p) => Some(p),
            Kind::Builtin(_) => None,
        }
    }

    /// Other spellings that parse to this partitioner.
    pub fn aliases(self) -> &'static [&'static str] {
        self.info().aliases
    }

    /// The client this partitioner belongs to (`java`, `librdkafka`, ...).
    pub fn client(self) -> &'static str {
        let spec = self.spec();
        spec.split_once(':').map_or(spec, |(c, _)| c)
    }

    /// How a producer of its client selects this partitioner, in the
    /// client's own terms (a property, a constructor, or "the default").
    /// A priority partitioner has no client setting: its spec.
    pub fn setting(self) -> String {
        match self.kind {
            Kind::Builtin(_) => self.info().setting.to_string(),
            Kind::Priority(p) => p.spec().to_string(),
        }
    }

    /// The first release of its client that has [`Partitioner::setting`]
    /// (`Sarama 1.50.0`), when not every release does.
    pub fn since(self) -> Option<&'static str> {
        match self.kind {
            Kind::Builtin(_) => self.info().since,
            Kind::Priority(_) => None,
        }
    }

    /// The setting with the release that has it, as every fix that changes
    /// a producer's partitioner prints it:
    /// `Producer.Partitioner = sarama.NewMurmur2Partitioner (Sarama 1.50.0 or
    /// later)`, with what older releases call it where they have it.
    ///
    /// ```
    /// let p: partwise::Partitioner = "sarama:murmur2".parse().unwrap();
    /// assert_eq!(
    ///     p.setting_and_version(),
    ///     "Producer.Partitioner = sarama.NewMurmur2Partitioner (Sarama 1.50.0 or later)"
    /// );
    /// ```
    pub fn setting_and_version(self) -> String {
        let setting = self.setting();
        let Kind::Builtin(_) = self.kind else {
            return setting;
        };
        let info = self.info();
        match (info.since, info.older) {
            (Some(v), Some(o)) => format!("{setting} ({v} or later, or {o})"),
            (Some(v), None) => format!("{setting} ({v} or later)"),
            (None, _) => setting,
        }
    }

    /// The partitioners of `client` that put every non-empty key where this
    /// one does, those that also treat null and empty keys alike first.
    pub fn compatible_in(self, client: &str) -> Vec<Partitioner> {
        let KeyRule::Hash(..) = self.key_rule() else {
            return Vec::new();
        };
        let mut out: Vec<Partitioner> = Partitioner::all()
            .filter(|p| p.client() == client && p.key_rule() == self.key_rule())
            .collect();
        let n = PartitionCount::new(12).expect("12 is a partition count");
        out.sort_by_key(|p| {
            // Fixed or spread: which key-less strategy spreads them matters less.
            let null =
                p.place(None, n).partition().is_some() != self.place(None, n).partition().is_some();
            let empty = p.place(Some(b""), n) != self.place(Some(b""), n);
            (empty, null)
        });
        out
    }

    /// One line on what the partitioner does.
    pub fn about(self) -> &'static str {
        self.info().about
    }

    /// What the partitioner does with a record that has a (non-empty) key.
    /// For a priority partitioner: the rule for keys that match no rule
    /// (murmur2, masked or `Math.abs`).
    pub fn key_rule(self) -> KeyRule {
        match self.kind {
            Kind::Priority(p) if p.rest_hash() == RestHash::JavaAbs => KeyRule::Hash(Murmur2, Abs),
            _ => self.info().key,
        }
    }

    /// Where a record goes: `key` is `None` for a null key.
    ///
    /// Keyed records are hashed over all `n` partitions, available or not, as
    /// every client does; only key-less strategies look at availability.
    #[inline]
    pub fn place(self, key: Option<&[u8]>, n: PartitionCount) -> Placement {
        self.place_with_headers(key, &[], n)
    }

    /// Where a record with these headers goes. Only priority partitioners
    /// look at headers; client partitioners ignore them.
    #[inline]
    pub fn place_with_headers(
        self,
        key: Option<&[u8]>,
        headers: &[(&[u8], &[u8])],
        n: PartitionCount,
    ) -> Placement {
        if let Kind::Priority(p) = self.kind {
            return p.place(key, headers, n);
        }
        let info = self.info();
        let key = match key {
            Some(k) if !(k.is_empty() && info.empty_as_null) => k,
            _ => match info.null_key {
                Keyless::AsEmpty => &[],
                Keyless::Place(p) => return p,
            },
        };
        match info.key {
            KeyRule::Hash(h, r) => Placement::Partition(r.apply(h.hash(key), n)),
            KeyRule::Ignore(p) => p,
        }
    }

    /// The placement of a record with a null key.
    pub fn null_key(self, n: PartitionCount) -> Placement {
        self.place(None, n)
    }

    /// Places a batch of keys, writing the partition of `keys[i]` to `out[i]`,
    /// or [`NOT_FIXED`] where the placement is not a fixed partition.
    ///
    /// This is the fast path for many keys: murmur2 partitioners hash several
    /// keys at once (with AVX2 where the CPU has it).
    ///
    /// # Panics
    /// When `out` is shorter than `keys`.
    pub fn place_batch(self, keys: &[&[u8]], n: PartitionCount, out: &mut [u32]) {
        let info = self.info();
        assert!(out.len() >= keys.len(), "output shorter than input");
        let out = &mut out[..keys.len()];
        if info.key == MURMUR2 && self.priority().is_none() {
            crate::partitioner::bulk::murmur2_partitions(keys, n, out);
            // Only the empty key can need fixing up: murmur2 partitioners hash it.
            debug_assert!(!info.empty_as_null);
            return;
        }
        for (k, o) in keys.iter().zip(out.iter_mut()) {
            *o = self.place(Some(k), n).partition().unwrap_or(NOT_FIXED);
        }
    }
}

/// The value [`Partitioner::place_batch`] writes for a key whose placement is
/// not a fixed partition (no valid partition id is this large).
pub const NOT_FIXED: u32 = u32::MAX;

impl fmt::Debug for Partitioner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Partitioner({})", self.spec())
    }
}

impl fmt::Display for Partitioner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.spec())
    }
}

fn normalize(s: &str) -> String {
    s.trim().to_ascii_lowercase().replace('_', "-")
}

impl FromStr for Partitioner {
    type Err = Error;

    fn from_str(s: &str) -> Result<Partitioner, Error> {
        if let Some(body) = s.trim().strip_prefix("priority:") {
            return Ok(Partitioner {
                kind: Kind::Priority(crate::partitioner::priority::intern(s, body)?),
            });
        }
        let want = normalize(s);
        TABLE
            .iter()
            .find(|i| normalize(i.spec) == want || i.aliases.iter().any(|a| normalize(a) == want))
            .map(|i| Partitioner {
                kind: Kind::Builtin(i.builtin),
            })
            .ok_or_else(|| Error::UnknownPartitioner {
                spec: s.to_string(),
                known: TABLE.iter().map(|i| i.spec).collect::<Vec<_>>().join(", "),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(x: u32) -> PartitionCount {
        PartitionCount::new(x).unwrap()
    }

    #[test]
    fn seed_facts() {
        let java: Partitioner = "java".parse().unwrap();
        assert_eq!(java.place(Some(b"BBCA"), n(6)), Placement::Partition(0));
        assert_eq!(java.place(Some(b"BBCA"), n(8)), Placement::Partition(2));
        // The seed's abs() formula would give 2 of 6: the mask is what Java does.
        let h = hash::murmur2(b"BBCA") as i32;
        assert!(h < 0);
        assert_eq!(h.unsigned_abs() % 6, 2);
    }

    #[test]
    fn specs_parse_and_roundtrip() {
        for p in Partitioner::all() {
            assert_eq!(p.spec().parse::<Partitioner>().unwrap(), p);
            for a in p.aliases() {
                assert_eq!(a.parse::<Partitioner>().unwrap(), p, "{a}");
            }
        }
        assert_eq!(
            "LIBRDKAFKA:Murmur2-Random"
                .parse::<Partitioner>()
                .unwrap()
                .spec(),
            "librdkafka:murmur2_random"
        );
        let err = "java:nope".parse::<Partitioner>().unwrap_err().to_string();
        assert!(
            err.contains("java:nope") && err.contains("librdkafka:murmur2"),
            "{err}"
        );
    }

    #[test]
    fn table_is_in_builtin_order() {
        for (i, row) in TABLE.iter().enumerate() {
            assert_eq!(row.builtin as usize, i, "{}", row.spec);
        }
    }

    #[test]
    fn specs_and_aliases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for i in TABLE {
            assert!(seen.insert(normalize(i.spec)), "{}", i.spec);
            for a in i.aliases {
                assert!(seen.insert(normalize(a)), "{a}");
            }
        }
    }

    #[test]
    fn null_and_empty_keys() {
        let p = |s: &str| s.parse::<Partitioner>().unwrap();
        assert_eq!(
            p("librdkafka:consistent").null_key(n(12)),
            Placement::Partition(0)
        );
        assert_eq!(
            p("librdkafka:murmur2").null_key(n(12)),
            Placement::Partition(0x106e_08d9 % 12)
        );
        assert_eq!(
            p("librdkafka:fnv1a").null_key(n(12)),
            Placement::Partition(0x7ee3_623b % 12)
        );
        assert_eq!(p("librdkafka").place(Some(b""), n(12)), Placement::Sticky);
        assert_eq!(
            p("kafka-go:crc32").place(Some(b""), n(12)),
            Placement::Random
        );
        assert_eq!(p("java").place(Some(b""), n(12)), Placement::Partition(9));
        assert_eq!(p("kafkajs").null_key(n(12)), Placement::RoundRobin);
        assert_eq!(
            p("kafka-go").place(Some(b"x"), n(12)),
            Placement::RoundRobin
        );
    }

    #[test]
    fn every_setting_is_in_its_clients_words_with_the_release_that_has_it() {
        let p = |s: &str| s.parse::<Partitioner>().unwrap();
        assert_eq!(
            p("sarama:murmur2").setting_and_version(),
            "Producer.Partitioner = sarama.NewMurmur2Partitioner (Sarama 1.50.0 or later)"
        );
        assert_eq!(p("sarama:consistent-crc").since(), Some("Sarama 1.41.0"));
        assert_eq!(p("sarama:reference-hash").since(), Some("Sarama 1.18.0"));
        assert_eq!(p("sarama").since(), None);
        assert!(p("kafkajs")
            .setting_and_version()
            .contains("(KafkaJS 2.0.0 or later, or createPartitioner: Partitioners.JavaCompatiblePartitioner in KafkaJS 1.8.0 to 1.16.0)"));
        for q in Partitioner::all() {
            let s = q.setting();
            // A setting is the client's, never partwise's spec.
            assert!(!s.is_empty() && s != q.spec(), "{}", q.spec());
            assert!(!s.contains(q.spec()) || !q.spec().contains(':'), "{s}");
            if let Some(v) = q.since() {
                // The release names the client and a dotted version.
                let (client, version) = v.rsplit_once(' ').unwrap();
                assert!(!client.is_empty(), "{v}");
                assert_eq!(version.split('.').count(), 3, "{v}");
                assert!(version.split('.').all(|d| d.parse::<u32>().is_ok()), "{v}");
                assert!(q.setting_and_version().contains(&format!("({v} or later")));
            }
        }
    }

    #[test]
    fn abs_handles_int_min() {
        // fnv1a("1468509572224") == 0x80000000 (Sarama's TestHashPartitionerMinInt32).
        let sarama: Partitioner = "sarama".parse().unwrap();
        let reference: Partitioner = "sarama:reference-hash".parse().unwrap();
        assert_eq!(
            sarama.place(Some(b"1468509572224"), n(12)),
            Placement::Partition(8)
        );
        assert_eq!(
            reference.place(Some(b"1468509572224"), n(12)),
            Placement::Partition(0)
        );
    }
}
