//! BHC, BRT and the exact answers against brute force over all trees and all partitions.

use super::exact::{best_bhc_tree, compare, dpm_exact, tree_log_p};
use super::greedy::log_f_of_tree;
use super::tests_models::unif;
use super::*;
use crate::flat::enumerate::{for_each_partition, tree_cuts};
use crate::flat::TreeFlatTrellis;
use crate::model::log_add_exp;
use crate::numeric::log_sum_exp;
use crate::tree::{Node, Tree};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a == b) || (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

/// Binary data in two noisy groups.
fn binary(n: usize, d: usize, seed: u64) -> Vec<Vec<f64>> {
    (0..n)
        .map(|i| {
            (0..d)
                .map(|j| {
                    let p = if (i % 2 == 0) == (j < d / 2) {
                        0.8
                    } else {
                        0.2
                    };
                    (unif(seed, (i * d + j) as u64) < p) as u8 as f64
                })
                .collect()
        })
        .collect()
}

/// Real data in three groups.
fn real(n: usize, d: usize, seed: u64) -> Vec<Vec<f64>> {
    (0..n)
        .map(|i| {
            (0..d)
                .map(|j| (i % 3) as f64 * 1.5 + unif(seed, (i * d + j) as u64) - 0.5)
                .collect()
        })
        .collect()
}

/// Counts over 4 categories in two groups.
fn counts(n: usize, seed: u64) -> Vec<Vec<f64>> {
    (0..n)
        .map(|i| {
            (0..4)
                .map(|j| {
                    let hi = (i % 2 == 0) == (j < 2);
                    (unif(seed, (i * 4 + j) as u64) * if hi { 6.0 } else { 2.0 }).floor()
                })
                .collect()
        })
        .collect()
}

/// `log g(C)` of every subset, from the definition.
fn g_table<M: ConjugateModel>(m: &M, alpha: f64) -> Vec<f64> {
    let n = m.n_points();
    (0..1u64 << n)
        .map(|b| {
            if b == 0 {
                0.0
            } else {
                let pts: Vec<usize> = Subset(b).iter().collect();
                alpha.ln() + ln_gamma(pts.len() as f64) + m.log_marginal_of(&pts)
            }
        })
        .collect()
}

/// `log f(T)` of a tree from a `log g` table.
fn f_from_table(t: &Tree, table: &[f64]) -> f64 {
    let clusters = t.node_clusters();
    fn rec(t: &Tree, v: usize, c: &[Subset], table: &[f64]) -> f64 {
        let g = table[c[v].index()];
        match t.nodes()[v] {
            Node::Leaf(_) => g,
            Node::Internal(l, r) => log_add_exp(g, rec(t, l, c, table) + rec(t, r, c, table)),
        }
    }
    rec(t, t.root(), &clusters, table)
}

fn check_greedy_against_brute_force<M: ConjugateModel>(m: &M, alpha: f64) {
    let n = m.n_points();
    let run = bhc_greedy(m, alpha).unwrap();
    let energy = DpmEnergy::new(m, alpha).unwrap();
    let tree = run.tree().unwrap();
    // f(T) three ways: BHC's d·p(D|T), the tree-structured flat trellis, Σ over the cuts.
    let tt = TreeFlatTrellis::build(&energy, &tree).unwrap();
    assert!(
        close(run.log_f(), tt.log_partition(), 1e-12),
        "{} vs {}",
        run.log_f(),
        tt.log_partition()
    );
    let cuts: Vec<f64> = tree_cuts(&tree)
        .unwrap()
        .iter()
        .map(|p| crate::flat::clustering_log_energy(&energy, p))
        .collect();
    assert!(close(run.log_f(), log_sum_exp(&cuts), 1e-12));
    assert!(close(run.log_f(), log_f_of_tree(&energy, &tree), 1e-12));
    let (lp, lf) = tree_log_p(&energy, &tree);
    assert!(close(lp, run.log_p_tree(), 1e-12) && close(lf, run.log_f(), 1e-12));
    // Cluster marginals: the flat trellis's, and r_v ∏ (1 - r_u) over the ancestors.
    let marg = run.log_cluster_marginals();
    let clusters = tree.node_clusters();
    let mut parent = vec![None; run.nodes.len()];
    for (v, node) in run.nodes.iter().enumerate() {
        if let Some((l, r)) = node.children {
            parent[l] = Some(v);
            parent[r] = Some(v);
        }
    }
    for v in 0..run.nodes.len() {
        let p = tt.cluster_marginal(clusters[v]).unwrap();
        assert!((marg[v].exp() - p).abs() < 1e-12);
        let mut via_r = run.nodes[v].log_r;
        let mut u = parent[v];
        while let Some(w) = u {
            via_r += crate::model::log1mexp(-run.nodes[w].log_r);
            u = parent[w];
        }
        assert!((via_r.exp() - p).abs() < 1e-10, "{} vs {p}", via_r.exp());
    }
    // Co-clustering: Σ of the marginals of the nodes holding both, by brute force over cuts.
    let co = run.coclustering();
    for (i, row) in co.iter().enumerate() {
        for (j, &got) in row.iter().enumerate() {
            let want: f64 = (0..run.nodes.len())
                .filter(|&v| clusters[v].contains(i) && clusters[v].contains(j))
                .map(|v| marg[v].exp())
                .sum();
            assert!((got - if i == j { 1.0 } else { want }).abs() < 1e-12);
        }
    }
    // Each merge is the pair with the largest r among the clusters then present (naively).
    let mut live: Vec<usize> = (0..n).collect();
    for (k, &(a, b)) in run.merges().iter().enumerate() {
        let mut best = (f64::NEG_INFINITY, 0, 0);
        for (x, &i) in live.iter().enumerate() {
            for &j in &live[x + 1..] {
                let (i, j) = (i.min(j), i.max(j));
                let mut pts = run.leaves_below(i);
                pts.extend(run.leaves_below(j));
                let node = BhcNode::merge(
                    alpha.ln(),
                    (i, &run.nodes[i]),
                    (j, &run.nodes[j]),
                    m.log_marginal_of(&pts),
                );
                if node.log_r > best.0 {
                    best = (node.log_r, i, j);
                }
            }
        }
        assert!(close(run.nodes[n + k].log_r, best.0, 1e-12), "merge {k}");
        assert_eq!((a.min(b), a.max(b)), (best.1, best.2), "merge {k}");
        live.retain(|&v| v != a && v != b);
        live.push(n + k);
    }
    assert_eq!(run, bhc_greedy(m, alpha).unwrap(), "deterministic");
}

#[test]
fn greedy_bhc_is_its_recursion_on_every_model() {
    for seed in 0..3 {
        let x = binary(8, 6, seed);
        check_greedy_against_brute_force(&BetaBernoulli::from_data(&x, 2.0).unwrap(), 1.0);
        let x = real(7, 2, seed);
        let m = NormalInverseWishart::from_data(&x, 0.1, 0.25).unwrap();
        check_greedy_against_brute_force(&m, 0.5);
        let x = counts(8, seed);
        check_greedy_against_brute_force(&DirichletMultinomial::symmetric(&x, 1.0).unwrap(), 2.0);
    }
}

#[test]
fn tree_recursion_is_the_max_and_sum_over_all_trees() {
    for n in 1..=7 {
        for seed in 0..2 {
            let x = real(n, 2, seed + 10);
            let m = NormalInverseWishart::from_data(&x, 0.1, 0.25).unwrap();
            let table = g_table(&m, 1.3);
            let best = best_bhc_tree(&table, n).unwrap();
            let all = Tree::enumerate_all(Subset::full(n)).unwrap();
            let fs: Vec<f64> = all.iter().map(|t| f_from_table(t, &table)).collect();
            let max = fs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            assert!(close(best.log_f_max, max, 1e-12), "n = {n}");
            assert!(close(f_from_table(&best.tree, &table), max, 1e-12));
            assert!(close(best.log_f_sum, log_sum_exp(&fs), 1e-12), "n = {n}");
            let mean = log_sum_exp(&fs) - (fs.len() as f64).ln();
            assert!(close(best.log_f_mean, mean, 1e-12));
            assert!(best.log_f_mean <= best.log_f_max + 1e-12);
            assert!(best.log_f_max <= best.log_f_sum + 1e-12);
        }
    }
}

#[test]
fn tree_recursion_lets_minus_infinity_flow() {
    // Forbid every cluster of two or more points that holds point 0, and everything at 5 points.
    let n = 6;
    let mut table = g_table(
        &BetaBernoulli::from_data(&binary(n, 4, 3), 2.0).unwrap(),
        1.0,
    );
    for (b, v) in table.iter_mut().enumerate() {
        let s = Subset(b as u64);
        if (s.len() >= 2 && s.contains(0)) || s.len() == 5 {
            *v = f64::NEG_INFINITY;
        }
    }
    let best = best_bhc_tree(&table, n).unwrap();
    let all = Tree::enumerate_all(Subset::full(n)).unwrap();
    let fs: Vec<f64> = all.iter().map(|t| f_from_table(t, &table)).collect();
    let max = fs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    assert!(max.is_finite() && close(best.log_f_max, max, 1e-12));
    assert!(close(best.log_f_sum, log_sum_exp(&fs), 1e-12));
    // Everything forbidden: -inf, no NaN.
    let none = vec![f64::NEG_INFINITY; 1 << 4];
    let b = best_bhc_tree(&none, 4).unwrap();
    assert_eq!(b.log_f_max, f64::NEG_INFINITY);
    assert_eq!(b.log_f_sum, f64::NEG_INFINITY);
    assert_eq!(b.tree.n_leaves(), 4);
    assert!(best_bhc_tree(&none, 3).is_err());
}

#[test]
fn comparison_holds_the_bounds_against_brute_force() {
    for seed in 0..3 {
        let x = binary(7, 5, seed + 20);
        let m = BetaBernoulli::from_data(&x, 2.0).unwrap();
        let alpha = 1.0;
        let c = compare(&m, alpha).unwrap();
        // The evidence by brute force over all partitions.
        let e = DpmEnergy::new(&m, alpha).unwrap();
        let mut terms = Vec::new();
        let mut map = (f64::NEG_INFINITY, Vec::new());
        for_each_partition(Subset::full(7), |p| {
            let v = crate::flat::clustering_log_energy(&e, p);
            terms.push(v);
            if v > map.0 {
                map = (v, p.to_vec());
            }
        });
        let evidence = log_sum_exp(&terms) + e.log_prior_constant();
        assert!(close(c.dpm.log_evidence, evidence, 1e-12));
        assert_eq!(c.dpm.map_partition, map.1);
        // Properties: bound ≤ best bound ≤ evidence; the tree trellis equals BHC's f.
        assert!(close(c.tree_trellis_log_bound, c.greedy_log_bound, 1e-12));
        assert!(c.gap_best_greedy >= -1e-12 && c.gap_evidence_best >= -1e-12);
        assert!(c.gap_evidence_greedy >= c.gap_evidence_best - 1e-12);
        assert!(c.mean_log_bound <= c.best_log_bound + 1e-12);
        assert!((-1.0..=1.0).contains(&c.ari_cut_map));
        assert!(c.coclustering_max_abs_diff <= 1.0 && c.coclustering_mean_abs_diff >= 0.0);
        if c.greedy_is_best {
            assert!(c.gap_best_greedy.abs() < 1e-10);
        }
    }
}

#[test]
fn greedy_runs_past_sixty_four_points() {
    let x = real(150, 3, 5);
    let m = NormalInverseWishart::from_data(&x, 0.1, 0.25).unwrap();
    let run = bhc_greedy(&m, 1.0).unwrap();
    assert_eq!(run.nodes.len(), 299);
    assert!(run.tree().is_none());
    let h = run.hierarchy();
    assert_eq!(h.n_leaves(), 150);
    assert!(run.log_p_tree().is_finite() && run.log_f().is_finite());
    let labels = run.cut_labels(0.5);
    assert_eq!(labels.len(), 150);
    assert!(labels.iter().all(|&l| l < 150));
    let co = run.coclustering();
    assert!(co
        .iter()
        .flatten()
        .all(|&p| (0.0..=1.0 + 1e-12).contains(&p)));
    assert!(bhc_greedy(&m, -1.0).is_err());
}

#[test]
fn dpm_exact_marginals_sum_like_probabilities() {
    let x = counts(9, 4);
    let m = DirichletMultinomial::symmetric(&x, 0.5).unwrap();
    let d = dpm_exact(&m, 1.0).unwrap();
    assert!(d.map_log_posterior <= 0.0);
    assert!(d
        .pairwise
        .iter()
        .flatten()
        .all(|&p| (0.0..=1.0 + 1e-12).contains(&p)));
}

/// Every rose tree over `s`, as (children lists) nested in a small arena, scored by BRT.
fn all_rose_log_p<M: ConjugateModel>(m: &M, gamma: f64, s: Subset) -> Vec<f64> {
    let pts: Vec<usize> = s.iter().collect();
    let h1 = m.log_marginal_of(&pts);
    if s.is_singleton() {
        return vec![h1];
    }
    let ln_1mg = (1.0 - gamma).ln();
    let mut out = Vec::new();
    for_each_partition(s, |blocks| {
        if blocks.len() < 2 {
            return;
        }
        // The product over children ranges over every combination of subtrees.
        let mut combos = vec![0.0];
        for &b in blocks {
            let sub = all_rose_log_p(m, gamma, b);
            combos = combos
                .iter()
                .flat_map(|c| sub.iter().map(move |x| c + x))
                .collect();
        }
        let k = blocks.len();
        let ln_not_pi = (k - 1) as f64 * ln_1mg;
        let ln_pi = crate::model::log1mexp(-ln_not_pi);
        out.extend(
            combos
                .iter()
                .map(|&c| log_add_exp(ln_pi + h1, ln_not_pi + c)),
        );
    });
    out
}

#[test]
fn greedy_brt_scores_its_tree_and_is_below_the_best_rose_tree() {
    for seed in 0..3 {
        let x = binary(6, 6, seed + 30);
        let m = BetaBernoulli::from_data(&x, 2.0).unwrap();
        for &gamma in &[0.2, 0.5, 0.9] {
            let run = brt_greedy(&m, gamma).unwrap();
            let h = run.hierarchy();
            assert_eq!(h.n_leaves(), 6);
            assert!(close(
                brt::brt_log_p(&m, gamma, &h),
                run.log_p_tree(),
                1e-12
            ));
            let all = all_rose_log_p(&m, gamma, Subset::full(6));
            let best = all.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            assert!(run.log_p_tree() <= best + 1e-12);
            let exact = rose::best_rose_tree(&m, gamma).unwrap();
            assert!(close(exact.log_p, best, 1e-12), "{} vs {best}", exact.log_p);
            assert!(close(
                brt::brt_log_p(&m, gamma, &exact.hierarchy),
                best,
                1e-12
            ));
            assert_eq!(run, brt_greedy(&m, gamma).unwrap(), "deterministic");
        }
    }
    assert!(brt_greedy(
        &BetaBernoulli::from_data(&binary(3, 2, 0), 2.0).unwrap(),
        0.0
    )
    .is_err());
}

#[test]
fn the_blocked_energy_table_is_every_subset_energy_and_stops_when_cancelled() {
    // 15 points: two blocks of the table.
    let x = real(15, 2, 4);
    let m = NormalInverseWishart::from_data(&x, 0.1, 0.25).unwrap();
    let e = DpmEnergy::new(&m, 1.3).unwrap();
    let table = e.log_energy_table().unwrap();
    assert_eq!(table, g_table(&m, 1.3));
    let handle = crate::cancel::CancelHandle::new();
    handle.cancel();
    let token = handle.token();
    crate::cancel::scope(&token, || {
        assert_eq!(e.log_energy_table(), Err(crate::flat::FlatError::Cancelled));
        assert!(matches!(
            best_bhc_tree(&table, 15),
            Err(BhcError::Cancelled)
        ));
        assert!(matches!(
            super::exact::exact_answers(&m, 1.3),
            Err(BhcError::Cancelled)
        ));
    });
}

#[test]
fn a_comparison_of_an_earlier_run_is_the_comparison() {
    let x = binary(9, 5, 2);
    let m = BetaBernoulli::from_data(&x, 2.0).unwrap();
    let a = compare(&m, 0.7).unwrap();
    let b = super::exact::compare_run(&m, bhc_greedy(&m, 0.7).unwrap()).unwrap();
    assert_eq!(a.gap_evidence_greedy, b.gap_evidence_greedy);
    assert_eq!(a.best_log_bound, b.best_log_bound);
    assert_eq!(a.dpm.pairwise, b.dpm.pairwise);
    // A run on other points is refused.
    let other = BetaBernoulli::from_data(&binary(8, 5, 2), 2.0).unwrap();
    let run = bhc_greedy(&other, 0.7).unwrap();
    assert!(super::exact::compare_run(&m, run).is_err());
}
