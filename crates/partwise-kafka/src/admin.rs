//! Removing what a caller created: topics and consumer groups, through
//! librdkafka's admin client on the caller's [`Connection`] (its TLS, SASL
//! and other properties), each call waiting until the cluster confirms.

use crate::connect::Connection;
use crate::error::{Error, Result};
use futures_executor::block_on;
use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::types::RDKafkaErrorCode;

/// An admin client on `conn`. A `group.id` given with `-X` or `-F` means
/// nothing to it and is dropped.
pub(crate) fn client(conn: &Connection) -> Result<AdminClient<DefaultClientContext>> {
    let mut cfg = conn.client_config(&[]);
    cfg.remove("group.id");
    cfg.create()
        .map_err(|e| conn.error("configuring the Kafka admin client", e))
}

/// Both the request and the operation take at most the connection's
/// timeout: with an operation timeout, the controller answers only once
/// the operation is done (or the timeout has run out), which is the
/// confirmation these calls wait for.
pub(crate) fn options(conn: &Connection) -> AdminOptions {
    AdminOptions::new()
        .request_timeout(Some(conn.timeout()))
        .operation_timeout(Some(conn.timeout()))
}

/// Deletes `topics` and returns once the controller has deleted them. A
/// topic it could not delete (one that does not exist, a refused ACL) is
/// an error naming each such topic with the broker's reason.
pub fn delete_topics(conn: &Connection, topics: &[&str]) -> Result<()> {
    if topics.is_empty() {
        return Ok(());
    }
    let admin = client(conn)?;
    let results = block_on(admin.delete_topics(topics, &options(conn)))
        .map_err(|e| crate::cluster::unreachable(conn, e))?;
    failures(
        conn,
        "deleting topic",
        results.into_iter().filter_map(|r| r.err()).collect(),
    )
}

/// Deletes the consumer groups `groups`. A group the coordinator refuses to
/// delete (one with members still in it, one that does not exist) is an
/// error naming each such group with the broker's reason.
pub fn delete_groups(conn: &Connection, groups: &[&str]) -> Result<()> {
    if groups.is_empty() {
        return Ok(());
    }
    let admin = client(conn)?;
    let results = block_on(admin.delete_groups(groups, &options(conn)))
        .map_err(|e| crate::cluster::unreachable(conn, e))?;
    failures(
        conn,
        "deleting group",
        results.into_iter().filter_map(|r| r.err()).collect(),
    )
}

/// The per-name failures of an admin operation as one error: one failure
/// keeps librdkafka's code as the cause; several are named together.
fn failures(conn: &Connection, doing: &str, failed: Vec<(String, RDKafkaErrorCode)>) -> Result<()> {
    // A timeout is librdkafka's own (no broker answered): the message says
    // where it waited, and how long.
    let named = |name: &str, code: RDKafkaErrorCode| {
        if code == RDKafkaErrorCode::OperationTimedOut {
            format!(
                "{doing} {name} (no answer from the Kafka cluster at {} within {:.1}s)",
                conn.brokers(),
                conn.timeout().as_secs_f64()
            )
        } else {
            format!("{doing} {name}")
        }
    };
    match &failed[..] {
        [] => Ok(()),
        [(name, code)] => Err(conn.error_code(named(name, *code), *code)),
        _ => Err(Error::kafka(
            conn.scrub(&format!("{doing}s")),
            conn.scrub(
                &failed
                    .iter()
                    .map(|(n, c)| format!("{}: {c}", named(n, *c)))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Nothing to delete asks nothing of the cluster: no broker is needed.
    #[test]
    fn nothing_to_delete_needs_no_broker() {
        let mut c = Connection::new(Duration::from_millis(100));
        c.bootstrap("127.0.0.1:9").unwrap();
        delete_topics(&c, &[]).unwrap();
        delete_groups(&c, &[]).unwrap();
    }

    /// An unreachable cluster is an error naming the brokers, not a hang.
    #[test]
    fn an_unreachable_cluster_is_an_error() {
        let mut c = Connection::new(Duration::from_millis(300));
        c.bootstrap("127.0.0.1:9").unwrap();
        let e = delete_topics(&c, &["t"]).unwrap_err().to_string();
        assert!(e.contains("127.0.0.1:9"), "{e}");
        let e = delete_groups(&c, &["g"]).unwrap_err().to_string();
        assert!(e.contains("127.0.0.1:9"), "{e}");
    }

    #[test]
    fn several_failures_are_named_together() {
        let c = Connection::new(Duration::from_secs(1));
        let e = failures(
            &c,
            "deleting topic",
            vec![
                ("a".into(), RDKafkaErrorCode::UnknownTopicOrPartition),
                ("b".into(), RDKafkaErrorCode::TopicAuthorizationFailed),
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("deleting topics: deleting topic a: "), "{e}");
        assert!(e.contains(", deleting topic b: "), "{e}");
        let one = failures(
            &c,
            "deleting group",
            vec![("g".into(), RDKafkaErrorCode::NonEmptyGroup)],
        )
        .unwrap_err();
        assert!(one.to_string().starts_with("deleting group g: "), "{one}");
        let cause = std::error::Error::source(&one)
            .and_then(|c| c.downcast_ref::<crate::KafkaCause>())
            .expect("librdkafka's error is the cause");
        assert_eq!(
            cause.error(),
            &rdkafka::error::KafkaError::AdminOp(RDKafkaErrorCode::NonEmptyGroup)
        );
    }
}
