"""Graph parser end to end on en_ewt: accuracy, training time and one-thread parse speed,
measured from Python on a loaded model, with the decoding-free scoring share.

Timed: training (wall and process CPU, `time.process_time`, which counts every thread),
`parser.parse(test, threads=1)` on a model loaded with `depfs.load` (median of --repeat
parses, and the best CPU time; words/s by wall clock and by CPU time: the machine may be
shared, and CPU time is what one core actually spent). Comparison in the same run: the
same parse with the length dictionary off (`prune=False`), and the share of arc templates
computed with it on (He et al. 2013's "cost"). Targets (issue 4): UAS >= 87, LAS >= 84,
>= 50,000 words/s, training <= 10 min.

    python -m benches.bench_graph [--epochs 8] [--order 1] [--decoder eisner] [--model PATH]
                                  [--seed N] [--max-bits 18] [--dev]

--seed sets the training shuffle (`GraphParser(random_state=N)`, default 1). --dev also
scores dev after every epoch and prints dev UAS / LAS per epoch; the model scored on test is
still the last epoch's (`keep="last"`), as without --dev.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import depfs
import numpy as np

from .bench_arceager import data_dir


def scores(gold: depfs.Treebank, pred: depfs.Treebank) -> tuple[float, float]:
    g = np.concatenate([s.heads for s in gold])
    p = np.concatenate([s.heads for s in pred])
    gl = [d.split(":")[0] for s in gold for d in s.deprels]
    pl = [d.split(":")[0] for s in pred for d in s.deprels]
    head_ok = g == p
    label_ok = np.array([a == b for a, b in zip(gl, pl)])
    return float(head_ok.mean()), float((head_ok & label_ok).mean())


def timed_parse(parser: object, tb: depfs.Treebank, repeat: int) -> tuple[float, float, float]:
    """Median wall s, median CPU s and best CPU s of `repeat` one-thread parses."""
    walls, cpus = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        parser.parse(tb, threads=1)  # type: ignore[attr-defined]
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), min(cpus)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--order", type=int, default=1)
    ap.add_argument("--decoder", default="eisner")
    ap.add_argument("--update", default="mira")
    ap.add_argument("--max-bits", type=int, default=18)
    ap.add_argument("--model", type=Path, default=None, help="evaluate this model, no training")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1, help="training shuffle (random_state)")
    ap.add_argument("--dev", action="store_true", help="print dev UAS / LAS after each epoch")
    ap.add_argument("--out", type=Path, default=Path("bench-results/graph.json"))
    args = ap.parse_args(argv)
    d = data_dir() / args.treebank
    train = depfs.read_conllu(d / "train.conllu")
    test = depfs.read_conllu(d / "test.conllu")
    result: dict[str, object] = {"treebank": args.treebank, "test_words": test.n_words}
    if args.model is None:
        result["seed"] = args.seed
    with tempfile.TemporaryDirectory() as tmp:
        path = args.model
        if path is None:
            parser = depfs.GraphParser(
                order=args.order,
                decoder=args.decoder,
                epochs=args.epochs,
                max_bits=args.max_bits,
                update=args.update,
                random_state=args.seed,
            )
            dev = depfs.read_conllu(d / "dev.conllu") if args.dev else None
            w0, c0 = time.perf_counter(), time.process_time()
            parser.fit(train, dev, keep="last")
            result["train_wall_s"] = time.perf_counter() - w0
            result["train_cpu_s"] = time.process_time() - c0
            if dev is not None:
                for row in parser.history_:
                    print(
                        f"epoch {int(row['epoch']):>2}: dev UAS {row['dev_uas']:.2f} "
                        f"LAS {row['dev_las']:.2f}",
                        flush=True,
                    )
                result["dev_history"] = [
                    (int(row["epoch"]), round(row["dev_uas"], 2), round(row["dev_las"], 2))
                    for row in parser.history_
                ]
            path = Path(tmp, "model.depfs")
            parser.save(path)
        parser = depfs.load(path)
        pred = parser.parse(test, threads=1)
        result["uas"], result["las"] = scores(test, pred)
        wall, cpu, best_cpu = timed_parse(parser, test, args.repeat)
        result["words_per_s_wall"] = test.n_words / wall
        result["words_per_s_cpu"] = test.n_words / cpu
        result["words_per_s_cpu_best"] = test.n_words / best_cpu
        m = parser.model_
        pruned = m.template_evaluations(test, prune=True).sum()
        full = m.template_evaluations(test, prune=False).sum()
        result["templates_computed_share"] = float(pruned / full)
        st = m.length_dict_stats(test)
        result["dict_gold_pruned"] = st["gold_pruned_share"]
        result["dict_other_pruned"] = st["other_pruned_share"]
    print(f"{'metric':<28}{'value':>14}")
    for k, v in result.items():
        if k == "dev_history":
            continue
        print(f"{k:<28}{v:>14.4f}" if isinstance(v, float) else f"{k:<28}{v!s:>14}")
    print(f"{'speed / 50k target (cpu)':<28}{result['words_per_s_cpu'] / 50000:>14.2f}")  # type: ignore[operator]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
