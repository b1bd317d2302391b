//! `partwise kafka produce`: one record per input line, `KEY<TAB>VALUE` or
//! `KEY` alone, to the one topic named, each routed by a partwise partitioner
//! and set explicitly on the record; prints where each landed.

use super::{kerr, ConnArgs};
use crate::cmd::parse;
use crate::exit::{CliError, ExitCode, Result};
use crate::input::{input_name, open};
use crate::output::{hex, key_cell, key_json, Format, JsonStream, Table};
use partwise::{KeyFormat, Partitioner, Placement};
use partwise_kafka::produce::{Delivery, RoutedProducer};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    conn: ConnArgs,
    /// The topic to write to (it must exist)
    #[arg(short = 't', long = "topic", value_name = "TOPIC", value_parser = parse::not_blank)]
    topic: String,
    /// Partitioner spec that routes the records
    #[arg(
        short = 'P',
        long = "partitioner",
        value_name = "SPEC",
        default_value = "java",
        value_parser = parse::partitioner
    )]
    partitioner: Partitioner,
    /// Lines of KEY or KEY<TAB>VALUE ('-' or absent: stdin)
    #[arg(short = 'i', long = "input", value_name = "FILE", default_value = "-")]
    input: PathBuf,
    /// How the key text becomes key bytes (see `partwise route --help`)
    #[arg(long = "key-format", value_name = "F", default_value = "utf8", value_parser = parse::key_format)]
    key_format: KeyFormat,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

struct Line {
    key: Vec<u8>,
    value: Option<Vec<u8>>,
    placement: Placement,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let (partitioner, format) = (a.partitioner, a.key_format);
    // Read and encode every line first: a bad line stops the run before
    // anything is written.
    let name = input_name(&a.input);
    let reader = BufReader::new(open(&a.input)?);
    let mut lines: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
    for (i, line) in reader.split(b'\n').enumerate() {
        let mut line = line.map_err(|e| CliError::context(format!("reading {name}"), e))?;
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.is_empty() {
            continue;
        }
        let (k, v) = match memchr::memchr(b'\t', &line) {
            Some(t) => (&line[..t], Some(line[t + 1..].to_vec())),
            None => (&line[..], None),
        };
        let key = format
            .encode(k)
            .map_err(|e| CliError::msg(format!("{name}:{}: {e}", i + 1)))?;
        lines.push((key, v));
    }
    let conn = a.conn.connection()?;
    let mut p = RoutedProducer::new(&conn, partitioner).map_err(kerr)?;
    p.partition_count(&a.topic).map_err(kerr)?;
    let mut sent: Vec<Line> = Vec::with_capacity(lines.len());
    for (i, (key, value)) in lines.into_iter().enumerate() {
        let placement = p
            .send(&a.topic, Some(&key), value.as_deref(), &[], i)
            .map_err(kerr)?;
        sent.push(Line {
            key,
            value,
            placement,
        });
    }
    let mut deliveries: Vec<Delivery> = p.flush().map_err(kerr)?;
    deliveries.sort_by_key(|d| d.id);
    let mut out = std::io::stdout().lock();
    // `json` is one document (an array of the delivery rows), `ndjson` a row per line.
    let mut rows = match a.format {
        Format::Table => None,
        f => Some(JsonStream::new(&mut out, f)?),
    };
    let mut failed = 0;
    let mut mismatched = 0;
    let mut tab = Table::new(["KEY", "PARTITION", "OFFSET", "NOTE"]);
    for d in &deliveries {
        let Some(l) = sent.get(d.id) else { continue };
        let expected = l.placement.partition();
        let note = match (&d.error, expected) {
            (Some(e), _) => {
                failed += 1;
                format!("FAILED: {e}")
            }
            (None, Some(e)) if e as i32 != d.partition => {
                mismatched += 1;
                format!("expected partition {e}")
            }
            (None, None) => format!("{} (placed by librdkafka)", l.placement.behaviour()),
            _ => String::new(),
        };
        match a.format {
            Format::Table => tab.row([
                key_cell(&l.key),
                d.partition.to_string(),
                d.offset.to_string(),
                note,
            ]),
            Format::Json | Format::Ndjson => {
                rows.as_mut()
                    .expect("a JSON format has a stream")
                    .write(&json!({
                        "key": key_json(&l.key),
                        "key_hex": hex(&l.key),
                        "value_bytes": l.value.as_ref().map(Vec::len),
                        "topic": a.topic,
                        "partition": d.partition,
                        "offset": d.offset,
                        "expected_partition": expected,
                        "error": d.error,
                    }))?;
            }
        }
    }
    if let Some(rows) = rows {
        rows.finish()?;
    }
    if a.format == Format::Table {
        tab.write(&mut out)?;
    }
    out.flush()?;
    let missing = sent.len() - deliveries.len();
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
