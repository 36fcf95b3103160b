//! The inner loop of the full trellis: batches of clusters, each visiting its splits in order.
//!
//! The splits go to the model in blocks of [`BLOCK`] (so it can vectorise); the block's terms
//! are then accumulated in split order without data-dependent branches. Each child's results sit
//! next to the model's statistics in one 64-byte [`Record`], so a split touches one cache line
//! per child, prefetched [`PREFETCH`] splits ahead. A batch of clusters that share their high
//! leaves steps through the high part of their splits together ([`solve_batch`]), so that the
//! children read in one step stay in the cache for the whole batch.

use crate::model::{Siblings, SplitModel};
use crate::subset::Subset;

/// Per-cluster results of the dynamic programme (40 bytes, read together for each child).
#[derive(Clone, Copy, Debug)]
pub(super) struct Cell {
    pub(super) log_z: f64,
    pub(super) map: f64,
    /// `E[log phi(H)]` under the posterior over trees of this cluster (for the entropy).
    pub(super) mean_log_phi: f64,
    /// Number of finite-likelihood trees, as two u64 halves (u128 would pad the cell to 48 B).
    pub(super) n_finite: [u64; 2],
}

impl Cell {
    #[inline]
    pub(super) fn count(&self) -> u128 {
        (self.n_finite[1] as u128) << 64 | self.n_finite[0] as u128
    }
}

pub(super) const EMPTY_CELL: Cell = Cell {
    log_z: f64::NEG_INFINITY,
    map: f64::NEG_INFINITY,
    mean_log_phi: 0.0,
    n_finite: [0, 0],
};

pub(super) const LEAF_CELL: Cell = Cell {
    log_z: 0.0,
    map: 0.0,
    mean_log_phi: 0.0,
    n_finite: [1, 0],
};

/// A cluster's results and the model's statistics side by side, 64-byte aligned, so that the
/// two children of a split cost one cache line each (the table is read in a scattered order).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(super) struct Record<S> {
    pub(super) cell: Cell,
    pub(super) stat: S,
}

/// One cluster's running sums while its splits are visited in split order, possibly in several
/// runs: the log-sum-exp's maximum and kept terms, the MAP and its split, the finite-tree count.
#[derive(Default)]
pub(super) struct ClusterSums {
    zmax: f64,
    best: f64,
    best_split: u32,
    count: u128,
    /// Kept terms `log psi + log Z(A) + log Z(B)` and `log psi + E(A) + E(B)`, in split order.
    z: Vec<f64>,
    e: Vec<f64>,
}

impl ClusterSums {
    fn reset(&mut self) {
        self.zmax = f64::NEG_INFINITY;
        self.best = f64::NEG_INFINITY;
        self.best_split = 0;
        self.count = 0;
        self.z.clear();
        self.e.clear();
    }

    /// The cluster's cell and the `A` bits of its MAP split, once every split was visited.
    fn finish(&self) -> (Cell, u32) {
        if self.count == 0 {
            return (EMPTY_CELL, 0);
        }
        let (sum, esum) = sum_exp_weighted(&self.z, &self.e, self.zmax);
        (
            Cell {
                log_z: self.zmax + sum.ln(),
                map: self.best,
                mean_log_phi: esum / sum,
                n_finite: [self.count as u64, (self.count >> 64) as u64],
            },
            self.best_split,
        )
    }
}

/// Reusable per-thread buffers: one [`ClusterSums`] per cluster of a batch.
#[derive(Default)]
pub(super) struct Scratch {
    sums: Vec<ClusterSums>,
}

/// Solves a batch of clusters of one size (all `k >= 2` leaves), returning each one's cell and
/// the `A` bits of its MAP split, in the batch's order.
///
/// A cluster's splits are visited in `Subset::splits` order: `A = low + sub`, with `sub`
/// running down over the proper submasks of `rest = S - low` (`low`: the cluster's lowest leaf),
/// ending with `sub = 0`. Split the leaves into the bits of `low_mask` and the rest (the "high"
/// bits). When every cluster of the batch has its lowest leaf among the low bits and the same
/// high bits `H`, the order runs over the submasks `h` of `H` (descending, the major key) and,
/// for each, over the low part. The batch then visits its clusters in lockstep, one `h` at a
/// time: every child read in that step has high bits `h` or `H - h`, so the records of all the
/// batch's clusters for that step come from two contiguous stretches of the table, which stay in
/// cache while the batch's clusters reuse them. Each cluster still sees its own splits in its
/// own order, so the results are the same bit for bit as one cluster at a time
/// (`low_mask = u64::MAX`).
///
/// Within a run, the splits go to the model in blocks of [`BLOCK`] (so it can vectorise), then
/// the block's terms are accumulated in split order without data-dependent branches: a split
/// with a child that has no finite tree (or a forbidden split) gets a `-inf` (or NaN) term,
/// which is never kept for the log-sum-exp, never beats the MAP, and is masked out of the
/// count. The result is the same, bit for bit, as skipping such splits.
pub(super) fn solve_batch<M: SplitModel>(
    model: &M,
    records: &[Record<M::Stat>],
    batch: &[Subset],
    low_mask: u64,
    scratch: &mut Scratch,
) -> Vec<(Cell, u32)> {
    let Some(first) = batch.first() else {
        return Vec::new();
    };
    // A child of at most 18 leaves has at most 33!! < 2^64 trees: below 20 leaves every
    // count fits in 64 bits, and the product of two in 128.
    let wide = first.len() >= 20;
    let visit = |s: Subset, h: u64, rest_low: u64, first: u64, x: &mut ClusterSums| {
        if wide {
            run::<M, true>(model, records, s, h, rest_low, first, x);
        } else {
            run::<M, false>(model, records, s, h, rest_low, first, x);
        }
    };
    if scratch.sums.len() < batch.len().max(1) {
        scratch
            .sums
            .resize_with(batch.len().max(1), ClusterSums::default);
    }
    let Some(high) = shared_high(batch, low_mask) else {
        // One cluster at a time, in a single run over all its splits.
        let x = &mut scratch.sums[0];
        return batch
            .iter()
            .map(|&s| {
                let (rest, first) = whole_run(s);
                x.reset();
                visit(s, 0, rest, first, x);
                x.finish()
            })
            .collect();
    };
    let sums = &mut scratch.sums[..batch.len()];
    for x in sums.iter_mut() {
        x.reset();
    }
    for_each_step(batch, low_mask, high, |i, h, rest_low, first| {
        visit(batch[i], h, rest_low, first, &mut sums[i])
    });
    sums.iter().map(ClusterSums::finish).collect()
}

/// The high bits (outside `low_mask`) that every cluster of `batch` shares, when the batch can
/// step through its splits in lockstep: every cluster has those high bits (not none), some low
/// bits (its lowest leaf is among them) and at least 2 leaves. `None`: one cluster at a time.
pub(super) fn shared_high(batch: &[Subset], low_mask: u64) -> Option<u64> {
    let high = batch.first()?.bits() & !low_mask;
    let tiled = high != 0
        && batch.iter().all(|s| {
            let b = s.bits();
            b & !low_mask == high && b & low_mask != 0 && s.len() >= 2
        });
    tiled.then_some(high)
}

/// `(rest, first)` of the single run over all the splits of `s`: `rest = S - low`, and the
/// first `sub`, its largest proper submask.
pub(super) fn whole_run(s: Subset) -> (u64, u64) {
    let rest = s.bits() & !s.lowest_bit().bits();
    (rest, rest.wrapping_sub(1) & rest)
}

/// The runs of a batch that shares the high bits `high` ([`shared_high`]), in lockstep order:
/// `h` running down over the submasks of `high` (the major key of every cluster's split order)
/// and, for each, the clusters in batch order; calls `visit(i, h, rest_low, first)` for cluster
/// `i`'s run over `A = low + h + l`, `l` from `first` down to 0 over the submasks of `rest_low`.
pub(super) fn for_each_step(
    batch: &[Subset],
    low_mask: u64,
    high: u64,
    mut visit: impl FnMut(usize, u64, u64, u64),
) {
    let mut h = high;
    loop {
        for (i, &s) in batch.iter().enumerate() {
            let set = s.bits();
            let rest_low = (set ^ (set & set.wrapping_neg())) & low_mask;
            // The step h = H excludes sub = S - low (B would be empty).
            if h != high {
                visit(i, h, rest_low, rest_low);
            } else if rest_low != 0 {
                visit(i, h, rest_low, rest_low.wrapping_sub(1) & rest_low);
            }
        }
        if h == 0 {
            break;
        }
        h = h.wrapping_sub(1) & high;
    }
}

/// Visits the splits of `s` with `A = low + h + l`, `l` running down over the submasks of
/// `rest_low` from `first` to 0 (or, for `low_mask = u64::MAX` callers, `h = 0` and `rest_low`
/// all of `S - low`), adding their terms to `x`.
#[inline(always)]
fn run<M: SplitModel, const WIDE: bool>(
    model: &M,
    records: &[Record<M::Stat>],
    s: Subset,
    h: u64,
    rest_low: u64,
    first: u64,
    x: &mut ClusterSums,
) {
    let sp = &records[s.index()].stat;
    let base = records.as_ptr();
    let ClusterSums {
        zmax,
        best,
        best_split,
        count,
        z,
        e,
    } = x;
    let (mut zmax, mut best, mut best_split, mut count) = (*zmax, *best, *best_split, *count);
    let mut block = [Siblings {
        a: s,
        sa: sp,
        b: s,
        sb: sp,
    }; BLOCK];
    let mut lps = [0.0f64; BLOCK];
    let (mut zb, mut eb) = ([0.0f64; BLOCK], [0.0f64; BLOCK]);
    let set = s.bits();
    let low = set & set.wrapping_neg();
    let mut l = first;
    let mut done = false;
    // A second cursor PREFETCH splits ahead (it wraps around harmlessly: every submask of
    // `rest_low` names a record of a subset of S).
    let mut ahead = first;
    for _ in 0..PREFETCH {
        ahead = ahead.wrapping_sub(1) & rest_low;
    }
    while !done {
        let mut len = 0;
        while len < BLOCK && !done {
            let (xa, xb) = (ahead | h | low, set ^ (ahead | h | low));
            prefetch(base.wrapping_add(xa as usize));
            prefetch(base.wrapping_add(xb as usize));
            ahead = ahead.wrapping_sub(1) & rest_low;
            let (a, b) = (l | h | low, set ^ (l | h | low));
            done = l == 0;
            l = l.wrapping_sub(1) & rest_low;
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
        // The block's count apart (the running one would not stay in registers).
        let mut block_count = 0u128;
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
                    block_count += ca.count() * cb.count();
                }
            } else {
                let mask = (valid as u64).wrapping_neg();
                block_count += (ca.n_finite[0] & mask) as u128 * cb.n_finite[0] as u128;
            }
        }
        count += block_count;
        z.extend_from_slice(&zb[..kept]);
        e.extend_from_slice(&eb[..kept]);
    }
    (x.zmax, x.best, x.best_split, x.count) = (zmax, best, best_split, count);
}

/// How many splits ahead a cluster's loop prefetches both children's records (here and in the
/// MAP-only trellis).
pub(super) const PREFETCH: usize = 40;

/// How many splits a cluster's loop hands to the model at once.
const BLOCK: usize = 64;

/// Asks the CPU to start loading `r` into cache (a hint; no effect on results).
#[inline(always)]
pub(super) fn prefetch<T>(r: *const T) {
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
        if crate::simd::avx2_allowed() {
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
    let (mut a, mut ea) = ([0.0f64; 4], [0.0f64; 4]);
    // SAFETY: both arrays hold four f64.
    unsafe {
        _mm256_storeu_pd(a.as_mut_ptr(), acc);
        _mm256_storeu_pd(ea.as_mut_ptr(), eacc);
    }
    finish_lanes(a, ea, &z[whole..n], &e[whole..n], zmax)
}

/// Adds the last (fewer than four) terms to lanes `0..` of the running sums and combines the
/// lanes as `(l0 + l1) + (l2 + l3)`.
#[inline(always)]
fn finish_lanes(
    mut acc: [f64; 4],
    mut eacc: [f64; 4],
    z: &[f64],
    e: &[f64],
    zmax: f64,
) -> (f64, f64) {
    for (l, (&zk, &ek)) in z.iter().zip(e).enumerate() {
        let w = crate::numeric::exp(zk - zmax);
        acc[l] += w;
        eacc[l] += w * ek;
    }
    (
        (acc[0] + acc[1]) + (acc[2] + acc[3]),
        (eacc[0] + eacc[1]) + (eacc[2] + eacc[3]),
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
    finish_lanes(acc, eacc, zr, er, zmax)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
