//! Kafka Streams applications (`--streams`) declared into a topology as
//! co-partition groups, for `check` and `report` alike.

use crate::exit::{CliError, Result};
use partwise::topology::Topology;
use partwise::PartitionCount;

/// Adds application `app` (read from `path`)'s co-partition groups to
/// `topology` ([`partwise::streams::declare`]), with `counts` for topics the
/// topology does not declare; says so when it joins nothing.
pub fn declare(
    topology: &mut Topology,
    path: &std::path::Path,
    app: &partwise::streams::Application,
    counts: &[(String, PartitionCount)],
) -> Result<()> {
    let name = path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    let added = partwise::streams::declare(topology, &name, app, counts)
        .map_err(|e| CliError::context(format!("--streams {}", path.display()), e))?;
    if added.is_empty() {
        say!(
            "partwise: note: {} joins no topics Streams must co-partition",
            path.display()
        );
    }
    Ok(())
}
