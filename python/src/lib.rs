//! `trellis_lab._trellis_lab`: the Python face of the trellis-lab crate. It converts NumPy
//! arrays and Python values to the crate's types, calls the crate, and converts back; every
//! algorithm lives in the crate. Errors are Python exceptions carrying the crate's one-line
//! messages (`ValueError` for bad input); long computations release the GIL.

mod bayes;
mod bhc;
mod bhc_exact;
mod clusters;
mod convert;
mod cost;
mod fit;
mod interrupt;
mod jet;
mod linkage;
mod more;
mod pool;
mod posterior;
mod sparse;
mod tree;

pub(crate) use convert::{
    check_memory, count, count_in, count_opt, float_matrix, float_rows, seed_of, value_error,
    vec_with_capacity, weight_matrix, Int,
};
pub(crate) use interrupt::{interruptible, CancelToken};
pub(crate) use jet::Jet;
pub(crate) use tree::Tree;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use trellis_core::exact::{CoClustering, FullTrellis, PosteriorSampler};
use trellis_core::model::{CorrelationModel, DasguptaModel, GinkgoModel, SplitModel};
use trellis_core::search::{
    beam_search_scored, default_beam_size, ee_generalised_kt, generalised_kt, greedy_scored, Dedup,
    KtAlgorithm, MergeScore,
};

/// The energy a tree is scored by: a jet's Ginkgo likelihood, or Dasgupta's cost or the
/// hierarchical correlation clustering energy over a similarity matrix.
pub(crate) enum Energy {
    Ginkgo(GinkgoModel),
    Dasgupta(DasguptaModel),
    Correlation(CorrelationModel),
}

impl Energy {
    /// Its name as the `energy` argument spells it ("ginkgo" for a jet's).
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Energy::Ginkgo(_) => "ginkgo",
            Energy::Dasgupta(_) => "dasgupta",
            Energy::Correlation(_) => "correlation",
        }
    }
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
            if !matches!(energy, "dasgupta" | "correlation") {
                return Err(PyValueError::new_err(format!(
                    "energy = {energy:?} is not known; use \"dasgupta\" or \"correlation\""
                )));
            }
            let w = weight_matrix(s, "similarity")?;
            if energy == "dasgupta" {
                Ok(Energy::Dasgupta(
                    DasguptaModel::new(w, beta).map_err(value_error)?,
                ))
            } else {
                Ok(Energy::Correlation(
                    CorrelationModel::new(w, beta).map_err(value_error)?,
                ))
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
    /// The number of leaves.
    #[getter]
    fn n_leaves(&self) -> usize {
        self.trellis.n_leaves()
    }

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
        interruptible(py, None, || {
            with_model!(&self.energy, m => self.trellis.n_map_trees(m, trellis_core::exact::TIE_TOLERANCE))
        })?
        .map_err(value_error)
    }

    /// `n` exact posterior samples drawn with `seed` (Ctrl-C and `cancel` stop the drawing).
    #[pyo3(signature = (n, seed = Int::new(0), *, cancel = None), text_signature = "($self, n, seed=0, *, cancel=None)")]
    fn sample<'py>(
        &self,
        py: Python<'py>,
        n: Int,
        seed: Int,
        cancel: Option<&CancelToken>,
    ) -> PyResult<Bound<'py, PyList>> {
        let n_leaves = self.trellis.n_leaves();
        tree::draw_trees(py, (n, seed), n_leaves, cancel, self.draws())
    }

    /// `n` exact posterior samples drawn with `seed` as an `(n, 2N - 1)` int64 array, one
    /// canonical parent array per row: the trees `sample(n, seed)` gives, in the same order;
    /// leaves are nodes `0..N`, internal nodes `N..2N-1` numbered in post-order with children
    /// visited by increasing lowest leaf (the root is node 2N - 2, its entry -1). Equal trees
    /// give equal rows (`numpy.unique(rows, axis=0, return_counts=True)` counts them) and
    /// `Tree.from_parents(N, row)` rebuilds one. Ctrl-C and `cancel` stop the drawing.
    #[pyo3(signature = (n, seed = Int::new(0), *, cancel = None), text_signature = "($self, n, seed=0, *, cancel=None)")]
    fn sample_parents<'py>(
        &self,
        py: Python<'py>,
        n: Int,
        seed: Int,
        cancel: Option<&CancelToken>,
    ) -> PyResult<Bound<'py, numpy::PyArray2<i64>>> {
        let n_leaves = self.trellis.n_leaves();
        posterior::draw_parents(py, (n, seed), n_leaves, cancel, self.draws())
    }

    /// The exact pairwise co-clustering of the posterior: an `(N + 1, N, N)` float64 array
    /// whose `[k, i, j]` is the probability that leaves i and j share a cluster of at most k
    /// leaves (that their smallest common cluster, the lowest common ancestor, has size <= k).
    /// Each `[:, i, j]` is the distribution function of that size: 0 at k = 0, 1 at k = N,
    /// non-decreasing; `[k, i, i]` = 1 for k >= 1; symmetric in i and j. `[2]` off the
    /// diagonal is `sibling_probabilities()`. Computed exactly from the trellis in O(3^N)
    /// (a few times the trellis's own build: 16 s against 4.8 s for a similarity trellis of
    /// 18 leaves on 2 busy cores); Ctrl-C and `cancel` stop it.
    #[pyo3(signature = (*, cancel = None))]
    fn coclustering<'py>(
        &self,
        py: Python<'py>,
        cancel: Option<&CancelToken>,
    ) -> PyResult<Bound<'py, numpy::PyArray3<f64>>> {
        posterior::coclustering(py, self, cancel)
    }

    /// The `(N, N)` expected size of the smallest cluster holding both i and j (1 on the
    /// diagonal), from `coclustering()`: `sum over k < N of (1 - P[k, i, j])`.
    #[pyo3(signature = (*, cancel = None))]
    fn expected_lca_size<'py>(
        &self,
        py: Python<'py>,
        cancel: Option<&CancelToken>,
    ) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
        posterior::pairs(py, self, cancel, CoClustering::expected_lca_size)
    }

    /// The `(N, N)` probability that leaves i and j are siblings (merged directly: {i, j} is
    /// a cluster of the tree); 0 on the diagonal.
    #[pyo3(signature = (*, cancel = None))]
    fn sibling_probabilities<'py>(
        &self,
        py: Python<'py>,
        cancel: Option<&CancelToken>,
    ) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
        posterior::pairs(py, self, cancel, CoClustering::siblings)
    }

    /// The posterior probability that `leaves` (a list of leaf indices) form a cluster.
    fn cluster_marginal(&self, leaves: &Bound<'_, PyAny>) -> PyResult<f64> {
        let leaves: Vec<i128> = convert::sequence(leaves, "leaves")?;
        more::cluster_marginal(self, &leaves)
    }

    /// The log posterior probability of `tree` (a binary tree over the trellis's leaves).
    fn log_probability(&self, tree: &Tree) -> PyResult<f64> {
        with_model!(&self.energy, m => {
            let s = PosteriorSampler::new(&self.trellis, m).map_err(value_error)?;
            s.log_probability(&tree.binary()?).map_err(value_error)
        })
    }

    /// The rank of `tree` among every binary tree over the trellis's leaves by log-likelihood:
    /// `(rank, capped)`, `rank` being 1 + the number of trees scoring above it (beyond a relative
    /// tie tolerance of 1e-9, so the MAP tree and trees tied with it rank 1), counted exactly
    /// by branch and bound up to `cap` trees (then `capped` is true and the rank is at least
    /// `rank`). A tree of log-likelihood `-inf` ranks after every finite tree. The count costs
    /// about 10 ns per tree and leaf (0.2 s per million trees at 20 leaves); a cap above 10**9
    /// (the command line's `board.rank_cap` limit, about 4 minutes at 24 leaves) is refused
    /// with its cost, and Ctrl-C and `cancel` stop the count.
    #[pyo3(signature = (tree, *, cap = Int::new(1_000_000), cancel = None), text_signature = "($self, tree, *, cap=1000000, cancel=None)")]
    fn rank(
        &self,
        py: Python<'_>,
        tree: &Tree,
        cap: Int,
        cancel: Option<&CancelToken>,
    ) -> PyResult<(u64, bool)> {
        let n = self.trellis.n_leaves();
        let most = trellis_core::exact::rank::MAX_CAP;
        let why = format!(
            "the command line's limit (board.rank_cap): counting that many trees above a tree of {n} leaves would take {} by the cost model ({} ns per tree and leaf; {} for {most}); lower it",
            cost::about_seconds(rank_seconds(n, &cap)),
            trellis_core::exact::rank::NS_PER_TREE_AND_LEAF,
            trellis_core::exact::human_seconds(trellis_core::exact::rank::seconds(n, most)),
        );
        let cap = count_in("cap", cap, 0, most, &why)? as u64;
        let t = tree.binary()?;
        let c = interruptible(py, cancel, || {
            with_model!(&self.energy, m => trellis_core::exact::rank::rank(
                m,
                &self.trellis,
                &t,
                trellis_core::exact::TIE_TOLERANCE,
                cap,
            ))
        })?
        .map_err(value_error)?;
        Ok((c.count, c.capped))
    }

    fn __repr__(&self) -> String {
        let t = &self.trellis;
        format!(
            "Trellis(n_leaves={}, energy='{}', log_z={:?}, map_log_likelihood={:?}, n_trees={})",
            t.n_leaves(),
            self.energy.name(),
            t.log_partition(),
            t.map_log_likelihood(),
            t.n_trees_finite()
        )
    }
}

/// Runs the exact trellis on `jet`, or on `similarity` with `energy` and `beta`, up to
/// `max_leaves` leaves (memory grows 2x and time 3x per leaf; N = 20 takes about 14 s).
#[pyfunction]
#[pyo3(signature = (jet = None, *, similarity = None, energy = "dasgupta", beta = 1.0, max_leaves = Int::new(22), cancel = None), text_signature = "(jet=None, *, similarity=None, energy='dasgupta', beta=1.0, max_leaves=22, cancel=None)")]
fn exact_trellis(
    py: Python<'_>,
    jet: Option<&Jet>,
    similarity: Option<&Bound<'_, PyAny>>,
    energy: &str,
    beta: f64,
    max_leaves: Int,
    cancel: Option<&CancelToken>,
) -> PyResult<Trellis> {
    let max_leaves = count("max_leaves", max_leaves, 1)?;
    let e = energy_of(jet, similarity, energy, beta)?;
    let trellis = interruptible(
        py,
        cancel,
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
#[pyo3(signature = (jet = None, *, similarity = None, energy = "dasgupta", beta = 1.0, beam_size = None, dedup = "clusters", merge_score = "potential", cancel = None))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
fn beam(
    py: Python<'_>,
    jet: Option<&Jet>,
    similarity: Option<&Bound<'_, PyAny>>,
    energy: &str,
    beta: f64,
    beam_size: Option<Int>,
    dedup: &str,
    merge_score: &str,
    cancel: Option<&CancelToken>,
) -> PyResult<(Tree, f64)> {
    let beam_size = count_opt("beam_size", beam_size, 1)?;
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
    let e = energy_of(jet, similarity, energy, beta)?;
    let f = interruptible(py, cancel, || {
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
    let score = merge_score_of(merge_score)?;
    let e = energy_of(jet, similarity, energy, beta)?;
    let f = py
        .detach(|| with_model!(&e, m => greedy_scored(m, score)))
        .map_err(value_error)?;
    Ok((Tree::from_binary(&f.tree)?, f.log_likelihood))
}

/// Seconds to count `cap` trees above a tree over `n` leaves by the core's cost model (its
/// nanoseconds per tree and leaf, for a cap of any size).
fn rank_seconds(n: usize, cap: &Int) -> f64 {
    cap.approx() * n as f64 * trellis_core::exact::rank::NS_PER_TREE_AND_LEAF * 1e-9
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
/// any exponent; `form` "pp" (transverse momenta, rapidity and azimuth about the beam, radius
/// `r`) or "ee" (energies and angles, FastJet's `ee_genkt_algorithm`; `r` unused).
#[pyfunction]
#[pyo3(signature = (jet, p = 1.0, r = 1.0, *, form = "pp"))]
fn kt(jet: &Jet, p: f64, r: f64, form: &str) -> PyResult<Tree> {
    let alg = match p {
        1.0 => KtAlgorithm::Kt,
        0.0 => KtAlgorithm::CambridgeAachen,
        -1.0 => KtAlgorithm::AntiKt,
        other => KtAlgorithm::Generalised(other),
    };
    let t = match form {
        "pp" => generalised_kt(&jet.inner.leaves, alg, r),
        "ee" => ee_generalised_kt(&jet.inner.leaves, alg),
        other => {
            return Err(PyValueError::new_err(format!(
                "form = {other:?} is not known; use \"pp\" (hadron colliders) or \"ee\" (e+e- collisions)"
            )))
        }
    }
    .map_err(value_error)?;
    Tree::from_binary(&t)
}

/// The extension module.
#[pymodule]
fn _trellis_lab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Tree>()?;
    m.add_class::<Jet>()?;
    m.add_class::<Trellis>()?;
    m.add_class::<CancelToken>()?;
    m.add(
        "CancelledError",
        m.py().get_type::<interrupt::CancelledError>(),
    )?;
    m.add("CostWarning", m.py().get_type::<cost::CostWarning>())?;
    m.add_class::<clusters::Clusters>()?;
    m.add_function(wrap_pyfunction!(jet::load_jets, m)?)?;
    m.add_function(wrap_pyfunction!(jet::save_jets, m)?)?;
    m.add_function(wrap_pyfunction!(exact_trellis, m)?)?;
    m.add_function(wrap_pyfunction!(beam, m)?)?;
    m.add_function(wrap_pyfunction!(greedy_tree, m)?)?;
    m.add_function(wrap_pyfunction!(kt, m)?)?;
    m.add_function(wrap_pyfunction!(fit::fit_lambda, m)?)?;
    m.add_function(wrap_pyfunction!(fit::lambda_curve, m)?)?;
    m.add_class::<bhc::BhcFit>()?;
    m.add_function(wrap_pyfunction!(bhc::bhc, m)?)?;
    m.add_class::<bhc_exact::BrtFit>()?;
    m.add_function(wrap_pyfunction!(bhc_exact::brt, m)?)?;
    m.add_class::<bhc_exact::BhcExact>()?;
    m.add_function(wrap_pyfunction!(bhc_exact::bhc_exact, m)?)?;
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
