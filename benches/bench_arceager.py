"""End-to-end bench of the arc-eager parser on en_ewt against UDPipe 1 in the same run.

Trains depfs's arc-eager parser on en_ewt train (default template set, one core), parses
en_ewt test with HEAD/DEPREL blanked on one thread (median of --reps parses), and scores
it (punctuation included, universal labels). UDPipe 1 (`ufal.udpipe`): a parser-only model
trained on the same file (one iteration, enough for timing), its `Pipeline` timed with
CoNLL-U in and out and the tagger off on the same blanked sentences; its output is checked
to be a parse.

    python -m benches.bench_arceager [--epochs N] [--reps N] [--skip-udpipe]

Prints a table and writes bench-results/arceager.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

import depfs
from depfs.arceager import ArcEagerParser


def data_dir() -> Path:
    here = Path(__file__).resolve().parent.parent
    return Path(os.environ.get("DEPFS_DATA") or here.parent / "shared/data/ud")


def blank(conllu: str) -> str:
    """HEAD and DEPREL (and DEPS) set to `_` on every word line."""
    out = []
    for line in conllu.splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[6], cols[7], cols[8] = "_", "_", "_"
            line = "\t".join(cols)
        out.append(line)
    return "\n".join(out) + "\n"


def udpipe_sentences(path: Path) -> object:
    """A CoNLL-U file as UDPipe 1 training sentences."""
    from ufal.udpipe import InputFormat, ProcessingError, Sentence, Sentences

    fmt = InputFormat.newConlluInputFormat()
    fmt.setText(path.read_text(encoding="utf-8"))
    sents, s, err = Sentences(), Sentence(), ProcessingError()
    while fmt.nextSentence(s, err):
        sents.append(s)
        s = Sentence()
    if err.occurred():
        raise RuntimeError(f"{path}: {err.message}")
    return sents


def udpipe(train_path: Path, test_blank: str) -> dict[str, float | str]:
    from ufal.udpipe import Model, Pipeline, ProcessingError, Sentences, Trainer

    sents, err = udpipe_sentences(train_path), ProcessingError()
    t0 = time.perf_counter()
    model = Trainer.train(
        "morphodita_parsito", sents, Sentences(), "none", "none", "iterations=1", err
    )
    train_s = time.perf_counter() - t0
    if err.occurred():
        raise RuntimeError(err.message)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "en.udpipe"
        path.write_bytes(model.encode("latin-1") if isinstance(model, str) else model)
        m = Model.load(str(path))
    pipe = Pipeline(m, "conllu", Pipeline.NONE, Pipeline.DEFAULT, "conllu")
    t0, c0 = time.perf_counter(), time.process_time()
    out = pipe.process(test_blank, err)
    parse_s, parse_cpu = time.perf_counter() - t0, time.process_time() - c0
    heads = [line.split("\t")[6] for line in out.splitlines() if re.match(r"^\d+\t", line)]
    if not heads or any(not h.isdigit() for h in heads):
        raise RuntimeError("UDPipe output has words without a numeric HEAD: not a parse")
    return {
        "train_s": train_s,
        "parse_s": parse_s,
        "parse_cpu_s": parse_cpu,
        "words": len(heads),
        "output": out,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=ArcEagerParser().epochs)
    ap.add_argument("--templates", default="arc_eager")
    ap.add_argument("--skip-udpipe", action="store_true")
    ap.add_argument("--save", help="write the trained model here")
    ap.add_argument("--model", help="time this saved model instead of training one")
    ap.add_argument("--reps", type=int, default=5, help="parses timed (the median is reported)")
    args = ap.parse_args(argv)
    d = data_dir() / "en_ewt"
    if not (d / "train.conllu").exists():
        print(f"skipped: {d} not found (set DEPFS_DATA)")
        return
    train = depfs.read_conllu(d / "train.conllu")
    test_text = (d / "test.conllu").read_text(encoding="utf-8")
    gold = depfs.Treebank.from_string(test_text)
    test_blank = blank(test_text)
    test_input = depfs.Treebank.from_string(test_blank)

    t0, c0 = time.perf_counter(), time.process_time()
    if args.model:
        parser = depfs.load(args.model)
    else:
        parser = ArcEagerParser(args.templates, epochs=args.epochs).fit(train)
    train_s, train_cpu = time.perf_counter() - t0, time.process_time() - c0
    if args.save:
        parser.save(args.save)
    parsed = parser.parse(test_input, threads=1)  # warm-up (page in the weights)
    # The median of several parses: one parse takes ~0.1 s, and a shared machine's
    # speed swings by a third from one moment to the next.
    walls, cpus = [], []
    for _ in range(args.reps):
        t0, c0 = time.perf_counter(), time.process_time()
        parsed = parser.parse(test_input, threads=1)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    parse_s, parse_cpu = statistics.median(walls), statistics.median(cpus)
    scores = depfs.evaluate(gold, parsed)
    words = gold.n_words
    result: dict[str, object] = {
        "depfs": {
            "templates": args.templates,
            "epochs": args.epochs,
            "train_s": round(train_s, 1),
            "train_cpu_s": round(train_cpu, 1),
            "uas": round(scores.uas, 2),
            "las": round(scores.las, 2),
            "words_per_s": round(words / parse_s),
            "words_per_cpu_s": round(words / parse_cpu),
            "words_per_cpu_s_best": round(words / min(cpus)),
            "parse_reps": args.reps,
        }
    }
    rows = [
        (
            "depfs arc-eager",
            f"{scores.uas:.2f}",
            f"{scores.las:.2f}",
            f"{words / parse_s:,.0f}",
            f"{words / parse_cpu:,.0f}",
            f"{train_s:.0f}",
        )
    ]
    print(f"depfs: {result['depfs']}", flush=True)
    if not args.skip_udpipe:
        u = udpipe(d / "train.conllu", test_blank)
        us = depfs.evaluate(gold, depfs.Treebank.from_string(str(u["output"])))
        uwps = float(u["words"]) / float(u["parse_s"])
        ucpu = float(u["words"]) / float(u["parse_cpu_s"])
        result["udpipe1_iter1"] = {
            "train_s": round(float(u["train_s"]), 1),
            "uas": round(us.uas, 2),
            "las": round(us.las, 2),
            "words_per_s": round(uwps),
            "words_per_cpu_s": round(ucpu),
        }
        result["speed_ratio"] = round(words / parse_s / uwps, 1)
        result["speed_ratio_cpu"] = round(words / parse_cpu / ucpu, 1)
        rows.append(
            (
                "UDPipe 1 (1 iteration)",
                f"{us.uas:.2f}",
                f"{us.las:.2f}",
                f"{uwps:,.0f}",
                f"{ucpu:,.0f}",
                f"{float(u['train_s']):.0f}",
            )
        )
    head = ("parser", "UAS", "LAS", "words/s", "words/cpu-s", "train s")
    print(f"{head[0]:<24} {head[1]:>6} {head[2]:>6} {head[3]:>10} {head[4]:>12} {head[5]:>8}")
    for r in rows:
        print(f"{r[0]:<24} {r[1]:>6} {r[2]:>6} {r[3]:>10} {r[4]:>12} {r[5]:>8}")
    if "speed_ratio" in result:
        print(
            f"speed ratio depfs / UDPipe 1: {result['speed_ratio']}x wall, "
            f"{result['speed_ratio_cpu']}x CPU time"
        )
    out = Path("bench-results")
    out.mkdir(exist_ok=True)
    (out / "arceager.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
