//! Criterion benchmarks of Bayesian hierarchical clustering (issue 54): greedy BHC and greedy
//! BRT on 1,000 points in D = 10 (five Gaussian groups; Normal–Inverse-Wishart, and their signs
//! as bits under Beta–Bernoulli; issue goal: seconds), and the exact recursions beside them
//! (best/average BHC tree over all binary trees, the best rose tree) at N = 16.
//!
//! Run: `cargo bench -p trellis-lab-benches --bench bhc`.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use trellis_core::bhc::exact::best_bhc_tree;
use trellis_core::bhc::rose::best_rose_tree;
use trellis_core::bhc::{bhc_greedy, brt_greedy, BetaBernoulli, DpmEnergy, NormalInverseWishart};
use trellis_core::flat::ClusterEnergy;
use trellis_core::numeric::splitmix64_mix;

/// Five groups in `d` dimensions, standard normal noise (Box–Muller on SplitMix64).
fn points(n: usize, d: usize) -> Vec<Vec<f64>> {
    let u = |k: u64| (splitmix64_mix(k ^ 54) >> 11) as f64 / (1u64 << 53) as f64;
    (0..n)
        .map(|i| {
            (0..d)
                .map(|j| {
                    let k = (i * d + j) as u64;
                    let z = (-2.0 * u(2 * k).max(1e-300).ln()).sqrt()
                        * (std::f64::consts::TAU * u(2 * k + 1)).cos();
                    (i % 5) as f64 * if j % 2 == 0 { 2.0 } else { -1.0 } + z
                })
                .collect()
        })
        .collect()
}

fn greedy(c: &mut Criterion) {
    let x = points(1000, 10);
    let bits: Vec<Vec<f64>> = x
        .iter()
        .map(|r| r.iter().map(|&v| (v > 0.0) as u8 as f64).collect())
        .collect();
    let niw = NormalInverseWishart::from_data(&x, 0.1, 0.25).unwrap();
    let bern = BetaBernoulli::from_data(&bits, 2.0).unwrap();
    let mut g = c.benchmark_group("bhc_greedy_n1000_d10");
    g.sample_size(10);
    g.bench_function("bhc_niw", |b| {
        b.iter(|| black_box(bhc_greedy(&niw, 1.0).unwrap()))
    });
    g.bench_function("bhc_bernoulli", |b| {
        b.iter(|| black_box(bhc_greedy(&bern, 1.0).unwrap()))
    });
    g.bench_function("brt_niw", |b| {
        b.iter(|| black_box(brt_greedy(&niw, 0.5).unwrap()))
    });
    g.finish();
}

fn exact(c: &mut Criterion) {
    let x = points(16, 4);
    let niw = NormalInverseWishart::from_data(&x, 0.1, 0.25).unwrap();
    let table = DpmEnergy::new(&niw, 1.0)
        .unwrap()
        .log_energy_table()
        .unwrap();
    let mut g = c.benchmark_group("bhc_exact_n16");
    g.sample_size(10);
    g.bench_function("best_bhc_tree", |b| {
        b.iter(|| black_box(best_bhc_tree(&table, 16).unwrap()))
    });
    g.bench_function("best_rose_tree", |b| {
        b.iter(|| black_box(best_rose_tree(&niw, 0.5).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, greedy, exact);
criterion_main!(benches);
