//! The run: the sets loaded, λ fitted both ways and scanned (over the jets of the full
//! trellis), the methods at the chosen λ on every jet, λ out of sample ([`super::holdout`]);
//! `lambda_fit.parquet`, `lambda_scan.parquet`, then [`super::score`]'s and
//! [`super::summary`]'s tables.

use super::score::{score_jet, write_exact_table, write_jets_table, JetRecord};
use super::summary::{write_by_n, write_summary};
use super::{JetSet, LambdaChoice, PythiaJetsSection};
use crate::data::ginkgo::{Jet, JetDataset};
use crate::exact::{fit_lambda_by_evidence, fit_lambda_on_trees, FitError, FullTrellis, LambdaFit};
use crate::experiment::dropped::Dropped;
use crate::experiment::kind::RunContext;
use crate::experiment::table::Table;
use crate::model::GinkgoModel;
use crate::subset::Subset;
use crate::tree::Tree;
use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use std::time::Instant;

/// One set of jets, loaded and filtered, with each jet's truth tree (if it has one).
pub struct LoadedSet {
    /// The set's name.
    pub name: String,
    /// The jets kept.
    pub jets: Vec<Jet>,
    /// `truths[i]`: jet `i`'s truth tree, checked to be a full binary tree over its leaves.
    pub truths: Vec<Option<Tree>>,
}

impl LoadedSet {
    /// Whether any jet has a truth tree.
    pub fn has_truth(&self) -> bool {
        self.truths.iter().any(Option::is_some)
    }

    /// The indices of the jets given the full trellis (at most `full_max` leaves): the jets of
    /// the fits of λ and of the scan.
    pub fn fit_jets(&self, full_max: usize) -> Vec<usize> {
        (0..self.jets.len())
            .filter(|&i| self.jets[i].n_leaves <= full_max)
            .collect()
    }
}

/// Loads set `s` (the `k`-th), keeping the jets in the leaf range and at most `max_jets`; what
/// is dropped is added to `dropped`.
pub fn load_set(
    k: usize,
    s: &JetSet,
    sec: &PythiaJetsSection,
    dropped: &mut Vec<Dropped>,
) -> Result<LoadedSet> {
    let ds = JetDataset::load(&s.path).with_context(|| format!("set {:?}", s.name))?;
    let (lo, hi) = (sec.min_leaves, sec.max_leaves);
    let read = ds.jets.len();
    let (mut jets, outside): (Vec<Jet>, Vec<Jet>) = ds
        .jets
        .into_iter()
        .partition(|j| (lo..=hi).contains(&j.n_leaves));
    let names = |v: &[Jet]| -> Vec<String> {
        v.iter()
            .map(|j| format!("{} ({} leaves)", j.name, j.n_leaves))
            .collect()
    };
    dropped.extend(Dropped::of(
        "jets",
        &format!(
            "set {}: outside pythia_jets.min_leaves..=max_leaves = {lo}..={hi}",
            s.name
        ),
        names(&outside),
    ));
    if let Some(m) = s.max_jets {
        if jets.len() > m {
            let beyond = jets.split_off(m);
            dropped.extend(Dropped::of(
                "jets",
                &format!(
                    "set {}: beyond pythia_jets.sets[{k}].max_jets = {m}",
                    s.name
                ),
                names(&beyond),
            ));
        }
    }
    if jets.is_empty() {
        bail!(
            "set {:?}: no jet of {} has {lo}..={hi} leaves ({read} jets read); widen pythia_jets.min_leaves/max_leaves",
            s.name,
            s.path.display()
        );
    }
    let truths = jets
        .iter()
        .map(|j| -> Result<Option<Tree>> {
            let Some(v) = &j.truth_tree else {
                return Ok(None);
            };
            let t = Tree::from_nested_json(v).map_err(|e| {
                anyhow::anyhow!(
                    "set {:?}, jet {:?}: its truth_tree is not a binary tree ({e}); fix the file or remove truth_tree",
                    s.name,
                    j.name
                )
            })?;
            if t.leaves() != Subset::full(j.n_leaves) || t.n_leaves() != j.n_leaves {
                bail!(
                    "set {:?}, jet {:?}: its truth_tree does not hold each of the {} leaves once; fix the file or remove truth_tree",
                    s.name,
                    j.name,
                    j.n_leaves
                );
            }
            Ok(Some(t))
        })
        .collect::<Result<_>>()?;
    Ok(LoadedSet {
        name: s.name.clone(),
        jets,
        truths,
    })
}

/// Jet `j`'s Ginkgo model with rate `lambda` for every split (the root's too), its own t_cut.
pub fn model_at(j: &Jet, lambda: f64) -> Result<GinkgoModel> {
    GinkgoModel::new(j.leaves.clone(), j.t_cut, lambda).with_context(|| format!("jet {:?}", j.name))
}

/// One row of `lambda_fit.parquet`.
#[derive(Clone, Debug)]
pub struct FitRow {
    /// The set.
    pub set: String,
    /// `"evidence"`, `"truth"`, or `"evidence_half_1"` and `"evidence_half_2"` (the evidence
    /// fit on each half of the jets, [`super::holdout`]).
    pub method: &'static str,
    /// The fit, or why there is none.
    pub fit: Result<LambdaFit, String>,
}

/// A fit's row: the fit, or why there is none (no jet with a finite objective); any other
/// error of the fit is the run's.
pub fn fit_row(
    set: &str,
    method: &'static str,
    r: Result<LambdaFit, FitError>,
) -> Result<FitRow> {
    let fit = match r {
        Ok(f) => Ok(f),
        Err(FitError::NoJets { n }) => Err(format!(
            "no jet has a finite objective (all {n} forbidden by t_cut)"
        )),
        Err(e) => bail!("set {set:?}: the {method} fit of λ: {e}"),
    };
    Ok(FitRow {
        set: set.to_string(),
        method,
        fit,
    })
}

/// The evidence fit of λ over the jets `idx` of `set` (each at most `sec.full_max()` leaves).
pub fn evidence_fit(
    set: &LoadedSet,
    idx: &[usize],
    sec: &PythiaJetsSection,
) -> Result<Result<LambdaFit, FitError>> {
    let [lo, hi] = sec.lambda_range;
    let models: Vec<GinkgoModel> = idx
        .iter()
        .map(|&i| model_at(&set.jets[i], 1.0))
        .collect::<Result<_>>()?;
    Ok(fit_lambda_by_evidence(&models, lo, hi, sec.full_max()))
}

/// Both fits of one set over the jets of the full trellis (the truth fit only over those with
/// a truth tree).
fn fit_set(set: &LoadedSet, sec: &PythiaJetsSection) -> Result<Vec<FitRow>> {
    let [lo, hi] = sec.lambda_range;
    let idx = set.fit_jets(sec.full_max());
    if idx.is_empty() {
        bail!(
            "set {:?}: no jet has at most pythia_jets.full_max_leaves = {} leaves, so λ cannot be fitted by evidence; raise full_max_leaves or lower min_leaves",
            set.name,
            sec.full_max()
        );
    }
    let mut rows = vec![fit_row(&set.name, "evidence", evidence_fit(set, &idx, sec)?)?];
    let (jets, trees): (Vec<GinkgoModel>, Vec<Tree>) = idx
        .iter()
        .filter_map(|&i| Some((model_at(&set.jets[i], 1.0).ok()?, set.truths[i].clone()?)))
        .unzip();
    rows.push(if jets.is_empty() {
        FitRow {
            set: set.name.clone(),
            method: "truth",
            fit: Err("no truth trees".into()),
        }
    } else {
        fit_row(&set.name, "truth", fit_lambda_on_trees(&jets, &trees, lo, hi))?
    });
    Ok(rows)
}

/// The λ the methods run at on `set`.
fn chosen_lambda(set: &LoadedSet, choice: LambdaChoice, fits: &[FitRow]) -> Result<f64> {
    let method = match choice {
        LambdaChoice::Value(v) => return Ok(v),
        LambdaChoice::Evidence => "evidence",
        LambdaChoice::Truth => "truth",
    };
    let row = fits
        .iter()
        .find(|r| r.set == set.name && r.method == method)
        .context("a fit is missing")?;
    match &row.fit {
        Ok(f) => Ok(f.lambda),
        Err(why) => bail!(
            "pythia_jets.lambda = {method:?}: set {:?} has no {method} fit ({why}); use {} or a number",
            set.name,
            if method == "truth" { "\"evidence\"" } else { "\"truth\"" }
        ),
    }
}

/// `points` values of λ evenly spaced in log λ over `range`, both ends included exactly.
pub fn log_grid(range: [f64; 2], points: usize) -> Vec<f64> {
    let (a, b) = (range[0].ln(), range[1].ln());
    (0..points)
        .map(|k| match k {
            0 => range[0],
            k if k + 1 == points => range[1],
            k => (a + (b - a) * k as f64 / (points - 1) as f64).exp(),
        })
        .collect()
}

/// The scan of one set: per λ of the grid, Σ log Z over the jets with a finite one, and
/// Σ log p(truth) over the jets with a finite truth likelihood (which jets those are does not
/// depend on λ: only t_cut forbids), with both counts.
struct ScanRow {
    lambda: f64,
    log_z: (f64, usize),
    truth: Option<(f64, usize)>,
}

/// One jet at one λ: (log Z, log p(truth)).
type JetAt = (f64, Option<f64>);

fn scan_set(set: &LoadedSet, grid: &[f64], max_leaves: usize) -> Result<Vec<ScanRow>> {
    // Per jet, per λ; summed over jets in their order.
    let idx = set.fit_jets(max_leaves);
    let per_jet: Vec<Vec<JetAt>> = idx
        .par_iter()
        .map(|&i| (&set.jets[i], &set.truths[i]))
        .map(|(j, truth)| {
            grid.iter()
                .map(|&lambda| {
                    let m = model_at(j, lambda)?;
                    let t = FullTrellis::build_with_limit(&m, max_leaves)
                        .with_context(|| format!("jet {:?}", j.name))?;
                    Ok((t.log_partition(), truth.as_ref().map(|t| t.log_likelihood(&m))))
                })
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<_>>()?;
    let has_truth = idx.iter().any(|&i| set.truths[i].is_some());
    Ok(grid
        .iter()
        .enumerate()
        .map(|(k, &lambda)| {
            let sum = |f: &dyn Fn(&JetAt) -> Option<f64>| {
                per_jet
                    .iter()
                    .filter_map(|v| f(&v[k]).filter(|x| x.is_finite()))
                    .fold((0.0, 0usize), |(s, n), x| (s + x, n + 1))
            };
            ScanRow {
                lambda,
                log_z: sum(&|v| Some(v.0)),
                truth: has_truth.then(|| sum(&|v| v.1)),
            }
        })
        .collect())
}

/// Runs the kind.
pub fn run(sec: &PythiaJetsSection, ctx: &mut RunContext) -> Result<()> {
    let t0 = Instant::now();
    let mut dropped = Vec::new();
    let sets: Vec<LoadedSet> = sec
        .sets
        .iter()
        .enumerate()
        .map(|(k, s)| load_set(k, s, sec, &mut dropped))
        .collect::<Result<_>>()?;
    if sec.lambda == LambdaChoice::Truth {
        if let Some(s) = sets.iter().find(|s| !s.has_truth()) {
            bail!(
                "pythia_jets.lambda = \"truth\" fits λ on truth trees, and set {:?} has none; use \"evidence\" or a number",
                s.name
            );
        }
    }
    crate::experiment::dropped::report(ctx, &dropped);
    ctx.manifest.timing("load", t0.elapsed().as_secs_f64());

    let t1 = Instant::now();
    let mut fits = Vec::new();
    for s in &sets {
        fits.extend(fit_set(s, sec)?);
    }
    ctx.manifest.timing("fits", t1.elapsed().as_secs_f64());
    let lambdas: Vec<f64> = sets
        .iter()
        .map(|s| chosen_lambda(s, sec.lambda, &fits))
        .collect::<Result<_>>()?;

    let t2 = Instant::now();
    let grid = log_grid(sec.lambda_range, sec.scan_points);
    let mut scan = Vec::new();
    for s in &sets {
        scan.push(scan_set(s, &grid, sec.full_max())?);
    }
    ctx.manifest.timing("scan", t2.elapsed().as_secs_f64());
    write_scan(&sets, &scan, &ctx.path("lambda_scan.parquet"))?;

    let t3 = Instant::now();
    let records = score_all(&sets, &lambdas, sec)?;
    ctx.manifest.timing("score_all_jets", t3.elapsed().as_secs_f64());
    ctx.manifest.set(
        "lambda_chosen",
        sets.iter()
            .zip(&lambdas)
            .map(|(s, l)| (s.name.clone(), *l))
            .collect::<std::collections::BTreeMap<_, _>>(),
    );
    ctx.manifest.set("n_jets", records.len());
    write_jets_table(&records, &ctx.path("jets.parquet"))?;
    write_exact_table(&records, &ctx.path("exact.parquet"))?;
    write_summary(&records, sec.large_from, &ctx.path("summary.parquet"))?;
    write_by_n(&records, &ctx.path("by_n.parquet"))?;

    let t4 = Instant::now();
    let mut holdout = Vec::new();
    if sec.holdout {
        for s in sets.iter().filter(|s| s.has_truth()) {
            let (half_fits, rows) = super::holdout::holdout_set(s, sec, &fits)?;
            fits.extend(half_fits);
            holdout.extend(rows);
        }
        ctx.manifest.timing("lambda_holdout", t4.elapsed().as_secs_f64());
    }
    super::holdout::write_holdout(&holdout, &ctx.path("lambda_holdout.parquet"))?;
    write_fits(&fits, &sets, &lambdas, sec, &ctx.path("lambda_fit.parquet"))
}

/// Every jet of every set scored at its set's λ, in set and jet order: the jets of the full
/// trellis in parallel, then the larger ones one at a time, largest first (the MAP-only trellis
/// runs in parallel itself, and one at a time its tables, 1.2 GiB at N = 24, are held once).
fn score_all(sets: &[LoadedSet], lambdas: &[f64], sec: &PythiaJetsSection) -> Result<Vec<JetRecord>> {
    let work: Vec<(usize, usize)> = sets
        .iter()
        .enumerate()
        .flat_map(|(k, s)| (0..s.jets.len()).map(move |i| (k, i)))
        .collect();
    // (set, jet) of the jets of the full trellis, and of the larger ones.
    type Work = Vec<(usize, usize)>;
    let (small, mut large): (Work, Work) = work
        .into_iter()
        .partition(|&(k, i)| sets[k].jets[i].n_leaves <= sec.full_max());
    large.sort_by_key(|&(k, i)| (std::cmp::Reverse(sets[k].jets[i].n_leaves), k, i));
    let pb = crate::experiment::progress_bar((small.len() + large.len()) as u64, "jets");
    let one = |&(k, i): &(usize, usize)| {
        let s = &sets[k];
        let r = score_jet(&s.name, i, &s.jets[i], s.truths[i].as_ref(), lambdas[k], sec);
        pb.inc(1);
        r
    };
    let mut records: Vec<JetRecord> = small.par_iter().map(one).collect::<Result<_>>()?;
    for w in &large {
        records.push(one(w)?);
    }
    pb.finish_and_clear();
    let order = |r: &JetRecord| (sets.iter().position(|s| s.name == r.set), r.index);
    records.sort_by_key(order);
    Ok(records)
}

/// `lambda_fit.parquet`: one row per set and fit, with the λ the methods ran at.
fn write_fits(
    fits: &[FitRow],
    sets: &[LoadedSet],
    lambdas: &[f64],
    sec: &PythiaJetsSection,
    path: &std::path::Path,
) -> Result<()> {
    let chosen = |set: &str| {
        sets.iter()
            .position(|s| s.name == set)
            .map(|k| lambdas[k])
    };
    fn ok(r: &FitRow) -> Option<&LambdaFit> {
        r.fit.as_ref().ok()
    }
    let f = |g: &dyn Fn(&LambdaFit) -> f64| fits.iter().map(|r| ok(r).map(g)).collect::<Vec<_>>();
    let u = |g: &dyn Fn(&LambdaFit) -> u64| fits.iter().map(|r| ok(r).map(g)).collect::<Vec<_>>();
    let [lo, hi] = sec.lambda_range;
    Table::new()
        .str("set", &fits.iter().map(|r| r.set.clone()).collect::<Vec<_>>())
        .str("method", &fits.iter().map(|r| r.method).collect::<Vec<_>>())
        .f64("lambda", &f(&|x| x.lambda))
        .f64("objective", &f(&|x| x.objective))
        .u64("evaluations", &u(&|x| x.evaluations))
        .u64("jets_used", &u(&|x| x.jets_used as u64))
        .u64("jets_left_out", &u(&|x| x.jets_left_out as u64))
        .u64("at_bound", &u(&|x| u64::from(x.at_bound)))
        .f64("std_error", &f(&|x| x.std_error))
        .f64("lambda_min", &vec![Some(lo); fits.len()])
        .f64("lambda_max", &vec![Some(hi); fits.len()])
        .f64(
            "lambda_chosen",
            &fits.iter().map(|r| chosen(&r.set)).collect::<Vec<_>>(),
        )
        .str(
            "note",
            &fits
                .iter()
                .map(|r| r.fit.as_ref().err().cloned().unwrap_or_default())
                .collect::<Vec<_>>(),
        )
        .write_parquet(path)
}

/// `lambda_scan.parquet`: one row per set and λ of the grid.
fn write_scan(sets: &[LoadedSet], scan: &[Vec<ScanRow>], path: &std::path::Path) -> Result<()> {
    let (mut set, mut lambda, mut lz, mut nz, mut lt, mut nt) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for (s, rows) in sets.iter().zip(scan) {
        for r in rows {
            set.push(s.name.clone());
            lambda.push(Some(r.lambda));
            lz.push(Some(r.log_z.0));
            nz.push(Some(r.log_z.1 as u64));
            lt.push(r.truth.map(|t| t.0));
            nt.push(r.truth.map(|t| t.1 as u64));
        }
    }
    Table::new()
        .str("set", &set)
        .f64("lambda", &lambda)
        .f64("sum_log_z", &lz)
        .u64("jets_log_z", &nz)
        .f64("sum_log_p_truth", &lt)
        .u64("jets_truth", &nt)
        .write_parquet(path)
}
