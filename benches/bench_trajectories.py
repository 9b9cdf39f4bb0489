"""Trajectories as move histories: size, and features of a template subset on demand.

Trains (or loads, `--model`) the arc-eager parser on en_ewt train, records the oracle
trajectories of every training sentence (`beta = 1`: every configuration the dynamic
oracle walks through, pseudo-projectivised as the parser trains), and replays them to
extract the features of random 7-template subsets of the default set — the access
pattern of the selection methods, which never store (n × all templates). Reports the
stored bytes, the decisions, and the median seconds per subset on one and two threads.

    python -m benches.bench_trajectories [--model PATH] [--subsets N] [--size K]

Prints a table and writes bench-results/trajectories.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

import depfs
from depfs.arceager import ArcEagerParser

from .bench_arceager import data_dir


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", type=Path, help="a trained arc-eager model (else train one)")
    ap.add_argument("--subsets", type=int, default=10)
    ap.add_argument("--size", type=int, default=7)
    args = ap.parse_args(argv)

    train = depfs.read_conllu(data_dir() / "en_ewt" / "train.conllu")
    if args.model:
        parser = depfs.load(args.model)
    else:
        parser = ArcEagerParser().fit(train)
    t0 = time.perf_counter()
    traj = parser.trajectories(train, beta=1.0)
    record_s = time.perf_counter() - t0
    templates = parser.templates_
    rng = random.Random(0)
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(args.subsets):
        subset = "\n".join(rng.sample(templates, args.size))
        for threads in times:
            t0 = time.perf_counter()
            feats = traj.features(subset, threads=threads)
            times[threads].append(time.perf_counter() - t0)
            assert feats.shape == (len(traj), args.size)
    row = {
        "decisions": len(traj),
        "stored_mb": traj.nbytes / 1e6,
        "record_seconds": record_s,
        "subset_size": args.size,
        "features_seconds_1_thread": statistics.median(times[1]),
        "features_seconds_2_threads": statistics.median(times[2]),
        "full_matrix_mb": len(traj) * len(templates) * 8 / 1e6,
    }
    for k, v in row.items():
        print(f"{k:28} {v:.3f}" if isinstance(v, float) else f"{k:28} {v}")
    out = Path("bench-results")
    out.mkdir(exist_ok=True)
    (out / "trajectories.json").write_text(json.dumps(row, indent=2) + "\n")


if __name__ == "__main__":
    main()
