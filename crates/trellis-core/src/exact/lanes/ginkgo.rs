//! The Ginkgo model in the lanes ([`super`]): its blocks keep `t` and `sqrt t`, and one vector
//! of slots' `log psi` is the model's kernel with a fast logarithm for the log-sum-exp and the
//! model's own operations (the same bits) where the MAP may change ([`Psi::exact`]).

use super::cross::{Fetch, Step};
use super::energy::{scalar_lanes, Energy, LanePsi};
use crate::exact::ExactError;
use crate::model::ginkgo::{GinkgoModel, GinkgoStat, ParentConsts};
use crate::model::SplitModel;
use crate::simd::Lanes;
use crate::subset::Subset;

/// What the Ginkgo kernel needs: the model, every subset's statistics, the jet.
pub(crate) struct GinkgoLanes<'a> {
    pub(super) model: &'a GinkgoModel,
    pub(super) stats: Vec<GinkgoStat>,
    /// The whole jet's bits.
    full: u64,
    /// Every cluster of two or more leaves has `t > 0` (physical four-vectors): then only a
    /// split with a single-leaf child needs the kernel's `t` tests.
    multi_positive: bool,
}

impl<'a> GinkgoLanes<'a> {
    pub(crate) fn new(model: &'a GinkgoModel) -> Result<Self, ExactError> {
        let n = model.n_leaves();
        let stats = model.stat_table()?;
        super::energy::check_table(&stats, n)?;
        let multi_positive = stats
            .iter()
            .enumerate()
            .all(|(i, s)| i.count_ones() < 2 || s.t > 0.0);
        Ok(GinkgoLanes {
            model,
            stats,
            full: Subset::full(n).bits(),
            multi_positive,
        })
    }

    /// The exact `log psi` of the split `(a, b)` (the scalar kernel).
    #[inline]
    pub(super) fn log_psi(&self, a: u64, b: u64) -> f64 {
        let p = a | b;
        let s = &self.stats;
        self.model.split_kernel(
            &s[a as usize],
            &s[b as usize],
            &s[p as usize],
            p == self.full,
        )
    }
}

/// Eight subsets' `t` and `sqrt t`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tq {
    pub(super) t: [f64; 8],
    pub(super) q: [f64; 8],
}

/// One vector of slots' parent constants ([`ParentConsts`], field by field).
pub(crate) struct GinkgoSlots<L> {
    pub(super) c_head: L,
    pub(super) lam_tp1: L,
    pub(super) constant: L,
    pub(super) log_lambda: L,
    pub(super) lambda: L,
    pub(super) sqrt_p: L,
    pub(super) lam_tcut: L,
}

impl Energy for GinkgoLanes<'_> {
    type Stat = Tq;
    type Consts = ParentConsts;
    type Slots<L: Lanes> = GinkgoSlots<L>;
    type Psi<L: Lanes> = Psi<L>;

    fn n_leaves(&self) -> usize {
        self.model.n_leaves()
    }

    fn block_stat(&self, b: usize) -> Tq {
        let c = &self.stats[8 * b..8 * b + 8];
        Tq {
            t: std::array::from_fn(|l| c[l].t),
            q: std::array::from_fn(|l| c[l].sqrt_t),
        }
    }

    fn consts(&self, i: u64) -> Option<ParentConsts> {
        self.model
            .parent_consts(&self.stats[i as usize], i == self.full)
    }

    #[inline(always)]
    fn slots<L: Lanes>(consts: &[Option<ParentConsts>; 8]) -> GinkgoSlots<L> {
        let mut f = [[0.0f64; 8]; 7];
        for (l, c) in consts.iter().enumerate() {
            if let Some(c) = c {
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
            }
        }
        GinkgoSlots {
            c_head: L::load(&f[0]),
            lam_tp1: L::load(&f[1]),
            constant: L::load(&f[2]),
            log_lambda: L::load(&f[3]),
            lambda: L::load(&f[4]),
            sqrt_p: L::load(&f[5]),
            lam_tcut: L::load(&f[6]),
        }
    }

    #[inline]
    fn log_psi_scalar(&self, a: u64, b: u64) -> f64 {
        self.log_psi(a, b)
    }

    #[inline(always)]
    fn log_psi<L: Lanes>(
        st: &Step<'_, Self, L>,
        f: &impl Fetch<L>,
        a: u64,
        ba: &Tq,
        bb: &Tq,
        live: L::M,
    ) -> Psi<L> {
        log_psi::<L, false>(st, f, a, ba, bb, live)
    }

    #[inline(always)]
    fn exact<L: Lanes>(&self, psi: &Psi<L>, _need: L::M) -> L {
        psi.exact()
    }
}

impl<L: Lanes> LanePsi<L> for Psi<L> {
    #[inline(always)]
    fn lp(&self) -> L {
        self.lp
    }
    #[inline(always)]
    fn lp_up(&self) -> L {
        self.lp_up
    }
}

/// `log psi` of one vector of slots.
#[derive(Clone, Copy)]
pub(crate) struct Psi<L: Lanes> {
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
pub(super) fn log_psi<L: Lanes, const EXACT: bool>(
    st: &Step<'_, GinkgoLanes<'_>, L>,
    f: &impl Fetch<L>,
    a: u64,
    ba: &Tq,
    bb: &Tq,
    live: L::M,
) -> Psi<L> {
    let c = &st.c.c;
    let ta = f.a(&ba.t);
    let tb = f.b(&bb.t);
    let qa = f.a(&ba.q);
    let qb = f.b(&bb.q);
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
    let scalar = scalar_lanes(st.k, st.g, st.v, a, fix, lp);
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
