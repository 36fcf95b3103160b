#!/usr/bin/env python3
"""FastJet's e+e- generalised kt trees of the committed Pythia jets, as a reference for the Rust
`search::ee_generalised_kt` (tested in crates/trellis-core/tests/core/ee_kt.rs).

For the first 40 jets of pythia_parton.json, pythia_hadron.json and pythia_parton_500.json (6 to
24 leaves), and p = 1 (kt, Durham order), 0 (Cambridge/Aachen) and -1 (anti-kt): FastJet's
ee_genkt_algorithm with R = pi (then every pair distance is at most either particle's beam
distance, so the clustering runs to one jet), E scheme; and FastJet's Durham algorithm
(ee_kt_algorithm, E scheme), the Rust `search::durham`. A tree is written as its clusters of two
or more leaves, each a bit mask of leaf indices (bit i = leaf i of the file), read off the
exclusive jets at every stage k = N-1 .. 1. Output is deterministic (sorted keys, no timestamps):

    .venv-pythia/bin/python data/pythia/ee_kt_reference.py --out data/pythia/ee_kt_reference.json
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fastjet  # noqa: E402
import fastjet._swig as fjs  # noqa: E402

import owned_files  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = ["pythia_parton.json", "pythia_hadron.json", "pythia_parton_500.json"]
JETS_PER_FILE = 40
EXPONENTS = [1.0, 0.0, -1.0]
WRITTEN_BY = "written by data/pythia/ee_kt_reference.py"
"""The mark in the file this script writes (its `source`): a file without it is never replaced."""


def ours(path: str) -> bool:
    """Whether `path` is missing or a file this script wrote (its `source` says so)."""
    return owned_files.ours(path, WRITTEN_BY)


write_atomically = owned_files.write_atomically


def tree_clusters(leaves: list[list[float]], p: float | None) -> list[int]:
    """The clusters (bit masks, two or more leaves) of FastJet's ee_genkt tree with exponent p,
    or of its Durham tree (ee_kt_algorithm) for p None."""
    particles = []
    for i, (e, px, py, pz) in enumerate(leaves):
        pj = fastjet.PseudoJet(px, py, pz, e)
        pj.set_user_index(i)
        particles.append(pj)
    if p is None:
        # The Python wrapper's JetDefinition asks for a radius; Durham has none (FastJet's own
        # class, as make_jets.py uses it).
        definition = fjs.JetDefinition(fastjet.ee_kt_algorithm)
    else:
        definition = fastjet.JetDefinition(fastjet.ee_genkt_algorithm, math.pi, p)
    seq = fastjet.ClusterSequence(particles, definition)
    out = set()
    for k in range(1, len(particles)):
        for jet in seq.exclusive_jets(k):
            mask = sum(1 << c.user_index() for c in jet.constituents())
            if bin(mask).count("1") > 1:
                out.add(mask)
    return sorted(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="the JSON file to write")
    args = ap.parse_args()
    if not ours(args.out):
        sys.exit(f"error: {args.out} exists and was not written by this script; give another --out or move it")
    trees = []
    for name in FILES:
        with open(os.path.join(HERE, name)) as f:
            jets = json.load(f)["jets"][:JETS_PER_FILE]
        for jet in jets:
            for p in EXPONENTS:
                trees.append(
                    {"algorithm": "ee_genkt", "file": name, "jet": jet["name"], "p": p, "clusters": tree_clusters(jet["leaves"], p)}
                )
            trees.append(
                {"algorithm": "ee_kt", "file": name, "jet": jet["name"], "p": 1.0, "clusters": tree_clusters(jet["leaves"], None)}
            )
    doc = {
        "source": (
            f"FastJet {importlib.metadata.version('fastjet')} ee_genkt_algorithm, R = pi, E scheme, exclusive "
            f"to one jet, p = 1, 0, -1 (algorithm ee_genkt), and ee_kt_algorithm (Durham, E scheme; algorithm "
            f"ee_kt); the first {JETS_PER_FILE} jets of {', '.join(FILES)}; {WRITTEN_BY}"
        ),
        "trees": trees,
    }
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    text = text.replace('},{"algorithm"', '},\n{"algorithm"')
    write_atomically(args.out, text + "\n")


if __name__ == "__main__":
    main()
