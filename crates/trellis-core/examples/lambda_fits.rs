//! The rate λ of the Ginkgo model fitted by exact evidence (`sum log Z`) and on truth trees
//! (`sum log p(truth)`), under the paper-era potential and under the generator's own density,
//! on the committed Pythia jets and on generated Ginkgo QCD jets: the fits, their wall times
//! and each objective against λ.
//!
//! `cargo run --release -p trellis-core --example lambda_fits [THREADS]` (default 2 threads;
//! about 15 minutes on a shared 2-core machine).

use std::path::PathBuf;
use std::time::Instant;
use trellis_core::data::ginkgo::{generate_dataset, GinkgoParams, JetDataset};
use trellis_core::exact::{
    evidence_curve, fit_lambda_by_evidence_with, fit_lambda_on_trees_with, tree_curve, LambdaFit,
    Likelihood,
};
use trellis_core::model::GinkgoModel;
use trellis_core::tree::Tree;

const LO: f64 = 0.01;
const HI: f64 = 50.0;
const MAX_LEAVES: usize = 16;
const CURVE: [f64; 12] = [
    0.01, 0.03, 0.1, 0.3, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0,
];

struct Set {
    name: String,
    models: Vec<GinkgoModel>,
    trees: Option<Vec<Tree>>,
}

fn set(name: &str, ds: &JetDataset, max_leaves: usize) -> Set {
    let jets: Vec<_> = ds
        .jets
        .iter()
        .filter(|j| j.leaves.len() <= max_leaves)
        .collect();
    let trees: Option<Vec<Tree>> = jets.iter().map(|j| j.truth()).collect();
    Set {
        name: format!(
            "{name} ({} jets, N {}..={})",
            jets.len(),
            jets.iter().map(|j| j.leaves.len()).min().unwrap(),
            jets.iter().map(|j| j.leaves.len()).max().unwrap()
        ),
        models: jets.iter().map(|j| j.model().unwrap()).collect(),
        trees,
    }
}

fn row(set: &str, what: &str, l: Likelihood, fit: &LambdaFit, seconds: f64) {
    println!(
        "| {set} | {what} | {l:?} | {:.4}{} | {} | {} / {} | {} | {seconds:.1} |",
        fit.lambda,
        if fit.at_bound { " (at bound)" } else { "" },
        if fit.std_error.is_nan() {
            "-".to_string()
        } else {
            format!("{:.4}", fit.std_error)
        },
        fit.jets_used,
        fit.jets_left_out,
        fit.evaluations,
    );
}

fn main() {
    let threads: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("THREADS is a number"))
        .unwrap_or(2);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .unwrap();
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/pythia");
    let load = |f: &str| JetDataset::load(&data.join(f)).unwrap();
    let qcd = GinkgoParams::qcd();
    let sets = [
        set("Pythia parton", &load("pythia_parton.json"), MAX_LEAVES),
        set("Pythia hadron", &load("pythia_hadron.json"), MAX_LEAVES),
        set(
            "Ginkgo QCD, 5..=10 leaves (seed 72)",
            &generate_dataset(&qcd, 300, 5, 10, 72, 1_000_000, "g").unwrap(),
            MAX_LEAVES,
        ),
        // Every jet drawn kept; the evidence skips the few above 14 leaves (P(N > 14) = 6e-4).
        set(
            "Ginkgo QCD, every N (seed 90)",
            &generate_dataset(&qcd, 500, 1, 64, 90, 1_000_000, "g").unwrap(),
            14,
        ),
    ];
    println!("threads {threads}, bounds [{LO}, {HI}]\n");
    for s in &sets {
        // The generator density forbids them: the generator would have split such a leaf.
        let heavy = s
            .models
            .iter()
            .filter(|m| {
                m.leaves()
                    .iter()
                    .any(|p| trellis_core::model::ginkgo::mass2(p) > m.t_cut())
            })
            .count();
        println!("{}: {heavy} jets have a leaf heavier than t_cut", s.name);
    }
    println!();
    println!("| jets | objective | potential | λ̂ | std. error | jets used / left out | evaluations | seconds |");
    println!("| --- | --- | --- | ---: | ---: | --- | ---: | ---: |");
    let mut curves = Vec::new();
    for s in &sets {
        for l in [Likelihood::PaperEra, Likelihood::Generator] {
            let t = Instant::now();
            match fit_lambda_by_evidence_with(l, &s.models, LO, HI, MAX_LEAVES) {
                Ok(fit) => row(&s.name, "Σ log Z", l, &fit, t.elapsed().as_secs_f64()),
                Err(e) => println!("| {} | Σ log Z | {l:?} | {e} |", s.name),
            }
            if let Ok(c) = evidence_curve(l, &s.models, &CURVE, MAX_LEAVES) {
                curves.push((s.name.clone(), "Σ log Z", l, c.objective));
            }
            if let Some(trees) = &s.trees {
                let t = Instant::now();
                match fit_lambda_on_trees_with(l, &s.models, trees, LO, HI) {
                    Ok(fit) => row(
                        &s.name,
                        "Σ log p(truth)",
                        l,
                        &fit,
                        t.elapsed().as_secs_f64(),
                    ),
                    Err(e) => println!("| {} | Σ log p(truth) | {l:?} | {e} |", s.name),
                }
                if let Ok(c) = tree_curve(l, &s.models, trees, &CURVE) {
                    curves.push((s.name.clone(), "Σ log p(truth)", l, c.objective));
                }
            }
        }
    }
    println!("\nEach objective against λ (minus its value at λ = 1.5):\n");
    print!("| jets | objective | potential |");
    for l in CURVE {
        print!(" {l} |");
    }
    println!("\n|{}", " --- |".repeat(3 + CURVE.len()));
    let at = CURVE.iter().position(|&l| l == 1.5).unwrap();
    for (name, what, l, v) in curves {
        print!("| {name} | {what} | {l:?} |");
        for x in &v {
            print!(" {:.1} |", x - v[at]);
        }
        println!();
    }
}
