"""depfs.arceager: training, parsing, model files and the arrays for selection methods."""

from __future__ import annotations

import os
from pathlib import Path

import depfs
import numpy as np
import pytest
from depfs import _core
from depfs.arceager import (
    MOVES,
    ArcEagerParser,
    TrainingSet,
    deprojectivize,
    oracle_trajectories,
    projectivize,
    train_local,
)

SMALL_SET = """
upos(QUEUE_0)
form(QUEUE_0)
upos(STACK_0)
upos(STACK_0) & upos(QUEUE_0)
upos(QUEUE_1)
deprel(STACK_0 lc)
"""


def _sentence(words: list[tuple[str, str, int, str]]) -> str:
    lines = [
        f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t_\t{head}\t{rel}\t_\t_"
        for i, (form, upos, head, rel) in enumerate(words, start=1)
    ]
    return "\n".join(lines) + "\n\n"


def toy_treebank(copies: int = 20) -> _core.Treebank:
    """Short sentences with a regular grammar: DET NOUN VERB (DET NOUN) PUNCT."""
    a = _sentence(
        [
            ("The", "DET", 2, "det"),
            ("dog", "NOUN", 3, "nsubj"),
            ("barks", "VERB", 0, "root"),
            (".", "PUNCT", 3, "punct"),
        ]
    )
    b = _sentence(
        [
            ("A", "DET", 2, "det"),
            ("cat", "NOUN", 3, "nsubj"),
            ("sees", "VERB", 0, "root"),
            ("the", "DET", 5, "det"),
            ("dog", "NOUN", 3, "obj"),
            (".", "PUNCT", 3, "punct"),
        ]
    )
    c = _sentence(
        [("Dogs", "NOUN", 2, "nsubj"), ("sleep", "VERB", 0, "root"), (".", "PUNCT", 2, "punct")]
    )
    return depfs.Treebank.from_string((a + b + c) * copies)


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


def test_learns_a_toy_grammar_and_fills_heads_and_labels():
    train = toy_treebank()
    parser = ArcEagerParser(SMALL_SET, epochs=3).fit(train)
    parsed = parser.parse(train)
    assert heads(parsed) == heads(train)
    assert [s.deprels for s in parsed] == [s.deprels for s in train]
    assert set(parser.labels_) == {"det", "nsubj", "root", "punct", "obj"}
    assert len(parser.templates_) == 6


def test_training_is_seeded_and_deterministic():
    train = toy_treebank(5)
    a = ArcEagerParser(SMALL_SET, epochs=2, random_state=7).fit(train)
    b = ArcEagerParser(SMALL_SET, epochs=2, random_state=7).fit(train)
    ta = a.trajectories(train, beta=0.5, random_state=3)
    tb = b.trajectories(train, beta=0.5, random_state=3)
    for key in ["sentence", "followed", "model_move", "valid", "zero_cost"]:
        np.testing.assert_array_equal(getattr(ta, key), getattr(tb, key))
    np.testing.assert_array_equal(ta.features(SMALL_SET), tb.features(SMALL_SET))


def test_models_trained_on_one_training_set_equal_models_trained_alone(tmp_path: Path):
    train = toy_treebank(5)
    prepared = TrainingSet(train)
    assert prepared.n_usable == prepared.n_sentences == len(train)
    assert "nsubj" in prepared.labels and prepared.pseudo_projective
    subset = "\n".join(SMALL_SET.split("\n")[2:5])
    for templates in [subset, SMALL_SET]:
        shared = ArcEagerParser(templates, epochs=2).fit(prepared)
        alone = ArcEagerParser(templates, epochs=2).fit(train)
        # Without the training record (it says what was trained on: a set or a treebank).
        shared.model_.save(tmp_path / "shared.depfs", "")
        alone.model_.save(tmp_path / "alone.depfs", "")
        assert (tmp_path / "shared.depfs").read_bytes() == (tmp_path / "alone.depfs").read_bytes()
    with pytest.raises(ValueError, match="pseudo_projective"):
        ArcEagerParser(SMALL_SET, epochs=1, pseudo_projective=False).fit(prepared)
    with pytest.raises(TypeError, match="Treebank"):
        depfs.GraphParser(epochs=1).fit(prepared)


def test_model_file_round_trip_and_bad_file(tmp_path: Path):
    train = toy_treebank(5)
    parser = ArcEagerParser(SMALL_SET, epochs=2).fit(train)
    path = tmp_path / "m.depfs"
    parser.save(path)
    loaded = ArcEagerParser.load(path)
    assert heads(loaded.parse(train)) == heads(parser.parse(train))
    assert loaded.labels_ == parser.labels_
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(depfs.errors.ModelError, match="m.depfs"):
        ArcEagerParser.load(path)


def test_unfitted_parser_and_bad_templates_raise():
    with pytest.raises(ValueError, match="not trained"):
        ArcEagerParser().parse(toy_treebank(1))
    with pytest.raises(depfs.errors.TemplateError):
        ArcEagerParser("upos(NOWHERE_0)", epochs=1).fit(toy_treebank(1))


def test_trajectories_follow_the_oracle_when_beta_is_one():
    train = toy_treebank(2)
    parser = ArcEagerParser(SMALL_SET, epochs=1).fit(train)
    t = parser.trajectories(train, beta=1.0)
    n = len(t)
    assert len(t.sentence) == n and t.nbytes > 0
    features = t.features(SMALL_SET)
    assert features.shape == (n, 6) and features.dtype == np.uint64
    assert t.valid.shape == t.zero_cost.shape == (n, len(MOVES))
    rows = np.arange(n)
    # Every followed move is valid and, with beta = 1, has zero cost.
    assert t.valid[rows, t.followed].all()
    assert t.zero_cost[rows, t.followed].all()
    # Zero-cost moves are valid moves; the oracle path takes at most 2n moves per sentence.
    assert not (t.zero_cost & ~t.valid).any()
    assert n <= 2 * sum(len(s) for s in train)


def test_trajectory_features_of_any_template_set_are_replayed_on_demand():
    train = toy_treebank(3)
    parser = ArcEagerParser(SMALL_SET, epochs=2).fit(train)
    t = parser.trajectories(train, beta=0.0)
    full = t.features(SMALL_SET)
    # A subset's features are the matching columns of the full set's.
    lines = [x for x in SMALL_SET.strip().splitlines()]
    sub = t.features("\n".join([lines[4], lines[0]]), threads=2)
    np.testing.assert_array_equal(sub, full[:, [4, 0]])
    # A template that no parser used can be asked for too.
    other = t.features("lemma(STACK_0 h) & upos(QUEUE_2)")
    assert other.shape == (len(t), 1)
    with pytest.raises(depfs.errors.TemplateError):
        t.features("upos(NOWHERE_0)")


def test_template_scores_sum_to_the_model_scores():
    train = toy_treebank(3)
    parser = ArcEagerParser(SMALL_SET, epochs=2).fit(train)
    t = parser.trajectories(train, beta=0.0)
    scores = parser.template_scores(t.features(SMALL_SET))
    assert scores.shape == (len(t), 6, 4)
    total = scores.sum(axis=1)
    masked = np.where(t.valid, total, -np.inf)
    # The model's move is the best valid move of the summed per-template scores
    # (ties go to the lowest move index, as in Rust).
    np.testing.assert_array_equal(masked.argmax(axis=1), t.model_move)
    with pytest.raises(ValueError, match="columns"):
        parser.template_scores(t.features(SMALL_SET)[:, :3])
    # Floats (negative ones would wrap around) are not feature hashes.
    with pytest.raises(TypeError, match="uint64"):
        parser.template_scores(-t.features(SMALL_SET).astype(np.float64))


def test_local_classifiers_keep_their_weights_and_an_ensemble_parses(tmp_path: Path):
    train = toy_treebank(3)
    parser = ArcEagerParser(SMALL_SET, epochs=1).fit(train)
    t = parser.trajectories(train, beta=1.0)
    n = len(t)
    lines = SMALL_SET.strip().splitlines()
    a = train_local(t, "\n".join(lines[:4]), np.ones(n))
    pred = a.predict(t)
    assert pred.shape == (n,)
    assert t.valid[np.arange(n), pred].all()
    assert t.zero_cost[np.arange(n), pred].mean() > 0.95
    # Zero weights: no update, so the classifier stays at its first valid move.
    none = train_local(t, lines[0], np.zeros(n))
    assert (none.predict(t) == t.valid.argmax(axis=1)).all()
    b = train_local(t, "\n".join(lines[2:]), np.linspace(0.1, 1.0, n), random_state=3)
    ensemble = depfs.arceager.Ensemble([(0.6, a), (0.4, b)])
    parsed = ensemble.parse(train)
    assert heads(parsed) == heads(train)
    path = tmp_path / "e.depfs"
    ensemble.save(path)
    loaded = depfs.load(path)
    assert isinstance(loaded, depfs.arceager.Ensemble)
    assert loaded.weights_ == pytest.approx([0.6, 0.4])
    again = loaded.parse(train)
    assert heads(again) == heads(parsed)
    assert [s.deprels for s in again] == [s.deprels for s in parsed]
    # It pickles as the parsers do (it raised "cannot pickle 'depfs._core.Ensemble'").
    import copy
    import pickle

    for twin in (pickle.loads(pickle.dumps(ensemble)), copy.deepcopy(loaded)):
        assert twin.weights_ == pytest.approx([0.6, 0.4])
        assert twin.parse(train).to_string() == parsed.to_string()
    with pytest.raises(ValueError, match="sample weights"):
        train_local(t, lines[0], np.ones(n - 1))


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


@pytest.fixture
def ud_dir() -> Path:
    """The UD data folder (en_ewt, pt_bosque); a test that asks for it is skipped without it."""
    here = Path(__file__).resolve().parent.parent
    for c in (os.environ.get("DEPFS_DATA"), here.parent / "shared/data/ud"):
        if c and (Path(c) / "en_ewt" / "dev.conllu").exists() and (Path(c) / "pt_bosque").exists():
            return Path(c)
    pytest.skip("UD data not found (set DEPFS_DATA)")


@pytest.mark.ud
def test_en_ewt_dev_one_epoch_parses_well(ud_dir: Path):
    from depfs.evaluate import evaluate

    dev = depfs.read_conllu(ud_dir / "en_ewt" / "dev.conllu")
    parser = ArcEagerParser("nilsson_nugues", epochs=1).fit(dev)
    scores = evaluate(dev, parser.parse(dev, threads=2))
    assert scores.uas > 75.0  # one pass of the small set; a random parser gets ~10


def test_cli_train_then_parse(tmp_path: Path):
    from click.testing import CliRunner
    from depfs.cli import main

    train = tmp_path / "train.conllu"
    toy_treebank(10).write(train)
    set_file = tmp_path / "set.txt"
    set_file.write_text(SMALL_SET)
    model = tmp_path / "toy.depfs"
    runner = CliRunner()
    r = runner.invoke(
        main,
        [
            "train",
            "--parser",
            "arc-eager",
            "--train",
            str(train),
            "--dev",
            str(train),
            "--templates",
            str(set_file),
            "--epochs",
            "2",
            "--out",
            str(model),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "dev UAS 100.00 LAS 100.00" in r.output
    out = tmp_path / "out.conllu"
    r = runner.invoke(main, ["parse", str(model), str(train), "-o", str(out), "--threads", "2"])
    assert r.exit_code == 0, r.output
    assert heads(depfs.read_conllu(out)) == heads(depfs.read_conllu(train))
    assert isinstance(depfs.load(model), ArcEagerParser)
    # A file that is not a model: one line, exit status 2.
    r = runner.invoke(main, ["parse", str(train), str(train), "-o", str(out)])
    assert r.exit_code == 2
    assert "not a depfs model file" in r.output


@pytest.mark.ud
def test_pt_bosque_dev_round_trip_rate(ud_dir: Path):
    tb = depfs.read_conllu(ud_dir / "pt_bosque" / "dev.conllu")
    proj, stats = projectivize(tb)
    back = deprojectivize(proj)
    changed = [i for i, (a, b) in enumerate(zip(heads(tb), heads(proj))) if a != b]
    assert len(changed) == stats["nonprojective_sentences"] > 0
    restored = sum(heads(back)[i] == heads(tb)[i] for i in changed)
    assert restored / len(changed) > 0.8
    t = oracle_trajectories(proj, beta=1.0)
    assert len(set(t["sentence"])) == len(tb)  # every projectivised tree is usable


@pytest.mark.ud
def test_an_infinite_margin_is_the_saved_models_own_parse(ud_dir: Path):
    """`parse(tb, margin=inf)` ("every template") on a saved model (8-bit tables, summed
    exactly in integers by the ordinary parse) is that parse byte for byte: a float sum
    template by template turned 17 near-ties of en_ewt dev the other way."""
    model = depfs.load(Path(__file__).parent / "data" / "arceager.depfs")
    dev = depfs.read_conllu(ud_dir / "en_ewt" / "dev.conllu")
    assert model.parse(dev, margin=float("inf")).to_string() == model.parse(dev).to_string()
