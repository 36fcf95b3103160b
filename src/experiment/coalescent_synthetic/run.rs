//! The run: for every setting × replicate, synthetic data (spec §5), then every method on one
//! core (replicates in parallel), with Φ fixed at its true value or learned in outer iterations;
//! the errors against the true history.

use super::{paper_value, SyntheticSection, METRICS};
use crate::coalescent::covariance::{Covariance, Kernel};
use crate::coalescent::generator::{generate, hl_synthetic_covariance};
use crate::coalescent::history::History;
use crate::coalescent::learn::{LearnSettings, Learned};
use crate::coalescent::method::{fit, fit_learning, Fit, MethodSettings};
use crate::coalescent::metrics::{weighted_distance_errors, weighted_merge_time_errors};
use crate::coalescent::newick::to_newick;
use crate::experiment::jobs::Mode;
use crate::experiment::kind::RunContext;
use crate::experiment::stats::mean_std;
use crate::experiment::table::Table;
use anyhow::{Context, Result};
use std::time::Instant;

/// Bytes one particle holds for n points (ε, cached terms and race clocks per slot pair).
fn particle_bytes(n: usize) -> f64 {
    48.0 * (n * n) as f64
}

/// Refuses runs whose particles would not fit in memory (two generations per thread).
pub fn check_cost(s: &SyntheticSection) -> Result<(), String> {
    let n_max = s.settings.iter().map(|x| x.n).max().unwrap_or(0);
    let threads = rayon::current_num_threads().max(1) as f64;
    let bytes = 2.0 * s.particles as f64 * particle_bytes(n_max) * threads;
    if bytes > 8.0 * (1u64 << 30) as f64 {
        return Err(format!(
            "coalescent_synthetic: {} particles over n = {n_max} points need about {:.1} GiB; lower coalescent_synthetic.particles or the settings' n",
            s.particles,
            bytes / (1u64 << 30) as f64
        ));
    }
    Ok(())
}

/// The seed of (setting, replicate): SplitMix64 of the master seed and both indices.
fn job_seed(seed: u64, setting: usize, rep: usize) -> u64 {
    crate::numeric::splitmix64_mix(
        seed ^ ((setting as u64) << 40) ^ (rep as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
    )
}

/// One method on one data set (journalled with its data set's job).
#[derive(serde::Serialize, serde::Deserialize)]
struct Row {
    setting: usize,
    rep: usize,
    method: usize,
    errors: [f64; 9],
    log_evidence: Option<f64>,
    resamples: usize,
    seconds: f64,
    newick: String,
}

/// The six tree errors of one fit (weighted over its particles).
fn tree_errors(truth: &History, f: &Fit) -> Result<[f64; 6]> {
    let et = weighted_merge_time_errors(truth, &f.histories, &f.weights)?;
    let ed = weighted_distance_errors(truth, &f.histories, &f.weights)?;
    Ok([et.mse, et.mae, et.mab, ed.mse, ed.mae, ed.mab])
}

/// The true Φ of a setting: HL eq. 12 over positions (j−1)/(d−1) with the section's ℓ and σ².
fn true_covariance(s: &SyntheticSection, d: usize) -> Covariance {
    let mut cov = hl_synthetic_covariance(d, s.noise);
    if let Kernel::SquaredExp { ell, .. } = &mut cov.kernel {
        *ell = s.ell;
    }
    cov
}

/// One replicate: the data, then every method.
fn replicate(s: &SyntheticSection, seed: u64, si: usize, rep: usize) -> Result<(String, Vec<Row>)> {
    let st = &s.settings[si];
    let cov = true_covariance(s, st.d);
    let data_seed = job_seed(seed, si, rep);
    let (truth, x) = generate(st.n, &cov, data_seed)?;
    let ms = MethodSettings {
        particles: s.particles,
        weight_mode: s.weight_mode,
        resample_threshold: s.resample_threshold,
        // One core per method run (the paper's timings are single-core); replicates run in
        // parallel. Nesting a one-thread pool inside rayon's would let a waiting worker steal
        // another replicate and count its time.
        parallel: false,
    };
    let mut rows = Vec::new();
    for (mi, &method) in s.methods.iter().enumerate() {
        let mseed = data_seed ^ (mi as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03);
        let what = || format!("{} on {} replicate {rep}", method.display(), st.name);
        let t0 = Instant::now();
        let row = match &s.learning {
            None => {
                let w = cov.whitening()?;
                let xw = w.whiten_rows(&x)?;
                let f = fit(method, &xw, w.ln_det_half(), &ms, mseed).with_context(what)?;
                let seconds = t0.elapsed().as_secs_f64();
                let e = tree_errors(&truth, &f)?;
                Row {
                    setting: si,
                    rep,
                    method: mi,
                    errors: [
                        e[0],
                        e[1],
                        e[2],
                        e[3],
                        e[4],
                        e[5],
                        f64::NAN,
                        f64::NAN,
                        f64::NAN,
                    ],
                    log_evidence: f.log_evidence,
                    resamples: f.resamples,
                    seconds,
                    newick: to_newick(f.best(), None)?,
                }
            }
            Some(l) => {
                let mut start = cov.clone();
                if let Kernel::SquaredExp { ell, .. } = &mut start.kernel {
                    *ell = l.ell_start;
                }
                let learn = LearnSettings {
                    learned: if l.learn_noise {
                        Learned::EllAndNoise
                    } else {
                        Learned::Ell
                    },
                    ..LearnSettings::default()
                };
                let its = fit_learning(method, &x, &start, &ms, &learn, l.iterations, mseed)
                    .with_context(what)?;
                let seconds = t0.elapsed().as_secs_f64();
                let kept = &its[l.burn_in..];
                let mut e = [0.0; 9];
                for it in kept {
                    let te = tree_errors(&truth, &it.fit)?;
                    for k in 0..6 {
                        e[k] += te[k] / kept.len() as f64;
                    }
                }
                let ells: Vec<f64> = kept.iter().map(|it| it.ell()).collect();
                let m = ells.len() as f64;
                e[6] = ells.iter().map(|v| (v - s.ell).powi(2)).sum::<f64>() / m;
                e[7] = ells.iter().map(|v| (v - s.ell).abs()).sum::<f64>() / m;
                e[8] = (ells.iter().sum::<f64>() / m - s.ell).abs();
                let last = &its[its.len() - 1].fit;
                Row {
                    setting: si,
                    rep,
                    method: mi,
                    errors: e,
                    log_evidence: last.log_evidence,
                    resamples: its.iter().map(|it| it.fit.resamples).sum(),
                    seconds,
                    newick: to_newick(last.best(), None)?,
                }
            }
        };
        rows.push(row);
    }
    Ok((to_newick(&truth, None)?, rows))
}

/// Runs the kind.
pub fn run(s: &SyntheticSection, ctx: &mut RunContext) -> Result<()> {
    let jobs: Vec<(usize, usize)> = (0..s.settings.len())
        .flat_map(|si| (0..s.replicates).map(move |r| (si, r)))
        .collect();
    let pb = crate::experiment::progress_bar(jobs.len() as u64, "data sets");
    let seed = ctx.seed();
    // One job per data set: journalled (a killed run resumes), and `--shard I/N` divides them.
    let keys: Vec<String> = jobs
        .iter()
        .map(|&(si, r)| format!("setting_{si}/replicate_{r}"))
        .collect();
    let done = ctx.jobs.run("data_sets", &keys, Mode::Parallel, |k| {
        let (si, r) = jobs[k];
        let out = replicate(s, seed, si, r);
        pb.inc(1);
        out
    })?;
    pb.finish_and_clear();
    let mut truths = Vec::new();
    let mut rows = Vec::new();
    for (&(si, r), d) in jobs.iter().zip(done) {
        let (t, mut rs) = d.value;
        truths.push((si, r, t));
        rows.append(&mut rs);
    }
    let u = |g: &dyn Fn(&Row) -> u64| rows.iter().map(|r| Some(g(r))).collect::<Vec<_>>();
    let f = |g: &dyn Fn(&Row) -> f64| {
        rows.iter()
            .map(|r| Some(g(r)).filter(|v| !v.is_nan()))
            .collect::<Vec<_>>()
    };
    let mut t = Table::new()
        .str(
            "setting",
            &rows
                .iter()
                .map(|r| s.settings[r.setting].name.as_str())
                .collect::<Vec<_>>(),
        )
        .u64("n", &u(&|r| s.settings[r.setting].n as u64))
        .u64("d", &u(&|r| s.settings[r.setting].d as u64))
        .u64("replicate", &u(&|r| r.rep as u64))
        .str(
            "method",
            &rows
                .iter()
                .map(|r| s.methods[r.method].name())
                .collect::<Vec<_>>(),
        );
    for (k, (col, _)) in METRICS.iter().enumerate() {
        t = t.f64(col, &f(&|r| r.errors[k]));
    }
    // The weights behind each log-evidence: only "exact" estimates log p(X) (see the kind's docs).
    let mode = s.weight_mode.name();
    t.f64(
        "log_evidence",
        &rows.iter().map(|r| r.log_evidence).collect::<Vec<_>>(),
    )
    .str(
        "weight_mode",
        &rows
            .iter()
            .map(|r| if r.log_evidence.is_some() { mode } else { "" })
            .collect::<Vec<_>>(),
    )
    .u64("resamples", &u(&|r| r.resamples as u64))
    .f64("seconds", &f(&|r| r.seconds))
    .str(
        "best_tree_newick",
        &rows.iter().map(|r| r.newick.as_str()).collect::<Vec<_>>(),
    )
    .write_parquet(&ctx.path("runs.parquet"))?;
    Table::new()
        .str(
            "setting",
            &truths
                .iter()
                .map(|(si, _, _)| s.settings[*si].name.as_str())
                .collect::<Vec<_>>(),
        )
        .u64(
            "replicate",
            &truths
                .iter()
                .map(|(_, r, _)| Some(*r as u64))
                .collect::<Vec<_>>(),
        )
        .str(
            "true_newick",
            &truths
                .iter()
                .map(|(_, _, t)| t.as_str())
                .collect::<Vec<_>>(),
        )
        .write_parquet(&ctx.path("truth.parquet"))?;
    summary(s, &rows).write_parquet(&ctx.path("summary.parquet"))?;
    runtime(s, &rows).write_parquet(&ctx.path("runtime.parquet"))?;
    ctx.manifest.set("weight_mode", s.weight_mode);
    ctx.manifest.set("paper_table", s.paper_table);
    ctx.manifest.set("learning", s.learning.is_some());
    Ok(())
}

/// `summary.parquet`: mean ± sd over replicates per setting × method × error measure, with the
/// paper's numbers where it reports the cell.
fn summary(s: &SyntheticSection, rows: &[Row]) -> Table {
    let (mut setting, mut method, mut measure) = (Vec::new(), Vec::new(), Vec::new());
    let (mut mean, mut sd, mut pm, mut psd) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (si, st) in s.settings.iter().enumerate() {
        for col in METRICS.iter().map(|m| m.0) {
            if col.starts_with("ell_") && s.learning.is_none() {
                continue;
            }
            for (mi, m) in s.methods.iter().enumerate() {
                let vals = rows
                    .iter()
                    .filter(|r| r.setting == si && r.method == mi)
                    .map(|r| r.errors[METRICS.iter().position(|x| x.0 == col).unwrap_or(0)]);
                let ms = mean_std(vals);
                let p = paper_value(s.paper_table, &st.name, m.name(), col);
                setting.push(st.name.clone());
                method.push(m.name().to_string());
                measure.push(col.to_string());
                mean.push(Some(ms.mean));
                sd.push(Some(ms.std));
                pm.push(p.map(|x| x.0));
                psd.push(p.map(|x| x.1));
            }
        }
    }
    Table::new()
        .str("setting", &setting)
        .str("method", &method)
        .str("measure", &measure)
        .f64("mean", &mean)
        .f64("sd", &sd)
        .f64("paper_mean", &pm)
        .f64("paper_sd", &psd)
}

/// `runtime.parquet`: seconds on one core per setting × method (mean ± sd over replicates), with
/// the paper's. Kept apart from `summary.parquet` because it changes from run to run.
fn runtime(s: &SyntheticSection, rows: &[Row]) -> Table {
    let (mut setting, mut method, mut mean, mut sd, mut paper) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (si, st) in s.settings.iter().enumerate() {
        for (mi, m) in s.methods.iter().enumerate() {
            let ms = mean_std(
                rows.iter()
                    .filter(|r| r.setting == si && r.method == mi)
                    .map(|r| r.seconds),
            );
            setting.push(st.name.clone());
            method.push(m.name().to_string());
            mean.push(Some(ms.mean));
            sd.push(Some(ms.std));
            paper.push(paper_value(s.paper_table, &st.name, m.name(), "seconds").map(|p| p.0));
        }
    }
    Table::new()
        .str("setting", &setting)
        .str("method", &method)
        .f64("seconds", &mean)
        .f64("seconds_sd", &sd)
        .f64("paper_seconds", &paper)
}
