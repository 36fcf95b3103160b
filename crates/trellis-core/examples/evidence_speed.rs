//! Times the fit of λ by exact evidence under the Ginkgo generator's density on the Pythia
//! parton set (as `lambda_fits` fits it: λ in [0.01, 50], jets of at most 16 partons) in one
//! run, both ways: every `log Z` by the split loop (the fit as it ran before the eight lanes)
//! and as the library runs it (the eight lanes' log-sum-exp alone,
//! `FullTrellis::log_partition_only`, on a vector instruction set). Then one evaluation of the
//! objective (`sum log Z` over the jets at the fitted λ) three ways: the split loop, the full
//! lane build (MAP, counts and all) and the log-sum-exp alone.
//!
//! `cargo run --release -p trellis-core --example evidence_speed [--no-fit] [JETS.json]`
//! (`--no-fit`: the evaluations alone, at the rate fitted on the committed set); with
//! `TRELLIS_LAB_SIMD=scalar` every path runs as on a CPU without AVX2 (the dispatch then takes
//! the split loop, so the fit's time there is the split loop's).

use std::path::PathBuf;
use std::time::Instant;
use trellis_core::data::ginkgo::JetDataset;
use trellis_core::exact::{
    fit_lambda_by_evidence_split_loop, fit_lambda_by_evidence_with, FullTrellis, Likelihood,
};
use trellis_core::model::{GinkgoGeneratorModel, GinkgoModel};

const LO: f64 = 0.01;
const HI: f64 = 50.0;
const MAX_LEAVES: usize = 16;
/// The fitted rate on the committed parton set (for `--no-fit`).
const FITTED: f64 = 10.024889;
/// Runs of each evaluation.
const REPS: usize = 5;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let no_fit = args.iter().any(|a| a == "--no-fit");
    let path = args
        .iter()
        .find(|a| !a.starts_with("--"))
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
    let lambda = if no_fit {
        FITTED
    } else {
        let t0 = Instant::now();
        let old =
            fit_lambda_by_evidence_split_loop(Likelihood::Generator, &jets, LO, HI, MAX_LEAVES)
                .expect("the fit");
        let old_s = t0.elapsed().as_secs_f64();
        let t0 = Instant::now();
        let fit = fit_lambda_by_evidence_with(Likelihood::Generator, &jets, LO, HI, MAX_LEAVES)
            .expect("the fit");
        let fit_s = t0.elapsed().as_secs_f64();
        println!(
            "fit by the split loop: lambda {:.12} in {old_s:.2} s ({} evaluations)",
            old.lambda, old.evaluations
        );
        println!(
            "fit as the library runs it: lambda {:.12} in {fit_s:.2} s ({} evaluations): {:.2}x",
            fit.lambda,
            fit.evaluations,
            old_s / fit_s
        );
        fit.lambda
    };
    let models: Vec<GinkgoGeneratorModel> = jets
        .iter()
        .map(|j| GinkgoGeneratorModel::new(j.leaves().to_vec(), j.t_cut(), lambda).unwrap())
        .collect();
    let evidence = |how: u8| {
        let t0 = Instant::now();
        let sum: f64 = models
            .iter()
            .map(|m| {
                let lz = match how {
                    0 => FullTrellis::build_split_loop(m, MAX_LEAVES)
                        .expect("a trellis")
                        .log_partition(),
                    1 => FullTrellis::build_with_limit(m, MAX_LEAVES)
                        .expect("a trellis")
                        .log_partition(),
                    _ => FullTrellis::log_partition_only(m, MAX_LEAVES).expect("a trellis"),
                };
                if lz.is_finite() {
                    lz
                } else {
                    0.0
                }
            })
            .sum();
        (t0.elapsed().as_secs_f64(), sum)
    };
    // Interleaved, REPS times each; the medians.
    let mut runs: [Vec<(f64, f64)>; 3] = Default::default();
    for _ in 0..REPS {
        for (how, r) in runs.iter_mut().enumerate() {
            r.push(evidence(how as u8));
        }
    }
    let median = |r: &mut Vec<(f64, f64)>| {
        r.sort_by(|a, b| a.0.total_cmp(&b.0));
        r[r.len() / 2]
    };
    let [split, full, only] = &mut runs;
    let ((split_s, split_sum), (full_s, full_sum), (only_s, only_sum)) =
        (median(split), median(full), median(only));
    println!(
        "one evaluation of sum log Z at the fitted lambda (median of {REPS}, interleaved): split \
         loop {split_s:.3} s (sum {split_sum:.9}); full build, dispatched {full_s:.3} s (sum \
         {full_sum:.9}): {:.2}x; log Z alone, dispatched {only_s:.3} s (sum {only_sum:.9}): \
         {:.2}x",
        split_s / full_s,
        split_s / only_s
    );
    assert!((split_sum - full_sum).abs() <= 1e-9 * split_sum.abs().max(1.0));
    assert_eq!(full_sum.to_bits(), only_sum.to_bits());
}
