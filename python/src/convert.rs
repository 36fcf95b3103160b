//! Python values to the crate's inputs: arrays of real numbers (shapes checked against the
//! callee's limits, and the copies against the memory this process may use and may still take,
//! before anything is converted or copied), and integers that must be counts or seeds (named in
//! the error when they are not, with the limit when they are too large).

use numpy::PyReadonlyArray2;
use pyo3::exceptions::{PyMemoryError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use trellis_core::exact::human_bytes;
use trellis_core::model::WeightMatrix;

/// A `ValueError` with the crate's message, cut to [`MAX_MESSAGE`] characters (a message that
/// quotes a huge input stays readable).
pub(crate) fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(trellis_core::data::clip(&e.to_string(), MAX_MESSAGE))
}

/// The longest error message passed on whole.
pub(crate) const MAX_MESSAGE: usize = 600;

/// A Python integer argument of any size (NumPy integers too): its value, or `i128::MAX` or
/// `i128::MIN` with its bit length when it is beyond them, so that a count too large for any
/// limit is refused by name rather than by an unnamed `OverflowError`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Int {
    value: i128,
    /// Bits of a value beyond `i128` (0 for one within it).
    bits: u64,
}

impl Int {
    pub(crate) const fn new(value: i128) -> Int {
        Int { value, bits: 0 }
    }

    /// The value as a float (beyond `i128`, the power of two of its bit length), for costs.
    pub(crate) fn approx(&self) -> f64 {
        match self.bits {
            0 => self.value as f64,
            b => 2f64
                .powi(b.min(2000) as i32 - 1)
                .copysign(self.value as f64),
        }
    }
}

impl std::fmt::Display for Int {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.bits, self.value < 0) {
            (0, _) => write!(f, "{}", self.value),
            (b, false) => write!(f, "2**127 or more (an integer of {b} bits)"),
            (b, true) => write!(f, "-2**127 or less (an integer of {b} bits)"),
        }
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Int {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Int> {
        match obj.extract::<i128>() {
            Ok(value) => Ok(Int::new(value)),
            Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
                let index = obj.call_method0("__index__")?;
                let bits: u64 = index.call_method0("bit_length")?.extract()?;
                let negative = index.lt(0)?;
                let value = if negative { i128::MIN } else { i128::MAX };
                Ok(Int { value, bits })
            }
            Err(e) => Err(e),
        }
    }
}

/// An integer argument `v` as a count in `min..=max`, or a one-line `ValueError` naming `name`:
/// below `min`, "must be an integer >= min"; above `max`, "is more than `max`" and `why`, the
/// limit's reason.
pub(crate) fn count_in(name: &str, v: Int, min: usize, max: u64, why: &str) -> PyResult<usize> {
    if v.value < min as i128 {
        return Err(PyValueError::new_err(format!(
            "{name} = {v} must be an integer >= {min}"
        )));
    }
    match usize::try_from(v.value) {
        Ok(c) if (c as u64) <= max && v.bits == 0 => Ok(c),
        _ => Err(PyValueError::new_err(format!(
            "{name} = {v} is more than {max}, {why}"
        ))),
    }
}

/// An integer argument `v` as a count of at least `min`, or a one-line `ValueError` naming
/// `name`.
pub(crate) fn count(name: &str, v: Int, min: usize) -> PyResult<usize> {
    count_in(
        name,
        v,
        min,
        usize::MAX as u64,
        "the largest count this machine handles",
    )
}

/// An optional count (`None` stays `None`).
pub(crate) fn count_opt(name: &str, v: Option<Int>, min: usize) -> PyResult<Option<usize>> {
    v.map(|v| count(name, v, min)).transpose()
}

/// A seed in 0..2**64, unchanged.
pub(crate) fn seed_of(seed: Int) -> PyResult<u64> {
    match u64::try_from(seed.value) {
        Ok(s) if seed.bits == 0 => Ok(s),
        _ => Err(PyValueError::new_err(format!(
            "seed = {seed} must be an integer in 0..2**64"
        ))),
    }
}

/// `Err(ValueError)` naming `what` and `bytes` when they would not fit in the memory this
/// process may use or may still take (`trellis_core::memory`), with `fix` appended. Copies
/// below 16 MiB pass unread (the system's numbers are read from files).
pub(crate) fn check_memory(what: &str, bytes: f64, fix: &str) -> PyResult<()> {
    if bytes < (16 << 20) as f64 {
        return Ok(());
    }
    trellis_core::memory::check_fits(what, bytes)
        .and_then(|()| trellis_core::memory::check_available(what, bytes))
        .map_err(|e| PyValueError::new_err(format!("{e}; {fix}")))
}

/// A `Vec` with room for `len` values, or a one-line `MemoryError` naming `what` when the system
/// refuses the allocation (instead of an abort).
pub(crate) fn vec_with_capacity<T>(len: usize, what: &str) -> PyResult<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        let bytes = len as f64 * std::mem::size_of::<T>() as f64;
        PyMemoryError::new_err(format!(
            "{what}: the system refused {} of memory",
            human_bytes(bytes)
        ))
    })?;
    Ok(v)
}

/// A Python sequence (a list, a tuple, a 1-D array) as a `Vec`, its length and the memory of
/// the copy checked first (a broadcast view of 10**10 entries is refused, not allocated).
pub(crate) fn sequence<T>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<T>>
where
    Vec<T>: for<'a, 'py> FromPyObject<'a, 'py, Error = PyErr>,
{
    let len = obj.len()?;
    let bytes = len as f64 * std::mem::size_of::<T>().max(8) as f64;
    check_memory(&format!("{what} of {len} entries"), bytes, "pass fewer")?;
    obj.extract()
}

/// NumPy's own `TypeError` or `ValueError` from converting `what` becomes a one-line
/// `TypeError` naming it; anything else (`KeyboardInterrupt` from a signal handler that ran
/// meanwhile, `MemoryError`) goes on unchanged.
pub(crate) fn not_numbers(py: Python<'_>, e: PyErr, what: &str) -> PyErr {
    if e.is_instance_of::<PyTypeError>(py) || e.is_instance_of::<PyValueError>(py) {
        PyTypeError::new_err(format!("{what} must be a 2-D array of real numbers"))
    } else {
        e
    }
}

/// A 2-D array of real numbers as NumPy holds it, before any conversion.
pub(crate) struct Array<'py> {
    pub(crate) arr: Bound<'py, PyAny>,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    /// Already float64: no conversion copy.
    pub(crate) float64: bool,
}

/// `obj` as a 2-D NumPy array of real numbers without converting its values: an ndarray as it
/// is (a view stays a view); anything else through `numpy.asarray`, which keeps its dtype, so
/// that complex numbers are seen rather than cut to their real part. One-line errors naming
/// `what`: `TypeError` for complex numbers and what is not numbers, `ValueError` for a wrong
/// number of dimensions.
pub(crate) fn array_of<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Array<'py>> {
    let py = obj.py();
    let np = py.import("numpy")?;
    let arr = if obj.is_instance(&np.getattr("ndarray")?)? {
        obj.clone()
    } else {
        np.call_method1("asarray", (obj,))
            .map_err(|e| not_numbers(py, e, what))?
    };
    let dtype = arr.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    match kind.as_str() {
        // Booleans, integers, floats, and objects that may be numbers (converted later).
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
    let itemsize: usize = dtype.getattr("itemsize")?.extract()?;
    let float64 = kind == "f" && itemsize == 8;
    Ok(Array {
        arr,
        rows,
        cols,
        float64,
    })
}

/// `obj` as a 2-D float64 array (any array-like of real numbers: ints and bools are converted,
/// views of any layout accepted). Before anything is converted or copied, `limit` sees the
/// shape `(rows, columns)` (the callee's limits), and NumPy's float64 copy (for another dtype)
/// and the copy the crate will make must fit in memory. One-line errors naming `what`:
/// `TypeError` for complex numbers and what is not numbers, `ValueError` for a wrong number of
/// dimensions, a refused shape, or too little memory.
pub(crate) fn float_matrix<'py>(
    obj: &Bound<'py, PyAny>,
    what: &str,
    limit: impl FnOnce(usize, usize) -> PyResult<()>,
) -> PyResult<PyReadonlyArray2<'py, f64>> {
    let py = obj.py();
    let a = array_of(obj, what)?;
    let (rows, cols) = (a.rows, a.cols);
    limit(rows, cols)?;
    let copy = rows as f64 * (cols as f64 * 8.0 + 24.0);
    let converted = if a.float64 {
        0.0
    } else {
        rows as f64 * cols as f64 * 8.0
    };
    check_memory(
        &format!("{what} of shape ({rows}, {cols})"),
        copy + converted,
        "pass fewer rows",
    )?;
    if let Ok(x) = a.arr.extract::<PyReadonlyArray2<'py, f64>>() {
        return Ok(x);
    }
    let converted = a
        .arr
        .call_method1("astype", ("float64",))
        .map_err(|e| not_numbers(py, e, what))?;
    converted
        .extract::<PyReadonlyArray2<'py, f64>>()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a 2-D array of real numbers")))
}

/// Rows converted at a time by [`float_rows`] (about 4 MiB of float64), between signal checks.
pub(crate) const BLOCK_VALUES: usize = 1 << 19;

/// `obj` (as [`float_matrix`] takes it) copied into the crate's rows, a block of rows at a
/// time: only one block is ever converted by NumPy beside the rows, Ctrl-C is answered between
/// blocks, and `limit` sees the shape before anything is converted. `extra` is the memory the
/// callee needs besides the rows (checked with them); a refused allocation is a `MemoryError`.
pub(crate) fn float_rows(
    obj: &Bound<'_, PyAny>,
    what: &str,
    limit: impl FnOnce(usize, usize) -> PyResult<f64>,
) -> PyResult<Vec<Vec<f64>>> {
    let py = obj.py();
    let a = array_of(obj, what)?;
    let (rows, cols) = (a.rows, a.cols);
    let extra = limit(rows, cols)?;
    let step = (BLOCK_VALUES / cols.max(1)).max(1);
    let block = step.min(rows) as f64 * cols as f64 * 8.0;
    let copy = rows as f64 * (cols as f64 * 8.0 + 24.0);
    check_memory(
        &format!("{what} of shape ({rows}, {cols})"),
        copy + block + extra,
        "pass fewer rows",
    )?;
    let mut out = vec_with_capacity(rows, &format!("{what} of shape ({rows}, {cols})"))?;
    let mut start = 0;
    while start < rows {
        py.check_signals()?;
        let end = (start + step).min(rows);
        let part = a.arr.get_item(pyo3::types::PySlice::new(
            py,
            start as isize,
            end as isize,
            1,
        ))?;
        let part = if a.float64 {
            part
        } else {
            part.call_method1("astype", ("float64",))
                .map_err(|e| not_numbers(py, e, what))?
        };
        let x = part.extract::<PyReadonlyArray2<'_, f64>>().map_err(|_| {
            PyTypeError::new_err(format!("{what} must be a 2-D array of real numbers"))
        })?;
        for r in x.as_array().outer_iter() {
            let mut row = vec_with_capacity(cols, what)?;
            row.extend(r.iter().copied());
            out.push(row);
        }
        start = end;
    }
    Ok(out)
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
    let rows = a.as_array().outer_iter().map(|r| r.to_vec()).collect();
    WeightMatrix::new(rows).map_err(value_error)
}
