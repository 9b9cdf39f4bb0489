"""A prepared training set: what setting up an arc-eager trainer costs with and without it.

On en_ewt train: a trainer built from the treebank (projectivisation, labels, gold
trees, vocabulary hashes, distinct-feature counts for block sizing), then a
`TrainingSet` built once and trainers on it for the default set, the same set again,
and a 20-template subset (the selection methods' pattern: many models, one treebank).

    python -m benches.bench_training_set

Prints seconds per step (median of --reps) and writes bench-results/training_set.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import depfs
from depfs import _core
from depfs.arceager import TrainingSet
from depfs.templates import resolve_templates

from .bench_arceager import data_dir


def seconds(f: Callable[[], Any], reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    train = depfs.read_conllu(data_dir() / "en_ewt" / "train.conllu")
    full = resolve_templates("arc_eager")
    subset = "\n".join(full.splitlines()[:20])
    out = {"from_treebank": seconds(lambda: _core.ArcEagerTrainer(train, full), args.reps)}
    out["training_set"] = seconds(lambda: TrainingSet(train), args.reps)
    prepared = TrainingSet(train)
    out["first_model_on_set"] = seconds(lambda: _core.ArcEagerTrainer(prepared, full), 1)
    out["same_templates_again"] = seconds(lambda: _core.ArcEagerTrainer(prepared, full), args.reps)
    out["subset_of_20"] = seconds(lambda: _core.ArcEagerTrainer(prepared, subset), args.reps)
    for k, v in out.items():
        print(f"{k:24s} {v:8.3f} s")
    Path("bench-results").mkdir(exist_ok=True)
    Path("bench-results/training_set.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
