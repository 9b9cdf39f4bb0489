"""`depfs parse --threads 2` against `--threads 1`, whole processes (model load, streamed
read, parse and write), on en_ewt train repeated `--copies` times (default 5, 1.02M words).

Runs the two commands in turn `--runs` times (pairing keeps the ratio meaningful while the
shared machine's speed drifts; the order alternates round by round), checks that both
outputs are the same bytes, and prints each side's median wall time and the median of the
paired ratios. Every process runs with bytecode caches, as an installed depfs does
(`bench_arceager.installed_env`).

    python -m benches.bench_threads --model MODEL [--copies 5] [--runs 5] [--baseline DIR]

With `--baseline DIR` (the `python/` folder of another build: its `depfs` package with its
`_core` library), that build's two commands run in the same rounds, the four in a rotating
order, and both builds' figures are printed, with this build's `--threads 2` time over the
baseline's (median of the rounds' ratios): two builds compared in one window of a shared
machine's drift.

With `--parts`, instead prints the CPU seconds (this process, medians of `--runs`) of what
`depfs parse` does besides parsing, on the same input: Python imports (`import depfs.cli`
in a child process), model load (`depfs.load`), reading the batches (`input_batches`, as
`depfs parse` reads them: with their text, the batches after the first only in the columns
a parse reads; and, for comparison, every column of every batch), writing them as `depfs
parse` does (each batch's text rewritten around HEAD and DEPREL, and a file write;
`to_bytes` instead, as a parse with a tagger or margins writes, for comparison), and, for
scale, the arc-eager or graph parse itself on one thread and on two (one run each, in
memory: how far the parse alone scales, and the bound with two threads' parse CPU). CPU
seconds move less than wall time on a busy machine: run it against two builds in turn to
compare them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .bench_arceager import data_dir, installed_env


def timed(cmd: list[str], pythonpath: str | None = None) -> float:
    """Wall seconds of `cmd`, run with `pythonpath` first on PYTHONPATH if given, with
    bytecode caches as an installed depfs has them (`installed_env`)."""
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=installed_env(pythonpath))
    return time.perf_counter() - t0


def cpu_of(fn: Any) -> float:
    """CPU seconds (all threads of this process) that `fn()` takes."""
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def parts(model: str, big: Path, runs: int) -> dict[str, float]:
    """Median CPU seconds of each part of a whole-process parse but the parse, and the
    parse's on one thread (see the module doc)."""
    import resource

    import depfs
    from depfs.pipeline import input_batches

    def imports() -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", "import depfs.cli"], check=True, env=installed_env())
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)

    from depfs import pipeline

    def read(part: bool, keep: bool = False) -> list[Any]:
        """The batches as `depfs parse` reads them: the first whole, the later ones (when
        `part`) only in the columns a parse reads; each dropped once read, as a parse
        drops it once written (`keep`: all of them, returned)."""
        batches, _ = input_batches(str(big), keep_text=True)
        if part and hasattr(pipeline, "PARSE_COLUMNS"):  # (older builds read every column)
            batches.reader.read_columns(pipeline.PARSE_COLUMNS)
        return list(batches) if keep else [n for n, _ in enumerate(batches)]

    parser = depfs.load(model)
    # Read whole here, so that `to_bytes` can write their parse too.
    batches, texts = zip(*read(False, keep=True), strict=True)
    parsed = [parser.parse(b, threads=1, tag=False) for b in batches[:1]]
    out = big.with_suffix(".out")

    def write(rewrite: bool) -> None:
        with open(out, "wb") as f:
            for p, t in zip(parsed, texts, strict=True):
                f.write(t.rewrite(p) if rewrite else p.to_bytes())

    got: dict[str, list[float]] = {
        "import": [],
        "load": [],
        "read": [],
        "read, all columns": [],
        "write": [],
        "write, to_bytes": [],
    }
    for i in range(runs):
        got["import"].append(imports())
        got["load"].append(cpu_of(lambda: depfs.load(model)))
        got["read"].append(cpu_of(lambda: read(True)))
        got["read, all columns"].append(cpu_of(lambda: read(False)))
        if i == 0:
            w0 = time.perf_counter()
            t = cpu_of(
                lambda: parsed.extend(parser.parse(b, threads=1, tag=False) for b in batches[1:])
            )
            got["parse, 1 thread"] = [t]
            got["parse, 1 thread, wall"] = [time.perf_counter() - w0]
            # The same parse on two threads, in memory: how far the parse alone scales.
            w0 = time.perf_counter()
            t = cpu_of(lambda: [parser.parse(b, threads=2, tag=False) for b in batches[1:]])
            got["parse, 2 threads"] = [t]
            got["parse, 2 threads, wall"] = [time.perf_counter() - w0]
        got["write"].append(cpu_of(lambda: write(True)))
        got["write, to_bytes"].append(cpu_of(lambda: write(False)))
    out.unlink()
    return {k: statistics.median(v) for k, v in got.items()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--copies", type=int, default=5)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--parts", action="store_true", help="CPU seconds of each part instead")
    ap.add_argument("--baseline", metavar="DIR", help="another build's python/ folder, interleaved")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.conllu"
        train = (data_dir() / args.treebank / "train.conllu").read_bytes()
        big.write_bytes(train * args.copies)
        if args.parts:
            print(
                f"{args.model}: {args.treebank} train x{args.copies}, CPU s, medians of {args.runs}"
            )
            got = parts(args.model, big, args.runs)
            for what, sec in got.items():
                print(f"{what}: {sec:.3f} s{'' if what.endswith('wall') else ' CPU'}")
            # One thread: start-up and parse (reading and writing on the other core); two:
            # start-up, then parse, read and write shared by the two cores.
            start, p = got["import"] + got["load"], got["parse, 1 thread"]
            rest = p + got["read"] + got["write"]
            print(f"bound at --threads 2: {(start + p) / (start + rest / 2):.2f}x")
            # The parse alone, in memory, and the bound again with its two threads' CPU
            # (two busy cores slow each other: more CPU than one thread's for the same work).
            scale = got["parse, 1 thread, wall"] / got["parse, 2 threads, wall"]
            rest2 = got["parse, 2 threads"] + got["read"] + got["write"]
            print(f"parse in memory, 2 threads against 1 (wall): {scale:.2f}x")
            print(
                f"bound with the two threads' parse CPU: {(start + p) / (start + rest2 / 2):.2f}x"
            )
            return
        cmd = [sys.executable, "-m", "depfs", "parse", args.model, str(big)]
        builds: dict[str, str | None] = {"this build": None}
        if args.baseline:
            builds["baseline"] = str(Path(args.baseline).resolve())
        runs = [(b, t) for b in builds for t in (2, 1)]
        times: dict[tuple[str, int], list[float]] = {run: [] for run in runs}
        out = {run: f"{tmp}/{i}_{run[1]}.conllu" for i, run in enumerate(runs)}
        for b in builds:  # page cache, imports, bytecode caches
            timed([*cmd, "-o", f"{tmp}/warm.conllu", "--threads", "1"], builds[b])
        for r in range(args.runs):
            for b, t in runs[r % len(runs) :] + runs[: r % len(runs)]:
                run_cmd = [*cmd, "-o", out[(b, t)], "--threads", str(t)]
                times[(b, t)].append(timed(run_cmd, builds[b]))
        first = Path(out[runs[0]]).read_bytes()
        same = all(Path(o).read_bytes() == first for o in out.values())
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.model}: {args.treebank} train x{args.copies}, {args.runs} paired runs")
    print(f"load average at the end: {load} (another job on the 2 cores distorts the ratio)")
    for b in builds:
        one, two = times[(b, 1)], times[(b, 2)]
        ratios = [a / c for a, c in zip(one, two, strict=True)]
        who = f"{b}: " if args.baseline else ""
        print(f"{who}--threads 1: median {statistics.median(one):.2f} s wall")
        print(f"{who}--threads 2: median {statistics.median(two):.2f} s wall")
        print(f"{who}speed-up (median of paired ratios): {statistics.median(ratios):.2f}x")
    if args.baseline:
        pairs = zip(times[("this build", 2)], times[("baseline", 2)], strict=True)
        over = [a / c for a, c in pairs]
        print(f"--threads 2, this build's time over the baseline's: {statistics.median(over):.3f}")
    print(f"same bytes: {same}")


if __name__ == "__main__":
    main()
