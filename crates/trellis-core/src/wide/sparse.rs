//! The MAP of a sparse trellis at any `N` ([`crate::exact::SparseTrellis`] for N ≤ 64): its
//! vertices are the clusters of the seed trees (every leaf and the root among them), a vertex
//! `S` splits into `(A, S \ A)` whenever both parts are vertices, and the MAP is the best tree
//! all of whose clusters are vertices, so never below the best seed.
//!
//! Vertices are `Vec<u64>` bitsets, ordered as the mask version orders them (by size, then by
//! leaf set read as a binary number), and the splits of `S` are found among the vertices that
//! share `S`'s lowest leaf, the complement looked up by the XOR hash of leaf keys and confirmed
//! on the bitsets. A split costs O(1) once each vertex's internal sums are known (from one
//! seed's split of it, O(|A| |B|)). Ties go to the first split in that order, as the mask
//! version. Time: the pairs of vertices sharing a lowest leaf, each O(N / 64); memory O(V N / 64)
//! for V vertices (at most `seeds · (2N − 1)`).

use super::{check_bytes, check_cancel, energy, with_capacity, PairModel, Stat, WideError};
use crate::hierarchy::Hierarchy;
use std::collections::HashMap;

/// The MAP of a sparse trellis, with its size.
#[derive(Clone, Debug)]
pub struct SparseFound {
    /// A best encoded tree.
    pub tree: Hierarchy,
    /// Its `log psi` ([`energy::log_psi`]; never below any seed's).
    pub log_psi: f64,
    /// Vertices (distinct clusters of the seeds, leaves and root included).
    pub vertices: usize,
    /// Splits `(A, S \ A)` over all vertices (the work of the pass).
    pub splits: usize,
}

/// Vertices as bitsets with their sizes, lowest leaves, hashes and one known split.
struct Vertices {
    words: usize,
    bits: Vec<u64>,
    size: Vec<usize>,
    hash: Vec<u64>,
    /// One split `(a, b)` of each non-singleton vertex, from a seed.
    split: Vec<(u32, u32)>,
    index: HashMap<u64, Vec<u32>>,
}

impl Vertices {
    fn bits_of(&self, v: u32) -> &[u64] {
        &self.bits[v as usize * self.words..(v as usize + 1) * self.words]
    }

    fn find(&self, bits: &[u64], h: u64) -> Option<u32> {
        self.index
            .get(&h)?
            .iter()
            .copied()
            .find(|&v| self.bits_of(v) == bits)
    }

    fn push(&mut self, bits: &[u64], size: usize, h: u64, split: (u32, u32)) -> u32 {
        let v = self.size.len() as u32;
        self.bits.extend_from_slice(bits);
        self.size.push(size);
        self.hash.push(h);
        self.split.push(split);
        self.index.entry(h).or_default().push(v);
        v
    }

    fn lowest(&self, v: u32) -> usize {
        let b = self.bits_of(v);
        let w = b
            .iter()
            .position(|&x| x != 0)
            .expect("vertices are not empty");
        w * 64 + b[w].trailing_zeros() as usize
    }

    fn leaves(&self, v: u32) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.size[v as usize]);
        for (w, &x) in self.bits_of(v).iter().enumerate() {
            let mut r = x;
            while r != 0 {
                out.push(w * 64 + r.trailing_zeros() as usize);
                r &= r - 1;
            }
        }
        out
    }

    /// The same vertices renumbered by `order` (new id `k` is old `order[k]`).
    fn reordered(&self, order: &[u32]) -> Vertices {
        let mut new_id = vec![0u32; order.len()];
        for (k, &v) in order.iter().enumerate() {
            new_id[v as usize] = k as u32;
        }
        let mut out = Vertices {
            words: self.words,
            bits: Vec::with_capacity(self.bits.len()),
            size: Vec::with_capacity(order.len()),
            hash: Vec::with_capacity(order.len()),
            split: Vec::with_capacity(order.len()),
            index: HashMap::with_capacity(order.len()),
        };
        for &v in order {
            let (a, b) = self.split[v as usize];
            let split = if a == u32::MAX {
                (a, b)
            } else {
                (new_id[a as usize], new_id[b as usize])
            };
            out.push(
                self.bits_of(v),
                self.size[v as usize],
                self.hash[v as usize],
                split,
            );
        }
        out
    }
}

/// The vertices of the seeds' clusters (leaves first), unordered.
fn collect(n: usize, seeds: &[Hierarchy]) -> Result<Vertices, WideError> {
    let words = n.div_ceil(64);
    let most = seeds.len().saturating_mul(2 * n - 1).max(n);
    check_bytes(
        "the sparse trellis's vertices",
        most as f64 * (words * 8 + 48) as f64,
    )?;
    let keys = super::leaf_keys(n);
    let mut vs = Vertices {
        words,
        bits: with_capacity("the sparse trellis's vertices", n * words)?,
        size: Vec::new(),
        hash: Vec::new(),
        split: Vec::new(),
        index: HashMap::new(),
    };
    let mut one = vec![0u64; words];
    for (i, &key) in keys.iter().enumerate() {
        one.iter_mut().for_each(|w| *w = 0);
        one[i / 64] = 1 << (i % 64);
        vs.push(&one, 1, key, (u32::MAX, u32::MAX));
    }
    let cancel = crate::cancel::Cancel::new();
    let mut union = vec![0u64; words];
    for h in seeds {
        check_cancel(&cancel)?;
        energy::check_tree(n, h)?;
        let mut vertex: Vec<u32> = (0..h.n_nodes() as u32).collect();
        for &v in h.postorder() {
            if v < n {
                continue;
            }
            let [a, b] = *h.children(v) else {
                unreachable!("checked binary")
            };
            let (a, b) = (vertex[a], vertex[b]);
            for (w, (x, y)) in union
                .iter_mut()
                .zip(vs.bits_of(a).iter().zip(vs.bits_of(b)))
            {
                *w = x | y;
            }
            let hash = vs.hash[a as usize] ^ vs.hash[b as usize];
            vertex[v] = match vs.find(&union, hash) {
                Some(u) => u,
                None => {
                    let size = vs.size[a as usize] + vs.size[b as usize];
                    vs.push(&union, size, hash, (a, b))
                }
            };
        }
    }
    Ok(vs)
}

/// The MAP over the trees encoded by the sparse trellis of `seeds` (binary trees over the
/// model's leaves), with a best tree. The value is the tree's own `log psi`; should rounding
/// put a seed above the trellis's tree, that seed is returned (so the MAP is never below the
/// best seed). Errors for no seeds, a seed that is not a binary tree over the model's leaves,
/// memory that does not fit, and when cancelled.
pub fn sparse_map<M: PairModel>(model: &M, seeds: &[Hierarchy]) -> Result<SparseFound, WideError> {
    let n = model.n_leaves();
    if n == 0 {
        return Err(WideError::Empty);
    }
    if seeds.is_empty() {
        return Err(WideError::Tree(
            "a sparse trellis needs at least one seed tree".into(),
        ));
    }
    let cancel = crate::cancel::Cancel::new();
    let raw = collect(n, seeds)?;
    // Children before parents, then as the mask version: by leaf set read as a number.
    let mut order: Vec<u32> = (0..raw.size.len() as u32).collect();
    order.sort_by(|&x, &y| {
        raw.size[x as usize]
            .cmp(&raw.size[y as usize])
            .then_with(|| raw.bits_of(x).iter().rev().cmp(raw.bits_of(y).iter().rev()))
    });
    let vs = raw.reordered(&order);
    drop(raw);
    let k = vs.size.len();
    let mut stat: Vec<Stat<M::Sums>> = vec![model.leaf(); k];
    let mut pairs = 0usize;
    for v in 0..k {
        let (a, b) = vs.split[v];
        if a != u32::MAX {
            // Checked by pairs of leaves summed: a vertex's cross sum is up to N² / 4 of them.
            pairs += vs.size[a as usize] * vs.size[b as usize];
            if pairs > 1 << 20 {
                pairs = 0;
                check_cancel(&cancel)?;
            }
            let cross = model.cross_of(&vs.leaves(a), &vs.leaves(b));
            stat[v] = stat[a as usize].join(&stat[b as usize], cross);
        }
    }
    let mut by_low: Vec<Vec<u32>> = vec![Vec::new(); n];
    for v in 0..k as u32 {
        by_low[vs.lowest(v)].push(v);
    }
    let mut map = vec![f64::NEG_INFINITY; k];
    let mut best: Vec<(u32, u32)> = vec![(u32::MAX, u32::MAX); k];
    let (mut splits, mut work) = (0usize, 0usize);
    for s in 0..k as u32 {
        let su = s as usize;
        if vs.size[su] == 1 {
            map[su] = 0.0;
            continue;
        }
        let sb = vs.bits_of(s);
        for &a in &by_low[vs.lowest(s)] {
            if vs.size[a as usize] >= vs.size[su] {
                break;
            }
            work += 1;
            if work.is_multiple_of(4096) {
                check_cancel(&cancel)?;
            }
            let Some(b) = vs.index.get(&(vs.hash[su] ^ vs.hash[a as usize])) else {
                continue;
            };
            let ab = vs.bits_of(a);
            let Some(&b) = b.iter().find(|&&b| {
                vs.size[a as usize] + vs.size[b as usize] == vs.size[su]
                    && vs
                        .bits_of(b)
                        .iter()
                        .zip(ab)
                        .zip(sb)
                        .all(|((&y, &x), &z)| x & y == 0 && x | y == z)
            }) else {
                continue;
            };
            splits += 1;
            let (sa, sbt) = (&stat[a as usize], &stat[b as usize]);
            let cross = stat[su].inside - sa.inside - sbt.inside;
            let v = model.log_psi(sa, sbt, cross) + map[a as usize] + map[b as usize];
            if v > map[su] {
                map[su] = v;
                best[su] = (a, b);
            }
        }
    }
    let tree = map_tree(n, &vs, &best)?;
    let mut log_psi = energy::log_psi(model, &tree)?;
    let mut tree = tree;
    for seed in seeds {
        let v = energy::log_psi(model, seed)?;
        if v > log_psi {
            (tree, log_psi) = (seed.clone(), v);
        }
    }
    Ok(SparseFound {
        tree,
        log_psi,
        vertices: k,
        splits,
    })
}

/// The tree of the best splits from the root (the last vertex) down.
fn map_tree(n: usize, vs: &Vertices, best: &[(u32, u32)]) -> Result<Hierarchy, WideError> {
    let root = (vs.size.len() - 1) as u32;
    let mut parent: Vec<Option<usize>> = vec![None; n];
    // (vertex, its node id)
    let node_of = |v: u32, parent: &mut Vec<Option<usize>>| -> usize {
        if vs.size[v as usize] == 1 {
            vs.lowest(v)
        } else {
            parent.push(None);
            parent.len() - 1
        }
    };
    let top = node_of(root, &mut parent);
    let mut stack = vec![(root, top)];
    while let Some((v, id)) = stack.pop() {
        if vs.size[v as usize] == 1 {
            continue;
        }
        let (a, b) = best[v as usize];
        if a == u32::MAX {
            return Err(WideError::Tree(
                "a vertex of the sparse trellis has no split (a bug)".into(),
            ));
        }
        for c in [a, b] {
            let cid = node_of(c, &mut parent);
            parent[cid] = Some(id);
            stack.push((c, cid));
        }
    }
    Hierarchy::from_topology(n, parent).map_err(|e| WideError::Tree(e.to_string()))
}
