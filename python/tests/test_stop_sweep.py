"""Every long call stops within half a second of Ctrl-C (issue 50): a child process restores
Python's default SIGINT handler (a background job, as CI's steps can be, inherits SIGINT
ignored, and then no signal would ever arrive), starts each call and sends itself SIGINT after
each of several delays, and measures how long the call runs on after the signal. A case that is
over the bound is tried twice more and its best time counts, so that a moment's load on a
shared machine does not decide; the bound is for an idle machine. About 40 s in all. Marked
`stop_sweep` (conftest.py), and part of the default run, so CI runs it."""

import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

import trellis_lab as tl

HERE = pathlib.Path(__file__).resolve().parent
BOUND = 0.5
DELAYS = (0.05, 0.25, 0.6)

CHILD = r"""
import json, os, signal, sys, threading, time, warnings
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
import trellis_lab as tl
warnings.simplefilter("ignore", tl.CostWarning)
sys.path.insert(0, sys.argv[3])
from made_up import jet_of, points, similarity

small = tl.exact_trellis(similarity=similarity(12))
ranked = tl.beam(similarity=1 - similarity(12))[0]  # billions of trees rank above it
sparse = tl.sparse_trellis(similarity=similarity(24), seed_trees=200)
co = tl.exact_trellis(similarity=similarity(17), max_leaves=17)
jet24 = tl.generate_jets(1, min_leaves=24, max_leaves=24, seed=1, root_scale=60000.0)[0]
jets = tl.generate_jets(16, min_leaves=12, max_leaves=14, seed=2, max_tries=100_000)
floats32 = np.random.default_rng(3).normal(size=(8000, 200)).astype(np.float32)
wide32 = np.random.default_rng(4).normal(size=(50000, 1000)).astype(np.float32)
S5000 = similarity(5000)
X1500, X3000, X200, X60 = points(1500), points(3000), points(200), points(60)

CALLS = {
    "exact_trellis similarity": lambda: tl.exact_trellis(similarity=similarity(21), max_leaves=21),
    "exact_trellis jet": lambda: tl.exact_trellis(jet_of(21), max_leaves=21),
    "map_trellis 24-leaf jet": lambda: tl.map_trellis(jet24, max_leaves=24),
    "map_trellis similarity": lambda: tl.map_trellis(similarity=similarity(23), max_leaves=23),
    "flat_trellis": lambda: tl.flat_trellis(similarity(21) - 0.5),
    "sparse_trellis": lambda: tl.sparse_trellis(similarity=similarity(64), seed_trees=2000),
    "beam": lambda: tl.beam(similarity=similarity(64), beam_size=2000),
    "Trellis.sample": lambda: small.sample(3_000_000),
    "Trellis.sample_parents": lambda: small.sample_parents(3_000_000),
    "SparseTrellis.sample": lambda: sparse.sample(3_000_000),
    "Trellis.rank": lambda: small.rank(ranked, cap=10**9),
    "Trellis.coclustering": lambda: co.coclustering(),
    "coalescent mpost2": lambda: tl.coalescent(X1500, particles=200),
    "coalescent float32 rows": lambda: tl.coalescent(floats32),
    "coalescent mgreedy": lambda: tl.coalescent(X3000, "mgreedy"),
    "pydt_map": lambda: tl.pydt_map(X200, iterations=100_000),
    "pydt_mcmc": lambda: tl.pydt_mcmc(X60, 1_000_000),
    "generate_jets": lambda: tl.generate_jets(1_000_000, min_leaves=8, max_leaves=12),
    "fit_lambda": lambda: tl.fit_lambda(jets),
    "lambda_curve": lambda: tl.lambda_curve(jets, np.linspace(0.5, 5, 40)),
    "standardize": lambda: tl.standardize(wide32),
    "average_linkage": lambda: tl.average_linkage(S5000),
    "bhc": lambda: tl.bhc(X3000),
    "brt": lambda: tl.brt(X3000),
    "bhc_exact": lambda: tl.bhc_exact(points(21)),
}

def once(call, delay):
    sent = []
    def fire():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)
    timer = threading.Timer(delay, fire)
    t0 = time.monotonic()
    try:
        timer.start()
        try:
            call()
            status = "ended first"
        except KeyboardInterrupt:
            status = "interrupted"
        except Exception as e:
            status = f"raised {type(e).__name__}: {e}"
        end = time.monotonic()
        timer.cancel()
        if status == "ended first" and sent:
            status = "returned after the signal"
        time.sleep(0.05)
    except KeyboardInterrupt:
        end, status = time.monotonic(), "interrupted outside the call"
    latency = end - sent[0] if sent else None
    return status, latency, end - t0

delays = [float(d) for d in sys.argv[1].split(",")]
bound = float(sys.argv[2])
names = sys.argv[4:] or list(CALLS)
for name in names:
    for delay in delays:
        tries = []
        for _ in range(3):
            status, latency, total = once(CALLS[name], delay)
            tries.append((status, latency, total))
            if status != "interrupted" or latency < bound:
                break
        best = min(tries, key=lambda t: (t[0] != "interrupted", t[1] or 1e9))
        print(json.dumps({"call": name, "delay": delay, "status": best[0],
                          "latency": best[1], "tries": len(tries)}), flush=True)
"""


@pytest.mark.stop_sweep
def test_every_long_call_stops_within_half_a_second_of_ctrl_c():
    r = subprocess.run(
        [sys.executable, "-c", CHILD, ",".join(map(str, DELAYS)), str(BOUND), str(HERE)],
        capture_output=True, text=True, timeout=240,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},  # the CostWarnings of the long inputs
    )
    assert r.returncode == 0, r.stderr[-3000:]
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 25 * len(DELAYS), r.stdout + r.stderr[-2000:]
    report = "\n".join(
        f"{x['call']:28s} at {x['delay']:.2f} s: {x['status']}, "
        + (f"{x['latency']:.3f} s after" if x["latency"] is not None else "no signal")
        + f" ({x['tries']} tries)"
        for x in rows
    )
    # A call that ended before the signal was sent (no latency) needed no stopping at that delay;
    # it still counts only if the same call was interrupted, in time, at an earlier delay.
    stopped = {x["call"] for x in rows if x["status"] == "interrupted" and x["latency"] < BOUND}
    bad = [
        x for x in rows
        if not (x["status"] == "interrupted" and x["latency"] < BOUND)
        and not (x["status"] == "ended first" and x["latency"] is None and x["call"] in stopped)
    ]
    assert not bad, f"load {os.getloadavg()}\n{report}"
    print(report)


def test_rank_with_a_huge_cap_stops_on_its_token_and_a_cap_beyond_the_limit_is_refused():
    s = np.random.default_rng(0).random((12, 12))
    s = (s + s.T) / 2
    t = tl.exact_trellis(similarity=s)
    low = tl.beam(similarity=1 - s)[0]
    token = tl.CancelToken(timeout=0.3)
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        t.rank(low, cap=10**9, cancel=token)
    assert time.monotonic() - t0 < 0.3 + BOUND
    # 10**12 trees: about 33 hours by the cost model, beyond the command line's limit.
    with pytest.raises(ValueError) as e:
        t.rank(low, cap=10**12)
    msg = str(e.value)
    assert "cap = 1000000000000 is more than 1000000000" in msg and "33.3 h" in msg, msg
    assert t.rank(t.map_tree, cap=10**9) == (1, False)
