"""Made-up inputs shared by the tests of long calls (test_safety.py, and the child process of
test_stop_sweep.py, which imports this file by path); not a test module."""

import numpy as np

import trellis_lab as tl


def similarity(n, seed=0):
    """A random symmetric (n, n) similarity array."""
    s = np.random.default_rng(seed).random((n, n))
    return (s + s.T) / 2


def jet_of(n, seed=0):
    """A jet of n leaves from made-up four-momenta (massive: E > |p|)."""
    rng = np.random.default_rng(seed)
    p = rng.normal(size=(n, 3)) * 5
    e = np.linalg.norm(p, axis=1) + 1 + rng.random(n)
    return tl.Jet(np.column_stack([e, p]), name="made-up")


def points(n, d=2, seed=0):
    """n standard normal points in d dimensions."""
    return np.random.default_rng(seed).normal(size=(n, d))
