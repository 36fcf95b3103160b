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

use super::{check_leaves, SearchError};
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

/// A pseudojet: its four-momentum, its kinematics and the tree of leaves it holds.
#[derive(Clone, Debug)]
struct Pseudojet {
    p: FourVector,
    weight: f64,
    y: f64,
    phi: f64,
    tree: Tree,
}

impl Pseudojet {
    fn new(p: FourVector, exponent: f64, tree: Tree) -> Self {
        let (pt2, y, phi) = kinematics(&p);
        Self {
            p,
            weight: pt2.powf(exponent),
            y,
            phi,
            tree,
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

/// ΔR² = Δy² + Δφ² with Δφ wrapped into [0, π].
fn delta_r2(a: &Pseudojet, b: &Pseudojet) -> f64 {
    let mut dphi = (a.phi - b.phi).abs();
    if dphi > std::f64::consts::PI {
        dphi = std::f64::consts::TAU - dphi;
    }
    let dy = a.y - b.y;
    dy * dy + dphi * dphi
}

/// The tree of generalised kt with exponent `algorithm.p()` and radius `r` over `leaves`
/// (four-momenta [E, p_x, p_y, p_z]; leaf i of the tree is `leaves[i]`).
pub fn generalised_kt(
    leaves: &[FourVector],
    algorithm: KtAlgorithm,
    r: f64,
) -> Result<Tree, SearchError> {
    let n = check_leaves(leaves.len())?;
    let p = algorithm.p();
    if !p.is_finite() {
        return Err(SearchError::Invalid(format!(
            "the kt exponent p is {p}; give a finite p (1 kt, 0 Cambridge/Aachen, -1 anti-kt)"
        )));
    }
    if !(r > 0.0 && r.is_finite()) {
        return Err(SearchError::Invalid(format!(
            "the jet radius R is {r}; give a finite R > 0 (e.g. 1)"
        )));
    }
    if let Some(i) = leaves.iter().position(|v| v.iter().any(|x| !x.is_finite())) {
        return Err(SearchError::Invalid(format!(
            "leaf {i} has a non-finite momentum component; every E, px, py, pz must be finite"
        )));
    }
    let r2 = r * r;
    let mut jets: Vec<Pseudojet> = leaves
        .iter()
        .enumerate()
        .map(|(i, &v)| Pseudojet::new(v, p, Tree::leaf(i)))
        .collect();
    while jets.len() > 1 {
        // (d, ΔR², i, j) of the closest pair; strict comparisons keep the first in index order.
        let mut best = (f64::INFINITY, f64::INFINITY, 0, 1);
        for i in 0..jets.len() {
            for j in i + 1..jets.len() {
                let dr2 = delta_r2(&jets[i], &jets[j]);
                let w = jets[i].weight.min(jets[j].weight);
                let d = if dr2 == 0.0 { 0.0 } else { w * dr2 / r2 };
                if d < best.0 || (d == best.0 && dr2 < best.1) {
                    best = (d, dr2, i, j);
                }
            }
        }
        let (_, _, i, j) = best;
        let b = jets.swap_remove(j);
        let a = jets.swap_remove(i);
        let sum = [
            a.p[0] + b.p[0],
            a.p[1] + b.p[1],
            a.p[2] + b.p[2],
            a.p[3] + b.p[3],
        ];
        let tree = Tree::join(a.tree, b.tree)
            .map_err(|e| SearchError::Invalid(format!("kt: joining two pseudojets failed: {e}")))?;
        // Keep the merged pseudojet at the lower index (the order the pairs are scanned in).
        jets.push(Pseudojet::new(sum, p, tree));
        let last = jets.len() - 1;
        jets.swap(i.min(last), last);
    }
    debug_assert_eq!(jets[0].tree.n_leaves(), n);
    Ok(jets.pop().expect("one pseudojet left").tree)
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
                let mut cl: Vec<(u64, FourVector)> = leaves
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| (1u64 << i, v))
                    .collect();
                let mut want = Vec::new();
                while cl.len() > 1 {
                    let feat = |v: &FourVector| {
                        let pt2 = v[1] * v[1] + v[2] * v[2];
                        let y = 0.5 * ((v[0] + v[3]) / (v[0] - v[3])).ln();
                        (pt2.powf(alg.p()), y, v[2].atan2(v[1]))
                    };
                    let mut best = (f64::INFINITY, 0, 0);
                    for i in 0..cl.len() {
                        for j in i + 1..cl.len() {
                            let (wi, yi, fi) = feat(&cl[i].1);
                            let (wj, yj, fj) = feat(&cl[j].1);
                            let dphi = (fi - fj).rem_euclid(std::f64::consts::TAU);
                            let dphi = dphi.min(std::f64::consts::TAU - dphi);
                            let d = wi.min(wj) * ((yi - yj).powi(2) + dphi * dphi);
                            if d < best.0 {
                                best = (d, i, j);
                            }
                        }
                    }
                    let (_, i, j) = best;
                    let (b, a) = (cl.remove(j), cl.remove(i));
                    let s = [
                        a.1[0] + b.1[0],
                        a.1[1] + b.1[1],
                        a.1[2] + b.1[2],
                        a.1[3] + b.1[3],
                    ];
                    want.push(a.0 | b.0);
                    cl.push((a.0 | b.0, s));
                }
                want.sort_unstable();
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
