//! Wall time and memory of the exact trellis against the number of leaves N: one generated jet
//! per N, log Z + MAP + finite-tree count (+ entropy) together, against the `3^N` law and the
//! `(2N-3)!!` trees that enumeration would visit.

use super::chart::{save_chart, LineChart, LineSeries};
use super::config::Config;
use super::table::Table;
use super::{Manifest, Staging};
use crate::data::ginkgo::generate_dataset;
use crate::exact::FullTrellis;
use crate::tree::n_binary_trees;
use anyhow::{Context, Result};
use std::time::Instant;

/// Split evaluations of a full trellis over `n` leaves: `(3^N + 1)/2 - 2^N`.
pub fn n_splits(n: usize) -> f64 {
    (3f64.powi(n as i32) + 1.0) / 2.0 - 2f64.powi(n as i32)
}

/// One measured size.
struct Row {
    n: usize,
    seconds: f64,
    peak: Option<u64>,
    log_z: f64,
    map: f64,
    n_finite: u128,
    entropy: f64,
}

/// Resets the kernel's record of this process's peak resident memory (Linux; best effort).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident memory of this process in bytes since the last reset (Linux), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Runs the scaling experiment of `cfg` into `staging`.
pub fn run(cfg: &Config, staging: &Staging, manifest: &mut Manifest) -> Result<()> {
    let sc = cfg.scaling.as_ref().expect("checked by Config");
    let params = cfg.generator_params();
    let max_tries = cfg.data().max_tries.unwrap_or(1_000_000);
    let sizes: Vec<usize> = (sc.n_min..=sc.n_max).step_by(sc.step).collect();
    let mut rows: Vec<Row> = Vec::new();
    let pb = super::progress_bar(sizes.len() as u64, "sizes");
    for &n in &sizes {
        let ds = generate_dataset(
            &params,
            1,
            n,
            n,
            cfg.experiment.seed.wrapping_add(n as u64),
            max_tries,
            "scaling",
        )
        .with_context(|| format!("generating a jet with {n} leaves"))?;
        let m = ds.jets[0].model();
        let mut best = f64::INFINITY;
        let mut last: Option<FullTrellis> = None;
        let mut peak = None;
        for _ in 0..sc.repeats {
            drop(last.take()); // free the previous tables before the next run
            reset_peak_rss();
            let t0 = Instant::now();
            let t = FullTrellis::build_with_limit(&m, cfg.algorithms.max_exact_leaves)?;
            best = best.min(t0.elapsed().as_secs_f64());
            peak = peak_rss_bytes();
            last = Some(t);
        }
        let t = last.expect("repeats >= 1");
        rows.push(Row {
            n,
            seconds: best,
            peak,
            log_z: t.log_partition(),
            map: t.map_log_likelihood(),
            n_finite: t.n_trees_finite(),
            entropy: t.entropy(),
        });
        pb.inc(1);
    }
    pb.finish_and_clear();

    let col = |f: &dyn Fn(&Row) -> f64| rows.iter().map(|r| Some(f(r))).collect::<Vec<_>>();
    Table::new()
        .u64(
            "n_leaves",
            &rows.iter().map(|r| Some(r.n as u64)).collect::<Vec<_>>(),
        )
        .f64("seconds", &col(&|r| r.seconds))
        .f64("split_evaluations", &col(&|r| n_splits(r.n)))
        .f64("splits_per_second", &col(&|r| n_splits(r.n) / r.seconds))
        .u64(
            "peak_rss_bytes",
            &rows.iter().map(|r| r.peak).collect::<Vec<_>>(),
        )
        .f64("log_z", &col(&|r| r.log_z))
        .f64("map_log_likelihood", &col(&|r| r.map))
        .f64("n_trees_finite", &col(&|r| r.n_finite as f64))
        .f64("n_trees_total", &col(&|r| n_binary_trees(r.n) as f64))
        .f64("entropy_nats", &col(&|r| r.entropy))
        .write_parquet(&staging.path("scaling.parquet"))?;

    // Chart: measured time, the 3^N law through the largest measured point, and what
    // enumerating every tree would cost at the trellis's price per potential evaluation.
    let (n_last, t_last) = rows.last().map(|r| (r.n, r.seconds)).unwrap_or((1, 1.0));
    let per_split = t_last / n_splits(n_last);
    let xs: Vec<usize> = (sc.n_min..=sc.n_max).collect();
    let chart = LineChart {
        series: vec![
            LineSeries {
                name: format!("full trellis, measured ({} threads)", manifest.threads()),
                points: rows.iter().map(|r| (r.n as f64, r.seconds)).collect(),
                dashed: false,
                markers: true,
            },
            LineSeries {
                name: "~ 3ᴺ (through the largest N)".into(),
                points: xs
                    .iter()
                    .map(|&n| (n as f64, t_last * 3f64.powi(n as i32 - n_last as i32)))
                    .collect(),
                dashed: true,
                markers: false,
            },
            LineSeries {
                name: "enumerating (2N−3)!! trees at the same cost per split".into(),
                points: xs
                    .iter()
                    .map(|&n| {
                        (
                            n as f64,
                            n_binary_trees(n) as f64 * (n - 1) as f64 * per_split,
                        )
                    })
                    .collect(),
                dashed: true,
                markers: false,
            },
        ],
        title: "Exact trellis: wall time against the number of leaves".into(),
        x_label: "number of leaves N".into(),
        y_label: "wall time (s), log scale".into(),
        log_y: true,
        integer_x: true,
    };
    save_chart(&staging.path("scaling"), 1000, 750, &chart)?;
    manifest.set("sizes", &sizes);
    Ok(())
}
