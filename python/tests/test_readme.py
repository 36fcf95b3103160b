"""Every Python block of the README and of docs/python.md runs as written, from a folder laid out like the
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
PAGES = ["README.md", "docs/python.md"]
BLOCKS = [
    (page, block)
    for page in PAGES
    for block in re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(), flags=re.S)
]

# What the blocks print, as their comments say: (a line the block holds, the lines it prints).
PRINTED = [
    ("tl.exact_trellis(jet)", ["-26.18018 -26.94947 90"]),
    ("tl.fit_lambda(jets[:40])", ["5.936 (35, False) False"]),
]


def test_the_pages_have_their_python_blocks():
    pages = [p for p, _ in BLOCKS]
    assert pages.count("README.md") == 1 and pages.count("docs/python.md") == 2
    assert any("tl.fit_lambda(" in b for _, b in BLOCKS) and any("tl.run(" in b for _, b in BLOCKS)
    for marker, _ in PRINTED:
        assert any(marker in b for _, b in BLOCKS), marker


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
    page, block = BLOCKS[k]
    script.write_text(block)
    exe = os.environ.get("TRELLIS_LAB", str(ROOT / "target" / "release" / "trellis-lab"))
    env = {**os.environ, "TRELLIS_LAB": exe, "MPLBACKEND": "Agg"}
    out = subprocess.run(
        [sys.executable, script.name], cwd=folder, capture_output=True, text=True, env=env,
        timeout=600,
    )
    assert out.returncode == 0, page + ": " + out.stdout + out.stderr[-3000:]
    lines = out.stdout.splitlines()
    for marker, wants in PRINTED:
        for want in wants if marker in block else []:
            assert want in lines, f"{page}: {want!r} not printed:\n{out.stdout}"


def test_the_readme_blocks_type_check_under_mypy_strict(tmp_path):
    pytest.importorskip("mypy")
    pytest.importorskip("matplotlib")
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\n\n[mypy-scipy.*]\nignore_missing_imports = True\n")
    files = []
    for k, (_, block) in enumerate(BLOCKS):
        f = tmp_path / f"block_{k}.py"
        f.write_text(block)
        files.append(str(f))
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir",
         str(tmp_path / "cache"), *files],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
