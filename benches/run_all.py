"""Runs every Python end-to-end bench (`benches/bench_*.py`) in turn; each prints its table
and writes JSON to bench-results/. Usage: python -m benches.run_all [NAME ...]

A bench that needs an argument with no sensible default gets one here (ARGS) or is skipped
with the reason printed (SKIP); a failing bench is reported and the others still run (the
exit status is then 1)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import traceback
from pathlib import Path
from unittest import mock

#: Arguments given to a bench whose positional argument has no default.
ARGS = {"bench_select": ["throughput"]}
#: Benches that time a model given on the command line: run them by hand with it.
SKIP = {
    "bench_huge_pages": "needs MODEL [MODEL ...] (trained model files)",
    "bench_long_sentence": "needs --model MODEL (a trained graph or arc-eager model)",
    "bench_threads": "needs --model MODEL (a trained graph or arc-eager model)",
    "bench_tagger_builds": "needs --base DIR (another build's python folder) and saved taggers",
}


def run(name: str, args: list[str]) -> None:
    """`benches.NAME.main(args)`; a main that takes no arguments reads them from sys.argv."""
    main = importlib.import_module(f"benches.{name}").main
    if inspect.signature(main).parameters:
        main(args)
    else:
        with mock.patch.object(sys, "argv", [name, *args]):
            main()


def main(names: list[str]) -> int:
    here = Path(__file__).parent
    found = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    if any(n in ("-h", "--help") for n in names):
        print(__doc__)
        print(f"\nbenches: {' '.join(n.removeprefix('bench_') for n in found)}")
        return 0
    known = {n.removeprefix("bench_") for n in found}
    unknown = [n for n in names if n.removeprefix("bench_") not in known]
    if unknown:
        print(
            f"run_all: no bench named {', '.join(unknown)} (benches: {' '.join(sorted(known))})",
            file=sys.stderr,
        )
        return 2
    chosen = [n for n in found if not names or n.removeprefix("bench_") in names]
    failed = []
    for name in chosen:
        if name in SKIP:
            print(f"== {name}: skipped, {SKIP[name]}", flush=True)
            continue
        args = ARGS.get(name, [])
        print(f"== {name} {' '.join(args)}".rstrip(), flush=True)
        try:
            # Each bench with its defaults, not run_all's own argv.
            run(name, args)
        except (Exception, SystemExit):  # argparse exits; keep going with the others
            traceback.print_exc()
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
