//! The library calls of the commands that compose several sources: the
//! files they are given, the cluster (`partwise-kafka`), Redis
//! (`partwise-redis`) and the core. No flags and no printing here (notes
//! and warnings aside, on stderr): each call takes a request in its own
//! terms and returns a typed report; `cmd/` turns flags into the request
//! and prints the report. The commands whose work is one call of the core
//! or of an adapter call it from `cmd/` directly.

pub mod check;
pub mod report;
pub mod streams;
pub mod weights;
