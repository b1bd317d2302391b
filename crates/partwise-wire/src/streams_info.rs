//! The user data of a classic-protocol Kafka Streams group (assignor
//! `stream`): the `SubscriptionInfo` each stream thread's consumer sends in
//! JoinGroup and the `AssignmentInfo` the group leader's
//! `StreamsPartitionAssignor` sends back in SyncGroup, inside the consumer
//! protocol's user data ([`crate::consumer`]).
//!
//! Both are read as Kafka Streams writes them (versions 1 to 11; Kafka
//! Streams 3.x and 4.x write 11):
//!
//! - `SubscriptionInfo` is a generated, non-flexible message
//!   (`SubscriptionInfoData.json`): an `i32` version, the latest version the
//!   member reads (v3+), the process id (a UUID), the previous active and
//!   standby tasks (v1-6), the user endpoint (v2+), the task offset sums
//!   (v7+; an offset sum of -2 marks a task the member ran as active), a
//!   unique byte (v8+), an error code (v9+) and client tags (v11+).
//! - `AssignmentInfo` is written by hand with a `DataOutputStream`: the
//!   version, the commonly supported version (v3+), the active tasks (one
//!   per assigned partition, in the order of the member's partitions sorted
//!   by topic then partition), the standby tasks with their partitions, the
//!   partitions by host (v2+, in three layouts), an error code (v4+) and the
//!   next rebalance time (v7+). A task id is `i32` sub-topology, `i32`
//!   partition and, from v10, the named topology as an `i32` count of
//!   UTF-16 characters.
//!
//! Nothing is trusted: every read is bounds-checked and an array count larger
//! than the bytes left could hold is refused before anything is reserved, so
//! hostile bytes end in an [`Error`], never a panic or an allocation larger
//! than the bytes themselves. A version above 11 is refused (Kafka Streams
//! reads nothing but the version from a newer subscription either).

use crate::error::{Error, Result};

/// The highest version of either message read (Kafka Streams 4.4's
/// `LATEST_SUPPORTED_VERSION`).
pub const LATEST_VERSION: i32 = 11;

/// The offset sum Kafka Streams gives, in a subscription, a task the member
/// ran as active (`Task.LATEST_OFFSET`).
const LATEST_OFFSET: i64 = -2;

/// A Streams task: sub-topology `x`, partition `p`, and the named topology
/// when the application uses one.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId {
    /// The sub-topology (Streams' topic group id).
    pub subtopology: i32,
    /// The partition.
    pub partition: i32,
    /// The named topology, when not the default one.
    pub topology: Option<String>,
}

impl std::fmt::Display for TaskId {
    /// As Kafka Streams prints it: `x_p`, or `name_x_p`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(t) = &self.topology {
            write!(f, "{t}_")?;
        }
        write!(f, "{}_{}", self.subtopology, self.partition)
    }
}

/// A task with the partitions it holds, (topic, partition), sorted.
pub type TaskPartitions = (TaskId, Vec<(String, i32)>);

/// A stream thread's subscription user data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubscriptionInfo {
    /// The version it is written in.
    pub version: i32,
    /// The latest version the member reads (-1 before v3).
    pub latest_supported_version: i32,
    /// The process (Kafka Streams instance) id: a UUID's 16 bytes.
    pub process_id: [u8; 16],
    /// `application.server`, when set.
    pub user_endpoint: Option<String>,
    /// The tasks the member last ran as active.
    pub previous_active: Vec<TaskId>,
    /// The tasks whose state the member holds otherwise (standbys).
    pub previous_standby: Vec<TaskId>,
    /// The error code (v9+).
    pub error_code: Option<i32>,
    /// The client tags (`client.tag.*`, v11+).
    pub client_tags: Vec<(String, String)>,
}

impl SubscriptionInfo {
    /// The process id as Kafka Streams prints it (a UUID's 8-4-4-4-12 hex).
    pub fn process(&self) -> String {
        uuid(&self.process_id)
    }
}

/// The UUID's 8-4-4-4-12 hex form.
pub fn uuid(b: &[u8; 16]) -> String {
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// The leader's assignment user data for one stream thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssignmentInfo {
    /// The version it is written in.
    pub version: i32,
    /// The version every member reads (v3+; -1 before).
    pub commonly_supported_version: i32,
    /// One task per partition of the member's consumer assignment, in the
    /// order of those partitions sorted by topic then partition
    /// ([`AssignmentInfo::active_tasks`] pairs them).
    pub active: Vec<TaskId>,
    /// The standby tasks, each with the partitions whose state it keeps.
    pub standby: Vec<TaskPartitions>,
    /// The error code (v4+): 0, or why the leader could not assign.
    pub error_code: Option<i32>,
}

impl AssignmentInfo {
    /// The active tasks with the partitions each holds, sorted by task, from
    /// the member's consumer-protocol `partitions`: Kafka Streams pairs the
    /// i-th partition (sorted by topic, then partition) with the i-th active
    /// task. A count that differs from the partitions' is an error, never a
    /// guess.
    pub fn active_tasks(&self, partitions: &[(String, i32)]) -> Result<Vec<TaskPartitions>> {
        if partitions.len() != self.active.len() {
            return Err(Error::invalid(
                WHAT_ASSIGNMENT,
                format!(
                    "{} active task entries for {} assigned partitions",
                    self.active.len(),
                    partitions.len()
                ),
            ));
        }
        let mut sorted: Vec<&(String, i32)> = partitions.iter().collect();
        sorted.sort();
        let mut by_task: std::collections::BTreeMap<&TaskId, Vec<(String, i32)>> =
            std::collections::BTreeMap::new();
        for (t, tp) in self.active.iter().zip(sorted) {
            by_task.entry(t).or_default().push(tp.clone());
        }
        Ok(by_task
            .into_iter()
            .map(|(t, tps)| (t.clone(), tps))
            .collect())
    }
}

const WHAT_SUBSCRIPTION: &str = "Kafka Streams subscription info";
const WHAT_ASSIGNMENT: &str = "Kafka Streams assignment info";

/// A bounds-checked big-endian reader.
struct Reader<'a> {
    b: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn short(&self, need: usize) -> Error {
        Error::invalid(
            self.what,
            format!("truncated: {need} bytes needed, {} left", self.b.len()),
        )
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.b.len() < n {
            return Err(self.short(n));
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn i8(&mut self) -> Result<i8> {
        Ok(self.take(1)?[0] as i8)
    }
    fn i16(&mut self) -> Result<i16> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(self.i16()? as u16)
    }
    fn i32(&mut self) -> Result<i32> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn i64(&mut self) -> Result<i64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }
    /// An `i32` array count whose elements take at least `min` bytes each,
    /// refused when the bytes left cannot hold it.
    fn count(&mut self, min: usize) -> Result<usize> {
        let n = self.i32()?;
        if n < 0 {
            return Err(Error::invalid(self.what, format!("array count {n}")));
        }
        let n = n as usize;
        if n.saturating_mul(min) > self.b.len() {
            return Err(Error::invalid(
                self.what,
                format!("{n} elements in {} bytes left", self.b.len()),
            ));
        }
        Ok(n)
    }
    fn utf8(&self, b: &[u8]) -> Result<String> {
        String::from_utf8(b.to_vec())
            .map_err(|_| Error::invalid(self.what, "a string is not UTF-8"))
    }
    /// Java's `writeUTF`: a `u16` length, then the bytes (ASCII and the
    /// rest of UTF-8 alike for topic and host names).
    fn java_utf(&mut self) -> Result<String> {
        let n = self.u16()? as usize;
        let b = self.take(n)?;
        self.utf8(b)
    }
    /// A generated message's `bytes`: an `i32` length (-1: null).
    fn bytes(&mut self) -> Result<Option<&'a [u8]>> {
        let n = self.i32()?;
        if n < 0 {
            return Ok(None);
        }
        self.take(n as usize).map(Some)
    }
    /// A generated message's nullable `string`: an `i16` length (-1: null).
    fn string(&mut self) -> Result<Option<String>> {
        let n = self.i16()?;
        if n < 0 {
            return Ok(None);
        }
        let b = self.take(n as usize)?;
        self.utf8(b).map(Some)
    }
    /// A task id of `AssignmentInfo` version `v`.
    fn task(&mut self, v: i32) -> Result<TaskId> {
        let subtopology = self.i32()?;
        let partition = self.i32()?;
        let mut topology = None;
        if v >= 10 {
            // Java's writeChars: UTF-16 code units, two bytes each.
            let n = self.count(2)?;
            let units: Vec<u16> = self
                .take(2 * n)?
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect();
            let name = String::from_utf16(&units)
                .map_err(|_| Error::invalid(self.what, "a named topology is not UTF-16"))?;
            topology = (!name.is_empty()).then_some(name);
        }
        Ok(TaskId {
            subtopology,
            partition,
            topology,
        })
    }
    fn version(&mut self) -> Result<i32> {
        let v = self.i32()?;
        if !(1..=LATEST_VERSION).contains(&v) {
            return Err(Error::invalid(
                self.what,
                format!("version {v} (versions 1 to {LATEST_VERSION} are read)"),
            ));
        }
        Ok(v)
    }
}

impl SubscriptionInfo {
    /// Decodes a stream thread's subscription user data.
    pub fn decode(bytes: &[u8]) -> Result<SubscriptionInfo> {
        let mut r = Reader {
            b: bytes,
            what: WHAT_SUBSCRIPTION,
        };
        let version = r.version()?;
        let latest_supported_version = if version >= 3 { r.i32()? } else { -1 };
        let mut process_id = [0u8; 16];
        process_id.copy_from_slice(r.take(16)?);
        let mut s = SubscriptionInfo {
            version,
            latest_supported_version,
            process_id,
            ..Default::default()
        };
        if version <= 6 {
            for list in [&mut s.previous_active, &mut s.previous_standby] {
                for _ in 0..r.count(8)? {
                    let subtopology = r.i32()?;
                    let partition = r.i32()?;
                    list.push(TaskId {
                        subtopology,
                        partition,
                        topology: None,
                    });
                }
            }
        }
        if version >= 2 {
            // Kafka Streams writes an empty endpoint when none is set.
            s.user_endpoint = match r.bytes()? {
                Some(b) if !b.is_empty() => Some(r.utf8(b)?),
                _ => None,
            };
        }
        if version >= 7 {
            let mut sums = Vec::new();
            for _ in 0..r.count(8)? {
                let subtopology = r.i32()?;
                if version >= 10 {
                    let partition = r.i32()?;
                    let sum = r.i64()?;
                    let topology = r.string()?.filter(|t| !t.is_empty());
                    sums.push((
                        TaskId {
                            subtopology,
                            partition,
                            topology,
                        },
                        sum,
                    ));
                } else {
                    for _ in 0..r.count(12)? {
                        let partition = r.i32()?;
                        let sum = r.i64()?;
                        sums.push((
                            TaskId {
                                subtopology,
                                partition,
                                topology: None,
                            },
                            sum,
                        ));
                    }
                }
            }
            sums.sort();
            for (t, sum) in sums {
                if sum == LATEST_OFFSET {
                    s.previous_active.push(t);
                } else {
                    s.previous_standby.push(t);
                }
            }
        }
        if version >= 8 {
            r.i8()?;
        }
        if version >= 9 {
            s.error_code = Some(r.i32()?);
        }
        if version >= 11 {
            for _ in 0..r.count(8)? {
                let k = r.bytes()?.unwrap_or_default();
                let k = r.utf8(k)?;
                let v = r.bytes()?.unwrap_or_default();
                let v = r.utf8(v)?;
                s.client_tags.push((k, v));
            }
        }
        Ok(s)
    }
}

impl AssignmentInfo {
    /// Decodes the leader's assignment user data for one stream thread.
    pub fn decode(bytes: &[u8]) -> Result<AssignmentInfo> {
        let mut r = Reader {
            b: bytes,
            what: WHAT_ASSIGNMENT,
        };
        let version = r.version()?;
        let commonly_supported_version = if version >= 3 { r.i32()? } else { -1 };
        let task_len = if version >= 10 { 12 } else { 8 };
        let mut a = AssignmentInfo {
            version,
            commonly_supported_version,
            ..Default::default()
        };
        for _ in 0..r.count(task_len)? {
            a.active.push(r.task(version)?);
        }
        for _ in 0..r.count(task_len + 4)? {
            let t = r.task(version)?;
            let mut tps = Vec::new();
            for _ in 0..r.count(6)? {
                let topic = r.java_utf()?;
                tps.push((topic, r.i32()?));
            }
            tps.sort();
            a.standby.push((t, tps));
        }
        a.standby.sort();
        // The partitions by host are read past only, to reach the error code.
        match version {
            1 => {}
            2..=4 => hosts_plain(&mut r)?,
            5 => {
                dictionary(&mut r)?;
                hosts_by_index(&mut r)?;
            }
            _ => {
                dictionary(&mut r)?;
                hosts_by_index(&mut r)?;
                hosts_by_index(&mut r)?;
            }
        }
        if version >= 4 {
            a.error_code = Some(r.i32()?);
        }
        if version >= 7 {
            r.i64()?;
        }
        Ok(a)
    }
}

/// Versions 2-4: each host (`writeUTF` host, `i32` port) with its
/// partitions (`writeUTF` topic, `i32` partition).
fn hosts_plain(r: &mut Reader<'_>) -> Result<()> {
    for _ in 0..r.count(10)? {
        r.java_utf()?;
        r.i32()?;
        for _ in 0..r.count(6)? {
            r.java_utf()?;
            r.i32()?;
        }
    }
    Ok(())
}

/// Versions 5+: the topic dictionary (`i32` index, `writeUTF` topic), read
/// past like the host maps that index it.
fn dictionary(r: &mut Reader<'_>) -> Result<()> {
    for _ in 0..r.count(6)? {
        r.i32()?;
        r.java_utf()?;
    }
    Ok(())
}

/// One host map of versions 5+: each host with its partitions as (topic
/// index, partition).
fn hosts_by_index(r: &mut Reader<'_>) -> Result<()> {
    for _ in 0..r.count(10)? {
        r.java_utf()?;
        r.i32()?;
        for _ in 0..r.count(8)? {
            r.i32()?;
            r.i32()?;
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Kafka Streams' encoders, written after `AssignmentInfo.encode` and the
    /// generated `SubscriptionInfoData.write`, for round trips only (the
    /// known answers are bytes a real application wrote:
    /// `tests/vectors/streams-classic/`).
    fn put_task(o: &mut Vec<u8>, t: &TaskId, v: i32) {
        o.extend(t.subtopology.to_be_bytes());
        o.extend(t.partition.to_be_bytes());
        if v >= 10 {
            let units: Vec<u16> = t.topology.as_deref().unwrap_or("").encode_utf16().collect();
            o.extend((units.len() as i32).to_be_bytes());
            for u in units {
                o.extend(u.to_be_bytes());
            }
        }
    }

    fn put_utf(o: &mut Vec<u8>, s: &str) {
        o.extend((s.len() as u16).to_be_bytes());
        o.extend(s.as_bytes());
    }

    pub(crate) fn encode_assignment(a: &AssignmentInfo) -> Vec<u8> {
        let v = a.version;
        let mut o = Vec::new();
        o.extend(v.to_be_bytes());
        if v >= 3 {
            o.extend(a.commonly_supported_version.to_be_bytes());
        }
        o.extend((a.active.len() as i32).to_be_bytes());
        for t in &a.active {
            put_task(&mut o, t, v);
        }
        o.extend((a.standby.len() as i32).to_be_bytes());
        for (t, tps) in &a.standby {
            put_task(&mut o, t, v);
            o.extend((tps.len() as i32).to_be_bytes());
            for (topic, p) in tps {
                put_utf(&mut o, topic);
                o.extend(p.to_be_bytes());
            }
        }
        // One host with one partition in each layout.
        match v {
            1 => {}
            2..=4 => {
                o.extend(1i32.to_be_bytes());
                put_utf(&mut o, "h");
                o.extend(8080i32.to_be_bytes());
                o.extend(1i32.to_be_bytes());
                put_utf(&mut o, "t");
                o.extend(0i32.to_be_bytes());
            }
            _ => {
                o.extend(1i32.to_be_bytes());
                o.extend(0i32.to_be_bytes());
                put_utf(&mut o, "t");
                for _ in 0..if v == 5 { 1 } else { 2 } {
                    o.extend(1i32.to_be_bytes());
                    put_utf(&mut o, "h");
                    o.extend(8080i32.to_be_bytes());
                    o.extend(1i32.to_be_bytes());
                    o.extend(0i32.to_be_bytes());
                    o.extend(3i32.to_be_bytes());
                }
            }
        }
        if v >= 4 {
            o.extend(a.error_code.unwrap_or(0).to_be_bytes());
        }
        if v >= 7 {
            o.extend(i64::MAX.to_be_bytes());
        }
        o
    }

    pub(crate) fn encode_subscription(s: &SubscriptionInfo) -> Vec<u8> {
        let v = s.version;
        let mut o = Vec::new();
        o.extend(v.to_be_bytes());
        if v >= 3 {
            o.extend(s.latest_supported_version.to_be_bytes());
        }
        o.extend(s.process_id);
        if v <= 6 {
            for list in [&s.previous_active, &s.previous_standby] {
                o.extend((list.len() as i32).to_be_bytes());
                for t in list {
                    put_task(&mut o, t, 1);
                }
            }
        }
        if v >= 2 {
            let e = s.user_endpoint.as_deref().unwrap_or("");
            o.extend((e.len() as i32).to_be_bytes());
            o.extend(e.as_bytes());
        }
        if v >= 7 {
            let mut sums: Vec<(&TaskId, i64)> = s.previous_active.iter().map(|t| (t, -2)).collect();
            sums.extend(s.previous_standby.iter().map(|t| (t, 7)));
            if v >= 10 {
                o.extend((sums.len() as i32).to_be_bytes());
                for (t, sum) in sums {
                    o.extend(t.subtopology.to_be_bytes());
                    o.extend(t.partition.to_be_bytes());
                    o.extend(sum.to_be_bytes());
                    match &t.topology {
                        Some(n) => {
                            o.extend((n.len() as i16).to_be_bytes());
                            o.extend(n.as_bytes());
                        }
                        None => o.extend((-1i16).to_be_bytes()),
                    }
                }
            } else {
                // One TaskOffsetSum per task (Streams groups them by
                // sub-topology; either reads the same).
                o.extend((sums.len() as i32).to_be_bytes());
                for (t, sum) in sums {
                    o.extend(t.subtopology.to_be_bytes());
                    o.extend(1i32.to_be_bytes());
                    o.extend(t.partition.to_be_bytes());
                    o.extend(sum.to_be_bytes());
                }
            }
        }
        if v >= 8 {
            o.push(0);
        }
        if v >= 9 {
            o.extend(s.error_code.unwrap_or(0).to_be_bytes());
        }
        if v >= 11 {
            o.extend((s.client_tags.len() as i32).to_be_bytes());
            for (k, val) in &s.client_tags {
                o.extend((k.len() as i32).to_be_bytes());
                o.extend(k.as_bytes());
                o.extend((val.len() as i32).to_be_bytes());
                o.extend(val.as_bytes());
            }
        }
        o
    }

    fn task(x: i32, p: i32) -> TaskId {
        TaskId {
            subtopology: x,
            partition: p,
            topology: None,
        }
    }

    fn assignment(v: i32) -> AssignmentInfo {
        AssignmentInfo {
            version: v,
            commonly_supported_version: if v >= 3 { v } else { -1 },
            active: vec![task(0, 1), task(0, 3), task(0, 1), task(0, 3)],
            standby: vec![(task(0, 2), vec![("a".into(), 2), ("b".into(), 2)])],
            error_code: (v >= 4).then_some(0),
        }
    }

    fn subscription(v: i32) -> SubscriptionInfo {
        SubscriptionInfo {
            version: v,
            latest_supported_version: if v >= 3 { 11 } else { -1 },
            process_id: *b"0123456789abcdef",
            user_endpoint: (v >= 2).then(|| "host:8080".to_string()),
            previous_active: vec![task(0, 1), task(1, 1)],
            previous_standby: vec![task(0, 2)],
            error_code: (v >= 9).then_some(0),
            client_tags: if v >= 11 {
                vec![("zone".into(), "eu-1".into())]
            } else {
                vec![]
            },
        }
    }

    #[test]
    fn every_version_round_trips() {
        for v in 1..=LATEST_VERSION {
            let a = assignment(v);
            assert_eq!(
                AssignmentInfo::decode(&encode_assignment(&a)).unwrap(),
                a,
                "v{v}"
            );
            let s = subscription(v);
            assert_eq!(
                SubscriptionInfo::decode(&encode_subscription(&s)).unwrap(),
                s,
                "v{v}"
            );
        }
        let mut named = assignment(10);
        named.active[0].topology = Some("né".into());
        named.active.sort();
        assert_eq!(
            AssignmentInfo::decode(&encode_assignment(&named)).unwrap(),
            named
        );
        assert_eq!(named.active[1].to_string(), "né_0_1");
    }

    #[test]
    fn active_tasks_pair_with_the_sorted_partitions() {
        let a = assignment(11);
        let parts = vec![
            ("b".to_string(), 3),
            ("a".to_string(), 1),
            ("b".to_string(), 1),
            ("a".to_string(), 3),
        ];
        let t = a.active_tasks(&parts).unwrap();
        assert_eq!(
            t,
            vec![
                (task(0, 1), vec![("a".into(), 1), ("b".into(), 1)]),
                (task(0, 3), vec![("a".into(), 3), ("b".into(), 3)]),
            ]
        );
        let e = a.active_tasks(&parts[..3]).unwrap_err().to_string();
        assert!(
            e.contains("4 active task entries for 3 assigned partitions"),
            "{e}"
        );
    }

    #[test]
    fn uuids_print_as_java_does() {
        let s = subscription(11);
        assert_eq!(s.process(), "30313233-3435-3637-3839-616263646566");
    }

    #[test]
    fn truncations_and_hostile_counts_are_errors() {
        for v in 1..=LATEST_VERSION {
            let a = encode_assignment(&assignment(v));
            for n in 0..a.len() {
                assert!(AssignmentInfo::decode(&a[..n]).is_err(), "v{v} prefix {n}");
            }
            let s = encode_subscription(&subscription(v));
            for n in 0..s.len() {
                assert!(
                    SubscriptionInfo::decode(&s[..n]).is_err(),
                    "v{v} prefix {n}"
                );
            }
        }
        // 2^31-1 active tasks announced in 12 bytes.
        let mut huge = 11i32.to_be_bytes().to_vec();
        huge.extend(11i32.to_be_bytes());
        huge.extend(i32::MAX.to_be_bytes());
        let e = AssignmentInfo::decode(&huge).unwrap_err().to_string();
        assert!(e.contains("2147483647 elements in 0 bytes left"), "{e}");
        let mut neg = 11i32.to_be_bytes().to_vec();
        neg.extend(11i32.to_be_bytes());
        neg.extend((-5i32).to_be_bytes());
        assert!(AssignmentInfo::decode(&neg).is_err());
        for v in [0, 12, -1, i32::MAX] {
            let e = SubscriptionInfo::decode(&v.to_be_bytes())
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("version {v}")), "{e}");
            assert!(AssignmentInfo::decode(&v.to_be_bytes()).is_err());
        }
    }

    /// `{task}={topic}:{p},...;...` as the capture's `tasks` lines print
    /// what Kafka Streams says a thread holds (`-`: nothing).
    fn parse_tasks(s: &str) -> Vec<(String, Vec<(String, i32)>)> {
        if s == "-" {
            return Vec::new();
        }
        s.split(';')
            .map(|t| {
                let (task, tps) = t.split_once('=').unwrap();
                let mut tps: Vec<(String, i32)> = tps
                    .split(',')
                    .map(|tp| {
                        let (topic, p) = tp.rsplit_once(':').unwrap();
                        (topic.to_string(), p.parse().unwrap())
                    })
                    .collect();
                tps.sort();
                (task.to_string(), tps)
            })
            .collect()
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// The bytes a real Kafka Streams application's two instances (one
    /// thread each, one standby replica) put in their classic group, read
    /// to what Kafka Streams itself says each thread holds and to the
    /// process id its default client id carries
    /// (`tests/vectors/regen/streams-classic/run`).
    #[test]
    fn a_real_applications_user_data_reads_as_kafka_streams_says() {
        use crate::consumer::{Assignment, Subscription};
        let text = include_str!("../../../tests/vectors/streams-classic/group.txt");
        let mut members = Vec::new();
        let mut said = std::collections::BTreeMap::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            match f[0] {
                "member" => members.push((f[2].to_string(), unhex(f[3]), unhex(f[4]))),
                "tasks" => {
                    assert_eq!((f[2], f[4]), ("active", "standby"));
                    said.insert(f[1].to_string(), (parse_tasks(f[3]), parse_tasks(f[5])));
                }
                _ => {}
            }
        }
        assert_eq!(members.len(), 2);
        let mut standbys = 0;
        for (client, meta, asg) in members {
            let sub = Subscription::decode_lenient(meta.into())
                .unwrap()
                .subscription;
            let info = SubscriptionInfo::decode(&sub.user_data.unwrap()).unwrap();
            assert_eq!(info.version, LATEST_VERSION);
            // The default client id: <application.id>-<process id>-StreamThread-N-consumer.
            assert!(
                client.contains(&format!("-{}-StreamThread-", info.process())),
                "{client} {}",
                info.process()
            );
            let a = Assignment::decode(asg.into()).unwrap();
            let a_info = AssignmentInfo::decode(&a.user_data.unwrap()).unwrap();
            assert_eq!(a_info.error_code, Some(0));
            let active: Vec<(String, Vec<(String, i32)>)> = a_info
                .active_tasks(&a.partitions)
                .unwrap()
                .into_iter()
                .map(|(t, tps)| (t.to_string(), tps))
                .collect();
            let standby: Vec<(String, Vec<(String, i32)>)> = a_info
                .standby
                .iter()
                .map(|(t, tps)| (t.to_string(), tps.clone()))
                .collect();
            let (want_active, want_standby) = &said[&client];
            assert_eq!(&active, want_active, "{client}");
            assert_eq!(&standby, want_standby, "{client}");
            assert!(!active.is_empty());
            standbys += standby.len();
        }
        assert!(standbys > 0);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = SubscriptionInfo::decode(&bytes);
            let _ = AssignmentInfo::decode(&bytes);
        }

        #[test]
        fn arbitrary_tails_of_a_valid_version_never_panic(
            v in 1..=LATEST_VERSION,
            tail in proptest::collection::vec(any::<u8>(), 0..256),
        ) {
            let mut b = v.to_be_bytes().to_vec();
            b.extend(&tail);
            let _ = SubscriptionInfo::decode(&b);
            let _ = AssignmentInfo::decode(&b);
        }

        #[test]
        fn flipped_bytes_never_panic(
            v in 1..=LATEST_VERSION,
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        ) {
            for mut b in [encode_assignment(&assignment(v)), encode_subscription(&subscription(v))] {
                for (i, x) in &flips {
                    let i = i.index(b.len());
                    b[i] = *x;
                }
                if let Ok(a) = AssignmentInfo::decode(&b) {
                    // Never more tasks than the bytes could carry.
                    prop_assert!(a.active.len() * 8 <= b.len());
                }
                let _ = SubscriptionInfo::decode(&b);
            }
        }
    }
}
