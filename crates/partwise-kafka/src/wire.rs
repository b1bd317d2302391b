//! A minimal Kafka client over plain TCP with kafka-protocol, for the group
//! requests librdkafka does not make: DescribeGroups where its group listing
//! comes back empty (tansu), and ConsumerGroupDescribe (KIP-848 groups, which
//! DescribeGroups reports as dead). FindCoordinator on a bootstrap broker,
//! then the request on the coordinator; plaintext only (no TLS, no SASL).
//! The bytes (frame, headers, size limit) are [`partwise_wire::frame`]'s;
//! this module owns the blocking socket.

use crate::connect::Connection;
use crate::error::{Error, Result};
use bytes::{Buf, Bytes};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse, DescribeGroupsRequest, DescribeGroupsResponse,
    FindCoordinatorRequest, FindCoordinatorResponse, GroupId,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use partwise_wire::frame;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

const FIND_COORDINATOR_VERSION: i16 = 2;
const DESCRIBE_GROUPS_VERSION: i16 = 4;
const CONSUMER_GROUP_DESCRIBE_VERSION: i16 = 0;

/// Whether the connection settings allow this plaintext client.
pub fn plaintext(conn: &Connection) -> bool {
    conn.get("security.protocol")
        .is_none_or(|p| p.eq_ignore_ascii_case("plaintext"))
}

struct Wire {
    stream: TcpStream,
    correlation: i32,
}

impl Wire {
    fn connect(addr: &str, deadline: Instant) -> Result<Wire> {
        let fail = |e: &dyn std::fmt::Display| Error::kafka(format!("connecting to {addr}"), e);
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        let sa = addr
            .to_socket_addrs()
            .map_err(|e| fail(&e))?
            .next()
            .ok_or_else(|| fail(&"no address"))?;
        let stream = TcpStream::connect_timeout(&sa, left).map_err(|e| fail(&e))?;
        stream.set_read_timeout(Some(left)).map_err(|e| fail(&e))?;
        stream.set_write_timeout(Some(left)).map_err(|e| fail(&e))?;
        Ok(Wire {
            stream,
            correlation: 0,
        })
    }

    fn call<Req, Resp>(&mut self, key: ApiKey, version: i16, req: &Req) -> Result<Resp>
    where
        Req: Encodable,
        Resp: Decodable,
    {
        let fail = |e: &dyn std::fmt::Display| Error::kafka(format!("{key:?} request"), e);
        self.correlation += 1;
        let client_id = Some(StrBytes::from_static_str("partwise"));
        let request = frame::encode_request(key, version, self.correlation, client_id, req)
            .map_err(|e| fail(&e))?;
        self.stream.write_all(&request).map_err(|e| fail(&e))?;
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len).map_err(|e| fail(&e))?;
        let len = frame::body_len(len).map_err(|e| fail(&e))?;
        let mut buf = vec![0u8; len];
        self.stream.read_exact(&mut buf).map_err(|e| fail(&e))?;
        let mut buf = Bytes::from(buf);
        let resp = frame::decode_response(&mut buf, key, version, self.correlation)
            .map_err(|e| fail(&e))?;
        if buf.has_remaining() {
            // Trailing bytes mean a version mismatch: do not trust the fields.
            return Err(fail(&format!(
                "{} unexpected trailing bytes",
                buf.remaining()
            )));
        }
        Ok(resp)
    }
}

/// DescribeGroups for `group` through its coordinator.
pub fn describe_groups(conn: &Connection, group: &str) -> Result<DescribeGroupsResponse> {
    on_coordinator(conn, group, |w| {
        w.call(
            ApiKey::DescribeGroups,
            DESCRIBE_GROUPS_VERSION,
            &DescribeGroupsRequest::default()
                .with_groups(vec![GroupId(StrBytes::from_string(group.to_string()))]),
        )
    })
}

/// ConsumerGroupDescribe (KIP-848) for `group` through its coordinator.
pub fn consumer_group_describe(
    conn: &Connection,
    group: &str,
) -> Result<ConsumerGroupDescribeResponse> {
    on_coordinator(conn, group, |w| {
        w.call(
            ApiKey::ConsumerGroupDescribe,
            CONSUMER_GROUP_DESCRIBE_VERSION,
            &ConsumerGroupDescribeRequest::default()
                .with_group_ids(vec![GroupId(StrBytes::from_string(group.to_string()))]),
        )
    })
}

/// ApiVersions v0 (answered by every broker, before authentication) on the
/// first bootstrap broker that answers: (API key, highest version) pairs.
pub fn api_versions(conn: &Connection) -> Result<Vec<(i16, i16)>> {
    let deadline = Instant::now() + conn.timeout();
    let mut last = Error::kafka("asking for the API versions", "no bootstrap broker");
    for b in conn.brokers().split(',').map(str::trim) {
        let attempt = (|| {
            let mut w = Wire::connect(b, deadline)?;
            let r: ApiVersionsResponse =
                w.call(ApiKey::ApiVersions, 0, &ApiVersionsRequest::default())?;
            if r.error_code != 0 {
                return Err(Error::kafka(
                    format!("ApiVersions on {b}"),
                    format!("error code {}", r.error_code),
                ));
            }
            Ok(r.api_keys
                .iter()
                .map(|k| (k.api_key, k.max_version))
                .collect())
        })();
        match attempt {
            Ok(v) => return Ok(v),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Finds `group`'s coordinator from a bootstrap broker and runs `f` there.
fn on_coordinator<T>(
    conn: &Connection,
    group: &str,
    f: impl Fn(&mut Wire) -> Result<T>,
) -> Result<T> {
    let deadline = Instant::now() + conn.timeout();
    let brokers: Vec<&str> = conn.brokers().split(',').map(str::trim).collect();
    let mut last = Error::kafka("describing the group", "no bootstrap broker");
    for b in brokers {
        let attempt = (|| {
            let mut w = Wire::connect(b, deadline)?;
            let fc: FindCoordinatorResponse = w.call(
                ApiKey::FindCoordinator,
                FIND_COORDINATOR_VERSION,
                &FindCoordinatorRequest::default()
                    .with_key(StrBytes::from_string(group.to_string()))
                    .with_key_type(0),
            )?;
            if fc.error_code != 0 {
                return Err(Error::kafka(
                    format!("finding the coordinator of {group}"),
                    format!("error code {}", fc.error_code),
                ));
            }
            let coord = format!("{}:{}", fc.host.as_str(), fc.port);
            let mut w = if coord == b {
                w
            } else {
                Wire::connect(&coord, deadline)?
            };
            f(&mut w)
        })();
        match attempt {
            Ok(r) => return Ok(r),
            Err(e) => last = e,
        }
    }
    Err(last)
}
