//! Coalescent histories over n leaves: validation, Brownian message passing, prior and likelihood,
//! MRCA-time distances (spec §3.1–§3.3, §4.1; HL §2). Newick I/O lives in `super::newick` and the
//! greedy algorithms (spec §3.8) in `super::greedy`; both are re-exported here.
//!
//! Conventions (spec §3.1): positive times, leaves at t = 0, merge times 0 ≤ t_1 ≤ … ≤ t_{n−1}.
//! Cluster ids: leaves are `0..n`, the k-th merge (k = 1..n−1) creates cluster `n + k − 1`.
//! Stage k has n − k + 1 active clusters and prior rate λ_k = C(n − k + 1, 2).
//!
//! All likelihood routines take **whitened** data (see `super::covariance::Whitening`) together with
//! `ln_det_half = ½ log|Φ|`; each merge normaliser then is
//! log Z_k = −(d/2) log(2π v_k) − ln_det_half − ε_k/(2 v_k) (spec §3.3). Pass `ln_det_half = 0` for
//! Φ = I or to get the purely whitened normaliser.

use thiserror::Error;

pub use super::greedy::{
    greedy, mode_exact, mode_hl_mgreedy, mode_teh_prev, GreedyOutcome, GreedyRule,
};
pub use super::newick::{from_newick, from_newick_with_tolerance, to_newick};

/// Errors of this module (one-line messages).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum HistoryError {
    /// n = 0.
    #[error("a history needs at least one leaf (n = 0)")]
    NoLeaves,
    /// A greedy build was cancelled ([`crate::cancel`]) before it ended.
    #[error("{}", crate::cancel::MESSAGE)]
    Cancelled,
    /// Wrong number of merges.
    #[error("history over {n} leaves needs {expected} merges, got {got}")]
    WrongMergeCount {
        /// Number of leaves.
        n: usize,
        /// n − 1.
        expected: usize,
        /// Merges supplied.
        got: usize,
    },
    /// A merge refers to a cluster that does not exist yet or was already merged.
    #[error(
        "merge {k}: cluster id {id} is not active (unknown, not yet created, or already merged)"
    )]
    InactiveCluster {
        /// Merge index (1-based).
        k: usize,
        /// Offending id.
        id: usize,
    },
    /// A merge of a cluster with itself.
    #[error("merge {k}: cluster {id} cannot merge with itself")]
    SelfMerge {
        /// Merge index (1-based).
        k: usize,
        /// Offending id.
        id: usize,
    },
    /// A merge time that is non-finite, negative or earlier than the previous one.
    #[error(
        "merge {k}: time {t} is not finite, is negative, or is earlier than the previous merge"
    )]
    BadTime {
        /// Merge index (1-based).
        k: usize,
        /// Offending time.
        t: f64,
    },
    /// A scalar argument outside its domain.
    #[error("invalid argument `{name}` = {value}: {reason}")]
    InvalidArgument {
        /// Argument name.
        name: &'static str,
        /// Offending value.
        value: f64,
        /// What was expected.
        reason: &'static str,
    },
    /// Data shape or content does not fit.
    #[error("invalid data: {0}")]
    BadData(String),
    /// v_k = 0: two identical messages merged with zero variance (e.g. duplicate points at t = 0).
    #[error("merge at time {t}: variance factor v = {v} is not positive (duplicate points merged at t = 0?)")]
    DegenerateVariance {
        /// Merge time.
        t: f64,
        /// Variance factor.
        v: f64,
    },
    /// Malformed Newick input.
    #[error("newick error at byte {pos}: {msg}")]
    Newick {
        /// Byte offset.
        pos: usize,
        /// What is wrong.
        msg: String,
    },
}

pub(super) type Result<T> = std::result::Result<T, HistoryError>;

pub(super) fn invalid(name: &'static str, value: f64, reason: &'static str) -> HistoryError {
    HistoryError::InvalidArgument {
        name,
        value,
        reason,
    }
}

/// A ranked binary coalescent history (spec §3.1): `merges[k−1] = (a, b, t_k)` creates cluster
/// `n + k − 1` from clusters `a` and `b` at time `t_k`.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    /// Number of leaves.
    pub n: usize,
    /// The n − 1 merges in time order.
    pub merges: Vec<(usize, usize, f64)>,
}

impl History {
    /// Build and validate.
    pub fn new(n: usize, merges: Vec<(usize, usize, f64)>) -> Result<Self> {
        let h = History { n, merges };
        h.validate()?;
        Ok(h)
    }

    /// Check: n ≥ 1, exactly n − 1 merges, every id active when used (each cluster merged once,
    /// created before use), no self-merge, times finite, ≥ 0 and non-decreasing (hence ≥ the
    /// children's creation times).
    pub fn validate(&self) -> Result<()> {
        let n = self.n;
        if n == 0 {
            return Err(HistoryError::NoLeaves);
        }
        if self.merges.len() != n - 1 {
            return Err(HistoryError::WrongMergeCount {
                n,
                expected: n - 1,
                got: self.merges.len(),
            });
        }
        let mut active = vec![true; n];
        active.resize(2 * n - 1, false);
        let mut prev = 0.0;
        for (i, &(a, b, t)) in self.merges.iter().enumerate() {
            let k = i + 1;
            if a == b {
                return Err(HistoryError::SelfMerge { k, id: a });
            }
            for id in [a, b] {
                if id >= n + i || !active[id] {
                    return Err(HistoryError::InactiveCluster { k, id });
                }
            }
            if !t.is_finite() || t < prev {
                return Err(HistoryError::BadTime { k, t });
            }
            prev = t;
            active[a] = false;
            active[b] = false;
            active[n + i] = true;
        }
        Ok(())
    }

    /// Merge times t_1..t_{n−1}.
    pub fn times(&self) -> Vec<f64> {
        self.merges.iter().map(|m| m.2).collect()
    }

    /// Creation time of every cluster id (0 for leaves), length 2n − 1.
    pub fn cluster_times(&self) -> Vec<f64> {
        let mut t = vec![0.0; self.n];
        t.extend(self.times());
        t
    }

    /// Parent id of every cluster (the root has none), length 2n − 1.
    pub fn parents(&self) -> Result<Vec<Option<usize>>> {
        self.validate()?;
        let mut p = vec![None; self.n + self.merges.len()];
        for (k, &(a, b, _)) in self.merges.iter().enumerate() {
            p[a] = Some(self.n + k);
            p[b] = Some(self.n + k);
        }
        Ok(p)
    }
}

/// λ_k = C(m, 2) for m active clusters.
pub(super) fn pair_rate(m: usize) -> f64 {
    let m = m as f64;
    m * (m - 1.0) / 2.0
}

/// log prior density of (t, π) (spec §3.2, HL eq. 2): Σ_k −λ_k Δ_k with Δ_k = t_k − t_{k−1}, t_0 = 0.
pub fn ln_prior(h: &History) -> Result<f64> {
    h.validate()?;
    let mut prev = 0.0;
    let mut s = 0.0;
    for (i, &(_, _, t)) in h.merges.iter().enumerate() {
        s -= pair_rate(h.n - i) * (t - prev);
        prev = t;
    }
    Ok(s)
}

/// Normalised Brownian message N(z; mean, s·Φ) of a cluster created at time `t` (spec §3.3).
/// Means are in whitened coordinates. Leaves: mean = x, s = 0, t = 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// Message mean m_c (whitened).
    pub mean: Vec<f64>,
    /// Variance factor s_c ≥ 0.
    pub s: f64,
    /// Creation time t_c ≥ 0.
    pub t: f64,
}

impl Cluster {
    /// Leaf message.
    pub fn leaf(x: Vec<f64>) -> Self {
        Cluster {
            mean: x,
            s: 0.0,
            t: 0.0,
        }
    }
}

/// Per-merge quantities of spec §3.3 (HL naming: v total, r offset).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MergeStats {
    /// Offset r_k = s_{c1} + s_{c2} + 2 t_{k−1} − t_{c1} − t_{c2}.
    pub r: f64,
    /// Total variance factor v_k = s̃_{c1} + s̃_{c2} = 2Δ_k + r_k.
    pub v: f64,
    /// ε = ‖m_{c1} − m_{c2}‖² (whitened, i.e. the Φ⁻¹ quadratic form).
    pub eps: f64,
    /// log Z_k = −(d/2) log(2π v) − ln_det_half − ε/(2v).
    pub ln_z: f64,
}

/// Squared Euclidean distance of two whitened means (ε of spec §3.3).
pub fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// Merge two messages at time `t_k` given the previous merge time `t_prev` (used only for r_k;
/// for a Görür–Teh race pass the pair's creation time). Returns the parent message and
/// [`MergeStats`]. `ln_det_half` (½ log|Φ|) is subtracted once in log Z_k; pass 0 for whitened-only.
pub fn merge(
    c1: &Cluster,
    c2: &Cluster,
    t_prev: f64,
    t_k: f64,
    ln_det_half: f64,
) -> Result<(Cluster, MergeStats)> {
    if c1.mean.len() != c2.mean.len() || c1.mean.is_empty() {
        return Err(HistoryError::BadData(format!(
            "message dimensions {} and {} differ or are zero",
            c1.mean.len(),
            c2.mean.len()
        )));
    }
    for c in [c1, c2] {
        if !c.s.is_finite() || c.s < 0.0 {
            return Err(invalid("s", c.s, "must be finite and >= 0"));
        }
        if !c.t.is_finite() || c.t < 0.0 || c.t > t_prev {
            return Err(invalid("t_c", c.t, "must be finite, >= 0 and <= t_prev"));
        }
    }
    if !t_prev.is_finite() {
        return Err(invalid("t_prev", t_prev, "must be finite"));
    }
    if !t_k.is_finite() || t_k < t_prev {
        return Err(invalid("t_k", t_k, "must be finite and >= t_prev"));
    }
    if !ln_det_half.is_finite() {
        return Err(invalid("ln_det_half", ln_det_half, "must be finite"));
    }
    let eps = sq_dist(&c1.mean, &c2.mean);
    if !eps.is_finite() {
        return Err(HistoryError::BadData("non-finite message mean".into()));
    }
    merge_unchecked(c1, c2, t_prev, t_k, ln_det_half, eps)
}

pub(super) fn merge_unchecked(
    c1: &Cluster,
    c2: &Cluster,
    t_prev: f64,
    t_k: f64,
    ln_det_half: f64,
    eps: f64,
) -> Result<(Cluster, MergeStats)> {
    let s1 = c1.s + (t_k - c1.t);
    let s2 = c2.s + (t_k - c2.t);
    let v = s1 + s2;
    if v <= 0.0 || !v.is_finite() {
        return Err(HistoryError::DegenerateVariance { t: t_k, v });
    }
    let r = c1.s + c2.s + 2.0 * t_prev - c1.t - c2.t;
    let d = c1.mean.len() as f64;
    let ln_z = -0.5 * d * (2.0 * std::f64::consts::PI * v).ln() - ln_det_half - eps / (2.0 * v);
    // m = s (m1/s̃1 + m2/s̃2) = (s̃2 m1 + s̃1 m2)/v; s = s̃1 s̃2 / v (finite even if one s̃ is 0).
    let mean = c1
        .mean
        .iter()
        .zip(&c2.mean)
        .map(|(a, b)| (s2 * a + s1 * b) / v)
        .collect();
    let parent = Cluster {
        mean,
        s: s1 * s2 / v,
        t: t_k,
    };
    Ok((parent, MergeStats { r, v, eps, ln_z }))
}

pub(super) fn check_data(data: &[Vec<f64>], n: usize) -> Result<usize> {
    if data.len() != n {
        return Err(HistoryError::BadData(format!(
            "{} rows for {n} leaves",
            data.len()
        )));
    }
    let d = data.first().map_or(0, Vec::len);
    if d == 0 {
        return Err(HistoryError::BadData("dimension d = 0".into()));
    }
    for (i, row) in data.iter().enumerate() {
        if row.len() != d {
            return Err(HistoryError::BadData(format!(
                "row {i} has length {}, expected {d}",
                row.len()
            )));
        }
        if row.iter().any(|x| !x.is_finite()) {
            return Err(HistoryError::BadData(format!("row {i} is not finite")));
        }
    }
    Ok(d)
}

/// Upward message passing over a whole history (spec §3.3): the [`MergeStats`] of every merge.
pub fn merge_stats(h: &History, data: &[Vec<f64>], ln_det_half: f64) -> Result<Vec<MergeStats>> {
    h.validate()?;
    check_data(data, h.n)?;
    if !ln_det_half.is_finite() {
        return Err(invalid("ln_det_half", ln_det_half, "must be finite"));
    }
    let mut msgs: Vec<Option<Cluster>> = data
        .iter()
        .map(|x| Some(Cluster::leaf(x.clone())))
        .collect();
    let mut out = Vec::with_capacity(h.merges.len());
    let mut prev = 0.0;
    for &(a, b, t) in &h.merges {
        let (ca, cb) = match (msgs[a].take(), msgs[b].take()) {
            (Some(ca), Some(cb)) => (ca, cb),
            _ => return Err(HistoryError::BadData("internal: missing message".into())),
        };
        let eps = sq_dist(&ca.mean, &cb.mean);
        let (p, st) = merge_unchecked(&ca, &cb, prev, t, ln_det_half, eps)?;
        msgs.push(Some(p));
        out.push(st);
        prev = t;
    }
    Ok(out)
}

/// log p(X | t, π, Φ) = Σ_k log Z_k (HL eq. 3); `data` whitened, `ln_det_half` = ½ log|Φ|.
pub fn ln_likelihood(h: &History, data: &[Vec<f64>], ln_det_half: f64) -> Result<f64> {
    Ok(merge_stats(h, data, ln_det_half)?
        .iter()
        .map(|s| s.ln_z)
        .sum())
}

/// log p(X, t, π) = ln_prior + ln_likelihood (HL eq. 4).
pub fn ln_joint(h: &History, data: &[Vec<f64>], ln_det_half: f64) -> Result<f64> {
    Ok(ln_prior(h)? + ln_likelihood(h, data, ln_det_half)?)
}

/// Index of pair {i, j} in a condensed (scipy `pdist`) vector over n items; `None` when i = j or
/// an index is ≥ n.
pub fn condensed_index(n: usize, i: usize, j: usize) -> Option<usize> {
    (i != j && i < n && j < n).then(|| cidx(n, i, j))
}

/// Unchecked [`condensed_index`] (requires i ≠ j, both < n).
pub(super) fn cidx(n: usize, i: usize, j: usize) -> usize {
    let (i, j) = if i < j { (i, j) } else { (j, i) };
    n * i - i * (i + 1) / 2 + (j - i - 1)
}

/// MRCA times D_ij = t_{MRCA(i,j)} for all i < j (spec §4.1), condensed order (0,1), (0,2), …,
/// (n−2, n−1); see [`condensed_index`]. O(n²).
pub fn mrca_times(h: &History) -> Result<Vec<f64>> {
    h.validate()?;
    let n = h.n;
    let mut out = vec![0.0; n * (n - 1) / 2];
    let mut members: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    for &(a, b, t) in &h.merges {
        let ma = std::mem::take(&mut members[a]);
        let mut mb = std::mem::take(&mut members[b]);
        for &i in &ma {
            for &j in &mb {
                out[cidx(n, i, j)] = t;
            }
        }
        mb.extend(ma);
        members.push(mb);
    }
    Ok(out)
}
#[cfg(test)]
mod tests {
    use super::super::covariance::{Covariance, Kernel};
    use super::super::generator::sample_history;
    use super::*;
    use nalgebra::DMatrix;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    fn x62() -> Vec<Vec<f64>> {
        vec![
            vec![0.3, -0.1, 0.5],
            vec![0.9, 0.2, 0.1],
            vec![-0.7, 0.4, 0.0],
            vec![-0.5, 0.8, -0.3],
            vec![0.1, 0.1, 0.9],
        ]
    }
    fn phi_se() -> Covariance {
        Covariance::new(Kernel::SquaredExp {
            positions: vec![1.0 / 3.0, 2.0 / 3.0, 1.0],
            ell: 0.25,
            noise: 0.1,
        })
    }
    fn h62() -> History {
        History::new(4, vec![(0, 1, 0.2), (2, 3, 0.5), (4, 5, 1.3)]).unwrap()
    }

    #[test]
    fn spec_6_2_log_joint() {
        let h = h62();
        assert!((ln_prior(&h).unwrap() + 2.9).abs() < 1e-12);
        let x = &x62()[..4];
        let w = phi_se().whitening().unwrap();
        let ll = ln_likelihood(&h, &w.whiten_rows(x).unwrap(), w.ln_det_half()).unwrap();
        assert!((ll - -9.7973163956).abs() < 1e-8, "{ll}");
        let ll_i = ln_likelihood(&h, x, 0.0).unwrap();
        assert!((ll_i - -9.4521282476).abs() < 1e-8, "{ll_i}");
        let lj = ln_joint(&h, x, 0.0).unwrap();
        assert!((lj - (-2.9 - 9.4521282476)).abs() < 1e-8);
    }

    /// Exact κ → ∞ limit of spec §3.3's covariance form, with the constant mean projected out,
    /// computed densely (no whitening): −((n−1)d/2) log 2π − (d/2)[log|A| + log 1ᵀA⁻¹1]
    /// − ((n−1)/2) log|Φ| − ½ tr(Φ⁻¹ Xᵀ P X), A_ij = T − D_ij, P = A⁻¹ − A⁻¹11ᵀA⁻¹/(1ᵀA⁻¹1).
    fn dense_limit(h: &History, x: &[Vec<f64>], phi: &DMatrix<f64>) -> f64 {
        let (n, d) = (h.n, phi.nrows());
        let tmax = h.merges.last().unwrap().2;
        let dm = mrca_times(h).unwrap();
        let a = DMatrix::from_fn(n, n, |i, j| {
            if i == j {
                tmax
            } else {
                tmax - dm[cidx(n, i, j)]
            }
        });
        let ca = a.clone().cholesky().unwrap();
        let ainv = ca.inverse();
        let one = DMatrix::from_element(n, 1, 1.0);
        let a1 = &ainv * &one;
        let s = (one.transpose() * &a1)[(0, 0)];
        let p = &ainv - &a1 * a1.transpose() / s;
        let cp = phi.clone().cholesky().unwrap();
        let xm = DMatrix::from_fn(n, d, |i, j| x[i][j]);
        let quad = (cp.inverse() * xm.transpose() * p * xm).trace();
        let ln_det = |m: &DMatrix<f64>| 2.0 * m.diagonal().iter().map(|v| v.ln()).sum::<f64>();
        -(((n - 1) * d) as f64) / 2.0 * (2.0 * std::f64::consts::PI).ln()
            - d as f64 / 2.0 * (ln_det(&ca.l()) + s.ln())
            - (n - 1) as f64 / 2.0 * ln_det(&cp.l())
            - 0.5 * quad
    }

    /// The literal recipe of spec §3.3 with finite κ (dense nd × nd Gaussian).
    fn dense_kappa(h: &History, x: &[Vec<f64>], phi: &DMatrix<f64>, kappa: f64) -> f64 {
        let (n, d) = (h.n, phi.nrows());
        let tmax = h.merges.last().unwrap().2;
        let dm = mrca_times(h).unwrap();
        let c = |i: usize, j: usize| kappa + tmax - if i == j { 0.0 } else { dm[cidx(n, i, j)] };
        let big = DMatrix::from_fn(n * d, n * d, |p, q| c(p / d, q / d) * phi[(p % d, q % d)]);
        let ch = big.cholesky().unwrap();
        let v = DMatrix::from_fn(n * d, 1, |p, _| x[p / d][p % d]);
        let sol = ch.solve(&v);
        let ln_det_big = 2.0 * ch.l().diagonal().iter().map(|v| v.ln()).sum::<f64>();
        let ln_det_phi = 2.0
            * phi
                .clone()
                .cholesky()
                .unwrap()
                .l()
                .diagonal()
                .iter()
                .map(|v| v.ln())
                .sum::<f64>();
        let ln_n = -((n * d) as f64) / 2.0 * (2.0 * std::f64::consts::PI).ln()
            - 0.5 * ln_det_big
            - 0.5 * (v.transpose() * sol)[(0, 0)];
        ln_n + d as f64 / 2.0 * (2.0 * std::f64::consts::PI * kappa).ln() + 0.5 * ln_det_phi
    }

    fn phi_dense(c: &Covariance) -> DMatrix<f64> {
        let d = c.dim();
        DMatrix::from_row_slice(d, d, &c.matrix_row_major().unwrap())
    }

    #[test]
    fn message_passing_equals_dense_covariance_form() {
        let mut rng = StdRng::seed_from_u64(5);
        for rep in 0..40 {
            let n = 2 + rep % 7;
            let d = 1 + rep % 4;
            let h = sample_history(n, &mut rng).unwrap();
            let positions: Vec<f64> = (0..d).map(|_| rng.random_range(0.0..1.0)).collect();
            let cov = Covariance::new(Kernel::SquaredExp {
                positions,
                ell: 0.05,
                noise: 0.2,
            });
            let x: Vec<Vec<f64>> = (0..n)
                .map(|_| (0..d).map(|_| rng.random_range(-1.0..1.0)).collect())
                .collect();
            let w = cov.whitening().unwrap();
            let mp = ln_likelihood(&h, &w.whiten_rows(&x).unwrap(), w.ln_det_half()).unwrap();
            let dense = dense_limit(&h, &x, &phi_dense(&cov));
            assert!(
                (mp - dense).abs() < 1e-6 * (1.0 + dense.abs()),
                "rep {rep}: {mp} vs {dense}"
            );
        }
        // Spec §3.3 recipe with κ = 1e7 on the §6.2 example (spec: −9.79731648 / −9.45212835).
        let h = h62();
        let x = &x62()[..4];
        let k_se = dense_kappa(&h, x, &phi_dense(&phi_se()), 1e7);
        let k_i = dense_kappa(&h, x, &DMatrix::identity(3, 3), 1e7);
        assert!((k_se - -9.79731648).abs() < 1e-6, "{k_se}");
        assert!((k_i - -9.45212835).abs() < 1e-6, "{k_i}");
        assert!((dense_limit(&h, x, &phi_dense(&phi_se())) - -9.7973163956).abs() < 1e-8);
    }

    #[test]
    fn validation_errors() {
        let bad = |n, m: Vec<(usize, usize, f64)>| History::new(n, m).unwrap_err();
        assert_eq!(condensed_index(4, 2, 1), Some(3));
        assert_eq!(condensed_index(4, 2, 3), Some(5));
        assert_eq!(condensed_index(4, 2, 2), None);
        assert_eq!(condensed_index(4, 2, 4), None);
        let broken = History {
            n: 3,
            merges: vec![(0, 7, 1.0), (1, 2, 2.0)],
        };
        assert!(broken.parents().is_err());
        assert!(ln_prior(&broken).is_err() && mrca_times(&broken).is_err());
        assert_eq!(bad(0, vec![]), HistoryError::NoLeaves);
        assert!(matches!(
            bad(3, vec![(0, 1, 1.0)]),
            HistoryError::WrongMergeCount { .. }
        ));
        assert!(matches!(
            bad(3, vec![(0, 1, 1.0), (0, 2, 2.0)]),
            HistoryError::InactiveCluster { id: 0, .. }
        ));
        assert!(matches!(
            bad(3, vec![(0, 4, 1.0), (2, 3, 2.0)]),
            HistoryError::InactiveCluster { id: 4, .. }
        ));
        assert!(matches!(
            bad(3, vec![(1, 1, 1.0), (0, 3, 2.0)]),
            HistoryError::SelfMerge { .. }
        ));
        assert!(matches!(
            bad(3, vec![(0, 1, 2.0), (2, 3, 1.0)]),
            HistoryError::BadTime { k: 2, .. }
        ));
        assert!(matches!(
            bad(2, vec![(0, 1, f64::NAN)]),
            HistoryError::BadTime { .. }
        ));
        assert!(matches!(
            bad(2, vec![(0, 1, -1.0)]),
            HistoryError::BadTime { .. }
        ));
        let h = h62();
        assert!(ln_likelihood(&h, &x62(), 0.0).is_err());
        assert!(ln_likelihood(&h, &x62()[..4], f64::NAN).is_err());
        let leaf = |v: f64| Cluster::leaf(vec![v, 0.0]);
        assert!(merge(&leaf(0.0), &Cluster::leaf(vec![1.0]), 0.0, 1.0, 0.0).is_err());
        assert!(merge(&leaf(0.0), &leaf(1.0), 0.5, 0.2, 0.0).is_err());
        let (p, st) = merge(&leaf(0.0), &leaf(1.0), 0.0, 0.5, 0.0).unwrap();
        assert_eq!((st.r, st.v, st.eps, p.s, p.t), (0.0, 1.0, 1.0, 0.25, 0.5));
        assert_eq!(p.mean, vec![0.5, 0.0]);
        let n1 = History::new(1, vec![]).unwrap();
        assert_eq!(ln_prior(&n1).unwrap(), 0.0);
        assert_eq!(to_newick(&n1, None).unwrap(), "0;");
        assert_eq!(from_newick("0;", None).unwrap(), n1);
    }
}
