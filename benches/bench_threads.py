"""`depfs parse --threads 2` against `--threads 1`, whole processes (model load, streamed
read, parse and write), on en_ewt train repeated `--copies` times (default 5, 1.02M words).

Runs the two commands in turn `--runs` times (pairing keeps the ratio meaningful while the
shared machine's speed drifts), checks that both outputs are the same bytes, and prints
each side's median wall time and the median of the paired ratios.

    python -m benches.bench_threads --model MODEL [--copies 5] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .bench_arceager import data_dir


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--copies", type=int, default=5)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.conllu"
        train = (data_dir() / args.treebank / "train.conllu").read_bytes()
        big.write_bytes(train * args.copies)
        cmd = [sys.executable, "-m", "depfs", "parse", args.model, str(big)]
        one, two, ratios = [], [], []
        timed([*cmd, "-o", f"{tmp}/warm.conllu", "--threads", "1"])  # page cache, imports
        for _ in range(args.runs):
            two.append(timed([*cmd, "-o", f"{tmp}/t2.conllu", "--threads", "2"]))
            one.append(timed([*cmd, "-o", f"{tmp}/t1.conllu", "--threads", "1"]))
            ratios.append(one[-1] / two[-1])
        same = Path(f"{tmp}/t1.conllu").read_bytes() == Path(f"{tmp}/t2.conllu").read_bytes()
    print(f"{args.model}: {args.treebank} train x{args.copies}, {args.runs} paired runs")
    print(f"--threads 1: median {statistics.median(one):.2f} s wall")
    print(f"--threads 2: median {statistics.median(two):.2f} s wall")
    print(
        f"speed-up (median of paired ratios): {statistics.median(ratios):.2f}x; same bytes: {same}"
    )


if __name__ == "__main__":
    main()
