//! Sequential recombination, the machinery every physics clustering of this crate shares: the
//! pair of pseudojets with the smallest distance is merged by the E scheme (four-momenta add)
//! until one pseudojet is left, and the merges make the tree.
//!
//! **The t_cut veto.** [`Veto::Below`]`(t_cut)` forbids merging a pair whose summed
//! four-momentum has squared mass below `t_cut` while any other pair may merge: at each step the
//! closest pair among those with `m²(p_i + p_j) ≥ t_cut` merges, and only when no pair reaches
//! `t_cut` does the closest pair of all. This is the knowledge the Ginkgo likelihood has and the
//! exact MAP uses: it gives any tree with a cluster lighter than `t_cut` likelihood 0
//! ([`crate::model::GinkgoModel`]: a split with `m²(parent) < t_cut` is forbidden), and a
//! cluster's four-momentum is the sum of its leaves'. With the veto, a clustering never makes a
//! forbidden cluster unless every remaining pair would be one.

use super::{check_leaves, SearchError};
use crate::model::ginkgo::{mass2, FourVector};
use crate::tree::Tree;

/// Whether a clustering avoids clusters lighter than a cut (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Veto {
    /// Every pair may merge: the algorithm as physicists run it.
    #[default]
    None,
    /// No pair with `m²(p_i + p_j) < t_cut` merges while another pair may.
    Below(f64),
}

impl Veto {
    /// `Veto::Below(t_cut)` for `Some(t_cut)`, `Veto::None` for `None`.
    pub fn from_cut(t_cut: Option<f64>) -> Veto {
        t_cut.map_or(Veto::None, Veto::Below)
    }

    /// Whether a pair of summed four-momentum `p` may merge.
    #[inline]
    fn allows(self, p: &FourVector) -> bool {
        match self {
            Veto::None => true,
            Veto::Below(t_cut) => mass2(p) >= t_cut,
        }
    }

    /// A one-line error for a cut that is NaN, infinite or negative.
    fn check(self) -> Result<(), SearchError> {
        match self {
            Veto::Below(t) if !(t.is_finite() && t >= 0.0) => Err(SearchError::Invalid(format!(
                "the veto's t_cut is {t}; give a finite t_cut >= 0 (the Ginkgo model's cut on squared mass)"
            ))),
            _ => Ok(()),
        }
    }
}

/// A pseudojet: its four-momentum, its weight, the kinematics `K` its distances need, and the
/// tree of leaves it holds.
#[derive(Clone, Debug)]
pub(crate) struct Pseudojet<K> {
    /// The summed four-momentum.
    pub p: FourVector,
    /// What the algorithm weighs it by (p_T^{2p}, E^{2p}, E, ...).
    pub weight: f64,
    /// Kinematics for the distances (rapidity and azimuth, a direction, ...).
    pub kin: K,
    tree: Tree,
}

/// The checks every algorithm makes: 1 to 64 leaves, each component finite, a valid veto;
/// the number of leaves.
pub(crate) fn checked(leaves: &[FourVector], veto: Veto) -> Result<usize, SearchError> {
    let n = check_leaves(leaves.len())?;
    if let Some(i) = leaves.iter().position(|v| v.iter().any(|x| !x.is_finite())) {
        return Err(SearchError::Invalid(format!(
            "leaf {i} has a non-finite momentum component; every E, px, py, pz must be finite"
        )));
    }
    veto.check()?;
    Ok(n)
}

/// The sum of two four-momenta.
#[inline]
pub(crate) fn add(a: &FourVector, b: &FourVector) -> FourVector {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]]
}

/// The unit direction of a four-momentum's three-momentum (+z for none, as FastJet's e+e−
/// algorithms take it).
pub(crate) fn direction(p: &FourVector) -> [f64; 3] {
    let norm = (p[1] * p[1] + p[2] * p[2] + p[3] * p[3]).sqrt();
    if norm > 0.0 {
        [p[1] / norm, p[2] / norm, p[3] / norm]
    } else {
        [0.0, 0.0, 1.0]
    }
}

/// `1 − cos θ` of two unit directions, as `|n_i − n_j|² / 2` (no cancellation at small angles).
#[inline]
pub(crate) fn one_minus_cos(x: &[f64; 3], y: &[f64; 3]) -> f64 {
    let dn = [x[0] - y[0], x[1] - y[1], x[2] - y[2]];
    0.5 * (dn[0] * dn[0] + dn[1] * dn[1] + dn[2] * dn[2])
}

/// Sequential recombination of `leaves` into one pseudojet: `make(p)` gives a pseudojet's weight
/// and kinematics, `pair(a, b)` the distance of two and a second key for ties; the pair with the
/// smallest (distance, key) among those `veto` allows merges (among all pairs when it allows
/// none; further ties: the first pair in index order), four-momenta added (the E scheme), the
/// merged pseudojet taking the lower index. The caller checks the leaves ([`checked`]).
pub(crate) fn recombine<K>(
    leaves: &[FourVector],
    veto: Veto,
    make: impl Fn(&FourVector) -> (f64, K),
    pair: impl Fn(&Pseudojet<K>, &Pseudojet<K>) -> (f64, f64),
) -> Result<Tree, SearchError> {
    let new = |p: FourVector, tree: Tree| {
        let (weight, kin) = make(&p);
        Pseudojet {
            p,
            weight,
            kin,
            tree,
        }
    };
    let mut jets: Vec<Pseudojet<K>> = leaves
        .iter()
        .enumerate()
        .map(|(i, &v)| new(v, Tree::leaf(i)))
        .collect();
    while jets.len() > 1 {
        // (d, key, i, j) of the closest pair of all and of the closest pair the veto allows;
        // strict comparisons keep the first in index order.
        let mut any = (f64::INFINITY, f64::INFINITY, 0, 1);
        let mut allowed: Option<(f64, f64, usize, usize)> = None;
        for i in 0..jets.len() {
            for j in i + 1..jets.len() {
                let (d, key) = pair(&jets[i], &jets[j]);
                if d < any.0 || (d == any.0 && key < any.1) {
                    any = (d, key, i, j);
                }
                if veto != Veto::None && veto.allows(&add(&jets[i].p, &jets[j].p)) {
                    match allowed {
                        Some(b) if !(d < b.0 || (d == b.0 && key < b.1)) => {}
                        _ => allowed = Some((d, key, i, j)),
                    }
                }
            }
        }
        let (_, _, i, j) = allowed.unwrap_or(any);
        let b = jets.swap_remove(j);
        let a = jets.swap_remove(i);
        let tree = Tree::join(a.tree, b.tree).map_err(|e| {
            SearchError::Invalid(format!("recombination: joining two pseudojets failed: {e}"))
        })?;
        // Keep the merged pseudojet at the lower index (the order the pairs are scanned in).
        jets.push(new(add(&a.p, &b.p), tree));
        let last = jets.len() - 1;
        jets.swap(i.min(last), last);
    }
    Ok(jets.pop().expect("one pseudojet left").tree)
}
