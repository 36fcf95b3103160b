//! Every instruction set this CPU has (x86-64: AVX2, AVX-512; ARM: NEON) against the scalar
//! definitions: `ln` bit for bit, `exp` to 1e-15, comparisons and selections with NaN and
//! infinities, permutes and 128-bit count sums; which sets each architecture runs.

use super::*;

/// Values that exercise `ln` and `exp`: ordinary, tiny, huge, around the clamps and the
/// mantissa threshold, infinities and NaN.
fn samples() -> Vec<f64> {
    let mut v = vec![
        1.0,
        2.0,
        0.5,
        std::f64::consts::SQRT_2,
        f64::from_bits(std::f64::consts::SQRT_2.to_bits() + 1),
        f64::MIN_POSITIVE,
        f64::MAX,
        1e-300,
        1e300,
        -708.0,
        -708.0000001,
        -707.9999,
        709.0,
        709.5,
        -1e-300,
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -745.0,
        -0.3465,
        0.3466,
        60.0,
        -60.0,
    ];
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..4000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let u = (x >> 11) as f64 / (1u64 << 53) as f64;
        v.push((u - 0.5) * 1500.0);
        v.push(10f64.powf((u - 0.5) * 600.0));
    }
    while v.len() % 8 != 0 {
        v.push(1.0);
    }
    v
}

struct Probe<'a>(&'a [f64]);

/// Per lane: ln, exp, the comparisons' bits, select, a permute.
type ProbeOut = Vec<([f64; 8], [f64; 8], [u8; 5], [f64; 8], [f64; 8])>;

impl WithLanes for Probe<'_> {
    type Output = ProbeOut;
    #[inline(always)]
    fn run<L: Lanes>(self) -> ProbeOut {
        let p = L::perm([7, 0, 6, 1, 5, 2, 4, 3]);
        self.0
            .chunks_exact(8)
            .map(|c| {
                let c: &[f64; 8] = c.try_into().unwrap();
                let x = L::load(c);
                let y = L::permute(c, &p);
                let (mut ln, mut exp, mut sel, mut per) = ([0.0; 8], [0.0; 8], [0.0; 8], [0.0; 8]);
                x.ln().store(&mut ln);
                x.exp().store(&mut exp);
                L::select(x.gt(y), x, y).store(&mut sel);
                // ln_fast against ln, on its domain.
                let (mut lf, mut le) = ([0.0; 8], [0.0; 8]);
                x.ln_fast().store(&mut lf);
                x.ln().store(&mut le);
                for l in 0..8 {
                    if c[l].is_finite() && c[l] >= f64::MIN_POSITIVE {
                        assert!(
                            (lf[l] - le[l]).abs() <= 1e-15 * (1.0 + le[l].abs()),
                            "ln_fast({}) = {} vs ln {}",
                            c[l],
                            lf[l],
                            le[l]
                        );
                    }
                }
                // exp_in_range: exp's bits on its range.
                let mut er = [0.0; 8];
                x.exp_in_range().store(&mut er);
                for l in 0..8 {
                    if (-700.0..=700.0).contains(&c[l]) {
                        assert_eq!(er[l].to_bits(), exp[l].to_bits(), "exp_in_range({})", c[l]);
                    }
                }
                y.store(&mut per);
                let bits = [
                    L::bits(x.gt(y)),
                    L::bits(x.ge(y)),
                    L::bits(x.lt(y)),
                    L::bits(x.eq(y)),
                    L::bits(x.ne(y)),
                ];
                (ln, exp, bits, sel, per)
            })
            .collect()
    }
}

#[test]
fn every_isa_matches_the_scalar_definitions() {
    let xs = samples();
    let scalar = dispatch(Isa::Scalar, Probe(&xs));
    for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
        let got = dispatch(isa, Probe(&xs));
        for (c, (g, s)) in got.iter().zip(&scalar).enumerate() {
            for l in 0..8 {
                let x = xs[8 * c + l];
                // ln: bit for bit, on its domain (positive normal numbers).
                if x.is_finite() && x >= f64::MIN_POSITIVE {
                    assert_eq!(g.0[l].to_bits(), s.0[l].to_bits(), "{isa} ln({x})");
                    assert_eq!(g.0[l].to_bits(), crate::numeric::ln(x).to_bits());
                    assert!((g.0[l] - x.ln()).abs() <= 2.3e-16 * x.ln().abs().max(1e-300));
                }
                // exp: accurate to 1e-15; 0 for NaN, -inf and below -708.
                let e = g.1[l];
                if x.is_nan() || x < -708.0 {
                    assert_eq!(e, 0.0, "{isa} exp({x})");
                } else {
                    let want = x.min(709.0).exp();
                    assert!(
                        (e - want).abs() <= 1e-15 * want,
                        "{isa} exp({x}) = {e}, want {want}"
                    );
                }
            }
            assert_eq!(g.2, s.2, "{isa} comparison bits");
            for l in 0..8 {
                assert_eq!(g.3[l].to_bits(), s.3[l].to_bits(), "{isa} select");
                assert_eq!(g.4[l].to_bits(), s.4[l].to_bits(), "{isa} permute");
            }
        }
    }
}

struct Counts;

impl WithLanes for Counts {
    type Output = ([u64; 8], [u64; 8]);
    #[inline(always)]
    fn run<L: Lanes>(self) -> Self::Output {
        let (mut lo, mut hi) = (L::u_zero(), L::u_zero());
        let a = [u64::MAX, 3, 1 << 40, 0, 5, u64::MAX / 3, 1 << 63, 12345];
        let b = [1, 1 << 62, 1 << 23, 9, 7, 3, 1, 67890];
        let p = L::perm([0, 1, 2, 3, 4, 5, 6, 7]);
        let (ua, ub) = (L::permute_u(&a, &p), L::permute_u(&b, &p));
        for i in 0..100u32 {
            // Lane 3 never, lane 7 on even rounds only.
            let m = L::mask(if i % 2 == 0 { 0b1111_0111 } else { 0b0111_0111 });
            L::count_add(&mut lo, &mut hi, ua, ub, m);
        }
        let (mut l, mut h) = ([0; 8], [0; 8]);
        L::u_store(lo, &mut l);
        L::u_store(hi, &mut h);
        (l, h)
    }
}

#[test]
fn count_sums_carry_into_the_high_word() {
    let a = [u64::MAX, 3, 1 << 40, 0, 5, u64::MAX / 3, 1 << 63, 12345];
    let b = [1u64, 1 << 62, 1 << 23, 9, 7, 3, 1, 67890];
    let rounds = [100u128, 100, 100, 0, 100, 100, 100, 50];
    for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
        let (lo, hi) = dispatch(isa, Counts);
        for l in 0..8 {
            let got = (hi[l] as u128) << 64 | lo[l] as u128;
            assert_eq!(
                got,
                rounds[l] * a[l] as u128 * b[l] as u128,
                "{isa} lane {l}"
            );
        }
    }
}

#[test]
fn isa_names_round_trip() {
    for isa in Isa::ALL {
        assert_eq!(Isa::parse(isa.name()), Some(isa));
    }
    assert_eq!(Isa::parse("sse"), None);
    assert!(Isa::Scalar.available());
    assert!(Isa::detect().available());
}

/// Which [`Lanes`] a dispatch ran.
struct Which;

impl WithLanes for Which {
    type Output = &'static str;
    #[inline(always)]
    fn run<L: Lanes>(self) -> &'static str {
        let name = std::any::type_name::<L>();
        name.rsplit("::").next().unwrap_or(name)
    }
}

#[test]
fn each_architecture_runs_only_its_own_sets() {
    let ran = |isa| dispatch(isa, Which);
    assert_eq!(ran(Isa::Scalar), "Scalar8");
    if cfg!(target_arch = "aarch64") {
        // NEON is in the baseline; the x86 sets are never available and fall back to it.
        assert!(Isa::Neon.available());
        assert!(!Isa::Avx2.available() && !Isa::Avx512.available());
        for isa in [Isa::Neon, Isa::Avx2, Isa::Avx512] {
            assert_eq!(ran(isa), "Neon", "{isa}");
        }
        assert_eq!(Isa::narrowed(None), Isa::Neon);
        assert_eq!(Isa::Avx512.effective(), Isa::Neon);
        assert_eq!(Isa::narrowed(Some("avx512")), Isa::Neon);
    } else {
        // Off ARM, NEON is never available and runs the scalar code, never an x86 set.
        assert!(!Isa::Neon.available());
        assert_eq!(ran(Isa::Neon), "Scalar8");
        assert_eq!(Isa::Neon.effective(), Isa::Scalar);
        assert_ne!(Isa::narrowed(Some("neon")), Isa::Neon);
    }
    // The environment variable narrows to any set the CPU has, and ignores other values.
    for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
        assert_eq!(Isa::narrowed(Some(isa.name())), isa);
        assert_eq!(ran(isa), ran(Isa::narrowed(Some(isa.name()))));
    }
    assert_eq!(Isa::narrowed(Some("sse")), Isa::narrowed(None));
    assert!(Isa::narrowed(None).available());
}

#[test]
fn sum_exp_on_every_isa_matches_the_plain_sum() {
    // Out-of-range and odd inputs must not panic (no value is asserted for them).
    let odd = [-800.0, -708.5, 700.0, 709.5, 800.0, f64::NAN, f64::INFINITY];
    let z: Vec<f64> = odd.iter().chain(odd.iter()).copied().collect();
    for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
        let _ = sum_exp(isa, &z, 0.0);
        for len in [0usize, 1, 3, 4, 5, 8, 9, 17, 1003] {
            let mut z: Vec<f64> = (0..len)
                .map(|i| -((i * 7919 % 1000) as f64) * 0.037)
                .collect();
            if len > 2 {
                z[1] = f64::NEG_INFINITY;
            }
            let a = sum_exp(isa, &z, 0.25);
            let want: f64 = z.iter().map(|x| (x - 0.25).exp()).sum();
            assert!(
                (a - want).abs() <= 1e-13 * want.max(1e-300),
                "{isa} len {len}"
            );
        }
    }
}

struct Pairs<'a>(&'a [f64; 8], &'a [u64; 8]);

impl WithLanes for Pairs<'_> {
    type Output = [[u64; 8]; 4];
    #[inline(always)]
    fn run<L: Lanes>(self) -> Self::Output {
        let (mut a, mut b) = ([0.0; 8], [0.0; 8]);
        let (mut au, mut bu) = ([0u64; 8], [0u64; 8]);
        L::pair_a(self.0).store(&mut a);
        L::pair_b(self.0).store(&mut b);
        L::u_store(L::pair_a_u(self.1), &mut au);
        L::u_store(L::pair_b_u(self.1), &mut bu);
        [a.map(f64::to_bits), b.map(f64::to_bits), au, bu]
    }
}

#[test]
fn pair_shuffles_read_the_pair_lanes_on_every_isa() {
    let src = [
        1.5,
        -2.0,
        f64::NAN,
        f64::NEG_INFINITY,
        4.25,
        5e300,
        -0.0,
        7.0,
    ];
    let src_u = [u64::MAX, 1 << 63, 3, 1 << 40, 5, 6, 7, 8];
    for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
        let [a, b, au, bu] = dispatch(isa, Pairs(&src, &src_u));
        for l in 0..6 {
            let (x, y) = (PAIR_A[l] as usize, PAIR_B[l] as usize);
            assert_eq!(a[l], src[x].to_bits(), "{isa} pair_a lane {l}");
            assert_eq!(b[l], src[y].to_bits(), "{isa} pair_b lane {l}");
            assert_eq!(au[l], src_u[x], "{isa} pair_a_u lane {l}");
            assert_eq!(bu[l], src_u[y], "{isa} pair_b_u lane {l}");
        }
    }
}

struct Arith<'a>(&'a [f64]);

/// Per chunk: add, sub, mul, div, max, abs, fma (lane pairs from a permute).
type ArithOut = Vec<[[f64; 8]; 7]>;

impl WithLanes for Arith<'_> {
    type Output = (ArithOut, Vec<[u8; 3]>);
    #[inline(always)]
    fn run<L: Lanes>(self) -> Self::Output {
        let p = L::perm([3, 3, 0, 7, 1, 6, 2, 5]);
        let values = self
            .0
            .chunks_exact(8)
            .map(|c| {
                let c: &[f64; 8] = c.try_into().unwrap();
                let (x, y) = (L::load(c), L::permute(c, &p));
                let mut out = [[0.0; 8]; 7];
                let got = [
                    x.add(y),
                    x.sub(y),
                    x.mul(y),
                    x.div(y),
                    x.max(y),
                    x.abs(),
                    x.fma(y, L::splat(0.25)),
                ];
                for (o, g) in out.iter_mut().zip(got) {
                    g.store(o);
                }
                out
            })
            .collect();
        // Masks: every bit pattern round-trips; and, or, andnot on pairs of them.
        let masks = (0..=255u8)
            .map(|a| {
                let b = a.rotate_left(3) ^ 0x5a;
                let (ma, mb) = (L::mask(a), L::mask(b));
                assert_eq!(L::bits(ma), a, "mask round trip");
                [
                    L::bits(L::and(ma, mb)),
                    L::bits(L::or(ma, mb)),
                    L::bits(L::andnot(ma, mb)),
                ]
            })
            .collect();
        (values, masks)
    }
}

#[test]
fn arithmetic_max_and_masks_match_the_scalar_definitions() {
    let xs = samples();
    let (want, want_masks) = dispatch(Isa::Scalar, Arith(&xs));
    for (a, m) in want_masks.iter().enumerate() {
        let b = (a as u8).rotate_left(3) ^ 0x5a;
        assert_eq!(*m, [a as u8 & b, a as u8 | b, a as u8 & !b]);
    }
    for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
        let (got, masks) = dispatch(isa, Arith(&xs));
        assert_eq!(masks, want_masks, "{isa} masks");
        for (g, w) in got.iter().zip(&want) {
            // Exact operations, max (the second operand where either is NaN) and abs: bits.
            for op in 0..6 {
                for l in 0..8 {
                    let (g, w) = (g[op][l], w[op][l]);
                    assert!(
                        g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan() && op < 4),
                        "{isa} op {op}: {g} vs {w}"
                    );
                }
            }
            // fma: fused or not, within two roundings of the scalar multiply and add.
            for l in 0..8 {
                let (g, w) = (g[6][l], w[6][l]);
                assert!(
                    g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= 4.5e-16 * w.abs(),
                    "{isa} fma: {g} vs {w}"
                );
            }
        }
    }
}
