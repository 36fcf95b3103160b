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
//! Clusters are processed layer by layer in increasing size, each layer in parallel (rayon).
//! Each cluster's results sit next to the model's statistics in one 64-byte record, so a split
//! touches one cache line per child, prefetched 40 splits ahead. A cluster's splits go to the
//! model 64 at a time ([`SplitModel::log_psi_siblings`]; the Ginkgo model evaluates four at once
//! with AVX2), and their terms are then accumulated in split order without data-dependent
//! branches. The log-sum-exp runs over a buffer of terms with a vectorised `exp`
//! ([`crate::numeric::exp`], AVX2 when available).
//! Every cluster's value is computed by one thread in a fixed order, so results are
//! bit-identical for any thread count.

use super::ExactError;
use crate::model::{Siblings, SplitModel};
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
    /// Wall time on two cores by the measured cost model ([`NS_PER_SPLIT_IN_CACHE`],
    /// [`NS_PER_SPLIT_BEYOND_CACHE`]).
    pub seconds: f64,
    /// The model's cost of one split evaluation, in nanoseconds of one core.
    pub ns_per_split: f64,
}

/// Measured cost of one split evaluation (log Z, MAP, count and entropy; Ginkgo model), in
/// nanoseconds of one core, while the record table fits the 32 MiB L3 cache (N <= 19): CPU time
/// of N = 17 to 19 on one thread of the reference machine (AMD EPYC, Zen 4, 2.6 GHz, 2 cores).
pub const NS_PER_SPLIT_IN_CACHE: f64 = 14.0;

/// As [`NS_PER_SPLIT_IN_CACHE`], for tables beyond the cache (N >= 20): from N = 24 on 2 cores.
pub const NS_PER_SPLIT_BEYOND_CACHE: f64 = 24.5;

impl TrellisCost {
    /// The cost of a full trellis over `n` leaves whose model keeps `stat_bytes` per subset.
    pub fn of(n: usize, stat_bytes: usize) -> TrellisCost {
        let subsets = 2f64.powi(n as i32);
        // Build: 64-byte records (cell + statistics) plus back-pointers; result: cells.
        let record = (std::mem::size_of::<Cell>() + stat_bytes).div_ceil(64) * 64;
        let per_subset = (record + std::mem::size_of::<Cell>() + 4) as f64;
        let splits = (3f64.powi(n as i32) + 1.0) / 2.0 - subsets;
        let ns_per_split = if subsets * record as f64 <= 32.0 * 1024.0 * 1024.0 {
            NS_PER_SPLIT_IN_CACHE
        } else {
            NS_PER_SPLIT_BEYOND_CACHE
        };
        TrellisCost {
            bytes: subsets * per_subset,
            splits,
            seconds: splits * ns_per_split * 1e-9 / 2.0,
            ns_per_split,
        }
    }
}

/// Per-cluster results of the dynamic programme (40 bytes, read together for each child).
#[derive(Clone, Copy, Debug)]
struct Cell {
    log_z: f64,
    map: f64,
    /// `E[log phi(H)]` under the posterior over trees of this cluster (for the entropy).
    mean_log_phi: f64,
    /// Number of finite-likelihood trees, as two u64 halves (u128 would pad the cell to 48 B).
    n_finite: [u64; 2],
}

impl Cell {
    #[inline]
    fn count(&self) -> u128 {
        (self.n_finite[1] as u128) << 64 | self.n_finite[0] as u128
    }
}

const EMPTY_CELL: Cell = Cell {
    log_z: f64::NEG_INFINITY,
    map: f64::NEG_INFINITY,
    mean_log_phi: 0.0,
    n_finite: [0, 0],
};

const LEAF_CELL: Cell = Cell {
    log_z: 0.0,
    map: 0.0,
    mean_log_phi: 0.0,
    n_finite: [1, 0],
};

/// The full cluster trellis over all subsets of `N` leaves, after the bottom-up pass.
#[derive(Clone, Debug)]
pub struct FullTrellis {
    n: usize,
    cells: Vec<Cell>,
    /// The `A` part of each cluster's best split (0 for single leaves).
    map_split: Vec<u32>,
}

/// Reusable per-thread buffers for one cluster's split terms.
#[derive(Default)]
struct Scratch {
    z: Vec<f64>,
    e: Vec<f64>,
}

/// A cluster's results and the model's statistics side by side, 64-byte aligned, so that the
/// two children of a split cost one cache line each (the table is read in a scattered order).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Record<S> {
    cell: Cell,
    stat: S,
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
        let n = model.n_leaves();
        if n == 0 {
            return Err(ExactError::Empty);
        }
        let cost = TrellisCost::of(n, std::mem::size_of::<M::Stat>());
        if n > max_leaves.min(MAX_LEAVES) {
            return Err(ExactError::TooManyLeaves {
                n,
                limit: max_leaves.min(MAX_LEAVES),
                cost,
            });
        }
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
        for k in 2..=n {
            let layer: Vec<Subset> = Subset::of_size(n, k).collect();
            let done = &records;
            let values: Vec<(Cell, u32)> = layer
                .par_iter()
                .with_min_len(16)
                .map_init(Scratch::default, |scratch, &s| {
                    solve_cluster(model, done, s, scratch)
                })
                .collect();
            for (s, (c, a)) in layer.into_iter().zip(values) {
                records[s.index()].cell = c;
                map_split[s.index()] = a;
            }
        }
        let cells = records.into_iter().map(|r| r.cell).collect();
        Ok(FullTrellis {
            n,
            cells,
            map_split,
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

    /// A tree with the MAP value (the first found in split order among ties).
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

    /// Number of trees that tie for the MAP value, by a second `O(3^N)` pass over the splits
    /// with `model` (which must be the model the trellis was built from): a split of `S` counts
    /// when its best completion reaches `MAP(S)` to within `tol`. `tol` only absorbs rounding:
    /// the count is exact for true ties (energies equal up to rounding); since the tolerance
    /// applies at every node, a tree up to `(N-1) tol` below the MAP can be counted, so with a
    /// large `tol` it is an upper bound on the trees within `tol`. Energies with many ties (e.g. Dasgupta's cost on unit
    /// weights) have many MAP trees; [`FullTrellis::map_tree`] returns one of them. 0 if no tree
    /// has a finite log-likelihood. Errors when `model` has a different number of leaves.
    pub fn n_map_trees<M: SplitModel>(&self, model: &M, tol: f64) -> Result<u128, ExactError> {
        let stats = self.model_stats(model)?;
        let mut count = vec![0u128; 1usize << self.n];
        for i in 0..self.n {
            count[1 << i] = 1;
        }
        for k in 2..=self.n {
            for s in Subset::of_size(self.n, k) {
                let best = self.cells[s.index()].map;
                if best == f64::NEG_INFINITY {
                    continue;
                }
                let sp = &stats[s.index()];
                let mut c = 0u128;
                for (a, b) in s.splits() {
                    let (ma, mb) = (self.cells[a.index()].map, self.cells[b.index()].map);
                    if ma == f64::NEG_INFINITY || mb == f64::NEG_INFINITY {
                        continue;
                    }
                    let v = model.log_psi_with(a, &stats[a.index()], b, &stats[b.index()], sp)
                        + ma
                        + mb;
                    if v >= best - tol {
                        c = c.saturating_add(count[a.index()].saturating_mul(count[b.index()]));
                    }
                }
                count[s.index()] = c;
            }
        }
        Ok(count[(1usize << self.n) - 1])
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

/// Largest N any full trellis accepts (split back-pointers are stored as u32).
pub const MAX_LEAVES: usize = 32;

/// One cluster: one pass over its splits (potential, log-sum-exp terms, MAP, count), then the
/// exponentials of the terms.
///
/// The splits go to the model in blocks of [`BLOCK`] (so it can vectorise), then the block's
/// terms are accumulated in split order without data-dependent branches: a split with a child
/// that has no finite tree (or a forbidden split) gets a `-inf` (or NaN) term, which is never
/// kept for the log-sum-exp, never beats the MAP, and is masked out of the count. The result is
/// the same, bit for bit, as skipping such splits.
#[inline]
fn solve_cluster<M: SplitModel>(
    model: &M,
    records: &[Record<M::Stat>],
    s: Subset,
    scratch: &mut Scratch,
) -> (Cell, u32) {
    // A child of at most 18 leaves has at most 33!! < 2^64 trees: below 20 leaves every
    // count fits in 64 bits, and the product of two in 128.
    if s.len() < 20 {
        solve_cluster_counts::<M, false>(model, records, s, scratch)
    } else {
        solve_cluster_counts::<M, true>(model, records, s, scratch)
    }
}

/// [`solve_cluster`] for children whose finite-tree counts may need more than 64 bits (`WIDE`)
/// or not.
#[inline(always)]
fn solve_cluster_counts<M: SplitModel, const WIDE: bool>(
    model: &M,
    records: &[Record<M::Stat>],
    s: Subset,
    scratch: &mut Scratch,
) -> (Cell, u32) {
    let Scratch { z, e } = scratch;
    z.clear();
    e.clear();
    let sp = &records[s.index()].stat;
    let base = records.as_ptr();
    let mut zmax = f64::NEG_INFINITY;
    let mut best = f64::NEG_INFINITY;
    let mut best_split = 0u32;
    let mut count = 0u128;
    let mut block = [Siblings {
        a: s,
        sa: sp,
        b: s,
        sb: sp,
    }; BLOCK];
    let mut lps = [0.0f64; BLOCK];
    let (mut zb, mut eb) = ([0.0f64; BLOCK], [0.0f64; BLOCK]);
    // The splits in `Subset::splits` order: A = low + sub, with sub running down over the proper
    // submasks of rest = S - low, ending with sub = 0.
    let set = s.bits();
    let low = set & set.wrapping_neg();
    let rest = set ^ low;
    let mut sub = rest;
    let mut done = rest == 0;
    // A second cursor PREFETCH splits ahead (it wraps around harmlessly: every submask of `rest`
    // names a record of a subset of S).
    let mut ahead = rest;
    for _ in 0..PREFETCH {
        ahead = ahead.wrapping_sub(1) & rest;
    }
    while !done {
        let mut len = 0;
        while len < BLOCK && !done {
            sub = sub.wrapping_sub(1) & rest;
            done = sub == 0;
            ahead = ahead.wrapping_sub(1) & rest;
            let (xa, xb) = (ahead | low, set ^ (ahead | low));
            prefetch(base.wrapping_add(xa as usize));
            prefetch(base.wrapping_add(xb as usize));
            let (a, b) = (sub | low, set ^ (sub | low));
            // SAFETY: A and B are subsets of S, whose record exists (S indexed it above).
            let (ra, rb) = unsafe { (&*base.add(a as usize), &*base.add(b as usize)) };
            block[len] = Siblings {
                a: Subset(a),
                sa: &ra.stat,
                b: Subset(b),
                sb: &rb.stat,
            };
            len += 1;
        }
        model.log_psi_siblings(sp, &block[..len], &mut lps[..len]);
        let mut kept = 0;
        for (x, &lp) in block[..len].iter().zip(&lps[..len]) {
            // SAFETY: as above.
            let (ca, cb) = unsafe {
                (
                    &(*base.add(x.a.index())).cell,
                    &(*base.add(x.b.index())).cell,
                )
            };
            let zk = lp + ca.log_z + cb.log_z;
            // Terms far below the running maximum (hence below the final one) cannot change
            // the sum at double precision: leave them out of the exponentials. A term not kept
            // is below the maximum (or -inf or NaN), so the maximum may be updated regardless.
            zb[kept] = zk;
            eb[kept] = lp + ca.mean_log_phi + cb.mean_log_phi;
            kept += (zk > zmax + NEGLIGIBLE) as usize;
            zmax = if zk > zmax { zk } else { zmax };
            let v = lp + ca.map + cb.map;
            if v > best {
                best = v;
                best_split = x.a.bits() as u32;
            }
            let valid = lp != f64::NEG_INFINITY
                && ca.log_z != f64::NEG_INFINITY
                && cb.log_z != f64::NEG_INFINITY;
            if WIDE {
                if valid {
                    count += ca.count() * cb.count();
                }
            } else {
                let mask = (valid as u64).wrapping_neg();
                count += (ca.n_finite[0] & mask) as u128 * cb.n_finite[0] as u128;
            }
        }
        z.extend_from_slice(&zb[..kept]);
        e.extend_from_slice(&eb[..kept]);
    }
    if count == 0 {
        return (EMPTY_CELL, 0);
    }
    let (sum, esum) = sum_exp_weighted(z, e, zmax);
    (
        Cell {
            log_z: zmax + sum.ln(),
            map: best,
            mean_log_phi: esum / sum,
            n_finite: [count as u64, (count >> 64) as u64],
        },
        best_split,
    )
}

/// How many splits ahead [`solve_cluster`] prefetches.
const PREFETCH: usize = 40;

/// How many splits [`solve_cluster`] hands to the model at once.
const BLOCK: usize = 64;

/// Asks the CPU to start loading `r` into cache (a hint; no effect on results).
#[inline(always)]
fn prefetch<T>(r: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint and never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(r as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// Terms this far below the largest (in log space) are below the rounding of the sum even with
/// 2^31 of them (e^-60 ~ 1e-26) and are not summed.
const NEGLIGIBLE: f64 = -60.0;

/// `(sum_k exp(z_k - zmax), sum_k exp(z_k - zmax) e_k)`, with AVX2 when the CPU has it. Both
/// paths run the same operations in the same order (four running sums, combined at the end), so
/// the result is bit-identical on any x86-64 CPU and for any thread count.
#[inline]
fn sum_exp_weighted(z: &[f64], e: &[f64], zmax: f64) -> (f64, f64) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, the only feature the function is compiled for.
            return unsafe { sum_exp_weighted_avx2(z, e, zmax) };
        }
    }
    sum_exp_weighted_lanes(z, e, zmax)
}

/// [`sum_exp_weighted_lanes`] written with AVX2 intrinsics: lane `l` of each vector is running
/// sum `l`, and [`crate::numeric::exp4`] performs exactly the scalar [`crate::numeric::exp`]'s operations (the
/// compiler keeps the scalar version's per-lane code scalar, at a third of the speed).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sum_exp_weighted_avx2(z: &[f64], e: &[f64], zmax: f64) -> (f64, f64) {
    use std::arch::x86_64::*;
    let n = z.len().min(e.len());
    let whole = n / 4 * 4;
    let m = _mm256_set1_pd(zmax);
    let mut acc = _mm256_setzero_pd();
    let mut eacc = _mm256_setzero_pd();
    let mut i = 0;
    while i < whole {
        // SAFETY: i + 4 <= n, so both unaligned loads are in bounds.
        let (zs, es) = unsafe {
            (
                _mm256_loadu_pd(z.as_ptr().add(i)),
                _mm256_loadu_pd(e.as_ptr().add(i)),
            )
        };
        let w = crate::numeric::exp4(_mm256_sub_pd(zs, m));
        acc = _mm256_add_pd(acc, w);
        eacc = _mm256_add_pd(eacc, _mm256_mul_pd(w, es));
        i += 4;
    }
    let mut a = [0.0f64; 4];
    let mut ea = [0.0f64; 4];
    // SAFETY: both arrays hold four f64.
    unsafe {
        _mm256_storeu_pd(a.as_mut_ptr(), acc);
        _mm256_storeu_pd(ea.as_mut_ptr(), eacc);
    }
    for (l, (&zk, &ek)) in z[whole..n].iter().zip(&e[whole..n]).enumerate() {
        let w = crate::numeric::exp(zk - zmax);
        a[l] += w;
        ea[l] += w * ek;
    }
    (
        (a[0] + a[1]) + (a[2] + a[3]),
        (ea[0] + ea[1]) + (ea[2] + ea[3]),
    )
}

#[inline(always)]
fn sum_exp_weighted_lanes(z: &[f64], e: &[f64], zmax: f64) -> (f64, f64) {
    let mut acc = [0.0f64; 4];
    let mut eacc = [0.0f64; 4];
    let (zc, ec) = (z.chunks_exact(4), e.chunks_exact(4));
    let (zr, er) = (zc.remainder(), ec.remainder());
    for (zs, es) in zc.zip(ec) {
        for l in 0..4 {
            let w = crate::numeric::exp(zs[l] - zmax);
            acc[l] += w;
            eacc[l] += w * es[l];
        }
    }
    for (l, (&zk, &ek)) in zr.iter().zip(er).enumerate() {
        let w = crate::numeric::exp(zk - zmax);
        acc[l] += w;
        eacc[l] += w * ek;
    }
    (
        (acc[0] + acc[1]) + (acc[2] + acc[3]),
        (eacc[0] + eacc[1]) + (eacc[2] + eacc[3]),
    )
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
            let all = Tree::enumerate_all(Subset::full(n)).unwrap();
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

    #[test]
    fn counts_map_trees_with_ties() {
        for (n, model) in (2..=7).map(|n| (n, BySize { n })) {
            let t = FullTrellis::build(&model).unwrap();
            let all = Tree::enumerate_all(Subset::full(n)).unwrap();
            let best = t.map_log_likelihood();
            let want = all
                .iter()
                .filter(|x| x.log_likelihood(&model) >= best - 1e-9)
                .count() as u128;
            assert_eq!(t.n_map_trees(&model, 1e-9).unwrap(), want, "n = {n}");
        }
        // No ties: exactly one tree for the Toy model (distinct potentials) at n = 5.
        let m = Toy { n: 5 };
        let t = FullTrellis::build(&m).unwrap();
        let all = Tree::enumerate_all(Subset::full(5)).unwrap();
        let best = t.map_log_likelihood();
        let want = all
            .iter()
            .filter(|x| x.log_likelihood(&m) >= best - 1e-9)
            .count() as u128;
        assert_eq!(t.n_map_trees(&m, 1e-9).unwrap(), want);
    }

    #[test]
    fn simd_and_plain_sums_are_bit_identical() {
        let z: Vec<f64> = (0..1003)
            .map(|i| -((i * 7919 % 1000) as f64) * 0.037)
            .collect();
        let e: Vec<f64> = (0..1003).map(|i| (i as f64).sin() * 30.0).collect();
        let a = sum_exp_weighted(&z, &e, 0.5);
        let b = sum_exp_weighted_lanes(&z, &e, 0.5);
        assert_eq!(a.0.to_bits(), b.0.to_bits());
        assert_eq!(a.1.to_bits(), b.1.to_bits());
        let want: f64 = z.iter().map(|x| (x - 0.5).exp()).sum();
        assert!((a.0 - want).abs() < 1e-12 * want);
    }

    #[test]
    fn refuses_large_n_with_cost() {
        let err = FullTrellis::build_with_limit(&Toy { n: 30 }, 20).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("N = 30") && msg.contains("limit of 20") && msg.contains("GiB"));
    }
}
