//! The Kafka frame: a 4-byte big-endian length, then a header and a body.
//!
//! This module owns the one size limit every connection applies and the
//! headers of requests and responses, with the check that a response answers
//! the request it is read for. Reading and writing the bytes is the caller's
//! (each adapter has its own socket and timeouts).

use crate::error::{Error, Result};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

/// The largest frame body accepted, in bytes. A corrupt or hostile length
/// prefix must not make a reader reserve gigabytes; 256 MiB is above any
/// fetch partwise asks for (50 MiB per response) and any group description.
pub const MAX_FRAME: usize = 256 * 1024 * 1024;

/// The smallest frame body: a response header is at least its correlation id.
const MIN_FRAME: i32 = 4;

/// The body length a 4-byte prefix announces, refused when it is outside
/// `4..=MAX_FRAME`.
pub fn body_len(prefix: [u8; 4]) -> Result<usize> {
    let len = i32::from_be_bytes(prefix);
    if len < MIN_FRAME || len as usize > MAX_FRAME {
        return Err(Error::FrameLength(len));
    }
    Ok(len as usize)
}

/// Writes the frame's length into its first four bytes, reserved by the caller.
fn seal(mut buf: BytesMut) -> BytesMut {
    let len = (buf.len() - 4) as i32;
    buf[..4].copy_from_slice(&len.to_be_bytes());
    buf
}

/// A whole request frame, length prefix included: `body` as `api` at
/// `version`, with `correlation` and `client_id` in its header.
pub fn encode_request<B: Encodable>(
    api: ApiKey,
    version: i16,
    correlation: i32,
    client_id: Option<StrBytes>,
    body: &B,
) -> Result<BytesMut> {
    let header = RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(correlation)
        .with_client_id(client_id);
    let mut buf = BytesMut::with_capacity(256);
    buf.put_i32(0);
    header
        .encode(&mut buf, api.request_header_version(version))
        .map_err(|e| Error::encode("", e))?;
    body.encode(&mut buf, version)
        .map_err(|e| Error::encode("", e))?;
    Ok(seal(buf))
}

/// A whole response frame, length prefix included, answering `correlation`.
pub fn encode_response<B: Encodable>(
    api: ApiKey,
    version: i16,
    correlation: i32,
    body: &B,
) -> Result<Bytes> {
    let mut buf = BytesMut::new();
    buf.put_i32(0);
    ResponseHeader::default()
        .with_correlation_id(correlation)
        .encode(&mut buf, api.response_header_version(version))
        .map_err(|e| Error::encode(format!("{api:?} response header"), e))?;
    body.encode(&mut buf, version)
        .map_err(|e| Error::encode(format!("{api:?} v{version} response"), e))?;
    Ok(seal(buf).freeze())
}

/// A whole request frame of an API kafka-protocol does not type: `body`
/// (encoded by this crate) behind a request header of `header_version`
/// carrying `key`, `version`, `correlation` and `client_id`.
pub fn encode_raw_request(
    key: i16,
    version: i16,
    header_version: i16,
    correlation: i32,
    client_id: Option<StrBytes>,
    body: &[u8],
) -> Result<BytesMut> {
    let header = RequestHeader::default()
        .with_request_api_key(key)
        .with_request_api_version(version)
        .with_correlation_id(correlation)
        .with_client_id(client_id);
    let mut buf = BytesMut::with_capacity(64 + body.len());
    buf.put_i32(0);
    header
        .encode(&mut buf, header_version)
        .map_err(|e| Error::encode("", e))?;
    buf.put_slice(body);
    Ok(seal(buf))
}

/// The body of a response (the frame without its prefix) to a raw request,
/// past a header of `header_version`, refused unless it answers `correlation`.
pub fn decode_raw_response(
    body: &mut Bytes,
    header_version: i16,
    correlation: i32,
    what: &str,
) -> Result<Bytes> {
    let header = ResponseHeader::decode(body, header_version)
        .map_err(|e| Error::decode(format!("{what} response header"), e))?;
    if header.correlation_id != correlation {
        return Err(Error::Correlation {
            expected: correlation,
            got: header.correlation_id,
        });
    }
    Ok(body.split_off(0))
}

/// (api key, version, correlation id) of a request frame (prefix included):
/// the first fields of every request header version. `None` when the frame
/// is too short to hold them.
pub fn peek_request(frame: &[u8]) -> Option<(i16, i16, i32)> {
    let mut b = frame.get(4..12)?;
    Some((b.get_i16(), b.get_i16(), b.get_i32()))
}

/// The body of a request frame (prefix included) of `api` at `version`,
/// past its header.
pub fn decode_request<T: Decodable>(frame: &Bytes, api: ApiKey, version: i16) -> Result<T> {
    let mut body = frame.slice(4.min(frame.len())..);
    RequestHeader::decode(&mut body, api.request_header_version(version))
        .map_err(|e| Error::decode(format!("{api:?} request header"), e))?;
    T::decode(&mut body, version)
        .map_err(|e| Error::decode(format!("{api:?} v{version} request"), e))
}

/// The header of a response body (the frame without its prefix), leaving
/// `body` at the message.
pub fn decode_response_header(
    body: &mut Bytes,
    api: ApiKey,
    version: i16,
) -> Result<ResponseHeader> {
    ResponseHeader::decode(body, api.response_header_version(version))
        .map_err(|e| Error::decode(format!("{api:?} response header"), e))
}

/// The response of `api` at `version` in `body` (the frame without its
/// prefix), refused unless its header answers `correlation`. Bytes after the
/// message are left in `body` for the caller to judge.
pub fn decode_response<T: Decodable>(
    body: &mut Bytes,
    api: ApiKey,
    version: i16,
    correlation: i32,
) -> Result<T> {
    let header = decode_response_header(body, api, version)?;
    if header.correlation_id != correlation {
        return Err(Error::Correlation {
            expected: correlation,
            got: header.correlation_id,
        });
    }
    T::decode(body, version).map_err(|e| Error::decode(format!("{api:?} v{version} response"), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::{GroupId, HeartbeatRequest, HeartbeatResponse};

    #[test]
    fn lengths_outside_the_limit_are_refused() {
        assert_eq!(body_len(4i32.to_be_bytes()).unwrap(), 4);
        assert_eq!(
            body_len((MAX_FRAME as i32).to_be_bytes()).unwrap(),
            MAX_FRAME
        );
        for bad in [i32::MIN, -1, 0, 3, MAX_FRAME as i32 + 1, i32::MAX] {
            let e = body_len(bad.to_be_bytes()).unwrap_err();
            assert_eq!(e.to_string(), format!("bad response length {bad}"));
            assert!(e.is_stream());
        }
        // A TLS alert read as a length names the setting that is missing.
        let e = body_len([0x15, 0x03, 0x03, 0x00]).unwrap_err();
        assert!(e.to_string().contains("security.protocol=ssl"), "{e}");
    }

    #[test]
    fn requests_carry_their_header_and_responses_their_correlation() {
        let req = HeartbeatRequest::default()
            .with_group_id(GroupId(StrBytes::from_static_str("g")))
            .with_generation_id(3);
        for v in 0..=4 {
            let frame = encode_request(
                ApiKey::Heartbeat,
                v,
                41,
                Some(StrBytes::from_static_str("partwise")),
                &req,
            )
            .unwrap();
            assert_eq!(
                body_len(frame[..4].try_into().unwrap()).unwrap(),
                frame.len() - 4
            );
            assert_eq!(
                peek_request(&frame),
                Some((ApiKey::Heartbeat as i16, v, 41))
            );
            let back: HeartbeatRequest =
                decode_request(&frame.freeze(), ApiKey::Heartbeat, v).unwrap();
            assert_eq!(back, req);

            let resp = HeartbeatResponse::default().with_error_code(27);
            let frame = encode_response(ApiKey::Heartbeat, v, 41, &resp).unwrap();
            let mut body = frame.slice(4..);
            let got: HeartbeatResponse =
                decode_response(&mut body.clone(), ApiKey::Heartbeat, v, 41).unwrap();
            assert_eq!(got.error_code, 27);
            let e = decode_response::<HeartbeatResponse>(&mut body, ApiKey::Heartbeat, v, 40)
                .unwrap_err();
            assert_eq!(e.to_string(), "correlation id 41 answered request 40");
        }
    }

    #[test]
    fn short_frames_are_errors_not_panics() {
        assert_eq!(peek_request(&[0, 0, 0, 4, 0, 12]), None);
        let frame = Bytes::from_static(&[0, 0, 0, 2, 0]);
        let e = decode_request::<HeartbeatRequest>(&frame, ApiKey::Heartbeat, 4).unwrap_err();
        assert!(std::error::Error::source(&e).is_some(), "{e}");
        let mut empty = Bytes::new();
        assert!(decode_response::<HeartbeatResponse>(&mut empty, ApiKey::Heartbeat, 0, 1).is_err());
    }

    /// A well-framed answer with the right correlation id whose first array
    /// announces 2^31 - 1 elements (with bytes for none of them): an error,
    /// not an abort, under the allocator the binaries install.
    #[test]
    fn an_absurd_array_count_in_a_response_is_an_error_not_an_abort() {
        use kafka_protocol::messages::{
            DescribeGroupsResponse, FindCoordinatorResponse, JoinGroupResponse, MetadataResponse,
            OffsetFetchResponse,
        };
        fn body(prefix: &[u8]) -> Bytes {
            let mut b = BytesMut::new();
            b.put_i32(9); // correlation id, response header v0
            b.put_slice(prefix);
            b.put_i32(i32::MAX);
            b.put_slice(&[0; 16]);
            b.freeze()
        }
        let metadata = body(&[]);
        let r = decode_response::<MetadataResponse>(&mut metadata.clone(), ApiKey::Metadata, 1, 9);
        assert!(r.is_err(), "{r:?}");
        // JoinGroup v1: error code, generation, protocol name, leader, member id, then members.
        let join = body(&[0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
        let r = decode_response::<JoinGroupResponse>(&mut join.clone(), ApiKey::JoinGroup, 1, 9);
        assert!(r.is_err(), "{r:?}");
        let describe = body(&[]);
        let r = decode_response::<DescribeGroupsResponse>(
            &mut describe.clone(),
            ApiKey::DescribeGroups,
            0,
            9,
        );
        assert!(r.is_err(), "{r:?}");
        let offsets = body(&[]);
        let r =
            decode_response::<OffsetFetchResponse>(&mut offsets.clone(), ApiKey::OffsetFetch, 1, 9);
        assert!(r.is_err(), "{r:?}");
        // A flexible version: the count is an unsigned varint (2^32 - 2 elements).
        let mut flexible = BytesMut::new();
        flexible.put_i32(9);
        flexible.put_u8(0); // header tagged fields
        flexible.put_i32(0); // throttle
        flexible.put_slice(&[0xfe, 0xff, 0xff, 0xff, 0x0f]); // coordinators count + 1
        let r = decode_response::<FindCoordinatorResponse>(
            &mut flexible.freeze(),
            ApiKey::FindCoordinator,
            4,
            9,
        );
        assert!(r.is_err(), "{r:?}");
    }
}
