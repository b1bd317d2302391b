//! The Python clients' sticky assignors: kafka-python's
//! `StickyPartitionAssignor` (and `CooperativeStickyAssignor`, the same
//! placement minus partitions that change owner) and aiokafka's
//! `StickyPartitionAssignor`, a port of Java's old sticky algorithm each,
//! step by step as their code runs it, flaws included: a claim of a partition
//! whose topic the claimer left can send a partition back to a member that
//! no longer subscribes to it, and generation 0 does not count as a
//! generation. aiokafka's copy lacks kafka-python's later repair of a
//! partition moved back and forth (`substitute_owner`).
//!
//! Two steps take "any" element of a Python set of partitions (a claim made
//! by an older generation to hand back first; a partition that moved the
//! other way to move back): CPython walks a set in the order of its string
//! hash, seeded anew in every process, so those steps differ between runs
//! of the same group. Each run here draws them from a seed; every other
//! step is fixed by sorted order or insertion order. Known answers:
//! `tests/vectors/regen/python-groups`.

use super::rng::Rng;
use super::{AssignError, Assignment, Group, Tp};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Which library's copy of the algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    /// kafka-python 3.0.12.
    KafkaPython,
    /// aiokafka 0.14.0.
    Aiokafka,
}

/// Python's `DEFAULT_GENERATION_ID`.
const DEFAULT_GENERATION: i32 = -1;

/// Partitions by (topic name, partition): a Python set, walked sorted here.
type PartitionSet = BTreeSet<(Vec<u8>, u32)>;

struct Movements {
    /// partition => (src, dst).
    moves: HashMap<Tp, (usize, usize)>,
    /// topic => (src, dst) => partitions.
    by_topic: HashMap<u32, HashMap<(usize, usize), PartitionSet>>,
}

struct Executor<'g> {
    group: &'g Group,
    lib: Library,
    rng: Rng,
    spec: &'static str,
    /// Each member's rank in id order (the sort key's tie-break).
    rank: Vec<usize>,
    /// `current_assignment`: `None` where the dict has no key.
    cur: Vec<Option<Vec<Tp>>>,
    previous: HashMap<Tp, usize>,
    owner: HashMap<Tp, usize>,
    fresh: bool,
    /// `partition_to_all_potential_consumers`, partitions of the group's topics.
    potential_consumers: HashMap<Tp, Vec<usize>>,
    /// `consumer_to_all_potential_partitions`.
    potential_partitions: Vec<Vec<Tp>>,
    /// `sorted_current_subscriptions`: (count, rank, member).
    sorted_subs: BTreeSet<(usize, usize, usize)>,
    sorted_partitions: Vec<Tp>,
    unassigned: Vec<Tp>,
    revocation_required: bool,
    movements: Movements,
}

fn key_error(spec: &'static str, what: String) -> AssignError {
    AssignError::LeaderThrows {
        assignor: spec,
        exception: "KeyError",
        message: what,
    }
}

fn value_error(spec: &'static str) -> AssignError {
    AssignError::LeaderThrows {
        assignor: spec,
        exception: "ValueError",
        message: String::new(),
    }
}

impl<'g> Executor<'g> {
    fn name(&self, tp: Tp) -> (Vec<u8>, u32) {
        (
            self.group.topics[tp.topic as usize]
                .name
                .as_bytes()
                .to_vec(),
            tp.partition,
        )
    }

    fn tp_of(&self, key: &(Vec<u8>, u32)) -> Tp {
        let t = self
            .group
            .topics
            .iter()
            .position(|t| t.name.as_bytes() == key.0.as_slice())
            .unwrap_or(0);
        Tp {
            topic: t as u32,
            partition: key.1,
        }
    }

    /// `self.current_assignment[c]` of a `defaultdict(list)`: read or create.
    fn cur(&mut self, c: usize) -> &mut Vec<Tp> {
        self.cur[c].get_or_insert_with(Vec::new)
    }

    fn len_of(&mut self, c: usize) -> usize {
        self.cur(c).len()
    }

    fn exists(&self, tp: Tp) -> bool {
        self.potential_consumers.contains_key(&tp)
    }

    fn subscribes(&self, m: usize, topic: u32) -> bool {
        let name = &self.group.topics[topic as usize].name;
        self.group.members[m].topics.iter().any(|t| t == name)
    }

    fn new(group: &'g Group, lib: Library, spec: &'static str, seed: u64) -> Executor<'g> {
        let n = group.members.len();
        let mut by_id: Vec<usize> = (0..n).collect();
        by_id.sort_by(|&a, &b| {
            group.members[a]
                .id
                .as_bytes()
                .cmp(group.members[b].id.as_bytes())
        });
        let mut rank = vec![0; n];
        for (r, &m) in by_id.iter().enumerate() {
            rank[m] = r;
        }
        let mut e = Executor {
            group,
            lib,
            rng: Rng::new(seed),
            spec,
            rank,
            cur: vec![None; n],
            previous: HashMap::new(),
            owner: HashMap::new(),
            fresh: false,
            potential_consumers: HashMap::new(),
            potential_partitions: vec![Vec::new(); n],
            sorted_subs: BTreeSet::new(),
            sorted_partitions: Vec::new(),
            unassigned: Vec::new(),
            revocation_required: false,
            movements: Movements {
                moves: HashMap::new(),
                by_topic: HashMap::new(),
            },
        };
        e.init_current_assignments();
        for (t, topic) in group.topics.iter().enumerate() {
            for partition in 0..topic.partitions {
                e.potential_consumers.insert(
                    Tp {
                        topic: t as u32,
                        partition,
                    },
                    Vec::new(),
                );
            }
        }
        let index: HashMap<&str, usize> = group
            .topics
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), i))
            .collect();
        for (m, member) in group.members.iter().enumerate() {
            for name in &member.topics {
                let Some(&t) = index.get(name.as_str()) else {
                    continue;
                };
                for partition in 0..group.topics[t].partitions {
                    let tp = Tp {
                        topic: t as u32,
                        partition,
                    };
                    e.potential_partitions[m].push(tp);
                    e.potential_consumers.entry(tp).or_default().push(m);
                }
            }
            if e.cur[m].is_none() {
                e.cur[m] = Some(Vec::new());
            }
        }
        e
    }

    fn init_current_assignments(&mut self) {
        // partition => generation => consumer, partitions in first-claim order.
        let mut order: Vec<Tp> = Vec::new();
        let mut by_gen: HashMap<Tp, Vec<(i32, usize)>> = HashMap::new();
        for (m, member) in self.group.members.iter().enumerate() {
            let generation = member.generation.unwrap_or(DEFAULT_GENERATION);
            for &tp in &member.owned {
                match by_gen.get_mut(&tp) {
                    Some(consumers) => {
                        let has = consumers.iter().any(|&(g, _)| g == generation);
                        // `if generation and generation in consumers`: 0 is false.
                        if generation != 0 && has {
                            continue;
                        }
                        match consumers.iter_mut().find(|(g, _)| *g == generation) {
                            Some(slot) => slot.1 = m,
                            None => consumers.push((generation, m)),
                        }
                    }
                    None => {
                        order.push(tp);
                        by_gen.insert(tp, vec![(generation, m)]);
                    }
                }
            }
        }
        for tp in order {
            let mut consumers = by_gen.remove(&tp).unwrap_or_default();
            consumers.sort_by_key(|c| std::cmp::Reverse(c.0));
            let top = consumers[0].1;
            self.cur(top).push(tp);
            if consumers.len() > 1 {
                self.previous.insert(tp, consumers[1].1);
            }
        }
        self.fresh = self.cur.iter().all(Option::is_none);
        for (m, list) in self.cur.iter().enumerate() {
            for &tp in list.iter().flatten() {
                self.owner.insert(tp, m);
            }
        }
    }

    fn identical(&self) -> bool {
        // Lists of the dicts' values compared one after the next, in order.
        let mut tps: Vec<&Tp> = self.potential_consumers.keys().collect();
        tps.sort();
        let first = tps.first().map(|tp| &self.potential_consumers[*tp]);
        if !tps
            .iter()
            .all(|tp| Some(&self.potential_consumers[*tp]) == first)
        {
            return false;
        }
        self.potential_partitions.windows(2).all(|w| w[0] == w[1])
    }

    fn all_by_potential(&self) -> Vec<Tp> {
        let mut all: Vec<(usize, (Vec<u8>, u32), Tp)> = self
            .potential_consumers
            .iter()
            .map(|(tp, c)| (c.len(), self.name(*tp), *tp))
            .collect();
        all.sort();
        all.into_iter().map(|(_, _, tp)| tp).collect()
    }

    /// An element of a Python set of partitions, as one run's hash order gives it.
    fn any_of(&mut self, mut set: Vec<(Vec<u8>, u32)>) -> (Vec<u8>, u32) {
        set.sort();
        let i = if set.len() > 1 {
            self.rng.below(set.len())
        } else {
            0
        };
        set.swap_remove(i)
    }

    fn populate_sorted_partitions(&mut self) {
        let all = self.all_by_potential();
        self.sorted_partitions.clear();
        if !self.fresh && self.identical() {
            let n = self.group.members.len();
            let mut assignments: Vec<Option<Vec<Tp>>> = self.cur.clone();
            for list in assignments.iter_mut().flatten() {
                list.retain(|tp| self.potential_consumers.contains_key(tp));
            }
            let mut set: BTreeSet<(usize, usize, usize)> = (0..n)
                .filter_map(|m| assignments[m].as_ref().map(|l| (l.len(), self.rank[m], m)))
                .collect();
            while let Some(last) = set.pop_last() {
                let m = last.2;
                let remaining = assignments[m].get_or_insert_with(Vec::new);
                let prev: Vec<(Vec<u8>, u32)> = remaining
                    .iter()
                    .filter(|tp| self.previous.contains_key(tp))
                    .map(|tp| self.name(*tp))
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                if !prev.is_empty() {
                    let pick = self.any_of(prev);
                    let tp = self.tp_of(&pick);
                    let remaining = assignments[m].get_or_insert_with(Vec::new);
                    if let Some(i) = remaining.iter().position(|x| *x == tp) {
                        remaining.remove(i);
                    }
                    self.sorted_partitions.push(tp);
                    set.insert((remaining.len(), self.rank[m], m));
                } else if let Some(tp) = remaining.pop() {
                    self.sorted_partitions.push(tp);
                    set.insert((remaining.len(), self.rank[m], m));
                }
            }
            let mut seen: HashSet<Tp> = self.sorted_partitions.iter().copied().collect();
            for tp in all {
                if seen.insert(tp) {
                    self.sorted_partitions.push(tp);
                }
            }
        } else {
            self.sorted_partitions = all;
        }
    }

    fn populate_partitions_to_reassign(&mut self) -> Result<(), AssignError> {
        self.unassigned = self.sorted_partitions.clone();
        for m in 0..self.group.members.len() {
            let Some(list) = self.cur[m].clone() else {
                continue;
            };
            let mut remove = Vec::new();
            for tp in list {
                if !self.exists(tp) {
                    remove.push(tp);
                } else if !self.subscribes(m, tp.topic) {
                    remove.push(tp);
                    self.revocation_required = true;
                } else {
                    match self.unassigned.iter().position(|x| *x == tp) {
                        Some(i) => {
                            self.unassigned.remove(i);
                        }
                        None => return Err(value_error(self.spec)),
                    }
                }
            }
            for tp in remove {
                let l = self.cur(m);
                if let Some(i) = l.iter().position(|x| *x == tp) {
                    l.remove(i);
                }
                self.owner.remove(&tp);
            }
        }
        Ok(())
    }

    fn sub_key(&mut self, m: usize) -> (usize, usize, usize) {
        (self.len_of(m), self.rank[m], m)
    }

    fn remove_sub(&mut self, m: usize) -> Result<(), AssignError> {
        let k = self.sub_key(m);
        if self.sorted_subs.remove(&k) {
            return Ok(());
        }
        // The element the set lacks, as Python prints it.
        let list = self.cur(m).clone();
        let items: Vec<String> = list.iter().map(|&tp| self.tp_repr(tp)).collect();
        let tuple = match items.as_slice() {
            [] => "()".to_string(),
            [one] => format!("({one},)"),
            many => format!("({})", many.join(", ")),
        };
        let id = py_str(&self.group.members[m].id);
        Err(key_error(
            self.spec,
            match self.lib {
                Library::KafkaPython => format!("({id}, {tuple})"),
                Library::Aiokafka => {
                    format!("ConsumerSubscription(consumer={id}, partitions={tuple})")
                }
            },
        ))
    }

    fn tp_repr(&self, tp: Tp) -> String {
        format!(
            "TopicPartition(topic={}, partition={})",
            py_str(&self.group.topics[tp.topic as usize].name),
            tp.partition
        )
    }

    fn add_sub(&mut self, m: usize) {
        let k = self.sub_key(m);
        self.sorted_subs.insert(k);
    }

    fn balance(&mut self) -> Result<(), AssignError> {
        self.sorted_subs = (0..self.group.members.len())
            .filter_map(|m| self.cur[m].as_ref().map(|l| (l.len(), self.rank[m], m)))
            .collect();
        let most = self.sorted_subs.last().map(|k| k.2);
        let initializing = most.is_none_or(|m| self.cur[m].as_ref().is_none_or(Vec::is_empty));
        for tp in self.unassigned.clone() {
            if self.potential_consumers.get(&tp).is_none_or(Vec::is_empty) {
                continue;
            }
            self.assign_partition(tp)?;
        }
        let fixed: HashSet<Tp> = self
            .potential_consumers
            .iter()
            .filter(|(_, c)| c.len() < 2)
            .map(|(tp, _)| *tp)
            .collect();
        self.sorted_partitions.retain(|tp| !fixed.contains(tp));
        self.unassigned.retain(|tp| !fixed.contains(tp));
        let mut fixed_assignments: Vec<(usize, Vec<Tp>)> = Vec::new();
        for m in 0..self.group.members.len() {
            if !self.can_consumer_participate(m) {
                self.remove_sub(m)?;
                let list = self.cur[m].take().unwrap_or_default();
                fixed_assignments.push((m, list));
            }
        }
        let pre = self.cur.clone();
        let pre_owner = self.owner.clone();
        if !self.revocation_required {
            let unassigned = self.unassigned.clone();
            self.perform_reassignments(&unassigned)?;
        }
        let sorted = self.sorted_partitions.clone();
        let performed = self.perform_reassignments(&sorted)?;
        if !initializing && performed && score(&self.cur) >= score(&pre) {
            self.cur = pre;
            self.owner = pre_owner;
        }
        for (m, list) in fixed_assignments {
            self.cur[m] = Some(list);
            self.add_sub(m);
        }
        Ok(())
    }

    fn can_partition_participate(&self, tp: Tp) -> bool {
        self.potential_consumers
            .get(&tp)
            .is_some_and(|c| c.len() >= 2)
    }

    fn can_consumer_participate(&mut self, m: usize) -> bool {
        let list = self.cur(m).clone();
        if list.len() < self.potential_partitions[m].len() {
            return true;
        }
        list.iter().any(|tp| self.can_partition_participate(*tp))
    }

    fn sorted_members(&self) -> Vec<usize> {
        self.sorted_subs.iter().map(|k| k.2).collect()
    }

    fn assign_partition(&mut self, tp: Tp) -> Result<(), AssignError> {
        for m in self.sorted_members() {
            if self.potential_partitions[m].contains(&tp) {
                self.remove_sub(m)?;
                self.cur(m).push(tp);
                self.owner.insert(tp, m);
                self.add_sub(m);
                break;
            }
        }
        Ok(())
    }

    fn is_balanced(&mut self) -> Result<bool, AssignError> {
        let (Some(first), Some(last)) = (self.sorted_subs.first(), self.sorted_subs.last()) else {
            return Err(key_error(self.spec, "None".into()));
        };
        let (least, most) = (first.2, last.2);
        if self.len_of(least) + 1 >= self.len_of(most) {
            return Ok(true);
        }
        let mut assigned: HashMap<Tp, usize> = HashMap::new();
        for (m, list) in self.cur.iter().enumerate() {
            for &tp in list.iter().flatten() {
                assigned.insert(tp, m);
            }
        }
        for m in self.sorted_members() {
            let count = self.len_of(m);
            if count == self.potential_partitions[m].len() {
                continue;
            }
            for tp in self.potential_partitions[m].clone() {
                if !self.cur(m).contains(&tp) {
                    let Some(&other) = assigned.get(&tp) else {
                        return Err(key_error(self.spec, self.tp_repr(tp)));
                    };
                    if count < self.len_of(other) {
                        return Ok(false);
                    }
                }
            }
        }
        Ok(true)
    }

    fn perform_reassignments(&mut self, partitions: &[Tp]) -> Result<bool, AssignError> {
        let mut performed = false;
        loop {
            let mut modified = false;
            for &tp in partitions {
                if self.is_balanced()? {
                    break;
                }
                let Some(&consumer) = self.owner.get(&tp) else {
                    return Err(AssignError::Unsupported {
                        assignor: self.spec,
                        reason: "a partition to reassign has no owner (the library's \
                                 current_assignment[None])"
                            .into(),
                    });
                };
                if let Some(&prev) = self.previous.get(&tp) {
                    if self.len_of(consumer) > self.len_of(prev) + 1 {
                        self.reassign_to(tp, prev)?;
                        performed = true;
                        modified = true;
                        continue;
                    }
                }
                let others = self
                    .potential_consumers
                    .get(&tp)
                    .cloned()
                    .unwrap_or_default();
                for other in others {
                    if self.len_of(consumer) > self.len_of(other) + 1 {
                        self.reassign(tp)?;
                        performed = true;
                        modified = true;
                        break;
                    }
                }
            }
            if !modified {
                return Ok(performed);
            }
        }
    }

    fn reassign(&mut self, tp: Tp) -> Result<(), AssignError> {
        let new = self
            .sorted_members()
            .into_iter()
            .find(|&m| self.potential_partitions[m].contains(&tp));
        match new {
            Some(m) => self.reassign_to(tp, m),
            None => Err(AssignError::LeaderThrows {
                assignor: self.spec,
                exception: "AssertionError",
                message: String::new(),
            }),
        }
    }

    fn reassign_to(&mut self, tp: Tp, new: usize) -> Result<(), AssignError> {
        let consumer = self.owner_of(tp)?;
        let moved = self.partition_to_move(tp, consumer, new)?;
        if self.lib == Library::KafkaPython {
            let substitute = self.owner_of(moved)?;
            if substitute != consumer {
                self.move_partition(tp, substitute)?;
            }
        }
        self.move_partition(moved, new)
    }

    fn owner_of(&self, tp: Tp) -> Result<usize, AssignError> {
        self.owner
            .get(&tp)
            .copied()
            .ok_or_else(|| key_error(self.spec, self.tp_repr(tp)))
    }

    fn partition_to_move(&mut self, tp: Tp, old: usize, new: usize) -> Result<Tp, AssignError> {
        if !self.movements.by_topic.contains_key(&tp.topic) {
            return Ok(tp);
        }
        let mut old = old;
        if let Some(&(src, dst)) = self.movements.moves.get(&tp) {
            if old != dst {
                return Err(value_error(self.spec));
            }
            old = src;
        }
        let set: Vec<(Vec<u8>, u32)> = match self.movements.by_topic[&tp.topic].get(&(new, old)) {
            None => return Ok(tp),
            Some(s) => s.iter().cloned().collect(),
        };
        let pick = self.any_of(set);
        Ok(self.tp_of(&pick))
    }

    fn move_partition(&mut self, tp: Tp, new: usize) -> Result<(), AssignError> {
        let old = self.owner_of(tp)?;
        self.remove_sub(old)?;
        self.remove_sub(new)?;
        self.record_move(tp, old, new)?;
        let list = self.cur(old);
        match list.iter().position(|x| *x == tp) {
            Some(i) => {
                list.remove(i);
            }
            None => return Err(value_error(self.spec)),
        }
        self.cur(new).push(tp);
        self.owner.insert(tp, new);
        self.add_sub(new);
        self.add_sub(old);
        Ok(())
    }

    fn record_move(&mut self, tp: Tp, old: usize, new: usize) -> Result<(), AssignError> {
        let key = self.name(tp);
        if let Some((src, dst)) = self.movements.moves.remove(&tp) {
            let topic = self.movements.by_topic.entry(tp.topic).or_default();
            if let Some(set) = topic.get_mut(&(src, dst)) {
                set.remove(&key);
                if set.is_empty() {
                    topic.remove(&(src, dst));
                }
            }
            if topic.is_empty() {
                self.movements.by_topic.remove(&tp.topic);
            }
            if dst != old {
                return Err(value_error(self.spec));
            }
            if src != new {
                self.add_move(tp, key, (src, new));
            }
        } else {
            self.add_move(tp, key, (old, new));
        }
        Ok(())
    }

    fn add_move(&mut self, tp: Tp, key: (Vec<u8>, u32), pair: (usize, usize)) {
        self.movements.moves.insert(tp, pair);
        self.movements
            .by_topic
            .entry(tp.topic)
            .or_default()
            .entry(pair)
            .or_default()
            .insert(key);
    }
}

/// Python's `repr` of a plain string.
fn py_str(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// `_get_balance_score`: the sum of the count differences of every pair.
fn score(cur: &[Option<Vec<Tp>>]) -> usize {
    let counts: Vec<usize> = cur.iter().flatten().map(Vec::len).collect();
    counts
        .iter()
        .enumerate()
        .map(|(i, a)| {
            counts[i + 1..]
                .iter()
                .map(|b| a.abs_diff(*b))
                .sum::<usize>()
        })
        .sum()
}

/// One run of the library's sticky assignor over `group`, its set orders
/// drawn from `seed`; `cooperative` (kafka-python's
/// `CooperativeStickyAssignor`) withholds each partition that another
/// member claims.
pub fn assign(
    group: &Group,
    lib: Library,
    cooperative: bool,
    seed: u64,
) -> Result<Assignment, AssignError> {
    let spec = match (lib, cooperative) {
        (Library::KafkaPython, false) => "kafka-python:sticky",
        (Library::KafkaPython, true) => "kafka-python:cooperative-sticky",
        (Library::Aiokafka, _) => "aiokafka:sticky",
    };
    // kafka-python's cooperative members send their topics sorted; the
    // eager sticky ones in their subscription set's order, read as given.
    let sorted;
    let group = if cooperative {
        let mut g = group.clone();
        for m in &mut g.members {
            m.topics.sort();
        }
        sorted = g;
        &sorted
    } else {
        group
    };
    let mut e = Executor::new(group, lib, spec, seed);
    e.populate_sorted_partitions();
    e.populate_partitions_to_reassign()?;
    e.balance()?;
    let n = group.members.len();
    let mut out: Vec<Vec<Tp>> = (0..n)
        .map(|m| e.cur[m].clone().unwrap_or_default())
        .collect();
    let mut withheld = Vec::new();
    if cooperative {
        // The claims' last claimer, members in order.
        let mut claimed: HashMap<Tp, usize> = HashMap::new();
        for (m, member) in group.members.iter().enumerate() {
            for &tp in &member.owned {
                claimed.insert(tp, m);
            }
        }
        for (m, list) in out.iter_mut().enumerate() {
            list.retain(|tp| match claimed.get(tp) {
                Some(&c) if c != m => {
                    withheld.push(*tp);
                    false
                }
                _ => true,
            });
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&m| e.rank[m]);
    let mut a = Assignment::new(group, order, out);
    let rank = super::topic_name_rank(group);
    withheld.sort_by_key(|tp| (rank[tp.topic as usize], tp.partition));
    a.withheld = withheld;
    Ok(a)
}
