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
//!   metrics of [`CHECKED`], and `....<metric>_se` (its standard error) for those of
//!   [`with_se`];
//! - `best.<set>.<all|n_ge_K>.<veto|kt_family|any>.*` ([`super::measures_best`]): the strongest
//!   physics baseline given the model's t_cut (`veto`), of the kt family as physicists run it
//!   (`kt_family`), and of all (`any`), by mean truth recovery, with the MAP's paired
//!   differences from it;
//! - `holdout.<set>.<scheme>.*` and `by_n.<set>.n<N>.*` ([`super::measures_best`]).

use crate::experiment::check::Measure;
use crate::experiment::kind::Results;
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::Result;

/// The metrics of `summary.parquet` that are measures (the others follow from them: RF / its
/// maximum is 1 − truth recovered for full binary trees, a property `check` verifies; or they are
/// read off the jets table).
pub const CHECKED: [&str; 20] = [
    "truth_recovered",
    "lund_fraction",
    "lund_agrees",
    "gap_to_map",
    "forbidden",
    "map_better_recovery",
    "map_tie_recovery",
    "map_worse_recovery",
    "recovered_pooled",
    "recovered_pooled_2",
    "recovered_pooled_3_4",
    "recovered_pooled_5_up",
    "recovered_energy",
    "map_minus_recovered",
    "map_minus_pooled",
    "map_minus_pooled_2",
    "map_minus_pooled_3_4",
    "map_minus_pooled_5_up",
    "map_minus_energy",
    "map_minus_lund",
];

/// Whether the standard error of a metric of [`CHECKED`] is a measure too: the MAP's paired
/// differences, the mean and the pooled recovery.
pub fn with_se(metric: &str) -> bool {
    metric.starts_with("map_minus") || matches!(metric, "truth_recovered" | "recovered_pooled")
}

/// One row of `summary.parquet`.
#[derive(Clone, Copy, Debug)]
pub struct SummaryValue {
    /// Its mean (or pooled ratio).
    pub mean: f64,
    /// Its standard error.
    pub se: f64,
    /// Its jets.
    pub jets: Option<u64>,
}

/// `summary.parquet` as (set, leaf range, method, metric) → its value.
pub type Summary = std::collections::BTreeMap<(String, String, String, String), SummaryValue>;

/// `summary.parquet` read as a [`Summary`].
pub fn summary(results: &Results) -> Result<Summary> {
    let t = results.table("summary")?;
    let (set, leaves, method, metric) = (
        str_column(&t, "set")?,
        str_column(&t, "leaves")?,
        str_column(&t, "method")?,
        str_column(&t, "metric")?,
    );
    let (mean, se, jets) = (
        f64_column(&t, "mean")?,
        f64_column(&t, "se")?,
        u64_column(&t, "jets")?,
    );
    Ok((0..t.height())
        .map(|i| {
            let key = (
                set[i].clone(),
                leaves[i].clone(),
                method[i].clone(),
                metric[i].clone(),
            );
            let value = SummaryValue {
                mean: mean[i].unwrap_or(f64::NAN),
                se: se[i].unwrap_or(f64::NAN),
                jets: jets[i],
            };
            (key, value)
        })
        .collect())
}

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

    for ((set, leaves, method, metric), v) in summary(results)? {
        if !CHECKED.contains(&metric.as_str()) {
            continue;
        }
        let id = format!("summary.{set}.{}.{method}.{metric}", range_id(&leaves));
        let what = format!(
            "set {set}, {leaves} leaves, {method}: {}",
            metric_words(&metric)
        );
        out.push(Measure::new(&id, &what, v.mean));
        if with_se(&metric) {
            out.push(Measure::new(
                format!("{id}_se"),
                format!("{what}: its standard error"),
                v.se,
            ));
        }
    }
    out.extend(super::measures_best::best(results)?);
    out.extend(super::measures_best::holdout(results)?);
    out.extend(super::measures_best::by_n(results)?);
    Ok(out)
}

/// What a metric of `summary.parquet` is, in words.
pub fn metric_words(metric: &str) -> String {
    let size = |k: &str| match k {
        "2" => "of 2 leaves",
        "3_4" => "of 3 or 4 leaves",
        "5_up" => "of 5 or more leaves",
        _ => "",
    };
    match metric {
        "truth_recovered" => "mean over jets of the share of truth clusters recovered".into(),
        "lund_fraction" => "mean share of the truth's primary Lund emissions found".into(),
        "lund_agrees" => "share of jets whose primary Lund sequence is the truth's".into(),
        "gap_to_map" => "mean log-likelihood gap to the exact MAP (finite gaps)".into(),
        "forbidden" => "share of jets where its tree has likelihood 0".into(),
        "map_better_recovery" => "share of jets where the MAP recovers more truth clusters".into(),
        "map_tie_recovery" => "share of jets where the MAP recovers as many truth clusters".into(),
        "map_worse_recovery" => "share of jets where the MAP recovers fewer truth clusters".into(),
        "recovered_pooled" => "truth clusters recovered over truth clusters, pooled over jets".into(),
        "recovered_energy" => "energy-weighted share of truth clusters recovered, pooled".into(),
        "map_minus_recovered" => "MAP minus it, per-jet share of truth clusters recovered (paired mean)".into(),
        "map_minus_pooled" => "MAP minus it, pooled share of truth clusters recovered".into(),
        "map_minus_energy" => "MAP minus it, energy-weighted pooled share recovered".into(),
        "map_minus_lund" => "MAP minus it, per-jet share of primary Lund emissions found (paired mean)".into(),
        m => {
            if let Some(k) = m.strip_prefix("recovered_pooled_") {
                format!("truth clusters {} recovered over those, pooled over jets", size(k))
            } else if let Some(k) = m.strip_prefix("map_minus_pooled_") {
                format!("MAP minus it, pooled share of truth clusters {} recovered", size(k))
            } else {
                m.to_string()
            }
        }
    }
}
