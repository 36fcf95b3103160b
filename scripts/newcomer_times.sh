#!/usr/bin/env bash
# What a newcomer waits for, measured from fresh clones of this repository (no target/ folder) on
# this machine: the README's two commands, and the Python install into a fresh virtual
# environment (in a clone of its own, so it gets no help from the Rust build), then the built
# wheel into another environment. Prints one line per step with its wall time, and the machine
# and its load before and after; the README states these numbers with the date.
#
#   scripts/newcomer_times.sh            # all of it (about 15 minutes on 2 cores)
#   STEPS=python scripts/newcomer_times.sh   # only the Python install (also: STEPS=rust)
#
# Crates come from cargo's download cache when it holds them (a first build on a new machine
# also downloads them from crates.io: about 33 MB); Python packages (maturin, NumPy) from pip's.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
steps="${STEPS:-python rust}"
python="${PYTHON:-python3}"

now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { s = b - a; printf "%d min %02d s (%.0f s)", s / 60, s % 60, s }'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC'); load average $(load)"
echo "revision: $(git -C "$repo" rev-parse --short HEAD)"

for step in $steps; do
  case "$step" in
    python)
      git clone -q "$repo" "$work/py"
      "$python" -m venv "$work/venv"
      "$work/venv/bin/pip" install -q --disable-pip-version-check --upgrade pip >/dev/null
      t=$(now)
      "$work/venv/bin/pip" install -q --disable-pip-version-check "$work/py/python" >"$work/pip.log" 2>&1 \
        || { cat "$work/pip.log"; exit 1; }
      echo "pip install ./python (fresh clone, fresh venv): $(took "$t")"
      "$work/venv/bin/python" -c "import trellis_lab as tl; print('  import trellis_lab', tl.__version__)"
      t=$(now)
      "$work/venv/bin/pip" wheel -q --disable-pip-version-check --no-deps "$work/py/python" -w "$work/wheels" >/dev/null 2>&1
      echo "pip wheel ./python again (the Rust build reused): $(took "$t")"
      "$python" -m venv "$work/venv2"
      t=$(now)
      "$work/venv2/bin/pip" install -q --disable-pip-version-check "$work"/wheels/trellis_lab-*.whl
      echo "the wheel into another venv (NumPy from pip's cache; no compiler): $(took "$t")"
      ;;
    rust)
      git clone -q "$repo" "$work/rs"
      cd "$work/rs"
      t=$(now)
      cargo run --release -q -- run configs/jets.toml >"$work/run.log" 2>&1 || { cat "$work/run.log"; exit 1; }
      echo "cargo run --release -- run configs/jets.toml (fresh clone): $(took "$t")"
      t=$(now)
      cargo test --release -q >"$work/test.log" 2>&1 || { tail -n 30 "$work/test.log"; exit 1; }
      echo "cargo test --release (after the first command): $(took "$t")"
      grep -E "^test result" "$work/test.log" | sed 's/^/  /'
      cd "$repo"
      ;;
    *) echo "unknown step $step (python or rust)"; exit 2 ;;
  esac
done
echo "load average at the end: $(load)"
rm -rf "$work"
