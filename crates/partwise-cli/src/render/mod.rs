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

/// Writes `text` after `lead`, folded at spaces so that no line passes the
/// terminal's width (100 columns when stdout is not a terminal, or its width
/// is unknown) where a space allows it; continuation lines are indented to
/// the end of `lead`. A fix that names several settings runs to well over a
/// thousand characters, which a terminal folds mid-word. Only tables fold:
/// JSON keeps each text whole.
pub fn write_wrapped(out: &mut impl std::io::Write, lead: &str, text: &str) -> std::io::Result<()> {
    write_wrapped_at(out, lead, text, width())
}

/// The columns a folded line may fill: stdout's terminal width, else 100.
fn width() -> usize {
    static WIDTH: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *WIDTH.get_or_init(|| terminal_width().unwrap_or(100))
}

/// The width of the terminal stdout is, when it is one that says.
fn terminal_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct it is given.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col > 0).then_some(usize::from(ws.ws_col))
}

fn write_wrapped_at(
    out: &mut impl std::io::Write,
    lead: &str,
    text: &str,
    width: usize,
) -> std::io::Result<()> {
    let indent = " ".repeat(lead.chars().count());
    let mut line = String::from(lead);
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = line.chars().count();
        if !empty && len + 1 + word.chars().count() > width {
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
    use super::write_wrapped_at;

    fn wrapped(lead: &str, text: &str) -> String {
        wrapped_at(lead, text, 100)
    }

    fn wrapped_at(lead: &str, text: &str, width: usize) -> String {
        let mut out = Vec::new();
        write_wrapped_at(&mut out, lead, text, width).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// A narrower terminal folds shorter lines, a wider one longer.
    #[test]
    fn the_width_is_the_terminal_s() {
        let text = "word ".repeat(60);
        for width in [40, 100, 200] {
            let out = wrapped_at("    fix: ", &text, width);
            let longest = out.lines().map(|l| l.chars().count()).max().unwrap();
            assert!(longest <= width && longest > width - 6, "{width}: {out}");
        }
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
