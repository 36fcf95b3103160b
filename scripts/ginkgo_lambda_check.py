#!/usr/bin/env python3
"""Why the paper-era Ginkgo likelihood does not recover the generator's rate, checked without
the Rust code: an independent numpy Ginkgo generator (the invariant-mass shower, written from its
plain-words description), the paper-era split potential, the same potential with its leaf
probability capped at 1, and the generator's own density (both orders of the children, the
leaves' masses, the two-body Jacobian), each fitted to the generator's truth trees.

Prints, as Markdown tables:
  1. the paper-era objective sum log p(truth; lambda) split by term, on jets drawn without
     selection: which terms make it rise as lambda -> 0;
  2. the rate each potential recovers, without selection and with the leaf-count windows the
     datasets use (the window is a selection that depends on lambda), on 3000 jets with their
     four-momenta and on 100,000 showers drawn by their scales alone;
  3. the same fits on the reference implementation's own generated jets
     (data/ginkgo_jets/: N = 4, 5, 9), the generator density's fit also with the selection on N
     corrected by a Monte Carlo estimate of P(N = n; lambda), and that corrected fit's sampling
     distribution on samples of the same design from the numpy generator.

Optional: --jets FILE.json prints each potential's sum over the file's truth trees at a few
rates (to compare with the Rust implementation's `tree_curve`).

Needs numpy only. About four minutes: python3 scripts/ginkgo_lambda_check.py [--seed S]
"""

import argparse
import json
import math
from pathlib import Path

import numpy as np

T_CUT, ROOT_SCALE, LAMBDA, MOMENTUM = 16.0, 900.0, 1.5, 400.0
U_MAX = 1.0 - 1e-3
ROOT = Path(__file__).resolve().parent.parent


# --- the generator ------------------------------------------------------------------------
def boost(p, parent, m):
    e = parent[0]
    beta = parent[1:] / e
    b2 = beta @ beta
    if b2 == 0:
        return p
    g = e / m
    bq = beta @ p[1:]
    coef = (g - 1) * bq / b2 + g * p[0]
    return np.array([g * (p[0] + bq), *(p[1:] + coef * beta)])


class Generator:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def u(self, lam):
        while True:
            u = self.rng.exponential(1 / lam)
            if u < U_MAX:
                return u

    def node(self, p, tp, lam, leaves):
        if tp <= T_CUT:
            leaves.append(p)
            return len(leaves) - 1
        v = self.rng.standard_normal(3)
        r = v / np.linalg.norm(v)
        tl = tp * self.u(lam)
        tr = (math.sqrt(tp) - math.sqrt(tl)) ** 2 * self.u(lam)
        m = math.sqrt(tp)
        el, er = m / 2 * (1 + tl / tp - tr / tp), m / 2 * (1 + tr / tp - tl / tp)
        k = m / 2 * math.sqrt(max(0.0, 1 - 2 * (tl + tr) / tp + (tl - tr) ** 2 / tp**2))
        left = self.node(boost(np.array([el, *(k * r)]), p, m), tl, lam, leaves)
        right = self.node(boost(np.array([er, *(-k * r)]), p, m), tr, lam, leaves)
        return (left, right)

    def jet(self, lam):
        c = MOMENTUM / math.sqrt(3)
        p = np.array([math.sqrt(MOMENTUM**2 + ROOT_SCALE), c, c, c])
        leaves = []
        tree = self.node(p, ROOT_SCALE, lam, leaves)
        return np.array(leaves), tree


def m2(p):
    return p[0] ** 2 - p[1] ** 2 - p[2] ** 2 - p[3] ** 2


def splits(leaves, tree, out):
    """Appends (tP, tA, tB, A is a leaf, B is a leaf) of every split, masses from leaf sums."""
    if isinstance(tree, int):
        return [tree]
    a, b = splits(leaves, tree[0], out), splits(leaves, tree[1], out)
    pa, pb = leaves[a].sum(0), leaves[b].sum(0)
    out.append((m2(pa + pb), m2(pa), m2(pb), len(a) == 1, len(b) == 1))
    return a + b


def draw(n_jets, lo, hi, lam, seed):
    gen, rows, tries = Generator(seed), [], 0
    kept = 0
    while kept < n_jets:
        tries += 1
        leaves, tree = gen.jet(lam)
        if lo <= len(leaves) <= hi:
            kept += 1
            splits(leaves, tree, rows)
    return np.array(rows), tries


# --- the potentials (log psi of every split, as arrays) -------------------------------------
def log1mexp(x):
    return np.log(-np.expm1(-x))


def paper_terms(s, lam, cap=False):
    """The paper-era g(tp1, tmax) and g(tp2, tmin) (the constant -log 4 pi left out)."""
    tp, ta, tb, la, lb = s.T
    ta, tb = np.where(la, 0.0, ta), np.where(lb, 0.0, tb)
    hi, lo = np.maximum(ta, tb), np.minimum(ta, tb)
    tp2 = (np.sqrt(tp) - np.sqrt(hi)) ** 2

    def g(t_par, t):
        c = T_CUT / t_par
        if cap:
            c = np.minimum(c, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            dens = np.log(lam) - np.log(t_par) - lam * t / t_par
            return -log1mexp(lam) + np.where(t > 0, dens, log1mexp(lam * c))

    return g(tp, hi), g(tp2, lo), hi, lo, tp2


def paper(s, lam, cap=False):
    g1, g2, *_ = paper_terms(s, lam, cap)
    return g1 + g2 - math.log(4 * math.pi)


def generator(s, lam):
    """log of: both orders of f(t1 | tP) f(t2 | (sqrt tP - sqrt t1)^2), / 4 pi, times the
    Jacobian 8 tP / sqrt(K) (leaf masses as they are)."""
    tp, ta, tb, _, _ = s.T
    ta, tb = np.maximum(ta, 0.0), np.maximum(tb, 0.0)

    def f(t, tau):
        with np.errstate(divide="ignore", invalid="ignore"):
            u = t / tau
            v = np.log(lam) - np.log(tau) - lam * u - log1mexp(lam * U_MAX)
        return np.where(u < U_MAX, v, -np.inf)

    def order(t1, t2):
        return f(t1, tp) + f(t2, (np.sqrt(tp) - np.sqrt(t1)) ** 2)

    k = (tp - ta - tb) ** 2 - 4 * ta * tb
    both = np.logaddexp(order(ta, tb), order(tb, ta))
    return both - math.log(4 * math.pi) + np.log(8 * tp / np.sqrt(k))


POTENTIALS = {
    "paper-era": lambda s, l: paper(s, l).sum(),
    "paper-era, leaf probability capped at 1": lambda s, l: paper(s, l, cap=True).sum(),
    "generator density": lambda s, l: generator(s, l).sum(),
}

GRID = np.exp(np.linspace(math.log(0.01), math.log(20.0), 121))


def fit(objective):
    """Maximum over log lambda in [0.01, 20] (a grid of 121 points, then 201 between the best
    one's neighbours); its standard error from the curvature (None at a bound)."""
    v = np.array([objective(l) for l in GRID])
    i = int(v.argmax())
    if i == 0 and v[0] >= objective(GRID[0] * 1.001):
        return GRID[0], None
    if i == len(GRID) - 1:
        return GRID[i], None
    fine = np.exp(np.linspace(math.log(GRID[max(i - 1, 0)]), math.log(GRID[i + 1]), 201))
    lam = fine[int(np.argmax([objective(l) for l in fine]))]
    d = 1e-3 * lam
    second = (objective(lam + d) - 2 * objective(lam) + objective(lam - d)) / d**2
    return lam, (1 / math.sqrt(-second) if second < 0 else None)


def show(lam, se):
    return f"{lam:.3f} (lower bound)" if se is None and lam == GRID[0] else (
        f"{lam:.3f}" if se is None else f"{lam:.3f} ± {se:.3f}")


# --- showers by their scales alone ---------------------------------------------------------
def scale_showers(lam, n_jets, seed):
    """Many showers at once, scales only (a truth tree's likelihood under every potential here
    depends on the scales alone, up to a term free of lambda; N too). Returns the rows of
    `splits` with the jet of each, and every jet's N."""
    rng = np.random.default_rng(seed)

    def u(n):
        x = rng.exponential(1 / lam, n)
        bad = x >= U_MAX
        while bad.any():
            x[bad] = rng.exponential(1 / lam, bad.sum())
            bad = x >= U_MAX
        return x

    jet, t, n = np.arange(n_jets), np.full(n_jets, ROOT_SCALE), np.zeros(n_jets, int)
    rows, jets = [], []
    while len(t):
        leaf = t <= T_CUT
        np.add.at(n, jet[leaf], 1)
        jet, t = jet[~leaf], t[~leaf]
        tl = t * u(len(t))
        tr = (np.sqrt(t) - np.sqrt(tl)) ** 2 * u(len(t))
        rows.append(np.stack([t, tl, tr, tl <= T_CUT, tr <= T_CUT], 1))
        jets.append(jet)
        jet, t = np.concatenate([jet, jet]), np.concatenate([tl, tr])
    return np.concatenate(rows), np.concatenate(jets), n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jets", help="a jets JSON with truth trees: print each potential's sums")
    args = ap.parse_args()

    if args.jets:
        rows = []
        for j in json.loads(Path(args.jets).read_text())["jets"]:
            nest = lambda v: v if isinstance(v, int) else (nest(v[0]), nest(v[1]))  # noqa: E731
            splits(np.array(j["leaves"]), nest(j["truth_tree"]), rows)
        s = np.array(rows)
        for lam in (0.01, 0.5, 1.5, 3.0):
            print(lam, {k: f(s, lam) for k, f in POTENTIALS.items() if "capped" not in k})
        return

    # 1. The paper-era objective by term, jets without selection.
    s, _ = draw(2000, 1, 10**9, LAMBDA, args.seed)
    g1, g2, hi, lo, tp2 = paper_terms(s, 1.5)
    terms = {
        "heavier child a cluster: density at tP": (0, hi > 0),
        "heavier child a leaf (so both are): P(u < t_cut/tP)": (0, hi == 0),
        "lighter child a cluster: density at tp2": (1, lo > 0),
        "lighter child a leaf, tp2 >= t_cut: P(u < t_cut/tp2)": (1, (lo == 0) & (tp2 >= T_CUT)),
        "lighter child a leaf, tp2 < t_cut: 'P' > 1": (1, (lo == 0) & (tp2 < T_CUT)),
    }
    print(f"## 1. Paper-era sum log p(truth) by term: {len(s)} splits of 2000 jets, "
          f"λ = {LAMBDA}, no selection on N\n")
    print("| term | splits | at λ = 1.5 | at 0.01 minus at 1.5 | slope at 1.5 |")
    print("| --- | ---: | ---: | ---: | ---: |")

    def part(lam, which, mask):
        return paper_terms(s, lam)[which][mask].sum()

    for name, (which, mask) in terms.items():
        v, v0 = part(1.5, which, mask), part(0.01, which, mask)
        slope = (part(1.5 + 1e-5, which, mask) - part(1.5 - 1e-5, which, mask)) / 2e-5
        print(f"| {name} | {mask.sum()} | {v:.1f} | {v0 - v:+.1f} | {slope:+.1f} |")
    c = T_CUT / tp2[(lo == 0) & (tp2 < T_CUT)]
    print(f"\nThe last row's t_cut/tp2: median {np.median(c):.2f}, 90 % {np.quantile(c, 0.9):.0f}, "
          f"max {c.max():.3g}; its term tends to log(t_cut/tp2) > 0 as λ → 0.\n")

    # 2. The rate each potential recovers.
    print("## 2. λ̂ on the generator's truth trees (grid maximum ± curvature standard error)\n")
    cols = list(POTENTIALS)
    print("| generated at | jets | " + " | ".join(cols) + " |")
    print("| ---: | --- |" + " ---: |" * len(cols))
    s, tries = draw(3000, 1, 10**9, LAMBDA, args.seed + 1)
    fits = [show(*fit(lambda l, f=f: f(s, l))) for f in POTENTIALS.values()]
    print(f"| {LAMBDA} | 3000, every N, four-momenta | " + " | ".join(fits) + " |")
    for lam in (0.7, 1.5, 3.0):
        rows, jet, n = scale_showers(lam, 100_000, args.seed + 2)
        for name, lo_n, hi_n in [("every N", 1, 10**9), ("5..=10 leaves", 5, 10),
                                 ("2..=9 leaves", 2, 9)]:
            if lam != LAMBDA and lo_n > 1:
                continue
            keep = (lo_n <= n) & (n <= hi_n)
            s = rows[keep[jet]]
            fits = [show(*fit(lambda l, f=f: f(s, l))) for f in POTENTIALS.values()]
            print(f"| {lam} | {keep.sum()} of 100000, {name}, scales | " + " | ".join(fits) + " |")

    # The same estimate over independent samples: its sampling distribution is centred on the
    # rate that drew the showers (one sample of 100,000 can sit 2 to 3 standard errors off).
    print("\nThe generator density's λ̂ over 20 independent samples of 5000 showers each "
          "(every N, scales):\n")
    print("| generated at | mean of the 20 | their standard deviation | standard error of the mean |")
    print("| ---: | ---: | ---: | ---: |")
    for lam in (0.7, 1.5, 3.0):
        est = []
        for r in range(20):
            rows, _, _ = scale_showers(lam, 5000, 1000 + r)
            est.append(fit(lambda l: generator(rows, l).sum())[0])
        est = np.array(est)
        print(f"| {lam} | {est.mean():.4f} | {est.std(ddof=1):.4f} | {est.std(ddof=1) / math.sqrt(20):.4f} |")

    # 3. The reference implementation's own jets.
    rows, sizes = [], []
    for name in ("tree_100_n9", "truth_9", "truth_5", "truth_4"):
        for j in json.loads((ROOT / "data/ginkgo_jets" / f"{name}.json").read_text())["jets"]:
            nest = lambda v: v if isinstance(v, int) else (nest(v[0]), nest(v[1]))  # noqa: E731
            splits(np.array(j["leaves"]), nest(j["truth_tree"]), rows)
            sizes.append(len(j["leaves"]))
    s, sizes = np.array(rows), np.array(sizes)
    print(f"\n## 3. The reference implementation's jets ({len(sizes)} jets of N = 4, 5, 9, "
          "generated at λ = 1.5)\n")
    fits = [show(*fit(lambda l, f=f: f(s, l))) for f in POTENTIALS.values()]
    print("| " + " | ".join(cols) + " | generator density, selection on N corrected |")
    print("|" + " ---: |" * (len(cols) + 1))
    # log P(N = n; λ) on a grid by simulation (the same seed at every λ), smoothed by a cubic
    # in log λ; the conditional log-likelihood subtracts it for every jet.
    lams = np.exp(np.linspace(math.log(0.6), math.log(3.5), 30))
    logp = {n: [] for n in set(sizes.tolist())}
    for lam in lams:
        counts = np.bincount(scale_showers(lam, 400_000, 7)[2], minlength=20)
        for n in logp:
            logp[n].append(math.log(counts[n] / 400_000))
    poly = {n: np.polyfit(np.log(lams), v, 3) for n, v in logp.items()}
    ns = {n: int((sizes == n).sum()) for n in poly}

    def corrected(l):
        return generator(s, l).sum() - sum(k * np.polyval(poly[n], math.log(l)) for n, k in ns.items())

    v = np.array([corrected(l) for l in lams])
    i = int(v.argmax())
    fine = np.exp(np.linspace(math.log(lams[max(i - 1, 0)]), math.log(lams[min(i + 1, 29)]), 400))
    best = fine[int(np.argmax([corrected(l) for l in fine]))]
    d = 1e-3 * best
    second = (corrected(best + d) - 2 * corrected(best) + corrected(best - d)) / d**2
    print("| " + " | ".join(fits) + f" | {show(best, 1 / math.sqrt(-second))} |")
    # The same corrected fit on 60 samples of the same design (as many jets of each N) from the
    # numpy generator: where the reference jets' value falls in its sampling distribution.
    rows, jet, n = scale_showers(LAMBDA, 400_000, 11)
    est = []
    for r in range(60):
        ids = np.concatenate([np.where(n == k)[0][r * c:(r + 1) * c] for k, c in ns.items()])
        keep = np.zeros(len(n), bool)
        keep[ids] = True
        sample = rows[keep[jet]]

        def objective(l, sample=sample):
            return generator(sample, l).sum() - sum(
                c * np.polyval(poly[k], math.log(l)) for k, c in ns.items())

        est.append(fit(objective)[0])
    est = np.array(est)
    print(f"\nThe corrected fit on 60 samples of the same design drawn at λ = {LAMBDA}: mean "
          f"{est.mean():.3f}, standard deviation {est.std(ddof=1):.3f}, 2.5 % and 97.5 % quantiles "
          f"{np.quantile(est, 0.025):.3f} and {np.quantile(est, 0.975):.3f}; "
          f"{int((est <= best).sum())} of 60 at or below the reference jets' {best:.3f}.")


if __name__ == "__main__":
    main()
