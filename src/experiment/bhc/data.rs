//! The data sets of `[[bhc.datasets]]`: read, optionally standardised (over every row), and the
//! seeded random subsets of N rows the jobs run on.

use crate::data::matrix::{Column, MatrixSpec, PointMatrix};
use crate::experiment::board::data::{dataset_seed, instance_seed};
use anyhow::{Context, Result};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How a data set's file is read.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// `data/animals33/animals33_features.tsv`: the animal's name, then 0/1 features.
    Animals33,
    /// A table with a header (CSV or TSV by extension); `label_column` names the class column.
    Csv,
}

/// The cluster model (conjugate, [`crate::bhc`]).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ModelName {
    /// Binary features, Beta–Bernoulli per feature, the prior centred on the subset's feature
    /// frequencies with strength `strength` (default 2).
    BetaBernoulli,
    /// Real vectors, full-covariance Gaussian with the Normal–Inverse-Wishart prior centred on
    /// the subset (`m₀` its mean, `ν₀ = D + 2`, `S₀ = scale · diag(var)`), `kappa0` (default
    /// 0.1) and `scale` (default 0.25).
    NormalInverseWishart,
    /// Count vectors, a symmetric Dirichlet with `beta` (default 1) over the categories.
    DirichletMultinomial,
}

impl ModelName {
    /// The model's name in the tables.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelName::BetaBernoulli => "beta_bernoulli",
            ModelName::NormalInverseWishart => "normal_inverse_wishart",
            ModelName::DirichletMultinomial => "dirichlet_multinomial",
        }
    }

    /// The hyperparameter keys that apply to the model.
    fn keys(self) -> &'static [&'static str] {
        match self {
            ModelName::BetaBernoulli => &["strength"],
            ModelName::NormalInverseWishart => &["kappa0", "scale"],
            ModelName::DirichletMultinomial => &["beta"],
        }
    }
}

/// `[[bhc.datasets]]`: one data set and its model.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DatasetSpec {
    /// Its name in the tables, measures and figures (letters, digits, `_` and `-`).
    pub name: String,
    /// The file (relative to the config's folder).
    pub path: PathBuf,
    /// How to read it.
    pub format: Format,
    /// The class column of a `csv` table (not a feature; its classes are kept for the record).
    #[serde(default)]
    pub label_column: Option<String>,
    /// The cluster model.
    pub model: ModelName,
    /// Centre every column and scale it to unit variance over all rows before drawing subsets
    /// (`normal_inverse_wishart` only; default false).
    #[serde(default)]
    pub standardize: bool,
    /// `beta_bernoulli`: the prior's strength (default 2).
    #[serde(default)]
    pub strength: Option<f64>,
    /// `normal_inverse_wishart`: κ₀ (default 0.1).
    #[serde(default)]
    pub kappa0: Option<f64>,
    /// `normal_inverse_wishart`: the scale of `S₀` (default 0.25).
    #[serde(default)]
    pub scale: Option<f64>,
    /// `dirichlet_multinomial`: the symmetric Dirichlet's β (default 1).
    #[serde(default)]
    pub beta: Option<f64>,
}

/// Default `strength` of `beta_bernoulli`.
pub const STRENGTH: f64 = 2.0;
/// Default `kappa0` of `normal_inverse_wishart`.
pub const KAPPA0: f64 = 0.1;
/// Default `scale` of `normal_inverse_wishart`.
pub const SCALE: f64 = 0.25;
/// Default `beta` of `dirichlet_multinomial`.
pub const BETA: f64 = 1.0;

impl DatasetSpec {
    /// Checks the entry at position `i` of `bhc.datasets`.
    pub fn validate(&self, i: usize) -> Result<(), String> {
        let key = |k: &str| format!("bhc.datasets[{i}].{k}");
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!(
                "{} = {:?} must be letters, digits, '_' or '-' (it names the data set in measure ids)",
                key("name"),
                crate::data::clip(&self.name, 40)
            ));
        }
        if self.label_column.is_some() && self.format != Format::Csv {
            return Err(format!(
                "{} applies to format = \"csv\" only; remove it",
                key("label_column")
            ));
        }
        if self.standardize && self.model != ModelName::NormalInverseWishart {
            return Err(format!(
                "{} applies to model = \"normal_inverse_wishart\" only (binary and count data are taken as they are); remove it",
                key("standardize")
            ));
        }
        let given = [
            ("strength", self.strength),
            ("kappa0", self.kappa0),
            ("scale", self.scale),
            ("beta", self.beta),
        ];
        for (name, v) in given {
            let Some(v) = v else { continue };
            if !self.model.keys().contains(&name) {
                return Err(format!(
                    "{} does not apply to model = {:?} (its keys: {}); remove it",
                    key(name),
                    self.model.as_str(),
                    self.model.keys().join(", ")
                ));
            }
            if !(v > 0.0 && v.is_finite()) {
                return Err(format!("{} must be positive and finite", key(name)));
            }
        }
        Ok(())
    }

    /// The model's hyperparameters as `(name, value)`, defaults filled in.
    pub fn hyperparameters(&self) -> Vec<(&'static str, f64)> {
        match self.model {
            ModelName::BetaBernoulli => vec![("strength", self.strength.unwrap_or(STRENGTH))],
            ModelName::NormalInverseWishart => vec![
                ("kappa0", self.kappa0.unwrap_or(KAPPA0)),
                ("scale", self.scale.unwrap_or(SCALE)),
            ],
            ModelName::DirichletMultinomial => vec![("beta", self.beta.unwrap_or(BETA))],
        }
    }
}

/// A data set's rows, after standardising, with their classes where the file has them.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// One row per point.
    pub rows: Vec<Vec<f64>>,
    /// Each row's class (the label column), if any.
    pub classes: Option<Vec<String>>,
}

/// Reads data set `spec` (and standardises it when asked).
pub fn load(spec: &DatasetSpec) -> Result<Loaded> {
    let path = &spec.path;
    let m = match spec.format {
        Format::Animals33 => PointMatrix::animals33(path)?,
        Format::Csv => PointMatrix::load(
            path,
            &MatrixSpec {
                label_column: spec.label_column.clone().map(Column::Name),
                ..MatrixSpec::with_header()
            },
        )?,
    };
    let mut rows: Vec<Vec<f64>> = (0..m.n_points()).map(|i| m.row(i).to_vec()).collect();
    if rows.len() < 2 {
        anyhow::bail!(
            "data set {:?} ({}) has {} row(s); BHC needs at least 2",
            spec.name,
            path.display(),
            rows.len()
        );
    }
    if spec.standardize {
        crate::data::standardize(&mut rows);
    }
    let classes = match spec.format {
        Format::Animals33 => None,
        Format::Csv => m.labels.clone(),
    };
    Ok(Loaded { rows, classes })
}

/// The rows (sorted) of subset `s` of size `n` of data set number `d` of `total` rows, under
/// the master `seed`.
pub fn subset_rows(seed: u64, d: usize, n: usize, s: usize, total: usize) -> Result<Vec<usize>> {
    if n > total {
        anyhow::bail!("a subset of {n} points from {total} rows is impossible; lower bhc.sizes");
    }
    let mut rng = StdRng::seed_from_u64(instance_seed(dataset_seed(seed, d), n * 1000 + s));
    let mut idx = rand::seq::index::sample(&mut rng, total, n).into_vec();
    idx.sort_unstable();
    Ok(idx)
}

/// The rows `idx` of `loaded`.
pub fn pick(loaded: &Loaded, idx: &[usize]) -> Vec<Vec<f64>> {
    idx.iter().map(|&i| loaded.rows[i].clone()).collect()
}

/// Loads every data set of the list, naming the one that fails.
pub fn load_all(specs: &[DatasetSpec]) -> Result<Vec<Loaded>> {
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| load(s).with_context(|| format!("bhc.datasets[{i}] ({:?})", s.name)))
        .collect()
}
