"""Checked-in model files (container format 3, written on 2026-11-23 by
tests/data/make_models.py) must load and parse tests/data/input.conllu byte-identically
to tests/data/expected/<model>.conllu, through the API and the CLI, for ever: later code
must read today's files. Their method arrays (arc-eager trajectories and per-template
scores, graph arc scores) are pinned too (tests/data/arrays.npz).

Do not regenerate these files to make a test pass: a difference means a saved model
would parse differently after the change."""

from __future__ import annotations

from pathlib import Path

import depfs
import numpy as np
import pytest
import reference_decoders as ref
from click.testing import CliRunner
from depfs import ArcEagerParser, GraphParser
from depfs.cli import main

DATA = Path(__file__).resolve().parent / "data"
MODELS = ["arceager", "graph1", "graph1_cle", "graph2"]
KIND = {"arceager": ArcEagerParser, "graph1": GraphParser}
KIND.update({"graph1_cle": GraphParser, "graph2": GraphParser})


def format_version(path: Path) -> int:
    head = path.read_bytes()[:12]
    assert head[:8] == b"DEPFSMDL"
    return int.from_bytes(head[8:12], "little")


@pytest.fixture(scope="module")
def inp() -> depfs.Treebank:
    return depfs.read_conllu(DATA / "input.conllu")


@pytest.fixture(scope="module")
def arrays() -> dict[str, np.ndarray]:
    with np.load(DATA / "arrays.npz") as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("name", MODELS)
def test_checked_in_model_parses_byte_identically(name: str, inp: depfs.Treebank):
    path = DATA / f"{name}.depfs"
    assert format_version(path) == 3
    assert path.stat().st_size < 200_000
    parser = depfs.load(path)
    assert isinstance(parser, KIND[name])
    expected = (DATA / "expected" / f"{name}.conllu").read_text(encoding="utf-8")
    assert parser.parse(inp, threads=1).to_string() == expected
    assert parser.parse(inp, threads=2).to_string() == expected


@pytest.mark.parametrize("name", MODELS)
def test_checked_in_model_through_the_cli(name: str, tmp_path: Path):
    out = tmp_path / "out.conllu"
    args = ["parse", str(DATA / f"{name}.depfs"), str(DATA / "input.conllu"), "-o", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert out.read_bytes() == (DATA / "expected" / f"{name}.conllu").read_bytes()


def test_checked_in_models_are_what_they_claim(inp: depfs.Treebank):
    """The files exercise what they are meant to: lifting, labels, second order, CLE."""
    ae = depfs.load(DATA / "arceager.depfs")
    assert ae.model_.pseudo_projective and any("↑" in label for label in ae.labels_)
    expected = {n: depfs.read_conllu(DATA / "expected" / f"{n}.conllu") for n in MODELS}
    nonproj = {n: depfs.stats(tb).nonprojective_sentences for n, tb in expected.items()}
    assert nonproj["arceager"] >= 1 and nonproj["graph1_cle"] >= 1  # lifted words moved back
    assert nonproj["graph1"] == nonproj["graph2"] == 0  # Eisner: projective
    for tb in expected.values():
        assert len(depfs.stats(tb).labels) >= 10
        for s in tb:
            assert "↑" not in "".join(s.deprels)
            assert ref.is_tree([-1, *map(int, s.heads)])
    g1, g2 = depfs.load(DATA / "graph1.depfs"), depfs.load(DATA / "graph2.depfs")
    assert (g1.model_.order, g2.model_.order) == (1, 2) and g2.model_.sibling_templates
    assert depfs.load(DATA / "graph1_cle.depfs").model_.decoder == "cle"
    # Format-3 files record no input columns: they need what their templates read.
    assert ae.model_.input_columns == ["FORM", "UPOS"]
    assert g2.model_.input_columns == ["FORM", "UPOS"]
    # Input words are unannotated (HEAD and DEPREL `_`): the parses come from the models.
    lines = (DATA / "input.conllu").read_text(encoding="utf-8").splitlines()
    words = [line.split("\t") for line in lines if line and not line.startswith("#")]
    assert len(words) == inp.n_words and all(w[6] == w[7] == "_" for w in words)


def test_checked_in_method_arrays(inp: depfs.Treebank, arrays: dict[str, np.ndarray]):
    ae = depfs.load(DATA / "arceager.depfs")
    for beta in (0, 1):
        t = ae.trajectories(inp, beta=float(beta), sentences=range(5))
        # The arrays were recorded when trajectories stored their features; now the
        # features are replayed from the move histories and must be the same values.
        got = {
            k: getattr(t, k) for k in ("followed", "model_move", "sentence", "valid", "zero_cost")
        }
        got["features"] = t.features("\n".join(ae.templates_))
        prefix = f"ae_beta{beta}_"
        assert sorted(got) == sorted(k[len(prefix) :] for k in arrays if k.startswith(prefix))
        for key, value in got.items():
            np.testing.assert_array_equal(value, arrays[f"ae_beta{beta}_{key}"], err_msg=key)
    scores = ae.template_scores(arrays["ae_beta0_features"])
    np.testing.assert_allclose(scores, arrays["ae_template_scores"], rtol=1e-6, atol=1e-6)
    for name in ("graph1", "graph1_cle", "graph2"):
        g = depfs.load(DATA / f"{name}.depfs")
        for i, m in enumerate(g.arc_scores(inp, range(5))):
            np.testing.assert_allclose(m, arrays[f"{name}_arc_scores_{i}"], rtol=1e-9, atol=1e-9)


def test_one_read_load_gives_what_the_per_part_loaders_give(inp: depfs.Treebank, tmp_path: Path):
    """`depfs.load` reads a model file once (`_core.load_model`): the parser, and the tagger
    a parser's file holds, parse and tag as the per-part loaders' (the model class's own
    `load`, then `TaggerModel.load_embedded`) did, on the checked-in files of formats 3 and
    5 and on a parser saved today with a tagger inside; another kind is refused."""
    from depfs import Tagger, _core
    from depfs.datasets import synthetic
    from depfs.errors import ModelError
    from small_models import AE_SET
    from test_tagger import SMALL, blank

    tagger = Tagger(SMALL, epochs=1).fit(synthetic(60, seed=0))
    ArcEagerParser(AE_SET, epochs=1, tagger=tagger).fit(synthetic(60, seed=1)).save(
        tmp_path / "with.depfs"
    )
    untagged = depfs.Treebank.from_string(blank(inp.to_string()))
    paths = [DATA / f"{n}.depfs" for n in [*MODELS, "arceager_v5"]] + [tmp_path / "with.depfs"]
    for path in paths:
        kind = _core.model_kind(path)
        cls = ArcEagerParser if kind == "arc-eager" else GraphParser
        old = cls.from_model(cls._core_model.load(path))
        old_tagger = _core.TaggerModel.load_embedded(path)
        new = depfs.load(path)
        assert type(new) is cls, path
        assert new.parse(inp, tag=False).to_string() == old.parse(inp, tag=False).to_string()
        assert (new.tagger_ is None) == (old_tagger is None), path
        if old_tagger is not None:
            want = Tagger.from_model(old_tagger).tag(untagged).to_string()
            assert new.tagger_.tag(untagged).to_string() == want
            assert (
                new.parse(untagged, tag=True).to_string()
                == old.parse(Tagger.from_model(old_tagger).tag(untagged), tag=False).to_string()
            )
        other = "graph" if kind == "arc-eager" else "arc-eager"
        with pytest.raises(ModelError, match=f'expected "{other}"'):
            _core.load_model(path, other)
    assert depfs.load(tmp_path / "with.depfs").tagger_ is not None
    with pytest.raises(ModelError, match='expected "graph"'):
        GraphParser.load(DATA / "arceager.depfs")


def test_checked_in_dynfs_model_parses_byte_identically(inp: depfs.Treebank, tmp_path: Path):
    """dynfs1_v5.depfs: a first-order DynFS model (policy and rounds' weights inside) written by
    the build of commit ac11595, before the second-order rounds and their load-time checks:
    GraphParser(order=1, dynfs=True, groups=<3 groups of tests/test_dynfs.py's GROUPS>,
    epochs=3, labeler_templates=LAB, max_bits=10, folds=2, dagger_iterations=3) fitted on
    synthetic(200, seed=901, nonprojective_rate=1.0) with synthetic(60, seed=903, ...) as dev.
    Its DynFS parse of input.conllu (which differs from its full parse) must stay the same."""
    path = DATA / "dynfs1_v5.depfs"
    assert format_version(path) == 5
    parser = depfs.load(path)
    assert isinstance(parser, GraphParser)
    info = depfs.model_info(path)["dynfs"]
    assert info["groups"] == [1, 2, 1] and info["sibling_groups"] == []
    expected = (DATA / "expected" / "dynfs1_v5.conllu").read_text(encoding="utf-8")
    assert parser.parse(inp, threads=1).to_string() == expected
    assert parser.parse(inp, threads=2).to_string() == expected
    assert parser.parse(inp, threads=1, dynfs=False).to_string() != expected
    out = tmp_path / "out.conllu"
    args = ["parse", str(path), str(DATA / "input.conllu"), "-o", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert out.read_text(encoding="utf-8") == expected
