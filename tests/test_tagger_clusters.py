"""Word clusters in the tagger: the paths file, the `cluster` attributes, the table inside the
model file, and the refusals (docs/design.md § Tagger, "Word clusters")."""

from __future__ import annotations

import random
from pathlib import Path

import depfs
import pytest
from click.testing import CliRunner
from depfs import Tagger, Treebank
from depfs.cli import main
from depfs.errors import FormatError
from small_models import two_class_paths

# Nouns' paths start with 0, verbs' with 1; the rest of the path is the word's own.
N_WORDS = 40


def word(k: int, rng: random.Random) -> str:
    """A word with no spelling cue to its class (random letters)."""
    return "".join(rng.choice("bcdfghjklmnpqrstvwz") for _ in range(6)) + str(k)


def lexicon() -> tuple[list[str], list[str]]:
    rng = random.Random(7)
    nouns = [word(k, rng) for k in range(N_WORDS)]
    return nouns, [word(k, rng) for k in range(N_WORDS, 2 * N_WORDS)]


def paths_file(path: Path) -> Path:
    """Every word lower-cased, its class in the path's first bit."""
    return two_class_paths(path, *lexicon())


def sentences(words: list[tuple[str, str]], seed: int, n: int) -> str:
    """`n` one-word sentences "W ." whose UPOS (NOUN or VERB) only the word tells."""
    rng, out = random.Random(seed), []
    for s in range(n):
        form, upos = rng.choice(words)
        out.append(f"# sent_id = s{s}")
        out.append(f"1\t{form}\t_\t{upos}\t_\t_\t0\troot\t_\t_")
        out.append("2\t.\t_\tPUNCT\t_\t_\t1\tpunct\t_\t_")
        out.append("")
    return "\n".join(out) + "\n"


def split() -> tuple[Treebank, str]:
    """Training on the first half of each class; the test on the other half (unknown
    words), written capitalised half of the time (the table has them lower-cased)."""
    nouns, verbs = lexicon()
    h = N_WORDS // 2
    seen = [(w, "NOUN") for w in nouns[:h]] + [(w, "VERB") for w in verbs[:h]]
    new = [(w, "NOUN") for w in nouns[h:]] + [(w, "VERB") for w in verbs[h:]]
    new += [(w.upper() if k % 2 else w.capitalize(), t) for k, (w, t) in enumerate(new)]
    return Treebank.from_string(sentences(seen, 0, 400)), sentences(new, 1, 200)


def upos_of(t: Tagger, text: str) -> float:
    """UPOS accuracy of `t` on the first words of `text` (tags blanked first)."""
    gold = Treebank.from_string(text)
    blank = "\n".join(
        "\t".join(c if i != 3 else "_" for i, c in enumerate(line.split("\t")))
        for line in text.splitlines()
    )
    got = t.tag(Treebank.from_string(blank + "\n"))

    def first_upos(tb: Treebank) -> list[str]:
        return [line.split("\t")[3] for line in tb.to_string().splitlines() if line[:2] == "1\t"]

    pairs = list(zip(first_upos(gold), first_upos(got)))
    return sum(a == b for a, b in pairs) / len(pairs)


# Every form open (no tag dictionary restriction), so that the classifier is trained.
KW = {"epochs": 3, "min_known": 1000, "upos_min_known": 1000}


def test_a_cluster_prefix_tags_unknown_words_of_the_class_and_survives_saving(
    tmp_path: Path,
) -> None:
    table = paths_file(tmp_path / "c.paths")
    train, test = split()
    with_clusters = Tagger("form(i)\ncluster:1(i)", clusters=table, **KW).fit(train)
    without = Tagger("form(i)\nshape(i)", **KW).fit(train)
    # The first bit is the class: the unknown words (lower-cased for the look-up) are right
    # but for a few whose form's hashed weights collide with a trained one.
    assert upos_of(with_clusters, test) > 0.95
    assert upos_of(without, test) < 0.75
    # The whole path is the word's own: it says nothing of an unknown word's class.
    whole = Tagger("form(i)\ncluster(i)", clusters=table, **KW).fit(train)
    assert upos_of(whole, test) < 0.75
    assert with_clusters.model_.clusters == (2 * N_WORDS, 2 * N_WORDS)
    # The table is inside the model file: the file alone tags the same.
    path = tmp_path / "t.depfs"
    with_clusters.save(path)
    table.unlink()
    again = depfs.load(path)
    assert isinstance(again, Tagger) and again.model_.clusters == (2 * N_WORDS, 2 * N_WORDS)
    tb = Treebank.from_string(test)
    assert again.tag(tb, threads=2).to_string() == with_clusters.tag(tb).to_string()
    assert without.model_.clusters is None


def test_cluster_templates_need_a_table_and_a_table_needs_them(tmp_path: Path) -> None:
    table = paths_file(tmp_path / "c.paths")
    train, _ = split()
    with pytest.raises(ValueError, match="no cluster table"):
        Tagger("form(i)\ncluster:4(i)", **KW).fit(train)
    with pytest.raises(ValueError, match="no template reads it"):
        Tagger("form(i)\nshape(i)", clusters=table, **KW).fit(train)
    # The arc-eager parser reads clusters too (tests/test_arceager_clusters.py); the graph
    # parser's templates do not.
    with pytest.raises(ValueError, match="exists only in token and configuration templates"):
        depfs.GraphParser(arc_templates="cluster(h) & upos(m)", epochs=1).fit(train)


def test_a_bad_line_names_the_file_and_line(tmp_path: Path) -> None:
    train, _ = split()
    bad = tmp_path / "bad.paths"
    bad.write_text("0110\tdog\t3\n0110\tcat\n")
    with pytest.raises(FormatError, match=r"bad\.paths:2: 2 tab-separated fields"):
        Tagger("cluster(i)", clusters=bad, **KW).fit(train)
    bad.write_text("0110\tdog\t3\n01x0\tcat\t4\n")
    with pytest.raises(FormatError, match=r"bad\.paths:2: bad bit path"):
        Tagger("cluster(i)", clusters=bad, **KW).fit(train)


def test_cli_train_with_clusters(tmp_path: Path) -> None:
    table = paths_file(tmp_path / "c.paths")
    train, test = split()
    (tmp_path / "train.conllu").write_text(train.to_string())
    (tmp_path / "tpl.txt").write_text("form(i)\ncluster:1(i)\n")
    model = tmp_path / "t.depfs"
    args = ["train", "--parser", "tagger", "--train", str(tmp_path / "train.conllu")]
    args += ["--out", str(model), "--epochs", "3", "--clusters", str(table)]
    r = CliRunner().invoke(main, [*args, "--templates", str(tmp_path / "tpl.txt")])
    assert r.exit_code == 0, r.output
    cli = depfs.load(model)
    assert cli.model_.clusters == (2 * N_WORDS, 2 * N_WORDS)
    api = Tagger("form(i)\ncluster:1(i)", epochs=3, clusters=table).fit(train)
    tb = Treebank.from_string(test)
    assert cli.tag(tb).to_string() == api.tag(tb).to_string()
    r = CliRunner().invoke(main, [*args[:2], "graph", *args[3:]])
    assert r.exit_code == 2 and "--clusters: --parser tagger or arc-eager only" in r.output


def test_the_default_templates_read_clusters_only_with_a_table(tmp_path: Path) -> None:
    table = paths_file(tmp_path / "c.paths")
    train, test = split()
    with_table = Tagger(epochs=1, clusters=table).fit(train)
    assert {"cluster(i)", "cluster:6(i)"} <= set(with_table.model_.templates("UPOS"))
    assert with_table.model_.backward_templates is not None  # the default's pass too
    plain = Tagger(epochs=1).fit(train)
    assert plain.model_.clusters is None
    assert not any("cluster" in t for c in plain.columns_ for t in plain.model_.templates(c))
    # Jackknifing passes the table to every fold's tagger.
    jk = depfs.jackknife(train, folds=2, templates="form(i)\ncluster:1(i)", clusters=table)
    assert len(jk) == len(train)
    with pytest.raises(ValueError, match="no cluster table"):
        depfs.jackknife(train, folds=2, templates="form(i)\ncluster:1(i)")


def test_a_parser_keeps_its_taggers_table(tmp_path: Path) -> None:
    table = paths_file(tmp_path / "c.paths")
    train, test = split()
    tagger = Tagger("form(i)\ncluster:1(i)", clusters=table, **KW).fit(train)
    parser = depfs.ArcEagerParser(tagger=tagger, epochs=1).fit(train)
    parser.save(tmp_path / "p.depfs")
    table.unlink()
    again = depfs.load(tmp_path / "p.depfs")
    assert again.tagger_ is not None and again.tagger_.model_.clusters == (2 * N_WORDS, 2 * N_WORDS)
    tb = Treebank.from_string(test)
    assert again.tagger_.tag(tb).to_string() == tagger.tag(tb).to_string()
