#!/usr/bin/env python3
"""The authors' public Python cluster trellis against ours, on the same Ginkgo jets.

What it measures: for each jet, the wall and CPU seconds of the exact trellis (log Z and the
MAP tree) in
- the reference, SebastianMacaluso/ClusterTrellis at commit 138632a ("Jet 4-vec sampling
  likelihood", 2021-10-25): `HierarchicalTrellis.create_from_leaves` + `compute_map_tree`, one
  run per jet, single-threaded, in a fresh process (PYTHONHASHSEED=0) with a timeout;
- ours, `trellis_lab.exact_trellis(jet)`, with RAYON_NUM_THREADS=1 and =2, in fresh processes
  (one warm-up call, then the median of repeated calls, at least 5 and 0.5 s);
and checks that both give the same log Z, MAP log-likelihood (|diff| <= 1e-6 (1 + |x|)) and
number of trees with a finite likelihood.

The reference's likelihood. Its node class `Ginkgo_node.ModelNode` calls
`Ginkgo_likelihood.split_logLH`, which at 138632a is a deprecation stub returning None (its
warning says to use `split_logLH_without_non_stop_prob` to reproduce arXiv:2002.11661). The
node class here subclasses `Ginkgo_node.ModelNode`, keeps its `compute_map_features` and calls
the repository's own `split_logLH_without_non_stop_prob`, with the jet's `lam_root` at the root
split as the repository's notebook does. That is the "paper-era" psi of our `GinkgoModel`
(crates/trellis-core/src/model/ginkgo.rs). The package's `__init__` is bypassed (it imports
`topologies`, which needs the separate `ginkgo` and `absl` packages, unused here); if torch is
absent a stub stands in for it (`Ginkgo_likelihood` imports it for `fill_jet_info` only).

Jets: N = 9 from data/ginkgo_jets/truth_9.json (indices 0, 1, 2); N >= 10 from our generator,
`trellis_lab.generate_jets(k, min_leaves=N, max_leaves=N, seed=--seed)` (QCD, t_cut 16,
lambda 1.5). The table names each jet.

Measured with Python 3.11.7, numpy 1.26.4, scipy 1.11.4 (the reference's `trellis_node`
imports scipy's logsumexp and softmax, so scipy's version matters as much as numpy's). To rerun:

    git clone https://github.com/SebastianMacaluso/ClusterTrellis /tmp/ClusterTrellis
    git -C /tmp/ClusterTrellis checkout 138632a
    python3 -m venv /tmp/venv-ref && /tmp/venv-ref/bin/pip install numpy==1.26.4 scipy==1.11.4
    # a Python with trellis_lab installed (docs/python.md), e.g. /tmp/venv-py
    python3 scripts/python_reference_times.py --reference /tmp/ClusterTrellis \\
        --ref-python /tmp/venv-ref/bin/python --ours-python /tmp/venv-py/bin/python \\
        --plan 9:3,10:3,11:3,12:1
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REVISION = "138632a4ca9948453edf1bde772a7ad3f50f39f9"
SINGLE = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


def worker_ref(job):
    """Runs in the reference's Python: one exact trellis on one jet."""
    import types
    import numpy as np
    import scipy
    src = os.path.join(job["reference"], "src", "ClusterTrellis")
    pkg = types.ModuleType("ClusterTrellis")  # the package without its __init__
    pkg.__path__ = [src]
    sys.modules["ClusterTrellis"] = pkg
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.modules["torch"] = types.ModuleType("torch")
    from ClusterTrellis import HierarchicalTrellis, Ginkgo_node, Ginkgo_likelihood as lh

    class PaperEraNode(Ginkgo_node.ModelNode):
        def get_energy_of_split(self, a, b):
            p = self.model_params
            root = len(a.elements) + len(b.elements) == p["N_const"]
            return lh.split_logLH_without_non_stop_prob(
                a.map_features[0], a.map_features[1], b.map_features[0], b.map_features[1],
                p["delta_min"], p["lam_root"] if root else p["lam"])

    leaves = [[np.asarray(p, dtype=float), 0] for p in job["leaves"]]
    params = {"delta_min": job["t_cut"], "lam": job["lam"], "lam_root": job["lam_root"],
              "N_const": len(leaves)}
    w0, c0 = time.perf_counter(), time.process_time()
    trellis = HierarchicalTrellis.HierarchicalTrellis()
    trellis.create_from_leaves(leaves, params, NodeClass=PaperEraNode)
    map_energy, log_z, n_trees = trellis.compute_map_tree()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {"wall": wall, "cpu": cpu, "log_z": float(log_z), "map": float(map_energy),
            "n_trees": int(n_trees), "numpy": np.__version__, "scipy": scipy.__version__,
            "python": sys.version.split()[0]}


def worker_ours(job):
    """Runs in our Python: repeated exact trellis on one jet."""
    import trellis_lab as tl
    jet = tl.Jet(job["leaves"], t_cut=job["t_cut"], lam=job["lam"], lam_root=job["lam_root"])
    tl.exact_trellis(jet)  # warm-up: starts the thread pool
    walls, cpus, start = [], [], time.perf_counter()
    while len(walls) < 5 or time.perf_counter() - start < 0.5:
        w0, c0 = time.perf_counter(), time.process_time()
        t = tl.exact_trellis(jet)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus), "runs": len(walls),
            "log_z": t.log_z, "map": t.map_log_likelihood, "n_trees": int(t.n_trees),
            "version": getattr(tl, "__version__", "?"), "module": tl.__file__}


def worker_gen(job):
    """Runs in our Python: generated jets of exactly N leaves."""
    import trellis_lab as tl
    jets = tl.generate_jets(job["k"], min_leaves=job["n"], max_leaves=job["n"], seed=job["seed"])
    return [{"name": f"generate_jets(seed={job['seed']}, N={job['n']})[{i}]",
             "leaves": j.leaves.tolist(), "t_cut": j.t_cut, "lam": j.lam,
             "lam_root": j.lam_root} for i, j in enumerate(jets)]


def call(python, mode, job, env=None, timeout=None):
    """Runs this script as a worker in a fresh process; its JSON answer, or an error string."""
    full_env = dict(os.environ, PYTHONHASHSEED="0", **SINGLE, **(env or {}))
    try:
        out = subprocess.run([python, os.path.abspath(__file__), "--worker", mode],
                             input=json.dumps(job), capture_output=True, text=True,
                             env=full_env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timeout after {timeout:.0f} s"
    if out.returncode != 0:
        return "failed: " + (out.stderr.strip().splitlines() or ["no message"])[-1]
    return json.loads(out.stdout.strip().splitlines()[-1])


def check_revision(ref):
    if not os.path.isdir(os.path.join(ref, "src", "ClusterTrellis")):
        sys.exit(f"{ref}: no src/ClusterTrellis; see this script's docstring")
    head = subprocess.run(["git", "-C", ref, "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        return "not a git repository: revision not checked (assumed 138632a)"
    if head.stdout.strip() != REVISION:
        sys.exit(f"{ref} is at {head.stdout.strip()}, not {REVISION}: "
                 "git -C DIR checkout 138632a")
    dirty = subprocess.run(["git", "-C", ref, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return REVISION + (" (with local changes!)" if dirty else " (clean)")


def cpu_model():
    with open("/proc/cpuinfo") as f:
        names = [ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")]
    return names[0] if names else "not recorded"


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def agree(a, b):
    return abs(a - b) <= 1e-6 * (1 + abs(a))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference", required=True, help="ClusterTrellis tree at 138632a")
    ap.add_argument("--ref-python", default=sys.executable, help="Python with numpy, scipy")
    ap.add_argument("--ours-python", default=sys.executable, help="Python with trellis_lab")
    ap.add_argument("--plan", default="9:3,10:3,11:3,12:1", help="N:jets,... (N = 9: truth_9)")
    ap.add_argument("--seed", type=int, default=1, help="generate_jets seed for N >= 10")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per reference run")
    ap.add_argument("--skip-after", type=float, default=180,
                    help="skip larger N once a reference run at this N took longer (s)")
    args = ap.parse_args()
    revision = check_revision(os.path.abspath(args.reference))
    started, load_start = datetime.datetime.now(datetime.timezone.utc), loadavg()
    print(f"# started {started:%Y-%m-%d %H:%M:%S} UTC, load {load_start}", file=sys.stderr)

    rows, versions, skip_reason = [], {}, None
    for item in args.plan.split(","):
        n, k = (int(x) for x in item.split(":"))
        if skip_reason:
            rows.append(f"| {n} | (skipped: {skip_reason}) | | | | | | | | | |")
            continue
        if n == 9:
            with open(os.path.join(ROOT, "data", "ginkgo_jets", "truth_9.json")) as f:
                jets = [dict(j, name=f"truth_9.json[{i}]")
                        for i, j in enumerate(json.load(f)["jets"][:k])]
        else:
            jets = call(args.ours_python, "gen", {"n": n, "k": k, "seed": args.seed})
            if isinstance(jets, str):
                sys.exit(f"generate_jets: {jets}")
        slowest = 0.0
        for jet in jets:
            job = {key: jet[key] for key in ("leaves", "t_cut", "lam", "lam_root")}
            ref = call(args.ref_python, "ref", dict(job, reference=os.path.abspath(args.reference)),
                       timeout=args.timeout)
            ours = {th: call(args.ours_python, "ours", job, env={"RAYON_NUM_THREADS": str(th)})
                    for th in (1, 2)}
            for r in ours.values():
                if isinstance(r, str):
                    sys.exit(f"ours on {jet['name']}: {r}")
            o1, o2 = ours[1], ours[2]
            versions["ours"] = f"trellis_lab {o1['version']} ({o1['module']})"
            if isinstance(ref, str):
                slowest = max(slowest, args.timeout)
                rows.append(f"| {n} | {jet['name']} | {ref} | | {o1['wall']:.2e} | "
                            f"{o1['cpu']:.2e} | {o2['wall']:.2e} | | | | |")
                continue
            versions["ref"] = (f"Python {ref['python']}, numpy {ref['numpy']}, "
                               f"scipy {ref['scipy']}")
            slowest = max(slowest, ref["wall"])
            ok = [agree(ref["log_z"], o["log_z"]) and agree(ref["map"], o["map"])
                  and ref["n_trees"] == o["n_trees"] for o in (o1, o2)]
            check = ("yes" if all(ok) else "**NO**") + (
                f": log Z {ref['log_z']:.6f}, abs diff {abs(ref['log_z'] - o1['log_z']):.0e}; MAP "
                f"{ref['map']:.6f}, abs diff {abs(ref['map'] - o1['map']):.0e}; "
                f"trees {ref['n_trees']} vs {o1['n_trees']}")
            rows.append(f"| {n} | {jet['name']} | {ref['wall']:.2f} | {ref['cpu']:.2f} | "
                        f"{o1['wall']:.2e} | {o1['cpu']:.2e} | {o2['wall']:.2e} | "
                        f"{ref['wall'] / o1['wall']:,.0f} | {ref['cpu'] / o1['cpu']:,.0f} | "
                        f"{ref['wall'] / o2['wall']:,.0f} | {check} |")
            print(rows[-1], file=sys.stderr)
        if slowest > args.skip_after:
            skip_reason = f"a reference run at N = {n} took {slowest:.0f} s > {args.skip_after:.0f} s"

    print(f"Date: {started:%Y-%m-%d %H:%M} UTC (start) to "
          f"{datetime.datetime.now(datetime.timezone.utc):%H:%M} UTC")
    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical CPUs")
    print(f"Load average (1, 5, 15 min): {load_start} at start, {loadavg()} at end")
    print(f"Reference: SebastianMacaluso/ClusterTrellis {revision}, "
          f"{versions.get('ref', 'versions not recorded (no run finished)')}, single-threaded")
    print(f"Ours: {versions.get('ours', '?')}, RAYON_NUM_THREADS=1 and 2")
    print("Command: " + " ".join([sys.executable] + sys.argv))
    print()
    print("Reference: one run per jet. Ours: median of repeated runs after a warm-up. "
          "Ratio: reference time / ours (wall/wall, CPU/CPU; CPU time is the less disturbed "
          "by other jobs' load). Same: log Z, MAP log-likelihood and number of trees agree "
          "(1e-6) with both thread counts; the diffs shown are against ours on 1 thread.")
    print()
    print("| N | jet | reference wall (s) | reference CPU (s) | ours 1 thread wall (s) | "
          "ours 1 thread CPU (s) | ours 2 threads wall (s) | ratio wall, 1 thread | "
          "ratio CPU, 1 thread | ratio wall, 2 threads | same |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        job = json.loads(sys.stdin.read())
        fn = {"ref": worker_ref, "ours": worker_ours, "gen": worker_gen}[sys.argv[2]]
        print(json.dumps(fn(job)))
    else:
        main()
