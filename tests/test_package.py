import subprocess
import sys

import depfs


def test_version_matches_cli():
    out = subprocess.run(
        [sys.executable, "-m", "depfs.cli", "--version"], capture_output=True, text=True, check=True
    )
    assert depfs.__version__ in out.stdout
    assert out.stdout.startswith("depfs")


def test_parsers_and_loader_are_top_level():
    # The issues promise depfs.GraphParser, depfs.ArcEagerParser and depfs.load.
    from depfs.arceager import ArcEagerParser
    from depfs.graph import GraphParser

    assert depfs.ArcEagerParser is ArcEagerParser
    assert depfs.GraphParser is GraphParser
    assert callable(depfs.load)


def test_the_demo_runs_on_synthetic_data_and_shows_the_margin_knob() -> None:
    import os

    env = {**os.environ, "DEPFS_DATA": "/nonexistent"}
    r = subprocess.run(
        [sys.executable, "-m", "depfs.demo"], capture_output=True, text=True, env=env, check=False
    )
    assert r.returncode == 0, r.stderr
    assert "synthetic grammar" in r.stdout
    rows = [
        line.split()
        for line in r.stdout.splitlines()
        if line.strip().startswith(("fast", "accurate", "inf"))
    ]
    assert [row[0] for row in rows] == ["fast", "accurate", "inf"], r.stdout
    las = {row[0]: float(row[2]) for row in rows}
    assert min(las.values()) > 90.0, r.stdout
