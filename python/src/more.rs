//! Further bindings: the Ginkgo generator, average linkage, the MAP-only trellis, cluster
//! marginals and the flat cluster trellis.

use crate::{
    count, energy_of, interruptible, seed_of, value_error, weight_matrix, CancelToken, Int, Jet,
    Tree, Trellis,
};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use trellis_core::data::ginkgo::{generate_dataset, GinkgoParams};
use trellis_core::exact::MapTrellis;
use trellis_core::flat::{FlatTrellis, PairwiseAffinity};
use trellis_core::subset::Subset;

/// `n` jets from the Ginkgo generator with `min_leaves..=max_leaves` leaves (`jet_type` "qcd"
/// or "w"), drawn with `seed` as `[jets] source = "generate"` draws them.
#[pyfunction]
#[pyo3(signature = (n, min_leaves = Int::new(5), max_leaves = Int::new(10), seed = Int::new(0), jet_type = "qcd", root_scale = None, max_tries = None, *, cancel = None), text_signature = "(n, min_leaves=5, max_leaves=10, seed=0, jet_type='qcd', root_scale=None, max_tries=None, *, cancel=None)")]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
pub fn generate_jets(
    py: Python<'_>,
    n: Int,
    min_leaves: Int,
    max_leaves: Int,
    seed: Int,
    jet_type: &str,
    root_scale: Option<f64>,
    max_tries: Option<Int>,
    cancel: Option<&CancelToken>,
) -> PyResult<Vec<Jet>> {
    let n = count("n", n, 0)?;
    let (min_leaves, max_leaves) = (
        count("min_leaves", min_leaves, 1)?,
        count("max_leaves", max_leaves, 1)?,
    );
    let seed = seed_of(seed)?;
    let max_tries = (max_tries
        .map(|t| crate::cost::limited("max_tries", t, 1, &crate::cost::JET_TRIES)))
    .transpose()?;
    let mut params = match jet_type {
        "qcd" => GinkgoParams::qcd(),
        "w" => GinkgoParams::w_jet(),
        other => {
            return Err(PyValueError::new_err(format!(
                "jet_type = {other:?} is not known; use \"qcd\" or \"w\""
            )))
        }
    };
    if let Some(r) = root_scale {
        params.root_scale = r;
    }
    let tries = max_tries.unwrap_or(100usize.saturating_mul(n.max(100)));
    let ds = interruptible(py, cancel, || {
        generate_dataset(&params, n, min_leaves, max_leaves, seed, tries, "jet")
    })?
    .map_err(value_error)?;
    Ok(ds.jets.into_iter().map(|inner| Jet { inner }).collect())
}

/// Average linkage (UPGMA) on an `(n, n)` similarity array, any `n`: the crate's
/// `search::scipy_average_linkage`, which the command line's board runs too (SciPy's tree and
/// tie rule, heights `max(s) - mean similarity`). Ctrl-C returns at once; the clustering
/// itself (kodama's) cannot be cancelled, so it finishes on a thread of its own and is dropped.
#[pyfunction]
pub fn average_linkage(py: Python<'_>, similarity: &Bound<'_, PyAny>) -> PyResult<Tree> {
    let a = crate::float_matrix(similarity, "similarity", |r, c| {
        if r != c {
            return Err(PyValueError::new_err(format!(
                "similarity has shape ({r}, {c}); pass a square (n, n) array"
            )));
        }
        // The n(n - 1)/2 dissimilarities kodama clusters.
        let pairs = r as f64 * r.saturating_sub(1) as f64 / 2.0;
        trellis_core::memory::check_fits(&format!("average linkage of {r} points"), 8.0 * pairs)
            .map_err(|e| PyValueError::new_err(format!("{e}; pass fewer points")))
    })?;
    let n = a.shape()[0];
    let mut s = crate::vec_with_capacity(n * n, "similarity")?;
    match a.as_slice() {
        Ok(x) => s.extend_from_slice(x),
        Err(_) => s.extend(a.as_array().iter().copied()),
    }
    drop(a);
    // kodama's clustering cannot be cancelled: Ctrl-C returns at once and leaves it to finish.
    crate::interrupt::interruptible_detached(py, None, move || {
        trellis_core::search::scipy_average_linkage(&s, n)
    })?
    .map(Tree::from_hierarchy)
    .map_err(value_error)
}

/// The exact MAP tree and value alone (the MAP-only trellis: the same bits as the full
/// trellis, up to 24 leaves in minutes).
#[pyfunction]
#[pyo3(signature = (jet = None, *, similarity = None, energy = "dasgupta", beta = 1.0, max_leaves = Int::new(24), cancel = None), text_signature = "(jet=None, *, similarity=None, energy='dasgupta', beta=1.0, max_leaves=24, cancel=None)")]
pub fn map_trellis(
    py: Python<'_>,
    jet: Option<&Jet>,
    similarity: Option<&Bound<'_, PyAny>>,
    energy: &str,
    beta: f64,
    max_leaves: Int,
    cancel: Option<&CancelToken>,
) -> PyResult<(Tree, f64)> {
    let max_leaves = count("max_leaves", max_leaves, 1)?;
    let e = energy_of(jet, similarity, energy, beta)?;
    let t = interruptible(
        py,
        cancel,
        || crate::with_model!(&e, m => MapTrellis::build_with_limit(m, max_leaves)),
    )?
    .map_err(value_error)?;
    Ok((Tree::from_binary(&t.map_tree())?, t.map_log_likelihood()))
}

/// The cluster given by `leaves` (indices) as a subset of `n` leaves.
fn subset(leaves: &[i128], n: usize) -> PyResult<Subset> {
    let mut s = Subset::EMPTY;
    for &i in leaves {
        match usize::try_from(i).ok().filter(|&i| i < n) {
            Some(i) => s = s.union(Subset::singleton(i)),
            None => {
                return Err(PyValueError::new_err(format!(
                    "leaf {i} is not one of the {n} leaves 0..{n}"
                )))
            }
        }
    }
    Ok(s)
}

/// The posterior probability that `leaves` (leaf indices) form a cluster of `t`'s trees.
pub(crate) fn cluster_marginal(t: &Trellis, leaves: &[i128]) -> PyResult<f64> {
    let c = subset(leaves, t.trellis.n_leaves())?;
    crate::with_model!(&t.energy, m => trellis_core::exact::cluster_marginal(&t.trellis, m, c))
        .map_err(value_error)
}

/// The exact flat cluster trellis over every clustering of a similarity matrix.
#[pyclass(module = "trellis_lab", name = "FlatTrellis", frozen)]
pub struct Flat {
    trellis: FlatTrellis,
}

#[pymethods]
impl Flat {
    /// The log partition function over all Bell(n) clusterings.
    #[getter]
    fn log_z(&self) -> f64 {
        self.trellis.log_partition()
    }

    /// The MAP clustering's log energy.
    #[getter]
    fn map_log_energy(&self) -> f64 {
        self.trellis.map_log_energy()
    }

    /// The MAP clustering as a label per point (clusters numbered by their lowest point).
    fn map_labels<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let clusters = self.trellis.map_clustering();
        let n = clusters.iter().map(|c| c.len()).sum();
        let mut labels = vec![0i64; n];
        let mut sorted = clusters.clone();
        sorted.sort_by_key(|c| c.lowest());
        for (k, c) in sorted.iter().enumerate() {
            for i in c.iter() {
                labels[i] = k as i64;
            }
        }
        PyArray1::from_vec(py, labels)
    }

    /// The `(n, n)` matrix of pairwise marginals (the probability that i and j share a
    /// cluster).
    fn pairwise_marginals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let m = py.detach(|| crate::pool::on_pool(|| self.trellis.pairwise_marginals()));
        PyArray2::from_vec2(py, &m).map_err(value_error)
    }

    fn __repr__(&self) -> String {
        let t = &self.trellis;
        format!(
            "FlatTrellis(n_points={}, log_z={:?}, map_log_energy={:?})",
            t.n_points(),
            t.log_partition(),
            t.map_log_energy()
        )
    }
}

/// The flat trellis of the correlation-clustering energy `β Σ a_ij` over an `(n, n)`
/// affinity array.
#[pyfunction]
#[pyo3(signature = (affinity, beta = 1.0, *, cancel = None))]
pub fn flat_trellis(
    py: Python<'_>,
    affinity: &Bound<'_, PyAny>,
    beta: f64,
    cancel: Option<&CancelToken>,
) -> PyResult<Flat> {
    let w = weight_matrix(affinity, "affinity")?;
    let model = PairwiseAffinity::with_beta(w, beta).map_err(value_error)?;
    let trellis = interruptible(py, cancel, || FlatTrellis::build(&model))?.map_err(value_error)?;
    Ok(Flat { trellis })
}

/// `data` (an `(n, d)` array) with every column centred and scaled to unit population variance
/// (constant columns become 0): what the command line's board and `cluster` feed the coalescent
/// and diffusion-tree methods, so that those give the same bits from Python. The result is the
/// one copy made: checked against memory before anything is converted, filled a block of rows
/// at a time and scaled with the GIL released (Ctrl-C stops either).
#[pyfunction]
pub fn standardize<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let a = crate::convert::array_of(data, "data")?;
    let (rows, cols) = (a.rows, a.cols);
    let step = (crate::convert::BLOCK_VALUES / cols.max(1)).max(1);
    crate::check_memory(
        &format!("data of shape ({rows}, {cols})"),
        rows as f64 * cols as f64 * 8.0 + step.min(rows) as f64 * cols as f64 * 8.0,
        "pass fewer rows",
    )?;
    let out = py
        .import("numpy")?
        .call_method1("empty", ((rows, cols), "float64"))?;
    let mut start = 0;
    while start < rows {
        py.check_signals()?;
        let end = (start + step).min(rows);
        let part = pyo3::types::PySlice::new(py, start as isize, end as isize, 1);
        out.set_item(&part, a.arr.get_item(&part)?)
            .map_err(|e| crate::convert::not_numbers(py, e, "data"))?;
        start = end;
    }
    let out = out.cast_into::<PyArray2<f64>>()?;
    if rows > 0 && cols > 0 {
        let mut w = out.readwrite();
        let flat = w.as_slice_mut()?;
        let done = interruptible(py, None, move || {
            let mut r: Vec<&mut [f64]> = flat.chunks_mut(cols).collect();
            trellis_core::data::standardize(&mut r)
        })?;
        if !done {
            return Err(PyValueError::new_err(trellis_core::cancel::MESSAGE));
        }
    }
    Ok(out)
}
