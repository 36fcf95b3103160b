//! Sparse flat trellises (the paper's Section 4): the same recursions over a chosen vertex set
//! instead of all `2^N` subsets, and the tree-structured special case (the paper's Appendix J).
//!
//! A cluster that is not a vertex has zero energy (the paper's convention), so a sparse trellis
//! over a vertex set `V` is the distribution restricted to the clusterings *all of whose
//! clusters are vertices*. The recursion `Z(S) = Σ_{C ∈ V, C ⊆ S, min S ∈ C} E(C) Z(S \ C)` needs
//! `S \ C` to be a vertex whenever `C ⊂ S` are both vertices, which is the paper's condition
//! that `V` be *closed under recursive complement* (footnote 1: for `x ⊂ y` in `V` there is `z`
//! in `V` with `x ∪ z = y`, `x ∩ z = ∅`, i.e. `y \ x ∈ V`). Under that condition the recursion
//! from the full set counts exactly the clusterings of the points into vertices: peeling off the
//! cluster of the lowest point leaves a remainder that is again a vertex, by induction.
//! [`SparseFlatTrellis::build`] checks the condition and names an offending pair otherwise.
//!
//! Closure is a strong condition: a closed set holding every singleton and the full set holds
//! every subset (peel one point at a time off the full set). Useful closed sets therefore leave
//! out singletons, e.g. all unions of the blocks of a fixed partition (the clusterings coarser
//! than it), or a few clusters with their complements.
//!
//! A hierarchy gives the tree-structured sparse trellis ([`TreeFlatTrellis`]): its clusterings
//! are the *cuts* of the tree (sets of nodes covering every leaf once), and
//! `Z(v) = E(v) + Z(left) Z(right)`, `MAP(v) = max(log E(v), MAP(left) + MAP(right))` at each
//! node (log space), linear in the number of nodes. A tree's node set is not closed under
//! recursive complement (for nodes `x ⊂ y`, `y \ x` is usually not a node), and since it holds
//! every leaf and the root, its closure ([`closure_under_recursive_complement`]) is every
//! subset: the generic sparse trellis over it is the full trellis, summing over all Bell(N)
//! clusterings rather than the tree's cuts. The two agree exactly when every cluster that is not
//! a tree node gets zero energy (`log E = -inf`), as the tests check; the tree recursion is what
//! makes a hierarchy cheap.

use super::trellis::reduce_terms;
use super::{check_cluster, check_energy, ClusterEnergy, FlatError};
use crate::model::log_add_exp;
use crate::subset::Subset;
use crate::tree::{Node, Tree};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

/// Visits every pair of vertices `x ⊂ y` (both non-empty, `x` a strict subset) whose complement
/// `y \ x` is not in the set, until `f` breaks.
fn scan_violations(
    sorted: &[Subset],
    set: &HashSet<Subset>,
    mut f: impl FnMut(Subset, Subset) -> ControlFlow<()>,
) {
    for &y in sorted {
        if y.len() < 2 {
            continue;
        }
        // Enumerate y's submasks or scan the vertices, whichever is shorter.
        if y.len() < 63 && (1usize << y.len()) <= sorted.len() {
            let mut x = (y.bits() - 1) & y.bits();
            while x != 0 {
                let xs = Subset(x);
                if set.contains(&xs) && !set.contains(&y.minus(xs)) && f(xs, y).is_break() {
                    return;
                }
                x = (x - 1) & y.bits();
            }
        } else {
            for &x in sorted {
                if x.len() >= y.len() {
                    break;
                }
                if !x.is_empty()
                    && x.is_subset_of(y)
                    && !set.contains(&y.minus(x))
                    && f(x, y).is_break()
                {
                    return;
                }
            }
        }
    }
}

fn sorted_unique(vertices: &[Subset]) -> Vec<Subset> {
    let mut v: Vec<Subset> = vertices.to_vec();
    v.sort_by_key(|c| (c.len(), c.bits()));
    v.dedup();
    v
}

/// A pair `(x, y)` of vertices with `x ⊂ y` whose complement `y \ x` is not a vertex, if any
/// (the empty set, if present, never offends).
pub fn first_closure_violation(vertices: &[Subset]) -> Option<(Subset, Subset)> {
    let sorted = sorted_unique(vertices);
    let set: HashSet<Subset> = sorted.iter().copied().collect();
    let mut found = None;
    scan_violations(&sorted, &set, |x, y| {
        found = Some((x, y));
        ControlFlow::Break(())
    });
    found
}

/// True when the set is closed under recursive complement (the paper's footnote 1): for all
/// `x ⊂ y` in the set, `y \ x` is in the set too.
pub fn is_closed_under_recursive_complement(vertices: &[Subset]) -> bool {
    first_closure_violation(vertices).is_none()
}

/// The smallest superset of `vertices` closed under recursive complement (adds `y \ x` for every
/// offending pair until none is left), sorted by size then bitmask. It can be much larger than
/// the input (up to every subset of the union); errors once it exceeds `max_vertices`.
pub fn closure_under_recursive_complement(
    vertices: &[Subset],
    max_vertices: usize,
) -> Result<Vec<Subset>, FlatError> {
    let mut sorted = sorted_unique(vertices);
    let mut set: HashSet<Subset> = sorted.iter().copied().collect();
    loop {
        let mut missing = Vec::new();
        scan_violations(&sorted, &set, |x, y| {
            missing.push(y.minus(x));
            ControlFlow::Continue(())
        });
        if missing.is_empty() {
            return Ok(sorted);
        }
        for m in missing {
            if set.insert(m) {
                sorted.push(m);
            }
        }
        if sorted.len() > max_vertices {
            return Err(FlatError::ClosureTooLarge {
                limit: max_vertices,
            });
        }
        sorted.sort_by_key(|c| (c.len(), c.bits()));
    }
}

/// A flat trellis over a vertex set closed under recursive complement: log Z, the MAP clustering
/// and marginals over the clusterings of all `N` points whose clusters are all vertices
/// (non-vertex clusters have zero energy). With every subset as a vertex it gives the
/// [`super::FlatTrellis`]'s numbers to the bit.
#[derive(Clone, Debug)]
pub struct SparseFlatTrellis {
    n: usize,
    /// Vertices sorted by size, then bitmask (children before parents); the full set is last.
    vertices: Vec<Subset>,
    index: HashMap<Subset, u32>,
    log_energy: Vec<f64>,
    log_z: Vec<f64>,
    map: Vec<f64>,
    /// Vertex index of the MAP cluster holding each vertex's lowest point (`u32::MAX`: none).
    map_cluster: Vec<u32>,
    /// Number of clusterings of each vertex into vertices (f64: exact below 2^53).
    n_clusterings: Vec<f64>,
    n_terms: usize,
}

/// Marks "the remainder is empty" in a term.
const EMPTY_REST: u32 = u32::MAX;

impl SparseFlatTrellis {
    /// Runs the recursions of the full trellis restricted to `vertices` for `model`.
    ///
    /// `vertices` (duplicates ignored) must be non-empty subsets of the model's points, contain
    /// the full set, and be closed under recursive complement; the error names what is wrong
    /// (for a non-closed set, an offending pair `x ⊂ y` and the missing `y \ x`). Singletons are
    /// not added: without them fewer clusterings are expressible. NaN or `+inf` log-energies
    /// are rejected.
    pub fn build<E: ClusterEnergy + ?Sized>(
        model: &E,
        vertices: &[Subset],
    ) -> Result<SparseFlatTrellis, FlatError> {
        let n = model.n_points();
        if n == 0 {
            return Err(FlatError::Empty);
        }
        if n > Subset::MAX_LEAVES {
            return Err(FlatError::BadParameter {
                name: "number of points",
                value: n as f64,
                expected: "clusters are 64-bit masks: at most 64 points",
            });
        }
        for &c in vertices {
            check_cluster(n, c)?;
        }
        let full = Subset::full(n);
        let vertices = sorted_unique(vertices);
        if vertices.last() != Some(&full) {
            return Err(FlatError::MissingFullSet { n });
        }
        if let Some((x, y)) = first_closure_violation(&vertices) {
            return Err(FlatError::NotClosed {
                x: x.to_string(),
                y: y.to_string(),
                missing: y.minus(x).to_string(),
            });
        }
        let log_energy: Vec<f64> = vertices.par_iter().map(|&c| model.log_energy(c)).collect();
        for (&c, &v) in vertices.iter().zip(&log_energy) {
            check_energy(c, v)?;
        }
        let index: HashMap<Subset, u32> = vertices
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, i as u32))
            .collect();
        // Vertices grouped by lowest point, in increasing bitmask order.
        let mut by_low: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, c) in vertices.iter().enumerate() {
            by_low[c.lowest().unwrap()].push(i as u32);
        }
        for g in &mut by_low {
            g.sort_by_key(|&i| vertices[i as usize].bits());
        }
        let k = vertices.len();
        let mut t = SparseFlatTrellis {
            n,
            vertices,
            index,
            log_energy,
            log_z: vec![f64::NEG_INFINITY; k],
            map: vec![f64::NEG_INFINITY; k],
            map_cluster: vec![u32::MAX; k],
            n_clusterings: vec![0.0; k],
            n_terms: 0,
        };
        // Layers of equal size, each in parallel.
        let mut start = 0;
        while start < k {
            let size = t.vertices[start].len();
            let end = start + t.vertices[start..].partition_point(|c| c.len() == size);
            let done = &t;
            let by_low = &by_low;
            let values: Vec<(f64, f64, u32, f64, usize)> = (start..end)
                .into_par_iter()
                .map_init(
                    || (Vec::new(), Vec::new()),
                    |(terms, buf), i| done.solve_vertex(i, by_low, terms, buf),
                )
                .collect();
            for (i, (lz, map, best, count, n_terms)) in (start..end).zip(values) {
                t.log_z[i] = lz;
                t.map[i] = map;
                t.map_cluster[i] = best;
                t.n_clusterings[i] = count;
                t.n_terms += n_terms;
            }
            start = end;
        }
        Ok(t)
    }

    /// The terms of vertex `i` (clusters `C` holding its lowest point, in increasing bitmask
    /// order, as the full trellis orders them) reduced to `(log Z, MAP, best cluster, count,
    /// number of terms)`.
    fn solve_vertex(
        &self,
        i: usize,
        by_low: &[Vec<u32>],
        terms: &mut Vec<(u32, u32)>,
        buf: &mut Vec<f64>,
    ) -> (f64, f64, u32, f64, usize) {
        let s = self.vertices[i];
        let low = s.lowest_bit();
        let rest = s.minus(low).bits();
        let group = &by_low[s.lowest().unwrap()];
        terms.clear();
        let mut push = |c: Subset, ci: u32| {
            let r = s.minus(c);
            let ri = if r.is_empty() {
                EMPTY_REST
            } else {
                *self
                    .index
                    .get(&r)
                    .expect("closure under recursive complement makes S \\ C a vertex")
            };
            terms.push((ci, ri));
        };
        if s.len() < 64 && (1usize << (s.len() - 1)) <= group.len() {
            // Increasing submasks of `rest`.
            let mut sub = 0u64;
            loop {
                let c = Subset(sub | low.bits());
                if let Some(&ci) = self.index.get(&c) {
                    push(c, ci);
                }
                if sub == rest {
                    break;
                }
                sub = sub.wrapping_sub(rest) & rest;
            }
        } else {
            for &ci in group {
                let c = self.vertices[ci as usize];
                if c.is_subset_of(s) {
                    push(c, ci);
                }
            }
        }
        let value = |ri: u32, v: &[f64]| {
            if ri == EMPTY_REST {
                0.0
            } else {
                v[ri as usize]
            }
        };
        let (lz, map, best_k) = reduce_terms(
            terms.iter().map(|&(ci, ri)| {
                (
                    self.log_energy[ci as usize],
                    value(ri, &self.log_z),
                    value(ri, &self.map),
                )
            }),
            buf,
        );
        let count = terms
            .iter()
            .map(|&(_, ri)| {
                if ri == EMPTY_REST {
                    1.0
                } else {
                    self.n_clusterings[ri as usize]
                }
            })
            .sum();
        let best = if best_k == usize::MAX {
            u32::MAX
        } else {
            terms[best_k].0
        };
        (lz, map, best, count, terms.len())
    }

    /// Number of points `N`.
    pub fn n_points(&self) -> usize {
        self.n
    }

    /// Number of vertices.
    pub fn n_vertices(&self) -> usize {
        self.vertices.len()
    }

    /// The vertices, sorted by size then bitmask (the full set last).
    pub fn vertices(&self) -> &[Subset] {
        &self.vertices
    }

    /// Whether `c` is a vertex.
    pub fn contains(&self, c: Subset) -> bool {
        self.index.contains_key(&c)
    }

    /// Number of `(cluster, remainder)` terms the pass summed (its work; `(3^N - 1) / 2` for the
    /// full vertex set).
    pub fn n_terms(&self) -> usize {
        self.n_terms
    }

    /// Number of clusterings the vertex set expresses (those of all points into vertices,
    /// whatever their energy), as f64 (exact below 2^53); Bell(N) for the full vertex set.
    pub fn n_clusterings(&self) -> f64 {
        *self.n_clusterings.last().unwrap()
    }

    /// `log Z` over the clusterings of all points into vertices.
    pub fn log_partition(&self) -> f64 {
        *self.log_z.last().unwrap()
    }

    /// `log Z(S)` over the clusterings of the points of `s` into vertices (`None` if `s` is not
    /// a vertex; `Some(0)` for the empty set).
    pub fn log_partition_of(&self, s: Subset) -> Option<f64> {
        if s.is_empty() {
            return Some(0.0);
        }
        self.index.get(&s).map(|&i| self.log_z[i as usize])
    }

    /// The largest log-energy of a clustering into vertices (`-inf` if none is allowed).
    pub fn map_log_energy(&self) -> f64 {
        *self.map.last().unwrap()
    }

    /// A clustering into vertices with the MAP log-energy, clusters in increasing order of
    /// their lowest point (ties broken as in [`super::FlatTrellis`]); empty when none is allowed.
    pub fn map_clustering(&self) -> Vec<Subset> {
        let mut out = Vec::new();
        if self.map_log_energy() == f64::NEG_INFINITY {
            return out;
        }
        let mut r = Subset::full(self.n);
        while !r.is_empty() {
            let i = self.index[&r] as usize;
            let c = self.vertices[self.map_cluster[i] as usize];
            out.push(c);
            r = r.minus(c);
        }
        out
    }

    /// The marginal probability that `c` is one of the clusters: `E(C) Z(U \ C) / Z(U)` for a
    /// vertex, 0 for any other non-empty subset of the points. Errors for an empty or
    /// out-of-range cluster and when no clustering is allowed.
    pub fn cluster_marginal(&self, c: Subset) -> Result<f64, FlatError> {
        check_cluster(self.n, c)?;
        if self.log_partition() == f64::NEG_INFINITY {
            return Err(FlatError::NoClustering);
        }
        Ok(match self.index.get(&c) {
            Some(&i) => self.log_marginal(i as usize).exp(),
            None => 0.0,
        })
    }

    /// `P(i and j are in the same cluster)` (`N x N`, 1 on the diagonal), summing the marginals
    /// of the vertices holding both (`O(|V| N^2)`). NaN everywhere when no clustering is allowed.
    pub fn pairwise_marginals(&self) -> Vec<Vec<f64>> {
        let n = self.n;
        if self.log_partition() == f64::NEG_INFINITY {
            return vec![vec![f64::NAN; n]; n];
        }
        let mut p = vec![vec![0.0; n]; n];
        for (i, &c) in self.vertices.iter().enumerate() {
            if c.len() < 2 {
                continue;
            }
            let w = self.log_marginal(i).exp();
            for a in c.iter() {
                for b in c.iter() {
                    if a != b {
                        p[a][b] += w;
                    }
                }
            }
        }
        (0..n).for_each(|i| p[i][i] = 1.0);
        p
    }

    fn log_marginal(&self, i: usize) -> f64 {
        let rest = Subset::full(self.n).minus(self.vertices[i]);
        let lz_rest = self.log_partition_of(rest).expect("closed vertex set");
        self.log_energy[i] + lz_rest - self.log_partition()
    }
}

/// The tree-structured flat trellis (the paper's Appendix J): the clusterings are the cuts of a
/// hierarchy, `Z(v) = E(v) + Z(left) Z(right)` and
/// `MAP(v) = max(log E(v), MAP(left) + MAP(right))` at each node (log space), `O(nodes)`.
#[derive(Clone, Debug)]
pub struct TreeFlatTrellis {
    n: usize,
    /// Nodes in post-order (children before parents, the root last).
    nodes: Vec<TreeNode>,
}

#[derive(Clone, Debug)]
struct TreeNode {
    cluster: Subset,
    children: Option<(usize, usize)>,
    log_energy: f64,
    log_z: f64,
    map: f64,
    /// Whether the MAP cut of this node's subtree is the node itself.
    map_is_node: bool,
    n_cuts: f64,
}

impl TreeFlatTrellis {
    /// The tree-structured trellis of `tree` for `model`. The tree's leaves must be exactly the
    /// model's points `0..N`; NaN or `+inf` log-energies are rejected.
    pub fn build<E: ClusterEnergy + ?Sized>(
        model: &E,
        tree: &Tree,
    ) -> Result<TreeFlatTrellis, FlatError> {
        let n = model.n_points();
        if n == 0 {
            return Err(FlatError::Empty);
        }
        if n > Subset::MAX_LEAVES {
            return Err(FlatError::BadParameter {
                name: "number of points",
                value: n as f64,
                expected: "clusters are 64-bit masks: at most 64 points",
            });
        }
        if tree.leaves() != Subset::full(n) || tree.n_leaves() != n {
            return Err(FlatError::TreeLeaves {
                leaves: tree.leaves().to_string(),
                n,
            });
        }
        let clusters = tree.node_clusters();
        let mut nodes: Vec<TreeNode> = Vec::with_capacity(2 * n);
        fn visit(
            t: &Tree,
            v: usize,
            clusters: &[Subset],
            model: &(impl ClusterEnergy + ?Sized),
            out: &mut Vec<TreeNode>,
        ) -> Result<usize, FlatError> {
            let cluster = clusters[v];
            let log_energy = model.log_energy(cluster);
            check_energy(cluster, log_energy)?;
            let node = match t.nodes()[v] {
                Node::Leaf(_) => TreeNode {
                    cluster,
                    children: None,
                    log_energy,
                    log_z: log_energy,
                    map: log_energy,
                    map_is_node: true,
                    n_cuts: 1.0,
                },
                Node::Internal(l, r) => {
                    let l = visit(t, l, clusters, model, out)?;
                    let r = visit(t, r, clusters, model, out)?;
                    let (a, b) = (&out[l], &out[r]);
                    let below = a.map + b.map;
                    TreeNode {
                        cluster,
                        children: Some((l, r)),
                        log_energy,
                        log_z: log_add_exp(log_energy, a.log_z + b.log_z),
                        map: log_energy.max(below),
                        // Ties keep the coarser clustering (the node itself).
                        map_is_node: log_energy >= below,
                        n_cuts: 1.0 + a.n_cuts * b.n_cuts,
                    }
                }
            };
            out.push(node);
            Ok(out.len() - 1)
        }
        visit(tree, tree.root(), &clusters, model, &mut nodes)?;
        Ok(TreeFlatTrellis { n, nodes })
    }

    /// Number of points `N`.
    pub fn n_points(&self) -> usize {
        self.n
    }

    /// The tree's clusters (its vertex set), children before parents, the full set last.
    pub fn clusters(&self) -> Vec<Subset> {
        self.nodes.iter().map(|v| v.cluster).collect()
    }

    /// Number of cuts of the tree (the clusterings it expresses), as f64; `1 + l r` per node.
    pub fn n_cuts(&self) -> f64 {
        self.root().n_cuts
    }

    /// `log Z` over the cuts of the tree.
    pub fn log_partition(&self) -> f64 {
        self.root().log_z
    }

    /// The largest log-energy of a cut (`-inf` if every cut has a forbidden cluster).
    pub fn map_log_energy(&self) -> f64 {
        self.root().map
    }

    /// A cut with the MAP log-energy, clusters in increasing order of their lowest point (ties
    /// between a node and its children's best cuts keep the node); empty when none is allowed.
    pub fn map_clustering(&self) -> Vec<Subset> {
        let mut out = Vec::new();
        if self.map_log_energy() == f64::NEG_INFINITY {
            return out;
        }
        let mut stack = vec![self.nodes.len() - 1];
        while let Some(v) = stack.pop() {
            let node = &self.nodes[v];
            match node.children {
                Some((l, r)) if !node.map_is_node => {
                    stack.push(r);
                    stack.push(l);
                }
                _ => out.push(node.cluster),
            }
        }
        out.sort_by_key(|c| c.lowest());
        out
    }

    /// The marginal probability that `c` is one of the clusters of a cut drawn with probability
    /// proportional to its energy: `E(v)` times the `Z` of the siblings along the path to the
    /// root, over `Z`, for a node `v` with cluster `c`; 0 for other non-empty subsets. Errors for
    /// an empty or out-of-range cluster and when no cut is allowed.
    pub fn cluster_marginal(&self, c: Subset) -> Result<f64, FlatError> {
        check_cluster(self.n, c)?;
        if self.log_partition() == f64::NEG_INFINITY {
            return Err(FlatError::NoClustering);
        }
        // Top down: outside(root) = 0, outside(child) = outside(parent) + log Z(sibling).
        let mut stack = vec![(self.nodes.len() - 1, 0.0f64)];
        while let Some((v, outside)) = stack.pop() {
            let node = &self.nodes[v];
            if node.cluster == c {
                return Ok((node.log_energy + outside - self.log_partition()).exp());
            }
            if let Some((l, r)) = node.children {
                if c.is_subset_of(node.cluster) {
                    stack.push((l, outside + self.nodes[r].log_z));
                    stack.push((r, outside + self.nodes[l].log_z));
                }
            }
        }
        Ok(0.0)
    }

    fn root(&self) -> &TreeNode {
        self.nodes.last().unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(ix: &[usize]) -> Subset {
        Subset::from_indices(ix.iter().copied())
    }

    #[test]
    fn closure_check_on_hand_made_sets() {
        // Every subset of {0,1,2}: closed.
        let all: Vec<Subset> = (1..8).map(Subset).collect();
        assert!(is_closed_under_recursive_complement(&all));
        // A cluster with its complement: closed; adding {2} and {3} needs {0,1,3}, {0,1,2}.
        let mut v = vec![s(&[0, 1, 2, 3]), s(&[0, 1]), s(&[2, 3])];
        assert!(is_closed_under_recursive_complement(&v));
        v.extend([s(&[2]), s(&[3])]);
        assert!(!is_closed_under_recursive_complement(&v));
        v.extend([s(&[0, 1, 3]), s(&[0, 1, 2])]);
        assert!(is_closed_under_recursive_complement(&v));
        // {0} ⊂ {0,1,2} but {1,2} is missing.
        let v = [s(&[0, 1, 2]), s(&[0]), s(&[1])];
        assert_eq!(first_closure_violation(&v), Some((s(&[0]), s(&[0, 1, 2]))));
        // The paper's example of a trellis with no clustering: no nesting, vacuously closed.
        assert!(is_closed_under_recursive_complement(&[
            s(&[0, 1]),
            s(&[1, 2]),
            s(&[0, 2])
        ]));
        let closed = closure_under_recursive_complement(&v, 100).unwrap();
        assert!(is_closed_under_recursive_complement(&closed));
        assert!(closed.contains(&s(&[1, 2])) && closed.contains(&s(&[2])));
        assert!(closure_under_recursive_complement(&v, 4).is_err());
    }
}
