//! The lane trellis against the split loop, on every instruction set this CPU has: every
//! cluster's MAP value, MAP split and count bit for bit, log Z and the posterior mean
//! log-likelihood to 1e-12; on generated jets of 4 to 13 leaves, with a raised cut (many
//! forbidden clusters), a separate root rate, and non-physical four-vectors (negative masses,
//! the scalar kernel's special cases); and the same bits for 1 and 2 threads.

use super::super::full::{FullTrellis, Tiling};
use crate::data::ginkgo::{generate_dataset, GinkgoParams};
use crate::model::{GinkgoModel, SplitModel};
use crate::simd::Isa;
use crate::subset::Subset;

fn models() -> Vec<(String, GinkgoModel)> {
    let mut out = Vec::new();
    for (params, seed, lo, hi) in [
        (GinkgoParams::qcd(), 41, 4, 9),
        (GinkgoParams::qcd(), 42, 10, 13),
        (GinkgoParams::w_jet(), 43, 8, 13),
    ] {
        let ds = generate_dataset(&params, 10, lo, hi, seed, 200_000, "lanes").unwrap();
        for j in &ds.jets {
            let m = j.model().unwrap();
            out.push((format!("{} n={}", j.name, m.n_leaves()), m.clone()));
            // A cut in the middle of the jet's masses forbids many clusters; a separate root rate.
            let raised = GinkgoModel::new(m.leaves().to_vec(), 40.0 * m.t_cut(), m.lambda())
                .unwrap()
                .with_root_rate(3.0 * m.lambda())
                .unwrap();
            out.push((format!("{} raised cut", j.name), raised));
        }
    }
    // Non-physical four-vectors: clusters with negative or zero squared mass, equal masses.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    for n in [4usize, 6, 9, 11] {
        let leaves: Vec<[f64; 4]> = (0..n)
            .map(|i| {
                if i % 4 == 3 {
                    [5.0, 3.0, 4.0, 0.0] // massless, repeated
                } else {
                    [
                        20.0 * next(),
                        10.0 * next() - 5.0,
                        10.0 * next() - 5.0,
                        10.0 * next(),
                    ]
                }
            })
            .collect();
        out.push((
            format!("random n={n}"),
            GinkgoModel::new(leaves, 1.0, 1.5).unwrap(),
        ));
    }
    out
}

/// Asserts that `got` (lane trellis) and `want` (split loop) agree on every cluster.
pub(super) fn compare(what: &str, got: &FullTrellis, want: &FullTrellis) -> f64 {
    let n = want.n_leaves();
    let mut worst = 0.0f64;
    for b in 1..1u64 << n {
        let s = Subset(b);
        let (g, w) = (&got.cells[b as usize], &want.cells[b as usize]);
        assert_eq!(g.map.to_bits(), w.map.to_bits(), "{what} {b:#x}: MAP");
        assert_eq!(g.count(), w.count(), "{what} {b:#x}: count");
        assert_eq!(
            got.map_split[b as usize], want.map_split[b as usize],
            "{what} {b:#x}: MAP split"
        );
        if w.log_z == f64::NEG_INFINITY || g.log_z == f64::NEG_INFINITY {
            assert_eq!(g.log_z, w.log_z, "{what} {b:#x}: log Z");
            continue;
        }
        let rel = (g.log_z - w.log_z).abs() / w.log_z.abs().max(1.0);
        assert!(
            rel <= 1e-12,
            "{what} {b:#x}: log Z {} vs {}",
            g.log_z,
            w.log_z
        );
        worst = worst.max(rel);
        let e = (g.mean_log_phi - w.mean_log_phi).abs() / w.mean_log_phi.abs().max(1.0);
        assert!(
            e <= 1e-12,
            "{what} {b:#x}: E {} vs {}",
            g.mean_log_phi,
            w.mean_log_phi
        );
        let _ = s;
    }
    assert_eq!(got.map_tree(), want.map_tree(), "{what}: MAP tree");
    worst
}

#[test]
fn lanes_match_the_split_loop_on_every_isa() {
    let isas: Vec<Isa> = Isa::ALL.into_iter().filter(|i| i.available()).collect();
    let mut worst = 0.0f64;
    for (name, m) in models() {
        let want = FullTrellis::build_tiled(&m, 32, Tiling::DEFAULT).unwrap();
        for &isa in &isas {
            let got = FullTrellis::build_lanes(&m, 32, isa).unwrap();
            worst = worst.max(compare(&format!("{name} {isa}"), &got, &want));
        }
    }
    println!("largest relative log Z difference: {worst:e} ({isas:?})");
}

#[test]
fn lanes_give_the_same_bits_for_one_and_two_threads() {
    let ds = generate_dataset(&GinkgoParams::w_jet(), 1, 14, 14, 44, 1_000_000, "t").unwrap();
    super::energy_tests::same_bits_for_one_and_two_threads(&ds.jets[0].model().unwrap());
}

#[test]
fn map_lanes_match_the_full_trellis_on_every_isa() {
    use crate::exact::MapTrellis;
    let isas: Vec<Isa> = Isa::ALL.into_iter().filter(|i| i.available()).collect();
    for (name, m) in models() {
        let want = FullTrellis::build_tiled(&m, 32, Tiling::DEFAULT).unwrap();
        let old = MapTrellis::build_split_loop(&m, 32).unwrap();
        for &isa in &isas {
            let got = MapTrellis::build_with_isa(&m, 32, isa).unwrap();
            for b in 1..1usize << m.n_leaves() {
                let w = want.cells[b].map;
                assert_eq!(
                    got.map[b].to_bits(),
                    w.to_bits(),
                    "{name} {isa} {b:#x}: MAP"
                );
                assert_eq!(
                    old.map[b].to_bits(),
                    w.to_bits(),
                    "{name} split loop {b:#x}"
                );
                if w != f64::NEG_INFINITY {
                    assert_eq!(got.map_split[b], want.map_split[b], "{name} {isa} {b:#x}");
                }
            }
            assert_eq!(got.map_tree(), want.map_tree(), "{name} {isa}");
            assert_eq!(got.splits_visited(), old.splits_visited());
            assert!(got.splits_scored() <= got.splits_visited());
        }
    }
}

/// The dispatch: the scalar set's full trellis is the split loop (its lanes are slower there),
/// bit for bit, and every vector set available takes the lanes.
#[test]
fn the_scalar_set_takes_the_split_loop_and_vector_sets_the_lanes() {
    assert!(!Isa::Scalar.lanes_beat_split_loop());
    for isa in Isa::ALL {
        assert_eq!(
            isa.lanes_beat_split_loop(),
            isa.effective() != Isa::Scalar,
            "{isa}"
        );
        assert!(isa.effective() <= isa && isa.effective().available());
    }
    #[cfg(target_arch = "x86_64")]
    for isa in [Isa::Avx2, Isa::Avx512] {
        assert_eq!(isa.lanes_beat_split_loop(), isa.available(), "{isa}");
    }
    let ds = generate_dataset(&GinkgoParams::w_jet(), 1, 11, 11, 45, 1_000_000, "d").unwrap();
    let m = ds.jets[0].model().unwrap();
    let split = FullTrellis::build_tiled(&m, 32, Tiling::DEFAULT).unwrap();
    let dispatched = FullTrellis::build_with_isa(&m, 32, Isa::Scalar).unwrap();
    for b in 1..1usize << m.n_leaves() {
        let (x, y) = (&dispatched.cells[b], &split.cells[b]);
        assert_eq!(x.log_z.to_bits(), y.log_z.to_bits(), "{b:#x}");
        assert_eq!(x.mean_log_phi.to_bits(), y.mean_log_phi.to_bits());
    }
    // The lanes sum in another order: their log Z differs from the split loop's in the last
    // bits somewhere (so the comparison above tells the two paths apart).
    let lanes = FullTrellis::build_lanes(&m, 32, Isa::Scalar).unwrap();
    assert!((1..1usize << m.n_leaves())
        .any(|b| lanes.cells[b].log_z.to_bits() != split.cells[b].log_z.to_bits()));
}

/// The lanes' leaf term `log1mexp` against the model's (libm's `exp_m1`, `ln_1p`), on every
/// instruction set: within `3e-15 (1 + |value|)` over its whole range, both sides of `ln 2`.
#[test]
fn lanes_log1mexp_matches_the_model_on_every_isa() {
    use super::ginkgo::log1mexp;
    use crate::simd::{dispatch, Lanes, WithLanes};
    struct Probe(Vec<f64>);
    impl WithLanes for Probe {
        type Output = Vec<f64>;
        fn run<L: Lanes>(self) -> Vec<f64> {
            let mut out = Vec::new();
            for c in self.0.chunks_exact(8) {
                let mut o = [0.0; 8];
                log1mexp(L::load(c.try_into().unwrap())).store(&mut o);
                out.extend(o);
            }
            out
        }
    }
    // Log-uniform over the range, plus the ends and both sides of ln 2.
    let mut xs: Vec<f64> = (0..4000)
        .map(|i| 10f64.powf(-290.0 + (290.0 + 700f64.log10()) * i as f64 / 3999.0))
        .collect();
    let ln2 = std::f64::consts::LN_2;
    xs.extend([
        1e-290,
        700.0,
        ln2,
        ln2.next_up(),
        ln2.next_down(),
        0.5,
        1.0,
        1e-8,
        36.0,
    ]);
    while !xs.len().is_multiple_of(8) {
        xs.push(1.0);
    }
    for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
        let got = dispatch(isa, Probe(xs.clone()));
        for (&x, &g) in xs.iter().zip(&got) {
            let want = crate::model::log1mexp(x);
            let err = (g - want).abs() / (1.0 + want.abs());
            assert!(
                err <= 3e-15,
                "{isa:?}: log1mexp({x:e}) = {g:e}, model {want:e}"
            );
        }
    }
}
