"""depfs.arceager: transition system, oracle arrays and pseudo-projective parsing."""

from __future__ import annotations

import os
from pathlib import Path

import depfs
import numpy as np
import pytest
from depfs import _core
from depfs.arceager import MOVES, deprojectivize, oracle_trajectories, projectivize


def _sentence(words: list[tuple[str, str, int, str]]) -> str:
    lines = [
        f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t_\t{head}\t{rel}\t_\t_"
        for i, (form, upos, head, rel) in enumerate(words, start=1)
    ]
    return "\n".join(lines) + "\n\n"


DOG = _sentence(
    [("The", "DET", 2, "det"), ("dog", "NOUN", 3, "nsubj"), ("barks", "VERB", 0, "root"),
     (".", "PUNCT", 3, "punct")]
)  # fmt: skip
# Word 2 hangs from 4 across word 3, which 4 does not dominate: non-projective.
CROSSING = _sentence(
    [("A", "X", 0, "root"), ("B", "X", 4, "a"), ("C", "X", 1, "b"), ("D", "X", 1, "c")]
)


def heads(tb: _core.Treebank) -> list[list[int]]:
    return [list(s.heads) for s in tb]


def test_oracle_with_beta_one_is_the_static_oracle():
    t = oracle_trajectories(depfs.Treebank.from_string(DOG))
    moves = [MOVES[k] for k in t["followed"]]
    assert moves == ["SHIFT", "LEFT-ARC", "SHIFT", "LEFT-ARC", "RIGHT-ARC", "RIGHT-ARC"]
    # Initial configuration: stack [ROOT], buffer The dog barks . ; REDUCE and LEFT-ARC invalid,
    # RIGHT-ARC(ROOT, The) loses The's head and ROOT's gold dependent.
    assert list(t["cost"][0]) == [0, -1, -1, 2]
    assert list(t["s0"][:2]) == [0, 1] and list(t["b0"][:2]) == [1, 2]


def test_random_exploration_keeps_oracle_moves_at_zero_cost():
    tb = depfs.Treebank.from_string((DOG + CROSSING) * 5)
    t = oracle_trajectories(tb, beta=0.3, random_state=4)
    rows = np.arange(len(t["sentence"]))
    assert (t["cost"][rows, t["followed"]] >= 0).all()  # followed moves are valid
    assert (t["cost"][rows, t["oracle"]] == 0).all()
    assert set(t["sentence"]) == {0, 2, 4, 6, 8}  # non-projective trees are skipped
    again = oracle_trajectories(tb, beta=0.3, random_state=4)
    for key in t:
        np.testing.assert_array_equal(t[key], again[key])
    with pytest.raises(ValueError, match="beta"):
        oracle_trajectories(tb, beta=1.5)
    with pytest.raises(ValueError, match="out of range"):
        oracle_trajectories(tb, sentences=[99])


def test_projectivize_then_deprojectivize_restores_the_tree():
    tb = depfs.Treebank.from_string(DOG + CROSSING)
    proj, stats = projectivize(tb)
    assert stats == {"sentences": 2, "nonprojective_sentences": 1, "lifted_words": 1, "skipped": 0}
    assert heads(proj)[1] == [0, 1, 1, 1]
    assert proj[1].deprels == ["root", "a↑c", "b", "c"]
    back = deprojectivize(proj)
    assert heads(back) == heads(tb)
    assert [s.deprels for s in back] == [s.deprels for s in tb]


def _ud_dir() -> Path | None:
    here = Path(__file__).resolve().parent.parent
    for c in (os.environ.get("DEPFS_DATA"), here.parent / "shared/data/ud"):
        if c and (Path(c) / "pt_bosque" / "dev.conllu").exists():
            return Path(c)
    return None


@pytest.mark.ud
def test_pt_bosque_dev_round_trip_rate():
    d = _ud_dir()
    if d is None:
        pytest.skip("UD data not found (set DEPFS_DATA)")
    tb = depfs.read_conllu(d / "pt_bosque" / "dev.conllu")
    proj, stats = projectivize(tb)
    back = deprojectivize(proj)
    changed = [i for i, (a, b) in enumerate(zip(heads(tb), heads(proj))) if a != b]
    assert len(changed) == stats["nonprojective_sentences"] > 0
    restored = sum(heads(back)[i] == heads(tb)[i] for i in changed)
    assert restored / len(changed) > 0.8
    t = oracle_trajectories(proj, beta=1.0)
    assert len(set(t["sentence"])) == len(tb)  # every projectivised tree is usable
