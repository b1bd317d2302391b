//! A Fetch response's `records` as the group runtime decodes them: whole
//! batches cut from the bytes, then every batch (CRC, counts, varints,
//! compression) decoded by `decode_runs`, the one decoder partwise runs on
//! fetched bytes. No allocator is installed here: a size read from the
//! bytes must be checked before anything is allocated for it.
#![no_main]
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let b = Bytes::copy_from_slice(data);
    let _ = partwise_wire::records::whole_batches(b.clone());
    let _ = partwise_wire::records::decode_runs(Some(b), 0);
});
