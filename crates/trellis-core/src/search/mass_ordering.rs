//! Invariant-mass ordering: the pair of pseudojets with the smallest squared invariant mass
//! `m²(p_i + p_j)` merges by the E scheme until one pseudojet is left. This is the JADE
//! algorithm with E-scheme recombination (`y_ij = M_ij² / E_vis²`; Bartel et al., Z. Phys. C 33
//! (1986) 23) clustered to one jet, and the clustering reading of a virtuality-ordered shower:
//! lighter clusters form first. For massless leaves `m² = 2 E_i E_j (1 − cos θ_ij)`. Under
//! [`Veto::Below`]`(t_cut)` no pair lighter than `t_cut` merges while another pair may
//! ([`super::recombine`]); ties go to the first pair in index order.

use super::recombine::{add, checked, recombine, Veto};
use super::SearchError;
use crate::model::ginkgo::{mass2, FourVector};
use crate::tree::Tree;

/// The invariant-mass-ordered tree of `leaves` under `veto` (leaf i of the tree is
/// `leaves[i]`).
pub fn invariant_mass_ordering(leaves: &[FourVector], veto: Veto) -> Result<Tree, SearchError> {
    checked(leaves, veto)?;
    recombine(
        leaves,
        veto,
        |_| (0.0, ()),
        |a, b| (mass2(&add(&a.p, &b.p)), 0.0),
    )
}
