//! Values every source shares: square matrices as [`WeightMatrix`]es, the Pearson similarities
//! of points, and the seeds of datasets and instances.

use crate::data::pam50::pearson;
use crate::model::{ModelError, WeightMatrix};

/// The side of a square matrix of `len` entries.
pub(super) fn side(len: usize) -> usize {
    let mut n = (len as f64).sqrt().round() as usize;
    while n * n > len {
        n -= 1;
    }
    n
}

/// An `n×n` row-major matrix as a [`WeightMatrix`] (at most 64 points).
pub fn weight_matrix(n: usize, s: &[f64]) -> Result<WeightMatrix, ModelError> {
    if n > 64 {
        return Err(ModelError::TooLarge { n });
    }
    WeightMatrix::new(s.chunks(n.max(1)).take(n).map(<[f64]>::to_vec).collect())
}

/// Pearson correlations between the rows of `x` over their features ([`pearson`]: 0 when a
/// row is constant), `n×n` row-major, symmetric, zero diagonal: the similarities of
/// [`InstanceData::Points`], equal to the pam50 kind's raw weights.
pub fn correlation_similarities(x: &[Vec<f64>]) -> Vec<f64> {
    let n = x.len();
    let mut s = vec![0.0; n * n];
    for a in 0..n {
        for b in a + 1..n {
            let r = pearson(&x[a], &x[b]);
            s[a * n + b] = r;
            s[b * n + a] = r;
        }
    }
    s
}

/// The seed of dataset `index` (its position in the list) under the master `seed`.
pub fn dataset_seed(seed: u64, index: usize) -> u64 {
    crate::numeric::splitmix64_mix(seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// The seed of instance `k` of a dataset whose seed is `dataset_seed`.
pub fn instance_seed(dataset_seed: u64, k: usize) -> u64 {
    crate::numeric::splitmix64_mix(
        dataset_seed ^ (k as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
    )
}
