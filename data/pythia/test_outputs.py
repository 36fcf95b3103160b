"""The script never replaces a file it did not write: decoy user files keep their bytes."""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("pythia8mc")
pytest.importorskip("fastjet")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_jets as mj  # noqa: E402

SMALL = ["--parton-events", "3", "--hadron-events", "3"]


def snapshot(folder):
    out = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            out[name] = f.read()
    return out


def test_a_user_file_at_an_output_name_is_refused_before_generating(tmp_path, capsys):
    (tmp_path / "pythia_parton.json").write_bytes(b'{"jets": [], "source": "my own jets"}\n')
    (tmp_path / "pythia_hadron.json.tmp").write_bytes(b"a user's file\n")
    (tmp_path / "index.html").write_bytes(b"<html>mine</html>\n")
    before = snapshot(tmp_path)
    with pytest.raises(SystemExit) as e:
        mj.main(["--out", str(tmp_path)] + SMALL)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "is not this script's output" in err and "pythia_parton.json" in err
    assert snapshot(tmp_path) == before


def test_its_own_outputs_are_replaced_and_nothing_else_is_touched(tmp_path):
    decoys = {
        "pythia_parton.json.tmp": b"a user's file\n",
        ".pythia_hadron.json.x.tmp": b"another\n",
        "index.html": b"<html>mine</html>\n",
    }
    for name, data in decoys.items():
        (tmp_path / name).write_bytes(data)
    assert mj.main(["--out", str(tmp_path)] + SMALL) == 0
    first = snapshot(tmp_path)
    assert mj.main(["--out", str(tmp_path)] + SMALL + ["--parton-seed", "9"]) == 0
    after = snapshot(tmp_path)
    for name, data in decoys.items():
        assert after[name] == data, name
    # Only the two outputs were added, and the second run replaced the parton file.
    assert sorted(after) == sorted(list(decoys) + list(mj.OUTPUTS))
    assert after["pythia_parton.json"] != first["pythia_parton.json"]
    assert after["pythia_hadron.json"] == first["pythia_hadron.json"]
