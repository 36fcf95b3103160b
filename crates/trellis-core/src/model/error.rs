//! [`ModelError`]: every way the arguments of a model constructor can be wrong.

/// Problems with the arguments of a model (weights, temperature, leaves, rates).
///
/// Every message is one line naming the bad value and what to pass instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// Not square.
    #[error(
        "weight matrix row {row} has {len} entries but there are {n} rows; pass a square matrix"
    )]
    NotSquare {
        /// Offending row.
        row: usize,
        /// Its length.
        len: usize,
        /// Number of rows.
        n: usize,
    },
    /// `w[i][j] != w[j][i]`.
    #[error("weight matrix is not symmetric: w[{i}][{j}] = {a:?} but w[{j}][{i}] = {b:?}; pass a symmetric matrix")]
    NotSymmetric {
        /// Row.
        i: usize,
        /// Column.
        j: usize,
        /// `w[i][j]`.
        a: f64,
        /// `w[j][i]`.
        b: f64,
    },
    /// NaN or infinite weight.
    #[error(
        "weight w[{i}][{j}] = {v:?} is not a finite number; replace it (e.g. by 0 for no edge)"
    )]
    NotFinite {
        /// Row.
        i: usize,
        /// Column.
        j: usize,
        /// The value.
        v: f64,
    },
    /// Too many points for a bitmask cluster.
    #[error("{n} points: at most 64 are supported (clusters are 64-bit masks); use fewer points")]
    TooLarge {
        /// Number of points.
        n: usize,
    },
    /// A temperature that is not a positive finite number.
    #[error("beta must be a positive finite number, got {beta:?} (pass e.g. beta = 1)")]
    BadBeta {
        /// The value passed.
        beta: f64,
    },
    /// A temperature so large that the log-potentials overflow.
    #[error("beta = {beta:?} is too large for these weights: beta × N × Σ|w| = {scale:e} would overflow the log-potentials (at most 1e300); lower beta (the papers use 1)")]
    BetaTooLarge {
        /// The value passed.
        beta: f64,
        /// `beta × N × Σ_{i<j} |w_ij|`.
        scale: f64,
    },
    /// A Ginkgo parameter (`t_cut`, `lambda`, `lambda_root`) that is not a positive finite
    /// number.
    #[error(
        "{name} must be a positive finite number, got {value:?} (the Ginkgo QCD value is {typical})"
    )]
    BadParameter {
        /// The parameter.
        name: &'static str,
        /// The value passed.
        value: f64,
        /// A typical value.
        typical: f64,
    },
    /// More leaves than a bitmask cluster holds.
    #[error(
        "{n} leaves: a model holds at most 64 (clusters are 64-bit masks); drop or merge leaves"
    )]
    TooManyLeaves {
        /// Number of leaves.
        n: usize,
    },
    /// A leaf four-vector with a NaN or infinite component.
    #[error(
        "leaf {i} has a non-finite four-vector component {value:?}; remove or fix that particle"
    )]
    NonFiniteLeaf {
        /// The leaf.
        i: usize,
        /// The bad component.
        value: f64,
    },
    /// A table over all `2^N` subsets asked for too many leaves.
    #[error("a table over all 2^{n} subsets of {n} leaves does not fit in memory (at most {limit} leaves); compute per-cluster statistics with stat() instead")]
    TableTooLarge {
        /// Number of leaves.
        n: usize,
        /// The largest `N` a table is built for.
        limit: usize,
    },
    /// A table's making was cancelled ([`crate::cancel`]) before it ended.
    #[error("{}", crate::cancel::MESSAGE)]
    Cancelled,
}

/// Largest `N` for which [`super::SplitModel::stat_table`] and
/// [`super::WeightMatrix::pair_sums`] build a table over all `2^N` subsets (the exact trellises
/// stop at 32 leaves too).
pub const MAX_TABLE_LEAVES: usize = 32;

/// `Ok` when a table over all `2^n` subsets is allowed.
pub(crate) fn check_table_size(n: usize) -> Result<(), ModelError> {
    if n > MAX_TABLE_LEAVES {
        return Err(ModelError::TableTooLarge {
            n,
            limit: MAX_TABLE_LEAVES,
        });
    }
    Ok(())
}

/// Bound on `beta × N × Σ|w|` (and on `beta` alone): every merge's log-potential, and every sum
/// of them over a tree, is then at most 1e300 in size (a tree's Dasgupta cost is at most
/// `N · Σ|w|`, its correlation energy at most `(N − 1) · Σ|w|`), so none overflows.
pub const MAX_BETA_SCALE: f64 = 1e300;

/// `Ok(beta)` when `beta` is a positive finite number small enough that `beta` times the
/// weights of `n` points, of absolute sum `abs_sum`, overflows no log-potential.
pub(crate) fn check_beta_scale(beta: f64, n: usize, abs_sum: f64) -> Result<f64, ModelError> {
    let beta = check_beta(beta)?;
    let scale = beta * n as f64 * abs_sum;
    if beta > MAX_BETA_SCALE || scale.is_nan() || scale > MAX_BETA_SCALE {
        return Err(ModelError::BetaTooLarge { beta, scale });
    }
    Ok(beta)
}

/// `Ok(beta)` when `beta` is a positive finite number.
pub(crate) fn check_beta(beta: f64) -> Result<f64, ModelError> {
    if beta.is_finite() && beta > 0.0 {
        Ok(beta)
    } else {
        Err(ModelError::BadBeta { beta })
    }
}
