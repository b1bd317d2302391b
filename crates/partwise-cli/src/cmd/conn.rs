//! The Kafka connection flags of every command that talks to a cluster
//! (`kafka ...`, `report -b`), kcat's (`-b`, `-X key=value`, `-F FILE`) plus
//! `--timeout`; secret property values are never printed, not even with
//! `--verbose`.

use crate::exit::{CliError, Result};
use partwise_kafka::connect::Setting;
use partwise_kafka::Connection;
use std::path::PathBuf;
use std::time::Duration;

/// The connection flags every `kafka` subcommand takes, and `report -b`.
#[derive(clap::Args)]
pub struct ConnArgs {
    /// Bootstrap brokers, host:port[,host:port...] (repeatable)
    #[arg(
        short = 'b',
        long = "bootstrap",
        alias = "brokers",
        value_name = "BROKERS"
    )]
    bootstrap: Vec<String>,
    /// A librdkafka property, e.g. -X security.protocol=SASL_SSL (repeatable)
    #[arg(short = 'X', value_name = "KEY=VALUE")]
    props: Vec<String>,
    /// A properties file of key=value lines (repeatable; -X and -b override it)
    #[arg(short = 'F', value_name = "FILE")]
    files: Vec<PathBuf>,
    #[command(flatten)]
    timeout: crate::cmd::flags::TimeoutFlag,
    /// Print the effective connection settings (secrets redacted) to stderr
    #[arg(short = 'v', long)]
    verbose: bool,
}

impl ConnArgs {
    /// The validated connection: files first, then -X, then -b, as
    /// partwise-kafka reads the flags for every program that takes them.
    /// The library says what is wrong with a value; the flag is named here.
    pub fn connection(&self) -> Result<Connection> {
        let flags = partwise_kafka::connect::Flags {
            files: self.files.clone(),
            props: self.props.clone(),
            bootstrap: self.bootstrap.clone(),
            timeout: self.timeout.timeout,
        };
        let c = flags.connection().map_err(|e| match e.setting {
            // The library's message starts with the file's name.
            Setting::File => CliError::msg(format!("-F {}", e.error)),
            Setting::Property => CliError::context("-X", e.error),
            Setting::Bootstrap => CliError::context("-b/--bootstrap", e.error),
        })?;
        for entry in self.bootstrap.iter().flat_map(|b| b.split(',')) {
            if !entry.trim().is_empty() {
                crate::cmd::parse::broker_address(entry.trim())
                    .map_err(|e| CliError::msg(format!("-b/--bootstrap: {e}")))?;
            }
        }
        if c.get("bootstrap.servers")
            .is_none_or(|b| b.trim().is_empty())
        {
            return Err(CliError::msg(
                "no brokers: give -b HOST:PORT (or bootstrap.servers with -X or -F)",
            ));
        }
        if self.verbose {
            say!(
                "partwise: connection (timeout {}s):",
                self.timeout.timeout.as_secs_f64()
            );
            for (k, v) in c.redacted() {
                say!("  {k}={v}");
            }
        }
        Ok(c)
    }

    /// The `-F` files.
    pub fn files(&self) -> impl Iterator<Item = &std::path::Path> {
        self.files.iter().map(PathBuf::as_path)
    }

    /// Whether `-v` was given.
    pub fn verbose(&self) -> bool {
        self.verbose
    }

    /// Whether any connection flag (`-b`, `-X`, `-F`) was given: `report`
    /// goes live only then.
    pub fn given(&self) -> bool {
        !self.bootstrap.is_empty() || !self.props.is_empty() || !self.files.is_empty()
    }

    /// The `--timeout` of every cluster operation.
    pub fn timeout(&self) -> Duration {
        self.timeout.timeout
    }
}

/// A partwise-kafka error as a CLI error (exit 2), kept whole so its causes
/// are printed.
pub fn kerr(e: partwise_kafka::Error) -> CliError {
    CliError::lib(e)
}

/// Whether a progress bar may be drawn: only for a person at a terminal.
pub fn stderr_is_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal()
}
