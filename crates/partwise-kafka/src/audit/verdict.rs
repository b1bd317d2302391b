//! The co-partitioning verdict over audited topics: their partition counts,
//! the partitioners that explain each one's sample, and their key encodings.

use super::TopicAudit;
use partwise::encoding::Detected;
use partwise::findings::{ObservedWriter, Reason};
use partwise::inference::Candidate;
use std::collections::BTreeSet;

/// Whether the audited topics are co-partitioned.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// True when every check passed.
    pub copartitioned: bool,
    /// Every reason they are not (or cannot be shown to be), each with its
    /// `kind()`, message and `fix()`.
    pub findings: Vec<Reason>,
    /// The hypotheses that explain every topic's sample.
    pub common: Vec<Candidate>,
}

/// The co-partitioning verdict over audited topics: counts, partitioners,
/// key encodings.
pub fn verdict(topics: &[TopicAudit]) -> Verdict {
    let mut findings = Vec::new();
    for t in topics {
        if let Some(e) = &t.error {
            findings.push(Reason::TopicUnreadable {
                topic: t.name.clone(),
                error: e.clone(),
            });
        }
    }
    let found: Vec<&TopicAudit> = topics.iter().filter(|t| t.error.is_none()).collect();
    let counts: BTreeSet<u32> = found.iter().filter_map(|t| t.partition_count()).collect();
    if counts.len() > 1 {
        // The same finding as a topology file's: no sample figure, since the
        // records already written are where they are.
        findings.push(Reason::PartitionCountsDiffer {
            counts: found
                .iter()
                .map(|t| (t.name.clone(), t.partitions.len() as u32))
                .collect(),
            sample: None,
        });
    }
    let mut common: Option<Vec<Candidate>> = None;
    let mut explained = true;
    for t in &found {
        match &t.routing {
            Some(r) if r.keyed > 0 && !r.inferred.is_empty() => {
                common = Some(match common {
                    None => r.inferred.clone(),
                    Some(c) => c.into_iter().filter(|x| r.inferred.contains(x)).collect(),
                });
            }
            Some(r) if r.keyed > 0 => {
                explained = false;
                if let Some(m) = partwise::inference::mixture_finding(&t.name, r) {
                    findings.push(m);
                    continue;
                }
                findings.push(Reason::RecordsUnexplained {
                    topic: t.name.clone(),
                    misplaced: r.misrouted_total,
                    best: r.rates.first().map(|m| m.candidate.to_string()),
                    found: None,
                });
            }
            _ => {
                explained = false;
                findings.push(Reason::NoKeyedRecords {
                    topic: t.name.clone(),
                });
            }
        }
    }
    let common = common.unwrap_or_default();
    if explained && found.len() >= 2 && common.is_empty() {
        findings.push(Reason::ObservedPartitionersDisagree {
            topics: found
                .iter()
                .map(|t| {
                    let r = t.routing.as_ref().expect("explained topics have routing");
                    ObservedWriter {
                        topic: t.name.clone(),
                        candidates: r.inferred.iter().map(Candidate::to_string).collect(),
                        partitioner: partwise::inference::primary(&r.inferred)
                            .map(|c| c.partitioner),
                        family: partwise::inference::distinct_partitioners(&r.inferred),
                    }
                })
                .collect(),
        });
    }
    let encodings: BTreeSet<String> = found
        .iter()
        .filter_map(|t| t.routing.as_ref()?.encoding)
        .map(|e| e.to_string())
        .collect();
    let mixed = found
        .iter()
        .any(|t| t.routing.as_ref().and_then(|r| r.encoding) == Some(Detected::Mixed));
    if encodings.len() > 1 || mixed {
        findings.push(Reason::ObservedKeyEncodingsDiffer {
            encodings: found
                .iter()
                .filter_map(|t| Some((t.name.clone(), t.routing.as_ref()?.encoding?.to_string())))
                .collect(),
        });
    }
    Verdict {
        copartitioned: findings.is_empty(),
        findings,
        common,
    }
}

/// The partitioners of a list of candidates, for messages: the first few specs.
pub fn summarize(c: &[Candidate]) -> String {
    let names: Vec<String> = c.iter().map(Candidate::to_string).collect();
    partwise::findings::summarize(&names)
}
