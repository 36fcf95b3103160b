//! [`Tree`]: a binary hierarchy over leaves `0..N`, with Newick I/O and a canonical form.
//!
//! A tree stores only its topology; every number (log-likelihood, cost) is recomputed from a
//! model. Two trees are equal when they have the same set of clusters ([`Tree::clusters`]),
//! whatever the order of children; [`Tree::to_newick`] writes the canonical form (children ordered
//! by their lowest leaf), so equal trees print the same string.

use crate::model::SplitModel;
use crate::subset::Subset;
use std::fmt;

/// One node of a [`Tree`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    /// A leaf with its index in `0..N`.
    Leaf(usize),
    /// An internal node with the arena indices of its two children.
    Internal(usize, usize),
}

/// A rooted binary tree whose leaves are distinct indices (an arena of [`Node`]s).
#[derive(Clone, Debug)]
pub struct Tree {
    nodes: Vec<Node>,
    root: usize,
}

/// Errors from parsing or building trees.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    /// Malformed Newick text.
    #[error("malformed Newick at byte {pos}: {msg}")]
    Newick {
        /// Byte offset of the problem.
        pos: usize,
        /// What is wrong.
        msg: String,
    },
    /// A nested-list tree that is not binary or has bad leaf labels.
    #[error("invalid tree: {0}")]
    Invalid(String),
}

impl Tree {
    /// A tree that is a single leaf.
    ///
    /// # Panics
    /// If `i >= 64`: leaves are indices into a 64-bit [`Subset`] (a type-level limit, like
    /// [`Subset::singleton`]).
    pub fn leaf(i: usize) -> Tree {
        assert!(
            i < Subset::MAX_LEAVES,
            "leaf index {i} is not below 64 (clusters are 64-bit masks)"
        );
        Tree {
            nodes: vec![Node::Leaf(i)],
            root: 0,
        }
    }

    /// The tree whose root has children `a` and `b`; errors if they share a leaf.
    pub fn join(a: Tree, b: Tree) -> Result<Tree, TreeError> {
        let shared = a.leaves().intersection(b.leaves());
        if let Some(i) = shared.lowest() {
            return Err(TreeError::Invalid(format!(
                "cannot join two subtrees that share leaf {i}; every leaf must appear once"
            )));
        }
        Ok(Tree::join_disjoint(a, b))
    }

    /// [`Tree::join`] for subtrees known to be disjoint (the search algorithms' merges).
    pub(crate) fn join_disjoint(a: Tree, b: Tree) -> Tree {
        let mut nodes = a.nodes;
        let offset = nodes.len();
        nodes.extend(b.nodes.into_iter().map(|n| match n {
            Node::Leaf(i) => Node::Leaf(i),
            Node::Internal(l, r) => Node::Internal(l + offset, r + offset),
        }));
        let root = nodes.len();
        nodes.push(Node::Internal(a.root, b.root + offset));
        Tree { nodes, root }
    }

    /// Builds the tree over `root` by asking `split` for the two children of every cluster with
    /// more than one leaf (as a dynamic programme's back-pointers do). Errors for an empty
    /// `root` and when `split` returns anything but two non-empty disjoint parts of its cluster.
    pub fn from_splits(
        root: Subset,
        mut split: impl FnMut(Subset) -> (Subset, Subset),
    ) -> Result<Tree, TreeError> {
        if root.is_empty() {
            return Err(TreeError::Invalid(
                "a tree needs at least one leaf; pass a non-empty root cluster".into(),
            ));
        }
        let mut bad = None;
        let tree = Tree::from_splits_trusted(root, |s| {
            let (a, b) = split(s);
            if a.union(b) == s && a.is_disjoint(b) && !a.is_empty() && !b.is_empty() {
                (a, b)
            } else {
                bad.get_or_insert((s, a, b));
                // Carry on with a valid split so the recursion ends; the result is discarded.
                let low = s.lowest_bit();
                (low, s.minus(low))
            }
        });
        match bad {
            None => Ok(tree),
            Some((s, a, b)) => Err(TreeError::Invalid(format!(
                "split of {s} into {a} and {b} is not two non-empty disjoint parts of it"
            ))),
        }
    }

    /// [`Tree::from_splits`] for callbacks that always return a valid split of a non-empty
    /// `root` (back-pointers of the algorithms in this crate).
    pub(crate) fn from_splits_trusted(
        root: Subset,
        mut split: impl FnMut(Subset) -> (Subset, Subset),
    ) -> Tree {
        fn build(
            s: Subset,
            split: &mut dyn FnMut(Subset) -> (Subset, Subset),
            nodes: &mut Vec<Node>,
        ) -> usize {
            match s.lowest() {
                Some(i) if s.is_singleton() => nodes.push(Node::Leaf(i)),
                _ => {
                    let (a, b) = split(s);
                    debug_assert!(
                        a.union(b) == s && a.is_disjoint(b) && !a.is_empty() && !b.is_empty()
                    );
                    let l = build(a, split, nodes);
                    let r = build(b, split, nodes);
                    nodes.push(Node::Internal(l, r));
                }
            }
            nodes.len() - 1
        }
        debug_assert!(!root.is_empty(), "a tree needs at least one leaf");
        let mut nodes = Vec::with_capacity(2 * root.len());
        let r = build(root, &mut split, &mut nodes);
        Tree { nodes, root: r }
    }

    /// A tree from an arena of nodes and its root index (children need not precede parents).
    /// Errors unless every node is reached exactly once from the root (no cycles, shared or
    /// unreachable nodes) and the leaves are distinct indices below 64.
    pub fn from_arena(nodes: Vec<Node>, root: usize) -> Result<Tree, TreeError> {
        let invalid = |msg: String| Err(TreeError::Invalid(msg));
        if root >= nodes.len() {
            return invalid(format!(
                "root index {root} is out of range for {} nodes",
                nodes.len()
            ));
        }
        let mut seen = vec![false; nodes.len()];
        let mut leaves = Subset::EMPTY;
        let mut stack = vec![root];
        let mut reached = 0;
        while let Some(v) = stack.pop() {
            if std::mem::replace(&mut seen[v], true) {
                return invalid(format!(
                    "node {v} is reached twice from the root; an arena must be a tree"
                ));
            }
            reached += 1;
            match nodes[v] {
                Node::Leaf(i) => {
                    if i >= Subset::MAX_LEAVES {
                        return invalid(format!("leaf index {i} is not below 64"));
                    }
                    if leaves.contains(i) {
                        return invalid(format!("leaf {i} appears twice"));
                    }
                    leaves = leaves.union(Subset::singleton(i));
                }
                Node::Internal(l, r) => {
                    for c in [l, r] {
                        if c >= nodes.len() {
                            return invalid(format!(
                                "node {v} has child index {c}, out of range for {} nodes",
                                nodes.len()
                            ));
                        }
                        stack.push(c);
                    }
                }
            }
        }
        if reached != nodes.len() {
            return invalid(format!(
                "{} of {} nodes are not reachable from the root",
                nodes.len() - reached,
                nodes.len()
            ));
        }
        Ok(Tree { nodes, root })
    }

    /// The arena of nodes.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Arena index of the root.
    pub fn root(&self) -> usize {
        self.root
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n, Node::Leaf(_)))
            .count()
    }

    /// The set of all leaves.
    pub fn leaves(&self) -> Subset {
        self.nodes.iter().fold(Subset::EMPTY, |s, n| match n {
            Node::Leaf(i) => s.union(Subset::singleton(*i)),
            Node::Internal(..) => s,
        })
    }

    /// The cluster (leaf set) under every arena node, indexed like [`Tree::nodes`].
    pub fn node_clusters(&self) -> Vec<Subset> {
        let mut out = vec![Subset::EMPTY; self.nodes.len()];
        // Children always precede parents in arenas built by this module; do it robustly anyway.
        fn visit(t: &Tree, v: usize, out: &mut [Subset]) -> Subset {
            let s = match t.nodes[v] {
                Node::Leaf(i) => Subset::singleton(i),
                Node::Internal(l, r) => visit(t, l, out).union(visit(t, r, out)),
            };
            out[v] = s;
            s
        }
        visit(self, self.root, &mut out);
        out
    }

    /// Every cluster of the tree (leaves, internal nodes and the root), sorted; equal for two trees
    /// exactly when they encode the same hierarchy.
    pub fn clusters(&self) -> Vec<Subset> {
        let mut c = self.node_clusters();
        c.sort_unstable();
        c
    }

    /// The sibling pair `(A, B)` of every internal node, `A` holding the lower leaf.
    pub fn splits(&self) -> Vec<(Subset, Subset)> {
        let cl = self.node_clusters();
        self.nodes
            .iter()
            .filter_map(|n| match *n {
                Node::Internal(l, r) => {
                    let (a, b) = (cl[l], cl[r]);
                    Some(if a.lowest() < b.lowest() {
                        (a, b)
                    } else {
                        (b, a)
                    })
                }
                Node::Leaf(_) => None,
            })
            .collect()
    }

    /// The sum of `log psi` over the internal nodes: the tree's log-likelihood (energy) under
    /// `model`. `-inf` when any split is forbidden; NaN when the tree has a leaf the model does
    /// not (an index at or above `model.n_leaves()`).
    ///
    /// The one canonical scorer: every method's tree is scored here, so equal trees get equal
    /// bits whatever found them. It sums as the exact trellis does, cluster by cluster from the
    /// leaves up: the value of a cluster split into `A` (the part holding its lowest leaf) and
    /// `B` is `(log psi(A, B) + value(A)) + value(B)`. So the trellis's MAP tree scores the
    /// trellis's MAP value bit for bit and, as rounding is monotone, no tree scores above it.
    pub fn log_likelihood<M: SplitModel + ?Sized>(&self, model: &M) -> f64 {
        let n = model.n_leaves();
        if n < Subset::MAX_LEAVES && !self.leaves().is_subset_of(Subset::full(n)) {
            return f64::NAN;
        }
        let clusters = self.node_clusters();
        // Children before parents: by cluster size.
        let mut order: Vec<usize> = (0..self.nodes.len()).collect();
        order.sort_by_key(|&v| clusters[v].len());
        let mut value = vec![0.0f64; self.nodes.len()];
        for v in order {
            if let Node::Internal(l, r) = self.nodes[v] {
                let (a, b) = if clusters[l].lowest() < clusters[r].lowest() {
                    (l, r)
                } else {
                    (r, l)
                };
                value[v] = model.log_psi(clusters[a], clusters[b]) + value[a] + value[b];
            }
        }
        value[self.root]
    }

    /// Canonical Newick with integer leaf labels, e.g. `((0,1),2);`.
    pub fn to_newick(&self) -> String {
        self.to_newick_with(|i| i.to_string())
    }

    /// Canonical Newick with leaf labels given by `name`.
    pub fn to_newick_with(&self, name: impl Fn(usize) -> String) -> String {
        self.newick(&name, true)
    }

    /// Newick with integer leaf labels and every node's children in the tree's own order (the
    /// order the algorithm joined them in, which charts draw left to right), e.g. `(2,(1,0));`.
    /// [`Tree::from_newick`] reads it back in that order; [`Tree::to_newick`] is the canonical
    /// form of the same tree.
    pub fn to_newick_as_built(&self) -> String {
        self.newick(&|i| i.to_string(), false)
    }

    fn newick(&self, name: &dyn Fn(usize) -> String, canonical: bool) -> String {
        let cl = self.node_clusters();
        let mut s = String::new();
        fn write(
            t: &Tree,
            v: usize,
            cl: &[Subset],
            name: &dyn Fn(usize) -> String,
            canonical: bool,
            s: &mut String,
        ) {
            match t.nodes[v] {
                Node::Leaf(i) => s.push_str(&name(i)),
                Node::Internal(l, r) => {
                    let (a, b) = if !canonical || cl[l].lowest() < cl[r].lowest() {
                        (l, r)
                    } else {
                        (r, l)
                    };
                    s.push('(');
                    write(t, a, cl, name, canonical, s);
                    s.push(',');
                    write(t, b, cl, name, canonical, s);
                    s.push(')');
                }
            }
        }
        write(self, self.root, &cl, name, canonical, &mut s);
        s.push(';');
        s
    }

    /// Parses Newick whose leaf labels are integer indices (branch lengths after `:` and internal
    /// node labels are accepted and ignored). Every internal node must have exactly two children
    /// and every leaf index must appear once.
    pub fn from_newick(text: &str) -> Result<Tree, TreeError> {
        let bytes = text.as_bytes();
        let mut pos = 0usize;
        let mut nodes = Vec::new();
        fn skip_ws(b: &[u8], pos: &mut usize) {
            while *pos < b.len() && b[*pos].is_ascii_whitespace() {
                *pos += 1;
            }
        }
        fn err(pos: usize, msg: &str) -> TreeError {
            TreeError::Newick {
                pos,
                msg: msg.to_string(),
            }
        }
        fn skip_label_and_length(b: &[u8], pos: &mut usize) {
            while *pos < b.len() && !matches!(b[*pos], b',' | b')' | b';' | b'(') {
                *pos += 1;
            }
        }
        fn parse(
            b: &[u8],
            pos: &mut usize,
            nodes: &mut Vec<Node>,
            depth: usize,
        ) -> Result<usize, TreeError> {
            skip_ws(b, pos);
            if *pos >= b.len() {
                return Err(err(*pos, "unexpected end of input"));
            }
            if depth > MAX_DEPTH {
                return Err(err(
                    *pos,
                    "nested deeper than a tree over at most 64 distinct leaves can be",
                ));
            }
            if b[*pos] == b'(' {
                *pos += 1;
                let l = parse(b, pos, nodes, depth + 1)?;
                skip_ws(b, pos);
                if *pos >= b.len() || b[*pos] != b',' {
                    return Err(err(
                        *pos,
                        "expected ',' (internal nodes must have two children)",
                    ));
                }
                *pos += 1;
                let r = parse(b, pos, nodes, depth + 1)?;
                skip_ws(b, pos);
                if *pos >= b.len() || b[*pos] != b')' {
                    return Err(err(
                        *pos,
                        "expected ')' (internal nodes must have exactly two children)",
                    ));
                }
                *pos += 1;
                skip_label_and_length(b, pos);
                nodes.push(Node::Internal(l, r));
            } else {
                let start = *pos;
                while *pos < b.len() && b[*pos].is_ascii_digit() {
                    *pos += 1;
                }
                let label = std::str::from_utf8(&b[start..*pos]).unwrap();
                let i: usize = label
                    .parse()
                    .map_err(|_| err(start, "expected a leaf index (a non-negative integer)"))?;
                if i >= Subset::MAX_LEAVES {
                    return Err(err(start, "leaf index must be below 64"));
                }
                // Optional branch length.
                skip_ws(b, pos);
                if *pos < b.len() && b[*pos] == b':' {
                    skip_label_and_length(b, pos);
                }
                nodes.push(Node::Leaf(i));
            }
            Ok(nodes.len() - 1)
        }
        let root = parse(bytes, &mut pos, &mut nodes, 0)?;
        skip_ws(bytes, &mut pos);
        if pos < bytes.len() && bytes[pos] == b';' {
            pos += 1;
        }
        skip_ws(bytes, &mut pos);
        if pos != bytes.len() {
            return Err(err(pos, "trailing characters after the tree"));
        }
        let t = Tree { nodes, root };
        t.check_distinct_leaves()?;
        Ok(t)
    }

    /// Builds a tree from nested JSON lists of leaf indices, e.g. `[[0, 1], 2]` (the `truth_tree`
    /// field of the Ginkgo jet files).
    pub fn from_nested_json(v: &serde_json::Value) -> Result<Tree, TreeError> {
        fn build(
            v: &serde_json::Value,
            nodes: &mut Vec<Node>,
            depth: usize,
        ) -> Result<usize, TreeError> {
            if depth > MAX_DEPTH {
                return Err(TreeError::Invalid(
                    "nested deeper than a tree over at most 64 distinct leaves can be".into(),
                ));
            }
            match v {
                serde_json::Value::Number(n) => {
                    let i = n
                        .as_u64()
                        .filter(|&i| i < 64)
                        .ok_or_else(|| TreeError::Invalid(format!("bad leaf label {n}")))?;
                    nodes.push(Node::Leaf(i as usize));
                }
                serde_json::Value::Array(a) if a.len() == 2 => {
                    let l = build(&a[0], nodes, depth + 1)?;
                    let r = build(&a[1], nodes, depth + 1)?;
                    nodes.push(Node::Internal(l, r));
                }
                serde_json::Value::Array(a) if a.len() == 1 => {
                    return build(&a[0], nodes, depth + 1)
                }
                other => {
                    return Err(TreeError::Invalid(format!(
                        "expected a leaf index or a pair of subtrees, got {other}"
                    )))
                }
            }
            Ok(nodes.len() - 1)
        }
        let mut nodes = Vec::new();
        let root = build(v, &mut nodes, 0)?;
        let t = Tree { nodes, root };
        t.check_distinct_leaves()?;
        Ok(t)
    }

    /// The tree as nested JSON lists of leaf indices (canonical child order).
    pub fn to_nested_json(&self) -> serde_json::Value {
        let cl = self.node_clusters();
        fn go(t: &Tree, v: usize, cl: &[Subset]) -> serde_json::Value {
            match t.nodes[v] {
                Node::Leaf(i) => serde_json::Value::from(i),
                Node::Internal(l, r) => {
                    let (a, b) = if cl[l].lowest() < cl[r].lowest() {
                        (l, r)
                    } else {
                        (r, l)
                    };
                    serde_json::Value::Array(vec![go(t, a, cl), go(t, b, cl)])
                }
            }
        }
        go(self, self.root, &cl)
    }

    fn check_distinct_leaves(&self) -> Result<(), TreeError> {
        let mut seen = Subset::EMPTY;
        for n in &self.nodes {
            if let Node::Leaf(i) = *n {
                if seen.contains(i) {
                    return Err(TreeError::Invalid(format!("leaf {i} appears twice")));
                }
                seen = seen.union(Subset::singleton(i));
            }
        }
        Ok(())
    }

    /// Every binary tree over the leaves of `leaves`: `(2k-3)!!` trees for `k` leaves. Meant for
    /// brute-force checks on small sets: errors for an empty set and for more than
    /// [`MAX_ENUMERATED_LEAVES`] leaves (k = 9 gives 2,027,025 trees).
    pub fn enumerate_all(leaves: Subset) -> Result<Vec<Tree>, TreeError> {
        if leaves.is_empty() || leaves.len() > MAX_ENUMERATED_LEAVES {
            return Err(TreeError::Invalid(format!(
                "cannot enumerate the trees over {} leaves: pass 1 to {MAX_ENUMERATED_LEAVES} leaves ({} trees at most)",
                leaves.len(),
                n_binary_trees(MAX_ENUMERATED_LEAVES).unwrap_or(u128::MAX)
            )));
        }
        Ok(Tree::enumerate_unchecked(leaves))
    }

    fn enumerate_unchecked(leaves: Subset) -> Vec<Tree> {
        if leaves.is_singleton() {
            return vec![Tree::leaf(leaves.lowest().unwrap())];
        }
        let mut out = Vec::new();
        for (a, b) in leaves.splits() {
            let ta = Tree::enumerate_unchecked(a);
            let tb = Tree::enumerate_unchecked(b);
            for x in &ta {
                for y in &tb {
                    out.push(Tree::join_disjoint(x.clone(), y.clone()));
                }
            }
        }
        out
    }
}

impl PartialEq for Tree {
    fn eq(&self, other: &Tree) -> bool {
        self.clusters() == other.clusters()
    }
}

impl Eq for Tree {}

impl fmt::Display for Tree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_newick())
    }
}

/// Deepest nesting the parsers follow: a binary tree over 64 distinct leaves is at most 63 deep
/// (single-element JSON lists may add a level each).
const MAX_DEPTH: usize = 256;

/// Largest leaf count [`Tree::enumerate_all`] accepts.
pub const MAX_ENUMERATED_LEAVES: usize = 10;

/// `(2n-3)!!`, the number of rooted binary trees over `n >= 1` labelled leaves; `None` when it
/// does not fit in a u128 (n > 29).
pub fn n_binary_trees(n: usize) -> Option<u128> {
    (2..n).try_fold(1u128, |acc, k| acc.checked_mul(2 * k as u128 - 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn newick_round_trip_and_canonical_form() {
        let t = Tree::from_newick("((2,(1:0.5,0)),3);").unwrap();
        assert_eq!(t.to_newick(), "(((0,1),2),3);");
        let u = Tree::from_newick(&t.to_newick()).unwrap();
        assert_eq!(t, u);
        assert_eq!(t.n_leaves(), 4);
        assert_eq!(t.leaves(), Subset::full(4));
        let v = Tree::from_newick("(3,((0,1),2));").unwrap();
        assert_eq!(t, v);
        let w = Tree::from_newick("(((0,2),1),3);").unwrap();
        assert_ne!(t, w);
    }

    #[test]
    fn newick_as_built_keeps_the_order_of_children() {
        let t = Tree::join(
            Tree::leaf(2),
            Tree::join(Tree::leaf(1), Tree::leaf(0)).unwrap(),
        )
        .unwrap();
        assert_eq!(t.to_newick_as_built(), "(2,(1,0));");
        assert_eq!(t.to_newick(), "((0,1),2);");
        let u = Tree::from_newick(&t.to_newick_as_built()).unwrap();
        assert_eq!(u.to_newick_as_built(), "(2,(1,0));");
        assert_eq!(t, u);
    }

    #[test]
    fn newick_errors_name_the_problem() {
        for bad in ["((0,1),", "(0,1,2);", "(0,0);", "(a,1);", "(0,1));", "(0);"] {
            assert!(Tree::from_newick(bad).is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn nested_json_round_trip() {
        let v: serde_json::Value = serde_json::from_str("[[[0,1],2],[[3,4],5]]").unwrap();
        let t = Tree::from_nested_json(&v).unwrap();
        assert_eq!(t.to_nested_json(), v);
        assert_eq!(t.to_newick(), "(((0,1),2),((3,4),5));");
        assert_eq!(t.splits().len(), 5);
    }

    #[test]
    fn enumeration_counts_and_distinctness() {
        for n in 1..=7 {
            let all = Tree::enumerate_all(Subset::full(n)).unwrap();
            assert_eq!(Some(all.len() as u128), n_binary_trees(n));
            let distinct: HashSet<Vec<Subset>> = all.iter().map(|t| t.clusters()).collect();
            assert_eq!(distinct.len(), all.len());
            assert!(all.iter().all(|t| t.splits().len() == n - 1));
        }
        assert_eq!(n_binary_trees(9), Some(2_027_025));
        assert!(n_binary_trees(29).is_some() && n_binary_trees(30).is_none());
    }
}
