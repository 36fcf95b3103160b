//! Quality measures of hierarchies against known labels.

use crate::tree::{Node, Tree};

/// Dendrogram purity (Heller and Ghahramani 2005): over all pairs of labelled leaves with the
/// same label, the mean fraction of the labelled leaves under their lowest common ancestor that
/// carry that label. 1 for a tree in which every class forms its own subtree. Unlabelled leaves
/// (`None`) take part in neither the pairs nor the fractions. `None` if no two leaves share a
/// label. Labels are any `usize` values (only their equality matters); leaves beyond
/// `labels` are unlabelled.
pub fn dendrogram_purity(tree: &Tree, labels: &[Option<usize>]) -> Option<f64> {
    // Dense class ids in the order of the labels' values, so per-class work does not depend on
    // how large the label values are (and classes are visited in the same order).
    // Only the tree's leaves (at most 64) count.
    let leaves = tree.leaves();
    let label_of = |i: usize| labels.get(i).copied().flatten();
    let mut classes: Vec<usize> = leaves.iter().filter_map(label_of).collect();
    classes.sort_unstable();
    classes.dedup();
    let labels: Vec<Option<usize>> = (0..leaves.iter().last().map_or(0, |i| i + 1))
        .map(|i| label_of(i).and_then(|l| classes.binary_search(&l).ok()))
        .collect();
    let labels = &labels[..];
    let n_classes = classes.len();
    // Per node: count of each label under it; accumulate pair contributions at each LCA.
    let nodes = tree.nodes();
    let mut counts: Vec<Vec<u64>> = vec![Vec::new(); nodes.len()];
    let mut sum = 0.0;
    let mut pairs = 0u64;
    fn visit(
        v: usize,
        nodes: &[Node],
        labels: &[Option<usize>],
        k: usize,
        counts: &mut Vec<Vec<u64>>,
        sum: &mut f64,
        pairs: &mut u64,
    ) {
        match nodes[v] {
            Node::Leaf(i) => {
                let mut c = vec![0u64; k];
                if let Some(Some(l)) = labels.get(i) {
                    c[*l] += 1;
                }
                counts[v] = c;
            }
            Node::Internal(l, r) => {
                visit(l, nodes, labels, k, counts, sum, pairs);
                visit(r, nodes, labels, k, counts, sum, pairs);
                let total: u64 = counts[l].iter().sum::<u64>() + counts[r].iter().sum::<u64>();
                let mut c = vec![0u64; k];
                for class in 0..k {
                    let (a, b) = (counts[l][class], counts[r][class]);
                    c[class] = a + b;
                    // Pairs of this class whose LCA is v: one leaf on each side.
                    let p = a * b;
                    if p > 0 {
                        *pairs += p;
                        *sum += p as f64 * (a + b) as f64 / total as f64;
                    }
                }
                counts[v] = c;
            }
        }
    }
    visit(
        tree.root(),
        nodes,
        labels,
        n_classes,
        &mut counts,
        &mut sum,
        &mut pairs,
    );
    (pairs > 0).then(|| sum / pairs as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pure_tree_has_purity_one() {
        let t = Tree::from_newick("((0,1),(2,(3,4)));").unwrap();
        let labels = [Some(0), Some(0), Some(1), Some(1), Some(1)];
        assert_eq!(dendrogram_purity(&t, &labels), Some(1.0));
    }

    #[test]
    fn hand_computed_purity() {
        // ((0,2),1) with labels a, b, a: the only same-label pair is (0,2), LCA {0,2}: purity 1.
        let t = Tree::from_newick("((0,2),1);").unwrap();
        assert_eq!(
            dendrogram_purity(&t, &[Some(0), Some(1), Some(0)]),
            Some(1.0)
        );
        // ((0,1),2) with labels a, b, a: pair (0,2) meets at the root, 2 of 3 leaves are a.
        let t = Tree::from_newick("((0,1),2);").unwrap();
        let dp = dendrogram_purity(&t, &[Some(0), Some(1), Some(0)]).unwrap();
        assert!((dp - 2.0 / 3.0).abs() < 1e-15);
        // An unlabelled leaf changes nothing: ((0,1),(2,3)) with 1 unknown.
        let t = Tree::from_newick("((0,1),(2,3));").unwrap();
        let dp = dendrogram_purity(&t, &[Some(0), None, Some(0), Some(1)]).unwrap();
        // Pair (0,2): LCA = root, labelled leaves 0,2,3 -> 2/3.
        assert!((dp - 2.0 / 3.0).abs() < 1e-15);
        assert_eq!(dendrogram_purity(&t, &[Some(0), Some(1), None, None]), None);
        // Label values only need to be distinct, however large.
        let big = [Some(usize::MAX), None, Some(usize::MAX), Some(7)];
        assert_eq!(dendrogram_purity(&t, &big), Some(dp));
    }
}
