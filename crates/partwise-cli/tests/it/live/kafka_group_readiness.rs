//! `partwise kafka group --readiness` against what Apache Kafka (4.4.0;
//! 4.0.2 and 4.1.2 in scripts/test's broker matrix) really does (the
//! broker at PARTWISE_KAFKA_BOOTSTRAP): the predicted online upgrade of a
//! classic group is the coordinator's answer when a
//! `group.protocol=consumer` Java member joins it, both ways (a
//! `copartitioned` group refused, a `range` group upgraded; on private
//! brokers, the migration policy and both size rules), and the split
//! predicted for server `range` from a classic group's subscriptions is the
//! split the broker's `range` gives consumer-protocol members subscribed the
//! same way.

use super::kafka_group::{
    java_member, java_member_with, owned, partwise_member, reports_of, split_from_reports,
    try_describe, wait_described, Owned, Proc,
};
use assert_cmd::Command as Cmd;
use partwise_faults::live::{create_topics, kafka_bootstrap as bootstrap, unique};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The release of the broker at PARTWISE_KAFKA_BOOTSTRAP, as its
/// server.log (in PARTWISE_KAFKA_DIR) names it.
fn broker_release() -> String {
    let dir = partwise_faults::live::env("PARTWISE_KAFKA_DIR");
    let log = std::fs::read_to_string(format!("{dir}/node-1/server.log")).unwrap();
    log.split("Kafka version: ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("server.log names the Kafka version")
        .to_string()
}

/// `--readiness --format json`: exit code and document.
fn readiness(b: &str, group: &str) -> (i32, Value) {
    let (code, v) = try_describe(b, group, &["--readiness"]).unwrap_or_else(|e| panic!("{e}"));
    assert!(v["readiness"].is_object(), "{v}");
    (code, v)
}

fn kinds(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Describes with `--readiness` until the consumer-protocol group's members
/// own their targets and report owning them, `total` partitions in all: the
/// exit code, the document and the reports.
fn wait_reconciled(
    b: &str,
    group: &str,
    procs: &mut [Proc],
    total: usize,
) -> (i32, Value, BTreeMap<String, Owned>) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let reports = reports_of(procs);
        if let Ok((code, v)) = try_describe(b, group, &["--readiness"]) {
            let described: BTreeMap<String, Owned> = v["members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    (
                        m["id"].as_str().unwrap().to_string(),
                        owned(&m["assignment"]),
                    )
                })
                .collect();
            if v["readiness"]["reconciled"] == true
                && described == reports
                && reports.values().map(|o| o.len()).sum::<usize>() == total
            {
                return (code, v, reports);
            }
            assert!(
                Instant::now() < deadline,
                "never reconciled: {v}\nreports: {reports:?}"
            );
        }
        assert!(Instant::now() < deadline, "group {group} never described");
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// A classic Java `range` group where j1 reads only `x`: `--readiness`
/// predicts that server range splits `x`'s indices held by j1; consumer-
/// protocol Java members with `group.remote.assignor=range` subscribed the
/// same way get exactly that split from the broker (its target and their
/// own reports), and with equal subscriptions none.
#[test]
fn server_range_splits_what_readiness_predicts() {
    let b = bootstrap();
    let (x, y) = (unique("pwrd-rx"), unique("pwrd-ry"));
    create_topics(&b, &[(&x, 6), (&y, 6)]);
    let names = [x.as_str(), y.as_str()];
    let classic = unique("pwrd-classic");
    let mut procs = vec![
        java_member(&b, &classic, &names, "range", "j0"),
        java_member(&b, &classic, &[&x], "range", "j1"),
    ];
    wait_described(&b, &classic, "id", || reports_of(&mut procs));
    let (code, v) = readiness(&b, &classic);
    let range = &v["readiness"]["server_range"];
    let predicted = range["split_count"].as_u64().unwrap();
    assert_eq!(predicted, 3, "{v}");
    assert_eq!(range["subscriptions"].as_array().unwrap().len(), 2, "{v}");
    assert!(kinds(&v).contains(&"range-splits".to_string()), "{v}");
    // Range writes no assignment user data: the upgrade would be allowed.
    assert_eq!(v["readiness"]["upgrade"]["verdict"], "allowed", "{v}");
    assert_eq!(code, 1);
    drop(procs);
    // The models are the broker's release's (the release its server.log
    // names): a 4.0 broker leaves uniform undecided and predicts no uniform
    // target; later ones predict one with kip848:uniform.
    let release = broker_release();
    let line = release.splitn(3, '.').take(2).collect::<Vec<_>>().join(".");
    let models = &v["readiness"]["server_assignor_models"];
    assert_eq!(
        models["uniform"]["broker_release_line"],
        line.as_str(),
        "{v}"
    );
    assert_eq!(models["range"]["model"], "kip848:range", "{v}");
    assert_eq!(range["model"], "kip848:range", "{v}");
    let uniform = &v["readiness"]["server_uniform"];
    if line == "4.0" {
        assert!(models["uniform"]["model"].is_null(), "{v}");
        assert!(uniform.is_null(), "{v}");
    } else {
        assert_eq!(models["uniform"]["model"], "kip848:uniform", "{v}");
        assert_eq!(uniform["model"], "kip848:uniform", "{v}");
        assert!(uniform["split_count"].is_u64(), "{v}");
    }

    for (subs, split) in [
        (vec![&names[..], &[x.as_str()]], predicted),
        (vec![&names[..], &names[..]], 0),
    ] {
        let group = unique("pwrd-848");
        let mut procs: Vec<Proc> = subs
            .iter()
            .enumerate()
            .map(|(i, s)| {
                // The splitting group's members run client ids of the
                // user's own (unknown); the other's Java's default ones.
                let id = if split > 0 {
                    format!("k{i}")
                } else {
                    format!("consumer-{group}-{i}")
                };
                java_member_with(&b, &group, s, "range", &id, "consumer")
            })
            .collect();
        // Reconciliation moves partitions one revocation at a time: the
        // members' own reports count only once they own their targets.
        let (code, v, reports) = wait_reconciled(&b, &group, &mut procs, 12);
        assert_eq!(
            split_from_reports(&reports, &names, 6) as u64,
            split,
            "{reports:?}"
        );
        assert_eq!(v["group_protocol"], "consumer", "{v}");
        assert_eq!(v["readiness"]["assignor"], "range", "{v}");
        assert_eq!(v["readiness"]["target"]["split_count"], split, "{v}");
        // On the group's own members, partwise's server range is the broker's, partition for partition.
        assert_eq!(
            v["readiness"]["server_range"]["assignment"], v["readiness"]["target"]["assignment"],
            "{v}"
        );
        if split > 0 {
            assert_eq!(kinds(&v), ["client-unknown", "target-splits"], "{v}");
            let unknown = &v["findings"][0]["message"];
            assert!(
                unknown.as_str().unwrap().contains("(client id 'k0')"),
                "{v}"
            );
            assert_eq!(code, 1);
        } else {
            assert_eq!(v["readiness"]["clients"][0]["client"], "java", "{v}");
            assert!(kinds(&v).is_empty(), "{v}");
            assert_eq!(code, 0, "{v}");
        }
    }
}

/// Waits for a member process to exit; its stderr.
fn exited(p: &mut Proc, limit: Duration) -> Option<String> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if p.child.try_wait().unwrap().is_some() {
            std::thread::sleep(Duration::from_millis(200));
            return Some(p.out.stderr.lock().unwrap().clone());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    None
}

/// A classic group of `partwise kafka consume --assignor copartitioned`
/// members (their leader writes the co-partition groups into every
/// assignment's user data): `--readiness` predicts the online upgrade is
/// refused, and a Java `group.protocol=consumer` member joining the group
/// is refused with the broker's words, the group staying classic. A classic
/// Java `range` group (no user data) is predicted upgradable, and the Java
/// member's join converts it.
#[test]
fn online_upgrade_is_what_readiness_predicts_both_ways() {
    let b = bootstrap();
    let (x, y) = (unique("pwrd-ux"), unique("pwrd-uy"));
    create_topics(&b, &[(&x, 6), (&y, 6)]);
    let names = [x.as_str(), y.as_str()];

    let group = unique("pwrd-pw");
    let mut procs: Vec<Proc> = (0..2)
        .map(|_| partwise_member(&b, &group, &names))
        .collect();
    wait_described(&b, &group, "id", || {
        let r = reports_of(&mut procs);
        if r.len() == 2 {
            r
        } else {
            BTreeMap::new()
        }
    });
    let (code, v) = readiness(&b, &group);
    let upgrade = &v["readiness"]["upgrade"];
    assert_eq!(upgrade["verdict"], "refused", "{v}");
    assert_eq!(upgrade["error"], "GROUP_ID_NOT_FOUND", "{v}");
    assert!(
        kinds(&v).contains(&"upgrade-refused-custom-assignor".to_string()),
        "{v}"
    );
    assert_eq!(code, 1);
    let mut joining = java_member_with(&b, &group, &names, "uniform", "up0", "consumer");
    let said = exited(&mut joining, Duration::from_secs(60)).unwrap_or_else(|| {
        panic!(
            "the consumer-protocol member was not refused: {:?}",
            joining.out.events()
        )
    });
    let predicted = upgrade["message"].as_str().unwrap();
    assert!(
        predicted.contains("because an unsupported custom assignor is in use"),
        "{v}"
    );
    assert!(
        said.contains(predicted),
        "the broker's answer is not the predicted {predicted:?}:\n{said}"
    );
    let (_, v) = try_describe(&b, &group, &[]).unwrap();
    assert_eq!(v["group_protocol"], "classic", "{v}");
    assert_eq!(v["protocol"], "copartitioned", "{v}");
    drop(joining);
    drop(procs);

    let group = unique("pwrd-range");
    let mut procs = vec![
        java_member(&b, &group, &names, "range", "r0"),
        java_member(&b, &group, &names, "range", "r1"),
    ];
    wait_described(&b, &group, "id", || reports_of(&mut procs));
    let (_, v) = readiness(&b, &group);
    assert_eq!(v["readiness"]["upgrade"]["verdict"], "allowed", "{v}");
    assert!(!kinds(&v).iter().any(|k| k.starts_with("upgrade-")), "{v}");
    procs.push(java_member_with(
        &b, &group, &names, "range", "up1", "consumer",
    ));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        // reports_of panics if a member (the joining one) has exited.
        let r = reports_of(&mut procs);
        if let Ok((_, v)) = try_describe(&b, &group, &[]) {
            if v["group_protocol"] == "consumer" && r.len() == 3 {
                assert_eq!(v["members"].as_array().unwrap().len(), 3, "{v}");
                break;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the group was never upgraded: {r:?}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// A private broker with `group.consumer.max.size=2` (a static setting, so
/// not on the shared broker): `--readiness` reads it with DescribeConfigs and
/// predicts both size rules of the coordinator, and a joining Java
/// consumer-protocol member gets exactly those answers. Three classic members
/// exceed the maximum ("the group size exceeds the consumer group maximum
/// size"); two pass the upgrade check, and the joining member is then one too
/// many (GROUP_MAX_SIZE_REACHED); both groups stay classic.
#[test]
fn the_consumer_group_size_limit_is_predicted_both_ways() {
    let kafka = partwise_faults::KafkaCluster::start_with(1, &["group.consumer.max.size=2"])
        .expect("a private Apache Kafka");
    let b = kafka.bootstrap().to_string();
    let (x, y) = (unique("pwrd-sx"), unique("pwrd-sy"));
    create_topics(&b, &[(&x, 6), (&y, 6)]);
    let names = [x.as_str(), y.as_str()];
    for (size, error, said) in [
        (
            3,
            "GROUP_ID_NOT_FOUND",
            "because the group size exceeds the consumer group maximum size",
        ),
        (2, "GROUP_MAX_SIZE_REACHED", "GroupMaxSizeReachedException"),
    ] {
        let group = unique("pwrd-size");
        let mut procs: Vec<Proc> = (0..size)
            .map(|i| java_member(&b, &group, &names, "range", &format!("s{i}")))
            .collect();
        // A fresh broker has no coordinator until its offsets topic exists:
        // the members' first assignments say it does.
        let deadline = Instant::now() + Duration::from_secs(90);
        while reports_of(&mut procs).len() < size {
            assert!(Instant::now() < deadline, "the members never joined");
            std::thread::sleep(Duration::from_millis(300));
        }
        wait_described(&b, &group, "id", || {
            let r = reports_of(&mut procs);
            if r.len() == size {
                r
            } else {
                BTreeMap::new()
            }
        });
        let (code, v) = readiness(&b, &group);
        assert_eq!(v["brokers"][0]["consumer_max_size"], 2, "{v}");
        let upgrade = &v["readiness"]["upgrade"];
        assert_eq!(upgrade["verdict"], "refused", "{v}");
        assert_eq!(upgrade["error"], error, "{v}");
        // The members' client ids are the test's own (`s0`...), which no
        // client defaults to: their client is unknown, never ready.
        assert_eq!(kinds(&v), ["client-unknown", "upgrade-refused-size"], "{v}");
        assert_eq!(code, 1);
        let mut joining = java_member_with(&b, &group, &names, "range", "up", "consumer");
        let stderr = exited(&mut joining, Duration::from_secs(60)).unwrap_or_else(|| {
            panic!(
                "the consumer-protocol member was not refused: {:?}",
                joining.out.events()
            )
        });
        assert!(stderr.contains(said), "{error}:\n{stderr}");
        let predicted = upgrade["message"].as_str().unwrap();
        assert!(
            stderr.contains(predicted),
            "the broker's answer is not the predicted {predicted:?}:\n{stderr}"
        );
        let (_, v) = try_describe(&b, &group, &[]).unwrap();
        assert_eq!(v["group_protocol"], "classic", "{v}");
    }
}

/// A private broker with `group.consumer.migration.policy=downgrade`: the
/// coordinator's first check. `--readiness` reads the policy and predicts the
/// refusal, and the joining consumer-protocol member gets it.
#[test]
fn a_migration_policy_without_upgrade_is_predicted() {
    let kafka = partwise_faults::KafkaCluster::start_with(
        1,
        &["group.consumer.migration.policy=downgrade"],
    )
    .expect("a private Apache Kafka");
    let b = kafka.bootstrap().to_string();
    let x = unique("pwrd-px");
    create_topics(&b, &[(&x, 2)]);
    let group = unique("pwrd-policy");
    let mut procs = vec![java_member(&b, &group, &[&x], "range", "p0")];
    let deadline = Instant::now() + Duration::from_secs(90);
    while reports_of(&mut procs).is_empty() {
        assert!(Instant::now() < deadline, "the member never joined");
        std::thread::sleep(Duration::from_millis(300));
    }
    wait_described(&b, &group, "id", || reports_of(&mut procs));
    let (code, v) = readiness(&b, &group);
    assert_eq!(v["brokers"][0]["migration_policy"], "downgrade", "{v}");
    // `p0` is a client id of the test's own: the client is unknown.
    assert_eq!(
        kinds(&v),
        ["client-unknown", "upgrade-refused-policy"],
        "{v}"
    );
    assert_eq!(code, 1);
    let mut joining = java_member_with(&b, &group, &[&x], "range", "up", "consumer");
    let stderr = exited(&mut joining, Duration::from_secs(60))
        .unwrap_or_else(|| panic!("the member was not refused: {:?}", joining.out.events()));
    let predicted = v["readiness"]["upgrade"]["message"].as_str().unwrap();
    assert!(
        predicted.contains("because online upgrade is disabled"),
        "{v}"
    );
    assert!(
        stderr.contains(predicted),
        "the broker's answer is not the predicted {predicted:?}:\n{stderr}"
    );
}

/// A KafkaJS 2.2.4 member (`bindings/kafkajs/tests/live/member.js`, the
/// real kafkajs from `bindings/kafkajs/node_modules`) with KafkaJS's own
/// RoundRobinAssigner, subscribed to `topics`; SIGTERM (the drop) leaves.
fn kafkajs_member(b: &str, group: &str, client_id: &str, topics: &[&str]) -> Proc {
    let dir = crate::common::repo().join("bindings/kafkajs");
    assert!(
        dir.join("node_modules/kafkajs").is_dir(),
        "KafkaJS is not installed: bash scripts/ensure kafkajs (npm ci in bindings/kafkajs)"
    );
    let mut cmd = std::process::Command::new("node");
    cmd.arg(dir.join("tests/live/member.js"))
        .args([b, group, client_id])
        .args(topics)
        .env("PARTWISE_ASSIGNER", "roundrobin");
    Proc::spawn(cmd)
}

/// The seeds' KafkaJS round-robin workers on a private broker whose
/// `group.consumer.assignors` is Kafka's default (`uniform,range`: no
/// partwise assignor): `--readiness` names KafkaJS, says it has no consumer
/// protocol and what to do instead, calls the move blocked although the
/// coordinator would allow it, and tells no one to set
/// `group.remote.assignor=copartitioned` without first naming the broker to
/// install it on. w1 reads only one topic, so server range would split and
/// the co-partitioning advice is given.
#[test]
fn a_kafkajs_group_cannot_move_and_copartitioned_is_not_recommended_where_missing() {
    let kafka = partwise_faults::KafkaCluster::start(1).expect("a private Apache Kafka");
    let b = kafka.bootstrap().to_string();
    let (x, y) = (unique("pwrd-kx"), unique("pwrd-ky"));
    create_topics(&b, &[(&x, 6), (&y, 6)]);

    let group = unique("pwrd-kafkajs");
    let mut members = [
        kafkajs_member(&b, &group, "w0", &[&x, &y]),
        kafkajs_member(&b, &group, "w1", &[&x]),
    ];
    let deadline = Instant::now() + Duration::from_secs(90);
    let (code, v) = loop {
        if let Ok((code, v)) = try_describe(&b, &group, &["--readiness"]) {
            if v["state"] == "Stable" && v["members"].as_array().is_some_and(|m| m.len() == 2) {
                break (code, v);
            }
        }
        assert!(Instant::now() < deadline, "the KafkaJS group never settled");
        std::thread::sleep(Duration::from_millis(300));
    };
    assert_eq!(v["protocol"], "RoundRobinAssigner", "{v}");
    let r = &v["readiness"];
    assert_eq!(r["upgrade"]["verdict"], "blocked", "{v}");
    assert_eq!(r["upgrade"]["coordinator"], "allowed", "{v}");
    assert_eq!(
        r["upgrade"]["blocked_by"],
        serde_json::json!(["kafkajs"]),
        "{v}"
    );
    let clients = r["clients"].as_array().unwrap();
    assert_eq!(clients.len(), 1, "{v}");
    assert_eq!(clients[0]["client"], "kafkajs", "{v}");
    assert_eq!(clients[0]["members"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(clients[0]["consumer_protocol"], Value::Null, "{v}");
    let ks = kinds(&v);
    assert!(
        ks.contains(&"client-without-consumer-protocol".to_string()),
        "{v}"
    );
    assert!(ks.contains(&"range-splits".to_string()), "{v}");
    let finding = |kind: &str| {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["kind"] == kind)
            .unwrap()
            .clone()
    };
    let kjs = finding("client-without-consumer-protocol");
    assert!(
        kjs["message"]
            .as_str()
            .unwrap()
            .contains("KafkaJS has no consumer protocol"),
        "{kjs}"
    );
    assert!(
        kjs["fix"]
            .as_str()
            .unwrap()
            .contains("copartitionedAssigner()"),
        "{kjs}"
    );
    // The broker lists no partwise assignor, and every mention of it says
    // what to install on which broker first.
    let node = kafka.nodes()[0];
    assert_eq!(
        r["copartitioned_brokers"]["lacking"],
        serde_json::json!([node]),
        "{v}"
    );
    let names: Vec<&str> = r["remote_assignors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert_eq!(names, ["uniform", "range"], "{v}");
    let texts = v["findings"].to_string();
    let advised = texts.matches("group.remote.assignor=copartitioned").count();
    assert!(advised > 0, "{v}");
    assert_eq!(
        texts
            .matches(&format!(
                "group.remote.assignor=copartitioned on the members, after installing partwise's broker assignor on every broker ({node}: none lists it)"
            ))
            .count(),
        advised,
        "{v}"
    );
    assert!(
        texts.contains(
            "set group.consumer.assignors=uniform,range,dev.partwise.BrokerCopartitionedAssignor"
        ),
        "{v}"
    );
    assert_eq!(code, 1);
    // The table says it in words.
    let out = Cmd::cargo_bin("partwise")
        .unwrap()
        .args(["kafka", "group", "-b", &b, "-g", &group, "--readiness"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains(
            "online upgrade to the consumer protocol: BLOCKED by the members' clients: KafkaJS"
        ),
        "{table}"
    );
    assert!(!table.contains(": allowed ("), "{table}");
    // The private broker goes with the test: no clean leave is needed.
    for m in &mut members {
        let _ = m.child.kill();
        let _ = m.child.wait();
    }
}

/// On brokers without streams groups (4.0.2 and 4.1.2 of the matrix), a
/// group that is not there is not found, and the answer says that a
/// streams group cannot be there either; from 4.2 it is only not found.
#[test]
fn a_missing_group_on_brokers_without_streams_groups_says_so() {
    let b = bootstrap();
    let group = unique("no-such-streams-app");
    let release = broker_release();
    let without = ["4.0.", "4.1."].iter().any(|v| release.starts_with(v));
    for extra in [&[][..], &["--readiness"][..]] {
        let out = Cmd::cargo_bin("partwise")
            .unwrap()
            .args(["kafka", "group", "-b", &b, "-g", &group])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("not found"), "{err}");
        assert_eq!(
            err.contains("streams groups (group.protocol=streams) are generally available from Apache Kafka 4.2"),
            without,
            "Kafka {release}: {err}"
        );
    }
}
