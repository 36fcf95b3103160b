//! `kind = "pydt"`: the experiments of Knowles & Ghahramani's Pitman–Yor diffusion tree paper
//! (UAI 2011, §6) on any data set: PYDT against DDT (and any other models) by
//!
//! 1. `[pydt.map]`: the MAP tree of the greedy Bayesian EM search (spec §2.9) per model and
//!    replicate (Figure 5: four equidistant clusters; Figure 7: the animals' tree);
//! 2. `[pydt.mcmc]`: chains of the collapsed sampler (spec §2.7–2.8) and their traces (Figure 7's
//!    trace of the log joint);
//! 3. `[pydt.density]`: held-out log predictive density on random train/test splits (Figure 6;
//!    the paper's macaque skull data are not available, any continuous data stand in).
//!
//! Config: `[pydt.data]` ([`DataSection`]: `four_clusters`, `animals33`, `pam50`, `usps` or a
//! user's `file`), `[[pydt.models]]` ([`ModelSpec`]: name, θ, α, c, σ², observation model) and
//! the parts, each optional ([`MapPart`], [`McmcPart`], [`DensityPart`]). Outputs: see
//! `experiments/pydt/README.md`.

pub(crate) mod data;
/// Column standardisation, as the board feeds the feature-based methods (also used from Python).
pub use data::standardize;
mod density;
mod figures;
mod map;
mod mcmc;
mod measures;
#[cfg(test)]
mod tests;

use crate::data::matrix::Column;
use crate::experiment::check::Measure;
use crate::experiment::config::resolve;
use crate::experiment::kind::{Experiment, Results, RunContext};
use crate::experiment::limits::{check_size, UnitCost};
use crate::pydt::mcmc::{AcceptRule, Hypers};
use crate::pydt::search::SearchSettings;
use crate::pydt::Params;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The kind.
pub struct Pydt;

/// `kind = "pydt"`: one section.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PydtConfig {
    /// The experiment.
    pub pydt: PydtSection,
}

/// `[pydt]`: the data, the models and the parts to run (at least one).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PydtSection {
    /// Where the points come from.
    pub data: DataSection,
    /// The models, in figure order (`[[pydt.models]]`).
    #[serde(default)]
    pub models: Vec<ModelSpec>,
    /// MAP trees by greedy EM search.
    #[serde(default)]
    pub map: Option<MapPart>,
    /// Chains of the collapsed sampler.
    #[serde(default)]
    pub mcmc: Option<McmcPart>,
    /// Held-out density on train/test splits.
    #[serde(default)]
    pub density: Option<DensityPart>,
}

/// Where the points come from.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Four equidistant Gaussian clusters, a new data set per replicate (Figure 5).
    FourClusters,
    /// Kemp & Tenenbaum's 33 animals × 102 binary features (Figure 7; probit only).
    Animals33,
    /// The pam50 expression data (a folder with `pam50_unc232_expr.tsv` and the labels).
    Pam50,
    /// USPS digits in the ESL text form (one file).
    Usps,
    /// A user's CSV/TSV matrix with a header, rows = points, an optional label column.
    File,
}

impl Source {
    /// The config spelling.
    pub fn name(self) -> &'static str {
        match self {
            Source::FourClusters => "four_clusters",
            Source::Animals33 => "animals33",
            Source::Pam50 => "pam50",
            Source::Usps => "usps",
            Source::File => "file",
        }
    }

    /// Whether the data are continuous by construction (the probit model cannot apply).
    fn continuous(self) -> bool {
        matches!(self, Source::FourClusters | Source::Pam50 | Source::Usps)
    }
}

/// Centres of the four clusters.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Centres {
    /// The vertices of a regular tetrahedron in the first three coordinates (all six pairs
    /// equidistant); `dim` ≥ 3.
    Tetrahedron,
    /// The corners (±1, ±1)·separation/2 of a square in the first two coordinates (adjacent
    /// corners at `separation`, diagonal ones √2 further); `dim` ≥ 2.
    Square,
}

/// `[pydt.data]`. Keys that do not apply to the chosen source are errors.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DataSection {
    /// `four_clusters`, `animals33`, `pam50`, `usps` or `file`.
    pub source: Source,
    /// The input (relative to the config): the animals33 TSV, the pam50 folder, the USPS file
    /// or the user's matrix. Not for `four_clusters`.
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// `file` only: the column of each point's group (by header name or 0-based position).
    #[serde(default)]
    pub label_column: Option<Column>,
    /// `animals33` only: a TSV `animal<TAB>group` replacing our built-in group table.
    #[serde(default)]
    pub groups: Option<PathBuf>,
    /// `four_clusters`: points per cluster (default 10).
    #[serde(default)]
    pub per_cluster: Option<usize>,
    /// `four_clusters`: standard deviation of every coordinate around its centre (default 0.25).
    #[serde(default)]
    pub spread: Option<f64>,
    /// `four_clusters`: distance between neighbouring centres (default 2).
    #[serde(default)]
    pub separation: Option<f64>,
    /// `four_clusters`: dimension (default 3).
    #[serde(default)]
    pub dim: Option<usize>,
    /// `four_clusters`: `tetrahedron` (default) or `square`.
    #[serde(default)]
    pub centres: Option<Centres>,
    /// `pam50`, `usps`, `file`: a random subset of this many points (default: all).
    #[serde(default)]
    pub points: Option<usize>,
    /// `pam50`, `usps`, `file`: drop points identical to an earlier one (exact leaves make a
    /// duplicate pair's posterior improper; default false: duplicates are an error).
    #[serde(default)]
    pub deduplicate: Option<bool>,
    /// `pam50`, `usps`, `file`: centre and scale every feature to unit variance (default false).
    #[serde(default)]
    pub standardize: Option<bool>,
    /// `pam50`, `usps`, `file`: keep this many principal components (default: all features).
    #[serde(default)]
    pub components: Option<usize>,
}

/// How a model observes the data.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Observation {
    /// The leaves are the points (plus optional Gaussian noise).
    #[default]
    Gaussian,
    /// 0/1 points through a probit link in every dimension (spec §2.10).
    Probit,
}

/// `[[pydt.models]]`: one model.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Name in tables, figures and check ids (letters, digits, `_`, `-`).
    pub name: String,
    /// Concentration θ ≥ −2α (0 with α = 0: the DDT).
    #[serde(default)]
    pub theta: f64,
    /// Discount α ∈ [0, 1).
    #[serde(default)]
    pub alpha: f64,
    /// Divergence smoothness c > 0 (start value where it is learned or sampled).
    #[serde(default = "one")]
    pub c: f64,
    /// Diffusion variance σ² > 0 (start value where it is learned or sampled).
    #[serde(default = "one")]
    pub sigma2: f64,
    /// `gaussian` (default) or `probit`.
    #[serde(default)]
    pub observation: Observation,
    /// Gaussian observation noise of the leaves (default 0: the paper's model).
    #[serde(default)]
    pub noise: f64,
}

impl ModelSpec {
    /// The checked parameters.
    pub fn params(&self) -> Result<Params, crate::pydt::PydtError> {
        Params::new(self.theta, self.alpha, self.c, self.sigma2)
    }

    /// Whether this is the DDT (θ = α = 0).
    pub fn is_ddt(&self) -> bool {
        self.theta == 0.0 && self.alpha == 0.0
    }
}

/// `[pydt.map]`: the greedy EM search per model and replicate.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MapPart {
    /// Replicates (searches with their own seed; with `four_clusters` also a new data set each).
    #[serde(default = "one_usize")]
    pub seeds: usize,
    /// The search (`[pydt.map.search]`, spec §2.9; defaults: list 10, 100 steps, EM on 3).
    #[serde(default)]
    pub search: SearchSettings,
}

/// `[pydt.mcmc]`: chains of the collapsed sampler per model.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct McmcPart {
    /// Chains per model, each from its own tree drawn from the model's prior.
    #[serde(default = "two")]
    pub chains: usize,
    /// Iterations per chain (each: `moves` detach/reattach proposals, a sweep over the times,
    /// the probit auxiliaries, the hyper-parameters).
    pub iterations: usize,
    /// Record every `thin`-th iteration (and the start).
    #[serde(default = "one_usize")]
    pub thin: usize,
    /// Detach/reattach proposals per iteration (0: one per leaf).
    #[serde(default)]
    pub moves: usize,
    /// `general` (default, exact) or `likelihood` (the paper's ratio).
    #[serde(default)]
    pub rule: AcceptRule,
    /// Restarts of a proposal walk before the move is abandoned (default 100).
    #[serde(default = "hundred")]
    pub max_tries: usize,
    /// Which hyper-parameters are sampled and their priors (`[pydt.mcmc.hypers]`; the DDT never
    /// samples θ, α).
    #[serde(default)]
    pub hypers: Hypers,
}

/// `[pydt.density]`: held-out log predictive density on random train/test splits.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DensityPart {
    /// Random splits (the paper: 3).
    #[serde(default = "three")]
    pub splits: usize,
    /// Fraction of the points held out in each split.
    #[serde(default = "tenth")]
    pub test_fraction: f64,
    /// Iterations discarded before the first sample.
    pub burn_in: usize,
    /// Tree samples the predictive density averages.
    pub samples: usize,
    /// Iterations between samples.
    #[serde(default = "one_usize")]
    pub thin: usize,
    /// Divergence-time quantiles per segment in the predictive mixture (the paper: 3 draws).
    #[serde(default = "three")]
    pub quantiles: usize,
    /// Detach/reattach proposals per iteration (0: one per leaf).
    #[serde(default)]
    pub moves: usize,
    /// `general` (default) or `likelihood`.
    #[serde(default)]
    pub rule: AcceptRule,
    /// Restarts of a proposal walk (default 100).
    #[serde(default = "hundred")]
    pub max_tries: usize,
    /// Hyper-parameters sampled (`[pydt.density.hypers]`).
    #[serde(default)]
    pub hypers: Hypers,
}

fn one() -> f64 {
    1.0
}
fn one_usize() -> usize {
    1
}
fn two() -> usize {
    2
}
fn three() -> usize {
    3
}
fn hundred() -> usize {
    100
}
fn tenth() -> f64 {
    0.1
}

impl Experiment for Pydt {
    type Config = PydtConfig;

    fn name(&self) -> &'static str {
        "pydt"
    }

    fn about(&self) -> &'static str {
        "Knowles & Ghahramani Figures 5-7: Pitman-Yor vs Dirichlet diffusion trees by greedy EM (MAP trees), MCMC traces and held-out density"
    }

    fn resolve_paths(&self, cfg: &mut PydtConfig, base: &Path) {
        let d = &mut cfg.pydt.data;
        for p in [&mut d.path, &mut d.groups].into_iter().flatten() {
            resolve(p, base);
        }
    }

    fn validate(&self, cfg: &PydtConfig) -> Result<(), String> {
        validate(&cfg.pydt)
    }

    fn inputs(&self, cfg: &PydtConfig) -> Vec<PathBuf> {
        data::inputs(&cfg.pydt.data)
    }

    fn run(&self, cfg: &PydtConfig, ctx: &mut RunContext) -> Result<()> {
        run(&cfg.pydt, ctx)
    }

    fn figures(&self, results: &Results, out: &Path) -> Result<()> {
        figures::draw(results, out)
    }

    fn caption(&self, stem: &str) -> Option<crate::experiment::kind::Caption> {
        figures::caption(stem)
    }

    fn measures(&self, results: &Results) -> Result<Vec<Measure>> {
        measures::measures(results)
    }

    fn expected(&self) -> &'static str {
        include_str!("expected.toml")
    }

    fn properties(&self, results: &Results) -> Result<Vec<Measure>> {
        crate::experiment::properties::pydt(results)
    }
}

/// Runs every part that the section names; the data are read and checked before anything is
/// written.
fn run(s: &PydtSection, ctx: &mut RunContext) -> Result<()> {
    let base = data::load(&s.data, &s.models, ctx.seed(), 0)?;
    // Generated data: every replicate of the MAP part draws its own set (replicate 1 = `base`,
    // which the other parts use).
    let sets = match &s.map {
        Some(m) => map::replicate_data(s, m.seeds, &base, ctx.seed())?,
        None => vec![base.clone()],
    };
    ctx.manifest.set("points", base.rows.len());
    ctx.manifest.set("dimension", base.dim());
    ctx.manifest.set("groups", &base.group_names);
    ctx.manifest.set("data_sets", sets.len());
    map::write_points(&sets).write_parquet(&ctx.path("points.parquet"))?;
    if let Some(m) = &s.map {
        map::run(s, m, &sets, ctx)?;
    }
    if let Some(m) = &s.mcmc {
        mcmc::run(s, m, &base, ctx)?;
    }
    if let Some(d) = &s.density {
        density::run(s, d, &base, ctx)?;
    }
    Ok(())
}

/// Largest number of points a run may hold (the sampler's per-proposal cost is O(N·D)).
const MAX_POINTS: usize = 20_000;

/// The checks of [`Experiment::validate`]; each error is one line naming the key and the fix.
fn validate(s: &PydtSection) -> Result<(), String> {
    if s.map.is_none() && s.mcmc.is_none() && s.density.is_none() {
        return Err(
            "[pydt] runs nothing: add at least one of [pydt.map], [pydt.mcmc] or [pydt.density]"
                .into(),
        );
    }
    data::validate(&s.data)?;
    validate_models(s)?;
    if let Some(m) = &s.map {
        validate_map(m)?;
    }
    if let Some(m) = &s.mcmc {
        validate_mcmc(m)?;
    }
    if let Some(d) = &s.density {
        validate_density(d, s)?;
    }
    Ok(())
}

fn validate_models(s: &PydtSection) -> Result<(), String> {
    if s.models.is_empty() {
        return Err(
            "pydt.models is empty; add [[pydt.models]] tables (e.g. name = \"DDT\" and name = \"PYDT\" with theta, alpha)"
                .into(),
        );
    }
    if s.models.len() > 20 {
        return Err(format!(
            "pydt.models lists {} models; at most 20",
            s.models.len()
        ));
    }
    for (k, m) in s.models.iter().enumerate() {
        let key = format!("pydt.models[{k}]");
        let name = &m.name;
        if name.is_empty()
            || name.len() > 40
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!(
                "{key}.name = {name:?} must be 1 to 40 letters, digits, '_' or '-' (it names table rows and check ids)"
            ));
        }
        if s.models[..k].iter().any(|o| o.name == *name) {
            return Err(format!(
                "pydt.models names {name:?} twice; give each model its own name"
            ));
        }
        m.params()
            .map_err(|e| format!("{key} ({name}): {e}; change it in the config"))?;
        if !(m.noise.is_finite() && m.noise >= 0.0) {
            return Err(format!(
                "{key}.noise = {} must be a finite number >= 0 (0 = exact leaves, the paper's model)",
                m.noise
            ));
        }
        match m.observation {
            Observation::Probit if s.data.source.continuous() => {
                return Err(format!(
                    "{key}.observation = \"probit\" needs 0/1 data, but source = \"{}\" is continuous; use observation = \"gaussian\"",
                    s.data.source.name()
                ))
            }
            Observation::Probit if m.noise != 0.0 => {
                return Err(format!(
                    "{key}.noise applies to observation = \"gaussian\" only (the probit link has unit noise); remove it"
                ))
            }
            Observation::Probit
                if s.data.standardize == Some(true) || s.data.components.is_some() =>
            {
                return Err(format!(
                    "{key}.observation = \"probit\" needs the 0/1 values as read; remove pydt.data.standardize and pydt.data.components"
                ))
            }
            Observation::Gaussian if s.data.source == Source::Animals33 => {
                return Err(format!(
                    "{key}.observation must be \"probit\" for source = \"animals33\" (binary features; the paper's §6.3 model)"
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

fn validate_map(m: &MapPart) -> Result<(), String> {
    let cost = UnitCost {
        unit: "replicate",
        bytes: 0.0,
        seconds: 10.0,
    };
    if m.seeds == 0 {
        return Err("pydt.map.seeds = 0; run at least one replicate".into());
    }
    check_size("pydt.map.seeds", m.seeds, 1000, cost)?;
    let s = &m.search;
    if s.list_size == 0 || s.em_candidates == 0 {
        return Err(format!(
            "pydt.map.search.list_size = {} and em_candidates = {} must both be >= 1 (the paper: 10 and 3)",
            s.list_size, s.em_candidates
        ));
    }
    check_size(
        "pydt.map.search.iterations",
        s.iterations,
        100_000,
        UnitCost {
            unit: "search step",
            bytes: 0.0,
            seconds: 0.1,
        },
    )?;
    check_size(
        "pydt.map.search.candidate_ep_rounds",
        s.candidate_ep_rounds,
        10_000,
        UnitCost {
            unit: "EP round per candidate",
            bytes: 0.0,
            seconds: 0.01,
        },
    )?;
    check_size(
        "pydt.map.search.list_size",
        s.list_size,
        1000,
        UnitCost {
            unit: "listed tree",
            bytes: 1e5,
            seconds: 0.0,
        },
    )?;
    for (k, em) in [("em", &s.em), ("final_em", &s.final_em)] {
        for (what, (shape, rate)) in [
            ("c_prior", em.c_prior),
            ("precision_prior", em.precision_prior),
        ] {
            if !(shape.is_finite() && shape > 0.0 && rate.is_finite() && rate > 0.0) {
                return Err(format!(
                    "pydt.map.search.{k}.{what} = [{shape:?}, {rate:?}] must be a Gamma (shape, rate) with both > 0"
                ));
            }
        }
        if !(em.theta_rate.is_finite() && em.theta_rate > 0.0) {
            return Err(format!(
                "pydt.map.search.{k}.theta_rate = {} must be a finite number > 0 (the rate of theta's exponential prior)",
                em.theta_rate
            ));
        }
        if !(em.tolerance.is_finite() && em.tolerance >= 0.0) {
            return Err(format!(
                "pydt.map.search.{k}.tolerance = {} must be a finite number >= 0",
                em.tolerance
            ));
        }
        if em.cycles > 100_000 || em.lbfgs_iterations > 100_000 || em.direct_iterations > 100_000 {
            return Err(format!(
                "pydt.map.search.{k}: cycles, lbfgs_iterations and direct_iterations must be at most 100000"
            ));
        }
    }
    let ep = &s.ep;
    if !(ep.damping > 0.0 && ep.damping <= 1.0) {
        return Err(format!(
            "pydt.map.search.ep.damping = {} must be in (0, 1] (1: no damping)",
            ep.damping
        ));
    }
    if !(ep.tolerance.is_finite() && ep.tolerance >= 0.0)
        || ep.sweeps > 100_000
        || ep.rounds > 10_000
    {
        return Err(
            "pydt.map.search.ep: tolerance must be finite and >= 0, sweeps at most 100000, rounds at most 10000"
                .into(),
        );
    }
    Ok(())
}

/// The sampler keys shared by the MCMC and density parts.
fn validate_sampler(
    part: &str,
    moves: usize,
    max_tries: usize,
    hypers: &Hypers,
) -> Result<(), String> {
    hypers
        .validate()
        .map_err(|e| format!("pydt.{part}.hypers: {e}; change it in the config"))?;
    check_size(
        &format!("pydt.{part}.moves"),
        moves,
        1_000_000,
        UnitCost {
            unit: "proposal per iteration",
            bytes: 0.0,
            seconds: 1e-4,
        },
    )?;
    if max_tries == 0 || max_tries > 100_000 {
        return Err(format!(
            "pydt.{part}.max_tries = {max_tries} must be in 1..=100000 (Knowles: 100)"
        ));
    }
    Ok(())
}

fn iteration_cost() -> UnitCost {
    UnitCost {
        unit: "sampler iteration",
        bytes: 0.0,
        seconds: 0.05,
    }
}

fn validate_mcmc(m: &McmcPart) -> Result<(), String> {
    if m.chains == 0 || m.iterations == 0 || m.thin == 0 {
        return Err(format!(
            "pydt.mcmc: chains = {}, iterations = {} and thin = {} must all be >= 1",
            m.chains, m.iterations, m.thin
        ));
    }
    check_size("pydt.mcmc.chains", m.chains, 1000, iteration_cost())?;
    check_size(
        "pydt.mcmc.iterations",
        m.iterations,
        1_000_000,
        iteration_cost(),
    )?;
    validate_sampler("mcmc", m.moves, m.max_tries, &m.hypers)
}

fn validate_density(d: &DensityPart, s: &PydtSection) -> Result<(), String> {
    if let Some(m) = s
        .models
        .iter()
        .find(|m| m.observation == Observation::Probit)
    {
        return Err(format!(
            "[pydt.density] needs Gaussian models (the predictive density is of continuous points), but model {:?} is probit; remove [pydt.density] or the model",
            m.name
        ));
    }
    if d.splits == 0 || d.samples == 0 || d.thin == 0 || d.quantiles == 0 {
        return Err(format!(
            "pydt.density: splits = {}, samples = {}, thin = {} and quantiles = {} must all be >= 1",
            d.splits, d.samples, d.thin, d.quantiles
        ));
    }
    if !(d.test_fraction > 0.0 && d.test_fraction < 1.0) {
        return Err(format!(
            "pydt.density.test_fraction = {} must be in (0, 1) (e.g. 0.1)",
            d.test_fraction
        ));
    }
    check_size("pydt.density.splits", d.splits, 1000, iteration_cost())?;
    check_size(
        "pydt.density.burn_in",
        d.burn_in,
        1_000_000,
        iteration_cost(),
    )?;
    check_size("pydt.density.samples", d.samples, 100_000, iteration_cost())?;
    check_size("pydt.density.thin", d.thin, 10_000, iteration_cost())?;
    check_size(
        "pydt.density.quantiles",
        d.quantiles,
        1000,
        UnitCost {
            unit: "time quantile per segment",
            bytes: 0.0,
            seconds: 1e-3,
        },
    )?;
    validate_sampler("density", d.moves, d.max_tries, &d.hypers)
}

/// Every part's name as it appears in tables and figure titles.
pub fn model_names(s: &PydtSection) -> Vec<String> {
    s.models.iter().map(|m| m.name.clone()).collect()
}

/// An independent random stream per (seed, tag, i, j): parts, models, replicates and chains.
pub fn stream(seed: u64, tag: u64, i: usize, j: usize) -> u64 {
    let mix = |a: u64, b: u64| {
        crate::numeric::splitmix64_mix(a ^ b.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    };
    mix(mix(mix(seed, tag), i as u64), j as u64)
}
