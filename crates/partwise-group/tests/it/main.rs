//! partwise-group's integration tests, one binary: the decoders on hostile
//! bytes (property tests, offline). The runtime's live tests run through the
//! CLI's `partwise kafka consume` (crates/partwise-cli/tests/it/live).

// The decoders meet arbitrary array counts here (a ConsumerGroupHeartbeat
// assignment's, say), so the binary runs under the allocator the partwise
// binary installs.
#[global_allocator]
static ALLOC: partwise_alloc::ReserveHuge = partwise_alloc::ReserveHuge;

mod offline {
    mod copartitioned_vectors;
    mod hostile_decode;
}
