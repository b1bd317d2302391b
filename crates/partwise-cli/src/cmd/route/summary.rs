//! `route --summary`: how many keys each partitioner puts on each
//! partition at each count, counted on several threads (`--threads`) with
//! the same answer as one.

use super::Config;
use crate::exit::{ExitCode, Result};
use crate::input::BATCH;
use crate::output::{Format, JsonStream, Table};
use partwise::{Partitioner, NOT_FIXED};
use serde::Serialize;
use std::io::Write;

/// One row of `route --summary`'s JSON.
#[derive(Serialize)]
struct SummaryRow<'a> {
    partitioner: Partitioner,
    partitions: u32,
    keys: u64,
    counts: &'a [u64],
    not_fixed: u64,
}

/// What `--summary` counts, one per thread: `counts[c][p][partition]`,
/// `not_fixed[c][p]`.
struct Tally {
    counts: Vec<Vec<Vec<u64>>>,
    not_fixed: Vec<Vec<u64>>,
    /// Partitions of the batch at hand.
    buf: Vec<u32>,
}

impl Tally {
    fn new(cfg: &Config) -> Tally {
        Tally {
            counts: cfg
                .counts
                .iter()
                .map(|n| vec![vec![0u64; n.get() as usize]; cfg.partitioners.len()])
                .collect(),
            not_fixed: vec![vec![0u64; cfg.partitioners.len()]; cfg.counts.len()],
            buf: vec![0u32; BATCH],
        }
    }

    fn add(&mut self, cfg: &Config, keys: &[&[u8]]) {
        for (ci, &n) in cfg.counts.iter().enumerate() {
            for (pi, p) in cfg.partitioners.iter().enumerate() {
                let dest = &mut self.buf[..keys.len()];
                p.place_batch(keys, n, dest);
                let hist = &mut self.counts[ci][pi];
                for &part in dest.iter() {
                    if part == NOT_FIXED {
                        self.not_fixed[ci][pi] += 1;
                    } else {
                        hist[part as usize] += 1;
                    }
                }
            }
        }
    }

    /// Adds another thread's counts (counts add up in any order).
    fn merge(&mut self, other: Tally) {
        for (mine, theirs) in self
            .counts
            .iter_mut()
            .flatten()
            .zip(other.counts.iter().flatten())
        {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
        for (a, b) in self
            .not_fixed
            .iter_mut()
            .flatten()
            .zip(other.not_fixed.iter().flatten())
        {
            *a += b;
        }
    }
}

pub(super) fn summary(cfg: &Config, mut out: impl Write) -> Result<ExitCode> {
    let (parts, total) = cfg.source.fold_batches(
        cfg.threads,
        || Tally::new(cfg),
        |t, b| {
            t.add(cfg, b.keys);
            Ok(())
        },
    )?;
    let mut parts = parts.into_iter();
    let mut tally = parts.next().unwrap_or_else(|| Tally::new(cfg));
    for p in parts {
        tally.merge(p);
    }
    let Tally {
        counts, not_fixed, ..
    } = tally;
    match cfg.format {
        Format::Json | Format::Ndjson => {
            let mut s = JsonStream::new(&mut out, cfg.format)?;
            for (ci, n) in cfg.counts.iter().enumerate() {
                for (pi, p) in cfg.partitioners.iter().enumerate() {
                    s.write(&SummaryRow {
                        partitioner: *p,
                        partitions: n.get(),
                        keys: total,
                        counts: &counts[ci][pi],
                        not_fixed: not_fixed[ci][pi],
                    })?;
                }
            }
            s.finish()?;
        }
        Format::Table => {
            let mut t = Table::new([
                "PARTITIONER",
                "N",
                "KEYS",
                "MIN",
                "MAX",
                "MAX/MEAN",
                "NOT FIXED",
                "COUNTS",
            ]);
            for (ci, n) in cfg.counts.iter().enumerate() {
                for (pi, p) in cfg.partitioners.iter().enumerate() {
                    let hist = &counts[ci][pi];
                    let fixed: u64 = hist.iter().sum();
                    let min = hist.iter().min().copied().unwrap_or(0);
                    let max = hist.iter().max().copied().unwrap_or(0);
                    let mean = fixed as f64 / f64::from(n.get());
                    let ratio = if fixed == 0 {
                        "-".to_string()
                    } else {
                        format!("{:.3}", max as f64 / mean)
                    };
                    let list = if n.get() <= 16 {
                        hist.iter()
                            .map(u64::to_string)
                            .collect::<Vec<_>>()
                            .join(" ")
                    } else {
                        "(use --format json for all)".to_string()
                    };
                    t.row([
                        p.spec().to_string(),
                        n.to_string(),
                        total.to_string(),
                        min.to_string(),
                        max.to_string(),
                        ratio,
                        not_fixed[ci][pi].to_string(),
                        list,
                    ]);
                }
            }
            t.write(&mut out)?;
            out.flush()?;
        }
    }
    Ok(ExitCode::Ok)
}
