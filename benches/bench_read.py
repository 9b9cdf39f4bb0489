"""Read and write speed of depfs treebanks against the `conllu` PyPI package, same run.

Timed (wall clock, time.perf_counter, median of the repetitions), all on the same file:
  depfs read       depfs.read_conllu(path): open + read + parse into a Rust Treebank
  conllu read      open(path).read() then conllu.parse(text): the same file read + parse
  depfs from_str   Treebank.from_string(text) on text already in memory (parse only)
  conllu parse     conllu.parse(text) on text already in memory (parse only)
  depfs write      Treebank.write(tmp): atomic write (temp file, fsync, rename)
  depfs to_string  Treebank.to_string(): the same bytes built in memory
Targets (issue 2): depfs read >= 20x faster than conllu read; depfs write no slower than read.

    python -m benches.bench_read [--file PATH] [--repeat 7] [--conllu-repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import depfs


def default_file() -> Path:
    here = Path(__file__).resolve().parent.parent
    for c in (os.environ.get("DEPFS_DATA"), str(here.parent / "shared/data/ud")):
        if c and Path(c, "en_ewt", "train.conllu").is_file():
            return Path(c, "en_ewt", "train.conllu")
    raise SystemExit("en_ewt train not found: set DEPFS_DATA or pass --file")


def timed(fn: Callable[[], Any], repeat: int) -> tuple[list[float], Any]:
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return times, result


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--file", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=7, help="repetitions of each depfs timing")
    ap.add_argument("--conllu-repeat", type=int, default=3, help="repetitions of conllu timings")
    ap.add_argument("--out", type=Path, default=Path("bench-results/read.json"))
    args = ap.parse_args(argv)
    import conllu  # the comparison system (pip install conllu)

    path = args.file or default_file()
    text = path.read_text(encoding="utf-8")

    def conllu_read() -> Any:
        with open(path, encoding="utf-8") as f:
            return conllu.parse(f.read())

    rows: dict[str, list[float]] = {}
    rows["depfs read"], tb = timed(lambda: depfs.read_conllu(path), args.repeat)
    rows["conllu read"], sents = timed(conllu_read, args.conllu_repeat)
    rows["depfs from_str"], _ = timed(lambda: depfs.Treebank.from_string(text), args.repeat)
    rows["conllu parse"], _ = timed(lambda: conllu.parse(text), args.conllu_repeat)
    with tempfile.TemporaryDirectory() as tmp:
        out_file = Path(tmp, "out.conllu")
        rows["depfs write"], _ = timed(lambda: tb.write(out_file), args.repeat)
        identical = out_file.read_bytes() == path.read_bytes()
    rows["depfs to_string"], _ = timed(tb.to_string, args.repeat)

    # Both systems saw the same words (conllu's token lists also hold ranges and empty nodes).
    conllu_words = sum(1 for s in sents for t in s if isinstance(t["id"], int))
    assert (len(tb), tb.n_words) == (len(sents), conllu_words), "systems disagree on the data"

    med = {k: statistics.median(v) for k, v in rows.items()}
    ratios = {
        "read_speedup_vs_conllu": med["conllu read"] / med["depfs read"],
        "parse_speedup_vs_conllu": med["conllu parse"] / med["depfs from_str"],
        "write_over_read_time": med["depfs write"] / med["depfs read"],
        "to_string_over_read_time": med["depfs to_string"] / med["depfs read"],
    }
    print(f"file: {path}  ({len(tb)} sentences, {tb.n_words} words, {len(text.encode())} bytes)")
    print(f"{'what':<16} {'median s':>9} {'min s':>8} {'words/s':>12}  runs")
    for k, v in rows.items():
        print(f"{k:<16} {med[k]:>9.4f} {min(v):>8.4f} {tb.n_words / med[k]:>12,.0f}  {len(v)}")
    speedup, parse_speedup = ratios["read_speedup_vs_conllu"], ratios["parse_speedup_vs_conllu"]
    print(f"read speed-up vs conllu (file read + parse): {speedup:.1f}x  (target >= 20x)")
    print(f"parse speed-up vs conllu (text in memory):   {parse_speedup:.1f}x")
    print(f"write time / read time: {ratios['write_over_read_time']:.2f}  (target <= 1)")
    print(f"to_string time / read time: {ratios['to_string_over_read_time']:.2f}")
    print(f"written file byte-identical to input: {identical}")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "file": str(path),
        "sentences": len(tb),
        "words": tb.n_words,
        "bytes": len(text.encode()),
        "seconds": rows,
        "median_seconds": med,
        "ratios": ratios,
        "byte_identical": identical,
        "conllu_version": getattr(conllu, "__version__", None),
        "depfs_version": depfs.__version__,
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main(sys.argv[1:])
