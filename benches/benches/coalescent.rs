//! Criterion benchmarks of the Kingman-coalescent methods, one core each (`parallel = false`),
//! on Henao & Lucas's synthetic settings D1 = {32, 32} and D2 = {64, 64} with M = 100 particles
//! and HL's normalisers (their Table 1 runtimes: D1 POST-POST 18.65 s, MPOST1 2.29 s, SMC1 3.76 s,
//! MPOST2 1.98 s; D2 145 s, 10.8 s, 13.9 s, 6.1 s), and on one USPS subset of 500 images
//! (MPOST2 with 10 particles, one SMC pass; MGREEDY; average linkage on Euclidean distances).
//!
//! Run: `cargo bench -p trellis-lab-benches --bench coalescent`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use std::path::Path;
use trellis_core::coalescent::covariance::{Covariance, Jitter, Kernel};
use trellis_core::coalescent::generator::{generate, hl_synthetic_covariance};
use trellis_core::coalescent::gig::WeightMode;
use trellis_core::coalescent::linkage::{linkage_history, Linkage};
use trellis_core::coalescent::method::{fit, Method, MethodSettings};
use trellis_core::data::matrix::PointMatrix;

fn settings(particles: usize) -> MethodSettings {
    MethodSettings {
        particles,
        weight_mode: WeightMode::PaperFaithful,
        resample_threshold: 0.5,
        parallel: false,
    }
}

fn synthetic(c: &mut Criterion) {
    let mut g = c.benchmark_group("coalescent_synthetic");
    g.sample_size(10);
    for (name, n) in [("D1", 32usize), ("D2", 64)] {
        let cov = hl_synthetic_covariance(n, 1e-2);
        let (_, x) = generate(n, &cov, 1).unwrap();
        let w = cov.whitening().unwrap();
        let xw = w.whiten_rows(&x).unwrap();
        for m in [
            Method::PostPost,
            Method::Mpost1,
            Method::Smc1,
            Method::Mpost2,
            Method::Mgreedy,
        ] {
            if m == Method::PostPost && n > 32 {
                continue; // seconds per run; timed by configs/coalescent_structure.toml
            }
            let s = settings(100);
            g.bench_with_input(BenchmarkId::new(m.name(), name), &xw, |b, xw| {
                b.iter(|| black_box(fit(m, black_box(xw), w.ln_det_half(), &s, 7).unwrap()))
            });
        }
    }
    g.finish();
}

/// 50 images per digit from the USPS training file.
fn usps_subset() -> Vec<Vec<f64>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/usps/usps_train.txt");
    let m = PointMatrix::usps(&path).unwrap();
    let labels = m.labels.clone().unwrap();
    let mut out = Vec::new();
    for digit in 0..10 {
        let rows = (0..m.n_points()).filter(|&i| labels[i] == digit.to_string());
        out.extend(rows.take(50).map(|i| m.row(i).to_vec()));
    }
    out
}

fn usps(c: &mut Criterion) {
    let x = usps_subset();
    let cov = Covariance::new(Kernel::Matern32Grid {
        width: 16,
        height: 16,
        ell_x: 2.0,
        ell_y: 2.0,
        noise: 0.1,
    })
    .with_jitter(Jitter::RelativeTrace(1e-10));
    let w = cov.whitening().unwrap();
    let xw = w.whiten_rows(&x).unwrap();
    let mut g = c.benchmark_group("usps_500");
    g.sample_size(10);
    g.bench_function("mpost2_10_particles_one_pass", |b| {
        b.iter(|| black_box(fit(Method::Mpost2, &xw, w.ln_det_half(), &settings(10), 3).unwrap()))
    });
    g.bench_function("mgreedy", |b| {
        b.iter(|| black_box(fit(Method::Mgreedy, &xw, w.ln_det_half(), &settings(1), 3).unwrap()))
    });
    g.bench_function("average_linkage_kodama", |b| {
        b.iter(|| black_box(linkage_history(black_box(&x), Linkage::Average).unwrap()))
    });
    g.bench_function("whitening_matern_256", |b| {
        b.iter(|| {
            let w = cov.whitening().unwrap();
            black_box(w.whiten_rows(&x).unwrap())
        })
    });
    g.finish();
}

criterion_group!(benches, synthetic, usps);
criterion_main!(benches);
