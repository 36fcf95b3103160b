//! Evaluation metrics of spec §4 (HL §4.1, §4.4.1) for binary ranked trees ([`History`]).
//!
//! * §4.1 merge-time and MRCA-distance errors **in log domain**: MSE, MAE, MAB for one tree, and
//!   the weighted particle-set version recommended by the spec (W-weighted MSE/MAE; MAB = max over
//!   the index set of |Σ_p W_p e^{(p)}|).
//! * §4.2 subtree score N_subset/(n − C).
//! * §4.3 ARI (Hubert–Arabie), the ARI curve over N_c = 1..n with majority-vote labelling (ties →
//!   smallest label) and its trapezoidal area divided by (n − 1).
//! * §4.4 dendrogram purity (Heller & Ghahramani 2005).
//!
//! Class labels are arbitrary `usize` values; "smallest label" means the smallest value.

use super::history::{cidx, mrca_times, History, HistoryError};
use std::collections::HashMap;
use thiserror::Error;

/// Errors of this module (one-line messages).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MetricsError {
    /// Invalid history.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// Inputs of different sizes.
    #[error("size mismatch for `{what}`: expected {expected}, got {got}")]
    SizeMismatch {
        /// Which input.
        what: &'static str,
        /// Expected size.
        expected: usize,
        /// Size found.
        got: usize,
    },
    /// A time or distance that is not > 0 (its log is undefined).
    #[error("`{what}` has a non-positive value {value}; log-domain errors need times > 0")]
    NonPositive {
        /// Which quantity.
        what: &'static str,
        /// Offending value.
        value: f64,
    },
    /// Weights negative, non-finite or summing to 0.
    #[error("invalid weights: {0}")]
    BadWeights(&'static str),
    /// The metric is undefined for this input (0/0).
    #[error("metric undefined: {0}")]
    Undefined(&'static str),
}

type Result<T> = std::result::Result<T, MetricsError>;

/// Mean squared error, mean absolute error and maximum absolute bias (spec §4.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorSummary {
    /// Mean of e².
    pub mse: f64,
    /// Mean of |e|.
    pub mae: f64,
    /// Maximum of |e| (one tree) or of |Σ_p W_p e^{(p)}| (particle set).
    pub mab: f64,
}

/// MSE, MAE and MAB of one error vector.
pub fn summarize(errors: &[f64]) -> Result<ErrorSummary> {
    weighted_summary(&[errors.to_vec()], &[1.0])
}

/// Particle-set summary (spec §4.1 recommendation): `errors[p]` is particle p's error vector,
/// `weights` are non-negative (not necessarily normalised). MSE/MAE are W-weighted averages of the
/// per-particle values, MAB = max over the index of |Σ_p W_p e^{(p)}|.
pub fn weighted_summary(errors: &[Vec<f64>], weights: &[f64]) -> Result<ErrorSummary> {
    let w = normalize(weights)?;
    if errors.len() != w.len() {
        return Err(MetricsError::SizeMismatch {
            what: "weights",
            expected: errors.len(),
            got: w.len(),
        });
    }
    let m = errors[0].len();
    if m == 0 {
        return Err(MetricsError::Undefined("empty error vector"));
    }
    let (mut mse, mut mae, mut bias) = (0.0, 0.0, vec![0.0; m]);
    for (e, &wp) in errors.iter().zip(&w) {
        if e.len() != m {
            return Err(MetricsError::SizeMismatch {
                what: "errors",
                expected: m,
                got: e.len(),
            });
        }
        mse += wp * e.iter().map(|x| x * x).sum::<f64>() / m as f64;
        mae += wp * e.iter().map(|x| x.abs()).sum::<f64>() / m as f64;
        for (b, x) in bias.iter_mut().zip(e) {
            *b += wp * x;
        }
    }
    let mab = bias.iter().fold(0.0f64, |a, b| a.max(b.abs()));
    if !(mse.is_finite() && mae.is_finite() && mab.is_finite()) {
        return Err(MetricsError::Undefined("non-finite errors"));
    }
    Ok(ErrorSummary { mse, mae, mab })
}

fn normalize(weights: &[f64]) -> Result<Vec<f64>> {
    if weights.is_empty() {
        return Err(MetricsError::BadWeights("no particles"));
    }
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
        return Err(MetricsError::BadWeights("weights must be finite and >= 0"));
    }
    let s: f64 = weights.iter().sum();
    if s <= 0.0 || !s.is_finite() {
        return Err(MetricsError::BadWeights("weights sum to 0"));
    }
    Ok(weights.iter().map(|w| w / s).collect())
}

/// Normalised weights from log weights (log-sum-exp).
pub fn normalize_log_weights(log_w: &[f64]) -> Result<Vec<f64>> {
    let mx = log_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if log_w.iter().any(|x| x.is_nan() || *x == f64::INFINITY) || !mx.is_finite() {
        return Err(MetricsError::BadWeights(
            "log weights must be < +inf, not NaN, and one finite",
        ));
    }
    normalize(&log_w.iter().map(|l| (l - mx).exp()).collect::<Vec<_>>())
}

fn log_ratio(what: &'static str, est: &[f64], truth: &[f64]) -> Result<Vec<f64>> {
    if est.len() != truth.len() {
        return Err(MetricsError::SizeMismatch {
            what,
            expected: truth.len(),
            got: est.len(),
        });
    }
    if est.is_empty() {
        return Err(MetricsError::Undefined("n = 1 has no merge times"));
    }
    if let Some(&value) = est.iter().chain(truth).find(|&&v| v <= 0.0 || v.is_nan()) {
        return Err(MetricsError::NonPositive { what, value });
    }
    Ok(est
        .iter()
        .zip(truth)
        .map(|(e, t)| e.ln() - t.ln())
        .collect())
}

/// e_k = log t̂_k − log t_k over the sorted merge times (stage order), k = 1..n−1 (spec §4.1).
pub fn log_merge_time_errors(truth: &History, est: &History) -> Result<Vec<f64>> {
    truth.validate()?;
    est.validate()?;
    log_ratio("merge times", &est.times(), &truth.times())
}

/// e_ij = log D̂_ij − log D_ij, D_ij = t_{MRCA(i,j)}, condensed order i < j (spec §4.1).
pub fn log_distance_errors(truth: &History, est: &History) -> Result<Vec<f64>> {
    if truth.n != est.n {
        return Err(MetricsError::SizeMismatch {
            what: "leaves",
            expected: truth.n,
            got: est.n,
        });
    }
    log_ratio("MRCA times", &mrca_times(est)?, &mrca_times(truth)?)
}

/// MSE/MAE/MAB of the log merge times of one estimated tree.
pub fn merge_time_errors(truth: &History, est: &History) -> Result<ErrorSummary> {
    summarize(&log_merge_time_errors(truth, est)?)
}

/// MSE/MAE/MAB of the log MRCA-distance matrix of one estimated tree.
pub fn distance_errors(truth: &History, est: &History) -> Result<ErrorSummary> {
    summarize(&log_distance_errors(truth, est)?)
}

/// Weighted particle-set merge-time errors (see [`weighted_summary`]).
pub fn weighted_merge_time_errors(
    truth: &History,
    particles: &[History],
    weights: &[f64],
) -> Result<ErrorSummary> {
    let e: Result<Vec<_>> = particles
        .iter()
        .map(|p| log_merge_time_errors(truth, p))
        .collect();
    weighted_summary(&e?, weights)
}

/// Weighted particle-set distance errors (see [`weighted_summary`]).
pub fn weighted_distance_errors(
    truth: &History,
    particles: &[History],
    weights: &[f64],
) -> Result<ErrorSummary> {
    let e: Result<Vec<_>> = particles
        .iter()
        .map(|p| log_distance_errors(truth, p))
        .collect();
    weighted_summary(&e?, weights)
}

/// Dense class indices 0..C−1 (in increasing label value) and C.
fn dense_labels(h: &History, labels: &[usize]) -> Result<(Vec<usize>, usize)> {
    h.validate()?;
    if labels.len() != h.n {
        return Err(MetricsError::SizeMismatch {
            what: "labels",
            expected: h.n,
            got: labels.len(),
        });
    }
    let mut uniq = labels.to_vec();
    uniq.sort_unstable();
    uniq.dedup();
    let map: HashMap<usize, usize> = uniq.iter().enumerate().map(|(i, &l)| (l, i)).collect();
    Ok((labels.iter().map(|l| map[l]).collect(), uniq.len()))
}

/// Subtree score (spec §4.2): number of internal nodes whose leaves share one class, over n − C.
pub fn subtree_score(h: &History, labels: &[usize]) -> Result<f64> {
    let (y, c) = dense_labels(h, labels)?;
    if h.n == c {
        return Err(MetricsError::Undefined("subtree score needs n > C"));
    }
    let mut pure: Vec<Option<usize>> = y.into_iter().map(Some).collect();
    let mut count = 0usize;
    for &(a, b, _) in &h.merges {
        let p = match (pure[a], pure[b]) {
            (Some(x), Some(z)) if x == z => Some(x),
            _ => None,
        };
        count += usize::from(p.is_some());
        pure.push(p);
    }
    Ok(count as f64 / (h.n - c) as f64)
}

fn choose2(k: f64) -> f64 {
    k * (k - 1.0) / 2.0
}

/// ARI from Σ C(n_ij,2), Σ C(a_i,2), Σ C(b_j,2), C(n,2); 1 when the denominator vanishes
/// (both partitions trivial and identical), as scikit-learn does.
pub(crate) fn ari_from_sums(index: f64, sa: f64, sb: f64, n2: f64) -> f64 {
    if n2 == 0.0 {
        return 1.0;
    }
    let expected = sa * sb / n2;
    let denom = 0.5 * (sa + sb) - expected;
    if denom == 0.0 {
        1.0
    } else {
        (index - expected) / denom
    }
}

/// Adjusted Rand index (Hubert & Arabie 1985), spec §4.3.
pub fn adjusted_rand_index(a: &[usize], b: &[usize]) -> Result<f64> {
    if a.len() != b.len() {
        return Err(MetricsError::SizeMismatch {
            what: "labelings",
            expected: a.len(),
            got: b.len(),
        });
    }
    let mut nij: HashMap<(usize, usize), f64> = HashMap::new();
    let (mut ai, mut bj): (HashMap<usize, f64>, HashMap<usize, f64>) = Default::default();
    for (&x, &z) in a.iter().zip(b) {
        *nij.entry((x, z)).or_default() += 1.0;
        *ai.entry(x).or_default() += 1.0;
        *bj.entry(z).or_default() += 1.0;
    }
    let s = |m: &mut dyn Iterator<Item = f64>| m.map(choose2).sum::<f64>();
    Ok(ari_from_sums(
        s(&mut nij.values().copied()),
        s(&mut ai.values().copied()),
        s(&mut bj.values().copied()),
        choose2(a.len() as f64),
    ))
}

/// Cluster membership after cutting the tree into `n_clusters` clusters (undo the last
/// `n_clusters − 1` merges); clusters numbered 0.. in order of their smallest leaf.
pub fn cut_labels(h: &History, n_clusters: usize) -> Result<Vec<usize>> {
    h.validate()?;
    if n_clusters == 0 || n_clusters > h.n {
        return Err(MetricsError::SizeMismatch {
            what: "n_clusters",
            expected: h.n,
            got: n_clusters,
        });
    }
    let mut rep: Vec<usize> = (0..h.n).collect();
    let mut members: Vec<Vec<usize>> = (0..h.n).map(|i| vec![i]).collect();
    for &(a, b, _) in &h.merges[..h.n - n_clusters] {
        let mut m = std::mem::take(&mut members[a]);
        m.append(&mut std::mem::take(&mut members[b]));
        members.push(m);
    }
    let mut next = 0;
    let mut label_of: HashMap<usize, usize> = HashMap::new();
    for (id, m) in members.iter().enumerate() {
        for &i in m {
            rep[i] = id;
        }
    }
    Ok(rep
        .iter()
        .map(|r| {
            *label_of.entry(*r).or_insert_with(|| {
                next += 1;
                next - 1
            })
        })
        .collect())
}

/// Sparse class counts (sorted by class) of two clusters merged.
fn merge_counts(a: &[(usize, usize)], b: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(a.len() + b.len()));
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i].0 < b[j].0) {
            out.push(a[i]);
            i += 1;
        } else if i == a.len() || b[j].0 < a[i].0 {
            out.push(b[j]);
            j += 1;
        } else {
            out.push((a[i].0, a[i].1 + b[j].1));
            i += 1;
            j += 1;
        }
    }
    out
}

/// ARI curve (spec §4.3): entry N_c − 1 is ARI(y, ŷ) for the cut into N_c clusters, each
/// cluster labelled by majority vote (ties → smallest label). O(n²) overall.
pub fn ari_curve(h: &History, labels: &[usize]) -> Result<Vec<f64>> {
    let (y, c) = dense_labels(h, labels)?;
    let n = h.n;
    let mut class_size = vec![0usize; c];
    for &l in &y {
        class_size[l] += 1;
    }
    let sa: f64 = class_size.iter().map(|&k| choose2(k as f64)).sum();
    let n2 = choose2(n as f64);
    let mut counts: Vec<Vec<(usize, usize)>> = y.iter().map(|&l| vec![(l, 1)]).collect();
    let mut active: Vec<usize> = (0..n).collect();
    let mut curve = vec![0.0; n];
    let mut table: HashMap<(usize, usize), usize> = HashMap::new();
    let mut col = vec![0usize; c];
    for step in 0..n {
        table.clear();
        col.iter_mut().for_each(|x| *x = 0);
        for &id in &active {
            let cnt = &counts[id];
            // Majority; sorted by class, so the first maximum is the smallest label.
            let mut maj = (0, 0);
            for &(cl, k) in cnt {
                if k > maj.1 {
                    maj = (cl, k);
                }
            }
            for &(cl, k) in cnt {
                *table.entry((cl, maj.0)).or_default() += k;
                col[maj.0] += k;
            }
        }
        let index: f64 = table.values().map(|&k| choose2(k as f64)).sum();
        let sb: f64 = col.iter().map(|&k| choose2(k as f64)).sum();
        curve[active.len() - 1] = ari_from_sums(index, sa, sb, n2);
        if step < n - 1 {
            let (a, b, _) = h.merges[step];
            let m = merge_counts(&counts[a], &counts[b]);
            counts[a].clear();
            counts[b].clear();
            counts.push(m);
            active.retain(|&x| x != a && x != b);
            active.push(n + step);
        }
    }
    Ok(curve)
}

/// Trapezoidal area under an ARI curve over N_c = 1..n, divided by (n − 1) (spec §4.3).
pub fn ari_auc(curve: &[f64]) -> Result<f64> {
    if curve.len() < 2 {
        return Err(MetricsError::Undefined("AUC needs n >= 2"));
    }
    let area: f64 = curve.windows(2).map(|w| 0.5 * (w[0] + w[1])).sum();
    Ok(area / (curve.len() - 1) as f64)
}

/// Dendrogram purity (spec §4.4): mean over same-class pairs {i, j} of the fraction of
/// leaves(lca(i, j)) in that class.
pub fn dendrogram_purity(h: &History, labels: &[usize]) -> Result<f64> {
    let (y, _) = dense_labels(h, labels)?;
    let mut counts: Vec<Vec<(usize, usize)>> = y.iter().map(|&l| vec![(l, 1)]).collect();
    let mut sizes = vec![1usize; h.n];
    let (mut total, mut pairs) = (0.0, 0.0);
    for &(a, b, _) in &h.merges {
        let size = sizes[a] + sizes[b];
        let (ca, cb) = (&counts[a], &counts[b]);
        let mut j = 0;
        for &(cl, ka) in ca {
            while j < cb.len() && cb[j].0 < cl {
                j += 1;
            }
            if j < cb.len() && cb[j].0 == cl {
                let (ka, kb) = (ka as f64, cb[j].1 as f64);
                total += ka * kb * (ka + kb) / size as f64;
                pairs += ka * kb;
            }
        }
        let m = merge_counts(ca, cb);
        counts[a].clear();
        counts[b].clear();
        counts.push(m);
        sizes.push(size);
    }
    if pairs == 0.0 {
        return Err(MetricsError::Undefined("no two leaves share a class"));
    }
    Ok(total / pairs)
}

/// Dense n × n MRCA-time matrix (row-major, zero diagonal) from [`mrca_times`].
pub fn mrca_matrix(h: &History) -> Result<Vec<f64>> {
    let d = mrca_times(h)?;
    let n = h.n;
    let mut m = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            if i != j {
                m[i * n + j] = d[cidx(n, i, j)];
            }
        }
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::super::generator::sample_history;
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    const L2: f64 = std::f64::consts::LN_2;

    fn hist(m: &[(usize, usize, f64)]) -> History {
        History::new(m.len() + 1, m.to_vec()).unwrap()
    }
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn ari_matches_sklearn() {
        let digits = |s: &str| s.bytes().map(|b| (b - b'0') as usize).collect::<Vec<_>>();
        // Values from sklearn.metrics.adjusted_rand_score (scikit-learn 1.9.1).
        let cases = [
            ("2000121011", "0233321100", -0.037991858887381276),
            (
                "1122344341441223302041242",
                "2222021102101220012011111",
                0.10440122824974411,
            ),
            (
                "2213330232022320023200311313000110232030",
                "4213330232022331023200310513200110243030",
                0.5870811783224645,
            ),
            ("011001100110", "011001100011", 0.3888888888888889),
            (
                "090115860459274881211088497067",
                "000112202122211221101020001001",
                0.15644032360694482,
            ),
            (
                "305312013352535512430115334051503151442241321104305111115431",
                "305312013352535512420115334051503151442205321104305211115431",
                0.8437573327791149,
            ),
            ("000", "111", 1.0),
            ("012", "210", 1.0),
            ("0011", "0123", 0.0),
            ("0000", "0123", 0.0),
            ("0101", "0001", 0.0),
        ];
        for (a, b, want) in cases {
            let got = adjusted_rand_index(&digits(a), &digits(b)).unwrap();
            assert!((got - want).abs() < 1e-12, "{a} {b}: {got} vs {want}");
        }
        assert!(adjusted_rand_index(&[0, 1], &[0]).is_err());
    }

    #[test]
    fn ari_curve_endpoints_and_small_example() {
        let h = hist(&[(0, 1, 0.2), (2, 3, 0.5), (4, 5, 1.3)]);
        let c = ari_curve(&h, &[0, 0, 1, 1]).unwrap();
        assert_eq!(c, vec![0.0, 1.0, 1.0, 1.0]);
        assert!(close(ari_auc(&c).unwrap(), 2.5 / 3.0));
        // Cut into 3: {0,1} → tie → label 0; ŷ = (0,0,0,1) vs y = (0,1,0,1): ARI 0 (sklearn).
        let c = ari_curve(&h, &[0, 1, 0, 1]).unwrap();
        assert_eq!(c, vec![0.0, 0.0, 0.0, 1.0]);
        assert!(close(ari_auc(&c).unwrap(), 1.0 / 6.0));
        assert!(ari_auc(&[1.0]).is_err());
        assert!(ari_curve(&h, &[0, 1]).is_err());
    }

    #[test]
    fn ari_curve_agrees_with_direct_majority_vote() {
        let mut rng = StdRng::seed_from_u64(8);
        let h = sample_history(60, &mut rng).unwrap();
        let labels: Vec<usize> = (0..60).map(|i| (i * 7 + i / 5) % 4 + 10).collect();
        let curve = ari_curve(&h, &labels).unwrap();
        assert!(close(curve[0], 0.0) && close(curve[59], 1.0));
        for nc in 1..=60 {
            let cut = cut_labels(&h, nc).unwrap();
            let mut pred = vec![0; 60];
            for k in 0..nc {
                let mut tally = [0usize; 4];
                (0..60)
                    .filter(|&i| cut[i] == k)
                    .for_each(|i| tally[labels[i] - 10] += 1);
                let best = (0..4).fold(0, |b, l| if tally[l] > tally[b] { l } else { b });
                (0..60)
                    .filter(|&i| cut[i] == k)
                    .for_each(|i| pred[i] = best);
            }
            let direct = adjusted_rand_index(&labels, &pred).unwrap();
            assert!(close(curve[nc - 1], direct), "N_c = {nc}");
        }
    }

    #[test]
    fn clades_give_perfect_scores() {
        let mut rng = StdRng::seed_from_u64(21);
        let h = sample_history(80, &mut rng).unwrap();
        let labels = cut_labels(&h, 5).unwrap();
        assert_eq!(*labels.iter().max().unwrap(), 4);
        assert!(close(subtree_score(&h, &labels).unwrap(), 1.0));
        assert!(close(dendrogram_purity(&h, &labels).unwrap(), 1.0));
        let curve = ari_curve(&h, &labels).unwrap();
        assert!(curve[4..].iter().all(|&a| close(a, 1.0)));
        assert!(close(curve[0], 0.0));
        assert!(curve[1..4].iter().all(|&a| a < 1.0));
    }

    #[test]
    fn subtree_and_purity_small_example() {
        // ((0,1)@1, (2,3)@2) then root; labels (0,0,0,1).
        let h = hist(&[(0, 1, 1.0), (2, 3, 2.0), (4, 5, 3.0)]);
        let y = [0, 0, 0, 1];
        // Pure internal nodes: {0,1} only; n − C = 2.
        assert!(close(subtree_score(&h, &y).unwrap(), 0.5));
        // Same-class pairs: (0,1) lca {0,1} → 1; (0,2), (1,2) lca root → 3/4 each.
        assert!(close(
            dendrogram_purity(&h, &y).unwrap(),
            (1.0 + 0.75 + 0.75) / 3.0
        ));
        assert!(subtree_score(&h, &[0, 1, 2, 3]).is_err());
        assert!(dendrogram_purity(&h, &[0, 1, 2, 3]).is_err());
    }

    #[test]
    fn log_error_metrics_hand_examples() {
        let truth = hist(&[(0, 1, 1.0), (2, 3, 2.0), (4, 5, 4.0)]);
        let est = hist(&[(0, 2, 2.0), (1, 3, 2.0), (4, 5, 2.0)]);
        // Merge times: e = (ln 2, 0, −ln 2).
        let s = merge_time_errors(&truth, &est).unwrap();
        assert!(
            close(s.mse, 2.0 * L2 * L2 / 3.0) && close(s.mae, 2.0 * L2 / 3.0) && close(s.mab, L2)
        );
        // Distances: truth D = (1,4,4,4,4,2) for (01,02,03,12,13,23); est with times (1,2,4).
        let est2 = hist(&[(0, 2, 1.0), (1, 3, 2.0), (4, 5, 4.0)]);
        let e = log_distance_errors(&truth, &est2).unwrap();
        let want = [2.0 * L2, -2.0 * L2, 0.0, 0.0, -L2, L2];
        assert!(e.iter().zip(want).all(|(a, b)| close(*a, b)));
        let s = distance_errors(&truth, &est2).unwrap();
        assert!(close(s.mse, 10.0 / 6.0 * L2 * L2) && close(s.mae, L2) && close(s.mab, 2.0 * L2));
        // Particle set: W = (1/4, 3/4) for (est, truth): MAB is the bias of the weighted mean.
        let w =
            weighted_merge_time_errors(&truth, &[est.clone(), truth.clone()], &[1.0, 3.0]).unwrap();
        assert!(close(w.mse, 0.25 * 2.0 * L2 * L2 / 3.0) && close(w.mae, 0.25 * 2.0 * L2 / 3.0));
        assert!(close(w.mab, 0.25 * L2));
        let lw = normalize_log_weights(&[0.0, 3f64.ln()]).unwrap();
        assert!(close(lw[0], 0.25) && close(lw[1], 0.75));
        let wd = weighted_distance_errors(&truth, std::slice::from_ref(&est2), &[2.0]).unwrap();
        assert!(close(wd.mse, s.mse));
        // Errors.
        assert!(
            weighted_merge_time_errors(&truth, std::slice::from_ref(&est), &[1.0, 1.0]).is_err()
        );
        assert!(weighted_merge_time_errors(&truth, std::slice::from_ref(&est), &[-1.0]).is_err());
        assert!(weighted_merge_time_errors(&truth, std::slice::from_ref(&est), &[0.0]).is_err());
        assert!(normalize_log_weights(&[f64::NEG_INFINITY]).is_err());
        let zero = hist(&[(0, 1, 0.0), (2, 3, 2.0), (4, 5, 4.0)]);
        assert!(matches!(
            merge_time_errors(&truth, &zero),
            Err(MetricsError::NonPositive { .. })
        ));
        assert!(distance_errors(&truth, &hist(&[(0, 1, 1.0)])).is_err());
        let m = mrca_matrix(&truth).unwrap();
        assert_eq!((m[1], m[4], m[2 * 4 + 3]), (1.0, 1.0, 2.0));
    }
}
