//! Conversions between [`Hierarchy`] and the crate's other tree types and kodama dendrograms.

use super::{Hierarchy, HierarchyError};
use crate::coalescent::history::History;
use crate::pydt::PydtTree;
use crate::subset::Subset;
use crate::tree::{Node, Tree};

impl Hierarchy {
    /// The hierarchy of a binary [`Tree`]; heights are cluster sizes (the tree has none).
    /// Internal nodes are numbered `n..` in post-order (children before parents). Errors when
    /// the tree's leaves are not exactly `0..n` ([`HierarchyError::MissingLeaf`]).
    pub fn from_tree(tree: &Tree) -> Result<Hierarchy, HierarchyError> {
        let leaves = tree.leaves();
        let n = leaves.len();
        if leaves != Subset::full(n) {
            let missing = (0..n).find(|&i| !leaves.contains(i)).unwrap_or(n);
            return Err(HierarchyError::MissingLeaf { n, missing });
        }
        let nodes = tree.nodes();
        // Arena post-order (arenas from `Tree::from_arena` need not list children first).
        let mut order = Vec::with_capacity(nodes.len());
        let mut stack = vec![tree.root()];
        while let Some(a) = stack.pop() {
            order.push(a);
            if let Node::Internal(l, r) = nodes[a] {
                stack.extend([l, r]);
            }
        }
        order.reverse();
        let mut id = vec![0usize; nodes.len()];
        let mut next = n;
        for &a in &order {
            id[a] = match nodes[a] {
                Node::Leaf(i) => i,
                Node::Internal(..) => {
                    next += 1;
                    next - 1
                }
            };
        }
        let mut parent = vec![None; next];
        for &a in &order {
            if let Node::Internal(l, r) = nodes[a] {
                parent[id[l]] = Some(id[a]);
                parent[id[r]] = Some(id[a]);
            }
        }
        Hierarchy::from_topology(n, parent)
    }

    /// The binary [`Tree`] of this hierarchy (arena index = node id, heights dropped). Errors
    /// for more than 64 leaves ([`HierarchyError::TooManyLeaves`]) and for a node with more
    /// than two children ([`HierarchyError::NotBinary`]).
    pub fn to_tree(&self) -> Result<Tree, HierarchyError> {
        if self.n > Subset::MAX_LEAVES {
            return Err(HierarchyError::TooManyLeaves { n: self.n });
        }
        let mut nodes = Vec::with_capacity(self.n_nodes());
        for v in 0..self.n_nodes() {
            nodes.push(match *self.children(v) {
                [] => Node::Leaf(v),
                [l, r] => Node::Internal(l, r),
                ref kids => {
                    return Err(HierarchyError::NotBinary {
                        node: v,
                        children: kids.len(),
                    })
                }
            });
        }
        Ok(Tree::from_arena(nodes, self.root)?)
    }

    /// The hierarchy of a coalescent [`History`]: the same node ids (leaves `0..n`, merge `k`
    /// (0-based) is node `n + k`) and heights = merge times. Errors for an invalid history.
    pub fn from_history(h: &History) -> Result<Hierarchy, HierarchyError> {
        let parent = h.parents()?;
        Hierarchy::from_parents(h.n, parent, h.cluster_times())
    }

    /// The hierarchy of a diffusion tree's attached nodes (free arena slots are dropped).
    ///
    /// Heights are `1 − t = e^{−s}`, the time before the leaves, so leaves are at 0 and the
    /// root highest as [`Hierarchy`] requires (the divergence time `t` itself grows from the
    /// root to the leaves); `e^{−s}` keeps full precision near `t = 1`. Internal nodes are
    /// numbered `n..` from the latest divergence to the root, which is last: opening them by
    /// decreasing height and then decreasing id (as [`Hierarchy::ari_points`] does) follows
    /// `pydt::metrics::ari_points`' order (increasing time, then increasing arena index).
    /// Errors unless the tree passes [`PydtTree::validate`] (every leaf attached).
    pub fn from_pydt(t: &PydtTree) -> Result<Hierarchy, HierarchyError> {
        t.validate()?;
        let n = t.n_leaves();
        let mut internal = t.internal_nodes();
        internal.sort_by(|&a, &b| t.s(a).total_cmp(&t.s(b)).then(a.cmp(&b)));
        let m = internal.len();
        let mut id = vec![usize::MAX; t.capacity()];
        (0..n).for_each(|i| id[i] = i);
        for (rank, &v) in internal.iter().enumerate() {
            id[v] = n + m - 1 - rank;
        }
        let mut parent = vec![None; n + m];
        let mut height = vec![0.0; n + m];
        for v in (0..n).chain(internal.iter().copied()) {
            let p = t.node(v).parent;
            parent[id[v]] = (p != crate::pydt::tree::NONE).then(|| id[p]);
            height[id[v]] = (-t.s(v)).exp();
        }
        Hierarchy::from_parents(n, parent, height)
    }

    /// The hierarchy of a kodama (or SciPy-style) linkage dendrogram: leaves `0..n`, step `k`
    /// (0-based) creates node `n + k`, heights are the steps' dissimilarities, raised where
    /// needed to the children's heights (centroid and median linkage can merge below an
    /// earlier merge; average, single, complete and Ward never do).
    ///
    /// Errors for no observations, fewer than `n − 1` steps, a step that merges a cluster with
    /// itself, an unknown or already merged cluster, a size that is not the sum of the merged
    /// clusters' sizes, or a NaN or infinite dissimilarity.
    pub fn from_linkage<T: kodama::Float>(
        d: &kodama::Dendrogram<T>,
    ) -> Result<Hierarchy, HierarchyError> {
        let n = d.observations();
        if n == 0 {
            return Err(HierarchyError::NoLeaves);
        }
        if d.len() != n - 1 {
            return Err(HierarchyError::IncompleteLinkage { steps: d.len(), n });
        }
        let total = 2 * n - 1;
        let mut parent = vec![None; total];
        let mut height = vec![0.0; total];
        let mut size = vec![1usize; total];
        for (k, s) in d.steps().iter().enumerate() {
            let bad = |reason: String| Err(HierarchyError::Linkage { step: k, reason });
            let id = n + k;
            let (a, b) = (s.cluster1, s.cluster2);
            if a == b {
                return bad(format!("merges cluster {a} with itself"));
            }
            for c in [a, b] {
                if c >= id {
                    return bad(format!(
                        "merges cluster {c}, which does not exist before step {k} (clusters 0..{id})"
                    ));
                }
                if let Some(p) = parent[c] {
                    return bad(format!(
                        "merges cluster {c}, already merged at step {}",
                        p - n
                    ));
                }
                parent[c] = Some(id);
            }
            if s.size != size[a] + size[b] {
                return bad(format!(
                    "size {} but the merged clusters hold {} points",
                    s.size,
                    size[a] + size[b]
                ));
            }
            let dis = s.dissimilarity.to_f64();
            if !dis.is_finite() {
                return bad(format!("dissimilarity {dis} is not finite"));
            }
            size[id] = s.size;
            height[id] = dis.max(height[a]).max(height[b]);
        }
        Hierarchy::from_parents(n, parent, height)
    }
}

impl TryFrom<&Tree> for Hierarchy {
    type Error = HierarchyError;
    /// [`Hierarchy::from_tree`].
    fn try_from(t: &Tree) -> Result<Self, HierarchyError> {
        Hierarchy::from_tree(t)
    }
}

impl TryFrom<&History> for Hierarchy {
    type Error = HierarchyError;
    /// [`Hierarchy::from_history`].
    fn try_from(h: &History) -> Result<Self, HierarchyError> {
        Hierarchy::from_history(h)
    }
}

impl TryFrom<&PydtTree> for Hierarchy {
    type Error = HierarchyError;
    /// [`Hierarchy::from_pydt`].
    fn try_from(t: &PydtTree) -> Result<Self, HierarchyError> {
        Hierarchy::from_pydt(t)
    }
}

impl TryFrom<&Hierarchy> for Tree {
    type Error = HierarchyError;
    /// [`Hierarchy::to_tree`].
    fn try_from(h: &Hierarchy) -> Result<Self, HierarchyError> {
        h.to_tree()
    }
}
