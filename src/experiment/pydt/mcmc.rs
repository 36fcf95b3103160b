//! `[pydt.mcmc]`: chains of the collapsed sampler per model (chains in parallel, each on one
//! core with its own random stream), started from a tree drawn from the model's prior.
//! Tables: `traces.parquet` (every `thin`-th iteration) and `chains.parquet` (per chain).
//!
//! For probit data the sampler's state includes the auxiliaries z, and its `ln_joint` /
//! `ln_likelihood` are those of the augmented state, log p(Z, T, t) (the 0/1 data are sign(z)):
//! they fall while z spreads out from its start ±0.5 to its stationary spread, which says nothing
//! about the trees. `ln_joint_data` / `ln_likelihood_data` are of the observed 0/1 data (EP's
//! approximation of log p(Y | T, t, σ²), the auxiliaries integrated out), comparable across
//! iterations; `aux_mean_square` records z's spread.

use super::data::Dataset;
use super::{stream, McmcPart, ModelSpec, Observation, PydtSection};
use crate::experiment::kind::RunContext;
use crate::experiment::table::Table;
use crate::pydt::generate::sample_tree;
use crate::pydt::mcmc::{AcceptRule, Data, Hypers, Sampler, Settings};
use crate::pydt::newick::to_newick;
use crate::pydt::ep::{self, EpSettings, Sites};
use crate::pydt::probit::Binary;
use crate::pydt::{Leaves, Messages, PydtTree};
use anyhow::{Context, Result};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rayon::prelude::*;
use std::time::Instant;

/// The sampler settings a part gives.
#[derive(Clone, Copy, Debug)]
pub struct SamplerKeys {
    /// Proposals per iteration.
    pub moves: usize,
    /// Acceptance rule.
    pub rule: AcceptRule,
    /// Walk restarts.
    pub max_tries: usize,
    /// Hyper-parameters sampled.
    pub hypers: Hypers,
}

/// A sampler for `model` on `rows`, started at a tree drawn from the model's prior with `rng`.
pub fn start_sampler(
    model: &ModelSpec,
    rows: &[Vec<f64>],
    keys: SamplerKeys,
    rng: &mut StdRng,
) -> Result<Sampler> {
    let params = model.params()?;
    let data = match model.observation {
        Observation::Gaussian => Data::Gaussian(Leaves::with_noise(rows, model.noise)?),
        Observation::Probit => {
            let binary = Binary::from_rows(rows)?;
            Data::Probit {
                aux: binary.initial_leaves(),
                binary,
            }
        }
    };
    let mut hypers = keys.hypers;
    if model.is_ddt() {
        hypers.theta = false;
        hypers.alpha = false;
    }
    let tree = sample_tree(rows.len(), &params, rng);
    let settings = Settings {
        rule: keys.rule,
        hypers,
        moves: keys.moves,
        max_tries: keys.max_tries,
    };
    Ok(Sampler::new(tree, params, data, settings)?)
}

/// Shape of a tree: (children of the root, internal nodes, most children of any node).
pub fn shape(tree: &PydtTree) -> (usize, usize, usize) {
    let internal = tree.internal_nodes();
    let max = internal
        .iter()
        .map(|&v| tree.node(v).n_children)
        .max()
        .unwrap_or(0);
    (tree.node(tree.root()).n_children, internal.len(), max)
}

/// One recorded state.
struct State {
    iteration: usize,
    ln_joint: f64,
    ln_likelihood: f64,
    /// log p(data | T, t, σ²) of the observed data: `ln_likelihood` for Gaussian data; for probit
    /// data EP's approximation of log p(Y | T, t, σ²), the auxiliaries integrated out.
    ln_likelihood_data: f64,
    /// Probit data: the mean square of the auxiliaries z (their spread, which the augmented
    /// `ln_likelihood` pays for); none for Gaussian data.
    aux_mean_square: Option<f64>,
    root_children: usize,
    internal: usize,
    params: crate::pydt::Params,
}

impl State {
    /// log p(data, T, t): the observed data's log likelihood plus the tree's prior terms.
    fn ln_joint_data(&self) -> f64 {
        self.ln_joint - self.ln_likelihood + self.ln_likelihood_data
    }
}

/// EP on the 0/1 data at the sampler's current tree, warm-started from the previous state's
/// sites (EP is deterministic: the chain's random stream is untouched).
struct ObservedProbit {
    binary: Binary,
    sites: Sites,
    msgs: Messages,
}

impl ObservedProbit {
    fn new(rows: &[Vec<f64>]) -> Result<Self> {
        let binary = Binary::from_rows(rows)?;
        Ok(Self {
            sites: Sites::initial(&binary),
            binary,
            msgs: Messages::default(),
        })
    }

    fn ln_likelihood(&mut self, s: &Sampler) -> Result<f64> {
        Ok(ep::run(
            s.tree(),
            &self.binary,
            s.params().sigma2,
            &mut self.sites,
            &EpSettings::default(),
            &mut self.msgs,
        )?)
    }
}

fn record(s: &Sampler, iteration: usize, observed: Option<&mut ObservedProbit>) -> Result<State> {
    let (root_children, internal, _) = shape(s.tree());
    let ln_likelihood = s.ln_likelihood();
    let ln_likelihood_data = match observed {
        Some(o) => o.ln_likelihood(s)?,
        None => ln_likelihood,
    };
    let aux_mean_square = match s.data() {
        Data::Probit { aux, .. } if !aux.mean.is_empty() => {
            Some(aux.mean.iter().map(|z| z * z).sum::<f64>() / aux.mean.len() as f64)
        }
        _ => None,
    };
    Ok(State {
        iteration,
        ln_joint: s.ln_joint(),
        ln_likelihood,
        ln_likelihood_data,
        aux_mean_square,
        root_children,
        internal,
        params: *s.params(),
    })
}

/// One chain.
struct Chain {
    model: usize,
    chain: usize,
    states: Vec<State>,
    proposed: u64,
    accepted: u64,
    abandoned: u64,
    seconds: f64,
    newick: String,
    max_children: usize,
}

fn run_chain(
    part: &McmcPart,
    model: &ModelSpec,
    data: &Dataset,
    seed: u64,
    (mi, ci): (usize, usize),
) -> Result<Chain> {
    let keys = SamplerKeys {
        moves: part.moves,
        rule: part.rule,
        max_tries: part.max_tries,
        hypers: part.hypers,
    };
    let mut rng = StdRng::seed_from_u64(stream(seed, 4, mi, ci));
    let t0 = Instant::now();
    let mut s = start_sampler(model, &data.rows, keys, &mut rng)?;
    let mut observed = match model.observation {
        Observation::Probit => Some(ObservedProbit::new(&data.rows)?),
        Observation::Gaussian => None,
    };
    let mut states = vec![record(&s, 0, observed.as_mut())?];
    for it in 1..=part.iterations {
        s.iterate(&mut rng)
            .with_context(|| format!("iteration {it}"))?;
        if it % part.thin == 0 || it == part.iterations {
            states.push(record(&s, it, observed.as_mut()).with_context(|| format!("EP at iteration {it}"))?);
        }
    }
    let counts = s.counts();
    Ok(Chain {
        model: mi,
        chain: ci,
        states,
        proposed: counts.proposed,
        accepted: counts.accepted,
        abandoned: counts.abandoned,
        seconds: t0.elapsed().as_secs_f64(),
        newick: to_newick(s.tree(), Some(&data.names))?,
        max_children: shape(s.tree()).2,
    })
}

/// Runs the chains and writes `traces.parquet` and `chains.parquet`.
pub fn run(s: &PydtSection, part: &McmcPart, data: &Dataset, ctx: &mut RunContext) -> Result<()> {
    let jobs: Vec<(usize, usize)> = (0..s.models.len())
        .flat_map(|m| (0..part.chains).map(move |c| (m, c)))
        .collect();
    let seed = ctx.seed();
    let pb = crate::experiment::progress_bar(jobs.len() as u64, "chains");
    let done: Vec<Result<Chain>> = jobs
        .par_iter()
        .map(|&(m, c)| {
            let out = run_chain(part, &s.models[m], data, seed, (m, c)).with_context(|| {
                format!("pydt.mcmc: model {:?} chain {}", s.models[m].name, c + 1)
            });
            pb.inc(1);
            out
        })
        .collect();
    pb.finish_and_clear();
    let chains: Vec<Chain> = done.into_iter().collect::<Result<_>>()?;
    traces(s, &chains).write_parquet(&ctx.path("traces.parquet"))?;
    summary(s, &chains).write_parquet(&ctx.path("chains.parquet"))?;
    Ok(())
}

fn traces(s: &PydtSection, chains: &[Chain]) -> Table {
    let rows: Vec<(&Chain, &State)> = chains
        .iter()
        .flat_map(|c| c.states.iter().map(move |st| (c, st)))
        .collect();
    let u = |f: &dyn Fn(&Chain, &State) -> usize| {
        rows.iter()
            .map(|(c, st)| Some(f(c, st) as u64))
            .collect::<Vec<_>>()
    };
    let x = |f: &dyn Fn(&State) -> f64| rows.iter().map(|(_, st)| Some(f(st))).collect::<Vec<_>>();
    Table::new()
        .str(
            "model",
            &rows
                .iter()
                .map(|(c, _)| s.models[c.model].name.as_str())
                .collect::<Vec<_>>(),
        )
        .u64("chain", &u(&|c, _| c.chain + 1))
        .u64("iteration", &u(&|_, st| st.iteration))
        .f64("ln_joint", &x(&|st| st.ln_joint))
        .f64("ln_likelihood", &x(&|st| st.ln_likelihood))
        .f64("ln_joint_data", &x(&|st| st.ln_joint_data()))
        .f64("ln_likelihood_data", &x(&|st| st.ln_likelihood_data))
        .f64(
            "aux_mean_square",
            &rows.iter().map(|(_, st)| st.aux_mean_square).collect::<Vec<_>>(),
        )
        .u64("root_children", &u(&|_, st| st.root_children))
        .u64("internal_nodes", &u(&|_, st| st.internal))
        .f64("c", &x(&|st| st.params.c))
        .f64("sigma2", &x(&|st| st.params.sigma2))
        .f64("theta", &x(&|st| st.params.theta))
        .f64("alpha", &x(&|st| st.params.alpha))
}

fn summary(s: &PydtSection, chains: &[Chain]) -> Table {
    let u = |f: &dyn Fn(&Chain) -> u64| chains.iter().map(|c| Some(f(c))).collect::<Vec<_>>();
    Table::new()
        .str(
            "model",
            &chains
                .iter()
                .map(|c| s.models[c.model].name.as_str())
                .collect::<Vec<_>>(),
        )
        .u64("chain", &u(&|c| c.chain as u64 + 1))
        .u64("proposed", &u(&|c| c.proposed))
        .u64("accepted", &u(&|c| c.accepted))
        .u64("abandoned", &u(&|c| c.abandoned))
        .u64("final_max_children", &u(&|c| c.max_children as u64))
        .f64(
            "final_ln_joint",
            &chains
                .iter()
                .map(|c| c.states.last().map(|st| st.ln_joint))
                .collect::<Vec<_>>(),
        )
        .f64(
            "seconds",
            &chains.iter().map(|c| Some(c.seconds)).collect::<Vec<_>>(),
        )
        .str(
            "final_newick",
            &chains.iter().map(|c| c.newick.as_str()).collect::<Vec<_>>(),
        )
}
