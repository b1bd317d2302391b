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

/// Refuses a topology file with nothing to check or too large to check
/// ([`partwise::topology::bounds`]); `report` holds files to the same
/// bounds. The error names the file.
pub fn bounded(file: &Path, topology: &Topology) -> Result<()> {
    partwise::topology::bounds::bounded(topology)
        .map_err(|e| CliError::context(file.display().to_string(), e))
}
