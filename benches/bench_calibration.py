"""Are margins calibrated? Head error rate by margin decile on en_ewt test (or --treebank).

For each depfs parser (graph, arc-eager): trains it on train with its default settings
(dev: best epoch kept), or loads it from bench-results/ when a previous run left it
there (printed with the depfs version recorded in the file and its date); parses test
(gold tags) with ``scores=True``; sorts the words by margin (:func:`depfs.margins`) and
cuts them into ten groups of equal size (ties in input order). For each decile it prints
the margin range, the head error rate (words whose head is wrong, punctuation included, as
the one scorer counts UAS) and the labelled error rate (head or label wrong). The ratio
asked for in issue 17 is the head error rate of the lowest-margin 10% over the average head
error rate (target ≥ 3).

Writes docs/img/calibration_<treebank>.png (error rate per decile, both parsers) and
bench-results/calibration_<treebank>.json.

    python -m benches.bench_calibration [--treebank en_ewt] [--parsers graph,arc-eager]
"""

from __future__ import annotations

import argparse
import io
import json
import time
from pathlib import Path

import depfs
import numpy as np
import numpy.typing as npt
from depfs.files import write_bytes_atomic

from .bench_arceager import data_dir, model_stamp

OUT = Path("bench-results")
IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
DECILES = 10


def trained(kind: str, treebank: str, train: depfs.Treebank, dev: depfs.Treebank) -> object:
    path = OUT / f"calibration_{kind}_{treebank}.depfs"
    if path.exists():
        print(f"{kind}: using {model_stamp(path)} (delete it to retrain)")
        return depfs.load(path)
    t0 = time.perf_counter()
    parser = (depfs.GraphParser() if kind == "graph" else depfs.ArcEagerParser()).fit(train, dev)
    print(f"{kind}: trained in {time.perf_counter() - t0:.0f} s (epoch {parser.best_epoch_} kept)")
    OUT.mkdir(exist_ok=True)
    parser.save(path)
    return parser


def flat(tb: depfs.Treebank) -> tuple[npt.NDArray[np.int32], list[str]]:
    heads = np.concatenate([s.heads for s in tb]) if len(tb) else np.zeros(0, np.int32)
    labels = [d.split(":")[0] for s in tb for d in s.deprels]
    return heads, labels


def deciles(
    margin: npt.NDArray[np.float32], head_err: npt.NDArray[np.bool_], las_err: npt.NDArray[np.bool_]
) -> list[dict[str, float]]:
    """One row per margin decile, lowest margins first."""
    order = np.argsort(margin, kind="stable")
    rows = []
    for k, idx in enumerate(np.array_split(order, DECILES), 1):
        rows.append(
            {
                "decile": k,
                "words": int(len(idx)),
                "margin_lo": float(margin[idx].min()),
                "margin_hi": float(margin[idx].max()),
                "head_error": 100 * float(head_err[idx].mean()),
                "las_error": 100 * float(las_err[idx].mean()),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--parsers", default="graph,arc-eager")
    args = ap.parse_args(argv)
    d = data_dir() / args.treebank
    train, dev = depfs.read_conllu(d / "train.conllu"), depfs.read_conllu(d / "dev.conllu")
    test = depfs.read_conllu(d / "test.conllu")
    gold_heads, gold_labels = flat(test)
    results = {}
    for kind in args.parsers.split(","):
        parser = trained(kind, args.treebank, train, dev)
        parsed = parser.parse(test, 1, scores=True)
        margin = depfs.margins(parsed)
        assert np.isfinite(margin).all(), "every word has a finite margin"
        heads, labels = flat(parsed)
        head_err = heads != gold_heads
        las_err = head_err | (np.array(labels) != np.array(gold_labels))
        rows = deciles(margin, head_err, las_err)
        average = 100 * float(head_err.mean())
        ratio = rows[0]["head_error"] / average
        results[kind] = {
            "rows": rows,
            "head_error": average,
            "las_error": 100 * float(las_err.mean()),
            "ratio": ratio,
        }
        print(f"\n{kind} parser, {args.treebank} test ({len(margin)} words, gold tags)")
        print(f"{'decile':>6} {'margin from':>12} {'to':>10} {'head err %':>11} {'LAS err %':>10}")
        for r in rows:
            print(
                f"{r['decile']:>6} {r['margin_lo']:>12.3f} {r['margin_hi']:>10.3f}"
                f" {r['head_error']:>11.2f} {r['las_error']:>10.2f}"
            )
        print(f"{'all':>6} {'':>12} {'':>10} {average:>11.2f} {results[kind]['las_error']:>10.2f}")
        print(
            f"lowest-margin 10%: head error {rows[0]['head_error']:.2f}% = {ratio:.2f}x the "
            f"average {average:.2f}% (target >= 3x)"
        )
        # Words attached with no rival move (arc-eager: a forced move) get margin 0 and
        # sort among the least confident: how they err, and the ratio without them.
        zero = margin == 0
        order = np.argsort(margin[~zero], kind="stable")
        order = order[: len(order) // DECILES]
        ratio_rest = float(head_err[~zero][order].mean()) * 100 / average
        results[kind]["zero_margin"] = {
            "words": int(zero.sum()),
            "head_error": 100 * float(head_err[zero].mean()) if zero.any() else None,
            "ratio_without": ratio_rest,
        }
        if zero.any():
            print(
                f"margin exactly 0: {zero.sum()} words, head error "
                f"{100 * head_err[zero].mean():.2f}%; without them the lowest 10% hold "
                f"{ratio_rest:.2f}x the average"
            )
    plot(results, args.treebank)
    OUT.mkdir(exist_ok=True)
    (OUT / f"calibration_{args.treebank}.json").write_text(json.dumps(results, indent=1))


def plot(results: dict[str, dict], treebank: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
    x = np.arange(1, DECILES + 1)
    for (kind, r), marker in zip(results.items(), "os"):
        errors = [row["head_error"] for row in r["rows"]]
        ax.plot(x, errors, marker=marker, label=f"{kind} (lowest 10%: {r['ratio']:.1f}x average)")
        ax.axhline(r["head_error"], linestyle=":", linewidth=1, color=ax.lines[-1].get_color())
    ax.set_xticks(x)
    ax.set_xlabel("margin decile (1 = lowest margins)")
    ax.set_ylabel("head error rate (%)")
    ax.set_title(f"depfs margins on {treebank} test (dotted: average)")
    ax.legend(frameon=False)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    IMG.mkdir(parents=True, exist_ok=True)
    path = IMG / f"calibration_{treebank}.png"
    write_bytes_atomic(path, buf.getvalue())
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
