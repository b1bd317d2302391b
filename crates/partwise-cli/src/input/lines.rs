//! Cutting input into lines, a group of up to [`BATCH`] at a time: from a
//! stream read in large blocks, or from a regular file mapped into memory.
//! A trailing `\r` is dropped, a leading byte-order mark too (with a note),
//! and every group is checked for invisible characters first.

use super::lint::{bom_note, Lint};
use super::truncation;
use super::{BATCH, MAX_LINE};
use crate::exit::CliError;
use partwise::encoding::UTF8_BOM;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

const BLOCK: usize = 4 << 20;

/// Calls `f(first, lines)` for every group of up to [`BATCH`] lines of
/// `reader`, `first` being the 0-based number of the group's first line.
/// Returns the number of lines. The callback's error type is the caller's,
/// so that it can carry structured errors out.
pub fn for_each_line_group<E: From<CliError>>(
    reader: &mut dyn Read,
    name: &str,
    f: impl FnMut(u64, &[&[u8]]) -> std::result::Result<(), E>,
) -> std::result::Result<u64, E> {
    stream_lines(reader, name, Lint::new(name), f)
}

/// [`for_each_line_group`] over lines of `KEY<TAB>VALUE` (or `KEY`): only
/// the keys are checked for invisible characters (a value is no key, and
/// the tab is the separator).
pub fn for_each_record_group<E: From<CliError>>(
    reader: &mut dyn Read,
    name: &str,
    f: impl FnMut(u64, &[&[u8]]) -> std::result::Result<(), E>,
) -> std::result::Result<u64, E> {
    let mut lint = Lint::new(name);
    lint.before_tab = true;
    stream_lines(reader, name, lint, f)
}

fn stream_lines<E: From<CliError>>(
    reader: &mut dyn Read,
    name: &str,
    mut lint: Lint,
    mut f: impl FnMut(u64, &[&[u8]]) -> std::result::Result<(), E>,
) -> std::result::Result<u64, E> {
    let mut buf = vec![0u8; BLOCK];
    let mut filled = 0usize;
    let mut line_no = 0u64;
    let mut eof = false;
    // Until the first three bytes are in (a pipe may hand out one at a
    // time), whether the input starts with a byte-order mark is open; a
    // mark's prefix holds no newline, so no line is cut meanwhile.
    let mut at_start = true;
    while !eof {
        // Fill the block, growing it when one line is longer than the block.
        if filled == buf.len() {
            if buf.len() >= MAX_LINE {
                return Err(CliError::msg(format!(
                    "{name} line {}: longer than {} MiB",
                    line_no + 1,
                    MAX_LINE >> 20
                ))
                .into());
            }
            buf.resize(buf.len() * 2, 0);
        }
        let n = reader
            .read(&mut buf[filled..])
            .map_err(|e| CliError::context(format!("reading {name}"), e))?;
        filled += n;
        eof = n == 0;
        if at_start {
            let seen = filled.min(UTF8_BOM.len());
            if buf[..seen] != UTF8_BOM[..seen] {
                at_start = false;
            } else if seen == UTF8_BOM.len() {
                buf.copy_within(seen..filled, 0);
                filled -= seen;
                bom_note(name);
                at_start = false;
            } else if !eof {
                continue;
            }
        }
        let end = if eof {
            filled
        } else {
            match memchr::memrchr(b'\n', &buf[..filled]) {
                Some(i) => i + 1,
                None => continue,
            }
        };
        if end > 0 {
            split_groups(&buf[..end], &mut line_no, &mut lint, &mut f)?;
        }
        buf.copy_within(end..filled, 0);
        filled -= end;
    }
    Ok(line_no)
}

/// Hands out the lines of `chunk` (whole lines; the last may lack its
/// newline) in groups of up to [`BATCH`], numbering from `*line_no`, each
/// group checked by `lint` first.
pub(super) fn split_groups<'a, E: From<CliError>>(
    chunk: &'a [u8],
    line_no: &mut u64,
    lint: &mut Lint,
    f: &mut impl FnMut(u64, &[&[u8]]) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    // One group at a time, so the slices stay in cache (a block holds
    // hundreds of thousands of lines).
    let mut group: Vec<&'a [u8]> = Vec::with_capacity(BATCH);
    let mut cutter = LineCutter::new(chunk);
    loop {
        let from = cutter.start;
        let more = cutter.fill(&mut group, BATCH);
        let mut to = cutter.start;
        if !more && cutter.start < chunk.len() {
            // `fill` stops short of `BATCH` when it runs out of newlines, so
            // the unterminated last line still fits.
            group.push(strip_cr(&chunk[cutter.start..]));
            to = chunk.len();
        }
        if !group.is_empty() {
            lint.group(*line_no, &group, &chunk[from..to])?;
            f(*line_no, &group)?;
            *line_no += group.len() as u64;
            group.clear();
        }
        if !more {
            return Ok(());
        }
    }
}

/// Cuts a buffer into newline-terminated lines, a group at a time.
///
/// Key files have a newline every few bytes, where `memchr`'s search (made for
/// rare matches) restarts for every line. Comparing 32 bytes at a time and
/// walking the bits of the match mask costs a few instructions per line, and
/// pushing the lines straight into the caller's group (rather than calling
/// back per newline) keeps that loop free of calls.
pub(super) struct LineCutter<'a> {
    hay: &'a [u8],
    /// Offset of the block `mask` describes.
    base: usize,
    /// Offset of the next block to scan.
    next: usize,
    /// Newlines of the current block not yet handed out, one bit per byte.
    mask: u32,
    /// Where the next line starts.
    pub(super) start: usize,
}

impl<'a> LineCutter<'a> {
    pub(super) fn new(hay: &'a [u8]) -> LineCutter<'a> {
        LineCutter {
            hay,
            base: 0,
            next: 0,
            mask: 0,
            start: 0,
        }
    }

    /// Pushes lines (without their `\n` or a `\r` before it) into `out` until
    /// it holds `max` (then returns `true`) or the newlines run out (then
    /// returns `false`, the rest of the buffer from `start` being an
    /// unterminated line, and `out` having room for it).
    pub(super) fn fill(&mut self, out: &mut Vec<&'a [u8]>, max: usize) -> bool {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked on the line above.
            return unsafe { self.fill_avx2(out, max) };
        }
        self.fill_with(out, max, |block| {
            block
                .iter()
                .enumerate()
                .fold(0, |m, (i, &b)| m | (u32::from(b == b'\n') << i))
        })
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn fill_avx2(&mut self, out: &mut Vec<&'a [u8]>, max: usize) -> bool {
        use std::arch::x86_64::{
            __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_set1_epi8,
        };
        let nl = _mm256_set1_epi8(b'\n' as i8);
        self.fill_with(out, max, |block| {
            // SAFETY: `fill_with` passes exactly 32 bytes; the load is unaligned.
            let v = unsafe { _mm256_loadu_si256(block.as_ptr().cast::<__m256i>()) };
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, nl)) as u32
        })
    }

    /// The loop behind [`fill`](Self::fill); `newlines` maps 32 bytes to
    /// their newline mask.
    #[inline(always)]
    fn fill_with(
        &mut self,
        out: &mut Vec<&'a [u8]>,
        max: usize,
        newlines: impl Fn(&[u8]) -> u32,
    ) -> bool {
        let hay = self.hay;
        loop {
            while self.mask != 0 {
                if out.len() >= max {
                    return true;
                }
                let nl = self.base + self.mask.trailing_zeros() as usize;
                self.mask &= self.mask - 1;
                out.push(strip_cr(&hay[self.start..nl]));
                self.start = nl + 1;
            }
            if self.next + 32 <= hay.len() {
                self.base = self.next;
                self.mask = newlines(&hay[self.next..self.next + 32]);
                self.next += 32;
            } else if self.next < hay.len() {
                self.base = self.next;
                self.mask = hay[self.next..]
                    .iter()
                    .enumerate()
                    .fold(0, |m, (i, &b)| m | (u32::from(b == b'\n') << i));
                self.next = hay.len();
            } else {
                // A full group reports `true` so the caller comes back for
                // the unterminated tail, which then has room.
                return out.len() >= max;
            }
        }
    }
}

/// Like [`for_each_line_group`], over a regular file mapped into memory
/// rather than copied: from the page cache that saves a copy of every byte.
/// A device or a pipe is read as a stream.
pub fn for_each_line_group_mapped<E: From<CliError>>(
    path: &Path,
    mut f: impl FnMut(u64, &[&[u8]]) -> std::result::Result<(), E>,
) -> std::result::Result<u64, E> {
    let name = path.display().to_string();
    let map = match open_mapped(path, true)? {
        Ok(map) => map,
        // A device or a pipe (`/dev/stdin`, `<(cmd)`, a FIFO), or a regular
        // file that reports no length (`/proc/cpuinfo`): its length says
        // nothing about its lines, so read it as a stream (a truly empty file
        // reads the same either way), through the descriptor already open: a
        // FIFO opened a second time waits for a writer that has already
        // written to the first and gone.
        Err(mut stream) => return for_each_line_group(&mut stream, &name, f),
    };
    let mut line_no = 0;
    let mut lint = Lint::new(name.as_str());
    split_groups(
        without_bom(&map.bytes, &name),
        &mut line_no,
        &mut lint,
        &mut f,
    )?;
    Ok(line_no)
}

/// A regular file mapped into memory, with the guard that turns its
/// truncation meanwhile into exit 2 naming the file.
pub(super) struct Mapped {
    // Declared first, so dropped first: the map goes before its guard.
    pub(super) bytes: memmap2::Mmap,
    _guard: truncation::Guard,
}

/// Maps the regular file at `path` (`sequential`: to be read from start to
/// end, by one thread); `None` for anything else (a device, a pipe) or a
/// file that reports no length.
pub(super) fn map_file(path: &Path, sequential: bool) -> Result<Option<Mapped>, CliError> {
    Ok(open_mapped(path, sequential)?.ok())
}

/// Opens `path` once and maps it when it is a regular file with a length;
/// otherwise hands back the open file, to be read as a stream.
fn open_mapped(path: &Path, sequential: bool) -> Result<Result<Mapped, File>, CliError> {
    let err = |e: io::Error| CliError::context(format!("reading key file {}", path.display()), e);
    let file = File::open(path).map_err(err)?;
    let meta = file.metadata().map_err(err)?;
    if !meta.is_file() || meta.len() == 0 {
        return Ok(Err(file));
    }
    // If another process truncates the file meanwhile, reads past its new
    // end raise SIGBUS; the guard turns that into exit 2 naming the file,
    // since an answer from part of a file would pass for the whole.
    let guard = truncation::Guard::new(path);
    // SAFETY: the map is read-only and private to this call; a fault from a
    // truncation is handled by the guard above (the process exits).
    let bytes = unsafe { memmap2::Mmap::map(&file) }.map_err(err)?;
    #[cfg(unix)]
    if sequential {
        let _ = bytes.advise(memmap2::Advice::Sequential);
    }
    Ok(Ok(Mapped {
        bytes,
        _guard: guard,
    }))
}

/// `hay` without a leading byte-order mark, noted when there was one.
pub(super) fn without_bom<'a>(hay: &'a [u8], name: &str) -> &'a [u8] {
    match hay.strip_prefix(UTF8_BOM) {
        Some(rest) => {
            bom_note(name);
            rest
        }
        None => hay,
    }
}

pub(super) fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}
