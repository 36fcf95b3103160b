//! The figures, drawn from the tables and the config alone: `truth_recovery`, `truth_rank`,
//! `lambda_scan`, `gap_to_map` and the recovery by cluster size ([`super::figures_size`])
//! (PNG and SVG).

use super::measures::sets_of;
use super::pmethod::PMethod;
use super::summary::mean_se;
use super::PythiaJetsConfig;
use crate::experiment::chart::{save_chart, BarChart, BarSeries, LineChart, LineOptions, LineSeries};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// The λ scan draws points down to this many log units per jet below the largest scanned value
/// (the objectives fall steeply at large λ, which would flatten the rest); the title counts the
/// points left out.
const SCAN_FLOOR: f64 = 20.0;

/// The methods the line charts draw against N, in chart order: the model's three, the kt
/// family as physicists run it, and the two orderings with the veto (the strongest physics
/// baselines on these jets); `by_n.parquet` has every method.
pub const LINE_METHODS: [PMethod; 8] = [
    PMethod::Trellis,
    PMethod::Beam,
    PMethod::Greedy,
    PMethod::Kt,
    PMethod::CambridgeAachen,
    PMethod::AntiKt,
    PMethod::MassOrderingVeto,
    PMethod::PtOrderingVeto,
];

/// The methods the gap figure draws: the two searches of the likelihood and the physics
/// baselines given the model's t_cut (the others' trees are mostly forbidden: no finite gap).
pub const GAP_METHODS: [PMethod; 5] = [
    PMethod::Beam,
    PMethod::Greedy,
    PMethod::CambridgeAachenVeto,
    PMethod::MassOrderingVeto,
    PMethod::PtOrderingVeto,
];

/// The methods of [`LINE_METHODS`] but `skip`, in chart order.
fn methods_but(skip: PMethod) -> impl Iterator<Item = PMethod> {
    LINE_METHODS.into_iter().filter(move |m| *m != skip)
}

/// Saves a line chart against N with error bars, x ticks at the sizes `ns`.
fn save_by_n(
    out: &Path,
    stem: &str,
    chart: LineChart,
    errors: Vec<Vec<f64>>,
    ns: &[f64],
) -> Result<()> {
    let options = LineOptions {
        x_ticks: Some(ns.to_vec()),
    };
    save_chart(
        &out.join(stem),
        1100,
        750,
        &chart.with(options).error_bars(errors),
    )?;
    Ok(())
}

fn series(name: String, points: Vec<(f64, f64)>, dashed: bool, markers: bool) -> LineSeries {
    LineSeries {
        name,
        points,
        dashed,
        markers,
    }
}

/// Mean ± standard error of `value` per N over the rows `keep` selects: the points and the
/// bars' half-lengths.
fn by_n(
    n: &[Option<u64>],
    value: &[Option<f64>],
    keep: impl Fn(usize) -> bool,
) -> (Vec<(f64, f64)>, Vec<f64>) {
    let mut groups: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for i in (0..n.len()).filter(|&i| keep(i)) {
        if let (Some(n), Some(v)) = (n[i], value[i]) {
            groups.entry(n).or_default().push(v);
        }
    }
    groups
        .into_iter()
        .filter_map(|(n, v)| {
            let (m, se, k) = mean_se(v);
            (k > 0).then_some(((n as f64, m), se))
        })
        .unzip()
}

/// Draws every figure into `out`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let cfg: PythiaJetsConfig = results.config()?;
    let t = results.table("jets")?;
    let (set, method) = (str_column(&t, "set")?, str_column(&t, "method")?);
    let n = u64_column(&t, "n_leaves")?;
    let recovered = f64_column(&t, "truth_recovered")?;
    let gap = f64_column(&t, "gap_to_map")?;
    let sets = sets_of(&set);
    let with_truth: Vec<String> = sets
        .iter()
        .filter(|s| (0..t.height()).any(|i| &set[i] == *s && recovered[i].is_some()))
        .cloned()
        .collect();
    let ns: Vec<f64> = {
        let mut v: Vec<u64> = n.iter().flatten().copied().collect();
        v.sort_unstable();
        v.dedup();
        v.into_iter().map(|x| x as f64).collect()
    };
    let label = |s: &str, m: PMethod, many: bool| {
        if many {
            format!("{} ({s})", m.display())
        } else {
            m.display().to_string()
        }
    };

    // 1. Truth recovery against N.
    if !with_truth.is_empty() {
        let (mut lines, mut errors) = (Vec::new(), Vec::new());
        // Each method's points dodged sideways by a few hundredths of a leaf, so that methods
        // with equal means (the MAP and beam search often are) do not hide each other.
        let k = methods_but(PMethod::Truth).count() as f64;
        for s in &with_truth {
            for (j, m) in methods_but(PMethod::Truth).enumerate() {
                let (pts, se) = by_n(&n, &recovered, |i| &set[i] == s && method[i] == m.name());
                let dx = 0.3 * (j as f64 - (k - 1.0) / 2.0) / k;
                let pts = pts.into_iter().map(|(x, y)| (x + dx, y)).collect();
                lines.push(series(label(s, m, with_truth.len() > 1), pts, false, true));
                errors.push(se);
            }
        }
        // How many jets each N's mean is over (the first set with a truth), for the axis label.
        let jets_per_n: Vec<String> = {
            let mut per: BTreeMap<u64, usize> = BTreeMap::new();
            for i in 0..t.height() {
                if set[i] == with_truth[0] && method[i] == PMethod::Truth.name() {
                    if let Some(k) = n[i] {
                        *per.entry(k).or_default() += 1;
                    }
                }
            }
            per.into_values().map(|c| c.to_string()).collect()
        };
        // A uniformly random tree's expected recovery (exact per jet, averaged per N).
        let e = results.table("exact")?;
        let (eset, en) = (str_column(&e, "set")?, u64_column(&e, "n_leaves")?);
        let random = f64_column(&e, "random_tree_recovered")?;
        for s in &with_truth {
            let (pts, _) = by_n(&en, &random, |i| &eset[i] == s);
            let name = if with_truth.len() > 1 {
                format!("uniformly random tree, expected ({s})")
            } else {
                "uniformly random tree, expected".to_string()
            };
            lines.push(series(name, pts, true, false));
            errors.push(Vec::new());
        }
        let chart = LineChart {
            series: lines,
            title: format!(
                "Pythia 8 jets, Ginkgo likelihood: share of the shower history's clusters recovered ({})",
                with_truth.join(", ")
            ),
            x_label: format!("number of leaves N (jets per N, from the left: {})", jets_per_n.join(", ")),
            y_label: "truth clusters recovered (mean ± s.e.)".into(),
            log_y: false,
            integer_x: true,
        };
        save_by_n(out, "truth_recovery", chart, errors, &ns)?;
    }

    // 2. The truth tree's posterior rank (jets of the full trellis).
    let e = results.table("exact")?;
    let has = u64_column(&e, "has_truth")?;
    let full = u64_column(&e, "full_trellis")?;
    let (forbidden, capped) = (
        u64_column(&e, "truth_forbidden")?,
        u64_column(&e, "truth_rank_capped")?,
    );
    let log10 = f64_column(&e, "truth_log10_rank")?;
    if !with_truth.is_empty() {
        let rows: Vec<usize> = (0..e.height())
            .filter(|&i| has[i] == Some(1) && full[i] == Some(1))
            .collect();
        let decade = |i: usize| log10[i].map(|l| (l + 1e-9).floor() as i64);
        let top = rows.iter().filter_map(|&i| decade(i)).max().unwrap_or(0);
        let categories: Vec<i64> = (0..=top).collect();
        let count = |exact: bool| -> Vec<f64> {
            categories
                .iter()
                .map(|&c| {
                    rows.iter()
                        .filter(|&&i| decade(i) == Some(c) && (capped[i] == Some(0)) == exact)
                        .count() as f64
                })
                .collect()
        };
        let n_forbidden = rows.iter().filter(|&&i| forbidden[i] == Some(1)).count();
        // The median rank (a capped one at its lower bound), as a whole number of trees.
        let median = super::measures::median(rows.iter().filter_map(|&i| log10[i]).collect());
        let median = if median.is_finite() {
            format!("{:.0}", 10f64.powf(median))
        } else {
            "–".into()
        };
        let n_capped = rows.iter().filter(|&&i| capped[i] == Some(1)).count();
        let cap = cfg.pythia_jets.rank_cap;
        let mut bars = vec![BarSeries {
            name: "exact rank".into(),
            values: count(true),
        }];
        if n_capped > 0 {
            bars.push(BarSeries {
                name: format!("at least (over {cap} trees above; counted at the cap)"),
                values: count(false),
            });
        }
        bars.push(BarSeries {
            name: format!("not ranked: {n_forbidden} forbidden (likelihood 0)"),
            values: vec![f64::NAN; categories.len()],
        });
        let chart = BarChart {
            categories,
            series: bars,
            title: format!(
                "Posterior rank of the truth tree among all trees: median {median} ({} ranked; {n_forbidden} of {} forbidden)",
                rows.len() - n_forbidden,
                rows.len()
            ),
            x_label: "log10 of the rank, rounded down (0: ranks 1–9, 1: 10–99, …; rank 1 = the MAP)".into(),
            y_label: "truth trees".into(),
        };
        save_chart(&out.join("truth_rank"), 1000, 650, &chart)?;
    }

    // 3. The objectives against λ, both fits marked: per jet, relative to the largest scanned.
    let scan = results.table("lambda_scan")?;
    let (sset, slambda) = (str_column(&scan, "set")?, f64_column(&scan, "lambda")?);
    let (lz, lt) = (
        f64_column(&scan, "sum_log_z")?,
        f64_column(&scan, "sum_log_p_truth")?,
    );
    let (nz, nt) = (
        u64_column(&scan, "jets_log_z")?,
        u64_column(&scan, "jets_truth")?,
    );
    let fit = results.table("lambda_fit")?;
    let (fset, fmethod) = (str_column(&fit, "set")?, str_column(&fit, "method")?);
    let (flambda, fobj) = (f64_column(&fit, "lambda")?, f64_column(&fit, "objective")?);
    let mut curves = Vec::new();
    let mut marks = Vec::new();
    let mut cut = 0;
    for s in &sets {
        for (col, jets, what, method) in [
            (&lz, &nz, "Σ log Z", "evidence"),
            (&lt, &nt, "Σ log p(truth)", "truth"),
        ] {
            let pts: Vec<(f64, f64, f64)> = (0..scan.height())
                .filter(|&i| &sset[i] == s)
                .filter_map(|i| Some((slambda[i]?, col[i]?, jets[i]? as f64)))
                .filter(|p| p.2 > 0.0)
                .collect();
            if pts.is_empty() {
                continue;
            }
            let best = pts.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
            let mut y = |v: f64, jets: f64| {
                let y = (v - best) / jets;
                if y < -SCAN_FLOOR {
                    cut += 1;
                    f64::NAN
                } else {
                    y
                }
            };
            let line: Vec<(f64, f64)> = pts.iter().map(|&(l, v, k)| (l.log10(), y(v, k))).collect();
            curves.push(series(format!("{what}, {s}"), line, method == "truth", false));
            let i = (0..fit.height()).find(|&i| &fset[i] == s && fmethod[i] == method);
            if let Some((l, v)) = i.and_then(|i| Some((flambda[i]?, fobj[i]?))) {
                marks.push(series(
                    format!("λ̂ by {method}, {s}: {l:.3}"),
                    vec![(l.log10(), y(v, pts[0].2))],
                    false,
                    true,
                ));
            }
        }
    }
    curves.extend(marks);
    let cut_note = if cut > 0 {
        format!(" ({cut} points below −{SCAN_FLOOR} not drawn)")
    } else {
        String::new()
    };
    let chart = LineChart {
        series: curves,
        title: format!("Ginkgo rate λ: both objectives per jet, both fits marked{cut_note}"),
        x_label: "log10 λ".into(),
        y_label: "(objective − its largest scanned value) / jets".into(),
        log_y: false,
        integer_x: false,
    };
    save_chart(&out.join("lambda_scan"), 1100, 750, &chart)?;

    // 4. The gap to the MAP against N.
    let (mut lines, mut errors) = (Vec::new(), Vec::new());
    for (k, s) in sets.iter().enumerate() {
        for m in GAP_METHODS {
            let (pts, se) = by_n(&n, &gap, |i| &set[i] == s && method[i] == m.name());
            if pts.is_empty() {
                continue;
            }
            lines.push(series(label(s, m, sets.len() > 1), pts, k > 0, true));
            errors.push(se);
        }
    }
    let chart = LineChart {
        series: lines,
        title: "Log-likelihood gap to the exact MAP (finite gaps; forbidden trees left out)".into(),
        x_label: "number of leaves N".into(),
        y_label: "MAP − method log-likelihood (mean ± s.e.)".into(),
        log_y: false,
        integer_x: true,
    };
    save_by_n(out, "gap_to_map", chart, errors, &ns)?;

    // 5. Recovery by cluster size.
    super::figures_size::draw(results, out, &cfg)
}

/// The caption and alternative text of figure `<stem>.png`.
pub fn caption(stem: &str) -> Option<Caption> {
    if let Some(c) = super::figures_size::caption(stem) {
        return Some(c);
    }
    match stem {
        "truth_recovery" => Some(Caption::new(
            "How much of the generator's shower history each method recovers: the mean share of the truth tree's non-trivial clusters (internal nodes but the root) that the method's tree also has, ± one standard error, per number of leaves; the exact MAP of the Ginkgo likelihood at the chosen λ against beam search, greedy, the kt family as physicists run it (e+e− form unless the config says otherwise) and the two orderings given the model's t_cut (invariant mass, and Pythia's p⊥ evolution variable z(1−z)m²); by_n.parquet has every method; the dashed line is what a tree drawn uniformly at random recovers in expectation (exact per jet).",
            "Lines with error bars of the mean share of truth clusters recovered against the number of leaves, one per method.",
        )),
        "truth_rank" => Some(Caption::new(
            "Where the truth tree ranks among all (2N − 3)!! trees of its jet by exact posterior probability (rank 1 is the MAP), in decades, over the jets of the full trellis; ranks whose count stopped at the cap are lower bounds, drawn in their own colour; truth trees with a cluster below t_cut have likelihood 0 and no rank, and their number is given in the title and the legend.",
            "Bars counting truth trees per decade of their posterior rank, with capped ranks and forbidden truth trees named.",
        )),
        "lambda_scan" => Some(Caption::new(
            "The two objectives of the fit of the Ginkgo rate λ over the scanned range, each minus its largest scanned value and divided by the number of jets in it: Σ log Z (the exact evidence over all trees) per set, solid or dotted, and Σ log p(truth tree) where the set has truth trees, dashed; each fitted λ̂ is marked at its objective. Both fall steeply at large λ: points more than 20 per jet below the maximum are left out of the drawing (lambda_scan.parquet has them) and the title counts them.",
            "Curves of the summed log evidence and summed truth log-likelihood against log10 lambda, each relative to its maximum, with markers at the fitted values.",
        )),
        "gap_to_map" => Some(Caption::new(
            "How far below the exact MAP each method's tree scores under the Ginkgo likelihood at the chosen λ: the mean of MAP − method over the jets where the method's tree is allowed (a tree with a cluster below t_cut is forbidden and left out; summary.parquet gives the share), ± one standard error, per number of leaves; beam search, greedy and the physics baselines given the model's t_cut (the others' trees are mostly forbidden; by_n.parquet has every method).",
            "Lines with error bars of the mean log-likelihood gap to the exact MAP against the number of leaves, one per method and set.",
        )),
        _ => None,
    }
}
