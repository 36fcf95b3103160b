"""The two scripts of this folder replace only files they wrote, and write atomically."""

from __future__ import annotations

import json
import os
import tempfile


def ours(path: str, mark: str) -> bool:
    """Whether `path` is missing or a file written by the script whose `mark` its `source` has."""
    if not os.path.lexists(path):
        return True
    if not os.path.isfile(path) or os.path.islink(path):
        return False
    try:
        with open(path, encoding="utf-8") as f:
            return mark in json.load(f).get("source", "")
    except (OSError, ValueError, AttributeError):
        return False


def write_atomically(path: str, text: str) -> None:
    """`text` into `path` through a temporary file of a unique new name in the same folder
    (created exclusively, so no file of anyone else's is touched; removed on failure)."""
    folder, name = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
