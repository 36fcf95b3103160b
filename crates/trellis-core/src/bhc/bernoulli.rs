//! Binary features: each feature `d` of a cluster has its own success probability
//! `θ_d ~ Beta(a_d, b_d)`, and the points' bits are independent Bernoulli draws given `θ`:
//!
//! `log p(D_C) = Σ_d [ln B(a_d + c_d, b_d + n − c_d) − ln B(a_d, b_d)]`,
//!
//! with `n = |C|` and `c_d` the number of points of `C` whose feature `d` is 1.
//!
//! ## Hyperparameters
//! [`BetaBernoulli::new`] takes `a_d, b_d` explicitly. [`BetaBernoulli::from_data`] sets them
//! from the data's feature means `m_d`: `a_d = s m_d`, `b_d = s (1 − m_d)` with prior strength
//! `s` (2 by default: the prior mean of each feature is its frequency in the whole data set, as
//! worth two observations), with `m_d` clamped to `[1/(2N), 1 − 1/(2N)]` so that a feature
//! that is constant in the data keeps a proper prior. Centring the prior on the data's
//! frequencies is the usual empirical-Bayes choice for BHC on binary data; we could not check the
//! paper's exact values offline, so this is our choice, stated.

use super::{check_rows, ln_beta, BhcError, ConjugateModel};
use statrs::function::gamma::ln_gamma;

/// Beta–Bernoulli per binary feature; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct BetaBernoulli {
    /// `bits[i][d]`, 0 or 1.
    bits: Vec<Vec<u8>>,
    a: Vec<f64>,
    b: Vec<f64>,
    /// `ln B(a_d, b_d)`, summed over features.
    ln_beta0: f64,
    /// `ln Γ(a_d + c)`, `ln Γ(b_d + c)` and `ln Γ(a_d + b_d + c)` for `c = 0..=N`, row `d` at
    /// `d (N + 1)` (empty when `D (N + 1)` is above [`TABLE_LIMIT`]: then computed each time).
    lg_a: Vec<f64>,
    lg_b: Vec<f64>,
    lg_ab: Vec<f64>,
}

/// Largest `D (N + 1)` for which [`BetaBernoulli`] tabulates its log-gamma values (three
/// tables of this many f64: 384 MiB at the limit).
const TABLE_LIMIT: usize = 1 << 24;

/// Statistics of a group: its size and the number of ones per feature.
#[derive(Clone, Debug, PartialEq)]
pub struct BernoulliStat {
    /// Number of points.
    pub n: u32,
    /// Ones per feature.
    pub ones: Vec<u32>,
}

impl BetaBernoulli {
    /// The model of the rows of `x` (every entry 0 or 1) with `Beta(a[d], b[d])` per feature.
    pub fn new(x: &[Vec<f64>], a: Vec<f64>, b: Vec<f64>) -> Result<Self, BhcError> {
        let d = check_rows(x)?;
        for (name, v) in [("a", &a), ("b", &b)] {
            if v.len() != d {
                return Err(BhcError::BadParameter {
                    name,
                    value: v.len() as f64,
                    expected: "one Beta parameter per feature",
                });
            }
            if let Some(&bad) = v.iter().find(|&&p| !(p > 0.0 && p.is_finite())) {
                return Err(BhcError::BadParameter {
                    name,
                    value: bad,
                    expected: "Beta parameters must be positive and finite",
                });
            }
        }
        let mut bits = Vec::with_capacity(x.len());
        for (row, r) in x.iter().enumerate() {
            let mut out = Vec::with_capacity(d);
            for (col, &v) in r.iter().enumerate() {
                if v != 0.0 && v != 1.0 {
                    return Err(BhcError::BadValue {
                        row,
                        col,
                        value: v,
                        expected: "binary features must be 0 or 1",
                    });
                }
                out.push(v as u8);
            }
            bits.push(out);
        }
        let ln_beta0 = a.iter().zip(&b).map(|(&p, &q)| ln_beta(p, q)).sum();
        let n = x.len();
        let (mut lg_a, mut lg_b, mut lg_ab) = (Vec::new(), Vec::new(), Vec::new());
        if d.saturating_mul(n + 1) <= TABLE_LIMIT {
            for (&p, &q) in a.iter().zip(&b) {
                for c in 0..=n {
                    let c = c as f64;
                    lg_a.push(ln_gamma(p + c));
                    lg_b.push(ln_gamma(q + c));
                    lg_ab.push(ln_gamma(p + q + c));
                }
            }
        }
        Ok(BetaBernoulli {
            bits,
            a,
            b,
            ln_beta0,
            lg_a,
            lg_b,
            lg_ab,
        })
    }

    /// The model with the prior centred on the data's feature frequencies, with strength
    /// `strength > 0` (see the [module docs](self); 2 is the default we use).
    pub fn from_data(x: &[Vec<f64>], strength: f64) -> Result<Self, BhcError> {
        if !(strength > 0.0 && strength.is_finite()) {
            return Err(BhcError::BadParameter {
                name: "strength",
                value: strength,
                expected: "the prior strength must be positive and finite",
            });
        }
        let d = check_rows(x)?;
        let n = x.len() as f64;
        let lo = 0.5 / n;
        let (mut a, mut b) = (Vec::with_capacity(d), Vec::with_capacity(d));
        for j in 0..d {
            let m = (x.iter().map(|r| r[j]).sum::<f64>() / n).clamp(lo, 1.0 - lo);
            a.push(strength * m);
            b.push(strength * (1.0 - m));
        }
        // `new` checks the entries are binary (a clamped mean of non-binary data is still finite).
        BetaBernoulli::new(x, a, b)
    }

    /// The Beta parameters `(a, b)`.
    pub fn prior(&self) -> (&[f64], &[f64]) {
        (&self.a, &self.b)
    }
}

impl ConjugateModel for BetaBernoulli {
    type Stat = BernoulliStat;

    fn n_points(&self) -> usize {
        self.bits.len()
    }

    fn leaf(&self, i: usize) -> BernoulliStat {
        BernoulliStat {
            n: 1,
            ones: self.bits[i].iter().map(|&v| v as u32).collect(),
        }
    }

    fn merge(&self, x: &BernoulliStat, y: &BernoulliStat) -> BernoulliStat {
        BernoulliStat {
            n: x.n + y.n,
            ones: x.ones.iter().zip(&y.ones).map(|(p, q)| p + q).collect(),
        }
    }

    fn log_marginal(&self, s: &BernoulliStat) -> f64 {
        if !self.lg_a.is_empty() {
            let (n, w) = (s.n as usize, self.bits.len() + 1);
            let post: f64 = s
                .ones
                .iter()
                .enumerate()
                .map(|(d, &c)| {
                    let row = d * w;
                    let c = c as usize;
                    self.lg_a[row + c] + self.lg_b[row + n - c] - self.lg_ab[row + n]
                })
                .sum();
            return post - self.ln_beta0;
        }
        let n = s.n as f64;
        let post: f64 = s
            .ones
            .iter()
            .zip(self.a.iter().zip(&self.b))
            .map(|(&c, (&a, &b))| {
                let c = c as f64;
                ln_beta(a + c, b + n - c)
            })
            .sum();
        post - self.ln_beta0
    }
}
