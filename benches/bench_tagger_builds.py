"""Two builds of depfs tagging the same saved taggers: paired CPU time and equal output.

Tags en_ewt test (LEMMA, UPOS, XPOS and FEATS blanked, one thread) with each saved model,
in alternating processes of the two builds (A B, B A, ...: one process per build and
round, each tagging every model --reps times in alternating order); prints each model's
tokens per CPU second (median over rounds of each process's median), the median of the
paired per-round ratios of CPU time (A / B), the time ratio of two models within each
build (--pair), and whether both builds wrote the same CoNLL-U for every model.

    python -m benches.bench_tagger_builds --base DIR [--new DIR] [--models DIR]
        [--clusters FILE] [--rounds 10] [--reps 5] [--pair full fixed1] [--dynamic DIR]

A build is a directory holding a `depfs` package with its built `_core.abi3.so` (copy a
checkout's `python/` before rebuilding to keep it; --new defaults to this checkout's).
The models (saved in --models, trained there when missing, with the build this runs
on): `default` (`Tagger()`), `clusters` (`Tagger(clusters=FILE)`, with --clusters),
`full` (`Tagger("tagger_en_ewt")`: the 50 templates of the prefix-margin tagger's order,
for every column) and `fixed1` (its first template alone). --dynamic DIR adds the taggers
`python -m benches.bench_dynamic --parser tagger --models DIR` kept there: `dyn-full`,
`dyn-fixed1`, and the prefix-margin tagger at its presets, `dyn-accurate` and `dyn-fast`
(`--pair dyn-full dyn-accurate` gives its speed-up within each build).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import depfs
from depfs import Tagger, Treebank

from .bench_arceager import data_dir
from .bench_tagger import blank_tags


def train(models: Path, clusters: str | None) -> list[str]:
    """The models' names, each trained and saved unless its file exists."""
    from depfs.templates import TemplateSet

    d = data_dir() / "en_ewt"
    order = TemplateSet.load("tagger_en_ewt")
    makers = {
        "default": lambda: Tagger(),
        "full": lambda: Tagger(order),
        "fixed1": lambda: Tagger(order[:1]),
    }
    if clusters:
        makers["clusters"] = lambda: Tagger(clusters=clusters)
    models.mkdir(parents=True, exist_ok=True)
    data = None
    for name, make in makers.items():
        path = models / f"{name}.depfs"
        if not path.exists():
            if data is None:
                data = depfs.read_conllu(d / "train.conllu"), depfs.read_conllu(d / "dev.conllu")
            make().fit(data[0], dev=data[1]).save(path)
            print(f"trained {name} -> {path}", flush=True)
    return list(makers)


#: The --dynamic taggers: name -> (file in DIR, margin).
DYNAMIC = {
    "dyn-full": ("full", None),
    "dyn-fixed1": ("fixed1", None),
    "dyn-accurate": ("dynamic", "accurate"),
    "dyn-fast": ("dynamic", "fast"),
}


def child(models: Path, names: list[str], reps: int, out: Path, dynamic: Path | None) -> None:
    """One process of one build: CPU seconds of each tagging, as JSON on stdout; the
    tagged text of each model into `out`."""
    blank = Treebank.from_string(blank_tags((data_dir() / "en_ewt" / "test.conllu").read_text()))
    loaded, margins = {}, {}
    for n in names:
        if n in DYNAMIC and dynamic is not None:
            loaded[n], margins[n] = depfs.load(dynamic / f"{DYNAMIC[n][0]}.tagger"), DYNAMIC[n][1]
        else:
            loaded[n], margins[n] = depfs.load(models / f"{n}.depfs"), None
    for n, m in loaded.items():
        (out / f"{n}.conllu").write_text(m.tag(blank, threads=1, margin=margins[n]).to_string())
    secs: dict[str, list[float]] = {n: [] for n in names}
    for r in range(reps):
        for n in names if r % 2 == 0 else names[::-1]:
            c0 = time.process_time()
            loaded[n].tag(blank, threads=1, margin=margins[n])
            secs[n].append(time.process_time() - c0)
    print(json.dumps({"words": blank.n_words, "secs": secs}))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="build A: a directory holding depfs/")
    ap.add_argument("--new", default=str(Path(__file__).parents[1] / "python"), help="build B")
    ap.add_argument("--models", default="bench-results/tagger_builds")
    ap.add_argument("--clusters", default=None, help="a Brown-cluster paths file")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--pair", nargs=2, default=("full", "fixed1"), help="two models to compare")
    ap.add_argument("--dynamic", default=None, help="bench_dynamic's --models DIR (tagger)")
    ap.add_argument("--child", nargs="*", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    models = Path(args.models)
    dynamic = Path(args.dynamic) if args.dynamic else None
    if args.child is not None:
        child(models, args.child[1:], args.reps, Path(args.child[0]), dynamic)
        return
    names = train(models, args.clusters) + (list(DYNAMIC) if dynamic else [])
    builds = {"A": args.base, "B": args.new}
    root = Path(__file__).parents[1]
    got: dict[str, list[dict]] = {k: [] for k in builds}
    load = [os.getloadavg()[0]]
    out_dir = models / "out"
    for r in range(args.rounds):
        for k in ("A", "B") if r % 2 == 0 else ("B", "A"):
            (out_dir / k).mkdir(parents=True, exist_ok=True)
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), builds[k]]))
            cmd = [sys.executable, "-m", "benches.bench_tagger_builds", "--base", args.base]
            cmd += ["--models", str(models), "--reps", str(args.reps)]
            cmd += ["--dynamic", str(dynamic)] if dynamic else []
            cmd += ["--child", str(out_dir / k), *names]
            run = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            got[k].append(json.loads(run.stdout.strip().splitlines()[-1]))
    load.append(os.getloadavg()[0])
    words = got["A"][0]["words"]
    print(f"A = {args.base}\nB = {args.new}")
    print(f"en_ewt test, {words} words; {args.rounds} rounds of {args.reps} taggings per model;")
    print(f"load average {load[0]:.1f} before, {load[1]:.1f} after")
    for n in names:
        med = {k: [statistics.median(p["secs"][n]) for p in got[k]] for k in builds}
        ratios = sorted(a / b for a, b in zip(med["A"], med["B"]))
        same = (out_dir / "A" / f"{n}.conllu").read_text() == (
            out_dir / "B" / f"{n}.conllu"
        ).read_text()
        speed = {k: words / statistics.median(med[k]) for k in builds}
        print(
            f"{n:<9} A {speed['A']:>10,.0f}  B {speed['B']:>10,.0f} tokens/CPU-s;  A/B time "
            f"{statistics.median(ratios):.3f} ({ratios[0]:.3f}-{ratios[-1]:.3f});  "
            f"same output: {'yes' if same else 'NO'}"
        )
    x, y = args.pair
    if x in names and y in names:
        for k in builds:
            rs = sorted(
                statistics.median(p["secs"][x]) / statistics.median(p["secs"][y]) for p in got[k]
            )
            print(f"{k}: {x} / {y} time {statistics.median(rs):.2f}x ({rs[0]:.2f}-{rs[-1]:.2f})")


if __name__ == "__main__":
    main()
