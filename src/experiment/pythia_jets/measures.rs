//! The numbers `check` reads from the tables:
//! - `lambda.<set>.<evidence|truth>.{value,objective,jets_used,jets_left_out,at_bound}` from
//!   `lambda_fit.parquet` (fits that could not run are absent);
//! - `scan.<set>.best_lambda.{log_z,truth}`: the grid's λ with the largest Σ log Z and
//!   Σ log p(truth);
//! - `exact.<set>.{jets,mean_log_z}` and `truth.<set>.{jets,forbidden,ranked,rank_capped,
//!   rank1_share,median_log10_rank,mean_posterior}` from `exact.parquet` (the median over the
//!   ranked truth trees, a capped rank counted at its lower bound; the mean posterior over every
//!   truth tree, a forbidden one counted as 0);
//! - `summary.<set>.<all|n_ge_K>.<method>.<metric>` from `summary.parquet` (its mean), for the
//!   metrics of [`CHECKED`].

use crate::experiment::check::Measure;
use crate::experiment::kind::Results;
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::Result;

/// The metrics of `summary.parquet` that are measures (the others follow from them: RF / its
/// maximum is 1 − truth recovered for full binary trees, a property `check` verifies; or they are
/// read off the jets table).
pub const CHECKED: [&str; 6] = [
    "truth_recovered",
    "lund_fraction",
    "lund_agrees",
    "gap_to_map",
    "forbidden",
    "map_better_recovery",
];

/// The set names of a table's `set` column, in first-seen order.
pub fn sets_of(set: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in set {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}

/// The median of `v` (NaN when empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        k if k % 2 == 1 => v[k / 2],
        k => 0.5 * (v[k / 2 - 1] + v[k / 2]),
    }
}

/// A leaf-range label of `summary.parquet` as a measure-id part (`n>=10` → `n_ge_10`).
pub fn range_id(leaves: &str) -> String {
    leaves.replace(">=", "_ge_")
}

/// Every measure (see the module documentation).
pub fn measures(results: &Results) -> Result<Vec<Measure>> {
    let mut out = Vec::new();
    let t = results.table("lambda_fit")?;
    let (set, method) = (str_column(&t, "set")?, str_column(&t, "method")?);
    let (lambda, objective) = (f64_column(&t, "lambda")?, f64_column(&t, "objective")?);
    let (used, left, bound) = (
        u64_column(&t, "jets_used")?,
        u64_column(&t, "jets_left_out")?,
        u64_column(&t, "at_bound")?,
    );
    for i in 0..t.height() {
        let Some(l) = lambda[i] else {
            continue;
        };
        let id = format!("lambda.{}.{}", set[i], method[i]);
        let what = format!("λ fitted by {} on set {}", method[i], set[i]);
        let as_f = |v: Option<u64>| v.map_or(f64::NAN, |v| v as f64);
        for (k, v) in [
            ("value", l),
            ("objective", objective[i].unwrap_or(f64::NAN)),
            ("jets_used", as_f(used[i])),
            ("jets_left_out", as_f(left[i])),
            ("at_bound", as_f(bound[i])),
        ] {
            out.push(Measure::new(format!("{id}.{k}"), format!("{what}: {k}"), v));
        }
    }

    let t = results.table("lambda_scan")?;
    let (set, lambda) = (str_column(&t, "set")?, f64_column(&t, "lambda")?);
    let (lz, lt) = (f64_column(&t, "sum_log_z")?, f64_column(&t, "sum_log_p_truth")?);
    for s in sets_of(&set) {
        for (k, col) in [("log_z", &lz), ("truth", &lt)] {
            let best = (0..t.height())
                .filter(|&i| set[i] == s)
                .filter_map(|i| Some((col[i]?, lambda[i]?)))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((_, l)) = best {
                out.push(Measure::new(
                    format!("scan.{s}.best_lambda.{k}"),
                    format!("set {s}: the scanned λ with the largest Σ {k}"),
                    l,
                ));
            }
        }
    }

    let t = results.table("exact")?;
    let set = str_column(&t, "set")?;
    let log_z = f64_column(&t, "log_z")?;
    let has = u64_column(&t, "has_truth")?;
    let forbidden = u64_column(&t, "truth_forbidden")?;
    let rank = u64_column(&t, "truth_rank")?;
    let capped = u64_column(&t, "truth_rank_capped")?;
    let log10 = f64_column(&t, "truth_log10_rank")?;
    let post = f64_column(&t, "truth_posterior")?;
    for s in sets_of(&set) {
        let rows: Vec<usize> = (0..t.height()).filter(|&i| set[i] == s).collect();
        let zs: Vec<f64> = rows.iter().filter_map(|&i| log_z[i]).collect();
        out.push(Measure::new(
            format!("exact.{s}.jets"),
            format!("set {s}: jets"),
            rows.len() as f64,
        ));
        out.push(Measure::new(
            format!("exact.{s}.mean_log_z"),
            format!("set {s}: mean log Z at the chosen λ"),
            zs.iter().sum::<f64>() / zs.len().max(1) as f64,
        ));
        let with: Vec<usize> = rows.iter().copied().filter(|&i| has[i] == Some(1)).collect();
        if with.is_empty() {
            continue;
        }
        let count = |f: &dyn Fn(usize) -> bool| with.iter().filter(|&&i| f(i)).count() as f64;
        let ranked: Vec<usize> = with.iter().copied().filter(|&i| rank[i].is_some()).collect();
        let posts: Vec<f64> = with.iter().filter_map(|&i| post[i]).collect();
        for (k, what, v) in [
            ("jets", "jets with a truth tree", with.len() as f64),
            ("forbidden", "truth trees with likelihood 0 (a cluster below t_cut)", count(&|i| forbidden[i] == Some(1))),
            ("ranked", "truth trees ranked", ranked.len() as f64),
            ("rank_capped", "truth ranks capped (lower bounds)", count(&|i| capped[i] == Some(1))),
            (
                "rank1_share",
                "share of ranked truth trees that are the MAP (rank 1)",
                ranked.iter().filter(|&&i| rank[i] == Some(1)).count() as f64
                    / ranked.len().max(1) as f64,
            ),
            (
                "median_log10_rank",
                "median log10 rank of the ranked truth trees (capped ones at their bound)",
                median(ranked.iter().filter_map(|&i| log10[i]).collect()),
            ),
            (
                "mean_posterior",
                "mean exact posterior probability of the truth tree (forbidden: 0)",
                posts.iter().sum::<f64>() / posts.len().max(1) as f64,
            ),
        ] {
            out.push(Measure::new(
                format!("truth.{s}.{k}"),
                format!("set {s}: {what}"),
                v,
            ));
        }
    }

    let t = results.table("summary")?;
    let (set, leaves, method, metric) = (
        str_column(&t, "set")?,
        str_column(&t, "leaves")?,
        str_column(&t, "method")?,
        str_column(&t, "metric")?,
    );
    let mean = f64_column(&t, "mean")?;
    for i in (0..t.height()).filter(|&i| CHECKED.contains(&metric[i].as_str())) {
        out.push(Measure::new(
            format!(
                "summary.{}.{}.{}.{}",
                set[i],
                range_id(&leaves[i]),
                method[i],
                metric[i]
            ),
            format!(
                "set {}, {} leaves, {}: mean {}",
                set[i], leaves[i], method[i], metric[i]
            ),
            mean[i].unwrap_or(f64::NAN),
        ));
    }
    Ok(out)
}
