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
    mod batching;
    mod check;
    mod check_streams;
    mod completions;
    mod every_command;
    mod hostile;
    mod kafka;
    mod partitioners;
    mod plan;
    mod report;
    mod route;
    mod route_threads;
    mod salt;
    mod skew;
    mod slot;
    mod weights;
}

#[cfg(feature = "live")]
mod live {
    mod check_streams;
    mod kafka;
    mod kafka_audit;
    mod kafka_audit_window;
    mod kafka_clients;
    mod kafka_consume;
    mod kafka_consume_defaults;
    mod kafka_franz_go;
    mod kafka_group;
    mod kafka_group_readiness;
    mod kafka_group_streams;
    mod live_weights;
    mod redis;
    mod redis_traffic;
    mod report;
    mod salt;
    mod secure;
}
