//! Times the fit of λ by exact evidence under the Ginkgo generator's density on the Pythia
//! parton set (as `lambda_fits` fits it: λ in [0.01, 50], jets of at most 16 partons), and
//! side by side in the same run one evaluation of its objective (`sum log Z` over the jets at
//! the fitted λ) by the split loop (the path the generator's density took before its lane
//! kernel) and by the dispatched path (the eight lanes on a vector instruction set).
//!
//! `cargo run --release -p trellis-core --example evidence_speed [JETS.json]`; with
//! `TRELLIS_LAB_SIMD=scalar` every path runs as on a CPU without AVX2 (the dispatch then takes
//! the split loop, so the fit's time there is the split loop's).

use std::path::PathBuf;
use std::time::Instant;
use trellis_core::data::ginkgo::JetDataset;
use trellis_core::exact::{fit_lambda_by_evidence_with, FullTrellis, Likelihood};
use trellis_core::model::{GinkgoGeneratorModel, GinkgoModel};

const LO: f64 = 0.01;
const HI: f64 = 50.0;
const MAX_LEAVES: usize = 16;

fn main() {
    let path = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/pythia/pythia_parton.json")
        });
    let ds = JetDataset::load(&path).expect("a jet set");
    let jets: Vec<GinkgoModel> = ds
        .jets
        .iter()
        .filter(|j| j.leaves.len() <= MAX_LEAVES)
        .map(|j| j.model().expect("a valid jet"))
        .collect();
    let splits: f64 = jets
        .iter()
        .map(|m| {
            let n = m.leaves().len() as i32;
            (3f64.powi(n) + 1.0) / 2.0 - 2f64.powi(n)
        })
        .sum();
    println!(
        "{}: {} jets of at most {MAX_LEAVES} leaves ({splits:.3e} splits per evaluation); \
         instruction set {}, {} threads",
        path.display(),
        jets.len(),
        trellis_core::simd::Isa::detect(),
        rayon::current_num_threads()
    );
    let t0 = Instant::now();
    let fit = fit_lambda_by_evidence_with(Likelihood::Generator, &jets, LO, HI, MAX_LEAVES)
        .expect("the fit");
    let fit_s = t0.elapsed().as_secs_f64();
    println!(
        "fit: lambda {:.6} in {fit_s:.2} s (dispatched path)",
        fit.lambda
    );
    let models: Vec<GinkgoGeneratorModel> = jets
        .iter()
        .map(|j| GinkgoGeneratorModel::new(j.leaves().to_vec(), j.t_cut(), fit.lambda).unwrap())
        .collect();
    let evidence = |split_loop: bool| {
        let t0 = Instant::now();
        let sum: f64 = models
            .iter()
            .map(|m| {
                let t = if split_loop {
                    FullTrellis::build_split_loop(m, MAX_LEAVES)
                } else {
                    FullTrellis::build_with_limit(m, MAX_LEAVES)
                };
                let lz = t.expect("a trellis").log_partition();
                if lz.is_finite() {
                    lz
                } else {
                    0.0
                }
            })
            .sum();
        (t0.elapsed().as_secs_f64(), sum)
    };
    let (split_s, split_sum) = evidence(true);
    let (lanes_s, lanes_sum) = evidence(false);
    println!(
        "one evaluation of sum log Z at the fitted lambda: split loop {split_s:.3} s \
         (sum {split_sum:.9}), dispatched {lanes_s:.3} s (sum {lanes_sum:.9}): {:.2}x",
        split_s / lanes_s
    );
    assert!((split_sum - lanes_sum).abs() <= 1e-9 * split_sum.abs().max(1.0));
}
