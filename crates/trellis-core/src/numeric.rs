//! Branch-free `exp` and `ln` for the trellis's inner loops.
//!
//! The standard library calls libm one value at a time. These are plain arithmetic on the bits
//! of an `f64`, and each has a four-lane AVX2 twin that performs the same operations in the same
//! order, so a vectorised loop gives bit-identical results to the scalar one (on any x86-64 CPU,
//! for any thread count). `exp` is accurate to under 4e-16 relative and `ln` to under 2.3e-16
//! (checked against libm in the tests below).

/// The constants of [`exp`], shared with vectorised copies of it (which must perform the same
/// operations to give bit-identical results).
pub mod exp_consts {
    /// `log2(e)`.
    pub const LOG2E: f64 = std::f64::consts::LOG2_E;
    /// High part of `ln 2` (exact in the products below).
    pub const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    /// Low part of `ln 2`.
    pub const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    /// 1.5 * 2^52: adding it rounds to an integer held in the low mantissa bits (no
    /// float-to-int conversion, which AVX2 lacks for 64-bit lanes).
    pub const MAGIC: f64 = 6_755_399_441_055_744.0;
    /// Inputs are clamped to `[LO, HI]`; below `LO` the result is 0.
    pub const LO: f64 = -708.0;
    /// Upper clamp.
    pub const HI: f64 = 709.0;
    /// Taylor coefficients of `e^r`, highest degree (13) first, for Horner's rule; the error
    /// is under 2e-17 for `|r| <= ln2 / 2`.
    pub const TAYLOR: [f64; 14] = [
        1.0 / 6_227_020_800.0,
        1.0 / 479_001_600.0,
        1.0 / 39_916_800.0,
        1.0 / 3_628_800.0,
        1.0 / 362_880.0,
        1.0 / 40_320.0,
        1.0 / 5_040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ];
}

/// ln(2π).
pub const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// `log sum_k exp(x_k)` of a slice, summed in slice order (`-inf` when no term is finite).
pub fn log_sum_exp(xs: &[f64]) -> f64 {
    let m = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + xs.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// `e^x` for `x <= 0` (and moderately positive `x`); returns 0 for `x < -708` and for `-inf`,
/// `e^709` for `x > 709`, and `e^-708` (not NaN) for NaN.
#[inline(always)]
pub fn exp(x: f64) -> f64 {
    use exp_consts::*;
    // max/min rather than clamp: clamp branches (and keeps NaN), which stops vectorisation.
    #[allow(clippy::manual_clamp)]
    let xc = x.max(LO).min(HI);
    let kf = xc * LOG2E + MAGIC;
    let k = kf - MAGIC;
    let ki = kf.to_bits().wrapping_sub(MAGIC.to_bits()); // k as a two's-complement integer
    let r = (xc - k * LN2_HI) - k * LN2_LO; // |r| <= ln2/2
    let mut p = TAYLOR[0];
    for &t in &TAYLOR[1..] {
        p = p * r + t;
    }
    // Scale by 2^k through the exponent bits (k in -1021..=1023 after the clamp).
    let scale = f64::from_bits(ki.wrapping_add(1023) << 52);
    let y = p * scale;
    // Zero below the range with a bit mask, not a branch. A NaN input is clamped to LO above and
    // so returns e^-708 ~ 3e-308 (callers never pass NaN; both twins agree on it bit for bit).
    let keep = ((x >= LO || x.is_nan()) as u64).wrapping_neg();
    f64::from_bits(y.to_bits() & keep)
}

/// The constants of [`ln`] (fdlibm's `e_log.c` reduction and minimax coefficients).
pub mod ln_consts {
    /// High part of `ln 2`.
    pub const LN2_HI: f64 = 0.6931471803691238;
    /// Low part of `ln 2`.
    pub const LN2_LO: f64 = 1.9082149292705877e-10;
    /// `sqrt(2)`: mantissas above it are halved so that `f = m - 1` lies in `[-0.293, 0.415)`.
    pub const SQRT2: f64 = std::f64::consts::SQRT_2;
    /// `2^52`, whose bit pattern ORed with a small integer `e` gives `2^52 + e`.
    pub const TWO52: f64 = 4_503_599_627_370_496.0;
    /// Minimax coefficients of `R(z) ~ (log((1+s)/(1-s)) - 2s) / s`, `z = s^2`.
    pub const LG: [f64; 7] = [
        0.6666666666666735,
        0.3999999999940942,
        0.2857142874366239,
        0.22222198432149784,
        0.1818357216161805,
        0.15313837699209373,
        0.14798198605116586,
    ];
}

/// Natural logarithm of a positive normal `x` (finite, `>= f64::MIN_POSITIVE`); `ln(1) = 0`
/// exactly. Other inputs give meaningless values: callers route them to `f64::ln`.
#[inline(always)]
pub fn ln(x: f64) -> f64 {
    use ln_consts::*;
    let bits = x.to_bits();
    // x = 2^e * m with m in [1, 2).
    let e_biased = bits >> 52;
    let m = f64::from_bits((bits & ((1u64 << 52) - 1)) | 1.0f64.to_bits());
    let big = (m > SQRT2) as u64; // 1 if m is halved
    let m = f64::from_bits(m.to_bits() - (big << 52)); // m / 2 where big
    let e = f64::from_bits(TWO52.to_bits() | (e_biased + big)) - (TWO52 + 1023.0);
    let f = m - 1.0;
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG[1] + w * (LG[3] + w * LG[5]));
    let t2 = z * (LG[0] + w * (LG[2] + w * (LG[4] + w * LG[6])));
    let r = t2 + t1;
    e * LN2_HI - ((hfsq - (s * (hfsq + r) + e * LN2_LO)) - f)
}

/// `out[i] = ln(x[i])` ([`ln`]) for a slice, four lanes at a time with AVX2 when the CPU has it.
/// Only the first `min(x.len(), out.len())` entries are computed when the lengths differ.
pub fn ln_slice(x: &[f64], out: &mut [f64]) {
    let n = x.len().min(out.len());
    let (x, out) = (&x[..n], &mut out[..n]);
    #[cfg(target_arch = "x86_64")]
    {
        if crate::simd::avx2_allowed() {
            // SAFETY: the CPU supports AVX2, the only feature the function is compiled for.
            unsafe { ln_slice_avx2(x, out) };
            return;
        }
    }
    for (o, &v) in out.iter_mut().zip(x) {
        *o = ln(v);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn ln_slice_avx2(x: &[f64], out: &mut [f64]) {
    use std::arch::x86_64::*;
    let whole = x.len() / 4 * 4;
    let mut i = 0;
    while i < whole {
        // SAFETY: i + 4 <= len of both slices.
        unsafe {
            let v = ln4(_mm256_loadu_pd(x.as_ptr().add(i)));
            _mm256_storeu_pd(out.as_mut_ptr().add(i), v);
        }
        i += 4;
    }
    for (o, &v) in out[whole..].iter_mut().zip(&x[whole..]) {
        *o = ln(v);
    }
}

/// [`ln`] on four lanes, operation for operation.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) fn ln4(x: std::arch::x86_64::__m256d) -> std::arch::x86_64::__m256d {
    use ln_consts::*;
    use std::arch::x86_64::*;
    let set = _mm256_set1_pd;
    let bits = _mm256_castpd_si256(x);
    let e_biased = _mm256_srli_epi64::<52>(bits);
    let mant = _mm256_and_si256(bits, _mm256_set1_epi64x((1i64 << 52) - 1));
    let m = _mm256_castsi256_pd(_mm256_or_si256(
        mant,
        _mm256_set1_epi64x(1.0f64.to_bits() as i64),
    ));
    // big = 1 in lanes with m > sqrt 2 (the compare gives all ones; shift it down to 1).
    let big = _mm256_srli_epi64::<63>(_mm256_castpd_si256(_mm256_cmp_pd::<_CMP_GT_OQ>(
        m,
        set(SQRT2),
    )));
    let m = _mm256_castsi256_pd(_mm256_sub_epi64(
        _mm256_castpd_si256(m),
        _mm256_slli_epi64::<52>(big),
    ));
    let e = _mm256_sub_pd(
        _mm256_castsi256_pd(_mm256_or_si256(
            _mm256_set1_epi64x(TWO52.to_bits() as i64),
            _mm256_add_epi64(e_biased, big),
        )),
        set(TWO52 + 1023.0),
    );
    let f = _mm256_sub_pd(m, set(1.0));
    let hfsq = _mm256_mul_pd(_mm256_mul_pd(set(0.5), f), f);
    let s = _mm256_div_pd(f, _mm256_add_pd(set(2.0), f));
    let z = _mm256_mul_pd(s, s);
    let w = _mm256_mul_pd(z, z);
    let madd = |a: __m256d, b: __m256d, c: f64| _mm256_add_pd(set(c), _mm256_mul_pd(a, b));
    // t1 = w * (LG1 + w * (LG3 + w * LG5))
    let t1 = _mm256_mul_pd(w, madd(w, madd(w, set(LG[5]), LG[3]), LG[1]));
    // t2 = z * (LG0 + w * (LG2 + w * (LG4 + w * LG6)))
    let t2 = _mm256_mul_pd(
        z,
        madd(w, madd(w, madd(w, set(LG[6]), LG[4]), LG[2]), LG[0]),
    );
    let r = _mm256_add_pd(t2, t1);
    let inner = _mm256_sub_pd(
        _mm256_sub_pd(
            hfsq,
            _mm256_add_pd(
                _mm256_mul_pd(s, _mm256_add_pd(hfsq, r)),
                _mm256_mul_pd(e, set(LN2_LO)),
            ),
        ),
        f,
    );
    _mm256_sub_pd(_mm256_mul_pd(e, set(LN2_HI)), inner)
}

/// [`crate::numeric::exp`] on four lanes, operation for operation (hence bit-identical).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(crate) fn exp4(x: std::arch::x86_64::__m256d) -> std::arch::x86_64::__m256d {
    use crate::numeric::exp_consts as c;
    use std::arch::x86_64::*;
    let set = _mm256_set1_pd;
    // max(x, lo) returns lo for NaN x, as f64::max does.
    let xc = _mm256_min_pd(_mm256_max_pd(x, set(c::LO)), set(c::HI));
    let kf = _mm256_add_pd(_mm256_mul_pd(xc, set(c::LOG2E)), set(c::MAGIC));
    let k = _mm256_sub_pd(kf, set(c::MAGIC));
    let ki = _mm256_sub_epi64(
        _mm256_castpd_si256(kf),
        _mm256_set1_epi64x(c::MAGIC.to_bits() as i64),
    );
    let r = _mm256_sub_pd(
        _mm256_sub_pd(xc, _mm256_mul_pd(k, set(c::LN2_HI))),
        _mm256_mul_pd(k, set(c::LN2_LO)),
    );
    let mut p = set(c::TAYLOR[0]);
    for &t in &c::TAYLOR[1..] {
        p = _mm256_add_pd(_mm256_mul_pd(p, r), set(t));
    }
    let scale = _mm256_castsi256_pd(_mm256_slli_epi64::<52>(_mm256_add_epi64(
        ki,
        _mm256_set1_epi64x(1023),
    )));
    let y = _mm256_mul_pd(p, scale);
    // Keep y where !(x < LO) (true for NaN, as in the scalar version), else 0.
    _mm256_and_pd(y, _mm256_cmp_pd::<_CMP_NLT_UQ>(x, set(c::LO)))
}

/// SplitMix64's finaliser: a bijective mix of a 64-bit word, for deriving independent seeds from
/// a master seed and indices (callers combine the indices into `z` first).
pub fn splitmix64_mix(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        if a == b {
            0.0
        } else {
            ((a - b) / b).abs()
        }
    }

    #[test]
    fn exp_matches_std() {
        let mut worst: f64 = 0.0;
        let mut x = -707.5;
        while x < 30.0 {
            worst = worst.max(rel(exp(x), x.exp()));
            x += 0.001_37;
        }
        assert!(worst < 4e-16, "worst relative error {worst:e}");
        assert_eq!(exp(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp(-800.0), 0.0);
        assert_eq!(exp(0.0), 1.0);
    }

    #[test]
    fn ln_matches_std_and_its_vector_twin() {
        let mut xs = vec![
            1.0,
            2.0,
            0.5,
            std::f64::consts::SQRT_2,
            f64::MIN_POSITIVE,
            f64::MAX,
        ];
        let mut x = 1e-300;
        while x < 1e300 {
            xs.push(x);
            x *= 1.000_731_3;
        }
        for k in 0..20_000 {
            xs.push(0.6 + k as f64 * 4.3e-5); // dense around 1 and sqrt 2
        }
        let mut out = vec![0.0; xs.len()];
        ln_slice(&xs, &mut out);
        let mut worst: f64 = 0.0;
        for (&v, &got) in xs.iter().zip(&out) {
            assert_eq!(
                got.to_bits(),
                ln(v).to_bits(),
                "ln({v:e}): vector and scalar differ"
            );
            let want = v.ln();
            let err = if want == 0.0 {
                got.abs()
            } else {
                rel(got, want)
            };
            worst = worst.max(err);
        }
        assert!(worst < 2.3e-16, "worst relative error {worst:e}");
        assert_eq!(ln(1.0), 0.0);
    }
}
