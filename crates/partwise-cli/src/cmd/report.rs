//! `partwise report`: one self-contained HTML page (or its JSON twin) of a
//! topology's layout, placement, skew, resize impact and Redis slots, with
//! the verdict first. The content is [`model::Model`], built from the
//! library's analyses; [`html`] draws it and [`json`] serializes it.

mod html;
mod json;
mod live;
mod model;

use crate::exit::{CliError, ExitCode, Result};
use crate::load::{bounded, load_samples, load_topology};
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
    let mut topology = match &args.file {
        Some(f) => load_topology(f)?,
        None => partwise::topology::Topology {
            topics: Vec::new(),
            copartition_groups: Vec::new(),
            consumer_groups: Vec::new(),
            redis_families: Vec::new(),
        },
    };
    let file = args.file.clone().unwrap_or_else(|| args.streams[0].clone());
    let file_weights = match &args.counts {
        Some(super::CountsFrom::File(f)) => Some(super::Weights::read(f)?),
        _ => None,
    };
    // Connection flags are checked before anything is asked of a server.
    let conn = args
        .kafka
        .given()
        .then(|| args.kafka.connection())
        .transpose()?;
    let window = args.counts.as_ref().and_then(super::CountsFrom::live);
    if let (Some(w), None) = (window, &conn) {
        return Err(crate::exit::CliError::msg(format!(
            "--counts {}: live weights are read from the cluster: give -b (or a KEY,COUNT file)",
            crate::render::audit::window_flag(w)
        )));
    }
    if let (Some(o), Some(c)) = (&mut output, &conn) {
        // The files the connection's properties name (a CA, a key).
        for (key, path) in c.properties().filter(|(k, _)| names_a_file(k)) {
            o.input(format!("the property {key}"), std::path::Path::new(path))?;
        }
    }
    // The source topics the --streams applications join: a streams group's
    // split tasks are judged against them.
    let joins = if args.streams.is_empty() {
        Vec::new()
    } else {
        declare_streams(&args, conn.as_ref(), &mut topology)?
    };
    if args.file.is_some() || !topology.topics.is_empty() {
        bounded(&file, &topology)?;
    }
    let live_kafka = conn
        .as_ref()
        .map(|c| live::kafka(c, &topology, window, &joins))
        .transpose()?;
    let mut live_weights = None;
    let weights = match (window, &conn, &live_kafka) {
        (Some(w), Some(c), Some(lk)) => {
            let rest = live::other_topics(c, &topology, lk, w)?;
            let (weights, info) = super::Weights::live(w, &live::window_audits(lk, &rest))?;
            live_weights = Some(info);
            Some(weights)
        }
        _ => file_weights,
    };
    let (samples, weights) = match weights {
        Some(w) => {
            let (samples, counts) = w.into_samples();
            (samples, Some(counts))
        }
        None => (load_samples(args.input.input.clone())?, None),
    };
    let live_redis = (!args.cluster.cluster.is_empty())
        .then(|| {
            live::redis(
                &args.cluster.cluster,
                args.kafka.timeout(),
                &topology,
                &samples,
            )
        })
        .transpose()?;
    let mut m = model::Model::build(
        file.display().to_string(),
        &topology,
        samples,
        weights,
        live_kafka,
        live_redis,
    );
    m.live_weights = live_weights;
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

/// Adds each `--streams` application's co-partition groups to `topology`
/// as `check --streams` does ([`partwise::streams::declare`]): the counts of
/// topics the file does not declare from `-t`, then, with `-b`, from the
/// cluster. Returns the source topics of each join, read from the same
/// parse of each file.
fn declare_streams(
    args: &Args,
    conn: Option<&partwise_kafka::Connection>,
    topology: &mut partwise::topology::Topology,
) -> Result<Vec<Vec<String>>> {
    let mut counts: Vec<(String, partwise::PartitionCount)> = args
        .topics
        .iter()
        .map(|t| (t.name.clone(), t.partitions))
        .collect();
    if let Some(conn) = conn {
        let live = partwise_kafka::cluster::cluster_topics(conn).map_err(super::conn::kerr)?;
        for t in live {
            if let Ok(n) = partwise::PartitionCount::new(t.partitions) {
                if !counts.iter().any(|(c, _)| *c == t.name) {
                    counts.push((t.name, n));
                }
            }
        }
    }
    let mut joins = Vec::new();
    for path in &args.streams {
        let app = crate::load::load_streams(path)?;
        joins.extend(app.copartition_groups().into_iter().map(|g| g.external));
        let name = path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        for p in app.patterns() {
            say!(
                "partwise: warning: {} reads topics by the pattern {p}: which topics those are is not in the description, so their joins are not in the report",
                path.display()
            );
        }
        let added = partwise::streams::declare(topology, &name, &app, &counts)
            .map_err(|e| CliError::context(format!("--streams {}", path.display()), e))?;
        if added.is_empty() {
            say!(
                "partwise: note: {} joins no topics Streams must co-partition",
                path.display()
            );
        }
    }
    Ok(joins)
}

/// Whether librdkafka property `key` names a file the client reads
/// (`ssl.ca.location`, `ssl.key.location`, `sasl.kerberos.keytab`, ...).
fn names_a_file(key: &str) -> bool {
    key.ends_with(".location") || key.ends_with(".keytab")
}
