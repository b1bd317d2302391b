//! Routing many keys at once with murmur2, the hash of the Java-compatible clients.
//!
//! One murmur2 is a chain of dependent multiplications, so a loop over keys one
//! at a time waits on multiplier latency. Here eight keys of equal length are
//! hashed in lockstep (lanes of `[u32; 8]`), which the compiler turns into AVX2
//! vector multiplies when the CPU has them; mixed-length groups fall back to
//! hashing one key at a time. The partition is then taken with
//! [`PartitionCount::modulo`], which needs no division.

use crate::count::PartitionCount;
use crate::hash::{murmur2, murmur2_mix};

const LANES: usize = 8;
const SEED: u32 = 0x9747_b28c;
const M: u32 = 0x5bd1_e995;

/// murmur2 of many keys: `out[i] = murmur2(keys[i])`.
///
/// # Panics
/// When `out` is shorter than `keys`.
pub fn murmur2_many(keys: &[&[u8]], out: &mut [u32]) {
    assert!(out.len() >= keys.len(), "output shorter than input");
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked on the line above.
        unsafe { murmur2_many_avx2(keys, out) };
        return;
    }
    murmur2_many_lanes(keys, out);
}

/// `(murmur2(keys[i]) & 0x7fffffff) % n` for every key.
pub(crate) fn murmur2_partitions(keys: &[&[u8]], n: PartitionCount, out: &mut [u32]) {
    murmur2_many(keys, out);
    for h in &mut out[..keys.len()] {
        *h = n.modulo(*h & 0x7fff_ffff);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn murmur2_many_avx2(keys: &[&[u8]], out: &mut [u32]) {
    murmur2_many_lanes(keys, out);
}

#[inline(always)]
fn murmur2_many_lanes(keys: &[&[u8]], out: &mut [u32]) {
    let mut groups = keys.chunks_exact(LANES);
    let mut outs = out.chunks_exact_mut(LANES);
    for (ks, os) in (&mut groups).zip(&mut outs) {
        let ks: &[&[u8]; LANES] = ks.try_into().expect("chunks_exact gives LANES");
        let len = ks[0].len();
        if ks.iter().all(|k| k.len() == len) {
            os.copy_from_slice(&murmur2_lanes(ks, len));
        } else {
            for (k, o) in ks.iter().zip(os.iter_mut()) {
                *o = murmur2(k);
            }
        }
    }
    for (k, o) in groups.remainder().iter().zip(outs.into_remainder()) {
        *o = murmur2(k);
    }
}

/// murmur2 of eight keys that all have length `len`.
#[inline(always)]
fn murmur2_lanes(ks: &[&[u8]; LANES], len: usize) -> [u32; LANES] {
    // Slicing every key to `len` up front lets the compiler drop bounds checks
    // from the block loop below.
    let ks: [&[u8]; LANES] = std::array::from_fn(|i| &ks[i][..len]);
    let mut h = [SEED ^ (len as u32); LANES];
    let blocks = len / 4;
    for b in 0..blocks {
        let mut k = [0u32; LANES];
        for i in 0..LANES {
            let w = &ks[i][4 * b..4 * b + 4];
            k[i] = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        }
        for i in 0..LANES {
            h[i] = murmur2_mix(h[i], k[i]);
        }
    }
    let base = blocks * 4;
    let rem = len - base;
    if rem > 0 {
        for i in 0..LANES {
            let mut t = 0u32;
            for (j, &byte) in ks[i][base..].iter().enumerate() {
                t |= u32::from(byte) << (8 * j);
            }
            h[i] = (h[i] ^ t).wrapping_mul(M);
        }
    }
    for x in &mut h {
        *x ^= *x >> 13;
        *x = x.wrapping_mul(M);
        *x ^= *x >> 15;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn batch_equals_scalar(keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..40)) {
            let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
            let mut out = vec![0; refs.len()];
            murmur2_many(&refs, &mut out);
            for (k, h) in refs.iter().zip(&out) {
                prop_assert_eq!(*h, murmur2(k));
            }
            let mut lanes = vec![0; refs.len()];
            murmur2_many_lanes(&refs, &mut lanes);
            prop_assert_eq!(&lanes, &out);
        }

        #[test]
        fn equal_length_groups(len in 0usize..70, seed: u64) {
            // Eight or more keys of one length take the lockstep path.
            let keys: Vec<Vec<u8>> = (0..19u64)
                .map(|i| (0..len).map(|j| (seed.wrapping_mul(i + 1).rotate_left(j as u32) >> 7) as u8).collect())
                .collect();
            let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
            let mut out = vec![0; refs.len()];
            murmur2_many(&refs, &mut out);
            for (k, h) in refs.iter().zip(&out) {
                prop_assert_eq!(*h, murmur2(k));
            }
        }
    }
}
