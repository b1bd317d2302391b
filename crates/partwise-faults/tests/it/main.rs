//! partwise-faults' integration tests, one binary: the live modules run
//! under the `live` feature (`bash scripts/test`) against the services of
//! `scripts/services`, and fail when one is missing.

#[cfg(feature = "live")]
mod live {
    mod proxy;
}
