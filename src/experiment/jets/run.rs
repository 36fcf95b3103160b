//! The jets run: every jet scored by every method switched on; `jets.parquet` and
//! `table1.parquet`.

use super::JetsConfig;
use crate::data::ginkgo::Jet;
use crate::exact::{ExactError, TrellisCost};
use crate::experiment::check::Expected;
use crate::experiment::kind::RunContext;
use crate::experiment::methods::{Found, Method, MethodsSection, Problem};
use crate::experiment::stats::{mean_std, MeanStd};
use crate::experiment::table::Table;
use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use std::path::Path;
use std::time::Instant;

/// Everything computed for one jet.
#[derive(Clone, Debug)]
pub struct JetScores {
    /// Jet name.
    pub name: String,
    /// Number of leaves.
    pub n_leaves: usize,
    /// What each method found, in [`Method::ALL`] order.
    pub found: Vec<(Method, Found)>,
}

impl JetScores {
    /// The result of method `m`, if it ran.
    pub fn get(&self, m: Method) -> Option<&Found> {
        self.found.iter().find(|(x, _)| *x == m).map(|(_, f)| f)
    }

    /// Exact log partition function, if the trellis ran.
    pub fn log_z(&self) -> Option<f64> {
        self.get(Method::Trellis)?.exact.map(|e| e.log_z)
    }

    /// Number of trees with finite likelihood, if the trellis ran.
    pub fn n_trees_finite(&self) -> Option<u128> {
        self.get(Method::Trellis)?.exact.map(|e| e.n_trees_finite)
    }
}

/// Checks that the exact trellis can run on every jet, before any work starts.
pub fn check_exact_limits(jets: &[Jet], methods: &MethodsSection) -> Result<()> {
    if !methods.trellis && !methods.map_trellis {
        return Ok(());
    }
    if let Some(j) = jets.iter().max_by_key(|j| j.n_leaves) {
        if j.n_leaves > methods.max_exact_leaves && !methods.trellis {
            bail!(
                "jet {:?} has {} leaves, above methods.max_exact_leaves = {}: raise max_exact_leaves (the MAP-only trellis takes about 10 minutes and 1 GiB at N = 24 on 2 cores) or set methods.map_trellis = false",
                j.name,
                j.n_leaves,
                methods.max_exact_leaves
            );
        }
        if j.n_leaves > methods.max_exact_leaves {
            let cost = TrellisCost::of(
                j.n_leaves,
                std::mem::size_of::<crate::model::ginkgo::GinkgoStat>(),
            );
            let e = ExactError::TooManyLeaves {
                n: j.n_leaves,
                limit: methods.max_exact_leaves,
                cost,
            };
            bail!("jet {:?}: {e}", j.name);
        }
    }
    Ok(())
}

/// Scores one jet with every method switched on in `methods` (and its truth tree, if known).
pub fn score_jet(jet: &Jet, methods: &MethodsSection) -> Result<JetScores> {
    let name = format!("jet {:?}", jet.name);
    let model = jet.model().with_context(|| name.clone())?;
    let truth = jet.truth();
    let problem = Problem {
        name: &name,
        model: &model,
        similarities: None,
        truth: truth.as_ref(),
    };
    let mut found = Vec::new();
    for m in Method::ALL {
        if methods.enabled(m) {
            if let Some(f) = m.run(&problem, methods)? {
                found.push((m, f));
            }
        }
    }
    Ok(JetScores {
        name: jet.name.clone(),
        n_leaves: jet.n_leaves,
        found,
    })
}

/// Table 1: for every pair of methods present on every jet, the statistics of row minus
/// column, and the per-method means.
pub struct Table1 {
    /// Methods present, in [`Method::ALL`] order.
    pub methods: Vec<Method>,
    /// `diff[i][j]` for `i < j`: row `i` minus column `j`.
    pub diff: Vec<Vec<Option<MeanStd>>>,
    /// Per-method mean and std of the log-likelihood.
    pub means: Vec<MeanStd>,
}

impl Table1 {
    /// Computes the table from scored jets.
    pub fn from_scores(scores: &[JetScores]) -> Table1 {
        let methods: Vec<Method> = Method::ALL
            .into_iter()
            .filter(|m| scores.iter().all(|s| s.get(*m).is_some()))
            .collect();
        let ll = |s: &JetScores, m: Method| s.get(m).map_or(f64::NAN, |f| f.log_likelihood);
        let k = methods.len();
        let mut diff = vec![vec![None; k]; k];
        for i in 0..k {
            for j in i + 1..k {
                diff[i][j] = Some(mean_std(
                    scores.iter().map(|s| ll(s, methods[i]) - ll(s, methods[j])),
                ));
            }
        }
        let means = methods
            .iter()
            .map(|m| mean_std(scores.iter().map(|s| ll(s, *m))))
            .collect();
        Table1 {
            methods,
            diff,
            means,
        }
    }

    /// The statistics of `a - b`, if both are present.
    pub fn get(&self, a: Method, b: Method) -> Option<MeanStd> {
        let i = self.methods.iter().position(|x| *x == a)?;
        let j = self.methods.iter().position(|x| *x == b)?;
        self.diff[i][j]
    }
}

/// Runs the jets kind.
pub fn run(cfg: &JetsConfig, ctx: &mut RunContext, paper: &[Expected]) -> Result<()> {
    let t0 = Instant::now();
    let (ds, dropped) = cfg.jets.load(ctx.seed(), &ctx.experiment.name)?;
    crate::experiment::dropped::report(ctx, dropped.as_slice());
    ctx.manifest
        .timing("load_or_generate", t0.elapsed().as_secs_f64());
    check_exact_limits(&ds.jets, &cfg.methods)?;
    ctx.staging.write_string("dataset.json", &ds.to_json())?;

    let pb = crate::experiment::progress_bar(ds.jets.len() as u64, "jets");
    let t1 = Instant::now();
    let scores: Vec<JetScores> = ds
        .jets
        .par_iter()
        .map(|j| {
            let r = score_jet(j, &cfg.methods);
            pb.inc(1);
            r
        })
        .collect::<Result<_>>()?;
    pb.finish_and_clear();
    ctx.manifest
        .timing("score_all_jets", t1.elapsed().as_secs_f64());
    for m in [Method::Trellis, Method::Sparse, Method::Beam, Method::Greedy] {
        if scores.iter().any(|s| s.get(m).is_some()) {
            let s: f64 = scores
                .iter()
                .filter_map(|s| s.get(m).map(|r| r.seconds))
                .sum();
            ctx.manifest
                .timing(&format!("{}_cpu_seconds", m.name()), s);
        }
    }
    ctx.manifest.set("n_jets", ds.jets.len());
    ctx.manifest.set("dataset_source", ds.source.clone());
    write_jets_table(&scores, &ctx.path("jets.parquet"))?;
    write_table1(
        &Table1::from_scores(&scores),
        paper,
        &ctx.path("table1.parquet"),
    )
}

/// `jets.parquet`: one row per jet x method.
pub fn write_jets_table(scores: &[JetScores], path: &Path) -> Result<()> {
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
        for (m, r) in &s.found {
            jet.push(s.name.clone());
            idx.push(Some(k as u64));
            n.push(Some(s.n_leaves as u64));
            algo.push(m.name());
            ll.push(Some(r.log_likelihood));
            lz.push(s.log_z());
            count.push(s.n_trees_finite().and_then(|c| u64::try_from(c).ok()));
            newick.push(r.newick.clone());
            secs.push(Some(r.seconds));
            sparsity.push(r.sparse.map(|f| f.sparsity_index));
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

/// The paper's value of measure `id` among `paper` (expected numbers whose source is a paper).
fn paper_value(paper: &[Expected], id: &str) -> Option<f64> {
    paper.iter().find(|e| e.id == id).map(|e| e.value)
}

/// `table1.parquet`: long format, one row per (row, column) pair with the paper's value beside
/// ours where the kind's expected numbers give it, and one row per method for the means
/// (`column` empty).
pub fn write_table1(t: &Table1, paper: &[Expected], path: &Path) -> Result<()> {
    let (mut kind, mut row, mut col) = (Vec::new(), Vec::new(), Vec::new());
    let (mut mean, mut std, mut n) = (Vec::new(), Vec::new(), Vec::new());
    let (mut pm, mut ps, mut delta) = (Vec::new(), Vec::new(), Vec::new());
    let mut push = |k: &str, r: &str, c: &str, s: MeanStd, id: String| {
        let p = paper_value(paper, &format!("{id}.mean"));
        kind.push(k.to_string());
        row.push(r.to_string());
        col.push(c.to_string());
        mean.push(Some(s.mean));
        std.push(Some(s.std));
        n.push(Some(s.n as u64));
        pm.push(p);
        ps.push(paper_value(paper, &format!("{id}.std")));
        delta.push(p.map(|p| s.mean - p));
    };
    for (i, a) in t.methods.iter().enumerate() {
        for (j, b) in t.methods.iter().enumerate() {
            if let Some(s) = t.diff[i][j] {
                let id = format!("table1.{}-{}", a.name(), b.name());
                push("difference", a.name(), b.name(), s, id);
            }
        }
    }
    for (i, a) in t.methods.iter().enumerate() {
        push("mean", a.name(), "", t.means[i], format!("mean.{}", a.name()));
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
        .write_parquet(path)
}
