//! The generator's density against its definition written plainly from the generator's own
//! recorded scales, the two-body Jacobian against finite differences of the generator's
//! kinematics, the forbidden cases and the statistics table.

use super::*;
use crate::data::ginkgo::{generate_jet, GinkgoParams};
use crate::tree::Node;
use rand::SeedableRng;

fn dot(a: &FourVector, b: &FourVector) -> f64 {
    a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
}

/// The density of a child's scale `t` given its conditioning scale `tau`, from the generator's
/// description (exponential rate λ, redrawn while `u >= 1 - 1e-3`).
fn density(t: f64, tau: f64, lambda: f64) -> f64 {
    let u = t / tau;
    if (0.0..1.0 - 1e-3).contains(&u) {
        lambda * (-lambda * u).exp() / (tau * (1.0 - (-lambda * (1.0 - 1e-3)).exp()))
    } else {
        0.0
    }
}

#[test]
fn the_density_of_every_generated_split_matches_the_generator_s_definition() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut checked = 0;
    for lambda in [0.7, 1.5, 3.0] {
        let params = GinkgoParams {
            lambda,
            lambda_root: lambda,
            ..GinkgoParams::qcd()
        };
        for _ in 0..40 {
            let g = generate_jet(&params, &mut rng).unwrap();
            if g.leaves.len() < 2 || g.leaves.len() > 20 {
                continue;
            }
            let m = GinkgoGeneratorModel::new(g.leaves.clone(), 16.0, lambda).unwrap();
            let clusters = g.tree.node_clusters();
            for (v, node) in g.tree.nodes().iter().enumerate() {
                let Node::Internal(l, r) = *node else {
                    continue;
                };
                // The generator's own scales: the parent's, its first and second child's.
                let (tp, t1, t2) = (g.scales[v], g.scales[l], g.scales[r]);
                let tau = |t: f64| (tp.sqrt() - t.sqrt()).powi(2);
                let orders = density(t1, tp, lambda) * density(t2, tau(t1), lambda)
                    + density(t2, tp, lambda) * density(t1, tau(t2), lambda);
                // |p*| from four-vectors: the first child's energy in the parent's frame.
                let (p, p1) = (
                    leaf_sum(m.leaves(), clusters[v]),
                    leaf_sum(m.leaves(), clusters[l]),
                );
                let pstar = ((dot(&p1, &p).powi(2) / tp - t1).max(0.0)).sqrt();
                let want = (orders / (4.0 * std::f64::consts::PI) * 4.0 * tp.sqrt() / pstar).ln();
                let got = m.log_psi(clusters[l], clusters[r]);
                assert!(
                    (got - want).abs() < 1e-6 * want.abs().max(1.0),
                    "λ {lambda}: {got} vs {want} (t {tp} {t1} {t2})"
                );
                // The order the generator drew is one of the two terms.
                let drawn = density(t1, tp, lambda) * density(t2, tau(t1), lambda);
                assert!(drawn > 0.0 && drawn <= orders);
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "{checked}");
}

/// The first child's four-momentum in the lab, from its scale, its sibling's and its direction
/// `(θ, φ)` in the rest frame of a parent `p` (the generator's two-body decay and boost).
fn first_child(p: &FourVector, t1: f64, t2: f64, theta: f64, phi: f64) -> FourVector {
    let tp = mass2(p);
    let m = tp.sqrt();
    let e1 = m / 2.0 * (1.0 + t1 / tp - t2 / tp);
    let k = m / 2.0 * (1.0 - 2.0 * (t1 + t2) / tp + (t1 - t2).powi(2) / (tp * tp)).sqrt();
    let r = [
        theta.sin() * phi.cos(),
        theta.sin() * phi.sin(),
        theta.cos(),
    ];
    let beta = [p[1] / p[0], p[2] / p[0], p[3] / p[0]];
    let b2: f64 = beta.iter().map(|b| b * b).sum();
    let gamma = p[0] / m;
    let bq: f64 = (0..3).map(|i| beta[i] * k * r[i]).sum();
    let coef = (gamma - 1.0) * bq / b2 + gamma * e1;
    [
        gamma * (e1 + bq),
        k * r[0] + coef * beta[0],
        k * r[1] + coef * beta[1],
        k * r[2] + coef * beta[2],
    ]
}

fn det4(m: [[f64; 4]; 4]) -> f64 {
    let mut a = m;
    let mut det = 1.0;
    for c in 0..4 {
        let piv = (c..4)
            .max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))
            .unwrap();
        if piv != c {
            a.swap(piv, c);
            det = -det;
        }
        det *= a[c][c];
        for r in c + 1..4 {
            let (f, pivot_row) = (a[r][c] / a[c][c], a[c]);
            for (x, y) in a[r][c..].iter_mut().zip(&pivot_row[c..]) {
                *x -= f * y;
            }
        }
    }
    det
}

#[test]
fn the_jacobian_is_two_body_phase_space() {
    // d^4 p1 = |p*| / (4 sqrt tP) dt1 dt2 dΩ, dΩ = sin θ dθ dφ: finite differences of the
    // generator's kinematics against the factor the model divides by.
    let p = GinkgoParams::qcd().jet_four_vector();
    let tp = mass2(&p);
    for (t1, t2, theta, phi) in [
        (300.0, 100.0, 0.7, 1.1),
        (20.0, 3.0, 2.0, -2.5),
        (500.0, 10.0, 1.3, 0.2),
    ] {
        let x: [f64; 4] = [t1, t2, theta, phi];
        let f = |x: [f64; 4]| first_child(&p, x[0], x[1], x[2], x[3]);
        let mut jac = [[0.0; 4]; 4];
        for j in 0..4 {
            let h = 1e-5 * x[j].abs().max(1.0);
            let (mut a, mut b) = (x, x);
            a[j] += h;
            b[j] -= h;
            let (fa, fb) = (f(a), f(b));
            for i in 0..4 {
                jac[i][j] = (fa[i] - fb[i]) / (2.0 * h);
            }
        }
        let k = (tp - t1 - t2).powi(2) - 4.0 * t1 * t2;
        let pstar = k.sqrt() / (2.0 * tp.sqrt());
        let want = pstar / (4.0 * tp.sqrt()) * theta.sin();
        let got = det4(jac).abs();
        assert!((got / want - 1.0).abs() < 1e-5, "{got} vs {want}");
    }
}

#[test]
fn forbidden_splits_and_the_statistics_table() {
    // Leaves of squared mass 4, 4 and 1 (below the cut of 16).
    let leaf = |e: f64, pz: f64| [e, 0.0, 0.0, pz];
    let light = vec![
        leaf(20.0, (400.0f64 - 4.0).sqrt()),
        leaf(20.0, -(400.0f64 - 4.0).sqrt()),
        leaf(10.0, (100.0f64 - 1.0).sqrt()),
    ];
    let m = GinkgoGeneratorModel::new(light.clone(), 16.0, 1.5).unwrap();
    let (a, b, c) = (
        Subset::singleton(0),
        Subset::singleton(1),
        Subset::singleton(2),
    );
    assert!(m.log_psi(a, b).is_finite());
    // Two nearly collinear leaves: their pair is below the cut, a leaf the generator would not
    // have split.
    assert_eq!(m.log_psi(a, c), f64::NEG_INFINITY);
    // A leaf heavier than the cut: the generator would have split it.
    let mut heavy = light.clone();
    heavy[1] = leaf(20.0, (400.0f64 - 25.0).sqrt());
    let h = GinkgoGeneratorModel::new(heavy, 16.0, 1.5).unwrap();
    assert_eq!(h.log_psi(a, b), f64::NEG_INFINITY);
    assert_eq!(h.log_psi(b, c), f64::NEG_INFINITY);
    // The statistics table equals the direct sums bit for bit, a leaf's own mass included.
    let table = m.stat_table().unwrap();
    for s in 1..8u64 {
        let d = m.stat(Subset(s));
        assert_eq!(table[s as usize].t.to_bits(), d.t.to_bits());
        assert_eq!(table[s as usize].impossible_leaf, d.impossible_leaf);
    }
    assert!((table[1].t - 4.0).abs() < 1e-9, "a leaf keeps its mass");
    // The constructor refuses what the paper-era one refuses, with its message.
    let e = GinkgoGeneratorModel::new(light, 16.0, 0.0).unwrap_err();
    assert!(e.to_string().contains("lambda"), "{e}");
}
