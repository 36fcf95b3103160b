//! [`Lanes`] with AVX2 and FMA: two four-lane registers. `ln` and `exp` are
//! [`crate::numeric::ln4`] and [`crate::numeric::exp4`] (the scalar functions' operations, four
//! lanes at a time); products of counts are scalar (AVX2 has no 64-bit multiply).
//!
//! Only for use inside functions compiled with `avx2` and `fma` enabled.

use super::Lanes;
use std::arch::x86_64::*;

/// Eight `f64` in two AVX2 registers.
#[derive(Clone, Copy, Debug)]
pub struct Avx2(pub [__m256d; 2]);

/// Lane masks: all ones where true.
#[derive(Clone, Copy, Debug)]
pub struct Mask2([__m256d; 2]);

macro_rules! both {
    ($f:ident, $a:expr) => {
        // SAFETY: the caller runs inside a function compiled for AVX2 and FMA.
        unsafe { [$f($a[0]), $f($a[1])] }
    };
    ($f:ident, $a:expr, $b:expr) => {
        // SAFETY: as above.
        unsafe { [$f($a[0], $b[0]), $f($a[1], $b[1])] }
    };
    ($f:ident, $a:expr, $b:expr, $c:expr) => {
        // SAFETY: as above.
        unsafe { [$f($a[0], $b[0], $c[0]), $f($a[1], $b[1], $c[1])] }
    };
}

#[inline(always)]
fn cmp<const P: i32>(a: [__m256d; 2], b: [__m256d; 2]) -> Mask2 {
    // SAFETY: as above.
    unsafe {
        Mask2([
            _mm256_cmp_pd::<P>(a[0], b[0]),
            _mm256_cmp_pd::<P>(a[1], b[1]),
        ])
    }
}

#[inline(always)]
fn from_array(x: [f64; 8]) -> Avx2 {
    // SAFETY: as above; the pointers address eight f64.
    unsafe {
        Avx2([
            _mm256_loadu_pd(x.as_ptr()),
            _mm256_loadu_pd(x.as_ptr().add(4)),
        ])
    }
}

impl Lanes for Avx2 {
    type M = Mask2;
    type U = [u64; 8];
    type P = [u8; 8];

    #[inline(always)]
    fn perm(idx: [u8; 8]) -> [u8; 8] {
        idx.map(|i| i & 7)
    }
    #[inline(always)]
    fn splat(x: f64) -> Self {
        // SAFETY: as above.
        unsafe { Avx2([_mm256_set1_pd(x); 2]) }
    }
    #[inline(always)]
    fn load(src: &[f64; 8]) -> Self {
        from_array(*src)
    }
    #[inline(always)]
    fn store(self, dst: &mut [f64; 8]) {
        // SAFETY: as above; dst holds eight f64.
        unsafe {
            _mm256_storeu_pd(dst.as_mut_ptr(), self.0[0]);
            _mm256_storeu_pd(dst.as_mut_ptr().add(4), self.0[1]);
        }
    }
    #[inline(always)]
    fn broadcast(src: &[f64; 8], i: usize) -> Self {
        Self::splat(src[i])
    }
    #[inline(always)]
    fn broadcast_u(src: &[u64; 8], i: usize) -> [u64; 8] {
        [src[i]; 8]
    }
    #[inline(always)]
    fn load_u(src: &[u64; 8]) -> [u64; 8] {
        *src
    }
    #[inline(always)]
    fn permute(src: &[f64; 8], p: &[u8; 8]) -> Self {
        from_array(p.map(|i| src[i as usize & 7]))
    }
    #[inline(always)]
    fn permute_u(src: &[u64; 8], p: &[u8; 8]) -> [u64; 8] {
        p.map(|i| src[i as usize & 7])
    }
    #[inline(always)]
    fn u_zero() -> [u64; 8] {
        [0; 8]
    }
    #[inline(always)]
    fn u_store(u: [u64; 8], dst: &mut [u64; 8]) {
        *dst = u;
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Avx2(both!(_mm256_add_pd, self.0, o.0))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Avx2(both!(_mm256_sub_pd, self.0, o.0))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Avx2(both!(_mm256_mul_pd, self.0, o.0))
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        Avx2(both!(_mm256_div_pd, self.0, o.0))
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        Avx2(both!(_mm256_max_pd, self.0, o.0))
    }
    #[inline(always)]
    fn fma(self, b: Self, c: Self) -> Self {
        Avx2(both!(_mm256_fmadd_pd, self.0, b.0, c.0))
    }
    #[inline(always)]
    fn gt(self, o: Self) -> Mask2 {
        cmp::<_CMP_GT_OQ>(self.0, o.0)
    }
    #[inline(always)]
    fn ge(self, o: Self) -> Mask2 {
        cmp::<_CMP_GE_OQ>(self.0, o.0)
    }
    #[inline(always)]
    fn lt(self, o: Self) -> Mask2 {
        cmp::<_CMP_LT_OQ>(self.0, o.0)
    }
    #[inline(always)]
    fn eq(self, o: Self) -> Mask2 {
        cmp::<_CMP_EQ_OQ>(self.0, o.0)
    }
    #[inline(always)]
    fn ne(self, o: Self) -> Mask2 {
        cmp::<_CMP_NEQ_UQ>(self.0, o.0)
    }
    #[inline(always)]
    fn select(m: Mask2, a: Self, b: Self) -> Self {
        Avx2(both!(_mm256_blendv_pd, b.0, a.0, m.0))
    }
    #[inline(always)]
    fn and(a: Mask2, b: Mask2) -> Mask2 {
        Mask2(both!(_mm256_and_pd, a.0, b.0))
    }
    #[inline(always)]
    fn or(a: Mask2, b: Mask2) -> Mask2 {
        Mask2(both!(_mm256_or_pd, a.0, b.0))
    }
    #[inline(always)]
    fn andnot(a: Mask2, b: Mask2) -> Mask2 {
        // _mm256_andnot_pd(x, y) is !x & y.
        Mask2(both!(_mm256_andnot_pd, b.0, a.0))
    }
    #[inline(always)]
    fn bits(m: Mask2) -> u8 {
        // SAFETY: as above.
        unsafe { (_mm256_movemask_pd(m.0[0]) | _mm256_movemask_pd(m.0[1]) << 4) as u8 }
    }
    #[inline(always)]
    fn mask(bits: u8) -> Mask2 {
        let lanes: [f64; 8] =
            std::array::from_fn(|l| f64::from_bits(((bits >> l) & 1) as u64 * u64::MAX));
        Mask2(from_array(lanes).0)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        Avx2(both!(ln4, self.0))
    }
    const LN_FAST_IS_LN: bool = true;
    #[inline(always)]
    fn ln_fast(self) -> Self {
        self.ln()
    }
    #[inline(always)]
    fn abs(self) -> Self {
        let mask = Self::splat(f64::from_bits(!(1u64 << 63)));
        Avx2(both!(_mm256_and_pd, self.0, mask.0))
    }
    #[inline(always)]
    fn exp(self) -> Self {
        // exp4 gives e^-708 for NaN: zero those lanes (the ordered self-comparison is false).
        let y = both!(exp4, self.0);
        let ordered = cmp::<_CMP_ORD_Q>(self.0, self.0);
        Avx2(both!(_mm256_and_pd, y, ordered.0))
    }
    #[inline(always)]
    fn count_add(lo: &mut [u64; 8], hi: &mut [u64; 8], a: [u64; 8], b: [u64; 8], m: Mask2) {
        let m = Self::bits(m);
        for l in 0..8 {
            if m >> l & 1 == 1 {
                let (s, carry) = lo[l].overflowing_add(a[l].wrapping_mul(b[l]));
                lo[l] = s;
                hi[l] = hi[l].wrapping_add(carry as u64);
            }
        }
    }
}

use crate::numeric::{exp4, ln4};
