//! The one HTML (and SVG, XML) escaper of every page and chart partwise
//! writes.

use crate::output::invisible;
use std::fmt::Write as _;

/// `text` safe in HTML text and in a quoted attribute, with every
/// [`invisible`] character shown as a `\u{..}` escape, as the tables show
/// it: a browser draws nothing for a zero-width space and lets a bidi
/// override reverse what follows, so a name must not reach it as itself.
pub fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            c if invisible(c) => {
                let _ = write!(s, "\\u{{{:x}}}", u32::from(c));
            }
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::escape;

    /// The five characters that end a text or an attribute of either quote,
    /// and an invisible one, which must reach the page as an escape.
    #[test]
    fn escapes_quotes_brackets_ampersands_and_invisible_characters() {
        assert_eq!(
            escape("a'b\"c<d>e&f\u{200b}g"),
            "a&#39;b&quot;c&lt;d&gt;e&amp;f\\u{200b}g"
        );
        assert_eq!(escape("plain text"), "plain text");
    }
}
