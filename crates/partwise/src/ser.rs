//! How the core's reports write the values that have no serde form of
//! their own: keys (raw bytes) and anything whose JSON is its text. The
//! reports derive `Serialize` with these, so every command's JSON comes
//! from the report's own type, in the same words whichever command wrote it;
//! the CLI's streamed rows use the same two for their keys.

use serde::{Serialize, Serializer};

/// A key as JSON text: its UTF-8, or `null` for bytes that are not UTF-8
/// (the report's `key_hex`, or a table's hex cell, shows those).
pub fn key_text<S: Serializer>(k: &[u8], s: S) -> Result<S::Ok, S::Error> {
    match std::str::from_utf8(k) {
        Ok(t) => s.serialize_str(t),
        Err(_) => s.serialize_none(),
    }
}

/// A key as lowercase hex, every byte two digits.
pub fn key_hex<S: Serializer>(k: &[u8], s: S) -> Result<S::Ok, S::Error> {
    use std::fmt::Write;
    let mut h = String::with_capacity(k.len() * 2);
    for b in k {
        let _ = write!(h, "{b:02x}");
    }
    s.serialize_str(&h)
}

/// [`key_text`] of a key that may be absent (`null`).
pub fn opt_key_text<K: AsRef<[u8]>, S: Serializer>(k: &Option<K>, s: S) -> Result<S::Ok, S::Error> {
    match k {
        Some(k) => key_text(k.as_ref(), s),
        None => s.serialize_none(),
    }
}

/// [`key_hex`] of a key that may be absent (`null`).
pub fn opt_key_hex<K: AsRef<[u8]>, S: Serializer>(k: &Option<K>, s: S) -> Result<S::Ok, S::Error> {
    match k {
        Some(k) => key_hex(k.as_ref(), s),
        None => s.serialize_none(),
    }
}

impl Serialize for crate::Partitioner {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.spec())
    }
}

impl Serialize for crate::assign::Assignor {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.spec())
    }
}

impl Serialize for crate::KeyFormat {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A key written as [`key_text`], for reports that list keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KeyText(#[serde(serialize_with = "key_text")] pub Vec<u8>);

/// A key as a table cell or in a sentence: printable text as is, anything
/// else as `0x..` hex: bytes that are not UTF-8, control characters, and
/// characters that draw nothing or reorder what follows (a key
/// `\u{202E}gnp.exe` would read as `exe.png`), so two keys that look alike
/// never print alike; the empty key as `""`.
pub fn key_label(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.is_empty() && !s.chars().any(crate::encoding::is_invisible) => s.to_string(),
        Ok("") => "\"\"".to_string(),
        _ => {
            use std::fmt::Write;
            let mut h = String::with_capacity(2 + bytes.len() * 2);
            h.push_str("0x");
            for b in bytes {
                let _ = write!(h, "{b:02x}");
            }
            h
        }
    }
}
