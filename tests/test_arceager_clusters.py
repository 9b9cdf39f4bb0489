"""Word clusters in the arc-eager parser's templates: `cluster(NODE)` / `cluster:K(NODE)`,
the table inside the parser's model file, the refusals and `depfs train --parser arc-eager
--clusters` (docs/design.md § Tag, then parse, "Word clusters in the parser")."""

from __future__ import annotations

import json
import random
from pathlib import Path

import depfs
import pytest
from click.testing import CliRunner
from depfs import ArcEagerParser, Treebank
from depfs.arceager import TrainingSet
from depfs.cli import main
from depfs.templates import Template
from small_models import two_class_paths

# These tests sweep margins below the presets on purpose: the note a user gets for
# that (`warn_untrained_margin`) is tested on its own.
pytestmark = pytest.mark.filterwarnings("ignore:margin .* is below half:UserWarning")

N_WORDS = 40

#: Templates that see only the words' cluster classes (1 bit) and the labels so far.
CLASS_ONLY = (
    "cluster:1(STACK_0)\ncluster:1(QUEUE_0)\ncluster:1(STACK_0) & cluster:1(QUEUE_0)\n"
    "cluster:1(QUEUE_1)\ndeprel(STACK_0 lc)\n"
)


def lexicon() -> tuple[list[str], list[str]]:
    """Nouns and verbs with no spelling cue to their class."""
    rng = random.Random(11)
    word = lambda k: "".join(rng.choice("bcdfghjklmnpqrstvwz") for _ in range(6)) + str(k)  # noqa: E731
    return [word(k) for k in range(N_WORDS)], [word(k) for k in range(N_WORDS, 2 * N_WORDS)]


def paths_file(path: Path) -> Path:
    """Nouns' paths start with 0, verbs' with 1; the rest is the word's own."""
    return two_class_paths(path, *lexicon())


def sentences(nouns: list[str], verbs: list[str], seed: int, n: int) -> str:
    """Sentences "N V ." (nsubj) or "V N ." (obj), every tag X: only the words' classes
    tell which word is the root."""
    rng, out = random.Random(seed), []
    for s in range(n):
        noun, verb = rng.choice(nouns), rng.choice(verbs)
        out.append(f"# sent_id = s{s}")
        if rng.random() < 0.5:
            out.append(f"1\t{noun}\t_\tX\t_\t_\t2\tnsubj\t_\t_")
            out.append(f"2\t{verb}\t_\tX\t_\t_\t0\troot\t_\t_")
            root = 2
        else:
            out.append(f"1\t{verb}\t_\tX\t_\t_\t0\troot\t_\t_")
            out.append(f"2\t{noun}\t_\tX\t_\t_\t1\tobj\t_\t_")
            root = 1
        out.append(f"3\t.\t_\tX\t_\t_\t{root}\tpunct\t_\t_")
        out.append("")
    return "\n".join(out) + "\n"


def split() -> tuple[Treebank, Treebank]:
    """Training on half of each class; the test on the other half (unseen words)."""
    nouns, verbs = lexicon()
    h = N_WORDS // 2
    train = Treebank.from_string(sentences(nouns[:h], verbs[:h], 0, 300))
    return train, Treebank.from_string(sentences(nouns[h:], verbs[h:], 1, 100))


def uas(parsed: Treebank, gold: Treebank) -> float:
    return depfs.evaluate(gold, parsed).uas


def test_config_templates_read_clusters_and_arc_templates_do_not() -> None:
    t = Template.parse("cluster:4(STACK_0) & upos(QUEUE_0) & cluster(QUEUE_1)", "config")
    assert t.atoms == (("STACK_0", "cluster:4"), ("QUEUE_0", "upos"), ("QUEUE_1", "cluster"))
    with pytest.raises(ValueError, match="bits of cluster must be 1..32"):
        Template.parse("cluster:0(STACK_0)", "config")
    with pytest.raises(ValueError, match="exists only in token and configuration templates"):
        Template.parse("cluster(h) & upos(m)", "arc")


def test_unseen_words_attach_by_their_cluster_and_the_table_survives_saving(tmp_path: Path) -> None:
    table = paths_file(tmp_path / "c.paths")
    train, test = split()
    parser = ArcEagerParser(CLASS_ONLY, epochs=3, clusters=table).fit(train)
    assert parser.model_.clusters == (2 * N_WORDS, 2 * N_WORDS)
    assert uas(parser.parse(test), test) == 100.0
    # The same templates on forms know nothing of the unseen words.
    forms = ArcEagerParser(CLASS_ONLY.replace("cluster:1", "form"), epochs=3).fit(train)
    assert uas(forms.parse(test), test) < 80.0
    parser.save(tmp_path / "p.depfs")
    table.unlink()  # the model file holds the table
    again = depfs.load(tmp_path / "p.depfs")
    assert again.model_.clusters == (2 * N_WORDS, 2 * N_WORDS)
    assert again.parse(test).to_string() == parser.parse(test).to_string()
    # A parser without a table has none in its file, nor the option in its training
    # information (its file is byte for byte what the build before the option wrote).
    forms.save(tmp_path / "f.depfs")
    plain = depfs.load(tmp_path / "f.depfs").model_
    assert plain.clusters is None
    assert "clusters" not in json.loads(plain.info)["params"]
    assert json.loads(again.model_.info)["params"]["clusters"] == str(table)


def test_templates_need_a_table_and_a_table_needs_templates(tmp_path: Path) -> None:
    table = paths_file(tmp_path / "c.paths")
    train, _ = split()
    with pytest.raises(ValueError, match="no cluster table"):
        ArcEagerParser(CLASS_ONLY, epochs=1).fit(train)
    with pytest.raises(ValueError, match="no template reads it"):
        ArcEagerParser("form(STACK_0)\nform(QUEUE_0)", epochs=1, clusters=table).fit(train)
    # A prepared training set carries the table; the parser then takes none of its own.
    prepared = TrainingSet(train, clusters=str(table))
    assert prepared.clusters == (2 * N_WORDS, 2 * N_WORDS)
    p = ArcEagerParser(CLASS_ONLY, epochs=1).fit(prepared)
    assert p.model_.clusters == (2 * N_WORDS, 2 * N_WORDS)
    for prepared_set in (prepared, TrainingSet(train)):  # (it said "carries" of either)
        with pytest.raises(ValueError, match="table is given to it .*not to the parser"):
            ArcEagerParser(CLASS_ONLY, epochs=1, clusters=table).fit(prepared_set)
    with pytest.raises(ValueError, match="no cluster table"):
        ArcEagerParser(CLASS_ONLY, epochs=1).fit(TrainingSet(train))
    # The default templates with a table read it.
    default = ArcEagerParser(epochs=1, clusters=table).fit(train)
    assert any("cluster" in t for t in default.templates_)
    # ... and so do they with a set that carries one (it was left unread, silently).
    on_set = ArcEagerParser(epochs=1).fit(prepared)
    assert on_set.templates_ == default.templates_
    assert on_set.model_.clusters == (2 * N_WORDS, 2 * N_WORDS)
    assert not any("cluster" in t for t in ArcEagerParser(epochs=1).fit(train).templates_)


def test_cli_trains_an_arc_eager_parser_with_clusters(tmp_path: Path) -> None:
    table = paths_file(tmp_path / "c.paths")
    train, test = split()
    (tmp_path / "train.conllu").write_text(train.to_string())
    (tmp_path / "tpl.txt").write_text(CLASS_ONLY)
    model = tmp_path / "p.depfs"
    args = ["train", "--parser", "arc-eager", "--train", str(tmp_path / "train.conllu")]
    args += ["--out", str(model), "--epochs", "3", "--clusters", str(table)]
    r = CliRunner().invoke(main, [*args, "--templates", str(tmp_path / "tpl.txt")])
    assert r.exit_code == 0, r.output
    cli = depfs.load(model)
    assert cli.model_.clusters == (2 * N_WORDS, 2 * N_WORDS)
    api = ArcEagerParser(CLASS_ONLY, epochs=3, clusters=table).fit(train)
    assert cli.parse(test).to_string() == api.parse(test).to_string()
    r = CliRunner().invoke(main, [*args[:2], "graph", *args[3:]])
    assert r.exit_code == 2 and "--clusters: --parser tagger or arc-eager only" in r.output
    r = CliRunner().invoke(main, [*args[:-2], "--templates", str(tmp_path / "tpl.txt")])
    assert r.exit_code != 0 and "no cluster table" in r.output


@pytest.mark.parametrize("stage_reads", [False, True])
def test_a_cascade_with_clusters_round_trips(tmp_path: Path, stage_reads: bool) -> None:
    """A cascade whose stage reads clusters (from the full model's table) or none (it
    trains without the table); the full model keeps it, and the file gives the same
    parses back."""
    table = paths_file(tmp_path / "c.paths")
    train, test = split()
    forms = "form(STACK_0)\nform(QUEUE_0)\n"
    order = CLASS_ONLY + forms if stage_reads else forms + CLASS_ONLY
    parser = ArcEagerParser(order, epochs=2, dynamic=True, cascade=(2,), clusters=table)
    parser.fit(train, dev=train)
    assert parser.model_.cascade == [2] and parser.model_.clusters == (2 * N_WORDS, 2 * N_WORDS)
    parser.save(tmp_path / "c.depfs")
    again = depfs.load(tmp_path / "c.depfs")
    assert again.model_.cascade == [2]
    for margin in ("accurate", 0.0, float("inf")):
        assert (
            again.parse(test, margin=margin).to_string()
            == parser.parse(test, margin=margin).to_string()
        )
    assert uas(again.parse(test, margin=float("inf")), test) == 100.0
    if stage_reads:  # at margin 0 the stage decides every move: from clusters alone
        assert uas(again.parse(test, margin=0.0), test) > 90.0
