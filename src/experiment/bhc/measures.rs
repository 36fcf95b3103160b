//! The tables of a bhc run (written from the job records) and the numbers `check` reads off
//! them: summaries per data set and N, and the properties every run must have.

use super::data::DatasetSpec;
use super::run::Row;
use crate::experiment::check::Measure;
use crate::experiment::kind::Results;
use crate::experiment::stats::mean_std;
use crate::experiment::table::{f64_column, str_column, u64_column, Table};
use anyhow::Result;
use std::collections::BTreeMap;

/// The relative tolerance of the inequalities between log numbers (bound ≤ evidence, greedy ≤
/// best): `1e-9 · max(1, |reference|)` nats. The trellis and the greedy recursion add the same
/// terms in different orders, so equal values differ by a few ulps (e.g. `-1e-14`).
pub const REL_TOL: f64 = 1e-9;

/// How far outside [0, 1] a co-clustering probability may be: it is a sum of up to `N` cluster
/// marginals (exact: over all subsets holding the pair), each rounded, so 1 can come out as
/// `1 + 2e-16` and more.
pub const PROB_TOL: f64 = 1e-12;

/// `REL_TOL · max(1, |v|)`.
pub fn tol(v: f64) -> f64 {
    REL_TOL * v.abs().max(1.0)
}

/// The quantities `summary.parquet` averages per data set and N, with the `bhc.parquet`
/// column each is read from.
pub const SUMMARY: [&str; 6] = [
    "bound_gap",
    "best_minus_greedy",
    "brt_gap",
    "ari_cut_map",
    "coclustering_max_abs_diff",
    "coclustering_mean_abs_diff",
];

fn opt(v: f64) -> Option<f64> {
    Some(v).filter(|x| !x.is_nan())
}

/// `bhc.parquet`: one row per subset.
pub fn rows_table(rows: &[Row], names: &[String], specs: &[DatasetSpec]) -> Table {
    let f = |g: &dyn Fn(&Row) -> f64| rows.iter().map(|r| opt(g(r))).collect::<Vec<_>>();
    let o = |g: &dyn Fn(&Row) -> Option<f64>| rows.iter().map(g).collect::<Vec<_>>();
    let u = |g: &dyn Fn(&Row) -> u64| rows.iter().map(|r| Some(g(r))).collect::<Vec<_>>();
    let s = |g: &dyn Fn(&Row) -> String| rows.iter().map(g).collect::<Vec<_>>();
    Table::new()
        .str("dataset", &s(&|r| names[r.dataset].clone()))
        .str("model", &s(&|r| specs[r.dataset].model.as_str().to_string()))
        .u64("n", &u(&|r| r.n as u64))
        .u64("subset", &u(&|r| r.subset as u64))
        .str(
            "rows",
            &s(&|r| {
                let v: Vec<String> = r.rows.iter().map(|i| i.to_string()).collect();
                v.join(",")
            }),
        )
        .f64("log_evidence", &f(&|r| r.log_evidence))
        .f64("bhc_log_bound", &f(&|r| r.bhc_log_bound))
        .f64("bound_gap", &f(&|r| r.log_evidence - r.bhc_log_bound))
        .f64("tree_trellis_log_bound", &f(&|r| r.tree_trellis_log_bound))
        // |tree-structured sparse trellis − BHC's own bound| / max(1, |bound|).
        .f64(
            "tree_trellis_rel_diff",
            &f(&|r| {
                (r.tree_trellis_log_bound - r.bhc_log_bound).abs() / r.bhc_log_bound.abs().max(1.0)
            }),
        )
        .f64("best_log_bound", &f(&|r| r.best_log_bound))
        .f64("mean_log_bound", &f(&|r| r.mean_log_bound))
        .f64("best_minus_greedy", &f(&|r| r.best_log_bound - r.bhc_log_bound))
        .f64("evidence_minus_best", &f(&|r| r.log_evidence - r.best_log_bound))
        .u64("greedy_is_best", &u(&|r| r.greedy_is_best as u64))
        .f64("map_log_posterior", &f(&|r| r.map_log_posterior))
        .f64("ari_cut_map", &f(&|r| r.ari_cut_map))
        .u64("clusters_cut", &u(&|r| r.clusters.0 as u64))
        .u64("clusters_map", &u(&|r| r.clusters.1 as u64))
        .f64("ari_cut_classes", &o(&|r| r.ari_classes.map(|a| a.0)))
        .f64("ari_map_classes", &o(&|r| r.ari_classes.map(|a| a.1)))
        .f64("coclustering_max_abs_diff", &f(&|r| r.coclustering_diff.0))
        .f64("coclustering_mean_abs_diff", &f(&|r| r.coclustering_diff.1))
        .f64("brt_log_p", &f(&|r| r.brt.0))
        .u64("brt_internal_nodes", &u(&|r| r.brt.1 as u64))
        .f64("best_rose_log_p", &o(&|r| r.best_rose.map(|b| b.0)))
        .f64("brt_gap", &o(&|r| r.best_rose.map(|b| b.0 - r.brt.0)))
        .f64(
            "best_rose_internal_nodes",
            &o(&|r| r.best_rose.map(|b| b.1 as f64)),
        )
        .f64("seconds_bhc", &f(&|r| r.seconds.0))
        .f64("seconds_rose", &o(&|r| r.seconds.1))
}

/// Mean and standard error (sample standard deviation / √k; absent for one value) of the finite
/// values.
pub fn mean_se(values: &[f64]) -> (f64, Option<f64>, usize) {
    let m = mean_std(values.iter().copied());
    let se = (m.n > 1).then(|| m.std / ((m.n - 1) as f64).sqrt());
    (m.mean, se, m.n)
}

/// `summary.parquet`: per data set, N and quantity of [`SUMMARY`], the mean and standard error
/// over the subsets that have it.
pub fn summary_table(rows: &[Row], names: &[String]) -> Table {
    let value = |q: &str, r: &Row| -> Option<f64> {
        match q {
            "bound_gap" => Some(r.log_evidence - r.bhc_log_bound),
            "best_minus_greedy" => Some(r.best_log_bound - r.bhc_log_bound),
            "brt_gap" => r.best_rose.map(|b| b.0 - r.brt.0),
            "ari_cut_map" => Some(r.ari_cut_map),
            "coclustering_max_abs_diff" => Some(r.coclustering_diff.0),
            _ => Some(r.coclustering_diff.1),
        }
    };
    let mut groups: BTreeMap<(usize, usize), Vec<&Row>> = BTreeMap::new();
    for r in rows {
        groups.entry((r.dataset, r.n)).or_default().push(r);
    }
    let (mut ds, mut n, mut q, mut k, mut mean, mut se) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for ((d, size), rs) in &groups {
        for quantity in SUMMARY {
            let v: Vec<f64> = rs.iter().filter_map(|r| value(quantity, r)).collect();
            if v.is_empty() {
                continue;
            }
            let (m, s, count) = mean_se(&v);
            ds.push(names[*d].clone());
            n.push(Some(*size as u64));
            q.push(quantity.to_string());
            k.push(Some(count as u64));
            mean.push(opt(m));
            se.push(s);
        }
    }
    Table::new()
        .str("dataset", &ds)
        .u64("n", &n)
        .str("quantity", &q)
        .u64("subsets", &k)
        .f64("mean", &mean)
        .f64("se", &se)
}

/// `bhc.parquet` read back: per row, a column's value (NaN where absent).
struct Cols {
    dataset: Vec<String>,
    n: Vec<u64>,
    cols: BTreeMap<&'static str, Vec<f64>>,
}

const READ: [&str; 15] = [
    "log_evidence",
    "bhc_log_bound",
    "bound_gap",
    "best_log_bound",
    "mean_log_bound",
    "best_minus_greedy",
    "tree_trellis_rel_diff",
    "tree_trellis_log_bound",
    "ari_cut_map",
    "coclustering_max_abs_diff",
    "coclustering_mean_abs_diff",
    "brt_log_p",
    "best_rose_log_p",
    "brt_gap",
    "ari_cut_classes",
];

fn read(results: &Results) -> Result<Cols> {
    let t = results.table("bhc")?;
    let mut cols = BTreeMap::new();
    for c in READ {
        let v = f64_column(&t, c)?
            .into_iter()
            .map(|x| x.unwrap_or(f64::NAN))
            .collect();
        cols.insert(c, v);
    }
    let mut greedy_is_best: Vec<f64> = u64_column(&t, "greedy_is_best")?
        .into_iter()
        .map(|x| x.map_or(f64::NAN, |x| x as f64))
        .collect();
    let n = u64_column(&t, "n")?.into_iter().map(|x| x.unwrap_or(0)).collect();
    cols.insert("greedy_is_best", std::mem::take(&mut greedy_is_best));
    Ok(Cols {
        dataset: str_column(&t, "dataset")?,
        n,
        cols,
    })
}

fn mean_of(v: impl Iterator<Item = f64>) -> f64 {
    mean_std(v).mean
}

/// Per data set `d`: `bhc.<d>.subsets`, the means over its subsets of the bound gap, best −
/// greedy, greedy-is-best share, ARI of the cut against the MAP partition, co-clustering
/// differences and BRT's gap to the best rose tree, the largest bound gap, and per N
/// `bhc.<d>.n<N>.bound_gap` and `.best_minus_greedy` (means); then [`properties`].
pub fn measures(results: &Results) -> Result<Vec<Measure>> {
    let c = read(results)?;
    let mut out = vec![Measure::new(
        "bhc.subsets",
        "subsets compared (all data sets and N)",
        c.n.len() as f64,
    )];
    let mut names: Vec<&String> = Vec::new();
    for d in &c.dataset {
        if !names.contains(&d) {
            names.push(d);
        }
    }
    for name in names {
        let idx: Vec<usize> = (0..c.n.len()).filter(|&i| &c.dataset[i] == name).collect();
        let col = |k: &str| idx.iter().map(|&i| c.cols[k][i]).collect::<Vec<f64>>();
        out.push(Measure::new(
            format!("bhc.{name}.subsets"),
            format!("{name}: subsets compared"),
            idx.len() as f64,
        ));
        for (k, what) in [
            ("bound_gap", "mean of log p(D) − BHC's bound (nats)"),
            ("best_minus_greedy", "mean of best BHC tree's bound − greedy's (nats)"),
            ("greedy_is_best", "share of subsets where greedy BHC finds a best tree"),
            ("ari_cut_map", "mean ARI of BHC's r < 0.5 cut against the exact MAP partition"),
            ("coclustering_max_abs_diff", "mean of the largest |BHC − exact| co-clustering"),
            ("coclustering_mean_abs_diff", "mean of the mean |BHC − exact| co-clustering"),
            ("brt_gap", "mean of best rose tree − greedy BRT log p(D|T) (N ≤ rose limit)"),
            ("ari_cut_classes", "mean ARI of BHC's cut against the classes"),
        ] {
            let v = col(k);
            if v.iter().all(|x| x.is_nan()) {
                continue;
            }
            out.push(Measure::new(
                format!("bhc.{name}.{k}"),
                format!("{name}: {what}"),
                mean_of(v.into_iter()),
            ));
        }
        out.push(Measure::new(
            format!("bhc.{name}.max_bound_gap"),
            format!("{name}: largest log p(D) − BHC's bound (nats)"),
            col("bound_gap").into_iter().fold(f64::NAN, f64::max),
        ));
        let mut by_n: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        for &i in &idx {
            by_n.entry(c.n[i]).or_default().push(i);
        }
        for (n, ii) in by_n {
            for k in ["bound_gap", "best_minus_greedy"] {
                out.push(Measure::new(
                    format!("bhc.{name}.n{n}.{k}"),
                    format!("{name}, N = {n}: mean {k}"),
                    mean_of(ii.iter().map(|&i| c.cols[k][i])),
                ));
            }
        }
    }
    out.extend(properties(results)?);
    Ok(out)
}

/// A property measure: `id`, words, and the number of violations over `over` items.
fn property(id: &str, what: &str, violations: usize, over: usize) -> Measure {
    Measure::new(format!("property.{id}"), what, violations as f64).over(over)
}

/// The properties every run has (each a count of violations), with the tolerance [`tol`] on
/// log numbers and exact ranges on the ARI and the co-clustering probabilities:
/// BHC's bound ≤ the evidence, the best tree's bound ≤ the evidence, greedy ≤ the best BHC tree,
/// the average tree ≤ the best, greedy BRT ≤ the best rose tree, the sparse (tree-structured) flat
/// trellis over the BHC tree's clusters equal to BHC's own f (1e-9 relative), every ARI in [−1, 1] and every co-clustering probability (exact and BHC's) in [0, 1] up to [`PROB_TOL`].
pub fn properties(results: &Results) -> Result<Vec<Measure>> {
    let c = read(results)?;
    let rows = c.n.len();
    let g = |k: &str, i: usize| c.cols[k][i];
    let count = |bad: &dyn Fn(usize) -> bool| (0..rows).filter(|&i| bad(i)).count();
    let le = |a: f64, b: f64| a <= b + tol(b);
    let with_rose = (0..rows).filter(|&i| !g("best_rose_log_p", i).is_nan()).count();
    let with_classes = (0..rows).filter(|&i| !g("ari_cut_classes", i).is_nan()).count();
    let p = crate::experiment::kind::Results::table(results, "coclustering")?;
    let (ex, bh) = (f64_column(&p, "exact")?, f64_column(&p, "bhc")?);
    let outside = ex
        .iter()
        .chain(&bh)
        .filter(|v| !v.is_some_and(|v| (-PROB_TOL..=1.0 + PROB_TOL).contains(&v)))
        .count();
    Ok(vec![
        property(
            "bound_at_most_evidence",
            "property: subsets whose BHC bound exceeds log p(D) by more than 1e-9 relative",
            count(&|i| !le(g("bhc_log_bound", i), g("log_evidence", i))),
            rows,
        ),
        property(
            "best_tree_at_most_evidence",
            "property: subsets whose best BHC tree's bound exceeds log p(D) by more than 1e-9 relative",
            count(&|i| !le(g("best_log_bound", i), g("log_evidence", i))),
            rows,
        ),
        property(
            "greedy_at_most_best_tree",
            "property: subsets where greedy BHC's f beats the best tree's F by more than 1e-9 relative",
            count(&|i| !le(g("bhc_log_bound", i), g("best_log_bound", i))),
            rows,
        ),
        property(
            "mean_tree_at_most_best_tree",
            "property: subsets where the average tree's f beats the best tree's by more than 1e-9 relative",
            count(&|i| !le(g("mean_log_bound", i), g("best_log_bound", i))),
            rows,
        ),
        property(
            "sparse_trellis_equals_bhc_f",
            "property: subsets where the sparse (tree-structured) flat trellis over BHC's clusters differs from BHC's f by more than 1e-9 relative",
            count(&|i| {
                let d = g("tree_trellis_rel_diff", i);
                d.is_nan() || d > REL_TOL
            }),
            rows,
        ),
        property(
            "greedy_brt_at_most_best_rose_tree",
            "property: subsets where greedy BRT's log p(D|T) beats the exact best rose tree's by more than 1e-9 relative",
            count(&|i| {
                let b = g("best_rose_log_p", i);
                !b.is_nan() && !le(g("brt_log_p", i), b)
            }),
            with_rose,
        ),
        property(
            "ari_in_range",
            "property: ARIs (cut vs MAP, and vs classes) outside [-1, 1]",
            count(&|i| !(-1.0..=1.0).contains(&g("ari_cut_map", i)))
                + count(&|i| {
                    let a = g("ari_cut_classes", i);
                    !a.is_nan() && !(-1.0..=1.0).contains(&a)
                }),
            rows + with_classes,
        ),
        property(
            "coclustering_in_unit_interval",
            "property: co-clustering probabilities (exact and BHC's) outside [0, 1] by more than 1e-12, or missing",
            outside,
            ex.len() + bh.len(),
        ),
    ])
}
