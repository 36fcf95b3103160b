//! Agglomerative linkage on Euclidean distances for any number of points, as a ranked
//! [`History`]: the merge heights become merge times. The clustering itself is `kodama`'s
//! (Müllner's O(n²) nearest-neighbour-chain and minimum-spanning-tree algorithms, as in
//! fastcluster and SciPy); this module only builds the condensed distance matrix and converts
//! the dendrogram.
//!
//! HL's Figure 2 baseline "HC" is [`Linkage::Average`] on Euclidean distances. Unlike
//! `search::average_linkage` (similarities over at most 64 leaves, O(n³)), this has no size
//! limit beyond memory: n(n − 1)/2 distances.

use super::history::{History, HistoryError};

/// The cluster-distance rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Linkage {
    /// Mean pairwise distance (UPGMA).
    Average,
    /// Smallest pairwise distance.
    Single,
    /// Largest pairwise distance.
    Complete,
    /// Ward's minimum-variance rule.
    Ward,
}

impl Linkage {
    fn kodama(self) -> kodama::Method {
        match self {
            Linkage::Average => kodama::Method::Average,
            Linkage::Single => kodama::Method::Single,
            Linkage::Complete => kodama::Method::Complete,
            Linkage::Ward => kodama::Method::Ward,
        }
    }
}

/// Errors of [`linkage_history`] (one line each).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LinkageError {
    /// No points.
    #[error("linkage needs at least one point")]
    NoPoints,
    /// Rows of different lengths.
    #[error("point {row} has {got} coordinates, expected {expected} (all rows must have the same length)")]
    RowLength {
        /// The row.
        row: usize,
        /// Length of row 0.
        expected: usize,
        /// Its length.
        got: usize,
    },
    /// A NaN or infinite coordinate.
    #[error("point {row} coordinate {col} is not finite; remove or impute it before clustering")]
    NonFinite {
        /// The row.
        row: usize,
        /// The column.
        col: usize,
    },
    /// The dendrogram did not form a valid history (not expected).
    #[error(transparent)]
    History(#[from] HistoryError),
}

/// The condensed Euclidean distance matrix (pairs i < j, row-major), checked.
pub fn euclidean_condensed(points: &[Vec<f64>]) -> Result<Vec<f64>, LinkageError> {
    let n = points.len();
    if n == 0 {
        return Err(LinkageError::NoPoints);
    }
    let d = points[0].len();
    for (row, p) in points.iter().enumerate() {
        if p.len() != d {
            return Err(LinkageError::RowLength {
                row,
                expected: d,
                got: p.len(),
            });
        }
        if let Some(col) = p.iter().position(|v| !v.is_finite()) {
            return Err(LinkageError::NonFinite { row, col });
        }
    }
    let mut out = Vec::with_capacity(n * (n - 1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            out.push(super::history::sq_dist(&points[i], &points[j]).sqrt());
        }
    }
    Ok(out)
}

/// The linkage tree of `points` under `method` on Euclidean distances: merge k joins the two
/// clusters kodama joins at step k (ids as in [`History`]: leaves 0..n, cluster n + k from merge
/// k), at time = the merge height (made non-decreasing against rounding).
pub fn linkage_history(points: &[Vec<f64>], method: Linkage) -> Result<History, LinkageError> {
    let mut condensed = euclidean_condensed(points)?;
    let n = points.len();
    if n == 1 {
        return Ok(History::new(1, Vec::new())?);
    }
    let dend = kodama::linkage(&mut condensed, n, method.kodama());
    let mut merges = Vec::with_capacity(n - 1);
    let mut prev = 0.0f64;
    for s in dend.steps() {
        let t = s.dissimilarity.max(prev);
        prev = t;
        merges.push((s.cluster1.min(s.cluster2), s.cluster1.max(s.cluster2), t));
    }
    Ok(History::new(n, merges)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};
    use std::collections::BTreeSet;

    /// Textbook O(n³) average linkage: merge the pair of active clusters with the smallest mean
    /// pairwise distance (ties: first pair in id order). Returns (leaf set, height) per merge.
    fn naive_average(points: &[Vec<f64>]) -> Vec<(BTreeSet<usize>, f64)> {
        let dist =
            |a: usize, b: usize| super::super::history::sq_dist(&points[a], &points[b]).sqrt();
        let mut active: Vec<BTreeSet<usize>> =
            (0..points.len()).map(|i| BTreeSet::from([i])).collect();
        let mut out = Vec::new();
        while active.len() > 1 {
            let mut best = (f64::INFINITY, 0, 0);
            for i in 0..active.len() {
                for j in i + 1..active.len() {
                    let mut s = 0.0;
                    for &a in &active[i] {
                        for &b in &active[j] {
                            s += dist(a, b);
                        }
                    }
                    let m = s / (active[i].len() * active[j].len()) as f64;
                    if m < best.0 {
                        best = (m, i, j);
                    }
                }
            }
            let (h, i, j) = best;
            let b = active.remove(j);
            let mut a = active.remove(i);
            a.extend(b);
            out.push((a.clone(), h));
            active.push(a);
        }
        out
    }

    /// Leaf set of every merge of `h`, with its time.
    fn clusters(h: &History) -> Vec<(BTreeSet<usize>, f64)> {
        let mut sets: Vec<BTreeSet<usize>> = (0..h.n).map(|i| BTreeSet::from([i])).collect();
        let mut out = Vec::new();
        for &(a, b, t) in &h.merges {
            let s: BTreeSet<usize> = sets[a].union(&sets[b]).copied().collect();
            out.push((s.clone(), t));
            sets.push(s);
        }
        out
    }

    #[test]
    fn average_linkage_equals_the_textbook_algorithm_on_random_points() {
        for seed in 0..40u64 {
            let mut rng = StdRng::seed_from_u64(seed);
            let n = 2 + (seed as usize % 23);
            let d = 1 + (seed as usize % 4);
            let pts: Vec<Vec<f64>> = (0..n)
                .map(|_| (0..d).map(|_| rng.random::<f64>() * 10.0).collect())
                .collect();
            let h = linkage_history(&pts, Linkage::Average).unwrap();
            let ours = clusters(&h);
            let naive = naive_average(&pts);
            let a: BTreeSet<Vec<usize>> =
                ours.iter().map(|c| c.0.iter().copied().collect()).collect();
            let b: BTreeSet<Vec<usize>> = naive
                .iter()
                .map(|c| c.0.iter().copied().collect())
                .collect();
            assert_eq!(a, b, "seed {seed}: different clusters");
            let mut ha: Vec<f64> = ours.iter().map(|c| c.1).collect();
            let mut hb: Vec<f64> = naive.iter().map(|c| c.1).collect();
            ha.sort_by(f64::total_cmp);
            hb.sort_by(f64::total_cmp);
            for (x, y) in ha.iter().zip(&hb) {
                assert!(
                    (x - y).abs() <= 1e-9 * y.max(1.0),
                    "seed {seed}: {x} vs {y}"
                );
            }
        }
    }

    #[test]
    fn single_linkage_heights_are_the_minimum_spanning_tree_edges() {
        // Points on a line: single-linkage heights are the gaps between neighbours.
        let xs = [0.0, 1.0, 3.0, 7.0, 15.0, 16.5];
        let pts: Vec<Vec<f64>> = xs.iter().map(|&x| vec![x]).collect();
        let h = linkage_history(&pts, Linkage::Single).unwrap();
        assert_eq!(h.times(), vec![1.0, 1.5, 2.0, 4.0, 8.0]);
        for m in [Linkage::Complete, Linkage::Ward] {
            let h = linkage_history(&pts, m).unwrap();
            assert_eq!(h.merges.len(), 5);
        }
    }

    #[test]
    fn bad_points_are_refused_with_the_row() {
        assert_eq!(
            linkage_history(&[], Linkage::Average),
            Err(LinkageError::NoPoints)
        );
        let e = linkage_history(&[vec![0.0, 1.0], vec![0.0]], Linkage::Average).unwrap_err();
        assert!(e.to_string().contains("point 1 has 1"), "{e}");
        let e = linkage_history(&[vec![0.0], vec![f64::NAN]], Linkage::Average).unwrap_err();
        assert!(e.to_string().contains("point 1 coordinate 0"), "{e}");
        let one = linkage_history(&[vec![2.0]], Linkage::Average).unwrap();
        assert_eq!(one.merges.len(), 0);
    }

    #[test]
    fn five_hundred_points_are_clustered() {
        let mut rng = StdRng::seed_from_u64(3);
        let pts: Vec<Vec<f64>> = (0..500)
            .map(|_| (0..8).map(|_| rng.random::<f64>()).collect())
            .collect();
        let h = linkage_history(&pts, Linkage::Average).unwrap();
        assert_eq!(h.merges.len(), 499);
        assert_eq!(clusters(&h).last().unwrap().0.len(), 500);
    }
}
