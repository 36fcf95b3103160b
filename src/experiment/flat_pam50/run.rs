//! The flat_pam50 run: exact inference over all flat clusterings of the subsample, and
//! Perturb-and-MAP; `flat_pairs.parquet`, `flat_summary.parquet` and `map_clustering.txt`.

use super::FlatPam50Config;
use crate::data::pam50::{pearson, Pam50};
use crate::experiment::kind::RunContext;
use crate::experiment::table::Table;
use crate::flat::enumerate::bell;
use crate::flat::{FlatTrellis, PairwiseAffinity, PerturbAndMap};
use anyhow::{bail, Result};
use std::time::Instant;

/// Runs the flat-clustering experiment.
pub fn run(cfg: &FlatPam50Config, ctx: &mut RunContext) -> Result<()> {
    let sec = &cfg.flat_pam50;
    let limit = cfg.methods.max_exact_leaves;
    let (data, idx) = Pam50::load_subsample(
        &sec.path,
        sec.per_class,
        sec.unlabelled,
        ctx.seed(),
        limit,
        "flat_pam50",
    )?;
    let n = idx.len();
    let bandwidth = sec.bandwidth.resolve().map_err(|e| anyhow::anyhow!(e))?;
    let affinities = data.distance_affinities(&idx, bandwidth, sec.centre)?;
    let model = PairwiseAffinity::with_beta(affinities.clone(), sec.beta)?;

    let t0 = Instant::now();
    let trellis = FlatTrellis::build_with_limit(&model, limit)?;
    let marginals = trellis.pairwise_marginals();
    let log_marginals = trellis.pairwise_log_marginals();
    ctx.manifest.timing("exact", t0.elapsed().as_secs_f64());
    check_finite(&trellis, &marginals, &log_marginals, sec.beta)?;
    let map = trellis.map_clustering();
    let t0 = Instant::now();
    let pnm = PerturbAndMap::new(sec.perturb_draws, ctx.seed());
    let approx = pnm.pairwise_marginals(&model)?;
    // The same with the Gumbel noise's mean (0.577) removed, so that it does not raise every
    // affinity: separates the bias of the shift from that of perturbing pairs, not clusterings.
    let centred = PerturbAndMap {
        centered: true,
        ..pnm
    }
    .pairwise_marginals(&model)?;
    ctx.manifest
        .timing("perturb_and_map", t0.elapsed().as_secs_f64());

    // Names: subtype and a running number, e.g. "LumA 2" (sample ids go to the tables).
    let subtype: Vec<String> = idx
        .iter()
        .map(|&i| data.subtypes[i].clone().unwrap_or_else(|| "unknown".into()))
        .collect();
    let names: Vec<String> = (0..n)
        .map(|k| {
            let m = subtype[..=k].iter().filter(|s| **s == subtype[k]).count();
            format!("{} {m}", subtype[k])
        })
        .collect();

    // Per pair.
    let mut rows: Vec<(usize, usize)> = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            rows.push((i, j));
        }
    }
    let same = |i: usize, j: usize| subtype[i] == subtype[j] && subtype[i] != "unknown";
    let col = |f: &dyn Fn(usize, usize) -> f64| {
        rows.iter().map(|&(i, j)| Some(f(i, j))).collect::<Vec<_>>()
    };
    let text = |f: &dyn Fn(usize, usize) -> String| {
        rows.iter().map(|&(i, j)| f(i, j)).collect::<Vec<_>>()
    };
    let index = |f: &dyn Fn(&(usize, usize)) -> usize| {
        rows.iter().map(|r| Some(f(r) as u64)).collect::<Vec<_>>()
    };
    Table::new()
        .u64("i", &index(&|r| r.0))
        .u64("j", &index(&|r| r.1))
        .str("sample_i", &text(&|i, _| data.samples[idx[i]].clone()))
        .str("sample_j", &text(&|_, j| data.samples[idx[j]].clone()))
        .str("name_i", &text(&|i, _| names[i].clone()))
        .str("name_j", &text(&|_, j| names[j].clone()))
        .str("same_subtype", &text(&|i, j| same(i, j).to_string()))
        .f64("affinity", &col(&|i, j| affinities.at(i, j)))
        .f64("pair_log_energy", &col(&|i, j| model.pair_log_energy(i, j).unwrap_or(f64::NAN)))
        .f64("exact_marginal", &col(&|i, j| marginals[i][j]))
        .f64("exact_log_marginal", &col(&|i, j| log_marginals[i][j]))
        .f64("perturb_and_map_marginal", &col(&|i, j| approx[i][j]))
        .f64(
            "perturb_and_map_centred_marginal",
            &col(&|i, j| centred[i][j]),
        )
        .str("subtype_i", &text(&|i, _| subtype[i].clone()))
        .str("subtype_j", &text(&|_, j| subtype[j].clone()))
        .write_parquet(&ctx.path("flat_pairs.parquet"))?;

    // Summary numbers.
    let errors: Vec<f64> = rows
        .iter()
        .map(|&(i, j)| approx[i][j] - marginals[i][j])
        .collect();
    let mean_abs = errors.iter().map(|e| e.abs()).sum::<f64>() / errors.len() as f64;
    let max_abs = errors.iter().fold(0.0f64, |a, e| a.max(e.abs()));
    let over = errors.iter().filter(|&&e| e > 0.0).count();
    let centred_mean_abs = rows
        .iter()
        .map(|&(i, j)| (centred[i][j] - marginals[i][j]).abs())
        .sum::<f64>()
        / rows.len() as f64;
    let xs: Vec<f64> = rows
        .iter()
        .map(|&(i, j)| model.pair_log_energy(i, j).unwrap_or(f64::NAN))
        .collect();
    let ys: Vec<f64> = rows.iter().map(|&(i, j)| log_marginals[i][j]).collect();
    let corr = pearson(&xs, &ys);
    let map_text: Vec<String> = map
        .iter()
        .map(|c| {
            c.iter()
                .map(|i| names[i].clone())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    let map_probability = (trellis.map_log_energy() - trellis.log_partition()).exp();
    Table::new()
        .u64("n_points", &[Some(n as u64)])
        .f64("n_clusterings", &[bell(n).map(|b| b as f64)])
        .f64("log_z", &[Some(trellis.log_partition())])
        .f64("map_log_energy", &[Some(trellis.map_log_energy())])
        .f64("map_probability", &[Some(map_probability)])
        .u64("map_n_clusters", &[Some(map.len() as u64)])
        .str("map_clustering", &[map_text.join(" | ")])
        .u64("perturb_draws", &[Some(sec.perturb_draws as u64)])
        .f64("perturb_mean_abs_error", &[Some(mean_abs)])
        .f64("perturb_max_abs_error", &[Some(max_abs)])
        .u64("perturb_overestimates", &[Some(over as u64)])
        .f64("perturb_centred_mean_abs_error", &[Some(centred_mean_abs)])
        .u64("pairs", &[Some(rows.len() as u64)])
        .f64("corr_pair_energy_log_marginal", &[Some(corr)])
        .write_parquet(&ctx.path("flat_summary.parquet"))?;
    let mut text = format!(
        "MAP clustering of {n} pam50 samples ({} clusters; probability {map_probability:.4} of {} clusterings)\n",
        map.len(),
        bell(n).unwrap_or(u128::MAX)
    );
    for (k, c) in map.iter().enumerate() {
        let ids: Vec<String> = c.iter().map(|i| data.samples[idx[i]].clone()).collect();
        text.push_str(&format!(
            "cluster {}: {}  [{}]\n",
            k + 1,
            map_text[k],
            ids.join(", ")
        ));
    }
    ctx.staging.write_string("map_clustering.txt", &text)?;

    ctx.manifest.set(
        "samples",
        idx.iter()
            .map(|&i| data.samples[i].clone())
            .collect::<Vec<_>>(),
    );
    ctx.manifest.set("n_points", n);
    // The heatmaps' row order and outlined blocks.
    ctx.manifest.set(
        "map_clustering",
        map.iter()
            .map(|c| c.iter().collect::<Vec<_>>())
            .collect::<Vec<_>>(),
    );
    Ok(())
}

/// A `β` so large that the energies overflow gives log Z = ±inf or NaN marginals: an error
/// naming the key, before anything is written.
fn check_finite(
    trellis: &FlatTrellis,
    marginals: &[Vec<f64>],
    log_marginals: &[Vec<f64>],
    beta: f64,
) -> Result<()> {
    let log_z = trellis.log_partition();
    let bad_marginal = marginals.iter().flatten().any(|p| !p.is_finite())
        || log_marginals.iter().flatten().any(|l| l.is_nan());
    if !log_z.is_finite() || !trellis.map_log_energy().is_finite() || bad_marginal {
        bail!(
            "flat_pam50.beta = {beta:?} is too large for these affinities: log Z = {log_z}{}; lower beta (the paper's is 1)",
            if bad_marginal {
                " and some pairwise marginals are not finite"
            } else {
                ""
            }
        );
    }
    Ok(())
}
