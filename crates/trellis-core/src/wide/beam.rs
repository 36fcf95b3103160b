//! Beam search at any `N`, with the semantics of [`crate::search::beam_search_scored`] and
//! [`crate::search::Dedup::Clusters`]: every state is extended by its `beam_size` best pairs
//! (ties to the first pair, clusters in the state's order: survivors in their order, the new
//! cluster last); candidates are ranked by running total (ties to the earlier state, then its
//! better pair); a candidate whose set of clusters equals a better-ranked one's is dropped (not
//! at the last merge, which completes every state into a distinct tree); the best `beam_size`
//! are kept. The final trees come best first by the model's score.
//!
//! **Clusters** live in an arena (`arena.rs`): one slot per distinct leaf set (exact, by
//! bitset), with its cross sums against every leaf, so the cross sums of a new cluster with all
//! the others of a state cost O(N) together.
//!
//! **Pairs.** A pair's score depends on its two clusters only, so a state inherits its parent's:
//! each state keeps the pairs ranking at or above a bound, best first (at most 48 of them). A
//! child keeps its parent's pairs that avoid the two merged clusters and adds the new cluster's
//! pairs that rank above the bound: O(N + k log k) for `k` clusters. The walk over candidates
//! takes a few pairs from most states; when it wants more of a state's than it kept, that state
//! scans its `k (k − 1) / 2` pairs again for twice as many. A state's order of clusters is their
//! order of birth in its history, so ranks (and bounds) mean the same in every descendant; a
//! pair's cross sum is always the later-born cluster's row over the earlier's leaves, so a pair
//! scores the same bits however its state reached it. Duplicates are found by a hash of the set
//! of clusters and confirmed on the sets.
//!
//! **Cost** ([`work`]): about `beam_size · N²` steps of a state over its leaves (some tens of
//! nanoseconds each), plus the rare rescans; states are handled in parallel (rayon), the walk
//! over candidates in order.
//! Memory ([`memory_bytes`]): per state its cluster ids and kept pairs; the arena's rows.

use super::arena::{Arena, Grouped};
use super::model::Sums;
use super::{
    check_bytes, check_cancel, energy, from_merges, merge_score, Found, PairModel, Stat, WideError,
};
use crate::cancel::Cancel;
use crate::numeric::splitmix64_mix;
use crate::search::{MergeScore, MAX_BEAM_SIZE};
use rayon::prelude::*;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// The work of beam search over `n` leaves with `beam_size` states, in steps of one state over
/// one leaf: `Σ` over its `n − 1` merges of the states then in the beam (as many as the
/// candidates allow, up to `beam_size`) times `n`. About `beam_size · n²`; one unit took 11 to
/// 57 ns on one core of an AMD EPYC (N = 200 to 2000, beams of 100 and 3N). Rescans, rare on
/// the data measured, are not counted.
pub fn work(n: usize, beam_size: usize) -> f64 {
    let b = beam_size as f64;
    let (mut states, mut total) = (1.0f64, 0.0f64);
    for k in (2..=n).rev() {
        let pairs = (k * (k - 1) / 2) as f64;
        total += states * n as f64;
        states = b.min(states * b.min(pairs));
    }
    total
}

/// Pairs a child inherits at most, and a first scan keeps: the walk takes a few candidates from
/// most states; one it takes more from is scanned again for twice as many (up to `beam_size`).
const SHORT: usize = 48;

/// Bytes beam search needs besides its arena: two beams of states, each with its cluster ids
/// and births and its kept pairs, and the merge records.
pub fn memory_bytes(n: usize, beam_size: usize) -> f64 {
    let (b, nf) = (beam_size as f64, n as f64);
    2.0 * b * (nf * 8.0 + SHORT as f64 * 16.0) + b * nf * 16.0
}

/// No merge record before this one.
const NONE: u32 = u32::MAX;

/// A pair of clusters (slots, the first born first) and its score.
type Pair = (f64, u32, u32);

/// A rank: a score and the births of a pair's clusters.
type Bound = (f64, u32, u32);

/// A partial tree.
struct State {
    /// Its current clusters (slots), in order of birth.
    clusters: Vec<u32>,
    /// The birth of each: a leaf's index, or `n + t` for the cluster its `t`-th merge made.
    births: Vec<u32>,
    total: f64,
    /// Its last merge record.
    rec: u32,
    /// The hash of its set of clusters.
    key: u64,
    /// Every pair ranking at or before `bound`, best first (`None`: not known yet).
    pairs: Option<Vec<Pair>>,
    /// `None`: `pairs` holds every pair.
    bound: Option<Bound>,
}

/// A state's known pairs.
fn pairs(st: &State) -> &[Pair] {
    st.pairs.as_deref().unwrap_or(&[])
}

/// Per-thread scratch: the births of a state's clusters (indexed by slot) and their leaves.
#[derive(Default)]
struct Scratch {
    birth: Vec<u32>,
    leaves: Grouped,
}

impl Scratch {
    /// Fills the scratch for `st`.
    fn fill<S: Sums>(&mut self, arena: &Arena<S>, st: &State) {
        if self.birth.len() < arena.cap() {
            self.birth.resize(arena.cap(), 0);
        }
        for (&x, &b) in st.clusters.iter().zip(&st.births) {
            self.birth[x as usize] = b;
        }
        arena.group(&st.clusters, &mut self.leaves);
    }
}

/// Best first, then the first pair by the births of its clusters.
#[inline]
fn order(x: &Pair, y: &Pair, birth: &[u32]) -> Ordering {
    y.0.total_cmp(&x.0).then_with(|| {
        (birth[x.1 as usize], birth[x.2 as usize]).cmp(&(birth[y.1 as usize], birth[y.2 as usize]))
    })
}

/// Whether `p` ranks at or before `bound` (`None`: no bound).
#[inline]
fn within(p: &Pair, bound: Option<Bound>, birth: &[u32]) -> bool {
    bound.is_none_or(|(s, b1, b2)| match p.0.total_cmp(&s) {
        Ordering::Greater => true,
        Ordering::Less => false,
        Ordering::Equal => (birth[p.1 as usize], birth[p.2 as usize]) <= (b1, b2),
    })
}

/// The rank of `p`.
fn bound_of(p: &Pair, birth: &[u32]) -> Bound {
    (p.0, birth[p.1 as usize], birth[p.2 as usize])
}

/// What scoring a state's pairs reads.
struct Scorer<'a, M: PairModel> {
    model: &'a M,
    arena: &'a Arena<M::Sums>,
    score: MergeScore,
}

impl<M: PairModel> Scorer<'_, M> {
    /// The score of merging clusters `a` (the earlier) and `b` across `cross`.
    #[inline]
    fn score(&self, a: &Stat<M::Sums>, b: &Stat<M::Sums>, cross: M::Sums) -> f64 {
        merge_score(self.model, self.score, a, b, cross)
    }

    /// The best `keep` pairs of `st`, best first, and the bound of the last if others remain.
    fn scan(&self, st: &State, keep: usize, scratch: &mut Scratch) -> (Vec<Pair>, Option<Bound>) {
        let arena = self.arena;
        scratch.fill(arena, st);
        let (birth, g) = (&scratch.birth, &scratch.leaves);
        let cmp = |x: &Pair, y: &Pair| order(x, y, birth);
        let clusters = &st.clusters;
        let k = clusters.len();
        let stats: Vec<Stat<M::Sums>> = clusters.iter().map(|&x| arena.stat[x as usize]).collect();
        let mut buf: Vec<Pair> = Vec::with_capacity(2 * keep);
        // A pair that does not rank before the `keep`-th best so far never enters.
        let mut floor: Option<Pair> = None;
        let mut cut = false;
        for j in 1..k {
            // The later cluster's row against the earlier's leaves, as `inherit` sums them.
            let row = arena.row(clusters[j]);
            for i in 0..j {
                let v = self.score(&stats[i], &stats[j], g.cross(row, i));
                let p = (v, clusters[i], clusters[j]);
                if floor.is_some_and(|f| cmp(&p, &f) != Ordering::Less) {
                    continue;
                }
                buf.push(p);
                if buf.len() == 2 * keep {
                    buf.select_nth_unstable_by(keep - 1, cmp);
                    buf.truncate(keep);
                    floor = Some(buf[keep - 1]);
                    cut = true;
                }
            }
        }
        if buf.len() > keep {
            buf.select_nth_unstable_by(keep - 1, cmp);
            buf.truncate(keep);
            cut = true;
        }
        buf.sort_unstable_by(cmp);
        let bound = cut.then(|| bound_of(&buf[keep - 1], birth));
        (buf, bound)
    }

    /// The pairs of `child`, made from `parent` by merging slots `a` and `b` into `u` (its last
    /// cluster): the parent's pairs that avoid `a` and `b`, and `u`'s pairs, within the parent's
    /// bound; at most `keep` (the bound raised to the last kept when cut).
    fn inherit(
        &self,
        parent: &State,
        (a, b, u): (u32, u32, u32),
        child: &State,
        keep: usize,
        scratch: &mut Scratch,
    ) -> (Vec<Pair>, Option<Bound>) {
        let arena = self.arena;
        scratch.fill(arena, child);
        let (birth, g) = (&scratch.birth, &scratch.leaves);
        let bound = parent.bound;
        let (su, row) = (arena.stat[u as usize], arena.row(u));
        let others = &child.clusters[..child.clusters.len() - 1];
        let mut new: Vec<Pair> = others
            .iter()
            .enumerate()
            .map(|(p, &x)| {
                let v = self.score(&arena.stat[x as usize], &su, g.cross(row, p));
                (v, x, u)
            })
            .filter(|p| within(p, bound, birth))
            .collect();
        new.sort_unstable_by(|x, y| order(x, y, birth));
        let mut out: Vec<Pair> = Vec::with_capacity(keep);
        let mut old = pairs(parent)
            .iter()
            .filter(|p| p.1 != a && p.1 != b && p.2 != a && p.2 != b)
            .peekable();
        let mut new = new.into_iter().peekable();
        while out.len() < keep {
            let take_old = match (old.peek(), new.peek()) {
                (Some(o), Some(n)) => order(o, n, birth) == Ordering::Less,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            out.push(if take_old {
                *old.next().expect("peeked")
            } else {
                new.next().expect("peeked")
            });
        }
        let cut = old.peek().is_some() || new.peek().is_some();
        let bound = if cut {
            Some(bound_of(&out[keep - 1], birth))
        } else {
            bound
        };
        (out, bound)
    }
}

/// A candidate in the merge of the states' sorted pair lists: best total first, then the
/// earlier state, then its better pair (the stable sort of the mask version).
#[derive(PartialEq)]
struct Cand {
    total: f64,
    state: u32,
    rank: u32,
}

impl Eq for Cand {}

impl Ord for Cand {
    fn cmp(&self, o: &Cand) -> std::cmp::Ordering {
        self.total
            .total_cmp(&o.total)
            .then(o.state.cmp(&self.state))
            .then(o.rank.cmp(&self.rank))
    }
}

impl PartialOrd for Cand {
    fn partial_cmp(&self, o: &Cand) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// Beam search over all leaves of `model` with `beam_size` states, ranking merges and states
/// by `score`; every tree of the final beam (up to `beam_size` distinct trees), best first by
/// the model's `log psi` (for [`MergeScore::Potential`], the search's own order, as the mask
/// version). Errors for a model with no leaves, a beam size of 0 or above
/// [`MAX_BEAM_SIZE`], memory that does not fit, and when cancelled.
pub fn beam<M: PairModel>(
    model: &M,
    beam_size: usize,
    score: MergeScore,
) -> Result<Vec<Found>, WideError> {
    beam_keeping(model, beam_size, score, SHORT)
}

/// [`beam`] with states inheriting at most `short` pairs (tests try small values: the result
/// is the same, only the work changes).
pub(super) fn beam_keeping<M: PairModel>(
    model: &M,
    beam_size: usize,
    score: MergeScore,
    short: usize,
) -> Result<Vec<Found>, WideError> {
    let n = model.n_leaves();
    if n == 0 {
        return Err(WideError::Empty);
    }
    if beam_size == 0 || beam_size > MAX_BEAM_SIZE {
        return Err(WideError::BeamSize { beam_size });
    }
    let cancel = Cancel::new();
    check_bytes("beam search's states", memory_bytes(n, beam_size))?;
    let mut arena = Arena::new(model, n + 2 * beam_size.min(n) + 64)?;
    let mut records: Vec<[u32; 4]> = Vec::new();
    let mut beam = vec![State {
        clusters: (0..n as u32).collect(),
        births: (0..n as u32).collect(),
        total: 0.0,
        rec: NONE,
        key: (0..n)
            .map(|i| splitmix64_mix(arena.hash[i]))
            .fold(0, u64::wrapping_add),
        pairs: None,
        bound: None,
    }];
    let mut union = vec![0u64; arena.words];
    let mut scratch = Scratch::default();
    for step in 1..n {
        check_cancel(&cancel)?;
        let last = step + 1 == n;
        let k = n - step + 1;
        let m = beam_size.min(k * (k - 1) / 2);
        // Every state's best pair: inherited, or scanned when none was.
        beam.par_iter_mut()
            .map_init(Scratch::default, |scratch, st| {
                if st.pairs.is_none() || (pairs(st).is_empty() && st.bound.is_some()) {
                    check_cancel(&cancel)?;
                    let scorer = Scorer {
                        model,
                        arena: &arena,
                        score,
                    };
                    let (p, b) = scorer.scan(st, short.min(m), scratch);
                    (st.pairs, st.bound) = (Some(p), b);
                }
                Ok(())
            })
            .collect::<Result<(), WideError>>()?;
        let mut heap: BinaryHeap<Cand> = (0..beam.len())
            .filter_map(|s| {
                pairs(&beam[s]).first().map(|p| Cand {
                    total: beam[s].total + p.0,
                    state: s as u32,
                    rank: 0,
                })
            })
            .collect();
        records.try_reserve(beam_size).map_err(|_| {
            WideError::TooLarge("beam search's merge records could not be allocated".into())
        })?;
        // Accepted children: (parent, merged slots, new slot) and the state without its pairs.
        let mut next: Vec<((usize, u32, u32, u32), State)> = Vec::with_capacity(beam_size);
        let mut seen: HashMap<u64, Vec<u32>> = HashMap::new();
        let mut walked = 0usize;
        while next.len() < beam_size {
            let Some(c) = heap.pop() else { break };
            walked += 1;
            if walked.is_multiple_of(256) {
                check_cancel(&cancel)?;
            }
            let (si, r) = (c.state as usize, c.rank as usize);
            if r + 1 < m {
                let st = &mut beam[si];
                if pairs(st).len() <= r + 1 && st.bound.is_some() {
                    // The walk wants more of this state's pairs than it kept: scan again.
                    let keep = (2 * (r + 1)).max(short).min(m);
                    let scorer = Scorer {
                        model,
                        arena: &arena,
                        score,
                    };
                    let (p, b) = scorer.scan(st, keep, &mut scratch);
                    (st.pairs, st.bound) = (Some(p), b);
                }
                if let Some(nx) = pairs(st).get(r + 1) {
                    heap.push(Cand {
                        total: st.total + nx.0,
                        state: c.state,
                        rank: c.rank + 1,
                    });
                }
            }
            let st = &beam[si];
            let (_, a, b) = pairs(st)[r];
            for (w, (x, y)) in union
                .iter_mut()
                .zip(arena.bits_of(a).iter().zip(arena.bits_of(b)))
            {
                *w = x | y;
            }
            let h = arena.hash[a as usize] ^ arena.hash[b as usize];
            let found = arena.find(&union, h);
            let key = st
                .key
                .wrapping_sub(splitmix64_mix(arena.hash[a as usize]))
                .wrapping_sub(splitmix64_mix(arena.hash[b as usize]))
                .wrapping_add(splitmix64_mix(h));
            if let (false, Some(u), Some(same)) = (last, found, seen.get(&key)) {
                let dup = same.iter().any(|&o| {
                    arena.same_set(&next[o as usize].1.clusters, &st.clusters, [a, b], u)
                });
                if dup {
                    continue;
                }
            }
            let u = match found {
                Some(u) => u,
                None => arena.add(a, b, &union, h)?,
            };
            let (mut clusters, mut births) = (Vec::with_capacity(k - 1), Vec::with_capacity(k - 1));
            for (&x, &t) in st.clusters.iter().zip(&st.births) {
                if x != a && x != b {
                    clusters.push(x);
                    births.push(t);
                }
            }
            clusters.push(u);
            births.push((n + step - 1) as u32);
            records.push([
                st.rec,
                arena.perm[a as usize],
                arena.perm[b as usize],
                arena.perm[u as usize],
            ]);
            if !last {
                seen.entry(key).or_default().push(next.len() as u32);
            }
            let child = State {
                clusters,
                births,
                total: c.total,
                rec: (records.len() - 1) as u32,
                key,
                pairs: None,
                bound: None,
            };
            next.push(((si, a, b, u), child));
        }
        // The children's pairs, from their parents'.
        if !last {
            let keep = short.min(beam_size.min((k - 1) * (k - 2) / 2));
            next.par_iter_mut()
                .map_init(Scratch::default, |scratch, ((si, a, b, u), child)| {
                    let parent = &beam[*si];
                    let scorer = Scorer {
                        model,
                        arena: &arena,
                        score,
                    };
                    let (p, bound) = scorer.inherit(parent, (*a, *b, *u), child, keep, scratch);
                    (child.pairs, child.bound) = (Some(p), bound);
                })
                .for_each(|()| ());
        }
        beam = next.into_iter().map(|(_, st)| st).collect();
        arena.collect(beam.iter().map(|st| st.clusters.as_slice()));
    }
    finish(model, n, &beam, &records, score, &cancel)
}

/// The trees of the final beam with their `log psi`, best first.
fn finish<M: PairModel>(
    model: &M,
    n: usize,
    beam: &[State],
    records: &[[u32; 4]],
    score: MergeScore,
    cancel: &Cancel,
) -> Result<Vec<Found>, WideError> {
    let mut found: Vec<Found> = beam
        .par_iter()
        .map(|st| {
            check_cancel(cancel)?;
            let mut chain = Vec::with_capacity(n.saturating_sub(1));
            let mut r = st.rec;
            while r != NONE {
                chain.push(records[r as usize]);
                r = records[r as usize][0];
            }
            chain.reverse();
            let mut node: HashMap<u32, usize> = HashMap::with_capacity(chain.len());
            let id = |node: &HashMap<u32, usize>, p: u32| {
                if (p as usize) < n {
                    p as usize
                } else {
                    node[&p]
                }
            };
            let mut merges = Vec::with_capacity(chain.len());
            for (k, &[_, a, b, c]) in chain.iter().enumerate() {
                merges.push((id(&node, a), id(&node, b)));
                node.insert(c, n + k);
            }
            let tree = from_merges(n, &merges)?;
            Ok(Found {
                log_psi: energy::log_psi(model, &tree)?,
                tree,
            })
        })
        .collect::<Result<_, WideError>>()?;
    if score != MergeScore::Potential {
        // Revenue totals rank complete trees as the model does up to rounding: order by the
        // model's own score (stable: the search's order among ties).
        found.sort_by(|x, y| y.log_psi.total_cmp(&x.log_psi));
    }
    Ok(found)
}
