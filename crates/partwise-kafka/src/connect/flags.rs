//! A [`Connection`] from kcat's flags, read in one order by every program
//! that takes them (the `partwise` command, the ticker): `-F` files first,
//! then `-X` pairs, then `-b`, each later value replacing an earlier one.

use super::Connection;
use crate::error::Error;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// The connection flags as given: `-F FILE`, `-X KEY=VALUE` and `-b
/// BROKERS`, each repeatable, and the timeout of every operation.
#[derive(Clone, Default)]
pub struct Flags {
    /// `-F`: properties files, in the order given.
    pub files: Vec<PathBuf>,
    /// `-X`: `key=value` pairs, in the order given.
    pub props: Vec<String>,
    /// `-b`: bootstrap brokers, each `host:port[,host:port]`.
    pub bootstrap: Vec<String>,
    /// `--timeout`.
    pub timeout: Duration,
}

// Hand-written: a -X value may be a password.
impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Flags")
            .field("files", &self.files)
            .field("props", &self.props.len())
            .field("bootstrap", &self.bootstrap)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// A flag whose value cannot be used: the flag (`-F`, `-X`,
/// `-b/--bootstrap`) and the library's reason, which never holds a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagError {
    /// The flag.
    pub flag: &'static str,
    /// Why (for `-F`, it begins with the file's name).
    pub error: Error,
}

impl fmt::Display for FlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.flag == "-F" {
            write!(f, "-F {}", self.error)
        } else {
            write!(f, "{}: {}", self.flag, self.error)
        }
    }
}

impl std::error::Error for FlagError {}

impl Flags {
    /// The connection the flags give. It may have no `bootstrap.servers`
    /// (none of the flags set one): the caller says what to do then.
    pub fn connection(&self) -> Result<Connection, FlagError> {
        let mut c = Connection::new(self.timeout);
        for f in &self.files {
            c.load_properties(f)
                .map_err(|error| FlagError { flag: "-F", error })?;
        }
        for p in &self.props {
            c.set_pair(p)
                .map_err(|error| FlagError { flag: "-X", error })?;
        }
        if !self.bootstrap.is_empty() {
            c.bootstrap(&self.bootstrap.join(","))
                .map_err(|error| FlagError {
                    flag: "-b/--bootstrap",
                    error,
                })?;
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_then_pairs_then_bootstrap() {
        let dir = tempdir();
        let f = dir.join("client.properties");
        std::fs::write(
            &f,
            "bootstrap.servers=file:1\nclient.id=from-file\nsasl.username=a\n",
        )
        .unwrap();
        let flags = Flags {
            files: vec![f.clone()],
            props: vec!["client.id=from-x".into(), "bootstrap.servers=x:1".into()],
            bootstrap: vec!["b:1".into(), "b:2".into()],
            timeout: Duration::from_secs(3),
        };
        let c = flags.connection().unwrap();
        assert_eq!(c.get("bootstrap.servers"), Some("b:1,b:2"));
        assert_eq!(c.get("client.id"), Some("from-x"));
        assert_eq!(c.get("sasl.username"), Some("a"));
        assert_eq!(c.timeout(), Duration::from_secs(3));
        let c = Flags {
            files: vec![f],
            ..Flags::default()
        }
        .connection()
        .unwrap();
        assert_eq!(c.get("bootstrap.servers"), Some("file:1"));
        assert!(Flags::default()
            .connection()
            .unwrap()
            .get("bootstrap.servers")
            .is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_bad_value_names_its_flag_and_no_secret() {
        let e = Flags {
            props: vec!["hunter2".into()],
            ..Flags::default()
        }
        .connection()
        .unwrap_err();
        assert_eq!(e.flag, "-X");
        assert!(e.to_string().starts_with("-X: expected key=value"), "{e}");
        assert!(!e.to_string().contains("hunter2"), "{e}");
        let e = Flags {
            files: vec!["/nonexistent/p".into()],
            ..Flags::default()
        }
        .connection()
        .unwrap_err();
        assert!(e.to_string().starts_with("-F /nonexistent/p: "), "{e}");
        let e = Flags {
            bootstrap: vec![" ".into()],
            ..Flags::default()
        }
        .connection()
        .unwrap_err();
        assert_eq!(e.to_string(), "-b/--bootstrap: no broker given");
        let e = format!(
            "{:?}",
            Flags {
                props: vec!["sasl.password=hunter2".into()],
                ..Flags::default()
            }
        );
        assert!(!e.contains("hunter2"), "{e}");
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "pwk-flags-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
