//! `keyset/*`: the key-set operations of the dispatch hot path on random
//! sets: `highestPriorityTypeId` plus the runtime table index.

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use aten::{DispatchKey, DispatchKeySet};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

/// 1024 pseudo-random key sets built from 1 to 6 runtime keys each.
fn random_sets() -> Vec<DispatchKeySet> {
    let runtime: Vec<DispatchKey> = DispatchKeySet::FULL.iter().collect();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..1024)
        .map(|_| {
            let n = 1 + next() % 6;
            (0..n)
                .map(|_| runtime[(next() % runtime.len() as u64) as usize])
                .collect()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let sets = random_sets();
    c.bench_function("keyset/highest_priority_and_table_index", |b| {
        let mut i = 0usize;
        b.iter(|| {
            let ks = black_box(sets[i & 1023]);
            i = i.wrapping_add(1);
            (
                ks.highest_priority_type_id(),
                ks.get_dispatch_table_index_for_dispatch_key_set(),
            )
        })
    });
    c.bench_function("keyset/table_index", |b| {
        let mut i = 0usize;
        b.iter(|| {
            let ks = black_box(sets[i & 1023]);
            i = i.wrapping_add(1);
            ks.get_dispatch_table_index_for_dispatch_key_set()
        })
    });
    c.bench_function("keyset/iterate", |b| {
        let mut i = 0usize;
        b.iter(|| {
            let ks = black_box(sets[i & 1023]);
            i = i.wrapping_add(1);
            ks.iter().count()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
