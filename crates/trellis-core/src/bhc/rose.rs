//! The exact best Bayesian rose tree (the most likely under BRT's own `p(D | T)`, see
//! [`super::brt`]), by a dynamic programme over subsets.
//!
//! `p(D_S | T) = π_m f(D_S) + (1 − π_m) ∏_c p(D_c | T_c)` for a node with `m` children is
//! increasing in each child's likelihood, so the best tree on `S` takes, for its best number of
//! children `m` and block partition, the best tree on each block:
//!
//! `best(S) = max_{m ≥ 2} [π_m f(D_S) + (1 − π_m) Q(S, m)]`, `best({i}) = f(D_i)`,
//!
//! with `Q(S, m)` the largest `∏ best(B)` over the partitions of `S` into `m` blocks, itself a
//! recursion on the block holding the lowest point: `Q(S, 1) = best(S)`,
//! `Q(S, m) = max_{A ∋ min S, A ⊊ S} best(A) Q(S \ A, m − 1)`. That is `O(N 3^N)` time and
//! `O(N 2^N)` memory: N = 16 in about a second, N = 18 in tens of seconds; the limit is
//! [`MAX_ROSE_POINTS`]. All in log space; `-inf` flows.

use super::brt::check_brt;
use super::{BhcError, ConjugateModel};
use crate::hierarchy::Hierarchy;
use crate::model::{log1mexp, log_add_exp};
use crate::subset::Subset;
use rayon::prelude::*;

/// Largest `N` [`best_rose_tree`] accepts.
pub const MAX_ROSE_POINTS: usize = 18;

/// The most likely rose tree and its log-likelihood.
#[derive(Clone, Debug)]
pub struct BestRoseTree {
    /// `log max_T p(D | T)` over all rose trees.
    pub log_p: f64,
    /// A tree attaining it (internal nodes numbered `n..` in post-order).
    pub hierarchy: Hierarchy,
}

/// The best rose tree for `model`'s points under BRT with `γ = gamma ∈ (0, 1]`.
pub fn best_rose_tree<M: ConjugateModel>(model: &M, gamma: f64) -> Result<BestRoseTree, BhcError> {
    // The token first; checked once per subset size.
    let cancel = crate::cancel::Cancel::new();
    let n = check_brt(model, gamma)?;
    if n > MAX_ROSE_POINTS {
        return Err(BhcError::TooManyPoints {
            n,
            limit: MAX_ROSE_POINTS,
            what: "the exact best rose tree (an O(N 3^N) recursion)",
        });
    }
    let size = 1usize << n;
    let h1: Vec<f64> = (0..size as u64)
        .into_par_iter()
        .map(|b| {
            if b == 0 {
                0.0
            } else {
                model.log_marginal_of(&Subset(b).iter().collect::<Vec<_>>())
            }
        })
        .collect();
    let ln_1mg = (1.0 - gamma).ln();
    // q[s * n + (m - 1)] = log Q(S, m); arg[..] = the block A kept; m_best[s] = best arity.
    let mut q = vec![f64::NEG_INFINITY; size * n];
    let mut arg = vec![0u32; size * n];
    let mut m_best = vec![0u8; size];
    for i in 0..n {
        q[(1 << i) * n] = h1[1 << i];
    }
    for k in 2..=n {
        if cancel.is_cancelled() {
            return Err(BhcError::Cancelled);
        }
        let sets: Vec<u64> = Subset::of_size(n, k).map(|s| s.0).collect();
        let q_r = &q;
        let rows: Vec<(Vec<f64>, Vec<u32>, u8)> = sets
            .par_iter()
            .map(|&s| {
                let mut row = vec![f64::NEG_INFINITY; k];
                let mut back = vec![0u32; k];
                let low = s & s.wrapping_neg();
                let rest = s ^ low;
                let mut sub = rest;
                loop {
                    sub = sub.wrapping_sub(1) & rest;
                    let a = sub | low;
                    let r = (s ^ a) as usize;
                    let best_a = q_r[a as usize * n];
                    for m in 2..=(k - a.count_ones() as usize + 1) {
                        let t = best_a + q_r[r * n + m - 2];
                        if back[m - 1] == 0 || t > row[m - 1] {
                            row[m - 1] = t;
                            back[m - 1] = a as u32;
                        }
                    }
                    if sub == 0 {
                        break;
                    }
                }
                // best(S) over the number of children.
                let (mut best, mut arity) = (f64::NEG_INFINITY, 2u8);
                for m in 2..=k {
                    let ln_not_pi = (m - 1) as f64 * ln_1mg;
                    let v = log_add_exp(
                        log1mexp(-ln_not_pi) + h1[s as usize],
                        ln_not_pi + row[m - 1],
                    );
                    if v > best {
                        best = v;
                        arity = m as u8;
                    }
                }
                row[0] = best;
                (row, back, arity)
            })
            .collect();
        for (&s, (row, back, arity)) in sets.iter().zip(rows) {
            let base = s as usize * n;
            q[base..base + k].copy_from_slice(&row);
            arg[base..base + k].copy_from_slice(&back);
            m_best[s as usize] = arity;
        }
    }
    // Rebuild: a node's children are the blocks of its best partition into m_best blocks.
    let mut parent: Vec<Option<usize>> = vec![None; n];
    fn build(
        s: u64,
        n: usize,
        arg: &[u32],
        m_best: &[u8],
        parent: &mut Vec<Option<usize>>,
    ) -> usize {
        if s.count_ones() == 1 {
            return s.trailing_zeros() as usize;
        }
        let mut blocks = Vec::new();
        let (mut rest, mut m) = (s, m_best[s as usize] as usize);
        while m > 1 {
            let a = arg[rest as usize * n + m - 1] as u64;
            blocks.push(a);
            rest ^= a;
            m -= 1;
        }
        blocks.push(rest);
        let kids: Vec<usize> = blocks
            .into_iter()
            .map(|b| build(b, n, arg, m_best, parent))
            .collect();
        let id = parent.len();
        parent.push(None);
        for c in kids {
            parent[c] = Some(id);
        }
        id
    }
    let full = Subset::full(n).0;
    build(full, n, &arg, &m_best, &mut parent);
    let hierarchy = Hierarchy::from_topology(n, parent).expect("a rose tree is a hierarchy");
    Ok(BestRoseTree {
        log_p: q[full as usize * n],
        hierarchy,
    })
}
