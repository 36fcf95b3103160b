//! Brownian covariance rate Φ (d × d) and its whitening (spec §1 "Whitening", §3.4; HL §3.2).
//!
//! A coalescent transition is `z_parent | z_child ~ N(z_child, Δ·Φ)` (spec §3.3). Every Gaussian in
//! the model is a scalar multiple of the same Φ, so we factor `Φ = L Lᵀ` once, replace each data
//! vector `x` by `L⁻¹x` and run the isotropic algorithm, adding `−½ log|Φ| = −Σ_j log L_jj` to every
//! Gaussian normaliser that involves Φ (one per merge). This is exact (spec §1).
//!
//! Kernels:
//! * [`Kernel::Isotropic`]: Φ = σ² I_d.
//! * [`Kernel::SquaredExp`]: HL eq. 12 as printed, φ_ij = exp(−(τ_i − τ_j)²/(2ℓ)) + σ²δ_ij; HL call ℓ
//!   an "inverse length scale" although it divides the squared distance (spec §3.4, §7 item 10).
//! * [`Kernel::Matern32Grid`]: product Matérn-3/2 over image pixel coordinates plus noise (spec §3.4,
//!   HL §4.4 with the sign typo fixed); pixels are row-major (`p = row·width + col`), unit spacing.
//!
//! A [`Jitter`] can be added to the diagonal before factorising (spec §5: e.g. 10⁻¹⁰·tr Φ/d when σ²
//! is tiny). Invalid parameters and non-positive-definite matrices are reported as
//! [`CovarianceError`]s, never as panics.

use nalgebra::{DMatrix, DVector};
use thiserror::Error;

/// Largest dimension accepted (a d × d matrix of f64 is built; 16384² · 8 B = 2 GiB).
pub const MAX_DIM: usize = 16_384;

/// Errors of this module; every message is one line and names the offending parameter.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CovarianceError {
    /// A scalar parameter is out of its domain (non-finite, non-positive, …).
    #[error("invalid covariance parameter `{name}` = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Offending value.
        value: f64,
        /// What was expected.
        reason: &'static str,
    },
    /// A size is zero, too large, or does not match.
    #[error("invalid size for `{name}`: expected {expected}, got {got}")]
    BadSize {
        /// Which size.
        name: &'static str,
        /// Expected (or maximal) size.
        expected: usize,
        /// Size found.
        got: usize,
    },
    /// A vector or matrix entry is NaN or infinite.
    #[error("`{name}` contains a non-finite entry at index {index}")]
    NonFinite {
        /// Which input.
        name: &'static str,
        /// Flat index of the first bad entry.
        index: usize,
    },
    /// A supplied matrix is not symmetric.
    #[error("`{name}` is not symmetric at ({row}, {col})")]
    NotSymmetric {
        /// Which input.
        name: &'static str,
        /// Row of the first asymmetric entry.
        row: usize,
        /// Column of the first asymmetric entry.
        col: usize,
    },
    /// Cholesky factorisation failed: Φ (plus jitter) is not positive definite.
    #[error(
        "covariance `Phi` is not positive definite (Cholesky failed); increase `jitter` or `noise`"
    )]
    NotPositiveDefinite,
}

/// Parametric family of Φ (spec §3.4).
#[derive(Debug, Clone, PartialEq)]
pub enum Kernel {
    /// Φ = σ² I_d.
    Isotropic {
        /// Dimension d.
        dim: usize,
        /// Variance rate σ² > 0.
        sigma2: f64,
    },
    /// HL eq. 12: φ_ij = exp(−(τ_i − τ_j)²/(2ℓ)) + noise·δ_ij, d = `positions.len()`.
    SquaredExp {
        /// Feature positions τ_1..τ_d.
        positions: Vec<f64>,
        /// ℓ > 0 (divides the squared distance, exactly as printed in HL).
        ell: f64,
        /// σ² ≥ 0 added to the diagonal.
        noise: f64,
    },
    /// Product Matérn-3/2 over pixel axes (spec §3.4):
    /// (1 + √3 d_x/ℓ_x)(1 + √3 d_y/ℓ_y) exp(−√3 d_x/ℓ_x − √3 d_y/ℓ_y) + noise·δ_ij,
    /// d = width·height, pixels row-major, d_x = |col_i − col_j|, d_y = |row_i − row_j|.
    Matern32Grid {
        /// Image width (columns).
        width: usize,
        /// Image height (rows).
        height: usize,
        /// Length scale along x (columns), > 0.
        ell_x: f64,
        /// Length scale along y (rows), > 0.
        ell_y: f64,
        /// σ² ≥ 0 added to the diagonal.
        noise: f64,
    },
}

/// Diagonal jitter added before the Cholesky factorisation (spec §5).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Jitter {
    /// No jitter.
    #[default]
    None,
    /// Add this constant to every diagonal entry.
    Absolute(f64),
    /// Add `c · tr Φ / d` to every diagonal entry (spec §5 suggests c = 10⁻¹⁰).
    RelativeTrace(f64),
}

/// A kernel plus jitter: everything needed to build Φ.
#[derive(Debug, Clone, PartialEq)]
pub struct Covariance {
    /// Parametric family and parameters.
    pub kernel: Kernel,
    /// Diagonal jitter.
    pub jitter: Jitter,
}

fn check_pos(name: &'static str, value: f64) -> Result<(), CovarianceError> {
    if !value.is_finite() || value <= 0.0 {
        return Err(CovarianceError::InvalidParameter {
            name,
            value,
            reason: "must be finite and > 0",
        });
    }
    Ok(())
}

fn check_nonneg(name: &'static str, value: f64) -> Result<(), CovarianceError> {
    if !value.is_finite() || value < 0.0 {
        return Err(CovarianceError::InvalidParameter {
            name,
            value,
            reason: "must be finite and >= 0",
        });
    }
    Ok(())
}

fn check_dim(name: &'static str, d: usize) -> Result<(), CovarianceError> {
    if d == 0 || d > MAX_DIM {
        return Err(CovarianceError::BadSize {
            name,
            expected: MAX_DIM,
            got: d,
        });
    }
    Ok(())
}

/// Matérn-3/2 correlation at distance `r` with length scale `ell`.
fn matern32(r: f64, ell: f64) -> f64 {
    let a = 3f64.sqrt() * r / ell;
    (1.0 + a) * (-a).exp()
}

impl Kernel {
    /// The learnable parameters (ℓ, noise σ²): ℓ_x for a Matérn grid, and (σ², 0) for an
    /// isotropic Φ, whose σ² plays the role of ℓ.
    pub fn ell_and_noise(&self) -> (f64, f64) {
        match self {
            Kernel::Isotropic { sigma2, .. } => (*sigma2, 0.0),
            Kernel::SquaredExp { ell, noise, .. } => (*ell, *noise),
            Kernel::Matern32Grid { ell_x, noise, .. } => (*ell_x, *noise),
        }
    }

    /// HL synthetic-data placeholder of spec §5: positions τ_j = (j−1)/(d−1) (τ = 0 when d = 1).
    pub fn squared_exp_unit_grid(d: usize, ell: f64, noise: f64) -> Self {
        let positions = (0..d)
            .map(|j| {
                if d > 1 {
                    j as f64 / (d - 1) as f64
                } else {
                    0.0
                }
            })
            .collect();
        Kernel::SquaredExp {
            positions,
            ell,
            noise,
        }
    }

    /// Dimension d (not validated).
    pub fn dim(&self) -> usize {
        match self {
            Kernel::Isotropic { dim, .. } => *dim,
            Kernel::SquaredExp { positions, .. } => positions.len(),
            Kernel::Matern32Grid { width, height, .. } => width.saturating_mul(*height),
        }
    }

    /// Check every parameter; the error names the first invalid one.
    pub fn validate(&self) -> Result<(), CovarianceError> {
        match self {
            Kernel::Isotropic { dim, sigma2 } => {
                check_dim("dim", *dim)?;
                check_pos("sigma2", *sigma2)
            }
            Kernel::SquaredExp {
                positions,
                ell,
                noise,
            } => {
                check_dim("positions", positions.len())?;
                if let Some(index) = positions.iter().position(|p| !p.is_finite()) {
                    return Err(CovarianceError::NonFinite {
                        name: "positions",
                        index,
                    });
                }
                check_pos("ell", *ell)?;
                check_nonneg("noise", *noise)
            }
            Kernel::Matern32Grid {
                width,
                height,
                ell_x,
                ell_y,
                noise,
            } => {
                check_dim("width", *width)?;
                check_dim("height", *height)?;
                check_dim("width*height", self.dim())?;
                check_pos("ell_x", *ell_x)?;
                check_pos("ell_y", *ell_y)?;
                check_nonneg("noise", *noise)
            }
        }
    }

    /// Entry φ_ij (indices assumed < d; parameters assumed valid).
    fn entry(&self, i: usize, j: usize) -> f64 {
        let delta = if i == j { 1.0 } else { 0.0 };
        match self {
            Kernel::Isotropic { sigma2, .. } => sigma2 * delta,
            Kernel::SquaredExp {
                positions,
                ell,
                noise,
            } => {
                let dist = positions[i] - positions[j];
                (-(dist * dist) / (2.0 * ell)).exp() + noise * delta
            }
            Kernel::Matern32Grid {
                width,
                ell_x,
                ell_y,
                noise,
                ..
            } => {
                let (ri, ci) = (i / width, i % width);
                let (rj, cj) = (j / width, j % width);
                let dx = ci.abs_diff(cj) as f64;
                let dy = ri.abs_diff(rj) as f64;
                matern32(dx, *ell_x) * matern32(dy, *ell_y) + noise * delta
            }
        }
    }
}

impl Covariance {
    /// Kernel without jitter.
    pub fn new(kernel: Kernel) -> Self {
        Covariance {
            kernel,
            jitter: Jitter::None,
        }
    }

    /// Same kernel with a jitter.
    pub fn with_jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.kernel.dim()
    }

    fn dense(&self) -> Result<DMatrix<f64>, CovarianceError> {
        self.kernel.validate()?;
        let d = self.dim();
        let mut phi = DMatrix::from_fn(d, d, |i, j| self.kernel.entry(i, j));
        let add = match self.jitter {
            Jitter::None => 0.0,
            Jitter::Absolute(c) => {
                check_nonneg("jitter", c)?;
                c
            }
            Jitter::RelativeTrace(c) => {
                check_nonneg("jitter", c)?;
                c * phi.trace() / d as f64
            }
        };
        for i in 0..d {
            phi[(i, i)] += add;
        }
        Ok(phi)
    }

    /// Φ (including jitter) as a row-major `d·d` vector.
    pub fn matrix_row_major(&self) -> Result<Vec<f64>, CovarianceError> {
        let phi = self.dense()?;
        let d = phi.nrows();
        Ok((0..d * d).map(|p| phi[(p / d, p % d)]).collect())
    }

    /// Cholesky-factorise Φ (including jitter).
    pub fn whitening(&self) -> Result<Whitening, CovarianceError> {
        Whitening::from_dense(self.dense()?)
    }
}

/// Cholesky factor of Φ = L Lᵀ, used to whiten data (spec §1).
#[derive(Debug, Clone, PartialEq)]
pub struct Whitening {
    l: DMatrix<f64>,
    ln_det_half: f64,
}

impl Whitening {
    fn from_dense(phi: DMatrix<f64>) -> Result<Self, CovarianceError> {
        let chol = nalgebra::Cholesky::new(phi).ok_or(CovarianceError::NotPositiveDefinite)?;
        let l = chol.unpack();
        let ln_det_half: f64 = l.diagonal().iter().map(|v| v.ln()).sum();
        if !ln_det_half.is_finite() {
            return Err(CovarianceError::NotPositiveDefinite);
        }
        Ok(Whitening { l, ln_det_half })
    }

    /// Identity whitening (Φ = I_d): `whiten` is the identity and `ln_det_half` is 0.
    pub fn identity(d: usize) -> Result<Self, CovarianceError> {
        check_dim("dim", d)?;
        Ok(Whitening {
            l: DMatrix::identity(d, d),
            ln_det_half: 0.0,
        })
    }

    /// Factor an arbitrary SPD matrix given row-major (`d·d` entries; symmetry checked to 1e-12
    /// relative, only the lower triangle is used).
    pub fn from_row_major(d: usize, phi: &[f64]) -> Result<Self, CovarianceError> {
        check_dim("dim", d)?;
        if phi.len() != d * d {
            return Err(CovarianceError::BadSize {
                name: "phi",
                expected: d * d,
                got: phi.len(),
            });
        }
        if let Some(index) = phi.iter().position(|p| !p.is_finite()) {
            return Err(CovarianceError::NonFinite { name: "phi", index });
        }
        for row in 0..d {
            for col in 0..row {
                let (a, b) = (phi[row * d + col], phi[col * d + row]);
                if (a - b).abs() > 1e-12 * (1.0 + a.abs().max(b.abs())) {
                    return Err(CovarianceError::NotSymmetric {
                        name: "phi",
                        row,
                        col,
                    });
                }
            }
        }
        Whitening::from_dense(DMatrix::from_row_slice(d, d, phi))
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.l.nrows()
    }

    /// ½ log|Φ| = Σ_j log L_jj.
    pub fn ln_det_half(&self) -> f64 {
        self.ln_det_half
    }

    fn check_vec(&self, name: &'static str, x: &[f64]) -> Result<(), CovarianceError> {
        if x.len() != self.dim() {
            return Err(CovarianceError::BadSize {
                name,
                expected: self.dim(),
                got: x.len(),
            });
        }
        if let Some(index) = x.iter().position(|v| !v.is_finite()) {
            return Err(CovarianceError::NonFinite { name, index });
        }
        Ok(())
    }

    /// L⁻¹x (forward substitution).
    pub fn whiten(&self, x: &[f64]) -> Result<Vec<f64>, CovarianceError> {
        self.check_vec("x", x)?;
        let b = DVector::from_column_slice(x);
        let y = self
            .l
            .solve_lower_triangular(&b)
            .ok_or(CovarianceError::NotPositiveDefinite)?;
        Ok(y.iter().copied().collect())
    }

    /// Whiten every row of a data set (rows are observations).
    pub fn whiten_rows(&self, rows: &[Vec<f64>]) -> Result<Vec<Vec<f64>>, CovarianceError> {
        rows.iter().map(|x| self.whiten(x)).collect()
    }

    /// L·ξ (used to draw N(0, Φ) increments, spec §5).
    pub fn colour(&self, xi: &[f64]) -> Result<Vec<f64>, CovarianceError> {
        self.check_vec("xi", xi)?;
        let y = &self.l * DVector::from_column_slice(xi);
        Ok(y.iter().copied().collect())
    }

    /// The lower Cholesky factor L, row-major.
    pub fn factor_row_major(&self) -> Vec<f64> {
        let d = self.dim();
        (0..d * d).map(|p| self.l[(p / d, p % d)]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn se_example() -> Covariance {
        Covariance::new(Kernel::SquaredExp {
            positions: vec![1.0 / 3.0, 2.0 / 3.0, 1.0],
            ell: 0.25,
            noise: 0.1,
        })
    }

    #[test]
    fn squared_exp_entries_match_hl_eq12() {
        let phi = se_example().matrix_row_major().unwrap();
        let off1 = (-(1.0f64 / 9.0) / 0.5).exp();
        let off2 = (-(4.0f64 / 9.0) / 0.5).exp();
        let expect = [1.1, off1, off2, off1, 1.1, off1, off2, off1, 1.1];
        for (a, b) in phi.iter().zip(expect.iter()) {
            assert!((a - b).abs() < 1e-15);
        }
    }

    #[test]
    fn whitening_inverts_factor_and_logdet() {
        let w = se_example().whitening().unwrap();
        let x = [0.3, -0.1, 0.5];
        let y = w.whiten(&x).unwrap();
        let back = w.colour(&y).unwrap();
        for (a, b) in x.iter().zip(back.iter()) {
            assert!((a - b).abs() < 1e-14);
        }
        // log|Φ| by the 3×3 determinant formula.
        let p = se_example().matrix_row_major().unwrap();
        let det = p[0] * (p[4] * p[8] - p[5] * p[7]) - p[1] * (p[3] * p[8] - p[5] * p[6])
            + p[2] * (p[3] * p[7] - p[4] * p[6]);
        assert!((w.ln_det_half() - 0.5 * det.ln()).abs() < 1e-13);
        let iso = Covariance::new(Kernel::Isotropic {
            dim: 4,
            sigma2: 2.0,
        })
        .whitening()
        .unwrap();
        assert!((iso.ln_det_half() - 2.0 * 2f64.ln()).abs() < 1e-14);
    }

    #[test]
    fn matern_grid_is_row_major_product() {
        let cov = Covariance::new(Kernel::Matern32Grid {
            width: 3,
            height: 2,
            ell_x: 2.0,
            ell_y: 0.5,
            noise: 0.01,
        });
        let phi = cov.matrix_row_major().unwrap();
        assert_eq!(phi.len(), 36);
        // pixel 1 = (row 0, col 1), pixel 5 = (row 1, col 2): dx = 1, dy = 1.
        let expect = matern32(1.0, 2.0) * matern32(1.0, 0.5);
        assert!((phi[6 + 5] - expect).abs() < 1e-15);
        assert!((phi[5] - matern32(2.0, 2.0) * matern32(1.0, 0.5)).abs() < 1e-15);
        assert!((phi[5 * 6 + 1] - expect).abs() < 1e-15);
        assert!((phi[0] - 1.01).abs() < 1e-15);
        cov.whitening().unwrap();
        let usps = Covariance::new(Kernel::Matern32Grid {
            width: 16,
            height: 16,
            ell_x: 3.0,
            ell_y: 3.0,
            noise: 1e-9,
        })
        .with_jitter(Jitter::RelativeTrace(1e-10));
        assert_eq!(usps.whitening().unwrap().dim(), 256);
    }

    #[test]
    fn jitter_rescues_singular_phi() {
        // Two identical positions and zero noise: rank-deficient.
        let k = Kernel::SquaredExp {
            positions: vec![0.0, 0.0, 1.0],
            ell: 0.5,
            noise: 0.0,
        };
        assert_eq!(
            Covariance::new(k.clone()).whitening().unwrap_err(),
            CovarianceError::NotPositiveDefinite
        );
        let w = Covariance::new(k)
            .with_jitter(Jitter::RelativeTrace(1e-8))
            .whitening()
            .unwrap();
        assert!(w.ln_det_half().is_finite());
    }

    #[test]
    fn bad_parameters_are_errors() {
        let bad = |k: Kernel| Covariance::new(k).whitening().unwrap_err();
        let e = bad(Kernel::SquaredExp {
            positions: vec![0.0, 1.0],
            ell: 0.0,
            noise: 0.1,
        });
        assert!(e.to_string().contains("`ell`"));
        let e = bad(Kernel::SquaredExp {
            positions: vec![0.0, f64::NAN],
            ell: 1.0,
            noise: 0.1,
        });
        assert!(e.to_string().contains("positions"));
        let e = bad(Kernel::Isotropic {
            dim: 3,
            sigma2: f64::INFINITY,
        });
        assert!(e.to_string().contains("sigma2"));
        let e = bad(Kernel::Isotropic {
            dim: 0,
            sigma2: 1.0,
        });
        assert!(matches!(e, CovarianceError::BadSize { .. }));
        let e = bad(Kernel::Matern32Grid {
            width: 4,
            height: 4,
            ell_x: 1.0,
            ell_y: -1.0,
            noise: 0.0,
        });
        assert!(e.to_string().contains("ell_y"));
        let e = Covariance::new(Kernel::Isotropic {
            dim: 2,
            sigma2: 1.0,
        })
        .with_jitter(Jitter::Absolute(-1.0))
        .whitening()
        .unwrap_err();
        assert!(e.to_string().contains("jitter"));
        let w = Whitening::identity(3).unwrap();
        assert!(w.whiten(&[1.0, 2.0]).is_err());
        assert!(w.whiten(&[1.0, f64::NAN, 2.0]).is_err());
        assert!(Whitening::from_row_major(2, &[1.0, 0.5, 0.4, 1.0]).is_err());
        assert!(Whitening::from_row_major(2, &[1.0, 2.0, 2.0, 1.0]).is_err());
        assert!(Whitening::from_row_major(2, &[1.0, 0.0, 0.0]).is_err());
    }
}
