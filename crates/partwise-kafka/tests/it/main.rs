//! partwise-kafka's integration tests, one binary: the live modules run
//! under the `live` feature (`bash scripts/test`) against the Apache Kafka
//! of `scripts/services`, and fail when it is missing. Their shared helpers
//! are `partwise_faults::live`.

#[cfg(feature = "live")]
mod live {
    mod kafka;
}
