//! `partwise kafka produce`: one record per input line, `KEY<TAB>VALUE` or
//! `KEY` alone, to the one topic named, each routed by a partwise partitioner
//! and set explicitly on the record; prints where each landed.
//!
//! The input is streamed: a thread reads and encodes lines into a bounded
//! queue and each record is sent as it arrives, so a slow pipe is written
//! line by line, and an endless one (`yes |`) in bounded memory (JSON rows
//! are printed as their deliveries come; a table holds its rows, up to the
//! cap of every command that holds its input).

use super::{kerr, ConnArgs};
use crate::cmd::parse;
use crate::exit::{CliError, ExitCode, Result};
use crate::input::{for_each_record_group, input_name, Held};
use crate::output::{key_cell, Format, JsonStream, Table};
use partwise::{KeyFormat, Placement};
use partwise_kafka::produce::{Delivery, RoutedProducer};
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

#[derive(clap::Args)]
#[command(
    mut_arg("partitioner", |a| a.long_help(
        "Partitioner spec that routes the records"
    )),
    mut_arg("input", |a| a.long_help(
        "Lines of KEY or KEY<TAB>VALUE ('-' or absent: stdin)"
    )),
    mut_arg("key_format", |a| a.long_help(
        "How the key text becomes key bytes (see `partwise route --help`)"
    ))
)]
pub struct Args {
    #[command(flatten)]
    conn: ConnArgs,
    /// The topic to write to (it must exist)
    #[arg(short = 't', long = "topic", value_name = "TOPIC", value_parser = parse::not_blank)]
    topic: String,
    #[command(flatten)]
    partitioner: crate::cmd::flags::PartitionerFlag,
    #[arg(short = 'i', long = "input", value_name = "FILE", default_value = "-", help = crate::cmd::flags::INPUT)]
    input: PathBuf,
    #[command(flatten)]
    key_format: crate::cmd::flags::KeyFormatFlag,
    #[command(flatten)]
    format: crate::cmd::flags::FormatFlag,
}

/// Lines read ahead of the producer at most: the reader waits for the
/// producer beyond that, so memory stays bounded whatever the input.
const QUEUE: usize = 1024;

/// One line of input, encoded.
struct Record {
    /// Its line number (1-based).
    line: u64,
    key: Vec<u8>,
    value: Option<Vec<u8>>,
}

/// A record sent whose delivery is awaited.
struct Pending {
    key: Vec<u8>,
    value_bytes: Option<usize>,
    placement: Placement,
}

/// Where the lines come from, opened before connecting so that a path that
/// cannot be read is refused before anything is sent.
enum Source {
    Stdin,
    File(File),
}

/// Reads `source` into `tx` a line at a time, encoding each key: returns
/// the first error (a read error, a line too long, a key that does not
/// decode), or `Ok` at the end of the input or when the producer stopped
/// listening.
fn read_lines(
    source: Source,
    name: &str,
    format: KeyFormat,
    tx: &mpsc::SyncSender<Record>,
) -> Result<()> {
    let per_group = |first: u64, group: &[&[u8]]| -> Result<()> {
        for (i, line) in group.iter().enumerate() {
            let line_no = first + i as u64 + 1;
            if line.is_empty() {
                continue;
            }
            let (k, v) = match memchr::memchr(b'\t', line) {
                Some(t) => (&line[..t], Some(line[t + 1..].to_vec())),
                None => (&line[..], None),
            };
            let key = format
                .encode(k)
                .map_err(|e| CliError::msg(format!("{name} line {line_no}: {e}")))?;
            let rec = Record {
                line: line_no,
                key,
                value: v,
            };
            if tx.send(rec).is_err() {
                // The producer stopped on an error of its own, the one
                // to show; nothing more is read.
                return Ok(());
            }
        }
        Ok(())
    };
    let r = match source {
        Source::Stdin => {
            let mut stdin = std::io::stdin().lock();
            for_each_record_group(&mut stdin, name, per_group)
        }
        Source::File(mut f) => for_each_record_group(&mut f, name, per_group),
    };
    r.map(|_| ())
}

pub fn run(a: Args) -> Result<ExitCode> {
    let format = a.key_format.key_format;
    let name = input_name(&a.input);
    let source = if a.input.as_os_str() == "-" {
        Source::Stdin
    } else {
        Source::File(
            File::open(&a.input).map_err(|e| CliError::context(format!("reading {name}"), e))?,
        )
    };
    let (tx, rx) = mpsc::sync_channel::<Record>(QUEUE);
    let reader = {
        let name = name.clone();
        std::thread::spawn(move || read_lines(source, &name, format, &tx))
    };
    // Nothing is sent before the first line: an input that cannot be read
    // (a directory) or whose first key does not decode is refused before
    // connecting, as when the whole input was read first.
    let mut first = rx.recv().ok();
    if first.is_none() {
        reader
            .join()
            .unwrap_or_else(|_| Err(CliError::msg(format!("reading {name}: the reader failed"))))?;
        let reader = std::thread::spawn(|| Ok(()));
        return produce(&a, None, rx, reader);
    }
    produce(&a, first.take(), rx, reader)
}

/// Sends `first`, then every record of `rx` as it arrives, and prints where
/// each landed; `reader` is the thread that feeds `rx`.
fn produce(
    a: &Args,
    mut first: Option<Record>,
    rx: mpsc::Receiver<Record>,
    reader: std::thread::JoinHandle<Result<()>>,
) -> Result<ExitCode> {
    let name = input_name(&a.input);
    let conn = a.conn.connection()?;
    let mut p = RoutedProducer::new(&conn, a.partitioner.partitioner).map_err(kerr)?;
    p.partition_count(&a.topic).map_err(kerr)?;

    let bar = super::stderr_is_terminal().then(|| {
        let b = indicatif::ProgressBar::new_spinner();
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {pos} records sent ({per_sec}), {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        b.set_message(format!("{} delivered", 0));
        b
    });
    let mut out = std::io::stdout().lock();
    let mut view = View::new(a, &mut out)?;
    let mut pending: HashMap<usize, Pending> = HashMap::new();
    let mut sent = 0usize;
    let sending = (|| -> Result<()> {
        loop {
            let next = match first.take() {
                Some(rec) => Ok(rec),
                None => rx.recv_timeout(Duration::from_millis(100)),
            };
            match next {
                Ok(rec) => {
                    let id = sent;
                    let placement = p
                        .send(&a.topic, Some(&rec.key), rec.value.as_deref(), &[], id)
                        .map_err(|e| CliError::context(format!("{name} line {}", rec.line), e))?;
                    sent += 1;
                    pending.insert(
                        id,
                        Pending {
                            key: rec.key,
                            value_bytes: rec.value.as_ref().map(Vec::len),
                            placement,
                        },
                    );
                    if !sent.is_multiple_of(256) {
                        continue;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
            }
            for d in p.poll_deliveries() {
                view.delivered(&mut pending, d)?;
            }
            if let Some(b) = &bar {
                b.set_position(sent as u64);
                b.set_message(format!("{} delivered", view.delivered));
            }
        }
    })();
    // Stop the reader (it sees the queue closed) before waiting for what
    // was sent, whatever ended the loop.
    drop(rx);
    let read = reader
        .join()
        .unwrap_or_else(|_| Err(CliError::msg(format!("reading {name}: the reader failed"))));
    let flushed = p.flush().map_err(kerr);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let (Ok(ds), Ok(())) = (&flushed, &sending) {
        for d in ds.iter().cloned() {
            view.delivered(&mut pending, d)?;
        }
    }
    let (failed, mismatched, delivered) = (view.failed, view.mismatched, view.delivered);
    view.finish()?;
    let missing = pending.len();
    // Records already sent stay sent: an error after some says how many.
    let so_far = |e: CliError| {
        let ctx = format!("stopped after {sent} record(s) were sent ({delivered} delivered)");
        match e {
            CliError::Msg(m) => CliError::msg(format!("{m} ({ctx})")),
            CliError::Lib { context, error } => CliError::Lib {
                context: Some(match context {
                    Some(c) => format!("{c} ({ctx})"),
                    None => ctx,
                }),
                error,
            },
            other => other,
        }
    };
    sending.map_err(so_far)?;
    read.map_err(so_far)?;
    flushed?;
    if failed > 0 || missing > 0 {
        return Err(CliError::msg(format!(
            "{failed} record(s) failed and {missing} got no delivery report within the timeout"
        )));
    }
    Ok(if mismatched > 0 {
        ExitCode::Findings
    } else {
        ExitCode::Ok
    })
}

/// Where delivery rows go.
enum Sink<'o, W: Write> {
    /// Streamed as the deliveries come.
    Json(JsonStream<&'o mut W>),
    /// Held (within the cap) and sorted into input order at the end.
    Table {
        out: &'o mut W,
        rows: Vec<(usize, [String; 4])>,
        held: Held,
    },
}

/// The rows of the deliveries, and their tallies.
struct View<'o, W: Write> {
    topic: String,
    sink: Sink<'o, W>,
    name: String,
    delivered: u64,
    failed: u64,
    mismatched: u64,
}

impl<'o, W: Write> View<'o, W> {
    fn new(a: &Args, out: &'o mut W) -> Result<View<'o, W>> {
        let sink = match a.format.format {
            Format::Table => Sink::Table {
                out,
                rows: Vec::new(),
                held: Held::new(
                    "a table of every record",
                    "; --format ndjson streams any number",
                ),
            },
            f => Sink::Json(JsonStream::new(out, f)?),
        };
        Ok(View {
            topic: a.topic.clone(),
            sink,
            name: input_name(&a.input),
            delivered: 0,
            failed: 0,
            mismatched: 0,
        })
    }

    fn delivered(&mut self, pending: &mut HashMap<usize, Pending>, d: Delivery) -> Result<()> {
        let Some(l) = pending.remove(&d.id) else {
            return Ok(());
        };
        self.delivered += 1;
        let expected = l.placement.partition();
        let note = match (&d.error, expected) {
            (Some(e), _) => {
                self.failed += 1;
                format!("FAILED: {e}")
            }
            (None, Some(e)) if e as i32 != d.partition => {
                self.mismatched += 1;
                format!("expected partition {e}")
            }
            (None, None) => format!("{} (placed by librdkafka)", l.placement.behaviour()),
            _ => String::new(),
        };
        match &mut self.sink {
            Sink::Json(rows) => {
                /// One delivered record: its key, where it landed and
                /// where the partitioner said it would.
                #[derive(serde::Serialize)]
                struct Row<'a> {
                    #[serde(serialize_with = "partwise::ser::key_text")]
                    key: &'a [u8],
                    #[serde(serialize_with = "partwise::ser::key_hex")]
                    key_hex: &'a [u8],
                    value_bytes: Option<usize>,
                    topic: &'a str,
                    partition: i32,
                    offset: i64,
                    expected_partition: Option<u32>,
                    error: &'a Option<String>,
                }
                rows.write(&Row {
                    key: &l.key,
                    key_hex: &l.key,
                    value_bytes: l.value_bytes,
                    topic: &self.topic,
                    partition: d.partition,
                    offset: d.offset,
                    expected_partition: expected,
                    error: &d.error,
                })?;
                rows.flush()?;
            }
            Sink::Table { rows, held, .. } => {
                held.take(&self.name, &[l.key.as_slice()])?;
                rows.push((
                    d.id,
                    [
                        key_cell(&l.key),
                        d.partition.to_string(),
                        d.offset.to_string(),
                        note,
                    ],
                ));
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<()> {
        match self.sink {
            Sink::Json(rows) => {
                rows.finish()?;
            }
            Sink::Table { out, mut rows, .. } => {
                rows.sort_by_key(|(id, _)| *id);
                let mut tab = Table::new(["KEY", "PARTITION", "OFFSET", "NOTE"]);
                for (_, row) in rows {
                    tab.row(row);
                }
                tab.write(&mut *out)?;
                out.flush()?;
            }
        }
        Ok(())
    }
}
