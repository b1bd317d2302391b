//! Node addresses (`HOST:PORT`) and plain, timed connections to one node.
//!
//! Every command partwise sends goes to one node it chose from the slot map,
//! on a connection whose connect, read and write all give up after the
//! timeout: a frozen or unreachable node turns into [`Error::Unreachable`]
//! naming it, never a hang.

use crate::error::{from_redis, Error};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A node's address.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeAddr {
    /// Host name or IP (IPv6 without brackets).
    pub host: String,
    /// TCP port.
    pub port: u16,
}

impl NodeAddr {
    /// An address from its parts.
    pub fn new(host: impl Into<String>, port: u16) -> NodeAddr {
        NodeAddr {
            host: host.into(),
            port,
        }
    }
}

impl fmt::Display for NodeAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl FromStr for NodeAddr {
    type Err = Error;

    /// Parses `HOST:PORT`, `[IPv6]:PORT`; a `redis://` prefix is allowed.
    fn from_str(s: &str) -> Result<NodeAddr, Error> {
        let err = |reason: &str| Error::Address {
            input: s.to_string(),
            reason: reason.to_string(),
        };
        let t = s.trim();
        let t = t.strip_prefix("redis://").unwrap_or(t);
        let t = t.strip_suffix('/').unwrap_or(t);
        let (host, port) = if let Some(rest) = t.strip_prefix('[') {
            let (h, p) = rest.split_once("]:").ok_or_else(|| err("no port"))?;
            (h, p)
        } else {
            t.rsplit_once(':').ok_or_else(|| err("no port"))?
        };
        if host.is_empty() {
            return Err(err("no host"));
        }
        if host.contains(':') && !t.starts_with('[') {
            return Err(err("write an IPv6 host in brackets: [::1]:7000"));
        }
        let port: u16 = port
            .parse()
            .map_err(|_| err("the port is not a number from 1 to 65535"))?;
        if port == 0 {
            return Err(err("the port is not a number from 1 to 65535"));
        }
        Ok(NodeAddr::new(host, port))
    }
}

/// A connection to one node; every operation is bounded by the timeout.
pub struct NodeConn {
    addr: NodeAddr,
    conn: redis::Connection,
}

impl NodeConn {
    /// Connects to `addr`, giving up after `timeout` for the connect and for
    /// every later reply.
    pub fn open(addr: &NodeAddr, timeout: Duration) -> Result<NodeConn, Error> {
        let bad = |e: redis::RedisError| Error::Address {
            input: addr.to_string(),
            reason: e.to_string(),
        };
        // No CLIENT SETINFO on connect: redis-rs pipelines it as two
        // commands and waits out the timeout for each, so a frozen node
        // would cost two timeouts before the first real command.
        let info = redis::IntoConnectionInfo::into_connection_info((addr.host.clone(), addr.port))
            .map_err(bad)?
            .set_redis_settings(redis::RedisConnectionInfo::default().set_skip_set_lib_name());
        let client = redis::Client::open(info).map_err(bad)?;
        let conn = client
            .get_connection_with_timeout(timeout)
            .map_err(|e| from_redis(addr, "connect", e))?;
        // The connect timeout only covers the handshake; later replies need
        // their own bound, or a frozen node would hang us forever.
        conn.set_read_timeout(Some(timeout))
            .and_then(|()| conn.set_write_timeout(Some(timeout)))
            .map_err(|e| from_redis(addr, "connect", e))?;
        Ok(NodeConn {
            addr: addr.clone(),
            conn,
        })
    }

    /// The node's address.
    pub fn addr(&self) -> &NodeAddr {
        &self.addr
    }

    /// Runs one command; `what` names it in errors.
    pub fn query<T: redis::FromRedisValue>(
        &mut self,
        cmd: &redis::Cmd,
        what: &str,
    ) -> Result<T, Error> {
        cmd.query(&mut self.conn)
            .map_err(|e| from_redis(&self.addr, what, e))
    }

    /// Runs a pipeline (or a MULTI/EXEC transaction when it is atomic).
    pub fn query_pipe<T: redis::FromRedisValue>(
        &mut self,
        pipe: &redis::Pipeline,
        what: &str,
    ) -> Result<T, Error> {
        pipe.query(&mut self.conn)
            .map_err(|e| from_redis(&self.addr, what, e))
    }

    /// Sends every command of a plain (not atomic) pipeline at once and reads
    /// one reply per command, stopping at the first reply that does not come.
    /// redis-rs' own pipeline reads on after a timeout, so a node that froze
    /// mid-batch would cost one timeout per command instead of one.
    /// Server error replies come back as [`redis::Value::ServerError`].
    pub fn query_batch(
        &mut self,
        pipe: &redis::Pipeline,
        what: &str,
    ) -> Result<Vec<redis::Value>, Error> {
        self.conn
            .send_packed_command(&pipe.get_packed_pipeline())
            .map_err(|e| from_redis(&self.addr, what, e))?;
        (0..pipe.len())
            .map(|_| {
                self.conn
                    .recv_response()
                    .map_err(|e| from_redis(&self.addr, what, e))
            })
            .collect()
    }

    /// Runs a pipeline, returning the raw redis-rs error so that the caller
    /// can look at server error codes (CROSSSLOT, MOVED) itself.
    pub(crate) fn query_pipe_raw(
        &mut self,
        pipe: &redis::Pipeline,
    ) -> redis::RedisResult<redis::Value> {
        pipe.query(&mut self.conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_addresses() {
        assert_eq!(
            "127.0.0.1:7100".parse::<NodeAddr>().unwrap(),
            NodeAddr::new("127.0.0.1", 7100)
        );
        assert_eq!(
            "redis://localhost:7000/".parse::<NodeAddr>().unwrap(),
            NodeAddr::new("localhost", 7000)
        );
        let v6 = "[::1]:7000".parse::<NodeAddr>().unwrap();
        assert_eq!(v6, NodeAddr::new("::1", 7000));
        assert_eq!(v6.to_string(), "[::1]:7000");
        for bad in [
            "localhost",
            ":7000",
            "h:0",
            "h:65536",
            "h:x",
            "::1:7000",
            "",
        ] {
            let e = bad.parse::<NodeAddr>().unwrap_err();
            assert!(matches!(e, Error::Address { .. }), "{bad}: {e}");
            assert!(e.to_string().contains("HOST:PORT"), "{e}");
        }
    }
}
