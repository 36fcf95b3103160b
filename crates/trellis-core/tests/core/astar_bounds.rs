//! The A* heuristics of `exact::bounds` against the full trellis: admissibility on every
//! cluster, consistency on every split, `quick >= bound`, and (Ginkgo) `-inf` exactly where no
//! finite tree exists. A port of the authors' Ginkgo heuristic is kept as a negative control.

use trellis_core::data::ginkgo::GinkgoParams;
use trellis_core::data::graphs::{planted_partition, signed_uniform_weights, weights_from};
use trellis_core::exact::{DasguptaBound, FullTrellis, GinkgoBound, SubtreeBound};
use trellis_core::model::{log1mexp, DasguptaModel, GinkgoModel, SplitModel};
use trellis_core::subset::Subset;

fn reference(file: &str) -> Vec<GinkgoModel> {
    crate::common::reference_jets(file)
}

fn generated(
    params: &GinkgoParams,
    n_jets: usize,
    min: usize,
    max: usize,
    seed: u64,
) -> Vec<GinkgoModel> {
    crate::common::generated_jets(params, n_jets, (min, max), seed, 100_000)
}

/// What a bound check found.
#[derive(Default, Debug)]
struct Tally {
    clusters: usize,
    splits: usize,
    neg_inf: usize,
}

/// Checks the bound's contract on every cluster and consistency on every split of `model`.
/// `exact_neg_inf`: also `V = -inf ⇒ h = -inf`.
fn check<M: SplitModel, B: SubtreeBound<M>>(
    model: &M,
    b: &B,
    exact_neg_inf: bool,
    tally: &mut Tally,
    what: &str,
) {
    let n = model.n_leaves();
    let t = FullTrellis::build(model).unwrap();
    let stats = model.stat_table().unwrap();
    let size = 1usize << n;
    let mut h = vec![0.0; size];
    for s in 1..size {
        let c = Subset(s as u64);
        let v = t.map_log_likelihood_of(c).unwrap();
        let hb = b.bound(c, &stats[s]);
        let hq = b.quick(c, &stats[s]);
        assert!(hq >= hb, "{what} {c}: quick {hq} < bound {hb}");
        assert!(hb >= v, "{what} {c}: bound {hb} < V {v} (inadmissible)");
        if c.is_singleton() {
            assert_eq!(hb, 0.0, "{what} {c}: a leaf's bound is 0");
        }
        if hb == f64::NEG_INFINITY {
            assert_eq!(v, f64::NEG_INFINITY, "{what} {c}");
            tally.neg_inf += 1;
        }
        if exact_neg_inf && v == f64::NEG_INFINITY {
            assert_eq!(hb, f64::NEG_INFINITY, "{what} {c}: V = -inf but bound {hb}");
        }
        h[s] = hb;
        tally.clusters += 1;
    }
    for s in 1..size {
        let c = Subset(s as u64);
        for (a, bb) in c.splits() {
            let lp = model.log_psi_with(a, &stats[a.index()], bb, &stats[bb.index()], &stats[s]);
            let rhs = lp + h[a.index()] + h[bb.index()];
            assert!(
                h[s] >= rhs || rhs.is_nan(),
                "{what} {c} = {a} + {bb}: h {} < log psi + h + h = {rhs} (inconsistent)",
                h[s]
            );
            tally.splits += 1;
        }
    }
}

#[test]
fn ginkgo_bound_is_admissible_and_consistent_on_reference_jets() {
    let mut tally = Tally::default();
    for (k, m) in reference("truth_9.json").iter().enumerate() {
        let b = GinkgoBound::new(m);
        assert!(b.is_physical(), "truth_9[{k}] leaves are physical");
        check(m, &b, true, &mut tally, &format!("truth_9[{k}]"));
        // Not vacuous: the note measured root gaps of 8.8-11.2 nats on these jets.
        let root = Subset::full(m.n_leaves());
        let gap =
            b.bound(root, &m.stat(root)) - FullTrellis::build(m).unwrap().map_log_likelihood();
        eprintln!("truth_9[{k}] root gap {gap:.3}");
        assert!((8.0..12.0).contains(&gap), "truth_9[{k}]: root gap {gap}");
    }
    // tree_100_n9: every fourth jet keeps the test fast; all 100 pass too.
    for (k, m) in reference("tree_100_n9.json").iter().enumerate().step_by(4) {
        let b = GinkgoBound::new(m);
        check(
            m,
            &b,
            b.is_physical(),
            &mut tally,
            &format!("tree_100_n9[{k}]"),
        );
    }
    assert!(tally.neg_inf > 0, "some clusters are infeasible: {tally:?}");
    assert!(tally.splits > 100_000, "{tally:?}");
}

#[test]
fn ginkgo_bound_is_admissible_and_consistent_on_generated_jets() {
    let mut tally = Tally::default();
    let qcd = GinkgoParams::qcd();
    let w = GinkgoParams::w_jet();
    let big_root = GinkgoParams {
        root_scale: 3600.0,
        lambda_root: 2.0,
        ..GinkgoParams::qcd()
    };
    for (name, p, seed) in [
        ("qcd", &qcd, 11),
        ("w", &w, 12),
        ("root3600", &big_root, 13),
    ] {
        for (k, m) in generated(p, 6, 5, 10, seed).iter().enumerate() {
            let b = GinkgoBound::new(m);
            assert!(b.is_physical());
            check(m, &b, true, &mut tally, &format!("{name}[{k}]"));
        }
    }
    assert!(tally.clusters > 2000, "{tally:?}");
}

/// Random four-vectors, some spacelike or with negative energy: the physics check fails, the
/// bound falls back to `L_s = t_cut` and stays admissible and consistent.
#[test]
fn ginkgo_bound_falls_back_on_unphysical_leaves() {
    let mut tally = Tally::default();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    for k in 0..12 {
        let n = 5 + k % 4;
        let leaves: Vec<[f64; 4]> = (0..n)
            .map(|_| {
                let e = 5.0 + 60.0 * uniform();
                let p = [
                    e * (2.0 * uniform() - 1.0),
                    e * (2.0 * uniform() - 1.0),
                    e * (2.0 * uniform() - 1.0),
                ];
                [e * if k % 3 == 0 { -0.2 } else { 1.0 }, p[0], p[1], p[2]]
            })
            .collect();
        let m = GinkgoModel::new(leaves, 16.0, 1.5).unwrap();
        let b = GinkgoBound::new(&m);
        assert!(
            !b.is_physical(),
            "random vectors with |p| up to sqrt(3) E are spacelike"
        );
        check(&m, &b, false, &mut tally, &format!("unphysical[{k}]"));
    }
    assert!(tally.clusters > 500);
}

#[test]
fn ginkgo_bound_prunes_a_dead_pair_and_a_jet_without_finite_trees() {
    // Two collinear light leaves (mass below the cut) and a hard third one.
    let leaves = vec![
        [10.0, 0.0, 0.0, 9.9],
        [10.0, 0.0, 0.0, 9.9],
        [40.0, 30.0, 0.0, 0.0],
    ];
    let m = GinkgoModel::new(leaves, 16.0, 1.5).unwrap();
    let b = GinkgoBound::new(&m);
    let pair = Subset::from_indices([0, 1]);
    assert_eq!(b.bound(pair, &m.stat(pair)), f64::NEG_INFINITY);
    let mut tally = Tally::default();
    check(&m, &b, true, &mut tally, "dead pair");
    // Every pair below the cut: no finite tree, and the root's bound says so.
    let m = GinkgoModel::new(vec![[10.0, 0.0, 0.0, 9.9]; 4], 16.0, 1.5).unwrap();
    let b = GinkgoBound::new(&m);
    let root = Subset::full(4);
    assert_eq!(b.bound(root, &m.stat(root)), f64::NEG_INFINITY);
}

/// The authors' default Ginkgo heuristic (`IterJetTrellis.h_fun`, `proof=False`, design note
/// §2) as we read it: not admissible. The test must find a cluster where it is below `V`.
#[test]
fn authors_ginkgo_heuristic_is_not_admissible() {
    let mut violations = 0;
    for m in reference("truth_9.json") {
        let n = m.n_leaves();
        let t = FullTrellis::build(&m).unwrap();
        let (lam, t_cut) = (m.lambda(), m.t_cut());
        let leaf_mass: Vec<f64> = m
            .leaves()
            .iter()
            .map(|p| {
                (p[0] * p[0] - p[1] * p[1] - p[2] * p[2] - p[3] * p[3])
                    .max(0.0)
                    .sqrt()
            })
            .collect();
        let pair = |i: usize, j: usize| m.stat(Subset::from_indices([i, j])).t;
        for s in 1u64..(1 << n) {
            let c = Subset(s);
            let k = c.len();
            if k < 3 {
                continue;
            }
            let v = t.map_log_likelihood_of(c).unwrap();
            if v == f64::NEG_INFINITY {
                continue;
            }
            let idx: Vec<usize> = c.iter().collect();
            // Per-leaf minimum pair mass above the cut.
            let mins: Vec<f64> = idx
                .iter()
                .map(|&i| {
                    idx.iter()
                        .filter(|&&j| j != i)
                        .map(|&j| pair(i, j))
                        .filter(|&x| x > t_cut)
                        .fold(f64::INFINITY, f64::min)
                })
                .collect();
            let t_min = mins.iter().copied().fold(f64::INFINITY, f64::min);
            if !t_min.is_finite() {
                continue;
            }
            let c_lam = -log1mexp(lam);
            let outers: f64 = idx
                .iter()
                .map(|&i| {
                    let tp2 = (t_min.sqrt() - leaf_mass[i]).powi(2);
                    c_lam + log1mexp(lam * t_cut / tp2)
                })
                .sum();
            let mut values: Vec<f64> = mins.iter().copied().filter(|x| x.is_finite()).collect();
            values.sort_by(f64::total_cmp);
            let t_c = m.stat(c).t;
            let inners: f64 = values
                .iter()
                .take(k - 2)
                .map(|&x| c_lam + lam.ln() - (x + 2.0 * t_min).ln() - lam * x / t_c)
                .sum();
            let h = outers + inners + (k - 1) as f64 * (1.0 / (4.0 * std::f64::consts::PI)).ln();
            if h < v - 1e-9 {
                violations += 1;
            }
        }
    }
    assert!(violations > 0, "the port finds clusters where h < V");
}

fn dasgupta_instances() -> Vec<(String, DasguptaModel)> {
    let mut out = Vec::new();
    for seed in 0..6u64 {
        let n = 5 + seed as usize % 5;
        let sizes = [n / 3, n / 3, n - 2 * (n / 3)];
        let g = planted_partition(&sizes, 0.8, 0.1, seed).unwrap();
        out.push((
            format!("planted[{seed}]"),
            DasguptaModel::new(g.weights, 1.0).unwrap(),
        ));
        let w = signed_uniform_weights(n, 1.0, 100 + seed).unwrap();
        out.push((
            format!("signed[{seed}]"),
            DasguptaModel::new(w, 0.7).unwrap(),
        ));
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let w = weights_from(n, |_, _| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 3.0
        })
        .unwrap();
        out.push((
            format!("dense[{seed}]"),
            DasguptaModel::new(w, 2.0).unwrap(),
        ));
    }
    // N = 10 for the larger clusters.
    let w = signed_uniform_weights(10, 2.0, 77).unwrap();
    out.push(("signed10".into(), DasguptaModel::new(w, 1.0).unwrap()));
    out
}

#[test]
fn dasgupta_bound_is_admissible_consistent_and_exact_up_to_three_leaves() {
    let mut tally = Tally::default();
    for (name, m) in dasgupta_instances() {
        let b = DasguptaBound::new(&m);
        check(&m, &b, true, &mut tally, &name);
        let t = FullTrellis::build(&m).unwrap();
        for s in 1u64..(1 << m.n_leaves()) {
            let c = Subset(s);
            if c.len() <= 3 {
                let v = t.map_log_likelihood_of(c).unwrap();
                let h = b.bound(c, &m.stat(c));
                assert!(
                    (h - v).abs() <= 1e-9 * v.abs().max(1.0),
                    "{name} {c}: {h} vs {v}"
                );
            }
        }
    }
    assert!(tally.splits > 10_000, "{tally:?}");
}
