//! The methods of this kind: the exact MAP and the two searches of the Ginkgo likelihood, and the
//! physics clusterings a jet physicist runs on the same leaves, each with and without the t_cut
//! veto; and the tree each builds.
//!
//! **The veto is the knowledge the model has.** The Ginkgo likelihood gives a tree with a
//! cluster lighter than the jet's `t_cut` likelihood 0, so the exact MAP, beam search and greedy
//! never make one when any other tree is allowed. A physics clustering run with the veto
//! ([`crate::search::Veto`]) is told the same number: it never merges a pair lighter than
//! `t_cut` while another pair may merge. The model's only other knowledge is its rate λ (fitted
//! to the jets without their truth trees) and the shape of its density, which prefers children
//! much lighter than their parent; the invariant-mass ordering is the physicist's version of
//! that preference.
//!
//! The physics clusterings (all by E-scheme recombination, clustered to one jet, in their e+e−
//! form unless `kt = "pp"`, which changes kt, Cambridge/Aachen and anti-kt only):
//! - kt, Cambridge/Aachen and anti-kt: FastJet's `ee_genkt_algorithm` with p = 1, 0, −1;
//! - Durham (FastJet's `ee_kt_algorithm`): the same order as e+e− kt, so the same trees (a
//!   property of every run checks it);
//! - invariant-mass ordering (the JADE algorithm, E scheme): the lightest pair first;
//! - ordering by Pythia's p⊥ evolution variable `z (1 − z) m²` ([`crate::search::pt_ordering`]
//!   says why this form).

use super::KtForm;
use crate::data::ginkgo::Jet;
use crate::search::{
    durham, ee_generalised_kt_with_veto, generalised_kt_with_veto, invariant_mass_ordering,
    pt_evolution_ordering, KtAlgorithm, Veto,
};
use crate::tree::Tree;
use anyhow::Result;

/// A method of this kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PMethod {
    /// The exact MAP tree (full trellis, or the MAP-only trellis above `full_max_leaves`).
    Trellis,
    /// Beam search.
    Beam,
    /// Greedy agglomeration.
    Greedy,
    /// kt (p = 1).
    Kt,
    /// kt with the t_cut veto.
    KtVeto,
    /// Cambridge/Aachen (p = 0).
    CambridgeAachen,
    /// Cambridge/Aachen with the t_cut veto.
    CambridgeAachenVeto,
    /// anti-kt (p = −1).
    AntiKt,
    /// anti-kt with the t_cut veto.
    AntiKtVeto,
    /// Durham.
    Durham,
    /// Durham with the t_cut veto.
    DurhamVeto,
    /// Invariant-mass ordering (JADE).
    MassOrdering,
    /// Invariant-mass ordering with the t_cut veto.
    MassOrderingVeto,
    /// Ordering by `z (1 − z) m²`.
    PtOrdering,
    /// Ordering by `z (1 − z) m²` with the t_cut veto.
    PtOrderingVeto,
    /// The truth tree.
    Truth,
}

impl PMethod {
    /// Every method, in table and chart order.
    pub const ALL: [PMethod; 16] = [
        PMethod::Trellis,
        PMethod::Beam,
        PMethod::Greedy,
        PMethod::Kt,
        PMethod::KtVeto,
        PMethod::CambridgeAachen,
        PMethod::CambridgeAachenVeto,
        PMethod::AntiKt,
        PMethod::AntiKtVeto,
        PMethod::Durham,
        PMethod::DurhamVeto,
        PMethod::MassOrdering,
        PMethod::MassOrderingVeto,
        PMethod::PtOrdering,
        PMethod::PtOrderingVeto,
        PMethod::Truth,
    ];

    /// The methods whose tree depends on λ (they search the Ginkgo likelihood).
    pub const MODEL: [PMethod; 3] = [PMethod::Trellis, PMethod::Beam, PMethod::Greedy];

    /// The name in tables and measures.
    pub fn name(self) -> &'static str {
        match self {
            PMethod::Trellis => "trellis",
            PMethod::Beam => "beam",
            PMethod::Greedy => "greedy",
            PMethod::Kt => "kt",
            PMethod::KtVeto => "kt_veto",
            PMethod::CambridgeAachen => "cambridge_aachen",
            PMethod::CambridgeAachenVeto => "cambridge_aachen_veto",
            PMethod::AntiKt => "anti_kt",
            PMethod::AntiKtVeto => "anti_kt_veto",
            PMethod::Durham => "durham",
            PMethod::DurhamVeto => "durham_veto",
            PMethod::MassOrdering => "mass_ordering",
            PMethod::MassOrderingVeto => "mass_ordering_veto",
            PMethod::PtOrdering => "pt_ordering",
            PMethod::PtOrderingVeto => "pt_ordering_veto",
            PMethod::Truth => "truth",
        }
    }

    /// The name in charts.
    pub fn display(self) -> &'static str {
        match self {
            PMethod::Trellis => "Exact MAP (trellis)",
            PMethod::Beam => "Beam search",
            PMethod::Greedy => "Greedy",
            PMethod::Kt => "kt",
            PMethod::KtVeto => "kt + t_cut veto",
            PMethod::CambridgeAachen => "Cambridge/Aachen",
            PMethod::CambridgeAachenVeto => "Cambridge/Aachen + veto",
            PMethod::AntiKt => "anti-kt",
            PMethod::AntiKtVeto => "anti-kt + veto",
            PMethod::Durham => "Durham",
            PMethod::DurhamVeto => "Durham + veto",
            PMethod::MassOrdering => "invariant mass (JADE)",
            PMethod::MassOrderingVeto => "invariant mass + veto",
            PMethod::PtOrdering => "z(1−z)m² (Pythia pT order)",
            PMethod::PtOrderingVeto => "z(1−z)m² + veto",
            PMethod::Truth => "Truth",
        }
    }

    /// The method named `name`.
    pub fn from_name(name: &str) -> Option<PMethod> {
        PMethod::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Its position in [`PMethod::ALL`].
    pub fn index(self) -> usize {
        PMethod::ALL
            .iter()
            .position(|&m| m == self)
            .unwrap_or(usize::MAX)
    }

    /// Whether it is a physics clustering (no likelihood, no λ).
    pub fn is_physics(self) -> bool {
        !matches!(
            self,
            PMethod::Trellis | PMethod::Beam | PMethod::Greedy | PMethod::Truth
        )
    }

    /// Whether it is a physics clustering run with the t_cut veto.
    pub fn vetoed(self) -> bool {
        matches!(
            self,
            PMethod::KtVeto
                | PMethod::CambridgeAachenVeto
                | PMethod::AntiKtVeto
                | PMethod::DurhamVeto
                | PMethod::MassOrderingVeto
                | PMethod::PtOrderingVeto
        )
    }

    /// The kt family as physicists run it (no veto).
    pub fn is_kt_family(self) -> bool {
        matches!(
            self,
            PMethod::Kt | PMethod::CambridgeAachen | PMethod::AntiKt
        )
    }

    /// The same method without the veto (itself when it has none).
    pub fn without_veto(self) -> PMethod {
        match self {
            PMethod::KtVeto => PMethod::Kt,
            PMethod::CambridgeAachenVeto => PMethod::CambridgeAachen,
            PMethod::AntiKtVeto => PMethod::AntiKt,
            PMethod::DurhamVeto => PMethod::Durham,
            PMethod::MassOrderingVeto => PMethod::MassOrdering,
            PMethod::PtOrderingVeto => PMethod::PtOrdering,
            m => m,
        }
    }

    /// The tree of a physics clustering on `jet` (`None` for the other methods).
    pub fn physics_tree(self, jet: &Jet, form: KtForm) -> Option<Result<Tree>> {
        let veto = if self.vetoed() {
            Veto::Below(jet.t_cut)
        } else {
            Veto::None
        };
        let kt = |alg: KtAlgorithm| match form {
            KtForm::Ee => ee_generalised_kt_with_veto(&jet.leaves, alg, veto),
            KtForm::Pp => generalised_kt_with_veto(&jet.leaves, alg, 1.0, veto),
        };
        let tree = match self.without_veto() {
            PMethod::Kt => kt(KtAlgorithm::Kt),
            PMethod::CambridgeAachen => kt(KtAlgorithm::CambridgeAachen),
            PMethod::AntiKt => kt(KtAlgorithm::AntiKt),
            PMethod::Durham => durham(&jet.leaves, veto),
            PMethod::MassOrdering => invariant_mass_ordering(&jet.leaves, veto),
            PMethod::PtOrdering => pt_evolution_ordering(&jet.leaves, veto),
            _ => return None,
        };
        Some(tree.map_err(|e| anyhow::anyhow!("jet {:?}, {}: {e}", jet.name, self.name())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_each_vetoed_method_has_its_free_twin() {
        for (i, m) in PMethod::ALL.iter().enumerate() {
            assert_eq!(PMethod::from_name(m.name()), Some(*m));
            assert_eq!(m.index(), i);
            if m.vetoed() {
                let free = m.without_veto();
                assert!(free != *m && free.is_physics() && !free.vetoed());
                assert!(free.index() + 1 == i, "{m:?} follows {free:?}");
            }
        }
        let physics = PMethod::ALL.iter().filter(|m| m.is_physics()).count();
        let vetoed = PMethod::ALL.iter().filter(|m| m.vetoed()).count();
        assert_eq!((physics, vetoed), (12, 6));
    }
}
