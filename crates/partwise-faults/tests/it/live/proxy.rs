//! The proxy in front of Apache Kafka (PARTWISE_TEST_BROKER, started by
//! `scripts/services`, and a private three-node cluster): what a client
//! sees through it.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, FindCoordinatorRequest, FindCoordinatorResponse,
    MetadataRequest, MetadataResponse, RequestHeader, ResponseHeader,
};
use kafka_protocol::protocol::{Decodable, Encodable, Message, StrBytes};
use partwise_client::cluster::Cluster;
use partwise_faults::live::{rt, test_broker, unique};
use partwise_faults::{
    ApiKey, FaultProxy, KafkaCluster, Rule, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
};
use std::io::{Read, Write};
use std::time::Duration;

fn broker() -> String {
    test_broker()
}

fn topic(name: &str) -> String {
    unique(&format!("pw-faults-{name}"))
}

#[test]
fn clients_stay_behind_the_proxy_and_see_a_leaderless_partition() {
    let proxy = FaultProxy::start(&broker()).unwrap();
    let t = topic("leaderless");
    rt().block_on(async {
        let mut c = Cluster::new(
            vec![proxy.addr().to_string()],
            "faults-test",
            Duration::from_secs(10),
        );
        c.create_topics(&[(&t, 4)]).await.unwrap();
        // A topic just created may be missing from the answer (the broker
        // has not loaded it yet) or have partitions without a leader: ask
        // again until every partition has one.
        let mut leaders = Vec::new();
        for _ in 0..100 {
            leaders = c
                .metadata(std::slice::from_ref(&t))
                .await
                .unwrap()
                .get(&t)
                .map(|m| m.leaders.clone())
                .unwrap_or_default();
            if !leaders.is_empty() && leaders.iter().all(|&l| l >= 0) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            !leaders.is_empty() && leaders.iter().all(|&l| l >= 0),
            "{leaders:?}"
        );
        // Every broker address now points at the proxy, not at the broker.
        assert_eq!(c.leader(&t, 0).as_deref(), Some(proxy.addr()));
        // A broker that has just started answers COORDINATOR_NOT_AVAILABLE
        // until its offsets topic is loaded: ask again for a while.
        let mut coordinator = c.find_coordinator("faults-g").await;
        for _ in 0..60 {
            if coordinator.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            coordinator = c.find_coordinator("faults-g").await;
        }
        assert_eq!(coordinator.unwrap(), proxy.addr());

        proxy
            .set_rule(Rule::LeaderNotAvailable {
                topic: t.clone(),
                partition: 2,
            })
            .unwrap();
        let m = c.metadata(std::slice::from_ref(&t)).await.unwrap();
        assert_eq!(m[&t].leaders[2], -1);
        assert!(m[&t]
            .leaders
            .iter()
            .enumerate()
            .all(|(p, &l)| (p == 2) == (l == -1)));
        proxy.clear_rules();
        assert!(c.metadata(std::slice::from_ref(&t)).await.unwrap()[&t].leaders[2] >= 0);
    });
    assert!(proxy.seen(ApiKey::Metadata) >= 3);
}

#[test]
fn injected_errors_fire_exactly_n_times_and_outages_end() {
    let proxy = FaultProxy::start(&broker()).unwrap();
    rt().block_on(async {
        let mut c = Cluster::new(
            vec![proxy.addr().to_string()],
            "faults-test",
            Duration::from_secs(5),
        );
        proxy
            .set_rule(Rule::Error {
                api: ApiKey::FindCoordinator,
                code: COORDINATOR_NOT_AVAILABLE,
                times: 1,
            })
            .unwrap();
        proxy
            .set_rule(Rule::Error {
                api: ApiKey::FindCoordinator,
                code: NOT_COORDINATOR,
                times: 1,
            })
            .unwrap();
        let e = c.find_coordinator("faults-g").await.unwrap_err();
        assert_eq!(e.code(), Some(COORDINATOR_NOT_AVAILABLE), "{e}");
        let e = c.find_coordinator("faults-g").await.unwrap_err();
        assert_eq!(e.code(), Some(NOT_COORDINATOR), "{e}");
        assert_eq!(c.find_coordinator("faults-g").await.unwrap(), proxy.addr());
        assert_eq!(proxy.injected(ApiKey::FindCoordinator), 2);

        proxy.set_down(true);
        let e = c.find_coordinator("faults-g").await.unwrap_err();
        assert!(e.is_transport(), "{e}");
        proxy.set_down(false);
        assert_eq!(c.find_coordinator("faults-g").await.unwrap(), proxy.addr());
        proxy.drop_connections();
        // The pooled connection died with the drop; the next request says so
        // and the one after reconnects.
        let first = c.find_coordinator("faults-g").await;
        if let Err(e) = &first {
            assert!(e.is_transport(), "{e}");
            assert_eq!(c.find_coordinator("faults-g").await.unwrap(), proxy.addr());
        }
    });
}

/// One request at `version` on a fresh connection to `addr`, and its answer.
fn exchange<Q: Encodable, R: Decodable>(addr: &str, api: ApiKey, version: i16, req: &Q) -> R {
    let mut buf = BytesMut::new();
    buf.put_i32(0);
    RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(1)
        .with_client_id(Some(StrBytes::from_static_str("faults-raw")))
        .encode(&mut buf, api.request_header_version(version))
        .unwrap();
    req.encode(&mut buf, version).unwrap();
    let len = (buf.len() - 4) as i32;
    buf[..4].copy_from_slice(&len.to_be_bytes());
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(&buf).unwrap();
    let mut len = [0u8; 4];
    s.read_exact(&mut len).unwrap();
    let mut body = vec![0u8; i32::from_be_bytes(len) as usize];
    s.read_exact(&mut body).unwrap();
    let mut body = Bytes::from(body);
    let h = ResponseHeader::decode(&mut body, api.response_header_version(version)).unwrap();
    assert_eq!(h.correlation_id, 1);
    let r = R::decode(&mut body, version).unwrap();
    assert_eq!(body.remaining(), 0, "{api:?} v{version}: bytes left over");
    r
}

fn max_version(resp: &ApiVersionsResponse, api: ApiKey) -> i16 {
    resp.api_keys
        .iter()
        .find(|k| k.api_key == api as i16)
        .unwrap_or_else(|| panic!("{api:?} not offered"))
        .max_version
}

#[test]
fn a_three_broker_cluster_keeps_its_shape_behind_the_proxy() {
    let kafka = KafkaCluster::start(3).unwrap();
    let proxy = FaultProxy::start(kafka.bootstrap()).unwrap();
    let t = topic("three");

    // ApiVersions through the proxy: capped where the proxy must decode, so a
    // client never picks a Metadata or FindCoordinator version it cannot read.
    // v3+ must name the client software, or the broker refuses it (INVALID_REQUEST).
    let hello = ApiVersionsRequest::default()
        .with_client_software_name(StrBytes::from_static_str("partwise-faults-test"))
        .with_client_software_version(StrBytes::from_static_str("0.1.0"));
    let direct: ApiVersionsResponse = exchange(&kafka.addr(1), ApiKey::ApiVersions, 3, &hello);
    let proxied: ApiVersionsResponse = exchange(proxy.addr(), ApiKey::ApiVersions, 3, &hello);
    assert_eq!((direct.error_code, proxied.error_code), (0, 0));
    for (api, ours) in [
        (ApiKey::Metadata, MetadataResponse::VERSIONS.max),
        (
            ApiKey::FindCoordinator,
            FindCoordinatorResponse::VERSIONS.max,
        ),
    ] {
        assert_eq!(
            max_version(&proxied, api),
            max_version(&direct, api).min(ours),
            "{api:?}"
        );
    }
    assert_eq!(
        max_version(&proxied, ApiKey::Fetch),
        max_version(&direct, ApiKey::Fetch),
        "APIs the proxy does not read are offered as the broker offers them"
    );

    rt().block_on(async {
        let mut c = Cluster::new(
            vec![proxy.addr().to_string()],
            "faults-test",
            Duration::from_secs(20),
        );
        c.create_topics(&[(&t, 6)]).await.unwrap();
        let mut leaders = Vec::new();
        for _ in 0..150 {
            if let Ok(m) = c.metadata(std::slice::from_ref(&t)).await {
                if let Some(m) = m.get(&t) {
                    leaders = m.leaders.clone();
                }
            }
            if leaders.len() == 6 && leaders.iter().all(|&l| l > 0) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(leaders.iter().all(|&l| l > 0), "{leaders:?}");
        // Every broker has a proxy address of its own, none of them real.
        let mut addrs = std::collections::BTreeSet::new();
        for &n in kafka.nodes() {
            let a = c
                .broker_addr(n)
                .unwrap_or_else(|| panic!("broker {n} unknown"));
            assert_eq!(Some(a.to_string()), proxy.addr_of(n), "broker {n}");
            assert_eq!(proxy.upstream_of(a), Some((Some(n), kafka.addr(n))));
            assert!(
                kafka.node_at(a).is_none(),
                "broker {n} bypasses the proxy: {a}"
            );
            addrs.insert(a.to_string());
        }
        assert_eq!(addrs.len(), 3, "{addrs:?}");
        // Produce goes to each partition's leader, through its proxy address;
        // a wrong route would answer NOT_LEADER_OR_FOLLOWER.
        for p in 0..6 {
            let mut tries = 0;
            while let Err(e) = c
                .produce(&t, p, &[(None, Some(Bytes::from_static(b"v")))])
                .await
            {
                tries += 1;
                assert!(tries < 50, "produce to {t}-{p}: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            assert_eq!(c.list_offset(&t, p, -1).await.unwrap(), 1, "{t}-{p}");
        }
        // The coordinator through the proxy is the real one's stand-in.
        let mut direct = Cluster::new(vec![kafka.addr(1)], "faults-test", Duration::from_secs(20));
        let mut coord = None;
        for _ in 0..150 {
            // __consumer_offsets is created on the first lookup.
            match direct.find_coordinator("faults-g").await {
                Ok(a) => {
                    coord = Some(a);
                    break;
                }
                Err(e) if e.code() == Some(COORDINATOR_NOT_AVAILABLE) => {
                    tokio::time::sleep(Duration::from_millis(200)).await
                }
                Err(e) => panic!("{e}"),
            }
        }
        let node = kafka.node_at(&coord.unwrap()).unwrap();
        assert_eq!(
            c.find_coordinator("faults-g").await.unwrap(),
            proxy.addr_of(node).unwrap()
        );
    });

    // The newest versions Apache Kafka offers, with their tagged fields, are
    // rewritten too: Metadata and FindCoordinator (batched keys, v4+).
    let v = max_version(&proxied, ApiKey::Metadata);
    let m: MetadataResponse = exchange(
        proxy.addr(),
        ApiKey::Metadata,
        v,
        &MetadataRequest::default().with_topics(None),
    );
    assert_eq!(m.brokers.len(), 3, "Metadata v{v}");
    for b in &m.brokers {
        let a = format!("{}:{}", b.host.as_str(), b.port);
        assert_eq!(Some(a), proxy.addr_of(b.node_id.0), "Metadata v{v}");
    }
    let v = max_version(&proxied, ApiKey::FindCoordinator);
    assert!(v >= 4, "FindCoordinator v{v}");
    let f: FindCoordinatorResponse = exchange(
        proxy.addr(),
        ApiKey::FindCoordinator,
        v,
        &FindCoordinatorRequest::default()
            .with_key_type(0)
            .with_coordinator_keys(vec![StrBytes::from_static_str("faults-g")]),
    );
    assert_eq!(f.coordinators.len(), 1);
    let c = &f.coordinators[0];
    assert_eq!(c.error_code, 0, "FindCoordinator v{v}");
    assert_eq!(
        Some(format!("{}:{}", c.host.as_str(), c.port)),
        proxy.addr_of(c.node_id.0),
        "FindCoordinator v{v}"
    );
}
