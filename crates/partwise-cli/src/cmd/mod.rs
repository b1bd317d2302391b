//! One module per subcommand.

pub mod assign;
pub mod batching;
pub mod check;
pub mod consume;
pub mod partitioners;
pub mod plan;
pub mod resize;
pub mod route;
pub mod salt;
pub mod skew;
pub mod slot;

use crate::exit::{CliError, Result};
use crate::input::KeySource;
use partwise::KeyFormat;
use std::ffi::OsString;
use std::path::PathBuf;

/// Turns the raw key flags shared by `route` and `slot` into a key source.
pub fn key_source(
    keys: Vec<OsString>,
    input: Option<PathBuf>,
    key_format: &str,
) -> Result<KeySource> {
    let format: KeyFormat = key_format
        .parse()
        .map_err(|e| CliError::msg(format!("--key-format: {e}")))?;
    Ok(KeySource {
        args: keys.into_iter().map(os_bytes).collect(),
        file: input,
        format,
    })
}

#[cfg(unix)]
fn os_bytes(s: OsString) -> Vec<u8> {
    use std::os::unix::ffi::OsStringExt;
    s.into_vec()
}

#[cfg(not(unix))]
fn os_bytes(s: OsString) -> Vec<u8> {
    s.to_string_lossy().into_owned().into_bytes()
}
