//! What the key bytes of stored records are: the serializer that most
//! plausibly wrote them, and the logical key they carry. Two topics whose
//! producers serialize the same logical key differently (a string in one, an
//! Avro string or an int in the other) are not co-partitioned, whatever their
//! partitioners.

use partwise::KeyFormat;
use std::fmt;

/// The encoding of one key, or of all keys of a topic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyEncoding {
    /// Printable UTF-8 text (Java's StringSerializer and most clients' default).
    String,
    /// 4 bytes that are not printable text: a big-endian int32 (IntegerSerializer).
    Int32,
    /// 8 bytes that are not printable text: a big-endian int64 (LongSerializer).
    Int64,
    /// Confluent's Avro wire format holding a string, with this schema id.
    AvroSr(u32),
    /// Anything else.
    Bytes,
    /// The topic's keys do not share one encoding.
    Mixed,
}

impl fmt::Display for KeyEncoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyEncoding::String => f.write_str("string"),
            KeyEncoding::Int32 => f.write_str("int32"),
            KeyEncoding::Int64 => f.write_str("int64"),
            KeyEncoding::AvroSr(id) => write!(f, "avro-sr:{id}"),
            KeyEncoding::Bytes => f.write_str("bytes"),
            KeyEncoding::Mixed => f.write_str("mixed"),
        }
    }
}

fn printable(s: &str) -> bool {
    !s.chars().any(|c| c.is_control())
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

/// The most plausible encoding of one key.
pub fn classify(key: &[u8]) -> KeyEncoding {
    if let Some((id, _)) = avro_sr(key) {
        return KeyEncoding::AvroSr(id);
    }
    match std::str::from_utf8(key) {
        Ok(s) if printable(s) => KeyEncoding::String,
        _ if key.len() == 4 => KeyEncoding::Int32,
        _ if key.len() == 8 => KeyEncoding::Int64,
        _ => KeyEncoding::Bytes,
    }
}

/// The logical key carried by `key` under `encoding`, as text (a decimal
/// number for the integer encodings); `None` for raw bytes.
pub fn logical(key: &[u8], encoding: KeyEncoding) -> Option<String> {
    match encoding {
        KeyEncoding::String => std::str::from_utf8(key).ok().map(str::to_string),
        KeyEncoding::Int32 => <[u8; 4]>::try_from(key)
            .ok()
            .map(|b| i32::from_be_bytes(b).to_string()),
        KeyEncoding::Int64 => <[u8; 8]>::try_from(key)
            .ok()
            .map(|b| i64::from_be_bytes(b).to_string()),
        KeyEncoding::AvroSr(_) => avro_sr(key).map(|(_, s)| s.to_string()),
        KeyEncoding::Bytes | KeyEncoding::Mixed => None,
    }
}

/// The bytes a producer would have hashed had it serialized the logical key
/// of `key` with `format`; `None` when the key carries no logical key or the
/// format cannot encode it (text for `int32`).
pub fn reencode(key: &[u8], format: KeyFormat) -> Option<Vec<u8>> {
    let text = logical(key, classify(key))?;
    format.encode(text.as_bytes()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_serializer_output() {
        let avro: KeyFormat = "avro-sr:7".parse().unwrap();
        let k = avro.encode(b"BBCA").unwrap();
        assert_eq!(classify(&k), KeyEncoding::AvroSr(7));
        assert_eq!(logical(&k, KeyEncoding::AvroSr(7)).as_deref(), Some("BBCA"));
        assert_eq!(classify(b"BBCA"), KeyEncoding::String);
        let i = KeyFormat::Int32.encode(b"42").unwrap();
        assert_eq!(classify(&i), KeyEncoding::Int32);
        assert_eq!(logical(&i, KeyEncoding::Int32).as_deref(), Some("42"));
        let l = KeyFormat::Int64.encode(b"-5").unwrap();
        assert_eq!(classify(&l), KeyEncoding::Int64);
        assert_eq!(logical(&l, KeyEncoding::Int64).as_deref(), Some("-5"));
        assert_eq!(classify(&[0xff, 0, 1]), KeyEncoding::Bytes);
        assert_eq!(reencode(&k, KeyFormat::String), Some(b"BBCA".to_vec()));
        assert_eq!(reencode(b"BBCA", avro), Some(k));
        assert_eq!(reencode(b"BBCA", KeyFormat::Int32), None);
    }

    #[test]
    fn truncated_avro_is_not_avro() {
        assert_ne!(classify(&[0, 0, 0, 0, 7, 8, b'B']), KeyEncoding::AvroSr(7));
        assert_eq!(avro_long(&[0x80; 12]), None);
    }
}
