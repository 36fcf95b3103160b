//! How many trees attain the MAP value: one more dynamic programme over the clusters, after the
//! full trellis.
//!
//! Energies with many ties (Dasgupta's cost or the HCC energy on equal weights, points with
//! duplicates or symmetries) have many MAP trees, and the trellis returns one of them. For every
//! cluster `S`, with `MAP(S)` the trellis's best value, the programme counts the trees on `S`
//! that attain it and keeps their largest magnitude `|S|_1` (the sum of `|log psi|` over their
//! nodes, the scale of their rounding):
//!
//! - a split `(A, B)` of `S` with a finite potential and children that have finite trees has the
//!   value `v = log psi(A, B) + MAP(A) + MAP(B)` (summed in that order, as the trellis and
//!   [`crate::tree::Tree::log_likelihood`] sum) and the magnitude
//!   `m = |MAP(S) - MAP(A) - MAP(B)| + |A|_1 + |B|_1` (the first term is the `|log psi|` a tying
//!   split has, to within the tolerance; known before `log psi` is computed);
//! - the split **ties** when `v >= MAP(S) - tol · max(1, |MAP(S)|, m)`, with `tol` relative
//!   ([`TIE_TOLERANCE`], 1e-9);
//! - the count of `S` is the sum over its tying splits of `count(A) · count(B)` (saturating at
//!   `u128::MAX`), and `|S|_1` the largest `m` among them.
//!
//! **Why a tolerance.** The same energy summed over the nodes of two different trees, in two
//! different orders, can differ in the last bits, so counting exact floating-point equality
//! would miss true ties (see the tests: HCC weights of 0.1, 0.2 and 0.3). The tolerance is
//! relative to the magnitude of the terms summed, not to the value, so cancelling terms do not
//! shrink it to nothing; 1e-9 is far above the rounding of a sum of at most 63 terms (about
//! 1e-14 relative) and far below any difference an energy means. Splits with a `-inf` (forbidden)
//! or NaN potential, or a child with no finite tree, never tie, and a cluster with no finite tree
//! counts 0: `-inf - tol` is never compared with a finite value. Where the model has a cheap
//! upper bound on its potential ([`SplitModel::log_psi_upper`], the Ginkgo model), a split whose
//! bound cannot reach the tie floor is skipped without computing `log psi`, as in the MAP-only
//! trellis (the count is the same). As the tolerance applies at
//! every node, a tree at most `(N - 1) · tol · max(1, |T|_1)` below the MAP can be counted;
//! for true ties (equal up to rounding) the count is exact.
//!
//! **Which tree the trellis returns** ([`FullTrellis::map_tree`]): at every cluster, the split
//! with the largest computed value, and among splits of equal computed value the first in the
//! trellis's split order: `A` (the part holding the cluster's lowest-indexed leaf) runs over its
//! possible contents in decreasing order of the bit mask of its other leaves, so the first split
//! tried puts the cluster's second-lowest leaf alone in `B` and the last puts the lowest leaf
//! alone in `A`. Among tied trees the choice thus follows the order of the leaves (the rows of
//! a file), not the energy: reordering the points can return another of the tied trees.

use super::split_loop::{prefetch, PREFETCH};
use super::{ExactError, FullTrellis};
use crate::model::SplitModel;
use crate::subset::Subset;
use rayon::prelude::*;

/// The relative tolerance of a tie (see the [module docs](self)).
pub const TIE_TOLERANCE: f64 = 1e-9;

/// A cluster's MAP value (the trellis's), the number of trees attaining it, their largest
/// magnitude, and the model's statistics: one 64-byte record, so that a split reads one cache
/// line per child.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Record<S> {
    map: f64,
    magnitude: f64,
    count: u128,
    stat: S,
}

impl FullTrellis {
    /// The number of trees whose log-likelihood ties with the MAP value, by a second `O(3^N)`
    /// pass over the splits with `model` (the model the trellis was built from; its potentials
    /// are evaluated again), to within the relative tolerance `rel_tol` ([`TIE_TOLERANCE`] for
    /// rounding alone; a negative or NaN tolerance counts as 0, exact floating-point equality).
    /// See the [module docs](super::map_ties) for the rule and the tolerance. 0 if no tree has a
    /// finite log-likelihood; saturates at `u128::MAX` (above N = 31). Errors when `model` has a
    /// different number of leaves. A trellis built by [`FullTrellis::build_with_ties`] at this
    /// tolerance returns its build's count (the same number) without the second pass.
    pub fn n_map_trees<M: SplitModel>(&self, model: &M, rel_tol: f64) -> Result<u128, ExactError> {
        let n = self.n_leaves();
        let tol = rel_tol.max(0.0);
        self.check_model(model)?;
        // Counted by the build at this tolerance ([`FullTrellis::build_with_ties`]).
        if let Some((t, count)) = self.map_ties {
            if t == tol {
                return Ok(count);
            }
        }
        let mut records: Vec<Record<M::Stat>> = Vec::with_capacity(1usize << n);
        crate::memory::advise_huge_pages(&records);
        records.extend(
            self.model_stats(model)?
                .into_iter()
                .zip(&self.cells)
                .map(|(stat, c)| Record {
                    map: c.map,
                    magnitude: 0.0,
                    count: 0,
                    stat,
                }),
        );
        for i in 0..n {
            records[1 << i].count = 1;
        }
        let cancel = crate::cancel::Cancel::new();
        for k in 2..=n {
            let layer: Vec<Subset> = Subset::of_size(n, k).collect();
            let done = &records;
            let values: Vec<(u128, f64)> = layer
                .par_iter()
                .map(|&s| {
                    if cancel.is_cancelled() {
                        return (0, 0.0);
                    }
                    solve(model, done, s, tol)
                })
                .collect();
            if cancel.is_cancelled() {
                return Err(ExactError::Cancelled);
            }
            for (s, (count, magnitude)) in layer.iter().zip(values) {
                let r = &mut records[s.index()];
                (r.count, r.magnitude) = (count, magnitude);
            }
        }
        Ok(records[(1usize << n) - 1].count)
    }
}

/// One cluster's tied-tree count and their largest magnitude, from its children's.
fn solve<M: SplitModel>(
    model: &M,
    records: &[Record<M::Stat>],
    s: Subset,
    tol: f64,
) -> (u128, f64) {
    let rs = &records[s.index()];
    let best = rs.map;
    if !best.is_finite() {
        return (0, 0.0);
    }
    let scale = best.abs().max(1.0);
    let upper = model.log_psi_upper(s, &rs.stat);
    let (mut count, mut magnitude) = (0u128, 0.0f64);
    // The splits in `Subset::splits` order (`A` = the lowest leaf and a submask of the rest, the
    // submasks running down), with both children's records prefetched `PREFETCH` splits ahead.
    let set = s.bits();
    let low = set & set.wrapping_neg();
    let rest = set ^ low;
    let base = records.as_ptr();
    let (mut sub, mut ahead) = (rest, rest);
    for _ in 0..PREFETCH {
        ahead = ahead.wrapping_sub(1) & rest;
    }
    while sub != 0 {
        sub = sub.wrapping_sub(1) & rest;
        prefetch(base.wrapping_add((ahead | low) as usize));
        prefetch(base.wrapping_add((set ^ (ahead | low)) as usize));
        ahead = ahead.wrapping_sub(1) & rest;
        let (a, b) = (Subset(sub | low), Subset(set ^ (sub | low)));
        let (ra, rb) = (&records[a.index()], &records[b.index()]);
        if ra.count == 0 || rb.count == 0 {
            continue;
        }
        let m = (best - ra.map - rb.map).abs() + ra.magnitude + rb.magnitude;
        let floor = best - tol * m.max(scale);
        // The model's bound skips a split that cannot reach the floor (a NaN bound is not
        // skipped); the bound may be above the potential by rounding (relative 1e-12).
        let ub = upper(&ra.stat, &rb.stat);
        if ub == f64::NEG_INFINITY || ub + 1e-12 * (ub.abs() + m + scale) + ra.map + rb.map < floor
        {
            continue;
        }
        let psi = model.log_psi_with(a, &ra.stat, b, &rb.stat, &rs.stat);
        if !psi.is_finite() {
            continue;
        }
        if psi + ra.map + rb.map >= floor {
            count = count.saturating_add(ra.count.saturating_mul(rb.count));
            magnitude = magnitude.max(m);
        }
    }
    (count, magnitude)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CorrelationModel, DasguptaModel, WeightMatrix};
    use crate::tree::Tree;

    /// `(log-likelihood, magnitude)` of every tree over `0..n`: the brute force.
    fn every_tree<M: SplitModel>(m: &M) -> Vec<(f64, f64, Tree)> {
        Tree::enumerate_all(Subset::full(m.n_leaves()))
            .unwrap()
            .into_iter()
            .map(|t| {
                let mag = t.splits().iter().map(|&(a, b)| m.log_psi(a, b).abs()).sum();
                (t.log_likelihood(m), mag, t)
            })
            .collect()
    }

    /// The finite trees whose log-likelihood is within `tol · max(1, |best|, magnitude)` of the
    /// best one (a forbidden tree's magnitude is infinite: it must not widen the tolerance to
    /// `inf`).
    fn brute_force<M: SplitModel>(m: &M, tol: f64) -> u128 {
        let all = every_tree(m);
        let best = all.iter().map(|t| t.0).fold(f64::NEG_INFINITY, f64::max);
        if best == f64::NEG_INFINITY {
            return 0;
        }
        all.iter()
            .filter(|(l, mag, _)| l.is_finite() && *l >= best - tol * mag.max(best.abs()).max(1.0))
            .count() as u128
    }

    fn weights(n: usize, w: impl Fn(usize, usize) -> f64) -> WeightMatrix {
        WeightMatrix::new(
            (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| if i == j { 0.0 } else { w(i.min(j), i.max(j)) })
                        .collect()
                })
                .collect(),
        )
        .unwrap()
    }

    fn check<M: SplitModel>(what: &str, m: &M) -> u128 {
        let t = FullTrellis::build(m).unwrap();
        let got = t.n_map_trees(m, TIE_TOLERANCE).unwrap();
        let n = m.n_leaves();
        assert_eq!(got, brute_force(m, TIE_TOLERANCE), "{what}, n = {n}");
        // Counted in the build's own pass (the lanes, N >= 4 on a vector set).
        let one_pass = FullTrellis::build_with_ties(m, 32, TIE_TOLERANCE).unwrap();
        assert!(one_pass.map_ties.is_some(), "{what}, n = {n}");
        let got_one = one_pass.n_map_trees(m, TIE_TOLERANCE).unwrap();
        assert_eq!(got_one, got, "{what}, n = {n}: one pass");
        got
    }

    #[test]
    fn counts_equal_brute_force_on_tie_heavy_energies() {
        let mut most = 0;
        for n in 2..=7 {
            // Dasgupta's cost on a complete graph of unit weights: every tree costs the same.
            let unit = DasguptaModel::new(weights(n, |_, _| 1.0), 1.0).unwrap();
            let c = check("dasgupta, unit weights", &unit);
            assert_eq!(
                Some(c),
                crate::tree::n_binary_trees(n),
                "all trees tie, n = {n}"
            );
            // A 0/1 graph: two cliques joined by one edge.
            let cliques = DasguptaModel::new(
                weights(n, |i, j| {
                    f64::from((i < n / 2) == (j < n / 2) || i + 1 == j)
                }),
                1.0,
            )
            .unwrap();
            most = most.max(check("dasgupta, two cliques", &cliques));
            // HCC on equal and on +-1 weights.
            let equal = CorrelationModel::new(weights(n, |_, _| 1.0), 1.0).unwrap();
            most = most.max(check("hcc, equal weights", &equal));
            let signs = CorrelationModel::new(
                weights(n, |i, j| if (i + j) % 3 == 0 { -1.0 } else { 1.0 }),
                1.0,
            )
            .unwrap();
            most = most.max(check("hcc, +-1 weights", &signs));
        }
        assert!(most > 10, "the energies had few ties: {most}");
    }

    /// Weights of 0.1, 0.2 and 0.3 (0.1 + 0.2 != 0.3 in binary): tied trees whose energies
    /// differ in the last bits. Exact equality misses some; the tolerance finds them all.
    #[test]
    fn rounding_ties_need_the_tolerance() {
        let mut missed = 0;
        for n in 4..=7 {
            let m = CorrelationModel::new(weights(n, |i, j| [0.1, 0.2, 0.3][(i * 7 + j) % 3]), 1.0)
                .unwrap();
            let t = FullTrellis::build(&m).unwrap();
            let exact = t.n_map_trees(&m, 0.0).unwrap();
            let tied = check("hcc, decimal weights", &m);
            assert!(exact <= tied && exact >= 1, "n = {n}: {exact} > {tied}");
            missed += tied - exact;
            // Negative and NaN tolerances are exact equality.
            assert_eq!(t.n_map_trees(&m, -1.0).unwrap(), exact);
            assert_eq!(t.n_map_trees(&m, f64::NAN).unwrap(), exact);
        }
        assert!(missed > 0, "no tie differed in the last bits");
    }

    /// A model with forbidden (`-inf`) splits, one where every tree is forbidden, and Ginkgo jets
    /// (with forbidden clusters).
    #[test]
    fn forbidden_splits_never_tie() {
        struct Forbid {
            n: usize,
            all: bool,
        }
        impl SplitModel for Forbid {
            type Stat = ();
            fn n_leaves(&self) -> usize {
                self.n
            }
            fn stat(&self, _: Subset) {}
            fn log_psi_with(&self, a: Subset, _: &(), b: Subset, _: &(), _: &()) -> f64 {
                // Ties by size; leaves 0 and 1 must be a cherry (a split of more than two
                // leaves that separates them is forbidden).
                let apart = (a.contains(0) && b.contains(1)) || (a.contains(1) && b.contains(0));
                if self.all || (apart && a.len() + b.len() > 2) {
                    return f64::NEG_INFINITY;
                }
                -((a.len() as f64) - (b.len() as f64)).abs()
            }
        }
        for n in 2..=7 {
            let m = Forbid { n, all: false };
            let c = check("forbidden", &m);
            assert!(c >= 1, "n = {n}");
            let none = Forbid { n, all: true };
            let t = FullTrellis::build(&none).unwrap();
            assert_eq!(t.n_map_trees(&none, TIE_TOLERANCE).unwrap(), 0, "n = {n}");
            assert_eq!(t.n_map_trees(&none, f64::INFINITY).unwrap(), 0, "n = {n}");
        }
        use crate::data::ginkgo::{generate_dataset, GinkgoParams};
        let jets = generate_dataset(&GinkgoParams::qcd(), 6, 4, 7, 5, 10_000, "ties").unwrap();
        for jet in &jets.jets {
            assert!(check("ginkgo", &jet.model().unwrap()) >= 1);
        }
    }

    /// The tie rule: among exactly tied splits, the trellis keeps the first in split order.
    #[test]
    fn the_trellis_returns_the_first_tied_split_in_split_order() {
        for n in 3..=7 {
            let m = DasguptaModel::new(weights(n, |_, _| 1.0), 1.0).unwrap();
            let t = FullTrellis::build(&m).unwrap();
            let tree = t.map_tree();
            // Every split ties, so the first split is taken at every cluster: A = the cluster
            // without its second-lowest leaf, B = that leaf.
            for (a, b) in tree.splits() {
                let s = a.union(b);
                assert_eq!((a, b), s.splits().next().unwrap(), "n = {n}");
            }
        }
    }

    #[test]
    fn a_model_over_other_leaves_is_refused() {
        let m = DasguptaModel::new(weights(4, |_, _| 1.0), 1.0).unwrap();
        let t = FullTrellis::build(&m).unwrap();
        let other = DasguptaModel::new(weights(5, |_, _| 1.0), 1.0).unwrap();
        assert!(matches!(
            t.n_map_trees(&other, TIE_TOLERANCE),
            Err(ExactError::ModelMismatch { .. })
        ));
    }
}
