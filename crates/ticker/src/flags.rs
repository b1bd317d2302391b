//! The ticker's typed flags: what every subcommand takes ([`Common`]) and
//! the value parsers at the clap boundary, so a bad
//! value is clap's usage error naming the flag (exit 2), as in the
//! `partwise` command. Durations take the core's one grammar
//! ([`partwise::duration`]): `500ms`, `10s`, `2m`, `1h`, or a bare number in
//! the flag's unit (seconds, or milliseconds for the Java-named timeouts).

use partwise::duration::{self, Bare};
use std::path::PathBuf;
use std::time::Duration;

/// Where the services are, and the topology. Not `Debug`: a `-X` value may
/// be a password.
#[derive(clap::Args, Clone)]
pub struct Common {
    /// Kafka bootstrap brokers, host:port[,host:port]
    #[arg(
        short = 'b',
        long = "bootstrap",
        env = "PARTWISE_KAFKA_BOOTSTRAP",
        value_name = "BROKERS"
    )]
    pub bootstrap: Option<String>,
    /// A librdkafka property for every Kafka client, e.g. -X security.protocol=SASL_SSL (repeatable); its TLS and SASL settings reach partwise's group runtime too
    #[arg(short = 'X', value_name = "KEY=VALUE")]
    pub props: Vec<String>,
    /// A properties file of key=value lines (repeatable; -X and -b override it)
    #[arg(short = 'F', value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Redis Cluster node(s), host:port[,host:port] [default: 127.0.0.1:7100; `demo` starts a cluster of its own instead]
    #[arg(long, env = "PARTWISE_REDIS", value_name = "NODES", value_parser = redis_nodes)]
    pub redis: Option<String>,
    /// Names of one run's own: topics NS-market-updates and NS-notifications
    /// (each topic the topology declares, prefixed), Redis keys NS:market:{SYM}
    /// and NS:notif:{SYM} (same slot as without it). Letters, digits, '.', '_', '-'
    #[arg(long, value_name = "NS", value_parser = namespace)]
    pub namespace: Option<String>,
    /// The topology file: topics, producers' partitioners, the co-partition group
    #[arg(long, value_name = "FILE", default_value_os_t = default_topology())]
    pub topology: PathBuf,
}

impl Common {
    /// The Redis seed nodes, or the default address of `scripts/redis-cluster-up`.
    pub fn redis_nodes(&self) -> &str {
        self.redis.as_deref().unwrap_or("127.0.0.1:7100")
    }

    /// The Kafka connection flags as partwise-kafka reads them (`-F`, then
    /// `-X`, then `-b`, as the `partwise` command does); an empty `-b` is
    /// no `-b`.
    pub fn kafka_flags(&self, timeout: Duration) -> partwise_kafka::connect::Flags {
        partwise_kafka::connect::Flags {
            files: self.files.clone(),
            props: self.props.clone(),
            bootstrap: self
                .bootstrap
                .iter()
                .filter(|b| !b.trim().is_empty())
                .cloned()
                .collect(),
            timeout,
        }
    }

    /// The flags that give a child process (a worker, the feed) the same
    /// Kafka connection: `-F` files, `-X` pairs and `-b`.
    pub fn kafka_args(&self) -> Vec<std::ffi::OsString> {
        let mut out = Vec::new();
        for f in &self.files {
            out.push("-F".into());
            out.push(f.clone().into_os_string());
        }
        for p in &self.props {
            out.push("-X".into());
            out.push(p.into());
        }
        if let Some(b) = &self.bootstrap {
            out.push("-b".into());
            out.push(b.into());
        }
        out
    }
}

/// The repository's `examples/ticker.toml`.
pub fn default_topology() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/ticker.toml"
    ))
}

/// The longest `--duration`, `--wait` and `--redis-retry` the ticker takes.
const LONGEST: Duration = Duration::from_secs(24 * 3600);

/// A span of the ticker's own (`--duration`, `--wait`, `--redis-retry`): a
/// bare number is seconds; at most 24 h.
pub fn span(s: &str) -> Result<Duration, String> {
    let d = duration::parse(s, Bare::Seconds)?;
    if d > LONGEST {
        return Err("at most 24 h".into());
    }
    Ok(d)
}

/// The Java client's `session.timeout.ms` and `heartbeat.interval.ms`: a
/// bare number is milliseconds; at least 1 ms.
pub fn timeout(s: &str) -> Result<Duration, String> {
    duration::positive_millis(s)
}

/// `--namespace NS`: it goes into topic names (Kafka allows letters, digits,
/// '.', '_', '-') and in front of the Redis keys, where a brace would become
/// the keys' hash tag and move them off their symbol's slot.
pub fn namespace(s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.len() <= 100
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if ok {
        Ok(s.to_string())
    } else {
        Err("must be 1 to 100 letters, digits, '.', '_' or '-' (it goes into topic names and in front of Redis keys)".into())
    }
}

/// `--redis NODES`: Redis Cluster seed nodes, `HOST:PORT[,HOST:PORT]`,
/// kept as given (workers and the feed are handed the same text).
pub fn redis_nodes(s: &str) -> Result<String, String> {
    for node in s.split(',') {
        node.trim()
            .parse::<partwise_redis::NodeAddr>()
            .map_err(|e| format!("'{}': {e}", node.trim()))?;
    }
    Ok(s.to_string())
}

/// `--runtime`: which group runtime a worker joins with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Runtime {
    /// partwise's group runtime with the `copartitioned` assignor.
    Partwise,
    /// A librdkafka group under `roundrobin`: the seeds' counter-example.
    #[value(name = "librdkafka-roundrobin")]
    LibrdkafkaRoundrobin,
}

impl Runtime {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Partwise => "partwise",
            Runtime::LibrdkafkaRoundrobin => "librdkafka-roundrobin",
        }
    }
}

/// `verify --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Lines for a person.
    Table,
    /// One JSON document.
    Json,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI's grammar: `h` is a unit, a bare number is seconds, and the
    /// ticker's own ceiling of a day holds.
    #[test]
    fn spans_take_the_clis_grammar() {
        assert_eq!(span("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(span("10"), Ok(Duration::from_secs(10)));
        assert_eq!(span("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(span("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(span("0s"), Ok(Duration::ZERO));
        assert!(span("25h").unwrap_err().contains("24 h"));
        assert!(span("-1s").is_err());
        assert!(span("10x").is_err());
        assert_eq!(timeout("6000"), Ok(Duration::from_millis(6000)));
        assert_eq!(timeout("6s"), Ok(Duration::from_millis(6000)));
        assert!(timeout("0").is_err());
    }
}
