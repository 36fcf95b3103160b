//! Sequential-recombination jet algorithms: the generalised kt family (kt, Cambridge/Aachen,
//! anti-kt), the trees every particle physicist builds, as baselines beside the trellis.
//!
//! Every leaf (and merged pseudojet) has transverse momentum p_T² = p_x² + p_y², rapidity
//! y = ½ ln((E + p_z)/(E − p_z)) (computed as sign(p_z)·½ ln((E + |p_z|)²/(p_T² + m²)), which
//! has no cancellation, with m² = max(E² − |p|², 0)) and azimuth φ = atan2(p_y, p_x) in [0, 2π).
//! The distance of a pair is d_ij = min(p_Ti^{2p}, p_Tj^{2p})·ΔR²_ij/R² with
//! ΔR² = Δy² + Δφ² (Δφ wrapped into [0, π]); p = 1 is kt, p = 0 Cambridge/Aachen, p = −1
//! anti-kt. The closest pair is merged by the E-scheme (four-momenta add) until one pseudojet is
//! left: exclusive clustering of the whole jet into one tree, without the beam distance d_iB
//! (as the trellis papers compare trees over all of a jet's leaves). Ties go to the first pair in
//! index order; pairs whose d is +∞ (p < 0 and both p_T = 0) are ordered by ΔR².
//!
//! Conventions follow FastJet: a particle with p_T = 0 has φ = 0, and one with E = |p_z| and
//! p_T = 0 has y = ±(10⁵ + |p_z|).
//!
//! [`ee_generalised_kt`] is the same family in the form for e+e− collisions (FastJet's
//! `ee_genkt_algorithm`): energies and angles, d_ij = min(E_i^{2p}, E_j^{2p})·(1 − cos θ_ij),
//! which a rotation of the whole event leaves unchanged (jets from e+e− collisions point
//! anywhere, close to the beam axis too, where p_T and rapidity say little about a jet).

use super::recombine::{checked as checked_leaves, direction, one_minus_cos, recombine, Veto};
use super::SearchError;
use crate::model::ginkgo::FourVector;
use crate::tree::Tree;

/// Rapidity given to particles along the beam (E = |p_z|, p_T = 0), as FastJet does.
const MAX_RAPIDITY: f64 = 1e5;

/// A member of the generalised kt family.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KtAlgorithm {
    /// p = 1: softest, closest pairs first.
    Kt,
    /// p = 0: angular distance only.
    CambridgeAachen,
    /// p = −1: hard particles collect their neighbourhood first.
    AntiKt,
    /// Any exponent p.
    Generalised(f64),
}

impl KtAlgorithm {
    /// The exponent p of p_T^{2p}.
    pub fn p(self) -> f64 {
        match self {
            KtAlgorithm::Kt => 1.0,
            KtAlgorithm::CambridgeAachen => 0.0,
            KtAlgorithm::AntiKt => -1.0,
            KtAlgorithm::Generalised(p) => p,
        }
    }
}

/// (p_T², y, φ) of a four-momentum [E, p_x, p_y, p_z].
pub fn kinematics(p: &FourVector) -> (f64, f64, f64) {
    let [e, px, py, pz] = *p;
    let pt2 = px * px + py * py;
    let phi = if pt2 == 0.0 {
        0.0
    } else {
        let a = py.atan2(px);
        if a < 0.0 {
            a + std::f64::consts::TAU
        } else {
            a
        }
    };
    let m2 = (e * e - pt2 - pz * pz).max(0.0);
    let denom = pt2 + m2;
    let y = if denom == 0.0 {
        if pz == 0.0 {
            0.0
        } else {
            pz.signum() * (MAX_RAPIDITY + pz.abs())
        }
    } else {
        pz.signum() * 0.5 * ((e + pz.abs()).powi(2) / denom).ln()
    };
    (pt2, y, phi)
}

/// ΔR² = Δy² + Δφ² of two (y, φ), with Δφ wrapped into [0, π].
fn delta_r2(a: &(f64, f64), b: &(f64, f64)) -> f64 {
    let mut dphi = (a.1 - b.1).abs();
    if dphi > std::f64::consts::PI {
        dphi = std::f64::consts::TAU - dphi;
    }
    let dy = a.0 - b.0;
    dy * dy + dphi * dphi
}

/// The checks both forms make (the leaves, the veto, a finite exponent); the number of leaves.
fn checked(leaves: &[FourVector], p: f64, veto: Veto) -> Result<usize, SearchError> {
    let n = checked_leaves(leaves, veto)?;
    if !p.is_finite() {
        return Err(SearchError::Invalid(format!(
            "the kt exponent p is {p}; give a finite p (1 kt, 0 Cambridge/Aachen, -1 anti-kt)"
        )));
    }
    Ok(n)
}

/// The tree of generalised kt with exponent `algorithm.p()` and radius `r` over `leaves`
/// (four-momenta [E, p_x, p_y, p_z]; leaf i of the tree is `leaves[i]`).
pub fn generalised_kt(
    leaves: &[FourVector],
    algorithm: KtAlgorithm,
    r: f64,
) -> Result<Tree, SearchError> {
    generalised_kt_with_veto(leaves, algorithm, r, Veto::None)
}

/// [`generalised_kt`] under `veto` ([`Veto::Below`]`(t_cut)`: no pair lighter than `t_cut`
/// merges while another pair may; see [`super::recombine`]).
pub fn generalised_kt_with_veto(
    leaves: &[FourVector],
    algorithm: KtAlgorithm,
    r: f64,
    veto: Veto,
) -> Result<Tree, SearchError> {
    let p = algorithm.p();
    let n = checked(leaves, p, veto)?;
    if !(r > 0.0 && r.is_finite()) {
        return Err(SearchError::Invalid(format!(
            "the jet radius R is {r}; give a finite R > 0 (e.g. 1)"
        )));
    }
    let r2 = r * r;
    let tree = recombine(
        leaves,
        veto,
        |v| {
            let (pt2, y, phi) = kinematics(v);
            (pt2.powf(p), (y, phi))
        },
        |a, b| {
            let dr2 = delta_r2(&a.kin, &b.kin);
            let w = a.weight.min(b.weight);
            let d = if dr2 == 0.0 { 0.0 } else { w * dr2 / r2 };
            (d, dr2)
        },
    )?;
    debug_assert_eq!(tree.n_leaves(), n);
    Ok(tree)
}

/// The tree of the e+e− generalised kt algorithm with exponent `algorithm.p()` over `leaves`
/// (FastJet's `ee_genkt_algorithm`, exclusive to one jet): the pair with the smallest
/// `d_ij = min(E_i^{2p}, E_j^{2p}) (1 − cos θ_ij)` is merged by the E-scheme until one
/// pseudojet is left. p = 1 orders pairs as the Durham algorithm (`ee_kt_algorithm`, whose
/// `2 min(E_i², E_j²)(1 − cos θ_ij)` is twice this: [`super::durham`]), p = 0 by angle alone
/// (Cambridge/Aachen), p = −1 as anti-kt. Energies and angles, not p_T and (y, φ): the form for
/// jets from e+e− collisions, which have no beam to measure transverse momenta from and point
/// anywhere, close to the beam axis too. A radius would only rescale every distance, so there
/// is none. `1 − cos θ` is computed as `|n_i − n_j|² / 2` of the unit directions (no
/// cancellation at small angles); ties go to the first pair in index order, and pairs whose d
/// is +∞ or NaN (p < 0 and two particles with E = 0) are ordered by `1 − cos θ`.
pub fn ee_generalised_kt(
    leaves: &[FourVector],
    algorithm: KtAlgorithm,
) -> Result<Tree, SearchError> {
    ee_generalised_kt_with_veto(leaves, algorithm, Veto::None)
}

/// [`ee_generalised_kt`] under `veto` ([`Veto::Below`]`(t_cut)`: no pair lighter than `t_cut`
/// merges while another pair may; see [`super::recombine`]).
pub fn ee_generalised_kt_with_veto(
    leaves: &[FourVector],
    algorithm: KtAlgorithm,
    veto: Veto,
) -> Result<Tree, SearchError> {
    let p = algorithm.p();
    let n = checked(leaves, p, veto)?;
    let tree = recombine(
        leaves,
        veto,
        |v| (v[0].max(0.0).powf(2.0 * p), direction(v)),
        |a, b| {
            let angle = one_minus_cos(&a.kin, &b.kin);
            let d = if angle == 0.0 {
                0.0
            } else {
                a.weight.min(b.weight) * angle
            };
            (if d.is_nan() { f64::INFINITY } else { d }, angle)
        },
    )?;
    debug_assert_eq!(tree.n_leaves(), n);
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ginkgo::JetDataset;
    use crate::exact::FullTrellis;
    use crate::subset::Subset;

    /// A massless particle at (p_T, y, φ).
    fn massless(pt: f64, y: f64, phi: f64) -> FourVector {
        [pt * y.cosh(), pt * phi.cos(), pt * phi.sin(), pt * y.sinh()]
    }

    fn cluster_sets(t: &Tree) -> Vec<u64> {
        let mut c: Vec<u64> = t
            .clusters()
            .iter()
            .map(|s| s.bits())
            .filter(|b| b.count_ones() > 1)
            .collect();
        c.sort_unstable();
        c
    }

    fn bits(leaves: &[usize]) -> u64 {
        leaves.iter().map(|&i| 1u64 << i).sum()
    }

    #[test]
    fn kinematics_of_massless_and_massive_particles() {
        let (pt2, y, phi) = kinematics(&massless(3.0, 0.7, 5.5));
        assert!((pt2 - 9.0).abs() < 1e-12 && (y - 0.7).abs() < 1e-12 && (phi - 5.5).abs() < 1e-12);
        // Massive: E² = p² + m², y from the textbook form.
        let p = [10.0, 1.0, 2.0, 6.0];
        let want = 0.5 * ((10.0 + 6.0) / (10.0 - 6.0_f64)).ln();
        assert!((kinematics(&p).1 - want).abs() < 1e-12);
        // Along the beam and at rest.
        assert_eq!(kinematics(&[5.0, 0.0, 0.0, -5.0]).1, -(MAX_RAPIDITY + 5.0));
        assert_eq!(kinematics(&[0.0; 4]), (0.0, 0.0, 0.0));
    }

    #[test]
    fn cambridge_aachen_merges_by_angle_and_wraps_the_azimuth() {
        let tau = std::f64::consts::TAU;
        // A and B straddle φ = 0 (ΔR 0.1 through the wrap); C and D 0.15 apart, 1 away in y.
        let leaves = [
            massless(50.0, 0.0, 0.05),
            massless(1.0, 1.0, 0.0),
            massless(2.0, 0.0, tau - 0.05),
            massless(30.0, 1.0, 0.15),
        ];
        let t = generalised_kt(&leaves, KtAlgorithm::CambridgeAachen, 1.0).unwrap();
        assert_eq!(
            cluster_sets(&t),
            vec![bits(&[0, 2]), bits(&[1, 3]), bits(&[0, 1, 2, 3])]
        );
    }

    #[test]
    fn kt_and_anti_kt_order_by_transverse_momentum() {
        // A hard particle H, two soft ones S1, S2 close to each other and a little further from H.
        let leaves = [
            massless(100.0, 0.0, 0.0),
            massless(1.0, 0.0, 0.40),
            massless(1.0, 0.0, 0.60),
        ];
        // kt: d(S1, S2) = 1·0.04 beats d(H, S1) = 1·0.16: the soft pair first.
        let kt = generalised_kt(&leaves, KtAlgorithm::Kt, 1.0).unwrap();
        assert!(cluster_sets(&kt).contains(&bits(&[1, 2])));
        // anti-kt: d(H, S1) = 1e-4·0.16 beats d(S1, S2) = 0.04: H collects S1 first.
        let akt = generalised_kt(&leaves, KtAlgorithm::AntiKt, 1.0).unwrap();
        assert!(cluster_sets(&akt).contains(&bits(&[0, 1])));
        // R rescales every distance, so it cannot change the exclusive tree.
        let wide = generalised_kt(&leaves, KtAlgorithm::AntiKt, 0.4).unwrap();
        assert_eq!(cluster_sets(&wide), cluster_sets(&akt));
    }

    /// The clusters (bit masks, sorted) of the tree that merges, again and again, the pair of
    /// pseudojets with the smallest `d` (four-momenta added): a direct reference.
    fn reference_clusters(
        leaves: &[FourVector],
        d: impl Fn(&FourVector, &FourVector) -> f64,
    ) -> Vec<u64> {
        let mut cl: Vec<(u64, FourVector)> = leaves
            .iter()
            .enumerate()
            .map(|(i, &v)| (1u64 << i, v))
            .collect();
        let mut want = Vec::new();
        while cl.len() > 1 {
            let mut best = (f64::INFINITY, 0, 0);
            for i in 0..cl.len() {
                for j in i + 1..cl.len() {
                    let dij = d(&cl[i].1, &cl[j].1);
                    if dij < best.0 {
                        best = (dij, i, j);
                    }
                }
            }
            let (_, i, j) = best;
            let (b, a) = (cl.remove(j), cl.remove(i));
            let s = std::array::from_fn(|k| a.1[k] + b.1[k]);
            want.push(a.0 | b.0);
            cl.push((a.0 | b.0, s));
        }
        want.sort_unstable();
        want
    }

    #[test]
    fn matches_a_direct_pairwise_reference_on_random_jets() {
        use rand::rngs::StdRng;
        use rand::{RngExt, SeedableRng};
        let mut rng = StdRng::seed_from_u64(4);
        for case in 0..60 {
            let n = 2 + case % 9;
            let leaves: Vec<FourVector> = (0..n)
                .map(|_| {
                    massless(
                        0.5 + 20.0 * rng.random::<f64>(),
                        2.0 * rng.random::<f64>() - 1.0,
                        std::f64::consts::TAU * rng.random::<f64>(),
                    )
                })
                .collect();
            for alg in [
                KtAlgorithm::Kt,
                KtAlgorithm::CambridgeAachen,
                KtAlgorithm::AntiKt,
            ] {
                let t = generalised_kt(&leaves, alg, 1.0).unwrap();
                // Reference: clusters as leaf sets, distances from the textbook formulas.
                let feat = |v: &FourVector| {
                    let pt2 = v[1] * v[1] + v[2] * v[2];
                    let y = 0.5 * ((v[0] + v[3]) / (v[0] - v[3])).ln();
                    (pt2.powf(alg.p()), y, v[2].atan2(v[1]))
                };
                let want = reference_clusters(&leaves, |a, b| {
                    let ((wi, yi, fi), (wj, yj, fj)) = (feat(a), feat(b));
                    let dphi = (fi - fj).rem_euclid(std::f64::consts::TAU);
                    let dphi = dphi.min(std::f64::consts::TAU - dphi);
                    wi.min(wj) * ((yi - yj).powi(2) + dphi * dphi)
                });
                assert_eq!(cluster_sets(&t), want, "case {case} {alg:?}");
            }
        }
    }

    #[test]
    fn never_beats_the_trellis_map_under_the_ginkgo_likelihood() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/ginkgo_jets/tree_100_n9.json");
        let data = JetDataset::load(&path).unwrap();
        let mut below = 0;
        for jet in data.jets.iter().take(30) {
            let model = jet.model().unwrap();
            let map = FullTrellis::build(&model).unwrap().map_log_likelihood();
            for alg in [
                KtAlgorithm::Kt,
                KtAlgorithm::CambridgeAachen,
                KtAlgorithm::AntiKt,
            ] {
                let t = generalised_kt(&jet.leaves, alg, 1.0).unwrap();
                assert_eq!(t.leaves(), Subset::full(jet.leaves.len()));
                let ll = t.log_likelihood(&model);
                assert!(ll <= map + 1e-9, "{alg:?}: {ll} > MAP {map}");
                below += usize::from(ll < map - 1e-9);
            }
        }
        // The jet algorithms are not the MAP builders: most of their trees score below it.
        assert!(below > 45, "{below} of 90 trees below the MAP");
    }

    /// `v` rotated by the rotation of axis `u` (a unit vector) and angle `a` (Rodrigues).
    fn rotate(v: FourVector, u: [f64; 3], a: f64) -> FourVector {
        let p = [v[1], v[2], v[3]];
        let (c, s) = (a.cos(), a.sin());
        let dot = u[0] * p[0] + u[1] * p[1] + u[2] * p[2];
        let cross = [
            u[1] * p[2] - u[2] * p[1],
            u[2] * p[0] - u[0] * p[2],
            u[0] * p[1] - u[1] * p[0],
        ];
        let r: [f64; 3] = std::array::from_fn(|k| p[k] * c + cross[k] * s + u[k] * dot * (1.0 - c));
        [v[0], r[0], r[1], r[2]]
    }

    /// A massless particle of energy `e` along (θ, φ).
    fn towards(e: f64, theta: f64, phi: f64) -> FourVector {
        let s = theta.sin();
        [e, e * s * phi.cos(), e * s * phi.sin(), e * theta.cos()]
    }

    #[test]
    fn ee_kt_matches_a_direct_reference_and_ignores_rotations() {
        use rand::rngs::StdRng;
        use rand::{RngExt, SeedableRng};
        let mut rng = StdRng::seed_from_u64(9);
        let mut differs_from_pp = 0;
        for case in 0..60 {
            let n = 2 + case % 11;
            // Wide jets around a random axis, some near the beam: massless and massive leaves.
            let theta0 = std::f64::consts::PI * rng.random::<f64>();
            let leaves: Vec<FourVector> = (0..n)
                .map(|_| {
                    let mut v = towards(
                        0.5 + 40.0 * rng.random::<f64>(),
                        theta0 + 1.2 * (rng.random::<f64>() - 0.5),
                        std::f64::consts::TAU * rng.random::<f64>(),
                    );
                    v[0] *= 1.0 + 0.01 * rng.random::<f64>();
                    v
                })
                .collect();
            for alg in [
                KtAlgorithm::Kt,
                KtAlgorithm::CambridgeAachen,
                KtAlgorithm::AntiKt,
            ] {
                let t = ee_generalised_kt(&leaves, alg).unwrap();
                // Reference: the textbook distance with 1 − cos θ from the dot product.
                let norm = |v: &FourVector| (v[1] * v[1] + v[2] * v[2] + v[3] * v[3]).sqrt();
                let want = reference_clusters(&leaves, |a, b| {
                    let cos = (a[1] * b[1] + a[2] * b[2] + a[3] * b[3]) / (norm(a) * norm(b));
                    let w = a[0].powf(2.0 * alg.p()).min(b[0].powf(2.0 * alg.p()));
                    w * (1.0 - cos)
                });
                assert_eq!(cluster_sets(&t), want, "case {case} {alg:?}");
                // The same tree after any rotation of the event; the p_T form is not rotation
                // invariant.
                let u = [0.6, -0.48, 0.64];
                let rotated: Vec<FourVector> = leaves.iter().map(|&v| rotate(v, u, 1.1)).collect();
                let tr = ee_generalised_kt(&rotated, alg).unwrap();
                assert_eq!(cluster_sets(&tr), want, "case {case} {alg:?} rotated");
                let pp = generalised_kt(&rotated, alg, 1.0).unwrap();
                differs_from_pp += usize::from(cluster_sets(&pp) != want);
            }
        }
        assert!(
            differs_from_pp > 20,
            "{differs_from_pp} of 180 trees differ from the p_T form"
        );
    }

    #[test]
    fn ee_kt_orders_by_energy_and_angle() {
        // A hard particle H along x, two soft ones S1, S2 0.4 and 0.6 rad from it in one plane.
        let leaves = [
            towards(100.0, std::f64::consts::FRAC_PI_2, 0.0),
            towards(1.0, std::f64::consts::FRAC_PI_2, 0.40),
            towards(1.0, std::f64::consts::FRAC_PI_2, 0.60),
        ];
        // kt: min(E²)·(1 − cos) is smallest for the soft pair (0.2 rad apart).
        let kt = ee_generalised_kt(&leaves, KtAlgorithm::Kt).unwrap();
        assert!(cluster_sets(&kt).contains(&bits(&[1, 2])));
        // Cambridge/Aachen: the smallest angle, again the soft pair.
        let ca = ee_generalised_kt(&leaves, KtAlgorithm::CambridgeAachen).unwrap();
        assert!(cluster_sets(&ca).contains(&bits(&[1, 2])));
        // anti-kt: 1/E² of the hard particle makes H + S1 the closest pair.
        let akt = ee_generalised_kt(&leaves, KtAlgorithm::AntiKt).unwrap();
        assert!(cluster_sets(&akt).contains(&bits(&[0, 1])));
        // A jet along the beam axis clusters as the same jet turned sideways.
        let along: Vec<FourVector> = leaves
            .iter()
            .map(|&v| rotate(v, [0.0, 1.0, 0.0], -std::f64::consts::FRAC_PI_2))
            .collect();
        assert!(along[0][3] > 99.9);
        for alg in [
            KtAlgorithm::Kt,
            KtAlgorithm::CambridgeAachen,
            KtAlgorithm::AntiKt,
        ] {
            assert_eq!(
                cluster_sets(&ee_generalised_kt(&along, alg).unwrap()),
                cluster_sets(&ee_generalised_kt(&leaves, alg).unwrap())
            );
        }
        // A particle at rest and two identical ones: no NaN, a full tree.
        let odd = [[0.0; 4], [1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]];
        let t = ee_generalised_kt(&odd, KtAlgorithm::AntiKt).unwrap();
        assert_eq!(t.leaves(), Subset::full(3));
        assert!(cluster_sets(&t).contains(&bits(&[1, 2])));
        let e = ee_generalised_kt(&[], KtAlgorithm::Kt).unwrap_err();
        assert!(matches!(e, SearchError::Empty));
        let bad = [[1.0, 0.0, 0.0, 1.0], [f64::NAN, 0.0, 0.0, 0.0]];
        let e = ee_generalised_kt(&bad, KtAlgorithm::Kt)
            .unwrap_err()
            .to_string();
        assert!(e.contains("leaf 1") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn bad_input_is_a_one_line_error() {
        let ok = [massless(1.0, 0.0, 0.0), massless(2.0, 0.1, 0.2)];
        assert!(matches!(
            generalised_kt(&[], KtAlgorithm::Kt, 1.0),
            Err(SearchError::Empty)
        ));
        let e = generalised_kt(&ok, KtAlgorithm::Kt, 0.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("radius") && !e.contains('\n'));
        let e = generalised_kt(&ok, KtAlgorithm::Generalised(f64::NAN), 1.0).unwrap_err();
        assert!(e.to_string().contains("exponent"));
        let bad = [massless(1.0, 0.0, 0.0), [f64::NAN, 0.0, 0.0, 0.0]];
        assert!(generalised_kt(&bad, KtAlgorithm::AntiKt, 1.0)
            .unwrap_err()
            .to_string()
            .contains("leaf 1"));
        let many = vec![massless(1.0, 0.0, 0.0); 65];
        assert!(matches!(
            generalised_kt(&many, KtAlgorithm::Kt, 1.0),
            Err(SearchError::TooManyLeaves { n: 65 })
        ));
    }
}
