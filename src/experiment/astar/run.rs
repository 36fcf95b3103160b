//! The astar run: generated jets per N, one journalled job per jet (beam search, greedy, the
//! beam-seeded sparse trellis, A* seeded with their trees, the MAP-only trellis and the full
//! trellis for small enough N); `astar.parquet` and `times.parquet`.

use super::{AstarConfig, AstarSection, BASELINES};
use crate::data::ginkgo::{generate_dataset, Jet};
use crate::exact::{
    astar, AstarOptions, Budget, FullTrellis, GinkgoBound, MapTrellis, SparseTrellis,
};
use crate::experiment::jobs::Mode;
use crate::experiment::kind::RunContext;
use crate::experiment::table::Table;
use crate::model::SplitModel;
use crate::search::{beam_search_all, default_beam_size, greedy, Dedup};
use crate::tree::Tree;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Generator tries per size when `jets.max_tries` is absent.
const DEFAULT_MAX_TRIES: usize = 1_000_000;

/// One jet's results (a journal record).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    n: usize,
    certified: bool,
    stop: String,
    log_likelihood: f64,
    upper_bound: f64,
    iterations: u64,
    clusters_expanded: u64,
    reenumerations: u64,
    splits_evaluated: u64,
    trellis_nodes: u64,
    peak_bytes: u64,
    seconds: f64,
    /// Log-likelihood and seconds of beam search, greedy and the sparse trellis.
    baselines: [(f64, f64); 3],
    /// The full trellis's MAP and seconds (N small enough), else NaN.
    full: (f64, f64),
    /// The MAP-only trellis's MAP, seconds and share of splits scored (N small enough), else
    /// NaN.
    map_trellis: (f64, f64, f64),
}

/// The exact MAP of a jet and what certified it: A* (certified), else the MAP-only trellis,
/// else the full trellis; `None` when nothing did.
fn exact_map(r: &Row) -> Option<(f64, &'static str)> {
    if r.certified {
        Some((r.log_likelihood, "astar"))
    } else if r.map_trellis.0.is_finite() {
        Some((r.map_trellis.0, "map_trellis"))
    } else if r.full.0.is_finite() {
        Some((r.full.0, "full_trellis"))
    } else {
        None
    }
}

fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, f64)> {
    let t0 = Instant::now();
    let v = f()?;
    Ok((v, t0.elapsed().as_secs_f64()))
}

/// How far the MAP can be above A*'s tree: 0 when certified, else `UB − LB`.
fn gap(r: &Row) -> f64 {
    if r.certified {
        0.0
    } else {
        (r.upper_bound - r.log_likelihood).max(0.0)
    }
}

/// Searches one jet.
fn solve(jet: &Jet, s: &AstarSection) -> Result<Row> {
    let m = jet.model()?;
    let n = m.n_leaves();
    let (beams, beam_s) = timed(|| Ok(beam_search_all(&m, default_beam_size(n), Dedup::Clusters)?))?;
    let beam_tree = beams[0].tree.clone();
    let (greedy_tree, greedy_s) = timed(|| Ok(greedy(&m)?.tree))?;
    let (sparse_tree, sparse_s) = timed(|| {
        let sp = SparseTrellis::from_trees(n, beams.iter().map(|f| &f.tree))?;
        let r = sp.run(&m)?;
        Ok(sp.map_tree(&r)?.unwrap_or_else(|| beam_tree.clone()))
    })?;
    let trees: [&Tree; 3] = [&beam_tree, &greedy_tree, &sparse_tree];
    let bound = GinkgoBound::new(&m);
    let opts = AstarOptions {
        budget: Budget {
            max_expansions: s.max_expansions,
            max_splits: None,
            max_bytes: Some((s.max_gib * (1u64 << 30) as f64) as u64),
            max_seconds: Some(s.max_seconds),
        },
        incumbents: trees.iter().map(|&t| t.clone()).collect(),
        beam_size: Some(0),
        greedy: false,
        splits_kept: s.splits_kept,
        ..AstarOptions::default()
    };
    let r = astar(&m, &bound, &opts).with_context(|| format!("A* on {}", jet.name))?;
    let full = if n <= s.full_trellis_max_leaves {
        let (t, secs) = timed(|| Ok(FullTrellis::build_with_limit(&m, s.full_trellis_max_leaves)?))?;
        (t.map_log_likelihood(), secs)
    } else {
        (f64::NAN, f64::NAN)
    };
    let map_trellis = if n <= s.map_trellis_max_leaves {
        let (t, secs) = timed(|| Ok(MapTrellis::build_with_limit(&m, s.map_trellis_max_leaves)?))?;
        let scored = t.splits_scored() as f64 / t.splits_visited().max(1) as f64;
        (t.map_log_likelihood(), secs, scored)
    } else {
        (f64::NAN, f64::NAN, f64::NAN)
    };
    let secs = [beam_s, greedy_s, sparse_s];
    Ok(Row {
        n,
        certified: r.certified,
        stop: r.stop.as_str().to_string(),
        log_likelihood: r.log_likelihood,
        upper_bound: r.upper_bound,
        iterations: r.stats.iterations,
        clusters_expanded: r.stats.clusters_expanded,
        reenumerations: r.stats.reenumerations,
        splits_evaluated: r.stats.splits_evaluated,
        trellis_nodes: r.stats.trellis_nodes,
        peak_bytes: r.stats.peak_bytes,
        seconds: r.stats.seconds,
        baselines: std::array::from_fn(|k| (trees[k].log_likelihood(&m), secs[k])),
        full,
        map_trellis,
    })
}

/// Runs the astar kind.
pub fn run(cfg: &AstarConfig, ctx: &mut RunContext) -> Result<()> {
    let s = &cfg.astar;
    let params = cfg.jets.generator_params();
    let max_tries = cfg.jets.max_tries.unwrap_or(DEFAULT_MAX_TRIES);
    let mut jets: Vec<(usize, Jet)> = Vec::new();
    for &n in &s.sizes {
        let ds = generate_dataset(
            &params,
            s.jets_per_size,
            n,
            n,
            ctx.seed().wrapping_add(n as u64),
            max_tries,
            &format!("n{n}"),
        )
        .with_context(|| format!("generating {} jets with {n} leaves", s.jets_per_size))?;
        jets.extend(ds.jets.into_iter().enumerate());
    }
    let keys: Vec<String> = jets.iter().map(|(k, j)| format!("{}/{k}", j.name)).collect();
    // Warm-up: the smallest jet is solved once, untimed, so that the first timing is not that
    // of a cold process (thread pool start, first allocations, caches), as in the scaling kind.
    if let Some((_, jet)) = jets.iter().min_by_key(|(_, j)| j.n_leaves) {
        drop(solve(jet, s)?);
    }
    let pb = crate::experiment::progress_bar(keys.len() as u64, "jets");
    let done = ctx.jobs.run("jets", &keys, Mode::OneAtATime, |i| {
        let out = solve(&jets[i].1, s);
        pb.inc(1);
        out
    })?;
    pb.finish_and_clear();
    let rows: Vec<&Row> = done.iter().map(|d| &d.value).collect();

    let f = |g: &dyn Fn(&Row) -> f64| rows.iter().map(|r| Some(g(r))).collect::<Vec<_>>();
    let u = |g: &dyn Fn(&Row) -> u64| rows.iter().map(|r| Some(g(r))).collect::<Vec<_>>();
    let mut table = Table::new()
        .u64("n_leaves", &u(&|r| r.n as u64))
        .u64(
            "jet",
            &jets.iter().map(|(k, _)| Some(*k as u64)).collect::<Vec<_>>(),
        )
        .u64("certified", &u(&|r| r.certified as u64))
        .str(
            "stop",
            &rows.iter().map(|r| r.stop.clone()).collect::<Vec<_>>(),
        )
        .f64("log_likelihood", &f(&|r| r.log_likelihood))
        .f64("upper_bound", &f(&|r| r.upper_bound))
        // 0 when certified (the MAP is known; UB − LB is then round-off).
        .f64("gap", &f(&|r| gap(r)))
        .u64("iterations", &u(&|r| r.iterations))
        .u64("clusters_expanded", &u(&|r| r.clusters_expanded))
        .u64("reenumerations", &u(&|r| r.reenumerations))
        .u64("splits_evaluated", &u(&|r| r.splits_evaluated))
        .u64("trellis_nodes", &u(&|r| r.trellis_nodes))
        .u64("peak_bytes", &u(&|r| r.peak_bytes))
        .f64("seconds", &f(&|r| r.seconds));
    for (k, m) in BASELINES.iter().enumerate() {
        table = table
            .f64(&format!("{m}_log_likelihood"), &f(&|r| r.baselines[k].0))
            // MAP − method lies in [LB − x, UB − x] (one value when certified).
            .f64(
                &format!("{m}_gap_min"),
                &f(&|r| r.log_likelihood - r.baselines[k].0),
            )
            .f64(
                &format!("{m}_gap_max"),
                &f(&|r| r.upper_bound - r.baselines[k].0),
            );
    }
    // Present where the method ran (NaN in the row otherwise).
    let opt = |g: &dyn Fn(&Row) -> f64| {
        rows.iter()
            .map(|r| Some(g(r)).filter(|v| v.is_finite()))
            .collect::<Vec<_>>()
    };
    let exact: Vec<Option<(f64, &str)>> = rows.iter().map(|r| exact_map(r)).collect();
    table = table
        .f64("full_map", &opt(&|r| r.full.0))
        .f64("map_trellis", &opt(&|r| r.map_trellis.0))
        .f64("map_trellis_scored", &opt(&|r| r.map_trellis.2))
        .f64(
            "exact_map",
            &exact.iter().map(|e| e.map(|e| e.0)).collect::<Vec<_>>(),
        )
        .str(
            "exact_by",
            &exact
                .iter()
                .map(|e| e.map_or("none", |e| e.1).to_string())
                .collect::<Vec<_>>(),
        );
    for (k, m) in BASELINES.iter().enumerate() {
        // The method's distance below the exact MAP, where that is known.
        let gaps: Vec<Option<f64>> = rows
            .iter()
            .zip(&exact)
            .map(|(r, e)| e.map(|e| e.0 - r.baselines[k].0))
            .collect();
        table = table.f64(&format!("{m}_gap"), &gaps);
    }
    table.write_parquet(&ctx.path("astar.parquet"))?;

    // Wall seconds in long form (one row per jet and method).
    let (mut n, mut jet, mut method, mut secs) = (vec![], vec![], vec![], vec![]);
    for ((k, _), r) in jets.iter().zip(&rows) {
        let mut push = |m: &str, v: f64| {
            if v.is_finite() {
                n.push(Some(r.n as u64));
                jet.push(Some(*k as u64));
                method.push(m.to_string());
                secs.push(Some(v));
            }
        };
        push("astar", r.seconds);
        for (i, m) in BASELINES.iter().enumerate() {
            push(m, r.baselines[i].1);
        }
        push("full_trellis", r.full.1);
        push("map_trellis", r.map_trellis.1);
    }
    Table::new()
        .u64("n_leaves", &n)
        .u64("jet", &jet)
        .str("method", &method)
        .f64("seconds", &secs)
        .write_parquet(&ctx.path("times.parquet"))?;
    ctx.manifest.set("sizes", &s.sizes);
    Ok(())
}
