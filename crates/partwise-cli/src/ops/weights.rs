//! The keys' traffic a command weighs by: `--counts FILE` (`KEY,COUNT`
//! lines) or `--counts live:...` (the newest records of the live topics).

use crate::exit::Result;
use partwise::KeyFormat;
use std::path::PathBuf;

/// A key as given (the logical key), its bytes as its producer writes
/// them, and its count.
pub type EncodedKey = (Vec<u8>, Vec<u8>, u64);

/// The keys of `--counts FILE` (`check`, `report`, `resize`, `plan`), with
/// the records each carries.
pub struct Weights {
    /// The file's name, for messages.
    pub name: String,
    /// Each distinct key as written in the file (a logical key), in
    /// first-seen order, with its summed count.
    pub keys: Vec<(Vec<u8>, u64)>,
    /// All the records: the sum of the counts (more than 0).
    pub total: u64,
}

impl Weights {
    /// Reads `KEY,COUNT` lines (the one reader `skew` and `salt` use);
    /// errors name the file and line, and refuse a sum that overflows or a
    /// file whose counts are all 0.
    pub fn read(path: &std::path::Path) -> Result<Weights> {
        let name = crate::input::input_name(path);
        let keys = crate::input::read_counts(path, true)?;
        let total = keys
            .iter()
            .try_fold(0u64, |t, (_, c)| t.checked_add(*c))
            .ok_or_else(|| {
                crate::exit::CliError::msg(format!(
                    "{name}: the counts add up to more than 2^64 - 1"
                ))
            })?;
        if total == 0 {
            return Err(crate::exit::CliError::msg(format!(
                "{name}: every count is 0, there is no traffic to weigh"
            )));
        }
        Ok(Weights { name, keys, total })
    }

    /// The logical keys as sample keys, and their counts in the same
    /// order: the keys moved out, not copied.
    pub fn into_samples(self) -> (Vec<Vec<u8>>, Vec<u64>) {
        self.keys.into_iter().unzip()
    }

    /// Each key as written in the file and encoded with `format`, with its
    /// count, the keys moved out of `self`; an error names the first key
    /// the format cannot encode.
    pub fn into_encoded(self, format: KeyFormat) -> Result<Vec<EncodedKey>> {
        let mut out = Vec::with_capacity(self.keys.len());
        for (k, c) in self.keys {
            let bytes = format.encode(&k).map_err(|e| {
                crate::exit::CliError::msg(format!(
                    "{}: key '{}': {e}",
                    self.name,
                    crate::output::visible(&String::from_utf8_lossy(&k))
                ))
            })?;
            out.push((k, bytes, c));
        }
        Ok(out)
    }

    /// Each key encoded with `format` (as its producer writes it), with its
    /// count; an error names the first key the format cannot encode.
    pub fn encoded(&self, format: KeyFormat) -> Result<Vec<(Vec<u8>, u64)>> {
        self.keys
            .iter()
            .map(|(k, c)| {
                format.encode(k).map(|b| (b, *c)).map_err(|e| {
                    crate::exit::CliError::msg(format!(
                        "{}: key '{}': {e}",
                        self.name,
                        crate::output::visible(&String::from_utf8_lossy(k))
                    ))
                })
            })
            .collect()
    }
}

/// Where `--counts` of `check` and `report` takes the keys' traffic.
#[derive(Clone, Debug)]
pub enum CountsFrom {
    /// `KEY,COUNT` lines of a file.
    File(PathBuf),
    /// The newest records of the live topics (`live:1h`, `live:last=N`),
    /// sampled as `kafka audit --since`/`--from-end` samples them.
    Live(partwise_kafka::audit::Window),
}

impl CountsFrom {
    /// The file, if the counts are one (for the files a command reads).
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            CountsFrom::File(p) => Some(p),
            CountsFrom::Live(_) => None,
        }
    }

    /// The live window, if the counts are of one.
    pub fn live(&self) -> Option<partwise_kafka::audit::Window> {
        match self {
            CountsFrom::Live(w) => Some(*w),
            CountsFrom::File(_) => None,
        }
    }
}

/// Records per partition `--counts live:DURATION` samples at most: the
/// default of `kafka audit`, so that `kafka audit --since D --counts-out F`
/// and `--counts F` weigh alike.
pub const LIVE_SAMPLE: u64 = 1000;

/// The records per partition the audit reads for `window`: `live:last=N`
/// reads N, `live:DURATION` at most [`LIVE_SAMPLE`].
pub fn live_sample(window: partwise_kafka::audit::Window) -> u64 {
    match window {
        partwise_kafka::audit::Window::FromEnd(n) => n,
        _ => LIVE_SAMPLE,
    }
}

/// The window `--counts live:...` weighed by, as the output says it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LiveWeights {
    /// The flag's value (`live:1h`).
    pub counts: String,
    /// The window in words (`the records of the last 1h (by timestamp)`).
    pub window: String,
    /// Records read at most per partition.
    pub per_partition: u64,
    /// The topics whose records were counted.
    pub topics: Vec<String>,
    /// Topics that could not be read, with why (their records are not counted).
    pub unread: Vec<String>,
    /// Keyed records counted.
    pub records: u64,
    /// Distinct keys among them.
    pub keys: usize,
    /// Records of the window without a key (not weighed).
    pub keyless: u64,
}

impl std::fmt::Display for LiveWeights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "weights from --counts {}: {} of {} (at most {} per partition): {} keyed records, {} keys",
            self.counts,
            self.window,
            self.topics.join(", "),
            self.per_partition,
            self.records,
            self.keys
        )?;
        if self.keyless > 0 {
            write!(f, ", {} keyless records not weighed", self.keyless)?;
        }
        for u in &self.unread {
            write!(f, "; not read: {u}")?;
        }
        Ok(())
    }
}

impl Weights {
    /// The keys of the audited topics' windows (every topic's keys summed,
    /// as `kafka audit --counts-out` writes them), and what the window was;
    /// an error when the window holds no keyed record.
    pub fn live(
        window: partwise_kafka::audit::Window,
        audits: &[&partwise_kafka::audit::TopicAudit],
    ) -> Result<(Weights, LiveWeights)> {
        let flag = crate::render::audit::window_flag(window);
        let keys = partwise_kafka::audit::window_counts(audits.iter().copied());
        let total = keys.iter().fold(0u64, |t, (_, c)| t.saturating_add(*c));
        let mut topics = Vec::new();
        let mut unread = Vec::new();
        let mut keyless = 0u64;
        for a in audits {
            match (&a.error, &a.traffic) {
                (Some(e), _) => unread.push(format!("{} ({e})", a.name)),
                (None, Some(t)) => {
                    topics.push(a.name.clone());
                    keyless = keyless.saturating_add(t.hitters.keyless);
                }
                (None, None) => unread.push(format!("{} (no records sampled)", a.name)),
            }
        }
        let info = LiveWeights {
            counts: flag.clone(),
            window: crate::render::audit::window_label(window),
            per_partition: live_sample(window),
            topics,
            unread,
            records: total,
            keys: keys.len(),
            keyless,
        };
        if total == 0 {
            return Err(crate::exit::CliError::msg(format!(
                "--counts {flag}: {} hold no keyed records, there is no traffic to weigh",
                if info.topics.is_empty() {
                    "the topics read".to_string()
                } else {
                    format!("{} of {}", info.window, info.topics.join(", "))
                }
            )));
        }
        Ok((
            Weights {
                name: format!("--counts {flag}"),
                keys,
                total,
            },
            info,
        ))
    }
}

/// Borrowed `(key, weight)` pairs, as the core takes them.
pub fn weight_refs(keys: &[(Vec<u8>, u64)]) -> Vec<(&[u8], u64)> {
    keys.iter().map(|(k, c)| (k.as_slice(), *c)).collect()
}
