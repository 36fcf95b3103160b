//! The generator's lane kernel ([`super::generator`]) split by split against the model's own
//! function, on every instruction set: `-inf` exactly where the model's value is, the fast
//! value within `1e-13 (1 + |value|)` of it, the upper bound never below it (and within
//! `1e-9 (1 + |value|)`), and the exact value the model's bits.

use super::cross::{self, Direct, Paired};
use super::energy::{Energy, LanePsi};
use super::energy_tests::{generator_models, uniforms};
use super::generator::GeneratorLanes;
use super::{consts, SLOT_A, SLOT_B};
use crate::model::ginkgo_generator::{GeneratorStat, U_MAX};
use crate::model::GinkgoGeneratorModel;
use crate::simd::{dispatch, Isa, Lanes, WithLanes};

/// Every split of every group of two or more upper leaves, by the kernel: per split the
/// model's value, the fast value, the upper bound and the exact value.
struct Probe<'a>(&'a GeneratorLanes<'a>);

impl WithLanes for Probe<'_> {
    type Output = Vec<[f64; 4]>;
    fn run<L: Lanes>(self) -> Vec<[f64; 4]> {
        let k = self.0;
        let n = k.n_leaves();
        let mut out = Vec::new();
        for g in 0u64..1 << (n - 3) {
            if g.count_ones() < 2 {
                continue;
            }
            let c = consts(k, g);
            let vs = [cross::slots::<_, L>(0, &c), cross::slots::<_, L>(1, &c)];
            let steps = cross::steps(k, g, &vs);
            let mut a = (g - 1) & g;
            while a != 0 {
                let (ba, bb) = (k.block_stat(a as usize), k.block_stat((g ^ a) as usize));
                for (v, step) in steps.iter().enumerate() {
                    let live = if v == 0 {
                        vs[0].live_for(a, g)
                    } else {
                        vs[1].live
                    };
                    let psi = if v == 0 {
                        GeneratorLanes::log_psi(step, &Direct, a, &ba, &bb, live)
                    } else {
                        GeneratorLanes::log_psi(step, &Paired, a, &ba, &bb, live)
                    };
                    let (mut lp, mut up, mut ex) = ([0.0; 8], [0.0; 8], [0.0; 8]);
                    psi.lp().store(&mut lp);
                    psi.lp_up().store(&mut up);
                    k.exact(&psi, live).store(&mut ex);
                    let bits = L::bits(live);
                    for l in 0..8 {
                        if bits >> l & 1 == 1 {
                            let j = 8 * v + l;
                            let sa = (a << 3) | SLOT_A[j] as u64;
                            let sb = ((g ^ a) << 3) | SLOT_B[j] as u64;
                            out.push([k.log_psi_scalar(sa, sb), lp[l], up[l], ex[l]]);
                        }
                    }
                }
                a = (a - 1) & g;
            }
        }
        out
    }
}

fn check(what: &str, m: &GinkgoGeneratorModel, finite: &mut usize) {
    check_kernel(what, &GeneratorLanes::new(m).unwrap(), finite);
}

fn check_kernel(what: &str, k: &GeneratorLanes<'_>, finite: &mut usize) {
    for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
        for [want, lp, up, exact] in dispatch(isa, Probe(k)) {
            let at = format!("{what} {isa}: model {want:e}, fast {lp:e}, bound {up:e}");
            assert_eq!(exact.to_bits(), want.to_bits(), "{at}, exact {exact:e}");
            if want == f64::NEG_INFINITY {
                assert_eq!(lp, want, "{at}");
                assert_eq!(up, want, "{at}");
                continue;
            }
            *finite += 1;
            let scale = 1.0 + want.abs();
            assert!((lp - want).abs() <= 1e-13 * scale, "{at}");
            assert!(up >= want && up - want <= 1e-9 * scale, "{at}");
        }
    }
}

#[test]
fn generator_kernel_matches_the_model_split_by_split_on_every_isa() {
    let mut finite = 0;
    for (name, m) in generator_models(4, 11) {
        check(&name, &m, &mut finite);
        // The fit's range of rates: exponentials far below 1 and near it.
        for lambda in [0.01, 50.0] {
            let m = GinkgoGeneratorModel::new(m.leaves().to_vec(), m.t_cut(), lambda).unwrap();
            check(&format!("{name} lambda={lambda}"), &m, &mut finite);
        }
    }
    assert!(finite > 100_000, "few finite splits: {finite}");
}

/// Statistics no jet has, one per subset, drawn from values at the kernel's edges: child over
/// parent within a few ulps of `U_MAX` (where the fast path hands the support test to the
/// model), parents beyond `2^±200`, `τ` and `K` below `2^-400`, zero, NaN and impossible leaves.
#[test]
fn generator_kernel_matches_the_model_on_made_up_statistics() {
    let leaves = vec![[1.0, 0.0, 0.0, 0.0]; 7];
    let (mut finite, mut near_umax) = (0, 0);
    for seed in 1..=6u64 {
        let mut u = uniforms(seed);
        let mut pick = |n: usize| ((u() * n as f64) as usize).min(n - 1);
        for lambda in [0.01, 1.5, 50.0] {
            let ulp = f64::EPSILON;
            let n = 6 + (seed as usize % 2);
            let m = GinkgoGeneratorModel::new(leaves[..n].to_vec(), 1e-300, lambda).unwrap();
            // Parents whose reciprocal rounds, and children a few ulps around U_MAX times
            // them, among them pairs where `tA (1 / tP)` and `tA / tP` fall on opposite sides
            // of U_MAX.
            let mut flips = Vec::new();
            let mut b = 0.3;
            while flips.len() < 4 {
                b *= 1.37;
                for k in -3..=3 {
                    let t = b * U_MAX * (1.0 + k as f64 * ulp);
                    if (t / b < U_MAX) != (t * (1.0 / b) < U_MAX) {
                        flips.extend([b, t]);
                    }
                }
            }
            let menu: Vec<f64> = [
                1e-3,
                0.0,
                1e-55,
                3e-58,
                1e70,
                1e-70,
                1e160,
                3e-160,
                1e-300,
                f64::NAN,
                2.5,
                0.3,
            ]
            .into_iter()
            .chain(flips)
            .chain((-3..=3).map(|k| 2.5 * U_MAX * (1.0 + k as f64 * ulp)))
            .collect();
            let stats: Vec<GeneratorStat> = (0..1usize << n)
                .map(|i| {
                    let t = menu[pick(menu.len())];
                    GeneratorStat {
                        t,
                        sqrt_t: t.sqrt(),
                        impossible_leaf: i.count_ones() == 1 && pick(5) == 0,
                    }
                })
                .collect();
            near_umax += (1..stats.len())
                .flat_map(|p| {
                    let stats = &stats;
                    (1..p)
                        .filter(move |a| a & p == *a)
                        .map(move |a| stats[a].t / stats[p].t)
                })
                .filter(|r| (r - U_MAX).abs() <= 4.0 * ulp)
                .count();
            let k = GeneratorLanes::with_stats(&m, stats);
            check_kernel(
                &format!("made up seed={seed} lambda={lambda}"),
                &k,
                &mut finite,
            );
        }
    }
    assert!(near_umax > 200, "few children near U_MAX: {near_umax}");
    assert!(finite > 1_000, "few finite splits: {finite}");
}
