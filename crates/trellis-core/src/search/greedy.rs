//! Greedy agglomerative clustering on a [`SplitModel`]: start from single leaves and repeatedly
//! merge the pair of current clusters with the largest `log psi` (purely local, no look-ahead),
//! or the largest revenue score ([`MergeScore::Revenue`]).

use super::{check_leaves, Found, MergeScore, SearchError};
use crate::model::SplitModel;
use crate::subset::Subset;
use crate::tree::Tree;

/// Runs greedy agglomeration over all leaves of `model`. Ties go to the pair that comes first
/// (clusters in order of creation, leaves first). `O(N^2)` potentials are evaluated per step
/// only for pairs that involve the newest cluster; `O(N^3)` comparisons overall.
/// Errors for a model with no leaves or more than 64.
pub fn greedy<M: SplitModel>(model: &M) -> Result<Found, SearchError> {
    greedy_scored(model, MergeScore::Potential)
}

/// [`greedy`] ranking merges by `score`; the tree's `log_likelihood` is always the model's.
pub fn greedy_scored<M: SplitModel>(model: &M, score: MergeScore) -> Result<Found, SearchError> {
    let n = check_leaves(model.n_leaves())?;
    // Active clusters with their subtree and statistics.
    let mut clusters: Vec<(Subset, Tree, M::Stat)> = (0..n)
        .map(|i| {
            let s = Subset::singleton(i);
            (s, Tree::leaf(i), model.stat(s))
        })
        .collect();
    // score[i][j] (i < j) = log psi of merging clusters i and j.
    let pair = |x: &(Subset, Tree, M::Stat), y: &(Subset, Tree, M::Stat)| {
        let u = x.0.union(y.0);
        score.of(model, x.0, &x.2, y.0, &y.2, &model.stat(u))
    };
    let mut score: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if j > i {
                        pair(&clusters[i], &clusters[j])
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect();
    while clusters.len() > 1 {
        let k = clusters.len();
        let (mut bi, mut bj, mut best) = (0, 1, f64::NEG_INFINITY);
        let mut found = false;
        for (i, row) in score.iter().enumerate().take(k) {
            for (j, &v) in row.iter().enumerate().take(k).skip(i + 1) {
                if !found || v > best {
                    (bi, bj, best, found) = (i, j, v, true);
                }
            }
        }
        // Remove j then i (j > i) and append the merged cluster.
        let cj = clusters.remove(bj);
        let ci = clusters.remove(bi);
        score.remove(bj);
        score.remove(bi);
        for row in score.iter_mut() {
            row.remove(bj);
            row.remove(bi);
        }
        let u = ci.0.union(cj.0);
        let merged = (u, Tree::join_disjoint(ci.1, cj.1), model.stat(u));
        let new_col: Vec<f64> = clusters.iter().map(|c| pair(c, &merged)).collect();
        for (row, v) in score.iter_mut().zip(new_col) {
            row.push(v);
        }
        clusters.push(merged);
        score.push(vec![0.0; clusters.len()]);
    }
    let (_, tree, _) = clusters.pop().expect("n >= 1 clusters merge into one");
    // The canonical score, whatever order the merges were found in.
    Ok(Found {
        log_likelihood: tree.log_likelihood(model),
        tree,
    })
}
