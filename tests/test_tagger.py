"""The tagger: learns the synthetic grammar's columns, tags from FORM alone, keeps other
columns, saves and loads, refuses damaged files, runs from the CLI."""

from __future__ import annotations

from pathlib import Path

import depfs
import pytest
from click.testing import CliRunner
from depfs import Tagger, Treebank, evaluate
from depfs.cli import main
from depfs.datasets import synthetic, synthetic_conllu
from depfs.errors import ModelError

SMALL = "form(i)\nsuffix:2(i)\nlower(i-1)\nupos(i-1)\nambig(i+1)\nupos(i) & suffix:3(i)\n"


def blank(text: str, columns: tuple[int, ...] = (2, 3, 4, 5)) -> str:
    """CoNLL-U text with the given columns (0-based: 2 LEMMA .. 5 FEATS) set to `_`."""
    out = []
    for line in text.splitlines():
        cols = line.split("\t")
        if len(cols) == 10:
            for c in columns:
                cols[c] = "_"
        out.append("\t".join(cols))
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def tagger() -> Tagger:
    return fit_small()


def fit_small() -> Tagger:
    # min_known=50: the grammar's content words stay unknown, so the classifiers (not
    # only the tag dictionary) are trained and tested.
    return Tagger(SMALL, epochs=3, min_known=50).fit(synthetic(300, seed=0), dev=synthetic(40))


def test_learns_every_column_and_keeps_the_best_epoch(tagger: Tagger) -> None:
    assert tagger.columns_ == ["UPOS", "XPOS", "FEATS", "LEMMA"]
    assert len(tagger.history_) == 3
    row = tagger.history_[tagger.best_epoch_ - 1]
    assert row["dev_accuracy"] == max(r["dev_accuracy"] for r in tagger.history_)
    gold = synthetic(60, seed=2)
    s = evaluate(gold, tagger.tag(Treebank.from_string(blank(synthetic_conllu(60, seed=2)))))
    # The grammar is nearly unambiguous: a working tagger is almost perfect on new text.
    assert min(s.upos, s.xpos, s.ufeats, s.lemmas) > 97.0, s


def test_tags_from_form_only_and_keeps_other_columns(tagger: Tagger) -> None:
    text = synthetic_conllu(30, seed=3)
    from_gold = tagger.tag(Treebank.from_string(text)).to_string()
    from_blank = tagger.tag(Treebank.from_string(blank(text))).to_string()
    assert from_gold == from_blank
    kept = [c for c in (0, 1, 6, 7, 8, 9)]
    for a, b in zip(text.splitlines(), from_blank.splitlines()):
        ca, cb = a.split("\t"), b.split("\t")
        if len(ca) == 10:
            assert [ca[i] for i in kept] == [cb[i] for i in kept]
            assert "_" not in (cb[3], cb[4])
        else:
            assert a == b  # comments and blank lines untouched
    assert tagger.tag(Treebank.from_string(text), threads=2).to_string() == from_gold


def test_unknown_words_and_empty_input(tagger: Tagger) -> None:
    text = "1\tzorbles\t_\t_\t_\t_\t0\troot\t_\t_\n2\tquixotically\t_\t_\t_\t_\t1\tdep\t_\t_\n\n"
    out = tagger.tag(Treebank.from_string(text)).to_string().splitlines()
    assert len(out) == 3  # two words and the blank line
    for line in out[:2]:
        cols = line.split("\t")
        assert cols[3] != "_" and cols[2] != "_", line
    # An empty treebank tags to an empty treebank.
    assert len(tagger.tag(Treebank.from_string(""))) == 0


def test_plural_nouns_it_never_saw_get_their_lemma(tagger: Tagger) -> None:
    # The grammar's plural nouns end in -s with the singular as lemma; an unseen one
    # must go through the edit-script class (strip "s"), not be copied.
    text = "1\tthe\t_\t_\t_\t_\t2\tdet\t_\t_\n2\tzebras\t_\t_\t_\t_\t3\tnsubj\t_\t_\n"
    text += "3\tlaugh\t_\t_\t_\t_\t0\troot\t_\t_\n\n"
    cols = tagger.tag(Treebank.from_string(text)).to_string().splitlines()[1].split("\t")
    assert (cols[2], cols[3]) == ("zebra", "NOUN")


def test_save_load_same_tags_and_same_bytes(tagger: Tagger, tmp_path: Path) -> None:
    path = tmp_path / "t.depfs"
    tagger.save(path)
    again = depfs.load(path)
    assert isinstance(again, Tagger)
    tb = Treebank.from_string(blank(synthetic_conllu(20, seed=4)))
    assert again.tag(tb).to_string() == tagger.tag(tb).to_string()
    # Same data, same seed: the same file, byte for byte.
    other = fit_small()
    other.save(tmp_path / "u.depfs")
    assert (tmp_path / "u.depfs").read_bytes() == path.read_bytes()
    info = depfs.model_info(path)
    assert info["kind"] == "tagger" and info["input_columns"] == ["FORM"]
    assert "backward UPOS" not in info["templates"]  # SMALL: no backward pass


def test_a_tagger_file_of_the_earlier_layout_tags_as_it_did() -> None:
    """tests/data/tagger_v5.depfs was saved before line-local hashing (commit ac11595:
    ``Tagger(SMALL, epochs=3, min_known=50).fit(synthetic(300, seed=0))``); it loads with
    its own layout and tags input.conllu (tag columns blanked) as it did then."""
    data = Path(__file__).parent / "data"
    inp = Treebank.from_string(blank((data / "input.conllu").read_text(encoding="utf-8")))
    out = depfs.load(data / "tagger_v5.depfs").tag(inp, threads=1).to_string()
    assert out == (data / "expected" / "tagger_v5.conllu").read_text(encoding="utf-8")


def test_both_weight_layouts_train_save_and_load(tmp_path: Path) -> None:
    """Line-local hashing (the default) and the earlier layout both learn, and each
    tagger tags the same after a save and load."""
    from depfs import _core

    train, tb = synthetic(300, seed=0), Treebank.from_string(blank(synthetic_conllu(30, seed=5)))
    gold = synthetic(30, seed=5)
    for lines in (True, False):
        trainer = _core.TaggerTrainer(train, [SMALL], min_known=50, line_hashing=lines)
        for _ in range(3):
            trainer.epoch()
        model = trainer.model()
        tagged = model.tag(tb, 1, None)
        assert evaluate(gold, tagged).upos > 90
        path = tmp_path / f"lines_{lines}.depfs"
        model.save(str(path), "")
        assert depfs.load(path).tag(tb).to_string() == tagged.to_string()


def test_damaged_model_is_refused(tagger: Tagger, tmp_path: Path) -> None:
    path = tmp_path / "t.depfs"
    tagger.save(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError):
        depfs.load(path)


def test_columns_the_training_data_leaves_empty_are_not_learnt(tmp_path: Path) -> None:
    no_xpos = Treebank.from_string(blank(synthetic_conllu(100, seed=0), columns=(4,)))
    t = Tagger(SMALL, epochs=1).fit(no_xpos)
    assert t.columns_ == ["UPOS", "FEATS", "LEMMA"]
    text = synthetic_conllu(5, seed=5)
    out = t.tag(Treebank.from_string(text)).to_string()

    def xpos(t: str) -> list[str]:
        return [line.split("\t")[4] for line in t.splitlines() if line.count("\t") == 9]

    assert xpos(out) == xpos(text)
    with pytest.raises(ValueError, match="UPOS"):
        Tagger(SMALL).fit(Treebank.from_string(blank(synthetic_conllu(5), columns=(3,))))


def test_token_templates_refuse_what_is_not_predicted_yet() -> None:
    with pytest.raises(ValueError, match="right"):
        Tagger("upos(i+1)").fit(synthetic(5))
    with pytest.raises(ValueError):
        Tagger("dist & form(i)").fit(synthetic(5))


def test_cli_train_tag_eval(tmp_path: Path) -> None:
    train, dev, test = (tmp_path / f"{n}.conllu" for n in ("train", "dev", "test"))
    train.write_text(synthetic_conllu(200, seed=0))
    dev.write_text(synthetic_conllu(30, seed=1))
    test.write_text(synthetic_conllu(30, seed=2))
    (tmp_path / "blank.conllu").write_text(blank(test.read_text()))
    small = tmp_path / "small.txt"
    small.write_text(SMALL)
    model = tmp_path / "t.depfs"
    r = CliRunner().invoke(
        main,
        [
            "train",
            "--parser",
            "tagger",
            "--train",
            str(train),
            "--dev",
            str(dev),
            "--out",
            str(model),
            "--epochs",
            "2",
            "--templates",
            str(small),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "dev UPOS" in r.output
    out = tmp_path / "out.conllu"
    blanked = str(tmp_path / "blank.conllu")
    r = CliRunner().invoke(main, ["tag", str(model), blanked, "-o", str(out)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["eval", str(test), str(out), "--json"])
    assert r.exit_code == 0, r.output
    import json

    d = json.loads(r.output)
    assert d["upos"] > 97 and d["lemmas"] > 97
    r = CliRunner().invoke(
        main,
        ["train", "--parser", "tagger", "--order", "2", "--train", str(train), "--out", str(model)],
    )
    assert r.exit_code == 2 and "graph parser options" in r.output


def test_cli_notes_a_margin_on_an_ordinary_tagger_and_names_an_untagged_training_file(
    tagger: Tagger, tmp_path: Path
) -> None:
    """`tag --margin N` on a tagger not trained dynamic says so, as `parse` does (planted:
    no warning from Tagger.tag); an untagged --train is refused naming the file (planted:
    the core's message alone)."""
    model, gold = tmp_path / "t.depfs", tmp_path / "gold.conllu"
    tagger.save(model)
    gold.write_text(synthetic_conllu(20, seed=4))
    for margin, noted in (("0", True), ("inf", False)):
        r = CliRunner().invoke(main, ["tag", str(model), str(gold), "--margin", margin])
        assert r.exit_code == 0, r.output
        assert ("trained without --dynamic (Python: dynamic=True)" in r.stderr) == noted, r.stderr
    untagged = tmp_path / "untagged.conllu"
    untagged.write_text(blank(gold.read_text()))
    for args in (
        ["train", "--parser", "tagger", "--train", str(untagged), "--out", str(tmp_path / "m")],
        ["jackknife", "--train", str(untagged), "-o", str(tmp_path / "j.conllu"), "--folds", "2"],
    ):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, r.output
        assert f"error: {untagged}: the training treebank leaves UPOS empty" in r.stderr, r.stderr


def test_a_tagger_file_of_the_layout_before_the_backward_pass_tags_as_it_did() -> None:
    """tests/data/tagger_lines_v5.depfs was saved by the build before the backward pass
    (main at d49cb02, line-local hashing: ``Tagger(SMALL, epochs=3,
    min_known=50).fit(synthetic(300, seed=0))``); it tags input.conllu as it did then."""
    data = Path(__file__).parent / "data"
    inp = Treebank.from_string(blank((data / "input.conllu").read_text(encoding="utf-8")))
    model = depfs.load(data / "tagger_lines_v5.depfs")
    assert model.model_.backward_templates is None
    expected = (data / "expected" / "tagger_lines_v5.conllu").read_text(encoding="utf-8")
    assert model.tag(inp, threads=1).to_string() == expected
    assert model.tag(inp, threads=2).to_string() == expected


# A chain of the one ambiguous word "a" ends in "b" or "c", which decides the tag of every
# "a" of the chain: beyond the two words a left-to-right tagger sees to its right, only a
# backward pass carries it (through its own tag to the right, bupos(i+1)).
CHAIN_FORWARD = "form(i)\nupos(i-1)\nlower(i+1)\nlower(i+2)\n"
CHAIN_BIDI = CHAIN_FORWARD + "bupos(i)\n"
CHAIN_BACKWARD = "form(i)\nlower(i+1)\nbupos(i+1)\n"


def chains(n: int, seed: int) -> str:
    import random

    rng, out = random.Random(seed), []
    for s in range(n):
        end = rng.choice("bc")
        tag = "NOUN" if end == "b" else "VERB"
        words = [("a", tag)] * rng.randint(3, 9) + [(end, "PART" if end == "b" else "ADP")]
        out.append(f"# sent_id = c{s}")
        for i, (form, upos) in enumerate(words, 1):
            rel = "root" if i == 1 else "dep"
            out.append(f"{i}\t{form}\t{form}\t{upos}\t{upos}\t_\t{i - 1}\t{rel}\t_\t_")
        out.append("")
    return "\n".join(out) + "\n"


def a_accuracy(t: Tagger, text: str, column: int = 3) -> float:
    """The share of the word "a" whose tag in `column` (3: UPOS, 4: XPOS) `t` gets right."""
    gold = Treebank.from_string(text).to_string().splitlines()
    got = t.tag(Treebank.from_string(blank(text))).to_string().splitlines()
    pairs = [
        (g.split("\t")[column], p.split("\t")[column]) for g, p in zip(gold, got) if "\ta\t" in g
    ]
    return sum(g == p for g, p in pairs) / len(pairs)


def test_the_backward_pass_carries_right_context_a_forward_tagger_cannot_see(
    tmp_path: Path,
) -> None:
    train, test = Treebank.from_string(chains(300, 0)), chains(100, 1)
    kw = {"epochs": 4, "min_known": 1, "upos_min_known": 1}
    # A UPOS pass. (The same chains with a pass predicting XPOS, the same values here, lose
    # the chain to a hash collision: this toy's weight blocks are one line of 64 rows, where
    # two (bupos(i+1), class) pairs share a row for those salts.)
    bidi = Tagger(CHAIN_BIDI, backward=CHAIN_BACKWARD, backward_xpos=False, **kw).fit(train)
    forward = Tagger(CHAIN_FORWARD, **kw).fit(train)
    assert a_accuracy(bidi, test) > 0.99
    assert a_accuracy(forward, test) < 0.8  # the first words of a chain are guesses
    # Saved and loaded (its own model variant), on 1 and 2 threads: the same tags.
    path = tmp_path / "bidi.depfs"
    bidi.save(path)
    again = depfs.load(path)
    assert isinstance(again, Tagger)
    assert again.model_.backward_templates == CHAIN_BACKWARD.split()
    # `depfs info` counts the backward pass's templates beside the columns'.
    counts = depfs.model_info(path)["templates"]
    assert counts["backward UPOS"] == len(CHAIN_BACKWARD.split()) and "UPOS" in counts
    tb = Treebank.from_string(blank(test))
    tagged = bidi.tag(tb).to_string()
    assert again.tag(tb, threads=1).to_string() == tagged
    assert again.tag(tb, threads=2).to_string() == tagged
    # A damaged file is refused.
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError):
        depfs.load(path)


# The same chains with one UPOS for "a" (X) and two XPOS values (XN, XV), decided by the
# end ("b" PB, "c" PC, both PART): a backward UPOS pass has nothing to carry, one that
# predicts XPOS carries the end's value through bupos(i+1).
CHAIN_XPOS = "form(i)\nxpos(i-1)\nlower(i+1)\nlower(i+2)\nbupos(i)\n"


def xpos_chains(n: int, seed: int) -> str:
    xpos = {"NOUN": "XN", "VERB": "XV", "PART": "PB", "ADP": "PC"}
    out = []
    for line in chains(n, seed).splitlines():
        cols = line.split("\t")
        if len(cols) == 10:
            cols[4] = xpos[cols[3]]
            cols[3] = "X" if cols[1] == "a" else "PART"
        out.append("\t".join(cols))
    return "\n".join(out) + "\n"


def test_a_backward_pass_that_predicts_xpos_carries_what_upos_cannot(tmp_path: Path) -> None:
    train, test = Treebank.from_string(xpos_chains(300, 0)), xpos_chains(100, 1)
    kw = {"epochs": 4, "min_known": 1, "upos_min_known": 1, "backward": CHAIN_BACKWARD}
    by_xpos = Tagger(CHAIN_XPOS, backward_xpos=True, **kw).fit(train)
    by_upos = Tagger(CHAIN_XPOS, backward_xpos=False, **kw).fit(train)
    assert by_xpos.model_.backward_column == "XPOS"
    assert by_upos.model_.backward_column == "UPOS"
    assert a_accuracy(by_xpos, test, column=4) > 0.99
    assert a_accuracy(by_upos, test, column=4) < 0.8  # the first words of a chain are guesses
    # Saved and loaded: the same pass, the same tags on 1 and 2 threads.
    path = tmp_path / "bx.depfs"
    by_xpos.save(path)
    again = depfs.load(path)
    assert isinstance(again, Tagger) and again.backward_xpos
    assert depfs.model_info(path)["templates"]["backward XPOS"] == len(CHAIN_BACKWARD.split())
    tb = Treebank.from_string(blank(test))
    tagged = by_xpos.tag(tb).to_string()
    assert again.tag(tb, threads=1).to_string() == tagged
    assert again.tag(tb, threads=2).to_string() == tagged
    # Without an XPOS column the pass predicts UPOS.
    no_xpos = Treebank.from_string(blank(xpos_chains(50, 2), (4,)))
    upos_pass = Tagger(CHAIN_XPOS, backward_xpos=True, **kw).fit(no_xpos)
    assert upos_pass.model_.backward_column == "UPOS"


def test_the_default_tagger_has_a_backward_pass_and_tags_the_same_after_loading(
    tmp_path: Path,
) -> None:
    train, tb = synthetic(200, seed=0), Treebank.from_string(blank(synthetic_conllu(30, seed=6)))
    t = Tagger(epochs=2).fit(train)
    assert t.model_.backward_templates is not None
    assert any("bupos" in x for x in t.model_.templates("UPOS"))
    assert evaluate(synthetic(30, seed=6), t.tag(tb)).upos > 95
    t.save(tmp_path / "d.depfs")
    assert depfs.load(tmp_path / "d.depfs").tag(tb, threads=2).to_string() == t.tag(tb).to_string()


def test_backward_templates_are_checked() -> None:
    train = synthetic(5)
    with pytest.raises(ValueError, match="bupos"):  # a dynamic tagger has no pass to read
        Tagger("form(i)\nbupos(i+1)\n", dynamic=True).fit(train)
    for bad in ("upos(i-1)\n", "bupos(i)\n", "form(i)\nbupos(i-1)\n"):
        with pytest.raises(ValueError, match="backward pass reads only"):
            Tagger(SMALL, backward=bad).fit(train)
    with pytest.raises(ValueError, match="backward pass needs"):
        Tagger(SMALL, backward=CHAIN_BACKWARD, dynamic=True).fit(train)
    with pytest.raises(ValueError, match="upos_min_known"):
        Tagger(SMALL, upos_min_known=0).fit(train)


def test_a_tagger_file_with_a_backward_pass_tags_as_it_did() -> None:
    """tests/data/tagger_bidi_v5.depfs was saved by the build before the lemma rule (main
    at 5c5e756: the default ``Tagger(epochs=3, min_known=50).fit(synthetic(300, seed=0))``,
    backward pass included); it loads without the rule and tags input.conllu as it did."""
    data = Path(__file__).parent / "data"
    inp = Treebank.from_string(blank((data / "input.conllu").read_text(encoding="utf-8")))
    model = depfs.load(data / "tagger_bidi_v5.depfs")
    assert model.model_.backward_templates is not None and not model.model_.cased
    expected = (data / "expected" / "tagger_bidi_v5.conllu").read_text(encoding="utf-8")
    assert model.tag(inp, threads=1).to_string() == expected
    assert model.tag(inp, threads=2).to_string() == expected


def planets(n: int, seed: int) -> str:
    """Sentences where "mercury" is a noun (lemma "mercury") and capitalised names are
    PROPN with their own form as lemma, "Mercury" never among them (nor any name twice)."""
    import random

    rng, out = random.Random(seed), []
    for s in range(n):
        if rng.random() < 0.5:
            words = [("the", "DET", "the"), ("mercury", "NOUN", "mercury")]
            words.append(("rose", "VERB", "rise"))
        else:
            # Names seen once each: they train the classifier, not the dictionary.
            name = "".join(rng.choice("aeiourstlnk") for _ in range(6)).capitalize()
            words = [("we", "PRON", "we"), ("flew", "VERB", "fly"), ("to", "ADP", "to")]
            words.append((name, "PROPN", name))
        out.append(f"# sent_id = p{s}")
        for i, (form, upos, lemma) in enumerate(words + [(".", "PUNCT", ".")], 1):
            rel = "root" if i == 1 else "dep"
            out.append(f"{i}\t{form}\t{lemma}\t{upos}\t{upos}\t_\t{i - 1}\t{rel}\t_\t_")
        out.append("")
    return "\n".join(out) + "\n"


def test_a_capitalised_name_known_only_as_a_lower_cased_noun_keeps_its_case(
    tmp_path: Path,
) -> None:
    """ "Mercury" is known to the dictionary only as the noun "mercury": with the case rule
    (the default) its UPOS is open, it is tagged PROPN after "to" as the names are, and its
    lemma keeps its case; without it, the lower-cased entry made it the noun "mercury".
    Saved and loaded (its own model variant): the same tags."""
    train = Treebank.from_string(planets(300, 0))
    test = "1\twe\t_\t_\t_\t_\t0\troot\t_\t_\n2\tflew\t_\t_\t_\t_\t1\tdep\t_\t_\n"
    test += "3\tto\t_\t_\t_\t_\t2\tdep\t_\t_\n4\tMercury\t_\t_\t_\t_\t3\tdep\t_\t_\n\n"
    tb = Treebank.from_string(test)
    kw = {"epochs": 3, "min_known": 2}
    cased = Tagger(SMALL, **kw).fit(train)
    plain = Tagger(SMALL, cased=False, **kw).fit(train)
    assert cased.model_.cased and not plain.model_.cased
    word = cased.tag(tb).to_string().splitlines()[3].split("\t")
    assert (word[1], word[2], word[3]) == ("Mercury", "Mercury", "PROPN")
    # Without the rule the lower-cased entry decides both: the noun "mercury".
    word = plain.tag(tb).to_string().splitlines()[3].split("\t")
    assert (word[2], word[3]) == ("mercury", "NOUN")
    path = tmp_path / "cased.depfs"
    cased.save(path)
    again = depfs.load(path)
    assert isinstance(again, Tagger) and again.model_.cased
    big = Treebank.from_string(blank(planets(40, 1)))
    assert again.tag(big, threads=1).to_string() == cased.tag(big).to_string()
    assert again.tag(big, threads=2).to_string() == cased.tag(big).to_string()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError):
        depfs.load(path)
    with pytest.raises(ValueError, match="the case rule needs"):
        Tagger(SMALL, cased=True, dynamic=True).fit(train)


def test_sets_that_read_the_backward_pass_get_the_default_pass() -> None:
    """Templates that read `bupos` (the shipped DEFAULT_SETS given by name, as the README's
    recipe for the previous default does) train with the default backward pass; they used
    to fail for want of one. Planted: the pass only for templates=None fails this."""
    from depfs.datasets import synthetic
    from depfs.tagger import DEFAULT_BACKWARD, DEFAULT_SETS

    t = Tagger(DEFAULT_SETS, epochs=1).fit(synthetic(40, seed=1))
    default = Tagger(epochs=1).fit(synthetic(40, seed=1))
    assert DEFAULT_BACKWARD and t.model_.backward_templates == default.model_.backward_templates
    assert t.model_.backward_templates
    assert Tagger(SMALL, epochs=1).fit(synthetic(40, seed=1)).model_.backward_templates is None


def test_a_dev_set_without_trees_scores_the_tagger(tmp_path: Path) -> None:
    # A tagger needs no tree: a dev file whose HEAD and DEPREL are `_` failed after the
    # first epoch ("gold sentence 1 ...: word 1 has no HEAD"), the epoch lost.
    text = blank(synthetic_conllu(30, seed=7), columns=(6, 7))
    dev_file, train_file = tmp_path / "dev.conllu", tmp_path / "train.conllu"
    dev_file.write_text(text)
    train_file.write_text(synthetic_conllu(120, seed=0))
    out = tmp_path / "t.depfs"
    args = ["train", "--parser", "tagger", "--train", str(train_file), "--dev", str(dev_file)]
    r = CliRunner().invoke(main, [*args, "--epochs", "2", "--out", str(out)])
    assert r.exit_code == 0, r.output
    last = depfs.model_info(str(out))["training"]["history"][-1]
    assert last["dev_upos"] > 50 and last["dev_lemmas"] > 50, last
    with pytest.raises(ValueError, match="has no HEAD"):  # trees are scored by default
        depfs.evaluate(depfs.read_text(dev_file), depfs.read_text(dev_file))
