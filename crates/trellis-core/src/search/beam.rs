//! Beam search over agglomerative merge sequences, as the Cluster Trellis paper ran it.
//!
//! A state is a set of current clusters with its cumulative log-likelihood. Every state is
//! extended by its `beam_size` best pairs by `log psi`; all candidates are ranked by cumulative
//! log-likelihood, duplicates are dropped, and the best `beam_size` are kept.
//!
//! A duplicate is a candidate whose set of current clusters equals that of a better-ranked one
//! (the same clusters reached by merging in another order). The reference implementation
//! detected duplicates by exactly equal totals instead; floating-point sums of the same terms
//! in another order need not be bit-identical, so it sometimes kept duplicates, which cost it
//! beam slots. Comparing cluster sets is exact; on the 10 reference jets of `truth_9.json` it
//! finds the same tree as the reference on 9 and a better one on the tenth.

use super::{check_leaves, Found, MergeScore, SearchError};
use crate::model::SplitModel;
use crate::subset::Subset;
use crate::tree::Tree;

/// The paper's beam size for `n` leaves: `min(3n, n(n-1)/2)` (at least 1).
pub fn default_beam_size(n: usize) -> usize {
    3usize
        .saturating_mul(n)
        .min(n.saturating_mul(n.saturating_sub(1)) / 2)
        .max(1)
}

/// Largest beam size the searches accept: a beam holds that many partial trees, each with up
/// to `N(N-1)/2` candidate merges.
pub const MAX_BEAM_SIZE: usize = 100_000;

#[derive(Clone)]
struct State {
    clusters: Vec<Subset>,
    merges: Vec<(Subset, Subset)>,
    total: f64,
}

/// How beam search recognises duplicate states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dedup {
    /// Two candidates are duplicates when their sets of current clusters are equal (exact).
    #[default]
    Clusters,
    /// Two candidates ranked next to each other are duplicates when their totals are bit-equal
    /// (the reference implementation's rule).
    EqualTotal,
}

/// Runs beam search with the given beam size (duplicates by cluster set) and returns the best
/// complete tree.
///
/// Errors for a model with no leaves or more than 64, and a beam size of 0 or above
/// [`MAX_BEAM_SIZE`] (likewise [`beam_search_with`] and [`beam_search_all`]).
pub fn beam_search<M: SplitModel>(model: &M, beam_size: usize) -> Result<Found, SearchError> {
    beam_search_with(model, beam_size, Dedup::Clusters)
}

/// Runs beam search with the given beam size and duplicate rule.
pub fn beam_search_with<M: SplitModel>(
    model: &M,
    beam_size: usize,
    dedup: Dedup,
) -> Result<Found, SearchError> {
    Ok(beam_search_all(model, beam_size, dedup)?
        .into_iter()
        .next()
        .expect("the final beam is never empty"))
}

/// Runs beam search and returns every tree of the final beam, best first (up to `beam_size`
/// distinct trees; the seeds of a beam-search sparse trellis).
pub fn beam_search_all<M: SplitModel>(
    model: &M,
    beam_size: usize,
    dedup: Dedup,
) -> Result<Vec<Found>, SearchError> {
    beam_search_scored(model, beam_size, dedup, MergeScore::Potential)
}

/// [`beam_search_all`] ranking merges and states by `score` (states by their running sum of
/// it); every tree's `log_likelihood` is the model's, and the trees come best first by it.
pub fn beam_search_scored<M: SplitModel>(
    model: &M,
    beam_size: usize,
    dedup: Dedup,
    score: MergeScore,
) -> Result<Vec<Found>, SearchError> {
    let cancel = crate::cancel::Cancel::new();
    let n = check_leaves(model.n_leaves())?;
    if beam_size == 0 || beam_size > MAX_BEAM_SIZE {
        return Err(SearchError::BeamSize { beam_size });
    }
    let mut cache: std::collections::HashMap<Subset, M::Stat> = std::collections::HashMap::new();
    let mut stat =
        |s: Subset| -> M::Stat { cache.entry(s).or_insert_with(|| model.stat(s)).clone() };
    let mut beam = vec![State {
        clusters: (0..n).map(Subset::singleton).collect(),
        merges: Vec::with_capacity(n.saturating_sub(1)),
        total: 0.0,
    }];
    for step in 1..n {
        if cancel.is_cancelled() {
            return Err(SearchError::Cancelled);
        }
        // The last merge completes every state into a tree over all leaves: all have the same
        // cluster set {X}, so the duplicate rule would keep one. Keep them all (distinct trees).
        let last = step + 1 == n;
        // (total, state index, i, j) candidates.
        let mut cands: Vec<(f64, usize, usize, usize)> = Vec::new();
        for (si, st) in beam.iter().enumerate() {
            // A large beam makes a long step: check within it too.
            if si % 64 == 63 && cancel.is_cancelled() {
                return Err(SearchError::Cancelled);
            }
            let k = st.clusters.len();
            let mut pairs: Vec<(f64, usize, usize)> = Vec::with_capacity(k * (k - 1) / 2);
            for i in 0..k {
                for j in i + 1..k {
                    let (a, b) = (st.clusters[i], st.clusters[j]);
                    let (sa, sb, sp) = (stat(a), stat(b), stat(a.union(b)));
                    pairs.push((score.of(model, a, &sa, b, &sb, &sp), i, j));
                }
            }
            pairs.sort_by(|x, y| y.0.total_cmp(&x.0));
            for &(lp, i, j) in pairs.iter().take(beam_size) {
                cands.push((st.total + lp, si, i, j));
            }
        }
        cands.sort_by(|x, y| y.0.total_cmp(&x.0));
        let mut next: Vec<State> = Vec::with_capacity(beam_size.min(cands.len()));
        let mut seen: std::collections::HashSet<Vec<Subset>> = std::collections::HashSet::new();
        let mut last_total: Option<f64> = None;
        for &(total, si, i, j) in &cands {
            if dedup == Dedup::EqualTotal && !last {
                let dup = last_total == Some(total);
                last_total = Some(total);
                if dup {
                    continue;
                }
            }
            if next.len() == beam_size {
                break;
            }
            let st = &beam[si];
            let (a, b) = (st.clusters[i], st.clusters[j]);
            let mut clusters: Vec<Subset> = st
                .clusters
                .iter()
                .enumerate()
                .filter(|&(x, _)| x != i && x != j)
                .map(|(_, &c)| c)
                .collect();
            clusters.push(a.union(b));
            if dedup == Dedup::Clusters && !last {
                let mut key = clusters.clone();
                key.sort_unstable();
                if !seen.insert(key) {
                    continue;
                }
            }
            let mut merges = st.merges.clone();
            merges.push((a, b));
            next.push(State {
                clusters,
                merges,
                total,
            });
        }
        beam = next;
    }
    let mut found: Vec<Found> = beam
        .into_iter()
        .map(|st| {
            let mut children: std::collections::HashMap<Subset, (Subset, Subset)> = st
                .merges
                .iter()
                .map(|&(a, b)| (a.union(b), (a, b)))
                .collect();
            let tree = Tree::from_splits_trusted(Subset::full(n), |s| {
                children.remove(&s).expect("merge recorded")
            });
            // The canonical score (the search ranks by its running sum, which may differ in
            // the last bits).
            Found {
                log_likelihood: tree.log_likelihood(model),
                tree,
            }
        })
        .collect();
    if score != MergeScore::Potential {
        // The revenue totals rank complete trees as the model does up to rounding: order by
        // the model's own score (a stable sort keeps the search's order among ties).
        found.sort_by(|x, y| y.log_likelihood.total_cmp(&x.log_likelihood));
    }
    Ok(found)
}
