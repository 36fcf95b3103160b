from os import PathLike
from typing import Any, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

class Tree:
    """A rooted tree over leaves 0..n: internal nodes n.. with two or more children, a height
    per node (leaves 0, never decreasing towards the root)."""

    @staticmethod
    def from_newick(text: str) -> "Tree":
        """Newick with integer leaf labels 0..n, any arity, optional branch lengths."""
    @staticmethod
    def from_parents(
        n_leaves: int, parents: Sequence[int], heights: Optional[Sequence[float]] = None
    ) -> "Tree":
        """From one parent per node (-1 for the root) and optional heights."""
    def newick(self) -> str: ...
    @property
    def n_leaves(self) -> int: ...
    @property
    def is_binary(self) -> bool: ...
    @property
    def parents(self) -> npt.NDArray[np.int64]: ...
    @property
    def heights(self) -> npt.NDArray[np.float64]: ...
    def clusters(self) -> list[list[int]]: ...
    def to_linkage(self) -> npt.NDArray[np.float64]:
        """SciPy's (n - 1) x 4 linkage matrix at the node heights."""
    def log_likelihood(self, jet: "Jet") -> float:
        """The Ginkgo log-likelihood of a binary tree over the jet's leaves."""
    def dendrogram_purity(self, labels: Sequence[Any]) -> float: ...
    def subtree_score(self, labels: Sequence[Any]) -> float: ...
    def ari_auc(self, labels: Sequence[Any]) -> float: ...
    def dasgupta_cost(self, similarity: npt.ArrayLike) -> float: ...

class Jet:
    """A Ginkgo jet: leaf four-momenta (E, px, py, pz) and likelihood parameters."""

    def __init__(
        self,
        leaves: npt.NDArray[np.float64],
        t_cut: float = 16.0,
        lam: float = 1.5,
        lam_root: Optional[float] = None,
        name: str = "jet",
    ) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def n_leaves(self) -> int: ...
    @property
    def t_cut(self) -> float: ...
    @property
    def lam(self) -> float: ...
    @property
    def lam_root(self) -> float: ...
    @property
    def leaves(self) -> npt.NDArray[np.float64]: ...
    @property
    def truth(self) -> Optional[Tree]: ...

class Trellis:
    """The exact cluster trellis over every binary tree."""

    @property
    def log_z(self) -> float: ...
    @property
    def map_log_likelihood(self) -> float: ...
    @property
    def map_tree(self) -> Tree: ...
    @property
    def n_trees(self) -> int: ...
    @property
    def entropy(self) -> float: ...
    def sample(self, n: int, seed: int = 0) -> list[Tree]: ...
    def cluster_marginal(self, leaves: list[int]) -> float: ...
    def log_probability(self, tree: Tree) -> float: ...

def load_jets(path: Union[str, PathLike[str]]) -> list[Jet]: ...
def save_jets(jets: list[Jet], path: Union[str, PathLike[str]], source: str = ...) -> None: ...
def exact_trellis(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.NDArray[np.float64]] = None,
    energy: str = "dasgupta",
    beta: float = 1.0,
    max_leaves: int = 22,
) -> Trellis: ...
def beam(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.NDArray[np.float64]] = None,
    energy: str = "dasgupta",
    beta: float = 1.0,
    beam_size: Optional[int] = None,
    dedup: str = "clusters",
) -> tuple[Tree, float]: ...
def greedy(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.NDArray[np.float64]] = None,
    energy: str = "dasgupta",
    beta: float = 1.0,
) -> tuple[Tree, float]: ...
def kt(jet: Jet, p: float = 1.0, r: float = 1.0) -> Tree: ...

class FlatTrellis:
    """The exact flat cluster trellis over every clustering."""

    @property
    def log_z(self) -> float: ...
    @property
    def map_log_energy(self) -> float: ...
    def map_labels(self) -> npt.NDArray[np.int64]: ...
    def pairwise_marginals(self) -> npt.NDArray[np.float64]: ...

def generate_jets(
    n: int,
    min_leaves: int = 5,
    max_leaves: int = 10,
    seed: int = 0,
    jet_type: str = "qcd",
    root_scale: Optional[float] = None,
    max_tries: Optional[int] = None,
) -> list[Jet]: ...
def average_linkage(similarity: npt.NDArray[np.float64]) -> Tree: ...
def map_trellis(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.NDArray[np.float64]] = None,
    energy: str = "dasgupta",
    beta: float = 1.0,
    max_leaves: int = 24,
) -> tuple[Tree, float]: ...
def flat_trellis(affinity: npt.NDArray[np.float64], beta: float = 1.0) -> FlatTrellis: ...

class SparseTrellis:
    """The exact trellis restricted to the trees whose clusters are all vertices."""

    @property
    def log_z(self) -> float: ...
    @property
    def map_log_likelihood(self) -> float: ...
    @property
    def map_tree(self) -> Optional[Tree]: ...
    @property
    def n_trees(self) -> float: ...
    @property
    def n_vertices(self) -> int: ...
    @property
    def sparsity_index(self) -> float: ...
    def sample(self, n: int, seed: int = 0) -> list[Tree]: ...

def sparse_trellis(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.NDArray[np.float64]] = None,
    energy: str = "dasgupta",
    beta: float = 1.0,
    trees: Optional[list[Tree]] = None,
    seed_trees: Optional[int] = None,
) -> SparseTrellis: ...
