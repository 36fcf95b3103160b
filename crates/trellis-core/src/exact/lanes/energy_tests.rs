//! Every energy with a lane kernel against the split loop, on every instruction set this CPU
//! has (every cluster's MAP value, MAP split and count bit for bit, log Z and the posterior
//! mean log-likelihood to 1e-12) and against the enumeration of every tree on small N; the
//! same bits for 1 and 2 threads. Dasgupta's cost and the HCC energy on random, tied (unit,
//! 0/1, decimal) and negative weights; the generator's density on generated jets, with a
//! raised cut (forbidden parents and impossible leaves: `-inf` everywhere) and non-physical
//! four-vectors.

use super::super::full::{FullTrellis, Tiling};
use super::tests::compare;
use crate::data::ginkgo::{generate_dataset, GinkgoParams};
use crate::model::{
    CorrelationModel, DasguptaModel, GinkgoGeneratorModel, SplitModel, WeightMatrix,
};
use crate::simd::Isa;

/// A xorshift stream of uniforms in [0, 1).
pub(super) fn uniforms(seed: u64) -> impl FnMut() -> f64 {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn weights(n: usize, mut w: impl FnMut(usize, usize) -> f64) -> WeightMatrix {
    let mut upper = vec![vec![0.0; n]; n];
    for (i, row) in upper.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate().skip(i + 1) {
            *x = w(i, j);
        }
    }
    let rows = (0..n)
        .map(|i| (0..n).map(|j| upper[i.min(j)][i.max(j)]).collect())
        .collect();
    WeightMatrix::new(rows).unwrap()
}

/// Weight matrices over `n` points: random, random signed, unit (every tree ties for
/// Dasgupta's cost), two 0/1 cliques, and decimal weights (ties in the last bits).
fn matrices(n: usize, seed: u64) -> Vec<(String, WeightMatrix)> {
    let mut u = uniforms(seed);
    let mut v = uniforms(seed + 1);
    vec![
        ("random".into(), weights(n, |_, _| u())),
        ("signed".into(), weights(n, |_, _| 2.0 * v() - 1.0)),
        ("unit".into(), weights(n, |_, _| 1.0)),
        (
            "cliques".into(),
            weights(n, |i, j| {
                f64::from((i < n / 2) == (j < n / 2) || i + 1 == j)
            }),
        ),
        (
            "decimal".into(),
            weights(n, |i, j| [0.1, 0.2, 0.3][(i * 7 + j) % 3]),
        ),
    ]
}

/// A graph energy (`new`) on every matrix of [`matrices`] over each size, at two temperatures.
fn graph_models<M>(
    what: &str,
    sizes: impl IntoIterator<Item = usize>,
    betas: [f64; 2],
    new: impl Fn(WeightMatrix, f64) -> Result<M, crate::model::ModelError>,
) -> Vec<(String, M)> {
    let mut out = Vec::new();
    for n in sizes {
        for (name, w) in matrices(n, what.len() as u64 * 100 + n as u64) {
            for beta in betas {
                let m = new(w.clone(), beta).unwrap();
                out.push((format!("{what} {name} n={n} beta={beta}"), m));
            }
        }
    }
    out
}

fn dasgupta_models(sizes: impl IntoIterator<Item = usize>) -> Vec<(String, DasguptaModel)> {
    graph_models("dasgupta", sizes, [1.0, 0.37], DasguptaModel::new)
}

fn correlation_models(sizes: impl IntoIterator<Item = usize>) -> Vec<(String, CorrelationModel)> {
    graph_models("hcc", sizes, [1.0, 2.5], CorrelationModel::new)
}

pub(super) fn generator_models(lo: usize, hi: usize) -> Vec<(String, GinkgoGeneratorModel)> {
    let mut out = Vec::new();
    for (params, seed) in [(GinkgoParams::qcd(), 51), (GinkgoParams::w_jet(), 52)] {
        let ds = generate_dataset(&params, 6, lo, hi, seed, 200_000, "gen").unwrap();
        for j in &ds.jets {
            let n = j.leaves.len();
            let m = GinkgoGeneratorModel::new(j.leaves.clone(), j.t_cut, j.lam).unwrap();
            out.push((format!("generator {} n={n}", j.name), m));
            // A raised cut: forbidden parents; a lowered one: impossible leaves.
            for (what, cut) in [("raised", 40.0 * j.t_cut), ("lowered", 0.02 * j.t_cut)] {
                let m = GinkgoGeneratorModel::new(j.leaves.clone(), cut, 0.5 * j.lam).unwrap();
                out.push((format!("generator {} n={n} {what} cut", j.name), m));
            }
        }
    }
    // Non-physical four-vectors: zero and equal masses, a massless leaf repeated.
    let mut u = uniforms(7);
    for n in [4usize, 6, 9] {
        let leaves: Vec<[f64; 4]> = (0..n)
            .map(|i| {
                if i % 4 == 3 {
                    [5.0, 3.0, 4.0, 0.0]
                } else {
                    [20.0 * u(), 10.0 * u() - 5.0, 10.0 * u() - 5.0, 10.0 * u()]
                }
            })
            .collect();
        let m = GinkgoGeneratorModel::new(leaves, 1.0, 1.5).unwrap();
        out.push((format!("generator random n={n}"), m));
    }
    out
}

/// The lanes of every available instruction set against the split loop.
fn check_against_split_loop<M: SplitModel>(models: &[(String, M)]) {
    let isas: Vec<Isa> = Isa::ALL.into_iter().filter(|i| i.available()).collect();
    let mut worst = 0.0f64;
    for (name, m) in models {
        let want = FullTrellis::build_tiled(m, 32, Tiling::DEFAULT).unwrap();
        for &isa in &isas {
            let got = FullTrellis::build_lanes(m, 32, isa).unwrap();
            worst = worst.max(compare(&format!("{name} {isa}"), &got, &want));
        }
    }
    println!("largest relative log Z difference: {worst:e} ({isas:?})");
}

#[test]
fn dasgupta_lanes_match_the_split_loop_on_every_isa() {
    check_against_split_loop(&dasgupta_models([4, 5, 7, 9, 12]));
}

#[test]
fn correlation_lanes_match_the_split_loop_on_every_isa() {
    check_against_split_loop(&correlation_models([4, 6, 8, 11]));
}

#[test]
fn generator_lanes_match_the_split_loop_on_every_isa() {
    let models = generator_models(4, 12);
    let forbidden = models.iter().any(|(_, m)| {
        let t = FullTrellis::build_tiled(m, 32, Tiling::DEFAULT).unwrap();
        t.cells.iter().skip(1).any(|c| c.log_z == f64::NEG_INFINITY)
    });
    assert!(forbidden, "some model has a cluster with no finite tree");
    check_against_split_loop(&models);
}

/// Log Z alone ([`FullTrellis::log_partition_only`]) has the bits of the full build's log Z,
/// every energy, every instruction set (the scalar set through the split loop), and below
/// the lanes' smallest size.
#[test]
fn log_z_alone_has_the_full_build_s_bits() {
    fn check<M: SplitModel>(what: &str, m: &M) {
        for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
            let want = FullTrellis::build_with_isa(m, 32, isa)
                .unwrap()
                .log_partition();
            let got = FullTrellis::log_partition_only_isa(m, 32, isa).unwrap();
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "{what} {isa}: {got} vs {want}"
            );
        }
        let err = FullTrellis::log_partition_only(m, m.n_leaves() - 1);
        assert!(
            matches!(err, Err(crate::exact::ExactError::TooManyLeaves { .. })),
            "{what}: {err:?}"
        );
    }
    for (name, m) in dasgupta_models([2, 3, 4, 7, 11]) {
        check(&name, &m);
    }
    for (name, m) in correlation_models([3, 6, 10]) {
        check(&name, &m);
    }
    let models = generator_models(3, 12);
    assert!(models
        .iter()
        .any(|(_, m)| { FullTrellis::log_partition_only(m, 32).unwrap() == f64::NEG_INFINITY }));
    for (name, m) in &models {
        check(name, m);
    }
    let ds = generate_dataset(&GinkgoParams::qcd(), 4, 3, 12, 62, 200_000, "z").unwrap();
    for j in &ds.jets {
        check(&j.name, &j.model().unwrap());
    }
}

/// Log Z, the MAP value and the count of finite trees of the lanes against every tree.
fn check_against_enumeration<M: SplitModel>(what: &str, m: &M) {
    let (finite, max, lz) = crate::exact::enumerate_trees(m);
    let close = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
        let t = FullTrellis::build_lanes(m, 32, isa).unwrap();
        assert_eq!(t.n_trees_finite(), finite, "{what} {isa}");
        assert!(close(t.map_log_likelihood(), max), "{what} {isa}");
        assert!(close(t.log_partition(), lz), "{what} {isa}");
        assert!(close(t.map_tree().log_likelihood(m), max), "{what} {isa}");
    }
}

#[test]
fn every_energy_s_lanes_match_the_enumeration() {
    for (name, m) in dasgupta_models([4, 5, 6, 7]) {
        check_against_enumeration(&name, &m);
    }
    for (name, m) in correlation_models([4, 5, 6, 7]) {
        check_against_enumeration(&name, &m);
    }
    for (name, m) in generator_models(4, 7) {
        check_against_enumeration(&name, &m);
    }
}

/// The lanes of every available instruction set give the same bits for 1 and 2 threads.
pub(super) fn same_bits_for_one_and_two_threads<M: SplitModel>(m: &M) {
    for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| FullTrellis::build_lanes(m, 32, isa).unwrap())
        };
        let (one, two) = (run(1), run(2));
        for (x, y) in one.cells.iter().zip(&two.cells) {
            assert_eq!(x.log_z.to_bits(), y.log_z.to_bits(), "{isa}");
            assert_eq!(x.mean_log_phi.to_bits(), y.mean_log_phi.to_bits());
            assert_eq!(x.map.to_bits(), y.map.to_bits());
            assert_eq!(x.count(), y.count());
        }
        assert_eq!(one.map_split, two.map_split);
    }
}

#[test]
fn every_energy_s_lanes_give_the_same_bits_for_one_and_two_threads() {
    let (_, d) = dasgupta_models([13]).swap_remove(0);
    same_bits_for_one_and_two_threads(&d);
    let (_, c) = correlation_models([13]).swap_remove(1);
    same_bits_for_one_and_two_threads(&c);
    let (_, g) = generator_models(13, 13).swap_remove(0);
    same_bits_for_one_and_two_threads(&g);
}

/// The MAP-tie count in the lanes' own pass against the second pass
/// ([`crate::exact::map_ties`]), at several tolerances, on every instruction set: every
/// energy's models (ties by construction among them) and Ginkgo jets.
#[test]
fn tie_counts_in_the_same_pass_match_the_second_pass() {
    fn check<M: SplitModel>(what: &str, m: &M, most: &mut u128) {
        let want_t = FullTrellis::build_tiled(m, 32, Tiling::DEFAULT).unwrap();
        for tol in [crate::exact::TIE_TOLERANCE, 0.0, 1e-4, 0.3] {
            let want = want_t.n_map_trees(m, tol).unwrap();
            *most = (*most).max(want);
            for isa in Isa::ALL.into_iter().filter(|i| i.available()) {
                let got = FullTrellis::build_with_ties_isa(m, 32, tol, isa).unwrap();
                assert_eq!(got.map_ties.map(|x| x.0), Some(tol), "{what} {isa} {tol}");
                let n = got.n_map_trees(m, tol).unwrap();
                assert_eq!(n, want, "{what} {isa} tolerance {tol}");
            }
        }
    }
    let mut most = 0;
    for (name, m) in dasgupta_models([4, 6, 9, 11]) {
        check(&name, &m, &mut most);
    }
    for (name, m) in correlation_models([4, 7, 10]) {
        check(&name, &m, &mut most);
    }
    for (name, m) in generator_models(4, 10) {
        check(&name, &m, &mut most);
    }
    let ds = generate_dataset(&GinkgoParams::qcd(), 4, 5, 11, 61, 200_000, "ties").unwrap();
    for j in &ds.jets {
        check(&j.name, &j.model().unwrap(), &mut most);
    }
    assert!(most > 1000, "few ties: {most}");
}
