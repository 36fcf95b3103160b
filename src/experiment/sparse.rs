//! Sparse trellises against their sparsity (Cluster Trellis paper, Figure 7).
//!
//! For every budget of seed trees, two sparse trellises are built once on leaf-index sets and
//! then run on every test jet (all with the same N; Ginkgo leaves in the generator's depth-first
//! order, so index sets carry over from one jet to another):
//! - *simulator trellis*: the generator's trees of `budget` simulated jets with N leaves;
//! - *beam-search trellis*: the trees of the final beams of beam searches on simulated jets
//!   with N leaves (training jets, not the test jets), until `budget` trees are collected.
//!
//! Reported per trellis: its sparsity index (encoded trees over `(2N-3)!!`) and the mean over the
//! test jets of its MAP log-likelihood minus greedy's, beside the exact trellis and beam search.

use super::chart::{save_chart, LineChart, LineSeries};
use super::config::{Config, LeafOrder};
use super::jets::{load_jets, mean_std};
use super::table::Table;
use super::{Manifest, Staging};
use crate::data::ginkgo::{generate_dataset, Jet};
use crate::exact::{FullTrellis, SparseTrellis};
use crate::search::{beam_search_all, beam_search_with, default_beam_size, greedy, Dedup};
use crate::tree::Tree;
use anyhow::{bail, Result};
use rayon::prelude::*;

/// One sparse trellis's results over the test jets.
struct Point {
    builder: &'static str,
    budget: usize,
    n_vertices: usize,
    sparsity: f64,
    mean: f64,
    std: f64,
    n_finite: usize,
}

/// Runs the sparse-trellis experiment of `cfg` into `staging`.
pub fn run(cfg: &Config, staging: &Staging, manifest: &mut Manifest) -> Result<()> {
    let sc = cfg.sparse.as_ref().expect("checked by Config");
    let order = |j: &Jet| match sc.leaf_order {
        LeafOrder::Generator => j.clone(),
        LeafOrder::Energy => j.sorted_by_energy(),
    };
    let mut ds = load_jets(cfg)?;
    ds.jets = ds.jets.iter().map(order).collect();
    let n = ds.jets[0].n_leaves;
    if ds.jets.iter().any(|j| j.n_leaves != n) {
        bail!("kind = \"sparse\" needs test jets that all have the same number of leaves (set data.min_leaves = data.max_leaves)");
    }
    let max_budget = *sc.budgets.iter().max().unwrap();
    let params = cfg.generator_params_for(&ds.jets[0]);
    let seed = cfg.experiment.seed;
    // Seeds: simulated jets with N leaves (one RNG stream for the simulator trees, another for
    // the beam-search training jets).
    let sim = generate_dataset(
        &params,
        max_budget,
        n,
        n,
        seed,
        1000 * max_budget.max(100),
        "sim",
    )?;
    let sim_trees: Vec<Tree> = sim
        .jets
        .iter()
        .map(|j| order(j).truth().expect("generated"))
        .collect();
    let beam_size = sc.seed_beam_size.unwrap_or_else(|| default_beam_size(n));
    let n_train = max_budget.div_ceil(beam_size).max(1);
    let train = generate_dataset(
        &params,
        n_train,
        n,
        n,
        seed ^ 0x5eed,
        1000 * n_train.max(100),
        "train",
    )?;
    let bs_trees: Vec<Tree> = train
        .jets
        .par_iter()
        .map(|j| {
            beam_search_all(&order(j).model(), beam_size, Dedup::Clusters)
                .into_iter()
                .map(|f| f.tree)
                .collect::<Vec<_>>()
        })
        .flatten()
        .collect();

    // Baselines on the test jets.
    let base: Vec<(f64, f64, f64)> = ds
        .jets
        .par_iter()
        .map(|j| -> Result<(f64, f64, f64)> {
            let m = j.model();
            let g = greedy(&m).log_likelihood;
            let b = beam_search_with(&m, default_beam_size(n), Dedup::Clusters).log_likelihood;
            let t = FullTrellis::build_with_limit(&m, cfg.algorithms.max_exact_leaves)?
                .map_log_likelihood();
            Ok((g, b, t))
        })
        .collect::<Result<_>>()?;
    let exact_gain = mean_std(base.iter().map(|x| x.2 - x.0));
    let beam_gain = mean_std(base.iter().map(|x| x.1 - x.0));

    let mut points = Vec::new();
    for (builder, seeds) in [("simulator", &sim_trees), ("beam_search", &bs_trees)] {
        for &budget in &sc.budgets {
            let k = budget.min(seeds.len());
            let sp = SparseTrellis::from_trees(n, &seeds[..k])?;
            let gains: Vec<f64> = ds
                .jets
                .par_iter()
                .zip(&base)
                .map(|(j, b)| sp.run(&j.model()).map_log_likelihood() - b.0)
                .collect();
            let finite = gains.iter().filter(|g| g.is_finite()).count();
            let st = mean_std(gains.iter().copied());
            points.push(Point {
                builder,
                budget: k,
                n_vertices: sp.n_vertices(),
                sparsity: sp.sparsity_index(),
                mean: st.mean,
                std: st.std,
                n_finite: finite,
            });
        }
    }

    let col = |f: &dyn Fn(&Point) -> f64| points.iter().map(|p| Some(f(p))).collect::<Vec<_>>();
    Table::new()
        .str(
            "builder",
            &points.iter().map(|p| p.builder).collect::<Vec<_>>(),
        )
        .u64(
            "seed_trees",
            &points
                .iter()
                .map(|p| Some(p.budget as u64))
                .collect::<Vec<_>>(),
        )
        .u64(
            "vertices",
            &points
                .iter()
                .map(|p| Some(p.n_vertices as u64))
                .collect::<Vec<_>>(),
        )
        .f64("sparsity_index", &col(&|p| p.sparsity))
        // Over the jets where the trellis encodes a finite-likelihood tree (see the next column).
        .f64("mean_map_minus_greedy", &col(&|p| p.mean))
        .f64("std_map_minus_greedy", &col(&|p| p.std))
        .u64(
            "jets_with_finite_map",
            &points
                .iter()
                .map(|p| Some(p.n_finite as u64))
                .collect::<Vec<_>>(),
        )
        .f64("exact_trellis_minus_greedy", &col(&|_| exact_gain.mean))
        .f64("beam_search_minus_greedy", &col(&|_| beam_gain.mean))
        .write_parquet(&staging.path("sparse.parquet"))?;

    let n_jets = ds.jets.len();
    let xs: Vec<f64> = points
        .iter()
        .filter(|p| p.n_finite == n_jets)
        .map(|p| p.sparsity.log10())
        .collect();
    let (x0, x1) = (
        xs.iter().cloned().fold(f64::INFINITY, f64::min).min(0.0),
        xs.iter()
            .cloned()
            .fold(f64::NEG_INFINITY, f64::max)
            .max(0.0),
    );
    let line = |name: &str, y: f64| LineSeries {
        name: name.into(),
        points: vec![(x0, y), (x1, y)],
        dashed: true,
        markers: false,
    };
    let curve = |builder: &str, name: &str| LineSeries {
        name: name.into(),
        points: points
            .iter()
            // Only trellises that encode a finite-likelihood tree for every test jet.
            .filter(|p| p.builder == builder && p.n_finite == n_jets)
            .map(|p| (p.sparsity.log10(), p.mean))
            .collect(),
        dashed: false,
        markers: true,
    };
    let chart = LineChart {
        series: vec![
            curve("simulator", "Sim. trellis"),
            curve("beam_search", "BS trellis"),
            line("exact trellis", exact_gain.mean),
            line("beam search", beam_gain.mean),
            line("greedy", 0.0),
        ],
        title: format!(
            "Figure 7: sparse trellis MAP vs sparsity ({} test jets, N = {n}, leaves by {})",
            ds.jets.len(),
            match sc.leaf_order {
                LeafOrder::Generator => "generator order",
                LeafOrder::Energy => "energy",
            }
        ),
        x_label: "sparsity index (log10 of encoded trees / (2N−3)!!)".into(),
        y_label: "mean MAP log-likelihood − greedy".into(),
        log_y: false,
        integer_x: false,
    };
    save_chart(&staging.path("fig7_sparse_trellis"), 1000, 750, &chart)?;
    manifest.set("seed_beam_size", beam_size);
    manifest.set("leaf_order", sc.leaf_order);
    manifest.set("n_test_jets", ds.jets.len());
    Ok(())
}
