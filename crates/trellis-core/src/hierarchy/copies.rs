//! Identical points: a method that cannot take them runs on the distinct points, and its
//! hierarchy is then extended to every point, each copy joined to its first occurrence.

use super::{Hierarchy, HierarchyError};
use std::collections::HashMap;

/// The distinct rows of `x` and the copies: `(kept, copies)` with `kept` the first occurrence
/// of every distinct row in order, and `copies` every later row as `(row, its first row)`.
/// Rows are compared by value (+0.0 and -0.0 alike; a NaN row is never a copy).
pub fn distinct_rows(x: &[Vec<f64>]) -> (Vec<usize>, Vec<(usize, usize)>) {
    let mut first: HashMap<Vec<u64>, usize> = HashMap::new();
    let (mut kept, mut copies) = (Vec::new(), Vec::new());
    for (r, row) in x.iter().enumerate() {
        if row.iter().any(|v| v.is_nan()) {
            kept.push(r);
            continue;
        }
        let key: Vec<u64> = row.iter().map(|v| (v + 0.0).to_bits()).collect();
        match first.get(&key) {
            Some(&f) => copies.push((r, f)),
            None => {
                first.insert(key, r);
                kept.push(r);
            }
        }
    }
    (kept, copies)
}

impl Hierarchy {
    /// This hierarchy, over the points `kept` (leaf `i` is point `kept[i]` of `n`), extended
    /// to all `n` points: every `(copy, first)` of `copies` joins the leaf of `first` in a new
    /// binary node at the leaf's height (0), so copies merge before anything else and a binary
    /// hierarchy stays binary. Errors unless `kept` and the copies together name every point
    /// once and each `first` is kept.
    pub fn with_copies(
        &self,
        n: usize,
        kept: &[usize],
        copies: &[(usize, usize)],
    ) -> Result<Hierarchy, HierarchyError> {
        let m = self.n_leaves();
        let bad = |why: String| HierarchyError::Copies(why);
        if kept.len() != m || kept.len() + copies.len() != n {
            return Err(bad(format!(
                "{} kept points and {} copies for a hierarchy of {m} leaves over {n} points",
                kept.len(),
                copies.len()
            )));
        }
        let mut seen = vec![false; n];
        for &p in kept.iter().chain(copies.iter().map(|(c, _)| c)) {
            if p >= n || std::mem::replace(&mut seen[p], true) {
                return Err(bad(format!("point {p} is out of range or named twice")));
            }
        }
        let internal = self.n_nodes() - m;
        let total = n + internal + copies.len();
        let mut parent: Vec<Option<usize>> = vec![None; total];
        let mut height = vec![0.0; total];
        // Old node -> new node: leaves to their points, internal nodes after the n leaves.
        let map = |v: usize| if v < m { kept[v] } else { n + (v - m) };
        for v in 0..self.n_nodes() {
            parent[map(v)] = self.parent(v).map(map);
            height[map(v)] = self.height(v);
        }
        // The node that stands for each point's group of copies so far.
        let mut top: Vec<usize> = (0..n).collect();
        for (next, &(c, f)) in (n + internal..).zip(copies) {
            if !kept.contains(&f) {
                return Err(bad(format!("copy {c}'s first point {f} is not kept")));
            }
            let t = top[f];
            parent[next] = parent[t];
            height[next] = height[t];
            parent[t] = Some(next);
            parent[c] = Some(next);
            top[f] = next;
        }
        Hierarchy::from_parents(n, parent, height)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_join_their_first_point_first() {
        let x = vec![
            vec![1.0, 2.0],
            vec![0.0, 5.0],
            vec![1.0, 2.0],
            vec![-0.0, 5.0],
            vec![1.0, 2.0],
            vec![3.0, 3.0],
        ];
        let (kept, copies) = distinct_rows(&x);
        assert_eq!(kept, [0, 1, 5]);
        assert_eq!(copies, [(2, 0), (3, 1), (4, 0)]);
        // ((0, 1), 2) over the kept points 0, 1, 5.
        let h = Hierarchy::from_parents(
            3,
            vec![Some(3), Some(3), Some(4), Some(4), None],
            vec![0.0, 0.0, 0.0, 1.0, 2.0],
        )
        .unwrap();
        let all = h.with_copies(6, &kept, &copies).unwrap();
        assert_eq!(all.n_leaves(), 6);
        assert!(all.is_binary());
        let mut clusters = all.clusters();
        clusters.iter_mut().for_each(|c| c.sort_unstable());
        for want in [
            vec![0, 2],
            vec![0, 2, 4],
            vec![1, 3],
            vec![0, 1, 2, 3, 4],
            vec![0, 1, 2, 3, 4, 5],
        ] {
            assert!(clusters.contains(&want), "{want:?} in {clusters:?}");
        }
        assert!(h.with_copies(6, &kept, &copies[..2]).is_err());
        assert!(h.with_copies(6, &kept, &[(2, 0), (2, 1), (4, 0)]).is_err());
    }
}
