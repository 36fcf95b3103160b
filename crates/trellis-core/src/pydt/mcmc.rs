//! Collapsed MCMC for the PYDT and DDT (spec §2.7–§2.8, paper §5.1): internal locations are
//! integrated out by belief propagation; the state is the tree, its divergence times and the
//! hyper-parameters (and, for binary data, the probit auxiliaries).
//!
//! One iteration: `moves` detach/reattach proposals, a slice-sampling sweep over the divergence
//! times, the probit auxiliaries (binary data), then the hyper-parameters.
//!
//! **Detach/reattach** (spec §2.8): a node S other than the root is chosen uniformly, detached, and
//! re-attached where one new point's walk down the remaining tree T₋ diverges (restarted while
//! the place is not earlier than t_S, abandoned after `max_tries`). The default acceptance ratio
//! is the general Metropolis–Hastings ratio
//!   log R = [L(T′) + log q(T | T₋) − log(|T′| − 1)] − [L(T) + log q(T′ | T₋) − log(|T| − 1)],
//! L the log joint of §2.6, q the walk's path density, |T| the number of nodes (leaves and
//! internal) so 1/(|T| − 1) is the probability of choosing S. The spec's ratio omits the node
//! counts; they cancel for binary trees but not for the PYDT, and the prior-invariance test fails
//! without them. The paper's rule, R = p(X | T′)/p(X | T), is available as
//! [`AcceptRule::Likelihood`]: it is exact only when S is a leaf and the tree binary.
//!
//! **Times**: each internal t_v by a slice sampler on (t_pa, min child time) with target
//! (cJ_v − 1)·log(1 − t_v) + log p(X | T, t) (spec §2.4, prior conditional of one time), run on
//! the log scale s = −ln(1 − t) (see [`super::tree`]).
//!
//! **Hyper-parameters** (spec §2.7): c by its conjugate Gamma conditional; 1/σ² by its Gamma
//! conditional after backward-sampling the locations; θ and α by slice sampling under the joint
//! prior p(θ, α) ∝ exp(−b_θ·θ) on {0 ≤ α < 1, θ ≥ −2α} (Knowles' sampler; b_θ = 1).

use super::bp::{self, Leaves, Messages};
use super::generate::{ln_position_density, walk};
use super::params::{Params, Tables};
use super::prior::{j_value, prior_terms, PriorTerms};
use super::probit::{sample_auxiliary, Binary};
use super::tree::{PydtTree, NONE};
use super::PydtError;
use crate::coalescent::learn::slice_sample;
use rand::{Rng, RngExt};
use rand_distr::{Distribution, Gamma};

/// Acceptance rule of the detach/reattach move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AcceptRule {
    /// The general Metropolis–Hastings ratio (default; exact).
    #[default]
    General,
    /// The paper's likelihood ratio (exact only for leaves of binary trees).
    Likelihood,
}

/// Which hyper-parameters are sampled, and their priors (spec §2.7).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Hypers {
    /// Sample θ (PYDT only; the DDT keeps θ = α = 0).
    pub theta: bool,
    /// Sample α.
    pub alpha: bool,
    /// Sample c.
    pub c: bool,
    /// Sample σ².
    pub sigma2: bool,
    /// Rate b_θ of the prior exp(−b_θ θ) on θ ≥ −2α.
    pub theta_rate: f64,
    /// Gamma (shape, rate) prior of c.
    pub c_prior: (f64, f64),
    /// Gamma (shape, rate) prior of 1/σ².
    pub precision_prior: (f64, f64),
}

impl Default for Hypers {
    fn default() -> Self {
        Self {
            theta: true,
            alpha: true,
            c: true,
            sigma2: true,
            theta_rate: 1.0,
            c_prior: (1.0, 1.0),
            precision_prior: (1.0, 1.0),
        }
    }
}

impl Hypers {
    /// Check the priors (shapes, rates and b_θ finite and > 0).
    pub fn validate(&self) -> Result<(), PydtError> {
        let ok = |x: f64| x.is_finite() && x > 0.0;
        let checks = [
            ("theta_rate", self.theta_rate),
            ("c_prior shape", self.c_prior.0),
            ("c_prior rate", self.c_prior.1),
            ("precision_prior shape", self.precision_prior.0),
            ("precision_prior rate", self.precision_prior.1),
        ];
        for (name, v) in checks {
            if !ok(v) {
                return Err(PydtError::Parameter {
                    name,
                    value: v,
                    domain: "a finite value > 0",
                });
            }
        }
        Ok(())
    }

    /// Nothing sampled.
    pub fn fixed() -> Self {
        Self {
            theta: false,
            alpha: false,
            c: false,
            sigma2: false,
            ..Self::default()
        }
    }
}

/// What the sampler observes.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// Continuous points observed through Gaussian leaf messages (usually exact).
    Gaussian(Leaves),
    /// Binary points through the probit link; `aux` holds the current auxiliaries (variance 1).
    Probit {
        /// The 0/1 data.
        binary: Binary,
        /// Current auxiliaries z as leaf messages.
        aux: Leaves,
    },
    /// No data: the sampler explores the prior (tests).
    None,
}

impl Data {
    fn leaves(&self) -> Option<&Leaves> {
        match self {
            Data::Gaussian(l) => Some(l),
            Data::Probit { aux, .. } => Some(aux),
            Data::None => None,
        }
    }

    fn n(&self) -> Option<usize> {
        self.leaves().map(|l| l.n)
    }
}

/// Sampler settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Acceptance rule of detach/reattach.
    pub rule: AcceptRule,
    /// Hyper-parameters sampled and their priors.
    pub hypers: Hypers,
    /// Detach/reattach proposals per iteration (0: one per leaf).
    pub moves: usize,
    /// Restarts of the proposal walk before a move is abandoned (Knowles: 100).
    pub max_tries: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            rule: AcceptRule::General,
            hypers: Hypers::default(),
            moves: 0,
            max_tries: 100,
        }
    }
}

/// Counts of the detach/reattach moves so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MoveCounts {
    /// Proposals made.
    pub proposed: u64,
    /// Proposals accepted.
    pub accepted: u64,
    /// Moves abandoned after `max_tries` invalid walks.
    pub abandoned: u64,
}

/// The collapsed sampler's state.
#[derive(Debug, Clone)]
pub struct Sampler {
    tree: PydtTree,
    params: Params,
    tables: Tables,
    data: Data,
    settings: Settings,
    msgs: Messages,
    ln_lik: f64,
    prior: PriorTerms,
    backup: PydtTree,
    order: Vec<usize>,
    counts: MoveCounts,
}

fn likelihood(tree: &PydtTree, data: &Data, sigma2: f64, msgs: &mut Messages) -> f64 {
    data.leaves()
        .map_or(0.0, |l| bp::ln_likelihood(tree, l, sigma2, msgs))
}

impl Sampler {
    /// A sampler started at `tree` with `params`. The DDT (θ = α = 0) never samples θ or α.
    pub fn new(
        tree: PydtTree,
        params: Params,
        data: Data,
        mut settings: Settings,
    ) -> Result<Self, PydtError> {
        params.validate()?;
        tree.validate()?;
        if let Some(n) = data.n() {
            if n != tree.n_leaves() {
                return Err(PydtError::Data(format!(
                    "{n} points for a tree of {} leaves",
                    tree.n_leaves()
                )));
            }
        }
        if let Some(l) = data.leaves() {
            l.validate()?;
        }
        if let Data::Gaussian(l) = &data {
            if let Some((i, j)) = l.duplicate_exact_rows() {
                return Err(PydtError::Data(format!(
                    "rows {i} and {j} are identical: with exact leaves that makes the posterior improper; remove duplicates or give the leaves noise"
                )));
            }
        }
        if let Data::Probit { binary, aux } = &data {
            if binary.n != aux.n || binary.d != aux.d || binary.y.len() != binary.n * binary.d {
                return Err(PydtError::Data(
                    "probit data and auxiliaries differ in shape".into(),
                ));
            }
        }
        settings.hypers.validate()?;
        if params.theta == 0.0 && params.alpha == 0.0 {
            settings.hypers.theta = false;
            settings.hypers.alpha = false;
        }
        let tables = Tables::new(&params, tree.n_leaves());
        let mut msgs = Messages::default();
        let ln_lik = likelihood(&tree, &data, params.sigma2, &mut msgs);
        let prior = prior_terms(&tree, &params, &tables);
        Ok(Self {
            backup: tree.clone(),
            tree,
            params,
            tables,
            data,
            settings,
            msgs,
            ln_lik,
            prior,
            order: Vec::new(),
            counts: MoveCounts::default(),
        })
    }

    /// The current tree.
    pub fn tree(&self) -> &PydtTree {
        &self.tree
    }

    /// The current parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The current data (probit auxiliaries included).
    pub fn data(&self) -> &Data {
        &self.data
    }

    /// Replace the data (same number of points), e.g. for Geweke's successive-conditional test.
    pub fn set_data(&mut self, data: Data) {
        self.data = data;
        self.ln_lik = likelihood(&self.tree, &self.data, self.params.sigma2, &mut self.msgs);
    }

    /// log p(X | T, t, σ²) of the current state (of the auxiliaries for probit data; 0 without data).
    pub fn ln_likelihood(&self) -> f64 {
        self.ln_lik
    }

    /// The prior terms of the current tree.
    pub fn prior(&self) -> PriorTerms {
        self.prior
    }

    /// The log joint L = log p(X | T, t) + Σ_v (log S_v + log T_v) (spec §2.6).
    pub fn ln_joint(&self) -> f64 {
        self.ln_lik + self.prior.total()
    }

    /// Move counts so far.
    pub fn counts(&self) -> MoveCounts {
        self.counts
    }

    /// One detach/reattach proposal; returns whether it was accepted.
    pub fn detach_reattach<R: Rng + ?Sized>(&mut self, rng: &mut R) -> bool {
        self.tree.postorder(&mut self.order);
        let nodes = self.order.len();
        if nodes < 3 {
            return false;
        }
        self.counts.proposed += 1;
        // The root is last in post-order.
        let s = self.order[rng.random_range(0..nodes - 1)];
        self.backup.clone_from(&self.tree);
        let old = self.tree.detach(s);
        let s_max = self.tree.s(s);
        let mut new = None;
        for _ in 0..self.settings.max_tries {
            new = walk(&self.tree, &self.params, &self.tables, s_max, rng);
            if new.is_some() {
                break;
            }
        }
        let Some(new) = new else {
            self.tree.clone_from(&self.backup);
            self.counts.abandoned += 1;
            return false;
        };
        let general = self.settings.rule == AcceptRule::General;
        let (q_fwd, q_rev) = if general {
            (
                ln_position_density(&self.tree, &self.params, &self.tables, new),
                ln_position_density(&self.tree, &self.params, &self.tables, old),
            )
        } else {
            (0.0, 0.0)
        };
        self.tree.attach(s, new);
        let nodes_new = self.tree.n_leaves() + self.tree.n_internal();
        let ln_lik = likelihood(&self.tree, &self.data, self.params.sigma2, &mut self.msgs);
        let prior = prior_terms(&self.tree, &self.params, &self.tables);
        let ln_r = if general {
            (ln_lik + prior.total() + q_rev) - (self.ln_lik + self.prior.total() + q_fwd)
                + ((nodes - 1) as f64).ln()
                - ((nodes_new - 1) as f64).ln()
        } else {
            ln_lik - self.ln_lik
        };
        let u: f64 = rng.random();
        if (1.0 - u).ln() < ln_r {
            self.ln_lik = ln_lik;
            self.prior = prior;
            self.counts.accepted += 1;
            true
        } else {
            self.tree.clone_from(&self.backup);
            false
        }
    }

    /// Slice-sample every internal divergence time in turn (post-order), on the log scale
    /// s = −ln(1 − t) where the target, Jacobian included, is −cJ_v·s + log p(X | T, t) on
    /// (s_pa, min child s) (stepping out from width 1; the upper end is ∞ when every child is a
    /// leaf).
    pub fn resample_times<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<(), PydtError> {
        let internal = self.tree.internal_nodes();
        let (c, sigma2) = (self.params.c, self.params.sigma2);
        for v in internal {
            let lo = self.tree.parent_s(v);
            let hi = self
                .tree
                .children(v)
                .map(|k| self.tree.s(k))
                .fold(f64::INFINITY, f64::min);
            let cj = c * j_value(&self.tree, v, &self.tables);
            let s0 = self.tree.s(v);
            let (tree, data, msgs) = (&mut self.tree, &self.data, &mut self.msgs);
            let target = |s: f64| {
                if !(s > lo && s < hi) {
                    return f64::NEG_INFINITY;
                }
                tree.set_s(v, s);
                -cj * s + likelihood(tree, data, sigma2, msgs)
            };
            match slice_sample(s0, target, 1.0, 50, rng) {
                Ok(s1) => self.tree.set_s(v, s1),
                Err(e) => {
                    self.tree.set_s(v, s0);
                    self.ln_lik = likelihood(&self.tree, &self.data, sigma2, &mut self.msgs);
                    self.prior = prior_terms(&self.tree, &self.params, &self.tables);
                    return Err(PydtError::Data(format!(
                        "slice sampling a divergence time: {e}"
                    )));
                }
            }
        }
        self.ln_lik = likelihood(&self.tree, &self.data, sigma2, &mut self.msgs);
        self.prior = prior_terms(&self.tree, &self.params, &self.tables);
        Ok(())
    }

    /// Gibbs update of the probit auxiliaries: backward-sample the leaf locations given z, then
    /// z | x, y from its truncated normal. No-op for other data.
    pub fn resample_auxiliaries<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        let Data::Probit { binary, aux } = &mut self.data else {
            return;
        };
        let sigma2 = self.params.sigma2;
        bp::upward(&self.tree, aux, sigma2, &mut self.msgs);
        let x = bp::sample_locations(&self.tree, sigma2, &self.msgs, rng);
        let d = binary.d;
        for i in 0..binary.n {
            for k in 0..d {
                aux.mean[i * d + k] = sample_auxiliary(x[i * d + k], binary.y[i * d + k], rng);
            }
        }
        self.ln_lik = likelihood(&self.tree, &self.data, sigma2, &mut self.msgs);
    }

    /// Update the sampled hyper-parameters (spec §2.7): c, then σ², then θ, then α.
    pub fn resample_hypers<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<(), PydtError> {
        let h = self.settings.hypers;
        if h.c {
            let internal = self.tree.internal_nodes();
            let shape = h.c_prior.0 + internal.len() as f64;
            let rate = h.c_prior.1
                + internal
                    .iter()
                    .map(|&v| j_value(&self.tree, v, &self.tables) * self.tree.s(v))
                    .sum::<f64>();
            self.params.c = gamma(shape, rate, rng)?;
        }
        if h.sigma2 {
            if let Some(leaves) = self.data.leaves() {
                let sigma2 = self.params.sigma2;
                bp::upward(&self.tree, leaves, sigma2, &mut self.msgs);
                let x = bp::sample_locations(&self.tree, sigma2, &self.msgs, rng);
                let d = leaves.d;
                self.tree.postorder(&mut self.order);
                let (mut ss, mut edges) = (0.0, 0usize);
                for &v in &self.order {
                    let p = self.tree.node(v).parent;
                    let dt = self.tree.branch_length(v);
                    if dt == 0.0 {
                        // A branch below the smallest double (times within e^{−745} of t = 1,
                        // only for c ≈ 0): its Gaussian factor is a point mass, no information.
                        continue;
                    }
                    edges += 1;
                    let sq: f64 = (0..d)
                        .map(|k| {
                            let xp = if p == NONE { 0.0 } else { x[p * d + k] };
                            (x[v * d + k] - xp).powi(2)
                        })
                        .sum();
                    ss += sq / (2.0 * dt);
                }
                let shape = h.precision_prior.0 + 0.5 * (d * edges) as f64;
                self.params.sigma2 = 1.0 / gamma(shape, h.precision_prior.1 + ss, rng)?;
            }
        }
        if h.theta {
            let alpha = self.params.alpha;
            let theta = slice_sample(
                self.params.theta,
                |th| self.ln_prior_at(th, alpha),
                1.0,
                100,
                rng,
            )
            .map_err(|e| PydtError::Data(format!("slice sampling θ: {e}")))?;
            self.params.theta = theta;
        }
        if h.alpha {
            let theta = self.params.theta;
            let alpha = slice_sample(
                self.params.alpha,
                |al| self.ln_prior_at(theta, al),
                0.5,
                10,
                rng,
            )
            .map_err(|e| PydtError::Data(format!("slice sampling α: {e}")))?;
            self.params.alpha = alpha;
        }
        self.tables = Tables::new(&self.params, self.tree.n_leaves());
        self.prior = prior_terms(&self.tree, &self.params, &self.tables);
        self.ln_lik = likelihood(&self.tree, &self.data, self.params.sigma2, &mut self.msgs);
        Ok(())
    }

    /// Σ_v (log S_v + log T_v) − b_θ·θ at (θ, α) (−∞ outside the domain).
    fn ln_prior_at(&self, theta: f64, alpha: f64) -> f64 {
        if !(0.0..1.0).contains(&alpha)
            || !(-2.0 * alpha..=super::params::MAX_THETA).contains(&theta)
        {
            return f64::NEG_INFINITY;
        }
        let p = Params {
            theta,
            alpha,
            ..self.params
        };
        let tables = Tables::new(&p, self.tree.n_leaves());
        prior_terms(&self.tree, &p, &tables).total() - self.settings.hypers.theta_rate * theta
    }

    /// One iteration: detach/reattach moves, times, auxiliaries, hyper-parameters.
    pub fn iterate<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<(), PydtError> {
        let moves = if self.settings.moves == 0 {
            self.tree.n_leaves()
        } else {
            self.settings.moves
        };
        for _ in 0..moves {
            self.detach_reattach(rng);
        }
        self.resample_times(rng)?;
        self.resample_auxiliaries(rng);
        self.resample_hypers(rng)
    }
}

/// Gamma(shape, rate) draw; an error (not a panic) if the state made the rate non-finite.
fn gamma<R: Rng + ?Sized>(shape: f64, rate: f64, rng: &mut R) -> Result<f64, PydtError> {
    let g = Gamma::new(shape, 1.0 / rate).map_err(|e| {
        PydtError::Data(format!("a Gamma conditional with shape {shape} and rate {rate} ({e}); the state has degenerate branch lengths"))
    })?;
    Ok(g.sample(rng))
}
