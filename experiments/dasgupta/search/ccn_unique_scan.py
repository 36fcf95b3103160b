#!/usr/bin/env python3
"""Search n=8 graphs (unit edges, a few edges bumped to 1+eps) where average linkage is
*forced* (every tie-breaking gives the same cost) to 44.08 while the optimum is 40.08."""
import sys, random, itertools
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from ccn_bruteforce import opt_tree, avg_linkage_all, matrix, newick, canon, r2

def main(seed, N, n=8):
    rng = random.Random(seed)
    pairs = list(itertools.combinations(range(n), 2))
    found = 0
    for _ in range(N):
        E = sorted(rng.sample(pairs, rng.choice([9, 10, 10, 10, 11])))
        W0 = matrix(n, {e: 1.0 for e in E})
        oc, _ = opt_tree(W0, n)
        if r2(oc) != 40.0:
            continue
        al = avg_linkage_all(W0, n)
        if not any(r2(c) == 44.0 for c in al.values()):
            continue
        for k in range(1, 5):
            for S in itertools.combinations(E, k):
                for eps in (0.01, 0.02, 0.04):
                    W = matrix(n, {e: (1 + eps if e in S else 1.0) for e in E})
                    oc2, ot2 = opt_tree(W, n)
                    if r2(oc2) != 40.08:
                        continue
                    al2 = avg_linkage_all(W, n)
                    if {r2(c) for c in al2.values()} == {44.08}:
                        found += 1
                        print(f"UNIQUE eps={eps} edges={E} bumped={list(S)}")
                        for t, c in al2.items():
                            print(f"   AL  {c:.2f} {newick(t)}")
                        print(f"   OPT {oc2:.2f} {newick(canon(ot2))}", flush=True)
    print("done, found", found)

if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
