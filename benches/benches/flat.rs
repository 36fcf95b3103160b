//! Criterion benchmarks of the flat cluster trellis: log Z + MAP + all pairwise marginals for
//! random signed affinities at N = 9 to 16, with a same-run baseline (enumerating all Bell(9)
//! = 21,147 clusterings at N = 9). N = 20 is timed by `cargo run --release --example
//! flat_speed` (one run; criterion's minimum of 10 samples would take minutes).
//!
//! Run: `cargo bench -p trellis-lab-benches --bench flat`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use trellis_core::data::graphs::signed_uniform_weights;
use trellis_core::flat::enumerate::brute_force;
use trellis_core::flat::{FlatTrellis, PairwiseAffinity, PerturbAndMap};

fn model(n: usize) -> PairwiseAffinity {
    PairwiseAffinity::new(signed_uniform_weights(n, 1.0, n as u64).unwrap())
}

fn flat_trellis(c: &mut Criterion) {
    let mut g = c.benchmark_group("flat_trellis");
    g.sample_size(10);
    for n in [9usize, 12, 14, 16] {
        let m = model(n);
        g.bench_with_input(BenchmarkId::new("logz_map_pairwise", n), &m, |b, m| {
            b.iter(|| {
                let t = FlatTrellis::build(black_box(m)).unwrap();
                black_box((
                    t.log_partition(),
                    t.map_clustering(),
                    t.pairwise_marginals(),
                ))
            })
        });
    }
    let m = model(9);
    g.bench_function("enumerate_all_clusterings_9", |b| {
        b.iter(|| black_box(brute_force(black_box(&m)).unwrap().log_z))
    });
    let m = model(11);
    g.bench_function("perturb_and_map_100_draws_11", |b| {
        b.iter(|| black_box(PerturbAndMap::new(100, 1).pairwise_marginals(&m).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, flat_trellis);
criterion_main!(benches);
