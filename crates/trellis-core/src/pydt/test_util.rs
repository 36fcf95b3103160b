//! Test helpers: every tree over a few leaves, goodness-of-fit p-values.

use super::generate::sample_tree;
use super::params::Params;
use super::tree::PydtTree;
use rand::rngs::StdRng;
use rand::RngExt;

/// A tree shape: a leaf or an internal node with ≥ 2 children.
#[derive(Clone, Debug)]
pub(super) enum Shape {
    Leaf(usize),
    Node(Vec<Shape>),
}

/// Every partition of `items` into blocks.
pub(super) fn set_partitions(items: &[usize]) -> Vec<Vec<Vec<usize>>> {
    let Some((&first, rest)) = items.split_first() else {
        return vec![vec![]];
    };
    let mut out = Vec::new();
    for p in set_partitions(rest) {
        for i in 0..p.len() {
            let mut q = p.clone();
            q[i].insert(0, first);
            out.push(q);
        }
        let mut q = p;
        q.insert(0, vec![first]);
        out.push(q);
    }
    out
}

/// Every leaf-labelled rooted tree over `items` whose internal nodes have ≥ 2 children.
pub(super) fn all_shapes(items: &[usize]) -> Vec<Shape> {
    if items.len() == 1 {
        return vec![Shape::Leaf(items[0])];
    }
    let mut out = Vec::new();
    for blocks in set_partitions(items).into_iter().filter(|b| b.len() >= 2) {
        let mut acc: Vec<Vec<Shape>> = vec![vec![]];
        for b in &blocks {
            let subs = all_shapes(b);
            acc = acc
                .into_iter()
                .flat_map(|prefix| {
                    subs.iter().map(move |s| {
                        let mut p = prefix.clone();
                        p.push(s.clone());
                        p
                    })
                })
                .collect();
        }
        out.extend(acc.into_iter().map(Shape::Node));
    }
    out
}

/// A `PydtTree` of a shape, internal times by depth (the structure probability ignores them).
pub(super) fn shape_tree(n: usize, shape: &Shape) -> PydtTree {
    let mut parents = vec![None; n];
    let mut times = vec![0.0; n];
    fn go(
        s: &Shape,
        parent: Option<usize>,
        depth: usize,
        n: usize,
        parents: &mut Vec<Option<usize>>,
        times: &mut Vec<f64>,
    ) {
        match s {
            Shape::Leaf(i) => parents[*i] = parent,
            Shape::Node(kids) => {
                let id = parents.len();
                parents.push(parent);
                times.push(depth as f64 / (n + 1) as f64);
                for k in kids {
                    go(k, Some(id), depth + 1, n, parents, times);
                }
            }
        }
    }
    go(shape, None, 1, n, &mut parents, &mut times);
    PydtTree::from_parents(n, &parents, &times).unwrap()
}

/// Pearson χ² p-value of observed counts against probabilities.
pub(super) fn chi_square_p(observed: &[f64], probs: &[f64]) -> f64 {
    use statrs::distribution::{ChiSquared, ContinuousCDF};
    let total: f64 = observed.iter().sum();
    let stat: f64 = observed
        .iter()
        .zip(probs)
        .map(|(o, p)| (o - total * p).powi(2) / (total * p))
        .sum();
    let dof = (observed.len() - 1) as f64;
    1.0 - ChiSquared::new(dof).unwrap().cdf(stat)
}

/// A prior tree with its internal times redrawn away from 1 (t_v = t_pa + (1 − t_pa)·U(0.1, 0.5)):
/// small c·rate puts divergences within 1e-16 of t = 1, where no dense algebra is accurate.
pub(super) fn tame_tree(n: usize, p: &Params, rng: &mut StdRng) -> PydtTree {
    let mut tree = sample_tree(n, p, rng);
    let mut order = Vec::new();
    tree.postorder(&mut order);
    for &v in order.iter().rev() {
        if !tree.is_leaf(v) {
            let tp = tree.parent_time(v);
            tree.set_time(v, tp + (1.0 - tp) * (0.1 + 0.4 * rng.random::<f64>()));
        }
    }
    tree.validate().unwrap();
    tree
}

/// Kolmogorov's asymptotic p-value of a KS statistic `d` with effective size `ne` (Numerical
/// Recipes' small-sample correction).
pub(super) fn ks_p(d: f64, ne: f64) -> f64 {
    let lambda = (ne.sqrt() + 0.12 + 0.11 / ne.sqrt()) * d;
    let mut sum = 0.0;
    for k in 1..=100 {
        let kf = k as f64;
        let term = 2.0 * (-1f64).powi(k - 1) * (-2.0 * kf * kf * lambda * lambda).exp();
        sum += term;
        if term.abs() < 1e-12 {
            break;
        }
    }
    sum.clamp(0.0, 1.0)
}

/// Two-sample Kolmogorov–Smirnov p-value.
pub(super) fn ks_two_sample(a: &[f64], b: &[f64]) -> f64 {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0, 0, 0.0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    let (n, m) = (a.len() as f64, b.len() as f64);
    ks_p(d, n * m / (n + m))
}

/// One-sample Kolmogorov–Smirnov p-value against a continuous CDF.
pub(super) fn ks_one_sample(a: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let mut a = a.to_vec();
    a.sort_by(f64::total_cmp);
    let n = a.len() as f64;
    let d = a
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max);
    ks_p(d, n)
}

/// Two-sample χ² test of homogeneity over categories (categories with no count in either
/// sample are dropped).
pub(super) fn chi_square_two_sample<K: std::hash::Hash + Eq + Clone>(a: &[K], b: &[K]) -> f64 {
    use statrs::distribution::{ChiSquared, ContinuousCDF};
    use std::collections::HashMap;
    let mut counts: HashMap<K, (f64, f64)> = HashMap::new();
    for k in a {
        counts.entry(k.clone()).or_default().0 += 1.0;
    }
    for k in b {
        counts.entry(k.clone()).or_default().1 += 1.0;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let mut stat = 0.0;
    for (ca, cb) in counts.values() {
        let tot = ca + cb;
        let (ea, eb) = (tot * na / (na + nb), tot * nb / (na + nb));
        stat += (ca - ea).powi(2) / ea + (cb - eb).powi(2) / eb;
    }
    let dof = (counts.len().max(2) - 1) as f64;
    1.0 - ChiSquared::new(dof).unwrap().cdf(stat)
}
