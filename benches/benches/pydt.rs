//! Criterion benchmarks of the PYDT collapsed sampler, one core: detach/reattach proposals on
//! N = 100 points in D = 10 (Gaussian, issue goal ≥ 5,000 proposals/s) and on animals33
//! (33 × 102 binary features, probit), plus one slice-sampling sweep over the divergence times;
//! and the EM side on animals33 (probit through EP): one EM fit of a fixed tree's times, and the
//! whole greedy search to the MAP tree (sequential start + 100 search steps, both cores; issue
//! goal < 10 s).
//!
//! Run: `cargo bench -p trellis-lab-benches --bench pydt`.

use criterion::{criterion_group, criterion_main, Criterion};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::hint::black_box;
use std::path::Path;
use trellis_core::data::matrix::PointMatrix;
use trellis_core::pydt::generate::{sample_leaves, sample_tree};
use trellis_core::pydt::mcmc::{Data, Hypers, Sampler, Settings};
use trellis_core::pydt::probit::Binary;
use trellis_core::pydt::search::{fit_times, greedy_search, Observations, SearchSettings};
use trellis_core::pydt::{Leaves, Params};

fn gaussian_sampler() -> Sampler {
    let mut rng = StdRng::seed_from_u64(1);
    let truth = Params::new(1.0, 0.3, 1.0, 1.0).unwrap();
    let x = sample_leaves(&sample_tree(100, &truth, &mut rng), 10, 1.0, &mut rng);
    let start = sample_tree(100, &Params::ddt(1.0, 1.0).unwrap(), &mut rng);
    let settings = Settings {
        hypers: Hypers::fixed(),
        ..Settings::default()
    };
    Sampler::new(
        start,
        truth,
        Data::Gaussian(Leaves::exact(&x).unwrap()),
        settings,
    )
    .unwrap()
}

fn animals() -> Binary {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/animals33/animals33_features.tsv");
    let m = PointMatrix::animals33(&path).unwrap();
    let rows: Vec<Vec<f64>> = (0..m.n_points()).map(|i| m.row(i).to_vec()).collect();
    Binary::from_rows(&rows).unwrap()
}

fn animals_sampler() -> Sampler {
    let binary = animals();
    let mut rng = StdRng::seed_from_u64(2);
    let start = sample_tree(binary.n, &Params::ddt(1.0, 1.0).unwrap(), &mut rng);
    let aux = binary.initial_leaves();
    let settings = Settings {
        hypers: Hypers::fixed(),
        ..Settings::default()
    };
    Sampler::new(
        start,
        Params::new(1.0, 0.3, 1.0, 1.0).unwrap(),
        Data::Probit { binary, aux },
        settings,
    )
    .unwrap()
}

fn proposals(c: &mut Criterion) {
    let mut g = c.benchmark_group("pydt_detach_reattach");
    for (name, mut s) in [
        ("gaussian_n100_d10", gaussian_sampler()),
        ("animals33_probit", animals_sampler()),
    ] {
        let mut rng = StdRng::seed_from_u64(3);
        g.bench_function(name, |b| b.iter(|| black_box(s.detach_reattach(&mut rng))));
    }
    g.finish();
    let mut g = c.benchmark_group("pydt_time_sweep");
    g.sample_size(20);
    for (name, mut s) in [
        ("gaussian_n100_d10", gaussian_sampler()),
        ("animals33_probit", animals_sampler()),
    ] {
        let mut rng = StdRng::seed_from_u64(4);
        g.bench_function(name, |b| b.iter(|| s.resample_times(&mut rng).unwrap()));
    }
    g.finish();
}

fn em(c: &mut Criterion) {
    let data = Observations::Probit(animals());
    let mut g = c.benchmark_group("pydt_em_animals33");
    g.sample_size(10);
    for (name, params) in [
        ("ddt", Params::ddt(1.0, 1.0).unwrap()),
        ("pydt", Params::new(1.0, 0.5, 1.0, 1.0).unwrap()),
    ] {
        let tree = sample_tree(33, &params, &mut StdRng::seed_from_u64(5));
        let settings = SearchSettings::default();
        g.bench_function(format!("fit_times_{name}"), |b| {
            b.iter(|| {
                black_box(
                    fit_times(&tree, &data, &params, &settings)
                        .unwrap()
                        .objective,
                )
            })
        });
        g.bench_function(format!("search_100_steps_{name}"), |b| {
            b.iter(|| {
                let mut rng = StdRng::seed_from_u64(6);
                black_box(
                    greedy_search(&data, &params, &settings, &mut rng)
                        .unwrap()
                        .objective,
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, proposals, em);
criterion_main!(benches);
