//! `kind = "scaling"`: wall time and memory of the exact trellis against the number of leaves
//! N. One generated jet per N; log Z + MAP + finite-tree count (+ entropy) together, against
//! the `3^N` law and the `(2N-3)!!` trees that enumeration would visit.
//!
//! Config: `[jets]` (the generator's settings, [`JetsSection`]; `source = "generate"`, no
//! `n_jets` and no leaf range: the sizes come from `[scaling]`), `[scaling]`
//! ([`ScalingSection`]) and optionally `[methods]`, of which only `max_exact_leaves` applies.
//! Outputs: `scaling.parquet` (one row per N: timings, memory and the exact numbers) and
//! `scaling.png/.svg`. Both trellises are built once untimed on the first jet before any timing
//! (a warm-up: a cold process's first build is many times slower), then `repeats` timed builds
//! per N and method give the fastest. The timings differ from run to run;
//! [`Experiment::measures`] reads only the exact numbers.

mod figures;
mod run;
#[cfg(test)]
mod tests;

pub use run::{n_splits, peak_rss_bytes};

use crate::experiment::check::Measure;
use crate::experiment::jets::{DataSource, JetsSection};
use crate::experiment::kind::{Experiment, Results, RunContext};
use crate::experiment::methods::MethodsSection;
use crate::experiment::table::{f64_column, u64_column};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The scaling kind.
pub struct Scaling;

/// `kind = "scaling"`: `[jets]`, `[scaling]` and optionally `[methods]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScalingConfig {
    /// The generator's settings (`source = "generate"`; the jet type and physics keys apply,
    /// `max_tries` is per size and defaults to 1,000,000).
    pub jets: JetsSection,
    /// Only `max_exact_leaves` applies (the exact trellis's size limit, default 22).
    #[serde(default)]
    pub methods: MethodsSection,
    /// Which sizes.
    pub scaling: ScalingSection,
}

/// `[scaling]`: the exact trellis on one generated jet per N.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScalingSection {
    /// Smallest N (at least 2).
    pub n_min: usize,
    /// Largest N (at most `methods.max_exact_leaves`).
    pub n_max: usize,
    /// Step between sizes (default 1).
    #[serde(default = "one")]
    pub step: usize,
    /// Timed runs per N and method, after one untimed warm-up build on the first N; the fastest
    /// is reported (default 1).
    #[serde(default = "one")]
    pub repeats: usize,
}

/// The most repeats of each timing (the best of a few is the usual practice).
pub const MAX_REPEATS: usize = 100;

fn one() -> usize {
    1
}

impl ScalingSection {
    /// The sizes measured: `n_min..=n_max` by `step`.
    pub fn sizes(&self) -> Vec<usize> {
        (self.n_min..=self.n_max)
            .step_by(self.step.max(1))
            .collect()
    }
}

impl Experiment for Scaling {
    type Config = ScalingConfig;

    fn name(&self) -> &'static str {
        "scaling"
    }

    fn about(&self) -> &'static str {
        "wall time and memory of the exact trellis against the number of leaves"
    }

    fn resolve_paths(&self, cfg: &mut ScalingConfig, base: &Path) {
        cfg.jets.resolve_paths(base);
    }

    fn validate(&self, cfg: &ScalingConfig) -> Result<(), String> {
        if cfg.jets.source != DataSource::Generate {
            return Err(
                "kind = \"scaling\" generates its jets: set jets.source = \"generate\"".into(),
            );
        }
        if cfg.jets.min_leaves.is_some() || cfg.jets.max_leaves.is_some() {
            return Err("jets.min_leaves and jets.max_leaves do not apply to kind = \"scaling\" (the sizes are scaling.n_min..=n_max); remove them".into());
        }
        cfg.jets.validate(false)?;
        cfg.methods.validate()?;
        cfg.methods.check_only(self.name(), &["max_exact_leaves"])?;
        let s = &cfg.scaling;
        if s.n_min < 2 || s.n_min > s.n_max || s.step == 0 || s.repeats == 0 {
            return Err(
                "scaling needs 2 <= scaling.n_min <= scaling.n_max, scaling.step >= 1 and scaling.repeats >= 1".into(),
            );
        }
        // n_max before anything is counted or allocated per size (1e12 sizes would not fit).
        let limit = cfg.methods.max_exact_leaves;
        if s.n_max > limit {
            let stat = std::mem::size_of::<crate::model::ginkgo::GinkgoStat>();
            let next = crate::exact::TrellisCost::of(limit + 1, stat);
            return Err(format!(
                "scaling.n_max = {} exceeds methods.max_exact_leaves = {limit}: already N = {} would take about {} of memory and about {} for each trellis (each extra leaf triples the time); lower n_max or raise max_exact_leaves",
                s.n_max,
                limit + 1,
                crate::experiment::limits::bytes(next.bytes),
                crate::experiment::limits::duration(next.seconds)
            ));
        }
        // One repeat times both trellises at every size.
        let stat = std::mem::size_of::<crate::model::ginkgo::GinkgoStat>();
        let repeat_seconds: f64 = s
            .sizes()
            .iter()
            .map(|&n| 2.0 * 2.0 * crate::exact::TrellisCost::of(n, stat).seconds)
            .sum();
        crate::experiment::limits::check_size(
            "scaling.repeats",
            s.repeats,
            MAX_REPEATS,
            crate::experiment::limits::UnitCost {
                unit: "repeat of every size",
                bytes: 0.0,
                seconds: repeat_seconds,
            },
        )?;
        Ok(())
    }

    fn inputs(&self, cfg: &ScalingConfig) -> Vec<PathBuf> {
        cfg.jets.inputs()
    }

    fn run(&self, cfg: &ScalingConfig, ctx: &mut RunContext) -> Result<()> {
        run::run(cfg, ctx)
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
        crate::experiment::properties::scaling(results)
    }
}

/// The timing-free numbers of `scaling.parquet`, per N: `scaling.n<N>.log_z`,
/// `.map_log_likelihood`, `.n_trees_finite` and `.entropy_nats`; and
/// `scaling.map_trellis.same_bits_fraction`, the share of sizes whose MAP-only trellis gave the
/// full trellis's MAP value bit for bit.
pub fn measures(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("scaling")?;
    let n = u64_column(&t, "n_leaves")?;
    let mut out = Vec::new();
    for (col, what) in [
        ("log_z", "log partition function"),
        ("map_log_likelihood", "MAP log-likelihood"),
        ("n_trees_finite", "trees with finite likelihood"),
        ("entropy_nats", "posterior entropy (nats)"),
    ] {
        let v = f64_column(&t, col)?;
        for (n, v) in n.iter().zip(v) {
            let n = n.unwrap_or(0);
            out.push(Measure::new(
                format!("scaling.n{n}.{col}"),
                format!("exact trellis, N = {n}: {what}"),
                v.unwrap_or(f64::NAN),
            ));
        }
    }
    let same = u64_column(&t, "map_trellis_same_bits")?;
    let k = same.iter().filter(|v| **v == Some(1)).count();
    out.push(Measure::new(
        "scaling.map_trellis.same_bits_fraction",
        "MAP-only trellis: share of sizes with the full trellis's MAP bit for bit",
        if same.is_empty() {
            f64::NAN
        } else {
            k as f64 / same.len() as f64
        },
    ));
    Ok(out)
}
