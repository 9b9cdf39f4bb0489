"""End-to-end bench of the arc-eager parser on en_ewt against UDPipe 1 in the same run.

Trains depfs's arc-eager parser on en_ewt train (default template set, one core), parses
en_ewt test with HEAD/DEPREL blanked on one thread (median of --reps parses), and scores
it (punctuation included, universal labels). UDPipe 1 (`ufal.udpipe`): a parser-only model
trained on the same file (one iteration, enough for timing), its `Pipeline` timed with
CoNLL-U in and out and the tagger off on the same blanked sentences, twice: at its default
(a beam of 5) and with `beam_search=1` (greedy, like depfs); its output is checked to be a
parse. Then file to file, each side a whole process timed the same way, taking turns (median
of --reps runs; CPU time and peak RSS from /usr/bin/time): `depfs parse MODEL TEST --threads 1
-o OUT` against a Python process that loads the UDPipe model, parses the same file and writes
CoNLL-U.

    python -m benches.bench_arceager [--epochs N] [--reps N] [--skip-udpipe] [--seed N] [--dev]

--seed sets the training shuffle (`ArcEagerParser(random_state=N)`, default 1). --dev also
scores dev after every epoch and prints dev UAS / LAS per epoch; the model scored on test is
still the last epoch's (`keep="last"`), as without --dev. With --model, the model file's
depfs version and date are printed (a kept model may come from an older build). The
pseudo-projective labels made plain (seen fewer than `min_lifted_label_count` times in the
projectivised train) are counted and printed, beside all the lifted labels.

Prints a table and writes bench-results/arceager.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import depfs
from depfs.arceager import ArcEagerParser


def data_dir() -> Path:
    """The UD folder, found as the library finds it (`depfs.datasets.data_dir`: DEPFS_DATA,
    else ../shared/data/ud from the working directory, the checkout when run as
    `python -m benches.NAME`); the one rule of every bench."""
    from depfs.datasets import data_dir as found

    root = found()
    if root is None:
        raise SystemExit("UD data not found: set DEPFS_DATA to the folder holding en_ewt/")
    return root


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


# UDPipe 1 file to file, as a user's script would do it: load, parse the file, write.
UDPIPE_FILE = """
import sys
from ufal.udpipe import Model, Pipeline, ProcessingError
model, src, dst, options = sys.argv[1:]
err = ProcessingError()
loaded = Model.load(model)  # kept in a name: the Pipeline does not own it
out = Pipeline(loaded, "conllu", Pipeline.NONE, options, "conllu").process(
    open(src, encoding="utf-8").read(), err)
if err.occurred():
    sys.exit(err.message)
open(dst, "w", encoding="utf-8").write(out)
"""


def model_stamp(path: str | Path) -> str:
    """Which build wrote a model file: its depfs version (as recorded in the file) and date."""
    from depfs.models import model_info

    version = model_info(str(path))["training"].get("depfs", "not recorded")
    written = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(Path(path).stat().st_mtime))
    return f"{path}: written by depfs {version}, {written}"


def lifted_labels(train: depfs.Treebank, min_count: int) -> dict[str, int]:
    """Pseudo-projective labels `r↑h` of the projectivised train: how many, on how many arcs,
    and how many of them (on how many arcs) are seen fewer than min_count times (made plain
    `r` in training)."""
    from collections import Counter

    from depfs.arceager import projectivize

    proj, _ = projectivize(train)
    counts = Counter(d for s in proj for d in s.deprels if "↑" in d)
    rare = [n for n in counts.values() if n < min_count]
    return {
        "lifted_labels": len(counts),
        "lifted_arcs": sum(counts.values()),
        "plain_labels": len(rare),
        "plain_arcs": sum(rare),
        "all_arcs": train.n_words,
    }


def installed_env(pythonpath: str | None = None) -> dict[str, str]:
    """The environment for a timed `depfs` process: this one's, with `pythonpath` first
    on PYTHONPATH if given, and with bytecode caches as an installed depfs has them (pip
    compiles them at install). PYTHONDONTWRITEBYTECODE, if this shell sets it, is dropped:
    the child's first run writes the caches. With it, every start compiles depfs's
    modules again (~30 ms), which a user's `depfs parse` does not pay."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    return env


def child(argv: list[str], stdout: Path | None = None) -> dict[str, float]:
    """Runs argv as a whole process: wall s, CPU s (user + system), peak RSS in MiB
    (`peak_rss_mb`: /usr/bin/time's KiB / 1024).

    /usr/bin/time measures it: a child forked from this (large) process would report this
    process's RSS as its own peak. Its standard output goes to `stdout` (a file), else nowhere."""
    with tempfile.NamedTemporaryFile("r") as usage, open(stdout or os.devnull, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%U %S %M", "-o", usage.name, *argv],
            stdout=out,
            stderr=subprocess.PIPE,
            check=False,
            env=installed_env(),
        )
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed:\n{proc.stderr.decode(errors='replace')}")
        user, system, max_kb = usage.read().split()[-3:]
    return {"wall_s": wall, "cpu_s": float(user) + float(system), "peak_rss_mb": int(max_kb) / 1024}


def file_to_file(argvs: dict[str, list[str]], reps: int) -> dict[str, dict[str, float]]:
    """Each command run reps times, taking turns (A B C A B C ...) so that a change in the
    shared machine's load falls on all of them: median wall s, median CPU s, peak RSS MiB."""
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in argvs}
    for _ in range(reps):
        for name, argv in argvs.items():
            runs[name].append(child(argv))
    return {
        name: {
            "wall_s": statistics.median(r["wall_s"] for r in rs),
            "cpu_s": statistics.median(r["cpu_s"] for r in rs),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in rs),
        }
        for name, rs in runs.items()
    }


def udpipe(train_path: Path, test_blank: str, model_path: Path, reps: int) -> dict[str, object]:
    """Trains UDPipe 1's parser into model_path; parses test_blank in memory at each beam."""
    from ufal.udpipe import Model, Pipeline, ProcessingError, Sentences, Trainer

    sents, err = udpipe_sentences(train_path), ProcessingError()
    t0 = time.perf_counter()
    model = Trainer.train(
        "morphodita_parsito", sents, Sentences(), "none", "none", "iterations=1", err
    )
    train_s = time.perf_counter() - t0
    if err.occurred():
        raise RuntimeError(err.message)
    model_path.write_bytes(model.encode("latin-1") if isinstance(model, str) else model)
    m = Model.load(str(model_path))
    result: dict[str, object] = {"train_s": train_s}
    for name, options in (("default", Pipeline.DEFAULT), ("greedy", "beam_search=1")):
        pipe = Pipeline(m, "conllu", Pipeline.NONE, options, "conllu")
        walls, cpus = [], []
        for _ in range(reps):
            t0, c0 = time.perf_counter(), time.process_time()
            out = pipe.process(test_blank, err)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        heads = [line.split("\t")[6] for line in out.splitlines() if re.match(r"^\d+\t", line)]
        if not heads or any(not h.isdigit() for h in heads):
            raise RuntimeError("UDPipe output has words without a numeric HEAD: not a parse")
        result[name] = {
            "options": options,
            "parse_s": statistics.median(walls),
            "parse_cpu_s": statistics.median(cpus),
            "words": len(heads),
            "output": out,
        }
    return result


def udpipe_rows(
    result: dict[str, object],
    rows: list[tuple[str, ...]],
    parser: ArcEagerParser,
    gold: depfs.Treebank,
    test_blank: str,
    tmp: Path,
    reps: int,
) -> None:
    """UDPipe 1 in memory at both beams, then both sides file to file; adds to result, rows."""
    d = data_dir() / "en_ewt"
    model, src = tmp / "en.depfs", tmp / "test.blank.conllu"
    parser.save(model)
    src.write_text(test_blank, encoding="utf-8")
    depfs_wps = float(rows[0][3].replace(",", ""))
    depfs_cpu = float(rows[0][4].replace(",", ""))
    u = udpipe(d / "train.conllu", test_blank, tmp / "en.udpipe", reps)
    udpipe_file = [sys.executable, "-c", UDPIPE_FILE, str(tmp / "en.udpipe"), str(src)]
    timed = file_to_file(
        {
            "depfs": [sys.executable, "-m", "depfs.cli", "parse", str(model), str(src)]
            + ["--threads", "1", "-o", str(tmp / "depfs.conllu")],
            "default": [*udpipe_file, str(tmp / "udpipe.conllu"), ""],
            "greedy": [*udpipe_file, str(tmp / "udpipe.conllu"), "beam_search=1"],
        },
        reps,
    )
    ours = timed["depfs"]
    result["depfs_file_to_file_s"] = ours["wall_s"]
    result["depfs_file_to_file_cpu_s"] = ours["cpu_s"]
    result["depfs_file_to_file_peak_rss_mb"] = ours["peak_rss_mb"]
    for name in ("default", "greedy"):
        run = u[name]
        assert isinstance(run, dict)
        us = depfs.evaluate(gold, depfs.Treebank.from_string(str(run["output"])))
        uwps = float(run["words"]) / float(run["parse_s"])
        ucpu = float(run["words"]) / float(run["parse_cpu_s"])
        theirs = timed[name]
        result[f"udpipe1_iter1_{name}"] = {
            "options": run["options"],
            "train_s": round(float(u["train_s"]), 1),  # type: ignore[arg-type]
            "uas": round(us.uas, 2),
            "las": round(us.las, 2),
            "words_per_s": round(uwps),
            "words_per_cpu_s": round(ucpu),
            "speed_ratio": round(depfs_wps / uwps, 1),
            "speed_ratio_cpu": round(depfs_cpu / ucpu, 1),
            "file_to_file_s": theirs["wall_s"],
            "file_to_file_cpu_s": theirs["cpu_s"],
            "file_to_file_peak_rss_mb": theirs["peak_rss_mb"],
            "file_to_file_ratio": round(theirs["wall_s"] / ours["wall_s"], 2),
            "file_to_file_ratio_cpu": round(theirs["cpu_s"] / ours["cpu_s"], 2),
        }
        rows.append(
            (
                f"UDPipe 1 (1 iteration), {name}",
                f"{us.uas:.2f}",
                f"{us.las:.2f}",
                f"{uwps:,.0f}",
                f"{ucpu:,.0f}",
                f"{float(u['train_s']):.0f}",  # type: ignore[arg-type]
            )
        )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=ArcEagerParser().epochs)
    ap.add_argument("--templates", default="arc_eager")
    ap.add_argument("--skip-udpipe", action="store_true")
    ap.add_argument("--save", help="write the trained model here")
    ap.add_argument("--model", help="time this saved model instead of training one")
    ap.add_argument("--reps", type=int, default=5, help="parses timed (the median is reported)")
    ap.add_argument("--seed", type=int, default=1, help="training shuffle (random_state)")
    ap.add_argument("--dev", action="store_true", help="print dev UAS / LAS after each epoch")
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
        print(model_stamp(args.model))
    else:
        dev = depfs.read_conllu(d / "dev.conllu") if args.dev else None
        parser = ArcEagerParser(args.templates, epochs=args.epochs, random_state=args.seed)
        parser.fit(train, dev, keep="last")
    train_s, train_cpu = time.perf_counter() - t0, time.process_time() - c0
    if args.dev and not args.model:
        for row in parser.history_:
            uas, las = row["dev_uas"], row["dev_las"]
            print(f"epoch {int(row['epoch']):>2}: dev UAS {uas:.2f} LAS {las:.2f}")
    lifted = lifted_labels(train, parser.min_lifted_label_count)
    print(
        f"lifted labels: {lifted['lifted_labels']} on {lifted['lifted_arcs']} of "
        f"{lifted['all_arcs']:,} train arcs; seen < {parser.min_lifted_label_count} times "
        f"(made plain): {lifted['plain_labels']} on {lifted['plain_arcs']} arcs"
    )
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
            "seed": None if args.model else args.seed,
            "train_s": round(train_s, 1),
            "train_cpu_s": round(train_cpu, 1),
            "uas": round(scores.uas, 2),
            "las": round(scores.las, 2),
            "words_per_s": round(words / parse_s),
            "words_per_cpu_s": round(words / parse_cpu),
            "words_per_cpu_s_best": round(words / min(cpus)),
            "parse_reps": args.reps,
        },
        "lifted_labels": lifted,
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
        with tempfile.TemporaryDirectory() as tmp:
            udpipe_rows(result, rows, parser, gold, test_blank, Path(tmp), args.reps)
    head = ("parser", "UAS", "LAS", "words/s", "words/cpu-s", "train s")
    print(f"{head[0]:<34} {head[1]:>6} {head[2]:>6} {head[3]:>10} {head[4]:>12} {head[5]:>8}")
    for r in rows:
        print(f"{r[0]:<34} {r[1]:>6} {r[2]:>6} {r[3]:>10} {r[4]:>12} {r[5]:>8}")
    for name in ("default", "greedy"):
        key = f"udpipe1_iter1_{name}"
        if key in result:
            u = result[key]
            assert isinstance(u, dict)
            print(
                f"depfs / UDPipe 1 {name} ({u['options'] or 'beam of 5'}): in memory "
                f"{u['speed_ratio']}x wall, {u['speed_ratio_cpu']}x CPU time; file to file "
                f"{u['file_to_file_ratio']}x wall, {u['file_to_file_ratio_cpu']}x CPU time "
                f"({u['file_to_file_s']:.2f} s vs "
                f"depfs {result['depfs_file_to_file_s']:.2f} s); peak RSS "
                f"{u['file_to_file_peak_rss_mb']:.0f} MiB vs depfs "
                f"{result['depfs_file_to_file_peak_rss_mb']:.0f} MiB"
            )
    out = Path("bench-results")
    out.mkdir(exist_ok=True)
    (out / "arceager.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
