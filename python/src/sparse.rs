//! The sparse trellis: exact inference over the trees whose every cluster is a vertex of a
//! given set (the clusters of some trees, by default beam search's final beam, as the CLI's
//! `sparse` method does).

use crate::{
    count_opt, energy_of, interruptible, tree, value_error, with_model, CancelToken, Energy, Int,
    Jet, Tree,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use trellis_core::exact::{SparseResult, SparseTrellis};
use trellis_core::model::SplitModel;
use trellis_core::search::{beam_search_all, default_beam_size, Dedup};
use trellis_core::subset::Subset;

/// A sparse cluster trellis and its inside pass over one energy.
#[pyclass(module = "trellis_lab", name = "SparseTrellis", frozen)]
pub(crate) struct Sparse {
    trellis: SparseTrellis,
    result: SparseResult,
    energy: Energy,
}

#[pymethods]
impl Sparse {
    /// log Z over the trees the vertex set encodes.
    #[getter]
    fn log_z(&self) -> f64 {
        self.result.log_partition()
    }

    /// The best encoded tree's log-likelihood.
    #[getter]
    fn map_log_likelihood(&self) -> f64 {
        self.result.map_log_likelihood()
    }

    /// The best encoded tree (None when no encoded tree has a finite likelihood).
    #[getter]
    fn map_tree(&self) -> PyResult<Option<Tree>> {
        match self.trellis.map_tree(&self.result).map_err(value_error)? {
            Some(t) => Ok(Some(Tree::from_binary(&t)?)),
            None => Ok(None),
        }
    }

    /// The number of encoded trees with a finite likelihood (a float: exact below 2^53).
    #[getter]
    fn n_trees(&self) -> f64 {
        self.result.n_trees_finite()
    }

    /// The number of vertices (clusters, leaves and root included).
    #[getter]
    fn n_vertices(&self) -> usize {
        self.trellis.n_vertices()
    }

    /// The sparsity index: log of the encoded trees over log of all (2N-3)!! trees.
    #[getter]
    fn sparsity_index(&self) -> f64 {
        self.trellis.sparsity_index()
    }

    /// `n` exact samples from the posterior restricted to the encoded trees, drawn with `seed`
    /// (Ctrl-C and `cancel` stop the drawing).
    #[pyo3(signature = (n, seed = Int::new(0), *, cancel = None), text_signature = "($self, n, seed=0, *, cancel=None)")]
    fn sample<'py>(
        &self,
        py: Python<'py>,
        n: Int,
        seed: Int,
        cancel: Option<&CancelToken>,
    ) -> PyResult<Bound<'py, PyList>> {
        tree::draw_trees(py, (n, seed), self.trellis.n_leaves(), cancel, self.draws())
    }

    /// `sample(n, seed)`'s trees as an `(n, 2N - 1)` int64 array of canonical parent rows
    /// (numbered as `Trellis.sample_parents` numbers them).
    #[pyo3(signature = (n, seed = Int::new(0), *, cancel = None), text_signature = "($self, n, seed=0, *, cancel=None)")]
    fn sample_parents<'py>(
        &self,
        py: Python<'py>,
        n: Int,
        seed: Int,
        cancel: Option<&CancelToken>,
    ) -> PyResult<Bound<'py, numpy::PyArray2<i64>>> {
        let n_leaves = self.trellis.n_leaves();
        crate::posterior::draw_parents(py, (n, seed), n_leaves, cancel, self.draws())
    }

    fn __repr__(&self) -> String {
        format!(
            "SparseTrellis(n_leaves={}, energy='{}', n_vertices={}, log_z={:?}, map_log_likelihood={:?}, n_trees={:?})",
            self.trellis.n_leaves(),
            self.energy.name(),
            self.trellis.n_vertices(),
            self.result.log_partition(),
            self.result.map_log_likelihood(),
            self.result.n_trees_finite()
        )
    }
}

impl Sparse {
    /// Draws `n` exact samples of the restricted posterior with `rng` (for `sample` and
    /// `sample_parents`).
    fn draws(
        &self,
    ) -> impl Fn(usize, &mut rand::rngs::StdRng) -> Result<Vec<trellis_core::tree::Tree>, String>
           + Send
           + Sync
           + '_ {
        |n, rng| {
            with_model!(&self.energy, m => self.trellis.sample_many(m, &self.result, n, rng))
                .map_err(|e| e.to_string())
        }
    }
}

/// The sparse trellis of a jet, or of `similarity` with `energy` and `beta`, over the clusters
/// of `trees` (a list of `Tree`s over all the leaves, any arity); without `trees`, over the
/// clusters of beam search's final beam of `seed_trees` trees (default min(3N, N(N-1)/2)), as
/// the command line's `sparse` method builds it.
#[pyfunction]
#[pyo3(signature = (jet = None, *, similarity = None, energy = "dasgupta", beta = 1.0, trees = None, seed_trees = None, cancel = None))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, each with a default
pub(crate) fn sparse_trellis(
    py: Python<'_>,
    jet: Option<&Jet>,
    similarity: Option<&Bound<'_, PyAny>>,
    energy: &str,
    beta: f64,
    trees: Option<Vec<PyRef<'_, Tree>>>,
    seed_trees: Option<Int>,
    cancel: Option<&CancelToken>,
) -> PyResult<Sparse> {
    let seed_trees = count_opt("seed_trees", seed_trees, 1)?;
    let e = energy_of(jet, similarity, energy, beta)?;
    let n = with_model!(&e, m => m.n_leaves());
    let clusters: Option<Vec<Subset>> = match &trees {
        None => None,
        Some(ts) => {
            if n > Subset::MAX_LEAVES {
                return Err(PyValueError::new_err(format!(
                    "{n} leaves: a sparse trellis holds at most {} (clusters are 64-bit masks)",
                    Subset::MAX_LEAVES
                )));
            }
            let mut out = Vec::new();
            for t in ts {
                if t.inner.n_leaves() != n {
                    return Err(PyValueError::new_err(format!(
                        "a tree has {} leaves and the data {n}; give trees over all {n} leaves",
                        t.inner.n_leaves()
                    )));
                }
                for c in t.inner.clusters() {
                    out.push(
                        c.iter()
                            .fold(Subset::EMPTY, |s, &i| s.union(Subset::singleton(i))),
                    );
                }
            }
            Some(out)
        }
    };
    let (trellis, result) = interruptible(
        py,
        cancel,
        || with_model!(&e, m => build(m, n, clusters, seed_trees)),
    )?
    .map_err(value_error)?;
    Ok(Sparse {
        trellis,
        result,
        energy: e,
    })
}

/// The sparse trellis over `clusters`, or over the clusters of beam search's final beam, and
/// its inside pass.
fn build<M: SplitModel>(
    m: &M,
    n: usize,
    clusters: Option<Vec<Subset>>,
    seed_trees: Option<usize>,
) -> Result<(SparseTrellis, SparseResult), String> {
    let sp = match clusters {
        Some(c) => SparseTrellis::new(n, c).map_err(|e| e.to_string())?,
        None => {
            let size = seed_trees.unwrap_or_else(|| default_beam_size(n));
            let seeds = beam_search_all(m, size, Dedup::Clusters).map_err(|e| e.to_string())?;
            SparseTrellis::from_trees(n, seeds.iter().map(|f| &f.tree))
                .map_err(|e| e.to_string())?
        }
    };
    let r = sp.run(m).map_err(|e| e.to_string())?;
    Ok((sp, r))
}
