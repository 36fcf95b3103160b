//! The board's data layer: a `[board]` config's dataset list (`[[board.datasets]]`,
//! [`DatasetSpec`]) becomes a list of concrete [`Instance`]s, each saying what it is judged by
//! ([`InstanceData`]).
//!
//! Sources and the existing code each one reuses:
//! - `"ginkgo"`: QCD jets from [`generate_dataset`] (as `[jets] source = "generate"`), kept when
//!   their leaf count is in `min_leaves..=max_leaves`; `root_scale` raises the jet mass for large
//!   jets (`configs/jets_large.toml` uses 60000 for 20 to 60 leaves).
//! - `"ginkgo_test100"`: the paper's 100 test jets, `tree_100_n9.json` in the folder `path`
//!   (default `../data/ginkgo_jets`), read by [`JetDataset::load`].
//! - `"pam50"`: [`Pam50::load`] of the folder `path` (default `../data/pam50`), missing values
//!   filled with zeros ([`Pam50::filled_rows`], as the pam50 kind), subsamples of `points` of
//!   the 139 samples with a known subtype, stratified by subtype; labels = subtype.
//! - `"animals33"`: [`PointMatrix::animals33`](crate::data::matrix::PointMatrix::animals33) of
//!   `animals33_features.tsv` in `path` (default `../data/animals33`): 33 animals × 0/1
//!   features; labels = the pydt kind's built-in group table
//!   (`src/experiment/pydt/animals33_groups.tsv`, six groups). All 33 animals unless `points`
//!   asks for subsamples.
//! - `"usps"`: [`PointMatrix::usps`](crate::data::matrix::PointMatrix::usps) of `usps_train.txt`
//!   and `usps_test.txt` in `path` (default `../data/usps`), all 9,298 images as the USPS config
//!   reads them, exact duplicates after the first removed (as the `coalescent_labelled` kind
//!   does), subsets of `points` images stratified by digit; labels = digit.
//! - `"planted_partition"`: [`planted_partition`] graphs (the dasgupta kind's generator and
//!   defaults: clusters 4 + 4 + 4, `p_in` 0.8, `p_out` 0.2); labels = planted cluster.
//! - `"coalescent_d1"`: Henao & Lucas's synthetic set D1 (`n = 32` points in `d = 32`
//!   dimensions, Φ = [`hl_synthetic_covariance`]`(32, 0.01)`, as the coalescent_synthetic kind's
//!   Table 1 setting) from [`generate_with_whitening`]; no labels.
//! - `"file"`: a jets JSON (extension `.json`, [`JetDataset::load`]) or a CSV/TSV matrix with a
//!   header ([`PointMatrix::load`](crate::data::matrix::PointMatrix::load)), rows = points, with
//!   labels when `label_column` names one.
//! - `"similarity_matrix"`: a square similarity matrix (header = point names), one instance
//!   judged by Dasgupta's cost ([`similarity`]).
//! - `"distance_matrix"`: a square distance matrix (zero diagonal), one instance: average
//!   linkage runs on the distances themselves (SciPy's `linkage(squareform(D), "average")`),
//!   Dasgupta's cost on the similarities `max(D) − D` ([`similarity`] says why).
//!
//! Subsamples keep the data's row order (not grouped by class), so that no method's tie-breaking
//! by index sees the classes; planted-partition graphs keep the generator's block order and jets
//! the generator's (or the file's) leaf order, as the dasgupta and jets kinds do.
//!
//! **Similarities of points** ([`InstanceData::Points`]): Pearson correlations between the
//! points over their features ([`pearson`](crate::data::pam50::pearson), the function behind [`Pam50::correlation_weights`]:
//! the pam50 kind's `raw` weights, which it gives average linkage as its similarities), zero on
//! the diagonal (the [`WeightMatrix`] convention). [`Instance::centred_correlations`] subtracts
//! their mean over all pairs: the pam50 kind's `centred` weights, for the HCC energy.
//!
//! **Randomness**: dataset `d` draws from [`dataset_seed`]`(seed, d)`; its instance `k` (a
//! subsample, a graph, a coalescent data set) from [`instance_seed`] of that. Ginkgo jets are
//! drawn one after the other from the dataset's stream, as the jets kind draws them. Nothing
//! depends on thread timing or on the other datasets of the list.

use crate::coalescent::generator::{generate_with_whitening, hl_synthetic_covariance};
use crate::data::ginkgo::{generate_dataset, GinkgoParams, Jet, JetDataset, JetError};
use crate::data::graphs::planted_partition;
use crate::data::pam50::Pam50;
use crate::experiment::config::resolve;
use crate::experiment::dropped::Dropped;
use crate::model::{ModelError, WeightMatrix};
use anyhow::{anyhow, bail, Context, Result};
use pool::{load_pool, points_instance, subsamples, Pool};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

mod checks;
mod pool;
mod values;

pub use values::{correlation_similarities, dataset_seed, instance_seed, weight_matrix};
use values::side;
pub mod similarity;

/// The sources a dataset may name, in the order errors list them.
pub const SOURCES: [&str; 10] = [
    "ginkgo",
    "ginkgo_test100",
    "pam50",
    "animals33",
    "usps",
    "planted_partition",
    "coalescent_d1",
    "file",
    "similarity_matrix",
    "distance_matrix",
];

/// Most points of one instance of points: its similarity matrix holds `n²` numbers (2,000
/// points: 32 MiB).
pub const MAX_POINTS: usize = 2000;

/// Most instances of one dataset.
pub const MAX_INSTANCES: usize = 100_000;

/// Jets in `tree_100_n9.json`.
pub const TEST100_JETS: usize = 100;

/// pam50 samples with a known intrinsic subtype (of 232; only these are drawn, so that every
/// point has a label).
pub const PAM50_LABELLED: usize = 139;

/// USPS images in `usps_train.txt` and `usps_test.txt` together.
pub const USPS_IMAGES: usize = 9298;

/// Animals in animals33.
pub const ANIMALS: usize = 33;

/// Points of Henao & Lucas's D1 (and its dimension).
pub const D1_POINTS: usize = 32;

/// Dimension of D1.
pub const D1_DIM: usize = 32;

/// The noise σ² on Φ's diagonal of D1 (the spec's placeholder for HL Table 1).
pub const D1_NOISE: f64 = 0.01;

/// The dasgupta kind's planted clusters (`configs/dasgupta.toml`).
pub const PLANTED_SIZES: [usize; 3] = [4, 4, 4];

/// Edge probability inside a planted cluster (`configs/dasgupta.toml`).
pub const PLANTED_P_IN: f64 = 0.8;

/// Edge probability across planted clusters (`configs/dasgupta.toml`).
pub const PLANTED_P_OUT: f64 = 0.2;

/// One dataset entry in the config: `[[board.datasets]]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DatasetSpec {
    /// Name in tables and charts (unique in the config; letters, digits, '_', '-').
    pub name: String,
    /// "ginkgo" | "ginkgo_test100" | "pam50" | "animals33" | "usps" | "planted_partition" |
    /// "coalescent_d1" | "file" | "similarity_matrix" ([`SOURCES`]).
    pub source: String,
    /// How many instances (jets, subsamples, graphs, data sets) to draw (default 1); for
    /// "ginkgo_test100" and a jets file how many of the jets, first first (default all).
    #[serde(default)]
    pub instances: Option<usize>,
    /// Points per instance where meaningful: the pam50/usps subsample size (required), the
    /// animals33 or file subsample size (default all), the planted-partition graph size
    /// (default the sum of `cluster_sizes`), the coalescent N (default 32).
    #[serde(default)]
    pub points: Option<usize>,
    /// For "ginkgo" (required) and a jets file (default 1): leaves per jet, inclusive range.
    #[serde(default)]
    pub min_leaves: Option<usize>,
    /// See `min_leaves` (required for "ginkgo", default 64 for a jets file).
    #[serde(default)]
    pub max_leaves: Option<usize>,
    /// For "file": path to a jets JSON (schema of data/ginkgo_jets/) or a CSV/TSV matrix with
    /// header (rows = points, optional label column). For the bundled sources: the folder of
    /// their files (default `../data/<folder>`, relative to the config like every path).
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// For a "file" matrix: the header name of the column holding each point's class.
    #[serde(default)]
    pub label_column: Option<String>,
    /// For a "file" matrix: the header name of the column holding each point's name (the leaf
    /// labels; R's and pandas' row names are found by themselves).
    #[serde(default)]
    pub names_column: Option<String>,
    /// For a "file" matrix: z-score every feature column (centre, unit variance) before any
    /// method runs (default false), for columns on different scales.
    #[serde(default)]
    pub standardize: Option<bool>,
    /// For "planted_partition": sizes of the planted clusters (default: `points`, or 12, split
    /// into 3 clusters of near-equal size, larger first; at most 64 points in all).
    #[serde(default)]
    pub cluster_sizes: Option<Vec<usize>>,
    /// For "planted_partition": probability of an edge inside a cluster (default 0.8).
    #[serde(default)]
    pub p_in: Option<f64>,
    /// For "planted_partition": probability of an edge across clusters (default 0.2).
    #[serde(default)]
    pub p_out: Option<f64>,
    /// For "ginkgo": the root scale `M_hard²` (default 900, the QCD jets of the paper; 60000
    /// gives 20 to 50 leaves often, see `configs/jets_large.toml`).
    #[serde(default)]
    pub root_scale: Option<f64>,
    /// For "ginkgo": generator tries before giving up (default 100 per jet, at least 10,000).
    #[serde(default)]
    pub max_tries: Option<usize>,
    /// For labelled points drawn in subsamples (pam50, usps, animals33, a labelled file):
    /// stratify by class (default true: as equal a share of every class as the class sizes
    /// allow, the remainder to classes in random order); false draws uniformly.
    #[serde(default)]
    pub stratify: Option<bool>,
}

/// One instance: the data a method runs on and how it is judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    /// The dataset's name ([`DatasetSpec::name`]).
    pub dataset: String,
    /// The instance within it: `jet_0007`, `subsample_2` (or `all` for every point of the
    /// data), `graph_0`, `dataset_3`.
    pub instance: String,
    /// The data and how they are judged.
    pub data: InstanceData,
    /// Class per point when the data have them (pam50 subtype, usps digit, animals33 group,
    /// planted cluster, a file's label column): indices into [`Instance::classes`].
    pub labels: Option<Vec<usize>>,
    /// Class names (the legend of `labels`; empty without labels).
    pub classes: Vec<String>,
    /// Each point's name, as the data say it (a file's row, a sample id, an animal, a
    /// similarity matrix's header name, a jet's leaf): the leaf names of dendrograms and of the
    /// named Newick.
    pub names: Vec<String>,
}

/// The data of an instance.
#[derive(Clone, Debug, PartialEq)]
pub enum InstanceData {
    /// A Ginkgo jet: judged by the Ginkgo log-likelihood (`jet.model()`).
    Jet(Jet),
    /// Continuous points, row per point (judged by: HCC energy over centred correlations,
    /// Dasgupta cost over the similarity matrix, plus labelled metrics).
    Points {
        /// The points, one row each.
        x: Vec<Vec<f64>>,
        /// `n×n` row-major, symmetric, zero diagonal: Pearson correlations between the rows
        /// over their features ([`correlation_similarities`]).
        similarities: Vec<f64>,
    },
    /// A weighted graph (Dasgupta planted partition, a user's similarity or distance matrix):
    /// judged by Dasgupta's cost.
    Graph {
        /// `n×n` row-major, symmetric, zero diagonal.
        similarities: Vec<f64>,
        /// The distances the similarities were made from (`max(D) − D`), when the file held
        /// distances: `n×n` row-major, symmetric, zero diagonal. Average linkage runs on them.
        distances: Option<Vec<f64>>,
    },
}

impl Instance {
    /// A hash of the instance's data alone (the numbers, never a name): the same points,
    /// matrix or jet give the same hash under any dataset or instance name, so job seeds derived
    /// from it do not change when a user renames a run.
    pub fn content_hash(&self) -> u64 {
        let mut bytes: Vec<u8> = Vec::new();
        let mut push = |v: f64| bytes.extend_from_slice(&v.to_bits().to_le_bytes());
        match &self.data {
            InstanceData::Jet(jet) => {
                push(1.0); // what kind of data follows
                for v in [jet.t_cut, jet.lam, jet.lam_root, jet.m_hard] {
                    push(v);
                }
                for leaf in &jet.leaves {
                    leaf.iter().for_each(|&v| push(v));
                }
            }
            InstanceData::Points { x, .. } => {
                push(2.0); // what kind of data follows
                push(x.len() as f64);
                for row in x {
                    push(row.len() as f64);
                    row.iter().for_each(|&v| push(v));
                }
            }
            InstanceData::Graph {
                similarities,
                distances,
            } => {
                // What kind of data follows: similarities, or the distances they came from.
                match distances {
                    None => {
                        push(3.0);
                        similarities.iter().for_each(|&v| push(v));
                    }
                    Some(d) => {
                        push(4.0);
                        d.iter().for_each(|&v| push(v));
                    }
                }
            }
        }
        crate::experiment::staging::hash_bytes(&bytes)
    }

    /// Number of points (leaves).
    pub fn n(&self) -> usize {
        match &self.data {
            InstanceData::Jet(j) => j.leaves.len(),
            InstanceData::Points { x, .. } => x.len(),
            InstanceData::Graph { similarities, .. } => side(similarities.len()),
        }
    }

    /// The similarity matrix (`n×n` row-major) of points and graphs; `None` for a jet.
    pub fn similarities(&self) -> Option<&[f64]> {
        match &self.data {
            InstanceData::Jet(_) => None,
            InstanceData::Points { similarities, .. } | InstanceData::Graph { similarities, .. } => {
                Some(similarities)
            }
        }
    }

    /// The similarities as a [`WeightMatrix`] (at most 64 points); `None` for a jet.
    pub fn similarity_weights(&self) -> Option<Result<WeightMatrix, ModelError>> {
        self.similarities().map(|s| weight_matrix(self.n(), s))
    }

    /// For points: the correlations minus their mean over all pairs, so that both signs occur
    /// (the pam50 kind's `centred` weights, [`Pam50::correlation_weights`] with `centre`), the
    /// weights of the HCC energy; `n×n` row-major, zero diagonal. `None` for jets and graphs.
    pub fn centred_correlations(&self) -> Option<Vec<f64>> {
        let InstanceData::Points { similarities, .. } = &self.data else {
            return None;
        };
        let n = side(similarities.len());
        if n < 2 {
            return Some(similarities.clone());
        }
        // Summed row by row over the whole matrix (diagonal zeros included), as pam50 does.
        let mean = similarities.iter().sum::<f64>() / (n * (n - 1)) as f64;
        let mut out = similarities.clone();
        for a in 0..n {
            for b in 0..n {
                if a != b {
                    out[a * n + b] -= mean;
                }
            }
        }
        Some(out)
    }
}

/// The data sources as parsed from [`DatasetSpec::source`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Source {
    Ginkgo,
    Test100,
    Pam50,
    Animals33,
    Usps,
    Planted,
    CoalescentD1,
    File,
    Similarity,
    Distance,
}

impl Source {
    fn parse(s: &str) -> Option<Source> {
        Some(match s {
            "ginkgo" => Source::Ginkgo,
            "ginkgo_test100" => Source::Test100,
            "pam50" => Source::Pam50,
            "animals33" => Source::Animals33,
            "usps" => Source::Usps,
            "planted_partition" => Source::Planted,
            "coalescent_d1" => Source::CoalescentD1,
            "file" => Source::File,
            "similarity_matrix" => Source::Similarity,
            "distance_matrix" => Source::Distance,
            _ => return None,
        })
    }

    /// The default data folder, relative to the config's folder.
    fn default_folder(self) -> Option<&'static str> {
        match self {
            Source::Test100 => Some("../data/ginkgo_jets"),
            Source::Pam50 => Some("../data/pam50"),
            Source::Animals33 => Some("../data/animals33"),
            Source::Usps => Some("../data/usps"),
            _ => None,
        }
    }

    /// The keys (besides name and source) a dataset of this source may set.
    fn keys(self, json: bool) -> &'static [&'static str] {
        match self {
            Source::Ginkgo => &[
                "instances",
                "min_leaves",
                "max_leaves",
                "root_scale",
                "max_tries",
            ],
            Source::Test100 => &["instances", "path"],
            Source::Pam50 | Source::Animals33 | Source::Usps => {
                &["instances", "points", "path", "stratify"]
            }
            Source::Planted => &["instances", "points", "cluster_sizes", "p_in", "p_out"],
            Source::CoalescentD1 => &["instances", "points"],
            Source::File if json => &["instances", "path", "min_leaves", "max_leaves"],
            Source::File => &[
                "instances",
                "points",
                "path",
                "label_column",
                "names_column",
                "standardize",
                "stratify",
            ],
            Source::Similarity | Source::Distance => &["path"],
        }
    }
}

/// Whether a "file" path names a jets JSON (else a matrix).
fn is_json(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

/// The data path of a spec: its `path`, or the source's default folder.
fn data_path(spec: &DatasetSpec, source: Source) -> Option<PathBuf> {
    spec.path
        .clone()
        .or_else(|| source.default_folder().map(PathBuf::from))
}

/// Makes relative `path`s relative to the config's folder `base`; the bundled sources without a
/// `path` get their default folder (`../data/<folder>`) relative to it.
pub fn resolve_paths(specs: &mut [DatasetSpec], base: &Path) {
    for s in specs {
        if s.path.is_none() {
            if let Some(d) = Source::parse(&s.source).and_then(Source::default_folder) {
                s.path = Some(PathBuf::from(d));
            }
        }
        if let Some(p) = s.path.as_mut() {
            resolve(p, base);
        }
    }
}

/// Data files the instances read (for the run hash), in dataset order without repeats.
pub fn inputs(specs: &[DatasetSpec]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for s in specs {
        let Some(source) = Source::parse(&s.source) else {
            continue;
        };
        let Some(p) = data_path(s, source) else {
            continue;
        };
        let files = match source {
            Source::Test100 => vec![p.join("tree_100_n9.json")],
            Source::Pam50 => Pam50::files(&p).to_vec(),
            Source::Animals33 => vec![p.join("animals33_features.tsv")],
            Source::Usps => usps_files(&p).to_vec(),
            Source::File | Source::Similarity | Source::Distance => vec![p],
            Source::Ginkgo | Source::Planted | Source::CoalescentD1 => vec![],
        };
        for f in files {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

fn usps_files(dir: &Path) -> [PathBuf; 2] {
    [dir.join("usps_train.txt"), dir.join("usps_test.txt")]
}

/// `board.datasets[i].key`.
fn key(i: usize, k: &str) -> String {
    format!("board.datasets[{i}].{k}")
}

/// Checks a dataset list; one-line errors naming the key and the fix.
pub fn validate(specs: &[DatasetSpec]) -> Result<(), String> {
    if specs.is_empty() {
        return Err(
            "board.datasets is empty; add [[board.datasets]] entries with a name and a source"
                .into(),
        );
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, s) in specs.iter().enumerate() {
        let name = &s.name;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!(
                "{} = {name:?} must be a non-empty name of letters, digits, '_' or '-'",
                key(i, "name")
            ));
        }
        if let Some(j) = seen.insert(name.as_str(), i) {
            return Err(format!(
                "{} = {name:?} is also the name of board.datasets[{j}]; give every dataset its own name",
                key(i, "name")
            ));
        }
        checks::validate_one(i, s).map_err(|e| format!("{e} (dataset {name:?})"))?;
    }
    Ok(())
}

/// The planted clusters of a spec: `cluster_sizes`, or `points` (default 12) split into three
/// near-equal clusters, larger first.
fn planted_sizes(s: &DatasetSpec) -> Vec<usize> {
    if let Some(c) = &s.cluster_sizes {
        return c.clone();
    }
    match s.points {
        None => PLANTED_SIZES.to_vec(),
        Some(n) => (0..3).map(|c| n / 3 + usize::from(c < n % 3)).collect(),
    }
}

/// Every instance of the config's datasets, in a deterministic order (dataset order, then
/// instance index), all randomness from `seed` ([`dataset_seed`], [`instance_seed`]).
///
/// The specs should have passed [`validate`] (and [`resolve_paths`]; without it the bundled
/// sources read their default folders relative to the working directory). Errors name the
/// dataset and, where a key can fix them, the key.
pub fn instances(specs: &[DatasetSpec], seed: u64) -> Result<Vec<Instance>> {
    Ok(load(specs, seed)?.instances)
}

/// What a run read for one dataset: said on the terminal, kept in the manifest (`data_read`)
/// and shown on the report's pages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataRead {
    /// The dataset's name.
    pub dataset: String,
    /// What was read and what the methods ran on, in words: file, points, features, labels,
    /// instances.
    pub summary: String,
    /// What the reader decided that the data did not say (a header of numbers read as a point,
    /// a label column found by itself), one sentence each.
    pub notes: Vec<String>,
}

/// Every dataset's instances, what their filters dropped and what was read.
pub struct Loaded {
    /// The instances, dataset by dataset.
    pub instances: Vec<Instance>,
    /// What filters dropped (jets of a JSON file outside `min_leaves..=max_leaves`, duplicate
    /// USPS images), one record per dataset that drops any.
    pub dropped: Vec<Dropped>,
    /// One record per dataset.
    pub read: Vec<DataRead>,
}

/// [`instances`] with what their filters dropped on the way (jets of a JSON file outside
/// `min_leaves..=max_leaves`, duplicate USPS images), one record per dataset that drops any.
pub fn instances_and_dropped(
    specs: &[DatasetSpec],
    seed: u64,
) -> Result<(Vec<Instance>, Vec<Dropped>)> {
    let l = load(specs, seed)?;
    Ok((l.instances, l.dropped))
}

/// The datasets of `specs` under the master `seed` ([`Loaded`]).
pub fn load(specs: &[DatasetSpec], seed: u64) -> Result<Loaded> {
    let mut cache: HashMap<(Source, PathBuf, pool::Read), Rc<Pool>> = HashMap::new();
    let mut out = Vec::new();
    let mut dropped = Vec::new();
    let mut read = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        let source = Source::parse(&s.source).ok_or_else(|| {
            anyhow!(
                "{} = {:?} is not a known source",
                key(i, "source"),
                s.source
            )
        })?;
        let ds = dataset_seed(seed, i);
        let mut about = (String::new(), Vec::new());
        // One line: the dataset, then every cause.
        let made = dataset(i, s, source, ds, &mut cache, &mut dropped, &mut about).map_err(|e| {
            anyhow!(
                "board.datasets[{i}] ({:?}, source {:?}): {e:#}",
                s.name,
                s.source
            )
        })?;
        read.push(DataRead {
            dataset: s.name.clone(),
            summary: summary(&about.0, &made),
            notes: about.1,
        });
        out.extend(made);
    }
    Ok(Loaded {
        instances: out,
        dropped,
        read,
    })
}

/// "`about`; 3 instances of 20 points" (sizes as a range when they differ).
fn summary(about: &str, made: &[Instance]) -> String {
    let (lo, hi) = made.iter().fold((usize::MAX, 0), |(lo, hi), i| {
        (lo.min(i.n()), hi.max(i.n()))
    });
    let what = match made.first().map(|i| &i.data) {
        Some(InstanceData::Jet(_)) => "leaves",
        Some(InstanceData::Graph { .. }) => "vertices",
        _ => "points",
    };
    let sizes = if lo == hi {
        format!("{lo} {what}")
    } else {
        format!("{lo} to {hi} {what}")
    };
    let instances = match made.len() {
        1 => format!("1 instance of {sizes}"),
        k => format!("{k} instances of {sizes} each"),
    };
    if about.is_empty() {
        instances
    } else {
        format!("{about}; {instances}")
    }
}

fn dataset(
    i: usize,
    s: &DatasetSpec,
    source: Source,
    ds: u64,
    cache: &mut HashMap<(Source, PathBuf, pool::Read), Rc<Pool>>,
    dropped: &mut Vec<Dropped>,
    about: &mut (String, Vec<String>),
) -> Result<Vec<Instance>> {
    let path = data_path(s, source);
    let jets = |jets: Vec<Jet>| -> Vec<Instance> {
        jets.into_iter()
            .enumerate()
            .map(|(k, j)| Instance {
                dataset: s.name.clone(),
                instance: format!("jet_{k:04}"),
                names: (0..j.leaves.len()).map(|l| format!("leaf {l}")).collect(),
                data: InstanceData::Jet(j),
                labels: None,
                classes: Vec::new(),
            })
            .collect()
    };
    match source {
        Source::Ginkgo => {
            let (Some(lo), Some(hi)) = (s.min_leaves, s.max_leaves) else {
                bail!("{} and max_leaves are required", key(i, "min_leaves"));
            };
            let n = s.instances.unwrap_or(1);
            let params = GinkgoParams {
                root_scale: s.root_scale.unwrap_or(GinkgoParams::qcd().root_scale),
                ..GinkgoParams::qcd()
            };
            let tries = s.max_tries.unwrap_or(100 * n.max(100));
            let d = generate_dataset(&params, n, lo, hi, ds, tries, &s.name).map_err(|e| match e {
                JetError::TooFewJets { got, tries, .. } => anyhow!(
                    "the generator made {got} of {n} jets with {lo}..={hi} leaves in {tries} tries; widen min_leaves/max_leaves, raise {} or, for large jets, raise {} (e.g. 60000 for 20 to 50 leaves)",
                    key(i, "max_tries"),
                    key(i, "root_scale")
                ),
                other => other.into(),
            })?;
            about.0 = format!(
                "Ginkgo QCD jets generated with {lo}..={hi} leaves (root scale {})",
                params.root_scale
            );
            Ok(jets(d.jets))
        }
        Source::Test100 => {
            let file = path.context("no path")?.join("tree_100_n9.json");
            let d = JetDataset::load(&file)?;
            let n = s.instances.unwrap_or(d.jets.len());
            if n > d.jets.len() {
                bail!(
                    "{} = {n} but {} holds {} jets; lower it",
                    key(i, "instances"),
                    file.display(),
                    d.jets.len()
                );
            }
            about.0 = format!("{}: the first {n} of {} jets", file.display(), d.jets.len());
            Ok(jets(d.jets.into_iter().take(n).collect()))
        }
        Source::File if path.as_deref().is_some_and(is_json) => {
            let file = path.context("no path")?;
            let d = JetDataset::load(&file)?;
            let (lo, hi) = (s.min_leaves.unwrap_or(1), s.max_leaves.unwrap_or(64));
            let before = d.jets.len();
            let (kept, outside): (Vec<Jet>, Vec<Jet>) = d
                .jets
                .into_iter()
                .partition(|j| (lo..=hi).contains(&j.n_leaves));
            let names = outside
                .iter()
                .map(|j| format!("{} ({} leaves)", j.name, j.n_leaves))
                .collect();
            let why = format!(
                "{}: outside {}..=max_leaves = {lo}..={hi}",
                s.name,
                key(i, "min_leaves")
            );
            dropped.extend(Dropped::of("jets", &why, names));
            let n = s.instances.unwrap_or(kept.len());
            if kept.is_empty() || n > kept.len() {
                bail!(
                    "{} holds {} jets with {lo}..={hi} leaves ({before} in all), fewer than the {n} asked for; lower {} or widen min_leaves/max_leaves",
                    file.display(),
                    kept.len(),
                    key(i, "instances")
                );
            }
            about.0 = format!(
                "{}: {before} jets, {} with {lo}..={hi} leaves",
                file.display(),
                kept.len()
            );
            Ok(jets(kept.into_iter().take(n).collect()))
        }
        Source::Planted => {
            let sizes = planted_sizes(s);
            let (p_in, p_out) = (
                s.p_in.unwrap_or(PLANTED_P_IN),
                s.p_out.unwrap_or(PLANTED_P_OUT),
            );
            about.0 = format!("planted-partition graphs, clusters {sizes:?}, p_in {p_in}, p_out {p_out}");
            (0..s.instances.unwrap_or(1))
                .map(|k| {
                    let g = planted_partition(&sizes, p_in, p_out, instance_seed(ds, k))?;
                    let n = g.weights.len();
                    let similarities = (0..n * n).map(|e| g.weights.at(e / n, e % n)).collect();
                    Ok(Instance {
                        dataset: s.name.clone(),
                        instance: format!("graph_{k}"),
                        names: (0..n).map(|v| format!("vertex {v}")).collect(),
                        data: InstanceData::Graph {
                            similarities,
                            distances: None,
                        },
                        labels: Some(g.labels),
                        classes: (1..=sizes.len()).map(|c| format!("cluster {c}")).collect(),
                    })
                })
                .collect()
        }
        Source::CoalescentD1 => {
            let n = s.points.unwrap_or(D1_POINTS);
            let cov = hl_synthetic_covariance(D1_DIM, D1_NOISE);
            let w = cov.whitening()?;
            about.0 = format!("Henao & Lucas's synthetic set D1 ({D1_DIM} dimensions)");
            (0..s.instances.unwrap_or(1))
                .map(|k| {
                    let (_, x) = generate_with_whitening(n, &w, instance_seed(ds, k))?;
                    let names = (0..x.len()).map(|p| format!("point {p}")).collect();
                    points_instance(s, format!("dataset_{k}"), x, None, Vec::new(), names)
                })
                .collect()
        }
        Source::Similarity | Source::Distance => {
            let path = path.context("no path")?;
            let kind = if source == Source::Distance {
                similarity::Matrix::Distance
            } else {
                similarity::Matrix::Similarity
            };
            let read = similarity::instance(&s.name, &path, kind)?;
            about.0 = read.about;
            about.1 = read.notes;
            Ok(vec![read.instance])
        }
        Source::Pam50 | Source::Animals33 | Source::Usps | Source::File => {
            let path = path.context("no path")?;
            let read = pool::Read {
                label_column: s.label_column.clone(),
                names_column: s.names_column.clone(),
                standardize: s.standardize.unwrap_or(false),
            };
            let ck = (source, path.clone(), read.clone());
            let pool = match cache.get(&ck) {
                Some(p) => p.clone(),
                None => {
                    let p = Rc::new(load_pool(source, &path, &read)?);
                    let why = format!("{}: exact duplicates of an earlier image", s.name);
                    dropped.extend(Dropped::of("images", &why, p.dropped.clone()));
                    cache.insert(ck, p.clone());
                    p
                }
            };
            about.0 = pool.about.clone();
            about.1 = pool.notes.clone();
            subsamples(i, s, &pool, ds)
        }
    }
}
