//! Tests of [`Hierarchy`]: round trips through every source type, cross-checks of every metric
//! against the existing implementations, brute-force references, a 500-leaf linkage tree and
//! the error cases.

use super::{Hierarchy, HierarchyError};
use crate::coalescent::generator::sample_history;
use crate::coalescent::history::History;
use crate::coalescent::metrics as cm;
use crate::model::{DasguptaModel, WeightMatrix};
use crate::pydt::generate::sample_tree;
use crate::pydt::metrics as pm;
use crate::pydt::{Params, Position, PydtTree};
use crate::subset::Subset;
use crate::tree::{Node, Tree};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

/// A random binary tree over `0..n` (random pairs of subtrees joined).
pub(crate) fn random_tree(n: usize, rng: &mut StdRng) -> Tree {
    let mut parts: Vec<Tree> = (0..n).map(Tree::leaf).collect();
    while parts.len() > 1 {
        let a = parts.swap_remove(rng.random_range(0..parts.len()));
        let b = parts.swap_remove(rng.random_range(0..parts.len()));
        parts.push(Tree::join(a, b).unwrap());
    }
    parts.pop().unwrap()
}

/// A random multifurcating hierarchy: a coalescent history with each non-root internal node
/// contracted into its parent with probability `p`, heights the merge times; internal ids are
/// shuffled when `shuffle` (so they need not be in post-order).
fn random_hierarchy(n: usize, p: f64, shuffle: bool, rng: &mut StdRng) -> Hierarchy {
    let h = sample_history(n, rng).unwrap();
    let mut parent = h.parents().unwrap();
    let times = h.cluster_times();
    let total = parent.len();
    let mut keep = vec![true; total];
    for v in (n..total.saturating_sub(1)).rev() {
        if rng.random::<f64>() < p {
            keep[v] = false;
            let up = parent[v];
            for q in parent.iter_mut().filter(|q| **q == Some(v)) {
                *q = up;
            }
        }
    }
    let mut ids: Vec<usize> = (n..total).filter(|&v| keep[v]).collect();
    let mut new_ids = ids.clone();
    if shuffle {
        new_ids.shuffle(rng);
    }
    let mut map = vec![usize::MAX; total];
    (0..n).for_each(|i| map[i] = i);
    for (k, &v) in ids.iter().enumerate() {
        map[v] = n + new_ids.iter().filter(|&&w| w < new_ids[k]).count();
    }
    ids.splice(0..0, 0..n);
    let mut par = vec![None; ids.len()];
    let mut height = vec![0.0; ids.len()];
    for &v in &ids {
        par[map[v]] = parent[v].map(|q| map[q]);
        height[map[v]] = times[v];
    }
    Hierarchy::from_parents(n, par, height).unwrap()
}

/// Labels with `c` classes and large, spread-out values (only equality and order matter).
fn random_labels(n: usize, c: usize, rng: &mut StdRng) -> Vec<usize> {
    (0..n).map(|_| 1000 * rng.random_range(0..c) + 7).collect()
}

/// A symmetric similarity matrix (row-major) with a junk diagonal.
fn random_weights(n: usize, rng: &mut StdRng) -> Vec<f64> {
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        w[i * n + i] = 123.0;
        for j in i + 1..n {
            let x = rng.random_range(-0.5..2.0);
            w[i * n + j] = x;
            w[j * n + i] = x;
        }
    }
    w
}

/// Internal clusters of a history, as sorted leaf lists.
fn history_clusters(h: &History) -> Vec<Vec<usize>> {
    let mut sets: Vec<Vec<usize>> = (0..h.n).map(|i| vec![i]).collect();
    for &(a, b, _) in &h.merges {
        let mut s = [sets[a].clone(), sets[b].clone()].concat();
        s.sort_unstable();
        sets.push(s);
    }
    let mut out = sets.split_off(h.n);
    out.sort();
    out
}

/// Internal clusters of a Tree, as sorted leaf lists.
fn tree_clusters(t: &Tree) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = t
        .clusters()
        .into_iter()
        .filter(|s| s.len() > 1)
        .map(|s| s.iter().collect())
        .collect();
    out.sort();
    out
}

/// A diffusion tree with the topology of `h` and times 1 − height/(1.01·max height), strictly
/// increasing towards the leaves when heights strictly decrease.
fn to_pydt(h: &Hierarchy) -> PydtTree {
    let top = h.height(h.root()) * 1.01;
    let times: Vec<f64> = h.heights().iter().map(|x| 1.0 - x / top).collect();
    PydtTree::from_parents(h.n_leaves(), h.parents(), &times).unwrap()
}

/// Leaves below `v`, by walking every leaf up (brute force).
fn brute_leaves(h: &Hierarchy, v: usize) -> Vec<usize> {
    (0..h.n_leaves())
        .filter(|&i| {
            let mut u = Some(i);
            while let Some(x) = u {
                if x == v {
                    return true;
                }
                u = h.parent(x);
            }
            false
        })
        .collect()
}

/// Lowest common ancestor by ancestor lists (brute force).
fn brute_lca(h: &Hierarchy, i: usize, j: usize) -> usize {
    let mut up = vec![i];
    while let Some(p) = h.parent(*up.last().unwrap()) {
        up.push(p);
    }
    let mut v = j;
    while !up.contains(&v) {
        v = h.parent(v).unwrap();
    }
    v
}

fn brute_purity(h: &Hierarchy, y: &[usize]) -> f64 {
    let (mut total, mut pairs) = (0.0, 0.0);
    for i in 0..y.len() {
        for j in i + 1..y.len() {
            if y[i] == y[j] {
                let l = brute_leaves(h, brute_lca(h, i, j));
                total += l.iter().filter(|&&k| y[k] == y[i]).count() as f64 / l.len() as f64;
                pairs += 1.0;
            }
        }
    }
    total / pairs
}

fn brute_dasgupta(h: &Hierarchy, w: &[f64]) -> f64 {
    let n = h.n_leaves();
    let mut cost = 0.0;
    for i in 0..n {
        for j in i + 1..n {
            cost += w[i * n + j] * brute_leaves(h, brute_lca(h, i, j)).len() as f64;
        }
    }
    cost
}

fn one_line(e: &HierarchyError) -> String {
    let s = e.to_string();
    assert!(!s.is_empty() && !s.contains('\n'), "not one line: {s:?}");
    s
}

#[test]
fn every_small_tree_round_trips() {
    for n in 1..=6 {
        for t in Tree::enumerate_all(Subset::full(n)).unwrap() {
            let h = Hierarchy::from_tree(&t).unwrap();
            assert_eq!((h.n_leaves(), h.n_nodes()), (n, 2 * n - 1));
            assert!(h.is_binary());
            assert_eq!(h.to_tree().unwrap(), t);
            assert_eq!(h.to_newick(), t.to_newick());
            assert_eq!(h.clusters(), tree_clusters(&t));
            for (v, &size) in h.cluster_sizes().iter().enumerate() {
                let want = if v < n { 0.0 } else { size as f64 };
                assert_eq!(h.height(v), want);
            }
        }
    }
}

#[test]
fn random_and_unordered_trees_round_trip() {
    let mut rng = StdRng::seed_from_u64(1);
    for n in [2, 9, 33, 64] {
        let t = random_tree(n, &mut rng);
        let h = Hierarchy::try_from(&t).unwrap();
        assert_eq!(Tree::try_from(&h).unwrap(), t);
        assert_eq!(h.to_newick(), t.to_newick());
    }
    // An arena whose root comes first and children after their parents.
    let nodes = vec![
        Node::Internal(1, 2),
        Node::Leaf(2),
        Node::Internal(3, 4),
        Node::Leaf(0),
        Node::Leaf(1),
    ];
    let t = Tree::from_arena(nodes, 0).unwrap();
    let h = Hierarchy::from_tree(&t).unwrap();
    assert_eq!(h.clusters(), vec![vec![0, 1], vec![0, 1, 2]]);
    assert_eq!(h.to_tree().unwrap(), t);
    assert_eq!(h.height(h.root()), 3.0);
}

#[test]
fn history_conversion_keeps_ids_clusters_and_times() {
    let mut rng = StdRng::seed_from_u64(2);
    for n in [1, 2, 5, 40] {
        let hist = sample_history(n, &mut rng).unwrap();
        let h = Hierarchy::from_history(&hist).unwrap();
        assert_eq!(h.clusters(), history_clusters(&hist));
        assert_eq!(h.heights(), &hist.cluster_times()[..]);
        assert_eq!(h.parents(), &hist.parents().unwrap()[..]);
        assert_eq!(h.root(), 2 * n - 2);
    }
}

#[test]
fn pydt_conversion_keeps_clusters_and_drops_free_slots() {
    let mut rng = StdRng::seed_from_u64(3);
    for params in [
        Params::new(0.5, 0.3, 1.0, 1.0).unwrap(),
        Params::new(2.0, 0.6, 1.5, 1.0).unwrap(),
        Params::ddt(1.0, 1.0).unwrap(),
    ] {
        for n in [1, 2, 7, 30] {
            let t = sample_tree(n, &params, &mut rng);
            let h = Hierarchy::from_pydt(&t).unwrap();
            assert_eq!(h.clusters(), t.clusters());
            assert_eq!(h.n_internal(), t.internal_nodes().len());
            // Heights are 1 − t, node by node (matched through the leaf sets).
            let sizes = h.cluster_sizes();
            let mut ts: Vec<(usize, f64)> = t
                .internal_nodes()
                .iter()
                .map(|&v| (t.node(v).leaves, 1.0 - t.time(v)))
                .collect();
            let mut hs: Vec<(usize, f64)> =
                (n..h.n_nodes()).map(|v| (sizes[v], h.height(v))).collect();
            ts.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
            hs.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
            assert!(ts
                .iter()
                .zip(&hs)
                .all(|(a, b)| a.0 == b.0 && (a.1 - b.1).abs() < 1e-12));
        }
    }
    // Detach a leaf (its binary parent goes to the free list) and hang it from the root.
    let mut t = sample_tree(9, &Params::ddt(1.0, 1.0).unwrap(), &mut rng);
    t.detach(4);
    t.attach(4, Position::Node(t.root()));
    t.validate().unwrap();
    let h = Hierarchy::from_pydt(&t).unwrap();
    assert!(t.capacity() > h.n_nodes());
    assert_eq!(h.clusters(), t.clusters());
    assert!(!h.is_binary());
}

#[test]
fn metrics_match_the_coalescent_versions() {
    let mut rng = StdRng::seed_from_u64(4);
    for case in 0..30 {
        let n = 2 + case * 2;
        let mut hist = sample_history(n, &mut rng).unwrap();
        if case % 3 == 0 {
            // Tied merge times: the opening order must still undo the latest merge first.
            hist.merges
                .iter_mut()
                .for_each(|m| m.2 = (m.2 * 2.0).floor());
        }
        let h = Hierarchy::from_history(&hist).unwrap();
        let y = random_labels(n, 1 + case % 5, &mut rng);
        let curve = cm::ari_curve(&hist, &y).unwrap();
        let points = h.ari_points(&y).unwrap();
        assert_eq!(points.len(), n);
        for (k, &(nc, a)) in points.iter().enumerate() {
            assert_eq!(nc, k + 1);
            assert!(
                close(a, curve[k]),
                "case {case} N_c {nc}: {a} vs {}",
                curve[k]
            );
        }
        assert!(close(h.ari_auc(&y).unwrap(), cm::ari_auc(&curve).unwrap()));
        match cm::dendrogram_purity(&hist, &y) {
            Ok(p) => assert!(close(h.dendrogram_purity(&y).unwrap(), p)),
            Err(_) => assert!(h.dendrogram_purity(&y).is_err()),
        }
        match cm::subtree_score(&hist, &y) {
            Ok(s) => assert!(close(h.subtree_score(&y).unwrap(), s)),
            Err(_) => assert!(h.subtree_score(&y).is_err()),
        }
    }
}

#[test]
fn metrics_match_the_pydt_versions() {
    let mut rng = StdRng::seed_from_u64(5);
    let params = [
        Params::new(0.5, 0.3, 1.0, 1.0).unwrap(),
        Params::new(2.0, 0.6, 1.5, 1.0).unwrap(),
        Params::ddt(0.7, 1.0).unwrap(),
    ];
    for case in 0..36 {
        let n = 3 + case;
        // Sampled diffusion trees, and random multifurcations carried over to PydtTree.
        let t = if case % 2 == 0 {
            sample_tree(n, &params[case % 3], &mut rng)
        } else {
            to_pydt(&random_hierarchy(n, 0.4, true, &mut rng))
        };
        let h = Hierarchy::from_pydt(&t).unwrap();
        let y = random_labels(n, 2 + case % 4, &mut rng);
        let want = pm::ari_points(&t, &y).unwrap();
        let got = h.ari_points(&y).unwrap();
        assert_eq!(got.len(), want.len());
        for (a, b) in got.iter().zip(&want) {
            assert!(a.0 == b.0 && close(a.1, b.1), "case {case}: {a:?} vs {b:?}");
        }
        assert!(close(h.ari_auc(&y).unwrap(), pm::ari_auc(&want).unwrap()));
        assert!(close(
            h.dendrogram_purity(&y).unwrap(),
            pm::dendrogram_purity(&t, &y).unwrap()
        ));
        assert!(close(
            h.subtree_score(&y).unwrap(),
            pm::subtree_score(&t, &y).unwrap()
        ));
        let w = random_weights(n, &mut rng);
        let (a, b) = (
            h.dasgupta_cost(&w).unwrap(),
            pm::dasgupta_cost(&t, &w).unwrap(),
        );
        assert!((a - b).abs() <= 1e-9 * a.abs().max(1.0), "{a} vs {b}");
    }
}

#[test]
fn metrics_match_the_tree_versions() {
    let mut rng = StdRng::seed_from_u64(6);
    for n in (2..=64).step_by(3) {
        let t = random_tree(n, &mut rng);
        let h = Hierarchy::from_tree(&t).unwrap();
        let y = random_labels(n, 3, &mut rng);
        let opt: Vec<Option<usize>> = y.iter().map(|&l| Some(l)).collect();
        match crate::metrics::dendrogram_purity(&t, &opt) {
            Some(p) => assert!(close(h.dendrogram_purity(&y).unwrap(), p)),
            None => assert!(h.dendrogram_purity(&y).is_err()),
        }
        let w = random_weights(n, &mut rng);
        let rows: Vec<Vec<f64>> = w.chunks(n).map(|r| r.to_vec()).collect();
        let model = DasguptaModel::new(WeightMatrix::new(rows).unwrap(), 1.0).unwrap();
        let (a, b) = (h.dasgupta_cost(&w).unwrap(), model.tree_cost(&t));
        assert!(
            (a - b).abs() <= 1e-9 * a.abs().max(1.0),
            "n {n}: {a} vs {b}"
        );
    }
}

#[test]
fn purity_and_dasgupta_match_brute_force() {
    let mut rng = StdRng::seed_from_u64(7);
    for case in 0..40 {
        let n = 2 + case % 11;
        let h = random_hierarchy(n, 0.5, true, &mut rng);
        let y = random_labels(n, 1 + case % 3, &mut rng);
        if let Ok(p) = h.dendrogram_purity(&y) {
            assert!(close(p, brute_purity(&h, &y)), "case {case}");
        }
        let w = random_weights(n, &mut rng);
        let (a, b) = (h.dasgupta_cost(&w).unwrap(), brute_dasgupta(&h, &w));
        assert!((a - b).abs() <= 1e-12 * a.abs().max(1.0));
    }
    // Hand example (coalescent tests): ((0,1),(2,3)), labels (0,0,0,1).
    let h = Hierarchy::from_topology(
        4,
        vec![Some(4), Some(4), Some(5), Some(5), Some(6), Some(6), None],
    )
    .unwrap();
    let y = [0, 0, 0, 1];
    assert!(close(h.dendrogram_purity(&y).unwrap(), 2.5 / 3.0));
    assert!(close(h.subtree_score(&y).unwrap(), 0.5));
    let pts = h.ari_points(&[0, 0, 1, 1]).unwrap();
    assert_eq!(pts, vec![(1, 0.0), (2, 1.0), (3, 1.0), (4, 1.0)]);
    // A star: one opening jumps from 1 to n clusters.
    let star = Hierarchy::from_topology(3, vec![Some(3), Some(3), Some(3), None]).unwrap();
    assert_eq!(
        star.ari_points(&[0, 1, 2]).unwrap(),
        vec![(1, 0.0), (3, 1.0)]
    );
    assert!(close(star.ari_auc(&[0, 1, 2]).unwrap(), 0.5));
    assert!(close(star.subtree_score(&[0, 0, 1]).unwrap(), 0.0));
}

#[test]
fn kodama_average_linkage_over_500_points() {
    let mut rng = StdRng::seed_from_u64(8);
    let n = 500;
    let classes: Vec<usize> = (0..n).map(|i| i % 5).collect();
    let points: Vec<Vec<f64>> = classes
        .iter()
        .map(|&c| {
            vec![
                100.0 * c as f64 + rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            ]
        })
        .collect();
    let mut condensed = crate::coalescent::linkage::euclidean_condensed(&points).unwrap();
    let dend = kodama::linkage(&mut condensed, n, kodama::Method::Average);
    let h = Hierarchy::from_linkage(&dend).unwrap();
    assert_eq!(
        (h.n_leaves(), h.n_nodes(), h.root()),
        (n, 2 * n - 1, 2 * n - 2)
    );
    assert!(h.is_binary());
    for (k, s) in dend.steps().iter().enumerate() {
        assert_eq!(h.height(n + k), s.dissimilarity);
    }
    // The same clustering through the coalescent's linkage history.
    let hist = crate::coalescent::linkage::linkage_history(
        &points,
        crate::coalescent::linkage::Linkage::Average,
    )
    .unwrap();
    assert_eq!(
        h.clusters(),
        Hierarchy::from_history(&hist).unwrap().clusters()
    );
    // Well-separated classes are subtrees.
    assert_eq!(h.dendrogram_purity(&classes).unwrap(), 1.0);
    assert_eq!(h.subtree_score(&classes).unwrap(), 1.0);
    let pts = h.ari_points(&classes).unwrap();
    assert_eq!(pts.len(), n);
    assert!(pts[4..].iter().all(|p| close(p.1, 1.0)));
    let auc = h.ari_auc(&classes).unwrap();
    assert!(auc > 0.99 && auc <= 1.0);
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            w[i * n + j] = (-(points[i][0] - points[j][0]).abs() / 50.0).exp();
        }
    }
    assert!(h.dasgupta_cost(&w).unwrap() > 0.0);
    assert!(matches!(
        h.to_tree(),
        Err(HierarchyError::TooManyLeaves { n: 500 })
    ));
    let newick = h.to_newick();
    assert_eq!(newick.matches('(').count(), n - 1);
    assert!(newick.ends_with(");"));
}

#[test]
fn newick_of_multifurcations_with_names() {
    // Root 7 → {3, 6}; 6 → {0, 4, 5}; 5 → {1, 2}: children listed by id, written by lowest leaf.
    let parent = vec![
        Some(6),
        Some(5),
        Some(5),
        Some(7),
        Some(6),
        Some(6),
        Some(7),
        None,
    ];
    let h = Hierarchy::from_topology(5, parent).unwrap();
    assert_eq!(h.to_newick(), "((0,(1,2),4),3);");
    assert_eq!(
        h.to_newick_with(|i| format!("p{i}")),
        "((p0,(p1,p2),p4),p3);"
    );
    assert_eq!(h.children(6), &[0, 4, 5]);
    assert!(!h.is_binary());
    assert_eq!(
        h.clusters(),
        vec![vec![0, 1, 2, 3, 4], vec![0, 1, 2, 4], vec![1, 2]]
    );
    assert_eq!(h.heights()[5..], [2.0, 4.0, 5.0]);
    let single = Hierarchy::from_parents(1, vec![None], vec![0.0]).unwrap();
    assert_eq!((single.to_newick(), single.root()), ("0;".to_string(), 0));
    assert_eq!(single.to_tree().unwrap(), Tree::leaf(0));
    assert!(single.ari_auc(&[3]).is_err());
    assert_eq!(single.dasgupta_cost(&[1.0]).unwrap(), 0.0);
}

#[test]
fn serde_round_trip_validates() {
    let mut rng = StdRng::seed_from_u64(9);
    let h = random_hierarchy(20, 0.3, true, &mut rng);
    let json = serde_json::to_string(&h).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["height", "n", "parent"]);
    let back: Hierarchy = serde_json::from_str(&json).unwrap();
    assert_eq!(back, h);
    let bad = r#"{"n": 2, "parent": [2, null, null], "height": [0, 0, 1]}"#;
    let e = serde_json::from_str::<Hierarchy>(bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("two roots"), "{e}");
}

#[test]
fn errors_name_the_problem_in_one_line() {
    use HierarchyError as E;
    let fp = |n: usize, p: &[Option<usize>], h: &[f64]| {
        Hierarchy::from_parents(n, p.to_vec(), h.to_vec()).unwrap_err()
    };
    let z = |k: usize| vec![0.0; k];
    let cases: Vec<(HierarchyError, &str)> = vec![
        (fp(0, &[], &[]), "at least one leaf"),
        (fp(3, &[Some(3), None], &z(2)), "2 nodes for 3 leaves"),
        (fp(2, &[Some(2), Some(2), None], &z(2)), "`height` has 2"),
        (
            fp(3, &[Some(3), Some(3), None, None], &z(4)),
            "two roots, nodes 2 and 3",
        ),
        (fp(2, &[Some(2), Some(2), Some(2)], &z(3)), "no root"),
        (
            fp(
                4,
                &[Some(6), Some(6), Some(4), Some(5), Some(5), Some(4), None],
                &z(7),
            ),
            "cycle through node 4",
        ),
        (
            fp(2, &[Some(2), Some(2), Some(3), None], &z(4)),
            "internal node 3 has 1 child",
        ),
        (
            fp(2, &[Some(2), Some(2), None, Some(2)], &z(4)),
            "internal node 3 has 0 child",
        ),
        (fp(2, &[Some(1), None], &z(2)), "which is a leaf"),
        (fp(2, &[Some(9), Some(2), None], &z(3)), "out of range"),
        (
            fp(2, &[Some(2), Some(2), None], &[0.0, 0.0, -1.0]),
            "above its parent",
        ),
        (
            fp(2, &[Some(2), Some(2), None], &[0.0, 0.5, 1.0]),
            "leaf 1 has height 0.5",
        ),
        (
            fp(2, &[Some(2), Some(2), None], &[0.0, 0.0, f64::NAN]),
            "must be finite",
        ),
    ];
    for (e, want) in &cases {
        assert!(one_line(e).contains(want), "{e} does not contain {want:?}");
    }
    assert!(matches!(
        cases[3].0,
        E::TwoRoots {
            first: 2,
            second: 3
        }
    ));
    assert!(matches!(cases[5].0, E::Cycle { root: 6, .. }));
    assert!(matches!(
        cases[6].0,
        E::Unary {
            node: 3,
            children: 1
        }
    ));

    let h = Hierarchy::from_topology(3, vec![Some(3), Some(3), Some(3), None]).unwrap();
    let mut more = vec![
        h.dendrogram_purity(&[0, 1]).unwrap_err(),
        h.subtree_score(&[0, 1, 2, 3]).unwrap_err(),
        h.ari_auc(&[]).unwrap_err(),
        h.dendrogram_purity(&[0, 1, 2]).unwrap_err(),
        h.subtree_score(&[0, 1, 2]).unwrap_err(),
        h.dasgupta_cost(&[0.0; 8]).unwrap_err(),
        h.dasgupta_cost(&[0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0])
            .unwrap_err(),
        h.dasgupta_cost(&[0.0, f64::NAN, 0.0, f64::NAN, 0.0, 0.0, 0.0, 0.0, 0.0])
            .unwrap_err(),
        h.to_tree().unwrap_err(),
        Hierarchy::from_tree(&Tree::join(Tree::leaf(0), Tree::leaf(2)).unwrap()).unwrap_err(),
        Hierarchy::from_history(&History {
            n: 3,
            merges: vec![(0, 1, 1.0), (0, 2, 2.0)],
        })
        .unwrap_err(),
        Hierarchy::from_pydt(&PydtTree::single(3)).unwrap_err(),
    ];
    // A caterpillar over 65 leaves: node 65 joins leaves 0 and 1, node 64 + i joins leaf i.
    let caterpillar: Vec<Option<usize>> = (0..129)
        .map(|v: usize| (v < 128).then(|| if v < 65 { 64 + v.max(1) } else { v + 1 }))
        .collect();
    more.push(
        Hierarchy::from_topology(65, caterpillar)
            .unwrap()
            .to_tree()
            .unwrap_err(),
    );
    let wants = [
        "2 labels for 3 leaves",
        "4 labels for 3 leaves",
        "0 labels for 3 leaves",
        "two leaves of one class",
        "more leaves than classes",
        "8 similarity entries for 3 leaves",
        "must be symmetric",
        "must be finite",
        "node 3 has 3 children",
        "leaf 1 is missing",
        "not active",
        "does not cover every leaf",
        "at most 64",
    ];
    for (e, want) in more.iter().zip(wants) {
        assert!(one_line(e).contains(want), "{e} does not contain {want:?}");
    }

    // Linkage dendrograms.
    use kodama::{Dendrogram, Step};
    let dend = |n: usize, steps: &[(usize, usize, f64, usize)]| {
        let mut d = Dendrogram::new(n);
        for &(a, b, x, s) in steps {
            d.push(Step::new(a, b, x, s));
        }
        Hierarchy::from_linkage(&d)
    };
    let ok = dend(3, &[(0, 1, 2.0, 2), (2, 3, 1.0, 3)]).unwrap();
    assert_eq!(ok.heights(), &[0.0, 0.0, 0.0, 2.0, 2.0]); // raised to the child's height
    let bad = [
        (dend(0, &[]).unwrap_err(), "at least one leaf"),
        (
            dend(3, &[(0, 1, 1.0, 2)]).unwrap_err(),
            "1 steps for 3 observations",
        ),
        (
            dend(3, &[(1, 1, 1.0, 2), (0, 3, 1.0, 3)]).unwrap_err(),
            "step 0 (0-based): merges cluster 1 with itself",
        ),
        (
            dend(3, &[(0, 4, 1.0, 2), (1, 2, 1.0, 3)]).unwrap_err(),
            "cluster 4, which does not exist",
        ),
        (
            dend(3, &[(0, 1, 1.0, 2), (0, 2, 1.0, 3)]).unwrap_err(),
            "cluster 0, already merged at step 0",
        ),
        (
            dend(3, &[(0, 1, 1.0, 3), (2, 3, 1.0, 3)]).unwrap_err(),
            "size 3 but the merged clusters hold 2",
        ),
        (
            dend(3, &[(0, 1, f64::NAN, 2), (2, 3, 1.0, 3)]).unwrap_err(),
            "NaN is not finite",
        ),
    ];
    for (e, want) in &bad {
        assert!(one_line(e).contains(want), "{e} does not contain {want:?}");
    }
}

/// Checks the invariants of a hierarchy built from `parent` links, or that the error is one
/// line; returns whether it was built.
fn check_links(n: usize, parent: Vec<Option<usize>>, height: Option<Vec<f64>>) -> bool {
    let total = parent.len();
    let built = match height {
        Some(height) => Hierarchy::from_parents(n, parent, height),
        None => Hierarchy::from_topology(n, parent),
    };
    let h = match built {
        Ok(h) => h,
        Err(e) => {
            one_line(&e);
            return false;
        }
    };
    let order = h.postorder();
    assert_eq!((order.len(), *order.last().unwrap()), (total, h.root()));
    let mut pos = vec![0; total];
    order.iter().enumerate().for_each(|(k, &v)| pos[v] = k);
    for v in 0..total {
        if let Some(p) = h.parent(v) {
            assert!(pos[v] < pos[p] && h.height(v) <= h.height(p));
            assert!(h.children(p).contains(&v));
        }
        assert!(v < n || h.children(v).len() >= 2);
    }
    assert_eq!(h.cluster_sizes()[h.root()], n);
    if h.is_binary() {
        let t = h.to_tree().unwrap();
        assert_eq!(Tree::from_newick(&h.to_newick()).unwrap(), t);
        assert_eq!(Hierarchy::from_tree(&t).unwrap().clusters(), h.clusters());
    }
    let back: Hierarchy = serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
    assert_eq!(back, h);
    true
}

#[test]
fn mutated_parent_links_validate_or_fail_cleanly() {
    let mut rng = StdRng::seed_from_u64(10);
    let (mut built, mut failed) = (0, 0);
    for case in 0..3000 {
        let n = 1 + case % 9;
        let h = random_hierarchy(n, 0.3, true, &mut rng);
        let (mut parent, mut height) = (h.parents().to_vec(), h.heights().to_vec());
        let total = parent.len();
        // Up to two mutations: a new root, any parent (a leaf, itself, one past the end), or
        // a height.
        for _ in 0..case % 3 {
            let v = rng.random_range(0..total);
            match rng.random_range(0..3) {
                0 => parent[v] = None,
                1 => parent[v] = Some(rng.random_range(0..total + 1)),
                _ => height[v] = rng.random_range(-1.0..3.0),
            }
        }
        let heights = (case % 5 != 0).then_some(height);
        if check_links(n, parent, heights) {
            built += 1;
        } else {
            failed += 1;
        }
    }
    assert!(
        built > 1000 && failed > 1000,
        "{built} built, {failed} failed"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// On random binary trees, the hierarchy's metrics equal the coalescent's and the Tree's.
    #[test]
    fn binary_metrics_cross_check(seed in any::<u64>(), n in 2usize..40, c in 1usize..5) {
        let mut rng = StdRng::seed_from_u64(seed);
        let hist = sample_history(n, &mut rng).unwrap();
        let h = Hierarchy::from_history(&hist).unwrap();
        let y = random_labels(n, c, &mut rng);
        let curve = cm::ari_curve(&hist, &y).unwrap();
        prop_assert!(close(h.ari_auc(&y).unwrap(), cm::ari_auc(&curve).unwrap()));
        if let Ok(p) = cm::dendrogram_purity(&hist, &y) {
            prop_assert!(close(h.dendrogram_purity(&y).unwrap(), p));
        }
        if let Ok(s) = cm::subtree_score(&hist, &y) {
            prop_assert!(close(h.subtree_score(&y).unwrap(), s));
        }
        let t = h.to_tree().unwrap();
        prop_assert_eq!(&Hierarchy::from_tree(&t).unwrap().clusters(), &h.clusters());
    }
}
