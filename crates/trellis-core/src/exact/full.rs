//! The full cluster trellis (Cluster Trellis paper, Algorithms 1-2): a dynamic programme over all
//! `2^N - 1` clusters that gives, exactly, the partition function `Z = sum_H prod psi`, the MAP
//! tree, and the number of trees with finite likelihood, in `O(3^N)` time.
//!
//! For a cluster `S`, with `(A, B)` running over the `2^(|S|-1) - 1` unordered splits of `S`:
//! - `log Z(S) = logsumexp_{(A,B)} [log psi(A,B) + log Z(A) + log Z(B)]`,
//! - `MAP(S) = max_{(A,B)} [log psi(A,B) + MAP(A) + MAP(B)]`,
//! - `count(S) = sum over splits with a finite term of count(A) * count(B)`,
//!
//! with `log Z = MAP = 0` and `count = 1` for single leaves. The same pass also gives the
//! posterior mean of the log-likelihood, `E(S) = sum_{(A,B)} w(A,B) [log psi(A,B) + E(A) + E(B)]`
//! with `w(A,B) = psi(A,B) Z(A) Z(B) / Z(S)`, hence the entropy of the posterior over trees,
//! `log Z - E(X)`.
//!
//! For the Ginkgo model, Dasgupta's cost, the HCC / correlation energy and the Ginkgo
//! generator's density (and `N >= 4`) the trellis runs in eight SIMD lanes instead
//! (`exact::lanes`: blocks of the subsets of the lowest three leaves, 14 splits per pair of
//! blocks; AVX-512, AVX2, NEON or scalar code by [`crate::simd::Isa`]): the same MAP values,
//! MAP splits and counts, bit for bit, log Z and the entropy to 1e-12, about three times
//! faster. Other models take the split loop below ([`FullTrellis::build_split_loop`] takes it
//! for any model).
//!
//! Clusters are processed layer by layer in increasing size, each layer in parallel (rayon).
//! Large clusters go in batches that share their high leaves and step through their splits in
//! lockstep, so that each step's children are read from the cache by the whole batch ([`Tiling`]).
//! Each cluster's results sit next to the model's statistics in one 64-byte record, so a split
//! touches one cache line per child, prefetched 40 splits ahead. A cluster's splits go to the
//! model 64 at a time ([`SplitModel::log_psi_siblings`]; the Ginkgo model evaluates four at once
//! with AVX2), and their terms are then accumulated in split order without data-dependent
//! branches. The log-sum-exp runs over a buffer of terms with a vectorised `exp`
//! ([`crate::numeric::exp`], AVX2 when available).
//! Every cluster's value is computed by one thread in a fixed order, so results are
//! bit-identical for any thread count.

use super::lanes;
use super::split_loop::{solve_batch, Cell, Record, Scratch, EMPTY_CELL, LEAF_CELL};
use super::ExactError;
use crate::model::SplitModel;
use crate::simd::Isa;
use crate::subset::Subset;
use crate::tree::Tree;
use rayon::prelude::*;

/// Default largest N the full trellis accepts (about 1 GiB of tables for the Ginkgo model).
pub const DEFAULT_MAX_LEAVES: usize = 22;

/// What a full-trellis run over N leaves costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrellisCost {
    /// Bytes of tables (per-subset values plus model statistics) and term buffers.
    pub bytes: f64,
    /// Split evaluations, `(3^N + 1)/2 - 2^N`.
    pub splits: f64,
    /// Wall time on two cores by the measured cost model ([`NS_PER_SPLIT_IN_CACHE`],
    /// [`NS_PER_SPLIT_BEYOND_CACHE`]).
    pub seconds: f64,
    /// The model's cost of one split evaluation, in nanoseconds of one core.
    pub ns_per_split: f64,
}

/// Measured cost of one split evaluation (log Z, MAP, count and entropy; Ginkgo model, eight
/// AVX-512 lanes), in nanoseconds of one core, while the tables fit the 32 MiB L3 cache: N = 20
/// on the reference machine (AMD EPYC, Zen 4, 2 cores), 4.03 s of wall time for 1.74e9 splits.
/// With AVX2 lanes a split costs about 1.5 times as much; for other models, or on a CPU
/// without AVX2 or NEON (the split loop), 3.5 to 6 times (README, "Per instruction set").
pub const NS_PER_SPLIT_IN_CACHE: f64 = 4.6;

/// As [`NS_PER_SPLIT_IN_CACHE`], for tables beyond the cache (N >= 20): from N = 24 on 2 cores
/// (406 s of wall time for 1.41e11 splits; the largest groups of parents read from memory).
pub const NS_PER_SPLIT_BEYOND_CACHE: f64 = 5.8;

impl TrellisCost {
    /// The cost of a full trellis over `n` leaves whose model keeps `stat_bytes` per subset.
    pub fn of(n: usize, stat_bytes: usize) -> TrellisCost {
        let subsets = 2f64.powi(n as i32);
        // Build: 64-byte records (cell + statistics) plus back-pointers; result: cells.
        let record = (std::mem::size_of::<Cell>() + stat_bytes).div_ceil(64) * 64;
        let per_subset = (record + std::mem::size_of::<Cell>() + 4) as f64;
        // Per thread (2), a batch's kept terms: up to 2^22 pairs of f64, twice that while a
        // buffer grows.
        let buffers = 2.0 * 2.0 * 16.0 * 2f64.powi(n.saturating_sub(1).min(22) as i32);
        let splits = (3f64.powi(n as i32) + 1.0) / 2.0 - subsets;
        let ns_per_split = if subsets * record as f64 <= 32.0 * 1024.0 * 1024.0 {
            NS_PER_SPLIT_IN_CACHE
        } else {
            NS_PER_SPLIT_BEYOND_CACHE
        };
        TrellisCost {
            bytes: subsets * per_subset + buffers,
            splits,
            seconds: splits * ns_per_split * 1e-9 / 2.0,
            ns_per_split,
        }
    }
}

/// `Err(TooMuchMemory)` when a trellis over `n` leaves, needing `bytes(n)` bytes (`cost` for
/// the message), would not fit in the memory this process may use
/// ([`crate::memory::usable_bytes`]; nothing is refused where the system tells no limit).
pub fn check_memory(
    n: usize,
    cost: &TrellisCost,
    bytes: impl Fn(usize) -> f64,
) -> Result<(), ExactError> {
    let Some(usable) = crate::memory::usable_bytes() else {
        return Ok(());
    };
    if bytes(n) <= usable as f64 {
        return Ok(());
    }
    let fits = (1..n)
        .rev()
        .find(|&k| bytes(k) <= usable as f64)
        .unwrap_or(0);
    Err(ExactError::TooMuchMemory {
        n,
        cost: *cost,
        usable,
        fits,
    })
}

/// `Err` when a full trellis over `n` leaves is above `max_leaves` (or [`MAX_LEAVES`]) or
/// would not fit in memory, with what it would cost.
fn check_size<M: SplitModel>(n: usize, max_leaves: usize) -> Result<(), ExactError> {
    let stat_bytes = std::mem::size_of::<M::Stat>();
    let cost = TrellisCost::of(n, stat_bytes);
    if n > max_leaves.min(MAX_LEAVES) {
        return Err(ExactError::TooManyLeaves {
            n,
            limit: max_leaves.min(MAX_LEAVES),
            cost,
        });
    }
    check_memory(n, &cost, |k| TrellisCost::of(k, stat_bytes).bytes)
}

/// The full cluster trellis over all subsets of `N` leaves, after the bottom-up pass.
#[derive(Clone, Debug)]
pub struct FullTrellis {
    n: usize,
    pub(super) cells: Vec<Cell>,
    /// The `A` part of each cluster's best split (0 for single leaves).
    pub(super) map_split: Vec<u32>,
    /// The number of trees tied with the MAP value and the tolerance it was counted at, when
    /// the build counted it ([`FullTrellis::build_with_ties`]).
    pub(super) map_ties: Option<(f64, u128)>,
}

impl FullTrellis {
    /// Runs the trellis for `model`, refusing `N > DEFAULT_MAX_LEAVES`.
    pub fn build<M: SplitModel>(model: &M) -> Result<FullTrellis, ExactError> {
        Self::build_with_limit(model, DEFAULT_MAX_LEAVES)
    }

    /// Runs the trellis for `model`, refusing `N > max_leaves` (and always `N > 32`) with an
    /// error that states the memory and time the run would need.
    pub fn build_with_limit<M: SplitModel>(
        model: &M,
        max_leaves: usize,
    ) -> Result<FullTrellis, ExactError> {
        Self::build_with_isa(model, max_leaves, Isa::detect())
    }

    /// Log Z alone, refusing `N > max_leaves` as [`FullTrellis::build_with_limit`] does:
    /// where that build takes the eight lanes, only their log-sum-exp runs (no MAP, counts or
    /// `E[log phi]`, about a third less work); elsewhere the full build. The same bits as
    /// `FullTrellis::build_with_limit(model, max_leaves)?.log_partition()`.
    pub fn log_partition_only<M: SplitModel>(
        model: &M,
        max_leaves: usize,
    ) -> Result<f64, ExactError> {
        Self::log_partition_only_isa(model, max_leaves, Isa::detect())
    }

    /// [`FullTrellis::log_partition_only`] with the lanes of `isa` ([`FullTrellis::build_with_isa`]).
    #[doc(hidden)]
    pub fn log_partition_only_isa<M: SplitModel>(
        model: &M,
        max_leaves: usize,
        isa: Isa,
    ) -> Result<f64, ExactError> {
        let n = model.n_leaves();
        let lane_model = model.lane_model().filter(|_| n >= lanes::MIN_LEAVES);
        match lane_model {
            Some(m) if isa.lanes_beat_split_loop() => {
                let cancel = crate::cancel::Cancel::new();
                check_size::<M>(n, max_leaves)?;
                lanes::log_z_model(m, isa, &cancel)
            }
            _ => Ok(Self::build_with_isa(model, max_leaves, isa)?.log_partition()),
        }
    }

    /// The full trellis by the split loop (one cluster at a time over its splits, the Ginkgo
    /// kernel four lanes wide), whatever the model: the baseline that the eight-lane path is
    /// measured against (benches, `examples/trellis_speed`). The same answers as
    /// [`FullTrellis::build_with_limit`] (log Z and the entropy to 1e-12).
    #[doc(hidden)]
    pub fn build_split_loop<M: SplitModel>(
        model: &M,
        max_leaves: usize,
    ) -> Result<FullTrellis, ExactError> {
        Self::build_tiled(model, max_leaves, Tiling::DEFAULT)
    }

    /// [`FullTrellis::build_with_limit`] with the vector instructions of `isa` (or the widest
    /// narrower set the CPU has) for the eight-lane path (`exact::lanes`: the models with a
    /// [`SplitModel::lane_model`]), where the lanes are faster than the split loop
    /// ([`Isa::lanes_beat_split_loop`]: not with the scalar set, which takes the split loop);
    /// other models go through the split loop whatever `isa` says. The MAP values, MAP trees and counts are the same for every `isa`;
    /// log Z and the entropy agree to 1e-12.
    pub fn build_with_isa<M: SplitModel>(
        model: &M,
        max_leaves: usize,
        isa: Isa,
    ) -> Result<FullTrellis, ExactError> {
        if !isa.lanes_beat_split_loop() {
            return Self::build_tiled(model, max_leaves, Tiling::DEFAULT);
        }
        Self::build_lanes(model, max_leaves, isa)
    }

    /// The eight-lane path with the lanes of `isa` whatever [`FullTrellis::build_with_isa`]
    /// would choose (the split loop for models without a lane kernel and below
    /// [`lanes::MIN_LEAVES`] leaves): every instruction set's lanes, for tests and benches.
    #[doc(hidden)]
    pub fn build_lanes<M: SplitModel>(
        model: &M,
        max_leaves: usize,
        isa: Isa,
    ) -> Result<FullTrellis, ExactError> {
        Self::build_lanes_with(model, max_leaves, isa, None)
    }

    /// [`FullTrellis::build_with_limit`] that also counts the trees tied with the MAP value at
    /// relative tolerance `rel_tol` ([`super::map_ties`]; a negative or NaN tolerance counts
    /// as 0), which [`FullTrellis::n_map_trees`] then returns without a second pass: on the
    /// eight-lane path in the same pass as the MAP (tolerances below 1/2), elsewhere by the
    /// second pass right after the build. The count is the same either way.
    pub fn build_with_ties<M: SplitModel>(
        model: &M,
        max_leaves: usize,
        rel_tol: f64,
    ) -> Result<FullTrellis, ExactError> {
        Self::build_with_ties_isa(model, max_leaves, rel_tol, Isa::detect())
    }

    /// [`FullTrellis::build_with_ties`] with the lanes of `isa` ([`FullTrellis::build_with_isa`]).
    #[doc(hidden)]
    pub fn build_with_ties_isa<M: SplitModel>(
        model: &M,
        max_leaves: usize,
        rel_tol: f64,
        isa: Isa,
    ) -> Result<FullTrellis, ExactError> {
        let tol = rel_tol.max(0.0);
        let mut t = if Self::counts_ties_in_pass_isa(model, rel_tol, isa) {
            Self::build_lanes_with(model, max_leaves, isa, Some(tol))?
        } else {
            Self::build_with_isa(model, max_leaves, isa)?
        };
        if t.map_ties.is_none() {
            t.map_ties = Some((tol, t.n_map_trees(model, tol)?));
        }
        Ok(t)
    }

    /// Whether [`FullTrellis::build_with_ties`] counts the MAP ties of `model` at `rel_tol` in
    /// the build's own pass (the eight lanes on a vector instruction set, `N >= 4`, a
    /// tolerance below 1/2), at little cost; otherwise it runs the second pass after the build.
    pub fn counts_ties_in_pass<M: SplitModel>(model: &M, rel_tol: f64) -> bool {
        Self::counts_ties_in_pass_isa(model, rel_tol, Isa::detect())
    }

    fn counts_ties_in_pass_isa<M: SplitModel>(model: &M, rel_tol: f64, isa: Isa) -> bool {
        isa.lanes_beat_split_loop()
            && model.lane_model().is_some()
            && model.n_leaves() >= lanes::MIN_LEAVES
            && lanes::ties::single_pass(rel_tol.max(0.0))
    }

    /// [`FullTrellis::build_lanes`], counting the MAP ties at `tie_tol` in the same pass.
    pub(crate) fn build_lanes_with<M: SplitModel>(
        model: &M,
        max_leaves: usize,
        isa: Isa,
        tie_tol: Option<f64>,
    ) -> Result<FullTrellis, ExactError> {
        let n = model.n_leaves();
        let Some(lane_model) = model.lane_model().filter(|_| n >= lanes::MIN_LEAVES) else {
            return Self::build_tiled(model, max_leaves, Tiling::DEFAULT);
        };
        // The token first: a cancellation from here on stops the build.
        let cancel = crate::cancel::Cancel::new();
        check_size::<M>(n, max_leaves)?;
        let (cells, map_split, ties) = lanes::build_model(lane_model, isa, tie_tol, &cancel)?;
        Ok(FullTrellis {
            n,
            cells,
            map_split,
            map_ties: tie_tol.zip(ties),
        })
    }

    /// [`FullTrellis::build_with_limit`] with the clusters of each size visited in batches as
    /// `tiling` says (the results are the same for every tiling, bit for bit).
    pub(crate) fn build_tiled<M: SplitModel>(
        model: &M,
        max_leaves: usize,
        tiling: Tiling,
    ) -> Result<FullTrellis, ExactError> {
        // The token first: a cancellation during the statistics table or the allocations below
        // stops the build at its first check.
        let cancel = crate::cancel::Cancel::new();
        let n = model.n_leaves();
        if n == 0 {
            return Err(ExactError::Empty);
        }
        check_size::<M>(n, max_leaves)?;
        let stats = model.stat_table()?;
        // The records are read in a scattered order: back them by 2 MiB pages where the system
        // allows it (before first touch), so that a read costs no TLB miss (with 4 KiB pages the
        // TLB covers about 12 MiB, a fifth of the table at N = 20).
        let mut records: Vec<Record<M::Stat>> = Vec::with_capacity(stats.len());
        crate::memory::advise_huge_pages(&records);
        records.extend(stats.into_iter().map(|stat| Record {
            cell: EMPTY_CELL,
            stat,
        }));
        if records.len() != 1usize << n {
            return Err(ExactError::BadStatTable {
                len: records.len(),
                n,
            });
        }
        let mut map_split = vec![0u32; 1usize << n];
        for i in 0..n {
            records[1 << i].cell = LEAF_CELL;
        }
        let threads = rayon::current_num_threads();
        if cancel.is_cancelled() {
            return Err(ExactError::Cancelled);
        }
        for k in 2..=n {
            let layer: Vec<Subset> = Subset::of_size(n, k).collect();
            let low_mask = if n >= tiling.min_leaves && k >= tiling.min_size && n > tiling.low_bits
            {
                (1u64 << tiling.low_bits) - 1
            } else {
                u64::MAX
            };
            // Batches hold at most 2^22 split terms (64 MiB of buffers per thread) and leave
            // every thread several batches.
            let cap = tiling
                .max_batch
                .min((1usize << 23 >> k).max(1))
                .min((layer.len() / (4 * threads)).max(1));
            let batches = batches(&layer, low_mask, cap);
            let done = &records;
            let values: Vec<Vec<(Cell, u32)>> = batches
                .par_iter()
                .map_init(Scratch::default, |scratch, r| {
                    if cancel.is_cancelled() {
                        return Vec::new();
                    }
                    solve_batch(model, done, &layer[r.clone()], low_mask, scratch)
                })
                .collect();
            if cancel.is_cancelled() {
                return Err(ExactError::Cancelled);
            }
            for (s, (c, a)) in layer.iter().zip(values.into_iter().flatten()) {
                records[s.index()].cell = c;
                map_split[s.index()] = a;
            }
        }
        let cells = records.into_iter().map(|r| r.cell).collect();
        Ok(FullTrellis {
            n,
            cells,
            map_split,
            map_ties: None,
        })
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.n
    }

    /// `log Z`: the log of the sum over all `(2N-3)!!` trees of the product of their potentials.
    pub fn log_partition(&self) -> f64 {
        self.root().log_z
    }

    /// `log Z(S)` of the sub-trellis over the leaves of `s` (trees over `s` only); errors unless
    /// `s` is a non-empty subset of `0..N`.
    pub fn log_partition_of(&self, s: Subset) -> Result<f64, ExactError> {
        Ok(self.cell_of(s)?.log_z)
    }

    /// `log Z(S)` for a cluster known to be inside `0..N`.
    #[inline]
    pub(crate) fn log_z_of(&self, s: Subset) -> f64 {
        self.cells[s.index()].log_z
    }

    /// The largest log-likelihood of any tree (the MAP value).
    pub fn map_log_likelihood(&self) -> f64 {
        self.root().map
    }

    /// The MAP value over trees of the leaves of `s`; errors unless `s` is a non-empty subset
    /// of `0..N`.
    pub fn map_log_likelihood_of(&self, s: Subset) -> Result<f64, ExactError> {
        Ok(self.cell_of(s)?.map)
    }

    /// A tree with the MAP value: at every cluster the split of largest computed value, the
    /// first in split order among equal ones ([`super::map_ties`] says which, and counts the
    /// tied trees with [`FullTrellis::n_map_trees`]).
    pub fn map_tree(&self) -> Tree {
        self.map_tree_trusted(Subset::full(self.n))
    }

    /// A MAP tree over the leaves of `s`; errors unless `s` is a non-empty subset of `0..N`.
    pub fn map_tree_of(&self, s: Subset) -> Result<Tree, ExactError> {
        self.cell_of(s)?;
        Ok(self.map_tree_trusted(s))
    }

    fn map_tree_trusted(&self, s: Subset) -> Tree {
        Tree::from_splits_trusted(s, |c| {
            let a = self.map_split[c.index()] as u64;
            let a = if a == 0 { c.lowest_bit() } else { Subset(a) };
            (a, c.minus(a))
        })
    }

    /// Number of trees whose log-likelihood is finite.
    pub fn n_trees_finite(&self) -> u128 {
        self.root().count()
    }

    /// Number of trees over the leaves of `s` with finite log-likelihood; errors unless `s` is
    /// a non-empty subset of `0..N`.
    pub fn n_trees_finite_of(&self, s: Subset) -> Result<u128, ExactError> {
        Ok(self.cell_of(s)?.count())
    }

    fn cell_of(&self, s: Subset) -> Result<&Cell, ExactError> {
        if !s.is_cluster_of(self.n) {
            return Err(ExactError::BadCluster {
                cluster: s.to_string(),
                n: self.n,
            });
        }
        Ok(&self.cells[s.index()])
    }

    /// The expected log-likelihood `E[log phi(H)]` under the posterior `P(H|X)`.
    pub fn mean_log_likelihood(&self) -> f64 {
        self.root().mean_log_phi
    }

    /// Entropy (nats) of the posterior over trees, `-sum_H P(H|X) log P(H|X)
    /// = log Z - E[log phi(H)]`; 0 when a single tree has finite likelihood, NaN when none has.
    pub fn entropy(&self) -> f64 {
        let r = self.root();
        if r.count() == 0 {
            f64::NAN
        } else {
            (r.log_z - r.mean_log_phi).max(0.0)
        }
    }

    /// The statistics table of `model`, checked to be over the trellis's leaves.
    pub(crate) fn model_stats<M: SplitModel>(&self, model: &M) -> Result<Vec<M::Stat>, ExactError> {
        self.check_model(model)?;
        let stats = model.stat_table()?;
        if stats.len() != 1usize << self.n {
            return Err(ExactError::BadStatTable {
                len: stats.len(),
                n: self.n,
            });
        }
        Ok(stats)
    }

    /// `Ok` when `model` has as many leaves as the trellis.
    pub(crate) fn check_model<M: SplitModel>(&self, model: &M) -> Result<(), ExactError> {
        if model.n_leaves() != self.n {
            return Err(ExactError::ModelMismatch {
                trellis: self.n,
                model: model.n_leaves(),
            });
        }
        Ok(())
    }

    fn root(&self) -> &Cell {
        &self.cells[(1usize << self.n) - 1]
    }
}

/// How the full trellis visits the clusters of one size (see [`solve_batch`]): clusters of at
/// least `min_size` leaves go in batches of up to `max_batch` clusters that share their leaves
/// outside the lowest `low_bits` leaves, and step through their splits in lockstep.
///
/// A large cluster's children do not fit in the cache, and the next cluster's children were
/// evicted by the time they are read again; in a batch, each step's children (two stretches of
/// `2^low_bits` records) are read by every cluster of the batch while they are in the cache.
/// Measured on the scaling config's jets, 2 cores: at N = 21 the clusters of 17 to 20 leaves went
/// from 12-27 to 8-16 ns per split (wall clock); at 15 leaves and below batches did not help,
/// nor at N = 20 (14.0 s either way), and at N = 18 (table in the L3) they cost 9 % of CPU time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tiling {
    /// Fewest leaves of the whole trellis for batches (below, clusters go one at a time).
    pub(crate) min_leaves: usize,
    pub(crate) low_bits: usize,
    pub(crate) min_size: usize,
    pub(crate) max_batch: usize,
}

impl Tiling {
    /// The measured choice.
    pub(crate) const DEFAULT: Tiling = Tiling {
        min_leaves: 21,
        low_bits: 14,
        min_size: 16,
        max_batch: 32,
    };
}

/// One cluster at a time (for tests: the reference every tiling must match bit for bit).
#[cfg(test)]
pub(super) const UNTILED: Tiling = Tiling {
    min_leaves: usize::MAX,
    low_bits: 32,
    min_size: usize::MAX,
    max_batch: 1,
};

/// Every tiling the tests try over `n` leaves: low bits 1..n-1, batches of 1, 2, 3, 7 and 64.
#[cfg(test)]
pub(super) fn test_tilings(n: usize) -> Vec<Tiling> {
    (1..n)
        .flat_map(|low_bits| {
            [1, 2, 3, 7, 64].map(|max_batch| Tiling {
                min_leaves: 0,
                low_bits,
                min_size: 2,
                max_batch,
            })
        })
        .collect()
}

/// Cuts a layer (in `Subset::of_size` order) into runs of at most `cap` consecutive clusters
/// with the same bits outside `low_mask` (a cluster with no bit inside it goes alone).
pub(super) fn batches(layer: &[Subset], low_mask: u64, cap: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=layer.len() {
        let cut = i == layer.len()
            || i - start >= cap
            || layer[i].bits() & !low_mask != layer[start].bits() & !low_mask
            || layer[i].bits() & low_mask == 0
            || layer[start].bits() & low_mask == 0;
        if cut {
            out.push(start..i);
            start = i;
        }
    }
    out
}

/// Largest N any full trellis accepts (split back-pointers are stored as u32).
pub const MAX_LEAVES: usize = 32;

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
            let (finite, max, lz) = crate::exact::enumerate_trees(&m);
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

    /// Ties: a model whose potential depends only on the split sizes has many MAP trees.
    struct BySize {
        n: usize,
    }

    impl SplitModel for BySize {
        type Stat = ();
        fn n_leaves(&self) -> usize {
            self.n
        }
        fn stat(&self, _: Subset) {}
        fn log_psi_with(&self, a: Subset, _: &(), b: Subset, _: &(), _: &()) -> f64 {
            -((a.len() as f64) - (b.len() as f64)).abs()
        }
    }

    /// Every cell and MAP split of `t`, as bits.
    fn fingerprint(t: &FullTrellis) -> Vec<[u64; 6]> {
        t.cells
            .iter()
            .zip(&t.map_split)
            .map(|(c, &a)| {
                [
                    c.log_z.to_bits(),
                    c.map.to_bits(),
                    c.mean_log_phi.to_bits(),
                    c.n_finite[0],
                    c.n_finite[1],
                    a as u64,
                ]
            })
            .collect()
    }

    /// Batches of clusters stepping through their splits in lockstep give every cluster's
    /// results bit for bit as one cluster at a time, whatever the tiling: Ginkgo jets (QCD, with
    /// forbidden clusters, and W), a model with a forbidden split, and one with many MAP ties.
    #[test]
    fn tiled_batches_give_the_same_bits() {
        use crate::data::ginkgo::{generate_dataset, GinkgoParams};
        let check = |name: &str, n: usize, build: &dyn Fn(Tiling) -> FullTrellis| {
            let want = fingerprint(&build(UNTILED));
            for tiling in test_tilings(n) {
                assert!(
                    fingerprint(&build(tiling)) == want,
                    "{name}, N = {n}, {tiling:?}"
                );
            }
        };
        let mut forbidden = false;
        for (params, seed) in [(GinkgoParams::qcd(), 3u64), (GinkgoParams::w_jet(), 4)] {
            for n in [6, 9, 11] {
                let ds = generate_dataset(&params, 1, n, n, seed + n as u64, 100_000, "t").unwrap();
                let m = ds.jets[0].model().unwrap();
                check("ginkgo", n, &|t| {
                    FullTrellis::build_tiled(&m, 32, t).unwrap()
                });
                let t = FullTrellis::build(&m).unwrap();
                forbidden |= t.cells.iter().any(|c| c.log_z == f64::NEG_INFINITY);
            }
        }
        assert!(forbidden, "some jet has a cluster with no finite tree");
        for n in [5, 8] {
            check("forbidden split", n, &|t| {
                FullTrellis::build_tiled(&Toy { n }, 32, t).unwrap()
            });
            check("ties", n, &|t| {
                FullTrellis::build_tiled(&BySize { n }, 32, t).unwrap()
            });
        }
    }

    #[test]
    fn refuses_large_n_with_cost() {
        let err = FullTrellis::build_with_limit(&Toy { n: 30 }, 20).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("N = 30") && msg.contains("limit of 20") && msg.contains("GiB"));
    }
}
