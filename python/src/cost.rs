//! What a long call will cost, said before it runs: the command line's limits on counts (the
//! same keys' limits, with their cost in the message), a time model where the command line has
//! none that depends on the data's size (the diffusion trees' search and sampler, measured on
//! the 2-core development machine: orders of magnitude, not promises), a `CostWarning` for a
//! call that the model puts above [`ANNOUNCE_SECONDS`], and a refusal above [`REFUSE_SECONDS`].

use crate::{count_in, Int};
use pyo3::create_exception;
use pyo3::exceptions::{PyUserWarning, PyValueError};
use pyo3::prelude::*;
use trellis_core::coalescent::method::Method;
use trellis_core::coalescent::variants::Variant;
use trellis_core::exact::human_seconds;

create_exception!(
    trellis_lab,
    CostWarning,
    PyUserWarning,
    "A call that the cost model expects to run for minutes or more, said before it starts (Ctrl-C or a CancelToken stops it; warnings.filterwarnings(\"ignore\", category=CostWarning) silences it)."
);

/// Calls expected to take longer than this (by the cost model) are announced.
pub(crate) const ANNOUNCE_SECONDS: f64 = 60.0;

/// Calls expected to take longer than this (a day, by the cost model) are refused.
pub(crate) const REFUSE_SECONDS: f64 = 86_400.0;

/// The command line's limit on a count, with the key it comes from and what one unit costs
/// (`src/experiment/*`: the same numbers).
pub(crate) struct Limit {
    /// The largest value.
    pub(crate) most: u64,
    /// The command line's key with this limit.
    pub(crate) key: &'static str,
    /// What one unit is, e.g. "sampler iteration".
    pub(crate) unit: &'static str,
    /// Seconds one unit costs.
    pub(crate) seconds: f64,
}

/// A [`Limit`].
const fn limit(most: u64, key: &'static str, unit: &'static str, seconds: f64) -> Limit {
    Limit {
        most,
        key,
        unit,
        seconds,
    }
}

/// `pydt.mcmc.iterations`: at most 1,000,000, 0.05 s each.
pub(crate) const MCMC_ITERATIONS: Limit =
    limit(1_000_000, "pydt.mcmc.iterations", "sampler iteration", 0.05);

/// `pydt.mcmc.moves`: at most 1,000,000 proposals per iteration, 0.1 ms each.
pub(crate) const MCMC_MOVES: Limit =
    limit(1_000_000, "pydt.mcmc.moves", "proposal per iteration", 1e-4);

/// `pydt.mcmc.max_tries`: at most 100,000 (Knowles: 100), a walk down the tree each.
pub(crate) const MCMC_MAX_TRIES: Limit =
    limit(100_000, "pydt.mcmc.max_tries", "try of a proposal", 1e-4);

/// `pydt.map.search.iterations`: at most 100,000 search steps, 0.1 s each.
pub(crate) const MAP_ITERATIONS: Limit =
    limit(100_000, "pydt.map.search.iterations", "search step", 0.1);

/// `jets.max_tries`: at most 100,000,000 generator draws, 20 µs each.
pub(crate) const JET_TRIES: Limit = limit(100_000_000, "jets.max_tries", "generator draw", 2e-5);

/// The pydt kind's points (`pydt.data.points`): at most 20,000.
pub(crate) const PYDT_POINTS: usize = 20_000;

/// `coalescent_synthetic.particles`: at most 100,000 (the board and `coalescent_labelled`:
/// 10,000); their memory is checked against the data's size too.
pub(crate) const PARTICLES: u64 = 100_000;

/// `name = v` as a count of at least `min` within `limit`, refused with the limit's key and
/// what `v` units would cost.
pub(crate) fn limited(name: &str, v: Int, min: usize, limit: &Limit) -> PyResult<usize> {
    let units = v.approx().max(0.0);
    let why = format!(
        "the command line's limit ({}): it would take {} (one {} costs about {}); lower it",
        limit.key,
        about_seconds(units * limit.seconds),
        limit.unit,
        short_seconds(limit.seconds)
    );
    count_in(name, v, min, limit.most, &why)
}

/// "about 3.2 h", or "far beyond any machine (…)" without the "about".
pub(crate) fn about_seconds(s: f64) -> String {
    let t = human_seconds(s);
    if t.starts_with("far") {
        t
    } else {
        format!("about {t}")
    }
}

/// Seconds below one in milliseconds ("50 ms", "0.1 ms"), others as `human_seconds`.
fn short_seconds(s: f64) -> String {
    if s >= 1.0 {
        return human_seconds(s);
    }
    format!("{} ms", (s * 1e6).round() / 1e3)
}

/// Refuses (`ValueError`) a call that the cost model puts above [`REFUSE_SECONDS`] and warns
/// (`CostWarning`) of one above [`ANNOUNCE_SECONDS`], naming `what` it is and `fix` for a
/// refusal.
pub(crate) fn announce(py: Python<'_>, what: &str, seconds: f64, fix: &str) -> PyResult<()> {
    if seconds > REFUSE_SECONDS {
        return Err(PyValueError::new_err(format!(
            "{what} would take {} by the cost model (measured on 2 cores), more than the day allowed; {fix}",
            about_seconds(seconds)
        )));
    }
    if seconds > ANNOUNCE_SECONDS {
        let message = format!(
            "{what} will take about {} by the cost model (measured on 2 cores); Ctrl-C or cancel=CancelToken(timeout=...) stops it",
            human_seconds(seconds)
        );
        PyErr::warn(
            py,
            &py.get_type::<CostWarning>(),
            &std::ffi::CString::new(message)?,
            1,
        )?;
    }
    Ok(())
}

/// Seconds of `pydt_map` on `n` points of `d` features with `iterations` search steps: the
/// sequential start (cubic in n), the final EM, and each step's EM runs (quadratic in n),
/// weakly growing with d (fitted to n = 25..400, d = 3 and 30).
pub(crate) fn pydt_map_seconds(n: usize, d: usize, iterations: usize) -> f64 {
    let (n, d) = (n as f64, d as f64);
    let start = 1e-6 * n.powi(3) + 2e-3 * n;
    let step = 1e-2 + 1e-5 * n * n;
    (start + iterations as f64 * step) * (1.0 + d / 100.0)
}

/// Seconds of `coalescent` with `method` on `n` points: a greedy rule's O(n³) merges, or an
/// SMC variant's `particles` particles each scoring every active pair at every merge (SMC1's
/// race clocks about 3x more), fitted to n = 50..1600 (d = 2; the O(n² d) pairwise tables are
/// small beside them).
pub(crate) fn coalescent_seconds(method: Method, n: usize, particles: usize) -> f64 {
    let cube = (n as f64).powi(3);
    match method.variant() {
        None => 1.4e-9 * cube,
        Some(Variant::Smc1) => 1.5e-8 * particles as f64 * cube,
        Some(_) => 4.5e-9 * particles as f64 * cube,
    }
}

/// Seconds of `pydt_mcmc` on `n` points with `iterations` iterations of `moves` proposals
/// (0: one per point), each about 0.4 µs per point (fitted to n = 30..240).
pub(crate) fn pydt_mcmc_seconds(n: usize, iterations: usize, moves: usize) -> f64 {
    let proposals = if moves == 0 { n } else { moves } as f64;
    iterations as f64 * (1e-4 + 4e-7 * proposals * n as f64)
}
