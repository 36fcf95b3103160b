//! Average linkage (UPGMA) on a similarity graph: repeatedly merge the two clusters with the
//! largest mean pairwise similarity. The classic greedy that Dasgupta-cost adversarial graphs
//! target (Charikar, Chatziafratis and Niazadeh 2019).
//!
//! Two functions, which differ only where mean similarities tie (0/1 graphs tie often):
//! [`scipy_average_linkage`] breaks ties as SciPy does, for any number of points (the board's
//! `average_linkage` and Python's `average_linkage`); [`average_linkage`] takes the first tied
//! pair in index order (the Dasgupta and PAM50 experiments, whose adversarial graphs are built
//! for that rule).

use super::{check_leaves, SearchError};
use crate::hierarchy::Hierarchy;
use crate::model::WeightMatrix;
use crate::subset::Subset;
use crate::tree::Tree;

/// The average-linkage tree of the `n × n` similarity matrix `similarities` (row-major, higher
/// = more alike), for any `n >= 1`, with SciPy's merges and tie rule: the clusters of
/// `scipy.cluster.hierarchy.linkage(squareform(c - S, checks=False), "average")`.
///
/// kodama clusters the dissimilarities `c - s[i][j]` (`i < j`), where `c` is the largest
/// entry of the matrix with its diagonal read as 0 (the diagonal is otherwise ignored), with
/// Müllner's nearest-neighbour chain, as SciPy does. Its tie rule: a chain grows from its
/// last cluster to that cluster's nearest neighbour, a tie going to the chain's previous
/// cluster, else to the lowest-numbered tied cluster; a reciprocal pair merges (the merged
/// cluster takes the higher of the two numbers), and the chain goes on from the cluster before
/// that pair, or starts again at the lowest-numbered active cluster when fewer than two would
/// be left; the merges are then sorted by height, stably, as SciPy sorts them. Average linkage
/// of `c - s` merges as average linkage of `s` would, up to that rule.
///
/// Node heights are the merges' mean dissimilarities (`c` minus the mean similarity between
/// the two clusters). Reads the upper triangle: `s[i][j]` and `s[j][i]` must agree to 1e-12
/// relative, off the diagonal entries must be finite. `O(N^2)` memory (the `N(N-1)/2`
/// dissimilarities) and `O(N^2)` to `O(N^3)` time. Errors for `n = 0`, a slice that is not
/// `n × n`, a non-finite or asymmetric entry. [`Hierarchy::to_tree`] gives a binary [`Tree`]
/// for `n <= 64`.
pub fn scipy_average_linkage(similarities: &[f64], n: usize) -> Result<Hierarchy, SearchError> {
    if n == 0 {
        return Err(SearchError::Empty);
    }
    if n.checked_mul(n) != Some(similarities.len()) {
        return Err(SearchError::Invalid(format!(
            "the similarity matrix has {} entries, not n × n = {n} × {n}; pass a square matrix",
            similarities.len()
        )));
    }
    let s = |i: usize, j: usize| similarities[i * n + j];
    let mut c = 0.0f64;
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            let (a, b) = (s(i, j), s(j, i));
            if !a.is_finite() {
                return Err(SearchError::Invalid(format!(
                    "similarity s[{i}][{j}] = {a:?} is not a finite number; replace it (e.g. by 0 for no edge)"
                )));
            }
            if i < j && (a - b).abs() > 1e-12 * a.abs().max(b.abs()).max(1.0) {
                return Err(SearchError::Invalid(format!(
                    "the similarity matrix is not symmetric: s[{i}][{j}] = {a:?} but s[{j}][{i}] = {b:?}; pass a symmetric matrix"
                )));
            }
            c = c.max(a);
        }
    }
    if n == 1 {
        // The one tree of one leaf (kodama takes no dissimilarities for no pairs).
        return Ok(Hierarchy::from_tree(&Tree::leaf(0)).expect("one leaf is a tree"));
    }
    let mut d = Vec::with_capacity(n * (n - 1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            d.push(c - s(i, j));
        }
    }
    let dendrogram = kodama::linkage(&mut d, n, kodama::Method::Average);
    Hierarchy::from_linkage(&dendrogram).map_err(|e| SearchError::Invalid(e.to_string()))
}

/// The average-linkage tree of `similarities` (higher = more alike). Ties go to the pair that
/// comes first (clusters in order of creation, points first), which is not SciPy's rule (see
/// [`scipy_average_linkage`]: on a 0/1 graph the two can give different trees). `O(N^3)`,
/// `N <= 64`. Errors for an empty matrix.
pub fn average_linkage(similarities: &WeightMatrix) -> Result<Tree, SearchError> {
    let n = check_leaves(similarities.len())?;
    let mut clusters: Vec<(Subset, Tree)> = (0..n)
        .map(|i| (Subset::singleton(i), Tree::leaf(i)))
        .collect();
    // Total similarity between current clusters i and j (the mean divides by the sizes).
    let mut total: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| similarities.at(i, j)).collect())
        .collect();
    while clusters.len() > 1 {
        let k = clusters.len();
        let (mut bi, mut bj, mut best) = (0, 1, f64::NEG_INFINITY);
        for i in 0..k {
            for j in i + 1..k {
                let mean = total[i][j] / (clusters[i].0.len() as f64 * clusters[j].0.len() as f64);
                if mean > best {
                    (bi, bj, best) = (i, j, mean);
                }
            }
        }
        // Merge j into i's place: the merged cluster's totals are the sums of both rows.
        let row: Vec<f64> = (0..k).map(|x| total[bi][x] + total[bj][x]).collect();
        for x in 0..k {
            total[bi][x] = row[x];
            total[x][bi] = row[x];
        }
        let (sj, tj) = clusters.remove(bj);
        total.remove(bj);
        for r in total.iter_mut() {
            r.remove(bj);
        }
        let (si, ti) = std::mem::replace(&mut clusters[bi], (Subset::EMPTY, Tree::leaf(0)));
        clusters[bi] = (si.union(sj), Tree::join_disjoint(ti, tj));
    }
    Ok(clusters.pop().expect("n >= 1 clusters merge into one").1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_by_mean_similarity() {
        // 0-1 very similar, 2-3 similar, cross pairs weak; {0,1} joins {2,3} last.
        let rows = vec![
            vec![0.0, 0.9, 0.1, 0.2],
            vec![0.9, 0.0, 0.1, 0.1],
            vec![0.1, 0.1, 0.0, 0.7],
            vec![0.2, 0.1, 0.7, 0.0],
        ];
        let t = average_linkage(&WeightMatrix::new(rows).unwrap()).unwrap();
        assert_eq!(t.to_newick(), "((0,1),(2,3));");
    }

    #[test]
    fn mean_not_max_decides() {
        // Single linkage would join 2 to {0,1} through the 0.8 edge; the mean (0.8+0)/2 = 0.4
        // is below 2-3's 0.5, so average linkage joins 2 with 3 first.
        let rows = vec![
            vec![0.0, 1.0, 0.8, 0.0],
            vec![1.0, 0.0, 0.0, 0.0],
            vec![0.8, 0.0, 0.0, 0.5],
            vec![0.0, 0.0, 0.5, 0.0],
        ];
        let t = average_linkage(&WeightMatrix::new(rows).unwrap()).unwrap();
        assert_eq!(t.to_newick(), "((0,1),(2,3));");
    }

    /// Zachary's karate club (networkx's `karate_club_graph()`, 34 members, 78 edges).
    const KARATE: [(usize, usize); 78] = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (0, 5),
        (0, 6),
        (0, 7),
        (0, 8),
        (0, 10),
        (0, 11),
        (0, 12),
        (0, 13),
        (0, 17),
        (0, 19),
        (0, 21),
        (0, 31),
        (1, 2),
        (1, 3),
        (1, 7),
        (1, 13),
        (1, 17),
        (1, 19),
        (1, 21),
        (1, 30),
        (2, 3),
        (2, 7),
        (2, 8),
        (2, 9),
        (2, 13),
        (2, 27),
        (2, 28),
        (2, 32),
        (3, 7),
        (3, 12),
        (3, 13),
        (4, 6),
        (4, 10),
        (5, 6),
        (5, 10),
        (5, 16),
        (6, 16),
        (8, 30),
        (8, 32),
        (8, 33),
        (9, 33),
        (13, 33),
        (14, 32),
        (14, 33),
        (15, 32),
        (15, 33),
        (18, 32),
        (18, 33),
        (19, 33),
        (20, 32),
        (20, 33),
        (22, 32),
        (22, 33),
        (23, 25),
        (23, 27),
        (23, 29),
        (23, 32),
        (23, 33),
        (24, 25),
        (24, 27),
        (24, 31),
        (25, 31),
        (26, 29),
        (26, 33),
        (27, 33),
        (28, 31),
        (28, 33),
        (29, 32),
        (29, 33),
        (30, 32),
        (30, 33),
        (31, 32),
        (31, 33),
        (32, 33),
    ];

    /// The merges (cluster ids as in SciPy: leaves 0..34, merge k makes 34 + k) of SciPy 1.17's
    /// `linkage(squareform(1 - S, checks=False), "average")` on the karate club's adjacency.
    const KARATE_SCIPY: [(usize, usize); 33] = [
        (0, 1),
        (2, 34),
        (3, 35),
        (7, 36),
        (4, 6),
        (5, 10),
        (13, 33),
        (8, 30),
        (14, 32),
        (23, 27),
        (28, 31),
        (24, 25),
        (26, 29),
        (38, 39),
        (9, 40),
        (16, 47),
        (15, 42),
        (44, 45),
        (12, 37),
        (17, 52),
        (19, 48),
        (18, 50),
        (21, 53),
        (20, 54),
        (41, 55),
        (43, 46),
        (57, 58),
        (22, 60),
        (11, 56),
        (59, 61),
        (49, 62),
        (51, 63),
        (64, 65),
    ];

    /// The sorted clusters of a SciPy-style list of merges over `n` leaves.
    fn clusters_of_merges(n: usize, merges: &[(usize, usize)]) -> Vec<Vec<usize>> {
        let mut members: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
        for &(a, b) in merges {
            let mut m = [members[a].clone(), members[b].clone()].concat();
            m.sort_unstable();
            members.push(m);
        }
        let mut out = members.split_off(n);
        out.sort();
        out
    }

    fn graph(n: usize, edges: &[(usize, usize)]) -> Vec<f64> {
        let mut s = vec![0.0; n * n];
        for &(i, j) in edges {
            s[i * n + j] = 1.0;
            s[j * n + i] = 1.0;
        }
        s
    }

    #[test]
    fn scipys_tree_on_the_karate_club_where_the_first_pair_rule_differs() {
        let s = graph(34, &KARATE);
        let h = scipy_average_linkage(&s, 34).unwrap();
        assert_eq!(h.clusters(), clusters_of_merges(34, &KARATE_SCIPY));
        // Dasgupta's cost: 999 for SciPy's tie rule, 855 for the first tied pair's.
        assert_eq!(h.dasgupta_cost(&s).unwrap(), 999.0);
        let rows = s.chunks(34).map(<[f64]>::to_vec).collect();
        let first_pair = average_linkage(&WeightMatrix::new(rows).unwrap()).unwrap();
        let first_pair = Hierarchy::from_tree(&first_pair).unwrap();
        assert_eq!(first_pair.dasgupta_cost(&s).unwrap(), 855.0);
        // Heights: 1 minus the mean similarity between the merged clusters ({0, 1} at 0).
        assert_eq!(h.heights()[h.root()], 0.95);
        assert_eq!(h.to_tree().unwrap().leaves().len(), 34);
    }

    #[test]
    fn without_ties_both_rules_build_the_same_tree() {
        use rand::rngs::StdRng;
        use rand::{RngExt, SeedableRng};
        let mut rng = StdRng::seed_from_u64(7);
        for n in [2, 3, 9, 30, 64] {
            let mut s = vec![0.0; n * n];
            for i in 0..n {
                for j in i + 1..n {
                    let v: f64 = rng.random();
                    (s[i * n + j], s[j * n + i]) = (v, v);
                }
                // The diagonal is read as 0, whatever it holds.
                s[i * n + i] = f64::NAN;
            }
            let h = scipy_average_linkage(&s, n).unwrap();
            let rows = (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| if i == j { 0.0 } else { s[i * n + j] })
                        .collect()
                })
                .collect();
            let t = average_linkage(&WeightMatrix::new(rows).unwrap()).unwrap();
            assert_eq!(
                h.clusters(),
                Hierarchy::from_tree(&t).unwrap().clusters(),
                "n = {n}"
            );
        }
    }

    #[test]
    fn any_number_of_points_and_one_line_errors() {
        // 200 points: two cliques of 100 joined by one edge split at the root.
        let n = 200;
        let mut edges = vec![(0, 100)];
        for i in 0..n {
            for j in i + 1..n {
                if (i < 100) == (j < 100) {
                    edges.push((i, j));
                }
            }
        }
        let h = scipy_average_linkage(&graph(n, &edges), n).unwrap();
        assert_eq!(h.children(h.root()).len(), 2);
        assert!(h.clusters().contains(&(0..100).collect()));
        assert!(
            h.to_tree().is_err(),
            "a binary Tree holds at most 64 leaves"
        );
        let one = scipy_average_linkage(&[5.0], 1).unwrap();
        assert_eq!(one.to_newick(), "0;");
        let msg = |r: Result<Hierarchy, SearchError>| r.unwrap_err().to_string();
        assert_eq!(
            scipy_average_linkage(&[], 0).unwrap_err(),
            SearchError::Empty
        );
        assert!(msg(scipy_average_linkage(&[0.0; 5], 2)).contains("not n × n = 2 × 2"));
        let nan = [0.0, f64::NAN, f64::NAN, 0.0];
        assert!(msg(scipy_average_linkage(&nan, 2)).contains("s[0][1] = NaN"));
        let skew = [0.0, 1.0, 2.0, 0.0];
        assert!(msg(scipy_average_linkage(&skew, 2)).contains("not symmetric"));
    }
}
