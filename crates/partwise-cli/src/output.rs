//! Output formats shared by every command: a table for people, JSON for
//! scripts (one document), NDJSON for streams (one object per line), and
//! the writers that keep each command to that contract.

use crate::exit::Result;
use serde_json::Value;
use std::io::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for people.
    Table,
    /// One JSON document: the report object, or an array of the rows
    Json,
    /// One JSON object per line: the report, or one row per line
    Ndjson,
}

/// A report as one JSON document: indented for `json`, on one line for
/// `ndjson` (whose every line must be one whole object).
pub fn write_doc<T: serde::Serialize + ?Sized>(
    out: &mut impl Write,
    format: Format,
    v: &T,
) -> Result<()> {
    if format == Format::Ndjson {
        serde_json::to_writer(&mut *out, v)?;
    } else {
        serde_json::to_writer_pretty(&mut *out, v)?;
    }
    out.write_all(b"\n")?;
    Ok(())
}

/// Writes records as a JSON array or as NDJSON, streaming.
pub struct JsonStream<W: Write> {
    out: W,
    array: bool,
    first: bool,
}

impl<W: Write> JsonStream<W> {
    pub fn new(out: W, format: Format) -> Result<JsonStream<W>> {
        let mut s = JsonStream {
            out,
            array: format == Format::Json,
            first: true,
        };
        if s.array {
            s.out.write_all(b"[")?;
        }
        Ok(s)
    }

    pub fn write<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        if self.array {
            self.out
                .write_all(if self.first { b"\n  " } else { b",\n  " })?;
        }
        serde_json::to_writer(&mut self.out, v)?;
        if !self.array {
            self.out.write_all(b"\n")?;
        }
        self.first = false;
        Ok(())
    }

    /// Hands what is written so far to the reader: called once per batch of
    /// input keys, so `tail -f keys | partwise route -i - --format ndjson`
    /// answers each key as it arrives (a batch of a file is thousands of
    /// lines, so the cost is nothing there).
    pub fn flush(&mut self) -> Result<()> {
        self.out.flush()?;
        Ok(())
    }

    pub fn finish(mut self) -> Result<W> {
        if self.array {
            self.out
                .write_all(if self.first { b"]\n" } else { b"\n]\n" })?;
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Rows of a per-key listing a command prints (`report`'s partition maps
/// and slot tables, `resize`'s moved keys); the rest are counted, not
/// listed. A listing is for reading: past a few thousand keys the counts
/// say what the rows would, and a row per key of a million-key file held
/// as one document takes GBs.
pub const MAX_KEY_ROWS: usize = 2_000;

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// The key as JSON text: the string when it is valid UTF-8, else null
/// (`key_hex` always carries the bytes).
pub fn key_json(bytes: &[u8]) -> Value {
    std::str::from_utf8(bytes).map_or(Value::Null, |s| Value::String(s.to_string()))
}

/// The key for a table cell: the core's one definition,
/// [`partwise::ser::key_label`] (printable text as is, anything else as
/// `0x..` hex, so two keys that look alike never print alike).
pub fn key_cell(bytes: &[u8]) -> String {
    partwise::ser::key_label(bytes)
}

/// The core's one definition of a character that must not reach a
/// terminal or a page as itself (see [`partwise::encoding::is_invisible`]).
pub use partwise::encoding::is_invisible as invisible;

/// `text` with every [`invisible`] character shown as a `\u{..}` escape
/// (Rust's notation), the rest as is: what a table cell or a report prints
/// of a string a broker, a client or a file supplied. Keys print as
/// [`key_cell`] (hex); this is for names, ids and hosts, where the readable
/// part matters more than the exact bytes.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, invisible)
}

/// [`visible`] for a message of several lines: its line breaks stay.
pub fn visible_lines(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, |c| c != '\n' && invisible(c))
}

/// A writer that shows every [`invisible`] character but the line break
/// escaped, whatever wrote it: the table output of the commands that print
/// what a broker or a client sent (`kafka group`, `--readiness`, `kafka
/// audit`, `kafka topics`, `redis ...`) goes through it, so a line that
/// forgets [`visible`] still cannot drive the operator's terminal. Text
/// already escaped passes unchanged; bytes that are not UTF-8 print as
/// `\xNN`. A character split between two writes is held until its end
/// arrives.
pub struct Visible<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> Visible<W> {
    pub fn new(inner: W) -> Visible<W> {
        Visible {
            inner,
            pending: Vec::new(),
        }
    }
}

impl<W: Write> Write for Visible<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut data = std::mem::take(&mut self.pending);
        data.extend_from_slice(buf);
        let mut rest = &data[..];
        loop {
            let e = match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.inner.write_all(visible_lines(text).as_bytes())?;
                    break;
                }
                Err(e) => e,
            };
            let (good, bad) = rest.split_at(e.valid_up_to());
            let good = std::str::from_utf8(good).expect("valid up to here");
            self.inner.write_all(visible_lines(good).as_bytes())?;
            match e.error_len() {
                // The start of a character whose end is in the next write.
                None => {
                    self.pending = bad.to_vec();
                    break;
                }
                Some(n) => {
                    for b in &bad[..n] {
                        write!(self.inner, "\\x{b:02x}")?;
                    }
                    rest = &bad[n..];
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> Drop for Visible<W> {
    fn drop(&mut self) {
        // A stream that ended inside a character: its bytes, escaped.
        for b in std::mem::take(&mut self.pending) {
            let _ = write!(self.inner, "\\x{b:02x}");
        }
        let _ = self.inner.flush();
    }
}

fn escaped(text: &str, hide: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(&hide) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut s = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hide(c) {
            use std::fmt::Write as _;
            let _ = write!(s, "\\u{{{:x}}}", u32::from(c));
        } else {
            s.push(c);
        }
    }
    std::borrow::Cow::Owned(s)
}

/// A simple left-aligned table; the last column is not padded. Every cell
/// passes through [`visible`] when written: cells carry names and ids from
/// brokers and clients, and one of them must not be able to drive the
/// operator's terminal.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    pub fn write(&self, out: &mut impl Write) -> Result<()> {
        let cols = self.header.len();
        let mut width = vec![0usize; cols];
        let shown: Vec<Vec<std::borrow::Cow<'_, str>>> = std::iter::once(&self.header)
            .chain(&self.rows)
            .map(|r| r.iter().map(|c| visible(c)).collect())
            .collect();
        for r in &shown {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        for r in &shown {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate() {
                if i + 1 < r.len() {
                    // Padded by hand: `format!`'s width is a u16, so a cell
                    // wider than 65535 characters (a long key) would panic.
                    line.push_str(c);
                    let pad = width[i].saturating_sub(c.chars().count()) + 2;
                    line.extend(std::iter::repeat_n(' ', pad));
                } else {
                    line.push_str(c);
                }
            }
            writeln!(out, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

/// The co-location matrix `assign` and `kafka group` print: a row per
/// partition index, the owner of that partition in each of `topics` (name,
/// partition count; blank where the topic has no such partition), and
/// whether the index is co-located. `co.owners` rows follow `topics`.
pub fn colocation_table(
    topics: &[(String, u32)],
    co: &partwise::assign::Colocation,
    member: impl Fn(usize) -> String,
) -> Table {
    let mut header = vec!["INDEX".to_string()];
    header.extend(topics.iter().map(|(name, _)| name.clone()));
    header.push("CO-LOCATED".into());
    let mut t = Table::new(header);
    for (p, row) in co.owners.iter().enumerate() {
        let mut cells = vec![p.to_string()];
        for ((_, count), owner) in topics.iter().zip(row) {
            cells.push(if (p as u32) < *count {
                owner.map_or("(none)".to_string(), &member)
            } else {
                String::new()
            });
        }
        let split = co.split.contains(&(p as u32));
        cells.push(if split { "SPLIT" } else { "yes" }.into());
        t.row(cells);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a hostile client id tries: clear the screen, retitle the window
    /// (OSC ... BEL), a C1 CSI, a bidi override, a zero-width space.
    const HOSTILE: &str = "c\u{1b}[2J\u{1b}]0;pwned\u{7}\u{9b}31m\u{202e}gnp.exe\u{200b}";

    #[test]
    fn the_visible_writer_escapes_whatever_is_written_through_it() {
        let hostile = "c\u{1b}[2J\u{202e}gnp.exe\n\u{9b}31m ok\n".as_bytes();
        // Byte by byte: characters split between writes come out whole.
        let mut out = Vec::new();
        {
            let mut v = Visible::new(&mut out);
            for b in hostile {
                v.write_all(std::slice::from_ref(b)).unwrap();
            }
            v.write_all(b"bad \xff end \xe2\x80").unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "c\\u{1b}[2J\\u{202e}gnp.exe\n\\u{9b}31m ok\nbad \\xff end \\xe2\\x80"
        );
        // Escaped text passes unchanged.
        let mut again = Vec::new();
        Visible::new(&mut again).write_all(text.as_bytes()).unwrap();
        assert_eq!(String::from_utf8(again).unwrap(), text);
    }

    #[test]
    fn table_cells_show_invisible_characters_escaped() {
        let mut t = Table::new(["MEMBER", HOSTILE]);
        t.row([HOSTILE, "x\ty\nz"]);
        let mut out = Vec::new();
        t.write(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.chars().any(|c| invisible(c) && c != '\n'), "{text:?}");
        let want = "c\\u{1b}[2J\\u{1b}]0;pwned\\u{7}\\u{9b}31m\\u{202e}gnp.exe\\u{200b}";
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.lines().all(|l| l.contains(want)), "{text}");
        assert!(text.contains("x\\u{9}y\\u{a}z"), "{text}");
        // Columns align on what is printed.
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0].find(want), lines[1].find("x\\u{9}"), "{text}");
    }

    #[test]
    fn visible_leaves_printable_text_alone() {
        for s in ["BBCA", "ünïcødé 日本 🙂", "a\\b", "", "<&>"] {
            assert!(matches!(visible(s), std::borrow::Cow::Borrowed(t) if t == s));
        }
        assert_eq!(visible("\u{feff}BBCA"), "\\u{feff}BBCA");
        assert_eq!(visible("a\u{2066}b\u{2069}"), "a\\u{2066}b\\u{2069}");
        assert_eq!(visible("\u{7f}\u{85}"), "\\u{7f}\\u{85}");
    }

    #[test]
    fn keys_with_invisible_characters_are_hex() {
        assert_eq!(
            key_cell("\u{202e}gnp.exe".as_bytes()),
            "0xe280ae676e702e657865"
        );
        assert_eq!(key_cell("a\u{200b}".as_bytes()), "0x61e2808b");
        assert_eq!(key_cell("\u{feff}K".as_bytes()), "0xefbbbf4b");
        assert_eq!(key_cell("ünï 日本".as_bytes()), "ünï 日本");
    }
}
