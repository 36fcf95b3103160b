//! `Jet`: a Ginkgo jet (the crate's `data::ginkgo::Jet`), read and written in the
//! `data/ginkgo_jets` schema, and pickled whole (every field's bits, through MessagePack).

use crate::convert::{float_matrix, value_error};
use crate::Tree;
use numpy::PyArray2;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use trellis_core::data::ginkgo::{Jet as CrateJet, JetDataset, MAX_LEAVES};

/// A Ginkgo jet: leaf four-momenta `(E, px, py, pz)` and its likelihood parameters.
///
/// `leaves` is an `(n, 4)` array-like of real numbers (a NumPy array, nested lists or tuples,
/// a DataFrame), one row per particle, at most 64; `t_cut` is the squared-mass cut, `lam` the
/// decay rate and `lam_root` the root split's (default `lam`). `load_jets` and
/// `generate_jets` make jets too.
#[pyclass(module = "trellis_lab", name = "Jet", frozen)]
#[derive(Clone)]
pub(crate) struct Jet {
    pub(crate) inner: CrateJet,
}

#[pymethods]
impl Jet {
    /// A jet from an `(n, 4)` float array of four-momenta `(E, px, py, pz)`, with the
    /// squared-mass cut `t_cut` and the decay rates `lam` (and `lam_root` for the root split).
    #[new]
    #[pyo3(signature = (leaves, t_cut = 16.0, lam = 1.5, lam_root = None, name = "jet".to_string()), text_signature = "(leaves, t_cut=16.0, lam=1.5, lam_root=None, name='jet')")]
    fn new(
        leaves: &Bound<'_, PyAny>,
        t_cut: f64,
        lam: f64,
        lam_root: Option<f64>,
        name: String,
    ) -> PyResult<Jet> {
        let leaves = float_matrix(leaves, "leaves", |r, c| {
            if c != 4 {
                return Err(PyValueError::new_err(format!(
                    "leaves has shape ({r}, {c}); pass an (n, 4) array of four-momenta (E, px, py, pz)"
                )));
            }
            if r > MAX_LEAVES {
                return Err(PyValueError::new_err(format!(
                    "leaves has {r} rows; a jet has at most {MAX_LEAVES} leaves (one row per particle)"
                )));
            }
            Ok(())
        })?;
        let a = leaves.as_array();
        let rows: Vec<[f64; 4]> = a.outer_iter().map(|r| [r[0], r[1], r[2], r[3]]).collect();
        let jet = CrateJet {
            name,
            n_leaves: rows.len(),
            t_cut,
            lam,
            lam_root: lam_root.unwrap_or(lam),
            m_hard: 0.0,
            leaves: rows,
            truth_tree: None,
            truth_loglh: None,
            reference: None,
        };
        jet.validate().map_err(value_error)?;
        Ok(Jet { inner: jet })
    }

    /// The jet's name (the file's, or `name=`).
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }

    /// The number of leaves (particles).
    #[getter]
    fn n_leaves(&self) -> usize {
        self.inner.leaves.len()
    }

    /// The squared-mass cut below which a node does not split further.
    #[getter]
    fn t_cut(&self) -> f64 {
        self.inner.t_cut
    }

    /// The decay rate of the splits below the root.
    #[getter]
    fn lam(&self) -> f64 {
        self.inner.lam
    }

    /// The decay rate of the root split.
    #[getter]
    fn lam_root(&self) -> f64 {
        self.inner.lam_root
    }

    /// The four-momenta as an `(n, 4)` array.
    #[getter]
    fn leaves<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let rows: Vec<Vec<f64>> = self.inner.leaves.iter().map(|p| p.to_vec()).collect();
        PyArray2::from_vec2(py, &rows).map_err(value_error)
    }

    /// The generator's tree, if the file gave one.
    #[getter]
    fn truth(&self) -> Option<Tree> {
        self.inner.truth().and_then(|t| Tree::from_binary(&t).ok())
    }

    fn __repr__(&self) -> String {
        format!(
            "Jet({:?}, {} leaves)",
            self.inner.name,
            self.inner.leaves.len()
        )
    }

    /// Pickles every field (the truth tree and reference values too), bit for bit.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let bytes = rmp_serde::to_vec_named(&self.inner).map_err(value_error)?;
        let restore = py.get_type::<Jet>().getattr("_from_pickle")?;
        Ok((restore, PyTuple::new(py, [PyBytes::new(py, &bytes)])?))
    }

    /// The jet `__reduce__` pickled (checked as a new jet is).
    #[staticmethod]
    fn _from_pickle(state: &[u8]) -> PyResult<Jet> {
        let inner: CrateJet = rmp_serde::from_slice(state).map_err(value_error)?;
        inner.validate().map_err(value_error)?;
        Ok(Jet { inner })
    }
}

/// The jets of a file in the `data/ginkgo_jets` schema (each checked as the CLI checks it).
#[pyfunction]
pub(crate) fn load_jets(path: std::path::PathBuf) -> PyResult<Vec<Jet>> {
    let ds = JetDataset::load(&path).map_err(value_error)?;
    Ok(ds.jets.into_iter().map(|inner| Jet { inner }).collect())
}

/// Writes `jets` to `path` in the `data/ginkgo_jets` schema (read back by `load_jets` and by
/// every config's `[jets] source = "file"`), atomically: the file appears whole or not at all.
#[pyfunction]
#[pyo3(signature = (jets, path, source = "written by trellis_lab (Python)".to_string()), text_signature = "(jets, path, source='written by trellis_lab (Python)')")]
pub(crate) fn save_jets(
    jets: Vec<PyRef<'_, Jet>>,
    path: std::path::PathBuf,
    source: String,
) -> PyResult<()> {
    let ds = JetDataset {
        source,
        jets: jets.iter().map(|j| j.inner.clone()).collect(),
    };
    ds.save(&path).map_err(value_error)
}
