//! Expectation propagation for the probit model (spec §2.10).

/// EP settings.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EpSettings {
    /// Maximum parallel sweeps over the sites.
    pub sweeps: usize,
    /// Damping of each site update (1: none).
    pub damping: f64,
    /// Stop when no site's natural parameters move by more than this.
    pub tolerance: f64,
    /// EP/EM alternations in [`super::search::fit_times`].
    pub rounds: usize,
}

impl Default for EpSettings {
    fn default() -> Self {
        Self {
            sweeps: 200,
            damping: 0.7,
            tolerance: 1e-6,
            rounds: 10,
        }
    }
}

use super::bp::{self, Leaves, Messages};
use super::probit::Binary;
use super::tree::PydtTree;
use super::PydtError;
use crate::numeric::LN_2PI;

/// Largest site variance kept (a site whose precision underflows carries no information).
const MAX_SITE_VAR: f64 = 1e12;

/// (ln Φ(z), φ(z)/Φ(z)) for the standard normal, accurate in both tails (asymptotic series
/// below z = −20, where erfc underflows relative to the ratio).
pub fn ln_cdf_and_ratio(z: f64) -> (f64, f64) {
    if z < -20.0 {
        // Φ(z) = φ(z)/(−z) · (1 − 1/z² + 3/z⁴ − 15/z⁶ + …).
        let z2 = z * z;
        let series = 1.0 - 1.0 / z2 + 3.0 / (z2 * z2) - 15.0 / (z2 * z2 * z2);
        let ln_pdf = -0.5 * (LN_2PI + z2);
        let ln_cdf = ln_pdf - (-z).ln() + series.ln();
        (ln_cdf, (-z) / series)
    } else {
        let cdf = 0.5 * libm::erfc(-z / std::f64::consts::SQRT_2);
        let pdf = (-0.5 * (LN_2PI + z * z)).exp();
        (cdf.ln(), pdf / cdf)
    }
}

/// Gaussian EP sites of the probit factors: `sites.mean`/`sites.var` are the site Gaussians
/// N(x; m̃, ṽ) per leaf and dimension (they enter BP as leaf messages), `ln_scale` the log of
/// each site's constant C, so the site is C·N(x; m̃, ṽ).
#[derive(Debug, Clone, PartialEq)]
pub struct Sites {
    /// Site means and variances as leaf messages.
    pub leaves: Leaves,
    /// log C per leaf and dimension (row-major like `leaves`).
    pub ln_scale: Vec<f64>,
}

impl Sites {
    /// The start: the probit data's initial messages (mean ±0.5, variance 1).
    pub fn initial(binary: &Binary) -> Self {
        let leaves = binary.initial_leaves();
        let ln_scale = vec![0.0; leaves.mean.len()];
        Self { leaves, ln_scale }
    }

    /// Σ log C over the sites of `tree`'s attached leaves.
    pub fn total_ln_scale(&self, tree: &PydtTree) -> f64 {
        let d = self.leaves.d;
        (0..self.leaves.n)
            .filter(|&i| tree.is_attached(i))
            .map(|i| self.ln_scale[i * d..(i + 1) * d].iter().sum::<f64>())
            .sum()
    }
}

/// The result of one tilted-moment computation: cavity N(mc, vc), observation y.
/// Returns (ln Z_tilted, new mean, new variance) by the standard probit moments (spec §2.10).
fn tilted(mc: f64, vc: f64, y: bool) -> (f64, f64, f64) {
    let s = if y { 1.0 } else { -1.0 };
    let denom = (1.0 + vc).sqrt();
    let z = s * mc / denom;
    let (ln_z, rho) = ln_cdf_and_ratio(z);
    let mean = mc + s * vc * rho / denom;
    let var = vc - vc * vc * rho * (z + rho) / (1.0 + vc);
    (ln_z, mean, var)
}

/// Run parallel, damped EP on the probit sites of `tree`'s attached leaves at its current times, from the current `sites`, and return the EP approximation of
/// log p(Y | T, t, σ²) = log ∫ p(x | T, t) Π C·N(x; m̃, ṽ) dx.
pub fn run(
    tree: &PydtTree,
    binary: &Binary,
    sigma2: f64,
    sites: &mut Sites,
    settings: &EpSettings,
    msgs: &mut Messages,
) -> Result<f64, PydtError> {
    if !(settings.damping > 0.0 && settings.damping <= 1.0) {
        return Err(PydtError::Data(format!(
            "EP damping {} must lie in (0, 1]",
            settings.damping
        )));
    }
    if binary.n != tree.n_leaves() || sites.leaves.n != binary.n || sites.leaves.d != binary.d {
        return Err(PydtError::Data(format!(
            "{} binary rows and {} sites for a tree of {} leaves",
            binary.n,
            sites.leaves.n,
            tree.n_leaves()
        )));
    }
    let d = binary.d;
    let damp = settings.damping;
    // The attached leaves (all of them but during sequential attachment).
    let mut attached = Vec::new();
    tree.postorder(&mut attached);
    attached.retain(|&v| tree.is_leaf(v));
    for _ in 0..settings.sweeps.max(1) {
        bp::upward_messages(tree, &sites.leaves, sigma2, msgs);
        bp::downward(tree, sigma2, msgs);
        let mut change = 0.0_f64;
        for &i in &attached {
            for k in 0..d {
                let j = i * d + k;
                let (mc, vc) = msgs.outside(tree, sigma2, i, k);
                let (_, mh, vh) = tilted(mc, vc, binary.y[j]);
                let (tau_old, nu_old) = (
                    1.0 / sites.leaves.var[j],
                    sites.leaves.mean[j] / sites.leaves.var[j],
                );
                let tau_new = (1.0 / vh - 1.0 / vc).max(1.0 / MAX_SITE_VAR);
                let nu_new = mh / vh - mc / vc;
                let tau = damp * tau_new + (1.0 - damp) * tau_old;
                let nu = damp * nu_new + (1.0 - damp) * nu_old;
                change = change.max((tau - tau_old).abs()).max((nu - nu_old).abs());
                sites.leaves.var[j] = 1.0 / tau;
                sites.leaves.mean[j] = nu / tau;
            }
        }
        if change < settings.tolerance {
            break;
        }
    }
    // The scales at the final sites, then the Gaussian part.
    bp::upward_messages(tree, &sites.leaves, sigma2, msgs);
    bp::downward(tree, sigma2, msgs);
    for &i in &attached {
        for k in 0..d {
            let j = i * d + k;
            let (mc, vc) = msgs.outside(tree, sigma2, i, k);
            let (ln_z, _, _) = tilted(mc, vc, binary.y[j]);
            let (m, v) = (sites.leaves.mean[j], sites.leaves.var[j]);
            let ln_overlap = -0.5 * (LN_2PI + (vc + v).ln()) - 0.5 * (mc - m).powi(2) / (vc + v);
            sites.ln_scale[j] = ln_z - ln_overlap;
        }
    }
    let ln_gauss = bp::upward(tree, &sites.leaves, sigma2, msgs);
    Ok(ln_gauss + sites.total_ln_scale(tree))
}
