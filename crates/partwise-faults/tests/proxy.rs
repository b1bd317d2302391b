//! The proxy in front of a real broker (PARTWISE_TEST_BROKER, started by
//! `bash scripts/test`): what a client sees through it.

use partwise_faults::{ApiKey, FaultProxy, Rule, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR};
use partwise_group::cluster::Cluster;
use std::time::Duration;

fn broker() -> String {
    std::env::var("PARTWISE_TEST_BROKER").unwrap_or_else(|_| {
        panic!(
            "PARTWISE_TEST_BROKER is not set: these tests need a live broker. \
             Run `eval \"$(bash scripts/tansu-up)\"` first (bash scripts/test does)."
        )
    })
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn topic(name: &str) -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
        % 1_000_000_000;
    format!("pw-faults-{name}-{}-{n}", std::process::id())
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
        let mut leaders = Vec::new();
        for _ in 0..100 {
            leaders = c.metadata(std::slice::from_ref(&t)).await.unwrap()[&t]
                .leaders
                .clone();
            if leaders.iter().all(|&l| l >= 0) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(leaders.iter().all(|&l| l >= 0), "{leaders:?}");
        // Every broker address now points at the proxy, not at the broker.
        assert_eq!(c.leader(&t, 0).as_deref(), Some(proxy.addr()));
        assert_eq!(c.find_coordinator("faults-g").await.unwrap(), proxy.addr());

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
