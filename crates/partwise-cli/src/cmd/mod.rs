//! One module per subcommand.

pub mod assign;
pub mod batching;
pub mod check;
pub mod completions;
pub mod duration;
pub mod kafka;
pub mod partitioners;
pub mod plan;
pub mod redis;
pub mod resize;
pub mod route;
pub mod salt;
pub mod skew;
pub mod slot;

use crate::exit::{CliError, Result};
use crate::input::KeySource;
use partwise::{KeyFormat, PartitionCount, Partitioner};
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

/// `-p N` and `-P SPEC`, for the commands that route with one partitioner.
#[derive(clap::Args)]
pub struct Routing {
    /// Number of partitions
    #[arg(
        short = 'p',
        long = "partitions",
        value_name = "N",
        allow_negative_numbers = true
    )]
    partitions: String,
    /// Partitioner spec (`partwise partitioners` lists them)
    #[arg(
        short = 'P',
        long = "partitioner",
        value_name = "SPEC",
        default_value = "java"
    )]
    partitioner: String,
}

impl Routing {
    /// The validated count and partitioner; errors name the flag.
    pub fn parse(&self) -> Result<(PartitionCount, Partitioner)> {
        let n = self
            .partitions
            .parse()
            .map_err(|e| CliError::msg(format!("-p/--partitions: {e}")))?;
        let p = self
            .partitioner
            .parse()
            .map_err(|e| CliError::msg(format!("-P/--partitioner: {e}")))?;
        Ok((n, p))
    }
}
