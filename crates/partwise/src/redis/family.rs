//! Redis key families: patterns such as `market:{%s}` and `notif:{%s}` whose
//! keys, filled with one logical key, must share a slot. Parsing, filling,
//! and the lint of the patterns themselves, in the terms of
//! [`FamilyReason`]; a live cluster's answer is the Redis adapter's business.

use crate::error::Error;
pub use crate::findings::FamilyReason;
use crate::redis::slot::{hash_tag, key_slot};
use std::fmt;

/// A key pattern with exactly one `%s` where the logical key goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    text: String,
}

impl Pattern {
    /// Parses a pattern: it must contain exactly one `%s`.
    pub fn parse(text: &str) -> Result<Pattern, Error> {
        let err = |reason: &str| Error::Pattern {
            pattern: text.to_string(),
            reason: reason.to_string(),
        };
        match text.matches("%s").count() {
            0 => Err(err("no %s where the logical key goes (e.g. 'market:{%s}')")),
            1 => Ok(Pattern {
                text: text.to_string(),
            }),
            _ => Err(err("more than one %s")),
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The key for one logical key.
    pub fn fill(&self, key: &[u8]) -> Vec<u8> {
        fill(&self.text, key)
    }

    /// The pattern's hash tag as written (with `%s` in it when the key is
    /// inside), or `None` when Redis would hash the whole key.
    pub fn tag(&self) -> Option<&str> {
        tag_of(&self.text)
    }
}

/// `pattern` with its first `%s` replaced by `key` (unchanged when it has none).
pub fn fill(pattern: &str, key: &[u8]) -> Vec<u8> {
    let (before, after) = pattern.split_once("%s").unwrap_or((pattern, ""));
    let mut out = Vec::with_capacity(pattern.len() + key.len());
    out.extend_from_slice(before.as_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(after.as_bytes());
    out
}

fn tag_of(pattern: &str) -> Option<&str> {
    hash_tag(pattern.as_bytes())
        .map(|t| std::str::from_utf8(t).expect("a tag of a str between ASCII braces"))
}

/// Whether the first `{` is directly followed by `}`: Redis then ignores
/// every tag in the key.
fn empty_tag(pattern: &str) -> bool {
    pattern
        .find('{')
        .is_some_and(|i| pattern[i + 1..].starts_with('}'))
}

impl AsRef<str> for Pattern {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A family of patterns filled with the same logical key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Family {
    patterns: Vec<Pattern>,
}

impl Family {
    /// A family from pattern texts; each must parse, and none may repeat.
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Family, Error> {
        let mut out: Vec<Pattern> = Vec::with_capacity(patterns.len());
        for p in patterns {
            let p = Pattern::parse(p.as_ref())?;
            if out.contains(&p) {
                return Err(Error::Pattern {
                    pattern: p.text,
                    reason: "given twice".to_string(),
                });
            }
            out.push(p);
        }
        if out.is_empty() {
            return Err(Error::Pattern {
                pattern: String::new(),
                reason: "a family needs at least one pattern".to_string(),
            });
        }
        Ok(Family { patterns: out })
    }

    /// The patterns, in the order given.
    pub fn patterns(&self) -> &[Pattern] {
        &self.patterns
    }

    /// Every member key for one logical key, in pattern order.
    pub fn keys(&self, logical: &[u8]) -> Vec<Vec<u8>> {
        self.patterns.iter().map(|p| p.fill(logical)).collect()
    }

    /// Whether every member key of `logical` has the same slot.
    pub fn co_located(&self, logical: &[u8]) -> bool {
        let mut slots = self.patterns.iter().map(|p| key_slot(&p.fill(logical)));
        let first = slots.next();
        slots.all(|s| Some(s) == first)
    }

    /// What is wrong with the patterns themselves, before any key is tried.
    pub fn lint(&self) -> Vec<FamilyReason> {
        lint(&self.patterns)
    }
}

/// What is wrong with `patterns` themselves, before any key is tried, one
/// finding per pattern at fault, then [`FamilyReason::HashTagsDiffer`]. The
/// patterns need not hold a `%s`: a topology check lints what it was given.
pub fn lint<S: AsRef<str>>(patterns: &[S]) -> Vec<FamilyReason> {
    let mut out = Vec::new();
    let mut tagged = Vec::new();
    for p in patterns {
        let name = p.as_ref().to_string();
        if empty_tag(&name) {
            out.push(FamilyReason::EmptyTag { pattern: name });
            continue;
        }
        let Some(tag) = tag_of(p.as_ref()) else {
            out.push(FamilyReason::NoHashTag {
                patterns: vec![name],
            });
            continue;
        };
        tagged.push((name.clone(), tag.to_string()));
        if !tag.contains("%s") {
            out.push(FamilyReason::TagWithoutKey {
                pattern: name,
                tag: tag.to_string(),
                slot: key_slot(tag.as_bytes()),
            });
        } else if tag != "%s" {
            out.push(FamilyReason::TagNotJustKey {
                pattern: name,
                tag: tag.to_string(),
            });
        }
    }
    if tagged.iter().any(|(_, t)| *t != tagged[0].1) {
        out.push(FamilyReason::HashTagsDiffer { tags: tagged });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(patterns: &[&str]) -> Vec<&'static str> {
        Family::new(patterns)
            .unwrap()
            .lint()
            .iter()
            .map(FamilyReason::kind)
            .collect()
    }

    #[test]
    fn parses_and_fills() {
        let p = Pattern::parse("market:{%s}").unwrap();
        assert_eq!(p.fill(b"BBCA"), b"market:{BBCA}");
        assert_eq!(p.tag(), Some("%s"));
        assert!(Pattern::parse("market").is_err());
        assert!(Pattern::parse("%s:%s").is_err());
        assert!(Family::new(&["a:{%s}", "a:{%s}"]).is_err());
        assert!(Family::new::<&str>(&[]).is_err());
        let e = Pattern::parse("market:{}").unwrap_err();
        assert!(e.to_string().contains("market:{}"), "{e}");
    }

    #[test]
    fn lints() {
        assert!(kinds(&["market:{%s}", "notif:{%s}"]).is_empty());
        assert_eq!(kinds(&["market:%s", "notif:{%s}"]), ["no-hash-tag"]);
        assert_eq!(kinds(&["market:{}%s", "notif:{%s}"]), ["empty-tag"]);
        // Redis ignores the later tag once the first one is empty.
        assert_eq!(kinds(&["market:{}{%s}", "notif:{%s}"]), ["empty-tag"]);
        assert_eq!(
            kinds(&["{ticker}:market:%s", "{ticker}:notif:%s"]),
            ["tag-without-key", "tag-without-key"]
        );
        assert_eq!(
            kinds(&["{market:%s}", "{notif:%s}"]),
            ["tag-not-just-key", "tag-not-just-key", "hash-tags-differ"]
        );
        assert_eq!(
            kinds(&["{t:%s}:a", "{t:%s}:b"]),
            ["tag-not-just-key", "tag-not-just-key"]
        );
        let l = Family::new(&["{x}:%s", "{y}:%s"]).unwrap().lint();
        assert!(l.iter().all(FamilyReason::is_problem));
        assert_eq!(l.last().unwrap().kind(), "hash-tags-differ");
    }

    #[test]
    fn the_seeds_ten_symbols() {
        let symbols = [
            "BBCA", "ANTM", "ASII", "UNVR", "TLKM", "BBRI", "BMRI", "GOTO", "ADRO", "ICBP",
        ];
        let tagged = Family::new(&["market:{%s}", "notif:{%s}"]).unwrap();
        let plain = Family::new(&["market:%s", "notif:%s"]).unwrap();
        let count = |f: &Family| {
            symbols
                .iter()
                .filter(|s| f.co_located(s.as_bytes()))
                .count()
        };
        assert_eq!((count(&tagged), count(&plain)), (10, 0));
    }
}
