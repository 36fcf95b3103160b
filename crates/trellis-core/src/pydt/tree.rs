//! Multifurcating trees with divergence times (spec §2.1).
//!
//! Times are stored on the log scale s = −ln(1 − t) ∈ (0, ∞], the divergence hazard's own clock
//! (A(t) = c·s): near t = 1, where divergences crowd when c is small, a double holds t only to
//! 1e-16 but s to full relative precision, and branch lengths t_v − t_u are computed from s
//! without cancellation ([`PydtTree::branch_length`]). Leaves sit at s = ∞ (t = 1).
//!
//! Leaves are nodes `0..n`; internal nodes follow. The zero node (time 0, location 0)
//! is implicit: it is the parent of [`PydtTree::root`]. Children are kept as sibling lists so a
//! node is `Copy` and a whole tree can be saved and restored without allocating
//! (`clone_from`), which the Metropolis–Hastings moves do on every proposal. Every node records
//! the number of leaves below it (the counts m, n_k of the prior).

use super::PydtError;

/// "No node" in parent/child/sibling links.
pub const NONE: usize = usize::MAX;

/// One node: links, leaf count below it and divergence time on the log scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Node {
    /// Parent (`NONE` for the root, whose parent is the zero node, and for free slots).
    pub parent: usize,
    /// First child (`NONE` for a leaf).
    pub first_child: usize,
    /// Next sibling in the parent's child list.
    pub next_sibling: usize,
    /// Number of children.
    pub n_children: usize,
    /// Number of leaves below (1 for a leaf).
    pub leaves: usize,
    /// Divergence time as s = −ln(1 − t) (∞ for a leaf).
    pub s: f64,
}

impl Node {
    fn leaf() -> Self {
        Self {
            parent: NONE,
            first_child: NONE,
            next_sibling: NONE,
            n_children: 0,
            leaves: 1,
            s: f64::INFINITY,
        }
    }
}

/// Where a subtree is (or can be) attached (spec §2.8): on the segment above `below` at log-scale
/// time `s` (a new internal node is created there) or as an extra child of an existing internal
/// node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Position {
    /// On the segment from `below`'s parent (or the zero node) to `below`, at `s`.
    Segment {
        /// The lower end of the segment.
        below: usize,
        /// The divergence time s = −ln(1 − t), strictly between the segment's ends.
        s: f64,
    },
    /// As an extra child of this internal node.
    Node(usize),
}

/// A multifurcating tree with divergence times over `n` leaves.
#[derive(Debug, Clone, PartialEq)]
pub struct PydtTree {
    nodes: Vec<Node>,
    n: usize,
    root: usize,
    free: Vec<usize>,
}

impl PydtTree {
    /// The tree with one leaf (leaf 0 hangs from the zero node) and `n − 1` leaves not yet
    /// attached: the start of the generative process.
    pub fn single(n: usize) -> Self {
        Self {
            nodes: vec![Node::leaf(); n],
            n,
            root: 0,
            free: Vec::new(),
        }
    }

    /// Like [`PydtTree::single`] with `leaf` as the one attached leaf (sequential attachment in
    /// any order).
    pub fn single_from(n: usize, leaf: usize) -> Self {
        assert!(leaf < n, "single_from: leaf {leaf} of {n}");
        Self {
            root: leaf,
            ..Self::single(n)
        }
    }

    /// Build from parent links: `parents[v]` is `None` for the root, `times[v]` the divergence
    /// time of internal node v (entries for leaves `0..n` are ignored: leaves sit at t = 1).
    /// Nodes `0..n` are the leaves; every node `n..` must be internal.
    pub fn from_parents(
        n: usize,
        parents: &[Option<usize>],
        times: &[f64],
    ) -> Result<Self, PydtError> {
        let total = parents.len();
        if total < n || times.len() != total || n == 0 {
            return Err(PydtError::Tree(format!(
                "{} parents and {} times for {n} leaves",
                total,
                times.len()
            )));
        }
        let mut t = Self::single(n);
        t.nodes.resize(total, Node::leaf());
        let mut root = None;
        for (v, (node, &time)) in t.nodes.iter_mut().zip(times).enumerate() {
            if v >= n && !(time > 0.0 && time < 1.0) {
                return Err(PydtError::Tree(format!(
                    "internal node {v} has time {time}; times must lie in (0, 1)"
                )));
            }
            *node = Node {
                parent: NONE,
                first_child: NONE,
                next_sibling: NONE,
                n_children: 0,
                leaves: usize::from(v < n),
                s: if v < n {
                    f64::INFINITY
                } else {
                    -(-time).ln_1p()
                },
            };
        }
        // Children in increasing id order (push to the front in reverse).
        for v in (0..total).rev() {
            match parents[v] {
                None => {
                    if root.replace(v).is_some() {
                        return Err(PydtError::Tree("more than one root".into()));
                    }
                }
                Some(p) if p < n || p >= total => {
                    return Err(PydtError::Tree(format!(
                        "node {v} has parent {p}, not an internal node"
                    )))
                }
                Some(p) => t.push_child(p, v),
            }
        }
        t.root = root.ok_or_else(|| PydtError::Tree("no root".into()))?;
        let mut order = Vec::new();
        t.postorder(&mut order);
        if order.len() != total {
            return Err(PydtError::Tree("parent links do not form one tree".into()));
        }
        for &v in &order {
            if v >= n {
                t.nodes[v].leaves = t.children(v).map(|c| t.nodes[c].leaves).sum();
            }
        }
        t.validate()?;
        Ok(t)
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.n
    }

    /// The root (first internal node; a leaf only while the tree has one leaf).
    pub fn root(&self) -> usize {
        self.root
    }

    /// Node `v`.
    pub fn node(&self, v: usize) -> &Node {
        &self.nodes[v]
    }

    /// Divergence time t of `v` (1 for a leaf).
    pub fn time(&self, v: usize) -> f64 {
        -(-self.nodes[v].s).exp_m1()
    }

    /// Divergence time of `v` on the log scale, s = −ln(1 − t) (∞ for a leaf).
    pub fn s(&self, v: usize) -> f64 {
        self.nodes[v].s
    }

    /// Time t of `v`'s parent (0 for the root: the zero node).
    pub fn parent_time(&self, v: usize) -> f64 {
        -(-self.parent_s(v)).exp_m1()
    }

    /// Log-scale time of `v`'s parent (0 for the root).
    pub fn parent_s(&self, v: usize) -> f64 {
        let p = self.nodes[v].parent;
        if p == NONE {
            0.0
        } else {
            self.nodes[p].s
        }
    }

    /// Length t_v − t_{pa(v)} of the branch above `v`, without cancellation:
    /// e^{−s_pa}·(1 − e^{−(s_v − s_pa)}).
    pub fn branch_length(&self, v: usize) -> f64 {
        let sp = self.parent_s(v);
        (-sp).exp() * -(-(self.nodes[v].s - sp)).exp_m1()
    }

    /// Set the divergence time t of internal node `v` (the caller keeps the order constraints).
    pub fn set_time(&mut self, v: usize, t: f64) {
        self.nodes[v].s = -(-t).ln_1p();
    }

    /// Set the log-scale divergence time s of internal node `v`.
    pub fn set_s(&mut self, v: usize, s: f64) {
        self.nodes[v].s = s;
    }

    /// Whether `v` is a leaf.
    pub fn is_leaf(&self, v: usize) -> bool {
        v < self.n
    }

    /// Whether node `v` is in the tree (has a parent or is the root).
    pub fn is_attached(&self, v: usize) -> bool {
        v == self.root || self.nodes[v].parent != NONE
    }

    /// Size of the node arena (leaves, internal nodes and free slots).
    pub fn capacity(&self) -> usize {
        self.nodes.len()
    }

    /// Children of `v`.
    pub fn children(&self, v: usize) -> Children<'_> {
        Children {
            nodes: &self.nodes,
            next: self.nodes[v].first_child,
        }
    }

    /// Nodes of the tree in post-order (children before parents), into `out`.
    pub fn postorder(&self, out: &mut Vec<usize>) {
        out.clear();
        let mut stack = vec![self.root];
        while let Some(v) = stack.pop() {
            out.push(v);
            stack.extend(self.children(v));
        }
        out.reverse();
    }

    /// Internal nodes of the tree (in post-order).
    pub fn internal_nodes(&self) -> Vec<usize> {
        let mut order = Vec::new();
        self.postorder(&mut order);
        order.retain(|&v| v >= self.n);
        order
    }

    /// Number of internal nodes.
    pub fn n_internal(&self) -> usize {
        self.nodes.len() - self.n - self.free.len()
    }

    /// Check the attached part's links, counts and times: every internal node has ≥ 2 children
    /// and a time strictly between its parent's (0 for the root) and each child's.
    pub fn validate_attached(&self) -> Result<(), PydtError> {
        let mut order = Vec::new();
        self.postorder(&mut order);
        let attached = order.iter().filter(|&&v| v < self.n).count();
        for &v in &order {
            let nd = &self.nodes[v];
            let sp = self.parent_s(v);
            if nd.s.partial_cmp(&sp) != Some(std::cmp::Ordering::Greater) {
                return Err(PydtError::Tree(format!(
                    "node {v} at time {} is not after its parent's time {}",
                    self.time(v),
                    self.parent_time(v)
                )));
            }
            if v < self.n {
                continue;
            }
            if !nd.s.is_finite() || nd.n_children < 2 {
                return Err(PydtError::Tree(format!(
                    "internal node {v}: time {} (needs < 1), {} children (needs >= 2)",
                    self.time(v),
                    nd.n_children
                )));
            }
            let kids: Vec<usize> = self.children(v).collect();
            if kids.len() != nd.n_children
                || kids.iter().any(|&c| self.nodes[c].parent != v)
                || nd.leaves != kids.iter().map(|&c| self.nodes[c].leaves).sum::<usize>()
            {
                return Err(PydtError::Tree(format!(
                    "node {v}: inconsistent links or counts"
                )));
            }
        }
        if self.nodes[self.root].leaves != attached {
            return Err(PydtError::Tree("the root's leaf count is wrong".into()));
        }
        Ok(())
    }

    /// [`PydtTree::validate_attached`] plus: every leaf is attached.
    pub fn validate(&self) -> Result<(), PydtError> {
        self.validate_attached()?;
        if self.nodes[self.root].leaves != self.n {
            return Err(PydtError::Tree("the root does not cover every leaf".into()));
        }
        Ok(())
    }

    fn push_child(&mut self, p: usize, c: usize) {
        self.nodes[c].parent = p;
        self.nodes[c].next_sibling = self.nodes[p].first_child;
        self.nodes[p].first_child = c;
        self.nodes[p].n_children += 1;
    }

    fn remove_child(&mut self, p: usize, c: usize) {
        let mut cur = self.nodes[p].first_child;
        if cur == c {
            self.nodes[p].first_child = self.nodes[c].next_sibling;
        } else {
            while self.nodes[cur].next_sibling != c {
                cur = self.nodes[cur].next_sibling;
            }
            self.nodes[cur].next_sibling = self.nodes[c].next_sibling;
        }
        self.nodes[p].n_children -= 1;
        self.nodes[c].parent = NONE;
        self.nodes[c].next_sibling = NONE;
    }

    fn replace_child(&mut self, p: usize, old: usize, new: usize) {
        if p == NONE {
            self.root = new;
            self.nodes[new].parent = NONE;
            return;
        }
        self.remove_child(p, old);
        self.push_child(p, new);
    }

    fn add_leaves_upwards(&mut self, mut v: usize, delta: isize) {
        while v != NONE {
            self.nodes[v].leaves = self.nodes[v].leaves.wrapping_add_signed(delta);
            v = self.nodes[v].parent;
        }
    }

    fn alloc(&mut self, s: f64) -> usize {
        let node = Node {
            parent: NONE,
            first_child: NONE,
            next_sibling: NONE,
            n_children: 0,
            leaves: 0,
            s,
        };
        match self.free.pop() {
            Some(v) => {
                self.nodes[v] = node;
                v
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        }
    }

    /// Attach the detached subtree rooted at `s` at `pos`; returns the new internal node for a
    /// segment position.
    pub fn attach(&mut self, s: usize, pos: Position) -> Option<usize> {
        let s_leaves = self.nodes[s].leaves as isize;
        match pos {
            Position::Node(v) => {
                self.push_child(v, s);
                self.add_leaves_upwards(v, s_leaves);
                None
            }
            Position::Segment { below, s: time } => {
                let w = self.alloc(time);
                let p = self.nodes[below].parent;
                self.replace_child(p, below, w);
                self.nodes[w].leaves = self.nodes[below].leaves;
                self.push_child(w, below);
                self.push_child(w, s);
                self.add_leaves_upwards(w, s_leaves);
                Some(w)
            }
        }
    }

    /// Detach the subtree rooted at `s` (not the root): counts above drop by its leaves; a parent
    /// left with one child is removed and that child takes its place. Returns `s`'s old position
    /// in the remaining tree (spec §2.8 step 2).
    pub fn detach(&mut self, s: usize) -> Position {
        let p = self.nodes[s].parent;
        assert!(p != NONE, "detach: node {s} is the root");
        let s_leaves = self.nodes[s].leaves as isize;
        self.remove_child(p, s);
        self.add_leaves_upwards(p, -s_leaves);
        if self.nodes[p].n_children >= 2 {
            return Position::Node(p);
        }
        let q = self.nodes[p].first_child;
        let gp = self.nodes[p].parent;
        let s = self.nodes[p].s;
        self.remove_child(p, q);
        self.replace_child(gp, p, q);
        self.nodes[p].parent = NONE;
        self.free.push(p);
        Position::Segment { below: q, s }
    }

    /// Divergence times of the most recent common ancestors, row-major n × n (diagonal 1): the
    /// covariance of the Brownian leaf locations over σ² (spec §2.5).
    pub fn mrca_times(&self) -> Vec<f64> {
        let n = self.n;
        let mut out = vec![1.0; n * n];
        let mut order = Vec::new();
        self.postorder(&mut order);
        let mut below: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        for &v in &order {
            if v < n {
                below[v] = vec![v];
                continue;
            }
            let kids: Vec<usize> = self.children(v).collect();
            let t = self.time(v);
            for (a, &ka) in kids.iter().enumerate() {
                for &kb in &kids[a + 1..] {
                    for &i in &below[ka] {
                        for &j in &below[kb] {
                            out[i * n + j] = t;
                            out[j * n + i] = t;
                        }
                    }
                }
            }
            let mut all = Vec::new();
            for k in kids {
                all.append(&mut below[k]);
            }
            below[v] = all;
        }
        out
    }

    /// Sorted leaf sets of every internal node, each sorted: the tree's topology as a canonical
    /// value (two trees with the same clusters compare equal).
    pub fn clusters(&self) -> Vec<Vec<usize>> {
        let mut order = Vec::new();
        self.postorder(&mut order);
        let mut below: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        let mut out = Vec::new();
        for &v in &order {
            if v < self.n {
                below[v] = vec![v];
                continue;
            }
            let mut all: Vec<usize> = self.children(v).flat_map(|k| below[k].clone()).collect();
            all.sort_unstable();
            out.push(all.clone());
            below[v] = all;
        }
        out.sort();
        out
    }
}

/// Iterator over a node's children.
pub struct Children<'a> {
    nodes: &'a [Node],
    next: usize,
}

impl Iterator for Children<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.next == NONE {
            return None;
        }
        let c = self.next;
        self.next = self.nodes[c].next_sibling;
        Some(c)
    }
}
