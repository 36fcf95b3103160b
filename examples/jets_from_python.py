"""Start here from Python: the exact cluster trellis and the kt family on Ginkgo jets.

    pip install ./python scipy matplotlib  # once, from the repository root
    python examples/jets_from_python.py [jets.json | --generate N]

Loads jets (default: data/ginkgo_jets/truth_9.json) or draws N from the Ginkgo generator, runs the exact trellis (MAP tree, log Z,
number of trees) and kt / Cambridge-Aachen / anti-kt on each, compares every tree's
log-likelihood with the exact MAP and the clusters it shares with the MAP tree, and draws the
first jet's MAP and anti-kt trees as SciPy dendrograms (jets_from_python.png, with matplotlib).
"""

import pathlib
import sys

import scipy.cluster.hierarchy as sch

import trellis_lab as tl

ROOT = pathlib.Path(__file__).resolve().parents[1]
if len(sys.argv) > 1 and sys.argv[1] == "--generate":
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    jets = tl.generate_jets(n, min_leaves=6, max_leaves=9, seed=1)
    print(f"{len(jets)} jets from the Ginkgo generator (QCD, 6 to 9 leaves, seed 1)")
else:
    path = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "data/ginkgo_jets/truth_9.json"
    jets = tl.load_jets(path)
    print(f"{len(jets)} jets from {path}")
print(f"{'jet':<14} {'N':>3} {'log Z':>10} {'MAP':>10} {'trees':>10}  kt / C-A / anti-kt: MAP - tree (shared clusters)")
for jet in jets:
    t = tl.exact_trellis(jet)
    map_clusters = set(map(tuple, t.map_tree.clusters()))
    cells = []
    for p in (1, 0, -1):
        tree = tl.kt(jet, p=p)
        ll = tree.log_likelihood(jet)
        # -inf: the tree has a split the Ginkgo model forbids (a child mass above its parent's).
        gap = "forbid" if ll == float("-inf") else f"{t.map_log_likelihood - ll:6.2f}"
        shared = len(map_clusters & set(map(tuple, tree.clusters())))
        cells.append(f"{gap:>6} ({shared}/{len(map_clusters)})")
    print(f"{jet.name:<14} {jet.n_leaves:>3} {t.log_z:>10.4f} {t.map_log_likelihood:>10.4f} {t.n_trees:>10}  " + "  ".join(cells))

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed: no figure (pip install matplotlib)")
    sys.exit(0)
jet = jets[0]
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for ax, (title, tree) in zip(
    axes, [("exact MAP", tl.exact_trellis(jet).map_tree), ("anti-kt", tl.kt(jet, p=-1))]
):
    sch.dendrogram(tree.to_linkage(), ax=ax)
    ax.set_title(f"{jet.name}: {title} ({tree.log_likelihood(jet):.3f})")
    ax.set_ylabel("cluster size")
fig.tight_layout()
fig.savefig("jets_from_python.png", dpi=120)
print("wrote jets_from_python.png")
