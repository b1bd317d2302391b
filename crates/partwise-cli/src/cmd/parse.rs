//! The value parsers of the clap boundary: every flag value that has a type
//! (a partition count, a partitioner or assignor spec, a key format, a
//! positive integer, `NAME:N`, `A..B`, a fraction) is parsed here, once, so
//! clap names the flag, shows the value and exits 2. The messages say what
//! is wrong with the value and nothing about flags: clap adds which flag.

use partwise::assign::Assignor;
use partwise::{KeyFormat, PartitionCount, Partitioner};

/// `-c HOST:PORT`: a Redis Cluster node (`redis ...`, `report -c`).
pub fn node_addr(s: &str) -> Result<partwise_redis::NodeAddr, partwise_redis::Error> {
    s.parse()
}

/// `-p N`: a partition count (the core's rule: 1 up to int32 ids).
pub fn partitions(s: &str) -> Result<PartitionCount, partwise::Error> {
    s.parse()
}

/// A consumer count that a partition count should divide (`resize
/// --consumers`): a whole number from 1, worded as consumers.
pub fn consumer_count(s: &str) -> Result<PartitionCount, String> {
    let n: u32 = positive(s).map_err(|e| format!("{e} (a number of consumers)"))?;
    PartitionCount::new(n)
        .map_err(|_| format!("{n} consumers: more than a topic can have partitions"))
}

/// `-P SPEC`: one partitioner.
pub fn partitioner(s: &str) -> Result<Partitioner, partwise::Error> {
    s.parse()
}

/// Refuses a partitioner that ignores keys, for the answers that are where
/// keys land (`salt`, `resize` with keys): under one no key has a
/// partition, and the figures would be noise.
pub fn keyed(p: Partitioner) -> Result<Partitioner, String> {
    match p.key_rule() {
        partwise::partitioner::KeyRule::Ignore(pl) => Err(format!(
            "{} ignores keys ({}), so no key has a partition to salt or move; name the producer's key-hashing partitioner (partwise partitioners lists them)",
            p.spec(),
            pl.behaviour()
        )),
        partwise::partitioner::KeyRule::Hash(..) => Ok(p),
    }
}

/// One bootstrap entry as librdkafka reads it, so `-b` means the same in
/// every `kafka` command (partwise-group's member and librdkafka's clients):
/// `[PROTO://]HOST[:PORT]`, port 9092 when none is given; an IPv6 host is
/// bracketed. A port outside 1..=65535 is refused here rather than left to
/// time out.
pub fn broker_address(b: &str) -> Result<String, String> {
    let bad = || format!("'{b}' is not [PROTO://]HOST[:PORT] (a port is 1 to 65535)");
    let rest = b.split_once("://").map_or(b, |(_, r)| r);
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or_else(bad)?;
        match after.strip_prefix(':') {
            Some(p) => (format!("[{h}]"), Some(p)),
            None if after.is_empty() => (format!("[{h}]"), None),
            None => return Err(bad()),
        }
    } else {
        match rest.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (rest.to_string(), None),
        }
    };
    if host.is_empty() || host == "[]" || host.contains(['/', ' ']) {
        return Err(bad());
    }
    let port = match port {
        Some(p) => p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(bad)?,
        None => 9092,
    };
    Ok(format!("{host}:{port}"))
}

/// `-P` of `route`, which also takes `all`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partitioners {
    All,
    One(Partitioner),
}

pub fn partitioner_or_all(s: &str) -> Result<Partitioners, partwise::Error> {
    if s.trim().eq_ignore_ascii_case("all") {
        return Ok(Partitioners::All);
    }
    s.parse().map(Partitioners::One)
}

/// `--assignor SPEC` of the simulated groups.
pub fn assignor(s: &str) -> Result<Assignor, partwise::Error> {
    s.parse()
}

/// `kafka consume --assignor`: an assignor spec, as [`assignor`] reads
/// it, or `range`, its former value (the protocol name), kept for one
/// release as `java:range`.
pub fn consume_assignor(s: &str) -> Result<Assignor, partwise::Error> {
    if s == "range" {
        return Ok(Assignor::JavaRange);
    }
    assignor(s)
}

/// `--key-format F`.
pub fn key_format(s: &str) -> Result<KeyFormat, partwise::Error> {
    s.parse()
}

/// A whole number above 0 that fits `T`; `-3`, `0`, `1.5` and `ten` are
/// refused with the same words everywhere.
pub fn positive<T>(s: &str) -> Result<T, String>
where
    T: TryFrom<u64>,
{
    let t = s.trim();
    if t.starts_with('-') {
        return Err("expected a whole number above 0, got a negative number".into());
    }
    let n: u64 = t
        .parse()
        .map_err(|_| "expected a whole number above 0".to_string())?;
    if n == 0 {
        return Err("expected a whole number above 0, got 0".into());
    }
    T::try_from(n).map_err(|_| "too large".to_string())
}

/// `--counts` of `check` and `report`: a `KEY,COUNT` file, or the live
/// topics' newest records, `live:DURATION` (`live:1h`: the records of the
/// last hour) or `live:last=N` (the newest N of each partition). A file whose
/// name starts with `live:` is given as `./live:...`.
pub fn counts_from(s: &str) -> Result<super::CountsFrom, String> {
    use partwise_kafka::audit::Window;
    let Some(rest) = s.strip_prefix("live:") else {
        if s.is_empty() {
            return Err("expected a KEY,COUNT file, live:DURATION or live:last=N".into());
        }
        return Ok(super::CountsFrom::File(std::path::PathBuf::from(s)));
    };
    let window = match rest.strip_prefix("last=") {
        Some(n) => Window::FromEnd(positive_u64(n).map_err(|e| format!("live:last=N: {e}"))?),
        None => Window::Since(
            super::duration::window(rest)
                .map_err(|e| format!("live:DURATION (live:10m, live:1h) or live:last=N: {e}"))?,
        ),
    };
    Ok(super::CountsFrom::Live(window))
}

pub fn positive_u32(s: &str) -> Result<u32, String> {
    positive(s)
}

pub fn positive_u64(s: &str) -> Result<u64, String> {
    positive(s)
}

pub fn positive_usize(s: &str) -> Result<usize, String> {
    positive(s)
}

/// `NAME:N`: a topic and its partition count (the count after the last
/// colon, so a name may hold colons).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicCount {
    pub name: String,
    pub partitions: PartitionCount,
}

/// Why a `NAME:N` value was refused; a bad count keeps the core's error as
/// its cause.
#[derive(Debug)]
pub enum TopicCountError {
    NoCount,
    EmptyName,
    Count(partwise::Error),
}

impl std::fmt::Display for TopicCountError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TopicCountError::NoCount => "expected NAME:N (a topic and its partition count)",
            TopicCountError::EmptyName => "the topic name is empty",
            TopicCountError::Count(_) => "the partition count after the last ':' is not valid",
        })
    }
}

impl std::error::Error for TopicCountError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TopicCountError::Count(e) => Some(e),
            _ => None,
        }
    }
}

pub fn topic_count(s: &str) -> Result<TopicCount, TopicCountError> {
    let (name, n) = s.rsplit_once(':').ok_or(TopicCountError::NoCount)?;
    if name.is_empty() {
        return Err(TopicCountError::EmptyName);
    }
    Ok(TopicCount {
        name: name.to_string(),
        partitions: n.parse().map_err(TopicCountError::Count)?,
    })
}

/// `A..B`: an inclusive range of group sizes, each between 1 and `max`.
pub fn size_range(s: &str, max: usize) -> Result<(usize, usize), String> {
    let (lo, hi) = s
        .split_once("..")
        .ok_or_else(|| "expected A..B (e.g. 1..12)".to_string())?;
    let bound = |v: &str| -> Result<usize, String> {
        let n: usize = positive(v).map_err(|e| format!("'{v}': {e}"))?;
        if n > max {
            return Err(format!("'{v}': at most {max}"));
        }
        Ok(n)
    };
    let (lo, hi) = (bound(lo)?, bound(hi)?);
    if lo > hi {
        return Err("the range is empty (A is above B)".into());
    }
    Ok((lo, hi))
}

/// A rate (MB/s and the like): a finite number above 0.
pub fn positive_rate(s: &str) -> Result<f64, String> {
    s.trim()
        .parse()
        .ok()
        .filter(|f: &f64| f.is_finite() && *f > 0.0)
        .ok_or_else(|| "expected a finite number above 0".to_string())
}

/// A factor: a finite number of at least 1.
pub fn at_least_one(s: &str) -> Result<f64, String> {
    s.trim()
        .parse()
        .ok()
        .filter(|f: &f64| f.is_finite() && *f >= 1.0)
        .ok_or_else(|| "expected a finite number of at least 1".to_string())
}

/// A fraction above 0 and at most 1.
pub fn fraction(s: &str) -> Result<f64, String> {
    s.trim()
        .parse()
        .ok()
        .filter(|f: &f64| *f > 0.0 && *f <= 1.0)
        .ok_or_else(|| "expected a fraction above 0 and at most 1".to_string())
}

/// A fraction from 0 and at most 1.
pub fn fraction_or_zero(s: &str) -> Result<f64, String> {
    s.trim()
        .parse()
        .ok()
        .filter(|f: &f64| *f >= 0.0 && *f <= 1.0)
        .ok_or_else(|| "expected a fraction from 0 and at most 1".to_string())
}

/// A topic name or group id: anything but blank (the broker judges the rest).
pub fn not_blank(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("must not be empty".into());
    }
    Ok(s.to_string())
}

/// The most members `assign -m` and `--sweep` simulate: the one bound on
/// simulated members, [`partwise::assign::limits::MAX_MEMBERS`].
const MAX_MEMBERS: usize = partwise::assign::limits::MAX_MEMBERS as usize;

/// `assign -m K`: a group size from 1 to [`MAX_MEMBERS`].
pub fn members(s: &str) -> Result<usize, String> {
    let n: usize = positive(s)?;
    if n > MAX_MEMBERS {
        return Err(format!("at most {MAX_MEMBERS} members"));
    }
    Ok(n)
}

/// `assign --sweep A..B`: group sizes from 1 to [`MAX_MEMBERS`].
pub fn member_range(s: &str) -> Result<(usize, usize), String> {
    size_range(s, MAX_MEMBERS)
}

/// `kafka consume --group-protocol`, and `-X group.protocol`.
pub fn group_protocol(s: &str) -> Result<partwise_group::GroupProtocol, String> {
    use partwise_group::GroupProtocol;
    match s {
        "classic" => Ok(GroupProtocol::Classic),
        "consumer" => Ok(GroupProtocol::Consumer),
        other => Err(format!(
            "unknown group protocol '{other}' (known: classic, consumer)"
        )),
    }
}

/// `kafka consume --offset-reset`: where a partition with no committed
/// offset starts.
pub fn offset_reset(s: &str) -> Result<partwise_group::OffsetReset, String> {
    use partwise_group::OffsetReset;
    match s {
        "earliest" => Ok(OffsetReset::Earliest),
        "latest" => Ok(OffsetReset::Latest),
        other => Err(format!("'{other}' is not earliest or latest")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positive_numbers() {
        assert_eq!(positive_u32("12"), Ok(12));
        assert_eq!(positive_u32(" 7 "), Ok(7));
        for (v, why) in [
            ("0", "got 0"),
            ("-3", "negative"),
            ("1.5", "whole number"),
            ("ten", "whole number"),
            ("", "whole number"),
            ("4294967296", "too large"),
        ] {
            let e = positive_u32(v).unwrap_err();
            assert!(e.contains(why), "{v}: {e}");
        }
        assert_eq!(positive_u64("4294967296"), Ok(4_294_967_296));
    }

    #[test]
    fn topic_counts() {
        let t = topic_count("a:b:6").unwrap();
        assert_eq!((t.name.as_str(), t.partitions.get()), ("a:b", 6));
        assert!(topic_count("a").unwrap_err().to_string().contains("NAME:N"));
        assert!(topic_count(":3").unwrap_err().to_string().contains("empty"));
        let e = topic_count("a:0").unwrap_err();
        let cause = std::error::Error::source(&e)
            .expect("the count's error")
            .to_string();
        assert!(cause.contains("at least 1"), "{cause}");
    }

    #[test]
    fn ranges() {
        assert_eq!(size_range("1..12", 100), Ok((1, 12)));
        assert_eq!(size_range("3..3", 100), Ok((3, 3)));
        assert!(size_range("5..2", 100).unwrap_err().contains("empty"));
        assert!(size_range("5", 100).unwrap_err().contains("A..B"));
        assert!(size_range("0..2", 100).unwrap_err().contains("got 0"));
        assert!(size_range("1..101", 100)
            .unwrap_err()
            .contains("at most 100"));
    }

    #[test]
    fn fractions_and_specs() {
        assert_eq!(fraction("0.05"), Ok(0.05));
        assert!(fraction("0").is_err() && fraction("1.5").is_err());
        assert_eq!(fraction_or_zero("0"), Ok(0.0));
        assert_eq!(partitioner_or_all(" ALL "), Ok(Partitioners::All));
        assert!(partitioner_or_all("nope").is_err());
        assert!(key_format("avro-sr:").is_err());
        assert!(not_blank(" ").is_err());
        assert_eq!(not_blank("t").as_deref(), Ok("t"));
    }

    #[test]
    fn bootstrap_entries_read_as_librdkafka_reads_them() {
        for (given, want) in [
            ("localhost:9093", "localhost:9093"),
            ("kafka-1", "kafka-1:9092"),
            ("PLAINTEXT://kafka-1:19092", "kafka-1:19092"),
            ("[::1]:9093", "[::1]:9093"),
            ("[::1]", "[::1]:9092"),
        ] {
            assert_eq!(broker_address(given).unwrap(), want, "{given}");
        }
        for bad in [
            ":9092",
            "host:",
            "host:0",
            "host:99999",
            "[::1",
            "[::1]x",
            "a b:1",
        ] {
            let e = broker_address(bad).unwrap_err();
            assert!(e.contains(bad), "{bad}: {e}");
        }
    }
}
