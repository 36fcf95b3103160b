//! Exact MAP by A* (AO*) over the clusters of a lazily built trellis, with certificates
//! (design note `docs/design/astar.md`, §1 and §4).
//!
//! The search space is the AND/OR graph of the cluster trellis: a cluster chooses a split (OR),
//! a split needs both children solved (AND). Every cluster the search touches becomes a node with
//! an upper bound `U(C) >= V(C)` on the best log-likelihood of a tree over it, first the
//! heuristic's [`SubtreeBound::bound`]. *Expanding* a cluster scores its splits by `f(A, B) =
//! log psi(A, B) + U(A) + U(B)` (children not yet in the trellis count with
//! [`SubtreeBound::quick`]) and keeps the best `K` of them in a queue, plus a *residual*: the
//! largest `f` of those it dropped. Queue entries are refreshed lazily: when an entry reaches the
//! top its `f` is recomputed from the children's current bounds (creating their nodes), and it is
//! pushed back if it dropped. Since bounds only decrease, a stale `f` stays an upper bound, so a
//! *fresh* top (recomputed and still on top, and not below the residual) is the best split:
//! `U(C)` becomes `min(U(C), f_top)`. When the residual reaches the top, the cluster's splits are
//! enumerated again with a store twice as large. A cluster is *solved* when its fresh top split
//! has solved children; then `U(C) = V(C)`.
//!
//! Each iteration walks down from the root along fresh top splits (the best partial hierarchy),
//! expands its unexpanded frontier clusters and backs the bounds up on the way out. The search
//! stops when the root is solved, or when `U(root)` is within the tolerance of the best complete
//! tree known (the *incumbent*, seeded by beam search and greedy and improved during the search
//! by completing the best partial hierarchy), or when a budget runs out; then the incumbent is
//! returned with the certified interval `[log-likelihood, U(root)]` that holds the MAP value.
//!
//! **Optimality.** `U` stays an upper bound on `V` by induction over clusters: a leaf's is exact,
//! a stored `f` is at least the current `log psi + U(A) + U(B) >= log psi + V(A) + V(B)`, the
//! residual bounds every dropped split, and `V(C)` is the maximum over splits. Admissibility is
//! enough (values are backed up per cluster, so no path is closed early); the bounds in
//! [`super::bounds`] are also consistent. Round-off: the bounds carry a margin, sums are formed
//! in one fixed order (`log psi + U(A) + U(B)`) so that a recomputed `f` never exceeds the stored
//! one, and the certificate allows a relative tolerance ([`AstarOptions::tol`]).
//!
//! **Memory.** Nodes live in an arena indexed by a hash map on the cluster's bits; a node keeps
//! its statistics, its bound, its state and (while open) its split store of at most `K` entries
//! of 16 bytes. Solved and dead clusters drop their store. Bytes are counted from these
//! structures (arena, map, stores, the statistics table), not from the allocator, so parallel
//! jobs do not disturb the count, and [`Budget::max_bytes`] is enforced before each allocation
//! that could cross it. The search is single-threaded and deterministic: the same options give
//! the same result bits.

use super::bounds::SubtreeBound;
use super::ExactError;
use crate::model::SplitModel;
use crate::search::{beam_search, default_beam_size, greedy, MAX_BEAM_SIZE};
use crate::subset::Subset;
use crate::tree::Tree;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

/// Limits on one search. `None` is unlimited. Expansions and split evaluations are
/// deterministic (tests use those); bytes are counted from the search's own structures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Budget {
    /// Clusters expanded (first enumeration of a cluster's splits).
    pub max_expansions: Option<u64>,
    /// Splits scored (over all enumerations; checked before each enumeration).
    pub max_splits: Option<u64>,
    /// Bytes of the search's structures.
    pub max_bytes: Option<u64>,
    /// Wall-clock seconds (not deterministic).
    pub max_seconds: Option<f64>,
}

/// Options of [`astar`].
#[derive(Clone, Debug)]
pub struct AstarOptions {
    /// Limits; when one runs out the incumbent is returned with its certified gap.
    pub budget: Budget,
    /// Extra incumbent trees (each over all leaves) besides beam search and greedy.
    pub incumbents: Vec<Tree>,
    /// Beam size of the seeding beam search: `None` for `default_beam_size(N)`, `Some(0)` for no
    /// beam search.
    pub beam_size: Option<usize>,
    /// Whether greedy agglomeration seeds the incumbent too.
    pub greedy: bool,
    /// Splits kept per cluster at its first expansion (`K`; doubled at each re-enumeration).
    pub splits_kept: usize,
    /// Relative certification tolerance: certified when `U(root) - LB <= tol · max(1, |LB|)`.
    pub tol: f64,
    /// Largest `N` for which the model's statistics of all `2^N` subsets are tabulated (O(1)
    /// statistics per split instead of [`SplitModel::stat`]), when the table takes at most a
    /// quarter of [`Budget::max_bytes`].
    pub stat_table_leaves: usize,
}

impl Default for AstarOptions {
    fn default() -> Self {
        AstarOptions {
            budget: Budget::default(),
            incumbents: Vec::new(),
            beam_size: None,
            greedy: true,
            splits_kept: 64,
            tol: 1e-10,
            stat_table_leaves: 20,
        }
    }
}

/// Why a search stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The root was solved: the tree is a MAP tree.
    Solved,
    /// `U(root)` came within the tolerance of the incumbent: the incumbent is a MAP tree.
    GapClosed,
    /// [`Budget::max_expansions`] ran out.
    Expansions,
    /// [`Budget::max_splits`] ran out.
    Splits,
    /// [`Budget::max_bytes`] ran out.
    Bytes,
    /// [`Budget::max_seconds`] ran out.
    Seconds,
}

impl StopReason {
    /// A short lowercase name (`"solved"`, `"gap_closed"`, `"expansions"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Solved => "solved",
            StopReason::GapClosed => "gap_closed",
            StopReason::Expansions => "expansions",
            StopReason::Splits => "splits",
            StopReason::Bytes => "bytes",
            StopReason::Seconds => "seconds",
        }
    }
}

/// Work counters of one search.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AstarStats {
    /// Walks from the root.
    pub iterations: u64,
    /// Clusters whose splits were enumerated (once each).
    pub clusters_expanded: u64,
    /// Further enumerations of an expanded cluster (its store ran dry).
    pub reenumerations: u64,
    /// Splits scored, over all enumerations.
    pub splits_evaluated: u64,
    /// Clusters in the lazily built trellis (nodes), leaves excluded.
    pub trellis_nodes: u64,
    /// Peak bytes of the search's structures.
    pub peak_bytes: u64,
    /// Wall-clock seconds, seeding included.
    pub seconds: f64,
}

/// The result of [`astar`].
#[derive(Clone, Debug)]
pub struct AstarResult {
    /// The best tree found (a MAP tree when `certified`).
    pub tree: Tree,
    /// Its log-likelihood, recomputed with [`Tree::log_likelihood`]: a lower bound on the MAP.
    pub log_likelihood: f64,
    /// An upper bound on the MAP value (`U(root)`).
    pub upper_bound: f64,
    /// Whether the tree is proved to be a MAP tree (to the tolerance).
    pub certified: bool,
    /// Why the search stopped.
    pub stop: StopReason,
    /// Work counters.
    pub stats: AstarStats,
}

impl AstarResult {
    /// `upper_bound - log_likelihood`, at least 0: how far the MAP can be above the tree.
    pub fn gap(&self) -> f64 {
        (self.upper_bound - self.log_likelihood).max(0.0)
    }
}

/// Finds a MAP tree of `model` by AO* with the admissible `bound`, within `opts.budget`.
///
/// Errors: [`ExactError::Empty`] for no leaves, [`ExactError::BadCluster`] for an incumbent
/// that is not over all leaves, [`ExactError::NoFiniteTree`] when no tree has a finite
/// log-likelihood (as the full trellis), and the model's error if its statistics table fails.
pub fn astar<M: SplitModel, B: SubtreeBound<M>>(
    model: &M,
    bound: &B,
    opts: &AstarOptions,
) -> Result<AstarResult, ExactError> {
    let start = Instant::now();
    let n = model.n_leaves();
    if n == 0 {
        return Err(ExactError::Empty);
    }
    let full = Subset::full(n);
    let mut best: Option<(Tree, f64)> = None;
    let offer = |t: Tree, best: &mut Option<(Tree, f64)>| {
        let ll = t.log_likelihood(model);
        if best.as_ref().is_none_or(|b| ll > b.1) {
            *best = Some((t, ll));
        }
    };
    for t in &opts.incumbents {
        if t.leaves() != full {
            return Err(ExactError::BadCluster {
                cluster: t.leaves().to_string(),
                n,
            });
        }
        offer(t.clone(), &mut best);
    }
    let beam = opts.beam_size.unwrap_or_else(|| default_beam_size(n));
    if beam > 0 {
        if let Ok(f) = beam_search(model, beam.min(MAX_BEAM_SIZE)) {
            offer(f.tree, &mut best);
        }
    }
    if opts.greedy || best.is_none() {
        if let Ok(f) = greedy(model) {
            offer(f.tree, &mut best);
        }
    }
    let (tree, ll) = best.expect("greedy always returns a tree");
    if n == 1 {
        return Ok(AstarResult {
            tree,
            log_likelihood: 0.0,
            upper_bound: 0.0,
            certified: true,
            stop: StopReason::Solved,
            stats: AstarStats {
                seconds: start.elapsed().as_secs_f64(),
                ..AstarStats::default()
            },
        });
    }
    let table_bytes = ((1u128 << n) * std::mem::size_of::<M::Stat>() as u128) as f64;
    let table_fits = opts
        .budget
        .max_bytes
        .is_none_or(|m| table_bytes <= m as f64 / 4.0);
    let table = if n <= opts.stat_table_leaves && table_fits {
        let t = model.stat_table()?;
        if t.len() != 1usize << n {
            return Err(ExactError::BadStatTable { len: t.len(), n });
        }
        Some(t)
    } else {
        None
    };
    let s = Search {
        model,
        bound,
        opts,
        full,
        table,
        nodes: Vec::new(),
        index: HashMap::default(),
        store_bytes: 0,
        peak_bytes: 0,
        stats: AstarStats::default(),
        start,
        incumbent: tree,
        lb: ll,
    };
    s.run()
}

/// A multiply-xorshift hasher for cluster bits (no new dependency; the keys are not adversarial).
#[derive(Default, Clone, Copy)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        let mut x = x ^ self.0;
        x = (x ^ (x >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93);
        x = (x ^ (x >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93);
        self.0 = x ^ (x >> 32);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type Index = HashMap<u64, u32, BuildHasherDefault<MixHasher>>;

/// Bytes per map entry (key, value, control byte).
const MAP_ENTRY_BYTES: u64 = (std::mem::size_of::<(u64, u32)>() + 1) as u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// In the trellis with its heuristic bound; splits not enumerated.
    Fresh,
    /// Splits enumerated into its store.
    Open,
    /// `U = V`; `best` is the `A` of a best split.
    Solved,
    /// No finite tree (`U = -inf`).
    Dead,
}

struct Node<S> {
    set: Subset,
    stat: S,
    u: f64,
    state: State,
    best: u64,
    store: Option<Box<Store>>,
}

/// A cluster's best `cap` splits by (possibly stale) `f`, and the largest `f` of the others.
struct Store {
    heap: BinaryHeap<Entry>,
    residual: f64,
    cap: usize,
}

impl Store {
    fn bytes(&self) -> u64 {
        (self.heap.capacity() * std::mem::size_of::<Entry>() + std::mem::size_of::<Store>()) as u64
    }
}

/// A split `(A, C \ A)` with its upper bound `f`; ordered by `f`, ties by `A` (deterministic).
#[derive(Clone, Copy, Debug)]
struct Entry {
    f: f64,
    a: u64,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        self.f.total_cmp(&o.f).then(o.a.cmp(&self.a))
    }
}

/// Whether `x` is above `-inf` (false for NaN: a NaN potential counts as forbidden).
#[inline]
fn live(x: f64) -> bool {
    x > f64::NEG_INFINITY
}

/// Why the walk stopped early (a budget ran out).
type Stop = StopReason;

struct Search<'a, M: SplitModel, B> {
    model: &'a M,
    bound: &'a B,
    opts: &'a AstarOptions,
    full: Subset,
    table: Option<Vec<M::Stat>>,
    nodes: Vec<Node<M::Stat>>,
    index: Index,
    store_bytes: u64,
    peak_bytes: u64,
    stats: AstarStats,
    start: Instant,
    incumbent: Tree,
    lb: f64,
}

impl<M: SplitModel, B: SubtreeBound<M>> Search<'_, M, B> {
    fn run(mut self) -> Result<AstarResult, ExactError> {
        self.note_bytes();
        let root = match self.node_of(self.full) {
            Ok(r) => r,
            Err(stop) => return Ok(self.finish(None, stop)),
        };
        if self.nodes[root].u == f64::NEG_INFINITY {
            return self.no_finite_tree();
        }
        let mut since_completion = 0u64;
        let mut completion_cost = 0u64;
        let stop = loop {
            let r = &self.nodes[root];
            if r.state == State::Solved {
                break StopReason::Solved;
            }
            if r.u <= self.lb + self.tol() {
                break StopReason::GapClosed;
            }
            if let Err(stop) = self.check_time() {
                break stop;
            }
            self.stats.iterations += 1;
            let before = self.stats.splits_evaluated;
            if let Err(stop) = self.visit(root) {
                break stop;
            }
            if self.nodes[root].state == State::Dead {
                return self.no_finite_tree();
            }
            // Complete the best partial hierarchy into a tree now and then (deterministically:
            // when the splits scored since the last completion outweigh its cost).
            since_completion += self.stats.splits_evaluated - before;
            if self.stats.iterations == 1 || since_completion >= completion_cost.max(256) * 8 {
                let mut cost = 0;
                let t = self.complete(self.full, &mut cost);
                completion_cost = cost;
                since_completion = 0;
                self.offer(t);
            }
        };
        let solved = (stop == StopReason::Solved).then_some(root as u32);
        Ok(self.finish(solved, stop))
    }

    fn tol(&self) -> f64 {
        self.opts.tol * self.lb.abs().max(1.0)
    }

    fn no_finite_tree(self) -> Result<AstarResult, ExactError> {
        if self.lb > f64::NEG_INFINITY {
            // Only round-off could kill the root under a finite incumbent: return it.
            let root = self.index.get(&self.full.0).copied();
            return Ok(self.finish(root, StopReason::GapClosed));
        }
        Err(ExactError::NoFiniteTree)
    }

    fn finish(mut self, solved: Option<u32>, stop: StopReason) -> AstarResult {
        if solved.is_some_and(|r| self.nodes[r as usize].state == State::Solved) {
            let t = Tree::from_splits_trusted(self.full, |c| {
                let a = Subset(self.nodes[self.index[&c.0] as usize].best);
                (a, c.minus(a))
            });
            self.offer(t);
        }
        let ub = self
            .index
            .get(&self.full.0)
            .map_or(f64::INFINITY, |&r| self.nodes[r as usize].u);
        let certified = matches!(stop, StopReason::Solved | StopReason::GapClosed)
            || ub <= self.lb + self.tol();
        let mut stats = self.stats;
        stats.trellis_nodes = self.nodes.len() as u64;
        stats.peak_bytes = self.peak_bytes;
        stats.seconds = self.start.elapsed().as_secs_f64();
        AstarResult {
            tree: self.incumbent,
            log_likelihood: self.lb,
            upper_bound: ub.max(self.lb),
            certified,
            stop,
            stats,
        }
    }

    /// Makes `t` the incumbent if it is better.
    fn offer(&mut self, t: Tree) {
        let ll = t.log_likelihood(self.model);
        if ll > self.lb {
            self.lb = ll;
            self.incumbent = t;
        }
    }

    // ---- budget and memory ----

    fn check_time(&self) -> Result<(), Stop> {
        match self.opts.budget.max_seconds {
            Some(s) if self.start.elapsed().as_secs_f64() >= s => Err(StopReason::Seconds),
            _ => Ok(()),
        }
    }

    fn bytes(&self) -> u64 {
        let node = std::mem::size_of::<Node<M::Stat>>() as u64;
        let table = self
            .table
            .as_ref()
            .map_or(0, |t| (t.len() * std::mem::size_of::<M::Stat>()) as u64);
        self.nodes.capacity() as u64 * node
            + self.index.capacity() as u64 * MAP_ENTRY_BYTES
            + self.store_bytes
            + table
    }

    fn note_bytes(&mut self) {
        self.peak_bytes = self.peak_bytes.max(self.bytes());
    }

    /// Bytes still allowed.
    fn room(&self) -> u64 {
        self.opts
            .budget
            .max_bytes
            .map_or(u64::MAX, |m| m.saturating_sub(self.bytes()))
    }

    // ---- nodes ----

    #[inline]
    fn stat(&self, s: Subset) -> M::Stat {
        match &self.table {
            Some(t) => t[s.index()].clone(),
            None => self.model.stat(s),
        }
    }

    /// The current upper bound of a child: 0 for a leaf, `U` of its node, else `quick`.
    #[inline]
    fn upper(&self, x: Subset, sx: &M::Stat) -> f64 {
        if x.is_singleton() {
            return 0.0;
        }
        match self.index.get(&x.0) {
            Some(&i) => self.nodes[i as usize].u,
            None => self.bound.quick(x, sx),
        }
    }

    /// The node of cluster `x` (not a leaf), created with its heuristic bound if new.
    fn node_of(&mut self, x: Subset) -> Result<usize, Stop> {
        if let Some(&i) = self.index.get(&x.0) {
            return Ok(i as usize);
        }
        let node_size = std::mem::size_of::<Node<M::Stat>>() as u64;
        if self.opts.budget.max_bytes.is_some() {
            let mut need = 0;
            if self.nodes.len() == self.nodes.capacity() {
                need += self.nodes.capacity().max(4) as u64 * node_size;
            }
            if self.index.len() == self.index.capacity() {
                need += (2 * self.index.capacity() as u64 + 16) * MAP_ENTRY_BYTES;
            }
            if need > self.room() {
                return Err(StopReason::Bytes);
            }
        }
        let stat = self.stat(x);
        let u = self.bound.bound(x, &stat).min(self.bound.quick(x, &stat));
        let state = if u == f64::NEG_INFINITY {
            State::Dead
        } else {
            State::Fresh
        };
        let i = self.nodes.len();
        self.nodes.push(Node {
            set: x,
            stat,
            u,
            state,
            best: 0,
            store: None,
        });
        self.index.insert(x.0, i as u32);
        self.note_bytes();
        Ok(i)
    }

    fn solved(&self, x: Subset) -> bool {
        x.is_singleton()
            || self
                .index
                .get(&x.0)
                .is_some_and(|&i| self.nodes[i as usize].state == State::Solved)
    }

    // ---- the walk ----

    fn visit(&mut self, i: usize) -> Result<(), Stop> {
        match self.nodes[i].state {
            State::Solved | State::Dead => Ok(()),
            State::Fresh => self.expand(i),
            State::Open => {
                let Some((_, a)) = self.fresh_top(i)? else {
                    self.kill(i);
                    return Ok(());
                };
                let c = self.nodes[i].set;
                for x in [Subset(a), c.minus(Subset(a))] {
                    if !x.is_singleton() {
                        let j = self.node_of(x)?;
                        self.visit(j)?;
                    }
                }
                self.update(i)
            }
        }
    }

    fn expand(&mut self, i: usize) -> Result<(), Stop> {
        if let Some(m) = self.opts.budget.max_expansions {
            if self.stats.clusters_expanded >= m {
                return Err(StopReason::Expansions);
            }
        }
        self.check_time()?;
        let store = self.enumerate(i, self.opts.splits_kept.max(1))?;
        self.store_bytes += store.bytes();
        self.nodes[i].store = Some(Box::new(store));
        self.nodes[i].state = State::Open;
        self.stats.clusters_expanded += 1;
        self.note_bytes();
        self.update(i)
    }

    /// Backs up node `i`'s bound from its fresh top split; marks it solved or dead.
    fn update(&mut self, i: usize) -> Result<(), Stop> {
        match self.fresh_top(i)? {
            None => self.kill(i),
            Some((f, a)) => {
                let c = self.nodes[i].set;
                let node = &mut self.nodes[i];
                node.u = node.u.min(f);
                if self.solved(Subset(a)) && self.solved(c.minus(Subset(a))) {
                    let node = &mut self.nodes[i];
                    node.state = State::Solved;
                    node.best = a;
                    self.drop_store(i);
                }
            }
        }
        Ok(())
    }

    fn kill(&mut self, i: usize) {
        self.nodes[i].state = State::Dead;
        self.nodes[i].u = f64::NEG_INFINITY;
        self.drop_store(i);
    }

    fn drop_store(&mut self, i: usize) {
        if let Some(st) = self.nodes[i].store.take() {
            self.store_bytes -= st.bytes();
        }
    }

    /// The best split of open node `i` with its current `f` (refreshing stale entries and
    /// re-enumerating when the residual reaches the top); `None` when no split is finite.
    fn fresh_top(&mut self, i: usize) -> Result<Option<(f64, u64)>, Stop> {
        let c = self.nodes[i].set;
        loop {
            let st = self.nodes[i]
                .store
                .as_ref()
                .expect("open nodes have a store");
            let (top, residual, cap) = (st.heap.peek().copied(), st.residual, st.cap);
            match top {
                Some(e) if e.f >= residual => {
                    let (a, b) = (Subset(e.a), c.minus(Subset(e.a)));
                    let cur = self.split_value(i, a, b)?;
                    if cur >= e.f {
                        return Ok(Some((cur, e.a)));
                    }
                    let heap = &mut self.nodes[i].store.as_mut().expect("open").heap;
                    heap.pop();
                    if cur > f64::NEG_INFINITY {
                        heap.push(Entry { f: cur, a: e.a });
                    }
                }
                None if residual == f64::NEG_INFINITY => return Ok(None),
                _ => {
                    let store = self.enumerate(i, cap.saturating_mul(2))?;
                    self.stats.reenumerations += 1;
                    self.drop_store(i);
                    self.store_bytes += store.bytes();
                    self.nodes[i].store = Some(Box::new(store));
                    self.note_bytes();
                }
            }
        }
    }

    /// `log psi(A, B) + U(A) + U(B)` with the children's nodes (created if new).
    fn split_value(&mut self, i: usize, a: Subset, b: Subset) -> Result<f64, Stop> {
        let part = |x: Subset, s: &mut Self| -> Result<(f64, M::Stat), Stop> {
            if x.is_singleton() {
                Ok((0.0, s.stat(x)))
            } else {
                let j = s.node_of(x)?;
                Ok((s.nodes[j].u, s.nodes[j].stat.clone()))
            }
        };
        let (ua, sa) = part(a, self)?;
        let (ub, sb) = part(b, self)?;
        let lp = self.model.log_psi_with(a, &sa, b, &sb, &self.nodes[i].stat);
        if !live(lp) {
            return Ok(f64::NEG_INFINITY);
        }
        let f = lp + ua + ub;
        Ok(if live(f) { f } else { f64::NEG_INFINITY })
    }

    /// Scores every split of node `i` and keeps the best `cap` (fewer if the byte budget
    /// says so) with the residual of the others.
    fn enumerate(&mut self, i: usize, cap: usize) -> Result<Store, Stop> {
        let c = self.nodes[i].set;
        let sc = self.nodes[i].stat.clone();
        let total = (1u64 << (c.len() - 1)) - 1;
        if let Some(m) = self.opts.budget.max_splits {
            if self.stats.splits_evaluated + total > m {
                return Err(StopReason::Splits);
            }
        }
        let entry = std::mem::size_of::<Entry>() as u64;
        let room = self
            .room()
            .saturating_sub(std::mem::size_of::<Store>() as u64)
            / entry;
        let cap = (cap as u64).min(total).min(room) as usize;
        if cap == 0 {
            return Err(StopReason::Bytes);
        }
        let mut heap: BinaryHeap<Reverse<Entry>> = BinaryHeap::with_capacity(cap);
        let mut residual = f64::NEG_INFINITY;
        for (count, (a, b)) in c.splits().enumerate() {
            if count & 0x3fff == 0x3fff {
                self.check_time()?;
            }
            let (sa, sb) = (self.stat(a), self.stat(b));
            let lp = self.model.log_psi_with(a, &sa, b, &sb, &sc);
            if !live(lp) {
                continue;
            }
            let f = lp + self.upper(a, &sa) + self.upper(b, &sb);
            if !live(f) {
                continue;
            }
            let e = Entry { f, a: a.0 };
            if heap.len() < cap {
                heap.push(Reverse(e));
            } else {
                let min = heap.peek().expect("cap >= 1").0;
                if e > min {
                    residual = residual.max(min.f);
                    heap.pop();
                    heap.push(Reverse(e));
                } else {
                    residual = residual.max(f);
                }
            }
        }
        self.stats.splits_evaluated += total;
        let entries: Vec<Entry> = heap.into_vec().into_iter().map(|r| r.0).collect();
        Ok(Store {
            heap: BinaryHeap::from(entries),
            residual,
            cap,
        })
    }

    // ---- incumbents ----

    /// A tree over `c` along the current best splits (greedy below unexpanded clusters);
    /// `cost` counts the potentials greedy evaluates.
    fn complete(&self, c: Subset, cost: &mut u64) -> Tree {
        if c.is_singleton() {
            return Tree::leaf(c.0.trailing_zeros() as usize);
        }
        let node = self.index.get(&c.0).map(|&i| &self.nodes[i as usize]);
        let a = match node {
            Some(n) if n.state == State::Solved => Some(n.best),
            Some(n) if n.state == State::Open => {
                n.store.as_ref().and_then(|s| s.heap.peek()).map(|e| e.a)
            }
            _ => None,
        };
        match a {
            Some(a) => Tree::join_disjoint(
                self.complete(Subset(a), cost),
                self.complete(c.minus(Subset(a)), cost),
            ),
            None => self.greedy_over(c, cost),
        }
    }

    /// Greedy agglomeration of the leaves of `c` (the pair with the largest `log psi` first).
    fn greedy_over(&self, c: Subset, cost: &mut u64) -> Tree {
        let mut parts: Vec<(Subset, Tree, M::Stat)> = c
            .iter()
            .map(|i| {
                (
                    Subset::singleton(i),
                    Tree::leaf(i),
                    self.stat(Subset::singleton(i)),
                )
            })
            .collect();
        while parts.len() > 1 {
            let (mut bi, mut bj, mut best) = (0, 1, f64::NEG_INFINITY);
            for i in 0..parts.len() {
                for j in i + 1..parts.len() {
                    let (x, y) = (&parts[i], &parts[j]);
                    let u = x.0.union(y.0);
                    let v = self.model.log_psi_with(x.0, &x.2, y.0, &y.2, &self.stat(u));
                    *cost += 1;
                    if v > best {
                        (bi, bj, best) = (i, j, v);
                    }
                }
            }
            let y = parts.swap_remove(bj);
            let x = parts.swap_remove(bi);
            let u = x.0.union(y.0);
            parts.push((u, Tree::join_disjoint(x.1, y.1), self.stat(u)));
        }
        parts.pop().expect("a non-empty cluster").1
    }
}
