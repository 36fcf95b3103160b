"""The stubs accept what the runtime accepts and refuse what it refuses (mypy --strict on a
user's script using every documented input form, and on a script of wrong ones); the stubs
name every argument and default as the runtime does (mypy's stubtest); every public name has
a docstring and a signature that `help` shows without Ellipsis defaults."""

import inspect
import os
import pathlib
import re
import subprocess
import sys

import pytest

import trellis_lab as tl

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCRIPT = HERE / "typing" / "user_script.py"

# Lines of a wrong script and the error mypy must report on each.
WRONG = {
    'tl.exact_trellis(similarity=s, energy="dasgupt")': "energy",
    'tl.beam(similarity=s, dedup="cluster")': "dedup",
    'tl.greedy(similarity=s, merge_score="revenu")': "merge_score",
    'tl.coalescent(s, "mpost3")': "coalescent",
    'tl.generate_jets(3, jet_type="z")': "jet_type",
    "tl.exact_trellis(jet=s)": "jet",
    "tl.exact_trellis(similarity=s, max_leaves=2.5)": "max_leaves",
    't.sample("10")': "sample",
    'tl.read_results("x", as_="pandsa")': "as_",
    "tl.Tree.from_parents(3, [0.5, 3])": "from_parents",
}


def test_mypy_strict_accepts_every_input_form_and_refuses_wrong_ones(tmp_path):
    pytest.importorskip("mypy")
    wrong = tmp_path / "wrong_script.py"
    lines = ["import numpy as np", "import trellis_lab as tl", "s = np.eye(3)",
             "t = tl.exact_trellis(similarity=s)", *WRONG]
    wrong.write_text("\n".join(lines) + "\n")
    # From a folder outside the repository, so that mypy reads the installed package.
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
         "--no-error-summary", str(SCRIPT), str(wrong)],
        cwd=tmp_path, capture_output=True, text=True,
    )
    report = out.stdout + out.stderr
    assert "user_script.py" not in report, report
    flagged = {int(m.group(1)) for m in re.finditer(r"wrong_script\.py:(\d+): error", report)}
    for k, (line, what) in enumerate(WRONG.items(), start=5):
        assert k in flagged, f"mypy accepted line {k}: {line} ({what})\n{report}"
    assert flagged == set(range(5, 5 + len(WRONG))), report


def test_the_user_script_runs(tmp_path):
    # Every form the stubs accept is one the runtime accepts, including a results folder.
    exe = os.environ.get("TRELLIS_LAB", str(ROOT / "target" / "release" / "trellis-lab"))
    cfg = tmp_path / "jets_smoke.toml"
    text = (ROOT / "configs" / "jets_smoke.toml").read_text()
    cfg.write_text(text.replace('output_dir = "../results"', 'output_dir = "out"'))
    folder = tl.run(cfg, executable=exe, quiet=True).path
    out = subprocess.run([sys.executable, str(SCRIPT), str(folder)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith(tl.__version__)


def test_stubs_match_the_runtime():
    # mypy's stubtest: every runtime name is in the stubs with the same arguments and defaults.
    pytest.importorskip("mypy")
    allow = HERE / "typing" / "stubtest_allowlist.txt"
    out = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "trellis_lab", "--ignore-disjoint-bases",
         "--allowlist", str(allow)],
        capture_output=True, text=True, cwd=HERE / "typing",
    )
    assert out.returncode == 0, out.stdout + out.stderr


def public():
    """Every public name of the package: (qualified name, object)."""
    names = [n for n in tl.__all__]
    for n in names:
        obj = getattr(tl, n)
        yield n, obj
        if isinstance(obj, type):
            for a, v in vars(obj).items():
                if not a.startswith("_"):
                    yield f"{n}.{a}", v


def test_every_public_name_has_a_docstring():
    missing = [n for n, obj in public() if not (getattr(obj, "__doc__", None) or "").strip()]
    assert missing == []
    assert tl.__doc__ and tl.results.__doc__


def no_ellipsis(name, obj):
    sig = inspect.signature(obj)
    for p in sig.parameters.values():
        assert p.default is not Ellipsis, f"{name}{sig}"
    return sig


def test_every_signature_shows_its_defaults():
    constructors = []
    for name, obj in public():
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, type):
            if issubclass(obj, BaseException):
                continue  # exceptions take a message
            try:
                inspect.signature(obj)
            except ValueError:
                # Made by the package's functions only: it says so when called.
                with pytest.raises(TypeError, match="cannot create|[Nn]o constructor"):
                    obj()
                continue
            constructors.append(name)
        if callable(obj):
            no_ellipsis(name, obj)
    assert {"Jet", "CancelToken", "Results"} <= set(constructors)
    assert str(inspect.signature(tl.Jet)) == (
        "(leaves, t_cut=16.0, lam=1.5, lam_root=None, name='jet')"
    )
    assert "source='written by trellis_lab (Python)'" in str(inspect.signature(tl.save_jets))
    # help() shows no Ellipsis anywhere.
    import pydoc

    text = pydoc.render_doc(tl, renderer=pydoc.plaintext)
    assert "Ellipsis" not in text and "=..." not in text
