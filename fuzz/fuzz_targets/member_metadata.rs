//! Other members' subscription and assignment bytes, relayed by the broker
//! in JoinGroup and SyncGroup.
#![no_main]
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use partwise_group::protocol::{decode_assignment, Subscription};

fuzz_target!(|data: &[u8]| {
    let _ = Subscription::decode(Bytes::copy_from_slice(data));
    let _ = decode_assignment(Bytes::copy_from_slice(data));
});
