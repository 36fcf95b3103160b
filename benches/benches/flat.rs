//! Criterion benchmarks of the flat cluster trellis: log Z + MAP + all pairwise marginals for
//! random signed affinities at N = 9 to 16, with a same-run baseline (enumerating all Bell(9)
//! = 21,147 clusterings at N = 9). N = 20 is timed by `cargo run --release --example
//! flat_speed` (one run; criterion's minimum of 10 samples would take minutes).
//!
//! Run: `cargo bench -p trellis-lab-benches --bench flat`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::hint::black_box;
use trellis_lab::flat::enumerate::brute_force;
use trellis_lab::flat::{FlatTrellis, PairwiseAffinity, PerturbAndMap};
use trellis_lab::model::WeightMatrix;

fn model(n: usize) -> PairwiseAffinity {
    let mut rng = StdRng::seed_from_u64(n as u64);
    let mut rows = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let v = 2.0 * rng.random::<f64>() - 1.0;
            rows[i][j] = v;
            rows[j][i] = v;
        }
    }
    PairwiseAffinity::new(WeightMatrix::new(rows).expect("symmetric"))
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
        b.iter(|| black_box(brute_force(black_box(&m)).log_z))
    });
    let m = model(11);
    g.bench_function("perturb_and_map_100_draws_11", |b| {
        b.iter(|| black_box(PerturbAndMap::new(100, 1).pairwise_marginals(&m).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, flat_trellis);
criterion_main!(benches);
