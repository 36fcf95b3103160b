//! The agglomeration loop BHC and greedy BRT share: every pair of current clusters scored from
//! the marginal likelihood of their union, the table of pairs in a binary heap with lazy
//! deletion (a popped pair whose clusters are gone is skipped), the best pair merged, the new
//! cluster scored against every other live one (in parallel), until one is left. `O(N²)`
//! evaluations of `p(D_C)`: `N²/2` at the start, one row per merge. Ties go to the pair with the
//! smaller node ids, so a run is deterministic.

use super::{BhcError, ConjugateModel};
use rayon::prelude::*;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Pairs scored between cancellation checks while the first table is made (a few ms of
/// Gaussian marginals in a few dimensions; a tenth of a second at 50).
const PAIRS_PER_BLOCK: usize = 4096;

/// A candidate merge: higher score first, then smaller ids.
#[derive(Clone, Copy, Debug)]
struct Cand {
    score: f64,
    i: usize,
    j: usize,
}

impl PartialEq for Cand {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Cand {}
impl PartialOrd for Cand {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Cand {
    fn cmp(&self, o: &Self) -> Ordering {
        self.score
            .total_cmp(&o.score)
            .then_with(|| (o.i, o.j).cmp(&(self.i, self.j)))
    }
}

/// Agglomerates the points of `model` (at least one). Nodes are ids into the returned vector:
/// `leaf(i, log p(D_i))` makes the nodes `0..n`; `score(nodes, i, j, log p(D_i ∪ D_j))` ranks
/// a pair (NaN ranks last); `merge(nodes, i, j, log p(D_i ∪ D_j))` pushes the merged node
/// (its id is the vector's length before the push) and may update others. Checks for
/// cancellation once per merge ([`BhcError::Cancelled`]).
pub(crate) fn agglomerate<M: ConjugateModel, N: Send + Sync>(
    model: &M,
    leaf: impl Fn(usize, f64) -> N + Sync,
    score: impl Fn(&[N], usize, usize, f64) -> f64 + Sync,
    mut merge: impl FnMut(&mut Vec<N>, usize, usize, f64),
) -> Result<Vec<N>, BhcError> {
    // The token first: `O(N²)` evaluations in all, checked a merge at a time.
    let cancel = crate::cancel::Cancel::new();
    let n = model.n_points();
    let mut stats: Vec<Option<M::Stat>> = (0..n).map(|i| Some(model.leaf(i))).collect();
    let mut nodes: Vec<N> = (0..n)
        .into_par_iter()
        .map(|i| leaf(i, model.log_marginal(stats[i].as_ref().unwrap())))
        .collect();
    let rank = |nodes: &[N], stats: &[Option<M::Stat>], i: usize, j: usize| {
        let (si, sj) = (stats[i].as_ref().unwrap(), stats[j].as_ref().unwrap());
        let s = score(nodes, i, j, model.log_marginal(&model.merge(si, sj)));
        Cand {
            score: if s.is_nan() { f64::NEG_INFINITY } else { s },
            i,
            j,
        }
    };
    // The first table of pairs, a block of rows at a time (at most [`PAIRS_PER_BLOCK`] pairs,
    // or one row), checking for cancellation between blocks: `N²/2` evaluations in all.
    let mut pairs: Vec<Cand> = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    let mut first = 0;
    while first < n {
        if cancel.is_cancelled() {
            return Err(BhcError::Cancelled);
        }
        let (mut last, mut count) = (first + 1, n - first - 1);
        while last < n && count + (n - last - 1) <= PAIRS_PER_BLOCK {
            count += n - last - 1;
            last += 1;
        }
        pairs.par_extend((first..last).into_par_iter().flat_map_iter(|i| {
            let (nodes, stats, rank) = (&nodes, &stats, &rank);
            (i + 1..n).map(move |j| rank(nodes, stats, i, j))
        }));
        first = last;
    }
    let mut heap: BinaryHeap<Cand> = pairs.into();
    let mut active: Vec<usize> = (0..n).collect();
    while active.len() > 1 {
        if cancel.is_cancelled() {
            return Err(BhcError::Cancelled);
        }
        let c = loop {
            let c = heap.pop().expect("every live pair is in the heap");
            if stats[c.i].is_some() && stats[c.j].is_some() {
                break c;
            }
        };
        let (si, sj) = (stats[c.i].take().unwrap(), stats[c.j].take().unwrap());
        let merged = model.merge(&si, &sj);
        let k = nodes.len();
        merge(&mut nodes, c.i, c.j, model.log_marginal(&merged));
        debug_assert_eq!(nodes.len(), k + 1);
        stats.push(Some(merged));
        active.retain(|&v| v != c.i && v != c.j);
        let row: Vec<Cand> = active
            .par_iter()
            .map(|&v| rank(&nodes, &stats, v, k))
            .collect();
        heap.extend(row);
        active.push(k);
    }
    Ok(nodes)
}
