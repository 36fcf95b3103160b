"""Functions a multiprocessing pool runs in its workers (importable by name, as the spawn and
forkserver start methods need); not a test module."""

import trellis_lab as tl


def exact(jet):
    """The exact trellis's numbers and MAP tree of a jet."""
    t = tl.exact_trellis(jet)
    return jet.name, t.log_z, t.map_log_likelihood, t.n_trees, t.map_tree


def the_jet(jet):
    """The jet itself, back from the worker."""
    return jet


def coalescent(x, seed):
    return tl.coalescent(x, particles=5, seed=seed)


def pydt(x):
    return tl.pydt_map(x, iterations=2), tl.pydt_mcmc(x, 3, thin=1)
