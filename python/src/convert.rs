//! Python values to the crate's inputs: arrays of real numbers (shapes checked against the
//! callee's limits and the memory this process may use before anything is converted or
//! copied), and integers that must be counts or seeds (named in the error when they are not).

use numpy::PyReadonlyArray2;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use trellis_core::model::WeightMatrix;

/// A `ValueError` with the crate's message.
pub(crate) fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// NumPy's own `TypeError` or `ValueError` from converting `what` becomes a one-line
/// `TypeError` naming it; anything else (`KeyboardInterrupt` from a signal handler that ran
/// meanwhile, `MemoryError`) goes on unchanged.
fn not_numbers(py: Python<'_>, e: PyErr, what: &str) -> PyErr {
    if e.is_instance_of::<PyTypeError>(py) || e.is_instance_of::<PyValueError>(py) {
        PyTypeError::new_err(format!("{what} must be a 2-D array of real numbers"))
    } else {
        e
    }
}

/// `obj` as a 2-D float64 array (any array-like of real numbers: ints and bools are converted,
/// views of any layout accepted). Before anything is converted or copied, `limit` sees the
/// shape `(rows, columns)` (the callee's limits), and the copy the crate will make must fit in
/// memory. One-line errors naming `what`: `TypeError` for complex numbers and what is not
/// numbers, `ValueError` for a wrong number of dimensions, a refused shape, or too little
/// memory.
pub(crate) fn float_matrix<'py>(
    obj: &Bound<'py, PyAny>,
    what: &str,
    limit: impl FnOnce(usize, usize) -> PyResult<()>,
) -> PyResult<PyReadonlyArray2<'py, f64>> {
    let py = obj.py();
    let np = py.import("numpy")?;
    // An ndarray as it is (a view stays a view); anything else through numpy.asarray, which
    // keeps its dtype, so that complex numbers are seen rather than cut to their real part.
    let arr = if obj.is_instance(&np.getattr("ndarray")?)? {
        obj.clone()
    } else {
        np.call_method1("asarray", (obj,))
            .map_err(|e| not_numbers(py, e, what))?
    };
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    match kind.as_str() {
        // Booleans, integers, floats, and objects that may be numbers (converted below).
        "b" | "i" | "u" | "f" | "O" => {}
        "c" => {
            return Err(PyTypeError::new_err(format!(
                "{what} has complex numbers; pass real ones (e.g. {what}.real when the imaginary parts are 0)"
            )))
        }
        _ => {
            return Err(PyTypeError::new_err(format!(
                "{what} must be a 2-D array of real numbers"
            )))
        }
    }
    let ndim: usize = arr.getattr("ndim")?.extract()?;
    if ndim != 2 {
        return Err(PyValueError::new_err(format!(
            "{what} has {ndim} dimensions; pass a 2-D array"
        )));
    }
    let (rows, cols): (usize, usize) = arr.getattr("shape")?.extract()?;
    limit(rows, cols)?;
    // The crate copies the rows (and NumPy first converts other dtypes to float64).
    let bytes = rows as f64 * (cols as f64 * 8.0 + 24.0) * if kind == "f" { 1.0 } else { 2.0 };
    trellis_core::memory::check_fits(&format!("{what} of shape ({rows}, {cols})"), bytes)
        .map_err(|e| PyValueError::new_err(format!("{e}; pass fewer rows")))?;
    if let Ok(a) = arr.extract::<PyReadonlyArray2<'py, f64>>() {
        return Ok(a);
    }
    let converted = arr
        .call_method1("astype", ("float64",))
        .map_err(|e| not_numbers(py, e, what))?;
    converted
        .extract::<PyReadonlyArray2<'py, f64>>()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a 2-D array of real numbers")))
}

/// The rows of a float matrix (the crate's input form).
pub(crate) fn rows(a: &PyReadonlyArray2<'_, f64>) -> Vec<Vec<f64>> {
    a.as_array().outer_iter().map(|r| r.to_vec()).collect()
}

/// `obj` as the crate's `WeightMatrix` (an `(n, n)` symmetric array of finite numbers, at most
/// `WeightMatrix::MAX_POINTS` points, checked before it is converted).
pub(crate) fn weight_matrix(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<WeightMatrix> {
    let a = float_matrix(obj, what, |r, c| {
        if r != c {
            return Err(PyValueError::new_err(format!(
                "{what} has shape ({r}, {c}); pass a square (n, n) array"
            )));
        }
        WeightMatrix::check_len(r)
            .map_err(|e| PyValueError::new_err(format!("{what} has shape ({r}, {c}): {e}")))
    })?;
    WeightMatrix::new(rows(&a)).map_err(value_error)
}

/// An integer argument `v` as a count of at least `min`, or a one-line `ValueError` naming
/// `name`.
pub(crate) fn count(name: &str, v: i128, min: usize) -> PyResult<usize> {
    usize::try_from(v)
        .ok()
        .filter(|&c| c >= min)
        .ok_or_else(|| PyValueError::new_err(format!("{name} = {v} must be an integer >= {min}")))
}

/// An optional count (`None` stays `None`).
pub(crate) fn count_opt(name: &str, v: Option<i128>, min: usize) -> PyResult<Option<usize>> {
    v.map(|v| count(name, v, min)).transpose()
}

/// A seed in 0..2**64, unchanged.
pub(crate) fn seed_of(seed: i128) -> PyResult<u64> {
    u64::try_from(seed)
        .map_err(|_| PyValueError::new_err(format!("seed = {seed} must be an integer in 0..2**64")))
}
