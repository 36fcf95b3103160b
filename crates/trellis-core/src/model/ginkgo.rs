//! The Ginkgo toy-jet likelihood, in the form the Cluster Trellis paper's experiments used
//! (the "paper-era psi" of the authors' released code; `data/ginkgo_jets/README.md`).
//!
//! For sibling clusters `A`, `B` with summed four-vectors `pA`, `pB`, and `t(X)` the squared mass
//! of `X`'s summed four-vector (0 for a single leaf):
//! - `tp1 = m2(pA + pB)`; a split with `tp1 < t_cut` is forbidden (`log psi = -inf`);
//! - `tmax`, `tmin` the larger and smaller of `t(A)`, `t(B)`; `tp2 = (sqrt(tp1) - sqrt(tmax))^2`;
//! - `g(tP, t) = -log(1 - e^-λ) + [log λ - log tP - λ t / tP]` if `t > 0`, else
//!   `-log(1 - e^-λ) + log(1 - exp(-λ t_cut / tP))` (the probability that a leaf did not split);
//! - `log psi(A, B) = g(tp1, tmax) + g(tp2, tmin) - log(4π)`.
//!
//! This differs from the paper's Eq. 5-6 (which conditions both children on `t_P` with a density
//! each); the form above is what produced the paper's numbers and the reference values in
//! `data/ginkgo_jets/`.

use super::error::{check_table_size, ModelError};
use super::{log1mexp, Siblings, SplitModel};
use crate::subset::Subset;

/// A four-vector `(E, px, py, pz)`.
pub type FourVector = [f64; 4];

/// Squared mass `E^2 - |p|^2`.
#[inline]
pub fn mass2(p: &FourVector) -> f64 {
    p[0] * p[0] - p[1] * p[1] - p[2] * p[2] - p[3] * p[3]
}

/// The paper-era Ginkgo likelihood over the leaves of one jet.
#[derive(Clone, Debug)]
pub struct GinkgoModel {
    leaves: Vec<FourVector>,
    t_cut: f64,
    rates: [Rate; 2],
}

/// Constants of one decay rate (index 0: below the root, 1: the root split).
#[derive(Clone, Copy, Debug)]
struct Rate {
    lambda: f64,
    log_lambda: f64,
    /// `2 (-log(1 - e^-λ)) - log 4π`: the constant part of every split.
    constant: f64,
}

impl Rate {
    fn new(lambda: f64) -> Rate {
        Rate {
            lambda,
            log_lambda: lambda.ln(),
            constant: -2.0 * log1mexp(lambda) - LOG_4PI,
        }
    }
}

/// Per-cluster statistics of [`GinkgoModel`].
#[derive(Clone, Copy, Debug, Default)]
pub struct GinkgoStat {
    /// `t(X)`: squared mass of the summed four-vector, or 0 for a single leaf.
    pub t: f64,
    /// `sqrt(t)` (0 when `t <= 0`).
    pub sqrt_t: f64,
    /// `log t` (used when this cluster is a parent).
    pub log_t: f64,
}

impl GinkgoModel {
    /// A model for one jet: leaf four-vectors, the cut `t_cut` on squared mass, and the rate
    /// `lambda` (the same for every split; see [`GinkgoModel::with_root_rate`]).
    ///
    /// Errors for more than 64 leaves, a leaf with a NaN or infinite component, and a `t_cut` or
    /// `lambda` that is not a positive finite number.
    pub fn new(
        leaves: Vec<FourVector>,
        t_cut: f64,
        lambda: f64,
    ) -> Result<GinkgoModel, ModelError> {
        if leaves.len() > Subset::MAX_LEAVES {
            return Err(ModelError::TooManyLeaves { n: leaves.len() });
        }
        for (i, p) in leaves.iter().enumerate() {
            if let Some(&value) = p.iter().find(|x| !x.is_finite()) {
                return Err(ModelError::NonFiniteLeaf { i, value });
            }
        }
        let t_cut = positive("t_cut", t_cut, 16.0)?;
        let lambda = positive("lambda", lambda, 1.5)?;
        Ok(GinkgoModel {
            leaves,
            t_cut,
            rates: [Rate::new(lambda), Rate::new(lambda)],
        })
    }

    /// Uses rate `lambda_root` for the split of the whole jet (the reference used one rate for all
    /// splits; QCD jets have `lambda_root = lambda` anyway). Errors unless `lambda_root` is a
    /// positive finite number.
    pub fn with_root_rate(mut self, lambda_root: f64) -> Result<GinkgoModel, ModelError> {
        self.rates[1] = Rate::new(positive("lambda_root", lambda_root, 1.5)?);
        Ok(self)
    }

    /// The leaf four-vectors.
    pub fn leaves(&self) -> &[FourVector] {
        &self.leaves
    }

    /// The cut on squared mass.
    pub fn t_cut(&self) -> f64 {
        self.t_cut
    }

    /// The decay rate of every split below the whole jet's.
    pub fn lambda(&self) -> f64 {
        self.rates[0].lambda
    }

    /// The decay rate of the whole jet's split (equal to [`GinkgoModel::lambda`] unless set with
    /// [`GinkgoModel::with_root_rate`]).
    pub fn lambda_root(&self) -> f64 {
        self.rates[1].lambda
    }

    /// The summed four-vector of cluster `s` (leaves of `s` outside the jet are left out).
    pub fn four_vector(&self, s: Subset) -> FourVector {
        leaf_sum(&self.leaves, s)
    }

    #[inline]
    fn stat_from(&self, p: &FourVector, singleton: bool) -> GinkgoStat {
        let t = if singleton { 0.0 } else { mass2(p) };
        let positive = t > 0.0;
        GinkgoStat {
            t,
            sqrt_t: if positive { t.sqrt() } else { 0.0 },
            log_t: if positive { t.ln() } else { f64::NEG_INFINITY },
        }
    }

    /// `log psi` from the statistics of the two children and the parent, as
    /// `head + (tail - ln(arg))`, so that many splits' logarithms can be taken at once
    /// ([`crate::numeric::ln_slice`]). `log tp1` is precomputed in the parent's statistics, so a
    /// split needs one `ln` (or, next to a single leaf, none: `arg = 1`, whose `ln` is 0 exactly).
    #[inline(always)]
    fn split_parts(
        &self,
        a: &GinkgoStat,
        b: &GinkgoStat,
        p: &GinkgoStat,
        root: bool,
    ) -> (f64, f64, f64) {
        const FORBIDDEN: (f64, f64, f64) = (f64::NEG_INFINITY, 0.0, 1.0);
        let tp1 = p.t;
        if tp1.is_nan() || tp1 < self.t_cut {
            return FORBIDDEN; // forbidden split (or NaN mass)
        }
        let r = if root { &self.rates[1] } else { &self.rates[0] };
        let (hi, lo) = if a.t >= b.t { (a, b) } else { (b, a) };
        // g(tp1, tmax): a density if the larger child is a cluster; if it is a leaf, both are,
        // and g is the probability that a leaf did not split.
        // `λ / tp1` depends on the parent only: written this way the compiler hoists it out of a
        // loop over one parent's splits (one division per split instead of two).
        let g1 = if hi.t > 0.0 {
            r.log_lambda - p.log_t - hi.t * (r.lambda / tp1)
        } else {
            log1mexp(r.lambda * self.t_cut / tp1)
        };
        let head = r.constant + g1;
        // g(tp2, tmin) = tail - ln(arg).
        let d = p.sqrt_t - hi.sqrt_t;
        let tp2 = d * d;
        if lo.t > 0.0 {
            if tp2.is_nan() || tp2 <= 0.0 || tp2 == f64::INFINITY {
                // ln would give +inf (the density is 0) or NaN: forbidden, as with libm.
                FORBIDDEN
            } else if tp2 < f64::MIN_POSITIVE {
                // Subnormal: outside the fast `ln`'s domain.
                (head, r.log_lambda - r.lambda * lo.t / tp2 - tp2.ln(), 1.0)
            } else {
                (head, r.log_lambda - r.lambda * lo.t / tp2, tp2)
            }
        } else {
            (head, log1mexp(r.lambda * self.t_cut / tp2), 1.0)
        }
    }

    /// `log psi` of one split (the same value, bit for bit, as the vectorised
    /// [`SplitModel::log_psi_siblings`] and [`SplitModel::log_psi_batch`]).
    #[inline(always)]
    pub(crate) fn split_kernel(
        &self,
        a: &GinkgoStat,
        b: &GinkgoStat,
        p: &GinkgoStat,
        root: bool,
    ) -> f64 {
        let (head, tail, arg) = self.split_parts(a, b, p, root);
        head + (tail - crate::numeric::ln(arg))
    }

    /// The constants of `log psi` shared by every split of a parent with statistics `p` (`root`:
    /// the parent is the whole jet), as the vectorised full trellis uses them; `None` when every
    /// split of it is forbidden (`t(P)` below the cut or NaN).
    pub(crate) fn parent_consts(&self, p: &GinkgoStat, root: bool) -> Option<ParentConsts> {
        if p.t.is_nan() || p.t < self.t_cut {
            return None;
        }
        let r = if root { &self.rates[1] } else { &self.rates[0] };
        // Grouped as `split_parts` and `siblings_avx2` group them.
        Some(ParentConsts {
            c_head: r.log_lambda - p.log_t,
            lam_tp1: r.lambda / p.t,
            constant: r.constant,
            log_lambda: r.log_lambda,
            lambda: r.lambda,
            sqrt_p: p.sqrt_t,
            lam_tcut: r.lambda * self.t_cut,
        })
    }

    /// `out[k] = log psi` of split `k`, with the `ln` of a block of splits taken at once.
    #[inline]
    fn split_block(
        &self,
        n: usize,
        mut parts: impl FnMut(usize) -> (f64, f64, f64),
        out: &mut [f64],
    ) {
        const BLOCK: usize = 64;
        let (mut head, mut tail, mut arg, mut ln) =
            ([0.0; BLOCK], [0.0; BLOCK], [0.0; BLOCK], [0.0; BLOCK]);
        let mut start = 0;
        while start < n {
            let len = BLOCK.min(n - start);
            for j in 0..len {
                (head[j], tail[j], arg[j]) = parts(start + j);
            }
            crate::numeric::ln_slice(&arg[..len], &mut ln[..len]);
            for j in 0..len {
                out[start + j] = head[j] + (tail[j] - ln[j]);
            }
            start += len;
        }
    }
}

/// What [`GinkgoModel::parent_consts`] gives: for the splits of one allowed parent,
/// `log psi = (constant + (c_head - t_hi lam_tp1)) + ((log_lambda - lambda t_lo / tp2) - ln tp2)`
/// with `tp2 = (sqrt_p - sqrt(t_hi))^2`, where both children are clusters and `tp2` is a normal
/// finite number (the other cases go through [`GinkgoModel::split_kernel`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ParentConsts {
    pub(crate) c_head: f64,
    pub(crate) lam_tp1: f64,
    pub(crate) constant: f64,
    pub(crate) log_lambda: f64,
    pub(crate) lambda: f64,
    pub(crate) sqrt_p: f64,
    /// `lambda * t_cut`: a leaf child's probability of not splitting is
    /// `log1mexp(lam_tcut / tp2)`.
    pub(crate) lam_tcut: f64,
}

/// The summed four-vector of the leaves of `s` (leaves outside `leaves` left out), in increasing
/// leaf order.
pub(crate) fn leaf_sum(leaves: &[FourVector], s: Subset) -> FourVector {
    let mut p = [0.0; 4];
    for leaf in s.iter().map_while(|i| leaves.get(i)) {
        for (x, y) in p.iter_mut().zip(leaf) {
            *x += y;
        }
    }
    p
}

/// `stat(leaf_sum(leaves, s), s is a single leaf)` for every subset `s`, indexed by bitmask, with
/// the same bits as [`leaf_sum`] (adding the highest leaf last sums in increasing leaf order).
/// Errors ([`ModelError::TableTooLarge`]) for too many leaves.
pub(crate) fn subset_table<S: Clone + Default>(
    leaves: &[FourVector],
    stat: impl Fn(&FourVector, bool) -> S,
) -> Result<Vec<S>, ModelError> {
    let n = leaves.len();
    check_table_size(n)?;
    // 2^24 subsets take about a second: the table stops when its computation is cancelled.
    let cancel = crate::cancel::Cancel::new();
    // Zeroed memory comes untouched from the system; the table is written (its pages first
    // touched) as it is filled, between the checks.
    let mut p = vec![[0.0; 4]; 1usize << n];
    let mut table = Vec::with_capacity(1usize << n);
    table.push(S::default());
    for b in 1u64..(1u64 << n) {
        if b.is_multiple_of(1 << 16) && cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        let high = 63 - b.leading_zeros() as usize;
        let rest = b & !(1u64 << high);
        let mut q = p[rest as usize];
        for (x, y) in q.iter_mut().zip(&leaves[high]) {
            *x += y;
        }
        p[b as usize] = q;
        table.push(stat(&q, rest == 0));
    }
    Ok(table)
}

const LOG_4PI: f64 = 2.531_024_246_969_290_7; // ln(4π)

/// `Ok(v)` when `v` is a positive finite number, else [`ModelError::BadParameter`].
fn positive(name: &'static str, value: f64, typical: f64) -> Result<f64, ModelError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(ModelError::BadParameter {
            name,
            value,
            typical,
        })
    }
}

impl SplitModel for GinkgoModel {
    type Stat = GinkgoStat;

    fn as_ginkgo(&self) -> Option<&GinkgoModel> {
        Some(self)
    }

    fn lane_model(&self) -> Option<super::LaneModel<'_>> {
        Some(super::LaneModel::Ginkgo(self))
    }

    fn n_leaves(&self) -> usize {
        self.leaves.len()
    }

    fn stat(&self, s: Subset) -> GinkgoStat {
        self.stat_from(&self.four_vector(s), s.is_singleton())
    }

    fn stat_table(&self) -> Result<Vec<GinkgoStat>, ModelError> {
        subset_table(&self.leaves, |p, singleton| self.stat_from(p, singleton))
    }

    #[inline]
    fn log_psi_with(
        &self,
        a: Subset,
        sa: &GinkgoStat,
        b: Subset,
        sb: &GinkgoStat,
        parent: &GinkgoStat,
    ) -> f64 {
        let root = a.union(b) == Subset::full(self.leaves.len());
        self.split_kernel(sa, sb, parent, root)
    }

    fn log_psi_batch(&self, stats: &[GinkgoStat], a: &[u64], b: &[u64], out: &mut [f64]) {
        let full = Subset::full(self.leaves.len()).bits();
        let n = out.len().min(a.len()).min(b.len());
        self.split_block(
            n,
            |k| {
                let (x, y) = (a[k], b[k]);
                let (sx, sy, sp) = (
                    &stats[x as usize],
                    &stats[y as usize],
                    &stats[(x | y) as usize],
                );
                self.split_parts(sx, sy, sp, x | y == full)
            },
            out,
        );
    }

    /// `c + g1 + (-1 - log t_lo)`: `split_parts`' head as it is (one multiplication), and in
    /// place of the smaller child's `g(tp2, t_lo) = log λ - log tp2 - λ t_lo / tp2` its maximum
    /// over `tp2 > 0`, reached at `tp2 = λ t_lo`: with `x = λ t_lo / tp2`,
    /// `g = -1 - log t_lo - (x - 1 - log x) <= -1 - log t_lo`. A leaf's factor (the probability
    /// of not splitting, `log1mexp(·)`) is at most 0. The branches are `split_parts`' own, so
    /// the bound holds for any statistics, NaN included.
    #[inline(always)]
    fn log_psi_upper<'a>(
        &'a self,
        parent: Subset,
        p: &'a GinkgoStat,
    ) -> impl Fn(&GinkgoStat, &GinkgoStat) -> f64 + 'a {
        let forbidden = p.t.is_nan() || p.t < self.t_cut;
        let root = parent == Subset::full(self.leaves.len());
        let r = if root { &self.rates[1] } else { &self.rates[0] };
        // `split_parts`' grouping: g1 = (log λ - log tp1) - t_hi (λ / tp1).
        // A forbidden parent (t(P) below the cut or NaN): every split is -inf.
        let (constant, c_head, lam_tp1) = if forbidden {
            (f64::NEG_INFINITY, 0.0, 0.0)
        } else {
            (r.constant, r.log_lambda - p.log_t, r.lambda / p.t)
        };
        move |a: &GinkgoStat, b: &GinkgoStat| {
            let (hi, lo) = if a.t >= b.t { (a, b) } else { (b, a) };
            let g1 = if hi.t > 0.0 {
                c_head - hi.t * lam_tp1
            } else {
                0.0
            };
            let g2 = if lo.t > 0.0 { -1.0 - lo.log_t } else { 0.0 };
            constant + g1 + g2
        }
    }

    fn log_psi_siblings(
        &self,
        parent: &GinkgoStat,
        splits: &[Siblings<'_, GinkgoStat>],
        out: &mut [f64],
    ) {
        let Some(first) = splits.first() else {
            return;
        };
        let root = first.a.union(first.b) == Subset::full(self.leaves.len());
        let n = out.len().min(splits.len());
        if parent.t.is_nan() || parent.t < self.t_cut {
            // Every split of this parent is forbidden (`split_parts`' first test).
            out[..n].fill(f64::NEG_INFINITY);
            return;
        }
        #[cfg(target_arch = "x86_64")]
        {
            if crate::simd::avx2_allowed() {
                // SAFETY: the CPU supports AVX2, the only feature the function is compiled for.
                unsafe { self.siblings_avx2(parent, &splits[..n], &mut out[..n], root) };
                return;
            }
        }
        self.split_block(
            n,
            |k| self.split_parts(splits[k].sa, splits[k].sb, parent, root),
            out,
        );
    }
}

impl GinkgoModel {
    /// [`SplitModel::log_psi_siblings`] four splits at a time, without branches: the common case
    /// (both children clusters, a normal finite `tp2`) performs exactly [`GinkgoModel::split_parts`]'
    /// operations in the same order, followed by [`crate::numeric::ln`]'s (hence the same bits);
    /// lanes outside it (a leaf child, a degenerate `tp2`) are redone by the scalar kernel. The
    /// parent must be allowed (`t(P) >= t_cut`).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn siblings_avx2(
        &self,
        p: &GinkgoStat,
        splits: &[Siblings<'_, GinkgoStat>],
        out: &mut [f64],
        root: bool,
    ) {
        use std::arch::x86_64::*;
        let n = splits.len().min(out.len());
        let r = if root { &self.rates[1] } else { &self.rates[0] };
        let set = _mm256_set1_pd;
        // g1 = (log λ - log tp1) - t_hi (λ / tp1), as `split_parts` groups it.
        let c_head = set(r.log_lambda - p.log_t);
        let lam_tp1 = set(r.lambda / p.t);
        let (constant, log_lambda, lambda) = (set(r.constant), set(r.log_lambda), set(r.lambda));
        let sqrt_p = set(p.sqrt_t);
        let (zero, min_normal, inf) = (set(0.0), set(f64::MIN_POSITIVE), set(f64::INFINITY));
        let whole = n / 4 * 4;
        let mut k = 0;
        while k < whole {
            let s = &splits[k..k + 4];
            let ta = _mm256_set_pd(s[3].sa.t, s[2].sa.t, s[1].sa.t, s[0].sa.t);
            let tb = _mm256_set_pd(s[3].sb.t, s[2].sb.t, s[1].sb.t, s[0].sb.t);
            let qa = _mm256_set_pd(
                s[3].sa.sqrt_t,
                s[2].sa.sqrt_t,
                s[1].sa.sqrt_t,
                s[0].sa.sqrt_t,
            );
            let qb = _mm256_set_pd(
                s[3].sb.sqrt_t,
                s[2].sb.sqrt_t,
                s[1].sb.sqrt_t,
                s[0].sb.sqrt_t,
            );
            // hi = a where a.t >= b.t (false for NaN), else b.
            let a_hi = _mm256_cmp_pd::<_CMP_GE_OQ>(ta, tb);
            let t_hi = _mm256_blendv_pd(tb, ta, a_hi);
            let q_hi = _mm256_blendv_pd(qb, qa, a_hi);
            let t_lo = _mm256_blendv_pd(ta, tb, a_hi);
            let g1 = _mm256_sub_pd(c_head, _mm256_mul_pd(t_hi, lam_tp1));
            let head = _mm256_add_pd(constant, g1);
            let d = _mm256_sub_pd(sqrt_p, q_hi);
            let tp2 = _mm256_mul_pd(d, d);
            let tail = _mm256_sub_pd(log_lambda, _mm256_div_pd(_mm256_mul_pd(lambda, t_lo), tp2));
            let lp = _mm256_add_pd(head, _mm256_sub_pd(tail, crate::numeric::ln4(tp2)));
            // The common case: t_lo > 0, t_hi > 0 (not implied when a mass is NaN) and
            // MIN_POSITIVE <= tp2 < inf.
            let ok = _mm256_and_pd(
                _mm256_and_pd(
                    _mm256_cmp_pd::<_CMP_GT_OQ>(t_lo, zero),
                    _mm256_cmp_pd::<_CMP_GT_OQ>(t_hi, zero),
                ),
                _mm256_and_pd(
                    _mm256_cmp_pd::<_CMP_GE_OQ>(tp2, min_normal),
                    _mm256_cmp_pd::<_CMP_LT_OQ>(tp2, inf),
                ),
            );
            // SAFETY: k + 4 <= n <= out.len().
            unsafe { _mm256_storeu_pd(out.as_mut_ptr().add(k), lp) };
            let ok = _mm256_movemask_pd(ok);
            if ok != 0b1111 {
                for l in 0..4 {
                    if ok & (1 << l) == 0 {
                        out[k + l] = self.split_kernel(s[l].sa, s[l].sb, p, root);
                    }
                }
            }
            k += 4;
        }
        for j in whole..n {
            out[j] = self.split_kernel(splits[j].sa, splits[j].sb, p, root);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_4pi_constant() {
        assert!((LOG_4PI - (4.0 * std::f64::consts::PI).ln()).abs() < 1e-15);
    }

    #[test]
    fn stat_table_matches_direct_sums() {
        let leaves = vec![
            [10.0, 1.0, 2.0, 3.0],
            [20.0, -1.0, 0.5, 4.0],
            [7.0, 0.0, 0.0, 6.0],
            [30.0, 5.0, 5.0, 5.0],
        ];
        let m = GinkgoModel::new(leaves, 16.0, 1.5).unwrap();
        let table = m.stat_table().unwrap();
        for b in 1..16u64 {
            let d = m.stat(Subset(b));
            assert_eq!(table[b as usize].t.to_bits(), d.t.to_bits());
        }
        assert_eq!(table[1].t, 0.0, "single leaves have t = 0");
    }

    /// The spec's formula, written plainly with libm, against the vectorisable kernel.
    fn reference_log_psi(m: &GinkgoModel, a: Subset, b: Subset, lam: f64) -> f64 {
        let t = |s: Subset| {
            if s.is_singleton() {
                0.0
            } else {
                mass2(&m.four_vector(s))
            }
        };
        let tp1 = mass2(&m.four_vector(a.union(b)));
        if tp1 < m.t_cut {
            return f64::NEG_INFINITY;
        }
        let (tmax, tmin) = (t(a).max(t(b)), t(a).min(t(b)));
        let tp2 = (tp1.sqrt() - tmax.sqrt()).powi(2);
        let g = |tp: f64, t: f64| {
            -(1.0 - (-lam).exp()).ln()
                + if t > 0.0 {
                    lam.ln() - tp.ln() - lam * t / tp
                } else {
                    (1.0 - (-lam * m.t_cut / tp).exp()).ln()
                }
        };
        g(tp1, tmax) + g(tp2, tmin) + (1.0 / (4.0 * std::f64::consts::PI)).ln()
    }

    #[test]
    fn kernel_matches_the_plain_formula() {
        let ds = crate::data::ginkgo::generate_dataset(
            &crate::data::ginkgo::GinkgoParams::qcd(),
            5,
            6,
            9,
            3,
            10_000,
            "k",
        )
        .unwrap();
        for jet in &ds.jets {
            let m = jet.model().unwrap();
            let stats = m.stat_table().unwrap();
            let full = Subset::full(m.n_leaves());
            let mut a = Vec::new();
            let mut b = Vec::new();
            for s in 1..=full.bits() {
                for (x, y) in Subset(s).splits() {
                    a.push(x.bits());
                    b.push(y.bits());
                }
            }
            let mut out = vec![0.0; a.len()];
            m.log_psi_batch(&stats, &a, &b, &mut out);
            let mut finite = 0;
            for k in 0..a.len() {
                let want = reference_log_psi(&m, Subset(a[k]), Subset(b[k]), 1.5);
                let got = out[k];
                assert!(
                    got == want || (got - want).abs() < 1e-11 * want.abs().max(1.0),
                    "{:?} {:?}: {got} vs {want}",
                    Subset(a[k]),
                    Subset(b[k])
                );
                finite += want.is_finite() as usize;
                assert_eq!(got, m.log_psi(Subset(a[k]), Subset(b[k])));
            }
            assert!(finite > 0);
            // The per-parent vectorised path gives the same bits as the scalar kernel.
            for s in 1..=full.bits() {
                let p = Subset(s);
                let sibs: Vec<Siblings<'_, GinkgoStat>> = p
                    .splits()
                    .map(|(x, y)| Siblings {
                        a: x,
                        sa: &stats[x.index()],
                        b: y,
                        sb: &stats[y.index()],
                    })
                    .collect();
                let mut got = vec![0.0; sibs.len()];
                m.log_psi_siblings(&stats[p.index()], &sibs, &mut got);
                for (x, g) in sibs.iter().zip(&got) {
                    assert_eq!(g.to_bits(), m.log_psi(x.a, x.b).to_bits());
                }
            }
        }
    }

    /// The four-lane kernel against the scalar one on hand-made statistics that reach every
    /// branch of `split_parts`: leaf children (t = 0), equal masses, `tp2` zero, subnormal,
    /// infinite and NaN, negative masses, and parents below the cut or with a NaN mass.
    #[test]
    fn four_lane_kernel_matches_scalar_on_edge_cases() {
        let m = GinkgoModel::new(vec![[1.0, 0.0, 0.0, 0.5]; 3], 16.0, 1.5)
            .unwrap()
            .with_root_rate(2.5)
            .unwrap();
        let stat = |t: f64| GinkgoStat {
            t,
            sqrt_t: if t > 0.0 { t.sqrt() } else { 0.0 },
            log_t: if t > 0.0 { t.ln() } else { f64::NEG_INFINITY },
        };
        let mut ts = vec![
            0.0,
            -1e-9,
            16.0,
            17.0,
            100.0,
            400.0,
            1e-310,
            4e-308,
            1e300,
            f64::INFINITY,
            f64::NAN,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..60 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ts.push((x % 100_000) as f64 / 37.0);
        }
        let stats: Vec<GinkgoStat> = ts.iter().map(|&t| stat(t)).collect();
        let mut parents: Vec<GinkgoStat> = [0.0, 15.9, 16.0, 100.0, 400.0, 1e4, f64::NAN]
            .iter()
            .map(|&t| stat(t))
            .collect();
        // Parents whose sqrt equals a child's: tp2 = 0 exactly.
        parents.push(stats[4]);
        parents.push(stats[5]);
        for p in &parents {
            for root in [false, true] {
                let (ta, tb) = if root {
                    (Subset::from_indices([0, 1]), Subset::singleton(2))
                } else {
                    (Subset::singleton(0), Subset::singleton(1))
                };
                let sibs: Vec<Siblings<'_, GinkgoStat>> = stats
                    .iter()
                    .flat_map(|x| stats.iter().map(move |y| (x, y)))
                    .map(|(x, y)| Siblings {
                        a: ta,
                        sa: x,
                        b: tb,
                        sb: y,
                    })
                    .collect();
                let mut got = vec![0.0; sibs.len()];
                m.log_psi_siblings(p, &sibs, &mut got);
                let full = Subset::full(3);
                for (s, g) in sibs.iter().zip(&got) {
                    let want = m.split_kernel(s.sa, s.sb, p, s.a.union(s.b) == full);
                    assert_eq!(
                        g.to_bits(),
                        want.to_bits(),
                        "t = {} {} {}",
                        s.sa.t,
                        s.sb.t,
                        p.t
                    );
                }
            }
        }
    }

    #[test]
    fn forbidden_split_below_cut() {
        // Two light, collinear particles: invariant mass below the cut.
        let m = GinkgoModel::new(
            vec![[10.0, 0.0, 0.0, 9.9], [10.0, 0.0, 0.0, 9.9]],
            16.0,
            1.5,
        )
        .unwrap();
        assert_eq!(
            m.log_psi(Subset::singleton(0), Subset::singleton(1)),
            f64::NEG_INFINITY
        );
    }
}
