//! `kind = "astar"`: exact MAP by A* ([`crate::exact::astar`]) on generated Ginkgo jets of
//! growing size, with certificates. Per jet: certified or not, the A* tree's log-likelihood and
//! the upper bound on the MAP (their gap), the work (walks, clusters expanded, splits scored,
//! trellis nodes, peak bytes, seconds), beam search, greedy and the beam-seeded sparse trellis
//! with their gap to the MAP (an interval when the MAP is not certified), and the exact MAP of
//! the MAP-only trellis ([`crate::exact::MapTrellis`], N up to `map_trellis_max_leaves`) and the
//! full trellis (N up to `full_trellis_max_leaves`) with their times.
//!
//! Config: `[jets]` (the generator's settings, `source = "generate"`, no `n_jets` and no leaf
//! range: the sizes come from `[astar]`) and `[astar]` ([`AstarSection`]). Outputs:
//! `astar.parquet` (one row per jet), `times.parquet` (wall seconds per jet and method), and
//! the charts `astar_certified`, `astar_time` and `astar_gap` (PNG and SVG), drawn from the
//! tables. Runs stopped by the time budget depend on the machine; the checks read the
//! timing-free numbers and the soundness of every certificate.

mod figures;
mod run;
#[cfg(test)]
mod tests;

use crate::experiment::check::Measure;
use crate::experiment::jets::{DataSource, JetsSection};
use crate::experiment::kind::{Experiment, Results, RunContext};
use crate::experiment::table::{f64_column, u64_column};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The astar kind.
pub struct Astar;

/// `kind = "astar"`: `[jets]` and `[astar]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AstarConfig {
    /// The generator's settings (`source = "generate"`; the jet type and physics keys apply,
    /// `max_tries` is per size and defaults to 1,000,000).
    pub jets: JetsSection,
    /// Sizes and budgets.
    pub astar: AstarSection,
}

/// `[astar]`: which jets, and the per-jet budget of the search.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AstarSection {
    /// The numbers of leaves N (2 to 64 each).
    pub sizes: Vec<usize>,
    /// Generated jets per N (default 3).
    #[serde(default = "three")]
    pub jets_per_size: usize,
    /// A*'s wall-time budget per jet in seconds (default 600: 10 minutes).
    #[serde(default = "ten_minutes")]
    pub max_seconds: f64,
    /// A*'s memory budget per jet in GiB of its own structures (default 8).
    #[serde(default = "eight")]
    pub max_gib: f64,
    /// A deterministic cap on clusters expanded per jet (default none).
    #[serde(default)]
    pub max_expansions: Option<u64>,
    /// Splits each cluster keeps at its first expansion (default 64).
    #[serde(default = "sixty_four")]
    pub splits_kept: usize,
    /// The full trellis runs as a reference for N up to this (default 20, at most 24).
    #[serde(default = "twenty")]
    pub full_trellis_max_leaves: usize,
    /// The MAP-only trellis ([`crate::exact::MapTrellis`]) certifies the MAP for N up to this
    /// (default 22, at most 26).
    #[serde(default = "twenty_two")]
    pub map_trellis_max_leaves: usize,
}

fn three() -> usize {
    3
}
fn ten_minutes() -> f64 {
    600.0
}
fn eight() -> f64 {
    8.0
}
fn sixty_four() -> usize {
    64
}
fn twenty() -> usize {
    20
}
fn twenty_two() -> usize {
    22
}

impl Experiment for Astar {
    type Config = AstarConfig;

    fn name(&self) -> &'static str {
        "astar"
    }

    fn about(&self) -> &'static str {
        "exact MAP by A* with certificates on Ginkgo jets of growing size, against beam, greedy, sparse and full trellis"
    }

    fn resolve_paths(&self, cfg: &mut AstarConfig, base: &Path) {
        cfg.jets.resolve_paths(base);
    }

    fn validate(&self, cfg: &AstarConfig) -> Result<(), String> {
        if cfg.jets.source != DataSource::Generate {
            return Err(
                "kind = \"astar\" generates its jets: set jets.source = \"generate\"".into(),
            );
        }
        if cfg.jets.min_leaves.is_some() || cfg.jets.max_leaves.is_some() {
            return Err("jets.min_leaves and jets.max_leaves do not apply to kind = \"astar\" (the sizes are astar.sizes); remove them".into());
        }
        cfg.jets.validate(false)?;
        let s = &cfg.astar;
        if s.sizes.is_empty() || s.sizes.iter().any(|&n| !(2..=64).contains(&n)) {
            return Err("astar.sizes must list numbers of leaves between 2 and 64, e.g. [10, 12, 14]".into());
        }
        let mut sorted = s.sizes.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != s.sizes.len() {
            return Err("astar.sizes lists a size twice; list each N once".into());
        }
        if s.jets_per_size == 0 || s.jets_per_size > 1000 {
            return Err("astar.jets_per_size must be between 1 and 1000".into());
        }
        if !(s.max_seconds.is_finite() && s.max_seconds > 0.0) {
            return Err("astar.max_seconds must be a positive number of seconds, e.g. 600".into());
        }
        if !(s.max_gib.is_finite() && s.max_gib > 0.0 && s.max_gib <= 1024.0) {
            return Err("astar.max_gib must be a positive number of GiB up to 1024, e.g. 8".into());
        }
        if s.splits_kept == 0 {
            return Err("astar.splits_kept must be at least 1 (e.g. 64)".into());
        }
        if s.map_trellis_max_leaves > 26 {
            return Err("astar.map_trellis_max_leaves must be at most 26 (the MAP-only trellis at N = 26 takes hours and about 6 GiB)".into());
        }
        if s.full_trellis_max_leaves > 24 {
            return Err("astar.full_trellis_max_leaves must be at most 24 (the full trellis at N = 24 takes about an hour and 2 GiB)".into());
        }
        Ok(())
    }

    fn inputs(&self, cfg: &AstarConfig) -> Vec<PathBuf> {
        cfg.jets.inputs()
    }

    fn run(&self, cfg: &AstarConfig, ctx: &mut RunContext) -> Result<()> {
        run::run(cfg, ctx)
    }

    fn shardable(&self) -> bool {
        true
    }

    fn figures(&self, results: &Results, out: &Path) -> Result<()> {
        figures::draw(results, out)
    }

    fn caption(&self, stem: &str) -> Option<crate::experiment::kind::Caption> {
        figures::caption(stem)
    }

    fn measures(&self, results: &Results) -> Result<Vec<Measure>> {
        measures(results)
    }

    fn expected(&self) -> &'static str {
        include_str!("expected.toml")
    }

    fn properties(&self, results: &Results) -> Result<Vec<Measure>> {
        crate::experiment::properties::astar(results, &BASELINES)
    }
}

/// The relative tolerance of the comparisons in [`measures`].
fn tol(v: f64) -> f64 {
    1e-9 * v.abs().max(1.0)
}

/// The methods compared with A*'s bounds, as column prefixes.
pub const BASELINES: [&str; 3] = ["beam", "greedy", "sparse"];

/// The numbers `check` reads from `astar.parquet`:
/// - `astar.jets`, `astar.certified_fraction`, and per N `astar.n<N>.certified_fraction`,
///   `.median_gap` and `.max_gap` (upper bound − log-likelihood, 0 when certified);
/// - `astar.sound_fraction`: the share of jets with a trellis MAP (the full trellis's, else the
///   MAP-only trellis's) whose certificate holds (`LB <= MAP <= UB`, and `certified ⇒ LB = MAP`,
///   to 1e-9 relative);
/// - `astar.map_trellis.agrees_fraction`: the share of jets with both trellises whose MAP values
///   are equal bit for bit;
/// - `astar.exact_fraction` and per N `astar.n<N>.exact_fraction`: the share of jets with a
///   certified exact MAP, by A* or a trellis;
/// - `astar.<m>.below_map_fraction` for beam, greedy and sparse: the share of jets where the
///   method's log-likelihood is at most A*'s upper bound, `astar.<m>.mean_gap_min`, the mean
///   of `LB − <m>` (the gap to the MAP when certified), and `astar.<m>.mean_gap`, the mean
///   distance below the exact MAP over the jets where it is known;
/// - `astar.mean_log_likelihood` over all jets.
pub fn measures(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("astar")?;
    let n = u64_column(&t, "n_leaves")?;
    let cert = u64_column(&t, "certified")?;
    let ll = f64_column(&t, "log_likelihood")?;
    let ub = f64_column(&t, "upper_bound")?;
    let full = f64_column(&t, "full_map")?;
    let gap = f64_column(&t, "gap")?;
    let rows = n.len();
    let get = |v: &[Option<f64>], i: usize| v.get(i).copied().flatten().unwrap_or(f64::NAN);
    let mut out = vec![Measure::new(
        "astar.jets",
        "A*: jets searched",
        rows as f64,
    )];
    let frac = |k: usize, of: usize| if of == 0 { f64::NAN } else { k as f64 / of as f64 };
    let certified = |i: usize| cert.get(i).copied().flatten() == Some(1);
    out.push(Measure::new(
        "astar.certified_fraction",
        "A*: share of jets with a certified MAP",
        frac((0..rows).filter(|&i| certified(i)).count(), rows),
    ));
    let mut by_n: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, v) in n.iter().enumerate() {
        by_n.entry(v.unwrap_or(0)).or_default().push(i);
    }
    for (size, idx) in &by_n {
        let c = idx.iter().filter(|&&i| certified(i)).count();
        out.push(Measure::new(
            format!("astar.n{size}.certified_fraction"),
            format!("A*, N = {size}: share of jets certified"),
            frac(c, idx.len()),
        ));
        let mut gaps: Vec<f64> = idx.iter().map(|&i| get(&gap, i)).collect();
        gaps.sort_by(f64::total_cmp);
        let median = gaps.get(gaps.len() / 2).copied().unwrap_or(f64::NAN);
        out.push(Measure::new(
            format!("astar.n{size}.median_gap"),
            format!("A*, N = {size}: median of upper bound − log-likelihood"),
            median,
        ));
        out.push(Measure::new(
            format!("astar.n{size}.max_gap"),
            format!("A*, N = {size}: largest upper bound − log-likelihood"),
            gaps.last().copied().unwrap_or(f64::NAN),
        ));
    }
    let map_trellis = f64_column(&t, "map_trellis")?;
    let exact = f64_column(&t, "exact_map")?;
    // The trellises' MAP (the full one's, else the MAP-only one's) checks A*'s certificates.
    let reference = |i: usize| {
        let f = get(&full, i);
        if f.is_finite() {
            f
        } else {
            get(&map_trellis, i)
        }
    };
    let with_ref: Vec<usize> = (0..rows).filter(|&i| reference(i).is_finite()).collect();
    let sound = with_ref
        .iter()
        .filter(|&&i| {
            let (f, lb, u) = (reference(i), get(&ll, i), get(&ub, i));
            lb <= f + tol(f) && f <= u + tol(f) && (!certified(i) || (lb - f).abs() <= tol(f))
        })
        .count();
    out.push(Measure::new(
        "astar.sound_fraction",
        "A*: share of jets with a trellis MAP inside the certified interval",
        frac(sound, with_ref.len()),
    ));
    let both: Vec<usize> = (0..rows)
        .filter(|&i| get(&full, i).is_finite() && get(&map_trellis, i).is_finite())
        .collect();
    let agree = both
        .iter()
        .filter(|&&i| get(&full, i).to_bits() == get(&map_trellis, i).to_bits())
        .count();
    out.push(Measure::new(
        "astar.map_trellis.agrees_fraction",
        "MAP-only trellis: share of jets whose MAP equals the full trellis's bit for bit",
        frac(agree, both.len()),
    ));
    let has_exact = |i: usize| get(&exact, i).is_finite();
    out.push(Measure::new(
        "astar.exact_fraction",
        "share of jets with a certified exact MAP (A* or a trellis)",
        frac((0..rows).filter(|&i| has_exact(i)).count(), rows),
    ));
    for (size, idx) in &by_n {
        out.push(Measure::new(
            format!("astar.n{size}.exact_fraction"),
            format!("N = {size}: share of jets with a certified exact MAP (A* or a trellis)"),
            frac(idx.iter().filter(|&&i| has_exact(i)).count(), idx.len()),
        ));
    }
    for m in BASELINES {
        let x = f64_column(&t, &format!("{m}_log_likelihood"))?;
        let below = (0..rows)
            .filter(|&i| get(&x, i) <= get(&ub, i) + tol(get(&ub, i)))
            .count();
        out.push(Measure::new(
            format!("astar.{m}.below_map_fraction"),
            format!("{m}: share of jets at or below A*'s upper bound on the MAP"),
            frac(below, rows),
        ));
        let gaps: Vec<f64> = (0..rows).map(|i| get(&ll, i) - get(&x, i)).collect();
        out.push(Measure::new(
            format!("astar.{m}.mean_gap_min"),
            format!("{m}: mean of A*'s log-likelihood − {m}'s (the gap to the MAP when certified)"),
            gaps.iter().sum::<f64>() / rows.max(1) as f64,
        ));
        let exact_gaps: Vec<f64> = f64_column(&t, &format!("{m}_gap"))?
            .into_iter()
            .flatten()
            .collect();
        out.push(Measure::new(
            format!("astar.{m}.mean_gap"),
            format!("{m}: mean distance below the exact MAP, over jets where it is known"),
            exact_gaps.iter().sum::<f64>() / exact_gaps.len().max(1) as f64,
        ));
    }
    out.push(Measure::new(
        "astar.mean_log_likelihood",
        "A*: mean log-likelihood of the returned trees",
        ll.iter().map(|v| v.unwrap_or(f64::NAN)).sum::<f64>() / rows.max(1) as f64,
    ));
    Ok(out)
}
