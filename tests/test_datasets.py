"""depfs.datasets: the synthetic grammar, perturbation and UD path resolution."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import depfs
import pytest
from depfs.datasets import data_dir, perturb, synthetic, synthetic_conllu, ud_available, ud_path
from depfs.errors import DepfsIOError


def rows(text: str) -> list[list[list[str]]]:
    return [
        [line.split("\t") for line in block.split("\n") if not line.startswith("#")]
        for block in text.strip("\n").split("\n\n")
    ]


def test_deterministic_per_seed():
    assert synthetic_conllu(50, seed=3) == synthetic_conllu(50, seed=3)
    assert synthetic_conllu(50, seed=3) != synthetic_conllu(50, seed=4)
    # A longer sample starts with the shorter one (sentences are drawn in sequence).
    assert synthetic_conllu(80, seed=3).startswith(synthetic_conllu(50, seed=3))


def test_valid_conllu_that_round_trips(tmp_path: Path):
    text = synthetic_conllu(300, seed=1)
    tb = synthetic(300, seed=1)  # the reader validates ids, heads, cycles and single roots
    assert len(tb) == 300
    out = tmp_path / "s.conllu"
    tb.write(out)
    assert out.read_text(encoding="utf-8") == text
    for sent in rows(text):
        assert [int(r[0]) for r in sent] == list(range(1, len(sent) + 1))
        assert sum(r[6] == "0" for r in sent) == 1
        assert all(len(r) == 10 for r in sent)


def test_some_nonprojective_sentences_but_few():
    s = depfs.stats(synthetic(1000, seed=0))
    assert 0.005 < s.nonprojective_sentence_share < 0.15
    assert depfs.stats(synthetic(300, seed=0, nonprojective_rate=0.0)).nonprojective_arcs == 0


def test_label_and_pos_diversity():
    text = synthetic_conllu(500, seed=2)
    words = [r for sent in rows(text) for r in sent]
    upos = Counter(r[3] for r in words)
    labels = Counter(r[7] for r in words)
    assert {"NOUN", "VERB", "DET", "ADJ", "ADP", "PRON", "PROPN", "PUNCT", "CCONJ"} <= set(upos)
    assert {"nsubj", "obj", "obl", "nmod", "det", "amod", "case", "punct", "conj", "root"} <= set(
        labels
    )
    assert len(labels) >= 14 and len({r[1] for r in words}) > 100
    assert all(r[2] != "_" for r in words)  # every word has a lemma
    assert any("Number=Plur" in r[5] for r in words)


def test_labels_follow_from_head_and_dependent_pos():
    """Learnable: the label is almost always fixed by (head UPOS, dependent UPOS, direction)."""
    text = synthetic_conllu(1000, seed=4)
    by_context: defaultdict[tuple[str, str, bool], Counter[str]] = defaultdict(Counter)
    for sent in rows(text):
        for r in sent:
            head = int(r[6])
            head_upos = sent[head - 1][3] if head else "ROOT"
            by_context[(head_upos, r[3], head < int(r[0]))][r[7]] += 1
    majority = sum(c.most_common(1)[0][1] for c in by_context.values())
    total = sum(sum(c.values()) for c in by_context.values())
    assert majority / total > 0.9


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_sentences"):
        synthetic_conllu(-1)
    with pytest.raises(ValueError, match="nonprojective_rate"):
        synthetic_conllu(3, nonprojective_rate=2.0)
    assert synthetic_conllu(0) == ""


def test_perturb_is_seeded_and_keeps_trees(tmp_path: Path):
    gold = synthetic(200, seed=0)
    a, b = perturb(gold, 0.3, 0.3, seed=9), perturb(gold, 0.3, 0.3, seed=9)
    pa, pb = tmp_path / "a.conllu", tmp_path / "b.conllu"
    a.write(pa)
    b.write(pb)
    assert pa.read_text() == pb.read_text()
    again = depfs.read_conllu(pa)  # reading validates: one root, no cycle
    assert len(again) == 200
    s = depfs.evaluate(gold, a)
    assert 60 < s.uas < 90 and s.las < s.uas
    assert depfs.evaluate(gold, perturb(gold, 0.0, 0.0)).las == 100.0


def test_perturb_rejects_bad_rates():
    with pytest.raises(ValueError, match="head_rate must be in"):
        perturb(synthetic(2), head_rate=-0.1)


def test_ud_path_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "xx_test").mkdir()
    (tmp_path / "xx_test" / "dev.conllu").write_text("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n")
    monkeypatch.setenv("DEPFS_DATA", str(tmp_path))
    assert data_dir() == tmp_path
    assert ud_path("xx_test", "dev") == tmp_path / "xx_test" / "dev.conllu"
    assert ud_available("xx_test", "dev") and not ud_available("xx_test", "train")
    with pytest.raises(DepfsIOError, match="no such UD file"):
        ud_path("xx_test", "train")
    with pytest.raises(ValueError, match="split"):
        ud_path("xx_test", "validation")


def test_ud_default_dir_relative_to_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("DEPFS_DATA", raising=False)
    work = tmp_path / "repo"
    work.mkdir()
    monkeypatch.chdir(work)
    assert data_dir() is None
    with pytest.raises(DepfsIOError, match="DEPFS_DATA"):
        ud_path("en_ewt", "dev")
    (tmp_path / "shared" / "data" / "ud").mkdir(parents=True)
    assert data_dir() == Path("..") / "shared" / "data" / "ud"
