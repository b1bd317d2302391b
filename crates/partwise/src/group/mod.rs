//! Consumer groups around the assignors of [`crate::assign`]: a declared
//! group's placement over a topology file ([`placement`]), a live group's
//! description checked against its assignor ([`described`]), and which
//! client a member runs and what that client can do ([`clients`]).

pub mod clients;
pub mod described;
pub mod placement;
