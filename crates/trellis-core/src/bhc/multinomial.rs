//! Count vectors (bags of words): point `i` is a vector of non-negative integer counts
//! `x_i ∈ ℕ^V` with total `n_i`; the points of a cluster share category probabilities
//! `θ ~ Dirichlet(β_1..β_V)` and each `x_i ~ Multinomial(n_i, θ)`:
//!
//! `log p(D_C) = Σ_{i∈C} ln(n_i! / ∏_v x_iv!) + ln Γ(B) − ln Γ(B + M) + Σ_v [ln Γ(β_v + c_v) − ln Γ(β_v)]`,
//!
//! with `B = Σ_v β_v`, `c_v = Σ_{i∈C} x_iv` and `M = Σ_v c_v`. The multinomial coefficients make
//! `p` a distribution over count vectors of the given totals (they are a constant per point, so
//! they change no ranking of trees or partitions; they do make `p` sum to one, which the tests
//! check).
//!
//! ## Hyperparameters
//! [`DirichletMultinomial::new`] takes `β` explicitly; [`DirichletMultinomial::symmetric`]
//! sets every `β_v` to one value (1 is the uniform prior over the simplex; smaller values favour
//! sparse topics).

use super::{check_rows, BhcError, ConjugateModel};
use statrs::function::gamma::ln_gamma;

/// Dirichlet–multinomial over count vectors; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct DirichletMultinomial {
    counts: Vec<Vec<u32>>,
    /// `ln(n_i! / ∏_v x_iv!)` per point.
    ln_coef: Vec<f64>,
    beta: Vec<f64>,
    beta_sum: f64,
    /// `Σ_v ln Γ(β_v)`.
    ln_gamma_beta: f64,
}

/// Statistics of a group: counts per category and the summed log multinomial coefficients.
#[derive(Clone, Debug, PartialEq)]
pub struct CountStat {
    /// Summed counts per category.
    pub counts: Vec<u32>,
    /// Total count `M`.
    pub total: u64,
    /// `Σ_i ln(n_i! / ∏_v x_iv!)`.
    pub ln_coef: f64,
}

impl DirichletMultinomial {
    /// The model of the rows of `x` (non-negative integer counts) with `Dirichlet(beta)`.
    pub fn new(x: &[Vec<f64>], beta: Vec<f64>) -> Result<Self, BhcError> {
        let d = check_rows(x)?;
        if beta.len() != d {
            return Err(BhcError::BadParameter {
                name: "beta",
                value: beta.len() as f64,
                expected: "one Dirichlet parameter per category",
            });
        }
        if let Some(&bad) = beta.iter().find(|&&p| !(p > 0.0 && p.is_finite())) {
            return Err(BhcError::BadParameter {
                name: "beta",
                value: bad,
                expected: "Dirichlet parameters must be positive and finite",
            });
        }
        let mut counts = Vec::with_capacity(x.len());
        let mut ln_coef = Vec::with_capacity(x.len());
        for (row, r) in x.iter().enumerate() {
            let mut out = Vec::with_capacity(d);
            for (col, &v) in r.iter().enumerate() {
                if !(v >= 0.0 && v.fract() == 0.0 && v <= u32::MAX as f64) {
                    return Err(BhcError::BadValue {
                        row,
                        col,
                        value: v,
                        expected: "counts must be non-negative integers",
                    });
                }
                out.push(v as u32);
            }
            let total: f64 = out.iter().map(|&c| c as f64).sum();
            ln_coef.push(
                ln_gamma(total + 1.0) - out.iter().map(|&c| ln_gamma(c as f64 + 1.0)).sum::<f64>(),
            );
            counts.push(out);
        }
        Ok(DirichletMultinomial {
            counts,
            ln_coef,
            beta_sum: beta.iter().sum(),
            ln_gamma_beta: beta.iter().map(|&b| ln_gamma(b)).sum(),
            beta,
        })
    }

    /// The model with every `β_v = beta`.
    pub fn symmetric(x: &[Vec<f64>], beta: f64) -> Result<Self, BhcError> {
        let d = check_rows(x)?;
        DirichletMultinomial::new(x, vec![beta; d])
    }
}

impl ConjugateModel for DirichletMultinomial {
    type Stat = CountStat;

    fn n_points(&self) -> usize {
        self.counts.len()
    }

    fn leaf(&self, i: usize) -> CountStat {
        CountStat {
            counts: self.counts[i].clone(),
            total: self.counts[i].iter().map(|&c| c as u64).sum(),
            ln_coef: self.ln_coef[i],
        }
    }

    fn merge(&self, x: &CountStat, y: &CountStat) -> CountStat {
        CountStat {
            counts: x.counts.iter().zip(&y.counts).map(|(p, q)| p + q).collect(),
            total: x.total + y.total,
            ln_coef: x.ln_coef + y.ln_coef,
        }
    }

    fn log_marginal(&self, s: &CountStat) -> f64 {
        let post: f64 = s
            .counts
            .iter()
            .zip(&self.beta)
            .map(|(&c, &b)| ln_gamma(b + c as f64))
            .sum();
        s.ln_coef + ln_gamma(self.beta_sum) - ln_gamma(self.beta_sum + s.total as f64) + post
            - self.ln_gamma_beta
    }
}
