"""depfs.treebank: reading, writing, validation messages and sentence views."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import depfs
import numpy as np
import pytest
from depfs import Sentence, Treebank, read_conllu
from depfs.errors import DepfsIOError, FormatError
from hypothesis import given, settings
from hypothesis import strategies as st

SAMPLE = (
    "# sent_id = s1\n"
    "# text = Vámonos al mar.\n"
    "1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tVamos\tir\tVERB\t_\tMood=Imp\t0\troot\t0:root\t_\n"
    "2\tnos\tnosotros\tPRON\t_\tCase=Acc\t1\tobj\t1:obj\t_\n"
    "3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "3\ta\ta\tADP\t_\t_\t5\tcase\t5:case\t_\n"
    "4\tel\tel\tDET\t_\tDefinite=Def\t5\tdet\t5:det\t_\n"
    "4.1\tvamos\tir\tVERB\t_\t_\t_\t_\t1:conj\t_\n"
    "5\tmar\tmar\tNOUN\t_\tGender=Masc\t1\tobl\t1:obl\tSpaceAfter=No\n"
    "6\t.\t.\tPUNCT\t_\t_\t1\tpunct\t1:punct\t_\n"
    "\n"
    "# sent_id = s2\n"
    "1\tHi\thi\tINTJ\tUH\t_\t0\troot\t0:root\t_\n"
    "\n"
)


def ud_dir() -> Path | None:
    """The UD data directory: $DEPFS_DATA, else ../shared/data/ud beside the repository."""
    here = Path(__file__).resolve().parent.parent
    candidates = [os.environ.get("DEPFS_DATA"), here.parent / "shared/data/ud"]
    for c in candidates:
        if c and Path(c, "en_ewt", "train.conllu").is_file():
            return Path(c)
    return None


UD_FILES = [
    f"{tb}/{split}.conllu" for tb in ("en_ewt", "pt_bosque") for split in ("train", "dev", "test")
]


@pytest.mark.ud
@pytest.mark.parametrize("name", UD_FILES)
def test_ud_round_trip_is_byte_identical(name: str, tmp_path: Path) -> None:
    data = ud_dir()
    if data is None:
        pytest.skip("UD data not found (set DEPFS_DATA)")
    path = data / name
    original = path.read_bytes()
    tb = read_conllu(path)
    assert tb.to_string().encode("utf-8") == original
    out = tmp_path / "out.conllu"
    tb.write(out)
    assert out.read_bytes() == original
    assert tb.n_words == sum(len(s) for s in tb)


@pytest.mark.ud
def test_en_ewt_train_counts() -> None:
    data = ud_dir()
    if data is None:
        pytest.skip("UD data not found (set DEPFS_DATA)")
    tb = read_conllu(str(data / "en_ewt" / "train.conllu"))
    # Figures of the issue text: 204,577 words in 12,544 sentences.
    assert (len(tb), tb.n_words) == (12544, 204577)


# ---- views -------------------------------------------------------------------------------


def test_sentence_views() -> None:
    tb = Treebank.from_string(SAMPLE)
    assert len(tb) == 2 and tb.n_words == 7
    s = tb[0]
    assert isinstance(s, Sentence)
    assert len(s) == 6 and s.index == 0
    assert s.forms == ["Vamos", "nos", "a", "el", "mar", "."]
    assert s.lemmas == ["ir", "nosotros", "a", "el", "mar", "."]
    assert s.upos == ["VERB", "PRON", "ADP", "DET", "NOUN", "PUNCT"]
    assert s.xpos == ["_"] * 6
    assert s.feats == ["Mood=Imp", "Case=Acc", "_", "Definite=Def", "Gender=Masc", "_"]
    assert s.deprels == ["root", "obj", "case", "det", "obl", "punct"]
    assert s.deps == ["0:root", "1:obj", "5:case", "5:det", "1:obl", "1:punct"]
    assert s.misc[4] == "SpaceAfter=No"
    assert s.heads.tolist() == [0, 1, 5, 5, 1, 1]
    assert s.sent_id == "s1" and s.text == "Vámonos al mar."
    assert s.comments == ["# sent_id = s1", "# text = Vámonos al mar."]
    assert [x.split("\t")[0] for x in s.extra_lines] == ["1-2", "3-4", "4.1"]
    assert s.to_string() == SAMPLE[: SAMPLE.index("# sent_id = s2")]
    assert tb[1].xpos == ["UH"] and tb[1].text is None


def test_numpy_dtypes_and_ids() -> None:
    tb = Treebank.from_string(SAMPLE)
    s = tb[0]
    assert s.heads.dtype == np.int32
    for ids in (s.form_ids, s.upos_ids, s.deprel_ids):
        assert ids.dtype == np.uint32 and ids.shape == (6,)
    upos = tb.vocab("upos")
    assert upos[0] == "_"
    assert [upos[i] for i in s.upos_ids] == s.upos
    forms = tb.vocab("form")
    assert [forms[i] for i in s.form_ids] == s.forms
    with pytest.raises(KeyError, match='unknown column "nope"'):
        tb.vocab("nope")


def test_blank_heads_are_minus_one() -> None:
    text = "1\ta\t_\tX\t_\t_\t_\t_\t_\t_\n2\tb\t_\tX\t_\t_\t_\t_\t_\t_\n\n"
    tb = Treebank.from_string(text)
    assert tb[0].heads.tolist() == [-1, -1]
    assert tb[0].deprels == ["_", "_"]
    assert tb.to_string() == text


def test_indexing_and_iteration() -> None:
    tb = Treebank.from_string(SAMPLE)
    assert tb[-1].sent_id == "s2" and tb[-2].sent_id == "s1"
    assert [s.sent_id for s in tb] == ["s1", "s2"]
    assert [s.index for s in iter(tb)] == [0, 1]
    with pytest.raises(IndexError, match="out of range"):
        tb[2]
    with pytest.raises(IndexError):
        tb[-3]
    assert "2 sentences, 7 words" in repr(tb)


def test_bools_are_not_indices_and_huge_indices_are_out_of_range() -> None:
    tb = Treebank.from_string(SAMPLE)
    # A list of bools is a mask: it used to select sentences 1 and 0 silently.
    for mask in ([True, False], [False, True], np.array([True, False]), [0, True]):
        with pytest.raises(TypeError, match=r"not bools \(a mask\).*enumerate\(mask\)"):
            tb.select(mask)
    for key in (True, np.True_):
        with pytest.raises(TypeError, match="not bools"):
            tb[key]
    assert [s.sent_id for s in tb.select([1, 0, np.int64(1)])] == ["s2", "s1", "s2"]
    assert [s.sent_id for s in tb.select(np.array([-1]))] == ["s2"]
    assert tb[np.int64(1)].sent_id == "s2"
    for big in (10**20, -(10**20)):
        with pytest.raises(IndexError, match="out of range"):
            tb[big]
        with pytest.raises(IndexError, match="out of range"):
            tb.select([0, big])
    with pytest.raises(TypeError, match="not a str"):
        tb.select("01")
    with pytest.raises(TypeError, match="not float"):
        tb.select([0.0])
    with pytest.raises(TypeError, match="not str"):
        tb["0"]


def test_views_keep_the_treebank_alive() -> None:
    s = Treebank.from_string(SAMPLE)[1]
    assert s.forms == ["Hi"]


def test_exported_names() -> None:
    assert depfs.read_conllu is read_conllu
    assert {"read_conllu", "Treebank", "Sentence"} <= set(depfs.__all__)


# ---- files --------------------------------------------------------------------------------


def test_write_is_atomic_and_gzip_round_trips(tmp_path: Path) -> None:
    tb = Treebank.from_string(SAMPLE)
    out = tmp_path / "a.conllu"
    out.write_text("old content")
    tb.write(out)
    assert out.read_text(encoding="utf-8") == SAMPLE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.conllu"]  # no temp file left

    gz = tmp_path / "b.conllu.gz"
    tb.write(str(gz))
    assert gzip.decompress(gz.read_bytes()).decode("utf-8") == SAMPLE
    assert read_conllu(gz).to_string() == SAMPLE
    # Gzip is detected by its magic bytes, not the name.
    renamed = tmp_path / "c.conllu"
    renamed.write_bytes(gz.read_bytes())
    assert read_conllu(renamed).to_string() == SAMPLE


def test_io_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.conllu"
    with pytest.raises(DepfsIOError, match="missing.conllu"):
        read_conllu(missing)
    with pytest.raises(DepfsIOError, match="x.conllu"):
        Treebank.from_string(SAMPLE).write(tmp_path / "no-such-dir" / "x.conllu")


# ---- bad input: one message naming file, line and problem -------------------------------


def word(i: str, head: str = "0", deprel: str = "root") -> str:
    return f"{i}\tw\tw\tX\t_\t_\t{head}\t{deprel}\t_\t_\n"


def sent(*heads: str) -> str:
    return "".join(word(str(i + 1), h, "dep") for i, h in enumerate(heads)) + "\n"


BAD_INPUTS = [
    ("wrong column count", "# c\n1\tw\tw\tX\n", 2, "expected 10 tab-separated columns, found 4"),
    ("non-integer ID", word("1") + word("two", "1"), 2, 'ID "two" is not an integer'),
    ("out-of-order ID", word("1") + word("3", "1"), 2, "ID 3 out of order: expected word 2"),
    ("HEAD out of range", sent("0", "5"), 2, "HEAD 5 out of range: the sentence has 2 words"),
    ("non-integer HEAD", sent("0", "x"), 2, 'HEAD "x" is not a non-negative integer'),
    ("cycle", sent("0", "3", "2"), 2, "cycle: words"),
    ("self loop", sent("0", "2"), 2, "cycle: word 2 is its own head"),
    ("no root", sent("2", "1"), 1, "no root: no word has HEAD 0"),
    ("several roots", sent("0", "1", "0"), 3, "several roots: words 1 and 3 have HEAD 0"),
    ("empty input", "", 1, "empty input"),
    ("blank lines only", "\n\n", 2, "empty input"),
    ("empty FORM", "1\t\tw\tX\t_\t_\t0\troot\t_\t_\n", 1, "empty FORM column"),
    ("comment inside sentence", word("1") + "# late\n", 2, "comment line inside a sentence"),
    ("comment without words", "# lonely\n", 1, "sentence without word lines"),
    ("multiword out of order", word("1") + word("3-4", "_"), 2, "multiword token 3-4 out of order"),
    ("multiword past end", word("1-2", "_") + word("1"), 1, "multiword token ends at word 2"),
    ("empty node out of order", word("1") + word("3.1", "_"), 2, "empty node 3.1 out of order"),
    ("second sentence", SAMPLE + sent("0", "9"), 17, "HEAD 9 out of range"),
    ("CR line ends", "# c\r" + word("1").replace("\n", "\r") * 2, 1, "CR line ends"),
    ("CR line ends, no comment", word("1").replace("\n", "\r") * 2, 1, "CR line ends"),
    ("line of spaces", word("1", "0") + " \t \n" + word("1", "0"), 2, "a line of spaces"),
]


@pytest.mark.parametrize(
    ("case", "text", "line", "problem"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS]
)
def test_bad_input_message_names_string_line_and_problem(
    case: str, text: str, line: int, problem: str
) -> None:
    if problem == "empty input":  # a string: an empty treebank (a file: refused)
        assert len(Treebank.from_string(text)) == 0
        return
    with pytest.raises(FormatError) as err:
        Treebank.from_string(text)
    msg = str(err.value)
    assert msg.startswith(f"<string>:{line}: "), msg
    assert problem in msg


@pytest.mark.parametrize(
    ("case", "text", "line", "problem"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS]
)
def test_bad_file_message_names_file_line_and_problem(
    case: str, text: str, line: int, problem: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.conllu"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError) as err:
        read_conllu(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}:{line}: "), msg
    assert problem in msg


def test_an_empty_string_is_an_empty_treebank() -> None:
    """As `tb[0:0]` and `Treebank.concat([])` are (planted: the reader's "empty input")."""
    empty = Treebank.from_string("")
    assert (len(empty), empty.n_words, empty.to_string()) == (0, 0, "")
    tb = Treebank.from_string(SAMPLE)
    assert sum([tb, tb], Treebank.from_string("")).to_string() == SAMPLE * 2


def test_margins_names_the_word_of_a_malformed_margin() -> None:
    """Planted: the bare float() error (no sentence, no word) fails."""

    def with_misc(misc: str) -> Treebank:
        lines = sent("0", "1").split("\n")
        lines[1] = lines[1][: -len("_")] + misc  # word 2's MISC
        return Treebank.from_string("# sent_id = x7\n" + "\n".join(lines))

    assert depfs.margins(with_misc("A=1|Margin=1.5")).tolist()[1] == 1.5
    for misc, why in (
        ("Margin=abc", "abc"),
        ("Margin=", "could not convert"),
        ("Margin=1|Margin=2", "two"),
    ):
        with pytest.raises(
            ValueError, match=rf"^sentence 1 \(sent_id = x7\): word 2: MISC .*{why}"
        ):
            depfs.margins(with_misc(misc))


def test_invalid_utf8_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.conllu"
    path.write_bytes(("# ok\n" + word("1")).replace("w\tw", "caf\xe9\tw").encode("latin-1"))
    with pytest.raises(FormatError) as err:
        read_conllu(path)
    assert str(err.value).startswith(f"{path}:2: invalid UTF-8")


def test_options_multiple_roots_and_blank_heads() -> None:
    text = sent("0", "1", "0")
    assert Treebank.from_string(text, multiple_roots=True)[0].heads.tolist() == [0, 1, 0]
    with pytest.raises(FormatError, match=r"<string>:2: HEAD is `_`"):
        read_or_parse(sent("0", "_"), allow_blank_heads=False)


def read_or_parse(text: str, **options: bool) -> Treebank:
    return Treebank.from_string(text, **options)


def test_crlf_and_missing_final_blank_line_are_normalised() -> None:
    messy = SAMPLE.replace("\n", "\r\n").rstrip("\r\n")
    assert Treebank.from_string(messy).to_string() == SAMPLE


# ---- property: generated sentences round-trip --------------------------------------------

VALUE = st.one_of(
    st.just("_"),
    st.text(
        alphabet=st.characters(
            blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\t\n\r"
        ),
        min_size=1,
        max_size=6,
    ).filter(lambda s: s.strip(" ") == s and not s.startswith("#")),
)


@st.composite
def sentences(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 8))
    order = draw(st.permutations(list(range(1, n + 1))))
    heads = [0] * (n + 1)
    for k in range(1, n):
        heads[order[k]] = order[draw(st.integers(0, k - 1))]
    lines = [f"# {c}" for c in draw(st.lists(st.text("abc =", max_size=8), max_size=2))]
    range_end = 0  # multiword ranges must not overlap
    for i in range(1, n + 1):
        form, lemma, feats, misc = (draw(VALUE) for _ in range(4))
        if range_end < i < n and draw(st.booleans()) and draw(st.booleans()):
            range_end = i + 1
            lines.append(f"{i}-{i + 1}\t{form}\t_\t_\t_\t_\t_\t_\t_\t_")
        lines.append(f"{i}\t{form}\t{lemma}\tX\t_\t{feats}\t{heads[i]}\tdep\t_\t{misc}")
        if draw(st.booleans()) and draw(st.booleans()):
            lines.append(f"{i}.1\t{form}\t_\t_\t_\t_\t_\t_\t{i}:x\t_")
    return "\n".join(lines) + "\n\n"


@settings(max_examples=150, deadline=None)
@given(st.lists(sentences(), min_size=1, max_size=4))
def test_generated_text_round_trips(sents: list[str]) -> None:
    text = "".join(sents)
    tb = Treebank.from_string(text)
    assert tb.to_string() == text
    assert len(tb) == len(sents)
    for s in tb:
        heads = s.heads
        assert (heads == 0).sum() == 1
        assert ((heads >= 0) & (heads <= len(s))).all()


@settings(max_examples=100, deadline=None)
@given(st.lists(sentences(), min_size=1, max_size=6), st.data())
def test_slices_selections_and_joins_write_their_sentences(
    sents: list[str], data: st.DataObject
) -> None:
    """A slice, a selection and a join of treebanks write back exactly the sentences
    they name, in order, as Python's own list operations would pick them."""
    tb = Treebank.from_string("".join(sents))
    cut = data.draw(st.slices(len(sents)))
    assert tb[cut].to_string() == "".join(sents[cut])
    picks = data.draw(st.lists(st.integers(-len(sents), len(sents) - 1), max_size=8))
    assert tb.select(picks).to_string() == "".join(sents[i] for i in picks)
    assert Treebank.concat([tb, tb[cut]]).to_string() == "".join(sents + sents[cut])
    assert (tb + tb).to_string() == "".join(sents * 2)


def test_slicing_errors_and_own_vocabularies(tmp_path: Path) -> None:
    tb = Treebank.from_string(SAMPLE)
    assert tb[1:].vocab("form") == ["_", "Hi"]
    assert len(tb[5:]) == 0 and Treebank.concat([]).to_string() == ""
    with pytest.raises(IndexError, match="sentence index 2 out of range"):
        tb.select([0, 2])
    with pytest.raises(TypeError, match="integers or slices, not str"):
        tb["s1"]  # type: ignore[call-overload]
    conllx = tmp_path / "x.conll"
    conllx.write_text("1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n\n")
    assert (tb + read_conllu(conllx)).to_string() == SAMPLE + conllx.read_text()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(sentences(), min_size=1, max_size=3),
    st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from("\t\n0123456789-._#x ")), max_size=6),
)
def test_mutated_text_gives_a_treebank_or_a_format_error(
    sents: list[str], edits: list[tuple[int, str]]
) -> None:
    chars = list("".join(sents))
    for at, c in edits:
        chars.insert(at % (len(chars) + 1), c)
    text = "".join(chars)
    try:
        tb = Treebank.from_string(text)
    except FormatError as e:  # never a PanicException or another error
        assert str(e).startswith("<string>:")
    else:
        assert Treebank.from_string(tb.to_string()).to_string() == tb.to_string()
