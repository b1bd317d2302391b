//! The exit codes of `partwise`, and the error that carries one: a message
//! naming the input at fault, over the library error (and its causes) that
//! made it.

use std::error::Error as StdError;
use std::fmt;

/// How `partwise` ends: scripts and CI read these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitCode {
    /// Everything checked out.
    Ok = 0,
    /// The command ran and found something the user should act on.
    Findings = 1,
    /// Bad input, bad flags or an I/O failure: no answer was produced.
    Error = 2,
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(c: ExitCode) -> Self {
        std::process::ExitCode::from(c as u8)
    }
}

/// A library error as the CLI keeps it: typed, so its causes survive to
/// the one place that prints them.
pub type LibError = Box<dyn StdError + Send + Sync + 'static>;

/// An error that ends the command with [`ExitCode::Error`]. The message names
/// the input at fault (a flag, a file and line, an argument).
#[derive(Debug)]
pub enum CliError {
    /// A message for the user, made by the CLI itself.
    Msg(String),
    /// A library error; `context` (the input at fault) goes in front of it.
    Lib {
        context: Option<String>,
        error: LibError,
    },
    /// The reader of our output went away (`partwise ... | head`): not an error.
    BrokenPipe,
}

impl CliError {
    pub fn msg(m: impl Into<String>) -> CliError {
        CliError::Msg(m.into())
    }

    /// A library error, kept whole.
    pub fn lib(e: impl Into<LibError>) -> CliError {
        CliError::Lib {
            context: None,
            error: e.into(),
        }
    }

    /// A library error behind what the CLI was doing (`--owned FILE`, ...).
    pub fn context(context: impl Into<String>, e: impl Into<LibError>) -> CliError {
        CliError::Lib {
            context: Some(context.into()),
            error: e.into(),
        }
    }

    /// The causes under the message, outermost first. A cause whose text the
    /// line above already shows is left out: some errors spell their source
    /// out in their own message, and saying it twice helps nobody.
    pub fn causes(&self) -> Vec<String> {
        match self {
            CliError::Lib { error, .. } => causes(error.as_ref()),
            _ => Vec::new(),
        }
    }

    /// The whole report for stderr: `partwise: error: MESSAGE`, then each
    /// cause on its own line. Messages quote file names, keys and what
    /// servers said, so invisible characters in them are shown escaped:
    /// a terminal must not obey them.
    pub fn report(&self) -> String {
        let mut s = format!("partwise: error: {self}");
        for c in self.causes() {
            s.push_str("\n  caused by: ");
            s.push_str(&c);
        }
        crate::output::visible_lines(&s).into_owned()
    }
}

/// The causes under `error`, outermost first, each left out when the line
/// above already shows its text (see [`CliError::causes`]).
pub fn causes(error: &(dyn StdError + 'static)) -> Vec<String> {
    let mut out = Vec::new();
    let mut above = error.to_string();
    let mut next = error.source();
    while let Some(cause) = next {
        let text = cause.to_string();
        if !text.is_empty() && !above.contains(&text) {
            out.push(text.clone());
        }
        above = text;
        next = cause.source();
    }
    out
}

/// `text` with a line `  caused by: CAUSE` for each cause inserted after
/// its first line (clap's message; the usage hint stays last).
pub fn with_causes(text: &str, causes: &[String]) -> String {
    if causes.is_empty() {
        return text.to_string();
    }
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let mut s = first.to_string();
    for c in causes {
        s.push_str("\n  caused by: ");
        s.push_str(c);
    }
    s.push('\n');
    s.push_str(rest);
    s
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Msg(m) => f.write_str(m),
            CliError::Lib {
                context: Some(c),
                error,
            } => write!(f, "{c}: {error}"),
            CliError::Lib {
                context: None,
                error,
            } => write!(f, "{error}"),
            CliError::BrokenPipe => f.write_str("broken pipe"),
        }
    }
}

impl From<partwise::Error> for CliError {
    fn from(e: partwise::Error) -> Self {
        CliError::lib(e)
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return CliError::BrokenPipe;
        }
        CliError::context("I/O error", e)
    }
}

impl From<serde_json::Error> for CliError {
    fn from(e: serde_json::Error) -> Self {
        match e.io_error_kind() {
            Some(std::io::ErrorKind::BrokenPipe) => CliError::BrokenPipe,
            _ => CliError::context("I/O error writing JSON", e),
        }
    }
}

pub type Result<T, E = CliError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with an optional cause, as the libraries build them.
    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl StdError for Layer {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            self.1.as_deref().map(|l| l as &(dyn StdError + 'static))
        }
    }

    #[test]
    fn every_cause_gets_its_own_line() {
        let e = CliError::context(
            "-P/--partitioner 'priority:x'",
            Layer(
                "bad priority spec",
                Some(Box::new(Layer(
                    "reserved partition 'x'",
                    Some(Box::new(Layer("not a number", None))),
                ))),
            ),
        );
        assert_eq!(
            e.report(),
            "partwise: error: -P/--partitioner 'priority:x': bad priority spec\n  \
             caused by: reserved partition 'x'\n  caused by: not a number"
        );
    }

    #[test]
    fn a_cause_the_message_already_shows_is_not_repeated() {
        let e = CliError::lib(Layer(
            "cannot read t.json: no such file",
            Some(Box::new(Layer("no such file", None))),
        ));
        assert_eq!(
            e.report(),
            "partwise: error: cannot read t.json: no such file"
        );
        assert!(CliError::msg("plain").causes().is_empty());
    }

    #[test]
    fn causes_go_under_the_first_line_of_a_usage_error() {
        let text = "error: invalid value 'x' for '-P/--partitioner <SPEC>': bad spec\n\nFor more information, try '--help'.\n";
        let c = causes(&Layer(
            "bad spec",
            Some(Box::new(Layer("reserved 'x'", None))),
        ));
        assert_eq!(
            with_causes(text, &c),
            "error: invalid value 'x' for '-P/--partitioner <SPEC>': bad spec\n  caused by: reserved 'x'\n\nFor more information, try '--help'.\n"
        );
        assert_eq!(with_causes(text, &[]), text);
    }
}
