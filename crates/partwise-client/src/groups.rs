//! ListGroups: every group the cluster's coordinators hold, with its type.
//!
//! Each broker lists only the groups it coordinates, so the request goes to
//! every broker of the Metadata answer. Version 5 (KIP-848) answers each
//! group's type (`classic`, `consumer`, `streams`, `share`); a broker that
//! offers less answers without it, and the type is then unknown: the
//! protocol type below v5 is `consumer` for a classic and a consumer-protocol
//! group alike, so nothing is guessed from it.

use crate::cluster::Cluster;
use crate::error::{Error, Result};
use kafka_protocol::messages::ListGroupsRequest;
use kafka_protocol::messages::ListGroupsResponse;
use std::collections::BTreeMap;

/// The first ListGroups version whose answer carries each group's type.
pub const TYPED_VERSION: i16 = 5;

/// One group as its coordinator lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedGroup {
    /// The group id.
    pub group_id: String,
    /// The protocol type (`consumer` for consumer groups of either
    /// protocol; empty for a group that only commits offsets).
    pub protocol_type: String,
    /// The group's state (ListGroups v4+), `None` from an older broker.
    pub state: Option<String>,
    /// The group's type as the coordinator names it (`classic`,
    /// `consumer`, `streams`, `share`; ListGroups v5+), `None` when its
    /// coordinator answered an older version.
    pub group_type: Option<String>,
    /// The coordinator that listed it (`host:port`).
    pub broker: String,
}

/// Every group of the cluster, and the ListGroups version each broker answered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupListing {
    /// The groups, by id.
    pub groups: Vec<ListedGroup>,
    /// Each broker asked (`host:port`) and the ListGroups version it answered.
    pub versions: Vec<(String, i16)>,
}

impl GroupListing {
    /// The brokers that answered below [`TYPED_VERSION`], whose groups' types are unknown.
    pub fn untyped_brokers(&self) -> Vec<&(String, i16)> {
        self.versions
            .iter()
            .filter(|(_, v)| *v < TYPED_VERSION)
            .collect()
    }
}

/// The groups of one broker's ListGroups answer at `version`, or the
/// broker's error.
pub fn listed(resp: ListGroupsResponse, version: i16, broker: &str) -> Result<Vec<ListedGroup>> {
    if resp.error_code != 0 {
        return Err(Error::protocol(broker, "ListGroups", resp.error_code));
    }
    Ok(resp
        .groups
        .into_iter()
        .map(|g| ListedGroup {
            group_id: g.group_id.0.to_string(),
            protocol_type: g.protocol_type.to_string(),
            state: (version >= 4).then(|| g.group_state.to_string()),
            group_type: (version >= TYPED_VERSION).then(|| g.group_type.to_string()),
            broker: broker.to_string(),
        })
        .collect())
}

/// Every group of the cluster: ListGroups (all states, all types) to each
/// broker the Metadata answer names. A broker that does not answer, or
/// answers an error, fails the listing: a group it coordinates would be
/// missing without a word.
pub async fn list_groups(c: &mut Cluster) -> Result<GroupListing> {
    c.metadata(&[]).await?;
    let brokers = c.broker_addrs();
    if brokers.is_empty() {
        return Err(Error::Decode("Metadata answered no broker".into()));
    }
    let timeout = c.request_timeout();
    let mut by_id: BTreeMap<String, ListedGroup> = BTreeMap::new();
    let mut versions = Vec::new();
    for addr in brokers {
        let (resp, version) = c
            .send_to(&addr, &ListGroupsRequest::default(), timeout)
            .await?;
        versions.push((addr.clone(), version));
        // A group moving between coordinators can be listed twice; the
        // first answer stands.
        for g in listed(resp, version, &addr)? {
            by_id.entry(g.group_id.clone()).or_insert(g);
        }
    }
    Ok(GroupListing {
        groups: by_id.into_values().collect(),
        versions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use kafka_protocol::messages::ApiKey;
    use partwise_wire::frame;
    use proptest::prelude::*;

    /// A ListGroups v5 response frame body as Kafka's schema lays it out
    /// (response header v1: correlation id, tagged fields), written byte by
    /// byte here rather than by kafka-protocol's encoder.
    fn v5_bytes() -> Vec<u8> {
        let mut b = vec![0, 0, 0, 7, 0]; // correlation 7, no header tags
        b.extend([0, 0, 0, 0]); // throttle_time_ms
        b.extend([0, 0]); // error_code
        b.push(3); // compact array of 2
        for (id, proto, state, ty) in [
            ("ticker-join", "streams", "STABLE", "streams"),
            ("audit", "consumer", "Stable", "classic"),
        ] {
            for s in [id, proto, state, ty] {
                b.push(s.len() as u8 + 1);
                b.extend(s.as_bytes());
            }
            b.push(0); // the group's tagged fields
        }
        b.push(0); // the response's tagged fields
        b
    }

    fn decode(bytes: &[u8], version: i16) -> std::result::Result<ListGroupsResponse, String> {
        let mut body = Bytes::copy_from_slice(bytes);
        let r =
            frame::decode_response::<ListGroupsResponse>(&mut body, ApiKey::ListGroups, version, 7)
                .map_err(|e| e.to_string())?;
        if !body.is_empty() {
            return Err(format!("{} bytes after the message", body.len()));
        }
        Ok(r)
    }

    #[test]
    fn a_v5_answer_gives_each_groups_type_and_state() {
        let r = decode(&v5_bytes(), 5).unwrap();
        let g = listed(r, 5, "b:9092").unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].group_id, "ticker-join");
        assert_eq!(g[0].group_type.as_deref(), Some("streams"));
        assert_eq!(g[0].state.as_deref(), Some("STABLE"));
        assert_eq!(g[1].group_type.as_deref(), Some("classic"));
        assert_eq!(g[1].protocol_type, "consumer");
        assert_eq!(g[1].broker, "b:9092");
    }

    #[test]
    fn a_v4_answer_leaves_the_type_unknown() {
        // v4: the same layout without the type.
        let mut b = vec![0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 2];
        for s in ["audit", "consumer", "Empty"] {
            b.push(s.len() as u8 + 1);
            b.extend(s.as_bytes());
        }
        b.extend([0, 0]);
        let g = listed(decode(&b, 4).unwrap(), 4, "b:9092").unwrap();
        assert_eq!(g[0].group_id, "audit");
        assert_eq!(g[0].state.as_deref(), Some("Empty"));
        assert_eq!(g[0].group_type, None);
        // The v5 bytes read as v4 do not end where the message does.
        assert!(decode(&v5_bytes(), 4).is_err());
    }

    #[test]
    fn a_brokers_error_fails_its_listing() {
        let mut b = v5_bytes();
        b[9..11].copy_from_slice(&14i16.to_be_bytes()); // COORDINATOR_LOAD_IN_PROGRESS
        let e = listed(decode(&b, 5).unwrap(), 5, "b:9092").unwrap_err();
        assert_eq!(e.code(), Some(14));
        assert!(e.to_string().contains("b:9092"), "{e}");
    }

    #[test]
    fn every_truncation_is_an_error() {
        let full = v5_bytes();
        for n in 0..full.len() {
            assert!(decode(&full[..n], 5).is_err(), "prefix {n}");
        }
        // An array announcing 2^32 - 2 groups in a few bytes.
        let huge = [
            0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f,
        ];
        assert!(decode(&huge, 5).is_err());
    }

    /// A broker that offers ListGroups up to v4 (before group types):
    /// ApiVersions, Metadata naming itself as the one broker, and ListGroups
    /// listing one group, each at the version asked.
    async fn broker_before_types() -> String {
        use kafka_protocol::messages::api_versions_response::ApiVersion;
        use kafka_protocol::messages::list_groups_response::ListedGroup as Wired;
        use kafka_protocol::messages::metadata_response::MetadataResponseBroker;
        use kafka_protocol::messages::{ApiVersionsResponse, BrokerId, GroupId, MetadataResponse};
        use kafka_protocol::protocol::StrBytes;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                tokio::spawn(async move {
                    loop {
                        let mut len = [0u8; 4];
                        if s.read_exact(&mut len).await.is_err() {
                            return;
                        }
                        let mut req = len.to_vec();
                        req.resize(4 + u32::from_be_bytes(len) as usize, 0);
                        s.read_exact(&mut req[4..]).await.unwrap();
                        let (key, v, corr) = frame::peek_request(&req).unwrap();
                        let out = match ApiKey::try_from(key).unwrap() {
                            ApiKey::ApiVersions => {
                                let keys = [(18, 3), (3, 12), (16, 4)]
                                    .map(|(k, max)| {
                                        ApiVersion::default().with_api_key(k).with_max_version(max)
                                    })
                                    .to_vec();
                                let r = ApiVersionsResponse::default().with_api_keys(keys);
                                frame::encode_response(ApiKey::ApiVersions, v, corr, &r)
                            }
                            ApiKey::Metadata => {
                                let r = MetadataResponse::default().with_brokers(vec![
                                    MetadataResponseBroker::default()
                                        .with_node_id(BrokerId(0))
                                        .with_host(StrBytes::from_string(addr.ip().to_string()))
                                        .with_port(addr.port() as i32),
                                ]);
                                frame::encode_response(ApiKey::Metadata, v, corr, &r)
                            }
                            ApiKey::ListGroups => {
                                assert_eq!(v, 4, "ListGroups asked above the broker's v4");
                                let g = Wired::default()
                                    .with_group_id(GroupId(StrBytes::from_static_str("audit")))
                                    .with_protocol_type(StrBytes::from_static_str("consumer"))
                                    .with_group_state(StrBytes::from_static_str("Stable"));
                                let r = ListGroupsResponse::default().with_groups(vec![g]);
                                frame::encode_response(ApiKey::ListGroups, v, corr, &r)
                            }
                            k => panic!("unexpected {k:?}"),
                        };
                        s.write_all(&out.unwrap()).await.unwrap();
                    }
                });
            }
        });
        addr.to_string()
    }

    #[tokio::test]
    async fn a_broker_before_v5_lists_its_groups_with_the_type_unknown() {
        let addr = broker_before_types().await;
        let timeout = std::time::Duration::from_secs(5);
        let mut c = Cluster::new(vec![addr.clone()], "partwise-test", timeout);
        let l = list_groups(&mut c).await.unwrap();
        assert_eq!(l.versions, vec![(addr.clone(), 4)]);
        assert_eq!(l.untyped_brokers().len(), 1);
        assert_eq!(
            l.groups,
            vec![ListedGroup {
                group_id: "audit".into(),
                protocol_type: "consumer".into(),
                state: Some("Stable".into()),
                group_type: None,
                broker: addr,
            }]
        );
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            for v in [4, 5] {
                if let Ok(r) = decode(&bytes, v) {
                    let _ = listed(r, v, "b:9092");
                }
            }
        }

        #[test]
        fn flipped_bytes_of_an_answer_never_panic(
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6)
        ) {
            let mut b = v5_bytes();
            for (i, v) in flips {
                let i = i.index(b.len());
                b[i] = v;
            }
            if let Ok(r) = decode(&b, 5) {
                let _ = listed(r, 5, "b:9092");
            }
        }
    }
}
