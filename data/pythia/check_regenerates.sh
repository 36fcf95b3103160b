#!/usr/bin/env bash
# Regenerates the committed Pythia jets twice in a fresh venv with the pinned wheels, compares the
# bytes (the two runs with each other and with the committed files), then runs test_truth.py (the
# jets against the event record) and test_outputs.py (decoy files keep their bytes) in that venv. Needs CPython 3.11 (PYTHON=... to name another
# interpreter of that version) and the package index. Optional: CI uses the committed files and
# needs no Pythia.
#   data/pythia/check_regenerates.sh                          # a throwaway venv
#   VENV=.venv-pythia data/pythia/check_regenerates.sh        # create or reuse that venv
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3.11}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
venv="${VENV:-$work/venv}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: -r "$here/requirements.txt"
mkdir "$work/a" "$work/b"
# Run from the empty work folder (the scripts also run from the repository root: test_outputs.py
# checks that), so nothing in the caller's folder shadows a module.
cd "$work"
"$venv/bin/python" "$here/make_jets.py" --out "$work/a"
"$venv/bin/python" "$here/make_jets.py" --out "$work/b"
status=0
for f in pythia_parton.json pythia_hadron.json pythia_parton_500.json; do
  if ! cmp -s "$work/a/$f" "$work/b/$f"; then
    echo "FAIL $f: two runs of make_jets.py differ"
    status=1
  elif ! cmp -s "$work/a/$f" "$here/$f"; then
    echo "FAIL $f: a regeneration differs from the committed file (first difference: $(cmp "$work/a/$f" "$here/$f" | head -n 1))"
    status=1
  else
    echo "ok $f: two runs equal the committed file byte for byte ($(wc -c < "$here/$f") bytes, sha256 $(sha256sum "$here/$f" | cut -c1-16)...)"
  fi
done
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here/test_truth.py" "$here/test_outputs.py"
exit "$status"
