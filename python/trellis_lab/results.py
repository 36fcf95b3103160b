"""The command line's results from Python, without the harness in the wheel.

`read_results(path)` reads a results folder that `trellis-lab run` wrote (its Parquet tables,
`manifest.json`, and `checks.parquet` once `trellis-lab check` has run) into pandas or polars
DataFrames or pyarrow Tables. `run(config)` and `check(path)` call the `trellis-lab`
executable (the TRELLIS_LAB environment variable, else PATH) and read what it wrote.

    >>> import trellis_lab as tl
    >>> res = tl.run("configs/jets_smoke.toml")      # writes results/jets_smoke/
    >>> res.tables["jets"].groupby("algorithm")["log_likelihood"].mean()
    >>> tl.check(res.path).checks                    # the verdicts, one row per number

pyarrow (and pandas or polars, whichever `as_` names) are imported on first use; a missing one
raises an ImportError naming the pip package to install.
"""

from __future__ import annotations

import importlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
from typing import Any, Callable, Dict, List, Literal, Optional, Tuple, Union

__all__ = ["CommandError", "Results", "check", "read_results", "run"]

#: The frame types `read_results`, `run` and `check` return.
FrameKind = Literal["pandas", "polars", "arrow"]

_FRAME_KINDS = ("pandas", "polars", "arrow")

_INSTALL = (
    "install it from the repository with `cargo install --locked --path .` (or set TRELLIS_LAB to the "
    "path of a trellis-lab executable, e.g. target/release/trellis-lab)"
)


class CommandError(RuntimeError):
    """The `trellis-lab` command line exited with an error: the message is its one-line error
    (without the leading "error: "); `command`, `returncode` and `output` (everything it
    printed, stdout and stderr interleaved) say the rest."""

    #: The command that ran, as a list of arguments.
    command: List[str]
    #: The command's exit status (1: an error in the run; 2: a usage error).
    returncode: int
    #: Every line the command printed.
    output: str

    def __init__(self, message: str, command: List[str], returncode: int, output: str) -> None:
        super().__init__(message)
        self.command = command
        self.returncode = returncode
        self.output = output


class Results:
    """A results folder read into frames: `tables` (each Parquet table by its file's stem, e.g.
    "jets" for jets.parquet), `manifest` (manifest.json: the config, seeds, program and input
    hashes, timings), `checks` (checks.parquet, written by `trellis-lab check`: one row per
    checked number with its observed and expected value, tolerance and verdict; None before a
    check) and `path` (the folder, where the figures and other files are)."""

    #: The results folder.
    path: pathlib.Path
    #: Every Parquet table of the folder but checks.parquet, by name (the file's stem).
    tables: Dict[str, Any]
    #: manifest.json as a dict.
    manifest: Dict[str, Any]
    #: checks.parquet as a frame, or None when the folder has not been checked.
    checks: Optional[Any]
    #: The frame type: "pandas", "polars" or "arrow".
    kind: str

    def __init__(
        self,
        path: pathlib.Path,
        tables: Dict[str, Any],
        manifest: Dict[str, Any],
        checks: Optional[Any],
        kind: str,
        summary: Tuple[Dict[str, Tuple[int, int]], Optional[str]],
    ) -> None:
        self.path = path
        self.tables = tables
        self.manifest = manifest
        self.checks = checks
        self.kind = kind
        self._summary = summary

    def __getitem__(self, name: str) -> Any:
        """The table called `name` (`res["jets"]` is `res.tables["jets"]`)."""
        try:
            return self.tables[name]
        except KeyError:
            known = ", ".join(self.tables) or "none"
            raise KeyError(f"no table {name!r} in {self.path}; the tables are: {known}") from None

    def __repr__(self) -> str:
        shapes, checks = self._summary
        tables = ", ".join(f"{n} ({r} x {c})" for n, (r, c) in shapes.items()) or "none"
        m = self.manifest
        facts = [f"{k} {m[k]}" for k in ("config_file", "seed", "run_hash") if k in m]
        return "\n".join(
            [
                f"Results({str(self.path)!r}, as_={self.kind!r})",
                f"  tables:   {tables}",
                f"  manifest: {len(m)} keys; " + ", ".join(facts),
                f"  checks:   {checks or 'None (not checked: trellis_lab.check(path))'}",
            ]
        )


def _need(module: str, package: str, what: str) -> Any:
    """`module` imported, or an ImportError naming the pip package that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{what} needs {package}: pip install {package}") from None


def _converter(as_: str) -> Callable[[Any], Any]:
    """The function from a pyarrow Table to the frame `as_` names (its library imported now,
    so that a missing one is said before anything runs)."""
    if as_ not in _FRAME_KINDS:
        raise ValueError(f'as_ = {as_!r} is not known; use "pandas", "polars" or "arrow"')
    _need("pyarrow.parquet", "pyarrow", "reading trellis-lab results")
    if as_ == "pandas":
        pd = _need("pandas", "pandas", 'as_="pandas"')
        pa = importlib.import_module("pyarrow")
        # Integer columns become pandas' nullable integers of the same width and sign, null or
        # not: pyarrow's default turns a column with a null into float64, which rounds a 64-bit
        # seed (8747788778420828063 would come back as 8.747788778420828e+18).
        ints = {
            pa.int8(): pd.Int8Dtype(),
            pa.int16(): pd.Int16Dtype(),
            pa.int32(): pd.Int32Dtype(),
            pa.int64(): pd.Int64Dtype(),
            pa.uint8(): pd.UInt8Dtype(),
            pa.uint16(): pd.UInt16Dtype(),
            pa.uint32(): pd.UInt32Dtype(),
            pa.uint64(): pd.UInt64Dtype(),
        }
        return lambda t: t.to_pandas(types_mapper=ints.get)
    if as_ == "polars":
        pl = _need("polars", "polars", 'as_="polars"')
        return lambda t: pl.from_arrow(t)
    return lambda t: t


def _folder(path: Union[str, "os.PathLike[str]"]) -> pathlib.Path:
    """`path` as a results folder that exists and has a manifest.json, else a one-line error."""
    p = pathlib.Path(path)
    if not p.exists():
        raise FileNotFoundError(
            f"no results folder at {p}: run a config first (trellis_lab.run(config) or "
            "`trellis-lab run CONFIG`), or pass the folder it wrote, e.g. results/jets_smoke"
        )
    if not p.is_dir():
        raise NotADirectoryError(
            f"{p} is a file, not a results folder; pass the folder `trellis-lab run` wrote"
        )
    if not (p / "manifest.json").is_file():
        raise FileNotFoundError(
            f"{p} has no manifest.json, so it is not a complete results folder (a run that "
            "did not finish, or another folder); run its config again"
        )
    return p


def _checks_summary(table: Any) -> str:
    """The `check` command's last line for a checks table: passed, failed, not applicable."""
    rows = table.to_pydict()
    n = table.num_rows
    failed = sum(1 for v in rows.get("passed", []) if not v)
    na = sum(1 for v in rows.get("applicable", []) if not v)
    text = f"{n} rows: {n - failed - na} passed, {failed} failed"
    return text + (f", {na} not applicable" if na else "")


def read_results(path: Union[str, "os.PathLike[str]"], as_: FrameKind = "pandas") -> Results:
    """Reads the results folder `path` (written by `trellis-lab run` or `trellis_lab.run`):
    every Parquet table (by its file's stem), manifest.json and, once the folder has been
    checked, checks.parquet, as pandas DataFrames (`as_="pandas"`, the default), polars
    DataFrames (`"polars"`) or pyarrow Tables (`"arrow"`), all read by pyarrow.

    Integers stay exact: in pandas every integer column has pandas' nullable integer dtype of
    its width and sign (`UInt64` for the 64-bit seeds of trees.parquet, `Int64`, ...; a null is
    `pd.NA`), never float64, so that a seed read back reproduces its method's tree; polars and
    pyarrow keep Arrow's integer types.

    Raises FileNotFoundError for a missing folder or one without manifest.json, ImportError
    naming the pip package when pyarrow, pandas or polars is missing."""
    convert = _converter(as_)
    p = _folder(path)
    pq = importlib.import_module("pyarrow.parquet")
    manifest = json.loads((p / "manifest.json").read_text())
    tables: Dict[str, Any] = {}
    shapes: Dict[str, Tuple[int, int]] = {}
    checks = None
    summary = None
    for f in sorted(p.glob("*.parquet")):
        t = pq.read_table(f)
        if f.name == "checks.parquet":
            checks, summary = convert(t), _checks_summary(t)
        else:
            tables[f.stem] = convert(t)
            shapes[f.stem] = (t.num_rows, t.num_columns)
    return Results(p, tables, manifest, checks, as_, (shapes, summary))


def _executable(executable: Union[str, "os.PathLike[str]", None]) -> str:
    """The trellis-lab executable: `executable`, else $TRELLIS_LAB, else `trellis-lab` on
    PATH; a one-line FileNotFoundError saying how to install it when there is none."""
    if executable is not None:
        found, where = str(executable), "executable"
    elif os.environ.get("TRELLIS_LAB"):
        found, where = os.environ["TRELLIS_LAB"], "TRELLIS_LAB"
    else:
        on_path = shutil.which("trellis-lab")
        if on_path is None:
            raise FileNotFoundError(f"no trellis-lab executable on PATH: {_INSTALL}")
        return on_path
    if not (os.path.isfile(found) and os.access(found, os.X_OK)):
        raise FileNotFoundError(f"{where} = {found!r} is not an executable file: {_INSTALL}")
    return found


def _call(command: List[str], quiet: bool) -> List[str]:
    """Runs `command`, echoing its output lines to sys.stderr unless `quiet`; its lines, or a
    CommandError with its one-line error when it fails. Ctrl-C stops it too."""
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
    )
    lines: List[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if not quiet:
                sys.stderr.write(line)
                sys.stderr.flush()
        code = proc.wait()
    except BaseException:
        # Ctrl-C (or any exception) in Python stops the command as well.
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    if code != 0:
        errors = [ln[len("error: ") :] for ln in lines if ln.startswith("error: ")]
        tail = [ln for ln in lines if ln.strip()]
        message = errors[-1] if errors else (tail[-1] if tail else f"exit status {code}")
        raise CommandError(message, command, code, "\n".join(lines))
    return lines


def _written(lines: List[str], command: List[str]) -> pathlib.Path:
    """The results folder `trellis-lab run` says it wrote (or found up to date)."""
    held = " already holds a complete run"
    for ln in reversed(lines):
        if ln.startswith("wrote "):
            return pathlib.Path(ln[len("wrote ") :])
        if held in ln:
            return pathlib.Path(ln.split(held, 1)[0])
    raise CommandError(
        "trellis-lab run finished without saying which folder it wrote; is TRELLIS_LAB a "
        "trellis-lab executable of this version?",
        command,
        0,
        "\n".join(lines),
    )


def run(
    config: Union[str, "os.PathLike[str]"],
    *,
    force: bool = False,
    shard: Union[str, Tuple[int, int], None] = None,
    as_: FrameKind = "pandas",
    quiet: bool = False,
    executable: Union[str, "os.PathLike[str]", None] = None,
) -> Results:
    """Runs the TOML `config` with the `trellis-lab` command line (`trellis-lab run CONFIG`)
    and returns `read_results` of the folder it wrote: the config's `output_dir` (relative to
    the config's folder) joined with its `name`. A folder that already holds a complete run of
    the same config, program and inputs is read as it is unless `force=True` (`--force`).
    `shard` ("I/N" or (I, N)) computes part I of N of the jobs into `<name>.shard-I-of-N`
    (`--shard`). The command's messages are echoed to sys.stderr unless `quiet`.

    The executable is `executable`, else the TRELLIS_LAB environment variable, else
    `trellis-lab` on PATH (a FileNotFoundError says how to install it). A failed run raises
    CommandError with the command line's one-line error; Ctrl-C stops the command."""
    _converter(as_)  # a typo in as_ or a missing library is said before the run, not after
    exe = _executable(executable)
    cfg = pathlib.Path(config)
    if not cfg.is_file():
        raise FileNotFoundError(
            f"no config file at {cfg}: pass the path of a TOML config, e.g. configs/jets_smoke.toml"
        )
    command = [exe, "run", str(cfg)]
    if force:
        command.append("--force")
    if shard is not None:
        if isinstance(shard, tuple):
            shard = f"{shard[0]}/{shard[1]}"
        command += ["--shard", str(shard)]
    lines = _call(command, quiet)
    return read_results(_written(lines, command), as_)


def check(
    path: Union[str, "os.PathLike[str]"],
    *,
    as_: FrameKind = "pandas",
    quiet: bool = True,
    executable: Union[str, "os.PathLike[str]", None] = None,
) -> Results:
    """Checks the results folder `path` against the expected numbers of its experiment kind
    (`trellis-lab check PATH`, which writes checks.parquet) and returns `read_results(path)`,
    whose `checks` holds one row per number (observed, expected, tolerance, passed). A number
    out of tolerance raises CommandError with the command line's one-line error (the verdicts
    are still in checks.parquet: `read_results(path).checks`). The verdict lines are echoed to
    sys.stderr unless `quiet`; the executable is found as `run` finds it."""
    _converter(as_)
    exe = _executable(executable)
    folder = _folder(path)
    _call([exe, "check", str(folder)], quiet)
    return read_results(folder, as_)
