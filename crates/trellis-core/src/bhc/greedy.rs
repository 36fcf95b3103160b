//! BHC as published: start from singletons, score every pair by the posterior probability of
//! the merged hypothesis `r_k = π_k p(D_k) / p(D_k|T_k)`, merge the best pair, score the new
//! cluster against every other one, repeat (the pair table of [`super::agglomerate`]: `O(N²)`
//! evaluations of `p(D_k)` from merged sufficient statistics; ties to the smaller node ids).
//!
//! Everything is in log space: `log d_k = log(αΓ(n_k) + d_i d_j)` by log-add-exp,
//! `log π_k = ln α + ln Γ(n_k) − log d_k`, `log(1 − π_k) = log d_i + log d_j − log d_k`.

use super::agglomerate::agglomerate;
use super::{check_alpha, labels_of, BhcError, ConjugateModel, DpmEnergy};
use crate::hierarchy::Hierarchy;
use crate::model::log_add_exp;
use crate::subset::Subset;
use crate::tree::{Node, Tree};
use statrs::function::gamma::ln_gamma;

/// One node of a BHC tree.
#[derive(Clone, Debug, PartialEq)]
pub struct BhcNode {
    /// Number of points below.
    pub size: usize,
    /// The two children (node ids), `None` at a leaf.
    pub children: Option<(usize, usize)>,
    /// `log p(D_k | H1)`: all points below in one cluster.
    pub log_h1: f64,
    /// `log d_k`.
    pub log_d: f64,
    /// `log p(D_k | T_k)`.
    pub log_p_tree: f64,
    /// `log r_k = log π_k + log p(D_k|H1) − log p(D_k|T_k)` (0 at a leaf).
    pub log_r: f64,
}

impl BhcNode {
    /// `log f(T_k) = log d_k + log p(D_k|T_k)`: the sum over the cuts of the subtree of
    /// `∏ αΓ(|C|) p(D_C)`.
    pub fn log_f(&self) -> f64 {
        self.log_d + self.log_p_tree
    }

    /// The node of the leaf with marginal `log_h1` under concentration `ln α`.
    pub(crate) fn leaf(ln_alpha: f64, log_h1: f64) -> BhcNode {
        BhcNode {
            size: 1,
            children: None,
            log_h1,
            log_d: ln_alpha,
            log_p_tree: log_h1,
            log_r: 0.0,
        }
    }

    /// The node merging `a` (id `ia`) and `b` (id `ib`), whose union has marginal `log_h1`.
    pub(crate) fn merge(
        ln_alpha: f64,
        (ia, a): (usize, &BhcNode),
        (ib, b): (usize, &BhcNode),
        log_h1: f64,
    ) -> BhcNode {
        let size = a.size + b.size;
        let prior = ln_alpha + ln_gamma(size as f64);
        let both = a.log_d + b.log_d;
        let log_d = log_add_exp(prior, both);
        let log_pi = prior - log_d;
        let log_split = both - log_d;
        let log_p_tree = log_add_exp(log_pi + log_h1, log_split + a.log_p_tree + b.log_p_tree);
        let log_r = if log_p_tree == f64::NEG_INFINITY {
            f64::NEG_INFINITY
        } else {
            log_pi + log_h1 - log_p_tree
        };
        BhcNode {
            size,
            children: Some((ia, ib)),
            log_h1,
            log_d,
            log_p_tree,
            log_r,
        }
    }
}

/// A BHC tree: nodes `0..n` are the points, node `n + k` is the `k`-th merge, the root last.
#[derive(Clone, Debug, PartialEq)]
pub struct BhcResult {
    /// Number of points.
    pub n: usize,
    /// The DP concentration.
    pub alpha: f64,
    /// Every node, leaves first, then the merges in the order made.
    pub nodes: Vec<BhcNode>,
}

impl BhcResult {
    /// The root.
    pub fn root(&self) -> &BhcNode {
        self.nodes.last().expect("a tree has a root")
    }

    /// `log p(D | T)`, BHC's marginal likelihood of the tree.
    pub fn log_p_tree(&self) -> f64 {
        self.root().log_p_tree
    }

    /// `log f(T)`: the sum over the tree's cuts of `∏ αΓ(|C|) p(D_C)`.
    pub fn log_f(&self) -> f64 {
        self.root().log_f()
    }

    /// The lower bound on the DPM evidence, `log[Γ(α)/Γ(N+α) f(T)]`.
    pub fn log_lower_bound(&self) -> f64 {
        self.log_f() + ln_gamma(self.alpha) - ln_gamma(self.n as f64 + self.alpha)
    }

    /// The merges `(child, child)` in the order made (node ids as in [`BhcResult::nodes`]).
    pub fn merges(&self) -> Vec<(usize, usize)> {
        self.nodes.iter().filter_map(|v| v.children).collect()
    }

    /// The clusters of the cut the paper recommends with `threshold = 0.5`: from the root down,
    /// a node with `r_k ≥ threshold` is a cluster, one below it is split into its children.
    pub fn cut(&self, threshold: f64) -> Vec<Vec<usize>> {
        let ln_t = threshold.ln();
        let mut out = Vec::new();
        let mut stack = vec![self.nodes.len() - 1];
        while let Some(v) = stack.pop() {
            match self.nodes[v].children {
                Some((l, r)) if self.nodes[v].log_r < ln_t => {
                    stack.push(r);
                    stack.push(l);
                }
                _ => out.push(self.leaves_below(v)),
            }
        }
        out
    }

    /// [`BhcResult::cut`] as one label per point (clusters numbered by their lowest point).
    pub fn cut_labels(&self, threshold: f64) -> Vec<usize> {
        labels_of(self.n, &self.cut(threshold))
    }

    /// The points below node `v`, in increasing order.
    pub fn leaves_below(&self, v: usize) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.nodes[v].size);
        let mut stack = vec![v];
        while let Some(u) = stack.pop() {
            match self.nodes[u].children {
                Some((l, r)) => stack.extend([l, r]),
                None => out.push(u),
            }
        }
        out.sort_unstable();
        out
    }

    /// The tree as a [`Hierarchy`] (same node ids; heights are cluster sizes).
    pub fn hierarchy(&self) -> Hierarchy {
        let mut parent = vec![None; self.nodes.len()];
        for (v, node) in self.nodes.iter().enumerate() {
            if let Some((l, r)) = node.children {
                parent[l] = Some(v);
                parent[r] = Some(v);
            }
        }
        Hierarchy::from_topology(self.n, parent).expect("a BHC tree is a valid hierarchy")
    }

    /// The tree as a binary [`Tree`] (same arena ids); `None` above 64 points.
    pub fn tree(&self) -> Option<Tree> {
        if self.n > Subset::MAX_LEAVES {
            return None;
        }
        let nodes = self
            .nodes
            .iter()
            .enumerate()
            .map(|(v, node)| match node.children {
                Some((l, r)) => Node::Internal(l, r),
                None => Node::Leaf(v),
            })
            .collect();
        Tree::from_arena(nodes, self.nodes.len() - 1).ok()
    }

    /// `log P(node v is a cluster)` under the posterior over the tree's cuts (weight
    /// `∏ αΓ(|C|) p(D_C)` per cut): `log g(v) + Σ log f(sibling) − log f(root)` along the path,
    /// which equals `log r_v + Σ_{ancestors u} log(1 − r_u)`. Indexed by node id.
    pub fn log_cluster_marginals(&self) -> Vec<f64> {
        let ln_alpha = self.alpha.ln();
        let root = self.nodes.len() - 1;
        let log_f_root = self.log_f();
        let mut outside = vec![0.0; self.nodes.len()];
        let mut out = vec![f64::NEG_INFINITY; self.nodes.len()];
        // Parents come after their children, so a reverse sweep visits parents first.
        for v in (0..=root).rev() {
            let node = &self.nodes[v];
            let log_g = ln_alpha + ln_gamma(node.size as f64) + node.log_h1;
            out[v] = log_g + outside[v] - log_f_root;
            if let Some((l, r)) = node.children {
                outside[l] = outside[v] + self.nodes[r].log_f();
                outside[r] = outside[v] + self.nodes[l].log_f();
            }
        }
        out
    }

    /// BHC's implied co-clustering: `P(i and j in one cluster)` under the posterior over the
    /// tree's cuts, the sum of the cluster marginals of the nodes above both (1 on the
    /// diagonal). `N × N`, `O(N²)`.
    pub fn coclustering(&self) -> Vec<Vec<f64>> {
        let marg: Vec<f64> = self
            .log_cluster_marginals()
            .iter()
            .map(|x| x.exp())
            .collect();
        // above[v] = Σ of the marginals of v and its ancestors.
        let mut above = vec![0.0; self.nodes.len()];
        above[self.nodes.len() - 1] = marg[self.nodes.len() - 1];
        for v in (0..self.nodes.len()).rev() {
            if let Some((l, r)) = self.nodes[v].children {
                above[l] = above[v] + marg[l];
                above[r] = above[v] + marg[r];
            }
        }
        let mut p = vec![vec![0.0; self.n]; self.n];
        for (v, node) in self.nodes.iter().enumerate() {
            if let Some((l, r)) = node.children {
                let (a, b) = (self.leaves_below(l), self.leaves_below(r));
                for &i in &a {
                    for &j in &b {
                        p[i][j] = above[v];
                        p[j][i] = above[v];
                    }
                }
            }
        }
        for (i, row) in p.iter_mut().enumerate() {
            row[i] = 1.0;
        }
        p
    }
}

/// BHC on the points of `model` with DP concentration `alpha`: the tree, `log p(D|T)`, every
/// node's `r_k`. `O(N²)` marginal-likelihood evaluations (the pair rows in parallel).
pub fn bhc_greedy<M: ConjugateModel>(model: &M, alpha: f64) -> Result<BhcResult, BhcError> {
    check_alpha(alpha)?;
    let n = model.n_points();
    if n == 0 {
        return Err(BhcError::Empty);
    }
    let ln_alpha = alpha.ln();
    let nodes = agglomerate(
        model,
        |_, h1| BhcNode::leaf(ln_alpha, h1),
        |nodes, i, j, h1| BhcNode::merge(ln_alpha, (i, &nodes[i]), (j, &nodes[j]), h1).log_r,
        |nodes, i, j, h1| {
            let node = BhcNode::merge(ln_alpha, (i, &nodes[i]), (j, &nodes[j]), h1);
            nodes.push(node);
        },
    )?;
    Ok(BhcResult { n, alpha, nodes })
}

/// `log f(T)` of any binary tree over the model's points (at most 64): the recursion
/// `f(T_k) = αΓ(n_k) p(D_k) + f(T_i) f(T_j)` bottom up.
pub fn log_f_of_tree<M: ConjugateModel>(energy: &DpmEnergy<'_, M>, tree: &Tree) -> f64 {
    fn rec<M: ConjugateModel>(e: &DpmEnergy<'_, M>, t: &Tree, v: usize) -> (M::Stat, f64, usize) {
        match t.nodes()[v] {
            Node::Leaf(i) => {
                let s = e.model().leaf(i);
                let g = e.log_g(1, &s);
                (s, g, 1)
            }
            Node::Internal(l, r) => {
                let (sl, fl, nl) = rec(e, t, l);
                let (sr, fr, nr) = rec(e, t, r);
                let s = e.model().merge(&sl, &sr);
                let g = e.log_g(nl + nr, &s);
                (s, log_add_exp(g, fl + fr), nl + nr)
            }
        }
    }
    rec(energy, tree, tree.root()).1
}
