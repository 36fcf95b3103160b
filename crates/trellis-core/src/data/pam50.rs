//! The pam50 breast-cancer expression data (`data/pam50/`, 232 samples × 50 genes, 139 with an
//! intrinsic subtype) as the Cluster Trellis paper used it: missing values filled with zeros,
//! a stratified subsample, and Pearson correlations between samples as edge weights.

use crate::model::weights::WeightMatrix;
use crate::model::ModelError;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::path::{Path, PathBuf};

/// Problems reading the pam50 files.
#[derive(Debug, thiserror::Error)]
pub enum Pam50Error {
    /// A file could not be read.
    #[error("cannot read {path}: {source} (check the path)")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A malformed line.
    #[error("{path} line {line}: {msg}")]
    Format {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong and how to fix it.
        msg: String,
    },
    /// The weights could not be formed.
    #[error("weights: {0}")]
    Weights(#[from] ModelError),
    /// The subsample asked for is too small or too large (the message names the keys to change).
    #[error("{0}")]
    Subsample(String),
}

/// Expression values and subtype labels.
#[derive(Clone, Debug)]
pub struct Pam50 {
    /// Sample names, in file order.
    pub samples: Vec<String>,
    /// Gene names, in file order.
    pub genes: Vec<String>,
    /// `values[s][g]`, `None` where missing.
    pub values: Vec<Vec<Option<f64>>>,
    /// Intrinsic subtype per sample (`None` if unknown).
    pub subtypes: Vec<Option<String>>,
}

fn read(path: &Path) -> Result<String, Pam50Error> {
    // A regular file of at most 256 MiB (the pam50 files are about 100 KiB).
    super::read_text_limited(path, 256 << 20).map_err(|source| Pam50Error::Io {
        path: path.display().to_string(),
        source,
    })
}

impl Pam50 {
    /// The two files [`Pam50::load`] reads from `dir`: the expression values and the labels.
    pub fn files(dir: &Path) -> [PathBuf; 2] {
        [
            dir.join("pam50_unc232_expr.tsv"),
            dir.join("pam50_unc232_labels.tsv"),
        ]
    }

    /// Reads the files in `dir` ([`Pam50::load`]) and draws the stratified subsample
    /// ([`Pam50::stratified_subsample`]: `per_class` samples of every known subtype, then
    /// `unlabelled` without one, with `seed`); returns the data and the chosen sample indices.
    ///
    /// A subsample of fewer than 2 or more than `max_samples` samples (the exact trellis's
    /// limit, `methods.max_exact_leaves`) is an error naming `{section}.per_class` and
    /// `{section}.unlabelled`, with `section` the caller's config section (e.g. `"pam50"`).
    pub fn load_subsample(
        dir: &Path,
        per_class: usize,
        unlabelled: usize,
        seed: u64,
        max_samples: usize,
        section: &str,
    ) -> Result<(Pam50, Vec<usize>), Pam50Error> {
        let data = Pam50::load(dir)?;
        let idx = data.stratified_subsample(per_class, unlabelled, seed);
        let n = idx.len();
        if n < 2 {
            return Err(Pam50Error::Subsample(format!(
                "the pam50 subsample has {n} sample(s); raise {section}.per_class or {section}.unlabelled"
            )));
        }
        if n > max_samples {
            return Err(Pam50Error::Subsample(format!(
                "the pam50 subsample has {n} samples, above methods.max_exact_leaves = {max_samples}; lower {section}.per_class or {section}.unlabelled"
            )));
        }
        Ok((data, idx))
    }

    /// Reads `pam50_unc232_expr.tsv` and `pam50_unc232_labels.tsv` from `dir`, checking that
    /// every row has one value per gene (numbers or `NA`) and that both files list the same
    /// samples in the same order.
    pub fn load(dir: &Path) -> Result<Pam50, Pam50Error> {
        let [expr_path, label_path] = Pam50::files(dir);
        let (expr, labels) = (read(&expr_path)?, read(&label_path)?);
        Pam50::parse(
            &expr,
            &labels,
            &expr_path.display().to_string(),
            &label_path.display().to_string(),
        )
    }

    /// Parses the two files' texts (as [`Pam50::load`] reads them); the names are used in
    /// errors.
    pub fn parse(
        expr: &str,
        labels: &str,
        expr_path: &str,
        label_path: &str,
    ) -> Result<Pam50, Pam50Error> {
        let err = |path: &str, line: usize, msg: String| Pam50Error::Format {
            path: path.to_string(),
            line,
            msg,
        };
        let mut lines = expr.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
        if header.first() != Some(&"sample") || header.len() < 2 {
            return Err(err(
                expr_path,
                1,
                "the header must be `sample` then the gene names, tab-separated".into(),
            ));
        }
        let genes: Vec<String> = header[1..].iter().map(|s| s.to_string()).collect();
        let (mut samples, mut values) = (Vec::new(), Vec::new());
        for (k, line) in lines.enumerate() {
            let fields: Vec<&str> = line.split('\t').collect();
            if fields.len() != genes.len() + 1 {
                return Err(err(
                    expr_path,
                    k + 2,
                    format!(
                        "{} columns, expected {} (sample + {} genes); a column is missing or extra",
                        fields.len(),
                        genes.len() + 1,
                        genes.len()
                    ),
                ));
            }
            let mut row = Vec::with_capacity(genes.len());
            for (g, f) in fields[1..].iter().enumerate() {
                row.push(match *f {
                    "NA" | "" => None,
                    v => {
                        let x: f64 = v.parse().map_err(|_| {
                            err(
                                expr_path,
                                k + 2,
                                format!(
                                    "gene {} value {:?} is not a number or NA",
                                    super::clip(&genes[g], 40),
                                    super::clip(v, 40)
                                ),
                            )
                        })?;
                        if !x.is_finite() || x.abs() > super::MAX_ABS_VALUE {
                            return Err(err(
                                expr_path,
                                k + 2,
                                format!(
                                    "gene {} value {} is not a finite number within ±1e100; rescale the data",
                                    super::clip(&genes[g], 40),
                                    super::clip(v, 40)
                                ),
                            ));
                        }
                        Some(x)
                    }
                });
            }
            samples.push(fields[0].to_string());
            values.push(row);
        }
        let mut subtypes = Vec::with_capacity(samples.len());
        let mut lines = labels.lines();
        lines.next();
        for (k, line) in lines.enumerate() {
            let fields: Vec<&str> = line.split('\t').collect();
            if fields.len() < 2 || samples.get(k).map(String::as_str) != Some(fields[0]) {
                return Err(err(
                    label_path,
                    k + 2,
                    format!(
                        "expected sample {:?} (same order as the expression file)",
                        samples.get(k)
                    ),
                ));
            }
            subtypes.push(match fields[1] {
                "NA" | "" => None,
                s => Some(s.to_string()),
            });
        }
        if subtypes.len() != samples.len() {
            return Err(err(
                label_path,
                subtypes.len() + 2,
                format!("{} labels for {} samples", subtypes.len(), samples.len()),
            ));
        }
        Ok(Pam50 {
            samples,
            genes,
            values,
            subtypes,
        })
    }

    /// Fraction of missing values.
    pub fn missing_fraction(&self) -> f64 {
        let missing: usize = self
            .values
            .iter()
            .map(|r| r.iter().filter(|v| v.is_none()).count())
            .sum();
        missing as f64 / (self.samples.len() * self.genes.len()) as f64
    }

    /// The subtype of sample `i` (`None` if unknown or not listed).
    fn subtype(&self, i: usize) -> Option<&str> {
        self.subtypes.get(i).and_then(|s| s.as_deref())
    }

    /// The subtypes present, sorted.
    pub fn classes(&self) -> Vec<String> {
        let mut c: Vec<String> = self.subtypes.iter().flatten().cloned().collect();
        c.sort();
        c.dedup();
        c
    }

    /// A stratified subsample: `per_class` samples of every known subtype and `unlabelled`
    /// samples without one, drawn with `seed`; indices in that order (classes sorted by name).
    pub fn stratified_subsample(
        &self,
        per_class: usize,
        unlabelled: usize,
        seed: u64,
    ) -> Vec<usize> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut out = Vec::new();
        let mut pick = |mut pool: Vec<usize>, k: usize, out: &mut Vec<usize>| {
            pool.shuffle(&mut rng);
            let mut chosen: Vec<usize> = pool.into_iter().take(k).collect();
            chosen.sort();
            out.extend(chosen);
        };
        for c in self.classes() {
            let pool = (0..self.samples.len())
                .filter(|&i| self.subtype(i) == Some(c.as_str()))
                .collect();
            pick(pool, per_class, &mut out);
        }
        let pool = (0..self.samples.len())
            .filter(|&i| self.subtype(i).is_none())
            .collect();
        pick(pool, unlabelled, &mut out);
        out
    }

    /// The expression profiles of the chosen samples, missing values filled with zeros (as the
    /// paper did); errors for an index that is not a sample.
    pub fn filled_rows(&self, idx: &[usize]) -> Result<Vec<Vec<f64>>, Pam50Error> {
        idx.iter()
            .map(|&i| {
                let row = self.values.get(i).ok_or_else(|| {
                    Pam50Error::Subsample(format!(
                        "sample index {i} is out of range: there are {} samples; pick indices below that",
                        self.values.len()
                    ))
                })?;
                Ok(row.iter().map(|v| v.unwrap_or(0.0)).collect())
            })
            .collect()
    }

    /// [`Pam50::filled_rows`] for at most 64 samples (the weights' limit), checked before any
    /// work.
    fn weight_rows(&self, idx: &[usize]) -> Result<Vec<Vec<f64>>, Pam50Error> {
        if idx.len() > crate::subset::Subset::MAX_LEAVES {
            return Err(ModelError::TooLarge { n: idx.len() }.into());
        }
        self.filled_rows(idx)
    }

    /// Pearson correlations between the chosen samples over the genes, missing values filled
    /// with zeros (as the paper did). With `centre`, the mean off-diagonal correlation is
    /// subtracted so that both signs occur (the paper's "transformed" weights).
    pub fn correlation_weights(
        &self,
        idx: &[usize],
        centre: bool,
    ) -> Result<WeightMatrix, Pam50Error> {
        let rows = self.weight_rows(idx)?;
        let k = rows.len();
        let mut w = vec![vec![0.0; k]; k];
        for a in 0..k {
            for b in a + 1..k {
                let r = pearson(&rows[a], &rows[b]);
                w[a][b] = r;
                w[b][a] = r;
            }
        }
        if centre && k > 1 {
            let mean = w.iter().flatten().sum::<f64>() / (k * (k - 1)) as f64;
            for (a, row) in w.iter_mut().enumerate() {
                for (b, v) in row.iter_mut().enumerate() {
                    if a != b {
                        *v -= mean;
                    }
                }
            }
        }
        Ok(WeightMatrix::new(w)?)
    }
}

/// The length scale `h` of the affinities `exp(-d / h)` of [`Pam50::distance_affinities`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bandwidth {
    /// A fixed `h` (the flat-trellis paper's preprocessing is `h = 1`).
    Fixed(f64),
    /// The median pairwise distance of the chosen samples.
    Median,
}

impl Pam50 {
    /// Affinities `exp(-d_ij / h)` from the Euclidean distances `d_ij` between the chosen samples
    /// over the genes (missing values filled with zeros), with the mean over all pairs subtracted
    /// when `centre` is set so that both signs occur (the flat cluster trellis paper's
    /// preprocessing, with `h = 1`). Diagonal 0.
    pub fn distance_affinities(
        &self,
        idx: &[usize],
        bandwidth: Bandwidth,
        centre: bool,
    ) -> Result<WeightMatrix, Pam50Error> {
        let rows = self.weight_rows(idx)?;
        let k = rows.len();
        let dist = |a: usize, b: usize| {
            rows[a]
                .iter()
                .zip(&rows[b])
                .map(|(x, y)| (x - y) * (x - y))
                .sum::<f64>()
                .sqrt()
        };
        let mut pairs: Vec<f64> = Vec::new();
        for a in 0..k {
            for b in a + 1..k {
                pairs.push(dist(a, b));
            }
        }
        let h = match bandwidth {
            Bandwidth::Fixed(h) => h,
            Bandwidth::Median => {
                let mut d = pairs.clone();
                d.sort_by(f64::total_cmp);
                match d.len() {
                    0 => 1.0,
                    n if n % 2 == 1 => d[n / 2],
                    n => 0.5 * (d[n / 2 - 1] + d[n / 2]),
                }
            }
        };
        let values: Vec<f64> = pairs.iter().map(|d| (-d / h).exp()).collect();
        let mean = if centre && !values.is_empty() {
            values.iter().sum::<f64>() / values.len() as f64
        } else {
            0.0
        };
        // Pairs in the order they were computed (row by row, i < j), as `weights_from` asks.
        let mut it = values.into_iter();
        Ok(crate::data::graphs::weights_from(k, |_, _| {
            it.next().unwrap_or(f64::NAN) - mean
        })?)
    }
}

/// Pearson correlation of two equally long vectors (0 if either is constant).
pub fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
}
