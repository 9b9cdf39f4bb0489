import subprocess
import sys

import depfs


def test_version_matches_cli():
    out = subprocess.run(
        [sys.executable, "-m", "depfs.cli", "--version"], capture_output=True, text=True, check=True
    )
    assert depfs.__version__ in out.stdout
    assert out.stdout.startswith("depfs")
