//! The points: the four-cluster generator (Figure 5), animals33 with our group table (Figure 7),
//! pam50, USPS and a user's matrix, optionally subsampled, standardised and reduced to principal
//! components; and the checks every model makes of them before anything is written.

use super::{Centres, DataSection, ModelSpec, Observation, Source, MAX_POINTS};
use crate::data::matrix::{MatrixSpec, PointMatrix};
use crate::data::pam50::Pam50;
use crate::pydt::probit::Binary;
use crate::pydt::Leaves;
use anyhow::{bail, Context, Result};
use nalgebra::DMatrix;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use std::path::PathBuf;

/// Our assignment of the 33 animals to the groups the paper colours (built in; see the file).
pub const ANIMAL_GROUPS: &str = include_str!("animals33_groups.tsv");

/// Defaults of the four-cluster generator.
pub const PER_CLUSTER: usize = 10;
/// Standard deviation of each coordinate around its centre.
pub const SPREAD: f64 = 0.25;
/// Distance between neighbouring centres.
pub const SEPARATION: f64 = 2.0;
/// Dimension.
pub const DIM: usize = 3;

/// Points with names and groups.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// The points (after subsampling, standardising and projecting).
    pub rows: Vec<Vec<f64>>,
    /// Leaf names.
    pub names: Vec<String>,
    /// Each point's group (index into `group_names`), `None` when unknown.
    pub group: Vec<Option<usize>>,
    /// Group names (legend order).
    pub group_names: Vec<String>,
}

impl Dataset {
    /// Number of features.
    pub fn dim(&self) -> usize {
        self.rows.first().map_or(0, Vec::len)
    }

    /// Every point's group, if every point has one.
    pub fn labels(&self) -> Option<Vec<usize>> {
        self.group.iter().copied().collect()
    }

    /// The points `idx` (in that order).
    pub fn select(&self, idx: &[usize]) -> Dataset {
        Dataset {
            rows: idx.iter().map(|&i| self.rows[i].clone()).collect(),
            names: idx.iter().map(|&i| self.names[i].clone()).collect(),
            group: idx.iter().map(|&i| self.group[i]).collect(),
            group_names: self.group_names.clone(),
        }
    }
}

/// The files the data section reads.
pub fn inputs(d: &DataSection) -> Vec<PathBuf> {
    let mut out = Vec::new();
    match (d.source, &d.path) {
        (Source::FourClusters, _) | (_, None) => {}
        (Source::Pam50, Some(dir)) => out.extend(Pam50::files(dir)),
        (_, Some(p)) => out.push(p.clone()),
    }
    out.extend(d.groups.clone());
    out
}

/// The config checks of `[pydt.data]`.
pub fn validate(d: &DataSection) -> Result<(), String> {
    let src = d.source.name();
    let not_for = |key: &str, set: bool, only: &str| -> Result<(), String> {
        if set {
            Err(format!(
                "pydt.data.{key} applies to {only} only, not source = \"{src}\"; remove it"
            ))
        } else {
            Ok(())
        }
    };
    let generated = d.source == Source::FourClusters;
    for (key, set) in [
        ("per_cluster", d.per_cluster.is_some()),
        ("spread", d.spread.is_some()),
        ("separation", d.separation.is_some()),
        ("dim", d.dim.is_some()),
        ("centres", d.centres.is_some()),
    ] {
        not_for(key, set && !generated, "source = \"four_clusters\"")?;
    }
    not_for(
        "label_column",
        d.label_column.is_some() && d.source != Source::File,
        "source = \"file\"",
    )?;
    not_for(
        "groups",
        d.groups.is_some() && d.source != Source::Animals33,
        "source = \"animals33\"",
    )?;
    let continuous_keys = !matches!(d.source, Source::Pam50 | Source::Usps | Source::File);
    for (key, set) in [
        ("points", d.points.is_some()),
        ("deduplicate", d.deduplicate.is_some()),
        ("standardize", d.standardize.is_some()),
        ("components", d.components.is_some()),
    ] {
        not_for(
            key,
            set && continuous_keys,
            "source = \"pam50\", \"usps\" or \"file\"",
        )?;
    }
    if generated {
        not_for("path", d.path.is_some(), "sources read from files")?;
        let per = d.per_cluster.unwrap_or(PER_CLUSTER);
        if !(2..=MAX_POINTS / 4).contains(&per) {
            return Err(format!(
                "pydt.data.per_cluster = {per} must be in 2..={} (four clusters of that many points)",
                MAX_POINTS / 4
            ));
        }
        for (key, v) in [
            ("spread", d.spread.unwrap_or(SPREAD)),
            ("separation", d.separation.unwrap_or(SEPARATION)),
        ] {
            if !(v.is_finite() && v > 0.0 && v < 1e6) {
                return Err(format!(
                    "pydt.data.{key} = {v} must be a positive number below 1e6"
                ));
            }
        }
        let dim = d.dim.unwrap_or(DIM);
        let min = match d.centres.unwrap_or(Centres::Tetrahedron) {
            Centres::Tetrahedron => 3,
            Centres::Square => 2,
        };
        if !(min..=1000).contains(&dim) {
            return Err(format!(
                "pydt.data.dim = {dim} must be in {min}..=1000 for these centres (a regular tetrahedron needs 3 dimensions, a square 2)"
            ));
        }
        return Ok(());
    }
    if d.path.is_none() {
        let example = match d.source {
            Source::Animals33 => "\"../data/animals33/animals33_features.tsv\"",
            Source::Pam50 => "\"../data/pam50\" (the folder)",
            Source::Usps => "\"../data/usps/usps_train.txt\"",
            _ => "\"my_points.csv\"",
        };
        return Err(format!(
            "pydt.data.path is missing; source = \"{src}\" reads it (e.g. path = {example})"
        ));
    }
    if let Some(p) = d.points {
        if !(3..=MAX_POINTS).contains(&p) {
            return Err(format!(
                "pydt.data.points = {p} must be in 3..={MAX_POINTS}"
            ));
        }
    }
    if let Some(k) = d.components {
        if !(1..=10_000).contains(&k) {
            return Err(format!(
                "pydt.data.components = {k} must be in 1..=10000 (principal components kept)"
            ));
        }
    }
    Ok(())
}

/// The data of replicate `r`: a new draw for `four_clusters`, the same points otherwise. Every
/// model's observation of them is checked (finite values, 0/1 for probit, no duplicate points
/// for exact leaves).
pub fn load(d: &DataSection, models: &[ModelSpec], seed: u64, r: usize) -> Result<Dataset> {
    let data = match d.source {
        Source::FourClusters => four_clusters(d, super::stream(seed, 1, r, 0)),
        Source::Animals33 => animals33(d)?,
        Source::Pam50 | Source::Usps | Source::File => {
            let raw = read_continuous(d)?;
            preprocess(d, raw, super::stream(seed, 2, 0, 0))?
        }
    };
    if data.rows.len() < 3 {
        bail!(
            "pydt.data: {} point(s); the experiments need at least 3",
            data.rows.len()
        );
    }
    if data.rows.len() > MAX_POINTS {
        bail!(
            "pydt.data: {} points, more than {MAX_POINTS}; set pydt.data.points to draw a subset",
            data.rows.len()
        );
    }
    check_models(&data, models)?;
    Ok(data)
}

/// Each model's observation of the data, or a one-line error naming the model and the fix.
pub fn check_models(data: &Dataset, models: &[ModelSpec]) -> Result<()> {
    for m in models {
        let what = || format!("pydt.data as model {:?} observes it", m.name);
        match m.observation {
            Observation::Probit => {
                Binary::from_rows(&data.rows).with_context(what)?;
            }
            Observation::Gaussian => {
                let leaves = Leaves::with_noise(&data.rows, m.noise).with_context(what)?;
                if let Some((i, j)) = leaves.duplicate_exact_rows() {
                    bail!(
                        "pydt.data: points {i} ({}) and {j} ({}) are identical, which makes model {:?}'s posterior improper with exact leaves; set pydt.data.deduplicate = true, remove duplicates from the file or give the model a noise > 0",
                        data.names[i],
                        data.names[j],
                        m.name
                    );
                }
            }
        }
    }
    Ok(())
}

/// Four Gaussian clusters around the configured centres, `per_cluster` points each (cluster by
/// cluster; every coordinate N(centre, spread²)).
fn four_clusters(d: &DataSection, seed: u64) -> Dataset {
    let per = d.per_cluster.unwrap_or(PER_CLUSTER);
    let spread = d.spread.unwrap_or(SPREAD);
    let sep = d.separation.unwrap_or(SEPARATION);
    let dim = d.dim.unwrap_or(DIM);
    let centres: Vec<Vec<f64>> = match d.centres.unwrap_or(Centres::Tetrahedron) {
        Centres::Tetrahedron => {
            // Alternate cube corners: every pair is 2√2 apart before scaling.
            let s = sep / (2.0 * std::f64::consts::SQRT_2);
            [
                [1.0, 1.0, 1.0],
                [1.0, -1.0, -1.0],
                [-1.0, 1.0, -1.0],
                [-1.0, -1.0, 1.0],
            ]
            .iter()
            .map(|v| v.iter().map(|x| x * s).collect())
            .collect()
        }
        Centres::Square => {
            let s = sep / 2.0;
            [[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]]
                .iter()
                .map(|v| v.iter().map(|x| x * s).collect())
                .collect()
        }
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let letters = ["A", "B", "C", "D"];
    let mut out = Dataset {
        rows: Vec::new(),
        names: Vec::new(),
        group: Vec::new(),
        group_names: letters.iter().map(|l| l.to_string()).collect(),
    };
    for (k, c) in centres.iter().enumerate() {
        for i in 0..per {
            let row: Vec<f64> = (0..dim)
                .map(|j| {
                    let z: f64 = StandardNormal.sample(&mut rng);
                    c.get(j).copied().unwrap_or(0.0) + spread * z
                })
                .collect();
            out.rows.push(row);
            out.names.push(format!("{}{}", letters[k], i + 1));
            out.group.push(Some(k));
        }
    }
    out
}

/// The group table: `animal<TAB>group` lines after a header; groups in order of appearance.
pub fn parse_groups(text: &str, source: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (k, line) in text.lines().enumerate().skip(1) {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = line.split('\t').collect();
        if cells.len() != 2 || cells[0].trim().is_empty() || cells[1].trim().is_empty() {
            bail!(
                "{source} line {}: expected two tab-separated cells, the animal and its group",
                k + 1
            );
        }
        out.push((cells[0].trim().to_string(), cells[1].trim().to_string()));
    }
    Ok(out)
}

fn animals33(d: &DataSection) -> Result<Dataset> {
    let path = d.path.as_ref().context("pydt.data.path is missing")?;
    let m = PointMatrix::animals33(path)?;
    let names = m
        .labels
        .clone()
        .with_context(|| format!("{} has no animal column", path.display()))?;
    let (text, source) = match &d.groups {
        Some(p) => (
            crate::data::read_text_limited(p, 1 << 20)
                .with_context(|| format!("cannot read the group table {}", p.display()))?,
            p.display().to_string(),
        ),
        None => (
            ANIMAL_GROUPS.to_string(),
            "the built-in animals33 group table".to_string(),
        ),
    };
    let table = parse_groups(&text, &source)?;
    let mut group_names: Vec<String> = Vec::new();
    for (_, g) in &table {
        if !group_names.contains(g) {
            group_names.push(g.clone());
        }
    }
    let mut group = Vec::new();
    for name in &names {
        let g = table
            .iter()
            .find(|(a, _)| a.eq_ignore_ascii_case(name))
            .with_context(|| {
                format!("{source} has no group for the animal {name:?}; add a line \"{name}<TAB>group\"")
            })?;
        group.push(group_names.iter().position(|x| *x == g.1));
    }
    Ok(Dataset {
        rows: (0..m.n_points()).map(|i| m.row(i).to_vec()).collect(),
        names,
        group,
        group_names,
    })
}

/// Points, names and group labels as read (before preprocessing).
fn read_continuous(d: &DataSection) -> Result<Dataset> {
    let path = d.path.as_ref().context("pydt.data.path is missing")?;
    let (rows, names, labels): (Vec<Vec<f64>>, Vec<String>, Vec<Option<String>>) = match d.source {
        Source::Pam50 => {
            let p = Pam50::load(path)?;
            let idx: Vec<usize> = (0..p.samples.len()).collect();
            // Missing values (2.6% of the bundled file) are filled with zeros, as the loader does
            // for the Cluster Trellis paper's experiments.
            (p.filled_rows(&idx)?, p.samples.clone(), p.subtypes.clone())
        }
        Source::Usps | Source::File => {
            let m = if d.source == Source::Usps {
                PointMatrix::usps(path)?
            } else {
                PointMatrix::load(
                    path,
                    &MatrixSpec {
                        header: true,
                        label_column: d.label_column.clone(),
                        ..MatrixSpec::default()
                    },
                )?
            };
            let rows: Vec<Vec<f64>> = (0..m.n_points()).map(|i| m.row(i).to_vec()).collect();
            let labels: Vec<Option<String>> = match &m.labels {
                Some(l) => l.iter().map(|s| Some(s.clone())).collect(),
                None => vec![None; rows.len()],
            };
            let names = labels
                .iter()
                .enumerate()
                .map(|(i, l)| match l {
                    Some(l) => format!("{l}_{i}"),
                    None => format!("p{i}"),
                })
                .collect();
            (rows, names, labels)
        }
        _ => bail!("not a continuous source"),
    };
    let mut group_names: Vec<String> = labels.iter().flatten().cloned().collect();
    group_names.sort();
    group_names.dedup();
    if group_names.iter().all(|g| g.trim().parse::<f64>().is_ok()) {
        group_names.sort_by(|a, b| {
            let (x, y): (f64, f64) = (
                a.trim().parse().unwrap_or(0.0),
                b.trim().parse().unwrap_or(0.0),
            );
            x.total_cmp(&y).then_with(|| a.cmp(b))
        });
    }
    let group = labels
        .iter()
        .map(|l| {
            l.as_ref()
                .and_then(|l| group_names.iter().position(|g| g == l))
        })
        .collect();
    Ok(Dataset {
        rows,
        names,
        group,
        group_names,
    })
}

/// Deduplicate, subsample, standardise, project onto principal components (in that order).
fn preprocess(d: &DataSection, data: Dataset, seed: u64) -> Result<Dataset> {
    let data = if d.deduplicate == Some(true) {
        let mut seen = std::collections::HashSet::new();
        let keep: Vec<usize> = (0..data.rows.len())
            .filter(|&i| {
                seen.insert(
                    data.rows[i]
                        .iter()
                        .map(|v| (v + 0.0).to_bits())
                        .collect::<Vec<u64>>(),
                )
            })
            .collect();
        data.select(&keep)
    } else {
        data
    };
    let n = data.rows.len();
    let mut data = match d.points {
        Some(k) if k < n => {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut idx = rand::seq::index::sample(&mut rng, n, k).into_vec();
            idx.sort_unstable();
            data.select(&idx)
        }
        Some(k) if k > n => bail!(
            "pydt.data.points = {k} but the data have {n} points; lower it or remove it to use all"
        ),
        _ => data,
    };
    if d.standardize == Some(true) {
        standardize(&mut data.rows);
    }
    if let Some(k) = d.components {
        let dim = data.dim();
        if k > dim {
            bail!(
                "pydt.data.components = {k} but the points have {dim} features; lower it to at most {dim}"
            );
        }
        data.rows = principal_components(&data.rows, k);
    }
    Ok(data)
}

pub use crate::data::standardize;

/// Scores on the first `k` principal components of the centred rows (eigenvectors of the
/// covariance, largest eigenvalue first, each signed so its largest-magnitude loading is
/// positive).
pub fn principal_components(rows: &[Vec<f64>], k: usize) -> Vec<Vec<f64>> {
    let n = rows.len();
    let d = rows.first().map_or(0, Vec::len);
    let mean: Vec<f64> = (0..d)
        .map(|j| rows.iter().map(|r| r[j]).sum::<f64>() / n.max(1) as f64)
        .collect();
    let x = DMatrix::from_fn(n, d, |i, j| rows[i][j] - mean[j]);
    let cov = x.transpose() * &x / n.max(1) as f64;
    let eig = cov.symmetric_eigen();
    let mut order: Vec<usize> = (0..d).collect();
    order.sort_by(|&a, &b| {
        eig.eigenvalues[b]
            .total_cmp(&eig.eigenvalues[a])
            .then(a.cmp(&b))
    });
    let mut out = vec![vec![0.0; k]; n];
    for (c, &e) in order.iter().take(k).enumerate() {
        let v = eig.eigenvectors.column(e);
        let big = (0..d).fold(0, |b, j| if v[j].abs() > v[b].abs() { j } else { b });
        let sign = if v[big] < 0.0 { -1.0 } else { 1.0 };
        for (i, o) in out.iter_mut().enumerate() {
            o[c] = sign * (0..d).map(|j| x[(i, j)] * v[j]).sum::<f64>();
        }
    }
    out
}
