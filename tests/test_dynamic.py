"""depfs.dynamic: the prefix-margin rule (Strubell et al. 2015) on the arc-eager parser —
training switch, the parse-time margin knob, presets chosen on dev, model files, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import depfs
import numpy as np
import pytest
from depfs.arceager import ArcEagerParser, trajectory_features
from depfs.datasets import synthetic
from depfs.dynamic.strubell2015 import (
    CASCADE_SWEEP,
    SWEEP,
    MarginPoint,
    choose_presets,
    margin_point,
    margin_sweep,
    resolve_margin,
    tag_point,
    training_margin,
)
from depfs.templates import TemplateSet

# These tests sweep margins below the presets on purpose: the note a user gets for
# that (`warn_untrained_margin`) is tested on its own.
pytestmark = pytest.mark.filterwarnings("ignore:margin .* is below half:UserWarning")

ORDERED = """
upos(QUEUE_0)
upos(STACK_0)
upos(STACK_0) & upos(QUEUE_0)
form(QUEUE_0)
upos(QUEUE_1)
deprel(STACK_0 lc)
form(STACK_0) & upos(QUEUE_0)
upos(STACK_1) & upos(STACK_0)
"""


@pytest.fixture(scope="module")
def data() -> tuple[depfs.Treebank, depfs.Treebank]:
    return synthetic(300, seed=1), synthetic(80, seed=2)


@pytest.fixture(scope="module")
def dynamic(data: tuple[depfs.Treebank, depfs.Treebank]) -> ArcEagerParser:
    train, dev = data
    return ArcEagerParser(ORDERED, epochs=3, dynamic=True, train_margin=1000.0).fit(train, dev=dev)


def test_a_dynamic_model_keeps_presets_chosen_on_dev_and_parses_at_each(dynamic, data):
    _, dev = data
    p = dynamic.margin_presets_
    assert p is not None and p["train"] == 1000.0
    # The sweep goes up to 1.5 times the training margin.
    assert 0 < p["fast"] <= p["accurate"] <= 1.5 * p["train"]
    curve = dynamic.margin_curve_
    assert [r["margin"] for r in curve] == [f * p["train"] for f in SWEEP]
    best = max(r["las"] for r in curve)
    # The presets are what choose_presets makes of the curve.
    at = {r["margin"]: r for r in curve}
    assert at[p["accurate"]]["las"] >= best - 0.1 - 1e-9
    assert at[p["fast"]]["las"] >= best - 1.0 - 1e-9
    # The default margin is 'accurate'; 'fast' computes no more templates.
    default = dynamic.parse(dev)
    assert default.to_string() == dynamic.parse(dev, margin="accurate").to_string()
    assert default.to_string() == dynamic.parse(dev, margin=p["accurate"]).to_string()
    fast, slow = (margin_point(dynamic.model_, dev, p[k]) for k in ("fast", "accurate"))
    assert fast.move_templates <= slow.move_templates
    assert depfs.evaluate(dev, default).las == pytest.approx(at[p["accurate"]]["las"])


def test_a_margin_far_below_the_fast_preset_is_noted(dynamic, data):
    # A margin is in the model's own score units: a user's `--margin 2` on a model whose
    # presets are thousands parsed at 42 LAS in silence (review, twenty-sixth session).
    _, dev = data
    fast = dynamic.margin_presets_["fast"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # at the preset and at half of it: no note
        dynamic.parse(dev, margin="fast")
        dynamic.parse(dev, margin=fast / 2)
    with pytest.warns(UserWarning, match=r"below half this model's 'fast' preset .*depfs info"):
        dynamic.parse(dev, margin=fast / 4)


@pytest.mark.parametrize(
    "options",
    [
        # Algorithm 2 as the paper: AdaGrad steps, no full sum; margins in AdaGrad units.
        {"update": "adagrad", "full_sum": 0.0, "train_margin": 20.0},
        # The default: perceptron steps (margins in their units) and the full sum.
        {"train_margin": 1000.0},
    ],
)
def test_prefix_training_makes_short_prefixes_good_where_ordinary_training_does_not(data, options):
    """The point of Algorithm 2: at the same small margin, a model trained on every prefix
    is far more accurate than one trained only on the full template set."""
    train, dev = data
    dyn = ArcEagerParser(ORDERED, epochs=3, dynamic=True, **options).fit(train)
    ordinary = ArcEagerParser(ORDERED, epochs=3).fit(train)
    # The ordinary model's scores are on another scale: compare at equal templates per
    # decision, finding the ordinary model's margin by bisection.
    d = margin_point(dyn.model_, dev, options["train_margin"] / 4)
    lo, hi = 0.0, 1000.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if margin_point(ordinary.model_, dev, mid).move_templates < d.move_templates:
            lo = mid
        else:
            hi = mid
    o = margin_point(ordinary.model_, dev, hi)
    assert o.move_templates >= d.move_templates
    assert d.las > o.las + 2.0, (d, o)


def test_margins_are_checked_and_an_ordinary_model_is_the_full_model_at_inf(data):
    train, dev = data
    ordinary = ArcEagerParser(ORDERED, epochs=2).fit(train)
    full = ordinary.parse(dev).to_string()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every template: no note
        assert ordinary.parse(dev, margin=float("inf")).to_string() == full
    with pytest.warns(UserWarning, match=r"trained without --dynamic \(Python: dynamic=True\)"):
        ordinary.parse(dev, margin=100.0)  # prefixes not trained to decide: said
    assert ordinary.margin_presets_ is None
    with pytest.raises(ValueError, match="preset of dynamic models"):
        ordinary.parse(dev, margin="fast")
    with pytest.raises(ValueError, match="margin"):
        ordinary.parse(dev, margin=-1.0)
    with pytest.raises(ValueError, match="'accurate' or 'fast'"):
        ordinary.parse(dev, margin="quick")
    with pytest.raises(ValueError, match="give the margins"):
        margin_sweep(ordinary.model_, dev)
    with pytest.raises(ValueError, match="train_margin"):
        ArcEagerParser(ORDERED, dynamic=True, train_margin=0.0).fit(train)


def test_perceptron_steps_and_the_full_sum_are_training_options_that_change_the_model(
    data, tmp_path: Path
):
    """update="perceptron" and full_sum reach the trainer: each of the four combinations
    trains its own weights (the per-template move scores of the same configurations
    differ), and each parses at the presets it chose on dev, also after a save and load."""
    train, dev = data
    scores = []
    feats = None
    for update in ("adagrad", "perceptron"):
        for full in (0.0, 4.0):
            p = ArcEagerParser(
                ORDERED, epochs=2, dynamic=True, train_margin=20.0, update=update, full_sum=full
            ).fit(train, dev=dev)
            if feats is None:
                feats = trajectory_features(p.trajectories(dev, beta=1.0), ORDERED)
            scores.append(p.template_scores(feats))
            path = tmp_path / f"{update}-{full}.depfs"
            p.save(path)
            back = ArcEagerParser.load(path)
            assert back.parse(dev).to_string() == p.parse(dev, margin="accurate").to_string()
    for i in range(4):
        for j in range(i):
            assert not np.array_equal(scores[i], scores[j]), (i, j)
    with pytest.raises(ValueError, match="update"):
        ArcEagerParser(ORDERED, dynamic=True, update="sgd").fit(train)
    with pytest.raises(ValueError, match="full sum"):
        ArcEagerParser(ORDERED, dynamic=True, full_sum=-1.0).fit(train)


def test_a_dynamic_model_file_keeps_its_presets(dynamic, data, tmp_path: Path):
    _, dev = data
    dynamic.save(tmp_path / "d.depfs")
    back = depfs.load(tmp_path / "d.depfs")
    assert isinstance(back, ArcEagerParser) and back.dynamic
    assert back.margin_presets_ == dynamic.margin_presets_
    for m in ("accurate", "fast", 7.5):
        assert back.parse(dev, margin=m).to_string() == dynamic.parse(dev, margin=m).to_string()
    info = depfs.model_info(tmp_path / "d.depfs")
    assert info["kind"] == "arc-eager" and info["margin_presets"] == dynamic.margin_presets_
    r = _cli("info", str(tmp_path / "d.depfs"))
    p = dynamic.margin_presets_
    assert f"margins:       accurate {p['accurate']:g} (default), fast {p['fast']:g}" in r.stdout


def test_choose_presets_takes_the_cheapest_margin_within_each_loss():
    def pt(m: float, las: float, t: float) -> MarginPoint:
        return MarginPoint(m, las + 1, las, t, t)

    points = [pt(2, 80.0, 1.5), pt(4, 84.5, 3.0), pt(6, 85.45, 6.0), pt(8, 85.5, 9.0)]
    assert choose_presets(points) == {"accurate": 6, "fast": 4}
    assert choose_presets([pt(3, 70.0, 2.0)]) == {"accurate": 3, "fast": 3}
    with pytest.raises(ValueError):
        choose_presets([])
    # A cascade's presets are within each loss of its full model, whether the sweep's
    # best is below it or (by chance) above.
    assert choose_presets(points, reference=85.6) == {"accurate": 8, "fast": 6}
    assert choose_presets(points, reference=85.0) == {"accurate": 6, "fast": 4}
    assert choose_presets(points, reference=84.0) == {"accurate": 4, "fast": 4}
    # No margin within 0.1 of the reference: the sweep's best.
    assert choose_presets(points, reference=87.0) == {"accurate": 8, "fast": 8}


def test_choose_presets_minimises_move_templates_and_breaks_ties_by_the_smaller_margin():
    """The presets minimise templates per move decision (not per label decision); equal
    cost: the smaller margin; none within: the best score, the cheaper of equal ones
    (planted: label templates, the larger margin, the costlier best; each failed)."""
    # Move templates fall with the margin here while label templates rise.
    points = [MarginPoint(2, 81, 80.0, 9.0, 1.0), MarginPoint(4, 81, 80.0, 3.0, 5.0)]
    assert choose_presets(points) == {"accurate": 4, "fast": 4}
    # Equal cost and score (margins where nothing changes): the smaller margin.
    same = [MarginPoint(m, 81, 80.0, 4.0, 4.0) for m in (6, 3, 9)]
    assert choose_presets(same) == {"accurate": 3, "fast": 3}
    # Nothing within the reference's loss: the best-scoring margin, the cheaper of two.
    tied = [MarginPoint(5, 81, 80.0, 7.0, 7.0), MarginPoint(8, 81, 80.0, 2.0, 2.0)]
    assert choose_presets(tied, reference=90.0) == {"accurate": 8, "fast": 8}
    # "Within 0.1" includes a point exactly 0.1 below the best.
    edge = [MarginPoint(1, 86, 85.4, 1.0, 1.0), MarginPoint(2, 86, 85.5, 2.0, 2.0)]
    assert choose_presets(edge)["accurate"] == 1


def test_margin_values_are_checked_where_they_are_resolved():
    """NaN and booleans are not margins (planted: `not m >= 0` as `m < 0`, which lets NaN
    through; no bool check, which takes True as 1.0; each failed)."""
    presets = {"train": 10.0, "accurate": 8.0, "fast": 4.0}
    assert resolve_margin(presets, None) == 8.0 and resolve_margin(presets, "fast") == 4.0
    assert resolve_margin(None, None) is None and resolve_margin(None, 3) == 3.0
    for bad in (float("nan"), True, -0.5, "8"):
        with pytest.raises(ValueError, match="margin"):
            resolve_margin(presets, bad)


def test_the_stagewise_baseline_trains_at_the_adagrad_margin():
    """Stagewise training takes AdaGrad steps whatever `update` says, so its default
    margin is AdaGrad's (planted: the update's default; it failed)."""
    defaults = {"adagrad": 50.0, "perceptron": 6000.0}
    assert training_margin("perceptron", None, True, defaults) == 50.0
    assert training_margin("perceptron", None, False, defaults) == 6000.0
    assert training_margin("perceptron", 7.0, True, defaults) == 7.0


def test_a_default_sweep_is_in_units_of_the_training_margin(dynamic, data):
    """margin_sweep's default margins are fractions of the training margin, also on a
    model whose presets are not it (planted: fractions of 'accurate'; it failed)."""
    _, dev = data
    model = dynamic.model_.with_presets(400.0, 200.0)
    assert model.margin_presets == {"train": 1000.0, "accurate": 400.0, "fast": 200.0}
    points = margin_sweep(model, dev, None)
    assert [p.margin for p in points] == [f * 1000.0 for f in SWEEP]


def test_fit_presets_measures_a_cascade_against_its_full_model(cascade, dynamic, data, monkeypatch):
    """A cascade's presets are chosen against its full model's dev LAS; a prefix-trained
    model's against its sweep's best (planted: no reference for the cascade; it failed)."""
    from depfs.dynamic import strubell2015

    _, dev = data
    seen = []

    def spy(points, reference=None):  # type: ignore[no-untyped-def]
        seen.append(reference)
        return choose_presets(points, reference)

    monkeypatch.setattr(strubell2015, "choose_presets", spy)
    strubell2015.fit_presets(cascade.model_, dev)
    strubell2015.fit_presets(dynamic.model_, dev)
    full_las = depfs.evaluate(dev, cascade.parse(dev, margin=float("inf"))).las
    assert seen == [pytest.approx(full_las), None]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "depfs.cli", *args], capture_output=True, text=True, check=False
    )


def test_info_finds_a_presets_dev_row_through_the_models_32_bit_margin() -> None:
    """`depfs info` showed no "on dev:" line for a prefix-margin model trained at margin
    6000: its curve's 6600.000000000001 (1.1 × 6000) is kept as 6600 in the model."""
    from depfs.cli import _preset_rows

    curve = [{"margin": 6000 * f} for f in (1.0, 1.1, 1.2)]
    presets = {"accurate": float(np.float32(6000 * 1.2)), "fast": float(np.float32(6000 * 1.1))}
    assert 6000 * 1.1 != presets["fast"]  # the case: not equal as 64-bit floats
    assert _preset_rows(presets, curve) == {"accurate": curve[2], "fast": curve[1]}
    assert _preset_rows({**presets, "fast": 6500.0}, curve) is None


def test_cli_trains_a_dynamic_model_and_parses_with_the_margin_knob(data, tmp_path: Path):
    train, dev = data
    train.write(tmp_path / "train.conllu")
    dev.write(tmp_path / "dev.conllu")
    (tmp_path / "order.txt").write_text(ORDERED)
    model = tmp_path / "d.depfs"
    r = _cli(
        "train", "--parser", "arc-eager", "--dynamic", "--templates", str(tmp_path / "order.txt"),
        "--train", str(tmp_path / "train.conllu"), "--dev", str(tmp_path / "dev.conllu"),
        "--epochs", "2", "--out", str(model),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "margins: accurate" in r.stderr
    outs = {}
    for m in ("accurate", "fast", "inf", "3"):
        out = tmp_path / f"out-{m}.conllu"
        r = _cli("parse", str(model), str(tmp_path / "dev.conllu"), "--margin", m, "-o", str(out))
        assert r.returncode == 0, r.stderr
        outs[m] = out.read_text()
    loaded = depfs.load(model)
    assert outs["fast"] == loaded.parse(dev, margin="fast").to_string()
    assert outs["3"] == loaded.parse(dev, margin=3.0).to_string()
    # Templates per decision (issue 15): the presets' dev figures kept in the file for
    # `depfs info`, and margin_point on any treebank at a preset by its name.
    point = margin_point(loaded.model_, dev, "fast")
    assert point == margin_point(loaded.model_, dev, loaded.margin_presets_["fast"])
    r = _cli("info", str(model))
    assert r.returncode == 0, r.stderr
    fast = f"fast LAS {point.las:.2f} at {point.move_templates:.1f} templates per move decision"
    assert "  on dev:        accurate LAS " in r.stdout and fast in r.stdout
    r = _cli("parse", str(model), str(tmp_path / "dev.conllu"), "--margin", "-2")
    assert r.returncode == 2 and "margin" in r.stderr
    r = _cli("train", "--parser", "graph", "--dynamic", "--train", "x", "--out", "y")
    assert r.returncode == 2 and "--dynamic: arc-eager or tagger only" in r.stderr
    # --cascade: the full model and its stages, in one file.
    model = tmp_path / "c.depfs"
    r = _cli(
        "train", "--parser", "arc-eager", "--dynamic", "--cascade", "2,5", "--templates",
        str(tmp_path / "order.txt"), "--train", str(tmp_path / "train.conllu"),
        "--dev", str(tmp_path / "dev.conllu"), "--epochs", "2", "--out", str(model),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    loaded = depfs.load(model)
    assert loaded.cascade == (2, 5)
    out = tmp_path / "out-c.conllu"
    r = _cli("parse", str(model), str(tmp_path / "dev.conllu"), "--margin", "fast", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_text() == loaded.parse(dev, margin="fast").to_string()
    r = _cli("info", str(model))
    assert r.returncode == 0 and "a cascade of the first 2, 5 templates" in r.stdout, r.stdout
    r = _cli("info", str(model), "--json")
    assert json.loads(r.stdout)["cascade"] == [2, 5]
    for bad in (["--cascade", "2,5"], ["--dynamic", "--cascade", "two"]):
        r = _cli("train", "--parser", "arc-eager", *bad, "--train", "x", "--out", "y")
        assert r.returncode == 2 and "--cascade" in r.stderr, r.stderr


def test_a_cascade_defaults_to_its_stages_and_order(tmp_path: Path) -> None:
    """`cascade=True` / `--cascade default`: stages CASCADE_STAGES on CASCADE_TEMPLATES (the
    order whose head was ranked at full settings); prefix training keeps arc_eager_en_ewt,
    and a given order wins over either default."""
    from depfs.arceager import CASCADE_STAGES, CASCADE_TEMPLATES
    from depfs.templates import resolve_templates

    assert CASCADE_STAGES == (15, 40) and CASCADE_TEMPLATES == "arc_eager_en_ewt_full15"
    text = ArcEagerParser(dynamic=True, cascade=True)._template_text()
    assert text == resolve_templates("arc_eager_en_ewt_full15")
    assert ArcEagerParser(dynamic=True, cascade=True)._stages() == (15, 40)
    assert ArcEagerParser(dynamic=True)._template_text() == resolve_templates("arc_eager_en_ewt")
    given = ArcEagerParser(dynamic=True, cascade=(2, 5), templates="arc_eager_en_ewt")
    assert given._template_text() == resolve_templates("arc_eager_en_ewt")
    train = synthetic(40, seed=3)
    (tmp_path / "train.conllu").write_text(train.to_string())
    model = tmp_path / "c.depfs"
    r = _cli(
        "train", "--parser", "arc-eager", "--dynamic", "--cascade", "default",
        "--train", str(tmp_path / "train.conllu"), "--epochs", "1", "--out", str(model),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    loaded = depfs.load(model)
    assert loaded.cascade == (15, 40)
    assert loaded.templates_ == [t.text for t in TemplateSet.parse(text, "config")]


# The tagger: the same rule on each column decision.

TAG_ORDER = "form(i)\nsuffix:2(i)\nupos(i-1)\nlower(i-1)\nambig(i+1)\nupos(i) & suffix:3(i)\n"


@pytest.fixture(scope="module")
def dynamic_tagger(data: tuple[depfs.Treebank, depfs.Treebank]) -> depfs.Tagger:
    train, dev = data
    # min_known=50: the grammar's content words stay unknown, so the classifiers (not
    # only the tag dictionary) decide.
    # The default steps (perceptron, full sum) at a margin in their units for six templates.
    return depfs.Tagger(TAG_ORDER, epochs=3, min_known=50, dynamic=True, train_margin=500.0).fit(
        train, dev=dev
    )


def test_a_dynamic_tagger_keeps_presets_chosen_on_dev_and_tags_at_each(dynamic_tagger, data):
    _, dev = data
    p = dynamic_tagger.margin_presets_
    assert p is not None and p["train"] == 500.0
    # The sweep goes up to 1.5 times the training margin.
    assert 0 < p["fast"] <= p["accurate"] <= 1.5 * p["train"]
    curve = dynamic_tagger.margin_curve_
    assert max(r["margin"] for r in curve) == 1.5 * p["train"]
    at = {r["margin"]: r for r in curve}
    best = max(r["accuracy"] for r in curve)
    assert at[p["accurate"]]["accuracy"] >= best - 0.1 - 1e-9
    assert at[p["fast"]]["accuracy"] >= best - 1.0 - 1e-9
    default = dynamic_tagger.tag(dev).to_string()
    assert default == dynamic_tagger.tag(dev, margin="accurate").to_string()
    assert default == dynamic_tagger.tag(dev, margin=p["accurate"]).to_string()
    # Fewer templates at a smaller margin; every column counted.
    small, large = (tag_point(dynamic_tagger.model_, dev, m) for m in (25.0, 500.0))
    assert small.templates < large.templates <= len(TAG_ORDER.split("\n")) - 1
    assert set(small.columns) == {"UPOS", "XPOS", "FEATS", "LEMMA"}
    assert at[p["accurate"]]["accuracy"] > 95.0, at


@pytest.mark.parametrize(
    "options",
    [
        # Algorithm 2 as the paper: AdaGrad steps, no full sum; margins in AdaGrad units.
        {"update": "adagrad", "full_sum": 0.0, "train_margin": 20.0},
        # The default: perceptron steps (margins in their units) and the full sum.
        {"train_margin": 500.0},
    ],
)
def test_prefix_training_makes_a_tagger_good_on_short_prefixes(data, options):
    """Algorithm 2 for the tagger: at equal templates per decision, the dynamic tagger
    is more accurate than an ordinary one stopped by the same rule."""
    train, dev = data
    dyn = depfs.Tagger(TAG_ORDER, epochs=3, min_known=50, dynamic=True, **options)
    ordinary = depfs.Tagger(TAG_ORDER, epochs=3, min_known=50).fit(train)
    unit = options["train_margin"] / 20  # the margins below, in the model's units
    d = tag_point(dyn.fit(train).model_, dev, 2.0 * unit)
    lo, hi = 0.0, 1000.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if tag_point(ordinary.model_, dev, mid).templates < d.templates:
            lo = mid
        else:
            hi = mid
    o = tag_point(ordinary.model_, dev, hi)
    assert o.templates >= d.templates
    assert d.accuracy > o.accuracy + 1.0, (d, o)
    # Short prefixes alone are good: ≥ 95% with about two of the six templates. Training
    # the full prefix only (the same hinge and steps) does not get there: best 83% at
    # ≤ 2.1 templates per decision on this data.
    curve = [tag_point(dyn.model_, dev, m * unit) for m in range(1, 11)]
    assert max(p.accuracy for p in curve if p.templates <= 2.1) >= 95.0, curve


def test_the_tagger_s_perceptron_steps_and_full_sum_are_training_options_that_change_it(
    data, tmp_path: Path
):
    """update="perceptron" and full_sum reach the tagger's trainer: each of the four
    combinations trains its own weights (at the same margin their templates per decision
    differ), and each tags at the presets it chose on dev, also after a save and load."""
    train, dev = data
    points = []
    for update in ("adagrad", "perceptron"):
        for full in (0.0, 4.0):
            t = depfs.Tagger(
                TAG_ORDER,
                epochs=2,
                min_known=50,
                dynamic=True,
                train_margin=20.0,
                update=update,
                full_sum=full,
            ).fit(train, dev=dev)
            points.append(tag_point(t.model_, dev, 10.0).templates)
            t.save(tmp_path / f"{update}-{full}.depfs")
            back = depfs.load(tmp_path / f"{update}-{full}.depfs")
            assert back.tag(dev).to_string() == t.tag(dev, margin="accurate").to_string()
    assert len(set(points)) == 4, points
    with pytest.raises(ValueError, match="update"):
        depfs.Tagger(TAG_ORDER, dynamic=True, update="sgd").fit(train)
    with pytest.raises(ValueError, match="full sum"):
        depfs.Tagger(TAG_ORDER, dynamic=True, full_sum=-1.0).fit(train)


def test_tagger_margins_are_checked_and_inf_is_every_template(data):
    train, dev = data
    ordinary = depfs.Tagger(TAG_ORDER, epochs=2, min_known=50).fit(train)
    assert ordinary.tag(dev, margin=float("inf")).to_string() == ordinary.tag(dev).to_string()
    assert ordinary.margin_presets_ is None
    with pytest.raises(ValueError, match="preset of dynamic models"):
        ordinary.tag(dev, margin="fast")
    with pytest.raises(ValueError, match="margin"):
        ordinary.tag(dev, margin=-1.0)
    with pytest.raises(ValueError, match="train_margin"):
        depfs.Tagger(TAG_ORDER, dynamic=True, train_margin=float("nan")).fit(train)
    # Planted, each failed: a training margin of 0 accepted; no note on a margin for an
    # ordinary tagger (its prefixes were not trained to decide alone).
    with pytest.raises(ValueError, match="train_margin"):
        depfs.Tagger(TAG_ORDER, dynamic=True, train_margin=0.0).fit(train)
    with pytest.warns(UserWarning, match=r"trained without --dynamic \(Python: dynamic=True\)"):
        ordinary.tag(dev, margin=100.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every template: no note
        ordinary.tag(dev, margin=float("inf"))
    with pytest.raises(ValueError, match="l2"):
        depfs.Tagger(TAG_ORDER, dynamic=True, l2=-0.1).fit(train)
    with pytest.raises(ValueError, match="l2"):
        ArcEagerParser(ORDERED, dynamic=True, l2=1.5).fit(train)


def test_a_dynamic_tagger_file_keeps_its_presets(dynamic_tagger, data, tmp_path: Path):
    _, dev = data
    dynamic_tagger.save(tmp_path / "t.depfs")
    back = depfs.load(tmp_path / "t.depfs")
    assert isinstance(back, depfs.Tagger) and back.margin_presets_ == dynamic_tagger.margin_presets_
    for m in ("accurate", "fast", 3.5):
        assert back.tag(dev, margin=m).to_string() == dynamic_tagger.tag(dev, margin=m).to_string()
    info = depfs.model_info(tmp_path / "t.depfs")
    assert info["kind"] == "tagger" and info["margin_presets"] == dynamic_tagger.margin_presets_


def test_cli_trains_a_dynamic_tagger_and_tags_with_the_margin_knob(data, tmp_path: Path):
    train, dev = data
    train.write(tmp_path / "train.conllu")
    dev.write(tmp_path / "dev.conllu")
    (tmp_path / "order.txt").write_text(TAG_ORDER)
    model = tmp_path / "t.depfs"
    r = _cli(
        "train", "--parser", "tagger", "--dynamic", "--templates", str(tmp_path / "order.txt"),
        "--train", str(tmp_path / "train.conllu"), "--dev", str(tmp_path / "dev.conllu"),
        "--epochs", "2", "--out", str(model),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "margins: accurate" in r.stderr and "templates per decision" in r.stderr
    assert "no --dev" not in r.stderr
    nodev = tmp_path / "nodev.depfs"
    r = _cli(
        "train", "--parser", "tagger", "--dynamic", "--templates", str(tmp_path / "order.txt"),
        "--train", str(tmp_path / "train.conllu"), "--epochs", "1", "--out", str(nodev),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    presets = depfs.load(nodev).margin_presets_  # said, not left for `fast` to surprise
    assert presets["fast"] == presets["accurate"] == presets["train"]
    assert "no --dev to choose them on: both the training margin" in r.stderr
    loaded = depfs.load(model)
    for m in ("fast", "2.5"):
        out = tmp_path / f"out-{m}.conllu"
        r = _cli("tag", str(model), str(tmp_path / "dev.conllu"), "--margin", m, "-o", str(out))
        assert r.returncode == 0, r.stderr
        want = loaded.tag(dev, margin=m if m == "fast" else float(m)).to_string()
        assert out.read_text() == want
    point = tag_point(loaded.model_, dev, "accurate")
    assert point == tag_point(loaded.model_, dev, loaded.margin_presets_["accurate"])
    info = _cli("info", str(model)).stdout
    assert f"on dev:        accurate accuracy {point.accuracy:.2f} at " in info
    assert f"{point.templates:.1f} templates per decision, fast accuracy" in info
    assert "on dev:" not in _cli("info", str(nodev)).stdout  # no sweep to show
    plain = tmp_path / "plain.depfs"
    depfs.Tagger(TAG_ORDER, epochs=1).fit(train).save(plain)
    r = _cli("tag", str(plain), str(tmp_path / "dev.conllu"), "--margin", "fast")
    assert r.returncode != 0 and "preset of dynamic models" in r.stderr


def test_the_stagewise_baseline_freezes_each_template_after_its_stage(data):
    """Strubell et al. §6.1: template k is trained only in stage k. At margin 0 every
    decision stops after the first template, so a stagewise tagger over the whole order
    tags as one trained on the first template alone: later stages never touch it."""
    train, dev = data
    first = TAG_ORDER.split("\n")[0]
    whole = depfs.Tagger(TAG_ORDER, epochs=1, min_known=50, dynamic=True, stagewise=True)
    alone = depfs.Tagger(first, epochs=1, min_known=50, dynamic=True, stagewise=True)
    whole.fit(train)
    assert len(whole.history_) == 6  # one epoch per template
    assert (
        whole.tag(dev, margin=0.0).to_string() == alone.fit(train).tag(dev, margin=0.0).to_string()
    )
    # Algorithm 2 trains the first template in every epoch, with the others.
    joint = depfs.Tagger(TAG_ORDER, epochs=6, min_known=50, dynamic=True).fit(train)
    assert joint.tag(dev, margin=0.0).to_string() != whole.tag(dev, margin=0.0).to_string()
    with pytest.raises(ValueError, match="dynamic=True"):
        depfs.Tagger(TAG_ORDER, stagewise=True).fit(train)


def test_the_stagewise_parser_freezes_each_template_after_its_stage(data):
    """The parser's stagewise baseline (Strubell et al. §6.1): template k of the move
    and the label order learns only in stage k. At margin 0 every decision stops after
    the first template, so a stagewise parser over the whole order parses as one trained
    on the first template alone: later stages never touch it (planted: no freezing)."""
    train, dev = data
    first = ORDERED.strip().split("\n")[0]

    def staged(templates: str) -> ArcEagerParser:
        return ArcEagerParser(templates, epochs=1, dynamic=True, stagewise=True, train_margin=20.0)

    whole = staged(ORDERED).fit(train)
    assert len(whole.history_) == 8  # one epoch per template
    alone = staged(first).fit(train)
    assert whole.parse(dev, margin=0.0).to_string() == alone.parse(dev, margin=0.0).to_string()
    # The last stage's model, with every template, parses better than the first alone.
    gold_las = depfs.evaluate(dev, whole.parse(dev, margin=float("inf"))).las
    assert gold_las > depfs.evaluate(dev, alone.parse(dev, margin=float("inf"))).las
    with pytest.raises(ValueError, match="dynamic=True"):
        ArcEagerParser(ORDERED, stagewise=True).fit(train)


# ---------- the cascade: stages of the first k templates, then the full model ----------


@pytest.fixture(scope="module")
def cascade(data: tuple[depfs.Treebank, depfs.Treebank]) -> ArcEagerParser:
    train, dev = data
    return ArcEagerParser(ORDERED, epochs=3, dynamic=True, cascade=(2, 5)).fit(train, dev=dev)


def test_a_cascade_is_its_ordinary_models_and_the_margin_moves_between_them(cascade, data):
    train, dev = data
    assert cascade.model_.cascade == [2, 5]
    # The full model and the stages are trained the ordinary way, at the same epoch (the
    # full model's best on dev): at an infinite margin the cascade is the full model...
    full = ArcEagerParser(ORDERED, epochs=3).fit(train, dev=dev)
    assert [r["dev_las"] for r in cascade.history_] == [r["dev_las"] for r in full.history_]
    assert cascade.best_epoch_ == full.best_epoch_
    at_inf = cascade.parse(dev, margin=float("inf")).to_string()
    assert at_inf == full.parse(dev).to_string()
    # ... and the core's cascade guide, at a margin no stage reaches, decides as it does.
    assert cascade.model_.parse(dev, 1, False, 1e30).to_string() == at_inf
    # At margin 0 the first stage settles every decision: the parse of the ordinary model
    # of the first 2 templates, trained for as many epochs.
    first = ArcEagerParser(
        "\n".join(ORDERED.strip().splitlines()[:2]), epochs=full.best_epoch_
    ).fit(train)
    assert cascade.parse(dev, margin=0.0).to_string() == first.parse(dev).to_string()
    # In between, the share of decisions that reach later stages grows with the margin.
    pts = [margin_point(cascade.model_, dev, m) for m in (0.0, 1.0, 3.0, 1e30)]
    used = [p.move_templates for p in pts]
    assert used[0] == 2.0 and used[-1] == 2 + 5 + 8, used
    assert used == sorted(used) and len(set(used)) == len(used), used


def test_a_cascade_keeps_presets_chosen_against_its_full_model_and_its_file_keeps_it(
    cascade, data, tmp_path: Path
):
    _, dev = data
    p = cascade.margin_presets_
    full_las = depfs.evaluate(dev, cascade.parse(dev, margin=float("inf"))).las
    at = {r["margin"]: r for r in cascade.margin_curve_}
    # A cascade's sweep runs on to 3 times its nominal margin (a prefix-trained model's
    # to 1.5 times its training margin).
    assert set(at) == {f * p["train"] for f in CASCADE_SWEEP} and max(CASCADE_SWEEP) == 3.0
    assert at[p["accurate"]]["las"] >= full_las - 0.1 - 1e-9
    assert at[p["fast"]]["las"] >= full_las - 1.0 - 1e-9
    path = tmp_path / "cascade.depfs"
    cascade.save(path)
    loaded = depfs.load(path)
    assert isinstance(loaded, ArcEagerParser) and loaded.cascade == (2, 5)
    assert loaded.margin_presets_ == p
    for m in (None, "fast", 0.0, 3.0, float("inf")):
        assert loaded.parse(dev, margin=m).to_string() == cascade.parse(dev, margin=m).to_string()


def test_cascade_bits_shrink_only_the_stages_tables(cascade, data, tmp_path: Path):
    train, dev = data
    small = ArcEagerParser(
        ORDERED, epochs=3, dynamic=True, cascade=(2, 5), cascade_bits=(6, 6)
    ).fit(train, dev=dev)
    # The full model is trained as before: at an infinite margin the parse is the same...
    inf = float("inf")
    assert small.parse(dev, margin=inf).to_string() == cascade.parse(dev, margin=inf).to_string()
    # ... while the stages' tables (64 rows a block) are smaller than the default's.
    paths = [tmp_path / "small.depfs", tmp_path / "default.depfs"]
    small.save(paths[0])
    cascade.save(paths[1])
    assert paths[0].stat().st_size < paths[1].stat().st_size
    # The file keeps the small stages: it parses as the trained cascade at every margin.
    loaded = depfs.load(paths[0])
    for m in (0.0, 3.0, "accurate"):
        assert loaded.parse(dev, margin=m).to_string() == small.parse(dev, margin=m).to_string()
    for bad in [(5, 6), (6, 27), (6,), (6.0, 6)]:
        with pytest.raises(ValueError, match="cascade_bits must be"):
            ArcEagerParser(ORDERED, epochs=1, dynamic=True, cascade=(2,), cascade_bits=bad).fit(
                train
            )
    with pytest.raises(ValueError, match="needs cascade="):
        ArcEagerParser(ORDERED, epochs=1, dynamic=True, cascade_bits=(6, 6)).fit(train)
    # numpy integers are integers (a grid from np.arange), bools are not.
    grid = ArcEagerParser(
        ORDERED, epochs=1, dynamic=True, cascade=(np.int64(2),), cascade_bits=(np.int32(6), 6)
    ).fit(train)
    assert grid.parse(dev, margin=0.0).n_words == dev.n_words
    with pytest.raises(ValueError, match="cascade must be"):
        ArcEagerParser(ORDERED, epochs=1, dynamic=True, cascade=(True,)).fit(train)
    with pytest.raises(ValueError, match="max_bits"):
        depfs._core.ArcEagerTrainer(train, ORDERED, max_bits=5)


def test_the_bench_pool_trains_the_cascade_fit_trains(data):
    """`benches.cascade_dev --pool` trains one full model and every stage model of a sweep
    together: a cascade put together from them is the one `fit` trains, parse for parse."""
    from depfs.arceager import CASCADE_MARGIN, TrainingSet
    from depfs.templates import TemplateSet

    from benches.cascade_dev import pool_models

    train, dev = data
    prepared = TrainingSet(train)
    fit = ArcEagerParser(ORDERED, epochs=3, dynamic=True, cascade=(2, 5), cascade_bits=(6, 7))
    fit.fit(prepared, dev=dev)
    maker = ArcEagerParser(ORDERED, epochs=3, dynamic=True, cascade=(1,))
    order = TemplateSet.parse(ORDERED, "config")
    need = [(2, (6, 7)), (5, (6, 7)), (3, (8, 8))]  # one the cascade does not use
    full, stages = pool_models(maker, prepared, dev, order, need)
    pooled = full.with_stages([stages[(2, (6, 7))], stages[(5, (6, 7))]], CASCADE_MARGIN)
    for m in (0.0, 1.0, 3.0, 1e30):
        want = fit.model_.parse(dev, 1, False, m).to_string()
        assert pooled.parse(dev, 1, False, m).to_string() == want, m


def test_cascade_options_are_checked(data):
    train, _ = data
    for bad in [(5, 2), (0, 2), (2, 8), (), (3, 3)]:
        with pytest.raises(ValueError, match="cascade must be"):
            ArcEagerParser(ORDERED, epochs=1, dynamic=True, cascade=bad).fit(train)
    with pytest.raises(ValueError, match="needs dynamic=True"):
        ArcEagerParser(ORDERED, epochs=1, cascade=(2,)).fit(train)
    m = ArcEagerParser(ORDERED, epochs=1).fit(train).model_
    other = ArcEagerParser("\n".join(ORDERED.strip().splitlines()[1:3]), epochs=1).fit(train).model_
    with pytest.raises(ValueError, match="first k1"):
        m.with_stages([other], 10.0)


def test_a_cascade_s_epochs_are_scored_and_kept_by_its_full_model(data, monkeypatch):
    train, dev = data
    # A nominal margin at which the cascade parses dev differently from its full model.
    monkeypatch.setattr(depfs.arceager, "CASCADE_MARGIN", 1.0)
    c = ArcEagerParser(ORDERED, epochs=2, dynamic=True, cascade=(2,)).fit(train, dev=dev)
    full = ArcEagerParser(ORDERED, epochs=2).fit(train, dev=dev)
    at_1 = depfs.evaluate(dev, c.model_.parse(dev, 1, False, 1.0)).las
    assert at_1 != full.history_[-1]["dev_las"]
    assert [r["dev_las"] for r in c.history_] == [r["dev_las"] for r in full.history_]


def test_a_dynamic_model_s_epochs_are_scored_at_its_training_margin(data):
    """The dev score of each epoch (which picks the epoch kept) is the parse at the
    training margin, not with every template (planted: margin None, every template, in
    ArcEagerParser._dev_scores and in Tagger._dev_scores; each failed)."""
    train, dev = data
    p = ArcEagerParser(ORDERED, epochs=1, dynamic=True, train_margin=50.0).fit(train, dev)
    at_train = depfs.evaluate(dev, p.parse(dev, margin=50.0)).las
    assert p.history_[0]["dev_las"] == pytest.approx(at_train)
    assert at_train < depfs.evaluate(dev, p.parse(dev, margin=float("inf"))).las - 10
    t = depfs.Tagger(TAG_ORDER, epochs=1, min_known=50, dynamic=True, train_margin=5.0)
    t.fit(train, dev)
    at_train = tag_point(t.model_, dev, 5.0).accuracy
    assert t.history_[0]["dev_accuracy"] == pytest.approx(at_train)
    assert at_train < tag_point(t.model_, dev, float("inf")).accuracy
