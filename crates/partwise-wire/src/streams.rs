//! StreamsGroupDescribe (API key 89), the description of a Kafka Streams
//! group under the streams rebalance protocol (`group.protocol=streams`):
//! the request's body and the response's, version 0.
//!
//! kafka-protocol 0.18 has no type for this API, so its bytes are written
//! and read here, field by field as Apache Kafka's message schema
//! (`StreamsGroupDescribeRequest.json`, `StreamsGroupDescribeResponse.json`)
//! lays them out. Version 0 is flexible: compact strings and arrays (an
//! unsigned varint of the length plus one, zero for null) and a tagged-field
//! section after every struct, whose fields are skipped since v0 defines
//! none. Version 0 is what every broker with the API answers, so nothing
//! later is asked for.
//!
//! The decoder never trusts a count: an array that announces more elements
//! than there are bytes left (every element takes at least one) is refused
//! before anything is reserved, and every read is bounds-checked, so hostile
//! bytes end in an [`Error`], never a panic or an allocation larger than the
//! response itself.

use crate::error::{Error, Result};
use bytes::{BufMut, Bytes, BytesMut};

/// The API key of StreamsGroupDescribe.
pub const API_KEY: i16 = 89;
/// The one version spoken here.
pub const VERSION: i16 = 0;
/// The request header version of every StreamsGroupDescribe version
/// (flexible: client id, then tagged fields).
pub const REQUEST_HEADER_VERSION: i16 = 2;
/// The response header version (flexible: correlation id, tagged fields).
pub const RESPONSE_HEADER_VERSION: i16 = 1;

const WHAT: &str = "StreamsGroupDescribe v0 response";

/// The response: each group asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    /// Milliseconds the broker throttled the request.
    pub throttle_time_ms: i32,
    /// The groups, one per id asked for.
    pub groups: Vec<DescribedGroup>,
}

/// One streams group as its coordinator describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribedGroup {
    /// 0, or the error describing this group (69: GROUP_ID_NOT_FOUND).
    pub error_code: i16,
    /// The error's message, when there is one.
    pub error_message: Option<String>,
    /// The group id.
    pub group_id: String,
    /// `EMPTY`, `NOT_READY`, `ASSIGNING`, `RECONCILING`, `STABLE`, `DEAD`.
    pub group_state: String,
    /// The group epoch.
    pub group_epoch: i32,
    /// The epoch of the target assignment.
    pub assignment_epoch: i32,
    /// The topology the group was initialized with; `None` on an error.
    pub topology: Option<Topology>,
    /// The members.
    pub members: Vec<Member>,
    /// The authorized operations bit field (`i32::MIN` when not asked for).
    pub authorized_operations: i32,
}

/// The topology the coordinator holds for the group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Topology {
    /// Its epoch.
    pub epoch: i32,
    /// The configured sub-topologies; `None` while the group is not
    /// initialized, or its source topics are missing or not co-partitioned.
    pub subtopologies: Option<Vec<Subtopology>>,
}

/// One sub-topology.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subtopology {
    /// Its id (`0`, `1`, ...): the `x` of its tasks `x_p`.
    pub id: String,
    /// The user topics it reads.
    pub source_topics: Vec<String>,
    /// The repartition topics it writes.
    pub repartition_sink_topics: Vec<String>,
    /// The changelog topics of its stores.
    pub state_changelog_topics: Vec<TopicInfo>,
    /// The repartition topics it reads (internal sources).
    pub repartition_source_topics: Vec<TopicInfo>,
}

/// An internal topic.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicInfo {
    /// Its name.
    pub name: String,
    /// Its partition count (0: not fixed by the topology).
    pub partitions: i32,
    /// Its replication factor (0: the broker's default).
    pub replication_factor: i16,
    /// Topic configurations.
    pub configs: Vec<(String, String)>,
}

/// One member: a stream thread's consumer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Member {
    /// The member id.
    pub member_id: String,
    /// The member epoch.
    pub member_epoch: i32,
    /// The static instance id.
    pub instance_id: Option<String>,
    /// The rack id.
    pub rack_id: Option<String>,
    /// The client id.
    pub client_id: String,
    /// The host it connected from.
    pub client_host: String,
    /// The topology epoch the member runs.
    pub topology_epoch: i32,
    /// The Streams instance (several threads share one).
    pub process_id: String,
    /// The interactive-queries endpoint (host, port), when set.
    pub user_endpoint: Option<(String, u16)>,
    /// Rack-aware assignment tags.
    pub client_tags: Vec<(String, String)>,
    /// Changelog offsets per task.
    pub task_offsets: Vec<TaskOffset>,
    /// Changelog end offsets per task.
    pub task_end_offsets: Vec<TaskOffset>,
    /// The member's current assignment.
    pub assignment: Assignment,
    /// The coordinator's target assignment for it.
    pub target_assignment: Assignment,
    /// A classic-protocol member not upgraded yet.
    pub is_classic: bool,
}

/// A task's cumulative offset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskOffset {
    /// The sub-topology.
    pub subtopology: String,
    /// The partition (the task's `p`).
    pub partition: i32,
    /// The offset.
    pub offset: i64,
}

/// Tasks by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assignment {
    /// Active tasks.
    pub active: Vec<TaskIds>,
    /// Standby tasks.
    pub standby: Vec<TaskIds>,
    /// Warm-up tasks.
    pub warmup: Vec<TaskIds>,
}

/// Tasks of one sub-topology: `subtopology_p` for each partition p.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskIds {
    /// The sub-topology id.
    pub subtopology: String,
    /// The task partitions.
    pub partitions: Vec<i32>,
}

/// The request body (version 0): the groups to describe.
pub fn encode_request(group_ids: &[String], include_authorized_operations: bool) -> Bytes {
    let mut b = BytesMut::new();
    put_uvarint(&mut b, group_ids.len() as u64 + 1);
    for g in group_ids {
        put_string(&mut b, g);
    }
    b.put_u8(include_authorized_operations as u8);
    put_uvarint(&mut b, 0);
    b.freeze()
}

/// The request's group ids, read back from a body (for fake brokers in tests).
pub fn decode_request(body: &[u8]) -> Result<(Vec<String>, bool)> {
    let what = "StreamsGroupDescribe v0 request";
    let mut r = Reader { buf: body, what };
    let ids = r.array(|r| r.string())?;
    let ops = r.bool()?;
    r.tags()?;
    Ok((ids, ops))
}

impl Response {
    /// Decodes a response body (after its header). Bytes after the message
    /// are an error: a response that does not end where its schema does was
    /// not read as the broker meant it.
    pub fn decode(body: &[u8]) -> Result<Response> {
        let mut r = Reader {
            buf: body,
            what: WHAT,
        };
        let throttle_time_ms = r.i32()?;
        let groups = r.array(DescribedGroup::read)?;
        r.tags()?;
        if !r.buf.is_empty() {
            return Err(Error::invalid(
                WHAT,
                format!("{} bytes after the message", r.buf.len()),
            ));
        }
        Ok(Response {
            throttle_time_ms,
            groups,
        })
    }

    /// Encodes the response body (fake brokers in tests, round trips).
    pub fn encode(&self) -> Bytes {
        let mut b = BytesMut::new();
        b.put_i32(self.throttle_time_ms);
        put_array(&mut b, &self.groups, DescribedGroup::write);
        put_uvarint(&mut b, 0);
        b.freeze()
    }
}

impl DescribedGroup {
    fn read(r: &mut Reader) -> Result<DescribedGroup> {
        let g = DescribedGroup {
            error_code: r.i16()?,
            error_message: r.nullable_string()?,
            group_id: r.string()?,
            group_state: r.string()?,
            group_epoch: r.i32()?,
            assignment_epoch: r.i32()?,
            topology: r.nullable_struct(Topology::read)?,
            members: r.array(Member::read)?,
            authorized_operations: r.i32()?,
        };
        r.tags()?;
        Ok(g)
    }

    fn write(&self, b: &mut BytesMut) {
        b.put_i16(self.error_code);
        put_nullable_string(b, self.error_message.as_deref());
        put_string(b, &self.group_id);
        put_string(b, &self.group_state);
        b.put_i32(self.group_epoch);
        b.put_i32(self.assignment_epoch);
        match &self.topology {
            None => b.put_i8(-1),
            Some(t) => {
                b.put_i8(1);
                t.write(b);
            }
        }
        put_array(b, &self.members, Member::write);
        b.put_i32(self.authorized_operations);
        put_uvarint(b, 0);
    }
}

impl Topology {
    fn read(r: &mut Reader) -> Result<Topology> {
        let t = Topology {
            epoch: r.i32()?,
            subtopologies: r.nullable_array(Subtopology::read)?,
        };
        r.tags()?;
        Ok(t)
    }

    fn write(&self, b: &mut BytesMut) {
        b.put_i32(self.epoch);
        match &self.subtopologies {
            None => put_uvarint(b, 0),
            Some(s) => put_array(b, s, Subtopology::write),
        }
        put_uvarint(b, 0);
    }
}

impl Subtopology {
    fn read(r: &mut Reader) -> Result<Subtopology> {
        let s = Subtopology {
            id: r.string()?,
            source_topics: r.array(|r| r.string())?,
            repartition_sink_topics: r.array(|r| r.string())?,
            state_changelog_topics: r.array(TopicInfo::read)?,
            repartition_source_topics: r.array(TopicInfo::read)?,
        };
        r.tags()?;
        Ok(s)
    }

    fn write(&self, b: &mut BytesMut) {
        put_string(b, &self.id);
        put_array(b, &self.source_topics, |s, b| put_string(b, s));
        put_array(b, &self.repartition_sink_topics, |s, b| put_string(b, s));
        put_array(b, &self.state_changelog_topics, TopicInfo::write);
        put_array(b, &self.repartition_source_topics, TopicInfo::write);
        put_uvarint(b, 0);
    }
}

impl TopicInfo {
    fn read(r: &mut Reader) -> Result<TopicInfo> {
        let t = TopicInfo {
            name: r.string()?,
            partitions: r.i32()?,
            replication_factor: r.i16()?,
            configs: r.array(Reader::key_value)?,
        };
        r.tags()?;
        Ok(t)
    }

    fn write(&self, b: &mut BytesMut) {
        put_string(b, &self.name);
        b.put_i32(self.partitions);
        b.put_i16(self.replication_factor);
        put_array(b, &self.configs, put_key_value);
        put_uvarint(b, 0);
    }
}

impl Member {
    fn read(r: &mut Reader) -> Result<Member> {
        let m = Member {
            member_id: r.string()?,
            member_epoch: r.i32()?,
            instance_id: r.nullable_string()?,
            rack_id: r.nullable_string()?,
            client_id: r.string()?,
            client_host: r.string()?,
            topology_epoch: r.i32()?,
            process_id: r.string()?,
            user_endpoint: r.nullable_struct(|r| {
                let e = (r.string()?, r.u16()?);
                r.tags()?;
                Ok(e)
            })?,
            client_tags: r.array(Reader::key_value)?,
            task_offsets: r.array(TaskOffset::read)?,
            task_end_offsets: r.array(TaskOffset::read)?,
            assignment: Assignment::read(r)?,
            target_assignment: Assignment::read(r)?,
            is_classic: r.bool()?,
        };
        r.tags()?;
        Ok(m)
    }

    fn write(&self, b: &mut BytesMut) {
        put_string(b, &self.member_id);
        b.put_i32(self.member_epoch);
        put_nullable_string(b, self.instance_id.as_deref());
        put_nullable_string(b, self.rack_id.as_deref());
        put_string(b, &self.client_id);
        put_string(b, &self.client_host);
        b.put_i32(self.topology_epoch);
        put_string(b, &self.process_id);
        match &self.user_endpoint {
            None => b.put_i8(-1),
            Some((h, p)) => {
                b.put_i8(1);
                put_string(b, h);
                b.put_u16(*p);
                put_uvarint(b, 0);
            }
        }
        put_array(b, &self.client_tags, put_key_value);
        put_array(b, &self.task_offsets, TaskOffset::write);
        put_array(b, &self.task_end_offsets, TaskOffset::write);
        self.assignment.write(b);
        self.target_assignment.write(b);
        b.put_u8(self.is_classic as u8);
        put_uvarint(b, 0);
    }
}

impl TaskOffset {
    fn read(r: &mut Reader) -> Result<TaskOffset> {
        let t = TaskOffset {
            subtopology: r.string()?,
            partition: r.i32()?,
            offset: r.i64()?,
        };
        r.tags()?;
        Ok(t)
    }

    fn write(&self, b: &mut BytesMut) {
        put_string(b, &self.subtopology);
        b.put_i32(self.partition);
        b.put_i64(self.offset);
        put_uvarint(b, 0);
    }
}

impl Assignment {
    fn read(r: &mut Reader) -> Result<Assignment> {
        let a = Assignment {
            active: r.array(TaskIds::read)?,
            standby: r.array(TaskIds::read)?,
            warmup: r.array(TaskIds::read)?,
        };
        r.tags()?;
        Ok(a)
    }

    fn write(&self, b: &mut BytesMut) {
        put_array(b, &self.active, TaskIds::write);
        put_array(b, &self.standby, TaskIds::write);
        put_array(b, &self.warmup, TaskIds::write);
        put_uvarint(b, 0);
    }
}

impl TaskIds {
    fn read(r: &mut Reader) -> Result<TaskIds> {
        let t = TaskIds {
            subtopology: r.string()?,
            partitions: r.array(|r| r.i32())?,
        };
        r.tags()?;
        Ok(t)
    }

    fn write(&self, b: &mut BytesMut) {
        put_string(b, &self.subtopology);
        put_array(b, &self.partitions, |p, b| b.put_i32(*p));
        put_uvarint(b, 0);
    }
}

/// A bounds-checked cursor over flexible-version bytes.
struct Reader<'a> {
    buf: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn short(&self, field: &str) -> Error {
        Error::invalid(self.what, format!("truncated at {field}"))
    }

    fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8]> {
        if self.buf.len() < n {
            return Err(self.short(field));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    fn fixed<const N: usize>(&mut self, field: &str) -> Result<[u8; N]> {
        let b = self.take(N, field)?;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        Ok(a)
    }

    fn i16(&mut self) -> Result<i16> {
        Ok(i16::from_be_bytes(self.fixed("int16")?))
    }

    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.fixed("uint16")?))
    }

    fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.fixed("int32")?))
    }

    fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(self.fixed("int64")?))
    }

    fn bool(&mut self) -> Result<bool> {
        match self.fixed::<1>("bool")?[0] {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(Error::invalid(self.what, format!("bool byte {b}"))),
        }
    }

    /// An unsigned varint of at most 5 bytes (Kafka's 32-bit varints).
    fn uvarint(&mut self) -> Result<u32> {
        let mut v: u32 = 0;
        for i in 0..5 {
            let b = self.fixed::<1>("varint")?[0];
            v |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                if i == 4 && b > 0x0f {
                    break;
                }
                return Ok(v);
            }
        }
        Err(Error::invalid(self.what, "varint longer than 32 bits"))
    }

    fn nullable_bytes(&mut self, field: &str) -> Result<Option<&'a [u8]>> {
        match self.uvarint()? {
            0 => Ok(None),
            n => self.take(n as usize - 1, field).map(Some),
        }
    }

    fn nullable_string(&mut self) -> Result<Option<String>> {
        match self.nullable_bytes("string")? {
            None => Ok(None),
            Some(b) => std::str::from_utf8(b)
                .map(|s| Some(s.to_string()))
                .map_err(|_| {
                    Error::invalid(
                        self.what,
                        format!("a string is not UTF-8: {}", String::from_utf8_lossy(b)),
                    )
                }),
        }
    }

    fn string(&mut self) -> Result<String> {
        self.nullable_string()?
            .ok_or_else(|| Error::invalid(self.what, "null where a string is required"))
    }

    fn key_value(&mut self) -> Result<(String, String)> {
        let kv = (self.string()?, self.string()?);
        self.tags()?;
        Ok(kv)
    }

    /// A compact array's count, refused when larger than the bytes left:
    /// every element takes at least one byte.
    fn count(&mut self) -> Result<Option<usize>> {
        match self.uvarint()? {
            0 => Ok(None),
            n => {
                let n = n as usize - 1;
                if n > self.buf.len() {
                    return Err(Error::invalid(
                        self.what,
                        format!("an array of {n} elements in {} bytes left", self.buf.len()),
                    ));
                }
                Ok(Some(n))
            }
        }
    }

    fn nullable_array<T>(
        &mut self,
        mut f: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Option<Vec<T>>> {
        let Some(n) = self.count()? else {
            return Ok(None);
        };
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(f(self)?);
        }
        Ok(Some(v))
    }

    fn array<T>(&mut self, f: impl FnMut(&mut Self) -> Result<T>) -> Result<Vec<T>> {
        self.nullable_array(f)?
            .ok_or_else(|| Error::invalid(self.what, "null where an array is required"))
    }

    /// A nullable struct: an `i8` of -1 for null, 1 for present.
    fn nullable_struct<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<Option<T>> {
        match self.fixed::<1>("struct marker")?[0] as i8 {
            -1 => Ok(None),
            1 => f(self).map(Some),
            b => Err(Error::invalid(self.what, format!("struct marker {b}"))),
        }
    }

    /// A tagged-field section: none is defined at version 0, so each is
    /// skipped whole.
    fn tags(&mut self) -> Result<()> {
        let n = self.uvarint()?;
        for _ in 0..n {
            self.uvarint()?;
            let size = self.uvarint()? as usize;
            self.take(size, "tagged field")?;
        }
        Ok(())
    }
}

fn put_uvarint(b: &mut BytesMut, mut v: u64) {
    while v >= 0x80 {
        b.put_u8((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    b.put_u8(v as u8);
}

fn put_nullable_string(b: &mut BytesMut, s: Option<&str>) {
    match s {
        None => put_uvarint(b, 0),
        Some(s) => {
            put_uvarint(b, s.len() as u64 + 1);
            b.put_slice(s.as_bytes());
        }
    }
}

fn put_string(b: &mut BytesMut, s: &str) {
    put_nullable_string(b, Some(s));
}

fn put_key_value(kv: &(String, String), b: &mut BytesMut) {
    put_string(b, &kv.0);
    put_string(b, &kv.1);
    put_uvarint(b, 0);
}

fn put_array<T>(b: &mut BytesMut, items: &[T], mut f: impl FnMut(&T, &mut BytesMut)) {
    put_uvarint(b, items.len() as u64 + 1);
    for i in items {
        f(i, b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Response {
        let tasks = |s: &str, ps: &[i32]| TaskIds {
            subtopology: s.to_string(),
            partitions: ps.to_vec(),
        };
        Response {
            throttle_time_ms: 0,
            groups: vec![DescribedGroup {
                error_code: 0,
                error_message: None,
                group_id: "ticker-join".into(),
                group_state: "STABLE".into(),
                group_epoch: 3,
                assignment_epoch: 3,
                topology: Some(Topology {
                    epoch: 0,
                    subtopologies: Some(vec![Subtopology {
                        id: "0".into(),
                        source_topics: vec!["market-updates".into(), "notifications".into()],
                        repartition_sink_topics: vec![],
                        state_changelog_topics: vec![TopicInfo {
                            name: "ticker-join-KSTREAM-JOINTHIS-0000000004-store-changelog".into(),
                            partitions: 0,
                            replication_factor: 0,
                            configs: vec![("cleanup.policy".into(), "delete".into())],
                        }],
                        repartition_source_topics: vec![],
                    }]),
                }),
                members: vec![Member {
                    member_id: "m1".into(),
                    member_epoch: 3,
                    instance_id: None,
                    rack_id: Some("r1".into()),
                    client_id: "ticker-join-StreamThread-1-consumer".into(),
                    client_host: "/127.0.0.1".into(),
                    topology_epoch: 0,
                    process_id: "7c2e".into(),
                    user_endpoint: Some(("localhost".into(), 8080)),
                    client_tags: vec![],
                    task_offsets: vec![TaskOffset {
                        subtopology: "0".into(),
                        partition: 1,
                        offset: 42,
                    }],
                    task_end_offsets: vec![],
                    assignment: Assignment {
                        active: vec![tasks("0", &[0, 1, 2])],
                        standby: vec![tasks("0", &[3])],
                        warmup: vec![],
                    },
                    target_assignment: Assignment {
                        active: vec![tasks("0", &[0, 1, 2])],
                        standby: vec![],
                        warmup: vec![tasks("0", &[4])],
                    },
                    is_classic: false,
                }],
                authorized_operations: i32::MIN,
            }],
        }
    }

    #[test]
    fn a_response_round_trips() {
        let r = sample();
        assert_eq!(Response::decode(&r.encode()).unwrap(), r);
        let mut unset = sample();
        unset.groups[0].topology = Some(Topology {
            epoch: 1,
            subtopologies: None,
        });
        unset.groups.push(DescribedGroup {
            error_code: 69,
            error_message: Some("Group x not found.".into()),
            group_id: "x".into(),
            ..Default::default()
        });
        assert_eq!(Response::decode(&unset.encode()).unwrap(), unset);
    }

    #[test]
    fn the_request_is_kafkas_bytes() {
        // Compact array of one compact string, the bool, no tagged fields.
        let b = encode_request(&["app".to_string()], false);
        assert_eq!(&b[..], &[2, 4, b'a', b'p', b'p', 0, 0]);
        assert_eq!(
            decode_request(&b).unwrap(),
            (vec!["app".to_string()], false)
        );
    }

    #[test]
    fn unknown_tagged_fields_are_skipped() {
        // A group-less response with one tagged field (tag 3, 2 bytes) at the top.
        let b = [0, 0, 0, 5, 1, 1, 3, 2, 0xaa, 0xbb];
        let r = Response::decode(&b).unwrap();
        assert_eq!((r.throttle_time_ms, r.groups.len()), (5, 0));
    }

    #[test]
    fn hostile_counts_and_truncations_are_errors() {
        // 2^32-ish elements announced in a handful of bytes.
        let huge = [0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f];
        let e = Response::decode(&huge).unwrap_err().to_string();
        assert!(e.contains("elements in 0 bytes left"), "{e}");
        let full = sample().encode();
        for n in 0..full.len() {
            assert!(Response::decode(&full[..n]).is_err(), "prefix {n}");
        }
        let mut long = full.to_vec();
        long.push(0);
        assert!(Response::decode(&long)
            .unwrap_err()
            .to_string()
            .contains("1 bytes after"));
        // A varint that never ends.
        assert!(Response::decode(&[0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]).is_err());
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = Response::decode(&bytes);
            let _ = decode_request(&bytes);
        }

        #[test]
        fn flipped_bytes_of_a_real_response_never_panic(
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)
        ) {
            let mut b = sample().encode().to_vec();
            for (i, v) in flips {
                let i = i.index(b.len());
                b[i] = v;
            }
            if let Ok(r) = Response::decode(&b) {
                // Whatever decodes re-encodes to no more than it was read from.
                prop_assert!(r.encode().len() <= b.len());
            }
        }
    }
}
