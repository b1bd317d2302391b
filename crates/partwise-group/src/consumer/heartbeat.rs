//! The heartbeat task: beats on its own connection while the member holds
//! an assignment, and tells the member (through [`Shared`]) when to rejoin,
//! forget its member id, or look the coordinator up again.

use super::Config;
use kafka_protocol::messages::{GroupId, HeartbeatRequest};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::ResponseError::{
    self, FencedInstanceId, IllegalGeneration, RebalanceInProgress, UnknownMemberId,
};
use partwise_client::cluster::coordinator_moved;
use partwise_client::wire::Connection;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What the heartbeat task and the member share.
pub(super) struct Shared {
    pub(super) coordinator: Option<String>,
    pub(super) member_id: String,
    pub(super) generation: i32,
    /// The heartbeat task only beats between a SyncGroup and the next rejoin.
    pub(super) active: bool,
    pub(super) rejoin: bool,
    pub(super) forget_member: bool,
    pub(super) last_poll: Instant,
    /// When the last heartbeat (or SyncGroup) the coordinator accepted was
    /// sent: the session is known to be alive until a session timeout later.
    pub(super) beat_at: Instant,
    pub(super) closed: bool,
    /// The coordinator answered FENCED_INSTANCE_ID: another member joined
    /// with this member's group.instance.id and holds its place. Rejoining
    /// would take the place back and fence that one in turn, the two
    /// trading it forever, so the member stops (as Java's
    /// FencedInstanceIdException does).
    pub(super) fenced: bool,
}

impl Shared {
    pub(super) fn new() -> Shared {
        Shared {
            coordinator: None,
            member_id: String::new(),
            generation: -1,
            active: false,
            rejoin: false,
            forget_member: false,
            last_poll: Instant::now(),
            beat_at: Instant::now(),
            closed: false,
            fenced: false,
        }
    }
}

/// Beats every `heartbeat_interval` on its own connection while the member
/// holds an assignment, and flags a rejoin when the coordinator says the
/// group moved on, or when the application stopped polling for longer than
/// `max_poll_interval`.
pub(super) async fn heartbeat_loop(shared: Arc<Mutex<Shared>>, cfg: Config) {
    let mut conn: Option<Connection> = None;
    let mut last_ok = Instant::now();
    loop {
        tokio::time::sleep(cfg.heartbeat_interval).await;
        let (addr, member_id, generation, overdue) = {
            let s = shared.lock().expect("poisoned");
            if s.closed {
                return;
            }
            if !s.active {
                last_ok = Instant::now();
                continue;
            }
            let Some(addr) = s.coordinator.clone() else {
                drop(s);
                check_session(&shared, &cfg, last_ok);
                continue;
            };
            (
                addr,
                s.member_id.clone(),
                s.generation,
                s.last_poll.elapsed() > cfg.max_poll_interval,
            )
        };
        if overdue {
            // The application is stuck: give the units to someone who polls.
            let mut s = shared.lock().expect("poisoned");
            s.active = false;
            s.rejoin = true;
            s.forget_member = cfg.group_instance_id.is_none();
            continue;
        }
        if conn
            .as_ref()
            .is_none_or(|c| c.addr() != addr || !c.usable())
        {
            conn =
                Connection::connect_with(&addr, &cfg.client_id, cfg.request_timeout, &cfg.security)
                    .await
                    .ok();
        }
        let Some(c) = conn.as_mut() else {
            check_session(&shared, &cfg, last_ok);
            continue;
        };
        let req = HeartbeatRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(cfg.group_id.clone())))
            .with_generation_id(generation)
            .with_member_id(StrBytes::from_string(member_id))
            .with_group_instance_id(cfg.group_instance_id.clone().map(StrBytes::from_string));
        let sent = Instant::now();
        match c.send(&req, cfg.request_timeout).await {
            Ok((resp, _)) => {
                let mut s = shared.lock().expect("poisoned");
                if s.generation != generation {
                    continue;
                }
                match ResponseError::try_from_code(resp.error_code) {
                    None => {
                        last_ok = Instant::now();
                        s.beat_at = s.beat_at.max(sent);
                    }
                    Some(RebalanceInProgress | IllegalGeneration) => s.rejoin = true,
                    Some(FencedInstanceId) => {
                        s.fenced = true;
                        s.active = false;
                    }
                    Some(UnknownMemberId) => {
                        s.rejoin = true;
                        s.forget_member = true;
                    }
                    // The member is still in its generation (the Java client
                    // keeps it too): only the coordinator is looked up again.
                    // A coordinator whose log writes stall (a replica of
                    // __consumer_offsets died) answers COORDINATOR_NOT_AVAILABLE
                    // for a few seconds; rejoining would revoke every unit of
                    // the group for nothing. Should the session lapse
                    // meanwhile, check_session and poll's session check act.
                    Some(e) if coordinator_moved(e) => s.coordinator = None,
                    // Unknown trouble: rejoining is the safe answer.
                    _ => s.rejoin = true,
                }
            }
            Err(_) => {
                conn = None;
                check_session(&shared, &cfg, last_ok);
            }
        }
    }
}

/// After a session's worth of failed heartbeats the coordinator has dropped
/// us: stop processing and rejoin.
fn check_session(shared: &Arc<Mutex<Shared>>, cfg: &Config, last_ok: Instant) {
    if last_ok.elapsed() > cfg.session_timeout {
        let mut s = shared.lock().expect("poisoned");
        s.rejoin = true;
        s.coordinator = None;
    }
}
