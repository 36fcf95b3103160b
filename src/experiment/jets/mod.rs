//! `kind = "jets"` (Cluster Trellis paper, Table 1 and Figure 5): score every jet with the exact
//! trellis, beam search, greedy (and optionally a per-jet sparse trellis), compare with the
//! generator's tree.
//!
//! Config: `[jets]` (where the jets come from, [`JetsSection`], shared by every jet kind) and
//! `[methods]`. Outputs: `jets.parquet` (one row per jet × method), `table1.parquet` (every
//! pairwise difference and per-method mean, with the paper's values beside ours),
//! `table1.png/.svg`, `fig5_logz_vs_map.png/.svg`, `dataset.json`.

mod figures;
mod run;
mod source;
#[cfg(test)]
mod tests;

pub use run::{check_exact_limits, score_jet, write_jets_table, write_table1, JetScores, Table1};
pub use source::{DataSource, JetType, JetsSection, MAX_JETS, MAX_TRIES, TRY_COST};

use crate::experiment::check::{expected_for, Expected, Measure};
use crate::experiment::kind::{Experiment, Results, RunContext};
use crate::experiment::methods::MethodsSection;
use crate::experiment::table::{f64_column, str_column};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The jets kind.
pub struct Jets;

/// `kind = "jets"`: `[jets]` and `[methods]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JetsConfig {
    /// Where the jets come from.
    pub jets: JetsSection,
    /// Which methods run.
    #[serde(default)]
    pub methods: MethodsSection,
}

impl Experiment for Jets {
    type Config = JetsConfig;

    fn name(&self) -> &'static str {
        "jets"
    }

    fn about(&self) -> &'static str {
        "every jet scored by the exact trellis, beam search and greedy (Table 1, Figure 5)"
    }

    fn resolve_paths(&self, cfg: &mut JetsConfig, base: &Path) {
        cfg.jets.resolve_paths(base);
    }

    fn validate(&self, cfg: &JetsConfig) -> Result<(), String> {
        cfg.jets.validate(true)?;
        cfg.methods.validate()?;
        let (_, hi) = cfg.jets.leaf_range();
        if (cfg.methods.trellis || cfg.methods.map_trellis)
            && cfg.jets.source == DataSource::Generate
            && hi > cfg.methods.max_exact_leaves
        {
            return Err(format!(
                "jets.max_leaves = {hi} exceeds methods.max_exact_leaves = {}: lower max_leaves, raise max_exact_leaves, or set methods.trellis = false (and methods.map_trellis = false)",
                cfg.methods.max_exact_leaves
            ));
        }
        Ok(())
    }

    fn inputs(&self, cfg: &JetsConfig) -> Vec<PathBuf> {
        cfg.jets.inputs()
    }

    fn run(&self, cfg: &JetsConfig, ctx: &mut RunContext) -> Result<()> {
        let paper: Vec<Expected> = expected_for(self, &ctx.experiment.name)?
            .into_iter()
            .filter(|e| e.source.starts_with("paper"))
            .collect();
        run::run(cfg, ctx, &paper)
    }

    fn figures(&self, results: &Results, out: &Path) -> Result<()> {
        figures::draw(results, out)
    }

    fn caption(&self, stem: &str) -> Option<crate::experiment::kind::Caption> {
        figures::caption(stem)
    }

    fn measures(&self, results: &Results) -> Result<Vec<Measure>> {
        let mut m = table1_measures(results)?;
        m.extend(map_beaten(results)?);
        Ok(m)
    }

    fn expected(&self) -> &'static str {
        include_str!("expected.toml")
    }

    fn properties(&self, results: &Results) -> Result<Vec<Measure>> {
        crate::experiment::properties::jets(results)
    }
}

/// `map_beaten`: on how many jets some method found a tree more likely than the exact MAP (by
/// more than 1e-9); must be 0. Absent when the trellis did not run.
pub fn map_beaten(results: &Results) -> Result<Option<Measure>> {
    let t = results.table("jets")?;
    let algorithm = str_column(&t, "algorithm")?;
    let jet = crate::experiment::table::u64_column(&t, "jet_index")?;
    let ll = f64_column(&t, "log_likelihood")?;
    let mut map = std::collections::BTreeMap::new();
    for i in 0..t.height() {
        if algorithm[i] == "trellis" {
            map.insert(jet[i], ll[i].unwrap_or(f64::NAN));
        }
    }
    if map.is_empty() {
        return Ok(None);
    }
    let mut beaten = std::collections::BTreeSet::new();
    for i in 0..t.height() {
        if let (Some(m), Some(v)) = (map.get(&jet[i]), ll[i]) {
            if v > m + 1e-9 {
                beaten.insert(jet[i]);
            }
        }
    }
    Ok(Some(Measure::new(
        "map_beaten",
        "jets on which a method beat the exact MAP",
        beaten.len() as f64,
    )))
}

/// The numbers of `table1.parquet`: `table1.<row>-<column>.mean|std` for every difference and
/// `mean.<method>.mean|std` for every method.
pub fn table1_measures(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("table1")?;
    let kind = str_column(&t, "kind")?;
    let row = str_column(&t, "row")?;
    let col = str_column(&t, "column")?;
    let mean = f64_column(&t, "mean")?;
    let std = f64_column(&t, "std")?;
    let mut out = Vec::new();
    for i in 0..t.height() {
        let (id, what) = if kind[i] == "difference" {
            (
                format!("table1.{}-{}", row[i], col[i]),
                format!("Table 1: {} − {}", row[i], col[i]),
            )
        } else {
            (
                format!("mean.{}", row[i]),
                format!("mean log-likelihood of {}", row[i]),
            )
        };
        for (stat, v) in [("mean", mean[i]), ("std", std[i])] {
            out.push(Measure::new(
                format!("{id}.{stat}"),
                format!("{what}, {stat}"),
                v.unwrap_or(f64::NAN),
            ));
        }
    }
    Ok(out)
}
