//! Record batches: a Fetch response's `records` cut to whole batches and
//! decoded, and the one batch a Produce request carries.

use crate::error::{Error, Result};
use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::compression::{Decompressor, Gzip, Snappy};
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions,
};

/// `records` as one uncompressed v2 record batch, as a Produce request carries it.
pub fn encode_batch(records: &[Record]) -> Result<Bytes> {
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        records,
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .map_err(|e| Error::encode("", e))?;
    Ok(buf.freeze())
}

/// Cuts a Fetch response's `records` to its whole record batches: a broker
/// may cut the last batch short at the size limit, and that tail is fetched
/// again from its base offset next time.
pub fn whole_batches(mut records: Bytes) -> Bytes {
    let mut end = 0usize;
    let total = records.len();
    let mut view = &records[..];
    // Each batch: base offset (8) + batch length (4) + `length` bytes.
    while view.len() >= 12 {
        let mut hdr = &view[8..12];
        let len = hdr.get_i32();
        if len < 0 {
            break;
        }
        let size = 12 + len as usize;
        if view.len() < size {
            break;
        }
        end += size;
        view = &view[size..];
    }
    debug_assert!(end <= total);
    records.truncate(end);
    records
}

/// Decodes the whole record batches of a Fetch response's `records`
/// (checksums, varints, compression), keeping data records at or after
/// `from`: a batch starts at its base offset, which may be before the
/// offset asked for.
pub fn decode_records(records: Option<Bytes>, from: i64) -> Result<Vec<Record>> {
    let Some(bytes) = records else {
        return Ok(Vec::new());
    };
    let mut buf = whole_batches(bytes);
    let sets =
        RecordBatchDecoder::decode_all(&mut buf).map_err(|e| Error::decode("record batch", e))?;
    Ok(sets
        .into_iter()
        .flat_map(|s| s.records)
        .filter(|r| r.offset >= from && !r.control)
        .collect())
}

/// Where one record's key and value lie in the bytes of its [`RecordRun`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Offset.
    pub offset: i64,
    /// Timestamp, milliseconds since the epoch.
    pub timestamp: i64,
    key_at: u32,
    /// -1: no key.
    key_len: i32,
    value_at: u32,
    /// -1: no value.
    value_len: i32,
}

impl Slot {
    /// A slot for a key and a value at these places of a run's bytes.
    fn at(offset: i64, timestamp: i64, key: Option<(u32, u32)>, value: Option<(u32, u32)>) -> Slot {
        let (key_at, key_len) = key.map_or((0, -1), |(a, l)| (a, l as i32));
        let (value_at, value_len) = value.map_or((0, -1), |(a, l)| (a, l as i32));
        Slot {
            offset,
            timestamp,
            key_at,
            key_len,
            value_at,
            value_len,
        }
    }

    /// The key, in `data` (its run's bytes).
    pub fn key<'a>(&self, data: &'a [u8]) -> Option<&'a [u8]> {
        part(data, self.key_at, self.key_len)
    }

    /// The value, in `data` (its run's bytes).
    pub fn value<'a>(&self, data: &'a [u8]) -> Option<&'a [u8]> {
        part(data, self.value_at, self.value_len)
    }
}

fn part(data: &[u8], at: u32, len: i32) -> Option<&[u8]> {
    if len < 0 {
        return None;
    }
    let at = at as usize;
    data.get(at..at + len as usize)
}

/// Records whose keys and values lie in one buffer: the Fetch response's
/// own bytes for uncompressed batches (nothing copied, one reference count
/// for the whole run), or a compressed batch's decompressed bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordRun {
    /// The bytes the slots point into.
    pub data: Bytes,
    /// The records, in offset order.
    pub slots: Vec<Slot>,
}

impl RecordRun {
    /// A run holding copies of these (offset, timestamp, key, value) records
    /// (for records that were not fetched, e.g. in tests).
    pub fn from_records<'a>(
        records: impl IntoIterator<Item = (i64, i64, Option<&'a [u8]>, Option<&'a [u8]>)>,
    ) -> RecordRun {
        let mut data = Vec::new();
        let mut slots = Vec::new();
        let put = |b: Option<&[u8]>, data: &mut Vec<u8>| {
            b.map(|b| {
                let at = data.len() as u32;
                data.extend_from_slice(b);
                (at, b.len() as u32)
            })
        };
        for (offset, timestamp, key, value) in records {
            let k = put(key, &mut data);
            let v = put(value, &mut data);
            slots.push(Slot::at(offset, timestamp, k, v));
        }
        RecordRun {
            data: Bytes::from(data),
            slots,
        }
    }

    /// Each record: (slot, key, value).
    pub fn iter(&self) -> impl Iterator<Item = (&Slot, Option<&[u8]>, Option<&[u8]>)> + '_ {
        self.slots
            .iter()
            .map(|s| (s, s.key(&self.data), s.value(&self.data)))
    }
}

/// The size of a v2 batch's header after the batch length, up to its first
/// record: leader epoch (4), magic (1), CRC (4), attributes (2), last offset
/// delta (4), first and max timestamps (8 + 8), producer id (8) and epoch
/// (2), base sequence (4), record count (4).
const BATCH_HEADER: usize = 49;

/// Decodes the whole record batches of a Fetch response's `records` like
/// [`decode_records`] (the same checks: magic 2, CRC-32C, lengths; gzip and
/// snappy decompressed; data records at or after `from`), but into runs whose
/// slots point into the response's own bytes instead of one allocated record
/// (and two reference-counted buffers) per record. Record headers are
/// skipped, within bounds.
pub fn decode_runs(records: Option<Bytes>, from: i64) -> Result<Vec<RecordRun>> {
    let Some(bytes) = records else {
        return Ok(Vec::new());
    };
    let bytes = whole_batches(bytes);
    let mut runs: Vec<RecordRun> = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let batch = &bytes[at..];
        // whole_batches left whole batches only: 12 bytes and `len` after them.
        let base_offset = i64::from_be_bytes(batch[0..8].try_into().expect("8 bytes"));
        let len = i32::from_be_bytes(batch[8..12].try_into().expect("4 bytes")) as usize;
        let start = at + 12;
        let end = start + len;
        at = end;
        let bad = |reason: String| Error::invalid("record batch", reason);
        if len < BATCH_HEADER {
            if len >= 5 && bytes[start + 4] != 2 {
                return Err(bad(format!(
                    "message sets v{} are unsupported",
                    bytes[start + 4] as i8
                )));
            }
            return Err(bad(format!(
                "a batch of {len} bytes is shorter than its header"
            )));
        }
        let b = &bytes[start..end];
        let magic = b[4] as i8;
        if magic != 2 {
            return Err(bad(if (0..2).contains(&magic) {
                format!("message sets v{magic} are unsupported")
            } else {
                format!("unknown record batch version ({magic})")
            }));
        }
        let crc = u32::from_be_bytes(b[5..9].try_into().expect("4 bytes"));
        let actual = crc32c::crc32c(&b[9..]);
        if crc != actual {
            return Err(bad(format!(
                "cyclic redundancy check failed ({crc} != {actual})"
            )));
        }
        let attributes = i16::from_be_bytes(b[9..11].try_into().expect("2 bytes"));
        let control = attributes & (1 << 5) != 0;
        let base_ts = i64::from_be_bytes(b[15..23].try_into().expect("8 bytes"));
        let count = i32::from_be_bytes(b[45..49].try_into().expect("4 bytes"));
        if count < 0 {
            return Err(bad(format!("negative record count ({count})")));
        }
        if control {
            // Transaction markers: never handed to the application.
            continue;
        }
        let body_at = start + BATCH_HEADER;
        match attributes & 7 {
            0 => {
                // Slots point into `bytes`: extend the run that already
                // does, or start one.
                if runs
                    .last()
                    .is_none_or(|r| r.data.as_ptr() != bytes.as_ptr())
                {
                    runs.push(RecordRun {
                        data: bytes.clone(),
                        slots: Vec::new(),
                    });
                }
                let run = runs.last_mut().expect("pushed above");
                read_records(
                    &bytes[..end],
                    body_at,
                    count,
                    base_offset,
                    base_ts,
                    from,
                    &mut run.slots,
                )?;
            }
            c => {
                let mut body = bytes.slice(body_at..end);
                let data = match c {
                    1 => Gzip::decompress(&mut body, |d: &mut Bytes| Ok(d.clone())),
                    2 => Snappy::decompress(&mut body, |d: &mut Bytes| Ok(d.clone())),
                    3 => return Err(bad("lz4 compression is not supported".into())),
                    4 => return Err(bad("zstd compression is not supported".into())),
                    other => return Err(bad(format!("unknown compression algorithm ({other})"))),
                }
                .map_err(|e| Error::decode("record batch", e))?;
                let mut slots = Vec::new();
                read_records(&data, 0, count, base_offset, base_ts, from, &mut slots)?;
                runs.push(RecordRun { data, slots });
            }
        }
    }
    runs.retain(|r| !r.slots.is_empty());
    Ok(runs)
}

/// Reads `count` records from `data[at..]` (the end of `data` is the end of
/// their batch) into `out`, keeping those at or after `from`.
fn read_records(
    data: &[u8],
    mut at: usize,
    count: i32,
    base_offset: i64,
    base_ts: i64,
    from: i64,
    out: &mut Vec<Slot>,
) -> Result<()> {
    // A record takes at least 7 bytes, so a hostile count reserves no more
    // than the batch could hold.
    out.reserve((count as usize).min((data.len() - at) / 7));
    for i in 0..count {
        let bad = |what: &str| {
            Error::invalid(
                "record batch",
                format!("record {i} of {count}: {what} runs past its batch"),
            )
        };
        let size = varint(data, &mut at).ok_or_else(|| bad("the length"))?;
        if size < 0 {
            return Err(Error::invalid(
                "record batch",
                format!("record {i} of {count}: negative length ({size})"),
            ));
        }
        let end = at
            .checked_add(size as usize)
            .filter(|e| *e <= data.len())
            .ok_or_else(|| bad("the record"))?;
        let rec = &data[..end];
        at += 1; // attributes
        let ts_delta = varlong(rec, &mut at).ok_or_else(|| bad("the timestamp"))?;
        let off_delta = varint(rec, &mut at).ok_or_else(|| bad("the offset"))?;
        let key = bytes_at(rec, &mut at).map_err(|w| bad_or_negative(i, count, "key", w))?;
        let value = bytes_at(rec, &mut at).map_err(|w| bad_or_negative(i, count, "value", w))?;
        let headers = varint(rec, &mut at).ok_or_else(|| bad("the header count"))?;
        if headers < 0 {
            return Err(Error::invalid(
                "record batch",
                format!("record {i} of {count}: negative header count ({headers})"),
            ));
        }
        for _ in 0..headers {
            match bytes_at(rec, &mut at) {
                Ok(Some(_)) => {}
                Ok(None) | Err(None) => {
                    return Err(bad_or_negative(i, count, "header key", None));
                }
                Err(w) => return Err(bad_or_negative(i, count, "header key", w)),
            }
            bytes_at(rec, &mut at).map_err(|w| bad_or_negative(i, count, "header value", w))?;
        }
        at = end;
        let offset = base_offset.wrapping_add(i64::from(off_delta));
        if offset >= from {
            out.push(Slot::at(offset, base_ts.wrapping_add(ts_delta), key, value));
        }
    }
    Ok(())
}

/// The error of a field that is negative (`None`) or runs past its record.
fn bad_or_negative(i: i32, count: i32, field: &str, past: Option<()>) -> Error {
    let what = match past {
        Some(()) => "runs past its record",
        None => "has a negative length",
    };
    Error::invalid(
        "record batch",
        format!("record {i} of {count}: the {field} {what}"),
    )
}

/// A length-prefixed byte field at `*at` of `rec`: its place and length, or
/// `None` for length -1. `Err(Some(()))`: it runs past `rec`; `Err(None)`: a
/// length below -1.
fn bytes_at(rec: &[u8], at: &mut usize) -> std::result::Result<Option<(u32, u32)>, Option<()>> {
    let len = varint(rec, at).ok_or(Some(()))?;
    if len == -1 {
        return Ok(None);
    }
    if len < -1 {
        return Err(None);
    }
    let start = *at;
    let end = start.checked_add(len as usize).ok_or(Some(()))?;
    if end > rec.len() || end > u32::MAX as usize {
        return Err(Some(()));
    }
    *at = end;
    Ok(Some((start as u32, len as u32)))
}

/// A zigzag varint of at most 5 bytes.
fn varint(b: &[u8], at: &mut usize) -> Option<i32> {
    let mut v: u32 = 0;
    for shift in (0..35).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u32::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(((v >> 1) as i32) ^ -((v & 1) as i32));
        }
    }
    None
}

/// A zigzag varlong of at most 10 bytes.
fn varlong(b: &[u8], at: &mut usize) -> Option<i64> {
    let mut v: u64 = 0;
    for shift in (0..70).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(((v >> 1) as i64) ^ -((v & 1) as i64));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{BufMut, BytesMut};

    #[test]
    fn whole_batches_drops_a_cut_tail() {
        let mut b = BytesMut::new();
        b.put_i64(0);
        b.put_i32(3);
        b.put_slice(&[1, 2, 3]);
        b.put_i64(1);
        b.put_i32(10);
        b.put_slice(&[9, 9]);
        let out = whole_batches(b.freeze());
        assert_eq!(out.len(), 15);
    }

    #[test]
    fn whole_batches_rejects_negative_lengths() {
        let mut b = BytesMut::new();
        b.put_i64(0);
        b.put_i32(-1);
        assert_eq!(whole_batches(b.freeze()).len(), 0);
    }
}
