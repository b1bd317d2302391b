//! The fix of each co-partition finding, in the terms of the client at
//! fault: which setting (and from which release) makes one producer place
//! keys as the other does, for declared and observed producers alike.

use super::*;

impl Reason {
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
                let raise = if smaller.is_empty() {
                    String::new()
                } else {
                    let commands: Vec<String> = smaller
                        .iter()
                        .map(|t| format!("kafka-topics --alter --topic {t} --partitions {max}"))
                        .collect();
                    format!(
                        ": raise {} to {max} partitions ({})",
                        smaller.join(", "),
                        commands.join("; ")
                    )
                };
                format!(
                    "give every topic the same count{raise}; keys move when a count changes and records already written stay put, so change them together (partwise resize shows which keys move)"
                )
            }
            Reason::KeysDiffer { keys } => match keys.first() {
                Some((_, k)) => format!(
                    "key every topic by the same field ({k}), so one entity has one key everywhere"
                ),
                None => "key every topic by the same field, so one entity has one key everywhere"
                    .to_string(),
            },
            Reason::SampleKeysUnplaced { producer, why, .. } => match *why {
                "rejected" => format!(
                    "give {producer} a partitioner that places every key (a priority spec's reserved partitions must exist in the topic: partwise route KEY -p N -P SPEC shows where each key goes)"
                ),
                "unencodable" => format!(
                    "make {producer}'s key_format match what its keys are (partwise route KEY --key-format F shows the bytes), or keep such keys out of the join"
                ),
                _ => format!(
                    "give such records a key {producer}'s partitioner hashes (an empty key is placed without hashing by some clients), or a partitioner that hashes every key"
                ),
            },
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
                            c.setting_and_version(),
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
                            c.setting_and_version(),
                            c.spec(),
                            pa.spec()
                        )
                    } else if let Some(c) = pb.compatible_in(pa.client()).first() {
                        format!(
                            "set {a} to {} ({}), which places keys as {} does",
                            c.setting_and_version(),
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
            Reason::TopicUnreadable { topic, .. } => format!(
                "check the name {topic} and that this client may Describe and Read it"
            ),
            Reason::NoKeyedRecords { topic } => format!(
                "sample more of {topic} (--sample N), or key its records: a join needs keyed records"
            ),
            Reason::RecordsUnexplained {
                topic,
                found: None,
                ..
            } => format!(
                "find the producer of {topic}'s misplaced records (the JSON output lists their keys and offsets): it sets partitions itself or uses a partitioner partwise does not know; route it through one partitioner (partwise kafka produce -P SPEC)"
            ),
            Reason::RecordsUnexplained {
                topic,
                found: Some(u),
                ..
            } => format!(
                "find the producer of the {} unexplained records of {topic} (the JSON output lists their keys and offsets): it sets partitions itself or uses a partitioner partwise does not know; then give every producer of {topic} one Java-compatible murmur2 partitioner (the Java client's default, which every client has a setting for)",
                u.records
            ),
            Reason::ObservedPartitionersDisagree { topics } => observed_partitioners_fix(topics),
            Reason::MixedPartitioners {
                writers,
                unexplained,
                unexplained_share,
                split_keys,
                ..
            } => mixed_fix(writers, *unexplained, *unexplained_share, *split_keys),
            Reason::ObservedKeyEncodingsDiffer { .. } => {
                "serialize the key one way for every topic (the same key serializer, e.g. string, in every producer)"
                    .to_string()
            }
        }
    }
}

/// The same move for the other clients whose partitioners place keys as
/// `pb` does (the records cannot tell them apart), each in its own words;
/// empty when there are none.
fn other_clients(pa: Partitioner, pb: Partitioner, family: &[Partitioner]) -> String {
    let mut seen = vec![pb.client(), pa.client()];
    let mut out: Vec<String> = Vec::new();
    for p in family {
        let c = p.client();
        if seen.contains(&c) {
            continue;
        }
        seen.push(c);
        if let Some(x) = pa.compatible_in(c).first() {
            out.push(format!("{c}: {}", x.setting_and_version()));
        }
    }
    if out.is_empty() {
        String::new()
    } else {
        format!(
            " (if they are not {} producers, the same in their client: {})",
            pb.client(),
            out.join("; ")
        )
    }
}

/// Whether `p` hashes keys as the Java producer does (murmur2, masked): the
/// placement most clients can be set to, so the one a fix moves others to.
fn java_compatible(p: Partitioner) -> bool {
    let java: Partitioner = Partitioner::all().next().expect("java is first");
    p.priority().is_none() && p.key_rule() == java.key_rule()
}

/// The setting that makes the other topics' producers place keys as one
/// topic's do: the same client's compatible partitioner where there is one.
/// The topic the others follow does not depend on the order the topics are
/// given in: a Java-compatible one if any, else the first by partitioner
/// and name; the steps are in topic-name order, each once.
fn observed_partitioners_fix(topics: &[ObservedWriter]) -> String {
    let mut known: Vec<(&ObservedWriter, Partitioner)> = topics
        .iter()
        .filter_map(|t| Some((t, t.partitioner?)))
        .collect();
    known.sort_by(|a, b| {
        (!java_compatible(a.1), a.1.spec(), &a.0.topic).cmp(&(
            !java_compatible(b.1),
            b.1.spec(),
            &b.0.topic,
        ))
    });
    let Some(((first, pa), rest)) = known.split_first() else {
        return "declare or find each topic's partitioner (partwise kafka audit shows what wrote it)"
            .to_string();
    };
    let mut rest: Vec<&(&ObservedWriter, Partitioner)> = rest.iter().collect();
    rest.sort_by(|a, b| a.0.topic.cmp(&b.0.topic));
    let mut steps: Vec<String> = Vec::new();
    for (t, pb) in rest {
        if pb.key_rule() == pa.key_rule() && pb.priority().is_none() && pa.priority().is_none() {
            continue;
        }
        let step = match pa.compatible_in(pb.client()).first() {
            Some(c) => format!(
                "set {}'s {} producers to {} ({}), which places keys as {} does on {}{}",
                t.topic,
                pb.client(),
                c.setting_and_version(),
                c.spec(),
                pa.spec(),
                first.topic,
                other_clients(*pa, *pb, &t.family)
            ),
            None => format!(
                "no {} partitioner places keys as {} does: give {}'s and {}'s producers one Java-compatible murmur2 partitioner",
                pb.client(),
                pa.spec(),
                first.topic,
                t.topic
            ),
        };
        if !steps.contains(&step) {
            steps.push(step);
        }
    }
    if steps.is_empty() {
        return format!(
            "give every producer of {} one partitioner",
            known
                .iter()
                .map(|(t, _)| t.topic.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    steps.join("; ")
}

/// Every producer of a mixed topic moved to the placement of one of them:
/// the Java-compatible member if there is one (most clients have a setting
/// for it), else the one that wrote most; each other member's producers told
/// in their own client's words.
///
/// When most records are unexplained, the known members wrote the lesser
/// part: the fix starts from the unknown producer and moves no one to a
/// member's partitioner as if it had written the topic.
fn mixed_fix(
    writers: &[MixedWriter],
    unexplained: u64,
    unexplained_share: f64,
    split_keys: u64,
) -> String {
    if unexplained_share > 0.5 {
        return format!(
            "find the producer of the {unexplained} unexplained records, {:.1}% of the keyed ones (the JSON output lists their keys and offsets): it sets partitions itself or uses a partitioner partwise does not know; then give every producer of the topic one Java-compatible murmur2 partitioner (the Java client's default, which every client has a setting for)",
            100.0 * unexplained_share
        );
    }
    let mut steps: Vec<String> = Vec::new();
    let target = writers
        .iter()
        .find(|w| java_compatible(w.partitioner))
        .or_else(|| writers.first());
    if let Some(t) = target {
        let pa = t.partitioner;
        for w in writers {
            let pb = w.partitioner;
            if std::ptr::eq(w, t) {
                continue;
            }
            let step = match pa.compatible_in(pb.client()).first() {
                Some(c) => format!(
                    "set the {} producers (now {}) to {} ({}), which places keys as {} does{}",
                    pb.client(),
                    pb.setting(),
                    c.setting_and_version(),
                    c.spec(),
                    pa.spec(),
                    other_clients(pa, pb, &w.family)
                ),
                None => format!(
                    "no {} partitioner places keys as {} does: move the producers that write like {} ({}) and those of {} to one Java-compatible murmur2 partitioner",
                    pb.client(),
                    pa.spec(),
                    pb.spec(),
                    pb.setting(),
                    pa.spec()
                ),
            };
            if !steps.contains(&step) {
                steps.push(step);
            }
        }
    }
    if split_keys > 0 {
        steps.push(
            "records already written stay where they are: the split keys stay on two partitions until those records expire or the topic is re-written"
                .to_string(),
        );
    }
    if unexplained > 0 {
        steps.push(format!(
            "find the producer of the {unexplained} unexplained records (the JSON output lists their keys and offsets): it sets partitions itself or uses a partitioner partwise does not know"
        ));
    }
    if steps.is_empty() {
        // No member to move the others to, no record left over: what holds
        // whatever wrote the topic.
        steps.push("give every producer of the topic one Java-compatible murmur2 partitioner (the Java client's default, which every client has a setting for)".to_string());
    }
    steps.join("; ")
}
