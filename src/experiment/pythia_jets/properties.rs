//! Properties that hold for any data, each a count of violations that `check` requires to be 0,
//! read off the tables (the trees re-read from their Newick, the distances recomputed):
//! - no method's tree above its jet's exact MAP, every gap ≥ 0, the MAP row equal to the MAP;
//! - log Z at least the MAP (jets of the full trellis);
//! - the truth measures in [0, 1], posterior probabilities in [0, 1], and per jet the posterior
//!   probabilities of the distinct trees found summing to at most 1;
//! - Robinson–Foulds recomputed from the trees: symmetric, equal to the table's, within
//!   [0, 2(N − 2)], and 2 × (truth clusters − shared) (both trees are full binary trees);
//! - the truth's standing consistent: forbidden exactly when its log-likelihood is −inf, then
//!   posterior 0 and no rank; else a rank ≥ 1, at most the number of finite trees when not capped
//!   (jets of the MAP-only trellis: no posterior, no rank);
//! - each fit at least as good as every λ of the scan (the fit is a maximum over the range);
//! - and those of [`super::properties_more`]: the size classes and energies of each comparison
//!   add up, Durham's trees are e+e− kt's, the paired differences of the summary are the
//!   jets', and λ out of sample reproduces the run where it uses the run's λ.

use super::compare::robinson_foulds;
use super::measures::sets_of;
use crate::experiment::check::Measure;
use crate::experiment::kind::Results;
use crate::experiment::table::{f64_column, str_column, u64_column};
use crate::tree::Tree;
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};

pub(super) fn property(id: &str, what: &str, violations: usize, over: usize) -> Measure {
    Measure::new(format!("property.{id}"), what, violations as f64).over(over)
}

/// `a <= b` up to a relative 1e-9.
pub(super) fn le(a: f64, b: f64) -> bool {
    a <= b + 1e-9 * b.abs().max(1.0)
}

/// Every property (see the module documentation).
pub fn properties(results: &Results) -> Result<Vec<Measure>> {
    let e = results.table("exact")?;
    let (eset, ejet) = (str_column(&e, "set")?, u64_column(&e, "jet_index")?);
    let (log_z, map) = (f64_column(&e, "log_z")?, f64_column(&e, "map_log_likelihood")?);
    let key = |s: &str, j: Option<u64>| (s.to_string(), j.unwrap_or(u64::MAX));
    let per_jet: BTreeMap<(String, u64), usize> =
        (0..e.height()).map(|i| (key(&eset[i], ejet[i]), i)).collect();

    let t = results.table("jets")?;
    let (set, jet, method) = (
        str_column(&t, "set")?,
        u64_column(&t, "jet_index")?,
        str_column(&t, "method")?,
    );
    let n = u64_column(&t, "n_leaves")?;
    let (ll, gap, post) = (
        f64_column(&t, "log_likelihood")?,
        f64_column(&t, "gap_to_map")?,
        f64_column(&t, "posterior")?,
    );
    let newick = str_column(&t, "tree_newick")?;
    let (rec, rfn, lund) = (
        f64_column(&t, "truth_recovered")?,
        f64_column(&t, "rf_normalised")?,
        f64_column(&t, "lund_fraction")?,
    );
    let (rf, rf_max, shared, tc) = (
        u64_column(&t, "rf")?,
        u64_column(&t, "rf_max")?,
        u64_column(&t, "shared_clusters")?,
        u64_column(&t, "truth_clusters")?,
    );
    let (mut above, mut neg_gap, mut map_row) = (0, 0, 0);
    let mut n_map_rows = 0;
    for i in 0..t.height() {
        let x = ll[i].unwrap_or(f64::NAN);
        if let Some(&r) = per_jet.get(&key(&set[i], jet[i])) {
            let m = map[r].unwrap_or(f64::NAN);
            above += usize::from(!(x <= m || (x.is_nan() && m.is_nan())));
            if method[i] == "trellis" {
                n_map_rows += 1;
                map_row += usize::from(x.to_bits() != m.to_bits() || gap[i] != Some(0.0));
            }
        } else {
            above += 1;
        }
        neg_gap += usize::from(!gap[i].is_some_and(|g| g >= 0.0));
    }
    let (mut z_below, mut n_z) = (0, 0);
    for i in (0..e.height()).filter(|&i| log_z[i].is_some()) {
        let (z, m) = (log_z[i].unwrap_or(f64::NAN), map[i].unwrap_or(f64::NAN));
        n_z += 1;
        z_below += usize::from(!(le(m, z) || (z == f64::NEG_INFINITY && m == z)));
    }

    // Fractions and probabilities in [0, 1].
    let mut outside = 0;
    let mut n_unit = 0;
    for col in [&rec, &rfn, &lund, &post] {
        for v in col.iter().flatten() {
            n_unit += 1;
            outside += usize::from(!(*v >= 0.0 && le(*v, 1.0)));
        }
    }

    // Per jet: the trees (by Newick), the truth's row, the distinct trees' posterior mass.
    let mut rows_of: BTreeMap<(String, u64), Vec<usize>> = BTreeMap::new();
    for i in 0..t.height() {
        rows_of.entry(key(&set[i], jet[i])).or_default().push(i);
    }
    let (mut mass_over, mut rf_bad, mut n_rf) = (0, 0, 0);
    for rows in rows_of.values() {
        let mut seen = BTreeSet::new();
        let mass: f64 = rows
            .iter()
            .filter(|&&i| seen.insert(newick[i].clone()))
            .filter_map(|&i| post[i])
            .sum();
        mass_over += usize::from(!le(mass, 1.0));
        let Some(&ti) = rows.iter().find(|&&i| method[i] == "truth") else {
            continue;
        };
        let truth = Tree::from_newick(&newick[ti]).ok();
        for &i in rows.iter().filter(|&&i| i != ti) {
            n_rf += 1;
            let tree = Tree::from_newick(&newick[i]).ok();
            let ok = match (&tree, &truth, rf[i], rf_max[i], shared[i], tc[i], n[i]) {
                (Some(a), Some(b), Some(d), Some(dmax), Some(s), Some(c), Some(n)) => {
                    let (ab, ba) = (robinson_foulds(a, b) as u64, robinson_foulds(b, a) as u64);
                    ab == ba
                        && ab == d
                        && dmax == 2 * n.saturating_sub(2)
                        && d <= dmax
                        && d == 2 * (c - s.min(c))
                        && s <= c
                }
                _ => false,
            };
            rf_bad += usize::from(!ok);
        }
    }

    // The truth's standing.
    let has = u64_column(&e, "has_truth")?;
    let tll = f64_column(&e, "truth_log_likelihood")?;
    let forbidden = u64_column(&e, "truth_forbidden")?;
    let tpost = f64_column(&e, "truth_posterior")?;
    let rank = u64_column(&e, "truth_rank")?;
    let capped = u64_column(&e, "truth_rank_capped")?;
    let finite = u64_column(&e, "n_trees_finite")?;
    let full = u64_column(&e, "full_trellis")?;
    let (mut standing, mut n_truth) = (0, 0);
    for i in (0..e.height()).filter(|&i| has[i] == Some(1)) {
        n_truth += 1;
        let minus_inf = tll[i] == Some(f64::NEG_INFINITY);
        let ok = if full[i] == Some(0) {
            // The MAP-only trellis: no log Z, no posterior, no rank.
            forbidden[i] == Some(u64::from(minus_inf))
                && tpost[i].is_none()
                && rank[i].is_none()
                && log_z[i].is_none()
        } else if minus_inf {
            forbidden[i] == Some(1) && tpost[i] == Some(0.0) && rank[i].is_none()
        } else {
            let rank_ok = match (rank[i], capped[i], finite[i]) {
                (Some(r), Some(0), Some(f)) => r >= 1 && r <= f,
                (Some(r), Some(1), _) => r >= 1,
                _ => false,
            };
            forbidden[i] == Some(0) && rank_ok
        };
        standing += usize::from(!ok);
    }

    // Each fit against the scan of its set and objective.
    let f = results.table("lambda_fit")?;
    let (fset, fmethod, fobj) = (
        str_column(&f, "set")?,
        str_column(&f, "method")?,
        f64_column(&f, "objective")?,
    );
    let s = results.table("lambda_scan")?;
    let sset = str_column(&s, "set")?;
    let (lz, lt) = (f64_column(&s, "sum_log_z")?, f64_column(&s, "sum_log_p_truth")?);
    let (mut fit_below, mut n_fits) = (0, 0);
    for name in sets_of(&fset) {
        for i in (0..f.height()).filter(|&i| fset[i] == name) {
            // The fits over all the jets of the scan (not those on half of them).
            let Some(obj) = fobj[i].filter(|_| matches!(fmethod[i].as_str(), "evidence" | "truth"))
            else {
                continue;
            };
            let col = if fmethod[i] == "evidence" { &lz } else { &lt };
            let best = (0..s.height())
                .filter(|&k| sset[k] == name)
                .filter_map(|k| col[k])
                .fold(f64::NEG_INFINITY, f64::max);
            n_fits += 1;
            fit_below += usize::from(!le(best, obj));
        }
    }

    let rows = t.height();
    Ok([
        property(
            "no_method_above_the_exact_map",
            "property: trees scoring above their jet's exact MAP",
            above,
            rows,
        ),
        property(
            "gaps_at_least_zero",
            "property: gaps to the MAP below 0 or missing",
            neg_gap,
            rows,
        ),
        property(
            "map_row_is_the_map",
            "property: MAP rows whose log-likelihood is not the trellis's MAP bit for bit (gap 0)",
            map_row,
            n_map_rows,
        ),
        property(
            "log_z_at_least_the_map",
            "property: jets whose log Z is below their MAP log-likelihood",
            z_below,
            n_z,
        ),
        property(
            "fractions_in_unit_interval",
            "property: truth recovered, RF / max, Lund fraction or posterior outside [0, 1]",
            outside,
            n_unit,
        ),
        property(
            "posterior_mass_at_most_one",
            "property: jets whose distinct trees found have posterior probabilities summing above 1",
            mass_over,
            rows_of.len(),
        ),
        property(
            "robinson_foulds_recomputed",
            "property: RF distances not symmetric, not the table's, or outside [0, 2(N − 2)] when recomputed from the trees",
            rf_bad,
            n_rf,
        ),
        property(
            "truth_standing_consistent",
            "property: truth trees whose forbidden flag, posterior and rank disagree",
            standing,
            n_truth,
        ),
        property(
            "fit_at_least_the_scan",
            "property: fits of λ whose objective is below a scanned λ's",
            fit_below,
            n_fits,
        ),
    ]
    .into_iter()
    .chain(super::properties_more::properties(results)?)
    .collect())
}
