//! The exit codes of `partwise`, and the error that carries one.

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

/// An error that ends the command with [`ExitCode::Error`]. The message names
/// the input at fault (a flag, a file and line, an argument).
#[derive(Debug)]
pub enum CliError {
    /// A message for the user.
    Msg(String),
    /// The reader of our output went away (`partwise ... | head`): not an error.
    BrokenPipe,
}

impl CliError {
    pub fn msg(m: impl Into<String>) -> CliError {
        CliError::Msg(m.into())
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Msg(m) => f.write_str(m),
            CliError::BrokenPipe => f.write_str("broken pipe"),
        }
    }
}

impl From<partwise::Error> for CliError {
    fn from(e: partwise::Error) -> Self {
        CliError::Msg(e.to_string())
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return CliError::BrokenPipe;
        }
        CliError::Msg(format!("I/O error: {e}"))
    }
}

impl From<serde_json::Error> for CliError {
    fn from(e: serde_json::Error) -> Self {
        match e.io_error_kind() {
            Some(std::io::ErrorKind::BrokenPipe) => CliError::BrokenPipe,
            _ => CliError::Msg(format!("I/O error writing JSON: {e}")),
        }
    }
}

pub type Result<T, E = CliError> = std::result::Result<T, E>;
