//! λ out of sample. The evidence fit of λ uses no truth tree, but the methods then run on the
//! jets it was fitted on. Here the jets of the fit (those of the full trellis, in file order) are
//! cut into a first and a second half, λ is fitted by evidence on each half
//! (`lambda_fit.parquet`, methods `evidence_half_1` and `evidence_half_2`), and the λ-dependent
//! methods (the exact MAP, beam search, greedy) run on every jet of a set with truth trees under
//! three choices of λ (`scheme`):
//! - `in_sample`: the evidence fit on all of the set's jets (what the headline's run uses when
//!   `lambda = "evidence"`);
//! - `out_of_sample`: the jets of each half at the other half's fit;
//! - `placeholder`: the jets file's `lam` (1.5 in `data/pythia/`, Ginkgo's QCD value).
//!
//! `lambda_holdout.parquet` has one row per set, scheme, jet and method, with its λ, its
//! likelihood under that λ, its gap to that λ's MAP and its comparison with the truth tree.

use super::compare::Comparison;
use super::run::{evidence_fit, fit_row, FitRow, LoadedSet};
use super::score::{gap, model_methods_at, with_size_columns, MethodRecord};
use super::PythiaJetsSection;
use crate::experiment::table::Table;
use anyhow::Result;
use rayon::prelude::*;
use std::path::Path;

/// The schemes, in table order.
pub const SCHEMES: [&str; 3] = ["in_sample", "out_of_sample", "placeholder"];

/// One row of `lambda_holdout.parquet`.
#[derive(Clone, Debug)]
pub struct HoldoutRow {
    set: String,
    scheme: &'static str,
    jet: usize,
    n: usize,
    half: u64,
    lambda: f64,
    map: f64,
    record: MethodRecord,
}

/// The two halves' fits of `set` and its rows (none when it has fewer than two jets of the
/// fit, or a fit is missing: the rows of the fits say why).
pub fn holdout_set(
    set: &LoadedSet,
    sec: &PythiaJetsSection,
    fits: &[FitRow],
) -> Result<(Vec<FitRow>, Vec<HoldoutRow>)> {
    let idx = set.fit_jets(sec.full_max());
    if idx.len() < 2 {
        return Ok((Vec::new(), Vec::new()));
    }
    let (first, second) = idx.split_at(idx.len().div_ceil(2));
    let half_fits = vec![
        fit_row(&set.name, "evidence_half_1", evidence_fit(set, first, sec)?)?,
        fit_row(&set.name, "evidence_half_2", evidence_fit(set, second, sec)?)?,
    ];
    let lambda_of = |r: &FitRow| r.fit.as_ref().ok().map(|f| f.lambda);
    let all = fits
        .iter()
        .find(|r| r.set == set.name && r.method == "evidence")
        .and_then(lambda_of);
    let (Some(all), Some(l1), Some(l2)) = (
        all,
        lambda_of(&half_fits[0]),
        lambda_of(&half_fits[1]),
    ) else {
        return Ok((half_fits, Vec::new()));
    };
    let mut work = Vec::new();
    for scheme in SCHEMES {
        for (k, &i) in idx.iter().enumerate() {
            let Some(truth) = set.truths[i].as_ref() else {
                continue;
            };
            let half = if k < first.len() { 1 } else { 2 };
            let lambda = match scheme {
                "in_sample" => all,
                "out_of_sample" if half == 1 => l2,
                "out_of_sample" => l1,
                _ => set.jets[i].lam,
            };
            work.push((scheme, i, half, lambda, truth));
        }
    }
    let rows: Vec<Vec<HoldoutRow>> = work
        .par_iter()
        .map(|&(scheme, i, half, lambda, truth)| {
            let jet = &set.jets[i];
            let name = format!("set {:?}, jet {:?}, λ {scheme}", set.name, jet.name);
            let (map, records) = model_methods_at(&name, jet, Some(truth), lambda, true, sec)?;
            Ok(records
                .into_iter()
                .map(|record| HoldoutRow {
                    set: set.name.clone(),
                    scheme,
                    jet: i,
                    n: jet.n_leaves,
                    half,
                    lambda,
                    map,
                    record,
                })
                .collect())
        })
        .collect::<Result<_>>()?;
    Ok((half_fits, rows.into_iter().flatten().collect()))
}

/// `lambda_holdout.parquet` (see the module documentation).
pub fn write_holdout(rows: &[HoldoutRow], path: &Path) -> Result<()> {
    let f = |g: &dyn Fn(&HoldoutRow) -> Option<f64>| rows.iter().map(g).collect::<Vec<_>>();
    let u = |g: &dyn Fn(&HoldoutRow) -> Option<u64>| rows.iter().map(g).collect::<Vec<_>>();
    let c = |g: &dyn Fn(&Comparison) -> u64| {
        rows.iter()
            .map(|r| r.record.comparison.as_ref().map(g))
            .collect::<Vec<_>>()
    };
    let table = Table::new()
        .str("set", &rows.iter().map(|r| r.set.clone()).collect::<Vec<_>>())
        .str("scheme", &rows.iter().map(|r| r.scheme).collect::<Vec<_>>())
        .u64("jet_index", &u(&|r| Some(r.jet as u64)))
        .u64("n_leaves", &u(&|r| Some(r.n as u64)))
        .u64("half", &u(&|r| Some(r.half)))
        .f64("lambda", &f(&|r| Some(r.lambda)))
        .str(
            "method",
            &rows.iter().map(|r| r.record.method.name()).collect::<Vec<_>>(),
        )
        .f64("log_likelihood", &f(&|r| Some(r.record.log_likelihood)))
        .f64(
            "gap_to_map",
            &f(&|r| Some(gap(r.map, r.record.log_likelihood))),
        )
        .f64(
            "truth_recovered",
            &f(&|r| r.record.comparison.and_then(|c| c.recovered)),
        )
        .u64("shared_clusters", &c(&|x| x.shared_clusters as u64))
        .u64("truth_clusters", &c(&|x| x.truth_clusters as u64));
    let comparisons: Vec<Option<Comparison>> = rows.iter().map(|r| r.record.comparison).collect();
    with_size_columns(table, &comparisons)
        .str(
            "tree_newick",
            &rows.iter().map(|r| r.record.newick.clone()).collect::<Vec<_>>(),
        )
        .write_parquet(path)
}
