//! [`Hierarchy`]: one rooted tree type for every method, of any size and any arity, with
//! conversions from the crate's other tree types and the shared clustering metrics.
//!
//! [`crate::tree::Tree`] is binary and stops at 64 leaves (its clusters are `u64` masks); the
//! coalescent's [`crate::coalescent::history::History`] is binary and ranked; the diffusion
//! trees' [`crate::pydt::PydtTree`] is multifurcating with times in (0, 1) and free arena slots.
//! A benchmark comparing all of them on hundreds of points needs one plain representation:
//!
//! * **Nodes.** Leaves are nodes `0..n`, in data order; internal nodes are `n..n_nodes`. Every
//!   internal node has at least two children and there is exactly one root (a leaf only when
//!   `n = 1`).
//! * **Storage.** Parent links (`None` for the root) and one height per node are the whole state
//!   (and all that serde writes); children lists (in increasing id order) and a post-order are
//!   derived from them when a hierarchy is built or deserialised, after validation.
//! * **Heights.** Leaves are at height 0 and heights never decrease towards the root (ties
//!   allowed). Sources without heights use cluster sizes (the number of leaves below); the
//!   coalescent uses merge times, linkage its merge dissimilarities and the diffusion trees
//!   `1 − t` (time before the leaves).
//!
//! Conversions live in `convert` ([`Hierarchy::from_tree`], [`Hierarchy::to_tree`],
//! [`Hierarchy::from_history`], [`Hierarchy::from_pydt`], [`Hierarchy::from_linkage`]) and the
//! metrics in `metrics` ([`Hierarchy::dendrogram_purity`], [`Hierarchy::subtree_score`],
//! [`Hierarchy::ari_points`], [`Hierarchy::ari_auc`], [`Hierarchy::dasgupta_cost`]).

mod convert;
mod copies;
mod metrics;
mod newick;
pub use copies::distinct_rows;
#[cfg(test)]
pub(crate) mod tests;

use crate::coalescent::history::HistoryError;
use crate::pydt::PydtError;
use crate::tree::TreeError;
use serde::{Deserialize, Serialize};

/// Errors from building, converting or scoring a [`Hierarchy`] (one line each, naming the
/// problem).
#[derive(Debug, thiserror::Error)]
pub enum HierarchyError {
    /// `n = 0`.
    #[error("a hierarchy needs at least one leaf (n = 0)")]
    NoLeaves,
    /// Fewer nodes than leaves.
    #[error(
        "{nodes} nodes for {n} leaves; nodes 0..n are the leaves, so give at least n parent links"
    )]
    TooFewNodes {
        /// Number of leaves.
        n: usize,
        /// Number of nodes given.
        nodes: usize,
    },
    /// Two inputs that must have the same length do not.
    #[error("`{what}` has {got} entries, expected {expected}")]
    Length {
        /// Which input.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Length given.
        got: usize,
    },
    /// A parent index past the last node.
    #[error("node {node} has parent {parent}, out of range for {nodes} nodes")]
    ParentOutOfRange {
        /// The child.
        node: usize,
        /// Its parent link.
        parent: usize,
        /// Number of nodes.
        nodes: usize,
    },
    /// A leaf used as a parent.
    #[error("node {node} has parent {parent}, which is a leaf; only nodes n.. = {n}.. can have children")]
    LeafParent {
        /// The child.
        node: usize,
        /// Its parent link (a leaf).
        parent: usize,
        /// Number of leaves.
        n: usize,
    },
    /// Every node has a parent.
    #[error("no root: every node has a parent, so the parent links form a cycle")]
    NoRoot,
    /// More than one node without a parent.
    #[error("two roots, nodes {first} and {second}; exactly one node may have no parent")]
    TwoRoots {
        /// The first parentless node.
        first: usize,
        /// The second.
        second: usize,
    },
    /// A node not below the root.
    #[error("parent links form a cycle through node {node}, so it is not below the root {root}")]
    Cycle {
        /// A node on the cycle.
        node: usize,
        /// The root.
        root: usize,
    },
    /// An internal node with fewer than two children.
    #[error("internal node {node} has {children} child(ren); internal nodes need at least 2")]
    Unary {
        /// The node.
        node: usize,
        /// Its number of children.
        children: usize,
    },
    /// A NaN or infinite height.
    #[error("node {node} has height {height}; heights must be finite")]
    NonFiniteHeight {
        /// The node.
        node: usize,
        /// Its height.
        height: f64,
    },
    /// A leaf whose height is not 0.
    #[error("leaf {node} has height {height}; leaves sit at height 0")]
    LeafHeight {
        /// The leaf.
        node: usize,
        /// Its height.
        height: f64,
    },
    /// A node above its parent.
    #[error("node {node} at height {height} is above its parent {parent} at height {parent_height}; heights must not decrease towards the root")]
    HeightOrder {
        /// The child.
        node: usize,
        /// Its height.
        height: f64,
        /// Its parent.
        parent: usize,
        /// The parent's height.
        parent_height: f64,
    },
    /// [`Hierarchy::to_tree`] on a multifurcating hierarchy.
    #[error("cannot convert to a binary Tree: node {node} has {children} children")]
    NotBinary {
        /// The node.
        node: usize,
        /// Its number of children.
        children: usize,
    },
    /// [`Hierarchy::to_tree`] on more than 64 leaves.
    #[error("cannot convert to a Tree: {n} leaves, but Tree holds at most 64 (u64 clusters)")]
    TooManyLeaves {
        /// Number of leaves.
        n: usize,
    },
    /// [`Hierarchy::from_tree`] on a tree whose leaves are not `0..n`.
    #[error("the tree's {n} leaves are not 0..{n}: leaf {missing} is missing")]
    MissingLeaf {
        /// Number of leaves of the tree.
        n: usize,
        /// The smallest index in `0..n` that is not a leaf.
        missing: usize,
    },
    /// An incomplete linkage dendrogram.
    #[error("the dendrogram has {steps} steps for {n} observations; a complete one has n - 1")]
    IncompleteLinkage {
        /// Steps given.
        steps: usize,
        /// Observations.
        n: usize,
    },
    /// An invalid linkage step.
    #[error("linkage step {step} (0-based): {reason}")]
    Linkage {
        /// The step.
        step: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// Copies of points that do not match the hierarchy ([`Hierarchy::with_copies`]).
    #[error("copies of points: {0}")]
    Copies(String),
    /// Labels of the wrong length.
    #[error("{got} labels for {n} leaves; give one class label per leaf")]
    Labels {
        /// Number of leaves.
        n: usize,
        /// Labels given.
        got: usize,
    },
    /// A similarity matrix of the wrong size.
    #[error("{got} similarity entries for {n} leaves; give a full n x n row-major matrix ({expected} entries)")]
    Weights {
        /// Number of leaves.
        n: usize,
        /// n².
        expected: usize,
        /// Entries given.
        got: usize,
    },
    /// A NaN or infinite similarity off the diagonal.
    #[error("similarity ({i}, {j}) is {value}; every similarity must be finite")]
    NonFiniteWeight {
        /// Row.
        i: usize,
        /// Column.
        j: usize,
        /// The value.
        value: f64,
    },
    /// An asymmetric similarity matrix.
    #[error(
        "similarities ({i}, {j}) = {a} and ({j}, {i}) = {b} differ; the matrix must be symmetric"
    )]
    Asymmetric {
        /// Row.
        i: usize,
        /// Column.
        j: usize,
        /// w_ij.
        a: f64,
        /// w_ji.
        b: f64,
    },
    /// Newick text that [`Hierarchy::from_newick`] cannot read.
    #[error("Newick: {0}")]
    Newick(String),
    /// A metric that is 0/0 for this input.
    #[error("metric undefined: {0}")]
    Undefined(&'static str),
    /// An invalid coalescent history.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// An invalid diffusion tree.
    #[error(transparent)]
    Pydt(#[from] PydtError),
    /// A [`crate::tree::Tree`] error.
    #[error(transparent)]
    Tree(#[from] TreeError),
}

/// A rooted tree over leaves `0..n` whose internal nodes have two or more children, with a
/// height per node (see the module documentation for the conventions).
///
/// Serialised as `{"n": .., "parent": [..], "height": [..]}`; deserialising validates like
/// [`Hierarchy::from_parents`]. `==` compares node ids too; compare [`Hierarchy::clusters`] to
/// ask whether two hierarchies have the same topology.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawHierarchy")]
pub struct Hierarchy {
    n: usize,
    parent: Vec<Option<usize>>,
    height: Vec<f64>,
    /// Children of node v are `child_list[child_start[v]..child_start[v + 1]]`.
    #[serde(skip)]
    child_start: Vec<usize>,
    #[serde(skip)]
    child_list: Vec<usize>,
    #[serde(skip)]
    root: usize,
    /// Every node after all of its descendants; the root last.
    #[serde(skip)]
    postorder: Vec<usize>,
}

/// The serialised fields of a [`Hierarchy`], validated on the way in.
#[derive(Deserialize)]
struct RawHierarchy {
    n: usize,
    parent: Vec<Option<usize>>,
    height: Vec<f64>,
}

impl TryFrom<RawHierarchy> for Hierarchy {
    type Error = HierarchyError;
    fn try_from(r: RawHierarchy) -> Result<Self, HierarchyError> {
        Hierarchy::from_parents(r.n, r.parent, r.height)
    }
}

impl Hierarchy {
    /// Builds and validates a hierarchy from parent links (`None` for the root) and heights,
    /// both indexed by node: leaves `0..n`, internal nodes `n..parent.len()`.
    ///
    /// Errors unless `n >= 1`, both vectors have the same length (at least `n`), there is
    /// exactly one root, every parent is an internal node in range, every node is below the
    /// root (no cycles), every internal node has at least two children, leaves have height 0,
    /// heights are finite and no node is above its parent.
    pub fn from_parents(
        n: usize,
        parent: Vec<Option<usize>>,
        height: Vec<f64>,
    ) -> Result<Hierarchy, HierarchyError> {
        use HierarchyError as E;
        let total = parent.len();
        if n == 0 {
            return Err(E::NoLeaves);
        }
        if total < n {
            return Err(E::TooFewNodes { n, nodes: total });
        }
        if height.len() != total {
            return Err(E::Length {
                what: "height",
                expected: total,
                got: height.len(),
            });
        }
        let mut root = None;
        let mut n_children = vec![0usize; total];
        for (v, &p) in parent.iter().enumerate() {
            match p {
                None => {
                    if let Some(first) = root.replace(v) {
                        return Err(E::TwoRoots { first, second: v });
                    }
                }
                Some(p) if p >= total => {
                    return Err(E::ParentOutOfRange {
                        node: v,
                        parent: p,
                        nodes: total,
                    })
                }
                Some(p) if p < n => {
                    return Err(E::LeafParent {
                        node: v,
                        parent: p,
                        n,
                    })
                }
                Some(p) => n_children[p] += 1,
            }
        }
        let root = root.ok_or(E::NoRoot)?;
        // Children lists (CSR), each in increasing id order.
        let mut child_start = Vec::with_capacity(total + 1);
        child_start.push(0);
        for &k in &n_children {
            child_start.push(child_start.last().copied().unwrap_or(0) + k);
        }
        let mut fill = child_start[..total].to_vec();
        let mut child_list = vec![0usize; child_start[total]];
        for (v, p) in parent.iter().enumerate() {
            if let Some(p) = *p {
                child_list[fill[p]] = v;
                fill[p] += 1;
            }
        }
        // Post-order from the root: every node has one parent, so the walk visits each node
        // at most once; nodes it misses hang below a cycle.
        let mut postorder = Vec::with_capacity(total);
        let mut stack = vec![root];
        while let Some(v) = stack.pop() {
            postorder.push(v);
            stack.extend(&child_list[child_start[v]..child_start[v + 1]]);
        }
        if postorder.len() != total {
            let mut reached = vec![false; total];
            postorder.iter().for_each(|&v| reached[v] = true);
            // Follow parents from a missed node until a node repeats: that node is on the cycle.
            let mut node = reached.iter().position(|&r| !r).unwrap_or(0);
            while !std::mem::replace(&mut reached[node], true) {
                node = parent[node].unwrap_or(node);
            }
            return Err(E::Cycle { node, root });
        }
        postorder.reverse();
        for (v, &k) in n_children.iter().enumerate().skip(n) {
            if k < 2 {
                return Err(E::Unary {
                    node: v,
                    children: k,
                });
            }
        }
        for (v, &h) in height.iter().enumerate() {
            if !h.is_finite() {
                return Err(E::NonFiniteHeight { node: v, height: h });
            }
            if v < n && h != 0.0 {
                return Err(E::LeafHeight { node: v, height: h });
            }
        }
        for (v, p) in parent.iter().enumerate() {
            if let Some(p) = *p {
                if height[v] > height[p] {
                    return Err(E::HeightOrder {
                        node: v,
                        height: height[v],
                        parent: p,
                        parent_height: height[p],
                    });
                }
            }
        }
        Ok(Hierarchy {
            n,
            parent,
            height,
            child_start,
            child_list,
            root,
            postorder,
        })
    }

    /// [`Hierarchy::from_parents`] for a topology without heights: every internal node's
    /// height is its cluster size (the number of leaves below it), leaves 0.
    pub fn from_topology(
        n: usize,
        parent: Vec<Option<usize>>,
    ) -> Result<Hierarchy, HierarchyError> {
        let total = parent.len();
        // Validate the links first with placeholder heights that always satisfy the order.
        let placeholder: Vec<f64> = (0..total).map(|v| if v < n { 0.0 } else { 1.0 }).collect();
        let mut h = Hierarchy::from_parents(n, parent, placeholder)?;
        h.height = h.cluster_sizes().into_iter().map(|s| s as f64).collect();
        h.height[..n].iter_mut().for_each(|x| *x = 0.0);
        Ok(h)
    }

    /// Number of leaves `n`.
    pub fn n_leaves(&self) -> usize {
        self.n
    }

    /// Number of nodes (leaves and internal nodes).
    pub fn n_nodes(&self) -> usize {
        self.parent.len()
    }

    /// Number of internal nodes.
    pub fn n_internal(&self) -> usize {
        self.parent.len() - self.n
    }

    /// The root (a leaf only when `n = 1`).
    pub fn root(&self) -> usize {
        self.root
    }

    /// Whether `v` is a leaf (`v < n`).
    pub fn is_leaf(&self, v: usize) -> bool {
        v < self.n
    }

    /// The parent of `v` (`None` for the root).
    ///
    /// # Panics
    /// If `v >= n_nodes()`.
    pub fn parent(&self, v: usize) -> Option<usize> {
        self.parent[v]
    }

    /// Parent links of every node.
    pub fn parents(&self) -> &[Option<usize>] {
        &self.parent
    }

    /// The height of `v`.
    ///
    /// # Panics
    /// If `v >= n_nodes()`.
    pub fn height(&self, v: usize) -> f64 {
        self.height[v]
    }

    /// Heights of every node.
    pub fn heights(&self) -> &[f64] {
        &self.height
    }

    /// The children of `v`, in increasing id order (empty for a leaf).
    ///
    /// # Panics
    /// If `v >= n_nodes()`.
    pub fn children(&self, v: usize) -> &[usize] {
        &self.child_list[self.child_start[v]..self.child_start[v + 1]]
    }

    /// Every node, each after all of its descendants (the root last).
    pub fn postorder(&self) -> &[usize] {
        &self.postorder
    }

    /// Whether every internal node has exactly two children.
    pub fn is_binary(&self) -> bool {
        (self.n..self.n_nodes()).all(|v| self.children(v).len() == 2)
    }

    /// The number of leaves below every node (1 for a leaf), indexed by node.
    pub fn cluster_sizes(&self) -> Vec<usize> {
        let mut size = vec![1usize; self.n_nodes()];
        for &v in &self.postorder {
            if v >= self.n {
                size[v] = self.children(v).iter().map(|&c| size[c]).sum();
            }
        }
        size
    }

    /// The sorted leaf list of every internal node, the lists sorted: the topology as a
    /// canonical value (the format of [`crate::pydt::PydtTree::clusters`]). O(n · depth).
    pub fn clusters(&self) -> Vec<Vec<usize>> {
        let mut below: Vec<Vec<usize>> = vec![Vec::new(); self.n_nodes()];
        let mut out = Vec::with_capacity(self.n_internal());
        for &v in &self.postorder {
            if v < self.n {
                below[v] = vec![v];
                continue;
            }
            let mut all: Vec<usize> = self
                .children(v)
                .iter()
                .flat_map(|&c| below[c].iter().copied())
                .collect();
            all.sort_unstable();
            out.push(all.clone());
            below[v] = all;
        }
        out.sort();
        out
    }

    /// Newick with integer leaf labels and no branch lengths, children ordered by their lowest
    /// leaf, e.g. `((0,1,2),3);`. On binary trees it is [`crate::tree::Tree::to_newick`].
    pub fn to_newick(&self) -> String {
        self.to_newick_with(|i| i.to_string())
    }

    /// [`Hierarchy::to_newick`] with leaf `i` written as `name(i)` (the caller quotes or
    /// escapes names that contain Newick punctuation).
    pub fn to_newick_with(&self, name: impl Fn(usize) -> String) -> String {
        let mut lowest: Vec<usize> = (0..self.n_nodes()).collect();
        for &v in &self.postorder {
            if v >= self.n {
                lowest[v] = self
                    .children(v)
                    .iter()
                    .map(|&c| lowest[c])
                    .min()
                    .unwrap_or(v);
            }
        }
        let sorted_children = |v: usize| {
            let mut c = self.children(v).to_vec();
            c.sort_by_key(|&c| lowest[c]);
            c
        };
        // Iterative, so deep trees (caterpillars over many leaves) cannot overflow the stack.
        let mut out = String::new();
        let mut stack: Vec<(Vec<usize>, usize)> = Vec::new();
        let mut next = Some(self.root);
        loop {
            if let Some(v) = next.take() {
                if v < self.n {
                    out.push_str(&name(v));
                } else {
                    out.push('(');
                    stack.push((sorted_children(v), 0));
                }
            }
            let Some((kids, k)) = stack.last_mut() else {
                break;
            };
            if *k < kids.len() {
                if *k > 0 {
                    out.push(',');
                }
                next = Some(kids[*k]);
                *k += 1;
            } else {
                out.push(')');
                stack.pop();
            }
        }
        out.push(';');
        out
    }
}
