//! Broker responses as the group runtime and `kafka group` decode them:
//! `partwise_wire::frame::decode_response` for every API they speak, at
//! every version kafka-protocol knows, under the allocator the binaries
//! install (kafka-protocol reserves an array's announced count first; see
//! `partwise_alloc`). Byte 0 picks the API, byte 1 the version; the
//! rest is the response body, header first.
#![no_main]
use bytes::Bytes;
use kafka_protocol::messages::*;
use libfuzzer_sys::fuzz_target;
use partwise_wire::frame::decode_response;

#[global_allocator]
static ALLOC: partwise_alloc::ReserveHuge = partwise_alloc::ReserveHuge;

fn one<T: kafka_protocol::protocol::Decodable + kafka_protocol::protocol::Message>(api: ApiKey, version: u8, body: &[u8]) {
    let range = T::VERSIONS;
    let span = (range.max - range.min + 1) as u8;
    let v = range.min + (version % span) as i16;
    let mut b = Bytes::copy_from_slice(body);
    // The correlation id the header carries, so the body is reached.
    let correlation = body
        .get(..4)
        .map_or(0, |c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]));
    let _ = decode_response::<T>(&mut b, api, v, correlation);
}

fuzz_target!(|data: &[u8]| {
    let [api, version, body @ ..] = data else { return };
    match api % 15 {
        0 => one::<ApiVersionsResponse>(ApiKey::ApiVersions, *version, body),
        1 => one::<MetadataResponse>(ApiKey::Metadata, *version, body),
        2 => one::<FindCoordinatorResponse>(ApiKey::FindCoordinator, *version, body),
        3 => one::<JoinGroupResponse>(ApiKey::JoinGroup, *version, body),
        4 => one::<SyncGroupResponse>(ApiKey::SyncGroup, *version, body),
        5 => one::<HeartbeatResponse>(ApiKey::Heartbeat, *version, body),
        6 => one::<LeaveGroupResponse>(ApiKey::LeaveGroup, *version, body),
        7 => one::<OffsetFetchResponse>(ApiKey::OffsetFetch, *version, body),
        8 => one::<OffsetCommitResponse>(ApiKey::OffsetCommit, *version, body),
        9 => one::<ListOffsetsResponse>(ApiKey::ListOffsets, *version, body),
        10 => one::<FetchResponse>(ApiKey::Fetch, *version, body),
        11 => one::<SaslHandshakeResponse>(ApiKey::SaslHandshake, *version, body),
        12 => one::<SaslAuthenticateResponse>(ApiKey::SaslAuthenticate, *version, body),
        13 => one::<DescribeGroupsResponse>(ApiKey::DescribeGroups, *version, body),
        _ => one::<ConsumerGroupDescribeResponse>(ApiKey::ConsumerGroupDescribe, *version, body),
    }
});
