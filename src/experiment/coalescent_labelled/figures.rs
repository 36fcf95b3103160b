//! HL Figure 2 from the tables alone: `ari_curves` (left panel: ARI against the number of
//! clusters, mean over subsets, mean AUC in the legend) and `table` (right panel: subtree score,
//! AUC, dendrogram purity and runtime, mean ± sd over subsets, best per column tinted).

use super::{LabelledMethod, SCORES};
use crate::experiment::chart::{
    format_number, format_seconds_pm, save_chart, LineChart, LineSeries, TextRow, TextTable,
};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// Methods in the order `summary.parquet` lists them.
fn methods_of(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in names {
        if !out.contains(m) {
            out.push(m.clone());
        }
    }
    out
}

fn display(m: &str) -> String {
    LabelledMethod::from_name(m).map_or(m.to_string(), |v| v.display().to_string())
}

/// Draws both charts into `out`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let t = results.table("summary")?;
    let method = str_column(&t, "method")?;
    let measure = str_column(&t, "measure")?;
    let mean = f64_column(&t, "mean")?;
    let sd = f64_column(&t, "sd")?;
    let methods = methods_of(&method);
    let cell = |m: &str, col: &str| {
        (0..t.height())
            .find(|&i| method[i] == m && measure[i] == col)
            .map(|i| (mean[i].unwrap_or(f64::NAN), sd[i].unwrap_or(f64::NAN)))
    };
    // The paper item in words (not the config's id): Henao & Lucas's Figure 2 on USPS digits.
    let smoke = results.experiment().is_ok_and(|e| e.name.ends_with("_smoke"));
    let usps = results
        .config::<super::LabelledConfig>()
        .is_ok_and(|c| c.coalescent_labelled.data.source == super::Source::Usps);
    let name = format!(
        "{}{}",
        if usps {
            "Henao & Lucas, Figure 2 (USPS digits)"
        } else {
            "Coalescent methods on your labelled data"
        },
        if smoke { ", smoke run" } else { "" }
    );
    let subsets: usize = {
        let r = results.table("runs")?;
        let s = u64_column(&r, "subset")?;
        s.iter().flatten().max().map_or(0, |m| *m as usize + 1)
    };

    // Left panel: mean ARI curve per method.
    let c = results.table("curves")?;
    let (cm, cn, ca) = (
        str_column(&c, "method")?,
        u64_column(&c, "n_clusters")?,
        f64_column(&c, "ari")?,
    );
    let mut series = Vec::new();
    for m in &methods {
        let mut acc: BTreeMap<u64, (f64, usize)> = BTreeMap::new();
        for i in 0..c.height() {
            if cm[i] == *m {
                if let (Some(k), Some(a)) = (cn[i], ca[i]) {
                    let e = acc.entry(k).or_insert((0.0, 0));
                    e.0 += a;
                    e.1 += 1;
                }
            }
        }
        let auc = cell(m, "auc").map_or(f64::NAN, |x| x.0);
        series.push(LineSeries {
            name: format!("{} ({})", display(m), format_number(auc, 3)),
            points: acc
                .into_iter()
                .map(|(k, (s, n))| (k as f64, s / n as f64))
                .collect(),
            dashed: m == "coalescent_prior",
            markers: false,
        });
    }
    let curves = LineChart {
        series,
        title: format!("{name}: ARI curves, mean over {subsets} subsets (AUC in parentheses)"),
        x_label: "number of clusters N_c".into(),
        y_label: "adjusted Rand index (majority-vote labels)".into(),
        log_y: false,
        integer_x: true,
    };
    save_chart(&out.join("ari_curves"), 1100, 700, &curves)?;

    // Right panel: the scores and the runtime.
    let rt = results.table("runtime")?;
    let (rm, sec, sec_sd) = (
        str_column(&rt, "method")?,
        f64_column(&rt, "seconds")?,
        f64_column(&rt, "seconds_sd")?,
    );
    let runtime = |m: &str| {
        (0..rt.height())
            .find(|&i| rm[i] == m)
            .map(|i| (sec[i].unwrap_or(f64::NAN), sec_sd[i].unwrap_or(f64::NAN)))
    };
    let mut columns = vec!["Method".to_string()];
    columns.extend(SCORES.iter().map(|(_, label)| label.to_string()));
    columns.push("runtime".into());
    // Best per column: highest score, lowest runtime (the prior's runtime is not a contender).
    let best_score: Vec<f64> = SCORES
        .iter()
        .map(|(col, _)| {
            methods
                .iter()
                .filter_map(|m| cell(m, col).map(|x| x.0))
                .filter(|v| v.is_finite())
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect();
    let mut rows = Vec::new();
    for m in &methods {
        let mut cells = vec![display(m)];
        let mut hl = vec![false];
        for (k, (col, _)) in SCORES.iter().enumerate() {
            let (mu, s) = cell(m, col).unwrap_or((f64::NAN, f64::NAN));
            cells.push(format!("{} ± {}", format_number(mu, 3), format_number(s, 3)));
            hl.push(mu == best_score[k]);
        }
        let (mu, s) = runtime(m).unwrap_or((f64::NAN, f64::NAN));
        cells.push(format_seconds_pm(mu, s));
        hl.push(false);
        rows.push(TextRow::data(cells, hl));
    }
    let cores = if results.fact::<bool>("particles_in_parallel").unwrap_or(false) {
        "particles on all cores"
    } else {
        "one core per method"
    };
    let table = TextTable {
        title: format!("{name}: tree scores, mean ± sd over {subsets} subsets"),
        columns,
        rows,
        caption: format!(
            "Subtree score = pure internal nodes / (n − C); ARI AUC = trapezoidal area under the \
             ARI curve / (n − 1); dendrogram purity (Heller & Ghahramani). Higher is better; best \
             per column tinted. Runtime: time per subset on this machine, {cores} (HL report \
             minutes in Matlab/C)."
        ),
    };
    let height = 160 + 46 * (table.rows.len() as u32 + 1);
    save_chart(
        &out.join("table"),
        table.fitted_width().max(1000),
        height.max(420),
        &table,
    )?;
    Ok(())
}

/// The caption and alternative text of the figure `<stem>.png` (the report shows them).
pub fn caption(stem: &str) -> Option<Caption> {
    match stem {
        "ari_curves" => Some(Caption::new(
            "Henao & Lucas's Figure 2 (left): the adjusted Rand index of each tree's cut into k clusters against k, mean over subsets, with each method's area under the curve.",
            "ARI against the number of clusters, one line per method told apart by colour and dash pattern.",
        )),
        "table" => Some(Caption::new(
            "Henao & Lucas's Figure 2 (right) as a table: subtree score, dendrogram purity and ARI AUC per method, mean ± sd over subsets, and the time per tree.",
            "A table of methods in rows and tree scores in columns.",
        )),
        _ => None,
    }
}
