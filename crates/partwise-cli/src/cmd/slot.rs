//! `partwise slot`: the Redis Cluster hash slot of each key.

use super::key_source;
use crate::exit::{CliError, ExitCode, Result};
use crate::input::Held;
use crate::output::{key_cell, Format, JsonStream, Table};
use partwise::redis::slot::{hash_tag, key_slot, KeySlot};
use std::ffi::OsString;
use std::io::{BufWriter, Write};

#[derive(clap::Args)]
#[command(mut_arg("key_format", |a| a.long_help(
    "How text becomes key bytes: utf8, hex, base64, string, int32, int64, avro-sr:ID"
)))]
pub struct Args {
    /// Keys (bytes as given; see --key-format)
    #[arg(value_name = "KEY", allow_negative_numbers = true)]
    keys: Vec<OsString>,
    #[command(flatten)]
    input: super::flags::InputFlag,
    #[command(flatten)]
    key_format: super::flags::KeyFormatFlag,
    #[command(flatten)]
    format: super::flags::FormatFlag,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let source = key_source(args.keys, args.input.input, args.key_format.key_format);
    if source.is_empty() {
        return Err(CliError::msg(
            "no keys: give KEY arguments or -i FILE ('-' for stdin)",
        ));
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    match args.format.format {
        Format::Json | Format::Ndjson => {
            let mut s = JsonStream::new(&mut out, args.format.format)?;
            source.for_each_batch(|b| {
                for key in b.keys {
                    s.write(&KeySlot::of(key))?;
                }
                s.flush()
            })?;
            s.finish()?;
        }
        Format::Table => {
            let mut t = Table::new(["KEY", "HASHTAG", "SLOT"]);
            let held = Held::new(
                "a table of every key",
                "; --format ndjson streams any number",
            );
            source.for_each_held(held, |b| {
                for key in b.keys {
                    let tag = hash_tag(key).map_or_else(|| "-".to_string(), key_cell);
                    t.row([key_cell(key), tag, key_slot(key).to_string()]);
                }
                Ok(())
            })?;
            t.write(&mut out)?;
            out.flush()?;
        }
    }
    Ok(ExitCode::Ok)
}
