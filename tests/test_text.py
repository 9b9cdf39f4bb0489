"""Text input (depfs.text): horizontal and vertical text, raw text through spaCy, format
detection, `depfs parse/tag --input/--tokenizer`, and errors naming file and line."""

from __future__ import annotations

import gzip
import importlib.util
import re
import sys
from pathlib import Path

import depfs
import pytest
from click.testing import CliRunner
from depfs.cli import main
from depfs.datasets import synthetic
from depfs.errors import FormatError
from depfs.text import detect_format

HAS_SPACY = importlib.util.find_spec("spacy") is not None
needs_spacy = pytest.mark.skipif(not HAS_SPACY, reason="spaCy is not installed")


@pytest.fixture(scope="module")
def gold() -> depfs.Treebank:
    return synthetic(60, seed=5)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory, gold: depfs.Treebank) -> dict[str, Path]:
    """A parser that reads forms only, one that reads UPOS too, and a tagger."""
    d = tmp_path_factory.mktemp("text")
    train = synthetic(150, seed=1)
    paths = {k: d / f"{k}.depfs" for k in ("forms", "tags", "tagger")}
    forms = "form(QUEUE_0)\nform(STACK_0)\nform(STACK_0) & form(QUEUE_0)"
    depfs.ArcEagerParser(forms, epochs=2).fit(train).save(paths["forms"])
    depfs.ArcEagerParser("upos(QUEUE_0)\nform(STACK_0)", epochs=2).fit(train).save(paths["tags"])
    depfs.Tagger(epochs=2).fit(train).save(paths["tagger"])
    return paths


def horizontal(tb: depfs.Treebank) -> str:
    return "".join(" ".join(s.forms) + "\n" for s in tb)


def vertical(tb: depfs.Treebank) -> str:
    return "".join("\n".join(s.forms) + "\n\n" for s in tb)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# sent_id = 1\n1\tDogs\t_\t_\t_\t_\t0\troot\t_\t_\n\n", "conllu"),
        ("1\tbad\n", "conllu"),  # malformed CoNLL-U: its reader says what is wrong
        ("1-2\tdu\t_\n", "conllu"),
        # A typo in the first ID, or spaces for tabs after CoNLL-U's comments: still
        # CoNLL-U (its reader names the line), never words to parse.
        ("1a\tDogs\t_\t_\t_\t_\t0\troot\t_\t_\n", "conllu"),
        ("-1\tDogs\t_\t_\t_\t_\t0\troot\t_\t_\n", "conllu"),
        ("# sent_id = 1\n# text = Dogs\n1 Dogs _ _ _ _ 0 root _ _\n", "conllu"),
        ("#text=Dogs\n1 Dogs _ _ _ _ 0 root _ _\n", "conllu"),
        ("a\tstray tab\n", "horizontal"),
        ("Dogs bark .\nCats sleep .\n", "horizontal"),
        ("# hashtags lead\nDogs bark .\n", "horizontal"),
        # Text whose every line starts with '#' (it was CoNLL-U of comments alone, refused
        # as "sentence without word lines"); CoNLL-U's own comments still say CoNLL-U.
        ("#MeToo is trending .\n", "horizontal"),
        ("#MeToo\n#tbt\n", "vertical"),
        ("# sent_id = 1\n", "conllu"),
        ("Dogs\nbark\n.\n\nCats\n", "vertical"),
        ("Dogs\n", "vertical"),
        ("", "conllu"),
        ("\n\n", "conllu"),
    ],
)
def test_detect_format(text: str, expected: str):
    assert detect_format(text.splitlines(keepends=True)) == expected


def test_a_line_of_text_that_starts_with_a_hash_is_a_sentence():
    tb = depfs.text_to_treebank("#MeToo is trending .\n")
    assert [s.forms for s in tb] == [["#MeToo", "is", "trending", "."]]


def test_a_model_file_given_as_input_is_named_as_one(tmp_path: Path, models: dict[str, Path]):
    with pytest.raises(FormatError, match=r"m\.depfs: a depfs model file, not a treebank"):
        detect_format(["DEPFSMDL\x05..."], "m.depfs")
    model = str(models["forms"])
    tagger = str(models["tagger"])
    for argv in (["parse", model, model], ["stats", model], ["tag", tagger, model]):
        r = CliRunner().invoke(main, argv)
        assert r.exit_code == 2, (argv, r.output)
        assert r.output.count("\n") == 1, (argv, r.output)
        assert re.search(f"{re.escape(model)}(:1)?: a depfs model file, not a", r.output), argv


def test_horizontal_and_vertical_give_the_words_with_sent_id_and_text(
    tmp_path: Path, gold: depfs.Treebank
):
    h, v = tmp_path / "h.txt", tmp_path / "v.txt"
    h.write_text("  " + horizontal(gold).replace(" ", "  \t", 3) + "\n\n")  # extra spaces
    v.write_text("\n\n" + vertical(gold).replace("\n\n", "\n \n\n", 2))  # extra blank lines
    for tb in (depfs.read_text(h), depfs.read_text(v), depfs.read_text(h, "horizontal")):
        assert len(tb) == len(gold)
        for i, (s, g) in enumerate(zip(tb, gold), 1):
            assert s.forms == g.forms
            assert s.sent_id == str(i) and s.text == " ".join(g.forms)
            assert set(s.upos) == {"_"} and list(s.heads) == [-1] * len(s)
        assert tb.filled_columns() == ["FORM"]
    assert depfs.text_to_treebank(horizontal(gold)).to_string() == tb.to_string()
    assert depfs.tokens_to_treebank([g.forms for g in gold]).to_string() == tb.to_string()
    # Forced formats read every line by their own rule.
    h.write_text(horizontal(gold))
    assert len(depfs.read_text(h, "vertical")) == 1
    gz = tmp_path / "h.txt.gz"
    gz.write_bytes(gzip.compress(h.read_bytes()))
    assert depfs.read_text(gz).to_string() == tb.to_string()
    assert len(depfs.read_text(v, "horizontal")) == gold.n_words


def test_bad_text_names_the_file_and_line(tmp_path: Path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"Dogs bark .\nCats \xff sleep .\n")
    with pytest.raises(depfs.errors.FormatError, match=r"bad\.txt:2: invalid UTF-8"):
        depfs.read_text(bad)
    tabbed = tmp_path / "tab.txt"
    tabbed.write_text("Dogs\nbark\n\nCats\tNOUN\n")
    with pytest.raises(depfs.errors.FormatError, match=r"tab\.txt:4: a tab inside the token"):
        depfs.read_text(tabbed, "vertical")
    with pytest.raises(ValueError, match="unknown input format 'xml'"):
        depfs.text_to_treebank("a b", "xml")
    with pytest.raises(depfs.errors.FormatError, match="sentence 2: token 'a\\\\tb'"):
        depfs.tokens_to_treebank([["ok"], ["a\tb"]])


def test_parse_text_files_with_a_note_on_the_detected_format(
    tmp_path: Path, gold: depfs.Treebank, models: dict[str, Path]
):
    parser = depfs.load(models["forms"])
    expected = parser.parse(depfs.tokens_to_treebank([g.forms for g in gold])).to_string()
    for name, text, fmt in (
        ("h.txt", horizontal(gold), "horizontal"),
        ("v.txt", vertical(gold), "vertical"),
    ):
        path = tmp_path / name
        path.write_text(text)
        res = CliRunner().invoke(main, ["parse", str(models["forms"]), str(path)])
        assert res.exit_code == 0, res.output
        note = f"depfs: note: {path}: read as {fmt} text"
        assert res.stderr.count("\n") == 1 and res.stderr.startswith(note)
        assert res.stdout == expected
        res = CliRunner().invoke(main, ["parse", str(models["forms"]), str(path), "--input", fmt])
        assert res.exit_code == 0 and res.stderr == "" and res.stdout == expected
        stdin = CliRunner().invoke(main, ["parse", str(models["forms"])], input=text)
        assert stdin.stdout == expected and f"<stdin>: read as {fmt} text" in stdin.stderr
    gz = tmp_path / "h.txt.gz"
    gz.write_bytes(gzip.compress(horizontal(gold).encode()))
    res = CliRunner().invoke(main, ["parse", str(models["forms"]), str(gz)])
    assert res.stdout == expected and "read as horizontal text" in res.stderr
    # Several files: one note each, outputs in --out-dir.
    out = tmp_path / "out"
    out.mkdir()
    res = CliRunner().invoke(
        main,
        [
            "parse",
            str(models["forms"]),
            str(tmp_path / "h.txt"),
            str(tmp_path / "v.txt"),
            "--out-dir",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert res.stderr.count("read as") == 2
    assert (out / "h.txt").read_text() == (out / "v.txt").read_text() == expected


def test_words_only_input_is_refused_by_a_parser_that_reads_tags(
    tmp_path: Path, gold: depfs.Treebank, models: dict[str, Path]
):
    path = tmp_path / "h.txt"
    path.write_text(horizontal(gold))
    res = CliRunner().invoke(
        main, ["parse", str(models["tags"]), str(path), "--input", "horizontal"]
    )
    assert res.exit_code == 2
    line = res.stderr.strip()
    assert line.count("\n") == 0 and line.startswith(f"depfs: error: {path}: horizontal text")
    assert "reads UPOS" in line and "--tagger" in line and "--allow-missing-tags" in line
    res = CliRunner().invoke(
        main, ["parse", str(models["tags"]), "--input", "vertical"], input=vertical(gold)
    )
    assert res.exit_code == 2 and "<stdin>: vertical text gives words only" in res.stderr
    # With a tagger: tagged, then parsed, as in Python.
    tagger, parser = depfs.load(models["tagger"]), depfs.load(models["tags"])
    words = depfs.tokens_to_treebank([g.forms for g in gold])
    expected = parser.parse(tagger.tag(words)).to_string()
    res = CliRunner().invoke(
        main, ["parse", str(models["tags"]), str(path), "--tagger", str(models["tagger"])]
    )
    assert res.exit_code == 0 and res.stdout == expected
    # depfs tag reads text too.
    res = CliRunner().invoke(
        main, ["tag", str(models["tagger"]), "--input", "vertical"], input=vertical(gold)
    )
    assert res.exit_code == 0 and res.stdout == tagger.tag(words).to_string()


def test_tokenizer_without_spacy_says_how_to_install_it(
    tmp_path: Path, models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
):
    from depfs import pipeline

    monkeypatch.setitem(sys.modules, "spacy", None)  # import spacy raises ImportError
    monkeypatch.setattr(pipeline, "_TOKENIZERS", {})
    raw = tmp_path / "raw.txt"
    raw.write_text("Dogs bark.")
    res = CliRunner().invoke(
        main, ["parse", str(models["forms"]), str(raw), "--tokenizer", "spacy:en"]
    )
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1 and "pip install 'depfs[spacy]'" in res.stderr
    res = CliRunner().invoke(
        main, ["tag", str(models["tagger"]), "--tokenizer", "spacy:en", "--input", "vertical"]
    )
    assert res.exit_code == 2 and "leave out --input vertical" in res.stderr


@needs_spacy
def test_raw_text_through_a_spacy_blank_tokenizer(tmp_path: Path, models: dict[str, Path]):
    raw = tmp_path / "raw.txt"
    raw.write_text('Dogs bark. The cat sleeps\non  the "mat"!\n\nA new paragraph')
    res = CliRunner().invoke(
        main, ["parse", str(models["forms"]), str(raw), "--tokenizer", "spacy:en"]
    )
    assert res.exit_code == 0 and res.stderr == "", res.output
    tb = depfs.Treebank.from_string(res.stdout)
    assert [s.text for s in tb] == ["Dogs bark.", 'The cat sleeps on the "mat"!', "A new paragraph"]
    assert tb[1].forms == ["The", "cat", "sleeps", "on", "the", '"', "mat", '"', "!"]
    assert tb[1].misc[5:8] == ["SpaceAfter=No"] * 3 and tb[1].misc[4] == "_"
    assert [s.sent_id for s in tb] == ["1", "2", "3"] and all(h >= 0 for h in tb[1].heads)
    for lang in ("zz", ""):
        res = CliRunner().invoke(
            main, ["parse", str(models["forms"]), str(raw), "--tokenizer", f"spacy:{lang}"]
        )
        assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "--tokenizer" in res.stderr
    assert depfs.text_to_treebank("Dogs bark. Cats sleep.", tokenizer="spacy:en")[1].forms == [
        "Cats",
        "sleep",
        ".",
    ]


def test_a_text_of_underscores_is_words(tmp_path: Path, models: dict[str, Path]):
    """A FORM '_' is the underscore itself (UD), not an empty FORM: text made mostly of
    '_' is parsed. Planted: FORM counted as missing on '_' refuses it."""
    text = tmp_path / "us.txt"
    text.write_text("_ _ _ x\n_ y _\n")
    res = CliRunner().invoke(main, ["parse", str(models["forms"]), str(text)])
    assert res.exit_code == 0, res.output
    tb = depfs.Treebank.from_string(res.stdout)
    assert [s.forms for s in tb] == [["_", "_", "_", "x"], ["_", "y", "_"]]
    assert [list(s.heads).count(0) for s in tb] == [1, 1]


@needs_spacy
def test_a_raw_text_line_longer_than_spacy_takes_is_cut_at_whitespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A line longer than spaCy's max_length is cut at whitespace into pieces of at most
    MAX_PARAGRAPH characters, with a warning naming the file and line; every word is kept.
    A refusal by spaCy names the file and line. Planted: no cut (spaCy's E088) fails."""
    from depfs.text import SpacyTokenizer, _cut

    tokenizer = SpacyTokenizer("en")
    tokenizer.nlp.max_length = 300
    monkeypatch.setattr(SpacyTokenizer, "MAX_PARAGRAPH", 100)
    words = [f"w{i}" for i in range(200)]  # 889 characters on one line
    raw = tmp_path / "long.txt"
    raw.write_text("A first line .\n" + " ".join(words) + "\n")
    with pytest.warns(UserWarning, match=r"long\.txt:2: a line of 889 characters is cut at wh"):
        tb = depfs.read_text(raw, tokenizer=tokenizer)
    assert [f for s in tb for f in s.forms] == ["A", "first", "line", ".", *words]
    assert len(tb) == 10 and max(len(s.text) for s in tb) <= 100  # 9 pieces
    assert _cut("ab cd  e", 4) == ["ab", "cd ", "e"] and _cut("a" * 9, 4) == ["aaaa"] * 2 + ["a"]
    tokenizer.nlp.max_length = 50
    with (
        pytest.warns(UserWarning, match="cut at whitespace"),
        pytest.raises(depfs.errors.FormatError, match=r"long\.txt:2: \[E088\]"),
    ):
        depfs.read_text(raw, tokenizer=tokenizer)
    tokenizer.nlp.max_length = 300
    # A word longer than a piece is cut inside it, and the note says so (it said only
    # "at whitespace").
    raw.write_text("w" * 150 + "\n")
    with pytest.warns(UserWarning, match="a word longer than that is cut inside it"):
        assert [len(f) for s in depfs.read_text(raw, tokenizer=tokenizer) for f in s.forms] == [
            100,
            50,
        ]


@needs_spacy
def test_the_cli_says_a_cut_line_in_one_note(
    tmp_path: Path, models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
):
    """A warning raised while the CLI works (here in the reader thread) is one `depfs:
    note:` line, not Python's two-line warning. Planted: no hook in handle_errors fails."""
    from depfs.text import SpacyTokenizer

    monkeypatch.setattr(SpacyTokenizer, "MAX_PARAGRAPH", 100)
    raw = tmp_path / "long.txt"
    raw.write_text(" ".join(f"w{i}" for i in range(200)) + "\n")
    res = CliRunner().invoke(
        main, ["parse", str(models["forms"]), "--tokenizer", "spacy:en", str(raw)]
    )
    assert res.exit_code == 0, res.output
    notes = [line for line in res.stderr.splitlines() if "cut at whitespace" in line]
    assert len(notes) == 1 and notes[0].startswith("depfs: note: ") and "long.txt:1" in notes[0]
    assert "UserWarning" not in res.stderr and "warnings.warn" not in res.stderr


def test_empty_text_is_an_empty_treebank() -> None:
    # As Treebank.from_string(""): the empty string (or whitespace) holds no sentence.
    for text in ("", "  \n", b""):
        assert len(depfs.text_to_treebank(text)) == 0


def test_text_arguments_are_checked_whatever_the_text(tmp_path: Path):
    # Blank text skipped the checks (an empty Treebank back for format="bogus").
    for text in ("", "Dogs bark ."):
        with pytest.raises(ValueError, match="unknown input format 'bogus'"):
            depfs.text_to_treebank(text, "bogus")
        with pytest.raises(TypeError, match="tokenizer must be a SpacyTokenizer"):
            depfs.text_to_treebank(text, tokenizer=3)
        with pytest.raises(ValueError, match="tokenizer reads raw text"):
            depfs.text_to_treebank(text, "horizontal", tokenizer="spacy:en")
    with pytest.raises(depfs.errors.DepfsIOError, match="nope.txt: No such file"):
        depfs.read_text(tmp_path / "nope.txt")  # as read_conllu says it


def test_margins_and_jackknife_take_a_path(tmp_path: Path, gold: depfs.Treebank):
    path = tmp_path / "g.conllu"
    gold.write(str(path))
    assert len(depfs.margins(path)) == gold.n_words
    tagged = depfs.jackknife(path, folds=2, epochs=1)
    assert len(tagged) == len(gold)


def test_an_empty_token_list_and_a_model_of_another_kind_are_named(models: dict[str, Path]):
    with pytest.raises(FormatError, match="sentence 2 has no token"):
        depfs.tokens_to_treebank([["a"], []])
    parser = depfs.load(models["forms"])  # an arc-eager model
    with pytest.raises(TypeError, match=r"GraphParser.from_model needs a depfs._core.GraphModel"):
        depfs.GraphParser.from_model(parser.model_)
    with pytest.raises(TypeError, match="got str"):
        depfs.Tagger.from_model("x")


@pytest.mark.parametrize("fmt", ["horizontal", "vertical"])
def test_text_with_cr_line_ends_is_refused_as_conllu_is(fmt: str) -> None:
    """Text whose lines end in CR alone (old Macs) is refused with the CoNLL-U reader's
    line (it was read as one line: a token `.\\rA`, or the whole file one token)."""
    from depfs.errors import FormatError
    from depfs.text import text_to_treebank

    with pytest.raises(FormatError, match=r"^old\.txt:1: CR line ends"):
        text_to_treebank(b"The cat sat .\rA dog ran .\r", fmt, name="old.txt")
    assert len(text_to_treebank(b"The cat sat .\r\nA dog ran .\r\n", "horizontal")) == 2
