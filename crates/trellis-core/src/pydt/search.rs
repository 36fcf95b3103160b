//! Greedy Bayesian EM search over tree structures (spec §2.9, paper §5.2).
//!
//! Initialisation by sequential attachment; then a list of the B best trees (B = 10), from which
//! a random subtree is detached, every re-attachment scored by the log joint at the current times
//! (segment midpoints below the subtree's time and, for the PYDT, existing nodes), and full EM
//! run on the best few candidates. Probit data go through EP sites ([`super::ep`]).

use super::bp::{Leaves, Messages};
use super::em::{self, em_times, EmSettings};
use super::ep::{self, EpSettings, Sites};
use super::params::{Params, Tables};
use super::probit::Binary;
use super::tree::{Position, PydtTree};
use super::PydtError;
use rand::seq::SliceRandom;
use rand::{Rng, RngExt};
use rayon::prelude::*;

/// What the search observes.
#[derive(Debug, Clone, PartialEq)]
pub enum Observations {
    /// Continuous points (Gaussian leaf messages, usually exact).
    Gaussian(Leaves),
    /// Binary points through the probit link (EP in each E-step).
    Probit(Binary),
}

/// Settings of [`greedy_search`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchSettings {
    /// Size B of the best-tree list (spec: 10).
    pub list_size: usize,
    /// Detach/re-attach search steps after the sequential start.
    pub iterations: usize,
    /// Candidates per step that get a full EM (spec: 3).
    pub em_candidates: usize,
    /// Trial times on each segment ending at a leaf: 1 is the paper's midpoint only; k > 1 adds
    /// the points 1 − t = (1 − t_parent)·2^{−j} for j = 3, 6, 10, 15, … (k in all), so a point
    /// can join a tight cluster late rather than at half its parent's distance to 1.
    pub leaf_segment_times: usize,
    /// EM on each candidate.
    pub em: EmSettings,
    /// EM on the start tree and on the final best tree.
    pub final_em: EmSettings,
    /// EP for probit data (its `rounds` EP/EM alternations for the start and the final tree).
    pub ep: EpSettings,
    /// EP/EM alternations for each candidate (warm-started from its parent's sites).
    pub candidate_ep_rounds: usize,
}

impl Default for SearchSettings {
    fn default() -> Self {
        Self {
            list_size: 10,
            iterations: 100,
            em_candidates: 3,
            leaf_segment_times: 4,
            em: EmSettings {
                cycles: 3,
                direct_iterations: 200,
                ..EmSettings::default()
            },
            final_em: EmSettings::default(),
            ep: EpSettings::default(),
            candidate_ep_rounds: 1,
        }
    }
}

/// The result of [`greedy_search`] or [`fit_times`].
#[derive(Debug, Clone)]
pub struct SearchResult {
    /// The best tree found (MAP estimate of structure and times).
    pub tree: PydtTree,
    /// Its parameters (c, σ² moved if the EM settings learn them).
    pub params: Params,
    /// Its objective: log p(X, T, t) (probit: with the EP approximation of log p(Y | T, t)),
    /// plus the hyper-parameters' log priors when EM learns them.
    pub objective: f64,
    /// Best objective after the start and after each search step.
    pub trace: Vec<f64>,
    /// Full EM runs made.
    pub em_runs: usize,
}

/// EM over the times of a fixed tree for either kind of data (with `settings.final_em`; probit
/// data alternate EP at the current times with EM over the times given the EP sites).
pub fn fit_times(
    tree: &PydtTree,
    data: &Observations,
    params: &Params,
    settings: &SearchSettings,
) -> Result<SearchResult, PydtError> {
    let mut fitter = Fitter::new(data, params, settings)?;
    tree.validate()?;
    let sites = fitter.initial_sites();
    let fit = fitter.fit_restarted(tree, params, &settings.final_em, sites, settings.ep.rounds)?;
    Ok(SearchResult {
        objective: fit.objective,
        trace: vec![fit.objective],
        tree: fit.tree,
        params: fit.params,
        em_runs: 1,
    })
}

/// The greedy search of spec §2.9 from a sequential-attachment start; deterministic given `rng`.
pub fn greedy_search<R: Rng + ?Sized>(
    data: &Observations,
    params: &Params,
    settings: &SearchSettings,
    rng: &mut R,
) -> Result<SearchResult, PydtError> {
    if settings.list_size == 0 || settings.em_candidates == 0 {
        return Err(PydtError::Data(
            "the search needs list_size >= 1 and em_candidates >= 1".into(),
        ));
    }
    // The token first, handed to the EM runs below (on this thread and on rayon's).
    let cancel = crate::cancel::Cancel::new();
    let mut fitter = Fitter::new(data, params, settings)?;
    let start = crate::cancel::scope(&cancel, || fitter.sequential_start(params, rng))?;
    let first = crate::cancel::scope(&cancel, || {
        fitter.fit_restarted(
            &start.tree,
            params,
            &settings.final_em,
            start.sites,
            settings.ep.rounds,
        )
    })?;
    let mut em_runs = 1;
    let mut list = vec![Entry::new(first)];
    let mut trace = vec![list[0].fit.objective];
    for _ in 0..settings.iterations {
        if cancel.is_cancelled() {
            return Err(PydtError::Cancelled);
        }
        let j = rng.random_range(0..list.len());
        let parent = list[j].fit.clone();
        let mut candidates = fitter.candidates(&parent, rng);
        candidates.truncate(settings.em_candidates);
        // The candidates' EM runs are independent: in parallel, inserted in their order.
        let multifurcating = parent.params.multifurcating();
        let fits: Vec<Result<Vec<Fit>, PydtError>> = candidates
            .par_iter()
            .map(|tree| {
                crate::cancel::scope(&cancel, || {
                    let mut f = Fitter::checked(data, settings);
                    let rounds = settings.candidate_ep_rounds;
                    let fit = f.fit_one(
                        tree,
                        &parent.params,
                        &settings.em,
                        parent.sites.clone(),
                        rounds,
                    )?;
                    // EM may shrink a branch to nothing: the same tree with that divergence merged
                    // into its parent's is a candidate too (PYDT only).
                    let collapsed =
                        match multifurcating.then(|| collapse_short(&fit.tree)).flatten() {
                            Some(t) => Some(f.fit_one(
                                &t,
                                &fit.params,
                                &settings.em,
                                fit.sites.clone(),
                                rounds,
                            )?),
                            None => None,
                        };
                    Ok(std::iter::once(fit).chain(collapsed).collect())
                })
            })
            .collect();
        for fit in fits {
            for fit in fit? {
                em_runs += 1;
                insert(&mut list, Entry::new(fit), settings.list_size);
            }
        }
        trace.push(list[0].fit.objective);
    }
    let best = list.swap_remove(0).fit;
    let polished = crate::cancel::scope(&cancel, || {
        fitter.fit_restarted(
            &best.tree,
            &best.params,
            &settings.final_em,
            best.sites.clone(),
            settings.ep.rounds,
        )
    })?;
    em_runs += 1;
    let best = if polished.objective >= best.objective {
        polished
    } else {
        best
    };
    if best.objective > *trace.last().expect("start") {
        trace.push(best.objective);
    }
    Ok(SearchResult {
        objective: best.objective,
        tree: best.tree,
        params: best.params,
        trace,
        em_runs,
    })
}

/// A tree with fitted times, its parameters, objective and (probit) EP sites.
#[derive(Debug, Clone)]
struct Fit {
    tree: PydtTree,
    params: Params,
    objective: f64,
    sites: Option<Sites>,
}

/// A member of the best-tree list with its topology key.
struct Entry {
    fit: Fit,
    key: Vec<Vec<usize>>,
}

impl Entry {
    fn new(fit: Fit) -> Self {
        let key = fit.tree.clusters();
        Self { fit, key }
    }
}

/// Insert into the list (sorted by decreasing objective, at most `cap` entries, one entry per
/// topology: the better of two fits of the same topology stays).
fn insert(list: &mut Vec<Entry>, e: Entry, cap: usize) {
    if let Some(i) = list.iter().position(|x| x.key == e.key) {
        if list[i].fit.objective >= e.fit.objective {
            return;
        }
        list.remove(i);
    }
    let at = list
        .iter()
        .position(|x| x.fit.objective < e.fit.objective)
        .unwrap_or(list.len());
    if at < cap {
        list.insert(at, e);
        list.truncate(cap);
    }
}

/// The data, the buffers and the settings of one search.
struct Fitter<'a> {
    data: &'a Observations,
    settings: &'a SearchSettings,
    msgs: Messages,
    order: Vec<usize>,
}

impl<'a> Fitter<'a> {
    fn new(
        data: &'a Observations,
        params: &Params,
        settings: &'a SearchSettings,
    ) -> Result<Self, PydtError> {
        params.validate()?;
        match data {
            Observations::Gaussian(leaves) => {
                leaves.validate()?;
                if let Some((i, j)) = leaves.duplicate_exact_rows() {
                    return Err(PydtError::Data(format!(
                        "rows {i} and {j} are identical and observed without noise, which gives \
                         an infinite density; remove duplicates or set a leaf noise > 0"
                    )));
                }
            }
            Observations::Probit(b) => {
                if b.n == 0 || b.d == 0 {
                    return Err(PydtError::Data("no binary data".into()));
                }
            }
        }
        if data_n(data) == 0 {
            return Err(PydtError::Data("no data points".into()));
        }
        Ok(Self::checked(data, settings))
    }

    /// A fitter for data [`Fitter::new`] has already checked (the per-candidate fitters of a
    /// search step, which would otherwise re-scan the data for duplicate rows every time).
    fn checked(data: &'a Observations, settings: &'a SearchSettings) -> Self {
        Self {
            data,
            settings,
            msgs: Messages::default(),
            order: Vec::new(),
        }
    }

    fn initial_sites(&self) -> Option<Sites> {
        match self.data {
            Observations::Gaussian(_) => None,
            Observations::Probit(b) => Some(Sites::initial(b)),
        }
    }

    /// The leaf messages candidates are scored with: the data, or the current EP sites.
    fn scoring_leaves<'b>(&'b self, sites: &'b Option<Sites>) -> &'b Leaves {
        match (self.data, sites) {
            (Observations::Gaussian(l), _) => l,
            (Observations::Probit(_), Some(s)) => &s.leaves,
            (Observations::Probit(_), None) => unreachable!("probit fits carry sites"),
        }
    }

    /// [`Fitter::fit_one`] from `tree`'s times and, for a thorough fit (`restart`), also from
    /// re-spaced times (each node ln 2 after its parent): a time pushed to its parent's early in
    /// the search (a boundary optimum of a partial tree) has a vanishing gradient in z and
    /// cannot come back by itself. The better fit is returned.
    fn fit_restarted(
        &mut self,
        tree: &PydtTree,
        params: &Params,
        em_settings: &EmSettings,
        sites: Option<Sites>,
        rounds: usize,
    ) -> Result<Fit, PydtError> {
        let a = self.fit_one(tree, params, em_settings, sites.clone(), rounds)?;
        let b = self.fit_one(&respaced(tree), params, em_settings, sites, rounds)?;
        Ok(if b.objective > a.objective { b } else { a })
    }

    /// EM over the times of `tree` (for probit data, `rounds` alternations of EP at the current
    /// times and EM given the sites; the best objective seen is kept).
    fn fit_one(
        &mut self,
        tree: &PydtTree,
        params: &Params,
        em_settings: &EmSettings,
        sites: Option<Sites>,
        rounds: usize,
    ) -> Result<Fit, PydtError> {
        match self.data {
            Observations::Gaussian(leaves) => {
                let f = em_times(tree, leaves, params, em_settings)?;
                Ok(Fit {
                    objective: f.objective(),
                    tree: f.tree,
                    params: f.params,
                    sites: None,
                })
            }
            Observations::Probit(binary) => {
                let mut sites = sites.unwrap_or_else(|| Sites::initial(binary));
                let ep_settings = self.settings.ep;
                let mut tree = tree.clone();
                let mut params = *params;
                let mut best: Option<Fit> = None;
                for round in 0..=rounds {
                    ep::run(
                        &tree,
                        binary,
                        params.sigma2,
                        &mut sites,
                        &ep_settings,
                        &mut self.msgs,
                    )?;
                    let objective =
                        em::objective(&tree, &sites.leaves, &params, em_settings, &mut self.msgs)
                            + sites.total_ln_scale(&tree);
                    let gain = best
                        .as_ref()
                        .map_or(f64::INFINITY, |b| objective - b.objective);
                    if gain > 0.0 {
                        best = Some(Fit {
                            tree: tree.clone(),
                            params,
                            objective,
                            sites: Some(sites.clone()),
                        });
                    }
                    if round == rounds || gain < em_settings.tolerance {
                        break;
                    }
                    let f = em_times(&tree, &sites.leaves, &params, em_settings)?;
                    tree = f.tree;
                    params = f.params;
                }
                Ok(best.expect("one round at least"))
            }
        }
    }

    /// The log joint used to rank attachments (probit: with the EP sites as leaf messages; the
    /// sites' constants are the same for every candidate and left out).
    fn score(&mut self, tree: &PydtTree, params: &Params, tables: &Tables, leaves: &Leaves) -> f64 {
        super::ln_joint(tree, leaves, params, tables, &mut self.msgs)
    }

    /// Every attachment position of a detached subtree with log-scale time `s_max` (∞ for a
    /// leaf): the midpoint (in t) of each segment whose midpoint is above `s_max` (plus the late
    /// trial times of leaf segments) and, when the model allows multifurcations, each internal
    /// node above `s_max`.
    fn positions(&mut self, tree: &PydtTree, params: &Params, s_max: f64) -> Vec<Position> {
        tree.postorder(&mut self.order);
        let mut out = Vec::new();
        for &v in &self.order {
            let s_mid = midpoint_s(tree.parent_s(v), tree.s(v));
            if s_mid < s_max {
                out.push(Position::Segment { below: v, s: s_mid });
            }
            if tree.is_leaf(v) {
                for j in LATE_HALVINGS
                    .iter()
                    .take(self.settings.leaf_segment_times.saturating_sub(1))
                {
                    let s = tree.parent_s(v) + j * std::f64::consts::LN_2;
                    if s < s_max {
                        out.push(Position::Segment { below: v, s });
                    }
                }
            }
            if params.multifurcating() && !tree.is_leaf(v) && tree.s(v) < s_max {
                out.push(Position::Node(v));
            }
        }
        out
    }

    /// Attach every leaf in a random order at its best-scoring position (spec §2.9), fitting the
    /// times (candidate EM settings; EP sites kept warm) after each attachment so the next
    /// point is scored against sensible times rather than a cascade of midpoints.
    fn sequential_start<R: Rng + ?Sized>(
        &mut self,
        params: &Params,
        rng: &mut R,
    ) -> Result<Fit, PydtError> {
        let n = data_n(self.data);
        let tables = Tables::new(params, n);
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(rng);
        let mut fit = Fit {
            tree: PydtTree::single_from(n, order[0]),
            params: *params,
            objective: f64::NEG_INFINITY,
            sites: self.initial_sites(),
        };
        for &i in &order[1..] {
            let leaves = self.scoring_leaves(&fit.sites).clone();
            let positions = self.positions(&fit.tree, params, f64::INFINITY);
            let mut best = (f64::NEG_INFINITY, None);
            for pos in positions {
                let mut t = fit.tree.clone();
                t.attach(i, pos);
                let f = self.score(&t, params, &tables, &leaves);
                if f > best.0 || best.1.is_none() {
                    best = (f, Some(t));
                }
            }
            let tree = best.1.expect("a tree always has a segment");
            let rounds = self.settings.candidate_ep_rounds;
            fit = self.fit_one(&tree, params, &self.settings.em, fit.sites.take(), rounds)?;
        }
        Ok(fit)
    }

    /// Detach a random subtree of `parent`'s tree and return the re-attached trees in decreasing
    /// order of their score (its old position excluded).
    fn candidates<R: Rng + ?Sized>(&mut self, parent: &Fit, rng: &mut R) -> Vec<PydtTree> {
        let mut tree = parent.tree.clone();
        tree.postorder(&mut self.order);
        if self.order.len() < 3 {
            return Vec::new();
        }
        // The root is last in post-order.
        let s = self.order[rng.random_range(0..self.order.len() - 1)];
        let old = tree.detach(s);
        let s_max = tree.s(s);
        let tables = Tables::new(&parent.params, tree.n_leaves());
        let leaves = self.scoring_leaves(&parent.sites).clone();
        let mut scored = Vec::new();
        for pos in self.positions(&tree, &parent.params, s_max) {
            if same_place(pos, old) {
                continue;
            }
            let mut t = tree.clone();
            t.attach(s, pos);
            let f = self.score(&t, &parent.params, &tables, &leaves);
            if f > f64::NEG_INFINITY {
                scored.push((f, t));
            }
        }
        // Stable sort: ties keep enumeration order, so the result is deterministic.
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().map(|(_, t)| t).collect()
    }
}

fn data_n(data: &Observations) -> usize {
    match data {
        Observations::Gaussian(l) => l.n,
        Observations::Probit(b) => b.n,
    }
}

/// `tree` with every internal time ln 2 (on the log scale) after its parent's: the cascade of
/// midpoints in t.
fn respaced(tree: &PydtTree) -> PydtTree {
    let mut out = tree.clone();
    let mut order = Vec::new();
    tree.postorder(&mut order);
    for &v in order.iter().rev().filter(|&&v| !tree.is_leaf(v)) {
        let s = out.parent_s(v) + std::f64::consts::LN_2;
        out.set_s(v, s);
    }
    out
}

/// Extra trial times on leaf segments, as halvings of the parent's distance to 1.
const LATE_HALVINGS: [f64; 6] = [3.0, 6.0, 10.0, 15.0, 21.0, 28.0];

/// Log-scale branch increments below this count as "no branch" for [`collapse_short`].
const SHORT_BRANCH: f64 = 1e-5;

/// `tree` with every internal node whose branch from its (internal) parent is shorter than
/// [`SHORT_BRANCH`] (on the log scale) merged into that parent, its children moved up; `None` if
/// there is no such node.
pub(crate) fn collapse_short(tree: &PydtTree) -> Option<PydtTree> {
    let mut out = tree.clone();
    let mut changed = false;
    loop {
        let short = out.internal_nodes().into_iter().find(|&v| {
            let p = out.node(v).parent;
            p != super::tree::NONE && out.s(v) - out.s(p) < SHORT_BRANCH
        });
        let Some(v) = short else { break };
        let p = out.node(v).parent;
        let kids: Vec<usize> = out.children(v).collect();
        // Detaching all but the last child removes v (its last child takes its place under p).
        for &c in &kids[..kids.len() - 1] {
            out.detach(c);
            out.attach(c, Position::Node(p));
        }
        changed = true;
    }
    changed.then_some(out)
}

/// Whether two positions give the same topology (the subtree's old place).
fn same_place(a: Position, b: Position) -> bool {
    match (a, b) {
        (Position::Node(u), Position::Node(v)) => u == v,
        (Position::Segment { below: u, .. }, Position::Segment { below: v, .. }) => u == v,
        _ => false,
    }
}

/// The log-scale time of the midpoint in t of the segment (s_a, s_b):
/// 1 − t_mid = (e^{−s_a} + e^{−s_b})/2, computed without underflow.
pub(crate) fn midpoint_s(s_a: f64, s_b: f64) -> f64 {
    let (hi, lo) = if s_a >= s_b { (s_a, s_b) } else { (s_b, s_a) };
    // −ln((e^{−lo} + e^{−hi})/2) = lo + ln 2 − ln(1 + e^{−(hi − lo)}).
    lo + std::f64::consts::LN_2 - (-(hi - lo)).exp().ln_1p()
}
