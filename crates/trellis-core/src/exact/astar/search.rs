//! The AO* engine behind [`super::astar`]: the node arena, split stores, the walk, and the
//! incumbent completions.

use super::{AstarOptions, AstarResult, AstarStats, StopReason};
use crate::exact::bounds::SubtreeBound;
use crate::exact::ExactError;
use crate::model::SplitModel;
use crate::subset::Subset;
use crate::tree::Tree;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

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

/// Factor by which a cluster's store grows at each re-enumeration.
const GROWTH: usize = 4;

/// Bytes per map entry (key, value, control byte).
const MAP_ENTRY_BYTES: u64 = (std::mem::size_of::<(u64, u32)>() + 1) as u64;

/// Bytes of a hash map holding `capacity` entries: the table has about `8/7` as many buckets,
/// each an entry and a control byte, plus one group of control bytes.
fn map_bytes(capacity: u64) -> u64 {
    capacity * 8 / 7 * MAP_ENTRY_BYTES + 16
}

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
    #[inline]
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Entry {
    #[inline]
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

pub(super) struct Search<'a, M: SplitModel, B> {
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

impl<'a, M: SplitModel, B: SubtreeBound<M>> Search<'a, M, B> {
    /// A search with no nodes yet, the statistics `table` (if any) and the incumbent.
    pub(super) fn new(
        model: &'a M,
        bound: &'a B,
        opts: &'a AstarOptions,
        table: Option<Vec<M::Stat>>,
        start: Instant,
        (incumbent, lb): (Tree, f64),
    ) -> Self {
        Search {
            model,
            bound,
            opts,
            full: Subset::full(model.n_leaves()),
            table,
            nodes: Vec::new(),
            index: HashMap::default(),
            store_bytes: 0,
            peak_bytes: 0,
            stats: AstarStats::default(),
            start,
            incumbent,
            lb,
        }
    }

    pub(super) fn run(mut self) -> Result<AstarResult, ExactError> {
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
            + map_bytes(self.index.capacity() as u64)
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

    /// The bound a child's node would start with: 0 for a leaf, `U` of its node, else
    /// `min(bound, quick)`.
    #[inline]
    fn tight(&self, x: Subset, sx: &M::Stat) -> f64 {
        if x.is_singleton() {
            return 0.0;
        }
        match self.index.get(&x.0) {
            Some(&i) => self.nodes[i as usize].u,
            None => self.bound.bound(x, sx).min(self.bound.quick(x, sx)),
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
                // The map rehashes into twice the buckets while the old ones are still held.
                need += map_bytes(2 * self.index.capacity() as u64 + 16);
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
                    let store = self.enumerate(i, cap.saturating_mul(GROWTH))?;
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
            // Score with the cheap bounds first; a split that cannot enter the store counts
            // into the residual as it is, the others are refined with the children's full
            // bounds (their values when the split reaches the top), so stored `f` are tight.
            let f = lp + self.upper(a, &sa) + self.upper(b, &sb);
            if !live(f) {
                continue;
            }
            if heap.len() == cap && (Entry { f, a: a.0 }) <= heap.peek().expect("cap >= 1").0 {
                residual = residual.max(f);
                continue;
            }
            let f = lp + self.tight(a, &sa) + self.tight(b, &sb);
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
