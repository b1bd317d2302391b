//! Validated partition counts and the division-free remainder used on hot paths.

use crate::Error;
use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;

/// The largest partition count a topic can have: partition ids are Kafka `int32`s.
pub const MAX_PARTITIONS: u32 = i32::MAX as u32;

/// The number of partitions of a topic: at least 1, at most [`MAX_PARTITIONS`].
///
/// It carries a precomputed reciprocal so that `x % n` costs two multiplications
/// instead of a division (Lemire, Kaser and Kurz, "Faster Remainder by Direct
/// Computation", 2019). Routing millions of keys per second spends a large share
/// of its time in that remainder when `n` is only known at run time.
///
/// ```
/// use partwise::PartitionCount;
/// let n: PartitionCount = "6".parse().unwrap();
/// assert_eq!(n.get(), 6);
/// assert_eq!(n.modulo(3387733778 & 0x7fff_ffff), 0);
/// assert!("0".parse::<PartitionCount>().is_err());
/// assert!("-3".parse::<PartitionCount>().is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PartitionCount {
    n: NonZeroU32,
    // ceil(2^64 / n); wraps to 0 for n = 1, which still yields remainder 0.
    m: u64,
}

impl PartitionCount {
    /// A partition count, or an error when `n` is 0 or above [`MAX_PARTITIONS`].
    pub fn new(n: u32) -> Result<PartitionCount, Error> {
        if n > MAX_PARTITIONS {
            return Err(Error::PartitionCount {
                input: n.to_string(),
                reason: format!("at most {MAX_PARTITIONS} partitions (partition ids are int32)"),
            });
        }
        let n = NonZeroU32::new(n).ok_or_else(|| Error::PartitionCount {
            input: "0".into(),
            reason: "a topic has at least 1 partition".into(),
        })?;
        Ok(PartitionCount {
            n,
            m: (u64::MAX / u64::from(n.get())).wrapping_add(1),
        })
    }

    /// The count as a number.
    #[inline]
    pub fn get(self) -> u32 {
        self.n.get()
    }

    /// `x % n`, without a division instruction.
    #[inline(always)]
    pub fn modulo(self, x: u32) -> u32 {
        let low = self.m.wrapping_mul(u64::from(x));
        ((u128::from(low) * u128::from(self.n.get())) >> 64) as u32
    }
}

impl fmt::Debug for PartitionCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PartitionCount({})", self.n)
    }
}

impl fmt::Display for PartitionCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.n)
    }
}

impl FromStr for PartitionCount {
    type Err = Error;

    fn from_str(s: &str) -> Result<PartitionCount, Error> {
        let bad = |reason: &str| Error::PartitionCount {
            input: s.to_string(),
            reason: reason.to_string(),
        };
        let t = s.trim();
        if t.is_empty() {
            return Err(bad("expected a whole number of partitions, got nothing"));
        }
        if t.starts_with('-') {
            return Err(bad("a partition count cannot be negative"));
        }
        let n: u64 = t
            .parse()
            .map_err(|_| bad("expected a whole number of partitions"))?;
        if n == 0 {
            return Err(bad("a topic has at least 1 partition"));
        }
        let n = u32::try_from(n)
            .ok()
            .filter(|&n| n <= MAX_PARTITIONS)
            .ok_or_else(|| bad("too many partitions: partition ids are int32"))?;
        PartitionCount::new(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn rem_is_exact(x: u32, n in 1u32..=MAX_PARTITIONS) {
            prop_assert_eq!(PartitionCount::new(n).unwrap().modulo(x), x % n);
        }

        #[test]
        fn rem_is_exact_small(x: u32, n in 1u32..2000) {
            prop_assert_eq!(PartitionCount::new(n).unwrap().modulo(x), x % n);
        }

        #[test]
        fn parse_never_panics(s in ".{0,24}") {
            let _ = s.parse::<PartitionCount>();
        }
    }

    #[test]
    fn edges() {
        for n in [1, 2, 3, 7, 1000, MAX_PARTITIONS] {
            let c = PartitionCount::new(n).unwrap();
            for x in [
                0,
                1,
                n - 1,
                n,
                u32::MAX,
                u32::MAX - 1,
                0x7fff_ffff,
                0x8000_0000,
            ] {
                assert_eq!(c.modulo(x), x % n, "{x} % {n}");
            }
        }
        assert!(PartitionCount::new(0).is_err());
        assert!(PartitionCount::new(MAX_PARTITIONS + 1).is_err());
        for bad in ["", "0", "-1", "abc", "1.5", "4294967296", "2147483648"] {
            assert!(bad.parse::<PartitionCount>().is_err(), "{bad:?}");
        }
        assert_eq!(" 12 ".parse::<PartitionCount>().unwrap().get(), 12);
    }
}
