//! The posterior-sampling run: exact trellis, enumeration, draws, chi-square tests, marginals;
//! `posterior_samples.parquet`, `summary.parquet` and `cluster_marginals.parquet`.

use super::PosteriorSamplingConfig;
use crate::exact::{FullTrellis, Marginals, PosteriorSampler};
use crate::experiment::kind::RunContext;
use crate::experiment::stats::{chi_square, ChiSquareTest};
use crate::experiment::table::Table;
use crate::subset::Subset;
use crate::tree::Tree;
use anyhow::{bail, Context, Result};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// Log-likelihoods closer than this are the same value (trees that differ only in ways the model
/// cannot see, or rounding).
const SAME_VALUE: f64 = 1e-7;

/// Index of the value in sorted `values` within [`SAME_VALUE`] of `x`.
fn value_index(values: &[f64], x: f64) -> Option<usize> {
    let k = values.partition_point(|&v| v < x - SAME_VALUE);
    (k < values.len() && (values[k] - x).abs() <= SAME_VALUE).then_some(k)
}

/// Each `Some`.
fn some<T: Copy>(v: &[T]) -> Vec<Option<T>> {
    v.iter().map(|&x| Some(x)).collect()
}

/// Chi-square test of sampled trees against their exact probabilities: `per_tree` maps each
/// drawn tree (its clusters) to (count, log-likelihood); trees never drawn are pooled into one
/// bin with 0 observations. Summed in the order of the trees' clusters, so that the statistic
/// is the same to the last bit in every run.
pub fn chi_square_by_tree(
    per_tree: &BTreeMap<Vec<Subset>, (f64, f64)>,
    n_trees_finite: u128,
    log_z: f64,
) -> ChiSquareTest {
    let mut obs: Vec<f64> = per_tree.values().map(|x| x.0).collect();
    let mut prob: Vec<f64> = per_tree.values().map(|x| (x.1 - log_z).exp()).collect();
    if n_trees_finite > per_tree.len() as u128 {
        obs.push(0.0);
        prob.push((1.0 - prob.iter().sum::<f64>()).max(0.0));
    }
    chi_square(&obs, &prob)
}

/// Another sampler's draws: counts per value, number of draws, chi-square test.
struct Reference {
    counts: Vec<f64>,
    n: usize,
    test: ChiSquareTest,
}

/// Reads another sampler's draws (`sample_loglh`) and tests them against `exact` at `values`.
fn read_reference(path: &Path, values: &[f64], exact: &[f64], jet: &str) -> Result<Reference> {
    let text = crate::experiment::staging::read_small(path, 256 << 20).with_context(|| {
        format!(
            "cannot read posterior_sampling.reference_samples {}",
            path.display()
        )
    })?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let draws: Vec<f64> = v
        .get("sample_loglh")
        .and_then(|x| x.as_array())
        .and_then(|a| a.iter().map(|x| x.as_f64()).collect::<Option<Vec<f64>>>())
        .filter(|d| !d.is_empty())
        .with_context(|| {
            format!(
                "{} has no \"sample_loglh\" list of numbers (a non-empty list of log-likelihoods)",
                path.display()
            )
        })?;
    let mut counts = vec![0.0; values.len()];
    let mut unmatched = 0usize;
    for d in &draws {
        match value_index(values, *d) {
            Some(k) => counts[k] += 1.0,
            None => unmatched += 1,
        }
    }
    if unmatched * 100 > draws.len() {
        bail!(
            "{} of {} reference draws match no tree of jet {jet:?}: is it the right jet?",
            unmatched,
            draws.len(),
        );
    }
    let test = chi_square(&counts, exact);
    Ok(Reference {
        counts,
        n: draws.len(),
        test,
    })
}

/// Runs the posterior-sampling kind.
pub fn run(cfg: &PosteriorSamplingConfig, ctx: &mut RunContext) -> Result<()> {
    let sc = &cfg.posterior_sampling;
    let (ds, dropped) = cfg.jets.load(ctx.seed(), &ctx.experiment.name)?;
    crate::experiment::dropped::report(ctx, dropped.as_slice());
    let Some(jet) = ds.jets.get(sc.jet_index) else {
        bail!(
            "posterior_sampling.jet_index = {} but the dataset has {} jets; use 0..{}",
            sc.jet_index,
            ds.jets.len(),
            ds.jets.len()
        );
    };
    let n = jet.n_leaves;
    if n > sc.max_enumerate_leaves {
        bail!(
            "jet {:?} has {n} leaves; the exact mass per log-likelihood value enumerates all (2N-3)!! trees, allowed up to posterior_sampling.max_enumerate_leaves = {}",
            jet.name,
            sc.max_enumerate_leaves
        );
    }
    let m = jet.model().with_context(|| format!("jet {:?}", jet.name))?;
    let t0 = Instant::now();
    // The trellis itself (not only its MAP tree) is needed: it is the sampler's table.
    let trellis = FullTrellis::build_with_limit(&m, cfg.methods.max_exact_leaves)
        .with_context(|| format!("jet {:?}", jet.name))?;
    if trellis.n_trees_finite() == 0 {
        bail!(
            "jet {:?}: no tree has finite likelihood, so there is no posterior to sample",
            jet.name
        );
    }
    ctx.manifest.timing("trellis", t0.elapsed().as_secs_f64());

    // Exact mass per distinct log-likelihood value, by enumeration.
    let t1 = Instant::now();
    let log_z = trellis.log_partition();
    let mut lls: Vec<f64> = Tree::enumerate_all(Subset::full(n))
        .with_context(|| format!("jet {:?}", jet.name))?
        .iter()
        .map(|t| t.log_likelihood(&m))
        .filter(|x| x.is_finite())
        .collect();
    lls.sort_by(f64::total_cmp);
    let mut values: Vec<f64> = Vec::new();
    let mut exact: Vec<f64> = Vec::new();
    let mut n_trees: Vec<u64> = Vec::new();
    for &x in &lls {
        let p = (x - log_z).exp();
        match (values.last(), exact.last_mut(), n_trees.last_mut()) {
            (Some(&v), Some(e), Some(c)) if (x - v).abs() <= SAME_VALUE => {
                *e += p;
                *c += 1;
            }
            _ => {
                values.push(x);
                exact.push(p);
                n_trees.push(1);
            }
        }
    }
    ctx.manifest
        .timing("enumerate_all_trees", t1.elapsed().as_secs_f64());

    // Our draws: counts per tree and per value.
    let t2 = Instant::now();
    let mut rng = StdRng::seed_from_u64(ctx.seed());
    let mut sampler =
        PosteriorSampler::new(&trellis, &m).with_context(|| format!("jet {:?}", jet.name))?;
    let mut ours = vec![0.0; values.len()];
    let mut per_tree: BTreeMap<Vec<Subset>, (f64, f64)> = BTreeMap::new();
    let pb = crate::experiment::progress_bar(sc.n_samples as u64, "trees");
    for _ in 0..sc.n_samples {
        let tree = sampler.sample(&mut rng)?;
        let ll = tree.log_likelihood(&m);
        let k = value_index(&values, ll)
            .context("a sampled tree has a log-likelihood no enumerated tree has")?;
        ours[k] += 1.0;
        per_tree.entry(tree.clusters()).or_insert((0.0, ll)).0 += 1.0;
        pb.inc(1);
    }
    pb.finish_and_clear();
    ctx.manifest.timing("sampling", t2.elapsed().as_secs_f64());

    let (chi_tree, dof_tree, p_tree) =
        chi_square_by_tree(&per_tree, trellis.n_trees_finite(), log_z);
    let (chi_val, dof_val, p_val) = chi_square(&ours, &exact);
    let reference = sc
        .reference_samples
        .as_deref()
        .map(|p| read_reference(p, &values, &exact, &jet.name))
        .transpose()?;

    // Marginals of every cluster, and the entropy.
    let t3 = Instant::now();
    let marg = Marginals::compute(&trellis, &m)?;
    ctx.manifest.timing("marginals", t3.elapsed().as_secs_f64());
    let truth_ll = jet.truth().map(|t| t.log_likelihood(&m));

    // One row per distinct value.
    let total = sc.n_samples as f64;
    let freq: Vec<f64> = ours.iter().map(|c| c / total).collect();
    let count = |c: &[f64]| c.iter().map(|&c| Some(c as u64)).collect::<Vec<_>>();
    let mut t = Table::new()
        .f64("log_likelihood", &some(&values))
        .u64("n_trees", &some(&n_trees))
        .f64("exact_probability", &some(&exact))
        .u64("trellis_sampler_count", &count(&ours))
        .f64("trellis_sampler_frequency", &some(&freq));
    if let Some(r) = &reference {
        let f: Vec<Option<f64>> = r.counts.iter().map(|&c| Some(c / r.n as f64)).collect();
        t = t
            .u64("reference_sampler_count", &count(&r.counts))
            .f64("reference_sampler_frequency", &f);
    }
    let is_truth: Vec<Option<u64>> = values
        .iter()
        .map(|&v| Some(truth_ll.is_some_and(|x| (x - v).abs() <= SAME_VALUE) as u64))
        .collect();
    t.u64("is_truth", &is_truth)
        .write_parquet(&ctx.path("posterior_samples.parquet"))?;

    // One row per quantity.
    let mut keys: Vec<String> = Vec::new();
    let mut vals: Vec<Option<f64>> = Vec::new();
    let mut put = |k: &str, v: f64| {
        keys.push(k.to_string());
        vals.push(Some(v));
    };
    put("n_leaves", n as f64);
    put("log_z", log_z);
    put("map_log_likelihood", trellis.map_log_likelihood());
    put("n_trees_finite", trellis.n_trees_finite() as f64);
    put("entropy_nats", trellis.entropy());
    put("mean_log_likelihood", trellis.mean_log_likelihood());
    put("n_samples", total);
    put("distinct_trees_sampled", per_tree.len() as f64);
    put("chi2_by_tree", chi_tree);
    put("chi2_by_tree_dof", dof_tree as f64);
    put("chi2_by_tree_p_value", p_tree);
    put("chi2_by_value", chi_val);
    put("chi2_by_value_dof", dof_val as f64);
    put("chi2_by_value_p_value", p_val);
    if let Some(x) = truth_ll {
        put("truth_log_likelihood", x);
    }
    if let Some(r) = &reference {
        let (c, d, p) = r.test;
        put("reference_n_samples", r.n as f64);
        put("reference_chi2_by_value", c);
        put("reference_chi2_by_value_dof", d as f64);
        put("reference_chi2_by_value_p_value", p);
    }
    Table::new()
        .str("jet", &vec![jet.name.clone(); keys.len()])
        .str("quantity", &keys)
        .f64("value", &vals)
        .write_parquet(&ctx.path("summary.parquet"))?;

    // One row per cluster.
    let clusters: Vec<Subset> = (1..1u64 << n).map(Subset).collect();
    Table::new()
        .str(
            "cluster",
            &clusters.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
        )
        .u64(
            "bits",
            &clusters.iter().map(|c| Some(c.bits())).collect::<Vec<_>>(),
        )
        .u64(
            "size",
            &clusters
                .iter()
                .map(|c| Some(c.len() as u64))
                .collect::<Vec<_>>(),
        )
        .f64(
            "marginal",
            &clusters
                .iter()
                .map(|&c| marg.cluster(c).ok())
                .collect::<Vec<_>>(),
        )
        .write_parquet(&ctx.path("cluster_marginals.parquet"))?;

    ctx.manifest.set("jet", jet.name.clone());
    ctx.manifest.set("n_samples", sc.n_samples);
    Ok(())
}
