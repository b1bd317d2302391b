//! A minimal Kafka client over plain TCP with kafka-protocol, for the group
//! requests librdkafka does not make: DescribeGroups where its group listing
//! comes back empty (tansu), and ConsumerGroupDescribe (KIP-848 groups, which
//! DescribeGroups reports as dead). FindCoordinator on a bootstrap broker,
//! then the request on the coordinator; plaintext only (no TLS, no SASL).

use crate::connect::Connection;
use crate::error::{Error, Result};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, DescribeGroupsRequest,
    DescribeGroupsResponse, FindCoordinatorRequest, FindCoordinatorResponse, GroupId,
    RequestHeader, ResponseHeader,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
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
        Req: Encodable + HeaderVersion,
        Resp: Decodable + HeaderVersion,
    {
        let fail = |e: &dyn std::fmt::Display| Error::kafka(format!("{key:?} request"), e);
        self.correlation += 1;
        let header = RequestHeader::default()
            .with_request_api_key(key as i16)
            .with_request_api_version(version)
            .with_correlation_id(self.correlation)
            .with_client_id(Some(StrBytes::from_static_str("partwise")));
        let mut body = BytesMut::new();
        header
            .encode(&mut body, Req::header_version(version))
            .map_err(|e| fail(&e))?;
        req.encode(&mut body, version).map_err(|e| fail(&e))?;
        let mut frame = BytesMut::with_capacity(body.len() + 4);
        frame.put_i32(body.len() as i32);
        frame.extend_from_slice(&body);
        self.stream.write_all(&frame).map_err(|e| fail(&e))?;
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len).map_err(|e| fail(&e))?;
        let len = i32::from_be_bytes(len);
        if !(4..=64 << 20).contains(&len) {
            return Err(fail(&format!("response of {len} bytes")));
        }
        let mut buf = vec![0u8; len as usize];
        self.stream.read_exact(&mut buf).map_err(|e| fail(&e))?;
        let mut buf = Bytes::from(buf);
        let rh = ResponseHeader::decode(&mut buf, Resp::header_version(version))
            .map_err(|e| fail(&e))?;
        if rh.correlation_id != self.correlation {
            return Err(fail(&"correlation id mismatch"));
        }
        let resp = Resp::decode(&mut buf, version).map_err(|e| fail(&e))?;
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
