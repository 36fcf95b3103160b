//! The jets experiment (Cluster Trellis paper, Table 1 and Figure 5): score every jet with the
//! exact trellis, beam search and greedy, compare with the generator's tree, and write tables
//! and charts.

use super::chart::{save_chart, PairwiseDiffTable, ScatterByCategory};
use super::config::{AlgorithmsSection, Config, DataSource};
use super::table::Table;
use super::{Manifest, Staging};
use crate::data::ginkgo::{generate_dataset, Jet, JetDataset};
use crate::exact::{ExactError, FullTrellis, SparseTrellis, TrellisCost};
use crate::search::{beam_search_all, beam_search_with, default_beam_size, greedy, Dedup};
use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use serde::Serialize;
use std::time::Instant;

/// Names of the algorithms in tables, in the paper's order.
pub const ALGORITHMS: [&str; 5] = ["trellis", "sparse", "beam", "greedy", "truth"];

/// What one algorithm found on one jet.
#[derive(Clone, Debug, Serialize)]
pub struct AlgoResult {
    /// Log-likelihood of the tree found (the MAP value for the trellis).
    pub log_likelihood: f64,
    /// The tree, canonical Newick.
    pub newick: String,
    /// Wall time in seconds.
    pub seconds: f64,
}

/// Everything computed for one jet.
#[derive(Clone, Debug, Serialize)]
pub struct JetScores {
    /// Jet name.
    pub name: String,
    /// Number of leaves.
    pub n_leaves: usize,
    /// Exact MAP (trellis), if run.
    pub trellis: Option<AlgoResult>,
    /// Exact log partition function, if the trellis ran.
    pub log_z: Option<f64>,
    /// Number of trees with finite likelihood, if the trellis ran.
    pub n_trees_finite: Option<u128>,
    /// Sparse trellis seeded by the jet's own beam-search trees, if run.
    pub sparse: Option<AlgoResult>,
    /// Sparsity index of that sparse trellis (encoded trees over (2N-3)!!).
    pub sparse_sparsity: Option<f64>,
    /// Vertices of that sparse trellis.
    pub sparse_vertices: Option<usize>,
    /// Beam search, if run.
    pub beam: Option<AlgoResult>,
    /// Greedy, if run.
    pub greedy: Option<AlgoResult>,
    /// The generator's tree, if known.
    pub truth: Option<AlgoResult>,
}

impl JetScores {
    /// The result of algorithm `name` (one of [`ALGORITHMS`]).
    pub fn get(&self, name: &str) -> Option<&AlgoResult> {
        match name {
            "trellis" => self.trellis.as_ref(),
            "sparse" => self.sparse.as_ref(),
            "beam" => self.beam.as_ref(),
            "greedy" => self.greedy.as_ref(),
            "truth" => self.truth.as_ref(),
            _ => None,
        }
    }
}

/// Checks that the exact trellis can run on every jet, before any work starts.
pub fn check_exact_limits(jets: &[Jet], algs: &AlgorithmsSection) -> Result<()> {
    if !algs.trellis {
        return Ok(());
    }
    if let Some(j) = jets.iter().max_by_key(|j| j.n_leaves) {
        if j.n_leaves > algs.max_exact_leaves {
            let cost = TrellisCost::of(
                j.n_leaves,
                std::mem::size_of::<crate::model::ginkgo::GinkgoStat>(),
            );
            let e = ExactError::TooManyLeaves {
                n: j.n_leaves,
                limit: algs.max_exact_leaves,
                cost,
            };
            bail!("jet {:?}: {e}", j.name);
        }
    }
    Ok(())
}

/// Scores one jet with the algorithms switched on.
pub fn score_jet(jet: &Jet, algs: &AlgorithmsSection) -> Result<JetScores> {
    let m = jet.model();
    let n = jet.n_leaves;
    let mut out = JetScores {
        name: jet.name.clone(),
        n_leaves: n,
        trellis: None,
        log_z: None,
        n_trees_finite: None,
        sparse: None,
        sparse_sparsity: None,
        sparse_vertices: None,
        beam: None,
        greedy: None,
        truth: None,
    };
    if algs.trellis {
        let t0 = Instant::now();
        let t = FullTrellis::build_with_limit(&m, algs.max_exact_leaves)
            .with_context(|| format!("jet {:?}", jet.name))?;
        let tree = t.map_tree();
        out.trellis = Some(AlgoResult {
            log_likelihood: t.map_log_likelihood(),
            newick: tree.to_newick(),
            seconds: t0.elapsed().as_secs_f64(),
        });
        out.log_z = Some(t.log_partition());
        out.n_trees_finite = Some(t.n_trees_finite());
    }
    if algs.beam {
        let t0 = Instant::now();
        let size = algs.beam_size.unwrap_or_else(|| default_beam_size(n));
        let f = beam_search_with(&m, size, algs.beam_dedup);
        out.beam = Some(AlgoResult {
            log_likelihood: f.log_likelihood,
            newick: f.tree.to_newick(),
            seconds: t0.elapsed().as_secs_f64(),
        });
    }
    if algs.sparse {
        let t0 = Instant::now();
        let seeds: Vec<_> = beam_search_all(&m, algs.sparse_seed_trees, Dedup::Clusters)
            .into_iter()
            .map(|f| f.tree)
            .collect();
        let sp = SparseTrellis::from_trees(n, &seeds)?;
        let r = sp.run(&m);
        let tree = sp.map_tree(&r).map(|t| t.to_newick()).unwrap_or_default();
        out.sparse = Some(AlgoResult {
            log_likelihood: r.map_log_likelihood(),
            newick: tree,
            seconds: t0.elapsed().as_secs_f64(),
        });
        out.sparse_sparsity = Some(sp.sparsity_index());
        out.sparse_vertices = Some(sp.n_vertices());
    }
    if algs.greedy {
        let t0 = Instant::now();
        let f = greedy(&m);
        out.greedy = Some(AlgoResult {
            log_likelihood: f.log_likelihood,
            newick: f.tree.to_newick(),
            seconds: t0.elapsed().as_secs_f64(),
        });
    }
    if let Some(t) = jet.truth() {
        out.truth = Some(AlgoResult {
            log_likelihood: t.log_likelihood(&m),
            newick: t.to_newick(),
            seconds: 0.0,
        });
    }
    Ok(out)
}

/// Loads or generates the jets a config asks for.
pub fn load_jets(cfg: &Config) -> Result<JetDataset> {
    let (lo, hi) = cfg.leaf_range();
    match cfg.data().source {
        DataSource::File => {
            let path = cfg.data().path.as_ref().expect("checked by Config");
            let mut ds = JetDataset::load(path)?;
            let before = ds.jets.len();
            ds.jets.retain(|j| j.n_leaves >= lo && j.n_leaves <= hi);
            if ds.jets.is_empty() {
                bail!(
                    "no jet of {} has {lo}..={hi} leaves ({before} jets read); widen data.min_leaves/max_leaves",
                    path.display()
                );
            }
            Ok(ds)
        }
        DataSource::Generate => {
            let n = cfg.data().n_jets.expect("checked by Config");
            let tries = cfg.data().max_tries.unwrap_or(100 * n.max(100));
            Ok(generate_dataset(
                &cfg.generator_params(),
                n,
                lo,
                hi,
                cfg.experiment.seed,
                tries,
                &cfg.experiment.name,
            )?)
        }
    }
}

/// Mean and population standard deviation of `row - col` over the jets where both are finite.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PairStat {
    /// Mean difference.
    pub mean: f64,
    /// Standard deviation (population, ddof = 0).
    pub std: f64,
    /// Jets counted.
    pub n: usize,
}

/// Mean and population std of the finite values.
pub fn mean_std(values: impl IntoIterator<Item = f64>) -> PairStat {
    let v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n == 0 {
        return PairStat {
            mean: f64::NAN,
            std: f64::NAN,
            n,
        };
    }
    let mean = v.iter().sum::<f64>() / n as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    PairStat {
        mean,
        std: var.sqrt(),
        n,
    }
}

/// Table 1: for every pair of algorithms present, the statistics of row minus column, and the
/// per-algorithm means.
pub struct Table1 {
    /// Algorithms present, in the paper's order.
    pub algorithms: Vec<&'static str>,
    /// `diff[i][j]` for `i < j`: row `i` minus column `j`.
    pub diff: Vec<Vec<Option<PairStat>>>,
    /// Per-algorithm mean and std of the log-likelihood.
    pub means: Vec<PairStat>,
}

impl Table1 {
    /// Computes the table from scored jets.
    pub fn from_scores(scores: &[JetScores]) -> Table1 {
        let algorithms: Vec<&'static str> = ALGORITHMS
            .into_iter()
            .filter(|a| scores.iter().all(|s| s.get(a).is_some()))
            .collect();
        let k = algorithms.len();
        let mut diff = vec![vec![None; k]; k];
        for i in 0..k {
            for j in i + 1..k {
                diff[i][j] = Some(mean_std(scores.iter().map(|s| {
                    s.get(algorithms[i]).unwrap().log_likelihood
                        - s.get(algorithms[j]).unwrap().log_likelihood
                })));
            }
        }
        let means = algorithms
            .iter()
            .map(|a| mean_std(scores.iter().map(|s| s.get(a).unwrap().log_likelihood)))
            .collect();
        Table1 {
            algorithms,
            diff,
            means,
        }
    }

    /// The statistics of `a - b`, if both are present.
    pub fn get(&self, a: &str, b: &str) -> Option<PairStat> {
        let i = self.algorithms.iter().position(|x| *x == a)?;
        let j = self.algorithms.iter().position(|x| *x == b)?;
        self.diff[i][j]
    }
}

fn display_name(a: &str) -> &'static str {
    match a {
        "trellis" => "Trellis",
        "sparse" => "Sparse Trellis",
        "beam" => "Beam Search",
        "greedy" => "Greedy",
        "truth" => "Truth",
        _ => "?",
    }
}

/// Runs the jets experiment of `cfg`, writing into `staging`; returns the scores.
pub fn run(cfg: &Config, staging: &Staging, manifest: &mut Manifest) -> Result<Vec<JetScores>> {
    let t0 = Instant::now();
    let ds = load_jets(cfg)?;
    manifest.timing("load_or_generate", t0.elapsed().as_secs_f64());
    check_exact_limits(&ds.jets, &cfg.algorithms)?;
    staging.write_string("dataset.json", &ds.to_json())?;

    let pb = super::progress_bar(ds.jets.len() as u64, "jets");
    let t1 = Instant::now();
    let scores: Vec<JetScores> = ds
        .jets
        .par_iter()
        .map(|j| {
            let r = score_jet(j, &cfg.algorithms);
            pb.inc(1);
            r
        })
        .collect::<Result<_>>()?;
    pb.finish_and_clear();
    manifest.timing("score_all_jets", t1.elapsed().as_secs_f64());
    for a in ["trellis", "sparse", "beam", "greedy"] {
        let s: f64 = scores
            .iter()
            .filter_map(|s| s.get(a).map(|r| r.seconds))
            .sum();
        if scores.iter().any(|s| s.get(a).is_some()) {
            manifest.timing(&format!("{a}_cpu_seconds"), s);
        }
    }
    manifest.set("n_jets", ds.jets.len());
    manifest.set("dataset_source", ds.source.clone());

    write_jets_table(&scores, &staging.path("jets.parquet"))?;
    let t1tab = Table1::from_scores(&scores);
    write_table1(&t1tab, cfg, &staging.path("table1.parquet"))?;
    if t1tab.algorithms.len() >= 2 {
        let labels: Vec<String> = t1tab
            .algorithms
            .iter()
            .map(|a| display_name(a).to_string())
            .collect();
        let k = labels.len();
        let mut mean = vec![vec![None; k]; k];
        let mut std = vec![vec![None; k]; k];
        for i in 0..k {
            for j in 0..k {
                if let Some(p) = t1tab.diff[i][j] {
                    mean[i][j] = Some(p.mean);
                    std[i][j] = Some(p.std);
                }
            }
        }
        let chart = PairwiseDiffTable {
            labels,
            mean,
            std,
            title: if cfg.expected.is_some() {
                "Table 1: log-likelihood difference, row − column".into()
            } else {
                "Log-likelihood difference, row − column".into()
            },
            caption: format!(
                "mean ± std over {} jets with {}..={} leaves (seed {}){}",
                scores.len(),
                cfg.leaf_range().0,
                cfg.leaf_range().1,
                cfg.experiment.seed,
                cfg.expected
                    .as_ref()
                    .map(|e| format!(
                        ". Paper: trellis − beam {:.4}, trellis − greedy {:.4}, beam − greedy {:.4}",
                        e.trellis_minus_beam[0], e.trellis_minus_greedy[0], e.beam_minus_greedy[0]
                    ))
                    .unwrap_or_default()
            ),
        };
        save_chart(&staging.path("table1"), 1100, 600, &chart)?;
    }
    if cfg.algorithms.trellis {
        let points: Vec<(f64, f64, usize)> = scores
            .iter()
            .filter_map(|s| {
                let map = s.trellis.as_ref()?.log_likelihood;
                let lz = s.log_z?;
                (map.is_finite() && lz.is_finite()).then_some((map, lz, s.n_leaves))
            })
            .collect();
        let chart = ScatterByCategory {
            points,
            x_label: "trellis MAP log-likelihood ℓ".into(),
            y_label: "log partition function log Z".into(),
            title: format!(
                "Figure 5: log Z vs. MAP log-likelihood ({} jets)",
                scores.len()
            ),
            legend_title: "N leaves".into(),
            category_names: vec![],
            diagonal: false,
            x_range: None,
            y_range: None,
        };
        save_chart(&staging.path("fig5_logz_vs_map"), 1000, 750, &chart)?;
    }
    Ok(scores)
}

/// `jets.parquet`: one row per jet x algorithm.
pub fn write_jets_table(scores: &[JetScores], path: &std::path::Path) -> Result<()> {
    let mut jet = Vec::new();
    let mut idx = Vec::new();
    let mut n = Vec::new();
    let mut algo = Vec::new();
    let mut ll = Vec::new();
    let mut lz = Vec::new();
    let mut count = Vec::new();
    let mut newick = Vec::new();
    let mut secs = Vec::new();
    let mut sparsity = Vec::new();
    for (k, s) in scores.iter().enumerate() {
        for a in ALGORITHMS {
            if let Some(r) = s.get(a) {
                jet.push(s.name.clone());
                idx.push(Some(k as u64));
                n.push(Some(s.n_leaves as u64));
                algo.push(a);
                ll.push(Some(r.log_likelihood));
                lz.push(s.log_z);
                count.push(s.n_trees_finite.and_then(|c| u64::try_from(c).ok()));
                newick.push(r.newick.clone());
                secs.push(Some(r.seconds));
                sparsity.push(if a == "sparse" {
                    s.sparse_sparsity
                } else {
                    None
                });
            }
        }
    }
    Table::new()
        .str("jet", &jet)
        .u64("jet_index", &idx)
        .u64("n_leaves", &n)
        .str("algorithm", &algo)
        .f64("log_likelihood", &ll)
        .f64("log_z", &lz)
        .u64("n_trees_finite", &count)
        .str("tree_newick", &newick)
        .f64("seconds", &secs)
        .f64("sparsity_index", &sparsity)
        .write_parquet(path)
}

/// `table1.parquet`: long format, one row per (row, column) pair with the paper's value beside
/// ours where the config gives it, and one row per algorithm for the means (`column` empty).
pub fn write_table1(t: &Table1, cfg: &Config, path: &std::path::Path) -> Result<()> {
    let paper = |a: &str, b: &str| -> Option<[f64; 2]> {
        let e = cfg.expected.as_ref()?;
        match (a, b) {
            ("trellis", "beam") => Some(e.trellis_minus_beam),
            ("trellis", "greedy") => Some(e.trellis_minus_greedy),
            ("beam", "greedy") => Some(e.beam_minus_greedy),
            _ => None,
        }
    };
    let paper_mean = |a: &str| -> Option<[f64; 2]> {
        let m = cfg.expected.as_ref()?.means?;
        // `[expected] means` lists trellis, beam, greedy, truth.
        ["trellis", "beam", "greedy", "truth"]
            .iter()
            .position(|x| *x == a)
            .map(|i| m[i])
    };
    let tol = cfg.expected.as_ref().map(|e| e.tolerance);
    let (mut kind, mut row, mut col) = (Vec::new(), Vec::new(), Vec::new());
    let (mut mean, mut std, mut n) = (Vec::new(), Vec::new(), Vec::new());
    let (mut pm, mut ps, mut delta, mut ok) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut push = |k: &str, r: &str, c: &str, s: PairStat, p: Option<[f64; 2]>, check: bool| {
        kind.push(k.to_string());
        row.push(r.to_string());
        col.push(c.to_string());
        mean.push(Some(s.mean));
        std.push(Some(s.std));
        n.push(Some(s.n as u64));
        pm.push(p.map(|x| x[0]));
        ps.push(p.map(|x| x[1]));
        delta.push(p.map(|x| s.mean - x[0]));
        ok.push(match (p, tol, check) {
            (Some(x), Some(t), true) => Some(((s.mean - x[0]).abs() <= t) as u64),
            _ => None,
        });
    };
    for (i, a) in t.algorithms.iter().enumerate() {
        for (j, b) in t.algorithms.iter().enumerate() {
            if let Some(s) = t.diff[i][j] {
                push("difference", a, b, s, paper(a, b), true);
            }
        }
    }
    for (i, a) in t.algorithms.iter().enumerate() {
        push("mean", a, "", t.means[i], paper_mean(a), false);
    }
    Table::new()
        .str("kind", &kind)
        .str("row", &row)
        .str("column", &col)
        .f64("mean", &mean)
        .f64("std", &std)
        .u64("n_jets", &n)
        .f64("paper_mean", &pm)
        .f64("paper_std", &ps)
        .f64("ours_minus_paper", &delta)
        .u64("within_tolerance", &ok)
        .write_parquet(path)
}
