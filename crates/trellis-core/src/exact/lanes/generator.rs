//! The Ginkgo generator's density ([`GinkgoGeneratorModel`]) in the lanes ([`super`]).
//!
//! Which splits are forbidden (`-inf`) is decided with the model's own operations (the same
//! bits: the two orders' supports, the sign of `K`, an impossible leaf), so the finite-tree
//! counts are the model's. The value of an allowed split is computed with the lanes' `exp` and
//! a fast logarithm, `(c - λ m) + (ln_fast(sum) - ln_fast(K) / 2)`, for the log-sum-exp, with
//! an upper bound on the model's value for the MAP; where the MAP may change, the model's own
//! function gives the exact value (the same bits). Lanes outside the fast path's safe range
//! (a sum or `K` that is not a normal number, a result beyond `e^±700`, an exponential below
//! `e^-700`) take the model's function outright.

use super::cross::{Fetch, Step};
use super::energy::{check_table, scalar_lanes, Energy, LanePsi};
use crate::exact::ExactError;
use crate::model::ginkgo_generator::{GeneratorStat, U_MAX};
use crate::model::{GinkgoGeneratorModel, SplitModel};
use crate::simd::Lanes;
use crate::subset::Subset;

/// The generator's model and every subset's statistics.
pub(crate) struct GeneratorLanes<'a> {
    model: &'a GinkgoGeneratorModel,
    stats: Vec<GeneratorStat>,
}

impl<'a> GeneratorLanes<'a> {
    pub(crate) fn new(model: &'a GinkgoGeneratorModel) -> Result<Self, ExactError> {
        let stats = model.stat_table()?;
        check_table(&stats, model.n_leaves())?;
        Ok(GeneratorLanes { model, stats })
    }

    /// The kernel over statistics made up for a test (any values, one per subset).
    #[cfg(test)]
    pub(super) fn with_stats(model: &'a GinkgoGeneratorModel, stats: Vec<GeneratorStat>) -> Self {
        assert_eq!(stats.len(), 1 << model.n_leaves());
        GeneratorLanes { model, stats }
    }
}

/// Eight subsets' `t`, `sqrt t` and whether each is an impossible leaf (1) or not (0).
#[derive(Clone, Copy, Debug)]
pub(crate) struct GenStat {
    t: [f64; 8],
    q: [f64; 8],
}

/// A parent's `t` and `sqrt t`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GenConsts {
    t: f64,
    q: f64,
    /// `1 / t`.
    r: f64,
}

pub(crate) struct GenSlots<L: Lanes> {
    q: L,
    r: L,
    /// Parents whose `t` lies within `2^±200`.
    tame: L::M,
}

/// One vector's `log psi` and where the fast path computed it (the exact value is the
/// model's there).
#[derive(Clone, Copy)]
pub(crate) struct GenPsi<L: Lanes> {
    lp: L,
    lp_up: L,
    fast: u8,
    a: u64,
    g: u64,
    v: usize,
}

impl<L: Lanes> LanePsi<L> for GenPsi<L> {
    #[inline(always)]
    fn lp(&self) -> L {
        self.lp
    }
    #[inline(always)]
    fn lp_up(&self) -> L {
        self.lp_up
    }
}

/// The upper bound's margin, relative to the magnitudes summed (see [`Energy::log_psi`]).
const MARGIN: f64 = 1.0 / 549_755_813_888.0; // 2^-39

/// `2^-400`: the least `τA τB` and `K` of the fast path.
const TINY: f64 = f64::from_bits((1023 - 400) << 52);
/// The parents' `t` of the fast path: `2^-200` to `2^200`.
const TAME_LO: f64 = f64::from_bits((1023 - 200) << 52);
const TAME_HI: f64 = f64::from_bits((1023 + 200) << 52);

/// How far from `U_MAX` a product `tA (1 / tP)` decides the model's test `tA / tP < U_MAX`.
const BAND: f64 = 1.0 / 281_474_976_710_656.0; // 2^-48

impl Energy for GeneratorLanes<'_> {
    type Stat = GenStat;
    type Consts = GenConsts;
    type Slots<L: Lanes> = GenSlots<L>;
    type Psi<L: Lanes> = GenPsi<L>;
    const AHEAD: bool = true;

    fn n_leaves(&self) -> usize {
        self.model.n_leaves()
    }

    fn block_stat(&self, b: usize) -> GenStat {
        let c = &self.stats[8 * b..8 * b + 8];
        GenStat {
            t: std::array::from_fn(|l| {
                if c[l].impossible_leaf {
                    f64::NAN
                } else {
                    c[l].t
                }
            }),
            q: std::array::from_fn(|l| c[l].sqrt_t),
        }
    }

    fn consts(&self, i: u64) -> Option<GenConsts> {
        let p = &self.stats[i as usize];
        // The model's first test: every split of such a parent is forbidden.
        if p.t.is_nan() || p.t <= self.model.t_cut() {
            return None;
        }
        Some(GenConsts {
            t: p.t,
            q: p.sqrt_t,
            r: 1.0 / p.t,
        })
    }

    #[inline(always)]
    fn slots<L: Lanes>(c: &[Option<GenConsts>; 8]) -> GenSlots<L> {
        let (mut q, mut r, mut tame) = ([1.0f64; 8], [1.0f64; 8], 0u8);
        for (l, x) in c.iter().enumerate() {
            if let Some(x) = x {
                (q[l], r[l]) = (x.q, x.r);
                if (TAME_LO..=TAME_HI).contains(&x.t) {
                    tame |= 1 << l;
                }
            }
        }
        GenSlots {
            q: L::load(&q),
            r: L::load(&r),
            tame: L::mask(tame),
        }
    }

    #[inline]
    fn log_psi_scalar(&self, a: u64, b: u64) -> f64 {
        let s = &self.stats;
        self.model.log_psi_with(
            Subset(a),
            &s[a as usize],
            Subset(b),
            &s[b as usize],
            &s[(a | b) as usize],
        )
    }

    /// The model's operations up to the choice of the leading order and `K` (the same bits, so
    /// the same forbidden splits), then the fast value. Its distance to the model's: the two
    /// exponentials differ by at most `1.3e-15` relative (the lanes' and libm's), the fast
    /// logarithms by `1e-15 (1 + |ln x|)` from exact ones, libm's `ln(sum / sqrt K)` by its
    /// roundings (under `4e-16 (1 + |ln|)`), and each of the two sums rounds by an ulp of its
    /// operands: below `5e-15 (1 + |ln sum| + |ln K|) + 2^-52 |lp|`, far under the margin
    /// `2^-40 (1 + |head| + |ln sum| + |ln K| + |lp|)`.
    #[inline(always)]
    fn log_psi<L: Lanes>(
        st: &Step<'_, Self, L>,
        f: &impl Fetch<L>,
        a: u64,
        ba: &GenStat,
        bb: &GenStat,
        live: L::M,
    ) -> GenPsi<L> {
        let k = st.k;
        let c = &st.c.c;
        let zero = L::splat(0.0);
        // An impossible leaf's `t` is NaN here: no order of its splits is in support.
        let (ta, tb) = (f.a(&ba.t), f.b(&bb.t));
        let (qa, qb) = (f.a(&ba.q), f.b(&bb.q));
        let q = c.q;
        let (da, db) = (q.sub(qa), q.sub(qb));
        let (tau_b, tau_a) = (da.mul(da), db.mul(db));
        // `tA / tP` as a product with the parent's reciprocal: the support test decided by it
        // is the model's except within a few ulps of `U_MAX`, where the model decides.
        let (ua, ub) = (ta.mul(c.r), tb.mul(c.r));
        let umax = L::splat(U_MAX);
        let band = L::splat(BAND);
        let unsure = L::or(band.ge(ua.sub(umax).abs()), band.ge(ub.sub(umax).abs()));
        let a_first = L::and(ua.lt(umax), tb.lt(umax.mul(tau_b)));
        let b_first = L::and(ub.lt(umax), ta.lt(umax.mul(tau_a)));
        // K as the model factorises it (the same bits: its sign decides a forbidden split).
        let s = q.add(qa);
        let kk = da.sub(qb).mul(s.add(qb)).mul(da.add(qb)).mul(s.sub(qb));
        // One division: `1 / (τA τB K)` gives both reciprocals of `τ` and `1 / K`.
        let pt = tau_a.mul(tau_b);
        let rr = L::splat(1.0).div(pt.mul(kk));
        let rt = rr.mul(kk);
        let inv_k = rr.mul(pt);
        let (inv_b, inv_a) = (tau_a.mul(rt), tau_b.mul(rt));
        let x_a = tb.fma(inv_b, ua);
        let x_b = ta.fma(inv_a, ub);
        let both = L::and(a_first, b_first);
        // The order whose `x` is the smaller one in support.
        let pick_a = L::or(L::and(both, x_b.ge(x_a)), L::andnot(a_first, b_first));
        let m = L::select(pick_a, x_a, x_b);
        let other = L::select(pick_a, x_b, x_a);
        let inv_first = L::select(pick_a, inv_b, inv_a);
        let inv_other = L::select(pick_a, inv_a, inv_b);
        let arg = L::splat(-k.model.lambda()).mul(other.sub(m));
        let second = L::select(both, arg.exp_in_range(), zero);
        let sum = second.fma(inv_other, inv_first);
        let allowed = L::and(L::and(live, L::or(a_first, b_first)), kk.gt(zero));
        // log(sum / sqrt K) = ln(sum^2 / K) / 2.
        let ly = sum.mul(sum).mul(inv_k).ln_fast();
        let head = L::splat(k.model_constant()).sub(L::splat(k.model.lambda()).mul(m));
        let lp = L::splat(0.5).fma(ly, head);
        // Magnitudes that keep every product above a normal number (the parent's `t` within
        // `2^±200`, so every `τ` below `2^200`; see the module's text); the bound on `ln y`
        // keeps `y` normal (a fast logarithm of anything else is beyond it); the exponential's
        // range matters only where both orders are in support.
        let tiny = L::splat(TINY);
        let exp_ok = L::or(L::andnot(L::mask(0xff), both), arg.ge(L::splat(-700.0)));
        let in_range = L::and(
            L::and(L::and(pt.ge(tiny), kk.ge(tiny)), c.tame),
            L::and(ly.abs().lt(L::splat(700.0)), exp_ok),
        );
        let fast = L::andnot(L::and(allowed, in_range), unsure);
        let ninf = L::splat(f64::NEG_INFINITY);
        let margin = L::splat(1.0)
            .add(head.abs())
            .add(ly.abs())
            .mul(L::splat(MARGIN));
        let mut lp = L::select(fast, lp, ninf);
        let mut lp_up = L::select(fast, lp.add(margin), ninf);
        // Lanes the fast path does not decide: the model's value.
        let slow = L::bits(L::andnot(L::and(live, L::or(allowed, unsure)), fast));
        if slow != 0 {
            let exact = scalar_lanes(k, st.g, st.v, a, slow, lp);
            let slow_m = L::mask(slow);
            lp = L::select(slow_m, exact, lp);
            lp_up = L::select(slow_m, exact, lp_up);
        }
        GenPsi {
            lp,
            lp_up,
            fast: L::bits(fast),
            a,
            g: st.g,
            v: st.v,
        }
    }

    #[inline(always)]
    fn exact<L: Lanes>(&self, psi: &GenPsi<L>, need: L::M) -> L {
        let lanes = psi.fast & L::bits(need);
        if lanes == 0 {
            return psi.lp;
        }
        scalar_lanes(self, psi.g, psi.v, psi.a, lanes, psi.lp)
    }
}

impl GeneratorLanes<'_> {
    fn model_constant(&self) -> f64 {
        self.model.constant()
    }
}
