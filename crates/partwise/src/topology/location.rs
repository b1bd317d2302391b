//! Where a topology file is wrong: the 1-based line and column of a byte
//! offset, and the field path (`topic[1].partitions`) of the deepest key or
//! array element whose span contains it, found in toml's own span tree.

use crate::error::{Error, TopologyError};
use std::ops::Range;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

pub(super) fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

fn line_col(input: &str, offset: usize) -> (usize, usize) {
    let mut off = offset.min(input.len());
    while !input.is_char_boundary(off) {
        off -= 1;
    }
    let before = &input[..off];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

pub(super) fn at(
    input: &str,
    offset: usize,
    field: String,
    message: impl Into<String>,
) -> TopologyError {
    let (line, column) = line_col(input, offset);
    TopologyError {
        line,
        column,
        field,
        message: message.into(),
        cause: None,
    }
}

/// A located error whose message is a core error's text, kept as its cause.
pub(super) fn caused(input: &str, offset: usize, field: String, cause: Error) -> TopologyError {
    TopologyError {
        cause: Some(Box::new(cause.clone())),
        ..at(input, offset, field, cause.to_string())
    }
}

pub(super) fn syntax_error(input: &str, e: &toml::de::Error) -> TopologyError {
    let off = e.span().map_or(0, |s| s.start);
    let (line, _) = line_col(input, off);
    // A syntax error has no tree to walk: name the key written on that line.
    let text = input.lines().nth(line - 1).unwrap_or("");
    let field = text
        .split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"').to_string())
        .filter(|k| !k.is_empty() && !k.contains(['[', '{', '#']))
        .unwrap_or_default();
    at(
        input,
        off,
        field,
        format!("invalid TOML: {}", e.message().trim()),
    )
}

/// The path of the deepest key or array element whose span contains `off`.
pub(super) fn field_at(tree: &Spanned<DeTable<'_>>, off: usize) -> String {
    find_in_table(tree.get_ref(), off).unwrap_or_default()
}

fn contains(span: Range<usize>, off: usize) -> bool {
    span.start <= off && off < span.end.max(span.start + 1)
}

// Every entry is searched, not only those whose span contains `off`: the span
// of a `[[table]]` element covers its header line, not its keys.
fn find_in_table(t: &DeTable<'_>, off: usize) -> Option<String> {
    for (k, v) in t.iter() {
        let inner = find_in_value(v.get_ref(), off);
        if inner.is_some() || contains(k.span(), off) || contains(v.span(), off) {
            let mut path = k.get_ref().to_string();
            if let Some(rest) = inner {
                if !rest.starts_with('[') {
                    path.push('.');
                }
                path.push_str(&rest);
            }
            return Some(path);
        }
    }
    None
}

fn find_in_value(v: &DeValue<'_>, off: usize) -> Option<String> {
    match v {
        DeValue::Table(t) => find_in_table(t, off),
        DeValue::Array(a) => a.iter().enumerate().find_map(|(i, e)| {
            let inner = find_in_value(e.get_ref(), off);
            (inner.is_some() || contains(e.span(), off)).then(|| match inner {
                Some(rest) if rest.starts_with('[') => format!("[{i}]{rest}"),
                Some(rest) => format!("[{i}].{rest}"),
                None => format!("[{i}]"),
            })
        }),
        _ => None,
    }
}
