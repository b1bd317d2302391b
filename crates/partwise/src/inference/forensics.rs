//! What the records say beyond the best candidate: several partitioners
//! that explain a topic together ([`Mixture`]), split keys, switch points
//! per partition ([`Forensics`]), and the finding a mixture makes.

use super::*;

/// At most this many distinct placements (groups of equivalent candidates)
/// are followed record by record for [`Forensics`], one bit each; more (many
/// key formats times many priority specs) leave [`Routing::forensics`] out.
pub const FORENSICS_GROUPS: usize = 128;

/// At most this many keyed records (and [`KEY_BYTES_TRACKED`] bytes of their
/// keys) are noted for split keys and key shares; later ones are not
/// ([`Forensics::keys_capped`]).
pub const KEYS_TRACKED: usize = 1 << 21;

/// At most this many bytes of keys are noted (see [`KEYS_TRACKED`]).
pub const KEY_BYTES_TRACKED: usize = 64 << 20;

/// At most this many split keys are listed (all are counted).
pub const SPLIT_KEYS_KEPT: usize = 100;

/// Covers up to this many members are searched exhaustively, so a cover of
/// up to this size is the smallest there is; larger ones are found greedily.
pub const EXACT_COVER: usize = 3;

/// The forensics of a topic whose producers may differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Forensics {
    /// The partitioner families that explain the keyed records clearly more
    /// than chance, and what none of them explains, when no one candidate
    /// explains them all.
    pub mixture: Option<Mixture>,
    /// Distinct non-empty keys, counted when no one candidate explains the
    /// records (`None` otherwise: then no key can be on two partitions).
    pub distinct_keys: Option<u64>,
    /// Whether more keyed records were read than [`KEYS_TRACKED`] (or their
    /// keys exceeded [`KEY_BYTES_TRACKED`]): the key figures are over the
    /// first ones.
    pub keys_capped: bool,
    /// Keys stored on more than one partition (the first
    /// [`SPLIT_KEYS_KEPT`], most records first): a join on them breaks.
    pub split_keys: Vec<SplitKey>,
    /// How many keys are on more than one partition, all of them.
    pub split_keys_total: u64,
    /// Partitions whose records switch from one partitioner to another at an
    /// offset, in partition order.
    pub switches: Vec<Switch>,
}

/// The partitioner families that explain a topic's records clearly more
/// than chance does, together, and what none of them explains.
///
/// Members are found one at a time, each the family that puts the most of
/// the records the members before it leave where they are stored, and each
/// kept only if a placement unrelated to the records would match that many
/// with a chance below [`MEMBER_CHANCE`] (divided by the families tested;
/// [`log_chance`]). A family that matches records only at chance's rate (1
/// in `partitions` for a partitioner that did not write them) is no member,
/// however many records it happens to match: those records are unexplained.
/// So a topic placed at random has no member, and a topic written by one
/// partitioner partwise does not know has at most the known families that
/// agree with it on many keys.
#[derive(Clone, Debug, PartialEq)]
pub struct Mixture {
    /// The members, most records first (none, one, or several).
    pub members: Vec<Member>,
    /// Whether no smaller set of families explains the records the members
    /// explain (sets of up to [`EXACT_COVER`] families are searched
    /// exhaustively; beyond that, not known).
    pub minimal: bool,
    /// Keyed records some member explains.
    pub explained: u64,
    /// Keyed records no member explains: placed by a partitioner partwise
    /// does not know, or by a producer that sets partitions itself (some of
    /// them may be put where they are by a non-member family, by chance).
    pub unexplained: u64,
    /// The first [`MISROUTED_KEPT`] of those.
    pub unexplained_records: Vec<Misrouted>,
    /// The topic's partition count: a family that did not write a record
    /// matches it with chance 1 in this.
    pub partitions: u32,
}

impl Mixture {
    /// `unexplained` over the keyed records, in 0..=1.
    pub fn unexplained_share(&self) -> f64 {
        let all = self.explained + self.unexplained;
        if all == 0 {
            0.0
        } else {
            self.unexplained as f64 / all as f64
        }
    }
}

/// One member of a [`Mixture`].
///
/// A record that two members both put where it is stored (as 1 in N random
/// keys do) cannot be told apart: it is counted in `records_shared` of each,
/// and split between them in proportion to the records only each explains
/// for `records` and `share`.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// Candidates that placed every sampled record alike, in the order given.
    pub family: Vec<Candidate>,
    /// Keyed records only this member (of the mixture) explains.
    pub records_only: u64,
    /// Keyed records this member and another explain.
    pub records_shared: u64,
    /// Records attributed to it: its own and its part of the shared ones
    /// (the members' `records` add up to [`Mixture::explained`]).
    pub records: u64,
    /// Its attributed share of the keyed records, in 0..=1.
    pub share: f64,
    /// Distinct keys with a record only this member explains.
    pub keys: u64,
    /// `keys` over the distinct keys (members' key shares can add up to more
    /// than 1: a key both wrote counts for both).
    pub key_share: f64,
    /// The bound of [`log_chance`] when it was kept: the chance that a
    /// family that wrote none of the records it was tested on (those the
    /// members before it leave) matches as many of them.
    pub chance: f64,
}

impl Member {
    /// The partitioner the family is named by: its first client default
    /// (`sarama` for FNV-1a, `java` for murmur2), else its first candidate.
    pub fn primary(&self) -> Candidate {
        primary(&self.family).expect("a family has a candidate")
    }
}

/// A key stored on more than one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitKey {
    /// The stored key bytes.
    pub key: Vec<u8>,
    /// Each partition it is on with its records there, by partition.
    pub partitions: Vec<(u32, u64)>,
}

impl SplitKey {
    /// Its records in all.
    pub fn records(&self) -> u64 {
        self.partitions.iter().map(|p| p.1).sum()
    }
}

/// A partition whose sampled records were placed by one partitioner up to an
/// offset and by another from it on: a producer migration.
///
/// Only a clean split is a switch: the records split into exactly two runs,
/// each explained by one candidate throughout. Writers that interleave
/// (records of both kinds alternating) are a mixture, not a switch, and a
/// partition with a record no candidate explains has no switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Switch {
    /// The partition.
    pub partition: u32,
    /// The first record the old partitioner does not explain.
    pub offset: i64,
    /// The earliest offset the switch can have happened at: records from
    /// here to `offset` fit both, so either may have written them.
    pub earliest: i64,
    /// The candidates that explain every record before `offset`.
    pub from: Vec<Candidate>,
    /// The candidates that explain every record from `earliest` on.
    pub to: Vec<Candidate>,
    /// Sampled records before `offset`.
    pub before: u64,
    /// Sampled records from `offset` on.
    pub after: u64,
}

/// The candidate a family of equivalent ones is named by: the first that is
/// a client's default partitioner (so an FNV-1a family reads as `sarama`,
/// not `librdkafka:fnv1a`), else the first.
pub fn primary(family: &[Candidate]) -> Option<Candidate> {
    family
        .iter()
        .find(|c| is_client_default(c.partitioner))
        .or(family.first())
        .copied()
}

/// The finding for a topic named `topic` whose sampled keyed records no one
/// candidate explains, when the audit looked for several producers: a set of
/// two or more partitioners that explains them clearly more than chance
/// ([`crate::findings::Reason::MixedPartitioners`]), else what at most one
/// known partitioner explains and the share no known one does
/// ([`crate::findings::Reason::RecordsUnexplained`]).
pub fn mixture_finding(topic: &str, r: &Routing) -> Option<crate::findings::Reason> {
    let f = r.forensics.as_ref()?;
    let m = f.mixture.as_ref()?;
    let writer = |x: &Member| crate::findings::MixedWriter {
        // The name it goes by first.
        candidates: std::iter::once(x.primary())
            .chain(x.family.iter().copied().filter(|&c| c != x.primary()))
            .map(|c| c.to_string())
            .collect(),
        partitioner: x.primary().partitioner,
        family: distinct_partitioners(&x.family),
        share: x.share,
    };
    if m.members.len() < 2 {
        return Some(crate::findings::Reason::RecordsUnexplained {
            topic: topic.to_string(),
            misplaced: r.misrouted_total,
            best: r.rates.first().map(|b| b.candidate.to_string()),
            found: Some(crate::findings::Unexplained {
                writer: m.members.first().map(writer),
                records: m.unexplained,
                share: m.unexplained_share(),
                partitions: m.partitions,
                split_keys: f.split_keys_total,
            }),
        });
    }
    Some(crate::findings::Reason::MixedPartitioners {
        topic: topic.to_string(),
        writers: m.members.iter().map(writer).collect(),
        unexplained: m.unexplained,
        unexplained_share: m.unexplained_share(),
        split_keys: f.split_keys_total,
        example: f.split_keys.first().map(|k| {
            let text = match std::str::from_utf8(&k.key) {
                Ok(t) => t.to_string(),
                Err(_) => k.key.escape_ascii().to_string(),
            };
            (text, k.partitions.iter().map(|p| p.0).collect())
        }),
    })
}

/// The partitioners of `cands`, each once, in order.
pub fn distinct_partitioners(cands: &[Candidate]) -> Vec<Partitioner> {
    let mut out: Vec<Partitioner> = Vec::new();
    for c in cands {
        if !out.contains(&c.partitioner) {
            out.push(c.partitioner);
        }
    }
    out
}

fn is_client_default(p: Partitioner) -> bool {
    if p.priority().is_some() {
        return false;
    }
    let client = p.client();
    !p.spec().contains(':')
        || p.aliases()
            .iter()
            .any(|a| *a == client || a.strip_suffix(":default") == Some(client))
}
