#!/usr/bin/env python3
"""Run times of the shipped configs, from the manifests of one measured run.

Every run-time figure that README.md, experiments/*/README.md, experiments/catalog.toml and
`trellis-lab list` print comes from one generated file, experiments/run_times.toml, which this
script writes; nobody edits run times by hand (tests/harness/shipped_text.rs fails on a hand-written one).

    scripts/run_times.py measure [--long CONFIG ...] [--timeout SECONDS]
        Runs every config that is not long-running plus the smoke configs (exactly what
        scripts/regenerate_figures.sh runs, with FORCE=1 so nothing is reused), then each named
        long-running config (stopped after --timeout seconds, default 900, and none started once the
        whole run has used --budget seconds: those are "not measured in this run"), recording the load average (/proc/loadavg) at the start and the end of the
        whole run in results/run_times_run.json. Then writes, as `write` does.

    scripts/run_times.py write [--earlier RESULTS_DIR ...]
        Reads results/*/manifest.json (wall time, CPU model, cores, load at the start of each
        config) and results/run_times_run.json, and writes experiments/run_times.toml; a
        long-running config this run did not measure takes its time from the manifest in an
        --earlier results folder where there is one, marked as such with that run's date and
        program (the load of such a run was not recorded before manifests had it); rewrites
        the generated blocks of the READMEs (between the lines
        <!-- run-times: begin CONFIG... --> and <!-- run-times: end -->; "all" lists every
        config; "table" rewrites the run-time cell, the fourth, of each `| `configs/X.toml` | ...` row).

The release binary must be built (cargo build --release); the machine, the date and the load are
written beside the times, so a reader can tell how far to trust them.
"""

import argparse
import datetime
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = os.path.join(ROOT, "configs")
RESULTS = os.path.join(ROOT, "results")
RUN_LOG = os.path.join(RESULTS, "run_times_run.json")
OUT = os.path.join(ROOT, "experiments", "run_times.toml")
BIN = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "trellis-lab")
BEGIN = re.compile(r"^<!-- run-times: begin (?P<configs>[^>]*?) -->$")
END = "<!-- run-times: end -->"


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return [float(w) for w in f.read().split()[:3]]
    except OSError:
        return None


def long_running(path):
    with open(path) as f:
        return any(line.startswith("# long-running") for line in f)


def shipped_configs():
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(CONFIGS, "*.toml")))


def save_log(log):
    os.makedirs(RESULTS, exist_ok=True)
    with open(RUN_LOG, "w") as f:
        json.dump(log, f, indent=2)


def measure(args):
    if not os.access(BIN, os.X_OK):
        sys.exit(f"no release binary at {BIN}: build it first with `cargo build --release`")
    for c in args.long:
        if not os.path.isfile(os.path.join(CONFIGS, os.path.basename(c))):
            sys.exit(f"--long {c}: no such config in configs/; name a file of configs/")
    start = time.time()
    log = {
        "started_unix_seconds": int(start),
        "load_average_at_start": load_average(),
        "stopped": {},
    }
    save_log(log)
    # SIGTERM (or Ctrl-C) ends the measured run early: what finished is written, the rest is
    # "not measured in this run".
    def stop(_sig, _frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    child = None
    rc = 0
    try:
        env = dict(os.environ, FORCE="1", NO_BUILD="1")
        child = subprocess.Popen([os.path.join(ROOT, "scripts", "regenerate_figures.sh")], cwd=ROOT, env=env)
        rc = child.wait()
        log["regenerate_figures_exit"] = rc
        for c in args.long:
            name = os.path.basename(c)
            left = args.budget - (time.time() - start)
            if left < 60:
                log["stopped"][name] = "the measured run's time budget was spent"
                continue
            limit = min(args.timeout, left)
            print(f"== {name} (long-running, stopped after {limit:.0f} s)", flush=True)
            child = subprocess.Popen([BIN, "run", os.path.join("configs", name), "--force"], cwd=ROOT)
            try:
                child.wait(timeout=limit)
                if child.returncode != 0:
                    log["stopped"][name] = f"the run failed (exit {child.returncode})"
            except subprocess.TimeoutExpired:
                end(child)
                log["stopped"][name] = f"stopped after {limit:.0f} s"
            child = None
            save_log(log)
    except KeyboardInterrupt:
        if child is not None:
            end(child)
        rc = 1
        for c in args.long:
            log["stopped"].setdefault(os.path.basename(c), "the measured run was stopped before it finished")
    log["finished_unix_seconds"] = int(time.time())
    log["load_average_at_end"] = load_average()
    save_log(log)
    write(args)
    return rc


def end(child):
    """Stops a run (SIGTERM: it removes its staging folder), then kills it after a minute."""
    child.terminate()
    try:
        child.wait(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def manifests(results=RESULTS):
    """The manifest of each shipped config's results folder: config file name -> manifest."""
    found = {}
    for m in glob.glob(os.path.join(results, "*", "manifest.json")):
        with open(m) as f:
            man = json.load(f)
        name = os.path.basename(man.get("config_file", ""))
        if name in shipped_configs():
            found[name] = man
    return found


def human(seconds):
    """A wall time as a reader wants it: "< 1 s", "12 s", "3 min 5 s", "1 h 2 min"."""
    if seconds < 1:
        return "< 1 s"
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    return f"{s // 3600} h {(s % 3600) // 60} min"


def utc(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def toml_str(s):
    return json.dumps(s, ensure_ascii=False)


def toml_loads(xs):
    return "[" + ", ".join(f"{x:g}" for x in xs) + "]" if xs else "[]"


def write(args=None):
    if not os.path.isfile(RUN_LOG):
        sys.exit(f"no {os.path.relpath(RUN_LOG, ROOT)}: run `scripts/run_times.py measure` first")
    with open(RUN_LOG) as f:
        log = json.load(f)
    t0, t1 = log["started_unix_seconds"], log["finished_unix_seconds"]
    found = manifests()
    # Only manifests written by this measured run count; older ones are "not measured".
    run = {n: m for n, m in found.items() if t0 <= m.get("started_unix_seconds", 0) <= t1}
    earlier = {}
    for d in getattr(args, "earlier", None) or []:
        for n, m in manifests(d).items():
            if n not in run and n not in earlier and long_running(os.path.join(CONFIGS, n)):
                earlier[n] = m
    cpus = sorted({m.get("cpu_model", "unknown") for m in run.values()})
    cores = sorted({m.get("host_cores") for m in run.values()})
    programs = sorted({m.get("program_hash") for m in run.values()})
    if len(programs) > 1:
        sys.exit(f"the run's manifests come from {len(programs)} programs {programs}: measure again")
    lines = [
        "# Generated by scripts/run_times.py from the manifests of one measured run (results/*/manifest.json);",
        "# do not edit by hand: `scripts/run_times.py measure` measures again and rewrites this file",
        "# and the run-time blocks of the READMEs. `trellis-lab list` and the READMEs print these times.",
        "# `seconds` is the run's wall time as its manifest records it (timings_seconds.total: the run",
        "# once the binary has started, release build, every core the config asks for).",
        "",
        "[machine]",
        f"cpu_model = {toml_str(', '.join(cpus) or 'unknown')}",
        f"cores = {cores[0] if len(cores) == 1 else toml_str(str(cores))}",
        f"program = {toml_str(programs[0] if programs else 'unknown')}",
        "",
        "[run]",
        f"started = {toml_str(utc(t0))}",
        f"finished = {toml_str(utc(t1))}",
        "# /proc/loadavg (1, 5, 15 minutes): the machine was shared with other users' jobs while it ran.",
        f"load_average_at_start = {toml_loads(log.get('load_average_at_start'))}",
        f"load_average_at_end = {toml_loads(log.get('load_average_at_end'))}",
        "",
    ]
    for name in shipped_configs():
        lines.append("[[config]]")
        lines.append(f"file = {toml_str(name)}")
        lines.append(f"long_running = {'true' if long_running(os.path.join(CONFIGS, name)) else 'false'}")
        m = run.get(name)
        e = earlier.get(name)
        if m is None and e is not None:
            secs = e.get("timings_seconds", {}).get("total")
            load = e.get("load_average_at_start")
            lines.append(f"seconds = {secs:.1f}")
            lines.append(f"time = {toml_str(human(secs))}")
            lines.append(f"threads = {e.get('threads')}")
            lines.append(
                "note = "
                + toml_str(
                    f"not measured in this run; from an earlier run, {utc(e['started_unix_seconds'])}, "
                    f"program {e.get('program_hash')}, "
                    + (f"load average {load[0]} at its start" if load else "its load not recorded")
                )
            )
        elif m is None:
            why = log.get("stopped", {}).get(name) or "not run in it"
            lines.append(f"time = {toml_str(f'not measured in this run ({why})')}")
        else:
            secs = m.get("timings_seconds", {}).get("total")
            lines.append(f"seconds = {secs:.1f}")
            lines.append(f"time = {toml_str(human(secs))}")
            lines.append(f"threads = {m.get('threads')}")
            lines.append(f"load_average_at_start = {toml_loads(m.get('load_average_at_start'))}")
        lines.append("")
    with open(OUT, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {os.path.relpath(OUT, ROOT)}: {len(run)} configs measured, {len(earlier)} from earlier runs")
    rewrite_blocks(parse_times(OUT))


def parse_times(path):
    """file -> time string, and the machine line, read back from the generated file."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    with open(path, "rb") as f:
        t = tomllib.load(f)
    return t


def block_text(times, names):
    """The generated block's body for the configs `names`: one line per config."""
    by = {c["file"]: c for c in times["config"]}
    out = []
    for n in names:
        note = by[n].get("note")
        out.append(f"- `configs/{n}`: {by[n]['time']}" + (f" ({note})" if note else ""))
    out.append("\n" + machine_line(times))
    return out


def short_time(c):
    """A config's time for a table's cell, as `trellis-lab list` prints it (RunTimes::short_of)."""
    if c.get("note"):
        return f"{c['time']} (earlier run)"
    if c.get("seconds") is None:
        return "not measured"
    return c["time"]


def machine_line(times):
    m, r = times["machine"], times["run"]
    load = r.get("load_average_at_start") or ["?"]
    return (
        f"(Wall times of one measured run, {r['started'][:10]}, on {m['cores']} cores of an {m['cpu_model']} "
        f"shared with other users' jobs: load average {load[0]} at the start; from experiments/run_times.toml, "
        "written by scripts/run_times.py.)"
    )


def table_text(times, body, where):
    """A table block's body with each `| `configs/X.toml` | ...` row's fourth cell (the run time)
    and the machine line rewritten; every other line is the README's own."""
    by = {c["file"]: c for c in times["config"]}
    out = []
    for line in body:
        if line.startswith("| `configs/"):
            cells = line.split(" | ")
            name = cells[0][len("| `configs/"):].rstrip("`")
            if name not in by:
                sys.exit(f"{where}: {name} in a run-times table is not a shipped config")
            if len(cells) < 5:
                sys.exit(f"{where}: the row of {name} has no run-time cell (the fourth)")
            cells[3] = short_time(by[name])
            line = " | ".join(cells)
        elif line.startswith("(Wall times"):
            line = machine_line(times)
        out.append(line)
    return out


def rewrite_blocks(times):
    readmes = (
        [os.path.join(ROOT, "README.md")]
        + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
        + sorted(glob.glob(os.path.join(ROOT, "experiments", "*", "README.md")))
    )
    for path in readmes:
        with open(path) as f:
            lines = f.read().split("\n")
        out, i, changed = [], 0, False
        while i < len(lines):
            mt = BEGIN.match(lines[i])
            if not mt:
                out.append(lines[i])
                i += 1
                continue
            names = mt.group("configs").split()
            if names == ["all"]:
                names = shipped_configs()
            j = i + 1
            while j < len(lines) and lines[j] != END:
                j += 1
            if j == len(lines):
                sys.exit(f"{os.path.relpath(path, ROOT)}: a run-times block without its end line `{END}`")
            if names == ["table"]:
                body = table_text(times, lines[i + 1 : j], os.path.relpath(path, ROOT))
            else:
                body = block_text(times, names)
            new = [lines[i]] + body + [END]
            changed |= new != lines[i : j + 1]
            out.extend(new)
            i = j + 1
        if changed:
            with open(path, "w") as f:
                f.write("\n".join(out))
            print(f"rewrote the run-time blocks of {os.path.relpath(path, ROOT)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure", help="run the configs, then write")
    m.add_argument("--long", nargs="*", default=[], help="long-running configs to measure too")
    m.add_argument("--timeout", type=int, default=900, help="seconds before a long-running config is stopped")
    m.add_argument("--budget", type=int, default=4 * 3600, help="seconds for the whole run; long-running configs beyond it are not measured")
    w = sub.add_parser("write", help="write experiments/run_times.toml and the READMEs' blocks from the manifests")
    for p in (m, w):
        p.add_argument("--earlier", nargs="*", default=[], help="results folders of earlier runs, for long-running configs not measured")
    args = ap.parse_args()
    sys.exit(measure(args) if args.cmd == "measure" else write(args))


if __name__ == "__main__":
    main()
