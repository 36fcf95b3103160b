//! `trellis_lab._trellis_lab`: the Python face of the trellis-lab crate. It converts NumPy
//! arrays and Python values to the crate's types, calls the crate, and converts back; every
//! algorithm lives in the crate. Errors are Python exceptions carrying the crate's one-line
//! messages (`ValueError` for bad input); long computations release the GIL.

mod bayes;
mod interrupt;
mod more;
mod sparse;
mod tree;

pub(crate) use interrupt::interruptible;
pub(crate) use tree::Tree;

use numpy::{PyArray2, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rand::SeedableRng;
use trellis_lab::data::ginkgo::{Jet as CrateJet, JetDataset};
use trellis_lab::exact::{FullTrellis, PosteriorSampler};
use trellis_lab::model::{CorrelationModel, DasguptaModel, GinkgoModel, SplitModel, WeightMatrix};
use trellis_lab::search::{
    beam_search_scored, default_beam_size, generalised_kt, greedy_scored, Dedup, KtAlgorithm,
    MergeScore,
};

/// `obj` as a 2-D float64 array (any array-like of numbers: ints are converted, views of any
/// layout accepted); otherwise a one-line `TypeError` or `ValueError` naming `what`.
pub(crate) fn float_matrix<'py>(
    obj: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<PyReadonlyArray2<'py, f64>> {
    if let Ok(a) = obj.extract::<PyReadonlyArray2<'py, f64>>() {
        return Ok(a);
    }
    let np = obj.py().import("numpy")?;
    let arr = np.call_method1("asarray", (obj, "float64")).map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!("{what} must be a 2-D array of numbers"))
    })?;
    let ndim: usize = arr.getattr("ndim")?.extract()?;
    if ndim != 2 {
        return Err(PyValueError::new_err(format!(
            "{what} has {ndim} dimensions; pass a 2-D array"
        )));
    }
    arr.extract::<PyReadonlyArray2<'py, f64>>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!("{what} must be a 2-D array of numbers"))
    })
}

/// `obj` as the crate's `WeightMatrix` (an `(n, n)` symmetric array of finite numbers).
pub(crate) fn weight_matrix(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<WeightMatrix> {
    let a = float_matrix(obj, what)?;
    let shape = a.shape();
    if shape[0] != shape[1] {
        return Err(PyValueError::new_err(format!(
            "{what} has shape ({}, {}); pass a square (n, n) array",
            shape[0], shape[1]
        )));
    }
    let rows: Vec<Vec<f64>> = a.as_array().outer_iter().map(|r| r.to_vec()).collect();
    WeightMatrix::new(rows).map_err(value_error)
}

/// A `ValueError` with the crate's message.
pub(crate) fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A Ginkgo jet: leaf four-momenta `(E, px, py, pz)` and its likelihood parameters.
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
    #[pyo3(signature = (leaves, t_cut = 16.0, lam = 1.5, lam_root = None, name = "jet".to_string()))]
    fn new(
        leaves: &Bound<'_, PyAny>,
        t_cut: f64,
        lam: f64,
        lam_root: Option<f64>,
        name: String,
    ) -> PyResult<Jet> {
        let leaves = float_matrix(leaves, "leaves")?;
        let shape = leaves.shape();
        if shape[1] != 4 {
            return Err(PyValueError::new_err(format!(
                "leaves has shape ({}, {}); pass an (n, 4) array of four-momenta (E, px, py, pz)",
                shape[0], shape[1]
            )));
        }
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

    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }

    #[getter]
    fn n_leaves(&self) -> usize {
        self.inner.leaves.len()
    }

    #[getter]
    fn t_cut(&self) -> f64 {
        self.inner.t_cut
    }

    #[getter]
    fn lam(&self) -> f64 {
        self.inner.lam
    }

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
}

/// The jets of a file in the `data/ginkgo_jets` schema (each checked as the CLI checks it).
#[pyfunction]
fn load_jets(path: std::path::PathBuf) -> PyResult<Vec<Jet>> {
    let ds = JetDataset::load(&path).map_err(value_error)?;
    Ok(ds.jets.into_iter().map(|inner| Jet { inner }).collect())
}

/// Writes `jets` to `path` in the `data/ginkgo_jets` schema (read back by `load_jets` and by
/// every config's `[jets] source = "file"`), atomically: the file appears whole or not at all.
#[pyfunction]
#[pyo3(signature = (jets, path, source = "written by trellis_lab (Python)".to_string()))]
fn save_jets(jets: Vec<PyRef<'_, Jet>>, path: std::path::PathBuf, source: String) -> PyResult<()> {
    let ds = JetDataset {
        source,
        jets: jets.iter().map(|j| j.inner.clone()).collect(),
    };
    trellis_lab::experiment::safe_fs::write_atomic(&path, ds.to_json()).map_err(value_error)
}

/// The energy a tree is scored by: a jet's Ginkgo likelihood, or Dasgupta's cost or the
/// hierarchical correlation clustering energy over a similarity matrix.
pub(crate) enum Energy {
    Ginkgo(GinkgoModel),
    Dasgupta(DasguptaModel),
    Correlation(CorrelationModel),
}

#[macro_export]
macro_rules! with_model {
    ($e:expr, $m:ident => $body:expr) => {
        match $e {
            $crate::Energy::Ginkgo($m) => $body,
            $crate::Energy::Dasgupta($m) => $body,
            $crate::Energy::Correlation($m) => $body,
        }
    };
}

/// The energy of `jet`, or of `similarity` (an `(n, n)` symmetric float array) under `energy`
/// ("dasgupta" or "correlation") at inverse temperature `beta`.
pub(crate) fn energy_of(
    jet: Option<&Jet>,
    similarity: Option<&Bound<'_, PyAny>>,
    energy: &str,
    beta: f64,
) -> PyResult<Energy> {
    match (jet, similarity) {
        (Some(j), None) => Ok(Energy::Ginkgo(j.inner.model().map_err(value_error)?)),
        (None, Some(s)) => {
            let w = weight_matrix(s, "similarity")?;
            match energy {
                "dasgupta" => Ok(Energy::Dasgupta(
                    DasguptaModel::new(w, beta).map_err(value_error)?,
                )),
                "correlation" => Ok(Energy::Correlation(
                    CorrelationModel::new(w, beta).map_err(value_error)?,
                )),
                other => Err(PyValueError::new_err(format!(
                    "energy = {other:?} is not known; use \"dasgupta\" or \"correlation\""
                ))),
            }
        }
        _ => Err(PyValueError::new_err(
            "pass either a jet or a similarity array (not both, not neither)",
        )),
    }
}

/// The exact cluster trellis over all trees of a jet or a similarity matrix.
#[pyclass(module = "trellis_lab", name = "Trellis", frozen)]
pub(crate) struct Trellis {
    pub(crate) trellis: FullTrellis,
    pub(crate) energy: Energy,
}

#[pymethods]
impl Trellis {
    /// The log partition function over every binary tree.
    #[getter]
    fn log_z(&self) -> f64 {
        self.trellis.log_partition()
    }

    /// The MAP tree's log-likelihood (its energy's log potential).
    #[getter]
    fn map_log_likelihood(&self) -> f64 {
        self.trellis.map_log_likelihood()
    }

    /// The MAP tree.
    #[getter]
    fn map_tree(&self) -> PyResult<Tree> {
        Tree::from_binary(&self.trellis.map_tree())
    }

    /// The number of trees with a finite likelihood (an exact Python int).
    #[getter]
    fn n_trees(&self) -> u128 {
        self.trellis.n_trees_finite()
    }

    /// The posterior entropy in nats.
    #[getter]
    fn entropy(&self) -> f64 {
        self.trellis.entropy()
    }

    /// How many trees attain the MAP log-likelihood (an exact Python int; ties to a relative
    /// tolerance of 1e-9). `map_tree` is one of them: at every cluster the first tied split in
    /// the trellis's split order, so the order of the leaves decides which.
    #[getter]
    fn n_map_trees(&self, py: Python<'_>) -> PyResult<u128> {
        py.detach(|| {
            with_model!(&self.energy, m => self.trellis.n_map_trees(m, trellis_lab::exact::TIE_TOLERANCE))
        })
        .map_err(value_error)
    }

    /// `n` exact posterior samples drawn with `seed`.
    #[pyo3(signature = (n, seed = 0))]
    fn sample(&self, py: Python<'_>, n: usize, seed: u64) -> PyResult<Vec<Tree>> {
        let trees = py.detach(|| {
            with_model!(&self.energy, m => {
                let mut s = PosteriorSampler::new(&self.trellis, m)?;
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                s.sample_many(n, &mut rng)
            })
        });
        trees
            .map_err(value_error)?
            .iter()
            .map(Tree::from_binary)
            .collect()
    }

    /// The posterior probability that `leaves` (a list of leaf indices) form a cluster.
    fn cluster_marginal(&self, leaves: Vec<usize>) -> PyResult<f64> {
        more::cluster_marginal(self, &leaves)
    }

    /// The log posterior probability of `tree`.
    fn log_probability(&self, tree: &Tree) -> PyResult<f64> {
        with_model!(&self.energy, m => {
            let s = PosteriorSampler::new(&self.trellis, m).map_err(value_error)?;
            Ok(s.log_probability(&tree.binary()?))
        })
    }
}

/// Runs the exact trellis on `jet`, or on `similarity` with `energy` and `beta`, up to
/// `max_leaves` leaves (memory grows 2x and time 3x per leaf; N = 20 takes about 14 s).
#[pyfunction]
#[pyo3(signature = (jet = None, *, similarity = None, energy = "dasgupta", beta = 1.0, max_leaves = 22))]
fn exact_trellis(
    py: Python<'_>,
    jet: Option<&Jet>,
    similarity: Option<&Bound<'_, PyAny>>,
    energy: &str,
    beta: f64,
    max_leaves: usize,
) -> PyResult<Trellis> {
    let e = energy_of(jet, similarity, energy, beta)?;
    let trellis = interruptible(
        py,
        || with_model!(&e, m => FullTrellis::build_with_limit(m, max_leaves)),
    )?
    .map_err(value_error)?;
    Ok(Trellis { trellis, energy: e })
}

/// Beam search: the best tree it finds and its log-likelihood (beam size default
/// min(3N, N(N-1)/2), the paper's). `dedup` is how two partial states count as one:
/// "clusters" (equal cluster sets, exact) or "equal_total" (equal scores, the paper's code).
/// `merge_score` is what merges are ranked by: "potential" (each merge's own log psi, the
/// papers') or "revenue" (the CLI board's default; the same MAP, a far better myopic choice
/// for Dasgupta's cost and HCC; no change for jets).
#[pyfunction]
#[pyo3(signature = (jet = None, *, similarity = None, energy = "dasgupta", beta = 1.0, beam_size = None, dedup = "clusters", merge_score = "potential"))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
fn beam(
    py: Python<'_>,
    jet: Option<&Jet>,
    similarity: Option<&Bound<'_, PyAny>>,
    energy: &str,
    beta: f64,
    beam_size: Option<usize>,
    dedup: &str,
    merge_score: &str,
) -> PyResult<(Tree, f64)> {
    let e = energy_of(jet, similarity, energy, beta)?;
    let score = merge_score_of(merge_score)?;
    let dedup = match dedup {
        "clusters" => Dedup::Clusters,
        "equal_total" => Dedup::EqualTotal,
        other => {
            return Err(PyValueError::new_err(format!(
                "dedup = {other:?} is not known; use \"clusters\" or \"equal_total\""
            )))
        }
    };
    let f = interruptible(py, || {
        with_model!(&e, m => {
            let size = beam_size.unwrap_or_else(|| default_beam_size(m.n_leaves()));
            beam_search_scored(m, size, dedup, score).map(|v| v.into_iter().next())
        })
    })?
    .map_err(value_error)?
    .ok_or_else(|| PyValueError::new_err("beam search found no tree"))?;
    Ok((Tree::from_binary(&f.tree)?, f.log_likelihood))
}

/// Greedy agglomeration on the energy: its tree and log-likelihood (`merge_score` as in
/// [`beam`]).
#[pyfunction]
#[pyo3(name = "greedy", signature = (jet = None, *, similarity = None, energy = "dasgupta", beta = 1.0, merge_score = "potential"))]
fn greedy_tree(
    py: Python<'_>,
    jet: Option<&Jet>,
    similarity: Option<&Bound<'_, PyAny>>,
    energy: &str,
    beta: f64,
    merge_score: &str,
) -> PyResult<(Tree, f64)> {
    let e = energy_of(jet, similarity, energy, beta)?;
    let score = merge_score_of(merge_score)?;
    let f = py
        .detach(|| with_model!(&e, m => greedy_scored(m, score)))
        .map_err(value_error)?;
    Ok((Tree::from_binary(&f.tree)?, f.log_likelihood))
}

/// A `merge_score` argument: "potential" or "revenue".
fn merge_score_of(name: &str) -> PyResult<MergeScore> {
    match name {
        "potential" => Ok(MergeScore::Potential),
        "revenue" => Ok(MergeScore::Revenue),
        other => Err(PyValueError::new_err(format!(
            "merge_score = {other:?} is not known; use \"potential\" or \"revenue\""
        ))),
    }
}

/// The generalised kt algorithm on a jet: p = 1 (kt), 0 (Cambridge/Aachen), -1 (anti-kt), or
/// any exponent; radius `r`.
#[pyfunction]
#[pyo3(signature = (jet, p = 1.0, r = 1.0))]
fn kt(jet: &Jet, p: f64, r: f64) -> PyResult<Tree> {
    let alg = match p {
        1.0 => KtAlgorithm::Kt,
        0.0 => KtAlgorithm::CambridgeAachen,
        -1.0 => KtAlgorithm::AntiKt,
        other => KtAlgorithm::Generalised(other),
    };
    let t = generalised_kt(&jet.inner.leaves, alg, r).map_err(value_error)?;
    Tree::from_binary(&t)
}

/// The extension module.
#[pymodule]
fn _trellis_lab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Tree>()?;
    m.add_class::<Jet>()?;
    m.add_class::<Trellis>()?;
    m.add_function(wrap_pyfunction!(load_jets, m)?)?;
    m.add_function(wrap_pyfunction!(save_jets, m)?)?;
    m.add_function(wrap_pyfunction!(exact_trellis, m)?)?;
    m.add_function(wrap_pyfunction!(beam, m)?)?;
    m.add_function(wrap_pyfunction!(greedy_tree, m)?)?;
    m.add_function(wrap_pyfunction!(kt, m)?)?;
    m.add_class::<more::Flat>()?;
    m.add_function(wrap_pyfunction!(more::generate_jets, m)?)?;
    m.add_function(wrap_pyfunction!(more::average_linkage, m)?)?;
    m.add_function(wrap_pyfunction!(more::map_trellis, m)?)?;
    m.add_function(wrap_pyfunction!(more::flat_trellis, m)?)?;
    m.add_function(wrap_pyfunction!(more::standardize, m)?)?;
    m.add_class::<sparse::Sparse>()?;
    m.add_function(wrap_pyfunction!(sparse::sparse_trellis, m)?)?;
    bayes::register(m)?;
    Ok(())
}
