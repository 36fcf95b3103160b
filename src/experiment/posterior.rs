//! Exact posterior sampling on one jet (Cluster Trellis paper, Figure 6), with the posterior's
//! entropy and every cluster marginal.
//!
//! Draws `n_samples` trees with [`PosteriorSampler`], enumerates all trees to get the exact
//! posterior mass at each distinct log-likelihood value, and compares the two (and, if given,
//! another sampler's draws) with a chi-square goodness-of-fit test.

use super::chart::{save_chart, PosteriorMassChart};
use super::config::Config;
use super::jets::load_jets;
use super::table::Table;
use super::{Manifest, Staging};
use crate::exact::{FullTrellis, Marginals, PosteriorSampler};
use crate::subset::Subset;
use crate::tree::Tree;
use anyhow::{bail, Context, Result};
use rand::rngs::StdRng;
use rand::SeedableRng;
use statrs::distribution::{ChiSquared, ContinuousCDF};
use std::collections::HashMap;
use std::time::Instant;

/// Chi-square statistic, degrees of freedom, p-value.
pub type ChiSquareTest = (f64, usize, f64);

/// Log-likelihoods closer than this are the same value (trees that differ only in ways the model
/// cannot see, or rounding).
const SAME_VALUE: f64 = 1e-7;

/// Pearson's chi-square statistic of `observed` counts against `expected` probabilities, bins with
/// an expected count below 5 pooled into one; returns (statistic, degrees of freedom, p-value).
pub fn chi_square(observed: &[f64], expected_prob: &[f64]) -> ChiSquareTest {
    let total: f64 = observed.iter().sum();
    let (mut stat, mut bins) = (0.0, 0usize);
    let (mut po, mut pe) = (0.0, 0.0);
    for (&o, &p) in observed.iter().zip(expected_prob) {
        let e = p * total;
        if e < 5.0 {
            po += o;
            pe += e;
        } else {
            stat += (o - e).powi(2) / e;
            bins += 1;
        }
    }
    if pe > 0.0 {
        stat += (po - pe).powi(2) / pe;
        bins += 1;
    }
    let dof = bins.saturating_sub(1).max(1);
    let p = ChiSquared::new(dof as f64)
        .map(|c| 1.0 - c.cdf(stat))
        .unwrap_or(f64::NAN);
    (stat, dof, p)
}

/// Index of the value in sorted `values` within [`SAME_VALUE`] of `x`.
fn value_index(values: &[f64], x: f64) -> Option<usize> {
    let k = values.partition_point(|&v| v < x - SAME_VALUE);
    (k < values.len() && (values[k] - x).abs() <= SAME_VALUE).then_some(k)
}

/// Runs the posterior-sampling experiment of `cfg` into `staging`.
pub fn run(cfg: &Config, staging: &Staging, manifest: &mut Manifest) -> Result<()> {
    let sc = cfg.sampling.as_ref().expect("checked by Config");
    let ds = load_jets(cfg)?;
    let Some(jet) = ds.jets.get(sc.jet_index) else {
        bail!(
            "sampling.jet_index = {} but the dataset has {} jets; use 0..{}",
            sc.jet_index,
            ds.jets.len(),
            ds.jets.len()
        );
    };
    let n = jet.n_leaves;
    if n > sc.max_enumerate_leaves {
        bail!(
            "jet {:?} has {n} leaves; the exact mass per log-likelihood value enumerates all (2N-3)!! trees, allowed up to sampling.max_enumerate_leaves = {}",
            jet.name,
            sc.max_enumerate_leaves
        );
    }
    let m = jet.model();
    let t0 = Instant::now();
    let trellis = FullTrellis::build_with_limit(&m, cfg.algorithms.max_exact_leaves)
        .with_context(|| format!("jet {:?}", jet.name))?;
    if trellis.n_trees_finite() == 0 {
        bail!(
            "jet {:?}: no tree has finite likelihood, so there is no posterior to sample",
            jet.name
        );
    }
    manifest.timing("trellis", t0.elapsed().as_secs_f64());

    // Exact mass per distinct log-likelihood value, by enumeration.
    let t1 = Instant::now();
    let log_z = trellis.log_partition();
    let mut lls: Vec<f64> = Tree::enumerate_all(Subset::full(n))
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
        match values.last() {
            Some(&v) if (x - v).abs() <= SAME_VALUE => {
                *exact.last_mut().unwrap() += p;
                *n_trees.last_mut().unwrap() += 1;
            }
            _ => {
                values.push(x);
                exact.push(p);
                n_trees.push(1);
            }
        }
    }
    manifest.timing("enumerate_all_trees", t1.elapsed().as_secs_f64());

    // Our draws: counts per tree and per value.
    let t2 = Instant::now();
    let mut rng = StdRng::seed_from_u64(cfg.experiment.seed);
    let mut sampler = PosteriorSampler::new(&trellis, &m);
    let mut ours = vec![0.0; values.len()];
    let mut per_tree: HashMap<Vec<Subset>, (f64, f64)> = HashMap::new();
    let pb = super::progress_bar(sc.n_samples as u64, "trees");
    for _ in 0..sc.n_samples {
        let tree = sampler.sample(&mut rng);
        let ll = tree.log_likelihood(&m);
        let k = value_index(&values, ll)
            .context("a sampled tree has a log-likelihood no enumerated tree has")?;
        ours[k] += 1.0;
        per_tree.entry(tree.clusters()).or_insert((0.0, ll)).0 += 1.0;
        pb.inc(1);
    }
    pb.finish_and_clear();
    manifest.timing("sampling", t2.elapsed().as_secs_f64());

    // Chi-square by tree (trees never drawn count as 0 observations).
    let never_drawn = trellis.n_trees_finite() as usize - per_tree.len();
    let mut obs_tree: Vec<f64> = per_tree.values().map(|x| x.0).collect();
    let mut prob_tree: Vec<f64> = per_tree.values().map(|x| (x.1 - log_z).exp()).collect();
    if never_drawn > 0 {
        obs_tree.push(0.0);
        prob_tree.push((1.0 - prob_tree.iter().sum::<f64>()).max(0.0));
    }
    let (chi_tree, dof_tree, p_tree) = chi_square(&obs_tree, &prob_tree);
    let (chi_val, dof_val, p_val) = chi_square(&ours, &exact);

    // The reference sampler's draws, if given.
    // (counts per value, number of draws, chi-square test)
    let mut reference: Option<(Vec<f64>, usize, ChiSquareTest)> = None;
    if let Some(path) = &sc.reference_samples {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!("cannot read sampling.reference_samples {}", path.display())
        })?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", path.display()))?;
        let draws: Vec<f64> = v
            .get("sample_loglh")
            .and_then(|x| x.as_array())
            .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
            .with_context(|| {
                format!("{} has no \"sample_loglh\" list of numbers", path.display())
            })?;
        let mut counts = vec![0.0; values.len()];
        let mut unmatched = 0usize;
        for d in &draws {
            match value_index(&values, *d) {
                Some(k) => counts[k] += 1.0,
                None => unmatched += 1,
            }
        }
        if unmatched * 100 > draws.len() {
            bail!(
                "{} of {} reference draws match no tree of jet {:?}: is it the right jet?",
                unmatched,
                draws.len(),
                jet.name
            );
        }
        let test = chi_square(&counts, &exact);
        reference = Some((counts, draws.len(), test));
    }

    // Marginals of every cluster, and the entropy.
    let t3 = Instant::now();
    let marg = Marginals::compute(&trellis, &m);
    manifest.timing("marginals", t3.elapsed().as_secs_f64());
    let truth_ll = jet.truth().map(|t| t.log_likelihood(&m));

    // Tables.
    let total = sc.n_samples as f64;
    let freq: Vec<f64> = ours.iter().map(|c| c / total).collect();
    let mut t = Table::new()
        .f64(
            "log_likelihood",
            &values.iter().map(|&v| Some(v)).collect::<Vec<_>>(),
        )
        .u64(
            "n_trees",
            &n_trees.iter().map(|&c| Some(c)).collect::<Vec<_>>(),
        )
        .f64(
            "exact_probability",
            &exact.iter().map(|&v| Some(v)).collect::<Vec<_>>(),
        )
        .u64(
            "trellis_sampler_count",
            &ours.iter().map(|&c| Some(c as u64)).collect::<Vec<_>>(),
        )
        .f64(
            "trellis_sampler_frequency",
            &freq.iter().map(|&v| Some(v)).collect::<Vec<_>>(),
        );
    if let Some((counts, nref, _)) = &reference {
        t = t
            .u64(
                "reference_sampler_count",
                &counts.iter().map(|&c| Some(c as u64)).collect::<Vec<_>>(),
            )
            .f64(
                "reference_sampler_frequency",
                &counts
                    .iter()
                    .map(|&c| Some(c / *nref as f64))
                    .collect::<Vec<_>>(),
            );
    }
    let is_truth: Vec<Option<u64>> = values
        .iter()
        .map(|&v| Some(truth_ll.is_some_and(|x| (x - v).abs() <= SAME_VALUE) as u64))
        .collect();
    t.u64("is_truth", &is_truth)
        .write_parquet(&staging.path("posterior_samples.parquet"))?;

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
    if let Some((_, nref, (c, d, p))) = &reference {
        put("reference_n_samples", *nref as f64);
        put("reference_chi2_by_value", *c);
        put("reference_chi2_by_value_dof", *d as f64);
        put("reference_chi2_by_value_p_value", *p);
    }
    Table::new()
        .str("jet", &vec![jet.name.clone(); keys.len()])
        .str("quantity", &keys)
        .f64("value", &vals)
        .write_parquet(&staging.path("summary.parquet"))?;

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
        .write_parquet(&staging.path("cluster_marginals.parquet"))?;

    // Figure 6.
    let mut samples = vec![(
        format!("trellis sampler, {} draws", thousands(sc.n_samples)),
        freq,
    )];
    if let Some((counts, nref, _)) = &reference {
        samples.push((
            format!("reference sampler, {} draws", thousands(*nref)),
            counts.iter().map(|c| c / *nref as f64).collect(),
        ));
    }
    let chart = PosteriorMassChart {
        values,
        exact,
        samples,
        truth: truth_ll,
        title: format!(
            "Figure 6: posterior over trees of jet {} (N = {n}, {} trees, χ² p = {:.2})",
            jet.name,
            trellis.n_trees_finite(),
            p_tree
        ),
        x_label: "log-likelihood of the tree".into(),
        y_label: "posterior probability".into(),
        exact_label: "exact posterior mass".into(),
    };
    save_chart(&staging.path("fig6_posterior_sampling"), 1100, 750, &chart)?;
    manifest.set("jet", jet.name.clone());
    manifest.set("n_samples", sc.n_samples);
    Ok(())
}

/// `100000` -> `"100,000"`.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
