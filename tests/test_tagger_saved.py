"""Saved taggers of the current variants tag byte for byte as the build that saved them
did: the default (case rule, backward pass) and one with word clusters, both with more
than 64 classes in XPOS, FEATS and LEMMA and words the dictionary does not know, so that
every way a decision is scored is met (docs/design.md § Tagger, "Speed": a few
candidates one by one, many candidates of at most 64 classes all at once, more than 64
classes by their row multipliers).

The files were saved, and the expected output written, by main at 5244b27 (before the
speed work) with ``python tests/test_tagger_saved.py``, which rewrites them with the build
it runs: run it only to pin a deliberate change of the tags, and say so. The dynamic
tagger (prefix-margin training, tagged at three margins by the rule) was saved by main at
1f98b96, before the lazy path's speed work (issue 15), with ``python
tests/test_tagger_saved.py dynamic``, which rewrites only it.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import depfs
from depfs import Tagger, Treebank

DATA = Path(__file__).parent / "data"
UPOS = ("NOUN", "VERB", "ADJ", "ADV", "PROPN", "NUM", "PRON", "DET", "ADP", "AUX")
SUFFIXES = ("", "s", "ed", "ing", "er", "ly", "ness", "est", "ion", "al", "ic", "ous")
KW = {"epochs": 2, "random_state": 3}


def lexicon(seed: int) -> list[tuple[str, str, list[str], int, str]]:
    """Word types (form, lemma, its UPOS tags, an XPOS digit, a case letter): every third
    type takes two UPOS; 9 XPOS values per UPOS (90 in all) and 12 cases per UPOS in FEATS,
    lemmas by stripping and adding suffixes (well over 64 scripts)."""
    rng, out = random.Random(seed), []
    for k in range(700):
        syllables = range(2 + k % 3)
        stem = "".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou") for _ in syllables)
        tags = [UPOS[k % len(UPOS)]] + ([UPOS[(k // 3) % len(UPOS)]] if k % 3 == 0 else [])
        form = stem + rng.choice(SUFFIXES)
        lemma = stem + rng.choice(("", "e", "y", "um", "a"))
        out.append((form, lemma, tags, rng.randrange(9), "ABCDEFGHIJKL"[rng.randrange(12)]))
    return out


def conllu(words: list[tuple[str, str, list[str], int, str]], n: int, seed: int) -> str:
    """`n` sentences of 3 to 12 words drawn with a skew towards the first types, the first
    word capitalised."""
    rng, lines = random.Random(seed), []
    for s in range(n):
        lines.append(f"# sent_id = s{s}")
        length = rng.randint(3, 12)
        for i in range(1, length + 1):
            form, lemma, tags, digit, case = words[int(len(words) * rng.random() ** 2)]
            upos = rng.choice(tags)
            if i == 1:
                form = form.capitalize()
            feats = f"Case={case}|Kind={upos.lower()}"
            cols = (form, lemma, upos, f"{upos}{digit}", feats, str(i - 1), "dep", "_", "_")
            lines.append("\t".join((str(i), *cols)))
        lines.append("")
    return "\n".join(lines) + "\n"


def split() -> tuple[Treebank, str]:
    """Training text of the first 550 types; the input to tag draws on all 700 (unknown
    words too), its tag columns blanked."""
    words = lexicon(11)
    train = Treebank.from_string(conllu(words[:550], 500, 1))
    test = conllu(words, 120, 2)
    blank = []
    for line in test.splitlines():
        cols = line.split("\t")
        if len(cols) == 10:
            cols[2:6] = ["_"] * 4
        blank.append("\t".join(cols))
    return train, "\n".join(blank) + "\n"


def paths_file(path: Path) -> Path:
    """Brown paths for the lower-cased forms of every other type: the UPOS in the first
    bits, the rest the type's number."""
    lines = []
    for k, (form, _, tags, _, _) in enumerate(lexicon(11)):
        if k % 2 == 0:
            lines.append(f"{UPOS.index(tags[0]):04b}{k:010b}\t{form}\t{10 + k}")
    path.write_text("\n".join(lines) + "\n")
    return path


def check(name: str) -> None:
    model = depfs.load(DATA / f"tagger_{name}_v5.depfs")
    assert all(len(model.model_.classes(c)) > 64 for c in ("XPOS", "FEATS", "LEMMA"))
    assert model.model_.cased and model.model_.backward_templates is not None
    inp = Treebank.from_string(split()[1])
    expected = (DATA / "expected" / f"tagger_{name}_v5.conllu").read_text(encoding="utf-8")
    assert model.tag(inp, threads=1).to_string() == expected
    assert model.tag(inp, threads=2).to_string() == expected


def test_the_saved_default_tags_as_it_did() -> None:
    check("cased")


def test_the_saved_tagger_with_clusters_tags_as_it_did() -> None:
    check("clusters")
    assert depfs.load(DATA / "tagger_clusters_v5.depfs").model_.clusters is not None


#: Margins the saved dynamic tagger tags at: one that stops most decisions after two or
#: three templates, one after about 20 (of 50), every template.
DYNAMIC_MARGINS = (60.0, 300.0, float("inf"))


def dynamic_output(model: Tagger, inp: Treebank, threads: int) -> tuple[str, list[float]]:
    """The tags at each of DYNAMIC_MARGINS, one after the other, and the templates per
    decision of each."""
    out, per_decision = [], []
    for margin in DYNAMIC_MARGINS:
        tagged, counts = model.model_.tag_counted(inp, margin, threads)
        out.append(f"# margin = {margin}\n{tagged.to_string()}")
        used, decisions = (sum(x[k] for x in counts.values()) for k in (0, 1))
        per_decision.append(used / decisions)
    return "".join(out), per_decision


def test_the_saved_dynamic_tagger_tags_as_it_did() -> None:
    """Every way the prefix-margin rule scores (a few classes by rotation, more than 64 by
    row multipliers; stopped early and run to the end) against main's tags."""
    model = depfs.load(DATA / "tagger_dynamic_v5.depfs")
    assert all(len(model.model_.classes(c)) > 64 for c in ("XPOS", "FEATS", "LEMMA"))
    inp = Treebank.from_string(split()[1])
    expected = (DATA / "expected" / "tagger_dynamic_v5.conllu").read_text(encoding="utf-8")
    for threads in (1, 2):
        out, per_decision = dynamic_output(model, inp, threads)
        assert out == expected
    assert per_decision[0] < 5 < per_decision[-1] == len(model.model_.templates("UPOS"))


def save(tmp: Path, names: list[str]) -> None:
    """Trains, saves and tags with the build this runs on (see the module comment)."""
    train, inp = split()
    models = {
        "cased": lambda: Tagger(**KW),
        "clusters": lambda: Tagger(clusters=paths_file(tmp / "paths.txt"), **KW),
        "dynamic": lambda: Tagger(dynamic=True, **KW),
    }
    for name in names or ["cased", "clusters"]:
        models[name]().fit(train).save(DATA / f"tagger_{name}_v5.depfs")
        model = depfs.load(DATA / f"tagger_{name}_v5.depfs")
        if name == "dynamic":
            out = dynamic_output(model, Treebank.from_string(inp), 1)[0]
        else:
            out = model.tag(Treebank.from_string(inp), threads=1).to_string()
        (DATA / "expected" / f"tagger_{name}_v5.conllu").write_text(out, encoding="utf-8")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        save(Path(tmp), sys.argv[1:])
    sys.exit(0)
