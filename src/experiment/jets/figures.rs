//! Table 1 and Figure 5, drawn from `table1.parquet`, `jets.parquet` and the manifest alone.

use super::JetsConfig;
use crate::experiment::chart::{save_chart, PairwiseDiffTable, ScatterByCategory};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::methods::Method;
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::{anyhow, Result};
use std::collections::BTreeSet;
use std::path::Path;

/// Draws `table1.png/.svg` and `fig5_logz_vs_map.png/.svg` into `out`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let cfg: JetsConfig = results.config()?;
    let seed = results.experiment()?.seed;
    let jets = results.table("jets")?;
    let algorithm = str_column(&jets, "algorithm")?;
    let jet_index = u64_column(&jets, "jet_index")?;
    let n_jets = jet_index.iter().flatten().collect::<BTreeSet<_>>().len();

    let t1 = results.table("table1")?;
    let kind = str_column(&t1, "kind")?;
    let row = str_column(&t1, "row")?;
    let col = str_column(&t1, "column")?;
    let mean = f64_column(&t1, "mean")?;
    let std = f64_column(&t1, "std")?;
    let paper = f64_column(&t1, "paper_mean")?;
    // Methods in table order (the "mean" rows list each once, in [`Method::ALL`] order).
    let methods: Vec<Method> = (0..t1.height())
        .filter(|&i| kind[i] == "mean")
        .map(|i| Method::from_name(&row[i]).ok_or_else(|| anyhow!("unknown method {:?}", row[i])))
        .collect::<Result<_>>()?;
    if methods.len() >= 2 {
        let k = methods.len();
        let pos = |name: &str| methods.iter().position(|m| m.name() == name);
        let mut mean_m = vec![vec![None; k]; k];
        let mut std_m = vec![vec![None; k]; k];
        let paper_of = |a: &str, b: &str| -> Option<f64> {
            (0..t1.height())
                .find(|&i| kind[i] == "difference" && row[i] == a && col[i] == b)
                .and_then(|i| paper[i])
        };
        let paper3 = [
            paper_of("trellis", "beam"),
            paper_of("trellis", "greedy"),
            paper_of("beam", "greedy"),
        ];
        for i in (0..t1.height()).filter(|&i| kind[i] == "difference") {
            if let (Some(a), Some(b)) = (pos(&row[i]), pos(&col[i])) {
                mean_m[a][b] = mean[i];
                std_m[a][b] = std[i];
            }
        }
        // Generated jets: the config's range and seed; a user's file: the range found in it.
        let about = if cfg.jets.source == super::DataSource::Generate {
            let (lo, hi) = cfg.jets.leaf_range();
            format!("with {lo}\u{2013}{hi} leaves (seed {seed})")
        } else {
            let n = u64_column(&jets, "n_leaves")?;
            let (lo, hi) = (n.iter().flatten().min(), n.iter().flatten().max());
            let file = cfg.jets.path.as_deref().and_then(|p| p.file_name());
            let (lo, hi) = (lo.copied().unwrap_or(0), hi.copied().unwrap_or(0));
            let leaves = if lo == hi {
                format!("{lo}")
            } else {
                format!("{lo}\u{2013}{hi}")
            };
            format!(
                "of {} with {leaves} leaves",
                file.map_or("the input file".into(), |f| f.to_string_lossy().to_string()),
            )
        };
        let (title, paper_text) = match paper3 {
            [Some(a), Some(b), Some(c)] => (
                "[CT] Table 1: Ginkgo log-likelihood difference, row − column",
                format!(
                    ". Paper: trellis − beam {a:.4}, trellis − greedy {b:.4}, beam − greedy {c:.4}"
                ),
            ),
            _ => ("Log-likelihood difference, row − column", String::new()),
        };
        // Without generator trees (a user's file) there is no Truth row or column: say why.
        let truth_mean = (0..t1.height())
            .find(|&i| kind[i] == "mean" && row[i] == Method::Truth.name())
            .and_then(|i| mean[i]);
        let no_truth = if truth_mean.is_some_and(f64::is_finite) {
            ""
        } else {
            "; no generator (truth) trees in the input"
        };
        let chart = PairwiseDiffTable {
            labels: methods.iter().map(|m| m.display().to_string()).collect(),
            mean: mean_m,
            std: std_m,
            title: title.into(),
            caption: format!(
                "mean ± std over {n_jets} jets {about}{no_truth}{paper_text}{}",
                crate::experiment::dropped::caption_suffix(results)
            ),
        };
        save_chart(&out.join("table1"), 1100, 600, &chart)?;
    }

    let dropped: usize = crate::experiment::dropped::recorded(results)
        .iter()
        .map(|d| d.count)
        .sum();
    let dropped_note = if dropped > 0 {
        format!("; {dropped} dropped, see the manifest")
    } else {
        String::new()
    };
    let ll = f64_column(&jets, "log_likelihood")?;
    let log_z = f64_column(&jets, "log_z")?;
    let n_leaves = u64_column(&jets, "n_leaves")?;
    let points: Vec<(f64, f64, usize)> = (0..jets.height())
        .filter(|&i| algorithm[i] == Method::Trellis.name())
        .filter_map(|i| {
            let (map, lz, n) = (ll[i]?, log_z[i]?, n_leaves[i]?);
            (map.is_finite() && lz.is_finite()).then_some((map, lz, n as usize))
        })
        .collect();
    if algorithm.iter().any(|a| a == Method::Trellis.name()) {
        let chart = ScatterByCategory {
            points,
            x_label: "trellis MAP log-likelihood ℓ".into(),
            y_label: "log partition function log Z".into(),
            title: format!(
                "[CT] Figure 5: log Z vs. MAP log-likelihood, Ginkgo jets ({n_jets}{dropped_note})"
            ),
            legend_title: "N leaves".into(),
            category_names: vec![],
            // log Z ≥ the MAP's log-likelihood: every point lies on or above y = x.
            diagonal: true,
            x_range: None,
            y_range: None,
        };
        save_chart(&out.join("fig5_logz_vs_map"), 1000, 750, &chart)?;
    }
    Ok(())
}

/// The caption and alternative text of the figure `<stem>.png` (the report shows them).
pub fn caption(stem: &str) -> Option<Caption> {
    match stem {
        "table1" => Some(Caption::new(
            "Table 1 of the Cluster Trellis paper: mean ± std of the pairwise differences in MAP log-likelihood between the exact trellis, beam search, greedy and the generator's tree, over the run's jets (the paper's values beside ours where the config is the paper's).",
            "A matrix of mean ± std differences in MAP log-likelihood between every pair of methods, cells tinted by sign and size.",
        )),
        "fig5_logz_vs_map" => Some(Caption::new(
            "Figure 5 of the Cluster Trellis paper: each jet's log partition function log Z against its exact MAP log-likelihood, coloured by its number of leaves; every point lies on or above the dashed line y = x, since Z sums the MAP tree's likelihood and every other tree's.",
            "A scatter plot of log Z against the MAP log-likelihood, one point per jet coloured by leaf count, all on or above a dashed diagonal y = x.",
        )),
        _ => None,
    }
}
