"""depfs.GraphParser, depfs.load, depfs.templates and the train / parse / templates CLI."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import depfs
import numpy as np
import pytest
from click.testing import CliRunner
from depfs import GraphParser, Treebank
from depfs.cli import main
from depfs.errors import ModelError, TemplateError
from depfs.templates import parse_templates, template_set_text, template_sets
from small_models import ARC, LAB, small_graph

# The order-2 test here trains with one sibling template (small_models.SIB has two);
# order-1 training ignores sibling templates.
ONE_SIB = "upos(h) & upos(s) & upos(m)\n"


def toy_conllu(n: int, seed: int) -> str:
    """A toy language with fixed attachments: DET ADJ* NOUN VERB DET NOUN ADV?."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words: list[tuple[str, str, int, str]] = []
        n_adj = rng.randrange(3)
        subj = 2 + n_adj
        verb = subj + 1
        words.append(("the", "DET", subj, "det"))
        words += [("big", "ADJ", subj, "amod")] * n_adj
        words.append((rng.choice(["dog", "cat", "man"]), "NOUN", verb, "nsubj"))
        words.append((rng.choice(["sees", "likes"]), "VERB", 0, "root"))
        words.append(("a", "DET", verb + 2, "det"))
        words.append((rng.choice(["dog", "cat", "bird"]), "NOUN", verb, "obj"))
        if rng.random() < 0.5:
            words.append(("now", "ADV", verb, "advmod"))
        for i, (f, p, h, d) in enumerate(words, 1):
            out.append(f"{i}\t{f}\t{f}\t{p}\t_\t_\t{h}\t{d}\t_\t_")
        out.append("")
    return "\n".join(out) + "\n"


def toy(n: int, seed: int) -> Treebank:
    return Treebank.from_string(toy_conllu(n, seed))


def uas(gold: Treebank, pred: Treebank) -> float:
    g = np.concatenate([s.heads for s in gold])
    p = np.concatenate([s.heads for s in pred])
    return float((g == p).mean())


@pytest.fixture(scope="module")
def fitted() -> GraphParser:
    return small_graph(max_bits=12).fit(toy(150, 1))


def test_fit_parse_and_history(fitted: GraphParser):
    test = toy(40, 2)
    parsed = fitted.parse(test, threads=1)
    assert uas(test, parsed) > 0.99
    assert [s.deprels for s in parsed] == [s.deprels for s in test]
    assert [h["epoch"] for h in fitted.history_] == [1, 2, 3]
    assert np.array_equal(
        np.concatenate([s.heads for s in fitted.parse(test, threads=2)]),
        np.concatenate([s.heads for s in parsed]),
    )


def test_dev_scores_and_callback():
    seen = []
    p = small_graph(epochs=2)
    dev = toy(10, 4)
    p.fit(toy(50, 3), dev=dev, on_epoch=seen.append)
    assert seen == p.history_ and [row["epoch"] for row in seen] == [1, 2]
    # The same keys as every depfs model, dev scores in percent from the one scorer.
    assert set(seen[-1]) == {"epoch", "train_accuracy", "seconds", "dev_uas", "dev_las"}
    scores = depfs.evaluate(dev, p.parse(dev))
    assert (seen[-1]["dev_uas"], seen[-1]["dev_las"]) == (scores.uas, scores.las)


@pytest.mark.parametrize("order,decoder", [(2, "eisner"), (1, "cle")])
def test_second_order_and_cle(order: int, decoder: str):
    p = small_graph(order, decoder, sibling_templates=ONE_SIB).fit(toy(100, 12))
    test = toy(20, 13)
    assert uas(test, p.parse(test)) > 0.99
    assert p.model_.order == order and p.model_.decoder == decoder


def test_mira_trains():
    # MIRA must learn the toy language too.
    m = depfs._core.GraphTrainer(toy(60, 5), ARC, ONE_SIB, LAB, update="mira", max_bits=10)
    for _ in range(3):
        m.epoch()
    test = toy(20, 6)
    assert uas(test, m.model().parse(test)) > 0.95
    with pytest.raises(ValueError, match="update must be"):
        depfs._core.GraphTrainer(toy(5, 5), ARC, ONE_SIB, LAB, update="adagrad")


def test_save_load_round_trip(fitted: GraphParser, tmp_path: Path):
    path = tmp_path / "toy.depfs"
    fitted.save(path)
    back = depfs.load(path)
    assert isinstance(back, GraphParser)
    test = toy(20, 7)
    a = np.concatenate([s.heads for s in back.parse(test)])
    b = np.concatenate([s.heads for s in fitted.parse(test)])
    assert np.array_equal(a, b)
    assert back.model_.labels == fitted.model_.labels
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelError, match="truncated"):
        depfs.load(path)
    path.write_bytes(b"not a model at all")
    with pytest.raises(ModelError, match="not a depfs model"):
        depfs.load(path)


def test_arc_scores_subsets_add_up(fitted: GraphParser):
    tb = toy(5, 8)
    full = fitted.arc_scores(tb, [0, 1])
    a = fitted.arc_scores(tb, [0, 1], templates=[0, 2])
    b = fitted.arc_scores(tb, [0, 1], templates=[1, 3])
    for f, x, y in zip(full, a, b):
        n1 = len(tb[0]) + 1 if f is full[0] else len(tb[1]) + 1
        assert f.shape == (n1, n1)
        np.testing.assert_allclose(f, x + y, atol=1e-4)
    groups = fitted.group_scores(tb, [0], [[0, 2], [1, 3]])
    assert groups[0].shape == (2,) + full[0].shape
    np.testing.assert_allclose(groups[0].sum(axis=0), full[0], atol=1e-4)
    pruned = fitted.arc_scores(tb, [0], prune=True)[0]
    mask = fitted.model_.length_dict_mask(tb, 0)
    assert np.all(np.isneginf(pruned[1:, :][~mask[1:, :] & ~np.eye(len(mask), dtype=bool)[1:, :]]))
    with pytest.raises(ValueError, match="out of range"):
        fitted.arc_scores(tb, [99])
    with pytest.raises(ValueError, match="template index"):
        fitted.arc_scores(tb, [0], templates=[50])


def test_length_dictionary_and_counts(fitted: GraphParser):
    tb = toy(30, 9)
    st = fitted.length_dict_stats(tb)
    assert st["gold_pruned"] == 0 and st["other_pruned"] > 0
    assert 0 < st["other_pruned_share"] <= 1
    m = fitted.model_
    assert m.max_arc_length("NOUN", "DET", False) in (1, 2, 3)
    assert m.max_arc_length(None, "VERB", True) is not None
    pruned = m.template_evaluations(tb, prune=True)
    full = m.template_evaluations(tb, prune=False)
    assert pruned.shape == (4,) and np.all(pruned <= full) and pruned.sum() < full.sum()


def test_templates_module():
    assert {"first_order", "second_order", "labeler", "arc_eager", "nilsson_nugues"} <= set(
        template_sets()
    )
    first = parse_templates(template_set_text("first_order"))
    assert len(first) > 100 and len({t.id for t in first}) == len(first)
    [t] = parse_templates("POS(m) & UPOS(h)")
    assert t.text == "upos(h) & upos(m)" and t.order == 1
    [c] = parse_templates("POS(STACK_1 lc pw)", family="config")
    assert c.text == "upos(STACK_1 lc pw)"
    with pytest.raises(TemplateError, match=r'"upos\(q\)" \(line 2\)'):
        parse_templates("upos(h)\nupos(q)\n")
    with pytest.raises(TemplateError, match="limit is 3"):
        parse_templates("upos(h) & upos(m) & form(h) & form(m)")
    assert len(parse_templates("upos(h) & upos(m) & form(h) & form(m)", max_atoms=4)) == 1
    with pytest.raises(TemplateError):
        GraphParser(arc_templates="bogus(h)").fit(toy(5, 1))


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "depfs.cli", *args], capture_output=True, text=True, input=stdin
    )


def test_cli_train_parse_templates(tmp_path: Path):
    train = tmp_path / "train.conllu"
    train.write_text(toy_conllu(60, 10))
    model = tmp_path / "m.depfs"
    r = run_cli(
        "train",
        "--parser",
        "graph",
        "--train",
        str(train),
        "--dev",
        str(train),
        "--out",
        str(model),
        "--epochs",
        "2",
        "--max-bits",
        "10",
    )
    assert r.returncode == 0, r.stderr
    assert "dev UAS" in r.stderr and model.exists()
    r = run_cli("parse", str(model), stdin=toy_conllu(3, 11))
    assert r.returncode == 0, r.stderr
    assert Treebank.from_string(r.stdout).n_words == toy(3, 11).n_words
    out = tmp_path / "out.conllu"
    r = run_cli("parse", str(model), str(train), "-o", str(out), "--threads", "1")
    assert r.returncode == 0, r.stderr
    assert out.read_text() == depfs.load(model).parse(depfs.read_conllu(train)).to_string()
    r = run_cli("parse", str(tmp_path / "missing.depfs"), str(train))
    assert r.returncode == 2 and "missing.depfs" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("templates", "list")
    assert r.returncode == 0 and "first_order" in r.stdout
    r = run_cli("templates", "show", "nilsson_nugues", "--canonical")
    assert r.returncode == 0 and "upos(STACK_0)" in r.stdout
    r = run_cli("templates", "show", "nope")
    assert r.returncode == 2 and "nope: no such template set or file" in r.stderr


def ud_dir() -> Path | None:
    here = Path(__file__).resolve().parent.parent
    for c in [os.environ.get("DEPFS_DATA"), here.parent / "shared/data/ud"]:
        if c and (Path(c) / "en_ewt" / "dev.conllu").exists():
            return Path(c)
    return None


@pytest.mark.ud
@pytest.mark.skipif(ud_dir() is None, reason="UD data not found")
def test_ud_small_model_learns_and_dictionary_keeps_gold():
    d = ud_dir()
    assert d is not None
    text = (d / "en_ewt" / "dev.conllu").read_text(encoding="utf-8")
    blocks = text.split("\n\n")
    train = Treebank.from_string("\n\n".join(blocks[:400]) + "\n\n")
    test = Treebank.from_string("\n\n".join(blocks[400:500]) + "\n\n")
    p = GraphParser(epochs=2, max_bits=14).fit(train)
    assert uas(test, p.parse(test)) > 0.6
    st = p.length_dict_stats(train)
    assert st["gold_pruned"] == 0


def test_a_template_set_of_comments_alone_is_refused(tmp_path: Path):
    # A labeler of no template trained, and labelled every word alike (`acl`), exit 0.
    train = toy(30, 6)
    for kw in ({"labeler_templates": "# none"}, {"order": 2, "sibling_templates": "\n# x\n"}):
        name = next(iter(k for k in kw if k.endswith("templates")))
        with pytest.raises(ValueError, match=f"{name}: the template set is empty"):
            depfs.GraphParser(epochs=1, **kw).fit(train)
    empty = tmp_path / "empty.txt"
    empty.write_text("# no templates\n")
    train_file = tmp_path / "train.conllu"
    train.write(str(train_file))
    for option in ("--labeler-templates", "--templates"):
        res = CliRunner().invoke(
            main,
            [
                "train",
                "--parser",
                "graph",
                "--train",
                str(train_file),
                option,
                str(empty),
                "-o",
                str(tmp_path / "m.depfs"),
            ],
        )
        assert res.exit_code == 2 and "no template in it" in res.output, res.output
        assert not (tmp_path / "m.depfs").exists()


def test_mira_c_and_max_bits_are_named_with_their_own_range(tmp_path: Path):
    # "update must be perceptron or mira (with mira_c > 0), got mira" named the wrong
    # value; --max-bits allowed 4 and 5 in its help, then refused them as "max_bits".
    with pytest.raises(ValueError, match="mira_c must be a number > 0, got 0"):
        depfs.GraphParser(epochs=1, update="mira", mira_c=0.0).fit(toy(10, 3))
    train = tmp_path / "t.conllu"
    toy(10, 3).write(str(train))
    res = CliRunner().invoke(
        main, ["train", "--parser", "graph", "--train", str(train), "--max-bits", "5", "-o", "m"]
    )
    assert res.exit_code == 2 and "--max-bits" in res.output and "6<=x<=30" in res.output


@pytest.mark.parametrize(
    ("order", "decoder"), [(1, "eisner"), (1, "cle"), (2, "eisner")], ids=["o1", "o1-cle", "o2"]
)
def test_labels_keep_uds_root_rule(order: int, decoder: str) -> None:
    """A word is labelled `root` exactly when its head is ROOT (UD's rule), even from a
    model trained on little data: the labeler was an argmax over every label whatever
    the arc, and such a model gave `root` to other words and `punct` to the root (35
    and 28 words of these 300 sentences at orders 1 and 2)."""
    from depfs.datasets import synthetic

    parser = small_graph(order=order, decoder=decoder, epochs=1).fit(synthetic(40, seed=3))
    assert "root" in parser.model_.labels
    parsed = parser.parse(synthetic(300, seed=4))
    broken = [
        (i, h, label)
        for i, s in enumerate(parsed)
        for h, label in zip(s.heads, s.deprels)
        if (h == 0) != (label == "root")
    ]
    assert broken == []


def test_sentences_with_several_roots_are_skipped_in_training_with_a_note() -> None:
    """A gold tree with several roots is one no decode gives (each gives one root): the
    graph parser skips it with a note, as the arc-eager parser does (it trained on it,
    silently)."""
    from depfs.base import SkippedSentencesWarning
    from depfs.datasets import synthetic_conllu

    sentences = synthetic_conllu(30, seed=5).rstrip("\n").split("\n\n")
    lines = sentences[3].split("\n")
    k = next(i for i, line in enumerate(lines) if line[:1].isdigit() and "\t0\t" not in line)
    cols = lines[k].split("\t")
    cols[6] = "0"
    lines[k] = "\t".join(cols)
    sentences[3] = "\n".join(lines)
    tb = Treebank.from_string("\n\n".join(sentences) + "\n\n", multiple_roots=True)
    note = r"1 of 30 .*several roots, first at sentence 4"
    with pytest.warns(SkippedSentencesWarning, match=note):
        parser = small_graph(epochs=1).fit(tb)
    assert parser.train_info_["sentences"] == 29
