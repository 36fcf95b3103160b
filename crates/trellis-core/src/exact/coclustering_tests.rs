//! [`CoClustering`] against brute-force enumeration of every binary tree (N <= 6), with
//! forbidden (`-inf`) splits, jets and similarity energies.

use super::*;
use crate::data::ginkgo::{generate_dataset, GinkgoParams};
use crate::exact::Marginals;
use crate::model::{log_add_exp, CorrelationModel, DasguptaModel, WeightMatrix};
use crate::tree::Tree;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// A model with forbidden splits: leaves 0 and 1 are never siblings, a leaf never splits off a
/// cluster of more than 3 others; other splits prefer balance.
struct Toy {
    n: usize,
}

impl SplitModel for Toy {
    type Stat = ();
    fn n_leaves(&self) -> usize {
        self.n
    }
    fn stat(&self, _: Subset) {}
    fn log_psi_with(&self, a: Subset, _: &(), b: Subset, _: &(), _: &()) -> f64 {
        if (a == Subset::singleton(0) && b == Subset::singleton(1)) || (a.len() == 1 && b.len() > 3)
        {
            f64::NEG_INFINITY
        } else {
            -((a.len() as f64) - (b.len() as f64)).abs() * 0.7 + 0.05 * (a.bits() % 5) as f64
        }
    }
}

/// Every split is forbidden: no tree has a finite likelihood.
struct Nothing;

impl SplitModel for Nothing {
    type Stat = ();
    fn n_leaves(&self) -> usize {
        4
    }
    fn stat(&self, _: Subset) {}
    fn log_psi_with(&self, _: Subset, _: &(), _: Subset, _: &(), _: &()) -> f64 {
        f64::NEG_INFINITY
    }
}

/// `P(|lca(i, j)| <= k)` by enumeration: `[(k * n + i) * n + j]`.
fn brute(m: &impl SplitModel) -> Vec<f64> {
    let n = m.n_leaves();
    let trees = Tree::enumerate_all(Subset::full(n)).unwrap();
    let ll: Vec<f64> = trees.iter().map(|t| t.log_likelihood(m)).collect();
    let log_z = ll.iter().copied().fold(f64::NEG_INFINITY, log_add_exp);
    let mut out = vec![0.0; (n + 1) * n * n];
    for (t, &l) in trees.iter().zip(&ll) {
        if !l.is_finite() {
            continue;
        }
        let p = (l - log_z).exp();
        let clusters = t.clusters();
        for i in 0..n {
            for j in 0..n {
                let lca = (clusters.iter())
                    .filter(|c| c.contains(i) && c.contains(j))
                    .map(|c| c.len())
                    .min()
                    .unwrap();
                for k in lca..=n {
                    out[(k * n + i) * n + j] += p;
                }
            }
        }
    }
    out
}

fn check(m: &impl SplitModel, label: &str) {
    let n = m.n_leaves();
    let t = FullTrellis::build(m).unwrap();
    let got = CoClustering::compute(&t, m).unwrap();
    assert_eq!(got.n_leaves(), n);
    let want = brute(m);
    for k in 0..=n {
        for i in 0..n {
            for j in 0..n {
                let (g, w) = (got.at_most(k, i, j), want[(k * n + i) * n + j]);
                assert!(
                    (g - w).abs() <= 1e-12,
                    "{label}: k={k} ({i},{j}) {g} vs {w}"
                );
                // Symmetric to the bit.
                assert_eq!(g.to_bits(), got.at_most(k, j, i).to_bits(), "{label}");
                if k > 0 {
                    assert!(g >= got.at_most(k - 1, i, j) - 1e-15, "{label}: monotone");
                }
            }
        }
    }
    // Siblings are the cluster marginals of pairs.
    let marg = Marginals::compute(&t, m).unwrap();
    let sib = got.siblings();
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            let c = marg.cluster(Subset::from_indices([i, j])).unwrap();
            assert!((sib[i * n + j] - c).abs() <= 1e-12, "{label}: siblings");
        }
        assert_eq!(sib[i * n + i], 0.0);
    }
    // E|lca| by enumeration.
    let e = got.expected_lca_size();
    for i in 0..n {
        for j in 0..n {
            let w: f64 = (1..=n)
                .map(|k| k as f64 * (want[(k * n + i) * n + j] - want[((k - 1) * n + i) * n + j]))
                .sum();
            assert!(
                (e[i * n + j] - w).abs() <= 1e-9,
                "{label}: E|lca| {} vs {w}",
                e[i * n + j]
            );
        }
    }
}

fn weights(n: usize, seed: u64, signed: bool) -> WeightMatrix {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut w = vec![vec![0.0; n]; n];
    for (i, j) in (0..n).flat_map(|i| (0..i).map(move |j| (i, j))) {
        let x: f64 = rng.random::<f64>();
        w[i][j] = if signed { 2.0 * x - 1.0 } else { x };
        w[j][i] = w[i][j];
    }
    WeightMatrix::new(w).unwrap()
}

#[test]
fn matches_enumeration_with_forbidden_splits() {
    for n in [1, 3, 4, 5, 6] {
        check(&Toy { n }, &format!("toy n = {n}"));
    }
    // N = 2: the one tree is forbidden.
    let t = FullTrellis::build(&Toy { n: 2 }).unwrap();
    let e = CoClustering::compute(&t, &Toy { n: 2 }).unwrap_err();
    assert!(matches!(e, ExactError::NoFiniteTree), "{e}");
}

#[test]
fn matches_enumeration_on_similarity_energies() {
    for n in 2..=6 {
        let d = DasguptaModel::new(weights(n, n as u64, false), 1.3).unwrap();
        check(&d, &format!("dasgupta n = {n}"));
        let c = CorrelationModel::new(weights(n, 7 + n as u64, true), 2.0).unwrap();
        check(&c, &format!("correlation n = {n}"));
    }
}

#[test]
fn matches_enumeration_on_jets() {
    let ds = generate_dataset(&GinkgoParams::qcd(), 6, 3, 6, 5, 10_000, "q").unwrap();
    for jet in &ds.jets {
        check(&jet.model().unwrap(), &jet.name);
    }
}

#[test]
fn no_finite_tree_is_an_error() {
    let t = FullTrellis::build(&Nothing).unwrap();
    let e = CoClustering::compute(&t, &Nothing).unwrap_err();
    assert!(matches!(e, ExactError::NoFiniteTree), "{e}");
}

#[test]
fn same_bits_at_any_thread_count() {
    let m = DasguptaModel::new(weights(11, 3, false), 0.8).unwrap();
    let t = FullTrellis::build(&m).unwrap();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let a = one.install(|| CoClustering::compute(&t, &m).unwrap());
    let b = CoClustering::compute(&t, &m).unwrap();
    assert_eq!(a, b);
    // Rows are distributions over the lca's size: P(<= N) = 1 for every pair.
    let n = 11;
    assert!(a.as_slice()[n * n * n..].iter().all(|&p| p == 1.0));
}

#[test]
fn a_model_over_other_leaves_is_an_error() {
    let t = FullTrellis::build(&Toy { n: 4 }).unwrap();
    let e = CoClustering::compute(&t, &Toy { n: 5 }).unwrap_err();
    assert!(matches!(e, ExactError::ModelMismatch { .. }), "{e}");
}

#[test]
fn a_cancelled_token_stops_it() {
    let m = Toy { n: 8 };
    let t = FullTrellis::build(&m).unwrap();
    let handle = crate::cancel::CancelHandle::new();
    handle.cancel();
    let r = crate::cancel::scope(&handle.token(), || CoClustering::compute(&t, &m));
    assert!(matches!(r, Err(ExactError::Cancelled)));
}
