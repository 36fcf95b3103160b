#!/usr/bin/env bash
# Submits an experiment to Slurm in N shards: a job array of N tasks (shard.sbatch, task I runs
# `trellis-lab run CONFIG --shard I/N`), then one merge job (merge.sbatch: `merge` of the N
# shard folders into <output_dir>/<name>/, then `check`) that starts only when every task
# succeeded. Prints both job ids.
#
#   scripts/slurm/submit.sh [--wait] [--no-check] CONFIG N [extra sbatch args...]
#
#   scripts/slurm/submit.sh configs/jets.toml 8
#   scripts/slurm/submit.sh --wait configs/jets.toml 8 --partition=short --time=02:00:00
#   scripts/slurm/submit.sh configs/jets.toml 8 --cpus-per-task=4     # 4 threads per shard
#
# Needs a file system shared by the submitting node and every compute node, mounted at the same
# path (the repository or working folder, the binary and the results folder): each task writes
# its shard folder under the config's output_dir and the merge job reads all of them from there;
# nothing is copied between nodes. Node-local scratch (/tmp) does not work.
#
# Run it from the folder the jobs should work in (normally the repository root): the jobs run
# there, a relative CONFIG, the config's output_dir (default "results", relative to the config's folder) and the
# default TRELLIS_LAB (target/release/trellis-lab) are taken from there, and the Slurm logs
# (slurm-<array>_<task>.out, slurm-<merge>.out) are written there.
#
# Options (before CONFIG; --wait is also recognised after N):
#   --wait      block until the merge job ends; exit 0 if it completed, else non-zero (its exit
#               code, or 1 if it was cancelled, e.g. because a shard failed)
#   --no-check  merge without running `check` (for configs with no expected numbers)
#   --dry-run   print the results folder and the two sbatch commands; submit nothing
# Extra sbatch args go to both the array and the merge job (partition, account, time, ...);
# SHARD_SBATCH_ARGS / MERGE_SBATCH_ARGS (split on spaces) go to one of them only (e.g. --output,
# whose default names differ: slurm-%A_%a.out for shards, slurm-%j.out for the merge). A
# --dependency among the extra args holds the array back; the merge always waits for the array.
# Not allowed: --array (made here) and --export (the jobs take TRELLIS_LAB, SHARDS, CHECK and
# RUN_ARGS from this script's environment).
# Environment: TRELLIS_LAB (the program), RUN_ARGS (extra `run` arguments, e.g. "--force"),
# WAIT_POLL (seconds between polls with --wait, default 5).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

die() { echo "submit.sh: error: $*" >&2; exit 2; }
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit "${1:-2}"
}

wait_for_merge=""
check=1
dry_run=""
while (($# > 0)); do
  case $1 in
    --wait) wait_for_merge=1; shift ;;
    --no-check) check=0; shift ;;
    --dry-run) dry_run=1; shift ;;
    -h | --help) usage 0 ;;
    --) shift; break ;;
    -*) die "unknown option $1 (sbatch options go after CONFIG N)" ;;
    *) break ;;
  esac
done
(($# >= 2)) || usage
config=$1
shards=$2
shift 2
sbatch_args=()
for a in "$@"; do
  case $a in
    --wait) wait_for_merge=1 ;;
    -a | -a* | --array | --array=*) die "don't pass --array: submit.sh makes --array=0-(N-1)" ;;
    --export | --export=*) die "don't pass --export: the jobs need this environment (TRELLIS_LAB, SHARDS, CHECK, RUN_ARGS)" ;;
    *) sbatch_args+=("$a") ;;
  esac
done
[[ -f $config ]] || die "config $config is not a file (relative paths are taken from $PWD)"
[[ $shards =~ ^[1-9][0-9]*$ ]] || die "N must be a positive whole number, not '$shards'"
[[ -n $dry_run ]] || command -v sbatch >/dev/null || die "sbatch not found: is this a Slurm login node? (locally: scripts/slurm/local_cluster.sh start)"

TRELLIS_LAB="${TRELLIS_LAB:-target/release/trellis-lab}"
if [[ $TRELLIS_LAB != /* ]]; then TRELLIS_LAB="$PWD/$TRELLIS_LAB"; fi
[[ -n $dry_run || -x $TRELLIS_LAB ]] || die "$TRELLIS_LAB is not an executable: build it (cargo build --release) or set TRELLIS_LAB"
if [[ -z $dry_run ]] && ! "$TRELLIS_LAB" run --help 2>/dev/null | grep -q -- '--shard'; then
  die "$TRELLIS_LAB has no 'run --shard': rebuild it from a version that has (cargo build --release)"
fi

# ---- [experiment] name and output_dir of the config ------------------------------------------
# Exact TOML with python3 (tomllib, Python >= 3.11, or tomli); else a small awk reader that
# knows sections, comments and "basic" / 'literal' one-line strings, which is all an
# [experiment] section needs.
read_experiment_python() {
  python3 - "$1" <<'PY'
import sys
try:
    import tomllib
except ImportError:
    import tomli as tomllib
with open(sys.argv[1], "rb") as f:
    exp = tomllib.load(f).get("experiment", {})
name, out = exp.get("name"), exp.get("output_dir", "results")
if not isinstance(name, str) or not isinstance(out, str) or "\n" in name + out:
    sys.exit(1)
print(name)
print(out)
PY
}
read_experiment_awk() {
  awk '
    function strip_comment(s,   i, c, q, out) {
      q = ""; out = ""
      for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (q == "" && c == "#") break
        if (q == "" && (c == "\"" || c == "\047")) q = c
        else if (q == "\"" && c == "\\") { out = out c; i++; c = substr(s, i, 1) }
        else if (q != "" && c == q) q = ""
        out = out c
      }
      return out
    }
    function unquote(v,   r, i, c) {
      if (v ~ /^\047[^\047]*\047$/) return substr(v, 2, length(v) - 2)
      if (v !~ /^".*"$/) { bad = 1; return "" }
      v = substr(v, 2, length(v) - 2); r = ""
      for (i = 1; i <= length(v); i++) {
        c = substr(v, i, 1)
        if (c == "\\") {
          i++; c = substr(v, i, 1)
          if (c == "t") c = "\t"; else if (c != "\\" && c != "\"") { bad = 1; return "" }
        }
        r = r c
      }
      return r
    }
    {
      line = strip_comment($0)
      gsub(/^[ \t]+|[ \t\r]+$/, "", line)
      if (line ~ /^\[/) { s = line; gsub(/[ \t]/, "", s); inexp = (s == "[experiment]"); next }
      if (!inexp || line !~ /=/) next
      key = line; sub(/[ \t]*=.*/, "", key); gsub(/"/, "", key)
      val = line; sub(/^[^=]*=[ \t]*/, "", val)
      if (key == "name") name = unquote(val)
      else if (key == "output_dir") out = unquote(val)
    }
    END {
      if (bad || name == "") exit 1
      if (out == "") out = "results"
      print name; print out
    }
  ' "$1"
}
parsed=""
if [[ ${TOML_READER:-} != awk ]] && command -v python3 >/dev/null &&
  { python3 -c 'import tomllib' 2>/dev/null || python3 -c 'import tomli' 2>/dev/null; }; then
  parsed=$(read_experiment_python "$config") || parsed=""
fi
if [[ -z $parsed ]]; then parsed=$(read_experiment_awk "$config") || parsed=""; fi
[[ -n $parsed ]] || die "cannot read [experiment] name (and output_dir) from $config"
{ read -r name; read -r output_dir; } <<<"$parsed"
[[ $name =~ ^[A-Za-z0-9_-]+$ ]] || die "experiment.name '$name' in $config is not a folder name"
while [[ $output_dir == */ && $output_dir != / ]]; do output_dir="${output_dir%/}"; done
# A relative output_dir is relative to the config file's folder, as every path in a config is.
if [[ $output_dir != /* ]]; then output_dir="$(dirname "$config")/$output_dir"; fi
output_dir="$(realpath -m -s "$output_dir" 2>/dev/null || echo "$output_dir")"
results_dir="$output_dir/$name"
shard_dirs=()
for ((i = 0; i < shards; i++)); do shard_dirs+=("$output_dir/$name.shard-$i-of-$shards"); done

# ---- submit -----------------------------------------------------------------------------------
shard_extra=()
merge_extra=()
if [[ -n ${SHARD_SBATCH_ARGS:-} ]]; then read -r -a shard_extra <<<"$SHARD_SBATCH_ARGS"; fi
if [[ -n ${MERGE_SBATCH_ARGS:-} ]]; then read -r -a merge_extra <<<"$MERGE_SBATCH_ARGS"; fi
export TRELLIS_LAB SHARDS="$shards" CHECK="$check"
if [[ -n $dry_run ]]; then
  echo "results folder: $results_dir"
  echo "would run (TRELLIS_LAB=$TRELLIS_LAB SHARDS=$shards CHECK=$check):"
  printf '  sbatch --parsable'
  printf ' %q' ${sbatch_args[@]+"${sbatch_args[@]}"} ${shard_extra[@]+"${shard_extra[@]}"} "--array=0-$((shards - 1))" "$here/shard.sbatch" "$config"
  printf '\n  sbatch --parsable'
  printf ' %q' ${sbatch_args[@]+"${sbatch_args[@]}"} ${merge_extra[@]+"${merge_extra[@]}"} --dependency=afterok:ARRAY_JOB_ID --kill-on-invalid-dep=yes "$here/merge.sbatch" "${shard_dirs[@]}"
  echo
  exit 0
fi
job_id() { local out=$1; out="${out%%;*}"; [[ $out =~ ^[0-9]+$ ]] || return 1; echo "$out"; }

out=$(sbatch --parsable ${sbatch_args[@]+"${sbatch_args[@]}"} ${shard_extra[@]+"${shard_extra[@]}"} \
  --array="0-$((shards - 1))" "$here/shard.sbatch" "$config") || die "sbatch of the shard array failed"
array_id=$(job_id "$out") || die "unexpected sbatch answer: $out"
out=$(sbatch --parsable ${sbatch_args[@]+"${sbatch_args[@]}"} ${merge_extra[@]+"${merge_extra[@]}"} \
  --dependency="afterok:$array_id" --kill-on-invalid-dep=yes "$here/merge.sbatch" "${shard_dirs[@]}") || {
  scancel "$array_id" || true
  die "sbatch of the merge job failed; cancelled the array $array_id"
}
merge_id=$(job_id "$out") || die "unexpected sbatch answer: $out"

echo "array job: $array_id ($shards tasks: $config -> $output_dir/$name.shard-I-of-$shards)"
echo "merge job: $merge_id (after the array succeeds -> $results_dir)"
[[ -n $wait_for_merge ]] || exit 0

# ---- --wait -----------------------------------------------------------------------------------
# `sbatch --wait` is no help here: it exits 0 for a job cancelled because its dependency can
# never be satisfied. So poll the merge job's state (scontrol, or sacct once slurmctld has
# forgotten the job).
field() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" | head -n1; }
merge_state() {
  local line
  if line=$(scontrol -o show job "$merge_id" 2>/dev/null) && [[ -n $line ]]; then
    echo "$(field JobState <<<" $line") $(field ExitCode <<<" $line") $(field Reason <<<" $line")"
  elif command -v sacct >/dev/null &&
    line=$(sacct -n -X -P -j "$merge_id" -o State,ExitCode 2>/dev/null | head -n1) && [[ -n $line ]]; then
    echo "${line%%|*} ${line#*|} -"
  else
    echo "UNKNOWN 0:0 -"
  fi
}
poll="${WAIT_POLL:-5}"
last=""
while :; do
  read -r state exit_code reason <<<"$(merge_state)"
  state="${state%%+*}"
  if [[ $state != "$last" ]]; then
    echo "submit.sh: $(date +%T) merge job $merge_id: $state${reason:+ ($reason)}"
    last=$state
  fi
  case $state in
    PENDING | CONFIGURING | RUNNING | COMPLETING | REQUEUED | RESIZING | SUSPENDED | SIGNALING | STAGE_OUT) sleep "$poll" ;;
    *) break ;;
  esac
done
if [[ $state == COMPLETED ]]; then
  echo "submit.sh: done: $results_dir"
  exit 0
fi
echo "submit.sh: merge job $merge_id ended $state (exit $exit_code); shard tasks:" >&2
scontrol -o show job "$array_id" 2>/dev/null |
  while read -r line; do
    echo "  task $(field ArrayTaskId <<<" $line"): $(field JobState <<<" $line") exit $(field ExitCode <<<" $line")"
  done >&2 || true
echo "submit.sh: logs: slurm-${array_id}_<task>.out and slurm-$merge_id.out (unless --output was changed)" >&2
code="${exit_code%%:*}"
if [[ $code =~ ^[0-9]+$ ]] && ((code > 0 && code < 256)); then exit "$code"; fi
exit 1
