#!/usr/bin/env python3
"""The full trellis's speed per energy and instruction set, side by side in one run.

For each N (default 18 and 20) and each energy (`--energy`, a comma-separated list of `ginkgo`,
`dasgupta`, `hcc`, `generator`; default `ginkgo`) it times, interleaved and repeated (`--reps`,
default 3; the median is reported), with `examples/trellis_speed` on the generated W jet of
`configs/scaling.toml` (the Ginkgo model and the generator's density of that jet) or on N
points drawn with the same seed (Dasgupta's cost on Gaussian similarities, HCC on signed
uniform affinities):

- the split loop (the path before the eight lanes; four AVX2 lanes in its Ginkgo kernel): the
  baseline of every vector set;
- the eight lanes with each instruction set this CPU has (`TRELLIS_LAB_SIMD=avx512|avx2`: the
  AVX-512 machine runs the AVX2 code as an AVX2-only machine would; `neon` on 64-bit ARM);
- a CPU without AVX2, emulated by `TRELLIS_LAB_SIMD=scalar` (which also narrows the split loop's
  kernels to plain code): its split loop (its baseline), the scalar lanes, and what the
  library dispatches to there (the split loop).

It prints a Markdown table: seconds, ratio to the baseline, nanoseconds and cycles per split
and core (cycles at the clock /proc/cpuinfo states, the nominal one), and for every energy
but Ginkgo's the ratio of its time to the Ginkgo lanes' on the same path, with the date, the
command, the CPU model, the widest instruction set, the threads and the load average before
and after. Every run's MAP and count bits are compared with its energy's split loop's (MAP and
count must be equal bit for bit).

    python3 scripts/isa_speed.py [--reps 3] [--energy ginkgo,dasgupta,hcc,generator]
        [--no-scalar] [N ...]

`--no-scalar` leaves out the three paths of a CPU without AVX2 (for the large N on a busy
machine).
"""

import datetime
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
EXE = os.path.join(TARGET, "release", "examples", "trellis_speed")
LINE = re.compile(
    r"N = (\d+): ([0-9.]+) s, .*MAP ([0-9a-f]{16}) .*count (\d+), entropy ([0-9a-f]+)"
)


def available_sets():
    """The vector instruction sets of this CPU, widest first (NEON on 64-bit ARM)."""
    import platform

    if platform.machine() in ("aarch64", "arm64"):
        return ["neon"]
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return []
    sets = []
    if re.search(r"\bavx512f\b", flags) and re.search(r"\bavx512dq\b", flags):
        sets.append("avx512")
    if re.search(r"\bavx2\b", flags) and re.search(r"\bfma\b", flags):
        sets.append("avx2")
    return sets


def cpu():
    model, mhz = "unknown", None
    try:
        for line in open("/proc/cpuinfo"):
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model == "unknown":
                model = " ".join(value.split())
            if key.strip() == "cpu MHz" and mhz is None:
                mhz = float(value)
    except OSError:
        pass
    return model, mhz


def load():
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


def run(n, simd, flag, energy):
    env = dict(os.environ)
    if simd:
        env["TRELLIS_LAB_SIMD"] = simd
    else:
        env.pop("TRELLIS_LAB_SIMD", None)
    args = [EXE] + ([flag] if flag else []) + ["--energy", energy, str(n)]
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=True).stdout
    m = LINE.search(out)
    if not m:
        sys.exit(f"unexpected output of {' '.join(args)}: {out!r}")
    return float(m.group(2)), (m.group(3), m.group(4))


def main():
    argv = sys.argv[1:]
    command = " ".join(["python3", "scripts/isa_speed.py"] + argv)
    reps = 3
    if "--reps" in argv:
        i = argv.index("--reps")
        reps = int(argv[i + 1])
        del argv[i : i + 2]
    energies = ["ginkgo"]
    if "--energy" in argv:
        i = argv.index("--energy")
        energies = argv[i + 1].split(",")
        del argv[i : i + 2]
    no_scalar = "--no-scalar" in argv
    if no_scalar:
        argv.remove("--no-scalar")
    for e in energies:
        if e not in ("ginkgo", "dasgupta", "hcc", "generator"):
            sys.exit(f"unknown energy {e}: ginkgo, dasgupta, hcc or generator")
    sizes = [int(a) for a in argv] or [18, 20]
    if not os.path.exists(EXE):
        subprocess.run(
            ["cargo", "build", "--release", "--example", "trellis_speed"], cwd=ROOT, check=True
        )
    sets = available_sets()
    # (label, TRELLIS_LAB_SIMD, flag, baseline label)
    paths = [("split loop (AVX2 kernels)", None, "--split-loop", None)]
    paths += [(f"{s} lanes (dispatched)", s, None, paths[0][0]) for s in sets]
    no_avx2 = "split loop, no AVX2"
    if not no_scalar:
        paths += [
            (no_avx2, "scalar", "--split-loop", None),
            ("scalar lanes", "scalar", "--lanes", no_avx2),
            ("scalar dispatched (the split loop)", "scalar", None, no_avx2),
        ]
    model, mhz = cpu()
    threads = os.environ.get("RAYON_NUM_THREADS") or str(os.cpu_count())
    start_load = load()
    rows = []
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    for n in sizes:
        splits = (3**n + 1) // 2 - 2**n
        times = {(e, p[0]): [] for e in energies for p in paths}
        bits = {}
        for _ in range(reps):
            for e in energies:
                for label, simd, flag, _ in paths:
                    t, b = run(n, simd, flag, e)
                    times[(e, label)].append(t)
                    bits.setdefault((e, label), b)
        for (e, label), b in bits.items():
            want = bits[(e, paths[0][0])]
            if b != want:
                sys.exit(f"N = {n}, {e}: {label} gives MAP/count {b}, split loop {want}")
        for e in energies:
            for label, _, _, base in paths:
                t = statistics.median(times[(e, label)])
                ratio = statistics.median(times[(e, base or label)]) / t
                ns = t * 1e9 * int(threads) / splits
                cycles = f"{ns * mhz / 1e3:.1f}" if mhz else "?"
                ginkgo = times.get(("ginkgo", label))
                vs = f"{t / statistics.median(ginkgo):.2f}x" if ginkgo and e != "ginkgo" else ""
                rows.append((n, e, label, t, ratio, base or "itself", ns, cycles, vs))
    widest = sets[0] if sets else "scalar"
    print(f"Date: {date}. Command: `{command}`.")
    print()
    print(f"CPU: {model}, widest instruction set {widest}, {threads} threads, clock {mhz} MHz "
          f"(nominal); load average {start_load} before, {load()} after; median of {reps} runs")
    print()
    print("| N | energy | path | seconds | speed-up | against | ns per split and core "
          "| cycles per split | time / Ginkgo's |")
    print("|---:|---|---|---:|---:|---|---:|---:|---:|")
    for n, e, label, t, ratio, base, ns, cycles, vs in rows:
        print(f"| {n} | {e} | {label} | {t:.3f} | {ratio:.2f}x | {base} | {ns:.2f} | {cycles} "
              f"| {vs} |")


if __name__ == "__main__":
    main()
