//! Atomic multi-key writes: one MULTI/EXEC on the primary that serves the
//! keys' one slot. Keys that do not share a slot are refused before anything
//! is sent ([`Error::CrossSlot`]); a server that refuses with `CROSSSLOT`
//! anyway (a command in the transaction touched a key it was not told about)
//! gets the same error, so a family write is never silently split.

use crate::error::{from_redis, Error};
use crate::node::{NodeAddr, NodeConn};
use crate::slots::SlotMap;
use partwise::redis::family::Family;
use partwise::redis::slot::key_slot;
use std::time::Duration;

/// The one slot of `keys`, or [`Error::CrossSlot`] listing each key's slot.
pub fn common_slot<K: AsRef<[u8]>>(keys: &[K]) -> Result<u16, Error> {
    let slots: Vec<u16> = keys.iter().map(|k| key_slot(k.as_ref())).collect();
    match slots.first() {
        None => Err(Error::CrossSlot { keys: Vec::new() }),
        Some(&first) if slots.iter().all(|&s| s == first) => Ok(first),
        Some(_) => Err(cross_slot(keys)),
    }
}

fn cross_slot<K: AsRef<[u8]>>(keys: &[K]) -> Error {
    Error::CrossSlot {
        keys: keys
            .iter()
            .map(|k| {
                let k = k.as_ref();
                (String::from_utf8_lossy(k).into_owned(), key_slot(k))
            })
            .collect(),
    }
}

/// One command of a [`Writer::exec`] transaction, in this crate's terms, so
/// that a caller names no type of the redis crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `EXISTS key...`: how many of the keys exist ([`Reply::Int`]).
    Exists(Vec<Vec<u8>>),
    /// `DEL key...`: how many were removed ([`Reply::Int`]).
    Del(Vec<Vec<u8>>),
    /// `HGET key field`: the field's value, or none ([`Reply::Value`]).
    HGet(Vec<u8>, String),
    /// `HGETALL key`: every field and value ([`Reply::Hash`]).
    HGetAll(Vec<u8>),
    /// `HSET key field value...`: the fields added ([`Reply::Int`]).
    HSet(Vec<u8>, Vec<(String, String)>),
}

/// The reply to one [`Command`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A count.
    Int(i64),
    /// A value, or none (a missing key or field).
    Value(Option<Vec<u8>>),
    /// A hash's fields and values, as the server lists them.
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
}

impl Reply {
    /// The count, if the reply is one.
    pub fn int(&self) -> Option<i64> {
        match self {
            Reply::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// The value, if the reply is a present one.
    pub fn value(&self) -> Option<&[u8]> {
        match self {
            Reply::Value(Some(v)) => Some(v),
            _ => None,
        }
    }

    /// The hash's fields and values as text (bytes that are not UTF-8 are
    /// replaced); empty for a reply that is no hash.
    pub fn hash_text(&self) -> std::collections::HashMap<String, String> {
        match self {
            Reply::Hash(pairs) => pairs
                .iter()
                .map(|(k, v)| {
                    (
                        String::from_utf8_lossy(k).into_owned(),
                        String::from_utf8_lossy(v).into_owned(),
                    )
                })
                .collect(),
            _ => std::collections::HashMap::new(),
        }
    }
}

impl Command {
    fn add_to(&self, pipe: &mut redis::Pipeline) {
        match self {
            Command::Exists(keys) => {
                pipe.cmd("EXISTS").arg(keys);
            }
            Command::Del(keys) => {
                pipe.cmd("DEL").arg(keys);
            }
            Command::HGet(key, field) => {
                pipe.cmd("HGET").arg(key).arg(field);
            }
            Command::HGetAll(key) => {
                pipe.cmd("HGETALL").arg(key);
            }
            Command::HSet(key, fields) => {
                let c = pipe.cmd("HSET").arg(key);
                for (f, v) in fields {
                    c.arg(f).arg(v);
                }
            }
        }
    }

    fn keys(&self) -> Vec<&[u8]> {
        match self {
            Command::Exists(keys) | Command::Del(keys) => keys.iter().map(Vec::as_slice).collect(),
            Command::HGet(key, _) | Command::HGetAll(key) | Command::HSet(key, _) => {
                vec![key.as_slice()]
            }
        }
    }

    /// The server's reply in this crate's terms, or what was unexpected.
    fn reply(&self, v: redis::Value) -> Result<Reply, String> {
        let bytes = |v: &redis::Value| match v {
            redis::Value::BulkString(b) => Some(b.clone()),
            redis::Value::SimpleString(s) => Some(s.clone().into_bytes()),
            _ => None,
        };
        match (self, &v) {
            (Command::Exists(_) | Command::Del(_) | Command::HSet(..), redis::Value::Int(n)) => {
                Ok(Reply::Int(*n))
            }
            (Command::HGet(..), redis::Value::Nil) => Ok(Reply::Value(None)),
            (Command::HGet(..), other) if bytes(other).is_some() => Ok(Reply::Value(bytes(other))),
            (Command::HGetAll(_), redis::Value::Array(items)) if items.len() % 2 == 0 => items
                .chunks(2)
                .map(|kv| Some((bytes(&kv[0])?, bytes(&kv[1])?)))
                .collect::<Option<Vec<_>>>()
                .map(Reply::Hash)
                .ok_or_else(|| format!("unexpected reply {v:?}")),
            (Command::HGetAll(_), redis::Value::Map(pairs)) => pairs
                .iter()
                .map(|(k, v)| Some((bytes(k)?, bytes(v)?)))
                .collect::<Option<Vec<_>>>()
                .map(Reply::Hash)
                .ok_or_else(|| format!("unexpected reply {v:?}")),
            _ => Err(format!("unexpected reply {v:?}")),
        }
    }
}

/// Writes related keys atomically on a live cluster.
///
/// ```no_run
/// use partwise_redis::{Family, Writer};
/// use std::time::Duration;
///
/// let mut w = Writer::connect(&["127.0.0.1:7100".parse()?], Duration::from_secs(2))?;
/// let family = Family::new(&["market:{%s}", "notif:{%s}"])?;
/// w.set_family(&family, b"BBCA", &[b"9150", b"above 9100"])?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Writer {
    seeds: Vec<NodeAddr>,
    timeout: Duration,
    map: SlotMap,
}

impl Writer {
    /// Reads the slot map from the first seed that answers.
    pub fn connect(seeds: &[NodeAddr], timeout: Duration) -> Result<Writer, Error> {
        Ok(Writer {
            seeds: seeds.to_vec(),
            timeout,
            map: SlotMap::fetch(seeds, timeout)?,
        })
    }

    /// The slot map in use.
    pub fn slot_map(&self) -> &SlotMap {
        &self.map
    }

    /// Runs the commands `build` adds to a MULTI/EXEC pipeline on the primary
    /// serving `keys`, which must share a slot; `build` must touch no other
    /// keys (the server refuses a transaction that does, and that refusal is
    /// [`Error::CrossSlot`] too). Returns EXEC's replies. When the slot has
    /// moved since the map was read, the map is read again and the
    /// transaction retried once; `build` is called once per attempt.
    pub fn transaction<K: AsRef<[u8]>>(
        &mut self,
        keys: &[K],
        build: impl Fn(&mut redis::Pipeline),
    ) -> Result<Vec<redis::Value>, Error> {
        let slot = common_slot(keys)?;
        let mut refreshed = false;
        loop {
            let node = match self.map.owner(slot) {
                Some(s) => s.primary.addr.clone(),
                None if !refreshed => {
                    self.refresh()?;
                    refreshed = true;
                    continue;
                }
                None => {
                    return Err(Error::ClusterDown {
                        node: self.map.seed.clone(),
                        reason: format!("no node serves slot {slot}"),
                        cause: None,
                    })
                }
            };
            let mut conn = NodeConn::open(&node, self.timeout)?;
            let mut pipe = redis::pipe();
            pipe.atomic();
            build(&mut pipe);
            match conn.query_pipe_raw(&pipe) {
                Ok(redis::Value::Array(replies)) => return Ok(replies),
                Ok(other) => {
                    return Err(Error::Server {
                        node,
                        command: "EXEC".to_string(),
                        reason: format!("unexpected reply {other:?}"),
                        cause: None,
                    })
                }
                Err(e) => {
                    let codes = server_codes(&e);
                    if codes.iter().any(|c| c == "CROSSSLOT") {
                        return Err(cross_slot(keys));
                    }
                    if !refreshed && codes.iter().any(|c| c == "MOVED" || c == "ASK") {
                        self.refresh()?;
                        refreshed = true;
                        continue;
                    }
                    return Err(from_redis(&node, "MULTI/EXEC", e));
                }
            }
        }
    }

    /// Runs `commands` in one MULTI/EXEC on the primary serving their keys,
    /// which must share a slot ([`Error::CrossSlot`] otherwise, before
    /// anything is sent), as [`Writer::transaction`] does; one reply per
    /// command, in order.
    pub fn exec(&mut self, commands: &[Command]) -> Result<Vec<Reply>, Error> {
        let keys: Vec<&[u8]> = commands.iter().flat_map(Command::keys).collect();
        let node = common_slot(&keys)
            .ok()
            .and_then(|s| self.map.owner(s))
            .map_or_else(|| self.map.seed.clone(), |s| s.primary.addr.clone());
        let replies = self.transaction(&keys, |pipe| {
            for c in commands {
                c.add_to(pipe);
            }
        })?;
        if replies.len() != commands.len() {
            return Err(Error::Server {
                node,
                command: "EXEC".to_string(),
                reason: format!("{} replies to {} commands", replies.len(), commands.len()),
                cause: None,
            });
        }
        commands
            .iter()
            .zip(replies)
            .map(|(c, v)| {
                c.reply(v).map_err(|reason| Error::Server {
                    node: node.clone(),
                    command: "EXEC".to_string(),
                    reason,
                    cause: None,
                })
            })
            .collect()
    }

    /// Sets every member of `family` for `logical` in one transaction:
    /// `values[i]` goes to the key of pattern `i`.
    pub fn set_family(
        &mut self,
        family: &Family,
        logical: &[u8],
        values: &[&[u8]],
    ) -> Result<(), Error> {
        if values.len() != family.patterns().len() {
            return Err(Error::Pattern {
                pattern: family
                    .patterns()
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                reason: format!(
                    "{} values for {} patterns",
                    values.len(),
                    family.patterns().len()
                ),
            });
        }
        let keys = family.keys(logical);
        self.transaction(&keys, |pipe| {
            for (k, v) in keys.iter().zip(values) {
                pipe.cmd("SET").arg(k).arg(*v).ignore();
            }
        })?;
        Ok(())
    }

    fn refresh(&mut self) -> Result<(), Error> {
        self.map = SlotMap::fetch(&self.seeds, self.timeout)?;
        Ok(())
    }
}

/// Every server error code in `e`: its own, and those of the commands of an
/// aborted transaction (a queued command refused with CROSSSLOT or MOVED
/// makes EXEC answer EXECABORT).
fn server_codes(e: &redis::RedisError) -> Vec<String> {
    let mut codes: Vec<String> = e.code().map(str::to_string).into_iter().collect();
    if let Some(errs) = e.clone().into_server_errors() {
        codes.extend(errs.iter().map(|(_, se)| se.code().to_string()));
    }
    // EXECABORT's own message names the first refusal's code.
    let text = e.to_string();
    for code in ["CROSSSLOT", "MOVED", "ASK"] {
        if text.contains(code) {
            codes.push(code.to_string());
        }
    }
    codes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each command is sent as the redis crate would have sent it, and each
    /// reply, RESP2 or RESP3, comes back in this crate's terms.
    #[test]
    fn commands_and_replies_in_the_crates_own_terms() {
        let mut pipe = redis::pipe();
        Command::HSet(
            b"m:{A}".to_vec(),
            vec![("seq".into(), "7".into()), ("run".into(), "r".into())],
        )
        .add_to(&mut pipe);
        Command::Exists(vec![b"m:{A}".to_vec(), b"n:{A}".to_vec()]).add_to(&mut pipe);
        let mut want = redis::pipe();
        want.cmd("HSET")
            .arg("m:{A}")
            .arg("seq")
            .arg(7)
            .arg("run")
            .arg("r");
        want.cmd("EXISTS").arg("m:{A}").arg("n:{A}");
        assert_eq!(pipe.get_packed_pipeline(), want.get_packed_pipeline());

        use redis::Value as V;
        let get = Command::HGet(b"k".to_vec(), "offset".into());
        assert_eq!(get.reply(V::Nil), Ok(Reply::Value(None)));
        assert_eq!(
            get.reply(V::BulkString(b"12".to_vec())),
            Ok(Reply::Value(Some(b"12".to_vec())))
        );
        let exists = Command::Exists(vec![b"k".to_vec()]);
        assert_eq!(exists.reply(V::Int(0)).unwrap().int(), Some(0));
        assert!(exists.reply(V::Nil).is_err());
        let all = Command::HGetAll(b"k".to_vec());
        let pairs = || vec![(b"seq".to_vec(), b"7".to_vec())];
        let resp2 = V::Array(vec![
            V::BulkString(b"seq".to_vec()),
            V::BulkString(b"7".to_vec()),
        ]);
        let resp3 = V::Map(vec![(
            V::BulkString(b"seq".to_vec()),
            V::BulkString(b"7".to_vec()),
        )]);
        assert_eq!(all.reply(resp2), Ok(Reply::Hash(pairs())));
        assert_eq!(all.reply(resp3), Ok(Reply::Hash(pairs())));
        assert_eq!(
            Reply::Hash(pairs())
                .hash_text()
                .get("seq")
                .map(String::as_str),
            Some("7")
        );
        assert!(all
            .reply(V::Array(vec![V::BulkString(b"odd".to_vec())]))
            .is_err());
    }

    #[test]
    fn common_slot_refuses_split_keys() {
        assert_eq!(
            common_slot(&["market:{BBCA}", "notif:{BBCA}"]).unwrap(),
            key_slot(b"market:{BBCA}")
        );
        let e = common_slot(&["market:BBCA", "notif:BBCA"]).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("CROSSSLOT"), "{msg}");
        assert!(msg.contains(&format!("market:BBCA (slot {})", key_slot(b"market:BBCA"))));
        assert!(common_slot::<&str>(&[]).is_err());
    }
}
