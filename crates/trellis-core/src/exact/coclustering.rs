//! Pairwise co-clustering under the posterior over binary trees: for every pair of leaves
//! `(i, j)` and every size `k`, the probability that `i` and `j` share a cluster of at most `k`
//! leaves, exactly, from one outside pass of the [`FullTrellis`].
//!
//! In one tree the clusters that hold both `i` and `j` form a chain from their lowest common
//! ancestor `lca(i, j)` to the root, so "`i` and `j` share a cluster of size `<= k`" is
//! "`|lca(i, j)| <= k`". For a fixed tree and `k`, exactly one cluster `A` of the tree holding
//! `i` has `|A| <= k` and a parent of more than `k` leaves (or is the root), and
//! `|lca(i, j)| <= k` exactly when that `A` holds `j` too. Hence
//!
//! `P(|lca(i, j)| <= k) = sum over A ∋ i, j with |A| <= k of P(A ∈ H, |parent(A)| > k)`,
//!
//! a sum of non-negative terms (the root counts as having a parent of infinite size). With
//! `Z(S)` the trellis's inside values and `Zout(C)` the outside values
//! (`Zout(X) = 1`, `Zout(C) = sum_{S ⊆ X \ C} psi(C, S) Z(S) Zout(C ∪ S)`), the probability that
//! `A` is in the tree with sibling `S` is `psi(A, S) Z(A) Z(S) Zout(A ∪ S) / Z(X)`: the terms of
//! `A`'s outside sum, bucketed by the size of the parent `A ∪ S`. One pass over the clusters in
//! decreasing size computes `Zout(A)` and these buckets together, `O(3^N)` split evaluations
//! (as many as the trellis, but without its cache tiling: measured 3 to 4 times the build of a
//! similarity trellis at N = 16 and 18, 9 times a jet's eight-lane build at N = 16), and adds
//! each cluster's `N - |A| + 1` tail sums to its `|A|(|A| - 1)` ordered pairs, `O(2^N N^3)`
//! additions at most.
//!
//! Layers run in parallel (rayon), in fixed blocks of clusters; every sum is taken in a fixed
//! order (clusters in increasing bitmask order within a layer, layers by decreasing size), so the
//! numbers are bit-identical for any thread count, and `P(i, j) = P(j, i)` bit for bit.

use super::full::FullTrellis;
use super::ExactError;
use crate::cancel::Cancel;
use crate::model::SplitModel;
use crate::numeric::exp;
use crate::subset::Subset;
use rayon::prelude::*;

/// Clusters per block of a layer: bounds the per-block buffer of tail sums to
/// `BLOCK * (N + 1)` floats. Cancellation is checked before every cluster.
const BLOCK: usize = 1 << 14;

/// The exact pairwise co-clustering of the posterior over binary trees (see the module
/// documentation): `P(|lca(i, j)| <= k)` for every `k = 0..=N` and every pair of leaves.
#[derive(Clone, Debug, PartialEq)]
pub struct CoClustering {
    n: usize,
    /// `at_most[(k * n + i) * n + j] = P(|lca(i, j)| <= k)`, `k = 0..=n`.
    at_most: Vec<f64>,
}

/// One cluster's contribution: its log outside value and, for `k = |A|..=N`,
/// `P(A ∈ H, |parent(A)| > k)` (index `k - |A|`).
struct Contribution {
    log_outside: f64,
    tail: Vec<f64>,
}

/// Reusable per-thread buffers: the sibling pairs of one cluster, their terms and sizes.
#[derive(Default)]
struct Buffers {
    a: Vec<u64>,
    b: Vec<u64>,
    terms: Vec<f64>,
    parent_size: Vec<usize>,
}

/// Cluster `c`'s log outside value and parent-size tail sums, given the inside values of every
/// cluster (`inside`), `log Z(X)` and the outside values of all of `c`'s strict supersets
/// (`outside`), both indexed by bitmask.
fn contribution<M: SplitModel>(
    (model, stats, inside, log_z): (&M, &[M::Stat], &[f64], f64),
    c: Subset,
    outside: &[f64],
    buf: &mut Buffers,
) -> Contribution {
    let n = inside.len().trailing_zeros() as usize;
    let size = c.len();
    let mut tail = vec![0.0; n - size + 1];
    let log_zc = inside[c.index()];
    if log_zc == f64::NEG_INFINITY {
        // No tree over C: no tree of X contains C.
        return Contribution {
            log_outside: f64::NEG_INFINITY,
            tail,
        };
    }
    let Buffers {
        a,
        b,
        terms,
        parent_size,
    } = buf;
    let comp = Subset::full(n).minus(c);
    a.clear();
    b.clear();
    parent_size.clear();
    let mut s = comp.bits();
    while s != 0 {
        let sib = Subset(s);
        let up = c.union(sib);
        if inside[sib.index()] > f64::NEG_INFINITY && outside[up.index()] > f64::NEG_INFINITY {
            // The pair in the trellis's order: A holds the lower leaf.
            let (x, y) = if c.lowest() < sib.lowest() {
                (c.bits(), s)
            } else {
                (s, c.bits())
            };
            a.push(x);
            b.push(y);
            parent_size.push(up.len());
        }
        s = (s - 1) & comp.bits();
    }
    terms.resize(a.len(), 0.0);
    model.log_psi_batch(stats, a, b, terms);
    for ((t, &x), &y) in terms.iter_mut().zip(a.iter()).zip(b.iter()) {
        *t += inside[((x | y) & !c.bits()) as usize] + outside[(x | y) as usize];
    }
    // log Zout(C) = mx + ln sum e^(t - mx); each e^(t - mx), scaled by e^(mx + log Z(C) -
    // log Z(X)), is also P(C ∈ H with this sibling): bucketed by the parent's size,
    // by_parent[m - size] = P(C ∈ H, |parent(C)| = m).
    let mx = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if mx == f64::NEG_INFINITY {
        return Contribution {
            log_outside: mx,
            tail,
        };
    }
    let scale = (mx + log_zc - log_z).exp();
    let mut by_parent = vec![0.0; n - size + 1];
    let mut sum = 0.0;
    for (&t, &m) in terms.iter().zip(parent_size.iter()) {
        let w = exp(t - mx);
        sum += w;
        by_parent[m - size] += w * scale;
    }
    let log_outside = mx + sum.ln();
    // tail[k - size] = sum over m > k of by_parent[m - size].
    let mut acc = 0.0;
    for k in (size..=n).rev() {
        tail[k - size] = acc;
        acc += by_parent[k - size];
    }
    Contribution { log_outside, tail }
}

impl CoClustering {
    /// Computes the co-clustering of the posterior of `trellis`, which must have been built
    /// from `model`. Errors when they disagree on `N`, when no tree has a finite likelihood
    /// ([`ExactError::NoFiniteTree`]: the posterior is undefined) and when the computation is
    /// cancelled ([`crate::cancel`], checked between blocks of clusters).
    pub fn compute<M: SplitModel>(
        trellis: &FullTrellis,
        model: &M,
    ) -> Result<CoClustering, ExactError> {
        let cancel = Cancel::new();
        let n = trellis.n_leaves();
        let stats = trellis.model_stats(model)?;
        if trellis.log_partition() == f64::NEG_INFINITY {
            return Err(ExactError::NoFiniteTree);
        }
        let full = Subset::full(n);
        let mut log_outside = vec![f64::NEG_INFINITY; 1usize << n];
        log_outside[full.index()] = 0.0;
        // acc[(i * n + j) * (n + 1) + k]: row i's pairs, each a run of n + 1 sizes.
        let row_len = n * (n + 1);
        let mut acc = vec![0.0; n * row_len];
        // The root: in every tree, with no parent, so it holds every pair at k = N.
        for (i, row) in acc.chunks_mut(row_len).enumerate() {
            for j in (0..n).filter(|&j| j != i) {
                row[j * (n + 1) + n] = 1.0;
            }
        }
        // log Z(S) by bitmask, 8 bytes a cluster: the sibling loop's random reads stay in cache
        // far longer than through the trellis's 64-byte records.
        let inside: Vec<f64> = (0..1u64 << n)
            .map(|b| trellis.log_z_of(Subset(b)))
            .collect();
        let ctx = (
            model,
            stats.as_slice(),
            inside.as_slice(),
            trellis.log_partition(),
        );
        // Clusters of one leaf hold no pair and no one needs their outside value.
        for size in (2..n).rev() {
            let layer: Vec<Subset> = Subset::of_size(n, size).collect();
            for block in layer.chunks(BLOCK) {
                if cancel.is_cancelled() {
                    return Err(ExactError::Cancelled);
                }
                let done = &log_outside;
                let parts: Vec<Contribution> = block
                    .par_iter()
                    .with_min_len(16)
                    .map_init(Buffers::default, |buf, &c| {
                        // A cancelled block skips its remaining clusters (checked below).
                        if cancel.is_cancelled() {
                            return Contribution {
                                log_outside: f64::NEG_INFINITY,
                                tail: Vec::new(),
                            };
                        }
                        contribution(ctx, c, done, buf)
                    })
                    .collect();
                if cancel.is_cancelled() {
                    return Err(ExactError::Cancelled);
                }
                for (c, p) in block.iter().zip(&parts) {
                    log_outside[c.index()] = p.log_outside;
                }
                acc.par_chunks_mut(row_len)
                    .enumerate()
                    .for_each(|(i, row)| {
                        for (c, p) in block.iter().zip(&parts) {
                            if !c.contains(i) || p.log_outside == f64::NEG_INFINITY {
                                continue;
                            }
                            for j in c.iter().filter(|&j| j != i) {
                                let cell = &mut row[j * (n + 1) + size..(j + 1) * (n + 1)];
                                for (x, &t) in cell.iter_mut().zip(&p.tail) {
                                    *x += t;
                                }
                            }
                        }
                    });
            }
        }
        let mut at_most = vec![0.0; (n + 1) * n * n];
        for k in 0..=n {
            for i in 0..n {
                for j in 0..n {
                    at_most[(k * n + i) * n + j] = if i == j {
                        if k >= 1 {
                            1.0
                        } else {
                            0.0
                        }
                    } else {
                        acc[(i * n + j) * (n + 1) + k].min(1.0)
                    };
                }
            }
        }
        Ok(CoClustering { n, at_most })
    }

    /// The number of leaves `N`.
    pub fn n_leaves(&self) -> usize {
        self.n
    }

    /// `P(|lca(i, j)| <= k)`: the probability that leaves `i` and `j` share a cluster of at
    /// most `k` leaves (1 for `i == j` and `k >= 1`; 0 at `k = 0`; 1 at `k = N`).
    ///
    /// # Panics
    /// If `k > N` or `i, j >= N`.
    pub fn at_most(&self, k: usize, i: usize, j: usize) -> f64 {
        assert!(
            k <= self.n && i < self.n && j < self.n,
            "index out of range"
        );
        self.at_most[(k * self.n + i) * self.n + j]
    }

    /// Every `P(|lca(i, j)| <= k)` as one `(N + 1) x N x N` array in row-major order
    /// (`[(k * N + i) * N + j]`).
    pub fn as_slice(&self) -> &[f64] {
        &self.at_most
    }

    /// The `N x N` matrix (row-major) of the probability that `i` and `j` are siblings: that
    /// `{i, j}` is a cluster of the tree (0 on the diagonal).
    pub fn siblings(&self) -> Vec<f64> {
        let n = self.n;
        let mut out = self.at_most[2.min(n) * n * n..(2.min(n) + 1) * n * n].to_vec();
        (0..n).for_each(|i| out[i * n + i] = 0.0);
        out
    }

    /// The `N x N` matrix (row-major) of the expected size of the smallest cluster holding
    /// both `i` and `j`, `E|lca(i, j)| = sum_{k=0}^{N-1} P(|lca(i, j)| > k)` (1 on the
    /// diagonal).
    pub fn expected_lca_size(&self) -> Vec<f64> {
        let n = self.n;
        let mut out = vec![0.0; n * n];
        for (p, e) in out.iter_mut().enumerate() {
            *e = (0..n).map(|k| 1.0 - self.at_most[k * n * n + p]).sum();
        }
        out
    }
}

#[cfg(test)]
#[path = "coclustering_tests.rs"]
mod tests;
