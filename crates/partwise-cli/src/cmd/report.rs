//! `partwise report`: one self-contained HTML page (or its JSON twin) of a
//! topology's layout, placement, skew, resize impact and Redis slots, with
//! the verdict first. The content is [`crate::ops::report::model::Model`],
//! which [`crate::ops::report::report`] builds; [`html`] draws it and
//! [`json`] serializes it.

mod html;
mod json;

use crate::exit::{ExitCode, Result};
use crate::output::Format;
use std::io::Write;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// One self-contained HTML page
    Html,
    /// The same content as one JSON document
    Json,
    /// That JSON document on one line
    Ndjson,
}

#[derive(clap::Args)]
#[command(
    mut_arg("cluster", |a| a.long_help(
        "A Redis Cluster node, HOST:PORT (repeatable): the node of each family's keys"
    )),
    mut_arg("input", |a| a.long_help(
        "Sample keys, one per line ('-' reads stdin): logical keys, each producer encodes them with its key_format (the partition map, skew and resize use them)"
    ))
)]
pub struct Args {
    /// Topology file (TOML): topics, producers, co-partition groups, consumer groups, Redis families
    #[arg(value_name = "FILE", required_unless_present = "streams")]
    file: Option<PathBuf>,
    #[arg(
        help = super::flags::STREAMS,
        long_help = "A Kafka Streams application's topology, the text Topology#describe() prints (repeatable, one application a file): every join's source topics are in the report as a co-partition group, as check --streams checks them",
       long = "streams", value_name = "DESCRIBE")]
    streams: Vec<PathBuf>,
    /// A topic the --streams topologies read and the topology file does not
    /// declare, with its partition count (repeatable; with -b the cluster's
    /// count is used for the others)
    #[arg(short = 't', long = "topic", value_name = "NAME:N", requires = "streams", value_parser = super::parse::topic_count)]
    topics: Vec<super::parse::TopicCount>,
    #[command(flatten)]
    input: super::flags::InputFlag,
    /// The keys with their traffic: KEY,COUNT lines (the count after the last comma)
    ///
    /// In place of -i: loads, hot partitions and consumer shares are then of records; without
    /// it no partition is called hot, the load being unknown. With -b,
    /// live:DURATION (live:1h) or live:last=N takes them from the topics'
    /// newest records, sampled as kafka audit --since/--from-end does
    #[arg(long, value_name = "FILE|live:DURATION|live:last=N", conflicts_with = "input", value_parser = super::parse::counts_from)]
    counts: Option<super::CountsFrom>,
    /// Write the report to FILE (default: stdout)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value = "html")]
    format: ReportFormat,
    /// Live Kafka beside the declared topology (-b BROKERS, -X KEY=VALUE, -F FILE):
    /// partition counts, the partitioners that wrote each topic, the live groups
    #[command(flatten)]
    kafka: super::conn::ConnArgs,
    #[command(flatten)]
    cluster: super::flags::RedisConn,
}

pub fn run(args: Args) -> Result<ExitCode> {
    // Never the file the report is made from: refused before anything is read.
    let mut output = match &args.output {
        Some(path) => {
            let mut o = crate::outfile::Output::new("-o/--output", path);
            if let Some(file) = &args.file {
                o.input("the topology file", file)?;
            }
            o.inputs("--streams", args.streams.iter().map(PathBuf::as_path))?;
            o.inputs("-i/--input", args.input.input.as_deref())?;
            o.inputs(
                "--counts",
                args.counts.as_ref().and_then(super::CountsFrom::file),
            )?;
            o.inputs("-F", args.kafka.files())?;
            Some(o)
        }
        None => None,
    };
    // Connection flags are checked before anything is asked of a server.
    let conn = args
        .kafka
        .given()
        .then(|| args.kafka.connection())
        .transpose()?;
    if let (Some(o), Some(c)) = (&mut output, &conn) {
        // The files the connection's properties name (a CA, a key).
        for (key, path) in c.properties().filter(|(k, _)| names_a_file(k)) {
            o.input(format!("the property {key}"), std::path::Path::new(path))?;
        }
    }
    let sources = crate::ops::Sources {
        file: args.file.clone(),
        streams: args.streams.clone(),
        topics: args
            .topics
            .iter()
            .map(|t| (t.name.clone(), t.partitions))
            .collect(),
        input: args.input.input.clone(),
        counts: args.counts.clone(),
        conn,
    };
    let m = crate::ops::report::report(&crate::ops::report::Request {
        sources,
        redis: args.cluster.cluster.clone(),
        timeout: args.kafka.timeout(),
    })?;
    let text = match args.format {
        ReportFormat::Html => html::page(&m).into_bytes(),
        ReportFormat::Json | ReportFormat::Ndjson => {
            let format = if args.format == ReportFormat::Json {
                Format::Json
            } else {
                Format::Ndjson
            };
            let mut buf = Vec::new();
            crate::output::write_doc(&mut buf, format, &json::model(&m))?;
            buf
        }
    };
    match &output {
        // Written whole or not at all: a half-written page would look like
        // a report (and a device, FIFO or link given as the path is written
        // through, never replaced).
        Some(o) => o.write(&text)?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&text)?;
            out.flush()?;
        }
    }
    Ok(if m.ok() {
        ExitCode::Ok
    } else {
        ExitCode::Findings
    })
}

/// Whether librdkafka property `key` names a file the client reads
/// (`ssl.ca.location`, `ssl.key.location`, `sasl.kerberos.keytab`, ...).
fn names_a_file(key: &str) -> bool {
    key.ends_with(".location") || key.ends_with(".keytab")
}
