"""Every Python block of the README runs as written, from a folder laid out like the
repository (its `data/` and a copy of `configs/`, so that results land in that folder), prints
what its comments say, and type-checks under `mypy --strict` (SciPy has no type information:
its imports are the one thing let through)."""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)

# What the blocks print, as their comments say.
PRINTED = {0: ["-26.18018 -26.94947 90", "5.936 (35, False) False"]}


def test_the_readme_has_its_python_blocks():
    assert len(BLOCKS) == 2 and "tl.exact_trellis(jet)" in BLOCKS[0] and "tl.run(" in BLOCKS[1]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A folder like the repository: data/ linked, configs/ copied (runs write beside them)."""
    d = tmp_path_factory.mktemp("readme")
    (d / "data").symlink_to(ROOT / "data")
    shutil.copytree(ROOT / "configs", d / "configs")
    return d


@pytest.mark.parametrize("k", range(len(BLOCKS)))
def test_a_readme_block_runs_as_written(folder, k):
    pytest.importorskip("matplotlib")
    script = folder / f"block_{k}.py"
    script.write_text(BLOCKS[k])
    exe = os.environ.get("TRELLIS_LAB", str(ROOT / "target" / "release" / "trellis-lab"))
    env = {**os.environ, "TRELLIS_LAB": exe, "MPLBACKEND": "Agg"}
    out = subprocess.run(
        [sys.executable, script.name], cwd=folder, capture_output=True, text=True, env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    lines = out.stdout.splitlines()
    for want in PRINTED.get(k, []):
        assert want in lines, f"{want!r} not printed:\n{out.stdout}"


def test_the_readme_blocks_type_check_under_mypy_strict(tmp_path):
    pytest.importorskip("mypy")
    pytest.importorskip("matplotlib")
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\n\n[mypy-scipy.*]\nignore_missing_imports = True\n")
    files = []
    for k, block in enumerate(BLOCKS):
        f = tmp_path / f"block_{k}.py"
        f.write_text(block)
        files.append(str(f))
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir",
         str(tmp_path / "cache"), *files],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
