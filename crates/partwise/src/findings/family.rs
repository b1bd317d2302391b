//! The Redis key-family findings: every way the keys of one logical key fail
//! to share a slot (or share one too many), whether a topology file's
//! `[[redis_family]]` is checked (`partwise check`) or patterns are linted
//! against a live cluster (`partwise redis check`). One type, one set of ids.

use std::fmt;

/// One finding about a Redis key family.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FamilyReason {
    /// Patterns without a hash tag: their keys hash whole. The lint names
    /// one pattern per finding; a family verdict gathers them.
    NoHashTag {
        /// The untagged patterns.
        patterns: Vec<String>,
    },
    /// The first `{` is followed by `}`: Redis ignores the tag (and any later
    /// one) and hashes the whole key.
    EmptyTag {
        /// The pattern.
        pattern: String,
    },
    /// The tag does not contain the key's `%s`: every logical key gets the
    /// same tag, so all of them crowd into one slot on one node.
    TagWithoutKey {
        /// The pattern.
        pattern: String,
        /// Its tag.
        tag: String,
        /// The one slot all its keys land in.
        slot: u16,
    },
    /// The tag holds more than the key (`{m:%s}`): members co-locate only
    /// while every pattern uses exactly this tag. A note, not a problem.
    TagNotJustKey {
        /// The pattern.
        pattern: String,
        /// Its tag.
        tag: String,
    },
    /// The patterns' hash tags differ, so they hash different text.
    HashTagsDiffer {
        /// Each tagged pattern with its tag.
        tags: Vec<(String, String)>,
    },
    /// Sample keys whose family members land in different slots (an empty
    /// key leaves an empty tag, which Redis ignores).
    SampleKeysSplit {
        /// Keys that split.
        split: usize,
        /// Sample keys.
        keys: usize,
    },
}

impl FamilyReason {
    /// Its stable id (in [`KINDS`](super::KINDS)): `no-hash-tag`, `empty-tag`,
    /// `tag-without-key`, `tag-not-just-key`, `hash-tags-differ` or
    /// `sample-keys-split`.
    pub fn kind(&self) -> &'static str {
        match self {
            FamilyReason::NoHashTag { .. } => "no-hash-tag",
            FamilyReason::EmptyTag { .. } => "empty-tag",
            FamilyReason::TagWithoutKey { .. } => "tag-without-key",
            FamilyReason::TagNotJustKey { .. } => "tag-not-just-key",
            FamilyReason::HashTagsDiffer { .. } => "hash-tags-differ",
            FamilyReason::SampleKeysSplit { .. } => "sample-keys-split",
        }
    }

    /// Whether the finding is a problem (members split, or every key in one
    /// hot slot) rather than a note.
    pub fn is_problem(&self) -> bool {
        !matches!(self, FamilyReason::TagNotJustKey { .. })
    }

    /// What to change in the patterns so that a family shares one slot.
    pub fn fix(&self) -> String {
        match self {
            FamilyReason::NoHashTag { patterns } => {
                let tagged: Vec<String> = patterns.iter().map(|p| p.replacen("%s", "{%s}", 1)).collect();
                if tagged.is_empty() {
                    "put the key in a hash tag ({%s}) so that only it is hashed".to_string()
                } else {
                    format!(
                        "put the key in a hash tag so that only it is hashed: {}",
                        tagged.join(", ")
                    )
                }
            }
            FamilyReason::EmptyTag { pattern } => format!(
                "remove the empty {{}} from '{pattern}' and put the hash tag around the key alone ({{%s}})"
            ),
            FamilyReason::TagWithoutKey { pattern, .. } => format!(
                "put the hash tag of '{pattern}' around the key (%s) instead of fixed text"
            ),
            FamilyReason::TagNotJustKey { .. } => {
                "nothing while every pattern shares this tag; {%s} alone is safer".to_string()
            }
            FamilyReason::HashTagsDiffer { tags } => {
                let now: Vec<&str> = tags.iter().map(|(p, _)| p.as_str()).collect();
                let mut s = "use one hash tag, the same in every pattern, around the key alone (e.g. {%s})".to_string();
                if !now.is_empty() {
                    s.push_str(&format!("; today {}", now.join(", ")));
                }
                s
            }
            FamilyReason::SampleKeysSplit { .. } => {
                "an empty key leaves an empty tag {}, which Redis ignores: never write an empty logical key (or give it a placeholder)".to_string()
            }
        }
    }
}

impl fmt::Display for FamilyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FamilyReason::NoHashTag { patterns } if patterns.is_empty() => f.write_str(
                "no hash tag: the whole key is hashed, so members of one family land in unrelated slots",
            ),
            FamilyReason::NoHashTag { patterns } => write!(
                f,
                "no hash tag in {}: the whole key is hashed, so members of one family land in unrelated slots",
                patterns.join(", ")
            ),
            FamilyReason::EmptyTag { pattern } => write!(
                f,
                "'{pattern}' starts with an empty tag {{}}: Redis then ignores every tag and \
                 hashes the whole key"
            ),
            FamilyReason::TagWithoutKey { pattern, tag, slot } => write!(
                f,
                "'{pattern}' hashes the fixed tag {{{tag}}}, not the key: every key of it \
                 lands in slot {slot}, one hot slot on one node; put the tag around %s"
            ),
            FamilyReason::TagNotJustKey { pattern, tag } => write!(
                f,
                "'{pattern}' hashes {{{tag}}}, more than the key: members co-locate only while \
                 every pattern uses this exact tag"
            ),
            FamilyReason::HashTagsDiffer { tags } => {
                let list: Vec<String> = tags.iter().map(|(p, t)| format!("{p} hashes {{{t}}}")).collect();
                if list.is_empty() {
                    f.write_str("hash tags differ")
                } else {
                    write!(f, "hash tags differ: {}", list.join(", "))
                }
            }
            FamilyReason::SampleKeysSplit { split, keys } => {
                write!(f, "{split} of {keys} sample keys put family members in different slots")
            }
        }
    }
}
