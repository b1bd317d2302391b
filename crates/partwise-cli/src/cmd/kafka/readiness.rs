//! `partwise kafka group -g GROUP --readiness`: the rendering of
//! [`partwise_kafka::readiness`] (table, JSON, NDJSON) and its exit code:
//! 0 ready, 1 findings.

use super::kerr;
use crate::exit::{CliError, ExitCode, Result};
use crate::output::{visible, Format, Table};
use crate::render::group::{matrices_json, members_json, write_matrices, write_members};
use partwise::assign::{Assignor, BrokerModel};
use partwise::findings::Finding;
use partwise::group::clients::Client;
use partwise::group::described::View;
use partwise::readiness::{
    BrokerConfig, ClientMembers, ConsumerGroupCheck, Copartitioned, KeepsUnits, RangeCheck,
    Readiness, RemoteAssignor, Upgrade,
};
use partwise_kafka::readiness::{readiness, ReadinessReport, ServerModels, Verdict};
use partwise_kafka::Connection;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;

pub fn run(conn: &Connection, group: &str, format: Format) -> Result<ExitCode> {
    let r = readiness(conn, group).map_err(kerr)?;
    if r.description.not_found() {
        // A Kafka Streams group of the streams protocol: already off the
        // classic protocol, described by its own API.
        if let Ok(Some(s)) = partwise_kafka::streams::streams_analysis(conn, group, &[]) {
            return super::streams_group(&s, format, Some(STREAMS_READINESS));
        }
    }
    super::not_found_here(conn, &r.description, group).map_err(|e| {
        match conn.client_target() {
            // ConsumerGroupDescribe goes through partwise-client, which these
            // settings do not reach the brokers with.
            Err(why) => CliError::msg(format!(
                "{e}; a consumer-protocol (KIP-848) group could not be asked for: {why}"
            )),
            Ok(_) => e,
        }
    })?;
    let findings = match &r.verdict {
        Verdict::Classic(c) => &c.findings,
        Verdict::Consumer(c) => &c.findings,
    };
    let mut out = std::io::stdout().lock();
    match format {
        Format::Table => write_table(&mut crate::output::Visible::new(&mut out), &r)?,
        format => crate::output::write_doc(&mut out, format, &to_doc(&r))?,
    }
    out.flush()?;
    Ok(if findings.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

/// What `--readiness` says of a streams-protocol group before its description.
const STREAMS_READINESS: &str = "a Kafka Streams group on the streams rebalance protocol (group.protocol=streams): \
    the broker assigns its tasks, and the consumer protocol is no move for it (Kafka Streams does not join with \
    group.protocol=consumer); its readiness is its state and findings below";

fn keeps(k: KeepsUnits) -> &'static str {
    match k {
        KeepsUnits::Yes => "yes",
        KeepsUnits::No => "no",
        KeepsUnits::Holds => "yes, while its preconditions hold",
        KeepsUnits::Unknown => "unknown assignor",
    }
}

fn config_line(c: &BrokerConfig) -> String {
    let or_default = |v: Option<String>| v.unwrap_or_else(|| "(default)".into());
    format!(
        "broker {}: group.consumer.migration.policy={}, group.consumer.max.size={}, group.consumer.assignors={}",
        c.broker,
        visible(&or_default(c.migration_policy.clone())),
        or_default(c.consumer_max_size.map(|n| n.to_string())),
        visible(&or_default(c.assignors.as_ref().map(|a| a.join(",")))),
    )
}

fn write_assignors(out: &mut impl Write, list: &[RemoteAssignor]) -> Result<()> {
    writeln!(out, "\ngroup.remote.assignor names the brokers accept")?;
    let mut t = Table::new(["NAME", "ENTRY", "DEFAULT", "KEEPS UNITS WHOLE"]);
    for a in list {
        t.row([
            a.name
                .clone()
                .unwrap_or_else(|| "(its name() is not known to partwise)".into()),
            a.entry.clone(),
            if a.default { "yes" } else { "" }.into(),
            keeps(a.keeps_units).into(),
        ]);
    }
    t.write(&mut *out)
}

/// `uniform kip848:uniform (Kafka 4.0.1 to 4.4.0)`, or why it is undecided.
fn model_text(name: &str, m: &BrokerModel) -> String {
    match (m.assignor, m.assignor.and_then(|a| a.kafka_versions())) {
        (Some(a), Some(v)) => format!("{name} {} (Kafka {v})", a.spec()),
        (Some(a), None) => format!("{name} {}", a.spec()),
        (None, _) => format!("{name} undecided"),
    }
}

/// Which models of the server assignors this readiness used, and why.
fn models_line(m: &ServerModels) -> String {
    let evidence = if m.uniform.evidence == m.range.evidence {
        visible(&m.uniform.evidence).to_string()
    } else {
        format!(
            "{}; {}",
            visible(&m.uniform.evidence),
            visible(&m.range.evidence)
        )
    };
    format!(
        "server assignor models: {}, {} (the broker: {evidence})",
        model_text("uniform", &m.uniform),
        model_text("range", &m.range)
    )
}

/// Server uniform's fresh target for a classic group's members, with the
/// broker's model; or why there is none.
fn write_uniform(out: &mut impl Write, r: &ReadinessReport) -> Result<()> {
    match (&r.uniform, r.models.uniform.assignor) {
        (Some(v), Some(model)) => {
            let how = if v.split_count() == 0 {
                "keeps every co-partitioned index together".to_string()
            } else {
                format!("would split {} indices", v.split_count())
            };
            writeln!(
                out,
                "\nserver uniform ({}, the broker's model), for members that set no group.remote.assignor \
                 and join a fresh consumer group: {how}",
                model.spec()
            )?;
            write_matrices(&mut *out, v, "predicted by server uniform")
        }
        (None, None) if !r.description.members.is_empty() => Ok(writeln!(
            out,
            "\nserver uniform: not predicted, its model is undecided ({})",
            visible(&r.models.uniform.evidence)
        )?),
        _ => Ok(()),
    }
}

fn write_findings(out: &mut impl Write, findings: &[Finding]) -> Result<()> {
    if findings.is_empty() {
        writeln!(out, "\nready: no findings")?;
        return Ok(());
    }
    writeln!(out, "\nnot ready: {} finding(s)", findings.len())?;
    for f in findings {
        // Findings quote member ids, topics and configs the broker sent.
        writeln!(out, "  - [{}] {}", f.kind, visible(&f.message))?;
        writeln!(out, "    fix: {}", visible(&f.fix))?;
    }
    Ok(())
}

/// Server range's verdict (`when`: on what it depends, if anything); with
/// `matrix`, its predicted co-location too.
fn write_range(out: &mut impl Write, r: &RangeCheck, matrix: bool, when: &str) -> Result<()> {
    if r.split_count == 0 {
        writeln!(
            out,
            "\nserver range{when}: keeps every co-partitioned index together (same subscriptions, equal counts)"
        )?;
    } else {
        writeln!(
            out,
            "\nserver range{when}: would split {} indices",
            r.split_count
        )?;
    }
    for (topics, members) in &r.subscriptions {
        writeln!(
            out,
            "  {} subscribe to {}",
            visible(&members.join(", ")),
            visible(&topics.join(", "))
        )?;
    }
    if !r.counts.is_empty() {
        writeln!(
            out,
            "  partition counts differ, and topics of different counts are never co-partitioned: {}",
            r.counts
                .iter()
                .map(|(t, n)| format!("{} ({n})", visible(t)))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    if matrix {
        write_matrices(&mut *out, &r.view, "predicted by server range")?;
    }
    Ok(())
}

/// `KafkaJS (m0, m1)`.
fn named(c: &ClientMembers) -> String {
    format!(
        "{} ({})",
        c.client.facts().name,
        visible(&c.members.join(", "))
    )
}

/// What each client's members need before they can join with the consumer
/// protocol: the version and setting, or that they cannot.
fn needs(c: &ClientMembers) -> String {
    let f = c.client.facts();
    match (c.client, f.consumer_protocol) {
        (Client::Unknown, _) => format!("{}: {}", named(c), f.alternative),
        (_, Some(p)) => format!("{} from {} with {}", named(c), p.since, p.setting),
        (Client::KafkaStreams, None) => {
            format!("{} move to group.protocol=streams instead", named(c))
        }
        (_, None) => format!("{} cannot (no consumer protocol)", named(c)),
    }
}

fn write_clients(out: &mut impl Write, clients: &[ClientMembers]) -> Result<()> {
    if clients.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nmembers' clients (told from the protocol name and client ids: a group description carries no client \
         software name or version)"
    )?;
    let mut t = Table::new(["CLIENT", "MEMBERS", "CONSUMER PROTOCOL", "TOLD FROM"]);
    for c in clients {
        let f = c.client.facts();
        let protocol = match (c.client, f.consumer_protocol) {
            (Client::Unknown, _) => "unknown".to_string(),
            (_, Some(p)) => match p.preview {
                Some(pre) => format!("from {} ({pre})", p.since),
                None => format!("from {}", p.since),
            },
            (_, None) => "none".to_string(),
        };
        t.row([
            f.name.to_string(),
            c.members.join(", "),
            protocol,
            c.evidence.clone(),
        ]);
    }
    t.write(&mut *out)
}

fn write_classic(out: &mut impl Write, c: &Readiness) -> Result<()> {
    let blocked = c.without_consumer_protocol();
    match &c.upgrade {
        Upgrade::Allowed { how } if !blocked.is_empty() => writeln!(
            out,
            "\nonline upgrade to the consumer protocol: BLOCKED by the members' clients: {} (the coordinator \
             alone would allow it: {how})",
            blocked
                .iter()
                .map(|b| match b.client {
                    Client::KafkaStreams => format!(
                        "{} moves to group.protocol=streams (Kafka Streams and brokers 4.2 or later), never to \
                         group.protocol=consumer",
                        named(b)
                    ),
                    _ => format!("{} has no consumer protocol", named(b)),
                })
                .collect::<Vec<_>>()
                .join("; ")
        )?,
        Upgrade::Allowed { how } if !c.clients.is_empty() => writeln!(
            out,
            "\nonline upgrade to the consumer protocol: allowed by the coordinator ({how}), once the members run: {}",
            c.clients.iter().map(needs).collect::<Vec<_>>().join("; ")
        )?,
        Upgrade::Allowed { how } => {
            writeln!(out, "\nonline upgrade to the consumer protocol: allowed ({how})")?
        }
        Upgrade::Refused {
            error,
            message,
            detail,
            ..
        } => writeln!(
            out,
            "\nonline upgrade to the consumer protocol: REFUSED ({}); the joining member gets {error}: {}",
            visible(&detail.to_string()),
            visible(&message.to_string())
        )?,
        Upgrade::Unknown { why } => {
            writeln!(
                out,
                "\nonline upgrade to the consumer protocol: unknown ({})",
                visible(&why.to_string())
            )?
        }
    }
    write_clients(&mut *out, &c.clients)?;
    if let Some(r) = &c.range {
        let when = if blocked.is_empty() {
            ""
        } else {
            " (for members on the consumer protocol, which these clients cannot join)"
        };
        write_range(&mut *out, r, true, when)?;
    }
    write_assignors(&mut *out, &c.assignors)
}

fn write_consumer(out: &mut impl Write, c: &ConsumerGroupCheck) -> Result<()> {
    writeln!(
        out,
        "\nconsumer protocol, broker assignor {}; members {} their target assignment",
        visible(if c.assignor.is_empty() {
            "-"
        } else {
            &c.assignor
        }),
        if c.reconciled {
            "own"
        } else {
            "do not yet own"
        }
    )?;
    if let Some(v) = &c.target {
        write_matrices(&mut *out, v, "target assignment")?;
    }
    if let (Some(v), false) = (&c.current, c.reconciled) {
        write_matrices(&mut *out, v, "current assignment")?;
    }
    if let (Some(r), false) = (&c.range, c.assignor == "range") {
        write_range(&mut *out, r, false, "")?;
    }
    write_assignors(&mut *out, &c.assignors)
}

fn write_table(out: &mut impl Write, r: &ReadinessReport) -> Result<()> {
    write_members(&mut *out, &r.description)?;
    writeln!(out)?;
    for c in &r.configs {
        writeln!(out, "{}", config_line(c))?;
    }
    writeln!(out, "{}", models_line(&r.models))?;
    match &r.verdict {
        Verdict::Classic(c) => {
            // The present state first, as plain `kafka group` shows it; then the move.
            if let Some(v) = &c.live {
                let now = match v.split_count() {
                    0 => "keeps every co-partitioned index together".to_string(),
                    n => format!("splits {n} indices"),
                };
                writeln!(
                    out,
                    "
now: the group's live assignment {now}"
                )?;
                write_matrices(&mut *out, v, "broker")?;
            }
            write_classic(&mut *out, c)?;
            write_uniform(&mut *out, r)?;
            write_findings(&mut *out, &c.findings)
        }
        Verdict::Consumer(c) => {
            write_consumer(&mut *out, c)?;
            write_findings(&mut *out, &c.findings)
        }
    }
}

/// The JSON of one group's assignment: who holds what, the co-location
/// of each set of equally partitioned topics, and how many indices split.
#[derive(Serialize)]
struct ViewJson<'a> {
    assignment: BTreeMap<String, Vec<(String, u32)>>,
    colocation: partwise_kafka::group::Colocations<'a>,
    split_count: usize,
}

impl<'a> ViewJson<'a> {
    fn of(v: &'a View) -> Self {
        ViewJson {
            assignment: v.owned_by(),
            colocation: matrices_json(v),
            split_count: v.split_count(),
        }
    }
}

/// Server range's predicted assignment, with its model and what differs
/// between the members' subscriptions and the topics' counts.
#[derive(Serialize)]
struct RangeJson<'a> {
    #[serde(flatten)]
    view: ViewJson<'a>,
    model: Assignor,
    subscriptions: Vec<Subscribers<'a>>,
    partition_counts: &'a [(String, u32)],
}

#[derive(Serialize)]
struct Subscribers<'a> {
    topics: &'a [String],
    members: &'a [String],
}

impl<'a> RangeJson<'a> {
    fn of(rc: &'a RangeCheck) -> Self {
        RangeJson {
            view: ViewJson::of(&rc.view),
            model: rc.model,
            subscriptions: rc
                .subscriptions
                .iter()
                .map(|(topics, members)| Subscribers { topics, members })
                .collect(),
            partition_counts: &rc.counts,
        }
    }
}

/// Server uniform's predicted assignment, with the broker's model of it.
#[derive(Serialize)]
struct UniformJson<'a> {
    #[serde(flatten)]
    view: ViewJson<'a>,
    model: Option<Assignor>,
}

/// The online upgrade's verdict: the coordinator's, or `blocked` when it
/// would allow the move but members' clients have no consumer protocol.
#[derive(Serialize)]
#[serde(tag = "verdict", rename_all = "lowercase")]
enum UpgradeJson<'a> {
    Blocked {
        coordinator: &'static str,
        how: &'a str,
        blocked_by: Vec<&'static str>,
    },
    Allowed {
        how: &'a str,
    },
    Refused {
        kind: &'static str,
        error: &'static str,
        message: &'a str,
        detail: &'a str,
    },
    Unknown {
        why: &'a str,
    },
}

impl<'a> UpgradeJson<'a> {
    fn of(c: &'a Readiness) -> Self {
        let blocked = c.without_consumer_protocol();
        match &c.upgrade {
            Upgrade::Allowed { how } if !blocked.is_empty() => UpgradeJson::Blocked {
                coordinator: "allowed",
                how,
                blocked_by: blocked.iter().map(|b| b.client.id()).collect(),
            },
            Upgrade::Allowed { how } => UpgradeJson::Allowed { how },
            Upgrade::Refused {
                reason,
                error,
                message,
                detail,
            } => UpgradeJson::Refused {
                kind: reason.kind(),
                error,
                message,
                detail,
            },
            Upgrade::Unknown { why } => UpgradeJson::Unknown { why },
        }
    }
}

/// The models of the two built-in server assignors this readiness used.
#[derive(Serialize)]
struct ModelsJson<'a> {
    uniform: &'a BrokerModel,
    range: &'a BrokerModel,
}

/// The readiness of a classic group, or of one on the consumer protocol.
#[derive(Serialize)]
#[serde(untagged)]
enum ReadinessJson<'a> {
    Classic {
        live: Option<ViewJson<'a>>,
        upgrade: UpgradeJson<'a>,
        clients: &'a [ClientMembers],
        server_range: Option<RangeJson<'a>>,
        server_uniform: Option<UniformJson<'a>>,
        remote_assignors: &'a [RemoteAssignor],
        copartitioned_brokers: &'a Copartitioned,
        server_assignor_models: ModelsJson<'a>,
    },
    Consumer {
        assignor: &'a str,
        target: Option<ViewJson<'a>>,
        current: Option<ViewJson<'a>>,
        reconciled: bool,
        server_range: Option<RangeJson<'a>>,
        remote_assignors: &'a [RemoteAssignor],
        clients: &'a [ClientMembers],
        server_assignor_models: ModelsJson<'a>,
    },
}

/// The document of `--readiness --format json`.
#[derive(Serialize)]
struct ReadinessDoc<'a> {
    group: &'a str,
    state: &'a str,
    protocol_type: &'a str,
    group_protocol: &'a str,
    protocol: &'a str,
    members: &'a [partwise_kafka::group::MemberDescription],
    brokers: &'a [BrokerConfig],
    readiness: ReadinessJson<'a>,
    findings: &'a [Finding],
    ready: bool,
}

fn to_doc(r: &ReadinessReport) -> ReadinessDoc<'_> {
    let d = &r.description;
    let models = || ModelsJson {
        uniform: &r.models.uniform,
        range: &r.models.range,
    };
    let (readiness, findings) = match &r.verdict {
        Verdict::Classic(c) => (
            ReadinessJson::Classic {
                live: c.live.as_ref().map(ViewJson::of),
                upgrade: UpgradeJson::of(c),
                clients: &c.clients,
                server_range: c.range.as_ref().map(RangeJson::of),
                server_uniform: r.uniform.as_ref().map(|u| UniformJson {
                    view: ViewJson::of(u),
                    model: r.models.uniform.assignor,
                }),
                remote_assignors: &c.assignors,
                copartitioned_brokers: &c.copartitioned,
                server_assignor_models: models(),
            },
            &c.findings,
        ),
        Verdict::Consumer(c) => (
            ReadinessJson::Consumer {
                assignor: &c.assignor,
                target: c.target.as_ref().map(ViewJson::of),
                current: c.current.as_ref().map(ViewJson::of),
                reconciled: c.reconciled,
                server_range: c.range.as_ref().map(RangeJson::of),
                remote_assignors: &c.assignors,
                clients: &c.clients,
                server_assignor_models: models(),
            },
            &c.findings,
        ),
    };
    ReadinessDoc {
        group: &d.name,
        state: &d.state,
        protocol_type: &d.protocol_type,
        group_protocol: &d.group_protocol,
        protocol: &d.protocol,
        members: members_json(d),
        brokers: &r.configs,
        readiness,
        findings,
        ready: findings.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn to_json(r: &ReadinessReport) -> Value {
        serde_json::to_value(to_doc(r)).unwrap()
    }
    use partwise::group::described::ClusterTopic;
    use partwise::readiness::{classic_with, ClassicGroup, ClientSeen};
    use partwise_kafka::group::{AssignmentData, GroupDescription, MemberDescription};

    /// Two members of `protocol` with client ids `ids`, each holding half
    /// of two 6-partition topics, as the adapter would report them.
    fn report(protocol: &str, ids: [&str; 2]) -> ReadinessReport {
        report_on(protocol, ids, "4.4.0")
    }

    /// The highest API versions of Kafka `release` (the kafka-clients jar's
    /// message schemas, `tests/vectors/kip848/api_versions.json`).
    fn api_versions(release: &str) -> Vec<(i16, i16)> {
        let doc: Value = serde_json::from_str(include_str!(
            "../../../../../tests/vectors/kip848/api_versions.json"
        ))
        .unwrap();
        doc["max_stable"][release]
            .as_object()
            .unwrap_or_else(|| panic!("no API versions of {release}"))
            .iter()
            .map(|(k, v)| (k.parse().unwrap(), v.as_i64().unwrap() as i16))
            .collect()
    }

    /// [`report`] as a broker of Kafka `release` would have it.
    fn report_on(protocol: &str, ids: [&str; 2], release: &str) -> ReadinessReport {
        let ab = vec!["a".to_string(), "b".to_string()];
        let half = |lo: u32| {
            vec![
                ("a".into(), (lo..lo + 3).collect()),
                ("b".into(), (lo..lo + 3).collect()),
            ]
        };
        let members: Vec<MemberDescription> = ids
            .iter()
            .zip([0, 3])
            .enumerate()
            .map(|(i, (id, lo))| MemberDescription {
                id: format!("m{}", i + 1),
                client_id: id.to_string(),
                client_host: "/10.0.0.1".into(),
                subscription: Some(ab.clone()),
                metadata_version: Some(0),
                subscription_body_version: None,
                owned_partitions: None,
                generation: None,
                assignment: AssignmentData::Assigned(half(lo)),
                subscription_user_data: None,
                assignment_user_data: None,
                target: None,
                undecodable: None,
            })
            .collect();
        let description = GroupDescription {
            name: "g".into(),
            state: "Stable".into(),
            protocol_type: "consumer".into(),
            group_protocol: "classic".into(),
            protocol: protocol.into(),
            members: members.clone(),
            topic_ids: Vec::new(),
        };
        let g = ClassicGroup {
            name: "g".into(),
            state: "Stable".into(),
            protocol_type: "consumer".into(),
            protocol: protocol.into(),
            members: description.described(false),
            assignment_user_data: vec![None, None],
            clients: members
                .iter()
                .map(|m| ClientSeen {
                    client_id: m.client_id.clone(),
                    metadata_version: m.metadata_version,
                    body_version: m.subscription_body_version,
                })
                .collect(),
        };
        let topics = ["a", "b"].map(|t| ClusterTopic {
            name: t.into(),
            partitions: 6,
            healthy: true,
        });
        let configs = vec![BrokerConfig {
            broker: 1,
            ..BrokerConfig::default()
        }];
        let apis = api_versions(release);
        let models = ServerModels {
            uniform: partwise::assign::kip848_model_for_broker("uniform", &apis),
            range: partwise::assign::kip848_model_for_broker("range", &apis),
        };
        let range = models.range.assignor.unwrap();
        let verdict = Verdict::Classic(Box::new(classic_with(&g, &configs, &topics, range)));
        let uniform =
            partwise::readiness::server_uniform(&g.members, &topics, models.uniform.assignor);
        ReadinessReport {
            description,
            configs,
            verdict,
            models,
            uniform,
        }
    }

    fn table(r: &ReadinessReport) -> String {
        let mut out = Vec::new();
        write_table(&mut out, r).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The move is never shown as allowed without the clients that must
    /// join with the consumer protocol: blocked for KafkaJS, and for Java
    /// allowed only with the version and setting its members need.
    #[test]
    fn allowed_is_never_said_without_the_clients() {
        let r = report("RoundRobinAssigner", ["kafkajs", "kafkajs"]);
        let v = to_json(&r);
        assert_eq!(v["readiness"]["upgrade"]["verdict"], "blocked", "{v}");
        assert_eq!(v["readiness"]["upgrade"]["blocked_by"], json!(["kafkajs"]));
        assert_eq!(v["readiness"]["clients"][0]["client"], "kafkajs");
        assert_eq!(
            v["readiness"]["clients"][0]["consumer_protocol"],
            Value::Null
        );
        assert_eq!(
            v["readiness"]["copartitioned_brokers"]["lacking"],
            json!([1])
        );
        let t = table(&r);
        assert!(
            t.contains("online upgrade to the consumer protocol: BLOCKED by the members' clients: KafkaJS (m1, m2) has no consumer protocol"),
            "{t}"
        );
        assert!(t.contains("server range (for members on the consumer protocol, which these clients cannot join)"), "{t}");
        assert!(!t.contains(": allowed ("), "{t}");

        let r = report("range", ["consumer-g-1", "consumer-g-2"]);
        let v = to_json(&r);
        assert_eq!(v["readiness"]["upgrade"]["verdict"], "allowed", "{v}");
        assert_eq!(
            v["readiness"]["clients"][0]["consumer_protocol"]["since"],
            "4.0"
        );
        let t = table(&r);
        assert!(
            t.contains("allowed by the coordinator (") && t.contains("once the members run: Java (kafka-clients) (m1, m2) from 4.0 with group.protocol=consumer"),
            "{t}"
        );
    }

    /// What partwise cannot identify, or what has no consumer protocol, is
    /// never ready: aiokafka's members are told so with aiokafka's own
    /// setting, a client id of no known client is unknown; and the table
    /// shows the group's present co-location before the move.
    #[test]
    fn unknown_or_classic_only_clients_are_never_ready() {
        for (protocol, ids, kind) in [
            (
                "roundrobin",
                ["aiokafka-0.14.0", "aiokafka-0.14.0"],
                "client-without-consumer-protocol",
            ),
            (
                "range",
                ["kafka-python-3.0.12", "kafka-python-3.0.12"],
                "client-without-consumer-protocol",
            ),
            ("range", ["orders-svc", "orders-svc"], "client-unknown"),
            (
                "stream",
                ["app-StreamThread-1-consumer", "app-StreamThread-2-consumer"],
                "streams-group",
            ),
        ] {
            let r = report(protocol, ids);
            let v = to_json(&r);
            assert_eq!(v["ready"], false, "{v}");
            let kinds: Vec<&str> = v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["kind"].as_str().unwrap())
                .collect();
            assert!(kinds.contains(&kind), "{protocol}: {kinds:?}");
            assert_eq!(v["readiness"]["live"]["split_count"], 0, "{v}");
            let t = table(&r);
            assert!(t.contains("not ready:"), "{t}");
            assert!(!t.contains("ready: no findings"), "{t}");
            let now = t
                .find("now: the group's live assignment keeps every co-partitioned index together");
            let upgrade = t.find("online upgrade to the consumer protocol");
            assert!(now.is_some() && now < upgrade, "{t}");
            if ids[0].starts_with("aiokafka") {
                assert!(
                    t.contains("aiokafka has no consumer-protocol (KIP-848) member"),
                    "{t}"
                );
                assert!(
                    t.contains("partition_assignment_strategy=(RangePartitionAssignor,)"),
                    "{t}"
                );
                assert!(!t.contains("org.apache.kafka.clients"), "{t}");
            }
            if protocol == "stream" {
                assert!(!t.contains("fix: set group.remote.assignor"), "{t}");
                assert!(t.contains("group.protocol=streams"), "{t}");
            }
        }
    }

    /// The server assignors' models follow the broker's release, read from
    /// its API versions: a 4.4 broker's uniform is kip848:uniform, and its
    /// target for the two members (one topic each) is shown; a 4.0 broker's
    /// API versions do not tell 4.0.0's uniform from 4.0.1's, so no uniform
    /// target is claimed and the text says why. Range is one model on both.
    #[test]
    fn the_server_assignor_models_are_the_brokers_releases() {
        let r = report_on("range", ["consumer-g-1", "consumer-g-2"], "4.4.0");
        let v = to_json(&r);
        let m = &v["readiness"]["server_assignor_models"];
        assert_eq!(m["uniform"]["model"], "kip848:uniform", "{v}");
        assert_eq!(m["uniform"]["kafka_versions"], "4.0.1 to 4.4.0", "{v}");
        assert_eq!(m["uniform"]["broker_release_line"], "4.4", "{v}");
        assert_eq!(m["range"]["model"], "kip848:range", "{v}");
        assert_eq!(v["readiness"]["server_range"]["model"], "kip848:range");
        let u = &v["readiness"]["server_uniform"];
        assert_eq!(u["model"], "kip848:uniform", "{v}");
        assert_eq!(u["split_count"], 6, "{v}");
        let t = table(&r);
        assert!(
            t.contains("server assignor models: uniform kip848:uniform (Kafka 4.0.1 to 4.4.0), range kip848:range (Kafka 4.0.0 to 4.4.0) (the broker: DeleteGroups v3 (Kafka 4.4 or later))"),
            "{t}"
        );
        assert!(t.contains("server uniform (kip848:uniform, the broker's model), for members that set no group.remote.assignor and join a fresh consumer group: would split 6 indices"), "{t}");

        let r = report_on("range", ["consumer-g-1", "consumer-g-2"], "4.0.2");
        let v = to_json(&r);
        let m = &v["readiness"]["server_assignor_models"];
        assert_eq!(m["uniform"]["model"], Value::Null, "{v}");
        assert_eq!(m["uniform"]["broker_release_line"], "4.0", "{v}");
        assert_eq!(m["range"]["model"], "kip848:range", "{v}");
        assert_eq!(v["readiness"]["server_uniform"], Value::Null, "{v}");
        let t = table(&r);
        assert!(
            t.contains("server assignor models: uniform undecided, range kip848:range"),
            "{t}"
        );
        assert!(
            t.contains("server uniform: not predicted, its model is undecided (ConsumerGroupHeartbeat v1, Produce below v13 (Kafka 4.0)"),
            "{t}"
        );
    }
}
