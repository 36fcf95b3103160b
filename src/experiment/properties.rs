//! Properties that hold for any data, read off the tables of a run ([`super::Experiment::
//! properties`]): each is a count of violations, which `check` requires to be 0 on every run,
//! a user's own data included.

use super::check::Measure;
use super::kind::Results;
use super::table::{f64_column, str_column, u64_column};
use anyhow::Result;
use std::collections::HashMap;

/// A property measure: `id`, words, and the number of violations.
pub(crate) fn property(id: &str, what: &str, violations: usize) -> Measure {
    Measure::new(format!("property.{id}"), what, violations as f64)
}

/// The jets kind (`jets.parquet`): no method's tree scores above the exact MAP of its jet (one
/// canonical scorer makes this exact), log Z is at least the MAP, and a jet with a finite MAP
/// has a finite tree to count.
pub fn jets(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("jets")?;
    let (jet, alg) = (u64_column(&t, "jet_index")?, str_column(&t, "algorithm")?);
    let (ll, log_z) = (f64_column(&t, "log_likelihood")?, f64_column(&t, "log_z")?);
    let count = u64_column(&t, "n_trees_finite")?;
    let mut map: HashMap<u64, f64> = HashMap::new();
    for r in 0..t.height() {
        if matches!(alg[r].as_str(), "trellis" | "map_trellis") {
            if let (Some(j), Some(v)) = (jet[r], ll[r]) {
                map.insert(j, v);
            }
        }
    }
    let (mut above, mut below_z, mut uncounted) = (0, 0, 0);
    let (mut n_above, mut n_z, mut n_finite) = (0, 0, 0);
    for r in 0..t.height() {
        let (Some(j), Some(v)) = (jet[r], ll[r]) else {
            continue;
        };
        if let Some(&m) = map.get(&j) {
            n_above += 1;
            above += usize::from(v > m);
        }
        if alg[r] == "trellis" {
            if let Some(z) = log_z[r] {
                n_z += 1;
                if z < v - 1e-9 * v.abs().max(1.0) {
                    below_z += 1;
                }
            }
            if v.is_finite() {
                n_finite += 1;
                uncounted += usize::from(count[r] == Some(0));
            }
        }
    }
    Ok(vec![
        property(
            "no_method_above_the_exact_map",
            "property: trees scoring above their jet's exact MAP",
            above,
        )
        .over(n_above),
        property(
            "log_z_at_least_the_map",
            "property: jets whose log Z is below their MAP log-likelihood",
            below_z,
        )
        .over(n_z),
        property(
            "finite_map_has_finite_trees",
            "property: jets with a finite MAP but no finite tree counted",
            uncounted,
        )
        .over(n_finite),
    ])
}

/// The board (`board.parquet`): posterior probabilities at most 1, ranks at least 1 and the
/// exact MAP ranked first, no method's tree more probable than the exact MAP's, and purity,
/// subtree score and ARI AUC in [0, 1].
pub fn board(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("board")?;
    let (d, i, m, k) = (
        str_column(&t, "dataset")?,
        str_column(&t, "instance")?,
        str_column(&t, "method")?,
        str_column(&t, "metric")?,
    );
    let v = f64_column(&t, "value")?;
    let mut map: HashMap<(&str, &str), f64> = HashMap::new();
    for r in 0..t.height() {
        if m[r] == "trellis" && k[r] == "log_posterior" {
            if let Some(x) = v[r] {
                map.insert((d[r].as_str(), i[r].as_str()), x);
            }
        }
    }
    let (mut prob, mut rank, mut first, mut above, mut unit) = (0, 0, 0, 0, 0);
    // How many values each property is checked over.
    let (mut n_post, mut n_rank, mut n_first, mut n_above, mut n_unit) = (0, 0, 0, 0, 0);
    for r in 0..t.height() {
        let Some(x) = v[r] else {
            continue;
        };
        match k[r].as_str() {
            "log_posterior" => {
                n_post += 1;
                prob += usize::from(x > 1e-9);
                if let Some(&best) = map.get(&(d[r].as_str(), i[r].as_str())) {
                    n_above += 1;
                    above += usize::from(x > best);
                }
            }
            "posterior_rank" => {
                n_rank += 1;
                rank += usize::from(x < 1.0);
                if m[r] == "trellis" {
                    n_first += 1;
                    first += usize::from(x != 1.0);
                }
            }
            "dendrogram_purity" | "subtree_score" | "ari_auc" => {
                n_unit += 1;
                unit += usize::from(!(0.0..=1.0 + 1e-12).contains(&x));
            }
            _ => {}
        }
    }
    Ok(vec![
        property(
            "posterior_at_most_one",
            "property: trees with a posterior probability above 1",
            prob,
        )
        .over(n_post),
        property(
            "ranks_at_least_one",
            "property: posterior ranks below 1",
            rank,
        )
        .over(n_rank),
        property(
            "exact_map_ranked_first",
            "property: instances whose exact MAP tree is not ranked first",
            first,
        )
        .over(n_first),
        property(
            "no_method_above_the_exact_map",
            "property: trees more probable than their instance's exact MAP",
            above,
        )
        .over(n_above),
        property(
            "scores_in_unit_interval",
            "property: purity, subtree score or ARI AUC outside [0, 1]",
            unit,
        )
        .over(n_unit),
    ])
}

/// `a` above `b` beyond rounding (relative 1e-9).
fn above(a: f64, b: f64) -> bool {
    a > b + 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Rows where both columns hold a value and `a` exceeds `b` beyond rounding ([`above`]).
fn count_above(a: &[Option<f64>], b: &[Option<f64>]) -> usize {
    a.iter()
        .zip(b)
        .filter(|(x, y)| matches!((x, y), (Some(x), Some(y)) if above(*x, *y)))
        .count()
}

/// The dasgupta kind (`dasgupta.parquet`): the exact MAP's Dasgupta cost is at most average
/// linkage's and greedy's on every graph.
pub fn dasgupta(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("dasgupta")?;
    let map = f64_column(&t, "map_cost")?;
    let mut worse = 0;
    for other in ["average_linkage_cost", "greedy_cost"] {
        let o = f64_column(&t, other)?;
        worse += count_above(&map, &o);
    }
    Ok(vec![property(
        "exact_map_cost_lowest",
        "property: graphs where a method's tree costs less than the exact MAP's",
        worse,
    )])
}

/// The pam50 kind (`pam50_trees.parquet`): per weighting, the exact MAP's energy is at most
/// every other tree's, the posterior entropy is at least 0, at least one tree is a MAP, and
/// purity lies in [0, 1].
pub fn pam50(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("pam50_trees")?;
    let weighting = str_column(&t, "weighting")?;
    let energy = f64_column(&t, "energy")?;
    let log_z = f64_column(&t, "log_z")?;
    let entropy = f64_column(&t, "posterior_entropy_nats")?;
    let n_map = f64_column(&t, "n_map_trees")?;
    let purity = f64_column(&t, "dendrogram_purity")?;
    let mut best: HashMap<&str, f64> = HashMap::new();
    for r in 0..t.height() {
        if let (Some(_), Some(e)) = (log_z[r], energy[r]) {
            best.insert(weighting[r].as_str(), e);
        }
    }
    let (mut lower, mut neg, mut no_map, mut unit) = (0, 0, 0, 0);
    for r in 0..t.height() {
        if let (Some(&b), Some(e)) = (best.get(weighting[r].as_str()), energy[r]) {
            lower += usize::from(above(b, e));
        }
        neg += usize::from(entropy[r].is_some_and(|h| h < -1e-9));
        no_map += usize::from(n_map[r].is_some_and(|k| k < 1.0));
        unit += usize::from(purity[r].is_some_and(|p| !(0.0..=1.0 + 1e-12).contains(&p)));
    }
    Ok(vec![
        property(
            "exact_map_energy_lowest",
            "property: trees with a lower energy than the exact MAP's",
            lower,
        ),
        property(
            "entropy_at_least_zero",
            "property: negative posterior entropies",
            neg,
        ),
        property(
            "some_tree_is_a_map",
            "property: exact results counting no MAP tree",
            no_map,
        ),
        property(
            "purity_in_unit_interval",
            "property: dendrogram purities outside [0, 1]",
            unit,
        ),
    ])
}

/// The astar kind (`astar.parquet`): A*'s upper bound is at least its tree's value and the
/// exact MAP; no tree (A*'s, beam's, greedy's, the sparse trellis's) scores above the exact MAP;
/// the MAP-only trellis equals the full trellis where both ran.
pub fn astar(results: &Results, baselines: &[&str]) -> Result<Vec<Measure>> {
    let t = results.table("astar")?;
    let (ll, ub) = (
        f64_column(&t, "log_likelihood")?,
        f64_column(&t, "upper_bound")?,
    );
    let exact = f64_column(&t, "exact_map")?;
    let (full, map) = (f64_column(&t, "full_map")?, f64_column(&t, "map_trellis")?);
    let mut columns = vec![ll.clone()];
    for b in baselines {
        columns.push(f64_column(&t, &format!("{b}_log_likelihood"))?);
    }
    let (mut bound, mut above_map, mut differ) = (0, 0, 0);
    for r in 0..t.height() {
        if let (Some(l), Some(u)) = (ll[r], ub[r]) {
            bound += usize::from(above(l, u));
        }
        if let Some(e) = exact[r] {
            bound += usize::from(ub[r].is_some_and(|u| above(e, u)));
            above_map += columns
                .iter()
                .filter(|c| c[r].is_some_and(|v| v > e))
                .count();
        }
        if let (Some(a), Some(b)) = (full[r], map[r]) {
            differ += usize::from(a.to_bits() != b.to_bits());
        }
    }
    Ok(vec![
        property(
            "upper_bound_holds",
            "property: A* upper bounds below its tree's value or the exact MAP",
            bound,
        ),
        property(
            "no_method_above_the_exact_map",
            "property: trees scoring above their jet's exact MAP",
            above_map,
        ),
        property(
            "map_trellis_equals_full_trellis",
            "property: jets where the MAP-only and full trellises differ in any bit",
            differ,
        ),
    ])
}

/// The flat_pam50 kind: pairwise marginals and the MAP's probability lie in [0, 1], and log Z
/// is at least the MAP clustering's log energy.
pub fn flat_pam50(results: &Results) -> Result<Vec<Measure>> {
    let pairs = results.table("flat_pairs")?;
    let summary = results.table("flat_summary")?;
    let unit = |v: &Option<f64>| v.is_some_and(|x| !(-1e-12..=1.0 + 1e-12).contains(&x));
    let mut outside = f64_column(&pairs, "exact_marginal")?
        .iter()
        .filter(|v| unit(v))
        .count();
    outside += f64_column(&summary, "map_probability")?
        .iter()
        .filter(|v| unit(v))
        .count();
    let (z, m) = (
        f64_column(&summary, "log_z")?,
        f64_column(&summary, "map_log_energy")?,
    );
    let below = count_above(&m, &z);
    Ok(vec![
        property(
            "probabilities_in_unit_interval",
            "property: marginals or MAP probabilities outside [0, 1]",
            outside,
        ),
        property(
            "log_z_at_least_the_map",
            "property: log Z below the MAP clustering's log energy",
            below,
        ),
    ])
}

/// The scaling kind (`scaling.parquet`): log Z at least the MAP, the entropy at least 0, no
/// more finite trees than trees, and the MAP-only trellis's MAP the full trellis's bit for bit.
pub fn scaling(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("scaling")?;
    let (z, m) = (
        f64_column(&t, "log_z")?,
        f64_column(&t, "map_log_likelihood")?,
    );
    let (h, fin, all) = (
        f64_column(&t, "entropy_nats")?,
        f64_column(&t, "n_trees_finite")?,
        f64_column(&t, "n_trees_total")?,
    );
    let same = u64_column(&t, "map_trellis_same_bits")?;
    let mut bad = 0;
    for r in 0..t.height() {
        bad += usize::from(matches!((z[r], m[r]), (Some(z), Some(m)) if above(m, z)));
        bad += usize::from(h[r].is_some_and(|h| h < -1e-9));
        bad += usize::from(matches!((fin[r], all[r]), (Some(f), Some(a)) if f > a));
    }
    let differ = same.iter().filter(|s| **s == Some(0)).count();
    Ok(vec![
        property(
            "exact_quantities_consistent",
            "property: sizes with log Z below the MAP, a negative entropy or more finite trees than trees",
            bad,
        ),
        property(
            "map_trellis_equals_full_trellis",
            "property: sizes where the MAP-only trellis's MAP differs from the full trellis's in any bit",
            differ,
        ),
    ])
}

/// The posterior_sampling kind: exact probabilities and sample frequencies in [0, 1] and each
/// summing to 1 over the trees, cluster marginals in [0, 1].
pub fn posterior_sampling(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("posterior_samples")?;
    let c = results.table("cluster_marginals")?;
    let unit = |v: &Option<f64>| v.is_some_and(|x| !(-1e-12..=1.0 + 1e-12).contains(&x));
    let mut outside = 0;
    let mut sums = 0;
    for col in ["exact_probability", "trellis_sampler_frequency"] {
        let v = f64_column(&t, col)?;
        outside += v.iter().filter(|x| unit(x)).count();
        let total: f64 = v.iter().flatten().sum();
        sums += usize::from((total - 1.0).abs() > 1e-9);
    }
    outside += f64_column(&c, "marginal")?
        .iter()
        .filter(|x| unit(x))
        .count();
    Ok(vec![
        property(
            "probabilities_in_unit_interval",
            "property: probabilities, frequencies or marginals outside [0, 1]",
            outside,
        ),
        property(
            "distributions_sum_to_one",
            "property: distributions over the trees not summing to 1",
            sums,
        ),
    ])
}

/// Rows of the float column `col` of `table` (nulls left out).
fn values(results: &Results, table: &str, col: &str) -> Result<Vec<f64>> {
    Ok(f64_column(&results.table(table)?, col)?
        .into_iter()
        .flatten()
        .collect())
}

/// The sparse kind (`sparse.parquet`): a sparse trellis never beats the exact trellis (its
/// trees are among all trees): its mean gain over greedy is at most the exact trellis's.
pub fn sparse(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("sparse")?;
    let (s, e) = (
        f64_column(&t, "mean_map_minus_greedy")?,
        f64_column(&t, "exact_trellis_minus_greedy")?,
    );
    let above_exact = count_above(&s, &e);
    Ok(vec![property(
        "sparse_at_most_exact",
        "property: sparsities whose mean gain over greedy exceeds the exact trellis's",
        above_exact,
    )])
}

/// The cost_functions kind (`cost_functions.parquet`): the trellis's MAP energy equals the
/// minimum over every tree (enumerated), and the Dasgupta-product ranges are ordered.
pub fn cost_functions(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("cost_functions")?;
    let (m, tr) = (
        f64_column(&t, "map_energy")?,
        f64_column(&t, "trellis_map_energy")?,
    );
    let differ = count_above(&m, &tr) + count_above(&tr, &m);
    let (lo, mean, hi) = (
        f64_column(&t, "all_trees_dp_min")?,
        f64_column(&t, "all_trees_dp_mean")?,
        f64_column(&t, "all_trees_dp_max")?,
    );
    let unordered = (0..t.height())
        .filter(|&r| {
            matches!((lo[r], mean[r], hi[r]), (Some(l), Some(x), Some(h)) if above(l, x) || above(x, h))
        })
        .count();
    Ok(vec![
        property(
            "trellis_map_is_the_minimum",
            "property: instances where the trellis's MAP energy differs from the enumerated minimum",
            differ,
        ),
        property(
            "ranges_ordered",
            "property: instances whose min, mean and max over all trees are out of order",
            unordered,
        ),
    ])
}

/// The coalescent_synthetic kind (`runs.parquet`): squared and absolute errors are at least 0
/// and no evidence estimate is NaN.
pub fn coalescent_synthetic(results: &Results, metrics: &[&str]) -> Result<Vec<Measure>> {
    let mut negative = 0;
    for m in metrics
        .iter()
        .filter(|m| m.contains("mse") || m.contains("mae"))
    {
        negative += values(results, "runs", m)?
            .iter()
            .filter(|v| **v < 0.0)
            .count();
    }
    let nan = values(results, "runs", "log_evidence")?
        .iter()
        .filter(|v| v.is_nan())
        .count();
    Ok(vec![
        property(
            "errors_at_least_zero",
            "property: negative squared or absolute errors",
            negative,
        ),
        property("evidence_not_nan", "property: NaN evidence estimates", nan),
    ])
}

/// The coalescent_labelled kind: subtree score, ARI AUC and purity in [0, 1], every ARI in
/// [-1, 1], and no evidence estimate NaN.
pub fn coalescent_labelled(results: &Results, scores: &[&str]) -> Result<Vec<Measure>> {
    let mut outside = 0;
    for s in scores {
        outside += values(results, "runs", s)?
            .iter()
            .filter(|v| !(-1e-12..=1.0 + 1e-12).contains(*v))
            .count();
    }
    outside += values(results, "curves", "ari")?
        .iter()
        .filter(|v| !(-1.0 - 1e-12..=1.0 + 1e-12).contains(*v))
        .count();
    let nan = values(results, "runs", "log_evidence")?
        .iter()
        .filter(|v| v.is_nan())
        .count();
    Ok(vec![
        property(
            "scores_in_range",
            "property: scores outside [0, 1] or ARIs outside [-1, 1]",
            outside,
        ),
        property("evidence_not_nan", "property: NaN evidence estimates", nan),
    ])
}

/// The pydt kind, for the parts that ran: MAP trees' purity and subtree score in [0, 1], node
/// times in [0, 1], and no objective or joint density NaN.
pub fn pydt(results: &Results) -> Result<Vec<Measure>> {
    let has = |t: &str| results.dir().join(format!("{t}.parquet")).is_file();
    let (mut outside, mut nan) = (0, 0);
    let unit = |v: &f64| !(-1e-12..=1.0 + 1e-12).contains(v);
    if has("maps") {
        for c in ["purity", "subtree"] {
            outside += values(results, "maps", c)?
                .iter()
                .filter(|v| unit(v))
                .count();
        }
        nan += values(results, "maps", "objective")?
            .iter()
            .filter(|v| v.is_nan())
            .count();
    }
    if has("map_nodes") {
        outside += values(results, "map_nodes", "time")?
            .iter()
            .filter(|v| unit(v))
            .count();
    }
    if has("traces") {
        nan += values(results, "traces", "ln_joint")?
            .iter()
            .filter(|v| v.is_nan())
            .count();
    }
    Ok(vec![
        property(
            "scores_and_times_in_unit_interval",
            "property: purities, subtree scores or node times outside [0, 1]",
            outside,
        ),
        property(
            "objectives_not_nan",
            "property: NaN objectives or joint densities",
            nan,
        ),
    ])
}
