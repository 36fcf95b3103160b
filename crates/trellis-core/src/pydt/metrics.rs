//! The shared clustering metrics (spec §4.2–§4.4) on multifurcating trees: dendrogram purity,
//! subtree score, the ARI curve at the achievable cluster counts, and Dasgupta's cost.

use super::tree::PydtTree;
use super::PydtError;
use crate::coalescent::metrics::adjusted_rand_index;

fn check(tree: &PydtTree, labels: &[usize]) -> Result<(), PydtError> {
    if labels.len() != tree.n_leaves() {
        return Err(PydtError::Data(format!(
            "{} labels for {} leaves",
            labels.len(),
            tree.n_leaves()
        )));
    }
    Ok(())
}

/// Class counts below every node (indexed by node, length = number of classes).
fn class_counts(tree: &PydtTree, labels: &[usize]) -> (Vec<Vec<usize>>, Vec<usize>) {
    let c = labels.iter().max().map_or(0, |m| m + 1);
    let mut order = Vec::new();
    tree.postorder(&mut order);
    let mut counts = vec![Vec::new(); tree.capacity()];
    for &v in &order {
        let mut k = vec![0usize; c];
        if tree.is_leaf(v) {
            k[labels[v]] = 1;
        } else {
            for ch in tree.children(v) {
                for (a, b) in k.iter_mut().zip(&counts[ch]) {
                    *a += b;
                }
            }
        }
        counts[v] = k;
    }
    (counts, order)
}

/// Dendrogram purity (Heller & Ghahramani 2005; spec §4.4): the mean over same-class pairs of
/// the fraction of leaves(lca) in that class. A pair's lca is the node where its leaves fall into
/// different children.
pub fn dendrogram_purity(tree: &PydtTree, labels: &[usize]) -> Result<f64, PydtError> {
    check(tree, labels)?;
    let (counts, order) = class_counts(tree, labels);
    let (mut total, mut pairs) = (0.0, 0.0);
    for &v in order.iter().filter(|&&v| !tree.is_leaf(v)) {
        let m = tree.node(v).leaves as f64;
        let kids: Vec<usize> = tree.children(v).collect();
        for (cl, &in_v) in counts[v].iter().enumerate() {
            let sum: f64 = kids.iter().map(|&k| counts[k][cl] as f64).sum();
            let sq: f64 = kids.iter().map(|&k| (counts[k][cl] as f64).powi(2)).sum();
            let p = 0.5 * (sum * sum - sq);
            pairs += p;
            total += p * in_v as f64 / m;
        }
    }
    if pairs == 0.0 {
        return Err(PydtError::Data(
            "dendrogram purity needs two points of one class".into(),
        ));
    }
    Ok(total / pairs)
}

/// Subtree score (spec §4.2): internal nodes whose leaves all share one class, over n − C.
pub fn subtree_score(tree: &PydtTree, labels: &[usize]) -> Result<f64, PydtError> {
    check(tree, labels)?;
    let (counts, order) = class_counts(tree, labels);
    let classes = counts[tree.root()].iter().filter(|&&k| k > 0).count();
    let n = tree.n_leaves();
    if n <= classes {
        return Err(PydtError::Data(
            "the subtree score needs more points than classes".into(),
        ));
    }
    let pure = order
        .iter()
        .filter(|&&v| !tree.is_leaf(v) && counts[v].iter().filter(|&&k| k > 0).count() == 1)
        .count();
    Ok(pure as f64 / (n - classes) as f64)
}

/// ARI curve at the achievable cluster counts (spec §4.3): internal nodes are opened from the
/// root downwards in time order; after each opening the clusters are the frontier, labelled by
/// majority vote (ties → smallest label). Returns (N_c, ARI) from N_c = 1 to n.
pub fn ari_points(tree: &PydtTree, labels: &[usize]) -> Result<Vec<(usize, f64)>, PydtError> {
    check(tree, labels)?;
    let (counts, _) = class_counts(tree, labels);
    let mut internal = tree.internal_nodes();
    internal.sort_by(|&a, &b| tree.s(a).total_cmp(&tree.s(b)).then(a.cmp(&b)));
    let n = tree.n_leaves();
    // Cluster of each leaf = the frontier node above it.
    let mut frontier_of = vec![tree.root(); n];
    let mut below: Vec<Vec<usize>> = vec![Vec::new(); tree.capacity()];
    let mut order = Vec::new();
    tree.postorder(&mut order);
    for &v in &order {
        below[v] = if tree.is_leaf(v) {
            vec![v]
        } else {
            tree.children(v).flat_map(|k| below[k].clone()).collect()
        };
    }
    let ari_now = |frontier_of: &[usize]| -> Result<f64, PydtError> {
        let pred: Vec<usize> = frontier_of
            .iter()
            .map(|&f| {
                let k = &counts[f];
                (0..k.len()).fold(0, |best, c| if k[c] > k[best] { c } else { best })
            })
            .collect();
        adjusted_rand_index(labels, &pred).map_err(|e| PydtError::Data(e.to_string()))
    };
    let mut points = vec![(1, ari_now(&frontier_of)?)];
    let mut clusters = 1;
    for v in internal {
        clusters += tree.node(v).n_children - 1;
        for k in tree.children(v) {
            for &leaf in &below[k] {
                frontier_of[leaf] = k;
            }
        }
        points.push((clusters, ari_now(&frontier_of)?));
    }
    Ok(points)
}

/// Trapezoidal area under the ARI points over N_c ∈ [1, n], divided by (n − 1) (spec §4.3).
pub fn ari_auc(points: &[(usize, f64)]) -> Result<f64, PydtError> {
    let (first, last) = match (points.first(), points.last()) {
        (Some(f), Some(l)) if l.0 > f.0 => (f.0, l.0),
        _ => {
            return Err(PydtError::Data(
                "the ARI area needs at least two cluster counts".into(),
            ))
        }
    };
    let area: f64 = points
        .windows(2)
        .map(|w| 0.5 * (w[0].1 + w[1].1) * (w[1].0 - w[0].0) as f64)
        .sum();
    Ok(area / (last - first) as f64)
}

/// Dasgupta's cost Σ_{i<j} w_ij·|leaves(lca(i, j))| of a multifurcating tree, for symmetric
/// similarities `weights` (n × n, row-major; the diagonal is ignored). On binary trees it is the
/// cost the trellis minimises (`model::dasgupta`).
pub fn dasgupta_cost(tree: &PydtTree, weights: &[f64]) -> Result<f64, PydtError> {
    let n = tree.n_leaves();
    if weights.len() != n * n {
        return Err(PydtError::Data(format!(
            "{} similarity entries for {n} leaves; give an n x n matrix",
            weights.len()
        )));
    }
    if let Some(k) = weights.iter().position(|w| !w.is_finite()) {
        return Err(PydtError::Data(format!(
            "similarity ({}, {}) is {}; every similarity must be finite",
            k / n,
            k % n,
            weights[k]
        )));
    }
    let mut order = Vec::new();
    tree.postorder(&mut order);
    let mut below: Vec<Vec<usize>> = vec![Vec::new(); tree.capacity()];
    let mut cost = 0.0;
    for &v in &order {
        if tree.is_leaf(v) {
            below[v] = vec![v];
            continue;
        }
        let size = tree.node(v).leaves as f64;
        let mut seen: Vec<usize> = Vec::new();
        for c in tree.children(v) {
            let mine = std::mem::take(&mut below[c]);
            let cross: f64 = mine
                .iter()
                .map(|&i| seen.iter().map(|&j| weights[i * n + j]).sum::<f64>())
                .sum();
            cost += size * cross;
            seen.extend(mine);
        }
        below[v] = seen;
    }
    Ok(cost)
}
