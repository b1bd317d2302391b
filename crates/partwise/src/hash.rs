//! The 32-bit hash functions that Kafka clients and Redis Cluster apply to key bytes.
//!
//! Each function is bit-exact with the client that uses it; the tests in
//! `tests/it/offline/vectors.rs` hold them to hashes and partitions produced by the real
//! clients. Partition arithmetic (masking, `abs`, modulo) is not done here but in
//! [`crate::partitioner`], because clients that share a hash disagree on it.

use crc::{Crc, CRC_16_XMODEM};

const MURMUR2_SEED: u32 = 0x9747_b28c;
const MURMUR2_M: u32 = 0x5bd1_e995;
const MURMUR2_R: u32 = 24;

/// Kafka's murmur2 (`org.apache.kafka.common.utils.Utils.murmur2`), as an unsigned word.
///
/// The Java client returns the same bits as a signed `int`; `murmur2(b) as i32`
/// gives that value. librdkafka, kafka-python, KafkaJS 2.x, Sarama, kafka-go and
/// franz-go all compute these bits.
///
/// ```
/// // Known answers from Kafka's own UtilsTest.testMurmur2.
/// assert_eq!(partwise::hash::murmur2(b"21") as i32, -973932308);
/// assert_eq!(partwise::hash::murmur2(b"foobar") as i32, -790332482);
/// assert_eq!(partwise::hash::murmur2(b""), 0x106e_08d9);
/// ```
#[inline]
pub fn murmur2(data: &[u8]) -> u32 {
    let len = data.len();
    let mut h = MURMUR2_SEED ^ (len as u32);
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        h = murmur2_mix(h, k);
    }
    murmur2_tail_final(h, blocks.remainder())
}

/// One 4-byte block of murmur2: mixes the little-endian word `k` into `h`.
#[inline(always)]
pub(crate) fn murmur2_mix(h: u32, k: u32) -> u32 {
    let mut k = k.wrapping_mul(MURMUR2_M);
    k ^= k >> MURMUR2_R;
    k = k.wrapping_mul(MURMUR2_M);
    h.wrapping_mul(MURMUR2_M) ^ k
}

/// The last 0..=3 bytes and the final avalanche of murmur2.
#[inline(always)]
pub(crate) fn murmur2_tail_final(mut h: u32, tail: &[u8]) -> u32 {
    match tail.len() {
        3 => {
            h ^= u32::from(tail[2]) << 16;
            h ^= u32::from(tail[1]) << 8;
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(MURMUR2_M);
        }
        2 => {
            h ^= u32::from(tail[1]) << 8;
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(MURMUR2_M);
        }
        1 => {
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(MURMUR2_M);
        }
        _ => {}
    }
    h ^= h >> 13;
    h = h.wrapping_mul(MURMUR2_M);
    h ^ (h >> 15)
}

/// The murmur2 of KafkaJS's `LegacyPartitioner` (the KafkaJS 1.x default).
///
/// It is a port of Java's murmur2 that went wrong in two ways, and KafkaJS's own
/// tests pin the wrong values, so we reproduce them:
/// - the block loop runs `ceil(len / 4)` times (`i < length / 4` with a float
///   bound), so a key whose length is not a multiple of 4 mixes an extra block,
///   zero-padded, before the tail is mixed again;
/// - `k *= M` and `h *= M` are float64 multiplications whose exact products
///   exceed 2^53, so low bits are rounded away before the bit operators
///   truncate back to 32 bits.
///
/// ```
/// // KafkaJS 2.2.4 LegacyPartitioner's hash of "" (Java's murmur2 gives 275646681).
/// assert_eq!(partwise::hash::kafkajs_legacy_murmur2(b""), 275646684);
/// ```
pub fn kafkajs_legacy_murmur2(data: &[u8]) -> i32 {
    // Values are JS numbers: f64 holding integers. Bit operators apply ToInt32 /
    // ToUint32, i.e. the integer value modulo 2^32; every f64 here is an integer
    // below 2^63 in magnitude, so `as i64` is exact and `as i32` wraps correctly.
    fn to_i32(x: f64) -> i32 {
        x as i64 as i32
    }
    fn to_u32(x: f64) -> u32 {
        x as i64 as u32
    }
    let m = f64::from(MURMUR2_M);
    let len = data.len();
    let byte = |i: usize| -> i32 { data.get(i).map_or(0, |&b| i32::from(b)) };

    let mut h: f64 = f64::from((MURMUR2_SEED as i32) ^ (len as i32));
    for i in 0..len.div_ceil(4) {
        let i4 = i * 4;
        // `+` of the shifted bytes: the top byte's shift yields a signed int32.
        let mut k: f64 = f64::from(byte(i4))
            + f64::from(byte(i4 + 1) << 8)
            + f64::from(byte(i4 + 2) << 16)
            + f64::from(byte(i4 + 3).wrapping_shl(24));
        k *= m;
        k = f64::from(to_i32(k) ^ ((to_u32(k) >> MURMUR2_R) as i32));
        k *= m;
        h *= m;
        h = f64::from(to_i32(h) ^ to_i32(k));
    }
    let base = len & !3;
    let rem = len % 4;
    if rem >= 3 {
        h = f64::from(to_i32(h) ^ (byte(base + 2) << 16));
    }
    if rem >= 2 {
        h = f64::from(to_i32(h) ^ (byte(base + 1) << 8));
    }
    if rem >= 1 {
        h = f64::from(to_i32(h) ^ byte(base));
        h *= m;
    }
    h = f64::from(to_i32(h) ^ ((to_u32(h) >> 13) as i32));
    h *= m;
    to_i32(h) ^ ((to_u32(h) >> 15) as i32)
}

/// 32-bit FNV-1a (offset basis 0x811c9dc5, prime 0x01000193), as Go's `hash/fnv`
/// `New32a` and librdkafka's `rd_fnv1a` compute it before their sign handling.
///
/// ```
/// assert_eq!(partwise::hash::fnv1a32(b""), 0x811c_9dc5);
/// assert_eq!(partwise::hash::fnv1a32(b"1468509572224"), 0x8000_0000);
/// ```
#[inline]
pub fn fnv1a32(data: &[u8]) -> u32 {
    data.iter().fold(0x811c_9dc5_u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// CRC-32 (IEEE 802.3 / zlib / Go `hash/crc32.ChecksumIEEE`), used by librdkafka's
/// `consistent` partitioners, Sarama's consistent-CRC and kafka-go's CRC32Balancer.
///
/// ```
/// assert_eq!(partwise::hash::crc32(b"123456789"), 0xcbf4_3926);
/// assert_eq!(partwise::hash::crc32(b""), 0);
/// ```
#[inline]
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

const CRC16: Crc<u16> = Crc::<u16>::new(&CRC_16_XMODEM);

/// CRC-16/XMODEM (poly 0x1021, init 0, no reflection), Redis Cluster's `crc16`.
///
/// ```
/// assert_eq!(partwise::hash::crc16_xmodem(b"123456789"), 0x31c3);
/// ```
#[inline]
pub fn crc16_xmodem(data: &[u8]) -> u16 {
    CRC16.checksum(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur2_matches_kafka_utils_test() {
        // apache/kafka UtilsTest.testMurmur2.
        let cases: [(&[u8], i32); 6] = [
            (b"21", -973932308),
            (b"foobar", -790332482),
            (b"a-little-bit-long-string", -985981536),
            (b"a-little-bit-longer-string", -1486304829),
            (
                b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58897971,
            ),
            (b"abc", 479470107),
        ];
        for (key, want) in cases {
            assert_eq!(murmur2(key) as i32, want, "{key:?}");
        }
    }

    #[test]
    fn legacy_differs_from_java_for_empty_key() {
        assert_eq!(murmur2(b""), 275646681);
        assert_eq!(kafkajs_legacy_murmur2(b""), 275646684);
    }
}
