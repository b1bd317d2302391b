//! Topology files and the co-partitioning check.
//!
//! This module owns the TOML description of a deployment that teams keep in
//! Git (topics, the producers that write them, co-partition groups, consumer
//! groups and Redis key families), its validation with errors that name the
//! line, column and field at fault, and [`check`]: for every co-partition group
//! and Redis family, a verdict with every reason it breaks.
//!
//! It parses text only; reading the file is the caller's business, so the core
//! stays free of I/O.
//!
//! ```
//! use partwise::topology::{check, Topology};
//!
//! let t: Topology = r#"
//! [[topic]]
//! name = "market-updates"
//! partitions = 6
//! producer = [{ partitioner = "kafkajs", key_format = "string" }]
//!
//! [[topic]]
//! name = "notifications"
//! partitions = 8
//! producer = [{ partitioner = "java" }]
//!
//! [[copartition]]
//! name = "ticker"
//! topics = ["market-updates", "notifications"]
//! "#.parse()?;
//! let report = check(&t, &[b"BBCA"]);
//! assert!(!report.ok());
//! assert_eq!(report.groups[0].reasons[0].kind(), "partition_counts_differ");
//! # Ok::<(), partwise::topology::TopologyError>(())
//! ```
//!
//! # The file
//!
//! ```toml
//! [[topic]]
//! name = "notifications"        # required, unique
//! partitions = 6                # required, 1 ..= 2147483647
//! key = "symbol"                # optional: what the key is; differing keys break a group
//! [[topic.producer]]
//! name = "alerts-service"       # optional label
//! partitioner = "kafkajs"       # a partitioner spec (`client` is accepted too)
//! key_format = "string"         # how the key is serialized (default "string")
//! keyless = false               # true: this producer writes records without keys
//!
//! [[copartition]]               # topics that are joined
//! name = "ticker"
//! topics = ["market-updates", "notifications"]
//!
//! [[consumer_group]]            # placement: crate::placement runs its assignor
//! name = "ticker-joiner"
//! assignor = "kafkajs:roundrobin"
//! members = 3                   # a count, a list of member ids, or "1..8"
//! subscriptions = ["market-updates", "notifications"]
//!
//! [[redis_family]]              # keys that must share a slot
//! name = "ticker"
//! patterns = ["market:{%s}", "notif:{%s}"]
//! ```

use crate::count::PartitionCount;
use crate::encoding::KeyFormat;
use crate::partitioner::{KeyRule, Partitioner};
use crate::slot;
use serde::Deserialize;
use std::collections::HashSet;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// A validated topology file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// The topics, in file order; names are unique.
    pub topics: Vec<Topic>,
    /// Groups of topics that are joined, so must be co-partitioned.
    pub copartition_groups: Vec<CopartitionGroup>,
    /// Consumer groups (validated, not simulated).
    pub consumer_groups: Vec<ConsumerGroup>,
    /// Redis key families whose members must share a slot.
    pub redis_families: Vec<RedisFamily>,
}

/// A Kafka topic and the producers that write it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topic {
    /// The topic name.
    pub name: String,
    /// Its partition count.
    pub partitions: PartitionCount,
    /// What the key is (`symbol`, `userId`), when declared.
    pub key: Option<String>,
    /// The producers that write it.
    pub producers: Vec<Producer>,
}

/// One producer (client) writing a topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Producer {
    /// A label, when given.
    pub name: Option<String>,
    /// Its partitioner (absent only for a declared keyless producer).
    pub partitioner: Option<Partitioner>,
    /// How it serializes keys.
    pub key_format: KeyFormat,
    /// Declared to write records without keys.
    pub keyless: bool,
}

impl Producer {
    /// How this producer places keyed records, or `None` when its records do
    /// not follow their key: declared keyless, or a partitioner that ignores keys.
    pub fn keyed_partitioner(&self) -> Option<Partitioner> {
        match self.partitioner {
            Some(p) if !self.keyless && matches!(p.key_rule(), KeyRule::Hash(..)) => Some(p),
            _ => None,
        }
    }
}

/// Topics that are joined, so a key must land on the same partition number in each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopartitionGroup {
    /// The group name.
    pub name: String,
    /// Its topics (at least two, each declared under `[[topic]]`).
    pub topics: Vec<String>,
}

/// A consumer group. Its assignor is kept as written: the assignor simulations
/// interpret it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerGroup {
    /// The group id.
    pub name: String,
    /// The assignor spec, as written.
    pub assignor: String,
    /// Its members.
    pub members: Members,
    /// The topics it subscribes to, in the order given.
    pub subscriptions: Vec<String>,
}

/// The members of a consumer group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Members {
    /// This many anonymous members.
    Count(u32),
    /// Members by id (unique, non-empty).
    Ids(Vec<String>),
    /// Every member count from the first to the second, inclusive
    /// (`members = "1..8"`): placement is checked at each.
    Range(u32, u32),
}

/// Redis key patterns whose keys for one logical key must share a slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisFamily {
    /// The family name.
    pub name: String,
    /// Patterns with exactly one `%s` where the logical key goes.
    pub patterns: Vec<String>,
}

/// A topology file that cannot be used: the place and the field at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologyError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The field path, such as `topic[1].partitions` (indices from 0), or
    /// empty when the error is not inside a field.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: ", self.line, self.column)?;
        if !self.field.is_empty() {
            write!(f, "field '{}': ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for TopologyError {}

// The raw file, as serde sees it. Spans are kept for the checks serde cannot do.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    topic: Vec<RawTopic>,
    #[serde(default)]
    copartition: Vec<RawGroup>,
    #[serde(default)]
    consumer_group: Vec<RawConsumerGroup>,
    #[serde(default)]
    redis_family: Vec<RawFamily>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopic {
    name: Spanned<String>,
    partitions: Spanned<i64>,
    key: Option<String>,
    #[serde(default)]
    producer: Vec<RawProducer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProducer {
    name: Option<String>,
    #[serde(alias = "client")]
    partitioner: Option<Spanned<String>>,
    key_format: Option<Spanned<String>>,
    #[serde(default)]
    keyless: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGroup {
    name: Spanned<String>,
    topics: Spanned<Vec<Spanned<String>>>,
}

/// The largest member count of a `members = "A..B"` range: each count runs
/// the assignor once.
const MAX_RANGE_MEMBERS: u32 = 1000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConsumerGroup {
    name: Spanned<String>,
    assignor: Spanned<String>,
    members: Spanned<RawMembers>,
    subscriptions: Spanned<Vec<Spanned<String>>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawMembers {
    Count(i64),
    Ids(Vec<String>),
    Range(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFamily {
    name: Spanned<String>,
    patterns: Spanned<Vec<Spanned<String>>>,
}

impl FromStr for Topology {
    type Err = TopologyError;

    fn from_str(s: &str) -> Result<Topology, TopologyError> {
        Topology::parse(s)
    }
}

impl Topology {
    /// Parses and validates a topology file's text.
    pub fn parse(input: &str) -> Result<Topology, TopologyError> {
        let tree = match DeTable::parse(input) {
            Ok(t) => t,
            Err(e) => return Err(syntax_error(input, &e)),
        };
        let raw: RawFile = toml::from_str(input).map_err(|e| {
            let off = e.span().map_or(0, |s| s.start);
            let mut field = field_at(&tree, off);
            let mut message = e.message().trim().to_string();
            // serde points a missing field at its table: name the field itself.
            if let Some(missing) = backticked(&message, "missing field `") {
                push_key(&mut field, missing);
            }
            message = message.replace("expected i64", "expected an integer");
            if message.contains("did not match any variant of untagged enum RawMembers") {
                message =
                    "expected a member count, a list of member ids or a range such as \"1..8\""
                        .into();
            }
            at(input, off, field, message)
        })?;
        Validator { input }.topology(raw)
    }

    /// The topic called `name`.
    pub fn topic(&self, name: &str) -> Option<&Topic> {
        self.topics.iter().find(|t| t.name == name)
    }

    /// The co-partition groups that contain topic `name`.
    pub fn groups_of<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a CopartitionGroup> {
        self.copartition_groups
            .iter()
            .filter(move |g| g.topics.iter().any(|t| t == name))
    }
}

fn backticked<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = &message[message.find(prefix)? + prefix.len()..];
    rest.split('`').next()
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

fn line_col(input: &str, offset: usize) -> (usize, usize) {
    let mut off = offset.min(input.len());
    while !input.is_char_boundary(off) {
        off -= 1;
    }
    let before = &input[..off];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

fn at(input: &str, offset: usize, field: String, message: impl Into<String>) -> TopologyError {
    let (line, column) = line_col(input, offset);
    TopologyError {
        line,
        column,
        field,
        message: message.into(),
    }
}

fn syntax_error(input: &str, e: &toml::de::Error) -> TopologyError {
    let off = e.span().map_or(0, |s| s.start);
    let (line, _) = line_col(input, off);
    // A syntax error has no tree to walk: name the key written on that line.
    let text = input.lines().nth(line - 1).unwrap_or("");
    let field = text
        .split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"').to_string())
        .filter(|k| !k.is_empty() && !k.contains(['[', '{', '#']))
        .unwrap_or_default();
    at(
        input,
        off,
        field,
        format!("invalid TOML: {}", e.message().trim()),
    )
}

/// The path of the deepest key or array element whose span contains `off`.
fn field_at(tree: &Spanned<DeTable<'_>>, off: usize) -> String {
    find_in_table(tree.get_ref(), off).unwrap_or_default()
}

fn contains(span: Range<usize>, off: usize) -> bool {
    span.start <= off && off < span.end.max(span.start + 1)
}

// Every entry is searched, not only those whose span contains `off`: the span
// of a `[[table]]` element covers its header line, not its keys.
fn find_in_table(t: &DeTable<'_>, off: usize) -> Option<String> {
    for (k, v) in t.iter() {
        let inner = find_in_value(v.get_ref(), off);
        if inner.is_some() || contains(k.span(), off) || contains(v.span(), off) {
            let mut path = k.get_ref().to_string();
            if let Some(rest) = inner {
                if !rest.starts_with('[') {
                    path.push('.');
                }
                path.push_str(&rest);
            }
            return Some(path);
        }
    }
    None
}

fn find_in_value(v: &DeValue<'_>, off: usize) -> Option<String> {
    match v {
        DeValue::Table(t) => find_in_table(t, off),
        DeValue::Array(a) => a.iter().enumerate().find_map(|(i, e)| {
            let inner = find_in_value(e.get_ref(), off);
            (inner.is_some() || contains(e.span(), off)).then(|| match inner {
                Some(rest) if rest.starts_with('[') => format!("[{i}]{rest}"),
                Some(rest) => format!("[{i}].{rest}"),
                None => format!("[{i}]"),
            })
        }),
        _ => None,
    }
}

struct Validator<'a> {
    input: &'a str,
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
        Ok(s.get_ref().clone())
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

    fn topology(&self, raw: RawFile) -> Result<Topology, TopologyError> {
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
            let n = *t.partitions.get_ref();
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
            let mut producers = Vec::new();
            for (j, p) in t.producer.iter().enumerate() {
                let field = |f: &str| format!("topic[{i}].producer[{j}].{f}");
                let partitioner =
                    match &p.partitioner {
                        Some(s) => Some(s.get_ref().parse::<Partitioner>().or_else(|e| {
                            self.err(s.span(), field("partitioner"), e.to_string())
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
                        .or_else(|e| self.err(s.span(), field("key_format"), e.to_string()))?,
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
                return self.err(c.assignor.span(), afield, e.to_string());
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
                    for id in ids {
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

/// Whether two key formats write the same bytes for the same logical key:
/// `utf8` and `string` both write the text's UTF-8 bytes.
fn same_bytes(a: KeyFormat, b: KeyFormat) -> bool {
    let norm = |f| {
        if f == KeyFormat::Utf8 {
            KeyFormat::String
        } else {
            f
        }
    };
    norm(a) == norm(b)
}

/// A producer named in a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerRef {
    /// Its topic.
    pub topic: String,
    /// Its index among the topic's producers.
    pub index: usize,
    /// Its label, when given.
    pub name: Option<String>,
    /// Its partitioner, when declared.
    pub partitioner: Option<Partitioner>,
    /// Its key format.
    pub key_format: KeyFormat,
}

impl fmt::Display for ProducerRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(n) => write!(f, "{} producer '{n}'", self.topic)?,
            None => write!(f, "{} producer[{}]", self.topic, self.index)?,
        }
        match self.partitioner {
            Some(p) => write!(f, " ({p}, {})", self.key_format),
            None => write!(f, " ({})", self.key_format),
        }
    }
}

/// How many sample keys a difference affects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleDiff {
    /// Sample keys compared.
    pub keys: usize,
    /// Keys that land on different partition numbers (including those one
    /// side cannot encode at all).
    pub differ: usize,
    /// Keys that one side's key format cannot encode (an `int32` producer
    /// cannot write `BBCA`).
    pub unencodable: usize,
}

impl SampleDiff {
    /// `differ / keys`, 0 when there are no keys.
    pub fn fraction(&self) -> f64 {
        if self.keys == 0 {
            0.0
        } else {
            self.differ as f64 / self.keys as f64
        }
    }
}

impl fmt::Display for SampleDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} sample keys land differently",
            self.differ, self.keys
        )?;
        if self.unencodable > 0 {
            write!(f, ", {} cannot be encoded at all", self.unencodable)?;
        }
        Ok(())
    }
}

/// One way a co-partition group breaks.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Reason {
    /// The topics do not all have the same partition count.
    PartitionCountsDiffer {
        /// Each topic's count, in group order.
        counts: Vec<(String, u32)>,
        /// Sample keys whose partition differs between the counts, under one
        /// producer's partitioner and key format (so only the count varies).
        sample: Option<SampleDiff>,
    },
    /// The topics declare different keys (`symbol` vs `userId`).
    KeysDiffer {
        /// Each topic that declares a key, with it.
        keys: Vec<(String, String)>,
    },
    /// A topic declares no producers, so nothing shows how it is keyed.
    NoProducers {
        /// The topic.
        topic: String,
    },
    /// A producer whose records do not follow their key.
    KeylessProducer {
        /// The producer.
        producer: ProducerRef,
        /// Declared `keyless = true` (else its partitioner ignores keys).
        declared: bool,
        /// `round-robin`, `random`, `sticky`, or `keyless` when declared.
        behaviour: &'static str,
    },
    /// Two producers hash keys differently.
    PartitionersDisagree {
        /// One producer.
        a: ProducerRef,
        /// The other.
        b: ProducerRef,
        /// Sample keys placed differently by the two partitioners, with the
        /// same key bytes (`a`'s format) and count (`a`'s topic).
        sample: Option<SampleDiff>,
    },
    /// Two producers serialize the same logical key to different bytes.
    KeyEncodingsDiffer {
        /// One producer.
        a: ProducerRef,
        /// The other.
        b: ProducerRef,
        /// Sample keys placed differently by `a`'s partitioner and count
        /// when encoded by each format.
        sample: Option<SampleDiff>,
    },
}

impl Reason {
    /// A stable identifier for scripts: `partition_counts_differ`,
    /// `keys_differ`, `no_producers`, `keyless_producer`,
    /// `partitioners_disagree` or `key_encodings_differ`.
    pub fn kind(&self) -> &'static str {
        match self {
            Reason::PartitionCountsDiffer { .. } => "partition_counts_differ",
            Reason::KeysDiffer { .. } => "keys_differ",
            Reason::NoProducers { .. } => "no_producers",
            Reason::KeylessProducer { .. } => "keyless_producer",
            Reason::PartitionersDisagree { .. } => "partitioners_disagree",
            Reason::KeyEncodingsDiffer { .. } => "key_encodings_differ",
        }
    }

    /// What to change so that the reason goes away, in the terms of the
    /// client at fault where there is one.
    pub fn fix(&self) -> String {
        match self {
            Reason::PartitionCountsDiffer { counts, .. } => {
                let max = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
                let smaller: Vec<&str> = counts
                    .iter()
                    .filter(|(_, n)| *n < max)
                    .map(|(t, _)| t.as_str())
                    .collect();
                format!(
                    "give every topic the same count: raise {} to {max} partitions (kafka-topics --alter --partitions {max}); keys move when a count changes and records already written stay put, so change them together (partwise resize shows which keys move)",
                    smaller.join(", ")
                )
            }
            Reason::KeysDiffer { keys } => format!(
                "key every topic by the same field ({}), so one entity has one key everywhere",
                keys.first().map_or("", |(_, k)| k.as_str())
            ),
            Reason::NoProducers { topic } => format!(
                "declare the producers of {topic} ([[topic.producer]] with partitioner and key_format) so that the layout can be proven"
            ),
            Reason::KeylessProducer {
                producer, declared, ..
            } => match (declared, producer.partitioner) {
                (false, Some(p)) => {
                    let java: Partitioner = Partitioner::all().next().expect("java is first");
                    match java.compatible_in(p.client()).first() {
                        Some(c) => format!(
                            "make {producer} hash its keys: {} ({}, Java-compatible murmur2)",
                            c.setting(),
                            c.spec()
                        ),
                        None => format!(
                            "make {producer} hash its keys with a key-hashing partitioner of {}",
                            p.client()
                        ),
                    }
                }
                _ => format!("write the join key on {producer}'s records"),
            },
            Reason::PartitionersDisagree { a, b, .. } => match (a.partitioner, b.partitioner) {
                (Some(pa), Some(pb)) => {
                    if let Some(c) = pa.compatible_in(pb.client()).first() {
                        format!(
                            "set {b} to {} ({}), which places keys as {} does",
                            c.setting(),
                            c.spec(),
                            pa.spec()
                        )
                    } else if let Some(c) = pb.compatible_in(pa.client()).first() {
                        format!(
                            "set {a} to {} ({}), which places keys as {} does",
                            c.setting(),
                            c.spec(),
                            pb.spec()
                        )
                    } else {
                        format!(
                            "no {} partitioner places keys as {} does: give both producers a Java-compatible murmur2 partitioner, or set partitions explicitly (partwise kafka produce -P SPEC)",
                            pb.client(),
                            pa.spec()
                        )
                    }
                }
                _ => "declare both producers' partitioners".to_string(),
            },
            Reason::KeyEncodingsDiffer { a, b, .. } => format!(
                "serialize the key one way in both: give {b} the key serializer of {a} ({}), or the other way round",
                a.key_format
            ),
        }
    }

    /// The sample-key figure attached to the reason, if any.
    pub fn sample(&self) -> Option<SampleDiff> {
        match self {
            Reason::PartitionCountsDiffer { sample, .. }
            | Reason::PartitionersDisagree { sample, .. }
            | Reason::KeyEncodingsDiffer { sample, .. } => *sample,
            _ => None,
        }
    }
}

fn sample_suffix(f: &mut fmt::Formatter<'_>, s: &Option<SampleDiff>) -> fmt::Result {
    match s {
        Some(s) => write!(f, " ({s})"),
        None => Ok(()),
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::PartitionCountsDiffer { counts, sample } => {
                let list: Vec<String> = counts.iter().map(|(t, n)| format!("{t} {n}")).collect();
                write!(
                    f,
                    "partition counts differ: {}; the modulus changes the partition of a key",
                    list.join(", ")
                )?;
                sample_suffix(f, sample)
            }
            Reason::KeysDiffer { keys } => {
                let list: Vec<String> = keys.iter().map(|(t, k)| format!("{t} by {k}")).collect();
                write!(
                    f,
                    "keys differ: {}; the same entity lands on unrelated partitions",
                    list.join(", ")
                )
            }
            Reason::NoProducers { topic } => {
                write!(f, "topic {topic} declares no producers: nothing shows how its keys are partitioned")
            }
            Reason::KeylessProducer {
                producer,
                declared,
                behaviour,
            } => {
                if *declared {
                    write!(f, "keyless producer: {producer} writes records without keys, so they land on any partition")
                } else {
                    write!(f, "keyless producer: {producer} ignores keys ({behaviour}), so records land on any partition")
                }
            }
            Reason::PartitionersDisagree { a, b, sample } => {
                write!(
                    f,
                    "partitioners disagree: {a} and {b} hash keys differently"
                )?;
                sample_suffix(f, sample)
            }
            Reason::KeyEncodingsDiffer { a, b, sample } => {
                write!(
                    f,
                    "key encodings differ: {a} writes {} and {b} writes {}, so the key bytes differ",
                    a.key_format, b.key_format
                )?;
                sample_suffix(f, sample)
            }
        }
    }
}

/// Sample keys that every keyed producer of a group puts on one partition number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alignment {
    /// Sample keys.
    pub keys: usize,
    /// Keys on the same partition number in every topic, by every producer.
    pub aligned: usize,
}

/// The verdict on one co-partition group.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupVerdict {
    /// The group name.
    pub name: String,
    /// Its topics.
    pub topics: Vec<String>,
    /// Every reason it breaks; empty when co-partitioned.
    pub reasons: Vec<Reason>,
    /// The sample keys, end to end (when keys were given and a producer is keyed).
    pub sample: Option<Alignment>,
}

impl GroupVerdict {
    /// Whether the group is co-partitioned.
    pub fn ok(&self) -> bool {
        self.reasons.is_empty()
    }
}

/// One way a Redis family fails to share a slot.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FamilyReason {
    /// Patterns without a hash tag: their keys hash whole.
    NoHashTag {
        /// The untagged patterns.
        patterns: Vec<String>,
    },
    /// The patterns' hash tags differ, so they hash different text.
    HashTagsDiffer {
        /// Each pattern with its tag.
        tags: Vec<(String, String)>,
    },
    /// Sample keys whose family members land in different slots (an empty
    /// key leaves an empty tag, which Redis ignores).
    SampleKeysSplit {
        /// Keys that split.
        split: usize,
        /// Sample keys.
        keys: usize,
    },
}

impl FamilyReason {
    /// A stable identifier: `no_hash_tag`, `hash_tags_differ` or `sample_keys_split`.
    pub fn kind(&self) -> &'static str {
        match self {
            FamilyReason::NoHashTag { .. } => "no_hash_tag",
            FamilyReason::HashTagsDiffer { .. } => "hash_tags_differ",
            FamilyReason::SampleKeysSplit { .. } => "sample_keys_split",
        }
    }
}

impl FamilyReason {
    /// What to change in the patterns so that a family shares one slot.
    pub fn fix(&self) -> String {
        match self {
            FamilyReason::NoHashTag { patterns } => {
                let tagged: Vec<String> = patterns.iter().map(|p| p.replacen("%s", "{%s}", 1)).collect();
                format!(
                    "put the key in a hash tag so that only it is hashed: {}",
                    tagged.join(", ")
                )
            }
            FamilyReason::HashTagsDiffer { tags } => format!(
                "use one hash tag, the same in every pattern, around the key alone (e.g. {{%s}}); today {}",
                tags.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join(", ")
            ),
            FamilyReason::SampleKeysSplit { .. } => {
                "an empty key leaves an empty tag {}, which Redis ignores: never write an empty logical key (or give it a placeholder)".to_string()
            }
        }
    }
}

impl fmt::Display for FamilyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FamilyReason::NoHashTag { patterns } => write!(
                f,
                "no hash tag in {}: the whole key is hashed, so members of one family land in unrelated slots",
                patterns.join(", ")
            ),
            FamilyReason::HashTagsDiffer { tags } => {
                let list: Vec<String> = tags.iter().map(|(p, t)| format!("{p} hashes {{{t}}}")).collect();
                write!(f, "hash tags differ: {}", list.join(", "))
            }
            FamilyReason::SampleKeysSplit { split, keys } => {
                write!(f, "{split} of {keys} sample keys put family members in different slots")
            }
        }
    }
}

/// The verdict on one Redis key family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyVerdict {
    /// The family name.
    pub name: String,
    /// Its patterns.
    pub patterns: Vec<String>,
    /// Each pattern's hash tag (with `%s` in it), `None` when untagged.
    pub hash_tags: Vec<Option<String>>,
    /// Whether every pattern has the same hash tag, and it contains the key.
    pub shared_hash_tag: bool,
    /// Sample keys whose family members all share one slot (when keys were given).
    pub colocated: Option<Alignment>,
    /// Every reason the family does not co-locate; empty when it does.
    pub reasons: Vec<FamilyReason>,
}

impl FamilyVerdict {
    /// Whether the family's keys co-locate.
    pub fn ok(&self) -> bool {
        self.reasons.is_empty()
    }
}

/// The result of [`check`].
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// One verdict per co-partition group, in file order.
    pub groups: Vec<GroupVerdict>,
    /// One verdict per Redis family, in file order.
    pub families: Vec<FamilyVerdict>,
    /// One verdict per consumer group and co-partition group it reads.
    pub placements: Vec<crate::placement::PlacementVerdict>,
    /// The number of sample keys used.
    pub sample_keys: usize,
}

impl Report {
    /// Whether every group is co-partitioned, every family co-located and
    /// every consumer group keeps its units whole.
    pub fn ok(&self) -> bool {
        self.groups.iter().all(GroupVerdict::ok)
            && self.families.iter().all(FamilyVerdict::ok)
            && self.placements.iter().all(|p| p.ok())
    }
}

/// Checks every co-partition group and Redis family of `topology`.
///
/// `samples` are logical keys (the text a user reads, such as `BBCA`); each
/// producer encodes them with its own key format. With no samples, the
/// verdicts still hold (they follow from the declarations) but carry no
/// fractions.
pub fn check(topology: &Topology, samples: &[&[u8]]) -> Report {
    Report {
        groups: topology
            .copartition_groups
            .iter()
            .map(|g| check_group(topology, g, samples))
            .collect(),
        families: topology
            .redis_families
            .iter()
            .map(|f| check_family(f, samples))
            .collect(),
        placements: crate::placement::placements(topology),
        sample_keys: samples.len(),
    }
}

/// A producer with its topic, flattened for pairwise comparison.
struct Writer<'a> {
    topic: &'a Topic,
    index: usize,
    producer: &'a Producer,
}

impl Writer<'_> {
    fn reference(&self) -> ProducerRef {
        ProducerRef {
            topic: self.topic.name.clone(),
            index: self.index,
            name: self.producer.name.clone(),
            partitioner: self.producer.partitioner,
            key_format: self.producer.key_format,
        }
    }
}

/// The partition of logical key `key` written with `format` and placed by
/// `p` over `n`, or `None` when it cannot be encoded or is not placed by key.
fn place(p: Partitioner, format: KeyFormat, key: &[u8], n: PartitionCount) -> Option<u32> {
    let bytes = format.encode(key).ok()?;
    p.place(Some(&bytes), n).partition()
}

fn compare(
    samples: &[&[u8]],
    a: (Partitioner, KeyFormat, PartitionCount),
    b: (Partitioner, KeyFormat, PartitionCount),
) -> Option<SampleDiff> {
    if samples.is_empty() {
        return None;
    }
    let mut d = SampleDiff {
        keys: samples.len(),
        differ: 0,
        unencodable: 0,
    };
    for k in samples {
        if a.1.encode(k).is_err() || b.1.encode(k).is_err() {
            d.unencodable += 1;
            d.differ += 1;
            continue;
        }
        let pa = place(a.0, a.1, k, a.2);
        let pb = place(b.0, b.1, k, b.2);
        if pa.is_none() || pa != pb {
            d.differ += 1;
        }
    }
    Some(d)
}

fn check_group(t: &Topology, g: &CopartitionGroup, samples: &[&[u8]]) -> GroupVerdict {
    // Validation guarantees every name resolves.
    let topics: Vec<&Topic> = g.topics.iter().filter_map(|n| t.topic(n)).collect();
    let writers: Vec<Writer<'_>> = topics
        .iter()
        .flat_map(|topic| {
            topic
                .producers
                .iter()
                .enumerate()
                .map(move |(index, producer)| Writer {
                    topic,
                    index,
                    producer,
                })
        })
        .collect();
    let keyed: Vec<(&Writer<'_>, Partitioner)> = writers
        .iter()
        .filter_map(|w| w.producer.keyed_partitioner().map(|p| (w, p)))
        .collect();
    let mut reasons = Vec::new();

    // Fields are public, so a hand-built topology may hold names that do not
    // resolve; they are skipped rather than trusted.
    let first_count = topics.first().map(|t| t.partitions);
    if topics.iter().any(|t| Some(t.partitions) != first_count) {
        // Hold partitioner and bytes fixed so the figure is the count's alone.
        let reference = match keyed.first() {
            Some((w, p)) => Some((*p, w.producer.key_format)),
            None => "java".parse().ok().map(|p| (p, KeyFormat::String)),
        };
        let sample = reference.filter(|_| !samples.is_empty()).map(|(p, f)| {
            let mut d = SampleDiff {
                keys: samples.len(),
                differ: 0,
                unencodable: 0,
            };
            for k in samples {
                let parts: Vec<Option<u32>> = topics
                    .iter()
                    .map(|t| place(p, f, k, t.partitions))
                    .collect();
                if parts[0].is_none() || parts.iter().any(|x| *x != parts[0]) {
                    d.differ += 1;
                }
                if f.encode(k).is_err() {
                    d.unencodable += 1;
                }
            }
            d
        });
        reasons.push(Reason::PartitionCountsDiffer {
            counts: topics
                .iter()
                .map(|t| (t.name.clone(), t.partitions.get()))
                .collect(),
            sample,
        });
    }

    let declared: Vec<(String, String)> = topics
        .iter()
        .filter_map(|t| t.key.as_ref().map(|k| (t.name.clone(), k.clone())))
        .collect();
    if declared
        .iter()
        .any(|(_, k)| k.trim() != declared[0].1.trim())
    {
        reasons.push(Reason::KeysDiffer { keys: declared });
    }

    for topic in &topics {
        if topic.producers.is_empty() {
            reasons.push(Reason::NoProducers {
                topic: topic.name.clone(),
            });
        }
    }

    for w in &writers {
        if w.producer.keyed_partitioner().is_none() {
            let behaviour = match w.producer.partitioner.map(|p| p.key_rule()) {
                Some(KeyRule::Ignore(pl)) if !w.producer.keyless => pl.behaviour(),
                _ => "keyless",
            };
            reasons.push(Reason::KeylessProducer {
                producer: w.reference(),
                declared: w.producer.keyless,
                behaviour,
            });
        }
    }

    for (i, (wa, pa)) in keyed.iter().enumerate() {
        for (wb, pb) in &keyed[i + 1..] {
            let (fa, fb) = (wa.producer.key_format, wb.producer.key_format);
            let n = wa.topic.partitions;
            if pa.key_rule() != pb.key_rule() {
                reasons.push(Reason::PartitionersDisagree {
                    a: wa.reference(),
                    b: wb.reference(),
                    sample: compare(samples, (*pa, fa, n), (*pb, fa, n)),
                });
            }
            if !same_bytes(fa, fb) {
                reasons.push(Reason::KeyEncodingsDiffer {
                    a: wa.reference(),
                    b: wb.reference(),
                    sample: compare(samples, (*pa, fa, n), (*pa, fb, n)),
                });
            }
        }
    }

    let sample = (!samples.is_empty() && !keyed.is_empty()).then(|| {
        let aligned = samples
            .iter()
            .filter(|k| {
                let parts: Vec<Option<u32>> = keyed
                    .iter()
                    .map(|(w, p)| place(*p, w.producer.key_format, k, w.topic.partitions))
                    .collect();
                parts[0].is_some() && parts.iter().all(|x| *x == parts[0])
            })
            .count();
        Alignment {
            keys: samples.len(),
            aligned,
        }
    });

    GroupVerdict {
        name: g.name.clone(),
        topics: g.topics.clone(),
        reasons,
        sample,
    }
}

fn fill(pattern: &str, key: &[u8]) -> Vec<u8> {
    let (before, after) = pattern.split_once("%s").unwrap_or((pattern, ""));
    let mut out = Vec::with_capacity(pattern.len() + key.len());
    out.extend_from_slice(before.as_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(after.as_bytes());
    out
}

fn check_family(f: &RedisFamily, samples: &[&[u8]]) -> FamilyVerdict {
    let hash_tags: Vec<Option<String>> = f
        .patterns
        .iter()
        .map(|p| slot::hash_tag(p.as_bytes()).map(|t| String::from_utf8_lossy(t).into_owned()))
        .collect();
    let mut reasons = Vec::new();
    let untagged: Vec<String> = f
        .patterns
        .iter()
        .zip(&hash_tags)
        .filter(|(_, t)| t.is_none())
        .map(|(p, _)| p.clone())
        .collect();
    if !untagged.is_empty() {
        reasons.push(FamilyReason::NoHashTag { patterns: untagged });
    }
    let tagged: Vec<(String, String)> = f
        .patterns
        .iter()
        .zip(&hash_tags)
        .filter_map(|(p, t)| t.as_ref().map(|t| (p.clone(), t.clone())))
        .collect();
    if tagged.iter().any(|(_, t)| *t != tagged[0].1) {
        reasons.push(FamilyReason::HashTagsDiffer { tags: tagged });
    }
    // A shared tag without the key puts the whole family in one slot: it
    // co-locates, so it is not a reason, but it is not the usual design.
    let shared_hash_tag = reasons.is_empty()
        && hash_tags
            .first()
            .is_some_and(|t| t.as_deref().is_some_and(|t| t.contains("%s")));

    let colocated = (!samples.is_empty()).then(|| {
        let aligned = samples
            .iter()
            .filter(|k| {
                let slots: Vec<u16> = f
                    .patterns
                    .iter()
                    .map(|p| slot::key_slot(&fill(p, k)))
                    .collect();
                slots.windows(2).all(|w| w[0] == w[1])
            })
            .count();
        Alignment {
            keys: samples.len(),
            aligned,
        }
    });
    if let Some(a) = colocated {
        if a.aligned < a.keys && reasons.is_empty() {
            reasons.push(FamilyReason::SampleKeysSplit {
                split: a.keys - a.aligned,
                keys: a.keys,
            });
        }
    }
    FamilyVerdict {
        name: f.name.clone(),
        patterns: f.patterns.clone(),
        hash_tags,
        shared_hash_tag,
        colocated,
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TICKER: &str = include_str!("../../../examples/ticker.toml");
    const SYMBOLS: &str = include_str!("../../../examples/symbols.txt");

    fn symbols() -> Vec<&'static [u8]> {
        SYMBOLS.lines().map(str::as_bytes).collect()
    }

    /// The ticker with `from` replaced by `to` once, at the `nth` occurrence.
    fn variant(from: &str, to: &str, nth: usize) -> String {
        let (i, _) = TICKER
            .match_indices(from)
            .nth(nth)
            .expect("pattern in ticker.toml");
        format!("{}{}{}", &TICKER[..i], to, &TICKER[i + from.len()..])
    }

    fn kinds(r: &Report) -> Vec<&'static str> {
        r.groups
            .iter()
            .flat_map(|g| g.reasons.iter().map(Reason::kind))
            .collect()
    }

    fn error(text: &str) -> TopologyError {
        Topology::parse(text).expect_err("should be refused")
    }

    #[test]
    fn ticker_is_copartitioned() {
        let t: Topology = TICKER.parse().unwrap();
        assert_eq!(t.topics.len(), 2);
        assert_eq!(t.topics[1].partitions.get(), 6);
        assert_eq!(t.consumer_groups[0].members, Members::Count(3));
        let r = check(&t, &symbols());
        assert!(r.ok(), "{r:#?}");
        assert_eq!(
            r.groups[0].sample,
            Some(Alignment {
                keys: 10,
                aligned: 10
            })
        );
        let f = &r.families[0];
        assert!(f.shared_hash_tag);
        assert_eq!(
            f.hash_tags,
            vec![Some("%s".to_string()), Some("%s".to_string())]
        );
        assert_eq!(
            f.colocated,
            Some(Alignment {
                keys: 10,
                aligned: 10
            })
        );
        // Without keys the verdict is the same, with no figures.
        let r = check(&t, &[]);
        assert!(r.ok());
        assert_eq!(r.groups[0].sample, None);
    }

    #[test]
    fn eight_partitions_break_it() {
        let t: Topology = variant("partitions = 6", "partitions = 8", 1)
            .parse()
            .unwrap();
        let r = check(&t, &symbols());
        assert!(!r.ok());
        assert_eq!(kinds(&r), ["partition_counts_differ"]);
        let Reason::PartitionCountsDiffer { counts, sample } = &r.groups[0].reasons[0] else {
            unreachable!()
        };
        assert_eq!(
            counts,
            &[
                ("market-updates".to_string(), 6),
                ("notifications".to_string(), 8)
            ]
        );
        // BBCA alone: 0 of 6 but 2 of 8 (the seed's example).
        let one = check(&t, &[b"BBCA"]);
        assert_eq!(one.groups[0].reasons[0].sample().unwrap().differ, 1);
        assert!(sample.unwrap().differ >= 1);
        assert!(r.groups[0].reasons[0]
            .to_string()
            .contains("market-updates 6, notifications 8"));
    }

    #[test]
    fn librdkafka_default_disagrees() {
        let t: Topology = variant(
            "partitioner = \"kafkajs\"",
            "partitioner = \"librdkafka\"",
            1,
        )
        .parse()
        .unwrap();
        let r = check(&t, &symbols());
        assert_eq!(kinds(&r), ["partitioners_disagree"]);
        let reason = &r.groups[0].reasons[0];
        assert!(
            reason.to_string().contains("librdkafka:consistent_random"),
            "{reason}"
        );
        // crc32 vs murmur2 over 6 partitions: most of ten symbols differ.
        assert!(reason.sample().unwrap().differ > 0);
        // librdkafka's Java-compatible partitioner agrees.
        let ok: Topology = variant(
            "partitioner = \"kafkajs\"",
            "partitioner = \"librdkafka:murmur2_random\"",
            1,
        )
        .parse()
        .unwrap();
        assert!(check(&ok, &symbols()).ok());
    }

    #[test]
    fn key_encodings_break_it() {
        for fmt in ["int32", "int64", "avro-sr:1"] {
            let t: Topology = variant(
                "key_format = \"string\"",
                &format!("key_format = \"{fmt}\""),
                1,
            )
            .parse()
            .unwrap();
            let r = check(&t, &symbols());
            assert_eq!(kinds(&r), ["key_encodings_differ"], "{fmt}");
            let s = r.groups[0].reasons[0].sample().unwrap();
            if fmt == "avro-sr:1" {
                // Avro writes the symbol with a 6-byte prefix: encodable, but other bytes.
                assert_eq!(s.unencodable, 0);
                assert!(s.differ > 0);
            } else {
                // A symbol is not an integer: that producer cannot write these keys.
                assert_eq!((s.unencodable, s.differ), (10, 10));
            }
        }
        // utf8 and string write the same bytes.
        let t: Topology = variant("key_format = \"string\"", "key_format = \"utf8\"", 1)
            .parse()
            .unwrap();
        assert!(check(&t, &symbols()).ok());
    }

    #[test]
    fn keyless_producers_break_it() {
        let t: Topology = variant("partitioner = \"kafkajs\"", "partitioner = \"kafka-go\"", 1)
            .parse()
            .unwrap();
        let r = check(&t, &symbols());
        assert_eq!(kinds(&r), ["keyless_producer"]);
        assert!(matches!(
            &r.groups[0].reasons[0],
            Reason::KeylessProducer {
                declared: false,
                behaviour: "round-robin",
                ..
            }
        ));
        let t: Topology = variant("key_format = \"string\"", "keyless = true", 1)
            .parse()
            .unwrap();
        let r = check(&t, &symbols());
        assert_eq!(kinds(&r), ["keyless_producer"]);
        assert!(matches!(
            &r.groups[0].reasons[0],
            Reason::KeylessProducer { declared: true, .. }
        ));
    }

    #[test]
    fn every_reason_is_listed() {
        let text = TICKER.replacen("partitions = 6\nkey = \"symbol\"\n\n[[topic.producer]]\nname = \"alert-service\"\npartitioner = \"kafkajs\"\nkey_format = \"string\"",
            "partitions = 8\nkey = \"userId\"\n\n[[topic.producer]]\nname = \"alert-service\"\npartitioner = \"sarama\"\nkey_format = \"int32\"\n\n[[topic.producer]]\npartitioner = \"kafka-go\"", 1);
        let t: Topology = text.parse().unwrap();
        let r = check(&t, &symbols());
        assert_eq!(
            kinds(&r),
            [
                "partition_counts_differ",
                "keys_differ",
                "keyless_producer",
                "partitioners_disagree",
                "key_encodings_differ"
            ]
        );
    }

    #[test]
    fn producers_of_one_topic_are_compared() {
        let text = TICKER.replacen(
            "name = \"market-feed\"",
            "name = \"backfill\"\npartitioner = \"sarama\"\n\n[[topic.producer]]\nname = \"market-feed\"",
            1,
        );
        let t: Topology = text.parse().unwrap();
        let r = check(&t, &symbols());
        let k = kinds(&r);
        assert_eq!(k, ["partitioners_disagree", "partitioners_disagree"]);
        assert!(r.groups[0].reasons[0]
            .to_string()
            .contains("market-updates producer 'backfill'"));
    }

    #[test]
    fn topics_without_producers_are_unverified() {
        let t: Topology = "[[topic]]\nname = \"a\"\npartitions = 3\n[[topic]]\nname = \"b\"\npartitions = 3\n[[copartition]]\nname = \"g\"\ntopics = [\"a\", \"b\"]\n"
            .parse()
            .unwrap();
        assert_eq!(kinds(&check(&t, &[])), ["no_producers", "no_producers"]);
    }

    #[test]
    fn redis_families() {
        let untagged: Topology = variant("\"notif:{%s}\"", "\"notif:%s\"", 0)
            .parse()
            .unwrap();
        let r = check(&untagged, &symbols());
        let f = &r.families[0];
        assert!(!f.ok() && !f.shared_hash_tag);
        assert_eq!(f.reasons[0].kind(), "no_hash_tag");
        // The seed: 0 of 10 symbols co-locate without a tag.
        assert_eq!(
            f.colocated,
            Some(Alignment {
                keys: 10,
                aligned: 0
            })
        );
        assert!(r.groups[0].ok());

        let differ: Topology = variant("\"notif:{%s}\"", "\"notif:{n-%s}\"", 0)
            .parse()
            .unwrap();
        assert_eq!(
            check(&differ, &[]).families[0].reasons[0].kind(),
            "hash_tags_differ"
        );

        // An empty key leaves an empty tag, which Redis ignores: the whole key is hashed.
        let r = check(&TICKER.parse().unwrap(), &[b"BBCA", b""]);
        let f = &r.families[0];
        assert_eq!(
            f.colocated,
            Some(Alignment {
                keys: 2,
                aligned: 1
            })
        );
        assert_eq!(f.reasons[0].kind(), "sample_keys_split");
    }

    #[test]
    fn errors_name_line_and_field() {
        let e = error(&variant("partitions = 6", "partitions = 0", 1));
        assert_eq!((e.line, e.field.as_str()), (19, "topic[1].partitions"));
        assert!(e.message.contains("at least 1 partition"), "{e}");

        let e = error(&variant("partitions = 6", "partitions = -3", 0));
        assert_eq!((e.line, e.field.as_str()), (9, "topic[0].partitions"));

        let e = error(&variant("partitions = 6", "partitions = \"six\"", 0));
        assert_eq!(
            (e.line, e.column, e.field.as_str()),
            (9, 14, "topic[0].partitions")
        );

        let e = error(&variant("key = \"symbol\"", "kee = \"symbol\"", 0));
        assert_eq!((e.line, e.field.as_str()), (10, "topic[0].kee"));
        assert!(e.message.contains("unknown field"), "{e}");

        let e = error(&variant(
            "partitioner = \"kafkajs\"",
            "partitioner = \"kafkajs2\"",
            1,
        ));
        assert_eq!(
            (e.line, e.field.as_str()),
            (24, "topic[1].producer[0].partitioner")
        );
        assert!(e.message.contains("unknown partitioner 'kafkajs2'"), "{e}");

        let e = error(&variant(
            "key_format = \"string\"",
            "key_format = \"strng\"",
            0,
        ));
        assert_eq!(e.field, "topic[0].producer[0].key_format");

        let e = error(&variant("\"notifications\"]", "\"notification\"]", 0));
        assert_eq!((e.line, e.field.as_str()), (31, "copartition[0].topics[1]"));
        assert!(e.message.contains("unknown topic 'notification'"), "{e}");

        let e = error(&format!(
            "{TICKER}\n[[topic]]\nname = \"notifications\"\npartitions = 3\n"
        ));
        assert_eq!(e.field, "topic[2].name");
        assert!(e.message.contains("duplicate topic"), "{e}");

        let e = error(&variant("members = 3", "members = 0", 0));
        assert_eq!(e.field, "consumer_group[0].members");
        let e = error(&variant("members = 3", "members = [\"a\", \"a\"]", 0));
        assert!(e.message.contains("listed twice"), "{e}");
        let t: Topology = variant("members = 3", "members = [\"pod-a\", \"pod-b\"]", 0)
            .parse()
            .unwrap();
        assert_eq!(
            t.consumer_groups[0].members,
            Members::Ids(vec!["pod-a".into(), "pod-b".into()])
        );

        let e = error(&variant("\"notif:{%s}\"", "\"notif\"", 0));
        assert_eq!(e.field, "redis_family[0].patterns[1]");

        let e = error("[[topic]]\nname = \"a\"\npartitions = 6 x\n");
        assert_eq!((e.line, e.field.as_str()), (3, "partitions"));
        assert!(e.message.starts_with("invalid TOML"), "{e}");

        let e = error("[[topic]]\npartitions = 6\n");
        assert_eq!(e.field, "topic[0].name");
        assert!(e.message.contains("missing field"), "{e}");

        let e = error("[[copartition]]\nname = \"g\"\ntopics = []\n");
        assert!(e.message.contains("at least two topics"), "{e}");
    }

    #[test]
    fn hand_built_topologies_do_not_panic() {
        let t = Topology {
            topics: Vec::new(),
            copartition_groups: vec![CopartitionGroup {
                name: "g".into(),
                topics: vec!["missing".into()],
            }],
            consumer_groups: Vec::new(),
            redis_families: vec![RedisFamily {
                name: "f".into(),
                patterns: Vec::new(),
            }],
        };
        let r = check(&t, &[b"BBCA"]);
        assert_eq!(r.groups.len(), 1);
        assert!(!r.families[0].shared_hash_tag);
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
            if let Ok(t) = Topology::parse(&s) {
                let _ = check(&t, &[b"BBCA"]);
            }
        }

        /// Edits of a valid file reach the validator and checker, not just the parser.
        #[test]
        fn edited_ticker_never_panics(at in 0usize..2000, cut in 0usize..8, insert in "[\\[\\]{}=\"%s0-9a-z.,\n -]{0,6}") {
            let mut at = at.min(TICKER.len());
            while !TICKER.is_char_boundary(at) { at -= 1; }
            let mut end = (at + cut).min(TICKER.len());
            while !TICKER.is_char_boundary(end) { end -= 1; }
            let text = format!("{}{}{}", &TICKER[..at], insert, &TICKER[end..]);
            match Topology::parse(&text) {
                Ok(t) => { let _ = check(&t, &[b"BBCA", b"", b"{", b"42"]); }
                Err(e) => {
                    prop_assert!(e.line >= 1 && e.column >= 1);
                    prop_assert!(e.line <= text.lines().count() + 1);
                }
            }
        }
    }
}
