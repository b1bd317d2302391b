//! Other members' subscription and assignment bytes, relayed by the broker
//! in JoinGroup and SyncGroup, and the unit groups a leader puts in an
//! assignment's user data.
#![no_main]
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use partwise_wire::consumer::{decode_assignment, decode_unit_groups, Assignment, Subscription};

fuzz_target!(|data: &[u8]| {
    let _ = Subscription::decode(Bytes::copy_from_slice(data));
    let _ = Subscription::decode_lenient(Bytes::copy_from_slice(data));
    let _ = decode_assignment(Bytes::copy_from_slice(data));
    let _ = Assignment::decode(Bytes::copy_from_slice(data));
    let _ = decode_unit_groups(data);
});
