#!/usr/bin/env bash
# Proves on this one machine that a sharded Slurm run gives the same tables as a single run:
#   1. starts the local single-node Slurm (local_cluster.sh start; stopped again at the end if
#      this script started it),
#   2. runs the config once in one process (`trellis-lab run CONFIG --force`) and moves its
#      results folder to WORK/reference/,
#   3. runs it through Slurm in N shards (submit.sh --wait: job array + merge + check) into the
#      config's own results folder (the shard folders are removed afterwards),
#   4. compares every Parquet table of the two results folders exactly (compare_tables.py;
#      wall-time and memory columns skipped) and prints PASS or FAIL and the elapsed times.
#
#   scripts/slurm/prove_local.sh CONFIG [N]          # N defaults to 3
#   scripts/slurm/prove_local.sh --no-check configs/x.toml 4
#
# Builds nothing: expects target/release/trellis-lab (cargo build --release) or TRELLIS_LAB.
# Both runs use the config file itself, unchanged (same run hash), one after the other (its
# output_dir, like every path in a config, is relative to the config's folder). Needs root
# (for the local cluster) and python3 with pyarrow and numpy (installed with pip if missing).
# Environment: WORK_DIR (default: a new /tmp/trellis-prove.XXXXXX, kept for inspection),
# TRELLIS_LAB, WAIT_POLL (seconds, default 2).
# --no-check: skip `check` on both results (for a config with no expected numbers).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
die() { echo "prove_local: error: $*" >&2; exit 2; }
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit "${1:-2}"
}

check=1
while (($# > 0)); do
  case $1 in
    --no-check) check=0; shift ;;
    -h | --help) usage 0 ;;
    -*) die "unknown option $1" ;;
    *) break ;;
  esac
done
(($# >= 1 && $# <= 2)) || usage
config=$1
shards=${2:-3}
[[ $shards =~ ^[1-9][0-9]*$ ]] || die "N must be a positive whole number, not '$shards'"
[[ -f $config ]] || die "config $config is not a file"
config="$(cd "$(dirname "$config")" && pwd)/$(basename "$config")"

TRELLIS_LAB="${TRELLIS_LAB:-$repo/target/release/trellis-lab}"
if [[ $TRELLIS_LAB != /* ]]; then TRELLIS_LAB="$PWD/$TRELLIS_LAB"; fi
[[ -x $TRELLIS_LAB ]] || die "$TRELLIS_LAB is missing: build it first with 'cd $repo && cargo build --release' (several minutes), or set TRELLIS_LAB"
"$TRELLIS_LAB" run --help 2>/dev/null | grep -q -- '--shard' ||
  die "$TRELLIS_LAB has no 'run --shard': rebuild it from a version that has (cargo build --release)"
export TRELLIS_LAB

if ! python3 -c 'import pyarrow, numpy' 2>/dev/null; then
  echo "prove_local: installing pyarrow and numpy for the comparison (pip)"
  python3 -m pip install -q pyarrow numpy || true
  python3 -c 'import pyarrow, numpy' 2>/dev/null ||
    die "python3 cannot import pyarrow and numpy; install them (python3 -m pip install pyarrow numpy)"
fi

t_all=$SECONDS
started_cluster=""
if ! "$here/local_cluster.sh" status >/dev/null 2>&1; then
  started_cluster=1
fi
t0=$SECONDS
"$here/local_cluster.sh" start
echo "prove_local: cluster ready in $((SECONDS - t0))s"
# shellcheck disable=SC2317  # called by the EXIT trap
stop_cluster() {
  if [[ -n $started_cluster ]]; then "$here/local_cluster.sh" stop || true; fi
}
trap stop_cluster EXIT

work="${WORK_DIR:-$(mktemp -d /tmp/trellis-prove.XXXXXX)}"
mkdir -p "$work/reference" "$work/slurm"
work="$(cd "$work" && pwd)"
no_check=()
if ((check == 0)); then no_check=(--no-check); fi

# Where the results go (submit.sh reads the config's [experiment] name and output_dir).
results=$(cd "$work/slurm" && "$here/submit.sh" --dry-run "$config" "$shards" | sed -n 's/^results folder: //p')
[[ -n $results ]] || die "cannot read the results folder of $config"
ref_results="$work/reference/$(basename "$results")"
slurm_results="$results"
echo "prove_local: $config in $shards shards; work folder $work"

# 1. The single-process reference run.
echo "prove_local: reference run: $TRELLIS_LAB run $config --force (in $work/reference)"
t0=$SECONDS
ref_rc=0
(cd "$work/reference" && "$TRELLIS_LAB" run "$config" --force) >"$work/reference.log" 2>&1 || ref_rc=$?
t_ref=$((SECONDS - t0))
if ((ref_rc != 0)); then
  tail -n 20 "$work/reference.log" >&2
  echo "prove_local: FAIL: the reference run exited $ref_rc (log: $work/reference.log)"
  exit 1
fi
ref_check="skipped"
if ((check)); then
  if (cd "$work/reference" && "$TRELLIS_LAB" check "$results") >>"$work/reference.log" 2>&1; then
    ref_check="passed"
  else
    ref_check="FAILED (see $work/reference.log)"
  fi
fi
echo "prove_local: reference run took ${t_ref}s; check $ref_check"
rm -rf "$ref_results"
mv "$results" "$ref_results"

# 2. The same through Slurm: array of N shards, then merge (+ check).
echo "prove_local: Slurm run: submit.sh --wait ${no_check[*]:+${no_check[*]} }$config $shards (in $work/slurm)"
t0=$SECONDS
slurm_rc=0
(cd "$work/slurm" && WAIT_POLL="${WAIT_POLL:-2}" "$here/submit.sh" --wait ${no_check[@]+"${no_check[@]}"} "$config" "$shards") || slurm_rc=$?
t_slurm=$((SECONDS - t0))
echo "prove_local: Slurm run took ${t_slurm}s (exit $slurm_rc)"
if ((slurm_rc != 0)); then
  for f in "$work"/slurm/slurm-*.out; do
    [[ -e $f ]] || continue
    echo "----- $f (last lines)"
    tail -n 15 "$f"
  done
  echo "prove_local: FAIL: the Slurm run failed (exit $slurm_rc); logs in $work/slurm/"
  exit 1
fi

rm -rf "$results".shard-*-of-"$shards"

# 3. Compare every Parquet table.
echo "prove_local: comparing $ref_results with $slurm_results"
cmp_rc=0
python3 "$here/compare_tables.py" "$ref_results" "$slurm_results" || cmp_rc=$?
echo "prove_local: elapsed: reference ${t_ref}s, Slurm ($shards shards + merge) ${t_slurm}s, all $((SECONDS - t_all))s"
if ((cmp_rc == 0)); then
  echo "prove_local: PASS: $shards-shard Slurm run of $(basename "$config") equals the single run, table for table (work folder $work)"
  exit 0
fi
echo "prove_local: FAIL: the tables differ (work folder $work)"
exit 1
