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
