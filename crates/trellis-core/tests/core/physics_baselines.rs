//! The physics clusterings (`search::{invariant_mass_ordering, pt_evolution_ordering, durham,
//! ee_generalised_kt_with_veto, generalised_kt_with_veto}`), with and without the t_cut veto,
//! against a direct reference computation: clusters as leaf sets, every pair's distance from the
//! textbook formula (1 − cos θ from the dot product, m² = E² − |p|²), the closest pair among
//! those the veto allows merged, four-momenta added. Then the veto itself: a hand example, and on
//! the committed Pythia jets it never makes a cluster lighter than t_cut while another merge was
//! allowed, and it removes every forbidden tree the unvetoed algorithms make.

use crate::common::root;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use trellis_core::data::ginkgo::JetDataset;
use trellis_core::model::ginkgo::FourVector;
use trellis_core::search::{
    durham, ee_generalised_kt_with_veto, generalised_kt_with_veto, invariant_mass_ordering,
    pt_evolution_ordering, KtAlgorithm, Veto,
};
use trellis_core::tree::Tree;

fn m2(p: &FourVector) -> f64 {
    p[0] * p[0] - p[1] * p[1] - p[2] * p[2] - p[3] * p[3]
}

fn cos_theta(a: &FourVector, b: &FourVector) -> f64 {
    let norm = |v: &FourVector| (v[1] * v[1] + v[2] * v[2] + v[3] * v[3]).sqrt();
    (a[1] * b[1] + a[2] * b[2] + a[3] * b[3]) / (norm(a) * norm(b))
}

/// The clusters (bit masks, sorted) of merging, again and again, the closest pair by `d` among
/// the pairs heavier than `t_cut` (all pairs when none is, or when `t_cut` is `None`).
fn reference(
    leaves: &[FourVector],
    t_cut: Option<f64>,
    d: impl Fn(&FourVector, &FourVector) -> f64,
) -> Vec<u64> {
    // (leaf set, summed four-momentum) of each cluster left.
    let mut cl: Vec<(u64, FourVector)> = (0..leaves.len()).map(|i| (1 << i, leaves[i])).collect();
    let sum =
        |a: &FourVector, b: &FourVector| -> FourVector { std::array::from_fn(|k| a[k] + b[k]) };
    let mut out = Vec::new();
    while cl.len() > 1 {
        let pairs: Vec<(usize, usize)> = (0..cl.len())
            .flat_map(|i| (i + 1..cl.len()).map(move |j| (i, j)))
            .collect();
        let allowed: Vec<(usize, usize)> = pairs
            .iter()
            .copied()
            .filter(|&(i, j)| t_cut.is_none_or(|t| m2(&sum(&cl[i].1, &cl[j].1)) >= t))
            .collect();
        let pool = if allowed.is_empty() { &pairs } else { &allowed };
        let &(i, j) = pool
            .iter()
            .min_by(|a, b| d(&cl[a.0].1, &cl[a.1].1).total_cmp(&d(&cl[b.0].1, &cl[b.1].1)))
            .unwrap();
        let (b, a) = (cl.remove(j), cl.remove(i));
        out.push(a.0 | b.0);
        cl.push((a.0 | b.0, sum(&a.1, &b.1)));
    }
    out.sort_unstable();
    out
}

/// `n` leaves within half a radian of a random axis (some near the beam), energies 0.5 to
/// 30.5, masses up to a third of the energy.
fn wide_jet(rng: &mut StdRng, n: usize) -> Vec<FourVector> {
    let axis = std::f64::consts::PI * rng.random::<f64>();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let (e, spread, phi, shrink): (f64, f64, f64, f64) =
            (rng.random(), rng.random(), rng.random(), rng.random());
        let (e, theta) = (0.5 + 30.0 * e, axis + spread - 0.5);
        let (phi, p) = (std::f64::consts::TAU * phi, e * (1.0 - 0.05 * shrink));
        let (s, c) = theta.sin_cos();
        out.push([e, p * s * phi.cos(), p * s * phi.sin(), p * c]);
    }
    out
}

/// The clusters of two or more leaves of `t`, as sorted bit masks.
fn clusters(t: &Tree) -> Vec<u64> {
    let set: std::collections::BTreeSet<u64> = t.clusters().iter().map(|s| s.bits()).collect();
    set.into_iter().filter(|b| b.count_ones() > 1).collect()
}

/// Random wide jets of 2 to 12 leaves around a random axis (some near the beam), light and
/// massive leaves, with a t_cut that vetoes some pairs: each algorithm's tree, with and without
/// the veto, is the reference's.
#[test]
fn every_baseline_matches_a_direct_reference_with_and_without_the_veto() {
    let mut rng = StdRng::seed_from_u64(51);
    let mut vetoed_differs = 0;
    for case in 0..120 {
        let leaves = wide_jet(&mut rng, 2 + case % 11);
        let n = leaves.len();
        // A cut between the lightest pairs and the rest.
        let mut pair_m2: Vec<f64> = (0..n)
            .flat_map(|i| (0..i).map(move |j| (i, j)))
            .map(|(i, j)| m2(&std::array::from_fn(|k| leaves[i][k] + leaves[j][k])))
            .collect();
        pair_m2.sort_by(f64::total_cmp);
        let t_cut = pair_m2[pair_m2.len() / 3];
        for t in [None, Some(t_cut)] {
            let veto = Veto::from_cut(t);
            let e = |v: &FourVector| v[0];
            let cases: Vec<(&str, Tree, Vec<u64>)> = vec![
                (
                    "mass",
                    invariant_mass_ordering(&leaves, veto).unwrap(),
                    reference(&leaves, t, |a, b| m2(&std::array::from_fn(|k| a[k] + b[k]))),
                ),
                (
                    "pt",
                    pt_evolution_ordering(&leaves, veto).unwrap(),
                    reference(&leaves, t, |a, b| {
                        let z = e(a) / (e(a) + e(b));
                        z * (1.0 - z) * m2(&std::array::from_fn(|k| a[k] + b[k]))
                    }),
                ),
                (
                    "durham",
                    durham(&leaves, veto).unwrap(),
                    reference(&leaves, t, |a, b| {
                        2.0 * e(a).min(e(b)).powi(2) * (1.0 - cos_theta(a, b))
                    }),
                ),
                (
                    "ee kt",
                    ee_generalised_kt_with_veto(&leaves, KtAlgorithm::Kt, veto).unwrap(),
                    reference(&leaves, t, |a, b| {
                        e(a).min(e(b)).powi(2) * (1.0 - cos_theta(a, b))
                    }),
                ),
                (
                    "ee C/A",
                    ee_generalised_kt_with_veto(&leaves, KtAlgorithm::CambridgeAachen, veto)
                        .unwrap(),
                    reference(&leaves, t, |a, b| 1.0 - cos_theta(a, b)),
                ),
                (
                    "ee anti-kt",
                    ee_generalised_kt_with_veto(&leaves, KtAlgorithm::AntiKt, veto).unwrap(),
                    reference(&leaves, t, |a, b| {
                        e(a).powi(-2).min(e(b).powi(-2)) * (1.0 - cos_theta(a, b))
                    }),
                ),
                (
                    "pp kt",
                    generalised_kt_with_veto(&leaves, KtAlgorithm::Kt, 1.0, veto).unwrap(),
                    reference(&leaves, t, |a, b| {
                        let feat = |v: &FourVector| {
                            (
                                v[1] * v[1] + v[2] * v[2],
                                0.5 * ((v[0] + v[3]) / (v[0] - v[3])).ln(),
                                v[2].atan2(v[1]),
                            )
                        };
                        let ((pa, ya, fa), (pb, yb, fb)) = (feat(a), feat(b));
                        let dphi = (fa - fb).rem_euclid(std::f64::consts::TAU);
                        let dphi = dphi.min(std::f64::consts::TAU - dphi);
                        pa.min(pb) * ((ya - yb).powi(2) + dphi * dphi)
                    }),
                ),
            ];
            for (name, tree, want) in cases {
                assert_eq!(clusters(&tree), want, "case {case}, {name}, t_cut {t:?}");
                if t.is_some() {
                    let free = match name {
                        "mass" => invariant_mass_ordering(&leaves, Veto::None).unwrap(),
                        _ => continue,
                    };
                    vetoed_differs += usize::from(clusters(&free) != want);
                }
            }
        }
    }
    // The mass ordering merges its lightest pair first: a cut above it must change the tree.
    assert!(
        vetoed_differs > 60,
        "{vetoed_differs} of 120 vetoed trees differ"
    );
}

/// Three leaves: the lightest pair (0, 1) is below the cut, so under the veto the next lightest
/// pair merges first.
#[test]
fn the_veto_skips_a_pair_below_the_cut_while_another_is_allowed() {
    let leaves = [
        [1.0, 1.0, 0.0, 0.0],
        [1.0, 0.9950041652780258, 0.09983341664682815, 0.0],
        [2.0, 2.0 * 0.8775825618903728, 2.0 * 0.479425538604203, 0.0],
    ];
    let light = m2(&std::array::from_fn(|k| leaves[0][k] + leaves[1][k]));
    let next = m2(&std::array::from_fn(|k| leaves[1][k] + leaves[2][k]));
    assert!(light < 0.05 && next > 0.3, "{light} {next}");
    let free = invariant_mass_ordering(&leaves, Veto::None).unwrap();
    assert_eq!(clusters(&free), vec![0b011, 0b111]);
    let vetoed = invariant_mass_ordering(&leaves, Veto::Below(0.1)).unwrap();
    assert_eq!(clusters(&vetoed), vec![0b110, 0b111]);
    // A cut above every pair: nothing is allowed, and the closest pair merges as without it.
    let all = invariant_mass_ordering(&leaves, Veto::Below(1e6)).unwrap();
    assert_eq!(clusters(&all), clusters(&free));
    for t in [
        pt_evolution_ordering(&leaves, Veto::Below(0.1)).unwrap(),
        durham(&leaves, Veto::Below(0.1)).unwrap(),
        ee_generalised_kt_with_veto(&leaves, KtAlgorithm::CambridgeAachen, Veto::Below(0.1))
            .unwrap(),
    ] {
        assert!(!clusters(&t).contains(&0b011));
    }
}

/// On the committed parton-level Pythia jets: a vetoed algorithm's tree has a cluster lighter
/// than t_cut only where no allowed merge was left (never, on these jets), so every vetoed tree
/// has a finite Ginkgo likelihood, while the unvetoed algorithms make forbidden trees.
#[test]
fn on_the_pythia_jets_the_veto_leaves_no_forbidden_tree() {
    let ds = JetDataset::load(&root().join("data/pythia/pythia_parton.json")).unwrap();
    let (mut free_forbidden, mut vetoed_forbidden, mut trees) = (0, 0, 0);
    for j in &ds.jets {
        let m = j.model().unwrap();
        let veto = Veto::Below(j.t_cut);
        let run = |v: Veto| -> Vec<Tree> {
            vec![
                invariant_mass_ordering(&j.leaves, v).unwrap(),
                pt_evolution_ordering(&j.leaves, v).unwrap(),
                durham(&j.leaves, v).unwrap(),
                ee_generalised_kt_with_veto(&j.leaves, KtAlgorithm::CambridgeAachen, v).unwrap(),
                ee_generalised_kt_with_veto(&j.leaves, KtAlgorithm::AntiKt, v).unwrap(),
            ]
        };
        for (free, vetoed) in run(Veto::None).iter().zip(run(veto)) {
            trees += 1;
            free_forbidden += usize::from(free.log_likelihood(&m) == f64::NEG_INFINITY);
            vetoed_forbidden += usize::from(vetoed.log_likelihood(&m) == f64::NEG_INFINITY);
        }
    }
    assert_eq!(trees, 5 * 360);
    assert_eq!(vetoed_forbidden, 0);
    assert!(
        free_forbidden > 100,
        "{free_forbidden} forbidden trees without the veto"
    );
}

#[test]
fn a_bad_cut_is_a_one_line_error() {
    let ok = [[1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0]];
    for t in [f64::NAN, f64::INFINITY, -1.0] {
        for e in [
            invariant_mass_ordering(&ok, Veto::Below(t)).unwrap_err(),
            pt_evolution_ordering(&ok, Veto::Below(t)).unwrap_err(),
            ee_generalised_kt_with_veto(&ok, KtAlgorithm::Kt, Veto::Below(t)).unwrap_err(),
        ] {
            let e = e.to_string();
            assert!(e.contains("t_cut") && !e.contains('\n'), "{e}");
        }
    }
}
