//! Similarity graphs for Dasgupta's cost and hierarchical correlation clustering: random
//! planted-partition graphs, the weight schemes of the paper's Section 4.4, and the adversarial
//! family for average linkage (see [`AdversarialParams`]).
//!
//! Every generator is deterministic given its seed and returns a validated [`WeightMatrix`].

use crate::model::weights::WeightMatrix;
use crate::model::ModelError;
use crate::subset::Subset;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

/// A graph with a planted flat clustering: `labels[i]` is point `i`'s cluster.
#[derive(Clone, Debug)]
pub struct LabelledGraph {
    /// Symmetric similarity weights, zero diagonal.
    pub weights: WeightMatrix,
    /// Planted cluster of each point.
    pub labels: Vec<usize>,
}

/// Cluster labels `0,0,..,1,1,..` for clusters of the given sizes, in order; errors when the
/// sizes add up to more than 64 points.
pub fn planted_labels(cluster_sizes: &[usize]) -> Result<Vec<usize>, ModelError> {
    let n = cluster_sizes
        .iter()
        .try_fold(0usize, |acc, &k| acc.checked_add(k))
        .unwrap_or(usize::MAX);
    check_points(n)?;
    Ok(cluster_sizes
        .iter()
        .enumerate()
        .flat_map(|(c, &k)| std::iter::repeat_n(c, k))
        .collect())
}

/// `Ok` for at most 64 points.
fn check_points(n: usize) -> Result<(), ModelError> {
    if n > Subset::MAX_LEAVES {
        return Err(ModelError::TooLarge { n });
    }
    Ok(())
}

/// A weight matrix with `w(i, j) = f(i, j)` for `i < j`, mirrored, zero diagonal. Errors for
/// more than 64 points and for a weight that is not finite.
#[allow(clippy::needless_range_loop)] // both indices address the matrix (mirrored writes)
pub fn weights_from(
    n: usize,
    mut f: impl FnMut(usize, usize) -> f64,
) -> Result<WeightMatrix, ModelError> {
    check_points(n)?;
    let mut w = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let v = f(i, j);
            w[i][j] = v;
            w[j][i] = v;
        }
    }
    WeightMatrix::new(w)
}

/// Independent weights `scale * (2u - 1)`, `u` uniform in `[0, 1)`, so uniform in
/// `[-scale, scale)`: both signs, drawn row by row over the upper triangle with `seed`.
/// Errors for more than 64 points and a `scale` that is not finite.
pub fn signed_uniform_weights(n: usize, scale: f64, seed: u64) -> Result<WeightMatrix, ModelError> {
    let mut rng = StdRng::seed_from_u64(seed);
    weights_from(n, |_, _| {
        let u: f64 = rng.random();
        scale * (2.0 * u - 1.0)
    })
}

/// Gaussian similarities `exp(-d^2 / 0.1)` of `n` points drawn uniformly in the unit square
/// with `seed`: a dense similarity matrix of the kind a user brings (the speed example and
/// benches time the graph energies on it). Errors for more than 64 points.
pub fn gaussian_similarities(n: usize, seed: u64) -> Result<WeightMatrix, ModelError> {
    check_points(n)?;
    let mut rng = StdRng::seed_from_u64(seed);
    let pts: Vec<(f64, f64)> = (0..n).map(|_| (rng.random(), rng.random())).collect();
    weights_from(n, |i, j| {
        let (dx, dy) = (pts[i].0 - pts[j].0, pts[i].1 - pts[j].1);
        (-(dx * dx + dy * dy) / 0.1).exp()
    })
}

/// A random planted-partition graph: each pair inside a cluster is joined (weight 1) with
/// probability `p_in`, each pair across clusters with probability `p_out`. Errors when the
/// sizes add up to more than 64 points.
pub fn planted_partition(
    cluster_sizes: &[usize],
    p_in: f64,
    p_out: f64,
    seed: u64,
) -> Result<LabelledGraph, ModelError> {
    let labels = planted_labels(cluster_sizes)?;
    let mut rng = StdRng::seed_from_u64(seed);
    let weights = weights_from(labels.len(), |i, j| {
        let p = if labels[i] == labels[j] { p_in } else { p_out };
        let u: f64 = rng.random();
        if u < p {
            1.0
        } else {
            0.0
        }
    })?;
    Ok(LabelledGraph { weights, labels })
}

/// The edge-weight schemes of the paper's Section 4.4 for a planted flat clustering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightScheme {
    /// 1 within a cluster, 0 across (claim 2, for Dasgupta's cost).
    WithinOne,
    /// +1 within, -1 across (claim 3, for HCC).
    PlusMinusOne,
    /// Independent uniform weights in `[-1, 1]` (claim 4), drawn with the given seed.
    Random(u64),
    /// -1 within, 0 across: the negation of `WithinOne` (claim 5).
    NegatedWithinOne,
    /// -1 within, +1 across: the negation of `PlusMinusOne` (claim 5).
    NegatedPlusMinusOne,
}

impl WeightScheme {
    /// A short name for tables and charts.
    pub fn name(&self) -> &'static str {
        match self {
            WeightScheme::WithinOne => "1/0",
            WeightScheme::PlusMinusOne => "+1/-1",
            WeightScheme::Random(_) => "random",
            WeightScheme::NegatedWithinOne => "-(1/0)",
            WeightScheme::NegatedPlusMinusOne => "-(+1/-1)",
        }
    }

    /// The weights of this scheme for points with planted `labels`; errors for more than 64.
    pub fn weights(&self, labels: &[usize]) -> Result<WeightMatrix, ModelError> {
        let same = |i: usize, j: usize| labels[i] == labels[j];
        match *self {
            WeightScheme::WithinOne => {
                weights_from(labels.len(), |i, j| if same(i, j) { 1.0 } else { 0.0 })
            }
            WeightScheme::PlusMinusOne => {
                weights_from(labels.len(), |i, j| if same(i, j) { 1.0 } else { -1.0 })
            }
            WeightScheme::NegatedWithinOne => {
                weights_from(labels.len(), |i, j| if same(i, j) { -1.0 } else { 0.0 })
            }
            WeightScheme::NegatedPlusMinusOne => {
                weights_from(labels.len(), |i, j| if same(i, j) { -1.0 } else { 1.0 })
            }
            WeightScheme::Random(seed) => signed_uniform_weights(labels.len(), 1.0, seed),
        }
    }
}

/// An instance of the adversarial family for average linkage under Dasgupta's cost: a ladder,
/// that is, a path of `n_pairs` tightly bound pairs.
///
/// Points `2p` and `2p+1` form pair `p` (a rung), joined by an edge of weight `1 + eps`. Pairs
/// that are neighbours on the path are joined by a perfect matching of unit edges (the rails:
/// even point to even point, odd to odd). The path visits the pairs in the order
/// `.., 4, 2, 0, 1, 3, 5, ..`, so pairs 0 and 1 sit in its middle.
///
/// The slightly heavier rungs make average linkage merge every pair first. It then sees the
/// path of pairs at equal average similarity 1/2, an exact tie. Breaking the tie at the middle
/// of the path makes it grow a caterpillar outwards from the middle, while the optimal tree
/// cuts the path in the middle. Our `average_linkage` takes the first tied pair in index order,
/// which is the middle here; `middle_bonus > 0` forces that choice under any rule.
///
/// With 4 pairs and `eps = 0.01` the costs are 44.08 (average linkage) and 40.08 (optimum):
/// the numbers of the Cluster Trellis paper's Figure 4. The paper cites Charikar,
/// Chatziafratis and Niazadeh (SODA 2019) for its graph but does not publish it. Their
/// constructions were not available to us, so this is the smallest family we found that gives
/// the paper's numbers (`experiments/dasgupta/README.md` says how it was found, and what else
/// matches).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AdversarialParams {
    /// Number of pairs on the path (`2 * n_pairs` points).
    pub n_pairs: usize,
    /// Extra weight of the edge inside each pair (small and positive).
    pub eps: f64,
    /// Extra weight on the two unit edges between the middle pairs 0 and 1 (default 0: ties
    /// are left to the tie-breaking rule).
    #[serde(default)]
    pub middle_bonus: f64,
}

impl AdversarialParams {
    /// A one-line description for tables and chart titles.
    pub fn describe(&self) -> String {
        let mut d = format!("ladder of {} rungs, ε = {}", self.n_pairs, self.eps);
        if self.middle_bonus != 0.0 {
            d.push_str(&format!(", middle bonus {}", self.middle_bonus));
        }
        d
    }

    /// Checks the parameters, with `limit` the largest N the exact trellis may take.
    pub fn check(&self, limit: usize) -> Result<(), String> {
        if self.n_pairs < 2 {
            return Err(format!(
                "dasgupta.adversarial: n_pairs = {} needs at least 2 pairs",
                self.n_pairs
            ));
        }
        if 2 * self.n_pairs > limit {
            return Err(format!(
                "dasgupta.adversarial: n_pairs = {} gives {} points, above methods.max_exact_leaves = {limit}; lower n_pairs or raise methods.max_exact_leaves",
                self.n_pairs,
                2 * self.n_pairs
            ));
        }
        if !(self.eps.is_finite() && self.eps > 0.0 && self.eps < 1.0) {
            return Err(format!(
                "dasgupta.adversarial: eps = {} must lie in (0, 1)",
                self.eps
            ));
        }
        if !(self.middle_bonus.is_finite()
            && self.middle_bonus >= 0.0
            && self.middle_bonus < self.eps)
        {
            return Err(format!(
                "dasgupta.adversarial: middle_bonus = {} must lie in [0, eps) so that pairs still merge first",
                self.middle_bonus
            ));
        }
        Ok(())
    }

    /// The pairs in path order: `.., 4, 2, 0, 1, 3, 5, ..`.
    pub fn path_order(&self) -> Vec<usize> {
        let k = self.n_pairs;
        let mut left: Vec<usize> = (0..k).filter(|p| p % 2 == 0).collect();
        left.reverse();
        left.extend((0..k).filter(|p| p % 2 == 1));
        left
    }
}

/// An adversarial instance, with its points grouped into the pairs of the construction.
#[derive(Clone, Debug)]
pub struct AdversarialGraph {
    /// The weights.
    pub weights: WeightMatrix,
    /// Pair of each point.
    pub groups: Vec<usize>,
    /// A name per pair.
    pub group_names: Vec<String>,
}

/// The instance of [`AdversarialParams`]; errors for more than 32 pairs (64 points) and for
/// an `eps` or `middle_bonus` that is not finite.
pub fn adversarial(p: &AdversarialParams) -> Result<AdversarialGraph, ModelError> {
    check_points(p.n_pairs.saturating_mul(2))?;
    let n = 2 * p.n_pairs;
    let order = p.path_order();
    let position: Vec<usize> = {
        let mut pos = vec![0; p.n_pairs];
        for (k, &pair) in order.iter().enumerate() {
            pos[pair] = k;
        }
        pos
    };
    let weights = weights_from(n, |i, j| {
        let (pi, pj) = (i / 2, j / 2);
        if pi == pj {
            1.0 + p.eps
        } else if position[pi].abs_diff(position[pj]) == 1 && i % 2 == j % 2 {
            if pi.min(pj) == 0 && pi.max(pj) == 1 {
                1.0 + p.middle_bonus
            } else {
                1.0
            }
        } else {
            0.0
        }
    })?;
    Ok(AdversarialGraph {
        weights,
        groups: (0..n).map(|i| i / 2).collect(),
        group_names: (0..p.n_pairs).map(|k| format!("pair {}", k + 1)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planted_graph_respects_probabilities_and_seed() {
        let g = planted_partition(&[3, 4], 1.0, 0.0, 7).unwrap();
        assert_eq!(g.labels, vec![0, 0, 0, 1, 1, 1, 1]);
        for i in 0..7 {
            for j in 0..7 {
                let want = if i != j && g.labels[i] == g.labels[j] {
                    1.0
                } else {
                    0.0
                };
                assert_eq!(g.weights.get(i, j).unwrap(), want);
            }
        }
        let a = planted_partition(&[5, 5], 0.5, 0.2, 3).unwrap();
        let b = planted_partition(&[5, 5], 0.5, 0.2, 3).unwrap();
        let c = planted_partition(&[5, 5], 0.5, 0.2, 4).unwrap();
        let row = |g: &LabelledGraph| {
            (0..10)
                .map(|j| g.weights.get(0, j).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(row(&a), row(&b));
        let all = |g: &LabelledGraph| {
            (0..10)
                .flat_map(|i| (0..10).map(move |j| (i, j)))
                .map(|(i, j)| g.weights.get(i, j).unwrap())
                .collect::<Vec<_>>()
        };
        assert_ne!(all(&a), all(&c), "different seeds give different graphs");
    }

    #[test]
    fn schemes_have_the_stated_signs() {
        let labels = planted_labels(&[2, 2]).unwrap();
        let w = WeightScheme::PlusMinusOne.weights(&labels).unwrap();
        assert_eq!((w.get(0, 1).unwrap(), w.get(0, 2).unwrap()), (1.0, -1.0));
        let w = WeightScheme::NegatedWithinOne.weights(&labels).unwrap();
        assert_eq!((w.get(0, 1).unwrap(), w.get(0, 2).unwrap()), (-1.0, 0.0));
        let w = WeightScheme::Random(1).weights(&labels).unwrap();
        assert!((0..4).all(|i| (0..4).all(|j| w.get(i, j).unwrap().abs() <= 1.0)));
        assert_ne!(w.get(0, 1).unwrap(), w.get(2, 3).unwrap());
    }

    #[test]
    fn adversarial_instance_has_the_stated_shape() {
        let p = AdversarialParams {
            n_pairs: 4,
            eps: 0.01,
            middle_bonus: 0.0,
        };
        assert_eq!(p.path_order(), vec![2, 0, 1, 3]);
        let g = adversarial(&p).unwrap();
        let w = &g.weights;
        assert_eq!(w.get(0, 1).unwrap(), 1.01);
        assert_eq!((w.get(0, 2).unwrap(), w.get(1, 3).unwrap()), (1.0, 1.0)); // pairs 0 and 1 (middle)
        assert_eq!((w.get(0, 4).unwrap(), w.get(1, 5).unwrap()), (1.0, 1.0)); // pairs 0 and 2
        assert_eq!((w.get(2, 6).unwrap(), w.get(3, 7).unwrap()), (1.0, 1.0)); // pairs 1 and 3
        assert_eq!(
            (
                w.get(0, 3).unwrap(),
                w.get(4, 6).unwrap(),
                w.get(0, 6).unwrap()
            ),
            (0.0, 0.0, 0.0)
        );
        let edges = (0..8)
            .flat_map(|i| (i + 1..8).map(move |j| (i, j)))
            .filter(|&(i, j)| w.get(i, j).unwrap() != 0.0)
            .count();
        assert_eq!(
            edges,
            4 + 2 * 3,
            "4 pair edges and a matching per path link"
        );
        assert!(p.check(16).is_ok());
        let bad = AdversarialParams {
            middle_bonus: 0.02,
            ..p
        };
        assert!(bad.check(16).unwrap_err().contains("middle_bonus"));
    }
}
