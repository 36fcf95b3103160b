//! The sparse-trellis run: seed trees from the simulator and from beam searches on training
//! jets, the greedy, beam-search and exact baselines on the test jets, one sparse trellis per
//! builder and budget; `sparse.parquet`.

use super::{LeafOrder, SparseConfig};
use crate::data::ginkgo::{generate_dataset, Jet};
use crate::exact::SparseTrellis;
use crate::experiment::kind::RunContext;
use crate::experiment::methods::{Method, MethodsSection, Problem};
use crate::experiment::stats::mean_std;
use crate::experiment::table::Table;
use crate::search::{beam_search_all, default_beam_size, Dedup};
use crate::tree::Tree;
use anyhow::{bail, Context, Result};
use rayon::prelude::*;

/// The builders, as `sparse.parquet` names them.
pub const BUILDERS: [&str; 2] = ["simulator", "beam_search"];

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

/// The log-likelihoods of greedy, beam search and the exact MAP on one test jet.
struct Baselines {
    greedy: f64,
    beam: f64,
    exact: f64,
}

fn baselines(jet: &Jet, methods: &MethodsSection) -> Result<Baselines> {
    let name = format!("test jet {:?}", jet.name);
    let model = jet.model().with_context(|| name.clone())?;
    let problem = Problem {
        name: &name,
        model: &model,
        similarities: None,
        truth: None,
    };
    let ll = |m: Method| -> Result<f64> {
        Ok(m.run(&problem, methods)?
            .with_context(|| format!("{} found no tree on {name}", m.display()))?
            .log_likelihood)
    };
    Ok(Baselines {
        greedy: ll(Method::Greedy)?,
        beam: ll(Method::Beam)?,
        exact: ll(Method::Trellis)?,
    })
}

/// Runs the sparse kind.
pub fn run(cfg: &SparseConfig, ctx: &mut RunContext) -> Result<()> {
    let sc = &cfg.sparse;
    let order = |j: &Jet| match sc.leaf_order {
        LeafOrder::Generator => j.clone(),
        LeafOrder::Energy => j.sorted_by_energy(),
    };
    let (mut ds, dropped) = cfg.jets.load(ctx.seed(), &ctx.experiment.name)?;
    crate::experiment::dropped::report(ctx, dropped.as_slice());
    ds.jets = ds.jets.iter().map(order).collect();
    let n = ds.jets[0].n_leaves;
    if ds.jets.iter().any(|j| j.n_leaves != n) {
        bail!("kind = \"sparse\" needs test jets that all have the same number of leaves (set jets.min_leaves = jets.max_leaves)");
    }
    let max_budget = sc.budgets.iter().copied().max().unwrap_or(1);
    let params = cfg.jets.generator_params_for(&ds.jets[0]);
    let seed = ctx.seed();
    // Seeds: simulated jets with N leaves (one RNG stream for the simulator trees, another for
    // the beam-search training jets).
    let simulate = |count: usize, seed: u64, prefix: &str| {
        generate_dataset(&params, count, n, n, seed, 1000 * count.max(100), prefix)
    };
    let sim = simulate(max_budget, seed, "sim")?;
    let sim_trees: Vec<Tree> = sim
        .jets
        .iter()
        .map(|j| order(j).truth().context("a simulated jet has no tree"))
        .collect::<Result<_>>()?;
    let beam_size = sc.seed_beam_size.unwrap_or_else(|| default_beam_size(n));
    let n_train = max_budget.div_ceil(beam_size).max(1);
    let train = simulate(n_train, seed ^ 0x5eed, "train")?;
    let bs_trees: Vec<Vec<Tree>> = train
        .jets
        .par_iter()
        .map(|j| -> Result<Vec<Tree>> {
            let found = beam_search_all(&order(j).model()?, beam_size, Dedup::Clusters)?;
            Ok(found.into_iter().map(|f| f.tree).collect())
        })
        .collect::<Result<_>>()?;
    let bs_trees: Vec<Tree> = bs_trees.into_iter().flatten().collect();

    // Baselines on the test jets.
    let base: Vec<Baselines> = ds
        .jets
        .par_iter()
        .map(|j| baselines(j, &cfg.methods))
        .collect::<Result<_>>()?;
    let exact_gain = mean_std(base.iter().map(|b| b.exact - b.greedy));
    let beam_gain = mean_std(base.iter().map(|b| b.beam - b.greedy));

    let mut points = Vec::new();
    for (builder, seeds) in BUILDERS.into_iter().zip([&sim_trees, &bs_trees]) {
        for &budget in &sc.budgets {
            let k = budget.min(seeds.len());
            let sp = SparseTrellis::from_trees(n, &seeds[..k])?;
            let gains: Vec<f64> = ds
                .jets
                .par_iter()
                .zip(&base)
                .map(|(j, b)| Ok(sp.run(&j.model()?)?.map_log_likelihood() - b.greedy))
                .collect::<Result<_>>()?;
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
    let count = |f: &dyn Fn(&Point) -> usize| {
        points
            .iter()
            .map(|p| Some(f(p) as u64))
            .collect::<Vec<_>>()
    };
    Table::new()
        .str(
            "builder",
            &points.iter().map(|p| p.builder).collect::<Vec<_>>(),
        )
        .u64("seed_trees", &count(&|p| p.budget))
        .u64("vertices", &count(&|p| p.n_vertices))
        .f64("sparsity_index", &col(&|p| p.sparsity))
        // Over the jets where the trellis encodes a finite-likelihood tree (see the next column).
        .f64("mean_map_minus_greedy", &col(&|p| p.mean))
        .f64("std_map_minus_greedy", &col(&|p| p.std))
        .u64("jets_with_finite_map", &count(&|p| p.n_finite))
        .f64("exact_trellis_minus_greedy", &col(&|_| exact_gain.mean))
        .f64("beam_search_minus_greedy", &col(&|_| beam_gain.mean))
        .write_parquet(&ctx.path("sparse.parquet"))?;

    ctx.manifest.set("seed_beam_size", beam_size);
    ctx.manifest.set("leaf_order", sc.leaf_order);
    ctx.manifest.set("n_test_jets", ds.jets.len());
    ctx.manifest.set("n_leaves", n);
    Ok(())
}
