//! Greedy Bayesian rose trees (Blundell, Teh & Heller, UAI 2010).
//!
//! ## Our reading of the paper
//! A rose tree `T` over data `D_T` has any number `n_T ≥ 2` of children at each internal node.
//! Its likelihood mixes "all of `D_T` is one cluster" with "the children are independent":
//!
//! `p(D_T | T) = π_T f(D_T) + (1 − π_T) ∏_{c ∈ ch(T)} p(D_c | c)`, `p(D_i | leaf i) = f(D_i)`,
//!
//! where `f` is the cluster model's marginal likelihood ([`ConjugateModel`]; no CRP factor, unlike
//! BHC) and `π_T = 1 − (1 − γ)^{n_T − 1}` with a hyperparameter `γ ∈ (0, 1]`: the more children
//! a node has, the likelier it is to be one cluster, which keeps the model from preferring
//! needless cascades of binary splits. The greedy algorithm starts from the singletons and,
//! among all pairs of current trees `T_i, T_j` and the operations
//! - **join**: a new node with children `{T_i, T_j}`;
//! - **absorb**: `T_i` takes `T_j` as one more child (children `ch(T_i) ∪ {T_j}`; `T_i` internal),
//!   or the other way round;
//! - **collapse**: one node with the children of both (`ch(T_i) ∪ ch(T_j)`; both internal);
//!
//! applies the one with the largest likelihood ratio `p(D_m | T_m) / (p(D_i | T_i) p(D_j | T_j))`,
//! until one tree is left. As for BHC the table of pairs is [`super::agglomerate`]'s (`O(N²)`
//! evaluations of `f`); ties go to the smaller node ids, then to the operations in the order
//! listed.

use super::agglomerate::agglomerate;
use super::{BhcError, ConjugateModel};
use crate::hierarchy::Hierarchy;
use crate::model::{log1mexp, log_add_exp};

/// One merge operation of greedy BRT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BrtOp {
    /// A new node with the two trees as children.
    Join,
    /// The first tree takes the second as a child.
    AbsorbIntoFirst,
    /// The second tree takes the first as a child.
    AbsorbIntoSecond,
    /// One node with the children of both.
    Collapse,
}

/// One node of a greedy BRT run (dead nodes were absorbed or collapsed into later ones).
#[derive(Clone, Debug, PartialEq)]
pub struct BrtNode {
    /// Children (node ids); empty at a leaf.
    pub children: Vec<usize>,
    /// Number of points below.
    pub size: usize,
    /// `log f(D_T)`: all points below in one cluster.
    pub log_h1: f64,
    /// `log p(D_T | T)`.
    pub log_p: f64,
    /// `Σ_{c ∈ ch(T)} log p(D_c | c)` (0 at a leaf).
    pub log_p_children: f64,
    /// Whether the node is in the final tree.
    pub alive: bool,
}

/// The result of greedy BRT.
#[derive(Clone, Debug, PartialEq)]
pub struct BrtResult {
    /// Number of points.
    pub n: usize,
    /// The hyperparameter `γ`.
    pub gamma: f64,
    /// Every node made, leaves `0..n` first; the root is the last.
    pub nodes: Vec<BrtNode>,
    /// The operations in the order applied.
    pub ops: Vec<BrtOp>,
}

impl BrtResult {
    /// `log p(D | T)` of the final rose tree.
    pub fn log_p_tree(&self) -> f64 {
        self.nodes.last().expect("a root").log_p
    }

    /// The final rose tree as a [`Hierarchy`] (live internal nodes renumbered `n..` in the order
    /// made; heights are cluster sizes).
    pub fn hierarchy(&self) -> Hierarchy {
        let mut id = vec![usize::MAX; self.nodes.len()];
        let mut next = self.n;
        for (v, node) in self.nodes.iter().enumerate() {
            if v < self.n {
                id[v] = v;
            } else if node.alive {
                id[v] = next;
                next += 1;
            }
        }
        let mut parent = vec![None; next];
        for (v, node) in self.nodes.iter().enumerate() {
            if node.alive {
                for &c in &node.children {
                    parent[id[c]] = Some(id[v]);
                }
            }
        }
        Hierarchy::from_topology(self.n, parent).expect("a BRT is a valid hierarchy")
    }
}

/// `log p(D_T|T)` of a node with `k ≥ 2` children whose log-likelihoods sum to `children`.
fn log_p_node(ln_1mg: f64, k: usize, log_h1: f64, children: f64) -> f64 {
    let ln_not_pi = (k - 1) as f64 * ln_1mg;
    let ln_pi = log1mexp(-ln_not_pi);
    log_add_exp(ln_pi + log_h1, ln_not_pi + children)
}

/// The best operation on the pair `(i, j)`, its score (the log likelihood ratio) and the merged
/// node it makes. Ties go to the operations in [`BrtOp`] order.
fn best_op(
    ln_1mg: f64,
    i: usize,
    a: &BrtNode,
    j: usize,
    b: &BrtNode,
    log_h1: f64,
) -> (f64, BrtOp, BrtNode) {
    let (ka, kb) = (a.children.len(), b.children.len());
    let mut options = vec![(BrtOp::Join, 2, a.log_p + b.log_p)];
    if ka > 0 {
        options.push((BrtOp::AbsorbIntoFirst, ka + 1, a.log_p_children + b.log_p));
    }
    if kb > 0 {
        options.push((BrtOp::AbsorbIntoSecond, kb + 1, a.log_p + b.log_p_children));
    }
    if ka > 0 && kb > 0 {
        options.push((
            BrtOp::Collapse,
            ka + kb,
            a.log_p_children + b.log_p_children,
        ));
    }
    let mut best: Option<(f64, BrtOp, f64, f64)> = None;
    for (op, k, children) in options {
        let lp = log_p_node(ln_1mg, k, log_h1, children);
        let score = lp - a.log_p - b.log_p;
        let score = if score.is_nan() {
            f64::NEG_INFINITY
        } else {
            score
        };
        if best.is_none_or(|(s, ..)| score > s) {
            best = Some((score, op, lp, children));
        }
    }
    let (score, op, log_p, log_p_children) = best.expect("join is always possible");
    let children = match op {
        BrtOp::Join => vec![i, j],
        BrtOp::AbsorbIntoFirst => a.children.iter().copied().chain([j]).collect(),
        BrtOp::AbsorbIntoSecond => b.children.iter().copied().chain([i]).collect(),
        BrtOp::Collapse => a.children.iter().chain(&b.children).copied().collect(),
    };
    let node = BrtNode {
        children,
        size: a.size + b.size,
        log_h1,
        log_p,
        log_p_children,
        alive: true,
    };
    (score, op, node)
}

/// Checks `γ ∈ (0, 1]` and at least one point; returns `N`.
pub(crate) fn check_brt<M: ConjugateModel>(model: &M, gamma: f64) -> Result<usize, BhcError> {
    if !(gamma > 0.0 && gamma <= 1.0) {
        return Err(BhcError::BadParameter {
            name: "gamma",
            value: gamma,
            expected: "BRT's gamma must be in (0, 1]",
        });
    }
    let n = model.n_points();
    if n == 0 {
        return Err(BhcError::Empty);
    }
    Ok(n)
}

/// Greedy BRT on the points of `model` with `γ = gamma ∈ (0, 1]`.
pub fn brt_greedy<M: ConjugateModel>(model: &M, gamma: f64) -> Result<BrtResult, BhcError> {
    let n = check_brt(model, gamma)?;
    let ln_1mg = (1.0 - gamma).ln();
    let mut ops = Vec::with_capacity(n.saturating_sub(1));
    let nodes = agglomerate(
        model,
        |_, h1| BrtNode {
            children: Vec::new(),
            size: 1,
            log_h1: h1,
            log_p: h1,
            log_p_children: 0.0,
            alive: true,
        },
        |nodes, i, j, h1| best_op(ln_1mg, i, &nodes[i], j, &nodes[j], h1).0,
        |nodes, i, j, h1| {
            let (_, op, node) = best_op(ln_1mg, i, &nodes[i], j, &nodes[j], h1);
            match op {
                BrtOp::Join => {}
                BrtOp::AbsorbIntoFirst => nodes[i].alive = false,
                BrtOp::AbsorbIntoSecond => nodes[j].alive = false,
                BrtOp::Collapse => {
                    nodes[i].alive = false;
                    nodes[j].alive = false;
                }
            }
            ops.push(op);
            nodes.push(node);
        },
    )?;
    Ok(BrtResult {
        n,
        gamma,
        nodes,
        ops,
    })
}

/// `log p(D | T)` of a rose tree given as a [`Hierarchy`] over the model's points, by the BRT
/// recursion (for checking a run, or scoring any tree).
pub fn brt_log_p<M: ConjugateModel>(model: &M, gamma: f64, h: &Hierarchy) -> f64 {
    let ln_1mg = (1.0 - gamma).ln();
    let mut stat: Vec<Option<M::Stat>> = vec![None; h.n_nodes()];
    let mut log_p = vec![0.0; h.n_nodes()];
    for &v in h.postorder() {
        let kids = h.children(v);
        if kids.is_empty() {
            let s = model.leaf(v);
            log_p[v] = model.log_marginal(&s);
            stat[v] = Some(s);
        } else {
            let s = kids[1..]
                .iter()
                .fold(stat[kids[0]].clone().unwrap(), |acc, &c| {
                    model.merge(&acc, stat[c].as_ref().unwrap())
                });
            let children: f64 = kids.iter().map(|&c| log_p[c]).sum();
            log_p[v] = log_p_node(ln_1mg, kids.len(), model.log_marginal(&s), children);
            stat[v] = Some(s);
        }
    }
    log_p[h.root()]
}
