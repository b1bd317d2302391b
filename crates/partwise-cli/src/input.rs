//! Where keys come from: command-line arguments and `-i FILE` (or `-` for stdin),
//! decoded with the chosen key format, handed out in batches.
//!
//! Files are read in large blocks and split on `\n` (a trailing `\r` is dropped),
//! so a multi-gigabyte key file streams through in constant memory. Raw UTF-8
//! keys are never copied. A line that does not decode stops the run with an
//! error naming the file and line.

use crate::exit::{CliError, Result};
use partwise::KeyFormat;
use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;

/// Keys per batch: large enough to amortize per-batch work, small enough to
/// stay in cache.
pub const BATCH: usize = 4096;

const BLOCK: usize = 4 << 20;

/// A batch of keys: `inputs[i]` is the text as given, `keys[i]` its key bytes.
pub struct Batch<'a> {
    pub inputs: &'a [&'a [u8]],
    pub keys: &'a [&'a [u8]],
}

/// The keys of one run.
pub struct KeySource {
    pub args: Vec<Vec<u8>>,
    pub file: Option<PathBuf>,
    pub format: KeyFormat,
}

impl KeySource {
    pub fn is_empty(&self) -> bool {
        self.args.is_empty() && self.file.is_none()
    }

    /// Calls `f` with every batch of keys: arguments first, then the file.
    /// Returns the number of keys.
    pub fn for_each_batch(&self, mut f: impl FnMut(Batch<'_>) -> Result<()>) -> Result<u64> {
        let mut total = 0u64;
        if !self.args.is_empty() {
            let mut arena = Vec::new();
            let mut spans = Vec::new();
            for (i, a) in self.args.iter().enumerate() {
                let start = arena.len();
                decode_into(self.format, a, &mut arena).map_err(|e| {
                    CliError::msg(format!(
                        "key argument {} ('{}'): {e}",
                        i + 1,
                        a.escape_ascii()
                    ))
                })?;
                spans.push((start, arena.len()));
            }
            let inputs: Vec<&[u8]> = self.args.iter().map(|a| a.as_slice()).collect();
            let keys: Vec<&[u8]> = spans.iter().map(|&(s, e)| &arena[s..e]).collect();
            for (i, k) in inputs.chunks(BATCH).zip(keys.chunks(BATCH)) {
                f(Batch { inputs: i, keys: k })?;
            }
            total += inputs.len() as u64;
        }
        if let Some(path) = &self.file {
            total += self.read_file(path, &mut f)?;
        }
        Ok(total)
    }

    fn read_file(
        &self,
        path: &PathBuf,
        f: &mut impl FnMut(Batch<'_>) -> Result<()>,
    ) -> Result<u64> {
        let name = path.display().to_string();
        let (mut reader, name): (Box<dyn Read>, String) = if name == "-" {
            (Box::new(io::stdin().lock()), "stdin".into())
        } else {
            let file = File::open(path)
                .map_err(|e| CliError::msg(format!("cannot open key file {name}: {e}")))?;
            (Box::new(file), name)
        };
        let mut buf = vec![0u8; BLOCK];
        let mut filled = 0usize;
        let mut line_no = 0u64;
        let mut eof = false;
        let mut arena = Vec::new();
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(BATCH);
        while !eof {
            // Fill the block, growing it when one line is longer than the block.
            if filled == buf.len() {
                buf.resize(buf.len() * 2, 0);
            }
            let n = reader
                .read(&mut buf[filled..])
                .map_err(|e| CliError::msg(format!("reading key file {name}: {e}")))?;
            filled += n;
            eof = n == 0;
            let end = if eof {
                filled
            } else {
                match memchr::memrchr(b'\n', &buf[..filled]) {
                    Some(i) => i + 1,
                    None => continue,
                }
            };
            if end == 0 {
                continue;
            }
            let chunk = &buf[..end];
            let mut lines: Vec<&[u8]> = Vec::new();
            let mut start = 0;
            for nl in memchr::memchr_iter(b'\n', chunk) {
                lines.push(strip_cr(&chunk[start..nl]));
                start = nl + 1;
            }
            if start < chunk.len() {
                lines.push(strip_cr(&chunk[start..]));
            }
            for group in lines.chunks(BATCH) {
                if self.format.is_identity() {
                    f(Batch {
                        inputs: group,
                        keys: group,
                    })?;
                } else {
                    arena.clear();
                    spans.clear();
                    for (i, line) in group.iter().enumerate() {
                        let s = arena.len();
                        decode_into(self.format, line, &mut arena).map_err(|e| {
                            CliError::msg(format!("{name} line {}: {e}", line_no + i as u64 + 1))
                        })?;
                        spans.push((s, arena.len()));
                    }
                    let keys: Vec<&[u8]> = spans.iter().map(|&(s, e)| &arena[s..e]).collect();
                    f(Batch {
                        inputs: group,
                        keys: &keys,
                    })?;
                }
                line_no += group.len() as u64;
            }
            buf.copy_within(end..filled, 0);
            filled -= end;
        }
        Ok(line_no)
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn decode_into(
    format: KeyFormat,
    input: &[u8],
    arena: &mut Vec<u8>,
) -> Result<(), partwise::Error> {
    format.encode_into(input, arena)
}
