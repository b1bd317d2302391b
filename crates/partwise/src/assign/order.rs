//! The orders the real assignors put members and topics in: Java's `String`
//! comparison (UTF-16 code units), Java's `HashMap<String, _>` iteration order,
//! and each client's member comparator.

use super::Member;
use std::cmp::Ordering;

/// `java.lang.String.compareTo`: UTF-16 code units, which differs from Rust's
/// byte order for characters above U+FFFF against U+E000..U+FFFF.
pub fn java_cmp(a: &str, b: &str) -> Ordering {
    // UTF-8 bytes sort by code point, which agrees with UTF-16 unless one side
    // has a character at or above U+E000 (lead byte 0xEE or more): member ids
    // and topic names almost never do, and the byte compare is much cheaper.
    if a.bytes().all(|c| c < 0xEE) || b.bytes().all(|c| c < 0xEE) {
        return a.as_bytes().cmp(b.as_bytes());
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// `java.lang.String.hashCode`.
pub fn java_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The iteration order of a `java.util.HashMap<String, _>` grown from the
/// default capacity by inserting `keys` in the order given: bucket by bucket,
/// each bucket in insertion order (resizes keep the relative order).
/// Buckets turned into trees (8+ colliding keys in a table of 64+) are not
/// modelled; with member ids that does not happen in practice.
pub fn java_hashmap_order<S: AsRef<str>>(keys: &[S]) -> Vec<usize> {
    let mut cap = 16usize;
    while keys.len() > cap / 4 * 3 {
        cap *= 2;
    }
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    idx.sort_by_key(|&i| {
        let h = java_hash(keys[i].as_ref()) as u32;
        ((h ^ (h >> 16)) as usize) & (cap - 1)
    });
    idx
}

/// `org.apache.kafka.common.Uuid.hashCode` of a topic id's 16 bytes (most
/// significant first): the two halves XORed, then the two halves of that.
pub fn kafka_uuid_hash(id: &[u8; 16]) -> i32 {
    let msb = i64::from_be_bytes(id[..8].try_into().expect("8 bytes"));
    let lsb = i64::from_be_bytes(id[8..].try_into().expect("8 bytes"));
    let h = msb ^ lsb;
    ((h >> 32) as i32) ^ (h as i32)
}

/// The iteration order of a `java.util.HashSet<Uuid>` of topic ids filled
/// in the order given: bucket by bucket, each bucket in insertion order, as
/// [`java_hashmap_order`] for strings.
pub fn java_uuid_hashset_order(ids: &[[u8; 16]]) -> Vec<usize> {
    let bucket = uuid_buckets(ids.len());
    let mut idx: Vec<usize> = (0..ids.len()).collect();
    idx.sort_by_key(|&i| bucket(&ids[i]));
    idx
}

/// Whether two of `ids` share a bucket of the `HashSet<Uuid>` that
/// [`java_uuid_hashset_order`] models: their order is then the order the
/// set was filled in, which the coordinator does not describe, so an
/// order taken from a description may be the wrong one of the two.
pub fn java_uuid_hashset_ties(ids: &[[u8; 16]]) -> bool {
    let bucket = uuid_buckets(ids.len());
    let mut seen = std::collections::HashSet::new();
    !ids.iter().all(|id| seen.insert(bucket(id)))
}

/// The bucket of a topic id in a `HashSet<Uuid>` of `n` ids (the default
/// table, doubled until the ids fit under its load factor).
fn uuid_buckets(n: usize) -> impl Fn(&[u8; 16]) -> usize {
    let mut cap = 16usize;
    while n > cap / 4 * 3 {
        cap *= 2;
    }
    move |id| {
        let h = kafka_uuid_hash(id) as u32;
        ((h ^ (h >> 16)) as usize) & (cap - 1)
    }
}

/// The iteration order of `new java.util.HashSet<Integer>(list)` (a
/// `HashMap` sized for the list, filled in list order; duplicates dropped):
/// bucket by bucket, each bucket in insertion order. A bucket that reaches 9
/// entries doubles a table smaller than 64 (resizes keep the relative order);
/// in a larger table it turns into a tree, whose order is not modelled: `None`.
pub fn java_int_hashset_order(list: &[u32]) -> Option<Vec<u32>> {
    // HashSet(Collection): HashMap(max((int) (size / .75f) + 1, 16)), rounded
    // up to a power of two.
    let initial = ((list.len() as f32 / 0.75f32) as usize + 1).max(16);
    let mut cap = initial.next_power_of_two();
    let spread = |p: u32| (p ^ (p >> 16)) as usize;
    let mut keys: Vec<u32> = Vec::with_capacity(list.len());
    let mut seen: std::collections::HashSet<u32> = std::collections::HashSet::new();
    let mut bins: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for &p in list {
        if !seen.insert(p) {
            continue;
        }
        let bin = spread(p) & (cap - 1);
        let before = bins.get(&bin).copied().unwrap_or(0);
        keys.push(p);
        *bins.entry(bin).or_insert(0) += 1;
        // putVal: treeifyBin (a resize below 64 slots) first, then the size check.
        let mut doublings = 0;
        if before >= 8 {
            if cap < 64 {
                doublings += 1;
            } else {
                return None;
            }
        }
        if keys.len() > (cap << doublings) / 4 * 3 {
            doublings += 1;
        }
        if doublings > 0 {
            cap <<= doublings;
            bins.clear();
            for &k in &keys {
                *bins.entry(spread(k) & (cap - 1)).or_insert(0) += 1;
            }
        }
    }
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    idx.sort_by_key(|&i| spread(keys[i]) & (cap - 1));
    Some(idx.into_iter().map(|i| keys[i]).collect())
}

/// `AbstractPartitionAssignor.MemberInfo.compareTo`: members with a
/// `group.instance.id` first, by instance id, then the others by member id.
pub fn java_member_cmp(a: &Member, b: &Member) -> Ordering {
    match (&a.instance_id, &b.instance_id) {
        (Some(x), Some(y)) => java_cmp(x, y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => java_cmp(&a.id, &b.id),
    }
}

/// librdkafka's `rd_kafka_group_member_cmp`: instance ids when both members
/// have one, else member ids, byte-wise. With a mix of static and dynamic
/// members that comparator is not a total order and `qsort`'s result is
/// unspecified; we then order by member id alone.
pub fn librdkafka_member_order(members: &[Member]) -> Vec<usize> {
    let all_static = members.iter().all(|m| m.instance_id.is_some());
    let mut idx: Vec<usize> = (0..members.len()).collect();
    if all_static {
        idx.sort_by(|&a, &b| members[a].instance_id.cmp(&members[b].instance_id));
    } else {
        idx.sort_by(|&a, &b| members[a].id.as_bytes().cmp(members[b].id.as_bytes()));
    }
    idx
}

/// Member indices sorted by [`java_member_cmp`].
pub fn java_member_order(members: &[Member]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..members.len()).collect();
    idx.sort_by(|&a, &b| java_member_cmp(&members[a], &members[b]));
    idx
}

#[cfg(test)]
mod tests {
    /// Ids in one bucket of the 16-slot table tie (their order is the
    /// set's filling order); ids in different buckets do not.
    #[test]
    fn uuid_ids_in_one_bucket_tie() {
        let id = |lsb: u8| {
            let mut b = [0u8; 16];
            b[15] = lsb;
            b
        };
        // Hashes 0 and 16 both land in bucket 0 of 16; 1 in bucket 1.
        assert!(super::java_uuid_hashset_ties(&[id(0), id(16)]));
        assert!(!super::java_uuid_hashset_ties(&[id(0), id(1)]));
        assert_eq!(
            super::java_uuid_hashset_order(&[id(16), id(1), id(0)]),
            [0, 2, 1]
        );
    }

    use super::*;

    #[test]
    fn java_hash_matches_known_values() {
        // Values of "".hashCode(), "a".hashCode(), "hello".hashCode() in Java.
        assert_eq!(java_hash(""), 0);
        assert_eq!(java_hash("a"), 97);
        assert_eq!(java_hash("hello"), 99_162_322);
        // Overflow wraps as in Java: "polygenelubricants".hashCode() == Integer.MIN_VALUE.
        assert_eq!(java_hash("polygenelubricants"), i32::MIN);
    }

    #[test]
    fn java_order_is_utf16() {
        // U+FF61 sorts after U+1F600 in UTF-8 byte order but before it in UTF-16.
        assert_eq!(java_cmp("\u{FF61}", "\u{1F600}"), Ordering::Greater);
        assert_eq!("\u{FF61}".cmp("\u{1F600}"), Ordering::Less);
    }

    #[test]
    fn hashmap_order_follows_buckets() {
        // "a"=97 -> bucket 1, "b"=98 -> 2, "q"=113 -> 1 (113 & 15): insertion order within a bucket.
        let keys = ["b", "q", "a"];
        assert_eq!(java_hashmap_order(&keys), vec![1, 2, 0]);
    }

    /// Kafka 4.4.0's own `Uuid.hashCode` and `HashSet<Uuid>` order
    /// (tests/vectors/kip848/uuid: UuidOrder.java run against kafka-clients).
    #[test]
    fn uuid_hash_and_hashset_order_are_kafkas() {
        let text = include_str!("../../../../tests/vectors/kip848/uuid/uuid_order.txt");
        let id = |s: &str| -> [u8; 16] {
            use base64::Engine as _;
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(s)
                .unwrap()
                .try_into()
                .unwrap()
        };
        let mut lines = 0;
        for line in text.lines() {
            let parts: Vec<&str> = line.split('|').collect();
            let inserted: Vec<&str> = parts[0].split_whitespace().collect();
            let walked: Vec<&str> = parts[1].split_whitespace().collect();
            let hashes: Vec<i32> = parts[2]
                .split_whitespace()
                .map(|h| h.parse().unwrap())
                .collect();
            let ids: Vec<[u8; 16]> = inserted.iter().map(|s| id(s)).collect();
            for (i, h) in ids.iter().zip(&hashes) {
                assert_eq!(kafka_uuid_hash(i), *h, "{line}");
            }
            let order: Vec<&str> = java_uuid_hashset_order(&ids)
                .into_iter()
                .map(|i| inserted[i])
                .collect();
            assert_eq!(order, walked, "{line}");
            lines += 1;
        }
        assert_eq!(lines, 9);
    }
}
