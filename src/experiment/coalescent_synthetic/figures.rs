//! `table.png/.svg`: HL's table layout drawn from `summary.parquet` alone; ours as mean ± sd
//! over replicates, the paper's mean in parentheses, the best (lowest) of ours per row tinted.

use super::METRICS;
use crate::coalescent::method::Method;
use crate::experiment::chart::{
    format_seconds_pm, format_sig3_pm, format_sig3_scaled, save_chart, TextRow, TextTable,
};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::table::{f64_column, str_column};
use anyhow::Result;
use std::path::Path;

/// Highlights: none for the label cell, then the lowest finite value(s).
fn best_of(vals: &[f64]) -> Vec<bool> {
    let best = vals
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(f64::INFINITY, f64::min);
    let mut hl = vec![false];
    hl.extend(vals.iter().map(|&v| v == best));
    hl
}

/// One table row: `label`, then per method "mean ± sd (paper)" from `find`, lowest tinted;
/// `seconds`: durations, in the unit that suits each mean (µs, ms, s).
fn data_row(
    label: String,
    methods: &[&str],
    seconds: bool,
    find: impl Fn(&str) -> Option<(Option<f64>, Option<f64>, Option<f64>)>,
) -> TextRow {
    let mut cells = vec![label];
    let mut vals = Vec::new();
    for m in methods {
        let (text, v) = match find(m) {
            Some((mean, sd, paper)) => {
                let mu = mean.unwrap_or(f64::NAN);
                let sd = sd.unwrap_or(f64::NAN);
                let mut text = if seconds {
                    format_seconds_pm(mu, sd)
                } else {
                    format_sig3_pm(mu, sd)
                };
                if let Some(p) = paper {
                    let p = if seconds {
                        format_seconds_pm(p, f64::NAN).replace(" ± ?", "")
                    } else {
                        format_sig3_scaled(p)
                    };
                    text.push_str(&format!(" ({p})"));
                }
                (text, mu)
            }
            None => ("–".into(), f64::NAN),
        };
        cells.push(text);
        vals.push(v);
    }
    TextRow::data(cells, best_of(&vals))
}

/// Draws `table` into `out`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let t = results.table("summary")?;
    let setting = str_column(&t, "setting")?;
    let method = str_column(&t, "method")?;
    let measure = str_column(&t, "measure")?;
    let mean = f64_column(&t, "mean")?;
    let sd = f64_column(&t, "sd")?;
    let paper = f64_column(&t, "paper_mean")?;
    let mut settings: Vec<&str> = Vec::new();
    let mut methods: Vec<&str> = Vec::new();
    for i in 0..t.height() {
        if !settings.contains(&setting[i].as_str()) {
            settings.push(&setting[i]);
        }
        if !methods.contains(&method[i].as_str()) {
            methods.push(&method[i]);
        }
    }
    let display = |m: &str| {
        Method::ALL
            .iter()
            .find(|v| v.name() == m)
            .map_or(m.to_string(), |v| v.display().to_string())
    };
    let mut columns = vec!["Set · measure".to_string()];
    columns.extend(methods.iter().map(|m| display(m)));
    let learning: bool = results.fact("learning").unwrap_or(false);
    let mut sections: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("Merge time (t), log domain", METRICS[..3].to_vec()),
        ("Distance matrix (π), log domain", METRICS[3..6].to_vec()),
    ];
    if learning {
        sections.push(("Inverse length scale (ℓ)", METRICS[6..].to_vec()));
    }

    let mut rows = Vec::new();
    for (title, ms) in &sections {
        rows.push(TextRow::section(*title));
        for s in &settings {
            for (col, label) in ms {
                let short = label.rsplit(' ').next().unwrap_or(label);
                let find = |m: &str| {
                    (0..t.height())
                        .find(|&i| setting[i] == *s && method[i] == m && measure[i] == *col)
                        .map(|i| (mean[i], sd[i], paper[i]))
                };
                rows.push(data_row(format!("{s} · {short}"), &methods, false, find));
            }
        }
    }
    rows.push(TextRow::section("Computational cost: time on one core"));
    let rt = results.table("runtime")?;
    let (rs, rm) = (str_column(&rt, "setting")?, str_column(&rt, "method")?);
    let (sec, sec_sd, psec) = (
        f64_column(&rt, "seconds")?,
        f64_column(&rt, "seconds_sd")?,
        f64_column(&rt, "paper_seconds")?,
    );
    for s in &settings {
        let find = |m: &str| {
            (0..rt.height())
                .find(|&i| rs[i] == *s && rm[i] == m)
                .map(|i| (sec[i], sec_sd[i], psec[i]))
        };
        rows.push(data_row(format!("{s} · RT"), &methods, true, find));
    }
    let mode: String = results.fact("weight_mode").unwrap_or_else(|_| "?".into());
    // The SMC weights only where an SMC method is in the table (the greedy ones have none).
    let smc = methods.iter().any(|m| {
        Method::ALL
            .iter()
            .any(|v| v.name() == *m && v.variant().is_some())
    });
    let weights = if smc {
        format!(" (SMC weights: {mode})")
    } else {
        String::new()
    };
    let table: u8 = results.fact("paper_table").unwrap_or(0);
    let title = match table {
        1 => "Henao & Lucas Table 1: structure estimation (Φ known)".to_string(),
        2 => "Henao & Lucas Table 2: covariance estimation (ℓ learned)".to_string(),
        3 => "Henao & Lucas Table 3: greedy algorithms (ℓ learned)".to_string(),
        _ => "Coalescent methods on synthetic data, as in Henao & Lucas's Tables 1–3".to_string(),
    };
    let chart = TextTable {
        title,
        columns,
        rows,
        caption: if table == 0 {
            format!(
                "Mean ± sd over replicates{weights}. Errors of log merge times and \
                 log tree distances against the true coalescent; lowest per row tinted. \
                 Runtimes: one core of this machine."
            )
        } else {
            format!(
                "Ours: mean ± sd over replicates{weights}; the paper's mean in parentheses. \
                 Errors of log merge times and log tree distances against the true coalescent; \
                 lowest of ours per row tinted. Runtimes: one core of this machine (paper: Matlab/C, 2.8 GHz)."
            )
        },
    };
    let height = 140 + 46 * (chart.rows.len() as u32 + 1);
    // As wide as the table needs at full text size: its text stays legible when scaled.
    let width = chart.fitted_width().max(1000);
    save_chart(&out.join("table"), width, height.max(600), &chart)?;
    Ok(())
}

/// The caption and alternative text of the figure `<stem>.png` (the report shows them).
pub fn caption(stem: &str) -> Option<Caption> {
    match stem {
        "table" => Some(Caption::new(
            "Henao & Lucas's tables on synthetic data: errors of the log merge times and log tree distances of each coalescent method against the true coalescent (mean ± sd over replicates; the paper's mean in parentheses where the config is the paper's), learned inverse length scales ℓ where learned, and the time on one core; the lowest per row tinted.",
            "A table of methods in columns and error measures in rows, mean ± sd per cell.",
        )),
        _ => None,
    }
}
