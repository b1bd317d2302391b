//! Where one record lands: the [`Placement`] vocabulary shared by the
//! clients' partitioners ([`crate::partitioner`]) and priority isolation
//! ([`crate::partitioner::priority`]). It lives apart so that priority, which the
//! partitioner table embeds, does not have to import the table back.

/// Where a partitioner puts one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Placement {
    /// A fixed partition, the same every time for this key and count.
    Partition(u32),
    /// A sticky partition: chosen at random, kept for a batch (or a linger
    /// period), then chosen again. Not a function of the key.
    Sticky,
    /// A random partition for each record.
    Random,
    /// The next partition of a per-topic counter (whose start may be random).
    RoundRobin,
    /// The client's partitioner fails for this record (it throws, or returns a
    /// partition the topic does not have), so the producer rejects it.
    Rejected,
}

impl Placement {
    /// The partition, when the placement is deterministic.
    #[inline]
    pub fn partition(self) -> Option<u32> {
        match self {
            Placement::Partition(p) => Some(p),
            _ => None,
        }
    }

    /// A word for the placement: `fixed`, `sticky`, `random` or `round-robin`.
    pub fn behaviour(self) -> &'static str {
        match self {
            Placement::Partition(_) => "fixed",
            Placement::Sticky => "sticky",
            Placement::Random => "random",
            Placement::RoundRobin => "round-robin",
            Placement::Rejected => "rejected",
        }
    }
}
