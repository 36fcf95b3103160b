//! The lane trellis's inner loop: the splits of a group's parents whose upper parts are both
//! proper (see the module docs of [`super`]), sixteen slots in two vectors of eight lanes,
//! written once over [`Lanes`] and compiled per instruction set.

use super::{Acc, Block, Kernel, KernelBlock, Tables, SLOT_A, SLOT_B, USED_SLOTS, ZERO_SLOT};
use crate::model::ginkgo::ParentConsts;
use crate::simd::{dispatch, Isa, Lanes, WithLanes};

/// A term more than this above a slot's reference moves the reference (e^600 times 2^32
/// terms stays far below the largest `f64`).
const RESCALE: f64 = 600.0;

/// How many upper parts ahead the loop prefetches both blocks.
pub(crate) const PREFETCH: usize = 4;

/// Runs the loop for group `g` (at least two upper leaves) with the lanes of `isa`, adding
/// every slot's sums into `acc` (by parent lane).
pub(super) fn run(
    t: &Tables<'_>,
    g: u64,
    consts: &[Option<ParentConsts>; 8],
    acc: &mut [Acc; 8],
    isa: Isa,
) {
    // Parents of at most 16 leaves have at most 29!! < 2^53 trees, so every product and
    // partial sum of their counts is an exact `f64`; parents of 20 or more leaves may have
    // children whose counts exceed 64 bits: their products are taken in scalar 128-bit
    // arithmetic; the others sum 64-bit products into 128 bits.
    let largest = g.count_ones() + 3;
    let job = Cross { t, g, consts, acc };
    if largest <= SMALL_PARENT {
        dispatch(isa, Counted::<SMALL>(job));
    } else if largest < 20 {
        dispatch(isa, Counted::<WORDS>(job));
    } else {
        dispatch(isa, Counted::<WIDE>(job));
    }
}

/// The largest parent whose counts are summed in `f64` (see [`run`]).
const SMALL_PARENT: u32 = 16;
/// Count arithmetic: `f64` sums ([`SMALL_PARENT`]), 64-bit products summed into 128 bits,
/// scalar 128-bit products.
const SMALL: u8 = 0;
const WORDS: u8 = 1;
const WIDE: u8 = 2;

struct Cross<'a, 'b> {
    t: &'a Tables<'b>,
    g: u64,
    consts: &'a [Option<ParentConsts>; 8],
    acc: &'a mut [Acc; 8],
}

struct Counted<'a, 'b, const C: u8>(Cross<'a, 'b>);

impl<const C: u8> WithLanes for Counted<'_, '_, C> {
    type Output = ();
    #[inline(always)]
    fn run<L: Lanes>(self) {
        cross::<L, C>(self.0)
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
pub(super) fn steps<'a, 'b, L: Lanes>(
    k: &'a Kernel<'b>,
    g: u64,
    vs: &'a [Slots<L>; 2],
) -> [Step<'a, 'b, L>; 2] {
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

impl<L: Lanes> Slots<L> {
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
pub(super) struct Slots<L: Lanes> {
    pub(super) c_head: L,
    pub(super) lam_tp1: L,
    pub(super) constant: L,
    pub(super) log_lambda: L,
    pub(super) lambda: L,
    pub(super) sqrt_p: L,
    pub(super) lam_tcut: L,
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

#[inline(always)]
pub(super) fn slots<L: Lanes>(v: usize, consts: &[Option<ParentConsts>; 8]) -> Slots<L> {
    let mut f = [[0.0f64; 8]; 7];
    let (mut live, mut zero) = (0u8, 0u8);
    for l in 0..8 {
        let j = 8 * v + l;
        let (x, y) = (SLOT_A[j], SLOT_B[j]);
        if let Some(c) = consts[(x | y) as usize] {
            let values = [
                c.c_head,
                c.lam_tp1,
                c.constant,
                c.log_lambda,
                c.lambda,
                c.sqrt_p,
                c.lam_tcut,
            ];
            for (field, value) in f.iter_mut().zip(values) {
                field[l] = value;
            }
            if j == ZERO_SLOT {
                zero |= 1 << l;
            } else if j < USED_SLOTS {
                live |= 1 << l;
            }
        }
    }
    Slots {
        c_head: L::load(&f[0]),
        lam_tp1: L::load(&f[1]),
        constant: L::load(&f[2]),
        log_lambda: L::load(&f[3]),
        lambda: L::load(&f[4]),
        sqrt_p: L::load(&f[5]),
        lam_tcut: L::load(&f[6]),
        live: L::mask(live),
        zero: L::mask(zero),
    }
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

/// What one vector of slots needs in the loop.
pub(super) struct Step<'a, 'b, L: Lanes> {
    pub(super) k: &'a Kernel<'b>,
    pub(super) g: u64,
    /// Which vector (0 or 1).
    pub(super) v: usize,
    pub(super) c: &'a Slots<L>,
}

#[inline(always)]
fn cross<L: Lanes, const C: u8>(job: Cross<'_, '_>) {
    let Cross { t, g, consts, acc } = job;
    let blocks = t.blocks;
    let vs = [slots::<L>(0, consts), slots::<L>(1, consts)];
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
    let [step0, step1] = steps(&t.k, g, &vs);
    let live1 = L::bits(vs[1].live) != 0;
    for_each_upper_ascending!(blocks, g, |a, ba, bb| {
        let live0 = vs[0].live_for(a, g);
        // Both vectors' potentials first, then both vectors' sums: two independent chains of
        // dependent operations side by side for the out-of-order core.
        let lp0 = (L::bits(live0) != 0)
            .then(|| log_psi::<L, Block, false>(&step0, &direct, a, ba, bb, live0));
        let lp1 =
            live1.then(|| log_psi::<L, Block, false>(&step1, &permuted, a, ba, bb, vs[1].live));
        if let Some(lp) = lp0 {
            step::<L, C>(
                t,
                &step0,
                &direct,
                lp,
                a,
                ba,
                bb,
                &mut s0,
                &mut wide_counts[0],
            );
        }
        if let Some(lp) = lp1 {
            step::<L, C>(
                t,
                &step1,
                &permuted,
                lp,
                a,
                ba,
                bb,
                &mut s1,
                &mut wide_counts[1],
            );
        }
    });
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

/// One vector of slots for the upper parts `(a, g - a)` (blocks `ba`, `bb`), given its
/// `log psi`: the log-sum-exp, `E`, MAP and count sums.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn step<L: Lanes, const C: u8>(
    t: &Tables<'_>,
    st: &Step<'_, '_, L>,
    f: &impl Fetch<L>,
    psi: Psi<L>,
    a: u64,
    ba: &Block,
    bb: &Block,
    x: &mut Sums<L>,
    wide_counts: &mut [u128; 8],
) {
    let lp = psi.lp;
    let lza = f.a(&ba.lz);
    let lzb = f.b(&bb.lz);
    let z = lp.add(lza).add(lzb);
    // Two rare events, tested at once: slots where z is far above the reference (move it), and
    // slots where the MAP value may grow: a strictly larger value (see `Sums`), from the exact
    // `log psi`, which is needed only where the upper bound exceeds the best so far (a new
    // maximum or nearly one).
    let up_m = z.gt(x.m.add(L::splat(RESCALE)));
    let (ma, mb) = (f.a(&ba.mp), f.b(&bb.mp));
    let vu = psi.lp_up.add(ma).add(mb);
    let up_b = L::and(vu.ge(x.best), vu.gt(L::splat(f64::NEG_INFINITY)));
    if L::bits(L::or(up_m, up_b)) != 0 {
        if L::bits(up_m) != 0 {
            let m = L::select(up_m, z, x.m);
            let r = L::select(up_m, x.m.sub(m).exp(), L::splat(1.0));
            x.s = x.s.mul(r);
            x.es = x.es.mul(r);
            x.m = m;
        }
        if L::bits(up_b) != 0 {
            let val = psi.exact().add(ma).add(mb);
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

/// `log psi` of one vector of slots.
pub(super) struct Psi<L: Lanes> {
    /// `log psi`, with [`Lanes::ln_fast`] unless exact (exact in the lanes of the scalar
    /// kernel's special cases, `-inf` outside the live lanes).
    pub(super) lp: L,
    /// An upper bound on the exact `log psi` (computed with a lower bound on `ln tp2`, so that
    /// rounding, being monotone, keeps it above the exact value): a lane's MAP value can only
    /// grow where this one does.
    pub(super) lp_up: L,
    head: L,
    /// The vector kernel's `tail`; in the lanes of `leafy`, the leaf term's argument
    /// `lambda t_cut / tp2`.
    tail: L,
    tp2: L,
    /// Live lanes whose `lp` came from the vector kernel.
    fast: L::M,
    /// Lanes (bits) of a leaf child whose `lp` came from [`log1mexp`] (not the model's bits).
    leafy: u8,
}

impl<L: Lanes> Psi<L> {
    /// The exact `log psi` ([`crate::model::GinkgoModel`]'s operations, the same bits).
    #[inline(always)]
    pub(super) fn exact(&self) -> L {
        if L::LN_FAST_IS_LN {
            return self.lp;
        }
        let v = L::select(
            self.fast,
            self.head.add(self.tail.sub(self.tp2.ln())),
            self.lp,
        );
        if self.leafy == 0 {
            return v;
        }
        // The model's leaf term: `head + (log1mexp(x) - ln 1)`, and `ln 1 = 0`.
        let (mut out, mut head, mut x) = ([0.0; 8], [0.0; 8], [0.0; 8]);
        v.store(&mut out);
        self.head.store(&mut head);
        self.tail.store(&mut x);
        for l in 0..8 {
            if self.leafy >> l & 1 == 1 {
                out[l] = head[l] + crate::model::log1mexp(x[l]);
            }
        }
        L::load(&out)
    }
}

/// `ln(1 - e^-x)` for `x` in `[LEAF_X_MIN, LEAF_X_MAX]`, within `3e-15 (1 + |result|)` of
/// [`crate::model::log1mexp`]: `ln_fast(1 - e^-x)` above `ln 2`, below it
/// `ln_fast(x P(x))` with `P(x) = (1 - e^-x) / x` by its Taylor series to degree 15 (the
/// first term left out is below `1e-17` of the sum there), so that no digit cancels.
#[inline(always)]
pub(super) fn log1mexp<L: Lanes>(x: L) -> L {
    // (-1)^k / (k + 1)!, k = 15 down to 0.
    const C: [f64; 16] = [
        -1.0 / 20_922_789_888_000.0,
        1.0 / 1_307_674_368_000.0,
        -1.0 / 87_178_291_200.0,
        1.0 / 6_227_020_800.0,
        -1.0 / 479_001_600.0,
        1.0 / 39_916_800.0,
        -1.0 / 3_628_800.0,
        1.0 / 362_880.0,
        -1.0 / 40_320.0,
        1.0 / 5_040.0,
        -1.0 / 720.0,
        1.0 / 120.0,
        -1.0 / 24.0,
        1.0 / 6.0,
        -1.0 / 2.0,
        1.0,
    ];
    let mut p = L::splat(C[0]);
    for &c in &C[1..] {
        p = p.fma(x, L::splat(c));
    }
    let small = x.mul(p);
    let big = L::splat(1.0).sub(L::splat(0.0).sub(x).exp());
    L::select(x.gt(L::splat(std::f64::consts::LN_2)), big, small).ln_fast()
}

/// The range of a leaf term's argument that [`log1mexp`] takes (the rest goes to the scalar
/// kernel): `x P(x)` stays a normal number and `e^-x` above `e^-700`.
const LEAF_X_MIN: f64 = 1e-290;
const LEAF_X_MAX: f64 = 700.0;

/// `log psi` of one vector of slots for the upper parts `(a, g - a)`: the Ginkgo kernel's
/// operations in the same order as [`crate::model::GinkgoModel`]'s scalar and AVX2 kernels,
/// with [`Lanes::ln_fast`] for the log-sum-exp ([`Psi::exact`] gives the model's bits), or
/// with [`Lanes::ln`] when `EXACT` (then `lp` has the model's bits), its special cases (a leaf child, a degenerate
/// `tp2`) by the scalar kernel, and `-inf` outside `live`.
#[inline(always)]
pub(super) fn log_psi<L: Lanes, B: KernelBlock, const EXACT: bool>(
    st: &Step<'_, '_, L>,
    f: &impl Fetch<L>,
    a: u64,
    ba: &B,
    bb: &B,
    live: L::M,
) -> Psi<L> {
    let c = st.c;
    let ta = f.a(ba.t());
    let tb = f.b(bb.t());
    let qa = f.a(ba.q());
    let qb = f.b(bb.q());
    // hi = a where t(a) >= t(b) (false for NaN), else b.
    let a_hi = ta.ge(tb);
    let t_hi = L::select(a_hi, ta, tb);
    let q_hi = L::select(a_hi, qa, qb);
    let t_lo = L::select(a_hi, tb, ta);
    let g1 = c.c_head.sub(t_hi.mul(c.lam_tp1));
    let head = c.constant.add(g1);
    let d = c.sqrt_p.sub(q_hi);
    let tp2 = d.mul(d);
    let tail = c.log_lambda.sub(c.lambda.mul(t_lo).div(tp2));
    let exact = EXACT || L::LN_FAST_IS_LN;
    let ln = if EXACT { tp2.ln() } else { tp2.ln_fast() };
    let lp = head.add(tail.sub(ln));
    let zero = L::splat(0.0);
    let tp2_ok = L::and(
        tp2.ge(L::splat(f64::MIN_POSITIVE)),
        tp2.lt(L::splat(f64::INFINITY)),
    );
    // Both children have two or more leaves when both upper parts do: then, with physical
    // four-vectors, both `t > 0` without a test.
    let multi = a.count_ones() >= 2 && (st.g ^ a).count_ones() >= 2;
    let ok = if multi && st.k.multi_positive {
        tp2_ok
    } else {
        L::and(L::and(t_lo.gt(zero), t_hi.gt(zero)), tp2_ok)
    };
    let fix = L::bits(L::andnot(live, ok));
    let ninf = L::splat(f64::NEG_INFINITY);
    let fast = L::and(live, ok);
    if fix == 0 {
        let lp = L::select(live, lp, ninf);
        return Psi {
            lp,
            lp_up: up_bound::<L>(lp, exact),
            head,
            tail,
            tp2,
            fast,
            leafy: 0,
        };
    }
    // A leaf child beside a cluster (`t_lo = 0 < t_hi`): the model's tail is the leaf term
    // `log1mexp(lambda t_cut / tp2)`, which the lanes take unless exactness is asked for.
    let (leaf, tail) = if exact {
        (L::mask(0), tail)
    } else {
        let x = c.lam_tcut.div(tp2);
        let leaf = L::and(
            L::and(
                L::and(live, t_lo.eq(zero)),
                L::and(t_hi.gt(zero), tp2.ge(L::splat(f64::MIN_POSITIVE))),
            ),
            L::and(x.ge(L::splat(LEAF_X_MIN)), L::splat(LEAF_X_MAX).ge(x)),
        );
        (leaf, L::select(leaf, x, tail))
    };
    let leafy = L::bits(leaf);
    let fix = L::bits(L::andnot(L::andnot(live, ok), leaf));
    let mut out = [0.0f64; 8];
    lp.store(&mut out);
    let b = st.g ^ a;
    for (l, o) in out.iter_mut().enumerate() {
        if fix >> l & 1 == 1 {
            let j = 8 * st.v + l;
            *o =
                st.k.log_psi((a << 3) | SLOT_A[j] as u64, (b << 3) | SLOT_B[j] as u64);
        }
    }
    let scalar = L::load(&out);
    let other = if leafy == 0 {
        scalar
    } else {
        L::select(leaf, head.add(log1mexp(tail)), scalar)
    };
    let lp = L::select(fast, lp, L::select(live, other, ninf));
    Psi {
        lp,
        lp_up: up_bound::<L>(lp, exact),
        head,
        tail,
        tp2,
        fast,
        leafy,
    }
}

/// An upper bound on the exact `log psi` from `lp`, computed with [`Lanes::ln_fast`]:
/// `lp + |lp| 2^-48 + 1e-11` (`NaN` where `lp` is `-inf`, which no comparison selects).
///
/// `lp = head + (tail - ln_fast(tp2))` and the exact value is the same with `ln(tp2)`. The two
/// `ln`s differ by at most `1e-15 (1 + |ln tp2|) < 7.5e-13` (`tp2` is a normal, finite number
/// there, so `|ln tp2| < 710`); each of the two roundings moves the results apart by at most
/// one ulp of an operand. Without cancellation every operand is at most `|lp|` plus that, so
/// the distance is below `2^-51 |lp| + 7.5e-13`. Cancellation needs `head` and `tail - ln` of
/// opposite signs, and the positive one is below 4096 whatever the model's positive finite
/// parameters (`head <= constant + ln lambda - ln tp1` and `tail - ln <= ln lambda + 710`, each
/// logarithm of a positive finite double below 745), so its ulp is at most `2^-40`, about
/// `9.1e-13`. The sum, below `2^-51 |lp| + 2.6e-12`, is under the margin with room to spare,
/// and so is the margin's own rounding (at most an ulp of `|lp|`).
#[inline(always)]
fn up_bound<L: Lanes>(lp: L, exact: bool) -> L {
    if exact {
        return lp;
    }
    lp.abs()
        .fma(L::splat(UP_BOUND_REL), L::splat(UP_BOUND_ABS))
        .add(lp)
}

const UP_BOUND_REL: f64 = 1.0 / 281_474_976_710_656.0; // 2^-48
const UP_BOUND_ABS: f64 = 1e-11;
