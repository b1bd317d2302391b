//! Finding the group coordinator, and which failures the member rides out
//! (looking the coordinator up again, retrying for up to `retry_timeout`)
//! rather than reporting.

use super::Consumer;
use crate::error::{Error, Result};
use kafka_protocol::ResponseError::{
    LeaderNotAvailable, NotLeaderOrFollower, RebalanceInProgress, UnknownTopicOrPartition,
    UnstableOffsetCommit,
};
use partwise_client::cluster::coordinator_moved;

impl Consumer {
    /// The coordinator's address, looked up when not known.
    pub(super) async fn coordinator(&mut self) -> Result<String> {
        if let Some(c) = &self.coordinator {
            return Ok(c.clone());
        }
        let c = self.cluster.find_coordinator(&self.cfg.group_id).await?;
        self.coordinator = Some(c.clone());
        self.shared.lock().expect("poisoned").coordinator = Some(c.clone());
        Ok(c)
    }

    /// Forgets the coordinator when `code` says it moved; whether it did.
    pub(super) fn coordinator_moved(&mut self, code: i16) -> bool {
        let moved =
            kafka_protocol::ResponseError::try_from_code(code).is_some_and(coordinator_moved);
        if moved {
            self.coordinator = None;
        }
        moved
    }

    pub(super) fn retriable(&self, e: &Error) -> bool {
        // Before the first join these mean a wrong address or topic name; after
        // it, a broker restarting (and, with it, topic metadata briefly gone).
        if e.is_transport() || matches!(e, Error::UnknownTopic(_)) {
            return self.joined_once;
        }
        e.response_error().is_some_and(|c| {
            coordinator_moved(c)
                || matches!(
                    c,
                    RebalanceInProgress
                        | NotLeaderOrFollower
                        | LeaderNotAvailable
                        | UnknownTopicOrPartition
                        // A stable OffsetFetch to a coordinator before
                        // KIP-848's runtime, while a transaction's offsets
                        // for the partition are pending: asked again.
                        | UnstableOffsetCommit
                )
        })
    }
}
