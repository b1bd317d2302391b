//! The `partwise` command's integration tests, one binary. `offline` needs
//! no service and runs in every `cargo test`; `live` runs under the `live`
//! feature (`bash scripts/test`) against the services of `scripts/services`
//! (Apache Kafka, Redis Cluster) and fails when one is missing. Helpers
//! shared by both are in `common`; live-test support shared with the other
//! crates is `partwise_faults::live`.

mod common;

mod offline {
    mod assign;
    mod assign_kip848;
    mod cli;
    mod hostile;
    mod kafka;
    mod report;
    mod route_threads;
    mod strategy;
    mod topology;
    mod weights;
}

#[cfg(feature = "live")]
mod live {
    mod audit_mixture;
    mod consume;
    mod consume_defaults;
    mod group_live;
    mod kafka;
    mod readiness_live;
    mod redis;
    mod report;
    mod salt;
    mod secure;
}
