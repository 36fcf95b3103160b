//! [`Lanes`] in plain code: eight values in an array, on any CPU.

use super::Lanes;

/// Eight `f64` in an array.
#[derive(Clone, Copy, Debug)]
pub struct Scalar8(pub [f64; 8]);

#[inline(always)]
fn map(a: [f64; 8], f: impl Fn(f64) -> f64) -> Scalar8 {
    Scalar8(a.map(f))
}

#[inline(always)]
fn zip(a: [f64; 8], b: [f64; 8], f: impl Fn(f64, f64) -> f64) -> Scalar8 {
    Scalar8(std::array::from_fn(|l| f(a[l], b[l])))
}

#[inline(always)]
fn cmp(a: [f64; 8], b: [f64; 8], f: impl Fn(f64, f64) -> bool) -> u8 {
    (0..8).fold(0u8, |m, l| m | ((f(a[l], b[l]) as u8) << l))
}

impl Lanes for Scalar8 {
    type M = u8;
    type U = [u64; 8];
    type P = [u8; 8];

    #[inline(always)]
    fn perm(idx: [u8; 8]) -> [u8; 8] {
        idx.map(|i| i & 7)
    }
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Scalar8([x; 8])
    }
    #[inline(always)]
    fn load(src: &[f64; 8]) -> Self {
        Scalar8(*src)
    }
    #[inline(always)]
    fn store(self, dst: &mut [f64; 8]) {
        *dst = self.0;
    }
    #[inline(always)]
    fn broadcast(src: &[f64; 8], i: usize) -> Self {
        Scalar8([src[i]; 8])
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
        Scalar8(p.map(|i| src[i as usize & 7]))
    }
    #[inline(always)]
    fn permute_u(src: &[u64; 8], p: &[u8; 8]) -> [u64; 8] {
        p.map(|i| src[i as usize & 7])
    }
    #[inline(always)]
    fn u_to_f(u: [u64; 8]) -> Self {
        Scalar8(u.map(|x| x as f64))
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
        zip(self.0, o.0, |a, b| a + b)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        zip(self.0, o.0, |a, b| a - b)
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        zip(self.0, o.0, |a, b| a * b)
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        zip(self.0, o.0, |a, b| a / b)
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        zip(self.0, o.0, |a, b| if a > b { a } else { b })
    }
    #[inline(always)]
    fn fma(self, b: Self, c: Self) -> Self {
        // A rounded multiply and add: `f64::mul_add` without hardware FMA is a slow libm call.
        Scalar8(std::array::from_fn(|l| self.0[l] * b.0[l] + c.0[l]))
    }
    #[inline(always)]
    fn gt(self, o: Self) -> u8 {
        cmp(self.0, o.0, |a, b| a > b)
    }
    #[inline(always)]
    fn ge(self, o: Self) -> u8 {
        cmp(self.0, o.0, |a, b| a >= b)
    }
    #[inline(always)]
    fn lt(self, o: Self) -> u8 {
        cmp(self.0, o.0, |a, b| a < b)
    }
    #[inline(always)]
    fn eq(self, o: Self) -> u8 {
        cmp(self.0, o.0, |a, b| a == b)
    }
    #[inline(always)]
    fn ne(self, o: Self) -> u8 {
        cmp(self.0, o.0, |a, b| a != b)
    }
    #[inline(always)]
    fn select(m: u8, a: Self, b: Self) -> Self {
        Scalar8(std::array::from_fn(|l| {
            if m >> l & 1 == 1 {
                a.0[l]
            } else {
                b.0[l]
            }
        }))
    }
    #[inline(always)]
    fn and(a: u8, b: u8) -> u8 {
        a & b
    }
    #[inline(always)]
    fn or(a: u8, b: u8) -> u8 {
        a | b
    }
    #[inline(always)]
    fn andnot(a: u8, b: u8) -> u8 {
        a & !b
    }
    #[inline(always)]
    fn bits(m: u8) -> u8 {
        m
    }
    #[inline(always)]
    fn mask(bits: u8) -> u8 {
        bits
    }
    #[inline(always)]
    fn ln(self) -> Self {
        map(self.0, crate::numeric::ln)
    }
    const LN_FAST_IS_LN: bool = true;
    #[inline(always)]
    fn ln_fast(self) -> Self {
        self.ln()
    }
    #[inline(always)]
    fn abs(self) -> Self {
        map(self.0, f64::abs)
    }
    #[inline(always)]
    fn exp(self) -> Self {
        map(self.0, |x| {
            if x.is_nan() {
                0.0
            } else {
                crate::numeric::exp(x)
            }
        })
    }
    #[inline(always)]
    fn count_add(lo: &mut [u64; 8], hi: &mut [u64; 8], a: [u64; 8], b: [u64; 8], m: u8) {
        for l in 0..8 {
            if m >> l & 1 == 1 {
                let (s, carry) = lo[l].overflowing_add(a[l].wrapping_mul(b[l]));
                lo[l] = s;
                hi[l] = hi[l].wrapping_add(carry as u64);
            }
        }
    }
}
