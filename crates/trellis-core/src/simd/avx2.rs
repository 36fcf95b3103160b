//! [`Lanes`] with AVX2 and FMA: two four-lane registers. `ln` is [`crate::numeric::ln4`] (the
//! scalar function's operations, four lanes at a time); `exp` and `ln_fast` are the AVX-512
//! set's table-driven polynomials with fused steps, the tables read by in-register permutes
//! (no gathers); lane permutes are two `vpermps` and a blend per register; products of counts
//! are three 32-bit multiplies (AVX2 has no 64-bit multiply).
//!
//! Only for use inside functions compiled with `avx2` and `fma` enabled.

use super::tables::{LN_C8, LN_INV8};
use super::Lanes;
use crate::numeric::{exp_consts as ec, ln_consts as lc};
use std::arch::x86_64::*;

/// Eight `f64` in two AVX2 registers.
#[derive(Clone, Copy, Debug)]
pub struct Avx2(pub [__m256d; 2]);

/// Lane masks: all ones where true.
#[derive(Clone, Copy, Debug)]
pub struct Mask2([__m256d; 2]);

/// A lane permutation: per output register, the `vpermps` indices (a pair of 32-bit halves
/// per lane, within a source register) and which lanes come from the second source register.
#[derive(Clone, Copy, Debug)]
pub struct Perm2 {
    idx: [__m256i; 2],
    upper: [__m256d; 2],
}

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

/// The AVX2 intrinsics, inside functions compiled for AVX2 and FMA.
macro_rules! avx {
    ($e:expr) => {
        // SAFETY: the caller runs inside a function compiled for AVX2 and FMA.
        unsafe { $e }
    };
}

#[inline(always)]
fn cmp<const P: i32>(a: [__m256d; 2], b: [__m256d; 2]) -> Mask2 {
    avx!(Mask2([
        _mm256_cmp_pd::<P>(a[0], b[0]),
        _mm256_cmp_pd::<P>(a[1], b[1]),
    ]))
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

#[inline(always)]
fn set(x: f64) -> __m256d {
    avx!(_mm256_set1_pd(x))
}

#[inline(always)]
fn seti(x: u64) -> __m256i {
    avx!(_mm256_set1_epi64x(x as i64))
}

/// Lanes `src[0..4]` and `src[4..8]` as two registers.
#[inline(always)]
fn load8(src: &[f64; 8]) -> [__m256d; 2] {
    // SAFETY: as above; src holds eight f64.
    unsafe {
        [
            _mm256_loadu_pd(src.as_ptr()),
            _mm256_loadu_pd(src.as_ptr().add(4)),
        ]
    }
}

/// Lane `l` of the result is lane `p[l]` of the eight lanes `src`.
#[inline(always)]
fn permute8(src: [__m256d; 2], p: &Perm2) -> [__m256d; 2] {
    [
        permute_half(src, p.idx[0], p.upper[0]),
        permute_half(src, p.idx[1], p.upper[1]),
    ]
}

/// [`Lanes::pair_a`]: lanes 1, 2, 1, 3 of the first register, then lanes 1 and 5 (and 3, 7)
/// interleaved.
#[inline(always)]
fn pair_a(src: [__m256d; 2]) -> [__m256d; 2] {
    const _: () = assert!(matches!(super::PAIR_A, [1, 2, 1, 3, 1, 5, _, _]));
    avx!([
        _mm256_permute4x64_pd::<0b11_01_10_01>(src[0]),
        _mm256_unpackhi_pd(src[0], src[1]),
    ])
}

/// [`Lanes::pair_b`]: lanes 4, 4, 6, 4 (lanes 0, 0, 2, 0 of the second register), then lane 2
/// in every lane.
#[inline(always)]
fn pair_b(src: &[f64; 8]) -> [__m256d; 2] {
    const _: () = assert!(matches!(super::PAIR_B, [4, 4, 6, 4, 2, 2, _, _]));
    // SAFETY: as above; src holds eight f64.
    avx!([
        _mm256_permute4x64_pd::<0b00_10_00_00>(_mm256_loadu_pd(src.as_ptr().add(4))),
        _mm256_broadcast_sd(&src[2]),
    ])
}

/// Four lanes of [`permute8`].
#[inline(always)]
fn permute_half(src: [__m256d; 2], idx: __m256i, upper: __m256d) -> __m256d {
    avx!({
        let a = _mm256_permutevar8x32_ps(_mm256_castpd_ps(src[0]), idx);
        let b = _mm256_permutevar8x32_ps(_mm256_castpd_ps(src[1]), idx);
        _mm256_blendv_pd(_mm256_castps_pd(a), _mm256_castps_pd(b), upper)
    })
}

/// `vpermps` indices that read, in every lane, entry `j & 3` of a four-entry register, from
/// lanes holding `2 (j & 3)` in bits 1-2 of their low 32-bit half (other low bits zero).
#[inline(always)]
fn pair_index(twice_j: __m256i) -> __m256i {
    avx!(_mm256_or_si256(
        _mm256_shuffle_epi32::<0b10_10_00_00>(twice_j),
        seti(1 << 32)
    ))
}

/// Entry `j` of an eight-entry table in every lane: `idx` from [`pair_index`], `bit2` with
/// bit 2 of `j` in its sign bit.
#[inline(always)]
fn table8(t: &[f64; 8], idx: __m256i, bit2: __m256d) -> __m256d {
    avx!({
        let [t0, t1] = load8(t);
        _mm256_blendv_pd(
            _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(t0), idx)),
            _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(t1), idx)),
            bit2,
        )
    })
}

/// A constant in four lanes, as stored in memory: the arithmetic reads it as a memory operand
/// (AVX2 has no broadcast operands, and a splat would otherwise be re-broadcast into a
/// register at every use once the sixteen registers are taken).
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Four([f64; 4]);

impl Four {
    const fn of(x: f64) -> Four {
        Four([x; 4])
    }
    const fn bits(x: u64) -> Four {
        Four::of(f64::from_bits(x))
    }
}

/// The constants of [`exp1`] and [`ln_fast1`].
struct Consts {
    exp_lo: Four,
    exp_hi: Four,
    log2e: Four,
    magic: Four,
    ln2_hi: Four,
    ln2_lo: Four,
    /// `1023 - bits(MAGIC)`, as `u64` lanes.
    exp_bias: Four,
    /// `1 / i!`, `i = 0..13`.
    taylor: [Four; 13],
    mantissa: Four,
    one_bits: Four,
    two52_bits: Four,
    two52_1023: Four,
    six: Four,
    one: Four,
    /// `(-1)^i / (i + 1)`, `i = 0..11`.
    log1p: [Four; 11],
    ln_lo: Four,
}

static CONSTS: Consts = Consts {
    exp_lo: Four::of(ec::LO),
    exp_hi: Four::of(ec::HI),
    log2e: Four::of(ec::LOG2E),
    magic: Four::of(ec::MAGIC),
    ln2_hi: Four::of(ec::LN2_HI),
    ln2_lo: Four::of(ec::LN2_LO),
    exp_bias: Four::bits(1023u64.wrapping_sub(ec::MAGIC.to_bits())),
    taylor: {
        let mut t = [Four::of(1.0); 13];
        let mut f = 1.0;
        let mut i = 1;
        while i < 13 {
            f *= i as f64;
            t[i] = Four::of(1.0 / f);
            i += 1;
        }
        t
    },
    mantissa: Four::bits((1u64 << 52) - 1),
    one_bits: Four::of(1.0),
    two52_bits: Four::of(lc::TWO52),
    two52_1023: Four::of(lc::TWO52 + 1023.0),
    six: Four::bits(6),
    one: Four::of(1.0),
    log1p: {
        let mut t = [Four::of(1.0); 11];
        let mut i = 0;
        while i < 11 {
            let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
            t[i] = Four::of(sign / (i + 1) as f64);
            i += 1;
        }
        t
    },
    ln_lo: Four::of(lc::LN2_LO),
};

/// [`CONSTS`], through an optimisation barrier: the compiler reads the constants from memory
/// (folded into the arithmetic) instead of re-broadcasting them.
#[inline(always)]
fn consts() -> &'static Consts {
    std::hint::black_box(&CONSTS)
}

/// A [`Four`] as a register (a load the compiler folds into the instruction using it).
#[inline(always)]
fn ld(c: &Four) -> __m256d {
    // SAFETY: as above; `Four` is 32 aligned bytes.
    avx!(_mm256_load_pd(c.0.as_ptr()))
}

/// A [`Four`] as integer lanes.
#[inline(always)]
fn ldi(c: &Four) -> __m256i {
    avx!(_mm256_castpd_si256(ld(c)))
}

/// `sum_i c[i] r^i` (at most 16 coefficients) by Estrin's scheme: the pairs
/// `c[i] + c[i + 1] r`, then pairs of those with `r^2`, `r^4`, `r^8` (loops over constant
/// lengths, unrolled where inlined; no closures, which would lose the target features).
#[inline(always)]
fn estrin(r: __m256d, c: &[Four]) -> __m256d {
    avx!({
        let mut t = [_mm256_setzero_pd(); 8];
        let mut n = 0;
        while 2 * n < c.len() {
            let i = 2 * n;
            t[n] = if i + 1 < c.len() {
                _mm256_fmadd_pd(r, ld(&c[i + 1]), ld(&c[i]))
            } else {
                ld(&c[i])
            };
            n += 1;
        }
        let mut power = _mm256_mul_pd(r, r);
        while n > 1 {
            let half = n.div_ceil(2);
            for j in 0..half {
                if 2 * j + 1 < n {
                    t[j] = _mm256_fmadd_pd(t[2 * j + 1], power, t[2 * j]);
                } else {
                    t[j] = t[2 * j];
                }
            }
            n = half;
            power = _mm256_mul_pd(power, power);
        }
        t[0]
    })
}

/// `e^x` on four lanes: `x = k ln 2 + r`, `|r| <= ln 2 / 2`, `e^r` by its Taylor polynomial of
/// degree 12 in Estrin's scheme with fused steps (truncation error below 2e-16), `2^k` from the
/// exponent bits; 0 for NaN and `x < -708`.
#[inline(always)]
fn exp1(x: __m256d) -> __m256d {
    let k = consts();
    avx!({
        let xc = _mm256_min_pd(_mm256_max_pd(x, ld(&k.exp_lo)), ld(&k.exp_hi));
        let kf = _mm256_fmadd_pd(xc, ld(&k.log2e), ld(&k.magic));
        let n = _mm256_sub_pd(kf, ld(&k.magic));
        let r = _mm256_fnmadd_pd(n, ld(&k.ln2_hi), xc);
        let r = _mm256_fnmadd_pd(n, ld(&k.ln2_lo), r);
        // n's two's complement is in kf's low bits: 2^n has the bits (n + 1023) << 52.
        let scale = _mm256_castsi256_pd(_mm256_slli_epi64::<52>(_mm256_add_epi64(
            _mm256_castpd_si256(kf),
            ldi(&k.exp_bias),
        )));
        let p = estrin(r, &k.taylor);
        let y = _mm256_mul_pd(p, scale);
        _mm256_and_pd(y, _mm256_cmp_pd::<_CMP_GE_OQ>(x, ld(&k.exp_lo)))
    })
}

/// `ln x` on four lanes for positive normal finite `x`: as the AVX-512 set's `ln_fast`, with a
/// table of eight entries (two registers: the top three mantissa bits pick `c ~ 1/m`) and
/// `ln(m c)`, `|m c - 1| < 0.059`, by a degree-11 polynomial (truncation error below 1.5e-16).
#[inline(always)]
fn ln_fast1(x: __m256d) -> __m256d {
    let k = consts();
    avx!({
        let bits = _mm256_castpd_si256(x);
        let m = _mm256_castsi256_pd(_mm256_or_si256(
            _mm256_and_si256(bits, ldi(&k.mantissa)),
            ldi(&k.one_bits),
        ));
        let e = _mm256_sub_pd(
            _mm256_castsi256_pd(_mm256_or_si256(
                ldi(&k.two52_bits),
                _mm256_srli_epi64::<52>(bits),
            )),
            ld(&k.two52_1023),
        );
        // The top three mantissa bits (49-51) index the tables.
        let idx = pair_index(_mm256_and_si256(_mm256_srli_epi64::<48>(bits), ldi(&k.six)));
        let bit2 = _mm256_castsi256_pd(_mm256_slli_epi64::<12>(bits));
        let inv = table8(&LN_INV8, idx, bit2);
        let ln_c = table8(&LN_C8, idx, bit2);
        let r = _mm256_fmsub_pd(m, inv, ld(&k.one));
        let p = _mm256_mul_pd(estrin(r, &k.log1p), r);
        let hi = _mm256_fmadd_pd(e, ld(&k.ln2_hi), ln_c);
        let lo = _mm256_fmadd_pd(e, ld(&k.ln_lo), p);
        _mm256_add_pd(hi, lo)
    })
}

/// `(hi, lo) += a * b` in the lanes of `m` (all ones), four lanes: the low 64 bits of the
/// product from three 32-bit multiplies, the carry from an unsigned comparison.
#[inline(always)]
fn count_add1(lo: &mut __m256i, hi: &mut __m256i, a: __m256i, b: __m256i, m: __m256d) {
    avx!({
        let low = _mm256_mul_epu32(a, b);
        let cross = _mm256_add_epi64(
            _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), b),
            _mm256_mul_epu32(a, _mm256_srli_epi64::<32>(b)),
        );
        let prod = _mm256_add_epi64(low, _mm256_slli_epi64::<32>(cross));
        let prod = _mm256_and_si256(prod, _mm256_castpd_si256(m));
        let sum = _mm256_add_epi64(*lo, prod);
        let sign = seti(1 << 63);
        // lo > sum, unsigned: a carry (all ones, so subtracting it adds one).
        let carry = _mm256_cmpgt_epi64(_mm256_xor_si256(*lo, sign), _mm256_xor_si256(sum, sign));
        *hi = _mm256_sub_epi64(*hi, carry);
        *lo = sum;
    })
}

impl Lanes for Avx2 {
    type M = Mask2;
    type U = [__m256i; 2];
    type P = Perm2;

    #[inline(always)]
    fn perm(idx: [u8; 8]) -> Perm2 {
        let half = |h: usize| {
            let src: [u8; 4] = std::array::from_fn(|l| idx[4 * h + l] & 7);
            let pairs: [i32; 8] =
                std::array::from_fn(|k| 2 * (src[k / 2] & 3) as i32 + (k % 2) as i32);
            let upper: [f64; 4] = src.map(|s| f64::from_bits(if s >= 4 { u64::MAX } else { 0 }));
            // SAFETY: as above; the pointers address eight i32 and four f64.
            unsafe {
                (
                    _mm256_loadu_si256(pairs.as_ptr() as *const __m256i),
                    _mm256_loadu_pd(upper.as_ptr()),
                )
            }
        };
        let (i0, u0) = half(0);
        let (i1, u1) = half(1);
        Perm2 {
            idx: [i0, i1],
            upper: [u0, u1],
        }
    }
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Avx2([set(x); 2])
    }
    #[inline(always)]
    fn load(src: &[f64; 8]) -> Self {
        Avx2(load8(src))
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
    fn broadcast_u(src: &[u64; 8], i: usize) -> [__m256i; 2] {
        [seti(src[i]); 2]
    }
    #[inline(always)]
    fn load_u(src: &[u64; 8]) -> [__m256i; 2] {
        // SAFETY: as above; src holds eight u64.
        unsafe {
            [
                _mm256_loadu_si256(src.as_ptr() as *const __m256i),
                _mm256_loadu_si256(src.as_ptr().add(4) as *const __m256i),
            ]
        }
    }
    #[inline(always)]
    fn permute(src: &[f64; 8], p: &Perm2) -> Self {
        Avx2(permute8(load8(src), p))
    }
    #[inline(always)]
    fn permute_u(src: &[u64; 8], p: &Perm2) -> [__m256i; 2] {
        let [a, b] = Self::load_u(src);
        let [x, y] = avx!(permute8(
            [_mm256_castsi256_pd(a), _mm256_castsi256_pd(b)],
            p
        ));
        avx!([_mm256_castpd_si256(x), _mm256_castpd_si256(y)])
    }
    #[inline(always)]
    fn pair_a(src: &[f64; 8]) -> Self {
        Avx2(pair_a(load8(src)))
    }
    #[inline(always)]
    fn pair_b(src: &[f64; 8]) -> Self {
        Avx2(pair_b(src))
    }
    #[inline(always)]
    fn pair_a_u(src: &[u64; 8]) -> [__m256i; 2] {
        let [a, b] = Self::load_u(src);
        let [x, y] = avx!(pair_a([_mm256_castsi256_pd(a), _mm256_castsi256_pd(b)]));
        avx!([_mm256_castpd_si256(x), _mm256_castpd_si256(y)])
    }
    #[inline(always)]
    fn pair_b_u(src: &[u64; 8]) -> [__m256i; 2] {
        // SAFETY: as above; u64 and f64 have the same size and any bits are an f64.
        let f: &[f64; 8] = unsafe { &*(src as *const [u64; 8] as *const [f64; 8]) };
        let [x, y] = pair_b(f);
        avx!([_mm256_castpd_si256(x), _mm256_castpd_si256(y)])
    }
    #[inline(always)]
    fn u_to_f(u: [__m256i; 2]) -> Self {
        // 2^52 + x has the bits of 2^52 with x in the mantissa, for x < 2^52.
        let two52 = seti(lc::TWO52.to_bits());
        avx!(Avx2([
            _mm256_sub_pd(
                _mm256_castsi256_pd(_mm256_or_si256(u[0], two52)),
                set(lc::TWO52)
            ),
            _mm256_sub_pd(
                _mm256_castsi256_pd(_mm256_or_si256(u[1], two52)),
                set(lc::TWO52)
            ),
        ]))
    }
    #[inline(always)]
    fn u_zero() -> [__m256i; 2] {
        avx!([_mm256_setzero_si256(); 2])
    }
    #[inline(always)]
    fn u_store(u: [__m256i; 2], dst: &mut [u64; 8]) {
        // SAFETY: as above; dst holds eight u64.
        unsafe {
            _mm256_storeu_si256(dst.as_mut_ptr() as *mut __m256i, u[0]);
            _mm256_storeu_si256(dst.as_mut_ptr().add(4) as *mut __m256i, u[1]);
        }
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
        avx!((_mm256_movemask_pd(m.0[0]) | _mm256_movemask_pd(m.0[1]) << 4) as u8)
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
    const LN_FAST_IS_LN: bool = false;
    #[inline(always)]
    fn ln_fast(self) -> Self {
        Avx2([ln_fast1(self.0[0]), ln_fast1(self.0[1])])
    }
    #[inline(always)]
    fn abs(self) -> Self {
        let mask = Self::splat(f64::from_bits(!(1u64 << 63)));
        Avx2(both!(_mm256_and_pd, self.0, mask.0))
    }
    #[inline(always)]
    fn exp(self) -> Self {
        Avx2([exp1(self.0[0]), exp1(self.0[1])])
    }
    #[inline(always)]
    fn count_add(
        lo: &mut [__m256i; 2],
        hi: &mut [__m256i; 2],
        a: [__m256i; 2],
        b: [__m256i; 2],
        m: Mask2,
    ) {
        for h in 0..2 {
            count_add1(&mut lo[h], &mut hi[h], a[h], b[h], m.0[h]);
        }
    }
}

use crate::numeric::ln4;
