//! The generative process (spec §2.3, paper eqs 1–3) and the density of one point's path, which
//! the detach/reattach proposal of the sampler reuses (spec §2.8 step 3 and step 5).
//!
//! A new point starts at the zero node. On a segment u→v traversed by m earlier points it
//! diverges at t_d = A⁻¹(A(t_u) + E/rate(m)), E ~ Exp(1), i.e. s_d = s_u + E/(c·rate(m)) on the
//! log scale s = −ln(1 − t) of [`super::tree`], if t_d < t_v; otherwise at the internal
//! node v it follows child k with probability (n_k − α)/(m + θ) or starts a new branch with
//! probability (θ + αK)/(m + θ). Locations are Brownian: x_v ~ N(x_{pa(v)}, σ²(t_v − t_{pa(v)}) I).
//!
//! Draw order (for reproducibility): per segment one Exp(1); per internal node reached one
//! uniform for the branch choice.

use super::params::{Params, Tables};
use super::tree::{Position, PydtTree, NONE};
use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp1, StandardNormal};

/// One point's walk down `tree` (counts as they are). Returns where it diverges, or `None` when
/// that place is not earlier than log-scale time `s_max` (the detach/reattach validity rule: a
/// subtree whose root is at `s_max` can only hang from earlier positions). `s_max = ∞` never
/// fails.
pub fn walk<R: Rng + ?Sized>(
    tree: &PydtTree,
    params: &Params,
    tables: &Tables,
    s_max: f64,
    rng: &mut R,
) -> Option<Position> {
    let mut s_u = 0.0;
    let mut v = tree.root();
    loop {
        let node = tree.node(v);
        let e: f64 = Exp1.sample(rng);
        let s_d = s_u + e / (params.c * tables.rate(node.leaves));
        if s_d < node.s {
            return (s_d < s_max && s_d > s_u).then_some(Position::Segment { below: v, s: s_d });
        }
        if node.s >= s_max {
            return None;
        }
        let m = node.leaves as f64;
        let u: f64 = rng.random::<f64>() * (m + tables.theta());
        let mut acc = 0.0;
        let mut next = NONE;
        for c in tree.children(v) {
            acc += tree.node(c).leaves as f64 - tables.alpha();
            if u < acc {
                next = c;
                break;
            }
        }
        if next == NONE {
            if tables.ln_new_branch(node.n_children, node.leaves) == f64::NEG_INFINITY {
                // Binary-only settings: rounding left u just above the children's total.
                next = tree
                    .children(v)
                    .last()
                    .expect("internal nodes have children");
            } else {
                return Some(Position::Node(v));
            }
        }
        s_u = node.s;
        v = next;
    }
}

/// log density of the single-point process producing `pos` on `tree` (spec §2.8 step 5):
/// survival along every fully traversed segment, the branch choice at every node passed, and at
/// the end either the divergence density on the segment or the new-branch probability at the node.
pub fn ln_position_density(
    tree: &PydtTree,
    params: &Params,
    tables: &Tables,
    pos: Position,
) -> f64 {
    let target = match pos {
        Position::Segment { below, .. } => below,
        Position::Node(v) => v,
    };
    let mut path = vec![target];
    let mut v = target;
    while tree.node(v).parent != NONE {
        v = tree.node(v).parent;
        path.push(v);
    }
    // Cumulative hazard A = c·s; the divergence density is with respect to t, log a(t) = log c + s.
    let mut ln_q = 0.0;
    let mut a_u = 0.0;
    for (i, &v) in path.iter().enumerate().rev() {
        let node = tree.node(v);
        let r = tables.rate(node.leaves);
        if i == 0 {
            if let Position::Segment { s, .. } = pos {
                let a_d = params.c * s;
                return ln_q - (a_d - a_u) * r + params.c.ln() + s + tables.ln_rate(node.leaves);
            }
        }
        let a_v = params.c * node.s;
        ln_q -= (a_v - a_u) * r;
        if i == 0 {
            return ln_q + tables.ln_new_branch(node.n_children, node.leaves);
        }
        ln_q += tables.ln_follow(tree.node(path[i - 1]).leaves, node.leaves);
        a_u = a_v;
    }
    unreachable!("the path ends at the target")
}

/// Draw a tree over `n ≥ 1` leaves from the PYDT prior (points added in the order 0..n).
///
/// # Panics
/// If `n = 0`.
pub fn sample_tree<R: Rng + ?Sized>(n: usize, params: &Params, rng: &mut R) -> PydtTree {
    assert!(n > 0, "sample_tree needs at least one leaf");
    let tables = Tables::new(params, n);
    let mut tree = PydtTree::single(n);
    for i in 1..n {
        let pos = loop {
            // Never fails with s_max = ∞ (kept as a loop for a divergence exactly at s_u).
            if let Some(p) = walk(&tree, params, &tables, f64::INFINITY, rng) {
                break p;
            }
        };
        tree.attach(i, pos);
    }
    tree
}

/// Brownian locations down `tree` from the origin (σ², `d` dimensions): the rows of the leaves.
/// Draw order: pre-order from the root, d normals per node.
pub fn sample_leaves<R: Rng + ?Sized>(
    tree: &PydtTree,
    d: usize,
    sigma2: f64,
    rng: &mut R,
) -> Vec<Vec<f64>> {
    let mut x = vec![vec![0.0; d]; tree.capacity()];
    let mut stack = vec![tree.root()];
    while let Some(v) = stack.pop() {
        let p = tree.node(v).parent;
        let sd = (sigma2 * tree.branch_length(v)).sqrt();
        let base = if p == NONE {
            vec![0.0; d]
        } else {
            x[p].clone()
        };
        for (xk, b) in x[v].iter_mut().zip(base) {
            let z: f64 = StandardNormal.sample(rng);
            *xk = b + sd * z;
        }
        stack.extend(tree.children(v));
    }
    x.truncate(tree.n_leaves());
    x
}
