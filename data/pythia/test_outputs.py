"""The script never replaces a file it did not write (decoy user files keep their bytes), and the
scripts and tests of this folder run from any working directory: from the repository root, as
README.md writes the commands, and from a folder whose `python/` holds a file that must never run.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import pythia_import  # noqa: E402

pythia_import.for_tests()
import make_jets as mj  # noqa: E402

SMALL = ["--parton-events", "3", "--hadron-events", "3", "--large-events", "3"]


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


def run(args, cwd):
    """`python args...` in `cwd`, in this interpreter's environment (its venv's packages)."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable] + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_script_runs_from_the_repository_root_as_the_readme_writes_it(tmp_path):
    # The root holds the Python package's python/ folder, which the pythia8mc wheel would
    # execute on import if the script imported it there.
    assert os.path.isfile(os.path.join(ROOT, "python", "Cargo.toml"))
    out = tmp_path / "out"
    out.mkdir()
    r = run(["data/pythia/make_jets.py", "--out", str(out)] + SMALL, ROOT)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(out)) == sorted(mj.OUTPUTS)
    # The working directory is the caller's again: a relative --out is the root's.
    rel = os.path.relpath(out, ROOT)
    r = run(["data/pythia/make_jets.py", "--out", rel] + SMALL + ["--parton-seed", "5"], ROOT)
    assert r.returncode == 0, r.stderr


def test_a_python_folder_in_the_working_directory_is_never_executed(tmp_path):
    (tmp_path / "python").mkdir()
    marker = tmp_path / "executed"
    (tmp_path / "python" / "evil.py").write_text(f"open({str(marker)!r}, 'w').close()\nraise SystemExit(3)\n")
    (tmp_path / "out").mkdir()
    r = run([os.path.join(HERE, "make_jets.py"), "--out", "out"] + SMALL, tmp_path)
    assert r.returncode == 0, r.stderr
    assert not marker.exists(), "a file of the working directory's python/ ran"
    assert sorted(os.listdir(tmp_path / "out")) == sorted(mj.OUTPUTS)


def test_the_tests_collect_from_the_repository_root():
    r = run(["-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "data/pythia/test_truth.py"], ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "error" not in r.stdout.lower(), r.stdout
