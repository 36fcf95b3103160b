//! Energy models over hierarchies: one file per model, all behind [`SplitModel`].
//!
//! A model gives the log-potential `log psi(A, B)` of merging sibling clusters `A` and `B`; a
//! tree's energy (log-likelihood) is the sum over its internal nodes. `-inf` is a legal value (a
//! forbidden split) and flows through every algorithm.
//!
//! Models keep per-cluster statistics ([`SplitModel::Stat`], e.g. summed four-vectors) so that a
//! split costs O(1) once the statistics of `A`, `B` and `A ∪ B` are known. The exact trellis
//! precomputes them for all `2^N` subsets with [`SplitModel::stat_table`]; search algorithms
//! compute them on demand with [`SplitModel::stat`].

pub mod correlation;
pub mod dasgupta;
pub mod error;
pub mod ginkgo;
pub mod ginkgo_generator;
pub mod weights;

pub use correlation::CorrelationModel;
pub use dasgupta::DasguptaModel;
pub use error::{ModelError, MAX_TABLE_LEAVES};
pub use ginkgo::GinkgoModel;
pub use ginkgo_generator::GinkgoGeneratorModel;
pub use weights::WeightMatrix;

use crate::subset::Subset;

/// A model of hierarchies whose potential factorises over sibling pairs.
pub trait SplitModel: Sync {
    /// Per-cluster statistics the potential needs (cheap to copy).
    type Stat: Clone + Send + Sync;

    /// Number of leaves `N`; clusters are subsets of `0..N`.
    fn n_leaves(&self) -> usize;

    /// The statistics of cluster `s` (computed directly, O(|s|)). Leaves of `s` outside `0..N`
    /// must not panic (the models here leave them out).
    fn stat(&self, s: Subset) -> Self::Stat;

    /// The statistics of every subset of `0..N`, indexed by bitmask. The default calls
    /// [`SplitModel::stat`] for each subset; models override it with an O(1)-per-subset
    /// recurrence. Errors ([`ModelError::TableTooLarge`]) for `N >` [`MAX_TABLE_LEAVES`].
    fn stat_table(&self) -> Result<Vec<Self::Stat>, ModelError> {
        let n = self.n_leaves();
        error::check_table_size(n)?;
        Ok((0..1u64 << n).map(|b| self.stat(Subset(b))).collect())
    }

    /// `log psi(A, B)` given the statistics of `A`, `B` and `parent = A ∪ B`.
    fn log_psi_with(
        &self,
        a: Subset,
        sa: &Self::Stat,
        b: Subset,
        sb: &Self::Stat,
        parent: &Self::Stat,
    ) -> f64;

    /// `out[k] = log psi(a[k], b[k])` for many sibling pairs at once, with the statistics of every
    /// subset in `stats` (as returned by [`SplitModel::stat_table`]; the parent of a pair is
    /// `a[k] | b[k]`). The default calls [`SplitModel::log_psi_with`] per pair; models override
    /// it with a loop the compiler can vectorise. The exact trellis spends most of its time here.
    fn log_psi_batch(&self, stats: &[Self::Stat], a: &[u64], b: &[u64], out: &mut [f64]) {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            let (sx, sy, sp) = (
                &stats[x as usize],
                &stats[y as usize],
                &stats[(x | y) as usize],
            );
            *o = self.log_psi_with(Subset(x), sx, Subset(y), sy, sp);
        }
    }

    /// `out[k] = log psi(A_k, B_k)` for many splits of one parent, whose statistics are
    /// `parent`. The default calls [`SplitModel::log_psi_with`] per split; models override it
    /// to vectorise. The exact trellis spends most of its time here.
    fn log_psi_siblings(
        &self,
        parent: &Self::Stat,
        splits: &[Siblings<'_, Self::Stat>],
        out: &mut [f64],
    ) {
        for (o, x) in out.iter_mut().zip(splits) {
            *o = self.log_psi_with(x.a, x.sa, x.b, x.sb, parent);
        }
    }

    /// The score greedy and beam search rank merges by when asked for the *revenue* form
    /// ([`crate::search::MergeScore::Revenue`]): `log psi(A, B)` plus a term whose sum over the
    /// internal nodes of every complete tree is one and the same constant, so every tree's total
    /// moves by that constant, the ranking of complete trees (the MAP) is unchanged, and only the
    /// myopic choice of the next merge differs. Models whose cost is paid where a pair of leaves
    /// is joined (Dasgupta's, correlation clustering) override it so that a merge is also
    /// credited with what it leaves unmerged; the default is `log psi` itself.
    fn log_psi_revenue(
        &self,
        a: Subset,
        sa: &Self::Stat,
        b: Subset,
        sb: &Self::Stat,
        parent: &Self::Stat,
    ) -> f64 {
        self.log_psi_with(a, sa, b, sb, parent)
    }

    /// An upper bound on `log psi(A, B)` for the splits of `parent`, as a function of the
    /// children's statistics: much cheaper than [`SplitModel::log_psi_with`] (no logarithm, no
    /// division; the parent's part is computed once here), or `+inf` when the model has none
    /// (the default). The MAP-only trellis ([`crate::exact::MapTrellis`]) skips a split whose
    /// bound plus its children's MAP values is below the best split found so far. Contract:
    /// for every split `(A, B)` of `parent`, `bound(sa, sb)` is never below `log_psi_with` by
    /// more than rounding (relative 1e-12), and `-inf` only where `log_psi_with` is `-inf`.
    fn log_psi_upper<'a>(
        &'a self,
        _parent: Subset,
        _sp: &'a Self::Stat,
    ) -> impl Fn(&Self::Stat, &Self::Stat) -> f64 + 'a {
        |_: &Self::Stat, _: &Self::Stat| f64::INFINITY
    }

    /// The Ginkgo model behind `self`, for which the full trellis has a vectorised path
    /// (`exact::lanes`); `None` (the default) for other models.
    fn as_ginkgo(&self) -> Option<&GinkgoModel> {
        None
    }

    /// The model behind `self` when the full trellis has a vector kernel for it (the lanes,
    /// `exact::lanes`); `None` (the default): the split loop.
    fn lane_model(&self) -> Option<LaneModel<'_>> {
        None
    }

    /// `log psi(A, B)` for disjoint non-empty clusters `A` and `B`.
    fn log_psi(&self, a: Subset, b: Subset) -> f64 {
        let sa = self.stat(a);
        let sb = self.stat(b);
        let sp = self.stat(a.union(b));
        self.log_psi_with(a, &sa, b, &sb, &sp)
    }
}

/// A model the full trellis runs in eight SIMD lanes ([`SplitModel::lane_model`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum LaneModel<'a> {
    /// The paper-era Ginkgo model.
    Ginkgo(&'a GinkgoModel),
    /// Dasgupta's cost.
    Dasgupta(&'a DasguptaModel),
    /// The HCC / correlation energy.
    Correlation(&'a CorrelationModel),
    /// The Ginkgo generator's density.
    Generator(&'a GinkgoGeneratorModel),
}

/// One split `(A, B)` of a parent, with both children's statistics, for
/// [`SplitModel::log_psi_siblings`].
#[derive(Debug)]
pub struct Siblings<'a, S> {
    /// The child holding the parent's lowest leaf.
    pub a: Subset,
    /// Statistics of `a`.
    pub sa: &'a S,
    /// The other child.
    pub b: Subset,
    /// Statistics of `b`.
    pub sb: &'a S,
}

impl<S> Clone for Siblings<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Siblings<'_, S> {}

/// `log(1 - exp(-x))` for `x >= 0`, accurate for small and large `x` (`-inf` at `x = 0`).
#[inline]
pub fn log1mexp(x: f64) -> f64 {
    if x > std::f64::consts::LN_2 {
        (-(-x).exp()).ln_1p()
    } else {
        (-(-x).exp_m1()).ln()
    }
}

/// `log(exp(a) + exp(b))`, exact for `-inf` arguments.
#[inline]
pub fn log_add_exp(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi == f64::NEG_INFINITY {
        return f64::NEG_INFINITY;
    }
    hi + (lo - hi).exp().ln_1p()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log1mexp_is_accurate() {
        for &x in &[1e-3f64, 0.5, 0.7, 1.0, 5.0, 40.0] {
            let want = (1.0 - (-x).exp()).ln();
            let got = log1mexp(x);
            assert!((got - want).abs() <= 1e-12 * want.abs() + 1e-15, "{x}");
        }
        // Series: log(1 - e^-x) = log x - x/2 + x^2/24 + O(x^4).
        let x = 1e-6;
        assert!((log1mexp(x) - (x.ln() - x / 2.0 + x * x / 24.0)).abs() < 1e-15);
        assert_eq!(log1mexp(0.0), f64::NEG_INFINITY);
        assert!((log1mexp(1e-20) - (1e-20f64).ln()).abs() < 1e-12);
    }

    #[test]
    fn log_add_exp_handles_infinities() {
        assert_eq!(
            log_add_exp(f64::NEG_INFINITY, f64::NEG_INFINITY),
            f64::NEG_INFINITY
        );
        assert_eq!(log_add_exp(f64::NEG_INFINITY, 1.5), 1.5);
        assert!((log_add_exp(0.0, 0.0) - 2f64.ln()).abs() < 1e-15);
    }
}
