"""Runs every Python end-to-end bench (`benches/bench_*.py`) in turn; each prints its table
and writes JSON to bench-results/. Usage: python -m benches.run_all [NAME ...]"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main(names: list[str]) -> int:
    here = Path(__file__).parent
    found = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    chosen = [n for n in found if not names or n.removeprefix("bench_") in names]
    for name in chosen:
        print(f"== {name}", flush=True)
        # Each bench with its defaults: an empty argument list, not run_all's own argv.
        importlib.import_module(f"benches.{name}").main([])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
