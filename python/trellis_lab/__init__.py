"""trellis_lab: exact and approximate inference over hierarchical clusterings.

A thin layer over the trellis-lab Rust crate: NumPy arrays in and out, the crate's one-line
error messages as Python exceptions (ValueError for bad input), the same bits as the
`trellis-lab` command line for the same inputs.

    >>> import trellis_lab as tl
    >>> jet = tl.load_jets("data/ginkgo_jets/truth_5.json")[0]
    >>> t = tl.exact_trellis(jet)
    >>> t.log_z, t.map_log_likelihood, t.n_trees
"""

from ._trellis_lab import (
    CancelledError,
    CancelToken,
    CoalescentFit,
    DiffusionTreeFit,
    DiffusionTreeSamples,
    FlatTrellis,
    Jet,
    SparseTrellis,
    Tree,
    Trellis,
    average_linkage,
    beam,
    coalescent,
    exact_trellis,
    flat_trellis,
    generate_jets,
    greedy,
    kt,
    load_jets,
    map_trellis,
    pydt_map,
    pydt_mcmc,
    save_jets,
    sparse_trellis,
    standardize,
    __version__,
)

__all__ = [
    "CancelledError",
    "CancelToken",
    "CoalescentFit",
    "DiffusionTreeFit",
    "DiffusionTreeSamples",
    "FlatTrellis",
    "Jet",
    "SparseTrellis",
    "Tree",
    "Trellis",
    "average_linkage",
    "beam",
    "coalescent",
    "exact_trellis",
    "flat_trellis",
    "generate_jets",
    "greedy",
    "kt",
    "load_jets",
    "map_trellis",
    "pydt_map",
    "pydt_mcmc",
    "save_jets",
    "sparse_trellis",
    "standardize",
]
