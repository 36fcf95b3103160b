//! Average linkage (UPGMA) on a similarity graph: repeatedly merge the two clusters with the
//! largest mean pairwise similarity. The classic greedy that Dasgupta-cost adversarial graphs
//! target (Charikar, Chatziafratis and Niazadeh 2019).

use super::{check_leaves, SearchError};
use crate::model::WeightMatrix;
use crate::subset::Subset;
use crate::tree::Tree;

/// The average-linkage tree of `similarities` (higher = more alike). Ties go to the pair that
/// comes first (clusters in order of creation, points first). `O(N^3)`.
/// Errors for an empty matrix.
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
}
