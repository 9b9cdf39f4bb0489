"""Weight tables on transparent huge pages, on and off, in the same build and run.

Each model given parses (or tags) en_ewt test (or --treebank) on one thread in a child
process, alternately with huge pages (the default) and with `DEPFS_NO_HUGE_PAGES=1`;
each child reports its best CPU time of --reps parses, and the speed-up is the median of
the paired ratios (pairing cancels the shared machine's drift). The outputs must be the
same bytes.

    python -m benches.bench_huge_pages MODEL [MODEL ...] [--pairs 5] [--reps 5]

MODEL: any depfs model file (arc-eager, graph, tagger, dynamic); the child says how
many MiB of its memory lay on huge pages (AnonHugePages, /proc/self/smaps_rollup).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from .bench_arceager import data_dir

CHILD = """
import hashlib, json, sys, time
import depfs
model, path, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = depfs.load(model)
tb = depfs.read_conllu(path)
run = (lambda: m.tag(tb, 1)) if isinstance(m, depfs.Tagger) else (lambda: m.parse(tb, 1))
best = float("inf")
for _ in range(reps):
    t0 = time.process_time()
    out = run()
    best = min(best, time.process_time() - t0)
huge = 0
try:
    for line in open("/proc/self/smaps_rollup"):
        if line.startswith("AnonHugePages:"):
            huge = int(line.split()[1]) // 1024
except OSError:
    pass
digest = hashlib.sha256(out.to_bytes()).hexdigest()
print(json.dumps({"secs": best, "words": tb.n_words, "huge_mib": huge, "digest": digest}))
"""


def child(model: str, path: str, reps: int, off: bool) -> dict:
    env = dict(os.environ)
    env.pop("DEPFS_NO_HUGE_PAGES", None)
    if off:
        env["DEPFS_NO_HUGE_PAGES"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, model, path, str(reps)],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"{model}: the child failed:\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    path = str(data_dir() / args.treebank / "test.conllu")
    print(f"{args.treebank} test, one thread, best of {args.reps} per child, {args.pairs} pairs")
    for model in args.models:
        ratios, on_rate, off_rate, digests, huge = [], [], [], set(), (0, 0)
        for _ in range(args.pairs):
            on = child(model, path, args.reps, off=False)
            off = child(model, path, args.reps, off=True)
            ratios.append(off["secs"] / on["secs"])
            on_rate.append(on["words"] / on["secs"])
            off_rate.append(off["words"] / off["secs"])
            digests |= {on["digest"], off["digest"]}
            huge = (on["huge_mib"], off["huge_mib"])
        name = os.path.basename(model)
        print(
            f"{name}: huge pages {statistics.median(on_rate):,.0f} words/s "
            f"({huge[0]} MiB on huge pages), off {statistics.median(off_rate):,.0f} "
            f"({huge[1]} MiB); speed-up {statistics.median(ratios):.3f}x "
            f"(paired, min {min(ratios):.3f} max {max(ratios):.3f}); "
            f"same output: {len(digests) == 1}",
            flush=True,
        )


if __name__ == "__main__":
    main()
