//! Connection settings in the habits of kcat: bootstrap brokers, any
//! librdkafka property (`-X key=value`), properties files (`-F FILE`) and one
//! timeout; and the rule that keeps secrets out of everything partwise prints.

mod flags;

pub use flags::{Flags, Setting, SettingError};

use crate::error::{Error, Result};
use rdkafka::config::ClientConfig;
use std::path::Path;
use std::time::Duration;

/// The placeholder printed instead of a secret property's value.
pub const REDACTED: &str = "[redacted]";

/// Properties whose values are printed: settings that are never secret
/// (addresses, names, paths, modes, sizes and times). Every other value is
/// treated as a secret, so that a misspelt `sasl.passwrd` or a vendor's
/// `my.api.key` is never shown.
const PUBLIC: &[&str] = &[
    "acks",
    "api.version.request",
    "auto.commit.interval.ms",
    "auto.offset.reset",
    "batch.num.messages",
    "batch.size",
    "bootstrap.servers",
    "broker.address.family",
    "broker.version.fallback",
    "client.dns.lookup",
    "client.id",
    "client.rack",
    "compression.codec",
    "compression.type",
    "connections.max.idle.ms",
    "debug",
    "delivery.timeout.ms",
    "enable.auto.commit",
    "enable.idempotence",
    "enable.ssl.certificate.verification",
    "fetch.max.bytes",
    "fetch.min.bytes",
    "fetch.queue.backoff.ms",
    "fetch.wait.max.ms",
    "group.id",
    "group.instance.id",
    "group.protocol",
    "heartbeat.interval.ms",
    "isolation.level",
    "linger.ms",
    "log.connection.close",
    "log_level",
    "max.in.flight.requests.per.connection",
    "max.poll.interval.ms",
    "message.max.bytes",
    "message.timeout.ms",
    "metadata.broker.list",
    "partition.assignment.strategy",
    "partitioner",
    "queue.buffering.max.ms",
    "queued.min.messages",
    "receive.message.max.bytes",
    "reconnect.backoff.max.ms",
    "reconnect.backoff.ms",
    "request.required.acks",
    "request.timeout.ms",
    "retries",
    "retry.backoff.ms",
    "sasl.kerberos.principal",
    "sasl.kerberos.service.name",
    "sasl.mechanism",
    "sasl.mechanisms",
    "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.method",
    "sasl.oauthbearer.scope",
    "sasl.oauthbearer.token.endpoint.url",
    "sasl.username",
    "security.protocol",
    "session.timeout.ms",
    "socket.keepalive.enable",
    "socket.timeout.ms",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.cipher.suites",
    "ssl.enabled.protocols",
    "ssl.endpoint.identification.algorithm",
    "ssl.key.location",
    "ssl.keystore.location",
    "ssl.keystore.type",
    "ssl.protocol",
    "ssl.truststore.location",
    "ssl.truststore.type",
    "statistics.interval.ms",
    "topic.metadata.refresh.interval.ms",
    "transactional.id",
];

/// Whether the value of property `key` is printed as given: only the
/// `PUBLIC` settings, and never one whose name says it holds a secret.
pub fn is_secret(key: &str) -> bool {
    let k = key.trim().to_ascii_lowercase();
    let named_secret = k.contains("password")
        || k.contains("secret")
        || k.ends_with(".key.pem")
        || k.contains("private")
        || k.ends_with("jaas.config")
        || k.ends_with(".token")
        || k.contains("credential");
    named_secret || !PUBLIC.contains(&k.as_str())
}

/// Values this short are numbers and switches, not secrets; scrubbing them
/// out of librdkafka's messages would garble every digit in them.
const MIN_SCRUBBED: usize = 4;

/// How to reach a cluster: librdkafka properties in the order they were
/// given (a later value for a key replaces an earlier one) and the time any
/// one operation may take.
#[derive(Clone)]
pub struct Connection {
    props: Vec<(String, String)>,
    timeout: Duration,
}

// Hand-written so that `{:?}` can never show a secret.
impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("props", &self.redacted())
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl Connection {
    /// No properties yet; operations give up after `timeout`.
    pub fn new(timeout: Duration) -> Connection {
        Connection {
            props: Vec::new(),
            timeout,
        }
    }

    /// Sets `bootstrap.servers`.
    pub fn bootstrap(&mut self, brokers: &str) -> Result<()> {
        if brokers.trim().is_empty() {
            return Err(Error::Config("no broker given".into()));
        }
        self.set("bootstrap.servers", brokers.trim())
    }

    /// Sets one librdkafka property.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(Error::Config(format!("'{key}' is not a property name")));
        }
        self.props.retain(|(k, _)| k != key);
        self.props.push((key.to_string(), value.to_string()));
        Ok(())
    }

    /// Sets a property from `key=value` text (a `-X` argument).
    pub fn set_pair(&mut self, pair: &str) -> Result<()> {
        let (k, v) = pair.split_once('=').ok_or_else(|| {
            // The text may be a secret typed without its key: never echo it.
            Error::Config("expected key=value (no '=' in the argument)".into())
        })?;
        self.set(k, v)
    }

    /// Reads a Java-style properties file: `key=value` lines, `#` and `!`
    /// comments, blank lines ignored, whitespace around the key and value trimmed.
    pub fn load_properties(&mut self, path: &Path) -> Result<()> {
        // A properties file is small; /dev/zero or a log file by mistake
        // must not be read whole.
        const MAX: u64 = 16 << 20;
        let err = |e: std::io::Error| Error::Config(format!("{}: {e}", path.display()));
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(std::fs::File::open(path).map_err(err)?, MAX + 1),
            &mut bytes,
        )
        .map_err(err)?;
        if bytes.len() as u64 > MAX {
            return Err(Error::Config(format!(
                "{}: larger than {} MiB",
                path.display(),
                MAX >> 20
            )));
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::Config(format!(
                "{}: stream did not contain valid UTF-8",
                path.display()
            ))
        })?;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                continue;
            }
            let at = format!("{}:{}", path.display(), i + 1);
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| Error::Config(format!("{at}: expected key=value")))?;
            self.set(k, v.trim())
                .map_err(|e| Error::Config(format!("{at}: {e}")))?;
        }
        Ok(())
    }

    /// The value of property `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.props
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every property, in the order given, secrets included: for handing the
    /// settings to another client (partwise-group), never for printing.
    pub fn properties(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.props.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether librdkafka accepts every property name and value, without
    /// creating a client or connecting: the check for commands that do not
    /// run librdkafka but take the same `-X` properties.
    pub fn check_properties(&self) -> Result<()> {
        self.client_config(&[])
            .create_native_config()
            .map(|_| ())
            .map_err(|e| self.error("checking the properties", e))
    }

    /// `bootstrap.servers`, or `(none)` for messages.
    pub fn brokers(&self) -> &str {
        self.get("bootstrap.servers")
            .unwrap_or("(no bootstrap.servers)")
    }

    /// How long one operation may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The properties with every secret value replaced by [`REDACTED`]: the
    /// only form in which partwise prints them.
    pub fn redacted(&self) -> Vec<(String, String)> {
        self.props
            .iter()
            .map(|(k, v)| {
                let v = if is_secret(k) {
                    REDACTED.to_string()
                } else {
                    v.clone()
                };
                (k.clone(), v)
            })
            .collect()
    }

    /// `text` with every secret value of this connection replaced by
    /// [`REDACTED`]: librdkafka quotes property values in some errors.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (k, v) in &self.props {
            if is_secret(k) && v.len() >= MIN_SCRUBBED {
                out = out.replace(v.as_str(), REDACTED);
            }
        }
        out
    }

    /// The TLS and SASL settings of these properties as partwise-client
    /// reads them ([`partwise_client::Security::from_properties`]: the one
    /// reading of `security.protocol`, `ssl.*` and `sasl.*` for every
    /// request partwise makes without librdkafka), and the keys it did not
    /// use. A value that client cannot honour (a PKCS#12 keystore, GSSAPI)
    /// is an [`Error::Config`] naming the property.
    pub fn security(&self) -> Result<(partwise_client::Security, Vec<String>)> {
        partwise_client::Security::from_properties(self.properties()).map_err(|e| match e {
            partwise_client::Error::Config(m) => Error::Config(self.scrub(&m)),
            e => Error::Config(self.scrub(&e.to_string())),
        })
    }

    /// The same settings as partwise-client takes them, for the requests
    /// librdkafka does not make: the bootstrap brokers, TLS and SASL
    /// ([`Connection::security`]) and the timeout.
    pub fn client_target(&self) -> Result<partwise_client::blocking::Target> {
        Ok(partwise_client::blocking::Target {
            bootstrap: self
                .brokers()
                .split(',')
                .map(|b| b.trim().to_string())
                .filter(|b| !b.is_empty())
                .collect(),
            security: self.security()?.0,
            timeout: self.timeout,
        })
    }

    /// A partwise-client error as an [`Error`]: what was being done, and
    /// the client's error kept as the cause, printed in its words with this
    /// connection's secrets scrubbed (a server's words can echo a value).
    pub(crate) fn client_error(
        &self,
        doing: impl Into<String>,
        e: partwise_client::Error,
    ) -> Error {
        let text = self.scrub(&e.to_string());
        Error::Client {
            doing: self.scrub(&doing.into()),
            cause: Box::new(crate::error::ClientCause::new(e, text)),
        }
    }

    /// A librdkafka config: the user's properties, then `fixed` (partwise's
    /// own settings, which the user cannot override because they keep
    /// commands read-only).
    pub(crate) fn client_config(&self, fixed: &[(&str, &str)]) -> ClientConfig {
        self.client_config_over(&[], fixed)
    }

    /// As [`Connection::client_config`], with `defaults` first: partwise's
    /// choices for one kind of client, which the user's properties override.
    pub(crate) fn client_config_over(
        &self,
        defaults: &[(&str, &str)],
        fixed: &[(&str, &str)],
    ) -> ClientConfig {
        let mut c = ClientConfig::new();
        c.set("client.id", "partwise");
        for (k, v) in defaults {
            c.set(*k, *v);
        }
        for (k, v) in &self.props {
            c.set(k, v);
        }
        for (k, v) in fixed {
            c.set(*k, *v);
        }
        c
    }

    /// A librdkafka error as an [`Error`], secrets scrubbed, kept as its cause.
    pub(crate) fn error(&self, doing: impl Into<String>, e: rdkafka::error::KafkaError) -> Error {
        let text = e.to_string();
        self.error_as(doing, e, &text)
    }

    /// A librdkafka error code (an admin operation's per-topic result) as an
    /// [`Error`] with the code's own text, as [`Connection::error`] does.
    pub(crate) fn error_code(
        &self,
        doing: impl Into<String>,
        code: rdkafka::types::RDKafkaErrorCode,
    ) -> Error {
        self.error_as(
            doing,
            rdkafka::error::KafkaError::AdminOp(code),
            &code.to_string(),
        )
    }

    fn error_as(
        &self,
        doing: impl Into<String>,
        e: rdkafka::error::KafkaError,
        text: &str,
    ) -> Error {
        let reason = self.scrub(text);
        Error::Kafka {
            doing: self.scrub(&doing.into()),
            cause: Some(Box::new(crate::error::KafkaCause::new(e, reason.clone()))),
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// partwise-client's error stays the typed cause, its text scrubbed of
    /// the connection's secrets, with no source below it to print unscrubbed.
    #[test]
    fn a_client_error_is_kept_as_the_cause_and_scrubbed() {
        let mut c = Connection::new(Duration::from_secs(1));
        c.set_pair("sasl.password=hunter2-secret").unwrap();
        let e = c.client_error(
            "describing group g",
            partwise_client::Error::Config("the server said hunter2-secret".into()),
        );
        assert_eq!(
            e.to_string(),
            format!("describing group g: invalid configuration: the server said {REDACTED}")
        );
        let cause = std::error::Error::source(&e).expect("the client's error");
        let cause = cause
            .downcast_ref::<crate::ClientCause>()
            .expect("a ClientCause");
        assert!(matches!(cause.error(), partwise_client::Error::Config(_)));
        assert!(!cause.to_string().contains("hunter2"));
        assert!(std::error::Error::source(cause).is_none());
    }

    #[test]
    fn secrets_are_recognised() {
        for k in [
            "sasl.password",
            "ssl.key.password",
            "ssl.keystore.password",
            "sasl.oauthbearer.client.secret",
            "ssl.key.pem",
            "sasl.jaas.config",
            "SASL.PASSWORD",
        ] {
            assert!(is_secret(k), "{k}");
        }
        for k in [
            "bootstrap.servers",
            "sasl.username",
            "security.protocol",
            "ssl.ca.location",
            "SASL.Mechanism",
        ] {
            assert!(!is_secret(k), "{k}");
        }
        // Misspelt or unknown keys may hold anything: their values are not shown.
        for k in ["sasl.passwrd", "my.api.key", "sasl.usrname", "x"] {
            assert!(is_secret(k), "{k}");
        }
    }

    #[test]
    fn redacted_and_debug_hide_secrets() {
        let mut c = Connection::new(Duration::from_secs(1));
        c.bootstrap("h:1").unwrap();
        c.set_pair("sasl.password=hunter2").unwrap();
        c.set_pair("sasl.username=alice").unwrap();
        let r = c.redacted();
        assert!(r.contains(&("sasl.password".into(), REDACTED.into())));
        assert!(r.contains(&("sasl.username".into(), "alice".into())));
        assert!(!format!("{c:?}").contains("hunter2"));
        assert_eq!(
            c.scrub("bad value hunter2 here"),
            "bad value [redacted] here"
        );
    }

    #[test]
    fn pairs_and_files() {
        let mut c = Connection::new(Duration::from_secs(1));
        assert!(c
            .set_pair("nokey")
            .unwrap_err()
            .to_string()
            .contains("key=value"));
        assert!(c.set_pair("=v").is_err());
        c.set_pair("a=b=c").unwrap();
        assert_eq!(c.get("a"), Some("b=c"));
        let dir = std::env::temp_dir().join(format!("pwk-props-{}", std::process::id()));
        std::fs::write(
            &dir,
            "# comment\n\nsecurity.protocol = SASL_SSL\n!x\nbroken line\n",
        )
        .unwrap();
        let e = c.load_properties(&dir).unwrap_err().to_string();
        assert!(e.contains(":5: expected key=value"), "{e}");
        assert_eq!(c.get("security.protocol"), Some("SASL_SSL"));
        std::fs::remove_file(&dir).unwrap();
        assert!(c.load_properties(Path::new("/nonexistent/x")).is_err());
    }

    #[test]
    fn librdkafka_checks_names_and_values_without_echoing_secrets() {
        let mut c = Connection::new(Duration::from_secs(1));
        c.set_pair("security.protocol=SASL_SSL").unwrap();
        c.set_pair("sasl.mechanism=SCRAM-SHA-512").unwrap();
        c.check_properties().unwrap();
        c.set_pair("no.such.property=1").unwrap();
        let e = c.check_properties().unwrap_err().to_string();
        assert!(e.contains("no.such.property"), "{e}");
        let mut c = Connection::new(Duration::from_secs(1));
        c.set_pair("ssl.key.password=s3cr3t-value").unwrap();
        c.set_pair("security.protocol=nonsense").unwrap();
        let e = c.check_properties().unwrap_err().to_string();
        assert!(
            e.contains("security.protocol") && !e.contains("s3cr3t"),
            "{e}"
        );
    }

    #[test]
    fn later_values_win() {
        let mut c = Connection::new(Duration::from_secs(1));
        // A public key, so the value is shown (any other is redacted).
        c.set("client.id", "1").unwrap();
        c.set("client.id", "2").unwrap();
        assert_eq!(
            c.redacted(),
            vec![("client.id".to_string(), "2".to_string())]
        );
    }
}
