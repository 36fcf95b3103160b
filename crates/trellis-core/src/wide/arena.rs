//! The live clusters of beam search ([`super::beam`]), one slot each: size and internal sums,
//! leaf set (a `Vec<u64>` bitset: exact identity, so every state holding the same leaves holds
//! the same slot) and its row of cross sums with every *leaf*, `R_x[l] = Σ_{i ∈ x} w(i, l)`.
//!
//! A new cluster's row is the sum of its parts' rows (O(N), contiguous); the cross sum of `x`
//! with a cluster `y` is `Σ_{l ∈ y} R_x[l]`, so all the cross sums of one cluster with the
//! others of a state cost O(N) together ([`Grouped`]). Memory: N sums per live cluster, not one
//! per pair of them. Slots no state holds any more are reused; the arena doubles (checked) when
//! they run out.

use super::model::Sums;
use super::{filled, PairModel, Stat, WideError};
use std::collections::HashMap;

pub(super) struct Arena<S> {
    n: usize,
    pub(super) words: usize,
    /// Slots available.
    cap: usize,
    rows: Vec<S>,
    pub(super) stat: Vec<Stat<S>>,
    bits: Vec<u64>,
    pub(super) hash: Vec<u64>,
    /// The lowest leaf of each slot's cluster (its leaf, for a singleton).
    lowest: Vec<u32>,
    /// The permanent id of the cluster in each slot (merge records name clusters by it).
    pub(super) perm: Vec<u32>,
    alive: Vec<bool>,
    /// Scratch marks for set comparisons and liveness.
    mark: Vec<u32>,
    stamp: u32,
    /// Slots ever used.
    used: usize,
    free: Vec<u32>,
    /// Non-singleton clusters by leaf-set hash.
    intern: HashMap<u64, Vec<u32>>,
    next_perm: u32,
}

impl<S: Sums> Arena<S> {
    /// The leaves of `model` in slots `0..n`, with room for `cap` clusters.
    pub(super) fn new<M: PairModel<Sums = S>>(
        model: &M,
        cap: usize,
    ) -> Result<Arena<S>, WideError> {
        let n = model.n_leaves();
        let words = n.div_ceil(64);
        let cap = cap.max(n);
        let mut a = Arena {
            n,
            words,
            cap,
            rows: filled("beam search's cross sums", cap * n, S::default())?,
            stat: vec![model.leaf(); cap],
            bits: filled("beam search's leaf sets", cap * words, 0u64)?,
            hash: vec![0; cap],
            lowest: vec![0; cap],
            perm: vec![0; cap],
            alive: vec![false; cap],
            mark: vec![0; cap],
            stamp: 0,
            used: n,
            free: Vec::new(),
            intern: HashMap::new(),
            next_perm: n as u32,
        };
        let keys = super::leaf_keys(n);
        for (i, &key) in keys.iter().enumerate() {
            for j in 0..n {
                if i != j {
                    a.rows[i * n + j] = model.weight(i, j);
                }
            }
            a.bits[i * words + i / 64] = 1 << (i % 64);
            a.hash[i] = key;
            a.lowest[i] = i as u32;
            a.perm[i] = i as u32;
            a.alive[i] = true;
        }
        Ok(a)
    }

    /// Slots available (scratch indexed by slot needs this many entries).
    pub(super) fn cap(&self) -> usize {
        self.cap
    }

    /// `R_x`: the cross sums of cluster `x` with every leaf.
    #[inline]
    pub(super) fn row(&self, x: u32) -> &[S] {
        let x = x as usize;
        &self.rows[x * self.n..(x + 1) * self.n]
    }

    #[inline]
    pub(super) fn bits_of(&self, x: u32) -> &[u64] {
        let x = x as usize;
        &self.bits[x * self.words..(x + 1) * self.words]
    }

    /// The live slot holding leaf set `bits` (hash `h`), if any.
    pub(super) fn find(&self, bits: &[u64], h: u64) -> Option<u32> {
        self.intern
            .get(&h)?
            .iter()
            .copied()
            .find(|&s| self.bits_of(s) == bits)
    }

    /// A new mark value (all marks older).
    fn next_stamp(&mut self) -> u32 {
        if self.stamp == u32::MAX {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.stamp = 0;
        }
        self.stamp += 1;
        self.stamp
    }

    /// Whether the clusters of `a` are those of `b` with `gone` (two slots) replaced by `new`
    /// (all slots of one set distinct).
    pub(super) fn same_set(&mut self, a: &[u32], b: &[u32], gone: [u32; 2], new: u32) -> bool {
        let s = self.next_stamp();
        for &x in a {
            self.mark[x as usize] = s;
        }
        self.mark[new as usize] == s
            && b.iter()
                .all(|&x| gone.contains(&x) || self.mark[x as usize] == s)
    }

    /// The cluster `a ∪ b` (leaf set `bits`, hash `h`) in a new slot.
    pub(super) fn add(&mut self, a: u32, b: u32, bits: &[u64], h: u64) -> Result<u32, WideError> {
        let c = match self.free.pop() {
            Some(c) => c as usize,
            None => {
                if self.used == self.cap {
                    self.grow()?;
                }
                self.used += 1;
                self.used - 1
            }
        };
        let (a, b, n) = (a as usize, b as usize, self.n);
        for l in 0..n {
            self.rows[c * n + l] = self.rows[a * n + l] + self.rows[b * n + l];
        }
        let mut ab = S::default();
        let row_a = &self.rows[a * n..(a + 1) * n];
        for_leaves(&self.bits[b * self.words..(b + 1) * self.words], |l| {
            ab = ab + row_a[l];
        });
        self.stat[c] = self.stat[a].join(&self.stat[b], ab);
        self.bits[c * self.words..(c + 1) * self.words].copy_from_slice(bits);
        self.hash[c] = h;
        self.lowest[c] = self.lowest[a].min(self.lowest[b]);
        self.perm[c] = self.next_perm;
        self.next_perm = self
            .next_perm
            .checked_add(1)
            .ok_or_else(|| WideError::TooLarge("beam search made more than 4e9 clusters".into()))?;
        self.alive[c] = true;
        self.intern.entry(h).or_default().push(c as u32);
        Ok(c as u32)
    }

    /// Twice the slots, checked first.
    fn grow(&mut self) -> Result<(), WideError> {
        let e = self.cap * 2;
        let mut rows = filled("beam search's cross sums (grown)", e * self.n, S::default())?;
        rows[..self.rows.len()].copy_from_slice(&self.rows);
        self.rows = rows;
        let mut bits = filled("beam search's leaf sets (grown)", e * self.words, 0u64)?;
        bits[..self.bits.len()].copy_from_slice(&self.bits);
        self.bits = bits;
        self.stat.resize(e, Stat::default());
        self.hash.resize(e, 0);
        self.lowest.resize(e, 0);
        self.perm.resize(e, 0);
        self.alive.resize(e, false);
        self.mark.resize(e, 0);
        self.cap = e;
        Ok(())
    }

    /// Frees every slot that none of `live` holds.
    pub(super) fn collect<'a>(&mut self, live: impl IntoIterator<Item = &'a [u32]>) {
        let s = self.next_stamp();
        for clusters in live {
            for &x in clusters {
                self.mark[x as usize] = s;
            }
        }
        for x in 0..self.used {
            if self.alive[x] && self.mark[x] != s {
                self.alive[x] = false;
                if let Some(v) = self.intern.get_mut(&self.hash[x]) {
                    v.retain(|&y| y as usize != x);
                    if v.is_empty() {
                        self.intern.remove(&self.hash[x]);
                    }
                }
                self.free.push(x as u32);
            }
        }
    }

    /// Fills `g` with the leaves of `clusters` grouped by cluster.
    pub(super) fn group(&self, clusters: &[u32], g: &mut Grouped) {
        g.leaves.clear();
        g.start.clear();
        for &x in clusters {
            g.start.push(g.leaves.len());
            if self.stat[x as usize].size == 1 {
                g.leaves.push(self.lowest[x as usize]);
            } else {
                for_leaves(self.bits_of(x), |l| g.leaves.push(l as u32));
            }
        }
        g.start.push(g.leaves.len());
    }
}

/// Calls `f` on every leaf of a bitset, in increasing order.
#[inline]
fn for_leaves(bits: &[u64], mut f: impl FnMut(usize)) {
    for (w, &x) in bits.iter().enumerate() {
        let mut r = x;
        while r != 0 {
            f(w * 64 + r.trailing_zeros() as usize);
            r &= r - 1;
        }
    }
}

/// The leaves of a state's clusters, grouped by cluster (scratch, reused).
#[derive(Default)]
pub(super) struct Grouped {
    leaves: Vec<u32>,
    start: Vec<usize>,
}

impl Grouped {
    /// `Σ_{l ∈ cluster p} row[l]`: the cross sum of the row's cluster with cluster `p`.
    #[inline]
    pub(super) fn cross<S: Sums>(&self, row: &[S], p: usize) -> S {
        let mut total = S::default();
        for &l in &self.leaves[self.start[p]..self.start[p + 1]] {
            total = total + row[l as usize];
        }
        total
    }
}
