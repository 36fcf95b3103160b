"""trellis_lab: exact and approximate inference over hierarchical clusterings.

A thin layer over the trellis-lab Rust crate: NumPy arrays in and out, the crate's one-line
error messages as Python exceptions (ValueError for bad input), the same bits as the
`trellis-lab` command line for the same inputs.

    >>> import trellis_lab as tl
    >>> jet = tl.load_jets("data/ginkgo_jets/truth_5.json")[0]
    >>> t = tl.exact_trellis(jet)
    >>> t.log_z, t.map_log_likelihood, t.n_trees

The command line's results folders read into pandas or polars DataFrames (over pyarrow), and
configs run through the `trellis-lab` executable: `read_results`, `run`, `check` (in
`trellis_lab.results`; the harness itself stays out of the wheel).
"""

import collections.abc as _abc

from ._trellis_lab import (
    BhcExact,
    BhcFit,
    BrtFit,
    CancelledError,
    CancelToken,
    Clusters,
    CoalescentFit,
    CostWarning,
    DiffusionTreeFit,
    DiffusionTreeSamples,
    FlatTrellis,
    Jet,
    SparseTrellis,
    Tree,
    Trellis,
    average_linkage,
    beam,
    bhc,
    bhc_exact,
    brt,
    coalescent,
    exact_trellis,
    fit_lambda,
    flat_trellis,
    generate_jets,
    greedy,
    kt,
    lambda_curve,
    load_jets,
    map_trellis,
    pydt_map,
    pydt_mcmc,
    save_jets,
    sparse_trellis,
    standardize,
    __version__ as __version__,  # re-exported (mypy --strict sees it)
)
from .results import CommandError, Results, check, read_results, run

# Tree.clusters() is a sequence like the list it replaced (isinstance(c, Sequence) holds).
_abc.Sequence.register(Clusters)

__all__ = [
    "BhcExact",
    "BhcFit",
    "BrtFit",
    "CancelledError",
    "CancelToken",
    "Clusters",
    "CoalescentFit",
    "CommandError",
    "CostWarning",
    "DiffusionTreeFit",
    "DiffusionTreeSamples",
    "FlatTrellis",
    "Jet",
    "Results",
    "SparseTrellis",
    "Tree",
    "Trellis",
    "average_linkage",
    "beam",
    "bhc",
    "bhc_exact",
    "brt",
    "check",
    "coalescent",
    "exact_trellis",
    "fit_lambda",
    "flat_trellis",
    "generate_jets",
    "greedy",
    "kt",
    "lambda_curve",
    "load_jets",
    "map_trellis",
    "pydt_map",
    "pydt_mcmc",
    "read_results",
    "run",
    "save_jets",
    "sparse_trellis",
    "standardize",
]
