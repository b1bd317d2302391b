//! Hostile and mistaken members next to `partwise kafka consume` members on
//! the classic protocol: a member whose subscription cannot be decoded (a
//! topic name that is not UTF-8, which Apache Kafka relays as it got it) is
//! assigned around by the partwise leader, and of two members started with
//! one `--group-instance-id` the fenced one stops instead of taking the
//! place back; a member whose subscription is too large for the coordinator
//! to store is named by the leader, which serves the group again once that
//! member is gone and stops, naming it, while it stays.

use super::{coordinator_of, create, names, partitions_of, units_of, wait_stable, MemberProc};
use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::{GroupId, HeartbeatRequest, JoinGroupRequest, SyncGroupRequest};
use kafka_protocol::protocol::StrBytes;
use partwise_client::cluster::Cluster;
use partwise_client::wire::Connection;
use partwise_faults::live::test_broker as broker;
use partwise_group::protocol::decode_assignment;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The client id the hostile member connects with.
const HOSTILE_CLIENT: &str = "hostile-client";

/// A v0 subscription to `topic` and to a topic whose name is the bytes ff
/// fe, which are not UTF-8.
fn non_utf8_subscription(topic: &str) -> Bytes {
    let mut b = BytesMut::new();
    b.put_i16(0);
    b.put_i32(2);
    b.put_i16(topic.len() as i16);
    b.put_slice(topic.as_bytes());
    b.put_i16(2);
    b.put_slice(&[0xff, 0xfe]);
    b.put_i32(-1);
    b.freeze()
}

/// A v1 subscription to `topic` that claims to own `claims` partitions of
/// it, all past its count: 4 bytes a claim, every byte of which the
/// coordinator keeps in the group's record.
fn claiming_subscription(topic: &str, claims: i32) -> Bytes {
    let mut b = BytesMut::with_capacity(32 + 2 * topic.len() + 4 * claims as usize);
    b.put_i16(1);
    b.put_i32(1);
    b.put_i16(topic.len() as i16);
    b.put_slice(topic.as_bytes());
    // No user data.
    b.put_i32(-1);
    b.put_i32(1);
    b.put_i16(topic.len() as i16);
    b.put_slice(topic.as_bytes());
    b.put_i32(claims);
    for p in 0..claims {
        b.put_i32(super::PARTITIONS + p);
    }
    b.freeze()
}

/// What the hostile member saw.
#[derive(Default)]
struct Seen {
    member_id: String,
    /// The last generation it joined.
    joined: Option<i32>,
    /// The generation it synced last, and the assignment bytes it got.
    synced: Option<(i32, Bytes)>,
    error: Option<String>,
}

/// A classic member written by hand: it joins with `metadata` under the
/// `copartitioned` protocol, syncs, heartbeats, and rejoins when the group
/// rebalances (or its generation could not be stored), until dropped; or,
/// [`RawMember::join_once`], it joins once and is silent after.
struct RawMember {
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Seen>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RawMember {
    fn start(group: &str, metadata: Bytes) -> RawMember {
        RawMember::spawn(group, metadata, false)
    }

    /// A member that sends JoinGroup until it is in a generation, and
    /// nothing after: no SyncGroup, no heartbeat.
    fn join_once(group: &str, metadata: Bytes) -> RawMember {
        RawMember::spawn(group, metadata, true)
    }

    fn spawn(group: &str, metadata: Bytes, once: bool) -> RawMember {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Seen::default()));
        let (g, s, st) = (group.to_string(), seen.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let rt = partwise_faults::live::rt();
            if let Err(e) = rt.block_on(raw_member(&g, metadata, once, &s, &st)) {
                s.lock().unwrap().error = Some(e);
            }
        });
        RawMember {
            stop,
            seen,
            thread: Some(thread),
        }
    }

    fn member_id(&self) -> String {
        self.seen.lock().unwrap().member_id.clone()
    }

    /// The last generation it joined.
    fn joined(&self) -> Option<i32> {
        let s = self.seen.lock().unwrap();
        assert!(s.error.is_none(), "hostile member: {:?}", s.error);
        s.joined
    }

    fn synced(&self) -> Option<(i32, Bytes)> {
        let s = self.seen.lock().unwrap();
        assert!(s.error.is_none(), "hostile member: {:?}", s.error);
        s.synced.clone()
    }
}

impl Drop for RawMember {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn raw_member(
    group: &str,
    metadata: Bytes,
    once: bool,
    seen: &Mutex<Seen>,
    stop: &AtomicBool,
) -> Result<(), String> {
    let t = Duration::from_secs(10);
    let mut c = Cluster::new(vec![broker()], "partwise-test", t);
    let coord = coordinator_of(&mut c, group).await;
    let mut conn = Connection::connect(&coord, HOSTILE_CLIENT, t)
        .await
        .map_err(|e| e.to_string())?;
    let gid = || GroupId(StrBytes::from_string(group.to_string()));
    let mut member = String::new();
    'join: while !stop.load(Ordering::SeqCst) {
        let req = JoinGroupRequest::default()
            .with_group_id(gid())
            .with_session_timeout_ms(10_000)
            .with_rebalance_timeout_ms(10_000)
            .with_member_id(StrBytes::from_string(member.clone()))
            .with_protocol_type(StrBytes::from_static_str("consumer"))
            .with_protocols(vec![JoinGroupRequestProtocol::default()
                .with_name(StrBytes::from_static_str("copartitioned"))
                .with_metadata(metadata.clone())]);
        let (resp, _) = conn
            .send(&req, Duration::from_secs(40))
            .await
            .map_err(|e| e.to_string())?;
        member = resp.member_id.to_string();
        seen.lock().unwrap().member_id = member.clone();
        match resp.error_code {
            0 => {}
            // MEMBER_ID_REQUIRED, REBALANCE_IN_PROGRESS.
            79 | 27 => continue,
            e => return Err(format!("JoinGroup: error {e}")),
        }
        if resp.leader == resp.member_id {
            return Err("the hostile member leads: the test expects a partwise leader".into());
        }
        let generation = resp.generation_id;
        seen.lock().unwrap().joined = Some(generation);
        if once {
            return Ok(());
        }
        let req = SyncGroupRequest::default()
            .with_group_id(gid())
            .with_generation_id(generation)
            .with_member_id(StrBytes::from_string(member.clone()))
            .with_protocol_type(Some(StrBytes::from_static_str("consumer")))
            .with_protocol_name(Some(StrBytes::from_static_str("copartitioned")));
        let (resp, _) = conn
            .send(&req, Duration::from_secs(40))
            .await
            .map_err(|e| e.to_string())?;
        match resp.error_code {
            0 => seen.lock().unwrap().synced = Some((generation, resp.assignment.clone())),
            // REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, and
            // UNKNOWN_SERVER_ERROR: the generation could not be stored.
            27 | 22 | -1 => continue,
            e => return Err(format!("SyncGroup: error {e}")),
        }
        while !stop.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let req = HeartbeatRequest::default()
                .with_group_id(gid())
                .with_generation_id(generation)
                .with_member_id(StrBytes::from_string(member.clone()));
            let (resp, _) = conn.send(&req, t).await.map_err(|e| e.to_string())?;
            match resp.error_code {
                0 => {}
                27 | 22 => continue 'join,
                e => return Err(format!("Heartbeat: error {e}")),
            }
        }
    }
    Ok(())
}

/// The last assignment `m` printed of generation `generation`, if any.
fn assigned_in(m: &MemberProc, generation: i64) -> Option<serde_json::Value> {
    m.holding()
        .filter(|a| a["generation"].as_i64() == Some(generation))
}

/// Two partwise members hold every unit; a third member joins whose
/// subscription names a topic that is not UTF-8. The partwise leader must
/// not exit (it did, with exit 2 and without naming the member, and the
/// other partwise member then led and died the same way): it gives that
/// member nothing, names it on stderr with its client id and why, and the
/// partwise members keep exactly what they held without it.
#[test]
fn a_member_whose_subscription_cannot_be_decoded_gets_nothing_and_the_leader_carries_on() {
    let (a, b, g) = names("unreadable");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let mut m1 = MemberProc::start(&g, &topics, &[]);
    let mut m2 = MemberProc::start(&g, &topics, &[]);
    let before = wait_stable(&[&m1, &m2], &topics, Duration::from_secs(60));
    let gen_before = before[0]["generation"].as_i64().unwrap();

    let hostile = RawMember::start(&g, non_utf8_subscription(&a));
    let start = Instant::now();
    let (generation, got) = loop {
        assert!(m1.running(), "member 1 exited: {}", m1.stderr());
        assert!(m2.running(), "member 2 exited: {}", m2.stderr());
        if let Some((gen, bytes)) = hostile.synced() {
            if i64::from(gen) > gen_before
                && assigned_in(&m1, gen.into()).is_some()
                && assigned_in(&m2, gen.into()).is_some()
            {
                break (i64::from(gen), bytes);
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no generation with the hostile member within 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(decode_assignment(got).unwrap(), vec![]);
    let after = [
        assigned_in(&m1, generation).unwrap(),
        assigned_in(&m2, generation).unwrap(),
    ];
    // Without the hostile member the two held `before`; the sticky assignor
    // keeps it, and the hostile member changes nothing of it.
    for (i, (was, is)) in before.iter().zip(&after).enumerate() {
        assert_eq!(partitions_of(was), partitions_of(is), "member {}", i + 1);
        assert_eq!(units_of(was), units_of(is), "member {}", i + 1);
    }
    let (leader, other) = if after[0]["leader"] == true {
        (&m1, &m2)
    } else {
        (&m2, &m1)
    };
    assert!(
        after.iter().any(|x| x["leader"] == true),
        "no partwise leader"
    );
    let id = hostile.member_id();
    let start = Instant::now();
    while !leader.stderr().contains(&id) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let said = leader.stderr();
    assert!(
        said.contains(&format!("gave member {id} (client id '{HOSTILE_CLIENT}')"))
            && said.contains("subscribed topic name 1 is not UTF-8 (bytes fffe)"),
        "the leader should name the member, its client and why:\n{said}"
    );
    assert!(!other.stderr().contains(&id), "{}", other.stderr());
    // Still running a while later, with nothing revoked.
    std::thread::sleep(Duration::from_secs(3));
    assert!(m1.running() && m2.running());
    drop(hostile);
    assert_eq!(m1.terminate(), 0);
    assert_eq!(m2.terminate(), 0);
}

/// One million claimed partitions: 4 MB of subscription, above the 1 MiB
/// the offsets topic takes in one record by default.
const CLAIMS: i32 = 1_000_000;

/// Whether `said` names the hostile member `id` as the member whose
/// subscription (`bytes` long) is the largest: its id, client id, host, size,
/// and the broker's limit the record went over.
fn names_the_large_member(said: &str, id: &str, bytes: usize) -> bool {
    said.contains(&format!(
        "member {id} (client id '{HOSTILE_CLIENT}', host '/127.0.0.1')"
    )) && said.contains(&format!("{bytes} bytes"))
        && said.contains(&format!("claiming {CLAIMS} owned partitions"))
        && said.contains("max.message.bytes")
        && said.contains("__consumer_offsets")
}

/// Two partwise members hold every unit; a raw member joins once with a
/// subscription of 4 MB (a million owned partitions claimed) and is silent
/// after. The coordinator cannot store the generation (the group's record
/// holds every member's subscription and is larger than the offsets topic's
/// max.message.bytes) and answers every SyncGroup UNKNOWN_SERVER_ERROR. The
/// members used to exit 2 saying only that; the leader must name the cause
/// and the member (id, client id, host, size), and both rejoin and are
/// served again once the coordinator has dropped that member.
#[test]
fn a_member_too_large_to_store_is_named_and_the_group_served_once_it_is_gone() {
    let (a, b, g) = names("too-large-once");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let mut m1 = MemberProc::start(&g, &topics, &[]);
    let mut m2 = MemberProc::start(&g, &topics, &[]);
    wait_stable(&[&m1, &m2], &topics, Duration::from_secs(60));
    let metadata = claiming_subscription(&a, CLAIMS);
    let bytes = metadata.len();
    let hostile = RawMember::join_once(&g, metadata);
    let start = Instant::now();
    let joined = loop {
        assert!(m1.running() && m2.running(), "a member exited");
        if let Some(gen) = hostile.joined() {
            break i64::from(gen);
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the large member never joined"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let id = hostile.member_id();
    // Its session (10 s) or the rebalance timeout ends it; the members
    // rejoin meanwhile.
    let start = Instant::now();
    loop {
        for m in [&mut m1, &mut m2] {
            assert!(
                m.running(),
                "a member exited instead of serving on: {}",
                m.stderr()
            );
        }
        let later = |m: &MemberProc| {
            m.holding()
                .is_some_and(|h| h["generation"].as_i64().unwrap() > joined)
        };
        if later(&m1) && later(&m2) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no generation after the large member's within 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let held = wait_stable(&[&m1, &m2], &topics, Duration::from_secs(30));
    assert!(held[0]["generation"].as_i64().unwrap() > joined);
    let (leader, other) = if m1.stderr().contains("the largest subscription") {
        (&m1, &m2)
    } else {
        (&m2, &m1)
    };
    let said = leader.stderr();
    let failed = format!("could not store generation {joined} of group '{g}'");
    assert!(
        said.contains(&failed)
            && said.contains("UNKNOWN_SERVER_ERROR")
            && names_the_large_member(&said, &id, bytes),
        "the leader should name the cause and the member:\n{said}"
    );
    let said = other.stderr();
    assert!(
        said.contains(&failed) && said.contains("its leader, member"),
        "the other member should say what happened:\n{said}"
    );
    drop(hostile);
    assert_eq!(m1.terminate(), 0);
    assert_eq!(m2.terminate(), 0);
}

/// The same member, but it stays: it rejoins every generation with the same
/// 4 MB. No generation can be stored while it is in the group, so the
/// leader stops (exit 2) saying so, naming it and what to do, rather than
/// rebalance forever or exit naming nothing.
#[test]
fn a_member_too_large_to_store_that_stays_stops_the_leader_naming_it() {
    let (a, b, g) = names("too-large-stays");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let m1 = MemberProc::start(&g, &topics, &[]);
    wait_stable(&[&m1], &topics, Duration::from_secs(60));
    let metadata = claiming_subscription(&a, CLAIMS);
    let bytes = metadata.len();
    let hostile = RawMember::start(&g, metadata);
    let (code, _, said) = m1.wait(Duration::from_secs(120));
    let id = hostile.member_id();
    assert_eq!(code, 2, "{said}");
    assert!(
        said.contains(&format!("group '{g}'"))
            && said.contains(&format!("cannot be served while member {id}"))
            && names_the_large_member(&said, &id, bytes),
        "the error should say the group cannot be served while that member stays, and name it:\n{said}"
    );
    drop(hostile);
}

/// `partwise` with `args`: its exit code, stdout and stderr.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = crate::common::partwise().args(args).output().unwrap();
    let err = crate::common::text(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (out.status.code(), crate::common::text(&out.stdout), err)
}

/// The same group (two partwise members and the hostile one, settled) as
/// `kafka group`, `kafka group --readiness` and `report -b` describe it:
/// they used to exit 2 for the whole group, naming no member. Now the
/// member is shown and marked, the others analysed, and it is a finding.
#[test]
fn group_readiness_and_report_mark_a_member_whose_subscription_cannot_be_decoded() {
    let (a, b, g) = names("describe-unreadable");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let mut m1 = MemberProc::start(&g, &topics, &[]);
    let mut m2 = MemberProc::start(&g, &topics, &[]);
    let before = wait_stable(&[&m1, &m2], &topics, Duration::from_secs(60));
    let gen_before = before[0]["generation"].as_i64().unwrap();
    let hostile = RawMember::start(&g, non_utf8_subscription(&a));
    let start = Instant::now();
    loop {
        assert!(m1.running() && m2.running(), "a partwise member exited");
        if let Some((gen, _)) = hostile.synced() {
            if i64::from(gen) > gen_before
                && assigned_in(&m1, gen.into()).is_some()
                && assigned_in(&m2, gen.into()).is_some()
            {
                break;
            }
        }
        assert!(start.elapsed() < Duration::from_secs(60), "never settled");
        std::thread::sleep(Duration::from_millis(100));
    }
    let id = hostile.member_id();
    let why = "subscription could not be decoded: subscription v0: subscribed topic name 1 is \
               not UTF-8 (bytes fffe)";
    let bootstrap = broker();

    let (code, out, err) = run(&["kafka", "group", "-b", &bootstrap, "-g", &g]);
    assert_eq!(code, Some(1), "{err}\n{out}");
    let row = out
        .lines()
        .find(|l| l.contains(&id))
        .unwrap_or_else(|| panic!("no row for {id}:\n{out}"));
    assert!(
        row.contains("(could not be decoded)") && row.contains(HOSTILE_CLIENT),
        "{row}"
    );
    assert!(
        out.contains(&format!("member-undecodable (client '{HOSTILE_CLIENT}'"))
            && out.contains(why)
            && out.contains("fix: "),
        "{out}"
    );
    assert!(
        out.contains("0 of 6 indices split"),
        "the others analysed:\n{out}"
    );

    let (code, out, err) = run(&[
        "kafka", "group", "-b", &bootstrap, "-g", &g, "--format", "json",
    ]);
    assert_eq!(code, Some(1), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let members = v["members"].as_array().unwrap();
    assert_eq!(members.len(), 3, "{v}");
    for m in members {
        if m["id"] == id.as_str() {
            assert_eq!(m["undecodable"], why);
            assert!(m["subscription"].is_null());
            assert_eq!(m["assignment"], serde_json::json!([]));
        } else {
            assert!(m.get("undecodable").is_none(), "{m}");
            assert_eq!(m["subscription"], serde_json::json!([a, b]));
        }
    }
    assert_eq!(v["findings"][0]["kind"], "member-undecodable");
    assert_eq!(v["split_count"], 0);
    assert_eq!(v["colocation"].as_array().unwrap().len(), 1, "{v}");

    let (code, out, err) = run(&[
        "kafka",
        "group",
        "-b",
        &bootstrap,
        "-g",
        &g,
        "--readiness",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(1), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let kinds: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"member-undecodable"), "{v}");
    assert!(
        !kinds.contains(&"range-splits"),
        "the others share one subscription: {v}"
    );

    let topology = crate::common::temp_file(format!(
        "[[topic]]\nname = \"{a}\"\npartitions = 6\n[[topic]]\nname = \"{b}\"\npartitions = 6\n\
         [[consumer_group]]\nname = \"{g}\"\nassignor = \"copartitioned\"\nmembers = 2\n\
         subscriptions = [\"{a}\", \"{b}\"]\n"
    ));
    let (code, out, err) = run(&[
        "report",
        topology.path().to_str().unwrap(),
        "-b",
        &bootstrap,
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(1), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let verdict = v["verdict"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["area"] == "live" && x["text"].as_str().unwrap().contains(&g))
        .unwrap_or_else(|| panic!("no verdict for {g}: {v}"))
        .clone();
    assert_eq!(verdict["ok"], false);
    assert!(
        verdict["text"]
            .as_str()
            .unwrap()
            .contains(&format!("member {id}: {why}")),
        "{verdict}"
    );
    drop(hostile);
}

/// Two classic members started with one `--group-instance-id`: the second
/// takes the first's place, and the coordinator answers the first
/// FENCED_INSTANCE_ID (to its heartbeat or, with traffic, maybe first to its
/// commit). It must stop with exit 2 naming the instance id (on an idle
/// topic it used to rejoin, fencing the other in turn, the two trading
/// every unit forever, each believing it held them all; with traffic it
/// exited 2 on the commit without saying why), and the second keeps every
/// unit.
fn one_instance_id_twice(tag: &str, traffic: bool) {
    let (a, b, g) = names(tag);
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let stop = Arc::new(Mutex::new(false));
    let producing = traffic.then(|| super::producer(vec![a.clone(), b.clone()], stop.clone()));
    let id = format!("{g}-static");
    let flags = ["--group-instance-id", id.as_str()];
    let first = MemberProc::start(&g, &topics, &flags);
    wait_stable(&[&first], &topics, Duration::from_secs(60));
    if traffic {
        let start = Instant::now();
        while !first.events().iter().any(|e| e["event"] == "record") {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "no record handled"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let mut second = MemberProc::start(&g, &topics, &flags);
    let start = Instant::now();
    // A heartbeat interval of 300 ms: the first learns within a second or
    // two; the bound leaves room for a slow machine.
    let (code, _, stderr) = first.wait(Duration::from_secs(20));
    let took = start.elapsed();
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("FENCED_INSTANCE_ID")
            && stderr.contains(&format!("group.instance.id '{id}'"))
            && stderr.contains("took this member's place"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let held = wait_stable(&[&second], &topics, Duration::from_secs(30));
    assert_eq!(units_of(&held[0]).len(), 6);
    // And it keeps them: nothing revoked for a few heartbeats more.
    let events = second.events().len();
    std::thread::sleep(Duration::from_secs(3));
    assert!(second.running(), "{}", second.stderr());
    let later = second.events();
    assert!(
        later[events..].iter().all(|e| e["event"] != "revoked"),
        "the second member lost its units: {:?}",
        &later[events..]
    );
    assert!(second.holding().is_some());
    *stop.lock().unwrap() = true;
    if let Some(p) = producing {
        p.join().unwrap();
    }
    assert_eq!(second.terminate(), 0);
}

#[test]
fn of_two_members_with_one_instance_id_the_fenced_one_exits_and_the_other_keeps_every_unit() {
    one_instance_id_twice("instance", false);
}

#[test]
fn with_traffic_of_two_members_with_one_instance_id_the_fenced_one_exits_naming_it() {
    one_instance_id_twice("instance-traffic", true);
}
