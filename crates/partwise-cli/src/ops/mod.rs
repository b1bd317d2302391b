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

use crate::exit::Result;
use partwise::topology::Topology;
use partwise::PartitionCount;
use std::path::PathBuf;

/// What `check` and `report` read, as the flags give it.
pub struct Sources {
    /// The topology file, if any.
    pub file: Option<PathBuf>,
    /// `Topology#describe()` texts, one application each.
    pub streams: Vec<PathBuf>,
    /// Counts of topics the applications read and the file does not declare.
    pub topics: Vec<(String, PartitionCount)>,
    /// Sample keys (`-i`).
    pub input: Option<PathBuf>,
    /// The keys' traffic (`--counts`), in place of `input`.
    pub counts: Option<weights::CountsFrom>,
    /// The live Kafka cluster (`-b`).
    pub conn: Option<partwise_kafka::Connection>,
}

impl Sources {
    /// The topology file, read and validated; with `--streams` alone, a
    /// topology that declares nothing yet.
    pub fn topology(&self) -> Result<Topology> {
        Ok(match &self.file {
            Some(f) => crate::load::load_topology(f)?,
            None => Topology {
                topics: Vec::new(),
                copartition_groups: Vec::new(),
                consumer_groups: Vec::new(),
                redis_families: Vec::new(),
            },
        })
    }

    /// The file the output is of: the topology file, or the first
    /// application's.
    pub fn file(&self) -> PathBuf {
        self.file.clone().unwrap_or_else(|| self.streams[0].clone())
    }

    /// Refuses a topology too large to check ([`crate::load::bounded`]),
    /// the applications' groups added; applications alone that name no
    /// topic pass.
    pub fn bounded(&self, topology: &Topology) -> Result<()> {
        if self.file.is_some() || !topology.topics.is_empty() {
            crate::load::bounded(&self.file(), topology)?;
        }
        Ok(())
    }
}
