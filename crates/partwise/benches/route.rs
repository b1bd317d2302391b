//! Routing throughput per partitioner and key length (8, 16, 64, 1000 bytes).
//!
//! `cargo bench -p partwise --bench route` runs everything;
//! `cargo bench -p partwise --bench route -- 'place_batch/java/16'` runs one case.
//! Throughput is reported in keys per second (criterion's "elem/s").

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use partwise::{hash, PartitionCount, Partitioner};
use std::time::Duration;

const KEYS: usize = 4096;

/// Distinct keys of one length, packed in one buffer as a producer's batch would be.
fn keys(len: usize) -> Vec<Vec<u8>> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    (0..KEYS)
        .map(|_| {
            (0..len)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    b'a' + ((state >> 59) as u8 % 26)
                })
                .collect()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let n = PartitionCount::new(12).unwrap();
    let mut out = vec![0u32; KEYS];
    for len in [8usize, 16, 64, 1000] {
        let owned = keys(len);
        let refs: Vec<&[u8]> = owned.iter().map(|k| k.as_slice()).collect();

        let mut g = c.benchmark_group("place_batch");
        g.throughput(Throughput::Elements(KEYS as u64));
        for p in Partitioner::all() {
            g.bench_with_input(BenchmarkId::new(p.spec(), len), &refs, |b, refs| {
                b.iter(|| {
                    p.place_batch(black_box(refs), n, &mut out);
                    black_box(&out);
                })
            });
        }
        g.finish();

        // The one-key-at-a-time paths, for comparison with the batch path.
        let mut g = c.benchmark_group("one_at_a_time");
        g.throughput(Throughput::Elements(KEYS as u64));
        let java: Partitioner = "java".parse().unwrap();
        g.bench_with_input(BenchmarkId::new("java_place", len), &refs, |b, refs| {
            b.iter(|| {
                for (k, o) in refs.iter().zip(out.iter_mut()) {
                    *o = java.place(Some(black_box(k)), n).partition().unwrap();
                }
                black_box(&out);
            })
        });
        g.bench_with_input(BenchmarkId::new("murmur2_mod", len), &refs, |b, refs| {
            b.iter(|| {
                for (k, o) in refs.iter().zip(out.iter_mut()) {
                    *o = (hash::murmur2(black_box(k)) & 0x7fff_ffff) % black_box(12);
                }
                black_box(&out);
            })
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1200))
        .sample_size(20);
    targets = bench
}
criterion_main!(benches);
