//! Exact sampling from the posterior over trees, `P(H|X) = phi(H) / Z` (the Cluster Trellis
//! paper's Algorithm 3).
//!
//! Top down from the root: a cluster `S` splits into `(A, B)` with probability
//! `psi(A,B) Z(A) Z(B) / Z(S)`, then each part is sampled the same way. The product of these
//! probabilities over a tree's splits telescopes to `phi(H) / Z`. Each cluster's split
//! distribution is built the first time the sampler reaches it (cumulative weights, then a binary
//! search per draw) and kept for later draws.

use super::full::FullTrellis;
use super::ExactError;
use crate::model::SplitModel;
use crate::subset::Subset;
use crate::tree::Tree;
use rand::RngExt;
use std::collections::HashMap;

/// Draws trees i.i.d. from the posterior of a built [`FullTrellis`].
pub struct PosteriorSampler<'a, M: SplitModel> {
    trellis: &'a FullTrellis,
    model: &'a M,
    /// Per visited cluster: cumulative probabilities and the `A` part of each split.
    tables: HashMap<Subset, (Vec<f64>, Vec<u64>)>,
}

impl<'a, M: SplitModel> PosteriorSampler<'a, M> {
    /// A sampler for the posterior of `trellis`, which must have been built from `model`.
    /// Errors if the model and trellis disagree on `N`, or no tree has finite likelihood.
    pub fn new(trellis: &'a FullTrellis, model: &'a M) -> Result<Self, ExactError> {
        trellis.check_model(model)?;
        if trellis.n_trees_finite() == 0 || !trellis.log_partition().is_finite() {
            return Err(ExactError::NoFiniteTree);
        }
        Ok(PosteriorSampler {
            trellis,
            model,
            tables: HashMap::new(),
        })
    }

    fn table(&mut self, s: Subset) -> &(Vec<f64>, Vec<u64>) {
        let (trellis, model) = (self.trellis, self.model);
        self.tables.entry(s).or_insert_with(|| {
            let lz = trellis.log_z_of(s);
            let sp = model.stat(s);
            let mut cum = Vec::new();
            let mut parts = Vec::new();
            let mut total = 0.0;
            for (a, b) in s.splits() {
                let (za, zb) = (trellis.log_z_of(a), trellis.log_z_of(b));
                if za == f64::NEG_INFINITY || zb == f64::NEG_INFINITY {
                    continue;
                }
                let lp = model.log_psi_with(a, &model.stat(a), b, &model.stat(b), &sp);
                let w = (lp + za + zb - lz).exp();
                if w > 0.0 {
                    total += w;
                    cum.push(total);
                    parts.push(a.bits());
                }
            }
            // Normalise away rounding so the last entry is exactly 1.
            for c in cum.iter_mut() {
                *c /= total;
            }
            if let Some(last) = cum.last_mut() {
                *last = 1.0;
            }
            (cum, parts)
        })
    }

    /// Draws one tree. Errors ([`ExactError::NotFromModel`]) when a cluster has no split of
    /// positive weight, which happens only if the model is not the trellis's.
    pub fn sample<R: rand::Rng + ?Sized>(&mut self, rng: &mut R) -> Result<Tree, ExactError> {
        let root = Subset::full(self.trellis.n_leaves());
        // Iterative top-down: decide every cluster's split, then build the tree.
        let mut splits: HashMap<Subset, Subset> = HashMap::new();
        let mut stack = vec![root];
        while let Some(s) = stack.pop() {
            if s.is_singleton() {
                continue;
            }
            let u: f64 = rng.random();
            let (cum, parts) = self.table(s);
            let Some(last) = cum.len().checked_sub(1) else {
                return Err(ExactError::NotFromModel {
                    cluster: s.to_string(),
                });
            };
            let a = Subset(parts[cum.partition_point(|&c| c <= u).min(last)]);
            splits.insert(s, a);
            stack.push(a);
            stack.push(s.minus(a));
        }
        Ok(Tree::from_splits_trusted(root, |s| {
            let a = splits[&s];
            (a, s.minus(a))
        }))
    }

    /// Draws `k` trees (errors as [`PosteriorSampler::sample`]). Refuses, before drawing, `k`
    /// trees that would not fit in memory ([`check_sample_count`]); stops when cancelled
    /// ([`crate::cancel`], checked every 1024 draws).
    pub fn sample_many<R: rand::Rng + ?Sized>(
        &mut self,
        k: usize,
        rng: &mut R,
    ) -> Result<Vec<Tree>, ExactError> {
        let cancel = crate::cancel::Cancel::new();
        check_sample_count(k, self.trellis.n_leaves())?;
        let mut out = Vec::with_capacity(k);
        for i in 0..k {
            if i % 1024 == 0 && cancel.is_cancelled() {
                return Err(ExactError::Cancelled);
            }
            out.push(self.sample(rng)?);
        }
        Ok(out)
    }

    /// `log P(H|X)` of a tree over all leaves: `log phi(H) - log Z`; errors when the tree is
    /// over another number of leaves than the trellis.
    pub fn log_probability(&self, tree: &Tree) -> Result<f64, ExactError> {
        let n = self.trellis.n_leaves();
        if tree.n_leaves() != n {
            return Err(ExactError::TreeMismatch {
                tree: tree.n_leaves(),
                trellis: n,
            });
        }
        Ok(tree.log_likelihood(self.model) - self.trellis.log_partition())
    }
}

/// An upper estimate of the memory one drawn tree over `n` leaves takes while it is kept: the
/// binary [`Tree`], a [`crate::hierarchy::Hierarchy`] of it (what the Python package hands out:
/// parent, height, child and post-order arrays per node) and 128 bytes for an object holding it.
pub fn sample_bytes(n: usize) -> f64 {
    let nodes = (2 * n).saturating_sub(1) as f64;
    let tree = std::mem::size_of::<Tree>() as f64
        + nodes * std::mem::size_of::<crate::tree::Node>() as f64;
    let hierarchy = std::mem::size_of::<crate::hierarchy::Hierarchy>() as f64 + nodes * 48.0 + 8.0;
    tree + hierarchy + 128.0
}

/// `Err(TooManySamples)` when `k` drawn trees over `n` leaves ([`sample_bytes`] each) would not
/// fit in the memory this process may use ([`crate::memory::usable_bytes`]; nothing is refused
/// where the system tells no limit).
pub fn check_sample_count(k: usize, n: usize) -> Result<(), ExactError> {
    let each = sample_bytes(n);
    let bytes = k as f64 * each;
    match crate::memory::usable_bytes() {
        Some(usable) if bytes > usable as f64 => Err(ExactError::TooManySamples {
            k,
            n,
            bytes,
            usable,
            fits: (usable as f64 / each) as u64,
        }),
        _ => Ok(()),
    }
}
