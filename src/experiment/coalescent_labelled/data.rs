//! The labelled points and the class-balanced random subsets drawn from them.

use super::{DataSection, Source};
use crate::data::matrix::{MatrixSpec, PointMatrix};
use anyhow::{bail, Context, Result};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::HashSet;

/// Points with a class each.
#[derive(Debug, Clone, PartialEq)]
pub struct Labelled {
    /// The points (rows, as read; exact duplicates after the first removed).
    pub rows: Vec<Vec<f64>>,
    /// Each point's row in the input (0-based over the files in order, before removing
    /// duplicates).
    pub source_row: Vec<usize>,
    /// Each point's class index into `classes`.
    pub class: Vec<usize>,
    /// Class names, in numeric order when every name is a number, else in text order.
    pub classes: Vec<String>,
    /// Exact duplicate rows removed (two identical points make the coalescent's merge-time
    /// density improper).
    pub duplicates_removed: usize,
    /// Which rows (0-based, over the files in order) were dropped as duplicates.
    pub duplicate_rows: Vec<usize>,
}

impl Labelled {
    /// Builds from points and label strings: classes ordered, duplicates removed.
    pub fn new(points: Vec<Vec<f64>>, labels: Vec<String>) -> Result<Labelled> {
        let mut classes: Vec<String> = labels.clone();
        classes.sort();
        classes.dedup();
        if classes.iter().all(|c| c.trim().parse::<f64>().is_ok()) {
            classes.sort_by(|a, b| {
                let (x, y): (f64, f64) = (a.trim().parse().unwrap_or(0.0), b.trim().parse().unwrap_or(0.0));
                x.total_cmp(&y).then_with(|| a.cmp(b))
            });
        }
        if classes.len() < 2 {
            bail!(
                "the data have {} class(es); ARI curves and subtree scores need at least two labels",
                classes.len()
            );
        }
        let mut seen: HashSet<Vec<u64>> = HashSet::new();
        let mut out = Labelled {
            rows: Vec::new(),
            source_row: Vec::new(),
            class: Vec::new(),
            classes,
            duplicates_removed: 0,
            duplicate_rows: Vec::new(),
        };
        for (i, (p, l)) in points.into_iter().zip(labels).enumerate() {
            // +0.0 and -0.0 are the same point.
            let key: Vec<u64> = p.iter().map(|v| (v + 0.0).to_bits()).collect();
            if !seen.insert(key) {
                out.duplicates_removed += 1;
                out.duplicate_rows.push(i);
                continue;
            }
            let c = out.classes.iter().position(|x| *x == l).unwrap_or(0);
            out.rows.push(p);
            out.source_row.push(i);
            out.class.push(c);
        }
        Ok(out)
    }

    /// Number of features.
    pub fn dim(&self) -> usize {
        self.rows.first().map_or(0, Vec::len)
    }
}

/// Reads the section's files.
pub fn load(d: &DataSection) -> Result<Labelled> {
    let mut points = Vec::new();
    let mut labels = Vec::new();
    for path in &d.paths {
        let m = match d.source {
            Source::Usps => PointMatrix::usps(path)?,
            Source::File => PointMatrix::load(
                path,
                &MatrixSpec {
                    header: true,
                    label_column: d.label_column.clone(),
                    ..MatrixSpec::default()
                },
            )?,
        };
        let ls = m
            .labels
            .clone()
            .with_context(|| format!("{} has no label column", path.display()))?;
        if let Some(first) = points.first().map(|p: &Vec<f64>| p.len()) {
            if first != m.dim() {
                bail!(
                    "{} has {} features per point but the earlier files have {first}; use files of one layout",
                    path.display(),
                    m.dim()
                );
            }
        }
        for i in 0..m.n_points() {
            points.push(m.row(i).to_vec());
        }
        labels.extend(ls);
    }
    Labelled::new(points, labels)
}

/// Subset `s`: `per_class` distinct points of every class, drawn uniformly without replacement
/// with a generator seeded by (seed, s); class by class in class order, ascending within a
/// class. Returns indices into `data.rows`.
pub fn subset(data: &Labelled, per_class: usize, seed: u64, s: usize) -> Result<Vec<usize>> {
    let mut by_class: Vec<Vec<usize>> = vec![Vec::new(); data.classes.len()];
    for (i, &c) in data.class.iter().enumerate() {
        by_class[c].push(i);
    }
    let mut rng = StdRng::seed_from_u64(mix(seed, s as u64));
    let mut out = Vec::with_capacity(per_class * by_class.len());
    for (c, members) in by_class.iter().enumerate() {
        if members.len() < per_class {
            bail!(
                "class {:?} has {} distinct points, fewer than per_class = {per_class}; lower coalescent_labelled.per_class",
                data.classes[c],
                members.len()
            );
        }
        let mut pick: Vec<usize> = rand::seq::index::sample(&mut rng, members.len(), per_class)
            .into_iter()
            .map(|k| members[k])
            .collect();
        pick.sort_unstable();
        out.extend(pick);
    }
    Ok(out)
}

/// SplitMix64 of two words: independent streams per subset and per method.
pub fn mix(seed: u64, k: u64) -> u64 {
    crate::numeric::splitmix64_mix(seed ^ k.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}
