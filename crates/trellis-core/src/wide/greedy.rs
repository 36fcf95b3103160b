//! Greedy agglomeration at any `N`: from single leaves, repeatedly merge the pair of current
//! clusters with the best score (`log psi` or the revenue score, [`MergeScore`]).
//!
//! Ties go to the first pair, clusters in order of creation (leaves first), exactly as
//! [`crate::search::greedy_scored`]. Cross sums between current clusters sit in an `N × N`
//! matrix indexed by slot (a merged cluster takes its first part's slot; its row is the sum of
//! its parts' rows, O(N) per merge). Each cluster keeps its best partner among the clusters
//! created after it; only rows whose partner was just merged are rescanned, so a run costs
//! O(N²) time typically and O(N³) at worst, with O(N²) memory.

use super::{check_cancel, energy, filled, from_merges, merge_score, Found, PairModel, WideError};
use crate::search::MergeScore;

/// Greedy agglomeration over all leaves of `model`, ranking merges by `score`; the tree's
/// `log_psi` is always the model's ([`energy::log_psi`]). Errors for a model with no leaves,
/// when the `N × N` cross sums do not fit in memory, and when cancelled.
pub fn greedy<M: PairModel>(model: &M, score: MergeScore) -> Result<Found, WideError> {
    let n = model.n_leaves();
    if n == 0 {
        return Err(WideError::Empty);
    }
    let cancel = crate::cancel::Cancel::new();
    let mut cross = filled(
        "greedy's cross sums between clusters",
        n * n,
        M::Sums::default(),
    )?;
    for i in 0..n {
        check_cancel(&cancel)?;
        for j in 0..n {
            if i != j {
                cross[i * n + j] = model.weight(i, j);
            }
        }
    }
    let mut stat = vec![model.leaf(); n];
    // The hierarchy node of the cluster in each slot.
    let mut node: Vec<usize> = (0..n).collect();
    // Slots of the current clusters, in order of creation.
    let mut order: Vec<usize> = (0..n).collect();
    // Each slot's best (score, partner slot) among the clusters created after it.
    let mut best: Vec<Option<(f64, usize)>> = vec![None; n];
    let pair = |stat: &[super::Stat<M::Sums>], cross: &[M::Sums], x: usize, y: usize| {
        merge_score(model, score, &stat[x], &stat[y], cross[x * n + y])
    };
    let rescan = |stat: &[super::Stat<M::Sums>], cross: &[M::Sums], order: &[usize], p: usize| {
        let x = order[p];
        let mut b: Option<(f64, usize)> = None;
        for &y in &order[p + 1..] {
            let v = pair(stat, cross, x, y);
            if b.is_none_or(|(w, _)| v > w) {
                b = Some((v, y));
            }
        }
        b
    };
    for p in 0..n {
        if p.is_multiple_of(64) {
            check_cancel(&cancel)?;
        }
        best[order[p]] = rescan(&stat, &cross, &order, p);
    }
    let mut merges: Vec<(usize, usize)> = Vec::with_capacity(n.saturating_sub(1));
    while order.len() > 1 {
        check_cancel(&cancel)?;
        // The first pair with the best score: the first row whose best is largest.
        let mut top: Option<(f64, usize, usize)> = None;
        for &x in &order {
            if let Some((v, y)) = best[x] {
                if top.is_none_or(|(w, _, _)| v > w) {
                    top = Some((v, x, y));
                }
            }
        }
        let (_, a, b) = top.expect("two or more clusters have a pair");
        merges.push((node[a], node[b]));
        node[a] = n + merges.len() - 1;
        // The new cluster takes slot `a`, after every other in the order of creation.
        let ab = cross[a * n + b];
        stat[a] = stat[a].join(&stat[b], ab);
        order.retain(|&x| x != a && x != b);
        for &x in &order {
            let v = cross[a * n + x] + cross[b * n + x];
            cross[a * n + x] = v;
            cross[x * n + a] = v;
        }
        order.push(a);
        best[a] = None;
        best[b] = None;
        let last = order.len() - 1;
        for p in 0..last {
            let x = order[p];
            match best[x] {
                Some((_, y)) if y == a || y == b => best[x] = rescan(&stat, &cross, &order, p),
                current => {
                    let v = pair(&stat, &cross, x, a);
                    if current.is_none_or(|(w, _)| v > w) {
                        best[x] = Some((v, a));
                    }
                }
            }
        }
    }
    let tree = from_merges(n, &merges)?;
    Ok(Found {
        log_psi: energy::log_psi(model, &tree)?,
        tree,
    })
}
