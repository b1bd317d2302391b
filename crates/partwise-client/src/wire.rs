//! One broker connection: the socket, correlation ids, and the API versions
//! agreed with the broker.
//!
//! This module owns the byte stream to a single broker; the bytes on it
//! (frames, headers, the size limit) are [`partwise_wire::frame`]'s. Every
//! request goes through [`Connection::send`], which picks the highest
//! version that both this crate and the broker support (from the
//! ApiVersions exchange made on connect) and checks that the response
//! answers it.
//!
//! On a secured listener the stream is TLS (rustls) and, before anything
//! else but ApiVersions, the connection authenticates: SaslHandshake v1 and
//! SaslAuthenticate carrying PLAIN or SCRAM's messages. Every connection does
//! this, so bootstrap, coordinator, leader and reconnected connections are
//! all authenticated alike.

use crate::error::{Error, Result};
use crate::sasl::{self, Mechanism, ScramClient, ScramHash};
use crate::security::{SaslCredentials, Security, Tls};
use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, SaslAuthenticateRequest, SaslHandshakeRequest,
};
use kafka_protocol::protocol::{Request, StrBytes};
use partwise_wire::frame;
pub use partwise_wire::records::whole_batches;
use std::collections::HashMap;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// A byte stream to a broker: TCP, or TLS over TCP.
trait Stream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Stream for T {}

/// The highest version of each API this crate speaks (0 for any other). Later versions change
/// the shape of what we send (topic ids instead of names in Fetch v13+,
/// OffsetFetch v8+ batching groups), so we stop below them. OffsetCommit v9
/// is v8's bytes; the coordinator requires it of consumer-protocol members.
fn our_max(key: i16) -> i16 {
    match ApiKey::try_from(key) {
        Ok(ApiKey::Produce) => 9,
        Ok(ApiKey::Fetch) => 12,
        Ok(ApiKey::ListOffsets) => 7,
        Ok(ApiKey::Metadata) => 12,
        Ok(ApiKey::OffsetCommit) => 9,
        Ok(ApiKey::OffsetFetch) => 7,
        Ok(ApiKey::FindCoordinator) => 3,
        Ok(ApiKey::JoinGroup) => 9,
        Ok(ApiKey::Heartbeat) => 4,
        Ok(ApiKey::LeaveGroup) => 5,
        Ok(ApiKey::SyncGroup) => 5,
        // v4: the members' group.instance.id; v5 only adds the authorized
        // operations, which nothing here reads.
        Ok(ApiKey::DescribeGroups) => 4,
        // v1: the member id is the client's (KIP-1082).
        Ok(ApiKey::ConsumerGroupHeartbeat) => 1,
        Ok(ApiKey::CreateTopics) => 7,
        // v5: each group's type (KIP-848); v4 its state.
        Ok(ApiKey::ListGroups) => 5,
        // v1 is the oldest Kafka 4 takes; v4 only adds tagged fields.
        Ok(ApiKey::DescribeConfigs) => 4,
        // v1: the SASL tokens travel in SaslAuthenticate, as Kafka frames.
        Ok(ApiKey::SaslHandshake) => 1,
        // v2 only adds tagged fields; the session lifetime is in v1+.
        Ok(ApiKey::SaslAuthenticate) => 2,
        _ => 0,
    }
}

/// A connection to one broker.
pub struct Connection {
    stream: Box<dyn Stream>,
    addr: String,
    client_id: StrBytes,
    next_correlation: i32,
    versions: HashMap<i16, (i16, i16)>,
    /// Set while a request is on the wire. A future dropped mid-request (a
    /// cancelled `select!` branch) leaves the stream at an unknown point, so
    /// such a connection is never reused.
    in_flight: bool,
}

impl Connection {
    /// Connects to `addr` (`host:port`) in plaintext and negotiates API versions.
    pub async fn connect(addr: &str, client_id: &str, timeout: Duration) -> Result<Connection> {
        Connection::connect_with(addr, client_id, timeout, &Security::plaintext()).await
    }

    /// Connects to `addr` (`host:port`) as `security` says: TCP, the TLS
    /// handshake, ApiVersions, then SASL authentication. Each step is bounded
    /// by `timeout`.
    pub async fn connect_with(
        addr: &str,
        client_id: &str,
        timeout: Duration,
        security: &Security,
    ) -> Result<Connection> {
        let tcp = tokio::time::timeout(timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| Error::Connect {
                addr: addr.to_string(),
                reason: format!("no answer within {} ms", timeout.as_millis()),
            })?
            .map_err(|e| Error::Connect {
                addr: addr.to_string(),
                reason: e.to_string(),
            })?;
        let _ = tcp.set_nodelay(true);
        let stream: Box<dyn Stream> = match security.tls() {
            None => Box::new(tcp),
            Some(tls) => Box::new(tls_handshake(addr, tls, tcp, timeout).await?),
        };
        let mut conn = Connection {
            stream,
            addr: addr.to_string(),
            client_id: StrBytes::from_string(client_id.to_string()),
            next_correlation: 1,
            versions: HashMap::new(),
            in_flight: false,
        };
        // v0 is answered by every broker; later versions only add fields we do
        // not read. Brokers answer it before authentication (KIP-35).
        let resp: ApiVersionsResponse = conn
            .exchange(&ApiVersionsRequest::default(), 0, timeout)
            .await?;
        if resp.error_code != 0 {
            return Err(Error::protocol(&conn.addr, "ApiVersions", resp.error_code));
        }
        conn.versions = resp
            .api_keys
            .iter()
            .map(|k| (k.api_key, (k.min_version, k.max_version)))
            .collect();
        if let Some(creds) = security.sasl() {
            conn.authenticate(creds, timeout).await?;
        }
        Ok(conn)
    }

    /// SaslHandshake, then the mechanism's messages in SaslAuthenticate.
    async fn authenticate(&mut self, creds: &SaslCredentials, timeout: Duration) -> Result<()> {
        let mech = creds.mechanism;
        let req =
            SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mech.name()));
        let (resp, version) = self.send(&req, timeout).await?;
        if resp.error_code != 0 {
            let offered: Vec<&str> = resp.mechanisms.iter().map(|m| m.as_str()).collect();
            return Err(Error::Auth {
                addr: self.addr.clone(),
                reason: format!(
                    "this listener does not offer sasl.mechanism {} (it offers: {}; {})",
                    mech.name(),
                    if offered.is_empty() {
                        "none".to_string()
                    } else {
                        offered.join(", ")
                    },
                    crate::error::code_name(resp.error_code)
                ),
            });
        }
        if version < 1 {
            return Err(Error::Unsupported {
                addr: self.addr.clone(),
                what: "SaslHandshake v1 (SASL tokens in SaslAuthenticate)".into(),
            });
        }
        let who = format!("{} as user '{}'", mech.name(), creds.username);
        match mech {
            Mechanism::Plain => {
                self.sasl_step(
                    &sasl::plain_message(&creds.username, &creds.password),
                    &who,
                    timeout,
                )
                .await?;
            }
            Mechanism::ScramSha256 | Mechanism::ScramSha512 => {
                let hash = if mech == Mechanism::ScramSha256 {
                    ScramHash::Sha256
                } else {
                    ScramHash::Sha512
                };
                let scram = ScramClient::new(hash, &creds.username, &creds.password)
                    .map_err(|e| self.auth_error(&who, &e))?;
                let server_first = self.sasl_step(&scram.client_first(), &who, timeout).await?;
                let (client_final, proof) = scram
                    .client_final(&server_first)
                    .map_err(|e| self.auth_error(&who, &e))?;
                let server_final = self.sasl_step(&client_final, &who, timeout).await?;
                proof
                    .verify(&server_final)
                    .map_err(|e| self.auth_error(&who, &e))?;
            }
        }
        // No re-authentication (KIP-368): a broker with
        // connections.max.reauth.ms closes the connection when the session
        // lifetime ends, and the next request reconnects and authenticates anew.
        Ok(())
    }

    /// One SaslAuthenticate round trip: our token out, the broker's back.
    async fn sasl_step(&mut self, token: &[u8], who: &str, timeout: Duration) -> Result<Bytes> {
        let req = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::copy_from_slice(token));
        // A connection lost here stays a transport error (a broker restarting);
        // Kafka answers refused credentials with an error code, below.
        let (resp, _) = self.send(&req, timeout).await?;
        if resp.error_code != 0 {
            let msg = resp
                .error_message
                .as_ref()
                .map(|m| m.as_str().to_string())
                .unwrap_or_default();
            return Err(self.auth_error(
                who,
                &format!("{} {msg}", crate::error::code_name(resp.error_code)),
            ));
        }
        Ok(resp.auth_bytes)
    }

    fn auth_error(&self, who: &str, reason: &str) -> Error {
        Error::Auth {
            addr: self.addr.clone(),
            reason: format!("{who}: {}", reason.trim()),
        }
    }

    /// The address this connection was opened to.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Whether this connection can still carry requests.
    pub fn usable(&self) -> bool {
        !self.in_flight
    }

    /// The version of request `R` both sides support: the highest one.
    pub fn version<R: Request>(&self) -> Result<i16> {
        let name = api_name(R::KEY);
        let (bmin, bmax) = *self
            .versions
            .get(&R::KEY)
            .ok_or_else(|| Error::Unsupported {
                addr: self.addr.clone(),
                what: format!("{name}: the broker does not offer this API"),
            })?;
        let lo = bmin.max(R::VERSIONS.min);
        let hi = bmax.min(R::VERSIONS.max).min(our_max(R::KEY));
        if lo > hi {
            return Err(Error::Unsupported {
                addr: self.addr.clone(),
                what: format!("{name}: broker versions {bmin}..{bmax}, ours {lo}..{hi}"),
            });
        }
        Ok(hi)
    }

    /// Sends `req` at the agreed version and waits up to `timeout` for its
    /// response.
    pub async fn send<R: Request>(
        &mut self,
        req: &R,
        timeout: Duration,
    ) -> Result<(R::Response, i16)> {
        let version = self.version::<R>()?;
        let start = std::time::Instant::now();
        let resp = self.exchange(req, version, timeout).await;
        if trace() {
            eprintln!(
                "partwise-group: {} v{version} to {}: {} ms{}",
                api_name(R::KEY),
                self.addr,
                start.elapsed().as_millis(),
                resp.as_ref()
                    .err()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            );
        }
        Ok((resp?, version))
    }

    /// Writes `req` at the agreed version without waiting for its response,
    /// which [`receive`](Connection::receive) reads later: the broker works on
    /// the request meanwhile (a consumer's next fetch while it hands out the
    /// last one). Until then the connection carries nothing else.
    pub async fn submit<R: Request>(&mut self, req: &R, timeout: Duration) -> Result<Submitted<R>> {
        let version = self.version::<R>()?;
        if self.in_flight {
            return Err(self.io_error("a previous request was abandoned mid-flight"));
        }
        let (frame, correlation) = self.frame(req, version)?;
        self.in_flight = true;
        let stream = &mut self.stream;
        let write = async move {
            stream.write_all(&frame).await?;
            stream.flush().await
        };
        match tokio::time::timeout(timeout, write).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(self.io_error(&e.to_string())),
            Err(_) => return Err(self.io_error("request not written in time")),
        }
        Ok(Submitted {
            correlation,
            version,
            started: std::time::Instant::now(),
            _request: std::marker::PhantomData,
        })
    }

    /// The response to a [`submit`](Connection::submit)ted request.
    pub async fn receive<R: Request>(
        &mut self,
        sub: Submitted<R>,
        timeout: Duration,
    ) -> Result<(R::Response, i16)> {
        let body = match tokio::time::timeout(timeout, self.read_frame()).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(self.io_error(&format!(
                    "{} got no answer within {} ms",
                    api_name(R::KEY),
                    timeout.as_millis()
                )))
            }
        };
        let resp = self.finish::<R>(body, sub.version, sub.correlation);
        if trace() {
            eprintln!(
                "partwise-group: {} v{} to {} (pipelined): {} ms",
                api_name(R::KEY),
                sub.version,
                self.addr,
                sub.started.elapsed().as_millis()
            );
        }
        Ok((resp?, sub.version))
    }

    /// The versions (lowest, highest) the broker offers of API `key`, as
    /// its ApiVersions answer said; `None` when it does not offer the API.
    pub fn offered(&self, key: i16) -> Option<(i16, i16)> {
        self.versions.get(&key).copied()
    }

    /// Sends a request kafka-protocol does not type: `body`, encoded by
    /// partwise-wire, as API `key` at `version` behind a request header of
    /// `headers.0`; returns the response body past its header (of
    /// `headers.1`), checked to answer this request.
    pub async fn send_raw(
        &mut self,
        key: i16,
        version: i16,
        headers: (i16, i16),
        body: &[u8],
        timeout: Duration,
    ) -> Result<Bytes> {
        let name = api_name(key);
        if self.in_flight {
            return Err(self.io_error("a previous request was abandoned mid-flight"));
        }
        let correlation = self.next_correlation;
        self.next_correlation = self.next_correlation.wrapping_add(1);
        let buf = frame::encode_raw_request(
            key,
            version,
            headers.0,
            correlation,
            Some(self.client_id.clone()),
            body,
        )?;
        self.in_flight = true;
        let mut resp = match tokio::time::timeout(timeout, self.round_trip(&buf)).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(self.io_error(&format!(
                    "{name} got no answer within {} ms",
                    timeout.as_millis()
                )))
            }
        };
        self.in_flight = false;
        match frame::decode_raw_response(&mut resp, headers.1, correlation, &name) {
            Ok(b) => Ok(b),
            Err(e) if e.is_stream() => {
                self.in_flight = true;
                Err(self.io_error(&e.to_string()))
            }
            Err(e) => Err(Error::Response {
                addr: self.addr.clone(),
                source: e,
            }),
        }
    }

    fn frame<R: Request>(&mut self, req: &R, version: i16) -> Result<(BytesMut, i32)> {
        let correlation = self.next_correlation;
        self.next_correlation = self.next_correlation.wrapping_add(1);
        let buf = frame::encode_request(
            api_key::<R>()?,
            version,
            correlation,
            Some(self.client_id.clone()),
            req,
        )?;
        Ok((buf, correlation))
    }

    /// Checks the header of a response body read off the wire and decodes it.
    fn finish<R: Request>(
        &mut self,
        mut body: Bytes,
        version: i16,
        correlation: i32,
    ) -> Result<R::Response> {
        self.in_flight = false;
        match frame::decode_response(&mut body, api_key::<R>()?, version, correlation) {
            Ok(resp) => Ok(resp),
            // An answer to another request: the stream is out of step.
            Err(e) if e.is_stream() => {
                self.in_flight = true;
                Err(self.io_error(&e.to_string()))
            }
            Err(e) => Err(Error::Response {
                addr: self.addr.clone(),
                source: e,
            }),
        }
    }

    async fn exchange<R: Request>(
        &mut self,
        req: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response> {
        if self.in_flight {
            return Err(self.io_error("a previous request was abandoned mid-flight"));
        }
        let (buf, correlation) = self.frame(req, version)?;
        self.in_flight = true;
        let body = match tokio::time::timeout(timeout, self.round_trip(&buf)).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(self.io_error(&format!(
                    "{} got no answer within {} ms",
                    api_name(R::KEY),
                    timeout.as_millis()
                )))
            }
        };
        self.finish::<R>(body, version, correlation)
    }

    async fn round_trip(&mut self, frame: &[u8]) -> Result<Bytes> {
        // TLS may hold written bytes until flushed; TCP's flush is a no-op.
        let written = match self.stream.write_all(frame).await {
            Ok(()) => self.stream.flush().await,
            Err(e) => Err(e),
        };
        written.map_err(|e| self.io_error(&e.to_string()))?;
        self.read_frame().await
    }

    async fn read_frame(&mut self) -> Result<Bytes> {
        let mut len = [0u8; 4];
        self.stream
            .read_exact(&mut len)
            .await
            .map_err(|e| self.io_error(&e.to_string()))?;
        let len = frame::body_len(len).map_err(|e| self.io_error(&e.to_string()))?;
        // Read into spare capacity rather than a zeroed buffer: a Fetch
        // response is megabytes, and zeroing it first cost as much as
        // checking its batches' CRCs. The limit keeps a read from taking
        // the next frame's bytes into spare room past `len`.
        let mut body = BytesMut::with_capacity(len);
        while body.len() < len {
            let want = len - body.len();
            let n = self
                .stream
                .read_buf(&mut (&mut body).limit(want))
                .await
                .map_err(|e| self.io_error(&e.to_string()))?;
            if n == 0 {
                return Err(self.io_error("early eof"));
            }
        }
        Ok(body.freeze())
    }

    fn io_error(&self, reason: &str) -> Error {
        Error::Io {
            addr: self.addr.clone(),
            reason: reason.to_string(),
        }
    }
}

/// The TLS handshake with `addr` over `tcp`. A certificate or alert failure
/// is [`Error::Tls`] (it would fail the same way again); a connection lost
/// mid-handshake is [`Error::Io`], retried like any lost connection.
async fn tls_handshake(
    addr: &str,
    tls: &Tls,
    tcp: TcpStream,
    timeout: Duration,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let config = match tls {
        Tls::Ready(c) => c.clone(),
        Tls::NoRoots(why) => {
            return Err(Error::Tls {
                addr: addr.to_string(),
                reason: why.clone(),
            })
        }
    };
    let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let name =
        rustls::pki_types::ServerName::try_from(host.to_string()).map_err(|e| Error::Tls {
            addr: addr.to_string(),
            reason: format!("'{host}' is not a host name or IP address: {e}"),
        })?;
    let handshake = tokio_rustls::TlsConnector::from(config).connect(name, tcp);
    match tokio::time::timeout(timeout, handshake).await {
        Err(_) => Err(Error::Io {
            addr: addr.to_string(),
            reason: format!("TLS handshake not done within {} ms", timeout.as_millis()),
        }),
        Ok(Ok(s)) => Ok(s),
        Ok(Err(e)) => {
            let tls_error = e
                .get_ref()
                .and_then(|i| i.downcast_ref::<rustls::Error>())
                .map(|t| {
                    use rustls::CertificateError as C;
                    let hint = match t {
                        rustls::Error::InvalidCertificate(
                            C::NotValidForName | C::NotValidForNameContext { .. },
                        ) => " (ssl.endpoint.identification.algorithm=none skips the host name check)",
                        rustls::Error::InvalidCertificate(_) => {
                            " (is the broker's CA given with ssl.ca.location?)"
                        }
                        _ => "",
                    };
                    format!("{t}{hint}")
                });
            match tls_error {
                Some(reason) => Err(Error::Tls {
                    addr: addr.to_string(),
                    reason,
                }),
                None => Err(Error::Io {
                    addr: addr.to_string(),
                    reason: format!("during the TLS handshake: {e}"),
                }),
            }
        }
    }
}

/// A request written by [`Connection::submit`] whose response is still to be read.
#[must_use = "the response must be read before the connection carries anything else"]
pub struct Submitted<R> {
    correlation: i32,
    version: i16,
    started: std::time::Instant,
    _request: std::marker::PhantomData<fn() -> R>,
}

/// Whether PARTWISE_GROUP_TRACE is set: then every request's API, broker and
/// round-trip time go to stderr, which is how a stuck rebalance is diagnosed.
fn trace() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("PARTWISE_GROUP_TRACE").is_some())
}

/// `R`'s API key as kafka-protocol types it.
fn api_key<R: Request>() -> Result<ApiKey> {
    ApiKey::try_from(R::KEY).map_err(|()| Error::Unsupported {
        addr: String::new(),
        what: format!("api {}", R::KEY),
    })
}

/// The API's name, for messages.
pub fn api_name(key: i16) -> String {
    match ApiKey::try_from(key) {
        Ok(k) => format!("{k:?}"),
        Err(_) if key == partwise_wire::streams::API_KEY => "StreamsGroupDescribe".to_string(),
        Err(_) => format!("api {key}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::pem::PemObject;

    /// Runs the openssl command line in `dir`: the test's certificates come
    /// from OpenSSL, not from the code under test.
    fn openssl(dir: &std::path::Path, args: &[&str]) {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl (scripts/ensure kafka installs it)");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A CA, a server certificate for `other.example` only (not 127.0.0.1),
    /// a client certificate, and the client key also encrypted.
    fn test_pki() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "pwg-tls-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        let mut ca = vec!["req", "-x509", "-days", "2", "-subj", "/CN=pwg test CA"];
        ca.extend(ec);
        ca.extend(["-keyout", "ca.key", "-out", "ca.pem"]);
        openssl(&dir, &ca);
        for (name, san, eku) in [
            ("server", "DNS:other.example", "serverAuth"),
            ("client", "DNS:client.example", "clientAuth"),
        ] {
            let (key, csr, pem, ext) = (
                format!("{name}.key"),
                format!("{name}.csr"),
                format!("{name}.pem"),
                format!("{name}.ext"),
            );
            let mut req = vec!["req", "-subj", "/CN=pwg"];
            req.extend(ec);
            req.extend(["-keyout", &key, "-out", &csr]);
            openssl(&dir, &req);
            std::fs::write(
                dir.join(&ext),
                format!("subjectAltName={san}\nextendedKeyUsage={eku}\n"),
            )
            .unwrap();
            openssl(
                &dir,
                &[
                    "x509",
                    "-req",
                    "-in",
                    &csr,
                    "-CA",
                    "ca.pem",
                    "-CAkey",
                    "ca.key",
                    "-CAcreateserial",
                    "-days",
                    "2",
                    "-extfile",
                    &ext,
                    "-out",
                    &pem,
                ],
            );
        }
        openssl(
            &dir,
            &[
                "pkcs8",
                "-topk8",
                "-in",
                "client.key",
                "-v2",
                "aes-256-cbc",
                "-passout",
                "pass:keypass",
                "-out",
                "client.enc.key",
            ],
        );
        dir
    }

    /// A TLS server on loopback that requires a client certificate from the
    /// test CA; it reports the client certificate it saw, or its error.
    async fn mtls_server(
        dir: &std::path::Path,
    ) -> (
        String,
        tokio::task::JoinHandle<std::result::Result<Vec<u8>, String>>,
    ) {
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_file(dir.join("ca.pem")).unwrap())
            .unwrap();
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            roots.into(),
            provider.clone(),
        )
        .build()
        .unwrap();
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_client_cert_verifier(verifier)
            .with_single_cert(
                vec![CertificateDer::from_pem_file(dir.join("server.pem")).unwrap()],
                PrivateKeyDer::from_pem_file(dir.join("server.key")).unwrap(),
            )
            .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
        let task = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let tls = acceptor.accept(tcp).await.map_err(|e| e.to_string())?;
            let seen = tls.get_ref().1.peer_certificates().map(|c| c[0].to_vec());
            seen.ok_or_else(|| "no client certificate".to_string())
        });
        (addr, task)
    }

    fn tls_of(props: &[(&str, String)]) -> Security {
        Security::from_properties(props.iter().map(|(k, v)| (*k, v.as_str())))
            .unwrap()
            .0
    }

    #[tokio::test]
    async fn host_names_are_checked_unless_told_not_to_and_client_certs_are_sent() {
        let dir = test_pki();
        let path = |f: &str| dir.join(f).to_str().unwrap().to_string();
        let base = vec![
            ("security.protocol", "SSL".to_string()),
            ("ssl.ca.location", path("ca.pem")),
            ("ssl.certificate.location", path("client.pem")),
            ("ssl.key.location", path("client.key")),
        ];
        let timeout = Duration::from_secs(5);

        // https (the default): a certificate for other.example does not do for 127.0.0.1.
        let (addr, _server) = mtls_server(&dir).await;
        let tcp = TcpStream::connect(&addr).await.unwrap();
        let sec = tls_of(&base);
        match tls_handshake(&addr, sec.tls().unwrap(), tcp, timeout).await {
            Err(Error::Tls { addr: a, reason }) => {
                assert_eq!(a, addr);
                assert!(reason.contains("not valid for name"), "{reason}");
                assert!(reason.contains("identification.algorithm=none"), "{reason}");
            }
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("a certificate for another name was accepted"),
        }

        // none: the chain is verified, the name is not; the server gets our certificate.
        let (addr, server) = mtls_server(&dir).await;
        let tcp = TcpStream::connect(&addr).await.unwrap();
        let mut none = base.clone();
        none.push(("ssl.endpoint.identification.algorithm", "none".into()));
        let sec = tls_of(&none);
        let mut stream = tls_handshake(&addr, sec.tls().unwrap(), tcp, timeout)
            .await
            .unwrap();
        // TLS 1.3 sends the client certificate after the client's side is done.
        stream.write_all(b"x").await.unwrap();
        stream.flush().await.unwrap();
        let seen = server.await.unwrap().unwrap();
        let ours =
            rustls::pki_types::CertificateDer::from_pem_file(dir.join("client.pem")).unwrap();
        assert_eq!(seen, ours.to_vec());

        // none still checks the chain: another CA's certificate is refused.
        let (addr, _server) = mtls_server(&dir).await;
        let tcp = TcpStream::connect(&addr).await.unwrap();
        let mut other_ca = none.clone();
        other_ca[1].1 = path("client.pem");
        let sec = tls_of(&other_ca);
        match tls_handshake(&addr, sec.tls().unwrap(), tcp, timeout).await {
            Err(Error::Tls { reason, .. }) => assert!(reason.contains("certificate"), "{reason}"),
            other => panic!("{:?}", other.map(|_| ())),
        }

        // Without a client certificate the server refuses.
        let (addr, server) = mtls_server(&dir).await;
        let tcp = TcpStream::connect(&addr).await.unwrap();
        let sec = tls_of(
            &none[..2]
                .iter()
                .cloned()
                .chain([none[4].clone()])
                .collect::<Vec<_>>(),
        );
        if let Ok(mut s) = tls_handshake(&addr, sec.tls().unwrap(), tcp, timeout).await {
            let _ = s.write_all(b"x").await;
            let _ = s.flush().await;
        }
        assert!(server.await.unwrap().is_err());

        // An encrypted key is refused naming ssl.key.password, never showing it.
        let mut enc = base.clone();
        enc[3].1 = path("client.enc.key");
        enc.push(("ssl.key.password", "keypass".into()));
        match Security::from_properties(enc.iter().map(|(k, v)| (*k, v.as_str()))) {
            Err(Error::Config(e)) => {
                assert!(
                    e.contains("ssl.key.password") && !e.contains("keypass"),
                    "{e}"
                )
            }
            other => panic!("{:?}", other.map(|_| ())),
        }
        // A certificate file given as the key names ssl.key.location.
        let mut wrong = base.clone();
        wrong[3].1 = path("client.pem");
        match Security::from_properties(wrong.iter().map(|(k, v)| (*k, v.as_str()))) {
            Err(Error::Config(e)) => assert!(e.contains("ssl.key.location"), "{e}"),
            other => panic!("{:?}", other.map(|_| ())),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
