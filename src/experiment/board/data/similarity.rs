//! The "similarity_matrix" and "distance_matrix" sources: a user's square matrix between points
//! (a weighted graph's adjacency, a similarity or kernel matrix, road or Euclidean distances),
//! a table file whose header names the points and whose `n` rows hold the `n × n` values
//! (symmetric), with or without a first column of the same names (R's `write.csv` of a matrix,
//! pandas' `to_csv` with its index). Judged, like the planted-partition graphs, by Dasgupta's
//! cost.
//!
//! **Distances are not similarities.** Average linkage runs on distances themselves, as SciPy's
//! `linkage(squareform(D), "average")` does. Dasgupta's cost needs similarities, and gets
//! `s = max(D) − D` (off the diagonal): for any constant `c`, the cost of `c − D` is `c` times
//! the cost of the all-ones graph, which is the same for every binary tree (Dasgupta 2016), less
//! `Σ_{i<j} D_ij |leaves(lca(i, j))|`; so minimising it maximises the dissimilarity objective of
//! Cohen-Addad, Kanade, Mallmann-Trenn and Mathieu (2018), whatever `c`. The same holds per
//! split (`−(|A|+|B|)·c·|A||B|` sums to a constant over every tree), so the Gibbs posterior over
//! trees does not depend on `c` either; `c = max(D)` keeps the weights non-negative, as
//! Dasgupta's are. No other transform has this property (`1/(1+D)` or `exp(−D²/σ²)` change
//! which tree is best with their scale).
//!
//! **A distance matrix given as similarities is refused**: a zero diagonal with every other
//! entry positive is how distances look (a similarity matrix holds each point's largest
//! similarity with itself, or is a sparse graph with zeros off the diagonal).

use super::{Instance, InstanceData};
use crate::data::matrix::{MatrixSpec, PointMatrix};
use anyhow::{bail, Result};
use std::path::Path;

/// What the file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matrix {
    /// Similarities (higher = more alike; the diagonal is ignored).
    Similarity,
    /// Distances (zero diagonal, non-negative).
    Distance,
}

/// The one instance read from a matrix file, and what was read, in words.
pub(super) struct Read {
    pub instance: Instance,
    pub about: String,
    pub notes: Vec<String>,
}

/// The one instance (`all`) of dataset `name` from the matrix file `path`.
pub(super) fn instance(name: &str, path: &Path, kind: Matrix) -> Result<Read> {
    let m = PointMatrix::load(
        path,
        &MatrixSpec {
            header: true,
            infer: true,
            ..MatrixSpec::default()
        },
    )?;
    let (n, d) = (m.n_points(), m.dim());
    let shown = path.display();
    if let Some(l) = &m.label_name {
        bail!(
            "{shown} has a column of repeated text ({l:?}) besides the numbers; a matrix holds one row of numbers per point, with at most a first column of the points' names"
        );
    }
    if n != d {
        bail!(
            "{shown} has {d} columns of numbers but {n} rows: a matrix is square, a header naming the n points then n rows of n numbers (each row may start with its point's name)"
        );
    }
    if !(2..=super::MAX_POINTS).contains(&n) {
        bail!(
            "{shown} holds {n} points; a matrix needs 2 to {} (it is held n² at a time by several methods)",
            super::MAX_POINTS
        );
    }
    if let Some(names) = &m.names {
        if let Some(k) = (0..n).find(|&k| names[k] != m.features[k]) {
            bail!(
                "{shown}: row {} is named {:?} but column {} is {:?}; the rows and the columns must list the points in the same order",
                k + 1,
                crate::data::clip(&names[k], 40),
                k + 1,
                crate::data::clip(&m.features[k], 40)
            );
        }
    }
    let v = &m.values;
    for i in 0..n {
        for j in i + 1..n {
            let (a, b) = (v[i * n + j], v[j * n + i]);
            if (a - b).abs() > 1e-12 * a.abs().max(b.abs()).max(1.0) {
                bail!(
                    "{shown} is not symmetric: row {} column {} holds {a:?} but row {} column {} holds {b:?}; make the matrix symmetric",
                    i + 1,
                    j + 1,
                    j + 1,
                    i + 1
                );
            }
        }
    }
    let zero_diagonal = (0..n).all(|i| v[i * n + i] == 0.0);
    let off = || (0..n).flat_map(move |i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)));
    let mut notes = m.notes.clone();
    // The values the methods see, symmetric (upper triangle mirrored), zero diagonal.
    let sym = |f: &dyn Fn(f64) -> f64| -> Vec<f64> {
        let mut out = vec![0.0; n * n];
        for (i, j) in off() {
            let x = if i < j { v[i * n + j] } else { v[j * n + i] };
            out[i * n + j] = f(x);
        }
        out
    };
    let (data, what) = match kind {
        Matrix::Similarity => {
            if zero_diagonal && off().all(|(i, j)| v[i * n + j] > 0.0) {
                bail!(
                    "{shown} looks like a distance matrix (zero diagonal, every other entry positive), not similarities: near points would be treated as unlike and the trees inverted; pass --distance (source = \"distance_matrix\"), or, if these are similarities, put each point's similarity with itself on the diagonal"
                );
            }
            (
                InstanceData::Graph {
                    similarities: sym(&|x| x),
                    distances: None,
                },
                "similarity matrix",
            )
        }
        Matrix::Distance => {
            if let Some(i) = (0..n).find(|&i| v[i * n + i] != 0.0) {
                bail!(
                    "{shown}: row {} holds {} on the diagonal; a distance matrix has 0 there (each point is at distance 0 from itself); if these are similarities, pass --similarity",
                    i + 1,
                    v[i * n + i]
                );
            }
            if let Some((i, j)) = off().find(|&(i, j)| v[i * n + j] < 0.0) {
                bail!(
                    "{shown}: row {} column {} holds {}, a negative distance; distances are 0 or more (if these are similarities or correlations, pass --similarity)",
                    i + 1,
                    j + 1,
                    v[i * n + j]
                );
            }
            let max = off().map(|(i, j)| v[i * n + j]).fold(0.0, f64::max);
            notes.push(format!(
                "distances: average linkage runs on them (as SciPy's linkage(squareform(D), \"average\")); Dasgupta's cost, which needs similarities, runs on s = max(D) - D = {max} - D, which ranks every tree as the distances' own objective does for any constant (see the README's own-data section)"
            ));
            (
                InstanceData::Graph {
                    similarities: sym(&|x| max - x),
                    distances: Some(sym(&|x| x)),
                },
                "distance matrix",
            )
        }
    };
    let names = m
        .names
        .clone()
        .unwrap_or_else(|| m.features.clone());
    let format = m
        .dialect
        .describe()
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    Ok(Read {
        about: format!("{shown}: a {n} × {n} {what}{format}"),
        notes,
        instance: Instance {
            dataset: name.to_string(),
            instance: "all".into(),
            data,
            labels: None,
            classes: Vec::new(),
            names,
        },
    })
}
