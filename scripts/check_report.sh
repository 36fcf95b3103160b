#!/usr/bin/env bash
# Checks the static HTML report (`trellis-lab report RESULTS_ROOT`) in a real headless Chromium:
# crawls every page reachable from RESULTS_ROOT/index.html, fails on console errors, uncaught
# exceptions, failed loads, broken images, empty titles and links to missing files, and writes a
# full-page screenshot of the index. See scripts/check_report.py for the details.
#
#   scripts/check_report.sh                                  # results/, screenshot results/report_index.png
#   scripts/check_report.sh RESULTS_ROOT [SCREENSHOT] [--page-timeout S] [--total-timeout S]
#
# Installs what it needs when missing: Chromium from Debian's packages (apt-get, as root) and the
# Python package websocket-client (pip). Set CHROMIUM=/path/to/chrome to use another browser,
# PYTHON=... for another interpreter. Exit code: the check's (0 PASS, 1 FAIL, 2 could not run).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="${1:-results}"
shot="${2:-$root/report_index.png}"
if [ $# -gt 2 ]; then shift 2; else shift $#; fi
python="${PYTHON:-python3}"

# --- Chromium ------------------------------------------------------------------------------
chromium="${CHROMIUM:-}"
if [ -z "$chromium" ]; then
  chromium="$(command -v chromium || command -v chromium-browser || true)"
fi
if [ -z "$chromium" ]; then
  echo "check_report.sh: installing Chromium from Debian's packages..."
  if [ "$(id -u)" -ne 0 ]; then
    echo "check_report.sh: Chromium is missing and installing it needs root (apt-get install -y chromium)" >&2
    exit 2
  fi
  export DEBIAN_FRONTEND=noninteractive
  log="$(mktemp)"
  if ! apt-get install -y -q chromium >"$log" 2>&1; then
    # Stale or empty package lists: refresh them once and try again.
    apt-get update -q >>"$log" 2>&1 || true
    if ! apt-get install -y -q chromium >>"$log" 2>&1; then
      tail -n 20 "$log" >&2
      echo "check_report.sh: apt-get install chromium failed" >&2
      rm -f "$log"
      exit 2
    fi
  fi
  rm -f "$log"
  chromium="$(command -v chromium)"
fi
export CHROMIUM="$chromium"
echo "check_report.sh: $("$chromium" --version 2>/dev/null | head -n 1 || true)"

# --- Python packages -----------------------------------------------------------------------
if ! "$python" -c 'import websocket' 2>/dev/null; then
  echo "check_report.sh: installing websocket-client with pip..."
  "$python" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore websocket-client
fi

# --- The check -----------------------------------------------------------------------------
rc=0
"$python" "$here/check_report.py" "$root" "$shot" "$@" || rc=$?
exit "$rc"
