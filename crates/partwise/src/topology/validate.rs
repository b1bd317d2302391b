//! The checks serde cannot do on a topology file: names present, unique
//! and declared, counts in range, specs that parse, patterns with one `%s`;
//! each failure located at the value at fault.

use super::location::{at, caused};
use super::schema::{RawFile, RawMembers};
use super::{ConsumerGroup, CopartitionGroup, Members, Producer, RedisFamily, Topic, Topology};
use crate::count::PartitionCount;
use crate::encoding::KeyFormat;
use crate::error::TopologyError;
use crate::partitioner::Partitioner;
use std::collections::HashSet;
use std::ops::Range;
use toml::Spanned;

/// The largest member count of a `members = "A..B"` range: each count is
/// one result of the check, computed or simulated within the file's budget.
const MAX_RANGE_MEMBERS: u32 = 1000;

/// The longest name (topic, group, member id, producer, family, key) in
/// bytes: Kafka's own limit for a topic name and a static member id. Every
/// name is printed where it is reported, so an unbounded one would make
/// each report as large as it is.
pub const MAX_NAME_BYTES: usize = 249;

pub(super) struct Validator<'a> {
    pub input: &'a str,
}

impl Validator<'_> {
    fn err<T>(
        &self,
        span: Range<usize>,
        field: String,
        msg: impl Into<String>,
    ) -> Result<T, TopologyError> {
        Err(at(self.input, span.start, field, msg))
    }

    fn name(&self, s: &Spanned<String>, field: String) -> Result<String, TopologyError> {
        if s.get_ref().trim().is_empty() {
            return self.err(s.span(), field, "must not be empty");
        }
        self.short(s.get_ref(), s.span(), field)?;
        Ok(s.get_ref().clone())
    }

    /// Refuses a name longer than [`MAX_NAME_BYTES`], without echoing it.
    fn short(&self, name: &str, span: Range<usize>, field: String) -> Result<(), TopologyError> {
        if name.len() > MAX_NAME_BYTES {
            return self.err(
                span,
                field,
                format!("a name of {} bytes; at most {MAX_NAME_BYTES}", name.len()),
            );
        }
        Ok(())
    }

    /// A non-empty name not already in `seen`; `what` names the section.
    fn unique_name(
        &self,
        s: &Spanned<String>,
        field: String,
        what: &str,
        seen: &mut HashSet<String>,
    ) -> Result<String, TopologyError> {
        let name = self.name(s, field.clone())?;
        if !seen.insert(name.clone()) {
            return self.err(s.span(), field, format!("duplicate {what} '{name}'"));
        }
        Ok(name)
    }

    /// Topic names listed in `list`: each declared, none twice.
    fn topic_list(
        &self,
        list: &Spanned<Vec<Spanned<String>>>,
        field: String,
        known: &HashSet<&str>,
        min: usize,
    ) -> Result<Vec<String>, TopologyError> {
        let mut seen = HashSet::new();
        for (i, t) in list.get_ref().iter().enumerate() {
            let f = format!("{field}[{i}]");
            if !known.contains(t.get_ref().as_str()) {
                return self.err(
                    t.span(),
                    f,
                    format!(
                        "unknown topic '{}' (not declared under [[topic]])",
                        t.get_ref()
                    ),
                );
            }
            if !seen.insert(t.get_ref().as_str()) {
                return self.err(
                    t.span(),
                    f,
                    format!("topic '{}' is listed twice", t.get_ref()),
                );
            }
        }
        if list.get_ref().len() < min {
            let what = if min == 1 {
                "at least one topic"
            } else {
                "at least two topics"
            };
            return self.err(list.span(), field, format!("needs {what}"));
        }
        Ok(list.get_ref().iter().map(|t| t.get_ref().clone()).collect())
    }

    pub fn topology(&self, raw: RawFile) -> Result<Topology, TopologyError> {
        let mut topics = Vec::new();
        let mut names: HashSet<&str> = HashSet::new();
        for (i, t) in raw.topic.iter().enumerate() {
            let name = self.name(&t.name, format!("topic[{i}].name"))?;
            if !names.insert(t.name.get_ref().as_str()) {
                return self.err(
                    t.name.span(),
                    format!("topic[{i}].name"),
                    format!("duplicate topic '{name}'"),
                );
            }
            let n = t.partitions.get_ref().0;
            let partitions = u32::try_from(n)
                .map_err(|_| ())
                .and_then(|n| PartitionCount::new(n).map_err(|_| ()))
                .or_else(|_| {
                    let why = if n <= 0 {
                        "a topic has at least 1 partition"
                    } else {
                        "too many partitions: partition ids are int32"
                    };
                    self.err(
                        t.partitions.span(),
                        format!("topic[{i}].partitions"),
                        format!("{n}: {why}"),
                    )
                })?;
            if let Some(k) = &t.key {
                self.short(k, t.name.span(), format!("topic[{i}].key"))?;
            }
            let mut producers = Vec::new();
            for (j, p) in t.producer.iter().enumerate() {
                let field = |f: &str| format!("topic[{i}].producer[{j}].{f}");
                if let Some(n) = &p.name {
                    self.short(n, t.name.span(), field("name"))?;
                }
                let partitioner = match &p.partitioner {
                    Some(s) => Some(s.get_ref().parse::<Partitioner>().map_err(|e| {
                        caused(self.input, s.span().start, field("partitioner"), e)
                    })?),
                    None if p.keyless => None,
                    None => {
                        let span = t.name.span();
                        return self.err(
                            span,
                            field("partitioner"),
                            "missing (required unless keyless = true)",
                        );
                    }
                };
                let key_format = match &p.key_format {
                    Some(s) => s
                        .get_ref()
                        .parse::<KeyFormat>()
                        .map_err(|e| caused(self.input, s.span().start, field("key_format"), e))?,
                    None => KeyFormat::String,
                };
                producers.push(Producer {
                    name: p.name.clone(),
                    partitioner,
                    key_format,
                    keyless: p.keyless,
                });
            }
            topics.push(Topic {
                name,
                partitions,
                key: t.key.clone(),
                producers,
            });
        }

        let mut copartition_groups = Vec::new();
        let mut group_names = HashSet::new();
        for (i, g) in raw.copartition.iter().enumerate() {
            let name = self.unique_name(
                &g.name,
                format!("copartition[{i}].name"),
                "co-partition group",
                &mut group_names,
            )?;
            let topics =
                self.topic_list(&g.topics, format!("copartition[{i}].topics"), &names, 2)?;
            copartition_groups.push(CopartitionGroup { name, topics });
        }

        let mut consumer_groups = Vec::new();
        let mut cg_names = HashSet::new();
        for (i, c) in raw.consumer_group.iter().enumerate() {
            let name = self.unique_name(
                &c.name,
                format!("consumer_group[{i}].name"),
                "consumer group",
                &mut cg_names,
            )?;
            let afield = format!("consumer_group[{i}].assignor");
            let assignor = self.name(&c.assignor, afield.clone())?;
            if let Err(e) = assignor.parse::<crate::assign::Assignor>() {
                return Err(caused(self.input, c.assignor.span().start, afield, e));
            }
            let mfield = format!("consumer_group[{i}].members");
            let members = match c.members.get_ref() {
                RawMembers::Count(n) => match u32::try_from(*n) {
                    Ok(n) if n >= 1 => Members::Count(n),
                    _ => {
                        return self.err(
                            c.members.span(),
                            mfield,
                            format!("{n}: a group has at least 1 member"),
                        )
                    }
                },
                RawMembers::Ids(ids) => {
                    let mut seen = HashSet::new();
                    for (j, id) in ids.iter().enumerate() {
                        self.short(id, c.members.span(), format!("{mfield}[{j}]"))?;
                        if id.trim().is_empty() {
                            return self.err(
                                c.members.span(),
                                mfield,
                                "a member id must not be empty",
                            );
                        }
                        if !seen.insert(id.as_str()) {
                            return self.err(
                                c.members.span(),
                                mfield,
                                format!("member '{id}' is listed twice"),
                            );
                        }
                    }
                    if ids.is_empty() {
                        return self.err(c.members.span(), mfield, "a group has at least 1 member");
                    }
                    Members::Ids(ids.clone())
                }
                RawMembers::Range(r) => {
                    let parsed = r.split_once("..").and_then(|(lo, hi)| {
                        Some((
                            lo.trim().parse::<u32>().ok()?,
                            hi.trim().parse::<u32>().ok()?,
                        ))
                    });
                    match parsed {
                        Some((lo, hi)) if lo >= 1 && lo <= hi && hi <= MAX_RANGE_MEMBERS => {
                            Members::Range(lo, hi)
                        }
                        _ => {
                            return self.err(
                                c.members.span(),
                                mfield,
                                format!(
                                    "'{r}': a range of member counts is A..B with 1 <= A <= B <= {MAX_RANGE_MEMBERS}"
                                ),
                            )
                        }
                    }
                }
            };
            let subscriptions = self.topic_list(
                &c.subscriptions,
                format!("consumer_group[{i}].subscriptions"),
                &names,
                1,
            )?;
            consumer_groups.push(ConsumerGroup {
                name,
                assignor,
                members,
                subscriptions,
            });
        }

        let mut redis_families = Vec::new();
        let mut family_names = HashSet::new();
        for (i, f) in raw.redis_family.iter().enumerate() {
            let name = self.unique_name(
                &f.name,
                format!("redis_family[{i}].name"),
                "Redis family",
                &mut family_names,
            )?;
            let mut patterns = Vec::new();
            for (j, p) in f.patterns.get_ref().iter().enumerate() {
                let field = format!("redis_family[{i}].patterns[{j}]");
                match p.get_ref().matches("%s").count() {
                    1 => {}
                    0 => {
                        return self.err(
                            p.span(),
                            field,
                            format!("pattern '{}' has no %s where the key goes", p.get_ref()),
                        )
                    }
                    _ => {
                        return self.err(
                            p.span(),
                            field,
                            format!("pattern '{}' has more than one %s", p.get_ref()),
                        )
                    }
                }
                if patterns.contains(p.get_ref()) {
                    return self.err(
                        p.span(),
                        field,
                        format!("pattern '{}' is listed twice", p.get_ref()),
                    );
                }
                patterns.push(p.get_ref().clone());
            }
            if patterns.len() < 2 {
                return self.err(
                    f.patterns.span(),
                    format!("redis_family[{i}].patterns"),
                    "needs at least two patterns",
                );
            }
            redis_families.push(RedisFamily { name, patterns });
        }

        Ok(Topology {
            topics,
            copartition_groups,
            consumer_groups,
            redis_families,
        })
    }
}
