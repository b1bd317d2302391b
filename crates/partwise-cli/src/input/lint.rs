//! Warnings about the keys read: invisible characters (named by line, the
//! rest counted) and a dropped byte-order mark.

use crate::exit::Result;

/// Warns, on stderr, about keys holding characters that cannot be seen
/// (see [`partwise::encoding::first_invisible`]): such a key looks like
/// another key and hashes apart from it. The first few are named by line,
/// the rest counted when the input ends.
pub struct Lint {
    name: String,
    /// Lines are `KEY<TAB>VALUE`: only the key is looked at.
    pub(super) before_tab: bool,
    pub(super) warned: u64,
    /// Warnings kept instead of printed (line within the range, byte,
    /// character; the first [`NAMED_WARNINGS`] only): a range read on its
    /// own thread, whose warnings are printed in input order once every
    /// range is read.
    pub(super) deferred: Option<Vec<(u64, usize, char)>>,
}

/// Keys named one by one before the rest are only counted.
pub(super) const NAMED_WARNINGS: u64 = 3;

impl Lint {
    /// For an input read from its start.
    pub fn new(name: impl Into<String>) -> Lint {
        Lint {
            name: name.into(),
            before_tab: false,
            warned: 0,
            deferred: None,
        }
    }

    /// Checks the lines of a group whose first line has 0-based number
    /// `first`; `span` holds the group's bytes (lines and newlines).
    pub(super) fn group(&mut self, first: u64, group: &[&[u8]], span: &[u8]) -> Result<()> {
        // One pass over the group's bytes (which vectorizes) clears almost
        // every group of a key file; the lines are looked at one by one only
        // when a byte that may start an invisible character is there.
        let suspect = |b: u8| (b < 0x20 && b != b'\n') || matches!(b, 0x7F | 0xC2 | 0xE2 | 0xEF);
        if !span.iter().fold(false, |any, &b| any | suspect(b)) {
            return Ok(());
        }
        for (i, line) in group.iter().enumerate() {
            let key = match (self.before_tab, memchr::memchr(b'\t', line)) {
                (true, Some(t)) => &line[..t],
                _ => line,
            };
            if let Some((at, c)) = partwise::encoding::first_invisible(key) {
                self.warned += 1;
                if let Some(kept) = &mut self.deferred {
                    if self.warned <= NAMED_WARNINGS {
                        kept.push((first + i as u64, at, c));
                    }
                    continue;
                }
                if self.warned <= NAMED_WARNINGS {
                    let line_no = first + i as u64 + 1;
                    Lint::warn(&format!("{} line {line_no}", self.name), at, c);
                }
            }
        }
        Ok(())
    }

    /// Checks one key given whole, `label` naming it (`key argument 2`).
    pub fn key(label: &str, key: &[u8]) {
        if let Some((at, c)) = partwise::encoding::first_invisible(key) {
            Lint::warn(label, at, c);
        }
    }

    pub(super) fn warn(label: &str, at: usize, c: char) {
        let kind = if c.is_control() {
            "a control character"
        } else if matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}') {
            "a bidi control (it reorders what is shown after it)"
        } else {
            "a zero-width character"
        };
        say!(
            "partwise: warning: {label}: the key holds {kind}, U+{:04X}, at byte {at}: it is hashed as part of the key, which looks like one without it and lands elsewhere",
            u32::from(c)
        );
    }
}

impl Drop for Lint {
    fn drop(&mut self) {
        if self.deferred.is_none() {
            more_warnings(&self.name, self.warned);
        }
    }
}

/// The closing count of keys with invisible characters past the named ones.
pub(super) fn more_warnings(name: &str, warned: u64) {
    if warned > NAMED_WARNINGS {
        say!(
            "partwise: warning: {name}: {} more keys hold invisible characters",
            warned - NAMED_WARNINGS
        );
    }
}

/// The note for a byte-order mark dropped from the start of `name`.
pub(super) fn bom_note(name: &str) {
    say!("partwise: note: {name}: dropped the UTF-8 byte-order mark before line 1 (it is no part of the first key)");
}
