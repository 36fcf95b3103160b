//! Bayesian hierarchical clustering (Heller & Ghahramani 2005): `bhc` and its result `BhcFit`.

use crate::{interruptible, value_error, CancelToken, Tree};
use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use trellis_core::bhc::{
    bhc_greedy, BetaBernoulli, BhcError, BhcResult, DirichletMultinomial, NormalInverseWishart,
};

/// The cluster models `bhc` takes, with the hyperparameters each is built with.
const MODELS: [&str; 3] = ["gaussian", "bernoulli", "multinomial"];

/// A BHC tree: the tree, log p(D|T), BHC's lower bound on the DPM evidence, every node's r_k
/// and the cut at r_k < 0.5.
#[pyclass(module = "trellis_lab", name = "BhcFit", frozen)]
pub(crate) struct BhcFit {
    /// The cluster model: "gaussian", "bernoulli" or "multinomial".
    #[pyo3(get)]
    model: &'static str,
    /// The DP concentration alpha.
    #[pyo3(get)]
    alpha: f64,
    /// The tree (leaves 0..n are the rows; internal node n + k is the k-th merge; heights are
    /// cluster sizes).
    #[pyo3(get)]
    tree: Tree,
    /// log p(D | T), BHC's marginal likelihood of the tree.
    #[pyo3(get)]
    log_p_tree: f64,
    /// log[Gamma(alpha)/Gamma(N+alpha) f(T)]: BHC's lower bound on the DPM evidence.
    #[pyo3(get)]
    log_lower_bound: f64,
    run: BhcResult,
}

#[pymethods]
impl BhcFit {
    /// r_k = pi_k p(D_k|H1) / p(D_k|T_k) per node id (1 at the leaves).
    #[getter]
    fn r<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let r: Vec<f64> = self.run.nodes.iter().map(|v| v.log_r.exp()).collect();
        PyArray1::from_vec(py, r)
    }

    /// Cluster labels (int64, numbered by lowest row) of the cut the paper recommends: from the
    /// root down, a node with r_k >= 0.5 is a cluster.
    #[getter]
    fn cut<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let labels: Vec<i64> = self.run.cut_labels(0.5).iter().map(|&l| l as i64).collect();
        PyArray1::from_vec(py, labels)
    }

    /// P(rows i and j in one cluster) under the posterior over the tree's cuts, (n, n).
    fn coclustering<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let n = self.run.n;
        let p: Vec<f64> = self.run.coclustering().into_iter().flatten().collect();
        PyArray1::from_vec(py, p).reshape([n, n])
    }

    fn __repr__(&self) -> String {
        format!(
            "BhcFit({:?}, n={}, alpha={}, log_p_tree={})",
            self.model, self.run.n, self.alpha, self.log_p_tree
        )
    }
}

/// Bayesian hierarchical clustering of the rows of `data` (an (n, d) array) under a
/// Dirichlet-process mixture with concentration `alpha`. `model` is the cluster model:
/// "gaussian" (Normal-Inverse-Wishart, the prior centred on the data: mean the data mean,
/// nu0 = d + 2, S0 = 0.25 diag(var), kappa0 = 0.1), "bernoulli" (0/1 features, Beta prior per
/// feature centred on its frequency with strength 2) or "multinomial" (counts, symmetric
/// Dirichlet(1)). O(n^2) marginal likelihoods; Ctrl-C and `cancel` stop it.
#[pyfunction]
#[pyo3(signature = (data, model = "gaussian", *, alpha = 1.0, cancel = None), text_signature = "(data, model='gaussian', *, alpha=1.0, cancel=None)")]
pub(crate) fn bhc(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    model: &str,
    alpha: f64,
    cancel: Option<&CancelToken>,
) -> PyResult<BhcFit> {
    let Some(&model) = MODELS.iter().find(|&&m| m == model) else {
        return Err(PyValueError::new_err(format!(
            "model = {model:?} is not known; use \"gaussian\", \"bernoulli\" or \"multinomial\""
        )));
    };
    let x = crate::float_rows(data, "data", |n, d| {
        if n == 0 || d == 0 {
            return Err(PyValueError::new_err(format!(
                "data has shape ({n}, {d}); pass an (n, d) array with n >= 1 and d >= 1"
            )));
        }
        // The pair table: about n^2 heap entries of 24 bytes.
        Ok(24.0 * n as f64 * n as f64)
    })?;
    let run = interruptible(py, cancel, || -> Result<BhcResult, BhcError> {
        match model {
            "gaussian" => bhc_greedy(&NormalInverseWishart::from_data(&x, 0.1, 0.25)?, alpha),
            "bernoulli" => bhc_greedy(&BetaBernoulli::from_data(&x, 2.0)?, alpha),
            _ => bhc_greedy(&DirichletMultinomial::symmetric(&x, 1.0)?, alpha),
        }
    })?
    .map_err(value_error)?;
    Ok(BhcFit {
        model,
        alpha,
        tree: Tree::from_hierarchy(run.hierarchy()),
        log_p_tree: run.log_p_tree(),
        log_lower_bound: run.log_lower_bound(),
        run,
    })
}
