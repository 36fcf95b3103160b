//! The scaling run: one generated jet per N, the exact trellis and the MAP-only trellis timed
//! on each; `scaling.parquet`.

use super::ScalingConfig;
use crate::data::ginkgo::generate_dataset;
use crate::exact::{FullTrellis, MapTrellis};
use crate::experiment::kind::RunContext;
use crate::experiment::table::Table;
use crate::tree::n_binary_trees;
use anyhow::{Context, Result};
use std::time::Instant;

/// Generator tries per size when `jets.max_tries` is absent.
const DEFAULT_MAX_TRIES: usize = 1_000_000;

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
    /// The MAP-only trellis: seconds, peak resident memory, share of splits scored, and
    /// whether its MAP value has the full trellis's bits.
    map_seconds: f64,
    map_peak: Option<u64>,
    map_scored: f64,
    map_same_bits: bool,
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

/// Builds `repeats` times, freeing each result before the next build: the fastest wall time,
/// the peak resident memory of the last build, and its result.
fn best_of<T>(
    repeats: usize,
    mut build: impl FnMut() -> Result<T>,
) -> Result<(f64, Option<u64>, T)> {
    let (mut best, mut peak, mut last) = (f64::INFINITY, None, None);
    for _ in 0..repeats {
        drop(last.take()); // free the previous tables before the next run
        reset_peak_rss();
        let t0 = Instant::now();
        let t = build()?;
        best = best.min(t0.elapsed().as_secs_f64());
        peak = peak_rss_bytes();
        last = Some(t);
    }
    let last = last.context("scaling.repeats must be at least 1")?;
    Ok((best, peak, last))
}

/// Runs the scaling kind.
pub fn run(cfg: &ScalingConfig, ctx: &mut RunContext) -> Result<()> {
    let sc = &cfg.scaling;
    let params = cfg.jets.generator_params();
    let max_tries = cfg.jets.max_tries.unwrap_or(DEFAULT_MAX_TRIES);
    let sizes = sc.sizes();
    let limit = cfg.methods.max_exact_leaves;
    let mut rows: Vec<Row> = Vec::new();
    let mut warmed_up = false;
    let pb = crate::experiment::progress_bar(sizes.len() as u64, "sizes");
    for &n in &sizes {
        let ds = generate_dataset(
            &params,
            1,
            n,
            n,
            ctx.seed().wrapping_add(n as u64),
            max_tries,
            "scaling",
        )
        .with_context(|| format!("generating a jet with {n} leaves"))?;
        let m = ds.jets[0].model()?;
        // Warm-up: both trellises are built once, untimed, on the first (smallest) jet, so the
        // first timing is not that of a cold process (thread pool start, first allocations,
        // caches), which made N = 6 look 40 times slower than N = 7 with `repeats = 1`.
        if !warmed_up {
            drop(FullTrellis::build_with_limit(&m, limit)?);
            drop(MapTrellis::build_with_limit(&m, limit)?);
            warmed_up = true;
        }
        // The build alone is timed, so the trellis is built directly rather than through
        // `Method::Trellis` (which also extracts and prints the MAP tree).
        let (best, peak, t) =
            best_of(sc.repeats, || Ok(FullTrellis::build_with_limit(&m, limit)?))?;
        let (log_z, map, n_finite, entropy) = (
            t.log_partition(),
            t.map_log_likelihood(),
            t.n_trees_finite(),
            t.entropy(),
        );
        drop(t);
        // The same jet's MAP alone, by the MAP-only trellis, timed the same way.
        let (map_best, map_peak, mt) =
            best_of(sc.repeats, || Ok(MapTrellis::build_with_limit(&m, limit)?))?;
        rows.push(Row {
            n,
            seconds: best,
            peak,
            log_z,
            map,
            n_finite,
            entropy,
            map_seconds: map_best,
            map_peak,
            map_scored: mt.splits_scored() as f64 / mt.splits_visited().max(1) as f64,
            map_same_bits: mt.map_log_likelihood().to_bits() == map.to_bits(),
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
        .f64(
            "n_trees_total",
            &col(&|r| n_binary_trees(r.n).map_or(f64::INFINITY, |t| t as f64)),
        )
        .f64("entropy_nats", &col(&|r| r.entropy))
        .f64("map_trellis_seconds", &col(&|r| r.map_seconds))
        .u64(
            "map_trellis_peak_rss_bytes",
            &rows.iter().map(|r| r.map_peak).collect::<Vec<_>>(),
        )
        .f64("map_trellis_scored_fraction", &col(&|r| r.map_scored))
        .u64(
            "map_trellis_same_bits",
            &rows
                .iter()
                .map(|r| Some(r.map_same_bits as u64))
                .collect::<Vec<_>>(),
        )
        .write_parquet(&ctx.path("scaling.parquet"))?;
    ctx.manifest.set("sizes", &sizes);
    Ok(())
}
