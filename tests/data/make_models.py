"""Regenerates the checked-in model files of tests/test_checked_in_models.py.

    .venv/bin/python tests/data/make_models.py

Run it only to ADD files for a new format: the files written on 2026-11-23 (container
format version 3, commit 6a9307d + the test net) are the proof that later code still loads
format-3 files and parses them byte-identically, so they must not be overwritten.

What is made (all from depfs.datasets.synthetic, fixed seeds, small template sets):

- train.conllu is not kept (it is regenerated here from the seed); input.conllu: 40
  sentences of synthetic(40, seed=902, nonprojective_rate=1.0) with HEAD and DEPREL blanked
  (several gold trees are non-projective);
- arceager.depfs: ArcEagerParser, pseudo-projective with every lifted label kept
  (min_lifted_label_count=1), 4 epochs on synthetic(200, seed=901, nonprojective_rate=1.0);
- graph1.depfs: GraphParser order 1, Eisner; graph1_cle.depfs: order 1, CLE;
  graph2.depfs: order 2 (weak arc templates + sibling templates), all with max_bits=10, 3 epochs;
- expected/<model>.conllu: the parse of input.conllu by each model (threads=1);
- arrays.npz: method arrays of the models on the first 5 input sentences:
  arc-eager trajectories (beta=0 and 1) and template_scores, graph arc_scores.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import depfs
import numpy as np
from depfs import ArcEagerParser, GraphParser
from depfs.datasets import synthetic

HERE = Path(__file__).resolve().parent
# AE_SET and SIB are the tests' small sets (tests/small_models.py); the script runs from
# tests/data, so tests/ is not on the import path by itself.
sys.path.insert(0, str(HERE.parent))
from small_models import AE_SET, SIB  # noqa: E402

ARC = """\
upos(h) & upos(m) & dir & dist
form(h) & upos(m)
upos(h) & upos(b) & upos(m)
upos(m) & dir
lemma(m) & upos(h) & dir
"""
# graph2's arc templates are weak on purpose, so its parses depend on the sibling weights
# (with ARC, order 1 and order 2 parse input.conllu identically).
WEAK_ARC = "upos(m) & dir\nupos(h) & dir\nupos(h) & upos(m)\n"
LAB = "upos(h) & upos(m) & dir\nform(m)\nupos(h) & form(m) & dir\n"


def blank_heads(text: str) -> str:
    """HEAD and DEPREL (columns 7 and 8) of every word line set to `_`."""
    out = []
    for line in text.splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and re.fullmatch(r"\d+", cols[0]):
            cols[6] = cols[7] = "_"
        out.append("\t".join(cols))
    return "\n".join(out) + "\n"


def models() -> dict[str, object]:
    train = synthetic(200, seed=901, nonprojective_rate=1.0)
    graph = dict(
        epochs=3, arc_templates=ARC, sibling_templates=SIB, labeler_templates=LAB, max_bits=10
    )
    return {
        "arceager": ArcEagerParser(AE_SET, epochs=4, min_lifted_label_count=1).fit(train),
        "graph1": GraphParser(order=1, **graph).fit(train),
        "graph1_cle": GraphParser(order=1, decoder="cle", **graph).fit(train),
        "graph2": GraphParser(order=2, **{**graph, "arc_templates": WEAK_ARC}).fit(train),
    }


def main() -> None:
    (HERE / "expected").mkdir(exist_ok=True)
    text = blank_heads(synthetic(40, seed=902, nonprojective_rate=1.0).to_string())
    (HERE / "input.conllu").write_text(text, encoding="utf-8")
    inp = depfs.read_conllu(HERE / "input.conllu")
    arrays: dict[str, np.ndarray] = {}
    for name, parser in models().items():
        path = HERE / f"{name}.depfs"
        parser.save(path)  # type: ignore[attr-defined]
        loaded = depfs.load(path)
        parsed = loaded.parse(inp, threads=1)
        (HERE / "expected" / f"{name}.conllu").write_text(parsed.to_string(), encoding="utf-8")
        print(f"{path.name}: {path.stat().st_size} bytes")
        if name == "arceager":
            for beta in (0.0, 1.0):
                t = loaded.trajectories(inp, beta=beta, sentences=range(5))
                for key, value in t.items():
                    arrays[f"ae_beta{int(beta)}_{key}"] = value
            arrays["ae_template_scores"] = loaded.template_scores(arrays["ae_beta0_features"])
        else:
            for i, m in enumerate(loaded.arc_scores(inp, range(5))):
                arrays[f"{name}_arc_scores_{i}"] = m
    np.savez_compressed(HERE / "arrays.npz", **arrays)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
