//! Greedy Bayesian rose trees (`brt`, `BrtFit`) and the exact answers beside BHC
//! (`bhc_exact`, `BhcExact`): the DPM evidence, MAP partition and co-clustering over all
//! partitions, the best and average BHC objective over all binary trees, and the gaps of a
//! greedy fit. Sizes and costs are checked from the array's shape before anything is copied.

use crate::bayes::{reduced, Reduced};
use crate::bhc::{model_name, pair_table_bytes, rows_of, BhcFit, Cluster};
use crate::{interruptible, value_error, with_cluster, CancelToken, Tree};
use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use trellis_core::bhc::brt::{BrtNode, BrtOp};
use trellis_core::bhc::exact::{
    compare, compare_run, labels_of_subsets, BhcComparison, MAX_EXACT_POINTS, MAX_TREE_DP_POINTS,
};
use trellis_core::bhc::{brt_greedy, BhcError, BrtResult, ConjugateModel};
use trellis_core::flat::FlatCost;

/// A greedy Bayesian rose tree: the tree (any number of children per node) and log p(D|T).
#[pyclass(module = "trellis_lab", name = "BrtFit", frozen)]
pub(crate) struct BrtFit {
    /// The cluster model: "gaussian", "bernoulli" or "multinomial".
    #[pyo3(get)]
    model: &'static str,
    /// BRT's gamma: a node with k children is one cluster with prior 1 - (1 - gamma)^(k - 1).
    #[pyo3(get)]
    gamma: f64,
    /// The rose tree (leaves 0..n are the rows; heights are cluster sizes).
    #[pyo3(get)]
    tree: Tree,
    /// log p(D | T), BRT's marginal likelihood of the tree.
    #[pyo3(get)]
    log_p_tree: f64,
    run: BrtResult,
}

/// A BRT node as pickled: children, size, log f(D_T), log p(D_T|T), the children's summed
/// log-likelihoods, alive.
type PickledBrtNode = (Vec<usize>, usize, f64, f64, f64, bool);

/// The operations' pickled names.
const OPS: [(&str, BrtOp); 4] = [
    ("join", BrtOp::Join),
    ("absorb_first", BrtOp::AbsorbIntoFirst),
    ("absorb_second", BrtOp::AbsorbIntoSecond),
    ("collapse", BrtOp::Collapse),
];

impl BrtFit {
    fn of(model: &'static str, run: BrtResult) -> BrtFit {
        BrtFit {
            model,
            gamma: run.gamma,
            tree: Tree::from_hierarchy(run.hierarchy()),
            log_p_tree: run.log_p_tree(),
            run,
        }
    }
}

/// Checks that `nodes` are a greedy BRT run over `n` points: leaves `0..n` first (alive, size
/// 1, no children), one node per operation after them, every live node's children earlier live
/// nodes not claimed by another live node, sizes adding up, every live node but the last (the
/// root, alive) some live node's child.
fn check_brt_nodes(n: usize, nodes: &[BrtNode], ops: usize) -> Result<(), String> {
    if n == 0 || nodes.len() < n || nodes.len() - n != ops || (n > 1 && ops == 0) {
        return Err(format!(
            "{} nodes and {ops} operations for n = {n}; a BRT has n leaves and one node per operation",
            nodes.len()
        ));
    }
    let mut claimed = vec![false; nodes.len()];
    for (v, node) in nodes.iter().enumerate() {
        if v < n {
            if !(node.alive && node.size == 1 && node.children.is_empty()) {
                return Err(format!("node {v} is not a leaf"));
            }
            continue;
        }
        if !node.alive {
            continue;
        }
        if node.children.len() < 2 {
            return Err(format!("node {v} has fewer than two children"));
        }
        let mut size = 0;
        for &c in &node.children {
            if c >= v || !nodes[c].alive || claimed[c] {
                return Err(format!(
                    "node {v}'s child {c} is not an earlier free live node"
                ));
            }
            claimed[c] = true;
            size += nodes[c].size;
        }
        if size != node.size {
            return Err(format!("node {v}'s size is not its children's sum"));
        }
    }
    let root = nodes.len() - 1;
    match (0..nodes.len()).find(|&v| nodes[v].alive && !claimed[v] && v != root) {
        Some(v) => Err(format!("live node {v} is in no tree")),
        None if !nodes[root].alive || nodes[root].size != n => {
            Err("the last node is not the root of all n points".to_string())
        }
        None => Ok(()),
    }
}

#[pymethods]
impl BrtFit {
    /// The greedy operations in the order applied: "join", "absorb" or "collapse".
    #[getter]
    fn ops(&self) -> Vec<&'static str> {
        (self.run.ops.iter())
            .map(|op| match op {
                BrtOp::Join => "join",
                BrtOp::AbsorbIntoFirst | BrtOp::AbsorbIntoSecond => "absorb",
                BrtOp::Collapse => "collapse",
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "BrtFit({:?}, n={}, gamma={}, log_p_tree={})",
            self.model, self.run.n, self.gamma, self.log_p_tree
        )
    }

    /// The same model, gamma, nodes and operations (every number bit for bit).
    fn __eq__(&self, other: &BrtFit) -> bool {
        self.model == other.model && self.run == other.run
    }

    /// Pickles the model, gamma, every node and operation, bit for bit.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        let nodes: Vec<PickledBrtNode> = (self.run.nodes.iter())
            .map(|v| {
                let t = (v.log_h1, v.log_p, v.log_p_children);
                (v.children.clone(), v.size, t.0, t.1, t.2, v.alive)
            })
            .collect();
        let ops: Vec<&str> = (self.run.ops.iter())
            .map(|op| OPS.iter().find(|(_, o)| o == op).expect("every op named").0)
            .collect();
        let state = (self.model, self.run.gamma, self.run.n, nodes, ops);
        reduced::<Self>(py, state.into_pyobject(py)?)
    }

    /// The fit `__reduce__` pickled (its tree checked again).
    #[staticmethod]
    fn _from_pickle(
        model: &str,
        gamma: f64,
        n: usize,
        nodes: Vec<PickledBrtNode>,
        ops: Vec<String>,
    ) -> PyResult<BrtFit> {
        let bad = |e: String| PyValueError::new_err(format!("a BrtFit pickle: {e}"));
        let model = model_name(model)?;
        if !(gamma > 0.0 && gamma <= 1.0) {
            return Err(bad(format!("gamma = {gamma} must be in (0, 1]")));
        }
        let ops = (ops.iter())
            .map(|name| {
                let op = OPS.iter().find(|(k, _)| k == name);
                op.map(|(_, o)| *o)
                    .ok_or_else(|| bad(format!("unknown operation {name:?}")))
            })
            .collect::<PyResult<Vec<BrtOp>>>()?;
        let nodes: Vec<BrtNode> = (nodes.into_iter())
            .map(
                |(children, size, log_h1, log_p, log_p_children, alive)| BrtNode {
                    children,
                    size,
                    log_h1,
                    log_p,
                    log_p_children,
                    alive,
                },
            )
            .collect();
        check_brt_nodes(n, &nodes, ops.len()).map_err(bad)?;
        let run = BrtResult {
            n,
            gamma,
            nodes,
            ops,
        };
        Ok(BrtFit::of(model, run))
    }
}

/// Greedy Bayesian rose trees (Blundell, Teh & Heller 2010) on the rows of `data` (an (n, d)
/// array): from the singletons, the join, absorb or collapse of two trees with the largest
/// likelihood ratio, until one tree is left. `model` as for `bhc` (the same hyperparameters);
/// `gamma` in (0, 1]. O(n^2) marginal likelihoods; Ctrl-C and `cancel` stop it.
#[pyfunction]
#[pyo3(signature = (data, model = "gaussian", *, gamma = 0.5, cancel = None), text_signature = "(data, model='gaussian', *, gamma=0.5, cancel=None)")]
pub(crate) fn brt(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    model: &str,
    gamma: f64,
    cancel: Option<&CancelToken>,
) -> PyResult<BrtFit> {
    let model = model_name(model)?;
    if !(gamma > 0.0 && gamma <= 1.0) {
        return Err(PyValueError::new_err(format!(
            "gamma = {gamma} must be in (0, 1] (0.5 by default)"
        )));
    }
    // The pair table, and each node's children lists (n ids in all, twice over).
    let x = rows_of(data, |n, _| Ok(pair_table_bytes(n) + 64.0 * n as f64))?;
    let run = interruptible(py, cancel, || -> Result<BrtResult, BhcError> {
        let c = Cluster::of(model, &x)?;
        with_cluster!(&c, m => brt_greedy(m, gamma))
    })?
    .map_err(value_error)?;
    Ok(BrtFit::of(model, run))
}

/// The most rows `bhc_exact` takes: the flat trellis's and the best-tree recursion's limit.
pub(crate) const EXACT_LIMIT: usize = if MAX_EXACT_POINTS < MAX_TREE_DP_POINTS {
    MAX_EXACT_POINTS
} else {
    MAX_TREE_DP_POINTS
};

/// Bytes per subset of `bhc_exact` besides the flat trellis's own tables: the energy table and
/// its copy, the best-tree cells (16) and back-pointers (8), and the cluster marginals (8).
const EXACT_BYTES_PER_SUBSET: f64 = 48.0;

/// The exact answers beside BHC on one data set, and the gaps of a greedy BHC fit to them
/// (every bound on the DPM evidence's scale, log[Gamma(alpha)/Gamma(N+alpha) f]).
#[pyclass(module = "trellis_lab", name = "BhcExact", frozen)]
pub(crate) struct BhcExact {
    /// The cluster model.
    #[pyo3(get)]
    model: &'static str,
    /// The best binary tree under BHC's objective (the first split in subset order at ties).
    #[pyo3(get)]
    best_tree: Tree,
    c: BhcComparison,
}

#[pymethods]
impl BhcExact {
    /// The DP concentration alpha.
    #[getter]
    fn alpha(&self) -> f64 {
        self.c.alpha
    }
    /// log p(D), the DPM evidence: the sum over all Bell(n) partitions.
    #[getter]
    fn log_evidence(&self) -> f64 {
        self.c.dpm.log_evidence
    }
    /// Labels (int64, numbered by lowest row) of the MAP partition.
    #[getter]
    fn map_partition<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let labels = labels_of_subsets(self.c.n, &self.c.dpm.map_partition);
        PyArray1::from_vec(py, labels.into_iter().map(|l| l as i64).collect())
    }
    /// log P(MAP partition | D).
    #[getter]
    fn map_log_posterior(&self) -> f64 {
        self.c.dpm.map_log_posterior
    }
    /// P(rows i and j in one cluster | D) over all partitions, (n, n).
    fn coclustering<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        matrix(py, &self.c.dpm.pairwise)
    }
    /// The best tree's bound: log[Gamma(alpha)/Gamma(N+alpha) max_T f(T)].
    #[getter]
    fn best_log_bound(&self) -> f64 {
        self.c.best_log_bound
    }
    /// The average tree's: log[Gamma(alpha)/Gamma(N+alpha) mean_T f(T)] over all (2n-3)!! trees.
    #[getter]
    fn mean_log_bound(&self) -> f64 {
        self.c.mean_log_bound
    }
    /// The greedy fit's lower bound (its `log_lower_bound`).
    #[getter]
    fn greedy_log_bound(&self) -> f64 {
        self.c.greedy_log_bound
    }
    /// log p(D) - greedy_log_bound >= 0: the evidence the greedy tree's cuts miss.
    #[getter]
    fn gap_evidence_greedy(&self) -> f64 {
        self.c.gap_evidence_greedy
    }
    /// log p(D) - best_log_bound >= 0: the evidence even the best tree misses.
    #[getter]
    fn gap_evidence_best(&self) -> f64 {
        self.c.gap_evidence_best
    }
    /// best_log_bound - greedy_log_bound >= 0: how far the greedy tree is from the best.
    #[getter]
    fn gap_best_greedy(&self) -> f64 {
        self.c.gap_best_greedy
    }
    /// Whether the greedy tree is a best tree (the same clusters).
    #[getter]
    fn greedy_is_best(&self) -> bool {
        self.c.greedy_is_best
    }
    /// Adjusted Rand index of the greedy fit's r_k < 0.5 cut against the MAP partition.
    #[getter]
    fn ari_cut_map(&self) -> f64 {
        self.c.ari_cut_map
    }
    /// Largest |P_BHC(i~j) - P_DPM(i~j)| over pairs i < j (the greedy tree's cuts against all
    /// partitions).
    #[getter]
    fn coclustering_max_abs_diff(&self) -> f64 {
        self.c.coclustering_max_abs_diff
    }

    fn __repr__(&self) -> String {
        format!(
            "BhcExact({:?}, n={}, alpha={}, log_evidence={}, gap_evidence_greedy={})",
            self.model, self.c.n, self.c.alpha, self.c.dpm.log_evidence, self.c.gap_evidence_greedy
        )
    }
}

/// An `n x n` matrix as a NumPy array.
fn matrix<'py>(py: Python<'py>, rows: &[Vec<f64>]) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let n = rows.len();
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    PyArray1::from_vec(py, flat).reshape([n, n])
}

/// The exact answers beside BHC on the rows of `data` (at most 22): the DPM evidence, MAP
/// partition and co-clustering matrix over all partitions (the flat trellis), the best and
/// average BHC objective over all binary trees (O(3^n)), and the gaps of the greedy BHC fit
/// `fit` (a `bhc` of the same data, model and alpha; default: run it here). Refused above 22
/// rows before anything is copied; a CostWarning above a minute by the cost model; Ctrl-C and
/// `cancel` stop it.
#[pyfunction]
#[pyo3(signature = (data, model = "gaussian", *, alpha = 1.0, fit = None, cancel = None), text_signature = "(data, model='gaussian', *, alpha=1.0, fit=None, cancel=None)")]
pub(crate) fn bhc_exact(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    model: &str,
    alpha: f64,
    fit: Option<&BhcFit>,
    cancel: Option<&CancelToken>,
) -> PyResult<BhcExact> {
    let model = model_name(model)?;
    if let Some(f) = fit {
        if f.model != model || f.alpha != alpha {
            return Err(PyValueError::new_err(format!(
                "fit is a {:?} BHC with alpha = {}, not {model:?} with alpha = {alpha}; pass the fit of the same model and alpha (or no fit)",
                f.model, f.alpha
            )));
        }
    }
    let x = rows_of(data, |n, _| {
        if n > EXACT_LIMIT {
            return Err(PyValueError::new_err(format!(
                "bhc_exact takes at most {EXACT_LIMIT} rows (the limit of the exact DPM evidence and best BHC tree, O(3^n) over 2^n subsets); data has {n}: run bhc or brt alone at this size"
            )));
        }
        if let Some(f) = fit.filter(|f| f.run.n != n) {
            return Err(PyValueError::new_err(format!(
                "fit has {} rows and data {n}; pass the fit of this data (or no fit)",
                f.run.n
            )));
        }
        let cost = FlatCost::of(n);
        // The flat trellis, then the best-tree recursion over as many terms.
        crate::cost::announce(
            py,
            &format!("bhc_exact on {n} rows"),
            2.0 * cost.seconds,
            "pass fewer rows",
        )?;
        Ok(cost.bytes + EXACT_BYTES_PER_SUBSET * 2f64.powi(n as i32) + pair_table_bytes(n))
    })?;
    let earlier = fit.map(|f| f.run.clone());
    let c = interruptible(py, cancel, || -> Result<BhcComparison, BhcError> {
        let c = Cluster::of(model, &x)?;
        with_cluster!(&c, m => match earlier {
            Some(run) => {
                same_points(m, &run)?;
                compare_run(m, run)
            }
            None => compare(m, alpha),
        })
    })?
    .map_err(value_error)?;
    Ok(BhcExact {
        model,
        best_tree: Tree::from_binary(&c.trees.tree)?,
        c,
    })
}

/// Checks that a greedy run was made on the model's points: every leaf's marginal likelihood
/// is the model's, bit for bit.
fn same_points<M: ConjugateModel>(
    m: &M,
    run: &trellis_core::bhc::BhcResult,
) -> Result<(), BhcError> {
    let differs = (0..m.n_points()).any(|i| run.nodes[i].log_h1 != m.log_marginal(&m.leaf(i)));
    if differs {
        return Err(BhcError::BadParameter {
            name: "fit",
            value: run.n as f64,
            expected: "the BhcFit of this data (its leaves' marginal likelihoods differ)",
        });
    }
    Ok(())
}
