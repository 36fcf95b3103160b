//! Parameters (θ, α, c, σ²) of the Pitman–Yor diffusion tree and the tables of Γ-ratios and
//! generalised harmonic numbers its prior needs (spec §2.1, §2.2, §2.4).

use super::PydtError;
use statrs::function::gamma::ln_gamma;

/// Largest accepted θ: Γ(m − α)/Γ(m + 1 + θ) stays far above the smallest double up to here
/// (ln Γ(102) ≈ 360), while θ ≳ 170 makes it underflow and the generative process degenerate.
pub const MAX_THETA: f64 = 100.0;

/// Parameters of the PYDT (spec §2.1): divergence function a(t) = c/(1−t), concentration θ,
/// discount α, diffusion variance σ². The DDT is θ = α = 0.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Concentration θ ≥ −2α.
    pub theta: f64,
    /// Discount α ∈ [0, 1).
    pub alpha: f64,
    /// Divergence smoothness c > 0.
    pub c: f64,
    /// Diffusion variance σ² > 0.
    pub sigma2: f64,
}

impl Params {
    /// Checked parameters: one-line errors name the parameter and its domain.
    pub fn new(theta: f64, alpha: f64, c: f64, sigma2: f64) -> Result<Self, PydtError> {
        let p = Self {
            theta,
            alpha,
            c,
            sigma2,
        };
        p.validate()?;
        Ok(p)
    }

    /// The Dirichlet diffusion tree: θ = α = 0.
    pub fn ddt(c: f64, sigma2: f64) -> Result<Self, PydtError> {
        Self::new(0.0, 0.0, c, sigma2)
    }

    /// Check the domain (spec §2.1): 0 ≤ α < 1, θ ≥ −2α, c > 0, σ² > 0, all finite.
    pub fn validate(&self) -> Result<(), PydtError> {
        let bad = |name: &'static str, value: f64, domain: &'static str| {
            Err(PydtError::Parameter {
                name,
                value,
                domain,
            })
        };
        if !(self.alpha >= 0.0 && self.alpha < 1.0) {
            return bad("alpha", self.alpha, "0 <= alpha < 1");
        }
        if !(self.theta >= -2.0 * self.alpha && self.theta <= MAX_THETA) {
            return bad(
                "theta",
                self.theta,
                "-2 alpha <= theta <= 100 (beyond 100 the divergence rates underflow)",
            );
        }
        if !(self.c.is_finite() && self.c > 0.0) {
            return bad("c", self.c, "c > 0 (and finite)");
        }
        if !(self.sigma2.is_finite() && self.sigma2 > 0.0) {
            return bad("sigma2", self.sigma2, "sigma2 > 0 (and finite)");
        }
        Ok(())
    }

    /// Whether a node may have more than two children (θ + 2α ≠ 0; spec §2.1).
    pub fn multifurcating(&self) -> bool {
        self.theta + 2.0 * self.alpha != 0.0
    }
}

/// Tables of the (θ, α)-dependent terms for trees of up to `n` leaves (spec §2.4); rebuild them
/// whenever θ or α changes.
///
/// * `rate(m)` = Γ(m − α)/Γ(m + 1 + θ): the divergence-rate multiplier on a segment traversed by
///   m ≥ 1 earlier points (eq. 1);
/// * `h(n)` = H_n = Σ_{i=1..n} rate(i), H_0 = 0;
/// * `ln_s(counts)`: log of the structure factor S_v of a node with children's leaf counts `counts`.
#[derive(Debug, Clone)]
pub struct Tables {
    theta: f64,
    alpha: f64,
    rate: Vec<f64>,
    ln_rate: Vec<f64>,
    h: Vec<f64>,
    ln_gamma_n_minus_alpha: Vec<f64>,
    ln_gamma_m_plus_theta: Vec<f64>,
    ln_prod_new_branch: Vec<f64>,
    ln_gamma_1_minus_alpha: f64,
}

impl Tables {
    /// Tables for trees of up to `n` leaves.
    pub fn new(params: &Params, n: usize) -> Self {
        let (theta, alpha) = (params.theta, params.alpha);
        let n = n.max(2);
        let mut rate = vec![0.0; n + 1];
        let mut ln_rate = vec![f64::NEG_INFINITY; n + 1];
        let mut h = vec![0.0; n + 1];
        let mut lg_a = vec![f64::NAN; n + 1];
        let mut lg_t = vec![f64::NAN; n + 1];
        for m in 1..=n {
            let mf = m as f64;
            lg_a[m] = ln_gamma(mf - alpha);
            ln_rate[m] = lg_a[m] - ln_gamma(mf + 1.0 + theta);
            rate[m] = ln_rate[m].exp();
            h[m] = h[m - 1] + rate[m];
            // Γ(m + θ) for m ≥ 2 (θ ≥ −2α > −2); m = 1 only ever appears for θ > −1.
            lg_t[m] = if mf + theta > 0.0 {
                ln_gamma(mf + theta)
            } else {
                f64::NAN
            };
        }
        // ln ∏_{k=3..K} (θ + (k−1)α), indexed by K (0 for K ≤ 2; −∞ once a factor is ≤ 0).
        let mut prod = vec![0.0; n + 1];
        for k in 3..=n {
            let f = theta + (k as f64 - 1.0) * alpha;
            prod[k] = if f > 0.0 {
                prod[k - 1] + f.ln()
            } else {
                f64::NEG_INFINITY
            };
        }
        Self {
            theta,
            alpha,
            rate,
            ln_rate,
            h,
            ln_gamma_n_minus_alpha: lg_a,
            ln_gamma_m_plus_theta: lg_t,
            ln_prod_new_branch: prod,
            ln_gamma_1_minus_alpha: ln_gamma(1.0 - alpha),
        }
    }

    /// Largest leaf count the tables cover.
    pub fn max_leaves(&self) -> usize {
        self.h.len() - 1
    }

    /// θ of these tables.
    pub fn theta(&self) -> f64 {
        self.theta
    }

    /// α of these tables.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Γ(m − α)/Γ(m + 1 + θ), m ≥ 1.
    pub fn rate(&self, m: usize) -> f64 {
        self.rate[m]
    }

    /// log of [`Self::rate`].
    pub fn ln_rate(&self, m: usize) -> f64 {
        self.ln_rate[m]
    }

    /// Generalised harmonic number H_n (H_0 = 0).
    pub fn h(&self, n: usize) -> f64 {
        self.h[n]
    }

    /// log S_v for a node with children's leaf counts `counts` (K = counts.len() ≥ 2, m = Σ):
    /// ln ∏_{k=3..K}(θ+(k−1)α) + Σ_k ln Γ(n_k − α) − ln Γ(m + θ) − (K−1) ln Γ(1 − α). −∞ when a
    /// multifurcation is impossible (θ + (k−1)α ≤ 0).
    pub fn ln_s(&self, counts: impl IntoIterator<Item = usize>) -> f64 {
        let (mut k, mut m, mut acc) = (0usize, 0usize, 0.0);
        for n in counts {
            k += 1;
            m += n;
            acc += self.ln_gamma_n_minus_alpha[n];
        }
        let prod = self.ln_prod_new_branch[k];
        if prod == f64::NEG_INFINITY {
            return f64::NEG_INFINITY;
        }
        prod + acc - self.ln_gamma_m_plus_theta[m] - (k as f64 - 1.0) * self.ln_gamma_1_minus_alpha
    }

    /// log of the probability (θ + αK)/(m + θ) that a point arriving at a node with K children and
    /// m earlier points starts a new branch there (eq. 3); −∞ when it is 0.
    pub fn ln_new_branch(&self, k: usize, m: usize) -> f64 {
        let num = self.theta + self.alpha * k as f64;
        if num > 0.0 {
            num.ln() - (m as f64 + self.theta).ln()
        } else {
            f64::NEG_INFINITY
        }
    }

    /// log of the probability (n_k − α)/(m + θ) of following an existing branch with n_k earlier
    /// points (eq. 2).
    pub fn ln_follow(&self, n_k: usize, m: usize) -> f64 {
        (n_k as f64 - self.alpha).ln() - (m as f64 + self.theta).ln()
    }
}
