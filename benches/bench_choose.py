"""The README's "Which parser should I use" table: each depfs parser on en_ewt and pt_bosque.

For each treebank and parser, as a user runs it: `depfs train` on train with --dev (default
epochs, the best dev epoch kept) in a child process (wall time, CPU time, peak RSS), then
`depfs parse MODEL TEST --threads 1 -o OUT` on test with HEAD/DEPREL blanked, file to file
(--reps runs: median wall time, peak RSS), scored against test (gold tokens and tags,
punctuation included, universal labels), then the in-process speed: the model loaded once and
`parse(test, threads=1)` timed --reps times (median words/s). Peak RSS is the child's own
(`/usr/bin/time`), so each figure is that one process's. Sizes are in MiB (2^20 bytes): peak
RSS is /usr/bin/time's KiB / 1024, the model its file size / 2^20. Each row also gives the
epoch `depfs train` kept (best on dev).

With `--models DIR` the models and their training figures are kept in DIR (outside the
repository), and a later run with the same DIR times the kept models again without training:
train while the machine is busy, time its speeds when it is quiet. A kept model is printed
with the depfs version recorded in it and its file's date, since it may be an older build's.

    python -m benches.bench_choose [--treebanks en_ewt pt_bosque]
                                   [--parsers arc-eager graph1 graph2] [--reps N] [--models DIR]

Prints a Markdown table and writes bench-results/choose.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import depfs
from depfs.files import write_text_atomic
from depfs.models import model_info

from benches.bench_arceager import blank, child, data_dir, model_stamp

PARSERS = {
    "arc-eager": ["--parser", "arc-eager"],
    "graph1": ["--parser", "graph", "--order", "1"],
    "graph2": ["--parser", "graph", "--order", "2"],
}
NAMES = {
    "arc-eager": "arc-eager",
    "graph1": "graph, first order",
    "graph2": "graph, second order",
}


def run(args: list[str]) -> dict[str, float]:
    """`python -m depfs.cli ARGS` as a whole process: wall s, CPU s, peak RSS MiB."""
    return child([sys.executable, "-m", "depfs.cli", *args])


def trained(treebank: str, parser: str, models: Path) -> tuple[Path, dict[str, float]]:
    """The model of (treebank, parser) in `models` and its training figures; trained when absent."""
    d = data_dir() / treebank
    model = models / f"{treebank}.{parser}.depfs"
    figures = models / f"{treebank}.{parser}.train.json"
    if model.exists() and figures.exists():
        print(f"kept model {model_stamp(model)}", flush=True)
        return model, json.loads(figures.read_text(encoding="utf-8"))
    train = run(
        [
            "train",
            *PARSERS[parser],
            "--train",
            str(d / "train.conllu"),
            "--dev",
            str(d / "dev.conllu"),
            "--out",
            str(model),
        ]
    )
    # Atomic: a run killed here must not leave a model beside half its figures.
    write_text_atomic(figures, json.dumps(train) + "\n")
    return model, train


def bench(treebank: str, parser: str, reps: int, tmp: Path, models: Path) -> dict[str, object]:
    d = data_dir() / treebank
    test_text = (d / "test.conllu").read_text(encoding="utf-8")
    gold = depfs.Treebank.from_string(test_text)
    test_blank = tmp / f"{treebank}.test.blank.conllu"
    test_blank.write_text(blank(test_text), encoding="utf-8")
    out = tmp / f"{treebank}.{parser}.conllu"
    model, train = trained(treebank, parser, models)
    parses = [
        run(["parse", str(model), str(test_blank), "--threads", "1", "-o", str(out)])
        for _ in range(reps)
    ]
    scores = depfs.evaluate(gold, depfs.read_conllu(out))
    loaded = depfs.load(model)
    test_input = depfs.read_conllu(test_blank)
    loaded.parse(test_input, threads=1)  # warm-up
    walls, cpus = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        loaded.parse(test_input, threads=1)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    words = gold.n_words
    file_walls = [p["wall_s"] for p in parses]
    return {
        "treebank": treebank,
        "parser": parser,
        "uas": round(scores.uas, 2),
        "las": round(scores.las, 2),
        "words": words,
        "words_per_s": round(words / statistics.median(walls)),
        "words_per_s_range": [round(words / max(walls)), round(words / min(walls))],
        "words_per_cpu_s": round(words / statistics.median(cpus)),
        "file_to_file_s": round(statistics.median(file_walls), 2),
        "file_to_file_s_range": [round(min(file_walls), 2), round(max(file_walls), 2)],
        "parse_peak_rss_mib": round(max(p["peak_rss_mb"] for p in parses)),
        "train_wall_s": round(train["wall_s"], 1),
        "train_cpu_s": round(train["cpu_s"], 1),
        "train_peak_rss_mib": round(train["peak_rss_mb"]),
        "model_mib": round(model.stat().st_size / 2**20, 1),
        "best_epoch": model_info(model)["training"].get("best_epoch"),
    }


def table(rows: list[dict[str, object]]) -> str:
    lines = [
        "| treebank | parser | UAS | LAS | words/s (1 thread, median) | words/CPU-s "
        "| file to file s | parse peak RSS MiB | training wall s (CPU s) "
        "| training peak RSS MiB | model MiB | epoch kept |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['treebank']} | {NAMES[str(r['parser'])]} | {r['uas']:.2f} | {r['las']:.2f} "
            f"| {r['words_per_s']:,} | {r['words_per_cpu_s']:,} | {r['file_to_file_s']:.2f} "
            f"| {r['parse_peak_rss_mib']:,} "
            f"| {r['train_wall_s']:.0f} ({r['train_cpu_s']:.0f}) | {r['train_peak_rss_mib']:,} "
            f"| {r['model_mib']} | {r['best_epoch']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--treebanks", nargs="+", default=["en_ewt", "pt_bosque"])
    ap.add_argument("--parsers", nargs="+", choices=list(PARSERS), default=list(PARSERS))
    ap.add_argument("--reps", type=int, default=5, help="parses timed (medians reported)")
    ap.add_argument("--models", type=Path, help="keep (and reuse) models and training figures here")
    args = ap.parse_args(argv)
    missing = [t for t in args.treebanks if not (data_dir() / t / "train.conllu").exists()]
    if missing:
        print(f"skipped: {', '.join(missing)} not found under {data_dir()} (set DEPFS_DATA)")
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        models = args.models or Path(tmp)
        models.mkdir(parents=True, exist_ok=True)
        for treebank in args.treebanks:
            for parser in args.parsers:
                row = bench(treebank, parser, args.reps, Path(tmp), models)
                print(json.dumps(row), flush=True)
                rows.append(row)
    print(table(rows))
    out = Path("bench-results")
    out.mkdir(exist_ok=True)
    (out / "choose.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
