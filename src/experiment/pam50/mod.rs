//! `kind = "pam50"` (Cluster Trellis paper, Figure 8): the greedy trees against the exact MAP
//! tree of hierarchical correlation clustering (Eq. 7) on a stratified pam50 subsample, with
//! raw and centred ("transformed") Pearson weights.
//!
//! "Greedy" is reported two ways: the local greedy on the energy itself (merge the pair whose
//! merge has the lowest energy, [`Method::Greedy`](crate::experiment::methods::Method)) and
//! average linkage on the correlations (the usual greedy agglomerative clustering of expression
//! data).
//!
//! Config: `[pam50]` ([`Pam50Section`]) and `[methods]` (only `max_exact_leaves` matters: the
//! trellis, average linkage and the greedy always run). Outputs:
//! - `pam50_samples.parquet`: the subsample (leaf, sample name, subtype);
//! - `pam50_weights.parquet`: the weight matrices;
//! - `pam50_trees.parquet`: per weighting and method, the energy, dendrogram purity and Newick
//!   with sample names; for the trellis also log Z, the posterior entropy over trees, the number
//!   of trees attaining the MAP energy (`n_map_trees`, and exactly as text in
//!   `n_map_trees_exact`) and the log of the number of all trees; `newick_as_built` is each tree
//!   with leaf indices and children in the order the method joined them (as drawn);
//! - `trees.nwk`; per weighting `pam50_<weighting>.png/.svg`: the three dendrograms side by
//!   side, leaves coloured by subtype, drawn from the tables and the manifest's `subtypes`.

mod figures;
mod run;
#[cfg(test)]
mod tests;

use crate::data::pam50::Pam50 as Pam50Data;
use crate::experiment::check::Measure;
use crate::experiment::config::{one_f64, positive, resolve};
use crate::experiment::kind::{Experiment, Results, RunContext};
use crate::experiment::methods::MethodsSection;
use crate::experiment::table::{f64_column, str_column};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The pam50 kind.
pub struct Pam50;

/// `kind = "pam50"`: `[pam50]` and `[methods]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Pam50Config {
    /// The data, the subsample and the weights.
    pub pam50: Pam50Section,
    /// Only `max_exact_leaves` is used (the largest subsample the exact trellis may take); the
    /// exact trellis, average linkage and the greedy always run.
    #[serde(default)]
    pub methods: MethodsSection,
}

/// `[pam50]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Pam50Section {
    /// Folder with `pam50_unc232_expr.tsv` and `pam50_unc232_labels.tsv` (relative paths are
    /// relative to the config file).
    pub path: PathBuf,
    /// Samples drawn from each known subtype (default 2).
    #[serde(default = "two")]
    pub per_class: usize,
    /// Samples drawn without a subtype (default 2).
    #[serde(default = "two")]
    pub unlabelled: usize,
    /// Weight variants, each with its own trees and chart: `"raw"` (Pearson correlations)
    /// and/or `"centred"` (minus their mean over all pairs); default both.
    #[serde(default = "both_weightings")]
    pub weights: Vec<Weighting>,
    /// Inverse temperature of `log psi = -beta * energy` (default 1; changes log Z and the
    /// entropy, never the MAP tree).
    #[serde(default = "one_f64")]
    pub beta: f64,
}

/// How pam50 correlations become weights.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Weighting {
    /// Pearson correlations as they are.
    Raw,
    /// Correlations minus their mean over all pairs, so that both signs occur.
    Centred,
}

impl Weighting {
    /// The name in tables, file names and configs.
    pub fn name(self) -> &'static str {
        match self {
            Weighting::Raw => "raw",
            Weighting::Centred => "centred",
        }
    }
}

fn two() -> usize {
    2
}

fn both_weightings() -> Vec<Weighting> {
    vec![Weighting::Raw, Weighting::Centred]
}

impl Experiment for Pam50 {
    type Config = Pam50Config;

    fn name(&self) -> &'static str {
        "pam50"
    }

    fn about(&self) -> &'static str {
        "greedy trees against the exact MAP tree of correlation clustering on pam50 samples (Figure 8)"
    }

    fn resolve_paths(&self, cfg: &mut Pam50Config, base: &Path) {
        resolve(&mut cfg.pam50.path, base);
    }

    fn validate(&self, cfg: &Pam50Config) -> Result<(), String> {
        cfg.methods.validate()?;
        cfg.methods.check_only("pam50", &["max_exact_leaves"])?;
        let p = &cfg.pam50;
        if p.weights.is_empty() {
            return Err("pam50.weights is empty; list \"raw\" and/or \"centred\"".into());
        }
        for (k, w) in p.weights.iter().enumerate() {
            if p.weights[..k].contains(w) {
                return Err(format!(
                    "pam50.weights lists {:?} twice; list each weighting once",
                    w.name()
                ));
            }
        }
        positive("pam50.beta", p.beta)?;
        if p.per_class < 2 {
            return Err(format!(
                "pam50.per_class = {} must be at least 2: dendrogram purity needs two samples of one subtype (the paper uses 2)",
                p.per_class
            ));
        }
        Ok(())
    }

    fn inputs(&self, cfg: &Pam50Config) -> Vec<PathBuf> {
        Pam50Data::files(&cfg.pam50.path).to_vec()
    }

    fn run(&self, cfg: &Pam50Config, ctx: &mut RunContext) -> Result<()> {
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
        crate::experiment::properties::pam50(results)
    }
}

/// The numbers of `pam50_trees.parquet`, per weighting `w` and method `m` (`greedy`,
/// `average_linkage`, `trellis_map`): `fig8.<w>.<m>.energy` and `.purity`; for the trellis also
/// `fig8.<w>.log_z`, `fig8.<w>.entropy` and `fig8.<w>.n_map_trees` (trees tied at the MAP energy).
pub fn measures(results: &Results) -> Result<Vec<Measure>> {
    let t = results.table("pam50_trees")?;
    let weighting = str_column(&t, "weighting")?;
    let algorithm = str_column(&t, "algorithm")?;
    let energy = f64_column(&t, "energy")?;
    let purity = f64_column(&t, "dendrogram_purity")?;
    let log_z = f64_column(&t, "log_z")?;
    let entropy = f64_column(&t, "posterior_entropy_nats")?;
    let ties = f64_column(&t, "n_map_trees")?;
    let mut out = Vec::new();
    for i in 0..t.height() {
        let (w, m) = (&weighting[i], &algorithm[i]);
        let what = format!("Figure 8, {w} weights, {}", m.replace('_', " "));
        let mut add = |id: String, what: String, v: Option<f64>| {
            out.push(Measure::new(id, what, v.unwrap_or(f64::NAN)))
        };
        add(
            format!("fig8.{w}.{m}.energy"),
            format!("{what}: HCC energy"),
            energy[i],
        );
        add(
            format!("fig8.{w}.{m}.purity"),
            format!("{what}: dendrogram purity"),
            purity[i],
        );
        if m == run::TRELLIS {
            add(format!("fig8.{w}.log_z"), format!("{what}: log Z"), log_z[i]);
            add(
                format!("fig8.{w}.entropy"),
                format!("{what}: posterior entropy (nats)"),
                entropy[i],
            );
            add(
                format!("fig8.{w}.n_map_trees"),
                format!("{what}: trees tied at the MAP energy"),
                ties[i],
            );
        }
    }
    Ok(out)
}
