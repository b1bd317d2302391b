//! `KEY,COUNT` files: one line split at its last comma, whether a file
//! looks like one, and reading one whole.

use super::{for_each_line_group, for_each_line_group_mapped, input_name, Held};
use crate::exit::{CliError, Result};
use std::collections::HashMap;
use std::path::Path;

/// One `KEY,COUNT` line split at its last comma (so a key may hold commas):
/// the key's bytes and its count, a whole number. `skew --weighted` reads each
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
        for_each_line_group_mapped(path, per_group)?;
    }
    if out.is_empty() {
        return Err(CliError::msg(format!(
            "{name}: no keys (the input is empty)"
        )));
    }
    Ok(out)
}
