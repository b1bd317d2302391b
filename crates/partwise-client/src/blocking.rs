//! The admin requests of callers without an async runtime (partwise-kafka,
//! on librdkafka's blocking calls): each runs on a runtime of its own, over
//! a [`Cluster`] secured as its [`Security`] says, and is bounded by one
//! timeout as a whole.

use crate::cluster::Cluster;
use crate::error::{Error, Result};
use crate::groups::{self, GroupListing};
use crate::security::Security;
use crate::wire::api_name;
use kafka_protocol::messages::{
    ApiVersionsRequest, ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse,
    DescribeGroupsRequest, DescribeGroupsResponse, GroupId,
};
use kafka_protocol::protocol::{Request, StrBytes};
use partwise_wire::streams;
use std::future::Future;
use std::time::Duration;

/// Where and how to reach a cluster for one call: the bootstrap brokers,
/// the security of every connection, and the time the whole call may take.
#[derive(Clone, Debug)]
pub struct Target {
    /// Bootstrap brokers, `host:port` each.
    pub bootstrap: Vec<String>,
    /// TLS and SASL.
    pub security: Security,
    /// The bound on the call, and on each request in it.
    pub timeout: Duration,
}

impl Target {
    fn run<T>(&self, doing: &str, f: impl AsyncFnOnce(&mut Cluster) -> Result<T>) -> Result<T> {
        let mut c = Cluster::new(self.bootstrap.clone(), "partwise", self.timeout)
            .with_security(self.security.clone());
        block_on(self.timeout, doing, f(&mut c))
    }
}

/// Runs `fut` to completion on a runtime of its own, giving up after `timeout`.
fn block_on<T>(timeout: Duration, doing: &str, fut: impl Future<Output = Result<T>>) -> Result<T> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Config(format!("no runtime for {doing}: {e}")))?;
    rt.block_on(async {
        match tokio::time::timeout(timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err(Error::NoBroker {
                tried: vec![format!(
                    "{doing}: no answer within {} ms",
                    timeout.as_millis()
                )],
            }),
        }
    })
}

/// DescribeGroups (v4 at most) for `group`, asked of its coordinator.
pub fn describe_groups(t: &Target, group: &str) -> Result<DescribeGroupsResponse> {
    let id = GroupId(StrBytes::from_string(group.to_string()));
    on_coordinator(
        t,
        group,
        DescribeGroupsRequest::default().with_groups(vec![id]),
    )
}

/// ConsumerGroupDescribe (KIP-848, v0) for `group`, asked of its coordinator.
pub fn consumer_group_describe(t: &Target, group: &str) -> Result<ConsumerGroupDescribeResponse> {
    let id = GroupId(StrBytes::from_string(group.to_string()));
    on_coordinator(
        t,
        group,
        ConsumerGroupDescribeRequest::default().with_group_ids(vec![id]),
    )
}

/// StreamsGroupDescribe (v0) for `group`, asked of its coordinator: the
/// description of a Kafka Streams group under `group.protocol=streams`.
/// `None` when the coordinator does not offer the API (a broker from before
/// streams groups).
pub fn streams_group_describe(t: &Target, group: &str) -> Result<Option<streams::Response>> {
    streams_groups_describe(t, &[group.to_string()])
}

/// StreamsGroupDescribe (v0) for each of `groups`: one request per
/// coordinator, carrying every group it coordinates, over connections the
/// call shares; the groups of every answer in one response. `None` when a
/// coordinator does not offer the API (a broker from before streams groups).
pub fn streams_groups_describe(t: &Target, groups: &[String]) -> Result<Option<streams::Response>> {
    t.run("StreamsGroupDescribe", async |c| {
        let mut by_coordinator: std::collections::BTreeMap<String, Vec<String>> =
            std::collections::BTreeMap::new();
        for g in groups {
            let coord = c.find_coordinator(g).await?;
            by_coordinator.entry(coord).or_default().push(g.clone());
        }
        let mut all = streams::Response::default();
        for (coord, ids) in by_coordinator {
            let conn = c.conn(&coord).await?;
            let Some((lo, hi)) = conn.offered(streams::API_KEY) else {
                return Ok(None);
            };
            if !(lo..=hi).contains(&streams::VERSION) {
                return Err(Error::Unsupported {
                    addr: coord,
                    what: format!(
                        "StreamsGroupDescribe: broker versions {lo}..{hi}, ours {}",
                        streams::VERSION
                    ),
                });
            }
            let body = streams::encode_request(&ids, false);
            let resp = conn
                .send_raw(
                    streams::API_KEY,
                    streams::VERSION,
                    (
                        streams::REQUEST_HEADER_VERSION,
                        streams::RESPONSE_HEADER_VERSION,
                    ),
                    &body,
                    t.timeout,
                )
                .await?;
            let r = streams::Response::decode(&resp).map_err(|e| Error::Response {
                addr: coord,
                source: e,
            })?;
            all.throttle_time_ms = all.throttle_time_ms.max(r.throttle_time_ms);
            all.groups.extend(r.groups);
        }
        Ok(Some(all))
    })
}

/// Every group of the cluster with its type: ListGroups to each broker
/// ([`groups::list_groups`]).
pub fn list_groups(t: &Target) -> Result<GroupListing> {
    t.run("ListGroups", async |c| groups::list_groups(c).await)
}

/// `req` sent to the coordinator of `group`, found from the bootstrap brokers.
fn on_coordinator<R: Request>(t: &Target, group: &str, req: R) -> Result<R::Response> {
    t.run(&api_name(R::KEY), async |c| {
        let coord = c.find_coordinator(group).await?;
        Ok(c.send_to(&coord, &req, t.timeout).await?.0)
    })
}

/// The API versions of the first bootstrap broker that answers: (API key,
/// highest version) pairs, as the broker offers them.
pub fn api_versions(t: &Target) -> Result<Vec<(i16, i16)>> {
    t.run("ApiVersions", async |c| {
        // Connecting exchanges ApiVersions; its answer is asked again here
        // so that the pairs are the broker's own, not capped by ours.
        let (resp, _) = c.send_any(&ApiVersionsRequest::default()).await?;
        if resp.error_code != 0 {
            return Err(Error::protocol(
                "the bootstrap broker",
                "ApiVersions",
                resp.error_code,
            ));
        }
        Ok(resp
            .api_keys
            .iter()
            .map(|k| (k.api_key, k.max_version))
            .collect())
    })
}

/// The first offset of each of `partitions` of `topic` whose record's
/// timestamp is at or after `timestamp_ms` (ListOffsets by timestamp, one
/// request per leader): where a window of the newest records starts. A
/// partition with no record that recent answers `-1`.
pub fn offsets_for_time(
    t: &Target,
    topic: &str,
    partitions: &[i32],
    timestamp_ms: i64,
) -> Result<std::collections::HashMap<i32, i64>> {
    let asked: Vec<(String, i32)> = partitions.iter().map(|&p| (topic.to_string(), p)).collect();
    t.run("ListOffsets", async |c| {
        let found = c.list_offsets(&asked, timestamp_ms).await?;
        Ok(found.into_iter().map(|((_, p), o)| (p, o)).collect())
    })
}
