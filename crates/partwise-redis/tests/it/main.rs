//! partwise-redis' integration tests, one binary: the live modules run
//! under the `live` feature (`bash scripts/test`) against the Redis Cluster
//! of `scripts/services`, and fail when it is missing.

#[cfg(feature = "live")]
mod live {
    mod cluster;
}
