//! The Node native module behind the KafkaJS binding: the leader's
//! `copartitioned` assignment, the member's subscription bytes and the
//! partwise partitioners, each a call into the Rust crates the partwise
//! runtime itself uses, so a KafkaJS leader writes the very bytes a Rust
//! leader writes and there is one implementation of the algorithm.
//!
//! The JavaScript side (`bindings/kafkajs/index.js`) adapts these calls to
//! KafkaJS's assigner and partitioner interfaces.

use napi::bindgen_prelude::{Buffer, Either};
use napi::{Error, Result, Status};
use napi_derive::napi;
use partwise::{PartitionCount, Partitioner, Placement};
use partwise_group::protocol::{Assignment, Subscription};
use partwise_group::units::{leader_sync_assignments, JoinedMember};
use partwise_wire::consumer::decode_unit_groups;
use std::collections::{BTreeMap, HashMap};

fn invalid(what: impl std::fmt::Display) -> Error {
    Error::new(Status::InvalidArg, what.to_string())
}

/// A member of the JoinGroup response as the leader sees it.
#[napi(object)]
pub struct GroupMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    /// The member's subscription (consumer-protocol bytes, any version).
    pub member_metadata: Buffer,
}

/// One member's assignment bytes, for SyncGroup.
#[napi(object)]
pub struct MemberAssignment {
    pub member_id: String,
    pub member_assignment: Buffer,
}

/// A decoded subscription.
#[napi(object)]
pub struct DecodedSubscription {
    pub topics: Vec<String>,
    /// Owned partitions as `[topic, partition]`.
    pub owned: Vec<(String, i32)>,
    pub generation: i32,
}

/// A decoded assignment, with the leader's co-partition groups when a
/// partwise leader (Rust, KafkaJS or Java) wrote them.
#[napi(object)]
pub struct DecodedAssignment {
    pub partitions: Vec<(String, i32)>,
    pub unit_groups: Option<Vec<Vec<String>>>,
}

fn decode_members(members: &[GroupMember]) -> Result<Vec<JoinedMember>> {
    members
        .iter()
        .map(|m| {
            let subscription =
                Subscription::decode(bytes::Bytes::copy_from_slice(&m.member_metadata))
                    .map_err(|e| invalid(format!("member '{}': subscription: {e}", m.member_id)))?;
            Ok(JoinedMember {
                member_id: m.member_id.clone(),
                instance_id: m.group_instance_id.clone(),
                subscription,
            })
        })
        .collect()
}

/// The leader's `copartitioned` assignment of `members` over the topics of
/// `counts` (topic to partition count): each member's consumer-protocol
/// assignment, with the co-partition groups in its user data, exactly what
/// the partwise runtime's leader sends. Members that get no partition still
/// get an assignment (so they learn the groups).
#[napi]
pub fn assign(
    members: Vec<GroupMember>,
    counts: HashMap<String, i32>,
) -> Result<Vec<MemberAssignment>> {
    let joined = decode_members(&members)?;
    let counts: BTreeMap<String, i32> = counts.into_iter().collect();
    let assignments = leader_sync_assignments("copartitioned", &joined, &counts)
        .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))?;
    Ok(assignments
        .into_iter()
        .map(|(member_id, bytes)| MemberAssignment {
            member_id,
            member_assignment: bytes.to_vec().into(),
        })
        .collect())
}

/// A member's subscription bytes (consumer protocol v3, as the Rust runtime
/// and the Java client send): its topics and what it owned in `generation`
/// (-1 when unknown), so the leader is sticky.
#[napi]
pub fn encode_subscription(
    topics: Vec<String>,
    owned: Vec<(String, i32)>,
    generation: i32,
) -> Result<Buffer> {
    let bytes = Subscription {
        topics,
        owned,
        generation,
        user_data: None,
    }
    .encode()
    .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))?;
    Ok(bytes.to_vec().into())
}

/// The topics of one member's subscription bytes (any version): what the
/// leader checks member by member, so that one member's bytes that do not
/// decode (or name a topic in bytes that are not UTF-8) are that member's
/// problem, not the whole group's.
#[napi]
pub fn subscription_topics(metadata: Buffer) -> Result<Vec<String>> {
    let s = Subscription::decode(bytes::Bytes::copy_from_slice(&metadata))
        .map_err(|e| invalid(format!("subscription: {e}")))?;
    Ok(s.topics)
}

/// Decodes subscription bytes of any version.
#[napi]
pub fn decode_subscription(metadata: Buffer) -> Result<DecodedSubscription> {
    let s = Subscription::decode(bytes::Bytes::copy_from_slice(&metadata))
        .map_err(|e| invalid(format!("subscription: {e}")))?;
    Ok(DecodedSubscription {
        topics: s.topics,
        owned: s.owned,
        generation: s.generation,
    })
}

/// Decodes assignment bytes of any version.
#[napi]
pub fn decode_assignment(assignment: Buffer) -> Result<DecodedAssignment> {
    if assignment.is_empty() {
        return Ok(DecodedAssignment {
            partitions: Vec::new(),
            unit_groups: None,
        });
    }
    let a = Assignment::decode(bytes::Bytes::copy_from_slice(&assignment))
        .map_err(|e| invalid(format!("assignment: {e}")))?;
    Ok(DecodedAssignment {
        partitions: a.partitions,
        unit_groups: a.user_data.as_deref().and_then(decode_unit_groups),
    })
}

/// Checks a partitioner spec, returning its canonical spec.
#[napi]
pub fn partitioner_spec(spec: String) -> Result<String> {
    Ok(parse_partitioner(&spec)?.spec().to_string())
}

/// Where one record lands under a partitioner.
#[napi(object)]
pub struct Landing {
    /// `partition`, `sticky`, `random`, `roundrobin` or `rejected`.
    pub kind: String,
    /// The partition, when `kind` is `partition`.
    pub partition: Option<u32>,
}

fn parse_partitioner(spec: &str) -> Result<Partitioner> {
    spec.parse()
        .map_err(|e| invalid(format!("partitioner '{spec}': {e}")))
}

/// A partitioner parsed once from its spec, placing records without parsing
/// again: parsing a priority spec compiles its regexes, which costs far more
/// than placing a record, so a producer must not pay it per record.
#[napi(js_name = "Partitioner")]
pub struct PartitionerHandle {
    inner: Partitioner,
}

#[napi]
impl PartitionerHandle {
    /// Parses `spec`; a bad spec is an error naming it.
    #[napi(constructor)]
    pub fn new(spec: String) -> Result<Self> {
        Ok(PartitionerHandle {
            inner: parse_partitioner(&spec)?,
        })
    }

    /// The canonical spec.
    #[napi(getter)]
    pub fn spec(&self) -> String {
        self.inner.spec().to_string()
    }

    /// Where a record with `key` (`null`: no key) and `headers` (`[name,
    /// value]` pairs, which only priority rules on headers look at) goes over
    /// `partitions` partitions. Key-less strategies (sticky, random,
    /// round-robin) are named, not applied: they depend on producer state
    /// the caller keeps.
    #[napi]
    pub fn place(
        &self,
        key: Option<Either<Buffer, String>>,
        partitions: u32,
        headers: Option<Vec<(Buffer, Buffer)>>,
    ) -> Result<Landing> {
        let n = PartitionCount::new(partitions)
            .map_err(|e| invalid(format!("partition count {partitions}: {e}")))?;
        let key: Option<Vec<u8>> = key.map(|k| match k {
            Either::A(b) => b.to_vec(),
            Either::B(s) => s.into_bytes(),
        });
        let headers = headers.unwrap_or_default();
        let pairs: Vec<(&[u8], &[u8])> = headers
            .iter()
            .map(|(name, value)| (&name[..], &value[..]))
            .collect();
        let (kind, partition) = match self.inner.place_with_headers(key.as_deref(), &pairs, n) {
            Placement::Partition(x) => ("partition", Some(x)),
            Placement::Sticky => ("sticky", None),
            Placement::Random => ("random", None),
            Placement::RoundRobin => ("roundrobin", None),
            Placement::Rejected => ("rejected", None),
        };
        Ok(Landing {
            kind: kind.to_string(),
            partition,
        })
    }
}
