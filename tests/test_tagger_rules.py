"""The tagger's candidate rules (`Tagger(rules=...)`, docs/design.md § Tagger, "Candidate
rules"): FEATS widened by the predicted XPOS, known lemmas, XPOS siblings; on by default;
saved and loaded as their own model variant; refused where they cannot apply."""

from __future__ import annotations

import random
from pathlib import Path

import depfs
import pytest
from depfs import Tagger, Treebank
from depfs.errors import ModelError

SET = "form(i)\nsuffix:2(i)\nlower(i-1)\nupos(i-1)\nxpos(i)\nxpos(i) & lower(i-1)\n"
SG, PL = "Number=Sing|Tense=Past", "Number=Plur|Tense=Past"


def verbs(n: int, seed: int) -> str:
    """ "he VERBed ." (FEATS singular) and "they VERBed ." (plural) with 30 verbs seen with
    both, and "founded" only after "they" (twice): its (form, UPOS) entry offers the plural
    alone."""
    rng, out = random.Random(seed), []
    forms = [f"{a}{b}ed" for a in ("walk", "jump", "talk", "play", "kick") for b in "abcdef"]
    rows = [("they", "founded")] * 2
    rows += [(rng.choice(("he", "they")), rng.choice(forms)) for _ in range(n)]
    for s, (subj, verb) in enumerate(rows):
        feats = SG if subj == "he" else PL
        out.append(f"# sent_id = v{s}")
        pron = "Case=Nom|" + feats.split("|")[0]
        out.append(f"1\t{subj}\t{subj}\tPRON\tPRP\t{pron}\t2\tnsubj\t_\t_")
        out.append(f"2\t{verb}\t{verb[:-2]}\tVERB\tVBD\t{feats}\t0\troot\t_\t_")
        out.append("3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_")
        out.append("")
    return "\n".join(out) + "\n"


def feats_of(t: Tagger, text: str) -> list[str]:
    return [w for s in t.tag(Treebank.from_string(text)) for w in s.feats]


def test_a_verb_seen_only_plural_is_tagged_singular_after_he_with_feats_by_xpos(
    tmp_path: Path,
) -> None:
    train = Treebank.from_string(verbs(300, 0))
    test = "1\the\t_\t_\t_\t_\t2\tnsubj\t_\t_\n2\tfounded\t_\t_\t_\t_\t0\troot\t_\t_\n\n"
    kw = {"epochs": 3, "backward": None}
    plain = Tagger(SET, rules=False, **kw).fit(train)
    ruled = Tagger(SET, **kw).fit(train)  # on by default
    assert feats_of(plain, test)[1] == PL, "the dictionary's entry alone: plural"
    assert feats_of(ruled, test)[1] == SG
    path = tmp_path / "rules.depfs"
    ruled.save(path)
    again = depfs.load(path)
    assert isinstance(again, Tagger)
    assert again.rules is True, "a loaded tagger reports its rules"
    assert feats_of(again, test)[1] == SG
    plain.save(tmp_path / "plain.depfs")
    assert depfs.load(tmp_path / "plain.depfs").rules is False
    big = Treebank.from_string(verbs(60, 1))
    assert again.tag(big, threads=2).to_string() == ruled.tag(big).to_string()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError):
        depfs.load(path)


def test_rules_need_ordinary_training_with_line_hashing() -> None:
    train = Treebank.from_string(verbs(20, 0))
    with pytest.raises(ValueError, match="need line hashing"):
        Tagger(SET, epochs=1, dynamic=True, rules=True).fit(train)
    with pytest.raises(ValueError, match="need line hashing"):
        Tagger(SET, epochs=1, line_hashing=False, cased=False, rules=True).fit(train)
    # By default they are off where they cannot apply.
    Tagger(SET, epochs=1, dynamic=True).fit(train)
    Tagger(SET, epochs=1, line_hashing=False, cased=False).fit(train)
