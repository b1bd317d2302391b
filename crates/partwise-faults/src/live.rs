//! Shared support of every crate's live tests: where the services are (the
//! variables `scripts/services up` exports), names no other run uses, free
//! ports, child processes that die with the test, and topics made and
//! written with librdkafka, the independent client whose partitioners are the
//! oracle the tests compare partwise with.
//!
//! A variable that is unset panics naming it and how to set it: a live test
//! whose service is missing fails instead of passing unseen.

use futures_executor::block_on;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How a missing variable is set, said in every panic about one.
const HOW: &str = "`eval \"$(bash scripts/services up)\"` starts the services and exports it \
                   (bash scripts/test does it)";

/// The value of the service variable `name`; unset or blank panics.
pub fn env(name: &str) -> String {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v,
        _ => panic!("{name} is unset: this live test needs it. {HOW}"),
    }
}

/// The Apache Kafka of the audit, topics, group and produce tests.
pub fn kafka_bootstrap() -> String {
    env("PARTWISE_KAFKA_BOOTSTRAP")
}

/// The Apache Kafka of the consumer-group tests, apart from
/// [`kafka_bootstrap`] so that their groups and rebalances never meet.
pub fn test_broker() -> String {
    env("PARTWISE_TEST_BROKER")
}

/// A node of the shared Redis Cluster (`host:port`).
pub fn redis_node() -> String {
    env("PARTWISE_REDIS")
}

/// The repository's root, for its scripts, examples and vectors.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A name (topic, group) no other test or run uses.
pub fn unique(prefix: &str) -> String {
    let n = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{}-{n}", std::process::id())
}

/// A loopback port nothing listens on (bound and released).
pub fn free_port() -> u16 {
    // Below the kernel's ephemeral range: a port it hands out itself (bind
    // to port 0) it may also give an outgoing connection as its source port
    // before the server the test starts binds it; below the range only a
    // listener that asks for it by number can take it.
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or(32768);
    let lo = low.saturating_sub(12_000).max(1024);
    let span = low.saturating_sub(lo).max(1);
    // A start of this process's own, so that concurrent test binaries
    // probe different ports.
    let seed = std::process::id().wrapping_mul(2_654_435_761)
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
    for _ in 0..500 {
        let k = NEXT.fetch_add(7919, Ordering::Relaxed);
        let port = lo + seed.wrapping_add(k) % span;
        let Ok(port) = u16::try_from(port) else {
            continue;
        };
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A tokio runtime on the test's thread, for the async clients.
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A child process killed and reaped on drop, so a failing test leaves none.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A standalone (non-cluster) redis-server on a free port, answering PING
/// before this returns; killed on drop.
pub struct RedisStandalone {
    /// Its port on 127.0.0.1.
    pub port: u16,
    _child: Reaped,
}

impl RedisStandalone {
    /// Starts it (Debian's `redis-server`), with no persistence: it only
    /// ever holds throwaway test data.
    pub fn start() -> RedisStandalone {
        let port = free_port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .args(["--dir", &std::env::temp_dir().display().to_string()])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server (apt-get install -y redis-server)");
        let s = RedisStandalone {
            port,
            _child: Reaped(child),
        };
        let start = Instant::now();
        while !answers_ping(port) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "redis-server did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        s
    }
}

/// Whether a Redis server on `port` answers PING (RESP inline command).
fn answers_ping(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut c) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = c.set_read_timeout(Some(Duration::from_secs(1)));
    let mut buf = [0u8; 7];
    c.write_all(b"PING\r\n").is_ok() && c.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}

/// Creates `topics` (name, partitions; replication 1) with librdkafka's admin
/// client and waits until the metadata shows every partition with a leader.
pub fn create_topics(bootstrap: &str, topics: &[(&str, i32)]) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let new: Vec<NewTopic<'_>> = topics
        .iter()
        .map(|(t, n)| NewTopic::new(t, *n, TopicReplication::Fixed(1)))
        .collect();
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    for r in block_on(admin.create_topics(&new, &opts)).unwrap() {
        r.unwrap();
    }
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    for (t, n) in topics {
        loop {
            let ok = c
                .fetch_metadata(Some(t), Duration::from_secs(5))
                .is_ok_and(|md| {
                    md.topics().iter().any(|x| {
                        x.name() == *t
                            && x.error().is_none()
                            && x.partitions().len() == *n as usize
                            && x.partitions().iter().all(|p| p.leader() >= 0)
                    })
                });
            if ok {
                break;
            }
            assert!(Instant::now() < deadline, "topic {t} did not appear");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Produces `keys` (None: a null key) with librdkafka's built-in
/// `partitioner` property; returns the partition of each from its delivery report.
pub fn produce_with(
    bootstrap: &str,
    topic: &str,
    partitioner: &str,
    keys: &[Option<String>],
) -> Vec<i32> {
    use rdkafka::message::Message;
    use rdkafka::producer::{DeliveryResult, ProducerContext};
    use std::sync::Mutex;
    struct Ctx(Mutex<Vec<(usize, i32)>>);
    impl rdkafka::client::ClientContext for Ctx {}
    impl ProducerContext for Ctx {
        type DeliveryOpaque = usize;
        fn delivery(&self, r: &DeliveryResult<'_>, id: usize) {
            let m = r.as_ref().expect("delivery failed");
            self.0.lock().unwrap().push((id, m.partition()));
        }
    }
    let p: BaseProducer<Ctx> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("partitioner", partitioner)
        // One record per batch, so end offsets count every record.
        .set("linger.ms", "0")
        .set("batch.num.messages", "1")
        .create_with_context(Ctx(Mutex::new(Vec::new())))
        .unwrap();
    for (i, k) in keys.iter().enumerate() {
        let mut r: BaseRecord<'_, str, str, usize> =
            BaseRecord::with_opaque_to(topic, i).payload("v");
        if let Some(k) = k {
            r = r.key(k.as_str());
        }
        p.send(r).map_err(|(e, _)| e).unwrap();
        p.poll(Duration::ZERO);
    }
    p.flush(Duration::from_secs(60)).unwrap();
    let mut got = std::mem::take(&mut *p.context().0.lock().unwrap());
    got.sort();
    assert_eq!(got.len(), keys.len());
    got.into_iter().map(|(_, p)| p).collect()
}

/// `n` keys `{prefix}0`, `{prefix}1`, ...
pub fn keys(n: usize, prefix: &str) -> Vec<Option<String>> {
    (0..n).map(|i| Some(format!("{prefix}{i}"))).collect()
}

/// Lowercase hex of `b`, as the CLI's `key_hex` fields print keys.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
