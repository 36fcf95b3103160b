"""Imports the pinned `pythia8mc` wheel whatever the working directory holds.

On import, `pythia8mc` (8.317.2) executes every file in the folder `python/` of the current
working directory. Run from the repository root, that folder is the PyO3 package's (`Cargo.toml`,
Rust sources), and the import fails with `ImportError: initialization failed` after a
`SyntaxError` on `rust-version = "1.95"`. `import_pythia8mc()` imports the module from a new,
empty folder and returns to the caller's working directory, so the scripts of this folder and
their tests run from anywhere (the repository root included) and never execute a stranger's file.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile


def import_pythia8mc():
    """The `pythia8mc` module, imported (once) with an empty working directory."""
    if "pythia8mc" in sys.modules:
        return sys.modules["pythia8mc"]
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="pythia8mc-import-") as empty:
        os.chdir(empty)
        try:
            return importlib.import_module("pythia8mc")
        finally:
            os.chdir(here)


def for_tests() -> None:
    """In a test module: `pythia8mc` imported as `import_pythia8mc` does, and the module skipped
    when the wheel (or `fastjet`) is not installed. A failing import is an error, not a skip
    (`pytest.importorskip` would import in the working directory, and skip what it cannot)."""
    import pytest

    try:
        import_pythia8mc()
    except ModuleNotFoundError:
        pytest.skip("pythia8mc is not installed (see requirements.txt)", allow_module_level=True)
    pytest.importorskip("fastjet")
