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

/// Which of the connection's inputs a value came from; a program names it
/// in its own words (the CLI and the ticker as the flag `-F`, `-X` or `-b`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// A properties file ([`Flags::files`]).
    File,
    /// A `key=value` property ([`Flags::props`]).
    Property,
    /// The bootstrap brokers ([`Flags::bootstrap`]).
    Bootstrap,
}

/// An input whose value cannot be used: which input, and why, in words
/// that never hold a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingError {
    /// The input.
    pub setting: Setting,
    /// Why (for a file, it begins with the file's name).
    pub error: Error,
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.setting {
            Setting::File => write!(f, "{}", self.error),
            Setting::Property => write!(f, "property: {}", self.error),
            Setting::Bootstrap => write!(f, "bootstrap.servers: {}", self.error),
        }
    }
}

impl std::error::Error for SettingError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl Flags {
    /// The connection the flags give. It may have no `bootstrap.servers`
    /// (none of the flags set one): the caller says what to do then.
    pub fn connection(&self) -> Result<Connection, SettingError> {
        let mut c = Connection::new(self.timeout);
        for f in &self.files {
            c.load_properties(f).map_err(|error| SettingError {
                setting: Setting::File,
                error,
            })?;
        }
        for p in &self.props {
            c.set_pair(p).map_err(|error| SettingError {
                setting: Setting::Property,
                error,
            })?;
        }
        if !self.bootstrap.is_empty() {
            c.bootstrap(&self.bootstrap.join(","))
                .map_err(|error| SettingError {
                    setting: Setting::Bootstrap,
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
    fn a_bad_value_names_its_input_and_no_secret() {
        let e = Flags {
            props: vec!["hunter2".into()],
            ..Flags::default()
        }
        .connection()
        .unwrap_err();
        assert_eq!(e.setting, Setting::Property);
        assert!(
            e.to_string().starts_with("property: expected key=value"),
            "{e}"
        );
        assert!(!e.to_string().contains("hunter2"), "{e}");
        let e = Flags {
            files: vec!["/nonexistent/p".into()],
            ..Flags::default()
        }
        .connection()
        .unwrap_err();
        assert_eq!(e.setting, Setting::File);
        assert!(e.to_string().starts_with("/nonexistent/p: "), "{e}");
        let e = Flags {
            bootstrap: vec![" ".into()],
            ..Flags::default()
        }
        .connection()
        .unwrap_err();
        assert_eq!(e.to_string(), "bootstrap.servers: no broker given");
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
