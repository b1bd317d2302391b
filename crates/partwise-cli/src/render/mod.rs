//! Rendering with one home: what several commands print in the same shape
//! (the JSON of findings, the HTML escaper, the SVG chart), so that no
//! command module imports another's.

pub mod audit;
pub mod findings;
pub mod group;
pub mod html;
pub mod redis;
pub mod skew;
pub mod streams_group;
pub mod svg;
