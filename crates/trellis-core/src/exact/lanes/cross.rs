//! The lane trellis's inner loop: the splits of a group's parents whose upper parts are both
//! proper (see the module docs of [`super`]), sixteen slots in two vectors of eight lanes,
//! written once over [`Lanes`] and compiled per instruction set.

use super::energy::{Energy, LanePsi};
use super::ties::Cand;
use super::{Acc, Block, Tables, SLOT_A, SLOT_B, USED_SLOTS, ZERO_SLOT};
use crate::simd::{dispatch, Isa, Lanes, WithLanes};

/// A term more than this above a slot's reference moves the reference (e^600 times 2^32
/// terms stays far below the largest `f64`).
const RESCALE: f64 = 600.0;

/// How many upper parts ahead the loop prefetches both blocks.
pub(crate) const PREFETCH: usize = 4;

/// Runs the loop for group `g` (at least two upper leaves) with the lanes of `isa`, adding
/// every slot's sums into `acc` (by parent lane).
pub(super) fn run<E: Energy>(
    t: &Tables<'_, E>,
    g: u64,
    consts: &[Option<E::Consts>; 8],
    acc: &mut [Acc; 8],
    cands: &mut [Vec<Cand>; 8],
    isa: Isa,
) {
    // Parents of at most 16 leaves have at most 29!! < 2^53 trees, so every product and
    // partial sum of their counts is an exact `f64`; parents of 20 or more leaves may have
    // children whose counts exceed 64 bits: their products are taken in scalar 128-bit
    // arithmetic; the others sum 64-bit products into 128 bits.
    let largest = g.count_ones() + 3;
    let z_only = t.z_only;
    let job = Cross {
        t,
        g,
        consts,
        acc,
        cands,
    };
    if z_only {
        dispatch(isa, Counted::<E, LOG_Z>(job));
    } else if largest <= SMALL_PARENT {
        dispatch(isa, Counted::<E, SMALL>(job));
    } else if largest < 20 {
        dispatch(isa, Counted::<E, WORDS>(job));
    } else {
        dispatch(isa, Counted::<E, WIDE>(job));
    }
}

/// The largest parent whose counts are summed in `f64` (see [`run`]).
const SMALL_PARENT: u32 = 16;
/// Count arithmetic: `f64` sums ([`SMALL_PARENT`]), 64-bit products summed into 128 bits,
/// scalar 128-bit products; or no count, no MAP and no `E[log phi]`: the log-sum-exp alone
/// ([`super::Tables::z_only`]).
const SMALL: u8 = 0;
const WORDS: u8 = 1;
const WIDE: u8 = 2;
const LOG_Z: u8 = 3;

struct Cross<'a, 'b, E: Energy> {
    t: &'a Tables<'b, E>,
    g: u64,
    consts: &'a [Option<E::Consts>; 8],
    acc: &'a mut [Acc; 8],
    /// The splits that may tie with their parent's MAP, by parent lane (when counted).
    cands: &'a mut [Vec<Cand>; 8],
}

struct Counted<'a, 'b, E: Energy, const C: u8>(Cross<'a, 'b, E>);

impl<E: Energy, const C: u8> WithLanes for Counted<'_, '_, E, C> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        cross::<L, E, C>(self.0)
    }
}

/// How a vector of slots reads its children's fields from the two blocks: as they are and
/// one broadcast value (the first vector: lane pairs `(l, 0)`), or by permutes (the second).
pub(crate) trait Fetch<L: Lanes> {
    fn a(&self, src: &[f64; 8]) -> L;
    fn b(&self, src: &[f64; 8]) -> L;
    fn a_u(&self, src: &[u64; 8]) -> L::U;
    fn b_u(&self, src: &[u64; 8]) -> L::U;
    /// [`Fetch::a_u`] as `f64`, for values below `2^52`.
    #[inline(always)]
    fn a_f(&self, src: &[u64; 8]) -> L {
        L::u_to_f(self.a_u(src))
    }
    /// [`Fetch::b_u`] as `f64`, for values below `2^52`.
    #[inline(always)]
    fn b_f(&self, src: &[u64; 8]) -> L {
        L::u_to_f(self.b_u(src))
    }
}

/// Lane `l` of the first child is lane `l` of its block; every lane of the second is lane 0.
pub(crate) struct Direct;

impl<L: Lanes> Fetch<L> for Direct {
    #[inline(always)]
    fn a(&self, src: &[f64; 8]) -> L {
        L::load(src)
    }
    #[inline(always)]
    fn b(&self, src: &[f64; 8]) -> L {
        L::broadcast(src, 0)
    }
    #[inline(always)]
    fn a_u(&self, src: &[u64; 8]) -> L::U {
        L::load_u(src)
    }
    #[inline(always)]
    fn b_u(&self, src: &[u64; 8]) -> L::U {
        L::broadcast_u(src, 0)
    }
    #[inline(always)]
    fn b_f(&self, src: &[u64; 8]) -> L {
        L::splat(src[0] as f64)
    }
}

/// Both children's lanes by the pair shuffles ([`crate::simd::PAIR_A`], the second vector).
pub(crate) struct Paired;

impl<L: Lanes> Fetch<L> for Paired {
    #[inline(always)]
    fn a(&self, src: &[f64; 8]) -> L {
        L::pair_a(src)
    }
    #[inline(always)]
    fn b(&self, src: &[f64; 8]) -> L {
        L::pair_b(src)
    }
    #[inline(always)]
    fn a_u(&self, src: &[u64; 8]) -> L::U {
        L::pair_a_u(src)
    }
    #[inline(always)]
    fn b_u(&self, src: &[u64; 8]) -> L::U {
        L::pair_b_u(src)
    }
}

/// Both vectors' [`Step`]s for group `g`.
pub(super) fn steps<'a, E: Energy, L: Lanes>(
    k: &'a E,
    g: u64,
    vs: &'a [Slots<E, L>; 2],
) -> [Step<'a, E, L>; 2] {
    [0, 1].map(|v| Step { k, g, v, c: &vs[v] })
}

/// Runs `$body` with `$a`, `$ba`, `$bb` bound to the upper parts `a` of `g` other than the
/// empty set and `g`, in descending order, and the blocks `a` and `g - a`, prefetching the
/// blocks [`PREFETCH`] parts ahead. (A macro, not a function taking a closure: a closure is
/// compiled without its caller's target features, so its SIMD code would not be inlined.)
macro_rules! for_each_upper {
    ($blocks:expr, $g:expr, |$a:ident, $ba:ident, $bb:ident| $body:block) => {{
        let (blocks, g) = ($blocks, $g);
        let mut $a = (g - 1) & g;
        let mut ahead = $a;
        for _ in 0..$crate::exact::lanes::cross::PREFETCH {
            ahead = ahead.wrapping_sub(1) & g;
        }
        while $a != 0 {
            $crate::exact::lanes::cross::prefetch_block(&blocks[ahead as usize]);
            $crate::exact::lanes::cross::prefetch_block(&blocks[(g ^ ahead) as usize]);
            ahead = ahead.wrapping_sub(1) & g;
            let ($ba, $bb) = (&blocks[$a as usize], &blocks[(g ^ $a) as usize]);
            $body
            $a = ($a - 1) & g;
        }
    }};
}
pub(crate) use for_each_upper;

/// [`for_each_upper`] in ascending order of `a`.
macro_rules! for_each_upper_ascending {
    ($blocks:expr, $g:expr, |$a:ident, $ba:ident, $bb:ident| $body:block) => {{
        let (blocks, g) = ($blocks, $g);
        let mut $a = g & g.wrapping_neg();
        let mut ahead = $a;
        for _ in 0..$crate::exact::lanes::cross::PREFETCH {
            ahead = ahead.wrapping_sub(g) & g;
        }
        while $a != g {
            $crate::exact::lanes::cross::prefetch_block(&blocks[ahead as usize]);
            $crate::exact::lanes::cross::prefetch_block(&blocks[(g ^ ahead) as usize]);
            ahead = ahead.wrapping_sub(g) & g;
            let ($ba, $bb) = (&blocks[$a as usize], &blocks[(g ^ $a) as usize]);
            $body
            $a = $a.wrapping_sub(g) & g;
        }
    }};
}

impl<E: Energy, L: Lanes> Slots<E, L> {
    /// The live lanes for the upper parts `(a, g - a)`: the zero slot's split of the parent `8g`
    /// is one only when `a` holds the lowest leaf of `g`.
    #[inline(always)]
    pub(super) fn live_for(&self, a: u64, g: u64) -> L::M {
        if a & g & g.wrapping_neg() != 0 {
            L::or(self.live, self.zero)
        } else {
            self.live
        }
    }
}

/// One vector of slots: the parents' constants and which lanes are live.
pub(crate) struct Slots<E: Energy, L: Lanes> {
    /// The energy's constants.
    pub(crate) c: E::Slots<L>,
    /// Slots of allowed parents, the zero slot left out.
    pub(super) live: L::M,
    /// The zero slot, when its parent is allowed.
    pub(super) zero: L::M,
}

/// One vector of slots' running sums. The MAP split is kept as `8a` (the slot gives the lanes);
/// within a slot the splits come with `a` ascending, so a value at least as large as the best
/// (and above `-inf`) is an update: among equal values the last, with the largest `A`, stays.
/// (Ascending measured 5 % faster than descending, AVX2 and AVX-512 alike.)
#[derive(Clone, Copy)]
struct Sums<L: Lanes> {
    /// Reference of the log-sum-exp.
    m: L,
    s: L,
    es: L,
    best: L,
    /// The MAP split's `8a` by lane: kept in memory, as it changes only on a new maximum
    /// (fewer values held in registers through the loop).
    best_a: [u64; 8],
    lo: L::U,
    hi: L::U,
    /// The count as an exact `f64` (parents of at most [`SMALL_PARENT`] leaves).
    cf: L,
}

/// Asks for every cache line of `b` (a hint).
#[inline(always)]
pub(crate) fn prefetch_block<T>(b: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = b as *const T as *const i8;
        for line in 0..std::mem::size_of::<T>().div_ceil(64) {
            // SAFETY: prefetching is a hint and never faults.
            unsafe {
                std::arch::x86_64::_mm_prefetch(
                    p.wrapping_add(64 * line),
                    std::arch::x86_64::_MM_HINT_T0,
                )
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = b;
}

/// The slots of vector `v` (0 or 1) for the parents' constants `consts` (by lane of the group).
#[inline(always)]
pub(crate) fn slots<E: Energy, L: Lanes>(v: usize, consts: &[Option<E::Consts>; 8]) -> Slots<E, L> {
    let mut per_lane = [None; 8];
    let (mut live, mut zero) = (0u8, 0u8);
    for (l, c) in per_lane.iter_mut().enumerate() {
        let j = 8 * v + l;
        *c = consts[(SLOT_A[j] | SLOT_B[j]) as usize];
        if c.is_some() {
            if j == ZERO_SLOT {
                zero |= 1 << l;
            } else if j < USED_SLOTS {
                live |= 1 << l;
            }
        }
    }
    Slots {
        c: E::slots::<L>(&per_lane),
        live: L::mask(live),
        zero: L::mask(zero),
    }
}

/// What one vector of slots needs in the loop.
pub(crate) struct Step<'a, E: Energy, L: Lanes> {
    pub(crate) k: &'a E,
    pub(crate) g: u64,
    /// Which vector (0 or 1).
    pub(crate) v: usize,
    pub(crate) c: &'a Slots<E, L>,
}

#[inline(always)]
fn cross<L: Lanes, E: Energy, const C: u8>(job: Cross<'_, '_, E>) {
    let Cross {
        t,
        g,
        consts,
        acc,
        cands,
    } = job;
    let blocks = t.blocks;
    let vs = [slots::<E, L>(0, consts), slots::<E, L>(1, consts)];
    let fresh = Sums {
        m: L::splat(f64::NEG_INFINITY),
        s: L::splat(0.0),
        es: L::splat(0.0),
        best: L::splat(f64::NEG_INFINITY),
        best_a: [0; 8],
        lo: L::u_zero(),
        hi: L::u_zero(),
        cf: L::splat(0.0),
    };
    let (mut s0, mut s1) = (fresh, fresh);
    let mut wide_counts = [[0u128; 8]; 2];
    let direct = Direct;
    let permuted = Paired;
    let [step0, step1] = steps(t.k, g, &vs);
    let live1 = L::bits(vs[1].live) != 0;
    if E::AHEAD {
        // The potentials of a batch of upper parts first, then their sums in order: the
        // potentials' long chains of dependent operations from several upper parts side by side
        // for the out-of-order core (the sums' order, hence every bit, as one part at a time).
        let mut batch_a = [0u64; BATCH];
        let mut psi0: [Option<E::Psi<L>>; BATCH] = [None; BATCH];
        let mut psi1: [Option<E::Psi<L>>; BATCH] = [None; BATCH];
        let mut filled = 0;
        // (A macro: a closure would be compiled without the caller's target features.)
        macro_rules! flush {
            () => {
                sums::<L, E, C>(
                    t,
                    [&step0, &step1],
                    &batch_a[..filled],
                    [&psi0, &psi1],
                    [&mut s0, &mut s1],
                    &mut wide_counts,
                    cands,
                )
            };
        }
        for_each_upper_ascending!(blocks, g, |a, ba, bb| {
            let live0 = vs[0].live_for(a, g);
            batch_a[filled] = a;
            psi0[filled] = (L::bits(live0) != 0)
                .then(|| E::log_psi(&step0, &direct, a, &ba.st, &bb.st, live0));
            psi1[filled] =
                live1.then(|| E::log_psi(&step1, &permuted, a, &ba.st, &bb.st, vs[1].live));
            filled += 1;
            if filled == BATCH {
                flush!();
                filled = 0;
            }
        });
        flush!();
    } else {
        for_each_upper_ascending!(blocks, g, |a, ba, bb| {
            let live0 = vs[0].live_for(a, g);
            // Both vectors' potentials first, then both vectors' sums: two independent chains of
            // dependent operations side by side for the out-of-order core.
            let lp0 = (L::bits(live0) != 0)
                .then(|| E::log_psi(&step0, &direct, a, &ba.st, &bb.st, live0));
            let lp1 = live1.then(|| E::log_psi(&step1, &permuted, a, &ba.st, &bb.st, vs[1].live));
            if let Some(lp) = lp0 {
                step::<L, E, C>(
                    t,
                    &step0,
                    &direct,
                    lp,
                    a,
                    ba,
                    bb,
                    &mut s0,
                    &mut wide_counts[0],
                    cands,
                );
            }
            if let Some(lp) = lp1 {
                step::<L, E, C>(
                    t,
                    &step1,
                    &permuted,
                    lp,
                    a,
                    ba,
                    bb,
                    &mut s1,
                    &mut wide_counts[1],
                    cands,
                );
            }
        });
    }
    // Merge the slots into their parents.
    for (v, x) in [s0, s1].iter().enumerate() {
        let mut f = [[0.0f64; 8]; 6];
        let (mut lo, mut hi) = ([0u64; 8], [0u64; 8]);
        x.m.store(&mut f[0]);
        x.s.store(&mut f[1]);
        x.es.store(&mut f[2]);
        x.best.store(&mut f[3]);
        x.cf.store(&mut f[5]);
        L::u_store(x.lo, &mut lo);
        L::u_store(x.hi, &mut hi);
        for l in 0..8 {
            let j = 8 * v + l;
            if j >= USED_SLOTS {
                continue;
            }
            let p = &mut acc[(SLOT_A[j] | SLOT_B[j]) as usize];
            p.sum.add(f[0][l], f[1][l], f[2][l]);
            if C == LOG_Z {
                continue;
            }
            p.best.add(f[3][l], x.best_a[l] | SLOT_A[j] as u64);
            p.add_count(if C == SMALL {
                f[5][l] as u128
            } else if C == WIDE {
                wide_counts[v][l]
            } else {
                (hi[l] as u128) << 64 | lo[l] as u128
            });
        }
    }
}

/// Upper parts computed ahead of their sums (see [`cross`]).
const BATCH: usize = 8;

/// Both vectors' sums for the upper parts `parts` (ascending), given their potentials.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn sums<L: Lanes, E: Energy, const C: u8>(
    t: &Tables<'_, E>,
    steps: [&Step<'_, E, L>; 2],
    parts: &[u64],
    psis: [&[Option<E::Psi<L>>; BATCH]; 2],
    x: [&mut Sums<L>; 2],
    wide_counts: &mut [[u128; 8]; 2],
    cands: &mut [Vec<Cand>; 8],
) {
    let [x0, x1] = x;
    let [w0, w1] = wide_counts;
    let g = steps[0].g;
    for (i, &a) in parts.iter().enumerate() {
        let (ba, bb) = (&t.blocks[a as usize], &t.blocks[(g ^ a) as usize]);
        if let Some(lp) = psis[0][i] {
            step::<L, E, C>(t, steps[0], &Direct, lp, a, ba, bb, x0, w0, cands);
        }
        if let Some(lp) = psis[1][i] {
            step::<L, E, C>(t, steps[1], &Paired, lp, a, ba, bb, x1, w1, cands);
        }
    }
}

/// One vector of slots for the upper parts `(a, g - a)` (blocks `ba`, `bb`), given its
/// `log psi`: the log-sum-exp, `E`, MAP and count sums.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn step<L: Lanes, E: Energy, const C: u8>(
    t: &Tables<'_, E>,
    st: &Step<'_, E, L>,
    f: &impl Fetch<L>,
    psi: E::Psi<L>,
    a: u64,
    ba: &Block<E::Stat>,
    bb: &Block<E::Stat>,
    x: &mut Sums<L>,
    wide_counts: &mut [u128; 8],
    cands: &mut [Vec<Cand>; 8],
) {
    let lp = psi.lp();
    let lza = f.a(&ba.lz);
    let lzb = f.b(&bb.lz);
    let z = lp.add(lza).add(lzb);
    if C == LOG_Z {
        // The log-sum-exp alone, with the same operations as below (the same bits).
        let up_m = z.gt(x.m.add(L::splat(RESCALE)));
        if L::bits(up_m) != 0 {
            let m = L::select(up_m, z, x.m);
            let r = L::select(up_m, x.m.sub(m).exp(), L::splat(1.0));
            x.s = x.s.mul(r);
            x.m = m;
        }
        x.s = x.s.add(z.sub(x.m).exp());
        return;
    }
    // Two rare events, tested at once: slots where z is far above the reference (move it), and
    // slots where the MAP value may grow: a strictly larger value (see `Sums`), from the exact
    // `log psi`, which is needed only where the upper bound exceeds the best so far (a new
    // maximum or nearly one).
    let up_m = z.gt(x.m.add(L::splat(RESCALE)));
    let (ma, mb) = (f.a(&ba.mp), f.b(&bb.mp));
    let vu = psi.lp_up().add(ma).add(mb);
    let above_ninf = vu.gt(L::splat(f64::NEG_INFINITY));
    let up_b = L::and(vu.ge(x.best), above_ninf);
    // Splits that may tie with the parent's final MAP (see `super::ties`).
    let tie = match &t.ties {
        Some(tt) => {
            let w = x
                .best
                .abs()
                .add(ma.abs())
                .add(mb.abs())
                .add(L::splat(2.0 * tt.mag_max + 1.0))
                .mul(L::splat(tt.window_factor()));
            L::and(vu.ge(x.best.sub(w)), above_ninf)
        }
        None => L::mask(0),
    };
    if L::bits(L::or(L::or(up_m, up_b), tie)) != 0 {
        if L::bits(up_m) != 0 {
            let m = L::select(up_m, z, x.m);
            let r = L::select(up_m, x.m.sub(m).exp(), L::splat(1.0));
            x.s = x.s.mul(r);
            x.es = x.es.mul(r);
            x.m = m;
        }
        let need = L::or(up_b, tie);
        if L::bits(need) != 0 {
            let exact = t.k.exact(&psi, need);
            let tied = L::bits(tie);
            if tied != 0 {
                let mut psis = [0.0f64; 8];
                exact.store(&mut psis);
                let b = st.g ^ a;
                for (l, &psi) in psis.iter().enumerate() {
                    let j = 8 * st.v + l;
                    if tied >> l & 1 == 1 && j < USED_SLOTS {
                        cands[(SLOT_A[j] | SLOT_B[j]) as usize].push(Cand {
                            a: (a << 3) | SLOT_A[j] as u64,
                            b: (b << 3) | SLOT_B[j] as u64,
                            psi,
                        });
                    }
                }
            }
            let val = exact.add(ma).add(mb);
            let upd = L::and(up_b, val.ge(x.best));
            x.best = L::select(upd, val, x.best);
            let upd = L::bits(upd);
            for (l, k) in x.best_a.iter_mut().enumerate() {
                if upd >> l & 1 == 1 {
                    *k = a << 3;
                }
            }
        }
    }
    let w = z.sub(x.m).exp();
    x.s = x.s.add(w);
    let e = lp.add(f.a(&ba.ee)).add(f.b(&bb.ee));
    x.es = L::select(w.gt(L::splat(0.0)), w.fma(e, x.es), x.es);
    // Count: splits with a finite potential and children with finite trees.
    let ninf = L::splat(f64::NEG_INFINITY);
    let valid = L::and(L::and(lp.ne(ninf), lza.ne(ninf)), lzb.ne(ninf));
    if C == SMALL {
        // Exact: the product and the sum are integers below 2^53.
        x.cf = L::select(valid, f.a_f(&ba.cnt).fma(f.b_f(&bb.cnt), x.cf), x.cf);
    } else if C == WIDE {
        let bits = L::bits(valid);
        let b = st.g ^ a;
        for (l, wc) in wide_counts.iter_mut().enumerate() {
            if bits >> l & 1 == 1 {
                let j = 8 * st.v + l;
                let ca = t.cell((a << 3) | SLOT_A[j] as u64).cnt;
                let cb = t.cell((b << 3) | SLOT_B[j] as u64).cnt;
                *wc = wc.wrapping_add(ca.wrapping_mul(cb));
            }
        }
    } else {
        L::count_add(&mut x.lo, &mut x.hi, f.a_u(&ba.cnt), f.b_u(&bb.cnt), valid);
    }
}
