//! The module's ABI on the host: the calls' requests and answers, and bad
//! requests answered with an error naming what is wrong, never a panic.

use partwise_kafkajs_wasm::calls;
use partwise_kafkajs_wasm::codec::{put_bytes, put_i32, put_partitions, put_strs, put_u32, Reader};
use partwise_wire::consumer::Subscription;

fn subscription(topics: &[&str]) -> Vec<u8> {
    let mut req = Vec::new();
    let topics: Vec<String> = topics.iter().map(|t| t.to_string()).collect();
    put_strs(&mut req, &topics);
    put_partitions(&mut req, &[]);
    put_i32(&mut req, -1);
    let mut out = Vec::new();
    calls::encode_subscription(&req, &mut out).unwrap();
    out
}

#[test]
fn the_subscription_call_writes_the_wire_crates_bytes() {
    let got = subscription(&["a", "b"]);
    let want = Subscription {
        topics: vec!["a".into(), "b".into()],
        owned: vec![],
        generation: -1,
        user_data: None,
    }
    .encode()
    .unwrap();
    assert_eq!(got, want.to_vec());
}

#[test]
fn assign_answers_every_member_in_request_order() {
    let mut req = Vec::new();
    put_u32(&mut req, 4);
    for id in ["m2", "m0", "m1"] {
        put_bytes(&mut req, id.as_bytes());
        req.push(0);
        put_bytes(&mut req, &subscription(&["a", "b"]));
    }
    // A member whose bytes do not decode is named, and gets nothing.
    put_bytes(&mut req, b"bad");
    req.push(0);
    put_bytes(&mut req, &[0, 3, 0]);
    let mut read = Vec::new();
    calls::read_members(&req, &mut read).unwrap();
    let mut r = Reader::new(&read);
    let handle = r.u32("handle").unwrap();
    for _ in 0..3 {
        assert_eq!(r.u8("status").unwrap(), 0);
        assert_eq!(r.strs("topics").unwrap(), ["a", "b"]);
    }
    assert_eq!(r.u8("status").unwrap(), 1);
    let why = r.str("reason").unwrap();
    assert!(why.contains("could not be decoded"), "{why}");

    let mut req = Vec::new();
    put_u32(&mut req, handle as usize);
    put_u32(&mut req, 2);
    for t in ["a", "b"] {
        put_bytes(&mut req, t.as_bytes());
        put_i32(&mut req, 6);
    }
    let mut out = Vec::new();
    calls::assign(&req, &mut out).unwrap();
    // The handle is spent: the members are forgotten.
    let e = calls::assign(&req, &mut Vec::new()).unwrap_err();
    assert!(e.contains("no members read"), "{e}");
    let mut r = Reader::new(&out);
    assert_eq!(r.u32("n").unwrap(), 4);
    let mut total = 0;
    for id in ["m2", "m0", "m1", "bad"] {
        assert_eq!(r.str("id").unwrap(), id);
        let bytes = r.bytes("assignment").unwrap();
        let mut d = Vec::new();
        calls::decode_assignment(bytes, &mut d).unwrap();
        let mut dr = Reader::new(&d);
        let parts = dr.partitions("p").unwrap();
        let want = if id == "bad" { 0 } else { 4 };
        assert_eq!(
            parts.len(),
            want,
            "{id}: two whole units of two topics, or nothing"
        );
        total += parts.len();
        assert_eq!(dr.u8("groups").unwrap(), 1);
    }
    assert_eq!(total, 12);
}

#[test]
fn truncated_or_absurd_requests_are_errors_naming_the_field() {
    let mut out = Vec::new();
    let e = calls::read_members(&[1, 0], &mut out).unwrap_err();
    assert!(e.contains("members"), "{e}");
    let mut req = Vec::new();
    put_u32(&mut req, u32::MAX as usize);
    let e = calls::read_members(&req, &mut out).unwrap_err();
    assert!(e.contains("exceeds the request"), "{e}");
    let e = calls::decode_subscription(&[0, 9, 1], &mut out).unwrap_err();
    assert!(e.starts_with("subscription"), "{e}");
}

#[test]
fn a_bad_partitioner_spec_is_named_and_a_good_one_places_through_the_abi() {
    let mut out = Vec::new();
    let e = calls::partitioner_new(b"nosuch", &mut out).unwrap_err();
    assert!(e.contains("'nosuch'"), "{e}");
    out.clear();
    calls::partitioner_new(b"java", &mut out).unwrap();
    let handle = Reader::new(&out).u32("handle").unwrap();
    let mut req = vec![1];
    put_bytes(&mut req, b"key");
    put_u32(&mut req, 12);
    put_u32(&mut req, 0);
    let got = calls::place(handle, &req, &mut out).unwrap();
    // The ABI passes the key and count through: the core's own answer.
    let java: partwise::Partitioner = "java".parse().unwrap();
    let n = partwise::PartitionCount::new(12).unwrap();
    match java.place_with_headers(Some(b"key"), &[], n) {
        partwise::Placement::Partition(p) => assert_eq!(got, i64::from(p)),
        other => panic!("java placed a keyed record as {other:?}"),
    }
    let mut none = vec![0];
    put_u32(&mut none, 12);
    put_u32(&mut none, 0);
    assert_eq!(
        calls::place(handle, &none, &mut out).unwrap(),
        calls::STICKY
    );
}
