//! [`Lanes`] with AVX-512 (F and DQ): one eight-lane register, mask registers, in-register
//! permutes and 64-bit products.
//!
//! Only for use inside functions compiled with `avx512f`, `avx512dq` (and `avx2`, `fma`)
//! enabled.

use super::tables::{EXP2_EIGHTHS, FACT, LN_C, LN_INV};
use super::Lanes;
use crate::numeric::{exp_consts as ec, ln_consts as lc};
use std::arch::x86_64::*;

/// Eight `f64` in one AVX-512 register.
#[derive(Clone, Copy, Debug)]
pub struct Avx512(pub __m512d);

macro_rules! avx {
    ($e:expr) => {
        // SAFETY: the caller runs inside a function compiled for AVX-512 F and DQ.
        unsafe { $e }
    };
}

#[inline(always)]
fn set(x: f64) -> __m512d {
    avx!(_mm512_set1_pd(x))
}

#[inline(always)]
fn seti(x: u64) -> __m512i {
    avx!(_mm512_set1_epi64(x as i64))
}

impl Lanes for Avx512 {
    type M = __mmask8;
    type U = __m512i;
    type P = __m512i;

    #[inline(always)]
    fn perm(idx: [u8; 8]) -> __m512i {
        let i = idx.map(|x| (x & 7) as i64);
        avx!(_mm512_set_epi64(
            i[7], i[6], i[5], i[4], i[3], i[2], i[1], i[0]
        ))
    }
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Avx512(set(x))
    }
    #[inline(always)]
    fn load(src: &[f64; 8]) -> Self {
        // SAFETY: src holds eight f64.
        Avx512(avx!(_mm512_loadu_pd(src.as_ptr())))
    }
    #[inline(always)]
    fn store(self, dst: &mut [f64; 8]) {
        // SAFETY: dst holds eight f64.
        avx!(_mm512_storeu_pd(dst.as_mut_ptr(), self.0))
    }
    #[inline(always)]
    fn broadcast(src: &[f64; 8], i: usize) -> Self {
        Avx512(set(src[i]))
    }
    #[inline(always)]
    fn broadcast_u(src: &[u64; 8], i: usize) -> __m512i {
        seti(src[i])
    }
    #[inline(always)]
    fn load_u(src: &[u64; 8]) -> __m512i {
        // SAFETY: src holds eight u64.
        avx!(_mm512_loadu_epi64(src.as_ptr() as *const i64))
    }
    #[inline(always)]
    fn permute(src: &[f64; 8], p: &__m512i) -> Self {
        // SAFETY: src holds eight f64.
        Avx512(avx!(_mm512_permutexvar_pd(
            *p,
            _mm512_loadu_pd(src.as_ptr())
        )))
    }
    #[inline(always)]
    fn permute_u(src: &[u64; 8], p: &__m512i) -> __m512i {
        // SAFETY: src holds eight u64.
        avx!(_mm512_permutexvar_epi64(
            *p,
            _mm512_loadu_epi64(src.as_ptr() as *const i64)
        ))
    }
    #[inline(always)]
    fn u_to_f(u: __m512i) -> Self {
        Avx512(avx!(_mm512_cvtepu64_pd(u)))
    }
    #[inline(always)]
    fn u_zero() -> __m512i {
        avx!(_mm512_setzero_si512())
    }
    #[inline(always)]
    fn u_store(u: __m512i, dst: &mut [u64; 8]) {
        // SAFETY: dst holds eight u64.
        avx!(_mm512_storeu_epi64(dst.as_mut_ptr() as *mut i64, u))
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Avx512(avx!(_mm512_add_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Avx512(avx!(_mm512_sub_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Avx512(avx!(_mm512_mul_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        Avx512(avx!(_mm512_div_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        Avx512(avx!(_mm512_max_pd(self.0, o.0)))
    }
    #[inline(always)]
    fn fma(self, b: Self, c: Self) -> Self {
        Avx512(avx!(_mm512_fmadd_pd(self.0, b.0, c.0)))
    }
    #[inline(always)]
    fn gt(self, o: Self) -> __mmask8 {
        avx!(_mm512_cmp_pd_mask::<_CMP_GT_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn ge(self, o: Self) -> __mmask8 {
        avx!(_mm512_cmp_pd_mask::<_CMP_GE_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn lt(self, o: Self) -> __mmask8 {
        avx!(_mm512_cmp_pd_mask::<_CMP_LT_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn eq(self, o: Self) -> __mmask8 {
        avx!(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(self.0, o.0))
    }
    #[inline(always)]
    fn ne(self, o: Self) -> __mmask8 {
        avx!(_mm512_cmp_pd_mask::<_CMP_NEQ_UQ>(self.0, o.0))
    }
    #[inline(always)]
    fn select(m: __mmask8, a: Self, b: Self) -> Self {
        // mask_blend takes its second operand where the mask is set.
        Avx512(avx!(_mm512_mask_blend_pd(m, b.0, a.0)))
    }
    #[inline(always)]
    fn and(a: __mmask8, b: __mmask8) -> __mmask8 {
        a & b
    }
    #[inline(always)]
    fn or(a: __mmask8, b: __mmask8) -> __mmask8 {
        a | b
    }
    #[inline(always)]
    fn andnot(a: __mmask8, b: __mmask8) -> __mmask8 {
        a & !b
    }
    #[inline(always)]
    fn bits(m: __mmask8) -> u8 {
        m
    }
    #[inline(always)]
    fn mask(bits: u8) -> __mmask8 {
        bits
    }

    /// [`crate::numeric::ln`]'s operations on eight lanes (no fused steps: the same bits).
    #[inline(always)]
    fn ln(self) -> Self {
        avx!({
            let x = self.0;
            let bits = _mm512_castpd_si512(x);
            let e_biased = _mm512_srli_epi64::<52>(bits);
            let m = _mm512_castsi512_pd(_mm512_or_si512(
                _mm512_and_si512(bits, seti((1u64 << 52) - 1)),
                seti(1.0f64.to_bits()),
            ));
            // Halve the mantissas above sqrt 2 and count one more in their exponent.
            let big = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(m, set(lc::SQRT2));
            let mi = _mm512_castpd_si512(m);
            let m = _mm512_castsi512_pd(_mm512_mask_sub_epi64(mi, big, mi, seti(1 << 52)));
            let eb = _mm512_mask_add_epi64(e_biased, big, e_biased, seti(1));
            let e = _mm512_sub_pd(
                _mm512_castsi512_pd(_mm512_or_si512(seti(lc::TWO52.to_bits()), eb)),
                set(lc::TWO52 + 1023.0),
            );
            let f = _mm512_sub_pd(m, set(1.0));
            let hfsq = _mm512_mul_pd(_mm512_mul_pd(set(0.5), f), f);
            let s = _mm512_div_pd(f, _mm512_add_pd(set(2.0), f));
            let z = _mm512_mul_pd(s, s);
            let w = _mm512_mul_pd(z, z);
            let madd = |a: __m512d, b: __m512d, c: f64| _mm512_add_pd(set(c), _mm512_mul_pd(a, b));
            let lg = lc::LG;
            let t1 = _mm512_mul_pd(w, madd(w, madd(w, set(lg[5]), lg[3]), lg[1]));
            let t2 = _mm512_mul_pd(
                z,
                madd(w, madd(w, madd(w, set(lg[6]), lg[4]), lg[2]), lg[0]),
            );
            let r = _mm512_add_pd(t2, t1);
            let inner = _mm512_sub_pd(
                _mm512_sub_pd(
                    hfsq,
                    _mm512_add_pd(
                        _mm512_mul_pd(s, _mm512_add_pd(hfsq, r)),
                        _mm512_mul_pd(e, set(lc::LN2_LO)),
                    ),
                ),
                f,
            );
            Avx512(_mm512_sub_pd(_mm512_mul_pd(e, set(lc::LN2_HI)), inner))
        })
    }

    const LN_FAST_IS_LN: bool = false;

    /// `ln x = e ln 2 - ln c + ln(1 + r)`, `x = 2^e m`, `m` in `[1, 2)`, `r = m c - 1` with `c`
    /// from a table of 16 by the top four bits of `m` (`|r| < 0.031`), `ln(1 + r)` by its
    /// degree-9 Taylor polynomial (truncation 7e-17) in Estrin's scheme: no division.
    #[inline(always)]
    fn ln_fast(self) -> Self {
        avx!({
            let x = self.0;
            let m = _mm512_getmant_pd::<_MM_MANT_NORM_1_2, _MM_MANT_SIGN_SRC>(x);
            let e = _mm512_getexp_pd(x);
            // The top four mantissa bits in the index's low bits (all that the permute reads).
            let idx = _mm512_srli_epi64::<48>(_mm512_castpd_si512(x));
            let table = |t: &[f64; 16]| {
                _mm512_permutex2var_pd(
                    _mm512_loadu_pd(t.as_ptr()),
                    idx,
                    _mm512_loadu_pd(t.as_ptr().add(8)),
                )
            };
            let (inv, ln_c) = (table(&LN_INV), table(&LN_C));
            let r = _mm512_fmsub_pd(m, inv, set(1.0));
            // ln(1 + r) = r (1 - r/2 + r^2/3 - ... + r^8/9).
            let c = |i: usize| set(if i.is_multiple_of(2) { 1.0 } else { -1.0 } / (i + 1) as f64);
            let pair = |i: usize| _mm512_fmadd_pd(c(i + 1), r, c(i));
            let r2 = _mm512_mul_pd(r, r);
            let r4 = _mm512_mul_pd(r2, r2);
            let r8 = _mm512_mul_pd(r4, r4);
            let q0 = _mm512_fmadd_pd(pair(2), r2, pair(0));
            let q1 = _mm512_fmadd_pd(pair(6), r2, pair(4));
            let s = _mm512_fmadd_pd(q1, r4, q0);
            let s = _mm512_fmadd_pd(c(8), r8, s);
            let p = _mm512_mul_pd(s, r);
            let hi = _mm512_fmadd_pd(e, set(lc::LN2_HI), ln_c);
            let lo = _mm512_fmadd_pd(e, set(lc::LN2_LO), p);
            Avx512(_mm512_add_pd(hi, lo))
        })
    }

    #[inline(always)]
    fn abs(self) -> Self {
        Avx512(avx!(_mm512_abs_pd(self.0)))
    }

    /// `e^x = 2^(n/8) e^r`, `n = round(8x / ln 2)`, `|r| <= ln 2 / 16`: `2^(j/8)` from a
    /// table of eight in one register (a permute), `e^r` by its degree-7 Taylor polynomial
    /// (truncation 3e-16) in Estrin's scheme, the power of two by `vscalefpd`.
    #[inline(always)]
    fn exp(self) -> Self {
        avx!({
            let x = self.0;
            // max(x, lo) is lo for NaN x.
            let xc = _mm512_min_pd(_mm512_max_pd(x, set(ec::LO)), set(ec::HI));
            let keep = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(x, set(ec::LO));
            Avx512(_mm512_maskz_mov_pd(keep, Avx512(xc).exp_in_range().0))
        })
    }

    /// [`Lanes::exp`]'s polynomial without its clamp and its zero below `ec::LO`.
    #[inline(always)]
    fn exp_in_range(self) -> Self {
        avx!({
            let x = self.0;
            // n = round(8 x / ln 2) in the low bits of kf (two's complement, so its lowest three
            // bits are n mod 8: the table index, which is all that vpermpd reads).
            let kf = _mm512_fmadd_pd(x, set(8.0 * ec::LOG2E), set(ec::MAGIC));
            let n = _mm512_sub_pd(kf, set(ec::MAGIC));
            let r = _mm512_fnmadd_pd(n, set(ec::LN2_HI / 8.0), x);
            let r = _mm512_fnmadd_pd(n, set(ec::LN2_LO / 8.0), r);
            let table = _mm512_loadu_pd(EXP2_EIGHTHS.as_ptr());
            let t = _mm512_permutexvar_pd(_mm512_castpd_si512(kf), table);
            let c = |i: usize| set(1.0 / FACT[i]);
            let pair = |i: usize| _mm512_fmadd_pd(c(i + 1), r, c(i));
            let r2 = _mm512_mul_pd(r, r);
            let r4 = _mm512_mul_pd(r2, r2);
            let q0 = _mm512_fmadd_pd(pair(2), r2, pair(0));
            let q1 = _mm512_fmadd_pd(pair(6), r2, pair(4));
            let p = _mm512_fmadd_pd(q1, r4, q0);
            // 2^floor(n / 8) (exact: n is an integer).
            Avx512(_mm512_scalef_pd(
                _mm512_mul_pd(p, t),
                _mm512_mul_pd(n, set(0.125)),
            ))
        })
    }

    #[inline(always)]
    fn count_add(lo: &mut __m512i, hi: &mut __m512i, a: __m512i, b: __m512i, m: __mmask8) {
        avx!({
            let sum = _mm512_mask_add_epi64(*lo, m, *lo, _mm512_mullo_epi64(a, b));
            let carry = _mm512_mask_cmplt_epu64_mask(m, sum, *lo);
            *hi = _mm512_mask_add_epi64(*hi, carry, *hi, seti(1));
            *lo = sum;
        })
    }
}
