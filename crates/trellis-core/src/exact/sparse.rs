//! The sparse cluster trellis (Cluster Trellis paper, Section 3): the same dynamic programmes as
//! [`super::FullTrellis`], over a chosen set of clusters instead of all `2^N - 1`.
//!
//! A tree is *encoded* by a sparse trellis when every one of its clusters is a vertex. A vertex
//! `S` may split into `(A, S \ A)` when both parts are vertices; log Z, the MAP tree, the number
//! of encoded trees and posterior samples are then exact over the encoded trees, so the MAP of a
//! sparse trellis is the best tree among those it encodes, and a sparse trellis holding every
//! cluster gives the full trellis's numbers. Leaves and the root are always vertices.
//!
//! Builders ([`SparseTrellis::from_trees`]) take seed trees (from a simulator or from beam
//! search) and keep their clusters. Clusters are sets of leaf *indices*: a trellis built from
//! trees over `0..N` can be run on any instance with `N` leaves whose indices follow the same
//! convention (for Ginkgo jets: leaves in the generator's depth-first order), which is how the
//! paper builds one sparse trellis and runs it on new jets.

use super::ExactError;
use crate::model::{log_add_exp, SplitModel};
use crate::subset::Subset;
use crate::tree::Tree;
use std::collections::HashMap;

/// Largest `N` of [`SparseTrellis::full`].
pub const MAX_FULL_SPARSE_LEAVES: usize = 20;

/// A sparse trellis: a vertex set with, for each vertex, its splits into two vertices.
#[derive(Clone, Debug)]
pub struct SparseTrellis {
    n: usize,
    /// Vertices sorted by size then bitmask (children before parents).
    vertices: Vec<Subset>,
    index: HashMap<Subset, u32>,
    /// For each vertex, its splits as vertex indices `(a, b)` with `a` holding the lower leaf.
    splits: Vec<Vec<(u32, u32)>>,
}

/// The results of running a model on a [`SparseTrellis`].
#[derive(Clone, Debug)]
pub struct SparseResult {
    log_z: Vec<f64>,
    map: Vec<f64>,
    map_split: Vec<u32>,
    /// Number of encoded trees with finite likelihood per vertex (f64: exact below 2^53).
    n_finite: Vec<f64>,
}

impl SparseTrellis {
    /// A sparse trellis over `n` leaves with the given clusters (plus every leaf and the root).
    pub fn new(n: usize, clusters: impl IntoIterator<Item = Subset>) -> Result<Self, ExactError> {
        if n == 0 {
            return Err(ExactError::Empty);
        }
        if n > Subset::MAX_LEAVES {
            return Err(ExactError::TooLarge {
                what: "a sparse trellis",
                n,
                limit: Subset::MAX_LEAVES,
            });
        }
        let full = Subset::full(n);
        let mut set: Vec<Subset> = clusters.into_iter().collect();
        for c in &set {
            if c.is_empty() || !c.is_subset_of(full) {
                return Err(ExactError::BadCluster {
                    cluster: c.to_string(),
                    n,
                });
            }
        }
        set.extend((0..n).map(Subset::singleton));
        set.push(full);
        set.sort_by_key(|c| (c.len(), c.bits()));
        set.dedup();
        let index: HashMap<Subset, u32> = set
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, i as u32))
            .collect();
        // Splits: for each vertex S, every vertex A ⊂ S holding S's lowest leaf whose complement
        // in S is a vertex too. Vertices are grouped by lowest leaf to cut the scan.
        let mut by_low: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, c) in set.iter().enumerate() {
            by_low[c.lowest().unwrap()].push(i as u32);
        }
        let splits = set
            .iter()
            .map(|&s| {
                if s.is_singleton() {
                    return Vec::new();
                }
                let low = s.lowest().unwrap();
                by_low[low]
                    .iter()
                    .filter_map(|&ai| {
                        let a = set[ai as usize];
                        if a.len() < s.len() && a.is_subset_of(s) {
                            index.get(&s.minus(a)).map(|&bi| (ai, bi))
                        } else {
                            None
                        }
                    })
                    .collect()
            })
            .collect();
        Ok(SparseTrellis {
            n,
            vertices: set,
            index,
            splits,
        })
    }

    /// The sparse trellis of the clusters of `trees` (each over all `n` leaves).
    pub fn from_trees<'t>(
        n: usize,
        trees: impl IntoIterator<Item = &'t Tree>,
    ) -> Result<Self, ExactError> {
        if n == 0 {
            return Err(ExactError::Empty);
        }
        if n > Subset::MAX_LEAVES {
            return Err(ExactError::TooLarge {
                what: "a sparse trellis",
                n,
                limit: Subset::MAX_LEAVES,
            });
        }
        let mut clusters = Vec::new();
        for t in trees {
            if t.leaves() != Subset::full(n) {
                return Err(ExactError::BadCluster {
                    cluster: t.leaves().to_string(),
                    n,
                });
            }
            clusters.extend(t.clusters());
        }
        Self::new(n, clusters)
    }

    /// The full trellis as a sparse one (every cluster a vertex; for tests and small N:
    /// errors for `N >` [`MAX_FULL_SPARSE_LEAVES`]).
    pub fn full(n: usize) -> Result<Self, ExactError> {
        if n > MAX_FULL_SPARSE_LEAVES {
            return Err(ExactError::TooLarge {
                what: "a sparse trellis holding every cluster",
                n,
                limit: MAX_FULL_SPARSE_LEAVES,
            });
        }
        Self::new(n, (1..1u64 << n).map(Subset))
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.n
    }

    /// Number of vertices (clusters).
    pub fn n_vertices(&self) -> usize {
        self.vertices.len()
    }

    /// Total number of splits over all vertices (the work of one pass).
    pub fn n_splits(&self) -> usize {
        self.splits.iter().map(|s| s.len()).sum()
    }

    /// The vertices, children before parents.
    pub fn vertices(&self) -> &[Subset] {
        &self.vertices
    }

    /// Whether `c` is a vertex.
    pub fn contains(&self, c: Subset) -> bool {
        self.index.contains_key(&c)
    }

    /// Number of trees the trellis encodes (whatever their likelihood), as f64.
    pub fn n_encoded(&self) -> f64 {
        let mut count = vec![0.0f64; self.vertices.len()];
        for (i, s) in self.vertices.iter().enumerate() {
            count[i] = if s.is_singleton() {
                1.0
            } else {
                self.splits[i]
                    .iter()
                    .map(|&(a, b)| count[a as usize] * count[b as usize])
                    .sum()
            };
        }
        *count.last().unwrap()
    }

    /// Encoded trees over all `(2N-3)!!` binary trees: the paper's sparsity index.
    pub fn sparsity_index(&self) -> f64 {
        let total: f64 = (2..self.n).map(|k| (2 * k - 1) as f64).product();
        self.n_encoded() / total
    }

    /// Runs the inside pass for `model` (log Z, MAP, finite-tree counts per vertex); errors
    /// when the model has a different number of leaves.
    pub fn run<M: SplitModel>(&self, model: &M) -> Result<SparseResult, ExactError> {
        if model.n_leaves() != self.n {
            return Err(ExactError::ModelMismatch {
                trellis: self.n,
                model: model.n_leaves(),
            });
        }
        let stats: Vec<M::Stat> = self.vertices.iter().map(|&c| model.stat(c)).collect();
        let k = self.vertices.len();
        let mut r = SparseResult {
            log_z: vec![f64::NEG_INFINITY; k],
            map: vec![f64::NEG_INFINITY; k],
            map_split: vec![u32::MAX; k],
            n_finite: vec![0.0; k],
        };
        let cancel = crate::cancel::Cancel::new();
        for (i, s) in self.vertices.iter().enumerate() {
            if i % 1024 == 0 && cancel.is_cancelled() {
                return Err(ExactError::Cancelled);
            }
            if s.is_singleton() {
                r.log_z[i] = 0.0;
                r.map[i] = 0.0;
                r.n_finite[i] = 1.0;
                continue;
            }
            for (j, &(a, b)) in self.splits[i].iter().enumerate() {
                let (a, b) = (a as usize, b as usize);
                if r.n_finite[a] == 0.0 || r.n_finite[b] == 0.0 {
                    continue;
                }
                let lp = model.log_psi_with(
                    self.vertices[a],
                    &stats[a],
                    self.vertices[b],
                    &stats[b],
                    &stats[i],
                );
                if lp == f64::NEG_INFINITY {
                    continue;
                }
                r.log_z[i] = log_add_exp(r.log_z[i], lp + r.log_z[a] + r.log_z[b]);
                let v = lp + r.map[a] + r.map[b];
                if v > r.map[i] {
                    r.map[i] = v;
                    r.map_split[i] = j as u32;
                }
                r.n_finite[i] += r.n_finite[a] * r.n_finite[b];
            }
        }
        Ok(r)
    }

    /// `Ok` when `r` is a run of this trellis (as many vertices).
    fn check_result(&self, r: &SparseResult) -> Result<(), ExactError> {
        if r.log_z.len() != self.vertices.len() {
            return Err(ExactError::ForeignResult {
                got: r.log_z.len(),
                want: self.vertices.len(),
            });
        }
        Ok(())
    }

    /// The best encoded tree of a run (`None` if no encoded tree has finite likelihood); errors
    /// when `r` is not a run of this trellis.
    pub fn map_tree(&self, r: &SparseResult) -> Result<Option<Tree>, ExactError> {
        self.check_result(r)?;
        if r.n_trees_finite() == 0.0 {
            return Ok(None);
        }
        let full = Subset::full(self.n);
        let tree = Tree::from_splits(full, |s| {
            // A result of another trellis with as many vertices can point anywhere: an empty
            // split makes `from_splits` refuse it.
            self.index
                .get(&s)
                .and_then(|&i| self.splits[i as usize].get(r.map_split[i as usize] as usize))
                .map_or((Subset::EMPTY, Subset::EMPTY), |&(a, b)| {
                    (self.vertices[a as usize], self.vertices[b as usize])
                })
        });
        let foreign = ExactError::ForeignResult {
            got: r.log_z.len(),
            want: self.vertices.len(),
        };
        tree.map(Some).map_err(|_| foreign)
    }
}

impl SparseTrellis {
    /// Draws one tree from the posterior restricted to the encoded trees,
    /// `P(H) = phi(H) / Z_sparse`: top down, vertex `S` splits into `(A, B)` with probability
    /// `psi(A,B) Z(A) Z(B) / Z(S)`.
    ///
    /// Errors when no encoded tree has finite likelihood, when `r` is not a run of this trellis,
    /// and when `model` is not the model of that run (a vertex with no split of positive weight).
    pub fn sample<M: SplitModel, R: rand::Rng + ?Sized>(
        &self,
        model: &M,
        r: &SparseResult,
        rng: &mut R,
    ) -> Result<Tree, ExactError> {
        use rand::RngExt;
        self.check_result(r)?;
        if model.n_leaves() != self.n {
            return Err(ExactError::ModelMismatch {
                trellis: self.n,
                model: model.n_leaves(),
            });
        }
        if r.n_trees_finite() <= 0.0 {
            return Err(ExactError::NoFiniteTree);
        }
        let full = Subset::full(self.n);
        let mut stuck = None;
        let tree = Tree::from_splits(full, |s| {
            let Some(&i) = self.index.get(&s) else {
                stuck.get_or_insert(s);
                return (Subset::EMPTY, Subset::EMPTY);
            };
            let i = i as usize;
            let u: f64 = rng.random();
            let mut acc = 0.0;
            let mut last = None;
            for &(a, b) in &self.splits[i] {
                let (a, b) = (a as usize, b as usize);
                if r.n_finite[a] == 0.0 || r.n_finite[b] == 0.0 {
                    continue;
                }
                let lp = model.log_psi(self.vertices[a], self.vertices[b]);
                let w = (lp + r.log_z[a] + r.log_z[b] - r.log_z[i]).exp();
                if w > 0.0 {
                    acc += w;
                    last = Some((a, b));
                    if u < acc {
                        break;
                    }
                }
            }
            match last {
                Some((a, b)) => (self.vertices[a], self.vertices[b]),
                None => {
                    // Only when the model is not the run's: no split has positive weight.
                    stuck.get_or_insert(s);
                    (Subset::EMPTY, Subset::EMPTY)
                }
            }
        });
        match (tree, stuck) {
            (Ok(t), None) => Ok(t),
            (_, Some(s)) => Err(ExactError::NotFromModel {
                cluster: s.to_string(),
            }),
            (Err(_), None) => Err(ExactError::ForeignResult {
                got: r.log_z.len(),
                want: self.vertices.len(),
            }),
        }
    }

    /// Draws `k` trees as [`SparseTrellis::sample`] does, one after the other from `rng`.
    /// Refuses, before drawing, `k` trees that would not fit in memory
    /// ([`super::sample::check_sample_count`]); stops when cancelled ([`crate::cancel`],
    /// checked every 1024 draws).
    pub fn sample_many<M: SplitModel, R: rand::Rng + ?Sized>(
        &self,
        model: &M,
        r: &SparseResult,
        k: usize,
        rng: &mut R,
    ) -> Result<Vec<Tree>, ExactError> {
        let cancel = crate::cancel::Cancel::new();
        super::sample::check_sample_count(k, self.n)?;
        let mut out = Vec::with_capacity(k);
        for i in 0..k {
            if i % 1024 == 0 && cancel.is_cancelled() {
                return Err(ExactError::Cancelled);
            }
            out.push(self.sample(model, r, rng)?);
        }
        Ok(out)
    }
}

impl SparseResult {
    /// log Z over the encoded trees.
    pub fn log_partition(&self) -> f64 {
        *self.log_z.last().unwrap()
    }

    /// The MAP value over the encoded trees.
    pub fn map_log_likelihood(&self) -> f64 {
        *self.map.last().unwrap()
    }

    /// Number of encoded trees with finite likelihood (f64: exact below 2^53).
    pub fn n_trees_finite(&self) -> f64 {
        *self.n_finite.last().unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ginkgo::{generate_dataset, GinkgoParams};
    use crate::exact::FullTrellis;

    #[test]
    fn all_clusters_reproduce_the_full_trellis() {
        let ds = generate_dataset(&GinkgoParams::qcd(), 6, 4, 9, 5, 10_000, "s").unwrap();
        for jet in &ds.jets {
            let m = jet.model().unwrap();
            let full = FullTrellis::build(&m).unwrap();
            let sp = SparseTrellis::full(jet.n_leaves).unwrap();
            let r = sp.run(&m).unwrap();
            assert!((r.log_partition() - full.log_partition()).abs() < 1e-9);
            assert_eq!(r.map_log_likelihood(), full.map_log_likelihood());
            assert_eq!(r.n_trees_finite(), full.n_trees_finite() as f64);
            assert_eq!(sp.map_tree(&r).unwrap().unwrap(), full.map_tree());
            assert!((sp.sparsity_index() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn one_seed_tree_gives_that_tree() {
        let ds = generate_dataset(&GinkgoParams::qcd(), 5, 5, 12, 9, 10_000, "s").unwrap();
        for jet in &ds.jets {
            let m = jet.model().unwrap();
            let t = jet.truth().unwrap();
            let sp = SparseTrellis::from_trees(jet.n_leaves, [&t]).unwrap();
            assert_eq!(sp.n_encoded(), 1.0);
            let r = sp.run(&m).unwrap();
            let ll = t.log_likelihood(&m);
            assert!((r.map_log_likelihood() - ll).abs() < 1e-9);
            assert!((r.log_partition() - ll).abs() < 1e-9);
            assert_eq!(sp.map_tree(&r).unwrap().unwrap(), t);
        }
    }

    #[test]
    fn encoded_count_matches_enumeration() {
        let ds = generate_dataset(&GinkgoParams::qcd(), 4, 7, 7, 2, 10_000, "s").unwrap();
        let trees: Vec<Tree> = ds.jets.iter().map(|j| j.truth().unwrap()).collect();
        let sp = SparseTrellis::from_trees(7, &trees).unwrap();
        let admitted = Tree::enumerate_all(Subset::full(7))
            .unwrap()
            .into_iter()
            .filter(|t| t.clusters().iter().all(|c| sp.contains(*c)))
            .count();
        assert_eq!(sp.n_encoded(), admitted as f64);
        assert!(admitted >= 1);
    }

    #[test]
    fn sampling_stays_on_encoded_trees_and_matches_probabilities() {
        use rand::SeedableRng;
        let ds = generate_dataset(&GinkgoParams::qcd(), 30, 6, 6, 12, 10_000, "s").unwrap();
        let trees: Vec<Tree> = ds.jets[1..].iter().map(|j| j.truth().unwrap()).collect();
        let sp = SparseTrellis::from_trees(6, &trees).unwrap();
        let m = ds.jets[0].model().unwrap();
        let r = sp.run(&m).unwrap();
        assert!(r.n_trees_finite() >= 2.0);
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let mut counts: HashMap<Vec<Subset>, usize> = HashMap::new();
        let draws = 20_000;
        for _ in 0..draws {
            let t = sp.sample(&m, &r, &mut rng).unwrap();
            assert!(t.clusters().iter().all(|c| sp.contains(*c)));
            *counts.entry(t.clusters()).or_default() += 1;
        }
        // Each sampled tree's frequency is close to phi(H) / Z_sparse (3.5 binomial sd).
        for (cl, &c) in &counts {
            let t = Tree::from_splits(Subset::full(6), |s| {
                let a = cl
                    .iter()
                    .copied()
                    .filter(|x| x.is_subset_of(s) && *x != s && x.contains(s.lowest().unwrap()))
                    .max_by_key(|x| x.len())
                    .unwrap();
                (a, s.minus(a))
            })
            .unwrap();
            let p = (t.log_likelihood(&m) - r.log_partition()).exp();
            let sd = (p * (1.0 - p) / draws as f64).sqrt();
            assert!(
                (c as f64 / draws as f64 - p).abs() < 3.5 * sd + 1e-3,
                "{p} vs {c}"
            );
        }
    }

    #[test]
    fn bad_clusters_are_errors() {
        assert!(SparseTrellis::new(4, [Subset::from_indices([1, 5])]).is_err());
        assert!(SparseTrellis::new(4, [Subset::EMPTY]).is_err());
    }
}
