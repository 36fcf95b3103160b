//! A tree's rank among all `(2N-3)!!` trees: how many trees score strictly higher, counted
//! exactly by branch and bound over the full trellis.
//!
//! A tree on cluster `C` with root split `(A, B)` scores `log psi(A, B) + s(A) + s(B)`, where
//! `s(A)` is the score of its subtree on `A`. The trellis gives, for every cluster, the best
//! subtree score `MAP(A)`. To list the trees on `C` scoring above `t`: for each split, skip it
//! when `log psi + MAP(A) + MAP(B) <= t` (no tree through it can beat `t`); otherwise list the
//! trees on `A` scoring above `t - log psi - MAP(B)` and, for each such tree with score `s_A`,
//! the trees on `B` scoring above `t - log psi - s_A`. Every tree listed beats `t` and none is
//! missed, so the count is exact; the work grows with the count (about `N` calls per tree
//! listed) and stops at `cap`. A tree's rank is 1 plus the number of trees scoring strictly
//! above it (ties share a rank). The count stops at its next check (every [`CHECK_EVERY`]
//! splits looked at) when its [`crate::cancel`] token is cancelled.

use super::{ExactError, FullTrellis};
use crate::cancel::Cancel;
use crate::model::SplitModel;
use crate::subset::Subset;
use crate::tree::Tree;
use std::cell::Cell;

/// Nanoseconds per tree counted above a tree and per leaf, the cost model of a count (measured:
/// 1,000,000 trees in 0.13–0.23 s at N = 20 on 2 cores).
pub const NS_PER_TREE_AND_LEAF: f64 = 10.0;

/// The largest cap a count takes (the board's `rank_cap` limit): at most about 4 minutes by the
/// cost model at the exact trellis's 24 leaves.
pub const MAX_CAP: u64 = 1_000_000_000;

/// Seconds to count at most `cap` trees above a tree over `n` leaves, by the cost model.
pub fn seconds(n: usize, cap: u64) -> f64 {
    cap as f64 * n as f64 * NS_PER_TREE_AND_LEAF * 1e-9
}

/// How many splits a count looks at between two checks of its cancel token.
pub const CHECK_EVERY: u64 = 4096;

/// How many trees score above a threshold, counted up to a cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Count {
    /// Trees found (at most the cap).
    pub count: u64,
    /// Whether counting stopped at the cap (the true count is at least `count`).
    pub capped: bool,
}

struct Lister<'a, M: SplitModel> {
    model: &'a M,
    trellis: &'a FullTrellis,
    /// Every cluster's statistic, so that a split's `log psi` costs O(1).
    stats: Vec<M::Stat>,
    cancel: Cancel,
    /// Splits looked at, for the cancel checks.
    looked: Cell<u64>,
    /// Whether the count stopped because its token was cancelled.
    stopped: Cell<bool>,
}

impl<M: SplitModel> Lister<'_, M> {
    fn map(&self, s: Subset) -> f64 {
        if s.is_singleton() {
            return 0.0;
        }
        self.trellis
            .map_log_likelihood_of(s)
            .unwrap_or(f64::NEG_INFINITY)
    }

    /// Calls `f(score)` for every tree on `c` scoring above `t`; stops (returning false) as soon
    /// as `f` returns false.
    fn each_above(&self, c: Subset, t: f64, f: &mut dyn FnMut(f64) -> bool) -> bool {
        if c.is_singleton() {
            return if 0.0 > t { f(0.0) } else { true };
        }
        if self.map(c) <= t {
            return true;
        }
        for (a, b) in c.splits() {
            let looked = self.looked.get() + 1;
            self.looked.set(looked);
            if looked.is_multiple_of(CHECK_EVERY) && self.cancel.is_cancelled() {
                self.stopped.set(true);
            }
            if self.stopped.get() {
                return false;
            }
            let st = |x: Subset| &self.stats[x.0 as usize];
            let psi = self.model.log_psi_with(a, st(a), b, st(b), st(c));
            if psi == f64::NEG_INFINITY || psi.is_nan() {
                continue;
            }
            let (ma, mb) = (self.map(a), self.map(b));
            if psi + ma + mb <= t {
                continue;
            }
            let go = self.each_above(a, t - psi - mb, &mut |sa| {
                self.each_above(b, t - psi - sa, &mut |sb| f(psi + sa + sb))
            });
            if !go {
                return false;
            }
        }
        true
    }
}

/// How many trees are counted between two calls of a count's progress function.
pub const PROGRESS_EVERY: u64 = 4096;

/// The number of trees over all the model's leaves whose log-likelihood is above `threshold`,
/// counted up to `cap`. `trellis` is the model's full trellis. `Err(Cancelled)` when the
/// count's [`crate::cancel`] token is cancelled before it ends.
pub fn count_above<M: SplitModel>(
    model: &M,
    trellis: &FullTrellis,
    threshold: f64,
    cap: u64,
) -> Result<Count, ExactError> {
    count_above_with(model, trellis, threshold, cap, &mut |_| {})
}

/// [`count_above`], calling `progress(count)` every [`PROGRESS_EVERY`] trees counted (for a
/// progress bar; the count is the same).
pub fn count_above_with<M: SplitModel>(
    model: &M,
    trellis: &FullTrellis,
    threshold: f64,
    cap: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Count, ExactError> {
    // The token first: a cancellation while the statistics are made stops the count.
    let cancel = Cancel::new();
    let n = model.n_leaves();
    if trellis.n_leaves() != n {
        return Err(ExactError::ModelMismatch {
            trellis: trellis.n_leaves(),
            model: n,
        });
    }
    let stats = model.stat_table().map_err(|_| ExactError::TooLarge {
        what: "a rank count",
        n,
        limit: crate::model::MAX_TABLE_LEAVES,
    })?;
    let lister = Lister {
        model,
        trellis,
        stats,
        cancel,
        looked: Cell::new(0),
        stopped: Cell::new(false),
    };
    let mut count = 0u64;
    let mut capped = false;
    if cap > 0 {
        lister.each_above(Subset::full(n), threshold, &mut |_| {
            count += 1;
            if count.is_multiple_of(PROGRESS_EVERY) {
                progress(count);
            }
            if count >= cap {
                capped = true;
            }
            !capped
        });
    } else {
        capped = true;
    }
    if lister.stopped.get() {
        return Err(ExactError::Cancelled);
    }
    Ok(Count { count, capped })
}

/// A tree's rank among every tree on the model's leaves by log-likelihood: 1 + the number of
/// trees scoring more than `tol · max(1, |L|)` above the tree's `L` (so the MAP tree, and trees
/// tied with it, rank 1). With `capped`, the rank is at least `count + 1`.
pub fn rank<M: SplitModel>(
    model: &M,
    trellis: &FullTrellis,
    tree: &Tree,
    tol: f64,
    cap: u64,
) -> Result<Count, ExactError> {
    rank_with(model, trellis, tree, tol, cap, &mut |_| {})
}

/// [`rank`], calling `progress(trees counted above)` as [`count_above_with`] does.
pub fn rank_with<M: SplitModel>(
    model: &M,
    trellis: &FullTrellis,
    tree: &Tree,
    tol: f64,
    cap: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Count, ExactError> {
    let l = tree.log_likelihood(model);
    if l.is_nan() || tree.leaves() != Subset::full(model.n_leaves()) {
        return Err(ExactError::BadCluster {
            cluster: format!("{:?}", tree.leaves().iter().collect::<Vec<_>>()),
            n: model.n_leaves(),
        });
    }
    // A forbidden tree (-inf) ranks after every finite tree.
    let threshold = if l == f64::NEG_INFINITY {
        f64::NEG_INFINITY
    } else {
        l + tol * l.abs().max(1.0)
    };
    let above = count_above_with(model, trellis, threshold, cap, progress)?;
    Ok(Count {
        count: above.count + 1,
        capped: above.capped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ginkgo::{generate_dataset, GinkgoParams};

    #[test]
    fn ranks_equal_a_sort_of_every_tree() {
        let jets = generate_dataset(&GinkgoParams::qcd(), 6, 4, 7, 11, 10_000, "rank").unwrap();
        let mut forbidden = 0;
        for jet in &jets.jets {
            let model = jet.model().unwrap();
            let trellis = FullTrellis::build(&model).unwrap();
            let n = model.n_leaves();
            let all = Tree::enumerate_all(Subset::full(n)).unwrap();
            let scores: Vec<f64> = all.iter().map(|t| t.log_likelihood(&model)).collect();
            for (k, t) in all.iter().enumerate().step_by(13) {
                let l = scores[k];
                let above = if l == f64::NEG_INFINITY {
                    f64::NEG_INFINITY
                } else {
                    l + 1e-9 * l.abs().max(1.0)
                };
                let want = 1 + scores.iter().filter(|&&s| s > above).count() as u64;
                let got = rank(&model, &trellis, t, 1e-9, u64::MAX).unwrap();
                assert_eq!(
                    got,
                    Count {
                        count: want,
                        capped: false
                    },
                    "n = {n}"
                );
            }
            let map = rank(&model, &trellis, &trellis.map_tree(), 1e-9, 10).unwrap();
            // A forbidden tree ranks after every finite one.
            if let Some(k) = scores.iter().position(|s| *s == f64::NEG_INFINITY) {
                let r = rank(&model, &trellis, &all[k], 1e-9, u64::MAX).unwrap();
                assert_eq!(r.count as u128, trellis.n_trees_finite() + 1);
                forbidden += 1;
            }
            assert_eq!(map.count, 1);
            // Every finite tree is above -inf.
            let finite = count_above(&model, &trellis, f64::NEG_INFINITY, u64::MAX).unwrap();
            assert_eq!(finite.count as u128, trellis.n_trees_finite());
            // Progress is told every PROGRESS_EVERY trees, and the count is the same.
            let mut told = Vec::new();
            let with = count_above_with(&model, &trellis, f64::NEG_INFINITY, u64::MAX, &mut |c| {
                told.push(c)
            })
            .unwrap();
            assert_eq!(with, finite);
            let every: Vec<u64> = (1..=with.count / PROGRESS_EVERY)
                .map(|k| k * PROGRESS_EVERY)
                .collect();
            assert_eq!(told, every);
            // The cap stops the count.
            let c = count_above(&model, &trellis, f64::NEG_INFINITY, 5).unwrap();
            assert_eq!(
                c,
                Count {
                    count: 5,
                    capped: true
                }
            );
        }
        assert!(forbidden > 0, "no jet had a forbidden tree to rank");
    }

    #[test]
    fn a_cancelled_token_stops_a_count_and_the_cost_model_is_linear() {
        let jets = generate_dataset(&GinkgoParams::qcd(), 1, 9, 9, 3, 10_000, "rank").unwrap();
        let model = jets.jets[0].model().unwrap();
        let trellis = FullTrellis::build(&model).unwrap();
        let every = count_above(&model, &trellis, f64::NEG_INFINITY, u64::MAX).unwrap();
        assert!(every.count > 10_000 && !every.capped, "{every:?}");
        let handle = crate::cancel::CancelHandle::new();
        handle.cancel();
        let stopped = crate::cancel::scope(&handle.token(), || {
            count_above(&model, &trellis, f64::NEG_INFINITY, u64::MAX)
        });
        assert!(matches!(stopped, Err(ExactError::Cancelled)), "{stopped:?}");
        assert!((seconds(20, 1_000_000) - 0.2).abs() < 1e-12);
        assert!(seconds(24, MAX_CAP) < 600.0);
    }
}
