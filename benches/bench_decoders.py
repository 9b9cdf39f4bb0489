"""Decoders from Python: depfs vs the tools people use today, in the same run.

- ``depfs.decode.cle`` (single root, exact) vs ``ufal.chu_liu_edmonds`` (no single-root
  constraint, so it is compared with ``cle(single_root=False)`` for agreement).
- ``depfs.decode.eisner`` vs a vectorised numpy Eisner written here (one numpy pass per span
  width, the usual way to write it in Python), checked to return the same trees.

Per-sentence times over batches of random dense matrices (standard normal scores), for
n = 25, 50 and 100 words; the growth from 50 to 100 words shows the O(n²) / O(n³) scaling.
Every timing, the numpy Eisner's included, is the best of ``--repeat`` runs (CPU time;
``--numpy-repeat`` times the numpy Eisner differently, e.g. 1 for a quick run).
Run ``python -m benches.bench_decoders [--sentences 1000]``; writes bench-results/decoders.json.

``--cle-batch`` runs only the batch comparison: ``decode.cle_batch`` (one call, threads=1) vs
a loop of ``decode.cle`` vs ``ufal.chu_liu_edmonds`` on the same matrices, in ms per 1,000
matrices, the three timed in turn within each round (so a shared machine's load falls on
all three), best round kept; it prints the ratios and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from depfs import decode

NEG = -np.inf


def numpy_eisner(scores: np.ndarray, single_root: bool = True) -> np.ndarray:
    """First-order Eisner with one vectorised numpy pass per span width, then a backtrack."""
    n1 = scores.shape[0]
    cr = np.full((n1, n1), NEG)
    cl = np.full((n1, n1), NEG)
    ir = np.full((n1, n1), NEG)
    il = np.full((n1, n1), NEG)
    bcr = np.zeros((n1, n1), dtype=np.int64)
    bcl = np.zeros((n1, n1), dtype=np.int64)
    bi = np.zeros((n1, n1), dtype=np.int64)
    idx = np.arange(n1)
    cr[idx, idx] = 0.0
    cl[idx, idx] = 0.0
    for w in range(1, n1):
        s = np.arange(n1 - w)
        t = s + w
        r = s[:, None] + np.arange(w)[None, :]  # split points s <= r < t
        join = cr[s[:, None], r] + cl[r + 1, t[:, None]]
        if single_root:
            join[0, 1:] = NEG  # ROOT's only child: built from the empty span at ROOT
        arg = join.argmax(axis=1)
        best = join[s, arg]
        bi[s, t] = s + arg
        ir[s, t] = best + scores[t, s]
        il[s, t] = best + scores[s, t]
        il[0, w] = NEG  # ROOT is never a dependent
        right = ir[s[:, None], r + 1] + cr[r + 1, t[:, None]]  # s < r' <= t
        arg = right.argmax(axis=1)
        cr[s, t] = right[s, arg]
        bcr[s, t] = s + 1 + arg
        left = cl[s[:, None], r] + il[r, t[:, None]]  # s <= r < t
        arg = left.argmax(axis=1)
        cl[s, t] = left[s, arg]
        bcl[s, t] = s + arg
        cl[0, w] = NEG
    heads = np.full(n1, -1, dtype=np.int64)
    stack = [(0, 0, n1 - 1)]  # (kind, s, t): 0 = C right, 1 = C left, 2 = I right, 3 = I left
    while stack:
        kind, s_, t_ = stack.pop()
        if s_ == t_:
            continue
        if kind == 0:
            m = bcr[s_, t_]
            stack += [(2, s_, m), (0, m, t_)]
        elif kind == 1:
            m = bcl[s_, t_]
            stack += [(1, s_, m), (3, m, t_)]
        else:
            if kind == 2:
                heads[t_] = s_
            else:
                heads[s_] = t_
            m = bi[s_, t_]
            stack += [(0, s_, m), (1, m + 1, t_)]
    return heads


def per_sentence(
    fn: Callable[[list[np.ndarray]], Any], mats: list[np.ndarray], repeat: int
) -> float:
    """Best of `repeat` runs of fn(mats), in µs of CPU time per sentence.

    CPU time of this process (time.process_time), not wall time: the benches run on a machine
    shared with other jobs, and every decoder here is single-threaded.
    """
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn(mats)
        best = min(best, time.process_time() - start)
    return best / len(mats) * 1e6


def cle_batch_rows(sizes: list[int], sentences: int, repeat: int) -> list[dict[str, Any]]:
    """ms per 1,000 matrices of the batch call, the single-call loop and ufal, and ratios."""
    from ufal.chu_liu_edmonds import chu_liu_edmonds

    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        mats = [rng.normal(size=(n + 1, n + 1)) for _ in range(sentences)]
        runs: dict[str, Callable[[list[np.ndarray]], Any]] = {
            "batch": lambda ms: decode.cle_batch(ms, threads=1),
            "single": lambda ms: [decode.cle(m) for m in ms],
            "ufal": lambda ms: [chu_liu_edmonds(m) for m in ms],
        }
        batch, single = runs["batch"](mats), runs["single"](mats)
        assert [h.tolist() for h in batch] == [h.tolist() for h in single], "batch != single"
        best = dict.fromkeys(runs, float("inf"))
        for _ in range(repeat):
            for key, run in runs.items():
                start = time.process_time()
                run(mats)
                best[key] = min(best[key], time.process_time() - start)
        row: dict[str, Any] = {"n": n, "sentences": sentences}
        row.update({f"{k}_ms_per_1000": v / sentences * 1e6 for k, v in best.items()})
        row["batch_over_single"] = best["batch"] / best["single"]
        row["ufal_over_batch"] = best["ufal"] / best["batch"]
        rows.append(row)
    return rows


def print_cle_batch(rows: list[dict[str, Any]]) -> None:
    print("ms per 1,000 matrices (CPU time, best round), threads=1")
    print(
        f"{'n':>4} {'batch':>8} {'single':>8} {'ufal':>8} {'batch/single':>13} {'ufal/batch':>11}"
    )
    for r in rows:
        print(
            f"{r['n']:>4} {r['batch_ms_per_1000']:>8.2f} {r['single_ms_per_1000']:>8.2f}"
            f" {r['ufal_ms_per_1000']:>8.2f} {r['batch_over_single']:>13.2f}"
            f" {r['ufal_over_batch']:>11.2f}"
        )


def tree_score(scores: np.ndarray, heads: np.ndarray) -> float:
    return float(scores[np.arange(1, len(heads)), heads[1:]].sum())


def bench(
    sizes: list[int], sentences: int, numpy_sentences: int, repeat: int, numpy_repeat: int
) -> dict[str, Any]:
    from ufal.chu_liu_edmonds import chu_liu_edmonds

    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        mats = [rng.normal(size=(n + 1, n + 1)) for _ in range(sentences)]
        few = mats[:numpy_sentences]
        # Agreement first: same trees (random reals have no ties).
        for m in few:
            ufal_heads, _ = chu_liu_edmonds(m)
            ours = decode.cle(m, single_root=False)
            assert abs(tree_score(m, np.array(ufal_heads)) - tree_score(m, ours)) < 1e-9
            assert decode.eisner(m).tolist() == numpy_eisner(m).tolist()
        row = {
            "n": n,
            "sentences": sentences,
            "cle_us": per_sentence(lambda ms: [decode.cle(m) for m in ms], mats, repeat),
            "cle_multi_root_us": per_sentence(
                lambda ms: [decode.cle(m, single_root=False) for m in ms], mats, repeat
            ),
            "cle_batch_us": per_sentence(lambda ms: decode.cle_batch(ms, threads=1), mats, repeat),
            "ufal_cle_us": per_sentence(lambda ms: [chu_liu_edmonds(m) for m in ms], mats, repeat),
            "eisner_us": per_sentence(lambda ms: [decode.eisner(m) for m in ms], mats, repeat),
            "eisner_batch_us": per_sentence(
                lambda ms: decode.eisner_batch(ms, threads=1), mats, repeat
            ),
            "numpy_eisner_sentences": len(few),
            "numpy_eisner_us": per_sentence(
                lambda ms: [numpy_eisner(m) for m in ms], few, numpy_repeat
            ),
        }
        row["cle_speedup_vs_ufal"] = row["ufal_cle_us"] / row["cle_us"]
        row["cle_batch_speedup_vs_ufal"] = row["ufal_cle_us"] / row["cle_batch_us"]
        row["eisner_speedup_vs_numpy"] = row["numpy_eisner_us"] / row["eisner_us"]
        rows.append(row)
        print(f"n={n}: done", flush=True)
    growth = {}
    by_n = {r["n"]: r for r in rows}
    if 50 in by_n and 100 in by_n:
        for key in ("cle_us", "ufal_cle_us", "eisner_us", "numpy_eisner_us"):
            growth[key] = by_n[100][key] / by_n[50][key]
    return {
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count()},
        "repeat": repeat,
        "numpy_repeat": numpy_repeat,
        "rows": rows,
        "growth_50_to_100": growth,
    }


def print_table(result: dict[str, Any]) -> None:
    head = (
        f"{'n':>4} {'cle':>8} {'cle_batch':>10} {'ufal':>8} {'x ufal':>7} "
        f"{'eisner':>8} {'eis_batch':>10} {'numpy':>10} {'x numpy':>8}"
    )
    print(
        f"µs per sentence (CPU time, best of {result['repeat']} runs; numpy Eisner best of "
        f"{result['numpy_repeat']}); x = speedup of the per-call depfs function"
    )
    print(head)
    for r in result["rows"]:
        print(
            f"{r['n']:>4} {r['cle_us']:>8.1f} {r['cle_batch_us']:>10.1f} {r['ufal_cle_us']:>8.1f}"
            f" {r['cle_speedup_vs_ufal']:>7.1f} {r['eisner_us']:>8.1f}"
            f" {r['eisner_batch_us']:>10.1f} {r['numpy_eisner_us']:>10.1f}"
            f" {r['eisner_speedup_vs_numpy']:>8.1f}"
        )
    for key, value in result["growth_50_to_100"].items():
        print(f"growth 50 -> 100 words, {key}: {value:.2f}x")


def write_json(result: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(result, f, indent=2)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--numpy-sentences", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--numpy-repeat", type=int, default=None, help="runs of the numpy Eisner [--repeat]"
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[25, 50, 100])
    parser.add_argument("--out", type=Path, default=Path("bench-results/decoders.json"))
    parser.add_argument("--cle-batch", action="store_true", help="only the batch comparison")
    args = parser.parse_args(argv)
    if args.cle_batch:
        print_cle_batch(cle_batch_rows(args.sizes, args.sentences, args.repeat))
        return
    result = bench(
        args.sizes,
        args.sentences,
        min(args.numpy_sentences, args.sentences),
        args.repeat,
        args.repeat if args.numpy_repeat is None else args.numpy_repeat,
    )
    print_table(result)
    write_json(result, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
