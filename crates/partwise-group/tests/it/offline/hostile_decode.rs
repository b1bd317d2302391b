//! A hostile broker (or anything on its port) must not crash the group
//! member: every decoder the runtime runs on bytes from the network answers
//! Ok or Err on any input, and never panics or allocates without bound.
//! These are property tests over arbitrary and mutated inputs: they run in
//! every `cargo test` on the stable toolchain, so CI runs them; raise
//! `PROPTEST_CASES` for a longer run by hand.

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::consumer_group_heartbeat_response::{
    Assignment as TargetAssignment, TopicPartitions,
};
use kafka_protocol::messages::{ApiKey, ConsumerGroupHeartbeatResponse};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchDecoder, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use partwise_group::protocol::{
    decode_assignment, decode_heartbeat_response, encode_assignment, Subscription,
};
use partwise_wire::records::decode_runs;
use partwise_wire::records::whole_batches;
use proptest::prelude::*;

/// A ConsumerGroupHeartbeat response body (the frame without its length
/// prefix) at `version`, answering correlation 7, as a coordinator sends it.
fn heartbeat_body(
    version: i16,
    interval_ms: i32,
    parts: &[(u128, Vec<i32>)],
    error_code: i16,
) -> Vec<u8> {
    let resp = ConsumerGroupHeartbeatResponse::default()
        .with_error_code(error_code)
        .with_member_id(Some(StrBytes::from_static_str("m-1")))
        .with_member_epoch(3)
        .with_heartbeat_interval_ms(interval_ms)
        .with_assignment(Some(
            TargetAssignment::default().with_topic_partitions(
                parts
                    .iter()
                    .map(|(id, ps)| {
                        TopicPartitions::default()
                            .with_topic_id(uuid::Uuid::from_u128(*id))
                            .with_partitions(ps.clone())
                    })
                    .collect(),
            ),
        ));
    let frame =
        partwise_wire::frame::encode_response(ApiKey::ConsumerGroupHeartbeat, version, 7, &resp)
            .unwrap();
    frame[4..].to_vec()
}

#[test]
fn heartbeat_answers_are_checked() {
    for v in [0, 1] {
        let ok = decode_heartbeat_response(
            Bytes::from(heartbeat_body(
                v,
                500,
                &[(1, vec![2, 0]), (1, vec![5]), (9, vec![])],
                0,
            )),
            v,
            7,
        )
        .unwrap();
        assert_eq!(ok.member_epoch, 3);
        assert_eq!(ok.member_id.as_deref(), Some("m-1"));
        assert_eq!(ok.heartbeat_interval.as_millis(), 500);
        let a = ok.assignment.unwrap();
        let one: Vec<i32> = a[&uuid::Uuid::from_u128(1)].iter().copied().collect();
        assert_eq!(one, [0, 2, 5], "the same topic twice is merged");
        assert!(a[&uuid::Uuid::from_u128(9)].is_empty());
        // What a member must not act on.
        for bad in [
            heartbeat_body(v, 500, &[(1, vec![-1])], 0),
            heartbeat_body(v, 0, &[], 0),
            heartbeat_body(v, -5, &[], 0),
            heartbeat_body(v, 500, &[(0, vec![1])], 0),
        ] {
            assert!(decode_heartbeat_response(Bytes::from(bad), v, 7).is_err());
        }
        // An error answer is the error, whatever else it carries.
        let fenced = decode_heartbeat_response(
            Bytes::from(heartbeat_body(v, 0, &[(0, vec![-1])], 110)),
            v,
            7,
        )
        .unwrap();
        assert_eq!((fenced.error_code, fenced.assignment), (110, None));
        // Another request's answer.
        let other = heartbeat_body(v, 500, &[], 0);
        assert!(decode_heartbeat_response(Bytes::from(other), v, 8).is_err());
    }
}

/// An assignment announcing 2^31 - 1 topics in 5 bytes is an error, not an
/// abort: the array is reserved before one element is read, which this
/// binary's allocator (the partwise binary's) answers without memory.
#[test]
fn an_absurd_assignment_count_is_an_error() {
    let mut b = heartbeat_body(1, 500, &[], 0);
    // v1 is flexible: ... assignment present (1), topics compact array of
    // length 0 (varint 1), the assignment's and the response's tagged fields (0, 0).
    let n = b.len();
    assert_eq!(b[n - 4..], [1, 1, 0, 0]);
    b.truncate(n - 3);
    b.extend([0xff, 0xff, 0xff, 0xff, 0x07, 0, 0]);
    assert!(decode_heartbeat_response(Bytes::from(b), 1, 7).is_err());
}

/// A valid record batch of `n` records, as a producer writes it.
fn batch(n: usize, compression: Compression) -> Vec<u8> {
    let records: Vec<Record> = (0..n)
        .map(|i| Record {
            transactional: false,
            control: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: i as i32,
            timestamp: 1_700_000_000_000 + i as i64,
            key: Some(Bytes::from(format!("key-{i}"))),
            value: Some(Bytes::from(vec![b'v'; i % 50])),
            headers: Default::default(),
            delete_horizon: false,
        })
        .collect();
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        &records,
        &RecordEncodeOptions {
            version: 2,
            compression,
        },
    )
    .unwrap();
    buf.to_vec()
}

#[test]
fn valid_batches_decode() {
    for c in [Compression::None, Compression::Gzip, Compression::Snappy] {
        let b = batch(10, c);
        let got = runs_of(&b, 3).unwrap();
        assert_eq!(got.len(), 7, "{c:?}");
    }
}

/// Records as (offset, timestamp, key, value), or the error's text.
type Read = Result<Vec<(i64, i64, Option<Vec<u8>>, Option<Vec<u8>>)>, String>;

/// The records of `decode_runs` (slots into the fetched bytes) as
/// (offset, timestamp, key, value), to hold them against kafka-protocol's.
fn runs_of(b: &[u8], from: i64) -> Read {
    let runs = decode_runs(Some(Bytes::copy_from_slice(b)), from).map_err(|e| e.to_string())?;
    Ok(runs
        .iter()
        .flat_map(|r| r.iter())
        .map(|(s, k, v)| {
            (
                s.offset,
                s.timestamp,
                k.map(<[u8]>::to_vec),
                v.map(<[u8]>::to_vec),
            )
        })
        .collect())
}

/// The same records as kafka-protocol's decoder reads them: the reference
/// the borrowing decoder is held to. It sizes buffers from counts in the
/// bytes, so it runs here only under the binaries' allocator (this test
/// binary's).
fn records_of(b: &[u8], from: i64) -> Read {
    let mut buf = whole_batches(Bytes::copy_from_slice(b));
    let sets = RecordBatchDecoder::decode_all(&mut buf).map_err(|e| e.to_string())?;
    Ok(sets
        .into_iter()
        .flat_map(|s| s.records)
        .filter(|r| r.offset >= from && !r.control)
        .map(|r| {
            (
                r.offset,
                r.timestamp,
                r.key.map(|k| k.to_vec()),
                r.value.map(|v| v.to_vec()),
            )
        })
        .collect())
}

/// The borrowing decoder reads what kafka-protocol's reads: every
/// compression partwise supports, batches one after the other (a
/// compressed one between two plain ones), a start inside a batch, and a
/// cut tail.
#[test]
fn decode_runs_reads_what_kafka_protocol_reads() {
    let mut several = batch(5, Compression::None);
    let mut second = batch(4, Compression::Gzip);
    second[0..8].copy_from_slice(&5i64.to_be_bytes());
    let mut third = batch(3, Compression::None);
    third[0..8].copy_from_slice(&9i64.to_be_bytes());
    several.extend_from_slice(&second);
    several.extend_from_slice(&third);
    let mut cut = several.clone();
    cut.truncate(several.len() - 7);
    for c in [Compression::None, Compression::Gzip, Compression::Snappy] {
        let b = batch(60, c);
        for from in [0, 3, 59, 60] {
            assert_eq!(runs_of(&b, from), records_of(&b, from), "{c:?} from {from}");
        }
    }
    for from in [0, 6, 11] {
        assert_eq!(runs_of(&several, from), records_of(&several, from));
        assert_eq!(runs_of(&cut, from), records_of(&cut, from));
    }
    let all = runs_of(&several, 0).unwrap();
    assert_eq!(
        all.iter().map(|r| r.0).collect::<Vec<_>>(),
        (0..12).collect::<Vec<_>>()
    );
    assert_eq!(all[1].2.as_deref(), Some(&b"key-1"[..]));
    assert!(decode_runs(None, 0).unwrap().is_empty());
}

/// Absurd lengths and counts in the places a decoder sizes a buffer from.
#[test]
fn absurd_lengths_and_counts_are_errors() {
    let good = batch(3, Compression::None);
    // Record count (bytes 57..61 of a v2 batch header) set to i32::MAX.
    let mut count = good.clone();
    count[57..61].copy_from_slice(&i32::MAX.to_be_bytes());
    // Batch length (bytes 8..12) larger than what follows: a cut tail.
    let mut length = good.clone();
    length[8..12].copy_from_slice(&i32::MAX.to_be_bytes());
    // A bad CRC (bytes 17..21).
    let mut crc = good.clone();
    crc[17] ^= 0xff;
    for bytes in [count.clone(), length, crc.clone()] {
        let _ = decode_runs(Some(Bytes::from(bytes)), 0);
    }
    assert!(decode_runs(Some(Bytes::from(count)), 0).is_err());
    assert!(decode_runs(Some(Bytes::from(crc)), 0).is_err());
    // Subscriptions and assignments with absurd counts.
    let mut sub = BytesMut::new();
    sub.put_i16(3);
    sub.put_i32(i32::MAX);
    assert!(Subscription::decode(sub.clone().freeze()).is_err());
    assert!(decode_assignment(sub.freeze()).is_err());
}

// A response whose array count is 2^31 - 1: kafka-protocol 0.18 reserves
// the count before decoding one element, which aborts on a failed
// allocation. partwise_alloc::ReserveHuge (the global allocator of the
// partwise and ticker binaries) answers it with unbacked address space, so
// the decoder fails as it should: partwise-wire's unit test
// `an_absurd_array_count_in_a_response_is_an_error_not_an_abort` and the CLI's
// hostile-peer test (Peer::AbsurdCount) cover it.

proptest! {
    #[test]
    fn record_batches_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = whole_batches(Bytes::from(bytes.clone()));
        let _ = decode_runs(Some(Bytes::from(bytes)), 0);
    }

    /// Mutations of a real batch reach past the header checks into the
    /// record decoding (varints, lengths, compression).
    #[test]
    fn mutated_batches_never_panic(
        n in 1usize..20,
        compression in prop_oneof![Just(Compression::None), Just(Compression::Gzip), Just(Compression::Snappy)],
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let mut b = batch(n, compression);
        for (at, byte) in edits {
            let at = at % b.len();
            b[at] = byte;
        }
        b.truncate(cut % (b.len() + 1));
        // Where both read the bytes, they read the same records (the
        // borrowing decoder does not hold header keys to UTF-8, which no
        // record here has, so only kafka-protocol may refuse more).
        if let (Ok(a), Ok(k)) = (runs_of(&b, 0), records_of(&b, 0)) {
            prop_assert_eq!(a, k);
        }
    }

    #[test]
    fn heartbeat_responses_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..300),
        version in 0i16..2,
    ) {
        let _ = decode_heartbeat_response(Bytes::from(bytes), version, 7);
    }

    /// Mutations of a real answer reach the assignment's counts, ids and
    /// partition indexes.
    #[test]
    fn mutated_heartbeat_responses_never_panic(
        version in 0i16..2,
        parts in proptest::collection::vec((any::<u128>(), proptest::collection::vec(-3i32..100, 0..8)), 0..5),
        interval in any::<i32>(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let mut b = heartbeat_body(version, interval, &parts, 0);
        for (at, byte) in edits {
            let at = at % b.len();
            b[at] = byte;
        }
        b.truncate(cut % (b.len() + 1));
        if let Ok(a) = decode_heartbeat_response(Bytes::from(b), version, 7) {
            if a.error_code == 0 {
                prop_assert!(!a.heartbeat_interval.is_zero());
                for ps in a.assignment.iter().flat_map(|m| m.values()) {
                    prop_assert!(ps.iter().all(|p| *p >= 0));
                }
            }
        }
    }

    /// A leader reads every member's metadata: whatever one member sent,
    /// the others are still assigned (exactly as without it when its bytes
    /// do not decode), and the one it cannot read gets nothing, with a reason.
    #[test]
    fn a_leader_assigns_around_any_member_metadata(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        flip in any::<usize>(),
    ) {
        use partwise_group::units::{leader_sync_assignments, leader_sync_assignments_around, read_members};
        let counts: std::collections::BTreeMap<String, i32> =
            [("a".to_string(), 4), ("b".to_string(), 4)].into_iter().collect();
        let good = |id: &str| (
            id.to_string(),
            None,
            Subscription { topics: vec!["a".into(), "b".into()], generation: -1, ..Subscription::default() }
                .encode()
                .unwrap(),
        );
        // Arbitrary bytes, and a real subscription with one byte of a name made 0xff.
        let mut named = Subscription { topics: vec!["a".into(), "bb".into()], generation: -1, ..Subscription::default() }
            .encode()
            .unwrap()
            .to_vec();
        let names = [8usize, 11, 12];
        named[names[flip % names.len()]] = 0xff;
        for (other, not_utf8) in [(Bytes::from(bytes.clone()), false), (Bytes::from(named), true)] {
            let raw = vec![good("m0"), ("x".to_string(), None, other), good("m2")];
            let (readable, unreadable) = read_members(raw.clone());
            prop_assert_eq!(readable.len() + unreadable.len(), 3);
            if not_utf8 {
                prop_assert_eq!(unreadable.len(), 1);
                prop_assert!(unreadable[0].reason.contains("is not UTF-8"), "{}", unreadable[0].reason);
            }
            let around = leader_sync_assignments_around("copartitioned", &readable, &unreadable, &counts).unwrap();
            prop_assert_eq!(around.len(), 3);
            if let Some(u) = unreadable.first() {
                prop_assert_eq!(u.member_id.as_str(), "x");
                prop_assert!(u.reason.starts_with("its subscription could not be decoded: "));
                let (alone, _) = read_members([raw[0].clone(), raw[2].clone()]);
                let without = leader_sync_assignments("copartitioned", &alone, &counts).unwrap();
                prop_assert_eq!(&around[..2], &without[..]);
                prop_assert!(decode_assignment(around[2].1.clone()).unwrap().is_empty());
            }
        }
    }

    #[test]
    fn member_metadata_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = Subscription::decode(Bytes::from(bytes.clone()));
        let _ = decode_assignment(Bytes::from(bytes));
    }

    #[test]
    fn mutated_assignments_never_panic(
        parts in proptest::collection::vec(("[a-z]{1,8}", 0i32..100), 0..10),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
    ) {
        let mut b = encode_assignment(&parts).unwrap().to_vec();
        if !b.is_empty() {
            for (at, byte) in edits {
                let at = at % b.len();
                b[at] = byte;
            }
        }
        let _ = decode_assignment(Bytes::from(b));
    }
}

/// The fuzz seeds (written by `fuzz/seeds.py` from the protocol's field
/// layout, not by this crate) decode: the fuzzers start from valid input.
#[test]
fn fuzz_seeds_decode() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus");
    let read = |p: &str| Bytes::from(std::fs::read(format!("{dir}/{p}")).unwrap());
    let recs = runs_of(&read("record_batches/seed-batch"), 0).unwrap();
    let keys: Vec<Option<&[u8]>> = recs.iter().map(|r| r.2.as_deref()).collect();
    assert_eq!(keys, [Some(&b"BBCA"[..]), Some(b"ANTM"), None]);
    let sub = Subscription::decode(read("member_metadata/seed-subscription")).unwrap();
    assert_eq!(sub.topics, ["market-updates", "notifications"]);
    assert_eq!(sub.owned, [("market-updates".to_string(), 0)]);
    assert_eq!(sub.generation, 4);
    let a = decode_assignment(read("member_metadata/seed-assignment")).unwrap();
    assert_eq!(a.len(), 4);
}
