//! The module's calls, each a request's bytes in and an answer's bytes out
//! (layouts in [`crate::codec`]'s terms), or an error message.

use crate::codec::{put_bytes, put_i32, put_partitions, put_strs, put_u32, Reader};
use bytes::Bytes;
use partwise::assign::Assignor;
use partwise::{PartitionCount, Partitioner, Placement};
use partwise_wire::consumer::{decode_unit_groups, Assignment, Subscription};
use partwise_wire::leader::{leader_sync_assignments_around, JoinedMember, UnreadableMember};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

/// Members read by [`read_members`], by handle, until [`assign`] (or
/// [`release_members`]) takes them.
type Read = (Vec<JoinedMember>, Vec<UnreadableMember>);

thread_local! {
    /// The leader decodes each subscription once, though it needs the topics
    /// (to fetch their partition counts, which takes a wait in which another
    /// consumer of the process may lead its own group) before it assigns.
    static MEMBERS: RefCell<(u32, HashMap<u32, Read>)> = RefCell::new((0, HashMap::new()));
}

/// The members of a JoinGroup response, read once and kept for [`assign`]
/// (`partwise_wire::leader::read_members`: a member whose subscription does
/// not decode is set aside, never fails the others).
///
/// Request: `u32` members, each its id (string), instance id (optional
/// string) and subscription (bytes, consumer protocol, any version).
/// Answer: the handle of the members read (`u32`, for [`assign`]), then
/// per member in order: `u8` 0 and its topics (`u32` count, strings), or
/// `u8` 1 and why its subscription does not decode (string).
pub fn read_members(request: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let mut r = Reader::new(request);
    let n = r.count("members", 9)?;
    out.extend_from_slice(&[0; 4]);
    let mut readable = Vec::with_capacity(n);
    let mut unreadable = Vec::new();
    for _ in 0..n {
        let member_id = r.str("member id")?.to_string();
        let instance_id = r.opt_str("instance id")?.map(String::from);
        let metadata = Bytes::copy_from_slice(r.bytes("member metadata")?);
        // One member at a time, so the answer keeps the request's order.
        let (ok, bad) = partwise_wire::leader::read_members([(member_id, instance_id, metadata)]);
        if let Some(m) = ok.into_iter().next() {
            out.push(0);
            put_strs(out, &m.subscription.topics);
            readable.push(m);
        } else if let Some(m) = bad.into_iter().next() {
            out.push(1);
            put_bytes(out, m.reason.as_bytes());
            unreadable.push(m);
        }
    }
    let handle = MEMBERS.with(|k| {
        let mut k = k.borrow_mut();
        k.0 = k.0.wrapping_add(1).max(1);
        let handle = k.0;
        k.1.insert(handle, (readable, unreadable));
        handle
    });
    out[..4].copy_from_slice(&handle.to_le_bytes());
    Ok(())
}

fn take_members(handle: u32) -> Result<Read, String> {
    MEMBERS
        .with(|k| k.borrow_mut().1.remove(&handle))
        .ok_or_else(|| format!("no members read with handle {handle}"))
}

/// Forgets the members of handle (the request: `u32`) when the leader will
/// not assign them. Answer: nothing.
pub fn release_members(request: &[u8], _out: &mut Vec<u8>) -> Result<(), String> {
    let handle = Reader::new(request).u32("handle")?;
    MEMBERS.with(|k| k.borrow_mut().1.remove(&handle));
    Ok(())
}

/// The leader's `copartitioned` assignment of the members [`read_members`]
/// read (and forgets them): what the partwise runtime's leader sends in SyncGroup
/// (`leader_sync_assignments_around`: a member whose subscription does not
/// decode gets nothing but the co-partition groups).
///
/// Request: the handle (`u32`), then `u32` topics, each its name (string)
/// and partition count (`i32`). Answer: `u32` members, each its id (string)
/// and assignment (bytes): the readable members in request order, then the
/// others.
pub fn assign(request: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let mut r = Reader::new(request);
    let handle = r.u32("handle")?;
    let t = r.count("topics", 8)?;
    let mut counts = BTreeMap::new();
    for _ in 0..t {
        let name = r.str("topic")?.to_string();
        counts.insert(name, r.i32("partition count")?);
    }
    let (readable, unreadable) = take_members(handle)?;
    let assignments =
        leader_sync_assignments_around(Assignor::Copartitioned, &readable, &unreadable, &counts)
            .map_err(|e| e.to_string())?;
    let size: usize = assignments.iter().map(|(m, b)| 8 + m.len() + b.len()).sum();
    out.reserve(4 + size);
    put_u32(out, assignments.len());
    for (member, bytes) in &assignments {
        put_bytes(out, member.as_bytes());
        put_bytes(out, bytes);
    }
    Ok(())
}

/// A member's subscription bytes (consumer protocol v3, as the Rust runtime
/// and the Java client send).
///
/// Request: topics (`u32` count, strings), owned partitions (`u32` count,
/// each a topic string and an `i32` partition), generation (`i32`, -1 when
/// unknown). Answer: the bytes.
pub fn encode_subscription(request: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let mut r = Reader::new(request);
    let subscription = Subscription {
        topics: r.strs("topics")?,
        owned: r.partitions("owned partitions")?,
        generation: r.i32("generation")?,
        user_data: None,
    };
    let bytes = subscription.encode().map_err(|e| e.to_string())?;
    out.extend_from_slice(&bytes);
    Ok(())
}

fn subscription(request: &[u8]) -> Result<Subscription, String> {
    Subscription::decode(Bytes::copy_from_slice(request)).map_err(|e| format!("subscription: {e}"))
}

/// The topics of one member's subscription bytes (the whole request, any
/// version). Answer: `u32` count, strings.
pub fn subscription_topics(request: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    put_strs(out, &subscription(request)?.topics);
    Ok(())
}

/// Subscription bytes (the whole request, any version), decoded. Answer:
/// topics (`u32` count, strings), owned partitions (`u32` count, topic
/// string and `i32` each), generation (`i32`).
pub fn decode_subscription(request: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let s = subscription(request)?;
    put_strs(out, &s.topics);
    put_partitions(out, &s.owned);
    put_i32(out, s.generation);
    Ok(())
}

/// Assignment bytes (the whole request, any version; empty is no
/// assignment), decoded. Answer: partitions (`u32` count, topic string and
/// `i32` each), then a `u8` 1 and the co-partition groups (`u32` count,
/// each a list of strings) when a partwise leader wrote them, else 0.
pub fn decode_assignment(request: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let (partitions, groups) = if request.is_empty() {
        (Vec::new(), None)
    } else {
        let a = Assignment::decode(Bytes::copy_from_slice(request))
            .map_err(|e| format!("assignment: {e}"))?;
        let groups = a.user_data.as_deref().and_then(decode_unit_groups);
        (a.partitions, groups)
    };
    put_partitions(out, &partitions);
    match groups {
        None => out.push(0),
        Some(groups) => {
            out.push(1);
            put_u32(out, groups.len());
            for g in &groups {
                put_strs(out, g);
            }
        }
    }
    Ok(())
}

thread_local! {
    /// Parsed partitioners by handle (index + 1); a freed slot is `None`.
    static PARTITIONERS: RefCell<Vec<Option<Partitioner>>> = const { RefCell::new(Vec::new()) };
}

fn parse(spec: &str) -> Result<Partitioner, String> {
    spec.parse()
        .map_err(|e| format!("partitioner '{spec}': {e}"))
}

/// Parses a partitioner spec (the whole request, UTF-8) once, so a priority
/// spec's regexes are compiled once, not per record. Answer: its handle
/// (`u32`, never 0).
pub fn partitioner_new(request: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let spec =
        std::str::from_utf8(request).map_err(|e| format!("partitioner spec: not UTF-8: {e}"))?;
    let p = parse(spec)?;
    let handle = PARTITIONERS.with(|all| {
        let mut all = all.borrow_mut();
        all.push(Some(p));
        all.len()
    });
    put_u32(out, handle);
    Ok(())
}

fn with_partitioner<T>(handle: u32, f: impl FnOnce(&Partitioner) -> T) -> Result<T, String> {
    PARTITIONERS.with(|all| {
        let all = all.borrow();
        let p = (handle as usize)
            .checked_sub(1)
            .and_then(|i| all.get(i))
            .and_then(Option::as_ref)
            .ok_or_else(|| format!("no partitioner with handle {handle}"))?;
        Ok(f(p))
    })
}

/// The canonical spec of partitioner handle (the request: `u32`). Answer:
/// the spec, UTF-8.
pub fn partitioner_spec(request: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let handle = Reader::new(request).u32("handle")?;
    let spec = with_partitioner(handle, |p| p.spec().to_string())?;
    out.extend_from_slice(spec.as_bytes());
    Ok(())
}

/// Frees partitioner handle (the request: `u32`); a freed handle is not
/// reused. Answer: nothing.
pub fn partitioner_free(request: &[u8], _out: &mut Vec<u8>) -> Result<(), String> {
    let handle = Reader::new(request).u32("handle")?;
    PARTITIONERS.with(|all| {
        let mut all = all.borrow_mut();
        if let Some(slot) = (handle as usize)
            .checked_sub(1)
            .and_then(|i| all.get_mut(i))
        {
            *slot = None;
        }
    });
    Ok(())
}

/// Code of a sticky placement (the producer keeps the sticky partition).
pub const STICKY: i64 = -2;
/// Code of a random placement.
pub const RANDOM: i64 = -3;
/// Code of a round-robin placement (the producer keeps the counter).
pub const ROUND_ROBIN: i64 = -4;
/// Code of a record the partitioner rejects.
pub const REJECTED: i64 = -5;

/// Where a record goes under partitioner `handle`. Request: the key (`u8`
/// 0 for none, or 1 and the key's bytes), the partition count (`u32`),
/// headers (`u32` count, each a name and a value as bytes), which only
/// priority rules on headers read. Returns the partition, or [`STICKY`],
/// [`RANDOM`], [`ROUND_ROBIN`] or [`REJECTED`]: key-less strategies are
/// named, not applied, as they depend on producer state the caller keeps.
pub fn place(handle: u32, request: &[u8], _out: &mut Vec<u8>) -> Result<i64, String> {
    let mut r = Reader::new(request);
    let key = match r.u8("key")? {
        0 => None,
        _ => Some(r.bytes("key")?),
    };
    let partitions = r.u32("partition count")?;
    let n = PartitionCount::new(partitions)
        .map_err(|e| format!("partition count {partitions}: {e}"))?;
    let h = r.count("headers", 8)?;
    let mut headers = Vec::with_capacity(h);
    for _ in 0..h {
        headers.push((r.bytes("header name")?, r.bytes("header value")?));
    }
    with_partitioner(handle, |p| match p.place_with_headers(key, &headers, n) {
        Placement::Partition(x) => i64::from(x),
        Placement::Sticky => STICKY,
        Placement::Random => RANDOM,
        Placement::RoundRobin => ROUND_ROBIN,
        Placement::Rejected => REJECTED,
    })
}
