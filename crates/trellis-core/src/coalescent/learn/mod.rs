//! Covariance learning (spec §3.4, HL §3.2): slice sampling of Φ's parameters given a history.
//!
//! HL learn θ_Φ = {ℓ, σ²} of the squared-exponential kernel (HL eq. 12) by coordinate-wise slice
//! sampling (Neal 2003) on a given tree, with the target printed as "Σ_k Z_k"; a log is evidently
//! missing (spec §7 item 11), so the target here is
//!
//!   log p(X | t, π, Φ(θ)) + log p(θ),   log p(X | t, π, Φ) = Σ_k log Z_k (spec §3.3),
//!
//! evaluated by [`history::ln_likelihood`] on the data whitened with Φ(θ) (spec §1). Every
//! evaluated θ rebuilds Φ, its Cholesky factor and the whitened data; a θ whose Φ is not positive
//! definite (or whose whitened data overflow) has log density −∞, i.e. lies outside the support.
//! Both parameters are positive and are sampled on the log scale (spec §3.4).
//!
//! Priors: HL do not state any. Our choice is an independent broad Gaussian on the log of each
//! learned parameter (see [`LearnSettings`]).
//!
//! [`slice_sample`] is a generic univariate slice sampler (stepping-out and shrinkage, Neal 2003
//! §4, as spec §2.7 prescribes for the PYDT hyper-parameters too). Everything is deterministic
//! given the RNG: the draws are made in a fixed order.

use super::covariance::{Covariance, CovarianceError, Kernel};
use super::history::{self, History, HistoryError};
use rand::{Rng, RngExt};
use thiserror::Error;

/// Maximum number of shrinkage steps of [`slice_sample`]; if no point of the slice is found by
/// then (only possible for pathological targets), the current point is returned.
pub const MAX_SHRINKS: usize = 200;

/// Errors of this module; every message is one line, names the parameter and says what to fix.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum LearnError {
    /// A scalar argument or setting outside its domain.
    #[error("invalid `{name}` = {value}: {reason}")]
    InvalidArgument {
        /// Argument name.
        name: &'static str,
        /// Offending value.
        value: f64,
        /// What is expected (and how to fix it).
        reason: &'static str,
    },
    /// The slice sampler's initial point is outside the support of the target.
    #[error(
        "slice sampler: initial point `x0` = {x0} has log density {ln_f}; start where the log density is finite"
    )]
    OutsideSupport {
        /// Initial point.
        x0: f64,
        /// Its log density (−∞, +∞ or NaN).
        ln_f: f64,
    },
    /// Number of data rows differs from the number of leaves.
    #[error(
        "`raw_data` has {got} rows but the history has {expected} leaves; pass one row per leaf"
    )]
    RowCount {
        /// Leaves of the history.
        expected: usize,
        /// Rows given.
        got: usize,
    },
    /// A data row does not have the kernel's dimension d.
    #[error(
        "`raw_data` row {row} has {got} entries but the kernel has dimension d = {expected}; match the kernel to the data"
    )]
    RowLength {
        /// Row index.
        row: usize,
        /// Kernel dimension d.
        expected: usize,
        /// Row length.
        got: usize,
    },
    /// A data entry is NaN or infinite.
    #[error("`raw_data` row {row} has a non-finite entry at column {col}; remove or impute it")]
    NonFiniteData {
        /// Row index.
        row: usize,
        /// Column index.
        col: usize,
    },
    /// `Learned::EllAndNoise` with an isotropic kernel, which has no separate noise parameter.
    #[error(
        "kernel `Isotropic` has no noise parameter (its `sigma2` is learned as ℓ); use `learned = ell`"
    )]
    NoNoiseParameter,
    /// A Matérn grid whose two length scales differ (learning uses one shared ℓ).
    #[error(
        "kernel `Matern32Grid` is learned with one shared ℓ but `ell_x` = {ell_x} != `ell_y` = {ell_y}; start from ell_x = ell_y"
    )]
    UnequalLengthScales {
        /// Length scale along x.
        ell_x: f64,
        /// Length scale along y.
        ell_y: f64,
    },
    /// The current covariance is invalid or not positive definite.
    #[error(transparent)]
    Covariance(#[from] CovarianceError),
    /// The history is invalid or the likelihood failed on it at the current covariance.
    #[error(transparent)]
    History(#[from] HistoryError),
}

fn invalid(name: &'static str, value: f64, reason: &'static str) -> LearnError {
    LearnError::InvalidArgument {
        name,
        value,
        reason,
    }
}

/// Univariate slice sampler with stepping-out and shrinkage (Neal 2003, §4, figs. 3 and 5).
///
/// One transition from `x0` that leaves the density ∝ exp(`log_f`) invariant. `log_f` may return
/// −∞ outside the support; a NaN from `log_f` (or any evaluation at a non-finite point) is treated
/// as −∞, so such points are never accepted. The initial interval of width `width` is placed
/// uniformly around `x0` and stepped out until both ends leave the slice or the interval is
/// `max_steps_out` widths long (Neal's m; 0 or 1: no stepping out), then shrunk towards `x0` on every rejection; after
/// [`MAX_SHRINKS`] rejections `x0` itself is returned (only pathological targets get there).
///
/// Draw order (for reproducibility): the slice level, the interval offset, the step-out split,
/// then one uniform per shrinkage proposal.
///
/// Errors: `width` not finite and > 0, `x0` not finite, or `log_f(x0)` not finite.
pub fn slice_sample<R: Rng + ?Sized, F: FnMut(f64) -> f64>(
    x0: f64,
    mut log_f: F,
    width: f64,
    max_steps_out: usize,
    rng: &mut R,
) -> Result<f64, LearnError> {
    check_width(width)?;
    if !x0.is_finite() {
        return Err(invalid("x0", x0, "must be finite"));
    }
    let f0 = log_f(x0);
    slice_from(x0, f0, log_f, width, max_steps_out, rng)
}

fn check_width(width: f64) -> Result<(), LearnError> {
    if !width.is_finite() || width <= 0.0 {
        return Err(invalid(
            "width",
            width,
            "slice width must be finite and > 0 (about the target's scale)",
        ));
    }
    Ok(())
}

/// [`slice_sample`] with `log_f(x0) = f0` already known (`x0`, `width` already checked).
fn slice_from<R: Rng + ?Sized, F: FnMut(f64) -> f64>(
    x0: f64,
    f0: f64,
    mut log_f: F,
    width: f64,
    max_steps_out: usize,
    rng: &mut R,
) -> Result<f64, LearnError> {
    if !f0.is_finite() {
        return Err(LearnError::OutsideSupport { x0, ln_f: f0 });
    }
    let mut eval = |x: f64| -> f64 {
        if !x.is_finite() {
            return f64::NEG_INFINITY;
        }
        let v = log_f(x);
        if v.is_nan() {
            f64::NEG_INFINITY
        } else {
            v
        }
    };
    // Slice level: log y = log f(x0) + log U, U ∈ (0, 1] (so log y is finite and < +∞).
    let u: f64 = rng.random();
    let log_y = f0 + (1.0 - u).ln();
    // Initial interval, randomly positioned around x0.
    let u: f64 = rng.random();
    let mut left = x0 - width * u;
    let mut right = left + width;
    // Stepping out, at most m − 1 widths in total, split at random between the two sides.
    let v: f64 = rng.random();
    let m = max_steps_out.max(1);
    let mut j = ((m as f64 * v).floor() as usize).min(m - 1);
    let mut k = m - 1 - j;
    while j > 0 && log_y < eval(left) {
        left -= width;
        j -= 1;
    }
    while k > 0 && log_y < eval(right) {
        right += width;
        k -= 1;
    }
    // Shrinkage.
    for _ in 0..MAX_SHRINKS {
        let u: f64 = rng.random();
        let x1 = left + u * (right - left);
        if log_y < eval(x1) {
            return Ok(x1);
        }
        if x1 < x0 {
            left = x1;
        } else {
            right = x1;
        }
    }
    Ok(x0)
}

/// Which of Φ's parameters are slice-sampled (on the log scale).
///
/// * `ell`: the length-scale parameter only — ℓ of [`Kernel::SquaredExp`], the shared
///   ℓ = ℓ_x = ℓ_y of [`Kernel::Matern32Grid`], or `sigma2` of [`Kernel::Isotropic`] (which plays
///   the role of ℓ: it is the kernel's only parameter). The noise σ² stays fixed (HL Table 2:
///   σ² = 10⁻⁹ fixed, ℓ learned).
/// * `ell_and_noise`: ℓ, then the noise σ² (SquaredExp and Matern32Grid only; the noise must
///   start > 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Learned {
    /// Learn ℓ (or `sigma2` of an isotropic kernel) only.
    Ell,
    /// Learn ℓ, then the noise σ².
    EllAndNoise,
}

/// Settings of [`resample_covariance`].
///
/// Priors (our choice; HL do not state any): log ℓ ~ N(`ln_ell_prior.0`, `ln_ell_prior.1`²) and
/// log σ² ~ N(`ln_noise_prior.0`, `ln_noise_prior.1`²), independent, with fixed hyper-parameters
/// (not centred on the initial value). Defaults: log ℓ ~ N(0, 3²) and log σ² ~ N(ln 10⁻², 3²),
/// broad enough that the data dominate (a ±2 sd range of ℓ is e^{±6} ≈ [0.0025, 400]). For an
/// isotropic kernel the ℓ prior applies to log `sigma2`.
///
/// Slice sampler: width `width` on the log scale (default 1, as in Knowles' PYDT sampler, spec
/// §2.7) and at most `max_steps_out` widths of stepping out (default 10).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LearnSettings {
    /// Which parameters are learned.
    pub learned: Learned,
    /// Slice width on the log scale, finite and > 0.
    pub width: f64,
    /// Maximum total step-out (in widths) of the slice sampler.
    pub max_steps_out: usize,
    /// (mean, sd) of the Gaussian prior on log ℓ (sd finite and > 0).
    pub ln_ell_prior: (f64, f64),
    /// (mean, sd) of the Gaussian prior on log σ² (sd finite and > 0).
    pub ln_noise_prior: (f64, f64),
}

impl Default for LearnSettings {
    fn default() -> Self {
        LearnSettings {
            learned: Learned::Ell,
            width: 1.0,
            max_steps_out: 10,
            ln_ell_prior: (0.0, 3.0),
            ln_noise_prior: (1e-2f64.ln(), 3.0),
        }
    }
}

impl LearnSettings {
    /// Check the width and the prior hyper-parameters; the error names the first invalid one.
    pub fn validate(&self) -> Result<(), LearnError> {
        check_width(self.width)?;
        for (mean_name, sd_name, (mean, sd)) in [
            ("ln_ell_prior.0", "ln_ell_prior.1", self.ln_ell_prior),
            ("ln_noise_prior.0", "ln_noise_prior.1", self.ln_noise_prior),
        ] {
            if !mean.is_finite() {
                return Err(invalid(mean_name, mean, "prior mean must be finite"));
            }
            if !sd.is_finite() || sd <= 0.0 {
                return Err(invalid(sd_name, sd, "prior sd must be finite and > 0"));
            }
        }
        Ok(())
    }
}

/// A learnable parameter of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Param {
    Ell,
    Noise,
}

/// Current value of `p` (kernel assumed valid and learnable).
fn get_param(k: &Kernel, p: Param) -> f64 {
    match (k, p) {
        (Kernel::Isotropic { sigma2, .. }, _) => *sigma2,
        (Kernel::SquaredExp { ell, .. }, Param::Ell) => *ell,
        (Kernel::SquaredExp { noise, .. }, Param::Noise) => *noise,
        (Kernel::Matern32Grid { ell_x, .. }, Param::Ell) => *ell_x,
        (Kernel::Matern32Grid { noise, .. }, Param::Noise) => *noise,
    }
}

/// Set `p` to `value` (for Matern32Grid, ℓ sets both ℓ_x and ℓ_y).
fn set_param(k: &mut Kernel, p: Param, value: f64) {
    match (k, p) {
        (Kernel::Isotropic { sigma2, .. }, _) => *sigma2 = value,
        (Kernel::SquaredExp { ell, .. }, Param::Ell) => *ell = value,
        (Kernel::SquaredExp { noise, .. }, Param::Noise) => *noise = value,
        (Kernel::Matern32Grid { ell_x, ell_y, .. }, Param::Ell) => {
            *ell_x = value;
            *ell_y = value;
        }
        (Kernel::Matern32Grid { noise, .. }, Param::Noise) => *noise = value,
    }
}

/// log N(u; mean, sd²).
fn ln_normal(u: f64, (mean, sd): (f64, f64)) -> f64 {
    let z = (u - mean) / sd;
    -0.5 * z * z - sd.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()
}

/// Shape and finiteness of the raw data against the history and the kernel.
fn check_raw_data(cov: &Covariance, h: &History, raw_data: &[Vec<f64>]) -> Result<(), LearnError> {
    h.validate()?;
    if raw_data.len() != h.n {
        return Err(LearnError::RowCount {
            expected: h.n,
            got: raw_data.len(),
        });
    }
    let d = cov.dim();
    for (row, x) in raw_data.iter().enumerate() {
        if x.len() != d {
            return Err(LearnError::RowLength {
                row,
                expected: d,
                got: x.len(),
            });
        }
        if let Some(col) = x.iter().position(|v| !v.is_finite()) {
            return Err(LearnError::NonFiniteData { row, col });
        }
    }
    Ok(())
}

/// Σ_k log Z_k at `cov` (shapes already checked).
fn ln_lik_checked(cov: &Covariance, h: &History, raw_data: &[Vec<f64>]) -> Result<f64, LearnError> {
    let w = cov.whitening()?;
    let x = w.whiten_rows(raw_data)?;
    Ok(history::ln_likelihood(h, &x, w.ln_det_half())?)
}

/// log p(X | t, π, Φ) = Σ_k log Z_k for RAW (unwhitened) data: factorises Φ of `cov` (with its
/// jitter), whitens the rows and calls [`history::ln_likelihood`] with ½ log|Φ| (spec §1, §3.3).
/// This is the likelihood part of [`resample_covariance`]'s target.
pub fn ln_likelihood_raw(
    cov: &Covariance,
    h: &History,
    raw_data: &[Vec<f64>],
) -> Result<f64, LearnError> {
    cov.kernel.validate()?;
    check_raw_data(cov, h, raw_data)?;
    ln_lik_checked(cov, h, raw_data)
}

/// One sweep of covariance learning on a given history (spec §3.4, HL §3.2): slice-sample log ℓ,
/// then (if `s.learned` is [`Learned::EllAndNoise`]) log σ², each from its full conditional
///
///   log p(X | t, π, Φ(θ)) + log p(θ)   (up to a constant),
///
/// with the likelihood of [`ln_likelihood_raw`] on the RAW data and the priors of
/// [`LearnSettings`]. Φ, its Cholesky factor and the whitened data are recomputed at every
/// evaluated θ; a θ whose Φ is not positive definite has log density −∞. Returns the new
/// covariance (same kernel family and positions/grid, same jitter).
///
/// Kernels: SquaredExp (ℓ, noise), Matern32Grid (one shared ℓ = ℓ_x = ℓ_y, noise; the input
/// must have ℓ_x = ℓ_y), Isotropic (`sigma2` is learned as ℓ; no noise parameter).
///
/// Errors: invalid settings, kernel or history; data not n × d or not finite; ℓ_x ≠ ℓ_y;
/// `EllAndNoise` with an isotropic kernel or with noise = 0; and a current covariance at which
/// the likelihood cannot be evaluated (e.g. Φ not positive definite).
pub fn resample_covariance<R: Rng + ?Sized>(
    cov: &Covariance,
    h: &History,
    raw_data: &[Vec<f64>],
    s: &LearnSettings,
    rng: &mut R,
) -> Result<Covariance, LearnError> {
    s.validate()?;
    cov.kernel.validate()?;
    check_raw_data(cov, h, raw_data)?;
    match &cov.kernel {
        Kernel::Isotropic { .. } if s.learned == Learned::EllAndNoise => {
            return Err(LearnError::NoNoiseParameter);
        }
        Kernel::Matern32Grid { ell_x, ell_y, .. } if ell_x != ell_y => {
            return Err(LearnError::UnequalLengthScales {
                ell_x: *ell_x,
                ell_y: *ell_y,
            });
        }
        _ => {}
    }
    let params: &[(Param, (f64, f64))] = match s.learned {
        Learned::Ell => &[(Param::Ell, s.ln_ell_prior)],
        Learned::EllAndNoise => &[
            (Param::Ell, s.ln_ell_prior),
            (Param::Noise, s.ln_noise_prior),
        ],
    };
    if s.learned == Learned::EllAndNoise {
        let noise = get_param(&cov.kernel, Param::Noise);
        if noise <= 0.0 {
            return Err(invalid(
                "noise",
                noise,
                "must be > 0 to be learned on the log scale; start from a positive noise or use `learned = ell`",
            ));
        }
    }
    let mut cur = cov.clone();
    let mut ln_lik = ln_lik_checked(&cur, h, raw_data)?;
    for &(p, prior) in params {
        let u0 = get_param(&cur.kernel, p).ln();
        let f0 = ln_lik + ln_normal(u0, prior);
        let mut cand = cur.clone();
        // The accepted point is the last one evaluated: remember its likelihood.
        let mut last = (u0, ln_lik);
        let target = |u: f64| -> f64 {
            set_param(&mut cand.kernel, p, u.exp());
            let ll = ln_lik_checked(&cand, h, raw_data).unwrap_or(f64::NEG_INFINITY);
            last = (u, ll);
            ll + ln_normal(u, prior)
        };
        let u1 = slice_from(u0, f0, target, s.width, s.max_steps_out, rng)?;
        if u1 != u0 {
            set_param(&mut cur.kernel, p, u1.exp());
            ln_lik = if last.0 == u1 {
                last.1
            } else {
                ln_lik_checked(&cur, h, raw_data)?
            };
        }
    }
    Ok(cur)
}

#[cfg(test)]
mod tests;
