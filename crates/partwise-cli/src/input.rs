//! Where keys come from: command-line arguments and `-i FILE` (or `-` for stdin),
//! decoded with the chosen key format, handed out in batches.
//!
//! Files are read in large blocks and split on `\n` (a trailing `\r` is dropped),
//! so a multi-gigabyte key file streams through in constant memory. Raw UTF-8
//! keys are never copied. A line that does not decode stops the run with an
//! error naming the file and line. Regular files can also be cut into
//! newline-aligned byte ranges, one per thread.

use crate::exit::{CliError, Result};
use partwise::encoding::UTF8_BOM;
use partwise::KeyFormat;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Keys per batch: large enough to amortize per-batch work, small enough to
/// stay in cache.
pub const BATCH: usize = 4096;

const BLOCK: usize = 4 << 20;

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

/// Warns, on stderr, about keys holding characters that cannot be seen
/// (see [`partwise::encoding::first_invisible`]): such a key looks like
/// another key and hashes apart from it. The first few are named by line,
/// the rest counted when the input ends.
pub struct Lint {
    name: String,
    /// Lines before the first line handed out: 0 from the start of the
    /// input; for a range of a file, counted when a warning first needs it.
    base: Option<u64>,
    /// The file and offset of that range.
    range: Option<(PathBuf, u64)>,
    /// Lines are `KEY<TAB>VALUE`: only the key is looked at.
    before_tab: bool,
    warned: u64,
    /// Warnings kept instead of printed (line within the range, byte,
    /// character; the first [`NAMED_WARNINGS`] only): a range read on its
    /// own thread, whose warnings are printed in input order once every
    /// range is read.
    deferred: Option<Vec<(u64, usize, char)>>,
}

/// Keys named one by one before the rest are only counted.
const NAMED_WARNINGS: u64 = 3;

impl Lint {
    /// For an input read from its start.
    pub fn new(name: impl Into<String>) -> Lint {
        Lint {
            name: name.into(),
            base: Some(0),
            range: None,
            before_tab: false,
            warned: 0,
            deferred: None,
        }
    }

    /// For bytes from `start` of the file at `path`.
    fn range(path: &Path, start: u64) -> Lint {
        Lint {
            name: path.display().to_string(),
            base: (start == 0).then_some(0),
            range: Some((path.to_path_buf(), start)),
            before_tab: false,
            warned: 0,
            deferred: None,
        }
    }

    /// Checks the lines of a group whose first line has 0-based number
    /// `first`; `span` holds the group's bytes (lines and newlines).
    fn group(&mut self, first: u64, group: &[&[u8]], span: &[u8]) -> Result<()> {
        // One pass over the group's bytes (which vectorizes) clears almost
        // every group of a key file; the lines are looked at one by one only
        // when a byte that may start an invisible character is there.
        let suspect = |b: u8| (b < 0x20 && b != b'\n') || matches!(b, 0x7F | 0xC2 | 0xE2 | 0xEF);
        if !span.iter().fold(false, |any, &b| any | suspect(b)) {
            return Ok(());
        }
        for (i, line) in group.iter().enumerate() {
            let key = match (self.before_tab, memchr::memchr(b'\t', line)) {
                (true, Some(t)) => &line[..t],
                _ => line,
            };
            if let Some((at, c)) = partwise::encoding::first_invisible(key) {
                self.warned += 1;
                if let Some(kept) = &mut self.deferred {
                    if self.warned <= NAMED_WARNINGS {
                        kept.push((first + i as u64, at, c));
                    }
                    continue;
                }
                if self.warned <= NAMED_WARNINGS {
                    let base = match (self.base, &self.range) {
                        (Some(b), _) => b,
                        (None, Some((path, start))) => {
                            let b = lines_before(path, *start)?;
                            self.base = Some(b);
                            b
                        }
                        (None, None) => 0,
                    };
                    let line_no = base + first + i as u64 + 1;
                    Lint::warn(&format!("{} line {line_no}", self.name), at, c);
                }
            }
        }
        Ok(())
    }

    /// Checks one key given whole, `label` naming it (`key argument 2`).
    pub fn key(label: &str, key: &[u8]) {
        if let Some((at, c)) = partwise::encoding::first_invisible(key) {
            Lint::warn(label, at, c);
        }
    }

    fn warn(label: &str, at: usize, c: char) {
        let kind = if c.is_control() {
            "a control character"
        } else if matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}') {
            "a bidi control (it reorders what is shown after it)"
        } else {
            "a zero-width character"
        };
        say!(
            "partwise: warning: {label}: the key holds {kind}, U+{:04X}, at byte {at}: it is hashed as part of the key, which looks like one without it and lands elsewhere",
            u32::from(c)
        );
    }
}

impl Drop for Lint {
    fn drop(&mut self) {
        if self.deferred.is_none() {
            more_warnings(&self.name, self.warned);
        }
    }
}

/// The closing count of keys with invisible characters past the named ones.
fn more_warnings(name: &str, warned: u64) {
    if warned > NAMED_WARNINGS {
        say!(
            "partwise: warning: {name}: {} more keys hold invisible characters",
            warned - NAMED_WARNINGS
        );
    }
}

/// The note for a byte-order mark dropped from the start of `name`.
fn bom_note(name: &str) {
    say!("partwise: note: {name}: dropped the UTF-8 byte-order mark before line 1 (it is no part of the first key)");
}

/// One `KEY,COUNT` line split at its last comma (so a key may hold commas):
/// the key's bytes and its count, a whole number. `skew --counts` reads each
/// line through it, and [`read_counts`] too.
pub fn split_count(line: &[u8]) -> std::result::Result<(&[u8], u64), String> {
    let comma = memchr::memrchr(b',', line).ok_or("expected KEY,COUNT (no comma)")?;
    let (key, count) = (&line[..comma], line[comma + 1..].trim_ascii());
    if count.first() == Some(&b'-') {
        return Err(format!("count '{}' is negative", count.escape_ascii()));
    }
    let text = std::str::from_utf8(count).map_err(|_| "count is not a number".to_string())?;
    let c = text
        .parse::<u64>()
        .map_err(|_| format!("count '{}' is not a whole number", count.escape_ascii()))?;
    Ok((key, c))
}

/// Whether the first lines of a regular file all read `KEY,COUNT`: then
/// hashing each whole line as a key (`ID,950000`) is almost surely not what
/// the user meant. Only the first 64 KiB of a regular file are looked at;
/// stdin, FIFOs and devices are not.
pub fn looks_like_counts(path: &Path) -> bool {
    // A FIFO, a process substitution or a device would lose what is read
    // here: only a regular file can be looked at twice.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = vec![0u8; 64 * 1024];
    let Ok(len) = std::io::Read::read(&mut f, &mut head) else {
        return false;
    };
    let head = &head[..len];
    // The last line may be cut; judge the complete ones (or the only one).
    let complete = match memchr::memrchr(b'\n', head) {
        Some(i) if len == head.len() => &head[..i],
        _ => head,
    };
    let mut lines = complete
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .peekable();
    lines.peek().is_some()
        && lines.all(|l| {
            memchr::memrchr(b',', l).is_some_and(|c| {
                c > 0 && c + 1 < l.len() && l[c + 1..].iter().all(u8::is_ascii_digit)
            })
        })
}

/// The distinct keys of `path` with their summed counts, in first-seen
/// order: lines are `KEY,COUNT` with `with_counts` (the count after the
/// last comma, [`split_count`]), else each line is a key seen once. Blank
/// lines are skipped; the whole distribution is held, within [`Held`]'s caps.
/// `salt -i`, and `--counts FILE` of `check`, `report`, `resize` and `plan`,
/// read their weights here.
pub fn read_counts(path: &std::path::Path, with_counts: bool) -> Result<Vec<(Vec<u8>, u64)>> {
    let name = input_name(path);
    // The distribution is held whole, with an entry per distinct key.
    let mut held = Held::new("the distribution of the keys", "");
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut out: Vec<(Vec<u8>, u64)> = Vec::new();
    let per_group = |first: u64, group: &[&[u8]]| -> Result<()> {
        held.take(&name, group)?;
        for (i, line) in group.iter().enumerate() {
            let line_no = first + i as u64 + 1;
            if line.is_empty() {
                continue;
            }
            let (key, c) = if with_counts {
                split_count(line)
                    .map_err(|e| CliError::msg(format!("{name}: line {line_no}: {e}")))?
            } else {
                (*line, 1)
            };
            match index.get(key) {
                Some(&k) => {
                    out[k].1 = out[k].1.checked_add(c).ok_or_else(|| {
                        CliError::msg(format!("{name}: line {line_no}: the counts overflow"))
                    })?
                }
                None => {
                    index.insert(key.to_vec(), out.len());
                    out.push((key.to_vec(), c));
                }
            }
        }
        Ok(())
    };
    if path.as_os_str() == "-" {
        for_each_line_group(&mut std::io::stdin().lock(), &name, per_group)?;
    } else {
        for_each_line_group_mapped(path, 0, None, per_group)?;
    }
    if out.is_empty() {
        return Err(CliError::msg(format!(
            "{name}: no keys (the input is empty)"
        )));
    }
    Ok(out)
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
fn split_groups<'a, E: From<CliError>>(
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
struct LineCutter<'a> {
    hay: &'a [u8],
    /// Offset of the block `mask` describes.
    base: usize,
    /// Offset of the next block to scan.
    next: usize,
    /// Newlines of the current block not yet handed out, one bit per byte.
    mask: u32,
    /// Where the next line starts.
    start: usize,
}

impl<'a> LineCutter<'a> {
    fn new(hay: &'a [u8]) -> LineCutter<'a> {
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
    fn fill(&mut self, out: &mut Vec<&'a [u8]>, max: usize) -> bool {
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

/// Like [`for_each_line_group`], over bytes `[start, end)` of a regular file
/// (`end = None`: to the end), mapped into memory rather than copied: from the
/// page cache that saves a copy of every byte.
pub fn for_each_line_group_mapped<E: From<CliError>>(
    path: &Path,
    start: u64,
    end: Option<u64>,
    mut f: impl FnMut(u64, &[&[u8]]) -> std::result::Result<(), E>,
) -> std::result::Result<u64, E> {
    let err = |e: io::Error| CliError::context(format!("reading key file {}", path.display()), e);
    let mut file = File::open(path).map_err(err)?;
    let meta = file.metadata().map_err(err)?;
    if (!meta.is_file() || meta.len() == 0) && start == 0 && end.is_none() {
        // A device or a pipe (`/dev/stdin`, `<(cmd)`), or a regular file that
        // reports no length (`/proc/cpuinfo`): its length says nothing about
        // its lines, so read it as a stream (a truly empty file reads the
        // same either way).
        return for_each_line_group(&mut file, &path.display().to_string(), f);
    }
    let len = meta.len();
    let end = end.unwrap_or(len).min(len);
    let mut line_no = 0;
    if start >= end {
        return Ok(0);
    }
    // If another process truncates the file meanwhile, reads past its new
    // end raise SIGBUS; the guard turns that into exit 2 naming the file,
    // since an answer from part of a file would pass for the whole.
    let _guard = truncation::Guard::new(path);
    // SAFETY: the map is read-only and private to this call; a fault from a
    // truncation is handled by the guard above (the process exits).
    let map = unsafe {
        memmap2::MmapOptions::new()
            .offset(start)
            .len((end - start) as usize)
            .map(&file)
    }
    .map_err(err)?;
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Sequential);
    let name = path.display().to_string();
    let mut hay = &map[..];
    if start == 0 {
        if let Some(rest) = hay.strip_prefix(UTF8_BOM) {
            bom_note(&name);
            hay = rest;
        }
    }
    let mut lint = Lint::range(path, start);
    split_groups(hay, &mut line_no, &mut lint, &mut f)?;
    Ok(line_no)
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

/// Cuts a regular file into up to `parts` byte ranges that start at line
/// starts, so each can be read by its own thread.
pub fn line_ranges(path: &Path, parts: usize) -> Result<Vec<(u64, u64)>> {
    let err = |e: io::Error| CliError::context(format!("reading key file {}", path.display()), e);
    let mut file = File::open(path).map_err(err)?;
    let len = file.metadata().map_err(err)?.len();
    let mut cuts = vec![0u64];
    for i in 1..parts.max(1) {
        let guess = len * i as u64 / parts as u64;
        if guess <= *cuts.last().expect("cuts starts with 0") {
            continue;
        }
        file.seek(SeekFrom::Start(guess)).map_err(err)?;
        let mut probe = vec![0u8; 1 << 16];
        let mut pos = guess;
        let cut = loop {
            let n = file.read(&mut probe).map_err(err)?;
            if n == 0 {
                break len;
            }
            if let Some(i) = memchr::memchr(b'\n', &probe[..n]) {
                break pos + i as u64 + 1;
            }
            pos += n as u64;
        };
        if cut < len && cut > *cuts.last().expect("non-empty") {
            cuts.push(cut);
        }
    }
    cuts.push(len);
    Ok(cuts.windows(2).map(|w| (w[0], w[1])).collect())
}

/// A reader over `[start, end)` of a file.
pub fn open_range(path: &Path, start: u64, end: u64) -> Result<impl Read> {
    let err = |e: io::Error| CliError::context(format!("reading key file {}", path.display()), e);
    let mut file = File::open(path).map_err(err)?;
    file.seek(SeekFrom::Start(start)).map_err(err)?;
    Ok(file.take(end - start))
}

/// The number of lines before byte `offset` of a file: turns a line number
/// within a range back into a line number of the file, for error messages.
pub fn lines_before(path: &Path, offset: u64) -> Result<u64> {
    let mut r = open_range(path, 0, offset)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut lines = 0u64;
    loop {
        let n = r
            .read(&mut buf)
            .map_err(|e| CliError::context(format!("reading key file {}", path.display()), e))?;
        if n == 0 {
            return Ok(lines);
        }
        lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
    }
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
    /// one-thread run.
    pub fn fold_batches<T: Send>(
        &self,
        threads: usize,
        init: impl Fn() -> T + Sync,
        f: impl Fn(&mut T, Batch<'_>) -> Result<()> + Sync,
    ) -> Result<(Vec<T>, u64)> {
        let serial = || -> Result<(Vec<T>, u64)> {
            let mut t = init();
            let n = self.for_each_batch(|b| f(&mut t, b))?;
            Ok((vec![t], n))
        };
        let path = match &self.file {
            Some(p) if threads > 1 && self.args.is_empty() && p.as_os_str() != "-" => p,
            _ => return serial(),
        };
        if !std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= PARALLEL_MIN_BYTES) {
            return serial();
        }
        let err =
            |e: io::Error| CliError::context(format!("reading key file {}", path.display()), e);
        let file = File::open(path).map_err(err)?;
        // As in `for_each_line_group_mapped`: a truncation meanwhile is exit
        // 2 naming the file, not an answer from part of it.
        let _guard = truncation::Guard::new(path);
        // SAFETY: read-only and private to this call; a fault from a
        // truncation is handled by the guard above.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(err)?;
        let name = path.display().to_string();
        let bom = map.starts_with(UTF8_BOM);
        let hay = if bom {
            &map[UTF8_BOM.len()..]
        } else {
            &map[..]
        };
        let parts = cut_lines(hay, threads);
        let (init, f, label) = (&init, &f, name.as_str());
        let results: Vec<Result<Part<T>>> = std::thread::scope(|s| {
            let handles: Vec<_> = parts[1..]
                .iter()
                .map(|&part| s.spawn(move || self.fold_part(part, label, init(), f)))
                .collect();
            // The first range on this thread: one thread fewer to start.
            let first = self.fold_part(parts[0], label, init(), f);
            std::iter::once(first)
                .chain(
                    handles
                        .into_iter()
                        .map(|h| h.join().expect("reader thread panicked")),
                )
                .collect()
        });
        if results.iter().any(|r| r.is_err()) {
            drop(map);
            return serial();
        }
        if bom {
            bom_note(&name);
        }
        let (mut states, mut lines, mut warned, mut named) = (Vec::new(), 0u64, 0u64, 0u64);
        for part in results.into_iter().flatten() {
            for (line, at, c) in part.warnings {
                if named < NAMED_WARNINGS {
                    named += 1;
                    Lint::warn(&format!("{name} line {}", lines + line + 1), at, c);
                }
            }
            warned += part.warned;
            lines += part.lines;
            states.push(part.state);
        }
        more_warnings(&name, warned);
        if lines == 0 {
            return Err(CliError::msg(format!(
                "{}: no keys (the input is empty)",
                input_name(path)
            )));
        }
        Ok((states, lines))
    }

    /// One range of [`fold_batches`](Self::fold_batches), its warnings kept.
    fn fold_part<T>(
        &self,
        hay: &[u8],
        name: &str,
        mut state: T,
        f: &impl Fn(&mut T, Batch<'_>) -> Result<()>,
    ) -> Result<Part<T>> {
        let mut lint = Lint::new(name);
        lint.deferred = Some(Vec::new());
        let mut arena = Vec::new();
        let mut lines = 0u64;
        split_groups(hay, &mut lines, &mut lint, &mut |first, group: &[&[u8]]| {
            if self.format.is_identity() {
                return f(
                    &mut state,
                    Batch {
                        inputs: group,
                        keys: group,
                    },
                );
            }
            let keys = decode_group(self.format, group, first, name, &mut arena)?;
            f(
                &mut state,
                Batch {
                    inputs: group,
                    keys: &keys,
                },
            )
        })?;
        let warnings = lint
            .deferred
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        Ok(Part {
            state,
            lines,
            warnings,
            warned: lint.warned,
        })
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
                for_each_line_group_mapped(path, 0, None, per_group)?
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

/// Regular files at least this large are read on several threads by
/// [`KeySource::fold_batches`]; below it a second thread saves less than
/// starting it costs.
pub const PARALLEL_MIN_BYTES: u64 = 4 << 20;

/// What one thread of [`KeySource::fold_batches`] read.
struct Part<T> {
    state: T,
    lines: u64,
    /// Its first warnings: line within the range, byte, character.
    warnings: Vec<(u64, usize, char)>,
    /// Keys it found with invisible characters.
    warned: u64,
}

/// Cuts `hay` into up to `parts` ranges of whole lines of about equal size:
/// every range but the last ends just after a `\n` (so a `\r\n` is never
/// cut), and together they are `hay`.
fn cut_lines(hay: &[u8], parts: usize) -> Vec<&[u8]> {
    let parts = parts.max(1);
    let mut out = Vec::with_capacity(parts);
    let mut start = 0usize;
    for i in 1..parts {
        let guess = ((hay.len() as u128 * i as u128) / parts as u128) as usize;
        let from = guess.max(start);
        let Some(nl) = memchr::memchr(b'\n', &hay[from..]) else {
            break;
        };
        let cut = from + nl + 1;
        if cut >= hay.len() {
            break;
        }
        out.push(&hay[start..cut]);
        start = cut;
    }
    out.push(&hay[start..]);
    out
}

/// SIGBUS from a mapped key file that shrank under us, as an error.
///
/// The handler may only do async-signal-safe work: it writes a message
/// prepared before the mapping and exits 2. Only faults while a mapping is
/// live are ours; any other SIGBUS keeps its default action.
mod truncation {
    use std::ffi::CString;
    use std::path::Path;
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
    use std::sync::Once;

    /// The message for the file being read (leaked: one per file read).
    static MESSAGE: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
    static LIVE: AtomicUsize = AtomicUsize::new(0);
    static INSTALL: Once = Once::new();

    extern "C" fn on_sigbus(sig: libc::c_int) {
        let msg = MESSAGE.load(Ordering::SeqCst);
        if LIVE.load(Ordering::SeqCst) == 0 || msg.is_null() {
            // Not ours: default action, raised again.
            // SAFETY: signal and raise are async-signal-safe.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
            return;
        }
        // SAFETY: `msg` is a leaked NUL-terminated string; strlen, write and
        // _exit are async-signal-safe.
        unsafe {
            libc::write(2, msg.cast(), libc::strlen(msg));
            libc::_exit(2);
        }
    }

    /// Marks a mapping of `path` live for its lifetime.
    pub struct Guard;

    impl Guard {
        pub fn new(path: &Path) -> Guard {
            INSTALL.call_once(|| {
                // SAFETY: installs a handler that only touches atomics and
                // async-signal-safe calls.
                unsafe {
                    libc::signal(libc::SIGBUS, on_sigbus as *const () as libc::sighandler_t);
                }
            });
            let text = format!(
                "partwise: error: {}: the file changed size while it was read (truncated by another process?); nothing was answered from it\n",
                path.display()
            );
            let c = CString::new(text.replace('\0', "?")).unwrap_or_default();
            let old = MESSAGE.swap(c.into_raw(), Ordering::SeqCst);
            if !old.is_null() && LIVE.load(Ordering::SeqCst) == 0 {
                // SAFETY: `old` came from CString::into_raw and no live
                // mapping can fault with it any more.
                drop(unsafe { CString::from_raw(old) });
            }
            LIVE.fetch_add(1, Ordering::SeqCst);
            Guard
        }
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            LIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
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
