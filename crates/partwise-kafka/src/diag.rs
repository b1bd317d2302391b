//! What librdkafka said while a command waited for an answer.
//!
//! librdkafka reports a refused SASL login, a mechanism the broker does not
//! enable, or a failed TLS handshake only through its error callback, which
//! rdkafka forwards to the `log` facade; the operation itself just times out.
//! Without this, a wrong password reads as "is it up?". [`install`] records
//! the last error librdkafka reported so that [`crate::cluster`]'s timeout
//! message can name it. Binaries call it once; a library user with a logger
//! of its own keeps it and loses only this detail.

use std::sync::Mutex;

static LAST: Mutex<Option<String>> = Mutex::new(None);

struct Recorder;

impl log::Log for Recorder {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::Level::Error
    }

    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            if let Ok(mut last) = LAST.lock() {
                *last = Some(r.args().to_string());
            }
        }
    }

    fn flush(&self) {}
}

static RECORDER: Recorder = Recorder;

/// Records librdkafka's errors from now on (a no-op when the process already
/// has a logger).
pub fn install() {
    if log::set_logger(&RECORDER).is_ok() {
        log::set_max_level(log::LevelFilter::Error);
    }
}

/// The last error librdkafka reported, if any.
pub(crate) fn last_error() -> Option<String> {
    LAST.lock().ok().and_then(|l| l.clone())
}

/// Whether librdkafka's `message` says the broker refused the connection's
/// security settings (credentials, mechanism, TLS) rather than not answering.
pub(crate) fn is_security_refusal(message: &str) -> bool {
    // Broker names carry the protocol (`sasl_plaintext://h:1/bootstrap`,
    // `[thrd:ssl://...]`): only the words around them say what happened.
    let words: String = message
        .split_whitespace()
        .filter(|w| !w.contains("://"))
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase();
    [
        "authentication",
        "sasl",
        "mechanism",
        "ssl",
        "tls",
        "certificate",
        "handshake",
    ]
    .iter()
    .any(|w| words.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_told_from_silence() {
        assert!(is_security_refusal(
            "librdkafka: Authentication (Local: Authentication failure): sasl_plaintext://h:1/bootstrap: SASL authentication error: Authentication failed"
        ));
        assert!(is_security_refusal(
            "SASL handshake failed (start (-4)): SASL mechanism SCRAM-SHA-256 not supported by broker"
        ));
        assert!(!is_security_refusal(
            "librdkafka: Global error: BrokerTransportFailure (Local: Broker transport failure): 127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused"
        ));
        // A secured listener that is not there: its name says SASL, the
        // failure is a refused connection.
        assert!(!is_security_refusal(
            "librdkafka: FAIL [thrd:sasl_plaintext://127.0.0.1:45095/bootstrap]: sasl_plaintext://127.0.0.1:45095/bootstrap: Connect to ipv4#127.0.0.1:45095 failed: Connection refused (after 0ms in state CONNECT)"
        ));
    }
}
