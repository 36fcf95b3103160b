//! Exactness tests of the PYDT prior, likelihood and generator against the spec's reference
//! numbers (§6.1), enumeration of every tree (N ≤ 6) and dense Gaussian algebra.

use super::bp::{self, Leaves, Messages};
use super::em::TimeDensity;
use super::generate::{ln_position_density, sample_leaves, sample_tree, walk};
use super::params::{Params, Tables};
use super::prior::{ln_structure_probability, ln_times_j_form, prior_terms};
use super::test_util::{all_shapes, chi_square_p, shape_tree, tame_tree};
use super::tree::{Position, PydtTree};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::collections::HashMap;

/// P0, P1, P2 of spec §6.1 (leaves A..E are 0..4).
fn reference_trees() -> Vec<(PydtTree, Vec<Vec<f64>>)> {
    let three = vec![vec![0.5, -0.2], vec![0.8, 0.1], vec![-1.0, 0.4]];
    let five = vec![
        vec![0.5, -0.2],
        vec![0.8, 0.1],
        vec![0.2, 0.3],
        vec![-1.0, 0.4],
        vec![-0.3, -0.9],
    ];
    // P0: root(4)@0.3 → {node(3)@0.6 → {A, B}, C}
    let p0 = PydtTree::from_parents(
        3,
        &[Some(3), Some(3), Some(4), Some(4), None],
        &[0., 0., 0., 0.6, 0.3],
    )
    .unwrap();
    // P1: root(6)@0.3 → {node(5)@0.6 → {A, B, C}, D, E}
    let p1 = PydtTree::from_parents(
        5,
        &[Some(5), Some(5), Some(5), Some(6), Some(6), Some(6), None],
        &[0., 0., 0., 0., 0., 0.6, 0.3],
    )
    .unwrap();
    // P2: root(8)@0.2 → {node(6)@0.5 → {node(5)@0.8 → {A, B}, C}, node(7)@0.7 → {D, E}}
    let p2 = PydtTree::from_parents(
        5,
        &[
            Some(5),
            Some(5),
            Some(6),
            Some(7),
            Some(7),
            Some(6),
            Some(8),
            Some(8),
            None,
        ],
        &[0., 0., 0., 0., 0., 0.8, 0.5, 0.7, 0.2],
    )
    .unwrap();
    vec![(p0, three), (p1, five.clone()), (p2, five)]
}

#[test]
fn spec_6_1_reference_values() {
    // (log p(X|T,t), [(θ, α, c), Σ log S, Σ log T, total]) per tree.
    let expected = [
        (
            -6.29641283192,
            [
                (
                    (1.0, 0.0, 1.0),
                    -2.48490664979,
                    0.75537448589,
                    -8.02594499583,
                ),
                (
                    (0.5, 0.3, 1.5),
                    -1.32059692370,
                    0.59552818335,
                    -7.02148157227,
                ),
            ],
        ),
        (
            -9.94246581447,
            [
                (
                    (1.0, 0.0, 1.0),
                    -5.88610403145,
                    0.61454852870,
                    -15.21402131722,
                ),
                (
                    (0.5, 0.3, 1.5),
                    -4.27247941017,
                    0.25234214245,
                    -13.96260308219,
                ),
            ],
        ),
        (
            -9.89833793726,
            [
                (
                    (1.0, 0.0, 1.0),
                    -7.27239839257,
                    2.28929086231,
                    -14.88144546752,
                ),
                (
                    (0.5, 0.3, 1.5),
                    -5.22408090554,
                    1.20221076764,
                    -13.92020807516,
                ),
            ],
        ),
    ];
    let mut msgs = Messages::default();
    for ((tree, x), (lik, rows)) in reference_trees().iter().zip(expected) {
        let leaves = Leaves::exact(x).unwrap();
        let got = bp::ln_likelihood(tree, &leaves, 1.0, &mut msgs);
        assert!((got - lik).abs() < 1e-9, "likelihood {got} vs {lik}");
        for ((theta, alpha, c), ln_s, ln_t, total) in rows {
            let p = Params::new(theta, alpha, c, 1.0).unwrap();
            let tables = Tables::new(&p, tree.n_leaves());
            let terms = prior_terms(tree, &p, &tables);
            assert!(
                (terms.ln_structure - ln_s).abs() < 1e-9,
                "{} vs {ln_s}",
                terms.ln_structure
            );
            assert!(
                (terms.ln_times - ln_t).abs() < 1e-9,
                "{} vs {ln_t}",
                terms.ln_times
            );
            assert!((ln_times_j_form(tree, &p, &tables) - ln_t).abs() < 1e-9);
            let joint = super::ln_joint(tree, &leaves, &p, &tables, &mut msgs);
            assert!((joint - total).abs() < 1e-9, "{joint} vs {total}");
        }
    }
}

fn settings() -> Vec<Params> {
    [
        (0.5, 0.3),
        (1.0, 0.0),
        (2.0, 0.7),
        (-0.4, 0.2),
        (0.0, 0.0),
        (-0.6, 0.3),
    ]
    .into_iter()
    .map(|(t, a)| Params::new(t, a, 1.0, 1.0).unwrap())
    .collect()
}

#[test]
fn structure_probabilities_sum_to_one() {
    let counts = [1usize, 1, 4, 26, 236, 2752];
    for n in 1..=6 {
        let items: Vec<usize> = (0..n).collect();
        let shapes = all_shapes(&items);
        assert_eq!(shapes.len(), counts[n - 1], "trees over {n} leaves");
        let trees: Vec<PydtTree> = shapes.iter().map(|s| shape_tree(n, s)).collect();
        for p in settings() {
            let tables = Tables::new(&p, n);
            let total: f64 = trees
                .iter()
                .map(|t| ln_structure_probability(t, &tables).exp())
                .sum();
            assert!((total - 1.0).abs() < 1e-12, "n = {n}, {p:?}: {total}");
            // Binary-only settings (θ + 2α = 0) give multifurcations probability 0.
            if !p.multifurcating() {
                for t in &trees {
                    if t.n_internal() < n - 1 {
                        assert_eq!(ln_structure_probability(t, &tables), f64::NEG_INFINITY);
                    }
                }
            }
        }
    }
}

#[test]
fn generator_topologies_match_structure_probabilities() {
    let n = 4;
    let items: Vec<usize> = (0..n).collect();
    let shapes = all_shapes(&items);
    for (seed, p) in [
        (11u64, Params::new(0.5, 0.3, 1.0, 1.0).unwrap()),
        (12, Params::ddt(0.7, 1.0).unwrap()),
    ] {
        let tables = Tables::new(&p, n);
        let mut probs = HashMap::new();
        for s in &shapes {
            let t = shape_tree(n, s);
            let lp = ln_structure_probability(&t, &tables);
            if lp > f64::NEG_INFINITY {
                probs.insert(t.clusters(), lp.exp());
            }
        }
        let mut rng = StdRng::seed_from_u64(seed);
        let mut counts: HashMap<Vec<Vec<usize>>, f64> = HashMap::new();
        let draws = 20_000;
        for _ in 0..draws {
            let t = sample_tree(n, &p, &mut rng);
            t.validate().unwrap();
            *counts.entry(t.clusters()).or_default() += 1.0;
        }
        assert!(
            counts.keys().all(|k| probs.contains_key(k)),
            "a tree of probability 0 was drawn"
        );
        let keys: Vec<_> = probs.keys().cloned().collect();
        let obs: Vec<f64> = keys
            .iter()
            .map(|k| counts.get(k).copied().unwrap_or(0.0))
            .collect();
        let pr: Vec<f64> = keys.iter().map(|k| probs[k]).collect();
        let pv = chi_square_p(&obs, &pr);
        assert!(
            pv > 1e-3,
            "{p:?}: χ² p-value {pv} over {} topologies",
            keys.len()
        );
        assert_eq!(keys.len(), if p.multifurcating() { 26 } else { 15 });
    }
}

/// log N(x; 0, Σ) by Cholesky.
fn dense_ln_normal(x: &[f64], cov: &[f64]) -> f64 {
    let n = x.len();
    let chol = nalgebra::DMatrix::from_row_slice(n, n, cov)
        .cholesky()
        .unwrap();
    let l = chol.l();
    let z = l
        .solve_lower_triangular(&nalgebra::DVector::from_column_slice(x))
        .unwrap();
    let ln_det: f64 = (0..n).map(|i| l[(i, i)].ln()).sum::<f64>() * 2.0;
    -0.5 * (n as f64 * (2.0 * std::f64::consts::PI).ln() + ln_det + z.norm_squared())
}

#[test]
fn belief_propagation_equals_the_dense_gaussian() {
    let mut rng = StdRng::seed_from_u64(3);
    let mut msgs = Messages::default();
    for case in 0..40 {
        let n = 2 + case % 7;
        let (d, sigma2, noise) = (1 + case % 3, 0.3 + 0.1 * case as f64, [0.0, 0.25][case % 2]);
        let p = Params::new(1.0 + (case % 3) as f64, 0.2, 1.0, sigma2).unwrap();
        let tree = tame_tree(n, &p, &mut rng);
        let x: Vec<Vec<f64>> = (0..n)
            .map(|_| (0..d).map(|_| rng.random::<f64>() * 2.0 - 1.0).collect())
            .collect();
        let got = bp::ln_likelihood(
            &tree,
            &Leaves::with_noise(&x, noise).unwrap(),
            sigma2,
            &mut msgs,
        );
        let mut cov = tree.mrca_times();
        for i in 0..n {
            cov[i * n + i] += noise / sigma2;
        }
        cov.iter_mut().for_each(|c| *c *= sigma2);
        let want: f64 = (0..d)
            .map(|k| dense_ln_normal(&x.iter().map(|r| r[k]).collect::<Vec<_>>(), &cov))
            .sum();
        assert!(
            (got - want).abs() < 1e-9 * want.abs().max(1.0),
            "case {case}: {got} vs {want}"
        );
    }
}

/// Dense joint Gaussian of every node (1-D): Cov(x_a, x_b) = σ² t(lca(a, b)); condition on noisy
/// leaves and compare marginals and edge statistics with the downward pass.
#[test]
fn downward_pass_matches_dense_conditioning() {
    let mut rng = StdRng::seed_from_u64(8);
    let mut msgs = Messages::default();
    for case in 0..12 {
        let n = 3 + case % 5;
        let sigma2 = 0.7;
        let noise = [0.0, 0.4][case % 2];
        let p = Params::new(0.8, 0.3, 1.2, sigma2).unwrap();
        let tree = tame_tree(n, &p, &mut rng);
        let x: Vec<Vec<f64>> = (0..n)
            .map(|_| vec![rng.random::<f64>() * 3.0 - 1.5])
            .collect();
        bp::upward(
            &tree,
            &Leaves::with_noise(&x, noise).unwrap(),
            sigma2,
            &mut msgs,
        );
        bp::downward(&tree, sigma2, &mut msgs);
        let mut order = Vec::new();
        tree.postorder(&mut order);
        let ancestors = |v: usize| {
            let mut a = vec![v];
            let mut u = v;
            while tree.node(u).parent != super::tree::NONE {
                u = tree.node(u).parent;
                a.push(u);
            }
            a
        };
        let lca_time = |a: usize, b: usize| {
            let aa = ancestors(a);
            let bb = ancestors(b);
            aa.iter()
                .find(|u| bb.contains(u))
                .map(|&u| tree.time(u))
                .unwrap()
        };
        let m = order.len();
        let cov = |i: usize, j: usize| sigma2 * lca_time(order[i], order[j]);
        let obs: Vec<usize> = (0..m).filter(|&i| order[i] < n).collect();
        let no = obs.len();
        let mut s_oo = nalgebra::DMatrix::zeros(no, no);
        for (a, &i) in obs.iter().enumerate() {
            for (b, &j) in obs.iter().enumerate() {
                s_oo[(a, b)] = cov(i, j) + if a == b { noise } else { 0.0 };
            }
        }
        let y = nalgebra::DVector::from_iterator(no, obs.iter().map(|&i| x[order[i]][0]));
        let s_inv = s_oo.try_inverse().unwrap();
        let s_ao = nalgebra::DMatrix::from_fn(m, no, |i, b| cov(i, obs[b]));
        let mean = &s_ao * &s_inv * &y;
        let post = nalgebra::DMatrix::from_fn(m, m, cov) - &s_ao * &s_inv * s_ao.transpose();
        let idx: HashMap<usize, usize> = order.iter().enumerate().map(|(i, &v)| (v, i)).collect();
        for (i, &v) in order.iter().enumerate() {
            let (mu, var) = msgs.marginal(&tree, sigma2, v, 0);
            assert!(
                (mu - mean[i]).abs() < 1e-9 && (var - post[(i, i)]).abs() < 1e-9,
                "case {case} node {v}"
            );
            let pa = tree.node(v).parent;
            let want = if pa == super::tree::NONE {
                mean[i].powi(2) + post[(i, i)]
            } else {
                let j = idx[&pa];
                (mean[i] - mean[j]).powi(2) + post[(i, i)] + post[(j, j)] - 2.0 * post[(i, j)]
            };
            let got = msgs.edge_expected_sq(&tree, sigma2, v);
            assert!(
                (got - want).abs() < 1e-9,
                "case {case} edge to {v}: {got} vs {want}"
            );
        }
    }
}

/// The single-point process is a probability distribution over positions: node atoms plus the
/// integral of the segment densities (by quadrature) sum to 1, and `walk` draws node positions
/// with the probabilities `ln_position_density` gives.
#[test]
fn position_density_normalises_and_matches_walk() {
    let mut rng = StdRng::seed_from_u64(21);
    for p in [
        Params::new(0.5, 0.3, 0.8, 1.0).unwrap(),
        Params::new(2.0, 0.6, 1.5, 1.0).unwrap(),
    ] {
        let tree = sample_tree(7, &p, &mut rng);
        let tables = Tables::new(&p, 7);
        let mut total = 0.0;
        let mut order = Vec::new();
        tree.postorder(&mut order);
        for &v in &order {
            if !tree.is_leaf(v) {
                total += ln_position_density(&tree, &p, &tables, Position::Node(v)).exp();
            }
            // Integrate over s = −ln(1 − t) (dt = e^{−s} ds), trapezoid.
            let (s0, s1) = (tree.parent_s(v), tree.s(v).min(60.0));
            let k = 200_000;
            let h = (s1 - s0) / k as f64;
            let f = |s: f64| {
                (ln_position_density(&tree, &p, &tables, Position::Segment { below: v, s }) - s)
                    .exp()
            };
            total +=
                h * ((f(s0) + f(s1)) / 2.0 + (1..k).map(|i| f(s0 + i as f64 * h)).sum::<f64>());
        }
        assert!((total - 1.0).abs() < 1e-6, "{p:?}: {total}");
        // Node atoms: frequencies of walk.
        let draws = 40_000;
        let mut hits: HashMap<usize, f64> = HashMap::new();
        for _ in 0..draws {
            if let Some(Position::Node(v)) = walk(&tree, &p, &tables, f64::INFINITY, &mut rng) {
                *hits.entry(v).or_default() += 1.0;
            }
        }
        for v in tree.internal_nodes() {
            let q = ln_position_density(&tree, &p, &tables, Position::Node(v)).exp();
            let f = hits.get(&v).copied().unwrap_or(0.0) / draws as f64;
            assert!(
                (f - q).abs() < 4.0 * (q * (1.0 - q) / draws as f64).sqrt() + 1e-4,
                "node {v}: {f} vs {q}"
            );
        }
    }
}

#[test]
fn detach_and_attach_round_trip() {
    let mut rng = StdRng::seed_from_u64(4);
    let p = Params::new(1.0, 0.4, 1.0, 1.0).unwrap();
    for _ in 0..200 {
        let tree = sample_tree(8, &p, &mut rng);
        let mut order = Vec::new();
        tree.postorder(&mut order);
        let s = order[rng.random_range(0..order.len() - 1)];
        let mut t2 = tree.clone();
        let pos = t2.detach(s);
        t2.attach(s, pos);
        t2.validate().unwrap();
        assert_eq!(t2.clusters(), tree.clusters());
        assert_eq!(t2.mrca_times(), tree.mrca_times());
    }
}

#[test]
fn generated_leaves_have_the_tree_covariance() {
    // E[x_i x_j] = σ² t_mrca(i, j): Monte-Carlo over 20,000 draws on one fixed tree.
    let (tree, _) = reference_trees().remove(2);
    let mut rng = StdRng::seed_from_u64(5);
    let sigma2 = 1.7;
    let draws = 20_000;
    let mut acc = [0.0; 25];
    for _ in 0..draws {
        let x = sample_leaves(&tree, 1, sigma2, &mut rng);
        for i in 0..5 {
            for j in 0..5 {
                acc[i * 5 + j] += x[i][0] * x[j][0] / draws as f64;
            }
        }
    }
    for (a, t) in acc.iter().zip(tree.mrca_times()) {
        assert!((a - sigma2 * t).abs() < 0.06, "{a} vs {}", sigma2 * t);
    }
}

#[test]
fn parameters_out_of_range_are_refused() {
    for (t, a, c, s) in [
        (0.0, 1.0, 1.0, 1.0),
        (0.0, -0.1, 1.0, 1.0),
        (-0.7, 0.3, 1.0, 1.0),
        (0.0, 0.0, 0.0, 1.0),
        (0.0, 0.0, 1.0, -1.0),
        (f64::NAN, 0.0, 1.0, 1.0),
    ] {
        let e = Params::new(t, a, c, s).unwrap_err().to_string();
        assert!(e.contains("out of range") && !e.contains('\n'), "{e}");
    }
}

#[test]
fn newick_round_trips_with_times_and_multifurcations() {
    let mut rng = StdRng::seed_from_u64(17);
    let p = Params::new(2.0, 0.5, 1.0, 1.0).unwrap();
    let mut saw_multifurcation = false;
    for _ in 0..50 {
        let tree = tame_tree(9, &p, &mut rng);
        saw_multifurcation |= tree.n_internal() < 8;
        let s = super::newick::to_newick(&tree, None).unwrap();
        let back = super::newick::from_newick(&s, None).unwrap();
        assert_eq!(back.clusters(), tree.clusters(), "{s}");
        for (a, b) in back.mrca_times().iter().zip(tree.mrca_times()) {
            assert!((a - b).abs() < 1e-12, "{s}");
        }
    }
    assert!(saw_multifurcation);
    let names: Vec<String> = ["a b", "it's", "c"].iter().map(|s| s.to_string()).collect();
    let (p0, _) = reference_trees().remove(0);
    let s = super::newick::to_newick(&p0, Some(&names)).unwrap();
    assert!(
        s.starts_with("(c:0.7")
            && s.contains("('a b':0.4")
            && s.contains("'it''s':0.4")
            && s.ends_with("):0.3;"),
        "{s}"
    );
    assert_eq!(
        super::newick::from_newick(&s, Some(&names))
            .unwrap()
            .clusters(),
        p0.clusters()
    );
    assert!(super::newick::from_newick("(0:0.5,1:0.4):0.5;", None)
        .unwrap_err()
        .to_string()
        .contains("not 1"));
}

#[test]
fn metrics_on_multifurcating_trees() {
    use super::metrics::{ari_auc, ari_points, dendrogram_purity, subtree_score};
    // P1: root → {node → {A, B, C}, D, E}. Classes {A, B, C} = 0, {D, E} = 1.
    let (p1, _) = reference_trees().remove(1);
    let labels = [0, 0, 0, 1, 1];
    // Same-class pairs: 3 in class 0 (lca = node, pure), 1 in class 1 (lca = root, 2/5).
    let dp = dendrogram_purity(&p1, &labels).unwrap();
    assert!((dp - (3.0 + 0.4) / 4.0).abs() < 1e-12, "{dp}");
    // Pure internal nodes: the trifurcation only; n − C = 3.
    assert!((subtree_score(&p1, &labels).unwrap() - 1.0 / 3.0).abs() < 1e-12);
    // Opening the root gives 3 clusters {A,B,C}, {D}, {E}: all pure → ARI 1; then 5 clusters.
    let pts = ari_points(&p1, &labels).unwrap();
    assert_eq!(pts.iter().map(|p| p.0).collect::<Vec<_>>(), vec![1, 3, 5]);
    assert_eq!(pts[0].1, 0.0);
    assert!((pts[1].1 - 1.0).abs() < 1e-12 && (pts[2].1 - 1.0).abs() < 1e-12);
    // Area: (0 + 1)/2·2 + 1·2 = 3 over 4.
    assert!((ari_auc(&pts).unwrap() - 0.75).abs() < 1e-12);
}

/// The predictive mixture equals, component by component, the ratio of BP likelihoods with the
/// new point attached there: Σ_pos P(pos)·p(X ∪ x | T + pos)/p(X | T), with the segment
/// probabilities integrated by quadrature and the same divergence-time quantiles.
#[test]
fn predictive_density_equals_attaching_the_point() {
    use super::predictive::ln_predictive;
    let mut rng = StdRng::seed_from_u64(44);
    let mut msgs = Messages::default();
    for case in 0..6 {
        let p = Params::new(0.7, 0.25, 0.9 + 0.2 * case as f64, 0.8).unwrap();
        let full = tame_tree(6, &p, &mut rng);
        let x: Vec<Vec<f64>> = (0..6)
            .map(|_| vec![rng.random::<f64>() * 2.0 - 1.0, rng.random::<f64>()])
            .collect();
        let noise = [0.0, 0.1][case % 2];
        let leaves = Leaves::with_noise(&x, noise).unwrap();
        let mut minus = full.clone();
        minus.detach(5);
        let k = 3;
        let got = ln_predictive(&minus, &leaves, &p, &x[5..], noise, k).unwrap()[0];
        let tables = Tables::new(&p, 6);
        let base = bp::ln_likelihood(&minus, &leaves, p.sigma2, &mut msgs);
        let mut with = |pos: Position| {
            let mut t = minus.clone();
            t.attach(5, pos);
            bp::ln_likelihood(&t, &leaves, p.sigma2, &mut msgs) - base
        };
        let mut total = 0.0;
        let mut order = Vec::new();
        minus.postorder(&mut order);
        for &v in &order {
            if !minus.is_leaf(v) {
                total += ln_position_density(&minus, &p, &tables, Position::Node(v)).exp()
                    * with(Position::Node(v)).exp();
            }
            let (s0, s1) = (minus.parent_s(v), minus.s(v).min(60.0));
            let steps = 100_000;
            let h = (s1 - s0) / steps as f64;
            let f = |s: f64| {
                (ln_position_density(&minus, &p, &tables, Position::Segment { below: v, s }) - s)
                    .exp()
            };
            let prob =
                h * ((f(s0) + f(s1)) / 2.0 + (1..steps).map(|i| f(s0 + i as f64 * h)).sum::<f64>());
            let lambda = p.c * tables.rate(minus.node(v).leaves);
            let big_u = lambda * (minus.s(v) - s0);
            for q in 0..k {
                let frac = (q as f64 + 0.5) / k as f64;
                let s_d = s0 - (1.0 - frac * (1.0 - (-big_u).exp())).ln() / lambda;
                total += prob / k as f64 * with(Position::Segment { below: v, s: s_d }).exp();
            }
        }
        assert!(
            (got - total.ln()).abs() < 1e-5,
            "case {case}: {got} vs {}",
            total.ln()
        );
    }
}

#[test]
fn em_gradient_matches_finite_differences() {
    use super::em::MStep;
    let mut rng = StdRng::seed_from_u64(61);
    let mut msgs = Messages::default();
    for case in 0..8 {
        let p = Params::new(0.8, 0.2, 0.7 + 0.3 * case as f64, 0.6).unwrap();
        let tree = tame_tree(3 + case, &p, &mut rng);
        let x: Vec<Vec<f64>> = (0..tree.n_leaves())
            .map(|_| vec![rng.random::<f64>(), rng.random::<f64>() - 0.5])
            .collect();
        let leaves = Leaves::with_noise(&x, [0.0, 0.2][case % 2]).unwrap();
        bp::upward(&tree, &leaves, p.sigma2, &mut msgs);
        bp::downward(&tree, p.sigma2, &mut msgs);
        let tables = Tables::new(&p, tree.n_leaves());
        // Both densities (the t-density's Q differs from the s-density's by Σ s_v).
        let density = [TimeDensity::LogScale, TimeDensity::Time][(case / 2) % 2];
        let m = MStep::with_density(&tree, &msgs, &p, &tables, density);
        let z0 = m.z_of_tree();
        // z of the tree reproduces its times.
        let s = m.s_of(&z0);
        for v in tree.internal_nodes() {
            assert!((s[v] - tree.s(v)).abs() < 1e-9 * tree.s(v).max(1.0));
        }
        let sum_s: f64 = tree.internal_nodes().iter().map(|&v| s[v]).sum();
        let q_s = MStep::new(&tree, &msgs, &p, &tables).q(&z0);
        let want = if density == TimeDensity::Time {
            q_s + sum_s
        } else {
            q_s
        };
        assert!((m.q(&z0) - want).abs() < 1e-9 * want.abs().max(1.0));
        let g = m.grad(&z0);
        for i in 0..z0.len() {
            let h = 1e-6;
            let (mut a, mut b) = (z0.clone(), z0.clone());
            a[i] += h;
            b[i] -= h;
            let fd = (m.q(&a) - m.q(&b)) / (2.0 * h);
            assert!(
                (fd - g[i]).abs() < 1e-5 * fd.abs().max(1.0),
                "case {case} z{i}: {fd} vs {}",
                g[i]
            );
        }
    }
}

/// `time_density`: "auto" is the t-density on exact leaves with σ² fixed and the s-density on
/// noisy ones or with σ² learned, "t" where it has no maximum is refused, and the objective is log p(X, T, t) or log p(X, T, t) − Σ s_v.
#[test]
fn em_time_density_resolves_by_the_leaves() {
    use super::em::{em_times, objective, EmSettings};
    let mut rng = StdRng::seed_from_u64(63);
    let p = Params::new(1.0, 0.3, 1.0, 1.0).unwrap();
    let tree = tame_tree(6, &p, &mut rng);
    let x = sample_leaves(&tree, 2, 1.0, &mut rng);
    let (exact, noisy) = (
        Leaves::exact(&x).unwrap(),
        Leaves::with_noise(&x, 0.1).unwrap(),
    );
    let t = EmSettings {
        time_density: TimeDensity::Time,
        ..EmSettings::default()
    };
    let auto = EmSettings::default();
    let s = EmSettings {
        time_density: TimeDensity::LogScale,
        ..EmSettings::default()
    };
    let learn = EmSettings {
        learn_sigma2: true,
        ..auto
    };
    assert_eq!(auto.density_for(&exact).unwrap(), TimeDensity::Time);
    assert_eq!(auto.density_for(&noisy).unwrap(), TimeDensity::LogScale);
    assert_eq!(learn.density_for(&exact).unwrap(), TimeDensity::LogScale);
    assert_eq!(s.density_for(&exact).unwrap(), TimeDensity::LogScale);
    let t_learn = EmSettings {
        learn_sigma2: true,
        ..t
    };
    let err = em_times(&tree, &exact, &p, &t_learn)
        .unwrap_err()
        .to_string();
    assert!(err.contains("fixed sigma2"), "{err}");
    let err = em_times(&tree, &noisy, &p, &t).unwrap_err().to_string();
    assert!(err.contains("exact leaves"), "{err}");
    let mut msgs = Messages::default();
    let tables = Tables::new(&p, 6);
    let l = super::ln_joint(&tree, &exact, &p, &tables, &mut msgs);
    let jac = super::em::ln_jacobian(&tree);
    assert!(jac > 0.0);
    assert_eq!(objective(&tree, &exact, &p, &auto, &mut msgs), l);
    assert_eq!(objective(&tree, &exact, &p, &t, &mut msgs), l);
    assert_eq!(objective(&tree, &exact, &p, &s, &mut msgs), l - jac);
    // Each density's EM raises its own objective from the same start, to different times.
    let (ft, fs) = (
        em_times(&tree, &exact, &p, &t).unwrap(),
        em_times(&tree, &exact, &p, &s).unwrap(),
    );
    assert!(ft.objective() > ft.trace[0] && fs.objective() > fs.trace[0]);
    assert!(
        objective(&ft.tree, &exact, &p, &t, &mut msgs)
            >= objective(&fs.tree, &exact, &p, &t, &mut msgs) - 1e-9
    );
    assert!(
        objective(&fs.tree, &exact, &p, &s, &mut msgs)
            >= objective(&ft.tree, &exact, &p, &s, &mut msgs) - 1e-9
    );
}

/// EM never lowers its objective (the log joint, plus the hyper-priors when learned), and at its
/// fixed point the log joint is stationary in the times.
#[test]
fn em_raises_its_objective_to_a_stationary_point() {
    use super::em::{em_times, EmSettings, MStep};
    let mut rng = StdRng::seed_from_u64(62);
    let mut msgs = Messages::default();
    for case in 0..12 {
        // Cases 0-5 with the s-density, 6-11 with the t-density (the default on exact leaves).
        let density = [TimeDensity::LogScale, TimeDensity::Time][case / 6];
        let case = case % 6;
        let truth = Params::new(1.0, 0.3, 1.0, 1.0).unwrap();
        let n = 5 + case;
        let data_tree = tame_tree(n, &truth, &mut rng);
        let x = sample_leaves(&data_tree, 3, 1.0, &mut rng);
        let leaves = Leaves::exact(&x).unwrap();
        let start = tame_tree(n, &truth, &mut rng);
        let settings = EmSettings {
            learn_c: case % 2 == 1,
            // The t-density has no maximum with σ² learned (em_times refuses it).
            learn_sigma2: case % 3 == 2 && density == TimeDensity::LogScale,
            learn_theta: case == 3 || case == 4,
            learn_alpha: case == 4 || case == 5,
            tolerance: 1e-10,
            time_density: density,
            ..EmSettings::default()
        };
        let fit = em_times(&start, &leaves, &truth, &settings).unwrap();
        assert!(fit.trace.len() >= 2, "case {case}: no EM step taken");
        for w in fit.trace.windows(2) {
            assert!(w[1] >= w[0] - 1e-9, "case {case}: {} after {}", w[1], w[0]);
        }
        assert!(
            fit.objective() > fit.trace[0] + 1e-3,
            "case {case}: EM did not move"
        );
        fit.tree.validate().unwrap();
        assert_eq!(fit.tree.clusters(), start.clusters());
        // Stationary: ∇_z of the objective (the log density of (X, T, s): the log joint minus
        // the Jacobian Σ s_v; of (X, T, t): the log joint), by finite differences through the
        // nested map.
        let tables = Tables::new(&fit.params, n);
        bp::upward(&fit.tree, &leaves, fit.params.sigma2, &mut msgs);
        bp::downward(&fit.tree, fit.params.sigma2, &mut msgs);
        let m = MStep::new(&fit.tree, &msgs, &fit.params, &tables);
        let z0 = m.z_of_tree();
        let joint = |z: &[f64], msgs: &mut Messages| {
            let mut t = fit.tree.clone();
            m.apply(z, &mut t);
            let jac = if density == TimeDensity::Time {
                0.0
            } else {
                super::em::ln_jacobian(&t)
            };
            super::ln_joint(&t, &leaves, &fit.params, &tables, msgs) - jac
        };
        if settings.learn_theta || settings.learn_alpha {
            // θ and α sit at a coordinate-wise maximum of the objective.
            let at = |p: &Params, msgs: &mut Messages| {
                super::em::objective(&fit.tree, &leaves, p, &settings, msgs)
            };
            let f0 = at(&fit.params, &mut msgs);
            for (dt, da) in [(0.05, 0.0), (-0.05, 0.0), (0.0, 0.02), (0.0, -0.02)] {
                let mut p = fit.params;
                p.theta += if settings.learn_theta { dt } else { 0.0 };
                p.alpha += if settings.learn_alpha { da } else { 0.0 };
                if p.validate().is_ok() && p != fit.params {
                    assert!(
                        at(&p, &mut msgs) <= f0 + 1e-6,
                        "case {case}: {p:?} beats {:?}",
                        fit.params
                    );
                }
            }
            assert!(fit.params != truth, "case {case}: theta/alpha did not move");
        }
        if !settings.learn_c
            && !settings.learn_sigma2
            && !settings.learn_theta
            && !settings.learn_alpha
        {
            for i in 0..z0.len() {
                let h = 1e-5;
                let (mut a, mut b) = (z0.clone(), z0.clone());
                a[i] += h;
                b[i] -= h;
                let fd = (joint(&a, &mut msgs) - joint(&b, &mut msgs)) / (2.0 * h);
                assert!(fd.abs() < 1e-2, "case {case} z{i}: dL/dz = {fd}");
            }
        }
    }
}
