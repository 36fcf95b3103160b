//! `log psi(T)` of a binary [`Hierarchy`] under a [`PairModel`]: the sum of `log psi(A, B)` over
//! its internal nodes, each node's cross sum summed over its pairs of leaves (every pair once,
//! at its lowest common ancestor: O(N²) in all, O(N) memory beside the tree).
//!
//! Summed as [`crate::tree::Tree::log_likelihood`] sums: a node split into `A` (the child
//! holding its lowest leaf) and `B` is worth `(log psi(A, B) + value(A)) + value(B)`.

use super::{check_cancel, PairModel, Stat, WideError};
use crate::hierarchy::Hierarchy;

/// `Ok` when `h` is a binary tree over the model's `n` leaves.
pub(crate) fn check_tree(n: usize, h: &Hierarchy) -> Result<(), WideError> {
    if h.n_leaves() != n {
        return Err(WideError::Tree(format!(
            "the tree has {} leaves but the model {n}; pass a tree over the model's points",
            h.n_leaves()
        )));
    }
    if let Some(v) = (n..h.n_nodes()).find(|&v| h.children(v).len() != 2) {
        return Err(WideError::Tree(format!(
            "node {v} has {} children: the pairwise energies score binary trees only",
            h.children(v).len()
        )));
    }
    Ok(())
}

/// `log psi(T)` of the binary hierarchy `h` (the same value as
/// `Tree::log_likelihood(model)` for the mask models, up to rounding). Errors when `h` is not
/// a binary tree over the model's leaves, or when cancelled.
pub fn log_psi<M: PairModel>(model: &M, h: &Hierarchy) -> Result<f64, WideError> {
    let n = model.n_leaves();
    check_tree(n, h)?;
    let cancel = crate::cancel::Cancel::new();
    check_cancel(&cancel)?;
    let nodes = h.n_nodes();
    let mut below: Vec<Vec<usize>> = vec![Vec::new(); nodes];
    let mut stat: Vec<Stat<M::Sums>> = vec![model.leaf(); nodes];
    let mut lowest: Vec<usize> = (0..nodes).collect();
    let mut value = vec![0.0f64; nodes];
    let mut work = 0usize;
    for &v in h.postorder() {
        if v < n {
            below[v] = vec![v];
            continue;
        }
        let (a, b) = match *h.children(v) {
            [x, y] if lowest[x] < lowest[y] => (x, y),
            [x, y] => (y, x),
            _ => unreachable!("checked binary"),
        };
        let (la, lb) = (std::mem::take(&mut below[a]), std::mem::take(&mut below[b]));
        work += la.len() * lb.len();
        if work > 1 << 20 {
            work = 0;
            check_cancel(&cancel)?;
        }
        let cross = model.cross_of(&la, &lb);
        value[v] = (model.log_psi(&stat[a], &stat[b], cross) + value[a]) + value[b];
        stat[v] = stat[a].join(&stat[b], cross);
        lowest[v] = lowest[a];
        let mut all = la;
        all.extend(lb);
        below[v] = all;
    }
    Ok(value[h.root()])
}
