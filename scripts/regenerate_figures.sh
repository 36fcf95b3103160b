#!/usr/bin/env bash
# Regenerates every paper figure with one command: runs each config (all of configs/*.toml, or
# the ones named), checks each results folder against the expected numbers beside its kind,
# and prints one summary table (config, seconds, checks passed). Exits non-zero if any run or
# check failed.
#
#   scripts/regenerate_figures.sh                         # every config; the long-running ones only as their smoke configs
#   ALL=1 scripts/regenerate_figures.sh                   # the papers' versions of the long-running ones too (hours; see experiments/run_times.toml)
#   scripts/regenerate_figures.sh configs/jets.toml ...   # just these
#   FORCE=1 scripts/regenerate_figures.sh                 # recompute even up-to-date results
#   NO_BUILD=1 scripts/regenerate_figures.sh              # use the release binary as built
#
# A config with a line starting "# long-running" is skipped unless ALL=1 or it is named; its
# smoke config covers the same code path. Ends by writing the static HTML report of every results
# folder, results/index.html (`trellis-lab report results`; scripts/check_report.sh opens it in a
# headless Chromium).
set -uo pipefail
cd "$(dirname "$0")/.."

# NO_BUILD=1: use the release binary as it is (CI builds it beside the Python package, with the
# same dependency features, so that the wheel reuses every dependency build).
if [ -z "${NO_BUILD:-}" ]; then cargo build --release --quiet || exit 1; fi
bin="${CARGO_TARGET_DIR:-target}/release/trellis-lab"
if [ $# -gt 0 ]; then
  configs=("$@")
else
  configs=()
  for c in configs/*.toml; do
    if [ -z "${ALL:-}" ] && grep -q '^# long-running' "$c"; then continue; fi
    configs+=("$c")
  done
fi
force=()
if [ -n "${FORCE:-}" ]; then force=(--force); fi
# The summary's first column is as wide as the longest config path, so that its rows align.
width=6
for c in "${configs[@]}"; do if [ ${#c} -gt $width ]; then width=${#c}; fi; done

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
rows=()
failed=0
for c in "${configs[@]}"; do
  name=$(basename "$c" .toml)
  start=$(date +%s%N)
  if "$bin" run "$c" ${force[@]+"${force[@]}"} 2>"$log/$name.run"; then
    secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
    # `run` ends with "wrote DIR" or "DIR already holds a complete run ...".
    dir=$(tail -n 1 "$log/$name.run" | sed -E 's/^wrote //; s/ already holds .*$//')
    if "$bin" check "$dir" >"$log/$name.check" 2>&1; then
      status=ok
    else
      status="CHECK FAILED"; failed=1
      grep -E '^FAIL|^error' "$log/$name.check" | head -5 | sed 's/^/    /' >&2
    fi
    checks=$(grep -oE '[0-9]+ passed, [0-9]+ failed' "$log/$name.check" | tail -n 1)
    rows+=("$(printf '%-*s %8s  %-22s %s' "$width" "$c" "$secs" "${checks:-no checks}" "$status")")
  else
    failed=1
    rows+=("$(printf '%-*s %8s  %-22s %s' "$width" "$c" "-" "-" "RUN FAILED")")
    tail -n 3 "$log/$name.run" | sed 's/^/    /' >&2
  fi
done

echo
printf '%-*s %8s  %-22s %s\n' "$width" config seconds checks status
printf '%s\n' "${rows[@]}"

# The static HTML report of every results folder (results/index.html); a failure fails the script.
echo
if ! "$bin" report results; then failed=1; fi
exit $failed
