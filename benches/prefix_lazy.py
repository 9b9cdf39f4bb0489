"""Parses a treebank with a kept dynamic arc-eager model at given prefix margins: the
command to run under ``valgrind --tool=callgrind`` to count the lazy path's instructions
(the parse loop alone with ``--toggle-collect='*parse_with*'``), and a digest of the
parses (its CoNLL-U bytes) to check that two builds parse byte for byte the same.

    python -m benches.prefix_lazy MODEL TEST [--margins 30,40,50] [--times 1] [--mean]

Prints, per margin, the digest, LAS, the best CPU time of the --times parses (one
thread; with --mean their mean, after one untimed parse: the steady state of a process
that parses on) and with --counts templates per move and per label decision.
"""

from __future__ import annotations

import argparse
import hashlib
import time

import depfs
from depfs.arceager import ArcEagerParser
from depfs.dynamic.strubell2015 import margin_point


def digest(parsed: depfs.Treebank) -> str:
    """SHA-256 of the parsed CoNLL-U, byte for byte."""
    return hashlib.sha256(parsed.to_bytes()).hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("test")
    ap.add_argument("--margins", default="30,40,50", help="numbers, inf, or none (no rule)")
    ap.add_argument("--times", type=int, default=1)
    ap.add_argument("--counts", action="store_true", help="also print templates per decision")
    ap.add_argument("--mean", action="store_true", help="mean CPU time after an untimed parse")
    args = ap.parse_args()
    parser = ArcEagerParser.load(args.model)
    test = depfs.read_conllu(args.test)
    for m in (None if x == "none" else float(x) for x in args.margins.split(",")):
        best, total = float("inf"), 0.0
        if args.mean:
            parser.parse(test, 1, margin=m)
        for _ in range(args.times):
            t0 = time.process_time()
            parsed = parser.parse(test, 1, margin=m)
            best = min(best, time.process_time() - t0)
            total += time.process_time() - t0
        best = total / args.times if args.mean else best
        s = depfs.evaluate(test, parsed)
        what = "mean" if args.mean else "best"
        line = f"m={m} digest {digest(parsed)} LAS {s.las:.2f} {what} CPU {best:.4f} s"
        if args.counts and m is not None:
            c = margin_point(parser.model_, test, m)
            line += f" tmpl/move {c.move_templates:.2f} tmpl/label {c.label_templates:.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
