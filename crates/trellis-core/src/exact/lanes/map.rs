//! The MAP-only trellis for the Ginkgo model in eight SIMD lanes: the blocks and slots of the
//! lane trellis ([`super`]) with the MAP-only trellis's bound ([`crate::exact::MapTrellis`]):
//! a vector of splits is scored by the exact kernel only where its bound (one multiplication,
//! no logarithm or division) plus the children's MAP values reaches the slot's best so far,
//! less a slack of 1e-9 relative. The MAP value of every cluster and the MAP tree are those of
//! the full trellis, bit for bit.

use super::cross::{for_each_upper, log_psi, slots, steps, Direct, Fetch, Paired, Slots, Step};
use super::{Best, Kernel, KernelBlock, LANE_ORDER, SLOT_A, SLOT_B, USED_SLOTS};
use crate::cancel::Cancel;
use crate::exact::ExactError;
use crate::model::ginkgo::{GinkgoModel, ParentConsts};
use crate::model::SplitModel;
use crate::simd::{dispatch, Isa, Lanes, WithLanes};
use rayon::prelude::*;

/// How far below a slot's best (relative to `max(1, |best|)`) a bound must lie for the split
/// to be skipped (as [`crate::exact::MapTrellis`]'s).
const SLACK: f64 = 1e-9;

/// Eight subsets' MAP values and the kernel's and the bound's statistics.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(super) struct MapBlock {
    mp: [f64; 8],
    t: [f64; 8],
    q: [f64; 8],
    /// `log t` (the bound's part for the smaller child).
    lt: [f64; 8],
}

impl KernelBlock for MapBlock {
    #[inline(always)]
    fn t(&self) -> &[f64; 8] {
        &self.t
    }
    #[inline(always)]
    fn q(&self) -> &[f64; 8] {
        &self.q
    }
}

/// The MAP value, MAP split and scored splits of every cluster of a Ginkgo model over
/// `N >=` [`super::MIN_LEAVES`] leaves, indexed by bitmask.
pub(crate) struct MapOut {
    pub(crate) map: Vec<f64>,
    pub(crate) map_split: Vec<u32>,
    pub(crate) scored: u64,
}

pub(crate) fn build(model: &GinkgoModel, isa: Isa, cancel: &Cancel) -> Result<MapOut, ExactError> {
    let n = model.n_leaves();
    let stats = model.stat_table()?;
    if stats.len() != 1usize << n {
        return Err(ExactError::BadStatTable {
            len: stats.len(),
            n,
        });
    }
    let mut blocks: Vec<MapBlock> = Vec::with_capacity(1usize << (n - 3));
    crate::memory::advise_huge_pages(&blocks);
    // Half a GiB at 24 leaves, first touched here: a batch at a time between checks.
    for batch in stats.chunks(8 << 16) {
        if cancel.is_cancelled() {
            return Err(ExactError::Cancelled);
        }
        blocks.extend(batch.chunks_exact(8).map(|c| MapBlock {
            mp: [f64::NEG_INFINITY; 8],
            t: std::array::from_fn(|l| c[l].t),
            q: std::array::from_fn(|l| c[l].sqrt_t),
            lt: std::array::from_fn(|l| c[l].log_t),
        }));
    }
    let mut map_split = vec![0u32; 1usize << n];
    let mut scored = 0u64;
    // Made once: it reads every subset's statistics (2^24 of them at 24 leaves).
    let k = Kernel::new(model, &stats, n);
    if cancel.is_cancelled() {
        return Err(ExactError::Cancelled);
    }
    let upper = n - 3;
    for u in 0..=upper {
        let groups = super::groups_of_size(upper, u);
        let done = &blocks;
        let outs: Vec<Option<GroupMap>> = groups
            .par_iter()
            .map(|&g| (!cancel.is_cancelled()).then(|| solve_group(&k, done, g, isa)))
            .collect();
        if cancel.is_cancelled() {
            return Err(ExactError::Cancelled);
        }
        for (&g, o) in groups.iter().zip(outs) {
            let (mp, splits, m) = o.expect("not cancelled");
            blocks[g as usize].mp = mp;
            map_split[(g << 3) as usize..(g << 3) as usize + 8].copy_from_slice(&splits);
            scored += m;
        }
    }
    Ok(MapOut {
        map: blocks.iter().flat_map(|b| b.mp).collect(),
        map_split,
        scored,
    })
}

/// A group's MAP values and splits by lane, and how many of its splits were scored.
type GroupMap = ([f64; 8], [u32; 8], u64);

/// The MAP values and splits of the parents `8g + s`, and how many splits were scored.
fn solve_group(k: &Kernel<'_>, blocks: &[MapBlock], g: u64, isa: Isa) -> GroupMap {
    let u = g.count_ones();
    let base = g << 3;
    let consts = k.consts(g);
    let mut best = [Best::NEW; 8];
    let mut scored = 0;
    if u >= 2 && consts.iter().any(Option::is_some) {
        scored += dispatch(
            isa,
            MapCross {
                k,
                blocks,
                g,
                consts: &consts,
                best: &mut best,
            },
        );
    }
    let (mut mp, mut splits) = ([f64::NEG_INFINITY; 8], [0u32; 8]);
    for s in LANE_ORDER {
        let kk = u + s.count_ones();
        if kk == 1 {
            mp[s as usize] = 0.0;
            continue;
        }
        if kk == 0 || consts[s as usize].is_none() {
            continue;
        }
        let b = &mut best[s as usize];
        if s != 0 {
            // The splits whose upper parts are (0, g) or (g, 0), all scored.
            let lane = |x: u64| {
                if g == 0 {
                    mp[x as usize]
                } else {
                    blocks[0].mp[x as usize]
                }
            };
            let low = s & s.wrapping_neg();
            let rest = s ^ low;
            let mut sub = rest;
            loop {
                let x = low | sub;
                let y = s ^ x;
                if g != 0 {
                    let (a, bb) = (x, base | y);
                    b.add(
                        k.log_psi(a, bb) + blocks[0].mp[x as usize] + mp[y as usize],
                        a,
                    );
                    scored += 1;
                }
                if y != 0 {
                    let (a, bb) = (base | x, y);
                    b.add(k.log_psi(a, bb) + mp[x as usize] + lane(y), a);
                    scored += 1;
                }
                if sub == 0 {
                    break;
                }
                sub = (sub - 1) & rest;
            }
        }
        mp[s as usize] = b.value;
        splits[s as usize] = if b.value == f64::NEG_INFINITY {
            0
        } else {
            b.key as u32
        };
    }
    (mp, splits, scored)
}

struct MapCross<'a, 'b> {
    k: &'a Kernel<'b>,
    blocks: &'a [MapBlock],
    g: u64,
    consts: &'a [Option<ParentConsts>; 8],
    best: &'a mut [Best; 8],
}

impl WithLanes for MapCross<'_, '_> {
    type Output = u64;
    #[inline(always)]
    fn run<L: Lanes>(self) -> u64 {
        map_cross::<L>(self)
    }
}

/// One vector of slots' best values (`floor`: the best less the slack) and splits (`8a`).
#[derive(Clone, Copy)]
struct Bests<L: Lanes> {
    best: L,
    floor: L,
    best_a: L,
}

#[inline(always)]
fn map_cross<L: Lanes>(job: MapCross<'_, '_>) -> u64 {
    let MapCross {
        k,
        blocks,
        g,
        consts,
        best,
    } = job;
    let vs = [slots::<L>(0, consts), slots::<L>(1, consts)];
    let fresh = Bests {
        best: L::splat(f64::NEG_INFINITY),
        floor: L::splat(f64::NEG_INFINITY),
        best_a: L::splat(0.0),
    };
    let (mut b0, mut b1) = (fresh, fresh);
    let permuted = Paired;
    let [step0, step1] = steps(k, g, &vs);
    let live1 = L::bits(vs[1].live) != 0;
    let mut scored = 0u64;
    for_each_upper!(blocks, g, |a, ba, bb| {
        let live0 = vs[0].live_for(a, g);
        if L::bits(live0) != 0 {
            scored += map_step(&step0, &Direct, a, ba, bb, live0, &mut b0);
        }
        if live1 {
            scored += map_step(&step1, &permuted, a, ba, bb, vs[1].live, &mut b1);
        }
    });
    for (v, x) in [b0, b1].iter().enumerate() {
        let (mut value, mut split) = ([0.0f64; 8], [0.0f64; 8]);
        x.best.store(&mut value);
        x.best_a.store(&mut split);
        for l in 0..8 {
            let j = 8 * v + l;
            if j < USED_SLOTS {
                best[(SLOT_A[j] | SLOT_B[j]) as usize]
                    .add(value[l], split[l] as u64 | SLOT_A[j] as u64);
            }
        }
    }
    scored
}

/// One vector of slots: the bound of each split, and where it reaches the floor, the exact
/// value (a strictly larger one is the slot's new best). Returns the number of lanes scored.
#[inline(always)]
fn map_step<L: Lanes>(
    st: &Step<'_, '_, L>,
    f: &impl Fetch<L>,
    a: u64,
    ba: &MapBlock,
    bb: &MapBlock,
    live: L::M,
    x: &mut Bests<L>,
) -> u64 {
    let c: &Slots<L> = st.c;
    let (ta, tb) = (f.a(&ba.t), f.b(&bb.t));
    let (ma, mb) = (f.a(&ba.mp), f.b(&bb.mp));
    // The bound of `GinkgoModel::log_psi_upper`, branch for branch: hi = a where
    // t(a) >= t(b) (false for NaN); g1 where t(hi) > 0, g2 = -1 - log t(lo) where t(lo) > 0.
    let a_hi = ta.ge(tb);
    let t_hi = L::select(a_hi, ta, tb);
    let t_lo = L::select(a_hi, tb, ta);
    let lt_lo = L::select(a_hi, f.b(&bb.lt), f.a(&ba.lt));
    let zero = L::splat(0.0);
    let g1 = L::select(t_hi.gt(zero), c.c_head.sub(t_hi.mul(c.lam_tp1)), zero);
    let g2 = L::select(t_lo.gt(zero), L::splat(-1.0).sub(lt_lo), zero);
    let bound = c.constant.add(g1).add(g2).add(ma).add(mb);
    // Scored unless below the floor or -inf (a NaN bound is scored).
    let ninf = L::splat(f64::NEG_INFINITY);
    let cand = L::and(L::andnot(live, bound.lt(x.floor)), bound.ne(ninf));
    let bits = L::bits(cand);
    if bits == 0 {
        return 0;
    }
    let val = log_psi::<L, MapBlock, true>(st, f, a, ba, bb, cand)
        .lp
        .add(ma)
        .add(mb);
    let upd = L::and(cand, val.gt(x.best));
    if L::bits(upd) != 0 {
        x.best = L::select(upd, val, x.best);
        x.best_a = L::select(upd, L::splat((a << 3) as f64), x.best_a);
        let slack = x.best.abs().max(L::splat(1.0)).mul(L::splat(SLACK));
        x.floor = x.best.sub(slack);
    }
    bits.count_ones() as u64
}
