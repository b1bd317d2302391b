//! A topology file checked whole over sample keys: every co-partition
//! group, Redis family and consumer group of the file, each with its
//! verdict. The checks are [`crate::topology`]'s (co-partition groups and
//! Redis families) and [`crate::group::placement`]'s (consumer groups); this module
//! only gathers them, so that the file's model does not depend on the
//! assignors that placement runs. [`topic_drift`] holds a live topic to its
//! declaration.

mod drift;

pub use drift::{topic_drift, TopicDrift};

use crate::group::placement;
use crate::topology::{check_family, check_group, FamilyVerdict, GroupVerdict, Topology};

/// The result of [`check`].
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// One verdict per co-partition group, in file order.
    pub groups: Vec<GroupVerdict>,
    /// One verdict per Redis family, in file order.
    pub families: Vec<FamilyVerdict>,
    /// One verdict per consumer group and co-partition group it reads.
    pub placements: Vec<placement::PlacementVerdict>,
    /// The number of sample keys used.
    pub sample_keys: usize,
}

impl Report {
    /// Whether every group is co-partitioned, every family co-located and
    /// every consumer group keeps its units whole.
    pub fn ok(&self) -> bool {
        self.groups.iter().all(GroupVerdict::ok)
            && self.families.iter().all(FamilyVerdict::ok)
            && self.placements.iter().all(|p| p.ok())
    }
}

/// Checks every co-partition group and Redis family of `topology`.
///
/// `samples` are logical keys (the text a user reads, such as `BBCA`); each
/// producer encodes them with its own key format. With no samples, the
/// verdicts still hold (they follow from the declarations) but carry no
/// fractions.
pub fn check(topology: &Topology, samples: &[&[u8]]) -> Report {
    Report {
        groups: topology
            .copartition_groups
            .iter()
            .map(|g| check_group(topology, g, samples))
            .collect(),
        families: topology
            .redis_families
            .iter()
            .map(|f| check_family(f, samples))
            .collect(),
        placements: placement::placements_keyed(topology, samples, None),
        sample_keys: samples.len(),
    }
}
