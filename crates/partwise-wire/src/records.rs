//! Record batches: a Fetch response's `records` cut to whole batches and
//! decoded, and the one batch a Produce request carries.

use crate::error::{Error, Result};
use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::records::{Compression, Record, RecordBatchEncoder, RecordEncodeOptions};
use std::io::Read;

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

/// Decodes the whole record batches of a Fetch response's `records`
/// (magic 2, CRC-32C, lengths; gzip and snappy decompressed, within
/// [`MAX_DECOMPRESSED`]; data records at or after `from`) into runs whose
/// slots point into the response's own bytes instead of one allocated record
/// (and two reference-counted buffers) per record. Record headers are
/// skipped, within bounds. Every size read from the bytes is checked against
/// the bytes before anything is allocated for it, so a hostile broker gets
/// an error, not an abort.
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
                let data = decompress(c, &bytes[body_at..end])?;
                let mut slots = Vec::new();
                read_records(&data, 0, count, base_offset, base_ts, from, &mut slots)?;
                runs.push(RecordRun { data, slots });
            }
        }
    }
    runs.retain(|r| !r.slots.is_empty());
    Ok(runs)
}

/// The most one compressed batch may decompress to. A producer's batch is
/// bounded by its `batch.size`, or by one record and `max.request.size`
/// (1 MiB by default); a batch that claims more than this is corrupt or
/// hostile, and a gzip stream can expand about a thousandfold.
pub const MAX_DECOMPRESSED: usize = 256 << 20;

/// A batch's records after its header, decompressed with the batch's
/// codec (`attributes & 7`, not 0).
fn decompress(codec: i16, body: &[u8]) -> Result<Bytes> {
    let bad = |reason: String| Error::invalid("record batch", reason);
    match codec {
        1 => gunzip(body, MAX_DECOMPRESSED),
        2 => unsnappy(body, MAX_DECOMPRESSED),
        3 => Err(bad("lz4 compression is not supported".into())),
        4 => Err(bad("zstd compression is not supported".into())),
        other => Err(bad(format!("unknown compression algorithm ({other})"))),
    }
}

/// Gzip as Java's `GZIPInputStream` reads it (members one after another),
/// stopped one byte past `max`.
fn gunzip(body: &[u8], max: usize) -> Result<Bytes> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(body)
        .take((max as u64).saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| Error::decode("record batch", format!("gzip: {e}")))?;
    if out.len() > max {
        return Err(too_large(max));
    }
    Ok(Bytes::from(out))
}

fn too_large(max: usize) -> Error {
    Error::invalid(
        "record batch",
        format!("it decompresses to more than {max} bytes"),
    )
}

/// The 8 bytes that open snappy-java's framing (`SnappyOutputStream`),
/// which Kafka's Java producer writes: then a version and a compatible
/// version (4 bytes each), then blocks, each a 4-byte length and raw snappy.
const XERIAL_MAGIC: &[u8; 8] = b"\x82SNAPPY\0";

/// Snappy as Kafka's Java consumer reads it: snappy-java's framing, or,
/// without its magic, one raw snappy block (as snappy-java falls back to).
fn unsnappy(body: &[u8], max: usize) -> Result<Bytes> {
    let mut out = Vec::new();
    if body.len() < 16 || &body[..8] != XERIAL_MAGIC {
        raw_snappy(body, max, &mut out)?;
        return Ok(Bytes::from(out));
    }
    let mut rest = &body[16..];
    while !rest.is_empty() {
        let Some((len, tail)) = rest.split_first_chunk::<4>() else {
            return Err(Error::invalid(
                "record batch",
                "snappy: a block length runs past the batch",
            ));
        };
        let len = u32::from_be_bytes(*len) as usize;
        let block = tail.get(..len).ok_or_else(|| {
            Error::invalid(
                "record batch",
                format!("snappy: a block of {len} bytes runs past the batch"),
            )
        })?;
        raw_snappy(block, max, &mut out)?;
        rest = &tail[len..];
    }
    Ok(Bytes::from(out))
}

/// Appends one raw snappy block to `out`. The length a block declares is
/// held to what its bytes can hold before space is made for it: the
/// densest element, a 3-byte copy, gives 64 bytes, so a block expands at
/// most 22 times.
fn raw_snappy(block: &[u8], max: usize, out: &mut Vec<u8>) -> Result<()> {
    let snappy = |e: snap::Error| Error::decode("record batch", format!("snappy: {e}"));
    let len = snap::raw::decompress_len(block).map_err(snappy)?;
    if len > block.len().saturating_mul(22) {
        return Err(Error::invalid(
            "record batch",
            format!(
                "snappy: a block of {} bytes declares {len} bytes, more than it can hold",
                block.len()
            ),
        ));
    }
    if len > max - out.len() {
        return Err(too_large(max));
    }
    let at = out.len();
    out.resize(at + len, 0);
    snap::raw::Decoder::new()
        .decompress(block, &mut out[at..])
        .map_err(snappy)?;
    Ok(())
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
    use kafka_protocol::compression::{Compressor, Gzip, Snappy};

    /// `data` compressed by kafka-protocol's compressor `C`, as a producer
    /// writes it.
    fn compressed<C: Compressor<BytesMut>>(data: &[u8]) -> Vec<u8> {
        let mut out = BytesMut::new();
        C::compress(&mut out, |b| {
            b.put_slice(data);
            Ok(())
        })
        .unwrap();
        out.to_vec()
    }

    #[test]
    fn compressed_bodies_decompress_as_written() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let gz = compressed::<Gzip>(&data);
        assert_eq!(decompress(1, &gz).unwrap(), data);
        // Two gzip members one after the other, as GZIPInputStream reads them.
        let two = [gz.clone(), gz].concat();
        assert_eq!(
            gunzip(&two, usize::MAX).unwrap(),
            [&data[..], &data[..]].concat()
        );
        // snappy-java's framing (several 32 KiB blocks), and raw snappy.
        assert_eq!(decompress(2, &compressed::<Snappy>(&data)).unwrap(), data);
        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert_eq!(decompress(2, &raw).unwrap(), data);
        assert_eq!(decompress(2, &compressed::<Snappy>(b"")).unwrap(), &b""[..]);
    }

    #[test]
    fn decompression_stops_at_its_bound() {
        let data = vec![0u8; 10_000];
        let gz = compressed::<Gzip>(&data);
        assert!(gunzip(&gz, 10_000).is_ok());
        let e = gunzip(&gz, 9_999).unwrap_err().to_string();
        assert!(e.contains("more than 9999 bytes"), "{e}");
        let sn = compressed::<Snappy>(&data);
        assert!(unsnappy(&sn, 10_000).is_ok());
        let e = unsnappy(&sn, 9_999).unwrap_err().to_string();
        assert!(e.contains("more than 9999 bytes"), "{e}");
    }

    /// A raw snappy block's header is a varint length: one that claims
    /// more than its bytes can hold is refused before space is made for it.
    #[test]
    fn a_snappy_length_its_block_cannot_hold_is_refused() {
        let mut block = vec![0xff, 0xff, 0xff, 0xff, 0x0f];
        block.extend_from_slice(&[0; 11]);
        let e = unsnappy(&block, usize::MAX).unwrap_err().to_string();
        assert!(e.contains("declares 4294967295 bytes"), "{e}");
        let mut framed = XERIAL_MAGIC.to_vec();
        framed.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1]);
        framed.extend_from_slice(&(block.len() as u32).to_be_bytes());
        framed.extend_from_slice(&block);
        let e = unsnappy(&framed, usize::MAX).unwrap_err().to_string();
        assert!(e.contains("declares 4294967295 bytes"), "{e}");
        // A block length past the batch, and a cut length.
        let mut past = XERIAL_MAGIC.to_vec();
        past.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 1]);
        assert!(unsnappy(&past, usize::MAX)
            .unwrap_err()
            .to_string()
            .contains("runs past"));
        past.truncate(19);
        assert!(unsnappy(&past, usize::MAX)
            .unwrap_err()
            .to_string()
            .contains("runs past"));
    }

    #[test]
    fn unsupported_codecs_are_named() {
        for (c, name) in [
            (3, "lz4"),
            (4, "zstd"),
            (5, "unknown compression algorithm (5)"),
        ] {
            let e = decompress(c, b"x").unwrap_err().to_string();
            assert!(e.contains(name), "{e}");
        }
    }

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
