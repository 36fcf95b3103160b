//! The bhc run: one journalled job per data set, N and subset (greedy BHC and the exact answers
//! by [`trellis_core::bhc::exact::compare`], the sparse (tree-structured) flat trellis over the BHC
//! tree's clusters, greedy BRT and the exact best rose tree); `bhc.parquet`, `summary.parquet` and
//! `coclustering.parquet`.

use super::data::{load_all, pick, subset_rows, DatasetSpec, Loaded, ModelName};
use super::BhcConfig;
use crate::experiment::jobs::Mode;
use crate::experiment::kind::RunContext;
use crate::experiment::table::Table;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::time::Instant;
use trellis_core::bhc::exact::compare;
use trellis_core::bhc::rose::best_rose_tree;
use trellis_core::bhc::{
    brt_greedy, BetaBernoulli, ConjugateModel, DirichletMultinomial,
    NormalInverseWishart,
};
use trellis_core::coalescent::metrics::adjusted_rand_index;

/// One subset's results (a journal record).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// The data set's place in `bhc.datasets`.
    pub dataset: usize,
    /// Number of points.
    pub n: usize,
    /// The subset's number.
    pub subset: usize,
    /// The rows of the data set it holds (0-based, increasing).
    pub rows: Vec<usize>,
    /// `log p(D)`, the exact DPM evidence.
    pub log_evidence: f64,
    /// BHC's bound `log[f(T) Γ(α)/Γ(N+α)]`.
    pub bhc_log_bound: f64,
    /// The same from the sparse flat trellis over the BHC tree's clusters (the tree-structured
    /// one, [`crate::flat::TreeFlatTrellis`]: its clusterings are the tree's cuts).
    pub tree_trellis_log_bound: f64,
    /// The best binary tree's bound `log[max_T f(T) Γ(α)/Γ(N+α)]`.
    pub best_log_bound: f64,
    /// The average binary tree's bound.
    pub mean_log_bound: f64,
    /// Whether the greedy tree is a best tree.
    pub greedy_is_best: bool,
    /// `log P(MAP partition | D)`.
    pub map_log_posterior: f64,
    /// ARI of BHC's `r_k < 0.5` cut against the exact MAP partition.
    pub ari_cut_map: f64,
    /// Clusters of the cut and of the MAP partition.
    pub clusters: (usize, usize),
    /// ARI of the cut and of the MAP partition against the classes, where the data have them.
    pub ari_classes: Option<(f64, f64)>,
    /// Largest and mean `|P_BHC(i~j) − P_DPM(i~j)|` over pairs `i < j`.
    pub coclustering_diff: (f64, f64),
    /// BHC's implied co-clustering, `N × N`.
    pub bhc_pairwise: Vec<Vec<f64>>,
    /// The exact co-clustering marginals, `N × N`.
    pub exact_pairwise: Vec<Vec<f64>>,
    /// Greedy BRT's `log p(D | T)` and internal nodes.
    pub brt: (f64, usize),
    /// The exact best rose tree's `log p(D | T)` and internal nodes (N ≤ `rose_max_n`).
    pub best_rose: Option<(f64, usize)>,
    /// Wall seconds of the BHC comparison and of the best rose tree.
    pub seconds: (f64, Option<f64>),
}

/// Everything one job needs besides the model.
struct Job {
    dataset: usize,
    n: usize,
    subset: usize,
    rows: Vec<usize>,
    classes: Option<Vec<usize>>,
    alpha: f64,
    gamma: f64,
    rose_max_n: usize,
}

/// Runs the comparison on `model` (the points of `job`).
fn analyse<M: ConjugateModel>(model: &M, job: &Job) -> Result<Row> {
    let t0 = Instant::now();
    let c = compare(model, job.alpha)?;
    let seconds_bhc = t0.elapsed().as_secs_f64();
    let ari_classes = match &job.classes {
        Some(cl) => Some((
            adjusted_rand_index(&c.cut_labels, cl)?,
            adjusted_rand_index(&c.map_labels, cl)?,
        )),
        None => None,
    };
    let brt = brt_greedy(model, job.gamma)?;
    let (best_rose, seconds_rose) = if job.n <= job.rose_max_n {
        let t1 = Instant::now();
        let b = best_rose_tree(model, job.gamma)?;
        (
            Some((b.log_p, b.hierarchy.n_internal())),
            Some(t1.elapsed().as_secs_f64()),
        )
    } else {
        (None, None)
    };
    let n_clusters = |l: &[usize]| l.iter().max().map_or(0, |m| m + 1);
    Ok(Row {
        dataset: job.dataset,
        n: job.n,
        subset: job.subset,
        rows: job.rows.clone(),
        log_evidence: c.dpm.log_evidence,
        bhc_log_bound: c.greedy_log_bound,
        tree_trellis_log_bound: c.tree_trellis_log_bound,
        best_log_bound: c.best_log_bound,
        mean_log_bound: c.mean_log_bound,
        greedy_is_best: c.greedy_is_best,
        map_log_posterior: c.dpm.map_log_posterior,
        ari_cut_map: c.ari_cut_map,
        clusters: (n_clusters(&c.cut_labels), n_clusters(&c.map_labels)),
        ari_classes,
        coclustering_diff: (c.coclustering_max_abs_diff, c.coclustering_mean_abs_diff),
        bhc_pairwise: c.bhc_pairwise,
        exact_pairwise: c.dpm.pairwise,
        brt: (brt.log_p_tree(), brt.hierarchy().n_internal()),
        best_rose,
        seconds: (seconds_bhc, seconds_rose),
    })
}

/// The model of data set `spec` on the points `x`, and the comparison on it.
fn solve(spec: &DatasetSpec, x: &[Vec<f64>], job: &Job) -> Result<Row> {
    let h = spec.hyperparameters();
    let out = match spec.model {
        ModelName::BetaBernoulli => analyse(&BetaBernoulli::from_data(x, h[0].1)?, job),
        ModelName::NormalInverseWishart => {
            analyse(&NormalInverseWishart::from_data(x, h[0].1, h[1].1)?, job)
        }
        ModelName::DirichletMultinomial => {
            analyse(&DirichletMultinomial::symmetric(x, h[0].1)?, job)
        }
    };
    out.with_context(|| {
        format!(
            "data set {:?}, N = {}, subset {}",
            spec.name, job.n, job.subset
        )
    })
}

/// Class ids `0..k` of the rows `idx` (in order of first appearance).
fn class_ids(classes: &[String], idx: &[usize]) -> Vec<usize> {
    let mut seen: Vec<&str> = Vec::new();
    idx.iter()
        .map(|&i| {
            let c = classes[i].as_str();
            seen.iter().position(|s| *s == c).unwrap_or_else(|| {
                seen.push(c);
                seen.len() - 1
            })
        })
        .collect()
}

/// One job per data set, N and subset, in that order.
fn jobs(cfg: &BhcConfig, data: &[Loaded], seed: u64) -> Result<Vec<Job>> {
    let s = &cfg.bhc;
    let mut out = Vec::new();
    for (d, (spec, loaded)) in s.datasets.iter().zip(data).enumerate() {
        for &n in &s.sizes {
            for k in 0..s.subsets {
                let rows = subset_rows(seed, d, n, k, loaded.rows.len())
                    .with_context(|| format!("data set {:?}", spec.name))?;
                out.push(Job {
                    dataset: d,
                    n,
                    subset: k,
                    classes: loaded.classes.as_ref().map(|c| class_ids(c, &rows)),
                    rows,
                    alpha: s.alpha,
                    gamma: s.brt_gamma,
                    rose_max_n: s.rose_max_n,
                });
            }
        }
    }
    Ok(out)
}

/// Runs the bhc kind.
pub fn run(cfg: &BhcConfig, ctx: &mut RunContext) -> Result<()> {
    let s = &cfg.bhc;
    let data = load_all(&s.datasets)?;
    let jobs = jobs(cfg, &data, ctx.seed())?;
    let keys: Vec<String> = jobs
        .iter()
        .map(|j| format!("{}/n{}/s{}", s.datasets[j.dataset].name, j.n, j.subset))
        .collect();
    let pb = crate::experiment::progress_bar(keys.len() as u64, "subsets");
    let done = ctx.jobs.run("subsets", &keys, Mode::Parallel, |i| {
        let j = &jobs[i];
        let x = pick(&data[j.dataset], &j.rows);
        let out = solve(&s.datasets[j.dataset], &x, j);
        pb.inc(1);
        out
    })?;
    pb.finish_and_clear();
    let rows: Vec<Row> = done.into_iter().map(|d| d.value).collect();
    let names: Vec<String> = s.datasets.iter().map(|d| d.name.clone()).collect();
    super::measures::rows_table(&rows, &names, &s.datasets)
        .write_parquet(&ctx.path("bhc.parquet"))?;
    super::measures::summary_table(&rows, &names).write_parquet(&ctx.path("summary.parquet"))?;
    coclustering_table(&rows, &names).write_parquet(&ctx.path("coclustering.parquet"))?;
    ctx.manifest.set("datasets", &names);
    ctx.manifest.set("sizes", &s.sizes);
    Ok(())
}

/// Every pair `i < j` of every subset: the exact co-clustering marginal and BHC's.
fn coclustering_table(rows: &[Row], names: &[String]) -> Table {
    let (mut ds, mut n, mut sub, mut a, mut b, mut ex, mut bh) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    for r in rows {
        for i in 0..r.n {
            for j in i + 1..r.n {
                ds.push(names[r.dataset].clone());
                n.push(Some(r.n as u64));
                sub.push(Some(r.subset as u64));
                a.push(Some(i as u64));
                b.push(Some(j as u64));
                ex.push(Some(r.exact_pairwise[i][j]));
                bh.push(Some(r.bhc_pairwise[i][j]));
            }
        }
    }
    Table::new()
        .str("dataset", &ds)
        .u64("n", &n)
        .u64("subset", &sub)
        .u64("i", &a)
        .u64("j", &b)
        .f64("exact", &ex)
        .f64("bhc", &bh)
}
