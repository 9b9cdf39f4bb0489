"""depfs.dynamic.he2013: dynamic feature selection for the graph parser (He, Daumé &
Eisner 2013) — groups, DAgger, the policy in the model file, the threshold knob, the
full model behind --no-dynfs, the CLI."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import depfs
import numpy as np
import pytest
from click.testing import CliRunner
from depfs.cli import main
from depfs.datasets import synthetic
from depfs.dynamic.he2013 import (
    arc_set_of,
    choose_label_stop,
    fewer_rounds,
    fit_policy,
    label_order,
    load_groups,
    merge_rounds,
)
from depfs.select.groups import parse_groups
from depfs.templates import TemplateSet
from small_models import ARC, LAB, SIB

GROUPS = """\
# group 1
upos(h) & upos(m) & dir & dist
# group 2
form(h) & upos(m)
upos(h) & upos(b) & upos(m)
# group 3
upos(m) & dir
"""


def small(**kw: object) -> depfs.GraphParser:
    args: dict[str, object] = dict(
        epochs=3,
        sibling_templates=SIB,
        labeler_templates=LAB,
        max_bits=10,
        folds=2,
        dagger_iterations=3,
    )
    args.update(kw)
    return depfs.GraphParser(**args)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def groups_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("dynfs") / "groups.txt"
    p.write_text(GROUPS)
    return p


@pytest.fixture(scope="module")
def data() -> tuple[depfs.Treebank, depfs.Treebank]:
    return synthetic(300, seed=1), synthetic(80, seed=2)


@pytest.fixture(scope="module")
def dynfs(data: tuple[depfs.Treebank, depfs.Treebank], groups_file: Path) -> depfs.GraphParser:
    train, dev = data
    return small(dynfs=True, groups=str(groups_file)).fit(train, dev)


def test_groups_make_the_arc_set_in_order(groups_file: Path) -> None:
    groups = load_groups(str(groups_file))
    text, index = arc_set_of(groups)
    assert index == [[0], [1, 2], [3]]
    assert text.splitlines() == [t.text for t in TemplateSet.parse(ARC)]
    with pytest.raises(ValueError, match="<template text>:1: template before the first"):
        load_groups(ARC)
    with pytest.raises(ValueError, match="no '# group k' lines"):
        load_groups("# only a comment\n")
    with pytest.raises(ValueError, match=":1: template before"):
        parse_groups("upos(m)\n# group 1\nupos(h)\n")
    # A template of 4 word atoms keeps its bound in the arc set (planted: the
    # max_atoms line dropped; it failed).
    wide = parse_groups("#! max_atoms = 4\n# group 1\nform(h) & upos(h) & form(m) & upos(m)\n")
    text, index = arc_set_of(wide[1] + groups)
    assert text.splitlines()[0] == "#! max_atoms = 4" and index == [[0], [1], [2, 3], [4]]
    assert len(TemplateSet.parse(text, "arc")) == 5


def test_the_full_model_is_the_plain_parser_and_the_policy_parses_faster(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank]
) -> None:
    train, dev = data
    plain = small(arc_templates=ARC).fit(train, dev)
    full = dynfs.parse(dev, dynfs=False)
    assert full.to_string() == plain.parse(dev).to_string()
    assert dynfs.model_.dynfs is not None and plain.model_.dynfs is None
    r = dynfs.dynfs_result_
    assert r.dev_uas >= r.full_dev_uas - 0.2 or r.dev_uas == max(
        row[k] for row in r.rows for k in row if k.startswith("uas@")
    )
    assert r.expert_dev_cost < 100.0
    parsed = dynfs.parse(dev)
    st = dynfs.dynfs_stats_
    assert st["sentences"] == len(dev) and 0 < st["cost"] <= 1.0
    assert depfs.evaluate(dev, parsed).uas == pytest.approx(r.dev_uas)
    assert st["cost"] * 100 == pytest.approx(r.dev_cost)


def test_the_threshold_moves_between_the_first_group_and_the_full_parse(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank]
) -> None:
    _, dev = data
    full = dynfs.parse(dev, dynfs=False).to_string()
    # Never locks nor prunes; the full labeler (the stop and its dictionary change labels).
    inf = float("inf")
    never = dynfs.parse(dev, threshold=1e6, prune_margin=inf, tree_margin=inf, label_margin=inf)
    assert never.to_string() == full
    assert dynfs.dynfs_stats_["locks"] == 0
    dynfs.parse(dev, threshold=-1e6)  # locks every arc after the first group
    st = dynfs.dynfs_stats_
    assert st["evaluated"] * 4 == st["full"]
    assert st["rounds"] == len(dev)
    costs = []
    for t in (-2.0, 0.0, 2.0, 6.0):
        dynfs.parse(dev, threshold=t)
        costs.append(dynfs.dynfs_stats_["cost"])
    assert costs == sorted(costs)


def test_the_policy_round_trips_through_the_model_file(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank], tmp_path: Path
) -> None:
    _, dev = data
    dynfs.save(tmp_path / "m.depfs")
    back = depfs.load(tmp_path / "m.depfs")
    assert back.model_.dynfs == dynfs.model_.dynfs
    assert back.parse(dev).to_string() == dynfs.parse(dev).to_string()
    assert back.parse(dev, dynfs=False).to_string() == dynfs.parse(dev, dynfs=False).to_string()
    info = depfs.model_info(tmp_path / "m.depfs")
    assert info["training"]["dynfs"]["threshold"] == dynfs.dynfs_result_.threshold


def test_misuse_is_refused(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank], groups_file: Path
) -> None:
    train, dev = data
    with pytest.raises(ValueError, match="no '# group k' lines after '# order 2'"):
        small(dynfs=True, order=2, groups=str(groups_file)).fit(train, dev)
    with pytest.raises(ValueError, match="give dev"):
        small(dynfs=True, groups=str(groups_file)).fit(train)
    with pytest.raises(ValueError, match="scores=True"):
        dynfs.parse(dev, scores=True)
    with pytest.raises(ValueError, match="threshold"):
        dynfs.parse(dev, dynfs=False, threshold=1.0)
    with pytest.raises(ValueError, match="finite"):
        dynfs.parse(dev, threshold=float("nan"))
    # Finite, but beyond a 32-bit float (it would reach the core as infinity).
    with pytest.raises(ValueError, match="3.40282e"):
        dynfs.parse(dev, threshold=1e39)
    plain = small(arc_templates=ARC).fit(train)
    with pytest.raises(ValueError, match="no dynamic feature selection"):
        plain.parse(dev, dynfs=True)
    model = dynfs.model_
    groups, weights, threshold = model.dynfs
    with pytest.raises(ValueError, match="in no group"):
        model.with_dynfs([[0], [1, 2]], weights[:-2], threshold)
    with pytest.raises(ValueError, match="policy weights"):
        model.with_dynfs(groups, weights[:-1], threshold)


def test_the_expert_policy_is_the_upper_bound(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank]
) -> None:
    _, dev = data
    groups = dynfs.model_.dynfs[0]
    parsed, st, x, y = dynfs.model_.run_dynfs(dev, groups=groups, expert=True, record=True)
    assert depfs.evaluate(dev, parsed).uas >= depfs.evaluate(dev, dynfs.parse(dev)).uas
    assert (
        x.shape == (st["decisions"], depfs._core.dynfs_n_features(len(groups)))
        and x.dtype == np.float32
    )
    assert int(y.sum()) == st["locks"]


def test_threads_change_nothing_that_training_reads(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank]
) -> None:
    # `depfs train --dynfs` parses its folds and dev on every core (--threads): the
    # recorded states, their order and the statistics the choices read must not depend
    # on how many threads there are, or the model would.
    _, dev = data
    one = dynfs.model_.run_dynfs(dev, record=True, threads=1)
    two = dynfs.model_.run_dynfs(dev, record=True, threads=2)
    assert one[0].to_string() == two[0].to_string()
    assert one[1].keys() == two[1].keys()
    for k, v in one[1].items():
        assert np.array_equal(v, two[1][k]), k
    assert np.array_equal(one[2], two[2]) and np.array_equal(one[3], two[3])
    assert len(one[3]) > 0


def test_merged_rounds_keep_the_decisions_before_them(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank]
) -> None:
    _, dev = data
    model = dynfs.model_
    groups = [[0], [1, 2], [3]]
    k, base = len(groups), depfs._core.dynfs_n_features(0)
    rng = np.random.default_rng(3)
    w = [float(x) for x in rng.normal(0, 1, depfs._core.dynfs_n_features(k))]
    w[base + 1], w[base + 2] = 0.5, -1e3  # round 1 may lock, round 2 never does
    merged, mw = merge_rounds(groups, w, 1, 4)
    assert merged == [[0], [1, 2, 3]] and len(mw) == depfs._core.dynfs_n_features(2)
    for thr in (-0.5, 0.0, 0.5):
        no = float("inf")  # the fixture's own prune margin would prune in round 2 too
        _, st, _, _ = model.run_dynfs(dev, groups=groups, weights=w, threshold=thr, prune_margin=no)
        _, sm, _, _ = model.run_dynfs(
            dev, groups=merged, weights=mw, threshold=thr, prune_margin=no
        )
        assert 0 < st["locks"] < st["decisions"], st
        # The same locks, all in round 1; the arcs left get the same templates.
        assert (sm["locks"], sm["propagated"]) == (st["locks"], st["propagated"])
        assert sm["evaluated"] == st["evaluated"] and sm["rounds"] < st["rounds"]
    with pytest.raises(ValueError, match="keep must be"):
        merge_rounds(groups, w, 2, 3)
    # fewer_rounds: merged when dev allows it (any slack), not when it cannot (none).
    three = model.with_dynfs(groups, w, 0.0)
    m2, keep, uas, cost = fewer_rounds(three, dev, slack=(100.0, 100.0))
    assert keep == 1 and m2.dynfs == (merged, pytest.approx(mw), 0.0)
    assert uas == pytest.approx(depfs.evaluate(dev, m2.run_dynfs(dev)[0]).uas)
    for slack in [(-100.0, 100.0), (100.0, -100.0)]:  # UAS and cost must both be within
        assert fewer_rounds(three, dev, slack=slack)[1] is None
    assert fewer_rounds(m2, dev, slack=(100.0, 100.0))[1] is None  # two groups: nothing to merge


def test_prune_margin_cuts_cost_round_trips_and_is_checked(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank], tmp_path: Path
) -> None:
    _, dev = data
    model = dynfs.model_
    groups, weights, threshold = model.dynfs
    costs = []
    for margin in (float("inf"), 4.0, 1.0, 0.0):
        dynfs.parse(dev, threshold=1e6, prune_margin=margin)  # no lock: only the margin prunes
        costs.append(dynfs.dynfs_stats_["cost"])
        assert dynfs.dynfs_stats_["locks"] == 0
    assert costs == sorted(costs, reverse=True) and costs[-1] < costs[0], costs
    pruned = depfs.GraphParser.__new__(depfs.GraphParser)
    pruned.__dict__.update(dynfs.__dict__)
    pruned.model_ = model.with_dynfs(groups, weights, threshold, prune_margin=1.0)
    assert pruned.model_.dynfs_prune_margin == 1.0
    pruned.save(tmp_path / "p.depfs")
    back = depfs.load(tmp_path / "p.depfs")
    assert back.model_.dynfs_prune_margin == 1.0 and back.model_.dynfs == pruned.model_.dynfs
    # (Its spec has no labeler stop: the full labeler.)
    inf = float("inf")
    assert (
        back.parse(dev).to_string()
        == dynfs.parse(dev, prune_margin=1.0, tree_margin=inf, label_margin=inf).to_string()
    )
    assert (
        back.parse(dev, prune_margin=inf).to_string()
        == dynfs.parse(dev, prune_margin=inf, tree_margin=inf, label_margin=inf).to_string()
    )
    assert depfs.model_info(tmp_path / "p.depfs")["dynfs"]["prune_margin"] == 1.0
    _refuses_bad_margins(dynfs, dev, "prune_margin")


def test_tree_margin_cuts_cost_round_trips_and_is_checked(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank], tmp_path: Path
) -> None:
    """The tree margin after round 1: a lower margin computes fewer templates; it is stored
    around the model's other DynFS settings and read back (its parse, not another's),
    `depfs info` and the CLI knob say and use it, and bad values are refused."""
    _, dev = data
    model = dynfs.model_
    groups, weights, threshold = model.dynfs
    inf = float("inf")
    costs = []
    for margin in (inf, 4.0, 1.0, 0.0):
        dynfs.parse(dev, threshold=1e6, prune_margin=inf, tree_margin=margin)
        costs.append(dynfs.dynfs_stats_["cost"])
    assert costs == sorted(costs, reverse=True) and costs[-1] < costs[0], costs
    margin = 0.5  # (a margin that changes this small model's parse)
    pruned, unpruned = (dynfs.parse(dev, tree_margin=m).to_string() for m in (margin, inf))
    assert pruned != unpruned
    tree = depfs.GraphParser.__new__(depfs.GraphParser)
    tree.__dict__.update(dynfs.__dict__)
    tree.model_ = model.with_dynfs(
        groups,
        weights,
        threshold,
        prune_margin=model.dynfs_prune_margin,
        label_stop=model.dynfs_label_stop,
        label_dict=model.dynfs_label_dict,
        tree_margin=margin,
    )
    assert tree.model_.dynfs_tree_margin == margin
    tree.save(tmp_path / "t.depfs")
    back = depfs.load(tmp_path / "t.depfs")
    assert back.model_.dynfs_tree_margin == margin and back.model_.dynfs == model.dynfs
    assert back.model_.dynfs_prune_margin == model.dynfs_prune_margin
    assert back.model_.dynfs_label_stop == model.dynfs_label_stop
    assert (back.model_.dynfs_lex is None) == (model.dynfs_lex is None)
    assert back.parse(dev).to_string() == pruned
    assert back.parse(dev, tree_margin=inf).to_string() == unpruned
    assert depfs.model_info(tmp_path / "t.depfs")["dynfs"]["tree_margin"] == margin
    run = CliRunner().invoke
    res = run(main, ["info", str(tmp_path / "t.depfs")])
    assert res.exit_code == 0 and ", tree margin 0.5" in res.output, res.output
    dev_file = tmp_path / "dev.conllu"
    dev_file.write_text(dev.to_string())
    for flag, want in (([], pruned), (["--tree-margin", "inf"], unpruned)):
        out = tmp_path / "t.conllu"
        args = [str(tmp_path / "t.depfs"), str(dev_file), "-o", str(out), *flag]
        res = run(main, ["parse", *args, "--threads", "1"])
        assert res.exit_code == 0, res.output
        assert out.read_text() == want, flag
    _refuses_bad_margins(dynfs, dev, "tree_margin")


def _refuses_bad_margins(dynfs: depfs.GraphParser, dev: depfs.Treebank, knob: str) -> None:
    """`knob` (a DynFS margin) below 0 or NaN is refused by ``with_dynfs`` and ``parse``,
    and any value by a parse with the full model."""
    groups, weights, threshold = dynfs.model_.dynfs
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match=knob.replace("_", " ")):
            dynfs.model_.with_dynfs(groups, weights, threshold, **{knob: bad})
        with pytest.raises(ValueError, match=knob):
            dynfs.parse(dev, **{knob: bad})
    with pytest.raises(ValueError, match=knob):
        dynfs.parse(dev, dynfs=False, **{knob: 1.0})


def test_label_stop_is_a_knob_chosen_on_dev_and_round_trips(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank], tmp_path: Path
) -> None:
    train, dev = data
    full = dynfs.parse(dev, label_margin=float("inf"))  # the full labeler
    assert dynfs.dynfs_stats_["lab_cost"] == 1.0
    heads = [list(s.heads) for s in full]
    costs = []
    # The stop alone (fit may keep a dictionary; a model without one refuses label_dict).
    alone = {} if dynfs.model_.dynfs_label_dict is None else {"label_dict": False}
    for margin in (1e30, 50.0, 5.0, 0.0):
        out = dynfs.parse(dev, label_margin=margin, **alone)
        costs.append(dynfs.dynfs_stats_["lab_cost"])
        assert [list(s.heads) for s in out] == heads  # labels only
    # Lower margins stop each word's label no later: fewer labeler templates.
    assert costs == sorted(costs, reverse=True) and costs[-1] < costs[0] == 1.0, costs
    # Chosen on dev within the tolerance of the full labeler's LAS, stored, and used.
    full_las = depfs.evaluate(dev, full).las
    model, margin, las, cost = choose_label_stop(dynfs.model_, train, dev, tolerance=1.0)
    assert margin is not None and las >= full_las - 1.0 and cost < 100.0
    order, kept_margin, scale, every = model.dynfs_label_stop
    assert kept_margin == pytest.approx(margin) and sorted(order) == list(range(len(scale)))
    assert model.dynfs == dynfs.model_.dynfs
    assert model.dynfs_prune_margin == dynfs.model_.dynfs_prune_margin
    labeled = depfs.GraphParser.__new__(depfs.GraphParser)
    labeled.__dict__.update(dynfs.__dict__)
    labeled.model_ = model
    labeled.save(tmp_path / "l.depfs")
    back = depfs.load(tmp_path / "l.depfs")
    assert back.model_.dynfs_label_stop == model.dynfs_label_stop
    assert depfs.evaluate(dev, back.parse(dev)).las == pytest.approx(las)
    assert back.parse(dev, label_margin=float("inf")).to_string() == full.to_string()
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="label_margin"):
            dynfs.parse(dev, label_margin=bad)
    with pytest.raises(ValueError, match="label_margin"):
        dynfs.parse(dev, dynfs=False, label_margin=1.0)


def test_label_dictionary_is_tried_on_dev_round_trips_and_is_a_knob(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank], tmp_path: Path
) -> None:
    train, dev = data
    r = dynfs.dynfs_result_
    assert r.label_dict == (dynfs.model_.dynfs_label_dict is not None)
    entries = dynfs.model_.label_dict(train)
    n_labels = len(dynfs.model_.labels)
    assert entries and all(ls == sorted(set(ls)) and ls[-1] < n_labels for *_, ls in entries)
    # A triple with one label seen (ROOT's, at least): its words need no template.
    assert any(len(ls) == 1 for *_, ls in entries)
    # Tried besides the stop alone: never more labeler templates at the same tolerance.
    with_dict = choose_label_stop(dynfs.model_, train, dev, tolerance=1.0)
    alone = choose_label_stop(dynfs.model_, train, dev, tolerance=1.0, label_dict=False)
    assert alone[0].dynfs_label_dict is None and with_dict[3] <= alone[3]
    # Here most triples have one label: the dictionary is kept, for fewer templates.
    assert with_dict[0].dynfs_label_dict is not None and with_dict[3] < alone[3]
    # The same stop with and without the dictionary: fewer templates, the same heads.
    groups, weights, threshold = dynfs.model_.dynfs
    order, _, scale, every = with_dict[0].dynfs_label_stop or alone[0].dynfs_label_stop
    stop = (order, 50.0, scale, every)
    kw = dict(prune_margin=dynfs.model_.dynfs_prune_margin, label_stop=stop)
    model = dynfs.model_.with_dynfs(groups, weights, threshold, **kw, label_dict=entries)
    plain = dynfs.model_.with_dynfs(groups, weights, threshold, **kw)
    assert model.dynfs_label_dict == entries and plain.dynfs_label_dict is None
    out, st, _, _ = model.run_dynfs(dev)
    out_plain, st_plain, _, _ = plain.run_dynfs(dev)
    assert st["lab_evaluated"] < st_plain["lab_evaluated"]
    assert [list(s.heads) for s in out] == [list(s.heads) for s in out_plain]
    # Stored and read back; parse(label_dict=False) is the stop alone.
    labeled = depfs.GraphParser.__new__(depfs.GraphParser)
    labeled.__dict__.update(dynfs.__dict__)
    labeled.model_ = model
    labeled.save(tmp_path / "d.depfs")
    back = depfs.load(tmp_path / "d.depfs")
    assert back.model_.dynfs_label_dict == entries
    assert back.parse(dev).to_string() == out.to_string()
    assert back.parse(dev, label_dict=False).to_string() == out_plain.to_string()
    assert back.dynfs_stats_["lab_evaluated"] == st_plain["lab_evaluated"]
    assert back.parse(dev, label_margin=float("inf")).to_string() == (
        back.parse(dev, label_margin=float("inf"), label_dict=False).to_string()
    )
    # The CLI: --no-label-dict is parse(label_dict=False); `depfs info` says the dictionary;
    # a model without one refuses the flag.
    from click.testing import CliRunner
    from depfs.cli import main

    dev.write(str(tmp_path / "dev.conllu"))
    run = CliRunner().invoke
    args = ["parse", str(tmp_path / "d.depfs"), str(tmp_path / "dev.conllu"), "--no-label-dict"]
    res = run(main, args)
    assert res.exit_code == 0 and res.stdout == out_plain.to_string(), res.output
    info = run(main, ["info", str(tmp_path / "d.depfs")]).output
    assert f"with a label dictionary of {len(entries):,} entries" in info
    # Its options name the groups, not arc templates it does not read.
    assert "groups=" in info and "arc_templates=" not in info
    plain_path = tmp_path / "plain.depfs"
    labeled.model_ = plain
    labeled.save(plain_path)
    res = run(main, ["parse", str(plain_path), str(tmp_path / "dev.conllu"), "--no-label-dict"])
    assert res.exit_code == 2 and "stop has no label dictionary" in res.output, res.output
    # The API refuses it too, either way (it was accepted and changed nothing).
    plain_parser = depfs.load(plain_path)
    for flag in (False, True):
        with pytest.raises(ValueError, match="stop has no label dictionary"):
            plain_parser.parse(dev, label_dict=flag)
    # A model whose labeler has no stop at all says so.
    labeled.model_ = dynfs.model_.with_dynfs(groups, weights, threshold)
    assert labeled.model_.dynfs_label_stop is None
    with pytest.raises(ValueError, match="labeler has no stop"):
        labeled.parse(dev, label_dict=False)
    with pytest.raises(ValueError, match="label_dict"):
        dynfs.parse(dev, dynfs=False, label_dict=False)
    with pytest.raises(ValueError, match="label dictionary"):
        dynfs.model_.with_dynfs(groups, weights, threshold, **kw, label_dict=[(1, 2, True, [])])


def test_a_prefix_trained_labeler_is_the_stops_candidate_round_trips_and_is_checked(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank], tmp_path: Path
) -> None:
    train, dev = data
    own = dynfs.model_
    order, _, every = label_order(own, train)
    # The labeler of another model of the same labeler templates, every prefix trained.
    pre = small(arc_templates=ARC, label_prefix=(order, every, 5.0, 13.0)).fit(train).model_
    groups, weights, threshold = own.dynfs
    kw = dict(prune_margin=own.dynfs_prune_margin, label_stop=(order, 0.5, [1.0] * len(order), 1))
    with_pre = own.with_dynfs(groups, weights, threshold, **kw, label_weights=pre)
    alone = own.with_dynfs(groups, weights, threshold, **kw, label_weights=own)
    assert with_pre.dynfs_label_prefix_trained is True
    assert alone.dynfs_label_prefix_trained is False
    out, st, _, _ = with_pre.run_dynfs(dev)
    out_own, _, _, _ = alone.run_dynfs(dev)
    # Labels only: the same trees, other labels, and the override is the stored stop.
    assert [list(x.heads) for x in out] == [list(x.heads) for x in out_own]
    assert [list(x.deprels) for x in out] != [list(x.deprels) for x in out_own]
    assert alone.run_dynfs(dev, label_weights=pre)[0].to_string() == out.to_string()
    assert with_pre.run_dynfs(dev, label_weights=with_pre)[0].to_string() == out_own.to_string()
    # Rebuilt without label_weights, a model keeps its stop's weights (as `lex`).
    again = with_pre.with_dynfs(groups, weights, threshold, **kw)
    assert again.dynfs_label_prefix_trained is True
    assert again.run_dynfs(dev)[0].to_string() == out.to_string()
    assert with_pre.label_spreads(train, stop=True) == pre.label_spreads(train)
    assert with_pre.label_spreads(train) == own.label_spreads(train)
    # Stored and read back; an infinite margin is still the full model's own labeler.
    labeled = depfs.GraphParser.__new__(depfs.GraphParser)
    labeled.__dict__.update(dynfs.__dict__)
    labeled.model_ = with_pre
    labeled.save(tmp_path / "p.depfs")
    back = depfs.load(tmp_path / "p.depfs")
    assert back.model_.dynfs_label_prefix_trained is True
    assert back.model_.dynfs_label_stop == with_pre.dynfs_label_stop
    assert back.parse(dev).to_string() == out.to_string()
    assert back.parse(dev, label_margin=float("inf")).to_string() == (
        dynfs.parse(dev, label_margin=float("inf")).to_string()
    )
    info = depfs.models.model_info(tmp_path / "p.depfs")["dynfs"]
    assert info["label_prefix_trained"] is True
    # Chosen again on a model that has one, its stored labeler is tried beside its own.
    said: list[str] = []
    choose_label_stop(back.model_, train, dev, tolerance=1.0, report=said.append)
    assert any("prefix-trained" in line for line in said)
    assert any("prefix-trained" not in line for line in said)
    # Refused where no stop reads them: no stop, or an infinite margin (the full labeler).
    with pytest.raises(ValueError, match="label_weights"):
        own.with_dynfs(groups, weights, threshold, label_weights=pre)
    inf = dict(kw, label_stop=(order, float("inf"), [1.0] * len(order), 1))
    with pytest.raises(ValueError, match="label_weights"):
        own.with_dynfs(groups, weights, threshold, **inf, label_weights=pre)
    # A labeler of other templates, labels or block sizes is refused.
    other = small(arc_templates=ARC, labeler_templates="upos(m)\n").fit(train).model_
    with pytest.raises(ValueError, match="label_weights"):
        own.with_dynfs(groups, weights, threshold, **kw, label_weights=other)
    with pytest.raises(ValueError, match="label_weights"):
        own.run_dynfs(dev, label_margin=1.0, label_weights=other)
    larger = small(arc_templates=ARC, min_bits=7, max_bits=12).fit(train).model_
    with pytest.raises(ValueError, match="block sizes"):
        own.with_dynfs(groups, weights, threshold, **kw, label_weights=larger)
    # Malformed settings: one line naming label_prefix (never an OverflowError).
    for bad in (
        "abc",
        (order, every, 5.0),
        (order, "2", 5.0, 13.0),
        (order, every, "5", 13.0),
        ([-1, *order[1:]], every, 5.0, 13.0),
        (order, 2**70, 5.0, 13.0),
        (order, 0, 5.0, 13.0),
    ):
        with pytest.raises(ValueError, match="label_prefix"):
            small(arc_templates=ARC, label_prefix=bad).fit(train)
    for bad in ((order[:-1], every, 5.0, 13.0), (order, every, -1.0, 13.0), (order, 1, 5.0, -1.0)):
        with pytest.raises(ValueError, match="label prefix"):
            small(arc_templates=ARC, label_prefix=bad).fit(train)


def test_dynfs_with_prefix_groups_fits_and_its_labeler_model_leaves_them_out(
    data: tuple[depfs.Treebank, depfs.Treebank], groups_file: Path
) -> None:
    """prefix_groups index the whole arc set: the stop's labeler model (group 1's arc
    templates alone) must not get them (it failed late in fit, at an index out of range)."""
    train, dev = data
    p = small(dynfs=True, groups=str(groups_file), prefix_groups=[[0], [1, 2], [3]], folds=2)
    assert p.fit(train, dev).model_.dynfs is not None


def test_fit_policy_separates_lock_from_add() -> None:
    rng = np.random.default_rng(1)
    x = np.ones((400, 5), dtype=np.float32)
    x[:, 1] = rng.uniform(-1, 1, 400)
    y = (x[:, 1] > 0.2).astype(np.uint8)
    w = np.array(fit_policy(x, y))
    assert ((x @ w > 0) == (y == 1)).mean() > 0.95
    # One action only: a constant policy.
    assert fit_policy(x, np.ones(400, dtype=np.uint8))[0] > 0


def test_cli_dynfs_tolerance_reaches_every_choice_on_dev(
    tmp_path: Path, groups_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--dynfs-tolerance T`: the policy's, the margins' and the labeler stop's choices on
    dev all take T (not the default 0.2)."""
    from depfs.dynamic import he2013

    seen: list[tuple[str, float]] = []

    def spy(name: str) -> Any:
        real = getattr(he2013, name)

        def call(*args: Any, **kw: Any) -> Any:
            seen.append((name, kw["tolerance"]))
            return real(*args, **kw)

        return call

    for name in ("train_policy", "choose_pruning", "choose_label_stop"):
        monkeypatch.setattr(he2013, name, spy(name))
    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    synthetic(120, seed=3).write(train)
    synthetic(40, seed=4).write(dev)
    res = CliRunner().invoke(
        main,
        ["train", "--dynfs", "--groups", str(groups_file), "--folds", "2", "--epochs", "1"]
        + ["--train", str(train), "--dev", str(dev), "-o", str(tmp_path / "d.depfs")]
        + ["--dynfs-tolerance", "0.05"],
    )
    assert res.exit_code == 0, res.output
    assert sorted(seen) == [
        ("choose_label_stop", 0.05),
        ("choose_pruning", 0.05),
        ("train_policy", 0.05),
    ]


def test_cli_trains_parses_and_keeps_the_full_model_behind_no_dynfs(
    tmp_path: Path, groups_file: Path
) -> None:
    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    synthetic(200, seed=3).write(train)
    synthetic(60, seed=4).write(dev)
    (tmp_path / "arc.txt").write_text(ARC)
    common = ["--train", str(train), "--dev", str(dev), "--epochs", "2", "--seed", "7"]
    run = CliRunner().invoke
    res = run(
        main,
        ["train", "--parser", "graph", "--dynfs", "--groups", str(groups_file), "--folds", "2"]
        + common
        + ["--out", str(tmp_path / "d.depfs")],
    )
    assert res.exit_code == 0, res.output
    assert "dynfs: policy of DAgger iteration" in res.output
    # The choices on dev said what they are before they start (a minute of silence
    # otherwise), and their time is not DAgger's (it was printed as the whole step's).
    assert "choosing the tree margin, prune margin and threshold together on dev" in res.output
    assert re.search(r"\(fold parsers and DAgger \d+ s, the choices on dev \d+ s\)", res.output)
    res = run(
        main,
        ["train", "--parser", "graph", "--templates", str(tmp_path / "arc.txt")]
        + common
        + ["--out", str(tmp_path / "p.depfs")],
    )
    assert res.exit_code == 0, res.output
    outs = {}
    for name, args in {
        "full": [str(tmp_path / "d.depfs"), "--no-dynfs"],
        "plain": [str(tmp_path / "p.depfs")],
        "dyn": [str(tmp_path / "d.depfs")],
        "never": [str(tmp_path / "d.depfs")]
        + ["--policy-threshold", "1e6", "--prune-margin", "inf", "--label-margin", "inf"]
        + ["--tree-margin", "inf"],
    }.items():
        out = tmp_path / f"{name}.conllu"
        res = run(main, ["parse", *args, str(dev), "-o", str(out), "--threads", "1"])
        assert res.exit_code == 0, res.output
        outs[name] = out.read_bytes()
    assert outs["full"] == outs["plain"]
    assert outs["never"] == outs["full"]
    res = run(main, ["info", str(tmp_path / "d.depfs")])
    sizes = ", ".join(str(len(g)) for g in depfs.load(tmp_path / "d.depfs").model_.dynfs[0])
    assert sizes in ("1, 2, 1", "1, 3")  # all rounds, or fewer (merged on dev)
    assert (
        res.exit_code == 0 and f"dynfs:         groups of {sizes}; policy threshold" in res.output
    )
    assert "dynfs:" not in run(main, ["info", str(tmp_path / "p.depfs")]).output
    for args, msg in [
        (["parse", str(tmp_path / "p.depfs"), str(dev), "--no-dynfs"], "not trained with --dynfs"),
        (["parse", str(tmp_path / "d.depfs"), str(dev), "--scores"], "--no-dynfs"),
        (
            ["parse", str(tmp_path / "d.depfs"), str(dev), "--no-dynfs", "--policy-threshold", "1"],
            "--policy-threshold: a knob of the dynamic parse, which --no-dynfs turns off",
        ),
        (
            ["parse", str(tmp_path / "d.depfs"), str(dev), "--policy-threshold", "1e39"],
            "--policy-threshold 1e+39: a finite number within ±3.403e+38 (a 32-bit float)",
        ),
        (
            ["parse", str(tmp_path / "d.depfs"), str(dev), "--no-dynfs", "--label-margin", "1"]
            + ["--prune-margin", "2"],
            "--prune-margin and --label-margin: knobs of the dynamic parse",
        ),
        (
            ["parse", str(tmp_path / "d.depfs"), str(dev), "--no-dynfs", "--tree-margin", "1"],
            "--tree-margin: a knob of the dynamic parse",
        ),
        (["parse", str(tmp_path / "d.depfs"), str(dev), "--tree-margin", "-1"], "a number >= 0"),
        # The dictionary serves the stop that inf turns off: accepted, it did nothing.
        (
            ["parse", str(tmp_path / "d.depfs"), str(dev), "--label-margin", "inf"]
            + ["--no-label-dict"],
            "--no-label-dict: the label dictionary serves the labeler's stop, which",
        ),
        (["train", "--parser", "graph", "--folds", "3", *common, "--out", "x"], "of --dynfs"),
        (
            ["train", "--parser", "graph", "--dynfs", "--order", "2", "--sibling-templates"]
            + [SIB, *common, "--out", "x"],
            "sibling templates are the groups'",
        ),
        (["train", "--parser", "arc-eager", "--dynfs", *common, "--out", "x"], "graph parser only"),
        (["train", "--parser", "graph", "--dynfs", "--train", str(train), "--out", "x"], "--dev"),
    ]:
        res = run(main, args)
        assert res.exit_code == 2, (args, res.output)
        assert msg in res.output, (args, res.output)


# Second order: the first-order groups, then the two sibling templates of SIB.
GROUPS2 = GROUPS + "# order 2\n# group 1\nupos(s) & upos(m) & dir\n# group 2\n"
GROUPS2 += "upos(h) & upos(s) & upos(m)\n"
SIB2 = "upos(s) & upos(m) & dir\nupos(h) & upos(s) & upos(m)\n"  # the groups' order


@pytest.fixture(scope="module")
def groups2_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("dynfs2") / "groups2.txt"
    p.write_text(GROUPS2)
    return p


@pytest.fixture(scope="module")
def dynfs2(data: tuple[depfs.Treebank, depfs.Treebank], groups2_file: Path) -> depfs.GraphParser:
    train, dev = data
    # Without the length dictionary no word starts with one head left (locked, so its
    # sibling parts are never scored): a policy that never locks is the full parse.
    return small(dynfs=True, order=2, groups=str(groups2_file), prune=False).fit(train, dev)


def test_second_order_groups_follow_the_arc_templates(groups2_file: Path) -> None:
    from depfs.dynamic.he2013 import load_sibling_groups, sibling_set_of

    text, index = sibling_set_of(load_sibling_groups(str(groups2_file)), 4)
    assert index == [[4], [5]]
    assert text.splitlines() == [t.text for t in TemplateSet.parse(SIB2)]
    assert len(load_groups(str(groups2_file))) == 3  # the first-order groups only
    shipped = load_sibling_groups("dynfs2_en_ewt")
    assert [len(g) for g in shipped] == [4, 10, 10]
    assert [len(g) for g in load_groups("dynfs2_en_ewt")] == [5, 15, 40, 109]


def test_second_order_dynfs_keeps_the_full_second_order_model(
    dynfs2: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank]
) -> None:
    train, dev = data
    plain = small(order=2, arc_templates=ARC, sibling_templates=SIB2, prune=False).fit(train, dev)
    full = dynfs2.parse(dev, dynfs=False).to_string()
    assert full == plain.parse(dev).to_string()
    inf = float("inf")
    never = {"threshold": 1e6, "prune_margin": inf, "tree_margin": inf, "label_margin": inf}
    assert dynfs2.parse(dev, **never).to_string() == full  # never locks nor prunes
    st = dynfs2.dynfs_stats_
    assert st["locks"] == 0 and st["sib_evaluated"] == st["sib_full"] > 0
    assert st["cost"] == 1.0 and st["rounds"] == 5 * len(dev)
    dynfs2.parse(dev, threshold=-1e6)  # locks every arc after the first group
    st = dynfs2.dynfs_stats_
    assert st["sib_evaluated"] == 0 and st["evaluated"] * 4 == st["full"]
    parsed = dynfs2.parse(dev)
    r = dynfs2.dynfs_result_
    assert depfs.evaluate(dev, parsed).uas == pytest.approx(r.dev_uas)
    assert dynfs2.dynfs_stats_["cost"] * 100 == pytest.approx(r.dev_cost)
    groups = dynfs2.model_.dynfs[0]
    assert groups == [[0], [1, 2], [3], [4], [5]]
    _, st, x, y = dynfs2.model_.run_dynfs(dev, expert=True, record=True)
    assert x.shape == (st["decisions"], depfs._core.dynfs_n_features(5))
    assert int(y.sum()) == st["locks"] and st["sib_cost"] < 1.0


def test_second_order_training_chooses_a_prune_margin_on_dev(
    dynfs2: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank]
) -> None:
    # As in first order: margin and threshold chosen together on dev; the margin prunes in
    # the first-order rounds, before the sibling rounds.
    _, dev = data
    r = dynfs2.dynfs_result_
    assert r.prune_margin is not None
    assert dynfs2.model_.dynfs_prune_margin == pytest.approx(r.prune_margin)
    assert dynfs2.model_.dynfs[2] == pytest.approx(r.threshold)
    assert r.dev_uas >= r.full_dev_uas - dynfs2.dynfs_tolerance
    parsed = dynfs2.parse(dev)
    cost = dynfs2.dynfs_stats_["cost"]
    assert depfs.evaluate(dev, parsed).uas == pytest.approx(r.dev_uas)
    dynfs2.parse(dev, prune_margin=float("inf"))  # the same threshold, no pruning
    assert dynfs2.dynfs_stats_["cost"] > cost


def test_second_order_training_chooses_the_labelers_stop_on_dev(
    dynfs2: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank]
) -> None:
    # The last step of `fit` for either order: what `depfs train --order 2 --dynfs` saves.
    _, dev = data
    r = dynfs2.dynfs_result_
    stop = dynfs2.model_.dynfs_label_stop
    assert stop is not None and stop[1] == pytest.approx(r.label_margin)  # stored as f32
    assert r.label_cost is not None and 0 < r.label_cost < 100
    parsed = dynfs2.parse(dev)
    assert dynfs2.dynfs_stats_["lab_cost"] * 100 == pytest.approx(r.label_cost)
    assert depfs.evaluate(dev, parsed).las == pytest.approx(r.label_dev_las)
    full = dynfs2.parse(dev, label_margin=float("inf"))
    assert dynfs2.dynfs_stats_["lab_cost"] == 1.0
    assert depfs.evaluate(dev, full).las - r.label_dev_las <= dynfs2.dynfs_tolerance + 1e-9


def test_second_order_cli_trains_and_info_shows_the_sibling_groups(
    tmp_path: Path, groups2_file: Path
) -> None:
    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    synthetic(150, seed=5).write(train)
    synthetic(40, seed=6).write(dev)
    common = ["--train", str(train), "--dev", str(dev), "--epochs", "2", "--seed", "7"]
    run = CliRunner().invoke
    res = run(
        main,
        ["train", "--parser", "graph", "--order", "2", "--dynfs", "--groups", str(groups2_file)]
        + ["--folds", "2", *common, "--out", str(tmp_path / "d.depfs")],
    )
    assert res.exit_code == 0, res.output
    res = run(main, ["info", str(tmp_path / "d.depfs")])
    assert res.exit_code == 0, res.output
    assert "groups of 1, 2, 1, sibling groups of 1, 1; policy threshold" in res.output
    for args in (["--no-dynfs"], []):
        out = tmp_path / "out.conllu"
        res = run(main, ["parse", str(tmp_path / "d.depfs"), *args, str(dev), "-o", str(out)])
        assert res.exit_code == 0, res.output
        assert depfs.evaluate(depfs.read_conllu(dev), depfs.read_conllu(out)).uas > 50


# The policy's lexical features (He et al. §5.4: the arc's group-1 parsing features).


def test_lexical_weights_lock_exactly_the_arcs_their_features_say(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank]
) -> None:
    """Meta weights 0: at threshold 1 a decision locks iff its lexical weights sum above 1.
    One feature weighted 1000 locks exactly the recorded decisions holding it; weighted
    -1000 at threshold -1, every decision but those. Planted (once each): the lexical sum
    left out of the score (no lock), the ids of arc m → h recorded (counts differ)."""
    _, dev = data
    m = dynfs.model_
    groups = m.dynfs[0]
    zeros = [0.0] * depfs._core.dynfs_n_features(len(groups))
    inf = float("inf")
    _, st, x, _ = m.run_dynfs(dev, groups=groups, expert=True, record=True)
    ids = st["lex_ids"]
    assert ids.dtype == np.uint32 and ids.shape == (len(x), len(groups[0]))
    # The most frequent feature, not in every state.
    values, counts = np.unique(ids, return_counts=True)
    key = int(values[np.argmax(np.where(counts < len(ids), counts, 0))])
    for w, thr in ((1000.0, 1.0), (-1000.0, -1.0)):
        lex = np.zeros(depfs._core.dynfs_lex_size(), dtype=np.float32)
        lex[key] = w
        _, st, x, _ = m.run_dynfs(
            dev, weights=zeros, threshold=thr, lex=lex, record=True, prune_margin=inf
        )
        has = (st["lex_ids"] == key).any(axis=1)
        assert len(has) == st["decisions"] and 0 < has.sum() < len(has)
        assert st["locks"] == (has.sum() if w > 0 else (~has).sum())
    # Without the table the same policy never locks.
    _, st, _, _ = m.run_dynfs(
        dev, weights=zeros, threshold=1.0, lex=np.zeros(0, np.float32), prune_margin=inf
    )
    assert st["locks"] == 0


def test_lexical_ids_are_features_of_the_arc(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank]
) -> None:
    """Group 1 is upos(h) & upos(m) & dir & dist: states with one lexical id share the
    ROOT-arc flag (policy feature 6) and the direction-and-distance class, and there are
    many ids. Planted: the ids hashed on (m, m) (ROOT flags mixed)."""
    _, dev = data
    groups = dynfs.model_.dynfs[0]
    _, st, x, _ = dynfs.model_.run_dynfs(dev, groups=groups, expert=True, record=True)
    ids = st["lex_ids"][:, 0]
    assert len(np.unique(ids)) > 20
    for i in np.unique(ids):
        rows = x[ids == i]
        assert len(np.unique(rows[:, 6])) == 1, f"id {i}: ROOT and other arcs"
        # Distance bins 1, 2 exact in both the template and the policy's features.
        near = rows[:, 7:9]
        assert (near == near[0]).all(), f"id {i}: distances 1, 2 and other"


def test_fit_policy_learns_a_lexical_feature() -> None:
    """y is 1 exactly when lexical id 7 is among a state's ids and the meta-features are
    noise: the fitted weights (meta, then the table) separate by id 7's weight.
    Planted: the ids left out of the design (accuracy ~ chance)."""
    rng = np.random.default_rng(3)
    n = 600
    x = np.ones((n, 4), dtype=np.float32)
    x[:, 1:] = rng.uniform(-1, 1, (n, 3))
    ids = rng.integers(8, 5000, (n, 2)).astype(np.uint32)
    y = (rng.uniform(size=n) < 0.5).astype(np.uint8)
    ids[y == 1, 1] = 7
    w = np.array(fit_policy(x, y, lex_ids=ids))
    size = depfs._core.dynfs_lex_size()
    assert len(w) == 4 + size
    meta, lex = w[:4], w[4:]
    score = x @ meta + lex[ids].sum(axis=1)
    assert ((score > 0) == (y == 1)).mean() > 0.95
    assert lex[7] > 1.0
    assert len(fit_policy(x, np.ones(n, dtype=np.uint8), lex_ids=ids)) == 4 + size


def test_a_lexical_policy_round_trips_and_info_says_so(
    dynfs: depfs.GraphParser, data: tuple[depfs.Treebank, depfs.Treebank], tmp_path: Path
) -> None:
    """DAgger gives the policy a lexical table (POLICY_LEX); it survives save / load and the
    choices after DAgger, parses the same after loading, and `depfs info` says so; a model
    given an empty table is written as before and says not. Planted: the table not
    written (loads without one)."""
    _, dev = data
    lex = dynfs.model_.dynfs_lex
    assert lex is not None and lex.shape == (depfs._core.dynfs_lex_size(),) and lex.any()
    assert dynfs.dynfs_result_.as_dict()["policy_lexical"] is True
    dynfs.save(tmp_path / "m.depfs")
    back = depfs.load(tmp_path / "m.depfs")
    assert np.array_equal(back.model_.dynfs_lex, lex)
    assert back.parse(dev).to_string() == dynfs.parse(dev).to_string()
    assert depfs.model_info(tmp_path / "m.depfs")["dynfs"]["policy_lexical"] is True
    res = CliRunner().invoke(main, ["info", str(tmp_path / "m.depfs")])
    assert res.exit_code == 0 and "(lexical features: group 1's)" in res.output
    # Without the table: the policy of the meta-features (other decisions here).
    groups, weights, threshold = dynfs.model_.dynfs
    plain = depfs.GraphParser(dynfs=True)
    plain.model_ = dynfs.model_.with_dynfs(groups, weights, threshold, lex=np.zeros(0, np.float32))
    assert plain.model_.dynfs_lex is None
    plain.save(tmp_path / "p.depfs")
    assert depfs.load(tmp_path / "p.depfs").model_.dynfs_lex is None
    assert depfs.model_info(tmp_path / "p.depfs")["dynfs"]["policy_lexical"] is False
    res = CliRunner().invoke(main, ["info", str(tmp_path / "p.depfs")])
    assert res.exit_code == 0 and "lexical features" not in res.output
    with pytest.raises(ValueError, match="lexical weights"):
        dynfs.model_.with_dynfs(groups, weights, threshold, lex=np.zeros(5, np.float32))


def test_an_old_model_file_is_written_again_as_it_was(tmp_path: Path) -> None:
    """dynfs1_v5.depfs (before lexical policies) loads without a table, and saving it again
    writes the same variant: its parse is the checked-in one (test_checked_in_models) and
    the file reads back to the same parse. Planted: an empty table written as the lexical
    variant (the file's kind check below fails)."""
    data = Path(__file__).parent / "data"
    parser = depfs.load(data / "dynfs1_v5.depfs")
    assert parser.model_.dynfs_lex is None
    assert depfs.model_info(data / "dynfs1_v5.depfs")["dynfs"]["policy_lexical"] is False
    inp = depfs.read_conllu(data / "input.conllu")
    expected = (data / "expected" / "dynfs1_v5.conllu").read_text(encoding="utf-8")
    parser.save(tmp_path / "again.depfs")
    again = (tmp_path / "again.depfs").read_bytes()
    # The payload after the header is the old layout: same size as the original's.
    assert len(again) == (data / "dynfs1_v5.depfs").stat().st_size
    assert depfs.load(tmp_path / "again.depfs").parse(inp).to_string() == expected


def test_policy_lex_false_trains_the_meta_feature_policy(
    data: tuple[depfs.Treebank, depfs.Treebank], groups_file: Path
) -> None:
    """`GraphParser(dynfs=True, policy_lex=False)`: DAgger fits the meta-features alone
    (the policy before §5.4's acquired features), the model holds no lexical table."""
    train, dev = data
    meta = small(dynfs=True, groups=str(groups_file), policy_lex=False).fit(train, dev)
    assert meta.model_.dynfs_lex is None
    assert meta.dynfs_result_.as_dict()["policy_lexical"] is False
    with pytest.raises(TypeError, match="policy_lex"):
        small(dynfs=True, groups=str(groups_file), policy_lex="no").fit(train, dev)


def test_dagger_visits_each_fold_aggregates_and_keeps_the_cheapest_policy_within(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """train_policy's loop on stand-in models (no training): iteration i runs fold
    (i - 1) mod N with the parser of the other folds, the expert first and then the last
    policy fitted, each fit on every state so far; kept: the cheapest (iteration,
    threshold) on dev within the tolerance of the full model's UAS, else the most
    accurate. Planted, each failed: always fold 1; a fold parser trained on its own
    fold; no aggregation; never / always the expert; N iterations by default; no
    tolerance; the costliest within; the tolerance against the expert's UAS; the
    cheapest when none is within; dev at threshold 0 only; the iteration off by one."""
    from depfs.dynamic import he2013

    train, dev = synthetic(12, seed=3), synthetic(4, seed=4)
    sents = [s.to_string() for s in train]
    assert len(set(sents)) == len(sents)
    groups = [[0], [1], [2]]
    n_meta = depfs._core.dynfs_n_features(len(groups))
    monkeypatch.setattr(he2013, "_uas", lambda _gold, parsed: parsed)  # fakes parse to a UAS
    runs: list[tuple[int, list[str], bool, float | None]] = []
    fits: list[tuple[int, int | None]] = []

    class FoldModel:
        def __init__(self, rest: depfs.Treebank) -> None:
            self.rest = {s.to_string() for s in rest}

        def run_dynfs(self, fold, *, weights, expert, **_kw):  # type: ignore[no-untyped-def]
            runs.append(
                (models.index(self), [s.to_string() for s in fold], expert, weights and weights[0])
            )
            assert not self.rest & {s.to_string() for s in fold}
            n = len(fold)  # a state per sentence
            x, y = np.zeros((n, n_meta), np.float32), np.zeros(n, np.uint8)
            return None, {"lex_ids": np.zeros((n, 2), np.uint32)}, x, y

    models: list[FoldModel] = []

    def fold_parser(rest: depfs.Treebank) -> FoldModel:
        models.append(FoldModel(rest))
        return models[-1]

    def fit(x, y, c=1.0, lex_ids=None):  # type: ignore[no-untyped-def]
        fits.append((len(x), None if lex_ids is None else len(lex_ids)))
        return [float(len(fits))] + [0.0] * (n_meta - 1)  # weights[0]: which fit

    monkeypatch.setattr(he2013, "fit_policy", fit)
    # Dev (full model UAS 90, the expert 95 at 10%): (fit, threshold) -> (UAS, cost).
    table = {
        (1, 0.0): (89.9, 0.5),
        (2, 1.0): (89.85, 0.3),
        (3, 2.0): (89.85, 0.2),  # the cheapest within 0.2
        (4, -1.0): (89.5, 0.05),  # cheaper, not within
        (5, 0.5): (90.5, 0.9),  # the most accurate
    }

    class Dev:
        def run_dynfs(self, _dev, *, weights=None, threshold=0.0, expert=False, **_kw):  # type: ignore[no-untyped-def]
            if expert:
                return 95.0, {"cost": 0.1}, None, None
            uas, cost = table.get((int(weights[0]), threshold), (50.0, 1.0))
            return uas, {"cost": cost}, None, None

    class Reference:
        def parse(self, _dev, threads=1):  # type: ignore[no-untyped-def]
            return 90.0

        def with_dynfs(self, *_args):  # type: ignore[no-untyped-def]
            return Dev()

    r = he2013.train_policy(None, train, dev, groups, fold_parser, reference=Reference(), folds=3)
    assert (r.iteration, r.threshold, r.dev_uas, r.dev_cost) == (3, 2.0, 89.85, 20.0)
    assert (r.full_dev_uas, r.expert_dev_uas, r.expert_dev_cost) == (90.0, 95.0, 10.0)
    assert len(models) == 3 and len(r.rows) == 6  # 2 x folds iterations
    assert [m for m, *_ in runs] == [0, 1, 2, 0, 1, 2]
    assert [f for _, f, *_ in runs] == [sents[0:4], sents[4:8], sents[8:12]] * 2
    assert [e for *_, e, _ in runs] == [True] + [False] * 5
    assert [w for *_, w in runs] == [None, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert fits == [(4 * i, 4 * i) for i in range(1, 7)]  # every state so far
    # Nothing within (tolerance -20): the most accurate.
    fits.clear()
    r = he2013.train_policy(
        None, train, dev, groups, fold_parser, reference=Reference(), folds=3, tolerance=-20.0
    )
    assert (r.iteration, r.threshold, r.dev_uas) == (5, 0.5, 90.5)


class _Choices:
    """A stand-in DynFS model for the choices made on dev after DAgger: its dev runs
    answer (UAS or LAS, cost) from `table` by `key(kwargs)`; with_dynfs records."""

    def __init__(self, table, key, groups=((0,), (1,), (2,), (3,)), prune=None, tree=None):  # type: ignore[no-untyped-def]
        self.table, self.key = table, key
        self.groups = [list(g) for g in groups]
        self.weights = [0.0] * depfs._core.dynfs_n_features(len(self.groups))
        self.dynfs = (self.groups, self.weights, 0.0)
        self.arc_templates = ["t"] * 4
        self.dynfs_prune_margin = prune
        self.dynfs_tree_margin = tree
        self.dynfs_label_prefix_trained = None
        self.calls: list[dict[str, object]] = []
        self.made: dict[str, object] = {}

    def run_dynfs(self, _dev, **kw):  # type: ignore[no-untyped-def]
        self.calls.append(kw)
        score, cost = self.table.get(self.key(self, kw), (50.0, 1.0))
        return score, {"cost": cost, "lab_cost": cost}, None, None

    def with_dynfs(self, groups, weights, threshold, **kw):  # type: ignore[no-untyped-def]
        made = _Choices(self.table, self.key, groups, kw.get("prune_margin"), kw.get("tree_margin"))
        made.dynfs = (groups, weights, threshold)
        made.made = kw
        return made

    def label_spreads(self, _train):  # type: ignore[no-untyped-def]
        return [1.0, 3.0, 2.0]

    def label_dict(self, _train):  # type: ignore[no-untyped-def]
        return [(1, 2, True, [0])]


def test_fewer_rounds_keeps_the_fewest_rounds_within_and_the_prune_margin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Of merges within the slack the fewest rounds win, and the merged model keeps the
    model's prune and tree margins (planted, each failed: the most rounds first; the
    margin dropped)."""
    from depfs.dynamic import he2013

    monkeypatch.setattr(he2013, "_uas", lambda _gold, parsed: parsed)
    # Four rounds: 90 at 40%; merged after 1 or 2 groups: both within.
    table = {4: (90.0, 0.40), 2: (89.99, 0.41), 3: (90.0, 0.40)}
    model = _Choices(table, lambda m, _kw: len(m.dynfs[0]), prune=2.5, tree=1.5)
    kept, keep, uas, cost = fewer_rounds(model, None, slack=(0.05, 2.0))
    assert (keep, uas, cost, len(kept.dynfs[0])) == (1, 89.99, 41.0, 2)
    assert kept.dynfs_prune_margin == 2.5 and kept.dynfs_tree_margin == 1.5


def test_pruning_choice_takes_the_cheapest_within_and_leaves_ties_to_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """choose_pruning: the cheapest (threshold, prune margin, tree margin) within the
    tolerance of the full model, each margin also alone; one within replaces a model that
    is not, even at a higher cost; an equal cost leaves the model as it is (planted, each
    failed: only cheaper replaces; ties to the candidate; no tolerance; the tree margins
    not tried; a tree margin never without a prune margin)."""
    from depfs.dynamic import he2013

    monkeypatch.setattr(he2013, "_uas", lambda _gold, parsed: parsed)

    def key(_m, kw):  # type: ignore[no-untyped-def]
        return (kw["threshold"], kw["prune_margin"], kw["tree_margin"])

    inf = float("inf")
    # The model (threshold 0, no margin) is not within 0.2 of 90; (1, 2) is, at more cost;
    # (2, 3) is cheaper and not within.
    table = {
        (0.0, inf, inf): (89.0, 0.4),
        (1.0, 2.0, inf): (89.9, 0.6),
        (2.0, 3.0, inf): (89.5, 0.1),
    }
    model = _Choices(table, key)
    grid = {"margins": (4.0, 2.0, 3.0), "tree_margins": (2.5, 1.5), "thresholds": (1.0, 2.0)}
    kept, margin, tree, uas, cost = he2013.choose_pruning(model, None, 90.0, **grid)
    assert (margin, tree, uas, cost, kept.dynfs[2], kept.dynfs_prune_margin) == (
        2.0,
        None,
        89.9,
        60.0,
        1.0,
        2.0,
    )
    assert kept.made["tree_margin"] is None
    # A tree margin with a prune margin, and one alone, cheaper still: the cheapest wins.
    table[(2.0, 4.0, 2.5)] = (89.85, 0.3)
    table[(1.0, inf, 1.5)] = (89.8, 0.2)
    kept, margin, tree, uas, cost = he2013.choose_pruning(_Choices(table, key), None, 90.0, **grid)
    assert (margin, tree, uas, cost, kept.dynfs[2]) == (None, 1.5, 89.8, 20.0, 1.0)
    assert kept.made["tree_margin"] == 1.5 and kept.made["prune_margin"] is None
    # The model within, a candidate as cheap and as good: the model stays.
    table = {
        (0.0, inf, inf): (90.0, 0.5),
        (1.0, 4.0, inf): (90.0, 0.5),
        (1.0, 4.0, 2.5): (90.0, 0.5),
    }
    kept, margin, tree, uas, cost = he2013.choose_pruning(_Choices(table, key), None, 90.0, **grid)
    assert (margin, tree, uas, cost, kept.dynfs[2]) == (None, None, 90.0, 50.0, 0.0)


def test_label_stop_orders_by_spread_and_keeps_the_cheapest_within(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """choose_label_stop: the labeler's templates in descending spread, checked after
    each one for a labeler of fewer than 8 templates, and the cheapest margin within the
    tolerance of the full labeler's LAS (planted, each failed: ascending spread; a
    check every 4th template; no tolerance)."""
    import sys
    from types import SimpleNamespace

    monkeypatch.setattr(
        sys.modules["depfs.evaluate"], "evaluate", lambda _g, parsed: SimpleNamespace(las=parsed)
    )
    monkeypatch.setattr(
        depfs._core.GraphModel, "label_tail_scales", staticmethod(lambda order, spreads: [1.0] * 3)
    )
    unit = float(np.sqrt(1 + 9 + 4))

    def key(_m, kw):  # type: ignore[no-untyped-def]
        return (round(kw["label_margin"] / unit, 2), bool(kw["label_dict"]))

    table = {
        (float("inf"), False): (85.0, 1.0),  # the full labeler
        (1.5, False): (84.9, 0.6),  # within 0.2
        (1.0, True): (84.85, 0.4),  # within, cheaper: kept
        (0.5, False): (83.0, 0.2),  # cheaper, not within
    }
    model = _Choices(table, key)
    kept, margin, las, cost = choose_label_stop(model, None, None)
    assert (margin / unit, las, cost) == (pytest.approx(1.0), 84.85, 40.0)
    order, stop_margin, _scale, every = kept.made["label_stop"]  # type: ignore[misc]
    assert (order, every, stop_margin) == ([1, 2, 0], 1, margin)
    assert kept.made["label_dict"] == [(1, 2, True, [0])]
    assert all(c["label_order"] == [1, 2, 0] and c["label_every"] == 1 for c in model.calls)


def test_label_stop_keeps_the_prefix_trained_labeler_when_it_is_cheaper_within(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """choose_label_stop with a prefix-trained labeler: its margins in units of its own
    spreads and its scale from them, in the stop's order (the model's), and kept with its
    weights when cheaper within the tolerance of the model's full labeler (planted, each
    failed: the prefix labeler not tried; the model's unit for it)."""
    import sys
    from types import SimpleNamespace

    monkeypatch.setattr(
        sys.modules["depfs.evaluate"], "evaluate", lambda _g, parsed: SimpleNamespace(las=parsed)
    )
    unit = float(np.sqrt(1 + 9 + 4))
    prefix = _Choices({}, None)
    prefix.label_spreads = lambda _train: [3.0, 9.0, 6.0]  # type: ignore[method-assign]

    def key(m, kw):  # type: ignore[no-untyped-def]
        pre = kw["label_weights"] is prefix
        return (
            round(kw["label_margin"] / (3 * unit if pre else unit), 2),
            bool(kw["label_dict"]),
            pre,
        )

    table = {
        (float("inf"), False, False): (85.0, 1.0),  # the full labeler
        (1.0, True, False): (84.85, 0.4),  # the model's labeler, within
        (0.3, True, True): (84.81, 0.25),  # the prefix-trained one, within and cheaper: kept
        (0.25, True, True): (84.5, 0.2),  # cheaper, not within
    }
    model = _Choices(table, key)
    kept, margin, las, cost = choose_label_stop(model, None, None, prefix_labeler=prefix)
    assert (margin / (3 * unit), las, cost) == (pytest.approx(0.3), 84.81, 25.0)
    assert kept.made["label_weights"] is prefix
    order, stop_margin, scale, _every = kept.made["label_stop"]  # type: ignore[misc]
    assert order == [1, 2, 0] and stop_margin == margin
    assert scale == depfs._core.GraphModel.label_tail_scales(order, [3.0, 9.0, 6.0])
    assert all(c["label_order"] == [1, 2, 0] for c in model.calls)
    # Without it, the model's own labeler (weights None: its own).
    kept, margin, las, _ = choose_label_stop(model, None, None)
    assert (margin / unit, las) == (pytest.approx(1.0), 84.85)
    assert kept.made["label_weights"] is model


def test_dynfs_options_are_checked_first_and_reach_dagger(
    groups_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """folds, dagger_iterations, dynfs_tolerance and policy_lex are checked before any
    training and passed to DAgger as given (planted, each failed: folds of 1 accepted;
    the tolerance unchecked; 0 iterations accepted until after training; the folds,
    the tolerance or policy_lex not passed to train_policy)."""
    from depfs.dynamic import he2013

    train, dev = synthetic(40, seed=1), synthetic(10, seed=2)

    def trained(*_args, **_kw):  # type: ignore[no-untyped-def]
        raise AssertionError("trained before the options were checked")

    with monkeypatch.context() as m:
        m.setattr(depfs._core, "GraphTrainer", trained)
        for bad, name in [
            ({"folds": 1}, "folds"),
            ({"dagger_iterations": 0}, "dagger_iterations"),
            ({"dynfs_tolerance": float("nan")}, "dynfs_tolerance"),
        ]:
            with pytest.raises(ValueError, match=name):
                small(dynfs=True, groups=str(groups_file), **bad).fit(train, dev)

    class Stop(Exception):
        pass

    seen: dict[str, object] = {}

    def spy(*_args, **kw):  # type: ignore[no-untyped-def]
        seen.update(kw)
        raise Stop

    monkeypatch.setattr(he2013, "train_policy", spy)
    parser = small(
        dynfs=True,
        groups=str(groups_file),
        epochs=1,
        folds=3,
        dagger_iterations=5,
        dynfs_tolerance=0.7,
        policy_lex=False,
    )
    with pytest.raises(Stop):
        parser.fit(train, dev)
    assert (seen["folds"], seen["iterations"], seen["tolerance"], seen["lex"]) == (3, 5, 0.7, False)
