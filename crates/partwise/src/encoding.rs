//! Key encodings, both ways: how the text a user types becomes the bytes a
//! producer hashes ([`KeyFormat::encode`]), and which serializer most
//! plausibly wrote the bytes of a stored key ([`KeyFormat::detect`]) with
//! the logical key inside ([`KeyFormat::decode`]).
//!
//! Co-partitioning breaks when two producers serialize the same logical key to
//! different bytes (a string in one topic, an Avro string or an int in the
//! other), whatever their partitioners, so partwise is explicit about the
//! bytes. There are two kinds of format:
//!
//! - raw formats give the key bytes themselves: `utf8` (the text as is), `hex`,
//!   `base64`;
//! - serializer formats encode a logical key the way a producer's serializer
//!   does: `string` (Java `StringSerializer`: UTF-8, which must be valid),
//!   `int32` / `int64` (Java `IntegerSerializer` / `LongSerializer`: big-endian
//!   two's complement), and `avro-sr:ID` (Confluent Schema Registry wire format:
//!   magic byte 0, the 4-byte big-endian schema id, then the Avro binary encoding
//!   of a string: zig-zag varint length and UTF-8 bytes).
//!
//! ```
//! use partwise::encoding::{Detected, KeyFormat};
//! let int32: KeyFormat = "int32".parse().unwrap();
//! assert_eq!(int32.encode(b"42").unwrap(), vec![0, 0, 0, 42]);
//! let avro: KeyFormat = "avro-sr:7".parse().unwrap();
//! assert_eq!(avro.encode(b"BBCA").unwrap(), b"\x00\x00\x00\x00\x07\x08BBCA".to_vec());
//! assert!("hex".parse::<KeyFormat>().unwrap().encode(b"4g").is_err());
//!
//! // Read back: the serializer that wrote a stored key, and the key inside.
//! let stored = avro.encode(b"BBCA").unwrap();
//! assert_eq!(KeyFormat::detect(&stored), Detected::Format(avro));
//! assert_eq!(avro.decode(&stored).as_deref(), Some("BBCA"));
//! assert_eq!(KeyFormat::detect(&[0xff, 0, 1]).to_string(), "bytes");
//! ```

use crate::Error;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use std::fmt;
use std::str::FromStr;

/// How input text turns into key bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum KeyFormat {
    /// The bytes as given (any bytes, UTF-8 or not).
    #[default]
    Utf8,
    /// Hexadecimal digits, two per byte.
    Hex,
    /// Standard base64, padding optional.
    Base64,
    /// A string, serialized as UTF-8 (it must be valid UTF-8).
    String,
    /// A decimal 32-bit integer, serialized big-endian.
    Int32,
    /// A decimal 64-bit integer, serialized big-endian.
    Int64,
    /// A string in Confluent's Avro wire format with this schema id.
    AvroSr(u32),
}

const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

impl KeyFormat {
    /// Whether the key bytes are the input bytes (no copy needed).
    #[inline]
    pub fn is_identity(self) -> bool {
        self == KeyFormat::Utf8
    }

    /// Whether the input is a logical key for a serializer, rather than raw bytes.
    pub fn is_serializer(self) -> bool {
        !matches!(self, KeyFormat::Utf8 | KeyFormat::Hex | KeyFormat::Base64)
    }

    /// The key bytes for `input`.
    pub fn encode(self, input: &[u8]) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        self.encode_into(input, &mut out)?;
        Ok(out)
    }

    /// Appends the key bytes for `input` to `out`, so that many keys can share
    /// one buffer. On error, `out` may hold part of the key.
    pub fn encode_into(self, input: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let bad = |reason: String| Error::Key {
            format: self.to_string(),
            reason,
        };
        let text = || std::str::from_utf8(input).map_err(|e| bad(format!("not valid UTF-8 ({e})")));
        match self {
            KeyFormat::Utf8 => out.extend_from_slice(input),
            KeyFormat::Hex => {
                if !input.len().is_multiple_of(2) {
                    return Err(bad(format!("odd number of hex digits ({})", input.len())));
                }
                for (i, pair) in input.chunks_exact(2).enumerate() {
                    let digit = |c: u8| -> Result<u8, Error> {
                        (c as char).to_digit(16).map(|d| d as u8).ok_or_else(|| {
                            bad(format!(
                                "'{}' at position {} is not a hex digit",
                                c.escape_ascii(),
                                2 * i + 1
                            ))
                        })
                    };
                    out.push(digit(pair[0])? << 4 | digit(pair[1])?);
                }
            }
            KeyFormat::Base64 => {
                BASE64
                    .decode_vec(input, out)
                    .map_err(|e| bad(e.to_string()))?;
            }
            KeyFormat::String => out.extend_from_slice(text()?.as_bytes()),
            KeyFormat::Int32 => {
                let v: i32 = text()?.trim().parse().map_err(|e| {
                    bad(format!(
                        "'{}' is not a 32-bit integer ({e})",
                        input.escape_ascii()
                    ))
                })?;
                out.extend_from_slice(&v.to_be_bytes());
            }
            KeyFormat::Int64 => {
                let v: i64 = text()?.trim().parse().map_err(|e| {
                    bad(format!(
                        "'{}' is not a 64-bit integer ({e})",
                        input.escape_ascii()
                    ))
                })?;
                out.extend_from_slice(&v.to_be_bytes());
            }
            KeyFormat::AvroSr(id) => {
                let s = text()?;
                out.push(0);
                out.extend_from_slice(&id.to_be_bytes());
                // Avro `long` length: zig-zag, then base-128 varint, low group first.
                let mut z = ((s.len() as i64) << 1) ^ ((s.len() as i64) >> 63);
                loop {
                    let byte = (z & 0x7f) as u8;
                    z = ((z as u64) >> 7) as i64;
                    if z == 0 {
                        out.push(byte);
                        break;
                    }
                    out.push(byte | 0x80);
                }
                out.extend_from_slice(s.as_bytes());
            }
        }
        Ok(())
    }

    /// The serializer format that most plausibly wrote the stored key bytes
    /// `key`: Confluent's Avro wire format holding a string, printable UTF-8
    /// text (`string`), 4 or 8 bytes that are not text (`int32`, `int64`), or
    /// [`Detected::Bytes`].
    pub fn detect(key: &[u8]) -> Detected {
        if let Some((id, _)) = avro_sr(key) {
            return Detected::Format(KeyFormat::AvroSr(id));
        }
        match std::str::from_utf8(key) {
            Ok(s) if !s.chars().any(char::is_control) => Detected::Format(KeyFormat::String),
            _ if key.len() == 4 => Detected::Format(KeyFormat::Int32),
            _ if key.len() == 8 => Detected::Format(KeyFormat::Int64),
            _ => Detected::Bytes,
        }
    }

    /// The input text that [`KeyFormat::encode`] turns into `key`: the
    /// logical key for a serializer format (a decimal number for the integer
    /// ones), the digits for `hex` and `base64`; `None` when `key` is not
    /// what this format writes.
    pub fn decode(self, key: &[u8]) -> Option<String> {
        match self {
            KeyFormat::Utf8 | KeyFormat::String => {
                std::str::from_utf8(key).ok().map(str::to_string)
            }
            KeyFormat::Hex => Some(key.iter().map(|b| format!("{b:02x}")).collect()),
            KeyFormat::Base64 => Some(base64::engine::general_purpose::STANDARD.encode(key)),
            KeyFormat::Int32 => <[u8; 4]>::try_from(key)
                .ok()
                .map(|b| i32::from_be_bytes(b).to_string()),
            KeyFormat::Int64 => <[u8; 8]>::try_from(key)
                .ok()
                .map(|b| i64::from_be_bytes(b).to_string()),
            KeyFormat::AvroSr(id) => avro_sr(key)
                .filter(|&(found, _)| found == id)
                .map(|(_, s)| s.to_string()),
        }
    }
}

/// What the bytes of stored keys say about the serializer that wrote them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Detected {
    /// Written by this serializer format: `string`, `int32`, `int64` or
    /// `avro-sr:ID`.
    Format(KeyFormat),
    /// Bytes no serializer format explains.
    Bytes,
    /// Keys of one topic that do not share one encoding.
    Mixed,
}

impl Detected {
    /// What a set of keys detected as `self` is, with one more key detected
    /// as `next`: [`Detected::Mixed`] as soon as two differ.
    pub fn and(self, next: Detected) -> Detected {
        if self == next {
            self
        } else {
            Detected::Mixed
        }
    }
}

impl fmt::Display for Detected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detected::Format(k) => k.fmt(f),
            Detected::Bytes => f.write_str("bytes"),
            Detected::Mixed => f.write_str("mixed"),
        }
    }
}

/// The bytes a producer would have hashed had it serialized the logical key
/// of the stored `key` with `to`; `None` when the key carries no logical key
/// or `to` cannot encode it (text for `int32`).
pub fn reencode(key: &[u8], to: KeyFormat) -> Option<Vec<u8>> {
    let Detected::Format(from) = KeyFormat::detect(key) else {
        return None;
    };
    to.encode(from.decode(key)?.as_bytes()).ok()
}

/// Reads an Avro `long` (zigzag varint) from the front of `b`.
fn avro_long(b: &[u8]) -> Option<(i64, usize)> {
    let mut v: u64 = 0;
    for (i, &byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((((v >> 1) as i64) ^ -((v & 1) as i64), i + 1));
        }
    }
    None
}

/// The Avro string inside a Confluent-framed key, with its schema id.
fn avro_sr(key: &[u8]) -> Option<(u32, &str)> {
    if key.len() < 6 || key[0] != 0 {
        return None;
    }
    let id = u32::from_be_bytes([key[1], key[2], key[3], key[4]]);
    let (len, used) = avro_long(&key[5..])?;
    let body = &key[5 + used..];
    if len < 0 || body.len() as u64 != len as u64 {
        return None;
    }
    std::str::from_utf8(body).ok().map(|s| (id, s))
}

impl fmt::Display for KeyFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyFormat::Utf8 => f.write_str("utf8"),
            KeyFormat::Hex => f.write_str("hex"),
            KeyFormat::Base64 => f.write_str("base64"),
            KeyFormat::String => f.write_str("string"),
            KeyFormat::Int32 => f.write_str("int32"),
            KeyFormat::Int64 => f.write_str("int64"),
            KeyFormat::AvroSr(id) => write!(f, "avro-sr:{id}"),
        }
    }
}

impl FromStr for KeyFormat {
    type Err = Error;

    fn from_str(s: &str) -> Result<KeyFormat, Error> {
        let unknown = || Error::UnknownKeyFormat {
            input: s.to_string(),
        };
        let lower = s.trim().to_ascii_lowercase();
        Ok(match lower.as_str() {
            "utf8" | "utf-8" | "raw" => KeyFormat::Utf8,
            "hex" => KeyFormat::Hex,
            "base64" | "b64" => KeyFormat::Base64,
            "string" | "str" => KeyFormat::String,
            "int32" | "int" | "integer" => KeyFormat::Int32,
            "int64" | "long" => KeyFormat::Int64,
            _ => {
                let id = lower.strip_prefix("avro-sr:").ok_or_else(unknown)?;
                let id: u32 = id.parse().map_err(|_| Error::Key {
                    format: "avro-sr".into(),
                    reason: format!(
                        "schema id '{id}' in '{s}' is not a number from 0 to 4294967295"
                    ),
                })?;
                KeyFormat::AvroSr(id)
            }
        })
    }
}

/// The UTF-8 byte-order mark. Editors on Windows write it before the first
/// line of a text file; it is no part of the first key.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Whether `c` cannot be seen as itself where a key or a name is shown, and
/// must be shown escaped: control characters (C0, DEL, C1: a terminal obeys
/// them, so a client id can clear the screen or retitle the window), the
/// bidirectional controls (they reorder what follows: `\u{202E}gnp.exe`
/// shows as `exe.png`), zero-width and other format characters (Unicode's
/// Cf: they draw nothing, so two keys that look alike hash apart), the byte
/// order mark, and the line and paragraph separators. Key readers warn on
/// them; tables and the report show them escaped.
pub fn is_invisible(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}' // soft hyphen
            | '\u{034F}' // combining grapheme joiner
            | '\u{0600}'..='\u{0605}'
            | '\u{061C}' // Arabic letter mark
            | '\u{06DD}'
            | '\u{070F}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08E2}'
            | '\u{115F}'..='\u{1160}' // Hangul fillers
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}' // Mongolian selectors and vowel separator
            | '\u{200B}'..='\u{200F}' // zero-width space, joiners, LRM, RLM
            | '\u{2028}'..='\u{202E}' // separators, bidi embeddings and overrides
            | '\u{2060}'..='\u{206F}' // word joiner, invisible operators, bidi isolates
            | '\u{3164}' // Hangul filler
            | '\u{FE00}'..='\u{FE0F}' // variation selectors
            | '\u{FEFF}' // byte order mark, zero-width no-break space
            | '\u{FFA0}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{110BD}'
            | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}' // tags and variation selectors supplement
        )
}

/// The first invisible character of `text` (see [`is_invisible`]) and its
/// byte offset. Bytes that are not UTF-8 are skipped: they are shown
/// escaped already.
pub fn first_invisible(text: &[u8]) -> Option<(usize, char)> {
    // Every such character is ASCII below 0x20 or 0x7F, or starts with a
    // lead byte of 0xC2 or above; most key files are printable ASCII, so a
    // plain byte test skips almost every key without decoding it.
    let suspect = |b: u8| b < 0x20 || b == 0x7F || b >= 0xC2;
    if !text.iter().fold(false, |any, &b| any | suspect(b)) {
        return None;
    }
    let mut at = 0;
    for chunk in text.utf8_chunks() {
        for (i, c) in chunk.valid().char_indices() {
            if is_invisible(c) {
                return Some((at + i, c));
            }
        }
        at += chunk.valid().len() + chunk.invalid().len();
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn invisible_characters_are_found_and_visible_ones_are_not() {
        for (text, want) in [
            ("TLKM", None),
            ("caf\u{e9} \u{4e2d}\u{6587} \u{2019}", None),
            ("a\u{200B}b", Some((1, '\u{200B}'))),
            ("\u{202E}gnp.exe", Some((0, '\u{202E}'))),
            ("x\u{2066}", Some((1, '\u{2066}'))),
            ("k\u{FEFF}", Some((1, '\u{FEFF}'))),
            ("k\u{2060}", Some((1, '\u{2060}'))),
            ("a\tb", Some((1, '\t'))),
            ("a\u{1b}[2J", Some((1, '\u{1b}'))),
            ("a\u{85}", Some((1, '\u{85}'))),
            ("a\u{7f}", Some((1, '\u{7f}'))),
        ] {
            assert_eq!(first_invisible(text.as_bytes()), want, "{text:?}");
        }
        // Offsets count the bytes that are not UTF-8 before the character.
        assert_eq!(
            first_invisible(b"\xff\xfe\xE2\x80\x8B"),
            Some((2, '\u{200B}'))
        );
        assert_eq!(first_invisible(b"\xE2\x80"), None);
    }

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn formats() {
        let f = |s: &str| s.parse::<KeyFormat>().unwrap();
        assert_eq!(f("hex").encode(b"42424341").unwrap(), b"BBCA");
        assert_eq!(f("hex").encode(b"").unwrap(), b"");
        assert_eq!(f("base64").encode(b"QkJDQQ==").unwrap(), b"BBCA");
        assert_eq!(f("base64").encode(b"QkJDQQ").unwrap(), b"BBCA");
        assert_eq!(f("int32").encode(b"-1").unwrap(), vec![0xff; 4]);
        assert_eq!(
            f("int64").encode(b"1").unwrap(),
            vec![0, 0, 0, 0, 0, 0, 0, 1]
        );
        assert!(f("int32").encode(b"2147483648").is_err());
        assert!(f("string").encode(b"\xff").is_err());
        assert_eq!(f("utf8").encode(b"\xff").unwrap(), b"\xff");
        // A 64-byte string needs a two-byte varint length (128 zig-zagged).
        let long = "x".repeat(64);
        let enc = f("avro-sr:1").encode(long.as_bytes()).unwrap();
        assert_eq!(&enc[..7], &[0, 0, 0, 0, 1, 0x80, 0x01]);
        assert!("avro-sr:x".parse::<KeyFormat>().is_err());
        assert!("json".parse::<KeyFormat>().is_err());
        for s in [
            "utf8",
            "hex",
            "base64",
            "string",
            "int32",
            "int64",
            "avro-sr:12",
        ] {
            assert_eq!(f(s).to_string(), s);
        }
    }

    #[test]
    fn detects_serializer_output() {
        let avro: KeyFormat = "avro-sr:7".parse().unwrap();
        let k = avro.encode(b"BBCA").unwrap();
        assert_eq!(KeyFormat::detect(&k), Detected::Format(avro));
        assert_eq!(avro.decode(&k).as_deref(), Some("BBCA"));
        assert_eq!(
            KeyFormat::detect(b"BBCA"),
            Detected::Format(KeyFormat::String)
        );
        let i = KeyFormat::Int32.encode(b"42").unwrap();
        assert_eq!(KeyFormat::detect(&i), Detected::Format(KeyFormat::Int32));
        assert_eq!(KeyFormat::Int32.decode(&i).as_deref(), Some("42"));
        let l = KeyFormat::Int64.encode(b"-5").unwrap();
        assert_eq!(KeyFormat::detect(&l), Detected::Format(KeyFormat::Int64));
        assert_eq!(KeyFormat::Int64.decode(&l).as_deref(), Some("-5"));
        assert_eq!(KeyFormat::detect(&[0xff, 0, 1]), Detected::Bytes);
        assert_eq!(reencode(&k, KeyFormat::String), Some(b"BBCA".to_vec()));
        assert_eq!(reencode(b"BBCA", avro), Some(k.clone()));
        assert_eq!(reencode(b"BBCA", KeyFormat::Int32), None);
        // Another schema id is another writer.
        assert_eq!(KeyFormat::AvroSr(8).decode(&k), None);
        for (d, text) in [
            (Detected::Format(avro), "avro-sr:7"),
            (Detected::Format(KeyFormat::String), "string"),
            (Detected::Bytes, "bytes"),
            (Detected::Mixed, "mixed"),
        ] {
            assert_eq!(d.to_string(), text);
        }
        assert_eq!(Detected::Bytes.and(Detected::Bytes), Detected::Bytes);
        assert_eq!(Detected::Bytes.and(Detected::Format(avro)), Detected::Mixed);
    }

    #[test]
    fn truncated_avro_is_not_avro() {
        assert_ne!(
            KeyFormat::detect(&[0, 0, 0, 0, 7, 8, b'B']),
            Detected::Format(KeyFormat::AvroSr(7))
        );
        assert_eq!(avro_long(&[0x80; 12]), None);
    }

    proptest! {
        #[test]
        fn hex_roundtrip(bytes: Vec<u8>) {
            let text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            prop_assert_eq!(KeyFormat::Hex.encode(text.as_bytes()).unwrap(), bytes);
        }

        #[test]
        fn base64_roundtrip(bytes: Vec<u8>) {
            let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
            prop_assert_eq!(KeyFormat::Base64.encode(text.as_bytes()).unwrap(), bytes);
        }

        #[test]
        fn decoders_never_panic(input: Vec<u8>) {
            for f in [KeyFormat::Hex, KeyFormat::Base64, KeyFormat::String, KeyFormat::Int32, KeyFormat::Int64, KeyFormat::AvroSr(1)] {
                let _ = f.encode(&input);
            }
        }

        #[test]
        fn decode_inverts_encode(bytes: Vec<u8>, text in "[a-zA-Z0-9 _-]{0,80}", v: i64, id: u32) {
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            prop_assert_eq!(KeyFormat::Hex.decode(&KeyFormat::Hex.encode(hex.as_bytes()).unwrap()), Some(hex));
            let b64 = KeyFormat::Base64.decode(&bytes).unwrap();
            prop_assert_eq!(KeyFormat::Base64.encode(b64.as_bytes()).unwrap(), bytes);
            for f in [KeyFormat::String, KeyFormat::AvroSr(id)] {
                prop_assert_eq!(f.decode(&f.encode(text.as_bytes()).unwrap()), Some(text.clone()));
            }
            let n = v.to_string();
            prop_assert_eq!(KeyFormat::Int64.decode(&KeyFormat::Int64.encode(n.as_bytes()).unwrap()), Some(n));
        }

        #[test]
        fn ints_roundtrip(v: i64) {
            prop_assert_eq!(KeyFormat::Int64.encode(v.to_string().as_bytes()).unwrap(), v.to_be_bytes().to_vec());
        }
    }
}
