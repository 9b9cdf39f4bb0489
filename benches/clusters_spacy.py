"""Write spaCy's public English Brown clusters as a Brown "paths" file for the tagger.

`spacy-lookups-data` (MIT, on PyPI) ships ``en_lexeme_cluster.json.gz``: 1,000,001 English
word types, each with an integer that encodes its Brown-cluster bit path REVERSED (spaCy
stored ``int(path[::-1], 2)``: bit j of the integer is the path's j-th bit, so "I" = 346 and
"you" = 602 share their 8 low bits, "the" = 11 and "a" = 19 their 3 low bits, "dog" and
"cat" are both 37). The path is read back as the integer's bits from the lowest up to its
highest set one: a path's trailing zeros are lost, which changes no prefix that it has, and
leaves distinct clusters distinct (two leaves of the tree cannot differ only by trailing
zeros: one would be the other's ancestor). 0 means no cluster (809,872 entries: '"', '?',
"reddit", ...; a cluster whose path is all zeros, if any, cannot be told from them), so those
words are left out: 190,129 words in 999 clusters. COUNT is the word's frequency per 10^10
tokens from the package's ``en_lexeme_prob.json.gz`` (log probabilities), at least 1.

Writes ``BITSTRING<TAB>WORD<TAB>COUNT`` lines (the format of Liang's wcluster, which
``depfs.Tagger(clusters=OUT)`` and ``depfs train --parser tagger --clusters OUT`` read),
most frequent first. The wheel is fetched once with ``pip download`` into --cache (outside
the repository; never commit the data).

    python -m benches.clusters_spacy OUT [--cache DIR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import subprocess
import sys
import zipfile
from pathlib import Path

PACKAGE = "spacy-lookups-data==1.0.5"
CLUSTERS = "spacy_lookups_data/data/en_lexeme_cluster.json.gz"
PROBS = "spacy_lookups_data/data/en_lexeme_prob.json.gz"
DEFAULT_CACHE = Path.home() / ".cache" / "depfs" / "spacy-lookups-data"


def wheel(cache: Path) -> Path:
    """The package's wheel in `cache`, downloaded by pip when it is not there yet."""
    found = sorted(cache.glob("spacy_lookups_data-*.whl"))
    if not found:
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(cache), PACKAGE],
            check=True,
        )
        found = sorted(cache.glob("spacy_lookups_data-*.whl"))
    if not found:
        raise SystemExit(f"pip download left no spacy_lookups_data wheel in {cache}")
    return found[-1]


def path_of(value: int) -> str | None:
    """The bit path spaCy encoded reversed in `value` (None for 0: no cluster)."""
    return format(value, "b")[::-1] if value > 0 else None


def paths_lines(clusters: dict[str, int], probs: dict[str, float]) -> list[str]:
    """The paths file's lines, most frequent word first (the table's order on ties)."""
    rows = []
    for rank, (word, value) in enumerate(clusters.items()):
        path = path_of(value)
        if path is None or not word or any(c in word for c in "\t\n\r"):
            continue
        count = max(1, round(math.exp(probs[word]) * 1e10)) if word in probs else 1
        rows.append((-count, rank, f"{path}\t{word}\t{count}"))
    return [line for _, _, line in sorted(rows)]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the paths file to write")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where the wheel is kept")
    args = ap.parse_args(argv)
    with zipfile.ZipFile(wheel(args.cache)) as z:
        clusters = json.loads(gzip.decompress(z.read(CLUSTERS)))
        probs = json.loads(gzip.decompress(z.read(PROBS)))
    lines = paths_lines(clusters, probs)
    args.out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    n_paths = len({line.split("\t", 1)[0] for line in lines})
    print(
        f"{args.out}: {len(lines):,} words in {n_paths:,} clusters (of {len(clusters):,} entries)"
    )


if __name__ == "__main__":
    main()
