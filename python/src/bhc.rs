//! Bayesian hierarchical clustering (Heller & Ghahramani 2005): `bhc` and its result `BhcFit`
//! (pickled bit for bit); the cluster models every BHC and BRT binding shares.

use crate::bayes::{choose, reduced, Reduced};
use crate::{interruptible, value_error, CancelToken, Tree};
use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use trellis_core::bhc::{
    bhc_greedy, BetaBernoulli, BhcError, BhcNode, BhcResult, DirichletMultinomial,
    NormalInverseWishart,
};

/// The cluster models `bhc`, `brt` and `bhc_exact` take.
pub(crate) const MODELS: [(&str, &str); 3] = [
    ("gaussian", "gaussian"),
    ("bernoulli", "bernoulli"),
    ("multinomial", "multinomial"),
];

/// `model` checked against [`MODELS`].
pub(crate) fn model_name(model: &str) -> PyResult<&'static str> {
    choose("model", model, &MODELS)
}

/// A cluster model over the rows of the data, with the hyperparameters each is built with.
pub(crate) enum Cluster {
    /// Normal–Inverse-Wishart centred on the data.
    Gaussian(NormalInverseWishart),
    /// Beta–Bernoulli centred on the feature frequencies.
    Bernoulli(BetaBernoulli),
    /// Symmetric Dirichlet(1) over the categories.
    Multinomial(DirichletMultinomial),
}

impl Cluster {
    /// The model `name` (one of [`MODELS`]) of the rows `x`.
    pub(crate) fn of(name: &str, x: &[Vec<f64>]) -> Result<Cluster, BhcError> {
        Ok(match name {
            "gaussian" => Cluster::Gaussian(NormalInverseWishart::from_data(x, 0.1, 0.25)?),
            "bernoulli" => Cluster::Bernoulli(BetaBernoulli::from_data(x, 2.0)?),
            _ => Cluster::Multinomial(DirichletMultinomial::symmetric(x, 1.0)?),
        })
    }
}

/// Runs `$body` with `$m` bound to the model inside a [`Cluster`], whatever its type.
#[macro_export]
macro_rules! with_cluster {
    ($c:expr, $m:ident => $body:expr) => {
        match $c {
            $crate::bhc::Cluster::Gaussian($m) => $body,
            $crate::bhc::Cluster::Bernoulli($m) => $body,
            $crate::bhc::Cluster::Multinomial($m) => $body,
        }
    };
}

/// The rows of `data` (an `(n, d)` array, n, d >= 1) for a BHC binding, with `check` seeing the
/// shape first (it returns the bytes the call needs besides the rows, or refuses).
pub(crate) fn rows_of(
    data: &Bound<'_, PyAny>,
    check: impl FnOnce(usize, usize) -> PyResult<f64>,
) -> PyResult<Vec<Vec<f64>>> {
    crate::float_rows(data, "data", |n, d| {
        if n == 0 || d == 0 {
            return Err(PyValueError::new_err(format!(
                "data has shape ({n}, {d}); pass an (n, d) array with n >= 1 and d >= 1"
            )));
        }
        check(n, d)
    })
}

/// The pair table of the greedy agglomeration: about n^2 heap entries of 24 bytes.
pub(crate) fn pair_table_bytes(n: usize) -> f64 {
    24.0 * n as f64 * n as f64
}

/// A BHC tree: the tree, log p(D|T), BHC's lower bound on the DPM evidence, every node's r_k
/// and the cut at r_k < 0.5.
#[pyclass(module = "trellis_lab", name = "BhcFit", frozen)]
pub(crate) struct BhcFit {
    /// The cluster model: "gaussian", "bernoulli" or "multinomial".
    #[pyo3(get)]
    pub(crate) model: &'static str,
    /// The DP concentration alpha.
    #[pyo3(get)]
    pub(crate) alpha: f64,
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
    pub(crate) run: BhcResult,
}

/// A BHC node as pickled: size, children (or None), log p(D_k|H1), log d_k, log p(D_k|T_k),
/// log r_k.
type PickledNode = (usize, Option<(usize, usize)>, f64, f64, f64, f64);

impl BhcFit {
    fn of(model: &'static str, run: BhcResult) -> BhcFit {
        BhcFit {
            model,
            alpha: run.alpha,
            tree: Tree::from_hierarchy(run.hierarchy()),
            log_p_tree: run.log_p_tree(),
            log_lower_bound: run.log_lower_bound(),
            run,
        }
    }
}

/// Checks that `nodes` are a BHC tree over `n` points: leaves `0..n` first, each later node
/// merging two earlier ones not merged before, sizes adding up.
fn check_nodes(n: usize, nodes: &[BhcNode]) -> Result<(), String> {
    if n == 0 || nodes.len() + 1 != 2 * n {
        return Err(format!(
            "{} nodes for n = {n}; a BHC tree has 2n - 1",
            nodes.len()
        ));
    }
    let mut used = vec![false; nodes.len()];
    for (v, node) in nodes.iter().enumerate() {
        match (v < n, node.children) {
            (true, None) if node.size == 1 => {}
            (false, Some((l, r))) if l < v && r < v && l != r && !used[l] && !used[r] => {
                if node.size != nodes[l].size + nodes[r].size {
                    return Err(format!("node {v}'s size is not its children's sum"));
                }
                used[l] = true;
                used[r] = true;
            }
            _ => {
                return Err(format!(
                    "node {v} is not a leaf or a merge of two earlier nodes"
                ))
            }
        }
    }
    Ok(())
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

    /// The same model, alpha and nodes (every number bit for bit).
    fn __eq__(&self, other: &BhcFit) -> bool {
        self.model == other.model && self.run == other.run
    }

    /// Pickles the model, alpha and every node, bit for bit.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        let nodes: Vec<PickledNode> = (self.run.nodes.iter())
            .map(|v| (v.size, v.children, v.log_h1, v.log_d, v.log_p_tree, v.log_r))
            .collect();
        let state = (self.model, self.run.alpha, self.run.n, nodes);
        reduced::<Self>(py, state.into_pyobject(py)?)
    }

    /// The fit `__reduce__` pickled (its tree checked again).
    #[staticmethod]
    fn _from_pickle(
        model: &str,
        alpha: f64,
        n: usize,
        nodes: Vec<PickledNode>,
    ) -> PyResult<BhcFit> {
        let model = model_name(model)?;
        if !(alpha > 0.0 && alpha.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "a BhcFit pickle: alpha = {alpha} must be positive and finite"
            )));
        }
        let nodes: Vec<BhcNode> = nodes
            .into_iter()
            .map(
                |(size, children, log_h1, log_d, log_p_tree, log_r)| BhcNode {
                    size,
                    children,
                    log_h1,
                    log_d,
                    log_p_tree,
                    log_r,
                },
            )
            .collect();
        check_nodes(n, &nodes)
            .map_err(|e| PyValueError::new_err(format!("a BhcFit pickle: {e}")))?;
        Ok(BhcFit::of(model, BhcResult { n, alpha, nodes }))
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
    let model = model_name(model)?;
    let x = rows_of(data, |n, _| Ok(pair_table_bytes(n)))?;
    let run = interruptible(py, cancel, || -> Result<BhcResult, BhcError> {
        let c = Cluster::of(model, &x)?;
        with_cluster!(&c, m => bhc_greedy(m, alpha))
    })?
    .map_err(value_error)?;
    Ok(BhcFit::of(model, run))
}
