//! The full cluster trellis (Cluster Trellis paper, Algorithms 1-2): a dynamic programme over all
//! `2^N - 1` clusters that gives, exactly, the partition function `Z = sum_H prod psi`, the MAP
//! tree, and the number of trees with finite likelihood, in `O(3^N)` time.
//!
//! For a cluster `S`, with `(A, B)` running over the `2^(|S|-1) - 1` unordered splits of `S`:
//! - `log Z(S) = logsumexp_{(A,B)} [log psi(A,B) + log Z(A) + log Z(B)]`,
//! - `MAP(S) = max_{(A,B)} [log psi(A,B) + MAP(A) + MAP(B)]`,
//! - `count(S) = sum over splits with a finite term of count(A) * count(B)`,
//!
//! with `log Z = MAP = 0` and `count = 1` for single leaves. Clusters are processed layer by
//! layer in increasing size, each layer in parallel (rayon); every cluster's value is computed by
//! one thread in a fixed order, so results are bit-identical for any thread count.

use super::ExactError;
use crate::model::SplitModel;
use crate::subset::Subset;
use crate::tree::Tree;
use rayon::prelude::*;

/// Default largest N the full trellis accepts (about 1 GiB of tables for the Ginkgo model).
pub const DEFAULT_MAX_LEAVES: usize = 22;

/// What a full-trellis run over N leaves costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrellisCost {
    /// Bytes of tables (per-subset values plus model statistics).
    pub bytes: f64,
    /// Split evaluations, `(3^N + 1)/2 - 2^N`.
    pub splits: f64,
    /// Rough wall time at 5e7 split evaluations per second (two cores).
    pub seconds: f64,
}

impl TrellisCost {
    /// The cost of a full trellis over `n` leaves whose model keeps `stat_bytes` per subset.
    pub fn of(n: usize, stat_bytes: usize) -> TrellisCost {
        let subsets = 2f64.powi(n as i32);
        let per_subset = (std::mem::size_of::<Cell>() + stat_bytes) as f64;
        let splits = (3f64.powi(n as i32) + 1.0) / 2.0 - subsets;
        TrellisCost {
            bytes: subsets * per_subset,
            splits,
            seconds: splits / 5e7,
        }
    }
}

/// Per-cluster results of the dynamic programme.
#[derive(Clone, Copy, Debug)]
struct Cell {
    log_z: f64,
    map: f64,
    /// The `A` part of the best split (0 for single leaves).
    map_split: u64,
    n_finite: u128,
}

const EMPTY_CELL: Cell = Cell {
    log_z: f64::NEG_INFINITY,
    map: f64::NEG_INFINITY,
    map_split: 0,
    n_finite: 0,
};

/// The full cluster trellis over all subsets of `N` leaves, after the bottom-up pass.
#[derive(Clone, Debug)]
pub struct FullTrellis {
    n: usize,
    cells: Vec<Cell>,
}

impl FullTrellis {
    /// Runs the trellis for `model`, refusing `N > DEFAULT_MAX_LEAVES`.
    pub fn build<M: SplitModel>(model: &M) -> Result<FullTrellis, ExactError> {
        Self::build_with_limit(model, DEFAULT_MAX_LEAVES)
    }

    /// Runs the trellis for `model`, refusing `N > max_leaves` with an error that states the
    /// memory and time the run would need.
    pub fn build_with_limit<M: SplitModel>(
        model: &M,
        max_leaves: usize,
    ) -> Result<FullTrellis, ExactError> {
        let n = model.n_leaves();
        if n == 0 {
            return Err(ExactError::Empty);
        }
        let cost = TrellisCost::of(n, std::mem::size_of::<M::Stat>());
        if n > max_leaves || n > 40 {
            return Err(ExactError::TooManyLeaves {
                n,
                limit: max_leaves.min(40),
                cost,
            });
        }
        let stats = model.stat_table();
        let mut cells = vec![EMPTY_CELL; 1usize << n];
        for i in 0..n {
            cells[1 << i] = Cell {
                log_z: 0.0,
                map: 0.0,
                map_split: 0,
                n_finite: 1,
            };
        }
        for k in 2..=n {
            let layer: Vec<Subset> = Subset::of_size(n, k).collect();
            let done = &cells;
            let values: Vec<Cell> = layer
                .par_iter()
                .with_min_len(64)
                .map(|&s| solve_cluster(model, &stats, done, s))
                .collect();
            for (s, c) in layer.into_iter().zip(values) {
                cells[s.index()] = c;
            }
        }
        Ok(FullTrellis { n, cells })
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.n
    }

    /// `log Z`: the log of the sum over all `(2N-3)!!` trees of the product of their potentials.
    pub fn log_partition(&self) -> f64 {
        self.root().log_z
    }

    /// `log Z(S)` of the sub-trellis over the leaves of `s` (trees over `s` only).
    pub fn log_partition_of(&self, s: Subset) -> f64 {
        self.cells[s.index()].log_z
    }

    /// The largest log-likelihood of any tree (the MAP value).
    pub fn map_log_likelihood(&self) -> f64 {
        self.root().map
    }

    /// The MAP value over trees of the leaves of `s`.
    pub fn map_log_likelihood_of(&self, s: Subset) -> f64 {
        self.cells[s.index()].map
    }

    /// A tree with the MAP value (the first found in split order among ties).
    pub fn map_tree(&self) -> Tree {
        self.map_tree_of(Subset::full(self.n))
    }

    /// A MAP tree over the leaves of `s`.
    pub fn map_tree_of(&self, s: Subset) -> Tree {
        Tree::from_splits(s, |c| {
            let a = self.cells[c.index()].map_split;
            let a = if a == 0 { c.lowest_bit() } else { Subset(a) };
            (a, c.minus(a))
        })
    }

    /// Number of trees whose log-likelihood is finite.
    pub fn n_trees_finite(&self) -> u128 {
        self.root().n_finite
    }

    /// Number of trees over the leaves of `s` with finite log-likelihood.
    pub fn n_trees_finite_of(&self, s: Subset) -> u128 {
        self.cells[s.index()].n_finite
    }

    fn root(&self) -> &Cell {
        &self.cells[(1usize << self.n) - 1]
    }
}

#[inline]
fn solve_cluster<M: SplitModel>(model: &M, stats: &[M::Stat], cells: &[Cell], s: Subset) -> Cell {
    let ps = &stats[s.index()];
    // Streaming log-sum-exp: z = m + ln(acc).
    let mut m = f64::NEG_INFINITY;
    let mut acc = 0.0f64;
    let mut best = f64::NEG_INFINITY;
    let mut best_split = 0u64;
    let mut count = 0u128;
    for (a, b) in s.splits() {
        let ca = &cells[a.index()];
        let cb = &cells[b.index()];
        if ca.n_finite == 0 || cb.n_finite == 0 {
            continue;
        }
        let lp = model.log_psi_with(a, &stats[a.index()], b, &stats[b.index()], ps);
        if lp == f64::NEG_INFINITY {
            continue;
        }
        let z = lp + ca.log_z + cb.log_z;
        if z > m {
            acc = acc * (m - z).exp() + 1.0;
            m = z;
        } else {
            acc += (z - m).exp();
        }
        let v = lp + ca.map + cb.map;
        if v > best {
            best = v;
            best_split = a.bits();
        }
        count += ca.n_finite * cb.n_finite;
    }
    Cell {
        log_z: if count == 0 {
            f64::NEG_INFINITY
        } else {
            m + acc.ln()
        },
        map: best,
        map_split: best_split,
        n_finite: count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model with a hand-set potential per split: `log psi = -|A| * |B|` plus a forbidden split.
    struct Toy {
        n: usize,
    }

    impl SplitModel for Toy {
        type Stat = ();
        fn n_leaves(&self) -> usize {
            self.n
        }
        fn stat(&self, _: Subset) {}
        fn log_psi_with(&self, a: Subset, _: &(), b: Subset, _: &(), _: &()) -> f64 {
            if a == Subset::singleton(0) && b == Subset::singleton(1) {
                f64::NEG_INFINITY
            } else {
                -((a.len() * b.len()) as f64) + 0.1 * (a.bits() % 7) as f64
            }
        }
    }

    #[test]
    fn matches_enumeration_with_forbidden_splits() {
        for n in 1..=7 {
            let m = Toy { n };
            let t = FullTrellis::build(&m).unwrap();
            let all = Tree::enumerate_all(Subset::full(n));
            let lls: Vec<f64> = all.iter().map(|t| t.log_likelihood(&m)).collect();
            let finite = lls.iter().filter(|x| x.is_finite()).count() as u128;
            let max = lls.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let lz = lls
                .iter()
                .cloned()
                .fold(f64::NEG_INFINITY, crate::model::log_add_exp);
            assert_eq!(t.n_trees_finite(), finite, "n = {n}");
            let close = |a: f64, b: f64| a == b || (a - b).abs() < 1e-9;
            assert!(close(t.map_log_likelihood(), max), "n = {n}");
            assert!(close(t.log_partition(), lz), "n = {n}");
            assert!(close(t.map_tree().log_likelihood(&m), max), "n = {n}");
            if n == 2 {
                assert_eq!(
                    t.log_partition(),
                    f64::NEG_INFINITY,
                    "the only split is forbidden"
                );
            }
        }
    }

    #[test]
    fn refuses_large_n_with_cost() {
        let err = FullTrellis::build_with_limit(&Toy { n: 30 }, 20).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("N = 30") && msg.contains("limit of 20") && msg.contains("GiB"));
    }
}
