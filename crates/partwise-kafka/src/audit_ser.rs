//! The JSON of an audit's topic (`kafka audit --format json`, the live
//! part of `report -b`'s): the topic's numbers in the order a reader wants
//! them, with the window's description and the skew's total beside the
//! statistics. The topic's findings are the caller's to add beside these.

use crate::audit::{PartitionAudit, TopicAudit, Window, WindowTraffic};
use partwise::inference::Routing;
use partwise::traffic::hitters::HeavyHitters;
use partwise::traffic::skew::SkewStats;
use serde::{Serialize, Serializer};

impl Serialize for TopicAudit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// The skew with its total, which the statistics alone leave out.
        #[derive(Serialize)]
        struct Skew<'a> {
            total: u64,
            #[serde(flatten)]
            stats: &'a SkewStats,
        }
        #[derive(Serialize)]
        struct Json<'a> {
            topic: &'a str,
            error: &'a Option<String>,
            partial: &'a Option<String>,
            partitions: Option<u32>,
            per_partition: &'a [PartitionAudit],
            window: Option<&'a WindowTraffic>,
            skew: Option<Skew<'a>>,
            routing: Option<&'a Routing>,
        }
        Json {
            topic: &self.name,
            error: &self.error,
            partial: &self.partial,
            partitions: self.partition_count(),
            per_partition: &self.partitions,
            window: self.traffic.as_ref(),
            skew: self.skew.as_ref().map(|stats| Skew {
                total: stats.total,
                stats,
            }),
            routing: self.routing.as_ref(),
        }
        .serialize(s)
    }
}

/// The window of recent records an audit sampled, and the keys that carry it.
impl Serialize for WindowTraffic {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            /// `since`, `from_end` or `oldest`.
            kind: &'static str,
            /// `--since`'s duration, in the duration grammar (`10m`).
            since: Option<String>,
            /// Where it starts, in ms since the epoch (`--since`).
            since_ms: Option<i64>,
            /// The records per partition of a window of the newest.
            from_end: Option<u64>,
            /// The window in words, as the table says it.
            description: String,
            /// The heaviest keys, overall and per partition.
            heavy_hitters: &'a HeavyHitters,
        }
        let (kind, since, from_end) = match self.window {
            Window::Since(d) => ("since", Some(partwise::duration::label(d)), None),
            Window::FromEnd(n) => ("from_end", None, Some(n)),
            Window::Oldest => ("oldest", None, None),
        };
        Json {
            kind,
            since,
            since_ms: self.since_ms,
            from_end,
            description: self.window.describe(),
            heavy_hitters: &self.hitters,
        }
        .serialize(s)
    }
}
