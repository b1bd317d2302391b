//! `partwise kafka consume`: a consumer-group member running partwise's
//! co-partitioned assignor (classic protocol) or taking the broker's
//! assignment (KIP-848's consumer protocol), printing what it is given and
//! what it handles.

use crate::cmd::{duration, parse};
use crate::exit::{CliError, ExitCode, Result};
use crate::output::{visible, Format};
use partwise::assign::Assignor;
use partwise_group::{
    Config, Consumer, Event, GroupAssignor, GroupProtocol, OffsetReset, Records, UnitAssignment,
};
use std::io::{BufWriter, Write};
use std::time::Duration;

#[derive(clap::Args)]
#[command(
    mut_arg("format", |a| a.default_value("ndjson").long_help(
        "Output format (table prints one line per event)"
    ))
)]
pub struct Args {
    #[command(flatten)]
    conn: super::ConnArgs,
    /// Consumer group id
    #[arg(short = 'g', long = "group", value_name = "GROUP", value_parser = parse::not_blank)]
    group: String,
    /// Subscribed topic (repeatable)
    #[arg(short = 't', long = "topic", value_name = "TOPIC", required = true, value_parser = parse::not_blank)]
    topics: Vec<String>,
    #[arg(short = 'a', long = "assignor", value_name = "SPEC", value_parser = parse::consume_assignor,
          help = crate::cmd::flags::ASSIGNOR,
          long_help = "The assignor this member runs when it leads, classic protocol only: copartitioned (offers range as fallback; the default) or java:range (protocol range)")]
    assignor: Option<Assignor>,
    /// group.protocol: classic (a member leads and runs --assignor; the
    /// default) or consumer (KIP-848: the broker assigns, with
    /// --remote-assignor)
    #[arg(long = "group-protocol", value_name = "PROTOCOL", value_parser = parse::group_protocol)]
    group_protocol: Option<GroupProtocol>,
    /// group.remote.assignor, consumer protocol only: the server assignor
    /// (uniform, range, or one in the broker's group.consumer.assignors;
    /// default: the broker's first)
    #[arg(long = "remote-assignor", value_name = "NAME", value_parser = parse::not_blank)]
    remote_assignor: Option<String>,
    /// group.instance.id: makes this a static member
    #[arg(long = "group-instance-id", value_name = "ID", value_parser = crate::cmd::parse::not_blank)]
    group_instance_id: Option<String>,
    /// client.id
    #[arg(long = "client-id", value_name = "ID", default_value = "partwise")]
    client_id: String,
    /// Where a partition with no committed offset starts: earliest or latest
    #[arg(long = "offset-reset", value_name = "WHERE", default_value = "latest", value_parser = parse::offset_reset)]
    offset_reset: OffsetReset,
    /// session.timeout.ms, classic protocol only (default 45s; 500ms, 2m; a
    /// bare number is milliseconds)
    #[arg(long = "session-timeout", alias = "session-timeout-ms", value_name = "DURATION", value_parser = duration::positive_millis)]
    session_timeout: Option<Duration>,
    /// heartbeat.interval.ms, classic protocol only (default 3s; a bare
    /// number is milliseconds)
    #[arg(long = "heartbeat-interval", alias = "heartbeat-interval-ms", value_name = "DURATION", value_parser = duration::positive_millis)]
    heartbeat_interval: Option<Duration>,
    /// max.poll.interval.ms (a bare number is milliseconds)
    #[arg(long = "max-poll-interval", alias = "max-poll-interval-ms", value_name = "DURATION", default_value = "5m", value_parser = duration::positive_millis)]
    max_poll_interval: Duration,
    /// Rebalance timeout sent in JoinGroup or ConsumerGroupHeartbeat
    /// (default: --max-poll-interval; a bare number is milliseconds)
    #[arg(long = "rebalance-timeout", alias = "rebalance-timeout-ms", value_name = "DURATION", value_parser = duration::positive_millis)]
    rebalance_timeout: Option<Duration>,
    /// auto.commit.interval.ms: how often handled offsets are committed (a
    /// bare number is milliseconds)
    #[arg(long = "commit-interval", alias = "commit-interval-ms", value_name = "DURATION", default_value = "5s", value_parser = duration::millis)]
    commit_interval: Duration,
    /// How long to keep retrying, after joining, while no broker answers or
    /// the coordinator is unavailable; then exit 2 (a bare number is milliseconds)
    #[arg(long = "retry-timeout", alias = "retry-timeout-ms", value_name = "DURATION", default_value = "2m", value_parser = duration::millis)]
    retry_timeout: Duration,
    #[command(flatten)]
    format: crate::cmd::flags::FormatFlag,
    /// Print one `records` event per poll (records handled in it, and in
    /// all) instead of one `record` event per record
    #[arg(long)]
    count_only: bool,
}

/// The group protocol and remote assignor, from the flags or from `-X
/// group.protocol` / `-X group.remote.assignor` (the names librdkafka and
/// the Java client give them), and the flags that do not go with them:
/// client-side assignors and the client's session timeout and heartbeat
/// interval are no part of the consumer protocol (the broker's
/// group.consumer.session.timeout.ms and group.consumer.heartbeat.interval.ms
/// decide them), and a remote assignor is no part of the classic one.
fn protocol_of(args: &Args, props: &[(String, String)]) -> Result<(GroupProtocol, Option<String>)> {
    let prop = |k: &str| {
        props
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    let from_x = prop("group.protocol")
        .map(|v| {
            parse::group_protocol(&v).map_err(|e| CliError::msg(format!("-X group.protocol: {e}")))
        })
        .transpose()?;
    let protocol = match (args.group_protocol, from_x) {
        (Some(f), Some(x)) if f != x => {
            return Err(CliError::msg(
                "--group-protocol and -X group.protocol disagree: give one",
            ))
        }
        (f, x) => f.or(x).unwrap_or(GroupProtocol::Classic),
    };
    let x_assignor = prop("group.remote.assignor").filter(|v| !v.trim().is_empty());
    let remote = match (&args.remote_assignor, x_assignor) {
        (Some(f), Some(x)) if *f != x => {
            return Err(CliError::msg(
                "--remote-assignor and -X group.remote.assignor disagree: give one",
            ))
        }
        (f, x) => f.clone().or(x),
    };
    match protocol {
        GroupProtocol::Classic if remote.is_some() => Err(CliError::msg(
            "--remote-assignor needs --group-protocol consumer: under the classic protocol \
             a member assigns (--assignor)",
        )),
        GroupProtocol::Consumer if args.assignor.is_some() => Err(CliError::msg(
            "--assignor is a client-side assignor, which the consumer protocol has none of: \
             the broker assigns (--remote-assignor NAME)",
        )),
        GroupProtocol::Consumer if args.session_timeout.is_some() => Err(CliError::msg(
            "--session-timeout does not go with --group-protocol consumer: the broker sets \
             it (group.consumer.session.timeout.ms, or the group's consumer.session.timeout.ms)",
        )),
        GroupProtocol::Consumer if args.heartbeat_interval.is_some() => Err(CliError::msg(
            "--heartbeat-interval does not go with --group-protocol consumer: the broker sets \
             it (group.consumer.heartbeat.interval.ms, or the group's \
             consumer.heartbeat.interval.ms)",
        )),
        _ => Ok((protocol, remote)),
    }
}

fn config(args: &Args) -> Result<Config> {
    let conn = args.conn.connection()?;
    // The same -X/-F names as the librdkafka commands, checked the same way,
    // so a property librdkafka would refuse is refused here too.
    conn.check_properties().map_err(super::kerr)?;
    let (security, unused) = conn
        .security()
        .map_err(|e| CliError::msg(format!("consume: {e}")))?;
    // Read below, by protocol_of.
    let unused: Vec<_> = unused
        .into_iter()
        .filter(|k| k != "group.protocol" && k != "group.remote.assignor")
        .collect();
    if args.conn.verbose() && !unused.is_empty() {
        say!(
            "partwise: consume does not use {} (accepted, as librdkafka would)",
            unused.join(", ")
        );
    }
    let brokers = conn
        .brokers()
        .split(',')
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .map(|b| {
            crate::cmd::parse::broker_address(b)
                .map_err(|e| CliError::msg(format!("-b/--bootstrap: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut topics = Vec::new();
    for t in &args.topics {
        if !topics.contains(t) {
            topics.push(t.clone());
        }
    }
    let props: Vec<(String, String)> = conn
        .properties()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let (protocol, remote) = protocol_of(args, &props)?;
    let mut cfg = Config::new(brokers, args.group.clone(), topics);
    if let Some(a) = args.assignor {
        note_range_spelling();
        cfg.assignor = GroupAssignor::of(a).ok_or_else(|| {
            CliError::msg(format!(
                "--assignor {}: this member leads a classic group with copartitioned (the default) or java:range only",
                a.spec()
            ))
        })?;
    }
    cfg.group_protocol = protocol;
    cfg.remote_assignor = remote;
    cfg.auto_offset_reset = args.offset_reset;
    cfg.client_id = args.client_id.clone();
    cfg.group_instance_id = args.group_instance_id.clone();
    cfg.security = security;
    cfg.request_timeout = conn.timeout();
    if let Some(t) = args.session_timeout {
        cfg.session_timeout = t;
    }
    if let Some(t) = args.heartbeat_interval {
        cfg.heartbeat_interval = t;
    }
    cfg.max_poll_interval = args.max_poll_interval;
    cfg.rebalance_timeout = args.rebalance_timeout.unwrap_or(args.max_poll_interval);
    cfg.auto_commit_interval = args.commit_interval;
    cfg.retry_timeout = args.retry_timeout;
    if cfg.heartbeat_interval >= cfg.session_timeout {
        return Err(CliError::msg(
            "--heartbeat-interval must be below --session-timeout",
        ));
    }
    Ok(cfg)
}

/// An `assigned` or `revoked` event: the member's units (partition
/// indices) and its partitions as `[topic, partition]` pairs.
#[derive(serde::Serialize)]
struct AssignmentEvent<'a> {
    event: &'a str,
    generation: i32,
    member: &'a str,
    leader: bool,
    units: Vec<i32>,
    partitions: &'a [(String, i32)],
}

impl<'a> AssignmentEvent<'a> {
    fn of(event: &'a str, a: &'a UnitAssignment) -> AssignmentEvent<'a> {
        let mut units: Vec<i32> = a.units.iter().map(|u| u.partition).collect();
        units.dedup();
        AssignmentEvent {
            event,
            generation: a.generation,
            member: &a.member_id,
            leader: a.leader,
            units,
            partitions: &a.partitions,
        }
    }
}

/// `x` as compact JSON text.
fn json_text<T: serde::Serialize + ?Sized>(x: &T) -> String {
    serde_json::to_string(x).unwrap_or_default()
}

/// Prints events as they happen. Output goes through one buffer that is
/// flushed after every event (one poll's records at a time), so a reader (a
/// test, `jq`) sees each batch as soon as it is handled without a write per
/// record. A poll's record lines are formatted into one reused byte buffer
/// and written with one call: the topic's JSON is escaped once per topic,
/// not per record, and numbers and hex go in without `fmt`.
struct Printer {
    out: BufWriter<std::io::Stdout>,
    format: Format,
    /// No JSON array element written yet.
    first: bool,
    /// `--count-only`: one `records` event per poll.
    count_only: bool,
    /// Records handled so far (`--count-only`'s total).
    total: u64,
    /// The record lines of one poll.
    lines: Vec<u8>,
    heads: RecordLines,
}

/// Writes `record` events as JSON text into a byte buffer, straight from
/// the fetched batches: the start of the line (`{"event":"record","topic":
/// "t","partition":p,"offset":`) is built once per partition of a fetch, so
/// the topic is escaped and the partition formatted once, and each record
/// adds its offset and key.
#[derive(Default)]
struct RecordLines {
    head: Vec<u8>,
}

impl RecordLines {
    /// Appends the events of `records` to `buf`: each on its own line, or
    /// (`array`) each after a `,\n  ` (`\n  ` before the array's first,
    /// `*first` saying whether it is still to come).
    fn push(
        &mut self,
        buf: &mut Vec<u8>,
        records: &Records,
        array: bool,
        first: &mut bool,
    ) -> Result<()> {
        let mut num = itoa::Buffer::new();
        for part in records.partitions() {
            self.head.clear();
            self.head
                .extend_from_slice(b"{\"event\":\"record\",\"topic\":");
            serde_json::to_writer(&mut self.head, part.topic())?;
            self.head.extend_from_slice(b",\"partition\":");
            self.head
                .extend_from_slice(num.format(part.partition()).as_bytes());
            self.head.extend_from_slice(b",\"offset\":");
            for (offset, _, key, _) in part.slots() {
                if array {
                    buf.extend_from_slice(if *first { b"\n  " } else { b",\n  " });
                }
                *first = false;
                buf.extend_from_slice(&self.head);
                buf.extend_from_slice(num.format(offset).as_bytes());
                match key {
                    Some(k) => {
                        buf.extend_from_slice(b",\"key_hex\":\"");
                        push_hex(buf, k);
                        buf.extend_from_slice(b"\"}");
                    }
                    None => buf.extend_from_slice(b",\"key_hex\":null}"),
                }
                if !array {
                    buf.push(b'\n');
                }
            }
        }
        Ok(())
    }
}

impl Printer {
    fn new(format: Format, count_only: bool) -> Result<Printer> {
        widen_stdout_pipe();
        let mut p = Printer {
            out: BufWriter::with_capacity(256 * 1024, std::io::stdout()),
            format,
            first: true,
            count_only,
            total: 0,
            lines: Vec::new(),
            heads: RecordLines::default(),
        };
        if format == Format::Json {
            p.out.write_all(b"[")?;
        }
        Ok(p)
    }

    /// The separator before a JSON element (array format).
    fn open(&mut self) -> Result<()> {
        if self.format == Format::Json {
            self.out
                .write_all(if self.first { b"\n  " } else { b",\n  " })?;
        }
        self.first = false;
        Ok(())
    }

    fn close(&mut self) -> Result<()> {
        if self.format != Format::Json {
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }

    fn assignment(&mut self, event: &str, a: &UnitAssignment) -> Result<()> {
        let v = AssignmentEvent::of(event, a);
        match self.format {
            Format::Table => writeln!(
                self.out,
                "{event:<9} generation {} member {} units {} partitions {}",
                v.generation,
                // The member id is the coordinator's, the topics its
                // metadata's: JSON escapes control characters but leaves
                // bidi and zero-width ones as they are.
                visible(&json_text(v.member)),
                visible(&json_text(&v.units)),
                visible(&json_text(v.partitions))
            )?,
            _ => {
                self.open()?;
                serde_json::to_writer(&mut self.out, &v)?;
                self.close()?;
            }
        }
        self.out.flush()?;
        Ok(())
    }

    fn records(&mut self, records: &Records) -> Result<()> {
        if self.count_only {
            return self.count(records.len());
        }
        if self.format == Format::Table {
            return self.record_rows(records);
        }
        let mut buf = std::mem::take(&mut self.lines);
        buf.clear();
        let array = self.format == Format::Json;
        self.heads.push(&mut buf, records, array, &mut self.first)?;
        self.out.write_all(&buf)?;
        self.lines = buf;
        self.out.flush()?;
        Ok(())
    }

    /// `--format table`'s record lines.
    fn record_rows(&mut self, records: &Records) -> Result<()> {
        let mut key = Vec::new();
        for r in records {
            key.clear();
            match r.key {
                Some(k) => push_hex(&mut key, k),
                None => key.push(b'-'),
            }
            write!(
                self.out,
                "record    {}-{} @{} key ",
                visible(r.topic),
                r.partition,
                r.offset
            )?;
            self.out.write_all(&key)?;
            self.out.write_all(b"\n")?;
        }
        self.out.flush()?;
        Ok(())
    }

    /// `--count-only`: the records of one poll, and of all polls so far.
    fn count(&mut self, n: usize) -> Result<()> {
        self.total += n as u64;
        match self.format {
            Format::Table => writeln!(self.out, "records   {n} (total {})", self.total)?,
            _ => {
                self.open()?;
                write!(
                    self.out,
                    "{{\"event\":\"records\",\"records\":{n},\"total\":{}}}",
                    self.total
                )?;
                self.close()?;
            }
        }
        self.out.flush()?;
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        if self.format == Format::Json {
            self.out
                .write_all(if self.first { b"]\n" } else { b"\n]\n" })?;
        }
        self.out.flush()?;
        Ok(())
    }
}

/// When stdout is a pipe, asks Linux for a 1 MiB pipe buffer (the
/// unprivileged maximum by default) instead of 64 KiB: a poll's record lines
/// are hundreds of KiB, and through a 64 KiB pipe each write blocks a dozen
/// times for the reader to catch up, which made task switches the largest
/// item of the profile. Nothing changes where it cannot be had.
fn widen_stdout_pipe() {
    #[cfg(target_os = "linux")]
    {
        const WANT: libc::c_int = 1 << 20;
        // SAFETY: fstat and fcntl on fd 1 with a valid out-pointer; neither
        // touches memory of ours beyond `st`.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(1, &mut st) == 0
                && st.st_mode & libc::S_IFMT == libc::S_IFIFO
                && libc::fcntl(1, libc::F_GETPIPE_SZ) < WANT
            {
                // Refused (a lower pipe-max-size, a full per-user quota): the
                // pipe keeps its size.
                libc::fcntl(1, libc::F_SETPIPE_SZ, WANT);
            }
        }
    }
}

fn push_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    /// Each byte's two lowercase hex digits.
    static HEX: [[u8; 2]; 256] = {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut t = [[0u8; 2]; 256];
        let mut i = 0;
        while i < 256 {
            t[i] = [DIGITS[i >> 4], DIGITS[i & 15]];
            i += 1;
        }
        t
    };
    out.reserve(bytes.len() * 2);
    for &b in bytes {
        out.extend_from_slice(&HEX[usize::from(b)]);
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    let cfg = config(&args)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::context("cannot start the runtime", e))?;
    let mut printer = Printer::new(args.format.format, args.count_only)?;
    rt.block_on(consume(cfg, &mut printer))?;
    printer.finish()?;
    Ok(ExitCode::Ok)
}

/// What a person at a terminal sees while the member is not holding units:
/// a new group's first join is held by the coordinator (Apache Kafka waits
/// `group.initial.rebalance.delay.ms`, 3 s by default, for more members; other
/// brokers wait longer), and a silent terminal looks like a hang. Scripts
/// reading stdout see none of it.
struct JoinNotice {
    group: String,
    on: bool,
    /// The consumer protocol joins at once: no initial delay to explain.
    consumer: bool,
    since: Option<std::time::Instant>,
    joined: bool,
}

impl JoinNotice {
    /// Every this often while waiting, the notice is repeated with the time waited.
    const EVERY: Duration = Duration::from_secs(5);

    fn new(group: &str, on: bool, consumer: bool) -> JoinNotice {
        JoinNotice {
            group: group.to_string(),
            on,
            consumer,
            since: None,
            joined: false,
        }
    }

    /// Says that the member is (re)joining; true when it starts waiting now.
    fn waiting(&mut self) -> bool {
        if !self.on || self.since.is_some() {
            return false;
        }
        self.since = Some(std::time::Instant::now());
        if self.joined {
            say!(
                "partwise: the group is rebalancing: rejoining '{}' ...",
                self.group
            );
        } else if self.consumer {
            say!(
                "partwise: joining group '{}' (consumer protocol) ...",
                self.group
            );
        } else {
            say!(
                "partwise: joining group '{}' (a new group's first join waits for more members: \
                 group.initial.rebalance.delay.ms, 3 s on Apache Kafka) ...",
                self.group
            );
        }
        true
    }

    fn still_waiting(&self) {
        if let (true, Some(t)) = (self.on, self.since) {
            say!(
                "partwise: still waiting to join group '{}' ({} s); other members may be \
                 rebalancing (their rebalance timeout bounds it)",
                self.group,
                t.elapsed().as_secs()
            );
        }
    }

    fn assigned(&mut self, a: &UnitAssignment) {
        self.joined = true;
        if let (true, Some(t)) = (self.on, self.since.take()) {
            let mut units: Vec<i32> = a.units.iter().map(|u| u.partition).collect();
            units.dedup();
            say!(
                "partwise: joined group '{}' after {:.1} s: generation {}, units {:?}",
                self.group,
                t.elapsed().as_secs_f64(),
                a.generation,
                units
            );
        }
    }
}

/// Under the consumer protocol the broker's assignor decides, and one that
/// splits units (the default `uniform` does) leaves partitions held but never
/// processed: said on stderr, once per set of such partitions, with the fix.
/// For a moment it is normal (a unit's other half is still being released).
struct HalfUnits {
    assignor: Option<String>,
    said: Vec<(String, i32)>,
}

impl HalfUnits {
    fn new(assignor: Option<String>) -> HalfUnits {
        HalfUnits {
            assignor,
            said: Vec::new(),
        }
    }

    fn check(&mut self, a: &UnitAssignment) {
        let half: Vec<(String, i32)> = a
            .partitions
            .iter()
            .filter(|(t, p)| {
                !a.units
                    .iter()
                    .any(|u| u.partition == *p && u.topics.iter().any(|ut| ut == t))
            })
            .cloned()
            .collect();
        if half.is_empty() || half == self.said {
            return;
        }
        let list: Vec<String> = half.iter().map(|(t, p)| format!("{t}-{p}")).collect();
        let by = match &self.assignor {
            Some(n) => format!("the server assignor '{n}'"),
            None => "the broker's default assignor (uniform unless group.consumer.assignors says otherwise)".into(),
        };
        say!(
            "partwise: holding {} partition(s) of units that are not whole ({}), not processed until \
             the rest of each unit arrives. A moment of this is normal while another member releases \
             them; if it lasts, {by} splits units: use --remote-assignor copartitioned (partwise's \
             broker-side assignor) or range (only when every member subscribes to the same topics of \
             equal partition counts)",
            half.len(),
            list.join(", ")
        );
        self.said = half;
    }
}

async fn consume(cfg: Config, printer: &mut Printer) -> Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let group = cfg.group_id.clone();
    let mut term = signal(SignalKind::terminate()).map_err(CliError::lib)?;
    let mut int = signal(SignalKind::interrupt()).map_err(CliError::lib)?;
    let fail = |e: partwise_group::Error| match e {
        // Already names the group.
        partwise_group::Error::GroupProtocol { .. } | partwise_group::Error::Unstorable(_) => {
            CliError::context("consume", e)
        }
        e => CliError::context(format!("consume (group '{group}')"), e),
    };
    let consumer_protocol = cfg.group_protocol == GroupProtocol::Consumer;
    let mut notice = JoinNotice::new(&group, super::stderr_is_terminal(), consumer_protocol);
    let mut halves = HalfUnits::new(cfg.remote_assignor.clone());
    notice.waiting();
    let mut consumer = tokio::select! {
        c = Consumer::new(cfg.clone()) => c.map_err(fail)?,
        _ = term.recv() => return Ok(()),
        _ = int.recv() => return Ok(()),
    };
    let mut ticker = tokio::time::interval_at(
        tokio::time::Instant::now() + JoinNotice::EVERY,
        JoinNotice::EVERY,
    );
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    // What the last `assigned` printed said this member holds, until a
    // `revoked`: on the way out that is what is handed back. The consumer's
    // own assignment may already hold partitions it has not announced (a
    // step that took them and then ended in an error).
    let mut told: Option<partwise_group::UnitAssignment> = None;
    'events: loop {
        let waiting = consumer.assignment().is_none();
        if waiting && notice.waiting() {
            ticker.reset();
        }
        // A signal drops the poll in progress; whatever was delivered before
        // it has been printed, so close() commits exactly what was handled.
        // The notice's ticks must not: poll is not cancel-safe.
        let event = {
            let poll = consumer.poll();
            tokio::pin!(poll);
            loop {
                tokio::select! {
                    e = &mut poll => break e,
                    _ = ticker.tick(), if waiting => notice.still_waiting(),
                    _ = term.recv() => break 'events,
                    _ = int.recv() => break 'events,
                }
            }
        };
        let event = match event {
            Ok(e) => e,
            // A subscribed topic was deleted: the member stops (the units it
            // was in can never be whole again), but what was handled of the
            // other topics is committed, and it leaves so that the others
            // need not wait out its session.
            Err(e @ partwise_group::Error::TopicDeleted { .. }) => {
                if let partwise_group::Error::TopicDeleted { topic, .. } = &e {
                    say!(
                        "partwise: topic '{topic}' was deleted: committing what was handled \
                         of the other topics and leaving group '{group}'"
                    );
                }
                if let Some(a) = told.take() {
                    printer.assignment("revoked", &a)?;
                }
                let _ = consumer.close().await;
                return Err(fail(e));
            }
            Err(e) => return Err(fail(e)),
        };
        match event {
            Event::Assigned(a) => {
                notice.assigned(&a);
                if consumer_protocol {
                    halves.check(&a);
                }
                for m in &a.unreadable {
                    say!(
                        "partwise: as leader of generation {} of group '{group}', gave member {} \
                         (client id '{}'{}) nothing: {}; the others are assigned as if it were \
                         absent. Fix or stop that client",
                        a.generation,
                        m.member_id,
                        m.client_id,
                        m.instance_id
                            .as_ref()
                            .map(|i| format!(", group.instance.id '{i}'"))
                            .unwrap_or_default(),
                        m.reason
                    );
                }
                printer.assignment("assigned", &a)?;
                told = Some(a);
            }
            Event::Revoked(a) => {
                printer.assignment("revoked", &a)?;
                told = None;
            }
            Event::Records { records, .. } => printer.records(&records)?,
            Event::Unstored(u) => {
                let next = if u.culprit().is_some() {
                    "; rejoining: the group is served again once that member is gone (the \
                     coordinator drops a member that does not rejoin), and this member stops if \
                     the same member is in the way again"
                } else {
                    "; rejoining"
                };
                say!("partwise: {u}{next}");
            }
        }
    }
    if let Some(a) = told {
        printer.assignment("revoked", &a)?;
    }
    consumer.close().await.map_err(fail)
}

/// A note on stderr when `--assignor` is given as `range`, the protocol
/// name it took before it took an assignor spec as every command does.
fn note_range_spelling() {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .filter_map(|w| w.into_string().ok())
        .take_while(|w| w != "--")
        .collect();
    let given = args.iter().enumerate().any(|(i, w)| {
        w == "--assignor=range"
            || ((w == "--assignor" || w == "-a") && args.get(i + 1).is_some_and(|v| v == "range"))
    });
    if given {
        say!("partwise: note: kafka consume --assignor range is now --assignor java:range; range still works in this release and goes in the next");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use partwise_group::ConsumedRecord;
    use serde_json::json;

    fn batch(rs: &[ConsumedRecord]) -> Records {
        rs.iter().cloned().collect()
    }

    fn record(topic: &str, partition: i32, offset: i64, key: Option<&[u8]>) -> ConsumedRecord {
        ConsumedRecord {
            topic: topic.to_string(),
            partition,
            offset,
            timestamp: 0,
            key: key.map(bytes::Bytes::copy_from_slice),
            value: None,
        }
    }

    /// A record event as a JSON tree renders it.
    fn tree(r: &ConsumedRecord) -> String {
        let key_hex = r
            .key
            .as_ref()
            .map(|k| k.iter().map(|b| format!("{b:02x}")).collect::<String>());
        json!({
            "event": "record",
            "topic": r.topic,
            "partition": r.partition,
            "offset": r.offset,
            "key_hex": key_hex,
        })
        .to_string()
    }

    fn records() -> Vec<ConsumedRecord> {
        let all: Vec<u8> = (0..=255).collect();
        vec![
            record("orders", 0, 0, Some(b"user-1")),
            record("orders", 0, 1, Some(b"user-2")),
            record("orders", 11, 9_223_372_036_854_775_807, None),
            record("pay\"ments\\", 2147483647, 42, Some(b"")),
            record("t\u{1}\u{7f}é\u{200b}", -1, -1, Some(&all)),
            record("orders", 3, 7, Some(b"\x00\xff")),
            record("pay\"ments\\", 0, 1, Some(b"k")),
        ]
    }

    #[test]
    fn record_lines_are_those_of_a_json_tree() {
        let rs = records();
        let mut lines = RecordLines::default();
        let (mut buf, mut first) = (Vec::new(), true);
        // Two polls, the first with two records of one partition.
        lines
            .push(&mut buf, &batch(&rs[..3]), false, &mut first)
            .unwrap();
        lines
            .push(&mut buf, &batch(&rs[3..]), false, &mut first)
            .unwrap();
        let want: String = rs.iter().map(|r| tree(r) + "\n").collect();
        assert_eq!(String::from_utf8(buf).unwrap(), want);
        assert!(!first);
    }

    #[test]
    fn record_lines_in_an_array_are_separated_as_array_elements() {
        let rs = records();
        let mut lines = RecordLines::default();
        let (mut buf, mut first) = (Vec::new(), true);
        lines
            .push(&mut buf, &batch(&rs[..2]), true, &mut first)
            .unwrap();
        lines
            .push(&mut buf, &batch(&rs[2..]), true, &mut first)
            .unwrap();
        let want = rs.iter().map(tree).collect::<Vec<_>>().join(",\n  ");
        assert_eq!(String::from_utf8(buf).unwrap(), format!("\n  {want}"));
    }
}
