//! Cluster and sub-hierarchy marginals from the outside pass of the trellis.
//!
//! With `Z(S)` the inside values of [`FullTrellis`], the *outside* value of a cluster `C` is the
//! total potential of everything around a subtree over `C`:
//! `Zout(root) = 1`, `Zout(C) = sum_{S ⊆ X \ C, S ≠ ∅} psi(C, S) Z(S) Zout(C ∪ S)`.
//! Then, over the posterior `P(H|X) = phi(H) / Z`:
//! - the marginal of a cluster, `P(C ∈ H | X) = Z(C) Zout(C) / Z(X)`;
//! - the marginal of a sub-hierarchy `H_C` over `C`, `P(H_C ⊂ H | X) = phi(H_C) Zout(C) / Z(X)`.
//!
//! [`Marginals::compute`] runs the outside pass for all `2^N - 1` clusters at once in
//! `O(3^N)` (each cluster pulls from its supersets, layer by layer in decreasing size, in
//! parallel). [`cluster_marginal`] answers a single query the way the paper describes (merge
//! `C` into one leaf): it visits only the `2^(N-|C|)` supersets of `C`, `O(3^(N-|C|))` work.

use super::full::FullTrellis;
use super::ExactError;
use crate::model::SplitModel;
use crate::numeric::log_sum_exp;
use crate::subset::Subset;
use crate::tree::Tree;
use rayon::prelude::*;

/// The outside values of every cluster, and the marginals they give.
#[derive(Clone, Debug)]
pub struct Marginals {
    n: usize,
    log_z: f64,
    /// `log Zout(C)` indexed by bitmask.
    log_outside: Vec<f64>,
    /// `log P(C ∈ H | X)` indexed by bitmask.
    log_marginal: Vec<f64>,
}

fn check_cluster(n: usize, c: Subset) -> Result<(), ExactError> {
    if !c.is_cluster_of(n) {
        return Err(ExactError::BadCluster {
            cluster: c.to_string(),
            n,
        });
    }
    Ok(())
}

/// Reusable per-thread buffers: the sibling pairs of one cluster and their terms.
#[derive(Default)]
struct Buffers {
    a: Vec<u64>,
    b: Vec<u64>,
    terms: Vec<f64>,
}

/// `log Zout(c)` given the outside values of all strict supersets of `c` (via `outside`).
fn outside_of<M: SplitModel>(
    model: &M,
    stats: &[M::Stat],
    trellis: &FullTrellis,
    c: Subset,
    outside: impl Fn(Subset) -> f64,
    buf: &mut Buffers,
) -> f64 {
    let Buffers { a, b, terms } = buf;
    let full = Subset::full(trellis.n_leaves());
    let comp = full.minus(c);
    a.clear();
    b.clear();
    // Siblings S: non-empty subsets of the complement with Z(S) > 0 and Zout(C ∪ S) > 0.
    let mut s = comp.bits();
    while s != 0 {
        let sib = Subset(s);
        if trellis.log_z_of(sib) > f64::NEG_INFINITY && outside(c.union(sib)) > f64::NEG_INFINITY {
            // Keep the pair ordered as the trellis does (A holds the lower leaf).
            if c.lowest() < sib.lowest() {
                a.push(c.bits());
                b.push(s);
            } else {
                a.push(s);
                b.push(c.bits());
            }
        }
        s = (s - 1) & comp.bits();
    }
    terms.resize(a.len(), 0.0);
    model.log_psi_batch(stats, a, b, terms);
    for ((t, &x), &y) in terms.iter_mut().zip(a.iter()).zip(b.iter()) {
        let sib = if x == c.bits() { Subset(y) } else { Subset(x) };
        *t += trellis.log_z_of(sib) + outside(c.union(sib));
    }
    log_sum_exp(terms)
}

impl Marginals {
    /// Runs the outside pass over all clusters. `trellis` must have been built from `model`;
    /// errors when they disagree on `N`.
    pub fn compute<M: SplitModel>(
        trellis: &FullTrellis,
        model: &M,
    ) -> Result<Marginals, ExactError> {
        let n = trellis.n_leaves();
        let stats = trellis.model_stats(model)?;
        let full = Subset::full(n);
        let mut log_outside = vec![f64::NEG_INFINITY; 1usize << n];
        log_outside[full.index()] = 0.0;
        for k in (1..n).rev() {
            let layer: Vec<Subset> = Subset::of_size(n, k).collect();
            let done = &log_outside;
            let values: Vec<f64> = layer
                .par_iter()
                .with_min_len(16)
                .map_init(Buffers::default, |buf, &c| {
                    if trellis.log_z_of(c) == f64::NEG_INFINITY {
                        // No tree over C: no tree of X contains C.
                        return f64::NEG_INFINITY;
                    }
                    outside_of(model, &stats, trellis, c, |p| done[p.index()], buf)
                })
                .collect();
            for (c, v) in layer.into_iter().zip(values) {
                log_outside[c.index()] = v;
            }
        }
        let log_z = trellis.log_partition();
        let log_marginal = (0..1usize << n)
            .map(|i| {
                if i == 0 || log_z == f64::NEG_INFINITY {
                    f64::NEG_INFINITY
                } else {
                    (log_outside[i] + trellis.log_z_of(Subset(i as u64)) - log_z).min(0.0)
                }
            })
            .collect();
        Ok(Marginals {
            n,
            log_z,
            log_outside,
            log_marginal,
        })
    }

    /// `log Zout(c)`.
    pub fn log_outside(&self, c: Subset) -> Result<f64, ExactError> {
        check_cluster(self.n, c)?;
        Ok(self.log_outside[c.index()])
    }

    /// `P(c ∈ H | X)`, the posterior probability that a tree contains cluster `c`.
    pub fn cluster(&self, c: Subset) -> Result<f64, ExactError> {
        check_cluster(self.n, c)?;
        Ok(self.log_marginal[c.index()].exp())
    }

    /// `log P(c ∈ H | X)` for every bitmask `0..2^N` (entry 0, the empty set, is `-inf`).
    pub fn all_log_clusters(&self) -> &[f64] {
        &self.log_marginal
    }

    /// `P(H_c ⊂ H | X)`: the posterior probability that a tree contains `sub` (a tree over some
    /// of the leaves) as a subtree. Errors when `model` has a different number of leaves.
    pub fn subhierarchy<M: SplitModel>(&self, model: &M, sub: &Tree) -> Result<f64, ExactError> {
        if model.n_leaves() != self.n {
            return Err(ExactError::ModelMismatch {
                trellis: self.n,
                model: model.n_leaves(),
            });
        }
        let c = sub.leaves();
        check_cluster(self.n, c)?;
        if self.log_z == f64::NEG_INFINITY {
            return Ok(0.0);
        }
        Ok(
            (self.log_outside[c.index()] + sub.log_likelihood(model) - self.log_z)
                .min(0.0)
                .exp(),
        )
    }

    /// Expected number of clusters of each size `k = 1..=N` in a posterior tree (index `k`).
    pub fn expected_cluster_counts(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.n + 1];
        for (i, lm) in self.log_marginal.iter().enumerate().skip(1) {
            out[(i as u64).count_ones() as usize] += lm.exp();
        }
        out
    }
}

/// `P(c ∈ H | X)` for one cluster, visiting only the supersets of `c` (the paper's method: the
/// trellis over the other leaves plus `c` merged into one leaf of potential `Z(c)`).
pub fn cluster_marginal<M: SplitModel>(
    trellis: &FullTrellis,
    model: &M,
    c: Subset,
) -> Result<f64, ExactError> {
    let n = trellis.n_leaves();
    check_cluster(n, c)?;
    trellis.check_model(model)?;
    let log_z = trellis.log_partition();
    if log_z == f64::NEG_INFINITY || trellis.log_z_of(c) == f64::NEG_INFINITY {
        return Ok(0.0);
    }
    let full = Subset::full(n);
    let comp = full.minus(c);
    // Outside values of the supersets c ∪ T, indexed by T (a submask of comp) through a hash map.
    let mut outside: std::collections::HashMap<u64, f64> = std::collections::HashMap::new();
    outside.insert(full.bits(), 0.0);
    let stats = trellis.model_stats(model)?;
    let mut buf = Buffers::default();
    let m = comp.len();
    for k in (0..m).rev() {
        // Supersets with |T| = k, T ⊂ comp, in any order within the layer.
        let mut ts: Vec<u64> = Vec::new();
        let mut tmask = comp.bits();
        loop {
            if tmask.count_ones() as usize == k {
                ts.push(tmask);
            }
            if tmask == 0 {
                break;
            }
            tmask = (tmask - 1) & comp.bits();
        }
        for tm in ts {
            let sup = c.union(Subset(tm));
            let v = if trellis.log_z_of(sup) == f64::NEG_INFINITY {
                f64::NEG_INFINITY
            } else {
                outside_of(
                    model,
                    &stats,
                    trellis,
                    sup,
                    |p| outside.get(&p.bits()).copied().unwrap_or(f64::NEG_INFINITY),
                    &mut buf,
                )
            };
            outside.insert(sup.bits(), v);
        }
    }
    Ok((outside[&c.bits()] + trellis.log_z_of(c) - log_z)
        .min(0.0)
        .exp())
}
