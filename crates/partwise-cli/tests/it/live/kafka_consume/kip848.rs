//! `partwise kafka consume --group-protocol consumer` (KIP-848) against
//! Apache Kafka (4.4.0; 4.0.2 and 4.1.2 in scripts/test's broker matrix):
//! the broker computes the assignment with a server assignor, and the
//! member hands out units only when it owns all their partitions.
//!
//! The tests share one private broker, started on first use, whose consumer
//! groups have a 6 s session and a 500 ms heartbeat (the broker's defaults,
//! 45 s and 5 s, are also its minimums, which would make churn slow). It
//! runs partwise's broker-side assignor (`dev.partwise.BrokerCopartitionedAssignor`
//! from `bindings/java`, on its class path and in `group.consumer.assignors`),
//! which the co-partitioning tests ask for as [`ASSIGNOR`]; the built-in
//! `uniform` and `range` stay available.

use super::{
    deleting_a_topic_mid_consume_is_exit_2_naming_it, partitions_of, produce_keys, producer_at,
    units_of, wait_handled, wait_stable, MemberProc, OffsetSampler,
};
use partwise_faults::{
    ApiKey, FaultProxy, KafkaCluster, Rule, COORDINATOR_LOAD_IN_PROGRESS,
    COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The server assignor the co-partitioning tests ask for.
const ASSIGNOR: &str = "copartitioned";

/// The private broker's consumer-group settings.
const BROKER_SETTINGS: &[&str] = &[
    "group.consumer.session.timeout.ms=6000",
    "group.consumer.min.session.timeout.ms=6000",
    "group.consumer.heartbeat.interval.ms=500",
    "group.consumer.min.heartbeat.interval.ms=500",
    "group.consumer.assignors=uniform,range,dev.partwise.BrokerCopartitionedAssignor",
];

/// bindings/java's jar (`bash bindings/java/test --classpath` builds it), copied
/// so that a rebuild while the broker runs cannot change classes under it.
fn assignor_jar() -> std::path::PathBuf {
    let built = partwise_faults::live::repo()
        .join("bindings/java/target/partwise-copartitioned-assignor-0.1.0.jar");
    assert!(
        built.is_file(),
        "{} is missing: `bash bindings/java/test --classpath` builds it (scripts/test does)",
        built.display()
    );
    let copy = std::env::temp_dir().join(format!("partwise-assignor-{}.jar", std::process::id()));
    std::fs::copy(&built, &copy).unwrap();
    copy
}

/// The private broker, started by the first test that needs it; its
/// watchdog stops it when the test process ends.
fn kafka() -> &'static str {
    static KAFKA: OnceLock<KafkaCluster> = OnceLock::new();
    KAFKA
        .get_or_init(|| {
            let jar = assignor_jar();
            KafkaCluster::start_with_jars(1, BROKER_SETTINGS, &[jar.as_path()])
                .expect("a private broker")
        })
        .bootstrap()
}

/// A consumer-protocol member of `group` asking for `assignor`.
fn member(group: &str, topics: &[&str], assignor: &str) -> MemberProc {
    member_at(kafka(), group, topics, assignor)
}

/// [`member`] bootstrapped from `bootstrap` (a proxy of the private broker).
fn member_at(bootstrap: &str, group: &str, topics: &[&str], assignor: &str) -> MemberProc {
    MemberProc::start_at(
        bootstrap,
        group,
        topics,
        &[
            "--group-protocol",
            "consumer",
            "--remote-assignor",
            assignor,
        ],
    )
}

fn names(test: &str) -> (String, String, String) {
    crate::common::names("pw848", test)
}

/// What each member printed, checked against the consumer protocol's
/// promises: in every `assigned` event each listed unit is whole (partition
/// p of every topic), and the partitions held beyond them are not processed;
/// records come only from whole units held at that moment; a `revoked`
/// event names only partitions the member held; and no partition is held by
/// two members at one member epoch (the coordinator's target assignment of
/// one group epoch gives each partition one owner, and a member holds only
/// partitions of its target). Returns every (member, epoch, partition held
/// but not in a unit) seen.
fn check_epochs(all_events: &[Vec<Value>], topics: &[&str]) -> Vec<(usize, i64, (String, i64))> {
    let mut by_epoch: BTreeMap<i64, BTreeMap<(String, i64), usize>> = BTreeMap::new();
    let mut halves = Vec::new();
    for (m, events) in all_events.iter().enumerate() {
        let mut held: BTreeSet<(String, i64)> = BTreeSet::new();
        let mut whole: BTreeSet<(String, i64)> = BTreeSet::new();
        for e in events {
            match e["event"].as_str().unwrap() {
                "assigned" => {
                    assert_eq!(e["leader"], false, "the broker assigns: {e}");
                    held = partitions_of(e);
                    whole.clear();
                    for u in units_of(e) {
                        for t in topics {
                            let tp = (t.to_string(), u);
                            assert!(held.contains(&tp), "unit {u} not whole: {e}");
                            whole.insert(tp);
                        }
                    }
                    let epoch = e["generation"].as_i64().unwrap();
                    assert!(epoch > 0, "member epoch {epoch}: {e}");
                    for tp in &held {
                        if !whole.contains(tp) {
                            halves.push((m, epoch, tp.clone()));
                        }
                        let owner = by_epoch.entry(epoch).or_default().entry(tp.clone());
                        let first = *owner.or_insert(m);
                        assert_eq!(
                            first, m,
                            "epoch {epoch}: {tp:?} held by members {first} and {m}"
                        );
                    }
                }
                "revoked" => {
                    for tp in partitions_of(e) {
                        assert!(held.contains(&tp), "revoked {tp:?} not held: {e}");
                    }
                    held.clear();
                    whole.clear();
                }
                "record" => {
                    let tp = (
                        e["topic"].as_str().unwrap().to_string(),
                        e["partition"].as_i64().unwrap(),
                    );
                    assert!(
                        whole.contains(&tp),
                        "record of a partition not in a whole unit: {e}"
                    );
                }
                other => panic!("unknown event {other}"),
            }
        }
    }
    halves
}

/// Every (topic, key hex) some member printed as a record.
fn handled(all_events: &[Vec<Value>]) -> BTreeSet<(String, String)> {
    all_events
        .iter()
        .flatten()
        .filter(|e| e["event"] == "record")
        .map(|e| {
            (
                e["topic"].as_str().unwrap().to_string(),
                e["key_hex"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn create(topics: &[&str]) {
    super::create_at(kafka(), topics)
}

#[test]
fn one_to_six_members_with_churn_own_whole_units_and_lose_nothing() {
    let (a, b, g) = names("churn");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let stop = Arc::new(Mutex::new(false));
    let prod = producer_at(kafka(), vec![a.clone(), b.clone()], stop.clone());
    // Committed offsets, sampled throughout: none may ever decrease.
    let sampler = OffsetSampler::start(kafka(), &g, &topics);
    let mut members: Vec<MemberProc> = Vec::new();
    let mut finished: Vec<Vec<Value>> = Vec::new();
    for n in 1..=6 {
        members.push(member(&g, &topics, ASSIGNOR));
        let refs: Vec<&MemberProc> = members.iter().collect();
        let held = wait_settled(&g, &refs, &topics, Duration::from_secs(60));
        let mut sizes: Vec<usize> = held.iter().map(|h| units_of(h).len()).collect();
        sizes.sort();
        // Equal subscriptions and counts, under the copartitioned assignor: whole units, balanced.
        assert_eq!(sizes.iter().sum::<usize>(), 6, "{n} members: {sizes:?}");
        assert!(
            sizes[sizes.len() - 1] - sizes[0] <= 1,
            "{n} members unbalanced: {sizes:?}"
        );
    }
    // Churn: a clean leave, a SIGKILL (its partitions come back after the
    // 6 s session), a join.
    std::thread::sleep(Duration::from_secs(1));
    let m = members.remove(0);
    let events = m.out.events.clone();
    assert_eq!(m.terminate(), 0, "clean leave");
    finished.push(events.lock().unwrap().clone());
    let refs: Vec<&MemberProc> = members.iter().collect();
    wait_settled(&g, &refs, &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));
    finished.push(members.remove(0).kill());
    members.push(member(&g, &topics, ASSIGNOR));
    let refs: Vec<&MemberProc> = members.iter().collect();
    wait_settled(&g, &refs, &topics, Duration::from_secs(90));
    std::thread::sleep(Duration::from_secs(1));
    *stop.lock().unwrap() = true;
    let sent = prod.join().unwrap();
    assert!(sent.len() > 100, "only {} records produced", sent.len());
    let everything = || {
        let mut all = finished.clone();
        all.extend(members.iter().map(|m| m.events()));
        all
    };
    wait_handled(everything, &sent, Duration::from_secs(60));
    let halves = check_epochs(&everything(), &topics);
    // Half units are possible for a moment (a partition still being
    // released by its last owner), never processed; the check above holds.
    eprintln!("partitions held outside whole units: {}", halves.len());
    // The commits (OffsetCommit v9 with the member epoch) reach the ends.
    super::wait_committed_to_end(kafka(), &g, &topics, Duration::from_secs(60));
    sampler.finish();
    for m in members {
        assert_eq!(m.terminate(), 0);
    }
}

/// Server `uniform` balances partitions, not units: four members over
/// 2 x 6 partitions get 3 partitions each, an odd number, so every member
/// holds a partition outside a whole unit, whatever the release's algorithm
/// (4.0 cuts the concatenated topics into slices; from 4.1 each topic is
/// spread on its own, its spare partitions going to other members) and
/// whatever order it takes the members and topic ids in. The members hold
/// those partitions and process none of them; once one member is alone
/// again it gets every unit back whole and handles what was produced
/// meanwhile.
#[test]
fn a_server_assignor_that_splits_units_gets_them_held_not_processed() {
    let (a, b, g) = names("uniform");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let first = produce_keys(kafka(), &topics, "alone-", 30);
    let m1 = member(&g, &topics, "uniform");
    wait_settled(&g, &[&m1], &topics, Duration::from_secs(60));
    wait_handled(|| vec![m1.events()], &first, Duration::from_secs(60));

    let others: Vec<MemberProc> = (0..3).map(|_| member(&g, &topics, "uniform")).collect();
    let all_members: Vec<&MemberProc> = std::iter::once(&m1).chain(&others).collect();
    let held = wait_settled(&g, &all_members, &topics, Duration::from_secs(60));
    for h in &held {
        let outside = partitions_of(h).len() - units_of(h).len() * topics.len();
        assert_eq!(partitions_of(h).len(), 3, "uniform is balanced: {held:?}");
        assert!(outside > 0, "an odd count cannot be whole units: {h}");
    }
    let events = || all_members.iter().map(|m| m.events()).collect::<Vec<_>>();
    let before = handled(&events());
    let during = produce_keys(kafka(), &topics, "split-", 30);
    // A record of a split unit must not be handled: give the members time
    // to fetch it, were they to.
    std::thread::sleep(Duration::from_secs(4));
    let all = events();
    let halves = check_epochs(&all, &topics);
    assert!(!halves.is_empty(), "no partition was held outside a unit");
    // Key split-n went to partition n % 6 of both topics: only those of
    // units still whole may have been handled.
    let whole: BTreeSet<i64> = held.iter().flat_map(units_of).collect();
    let leaked: Vec<_> = handled(&all)
        .difference(&before)
        .filter(|(t, k)| {
            (0..30).any(|n: i64| {
                *k == partwise_faults::live::hex(format!("split-{n}").as_bytes())
                    && !whole.contains(&(n % 6))
                    && topics.contains(&t.as_str())
            })
        })
        .cloned()
        .collect();
    assert!(
        leaked.is_empty(),
        "records of split units handled: {leaked:?}"
    );
    // The members say on stderr what they hold and how to stop it.
    for m in &all_members {
        let err = m.stderr();
        assert!(
            err.contains("of units that are not whole")
                && err.contains("the server assignor 'uniform' splits units")
                && err.contains("--remote-assignor copartitioned"),
            "{err}"
        );
    }

    // Alone again, m1 owns every unit whole and handles what waited (what
    // a member with a unit whole handled and committed meanwhile, it
    // does not see again).
    drop(all_members);
    let mut gone = Vec::new();
    for m in others {
        let events = m.out.events.clone();
        assert_eq!(m.terminate(), 0);
        gone.push(events.lock().unwrap().clone());
    }
    wait_settled(&g, &[&m1], &topics, Duration::from_secs(60));
    let everyone = || {
        let mut all = gone.clone();
        all.push(m1.events());
        all
    };
    wait_handled(everyone, &during, Duration::from_secs(60));
    check_epochs(&everyone(), &topics);
    assert_eq!(m1.terminate(), 0);
}

#[test]
fn an_assignor_the_broker_does_not_offer_is_exit_2_naming_it() {
    let (a, _, g) = names("nosuch");
    create(&[&a]);
    let m = member(&g, &[&a], "nosuch");
    let (code, events, err) = m.wait(Duration::from_secs(60));
    assert_eq!(code, 2, "{err}");
    assert!(events.is_empty(), "{events:?}");
    assert!(
        err.contains("'nosuch'") && err.contains("UNSUPPORTED_ASSIGNOR"),
        "{err}"
    );
    assert!(err.contains("group.consumer.assignors"), "{err}");
}

/// A member stopped (SIGSTOP) past its session is expelled by the
/// coordinator and its units go to the others; resumed, it must learn that
/// from a heartbeat before handing out anything fetched meanwhile: its first
/// event is the revocation, no record comes before its new assignment, and
/// nothing produced is lost.
#[test]
fn a_member_stopped_past_its_session_handles_nothing_it_lost() {
    let (a, b, g) = names("stopped");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let stop = Arc::new(Mutex::new(false));
    let prod = producer_at(kafka(), vec![a.clone(), b.clone()], stop.clone());
    let m1 = member(&g, &topics, ASSIGNOR);
    let m2 = member(&g, &topics, ASSIGNOR);
    let m3 = member(&g, &topics, ASSIGNOR);
    wait_settled(&g, &[&m1, &m2, &m3], &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));
    let lost = units_of(&m2.holding().unwrap());

    super::signal(&m2, "STOP");
    std::thread::sleep(Duration::from_millis(500));
    let frozen = m2.events().len();
    // The 6 s session expires and the others take its units.
    let after = wait_settled(&g, &[&m1, &m3], &topics, Duration::from_secs(60));
    let taken: BTreeSet<i64> = after.iter().flat_map(units_of).collect();
    assert!(lost.is_subset(&taken), "{lost:?} not taken over: {taken:?}");
    std::thread::sleep(Duration::from_secs(1));

    super::signal(&m2, "CONT");
    wait_settled(&g, &[&m1, &m2, &m3], &topics, Duration::from_secs(60));
    super::fenced_before_handling(&m2, frozen);

    std::thread::sleep(Duration::from_secs(1));
    *stop.lock().unwrap() = true;
    let sent = prod.join().unwrap();
    let all = || vec![m1.events(), m2.events(), m3.events()];
    wait_handled(all, &sent, Duration::from_secs(60));
    check_epochs(&all(), &topics);
    for m in [m1, m2, m3] {
        assert_eq!(m.terminate(), 0);
    }
}

/// The coordinator answering NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE and
/// COORDINATOR_LOAD_IN_PROGRESS to heartbeats and commits (as while it moves
/// to another broker): the members look it up again and keep their units,
/// without a revocation, and nothing is lost.
#[test]
fn on_coordinator_errors_members_find_it_again_and_keep_their_units() {
    let proxy = FaultProxy::start(kafka()).unwrap();
    let (a, b, g) = names("coord");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let stop = Arc::new(Mutex::new(false));
    let prod = producer_at(kafka(), vec![a.clone(), b.clone()], stop.clone());
    let m1 = member_at(proxy.addr(), &g, &topics, ASSIGNOR);
    let m2 = member_at(proxy.addr(), &g, &topics, ASSIGNOR);
    wait_settled(&g, &[&m1, &m2], &topics, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(1));
    let revoked = |m: &MemberProc| super::count(&m.events(), "revoked");
    let before = (revoked(&m1), revoked(&m2));
    // Two of each, fewer than a 6 s session's worth of retries.
    for code in [
        NOT_COORDINATOR,
        COORDINATOR_NOT_AVAILABLE,
        COORDINATOR_LOAD_IN_PROGRESS,
    ] {
        for api in [ApiKey::ConsumerGroupHeartbeat, ApiKey::OffsetCommit] {
            proxy
                .set_rule(Rule::Error {
                    api,
                    code,
                    times: 2,
                })
                .unwrap();
        }
    }
    let t0 = std::time::Instant::now();
    while proxy.injected(ApiKey::ConsumerGroupHeartbeat) < 6 {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "heartbeats not failed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    *stop.lock().unwrap() = true;
    let sent = prod.join().unwrap();
    let all = || vec![m1.events(), m2.events()];
    wait_handled(all, &sent, Duration::from_secs(60));
    check_epochs(&all(), &topics);
    assert_eq!(
        (revoked(&m1), revoked(&m2)),
        before,
        "units revoked on a coordinator error"
    );
    assert!(
        proxy.seen(ApiKey::FindCoordinator) > 2,
        "the coordinator was not looked up again"
    );
    for m in [m1, m2] {
        assert_eq!(m.terminate(), 0);
    }
}

/// A broker that does not offer ConsumerGroupHeartbeat (API 68; Apache
/// Kafka before 4.0 without the feature, or Redpanda) is exit 2 saying so.
#[test]
fn a_broker_without_the_consumer_protocol_is_exit_2_saying_so() {
    let proxy = FaultProxy::start(kafka()).unwrap();
    proxy
        .set_rule(Rule::HideApi {
            api: ApiKey::ConsumerGroupHeartbeat,
        })
        .unwrap();
    let (a, _, g) = names("noapi");
    create(&[&a]);
    let m = member_at(proxy.addr(), &g, &[&a], ASSIGNOR);
    let (code, events, err) = m.wait(Duration::from_secs(60));
    assert_eq!(code, 2, "{err}");
    assert!(events.is_empty(), "{events:?}");
    assert!(
        err.contains("does not speak the consumer group protocol") && err.contains("classic"),
        "{err}"
    );
}

/// Static members: a second process with a `--group-instance-id` another
/// member holds is exit 2 with UNRELEASED_INSTANCE_ID naming it; a static
/// member that stops leaves with epoch -2, so its units wait for it (the
/// other member's stay as they were), and its restart gets them back.
#[test]
fn static_members_keep_their_units_across_a_restart_and_their_ids_are_theirs() {
    let (a, b, g) = names("static");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let start = |id: &str| {
        MemberProc::start_at(
            kafka(),
            &g,
            &topics,
            &[
                "--group-protocol",
                "consumer",
                "--remote-assignor",
                ASSIGNOR,
                "--group-instance-id",
                id,
            ],
        )
    };
    let m1 = start("s1");
    let m2 = start("s2");
    let held = wait_settled(&g, &[&m1, &m2], &topics, Duration::from_secs(60));
    let units1 = units_of(&held[0]);
    let units2 = units_of(&held[1]);

    let (code, events, err) = start("s1").wait(Duration::from_secs(60));
    assert_eq!(code, 2, "{err}");
    assert!(events.is_empty(), "{events:?}");
    assert!(
        err.contains("UNRELEASED_INSTANCE_ID") && err.contains("'s1'"),
        "{err}"
    );

    let revoked2 = super::count(&m2.events(), "revoked");
    let seen2 = m2.events().len();
    assert_eq!(m1.terminate(), 0);
    // Half a session: a member that left for good would have its units
    // given to m2 by now (heartbeats every 500 ms).
    std::thread::sleep(Duration::from_secs(3));
    for e in &m2.events()[seen2..] {
        if e["event"] == "assigned" {
            assert_eq!(
                units_of(e),
                units2,
                "m2 took the static member's units: {e}"
            );
        }
    }
    let m1 = start("s1");
    let held = wait_settled(&g, &[&m1, &m2], &topics, Duration::from_secs(60));
    assert_eq!(
        units_of(&held[0]),
        units1,
        "the restarted static member's units"
    );
    assert_eq!(units_of(&held[1]), units2);
    assert_eq!(
        super::count(&m2.events(), "revoked"),
        revoked2,
        "the other member gave up units: {:?}",
        m2.events()
    );
    check_epochs(&[m1.events(), m2.events()], &topics);
    for m in [m1, m2] {
        assert_eq!(m.terminate(), 0);
    }
}

/// A consumer-protocol member joining a live classic group of partwise
/// `copartitioned` members asks the broker to upgrade the group online,
/// which Apache Kafka refuses for an assignor it does not know: exit 2 with
/// the broker's words, and the classic member keeps its units.
#[test]
fn joining_a_classic_copartitioned_group_is_refused_as_an_upgrade() {
    let (a, b, g) = names("upgrade");
    create(&[&a, &b]);
    let topics = [a.as_str(), b.as_str()];
    let classic = MemberProc::start_at(kafka(), &g, &topics, &[]);
    wait_stable(&[&classic], &topics, Duration::from_secs(60));
    let (code, events, err) = member(&g, &topics, ASSIGNOR).wait(Duration::from_secs(60));
    assert_eq!(code, 2, "{err}");
    assert!(events.is_empty(), "{events:?}");
    assert!(
        err.contains("GROUP_ID_NOT_FOUND")
            && err.contains("Cannot upgrade classic group")
            && err.contains("custom assignor"),
        "{err}"
    );
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(super::count(&classic.events(), "revoked"), 0);
    assert_eq!(super::count(&classic.events(), "assigned"), 1);
    assert_eq!(classic.terminate(), 0);
}

/// A topic deleted under consumer-protocol members: the broker takes its
/// partitions away, which leaves the rest of each unit held but never
/// processed; the member says at once that the topic was deleted and exits
/// 2, as a classic member does. On the shared test broker, whose assignor
/// list has partwise's.
#[test]
fn a_topic_deleted_mid_consume_is_said_at_once_and_exit_2() {
    let (a, b, g) = names("deleted");
    let topics = [a.clone(), b.clone()];
    let extra = [
        "--group-protocol",
        "consumer",
        "--remote-assignor",
        ASSIGNOR,
    ];
    let all = deleting_a_topic_mid_consume_is_exit_2_naming_it(
        &partwise_faults::live::test_broker(),
        (a, b, g),
        &extra,
    );
    check_epochs(&all, &[&topics[0], &topics[1]]);
}

/// `kafka group --format json` of `group` on the private broker when it has
/// `n` members that own their targets, which together give every partition
/// of `topics` to one member, each member some; else what it has instead.
/// (Since Kafka 4.1 the coordinator computes a joiner's target a moment
/// after it joins, and until then gives the joiner the new group epoch with
/// an empty assignment while the others keep theirs: a group whose members
/// each hold one epoch and every partition once can still be moving.)
fn reconciled(group: &str, topics: &[&str], n: usize) -> Result<Value, String> {
    let (_, v) = crate::live::kafka_group::try_describe(kafka(), group, &[])?;
    let members = v["members"].as_array().cloned().unwrap_or_default();
    let mut targets = Vec::new();
    let mut reconciled = members.len() == n;
    for m in &members {
        if !m["target_assignment"].is_array() || !m["assignment"].is_array() {
            reconciled = false;
            continue;
        }
        let target = crate::live::kafka_group::owned(&m["target_assignment"]);
        let current = crate::live::kafka_group::owned(&m["assignment"]);
        reconciled &= target == current && !target.is_empty();
        targets.extend(target);
    }
    let distinct: BTreeSet<_> = targets.iter().cloned().collect();
    if reconciled
        && distinct.len() == targets.len()
        && targets.len() == topics.len() * super::PARTITIONS as usize
    {
        Ok(v)
    } else {
        Err(format!(
            "{} members, {} partitions targeted",
            members.len(),
            targets.len()
        ))
    }
}

/// [`reconciled`], the same targets on two descriptions in a row; the document.
fn settled_description(group: &str, topics: &[&str], n: usize) -> Value {
    let start = std::time::Instant::now();
    let mut last = String::new();
    let mut previous: Option<BTreeMap<String, crate::live::kafka_group::Owned>> = None;
    while start.elapsed() < Duration::from_secs(60) {
        match reconciled(group, topics, n) {
            Ok(v) => {
                let now = self::targets(&v);
                if previous.as_ref() == Some(&now) {
                    return v;
                }
                previous = Some(now);
            }
            Err(e) => {
                previous = None;
                last = e;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("group {group} did not settle with {n} members within 60 s: {last}");
}

/// Waits until `members` of `group` have settled as the coordinator sees it
/// ([`reconciled`]) and each member's own last `assigned` event is what the
/// coordinator says it owns, twice in a row; returns each member's
/// assignment. The members' events alone cannot tell a settled group from
/// one whose joiner has no target yet (see [`reconciled`]).
fn wait_settled(
    group: &str,
    members: &[&MemberProc],
    topics: &[&str],
    limit: Duration,
) -> Vec<Value> {
    let start = std::time::Instant::now();
    let mut last = String::new();
    let mut previous: Option<Vec<Value>> = None;
    while start.elapsed() < limit {
        match reconciled(group, topics, members.len()) {
            Ok(v) => {
                let owners: BTreeMap<String, crate::live::kafka_group::Owned> = v["members"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| {
                        (
                            m["id"].as_str().unwrap().to_string(),
                            crate::live::kafka_group::owned(&m["assignment"]),
                        )
                    })
                    .collect();
                let held: Option<Vec<Value>> = members.iter().map(|m| m.holding()).collect();
                let agrees = held.as_ref().is_some_and(|held| {
                    held.iter().all(|h| {
                        h["member"].as_str().and_then(|id| owners.get(id))
                            == Some(&crate::live::kafka_group::owned(&h["partitions"]))
                    })
                });
                if agrees {
                    if previous == held {
                        return held.unwrap();
                    }
                    previous = held;
                } else {
                    previous = None;
                    last = format!("the members' own events differ from {owners:?}");
                }
            }
            Err(e) => {
                previous = None;
                last = e;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!(
        "group {group} of {} members did not settle within {limit:?}: {last}",
        members.len()
    );
}

/// Each member's target assignment in a `kafka group` document.
fn targets(v: &Value) -> BTreeMap<String, crate::live::kafka_group::Owned> {
    v["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_string(),
                crate::live::kafka_group::owned(&m["target_assignment"]),
            )
        })
        .collect()
}

/// What `partwise assign --group FILE -a model` gives the members of
/// `after`, each owning its target of `before` (none when it joined since).
fn predicted(
    before: &Value,
    after: &Value,
    model: &str,
    reversed: bool,
) -> BTreeMap<String, crate::live::kafka_group::Owned> {
    let owned: BTreeMap<String, Value> = before["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_string(),
                m["target_assignment"].clone(),
            )
        })
        .collect();
    let mut file = after.clone();
    for m in file["members"].as_array_mut().unwrap() {
        let id = m["id"].as_str().unwrap().to_string();
        m["owned_partitions"] = owned
            .get(&id)
            .cloned()
            .unwrap_or_else(|| serde_json::json!([]));
        m["assignment"] = Value::Null;
    }
    if reversed {
        if let Some(t) = file["topics"].as_array_mut() {
            t.reverse();
        }
    }
    let path = std::env::temp_dir().join(format!(
        "partwise-churn-{}-{}.json",
        std::process::id(),
        after["members"].as_array().unwrap().len()
    ));
    std::fs::write(&path, serde_json::to_vec(&file).unwrap()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_partwise"))
        .args(["assign", "--group"])
        .arg(&path)
        .args(["-a", model, "--format", "json"])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "assign --group: {e}: {} / {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    doc["assignment"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, ps)| (id.clone(), crate::live::kafka_group::owned(ps)))
        .collect()
}

/// The models of `uniform` the broker's release may run: the one `kafka
/// group --assignor kip848:uniform` names from its API versions, or, for a
/// 4.0 broker (whose API versions do not tell 4.0.0 from 4.0.1), the release
/// it was started as (PARTWISE_KAFKA_VERSION), else both.
fn broker_uniform_models(group: &str) -> Vec<String> {
    let (_, v) =
        crate::live::kafka_group::try_describe(kafka(), group, &["--assignor", "kip848:uniform"])
            .unwrap();
    let p = &v["prediction"];
    match p["server_assignor_model"].as_str() {
        Some(m) => vec![m.to_string()],
        None => {
            assert_eq!(p["broker_release_line"], "4.0", "{p}");
            match std::env::var("PARTWISE_KAFKA_VERSION") {
                Ok(r) if r.starts_with("4.0.") => vec![format!("kip848:uniform@{r}")],
                _ => vec!["kip848:uniform@4.0.0".into(), "kip848:uniform@4.0.1".into()],
            }
        }
    }
}

/// `uniform`, the brokers' default server assignor, through churn: two
/// members, a third joins, the first leaves, a fourth joins. After each
/// change settles, the broker's target assignment (ConsumerGroupDescribe,
/// through `kafka group --format json`) is what partwise's model of the
/// broker's release computes offline (`assign --group`) from the group as
/// described before the change: every member owning its target then, a
/// joiner owning nothing, the leaver gone.
#[test]
fn kip848_uniform_targets_through_churn_are_partwises_model_of_the_brokers_release() {
    let (a, b, group) = names("uniform-churn");
    let topics = [a.as_str(), b.as_str()];
    create(&topics);
    let mut members = vec![
        member(&group, &topics, "uniform"),
        member(&group, &topics, "uniform"),
    ];
    let mut before = settled_description(&group, &topics, 2);
    let models = broker_uniform_models(&group);
    let check = |before: &Value, after: &Value, change: &str| {
        let live = targets(after);
        // Topic ids that share a bucket of the coordinator's HashSet<Uuid>
        // iterate in the order the set was filled, which no description
        // shows: then either order is the model's answer.
        let ids: Vec<[u8; 16]> = after["topics"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["id"].as_str())
            .filter_map(partwise::assign::group_file::topic_id_bytes)
            .collect();
        let orders: &[bool] = if partwise::assign::order::java_uuid_hashset_ties(&ids) {
            &[false, true]
        } else {
            &[false]
        };
        let agree: Vec<&String> = models
            .iter()
            .filter(|m| {
                orders
                    .iter()
                    .any(|&r| predicted(before, after, m, r) == live)
            })
            .collect();
        assert!(
            !agree.is_empty(),
            "after {change}, the broker's targets {live:?} (before: {:?}) are not what {models:?} give: {:?}",
            targets(before),
            models
                .iter()
                .map(|m| predicted(before, after, m, false))
                .collect::<Vec<_>>()
        );
    };
    members.push(member(&group, &topics, "uniform"));
    let after = settled_description(&group, &topics, 3);
    check(&before, &after, "a third member joined");
    before = after;
    let first = members.remove(0);
    assert_eq!(first.terminate(), 0);
    let after = settled_description(&group, &topics, 2);
    check(&before, &after, "the first member left");
    before = after;
    members.push(member(&group, &topics, "uniform"));
    let after = settled_description(&group, &topics, 3);
    check(&before, &after, "a fourth member joined");
    drop(members);
}
