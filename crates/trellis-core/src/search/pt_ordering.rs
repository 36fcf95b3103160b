//! Ordering by Pythia's transverse-momentum evolution variable: the pair of pseudojets with the
//! smallest `p²⊥evol = z (1 − z) m²(p_i + p_j)`, `z = E_i / (E_i + E_j)` its energy share,
//! merges by the E scheme until one pseudojet is left.
//!
//! Why this variable: Pythia 8's final-state shower (the "simple" shower that made the jets of
//! `data/pythia/`) orders its branchings a → b c in `p²⊥evol = z (1 − z) (Q² − m0²)`, with `Q²`
//! the virtuality of the branching parton, `m0` its on-shell mass (0 for gluons and light
//! quarks) and `z` the energy share of a daughter (Sjöstrand and Skands, Eur. Phys. J. C 39
//! (2005) 129). Reading the shower backwards, the last branching has the smallest `p²⊥evol`.
//! Clustering knows only the final four-momenta, so it takes `Q²` as the pair's squared mass
//! (their leaf sum: the recoils of a dipole shower move it, see `data/pythia/README.md`), `m0 =
//! 0`, and `z` in the frame the leaves are given in (for e+e− jets the centre-of-mass frame;
//! Pythia's `z` lives in the rest frame of the radiating dipole, the same frame for the first
//! branching of an event and a boosted one later). For a soft, collinear pair this is the
//! squared relative transverse momentum, as the kt distance is, but symmetric in the pair and
//! built from the mass rather than the angle. Under [`Veto::Below`]`(t_cut)` no pair lighter
//! than `t_cut` merges while another pair may ([`super::recombine`]); ties go to the pair of
//! smaller mass, then to the first in index order.

use super::recombine::{add, checked, recombine, Veto};
use super::SearchError;
use crate::model::ginkgo::{mass2, FourVector};
use crate::tree::Tree;

/// `z (1 − z) m²` of merging two pseudojets of energies `ea`, `eb` and summed four-momentum
/// `p` (`z = 1/2` when the energies sum to 0 or less).
pub fn pt_evolution(ea: f64, eb: f64, p: &FourVector) -> f64 {
    let total = ea + eb;
    let z = if total > 0.0 { ea / total } else { 0.5 };
    z * (1.0 - z) * mass2(p)
}

/// The tree of `leaves` ordered by `z (1 − z) m²` under `veto` (leaf i of the tree is
/// `leaves[i]`).
pub fn pt_evolution_ordering(leaves: &[FourVector], veto: Veto) -> Result<Tree, SearchError> {
    checked(leaves, veto)?;
    recombine(
        leaves,
        veto,
        |_| (0.0, ()),
        |a, b| {
            let p = add(&a.p, &b.p);
            (pt_evolution(a.p[0], b.p[0], &p), mass2(&p))
        },
    )
}
