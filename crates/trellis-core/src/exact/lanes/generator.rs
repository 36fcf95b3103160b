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
}

/// Eight subsets' `t`, `sqrt t` and whether each is an impossible leaf (1) or not (0).
#[derive(Clone, Copy, Debug)]
pub(crate) struct GenStat {
    t: [f64; 8],
    q: [f64; 8],
    bad: [f64; 8],
}

/// A parent's `t` and `sqrt t`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GenConsts {
    t: f64,
    q: f64,
}

pub(crate) struct GenSlots<L> {
    t: L,
    q: L,
}

/// One vector's `log psi` and where the fast path computed it (the exact value is the
/// model's there).
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
const MARGIN: f64 = 1.0 / 1_099_511_627_776.0; // 2^-40

impl Energy for GeneratorLanes<'_> {
    type Stat = GenStat;
    type Consts = GenConsts;
    type Slots<L: Lanes> = GenSlots<L>;
    type Psi<L: Lanes> = GenPsi<L>;

    fn n_leaves(&self) -> usize {
        self.model.n_leaves()
    }

    fn block_stat(&self, b: usize) -> GenStat {
        let c = &self.stats[8 * b..8 * b + 8];
        GenStat {
            t: std::array::from_fn(|l| c[l].t),
            q: std::array::from_fn(|l| c[l].sqrt_t),
            bad: std::array::from_fn(|l| f64::from(u8::from(c[l].impossible_leaf))),
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
        })
    }

    #[inline(always)]
    fn slots<L: Lanes>(c: &[Option<GenConsts>; 8]) -> GenSlots<L> {
        let (mut t, mut q) = ([1.0f64; 8], [1.0f64; 8]);
        for (l, x) in c.iter().enumerate() {
            if let Some(x) = x {
                (t[l], q[l]) = (x.t, x.q);
            }
        }
        GenSlots {
            t: L::load(&t),
            q: L::load(&q),
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
        let (ta, tb) = (f.a(&ba.t), f.b(&bb.t));
        let (qa, qb) = (f.a(&ba.q), f.b(&bb.q));
        let bad = L::or(f.a(&ba.bad).gt(zero), f.b(&bb.bad).gt(zero));
        let (q, tp) = (c.q, c.t);
        let (da, db) = (q.sub(qa), q.sub(qb));
        let (tau_b, tau_a) = (da.mul(da), db.mul(db));
        let (ua, ub) = (ta.div(tp), tb.div(tp));
        let umax = L::splat(U_MAX);
        let a_first = L::and(ua.lt(umax), tb.lt(umax.mul(tau_b)));
        let b_first = L::and(ub.lt(umax), ta.lt(umax.mul(tau_a)));
        let x_a = ua.add(tb.div(tau_b));
        let x_b = ub.add(ta.div(tau_a));
        let both = L::and(a_first, b_first);
        // The order whose `x` is the smaller one in support ("A first" on a tie).
        let pick_a = L::or(L::and(both, x_b.ge(x_a)), L::andnot(a_first, b_first));
        let m = L::select(pick_a, x_a, x_b);
        let other = L::select(pick_a, x_b, x_a);
        let tau_first = L::select(pick_a, tau_b, tau_a);
        let tau_other = L::select(pick_a, tau_a, tau_b);
        let arg = L::splat(-k.model.lambda()).mul(other.sub(m));
        let second = L::select(both, arg.exp().div(tau_other), zero);
        let sum = L::splat(1.0).div(tau_first).add(second);
        let kk = q
            .sub(qa)
            .sub(qb)
            .mul(q.add(qa).add(qb))
            .mul(q.sub(qa).add(qb))
            .mul(q.add(qa).sub(qb));
        let allowed = L::and(
            L::and(live, L::andnot(L::or(a_first, b_first), bad)),
            kk.gt(zero),
        );
        let (ls, lk) = (sum.ln_fast(), kk.ln_fast());
        let head = L::splat(k.model_constant()).sub(L::splat(k.model.lambda()).mul(m));
        let tail = ls.sub(L::splat(0.5).mul(lk));
        let lp = head.add(tail);
        let normal = |x: L| {
            L::and(
                x.ge(L::splat(f64::MIN_POSITIVE)),
                x.lt(L::splat(f64::INFINITY)),
            )
        };
        // The exponential's range matters only where both orders are in support.
        let exp_ok = L::or(L::andnot(L::mask(0xff), both), arg.ge(L::splat(-700.0)));
        let in_range = L::and(
            L::and(normal(sum), normal(kk)),
            L::and(tail.abs().lt(L::splat(700.0)), exp_ok),
        );
        let fast = L::and(allowed, in_range);
        let ninf = L::splat(f64::NEG_INFINITY);
        let margin = L::splat(1.0)
            .add(head.abs())
            .add(ls.abs())
            .add(lk.abs())
            .add(lp.abs())
            .mul(L::splat(MARGIN));
        let mut lp = L::select(fast, lp, ninf);
        let mut lp_up = L::select(fast, lp.add(margin), ninf);
        let slow = L::bits(L::andnot(allowed, fast));
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
