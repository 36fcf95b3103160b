//! Tests of EP for the probit model and of the greedy EM structure search.

use super::bp::{self, Leaves, Messages};
use super::em::{self, EmSettings};
use super::ep::{self, ln_cdf_and_ratio, EpSettings, Sites};
use super::params::Params;
use super::probit::Binary;
use super::search::{fit_times, greedy_search, midpoint_s, Observations, SearchSettings};
use super::tree::PydtTree;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

fn max_children(tree: &PydtTree) -> usize {
    let mut order = Vec::new();
    tree.postorder(&mut order);
    order
        .iter()
        .map(|&v| tree.children(v).count())
        .max()
        .unwrap()
}

#[test]
fn normal_cdf_and_ratio_in_both_tails() {
    // Φ(−1), Φ(1), Φ(−20) (ln Φ(−20) = ln 2.753624118606232e−89).
    let (l, r) = ln_cdf_and_ratio(-1.0);
    assert!((l - 0.158_655_253_931_457_05_f64.ln()).abs() < 1e-13);
    let pdf1 = (-0.5f64).exp() / (2.0 * std::f64::consts::PI).sqrt();
    assert!((r - pdf1 / 0.158_655_253_931_457_05).abs() < 1e-12);
    let (l, _) = ln_cdf_and_ratio(1.0);
    assert!((l - 0.841_344_746_068_542_9_f64.ln()).abs() < 1e-13);
    let exact = 2.753_624_118_606_232e-89_f64.ln();
    for z in [-20.0 - 1e-9, -20.0 + 1e-9] {
        let (l, r) = ln_cdf_and_ratio(z);
        assert!((l - exact).abs() < 1e-6, "{z}: {l} vs {exact}");
        // φ/Φ ≈ −z − 1/z for large −z.
        assert!((r - 20.0497).abs() < 1e-3, "{r}");
    }
    let (l, r) = ln_cdf_and_ratio(-40.0);
    assert!(l.is_finite() && r > 40.0 && r < 40.03);
}

#[test]
fn midpoint_in_t_on_the_log_scale() {
    for (a, b) in [
        (0.0_f64, 1.0_f64),
        (0.3, 2.5),
        (2.0, f64::INFINITY),
        (0.0, f64::INFINITY),
    ] {
        let (ta, tb): (f64, f64) = (1.0 - (-a).exp(), 1.0 - (-b).exp());
        let want = -(1.0 - 0.5 * (ta + tb)).ln();
        assert!((midpoint_s(a, b) - want).abs() < 1e-12);
        assert!((midpoint_s(b, a) - want).abs() < 1e-12);
    }
    // Far beyond where t rounds to 1: still between its ends, ln 2 above the lower one.
    let m = midpoint_s(800.0, f64::INFINITY);
    assert!((m - (800.0 + std::f64::consts::LN_2)).abs() < 1e-12);
    assert!(midpoint_s(800.0, 800.5) > 800.0 && midpoint_s(800.0, 800.5) < 800.5);
}

/// P(s_i z_i > 0 for all i) for z ~ N(0, R) with unit variances and correlations R (n ≤ 3):
/// 1/4 + asin(ρ)/(2π) for two, 1/8 + Σ asin(ρ_ij)/(4π) for three (Sheppard).
fn orthant(signs: &[f64], rho: &[[f64; 3]; 3]) -> f64 {
    let n = signs.len();
    let mut s = 0.0;
    for i in 0..n {
        for j in i + 1..n {
            s += (signs[i] * signs[j] * rho[i][j]).asin();
        }
    }
    match n {
        2 => 0.25 + s / (2.0 * std::f64::consts::PI),
        3 => 0.125 + s / (4.0 * std::f64::consts::PI),
        _ => unreachable!(),
    }
}

#[test]
fn ep_evidence_close_to_exact_orthant_probabilities() {
    // With D = 1, p(y | T, t) = P(s_i (x_i + ε_i) > 0 ∀i): an orthant probability of a Gaussian
    // with covariance σ²·M + I (M: most recent common ancestor times).
    let mut worst: f64 = 0.0;
    for (n, parents, times) in [
        (2, vec![Some(2), Some(2), None], vec![0.0, 0.0, 0.4]),
        (
            3,
            vec![Some(3), Some(3), Some(4), Some(4), None],
            vec![0.0, 0.0, 0.0, 0.8, 0.3],
        ),
        (
            3,
            vec![Some(3), Some(3), Some(3), None],
            vec![0.0, 0.0, 0.0, 0.6],
        ),
    ] {
        let tree = PydtTree::from_parents(n, &parents, &times).unwrap();
        let m = tree.mrca_times();
        for sigma2 in [0.5, 2.0, 8.0] {
            for mask in 0..(1usize << n) {
                let y: Vec<Vec<f64>> = (0..n).map(|i| vec![((mask >> i) & 1) as f64]).collect();
                let b = Binary::from_rows(&y).unwrap();
                let mut sites = Sites::initial(&b);
                let mut msgs = Messages::default();
                let settings = EpSettings {
                    tolerance: 1e-12,
                    sweeps: 1000,
                    ..EpSettings::default()
                };
                let ln_ep = ep::run(&tree, &b, sigma2, &mut sites, &settings, &mut msgs).unwrap();
                let mut rho = [[0.0; 3]; 3];
                for i in 0..n {
                    for j in 0..n {
                        rho[i][j] = sigma2 * m[i * n + j] / (sigma2 + 1.0);
                    }
                }
                let signs: Vec<f64> = (0..n)
                    .map(|i| if (mask >> i) & 1 == 1 { 1.0 } else { -1.0 })
                    .collect();
                let exact = orthant(&signs, &rho).ln();
                worst = worst.max((ln_ep - exact).abs());
                // Moment matching at the fixed point: each leaf's marginal equals its tilted
                // distribution (cavity × probit factor).
                bp::upward(&tree, &sites.leaves, sigma2, &mut msgs);
                bp::downward(&tree, sigma2, &mut msgs);
                for (i, &s) in signs.iter().enumerate() {
                    let (mc, vc) = msgs.outside(&tree, sigma2, i, 0);
                    let z = s * mc / (1.0 + vc).sqrt();
                    let (_, rr) = ln_cdf_and_ratio(z);
                    let mean = mc + s * vc * rr / (1.0 + vc).sqrt();
                    let var = vc - vc * vc * rr * (z + rr) / (1.0 + vc);
                    let (mq, vq) = msgs.marginal(&tree, sigma2, i, 0);
                    assert!((mq - mean).abs() < 1e-8 && (vq - var).abs() < 1e-8);
                }
            }
        }
    }
    // EP for probit is accurate but not exact beyond one site per variable.
    assert!(worst < 0.02, "worst |ln Z_EP − ln Z| = {worst}");
    assert!(worst > 0.0);
}

#[test]
fn ep_single_leaf_is_exact() {
    // One leaf: x ~ N(0, σ²) per dimension, so p(y) = Φ(0) = 1/2 for each; EP is exact with one
    // site per variable.
    let tree = PydtTree::single(1);
    let b = Binary::from_rows(&[vec![1.0, 0.0, 1.0]]).unwrap();
    let mut sites = Sites::initial(&b);
    let ln = ep::run(
        &tree,
        &b,
        3.0,
        &mut sites,
        &EpSettings::default(),
        &mut Messages::default(),
    )
    .unwrap();
    assert!((ln - 3.0 * 0.5f64.ln()).abs() < 1e-9, "{ln}");
}

fn clustered(centres: &[Vec<f64>], per: usize, spread: f64, rng: &mut StdRng) -> Vec<Vec<f64>> {
    let mut rows = Vec::new();
    for c in centres {
        for _ in 0..per {
            rows.push(
                c.iter()
                    .map(|&m| {
                        let e: f64 = StandardNormal.sample(rng);
                        m + spread * e
                    })
                    .collect::<Vec<f64>>(),
            );
        }
    }
    rows
}

fn small_settings(iterations: usize) -> SearchSettings {
    SearchSettings {
        iterations,
        ..SearchSettings::default()
    }
}

#[test]
fn search_recovers_separated_clusters_and_is_deterministic() {
    let mut rng = StdRng::seed_from_u64(5);
    let centres = vec![vec![4.0, 0.0], vec![-4.0, 0.0], vec![0.0, 6.0]];
    let rows = clustered(&centres, 3, 0.2, &mut rng);
    let data = Observations::Gaussian(Leaves::exact(&rows).unwrap());
    for params in [
        Params::ddt(1.0, 4.0).unwrap(),
        Params::new(1.0, 0.3, 1.0, 4.0).unwrap(),
    ] {
        let run = |seed| {
            greedy_search(
                &data,
                &params,
                &small_settings(15),
                &mut StdRng::seed_from_u64(seed),
            )
            .unwrap()
        };
        let r = run(11);
        r.tree.validate().unwrap();
        let clusters = r.tree.clusters();
        for k in 0..3 {
            let want: Vec<usize> = (3 * k..3 * k + 3).collect();
            assert!(
                clusters.contains(&want),
                "cluster {want:?} missing: {clusters:?}"
            );
        }
        // The trace never falls, and the objective is the returned tree's.
        assert!(r.trace.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(r.objective, *r.trace.last().unwrap());
        let Observations::Gaussian(leaves) = &data else {
            unreachable!()
        };
        let again = em::objective(
            &r.tree,
            leaves,
            &r.params,
            &EmSettings::default(),
            &mut Messages::default(),
        );
        assert!((again - r.objective).abs() < 1e-9);
        // Same seed, same tree.
        let r2 = run(11);
        assert_eq!(r2.tree.clusters(), r.tree.clusters());
        assert_eq!(r2.objective, r.objective);
        if !params.multifurcating() {
            assert_eq!(max_children(&r.tree), 2);
        }
    }
}

#[test]
fn ddt_search_never_multifurcates_and_beats_its_start() {
    let mut rng = StdRng::seed_from_u64(9);
    for rep in 0..3 {
        let rows: Vec<Vec<f64>> = (0..10)
            .map(|_| (0..3).map(|_| rng.random::<f64>() * 4.0).collect())
            .collect();
        let data = Observations::Gaussian(Leaves::exact(&rows).unwrap());
        let p = Params::ddt(0.5 + rep as f64, 1.0).unwrap();
        let r = greedy_search(
            &data,
            &p,
            &small_settings(10),
            &mut StdRng::seed_from_u64(rep),
        )
        .unwrap();
        assert_eq!(max_children(&r.tree), 2);
        assert_eq!(r.tree.n_internal(), 9);
        assert!(r.objective >= r.trace[0]);
        assert_eq!(r.trace.len(), 11 + usize::from(r.trace[10] != r.objective));
    }
}

#[test]
fn pydt_search_joins_equidistant_clusters_at_one_node() {
    // Four tight clusters at the corners of a regular tetrahedron (equidistant): the PYDT with a
    // large α puts them under one node; the DDT cannot.
    let mut rng = StdRng::seed_from_u64(3);
    let s = 3.0;
    let centres = vec![
        vec![s, s, s],
        vec![s, -s, -s],
        vec![-s, s, -s],
        vec![-s, -s, s],
    ];
    let rows = clustered(&centres, 4, 0.1, &mut rng);
    let data = Observations::Gaussian(Leaves::exact(&rows).unwrap());
    let p = Params::new(0.5, 0.5, 1.0, 20.0).unwrap();
    let r = greedy_search(
        &data,
        &p,
        &small_settings(30),
        &mut StdRng::seed_from_u64(1),
    )
    .unwrap();
    let root = r.tree.root();
    let top: Vec<usize> = r
        .tree
        .children(root)
        .map(|c| r.tree.node(c).leaves)
        .collect();
    assert_eq!(top, vec![4, 4, 4, 4], "root children sizes {top:?}");
    // The generating structure (one node over four 4-point stars), its times fitted, scores no
    // better than what the search found.
    assert!(r.objective > fitted_stars(4, 4, &data, &p) - 1e-6);
}

/// The objective of the generating structure: `groups` stars of `per` consecutive points under
/// one root, its times fitted.
fn fitted_stars(groups: usize, per: usize, data: &Observations, p: &Params) -> f64 {
    let n = groups * per;
    let mut parents: Vec<Option<usize>> = (0..n).map(|i| Some(n + i / per)).collect();
    parents.extend((0..groups).map(|_| Some(n + groups)));
    parents.push(None);
    let mut times = vec![0.0; n];
    times.extend((0..groups).map(|_| 0.7));
    times.push(0.3);
    let truth = PydtTree::from_parents(n, &parents, &times).unwrap();
    fit_times(&truth, data, p, &SearchSettings::default())
        .unwrap()
        .objective
}

#[test]
fn probit_search_separates_two_binary_groups() {
    // Two groups of 5 rows, each a noisy copy (5% flips) of its own 30-bit prototype.
    let mut rng = StdRng::seed_from_u64(21);
    let protos: Vec<Vec<bool>> = (0..2)
        .map(|_| (0..30).map(|_| rng.random::<bool>()).collect())
        .collect();
    let rows: Vec<Vec<f64>> = (0..10)
        .map(|i| {
            protos[i / 5]
                .iter()
                .map(|&b| f64::from(u8::from(b ^ (rng.random::<f64>() < 0.05))))
                .collect()
        })
        .collect();
    let data = Observations::Probit(Binary::from_rows(&rows).unwrap());
    let p = Params::new(1.0, 0.2, 1.0, 4.0).unwrap();
    let r = greedy_search(
        &data,
        &p,
        &small_settings(10),
        &mut StdRng::seed_from_u64(2),
    )
    .unwrap();
    r.tree.validate().unwrap();
    let clusters = r.tree.clusters();
    assert!(
        clusters.contains(&(0..5).collect::<Vec<_>>())
            && clusters.contains(&(5..10).collect::<Vec<_>>()),
        "{clusters:?}"
    );
    assert!(r.objective.is_finite() && r.trace.windows(2).all(|w| w[1] >= w[0]));
    // fit_times on the found tree does not lose what the search found, and the generating
    // structure (two 5-point stars) scores no better.
    let again = fit_times(&r.tree, &data, &r.params, &SearchSettings::default()).unwrap();
    assert!(again.objective > r.objective - 1e-6);
    assert!(r.objective > fitted_stars(2, 5, &data, &p) - 1e-6);
}

#[test]
fn search_rejects_bad_settings_and_data() {
    let rows = vec![vec![0.0, 1.0], vec![0.0, 1.0], vec![2.0, 3.0]];
    let data = Observations::Gaussian(Leaves::exact(&rows).unwrap());
    let p = Params::ddt(1.0, 1.0).unwrap();
    let e = greedy_search(
        &data,
        &p,
        &SearchSettings::default(),
        &mut StdRng::seed_from_u64(0),
    )
    .unwrap_err();
    assert!(e.to_string().contains("identical"), "{e}");
    let ok = Observations::Gaussian(Leaves::exact(&rows[1..]).unwrap());
    let bad = SearchSettings {
        list_size: 0,
        ..SearchSettings::default()
    };
    assert!(greedy_search(&ok, &p, &bad, &mut StdRng::seed_from_u64(0)).is_err());
    let b = Binary::from_rows(&[vec![1.0, 0.0], vec![0.0, 1.0]]).unwrap();
    let mut sites = Sites::initial(&b);
    let tree = PydtTree::from_parents(2, &[Some(2), Some(2), None], &[0.0, 0.0, 0.5]).unwrap();
    let damp = EpSettings {
        damping: 0.0,
        ..EpSettings::default()
    };
    let e = ep::run(&tree, &b, 1.0, &mut sites, &damp, &mut Messages::default()).unwrap_err();
    assert!(e.to_string().contains("damping"));
}

#[test]
fn collapse_merges_short_branches_into_parents() {
    use super::search::collapse_short;
    // ((0,1):0.5 at 1e-7 below node 5, 2) — node 4 (over 0, 1) sits just after node 5.
    let parents = [Some(4), Some(4), Some(5), Some(5), Some(5), None];
    let s5 = 0.4;
    let t4 = 1.0 - (-(s5 + 1e-7_f64)).exp();
    let t5 = 1.0 - (-s5).exp();
    let tree = PydtTree::from_parents(4, &parents, &[0.0, 0.0, 0.0, 0.0, t4, t5]).unwrap();
    let c = collapse_short(&tree).unwrap();
    c.validate().unwrap();
    assert_eq!(c.clusters(), vec![vec![0, 1, 2, 3]]);
    assert_eq!(c.children(c.root()).count(), 4);
    let far = PydtTree::from_parents(4, &parents, &[0.0, 0.0, 0.0, 0.0, 0.7, t5]).unwrap();
    assert!(collapse_short(&far).is_none());
}

#[test]
fn dasgupta_cost_matches_the_pairwise_definition() {
    use super::metrics::dasgupta_cost;
    use super::test_util::{all_shapes, shape_tree};
    let mut rng = StdRng::seed_from_u64(8);
    let n = 5;
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..i {
            let x: f64 = rng.random();
            w[i * n + j] = x;
            w[j * n + i] = x;
        }
    }
    let items: Vec<usize> = (0..n).collect();
    for shape in all_shapes(&items) {
        let tree = shape_tree(n, &shape);
        let clusters = tree.clusters();
        let mut want = 0.0;
        for i in 0..n {
            for j in i + 1..n {
                let lca = clusters
                    .iter()
                    .filter(|c| c.contains(&i) && c.contains(&j))
                    .map(Vec::len)
                    .min()
                    .unwrap();
                want += w[i * n + j] * lca as f64;
            }
        }
        assert!((dasgupta_cost(&tree, &w).unwrap() - want).abs() < 1e-12);
    }
    assert!(dasgupta_cost(&PydtTree::single(5), &w[..4]).is_err());
}
