//! The group an assignor is given and what it gives back: topics, members
//! with their subscriptions and claims, [`Group`], [`Assignment`].

use std::collections::HashMap;

/// Ids for `k` anonymous members, `m00`, `m01`, ...: zero-padded to one
/// width so that they sort in numeric order (the range and round-robin
/// assignors sort members by id), widening past 100 members.
pub fn member_names(k: usize) -> Vec<String> {
    let width = k.saturating_sub(1).to_string().len().max(2);
    (0..k).map(|i| format!("m{i:0width$}")).collect()
}

/// One partition of one topic: `topic` indexes [`Group::topics`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tp {
    /// Index into [`Group::topics`].
    pub topic: u32,
    /// Partition number.
    pub partition: u32,
}

/// A topic: its name, partition count and optional per-partition weights
/// (load, e.g. bytes or records per second), used by `copartitioned`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topic {
    /// Topic name.
    pub name: String,
    /// Number of partitions.
    pub partitions: u32,
    /// Load of each partition (length `partitions`); `None` counts each partition as 1.
    pub weights: Option<Vec<u64>>,
}

impl Topic {
    /// A topic with `partitions` partitions and no weights.
    pub fn new(name: impl Into<String>, partitions: u32) -> Topic {
        Topic {
            name: name.into(),
            partitions,
            weights: None,
        }
    }
}

/// A group member: id, optional static id, subscription, and what it owned in
/// the previous generation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Member id (`member.id`, broker-generated in real groups).
    pub id: String,
    /// `group.instance.id` of a static member; the Java and librdkafka
    /// assignors order static members by it.
    pub instance_id: Option<String>,
    /// Names of the subscribed topics; names of topics that do not exist are ignored.
    pub topics: Vec<String>,
    /// Partitions owned in the previous generation (for the sticky
    /// assignors). A partition past its topic's count is a stale claim:
    /// Java's sticky assignors keep it, as kafka-clients does, and every
    /// other assignor drops it.
    pub owned: Vec<Tp>,
    /// Generation of `owned` (`None`: unknown, Java's `DEFAULT_GENERATION`, -1).
    pub generation: Option<i32>,
}

impl Member {
    /// A dynamic member subscribed to `topics`, owning nothing.
    pub fn new<S: Into<String>>(
        id: impl Into<String>,
        topics: impl IntoIterator<Item = S>,
    ) -> Member {
        Member {
            id: id.into(),
            instance_id: None,
            topics: topics.into_iter().map(Into::into).collect(),
            owned: Vec::new(),
            generation: None,
        }
    }
}

/// The input of an assignor: members and the topics that exist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Members, in the order the group coordinator lists them (join order);
    /// only assignors that depend on hash-map order look at it.
    pub members: Vec<Member>,
    /// Topics, in the order given; KafkaJS walks the leader's subscription in
    /// this order and KIP-848 `uniform` uses it for its topic-id set order.
    pub topics: Vec<Topic>,
    /// The member that leads the group (index into `members`; the group
    /// file's `leader`); `None`: the first member. Assignors that deal the
    /// leader's own subscription (@platformatic/kafka's) read it.
    pub leader: Option<usize>,
}

impl Group {
    /// A group of `members` over `topics`.
    pub fn new(members: Vec<Member>, topics: Vec<Topic>) -> Group {
        Group {
            members,
            topics,
            leader: None,
        }
    }

    /// The index of topic `name`.
    pub fn topic_index(&self, name: &str) -> Option<u32> {
        self.topics
            .iter()
            .position(|t| t.name == name)
            .map(|i| i as u32)
    }

    /// `subs[m][t]`: whether member `m` subscribes to topic `t`.
    pub(super) fn subscriptions(&self) -> Vec<Vec<bool>> {
        let index: HashMap<&str, usize> = self
            .topics
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), i))
            .collect();
        let mut rows: Vec<Vec<bool>> = Vec::with_capacity(self.members.len());
        for (k, m) in self.members.iter().enumerate() {
            // Members usually share one topic list; comparing it is cheaper
            // than hashing every name again.
            if k > 0 && self.members[k - 1].topics == m.topics {
                let row = rows[k - 1].clone();
                rows.push(row);
                continue;
            }
            let mut s = vec![false; self.topics.len()];
            for name in &m.topics {
                if let Some(&i) = index.get(name.as_str()) {
                    s[i] = true;
                }
            }
            rows.push(s);
        }
        rows
    }

    /// Whether every member subscribes to the same existing topics.
    pub(super) fn homogeneous(&self) -> bool {
        let subs = self.subscriptions();
        subs.windows(2).all(|w| w[0] == w[1])
    }

    /// Owned partitions past their topic's partition count, as `(member
    /// index, partition)`: claims from a leader's stale metadata, or of a
    /// topic deleted and recreated with fewer partitions.
    pub fn stale_claims(&self) -> Vec<(usize, Tp)> {
        let mut out = Vec::new();
        for (m, member) in self.members.iter().enumerate() {
            for tp in &member.owned {
                if self.is_stale(tp) {
                    out.push((m, *tp));
                }
            }
        }
        out
    }

    /// A claim past its topic's count; a claim of no topic of the group
    /// (every assignor ignores it) is not one.
    fn is_stale(&self, tp: &Tp) -> bool {
        self.topics
            .get(tp.topic as usize)
            .is_some_and(|t| tp.partition >= t.partitions)
    }

    /// Whether any member claims a partition past its topic's count.
    pub fn has_stale_claims(&self) -> bool {
        self.members
            .iter()
            .any(|m| m.owned.iter().any(|tp| self.is_stale(tp)))
    }

    /// This group with every claim past a topic's count dropped.
    pub fn without_stale_claims(&self) -> Group {
        let mut g = self.clone();
        for m in &mut g.members {
            m.owned.retain(|tp| !self.is_stale(tp));
        }
        g
    }

    /// Total partitions of all topics.
    pub fn total_partitions(&self) -> u64 {
        self.topics.iter().map(|t| u64::from(t.partitions)).sum()
    }
}

/// The result of an assignor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// Member indices (into [`Group::members`]) in the order the assignor sorted them.
    pub order: Vec<usize>,
    /// For each member (indexed like [`Group::members`]), its partitions,
    /// sorted by topic name, then partition.
    pub partitions: Vec<Vec<Tp>>,
    /// Partitions withheld this round by a cooperative assignor because they
    /// change owner (KIP-429: the old owner revokes first, a follow-up
    /// rebalance hands them out). Sorted like `partitions`.
    pub withheld: Vec<Tp>,
}

impl Assignment {
    pub(super) fn new(
        group: &Group,
        order: Vec<usize>,
        mut partitions: Vec<Vec<Tp>>,
    ) -> Assignment {
        let rank = super::topic_name_rank(group);
        for list in &mut partitions {
            list.sort_by_key(|tp| (rank[tp.topic as usize], tp.partition));
        }
        Assignment {
            order,
            partitions,
            withheld: Vec::new(),
        }
    }

    /// An assignment whose lists are already sorted by topic name, then partition.
    pub(super) fn presorted(order: Vec<usize>, partitions: Vec<Vec<Tp>>) -> Assignment {
        Assignment {
            order,
            partitions,
            withheld: Vec::new(),
        }
    }

    /// `owner[t][p]`: the member that owns partition `p` of topic `t`, if any.
    pub fn owners(&self, group: &Group) -> Vec<Vec<Option<usize>>> {
        let mut owner: Vec<Vec<Option<usize>>> = group
            .topics
            .iter()
            .map(|t| vec![None; t.partitions as usize])
            .collect();
        for (m, list) in self.partitions.iter().enumerate() {
            for tp in list {
                // A partition past the topic's count (Java's sticky
                // assignors keep stale claims) has no place in the matrix.
                if let Some(slot) = owner[tp.topic as usize].get_mut(tp.partition as usize) {
                    *slot = Some(m);
                }
            }
        }
        owner
    }

    /// Partitions whose owner differs between `previous` (member id to
    /// partitions, topics by name) and this assignment. Partitions owned by
    /// no one before are not moves; partitions of departed members are.
    pub fn moves_from(&self, group: &Group, previous: &HashMap<(String, u32), String>) -> usize {
        let mut moved = 0;
        for (m, list) in self.partitions.iter().enumerate() {
            let id = &group.members[m].id;
            for tp in list {
                let key = (group.topics[tp.topic as usize].name.clone(), tp.partition);
                if let Some(prev) = previous.get(&key) {
                    if prev != id {
                        moved += 1;
                    }
                }
            }
        }
        moved
    }

    /// This assignment as a map from (topic name, partition) to member id.
    pub fn owner_map(&self, group: &Group) -> HashMap<(String, u32), String> {
        let mut map = HashMap::new();
        for (m, list) in self.partitions.iter().enumerate() {
            for tp in list {
                map.insert(
                    (group.topics[tp.topic as usize].name.clone(), tp.partition),
                    group.members[m].id.clone(),
                );
            }
        }
        map
    }
}
