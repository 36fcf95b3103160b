from os import PathLike
from typing import (
    Any,
    ClassVar,
    Literal,
    Optional,
    Sequence,
    TypedDict,
    SupportsFloat,
    SupportsIndex,
    Union,
    final,
    overload,
)

import numpy as np
import numpy.typing as npt

# What the runtime accepts: arrays are any array-like of real numbers that numpy.asarray takes
# (NumPy arrays of any real dtype and layout, nested lists or tuples, pandas or polars
# DataFrames); integers anything with __index__ (int, NumPy integers); floats anything with
# __float__; lists any sequence (list, tuple, 1-D NumPy array).

_Energy = Literal["dasgupta", "correlation"]
_MergeScore = Literal["potential", "revenue"]
_Heights = Literal["tree", "size", "cost"]
_Path = Union[str, PathLike[str]]
_Ints = Union[Sequence[SupportsIndex], npt.NDArray[np.integer[Any]]]
_Floats = Union[Sequence[SupportsFloat], npt.NDArray[Union[np.floating[Any], np.integer[Any]]]]

__version__: str
"""The package's version."""

class CancelledError(Exception):
    """A computation stopped because its CancelToken was cancelled."""

class CostWarning(UserWarning):
    """A call that the cost model expects to run for minutes or more, said before it starts
    (Ctrl-C or a CancelToken stops it; warnings.filterwarnings("ignore", category=CostWarning)
    silences it)."""

@final
class CancelToken:
    """Stops the long calls given it (`cancel=`): `cancel()` from any thread, or `timeout`
    seconds after the token was made. A call whose token is cancelled before it returns raises
    CancelledError (TimeoutError once the timeout has passed); a call given a cancelled token
    raises at once. Ctrl-C stops calls on the main thread with or without a token."""

    def __new__(cls, timeout: Optional[SupportsFloat] = None) -> "CancelToken": ...
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

@final
class Tree:
    """A rooted tree over leaves 0..n: internal nodes n.. with two or more children, a height
    per node (leaves 0, never decreasing towards the root)."""

    @staticmethod
    def from_newick(text: str) -> "Tree":
        """Newick with integer leaf labels 0..n, any arity, optional branch lengths."""
    @staticmethod
    def from_parents(
        n_leaves: SupportsIndex,
        parents: _Ints,
        heights: Optional[_Floats] = None,
    ) -> "Tree":
        """From one parent per node (-1 for the root) and optional heights."""
    @staticmethod
    def from_linkage(z: npt.ArrayLike, collapse: bool = False) -> "Tree":
        """The tree of SciPy's (n - 1) x 4 linkage matrix: row k makes node n + k at height
        Z[k, 2] (raised to its children's if below them). Malformed rows are a one-line
        ValueError naming the row. collapse=True joins a merge into the merge above it at the
        same height (the k - 1 rows of a node with k children become that node again)."""
    def newick(self, branch_lengths: bool = False) -> str:
        """Canonical Newick, children ordered by their lowest leaf; branch_lengths=True adds
        `:length` (the parent's height minus the node's) to every node but the root."""
    def with_heights(
        self,
        heights: _Heights,
        *,
        jet: Optional["Jet"] = None,
        similarity: Optional[npt.ArrayLike] = None,
        energy: _Energy = "dasgupta",
        beta: SupportsFloat = 1.0,
    ) -> "Tree":
        """The same tree with other heights: "tree" (its own: sizes, merge times, 1 - t),
        "size" (cluster sizes) or "cost" (minus the log-likelihood of each node's subtree
        under the energy of jet= or similarity=; refused, naming the node, when a merge has
        log psi > 0 or -inf, since heights must not decrease towards the root)."""
    @property
    def n_leaves(self) -> int:
        """The number of leaves."""
    @property
    def is_binary(self) -> bool:
        """Whether every internal node has two children."""
    @property
    def parents(self) -> npt.NDArray[np.int64]:
        """Each node's parent (leaves 0..n, internal nodes n.., -1 for the root)."""
    @property
    def heights(self) -> npt.NDArray[np.float64]:
        """Each node's height (leaves 0)."""
    def clusters(self) -> "Clusters":
        """Every internal node's cluster as a sorted list of leaf indices, the lists sorted: a
        lazy sequence, memory linear in the leaves (tolist() makes every list at once)."""
    def to_linkage(
        self,
        heights: _Heights = "tree",
        *,
        jet: Optional["Jet"] = None,
        similarity: Optional[npt.ArrayLike] = None,
        energy: _Energy = "dasgupta",
        beta: SupportsFloat = 1.0,
    ) -> npt.NDArray[np.float64]:
        """SciPy's (n - 1) x 4 linkage matrix at the chosen heights (see with_heights):
        rows by height, children first; a node with k children is k - 1 rows."""
    def log_likelihood(self, jet: "Jet") -> float:
        """The Ginkgo log-likelihood of a binary tree over the jet's leaves."""
    def dendrogram_purity(self, labels: npt.ArrayLike) -> float:
        """Dendrogram purity against one class label per leaf (ints, strings, ...)."""
    def subtree_score(self, labels: npt.ArrayLike) -> float:
        """Subtree score against one class label per leaf: pure internal nodes over n - C."""
    def ari_auc(self, labels: npt.ArrayLike) -> float:
        """Area under the adjusted-Rand-index curve over the cut counts, divided by n - 1."""
    def dasgupta_cost(self, similarity: npt.ArrayLike) -> float:
        """Dasgupta's cost of an (n, n) similarity array."""
    def __eq__(self, other: object, /) -> bool:
        """Same leaves and same clusters (heights aside)."""
    def __hash__(self) -> int:
        """Equal trees hash equal (dict keys, sets, collections.Counter)."""

@final
class Clusters(Sequence[list[int]]):
    """A tree's clusters as sorted lists of leaf indices in lexicographic order, made one at a
    time when asked for (memory linear in the leaves whatever the tree's shape)."""

    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, index: SupportsIndex, /) -> list[int]: ...
    @overload
    def __getitem__(self, index: slice, /) -> list[list[int]]: ...
    def __contains__(self, item: object, /) -> bool: ...
    def index(self, value: Any, start: SupportsIndex = 0, stop: SupportsIndex = ..., /) -> int:
        """The place of the cluster `value` (a sorted list of leaves); ValueError if it is not one."""
    def count(self, value: Any, /) -> int:
        """1 if `value` is one of the clusters, else 0."""
    def __eq__(self, other: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]
    @property
    def total_size(self) -> int:
        """The number of leaves in all the lists (n²/2 for a caterpillar over n leaves)."""
    def tolist(self) -> list[list[int]]:
        """Every cluster as a list at once; refused, saying the memory, when it would not fit."""

@final
class Jet:
    """A Ginkgo jet: leaf four-momenta (E, px, py, pz) and likelihood parameters."""

    def __new__(
        cls,
        leaves: npt.ArrayLike,
        t_cut: SupportsFloat = 16.0,
        lam: SupportsFloat = 1.5,
        lam_root: Optional[SupportsFloat] = None,
        name: str = "jet",
    ) -> "Jet":
        """`leaves`: an (n, 4) array-like of four-momenta (E, px, py, pz), at most 64 rows."""
    @property
    def name(self) -> str:
        """The jet's name."""
    @property
    def n_leaves(self) -> int:
        """The number of leaves (particles)."""
    @property
    def t_cut(self) -> float:
        """The squared-mass cut below which a node does not split further."""
    @property
    def lam(self) -> float:
        """The decay rate of the splits below the root."""
    @property
    def lam_root(self) -> float:
        """The decay rate of the root split."""
    @property
    def leaves(self) -> npt.NDArray[np.float64]:
        """The four-momenta as an (n, 4) array."""
    @property
    def truth(self) -> Optional[Tree]:
        """The generator's tree, if the file gave one."""

@final
class Trellis:
    """The exact cluster trellis over every binary tree."""

    @property
    def n_leaves(self) -> int:
        """The number of leaves."""
    @property
    def log_z(self) -> float:
        """The log partition function over every binary tree."""
    @property
    def map_log_likelihood(self) -> float:
        """The MAP tree's log-likelihood."""
    @property
    def map_tree(self) -> Tree:
        """The MAP tree."""
    @property
    def n_trees(self) -> int:
        """The number of trees with a finite likelihood (exact)."""
    @property
    def entropy(self) -> float:
        """The posterior entropy in nats."""
    @property
    def n_map_trees(self) -> int:
        """How many trees attain the MAP log-likelihood (ties to a relative 1e-9)."""
    def sample(
        self, n: SupportsIndex, seed: SupportsIndex = 0, *, cancel: Optional[CancelToken] = None
    ) -> list[Tree]:
        """`n` exact posterior samples drawn with `seed`."""
    def sample_parents(
        self, n: SupportsIndex, seed: SupportsIndex = 0, *, cancel: Optional[CancelToken] = None
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
    def cluster_marginal(self, leaves: _Ints) -> float:
        """The posterior probability that `leaves` form a cluster."""
    def log_probability(self, tree: Tree) -> float:
        """The log posterior probability of a binary tree over the trellis's leaves."""
    def rank(
        self, tree: Tree, *, cap: SupportsIndex = 1_000_000, cancel: Optional[CancelToken] = None
    ) -> tuple[int, bool]:
        """(rank, capped): 1 + the trees scoring above `tree`, counted exactly up to `cap`
        (about 10 ns per tree and leaf; a cap above 10**9 is refused with its cost)."""

def load_jets(path: _Path) -> list[Jet]:
    """The jets of a file in the data/ginkgo_jets schema."""
def save_jets(
    jets: Sequence[Jet], path: _Path, source: str = "written by trellis_lab (Python)"
) -> None:
    """Writes `jets` to `path` in the data/ginkgo_jets schema, atomically."""
def exact_trellis(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.ArrayLike] = None,
    energy: _Energy = "dasgupta",
    beta: SupportsFloat = 1.0,
    max_leaves: SupportsIndex = 22,
    cancel: Optional[CancelToken] = None,
) -> Trellis:
    """The exact trellis of a jet, or of an (n, n) similarity array under `energy`."""
def beam(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.ArrayLike] = None,
    energy: _Energy = "dasgupta",
    beta: SupportsFloat = 1.0,
    beam_size: Optional[SupportsIndex] = None,
    dedup: Literal["clusters", "equal_total"] = "clusters",
    merge_score: _MergeScore = "potential",
    cancel: Optional[CancelToken] = None,
) -> tuple[Tree, float]:
    """Beam search: the best tree it finds and its log-likelihood."""
def greedy(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.ArrayLike] = None,
    energy: _Energy = "dasgupta",
    beta: SupportsFloat = 1.0,
    merge_score: _MergeScore = "potential",
) -> tuple[Tree, float]:
    """Greedy agglomeration: its tree and log-likelihood."""
def kt(
    jet: Jet,
    p: SupportsFloat = 1.0,
    r: SupportsFloat = 1.0,
    *,
    form: Literal["pp", "ee"] = "pp",
) -> Tree:
    """The generalised kt algorithm: p = 1 (kt), 0 (Cambridge/Aachen), -1 (anti-kt); form "pp"
    (pT, rapidity, azimuth; radius r) or "ee" (energies and angles, FastJet's ee_genkt)."""

class _LambdaFit(TypedDict):
    lam: float
    objective: float
    evaluations: int
    jets_used: int
    jets_left_out: int
    at_bound: bool
    std_error: float

def fit_lambda(
    jets: Sequence[Jet],
    *,
    by: Literal["evidence", "truth"] = "evidence",
    likelihood: Literal["paper", "generator"] = "paper",
    trees: Optional[Sequence[Tree]] = None,
    lo: float = 0.01,
    hi: float = 50.0,
    max_leaves: int = 20,
    cancel: Optional[CancelToken] = None,
) -> _LambdaFit:
    """The Ginkgo rate maximising the sum of log Z (by="evidence") or of the truth trees'
    log-likelihoods (by="truth") over the jets, within [lo, hi]."""

def lambda_curve(
    jets: Sequence[Jet],
    lams: Sequence[float],
    *,
    by: Literal["evidence", "truth"] = "evidence",
    likelihood: Literal["paper", "generator"] = "paper",
    trees: Optional[Sequence[Tree]] = None,
    max_leaves: int = 20,
    cancel: Optional[CancelToken] = None,
) -> npt.NDArray[np.float64]:
    """fit_lambda's objective at each rate of lams."""

@final
class FlatTrellis:
    """The exact flat cluster trellis over every clustering."""

    @property
    def log_z(self) -> float:
        """The log partition function over all clusterings."""
    @property
    def map_log_energy(self) -> float:
        """The MAP clustering's log energy."""
    def map_labels(self) -> npt.NDArray[np.int64]:
        """The MAP clustering as a label per point."""
    def pairwise_marginals(self) -> npt.NDArray[np.float64]:
        """The (n, n) probabilities that i and j share a cluster."""

def generate_jets(
    n: SupportsIndex,
    min_leaves: SupportsIndex = 5,
    max_leaves: SupportsIndex = 10,
    seed: SupportsIndex = 0,
    jet_type: Literal["qcd", "w"] = "qcd",
    root_scale: Optional[SupportsFloat] = None,
    max_tries: Optional[SupportsIndex] = None,
    *,
    cancel: Optional[CancelToken] = None,
) -> list[Jet]:
    """`n` jets from the Ginkgo generator, drawn with `seed` as the configs draw them."""
def average_linkage(similarity: npt.ArrayLike) -> Tree:
    """Average linkage (UPGMA) on an (n, n) symmetric similarity array, any n: the tree the
    command line's board builds (`--methods average_linkage`), bit for bit, and SciPy's:
    `scipy.cluster.hierarchy.linkage(squareform(c - S, checks=False), "average")` with c the
    largest entry of S once its diagonal is read as 0 (the diagonal is otherwise ignored).
    Ties between equal mean similarities (0/1 graphs have many) are broken by SciPy's rule,
    the nearest-neighbour chain's (kodama's implementation of it). Node heights are c minus the
    mean similarity between the merged clusters."""
def map_trellis(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.ArrayLike] = None,
    energy: _Energy = "dasgupta",
    beta: SupportsFloat = 1.0,
    max_leaves: SupportsIndex = 24,
    cancel: Optional[CancelToken] = None,
) -> tuple[Tree, float]:
    """The exact MAP tree and value alone (the MAP-only trellis)."""
def standardize(data: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Columns centred and scaled to unit variance, as the board feeds the coalescent and PYDT."""
def flat_trellis(
    affinity: npt.ArrayLike, beta: SupportsFloat = 1.0, *, cancel: Optional[CancelToken] = None
) -> FlatTrellis:
    """The flat trellis of the correlation-clustering energy over an (n, n) affinity array."""

@final
class SparseTrellis:
    """The exact trellis restricted to the trees whose clusters are all vertices."""

    @property
    def log_z(self) -> float:
        """log Z over the trees the vertex set encodes."""
    @property
    def map_log_likelihood(self) -> float:
        """The best encoded tree's log-likelihood."""
    @property
    def map_tree(self) -> Optional[Tree]:
        """The best encoded tree (None when none has a finite likelihood)."""
    @property
    def n_trees(self) -> float:
        """The number of encoded trees with a finite likelihood."""
    @property
    def n_vertices(self) -> int:
        """The number of vertices (clusters, leaves and root included)."""
    @property
    def sparsity_index(self) -> float:
        """log of the encoded trees over log of all (2N-3)!! trees."""
    def sample(
        self, n: SupportsIndex, seed: SupportsIndex = 0, *, cancel: Optional[CancelToken] = None
    ) -> list[Tree]:
        """`n` exact samples from the posterior restricted to the encoded trees."""
    def sample_parents(
        self, n: SupportsIndex, seed: SupportsIndex = 0, *, cancel: Optional[CancelToken] = None
    ) -> npt.NDArray[np.int64]:
        """sample(n, seed)'s trees as canonical parent rows (as Trellis.sample_parents)."""

def sparse_trellis(
    jet: Optional[Jet] = None,
    *,
    similarity: Optional[npt.ArrayLike] = None,
    energy: _Energy = "dasgupta",
    beta: SupportsFloat = 1.0,
    trees: Optional[Sequence[Tree]] = None,
    seed_trees: Optional[SupportsIndex] = None,
    cancel: Optional[CancelToken] = None,
) -> SparseTrellis:
    """The sparse trellis over the clusters of `trees` (default: beam search's final beam)."""

@final
class BhcFit:
    """A BHC tree: the tree, log p(D|T), BHC's lower bound on the DPM evidence, every node's r_k
    and the cut at r_k < 0.5."""

    @property
    def model(self) -> Literal["gaussian", "bernoulli", "multinomial"]:
        """The cluster model: "gaussian", "bernoulli" or "multinomial"."""
    @property
    def alpha(self) -> float:
        """The DP concentration alpha."""
    @property
    def tree(self) -> Tree:
        """The tree (leaves 0..n are the rows; internal node n + k is the k-th merge; heights are
        cluster sizes)."""
    @property
    def log_p_tree(self) -> float:
        """log p(D | T), BHC's marginal likelihood of the tree."""
    @property
    def log_lower_bound(self) -> float:
        """log[Gamma(alpha)/Gamma(N+alpha) f(T)]: BHC's lower bound on the DPM evidence."""
    @property
    def r(self) -> npt.NDArray[np.float64]:
        """r_k = pi_k p(D_k|H1) / p(D_k|T_k) per node id (1 at the leaves)."""
    @property
    def cut(self) -> npt.NDArray[np.int64]:
        """Cluster labels (int64, numbered by lowest row) of the cut the paper recommends: from
        the root down, a node with r_k >= 0.5 is a cluster."""
    def coclustering(self) -> npt.NDArray[np.float64]:
        """P(rows i and j in one cluster) under the posterior over the tree's cuts, (n, n)."""
    def __eq__(self, other: object, /) -> bool:
        """The same model, alpha and nodes (every number bit for bit)."""

@final
class BrtFit:
    """A greedy Bayesian rose tree: the tree (any number of children per node) and log p(D|T)."""

    @property
    def model(self) -> Literal["gaussian", "bernoulli", "multinomial"]:
        """The cluster model: "gaussian", "bernoulli" or "multinomial"."""
    @property
    def gamma(self) -> float:
        """BRT's gamma: a node with k children is one cluster with prior 1 - (1 - gamma)^(k - 1)."""
    @property
    def tree(self) -> Tree:
        """The rose tree (leaves 0..n are the rows; heights are cluster sizes)."""
    @property
    def log_p_tree(self) -> float:
        """log p(D | T), BRT's marginal likelihood of the tree."""
    @property
    def ops(self) -> list[Literal["join", "absorb", "collapse"]]:
        """The greedy operations in the order applied: "join", "absorb" or "collapse"."""

def brt(
    data: npt.ArrayLike,
    model: Literal["gaussian", "bernoulli", "multinomial"] = "gaussian",
    *,
    gamma: SupportsFloat = 0.5,
    cancel: Optional[CancelToken] = None,
) -> BrtFit:
    """Greedy Bayesian rose trees (Blundell, Teh & Heller 2010) on the rows of `data`."""

@final
class BhcExact:
    """The exact answers beside BHC on one data set, and the gaps of a greedy BHC fit to them
    (every bound on the DPM evidence's scale, log[Gamma(alpha)/Gamma(N+alpha) f])."""

    @property
    def model(self) -> Literal["gaussian", "bernoulli", "multinomial"]:
        """The cluster model."""
    @property
    def alpha(self) -> float:
        """The DP concentration alpha."""
    @property
    def log_evidence(self) -> float:
        """log p(D), the DPM evidence: the sum over all Bell(n) partitions."""
    @property
    def map_partition(self) -> npt.NDArray[np.int64]:
        """Labels (int64, numbered by lowest row) of the MAP partition."""
    @property
    def map_log_posterior(self) -> float:
        """log P(MAP partition | D)."""
    def coclustering(self) -> npt.NDArray[np.float64]:
        """P(rows i and j in one cluster | D) over all partitions, (n, n)."""
    @property
    def best_tree(self) -> Tree:
        """The best binary tree under BHC's objective (the first split in subset order at ties)."""
    @property
    def best_log_bound(self) -> float:
        """The best tree's bound: log[Gamma(alpha)/Gamma(N+alpha) max_T f(T)]."""
    @property
    def mean_log_bound(self) -> float:
        """The average tree's: log[Gamma(alpha)/Gamma(N+alpha) mean_T f(T)] over all (2n-3)!! trees."""
    @property
    def greedy_log_bound(self) -> float:
        """The greedy fit's lower bound (its `log_lower_bound`)."""
    @property
    def gap_evidence_greedy(self) -> float:
        """log p(D) - greedy_log_bound >= 0: the evidence the greedy tree's cuts miss."""
    @property
    def gap_evidence_best(self) -> float:
        """log p(D) - best_log_bound >= 0: the evidence even the best tree misses."""
    @property
    def gap_best_greedy(self) -> float:
        """best_log_bound - greedy_log_bound >= 0: how far the greedy tree is from the best."""
    @property
    def greedy_is_best(self) -> bool:
        """Whether the greedy tree is a best tree (the same clusters)."""
    @property
    def ari_cut_map(self) -> float:
        """Adjusted Rand index of the greedy fit's r_k < 0.5 cut against the MAP partition."""
    @property
    def coclustering_max_abs_diff(self) -> float:
        """Largest |P_BHC(i~j) - P_DPM(i~j)| over pairs i < j (the greedy tree's cuts against all
        partitions)."""

def bhc_exact(
    data: npt.ArrayLike,
    model: Literal["gaussian", "bernoulli", "multinomial"] = "gaussian",
    *,
    alpha: SupportsFloat = 1.0,
    fit: Optional[BhcFit] = None,
    cancel: Optional[CancelToken] = None,
) -> BhcExact:
    """The exact answers beside BHC on the rows of `data` (at most 22)."""

def bhc(
    data: npt.ArrayLike,
    model: Literal["gaussian", "bernoulli", "multinomial"] = "gaussian",
    *,
    alpha: SupportsFloat = 1.0,
    cancel: Optional[CancelToken] = None,
) -> BhcFit:
    """Bayesian hierarchical clustering of the rows of `data` under a Dirichlet-process mixture."""

@final
class CoalescentFit:
    """A coalescent fit: the highest-weight tree, every particle with its weight and, for the SMC
    methods, the estimate of log p(X) and the weight mode that produced it."""

    @property
    def method(self) -> str:
        """The method's name ("mpost2", "mgreedy", ...)."""
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
    def resamples(self) -> int:
        """SMC stages that resampled (0 for a greedy method)."""
    @property
    def log_joint(self) -> float:
        """log p(X, tree) of the best tree under the model."""

@final
class DiffusionTreeFit:
    """A diffusion tree's MAP search: the best tree, its objective and log joint, the best
    objective after each step, and the parameters at the end."""

    @property
    def model(self) -> Literal["pydt", "ddt"]:
        """"pydt" or "ddt"."""
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
    def em_runs(self) -> int:
        """Full EM runs the search made."""
    @property
    def params(self) -> dict[str, float]:
        """{"theta", "alpha", "c", "sigma2"} at the end."""
    @property
    def trace(self) -> npt.NDArray[np.float64]:
        """The best objective after the start and after each search step."""

@final
class DiffusionTreeSamples:
    """A chain of the collapsed diffusion-tree sampler."""

    @property
    def model(self) -> Literal["pydt", "ddt"]:
        """"pydt" or "ddt"."""
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
    def log_likelihood(self) -> npt.NDArray[np.float64]:
        """log p(X | T, t) after each iteration."""
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
    particles: SupportsIndex = 20,
    seed: SupportsIndex = 0,
    sigma2: Optional[SupportsFloat] = None,
    phi: Optional[npt.ArrayLike] = None,
    weight_mode: Literal["exact", "paper_faithful"] = "exact",
    resample_threshold: SupportsFloat = 0.5,
    cancel: Optional[CancelToken] = None,
) -> CoalescentFit:
    """Kingman-coalescent clustering of the rows of an (n, d) array."""
def pydt_map(
    data: npt.ArrayLike,
    *,
    ddt: bool = False,
    seed: SupportsIndex = 0,
    theta: Optional[SupportsFloat] = None,
    alpha: Optional[SupportsFloat] = None,
    c: SupportsFloat = 1.0,
    sigma2: SupportsFloat = 1.0,
    noise: SupportsFloat = 0.1,
    iterations: SupportsIndex = 30,
    learn: Sequence[Literal["theta", "alpha", "c", "sigma2"]] = (),
    cancel: Optional[CancelToken] = None,
) -> DiffusionTreeFit:
    """The MAP Pitman-Yor (or, with ddt=True, Dirichlet) diffusion tree by EM search."""
def pydt_mcmc(
    data: npt.ArrayLike,
    iterations: SupportsIndex = 100,
    *,
    ddt: bool = False,
    seed: SupportsIndex = 0,
    theta: Optional[SupportsFloat] = None,
    alpha: Optional[SupportsFloat] = None,
    c: SupportsFloat = 1.0,
    sigma2: SupportsFloat = 1.0,
    noise: SupportsFloat = 0.0,
    sample: Sequence[Literal["theta", "alpha", "c", "sigma2"]] = ("theta", "alpha", "c", "sigma2"),
    moves: SupportsIndex = 0,
    rule: Literal["general", "likelihood"] = "general",
    thin: SupportsIndex = 1,
    max_tries: SupportsIndex = 100,
    cancel: Optional[CancelToken] = None,
) -> DiffusionTreeSamples:
    """A chain of the collapsed Pitman-Yor (or Dirichlet) diffusion-tree sampler."""
