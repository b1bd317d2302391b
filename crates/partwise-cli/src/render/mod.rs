//! Rendering with one home: what several commands print in the same shape
//! (the JSON of findings, the HTML escaper, the SVG chart), so that no
//! command module imports another's.

pub mod audit;
pub mod catalog;
pub mod findings;
pub mod group;
pub mod html;
pub mod redis;
pub mod skew;
pub mod streams_group;
pub mod svg;

/// Writes `text` after `lead`, folded at spaces so that no line passes
/// `WIDTH` columns where a space allows it; continuation lines are indented
/// to the end of `lead`. A fix that names several settings runs to well over
/// a thousand characters, which a terminal folds mid-word.
pub fn write_wrapped(out: &mut impl std::io::Write, lead: &str, text: &str) -> std::io::Result<()> {
    const WIDTH: usize = 100;
    let indent = " ".repeat(lead.chars().count());
    let mut line = String::from(lead);
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = line.chars().count();
        if !empty && len + 1 + word.chars().count() > WIDTH {
            writeln!(out, "{line}")?;
            line.clone_from(&indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    writeln!(out, "{line}")
}

#[cfg(test)]
mod tests {
    use super::write_wrapped;

    fn wrapped(lead: &str, text: &str) -> String {
        let mut out = Vec::new();
        write_wrapped(&mut out, lead, text).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_long_fix_folds_at_spaces_under_the_lead() {
        let text = "word ".repeat(60);
        let out = wrapped("  fix: ", &text);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines.len() > 2, "{out}");
        assert!(lines.iter().all(|l| l.chars().count() <= 100), "{out}");
        assert!(lines[0].starts_with("  fix: word"));
        assert!(lines[1].starts_with("       word"));
        // Nothing lost or added but the folding.
        let words: Vec<&str> = out.split_whitespace().collect();
        assert_eq!(words.len(), 61);
    }

    #[test]
    fn a_short_line_and_a_long_word_stay_whole() {
        assert_eq!(wrapped("fix: ", "set a=b"), "fix: set a=b\n");
        let long = "x".repeat(150);
        assert_eq!(wrapped("fix: ", &long), format!("fix: {long}\n"));
    }
}
