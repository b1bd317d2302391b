//! Redis Cluster key slots: CRC-16/XMODEM of the key, or of its hash tag, mod 16384.
//!
//! The hash-tag rule is Redis' `keyHashSlot` exactly: take the first `{`; take the
//! first `}` after it; if both exist and the text between them is not empty, hash
//! only that text. Everything else hashes the whole key. So `foo{}{bar}` hashes the
//! whole key (the first `{` is followed by `}` and the later `{bar}` is never
//! looked at), `foo{{bar}}` hashes `{bar`, and `a{b}{c}` hashes `b`.
//!
//! ```
//! use partwise::redis::slot::{hash_tag, key_slot};
//! assert_eq!(key_slot(b"market:{BBCA}"), key_slot(b"notif:{BBCA}"));
//! assert_eq!(key_slot(b"market:{BBCA}"), 12355);
//! assert_eq!(hash_tag(b"foo{}{bar}"), None);
//! assert_eq!(hash_tag(b"foo{{bar}}zap"), Some(&b"{bar"[..]));
//! ```

use crate::hash::crc16_xmodem;

/// The number of slots in a Redis Cluster.
pub const SLOTS: u16 = 16384;

/// The part of `key` that Redis hashes instead of the whole key, if any.
pub fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let open = key.iter().position(|&b| b == b'{')?;
    let rest = &key[open + 1..];
    let close = rest.iter().position(|&b| b == b'}')?;
    (close > 0).then(|| &rest[..close])
}

/// The slot (0..16384) that Redis Cluster assigns to `key`.
#[inline]
pub fn key_slot(key: &[u8]) -> u16 {
    crc16_xmodem(hash_tag(key).unwrap_or(key)) & (SLOTS - 1)
}

/// A key with its hash tag and slot: one row of `partwise slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KeySlot<'a> {
    /// The key (text in JSON, `null` when not UTF-8).
    #[serde(serialize_with = "crate::ser::key_text")]
    pub key: &'a [u8],
    /// The same bytes in hex.
    #[serde(serialize_with = "crate::ser::key_hex")]
    pub key_hex: &'a [u8],
    /// Its hash tag, when it has one.
    #[serde(serialize_with = "crate::ser::opt_key_text")]
    pub hashtag: Option<&'a [u8]>,
    /// The same in hex.
    #[serde(serialize_with = "crate::ser::opt_key_hex")]
    pub hashtag_hex: Option<&'a [u8]>,
    /// Its slot, 0..16384.
    pub slot: u16,
}

impl<'a> KeySlot<'a> {
    /// Where `key` lands.
    pub fn of(key: &'a [u8]) -> KeySlot<'a> {
        let tag = hash_tag(key);
        KeySlot {
            key,
            key_hex: key,
            hashtag: tag,
            hashtag_hex: tag,
            slot: key_slot(key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_rules() {
        assert_eq!(hash_tag(b"{}"), None);
        assert_eq!(hash_tag(b""), None);
        assert_eq!(hash_tag(b"{{a}}"), Some(&b"{a"[..]));
        assert_eq!(hash_tag(b"a{b}{c}"), Some(&b"b"[..]));
        assert_eq!(hash_tag(b"}{a}"), Some(&b"a"[..]));
        assert_eq!(hash_tag(b"}{"), None);
        assert_eq!(hash_tag(b"{{}}"), Some(&b"{"[..]));
        assert_eq!(key_slot(b""), 0);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(
            key_slot(b"{user1000}.following"),
            key_slot(b"{user1000}.followers")
        );
    }

    #[test]
    fn seed_symbols_colocate_only_when_tagged() {
        let symbols = [
            "BBCA", "ANTM", "ASII", "UNVR", "TLKM", "BBRI", "BMRI", "GOTO", "ADRO", "ICBP",
        ];
        let tagged = symbols
            .iter()
            .filter(|s| {
                key_slot(format!("market:{{{s}}}").as_bytes())
                    == key_slot(format!("notif:{{{s}}}").as_bytes())
            })
            .count();
        let plain = symbols
            .iter()
            .filter(|s| {
                key_slot(format!("market:{s}").as_bytes())
                    == key_slot(format!("notif:{s}").as_bytes())
            })
            .count();
        assert_eq!((tagged, plain), (10, 0));
    }
}
