//! The JSON of a placement verdict and its fix, as `check`, `assign` and
//! `report` print it.

use super::{PlacementFix, PlacementVerdict};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

#[derive(Serialize)]
struct CountDoc<'a> {
    members: u32,
    split_indices: &'a [u32],
    split_count: u32,
    indices: u32,
    error: &'a Option<String>,
}

/// Only when the simulation budget cut the sweep short.
#[derive(Serialize)]
struct CutDoc<'a> {
    declared_counts: [u32; 2],
    asked: usize,
    checked: usize,
    checked_to: Option<u32>,
    assignors_not_run_everywhere: &'a [crate::assign::Assignor],
    note: String,
}

impl Serialize for PlacementVerdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("consumer_group", &self.consumer_group)?;
        m.serialize_entry("assignor", &self.assignor)?;
        m.serialize_entry("deterministic", &self.assignor.deterministic())?;
        m.serialize_entry("copartition_group", &self.copartition)?;
        m.serialize_entry("topics", &self.topics)?;
        m.serialize_entry("units_whole", &self.ok())?;
        m.serialize_entry("kind", &self.kind())?;
        m.serialize_entry("unsubscribed", &self.unsubscribed)?;
        m.serialize_entry("splitting_counts", &self.splitting_counts())?;
        let counts: Vec<CountDoc> = self
            .counts
            .iter()
            .map(|c| CountDoc {
                members: c.members,
                split_indices: &c.split,
                split_count: c.split_count,
                indices: c.indices,
                error: &c.error,
            })
            .collect();
        m.serialize_entry("counts", &counts)?;
        // Absent within the budget, so the JSON of such a file is what it
        // always was.
        if let Some(c) = &self.cut {
            m.serialize_entry(
                "cut_short",
                &CutDoc {
                    declared_counts: [c.declared.0, c.declared.1],
                    asked: c.asked,
                    checked: c.checked,
                    checked_to: self.counts.last().map(|c| c.members),
                    assignors_not_run_everywhere: &c.assignors,
                    note: c.note(),
                },
            )?;
        }
        m.serialize_entry("fix", &self.fix)?;
        m.end()
    }
}

/// `assignors`, `member_counts`, `advice`, and `realign` (null unless the
/// co-partitioned topics' counts differ).
impl Serialize for PlacementFix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("assignors", &self.assignors)?;
        m.serialize_entry("member_counts", &self.member_counts)?;
        m.serialize_entry("advice", &self.advice)?;
        m.serialize_entry("realign", &self.realign)?;
        m.end()
    }
}
