from os import PathLike
from typing import Any, Literal, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

class CancelledError(Exception):
    """A computation stopped because its CancelToken was cancelled."""

class CancelToken:
    """Stops the long calls given it (`cancel=`): `cancel()` from any thread, or `timeout`
    seconds after the token was made. A call whose token is cancelled before it returns raises
    CancelledError (TimeoutError once the timeout has passed); a call given a cancelled token
    raises at once. Ctrl-C stops calls on the main thread with or without a token."""

    def __init__(self, timeout: Optional[float] = None) -> None: ...
    def cancel(self) -> None:
        """Stops every call running with this token, and makes later calls with it raise."""
    @property
    def cancelled(self) -> bool:
        """Whether cancel() was called or the timeout has passed."""
    @property
    def timed_out(self) -> bool:
        """Whether the timeout has passed."""
    @property
    def timeout(self) -> Optional[float]:
        """The timeout in seconds given when the token was made (None: none)."""

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
    @staticmethod
    def from_linkage(z: npt.ArrayLike, collapse: bool = False) -> "Tree":
        """The tree of SciPy's (n - 1) x 4 linkage matrix: row k makes node n + k at height
        Z[k, 2] (raised to its children's if below them). Malformed rows are a one-line
        ValueError naming the row. collapse=True joins a merge into the merge above it at the
        same height (the k - 1 rows of a node with k children become that node again)."""
    def newick(self, branch_lengths: bool = False) -> str:
        """Canonical Newick (children by lowest leaf); branch_lengths=True adds `:length`
        (parent's height minus the node's) to every node but the root."""
    def with_heights(
        self,
        heights: Literal["tree", "size", "cost"],
        *,
        jet: Optional["Jet"] = None,
        similarity: Optional[npt.ArrayLike] = None,
        energy: Literal["dasgupta", "correlation"] = "dasgupta",
        beta: float = 1.0,
    ) -> "Tree":
        """The same tree with other heights: "tree" (its own: sizes, merge times, 1 - t),
        "size" (cluster sizes) or "cost" (minus the log-likelihood of each node's subtree
        under the energy of jet= or similarity=; refused, naming the node, when a merge has
        log psi > 0 or -inf, since heights must not decrease towards the root)."""
    @property
    def n_leaves(self) -> int: ...
    @property
    def is_binary(self) -> bool: ...
    @property
    def parents(self) -> npt.NDArray[np.int64]: ...
    @property
    def heights(self) -> npt.NDArray[np.float64]: ...
    def clusters(self) -> list[list[int]]: ...
    def to_linkage(
        self,
        heights: Literal["tree", "size", "cost"] = "tree",
        *,
        jet: Optional["Jet"] = None,
        similarity: Optional[npt.ArrayLike] = None,
        energy: Literal["dasgupta", "correlation"] = "dasgupta",
        beta: float = 1.0,
    ) -> npt.NDArray[np.float64]:
        """SciPy's (n - 1) x 4 linkage matrix at the chosen heights (see with_heights):
        rows by height, children first; a node with k children is k - 1 rows."""
    def log_likelihood(self, jet: "Jet") -> float:
        """The Ginkgo log-likelihood of a binary tree over the jet's leaves."""
    def dendrogram_purity(self, labels: Sequence[Any]) -> float: ...
    def subtree_score(self, labels: Sequence[Any]) -> float: ...
    def ari_auc(self, labels: Sequence[Any]) -> float: ...
    def dasgupta_cost(self, similarity: npt.ArrayLike) -> float: ...
    def __eq__(self, other: object) -> bool:
        """Same leaves and same clusters (heights aside)."""
    def __hash__(self) -> int:
        """Equal trees hash equal (dict keys, sets, collections.Counter)."""

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
    def n_leaves(self) -> int: ...
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
    @property
    def n_map_trees(self) -> int: ...
    def sample(
        self, n: int, seed: int = 0, *, cancel: Optional[CancelToken] = None
    ) -> list[Tree]: ...
    def sample_parents(
        self, n: int, seed: int = 0, *, cancel: Optional[CancelToken] = None
    ) -> npt.NDArray[np.int64]:
        """sample(n, seed)'s trees as an (n, 2N - 1) int64 array of canonical parent rows:
        leaves 0..N, internal nodes N.. in post-order with children by lowest leaf, the root
        last (-1). Equal trees give equal rows; Tree.from_parents(N, row) rebuilds one."""
    def coclustering(self, *, cancel: Optional[CancelToken] = None) -> npt.NDArray[np.float64]:
        """(N + 1, N, N): [k, i, j] is the probability that leaves i and j share a cluster of
        at most k leaves (their smallest common cluster has size <= k); exact, O(3^N)."""
    def expected_lca_size(
        self, *, cancel: Optional[CancelToken] = None
    ) -> npt.NDArray[np.float64]:
        """(N, N) expected size of the smallest cluster holding both i and j (1 on the diagonal)."""
    def sibling_probabilities(
        self, *, cancel: Optional[CancelToken] = None
    ) -> npt.NDArray[np.float64]:
        """(N, N) probability that {i, j} is a cluster (i and j merged directly); 0 on the diagonal."""
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
    cancel: Optional[CancelToken] = None,
) -> Trellis: ...
def beam(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.NDArray[np.float64]] = None,
    energy: str = "dasgupta",
    beta: float = 1.0,
    beam_size: Optional[int] = None,
    dedup: str = "clusters",
    merge_score: str = "potential",
    cancel: Optional[CancelToken] = None,
) -> tuple[Tree, float]: ...
def greedy(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.NDArray[np.float64]] = None,
    energy: str = "dasgupta",
    beta: float = 1.0,
    merge_score: str = "potential",
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
    *,
    cancel: Optional[CancelToken] = None,
) -> list[Jet]: ...
def average_linkage(similarity: npt.NDArray[np.float64]) -> Tree: ...
def map_trellis(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.NDArray[np.float64]] = None,
    energy: str = "dasgupta",
    beta: float = 1.0,
    max_leaves: int = 24,
    cancel: Optional[CancelToken] = None,
) -> tuple[Tree, float]: ...
def standardize(data: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Columns centred and scaled to unit variance, as the board feeds the coalescent and PYDT."""
def flat_trellis(
    affinity: npt.NDArray[np.float64], beta: float = 1.0, *, cancel: Optional[CancelToken] = None
) -> FlatTrellis: ...

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
    def sample(
        self, n: int, seed: int = 0, *, cancel: Optional[CancelToken] = None
    ) -> list[Tree]: ...
    def sample_parents(
        self, n: int, seed: int = 0, *, cancel: Optional[CancelToken] = None
    ) -> npt.NDArray[np.int64]:
        """sample(n, seed)'s trees as canonical parent rows (as Trellis.sample_parents)."""

def sparse_trellis(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.NDArray[np.float64]] = None,
    energy: str = "dasgupta",
    beta: float = 1.0,
    trees: Optional[list[Tree]] = None,
    seed_trees: Optional[int] = None,
    cancel: Optional[CancelToken] = None,
) -> SparseTrellis: ...

class CoalescentFit:
    """A coalescent fit: the highest-weight tree, every particle with its weight and, for the SMC
    methods, the estimate of log p(X) and the weight mode that produced it."""

    @property
    def method(self) -> str: ...
    @property
    def tree(self) -> Tree:
        """The highest-weight tree (a greedy method's one tree); heights are merge times."""
    @property
    def trees(self) -> list[Tree]:
        """Every particle's tree (one for a greedy method), in particle order."""
    @property
    def weights(self) -> npt.NDArray[np.float64]:
        """The particles' normalised weights ([1.0] for a greedy method)."""
    @property
    def log_evidence(self) -> Optional[float]:
        """The SMC estimate of log p(X); None for a greedy method. Unbiased in p(X) only with
        weight_mode "exact"."""
    @property
    def weight_mode(self) -> Optional[Literal["exact", "paper_faithful"]]:
        """The weight mode that produced log_evidence; None for a greedy method."""
    @property
    def resamples(self) -> int: ...
    @property
    def log_joint(self) -> float:
        """log p(X, tree) of the best tree under the model."""

class DiffusionTreeFit:
    """A diffusion tree's MAP search: the best tree, its objective and log joint, the best
    objective after each step, and the parameters at the end."""

    @property
    def model(self) -> Literal["pydt", "ddt"]: ...
    @property
    def tree(self) -> Tree:
        """The MAP tree (any arity for the PYDT); heights are 1 - t."""
    @property
    def objective(self) -> float:
        """The search's objective plus the learned hyper-parameters' log priors: with noise > 0
        or sigma2 learned, the log density of (X, T, s), s = -ln(1 - t); with noise=0 and sigma2
        fixed, the log density of (X, T, t) (= log_joint)."""
    @property
    def log_joint(self) -> float:
        """log p(X, T, t) at the final parameters (what pydt_mcmc traces)."""
    @property
    def em_runs(self) -> int: ...
    @property
    def params(self) -> dict[str, float]:
        """{"theta", "alpha", "c", "sigma2"} at the end."""
    @property
    def trace(self) -> npt.NDArray[np.float64]:
        """The best objective after the start and after each search step."""

class DiffusionTreeSamples:
    """A chain of the collapsed diffusion-tree sampler."""

    @property
    def model(self) -> Literal["pydt", "ddt"]: ...
    @property
    def moves(self) -> tuple[int, int, int]:
        """Detach/re-attach moves (proposed, accepted, abandoned)."""
    @property
    def trees(self) -> list[Tree]:
        """The trees after iterations thin, 2 thin, ... (heights 1 - t)."""
    @property
    def log_joint(self) -> npt.NDArray[np.float64]:
        """log p(X, T, t) after each iteration (length iterations)."""
    @property
    def log_likelihood(self) -> npt.NDArray[np.float64]: ...
    @property
    def params(self) -> dict[str, npt.NDArray[np.float64]]:
        """{"theta", "alpha", "c", "sigma2"}: each parameter after each iteration."""

def coalescent(
    data: npt.ArrayLike,
    method: Literal[
        "prior_prior",
        "prior_post",
        "post_post",
        "smc1",
        "mpost1",
        "mpost2",
        "greedy",
        "mgreedy",
        "greedy_exact",
    ] = "mpost2",
    *,
    particles: int = 20,
    seed: int = 0,
    sigma2: Optional[float] = None,
    phi: Optional[npt.ArrayLike] = None,
    weight_mode: Literal["exact", "paper_faithful"] = "exact",
    resample_threshold: float = 0.5,
    cancel: Optional[CancelToken] = None,
) -> CoalescentFit: ...
def pydt_map(
    data: npt.ArrayLike,
    *,
    ddt: bool = False,
    seed: int = 0,
    theta: Optional[float] = None,
    alpha: Optional[float] = None,
    c: float = 1.0,
    sigma2: float = 1.0,
    noise: float = 0.1,
    iterations: int = 30,
    learn: Sequence[Literal["theta", "alpha", "c", "sigma2"]] = (),
    cancel: Optional[CancelToken] = None,
) -> DiffusionTreeFit: ...
def pydt_mcmc(
    data: npt.ArrayLike,
    iterations: int = 100,
    *,
    ddt: bool = False,
    seed: int = 0,
    theta: Optional[float] = None,
    alpha: Optional[float] = None,
    c: float = 1.0,
    sigma2: float = 1.0,
    noise: float = 0.0,
    sample: Sequence[Literal["theta", "alpha", "c", "sigma2"]] = ("theta", "alpha", "c", "sigma2"),
    moves: int = 0,
    rule: Literal["general", "likelihood"] = "general",
    thin: int = 1,
    max_tries: int = 100,
    cancel: Optional[CancelToken] = None,
) -> DiffusionTreeSamples: ...
