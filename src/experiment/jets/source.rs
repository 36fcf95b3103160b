//! `[jets]`: where the jets of every jet kind come from (the Ginkgo generator or a file).

use crate::data::ginkgo::{generate_dataset, GinkgoParams, Jet, JetDataset};
use crate::experiment::dropped::Dropped;
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Most jets a config may ask the generator for (each is kept in memory, about 1 KiB).
pub const MAX_JETS: usize = 1_000_000;

/// One jet: about 1 KiB held, and about 10 ms to generate and score with every method
/// (`configs/jets.toml`'s jets up to 10 leaves).
pub const JET_COST: crate::experiment::limits::UnitCost = crate::experiment::limits::UnitCost {
    unit: "jet",
    bytes: 1024.0,
    seconds: 1e-2,
};

/// The most generator draws a key may allow (the configs use up to 10^6).
pub const MAX_TRIES: usize = 100_000_000;

/// What one generator draw costs (a simulated shower, kept or not).
pub const TRY_COST: crate::experiment::limits::UnitCost = crate::experiment::limits::UnitCost {
    unit: "generator draw",
    bytes: 0.0,
    seconds: 2e-5,
};

/// Where jets come from.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DataSource {
    /// Generate with the Ginkgo shower.
    Generate,
    /// Read a JSON file in the schema of `../shared/data/ginkgo_jets/`.
    File,
}

/// Jet flavour of the generator.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum JetType {
    /// QCD jets: root scale 30^2, λ_root = λ = 1.5.
    #[default]
    Qcd,
    /// W jets: root scale 80^2, λ_root = 3.0, λ = 1.5.
    W,
}

/// `[jets]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JetsSection {
    /// `"generate"` or `"file"`.
    pub source: DataSource,
    /// With `source = "file"`: the dataset (relative paths are relative to the config file).
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// With `source = "generate"`: number of jets to keep.
    #[serde(default)]
    pub n_jets: Option<usize>,
    /// Smallest leaf count kept (inclusive, default 1).
    #[serde(default)]
    pub min_leaves: Option<usize>,
    /// Largest leaf count kept (inclusive, default 64).
    #[serde(default)]
    pub max_leaves: Option<usize>,
    /// Generator tries before giving up (default 100 per jet asked for).
    #[serde(default)]
    pub max_tries: Option<usize>,
    /// `"qcd"` (default) or `"w"`: sets the defaults of the physics keys below.
    #[serde(default)]
    pub jet_type: JetType,
    /// Cut on squared mass (default 16).
    #[serde(default)]
    pub t_cut: Option<f64>,
    /// Decay rate of non-root splits (default 1.5).
    #[serde(default)]
    pub lambda: Option<f64>,
    /// Decay rate of the root split (default 1.5 for QCD, 3.0 for W).
    #[serde(default)]
    pub lambda_root: Option<f64>,
    /// Root scale, the squared jet mass (default 900 for QCD, 6400 for W).
    #[serde(default)]
    pub root_scale: Option<f64>,
    /// Jet momentum magnitude along (1,1,1)/sqrt(3) (default 400).
    #[serde(default)]
    pub jet_momentum: Option<f64>,
}

impl JetsSection {
    /// Makes a relative `path` relative to `base`.
    pub fn resolve_paths(&mut self, base: &Path) {
        if let Some(p) = self.path.as_mut() {
            super::super::config::resolve(p, base);
        }
    }

    /// The input file, if the jets come from one.
    pub fn inputs(&self) -> Vec<PathBuf> {
        match self.source {
            DataSource::File => self.path.iter().cloned().collect(),
            DataSource::Generate => Vec::new(),
        }
    }

    /// Checks the section; `needs_n_jets` is false for kinds that generate one jet per size.
    pub fn validate(&self, needs_n_jets: bool) -> Result<(), String> {
        match self.source {
            DataSource::File => {
                if self.path.is_none() {
                    return Err("jets.source = \"file\" needs jets.path = \"FILE.json\"".into());
                }
                // Generator keys are ignored with a note (see `ignored_keys`), so a generating
                // config runs on a file by changing `source` and adding `path`.
            }
            DataSource::Generate => {
                if self.path.is_some() {
                    return Err("jets.path only applies to jets.source = \"file\"".into());
                }
                match self.n_jets {
                    None | Some(0) if needs_n_jets => {
                        return Err("jets.source = \"generate\" needs jets.n_jets >= 1".into())
                    }
                    Some(_) if !needs_n_jets => {
                        return Err(
                            "jets.n_jets does not apply to this kind (one jet per N); remove it"
                                .into(),
                        )
                    }
                    Some(n) => crate::experiment::limits::check_size(
                        "jets.n_jets",
                        n,
                        MAX_JETS,
                        JET_COST,
                    )?,
                    _ => {}
                }
                if let Some(t) = self.max_tries {
                    if t == 0 {
                        return Err("jets.max_tries must be at least 1 (or absent for the default of 100 per jet)".into());
                    }
                    crate::experiment::limits::check_size("jets.max_tries", t, MAX_TRIES, TRY_COST)?;
                }
                let p = self.generator_params();
                for (k, v) in [
                    ("t_cut", p.t_cut),
                    ("lambda", p.lambda),
                    ("lambda_root", p.lambda_root),
                    ("root_scale", p.root_scale),
                    ("jet_momentum", p.jet_momentum),
                ] {
                    super::super::config::positive(&format!("jets.{k}"), v)?;
                }
                if p.root_scale <= p.t_cut {
                    return Err(
                        "jets.root_scale must exceed jets.t_cut, or every jet is a single particle"
                            .into(),
                    );
                }
            }
        }
        let (lo, hi) = self.leaf_range();
        if lo < 1 || lo > hi || hi > 64 {
            return Err(format!(
                "leaf range {lo}..={hi} is empty or out of 1..=64; set jets.min_leaves <= jets.max_leaves <= 64"
            ));
        }
        Ok(())
    }

    /// The inclusive leaf-count range jets must fall in.
    pub fn leaf_range(&self) -> (usize, usize) {
        (self.min_leaves.unwrap_or(1), self.max_leaves.unwrap_or(64))
    }

    /// Generator parameters for simulating more jets like `jet` (its cut and rates, root scale
    /// `M_hard^2`), with any generator key the config sets taking precedence.
    pub fn generator_params_for(&self, jet: &Jet) -> GinkgoParams {
        GinkgoParams {
            t_cut: self.t_cut.unwrap_or(jet.t_cut),
            lambda: self.lambda.unwrap_or(jet.lam),
            lambda_root: self.lambda_root.unwrap_or(jet.lam_root),
            root_scale: self.root_scale.unwrap_or(jet.m_hard * jet.m_hard),
            jet_momentum: self.jet_momentum.unwrap_or(400.0),
        }
    }

    /// Generator parameters: the jet type's defaults overridden by any key set.
    pub fn generator_params(&self) -> GinkgoParams {
        let base = match self.jet_type {
            JetType::Qcd => GinkgoParams::qcd(),
            JetType::W => GinkgoParams::w_jet(),
        };
        GinkgoParams {
            t_cut: self.t_cut.unwrap_or(base.t_cut),
            lambda: self.lambda.unwrap_or(base.lambda),
            lambda_root: self.lambda_root.unwrap_or(base.lambda_root),
            root_scale: self.root_scale.unwrap_or(base.root_scale),
            jet_momentum: self.jet_momentum.unwrap_or(base.jet_momentum),
        }
    }

    /// The generator keys set in a config that reads a file: they do not apply (jets from a
    /// file carry their own parameters) and are ignored, with a note.
    pub fn ignored_keys(&self) -> Vec<&'static str> {
        if self.source != DataSource::File {
            return Vec::new();
        }
        [
            ("jets.n_jets", self.n_jets.is_some()),
            ("jets.max_tries", self.max_tries.is_some()),
            ("jets.t_cut", self.t_cut.is_some()),
            ("jets.lambda", self.lambda.is_some()),
            ("jets.lambda_root", self.lambda_root.is_some()),
            ("jets.root_scale", self.root_scale.is_some()),
            ("jets.jet_momentum", self.jet_momentum.is_some()),
        ]
        .into_iter()
        .filter(|(_, set)| *set)
        .map(|(k, _)| k)
        .collect()
    }

    /// Loads or generates the jets (`seed` and `name` for the generator), with what the leaf
    /// range dropped from a file (never silently: callers report it).
    pub fn load(&self, seed: u64, name: &str) -> Result<(JetDataset, Option<Dropped>)> {
        let (lo, hi) = self.leaf_range();
        match (self.source, &self.path) {
            (DataSource::File, Some(path)) => {
                let ignored = self.ignored_keys();
                if !ignored.is_empty() {
                    eprintln!(
                        "note: {} only apply to jets.source = \"generate\"; ignored (jets from a file carry their own parameters)",
                        ignored.join(", ")
                    );
                }
                let mut ds = JetDataset::load(path)?;
                let before = ds.jets.len();
                let outside: Vec<String> = ds
                    .jets
                    .iter()
                    .filter(|j| j.n_leaves < lo || j.n_leaves > hi)
                    .map(|j| format!("{} ({} leaves)", j.name, j.n_leaves))
                    .collect();
                ds.jets.retain(|j| j.n_leaves >= lo && j.n_leaves <= hi);
                if ds.jets.is_empty() {
                    bail!(
                        "no jet of {} has {lo}..={hi} leaves ({before} jets read); widen jets.min_leaves/max_leaves",
                        path.display()
                    );
                }
                let why = format!("outside jets.min_leaves..=max_leaves = {lo}..={hi}");
                Ok((ds, Dropped::of("jets", &why, outside)))
            }
            (DataSource::File, None) => bail!("jets.source = \"file\" needs jets.path"),
            (DataSource::Generate, _) => {
                let Some(n) = self.n_jets else {
                    bail!("jets.source = \"generate\" needs jets.n_jets");
                };
                let tries = self.max_tries.unwrap_or(100 * n.max(100));
                let ds = generate_dataset(&self.generator_params(), n, lo, hi, seed, tries, name)?;
                Ok((ds, None))
            }
        }
    }
}
