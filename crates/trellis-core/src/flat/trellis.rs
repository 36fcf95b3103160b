//! [`FlatTrellis`]: the full flat cluster trellis over all `2^N` subsets of `N` points (the
//! paper's Algorithms 1 and 2, Section 3).
//!
//! For every subset `S`, with `T` running over the subsets of `S \ {min S}` (so that the cluster
//! `C = S \ T` holds the lowest point of `S`):
//! - `log Z(S) = logsumexp_T [log E(S \ T) + log Z(T)]`, `log Z(∅) = 0`;
//! - `MAP(S) = max_T [log E(S \ T) + MAP(T)]`, `MAP(∅) = 0`, with the maximising cluster kept as
//!   a back-pointer.
//!
//! That is `2^(|S|-1)` terms per subset, `(3^N - 1) / 2` in all. Subsets are processed layer by
//! layer in increasing size, each layer in parallel (rayon); each subset is computed by one
//! thread in a fixed order (`T` in decreasing numeric order, eight running sums of the
//! exponentials combined the same way, [`crate::simd::sum_exp`] with the widest instruction set
//! the CPU has: AVX-512, AVX2 or scalar code), so every number is bit-identical for any thread
//! count.
//!
//! After the pass, the marginal of a cluster is `P(C) = E(C) Z(U \ C) / Z(U)` (Section 3.3),
//! `O(1)` per cluster and `O(2^N)` for all of them ([`FlatTrellis::cluster_marginals`]); the
//! pairwise marginals `P(i ~ j) = Σ_{C ⊇ {i,j}} P(C)` come from one sum over supersets of every
//! subset (a zeta transform, `O(N 2^N)`), read at the pairs.

use super::{check_cluster, check_energy, ClusterEnergy, FlatError};
use crate::model::log_add_exp;
use crate::simd::{sum_exp, Isa};
use crate::subset::Subset;
use rayon::prelude::*;

/// Default largest `N` [`FlatTrellis::build`] accepts (about 450 MiB of tables and 1.4e11
/// terms, roughly 2 minutes on two cores, at this size; see [`FlatCost`]).
pub const DEFAULT_MAX_POINTS: usize = 24;

/// Largest `N` any full flat trellis accepts (back-pointers are stored as `u32`).
pub const MAX_POINTS: usize = 32;

/// Terms (one `log E + log Z` addition, max and exponential each) per second on two cores,
/// measured on the development machine (release build, eight AVX-512 lanes, 1.4e9 at N = 20;
/// 4.4e8 without the lanes); used only for the estimate in errors.
const TERMS_PER_SECOND: f64 = 1.4e9;

/// What a full flat trellis over `N` points costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlatCost {
    /// Bytes of tables (log-energies, log Z and MAP values, back-pointers).
    pub bytes: f64,
    /// Terms of the dynamic programme, `(3^N - 1) / 2`.
    pub terms: f64,
    /// Rough wall time on two cores.
    pub seconds: f64,
}

impl FlatCost {
    /// The cost of a full flat trellis over `n` points.
    pub fn of(n: usize) -> FlatCost {
        let subsets = 2f64.powi(n as i32);
        let per_subset = (std::mem::size_of::<f64>() + std::mem::size_of::<Cell>() + 4) as f64;
        let terms = (3f64.powi(n as i32) - 1.0) / 2.0;
        FlatCost {
            bytes: subsets * per_subset,
            terms,
            seconds: terms / TERMS_PER_SECOND,
        }
    }
}

/// `log Z(S)` and `MAP(S)` of one subset, read together for each term.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
struct Cell {
    log_z: f64,
    map: f64,
}

const NONE: Cell = Cell {
    log_z: f64::NEG_INFINITY,
    map: f64::NEG_INFINITY,
};

/// The full flat cluster trellis over all subsets of `N` points, after the dynamic programme.
#[derive(Clone, Debug)]
pub struct FlatTrellis {
    n: usize,
    /// `log E(C)` indexed by bitmask.
    log_energy: Vec<f64>,
    /// `log Z(S)` and `MAP(S)` indexed by bitmask.
    cells: Vec<Cell>,
    /// The MAP cluster holding the lowest point of each subset (0 when none is finite).
    map_cluster: Vec<u32>,
}

impl FlatTrellis {
    /// Runs the trellis for `model`, refusing `N >` [`DEFAULT_MAX_POINTS`].
    pub fn build<E: ClusterEnergy + ?Sized>(model: &E) -> Result<FlatTrellis, FlatError> {
        Self::build_with_limit(model, DEFAULT_MAX_POINTS)
    }

    /// Runs the trellis for `model`, refusing `N > max_points` (and always `N >` [`MAX_POINTS`])
    /// with an error stating the memory and time the run would need. Errors also for `N = 0`
    /// and for a log-energy that is NaN or `+inf`.
    pub fn build_with_limit<E: ClusterEnergy + ?Sized>(
        model: &E,
        max_points: usize,
    ) -> Result<FlatTrellis, FlatError> {
        Self::build_with_isa(model, max_points, Isa::detect())
    }

    /// [`FlatTrellis::build_with_limit`] with the eight lanes of `isa` (or the widest narrower
    /// set the CPU has; `flat::lanes`, from 4 points) where the lanes are faster than the split
    /// loop ([`Isa::lanes_beat_split_loop`]: not with the scalar set, which takes the split
    /// loop). The MAP values and clusterings are the same for every `isa` and as
    /// [`FlatTrellis::build_split_loop`]'s; log Z agrees to 1e-12.
    pub fn build_with_isa<E: ClusterEnergy + ?Sized>(
        model: &E,
        max_points: usize,
        isa: Isa,
    ) -> Result<FlatTrellis, FlatError> {
        Self::build_lanes_if(model, max_points, isa, isa.lanes_beat_split_loop())
    }

    /// The eight-lane path with the lanes of `isa` whatever [`FlatTrellis::build_with_isa`]
    /// would choose (below 4 points, the split loop): every instruction set's lanes, for tests
    /// and benches.
    #[doc(hidden)]
    pub fn build_lanes<E: ClusterEnergy + ?Sized>(
        model: &E,
        max_points: usize,
        isa: Isa,
    ) -> Result<FlatTrellis, FlatError> {
        Self::build_lanes_if(model, max_points, isa, true)
    }

    /// The eight lanes of `isa` when `lanes` (and from 4 points), else the split loop.
    fn build_lanes_if<E: ClusterEnergy + ?Sized>(
        model: &E,
        max_points: usize,
        isa: Isa,
        lanes: bool,
    ) -> Result<FlatTrellis, FlatError> {
        // The token first: a cancellation during the energy table stops the build.
        let cancel = crate::cancel::Cancel::new();
        let n = model.n_points();
        check_size(n, max_points)?;
        let log_energy = super::checked_table(model)?;
        check_table(&log_energy)?;
        if !lanes || n < crate::exact::lanes::MIN_LEAVES {
            return Self::split_loop(n, log_energy, &cancel);
        }
        let (cells, map_cluster) =
            super::lanes::build(&log_energy, isa, &cancel).ok_or(FlatError::Cancelled)?;
        Ok(FlatTrellis {
            n,
            log_energy,
            cells: cells
                .into_iter()
                .map(|(log_z, map)| Cell { log_z, map })
                .collect(),
            map_cluster,
        })
    }

    /// The flat trellis one subset at a time over its terms (the path before the eight lanes):
    /// the baseline of benches and `examples/flat_speed`.
    #[doc(hidden)]
    pub fn build_split_loop<E: ClusterEnergy + ?Sized>(
        model: &E,
        max_points: usize,
    ) -> Result<FlatTrellis, FlatError> {
        let cancel = crate::cancel::Cancel::new();
        let n = model.n_points();
        check_size(n, max_points)?;
        let log_energy = super::checked_table(model)?;
        check_table(&log_energy)?;
        Self::split_loop(n, log_energy, &cancel)
    }

    fn split_loop(
        n: usize,
        log_energy: Vec<f64>,
        cancel: &crate::cancel::Cancel,
    ) -> Result<FlatTrellis, FlatError> {
        let mut cells = vec![NONE; 1usize << n];
        cells[0] = Cell {
            log_z: 0.0,
            map: 0.0,
        };
        let mut map_cluster = vec![0u32; 1usize << n];
        for k in 1..=n {
            let layer: Vec<u64> = Subset::of_size(n, k).map(|s| s.bits()).collect();
            let done = &cells;
            let le = &log_energy;
            let values: Vec<(Cell, u32)> = layer
                .par_iter()
                .with_min_len(64)
                .map_init(Vec::new, |buf, &s| {
                    if cancel.is_cancelled() {
                        return (NONE, 0);
                    }
                    solve_subset(s, le, done, buf)
                })
                .collect();
            if cancel.is_cancelled() {
                return Err(FlatError::Cancelled);
            }
            for (&s, (c, best)) in layer.iter().zip(values) {
                cells[s as usize] = c;
                map_cluster[s as usize] = best;
            }
        }
        Ok(FlatTrellis {
            n,
            log_energy,
            cells,
            map_cluster,
        })
    }

    /// Number of points `N`.
    pub fn n_points(&self) -> usize {
        self.n
    }

    /// `log E(C)` as the trellis stored it (`c` indexed by bitmask; 0 for the empty set);
    /// errors unless `c` is a subset of `0..N`.
    pub fn log_energy(&self, c: Subset) -> Result<f64, FlatError> {
        Ok(self.log_energy[self.index_of(c)?])
    }

    /// The table index of `s`, checked to be a subset of `0..N` (the empty set included).
    fn index_of(&self, s: Subset) -> Result<usize, FlatError> {
        if !s.is_empty() {
            check_cluster(self.n, s)?;
        }
        Ok(s.index())
    }

    /// `log Z`: the log of the sum over all Bell(N) clusterings of their energies (`-inf` when
    /// every clustering has a forbidden cluster).
    pub fn log_partition(&self) -> f64 {
        self.root().log_z
    }

    /// `log Z(S)` over the clusterings of the points of `s` only (`0` for the empty set);
    /// errors unless `s` is a subset of `0..N`.
    pub fn log_partition_of(&self, s: Subset) -> Result<f64, FlatError> {
        Ok(self.cells[self.index_of(s)?].log_z)
    }

    /// The largest log-energy of any clustering (`-inf` if none is allowed).
    pub fn map_log_energy(&self) -> f64 {
        self.root().map
    }

    /// The largest log-energy of any clustering of the points of `s`; errors unless `s` is a
    /// subset of `0..N`.
    pub fn map_log_energy_of(&self, s: Subset) -> Result<f64, FlatError> {
        Ok(self.cells[self.index_of(s)?].map)
    }

    /// A clustering with the MAP log-energy (Algorithm 2), its clusters in increasing order of
    /// their lowest point. Among ties, the first in the trellis's order wins (the cluster of the
    /// lowest point is the smallest numerically). Empty when no clustering is allowed.
    pub fn map_clustering(&self) -> Vec<Subset> {
        self.map_clustering_trusted(Subset::full(self.n))
    }

    /// A MAP clustering of the points of `s` (empty when none is allowed, or `s` is empty);
    /// errors unless `s` is a subset of `0..N`.
    pub fn map_clustering_of(&self, s: Subset) -> Result<Vec<Subset>, FlatError> {
        self.index_of(s)?;
        Ok(self.map_clustering_trusted(s))
    }

    fn map_clustering_trusted(&self, s: Subset) -> Vec<Subset> {
        follow_back_pointers(s.bits(), &self.map_cluster, |t| self.cells[t as usize].map)
    }

    /// The marginal probability that `c` is one of the clusters,
    /// `P(C) = E(C) Z(U \ C) / Z(U)`.
    ///
    /// Errors for an empty cluster or one naming points outside `0..N`, and when no clustering
    /// is allowed (`log Z = -inf`).
    pub fn cluster_marginal(&self, c: Subset) -> Result<f64, FlatError> {
        check_cluster(self.n, c)?;
        if self.log_partition() == f64::NEG_INFINITY {
            return Err(FlatError::NoClustering);
        }
        Ok(self.cluster_log_marginal_unchecked(c.bits()).exp())
    }

    /// `log P(C)` of every cluster, indexed by bitmask, in `O(2^N)`; entry 0 (the empty set,
    /// not a cluster) is `-inf`. Every entry is NaN when no clustering is allowed.
    pub fn cluster_log_marginals(&self) -> Vec<f64> {
        if self.log_partition() == f64::NEG_INFINITY {
            return vec![f64::NAN; self.cells.len()];
        }
        (0..self.cells.len())
            .into_par_iter()
            .with_min_len(1 << 12)
            .map(|b| {
                if b == 0 {
                    f64::NEG_INFINITY
                } else {
                    self.cluster_log_marginal_unchecked(b as u64)
                }
            })
            .collect()
    }

    /// `P(C)` of every cluster, indexed by bitmask, in `O(2^N)`; entry 0 (the empty set) is 0.
    /// For each point `i` the entries of the clusters holding `i` sum to 1 (up to rounding).
    /// Every entry is NaN when no clustering is allowed.
    pub fn cluster_marginals(&self) -> Vec<f64> {
        let mut p = self.cluster_log_marginals();
        p.par_iter_mut()
            .with_min_len(1 << 12)
            .for_each(|x| *x = x.exp());
        p
    }

    /// The `N x N` matrix of pairwise marginals, `P(i and j are in the same cluster)`, with 1 on
    /// the diagonal: the cluster marginals summed over the supersets of every pair (`O(N 2^N)`
    /// after the pass). Every entry is NaN when no clustering is allowed.
    pub fn pairwise_marginals(&self) -> Vec<Vec<f64>> {
        let mut f = self.cluster_marginals();
        superset_sums(&mut f, |a, b| a + b);
        self.read_pairs(&f, 1.0)
    }

    /// The `N x N` matrix of `log P(i and j are in the same cluster)` (0 on the diagonal),
    /// summed in log space, so that tiny marginals keep their magnitude instead of rounding to
    /// 0. Every entry is NaN when no clustering is allowed.
    pub fn pairwise_log_marginals(&self) -> Vec<Vec<f64>> {
        let mut f = self.cluster_log_marginals();
        superset_sums(&mut f, log_add_exp);
        self.read_pairs(&f, 0.0)
    }

    fn read_pairs(&self, f: &[f64], diagonal: f64) -> Vec<Vec<f64>> {
        let undefined = self.log_partition() == f64::NEG_INFINITY;
        let n = self.n;
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        if undefined {
                            f64::NAN
                        } else if i == j {
                            diagonal
                        } else {
                            f[(1usize << i) | (1usize << j)]
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[inline]
    fn cluster_log_marginal_unchecked(&self, c: u64) -> f64 {
        let full = (1u64 << self.n) - 1;
        self.log_energy[c as usize] + self.cells[(full ^ c) as usize].log_z - self.log_partition()
    }

    fn root(&self) -> &Cell {
        &self.cells[(1usize << self.n) - 1]
    }
}

/// Refuses `n = 0` and `n` above the limit.
pub(crate) fn check_size(n: usize, max_points: usize) -> Result<(), FlatError> {
    if n == 0 {
        return Err(FlatError::Empty);
    }
    let limit = max_points.min(MAX_POINTS);
    if n > limit {
        return Err(FlatError::TooManyPoints {
            n,
            limit,
            cost: FlatCost::of(n),
        });
    }
    Ok(())
}

/// Rejects NaN and `+inf` log-energies.
fn check_table(t: &[f64]) -> Result<(), FlatError> {
    match t
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, v)| v.is_nan() || **v == f64::INFINITY)
    {
        Some((b, &v)) => check_energy(Subset(b as u64), v),
        None => Ok(()),
    }
}

/// In place, `f[X] <- op-sum of f[Y] over all Y ⊇ X` (one `op` per element and bit; the same
/// operations in the same order for any thread count).
fn superset_sums(f: &mut [f64], op: impl Fn(f64, f64) -> f64 + Sync) {
    let n = f.len().trailing_zeros() as usize;
    for b in 0..n {
        let half = 1usize << b;
        f.par_chunks_mut(2 * half)
            .with_min_len((1usize << 12) / (2 * half) + 1)
            .for_each(|ch| {
                let (lo, hi) = ch.split_at_mut(half);
                for (x, &y) in lo.iter_mut().zip(hi.iter()) {
                    *x = op(*x, y);
                }
            });
    }
}

/// The clustering read from back-pointers from `s` down (empty if `map(s)` is `-inf`).
fn follow_back_pointers(s: u64, back: &[u32], map: impl Fn(u64) -> f64) -> Vec<Subset> {
    let mut out = Vec::new();
    if map(s) == f64::NEG_INFINITY {
        return out;
    }
    let mut r = s;
    while r != 0 {
        let c = back[r as usize] as u64;
        debug_assert!(c != 0 && c & !r == 0 && c & r & r.wrapping_neg() != 0);
        out.push(Subset(c));
        r ^= c;
    }
    out
}

/// One subset: every cluster `C = s \ t` holding its lowest point, `t` in decreasing order.
/// The terms go to a buffer (with their running maximum) and are exponentiated in one sweep.
#[inline]
fn solve_subset(s: u64, le: &[f64], cells: &[Cell], buf: &mut Vec<f64>) -> (Cell, u32) {
    let low = s & s.wrapping_neg();
    let rest = s ^ low;
    buf.clear();
    let mut zmax = f64::NEG_INFINITY;
    let mut best = f64::NEG_INFINITY;
    let mut best_c = 0u64;
    let mut t = rest;
    loop {
        let c = s ^ t;
        let e = le[c as usize];
        let cell = cells[t as usize];
        let z = e + cell.log_z;
        buf.push(z);
        zmax = zmax.max(z);
        let v = e + cell.map;
        if v > best {
            best = v;
            best_c = c;
        }
        if t == 0 {
            break;
        }
        t = (t - 1) & rest;
    }
    (finish(buf, zmax, best), best_c as u32)
}

/// `log Z` from a subset's buffered terms and their maximum, with its MAP value.
#[inline]
fn finish(buf: &[f64], zmax: f64, best: f64) -> Cell {
    if zmax == f64::NEG_INFINITY {
        return NONE;
    }
    Cell {
        log_z: zmax + sum_exp(Isa::detect(), buf, zmax).ln(),
        map: best,
    }
}

/// The partition function and MAP of one vertex from its terms `(log E(C), log Z(S\C),
/// MAP(S\C), C)` in a fixed order, with the same arithmetic as [`FlatTrellis`] (so a sparse
/// trellis holding every subset, feeding the terms in the full trellis's order, gives the same
/// bits). Returns `(log Z, MAP, index of the best term)`, the index `usize::MAX` when none.
pub(crate) fn reduce_terms(
    terms: impl Iterator<Item = (f64, f64, f64)>,
    buf: &mut Vec<f64>,
) -> (f64, f64, usize) {
    buf.clear();
    let mut zmax = f64::NEG_INFINITY;
    let mut best = f64::NEG_INFINITY;
    let mut best_k = usize::MAX;
    for (k, (e, lz, map)) in terms.enumerate() {
        let z = e + lz;
        buf.push(z);
        zmax = zmax.max(z);
        let v = e + map;
        if v > best {
            best = v;
            best_k = k;
        }
    }
    let c = finish(buf, zmax, best);
    (c.log_z, c.map, best_k)
}

/// The MAP clustering alone (Algorithm 2, no partition function) on one thread: the same
/// recursion, order and tie-breaking as [`FlatTrellis`] (hence the same clustering), without
/// the exponentials, for callers that run many small problems in parallel (Perturb-and-MAP).
/// Returns the MAP log-energy and the clustering (empty when no clustering is allowed).
/// Refuses `N >` [`DEFAULT_MAX_POINTS`] and bad log-energies like [`FlatTrellis::build`].
pub fn exact_map_clustering<E: ClusterEnergy + ?Sized>(
    model: &E,
) -> Result<(f64, Vec<Subset>), FlatError> {
    let n = model.n_points();
    check_size(n, DEFAULT_MAX_POINTS)?;
    let le = super::checked_table(model)?;
    check_table(&le)?;
    let mut map = vec![f64::NEG_INFINITY; 1usize << n];
    let mut back = vec![0u32; 1usize << n];
    map[0] = 0.0;
    // Every proper subset of `s` is numerically smaller than `s`.
    for s in 1u64..1u64 << n {
        let low = s & s.wrapping_neg();
        let rest = s ^ low;
        let mut best = f64::NEG_INFINITY;
        let mut best_c = 0u64;
        let mut t = rest;
        loop {
            let c = s ^ t;
            let v = le[c as usize] + map[t as usize];
            if v > best {
                best = v;
                best_c = c;
            }
            if t == 0 {
                break;
            }
            t = (t - 1) & rest;
        }
        map[s as usize] = best;
        back[s as usize] = best_c as u32;
    }
    let full = (1u64 << n) - 1;
    let clustering = follow_back_pointers(full, &back, |t| map[t as usize]);
    Ok((map[full as usize], clustering))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flat::enumerate::brute_force;
    use crate::flat::{clustering_log_energy, is_clustering_of};

    /// Hand-set cluster energies with forbidden clusters.
    struct Toy {
        n: usize,
    }

    impl ClusterEnergy for Toy {
        fn n_points(&self) -> usize {
            self.n
        }
        fn log_energy(&self, c: Subset) -> f64 {
            if c.len() == 2 && c.bits().wrapping_mul(0x9E37_79B9).is_multiple_of(3) {
                f64::NEG_INFINITY
            } else {
                0.3 * (c.bits() % 7) as f64 - 0.4 * c.len() as f64
            }
        }
    }

    #[test]
    fn matches_brute_force_with_forbidden_clusters() {
        for n in 1..=7 {
            let m = Toy { n };
            let t = FlatTrellis::build(&m).unwrap();
            let b = brute_force(&m).unwrap();
            assert!((t.log_partition() - b.log_z).abs() < 1e-10, "n = {n}");
            assert!((t.map_log_energy() - b.map_log_energy).abs() < 1e-12);
            let map = t.map_clustering();
            assert!(is_clustering_of(Subset::full(n), &map));
            // The same sum in another order: equal up to rounding.
            assert!((clustering_log_energy(&m, &map) - t.map_log_energy()).abs() < 1e-12);
            let (v, c) = exact_map_clustering(&m).unwrap();
            assert_eq!((v, c), (t.map_log_energy(), map));
            let p = t.cluster_marginals();
            for (x, y) in p.iter().zip(&b.cluster_marginals) {
                assert!((x - y).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn no_allowed_clustering() {
        struct Nothing;
        impl ClusterEnergy for Nothing {
            fn n_points(&self) -> usize {
                4
            }
            fn log_energy(&self, c: Subset) -> f64 {
                if c.contains(2) {
                    f64::NEG_INFINITY
                } else {
                    1.0
                }
            }
        }
        let t = FlatTrellis::build(&Nothing).unwrap();
        assert_eq!(t.log_partition(), f64::NEG_INFINITY);
        assert_eq!(t.map_log_energy(), f64::NEG_INFINITY);
        assert!(t.map_clustering().is_empty());
        assert_eq!(
            t.cluster_marginal(Subset::singleton(0)),
            Err(FlatError::NoClustering)
        );
        assert!(t.pairwise_marginals().iter().flatten().all(|x| x.is_nan()));
        // Sub-problems without point 2 are fine.
        let s = Subset::from_indices([0, 1, 3]);
        assert_eq!(t.map_log_energy_of(s), Ok(3.0));
        assert_eq!(t.map_clustering_of(s).unwrap().len(), 3);
        assert_eq!(t.map_clustering_of(Subset::EMPTY), Ok(vec![]));
        assert_eq!(t.log_partition_of(Subset::EMPTY), Ok(0.0));
        assert!(t.log_partition_of(Subset::singleton(9)).is_err());
        assert_eq!(exact_map_clustering(&Nothing).unwrap().1, vec![]);
    }

    #[test]
    fn errors_name_the_problem() {
        let t = FlatTrellis::build(&Toy { n: 3 }).unwrap();
        let e = t.cluster_marginal(Subset::EMPTY).unwrap_err();
        assert!(e.to_string().contains("not a non-empty subset"));
        assert!(t.cluster_marginal(Subset::singleton(3)).is_err());
        let e = FlatTrellis::build_with_limit(&Toy { n: 26 }, 20).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("N = 26") && msg.contains("limit of 20") && msg.contains("GiB"));
        struct Bad;
        impl ClusterEnergy for Bad {
            fn n_points(&self) -> usize {
                3
            }
            fn log_energy(&self, c: Subset) -> f64 {
                if c.len() == 3 {
                    f64::INFINITY
                } else {
                    0.0
                }
            }
        }
        let e = FlatTrellis::build(&Bad).unwrap_err();
        assert!(e.to_string().contains("{0,1,2} is inf"), "{e}");
        struct Zero;
        impl ClusterEnergy for Zero {
            fn n_points(&self) -> usize {
                0
            }
            fn log_energy(&self, _: Subset) -> f64 {
                0.0
            }
        }
        assert_eq!(FlatTrellis::build(&Zero).unwrap_err(), FlatError::Empty);
    }
}
