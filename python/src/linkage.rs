//! A `Tree` to and from SciPy's linkage matrix, Newick with branch lengths, the heights a user
//! chooses for them, and the canonical parent array of a tree (one row of `sample_parents`).

use crate::{value_error, with_model, Energy};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use trellis_core::hierarchy::Hierarchy;
use trellis_core::model::SplitModel;
use trellis_core::subset::Subset;

/// The heights `to_linkage` and `with_heights` can put on a tree's nodes.
pub(crate) enum Heights<'a> {
    /// The tree's own heights.
    Tree,
    /// Cluster sizes.
    Size,
    /// Each node's subtree cost under an energy: minus the sum of log psi over its merges.
    Cost(&'a Energy),
}

/// The heights argument by name (`energy` is given when a jet or a similarity array is).
pub(crate) fn heights_of<'a>(name: &str, energy: Option<&'a Energy>) -> PyResult<Heights<'a>> {
    match (name, energy) {
        ("tree", None) => Ok(Heights::Tree),
        ("size", None) => Ok(Heights::Size),
        ("cost", Some(e)) => Ok(Heights::Cost(e)),
        ("cost", None) => Err(PyValueError::new_err(
            "heights=\"cost\" scores the merges under an energy; pass jet= or similarity=",
        )),
        ("tree" | "size", Some(_)) => Err(PyValueError::new_err(format!(
            "heights={name:?} does not use an energy; drop jet= and similarity=, or use heights=\"cost\""
        ))),
        (other, _) => Err(PyValueError::new_err(format!(
            "heights = {other:?} is not known; use \"tree\", \"size\" or \"cost\""
        ))),
    }
}

/// Every node's height under `choice` (leaves 0, never decreasing towards the root), or a
/// one-line error when the choice cannot give such heights for this tree.
pub(crate) fn node_heights(h: &Hierarchy, choice: &Heights<'_>) -> PyResult<Vec<f64>> {
    match choice {
        Heights::Tree => Ok(h.heights().to_vec()),
        Heights::Size => {
            let mut s: Vec<f64> = h.cluster_sizes().into_iter().map(|s| s as f64).collect();
            s[..h.n_leaves()].iter_mut().for_each(|x| *x = 0.0);
            Ok(s)
        }
        Heights::Cost(e) => with_model!(e, m => costs(h, m)),
    }
}

/// Each node's subtree cost `-sum log psi` over the merges at and below it; refused unless the
/// tree is binary over the model's leaves and every merge has `log psi <= 0` (else a parent
/// would sit below a child) and a finite one.
fn costs<M: SplitModel>(h: &Hierarchy, m: &M) -> PyResult<Vec<f64>> {
    let n = h.n_leaves();
    if n != m.n_leaves() {
        return Err(PyValueError::new_err(format!(
            "the tree has {n} leaves and the energy {}; score a tree over the energy's leaves",
            m.n_leaves()
        )));
    }
    if n > Subset::MAX_LEAVES {
        return Err(PyValueError::new_err(format!(
            "heights=\"cost\" on {n} leaves: the energies score trees of at most 64 leaves"
        )));
    }
    let mut cluster = vec![Subset::EMPTY; h.n_nodes()];
    let mut height = vec![0.0; h.n_nodes()];
    for &v in h.postorder() {
        if v < n {
            cluster[v] = Subset::singleton(v);
            continue;
        }
        let &[a, b] = h.children(v) else {
            return Err(PyValueError::new_err(format!(
                "heights=\"cost\" needs a binary tree; node {v} has {} children",
                h.children(v).len()
            )));
        };
        cluster[v] = cluster[a].union(cluster[b]);
        let (lo, hi) = if cluster[a].lowest() < cluster[b].lowest() {
            (cluster[a], cluster[b])
        } else {
            (cluster[b], cluster[a])
        };
        let log_psi = m.log_psi(lo, hi);
        if !(log_psi.is_finite() && log_psi <= 0.0) {
            return Err(PyValueError::new_err(format!(
                "heights=\"cost\": the merge at node {v} (cluster of {} leaves) has log psi = {log_psi}; subtree costs are heights only when every merge has a finite log psi <= 0 (else a parent would sit below a child or at infinity); use heights=\"size\" or \"tree\"",
                cluster[v].len()
            )));
        }
        height[v] = height[a] + height[b] - log_psi;
    }
    Ok(height)
}

/// SciPy's linkage rows of `h` at `height` (one per node's height): one row per merge, children
/// before parents, rows sorted by height (ties in post-order); a node with k children becomes
/// k - 1 merges at its height.
pub(crate) fn linkage_rows(h: &Hierarchy, height: &[f64]) -> Vec<Vec<f64>> {
    let n = h.n_leaves();
    let size = h.cluster_sizes();
    // Post-order position breaks height ties so that children come before parents.
    let mut rank = vec![0usize; h.n_nodes()];
    for (k, &v) in h.postorder().iter().enumerate() {
        rank[v] = k;
    }
    let mut internal: Vec<usize> = (n..h.n_nodes()).collect();
    internal.sort_by(|&a, &b| height[a].total_cmp(&height[b]).then(rank[a].cmp(&rank[b])));
    let mut id: Vec<usize> = (0..h.n_nodes()).collect();
    let mut rows: Vec<Vec<f64>> = Vec::with_capacity(n.saturating_sub(1));
    for v in internal {
        let mut kids: Vec<usize> = h.children(v).to_vec();
        kids.sort_by_key(|&c| id[c]);
        let (mut acc, mut count) = (id[kids[0]], size[kids[0]]);
        for &c in &kids[1..] {
            count += size[c];
            let (a, b) = (acc.min(id[c]), acc.max(id[c]));
            rows.push(vec![a as f64, b as f64, height[v], count as f64]);
            acc = n + rows.len() - 1;
        }
        id[v] = acc;
    }
    rows
}

/// The tree of a SciPy linkage matrix (`rows` of 4 numbers): leaves `0..n` with `n` = rows + 1,
/// row `k` creating node `n + k` at its height (raised to its children's heights where it is
/// below them, as centroid and median linkage can give); with `collapse`, a node at the height
/// of its parent is joined into the parent. One-line errors naming the row and the problem.
pub(crate) fn from_linkage_rows(rows: &[[f64; 4]], collapse: bool) -> PyResult<Hierarchy> {
    let n = rows.len() + 1;
    let total = 2 * n - 1;
    let mut parent: Vec<Option<usize>> = vec![None; total];
    let mut merged_at = vec![usize::MAX; total];
    let mut height = vec![0.0; total];
    let mut size = vec![1usize; total];
    let fix = "pass SciPy's (n - 1) x 4 linkage matrix, e.g. scipy.cluster.hierarchy.linkage(X)";
    for (k, r) in rows.iter().enumerate() {
        let bad = |what: String| Err(PyValueError::new_err(format!("Z row {k}: {what}; {fix}")));
        let id = n + k;
        let mut ids = [0usize; 2];
        for (col, x) in r[..2].iter().enumerate() {
            if !(x.is_finite() && *x >= 0.0 && x.fract() == 0.0) {
                return bad(format!(
                    "cluster id {x} in column {col} is not an integer >= 0"
                ));
            }
            let c = *x as usize;
            if c >= id {
                return bad(format!(
                    "merges cluster {c}, which no earlier row made (ids 0..{id} exist before row {k})"
                ));
            }
            if merged_at[c] != usize::MAX {
                return bad(format!(
                    "merges cluster {c}, already merged at row {}",
                    merged_at[c]
                ));
            }
            ids[col] = c;
        }
        if ids[0] == ids[1] {
            return bad(format!("merges cluster {} with itself", ids[0]));
        }
        for c in ids {
            merged_at[c] = k;
            parent[c] = Some(id);
        }
        let want = size[ids[0]] + size[ids[1]];
        if r[3] != want as f64 {
            return bad(format!(
                "count {} but clusters {} and {} hold {want} leaves",
                r[3], ids[0], ids[1]
            ));
        }
        if !(r[2].is_finite() && r[2] >= 0.0) {
            return bad(format!("height {} is not a finite number >= 0", r[2]));
        }
        size[id] = want;
        height[id] = r[2].max(height[ids[0]]).max(height[ids[1]]);
    }
    if collapse {
        (parent, height) = collapse_ties(n, &parent, &height);
    }
    Hierarchy::from_parents(n, parent, height).map_err(value_error)
}

/// Joins every internal node whose parent has the same height into that parent (its children
/// become the parent's); the remaining internal nodes keep their order, renumbered from `n`.
/// Parents have higher ids than their children (as in a linkage matrix).
fn collapse_ties(
    n: usize,
    parent: &[Option<usize>],
    height: &[f64],
) -> (Vec<Option<usize>>, Vec<f64>) {
    let total = parent.len();
    // The node that stands for v: itself, or the node its parent collapses into.
    let mut rep: Vec<usize> = (0..total).collect();
    for v in (n..total).rev() {
        if let Some(p) = parent[v] {
            if height[v] == height[p] {
                rep[v] = rep[p];
            }
        }
    }
    let mut new_id = vec![usize::MAX; total];
    let mut next = n;
    for v in 0..total {
        if v < n {
            new_id[v] = v;
        } else if rep[v] == v {
            new_id[v] = next;
            next += 1;
        }
    }
    let mut new_parent = vec![None; next];
    let mut new_height = vec![0.0; next];
    for v in (0..total).filter(|&v| new_id[v] != usize::MAX) {
        new_parent[new_id[v]] = parent[v].map(|p| new_id[rep[p]]);
        new_height[new_id[v]] = height[v];
    }
    (new_parent, new_height)
}

/// Newick with integer leaf labels, children ordered by their lowest leaf (as `Tree.newick()`),
/// and every node but the root followed by `:length`, its parent's height minus its own.
pub(crate) fn newick_with_lengths(h: &Hierarchy, height: &[f64]) -> String {
    let n = h.n_leaves();
    let lowest = lowest_leaves(h);
    let sorted = |v: usize| {
        let mut c = h.children(v).to_vec();
        c.sort_by_key(|&c| lowest[c]);
        c
    };
    let mut out = String::new();
    // Iterative: (node, next child to write) frames, so deep trees cannot overflow the stack.
    let mut stack: Vec<(usize, Vec<usize>, usize)> = Vec::new();
    let mut next = Some(h.root());
    loop {
        if let Some(v) = next.take() {
            if v < n {
                out.push_str(&v.to_string());
                push_length(&mut out, h, height, v);
            } else {
                out.push('(');
                stack.push((v, sorted(v), 0));
            }
        }
        let Some((v, kids, k)) = stack.last_mut() else {
            break;
        };
        if *k < kids.len() {
            if *k > 0 {
                out.push(',');
            }
            next = Some(kids[*k]);
            *k += 1;
        } else {
            let v = *v;
            out.push(')');
            push_length(&mut out, h, height, v);
            stack.pop();
        }
    }
    out.push(';');
    out
}

/// `:length` after node `v` (nothing after the root).
fn push_length(out: &mut String, h: &Hierarchy, height: &[f64], v: usize) {
    if let Some(p) = h.parent(v) {
        out.push(':');
        out.push_str(&(height[p] - height[v]).to_string());
    }
}

/// The lowest leaf below every node.
pub(crate) fn lowest_leaves(h: &Hierarchy) -> Vec<usize> {
    let mut lowest: Vec<usize> = (0..h.n_nodes()).collect();
    for &v in h.postorder() {
        if v >= h.n_leaves() {
            lowest[v] = h.children(v).iter().map(|&c| lowest[c]).min().unwrap_or(v);
        }
    }
    lowest
}

/// The canonical parent array of `h`: leaves `0..n`, internal nodes numbered `n..` in
/// post-order with children visited in increasing order of their lowest leaf (so the root is
/// last), -1 for the root. Trees with the same clusters give the same array.
pub(crate) fn canonical_parents(h: &Hierarchy, out: &mut Vec<i64>) {
    let n = h.n_leaves();
    let lowest = lowest_leaves(h);
    let start = out.len();
    out.resize(start + h.n_nodes(), -1);
    let mut id = vec![0usize; h.n_nodes()];
    let mut next = n;
    let mut stack = vec![(h.root(), false)];
    while let Some((v, done)) = stack.pop() {
        if v < n {
            id[v] = v;
        } else if done {
            id[v] = next;
            next += 1;
            for &c in h.children(v) {
                out[start + id[c]] = id[v] as i64;
            }
        } else {
            stack.push((v, true));
            let mut kids = h.children(v).to_vec();
            kids.sort_by_key(|&c| std::cmp::Reverse(lowest[c]));
            stack.extend(kids.into_iter().map(|c| (c, false)));
        }
    }
}
