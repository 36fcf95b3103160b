#!/usr/bin/env python3
"""Pythia 8 jets in the JSON schema of data/ginkgo_jets (read by trellis-lab and `load_jets`).

e+e- -> Z -> q qbar at 91.2 GeV (and, for the larger jets, at 500 GeV), initial-state radiation
off, one fixed seed per set.

* Parton level (hadronisation off): each event gives two jets, the final partons descending
  (by daughter links) from the quark and from the antiquark of the Z decay. A jet's truth tree
  is its shower history read from the event record: a record with two daughters is a branching,
  a record with one daughter (a recoil copy: the same parton carried on, its momentum changed
  when it served as a recoiler) is skipped.
* Hadron level (hadronisation on): the visible final particles are split into two hemispheres
  by the plane normal to the thrust axis; each hemisphere is clustered with FastJet's exclusive
  e+e- kt (Durham) algorithm at the resolution of the shower cut-off, into at most 16 subjets,
  which are the leaves (no truth tree).

* Larger jets (parton level at 500 GeV): as the parton level, with the same shower and cut-off;
  jets of 6 to 24 partons are kept (17 to 24 for the exact MAP's larger sizes, 6 to 16 for a
  fit of lambda by exact evidence on the same events).

Jets of 6 to 16 leaves are kept (6 to 24 in the 500 GeV set). Output is deterministic: sorted
keys, floats rounded to 12 significant digits and written by Python's shortest round-trip repr,
no timestamps. Runs from any working directory (see pythia_import.py):

    python data/pythia/make_jets.py --out DIR   # writes DIR/pythia_parton.json, DIR/pythia_hadron.json, DIR/pythia_parton_500.json
    python data/pythia/make_jets.py --stats     # prints the measured numbers quoted in README.md
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import owned_files  # noqa: E402
from pythia_import import import_pythia8mc  # noqa: E402

pythia8mc = import_pythia8mc()
import fastjet  # noqa: E402
import fastjet._swig as fjs  # noqa: E402

E_CM = 91.2
"""Centre-of-mass energy (GeV) of the parton- and hadron-level sets."""
E_CM_LARGE = 500.0
"""Centre-of-mass energy (GeV) of the set of larger jets: the same shower and cut-off, more
phase space for branchings (an event has about twice as many final partons as at the Z pole)."""
PT_MIN = 0.5
"""The final-state shower's cut-off TimeShower:pTmin (GeV), Pythia's default, set explicitly."""
T_CUT_PARTON = (2.0 * PT_MIN) ** 2
"""Ginkgo t_cut of the parton-level jets: the smallest virtuality Q^2 = pT^2 / (z (1 - z)) of a
branching at the cut-off pT = pTmin (z = 1/2), i.e. (2 pTmin)^2 = 1 GeV^2."""
D_CUT = PT_MIN**2
"""Durham resolution of the hadron-level subjets: d_ij = 2 min(E_i, E_j)^2 (1 - cos theta_ij),
a squared transverse momentum, cut at pTmin^2 = 0.25 GeV^2."""
T_CUT_HADRON = D_CUT
"""Ginkgo t_cut of the hadron-level jets: the subjets' resolution d_cut (two resolved subjets
have d_ij > d_cut, and their pair mass^2 is at least d_ij when they are within 90 degrees)."""
LAM_PLACEHOLDER = 1.5
"""Ginkgo's lam and lam_root are not known for Pythia jets: Ginkgo's QCD value is written as a
placeholder, to be fitted from the data."""
MIN_LEAVES, MAX_LEAVES = 6, 16
MAX_LEAVES_LARGE = 24
"""The 500 GeV set keeps jets of MIN_LEAVES to 24 partons: up to 24, the MAP-only trellis gives
the exact MAP (about 1.2 GiB of tables at 24)."""
MAX_SUBJETS = 16
DIGITS = 12
PARTON_EVENTS, HADRON_EVENTS, LARGE_EVENTS = 400, 120, 350
PARTON_SEED, HADRON_SEED, LARGE_SEED = 1, 2, 3


def settings(hadron_level: bool, seed: int, e_cm: float = E_CM) -> list[str]:
    """Pythia's settings, in the order they are read."""
    if not 1 <= seed <= 900_000_000:
        raise ValueError(f"seed {seed} is outside 1..=900000000 (Pythia reads 0 as 'from the clock')")
    return [
        "Beams:idA = 11",
        "Beams:idB = -11",
        f"Beams:eCM = {e_cm:g}",
        "PDF:lepton = off",
        "PartonLevel:ISR = off",
        "WeakSingleBoson:ffbar2gmZ = on",
        "WeakZ0:gmZmode = 2",
        "23:onMode = off",
        "23:onIfAny = 1 2 3 4 5",
        "PartonShowers:model = 1",
        f"TimeShower:pTmin = {PT_MIN}",
        "TimeShower:QEDshowerByQ = off",
        "TimeShower:QEDshowerByGamma = off",
        "TimeShower:QEDshowerByL = off",
        "TimeShower:QEDshowerByOther = off",
        f"HadronLevel:all = {'on' if hadron_level else 'off'}",
        "Random:setSeed = on",
        f"Random:seed = {seed}",
        "Print:quiet = on",
    ]


def make_pythia(hadron_level: bool, seed: int, e_cm: float = E_CM) -> pythia8mc.Pythia:
    py = pythia8mc.Pythia("", False)
    for s in settings(hadron_level, seed, e_cm):
        if not py.readString(s):
            raise RuntimeError(f"Pythia refused the setting {s!r}; check the pinned pythia8mc version")
    if not py.init():
        raise RuntimeError("Pythia failed to initialise; check the pinned pythia8mc version")
    return py


def versions() -> str:
    return (
        f"pythia8mc {importlib.metadata.version('pythia8mc')}, "
        f"fastjet {fastjet.__version__} (FastJet {fjs.fastjet_version_string().split()[-1]}), "
        f"Python {sys.version_info.major}.{sys.version_info.minor}"
    )


# --- four-vectors (E, px, py, pz) ---------------------------------------------------------


def vec(p) -> list[float]:
    return [p.e(), p.px(), p.py(), p.pz()]


def add(a, b):
    return [x + y for x, y in zip(a, b)]


def vsum(vs):
    out = [0.0, 0.0, 0.0, 0.0]
    for v in vs:
        out = add(out, v)
    return out


def m2(v) -> float:
    return v[0] * v[0] - v[1] * v[1] - v[2] * v[2] - v[3] * v[3]


# --- parton level: the shower history -----------------------------------------------------


@dataclass
class Node:
    """A cluster of the truth tree. `record` is the record that branches (internal node) or the
    final parton (leaf); `path` the records walked to reach it from the parent's branching (the
    first daughter record, then its recoil copies)."""

    record: int
    path: list[int]
    children: list["Node"] = field(default_factory=list)

    def leaves(self) -> list[int]:
        if not self.children:
            return [self.record]
        return self.children[0].leaves() + self.children[1].leaves()

    def internal(self):
        """Every internal node, parents before children."""
        if self.children:
            yield self
            for c in self.children:
                yield from c.internal()


def shower_tree(ev, i: int) -> Node:
    """The shower history below record `i`, following daughter links only."""
    path = [i]
    while True:
        p = ev[i]
        if p.isFinal():
            return Node(i, path)
        d = list(p.daughterList())
        if len(d) == 1:
            i = d[0]
            path.append(i)
            continue
        if len(d) == 2:
            return Node(i, path, [shower_tree(ev, d[0]), shower_tree(ev, d[1])])
        raise ValueError(
            f"record {i} ({p.name()}, status {p.status()}) has {len(d)} daughters; a shower "
            "record has one (a copy) or two (a branching): check the settings (QCD final-state shower only)"
        )


def z_decay(ev) -> tuple[int, int]:
    """Record indices of the quark and the antiquark of the Z decay."""
    zs = [i for i in range(ev.size()) if ev[i].id() == 23 and len(ev[i].daughterList()) == 2]
    if len(zs) != 1:
        raise ValueError(f"expected one Z decaying to two partons, found {len(zs)}")
    a, b = ev[zs[0]].daughterList()
    if not (ev[a].isQuark() and ev[b].isQuark() and ev[a].id() == -ev[b].id()):
        raise ValueError(f"the Z decayed to {ev[a].name()} {ev[b].name()}, not a quark pair")
    return (a, b) if ev[a].id() > 0 else (b, a)


def nested(node: Node, index_of: dict[int, int]):
    """The truth tree as nested lists of leaf indices."""
    if not node.children:
        return index_of[node.record]
    return [nested(c, index_of) for c in node.children]


def leaf_order(momenta: list[list[float]], keys: list[int]) -> list[int]:
    """Positions sorted by decreasing energy, ties by key (record index or subjet number), so
    the leaf order carries no trace of the shower history."""
    return sorted(range(len(momenta)), key=lambda k: (-momenta[k][0], keys[k]))


def rounded(x: float) -> float:
    return float(format(x, f".{DIGITS}g"))


@dataclass
class PartonJet:
    name: str
    tree: Node
    leaves: list[list[float]]  # record momenta, in the jet's leaf order
    records: list[int]  # record index of each leaf, same order

    def to_json(self) -> dict:
        index_of = {r: k for k, r in enumerate(self.records)}
        return jet_dict(self.name, self.leaves, T_CUT_PARTON, nested(self.tree, index_of))


def jet_dict(name, leaves, t_cut, truth):
    leaves_r = [[rounded(x) for x in p] for p in leaves]
    d = {
        "name": name,
        "n_leaves": len(leaves_r),
        "t_cut": t_cut,
        "lam": LAM_PLACEHOLDER,
        "lam_root": LAM_PLACEHOLDER,
        "M_hard": rounded(math.sqrt(max(m2(vsum(leaves_r)), 0.0))),
        "leaves": leaves_r,
    }
    if truth is not None:
        d["truth_tree"] = truth
    return d


def parton_jets(ev, event_no: int) -> list[PartonJet]:
    """The quark's and the antiquark's jets of one parton-level event (all sizes)."""
    out = []
    for side, q in zip(("q", "qbar"), z_decay(ev)):
        tree = shower_tree(ev, q)
        recs = tree.leaves()
        moms = [vec(ev[r]) for r in recs]
        order = leaf_order(moms, recs)
        out.append(
            PartonJet(f"parton_e{event_no:04d}_{side}", tree, [moms[k] for k in order], [recs[k] for k in order])
        )
    return out


# --- hadron level: hemispheres and Durham subjets -----------------------------------------


@dataclass
class HadronJet:
    name: str
    particles: list[int]  # record indices of the hemisphere's visible final particles
    leaves: list[list[float]]  # subjets, in the jet's leaf order

    def to_json(self) -> dict:
        return jet_dict(self.name, self.leaves, T_CUT_HADRON, None)


JET_DEF = fjs.JetDefinition(fastjet.ee_kt_algorithm)


def hemispheres(ev, thrust) -> dict[str, list[int]]:
    """Visible final particles on each side of the plane normal to the thrust axis, the axis
    oriented along the Z-decay quark (a particle exactly on the plane goes to the quark side)."""
    if not thrust.analyze(ev):
        raise ValueError("Pythia's Thrust analysis failed on an event")
    ax = thrust.eventAxis(1)
    axis = [ax.px(), ax.py(), ax.pz()]
    q, _ = z_decay(ev)
    if sum(a * b for a, b in zip(axis, vec(ev[q])[1:])) < 0:
        axis = [-a for a in axis]
    sides = {"q": [], "qbar": []}
    for i in range(ev.size()):
        p = ev[i]
        if p.isFinal() and p.isVisible():
            dot = sum(a * b for a, b in zip(axis, vec(p)[1:]))
            sides["q" if dot >= 0 else "qbar"].append(i)
    return sides


def subjets(ev, particles: list[int]) -> list[list[float]]:
    """Exclusive Durham subjets (E-scheme) at d_cut, at most MAX_SUBJETS of them."""
    if not particles:
        return []
    pjs = []
    for i in particles:
        p = ev[i]
        pj = fjs.PseudoJet(p.px(), p.py(), p.pz(), p.e())
        pj.set_user_index(i)
        pjs.append(pj)
    cs = fjs.ClusterSequence(pjs, JET_DEF)
    n = min(MAX_SUBJETS, cs.n_exclusive_jets(float(D_CUT)))
    jets = cs.exclusive_jets_up_to(n)
    return [[j.E(), j.px(), j.py(), j.pz()] for j in jets]


def hadron_jets(ev, thrust, event_no: int) -> list[HadronJet]:
    out = []
    for side, parts in hemispheres(ev, thrust).items():
        sj = subjets(ev, parts)
        order = leaf_order(sj, list(range(len(sj))))
        out.append(HadronJet(f"hadron_e{event_no:04d}_{side}", parts, [sj[k] for k in order]))
    return out


# --- the two sets -------------------------------------------------------------------------


def events(hadron_level: bool, seed: int, n_events: int, e_cm: float = E_CM):
    """(event number, event record) for each of `n_events` generated events; the record is
    Pythia's and is overwritten by the next event."""
    py = make_pythia(hadron_level, seed, e_cm)
    for k in range(n_events):
        if not py.next():
            raise RuntimeError(f"Pythia failed to generate event {k}; check the pinned pythia8mc version")
        yield k, py.event


def generate_parton(n_events=PARTON_EVENTS, seed=PARTON_SEED, e_cm=E_CM, max_leaves=MAX_LEAVES):
    """(every jet, the kept jets) of a parton-level set."""
    every, kept = [], []
    for k, ev in events(False, seed, n_events, e_cm):
        for j in parton_jets(ev, k):
            every.append(j)
            if MIN_LEAVES <= len(j.leaves) <= max_leaves:
                kept.append(j)
    return every, kept


def generate_large(n_events=LARGE_EVENTS, seed=LARGE_SEED):
    """(every jet, the kept jets) of the 500 GeV parton-level set."""
    return generate_parton(n_events, seed, E_CM_LARGE, MAX_LEAVES_LARGE)


def generate_hadron(n_events=HADRON_EVENTS, seed=HADRON_SEED):
    every, kept = [], []
    thrust = pythia8mc.Thrust()
    for k, ev in events(True, seed, n_events):
        for j in hadron_jets(ev, thrust, k):
            every.append(j)
            if MIN_LEAVES <= len(j.leaves) <= MAX_LEAVES:
                kept.append(j)
    return every, kept


def per_n(jets) -> str:
    counts: dict[int, int] = {}
    for j in jets:
        counts[len(j.leaves)] = counts.get(len(j.leaves), 0) + 1
    return ", ".join(f"{n}:{c}" for n, c in sorted(counts.items()))


# The mark in every file this script writes (its `source`): files without it are never replaced.
WRITTEN_BY = "written by data/pythia/make_jets.py"


def source_text(level: str, seed: int, n_events: int, kept, every, e_cm=E_CM, max_leaves=MAX_LEAVES) -> str:
    hadron = level == "hadron"
    how = (
        "hadron level: hadronisation on; the visible final particles (neutrinos left out) split into "
        "hemispheres by the plane normal to the thrust axis (Pythia's Thrust), each clustered with "
        f"FastJet's exclusive e+e- kt (Durham, E scheme) at d_cut = pTmin^2 = {D_CUT} GeV^2 into at most "
        f"{MAX_SUBJETS} subjets, the leaves (no truth tree); t_cut = d_cut = {T_CUT_HADRON} GeV^2"
        if hadron
        else "parton level: hadronisation off; the two jets of an event are the final partons descending by "
        "daughter links from the quark and from the antiquark of the Z decay; truth_tree is the shower "
        "history of the event record (a record with two daughters is a branching, a one-daughter recoil "
        f"copy is skipped); t_cut = (2 pTmin)^2 = {T_CUT_PARTON} GeV^2"
    )
    return (
        f"Pythia 8 e+e- -> Z -> q qbar (q = d u s c b) at {e_cm:g} GeV, ISR off, QCD final-state shower "
        f"(pTmin {PT_MIN} GeV, QED showers off); {how}; leaves (E, px, py, pz) in GeV, in decreasing "
        f"energy, rounded to {DIGITS} significant digits; M_hard = the jet's invariant mass; lam = "
        f"lam_root = {LAM_PLACEHOLDER} is a placeholder (Ginkgo's QCD value), not fitted; {n_events} "
        f"events, seed {seed}, {len(every)} jets, {len(kept)} kept with {MIN_LEAVES}..={max_leaves} "
        f"leaves (N:jets {per_n(kept)}); {WRITTEN_BY} ({versions()}); Pythia "
        f"settings: {'; '.join(settings(hadron, seed, e_cm))}"
    )


def dataset_text(jets, source: str) -> str:
    """The file's text: keys sorted, one jet a line."""
    lines = [json.dumps(j.to_json(), sort_keys=True, separators=(",", ":")) for j in jets]
    return '{"jets":[\n' + ",\n".join(lines) + '\n],"source":' + json.dumps(source) + "}\n"


def ours(path: str) -> bool:
    """Whether `path` is missing or a file this script wrote (its `source` says so)."""
    return owned_files.ours(path, WRITTEN_BY)


write = owned_files.write_atomically


# --- measured numbers ---------------------------------------------------------------------


def quantiles(xs, ps=(0.5, 0.9, 0.99, 1.0)) -> dict[str, float]:
    s = sorted(xs)
    return {f"q{p:g}": s[min(len(s) - 1, int(p * len(s)))] for p in ps}


def kept_parton_jets_with_records(n_events=PARTON_EVENTS, seed=PARTON_SEED, e_cm=E_CM, max_leaves=MAX_LEAVES):
    """(kept jet, its event record) pairs, lazily: a record is valid until the next pair."""
    for k, ev in events(False, seed, n_events, e_cm):
        for j in parton_jets(ev, k):
            if MIN_LEAVES <= len(j.leaves) <= max_leaves:
                yield j, ev


def parton_stats(pairs) -> dict:
    """How the record's momenta differ from the sums of the leaves, over (jet, record) pairs."""
    d_rec, d_rec_rel, d_dau, ratio, below = [], [], [], [], 0
    for j, ev in pairs:
        jet_below = False
        for node in j.tree.internal():
            leaves = vsum(vec(ev[r]) for r in node.leaves())
            rec = vec(ev[node.record])
            dau = vsum(vec(ev[c.path[0]]) for c in node.children)
            diff = max(abs(a - b) for a, b in zip(leaves, rec))
            d_rec.append(diff)
            d_rec_rel.append(diff / leaves[0])
            d_dau.append(max(abs(a - b) for a, b in zip(leaves, dau)))
            ratio.append(m2(leaves) / m2(dau))
            jet_below |= m2(leaves) < T_CUT_PARTON
        below += jet_below
    return {
        "internal nodes": len(d_rec),
        "|leaf sum - record of the branching parton|, GeV (max over E, px, py, pz)": quantiles(d_rec),
        "the same over the leaf sum's energy": quantiles(d_rec_rel),
        "|leaf sum - the two daughters right after the branching|, GeV": quantiles(d_dau),
        "leaf-sum mass^2 / the branching's virtuality (daughters' mass^2)": quantiles(ratio, (0.01, 0.1, 0.5, 0.9, 0.99)),
        f"jets with a truth cluster of mass^2 < t_cut = {T_CUT_PARTON}": below,
    }


def descendants(ev, i: int) -> set[int]:
    """Every record reached from record `i` by daughter links (`i` included)."""
    out, stack = set(), [i]
    while stack:
        r = stack.pop()
        if r not in out:
            out.add(r)
            stack.extend(ev[r].daughterList())
    return out


def recoiler_of(ev, node: Node) -> int:
    """The record that gave its recoil to the branching of `node`: Pythia appends the branching's
    two daughters and then the recoiler's copy (status 52), whose mother is the recoiler."""
    d = list(ev[node.record].daughterList())
    copy = max(d) + 1
    if abs(ev[copy].status()) != 52 or len(ev[copy].motherList()) != 1:
        raise ValueError(f"record {copy} after the daughters of {node.record} is not a recoil copy")
    return ev[copy].motherList()[0]


def ancestry_stats(n_events=PARTON_EVENTS, seed=PARTON_SEED, e_cm=E_CM, max_leaves=MAX_LEAVES) -> dict:
    """What defining jets by ancestry means, over every jet and over the kept jets: how often a
    branching takes its recoil from the other jet, and how many partons (and how much of their
    energy) lie on the other jet's side, by two planes: the one normal to the thrust axis of the
    event's final partons (Pythia's Thrust, oriented along the Z-decay quark for the quark's
    jet), and the one normal to the jet's own summed momentum."""
    thrust = pythia8mc.Thrust()
    counts = {k: [0] * 8 for k in ("every jet", "kept jets")}
    for k, ev in events(False, seed, n_events, e_cm):
        quarks = z_decay(ev)
        own = [descendants(ev, q) for q in quarks]
        if not thrust.analyze(ev):
            raise ValueError("Pythia's Thrust analysis failed on a parton-level event")
        ax = thrust.eventAxis(1)
        axis = [ax.px(), ax.py(), ax.pz()]
        if sum(a * b for a, b in zip(axis, vec(ev[quarks[0]])[1:])) < 0:
            axis = [-a for a in axis]
        for side, (j, other) in enumerate(zip(parton_jets(ev, k), own[::-1])):
            keys = ["every jet"] + (["kept jets"] if MIN_LEAVES <= len(j.leaves) <= max_leaves else [])
            jet_axis = vsum(j.leaves)[1:]
            sign = 1.0 if side == 0 else -1.0
            for key in keys:
                c = counts[key]
                for node in j.tree.internal():
                    c[0] += 1
                    c[1] += recoiler_of(ev, node) in other
                for r in j.records:
                    p = vec(ev[r])
                    by_thrust = sign * sum(a * b for a, b in zip(axis, p[1:])) < 0
                    by_jet = sum(a * b for a, b in zip(jet_axis, p[1:])) < 0
                    c[2] += 1
                    c[3] += by_thrust
                    c[4] += by_jet
                    c[5] += p[0]
                    c[6] += p[0] * by_thrust
                    c[7] += p[0] * by_jet
    return {
        key: {
            "branchings": c[0],
            "share of branchings whose recoiler is in the other jet": c[1] / c[0],
            "partons": c[2],
            "share of partons in the other jet's thrust hemisphere": c[3] / c[2],
            "share of the partons' energy in the other jet's thrust hemisphere": c[6] / c[5],
            "share of partons pointing away from their own jet's momentum": c[4] / c[2],
            "share of the partons' energy pointing away from their own jet's momentum": c[7] / c[5],
        }
        for key, c in counts.items()
    }


def hadron_stats(kept_jets) -> dict:
    min_pair = []
    for j in kept_jets:
        ls = j.leaves
        min_pair.append(min(m2(add(ls[a], ls[b])) for a in range(len(ls)) for b in range(a)))
    return {
        "smallest subjet-pair mass^2 per jet, GeV^2": quantiles(min_pair, (0.0, 0.01, 0.5)),
        f"jets with a subjet pair of mass^2 < t_cut = {T_CUT_HADRON}": sum(x < T_CUT_HADRON for x in min_pair),
    }


OUTPUTS = ("pythia_parton.json", "pythia_hadron.json", "pythia_parton_500.json")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="folder to write " + ", ".join(OUTPUTS) + " into")
    ap.add_argument("--stats", action="store_true", help="print the measured numbers (speed, momenta)")
    ap.add_argument("--parton-events", type=int, default=PARTON_EVENTS)
    ap.add_argument("--hadron-events", type=int, default=HADRON_EVENTS)
    ap.add_argument("--large-events", type=int, default=LARGE_EVENTS, help="events of the 500 GeV set")
    ap.add_argument("--parton-seed", type=int, default=PARTON_SEED)
    ap.add_argument("--hadron-seed", type=int, default=HADRON_SEED)
    ap.add_argument("--large-seed", type=int, default=LARGE_SEED)
    a = ap.parse_args(argv)
    if not a.out and not a.stats:
        ap.error("say --out DIR (write the jets) or --stats (print the measured numbers), or both")
    if a.out and not os.path.isdir(a.out):
        ap.error(f"--out {a.out}: no such folder; create it first")
    for name in OUTPUTS if a.out else ():
        path = os.path.join(a.out, name)
        if not ours(path):
            ap.error(f"{path} exists and is not this script's output; move it away or choose another --out")
    fjs.ClusterSequence.set_fastjet_banner_stream(None)

    t0 = time.perf_counter()
    p_every, p_kept = generate_parton(a.parton_events, a.parton_seed)
    t1 = time.perf_counter()
    h_every, h_kept = generate_hadron(a.hadron_events, a.hadron_seed)
    t2 = time.perf_counter()
    l_every, l_kept = generate_large(a.large_events, a.large_seed)
    t3 = time.perf_counter()
    texts = {
        "pythia_parton.json": dataset_text(
            p_kept, source_text("parton", a.parton_seed, a.parton_events, p_kept, p_every)
        ),
        "pythia_hadron.json": dataset_text(
            h_kept, source_text("hadron", a.hadron_seed, a.hadron_events, h_kept, h_every)
        ),
        "pythia_parton_500.json": dataset_text(
            l_kept,
            source_text("parton", a.large_seed, a.large_events, l_kept, l_every, E_CM_LARGE, MAX_LEAVES_LARGE),
        ),
    }
    if a.out:
        for name, text in texts.items():
            write(os.path.join(a.out, name), text)
    if a.stats:
        large = (a.large_events, a.large_seed, E_CM_LARGE, MAX_LEAVES_LARGE)
        stats = {
            "versions": versions(),
            "parton events/s (generation and tree reading)": a.parton_events / (t1 - t0),
            "hadron events/s (generation, thrust and clustering)": a.hadron_events / (t2 - t1),
            "500 GeV parton events/s (generation and tree reading)": a.large_events / (t3 - t2),
            "parton jets": {"all": len(p_every), "kept": len(p_kept), "kept per N": per_n(p_kept), "all per N": per_n(p_every)},
            "hadron jets": {"all": len(h_every), "kept": len(h_kept), "kept per N": per_n(h_kept), "all per N": per_n(h_every)},
            "500 GeV parton jets": {
                "all": len(l_every),
                "kept": len(l_kept),
                "kept with 17..=24 partons": sum(17 <= len(j.leaves) <= 24 for j in l_kept),
                "kept per N": per_n(l_kept),
                "all per N": per_n(l_every),
                "mean partons per event": sum(len(j.leaves) for j in l_every) / a.large_events,
            },
            "bytes": {name: len(text.encode()) for name, text in texts.items()},
            "parton momenta": parton_stats(kept_parton_jets_with_records(a.parton_events, a.parton_seed)),
            "500 GeV parton momenta": parton_stats(kept_parton_jets_with_records(*large)),
            "jets by ancestry (parton level)": ancestry_stats(a.parton_events, a.parton_seed),
            "jets by ancestry (500 GeV)": ancestry_stats(*large),
            "hadron subjets": hadron_stats(h_kept),
        }
        print(json.dumps(stats, indent=1, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
