//! The Ginkgo rate λ fitted to jets: by exact evidence (the full trellis of every jet) or on
//! given trees, under the paper-era potential or the generator's own density.

use crate::{count, interruptible, value_error, CancelToken, Int, Jet, Tree};
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use trellis_core::exact::evidence::{self, Likelihood};
use trellis_core::model::GinkgoModel;
use trellis_core::tree::Tree as CrateTree;

fn likelihood_of(name: &str) -> PyResult<Likelihood> {
    match name {
        "paper" => Ok(Likelihood::PaperEra),
        "generator" => Ok(Likelihood::Generator),
        other => Err(PyValueError::new_err(format!(
            "likelihood = {other:?} is not known; use \"paper\" (the paper-era potential) or \"generator\" (the Ginkgo generator's density)"
        ))),
    }
}

/// The jets' models, and with `by = "truth"` their trees (`trees`, else each jet's truth).
fn inputs(
    jets: &[PyRef<'_, Jet>],
    by: &str,
    trees: Option<Vec<PyRef<'_, Tree>>>,
) -> PyResult<(Vec<GinkgoModel>, Option<Vec<CrateTree>>)> {
    if jets.is_empty() {
        return Err(PyValueError::new_err(
            "jets is empty: pass at least one jet (a list of Jet, e.g. from load_jets or generate_jets)",
        ));
    }
    let models = jets
        .iter()
        .map(|j| j.inner.model().map_err(value_error))
        .collect::<PyResult<Vec<_>>>()?;
    let trees = match (by, trees) {
        ("evidence", None) => None,
        ("evidence", Some(_)) => {
            return Err(PyValueError::new_err(
                "trees are only read with by = \"truth\"; leave trees out for the evidence",
            ))
        }
        ("truth", Some(t)) => Some(t.iter().map(|t| t.binary()).collect::<PyResult<Vec<_>>>()?),
        ("truth", None) => Some(
            jets.iter()
                .enumerate()
                .map(|(i, j)| {
                    j.inner.truth().ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "jet {i} ({:?}) has no truth tree; pass trees=[...] or use by = \"evidence\"",
                            j.inner.name
                        ))
                    })
                })
                .collect::<PyResult<Vec<_>>>()?,
        ),
        (other, _) => {
            return Err(PyValueError::new_err(format!(
                "by = {other:?} is not known; use \"evidence\" (sum of log Z over all trees) or \"truth\" (the given trees)"
            )))
        }
    };
    Ok((models, trees))
}

/// λ maximising `sum_jets log Z(jet; λ)` (`by = "evidence"`, every jet's full trellis) or
/// `sum_jets log p(tree; λ)` (`by = "truth"`: `trees`, else each jet's truth tree) within
/// `[lo, hi]`, under `likelihood` ("paper" or "generator"); a dict with `lam`, `objective`,
/// `evaluations`, `jets_used`, `jets_left_out`, `at_bound` and `std_error`.
#[pyfunction]
#[pyo3(signature = (jets, *, by = "evidence", likelihood = "paper", trees = None, lo = 0.01, hi = 50.0, max_leaves = Int::new(20), cancel = None), text_signature = "(jets, *, by='evidence', likelihood='paper', trees=None, lo=0.01, hi=50.0, max_leaves=20, cancel=None)")]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
pub fn fit_lambda<'py>(
    py: Python<'py>,
    jets: Vec<PyRef<'py, Jet>>,
    by: &str,
    likelihood: &str,
    trees: Option<Vec<PyRef<'py, Tree>>>,
    lo: f64,
    hi: f64,
    max_leaves: Int,
    cancel: Option<&CancelToken>,
) -> PyResult<Bound<'py, PyDict>> {
    let max_leaves = count("max_leaves", max_leaves, 2)?;
    let lik = likelihood_of(likelihood)?;
    let (models, trees) = inputs(&jets, by, trees)?;
    let fit = interruptible(py, cancel, || match &trees {
        None => evidence::fit_lambda_by_evidence_with(lik, &models, lo, hi, max_leaves),
        Some(t) => evidence::fit_lambda_on_trees_with(lik, &models, t, lo, hi),
    })?
    .map_err(value_error)?;
    let d = PyDict::new(py);
    d.set_item("lam", fit.lambda)?;
    d.set_item("objective", fit.objective)?;
    d.set_item("evaluations", fit.evaluations)?;
    d.set_item("jets_used", fit.jets_used)?;
    d.set_item("jets_left_out", fit.jets_left_out)?;
    d.set_item("at_bound", fit.at_bound)?;
    d.set_item("std_error", fit.std_error)?;
    Ok(d)
}

/// The objective of [`fit_lambda`] at each rate of `lams` (a float array of positive rates),
/// over the jets whose objective is finite at the first rate.
#[pyfunction]
#[pyo3(signature = (jets, lams, *, by = "evidence", likelihood = "paper", trees = None, max_leaves = Int::new(20), cancel = None), text_signature = "(jets, lams, *, by='evidence', likelihood='paper', trees=None, max_leaves=20, cancel=None)")]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
pub fn lambda_curve<'py>(
    py: Python<'py>,
    jets: Vec<PyRef<'py, Jet>>,
    lams: &Bound<'py, PyAny>,
    by: &str,
    likelihood: &str,
    trees: Option<Vec<PyRef<'py, Tree>>>,
    max_leaves: Int,
    cancel: Option<&CancelToken>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let max_leaves = count("max_leaves", max_leaves, 2)?;
    let lik = likelihood_of(likelihood)?;
    let lams: Vec<f64> = crate::convert::sequence(lams, "lams")?;
    let (models, trees) = inputs(&jets, by, trees)?;
    let curve = interruptible(py, cancel, || match &trees {
        None => evidence::evidence_curve(lik, &models, &lams, max_leaves),
        Some(t) => evidence::tree_curve(lik, &models, t, &lams),
    })?
    .map_err(value_error)?;
    Ok(PyArray1::from_vec(py, curve.objective))
}
