//! Key families: patterns such as `market:{%s}` and `notif:{%s}` whose keys,
//! filled with one logical key, must share a slot. Parsing, filling, and a
//! lint of the patterns themselves. Pure: no I/O.

use crate::error::Error;
use partwise::slot::{hash_tag, key_slot};
use std::fmt;

/// A key pattern with exactly one `%s` where the logical key goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    split: usize,
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
                split: text.find("%s").expect("counted one"),
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
        let (before, after) = (&self.text[..self.split], &self.text[self.split + 2..]);
        let mut out = Vec::with_capacity(self.text.len() + key.len());
        out.extend_from_slice(before.as_bytes());
        out.extend_from_slice(key);
        out.extend_from_slice(after.as_bytes());
        out
    }

    /// The pattern's hash tag as written (with `%s` in it when the key is
    /// inside), or `None` when Redis would hash the whole key.
    pub fn tag(&self) -> Option<&str> {
        hash_tag(self.text.as_bytes())
            .map(|t| std::str::from_utf8(t).expect("a tag of a str between ASCII braces"))
    }

    /// Whether the first `{` is directly followed by `}`: Redis then ignores
    /// every tag in the key.
    fn empty_tag(&self) -> bool {
        self.text
            .find('{')
            .is_some_and(|i| self.text[i + 1..].starts_with('}'))
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
    pub fn lint(&self) -> Vec<Lint> {
        let mut out = Vec::new();
        let mut tagged = Vec::new();
        for p in &self.patterns {
            let name = p.text.clone();
            if p.empty_tag() {
                out.push(Lint::EmptyTag { pattern: name });
                continue;
            }
            let Some(tag) = p.tag() else {
                out.push(Lint::NoTag { pattern: name });
                continue;
            };
            tagged.push((name.clone(), tag.to_string()));
            if !tag.contains("%s") {
                out.push(Lint::TagWithoutKey {
                    pattern: name,
                    tag: tag.to_string(),
                    slot: key_slot(tag.as_bytes()),
                });
            } else if tag != "%s" {
                out.push(Lint::TagNotJustKey {
                    pattern: name,
                    tag: tag.to_string(),
                });
            }
        }
        if tagged.iter().any(|(_, t)| *t != tagged[0].1) {
            out.push(Lint::TagsDiffer { tags: tagged });
        }
        out
    }
}

/// A finding about the patterns of a family.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lint {
    /// No `{...}`: the whole key is hashed, so members of one logical key land
    /// in unrelated slots.
    NoTag {
        /// The pattern.
        pattern: String,
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
    /// while every pattern uses exactly this tag.
    TagNotJustKey {
        /// The pattern.
        pattern: String,
        /// Its tag.
        tag: String,
    },
    /// The tagged patterns hash different text, so their keys part.
    TagsDiffer {
        /// Each tagged pattern with its tag.
        tags: Vec<(String, String)>,
    },
}

impl Lint {
    /// A stable identifier: `no_tag`, `empty_tag`, `tag_without_key`,
    /// `tag_not_just_key` or `tags_differ`.
    pub fn kind(&self) -> &'static str {
        match self {
            Lint::NoTag { .. } => "no_tag",
            Lint::EmptyTag { .. } => "empty_tag",
            Lint::TagWithoutKey { .. } => "tag_without_key",
            Lint::TagNotJustKey { .. } => "tag_not_just_key",
            Lint::TagsDiffer { .. } => "tags_differ",
        }
    }

    /// Whether the finding is a problem (members split, or every key in one
    /// hot slot) rather than a note.
    pub fn is_problem(&self) -> bool {
        !matches!(self, Lint::TagNotJustKey { .. })
    }
}

impl fmt::Display for Lint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lint::NoTag { pattern } => write!(
                f,
                "'{pattern}' has no hash tag: the whole key is hashed, so it lands apart from \
                 the other members; write the key as {{%s}}"
            ),
            Lint::EmptyTag { pattern } => write!(
                f,
                "'{pattern}' starts with an empty tag {{}}: Redis then ignores every tag and \
                 hashes the whole key"
            ),
            Lint::TagWithoutKey { pattern, tag, slot } => write!(
                f,
                "'{pattern}' hashes the fixed tag {{{tag}}}, not the key: every key of it \
                 lands in slot {slot}, one hot slot on one node; put the tag around %s"
            ),
            Lint::TagNotJustKey { pattern, tag } => write!(
                f,
                "'{pattern}' hashes {{{tag}}}, more than the key: members co-locate only while \
                 every pattern uses this exact tag"
            ),
            Lint::TagsDiffer { tags } => {
                let list: Vec<String> = tags
                    .iter()
                    .map(|(p, t)| format!("'{p}' hashes {{{t}}}"))
                    .collect();
                write!(f, "hash tags differ: {}", list.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(patterns: &[&str]) -> Vec<&'static str> {
        Family::new(patterns)
            .unwrap()
            .lint()
            .iter()
            .map(Lint::kind)
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
        assert_eq!(kinds(&["market:%s", "notif:{%s}"]), ["no_tag"]);
        assert_eq!(kinds(&["market:{}%s", "notif:{%s}"]), ["empty_tag"]);
        // Redis ignores the later tag once the first one is empty.
        assert_eq!(kinds(&["market:{}{%s}", "notif:{%s}"]), ["empty_tag"]);
        assert_eq!(
            kinds(&["{ticker}:market:%s", "{ticker}:notif:%s"]),
            ["tag_without_key", "tag_without_key"]
        );
        assert_eq!(
            kinds(&["{market:%s}", "{notif:%s}"]),
            ["tag_not_just_key", "tag_not_just_key", "tags_differ"]
        );
        assert_eq!(
            kinds(&["{t:%s}:a", "{t:%s}:b"]),
            ["tag_not_just_key", "tag_not_just_key"]
        );
        let l = Family::new(&["{x}:%s", "{y}:%s"]).unwrap().lint();
        assert!(l.iter().all(Lint::is_problem));
        assert_eq!(l.last().unwrap().kind(), "tags_differ");
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
