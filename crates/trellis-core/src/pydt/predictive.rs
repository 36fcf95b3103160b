//! Predictive density of a new point given a tree (spec §4.5, paper §5.3).
//!
//! A new point walks down the tree by the generative process (spec §2.3), so it starts a new
//! branch at internal node v, or diverges on the segment above node v, with probabilities that
//! follow from the survival and branch-choice factors. Given where and when it diverges, its
//! location is Gaussian: the posterior marginal of the divergence location (belief propagation,
//! both passes) plus Brownian motion to t = 1. The paper averages three sampled divergence times
//! per segment; here each segment's divergence time, conditional on diverging there, is taken at
//! `k` equally spaced quantiles (deterministic, so the same tree gives the same density), and the
//! density is the resulting mixture of Gaussians.

use super::bp::{self, Leaves, Messages};
use super::params::{Params, Tables};
use super::tree::PydtTree;
use super::PydtError;
use crate::numeric::{log_sum_exp, LN_2PI};

/// One mixture component: probability of the divergence place and time, and the log density of
/// `x` there.
fn ln_gauss(x: &[f64], mean: impl Fn(usize) -> (f64, f64)) -> f64 {
    x.iter()
        .enumerate()
        .map(|(k, &xk)| {
            let (m, v) = mean(k);
            -0.5 * (LN_2PI + v.ln()) - 0.5 * (xk - m).powi(2) / v
        })
        .sum()
}

/// log p(x | X, T, t, θ, α, c, σ²) for each row of `new`, observed with Gaussian noise of
/// variance `noise` (0 in the paper's model), with `k ≥ 1` divergence-time quantiles per segment.
pub fn ln_predictive(
    tree: &PydtTree,
    leaves: &Leaves,
    params: &Params,
    new: &[Vec<f64>],
    noise: f64,
    k: usize,
) -> Result<Vec<f64>, PydtError> {
    if k == 0 {
        return Err(PydtError::Data(
            "the predictive density needs k >= 1 time quantiles per segment".into(),
        ));
    }
    if leaves.n != tree.n_leaves() {
        return Err(PydtError::Data(format!(
            "{} points for a tree of {} leaves",
            leaves.n,
            tree.n_leaves()
        )));
    }
    if !(noise >= 0.0 && noise.is_finite()) {
        return Err(PydtError::Data(format!(
            "observation noise {noise} must be finite and >= 0"
        )));
    }
    if let Some(r) = new.iter().find(|r| r.len() != leaves.d) {
        return Err(PydtError::Data(format!(
            "a held-out point has {} values, the data have {}",
            r.len(),
            leaves.d
        )));
    }
    let tables = Tables::new(params, tree.n_leaves() + 1);
    let sigma2 = params.sigma2;
    let mut msgs = Messages::default();
    bp::upward(tree, leaves, sigma2, &mut msgs);
    bp::downward(tree, sigma2, &mut msgs);
    // Reach probabilities (log): arriving at the top of the segment above v.
    let mut order = Vec::new();
    tree.postorder(&mut order);
    let mut ln_reach = vec![f64::NEG_INFINITY; tree.capacity()];
    ln_reach[tree.root()] = 0.0;
    let mut comps: Vec<Vec<f64>> = vec![Vec::new(); new.len()];
    for &v in order.iter().rev() {
        let node = tree.node(v);
        let (s_u, s_v) = (tree.parent_s(v), node.s);
        let lambda = params.c * tables.rate(node.leaves);
        let big_u = lambda * (s_v - s_u);
        // Diverging on the segment: probability 1 − e^{−U}.
        let ln_seg = ln_reach[v] + (-(-big_u).exp_m1()).ln();
        for q in 0..k {
            let frac = (q as f64 + 0.5) / k as f64;
            let u = -(-frac * -(-big_u).exp_m1()).ln_1p();
            let s_d = s_u + u / lambda;
            let above_len = (-s_u).exp() * -(-(s_d - s_u)).exp_m1();
            let below_len = (-s_d).exp() * -(-(s_v - s_d)).exp_m1();
            let to_one = (-s_d).exp();
            for (row, out) in new.iter().zip(comps.iter_mut()) {
                let ln_g = ln_gauss(row, |dim| {
                    let (a, al) = msgs.cavity(v, dim);
                    let (b, be) = (msgs.mu(v, dim), msgs.w(v, dim));
                    let (va, vb) = (al + sigma2 * above_len, be + sigma2 * below_len);
                    let prec = 1.0 / va + 1.0 / vb;
                    (
                        (a / va + b / vb) / prec,
                        1.0 / prec + sigma2 * to_one + noise,
                    )
                });
                out.push(ln_seg - (k as f64).ln() + ln_g);
            }
        }
        if tree.is_leaf(v) {
            continue;
        }
        let ln_arrive = ln_reach[v] - big_u;
        let m = node.leaves;
        let ln_new = ln_arrive + tables.ln_new_branch(node.n_children, m);
        if ln_new > f64::NEG_INFINITY {
            let to_one = (-s_v).exp();
            for (row, out) in new.iter().zip(comps.iter_mut()) {
                let ln_g = ln_gauss(row, |dim| {
                    let (mean, var) = msgs.marginal(tree, sigma2, v, dim);
                    (mean, var + sigma2 * to_one + noise)
                });
                out.push(ln_new + ln_g);
            }
        }
        for ch in tree.children(v) {
            ln_reach[ch] = ln_arrive + tables.ln_follow(tree.node(ch).leaves, m);
        }
    }
    Ok(comps.iter().map(|c| log_sum_exp(c)).collect())
}
