//! The ticker's integration tests, one binary: the live modules run under
//! the `live` feature (`bash scripts/test`) against Apache Kafka and the
//! Redis Cluster of `scripts/services`, and fail when one is missing.

#[cfg(feature = "live")]
mod live {
    mod ticker;
}
