//! The best tree under BHC's own objective, and the average of that objective over all binary
//! trees, by a dynamic programme over the `2^N` subsets (`O(3^N)`).
//!
//! BHC's `f(T_S) = g(S) + f(T_A) f(T_B)` (with `g(S) = αΓ(|S|) p(D_S)`) is increasing in both
//! subtrees' values and its first term does not depend on the split, so
//!
//! `F(S) = g(S) + max_{A ⊔ B = S} F(A) F(B)`, `F({i}) = g({i})`
//!
//! is the largest `f(T)` over the binary trees on `S` (induction on `|S|`), and the split kept
//! at each set gives the tree. For the sum over all trees, every tree on `S` contributes `g(S)`
//! once and its two subtrees range independently over the trees on `A` and `B`:
//!
//! `Σ_T f(T) = t(|S|) g(S) + Σ_{A ⊔ B = S} Σf(A) Σf(B)`, `t(k) = (2k − 3)!!` trees on `k` leaves,
//!
//! and the average is `Σ_T f(T) / t(N)`. (Dropping `t(|S|)` would give
//! `Σ_π (2|π| − 3)!! ∏ g(C)`, a sum over partitions weighted by the trees *above* their
//! blocks, which is not an average over trees.) Splits are unordered (`A` holds the lowest point
//! of `S`), in log space throughout; `-inf` flows (a set whose every term is `-inf` gets `-inf`).

use super::BhcError;
use crate::model::log_add_exp;
use crate::subset::Subset;
use crate::tree::Tree;
use rayon::prelude::*;

/// Largest `N` [`best_bhc_tree`] accepts (`3^22 ≈ 3·10^10` terms; N = 20 takes seconds).
pub const MAX_TREE_DP_POINTS: usize = 22;

/// Sets of one size computed between cancellation checks in [`best_bhc_tree`].
const SETS_PER_BLOCK: usize = 1 << 14;

/// The exact extremes of BHC's objective over all binary trees.
#[derive(Clone, Debug)]
pub struct BestTrees {
    /// Number of points.
    pub n: usize,
    /// `log max_T f(T)`.
    pub log_f_max: f64,
    /// A tree attaining it (ties: the first split in [`Subset::splits`] order at each set).
    pub tree: Tree,
    /// `log Σ_T f(T)` over all `(2N − 3)!!` binary trees.
    pub log_f_sum: f64,
    /// `log` of the mean of `f(T)` over all binary trees: `log_f_sum − ln (2N − 3)!!`.
    pub log_f_mean: f64,
}

/// `ln (2k − 3)!!` for `k ≥ 1` (0 for `k ≤ 2`).
pub fn ln_n_binary_trees(k: usize) -> f64 {
    (2..k).map(|j| ((2 * j - 1) as f64).ln()).sum()
}

/// The best and the average `f(T)` over all binary trees on `N` points, from the table
/// `log_g[S] = log g(S)` over all `2^N` subsets (entry 0 unused), e.g.
/// [`crate::flat::ClusterEnergy::log_energy_table`] of a [`super::DpmEnergy`].
pub fn best_bhc_tree(log_g: &[f64], n: usize) -> Result<BestTrees, BhcError> {
    // The token first; checked once per subset size.
    let cancel = crate::cancel::Cancel::new();
    if n == 0 {
        return Err(BhcError::Empty);
    }
    if n > MAX_TREE_DP_POINTS {
        return Err(BhcError::TooManyPoints {
            n,
            limit: MAX_TREE_DP_POINTS,
            what: "the exact best BHC tree (an O(3^N) recursion)",
        });
    }
    if log_g.len() != 1usize << n {
        return Err(BhcError::BadParameter {
            name: "log_g length",
            value: log_g.len() as f64,
            expected: "one entry per subset: 2^N",
        });
    }
    let size = 1usize << n;
    // cell[S] = [log max f, log Σ f] side by side: one cache line per subset read.
    let mut cell = vec![[f64::NEG_INFINITY; 2]; size];
    let mut back = vec![0u64; size];
    for i in 0..n {
        cell[1 << i] = [log_g[1 << i]; 2];
    }
    for k in 2..=n {
        let ln_t = ln_n_binary_trees(k);
        let all: Vec<u64> = Subset::of_size(n, k).map(|s| s.0).collect();
        // A block of sets at a time, checking for cancellation between blocks (a level holds up
        // to C(22, 11) ≈ 7·10^5 sets of 2^10 splits each).
        for sets in all.chunks(SETS_PER_BLOCK) {
            if cancel.is_cancelled() {
                return Err(BhcError::Cancelled);
            }
            let cell_r = &cell;
            let vals: Vec<(f64, f64, u64)> = sets
                .par_iter()
                .map(|&s| {
                    let low = s & s.wrapping_neg();
                    let rest = s ^ low;
                    // One pass: the best split, and Σ exp(term) as `top + ln acc` with `top` the
                    // largest term so far (rescaled when it grows: one exp per term).
                    let (mut best, mut arg) = (f64::NEG_INFINITY, 0u64);
                    let (mut top, mut acc) = (f64::NEG_INFINITY, 0.0f64);
                    let mut sub = rest;
                    loop {
                        sub = sub.wrapping_sub(1) & rest;
                        let a = sub | low;
                        let b = s ^ a;
                        let (ca, cb) = (cell_r[a as usize], cell_r[b as usize]);
                        let t = ca[0] + cb[0];
                        // `arg == 0` only before the first split (every `a` holds `low`).
                        if arg == 0 || t > best {
                            best = t;
                            arg = a;
                        }
                        let u = ca[1] + cb[1];
                        if u > top {
                            acc = acc * (top - u).exp() + 1.0;
                            top = u;
                        } else if u > f64::NEG_INFINITY {
                            // Branch-free exp, accurate to 4e-16 relative (u - top ≤ 0, finite).
                            acc += crate::numeric::exp(u - top);
                        }
                        if sub == 0 {
                            break;
                        }
                    }
                    let split_sum = if acc > 0.0 {
                        top + acc.ln()
                    } else {
                        f64::NEG_INFINITY
                    };
                    let g = log_g[s as usize];
                    (log_add_exp(g, best), log_add_exp(g + ln_t, split_sum), arg)
                })
                .collect();
            for (&s, (m, t, a)) in sets.iter().zip(vals) {
                cell[s as usize] = [m, t];
                back[s as usize] = a;
            }
        }
    }
    let full = Subset::full(n);
    let tree = Tree::from_splits_trusted(full, |s| {
        let a = Subset(back[s.index()]);
        (a, s.minus(a))
    });
    let [log_f_max, log_f_sum] = cell[full.index()];
    Ok(BestTrees {
        n,
        log_f_max,
        tree,
        log_f_sum,
        log_f_mean: log_f_sum - ln_n_binary_trees(n),
    })
}
