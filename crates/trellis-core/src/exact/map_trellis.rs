//! The MAP-only cluster trellis: the exact MAP value and tree, `MAP(S) = max_{(A,B)} [log
//! psi(A,B) + MAP(A) + MAP(B)]` over all `2^N - 1` clusters, without the partition function,
//! counts or entropy of [`super::FullTrellis`], and skipping the splits that cannot win.
//!
//! A split whose [`SplitModel::log_psi_upper`] bound plus its children's MAP values is below the
//! best split of the cluster found so far cannot be its MAP split, so its `log psi` (for the
//! Ginkgo model a logarithm and two divisions) is never computed. The splits that remain go to
//! the model as in the full trellis ([`SplitModel::log_psi_siblings`], 64 at a time) and are
//! compared in split order, so the MAP value and the MAP tree are the full trellis's, bit for
//! bit (the skipped splits are below the maximum by more than any rounding, see [`SLACK`]).
//! Every split is still visited (the bound needs both children's values), so the time is
//! `O(3^N)`, but a visited split costs a few additions instead of a logarithm, two divisions and
//! an exponential. For the Ginkgo model the same bound runs in eight SIMD lanes
//! (`exact::lanes::map`, about four times faster; the same bits). Clusters are processed layer by layer in increasing size, each layer in
//! parallel; each cluster is solved by one thread in a fixed order, so results do not depend on
//! the thread count.

use super::full::{batches, Tiling};
use super::split_loop::{for_each_step, prefetch, shared_high, whole_run, PREFETCH};
use super::ExactError;
use crate::model::{Siblings, SplitModel};
use crate::simd::Isa;
use crate::subset::Subset;
use crate::tree::Tree;
use rayon::prelude::*;

/// Default largest N the MAP-only trellis accepts (about 1.2 GiB of tables at N = 24 for the
/// Ginkgo model).
pub const DEFAULT_MAX_LEAVES: usize = 24;

/// Largest N it ever accepts (split back-pointers are stored as u32).
pub const MAX_LEAVES: usize = 32;

/// How far below the running best (relative to `max(1, |best|)`) a split's bound must lie to
/// be skipped: far more than the rounding of a bound against the value it bounds (about 1e-15
/// relative), so that no split that could reach the maximum is skipped.
const SLACK: f64 = 1e-9;

/// Batches of large clusters as in the full trellis ([`Tiling`]); with no buffers of terms to
/// hold, a batch can take more clusters. Measured on the scaling config's jets, 2 cores: N = 23
/// in 144.9 s against 171.5 s one cluster at a time; no difference at N = 22, and 5-10 %
/// slower at N = 20 and 21, hence from N = 22.
const TILING: Tiling = Tiling {
    min_leaves: 22,
    low_bits: 14,
    min_size: 16,
    max_batch: 64,
};

/// How many remaining splits go to the model at once.
const BLOCK: usize = 64;

/// A cluster's MAP value next to the model's statistics (32 bytes for the Ginkgo model, two per
/// cache line), read for both children of every split.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct Record<S> {
    map: f64,
    stat: S,
}

/// The MAP values and MAP splits of every cluster of `N` leaves.
#[derive(Clone, Debug)]
pub struct MapTrellis {
    n: usize,
    pub(super) map: Vec<f64>,
    /// The `A` part of each cluster's best split (0 for single leaves and clusters with no
    /// finite tree).
    pub(super) map_split: Vec<u32>,
    splits_visited: u64,
    splits_scored: u64,
}

impl MapTrellis {
    /// Runs the MAP-only trellis for `model`, refusing `N >` [`DEFAULT_MAX_LEAVES`].
    pub fn build<M: SplitModel>(model: &M) -> Result<MapTrellis, ExactError> {
        Self::build_with_limit(model, DEFAULT_MAX_LEAVES)
    }

    /// Runs the MAP-only trellis for `model`, refusing `N > max_leaves` (and always `N > 32`).
    pub fn build_with_limit<M: SplitModel>(
        model: &M,
        max_leaves: usize,
    ) -> Result<MapTrellis, ExactError> {
        Self::build_with_isa(model, max_leaves, Isa::detect())
    }

    /// [`MapTrellis::build_with_limit`] with the vector instructions of `isa` (or the widest
    /// narrower set the CPU has) for the Ginkgo model's eight-lane path
    /// (`exact::lanes::map`); other models go through the split loop. The MAP values and MAP
    /// trees are the same for every `isa` (only [`MapTrellis::splits_scored`] differs).
    pub fn build_with_isa<M: SplitModel>(
        model: &M,
        max_leaves: usize,
        isa: Isa,
    ) -> Result<MapTrellis, ExactError> {
        let n = model.n_leaves();
        let Some(ginkgo) = model.as_ginkgo().filter(|_| n >= super::lanes::MIN_LEAVES) else {
            return Self::build_tiled(model, max_leaves, TILING);
        };
        // The token first: a cancellation from here on stops the build.
        let cancel = crate::cancel::Cancel::new();
        if n > max_leaves.min(MAX_LEAVES) {
            return Err(ExactError::TooLarge {
                what: "the MAP-only trellis",
                n,
                limit: max_leaves.min(MAX_LEAVES),
            });
        }
        // Blocks of 32 bytes per subset, the statistics (24) and a back-pointer per cluster.
        let per_subset = (32 + std::mem::size_of::<M::Stat>() + 4) as f64;
        let cost = super::full::TrellisCost::of(n, std::mem::size_of::<M::Stat>());
        super::full::check_memory(n, &cost, |k| 2f64.powi(k as i32) * per_subset)?;
        let out = super::lanes::map::build(ginkgo, isa, &cancel)?;
        let visited = 3u64.pow(n as u32).div_ceil(2) - (1u64 << n);
        Ok(MapTrellis {
            n,
            map: out.map,
            map_split: out.map_split,
            splits_visited: visited,
            splits_scored: out.scored,
        })
    }

    /// The MAP-only trellis by the split loop (one cluster at a time), whatever the model:
    /// the baseline of the eight-lane path (`examples/trellis_speed`). The same answers.
    #[doc(hidden)]
    pub fn build_split_loop<M: SplitModel>(
        model: &M,
        max_leaves: usize,
    ) -> Result<MapTrellis, ExactError> {
        Self::build_tiled(model, max_leaves, TILING)
    }

    /// [`MapTrellis::build_with_limit`] with the clusters of each size visited in batches as
    /// `tiling` says (the results are the same for every tiling, bit for bit).
    pub(crate) fn build_tiled<M: SplitModel>(
        model: &M,
        max_leaves: usize,
        tiling: Tiling,
    ) -> Result<MapTrellis, ExactError> {
        // The token first: a cancellation during the statistics table or the allocations below
        // stops the build at its first check.
        let cancel = crate::cancel::Cancel::new();
        let n = model.n_leaves();
        if n == 0 {
            return Err(ExactError::Empty);
        }
        if n > max_leaves.min(MAX_LEAVES) {
            return Err(ExactError::TooLarge {
                what: "the MAP-only trellis",
                n,
                limit: max_leaves.min(MAX_LEAVES),
            });
        }
        // Records of the map value and statistics, and a back-pointer per cluster.
        let per_subset = (std::mem::size_of::<Record<M::Stat>>() + 4) as f64;
        let cost = super::full::TrellisCost::of(n, std::mem::size_of::<M::Stat>());
        super::full::check_memory(n, &cost, |k| 2f64.powi(k as i32) * per_subset)?;
        let stats = model.stat_table()?;
        if stats.len() != 1usize << n {
            return Err(ExactError::BadStatTable {
                len: stats.len(),
                n,
            });
        }
        let mut records: Vec<Record<M::Stat>> = Vec::with_capacity(stats.len());
        crate::memory::advise_huge_pages(&records);
        records.extend(stats.into_iter().map(|stat| Record {
            map: f64::NEG_INFINITY,
            stat,
        }));
        let mut map_split = vec![0u32; 1usize << n];
        for i in 0..n {
            records[1 << i].map = 0.0;
        }
        let (mut visited, mut scored) = (0u64, 0u64);
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
            // Small clusters go many to a batch (one at a time within it); large ones in
            // batches that share their high leaves. Every thread gets several batches.
            let cap = if low_mask == u64::MAX {
                (4096usize >> k.min(12)).max(1)
            } else {
                tiling.max_batch
            }
            .min((layer.len() / (4 * threads)).max(1));
            let done = &records;
            let values: Vec<Vec<(f64, u32, u64)>> = batches(&layer, low_mask, cap)
                .par_iter()
                .map(|r| {
                    if cancel.is_cancelled() {
                        return Vec::new();
                    }
                    solve_batch(model, done, &layer[r.clone()], low_mask)
                })
                .collect();
            if cancel.is_cancelled() {
                return Err(ExactError::Cancelled);
            }
            visited += layer.len() as u64 * ((1u64 << (k - 1)) - 1);
            for (s, (v, a, m)) in layer.iter().zip(values.into_iter().flatten()) {
                records[s.index()].map = v;
                map_split[s.index()] = a;
                scored += m;
            }
        }
        Ok(MapTrellis {
            n,
            map: records.into_iter().map(|r| r.map).collect(),
            map_split,
            splits_visited: visited,
            splits_scored: scored,
        })
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.n
    }

    /// The largest log-likelihood of any tree (the MAP value), `-inf` when no tree is finite.
    pub fn map_log_likelihood(&self) -> f64 {
        self.map[(1usize << self.n) - 1]
    }

    /// The MAP value over trees of the leaves of `s`; errors unless `s` is a non-empty subset
    /// of `0..N`.
    pub fn map_log_likelihood_of(&self, s: Subset) -> Result<f64, ExactError> {
        if !s.is_cluster_of(self.n) {
            return Err(ExactError::BadCluster {
                cluster: s.to_string(),
                n: self.n,
            });
        }
        Ok(self.map[s.index()])
    }

    /// A tree with the MAP value: the first in split order among ties, the same tree as
    /// [`super::FullTrellis::map_tree`].
    pub fn map_tree(&self) -> Tree {
        Tree::from_splits_trusted(Subset::full(self.n), |c| {
            let a = self.map_split[c.index()] as u64;
            let a = if a == 0 { c.lowest_bit() } else { Subset(a) };
            (a, c.minus(a))
        })
    }

    /// Splits visited, `(3^N + 1)/2 - 2^N` (each one's bound was tested).
    pub fn splits_visited(&self) -> u64 {
        self.splits_visited
    }

    /// Splits whose `log psi` was computed (the others were skipped by their bound).
    pub fn splits_scored(&self) -> u64 {
        self.splits_scored
    }
}

/// One cluster's running state while its splits are visited in split order, possibly in
/// several runs: the best value, its split, the floor below which bounds are skipped, and how
/// many splits were scored.
#[derive(Clone, Copy)]
struct Best {
    value: f64,
    split: u32,
    floor: f64,
    scored: u64,
}

const NO_SPLIT_YET: Best = Best {
    value: f64::NEG_INFINITY,
    split: 0,
    floor: f64::NEG_INFINITY,
    scored: 0,
};

/// Solves a batch of clusters of one size (at least 2 leaves): each one's MAP value, the `A`
/// bits of its first best split in split order, and how many splits were scored.
///
/// Splits run in `Subset::splits` order: `A = low + sub`, `sub` running down over the proper
/// submasks of `S - low`, ending with `sub = 0`. As in the full trellis (`split_loop`), when
/// every cluster of the batch has its lowest leaf in `low_mask` and the same bits `H` outside
/// it, that order runs over the submasks `h` of `H` (the major key) and, for each, over the low
/// part; the batch then takes one `h` at a time for all its clusters, so that each step's
/// children (high bits `h` or `H - h`) are read from the cache by the whole batch. Each cluster
/// still sees its splits in its own order (`low_mask = u64::MAX`: one cluster at a time).
fn solve_batch<M: SplitModel>(
    model: &M,
    records: &[Record<M::Stat>],
    batch: &[Subset],
    low_mask: u64,
) -> Vec<(f64, u32, u64)> {
    let Some(high) = shared_high(batch, low_mask) else {
        return batch
            .iter()
            .map(|&s| {
                let (rest, first) = whole_run(s);
                let mut x = NO_SPLIT_YET;
                run(model, records, s, 0, rest, first, &mut x);
                (x.value, x.split, x.scored)
            })
            .collect();
    };
    let mut state = vec![NO_SPLIT_YET; batch.len()];
    for_each_step(batch, low_mask, high, |i, h, rest_low, first| {
        run(model, records, batch[i], h, rest_low, first, &mut state[i])
    });
    state.iter().map(|x| (x.value, x.split, x.scored)).collect()
}

/// Visits the splits of `s` with `A = low + h + l`, `l` running down over the submasks of
/// `rest_low` from `first` to 0, updating `x`: a split is scored unless its bound plus its
/// children's MAP values is below `x.floor`, and the scored ones are compared in split order
/// with the full trellis's grouping, `(log psi + MAP(A)) + MAP(B)`.
#[inline(always)]
fn run<M: SplitModel>(
    model: &M,
    records: &[Record<M::Stat>],
    s: Subset,
    h: u64,
    rest_low: u64,
    first: u64,
    x: &mut Best,
) {
    let sp = &records[s.index()].stat;
    let base = records.as_ptr();
    let set = s.bits();
    let low = (set & set.wrapping_neg()) | h;
    let upper = model.log_psi_upper(s, sp);
    let mut block = [Siblings {
        a: s,
        sa: sp,
        b: s,
        sb: sp,
    }; BLOCK];
    let (mut ma, mut mb, mut lps) = ([0.0f64; BLOCK], [0.0f64; BLOCK], [0.0f64; BLOCK]);
    let mut cand = [0u64; BLOCK];
    let Best {
        value: mut best,
        split: mut best_split,
        mut floor,
        mut scored,
    } = *x;
    let mut l = first;
    // A second cursor PREFETCH splits ahead (it wraps around harmlessly: every submask of
    // `rest_low` names a record of a subset of S).
    let mut ahead = l;
    for _ in 0..PREFETCH {
        ahead = ahead.wrapping_sub(1) & rest_low;
    }
    let mut done = false;
    while !done {
        // Visit splits until BLOCK of them survive their bound (or the run ends), keeping only
        // the survivors' `A` bits.
        let mut len = 0;
        while len < BLOCK && !done {
            let xa = ahead | low;
            prefetch(base.wrapping_add(xa as usize));
            prefetch(base.wrapping_add((set ^ xa) as usize));
            ahead = ahead.wrapping_sub(1) & rest_low;
            let (a, b) = (l | low, set ^ (l | low));
            done = l == 0;
            l = l.wrapping_sub(1) & rest_low;
            // SAFETY: A and B are subsets of S, whose record exists (S indexed it above).
            let (ra, rb) = unsafe { (&*base.add(a as usize), &*base.add(b as usize)) };
            let bound = upper(&ra.stat, &rb.stat) + ra.map + rb.map;
            cand[len] = a;
            len += may_win(bound, floor) as usize;
        }
        if len == 0 {
            continue;
        }
        scored += len as u64;
        for (j, &a) in cand[..len].iter().enumerate() {
            let b = set ^ a;
            // SAFETY: as above.
            let (ra, rb) = unsafe { (&*base.add(a as usize), &*base.add(b as usize)) };
            block[j] = Siblings {
                a: Subset(a),
                sa: &ra.stat,
                b: Subset(b),
                sb: &rb.stat,
            };
            (ma[j], mb[j]) = (ra.map, rb.map);
        }
        model.log_psi_siblings(sp, &block[..len], &mut lps[..len]);
        for j in 0..len {
            let v = lps[j] + ma[j] + mb[j];
            if v > best {
                best = v;
                best_split = block[j].a.bits() as u32;
            }
        }
        floor = best - SLACK * best.abs().max(1.0);
    }
    *x = Best {
        value: best,
        split: best_split,
        floor,
        scored,
    };
}

/// Whether a split whose bound (with its children's MAP values) is `bound` is scored: unless
/// the bound is below the floor or `-inf`; a NaN bound is scored.
#[inline(always)]
#[allow(clippy::neg_cmp_op_on_partial_ord)] // `!(x < y)` is deliberate: NaN is not below
fn may_win(bound: f64, floor: f64) -> bool {
    !(bound < floor) && bound != f64::NEG_INFINITY
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ginkgo::{generate_dataset, GinkgoParams};
    use crate::exact::full::{test_tilings, UNTILED};
    use crate::exact::FullTrellis;

    /// Many MAP ties (the potential depends on the split sizes only), a forbidden split, and a
    /// tight bound (equal to the potential), so that ties sit exactly at the skipping floor.
    struct Ties {
        n: usize,
    }

    impl SplitModel for Ties {
        type Stat = ();
        fn n_leaves(&self) -> usize {
            self.n
        }
        fn stat(&self, _: Subset) {}
        fn log_psi_with(&self, a: Subset, _: &(), b: Subset, _: &(), _: &()) -> f64 {
            if a == Subset::singleton(0) && b == Subset::singleton(1) {
                f64::NEG_INFINITY
            } else {
                -((a.len() as f64) - (b.len() as f64)).abs()
            }
        }
        fn log_psi_upper<'a>(&'a self, parent: Subset, _: &'a ()) -> impl Fn(&(), &()) -> f64 {
            // The stats are empty, so the tight bound is the potential's largest value over
            // the parent's splits, except for the forbidden pair.
            let k = parent.len();
            let forbidden = parent == Subset::from_indices([0, 1]);
            move |_: &(), _: &()| {
                if forbidden {
                    f64::NEG_INFINITY
                } else {
                    -((k % 2) as f64)
                }
            }
        }
    }

    /// Every cluster's MAP value and MAP split, as bits.
    fn fingerprint(t: &MapTrellis) -> Vec<[u64; 2]> {
        t.map
            .iter()
            .zip(&t.map_split)
            .map(|(v, &a)| [v.to_bits(), a as u64])
            .collect()
    }

    /// Batches of clusters give every cluster's MAP value and split bit for bit as one cluster
    /// at a time, whatever the tiling, and both equal the full trellis's.
    #[test]
    fn tiled_batches_give_the_same_bits() {
        let check =
            |name: &str, n: usize, full: &FullTrellis, build: &dyn Fn(Tiling) -> MapTrellis| {
                let one = build(UNTILED);
                let want = fingerprint(&one);
                for b in 1u64..(1 << n) {
                    let s = Subset(b);
                    assert_eq!(
                        one.map_log_likelihood_of(s).unwrap().to_bits(),
                        full.map_log_likelihood_of(s).unwrap().to_bits(),
                        "{name}, N = {n}, {s}"
                    );
                }
                assert_eq!(
                    one.map_tree().to_newick_as_built(),
                    full.map_tree().to_newick_as_built()
                );
                for tiling in test_tilings(n) {
                    assert!(
                        fingerprint(&build(tiling)) == want,
                        "{name}, N = {n}, {tiling:?}"
                    );
                }
                one.splits_scored()
            };
        let mut skipped = false;
        for (params, seed) in [(GinkgoParams::qcd(), 3u64), (GinkgoParams::w_jet(), 4)] {
            for n in [6, 9, 11] {
                let ds = generate_dataset(&params, 1, n, n, seed + n as u64, 100_000, "t").unwrap();
                let m = ds.jets[0].model().unwrap();
                let full = FullTrellis::build(&m).unwrap();
                let scored = check("ginkgo", n, &full, &|t| {
                    MapTrellis::build_tiled(&m, 32, t).unwrap()
                });
                skipped |= scored < 3u64.pow(n as u32).div_ceil(2) - (1 << n);
            }
        }
        assert!(skipped, "the Ginkgo bound skips splits");
        for n in [2, 5, 8] {
            let m = Ties { n };
            let full = FullTrellis::build(&m).unwrap();
            check("ties", n, &full, &|t| {
                MapTrellis::build_tiled(&m, 32, t).unwrap()
            });
        }
    }
}
