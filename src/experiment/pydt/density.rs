//! `[pydt.density]`: the paper's density-modelling protocol (§6.2) on random train/test splits.
//! Per split and model the sampler runs on the training points (`burn_in` iterations, then
//! `samples` trees `thin` iterations apart); each held-out point's predictive density is averaged
//! over the sampled trees (log-sum-exp minus ln S). The samples' log marginal likelihood
//! log p(X | tree, times, σ²) (locations integrated out: the paper's "marginal likelihood") and
//! log joint (with the tree prior) are averaged too. Tables: `density.parquet` (model × split),
//! `density_points.parquet` (every held-out point) and `density_summary.parquet` (mean ± sd over
//! splits).

use super::data::Dataset;
use super::mcmc::{shape, start_sampler, SamplerKeys};
use super::{stream, DensityPart, PydtSection};
use crate::experiment::kind::RunContext;
use crate::experiment::stats::mean_std;
use crate::experiment::table::Table;
use crate::numeric::log_sum_exp;
use crate::pydt::predictive::ln_predictive;
use crate::pydt::Leaves;
use anyhow::{bail, Context, Result};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rayon::prelude::*;
use std::time::Instant;

/// Split `k`: (training, held-out) point indices, both ascending. The same for every model.
pub fn split(n: usize, fraction: f64, seed: u64, k: usize) -> Result<(Vec<usize>, Vec<usize>)> {
    let n_test = ((fraction * n as f64).round() as usize).max(1);
    if n < n_test + 3 {
        bail!(
            "pydt.density: {n} points leave fewer than 3 for training after holding out {n_test}; lower test_fraction"
        );
    }
    let mut idx: Vec<usize> = (0..n).collect();
    idx.shuffle(&mut StdRng::seed_from_u64(stream(seed, 5, k, 0)));
    let mut test = idx[..n_test].to_vec();
    let mut train = idx[n_test..].to_vec();
    test.sort_unstable();
    train.sort_unstable();
    Ok((train, test))
}

/// One model on one split.
struct Run {
    model: usize,
    split: usize,
    n_train: usize,
    test: Vec<usize>,
    /// Per held-out point: log of the predictive density averaged over the samples.
    ln_pred: Vec<f64>,
    ln_joint: f64,
    ln_likelihood: f64,
    internal: f64,
    seconds: f64,
}

fn run_one(
    s: &PydtSection,
    part: &DensityPart,
    data: &Dataset,
    (train, test): (&[usize], &[usize]),
    seed: u64,
    (mi, k): (usize, usize),
) -> Result<Run> {
    let model = &s.models[mi];
    let keys = SamplerKeys {
        moves: part.moves,
        rule: part.rule,
        max_tries: part.max_tries,
        hypers: part.hypers,
    };
    let rows: Vec<Vec<f64>> = train.iter().map(|&i| data.rows[i].clone()).collect();
    let held: Vec<Vec<f64>> = test.iter().map(|&i| data.rows[i].clone()).collect();
    let leaves = Leaves::with_noise(&rows, model.noise)?;
    let mut rng = StdRng::seed_from_u64(stream(seed, 6, mi, k));
    let t0 = Instant::now();
    let mut sampler = start_sampler(model, &rows, keys, &mut rng)?;
    for it in 0..part.burn_in {
        sampler
            .iterate(&mut rng)
            .with_context(|| format!("burn-in iteration {}", it + 1))?;
    }
    let mut per_point: Vec<Vec<f64>> = vec![Vec::with_capacity(part.samples); held.len()];
    let (mut joint, mut lik, mut internal) = (Vec::new(), Vec::new(), Vec::new());
    for smp in 0..part.samples {
        for _ in 0..part.thin {
            sampler
                .iterate(&mut rng)
                .with_context(|| format!("before sample {}", smp + 1))?;
        }
        let lp = ln_predictive(
            sampler.tree(),
            &leaves,
            sampler.params(),
            &held,
            model.noise,
            part.quantiles,
        )?;
        for (acc, v) in per_point.iter_mut().zip(lp) {
            acc.push(v);
        }
        joint.push(sampler.ln_joint());
        lik.push(sampler.ln_likelihood());
        internal.push(shape(sampler.tree()).1 as f64);
    }
    let ln_s = (part.samples as f64).ln();
    Ok(Run {
        model: mi,
        split: k,
        n_train: train.len(),
        test: test.to_vec(),
        ln_pred: per_point.iter().map(|v| log_sum_exp(v) - ln_s).collect(),
        ln_joint: mean(&joint),
        ln_likelihood: mean(&lik),
        internal: mean(&internal),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// Mean over held-out points.
fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Runs every model on every split and writes the three tables.
pub fn run(
    s: &PydtSection,
    part: &DensityPart,
    data: &Dataset,
    ctx: &mut RunContext,
) -> Result<()> {
    let seed = ctx.seed();
    let splits: Vec<(Vec<usize>, Vec<usize>)> = (0..part.splits)
        .map(|k| split(data.rows.len(), part.test_fraction, seed, k))
        .collect::<Result<_>>()?;
    let jobs: Vec<(usize, usize)> = (0..part.splits)
        .flat_map(|k| (0..s.models.len()).map(move |m| (m, k)))
        .collect();
    let pb = crate::experiment::progress_bar(jobs.len() as u64, "model x split runs");
    let done: Vec<Result<Run>> = jobs
        .par_iter()
        .map(|&(m, k)| {
            let (train, test) = &splits[k];
            let out = run_one(s, part, data, (train, test), seed, (m, k)).with_context(|| {
                format!("pydt.density: model {:?} split {}", s.models[m].name, k + 1)
            });
            pb.inc(1);
            out
        })
        .collect();
    pb.finish_and_clear();
    let runs: Vec<Run> = done.into_iter().collect::<Result<_>>()?;
    let name = |r: &Run| s.models[r.model].name.as_str();
    let col = |f: &dyn Fn(&Run) -> f64| runs.iter().map(|r| Some(f(r))).collect::<Vec<_>>();
    Table::new()
        .str("model", &runs.iter().map(name).collect::<Vec<_>>())
        .u64(
            "split",
            &runs
                .iter()
                .map(|r| Some(r.split as u64 + 1))
                .collect::<Vec<_>>(),
        )
        .u64(
            "n_train",
            &runs
                .iter()
                .map(|r| Some(r.n_train as u64))
                .collect::<Vec<_>>(),
        )
        .u64(
            "n_test",
            &runs
                .iter()
                .map(|r| Some(r.test.len() as u64))
                .collect::<Vec<_>>(),
        )
        .f64("ln_predictive", &col(&|r| mean(&r.ln_pred)))
        .f64("ln_likelihood", &col(&|r| r.ln_likelihood))
        .f64("ln_joint", &col(&|r| r.ln_joint))
        .f64("internal_nodes", &col(&|r| r.internal))
        .f64("seconds", &col(&|r| r.seconds))
        .write_parquet(&ctx.path("density.parquet"))?;
    let (mut model, mut sp, mut point, mut pname, mut lp) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for r in &runs {
        for (&i, &v) in r.test.iter().zip(&r.ln_pred) {
            model.push(name(r));
            sp.push(Some(r.split as u64 + 1));
            point.push(Some(i as u64));
            pname.push(data.names[i].as_str());
            lp.push(Some(v));
        }
    }
    Table::new()
        .str("model", &model)
        .u64("split", &sp)
        .u64("point", &point)
        .str("name", &pname)
        .f64("ln_predictive", &lp)
        .write_parquet(&ctx.path("density_points.parquet"))?;
    let (mut model, mut measure, mut mu, mut sd) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (mi, m) in s.models.iter().enumerate() {
        let mine: Vec<&Run> = runs.iter().filter(|r| r.model == mi).collect();
        for (what, f) in [
            (
                "ln_predictive",
                &(|r: &Run| mean(&r.ln_pred)) as &dyn Fn(&Run) -> f64,
            ),
            ("ln_likelihood", &|r: &Run| r.ln_likelihood),
            ("ln_joint", &|r: &Run| r.ln_joint),
            ("internal_nodes", &|r: &Run| r.internal),
        ] {
            let ms = mean_std(mine.iter().map(|r| f(r)));
            model.push(m.name.as_str());
            measure.push(what);
            mu.push(Some(ms.mean));
            sd.push(Some(ms.std));
        }
    }
    Table::new()
        .str("model", &model)
        .str("measure", &measure)
        .f64("mean", &mu)
        .f64("sd", &sd)
        .write_parquet(&ctx.path("density_summary.parquet"))?;
    ctx.manifest.set("density_test_points", splits[0].1.len());
    Ok(())
}
