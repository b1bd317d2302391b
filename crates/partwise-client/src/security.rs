//! How a member reaches a secured listener: `security.protocol`, TLS
//! (rustls, PEM files) and SASL credentials, read from the same
//! librdkafka / Java property names the other `partwise kafka` commands take.
//!
//! Everything that can be checked without a broker is checked here, so a bad
//! property fails before any connection with a message naming it; what only
//! a broker can refuse (a certificate, a password) fails in [`crate::wire`]
//! naming the broker. No message or `{:?}` contains a password or key.

use crate::error::{Error, Result};
use crate::sasl::Mechanism;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::collections::BTreeMap;
use std::sync::Arc;

/// `security.protocol`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `plaintext`
    Plaintext,
    /// `ssl`: TLS.
    Ssl,
    /// `sasl_plaintext`: SASL without TLS.
    SaslPlaintext,
    /// `sasl_ssl`: SASL over TLS.
    SaslSsl,
}

impl Protocol {
    /// Whether connections are TLS.
    pub fn tls(self) -> bool {
        matches!(self, Protocol::Ssl | Protocol::SaslSsl)
    }
    /// Whether connections authenticate with SASL.
    pub fn sasl(self) -> bool {
        matches!(self, Protocol::SaslPlaintext | Protocol::SaslSsl)
    }
}

/// SASL credentials.
#[derive(Clone)]
pub struct SaslCredentials {
    /// The mechanism.
    pub mechanism: Mechanism,
    /// `sasl.username`.
    pub username: String,
    /// `sasl.password`.
    pub password: String,
}

impl std::fmt::Debug for SaslCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaslCredentials")
            .field("mechanism", &self.mechanism)
            .field("username", &self.username)
            .field("password", &"[redacted]")
            .finish()
    }
}

/// The TLS side of a connection.
#[derive(Clone)]
pub(crate) enum Tls {
    Ready(Arc<rustls::ClientConfig>),
    /// No CA was given and the system store had none: every handshake fails
    /// with this, naming the broker, as it would with an unknown CA.
    NoRoots(String),
}

/// How to connect: the protocol, the TLS configuration and the SASL
/// credentials. The default is plaintext.
#[derive(Clone)]
pub struct Security {
    protocol: Protocol,
    tls: Option<Tls>,
    sasl: Option<SaslCredentials>,
}

impl Default for Security {
    fn default() -> Security {
        Security {
            protocol: Protocol::Plaintext,
            tls: None,
            sasl: None,
        }
    }
}

impl std::fmt::Debug for Security {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Security")
            .field("protocol", &self.protocol)
            .field("tls", &self.tls.is_some())
            .field("sasl", &self.sasl)
            .finish()
    }
}

/// The properties this module reads, whatever the protocol.
const READ: &[&str] = &["security.protocol"];
/// Read when the protocol is TLS.
const READ_TLS: &[&str] = &[
    "ssl.ca.location",
    "ssl.ca.pem",
    "ssl.certificate.location",
    "ssl.certificate.pem",
    "ssl.key.location",
    "ssl.key.pem",
    "ssl.key.password",
    "ssl.endpoint.identification.algorithm",
    "enable.ssl.certificate.verification",
];
/// Read when the protocol is SASL.
const READ_SASL: &[&str] = &[
    "sasl.mechanism",
    "sasl.mechanisms",
    "sasl.username",
    "sasl.password",
];
/// Valid for librdkafka but changing what is trusted or who we are, in a way
/// this crate cannot do: refused rather than ignored, so a member never
/// connects less securely than the same properties would with librdkafka.
const CANNOT_HONOUR: &[(&str, &str)] = &[
    (
        "ssl.keystore.location",
        "PKCS#12 keystores are not supported by partwise-group; give ssl.certificate.location and ssl.key.location (PEM)",
    ),
    (
        "ssl.crl.location",
        "certificate revocation lists are not supported by partwise-group",
    ),
    (
        "ssl.engine.location",
        "OpenSSL engines are not supported by partwise-group",
    ),
    (
        "ssl.providers",
        "OpenSSL providers are not supported by partwise-group",
    ),
];

impl Security {
    /// Plaintext: no TLS, no SASL.
    pub fn plaintext() -> Security {
        Security::default()
    }

    /// The protocol.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The SASL credentials, for a SASL protocol.
    pub fn sasl(&self) -> Option<&SaslCredentials> {
        self.sasl.as_ref()
    }

    pub(crate) fn tls(&self) -> Option<&Tls> {
        self.tls.as_ref()
    }

    /// The security settings of librdkafka / Java client properties (a later
    /// value for a key replaces an earlier one), and the keys given that it
    /// did not use (other client settings, or SASL keys under an SSL
    /// protocol: librdkafka ignores those too), for the caller to mention.
    ///
    /// Honoured: `security.protocol` (plaintext, ssl, sasl_plaintext,
    /// sasl_ssl; any case), `ssl.ca.location` (a PEM file; unset or `probe`:
    /// the system's CA store) or `ssl.ca.pem`, `ssl.certificate.location` /
    /// `.pem` with `ssl.key.location` / `.pem` (mutual TLS, unencrypted PEM
    /// key), `ssl.endpoint.identification.algorithm` (`https`, the default,
    /// or `none`: the chain is still verified, the host name is not),
    /// `sasl.mechanism(s)` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512),
    /// `sasl.username`, `sasl.password`. A value it cannot honour (GSSAPI,
    /// OAUTHBEARER, a PKCS#12 keystore, an encrypted key, verification turned
    /// off) is an [`Error::Config`] naming the property.
    pub fn from_properties<'a>(
        props: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<(Security, Vec<String>)> {
        let mut p: BTreeMap<&str, &str> = BTreeMap::new();
        for (k, v) in props {
            // sasl.mechanism is librdkafka's alias of sasl.mechanisms.
            let k = if k == "sasl.mechanism" {
                "sasl.mechanisms"
            } else {
                k
            };
            p.insert(k, v);
        }
        let props = Props(p);
        let get = |k: &str| props.get(k);
        let protocol = match get("security.protocol")
            .unwrap_or("plaintext")
            .to_ascii_lowercase()
            .as_str()
        {
            "plaintext" => Protocol::Plaintext,
            "ssl" => Protocol::Ssl,
            "sasl_plaintext" => Protocol::SaslPlaintext,
            "sasl_ssl" => Protocol::SaslSsl,
            other => {
                return Err(Error::Config(format!(
                    "security.protocol: '{other}' is not plaintext, ssl, sasl_plaintext or sasl_ssl"
                )))
            }
        };
        let mut used: Vec<&str> = READ.to_vec();
        let tls = if protocol.tls() {
            used.extend(READ_TLS);
            for (k, why) in CANNOT_HONOUR {
                if get(k).is_some() {
                    return Err(Error::Config(format!("{k}: {why}")));
                }
            }
            Some(tls_config(&props)?)
        } else {
            None
        };
        let sasl = if protocol.sasl() {
            used.extend(READ_SASL);
            Some(sasl_credentials(&props.0)?)
        } else {
            None
        };
        let unused = props
            .0
            .keys()
            .filter(|k| !used.contains(k) && **k != "bootstrap.servers")
            .map(|k| k.to_string())
            .collect();
        Ok((
            Security {
                protocol,
                tls,
                sasl,
            },
            unused,
        ))
    }
}

/// The properties by key; `get` treats an empty value as unset.
struct Props<'a>(BTreeMap<&'a str, &'a str>);

impl<'a> Props<'a> {
    fn get(&self, k: &str) -> Option<&'a str> {
        self.0.get(k).map(|v| v.trim()).filter(|v| !v.is_empty())
    }
}

fn sasl_credentials(p: &BTreeMap<&str, &str>) -> Result<SaslCredentials> {
    let name = p
        .get("sasl.mechanisms")
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            Error::Config(
                "sasl.mechanism: not set (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; \
                 librdkafka's default GSSAPI is not supported by partwise-group)"
                    .into(),
            )
        })?;
    let mechanism = Mechanism::parse(name).ok_or_else(|| {
        Error::Config(format!(
            "sasl.mechanism: '{name}' is not supported by partwise-group (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)"
        ))
    })?;
    let username = p.get("sasl.username").copied().unwrap_or("");
    if username.is_empty() {
        return Err(Error::Config(format!(
            "sasl.username: not set (sasl.mechanism={} needs it)",
            mechanism.name()
        )));
    }
    let password = p.get("sasl.password").copied().ok_or_else(|| {
        Error::Config(format!(
            "sasl.password: not set (sasl.mechanism={} needs it)",
            mechanism.name()
        ))
    })?;
    Ok(SaslCredentials {
        mechanism,
        username: username.to_string(),
        password: password.to_string(),
    })
}

/// The bytes of a PEM property pair: the file at `location`, or the inline `pem`.
fn pem_bytes(p: &Props<'_>, location: &str, pem: &str) -> Result<Option<(Vec<u8>, String)>> {
    if let Some(text) = p.get(pem) {
        return Ok(Some((text.as_bytes().to_vec(), pem.to_string())));
    }
    let Some(path) = p.get(location) else {
        return Ok(None);
    };
    let what = format!("{location} {path}");
    if std::path::Path::new(path).is_dir() {
        return Err(Error::Config(format!(
            "{what}: a directory; give one PEM file"
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| Error::Config(format!("{what}: {e}")))?;
    Ok(Some((bytes, what)))
}

fn certificates(bytes: &[u8], what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(bytes)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::Config(format!("{what}: not PEM certificates: {e}")))?;
    if certs.is_empty() {
        return Err(Error::Config(format!(
            "{what}: no PEM certificate (-----BEGIN CERTIFICATE-----) in it"
        )));
    }
    Ok(certs)
}

fn tls_config(p: &Props<'_>) -> Result<Tls> {
    let get = |k: &str| p.get(k);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    if let Some(v) = get("enable.ssl.certificate.verification") {
        if !matches!(v.to_ascii_lowercase().as_str(), "true" | "1") {
            return Err(Error::Config(format!(
                "enable.ssl.certificate.verification: '{v}': turning verification off is not supported by partwise-group; give the broker's CA with ssl.ca.location"
            )));
        }
    }
    let verify_host = match get("ssl.endpoint.identification.algorithm")
        .unwrap_or("https")
        .to_ascii_lowercase()
        .as_str()
    {
        "https" => true,
        "none" => false,
        other => {
            return Err(Error::Config(format!(
                "ssl.endpoint.identification.algorithm: '{other}' is not https or none"
            )))
        }
    };
    let mut roots = RootCertStore::empty();
    let given = match get("ssl.ca.location") {
        Some("probe") if get("ssl.ca.pem").is_none() => None,
        _ => pem_bytes(p, "ssl.ca.location", "ssl.ca.pem")?,
    };
    match given {
        Some((bytes, what)) => {
            for c in certificates(&bytes, &what)? {
                roots
                    .add(c)
                    .map_err(|e| Error::Config(format!("{what}: not a usable CA: {e}")))?;
            }
        }
        None => {
            // As librdkafka with OpenSSL: the system's trust store.
            let native = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(native.certs);
            if roots.is_empty() {
                return Ok(Tls::NoRoots(
                    "no CA to verify it with: ssl.ca.location is not set and the system has no CA certificates"
                        .into(),
                ));
            }
        }
    }
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| Error::Config(format!("ssl.ca.location: {e}")))?;
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Config(format!("TLS: {e}")))?;
    let builder = if verify_host {
        builder.with_webpki_verifier(webpki)
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(ChainOnly(webpki)))
    };
    let cert = pem_bytes(p, "ssl.certificate.location", "ssl.certificate.pem")?;
    let key = pem_bytes(p, "ssl.key.location", "ssl.key.pem")?;
    let config = match (cert, key) {
        (None, None) => builder.with_no_client_auth(),
        (Some(_), None) => return Err(Error::Config(
            "ssl.key.location: not set, but ssl.certificate.location is (mutual TLS needs both)"
                .into(),
        )),
        (None, Some(_)) => return Err(Error::Config(
            "ssl.certificate.location: not set, but ssl.key.location is (mutual TLS needs both)"
                .into(),
        )),
        (Some((cert, cert_what)), Some((key, key_what))) => {
            let chain = certificates(&cert, &cert_what)?;
            // The key's bytes are a secret: messages name where it came from only.
            if key.windows(b"ENCRYPTED".len()).any(|w| w == b"ENCRYPTED") {
                return Err(Error::Config(format!(
                    "ssl.key.password: {key_what} is an encrypted key, which partwise-group does not read; \
                     decrypt it (openssl pkey -in KEY -out KEY.plain)"
                )));
            }
            let key = PrivateKeyDer::from_pem_slice(&key).map_err(|_| {
                Error::Config(format!(
                    "{key_what}: no PEM private key (PKCS#8, PKCS#1 or SEC1) in it"
                ))
            })?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| Error::Config(format!("{key_what}: {e}")))?
        }
    };
    Ok(Tls::Ready(Arc::new(config)))
}

/// `ssl.endpoint.identification.algorithm=none`: the chain must still lead
/// to a trusted CA; only a certificate issued for another name is accepted.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            r => r,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<(Security, Vec<String>)> {
        Security::from_properties(pairs.iter().copied())
    }

    fn config_error(pairs: &[(&str, &str)]) -> String {
        match parse(pairs) {
            Err(Error::Config(e)) => e,
            other => panic!("{pairs:?}: {other:?}"),
        }
    }

    #[test]
    fn protocols_and_mechanisms() {
        let (s, unused) = parse(&[]).unwrap();
        assert_eq!(s.protocol(), Protocol::Plaintext);
        assert!(unused.is_empty());
        let (s, unused) = parse(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "scram-sha-512"),
            ("sasl.username", "u"),
            ("sasl.password", "hunter2"),
            ("client.id", "x"),
        ])
        .unwrap();
        assert_eq!(s.protocol(), Protocol::SaslPlaintext);
        assert_eq!(s.sasl().unwrap().mechanism, Mechanism::ScramSha512);
        assert_eq!(unused, vec!["client.id".to_string()]);
        assert!(!format!("{s:?}").contains("hunter2"));
        // SASL keys under plaintext are not used, as with librdkafka.
        let (_, unused) = parse(&[("sasl.username", "u")]).unwrap();
        assert_eq!(unused, vec!["sasl.username".to_string()]);
    }

    #[test]
    fn values_it_cannot_honour_name_the_property() {
        for (pairs, named) in [
            (vec![("security.protocol", "tls")], "security.protocol"),
            (
                vec![("security.protocol", "sasl_plaintext")],
                "sasl.mechanism",
            ),
            (
                vec![
                    ("security.protocol", "sasl_ssl"),
                    ("sasl.mechanism", "GSSAPI"),
                ],
                "sasl.mechanism: 'GSSAPI'",
            ),
            (
                vec![
                    ("security.protocol", "sasl_plaintext"),
                    ("sasl.mechanisms", "PLAIN"),
                    ("sasl.password", "secret-pw-1"),
                ],
                "sasl.username",
            ),
            (
                vec![
                    ("security.protocol", "ssl"),
                    ("ssl.keystore.location", "k.p12"),
                ],
                "ssl.keystore.location",
            ),
            (
                vec![
                    ("security.protocol", "ssl"),
                    ("enable.ssl.certificate.verification", "false"),
                ],
                "enable.ssl.certificate.verification",
            ),
            (
                vec![
                    ("security.protocol", "ssl"),
                    ("ssl.endpoint.identification.algorithm", "ldap"),
                ],
                "ssl.endpoint.identification.algorithm",
            ),
            (
                vec![
                    ("security.protocol", "ssl"),
                    ("ssl.ca.location", "/nonexistent/ca.pem"),
                ],
                "ssl.ca.location /nonexistent/ca.pem",
            ),
            (
                vec![
                    ("security.protocol", "ssl"),
                    ("ssl.ca.pem", "not a certificate"),
                ],
                "ssl.ca.pem: no PEM certificate",
            ),
            (
                vec![
                    ("security.protocol", "ssl"),
                    ("ssl.key.pem", "secret-key-2"),
                ],
                "ssl.certificate.location: not set",
            ),
        ] {
            let e = config_error(&pairs);
            assert!(e.contains(named), "{pairs:?}: {e}");
            assert!(
                !e.contains("secret-pw-1") && !e.contains("secret-key-2"),
                "{e}"
            );
        }
    }
}
