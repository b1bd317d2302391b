//! Consumer groups around the assignors of [`crate::assign`]: a declared
//! group's placement over a topology file ([`placement`]), a live group's
//! description checked against its assignor ([`described`]), a group
//! simulated under an assignor with no cluster asked ([`simulated`]), and
//! which client a member runs and what that client can do ([`clients`]).

pub mod clients;
pub mod described;
pub mod placement;
pub mod simulated;
