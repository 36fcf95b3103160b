//! Eight `f64` lanes for the exact trellis's inner loops, in the instruction sets of the CPU,
//! chosen at run time: on x86-64 AVX-512 (one 512-bit register) and AVX2 with FMA (two 256-bit
//! registers), on 64-bit ARM NEON (four 128-bit registers), and everywhere plain scalar code
//! (eight values in an array), behind one trait, [`Lanes`], so that a loop is written once and
//! compiled per instruction set (each instance inside a function compiled for its instruction
//! set; the trait's methods are `#[inline(always)]` so that they are compiled with it).
//!
//! Two kinds of arithmetic:
//! - **Exact**: `add`, `sub`, `mul`, `div`, comparisons, selections, [`Lanes::ln`]: the same
//!   IEEE operations in every instruction set, hence the same bits ([`Lanes::ln`] performs
//!   [`crate::numeric::ln`]'s operations lane by lane). The trellis's `log psi`, MAP values and
//!   finite-tree counts use only these, so they are the same on every machine.
//! - **Accurate**: [`Lanes::fma`] (fused where the hardware has it, a rounded multiply and add
//!   in the scalar set) and [`Lanes::exp`] (a polynomial with fused steps, relative error under
//!   1e-15): the log-sum-exp's terms. Their last bits depend on the instruction set (never on the
//!   thread count or the run).
//!
//! [`Isa::detect`] picks the widest set the CPU has; the environment variable
//! `TRELLIS_LAB_SIMD=scalar|avx2|avx512` (on ARM `scalar|neon`) narrows it (to compare them in
//! one build).

mod scalar;
// The x86 sets' tables (unused elsewhere).
#[cfg(target_arch = "x86_64")]
mod tables;
pub use scalar::Scalar8;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
pub use avx2::Avx2;
#[cfg(target_arch = "x86_64")]
pub use avx512::Avx512;

// NEON is in every 64-bit ARM target's baseline (`target_feature = "neon"`); the permutes'
// byte indices assume little-endian lanes.
#[cfg(all(
    target_arch = "aarch64",
    target_feature = "neon",
    target_endian = "little"
))]
mod neon;
#[cfg(all(
    target_arch = "aarch64",
    target_feature = "neon",
    target_endian = "little"
))]
pub use neon::Neon;

/// An instruction set for the eight-lane loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// Plain code, on any CPU.
    Scalar,
    /// NEON (64-bit ARM): four two-lane registers. Ordered below the x86 sets, so that asking
    /// for it on x86-64 gives the scalar code, and asking for an x86 set on ARM gives NEON.
    Neon,
    /// AVX2 and FMA: two four-lane registers.
    Avx2,
    /// AVX-512 (F and DQ): one eight-lane register.
    Avx512,
}

impl Isa {
    /// Every instruction set, narrowest first.
    pub const ALL: [Isa; 4] = [Isa::Scalar, Isa::Neon, Isa::Avx2, Isa::Avx512];

    /// Whether this CPU can run `self`.
    pub fn available(self) -> bool {
        match self {
            Isa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512dq")
                    && Isa::Avx2.available()
            }
            #[cfg(all(
                target_arch = "aarch64",
                target_feature = "neon",
                target_endian = "little"
            ))]
            Isa::Neon => true,
            // The other architecture's sets.
            _ => false,
        }
    }

    /// The widest set this CPU has, narrowed by `TRELLIS_LAB_SIMD` when it is set to one of
    /// `scalar`, `neon`, `avx2`, `avx512` (a wider set than the CPU has, one it lacks, or another
    /// value, is ignored); read once per process.
    pub fn detect() -> Isa {
        static DETECTED: std::sync::OnceLock<Isa> = std::sync::OnceLock::new();
        *DETECTED.get_or_init(Isa::detect_now)
    }

    /// [`Isa::detect`] without its cache (it is read once per process).
    fn detect_now() -> Isa {
        Isa::narrowed(std::env::var("TRELLIS_LAB_SIMD").ok().as_deref())
    }

    /// The widest set this CPU has, or `wanted` (a name [`Isa::parse`] reads) when the CPU has
    /// it and it is not wider.
    fn narrowed(wanted: Option<&str>) -> Isa {
        let best = Isa::ALL
            .into_iter()
            .rev()
            .find(|i| i.available())
            .unwrap_or(Isa::Scalar);
        match wanted.map(Isa::parse) {
            Some(Some(wanted)) if wanted <= best && wanted.available() => wanted,
            _ => best,
        }
    }

    /// `scalar`, `neon`, `avx2` or `avx512`.
    pub fn parse(s: &str) -> Option<Isa> {
        match s.trim().to_ascii_lowercase().as_str() {
            "scalar" => Some(Isa::Scalar),
            "neon" => Some(Isa::Neon),
            "avx2" => Some(Isa::Avx2),
            "avx512" => Some(Isa::Avx512),
            _ => None,
        }
    }

    /// The set [`dispatch`] runs for `self` on this CPU: `self`, or the widest narrower set
    /// the CPU has.
    pub fn effective(self) -> Isa {
        Isa::ALL
            .into_iter()
            .rev()
            .find(|&i| i <= self && i.available())
            .unwrap_or(Isa::Scalar)
    }

    /// Whether the eight-lane full and flat trellises are faster than their split loops with
    /// the lanes of `self` (as [`Isa::effective`]); where they are not, those trellises take
    /// the split loop. Measured on one core with every path narrowed alike
    /// (`TRELLIS_LAB_SIMD=scalar`, as a CPU without AVX2 runs them): the scalar set's lanes
    /// take 1.25 times the split loop's time for the full trellis (N = 17) and about the same
    /// for the flat trellis (N = 16 and 18), while the MAP-only trellis's lanes take 0.57
    /// times its split loop's even in scalar code (so it always takes the lanes).
    pub fn lanes_beat_split_loop(self) -> bool {
        self.effective() != Isa::Scalar
    }

    /// The name [`Isa::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Neon => "neon",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }
}

/// Whether the four-lane AVX2 kernels outside the eight lanes (the split loop's Ginkgo kernel
/// and sums, `ln` of slices) may run: the CPU has AVX2 and `TRELLIS_LAB_SIMD` does not narrow
/// [`Isa::detect`] to the scalar set, so that `TRELLIS_LAB_SIMD=scalar` times every path as a
/// CPU without AVX2 would run it.
#[inline]
pub fn avx2_allowed() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        matches!(Isa::detect(), Isa::Avx2 | Isa::Avx512)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

impl std::fmt::Display for Isa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The lane pairs `(x, y)` of the lane trellises' second vector of slots (the six pairs of
/// non-empty disjoint subsets of the lowest three leaves with the lowest leaf of `x | y` in
/// `x`; lanes 6 and 7 unused), in an order that AVX2 reads with four shuffles: lanes 0-3 of
/// `PAIR_A` lie in source lanes 0-3 and those of `PAIR_B` in 4-7.
pub const PAIR_A: [u8; 8] = [1, 2, 1, 3, 1, 5, 0, 0];
/// See [`PAIR_A`].
pub const PAIR_B: [u8; 8] = [4, 4, 6, 4, 2, 2, 0, 0];

/// Eight `f64` lanes (and eight `u64` lanes, [`Lanes::U`]) with a mask type and a lane
/// permutation. Every method is `#[inline(always)]` in every implementation, and the SIMD
/// implementations may only be used inside functions compiled for their instruction set.
pub trait Lanes: Copy {
    /// One bit per lane.
    type M: Copy;
    /// Eight `u64` lanes.
    type U: Copy;
    /// A fixed choice of source lane for each lane ([`Lanes::perm`]).
    type P: Copy;

    /// The permutation taking lane `idx[l]` (0..8) of the source into lane `l`.
    fn perm(idx: [u8; 8]) -> Self::P;
    /// `x` in every lane.
    fn splat(x: f64) -> Self;
    /// Lanes `src[0..8]`.
    fn load(src: &[f64; 8]) -> Self;
    /// Writes the lanes to `dst`.
    fn store(self, dst: &mut [f64; 8]);
    /// `src[i]` in every lane.
    fn broadcast(src: &[f64; 8], i: usize) -> Self;
    /// `src[i]` in every `u64` lane.
    fn broadcast_u(src: &[u64; 8], i: usize) -> Self::U;
    /// Lanes `src[0..8]`.
    fn load_u(src: &[u64; 8]) -> Self::U;
    /// Lane `l` is `src[p[l]]`.
    fn permute(src: &[f64; 8], p: &Self::P) -> Self;
    /// Lane `l` is `src[p[l]]`.
    fn permute_u(src: &[u64; 8], p: &Self::P) -> Self::U;
    /// Lane `l` is `src[PAIR_A[l]]` for `l < 6` (lanes 6 and 7: unspecified values of
    /// `src`): the first children of the lane trellises' second vector of slots.
    #[inline(always)]
    fn pair_a(src: &[f64; 8]) -> Self {
        Self::permute(src, &Self::perm(PAIR_A))
    }
    /// Lane `l` is `src[PAIR_B[l]]` for `l < 6`, as [`Lanes::pair_a`].
    #[inline(always)]
    fn pair_b(src: &[f64; 8]) -> Self {
        Self::permute(src, &Self::perm(PAIR_B))
    }
    /// [`Lanes::pair_a`] of `u64` lanes.
    #[inline(always)]
    fn pair_a_u(src: &[u64; 8]) -> Self::U {
        Self::permute_u(src, &Self::perm(PAIR_A))
    }
    /// [`Lanes::pair_b`] of `u64` lanes.
    #[inline(always)]
    fn pair_b_u(src: &[u64; 8]) -> Self::U {
        Self::permute_u(src, &Self::perm(PAIR_B))
    }
    /// The `u64` lanes as `f64`, exactly for values below `2^52`.
    fn u_to_f(u: Self::U) -> Self;
    /// Zero in every `u64` lane.
    fn u_zero() -> Self::U;
    /// Writes the `u64` lanes to `dst`.
    fn u_store(u: Self::U, dst: &mut [u64; 8]);

    /// `self + o`.
    fn add(self, o: Self) -> Self;
    /// `self - o`.
    fn sub(self, o: Self) -> Self;
    /// `self * o`.
    fn mul(self, o: Self) -> Self;
    /// `self / o`.
    fn div(self, o: Self) -> Self;
    /// The larger of `self` and `o` (`o` where either is NaN).
    fn max(self, o: Self) -> Self;
    /// `self * b + c`, fused where the hardware has it (accurate, not exact).
    fn fma(self, b: Self, c: Self) -> Self;
    /// `self > o` (false where either is NaN).
    fn gt(self, o: Self) -> Self::M;
    /// `self >= o` (false where either is NaN).
    fn ge(self, o: Self) -> Self::M;
    /// `self < o` (false where either is NaN).
    fn lt(self, o: Self) -> Self::M;
    /// `self == o` (false where either is NaN).
    fn eq(self, o: Self) -> Self::M;
    /// `self != o` (true where either is NaN).
    fn ne(self, o: Self) -> Self::M;
    /// Lane `l` is `a[l]` where `m` has bit `l`, else `b[l]`.
    fn select(m: Self::M, a: Self, b: Self) -> Self;
    /// `a & b`.
    fn and(a: Self::M, b: Self::M) -> Self::M;
    /// `a | b`.
    fn or(a: Self::M, b: Self::M) -> Self::M;
    /// `a & !b`.
    fn andnot(a: Self::M, b: Self::M) -> Self::M;
    /// Bit `l` for lane `l`.
    fn bits(m: Self::M) -> u8;
    /// The mask with bit `l` for lane `l`.
    fn mask(bits: u8) -> Self::M;

    /// [`crate::numeric::ln`] in every lane, operation for operation (the same bits).
    fn ln(self) -> Self;
    /// `ln x` for positive normal finite `x`, within `1e-15 (1 + |ln x|)` of [`Lanes::ln`]
    /// (faster where the instruction set allows, else [`Lanes::ln`] itself:
    /// [`Lanes::LN_FAST_IS_LN`]).
    fn ln_fast(self) -> Self;
    /// Whether [`Lanes::ln_fast`] is [`Lanes::ln`].
    const LN_FAST_IS_LN: bool;
    /// `|x|`.
    fn abs(self) -> Self;
    /// `e^x`, relative error under 1e-15; 0 for `x < -708`, `-inf` and NaN, `e^709` above 709.
    fn exp(self) -> Self;
    /// [`Lanes::exp`] for `x` in `[-700, 700]`, without the range handling: lanes outside it
    /// hold unspecified values (no fault).
    #[inline(always)]
    fn exp_in_range(self) -> Self {
        self.exp()
    }
    /// `(hi, lo) += a * b` (128-bit sums of 64-bit products) in the lanes of `m`. Each product
    /// must fit in 64 bits.
    fn count_add(lo: &mut Self::U, hi: &mut Self::U, a: Self::U, b: Self::U, m: Self::M);
}

/// A computation written once over any [`Lanes`] ([`dispatch`] compiles it per instruction
/// set). Implementations mark `run` `#[inline(always)]`, so that the whole computation is
/// compiled inside the instruction set's entry function.
pub trait WithLanes {
    /// What the computation returns.
    type Output;
    /// The computation over lanes `L`.
    fn run<L: Lanes>(self) -> Self::Output;
}

/// Runs `f` with the lanes of `isa`, or of the widest narrower set the CPU has (in the order of
/// [`Isa`]: on x86-64 `Neon` runs the scalar code, on ARM `Avx2` and `Avx512` run NEON).
pub fn dispatch<F: WithLanes>(isa: Isa, f: F) -> F::Output {
    #[cfg(target_arch = "x86_64")]
    {
        if isa >= Isa::Avx512 && Isa::Avx512.available() {
            // SAFETY: the CPU has every feature the function is compiled for.
            return unsafe { run_avx512(f) };
        }
        if isa >= Isa::Avx2 && Isa::Avx2.available() {
            // SAFETY: as above.
            return unsafe { run_avx2(f) };
        }
    }
    #[cfg(all(
        target_arch = "aarch64",
        target_feature = "neon",
        target_endian = "little"
    ))]
    {
        if isa >= Isa::Neon {
            // NEON is in the target's baseline: no detection, no target_feature function.
            return f.run::<Neon>();
        }
    }
    let _ = isa;
    f.run::<Scalar8>()
}

/// `sum_k e^(z_k - zmax)` (terms below `zmax - 708` count as 0), eight lanes at a time with
/// the lanes of `isa`: eight running sums in slice order, combined pairwise, so the result
/// depends on `isa` but never on the thread count.
pub fn sum_exp(isa: Isa, z: &[f64], zmax: f64) -> f64 {
    dispatch(isa, SumExp { z, zmax })
}

struct SumExp<'a> {
    z: &'a [f64],
    zmax: f64,
}

impl WithLanes for SumExp<'_> {
    type Output = f64;
    #[inline(always)]
    fn run<L: Lanes>(self) -> f64 {
        let m = L::splat(self.zmax);
        let mut acc = L::splat(0.0);
        let chunks = self.z.chunks_exact(8);
        let rest = chunks.remainder();
        for c in chunks {
            let c: &[f64; 8] = c.try_into().expect("chunks of eight");
            acc = acc.add(L::load(c).sub(m).exp());
        }
        // The last terms, padded with -inf (whose exponential is 0).
        let mut last = [f64::NEG_INFINITY; 8];
        last[..rest.len()].copy_from_slice(rest);
        acc = acc.add(L::load(&last).sub(m).exp());
        let mut a = [0.0f64; 8];
        acc.store(&mut a);
        ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx2,fma")]
unsafe fn run_avx512<F: WithLanes>(f: F) -> F::Output {
    f.run::<Avx512>()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2<F: WithLanes>(f: F) -> F::Output {
    f.run::<Avx2>()
}

#[cfg(test)]
mod tests;
