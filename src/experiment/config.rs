//! Experiment configuration: one TOML file per experiment (`configs/*.toml`).
//!
//! Every key is named and documented here; unknown keys are an error. Example (the paper's
//! Table 1 setting, `configs/jets.toml`):
//!
//! ```toml
//! [experiment]
//! name = "jets"          # results go to <output_dir>/<name>/
//! seed = 20211130        # all randomness derives from it
//!
//! [data]
//! source = "generate"    # or "file" with `path = "jets.json"`
//! n_jets = 4430
//! min_leaves = 5
//! max_leaves = 10        # inclusive
//!
//! [algorithms]
//! trellis = true
//! beam = true
//! greedy = true
//! ```

use crate::data::ginkgo::GinkgoParams;
use crate::search::Dedup;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A whole experiment configuration.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Name, seed, output location, threads.
    pub experiment: ExperimentSection,
    /// Where the jets come from (jet experiments only).
    #[serde(default)]
    pub data: Option<DataSection>,
    /// Which algorithms run, with their parameters.
    #[serde(default)]
    pub algorithms: AlgorithmsSection,
    /// Paper values to compare against (optional, `kind = "jets"`).
    #[serde(default)]
    pub expected: Option<ExpectedSection>,
    /// Posterior sampling settings (`kind = "posterior_sampling"`).
    #[serde(default)]
    pub sampling: Option<SamplingSection>,
    /// Scaling-study settings (`kind = "scaling"`).
    #[serde(default)]
    pub scaling: Option<ScalingSection>,
    /// Sparse-trellis settings (`kind = "sparse"`).
    #[serde(default)]
    pub sparse: Option<SparseSection>,
    /// Dasgupta-cost settings (`kind = "dasgupta"`, Figure 4).
    #[serde(default)]
    pub dasgupta: Option<DasguptaSection>,
    /// pam50 settings (`kind = "pam50"`, Figure 8).
    #[serde(default)]
    pub pam50: Option<Pam50Section>,
    /// Cost-function study settings (`kind = "cost_functions"`, Section 4.4).
    #[serde(default)]
    pub cost_functions: Option<CostFunctionsSection>,
    /// Flat-clustering settings (`kind = "flat_pam50"`, the flat cluster trellis paper).
    #[serde(default)]
    pub flat: Option<FlatSection>,
}

/// `[flat]`: the flat cluster trellis paper's Figures 2-5 on a pam50 subsample: exact pairwise
/// marginals of correlation clustering against the pairwise affinities and against
/// Perturb-and-MAP.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlatSection {
    /// Folder with the pam50 files (relative paths are relative to the config file).
    pub path: PathBuf,
    /// Samples drawn from each known subtype.
    #[serde(default = "two")]
    pub per_class: usize,
    /// Samples drawn without a subtype.
    #[serde(default = "one_usize")]
    pub unlabelled: usize,
    /// Length scale `h` of the affinities `exp(-d / h)`: a positive number, or `"median"` for the
    /// median pairwise distance (the paper's preprocessing is `h = 1`).
    #[serde(default = "median_bandwidth")]
    pub bandwidth: BandwidthSetting,
    /// Subtract the mean pairwise affinity so that both signs occur (the paper does).
    #[serde(default = "yes_flat")]
    pub centre: bool,
    /// Inverse temperature `β` on the affinities: `log E(C) = β Σ_{i<j in C} a_ij`.
    #[serde(default = "one_f64")]
    pub beta: f64,
    /// Perturb-and-MAP draws (each an exact MAP on Gumbel-perturbed affinities).
    #[serde(default = "default_draws")]
    pub perturb_draws: usize,
}

/// A bandwidth in config: a number or `"median"`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum BandwidthSetting {
    /// A fixed length scale.
    Fixed(f64),
    /// `"median"`.
    Named(String),
}

fn one_usize() -> usize {
    1
}

fn yes_flat() -> bool {
    true
}

fn default_draws() -> usize {
    1000
}

fn median_bandwidth() -> BandwidthSetting {
    BandwidthSetting::Named("median".into())
}

impl BandwidthSetting {
    /// The bandwidth, or an error naming the accepted values.
    pub fn resolve(&self) -> Result<crate::data::pam50::Bandwidth, String> {
        use crate::data::pam50::Bandwidth;
        match self {
            BandwidthSetting::Fixed(h) if h.is_finite() && *h > 0.0 => Ok(Bandwidth::Fixed(*h)),
            BandwidthSetting::Named(s) if s == "median" => Ok(Bandwidth::Median),
            other => Err(format!(
                "flat.bandwidth = {other:?} must be a positive number or \"median\""
            )),
        }
    }
}

/// `[dasgupta]`: Dasgupta's cost (the paper's Eq. 4 and Figure 4): average linkage and the local
/// greedy against the exact MAP tree on adversarial and planted-partition graphs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DasguptaSection {
    /// Inverse temperature of `log psi = -beta * cost` (changes log Z, never the MAP).
    #[serde(default = "one_f64")]
    pub beta: f64,
    /// Instances of the adversarial family for average linkage (`data::graphs`).
    #[serde(default)]
    pub adversarial: Vec<crate::data::graphs::AdversarialParams>,
    /// Random planted-partition graphs.
    #[serde(default)]
    pub planted: Option<PlantedSection>,
}

/// Random planted-partition graphs for `[dasgupta]` and `[cost_functions]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PlantedSection {
    /// Number of random graphs.
    pub instances: usize,
    /// Sizes of the planted clusters (their sum is N).
    pub cluster_sizes: Vec<usize>,
    /// Probability of an edge inside a cluster.
    pub p_in: f64,
    /// Probability of an edge across clusters.
    pub p_out: f64,
}

/// `[pam50]`: the paper's Figure 8 (hierarchical correlation clustering of pam50 samples).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Pam50Section {
    /// Folder with `pam50_unc232_expr.tsv` and `pam50_unc232_labels.tsv` (relative paths are
    /// relative to the config file).
    pub path: PathBuf,
    /// Samples drawn from each known subtype.
    #[serde(default = "two")]
    pub per_class: usize,
    /// Samples drawn without a subtype.
    #[serde(default = "two")]
    pub unlabelled: usize,
    /// Weight variants: `"raw"` (Pearson correlations) and/or `"centred"` (minus their mean).
    #[serde(default = "both_weightings")]
    pub weights: Vec<Weighting>,
    /// Inverse temperature of `log psi = -beta * energy`.
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

/// `[cost_functions]`: Section 4.4, how Dasgupta's cost, HCC and dendrogram purity relate.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CostFunctionsSection {
    /// Sizes of the planted flat clusters (their sum is N; at most 8 so that every tree can be
    /// enumerated).
    pub cluster_sizes: Vec<usize>,
    /// Random weight matrices drawn for the "random" scheme.
    pub random_instances: usize,
}

fn one_f64() -> f64 {
    1.0
}

fn two() -> usize {
    2
}

fn both_weightings() -> Vec<Weighting> {
    vec![Weighting::Raw, Weighting::Centred]
}

/// `[sparse]`: Figure 7 of the paper, sparse trellises against their sparsity.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SparseSection {
    /// Numbers of seed trees to build sparse trellises from (one trellis per budget and builder).
    pub budgets: Vec<usize>,
    /// Beam size of the beam searches that seed the beam-search trellis (absent = the paper's
    /// rule for N leaves); each training jet contributes the trees of its final beam.
    #[serde(default)]
    pub seed_beam_size: Option<usize>,
    /// How leaves are numbered in seed and test jets alike (sparse trellises are built on
    /// leaf-index sets): `"generator"` (depth-first order of the shower, the data files' order;
    /// every truth cluster is then an index interval) or `"energy"` (decreasing energy).
    #[serde(default)]
    pub leaf_order: LeafOrder,
}

/// Leaf numbering convention for sparse trellises.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum LeafOrder {
    /// The generator's depth-first order (as stored).
    #[default]
    Generator,
    /// Decreasing energy.
    Energy,
}

/// What an experiment computes.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ExperimentKind {
    /// Score every jet with the trellis, beam search and greedy (Table 1, Figure 5).
    #[default]
    Jets,
    /// Exact posterior sampling and marginals on one jet (Figure 6).
    PosteriorSampling,
    /// Wall time and memory of the exact trellis against N.
    Scaling,
    /// Sparse trellises seeded by simulated or beam-search trees (Figure 7).
    Sparse,
    /// Dasgupta's cost: greedy against exact MAP trees on graphs (Figure 4).
    Dasgupta,
    /// Greedy against exact MAP trees on pam50 samples (Figure 8).
    Pam50,
    /// How Dasgupta's cost, HCC and dendrogram purity relate (Section 4.4).
    CostFunctions,
    /// Exact flat clustering of pam50 samples: pairwise marginals, Perturb-and-MAP (the flat
    /// cluster trellis paper, Figures 2-5).
    FlatPam50,
}

impl ExperimentKind {
    /// Whether the experiment works on jets (and so needs a `[data]` section).
    pub fn uses_jets(self) -> bool {
        matches!(
            self,
            ExperimentKind::Jets
                | ExperimentKind::PosteriorSampling
                | ExperimentKind::Scaling
                | ExperimentKind::Sparse
        )
    }
}

/// `[sampling]`: Figure 6 of the paper.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SamplingSection {
    /// Trees to draw from the exact posterior.
    pub n_samples: usize,
    /// Which jet of the dataset (0-based).
    #[serde(default)]
    pub jet_index: usize,
    /// Optional JSON file with another sampler's draws (`sample_loglh`: the log-likelihood of
    /// each sampled tree), drawn in the same chart (relative paths: relative to the config).
    #[serde(default)]
    pub reference_samples: Option<PathBuf>,
    /// Largest N for which all trees are enumerated to get the exact mass per log-likelihood
    /// value (default 9: 2,027,025 trees).
    #[serde(default = "default_max_enumerate")]
    pub max_enumerate_leaves: usize,
}

fn default_max_enumerate() -> usize {
    9
}

/// `[scaling]`: the exact trellis on one generated jet per N.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScalingSection {
    /// Smallest N.
    pub n_min: usize,
    /// Largest N.
    pub n_max: usize,
    /// Step between sizes (default 1).
    #[serde(default = "one")]
    pub step: usize,
    /// Timed runs per N; the fastest is reported (default 1).
    #[serde(default = "one")]
    pub repeats: usize,
}

fn one() -> usize {
    1
}

/// `[experiment]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSection {
    /// Name of the run; results are written to `<output_dir>/<name>/`.
    pub name: String,
    /// Master seed: the jets generated and every random choice derive from it.
    pub seed: u64,
    /// Folder for results (default `results`, relative to the working directory).
    #[serde(default = "default_output_dir")]
    pub output_dir: PathBuf,
    /// Worker threads (0 = one per core). Results do not depend on it.
    #[serde(default)]
    pub threads: usize,
    /// What to compute: `"jets"` (default), `"posterior_sampling"`, `"scaling"`, `"sparse"`,
    /// `"dasgupta"`, `"pam50"`, `"cost_functions"` or `"flat_pam50"`.
    #[serde(default)]
    pub kind: ExperimentKind,
}

fn default_output_dir() -> PathBuf {
    PathBuf::from("results")
}

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

/// `[data]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DataSection {
    /// `"generate"` or `"file"`.
    pub source: DataSource,
    /// With `source = "file"`: the dataset (relative paths are relative to the config file).
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// With `source = "generate"` and `kind = "jets"`: number of jets to keep.
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

/// `[algorithms]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AlgorithmsSection {
    /// Run the exact full trellis (log Z, MAP, finite-tree count).
    #[serde(default = "yes")]
    pub trellis: bool,
    /// Largest N the exact trellis accepts (default 22); larger jets are an error.
    #[serde(default = "default_max_exact")]
    pub max_exact_leaves: usize,
    /// Run beam search.
    #[serde(default = "yes")]
    pub beam: bool,
    /// Beam size; absent = the paper's rule min(3N, N(N-1)/2).
    #[serde(default)]
    pub beam_size: Option<usize>,
    /// Duplicate rule: `"clusters"` (exact, default) or `"equal_total"` (the reference's).
    #[serde(default)]
    pub beam_dedup: Dedup,
    /// Run greedy agglomeration.
    #[serde(default = "yes")]
    pub greedy: bool,
    /// Run a sparse trellis seeded, per jet, by the trees of the final beam of a beam search
    /// (works far beyond the exact limit).
    #[serde(default)]
    pub sparse: bool,
    /// Seed trees of the per-jet sparse trellis: the beam size of its seeding beam search
    /// (default 100).
    #[serde(default = "default_sparse_seeds")]
    pub sparse_seed_trees: usize,
}

fn default_sparse_seeds() -> usize {
    100
}

fn yes() -> bool {
    true
}

fn default_max_exact() -> usize {
    crate::exact::full::DEFAULT_MAX_LEAVES
}

impl Default for AlgorithmsSection {
    fn default() -> Self {
        AlgorithmsSection {
            trellis: true,
            max_exact_leaves: default_max_exact(),
            beam: true,
            beam_size: None,
            beam_dedup: Dedup::default(),
            greedy: true,
            sparse: false,
            sparse_seed_trees: default_sparse_seeds(),
        }
    }
}

/// `[expected]`: the paper's Table 1, for the comparison written next to the results.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExpectedSection {
    /// Where the numbers come from.
    pub source: String,
    /// Largest allowed |ours - paper| for the mean differences.
    pub tolerance: f64,
    /// Mean and std of trellis - beam.
    pub trellis_minus_beam: [f64; 2],
    /// Mean and std of trellis - greedy.
    pub trellis_minus_greedy: [f64; 2],
    /// Mean and std of beam - greedy.
    pub beam_minus_greedy: [f64; 2],
    /// Mean and std of the per-algorithm log-likelihoods: trellis, beam, greedy, truth.
    #[serde(default)]
    pub means: Option<[[f64; 2]; 4]>,
}

/// Problems with a configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// File missing or unreadable.
    #[error("cannot read config {path}: {source} (check the path)")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Not valid TOML or unknown/mistyped keys.
    #[error("config {path}: {msg}")]
    Parse {
        /// The file.
        path: String,
        /// What toml/serde said, in one line.
        msg: String,
    },
    /// Values that do not fit together.
    #[error("config {path}: {msg}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong and how to fix it.
        msg: String,
    },
}

impl Config {
    /// Reads, parses and checks a config file; relative data paths become relative to it.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let mut cfg = Config::parse(&text).map_err(|e| match e {
            ConfigError::Parse { msg, .. } => ConfigError::Parse {
                path: path.display().to_string(),
                msg,
            },
            ConfigError::Invalid { msg, .. } => ConfigError::Invalid {
                path: path.display().to_string(),
                msg,
            },
            other => other,
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        if let Some(d) = cfg.data.as_mut() {
            if let Some(p) = &d.path {
                if p.is_relative() {
                    d.path = Some(base.join(p));
                }
            }
        }
        if let Some(p) = cfg.pam50.as_mut() {
            if p.path.is_relative() {
                p.path = base.join(&p.path);
            }
        }
        if let Some(p) = cfg.flat.as_mut() {
            if p.path.is_relative() {
                p.path = base.join(&p.path);
            }
        }
        if let Some(s) = cfg.sampling.as_mut() {
            if let Some(p) = &s.reference_samples {
                if p.is_relative() {
                    s.reference_samples = Some(base.join(p));
                }
            }
        }
        Ok(cfg)
    }

    /// Parses and checks config text.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let cfg: Config = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: "<input>".into(),
            msg: one_line(&e.to_string()),
        })?;
        cfg.check().map_err(|msg| ConfigError::Invalid {
            path: "<input>".into(),
            msg,
        })?;
        Ok(cfg)
    }

    fn check(&self) -> Result<(), String> {
        let name = &self.experiment.name;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!(
                "experiment.name {name:?} must be a non-empty folder name of letters, digits, '_' or '-'"
            ));
        }
        let kind = self.experiment.kind;
        let Some(d) = &self.data else {
            if kind.uses_jets() {
                return Err(format!(
                    "experiment.kind = {kind:?} needs a [data] section saying where the jets come from"
                ));
            }
            return self.check_kind();
        };
        if !kind.uses_jets() {
            return Err(format!(
                "[data] does not apply to experiment.kind = {kind:?} (it describes jets); remove it"
            ));
        }
        match d.source {
            DataSource::File => {
                if d.path.is_none() {
                    return Err("data.source = \"file\" needs data.path = \"FILE.json\"".into());
                }
                for (k, set) in [
                    ("n_jets", d.n_jets.is_some()),
                    ("max_tries", d.max_tries.is_some()),
                    ("t_cut", d.t_cut.is_some()),
                    ("lambda", d.lambda.is_some()),
                    ("lambda_root", d.lambda_root.is_some()),
                    ("root_scale", d.root_scale.is_some()),
                    ("jet_momentum", d.jet_momentum.is_some()),
                ] {
                    if set {
                        return Err(format!(
                            "data.{k} only applies to data.source = \"generate\"; remove it (jets from a file carry their own parameters)"
                        ));
                    }
                }
            }
            DataSource::Generate => {
                if d.path.is_some() {
                    return Err("data.path only applies to data.source = \"file\"".into());
                }
                let needs_n = self.experiment.kind != ExperimentKind::Scaling;
                match d.n_jets {
                    None | Some(0) if needs_n => {
                        return Err("data.source = \"generate\" needs data.n_jets >= 1".into())
                    }
                    Some(_) if !needs_n => {
                        return Err("data.n_jets does not apply to kind = \"scaling\" (one jet per N); remove it".into())
                    }
                    _ => {}
                }
                let p = self.generator_params();
                for (k, v) in [
                    ("t_cut", p.t_cut),
                    ("lambda", p.lambda),
                    ("lambda_root", p.lambda_root),
                    ("root_scale", p.root_scale),
                    ("jet_momentum", p.jet_momentum),
                ] {
                    if !(v.is_finite() && v > 0.0) {
                        return Err(format!("data.{k} = {v} must be a positive number"));
                    }
                }
                if p.root_scale <= p.t_cut {
                    return Err(
                        "data.root_scale must exceed data.t_cut, or every jet is a single particle"
                            .into(),
                    );
                }
            }
        }
        let (lo, hi) = self.leaf_range();
        if lo < 1 || lo > hi || hi > 64 {
            return Err(format!(
                "leaf range {lo}..={hi} is empty or out of 1..=64; set data.min_leaves <= data.max_leaves <= 64"
            ));
        }
        if self.algorithms.sparse && self.algorithms.sparse_seed_trees == 0 {
            return Err("algorithms.sparse_seed_trees must be at least 1".into());
        }
        if self.algorithms.beam_size == Some(0) {
            return Err(
                "algorithms.beam_size must be at least 1 (or absent for the paper's rule)".into(),
            );
        }
        if self.algorithms.max_exact_leaves > crate::exact::full::MAX_LEAVES {
            return Err(format!(
                "algorithms.max_exact_leaves = {} is above the exact trellis's hard limit of {} leaves (2^N tables); use at most 26 on a 24 GiB machine",
                self.algorithms.max_exact_leaves,
                crate::exact::full::MAX_LEAVES
            ));
        }
        self.check_kind()?;
        if self.experiment.kind == ExperimentKind::Jets
            && self.algorithms.trellis
            && d.source == DataSource::Generate
            && hi > self.algorithms.max_exact_leaves
        {
            return Err(format!(
                "data.max_leaves = {hi} exceeds algorithms.max_exact_leaves = {}: lower max_leaves, raise max_exact_leaves, or set algorithms.trellis = false",
                self.algorithms.max_exact_leaves
            ));
        }
        Ok(())
    }

    fn check_kind(&self) -> Result<(), String> {
        let kind = self.experiment.kind;
        let section = |name: &str, present: bool, wanted: bool| -> Result<(), String> {
            match (present, wanted) {
                (false, true) => Err(format!("experiment.kind = {kind:?} needs a [{name}] section")),
                (true, false) => Err(format!(
                    "[{name}] does not apply to experiment.kind = {kind:?}; remove it or change the kind"
                )),
                _ => Ok(()),
            }
        };
        section(
            "sampling",
            self.sampling.is_some(),
            kind == ExperimentKind::PosteriorSampling,
        )?;
        section(
            "scaling",
            self.scaling.is_some(),
            kind == ExperimentKind::Scaling,
        )?;
        section(
            "dasgupta",
            self.dasgupta.is_some(),
            kind == ExperimentKind::Dasgupta,
        )?;
        section("pam50", self.pam50.is_some(), kind == ExperimentKind::Pam50)?;
        section(
            "cost_functions",
            self.cost_functions.is_some(),
            kind == ExperimentKind::CostFunctions,
        )?;
        section(
            "flat",
            self.flat.is_some(),
            kind == ExperimentKind::FlatPam50,
        )?;
        if let Some(f) = &self.flat {
            f.bandwidth.resolve()?;
            if !(f.beta.is_finite() && f.beta >= 0.0) {
                return Err(format!("flat.beta = {} must be a number >= 0", f.beta));
            }
            if f.per_class == 0 && f.unlabelled < 2 {
                return Err(
                    "flat needs at least two samples: raise per_class or unlabelled".into(),
                );
            }
        }
        let limit = self.algorithms.max_exact_leaves;
        if let Some(d) = &self.dasgupta {
            if !(d.beta.is_finite() && d.beta > 0.0) {
                return Err(format!(
                    "dasgupta.beta = {} must be a positive number",
                    d.beta
                ));
            }
            if d.adversarial.is_empty() && d.planted.is_none() {
                return Err("[dasgupta] needs graphs: add [[dasgupta.adversarial]] instances and/or a [dasgupta.planted] section".into());
            }
            for a in &d.adversarial {
                a.check(limit)?;
            }
            if let Some(p) = &d.planted {
                check_planted(p, "dasgupta.planted", limit)?;
            }
        }
        if let Some(p) = &self.pam50 {
            if p.weights.is_empty() {
                return Err("pam50.weights is empty; list \"raw\" and/or \"centred\"".into());
            }
            if !(p.beta.is_finite() && p.beta > 0.0) {
                return Err(format!("pam50.beta = {} must be a positive number", p.beta));
            }
            if p.per_class == 0 && p.unlabelled < 2 {
                return Err(
                    "pam50 needs at least two samples: raise per_class or unlabelled".into(),
                );
            }
        }
        if let Some(c) = &self.cost_functions {
            let n: usize = c.cluster_sizes.iter().sum();
            if c.cluster_sizes.len() < 2 || c.cluster_sizes.contains(&0) || n > 8 {
                return Err(format!(
                    "cost_functions.cluster_sizes = {:?} must list at least two non-empty clusters with at most 8 points in all (every tree is enumerated)",
                    c.cluster_sizes
                ));
            }
            if c.random_instances == 0 {
                return Err("cost_functions.random_instances must be at least 1".into());
            }
        }
        if self.expected.is_some() && kind != ExperimentKind::Jets {
            return Err("[expected] only applies to experiment.kind = \"jets\"".into());
        }
        if let Some(s) = &self.sampling {
            if s.n_samples == 0 {
                return Err("sampling.n_samples must be at least 1".into());
            }
            if s.max_enumerate_leaves > 10 {
                return Err("sampling.max_enumerate_leaves above 10 would enumerate more than 3e7 trees; use at most 10".into());
            }
        }
        if let Some(s) = &self.scaling {
            if s.n_min < 2 || s.n_min > s.n_max || s.step == 0 || s.repeats == 0 {
                return Err("scaling needs 2 <= n_min <= n_max, step >= 1 and repeats >= 1".into());
            }
            if s.n_max > self.algorithms.max_exact_leaves {
                return Err(format!(
                    "scaling.n_max = {} exceeds algorithms.max_exact_leaves = {}; raise max_exact_leaves (each extra leaf triples the time) or lower n_max",
                    s.n_max, self.algorithms.max_exact_leaves
                ));
            }
            if self.data().source != DataSource::Generate {
                return Err(
                    "kind = \"scaling\" generates its jets: set data.source = \"generate\"".into(),
                );
            }
        }
        Ok(())
    }

    /// The `[data]` section of a jet experiment (present: checked when the config is read).
    pub fn data(&self) -> &DataSection {
        self.data
            .as_ref()
            .expect("jet experiments have a [data] section (checked by Config)")
    }

    /// The inclusive leaf-count range jets must fall in.
    pub fn leaf_range(&self) -> (usize, usize) {
        (
            self.data().min_leaves.unwrap_or(1),
            self.data().max_leaves.unwrap_or(64),
        )
    }

    /// Generator parameters for simulating more jets like `jet` (its cut and rates, root scale
    /// `M_hard^2`), with any generator key the config sets taking precedence.
    pub fn generator_params_for(&self, jet: &crate::data::ginkgo::Jet) -> GinkgoParams {
        let d = self.data();
        GinkgoParams {
            t_cut: d.t_cut.unwrap_or(jet.t_cut),
            lambda: d.lambda.unwrap_or(jet.lam),
            lambda_root: d.lambda_root.unwrap_or(jet.lam_root),
            root_scale: d.root_scale.unwrap_or(jet.m_hard * jet.m_hard),
            jet_momentum: d.jet_momentum.unwrap_or(400.0),
        }
    }

    /// Generator parameters: the jet type's defaults overridden by any key set.
    pub fn generator_params(&self) -> GinkgoParams {
        let base = match self.data().jet_type {
            JetType::Qcd => GinkgoParams::qcd(),
            JetType::W => GinkgoParams::w_jet(),
        };
        let d = self.data();
        GinkgoParams {
            t_cut: d.t_cut.unwrap_or(base.t_cut),
            lambda: d.lambda.unwrap_or(base.lambda),
            lambda_root: d.lambda_root.unwrap_or(base.lambda_root),
            root_scale: d.root_scale.unwrap_or(base.root_scale),
            jet_momentum: d.jet_momentum.unwrap_or(base.jet_momentum),
        }
    }
}

fn check_planted(p: &PlantedSection, name: &str, limit: usize) -> Result<(), String> {
    let n: usize = p.cluster_sizes.iter().sum();
    if p.instances == 0 {
        return Err(format!("{name}.instances must be at least 1"));
    }
    if p.cluster_sizes.is_empty() || p.cluster_sizes.contains(&0) || n < 2 {
        return Err(format!(
            "{name}.cluster_sizes = {:?} must list non-empty clusters with at least 2 points in all",
            p.cluster_sizes
        ));
    }
    if n > limit {
        return Err(format!(
            "{name}: {n} points exceed algorithms.max_exact_leaves = {limit}; use smaller clusters or raise the limit"
        ));
    }
    for (k, v) in [("p_in", p.p_in), ("p_out", p.p_out)] {
        if !(0.0..=1.0).contains(&v) {
            return Err(format!("{name}.{k} = {v} must be a probability in [0, 1]"));
        }
    }
    Ok(())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"
        [experiment]
        name = "t"
        seed = 1
        [data]
        source = "generate"
        n_jets = 3
        min_leaves = 3
        max_leaves = 6
    "#;

    #[test]
    fn parses_minimal_generate_config() {
        let c = Config::parse(OK).unwrap();
        assert_eq!(c.leaf_range(), (3, 6));
        assert_eq!(c.generator_params(), GinkgoParams::qcd());
        assert!(c.algorithms.trellis && c.algorithms.beam && c.algorithms.greedy);
    }

    #[test]
    fn unknown_key_is_an_error_naming_it() {
        let bad = OK.replace("n_jets = 3", "n_jest = 3");
        let e = Config::parse(&bad).unwrap_err().to_string();
        assert!(e.contains("n_jest"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn inconsistent_values_are_errors() {
        for (from, to, needle) in [
            ("max_leaves = 6", "max_leaves = 30", "max_exact_leaves"),
            ("n_jets = 3", "n_jets = 0", "n_jets"),
            ("source = \"generate\"", "source = \"file\"", "data.path"),
            ("name = \"t\"", "name = \"a/b\"", "experiment.name"),
        ] {
            let e = Config::parse(&OK.replace(from, to))
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "{to}: {e}");
        }
    }

    #[test]
    fn graph_and_pam50_kinds_need_their_sections_and_no_jets() {
        let dasgupta = r#"
            [experiment]
            kind = "dasgupta"
            name = "d"
            seed = 1
            [dasgupta]
            [[dasgupta.adversarial]]
            n_pairs = 4
            eps = 0.01
        "#;
        let c = Config::parse(dasgupta).unwrap();
        assert_eq!(c.dasgupta.as_ref().unwrap().adversarial.len(), 1);
        assert!(c.data.is_none());
        for (text, needle) in [
            (
                dasgupta.replace(
                    "[[dasgupta.adversarial]]\n            n_pairs = 4\n            eps = 0.01",
                    "",
                ),
                "needs graphs",
            ),
            (
                dasgupta.replace("eps = 0.01", "eps = 0.01\n            colour = 1"),
                "colour",
            ),
            (
                dasgupta.replace("n_pairs = 4", "n_pairs = 40"),
                "max_exact_leaves",
            ),
            (
                format!("{dasgupta}\n[data]\nsource = \"generate\"\nn_jets = 1"),
                "[data] does not apply",
            ),
            (
                dasgupta.replace("[dasgupta]", "[pam50]\npath = \"x\"\n[dasgupta]"),
                "[pam50] does not apply",
            ),
            (
                OK.replace("seed = 1", "seed = 1\nkind = \"pam50\""),
                "[data] does not apply",
            ),
        ] {
            let e = Config::parse(&text).unwrap_err().to_string();
            assert!(e.contains(needle), "{needle}: {e}");
        }
        let jets_without_data = "[experiment]\nname = \"j\"\nseed = 1\n";
        let e = Config::parse(jets_without_data).unwrap_err().to_string();
        assert!(e.contains("needs a [data] section"), "{e}");
        let cost = "[experiment]\nkind = \"cost_functions\"\nname = \"c\"\nseed = 1\n[cost_functions]\ncluster_sizes = [5, 5]\nrandom_instances = 1\n";
        let e = Config::parse(cost).unwrap_err().to_string();
        assert!(e.contains("at most 8"), "{e}");
    }
}
