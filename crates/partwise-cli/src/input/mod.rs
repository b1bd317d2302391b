//! Where keys come from: command-line arguments and `-i FILE` (or `-` for stdin),
//! decoded with the chosen key format, handed out in batches.
//!
//! Files are read in large blocks and split on `\n` (a trailing `\r` is dropped),
//! so a multi-gigabyte key file streams through in constant memory. Raw UTF-8
//! keys are never copied. A line that does not decode stops the run with an
//! error naming the file and line. Regular files can also be cut into
//! newline-aligned byte ranges, one per thread.
mod counts;
mod lines;
mod lint;
mod threaded;
mod truncation;

pub use counts::{looks_like_counts, read_counts, split_count};
pub use lines::{for_each_line_group, for_each_line_group_mapped, for_each_record_group};
pub use lint::Lint;
pub use threaded::{fold_line_groups, PARALLEL_MIN_BYTES};

use crate::exit::{CliError, Result};
use partwise::KeyFormat;
use std::fs::File;
use std::io::{self, IsTerminal, Read};
use std::path::{Path, PathBuf};

/// Keys per batch: large enough to amortize per-batch work, small enough to
/// stay in cache.
pub const BATCH: usize = 4096;

/// The longest line a stream may have: the block grows to hold one line, so
/// a stream without newlines must not grow it without bound. Far above any
/// Kafka key (a record is at most about 1 MiB by default).
pub const MAX_LINE: usize = 64 << 20;

/// The most input a command that holds what it reads reads: a table of
/// every key (`route`, `slot`, `kafka produce`), sample keys (`check -i`,
/// `report -i`), the moved keys of `resize`, the distribution of `salt`.
/// Endless input (`-i /dev/urandom`, `yes |`) then stops with an error
/// naming the input instead of taking all memory. Commands that only count
/// (`route --summary`, `skew`, `--format ndjson`) stream any amount.
pub const MAX_HELD_BYTES: u64 = 256 << 20;

/// The most lines such a command holds: each held key costs a few hundred
/// bytes beside its own (its row, its placements), so 256 MiB of one-byte
/// keys would take tens of GiB.
pub const MAX_HELD_KEYS: u64 = 10_000_000;

/// Counts the input a holding command has read against [`MAX_HELD_BYTES`]
/// and [`MAX_HELD_KEYS`].
pub struct Held {
    what: &'static str,
    hint: &'static str,
    keys: u64,
    bytes: u64,
}

impl Held {
    /// A count for a command that holds `what` (said in the error); `hint`
    /// (may be empty) says how to do without holding.
    pub fn new(what: &'static str, hint: &'static str) -> Held {
        Held {
            what,
            hint,
            keys: 0,
            bytes: 0,
        }
    }

    /// Counts `lines` read from `name`; an error once past either cap.
    pub fn take(&mut self, name: &str, lines: &[&[u8]]) -> Result<()> {
        self.keys += lines.len() as u64;
        // Each line with its newline, as it was read.
        self.bytes += lines.iter().map(|l| l.len() as u64 + 1).sum::<u64>();
        if self.keys > MAX_HELD_KEYS || self.bytes > MAX_HELD_BYTES {
            return Err(CliError::msg(format!(
                "{name}: more than {MAX_HELD_KEYS} keys or {} MiB: partwise holds {} in memory and reads at most that much (an endless input?){}",
                MAX_HELD_BYTES >> 20,
                self.what,
                self.hint,
            )));
        }
        Ok(())
    }
}

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

/// A display name for an input path (`stdin` for `-`).
pub fn input_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "stdin".into()
    } else {
        path.display().to_string()
    }
}

/// The whole of `path` (`-`: stdin), refused past `max` bytes: files read
/// whole (topologies, `--owned`, `salt -i`) must not take all memory when
/// pointed at `/dev/zero` or a huge file.
pub fn read_capped(path: &Path, max: u64, what: &str) -> Result<Vec<u8>> {
    let name = input_name(path);
    let err = |e: io::Error| CliError::context(format!("{what} {name}"), e);
    let reader: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(io::stdin().lock())
    } else {
        Box::new(File::open(path).map_err(err)?)
    };
    let mut out = Vec::new();
    reader.take(max + 1).read_to_end(&mut out).map_err(err)?;
    if out.len() as u64 > max {
        return Err(CliError::msg(format!(
            "{what} {name}: larger than {} MiB",
            max >> 20
        )));
    }
    Ok(out)
}

/// Decodes a group of lines with `format` into `arena`, returning the key
/// slices; errors name the line (`first` is the group's 0-based first line).
pub fn decode_group<'a>(
    format: KeyFormat,
    group: &[&[u8]],
    first: u64,
    name: &str,
    arena: &'a mut Vec<u8>,
) -> Result<Vec<&'a [u8]>> {
    arena.clear();
    let mut spans = Vec::with_capacity(group.len());
    for (i, line) in group.iter().enumerate() {
        let s = arena.len();
        format
            .encode_into(line, arena)
            .map_err(|e| CliError::msg(format!("{name} line {}: {e}", first + i as u64 + 1)))?;
        spans.push((s, arena.len()));
    }
    let arena: &'a Vec<u8> = arena;
    Ok(spans.into_iter().map(|(s, e)| &arena[s..e]).collect())
}

impl KeySource {
    pub fn is_empty(&self) -> bool {
        self.args.is_empty() && self.file.is_none()
    }

    /// Calls `f` with every batch of keys: arguments first, then the file.
    /// Returns the number of keys.
    pub fn for_each_batch(&self, f: impl FnMut(Batch<'_>) -> Result<()>) -> Result<u64> {
        self.batches(None, f)
    }

    /// [`for_each_batch`](Self::for_each_batch) for a command that holds
    /// what it reads: the file is read up to [`MAX_HELD_KEYS`] and
    /// [`MAX_HELD_BYTES`], `held` saying what is held.
    pub fn for_each_held(&self, held: Held, f: impl FnMut(Batch<'_>) -> Result<()>) -> Result<u64> {
        self.batches(Some(held), f)
    }

    /// [`for_each_batch`](Self::for_each_batch) on up to `threads`
    /// threads, each folding its batches into a state of its own (`init`
    /// makes one); the states come back in input order, with the number of
    /// keys.
    ///
    /// Only a regular file of at least [`PARALLEL_MIN_BYTES`] (and no key
    /// arguments) is split: it is cut into ranges of whole lines, one per
    /// thread. Anything else is read as `for_each_batch` reads it, into one
    /// state. Warnings come out as one thread would print them (the same
    /// lines, in input order, named up to the same count); when a range
    /// fails (a line that does not decode), the input is read again on one
    /// thread, so the warnings and the error are exactly those of a
    /// one-thread run. The threads are [`fold_line_groups`]', the reader
    /// `skew` uses too.
    pub fn fold_batches<T: Send>(
        &self,
        threads: usize,
        init: impl Fn() -> T + Sync,
        f: impl Fn(&mut T, Batch<'_>) -> Result<()> + Sync,
    ) -> Result<(Vec<T>, u64)> {
        let read = match &self.file {
            Some(path) if self.args.is_empty() => {
                let name = path.display().to_string();
                // Each thread decodes into an arena of its own.
                let per_group = |(state, arena): &mut (T, Vec<u8>), first, group: &[&[u8]]| {
                    if self.format.is_identity() {
                        return f(
                            state,
                            Batch {
                                inputs: group,
                                keys: group,
                            },
                        );
                    }
                    let keys = decode_group(self.format, group, first, &name, arena)?;
                    f(
                        state,
                        Batch {
                            inputs: group,
                            keys: &keys,
                        },
                    )
                };
                fold_line_groups(
                    path,
                    threads,
                    PARALLEL_MIN_BYTES,
                    || (init(), Vec::new()),
                    per_group,
                )?
                .map(|read| (path, read))
            }
            _ => None,
        };
        let Some((path, (states, lines))) = read else {
            let mut t = init();
            let n = self.for_each_batch(|b| f(&mut t, b))?;
            return Ok((vec![t], n));
        };
        if lines == 0 {
            return Err(CliError::msg(format!(
                "{}: no keys (the input is empty)",
                input_name(path)
            )));
        }
        Ok((states.into_iter().map(|(t, _)| t).collect(), lines))
    }

    fn batches(
        &self,
        mut held: Option<Held>,
        mut f: impl FnMut(Batch<'_>) -> Result<()>,
    ) -> Result<u64> {
        let mut total = 0u64;
        if !self.args.is_empty() {
            let mut arena = Vec::new();
            let mut spans = Vec::new();
            for (i, a) in self.args.iter().enumerate() {
                Lint::key(&format!("key argument {}", i + 1), a);
                let start = arena.len();
                self.format.encode_into(a, &mut arena).map_err(|e| {
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
            let name = input_name(path);
            let mut arena = Vec::new();
            let per_group = |first: u64, group: &[&[u8]]| {
                if let Some(h) = &mut held {
                    h.take(&name, group)?;
                }
                if self.format.is_identity() {
                    return f(Batch {
                        inputs: group,
                        keys: group,
                    });
                }
                let keys = decode_group(self.format, group, first, &name, &mut arena)?;
                f(Batch {
                    inputs: group,
                    keys: &keys,
                })
            };
            let read = if path.as_os_str() == "-" {
                if io::stdin().is_terminal() {
                    // A prompt-less wait looks like a hang to someone who
                    // typed `-i -` by mistake.
                    say!("partwise: reading keys from the terminal, one per line; Ctrl-D ends");
                }
                for_each_line_group(&mut io::stdin().lock(), &name, per_group)?
            } else {
                for_each_line_group_mapped(path, per_group)?
            };
            // A named input with no keys is a wrong path or a failed
            // upstream step far more often than a question with no keys,
            // and an empty table would pass for an answer.
            if read == 0 {
                return Err(CliError::msg(format!(
                    "{name}: no keys (the input is empty)"
                )));
            }
            total += read;
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::lines::{split_groups, strip_cr, LineCutter};
    use super::threaded::cut_lines;
    use super::*;
    use proptest::prelude::Just;

    /// All lines of `hay` as `split_groups` hands them out, in groups of
    /// at most `max`.
    fn groups(hay: &[u8], max: usize) -> Vec<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        let mut group = Vec::new();
        let mut cutter = LineCutter::new(hay);
        loop {
            let more = cutter.fill(&mut group, max);
            assert!(group.len() <= max);
            if !more && cutter.start < hay.len() {
                group.push(strip_cr(&hay[cutter.start..]));
            }
            out.push(group.iter().map(|l| l.to_vec()).collect());
            group.clear();
            if !more {
                return out;
            }
        }
    }

    #[test]
    fn lines_match_split() {
        let mut x = 0x1234_5678_9abc_def0_u64;
        for len in 0..400 {
            let hay: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    match x % 7 {
                        0 => b'\n',
                        1 => b'\r',
                        _ => x as u8,
                    }
                })
                .collect();
            let mut want: Vec<Vec<u8>> = hay
                .split(|&b| b == b'\n')
                .map(|l| strip_cr(l).to_vec())
                .collect();
            if hay.last().is_none_or(|&b| b == b'\n') {
                want.pop(); // a final newline ends the last line, it starts none
            }
            for max in [1, 2, 3, 5, 64, BATCH] {
                let got = groups(&hay, max);
                assert!(got.iter().all(|g| g.len() <= max), "len {len} max {max}");
                assert_eq!(got.concat(), want, "len {len} max {max}");
            }
        }
        assert_eq!(groups(&[b'\n'; 70], 100)[0].len(), 70);
    }

    /// A reader that hands out its bytes in the given chunk sizes.
    struct Chunked {
        data: Vec<u8>,
        at: usize,
        sizes: Vec<usize>,
        turn: usize,
    }

    impl Read for Chunked {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let size = self.sizes[self.turn % self.sizes.len()].max(1);
            self.turn += 1;
            let n = size.min(out.len()).min(self.data.len() - self.at);
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    proptest::proptest! {
        /// The ranges of `cut_lines` are the input, cut only after a
        /// newline, and read range by range give the lines of the whole.
        #[test]
        fn cut_lines_keep_every_line_whole(
            data in proptest::collection::vec(proptest::prop_oneof![Just(b'\n'), Just(b'\r'), proptest::num::u8::ANY], 0..600),
            parts in 1usize..9,
        ) {
            let ranges = cut_lines(&data, parts);
            proptest::prop_assert!(!ranges.is_empty() && ranges.len() <= parts);
            proptest::prop_assert_eq!(ranges.concat(), data.clone());
            for r in &ranges[..ranges.len() - 1] {
                proptest::prop_assert_eq!(r.last(), Some(&b'\n'));
            }
            let lines_of = |hay: &[u8]| {
                let mut out: Vec<Vec<u8>> = Vec::new();
                let (mut n, mut lint) = (0, Lint::new("t"));
                lint.deferred = Some(Vec::new());
                split_groups(hay, &mut n, &mut lint, &mut |_, g: &[&[u8]]| {
                    out.extend(g.iter().map(|l| l.to_vec()));
                    Ok::<(), CliError>(())
                })
                .unwrap();
                out
            };
            let pieces: Vec<Vec<u8>> = ranges.iter().flat_map(|r| lines_of(r)).collect();
            proptest::prop_assert_eq!(pieces, lines_of(&data));
        }

        /// The stream reader hands out exactly the lines of its input,
        /// numbered in order, however the reads are cut.
        #[test]
        fn stream_lines_match_split(
            data in proptest::collection::vec(proptest::prop_oneof![Just(b'\n'), Just(b'\r'), proptest::num::u8::ANY], 0..600),
            sizes in proptest::collection::vec(1usize..64, 1..8),
        ) {
            let mut want: Vec<Vec<u8>> = data
                .split(|&b| b == b'\n')
                .map(|l| strip_cr(l).to_vec())
                .collect();
            if data.last().is_none_or(|&b| b == b'\n') {
                want.pop();
            }
            let mut reader = Chunked { data: data.clone(), at: 0, sizes, turn: 0 };
            let mut got: Vec<Vec<u8>> = Vec::new();
            let lines = for_each_line_group(&mut reader, "stdin", |first, group| {
                assert_eq!(first, got.len() as u64);
                got.extend(group.iter().map(|l| l.to_vec()));
                Ok::<(), CliError>(())
            })
            .map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            proptest::prop_assert_eq!(lines, want.len() as u64);
            proptest::prop_assert_eq!(got, want);
        }
    }

    /// A byte-order mark is dropped however the reads cut it (a pipe may
    /// hand out a byte at a time); a prefix of one, or one later in the
    /// input, is kept.
    #[test]
    fn a_leading_byte_order_mark_is_dropped_from_a_stream() {
        for (data, want) in [
            (
                &b"\xEF\xBB\xBFTLKM\nBBCA\n"[..],
                vec![&b"TLKM"[..], b"BBCA"],
            ),
            (b"\xEF\xBB\xBF", vec![]),
            (b"\xEF\xBB\xBF\n", vec![b""]),
            (b"\xEF\xBBx\n", vec![b"\xEF\xBBx"]),
            (b"\xEF\n", vec![b"\xEF"]),
            (b"a\n\xEF\xBB\xBFb\n", vec![b"a", b"\xEF\xBB\xBFb"]),
        ] {
            for size in [1, 2, 3, 64] {
                let mut reader = Chunked {
                    data: data.to_vec(),
                    at: 0,
                    sizes: vec![size],
                    turn: 0,
                };
                let mut got: Vec<Vec<u8>> = Vec::new();
                for_each_line_group(&mut reader, "stdin", |_, group| {
                    got.extend(group.iter().map(|l| l.to_vec()));
                    Ok::<(), CliError>(())
                })
                .unwrap();
                assert_eq!(
                    got,
                    want,
                    "{:?} in reads of {size}",
                    data.escape_ascii().to_string()
                );
            }
        }
    }

    #[test]
    fn a_stream_line_past_the_limit_is_an_error() {
        let mut reader = io::repeat(b'k').take(MAX_LINE as u64 + 1);
        let e =
            for_each_line_group(&mut reader, "stdin", |_, _| Ok::<(), CliError>(())).unwrap_err();
        assert!(
            e.to_string().contains("stdin line 1: longer than 64 MiB"),
            "{e}"
        );
    }
}
