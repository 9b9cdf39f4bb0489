"""depfs.evaluate: hand-computed scores, a pure-Python reference, alignment errors."""

from __future__ import annotations

from pathlib import Path

import depfs
import pytest
from depfs.datasets import perturb, synthetic_conllu, ud_available, ud_path
from depfs.errors import AlignmentError, DepfsError
from depfs.evaluate import Scores
from hypothesis import given, settings
from hypothesis import strategies as st

Treebank = depfs.Treebank


def conllu(*sentences: list[str]) -> str:
    """Sentences given as lists of lines (10 columns separated by single spaces for
    readability; `_` stays `_`)."""
    out = []
    for lines in sentences:
        out.extend(line if line.startswith("#") else "\t".join(line.split()) for line in lines)
        out.append("")
    return "\n".join(out) + "\n"


# "Vámonos al mar ." with two multiword tokens and an empty node; gold.
GOLD = conllu(
    [
        "# sent_id = es-1",
        "1-2 Vámonos _ _ _ _ _ _ _ _",
        "1 Vamos ir VERB _ _ 0 root _ _",
        "2 nos nosotros PRON _ _ 1 obj _ _",
        "3-4 al _ _ _ _ _ _ _ _",
        "3 a a ADP _ _ 5 case _ _",
        "4 el el DET _ _ 5 det _ _",
        "5 mar mar NOUN _ _ 1 obl:arg _ _",
        "5.1 ir ir VERB _ _ _ _ 1:conj _",
        "6 . . PUNCT _ _ 1 punct _ _",
    ],
    [
        "# sent_id = en-2",
        "1 Dogs dog NOUN _ _ 2 nsubj _ _",
        "2 bark bark VERB _ _ 0 root _ _",
        "3 ! ! PUNCT _ _ 2 punct _ _",
    ],
)
# The system: "el" attached to 1 (head wrong); "mar" obl (subtype dropped);
# "." attached to 5 with label obj (both wrong, punctuation); "Dogs" labelled obj.
SYSTEM = conllu(
    [
        "1-2 Vámonos _ _ _ _ _ _ _ _",
        "1 Vamos ir VERB _ _ 0 root _ _",
        "2 nos nosotros PRON _ _ 1 obj _ _",
        "3-4 al _ _ _ _ _ _ _ _",
        "3 a a ADP _ _ 5 case _ _",
        "4 el el DET _ _ 1 det _ _",
        "5 mar mar NOUN _ _ 1 obl _ _",
        "6 . . PUNCT _ _ 5 obj _ _",
    ],
    [
        "1 Dogs dog NOUN _ _ 2 obj _ _",
        "2 bark bark VERB _ _ 0 root _ _",
        "3 ! ! PUNCT _ _ 2 punct _ _",
    ],
)


def test_hand_computed_scores():
    s = depfs.evaluate(Treebank.from_string(GOLD), Treebank.from_string(SYSTEM))
    # 9 words (the ranges 1-2, 3-4 and the empty node 5.1 are not words); 2 punctuation.
    # heads right: all but "el" and "." -> 7; labels right (universal): all but "." and
    # "Dogs" -> 7 (obl:arg = obl); both: all but el, ., Dogs -> 6.
    assert s == Scores(
        words=9,
        words_nopunct=7,
        uas_correct=7,
        las_correct=6,
        label_correct=7,
        uas_correct_nopunct=6,  # all but "el"
        las_correct_nopunct=5,  # all but "el", "Dogs"
        label_correct_nopunct=6,  # all but "Dogs"
        # Same tags and lemmas on both sides (tag scores: see the reference tests).
        upos_correct=9,
        xpos_correct=9,
        ufeats_correct=9,
        alltags_correct=9,
        lemma_correct=9,
        # Words with a value: every UPOS and LEMMA, no XPOS or FEATS.
        gold_upos=9,
        gold_xpos=0,
        gold_feats=0,
        gold_lemma=9,
        system_upos=9,
        system_xpos=0,
        system_feats=0,
        system_lemma=9,
    )
    assert s.uas == pytest.approx(700 / 9)
    assert s.las_nopunct == pytest.approx(500 / 7)
    d = s.as_dict(digits=2)
    assert d == {
        "uas": 77.78,
        "las": 66.67,
        "uas_nopunct": 85.71,
        "las_nopunct": 71.43,
        "label_acc": 77.78,
        "label_acc_nopunct": 85.71,
        "words": 9,
        "words_nopunct": 7,
    }
    # XPOS and FEATS are `_` on both sides: not scored, nor AllTags (None, the key kept).
    assert s.tag_scores == ("upos", "lemmas")
    tags = s.as_dict(digits=2, tags=True)
    assert (tags["xpos"], tags["alltags"], tags["upos"]) == (None, None, 100.0)


def test_full_labels_count_subtypes():
    s = depfs.evaluate(Treebank.from_string(GOLD), Treebank.from_string(SYSTEM), full_labels=True)
    # "mar" obl:arg vs obl is now a label error too.
    assert (s.las_correct, s.label_correct) == (5, 6)
    assert (s.las_correct_nopunct, s.label_correct_nopunct) == (4, 5)


def test_identical_treebanks_score_100():
    gold = Treebank.from_string(GOLD)
    s = depfs.evaluate(gold, gold)
    assert (s.uas, s.las, s.label_acc, s.uas_nopunct, s.las_nopunct) == (100.0,) * 5


def test_accepts_paths(tmp_path: Path):
    g, sy = tmp_path / "gold.conllu", tmp_path / "sys.conllu"
    g.write_text(GOLD, encoding="utf-8")
    sy.write_text(SYSTEM, encoding="utf-8")
    from_paths = depfs.evaluate(str(g), sy)
    assert from_paths == depfs.evaluate(Treebank.from_string(GOLD), Treebank.from_string(SYSTEM))
    with pytest.raises(TypeError, match="Treebank or a path"):
        depfs.evaluate(42, g)  # type: ignore[arg-type]


def test_scores_are_frozen():
    s = depfs.evaluate(Treebank.from_string(GOLD), Treebank.from_string(GOLD))
    with pytest.raises(AttributeError):
        s.words = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("system", "message"),
    [
        (
            GOLD.replace("Dogs\tdog", "Cats\tcat"),
            'sentence 2 (sent_id = en-2): word 1: gold form "Dogs", system form "Cats"',
        ),
        (
            GOLD.replace("3\t!\t!\tPUNCT\t_\t_\t2\tpunct\t_\t_\n", ""),
            "sentence 2 (sent_id = en-2): gold has 3 words, system has 2"
            ' (first unmatched: gold word 3 "!")',
        ),
        (GOLD.split("\n\n")[0] + "\n\n", "gold has 2 sentences, system has 1"),
    ],
)
def test_misaligned_files_are_refused(system: str, message: str):
    with pytest.raises(AlignmentError) as info:
        depfs.evaluate(Treebank.from_string(GOLD), Treebank.from_string(system))
    assert str(info.value) == message
    assert isinstance(info.value, DepfsError)


# --------------------------------------------------------------------------- reference


def reference_scores(gold_text: str, system_text: str, full_labels: bool = False) -> Scores:
    """A readable pure-Python scorer over CoNLL-U text, for checking the Rust one."""

    def words(text: str) -> list[list[list[str]]]:
        sentences = []
        for block in text.strip("\n").split("\n\n"):
            rows = [line.split("\t") for line in block.split("\n") if not line.startswith("#")]
            sentences.append([r for r in rows if r[0].isdigit()])
        return sentences

    def label(deprel: str) -> str:
        return deprel if full_labels else deprel.split(":")[0]

    universal = {
        "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy",
        "Number", "Case", "Definite", "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice",
        "Evident", "Polarity", "Person", "Polite",
    }  # fmt: skip

    def ufeats(feats: str) -> str:
        return "|".join(sorted(f for f in feats.split("|") if f.split("=")[0] in universal))

    counts = dict.fromkeys(Scores.__dataclass_fields__, 0)
    gold, system = words(gold_text), words(system_text)
    assert len(gold) == len(system)
    for gs, ss in zip(gold, system):
        assert [g[1] for g in gs] == [s[1] for s in ss]
        for g, s in zip(gs, ss):
            head_ok = g[6] == s[6]
            label_ok = label(g[7]) == label(s[7])
            for suffix in ("", "_nopunct") if g[3] != "PUNCT" else ("",):
                counts["words" + suffix] += 1
                counts["uas_correct" + suffix] += head_ok
                counts["las_correct" + suffix] += head_ok and label_ok
                counts["label_correct" + suffix] += label_ok
            tags = [g[3] == s[3], g[4] == s[4], ufeats(g[5]) == ufeats(s[5])]
            counts["upos_correct"] += tags[0]
            counts["xpos_correct"] += tags[1]
            counts["ufeats_correct"] += tags[2]
            counts["alltags_correct"] += all(tags)
            counts["lemma_correct"] += g[2] == "_" or g[2] == s[2]
            for name, c in (("upos", 3), ("xpos", 4), ("feats", 5), ("lemma", 2)):
                counts["gold_" + name] += g[c] != "_"
                counts["system_" + name] += s[c] != "_"
    return Scores(**counts)


def to_text(tb: depfs.Treebank, tmp: Path) -> str:
    path = tmp / "tb.conllu"
    tb.write(path)
    return path.read_text(encoding="utf-8")


def test_reference_on_hand_example():
    assert reference_scores(GOLD, SYSTEM) == depfs.evaluate(
        Treebank.from_string(GOLD), Treebank.from_string(SYSTEM)
    )


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    head_rate=st.floats(0, 1),
    label_rate=st.floats(0, 1),
    full_labels=st.booleans(),
)
def test_matches_reference_on_perturbed_synthetic(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    head_rate: float,
    label_rate: float,
    full_labels: bool,
):
    gold_text = synthetic_conllu(30, seed=seed)
    gold = Treebank.from_string(gold_text)
    system = perturb(gold, head_rate=head_rate, label_rate=label_rate, seed=seed)
    system_text = to_text(system, tmp_path_factory.mktemp("p"))
    expected = reference_scores(gold_text, system_text, full_labels)
    assert depfs.evaluate(gold, system, full_labels=full_labels) == expected


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), rate=st.floats(0, 1))
def test_tag_scores_match_reference(seed: int, rate: float):
    """Tags, features and lemmas changed at random: the same counts as the reference."""
    import random

    rng = random.Random(seed)
    gold_text = synthetic_conllu(20, seed=seed)
    lines = []
    for line in gold_text.splitlines():
        cols = line.split("\t")
        if len(cols) == 10:
            for c, new in ((2, "x"), (3, "X"), (4, "XX"), (5, rng.choice(["_", "Number=Sing"]))):
                if rng.random() < rate:
                    cols[c] = new
            if rng.random() < rate:  # reordered features are the same UFeats
                cols[5] = "|".join(reversed(cols[5].split("|")))
        lines.append("\t".join(cols))
    system_text = "\n".join(lines) + "\n"
    expected = reference_scores(gold_text, system_text)
    got = depfs.evaluate(Treebank.from_string(gold_text), Treebank.from_string(system_text))
    assert got == expected


# --------------------------------------------------------------------------- UD data

needs_ewt = pytest.mark.skipif(
    not ud_available("en_ewt", "dev"), reason="UD en_ewt not found (DEPFS_DATA)"
)

# Correct UAS / LAS words the CoNLL 2018 scorer (conll18_ud_eval.py v1.2) reports for en_ewt
# dev against perturb(dev, head_rate=0.1, label_rate=0.1, seed=1): 90.83 / 82.70 of 25147.
OFFICIAL_EWT_DEV_COUNTS = (22841, 20797)


@pytest.mark.ud
@needs_ewt
def test_en_ewt_dev_perturbed_matches_official_scorer():
    """Same numbers as the official scorer run by hand on the written perturbed file."""
    gold = depfs.read_conllu(ud_path("en_ewt", "dev"))
    system = perturb(gold, head_rate=0.1, label_rate=0.1, seed=1)
    s = depfs.evaluate(gold, system)
    assert s.words == 25147
    assert (s.uas_correct, s.las_correct) == OFFICIAL_EWT_DEV_COUNTS


@pytest.mark.ud
@needs_ewt
def test_en_ewt_dev_matches_reference(tmp_path: Path):
    path = ud_path("en_ewt", "dev")
    gold = depfs.read_conllu(path)
    system = perturb(gold, head_rate=0.2, label_rate=0.2, seed=5)
    expected = reference_scores(path.read_text(encoding="utf-8"), to_text(system, tmp_path))
    assert depfs.evaluate(path, system) == expected
