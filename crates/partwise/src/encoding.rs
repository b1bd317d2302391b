//! Key encodings: how the text a user types becomes the bytes a producer hashes.
//!
//! Co-partitioning breaks when two producers serialize the same logical key to
//! different bytes, so partwise is explicit about the bytes. There are two kinds
//! of format:
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
//! use partwise::KeyFormat;
//! let int32: KeyFormat = "int32".parse().unwrap();
//! assert_eq!(int32.encode(b"42").unwrap(), vec![0, 0, 0, 42]);
//! let avro: KeyFormat = "avro-sr:7".parse().unwrap();
//! assert_eq!(avro.encode(b"BBCA").unwrap(), b"\x00\x00\x00\x00\x07\x08BBCA".to_vec());
//! assert!("hex".parse::<KeyFormat>().unwrap().encode(b"4g").is_err());
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

#[cfg(test)]
mod tests {
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
        fn ints_roundtrip(v: i64) {
            prop_assert_eq!(KeyFormat::Int64.encode(v.to_string().as_bytes()).unwrap(), v.to_be_bytes().to_vec());
        }
    }
}
