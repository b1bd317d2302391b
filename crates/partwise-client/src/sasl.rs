//! The client side of the SASL mechanisms a Kafka listener offers: PLAIN
//! (RFC 4616) and SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677).
//!
//! This module only builds and checks messages; [`crate::wire`] carries them
//! in SaslHandshake / SaslAuthenticate. Every parser here takes bytes from the
//! network and must fail with a message, never panic; messages never contain
//! the password.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use ring::{digest, hmac, pbkdf2};
use std::num::NonZeroU32;

/// A SASL mechanism this crate can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// `PLAIN`: the password goes to the broker as is (use it over TLS).
    Plain,
    /// `SCRAM-SHA-256`.
    ScramSha256,
    /// `SCRAM-SHA-512`.
    ScramSha512,
}

impl Mechanism {
    /// The name sent in SaslHandshake.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }

    /// The mechanism called `name` (case-insensitive), if this crate runs it.
    pub fn parse(name: &str) -> Option<Mechanism> {
        match name.trim().to_ascii_uppercase().as_str() {
            "PLAIN" => Some(Mechanism::Plain),
            "SCRAM-SHA-256" => Some(Mechanism::ScramSha256),
            "SCRAM-SHA-512" => Some(Mechanism::ScramSha512),
            _ => None,
        }
    }
}

/// PLAIN's single message: no authorization id, then the user and password.
pub fn plain_message(username: &str, password: &str) -> Vec<u8> {
    let mut m = Vec::with_capacity(2 + username.len() + password.len());
    m.push(0);
    m.extend_from_slice(username.as_bytes());
    m.push(0);
    m.extend_from_slice(password.as_bytes());
    m
}

/// The hash of a SCRAM mechanism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScramHash {
    /// SHA-256.
    Sha256,
    /// SHA-512.
    Sha512,
}

impl ScramHash {
    fn hmac(self) -> hmac::Algorithm {
        match self {
            ScramHash::Sha256 => hmac::HMAC_SHA256,
            ScramHash::Sha512 => hmac::HMAC_SHA512,
        }
    }
    fn pbkdf2(self) -> pbkdf2::Algorithm {
        match self {
            ScramHash::Sha256 => pbkdf2::PBKDF2_HMAC_SHA256,
            ScramHash::Sha512 => pbkdf2::PBKDF2_HMAC_SHA512,
        }
    }
    fn digest(self) -> &'static digest::Algorithm {
        match self {
            ScramHash::Sha256 => &digest::SHA256,
            ScramHash::Sha512 => &digest::SHA512,
        }
    }
    fn len(self) -> usize {
        match self {
            ScramHash::Sha256 => 32,
            ScramHash::Sha512 => 64,
        }
    }
}

/// Kafka's brokers refuse fewer iterations than this (ScramMechanism's
/// minimum), so a server-first asking for fewer is not a Kafka broker's.
pub const MIN_ITERATIONS: u32 = 4096;
/// An upper bound, so a hostile server cannot make us spin for minutes
/// (Kafka's own maximum is 16384).
pub const MAX_ITERATIONS: u32 = 1 << 20;

/// A SCRAM exchange in progress, from the client's side.
pub struct ScramClient {
    hash: ScramHash,
    password: String,
    nonce: String,
    first_bare: String,
}

// The password stays out of `{:?}`.
impl std::fmt::Debug for ScramClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScramClient")
            .field("hash", &self.hash)
            .field("first_bare", &self.first_bare)
            .finish_non_exhaustive()
    }
}

/// What the server must prove in its final message.
#[derive(Debug)]
pub struct ServerProof {
    signature: Vec<u8>,
}

impl ScramClient {
    /// A new exchange with a fresh random nonce.
    pub fn new(hash: ScramHash, username: &str, password: &str) -> Result<ScramClient, String> {
        use ring::rand::SecureRandom;
        let mut raw = [0u8; 24];
        ring::rand::SystemRandom::new()
            .fill(&mut raw)
            .map_err(|_| "no random numbers for the SCRAM nonce".to_string())?;
        // Standard base64 never contains ',', the one character a nonce must not.
        Ok(ScramClient::with_nonce(
            hash,
            username,
            password,
            &B64.encode(raw),
        ))
    }

    /// A new exchange with the given client nonce (tests use the RFC's).
    pub fn with_nonce(hash: ScramHash, username: &str, password: &str, nonce: &str) -> ScramClient {
        // RFC 5802 5.1: '=' and ',' in the name are escaped. The name is not
        // SASLprep'd, and neither is the password below: Kafka's own client
        // and broker use the raw strings, and the broker's stored credential
        // was derived from those.
        let name = username.replace('=', "=3D").replace(',', "=2C");
        ScramClient {
            hash,
            password: password.to_string(),
            nonce: nonce.to_string(),
            first_bare: format!("n={name},r={nonce}"),
        }
    }

    /// client-first-message: no channel binding, no authorization id.
    pub fn client_first(&self) -> Vec<u8> {
        format!("n,,{}", self.first_bare).into_bytes()
    }

    /// client-final-message for the server-first-message `server_first`,
    /// and the signature the server's final message must carry.
    pub fn client_final(&self, server_first: &[u8]) -> Result<(Vec<u8>, ServerProof), String> {
        let sf = ServerFirst::parse(server_first)?;
        if !sf.nonce.starts_with(&self.nonce) || sf.nonce.len() <= self.nonce.len() {
            return Err("server-first: the server nonce does not extend ours".into());
        }
        let server_first = std::str::from_utf8(server_first).expect("checked by parse");
        let h = self.hash;
        let mut salted = vec![0u8; h.len()];
        pbkdf2::derive(
            h.pbkdf2(),
            sf.iterations,
            &sf.salt,
            self.password.as_bytes(),
            &mut salted,
        );
        let salted = hmac::Key::new(h.hmac(), &salted);
        let client_key = hmac::sign(&salted, b"Client Key");
        let stored_key = digest::digest(h.digest(), client_key.as_ref());
        // "biws" is base64("n,,"), the gs2 header of client_first.
        let without_proof = format!("c=biws,r={}", sf.nonce);
        let auth_message = format!("{},{server_first},{without_proof}", self.first_bare);
        let client_sig = hmac::sign(
            &hmac::Key::new(h.hmac(), stored_key.as_ref()),
            auth_message.as_bytes(),
        );
        let proof: Vec<u8> = client_key
            .as_ref()
            .iter()
            .zip(client_sig.as_ref())
            .map(|(a, b)| a ^ b)
            .collect();
        let server_key = hmac::sign(&salted, b"Server Key");
        let server_sig = hmac::sign(
            &hmac::Key::new(h.hmac(), server_key.as_ref()),
            auth_message.as_bytes(),
        );
        Ok((
            format!("{without_proof},p={}", B64.encode(proof)).into_bytes(),
            ServerProof {
                signature: server_sig.as_ref().to_vec(),
            },
        ))
    }
}

impl ServerProof {
    /// Checks server-final-message: `v=` the expected signature, so the
    /// broker proved it knows the credential; `e=` is the server's refusal.
    /// A plain comparison is enough: the expected value changes with every
    /// nonce, so its timing tells an impostor nothing reusable.
    pub fn verify(&self, server_final: &[u8]) -> Result<(), String> {
        let text =
            std::str::from_utf8(server_final).map_err(|_| "server-final: not UTF-8".to_string())?;
        let first = text.split(',').next().unwrap_or("");
        if let Some(e) = first.strip_prefix("e=") {
            return Err(format!("the server refused: {}", printable(e)));
        }
        let v = first
            .strip_prefix("v=")
            .ok_or_else(|| "server-final: no v= attribute".to_string())?;
        let sig = B64
            .decode(v)
            .map_err(|_| "server-final: v= is not base64".to_string())?;
        if sig != self.signature {
            return Err("server-final: wrong server signature (the broker did not prove it knows the credential)".into());
        }
        Ok(())
    }
}

/// A parsed server-first-message.
#[derive(Debug, PartialEq, Eq)]
pub struct ServerFirst {
    /// The combined nonce.
    pub nonce: String,
    /// The salt, decoded.
    pub salt: Vec<u8>,
    /// The iteration count.
    pub iterations: NonZeroU32,
}

impl ServerFirst {
    /// Parses `r=NONCE,s=SALT,i=N[,extensions]`.
    pub fn parse(msg: &[u8]) -> Result<ServerFirst, String> {
        let text = std::str::from_utf8(msg).map_err(|_| "server-first: not UTF-8".to_string())?;
        let mut parts = text.split(',');
        if text.starts_with("m=") {
            return Err("server-first: a mandatory extension this client does not know".into());
        }
        if let Some(e) = text.strip_prefix("e=") {
            return Err(format!("the server refused: {}", printable(e)));
        }
        let mut attr = |name: &str| {
            parts
                .next()
                .and_then(|p| p.strip_prefix(name))
                .ok_or_else(|| format!("server-first: no {name} attribute where expected"))
        };
        let nonce = attr("r=")?;
        let salt = attr("s=")?;
        let iterations = attr("i=")?;
        if nonce.is_empty() || !nonce.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
            return Err("server-first: the nonce is not printable".into());
        }
        let salt = B64
            .decode(salt)
            .map_err(|_| "server-first: the salt is not base64".to_string())?;
        if salt.is_empty() {
            return Err("server-first: empty salt".into());
        }
        let iterations: u32 = iterations
            .parse()
            .map_err(|_| "server-first: the iteration count is not a number".to_string())?;
        if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
            return Err(format!(
                "server-first: {iterations} iterations, outside {MIN_ITERATIONS}..={MAX_ITERATIONS}"
            ));
        }
        Ok(ServerFirst {
            nonce: nonce.to_string(),
            salt,
            iterations: NonZeroU32::new(iterations).expect("at least MIN_ITERATIONS"),
        })
    }
}

/// Server text for a message, cut short and without control characters.
fn printable(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // RFC 7677 section 3, "SCRAM-SHA-256 and SCRAM-SHA-256-PLUS SASL
    // Mechanisms": the example exchange for user "user", password "pencil".
    const RFC7677_NONCE: &str = "rOprNGfwEbeRWgbNEkqO";
    const RFC7677_CLIENT_FIRST: &str = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
    const RFC7677_SERVER_FIRST: &str =
        "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
    const RFC7677_CLIENT_FINAL: &str = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    const RFC7677_SERVER_FINAL: &str = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

    #[test]
    fn rfc7677_exchange() {
        let c = ScramClient::with_nonce(ScramHash::Sha256, "user", "pencil", RFC7677_NONCE);
        assert_eq!(c.client_first(), RFC7677_CLIENT_FIRST.as_bytes());
        let (fin, proof) = c.client_final(RFC7677_SERVER_FIRST.as_bytes()).unwrap();
        assert_eq!(std::str::from_utf8(&fin).unwrap(), RFC7677_CLIENT_FINAL);
        proof.verify(RFC7677_SERVER_FINAL.as_bytes()).unwrap();
    }

    #[test]
    fn a_wrong_server_signature_is_refused() {
        let c = ScramClient::with_nonce(ScramHash::Sha256, "user", "pencil", RFC7677_NONCE);
        let (_, proof) = c.client_final(RFC7677_SERVER_FIRST.as_bytes()).unwrap();
        // One bit of the RFC's signature flipped ('6' -> '7').
        let e = proof
            .verify(b"v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap_err();
        assert!(e.contains("wrong server signature"), "{e}");
        let e = proof.verify(b"e=invalid-proof").unwrap_err();
        assert!(e.contains("invalid-proof"), "{e}");
        // A different password gives a different proof, and the RFC's
        // server signature no longer verifies.
        let c = ScramClient::with_nonce(ScramHash::Sha256, "user", "pencil2", RFC7677_NONCE);
        let (fin, proof) = c.client_final(RFC7677_SERVER_FIRST.as_bytes()).unwrap();
        assert_ne!(std::str::from_utf8(&fin).unwrap(), RFC7677_CLIENT_FINAL);
        assert!(proof.verify(RFC7677_SERVER_FINAL.as_bytes()).is_err());
    }

    #[test]
    fn server_first_is_checked() {
        let c = ScramClient::with_nonce(ScramHash::Sha512, "user", "pencil", RFC7677_NONCE);
        for (msg, why) in [
            (
                "r=otherNonce,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
                "does not extend",
            ),
            (
                "r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
                "does not extend",
            ),
            (
                "r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=100",
                "iterations",
            ),
            ("r=rOprNGfwEbeRWgbNEkqOx,s=***,i=4096", "base64"),
            ("r=rOprNGfwEbeRWgbNEkqOx,i=4096", "s="),
            (
                "m=ext,r=rOprNGfwEbeRWgbNEkqOx,s=W22Z,i=4096",
                "mandatory extension",
            ),
            ("e=unknown-user", "unknown-user"),
        ] {
            let e = c.client_final(msg.as_bytes()).unwrap_err();
            assert!(e.contains(why), "{msg}: {e}");
        }
    }

    #[test]
    fn names_are_escaped_and_the_password_stays_out_of_debug() {
        let c = ScramClient::with_nonce(ScramHash::Sha512, "a=b,c", "hunter2", "n0nce");
        assert_eq!(c.client_first(), b"n,,n=a=3Db=2Cc,r=n0nce");
        assert!(!format!("{c:?}").contains("hunter2"));
        assert_eq!(plain_message("alice", "pw"), b"\0alice\0pw");
    }

    #[test]
    fn random_nonces_differ_and_are_comma_free() {
        let a = ScramClient::new(ScramHash::Sha256, "u", "p").unwrap();
        let b = ScramClient::new(ScramHash::Sha256, "u", "p").unwrap();
        assert_ne!(a.nonce, b.nonce);
        assert!(!a.nonce.contains(',') && a.nonce.len() >= 32);
    }

    proptest! {
        // Whatever a broker (or anything listening on its port) sends, the
        // SCRAM parsers answer Ok or Err and never panic.
        #[test]
        fn parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let c = ScramClient::with_nonce(ScramHash::Sha256, "user", "pencil", "abc");
            let _ = ServerFirst::parse(&bytes);
            let _ = c.client_final(&bytes);
            let (_, proof) = c.client_final(b"r=abcdef,s=c2FsdA==,i=4096").unwrap();
            let _ = proof.verify(&bytes);
        }

        #[test]
        fn structured_server_firsts_never_panic(
            nonce in "[ -~]{0,12}",
            salt in "[A-Za-z0-9+/=*]{0,12}",
            iters in "[0-9-]{0,4}",
            tail in "[ -~]{0,12}",
        ) {
            let c = ScramClient::with_nonce(ScramHash::Sha512, "user", "pencil", "abc");
            let msg = format!("r=abc{nonce},s={salt},i={iters}{tail}");
            let _ = c.client_final(msg.as_bytes());
        }
    }
}
