//! The check of one Redis key family declared in a topology file: the
//! core's pattern lint folded into the family's verdict (untagged patterns
//! gathered into one [`FamilyReason::NoHashTag`]), and the sample keys whose
//! members share a slot.

use super::copartition::Alignment;
use super::RedisFamily;
use crate::findings::FamilyReason;
use crate::redis::family::{fill, lint};
use crate::redis::slot;

/// The verdict on one Redis key family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyVerdict {
    /// The family name.
    pub name: String,
    /// Its patterns.
    pub patterns: Vec<String>,
    /// Each pattern's hash tag (with `%s` in it), `None` when untagged.
    pub hash_tags: Vec<Option<String>>,
    /// Whether every pattern has the same hash tag, and it contains the key.
    pub shared_hash_tag: bool,
    /// Sample keys whose family members all share one slot (when keys were given).
    pub colocated: Option<Alignment>,
    /// Every reason the family does not co-locate; empty when it does.
    pub reasons: Vec<FamilyReason>,
}

impl FamilyVerdict {
    /// Whether the family's keys co-locate.
    pub fn ok(&self) -> bool {
        self.reasons.is_empty()
    }
}

pub(crate) fn check_family(f: &RedisFamily, samples: &[&[u8]]) -> FamilyVerdict {
    let hash_tags: Vec<Option<String>> = f
        .patterns
        .iter()
        .map(|p| slot::hash_tag(p.as_bytes()).map(|t| String::from_utf8_lossy(t).into_owned()))
        .collect();
    // The verdict asks only whether the members share a slot: a tag around
    // fixed text co-locates the family (in one hot slot, which the live lint
    // flags), and a tag with more than the key is a note.
    let mut untagged = Vec::new();
    let mut reasons = Vec::new();
    for r in lint(&f.patterns) {
        match r {
            FamilyReason::NoHashTag { patterns } => untagged.extend(patterns),
            FamilyReason::EmptyTag { pattern } => untagged.push(pattern),
            FamilyReason::HashTagsDiffer { .. } => reasons.push(r),
            _ => {}
        }
    }
    if !untagged.is_empty() {
        reasons.insert(0, FamilyReason::NoHashTag { patterns: untagged });
    }
    // A shared tag without the key puts the whole family in one slot: it
    // co-locates, so it is not a reason, but it is not the usual design.
    let shared_hash_tag = reasons.is_empty()
        && hash_tags
            .first()
            .is_some_and(|t| t.as_deref().is_some_and(|t| t.contains("%s")));

    let colocated = (!samples.is_empty()).then(|| {
        let aligned = samples
            .iter()
            .filter(|k| {
                let slots: Vec<u16> = f
                    .patterns
                    .iter()
                    .map(|p| slot::key_slot(&fill(p, k)))
                    .collect();
                slots.windows(2).all(|w| w[0] == w[1])
            })
            .count();
        Alignment {
            keys: samples.len(),
            aligned,
        }
    });
    if let Some(a) = colocated {
        if a.aligned < a.keys && reasons.is_empty() {
            reasons.push(FamilyReason::SampleKeysSplit {
                split: a.keys - a.aligned,
                keys: a.keys,
            });
        }
    }
    FamilyVerdict {
        name: f.name.clone(),
        patterns: f.patterns.clone(),
        hash_tags,
        shared_hash_tag,
        colocated,
        reasons,
    }
}
