"""One very long sentence through the parsers: time and peak memory of `depfs parse`.

Builds one sentence of --words words (en_ewt test sentences run together, tags kept,
HEAD/DEPREL blanked), then times `depfs parse MODEL FILE` as a whole process (wall
seconds, peak resident memory of the child) for the given models, and checks the
output is one single-rooted tree. The graph parser decodes sentences above
GRAPH_MAX_EXACT_WORDS in chunks (its exact decoders are cubic).

    python -m benches.bench_long_sentence --model GRAPH.depfs [--model AE.depfs] [--words 10000]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import depfs

from .bench_arceager import data_dir


def long_sentence(words: int) -> str:
    rows: list[list[str]] = []
    for s in depfs.read_conllu(data_dir() / "en_ewt" / "test.conllu"):
        for cols in (line.split("\t") for line in s.to_string().splitlines()):
            if len(cols) == 10 and cols[0].isdigit():
                rows.append(cols)
        if len(rows) >= words:
            break
    lines = ["# sent_id = long-1"]
    for i, cols in enumerate(rows[:words], 1):
        lines.append("\t".join([str(i), *cols[1:6], "_", "_", "_", "_"]))
    return "\n".join(lines) + "\n\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", action="append", required=True)
    ap.add_argument("--words", type=int, default=10_000)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = Path(tmp) / "long.conllu", Path(tmp) / "out.conllu"
        inp.write_text(long_sentence(args.words))
        for model in args.model:
            t0 = time.time()
            cmd = [sys.executable, "-m", "depfs.cli", "parse", model, str(inp), "-o", str(out)]
            res = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.time() - t0
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            heads = [
                int(line.split("\t")[6])
                for line in out.read_text().splitlines()
                if line[:1].isdigit()
            ]
            roots = sum(h == 0 for h in heads)
            print(
                f"{Path(model).name}: {args.words} words, exit {res.returncode}, {wall:.1f} s, "
                f"peak {peak:.0f} MB (largest child so far), {roots} root(s); {res.stderr.strip()}"
            )


if __name__ == "__main__":
    main()
