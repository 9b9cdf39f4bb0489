"""depfs.stats on hand-built treebanks, and non-projectivity against a brute force."""

from __future__ import annotations

from pathlib import Path

import depfs
import pytest
from depfs.datasets import synthetic_conllu, ud_available, ud_path

Treebank = depfs.Treebank


def sentence(*rows: str) -> str:
    return "\n".join(r if r.startswith("#") else "\t".join(r.split()) for r in rows) + "\n\n"


# 1: projective, 3 words; 2: non-projective (arc 4 -> 2 crosses the root arc of 3,
# arc 1 -> 4 spans the root 3), a multiword token and an empty node.
TEXT = sentence(
    "# sent_id = a",
    "1 The the DET _ _ 2 det _ _",
    "2 dog dog NOUN _ _ 0 root _ _",
    "3 . . PUNCT _ _ 2 punct _ _",
) + sentence(
    "# sent_id = b",
    "1-2 xy _ _ _ _ _ _ _ _",
    "1 x x NOUN _ _ 3 nsubj _ _",
    "2 y y NOUN _ _ 4 obj _ _",
    "3 z z VERB _ _ 0 root _ _",
    "3.1 e e VERB _ _ _ _ 3:conj _",
    "4 w w VERB _ _ 1 acl:relcl _ _",
    "5 . . PUNCT _ _ 3 punct _ _",
)


def test_hand_built_treebank():
    s = depfs.stats(Treebank.from_string(TEXT))
    assert (s.sentences, s.words, s.max_length, s.arcs) == (2, 8, 5, 8)
    assert s.mean_length == 4.0
    assert (s.nonprojective_sentences, s.nonprojective_arcs) == (1, 2)
    assert s.nonprojective_sentence_share == 0.5
    assert s.nonprojective_arc_share == 0.25
    assert (s.multiword_tokens, s.empty_nodes) == (1, 1)
    assert s.labels == {
        "acl:relcl": 1,
        "det": 1,
        "nsubj": 1,
        "obj": 1,
        "punct": 2,
        "root": 2,
    }
    d = s.as_dict()
    assert d["mean_length"] == 4.0 and d["labels"]["punct"] == 2 and d["empty_nodes"] == 1


def test_single_word_sentence_has_no_nonprojective_arcs():
    s = depfs.stats(Treebank.from_string(sentence("1 a a X _ _ 0 root _ _")))
    assert (s.sentences, s.words, s.nonprojective_arc_share) == (1, 1, 0.0)


def test_accepts_a_path(tmp_path: Path):
    p = tmp_path / "x.conllu"
    p.write_text(TEXT, encoding="utf-8")
    assert depfs.stats(p) == depfs.stats(Treebank.from_string(TEXT))


def brute_force_nonprojective(text: str) -> tuple[int, int]:
    """(non-projective sentences, arcs) by the definition: an arc h -> d is projective iff
    h dominates every word strictly between them."""
    n_sent = n_arcs = 0
    for block in text.strip("\n").split("\n\n"):
        heads = [
            int(r.split("\t")[6])
            for r in block.split("\n")
            if not r.startswith("#") and r.split("\t")[0].isdigit()
        ]

        def dominates(h: int, k: int, heads: list[int] = heads) -> bool:
            while k != 0 and k != h:
                k = heads[k - 1]
            return k == h

        bad = sum(
            any(not dominates(h, k) for k in range(min(h, d) + 1, max(h, d)))
            for d, h in enumerate(heads, start=1)
        )
        n_arcs += bad
        n_sent += bad > 0
    return n_sent, n_arcs


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nonprojectivity_matches_brute_force_on_synthetic(seed: int):
    text = synthetic_conllu(400, seed=seed)
    s = depfs.stats(Treebank.from_string(text))
    assert (s.nonprojective_sentences, s.nonprojective_arcs) == brute_force_nonprojective(text)
    assert s.nonprojective_arcs > 0


@pytest.mark.ud
@pytest.mark.skipif(not ud_available("en_ewt", "dev"), reason="UD en_ewt not found")
def test_en_ewt_dev():
    path = ud_path("en_ewt", "dev")
    s = depfs.stats(path)
    text = path.read_text(encoding="utf-8")
    assert s.sentences == 2001 and s.words == 25147
    assert (s.nonprojective_sentences, s.nonprojective_arcs) == brute_force_nonprojective(text)
    assert s.multiword_tokens == sum(
        1 for line in text.split("\n") if "-" in line.split("\t")[0] and line[:1].isdigit()
    )
    assert s.empty_nodes == sum(
        1 for line in text.split("\n") if "." in line.split("\t")[0] and line[:1].isdigit()
    )
