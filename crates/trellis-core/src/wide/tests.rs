//! The wide path against the mask path for N ≤ 64: the same trees and values from greedy, beam
//! search and the sparse trellis, the same energies of random trees; and its errors.

use super::*;
use crate::exact::SparseTrellis;
use crate::hierarchy::tests::random_tree;
use crate::model::{CorrelationModel, DasguptaModel, SplitModel, WeightMatrix};
use crate::search::{beam_search_scored, greedy_scored, Dedup};
use crate::tree::Tree;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// A symmetric `n × n` matrix with weights uniform in `[lo, hi)` and a junk diagonal.
pub(super) fn weights(n: usize, lo: f64, hi: f64, seed: u64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        w[i * n + i] = 99.0;
        for j in i + 1..n {
            let x = rng.random_range(lo..hi);
            w[i * n + j] = x;
            w[j * n + i] = x;
        }
    }
    w
}

fn matrix(n: usize, w: &[f64]) -> WeightMatrix {
    WeightMatrix::new(w.chunks(n).map(<[f64]>::to_vec).collect()).unwrap()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300)
}

/// One random instance of each energy, as a mask model and a wide one (with its weights).
struct Instance {
    dasgupta: (DasguptaModel, Dasgupta, Vec<f64>),
    hcc: (CorrelationModel, Hcc, Vec<f64>),
}

/// Both energies over the same kind of random weights, at two temperatures.
fn instances(n: usize, seed: u64) -> Vec<Instance> {
    let wd = weights(n, -0.2, 1.0, seed);
    let wc = weights(n, -1.0, 1.0, seed ^ 0xABCD);
    [1.0, 0.37]
        .map(|beta| Instance {
            dasgupta: (
                DasguptaModel::new(matrix(n, &wd), beta).unwrap(),
                Dasgupta::new(n, wd.clone(), beta).unwrap(),
                wd.clone(),
            ),
            hcc: (
                CorrelationModel::new(matrix(n, &wc), beta).unwrap(),
                Hcc::new(n, wc.clone(), beta).unwrap(),
                wc.clone(),
            ),
        })
        .into()
}

/// What the test compares of a tree: its clusters, or with `signed` (HCC's weights) the depth of
/// the lowest common ancestor of every negative pair. HCC has exact ties: a tree's energy is
/// `W⁺ + Σ |w⁻_ij| · depth(lca(i, j))`, so trees that place every negative pair's lca at the same
/// depth cost the same whatever they do with the rest, and both paths break such ties by rounding.
#[derive(Debug, PartialEq)]
enum Key {
    Clusters(Vec<Vec<usize>>),
    NegativeDepths(Vec<usize>),
}

fn key(h: &Hierarchy, signed: Option<&[f64]>) -> Key {
    let Some(w) = signed else {
        return Key::Clusters(h.clusters());
    };
    let n = h.n_leaves();
    let mut depth = vec![0usize; h.n_nodes()];
    for &v in h.postorder().iter().rev() {
        depth[v] = h.parent(v).map_or(0, |p| depth[p] + 1);
    }
    let mut leaves: Vec<Vec<usize>> = vec![Vec::new(); h.n_nodes()];
    let mut lca_depth = vec![0usize; n * n];
    for &v in h.postorder() {
        if v < n {
            leaves[v] = vec![v];
            continue;
        }
        let (x, y) = (h.children(v)[0], h.children(v)[1]);
        for &i in &leaves[x] {
            for &j in &leaves[y] {
                lca_depth[i * n + j] = depth[v];
                lca_depth[j * n + i] = depth[v];
            }
        }
        leaves[v] = [leaves[x].clone(), leaves[y].clone()].concat();
    }
    Key::NegativeDepths(
        (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| w[i * n + j] < 0.0)
            .map(|(i, j)| lca_depth[i * n + j])
            .collect(),
    )
}

fn same_greedy<M: SplitModel, W: PairModel>(
    mask: &M,
    wide: &W,
    signed: Option<&[f64]>,
    what: &str,
) {
    for score in [MergeScore::Potential, MergeScore::Revenue] {
        let a = greedy_scored(mask, score).unwrap();
        let b = greedy::greedy(wide, score).unwrap();
        let a_tree = Hierarchy::from_tree(&a.tree).unwrap();
        assert_eq!(
            key(&a_tree, signed),
            key(&b.tree, signed),
            "{what} {score:?}"
        );
        assert!(
            close(a.log_likelihood, b.log_psi, 1e-9),
            "{what} {score:?}: {} vs {}",
            a.log_likelihood,
            b.log_psi
        );
    }
}

#[test]
fn greedy_finds_the_mask_version_trees() {
    for n in [1, 2, 3, 7, 20, 64] {
        for seed in 0..3 {
            for i in instances(n, seed) {
                let (m, w, _) = &i.dasgupta;
                same_greedy(m, w, None, &format!("dasgupta n={n} seed={seed}"));
                let (m, w, signed) = &i.hcc;
                same_greedy(m, w, Some(signed), &format!("hcc n={n} seed={seed}"));
            }
        }
    }
}

/// Beam search, then the sparse trellis over the mask version's final beam, both ways.
fn same_beam_and_sparse<M: SplitModel, W: PairModel>(
    mask: &M,
    wide: &W,
    signed: Option<&[f64]>,
    b: usize,
    what: &str,
) {
    let n = mask.n_leaves();
    for score in [MergeScore::Potential, MergeScore::Revenue] {
        let a = beam_search_scored(mask, b, Dedup::Clusters, score).unwrap();
        let w = beam::beam(wide, b, score).unwrap();
        // Keeping fewer pairs per state (more rescans) changes nothing but the work.
        let few = beam::beam_keeping(wide, b, score, 2).unwrap();
        assert_eq!(a.len(), w.len(), "{what} {score:?} beam {b}");
        assert_eq!(few.len(), w.len());
        for (x, y) in few.iter().zip(&w) {
            assert_eq!(
                x.tree.clusters(),
                y.tree.clusters(),
                "{what} {score:?} beam {b}"
            );
            assert_eq!(x.log_psi, y.log_psi);
        }
        let seeds: Vec<Hierarchy> = a
            .iter()
            .map(|f| Hierarchy::from_tree(&f.tree).unwrap())
            .collect();
        for (k, (x, y)) in seeds.iter().zip(&w).enumerate() {
            assert_eq!(
                key(x, signed),
                key(&y.tree, signed),
                "{what} {score:?} beam {b} tree {k}"
            );
            assert!(
                close(a[k].log_likelihood, y.log_psi, 1e-9),
                "{what} {score:?} tree {k}: {} vs {}",
                a[k].log_likelihood,
                y.log_psi
            );
        }
        let trees: Vec<Tree> = a.iter().map(|f| f.tree.clone()).collect();
        let sp = SparseTrellis::from_trees(n, &trees).unwrap();
        let r = sp.run(mask).unwrap();
        let t = Hierarchy::from_tree(&sp.map_tree(&r).unwrap().unwrap()).unwrap();
        let s = sparse::sparse_map(wide, &seeds).unwrap();
        assert_eq!(s.vertices, sp.n_vertices(), "{what} {score:?}");
        assert_eq!(s.splits, sp.n_splits(), "{what} {score:?}");
        assert_eq!(
            key(&t, signed),
            key(&s.tree, signed),
            "{what} {score:?} sparse"
        );
        assert!(close(r.map_log_likelihood(), s.log_psi, 1e-9), "{what}");
        assert!(
            w.iter()
                .all(|f| s.log_psi >= f.log_psi - 1e-9 * f.log_psi.abs()),
            "{what}"
        );
    }
}

#[test]
fn beam_and_sparse_find_the_mask_version_trees() {
    for (n, sizes) in [
        (2, vec![1, 3]),
        (3, vec![1, 2, 9]),
        (8, vec![1, 4, 24]),
        (20, vec![3, 60]),
        (40, vec![7]),
        (64, vec![12]),
    ] {
        for b in sizes {
            for i in instances(n, 40 + n as u64 + b as u64) {
                let (m, w, _) = &i.dasgupta;
                same_beam_and_sparse(m, w, None, b, &format!("dasgupta n={n}"));
                let (m, w, signed) = &i.hcc;
                same_beam_and_sparse(m, w, Some(signed), b, &format!("hcc n={n}"));
            }
        }
    }
}

#[test]
fn energies_of_random_trees_match_the_mask_models() {
    let mut rng = StdRng::seed_from_u64(7);
    for n in [1, 2, 5, 17, 40, 64] {
        for rep in 0..4 {
            let tree = random_tree(n, &mut rng);
            let h = Hierarchy::from_tree(&tree).unwrap();
            // Non-negative similarities (Dasgupta's are), and signed affinities.
            let wd = weights(n, 0.0, 3.0, rep + 100 * n as u64);
            let wc = weights(n, -1.0, 1.0, rep + 1000 * n as u64);
            for beta in [1.0, 2.5] {
                let md = DasguptaModel::new(matrix(n, &wd), beta).unwrap();
                let d = Dasgupta::new(n, wd.clone(), beta).unwrap();
                let v = energy::log_psi(&d, &h).unwrap();
                assert!(close(v, tree.log_likelihood(&md), 1e-12), "n={n}");
                assert!(close(-v / beta, md.tree_cost(&tree), 1e-12), "n={n}");
                if beta == 1.0 {
                    assert!(close(-v, h.dasgupta_cost(&wd).unwrap(), 1e-12), "n={n}");
                }
                let mc = CorrelationModel::new(matrix(n, &wc), beta).unwrap();
                let c = Hcc::new(n, wc.clone(), beta).unwrap();
                let v = energy::log_psi(&c, &h).unwrap();
                assert!(close(v, tree.log_likelihood(&mc), 1e-12), "n={n}");
                assert!(close(-v / beta, mc.tree_energy(&tree), 1e-12), "n={n}");
            }
        }
    }
}

#[test]
fn internal_node_ids_in_any_order_give_the_same_energy() {
    let n = 30;
    let mut rng = StdRng::seed_from_u64(3);
    let tree = random_tree(n, &mut rng);
    let h = Hierarchy::from_tree(&tree).unwrap();
    // Renumber the internal nodes in reverse (parents before children).
    let total = h.n_nodes();
    let id = |v: usize| if v < n { v } else { total - 1 - (v - n) };
    let mut parent = vec![None; total];
    for v in 0..total {
        parent[id(v)] = h.parent(v).map(id);
    }
    let g = Hierarchy::from_topology(n, parent).unwrap();
    let d = Dasgupta::new(n, weights(n, 0.0, 1.0, 5), 1.0).unwrap();
    assert_eq!(g.clusters(), h.clusters());
    assert!(close(
        energy::log_psi(&d, &g).unwrap(),
        energy::log_psi(&d, &h).unwrap(),
        1e-12
    ));
}

#[test]
fn bad_inputs_are_one_line_errors() {
    let w = weights(4, 0.0, 1.0, 1);
    assert_eq!(Dasgupta::new(0, vec![], 1.0).unwrap_err(), WideError::Empty);
    assert!(matches!(
        Dasgupta::new(3, w.clone(), 1.0),
        Err(WideError::Weights(_))
    ));
    let mut bad = w.clone();
    bad[1] = 5.0;
    assert!(matches!(Hcc::new(4, bad, 1.0), Err(WideError::Weights(_))));
    let mut nan = w.clone();
    nan[2] = f64::NAN;
    nan[8] = f64::NAN;
    assert!(matches!(Hcc::new(4, nan, 1.0), Err(WideError::Weights(_))));
    assert!(matches!(
        Dasgupta::new(4, w.clone(), 0.0),
        Err(WideError::Model(_))
    ));
    let d = Dasgupta::new(4, w, 1.0).unwrap();
    assert!(matches!(
        beam::beam(&d, 0, MergeScore::Potential),
        Err(WideError::BeamSize { beam_size: 0 })
    ));
    let star =
        Hierarchy::from_topology(4, vec![Some(4); 4].into_iter().chain([None]).collect()).unwrap();
    let e = energy::log_psi(&d, &star).unwrap_err();
    assert!(e.to_string().contains("binary"), "{e}");
    let other = greedy::greedy(
        &Dasgupta::new(2, vec![0.0, 1.0, 1.0, 0.0], 1.0).unwrap(),
        MergeScore::Potential,
    )
    .unwrap();
    assert!(matches!(
        energy::log_psi(&d, &other.tree),
        Err(WideError::Tree(_))
    ));
    assert!(matches!(
        sparse::sparse_map(&d, &[]),
        Err(WideError::Tree(_))
    ));
    for e in [WideError::Empty, WideError::Cancelled] {
        assert!(!e.to_string().contains('\n'));
    }
}

#[test]
fn work_estimates_count_every_state_at_every_merge() {
    // n leaves per state per merge; one state first, then as many as the candidates allow.
    assert_eq!(beam::work(2, 5), 2.0);
    assert_eq!(beam::work(3, 1), 3.0 + 3.0);
    assert_eq!(beam::work(4, 10), 4.0 + 6.0 * 4.0 + 10.0 * 4.0);
    let big = beam::work(500, 100);
    let rough = 100.0 * 500.0 * 499.0;
    assert!((big / rough - 1.0).abs() < 0.01, "{big} vs {rough}");
}

/// Integer weights: both paths compute every score exactly, so ties are exact and must be
/// broken alike (the first pair, then the earlier state) down to every cluster.
#[test]
fn exact_ties_are_broken_as_the_mask_version_breaks_them() {
    use rand::rngs::StdRng;
    for (n, sizes) in [(8, vec![1, 5, 28]), (20, vec![2, 30, 100]), (40, vec![9])] {
        for seed in 0..3u64 {
            let mut rng = StdRng::seed_from_u64(seed + 10 * n as u64);
            let mut graph = vec![0.0; n * n];
            let mut signed = vec![0.0; n * n];
            for i in 0..n {
                for j in i + 1..n {
                    let g = f64::from(rng.random_bool(0.3));
                    let c = rng.random_range(-1i32..=1) as f64;
                    (graph[i * n + j], graph[j * n + i]) = (g, g);
                    (signed[i * n + j], signed[j * n + i]) = (c, c);
                }
            }
            let md = DasguptaModel::new(matrix(n, &graph), 1.0).unwrap();
            let d = Dasgupta::new(n, graph.clone(), 1.0).unwrap();
            let mc = CorrelationModel::new(matrix(n, &signed), 1.0).unwrap();
            let c = Hcc::new(n, signed.clone(), 1.0).unwrap();
            same_greedy(&md, &d, None, &format!("0/1 graph n={n}"));
            same_greedy(&mc, &c, None, &format!("-1/0/1 n={n}"));
            for &b in &sizes {
                same_beam_and_sparse(&md, &d, None, b, &format!("0/1 graph n={n} seed={seed}"));
                same_beam_and_sparse(&mc, &c, None, b, &format!("-1/0/1 n={n} seed={seed}"));
            }
        }
    }
}
