//! The ticker's integration tests, one binary: the offline modules always
//! (no service), the live modules under the `live` feature
//! (`bash scripts/test`) against Apache Kafka and the Redis Cluster of
//! `scripts/services`, and fail when one is missing.

mod offline {
    mod feed;
    mod flags;
    mod scripts;
}

#[cfg(feature = "live")]
mod live {
    mod demo;
    mod scripts;
    mod secure;
    mod ticker;
}
