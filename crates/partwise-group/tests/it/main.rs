//! partwise-group's integration tests, one binary: the decoders on hostile
//! bytes (property tests, offline). The runtime's live tests run through the
//! CLI's `partwise kafka consume` (crates/partwise-cli/tests/it/live).

mod offline {
    mod hostile_decode;
}
