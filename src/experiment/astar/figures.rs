//! The astar charts, drawn from `astar.parquet`, `times.parquet` and the config alone.

use super::AstarConfig;
use crate::experiment::chart::{save_chart, LineChart, LineSeries};
use crate::experiment::kind::Results;
use crate::experiment::table::{f64_column, str_column, u64_column};
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// Issue 14's time budget per jet, in seconds.
const ISSUE_SECONDS: f64 = 600.0;

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
                        "A* or MAP-only trellis (N <= {})",
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
        },
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
    time_series.push(series(
        "A*'s time budget",
        xs.iter().map(|&x| (x, cfg.astar.max_seconds)).collect(),
        true,
        false,
    ));
    if cfg.astar.max_seconds != ISSUE_SECONDS {
        time_series.push(series(
            "the issue's 10 minutes per jet",
            xs.iter().map(|&x| (x, ISSUE_SECONDS)).collect(),
            true,
            false,
        ));
    }
    save_chart(
        &out.join("astar_time"),
        1000,
        700,
        &LineChart {
            series: time_series,
            title: "Exact MAP on Ginkgo jets: wall time per jet".into(),
            x_label: "number of leaves N".into(),
            y_label: "wall time (s), log scale".into(),
            log_y: true,
            integer_x: true,
        },
    )?;

    let gaps = by_n(&n, &gap);
    let pts = |f: &dyn Fn(&mut Vec<f64>) -> f64| -> Vec<(f64, f64)> {
        gaps.iter()
            .map(|(&n, v)| (n as f64, f(&mut v.clone())))
            .collect()
    };
    // Where the exact MAP is known, how much of the gap is the upper bound's looseness.
    let ub = f64_column(&t, "upper_bound")?;
    let exact_map = f64_column(&t, "exact_map")?;
    let slack: Vec<Option<f64>> = ub
        .iter()
        .zip(&exact_map)
        .map(|(u, e)| Some(u.zip(*e).map_or(f64::NAN, |(u, e)| u - e)).filter(|v| v.is_finite()))
        .collect();
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
                series("median over jets", pts(&|v| median(v)), false, true),
                series(
                    "largest",
                    pts(&|v| v.iter().copied().fold(f64::NAN, f64::max)),
                    true,
                    true,
                ),
                series(
                    "upper bound − exact MAP (trellis), median",
                    slack,
                    false,
                    true,
                ),
            ],
            title: format!("A* on Ginkgo jets: certified bound gap ({budget})"),
            x_label: "number of leaves N".into(),
            y_label: "upper bound − log-likelihood (nats)".into(),
            log_y: false,
            integer_x: true,
        },
    )?;
    Ok(())
}
