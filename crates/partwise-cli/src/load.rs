//! The files a command is given to analyse, read and bounded once for every
//! command that takes them: a topology file (`check`, `report`, `salt`,
//! `resize`) and sample keys.

use crate::cmd::key_source;
use crate::exit::{CliError, Result};
use partwise::topology::Topology;
use std::path::{Path, PathBuf};

/// Reads and validates a topology file; errors name the file, line and field.
pub fn load_topology(path: &Path) -> Result<Topology> {
    let name = path.display();
    let bytes = crate::input::read_capped(path, 4 << 20, "cannot read topology file")?;
    let text = String::from_utf8(bytes).map_err(|e| {
        CliError::msg(format!(
            "cannot read topology file {name}: not UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    Topology::parse(&text).map_err(|e| CliError::context(name.to_string(), e))
}

/// Reads a Kafka Streams application's `Topology#describe()` text.
pub fn load_streams(path: &Path) -> Result<partwise::streams::Application> {
    let name = path.display();
    let bytes = crate::input::read_capped(path, 16 << 20, "cannot read Kafka Streams topology")?;
    let text = String::from_utf8(bytes).map_err(|e| {
        CliError::msg(format!(
            "cannot read Kafka Streams topology {name}: not UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    partwise::streams::Application::parse(&text)
        .map_err(|e| CliError::context(format!("--streams {name}"), e))
}

/// Reads sample keys as given (logical keys, not yet encoded).
pub fn load_samples(input: Option<PathBuf>) -> Result<Vec<Vec<u8>>> {
    let mut keys = Vec::new();
    if let Some(path) = input.as_deref() {
        if path.as_os_str() != "-" && crate::input::looks_like_counts(path) {
            say!(
                "partwise: warning: every line of {} looks like KEY,COUNT, but -i reads each whole line as a sample key (give the file as --counts to weigh the keys by their counts)",
                path.display()
            );
        }
    }
    if input.is_some() {
        let held =
            crate::input::Held::new("the sample keys", "; a sample of the keys answers as well");
        key_source(Vec::new(), input, partwise::KeyFormat::Utf8).for_each_held(held, |b| {
            keys.extend(b.keys.iter().map(|k| k.to_vec()));
            Ok(())
        })?;
    }
    Ok(keys)
}

/// Topics of one topology file at most.
const MAX_TOPICS: usize = 10_000;
/// Producers (a topic without any counts as one) over a co-partition
/// group's topics at most: each pair is compared.
const MAX_GROUP_PRODUCERS: usize = 2_000;

/// Refuses a topology file with nothing to check or too large to check
/// (the checks are quadratic in a group's producers and run every member
/// count of a range); `report` holds files to the same bounds.
pub fn bounded(file: &Path, topology: &Topology) -> Result<()> {
    if topology.topics.is_empty() && topology.redis_families.is_empty() {
        // Exit 0 would say an empty (or misnamed) file holds.
        return Err(CliError::msg(format!(
            "{}: nothing to check: no [[topic]] and no [[redis_family]]",
            file.display()
        )));
    }
    // The checks compare every pair of a group's producers and look topics
    // up by name: quadratic, so the sizes are bounded.
    if topology.topics.len() > MAX_TOPICS {
        return Err(CliError::msg(format!(
            "{}: {} topics; at most {MAX_TOPICS}",
            file.display(),
            topology.topics.len()
        )));
    }
    for (i, g) in topology.copartition_groups.iter().enumerate() {
        let producers: usize = g
            .topics
            .iter()
            .filter_map(|t| topology.topic(t))
            .map(|t| t.producers.len().max(1))
            .sum();
        if producers > MAX_GROUP_PRODUCERS {
            return Err(CliError::msg(format!(
                "{}: copartition[{i}] '{}': {producers} producers over its topics; at most {MAX_GROUP_PRODUCERS}",
                file.display(),
                g.name
            )));
        }
    }
    for (i, g) in topology.consumer_groups.iter().enumerate() {
        let partitions: u64 = g
            .subscriptions
            .iter()
            .filter_map(|s| topology.topics.iter().find(|t| &t.name == s))
            .map(|t| u64::from(t.partitions.get()))
            .sum();
        let (runs, most) = match &g.members {
            partwise::topology::Members::Range(lo, hi) => {
                (u64::from(hi.saturating_sub(*lo)) + 1, u64::from(*hi))
            }
            partwise::topology::Members::Count(m) => {
                crate::limits::members(
                    &format!("{}: consumer_group[{i}].members", file.display()),
                    u64::from(*m),
                )?;
                (1, u64::from(*m))
            }
            partwise::topology::Members::Ids(ids) => (1, ids.len() as u64),
        };
        crate::limits::assigned(
            &format!("{}: consumer_group[{i}] '{}'", file.display(), g.name),
            partitions,
            most,
            runs,
        )?;
    }
    Ok(())
}
