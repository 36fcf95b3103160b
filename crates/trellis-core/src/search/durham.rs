//! The Durham algorithm (Catani, Dokshitzer, Olsson, Turnock and Webber, Phys. Lett. B 269
//! (1991) 432; FastJet's `ee_kt_algorithm`), clustered to one jet: the pair with the smallest
//! `y_ij = 2 min(E_i², E_j²)(1 − cos θ_ij) / Q²` merges by the E scheme until one pseudojet is
//! left. `Q²` (the visible energy squared) divides every distance alike and cannot change the
//! order, so it is left out. Its distances are twice those of the e+e− kt algorithm
//! ([`super::ee_generalised_kt`] with p = 1), computed with the same `1 − cos θ`
//! (`|n_i − n_j|² / 2` of the unit directions), so its trees are that algorithm's, tie for tie;
//! the test beside it checks this, and `tests/core/ee_kt.rs` checks both against FastJet.
//! Under [`Veto::Below`]`(t_cut)` no pair lighter than `t_cut` merges while another pair may
//! ([`super::recombine`]).

use super::recombine::{checked, direction, one_minus_cos, recombine, Veto};
use super::SearchError;
use crate::model::ginkgo::FourVector;
use crate::tree::Tree;

/// The Durham tree of `leaves` under `veto` (leaf i of the tree is `leaves[i]`); ties go to the
/// first pair in index order, then by angle.
pub fn durham(leaves: &[FourVector], veto: Veto) -> Result<Tree, SearchError> {
    checked(leaves, veto)?;
    recombine(
        leaves,
        veto,
        // E² as e+e− kt computes it (`powf`), so that the two agree bit for bit.
        |v| (v[0].max(0.0).powf(2.0), direction(v)),
        |a, b| {
            let angle = one_minus_cos(&a.kin, &b.kin);
            (2.0 * a.weight.min(b.weight) * angle, angle)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{ee_generalised_kt_with_veto, KtAlgorithm};
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    /// Durham's trees are e+e− kt's, with and without the veto, on random wide jets with
    /// massive and massless leaves, some along the beam.
    #[test]
    fn durham_is_ee_kt_tie_for_tie() {
        let mut rng = StdRng::seed_from_u64(21);
        for case in 0..200 {
            let n = 2 + case % 14;
            let leaves: Vec<FourVector> = (0..n)
                .map(|k| {
                    let e = 0.3 + 30.0 * rng.random::<f64>();
                    let (theta, phi) = if k == 0 && case % 5 == 0 {
                        (0.0, 0.0)
                    } else {
                        (
                            std::f64::consts::PI * rng.random::<f64>(),
                            std::f64::consts::TAU * rng.random::<f64>(),
                        )
                    };
                    let p = e * (1.0 - 0.2 * rng.random::<f64>() * f64::from(case % 2 == 0));
                    [
                        e,
                        p * theta.sin() * phi.cos(),
                        p * theta.sin() * phi.sin(),
                        p * theta.cos(),
                    ]
                })
                .collect();
            for veto in [Veto::None, Veto::Below(4.0), Veto::Below(1e4)] {
                let d = durham(&leaves, veto).unwrap();
                let kt = ee_generalised_kt_with_veto(&leaves, KtAlgorithm::Kt, veto).unwrap();
                assert_eq!(d.clusters(), kt.clusters(), "case {case}, {veto:?}");
            }
        }
    }

    #[test]
    fn bad_input_is_a_one_line_error() {
        assert!(matches!(durham(&[], Veto::None), Err(SearchError::Empty)));
        let ok = [[1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0]];
        let e = durham(&ok, Veto::Below(f64::NAN)).unwrap_err().to_string();
        assert!(e.contains("t_cut") && !e.contains('\n'), "{e}");
        let e = durham(&ok, Veto::Below(-1.0)).unwrap_err().to_string();
        assert!(e.contains("t_cut"), "{e}");
    }
}
