//! The run: read the points, draw the subsets, run every method on every subset (subsets in
//! parallel, each method on one core), score the trees, write the tables.

use super::data::{load, mix, subset, Labelled};
use super::{CovarianceSection, KernelChoice, LabelledMethod, LabelledSection, LearnChoice, SCORES};
use crate::coalescent::covariance::{Covariance, Jitter, Kernel};
use crate::coalescent::generator::sample_history;
use crate::coalescent::history::History;
use crate::coalescent::learn::{LearnSettings, Learned};
use crate::coalescent::linkage::{linkage_history, Linkage};
use crate::coalescent::method::{fit, fit_learning, Fit, MethodSettings};
use crate::coalescent::metrics::{ari_auc, ari_curve, dendrogram_purity, subtree_score};
use crate::coalescent::newick::to_newick;
use crate::experiment::jobs::Mode;
use crate::experiment::kind::RunContext;
use crate::experiment::stats::mean_std;
use crate::experiment::table::Table;
use anyhow::{bail, Context, Result};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::time::Instant;

/// Bytes one particle holds for n points (ε, cached terms and race clocks per slot pair).
fn particle_bytes(n: usize) -> f64 {
    48.0 * (n * n) as f64
}

/// Largest memory the particles may take (two generations per thread).
const MAX_PARTICLE_BYTES: f64 = 8.0 * (1u64 << 30) as f64;

/// Refuses subsets of more than 20,000 points per class (checked again with the real n once the
/// data are read, by [`check_memory`]).
pub fn check_cost(s: &LabelledSection) -> Result<(), String> {
    if s.per_class > 20_000 {
        return Err(format!(
            "coalescent_labelled.per_class = {} is too large (at most 20000; HL use 50)",
            s.per_class
        ));
    }
    Ok(())
}

/// The particles of a subset of `n` points must fit in memory.
fn check_memory(s: &LabelledSection, n: usize) -> Result<()> {
    let smc = s
        .methods
        .iter()
        .any(|m| matches!(m, LabelledMethod::Coalescent(c) if c.variant().is_some()));
    let threads = rayon::current_num_threads().max(1) as f64;
    let particles = if smc { s.particles } else { 1 } as f64;
    let bytes = 2.0 * particles * particle_bytes(n) * threads;
    if bytes > MAX_PARTICLE_BYTES {
        bail!(
            "coalescent_labelled: {} particles over subsets of n = {n} points need about {:.1} GiB; lower per_class, particles or the thread count",
            s.particles,
            bytes / (1u64 << 30) as f64
        );
    }
    Ok(())
}

/// The most features per point of the fitted methods: Φ is a dense `d × d` matrix factorised
/// (`d³/3` operations) at every step of learning (USPS has 256; 1,024 is 8 MiB and ~0.4 s per
/// factorisation).
pub const MAX_FEATURES: usize = 1024;

/// Operations per second of the dense Cholesky factorisation (the probe's 10,000 features:
/// about 400 s for one).
const CHOLESKY_OPS_PER_SECOND: f64 = 1e9;

/// Φ at its start value for points of `d` features (at most [`MAX_FEATURES`]).
pub fn start_covariance(c: &CovarianceSection, d: usize) -> Result<Covariance> {
    if d > MAX_FEATURES {
        let n = d as f64;
        bail!(
            "the points have {d} features, more than the {MAX_FEATURES} the fitted coalescent methods take: Φ would be a {d} × {d} matrix of about {} factorised in about {} at every step; keep fewer features (e.g. their leading principal components) or use only average_linkage",
            crate::experiment::limits::bytes(8.0 * n * n),
            crate::experiment::limits::duration(n * n * n / 3.0 / CHOLESKY_OPS_PER_SECOND)
        );
    }
    let kernel = match c.kernel {
        KernelChoice::Matern32Grid => {
            if c.width * c.height != d {
                bail!(
                    "coalescent_labelled.covariance: width x height = {} x {} = {} pixels but the points have {d} features; set them to the image size (USPS: 16 x 16)",
                    c.width,
                    c.height,
                    c.width * c.height
                );
            }
            Kernel::Matern32Grid {
                width: c.width,
                height: c.height,
                ell_x: c.ell,
                ell_y: c.ell,
                noise: c.noise,
            }
        }
        KernelChoice::Isotropic => Kernel::Isotropic {
            dim: d,
            sigma2: c.ell,
        },
    };
    kernel.validate()?;
    let jitter = match c.kernel {
        KernelChoice::Matern32Grid => Jitter::RelativeTrace(1e-10),
        KernelChoice::Isotropic => Jitter::None,
    };
    Ok(Covariance::new(kernel).with_jitter(jitter))
}


/// Φ's (ℓ, noise) after an outer iteration and that iteration's SMC evidence estimate.
type TracePoint = (f64, f64, Option<f64>);

/// One method on one subset (journalled with its subset's job).
#[derive(serde::Serialize, serde::Deserialize)]
struct MethodRun {
    subset: usize,
    method: usize,
    scores: [f64; 3],
    curve: Vec<f64>,
    seconds: f64,
    phi: Option<(f64, f64)>,
    log_evidence: Option<f64>,
    resamples: usize,
    newick: String,
    /// Per outer iteration: Φ's (ℓ, noise) after the sweep and the SMC evidence estimate.
    trace: Vec<TracePoint>,
}

/// The three scores and the ARI curve of a tree.
fn score(h: &History, y: &[usize]) -> Result<([f64; 3], Vec<f64>)> {
    let curve = ari_curve(h, y)?;
    Ok((
        [subtree_score(h, y)?, ari_auc(&curve)?, dendrogram_purity(h, y)?],
        curve,
    ))
}

/// A coalescent method's tree(s), with Φ learned when the section asks for it.
fn fit_coalescent(
    s: &LabelledSection,
    method: crate::coalescent::method::Method,
    x: &[Vec<f64>],
    seed: u64,
    parallel: bool,
) -> Result<(Fit, Covariance, Vec<TracePoint>)> {
    let start = start_covariance(&s.covariance, x[0].len())?;
    let ms = MethodSettings {
        particles: s.particles,
        weight_mode: s.weight_mode,
        resample_threshold: s.resample_threshold,
        parallel,
    };
    let learned = match s.covariance.learn {
        LearnChoice::None => None,
        LearnChoice::Ell => Some(Learned::Ell),
        LearnChoice::EllAndNoise => Some(Learned::EllAndNoise),
    };
    match learned {
        Some(learned) if s.iterations > 0 => {
            let learn = LearnSettings {
                learned,
                ..LearnSettings::default()
            };
            let its = fit_learning(method, x, &start, &ms, &learn, s.iterations, seed)?;
            let trace = its
                .iter()
                .map(|it| {
                    let (l, n) = it.covariance.kernel.ell_and_noise();
                    (l, n, it.fit.log_evidence)
                })
                .collect();
            let last = its.into_iter().last().context("no iteration ran")?;
            Ok((last.fit, last.covariance, trace))
        }
        _ => {
            let w = start.whitening()?;
            let xw = w.whiten_rows(x)?;
            let f = fit(method, &xw, w.ln_det_half(), &ms, seed)?;
            Ok((f, start, Vec::new()))
        }
    }
}

/// Every method on subset `si`.
fn run_subset(
    s: &LabelledSection,
    data: &Labelled,
    idx: &[usize],
    seed: u64,
    si: usize,
    parallel: bool,
) -> Result<Vec<MethodRun>> {
    let x: Vec<Vec<f64>> = idx.iter().map(|&i| data.rows[i].clone()).collect();
    let y: Vec<usize> = idx.iter().map(|&i| data.class[i]).collect();
    let names: Vec<String> = idx
        .iter()
        .map(|&i| format!("{}_{}", data.classes[data.class[i]], data.source_row[i]))
        .collect();
    let mut out = Vec::new();
    for (mi, &m) in s.methods.iter().enumerate() {
        let mseed = mix(mix(seed, si as u64), 1 + mi as u64);
        let what = || format!("{} on subset {si}", m.display());
        let t0 = Instant::now();
        let (tree, phi, log_evidence, resamples, trace) = match m {
            LabelledMethod::Coalescent(c) => {
                let (f, cov, trace) = fit_coalescent(s, c, &x, mseed, parallel).with_context(what)?;
                let resamples = f.resamples;
                (
                    f.best().clone(),
                    Some(cov.kernel.ell_and_noise()),
                    f.log_evidence,
                    resamples,
                    trace,
                )
            }
            LabelledMethod::AverageLinkage => (
                linkage_history(&x, Linkage::Average).with_context(what)?,
                None,
                None,
                0,
                Vec::new(),
            ),
            LabelledMethod::CoalescentPrior => {
                let mut rng = StdRng::seed_from_u64(mseed);
                (
                    sample_history(x.len(), &mut rng)?,
                    None,
                    None,
                    0,
                    Vec::new(),
                )
            }
        };
        let seconds = t0.elapsed().as_secs_f64();
        let (scores, curve) = score(&tree, &y).with_context(what)?;
        out.push(MethodRun {
            subset: si,
            method: mi,
            scores,
            curve,
            seconds,
            phi,
            log_evidence,
            resamples,
            newick: to_newick(&tree, Some(&names))?,
            trace,
        });
    }
    Ok(out)
}

/// Runs the kind.
pub fn run(s: &LabelledSection, ctx: &mut RunContext) -> Result<()> {
    let data = load(&s.data)?;
    let subsets: Vec<Vec<usize>> = (0..s.subsets)
        .map(|k| subset(&data, s.per_class, ctx.seed(), k))
        .collect::<Result<_>>()?;
    let n = subsets[0].len();
    check_memory(s, n)?;
    if s.methods.iter().any(|m| m.is_fitted()) {
        start_covariance(&s.covariance, data.dim())?;
    }
    let pb = crate::experiment::progress_bar(s.subsets as u64, "subsets");
    let seed = ctx.seed();
    // Subsets run in parallel, each method on one core; with fewer subsets than threads the
    // particles run in parallel instead. The numbers are the same either way.
    let parallel = s.subsets < rayon::current_num_threads();
    // One job per subset: journalled (a killed run resumes), and `--shard I/N` divides them.
    let keys: Vec<String> = (0..subsets.len()).map(|k| format!("subset_{k}")).collect();
    let done = ctx.jobs.run("subsets", &keys, Mode::Parallel, |si| {
        let out = run_subset(s, &data, &subsets[si], seed, si, parallel);
        pb.inc(1);
        out
    })?;
    pb.finish_and_clear();
    let runs: Vec<MethodRun> = done.into_iter().flat_map(|d| d.value).collect();
    write_subsets(&data, &subsets).write_parquet(&ctx.path("subsets.parquet"))?;
    write_runs(s, &runs).write_parquet(&ctx.path("runs.parquet"))?;
    write_curves(s, &runs).write_parquet(&ctx.path("curves.parquet"))?;
    write_learning(s, &runs).write_parquet(&ctx.path("learning.parquet"))?;
    summary(s, &runs).write_parquet(&ctx.path("summary.parquet"))?;
    runtime(s, &runs).write_parquet(&ctx.path("runtime.parquet"))?;
    ctx.manifest.set("points", data.rows.len());
    ctx.manifest.set("duplicates_removed", data.duplicates_removed);
    let rows: Vec<String> = data
        .duplicate_rows
        .iter()
        .map(|r| format!("row {}", r + 1))
        .collect();
    let dropped = crate::experiment::dropped::Dropped::of(
        "points",
        "exact duplicates of an earlier point",
        rows,
    );
    crate::experiment::dropped::report(ctx, dropped.as_slice());
    ctx.manifest.set("classes", &data.classes);
    ctx.manifest.set("subset_size", n);
    ctx.manifest.set("particles_in_parallel", parallel);
    Ok(())
}

fn write_subsets(data: &Labelled, subsets: &[Vec<usize>]) -> Table {
    let (mut sub, mut pos, mut row, mut class) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (si, idx) in subsets.iter().enumerate() {
        for (p, &i) in idx.iter().enumerate() {
            sub.push(Some(si as u64));
            pos.push(Some(p as u64));
            row.push(Some(data.source_row[i] as u64));
            class.push(data.classes[data.class[i]].as_str());
        }
    }
    Table::new()
        .u64("subset", &sub)
        .u64("position", &pos)
        .u64("row", &row)
        .str("class", &class)
}

fn write_runs(s: &LabelledSection, runs: &[MethodRun]) -> Table {
    let f = |g: &dyn Fn(&MethodRun) -> Option<f64>| runs.iter().map(g).collect::<Vec<_>>();
    let mut t = Table::new()
        .u64(
            "subset",
            &runs.iter().map(|r| Some(r.subset as u64)).collect::<Vec<_>>(),
        )
        .str(
            "method",
            &runs
                .iter()
                .map(|r| s.methods[r.method].name())
                .collect::<Vec<_>>(),
        );
    for (k, (col, _)) in SCORES.iter().enumerate() {
        t = t.f64(col, &f(&|r| Some(r.scores[k])));
    }
    t.f64("seconds", &f(&|r| Some(r.seconds)))
        .f64("ell", &f(&|r| r.phi.map(|p| p.0)))
        .f64("noise", &f(&|r| r.phi.map(|p| p.1)))
        .f64("log_evidence", &f(&|r| r.log_evidence))
        .str(
            "weight_mode",
            &runs
                .iter()
                .map(|r| mode_of(s, r.log_evidence))
                .collect::<Vec<_>>(),
        )
        .u64(
            "resamples",
            &runs
                .iter()
                .map(|r| Some(r.resamples as u64))
                .collect::<Vec<_>>(),
        )
        .str(
            "newick",
            &runs.iter().map(|r| r.newick.as_str()).collect::<Vec<_>>(),
        )
}

fn write_curves(s: &LabelledSection, runs: &[MethodRun]) -> Table {
    let (mut sub, mut method, mut nc, mut ari) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for r in runs {
        for (k, &a) in r.curve.iter().enumerate() {
            sub.push(Some(r.subset as u64));
            method.push(s.methods[r.method].name());
            nc.push(Some(k as u64 + 1));
            ari.push(Some(a));
        }
    }
    Table::new()
        .u64("subset", &sub)
        .str("method", &method)
        .u64("n_clusters", &nc)
        .f64("ari", &ari)
}

fn write_learning(s: &LabelledSection, runs: &[MethodRun]) -> Table {
    let (mut sub, mut method, mut it) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ell, mut noise, mut ev) = (Vec::new(), Vec::new(), Vec::new());
    for r in runs {
        for (k, &(l, nz, e)) in r.trace.iter().enumerate() {
            sub.push(Some(r.subset as u64));
            method.push(s.methods[r.method].name());
            it.push(Some(k as u64 + 1));
            ell.push(Some(l));
            noise.push(Some(nz));
            ev.push(e);
        }
    }
    Table::new()
        .u64("subset", &sub)
        .str("method", &method)
        .u64("iteration", &it)
        .f64("ell", &ell)
        .f64("noise", &noise)
        .f64("log_evidence", &ev)
        .str(
            "weight_mode",
            &ev.iter().map(|&e| mode_of(s, e)).collect::<Vec<_>>(),
        )
}

/// The weight mode behind a log-evidence ("" where there is none): only "exact" weights make it
/// an estimate of log p(X) (see the kind's docs).
fn mode_of(s: &LabelledSection, log_evidence: Option<f64>) -> &'static str {
    if log_evidence.is_some() {
        s.weight_mode.name()
    } else {
        ""
    }
}

/// `summary.parquet`: mean ± sd over subsets per method × score.
fn summary(s: &LabelledSection, runs: &[MethodRun]) -> Table {
    let (mut method, mut measure, mut mean, mut sd) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (mi, m) in s.methods.iter().enumerate() {
        for (k, (col, _)) in SCORES.iter().enumerate() {
            let ms = mean_std(runs.iter().filter(|r| r.method == mi).map(|r| r.scores[k]));
            method.push(m.name());
            measure.push(*col);
            mean.push(Some(ms.mean));
            sd.push(Some(ms.std));
        }
    }
    Table::new()
        .str("method", &method)
        .str("measure", &measure)
        .f64("mean", &mean)
        .f64("sd", &sd)
}

/// `runtime.parquet`: seconds on one core per method (mean ± sd over subsets). Kept apart from
/// `summary.parquet` because it changes from run to run.
fn runtime(s: &LabelledSection, runs: &[MethodRun]) -> Table {
    let (mut method, mut mean, mut sd) = (Vec::new(), Vec::new(), Vec::new());
    for (mi, m) in s.methods.iter().enumerate() {
        let ms = mean_std(runs.iter().filter(|r| r.method == mi).map(|r| r.seconds));
        method.push(m.name());
        mean.push(Some(ms.mean));
        sd.push(Some(ms.std));
    }
    Table::new()
        .str("method", &method)
        .f64("seconds", &mean)
        .f64("seconds_sd", &sd)
}
