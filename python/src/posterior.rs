//! Posterior summaries as NumPy arrays: samples as canonical parent arrays (one row per
//! sample) and the exact pairwise co-clustering of the full trellis.

use crate::{interruptible, linkage, seed_of, value_error, with_model, CancelToken, Int, Trellis};
use numpy::{PyArray1, PyArray2, PyArray3, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rand::rngs::StdRng;
use rand::SeedableRng;
use trellis_core::exact::{CoClustering, PosteriorSampler};
use trellis_core::hierarchy::Hierarchy;
use trellis_core::tree::Tree as CrateTree;

/// Trees drawn per call of the sampler: the rows are made as the trees come, so no more than
/// this many trees are held at once (the draws are those of one call for all of them).
const BATCH: usize = 4096;

/// `n` trees over `n_leaves` leaves drawn by `draw` from an RNG seeded with `seed` (the same
/// trees as the list form), as an `(n, 2 n_leaves - 1)` int64 array of canonical parent rows;
/// the array's size is checked against the memory this process may use first.
pub(crate) fn draw_parents<'py>(
    py: Python<'py>,
    (n, seed): (Int, Int),
    n_leaves: usize,
    cancel: Option<&CancelToken>,
    draw: impl Fn(usize, &mut StdRng) -> Result<Vec<CrateTree>, String> + Send + Sync,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let (n, seed) = (crate::tree::sample_count(n, n_leaves)?, seed_of(seed)?);
    let width = (2 * n_leaves).saturating_sub(1);
    let bytes = n as f64 * width as f64 * 8.0;
    trellis_core::memory::check_fits(&format!("{n} samples of {width} nodes"), bytes)
        .map_err(|e| PyValueError::new_err(format!("{e}; draw fewer at a time")))?;
    let rows = interruptible(py, cancel, || -> Result<Vec<i64>, String> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut out = Vec::with_capacity(n * width);
        let mut left = n;
        while left > 0 {
            let k = left.min(BATCH);
            for t in draw(k, &mut rng)? {
                let h = Hierarchy::from_tree(&t).map_err(|e| e.to_string())?;
                linkage::canonical_parents(&h, &mut out);
            }
            left -= k;
        }
        Ok(out)
    })?
    .map_err(PyValueError::new_err)?;
    PyArray1::from_vec(py, rows).reshape([n, width])
}

/// The co-clustering of `t`'s posterior, computed as a long call (Ctrl-C and `cancel` stop it).
fn compute(py: Python<'_>, t: &Trellis, cancel: Option<&CancelToken>) -> PyResult<CoClustering> {
    interruptible(
        py,
        cancel,
        || with_model!(&t.energy, m => CoClustering::compute(&t.trellis, m)),
    )?
    .map_err(value_error)
}

/// `P(i, j share a cluster of size <= k)` as an `(N + 1, N, N)` float64 array indexed `[k, i, j]`.
pub(crate) fn coclustering<'py>(
    py: Python<'py>,
    t: &Trellis,
    cancel: Option<&CancelToken>,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    let c = compute(py, t, cancel)?;
    let n = c.n_leaves();
    PyArray1::from_slice(py, c.as_slice()).reshape([n + 1, n, n])
}

/// One of the `(N, N)` summaries of the co-clustering (`summary` gives it row-major).
pub(crate) fn pairs<'py>(
    py: Python<'py>,
    t: &Trellis,
    cancel: Option<&CancelToken>,
    summary: fn(&CoClustering) -> Vec<f64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let c = compute(py, t, cancel)?;
    PyArray1::from_vec(py, summary(&c)).reshape([c.n_leaves(), c.n_leaves()])
}

impl Trellis {
    /// Draws `n` exact posterior samples with `rng` (for `sample` and `sample_parents`).
    pub(crate) fn draws(
        &self,
    ) -> impl Fn(usize, &mut StdRng) -> Result<Vec<CrateTree>, String> + Send + Sync + '_ {
        |n, rng| {
            with_model!(&self.energy, m => PosteriorSampler::new(&self.trellis, m)
                .and_then(|mut s| s.sample_many(n, rng)))
            .map_err(|e| e.to_string())
        }
    }
}
