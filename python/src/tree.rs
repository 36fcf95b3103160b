//! `Tree`: the one tree class of the package, over the crate's `Hierarchy` (any arity, any size,
//! a height per node), so that every method's tree (trellis, beam, kt, coalescent, diffusion
//! trees) is the same Python type with the same metrics.

use crate::clusters::Clusters;
use crate::{check_memory, count, count_in, float_matrix, linkage, value_error, Int, Jet};
use numpy::{PyArray1, PyArray2, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::hash::{Hash, Hasher};
use trellis_core::cancel::Cancel;
use trellis_core::hierarchy::Hierarchy;
use trellis_core::tree::Tree as CrateTree;

/// A rooted tree over leaves `0..n`: internal nodes `n..` with two or more children each, a
/// height per node (leaves 0, never decreasing towards the root).
#[pyclass(module = "trellis_lab", name = "Tree", frozen, from_py_object)]
#[derive(Clone)]
pub(crate) struct Tree {
    pub(crate) inner: Hierarchy,
}

impl Tree {
    /// A tree from the crate's `Hierarchy`.
    pub(crate) fn from_hierarchy(inner: Hierarchy) -> Tree {
        Tree { inner }
    }

    /// A tree from the crate's binary `Tree` (heights = cluster sizes).
    pub(crate) fn from_binary(t: &CrateTree) -> PyResult<Tree> {
        Hierarchy::from_tree(t)
            .map(Tree::from_hierarchy)
            .map_err(value_error)
    }

    /// The crate's binary `Tree`, for the models that score binary trees.
    pub(crate) fn binary(&self) -> PyResult<CrateTree> {
        self.inner.to_tree().map_err(value_error)
    }
}

/// The energy of `jet` or `similarity` when one is given (`None` for neither).
fn optional_energy(
    jet: Option<&Jet>,
    similarity: Option<&Bound<'_, PyAny>>,
    energy: &str,
    beta: f64,
) -> PyResult<Option<crate::Energy>> {
    match (jet, similarity) {
        (None, None) => Ok(None),
        _ => crate::energy_of(jet, similarity, energy, beta).map(Some),
    }
}

/// The crate's binary trees as hierarchies (on a computation's worker thread: stops when the
/// computation is cancelled, checked every 1024 trees).
fn hierarchies(trees: Vec<CrateTree>) -> Result<Vec<Hierarchy>, String> {
    let cancel = Cancel::new();
    let mut out = Vec::with_capacity(trees.len());
    for (i, t) in trees.into_iter().enumerate() {
        if i % 1024 == 0 && cancel.is_cancelled() {
            return Err(trellis_core::cancel::MESSAGE.to_string());
        }
        out.push(Hierarchy::from_tree(&t).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// The canonical parent array of `h` (equal exactly when the cluster sets are): tree identity
/// and hashing in O(n log n) time and O(n) memory whatever the tree's shape.
pub(crate) fn canonical(h: &Hierarchy) -> Vec<i64> {
    let mut out = Vec::new();
    linkage::canonical_parents(h, &mut out);
    out
}

/// A sampler's `n` as a count, at most the samples over `n_leaves` leaves that fit in the
/// memory this process may use (`trellis_core::exact::sample::sample_bytes` each).
pub(crate) fn sample_count(n: Int, n_leaves: usize) -> PyResult<usize> {
    let each = trellis_core::exact::sample::sample_bytes(n_leaves);
    let Some(usable) = trellis_core::memory::usable_bytes() else {
        return count("n", n, 0);
    };
    let fits = (usable as f64 / each) as u64;
    let why = format!(
        "the most samples over {n_leaves} leaves that fit in the {} this process may use (about {} each); draw at most {fits} at a time",
        trellis_core::exact::human_bytes(usable as f64),
        trellis_core::exact::human_bytes(each)
    );
    count_in("n", n, 0, fits, &why)
}

/// The `n` trees over `n_leaves` leaves `draw` draws from an RNG seeded with `seed` (the
/// samplers' arguments, checked by name), drawn as a long computation (Ctrl-C and `cancel` stop
/// it), as a Python list.
pub(crate) fn draw_trees<'py>(
    py: Python<'py>,
    (n, seed): (Int, Int),
    n_leaves: usize,
    cancel: Option<&crate::CancelToken>,
    draw: impl FnOnce(usize, &mut StdRng) -> Result<Vec<CrateTree>, String> + Send,
) -> PyResult<Bound<'py, PyList>> {
    let (n, seed) = (sample_count(n, n_leaves)?, crate::seed_of(seed)?);
    let trees = crate::interruptible(py, cancel, || {
        hierarchies(draw(n, &mut StdRng::seed_from_u64(seed))?)
    })?
    .map_err(PyValueError::new_err)?;
    tree_list(py, trees)
}

/// `trees` as a Python list of `Tree`s, made with a signal check every 65536 trees, so that
/// Ctrl-C also stops the making of millions of them.
fn tree_list(py: Python<'_>, trees: Vec<Hierarchy>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for (i, inner) in trees.into_iter().enumerate() {
        if i % 65536 == 0 {
            py.check_signals()?;
        }
        list.append(Tree { inner })?;
    }
    Ok(list)
}

/// One class id per leaf from any 1-D sequence of labels (ints, strings, ...), through
/// `numpy.unique(..., return_inverse=True)`.
fn class_ids(labels: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<usize>> {
    let np = labels.py().import("numpy")?;
    let arr = np.call_method1("asarray", (labels,))?;
    let ndim: usize = arr.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(PyValueError::new_err(format!(
            "labels has {ndim} dimensions; pass one label per leaf (a 1-D sequence)"
        )));
    }
    let len: usize = arr.len()?;
    if len != n {
        return Err(PyValueError::new_err(format!(
            "{len} labels for {n} leaves; give one class label per leaf"
        )));
    }
    let kwargs = pyo3::types::PyDict::new(labels.py());
    kwargs.set_item("return_inverse", true)?;
    let (_, inverse): (Bound<PyAny>, Bound<PyAny>) = np
        .getattr("unique")?
        .call((arr,), Some(&kwargs))?
        .extract()?;
    let ids: Vec<i64> = inverse
        .call_method1("astype", ("int64",))?
        .call_method1("reshape", (-1,))?
        .call_method0("tolist")?
        .extract()?;
    Ok(ids.into_iter().map(|i| i as usize).collect())
}

#[pymethods]
impl Tree {
    /// Parses Newick whose leaf labels are the integers `0..n`, of any arity, with optional
    /// branch lengths (then heights follow them; otherwise heights are cluster sizes).
    #[staticmethod]
    fn from_newick(text: &str) -> PyResult<Tree> {
        Hierarchy::from_newick(text)
            .map(Tree::from_hierarchy)
            .map_err(value_error)
    }

    /// A tree from `parents` (one int per node: leaves `0..n`, internal nodes `n..`, -1 for
    /// the root) and optional `heights` (one float per node; default: cluster sizes); lists or
    /// 1-D NumPy arrays, their lengths and memory checked before they are converted.
    #[staticmethod]
    #[pyo3(signature = (n_leaves, parents, heights = None))]
    fn from_parents(
        n_leaves: Int,
        parents: &Bound<'_, PyAny>,
        heights: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Tree> {
        let n_leaves = count("n_leaves", n_leaves, 1)?;
        let nodes = parents.len()?;
        let most = n_leaves.saturating_mul(2) - 1;
        if nodes > most || nodes < n_leaves {
            return Err(PyValueError::new_err(format!(
                "parents has {nodes} entries for {n_leaves} leaves; a tree over n leaves has n to 2n - 1 = {most} nodes"
            )));
        }
        if let Some(h) = heights {
            let got = h.len()?;
            if got != nodes {
                return Err(PyValueError::new_err(format!(
                    "heights has {got} entries for {nodes} nodes; give one height per node"
                )));
            }
        }
        check_memory(
            &format!("parents: a tree of {nodes} nodes"),
            nodes as f64 * NODE_BYTES,
            "pass a smaller tree",
        )?;
        let parents = int_vec(parents, "parents")?;
        let links: Vec<Option<usize>> = parents
            .iter()
            .enumerate()
            .map(|(v, &p)| match p {
                -1 => Ok(None),
                p if p >= 0 && (p as usize) < nodes => Ok(Some(p as usize)),
                p => Err(PyValueError::new_err(format!(
                    "node {v} has parent {p}, out of range for {nodes} nodes (-1 marks the root)"
                ))),
            })
            .collect::<PyResult<_>>()?;
        drop(parents);
        match heights.map(|h| float_vec(h, "heights")).transpose()? {
            Some(h) => Hierarchy::from_parents(n_leaves, links, h),
            None => Hierarchy::from_topology(n_leaves, links),
        }
        .map(Tree::from_hierarchy)
        .map_err(value_error)
    }

    /// Canonical Newick, children ordered by their lowest leaf, e.g. `((0,1),2);`; with
    /// `branch_lengths=True`, every node but the root carries `:length`, its parent's height
    /// minus its own, in plain decimals (`((0:2,1:2):1,2:3);` with cluster sizes as heights),
    /// which Newick readers such as Biopython's `Bio.Phylo` read; `Tree.from_newick` gives
    /// the heights back (to rounding). For other heights,
    /// `t.with_heights("cost", jet=jet).newick(branch_lengths=True)`.
    #[pyo3(signature = (branch_lengths = false))]
    fn newick(&self, branch_lengths: bool) -> String {
        if branch_lengths {
            linkage::newick_with_lengths(&self.inner, self.inner.heights())
        } else {
            self.inner.to_newick()
        }
    }

    /// The number of leaves.
    #[getter]
    fn n_leaves(&self) -> usize {
        self.inner.n_leaves()
    }

    /// Whether every internal node has two children.
    #[getter]
    fn is_binary(&self) -> bool {
        self.inner.is_binary()
    }

    /// Each node's parent as an int64 array (leaves `0..n`, internal nodes `n..`, -1 for the
    /// root).
    #[getter]
    fn parents<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let p: Vec<i64> = self
            .inner
            .parents()
            .iter()
            .map(|p| p.map_or(-1, |p| p as i64))
            .collect();
        PyArray1::from_vec(py, p)
    }

    /// Each node's height as a float64 array (leaves 0; cluster sizes for the trellis and
    /// search methods, merge times for the coalescent, 1 - t for the diffusion trees).
    #[getter]
    fn heights<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.inner.heights())
    }

    /// Every internal node's cluster as a sorted list of leaf indices, the lists sorted: a
    /// lazy sequence (`Clusters`) that makes each list when it is asked for, so that it takes
    /// memory linear in the leaves (the lists of a caterpillar over n leaves hold n²/2 leaves in
    /// all); `tolist()` makes them all at once.
    fn clusters(&self) -> Clusters {
        Clusters::of(&self.inner)
    }

    /// SciPy's `(n - 1) x 4` linkage matrix, so that
    /// `scipy.cluster.hierarchy.dendrogram(tree.to_linkage())` draws the tree: one row per
    /// merge, children before parents, rows sorted by height; a node with k children becomes
    /// k - 1 merges at its height. `heights` is what column 2 holds (see `with_heights`):
    /// "tree" (the tree's own heights, the default), "size" or "cost" (with `jet=` or
    /// `similarity=`, `energy=`, `beta=`).
    #[pyo3(signature = (heights = "tree", *, jet = None, similarity = None, energy = "dasgupta", beta = 1.0))]
    fn to_linkage<'py>(
        &self,
        py: Python<'py>,
        heights: &str,
        jet: Option<&Jet>,
        similarity: Option<&Bound<'_, PyAny>>,
        energy: &str,
        beta: f64,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let e = optional_energy(jet, similarity, energy, beta)?;
        let height =
            linkage::node_heights(&self.inner, &linkage::heights_of(heights, e.as_ref())?)?;
        let rows = linkage::linkage_rows(&self.inner, &height);
        if rows.is_empty() {
            return Ok(PyArray2::zeros(py, [0, 4], false));
        }
        PyArray2::from_vec2(py, &rows).map_err(value_error)
    }

    /// The same tree with other heights (leaves 0, never decreasing towards the root):
    /// "tree" (its own: cluster sizes for the trellis and search methods, merge times for the
    /// coalescent, 1 - t for the diffusion trees), "size" (cluster sizes), or "cost" under the
    /// energy of `jet=` or of `similarity=` (with `energy=`, `beta=`): a node's height is
    /// minus the log-likelihood of its subtree, -sum log psi over the merges at and below it,
    /// so the root's height is minus the tree's log-likelihood. "cost" needs a binary tree and
    /// refuses, naming the node, a merge whose log psi is positive or -inf (its node would sit
    /// below a child, or at infinity): non-monotone heights are never silently changed.
    #[pyo3(signature = (heights, *, jet = None, similarity = None, energy = "dasgupta", beta = 1.0))]
    fn with_heights(
        &self,
        heights: &str,
        jet: Option<&Jet>,
        similarity: Option<&Bound<'_, PyAny>>,
        energy: &str,
        beta: f64,
    ) -> PyResult<Tree> {
        let e = optional_energy(jet, similarity, energy, beta)?;
        let height =
            linkage::node_heights(&self.inner, &linkage::heights_of(heights, e.as_ref())?)?;
        Hierarchy::from_parents(self.inner.n_leaves(), self.inner.parents().to_vec(), height)
            .map(Tree::from_hierarchy)
            .map_err(value_error)
    }

    /// The tree of SciPy's `(n - 1) x 4` linkage matrix `Z` (as `scipy.cluster.hierarchy.linkage`
    /// returns): leaves `0..n`, row k creating node n + k at height `Z[k, 2]`, so that
    /// `Tree.from_linkage(t.to_linkage())` is `t` with the same heights. Checked row by row: 4
    /// columns, integer cluster ids each merged once and made by an earlier row, counts equal
    /// to the merged clusters' sizes, finite heights >= 0 (a height below a child's, as
    /// centroid and median linkage can give, is raised to it); a one-line `ValueError` names
    /// the row and the problem. The tree is binary unless `collapse=True`, which joins a merge
    /// into the merge above it when both sit at the same height, so that the k - 1 rows
    /// `to_linkage` writes for a node with k children (a diffusion tree's) become that node
    /// again.
    #[staticmethod]
    #[pyo3(name = "from_linkage", signature = (z, collapse = false))]
    fn from_linkage_matrix(z: &Bound<'_, PyAny>, collapse: bool) -> PyResult<Tree> {
        let a = float_matrix(z, "Z", |r, c| {
            if c != 4 {
                return Err(PyValueError::new_err(format!(
                    "Z has shape ({r}, {c}); pass SciPy's (n - 1) x 4 linkage matrix"
                )));
            }
            Ok(())
        })?;
        let rows: Vec<[f64; 4]> = (a.as_array().outer_iter())
            .map(|r| [r[0], r[1], r[2], r[3]])
            .collect();
        linkage::from_linkage_rows(&rows, collapse).map(Tree::from_hierarchy)
    }

    /// The tree's log-likelihood under `jet`'s Ginkgo model (the one canonical scorer; the
    /// tree must be binary).
    fn log_likelihood(&self, jet: &Jet) -> PyResult<f64> {
        let m = jet.inner.model().map_err(value_error)?;
        let t = self.binary()?;
        if t.n_leaves() != jet.inner.leaves.len() {
            return Err(PyValueError::new_err(format!(
                "the tree has {} leaves and the jet {}; score a tree over the jet's leaves",
                t.n_leaves(),
                jet.inner.leaves.len()
            )));
        }
        Ok(t.log_likelihood(&m))
    }

    /// Dendrogram purity against one class label per leaf (1 when every class is a subtree).
    fn dendrogram_purity(&self, labels: &Bound<'_, PyAny>) -> PyResult<f64> {
        let ids = class_ids(labels, self.inner.n_leaves())?;
        self.inner.dendrogram_purity(&ids).map_err(value_error)
    }

    /// Subtree score against one class label per leaf: pure internal nodes over n - C.
    fn subtree_score(&self, labels: &Bound<'_, PyAny>) -> PyResult<f64> {
        let ids = class_ids(labels, self.inner.n_leaves())?;
        self.inner.subtree_score(&ids).map_err(value_error)
    }

    /// Area under the adjusted-Rand-index curve over the cut counts 1..n, divided by n - 1.
    fn ari_auc(&self, labels: &Bound<'_, PyAny>) -> PyResult<f64> {
        let ids = class_ids(labels, self.inner.n_leaves())?;
        self.inner.ari_auc(&ids).map_err(value_error)
    }

    /// Dasgupta's cost `sum_{i<j} w_ij |leaves(lca(i, j))|` of an `(n, n)` similarity array.
    fn dasgupta_cost(&self, similarity: &Bound<'_, PyAny>) -> PyResult<f64> {
        let n = self.inner.n_leaves();
        let w = float_matrix(similarity, "similarity", |r, c| {
            if [r, c] != [n, n] {
                return Err(PyValueError::new_err(format!(
                    "similarity has shape ({r}, {c}) for a tree of {n} leaves; pass an (n, n) array"
                )));
            }
            Ok(())
        })?;
        let flat: Vec<f64> = w.as_array().iter().copied().collect();
        self.inner.dasgupta_cost(&flat).map_err(value_error)
    }

    fn __repr__(&self) -> String {
        format!("Tree({:?})", self.inner.to_newick())
    }

    /// Same leaves and same clusters (heights aside), compared through the canonical parent
    /// arrays: O(n log n) time and O(n) memory.
    fn __eq__(&self, other: &Tree) -> bool {
        self.inner.n_leaves() == other.inner.n_leaves()
            && canonical(&self.inner) == canonical(&other.inner)
    }

    /// A hash of the leaves and clusters (equal trees hash equal), so that trees can be keys
    /// of dicts and counted by `collections.Counter`: of the canonical parent array, O(n log n).
    fn __hash__(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (self.inner.n_leaves(), canonical(&self.inner)).hash(&mut h);
        h.finish()
    }

    /// Pickles as `Tree.from_parents(n_leaves, parents, heights)`: the same nodes and heights.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let from_parents = py.get_type::<Tree>().getattr("from_parents")?;
        let parents: Vec<i64> = (self.inner.parents().iter())
            .map(|p| p.map_or(-1, |p| p as i64))
            .collect();
        let args = (
            self.inner.n_leaves(),
            parents,
            self.inner.heights().to_vec(),
        );
        Ok((from_parents, args.into_pyobject(py)?))
    }
}

/// Bytes per node of `Tree.from_parents`: the converted parents (8), the links (16), the
/// heights (8), the `Hierarchy` (48: parent, height, children and post-order) and its making.
const NODE_BYTES: f64 = 128.0;

/// Whether `obj` is a NumPy array, and its dtype's kind.
fn numpy_kind(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<String>> {
    let np = obj.py().import("numpy")?;
    if !obj.is_instance(&np.getattr("ndarray")?)? {
        return Ok(None);
    }
    let ndim: usize = obj.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(PyValueError::new_err(format!(
            "{what} has {ndim} dimensions; pass one value per node (a 1-D sequence)"
        )));
    }
    Ok(Some(obj.getattr("dtype")?.getattr("kind")?.extract()?))
}

/// A 1-D sequence of integers (a list, or a NumPy array of an integer dtype) as `i64`s.
fn int_vec(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<i64>> {
    match numpy_kind(obj, what)?.as_deref() {
        None => obj.extract(),
        Some("i" | "u") => {
            let a = obj.call_method1("astype", ("int64",))?;
            let a: PyReadonlyArray1<'_, i64> = a.extract()?;
            let mut v = crate::vec_with_capacity(a.len(), what)?;
            v.extend(a.as_array().iter().copied());
            Ok(v)
        }
        Some(_) => Err(PyTypeError::new_err(format!(
            "{what} must be integers (node ids, -1 for the root)"
        ))),
    }
}

/// A 1-D sequence of real numbers (a list, or a NumPy array of a real dtype) as `f64`s.
fn float_vec(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<f64>> {
    match numpy_kind(obj, what)?.as_deref() {
        None => obj.extract(),
        Some("b" | "i" | "u" | "f") => {
            let a = obj.call_method1("astype", ("float64",))?;
            let a: PyReadonlyArray1<'_, f64> = a.extract()?;
            let mut v = crate::vec_with_capacity(a.len(), what)?;
            v.extend(a.as_array().iter().copied());
            Ok(v)
        }
        Some(_) => Err(PyTypeError::new_err(format!("{what} must be real numbers"))),
    }
}
