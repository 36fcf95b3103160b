"""The command line's results from Python: `run` runs a config through the `trellis-lab`
executable and reads the folder it wrote, `read_results` reads a folder into pandas, polars or
pyarrow frames (compared here with what pyarrow reads directly), `check` runs the check, and
every failure is a one-line error: no executable, a bad config, a missing folder, a missing
library."""

import csv
import json
import os
import pathlib
import subprocess
import sys

import pyarrow.parquet as pq
import pyarrow.types as pat
import pytest

import trellis_lab as tl

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def exe():
    exe = pathlib.Path(os.environ.get("TRELLIS_LAB", ROOT / "target" / "release" / "trellis-lab"))
    if not exe.is_file():
        pytest.fail(f"no trellis-lab binary at {exe}: cargo build --release, or set TRELLIS_LAB")
    return str(exe)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, exe):
    """configs/jets_smoke.toml (300 generated jets, seconds) copied into a temporary folder,
    its results going beside it, run once through `tl.run`."""
    tmp = tmp_path_factory.mktemp("run")
    text = (ROOT / "configs" / "jets_smoke.toml").read_text()
    assert 'output_dir = "../results"' in text
    cfg = tmp / "jets_smoke.toml"
    cfg.write_text(text.replace('output_dir = "../results"', 'output_dir = "out"'))
    res = tl.run(cfg, executable=exe, quiet=True)
    return cfg, res


def same_as_arrow(frame, table):
    """The pandas `frame` holds the pyarrow `table`: every integer column as pandas' nullable
    integer of its width and sign with the same values (a null as pd.NA), never float64, and
    every other column as pyarrow's to_pandas gives it."""
    pd = pytest.importorskip("pandas")
    ints = [f.name for f in table.schema if pat.is_integer(f.type)]
    for f in table.schema:
        if f.name in ints:
            sign = "UInt" if pat.is_unsigned_integer(f.type) else "Int"
            assert str(frame[f.name].dtype) == f"{sign}{f.type.bit_width}", f.name
            got = [None if v is pd.NA else int(v) for v in frame[f.name]]
            assert got == table.column(f.name).to_pylist(), f.name
    assert list(frame.columns) == table.column_names
    pd.testing.assert_frame_equal(frame.drop(columns=ints), table.drop_columns(ints).to_pandas())
    return ints


def test_run_reads_every_table_as_pyarrow_reads_it(smoke):
    pd = pytest.importorskip("pandas")
    cfg, res = smoke
    folder = cfg.parent / "out" / "jets_smoke"
    assert res.path.resolve() == folder.resolve()
    files = sorted(p.stem for p in folder.glob("*.parquet"))
    assert files == sorted(res.tables) and "jets" in files and "table1" in files
    for name, frame in res.tables.items():
        direct = pq.read_table(folder / f"{name}.parquet")
        assert isinstance(frame, pd.DataFrame)
        assert frame.shape == (direct.num_rows, direct.num_columns)
        same_as_arrow(frame, direct)
    assert res["jets"] is res.tables["jets"]
    with pytest.raises(KeyError, match="the tables are: jets, table1"):
        res["nope"]
    assert res.manifest == json.loads((folder / "manifest.json").read_text())
    assert res.manifest["seed"] == 101 and res.manifest["n_jets"] == 300
    # 300 jets x trellis, beam, greedy, sparse, truth.
    assert len(res.tables["jets"]) == 1500
    assert res.checks is None
    text = repr(res)
    assert "jets (1500 x" in text and "table1 (" in text and "not checked" in text


def test_arrow_and_polars_frames(smoke):
    cfg, res = smoke
    arrow = tl.read_results(res.path, as_="arrow")
    for name in res.tables:
        assert arrow.tables[name].equals(pq.read_table(res.path / f"{name}.parquet"))
    pl = pytest.importorskip("polars")
    frames = tl.read_results(res.path, as_="polars")
    for name, frame in frames.tables.items():
        assert isinstance(frame, pl.DataFrame)
        assert frame.equals(pl.from_arrow(pq.read_table(res.path / f"{name}.parquet")))


def test_a_seed_read_back_reruns_the_command_lines_tree(tmp_path, exe):
    # The board writes each job's 64-bit seed to trees.parquet, null for a method that did not
    # run (kt on points): pyarrow's to_pandas would make that column float64 and round every
    # seed. read_results keeps them exact, and MPOST2 and the DDT rerun from Python with them on
    # the columns the board feeds them (standardised) build the command line's trees.
    pd = pytest.importorskip("pandas")
    data = ROOT / "data" / "examples" / "points_labelled.csv"
    command = [exe, "cluster", str(data), "--label-column", "kind", "--methods", "mpost2,ddt,kt",
               "--seed", "8747788778420828063", "--output-dir", str(tmp_path)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    res = tl.read_results(tmp_path / "points_labelled")
    checked = set()
    for name, frame in res.tables.items():
        checked.update((name, c) for c in same_as_arrow(frame, pq.read_table(res.path / f"{name}.parquet")))
    assert {("trees", "seed"), ("board", "n"), ("leaves", "leaf")} <= checked
    trees = res.tables["trees"].set_index("method")
    assert str(trees["seed"].dtype) == "UInt64" and trees.loc["kt", "seed"] is pd.NA
    with open(data, newline="") as f:
        rows = list(csv.DictReader(f))
    x = [[float(r[k]) for k in r if k != "kind"] for r in rows]
    z = tl.standardize(x)
    for method, rerun in [
        ("mpost2", lambda seed: tl.coalescent(z, "mpost2", seed=seed).tree),
        ("ddt", lambda seed: tl.pydt_map(z, ddt=True, seed=seed).tree),
    ]:
        seed = int(trees.loc[method, "seed"])
        # A seed float64 cannot hold (the rounded one gives another tree).
        assert seed > 2**53 and int(float(seed)) != seed
        tree = rerun(seed)
        assert tree.newick() == trees.loc[method, "newick"], method
        assert rerun(int(float(seed))).newick() != tree.newick(), method
    # polars and pyarrow keep the exact integers too.
    arrow = tl.read_results(res.path, as_="arrow").tables["trees"]
    assert arrow.column("seed").to_pylist() == [None if v is pd.NA else int(v) for v in trees["seed"]]
    pl = pytest.importorskip("polars")
    frame = tl.read_results(res.path, as_="polars").tables["trees"]
    assert frame["seed"].dtype == pl.UInt64
    assert frame["seed"].to_list() == arrow.column("seed").to_pylist()


def test_second_run_reads_the_same_folder_and_force_recomputes(smoke, exe, capsys):
    cfg, res = smoke
    before = (res.path / "manifest.json").read_text()
    capsys.readouterr()
    # Not quiet: the command line's messages are echoed to sys.stderr.
    again = tl.run(cfg, executable=exe, as_="arrow")
    assert "already holds a complete run" in capsys.readouterr().err
    assert again.path == res.path and again.manifest == res.manifest
    assert (res.path / "manifest.json").read_text() == before
    forced = tl.run(str(cfg), force=True, executable=exe, as_="arrow")
    assert "\nwrote " in "\n" + capsys.readouterr().err
    # Recomputed: a new manifest (its timings), the same numbers.
    assert (res.path / "manifest.json").read_text() != before
    assert forced.manifest["run_hash"] == res.manifest["run_hash"]
    for name in res.tables:
        assert forced.tables[name].equals(pq.read_table(res.path / f"{name}.parquet"))


def test_check_reads_the_verdicts(smoke, exe):
    _, res = smoke
    checked = tl.check(res.path, executable=exe)
    direct = pq.read_table(res.path / "checks.parquet")
    assert checked.checks is not None and len(checked.checks) == direct.num_rows > 10
    same_as_arrow(checked.checks, direct)
    assert "checks" not in checked.tables
    assert bool(checked.checks["passed"].all())
    assert f"{direct.num_rows} rows: {direct.num_rows} passed, 0 failed" in repr(checked)


def test_run_finds_the_executable_by_environment_then_path(smoke, exe, monkeypatch):
    cfg, res = smoke
    monkeypatch.setenv("TRELLIS_LAB", exe)
    assert tl.run(cfg, quiet=True, as_="arrow").path == res.path
    monkeypatch.delenv("TRELLIS_LAB")
    monkeypatch.setenv("PATH", str(pathlib.Path(exe).parent) + os.pathsep + os.environ["PATH"])
    assert tl.run(cfg, quiet=True, as_="arrow").path == res.path


def test_missing_executable_says_how_to_install(smoke, tmp_path, monkeypatch):
    cfg, _ = smoke
    monkeypatch.delenv("TRELLIS_LAB", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError) as e:
        tl.run(cfg)
    msg = str(e.value)
    assert "no trellis-lab executable on PATH" in msg and "cargo install --locked --path ." in msg
    assert "\n" not in msg
    monkeypatch.setenv("TRELLIS_LAB", str(tmp_path / "nothing"))
    with pytest.raises(FileNotFoundError, match="TRELLIS_LAB = .*nothing.* is not an executable"):
        tl.check(smoke[1].path)
    with pytest.raises(FileNotFoundError, match="cargo install --locked --path ."):
        tl.run(cfg, executable=tmp_path / "nothing")


def test_bad_config_raises_the_command_lines_one_line_error(tmp_path, exe):
    bad = tmp_path / "bad.toml"
    bad.write_text('[experiment]\nname = "x"\nseed = 1\noutput_dir = "out"\nbogus = 3\n')
    with pytest.raises(tl.CommandError) as e:
        tl.run(bad, executable=exe, quiet=True)
    msg = str(e.value)
    assert "unknown field `bogus`" in msg and "\n" not in msg and not msg.startswith("error:")
    assert e.value.returncode == 1 and e.value.command[1:] == ["run", str(bad)]
    assert f"error: {msg}" in e.value.output
    assert not (tmp_path / "out").exists()
    with pytest.raises(FileNotFoundError, match="no config file at .*nothere.toml"):
        tl.run(tmp_path / "nothere.toml", executable=exe)
    # A usage error (exit 2) is one line too.
    with pytest.raises(tl.CommandError, match="--shard") as e:
        tl.run(bad, shard="x", executable=exe, quiet=True)
    assert e.value.returncode == 2 and "\n" not in str(e.value)


def test_missing_or_incomplete_folder(tmp_path, exe):
    with pytest.raises(FileNotFoundError, match="no results folder at .*nope: run a config"):
        tl.read_results(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="no results folder"):
        tl.check(tmp_path / "nope", executable=exe)
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "jets.parquet").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="has no manifest.json"):
        tl.read_results(tmp_path / "half")
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError, match="is a file, not a results folder"):
        tl.read_results(tmp_path / "file")


def test_unknown_frame_kind_and_missing_library(smoke, monkeypatch):
    _, res = smoke
    with pytest.raises(ValueError, match='as_ = .pandsa. is not known; use "pandas"'):
        tl.read_results(res.path, as_="pandsa")
    # A library that cannot be imported is named with its pip package, in one line.
    monkeypatch.setitem(sys.modules, "polars", None)
    with pytest.raises(ImportError, match=r'^as_="polars" needs polars: pip install polars$'):
        tl.read_results(res.path, as_="polars")
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match="needs pyarrow: pip install pyarrow$"):
        tl.read_results(res.path, as_="arrow")
