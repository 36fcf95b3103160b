//! The astar charts, drawn from `astar.parquet`, `times.parquet` and the config alone.

use super::AstarConfig;
use crate::experiment::chart::{save_chart, LineChart, LineOptions, LineSeries};
use crate::experiment::kind::{Caption, Results};
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// Issue 14's time budget per jet, in seconds.
const ISSUE_SECONDS: f64 = 600.0;

/// Gaps smaller than this times |exact MAP| are rounding, drawn as 0 (and the chart says so).
pub const GAP_ROUNDING: f64 = 1e-12;

/// A time budget is drawn as a line only if it is at most this many times the slowest
/// median shown; a higher one would squash the data into the bottom of the log axis, so the
/// title states it instead.
const BUDGET_DRAWN_WITHIN: f64 = 20.0;

/// `gap` with |gap| < [`GAP_ROUNDING`]·|scale| replaced by 0 (values without a finite scale
/// are kept).
pub fn round_gap(gap: f64, scale: Option<f64>) -> f64 {
    match scale {
        Some(s) if s.is_finite() && gap.abs() < GAP_ROUNDING * s.abs() => 0.0,
        _ => gap,
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        k if k % 2 == 1 => v[k / 2],
        k => 0.5 * (v[k / 2 - 1] + v[k / 2]),
    }
}

/// Values grouped by N (rows with a missing N or value are left out).
fn by_n(n: &[Option<u64>], v: &[Option<f64>]) -> BTreeMap<u64, Vec<f64>> {
    let mut out: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for (n, v) in n.iter().zip(v) {
        if let (Some(n), Some(v)) = (n, v) {
            out.entry(*n).or_default().push(*v);
        }
    }
    out
}

fn series(name: &str, points: Vec<(f64, f64)>, dashed: bool, markers: bool) -> LineSeries {
    LineSeries {
        name: name.into(),
        points,
        dashed,
        markers,
    }
}

/// Draws `astar_certified`, `astar_time` and `astar_gap` (PNG and SVG) into `out`.
pub fn draw(results: &Results, out: &Path) -> Result<()> {
    let cfg: AstarConfig = results.config()?;
    let t = results.table("astar")?;
    let n = u64_column(&t, "n_leaves")?;
    let cert: Vec<Option<f64>> = u64_column(&t, "certified")?
        .into_iter()
        .map(|c| c.map(|c| c as f64))
        .collect();
    let gap = f64_column(&t, "gap")?;
    let share = |v: &[Option<f64>]| -> Vec<(f64, f64)> {
        by_n(&n, v)
            .into_iter()
            .map(|(n, c)| (n as f64, c.iter().sum::<f64>() / c.len() as f64))
            .collect()
    };
    let certified = share(&cert);
    // 1 where the exact MAP is known (A* certified it, or a trellis ran), else 0.
    let exact: Vec<Option<f64>> = f64_column(&t, "exact_map")?
        .into_iter()
        .map(|v| Some(v.is_some_and(f64::is_finite) as u8 as f64))
        .collect();
    let exact = share(&exact);
    let budget = format!(
        "budget {} s, {} GiB per jet",
        cfg.astar.max_seconds, cfg.astar.max_gib
    );
    // Labelled x ticks only at the N that have jets.
    let ticks = || LineOptions {
        x_ticks: Some(by_n(&n, &cert).keys().map(|&n| n as f64).collect()),
    };
    save_chart(
        &out.join("astar_certified"),
        1000,
        700,
        &LineChart {
            // An unnamed, invisible series (two single points) pins the y axis to 0..1.
            series: vec![
                series("A* (H_G bound)", certified.clone(), false, true),
                series(
                    &format!(
                        "A* or MAP-only trellis (N ≤ {})",
                        cfg.astar.map_trellis_max_leaves
                    ),
                    exact,
                    true,
                    true,
                ),
                series(
                    "",
                    certified
                        .first()
                        .map(|&(x, _)| vec![(x, 0.0), (f64::NAN, f64::NAN), (x, 1.0)])
                        .unwrap_or_default(),
                    false,
                    false,
                ),
            ],
            title: format!("Exact MAP on Ginkgo jets: share certified (A*: {budget})"),
            x_label: "number of leaves N".into(),
            y_label: "share of jets with a certified MAP".into(),
            log_y: false,
            integer_x: true,
        }
        .with(ticks()),
    )?;

    let tt = results.table("times")?;
    let (tn, method, secs) = (
        u64_column(&tt, "n_leaves")?,
        str_column(&tt, "method")?,
        f64_column(&tt, "seconds")?,
    );
    let mut time_series = Vec::new();
    for (m, label) in [
        ("astar", "A*, median"),
        ("full_trellis", "full trellis (MAP + log Z), median"),
        ("map_trellis", "MAP-only trellis, median"),
        ("beam", "beam search, median"),
    ] {
        let (mn, ms): (Vec<Option<u64>>, Vec<Option<f64>>) = tn
            .iter()
            .zip(&method)
            .zip(&secs)
            .filter(|((_, x), _)| x.as_str() == m)
            .map(|((n, _), s)| (*n, *s))
            .unzip();
        let pts: Vec<(f64, f64)> = by_n(&mn, &ms)
            .into_iter()
            .map(|(n, mut v)| (n as f64, median(&mut v)))
            .collect();
        time_series.push(series(label, pts, false, true));
    }
    let xs: Vec<f64> = by_n(&n, &cert).keys().map(|&n| n as f64).collect();
    // Budgets far above every median are stated in the title rather than drawn to scale.
    let slowest = time_series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let mut not_drawn = Vec::new();
    let mut budget_line = |name: &str, short: String, seconds: f64| {
        if seconds <= BUDGET_DRAWN_WITHIN * slowest {
            time_series.push(series(
                name,
                xs.iter().map(|&x| (x, seconds)).collect(),
                true,
                false,
            ));
        } else {
            not_drawn.push(short);
        }
    };
    budget_line(
        "A*'s time budget",
        format!("A*'s budget {} s", cfg.astar.max_seconds),
        cfg.astar.max_seconds,
    );
    if cfg.astar.max_seconds != ISSUE_SECONDS {
        budget_line(
            "the goal of 10 minutes per jet",
            "the 10-minute goal (600 s)".into(),
            ISSUE_SECONDS,
        );
    }
    let title = if not_drawn.is_empty() {
        "Exact MAP on Ginkgo jets: wall time per jet".to_owned()
    } else {
        format!(
            "Exact MAP on Ginkgo jets: wall time per jet ({} per jet: off the scale)",
            not_drawn.join(", ")
        )
    };
    save_chart(
        &out.join("astar_time"),
        1000,
        700,
        &LineChart {
            series: time_series,
            title,
            x_label: "number of leaves N".into(),
            y_label: "wall time (s), log scale".into(),
            log_y: true,
            integer_x: true,
        }
        .with(ticks()),
    )?;

    // Gaps below rounding (relative to the exact MAP where known, else to the found tree's
    // log-likelihood) are 0: nothing beats the exact MAP.
    let ll = f64_column(&t, "log_likelihood")?;
    let exact_map = f64_column(&t, "exact_map")?;
    let scale = |i: usize| exact_map[i].filter(|v| v.is_finite()).or(ll[i]);
    let gap: Vec<Option<f64>> = gap
        .iter()
        .enumerate()
        .map(|(i, g)| g.map(|g| round_gap(g, scale(i))))
        .collect();
    let gaps = by_n(&n, &gap);
    let pts = |f: &dyn Fn(&mut Vec<f64>) -> f64| -> Vec<(f64, f64)> {
        gaps.iter()
            .map(|(&n, v)| (n as f64, f(&mut v.clone())))
            .collect()
    };
    // Where the exact MAP is known, how much of the gap is the upper bound's looseness.
    let ub = f64_column(&t, "upper_bound")?;
    let slack: Vec<Option<f64>> = ub
        .iter()
        .zip(&exact_map)
        .map(|(u, e)| {
            Some(u.zip(*e).map_or(f64::NAN, |(u, e)| round_gap(u - e, Some(e))))
                .filter(|v| v.is_finite())
        })
        .collect();
    let all_zero = gap.iter().chain(&slack).flatten().all(|&v| v == 0.0);
    let slack: Vec<(f64, f64)> = by_n(&n, &slack)
        .into_iter()
        .map(|(n, mut v)| (n as f64, median(&mut v)))
        .collect();
    save_chart(
        &out.join("astar_gap"),
        1000,
        700,
        &LineChart {
            series: vec![
                series("UB − LB (A*'s tree), median", pts(&|v| median(v)), false, true),
                series(
                    "UB − LB, largest",
                    pts(&|v| v.iter().copied().fold(f64::NAN, f64::max)),
                    true,
                    true,
                ),
                series(
                    "UB − exact MAP (A* or trellis), median",
                    slack,
                    false,
                    true,
                ),
            ],
            title: if all_zero {
                format!("A* on Ginkgo jets: certified bound gap ({budget}): 0 on every jet")
            } else {
                format!("A* on Ginkgo jets: certified bound gap ({budget})")
            },
            x_label: "number of leaves N".into(),
            y_label: "bound gap (nats; below 1e−12·|MAP| shown as 0)".into(),
            log_y: false,
            integer_x: true,
        }
        .with(ticks()),
    )?;
    Ok(())
}

/// The caption and alternative text of the figure `<stem>.png` (the report shows them).
pub fn caption(stem: &str) -> Option<Caption> {
    match stem {
        "astar_certified" => Some(Caption::new(
            "Exact MAP with certificates on Ginkgo jets: the share of jets whose MAP A* certified within its budget, per number of leaves.",
            "The share of certified jets against the number of leaves.",
        )),
        "astar_time" => Some(Caption::new(
            "Wall time per jet against the number of leaves (log scale, after an untimed warm-up on the smallest jet): A*, the MAP-only and the full trellis, beam search, greedy and the sparse trellis.",
            "Lines of wall time against the number of leaves on a log axis, one per method, told apart by colour, marker shape and dash pattern.",
        )),
        "astar_gap" => Some(Caption::new(
            "How far the MAP can be above A*'s tree where it stopped uncertified (upper bound minus lower bound), and each baseline's distance below the best known MAP, per number of leaves.",
            "Gaps in log-likelihood against the number of leaves, one line per method.",
        )),
        _ => None,
    }
}
