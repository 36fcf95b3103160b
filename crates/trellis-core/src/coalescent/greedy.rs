//! Greedy coalescent trees (spec §3.5 "Modes", §3.8; HL §3.3): merge-time modes as plain
//! functions of (d, ε, λ, r), all clipped at 0, and the greedy agglomeration with the spec's tie
//! rule. Re-exported from `super::history`.

use super::history::{
    check_data, invalid, merge_unchecked, pair_rate, sq_dist, Cluster, History, HistoryError,
    Result,
};

fn check_mode_args(d: usize, eps: f64, lambda: f64, r: f64) -> Result<()> {
    if d == 0 {
        return Err(invalid("d", 0.0, "must be >= 1"));
    }
    if !eps.is_finite() || eps < 0.0 {
        return Err(invalid("eps", eps, "must be finite and >= 0"));
    }
    if !lambda.is_finite() || lambda <= 0.0 {
        return Err(invalid("lambda", lambda, "must be finite and > 0"));
    }
    if !r.is_finite() || r < 0.0 {
        return Err(invalid("r", r, "must be finite and >= 0"));
    }
    Ok(())
}

/// Merge-time rule of a greedy algorithm (spec §3.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GreedyRule {
    /// HL's quotation of Teh et al.'s GREEDY: Δ^prev = (√(d² + 2λε) − d)/(2λ) − r/2.
    TehPrev,
    /// HL MGREEDY as printed: Δ = (λ̃ + √(λ̃² + λε))/(2λ) − r/2, λ̃ = 1 − d/2.
    HlMgreedy,
    /// Exact mode of e^{−λΔ} Z(Δ): Δ* = (√(d² + 4λε) − d)/(4λ) − r/2.
    ExactMode,
}

impl GreedyRule {
    /// Δ for this rule, clipped at 0 (arguments validated).
    pub fn delta(self, d: usize, eps: f64, lambda: f64, r: f64) -> Result<f64> {
        check_mode_args(d, eps, lambda, r)?;
        Ok(self.delta_unchecked(d as f64, eps, lambda, r))
    }

    // Cancellation-free forms: √(a² + b) − a = b/(√(a² + b) + a) for a ≥ 0.
    fn delta_unchecked(self, d: f64, eps: f64, lambda: f64, r: f64) -> f64 {
        let raw = match self {
            GreedyRule::TehPrev => eps / ((d * d + 2.0 * lambda * eps).sqrt() + d),
            GreedyRule::ExactMode => eps / ((d * d + 4.0 * lambda * eps).sqrt() + d),
            GreedyRule::HlMgreedy => {
                let lt = 1.0 - d / 2.0;
                let root = (lt * lt + lambda * eps).sqrt();
                if lt < 0.0 {
                    eps / (2.0 * (root - lt))
                } else {
                    (lt + root) / (2.0 * lambda)
                }
            }
        } - r / 2.0;
        raw.max(0.0)
    }
}

/// Exact mode of the merge-time posterior, clipped at 0 (spec §3.5).
pub fn mode_exact(d: usize, eps: f64, lambda: f64, r: f64) -> Result<f64> {
    GreedyRule::ExactMode.delta(d, eps, lambda, r)
}

/// HL MGREEDY merge time (HL §3.3 as printed; mode of log V), clipped at 0.
pub fn mode_hl_mgreedy(d: usize, eps: f64, lambda: f64, r: f64) -> Result<f64> {
    GreedyRule::HlMgreedy.delta(d, eps, lambda, r)
}

/// Teh et al.'s GREEDY merge time as quoted by HL (Δ^prev), clipped at 0.
pub fn mode_teh_prev(d: usize, eps: f64, lambda: f64, r: f64) -> Result<f64> {
    GreedyRule::TehPrev.delta(d, eps, lambda, r)
}

/// Result of [`greedy`]: the history and its log prior / log likelihood (with `ln_det_half`).
#[derive(Debug, Clone, PartialEq)]
pub struct GreedyOutcome {
    /// The greedy history; merged pairs are stored as (smaller id, larger id).
    pub history: History,
    /// Σ_k −λ_k Δ_k.
    pub ln_prior: f64,
    /// Σ_k log Z_k.
    pub ln_likelihood: f64,
}

/// (Δ, ε, (lower id, higher id), slot a, slot b) of the best pair so far.
type Candidate = (f64, f64, (usize, usize), usize, usize);

/// Greedy tree (spec §3.8): at each stage compute Δ for every active pair with `rule` (clipped at
/// 0), merge the argmin at t_k = t_{k−1} + Δ. Ties: smaller ε, then the lexicographically smaller
/// (lower id, higher id) pair. `data` is whitened; ε is cached per pair, O(n² d + n³) total.
/// Duplicate points can give v = 0 at t = 0 ([`HistoryError::DegenerateVariance`]): jitter them.
pub fn greedy(data: &[Vec<f64>], ln_det_half: f64, rule: GreedyRule) -> Result<GreedyOutcome> {
    // The token first: O(n² d + n³) in all, checked a row or a merge at a time.
    let cancel = crate::cancel::Cancel::new();
    let n = data.len();
    if n == 0 {
        return Err(HistoryError::NoLeaves);
    }
    let d = check_data(data, n)?;
    if !ln_det_half.is_finite() {
        return Err(invalid("ln_det_half", ln_det_half, "must be finite"));
    }
    let mut slots: Vec<Cluster> = data.iter().map(|x| Cluster::leaf(x.clone())).collect();
    let mut ids: Vec<usize> = (0..n).collect();
    let mut active: Vec<usize> = (0..n).collect();
    let mut eps = vec![0.0; n * n];
    for i in 0..n {
        if cancel.is_cancelled() {
            return Err(HistoryError::Cancelled);
        }
        for j in i + 1..n {
            let e = sq_dist(&data[i], &data[j]);
            eps[i * n + j] = e;
            eps[j * n + i] = e;
        }
    }
    let (mut merges, mut prev, mut lp, mut ll) = (Vec::with_capacity(n - 1), 0.0, 0.0, 0.0);
    for k in 0..n - 1 {
        if cancel.is_cancelled() {
            return Err(HistoryError::Cancelled);
        }
        let lambda = pair_rate(active.len());
        let mut best: Option<Candidate> = None;
        for (ai, &a) in active.iter().enumerate() {
            for &b in &active[ai + 1..] {
                let (ca, cb) = (&slots[a], &slots[b]);
                let r = ca.s + cb.s + 2.0 * prev - ca.t - cb.t;
                let e = eps[a * n + b];
                let delta = rule.delta_unchecked(d as f64, e, lambda, r.max(0.0));
                let key = (ids[a].min(ids[b]), ids[a].max(ids[b]));
                let better = match &best {
                    None => true,
                    Some((bd, be, bk, _, _)) => {
                        delta < *bd || (delta == *bd && (e < *be || (e == *be && key < *bk)))
                    }
                };
                if better {
                    best = Some((delta, e, key, a, b));
                }
            }
        }
        let (delta, e, key, a, b) = best.ok_or(HistoryError::NoLeaves)?;
        let t = prev + delta;
        let (parent, st) = merge_unchecked(&slots[a], &slots[b], prev, t, ln_det_half, e)?;
        lp -= lambda * delta;
        ll += st.ln_z;
        merges.push((key.0, key.1, t));
        slots[a] = parent;
        ids[a] = n + k;
        active.retain(|&x| x != b);
        for &c in &active {
            if c != a {
                let e = sq_dist(&slots[a].mean, &slots[c].mean);
                eps[a * n + c] = e;
                eps[c * n + a] = e;
            }
        }
        prev = t;
    }
    Ok(GreedyOutcome {
        history: History::new(n, merges)?,
        ln_prior: lp,
        ln_likelihood: ll,
    })
}

#[cfg(test)]
mod tests {
    use super::super::covariance::{Covariance, Kernel};
    use super::super::history::{ln_likelihood, ln_prior};
    use super::*;

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

    #[test]
    fn spec_6_2_greedy_table() {
        let w = phi_se().whitening().unwrap();
        let x = w.whiten_rows(&x62()).unwrap();
        let table: [(GreedyRule, [f64; 4], f64, f64); 3] = [
            (
                GreedyRule::TehPrev,
                [0.04489627, 0.13199648, 0.19629064, 1.18667228],
                -2.15482810,
                -9.87583205,
            ),
            (
                GreedyRule::HlMgreedy,
                [0.06647283, 0.16677222, 0.27475603, 1.38859747],
                -2.70431749,
                -9.79694338,
            ),
            (
                GreedyRule::ExactMode,
                [0.04061695, 0.11444865, 0.17507363, 1.00489064],
                -1.86085165,
                -10.15293556,
            ),
        ];
        let pairs = [(0, 4), (2, 3), (1, 5), (6, 7)];
        for (rule, times, lp, ll) in table {
            let g = greedy(&x, w.ln_det_half(), rule).unwrap();
            for (k, &(a, b, t)) in g.history.merges.iter().enumerate() {
                assert_eq!((a, b), pairs[k], "{rule:?}");
                assert!((t - times[k]).abs() < 1e-8, "{rule:?} t{k} = {t}");
            }
            assert!((g.ln_prior - lp).abs() < 1e-8, "{rule:?} {}", g.ln_prior);
            assert!(
                (g.ln_likelihood - ll).abs() < 1e-8,
                "{rule:?} {}",
                g.ln_likelihood
            );
            assert!((ln_prior(&g.history).unwrap() - g.ln_prior).abs() < 1e-12);
            let l2 = ln_likelihood(&g.history, &x, w.ln_det_half()).unwrap();
            assert!((l2 - g.ln_likelihood).abs() < 1e-12);
        }
    }

    #[test]
    fn mode_formulas_and_ties() {
        // Exact mode maximises −λΔ − (d/2) log(2π(2Δ + r)) − ε/(2(2Δ + r)).
        let (d, eps, lambda, r) = (3, 2.5, 6.0, 0.05);
        let f = |dl: f64| {
            let v = 2.0 * dl + r;
            -lambda * dl - 1.5 * v.ln() - eps / (2.0 * v)
        };
        let m = mode_exact(d, eps, lambda, r).unwrap();
        assert!(f(m) > f(m + 1e-4) && f(m) > f(m - 1e-4));
        // Lemma 1: HL and Teh cross at λε = 4(d + 2).
        let e = 4.0 * 5.0 / lambda;
        let (a, b) = (
            mode_hl_mgreedy(d, e, lambda, 0.0).unwrap(),
            mode_teh_prev(d, e, lambda, 0.0).unwrap(),
        );
        assert!((a - b).abs() < 1e-14);
        assert_eq!(mode_exact(d, 0.1, lambda, 10.0).unwrap(), 0.0);
        assert!(mode_exact(0, 1.0, 1.0, 0.0).is_err());
        assert!(mode_teh_prev(2, -1.0, 1.0, 0.0).is_err());
        assert!(mode_hl_mgreedy(2, 1.0, 0.0, 0.0).is_err());
        // Symmetric square: all four sides tie on Δ and ε → pair (0, 1) first.
        let sq = vec![
            vec![0.0, 0.0],
            vec![1.0, 0.0],
            vec![0.0, 1.0],
            vec![1.0, 1.0],
        ];
        let g = greedy(&sq, 0.0, GreedyRule::ExactMode).unwrap();
        assert_eq!((g.history.merges[0].0, g.history.merges[0].1), (0, 1));
        assert_eq!((g.history.merges[1].0, g.history.merges[1].1), (2, 3));
        let dup = vec![vec![1.0, 2.0, 3.0], vec![1.0, 2.0, 3.0]];
        assert!(matches!(
            greedy(&dup, 0.0, GreedyRule::HlMgreedy),
            Err(HistoryError::DegenerateVariance { .. })
        ));
        assert!(greedy(&[], 0.0, GreedyRule::TehPrev).is_err());
        assert!(greedy(&[vec![1.0], vec![1.0, 2.0]], 0.0, GreedyRule::TehPrev).is_err());
    }
}
