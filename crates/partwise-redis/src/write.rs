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
