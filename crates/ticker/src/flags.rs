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

    /// A connection input partwise-kafka refused, named by its flag here.
    pub fn kafka_flag_error(e: &partwise_kafka::connect::SettingError) -> String {
        use partwise_kafka::connect::Setting;
        match e.setting {
            // The library's message starts with the file's name.
            Setting::File => format!("-F {}", e.error),
            Setting::Property => format!("-X: {}", e.error),
            Setting::Bootstrap => format!("-b/--bootstrap: {}", e.error),
        }
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

    /// These flags as a child process (a worker, the feed) is to be given
    /// them, with no secret on its command line, where `ps` shows it to
    /// every user of the machine: each `-X` pair whose key partwise-kafka
    /// counts as secret ([`partwise_kafka::connect::is_secret`], the one
    /// definition) moves into a private properties file, given as the last
    /// `-F`. The `-F` files come before the `-X` pairs and the secret keys
    /// are never the others', so every property keeps the value it had.
    /// The file lives as long as the [`PrivateProps`] returned with it.
    pub fn for_children(&self) -> Result<(Common, Option<PrivateProps>), String> {
        let secret = |p: &String| {
            p.split_once('=')
                .is_none_or(|(k, _)| partwise_kafka::connect::is_secret(k))
        };
        let (secrets, public): (Vec<String>, Vec<String>) =
            self.props.iter().cloned().partition(secret);
        let mut out = self.clone();
        if secrets.is_empty() {
            return Ok((out, None));
        }
        let mut text = String::new();
        for p in &secrets {
            // Checked by the caller's own connection first; never echoed.
            let (k, v) = p
                .split_once('=')
                .ok_or("-X: expected key=value (no '=' in the argument)")?;
            let k = k.trim();
            // A properties line is trimmed and ends at a line break, and a
            // line that begins with '#' or '!' is a comment.
            if v.trim() != v || v.contains(['\n', '\r']) || k.starts_with(['#', '!']) {
                return Err(format!(
                    "-X {k}: a secret whose value begins or ends with white space or holds a \
                     line break cannot be handed to the worker processes in a properties file, \
                     and on their command lines every user of the machine would see it"
                ));
            }
            text.push_str(&format!("{k}={v}\n"));
        }
        let file = PrivateProps::write(&text)?;
        out.props = public;
        out.files.push(file.path().to_path_buf());
        Ok((out, Some(file)))
    }

    /// The flags that give a child process (a worker, the feed) the same
    /// Kafka connection: `-F` files, `-X` pairs and `-b`. Every `-X` is
    /// passed as it is: give them [`Common::for_children`]'s flags.
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

/// A properties file only its owner can read (0600, in a directory of its
/// own, 0700) holding the secret properties a parent hands its child
/// processes; removed, with its directory, when dropped.
pub struct PrivateProps {
    dir: PathBuf,
    file: PathBuf,
}

impl PrivateProps {
    /// A new file holding `text`, under `$XDG_RUNTIME_DIR` (private to the
    /// user, and in memory) when there is one, else the temporary directory.
    fn write(text: &str) -> Result<PrivateProps, String> {
        use std::io::Write as _;
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|d| d.is_absolute() && d.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let dir = base.join(format!("ticker-{}-{nanos}", std::process::id()));
        // A new directory, never one that already exists (another user's,
        // or a link placed there).
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let props = PrivateProps {
            file: dir.join("secrets.properties"),
            dir,
        };
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&props.file)
            .map_err(|e| format!("cannot create {}: {e}", props.file.display()))?;
        f.write_all(text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", props.file.display()))?;
        Ok(props)
    }

    /// The file.
    pub fn path(&self) -> &std::path::Path {
        &self.file
    }
}

impl Drop for PrivateProps {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
        let _ = std::fs::remove_dir(&self.dir);
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

    fn common(props: &[&str], files: Vec<PathBuf>) -> Common {
        Common {
            bootstrap: Some("b:1".into()),
            props: props.iter().map(|p| p.to_string()).collect(),
            files,
            redis: None,
            namespace: None,
            topology: default_topology(),
        }
    }

    /// A child's flags hold no secret; the private file (0600) does, and
    /// the connection they give is the one the parent's flags give.
    #[test]
    fn children_get_secrets_in_a_private_file() {
        use std::os::unix::fs::PermissionsExt as _;
        let user = std::env::temp_dir().join(format!("ticker-flags-{}", std::process::id()));
        std::fs::write(&user, "sasl.password=from-file\nclient.id=file\n").unwrap();
        let c = common(
            &[
                "security.protocol=SASL_SSL",
                "sasl.password=first",
                "ssl.key.password=k3y-pass",
                "sasl.password=hunter2-s3cret",
                "client.id=x",
            ],
            vec![user.clone()],
        );
        let (child, file) = c.for_children().unwrap();
        let file = file.expect("secrets were given");
        let args: Vec<String> = child
            .kafka_args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(
            !args
                .iter()
                .any(|a| a.contains("hunter2") || a.contains("first") || a.contains("k3y-pass")),
            "{args:?}"
        );
        assert!(args.contains(&"security.protocol=SASL_SSL".to_string()));
        let path = file.path().to_path_buf();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir = path.parent().unwrap().to_path_buf();
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        let t = Duration::from_secs(1);
        let (want, got) = (
            c.kafka_flags(t).connection().unwrap(),
            child.kafka_flags(t).connection().unwrap(),
        );
        for k in [
            "sasl.password",
            "ssl.key.password",
            "client.id",
            "security.protocol",
            "bootstrap.servers",
        ] {
            assert_eq!(want.get(k), got.get(k), "{k}");
        }
        assert_eq!(got.get("sasl.password"), Some("hunter2-s3cret"));
        drop(file);
        assert!(!path.exists() && !dir.exists());
        // Nothing secret: no file at all.
        let (child, file) = common(&["client.id=x"], Vec::new()).for_children().unwrap();
        assert!(file.is_none());
        assert_eq!(child.props, vec!["client.id=x".to_string()]);
        std::fs::remove_file(user).unwrap();
    }

    /// A secret a properties file cannot carry as it is (white space around
    /// it, a line break) is refused, named by its key and never echoed.
    #[test]
    fn a_secret_a_file_cannot_carry_is_refused_without_echoing_it() {
        for v in [" lead-zq1", "trail-zq2 ", "two\nzq3", "cr-zq4\r"] {
            let e = common(&[&format!("sasl.password={v}")], Vec::new())
                .for_children()
                .err()
                .expect("refused");
            assert!(e.starts_with("-X sasl.password: "), "{e}");
            assert!(!e.contains("zq"), "{e}");
        }
    }
}
