//! Bayesian EM over the divergence times of a fixed tree (spec §2.9, paper §5.2).
//!
//! E-step: belief propagation (both passes) gives the exact Gaussian posterior of the internal
//! locations and, for every edge u→v, E_uv = Σ_d E[(x_vd − x_ud)²].
//! M-step: maximise over all internal times jointly, by L-BFGS (argmin, Moré–Thuente line
//! search),
//!   Q(s) = Σ_{internal v} [log c − cJ_v·s_v]   (t-density: (cJ_v − 1)·s_v)
//!        + Σ_{edges u→v} [−(D/2)·log(2πσ²(t_v − t_u)) − E_uv/(2σ²(t_v − t_u))],
//! with s = −ln(1 − t). Because the E-step is exact, Q plus the locations' entropy equals the
//! objective at the E-step's times, so every cycle raises it (and at a fixed point its gradient
//! is 0).
//!
//! Which density is maximised ([`TimeDensity`], setting `time_density`): the spec's bound
//! (eq. 17) is the density of the times t, whose factor per node is c·(1 − t_v)^{cJ_v − 1}. J_v
//! can be below 1/c (e.g. a node over two cherries: J = H_3 − 2H_1 < 0), so that density grows
//! without bound as a subtree's times go to 1; with exact leaves the likelihood stops this (a
//! branch to a leaf of length → 0 between distinct points costs −∞), but with noisy leaves or EP
//! sites (probit) it does not, and the "MAP" collapses every time to 1 (seen on animals33: log
//! density +18,000). There we maximise the density of the log-scale times s instead,
//! c·e^{−cJ_v s_v} per node, i.e. the log joint L(T, t) minus the Jacobian Σ_v s_v. It is
//! bounded: any set of times going to 1 together is a union of whole subtrees, and over a subtree
//! Σ_v J_v = H_{m−1} > 0. The MAP (a mode) depends on the coordinates, and the s-density has a
//! cost on exact data: its −cJ_v·s_v (J_v > 0 at every binary node) pulls a binary tree's early
//! divergences to t = 0, so the DDT's MAP nests all clusters at t ≈ 0 (`pydt_synthetic`: the
//! latest DDT divergence above the clusters at t ≤ 0.5 in 9 of 10 replicates), which the paper's
//! Figure 5 does not show. The t-density is bounded only with exact leaves *and* σ² fixed (with
//! σ² learned, all times run to 1 while σ² grows: see [`TimeDensity::resolve`]).
//! [`TimeDensity::Auto`] (the default) takes the t-density where it is bounded and the s-density
//! otherwise (noisy leaves, EP sites, σ² learned).
//!
//! Parameterisation: the paper's map to the real line is lost (spec §7.4); we use the nested map
//! s_v = s_pa + softplus(z_v), which keeps every time between its parent's and 1 for any real z
//! and the children after their parents, so no barrier and no infeasible line-search step exist.
//! Optionally c and σ² take the modes of their Gamma conditionals (spec §2.7) after each M-step,
//! which then raises the objective plus log p(c) + log p(1/σ²).

use super::bp::{self, Leaves, Messages};
use super::params::{Params, Tables};
use super::prior::j_value;
use super::tree::{PydtTree, NONE};
use super::PydtError;
use argmin::core::{CostFunction, Executor, Gradient, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;

use crate::numeric::LN_2PI;

/// The density over the divergence times that EM maximises (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum TimeDensity {
    /// The t-density where it is bounded (every leaf exact, σ² fixed), else the s-density.
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// The density of the log-scale times s = −ln(1 − t): objective log p(X, T, s).
    #[serde(rename = "s")]
    LogScale,
    /// The density of the times t (the spec's eq. 17): objective log p(X, T, t). Only for exact
    /// leaves and σ² fixed; unbounded otherwise.
    #[serde(rename = "t")]
    Time,
}

impl TimeDensity {
    /// The density used on leaves that are all exact (`exact`) or not, with σ² learned or fixed:
    /// [`TimeDensity::Time`] or [`TimeDensity::LogScale`]. The t-density is bounded only with
    /// exact leaves and σ² fixed: with σ² learned, moving every time towards 1 while σ² grows as
    /// 1/(1 − t) keeps the Gaussian terms but the root edge's, and the node factors gain
    /// Σ_v (1 − cJ_v)·s against (D/2)·s, without bound on any tree with more internal nodes than
    /// D/2. `Time` where it has no maximum is an error.
    pub fn resolve(self, exact: bool, learn_sigma2: bool) -> Result<Self, PydtError> {
        let bounded = exact && !learn_sigma2;
        match (self, bounded) {
            (Self::Auto, true) | (Self::Time, true) => Ok(Self::Time),
            (Self::Auto, false) | (Self::LogScale, _) => Ok(Self::LogScale),
            (Self::Time, false) => Err(PydtError::Data(
                "time_density = \"t\" needs exact leaves and a fixed sigma2: with leaf noise, \
                 probit (EP) sites or learn_sigma2 the density of the times has no maximum \
                 (the times run to 1); use \"s\" or \"auto\""
                    .into(),
            )),
        }
    }

    /// The objective's name: "log p(X, T, t)" or "log p(X, T, s)" (`Auto` unresolved: "log p(X, T, ·)").
    pub fn objective_name(self) -> &'static str {
        match self {
            Self::Time => "log p(X, T, t)",
            Self::LogScale => "log p(X, T, s)",
            Self::Auto => "log p(X, T, ·)",
        }
    }

    /// "t" or "s" ("auto" unresolved), as in the settings.
    pub fn key(self) -> &'static str {
        match self {
            Self::Time => "t",
            Self::LogScale => "s",
            Self::Auto => "auto",
        }
    }
}

/// Settings of [`em_times`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmSettings {
    /// The density over the times that is maximised ("auto", "s" or "t"; see the module docs).
    pub time_density: TimeDensity,
    /// Maximum E/M cycles.
    pub cycles: usize,
    /// L-BFGS iterations on the log joint itself after the cycles (0: none).
    pub direct_iterations: u64,
    /// Stop when a cycle raises the objective by less than this.
    pub tolerance: f64,
    /// L-BFGS iterations per M-step.
    pub lbfgs_iterations: u64,
    /// Update c to the mode of its Gamma conditional (prior shape, rate `c_prior`).
    pub learn_c: bool,
    /// Update 1/σ² to the mode of its Gamma conditional (prior `precision_prior`).
    pub learn_sigma2: bool,
    /// Move θ to its conditional mode (golden-section search on the structure and time factors
    /// plus its prior; spec §2.9). PYDT only: a DDT keeps θ = 0.
    pub learn_theta: bool,
    /// Move α likewise (coordinate-wise with θ).
    pub learn_alpha: bool,
    /// Rate b_θ of θ's prior b_θ·exp(−b_θ(θ + 2α)) on θ ≥ −2α (spec §2.7).
    pub theta_rate: f64,
    /// Gamma (shape, rate) prior of c.
    pub c_prior: (f64, f64),
    /// Gamma (shape, rate) prior of 1/σ².
    pub precision_prior: (f64, f64),
}

impl EmSettings {
    /// `time_density` resolved for `leaves` (exact when every variance is 0) and `learn_sigma2`.
    pub fn density_for(&self, leaves: &Leaves) -> Result<TimeDensity, PydtError> {
        let exact = leaves.var.iter().all(|&v| v == 0.0);
        self.time_density.resolve(exact, self.learn_sigma2)
    }
}

impl Default for EmSettings {
    fn default() -> Self {
        Self {
            time_density: TimeDensity::Auto,
            cycles: 20,
            direct_iterations: 500,
            tolerance: 1e-6,
            lbfgs_iterations: 50,
            learn_c: false,
            learn_sigma2: false,
            learn_theta: false,
            learn_alpha: false,
            theta_rate: 1.0,
            c_prior: (1.0, 1.0),
            precision_prior: (1.0, 1.0),
        }
    }
}

/// The result of [`em_times`].
#[derive(Debug, Clone)]
pub struct EmFit {
    /// The tree with optimised times.
    pub tree: PydtTree,
    /// The parameters (c, σ² updated if learned).
    pub params: Params,
    /// The objective after each cycle (the first entry is the start): L, plus the log priors of
    /// c and 1/σ² when they are learned.
    pub trace: Vec<f64>,
}

impl EmFit {
    /// The final objective.
    pub fn objective(&self) -> f64 {
        *self.trace.last().expect("the trace holds the start")
    }
}

fn softplus(z: f64) -> f64 {
    if z > 30.0 {
        z + (-z).exp().ln_1p()
    } else {
        z.exp().ln_1p()
    }
}

/// The smallest log-scale branch increment the map produces: the tree keeps strictly increasing
/// times (a zero-length branch, which noisy leaves allow at the optimum, would fail
/// `PydtTree::validate`).
const MIN_INCREMENT: f64 = 1e-9;

/// softplus(z), at least [`MIN_INCREMENT`].
fn increment(z: f64) -> f64 {
    softplus(z).max(MIN_INCREMENT)
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// The M-step objective of one tree, with the E-step's edge statistics frozen.
pub(crate) struct MStep<'a> {
    tree: &'a PydtTree,
    /// Internal nodes in pre-order (parents first); z index = position here.
    internal: Vec<usize>,
    index: Vec<usize>,
    /// Every node of the tree in pre-order.
    nodes: Vec<usize>,
    e_uv: Vec<f64>,
    cj: Vec<f64>,
    d: f64,
    sigma2: f64,
    ln_c: f64,
}

impl<'a> MStep<'a> {
    /// The M-step of the s-density.
    pub(crate) fn new(
        tree: &'a PydtTree,
        msgs: &Messages,
        params: &Params,
        tables: &Tables,
    ) -> Self {
        Self::with_density(tree, msgs, params, tables, TimeDensity::LogScale)
    }

    /// The M-step of `density` (resolved: `Auto` counts as the s-density). The t-density's node
    /// factor (1 − t)^{cJ − 1} = e^{−(cJ − 1)s} is the s-density's with cJ − 1 for cJ.
    pub(crate) fn with_density(
        tree: &'a PydtTree,
        msgs: &Messages,
        params: &Params,
        tables: &Tables,
        density: TimeDensity,
    ) -> Self {
        let shift = if density == TimeDensity::Time {
            1.0
        } else {
            0.0
        };
        let mut order = Vec::new();
        tree.postorder(&mut order);
        order.reverse();
        let internal: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&v| !tree.is_leaf(v))
            .collect();
        let mut index = vec![NONE; tree.capacity()];
        for (i, &v) in internal.iter().enumerate() {
            index[v] = i;
        }
        let mut e_uv = vec![0.0; tree.capacity()];
        for &v in &order {
            e_uv[v] = msgs.edge_expected_sq(tree, params.sigma2, v);
        }
        let cj = internal
            .iter()
            .map(|&v| params.c * j_value(tree, v, tables) - shift)
            .collect();
        Self {
            tree,
            internal,
            index,
            nodes: order,
            e_uv,
            cj,
            d: msgs.dim() as f64,
            sigma2: params.sigma2,
            ln_c: params.c.ln(),
        }
    }

    /// z of the tree's current times.
    pub(crate) fn z_of_tree(&self) -> Vec<f64> {
        self.internal
            .iter()
            .map(|&v| {
                let ds = self.tree.s(v) - self.tree.parent_s(v);
                if ds > 30.0 {
                    ds + (-(-ds).exp()).ln_1p()
                } else {
                    ds.exp_m1().ln()
                }
            })
            .collect()
    }

    /// Log-scale times of every node for parameters z (leaves ∞).
    pub(crate) fn s_of(&self, z: &[f64]) -> Vec<f64> {
        let mut s = vec![f64::INFINITY; self.tree.capacity()];
        for (i, &v) in self.internal.iter().enumerate() {
            let p = self.tree.node(v).parent;
            let sp = if p == NONE { 0.0 } else { s[p] };
            s[v] = sp + increment(z[i]);
        }
        s
    }

    fn parent_s(&self, s: &[f64], v: usize) -> f64 {
        let p = self.tree.node(v).parent;
        if p == NONE {
            0.0
        } else {
            s[p]
        }
    }

    fn branch(&self, s: &[f64], v: usize) -> f64 {
        let sp = self.parent_s(s, v);
        (-sp).exp() * -(-(s[v] - sp)).exp_m1()
    }

    /// Q(z).
    pub(crate) fn q(&self, z: &[f64]) -> f64 {
        let s = self.s_of(z);
        let mut q = 0.0;
        for (i, &v) in self.internal.iter().enumerate() {
            q += self.ln_c - self.cj[i] * s[v];
        }
        for &v in &self.nodes {
            let dt = self.branch(&s, v);
            q += -0.5 * self.d * (LN_2PI + (self.sigma2 * dt).ln())
                - self.e_uv[v] / (2.0 * self.sigma2 * dt);
        }
        q
    }

    /// ∇_z Q.
    pub(crate) fn grad(&self, z: &[f64]) -> Vec<f64> {
        let s = self.s_of(z);
        // dQ/dt_w for internal w.
        let mut dq_dt = vec![0.0; self.internal.len()];
        for (i, &v) in self.internal.iter().enumerate() {
            dq_dt[i] -= self.cj[i] / (-s[v]).exp();
        }
        for &v in &self.nodes {
            let dt = self.branch(&s, v);
            let de = -0.5 * self.d / dt + self.e_uv[v] / (2.0 * self.sigma2 * dt * dt);
            if !self.tree.is_leaf(v) {
                dq_dt[self.index[v]] += de;
            }
            let p = self.tree.node(v).parent;
            if p != NONE {
                dq_dt[self.index[p]] -= de;
            }
        }
        // g_w = (1 − t_w)·dQ/dt_w, summed over internal subtrees (reverse pre-order).
        let mut acc: Vec<f64> = self
            .internal
            .iter()
            .zip(&dq_dt)
            .map(|(&v, g)| (-s[v]).exp() * g)
            .collect();
        for i in (0..self.internal.len()).rev() {
            let p = self.tree.node(self.internal[i]).parent;
            if p != NONE {
                let a = acc[i];
                acc[self.index[p]] += a;
            }
        }
        acc.iter().zip(z).map(|(a, &zi)| a * sigmoid(zi)).collect()
    }

    /// Write the times of z into `tree`.
    pub(crate) fn apply(&self, z: &[f64], tree: &mut PydtTree) {
        *tree = tree_with_z(self.tree, z);
    }
}

/// A cost the line search can handle: a log density of −∞ (a branch length rounded to 0 or 1 by a
/// long trial step) or NaN becomes a huge finite cost, which the Moré–Thuente search rejects by
/// its sufficient-decrease test and interpolates back from (it stops on a non-finite value).
fn finite_cost(cost: f64) -> f64 {
    if cost.is_finite() {
        cost
    } else {
        1e300
    }
}

/// The negated gradient of a log density, with non-finite entries (at points `finite_cost` has
/// already ruled out) set to 0.
fn finite_gradient(grad: Vec<f64>) -> Vec<f64> {
    grad.into_iter()
        .map(|g| if g.is_finite() { -g } else { 0.0 })
        .collect()
}

struct Problem<'a, 'b>(&'b MStep<'a>);

impl CostFunction for Problem<'_, '_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, z: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        Ok(finite_cost(-self.0.q(z)))
    }
}

impl Gradient for Problem<'_, '_> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, z: &Vec<f64>) -> Result<Vec<f64>, argmin::core::Error> {
        Ok(finite_gradient(self.0.grad(z)))
    }
}

fn ln_gamma_density(x: f64, (shape, rate): (f64, f64)) -> f64 {
    shape * rate.ln() - statrs::function::gamma::ln_gamma(shape) + (shape - 1.0) * x.ln() - rate * x
}

/// Σ_v s_v over the internal nodes: log |dt/ds|⁻¹, the change of measure from the times t to the
/// log-scale times s = −ln(1 − t) (dt/ds = 1 − t = e^{−s}).
pub fn ln_jacobian(tree: &PydtTree) -> f64 {
    tree.internal_nodes().iter().map(|&v| tree.s(v)).sum()
}

/// log p(X, T, times) in the coordinates of `density`: L(T, t) for [`TimeDensity::Time`], else
/// L(T, t) − Σ_v s_v (the density of s).
fn ln_density(
    tree: &PydtTree,
    leaves: &Leaves,
    params: &Params,
    tables: &Tables,
    density: TimeDensity,
    msgs: &mut Messages,
) -> f64 {
    let l = super::ln_joint(tree, leaves, params, tables, msgs);
    if density == TimeDensity::Time {
        l
    } else {
        l - ln_jacobian(tree)
    }
}

/// The EM objective: the log density of (X, T, t) or (X, T, s) as `settings.time_density`
/// resolves for `leaves` (s-density: L(T, t) − Σ_v s_v; see the module docs), plus the log
/// priors of the learned hyper-parameters. `Time` on noisy leaves counts as the s-density here
/// ([`em_times`] refuses it).
pub fn objective(
    tree: &PydtTree,
    leaves: &Leaves,
    params: &Params,
    settings: &EmSettings,
    msgs: &mut Messages,
) -> f64 {
    let tables = Tables::new(params, tree.n_leaves());
    let density = settings
        .density_for(leaves)
        .unwrap_or(TimeDensity::LogScale);
    let mut f = ln_density(tree, leaves, params, &tables, density, msgs);
    if settings.learn_c {
        f += ln_gamma_density(params.c, settings.c_prior);
    }
    if settings.learn_sigma2 {
        f += ln_gamma_density(1.0 / params.sigma2, settings.precision_prior);
    }
    if settings.learn_theta {
        f += ln_theta_prior(params, settings.theta_rate);
    }
    f
}

/// log of θ's prior b·exp(−b(θ + 2α)) on θ ≥ −2α.
fn ln_theta_prior(params: &Params, rate: f64) -> f64 {
    rate.ln() - rate * (params.theta + 2.0 * params.alpha)
}

/// The part of the objective that depends on θ and α: Σ_v (log S_v + log T_v) plus θ's prior.
fn theta_alpha_objective(tree: &PydtTree, params: &Params, settings: &EmSettings) -> f64 {
    let tables = Tables::new(params, tree.n_leaves());
    let mut f = super::prior::prior_terms(tree, params, &tables).total();
    if settings.learn_theta {
        f += ln_theta_prior(params, settings.theta_rate);
    }
    f
}

/// Maximise a function on [lo, hi] by golden-section search (60 steps); returns the argmax.
fn golden_section(lo: f64, hi: f64, f: impl Fn(f64) -> f64) -> f64 {
    let r = 0.5 * (5f64.sqrt() - 1.0);
    let (mut a, mut b) = (lo, hi);
    let (mut x1, mut x2) = (b - r * (b - a), a + r * (b - a));
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..60 {
        if f1 >= f2 {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - r * (b - a);
            f1 = f(x1);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + r * (b - a);
            f2 = f(x2);
        }
    }
    if f1 >= f2 {
        x1
    } else {
        x2
    }
}

/// Coordinate-wise golden-section ascent on θ (on the scale ln(θ + 2α)) and α, until a round
/// gains less than 1e-10 (at most 100 rounds); a move is kept only if it raises the objective.
fn update_theta_alpha(tree: &PydtTree, params: &mut Params, settings: &EmSettings) {
    let at = |p: &Params| theta_alpha_objective(tree, p, settings);
    for _ in 0..100 {
        let start = at(params);
        if settings.learn_theta {
            let alpha = params.alpha;
            let hi = (super::params::MAX_THETA + 2.0 * alpha).ln();
            let with = |u: f64| Params {
                theta: (u.exp() - 2.0 * alpha).min(super::params::MAX_THETA),
                ..*params
            };
            let u = golden_section(-12.0, hi, |u| at(&with(u)));
            let cand = with(u);
            if cand.validate().is_ok() && at(&cand) > at(params) {
                *params = cand;
            }
        }
        if settings.learn_alpha {
            let theta = params.theta;
            let lo = (-0.5 * theta).max(0.0);
            let with = |a: f64| Params {
                alpha: a,
                ..*params
            };
            let a = golden_section(lo, 1.0 - 1e-9, |a| at(&with(a)));
            let cand = with(a);
            if cand.validate().is_ok() && at(&cand) > at(params) {
                *params = cand;
            }
        }
        if !(settings.learn_theta && settings.learn_alpha) || at(params) - start < 1e-10 {
            break;
        }
    }
}

/// Direct maximisation of L over the times with the exact gradient: by Fisher's identity
/// ∇L(t) = ∇Q(t' | t) at t' = t, so one E-step (both BP passes) per gradient gives it.
struct Direct<'a> {
    tree: &'a PydtTree,
    leaves: &'a Leaves,
    params: Params,
    tables: Tables,
    density: TimeDensity,
    msgs: std::cell::RefCell<Messages>,
}

impl Direct<'_> {
    fn tree_at(&self, z: &[f64]) -> PydtTree {
        tree_with_z(self.tree, z)
    }
}

/// `template` with its internal times set from z by the nested map (internal nodes in pre-order,
/// as [`MStep`] orders them).
fn tree_with_z(template: &PydtTree, z: &[f64]) -> PydtTree {
    let mut order = Vec::new();
    template.postorder(&mut order);
    let mut t = template.clone();
    for (i, &v) in order
        .iter()
        .rev()
        .filter(|&&v| !template.is_leaf(v))
        .enumerate()
    {
        let s = t.parent_s(v) + increment(z[i]);
        t.set_s(v, s);
    }
    t
}

impl CostFunction for Direct<'_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, z: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        let t = self.tree_at(z);
        let l = ln_density(
            &t,
            self.leaves,
            &self.params,
            &self.tables,
            self.density,
            &mut self.msgs.borrow_mut(),
        );
        Ok(finite_cost(-l))
    }
}

impl Gradient for Direct<'_> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, z: &Vec<f64>) -> Result<Vec<f64>, argmin::core::Error> {
        let t = self.tree_at(z);
        let mut msgs = self.msgs.borrow_mut();
        bp::upward_messages(&t, self.leaves, self.params.sigma2, &mut msgs);
        bp::downward(&t, self.params.sigma2, &mut msgs);
        let m = MStep::with_density(&t, &msgs, &self.params, &self.tables, self.density);
        Ok(finite_gradient(m.grad(z)))
    }
}

/// Maximise the log joint over the times of `tree` by L-BFGS with the exact gradient (at most
/// `iterations` steps); never returns worse times than the start.
fn optimise_directly(
    tree: &mut PydtTree,
    leaves: &Leaves,
    params: &Params,
    density: TimeDensity,
    iterations: u64,
) {
    let tables = Tables::new(params, tree.n_leaves());
    let mut msgs = Messages::default();
    bp::upward(tree, leaves, params.sigma2, &mut msgs);
    bp::downward(tree, params.sigma2, &mut msgs);
    let z0 = MStep::new(tree, &msgs, params, &tables).z_of_tree();
    let problem = Direct {
        tree,
        leaves,
        params: *params,
        tables,
        density,
        msgs: std::cell::RefCell::new(msgs),
    };
    let c0 = problem.cost(&z0).unwrap_or(f64::INFINITY);
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7)
        .with_tolerance_cost(1e-9)
        .unwrap_or_else(|_| LBFGS::new(MoreThuenteLineSearch::new(), 7));
    let res = Executor::new(problem, solver)
        .configure(|st| st.param(z0.clone()).max_iters(iterations))
        .run();
    // A failed line search ends the run; the best point seen is kept either way.
    if let Ok(r) = res {
        let st = r.state();
        if let Some(z) = st.get_best_param() {
            if st.get_best_cost() < c0 {
                *tree = tree_with_z(tree, z);
            }
        }
    }
}

/// EM over the times of `tree` (its structure fixed; only its attached leaves are used, as in
/// sequential attachment) from its current times: `cycles` EM
/// cycles (with the hyper-parameter modes if learned), then L-BFGS on the log joint itself with
/// its exact gradient (`direct_iterations` steps; EM alone converges linearly and slowly).
pub fn em_times(
    tree: &PydtTree,
    leaves: &Leaves,
    params: &Params,
    settings: &EmSettings,
) -> Result<EmFit, PydtError> {
    params.validate()?;
    tree.validate_attached()?;
    if (settings.learn_theta || settings.learn_alpha) && params.theta == 0.0 && params.alpha == 0.0
    {
        return Err(PydtError::Data(
            "learn_theta/learn_alpha are for the PYDT: a DDT keeps theta = alpha = 0 (start from \
             theta > 0 to learn them)"
                .into(),
        ));
    }
    if !(settings.theta_rate > 0.0 && settings.theta_rate.is_finite()) {
        return Err(PydtError::Parameter {
            name: "theta_rate",
            value: settings.theta_rate,
            domain: "a finite value > 0",
        });
    }
    let density = settings.density_for(leaves)?;
    let mut tree = tree.clone();
    let mut params = *params;
    let mut msgs = Messages::default();
    let mut trace = vec![objective(&tree, leaves, &params, settings, &mut msgs)];
    let cancel = crate::cancel::Cancel::new();
    for _ in 0..settings.cycles {
        if cancel.is_cancelled() {
            return Err(PydtError::Cancelled);
        }
        let tables = Tables::new(&params, tree.n_leaves());
        bp::upward_messages(&tree, leaves, params.sigma2, &mut msgs);
        bp::downward(&tree, params.sigma2, &mut msgs);
        let before = tree.clone();
        let params_before = params;
        {
            let m = MStep::with_density(&before, &msgs, &params, &tables, density);
            let z0 = m.z_of_tree();
            let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7);
            let res = Executor::new(Problem(&m), solver)
                .configure(|st| st.param(z0.clone()).max_iters(settings.lbfgs_iterations))
                .run();
            // Keep the best point L-BFGS saw; a failed line search keeps the start.
            let z = match res {
                Ok(r) => r.state().get_best_param().cloned().unwrap_or(z0.clone()),
                Err(_) => z0.clone(),
            };
            let z = if m.q(&z) >= m.q(&z0) { z } else { z0 };
            m.apply(&z, &mut tree);
            if settings.learn_c || settings.learn_sigma2 {
                update_hypers(&m, &z, &tree, &tables, &mut params, settings);
            }
        }
        if settings.learn_theta || settings.learn_alpha {
            update_theta_alpha(&tree, &mut params, settings);
        }
        let f = objective(&tree, leaves, &params, settings, &mut msgs);
        let prev = *trace.last().expect("start");
        if f < prev {
            // Numerical noise at convergence: keep the previous state.
            tree = before;
            params = params_before;
            break;
        }
        trace.push(f);
        if f - prev < settings.tolerance {
            break;
        }
    }
    if settings.direct_iterations > 0 {
        let (before, params_before) = (tree.clone(), params);
        optimise_directly(
            &mut tree,
            leaves,
            &params,
            density,
            settings.direct_iterations,
        );
        // θ and α at their modes for the final times (they only raise the objective).
        if settings.learn_theta || settings.learn_alpha {
            update_theta_alpha(&tree, &mut params, settings);
        }
        let f = objective(&tree, leaves, &params, settings, &mut msgs);
        if f >= *trace.last().expect("start") {
            trace.push(f);
        } else {
            tree = before;
            params = params_before;
        }
    }
    Ok(EmFit {
        tree,
        params,
        trace,
    })
}

/// Modes of the Gamma conditionals of c and 1/σ² given the new times and the E-step statistics.
fn update_hypers(
    m: &MStep<'_>,
    z: &[f64],
    tree: &PydtTree,
    tables: &Tables,
    params: &mut Params,
    settings: &EmSettings,
) {
    let internal = tree.internal_nodes();
    if settings.learn_c {
        let (a, b) = settings.c_prior;
        let shape = a + internal.len() as f64;
        let rate = b + internal
            .iter()
            .map(|&v| j_value(tree, v, tables) * tree.s(v))
            .sum::<f64>();
        if shape > 1.0 && rate > 0.0 {
            params.c = (shape - 1.0) / rate;
        }
    }
    if settings.learn_sigma2 {
        let s = m.s_of(z);
        let (a, b) = settings.precision_prior;
        let ss: f64 = m
            .nodes
            .iter()
            .map(|&v| m.e_uv[v] / (2.0 * m.branch(&s, v)))
            .sum();
        let shape = a + 0.5 * m.d * m.nodes.len() as f64;
        if shape > 1.0 && ss.is_finite() {
            params.sigma2 = (b + ss) / (shape - 1.0);
        }
    }
}
