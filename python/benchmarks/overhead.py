"""Call overhead of the Python package against the command line, on the same jets.

    python python/benchmarks/overhead.py [path/to/trellis-lab]

Generates 50 Ginkgo jets of 12 leaves, writes them with `save_jets`, then times (best of 5, each
in a fresh process for the CLI) the exact trellis, greedy and beam search on every jet: from
Python, and with `trellis-lab score FILE` (which runs the same three). Also times one exact
trellis over a random 20-point similarity matrix from Python.
"""

import pathlib
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import trellis_lab as tl

ROOT = pathlib.Path(__file__).resolve().parents[2]
exe = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target" / "release" / "trellis-lab")

jets = tl.generate_jets(50, min_leaves=12, max_leaves=12, seed=12)
with tempfile.TemporaryDirectory() as d:
    path = pathlib.Path(d) / "jets12.json"
    tl.save_jets(jets, path)

    def python_run():
        for jet in tl.load_jets(path):
            tl.exact_trellis(jet)
            tl.greedy(jet)
            tl.beam(jet)

    def cli_run():
        subprocess.run([exe, "score", str(path)], check=True, capture_output=True)

    py, cli = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        python_run()
        py.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        cli_run()
        cli.append(time.perf_counter() - t0)
print(f"50 jets x 12 leaves: Python best {min(py):.3f} s (median {np.median(py):.3f}), "
      f"CLI score best {min(cli):.3f} s (median {np.median(cli):.3f}), "
      f"ratio of bests {min(py) / min(cli):.3f}")

s = np.random.default_rng(0).random((20, 20))
s = (s + s.T) / 2
t0 = time.perf_counter()
t = tl.exact_trellis(similarity=s, max_leaves=20)
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"exact trellis, 20 points: {dt:.1f} s, peak RSS {peak:.0f} MiB, log Z {t.log_z:.6f}")
