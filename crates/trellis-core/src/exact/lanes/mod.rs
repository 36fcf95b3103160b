//! The full trellis in eight SIMD lanes ([`crate::simd`]) for every energy with a vector kernel
//! ([`energy::Energy`]: the Ginkgo model, Dasgupta's cost, the HCC / correlation energy and the
//! Ginkgo generator's density): the same log Z (to 1e-12), and the same MAP values, MAP splits
//! and finite-tree counts, bit for bit, as the split loop ([`super::split_loop`]), in a quarter
//! of its time.
//!
//! **Layout.** The subsets of the `N` leaves go in blocks of eight: block `g` holds the subsets
//! `8g + s`, i.e. the leaves `g` of the upper `N - 3` ("upper part") and any subset `s` of the
//! lowest three leaves ("lane"). A block keeps, per field, eight contiguous values: log Z, MAP,
//! `E[log phi]`, the count's low word, and the energy's statistics (for the Ginkgo model `t`
//! and `sqrt t`: 384 bytes, six cache lines; for Dasgupta's cost the internal weight `W`).
//!
//! **Splits.** A split `(A, B)` of `S = 8g + s` has upper parts `(a, g - a)` and lanes
//! `(x, s - x)`. For every upper part `a` of `g` other than the empty set and `g` itself, the
//! blocks `a` and `g - a` hold the children of 13 splits of the parents `8g + s`, `s != 0`
//! (the lane pairs `(x, s - x)` with the lowest leaf of `s` in `x`), and of one split of the
//! parent `8g` (lanes `(0, 0)`, when `a` holds the lowest leaf of `g`). Sixteen slots in two
//! vectors take these 14 pairs; each field of each child is one in-register permute of its
//! block (no gathers), and every slot keeps its own running sums. The splits with upper parts
//! `(0, g)` and `(g, 0)` read the parent's own block, so they are done afterwards, in scalar
//! code, lane by lane in order of size.
//!
//! **Sums.** Each slot's log-sum-exp runs around a reference `M` that moves up only when a
//! term exceeds it by 600 (so the running sum never overflows, one rescaling in a few
//! thousand terms); slots are merged per parent at the end. The MAP is the largest value, ties
//! to the largest `A` (the first in the split loop's order), so it does not depend on the
//! order of visit; the count is an exact integer sum. Every group of parents is computed by one
//! thread in a fixed order: the results are the same for any thread count.

pub(crate) mod cross;
pub(crate) mod energy;
mod generator;
pub(crate) mod ginkgo;
pub(super) mod map;
pub(crate) mod ties;

use super::split_loop::{Cell, EMPTY_CELL, LEAF_CELL};
use super::ExactError;
use crate::cancel::Cancel;
use crate::simd::Isa;
use crate::subset::Subset;
use energy::Energy;
use rayon::prelude::*;

/// Fewest leaves the lane trellis takes (three lane leaves and at least one upper leaf).
pub(crate) const MIN_LEAVES: usize = 4;

/// Eight subsets' values, field by field (see the module docs), and the energy's statistics.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(super) struct Block<S> {
    pub(super) lz: [f64; 8],
    pub(super) mp: [f64; 8],
    pub(super) ee: [f64; 8],
    /// Low 64 bits of the finite-tree count (the high bits are in [`Tables::cnt_hi`]).
    pub(super) cnt: [u64; 8],
    pub(super) st: S,
}

/// The constants of the parents `8g + s` (`None`: a single leaf, the empty set, or every
/// split forbidden).
pub(super) fn consts<E: Energy>(k: &E, g: u64) -> [Option<E::Consts>; 8] {
    let u = g.count_ones();
    std::array::from_fn(|s| {
        let i = (g << 3) | s as u64;
        if u + (s as u32).count_ones() < 2 {
            return None;
        }
        k.consts(i)
    })
}

/// What a group's parents read: the kernel and the finished blocks.
pub(super) struct Tables<'a, E: Energy> {
    pub(super) k: &'a E,
    pub(super) blocks: &'a [Block<E::Stat>],
    pub(super) cnt_hi: &'a [[u64; 8]],
    /// The finished clusters' MAP-tie counts, when they are counted in this pass.
    pub(super) ties: Option<ties::TieTables<'a>>,
    /// Log Z alone: no MAP, count or `E[log phi]` (their fields are left as they were).
    pub(super) z_only: bool,
}

impl<E: Energy> Tables<'_, E> {
    /// The finished values of subset `i`.
    #[inline]
    fn cell(&self, i: u64) -> Vals {
        let (b, l) = ((i >> 3) as usize, (i & 7) as usize);
        let x = &self.blocks[b];
        Vals {
            lz: x.lz[l],
            mp: x.mp[l],
            ee: x.ee[l],
            cnt: (self.cnt_hi[b][l] as u128) << 64 | x.cnt[l] as u128,
        }
    }
}

/// One subset's results.
#[derive(Clone, Copy, Debug)]
struct Vals {
    lz: f64,
    mp: f64,
    ee: f64,
    cnt: u128,
}

impl Vals {
    fn of(c: &Cell) -> Vals {
        Vals {
            lz: c.log_z,
            mp: c.map,
            ee: c.mean_log_phi,
            cnt: c.count(),
        }
    }
}

/// The 16 slots' lane pairs `(x, s - x)`, by vector. The first vector holds the pairs `(x, 0)`:
/// slot 0 is the parent `8g`'s split (lanes `(0, 0)`), slots 1-7 the parents `x` (so that the
/// first child's fields are its block as it is and the second's one broadcast value); the
/// second vector holds the six pairs with both lanes non-empty, and two unused slots. With the
/// lowest leaf of `s` in `x`, these are the 13 splits of the parents `s != 0` and one of `0`.
/// The second vector's order is [`crate::simd::PAIR_A`]'s (cheap shuffles for AVX2).
pub(crate) const SLOT_A: [u8; 16] = slots([0, 1, 2, 3, 4, 5, 6, 7], crate::simd::PAIR_A);
pub(crate) const SLOT_B: [u8; 16] = slots([0; 8], crate::simd::PAIR_B);

/// The two vectors' lanes, one after the other.
const fn slots(first: [u8; 8], second: [u8; 8]) -> [u8; 16] {
    let mut s = [0u8; 16];
    let mut l = 0;
    while l < 8 {
        s[l] = first[l];
        s[8 + l] = second[l];
        l += 1;
    }
    s
}
/// The slot of the parent `8g` (lanes `(0, 0)`).
pub(crate) const ZERO_SLOT: usize = 0;
/// Slots in use.
pub(crate) const USED_SLOTS: usize = 14;

/// A log-sum-exp in scalar code, summed around a reference that only moves up:
/// `s = sum e^(z - m)` and `es = sum e^(z - m) E` (the lane trellises' per-parent merge).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LogSum {
    pub(crate) m: f64,
    pub(crate) s: f64,
    pub(crate) es: f64,
}

impl LogSum {
    pub(crate) const NEW: LogSum = LogSum {
        m: f64::NEG_INFINITY,
        s: 0.0,
        es: 0.0,
    };

    /// Adds `s` and `es`, summed around `m`.
    pub(crate) fn add(&mut self, m: f64, s: f64, es: f64) {
        // Nothing to add (no term, or only zero terms); NaN sums are dropped as well.
        if s.is_nan() || s <= 0.0 {
            return;
        }
        if m > self.m {
            let f = (self.m - m).exp();
            self.s = self.s * f + s;
            self.es = self.es * f + es;
            self.m = m;
        } else {
            let f = (m - self.m).exp();
            self.s += s * f;
            self.es += es * f;
        }
    }

    /// `log sum e^z` (`-inf` when nothing was added).
    pub(crate) fn log(&self) -> f64 {
        self.m + self.s.ln()
    }
}

/// The best of values seen in any order: the largest, ties to the largest key (the scalar
/// loops' first in their descending order of `A`, or of `T` for the flat trellis).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Best {
    pub(crate) value: f64,
    pub(crate) key: u64,
}

impl Best {
    pub(crate) const NEW: Best = Best {
        value: f64::NEG_INFINITY,
        key: 0,
    };

    pub(crate) fn add(&mut self, v: f64, key: u64) {
        if v > self.value || (v == self.value && v != f64::NEG_INFINITY && key > self.key) {
            self.value = v;
            self.key = key;
        }
    }
}

/// A parent's running sums, in scalar code: the log-sum-exp, the MAP value and split, the
/// count.
#[derive(Clone, Copy, Debug)]
pub(super) struct Acc {
    pub(super) sum: LogSum,
    pub(super) best: Best,
    count: u128,
}

impl Acc {
    pub(super) const NEW: Acc = Acc {
        sum: LogSum::NEW,
        best: Best::NEW,
        count: 0,
    };

    pub(super) fn add_count(&mut self, c: u128) {
        self.count = self.count.wrapping_add(c);
    }

    /// One split with `log psi = lp`, `A = a` and children's values `x`, `y`.
    fn add_split(&mut self, lp: f64, a: u64, x: Vals, y: Vals) {
        let z = lp + x.lz + y.lz;
        if z.is_finite() {
            self.sum.add(z, 1.0, lp + x.ee + y.ee);
        }
        self.best.add(lp + x.mp + y.mp, a);
        let ninf = f64::NEG_INFINITY;
        if lp != ninf && x.lz != ninf && y.lz != ninf {
            self.add_count(x.cnt.wrapping_mul(y.cnt));
        }
    }

    /// The parent's cell with its log Z alone (the same bits as [`Acc::finish`]'s: a parent
    /// without a finite term has log Z `-inf` either way).
    fn finish_z(&self) -> (Cell, u32) {
        (
            Cell {
                log_z: self.sum.log(),
                ..EMPTY_CELL
            },
            0,
        )
    }

    /// The parent's cell and MAP split.
    fn finish(&self) -> (Cell, u32) {
        if self.count == 0 {
            return (EMPTY_CELL, 0);
        }
        (
            Cell {
                log_z: self.sum.log(),
                map: self.best.value,
                mean_log_phi: self.sum.es / self.sum.s,
                n_finite: [self.count as u64, (self.count >> 64) as u64],
            },
            self.best.key as u32,
        )
    }
}

/// A group's eight cells, MAP splits and MAP-tie counts and magnitudes, by lane.
struct GroupOut {
    cells: [Cell; 8],
    splits: [u32; 8],
    ties: [(u128, f64); 8],
}

/// Lanes in order of size (a lane's local splits read the smaller lanes of its own block).
pub(crate) const LANE_ORDER: [u64; 8] = [0, 1, 2, 4, 3, 5, 6, 7];

/// Solves the eight parents `8g + s`.
fn solve_group<E: Energy>(t: &Tables<'_, E>, g: u64, isa: Isa) -> GroupOut {
    let u = g.count_ones();
    let base = g << 3;
    let consts = consts(t.k, g);
    let mut acc = [Acc::NEW; 8];
    let mut cands: [Vec<ties::Cand>; 8] = Default::default();
    if u >= 2 && consts.iter().any(Option::is_some) {
        cross::run(t, g, &consts, &mut acc, &mut cands, isa);
    }
    let mut out = GroupOut {
        cells: [EMPTY_CELL; 8],
        splits: [0; 8],
        ties: [(0, 0.0); 8],
    };
    for s in LANE_ORDER {
        let k = u + s.count_ones();
        let i = base | s;
        let (cell, split) = match (k, &consts[s as usize]) {
            (0, _) => (EMPTY_CELL, 0),
            (1, _) => (LEAF_CELL, 0),
            (_, None) => (EMPTY_CELL, 0),
            (_, Some(_)) => {
                let a = &mut acc[s as usize];
                let c = &mut cands[s as usize];
                if s != 0 {
                    local_splits(t, g, s, &out.cells, a, t.ties.is_some().then_some(c));
                }
                if t.z_only {
                    a.finish_z()
                } else {
                    a.finish()
                }
            }
        };
        out.cells[s as usize] = cell;
        out.splits[s as usize] = split;
        out.ties[s as usize] = match &t.ties {
            _ if k == 1 => (1, 0.0),
            Some(tt) => ties::count(cell.map, tt.tol, &cands[s as usize], |j| {
                if j >> 3 == g {
                    let l = (j & 7) as usize;
                    (out.cells[l].map, out.ties[l].0, out.ties[l].1)
                } else {
                    (t.cell(j).mp, tt.count[j as usize], tt.mag[j as usize])
                }
            }),
            None => (0, 0.0),
        };
        let _ = i;
    }
    out
}

/// The splits of `8g + s` (`s != 0`) whose upper parts are `(0, g)` or `(g, 0)`: one child is
/// in the parent's own block (`own`, lanes smaller than `s` finished), the other in block 0.
fn local_splits<E: Energy>(
    t: &Tables<'_, E>,
    g: u64,
    s: u64,
    own: &[Cell; 8],
    acc: &mut Acc,
    mut cands: Option<&mut Vec<ties::Cand>>,
) {
    let mut split = |acc: &mut Acc, a: u64, b: u64, x: Vals, y: Vals| {
        let psi = t.k.log_psi_scalar(a, b);
        if let Some(c) = cands.as_deref_mut() {
            c.push(ties::Cand { a, b, psi });
        }
        acc.add_split(psi, a, x, y);
    };
    let base = g << 3;
    let low = s & s.wrapping_neg();
    let rest = s ^ low;
    let lane = |x: u64| -> Vals {
        if g == 0 {
            Vals::of(&own[x as usize])
        } else {
            t.cell(x)
        }
    };
    let mut sub = rest;
    loop {
        let x = low | sub;
        let y = s ^ x;
        // A = x (block 0), B = 8g + y (own block): a split only when g is not empty.
        if g != 0 {
            let (a, b) = (x, base | y);
            split(acc, a, b, t.cell(a), Vals::of(&own[y as usize]));
        }
        // A = 8g + x (own block), B = y (block 0): y must not be empty.
        if y != 0 {
            let (a, b) = (base | x, y);
            split(acc, a, b, Vals::of(&own[x as usize]), lane(y));
        }
        if sub == 0 {
            break;
        }
        sub = (sub - 1) & rest;
    }
}

/// The groups (blocks) whose upper parts have `u` of the `upper` upper leaves: a layer, whose
/// groups depend only on smaller layers.
pub(crate) fn groups_of_size(upper: usize, u: usize) -> Vec<u64> {
    if u == 0 {
        vec![0]
    } else {
        Subset::of_size(upper, u).map(|s| s.bits()).collect()
    }
}

/// [`build`] for the energy of `m`.
pub(super) fn build_model(
    m: crate::model::LaneModel<'_>,
    isa: Isa,
    tie_tol: Option<f64>,
    cancel: &Cancel,
) -> Result<LaneOut, ExactError> {
    struct Run<'a> {
        isa: Isa,
        tie_tol: Option<f64>,
        cancel: &'a Cancel,
    }
    impl energy::RunEnergy for Run<'_> {
        type Output = Result<LaneOut, ExactError>;
        fn run<E: Energy>(self, e: &E) -> Self::Output {
            build(e, self.isa, self.tie_tol, self.cancel)
        }
    }
    energy::with_energy(
        m,
        Run {
            isa,
            tie_tol,
            cancel,
        },
    )?
}

/// [`log_z`] for the energy of `m`.
pub(super) fn log_z_model(
    m: crate::model::LaneModel<'_>,
    isa: Isa,
    cancel: &Cancel,
) -> Result<f64, ExactError> {
    struct Run<'a> {
        isa: Isa,
        cancel: &'a Cancel,
    }
    impl energy::RunEnergy for Run<'_> {
        type Output = Result<f64, ExactError>;
        fn run<E: Energy>(self, e: &E) -> Self::Output {
            log_z(e, self.isa, self.cancel)
        }
    }
    energy::with_energy(m, Run { isa, cancel })?
}

/// What the lane trellis gives: every cell and MAP split, indexed by bitmask, and when asked
/// for, the number of trees tied with the MAP value ([`crate::exact::map_ties`]).
pub(super) type LaneOut = (Vec<Cell>, Vec<u32>, Option<u128>);

/// The full trellis of energy `k` over `N >=` [`MIN_LEAVES`] leaves, with the MAP-tie count
/// at relative tolerance `tie_tol` (in `[0, 1/2)`: [`ties::single_pass`]) when it is given.
pub(super) fn build<E: Energy>(
    k: &E,
    isa: Isa,
    tie_tol: Option<f64>,
    cancel: &Cancel,
) -> Result<LaneOut, ExactError> {
    let (blocks, cnt_hi, map_split, root_ties) = pass(k, isa, tie_tol, false, cancel)?;
    let cells = blocks
        .iter()
        .zip(&cnt_hi)
        .flat_map(|(b, h)| {
            (0..8).map(move |l| Cell {
                log_z: b.lz[l],
                map: b.mp[l],
                mean_log_phi: b.ee[l],
                n_finite: [b.cnt[l], h[l]],
            })
        })
        .collect();
    Ok((cells, map_split, root_ties))
}

/// Log Z of energy `k` over `N >=` [`MIN_LEAVES`] leaves, the log-sum-exp alone (no MAP,
/// count or `E[log phi]`): the same bits as [`build`]'s root.
pub(super) fn log_z<E: Energy>(k: &E, isa: Isa, cancel: &Cancel) -> Result<f64, ExactError> {
    let (blocks, ..) = pass(k, isa, None, true, cancel)?;
    Ok(blocks.last().expect("at least one block").lz[7])
}

/// The blocks (and the counts' high words, the MAP splits and the root's tie count) after
/// the bottom-up pass; with `z_only`, only the blocks' log Z is computed.
#[allow(clippy::type_complexity)]
fn pass<E: Energy>(
    k: &E,
    isa: Isa,
    tie_tol: Option<f64>,
    z_only: bool,
    cancel: &Cancel,
) -> Result<(Vec<Block<E::Stat>>, Vec<[u64; 8]>, Vec<u32>, Option<u128>), ExactError> {
    debug_assert!(!(z_only && tie_tol.is_some()));
    let n = k.n_leaves();
    debug_assert!(n >= MIN_LEAVES);
    let n_blocks = 1usize << (n - 3);
    let mut blocks: Vec<Block<E::Stat>> = Vec::with_capacity(n_blocks);
    crate::memory::advise_huge_pages(&blocks);
    // Written (its pages first touched) a batch at a time between checks.
    for start in (0..n_blocks).step_by(1 << 16) {
        if cancel.is_cancelled() {
            return Err(ExactError::Cancelled);
        }
        blocks.extend((start..n_blocks.min(start + (1 << 16))).map(|b| Block {
            lz: [f64::NEG_INFINITY; 8],
            mp: [f64::NEG_INFINITY; 8],
            ee: [0.0; 8],
            cnt: [0; 8],
            st: k.block_stat(b),
        }));
    }
    let mut cnt_hi = vec![[0u64; 8]; n_blocks];
    let mut map_split = if z_only {
        Vec::new()
    } else {
        vec![0u32; 1usize << n]
    };
    // The tie counts and magnitudes (a leaf: one tree, magnitude 0).
    let (mut tie_count, mut tie_mag) = match tie_tol {
        Some(_) => (vec![0u128; 1usize << n], vec![0.0f64; 1usize << n]),
        None => (Vec::new(), Vec::new()),
    };
    let mut mag_max = 0.0f64;
    if cancel.is_cancelled() {
        return Err(ExactError::Cancelled);
    }
    let upper = n - 3;
    for u in 0..=upper {
        let groups = groups_of_size(upper, u);
        let tables = Tables {
            k,
            blocks: &blocks,
            cnt_hi: &cnt_hi,
            ties: tie_tol.map(|tol| ties::TieTables {
                tol,
                mag_max,
                count: &tie_count,
                mag: &tie_mag,
            }),
            z_only,
        };
        let outs: Vec<Option<GroupOut>> = groups
            .par_iter()
            .map(|&g| (!cancel.is_cancelled()).then(|| solve_group(&tables, g, isa)))
            .collect();
        if cancel.is_cancelled() {
            return Err(ExactError::Cancelled);
        }
        for (&g, o) in groups.iter().zip(outs) {
            let o = o.expect("not cancelled");
            let (b, h) = (&mut blocks[g as usize], &mut cnt_hi[g as usize]);
            for (l, c) in o.cells.iter().enumerate() {
                b.lz[l] = c.log_z;
                b.mp[l] = c.map;
                b.ee[l] = c.mean_log_phi;
                b.cnt[l] = c.n_finite[0];
                h[l] = c.n_finite[1];
            }
            if !z_only {
                map_split[(g << 3) as usize..(g << 3) as usize + 8].copy_from_slice(&o.splits);
            }
            if tie_tol.is_some() {
                for (l, &(c, m)) in o.ties.iter().enumerate() {
                    let i = (g << 3) as usize | l;
                    (tie_count[i], tie_mag[i]) = (c, m);
                    mag_max = mag_max.max(m);
                }
            }
        }
    }
    let root_ties = tie_tol.map(|_| tie_count[(1usize << n) - 1]);
    Ok((blocks, cnt_hi, map_split, root_ties))
}

#[cfg(test)]
mod energy_tests;
#[cfg(test)]
mod generator_tests;
#[cfg(test)]
mod tests;
