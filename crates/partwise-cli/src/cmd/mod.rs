//! One module per subcommand, plus what several share: the key source of
//! `route`/`slot`/`resize`/`redis check`, the `-p`/`-P` pair, and
//! (`parse`, `duration`) the value parsers of the clap boundary.

pub mod assign;
pub mod batching;
pub mod check;
pub mod completions;
pub mod conn;
pub mod flags;
/// The duration grammar lives in the core, shared with the ticker.
pub use partwise::duration;
pub mod kafka;
pub mod parse;
pub mod partitioners;
pub mod plan;
pub mod redis;
pub mod report;
pub mod resize;
pub mod route;
pub mod salt;
pub mod skew;
pub mod slot;

use crate::exit::Result;
use crate::input::KeySource;
use partwise::{KeyFormat, PartitionCount, Partitioner};
use std::ffi::OsString;
use std::path::PathBuf;

/// The key flags shared by `route`, `slot`, `resize` and `redis check` as a
/// key source.
pub fn key_source(keys: Vec<OsString>, input: Option<PathBuf>, format: KeyFormat) -> KeySource {
    KeySource {
        args: keys.into_iter().map(os_bytes).collect(),
        file: input,
        format,
    }
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
    #[arg(
        help = flags::PARTITIONS,
        long_help = "Number of partitions",
        short = 'p',
        long = "partitions",
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = parse::partitions
    )]
    pub partitions: PartitionCount,
    #[command(flatten)]
    pub partitioner: flags::PartitionerFlag,
}

impl Routing {
    /// The count and the partitioner.
    pub fn parse(&self) -> Result<(PartitionCount, Partitioner)> {
        Ok((self.partitions, self.partitioner.partitioner))
    }
}

pub use crate::ops::weights::{weight_refs, CountsFrom, EncodedKey, LiveWeights, Weights};
