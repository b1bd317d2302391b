//! Test support for fault tests on Apache Kafka: a fault-injecting proxy
//! ([`FaultProxy`]) and private clusters to kill brokers of ([`KafkaCluster`]);
//! and, in [`live`], what every crate's live tests share (service addresses,
//! unique names, librdkafka topics and producers); [`hostile`], a fake
//! broker for the offline hostile-peer tests.
//!
//! A real cluster moves its group coordinator or a partition's leader only
//! when a broker dies, and cannot answer one chosen request with one chosen
//! error. [`FaultProxy`] sits between clients and the cluster and makes it
//! look as if it did:
//!
//! - every Metadata and FindCoordinator response is rewritten so that each
//!   broker's address points at a listener of the proxy standing for that
//!   broker (otherwise clients would bypass it after bootstrap); a
//!   multi-broker cluster keeps its shape, one proxy address per broker;
//! - ApiVersions answers are capped at the versions the proxy can decode, so
//!   a client never picks a Metadata or coordinator version the proxy would
//!   have to pass through unread;
//! - [`Rule::Error`] answers the next `times` requests of one API itself
//!   with an error code (`NOT_COORDINATOR`, `COORDINATOR_NOT_AVAILABLE`, ...)
//!   without forwarding them, as a broker that is not the coordinator would;
//! - [`Rule::LeaderNotAvailable`] rewrites Metadata so one partition has
//!   leader `-1` and error `LEADER_NOT_AVAILABLE`;
//! - [`FaultProxy::drop_connections`] closes every open connection, and
//!   [`FaultProxy::set_down`] keeps closing them (new ones included) until
//!   it is lifted: the cluster "goes away" while keeping its state.
//!
//! The proxy runs on a thread of its own, so sync and async tests use it alike:
//!
//! ```no_run
//! use partwise_faults::{ApiKey, FaultProxy, Rule, NOT_COORDINATOR};
//!
//! let proxy = FaultProxy::start("127.0.0.1:9092").unwrap();
//! // Point clients at proxy.addr() instead of the broker.
//! proxy
//!     .set_rule(Rule::Error { api: ApiKey::Heartbeat, code: NOT_COORDINATOR, times: 3 })
//!     .unwrap();
//! proxy.set_rule(Rule::LeaderNotAvailable { topic: "orders".into(), partition: 2 }).unwrap();
//! assert_eq!(proxy.injected(ApiKey::Heartbeat), 0);
//! ```

mod cluster;
pub mod hostile;
pub use cluster::KafkaCluster;
pub mod live;

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::offset_fetch_response::OffsetFetchResponseGroup;
pub use kafka_protocol::messages::ApiKey;
use kafka_protocol::messages::{
    ApiVersionsResponse, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse,
    FindCoordinatorRequest, FindCoordinatorResponse, HeartbeatRequest, HeartbeatResponse,
    JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, MetadataRequest,
    MetadataResponse, OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest,
    OffsetFetchResponse, ProduceRequest, ProduceResponse, SyncGroupRequest, SyncGroupResponse,
};
use kafka_protocol::protocol::{Decodable, Encodable, Message, StrBytes};
use kafka_protocol::ResponseError;
use partwise_wire::frame;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

// The codes tests inject, named as Kafka names them; the numbers are
// kafka-protocol's.
/// `LEADER_NOT_AVAILABLE` (5).
pub const LEADER_NOT_AVAILABLE: i16 = ResponseError::LeaderNotAvailable.code();
/// `COORDINATOR_LOAD_IN_PROGRESS` (14).
pub const COORDINATOR_LOAD_IN_PROGRESS: i16 = ResponseError::CoordinatorLoadInProgress.code();
/// `COORDINATOR_NOT_AVAILABLE` (15).
pub const COORDINATOR_NOT_AVAILABLE: i16 = ResponseError::CoordinatorNotAvailable.code();
/// `NOT_COORDINATOR` (16).
pub const NOT_COORDINATOR: i16 = ResponseError::NotCoordinator.code();
/// `INCONSISTENT_GROUP_PROTOCOL` (23).
pub const INCONSISTENT_GROUP_PROTOCOL: i16 = ResponseError::InconsistentGroupProtocol.code();

/// A fault to apply to the traffic through the proxy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Answer the next `times` requests of `api` with `code` instead of
    /// forwarding them. Supported APIs: [`Rule::ERROR_APIS`].
    Error {
        /// The request to fail.
        api: ApiKey,
        /// The Kafka error code to answer with.
        code: i16,
        /// How many requests to fail; later ones pass again.
        times: u32,
    },
    /// Report `partition` of `topic` without a leader (leader id `-1`,
    /// `LEADER_NOT_AVAILABLE`) in every Metadata response until cleared.
    LeaderNotAvailable {
        /// Topic name.
        topic: String,
        /// Partition index.
        partition: i32,
    },
    /// Leave `api` out of every ApiVersions response until cleared: a
    /// broker that does not offer it (one without KIP-848's
    /// ConsumerGroupHeartbeat, say).
    HideApi {
        /// The API to hide.
        api: ApiKey,
    },
}

impl Rule {
    /// The APIs [`Rule::Error`] can answer: the group-coordinator requests
    /// whose error responses need nothing but the request to build.
    pub const ERROR_APIS: [ApiKey; 8] = [
        ApiKey::FindCoordinator,
        ApiKey::JoinGroup,
        ApiKey::SyncGroup,
        ApiKey::Heartbeat,
        ApiKey::LeaveGroup,
        ApiKey::OffsetCommit,
        ApiKey::OffsetFetch,
        ApiKey::ConsumerGroupHeartbeat,
    ];
}

/// A [`Rule::Error`] for an API the proxy cannot answer by itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedRule(pub ApiKey);

impl fmt::Display for UnsupportedRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the proxy cannot inject errors into {:?} responses (supported: {:?})",
            self.0,
            Rule::ERROR_APIS
        )
    }
}

impl std::error::Error for UnsupportedRule {}

#[derive(Default)]
struct State {
    /// (api, code, remaining) in the order set; the first match fires.
    errors: Vec<(ApiKey, i16, u32)>,
    leaderless: Vec<(String, i32)>,
    hidden: Vec<i16>,
    down: bool,
    seen: HashMap<i16, u64>,
    injected: HashMap<i16, u64>,
    connections: u64,
    /// The proxy listener standing for each upstream broker, by its
    /// advertised `host:port`.
    routes: HashMap<String, SocketAddr>,
    /// Advertised `host:port` by broker id, as Metadata or FindCoordinator
    /// last named it.
    nodes: BTreeMap<i32, String>,
}

/// The proxy; dropping it stops it and closes its connections.
pub struct FaultProxy {
    addr: String,
    state: Arc<Mutex<State>>,
    /// Bumped to close every open connection.
    epoch: watch::Sender<u64>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FaultProxy {
    /// Listens on a free loopback port and forwards every connection to
    /// `upstream`: one `host:port`, or a comma-separated bootstrap list
    /// tried in order per client connection. Each further broker the
    /// cluster names in Metadata or FindCoordinator gets a listener of its
    /// own on first sight; the first bootstrap address keeps [`addr`].
    ///
    /// [`addr`]: FaultProxy::addr
    pub fn start(upstream: &str) -> io::Result<FaultProxy> {
        let bootstrap: Vec<String> = upstream
            .split(',')
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty())
            .collect();
        let Some(first) = bootstrap.first().cloned() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("no upstream broker in '{upstream}'"),
            ));
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        let addr = local.to_string();
        let state = Arc::new(Mutex::new(State::default()));
        state.lock().expect("poisoned").routes.insert(first, local);
        let (epoch, epoch_rx) = watch::channel(0u64);
        let (stop, stop_rx) = tokio::sync::oneshot::channel();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let ctx = Arc::new(Ctx {
            state: state.clone(),
            epoch: epoch_rx,
        });
        let thread = std::thread::Builder::new()
            .name(format!("fault-proxy-{}", local.port()))
            .spawn(move || {
                rt.block_on(async move {
                    let Ok(listener) = TcpListener::from_std(listener) else {
                        return;
                    };
                    tokio::select! {
                        _ = accept_loop(listener, ctx, Arc::new(bootstrap)) => {}
                        _ = stop_rx => {}
                    }
                })
                // Dropping the runtime here ends the other listeners' tasks.
            })?;
        Ok(FaultProxy {
            addr,
            state,
            epoch,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// `host:port` to give clients as their bootstrap broker.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The proxy address standing for broker `node`, once a Metadata or
    /// FindCoordinator answer through the proxy has named that broker.
    pub fn addr_of(&self, node: i32) -> Option<String> {
        let s = self.state.lock().expect("poisoned");
        let upstream = s.nodes.get(&node)?;
        s.routes.get(upstream).map(|a| a.to_string())
    }

    /// The broker a proxy address stands for: its id, if the cluster has
    /// named it, and its advertised `host:port`.
    pub fn upstream_of(&self, proxy_addr: &str) -> Option<(Option<i32>, String)> {
        let s = self.state.lock().expect("poisoned");
        let (upstream, _) = s.routes.iter().find(|(_, a)| a.to_string() == proxy_addr)?;
        let node = s
            .nodes
            .iter()
            .find(|(_, u)| *u == upstream)
            .map(|(n, _)| *n);
        Some((node, upstream.clone()))
    }

    /// Adds `rule`. Error rules for the same API queue up in order.
    pub fn set_rule(&self, rule: Rule) -> Result<(), UnsupportedRule> {
        let mut s = self.state.lock().expect("poisoned");
        match rule {
            Rule::Error { api, code, times } => {
                if !Rule::ERROR_APIS.contains(&api) {
                    return Err(UnsupportedRule(api));
                }
                s.errors.push((api, code, times));
            }
            Rule::LeaderNotAvailable { topic, partition } => s.leaderless.push((topic, partition)),
            Rule::HideApi { api } => s.hidden.push(api as i16),
        }
        Ok(())
    }

    /// Removes every rule; traffic passes unchanged (addresses are still
    /// rewritten).
    pub fn clear_rules(&self) {
        let mut s = self.state.lock().expect("poisoned");
        s.errors.clear();
        s.leaderless.clear();
        s.hidden.clear();
    }

    /// Closes every open connection; clients reconnect through the proxy.
    pub fn drop_connections(&self) {
        self.epoch.send_modify(|e| *e += 1);
    }

    /// While down, open connections are closed and new ones are closed as
    /// soon as they are accepted, on every listener: from a client's side
    /// the cluster is gone.
    pub fn set_down(&self, down: bool) {
        self.state.lock().expect("poisoned").down = down;
        if down {
            self.drop_connections();
        }
    }

    /// Requests of `api` received so far (forwarded or answered by the proxy).
    pub fn seen(&self, api: ApiKey) -> u64 {
        let s = self.state.lock().expect("poisoned");
        s.seen.get(&(api as i16)).copied().unwrap_or(0)
    }

    /// Requests of `api` answered with an injected error so far.
    pub fn injected(&self, api: ApiKey) -> u64 {
        let s = self.state.lock().expect("poisoned");
        s.injected.get(&(api as i16)).copied().unwrap_or(0)
    }

    /// Client connections accepted so far (including those refused while down).
    pub fn connections(&self) -> u64 {
        self.state.lock().expect("poisoned").connections
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Ctx {
    state: Arc<Mutex<State>>,
    epoch: watch::Receiver<u64>,
}

/// Accepts clients on one listener and forwards each to the first of
/// `upstream` that takes the connection.
async fn accept_loop(listener: TcpListener, ctx: Arc<Ctx>, upstream: Arc<Vec<String>>) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            // Out of descriptors, say: do not spin on it.
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            continue;
        };
        let down = {
            let mut s = ctx.state.lock().expect("poisoned");
            s.connections += 1;
            s.down
        };
        if down {
            drop(client);
            continue;
        }
        let (ctx, upstream, mut epoch) = (ctx.clone(), upstream.clone(), ctx.epoch.clone());
        epoch.mark_unchanged();
        tokio::spawn(async move {
            // The drop first, whenever the task wakes: a request that arrives
            // after `drop_connections` returned (a client's next request
            // after `set_down(true)`) must find its connection closed, not
            // be forwarded because its bytes and the drop were ready at once
            // and `select!` picked at random.
            tokio::select! {
                biased;
                _ = epoch.changed() => {}
                _ = proxy_connection(client, &ctx, &upstream) => {}
            }
        });
    }
}

/// The proxy address (host, port) standing for the broker `node` advertised
/// at `upstream`; its listener is opened on first sight.
fn route(ctx: &Arc<Ctx>, upstream: String, node: i32) -> Option<(StrBytes, i32)> {
    let mut s = ctx.state.lock().expect("poisoned");
    s.nodes.insert(node, upstream.clone());
    let local = match s.routes.get(&upstream) {
        Some(a) => *a,
        None => {
            let l = std::net::TcpListener::bind("127.0.0.1:0").ok()?;
            l.set_nonblocking(true).ok()?;
            let local = l.local_addr().ok()?;
            let l = TcpListener::from_std(l).ok()?;
            s.routes.insert(upstream.clone(), local);
            tokio::spawn(accept_loop(l, ctx.clone(), Arc::new(vec![upstream])));
            local
        }
    };
    Some((
        StrBytes::from_string(local.ip().to_string()),
        local.port() as i32,
    ))
}

/// What the client is owed, in request order: a response to read from the
/// broker (and maybe rewrite), or one the proxy made up.
enum Owed {
    Upstream { api: i16, version: i16 },
    Made(Bytes),
}

async fn proxy_connection(client: TcpStream, ctx: &Arc<Ctx>, upstream: &[String]) {
    let mut connected = None;
    for a in upstream {
        if let Ok(s) = TcpStream::connect(a).await {
            connected = Some(s);
            break;
        }
    }
    let Some(upstream) = connected else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let (mut cr, mut cw) = client.into_split();
    let (mut ur, mut uw) = upstream.into_split();
    let (tx, mut rx) = mpsc::unbounded_channel::<Owed>();
    let requests = async {
        while let Ok(frame) = read_frame(&mut cr).await {
            let Some((api, version, correlation)) = frame::peek_request(&frame) else {
                return;
            };
            *ctx.state
                .lock()
                .expect("poisoned")
                .seen
                .entry(api)
                .or_default() += 1;
            if let Some(code) = take_error(ctx, api) {
                // An undecodable request is passed on rather than break the client.
                if let Some(resp) = made_error(api, version, correlation, code, &frame) {
                    *ctx.state
                        .lock()
                        .expect("poisoned")
                        .injected
                        .entry(api)
                        .or_default() += 1;
                    if tx.send(Owed::Made(resp)).is_err() {
                        return;
                    }
                    continue;
                }
            }
            if expects_response(api, version, &frame)
                && tx.send(Owed::Upstream { api, version }).is_err()
            {
                return;
            }
            if uw.write_all(&frame).await.is_err() {
                return;
            }
        }
    };
    let responses = async {
        while let Some(owed) = rx.recv().await {
            let out = match owed {
                Owed::Made(b) => b,
                Owed::Upstream { api, version } => {
                    let Ok(frame) = read_frame(&mut ur).await else {
                        return;
                    };
                    rewrite(ctx, api, version, frame)
                }
            };
            if cw.write_all(&out).await.is_err() {
                return;
            }
        }
    };
    tokio::select! {
        _ = requests => {}
        _ = responses => {}
    }
}

/// One length-prefixed frame, prefix included, within
/// [`partwise_wire::frame::MAX_FRAME`].
async fn read_frame<R: AsyncReadExt + Unpin>(r: &mut R) -> io::Result<Bytes> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await?;
    let n = frame::body_len(len).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let mut buf = BytesMut::with_capacity(4 + n);
    buf.put_slice(&len);
    buf.resize(4 + n, 0);
    r.read_exact(&mut buf[4..]).await?;
    Ok(buf.freeze())
}

fn take_error(ctx: &Ctx, api: i16) -> Option<i16> {
    let mut s = ctx.state.lock().expect("poisoned");
    let i = s
        .errors
        .iter()
        .position(|(a, _, left)| *a as i16 == api && *left > 0)?;
    let code = s.errors[i].1;
    s.errors[i].2 -= 1;
    if s.errors[i].2 == 0 {
        s.errors.remove(i);
    }
    Some(code)
}

/// Request header and body of a frame.
fn decode_request<T: Decodable>(frame: &Bytes, api: ApiKey, version: i16) -> Option<T> {
    frame::decode_request(frame, api, version).ok()
}

/// Produce with acks=0 is the one request a broker does not answer.
fn expects_response(api: i16, version: i16, frame: &Bytes) -> bool {
    if api != ApiKey::Produce as i16 {
        return true;
    }
    decode_request::<ProduceRequest>(frame, ApiKey::Produce, version).is_none_or(|r| r.acks != 0)
}

/// The error response a broker that is not (or no longer) the coordinator
/// would give to this request.
fn made_error(api: i16, version: i16, correlation: i32, code: i16, frame: &Bytes) -> Option<Bytes> {
    let key = ApiKey::try_from(api).ok()?;
    let f = |body: &dyn ErasedEncode| body.framed(key, version, correlation);
    match key {
        ApiKey::Heartbeat => f(&HeartbeatResponse::default().with_error_code(code)),
        ApiKey::JoinGroup => f(&JoinGroupResponse::default().with_error_code(code)),
        ApiKey::SyncGroup => f(&SyncGroupResponse::default().with_error_code(code)),
        ApiKey::LeaveGroup => f(&LeaveGroupResponse::default().with_error_code(code)),
        ApiKey::ConsumerGroupHeartbeat => {
            f(&ConsumerGroupHeartbeatResponse::default().with_error_code(code))
        }
        ApiKey::FindCoordinator => {
            let req: FindCoordinatorRequest = decode_request(frame, key, version)?;
            // v4 batches keys: one answer per key asked, and the single-key
            // fields are gone (encoding refuses them).
            let resp = if version >= 4 {
                FindCoordinatorResponse::default().with_coordinators(
                    req.coordinator_keys
                        .into_iter()
                        .map(|k| {
                            Coordinator::default()
                                .with_key(k)
                                .with_node_id((-1).into())
                                .with_port(-1)
                                .with_error_code(code)
                        })
                        .collect(),
                )
            } else {
                FindCoordinatorResponse::default()
                    .with_error_code(code)
                    .with_node_id((-1).into())
                    .with_port(-1)
            };
            f(&resp)
        }
        ApiKey::OffsetCommit => {
            let req: OffsetCommitRequest = decode_request(frame, key, version)?;
            // OffsetCommit has no top-level error: every partition carries it.
            let topics = req
                .topics
                .into_iter()
                .map(|t| {
                    OffsetCommitResponseTopic::default()
                        .with_name(t.name)
                        .with_partitions(
                            t.partitions
                                .iter()
                                .map(|p| {
                                    OffsetCommitResponsePartition::default()
                                        .with_partition_index(p.partition_index)
                                        .with_error_code(code)
                                })
                                .collect(),
                        )
                })
                .collect();
            f(&OffsetCommitResponse::default().with_topics(topics))
        }
        ApiKey::OffsetFetch => {
            let req: OffsetFetchRequest = decode_request(frame, key, version)?;
            // v8 batches groups: one answer per group asked, and the
            // top-level error is gone.
            let resp = if version >= 8 {
                OffsetFetchResponse::default().with_groups(
                    req.groups
                        .into_iter()
                        .map(|g| {
                            OffsetFetchResponseGroup::default()
                                .with_group_id(g.group_id)
                                .with_error_code(code)
                        })
                        .collect(),
                )
            } else {
                OffsetFetchResponse::default().with_error_code(code)
            };
            f(&resp)
        }
        _ => None,
    }
}

/// Lets [`made_error`] frame responses of different types through one closure.
trait ErasedEncode {
    fn framed(&self, api: ApiKey, version: i16, correlation: i32) -> Option<Bytes>;
}

impl<T: Encodable> ErasedEncode for T {
    fn framed(&self, api: ApiKey, version: i16, correlation: i32) -> Option<Bytes> {
        frame::encode_response(api, version, correlation, self).ok()
    }
}

/// The highest version of `api` the proxy can read and write: what it
/// decodes (Metadata and FindCoordinator answers, the requests it answers
/// itself) and the answers it makes up. `None`: passed through unread.
fn decodable_max(api: i16) -> Option<i16> {
    fn both<Q: Message, R: Message>() -> i16 {
        Q::VERSIONS.max.min(R::VERSIONS.max)
    }
    Some(match ApiKey::try_from(api).ok()? {
        ApiKey::Metadata => both::<MetadataRequest, MetadataResponse>(),
        ApiKey::FindCoordinator => both::<FindCoordinatorRequest, FindCoordinatorResponse>(),
        ApiKey::Produce => both::<ProduceRequest, ProduceResponse>(),
        ApiKey::OffsetCommit => both::<OffsetCommitRequest, OffsetCommitResponse>(),
        ApiKey::OffsetFetch => both::<OffsetFetchRequest, OffsetFetchResponse>(),
        ApiKey::JoinGroup => both::<JoinGroupRequest, JoinGroupResponse>(),
        ApiKey::SyncGroup => both::<SyncGroupRequest, SyncGroupResponse>(),
        ApiKey::Heartbeat => both::<HeartbeatRequest, HeartbeatResponse>(),
        ApiKey::LeaveGroup => both::<LeaveGroupRequest, LeaveGroupResponse>(),
        ApiKey::ConsumerGroupHeartbeat => {
            both::<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse>()
        }
        _ => return None,
    })
}

/// Points broker addresses at the proxy, applies Metadata rules and caps
/// ApiVersions; other responses, and any that fail to decode, pass unchanged.
fn rewrite(ctx: &Arc<Ctx>, api: i16, version: i16, frame: Bytes) -> Bytes {
    let key = match ApiKey::try_from(api) {
        Ok(k @ (ApiKey::Metadata | ApiKey::FindCoordinator | ApiKey::ApiVersions)) => k,
        _ => return frame,
    };
    let mut body = frame.slice(4..);
    let Ok(header) = frame::decode_response_header(&mut body, key, version) else {
        return frame;
    };
    let framed = |resp: &dyn ErasedEncode| {
        resp.framed(key, version, header.correlation_id)
            .unwrap_or_else(|| frame.clone())
    };
    match key {
        ApiKey::ApiVersions => {
            // An UNSUPPORTED_VERSION answer is v0 whatever was asked, and
            // does not decode here: it passes as it is.
            let Ok(mut resp) = ApiVersionsResponse::decode(&mut body, version) else {
                return frame;
            };
            let hidden = ctx.state.lock().expect("poisoned").hidden.clone();
            resp.api_keys.retain(|k| !hidden.contains(&k.api_key));
            for k in &mut resp.api_keys {
                if let Some(max) = decodable_max(k.api_key) {
                    k.max_version = k.max_version.min(max);
                }
            }
            framed(&resp)
        }
        ApiKey::Metadata => {
            let Ok(mut resp) = MetadataResponse::decode(&mut body, version) else {
                return frame;
            };
            for b in &mut resp.brokers {
                let upstream = format!("{}:{}", b.host.as_str(), b.port);
                if let Some((host, port)) = route(ctx, upstream, b.node_id.0) {
                    b.host = host;
                    b.port = port;
                }
            }
            let leaderless = ctx.state.lock().expect("poisoned").leaderless.clone();
            for t in &mut resp.topics {
                let Some(name) = &t.name else { continue };
                for p in &mut t.partitions {
                    if leaderless
                        .iter()
                        .any(|(lt, lp)| lt == name.0.as_str() && *lp == p.partition_index)
                    {
                        p.leader_id = (-1).into();
                        p.error_code = LEADER_NOT_AVAILABLE;
                    }
                }
            }
            framed(&resp)
        }
        _ => {
            let Ok(mut resp) = FindCoordinatorResponse::decode(&mut body, version) else {
                return frame;
            };
            if version < 4 && resp.error_code == 0 {
                let upstream = format!("{}:{}", resp.host.as_str(), resp.port);
                if let Some((host, port)) = route(ctx, upstream, resp.node_id.0) {
                    resp.host = host;
                    resp.port = port;
                }
            }
            for c in &mut resp.coordinators {
                if c.error_code == 0 {
                    let upstream = format!("{}:{}", c.host.as_str(), c.port);
                    if let Some((host, port)) = route(ctx, upstream, c.node_id.0) {
                        c.host = host;
                        c.port = port;
                    }
                }
            }
            framed(&resp)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request_frame(api: ApiKey, version: i16, correlation: i32, body: &impl Encodable) -> Bytes {
        frame::encode_request(api, version, correlation, None, body)
            .unwrap()
            .freeze()
    }

    fn decode_response<T: Decodable>(frame: Bytes, api: ApiKey, version: i16) -> (i32, T) {
        let mut body = frame.slice(4..);
        let h = frame::decode_response_header(&mut body, api, version).unwrap();
        (h.correlation_id, T::decode(&mut body, version).unwrap())
    }

    #[test]
    fn made_errors_answer_the_request_they_replace() {
        for v in [0, 3, 4, 5, 6, 9] {
            let frame = request_frame(
                ApiKey::JoinGroup,
                v,
                7,
                &kafka_protocol::messages::JoinGroupRequest::default(),
            );
            let resp = made_error(ApiKey::JoinGroup as i16, v, 7, NOT_COORDINATOR, &frame).unwrap();
            let (c, r): (i32, JoinGroupResponse) = decode_response(resp, ApiKey::JoinGroup, v);
            assert_eq!(
                (c, r.error_code, r.generation_id),
                (7, NOT_COORDINATOR, -1),
                "v{v}"
            );
        }
        for v in [0, 3, 4] {
            // v4 replaced the single key with a list.
            let req = if v >= 4 {
                FindCoordinatorRequest::default()
                    .with_coordinator_keys(vec![StrBytes::from_static_str("g")])
            } else {
                FindCoordinatorRequest::default().with_key(StrBytes::from_static_str("g"))
            };
            let frame = request_frame(ApiKey::FindCoordinator, v, 9, &req);
            let resp = made_error(
                ApiKey::FindCoordinator as i16,
                v,
                9,
                COORDINATOR_NOT_AVAILABLE,
                &frame,
            )
            .unwrap();
            let (c, r): (i32, FindCoordinatorResponse) =
                decode_response(resp, ApiKey::FindCoordinator, v);
            assert_eq!(c, 9);
            if v >= 4 {
                assert_eq!(r.coordinators.len(), 1);
                assert_eq!(r.coordinators[0].error_code, COORDINATOR_NOT_AVAILABLE);
            } else {
                assert_eq!(r.error_code, COORDINATOR_NOT_AVAILABLE);
            }
        }
    }

    #[test]
    fn offset_commit_errors_name_every_partition() {
        use kafka_protocol::messages::offset_commit_request::{
            OffsetCommitRequestPartition, OffsetCommitRequestTopic,
        };
        use kafka_protocol::messages::TopicName;
        let req =
            OffsetCommitRequest::default().with_topics(vec![OffsetCommitRequestTopic::default()
                .with_name(TopicName(StrBytes::from_static_str("t")))
                .with_partitions(vec![
                    OffsetCommitRequestPartition::default().with_partition_index(0),
                    OffsetCommitRequestPartition::default().with_partition_index(4),
                ])]);
        let frame = request_frame(ApiKey::OffsetCommit, 8, 3, &req);
        let resp = made_error(ApiKey::OffsetCommit as i16, 8, 3, NOT_COORDINATOR, &frame).unwrap();
        let (_, r): (i32, OffsetCommitResponse) = decode_response(resp, ApiKey::OffsetCommit, 8);
        let got: Vec<(i32, i16)> = r.topics[0]
            .partitions
            .iter()
            .map(|p| (p.partition_index, p.error_code))
            .collect();
        assert_eq!(got, vec![(0, NOT_COORDINATOR), (4, NOT_COORDINATOR)]);
    }

    #[test]
    fn unsupported_error_rules_are_refused() {
        let p = FaultProxy::start("127.0.0.1:1").unwrap();
        let err = p
            .set_rule(Rule::Error {
                api: ApiKey::Fetch,
                code: NOT_COORDINATOR,
                times: 1,
            })
            .unwrap_err();
        assert!(err.to_string().contains("Fetch"), "{err}");
    }
}
