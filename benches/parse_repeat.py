"""Loads a model, reads a treebank and parses it --times times in one process: a whole
process to time from outside, against the same with another --mode (the parse-only time
is a run's time minus that of --times 0, which only loads and reads).

    python -m benches.parse_repeat MODEL TEST [--mode dynfs|full|plain|THRESHOLD] [--times 6]

--mode dynfs: a DynFS model's policy at its own threshold; full: the full model
(``dynfs=False``); a number: the policy at that threshold; plain: ``parse(test, threads=1)``
with no DynFS argument, for any model (arc-eager too): the command to run under
``perf record -g`` or ``valgrind --tool=callgrind``.
"""

from __future__ import annotations

import argparse

import depfs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("test")
    ap.add_argument("--mode", default="dynfs")
    ap.add_argument("--times", type=int, default=6)
    args = ap.parse_args()
    parser = depfs.load(args.model)
    test = depfs.read_conllu(args.test)
    kw: dict[str, object] = {}
    if args.mode == "plain":
        kw = {"threads": 1}
    elif args.mode == "full":
        kw = {"dynfs": False}
    elif args.mode != "dynfs":
        kw = {"threshold": float(args.mode)}
    for _ in range(args.times):
        parser.parse(test, **kw)


if __name__ == "__main__":
    main()
