//! The "similarity_matrix" source: a user's square similarity (weighted graph) matrix, a CSV or
//! TSV file whose header names the points and whose `n` rows hold the `n × n` similarities
//! (symmetric; the diagonal is ignored). Judged, like the planted-partition graphs, by
//! Dasgupta's cost.

use super::{Instance, InstanceData};
use crate::data::matrix::{MatrixSpec, PointMatrix};
use anyhow::{bail, Result};
use std::path::Path;

/// The most points a similarity matrix may have (clusters are 64-bit masks).
pub const MAX_POINTS: usize = 64;

/// The one instance (`all`) of dataset `name` from the matrix file `path`.
pub(super) fn instance(name: &str, path: &Path) -> Result<Instance> {
    let m = PointMatrix::load(
        path,
        &MatrixSpec {
            delimiter: None,
            header: true,
            label_column: None,
            infer: false,
        },
    )?;
    let (n, d) = (m.n_points(), m.dim());
    if n != d {
        bail!(
            "{} has {d} columns but {n} rows: a similarity matrix is square, a header naming the n points then n rows of n numbers",
            path.display()
        );
    }
    if !(2..=MAX_POINTS).contains(&n) {
        bail!(
            "{} holds {n} points; a similarity matrix needs 2 to {MAX_POINTS}",
            path.display()
        );
    }
    let mut similarities = m.values.clone();
    for i in 0..n {
        similarities[i * n + i] = 0.0;
        for j in i + 1..n {
            let (a, b) = (m.values[i * n + j], m.values[j * n + i]);
            if (a - b).abs() > 1e-12 * a.abs().max(b.abs()).max(1.0) {
                bail!(
                    "{} is not symmetric: row {} column {} holds {a:?} but row {} column {} holds {b:?}; make the matrix symmetric",
                    path.display(),
                    i + 1,
                    j + 1,
                    j + 1,
                    i + 1
                );
            }
            similarities[j * n + i] = a;
        }
    }
    Ok(Instance {
        dataset: name.to_string(),
        instance: "all".into(),
        data: InstanceData::Graph { similarities },
        labels: None,
        classes: Vec::new(),
        names: m.features.clone(),
    })
}
