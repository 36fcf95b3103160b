//! [`Lanes`] with NEON (Advanced SIMD, mandatory on 64-bit ARM): four two-lane registers for
//! the eight `f64` lanes, four `uint64x2_t` for the masks (all ones or all zeros per lane) and
//! the `u64` lanes, byte-table lookups (`tbl`) for the permutes.
//!
//! NEON is part of the `aarch64` targets' baseline, so every function here runs on any 64-bit
//! ARM CPU; the module is compiled only for little-endian `aarch64` (the byte indices of the
//! permutes assume it).

use super::Lanes;
use crate::numeric::{exp_consts as ec, ln_consts as lc};
use std::arch::aarch64::*;

macro_rules! neon {
    ($e:expr) => {
        // SAFETY: NEON is in the baseline of every target this module is compiled for (the
        // intrinsics are `unsafe` only for their `target_feature` attribute).
        unsafe { $e }
    };
}

/// Eight `f64` in four NEON registers (lanes `2k`, `2k + 1` in register `k`).
#[derive(Clone, Copy, Debug)]
pub struct Neon(pub [float64x2_t; 4]);

/// Four registers of two `u64` lanes.
type U4 = [uint64x2_t; 4];

#[inline(always)]
fn set(x: f64) -> float64x2_t {
    neon!(vdupq_n_f64(x))
}

#[inline(always)]
fn seti(x: u64) -> uint64x2_t {
    neon!(vdupq_n_u64(x))
}

/// `f` on each of the four registers.
#[inline(always)]
fn map4<T: Copy, R>(a: [T; 4], f: impl Fn(T) -> R) -> [R; 4] {
    [f(a[0]), f(a[1]), f(a[2]), f(a[3])]
}

/// `f` on each pair of registers.
#[inline(always)]
fn zip4<T: Copy, R>(a: [T; 4], b: [T; 4], f: impl Fn(T, T) -> R) -> [R; 4] {
    [f(a[0], b[0]), f(a[1], b[1]), f(a[2], b[2]), f(a[3], b[3])]
}

/// Eight 64-bit values as four registers.
#[inline(always)]
fn load_u64(src: &[u64; 8]) -> U4 {
    let p = src.as_ptr();
    // SAFETY: src holds eight u64; each load reads two of them.
    unsafe { [0, 2, 4, 6].map(|i| vld1q_u64(p.add(i))) }
}

/// The 64 bytes of eight 64-bit values, for `tbl`.
#[inline(always)]
fn table(src: *const u8) -> uint8x16x4_t {
    // SAFETY: the callers pass the start of eight 64-bit values (64 bytes).
    unsafe {
        uint8x16x4_t(
            vld1q_u8(src),
            vld1q_u8(src.add(16)),
            vld1q_u8(src.add(32)),
            vld1q_u8(src.add(48)),
        )
    }
}

/// The byte lookups of [`Lanes::permute`]: register `k`'s bytes from the table.
#[inline(always)]
fn lookup(t: uint8x16x4_t, p: &[uint8x16_t; 4]) -> U4 {
    map4(*p, |i| neon!(vreinterpretq_u64_u8(vqtbl4q_u8(t, i))))
}

impl Lanes for Neon {
    type M = U4;
    type U = U4;
    /// Byte indices into the 64 bytes of eight lanes, per register.
    type P = [uint8x16_t; 4];

    #[inline(always)]
    fn perm(idx: [u8; 8]) -> [uint8x16_t; 4] {
        // Byte b of lane l (little-endian) is byte 8 idx[l] + b of the source.
        let bytes: [u8; 64] = std::array::from_fn(|i| 8 * (idx[i / 8] & 7) + (i % 8) as u8);
        // SAFETY: bytes holds 64 bytes; each load reads 16 of them.
        unsafe { [0, 16, 32, 48].map(|i| vld1q_u8(bytes.as_ptr().add(i))) }
    }
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Neon([set(x); 4])
    }
    #[inline(always)]
    fn load(src: &[f64; 8]) -> Self {
        let p = src.as_ptr();
        // SAFETY: src holds eight f64; each load reads two of them.
        Neon(unsafe { [0, 2, 4, 6].map(|i| vld1q_f64(p.add(i))) })
    }
    #[inline(always)]
    fn store(self, dst: &mut [f64; 8]) {
        let p = dst.as_mut_ptr();
        for (k, r) in self.0.into_iter().enumerate() {
            // SAFETY: dst holds eight f64; each store writes two of them.
            unsafe { vst1q_f64(p.add(2 * k), r) };
        }
    }
    #[inline(always)]
    fn broadcast(src: &[f64; 8], i: usize) -> Self {
        Neon([set(src[i]); 4])
    }
    #[inline(always)]
    fn broadcast_u(src: &[u64; 8], i: usize) -> U4 {
        [seti(src[i]); 4]
    }
    #[inline(always)]
    fn load_u(src: &[u64; 8]) -> U4 {
        load_u64(src)
    }
    #[inline(always)]
    fn permute(src: &[f64; 8], p: &[uint8x16_t; 4]) -> Self {
        let t = table(src.as_ptr() as *const u8);
        Neon(map4(lookup(t, p), |u| neon!(vreinterpretq_f64_u64(u))))
    }
    #[inline(always)]
    fn permute_u(src: &[u64; 8], p: &[uint8x16_t; 4]) -> U4 {
        lookup(table(src.as_ptr() as *const u8), p)
    }
    #[inline(always)]
    fn u_to_f(u: U4) -> Self {
        // ucvtf rounds to nearest, as `as f64` does (exact below 2^53).
        Neon(map4(u, |x| neon!(vcvtq_f64_u64(x))))
    }
    #[inline(always)]
    fn u_zero() -> U4 {
        [seti(0); 4]
    }
    #[inline(always)]
    fn u_store(u: U4, dst: &mut [u64; 8]) {
        let p = dst.as_mut_ptr();
        for (k, r) in u.into_iter().enumerate() {
            // SAFETY: dst holds eight u64; each store writes two of them.
            unsafe { vst1q_u64(p.add(2 * k), r) };
        }
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Neon(zip4(self.0, o.0, |a, b| neon!(vaddq_f64(a, b))))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Neon(zip4(self.0, o.0, |a, b| neon!(vsubq_f64(a, b))))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Neon(zip4(self.0, o.0, |a, b| neon!(vmulq_f64(a, b))))
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        Neon(zip4(self.0, o.0, |a, b| neon!(vdivq_f64(a, b))))
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        // Not `fmax` (NaN where either is NaN): `self` where `self > o`, else `o`.
        Neon(zip4(self.0, o.0, |a, b| {
            neon!(vbslq_f64(vcgtq_f64(a, b), a, b))
        }))
    }
    #[inline(always)]
    fn fma(self, b: Self, c: Self) -> Self {
        let a = self.0;
        Neon([0, 1, 2, 3].map(|k| neon!(vfmaq_f64(c.0[k], a[k], b.0[k]))))
    }
    #[inline(always)]
    fn gt(self, o: Self) -> U4 {
        zip4(self.0, o.0, |a, b| neon!(vcgtq_f64(a, b)))
    }
    #[inline(always)]
    fn ge(self, o: Self) -> U4 {
        zip4(self.0, o.0, |a, b| neon!(vcgeq_f64(a, b)))
    }
    #[inline(always)]
    fn lt(self, o: Self) -> U4 {
        zip4(self.0, o.0, |a, b| neon!(vcltq_f64(a, b)))
    }
    #[inline(always)]
    fn eq(self, o: Self) -> U4 {
        zip4(self.0, o.0, |a, b| neon!(vceqq_f64(a, b)))
    }
    #[inline(always)]
    fn ne(self, o: Self) -> U4 {
        // Not equal, true where either is NaN (the equality is false there).
        map4(self.eq(o), |m| {
            neon!(vreinterpretq_u64_u32(vmvnq_u32(vreinterpretq_u32_u64(m))))
        })
    }
    #[inline(always)]
    fn select(m: U4, a: Self, b: Self) -> Self {
        Neon([0, 1, 2, 3].map(|k| neon!(vbslq_f64(m[k], a.0[k], b.0[k]))))
    }
    #[inline(always)]
    fn and(a: U4, b: U4) -> U4 {
        zip4(a, b, |a, b| neon!(vandq_u64(a, b)))
    }
    #[inline(always)]
    fn or(a: U4, b: U4) -> U4 {
        zip4(a, b, |a, b| neon!(vorrq_u64(a, b)))
    }
    #[inline(always)]
    fn andnot(a: U4, b: U4) -> U4 {
        // bic: a & !b.
        zip4(a, b, |a, b| neon!(vbicq_u64(a, b)))
    }
    #[inline(always)]
    fn bits(m: U4) -> u8 {
        // Narrow the all-ones lanes to eight 16-bit lanes, keep bit l in lane l, add them up.
        let w: [u16; 8] = [1, 2, 4, 8, 16, 32, 64, 128];
        // SAFETY (the load): w holds eight u16.
        neon!({
            let lo = vcombine_u32(vmovn_u64(m[0]), vmovn_u64(m[1]));
            let hi = vcombine_u32(vmovn_u64(m[2]), vmovn_u64(m[3]));
            let m16 = vcombine_u16(vmovn_u32(lo), vmovn_u32(hi));
            vaddvq_u16(vandq_u16(m16, vld1q_u16(w.as_ptr()))) as u8
        })
    }
    #[inline(always)]
    fn mask(bits: u8) -> U4 {
        let b = seti(bits as u64);
        let w: [u64; 8] = [1, 2, 4, 8, 16, 32, 64, 128];
        // vtst: all ones where b & w != 0.
        map4(load_u64(&w), |w| neon!(vtstq_u64(b, w)))
    }

    /// [`crate::numeric::ln`]'s operations on eight lanes (separate multiplies and adds, no
    /// fused steps: the same bits).
    #[inline(always)]
    fn ln(self) -> Self {
        Neon(map4(self.0, ln_pair))
    }
    const LN_FAST_IS_LN: bool = true;
    #[inline(always)]
    fn ln_fast(self) -> Self {
        self.ln()
    }
    #[inline(always)]
    fn abs(self) -> Self {
        Neon(map4(self.0, |x| neon!(vabsq_f64(x))))
    }
    #[inline(always)]
    fn exp(self) -> Self {
        Neon(map4(self.0, exp_pair))
    }
    #[inline(always)]
    fn count_add(lo: &mut U4, hi: &mut U4, a: U4, b: U4, m: U4) {
        for k in 0..4 {
            neon!({
                let p = vandq_u64(mul_lo(a[k], b[k]), m[k]);
                let sum = vaddq_u64(lo[k], p);
                // The carry's mask is all ones (-1): subtracting it adds one.
                hi[k] = vsubq_u64(hi[k], vcltq_u64(sum, lo[k]));
                lo[k] = sum;
            })
        }
    }
}

/// The low 64 bits of `a * b` per lane (NEON has no 64-bit multiply): `a_lo b_lo` plus the
/// cross products shifted up by 32 (their high halves fall off).
#[inline(always)]
fn mul_lo(a: uint64x2_t, b: uint64x2_t) -> uint64x2_t {
    neon!({
        let (a_lo, a_hi) = (vmovn_u64(a), vshrn_n_u64::<32>(a));
        let (b_lo, b_hi) = (vmovn_u64(b), vshrn_n_u64::<32>(b));
        let cross = vmlal_u32(vmull_u32(a_lo, b_hi), a_hi, b_lo);
        vmlal_u32(vshlq_n_u64::<32>(cross), a_lo, b_lo)
    })
}

/// [`crate::numeric::ln`] on two lanes, operation for operation.
#[inline(always)]
fn ln_pair(x: float64x2_t) -> float64x2_t {
    neon!({
        let bits = vreinterpretq_u64_f64(x);
        let e_biased = vshrq_n_u64::<52>(bits);
        let m = vreinterpretq_f64_u64(vorrq_u64(
            vandq_u64(bits, seti((1u64 << 52) - 1)),
            seti(1.0f64.to_bits()),
        ));
        // big = 1 in lanes with m > sqrt 2: halve m there, one more in the exponent.
        let big = vshrq_n_u64::<63>(vcgtq_f64(m, set(lc::SQRT2)));
        let m = vreinterpretq_f64_u64(vsubq_u64(vreinterpretq_u64_f64(m), vshlq_n_u64::<52>(big)));
        let e = vsubq_f64(
            vreinterpretq_f64_u64(vorrq_u64(
                seti(lc::TWO52.to_bits()),
                vaddq_u64(e_biased, big),
            )),
            set(lc::TWO52 + 1023.0),
        );
        let f = vsubq_f64(m, set(1.0));
        let hfsq = vmulq_f64(vmulq_f64(set(0.5), f), f);
        let s = vdivq_f64(f, vaddq_f64(set(2.0), f));
        let z = vmulq_f64(s, s);
        let w = vmulq_f64(z, z);
        // c + a b, rounded twice (never fused: the same bits as the scalar code).
        let madd = |a: float64x2_t, b: float64x2_t, c: f64| vaddq_f64(set(c), vmulq_f64(a, b));
        let lg = lc::LG;
        let t1 = vmulq_f64(w, madd(w, madd(w, set(lg[5]), lg[3]), lg[1]));
        let t2 = vmulq_f64(
            z,
            madd(w, madd(w, madd(w, set(lg[6]), lg[4]), lg[2]), lg[0]),
        );
        let r = vaddq_f64(t2, t1);
        let inner = vsubq_f64(
            vsubq_f64(
                hfsq,
                vaddq_f64(
                    vmulq_f64(s, vaddq_f64(hfsq, r)),
                    vmulq_f64(e, set(lc::LN2_LO)),
                ),
            ),
            f,
        );
        vsubq_f64(vmulq_f64(e, set(lc::LN2_HI)), inner)
    })
}

/// `e^x` on two lanes: `e^x = 2^k e^r`, `k = round(x / ln 2)`, `|r| <= ln 2 / 2`, `e^r` by
/// [`crate::numeric::exp`]'s degree-13 Taylor polynomial (truncation under 2e-17) with fused
/// steps in Estrin's scheme, `2^k` through the exponent bits. Inputs are clamped to
/// `[-708, 709]`; lanes below -708 (and `-inf`, NaN: the comparison is false) give 0.
#[inline(always)]
fn exp_pair(x: float64x2_t) -> float64x2_t {
    neon!({
        // fmaxnm/fminnm return the number where the other operand is a quiet NaN; a NaN lane is
        // zeroed at the end whatever it computes.
        let xc = vminnmq_f64(vmaxnmq_f64(x, set(ec::LO)), set(ec::HI));
        // k = round(x log2 e) in the low bits of kf (two's complement).
        let kf = vfmaq_f64(set(ec::MAGIC), xc, set(ec::LOG2E));
        let k = vsubq_f64(kf, set(ec::MAGIC));
        let r = vfmsq_f64(xc, k, set(ec::LN2_HI));
        let r = vfmsq_f64(r, k, set(ec::LN2_LO));
        // TAYLOR holds 1/13!, ..., 1/1!, 1/0!: c(i) is the coefficient of r^i.
        let c = |i: usize| set(ec::TAYLOR[13 - i]);
        let pair = |i: usize| vfmaq_f64(c(i), c(i + 1), r);
        let r2 = vmulq_f64(r, r);
        let r4 = vmulq_f64(r2, r2);
        let r8 = vmulq_f64(r4, r4);
        let q0 = vfmaq_f64(pair(0), pair(2), r2); // degrees 0-3
        let q1 = vfmaq_f64(pair(4), pair(6), r2); // 4-7
        let q2 = vfmaq_f64(pair(8), pair(10), r2); // 8-11
        let p03 = vfmaq_f64(q0, q1, r4); // 0-7
        let q3 = vfmaq_f64(q2, pair(12), r4); // 8-13
        let p = vfmaq_f64(p03, q3, r8);
        // 2^k through the exponent bits (k in -1021..=1023 after the clamp).
        let ki = vsubq_u64(vreinterpretq_u64_f64(kf), seti(ec::MAGIC.to_bits()));
        let scale = vreinterpretq_f64_u64(vshlq_n_u64::<52>(vaddq_u64(ki, seti(1023))));
        let y = vmulq_f64(p, scale);
        // Keep y where x >= LO (false for NaN and -inf), else 0.
        vreinterpretq_f64_u64(vandq_u64(
            vreinterpretq_u64_f64(y),
            vcgeq_f64(x, set(ec::LO)),
        ))
    })
}
