//! Branch-free `exp` and `ln` for the trellis's inner loops.
//!
//! The standard library calls libm one value at a time; these are plain arithmetic on the bits of
//! an `f64`, so the compiler vectorises loops over slices of them (with AVX2/FMA where the CPU
//! has it, chosen at run time by the callers). Both are accurate to a few ulp over their domain
//! (checked against `f64::exp`/`f64::ln` in the tests below).

/// `e^x` for `x <= 0` (and moderately positive `x`); returns 0 for `x < -708` and for `-inf`.
#[inline(always)]
pub fn exp(x: f64) -> f64 {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    // 1.5 * 2^52: adding it rounds to an integer held in the low mantissa bits (no float-to-int
    // conversion, which AVX2 lacks for 64-bit lanes).
    const MAGIC: f64 = 6_755_399_441_055_744.0;
    let xc = x.clamp(-708.0, 709.0);
    let kf = xc * LOG2E + MAGIC;
    let k = kf - MAGIC;
    let ki = kf.to_bits().wrapping_sub(MAGIC.to_bits()); // k as a two's-complement integer
    let r = (xc - k * LN2_HI) - k * LN2_LO; // |r| <= ln2/2
                                            // e^r by its Taylor series to r^13 (error < 2e-17 for |r| <= 0.347), Horner form.
    let mut p = 1.0 / 6_227_020_800.0;
    p = p * r + 1.0 / 479_001_600.0;
    p = p * r + 1.0 / 39_916_800.0;
    p = p * r + 1.0 / 3_628_800.0;
    p = p * r + 1.0 / 362_880.0;
    p = p * r + 1.0 / 40_320.0;
    p = p * r + 1.0 / 5_040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    // Scale by 2^k through the exponent bits (k in -1021..=1023 after the clamp).
    let scale = f64::from_bits(ki.wrapping_add(1023) << 52);
    let y = p * scale;
    if x < -708.0 {
        0.0
    } else {
        y
    }
}

/// `ln x` for finite `x > 0` (normal numbers); `-inf` for 0, NaN for negatives.
#[inline(always)]
pub fn ln(x: f64) -> f64 {
    const LN2: f64 = std::f64::consts::LN_2;
    const SQRT2: f64 = std::f64::consts::SQRT_2;
    const TWO52: f64 = 4_503_599_627_370_496.0;
    let bits = x.to_bits();
    // The biased exponent as a float, via the bits of 2^52 + e (no int-to-float conversion).
    let e = f64::from_bits(TWO52.to_bits() | ((bits >> 52) & 0x7ff)) - TWO52 - 1023.0;
    // Mantissa in [1, 2).
    let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    // Move it to [sqrt(1/2), sqrt(2)).
    let big = m > SQRT2;
    let m = if big { m * 0.5 } else { m };
    let e = if big { e + 1.0 } else { e };
    // ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716; series to s^21.
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut p = 1.0 / 21.0;
    p = p * s2 + 1.0 / 19.0;
    p = p * s2 + 1.0 / 17.0;
    p = p * s2 + 1.0 / 15.0;
    p = p * s2 + 1.0 / 13.0;
    p = p * s2 + 1.0 / 11.0;
    p = p * s2 + 1.0 / 9.0;
    p = p * s2 + 1.0 / 7.0;
    p = p * s2 + 1.0 / 5.0;
    p = p * s2 + 1.0 / 3.0;
    p = p * s2 + 1.0;
    let y = e * LN2 + 2.0 * s * p;
    if (f64::MIN_POSITIVE..f64::INFINITY).contains(&x) {
        y
    } else if x == 0.0 {
        f64::NEG_INFINITY
    } else if x == f64::INFINITY {
        x
    } else if x > 0.0 {
        x.ln() // subnormal: rare, exact fallback
    } else {
        f64::NAN
    }
}

/// `ln(1 - e^(-x))` for `x >= 0`, from [`exp`] and [`ln`] (`-inf` at 0).
#[inline(always)]
pub fn log1mexp(x: f64) -> f64 {
    // For small x, 1 - e^-x cancels; use the series x - x^2/2 + x^3/6 - x^4/24 ... there.
    if x < 0.05 {
        // 1 - e^-x = x (1 - x/2 (1 - x/3 (1 - x/4 (...)))) to the x^11 term.
        let mut t = 1.0;
        for k in (2..=11).rev() {
            t = 1.0 - x / k as f64 * t;
        }
        ln(x * t)
    } else {
        ln(1.0 - exp(-x))
    }
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
    fn ln_matches_std() {
        let mut worst: f64 = 0.0;
        let mut x = 1e-300;
        while x < 1e300 {
            worst = worst.max((ln(x) - x.ln()).abs() / x.ln().abs().max(1.0));
            x *= 1.000_731;
        }
        let mut x = 0.5;
        while x < 2.0 {
            worst = worst.max((ln(x) - x.ln()).abs());
            x += 1e-5;
        }
        assert!(worst < 4e-16, "worst error {worst:e}");
        assert_eq!(ln(0.0), f64::NEG_INFINITY);
        assert_eq!(ln(1.0), 0.0);
        assert!(ln(-1.0).is_nan());
        assert!((ln(1e-310) - 1e-310f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn log1mexp_matches_reference() {
        for &x in &[1e-8, 1e-4, 0.01, 0.049, 0.05, 0.2, 1.0, 3.0, 30.0] {
            let want = super::super::model::log1mexp(x);
            assert!(
                (log1mexp(x) - want).abs() <= 2e-15 * want.abs().max(1.0),
                "{x}"
            );
        }
        assert_eq!(log1mexp(0.0), f64::NEG_INFINITY);
    }
}
