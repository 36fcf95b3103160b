//! Bayesian trees over points: the Kingman coalescent (its SMC variants and greedy rules) and
//! the Pitman–Yor and Dirichlet diffusion trees (MAP tree by greedy EM search, MCMC samples).
//! Defaults are the board's (`[board.coalescent]`, `[board.pydt]`), which are the crate's own
//! where it has one; seeds go to the crate's functions unchanged.

use crate::cost::{self, limited};
use crate::{count, float_matrix, interruptible, seed_of, value_error, CancelToken, Int, Tree};
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyDict, PyTuple};
use rand::rngs::StdRng;
use rand::SeedableRng;
use trellis_core::coalescent::covariance::{Covariance, Kernel, Whitening};
use trellis_core::coalescent::gig::WeightMode;
use trellis_core::coalescent::history::{ln_joint, History};
use trellis_core::coalescent::method::{fit, Method, MethodSettings};
use trellis_core::hierarchy::Hierarchy;
use trellis_core::pydt::generate::sample_tree;
use trellis_core::pydt::mcmc::AcceptRule::{self, General, Likelihood};
use trellis_core::pydt::mcmc::{Data, Hypers, Sampler, Settings};
use trellis_core::pydt::search::{greedy_search, Observations, SearchSettings};
use trellis_core::pydt::{Leaves, Messages, Params, Tables};

/// The rows of `obj`, an `(n, d)` array of finite numbers with n >= 2 and d >= 1, converted a
/// block of rows at a time (Ctrl-C answered between blocks) after `limit` has seen the shape
/// and said the memory the callee needs besides the rows (checked with them).
fn points(
    obj: &Bound<'_, PyAny>,
    limit: impl FnOnce(usize, usize) -> PyResult<f64>,
) -> PyResult<Vec<Vec<f64>>> {
    let x = crate::float_rows(obj, "data", |n, d| {
        if n < 2 || d == 0 {
            return Err(PyValueError::new_err(format!(
                "data has shape ({n}, {d}); pass an (n, d) array with n >= 2 points and d >= 1"
            )));
        }
        limit(n, d)
    })?;
    let bad = x.iter().enumerate().find_map(|(i, r)| {
        let k = r.iter().position(|v| !v.is_finite())?;
        Some((i, k, r[k]))
    });
    if let Some((i, k, v)) = bad {
        return Err(PyValueError::new_err(format!(
            "data has the non-finite value {v} at row {i}, column {k}; remove or impute it"
        )));
    }
    Ok(x)
}

/// `particles` within the command line's limit, said with what they would take over `n` points.
fn particles_within(particles: Int, method: Method, n: usize) -> PyResult<usize> {
    let each = trellis_core::coalescent::method::particle_bytes(method, n);
    let why = format!(
        "the command line's limit (coalescent_synthetic.particles; the board's: 10000): over {n} points they may take up to {} ({} each); lower it",
        trellis_core::exact::human_bytes(particles.approx().max(0.0) * each),
        trellis_core::exact::human_bytes(each)
    );
    crate::count_in("particles", particles, 1, cost::PARTICLES, &why)
}

/// Bytes of a copy of `n` rows of `d` numbers (the whitened data).
fn rows_bytes(n: usize, d: usize) -> f64 {
    n as f64 * (d as f64 * 8.0 + 24.0)
}

/// `rows` whitened by `w`, a block of rows at a time, stopping when the computation is
/// cancelled (O(n d²) in all).
fn whiten(w: &Whitening, rows: &[Vec<f64>]) -> Result<Vec<Vec<f64>>, String> {
    let cancel = trellis_core::cancel::Cancel::new();
    let mut out = Vec::with_capacity(rows.len());
    for block in rows.chunks(256) {
        if cancel.is_cancelled() {
            return Err(trellis_core::cancel::MESSAGE.to_string());
        }
        out.extend(w.whiten_rows(block).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// The value called `name` in `known`, or a one-line error listing the names.
pub(crate) fn choose<T: Copy>(what: &str, name: &str, known: &[(&'static str, T)]) -> PyResult<T> {
    let hit = known.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
    hit.ok_or_else(|| {
        let names: Vec<&str> = known.iter().map(|(n, _)| *n).collect();
        PyValueError::new_err(format!(
            "{what} = {name:?} is not known; use one of {}",
            names.join(", ")
        ))
    })
}

const WEIGHT_MODES: [(&str, WeightMode); 2] = [
    ("exact", WeightMode::Exact),
    ("paper_faithful", WeightMode::PaperFaithful),
];

/// Φ's Cholesky whitening for `d` features: `phi` (a `(d, d)` array) or σ² I.
fn whitening(phi: Option<&Bound<'_, PyAny>>, sigma2: Option<f64>, d: usize) -> PyResult<Whitening> {
    match (phi, sigma2) {
        (Some(_), Some(_)) => Err(PyValueError::new_err(
            "pass phi (a (d, d) covariance) or sigma2 (phi = sigma2 * I), not both",
        )),
        (Some(p), None) => {
            let p = float_matrix(p, "phi", |r, c| {
                if [r, c] != [d, d] {
                    return Err(PyValueError::new_err(format!(
                        "phi has shape ({r}, {c}) for data of {d} features; pass a ({d}, {d}) array"
                    )));
                }
                Ok(())
            })?;
            let flat: Vec<f64> = p.as_array().iter().copied().collect();
            Whitening::from_row_major(d, &flat).map_err(value_error)
        }
        (None, s) => {
            let sigma2 = s.unwrap_or(1.0);
            let cov = Covariance::new(Kernel::Isotropic { dim: d, sigma2 });
            cov.whitening().map_err(value_error)
        }
    }
}

/// A coalescent fit: the highest-weight tree, every particle with its weight and, for the SMC
/// methods, the estimate of log p(X) and the weight mode that produced it.
#[pyclass(module = "trellis_lab", name = "CoalescentFit", frozen)]
pub(crate) struct CoalescentFit {
    /// The method's name (`"mpost2"`, `"mgreedy"`, ...).
    #[pyo3(get)]
    method: &'static str,
    /// The highest-weight tree (a greedy method's one tree); heights are merge times.
    #[pyo3(get)]
    tree: Tree,
    /// The SMC estimate of log p(X) (None for a greedy method). With `weight_mode` "exact",
    /// exp of it is unbiased for p(X); with "paper_faithful" (MPOST1, MPOST2, SMC1) it is Henao
    /// & Lucas's weight total, not an estimate of log p(X).
    #[pyo3(get)]
    log_evidence: Option<f64>,
    /// The weight mode that produced `log_evidence`, `"exact"` or `"paper_faithful"` (None for
    /// a greedy method, which has no weights).
    #[pyo3(get)]
    weight_mode: Option<&'static str>,
    /// SMC stages that resampled (0 for a greedy method).
    #[pyo3(get)]
    resamples: usize,
    /// log p(X, tree) of `tree` under the model (the board's own objective for the method).
    #[pyo3(get)]
    log_joint: f64,
    histories: Vec<History>,
    weights: Vec<f64>,
}

#[pymethods]
impl CoalescentFit {
    /// Every particle's tree (one for a greedy method), in particle order.
    #[getter]
    fn trees(&self) -> PyResult<Vec<Tree>> {
        let tree = |h| Hierarchy::from_history(h).map(Tree::from_hierarchy);
        self.histories
            .iter()
            .map(tree)
            .collect::<Result<_, _>>()
            .map_err(value_error)
    }

    /// The particles' normalised weights (float64, summing to 1; `[1.0]` for a greedy method).
    #[getter]
    fn weights<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, &self.weights)
    }

    fn __repr__(&self) -> String {
        let ev = self.log_evidence.map_or("None".into(), |e| e.to_string());
        let mode = self.weight_mode.map_or("None".into(), |m| format!("{m:?}"));
        let (m, n) = (self.method, self.histories.len());
        format!("CoalescentFit({m:?}, particles={n}, log_evidence={ev}, weight_mode={mode})")
    }

    /// Pickles every field: the particles' merges, weights and the fit's numbers, bit for bit.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        let histories: Vec<PickledHistory> = (self.histories.iter())
            .map(|h| (h.n, h.merges.clone()))
            .collect();
        let state = (
            self.method,
            self.tree.clone(),
            self.log_evidence,
            self.weight_mode,
            self.resamples,
            self.log_joint,
            histories,
            self.weights.clone(),
        );
        reduced::<Self>(py, state.into_pyobject(py)?)
    }

    /// The fit `__reduce__` pickled (each history checked again).
    #[staticmethod]
    #[allow(clippy::too_many_arguments)] // the fields, as pickled
    fn _from_pickle(
        method: &str,
        tree: Tree,
        log_evidence: Option<f64>,
        weight_mode: Option<&str>,
        resamples: usize,
        log_joint: f64,
        histories: Vec<PickledHistory>,
        weights: Vec<f64>,
    ) -> PyResult<CoalescentFit> {
        let methods: Vec<(&str, Method)> = Method::ALL.iter().map(|&m| (m.name(), m)).collect();
        let modes = WEIGHT_MODES.map(|m| (m.0, m.0));
        let histories = histories.into_iter().map(|(n, m)| History::new(n, m));
        Ok(CoalescentFit {
            method: choose("method", method, &methods)?.name(),
            tree,
            log_evidence,
            weight_mode: weight_mode
                .map(|w| choose("weight_mode", w, &modes))
                .transpose()?,
            resamples,
            log_joint,
            histories: histories.collect::<Result<_, _>>().map_err(value_error)?,
            weights,
        })
    }
}

/// A coalescent history as pickled: its leaves and merges `(a, b, t)`.
type PickledHistory = (usize, Vec<(usize, usize, f64)>);

/// What `__reduce__` returns: a constructor and its arguments.
pub(crate) type Reduced<'py> = (Bound<'py, PyAny>, Bound<'py, PyTuple>);

/// `(T._from_pickle, state)`.
pub(crate) fn reduced<'py, T: pyo3::PyTypeInfo>(
    py: Python<'py>,
    state: Bound<'py, PyTuple>,
) -> PyResult<Reduced<'py>> {
    Ok((py.get_type::<T>().getattr("_from_pickle")?, state))
}

/// A diffusion-tree model's name, "pydt" or "ddt".
fn model_name(name: &str) -> PyResult<&'static str> {
    choose("model", name, &[("pydt", "pydt"), ("ddt", "ddt")])
}

/// θ, α, c, σ² as a tuple, and back.
type ParamTuple = (f64, f64, f64, f64);

fn param_tuple(p: &Params) -> ParamTuple {
    (p.theta, p.alpha, p.c, p.sigma2)
}

fn params_of((theta, alpha, c, sigma2): ParamTuple) -> Params {
    Params {
        theta,
        alpha,
        c,
        sigma2,
    }
}

/// Kingman-coalescent clustering of the rows of `data` (an `(n, d)` array, n >= 2) with Brownian
/// transitions of covariance `phi` (a `(d, d)` array) or `sigma2 * I` (default I).
///
/// `method` is one of the crate's builders: the SMC variants `prior_prior`, `prior_post`,
/// `post_post`, `smc1`, `mpost1`, `mpost2` (with `particles`, `weight_mode` and
/// `resample_threshold`: resample when ESS < threshold * particles) and the greedy rules
/// `greedy`, `mgreedy`, `greedy_exact` (which ignore those and the seed). `weight_mode` is
/// `"exact"` (true importance weights, so exp(log_evidence) is unbiased for p(X); the crate's
/// default) or `"paper_faithful"` (Henao & Lucas's normalisers, the default of the
/// `coalescent_synthetic` and `coalescent_labelled` experiments). PRIOR-PRIOR, PRIOR-POST and
/// POST-POST weigh the same in both modes; in exact mode MPOST1 is POST-POST.
///
/// `seed` goes unchanged to the crate's `coalescent::method::fit`: the same seed gives the same
/// bits at any thread count. The board's `mpost2`/`mgreedy` row of an instance is
/// `coalescent(x, method, seed=s)` with x the instance's standardised features and
/// s = `splitmix64_mix(master_seed ^ hash_bytes("dataset/instance/method"))`.
///
/// Before the data are converted: at most 100,000 particles (the command line's limit), the
/// pairwise tables and the particles at their largest within memory, and the time by the cost
/// model (O(n³), times the particles for SMC): above a minute a `CostWarning`, above a day
/// refused.
#[pyfunction]
#[pyo3(signature = (data, method = "mpost2", *, particles = Int::new(20), seed = Int::new(0), sigma2 = None, phi = None, weight_mode = "exact", resample_threshold = 0.5, cancel = None), text_signature = "(data, method='mpost2', *, particles=20, seed=0, sigma2=None, phi=None, weight_mode='exact', resample_threshold=0.5, cancel=None)")]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
fn coalescent(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    method: &str,
    particles: Int,
    seed: Int,
    sigma2: Option<f64>,
    phi: Option<&Bound<'_, PyAny>>,
    weight_mode: &str,
    resample_threshold: f64,
    cancel: Option<&CancelToken>,
) -> PyResult<CoalescentFit> {
    let methods: Vec<(&str, Method)> = Method::ALL.iter().map(|&m| (m.name(), m)).collect();
    let method = choose("method", method, &methods)?;
    let (mode_name, mode) = choose("weight_mode", weight_mode, &WEIGHT_MODES.map(|m| (m.0, m)))?;
    let seed = seed_of(seed)?;
    // The particles' limit and memory and the pairwise tables, before the data are converted.
    let mut settings = MethodSettings {
        particles: count("particles", particles, 1)?,
        weight_mode: mode,
        resample_threshold,
        parallel: true,
    };
    let x = points(data, |n, d| {
        let p = particles_within(particles, method, n)?;
        trellis_core::coalescent::method::check_memory(method, n, p)
            .map_err(|e| PyValueError::new_err(format!("data has shape ({n}, {d}): {e}")))?;
        let what = format!("coalescent {:?} on {n} points", method.name());
        let what = match method.variant() {
            Some(_) => format!("{what} with {p} particles"),
            None => what,
        };
        let fix = "cluster a subsample of the points, or fewer particles";
        cost::announce(py, &what, cost::coalescent_seconds(method, n, p), fix)?;
        settings.particles = p;
        Ok(rows_bytes(n, d))
    })?;
    let w = whitening(phi, sigma2, x[0].len())?;
    let ldh = w.ln_det_half();
    let (f, joint) = interruptible(py, cancel, || -> Result<_, String> {
        let xw = whiten(&w, &x)?;
        drop(x);
        let f = fit(method, &xw, ldh, &settings, seed).map_err(|e| e.to_string())?;
        let joint = ln_joint(f.best(), &xw, ldh).map_err(|e| e.to_string())?;
        Ok((f, joint))
    })?
    .map_err(PyValueError::new_err)?;
    let best = Hierarchy::from_history(f.best()).map_err(value_error)?;
    Ok(CoalescentFit {
        method: method.name(),
        tree: Tree::from_hierarchy(best),
        weight_mode: f.log_evidence.map(|_| mode_name),
        log_evidence: f.log_evidence,
        resamples: f.resamples,
        log_joint: joint,
        histories: f.histories,
        weights: f.weights,
    })
}

/// The number of points, the parameters and the leaves of a diffusion tree: θ and α default to
/// the board's 0.5 and 0.2 for the PYDT and are 0 for the DDT (`Params::ddt`).
fn diffusion(
    data: &Bound<'_, PyAny>,
    ddt: bool,
    (theta, alpha): (Option<f64>, Option<f64>),
    c: f64,
    sigma2: f64,
    noise: f64,
    limit: impl FnOnce(usize, usize) -> PyResult<f64>,
) -> PyResult<(usize, Params, Leaves)> {
    let x = points(data, |n, d| {
        let most = cost::PYDT_POINTS;
        if n > most {
            return Err(PyValueError::new_err(format!(
                "data has {n} points, more than {most}, the command line's limit (pydt.data.points; the search is cubic in the points); cluster a subsample"
            )));
        }
        // The leaves' copy beside the rows.
        Ok(limit(n, d)? + rows_bytes(n, d))
    })?;
    if ddt && (theta.is_some() || alpha.is_some()) {
        return Err(PyValueError::new_err(
            "ddt=True fixes theta = alpha = 0; drop theta and alpha, or use ddt=False",
        ));
    }
    let p = match ddt {
        true => Params::ddt(c, sigma2),
        false => Params::new(theta.unwrap_or(0.5), alpha.unwrap_or(0.2), c, sigma2),
    };
    let leaves = Leaves::with_noise(&x, noise).map_err(value_error)?;
    Ok((x.len(), p.map_err(value_error)?, leaves))
}

const HYPERS: [&str; 4] = ["theta", "alpha", "c", "sigma2"];
const RULES: [(&str, AcceptRule); 2] = [("general", General), ("likelihood", Likelihood)];

/// The crate's hyper-parameter switches with θ, α, c, σ² on where `names` lists them (θ and
/// α off for the DDT, as the crate does).
fn hypers(what: &str, names: &[String], ddt: bool) -> PyResult<Hypers> {
    let mut h = Hypers::fixed();
    for n in names {
        let known = [("theta", 0), ("alpha", 1), ("c", 2), ("sigma2", 3)];
        *[&mut h.theta, &mut h.alpha, &mut h.c, &mut h.sigma2][choose(what, n, &known)?] = true;
    }
    (h.theta, h.alpha) = (h.theta && !ddt, h.alpha && !ddt);
    Ok(h)
}

/// A diffusion tree's MAP search: the best tree, its objective and log joint, the best
/// objective after each step, and the parameters at the end (moved only where `learn` asks).
#[pyclass(module = "trellis_lab", name = "DiffusionTreeFit", frozen)]
pub(crate) struct DiffusionTreeFit {
    /// `"pydt"` or `"ddt"`.
    #[pyo3(get)]
    model: &'static str,
    /// The MAP tree (any arity for the PYDT); heights are 1 - t, t the divergence time.
    #[pyo3(get)]
    tree: Tree,
    /// What the search maximises (the board's own objective), plus the learned hyper-parameters'
    /// log priors: with `noise` > 0 or "sigma2" in `learn`, the log density of (X, T, s) at
    /// log-scale times s = -ln(1 - t), i.e. `log_joint` minus the internal nodes' s; with exact
    /// leaves (`noise=0`) and σ² fixed, the log density of (X, T, t), i.e. `log_joint` (EM's
    /// `time_density = "auto"`: the t-density where it has a maximum).
    #[pyo3(get)]
    objective: f64,
    /// log p(X, T, t) of the tree at the final parameters: the quantity `pydt_mcmc` traces.
    #[pyo3(get)]
    log_joint: f64,
    /// Full EM runs the search made.
    #[pyo3(get)]
    em_runs: usize,
    params: Params,
    trace: Vec<f64>,
}

#[pymethods]
impl DiffusionTreeFit {
    /// The parameters at the end, {"theta", "alpha", "c", "sigma2"} (moved only if learned).
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let p = [
            self.params.theta,
            self.params.alpha,
            self.params.c,
            self.params.sigma2,
        ];
        HYPERS.into_iter().zip(p).into_py_dict(py)
    }

    /// The best objective after the start and after each search step (float64).
    #[getter]
    fn trace<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, &self.trace)
    }

    fn __repr__(&self) -> String {
        let (m, o) = (self.model, self.objective);
        format!("DiffusionTreeFit({m:?}, objective={o})")
    }

    /// Pickles every field, bit for bit.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        let state = (
            self.model,
            self.tree.clone(),
            self.objective,
            self.log_joint,
            self.em_runs,
            param_tuple(&self.params),
            self.trace.clone(),
        );
        reduced::<Self>(py, state.into_pyobject(py)?)
    }

    /// The fit `__reduce__` pickled.
    #[staticmethod]
    fn _from_pickle(
        model: &str,
        tree: Tree,
        objective: f64,
        log_joint: f64,
        em_runs: usize,
        params: ParamTuple,
        trace: Vec<f64>,
    ) -> PyResult<DiffusionTreeFit> {
        Ok(DiffusionTreeFit {
            model: model_name(model)?,
            tree,
            objective,
            log_joint,
            em_runs,
            params: params_of(params),
            trace,
        })
    }
}

/// The MAP Pitman–Yor diffusion tree (or, with `ddt=True`, Dirichlet diffusion tree: θ = α = 0)
/// of the rows of `data` by the crate's greedy Bayesian EM search (`pydt::search::greedy_search`:
/// a sequential start, then `iterations` detach/re-attach steps over a list of the 10 best trees).
///
/// Parameters: concentration `theta` (default 0.5) and discount `alpha` (default 0.2), divergence
/// smoothness `c`, diffusion variance `sigma2`, leaf noise variance `noise` (> 0 lets duplicate
/// points be; 0 is the paper's model). `learn` lists hyper-parameters EM moves to their
/// conditional modes: any of "theta", "alpha", "c", "sigma2" (a DDT never moves θ, α).
///
/// `seed` seeds the `StdRng` the search draws from (`StdRng::seed_from_u64(seed)`), as the CLI
/// does: a `pydt` run's `[pydt.map]` row of model m, replicate r is this with
/// seed = `experiment::pydt::stream(master_seed, 3, m, r)` (and `iterations=100`, the model's
/// parameters); a board row's, with s = `splitmix64_mix(master_seed ^ hash_bytes(key))`, on
/// the standardised features.
#[pyfunction]
#[pyo3(signature = (data, *, ddt = false, seed = Int::new(0), theta = None, alpha = None, c = 1.0, sigma2 = 1.0, noise = 0.1, iterations = Int::new(30), learn = Vec::new(), cancel = None), text_signature = "(data, *, ddt=False, seed=0, theta=None, alpha=None, c=1.0, sigma2=1.0, noise=0.1, iterations=30, learn=(), cancel=None)")]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
fn pydt_map(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    ddt: bool,
    seed: Int,
    theta: Option<f64>,
    alpha: Option<f64>,
    c: f64,
    sigma2: f64,
    noise: f64,
    iterations: Int,
    learn: Vec<String>,
    cancel: Option<&CancelToken>,
) -> PyResult<DiffusionTreeFit> {
    let iterations = limited("iterations", iterations, 0, &cost::MAP_ITERATIONS)?;
    let h = hypers("learn", &learn, ddt)?;
    let seed = seed_of(seed)?;
    let (n, params, leaves) = diffusion(data, ddt, (theta, alpha), c, sigma2, noise, |n, d| {
        let what = format!("pydt_map on {n} points of {d} features with {iterations} search steps");
        let fix = "cluster a subsample of the points, or fewer iterations";
        cost::announce(py, &what, cost::pydt_map_seconds(n, d, iterations), fix)?;
        Ok(0.0)
    })?;
    let mut settings = SearchSettings {
        iterations,
        ..SearchSettings::default()
    };
    for em in [&mut settings.em, &mut settings.final_em] {
        (em.learn_theta, em.learn_alpha, em.learn_c) = (h.theta, h.alpha, h.c);
        em.learn_sigma2 = h.sigma2;
    }
    let obs = Observations::Gaussian(leaves.clone());
    let r = interruptible(py, cancel, || {
        greedy_search(&obs, &params, &settings, &mut StdRng::seed_from_u64(seed))
    })?
    .map_err(value_error)?;
    let (tables, mut msgs) = (Tables::new(&r.params, n), Messages::default());
    let joint = trellis_core::pydt::ln_joint(&r.tree, &leaves, &r.params, &tables, &mut msgs);
    Ok(DiffusionTreeFit {
        model: if ddt { "ddt" } else { "pydt" },
        tree: Tree::from_hierarchy(Hierarchy::from_pydt(&r.tree).map_err(value_error)?),
        objective: r.objective,
        log_joint: joint,
        params: r.params,
        em_runs: r.em_runs,
        trace: r.trace,
    })
}

/// The log joint, the log likelihood and the parameters after one iteration.
type State = (f64, f64, Params);

/// A chain of the collapsed diffusion-tree sampler: after each iteration the log joint, the
/// log likelihood and the parameters; every `thin`-th tree; the move counts.
#[pyclass(module = "trellis_lab", name = "DiffusionTreeSamples", frozen)]
pub(crate) struct DiffusionTreeSamples {
    /// `"pydt"` or `"ddt"`.
    #[pyo3(get)]
    model: &'static str,
    /// Detach/re-attach moves (proposed, accepted, abandoned after `max_tries` walks).
    #[pyo3(get)]
    moves: (u64, u64, u64),
    /// The trees after iterations thin, 2 thin, ... (heights 1 - t).
    #[pyo3(get)]
    trees: Vec<Tree>,
    /// Per iteration: log joint, log likelihood, parameters.
    states: Vec<State>,
}

impl DiffusionTreeSamples {
    fn column<'py>(&self, py: Python<'py>, f: fn(&State) -> f64) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_iter(py, self.states.iter().map(f))
    }
}

#[pymethods]
impl DiffusionTreeSamples {
    /// log p(X, T, t) after each iteration (float64, one per iteration).
    #[getter]
    fn log_joint<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.column(py, |s| s.0)
    }

    /// log p(X | T, t) after each iteration.
    #[getter]
    fn log_likelihood<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.column(py, |s| s.1)
    }

    /// {"theta", "alpha", "c", "sigma2"}: each parameter after each iteration (float64).
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let at: [fn(&State) -> f64; 4] = [|s| s.2.theta, |s| s.2.alpha, |s| s.2.c, |s| s.2.sigma2];
        let columns = at.map(|f| self.column(py, f));
        HYPERS.into_iter().zip(columns).into_py_dict(py)
    }

    fn __repr__(&self) -> String {
        let n = self.states.len();
        format!("DiffusionTreeSamples({:?}, iterations={n})", self.model)
    }

    /// Pickles every field, bit for bit.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        let states: Vec<(f64, f64, ParamTuple)> = (self.states.iter())
            .map(|s| (s.0, s.1, param_tuple(&s.2)))
            .collect();
        let state = (self.model, self.moves, self.trees.clone(), states);
        reduced::<Self>(py, state.into_pyobject(py)?)
    }

    /// The chain `__reduce__` pickled.
    #[staticmethod]
    fn _from_pickle(
        model: &str,
        moves: (u64, u64, u64),
        trees: Vec<Tree>,
        states: Vec<(f64, f64, ParamTuple)>,
    ) -> PyResult<DiffusionTreeSamples> {
        Ok(DiffusionTreeSamples {
            model: model_name(model)?,
            moves,
            trees,
            states: (states.into_iter())
                .map(|(j, l, p)| (j, l, params_of(p)))
                .collect(),
        })
    }
}

/// `iterations` iterations of the crate's collapsed sampler (`pydt::mcmc::Sampler`) for the
/// Pitman–Yor diffusion tree (or, with `ddt=True`, the Dirichlet diffusion tree), started from
/// a tree drawn from the prior. Each iteration: `moves` detach/re-attach proposals (0: one per
/// point) under `rule` ("general", the exact Metropolis–Hastings ratio, or "likelihood", the
/// paper's), a slice-sampling sweep over the times, then the hyper-parameters listed in `sample`
/// (a DDT never samples θ, α). Model parameters (start values where sampled) as in `pydt_map`,
/// except the leaf noise: 0 by default, the paper's model and `[[pydt.models]]`' default (then
/// duplicate points are an error). With noise > 0 and c sampled, chains can drift towards c -> 0
/// with the internal times crowding at t = 1 and a log joint growing without bound.
///
/// `seed` seeds the one `StdRng` that draws the start tree and every move, as the CLI does: a
/// `pydt` run's `[pydt.mcmc]` chain k of model m is this with
/// seed = `experiment::pydt::stream(master_seed, 4, m, k)` (its traces also hold the start
/// state, iteration 0).
#[pyfunction]
#[pyo3(signature = (data, iterations = Int::new(100), *, ddt = false, seed = Int::new(0), theta = None, alpha = None, c = 1.0, sigma2 = 1.0, noise = 0.0, sample = HYPERS.map(String::from).to_vec(), moves = Int::new(0), rule = "general", thin = Int::new(1), max_tries = Int::new(100), cancel = None), text_signature = "(data, iterations=100, *, ddt=False, seed=0, theta=None, alpha=None, c=1.0, sigma2=1.0, noise=0.0, sample=('theta', 'alpha', 'c', 'sigma2'), moves=0, rule='general', thin=1, max_tries=100, cancel=None)")]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
fn pydt_mcmc(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    iterations: Int,
    ddt: bool,
    seed: Int,
    theta: Option<f64>,
    alpha: Option<f64>,
    c: f64,
    sigma2: f64,
    noise: f64,
    sample: Vec<String>,
    moves: Int,
    rule: &str,
    thin: Int,
    max_tries: Int,
    cancel: Option<&CancelToken>,
) -> PyResult<DiffusionTreeSamples> {
    let iterations = limited("iterations", iterations, 1, &cost::MCMC_ITERATIONS)?;
    let thin = count("thin", thin, 1)?;
    let moves = limited("moves", moves, 0, &cost::MCMC_MOVES)?;
    let settings = Settings {
        rule: choose("rule", rule, &RULES)?,
        hypers: hypers("sample", &sample, ddt)?,
        moves,
        max_tries: limited("max_tries", max_tries, 1, &cost::MCMC_MAX_TRIES)?,
    };
    let seed = seed_of(seed)?;
    let kept = iterations / thin;
    let (n, params, leaves) = diffusion(data, ddt, (theta, alpha), c, sigma2, noise, |n, _| {
        let what = format!("pydt_mcmc on {n} points with {iterations} iterations");
        let fix = "fewer iterations, or a subsample of the points";
        cost::announce(
            py,
            &what,
            cost::pydt_mcmc_seconds(n, iterations, moves),
            fix,
        )?;
        // Each iteration's state, and every kept tree (a node's parent, height, children).
        Ok(iterations as f64 * 48.0 + kept as f64 * (2 * n) as f64 * 64.0)
    })?;
    let mut states = crate::vec_with_capacity(iterations, "the chain's states")?;
    let mut trees = crate::vec_with_capacity(kept, "the chain's kept trees")?;
    let run = move || -> Result<DiffusionTreeSamples, String> {
        let mut rng = StdRng::seed_from_u64(seed);
        let tree = sample_tree(n, &params, &mut rng);
        let mut s = Sampler::new(tree, params, Data::Gaussian(leaves), settings)
            .map_err(|e| e.to_string())?;
        let cancel = trellis_core::cancel::Cancel::new();
        for it in 1..=iterations {
            if cancel.is_cancelled() {
                return Err(trellis_core::cancel::MESSAGE.to_string());
            }
            s.iterate(&mut rng)
                .map_err(|e| format!("iteration {it}: {e}"))?;
            states.push((s.ln_joint(), s.ln_likelihood(), *s.params()));
            if it % thin == 0 {
                let h = Hierarchy::from_pydt(s.tree()).map_err(|e| e.to_string())?;
                trees.push(Tree::from_hierarchy(h));
            }
        }
        let k = s.counts();
        Ok(DiffusionTreeSamples {
            model: if ddt { "ddt" } else { "pydt" },
            moves: (k.proposed, k.accepted, k.abandoned),
            trees,
            states,
        })
    };
    interruptible(py, cancel, run)?.map_err(PyValueError::new_err)
}

/// Adds the coalescent and diffusion-tree functions and their result classes to `m`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CoalescentFit>()?;
    m.add_class::<DiffusionTreeFit>()?;
    m.add_class::<DiffusionTreeSamples>()?;
    m.add_function(wrap_pyfunction!(coalescent, m)?)?;
    m.add_function(wrap_pyfunction!(pydt_map, m)?)?;
    m.add_function(wrap_pyfunction!(pydt_mcmc, m)?)?;
    Ok(())
}
