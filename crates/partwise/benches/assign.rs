//! Assignors at scale: 1,000 members, 10 topics x 10,000 partitions, from
//! scratch and after one member leaves (previous assignment given).
//! Prints the partitions each assignor moves when the member leaves.

use criterion::{criterion_group, criterion_main, Criterion};
use partwise::assign::{Assignor, Group, Member, Topic};
use std::hint::black_box;

const MEMBERS: usize = 1_000;
const TOPICS: usize = 10;
const PARTITIONS: u32 = 10_000;

fn scratch() -> Group {
    let names: Vec<String> = (0..TOPICS).map(|t| format!("topic-{t}")).collect();
    Group::new(
        (0..MEMBERS)
            .map(|m| Member::new(format!("m{m:04}"), names.iter().cloned()))
            .collect(),
        names
            .iter()
            .map(|n| Topic::new(n.clone(), PARTITIONS))
            .collect(),
    )
}

/// The group after `assignor`'s from-scratch generation, with member 500 gone.
fn after_leave(assignor: Assignor) -> (Group, std::collections::HashMap<(String, u32), String>) {
    let mut g = scratch();
    let first = assignor.assign(&g).unwrap();
    let owner = first.owner_map(&g);
    for (m, list) in g.members.iter_mut().zip(&first.partitions) {
        m.owned = list.clone();
        m.generation = Some(1);
    }
    g.members.remove(MEMBERS / 2);
    (g, owner)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("assign_1000x100000");
    group.sample_size(10);
    for assignor in [
        Assignor::Copartitioned,
        Assignor::JavaRange,
        Assignor::JavaSticky,
    ] {
        let g = scratch();
        group.bench_function(format!("{assignor}/scratch"), |b| {
            b.iter(|| assignor.assign(black_box(&g)).unwrap())
        });
        let (left, owner) = after_leave(assignor);
        let moved = assignor.assign(&left).unwrap().moves_from(&left, &owner);
        eprintln!("{assignor}: one member leaves -> {moved} partitions move");
        group.bench_function(format!("{assignor}/one-leaves"), |b| {
            b.iter(|| assignor.assign(black_box(&left)).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
