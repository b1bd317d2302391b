//! Record batches: a Fetch response's `records` cut to whole batches and
//! decoded, and the one batch a Produce request carries.

use crate::error::{Error, Result};
use bytes::{Buf, Bytes, BytesMut};
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
