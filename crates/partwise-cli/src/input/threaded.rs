//! The one reader of a large key file on several threads (`route --summary
//! --threads`, `skew --threads`), with output identical to one thread's:
//! the file is mapped once and cut into ranges of whole lines, one per
//! thread; each thread folds its range's line groups into a state of its
//! own, and the states come back in input order. Warnings are kept per
//! range and printed in file order, named up to the count one thread names.
//! A range that fails (a line that does not decode) makes the whole read
//! give way to the caller's one-thread read, so that the warnings and the
//! error are exactly those of a one-thread run.

use super::lines::{map_file, split_groups};
use super::lint::{bom_note, more_warnings, Lint, NAMED_WARNINGS};
use crate::exit::{CliError, Result};
use partwise::encoding::UTF8_BOM;
use std::path::Path;

/// Regular files at least this large are read on several threads by
/// [`super::KeySource::fold_batches`]; below it a second thread saves less
/// than starting it costs.
pub const PARALLEL_MIN_BYTES: u64 = 4 << 20;

/// What one thread read.
struct Part<T> {
    state: T,
    lines: u64,
    /// Its first warnings: line within the range, byte, character.
    warnings: Vec<(u64, usize, char)>,
    /// Keys it found with invisible characters.
    warned: u64,
}

/// Reads the regular file at `path` on up to `threads` threads when it is
/// at least `min_bytes` long: `f(state, first, lines)` for every group of
/// lines of a range (`first`: the 0-based number of the group's first line
/// within its range), each range into its own state from `init`. Returns the
/// states in input order and the number of lines, or `None` when the file
/// is not read here (one thread asked, not a regular file, shorter than
/// `min_bytes`, or a range failed): the caller then reads it on one thread.
pub fn fold_line_groups<T: Send, E: From<CliError> + Send>(
    path: &Path,
    threads: usize,
    min_bytes: u64,
    init: impl Fn() -> T + Sync,
    f: impl Fn(&mut T, u64, &[&[u8]]) -> std::result::Result<(), E> + Sync,
) -> Result<Option<(Vec<T>, u64)>> {
    if threads < 2
        || path.as_os_str() == "-"
        || !std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= min_bytes)
    {
        return Ok(None);
    }
    let Some(map) = map_file(path, false)? else {
        return Ok(None);
    };
    let name = path.display().to_string();
    // Cut the whole file, its byte-order mark included, so the ranges are
    // where a cut by byte offsets into the file puts them.
    let mut parts = cut_lines(&map.bytes, threads);
    let bom = parts[0].starts_with(UTF8_BOM);
    if bom {
        parts[0] = &parts[0][UTF8_BOM.len()..];
    }
    let (init, f, label) = (&init, &f, name.as_str());
    let results: Vec<std::result::Result<Part<T>, E>> = std::thread::scope(|s| {
        let handles: Vec<_> = parts[1..]
            .iter()
            .map(|&part| s.spawn(move || fold_part(part, label, init(), f)))
            .collect();
        // The first range on this thread: one thread fewer to start.
        let first = fold_part(parts[0], label, init(), f);
        std::iter::once(first)
            .chain(
                handles
                    .into_iter()
                    .map(|h| h.join().expect("reader thread panicked")),
            )
            .collect()
    });
    if results.iter().any(|r| r.is_err()) {
        return Ok(None);
    }
    drop(map);
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
    Ok(Some((states, lines)))
}

/// One range of [`fold_line_groups`], its warnings kept.
fn fold_part<T, E: From<CliError>>(
    hay: &[u8],
    name: &str,
    mut state: T,
    f: &impl Fn(&mut T, u64, &[&[u8]]) -> std::result::Result<(), E>,
) -> std::result::Result<Part<T>, E> {
    let mut lint = Lint::new(name);
    lint.deferred = Some(Vec::new());
    let mut lines = 0u64;
    split_groups(hay, &mut lines, &mut lint, &mut |first, group: &[&[u8]]| {
        f(&mut state, first, group)
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

/// Cuts `hay` into up to `parts` ranges of whole lines of about equal size:
/// every range but the last ends just after a `\n` (so a `\r\n` is never
/// cut), and together they are `hay`.
pub(super) fn cut_lines(hay: &[u8], parts: usize) -> Vec<&[u8]> {
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
