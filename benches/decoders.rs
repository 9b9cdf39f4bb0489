//! Criterion benches of the decoders (depfs_core::decode) at n = 12, 25, 50, 100 words, on
//! random dense score matrices, with reusable workspaces as a parser would call them.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use depfs_core::decode::{CleWorkspace, Eisner2Workspace, EisnerWorkspace, KBestWorkspace, MaxMarginals};

const SIZES: [usize; 4] = [12, 25, 50, 100];

/// Deterministic uniform scores in [-1, 1) (SplitMix64).
fn matrix(len: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

fn decoders(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    for &n in &SIZES {
        let n1 = n + 1;
        let scores = matrix(n1 * n1, n as u64);
        group.throughput(Throughput::Elements(1));
        let mut cle = CleWorkspace::new();
        group.bench_with_input(BenchmarkId::new("cle", n), &scores, |b, s| {
            b.iter(|| cle.decode(s, n1, true).expect("random dense scores have a tree"))
        });
        group.bench_with_input(BenchmarkId::new("cle_multi_root", n), &scores, |b, s| {
            b.iter(|| cle.decode(s, n1, false).expect("random dense scores have a tree"))
        });
        let mut eisner = EisnerWorkspace::new();
        group.bench_with_input(BenchmarkId::new("eisner", n), &scores, |b, s| {
            b.iter(|| eisner.decode(s, n1, true).expect("random dense scores have a tree"))
        });
        // Arc max-marginals (inside and outside), whole and within a margin of 1 (the
        // outside pass only from items of trees within it): DynFS's tree margin.
        let mut mm = MaxMarginals::default();
        for (name, delta) in [("max_marginals", f64::INFINITY), ("max_marginals_within_1", 1.0)] {
            group.bench_with_input(BenchmarkId::new(name, n), &scores, |b, s| {
                b.iter(|| mm.compute_within(s, n1, true, delta).expect("random dense scores have a tree"))
            });
        }
        let sib = matrix(n1 * n1 * n1, 1000 + n as u64);
        let mut eisner2 = Eisner2Workspace::new();
        group.bench_with_input(BenchmarkId::new("eisner2", n), &scores, |b, s| {
            b.iter(|| eisner2.decode(s, &sib, n1, true).expect("random dense scores have a tree"))
        });
        let mut kbest = KBestWorkspace::new();
        group.bench_with_input(BenchmarkId::new("eisner_kbest_k10", n), &scores, |b, s| {
            b.iter(|| kbest.decode(s, n1, 10, true).expect("random dense scores have a tree"))
        });
    }
    group.finish();
}

criterion_group!(benches, decoders);
criterion_main!(benches);
