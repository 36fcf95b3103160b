#!/usr/bin/env python3
"""Brute-force check of Dasgupta cost: average linkage (UPGMA on similarities) vs exact optimum.

cost(T) = sum over internal nodes with children A,B of (|A|+|B|) * w(A,B).
Average linkage: repeatedly merge the pair of clusters maximising w(A,B)/(|A||B|);
ALL tie-breaking branches are explored (ties within TOL).
Exact optimum: DP over subsets (equivalent to enumerating all binary trees).

Usage: python3 ccn_bruteforce.py [quick]
"""
import itertools, random, sys
from functools import lru_cache

TOL = 1e-9

# ---------------------------------------------------------------- basics
def internal_weight_table(W, n):
    """Wint[S] = total weight of edges inside bitmask S."""
    Wint = [0.0] * (1 << n)
    for S in range(1, 1 << n):
        low = (S & -S).bit_length() - 1
        rest = S & ~(1 << low)
        s = Wint[rest]
        r = rest
        while r:
            j = (r & -r).bit_length() - 1
            s += W[low][j]
            r &= r - 1
        Wint[S] = s
    return Wint

def popcount(x):
    return bin(x).count("1")

def opt_tree(W, n):
    """Exact min Dasgupta cost and one optimal tree (nested tuples of leaf ids)."""
    Wint = internal_weight_table(W, n)
    full = (1 << n) - 1
    best = [0.0] * (1 << n)
    arg = [0] * (1 << n)
    for S in range(1, full + 1):
        if S & (S - 1) == 0:
            continue
        sz = popcount(S)
        low = S & -S
        b, ba = float("inf"), 0
        A = (S - 1) & S
        while A:
            if A & low:               # canonical: A contains lowest bit
                B = S ^ A
                if B:
                    c = best[A] + best[B] + sz * (Wint[S] - Wint[A] - Wint[B])
                    if c < b - 1e-12:
                        b, ba = c, A
            A = (A - 1) & S
        best[S], arg[S] = b, ba
    def build(S):
        if S & (S - 1) == 0:
            return S.bit_length() - 1
        A = arg[S]
        return (build(A), build(S ^ A))
    return best[full], build(full)

def leaves(t):
    return [t] if isinstance(t, int) else leaves(t[0]) + leaves(t[1])

def tree_cost(W, t):
    if isinstance(t, int):
        return 0.0
    A, B = leaves(t[0]), leaves(t[1])
    return (tree_cost(W, t[0]) + tree_cost(W, t[1])
            + (len(A) + len(B)) * sum(W[a][b] for a in A for b in B))

def newick(t, names=None):
    if isinstance(t, int):
        return names[t] if names else str(t)
    return "(" + newick(t[0], names) + "," + newick(t[1], names) + ")"

def canon(t):
    """Canonical form (unordered children) for de-duplicating trees."""
    if isinstance(t, int):
        return t
    a, b = canon(t[0]), canon(t[1])
    return (a, b) if repr(a) <= repr(b) else (b, a)

# ---------------------------------------------------------------- average linkage
def avg_linkage_all(W, n, limit=2000):
    """All trees average linkage can output under some tie-breaking. Returns {canon_tree: cost}."""
    out = {}
    seen = set()
    def rec(clusters):   # clusters: tuple of (frozenset, tree)
        # state = set of (canonical) subtrees, so different internal histories are kept apart
        key = frozenset(repr(canon(t)) for _, t in clusters)
        if key in seen or len(out) >= limit:
            return
        seen.add(key)
        if len(clusters) == 1:
            t = canon(clusters[0][1])
            out[t] = tree_cost(W, t)
            return
        scores = []
        for i, j in itertools.combinations(range(len(clusters)), 2):
            A, B = clusters[i][0], clusters[j][0]
            s = sum(W[a][b] for a in A for b in B) / (len(A) * len(B))
            scores.append((s, i, j))
        m = max(s for s, _, _ in scores)
        for s, i, j in scores:
            if s >= m - TOL:
                new = [c for k, c in enumerate(clusters) if k not in (i, j)]
                new.append((clusters[i][0] | clusters[j][0], (clusters[i][1], clusters[j][1])))
                rec(tuple(new))
    rec(tuple((frozenset([i]), i) for i in range(n)))
    return out

def r2(x):
    return round(x + 1e-9, 2)

TARGET = (44.08, 40.08)

def check(W, n):
    """Return (set of AL costs, opt cost, al trees dict, opt tree)."""
    al = avg_linkage_all(W, n)
    oc, ot = opt_tree(W, n)
    return al, oc, ot

def matrix(n, edges):
    W = [[0.0] * n for _ in range(n)]
    for (i, j), w in edges.items():
        W[i][j] = W[j][i] = w
    return W

def report(W, n, al, oc, ot, names=None):
    lines = []
    lines.append("weights (upper triangle, nonzero): " + ", ".join(
        f"{i}-{j}:{W[i][j]:g}" for i in range(n) for j in range(i + 1, n) if W[i][j]))
    for t, c in al.items():
        lines.append(f"  AL tree  cost {c:.4f}  {newick(t, names)}")
    lines.append(f"  OPT tree cost {oc:.4f}  {newick(canon(ot), names)}")
    return "\n".join(lines)

# ---------------------------------------------------------------- family H1: 8 nodes, perfect matching of weight 1+eps, unit edges between pairs
QTREES = None
def quotient_trees():
    """All 15 rooted binary trees on 4 labelled leaves."""
    def all_trees(items):
        items = list(items)
        if len(items) == 1:
            return [items[0]]
        res = []
        first, rest = items[0], items[1:]
        for r in range(0, len(rest)):
            for comb in itertools.combinations(rest, r):
                left = [first] + list(comb)
                right = [x for x in rest if x not in comb]
                if not right:
                    continue
                for a in all_trees(left):
                    for b in all_trees(right):
                        res.append((a, b))
        return res
    return all_trees(range(4))

def family_H1(eps_list, max_tot=9):
    """n=8: perfect matching {2i,2i+1} of weight 1+eps ("rungs"); between pair i and pair j put
    w_ij in 0..4 unit edges (canonical realisation: parallel rails first). All labelled w vectors."""
    hits = []
    cross = lambda i, j: [(2*i, 2*j), (2*i+1, 2*j+1), (2*i, 2*j+1), (2*i+1, 2*j)]
    pairs = list(itertools.combinations(range(4), 2))
    for ws in itertools.product(range(5), repeat=6):
        if sum(ws) > max_tot:      # any tree costs >= 8(1+eps) + 4*sum(ws)
            continue
        for eps in eps_list:
            edges = {(2*i, 2*i+1): 1 + eps for i in range(4)}
            for (i, j), w in zip(pairs, ws):
                for e in cross(i, j)[:w]:
                    edges[e] = 1.0
            W = matrix(8, edges)
            al, oc, ot = check(W, 8)
            alc = sorted({r2(c) for c in al.values()})
            if TARGET[0] in alc and r2(oc) == TARGET[1]:
                hits.append((eps, ws, W, al, oc, ot))
    return hits

# ---------------------------------------------------------------- family R: random graphs, weights in {0,1,1+eps} (or eps on non-edges)
def family_random(n, eps, trials, p_edge, p_pert, mode, rng):
    hits = []
    pairs = list(itertools.combinations(range(n), 2))
    for _ in range(trials):
        edges = {}
        for e in pairs:
            if rng.random() < p_edge:
                edges[e] = 1.0
        if mode == "plus":          # perturb some existing edges to 1+eps
            for e in list(edges):
                if rng.random() < p_pert:
                    edges[e] = 1 + eps
        else:                        # add eps-weight edges on some non-edges
            for e in pairs:
                if e not in edges and rng.random() < p_pert:
                    edges[e] = eps
        W = matrix(n, edges)
        oc, ot = opt_tree(W, n)
        if r2(oc) != TARGET[1]:
            continue
        al = avg_linkage_all(W, n)
        if TARGET[0] in {r2(c) for c in al.values()}:
            hits.append((eps, W, al, oc, ot))
    return hits

if __name__ == "__main__":
    quick = len(sys.argv) > 1 and sys.argv[1] == "quick"
    eps_list = [0.01, 0.02, 0.04]
    print("== Family H1: n=8, perfect matching weight 1+eps, unit edges between pairs ==")
    h1 = family_H1(eps_list)
    print(f"hits: {len(h1)}")
    for eps, ws, W, al, oc, ot in h1[:10]:
        print(f"eps={eps} pair-pair unit-edge counts w12,w13,w14,w23,w24,w34={ws}")
        print(report(W, 8, al, oc, ot))
    if quick:
        sys.exit()
    rng = random.Random(0)
    for n in (5, 6, 7, 8):
        for eps in (0.01, 0.02, 0.04):
            for mode in ("plus", "eps"):
                hits = family_random(n, eps, 3000 if n < 8 else 1500, 0.45, 0.25, mode, rng)
                print(f"== random n={n} eps={eps} mode={mode}: hits {len(hits)}")
                for h in hits[:2]:
                    print(report(h[1], n, h[2], h[3], h[4]))
