"""The spaCy pipeline component `depfs` (depfs.spacy_component), on spacy.blank("en")
with small models trained on the synthetic treebank."""

from __future__ import annotations

import pickle
import random
import shutil
import subprocess
import sys
from pathlib import Path

import depfs
import numpy as np
import pytest
from depfs.datasets import synthetic
from depfs.text import Word, _conllu
from small_models import small_graph

spacy = pytest.importorskip("spacy")
from spacy import displacy  # noqa: E402
from spacy.language import Language  # noqa: E402
from spacy.tokens import Doc  # noqa: E402


@pytest.fixture(scope="module")
def gold() -> depfs.Treebank:
    return synthetic(30, seed=11)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`plain`: a graph parser reading FORM and UPOS; `inside`: the same with a tagger
    in its file; `tagger`: that tagger; `eager`: an arc-eager parser; `lemma`: an
    arc-eager parser reading LEMMA, UPOS and XPOS, with the tagger inside."""
    d = tmp_path_factory.mktemp("spacy")
    train = synthetic(150, seed=2)
    tagger = depfs.Tagger(epochs=2).fit(train)
    paths = {k: d / f"{k}.depfs" for k in ("plain", "inside", "tagger", "eager", "lemma")}
    lemma = "lemma(QUEUE_0)\nupos(STACK_0)\nxpos(QUEUE_0) & form(STACK_0)"
    depfs.ArcEagerParser(lemma, epochs=2, tagger=tagger).fit(train).save(paths["lemma"])
    small_graph().fit(train).save(paths["plain"])
    small_graph(tagger=tagger).fit(train).save(paths["inside"])
    tagger.save(paths["tagger"])
    depfs.ArcEagerParser("upos(QUEUE_0)\nform(STACK_0)", epochs=2).fit(train).save(paths["eager"])
    return paths


def texts(tb: depfs.Treebank) -> list[str]:
    return [" ".join(s.forms) for s in tb]


def nlp_with(**config: object) -> Language:
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "depfs", config={k: str(v) if isinstance(v, Path) else v for k, v in config.items()}
    )
    return nlp


def heads_labels(doc) -> tuple[list[int], list[str]]:
    """CoNLL-U style heads (0 = root, else 1-based) and labels of a one-sentence doc."""
    return [0 if t.head.i == t.i else t.head.i + 1 for t in doc], [t.dep_ for t in doc]


def test_the_factory_is_registered_through_the_entry_point(models: dict[str, Path]):
    """A fresh interpreter that never imports depfs finds the `depfs` factory."""
    code = (
        "import spacy\n"
        "nlp = spacy.blank('en')\n"
        f"nlp.add_pipe('depfs', config={{'model': {str(models['inside'])!r}}})\n"
        "doc = nlp('the cat sleeps .')\n"
        "print(' '.join(t.dep_ for t in doc))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.split()) == 4
    from importlib.metadata import entry_points

    found = entry_points()
    eps = (
        found.select(group="spacy_factories")
        if hasattr(found, "select")
        else found.get("spacy_factories", [])
    )
    assert [ep.value for ep in eps if ep.name == "depfs"] == ["depfs.spacy_component:make_depfs"]


def test_heads_labels_and_tags_are_those_of_depfs(gold: depfs.Treebank, models: dict[str, Path]):
    nlp = nlp_with(model=models["inside"])
    parser = depfs.load(models["inside"])
    expected = parser.parse(depfs.tokens_to_treebank(s.forms for s in gold), tag=True)
    docs = list(nlp.pipe(texts(gold)))
    for doc, s in zip(docs, expected):
        assert [t.text for t in doc] == s.forms
        heads, labels = heads_labels(doc)
        assert heads == list(s.heads) and labels == s.deprels
        assert [t.pos_ for t in doc] == s.upos and [t.tag_ for t in doc] == s.xpos
        assert [t.lemma_ for t in doc] == s.lemmas
        assert [str(t.morph) or "_" for t in doc] == s.feats
    # One doc at a time gives the same as nlp.pipe.
    one = nlp(texts(gold)[3])
    assert heads_labels(one) == heads_labels(docs[3])
    # An explicit tagger path gives the same tags as the tagger inside.
    explicit = nlp_with(model=models["plain"], tagger=models["tagger"])(texts(gold)[3])
    assert [t.pos_ for t in explicit] == [t.pos_ for t in one]


def test_tags_set_by_an_earlier_component_are_used(gold: depfs.Treebank, models: dict[str, Path]):
    upos = {" ".join(s.forms): s.upos for s in gold}

    @Language.component("gold_upos")
    def gold_upos(doc):
        for t, tag in zip(doc, upos[doc.text]):
            t.pos_ = tag
        return doc

    nlp = spacy.blank("en")
    nlp.add_pipe("gold_upos")
    nlp.add_pipe("depfs", config={"model": str(models["inside"])})
    expected = depfs.load(models["plain"]).parse(gold)  # same parser, gold tags
    for doc, s, g in zip(nlp.pipe(texts(gold)), expected, gold):
        assert heads_labels(doc) == (list(s.heads), s.deprels)
        assert [t.pos_ for t in doc] == g.upos and {t.tag_ for t in doc} == {""}


def test_untagged_docs_are_refused_unless_allowed(gold: depfs.Treebank, models: dict[str, Path]):
    with pytest.raises(depfs.errors.MissingColumnsError) as e:
        nlp_with(model=models["plain"])("the cat sleeps .")
    message = str(e.value)
    assert message.startswith("depfs component: the docs leave pos_ empty")
    assert '"tagger"' in message and '"allow_missing_tags": True' in message
    doc = nlp_with(model=models["eager"], allow_missing_tags=True)("the cat sleeps .")
    assert sum(t.head.i == t.i for t in doc) == 1
    with pytest.raises(ValueError, match="needs a model"):
        spacy.blank("en").add_pipe("depfs")


def test_pipe_parses_a_batch_in_one_call(
    gold: depfs.Treebank, models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
):
    nlp = nlp_with(model=models["inside"])
    parser = nlp.get_pipe("depfs").parser
    calls: list[int] = []
    parse = parser.parse

    def counting(tb, *a, **kw):
        calls.append(len(tb))
        return parse(tb, *a, **kw)

    monkeypatch.setattr(parser, "parse", counting)
    docs = list(nlp.pipe(texts(gold), batch_size=8))
    assert calls == [8, 8, 8, 6] and len(docs) == 30


def test_sentences_whitespace_and_displacy(gold: depfs.Treebank, models: dict[str, Path]):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("depfs", config={"model": str(models["inside"])})
    a, b = texts(gold)[:2]
    doc = nlp(f"{a}  {b}\n\n")
    # The sentencizer starts sentences at the whitespace tokens: " " begins the second
    # and attaches to the word after it; the final "\n\n" is a sentence of its own.
    assert [s.text.strip() for s in doc.sents] == [a, b, ""]
    spaces = [t for t in doc if t.is_space]
    assert len(spaces) == 2 and all(t.dep_ == "dep" for t in spaces)
    assert spaces[0].head.i == spaces[0].i + 1 and spaces[1].head.i == spaces[1].i
    roots = [t.i for t in doc if t.head.i == t.i and not t.is_space]
    assert len(roots) == 2
    # Without a sentencizer, a space inside the doc attaches to the word before it.
    plain = nlp_with(model=models["inside"])(f"{a}  {b}")
    space = next(t for t in plain if t.is_space)
    assert space.head.i == space.i - 1 and space.dep_ == "dep"
    svg = displacy.render(doc, style="dep", jupyter=False)
    assert svg.count("displacy-arrow") >= len(doc) - 2 and doc[roots[0]].dep_ != ""
    # A doc without sentence starts is one sentence; heads stay inside it.
    heads = np.array([t.head.i for t in nlp_with(model=models["inside"])(f"{a} {b}")])
    assert heads.max() < len(a.split()) + len(b.split())


def test_docs_without_features_are_parsed_after_the_tagger(models: dict[str, Path], tmp_path):
    """A doc whose words the tagger gives no features (FEATS '_' on every word) is tagged
    text, not untagged. Planted: FEATS counted alone as missing raises here."""
    feats = tmp_path / "feats.depfs"
    parser = depfs.ArcEagerParser("feats(QUEUE_0)\nupos(STACK_0)", epochs=1)
    parser.fit(synthetic(60, seed=3)).save(feats)
    doc = nlp_with(model=feats, tagger=models["tagger"])("on . on .")
    assert sum(t.head.i == t.i for t in doc) == 1 and [t.pos_ != "" for t in doc] == [True] * 4
    assert all(str(t.morph) == "" for t in doc)


def by_hand(nlp: Language, forms: list[str], **attrs: list[str]) -> Doc:
    """A doc of `forms` with attributes (pos_, tag_, ...) set as an earlier component would."""
    doc = Doc(nlp.vocab, words=forms)
    for attr, values in attrs.items():
        for t, v in zip(doc, values):
            setattr(t, attr, v)
    return doc


def test_each_doc_is_tagged_or_not_whatever_its_batch(gold: depfs.Treebank, models):
    """A doc whose pos_ an earlier component set is parsed with them, and not tagged
    (tag_ stays empty), alone or beside an untagged doc in one batch, which is tagged.
    Planted: the tagging decided for the whole batch fails here."""
    nlp = nlp_with(model=models["inside"])
    a, b = gold[0], gold[1]
    tagged = lambda: by_hand(nlp, a.forms, pos_=a.upos)  # noqa: E731
    alone = next(nlp.pipe([tagged()], batch_size=1))
    mixed = list(nlp.pipe([tagged(), Doc(nlp.vocab, words=b.forms)], batch_size=2))
    expected = depfs.load(models["plain"]).parse(gold[0:1])[0]  # gold UPOS
    for doc in (alone, mixed[0]):
        assert [t.pos_ for t in doc] == a.upos and {t.tag_ for t in doc} == {""}
        assert heads_labels(doc) == (list(expected.heads), expected.deprels)
    tagger = depfs.load(models["inside"]).tagger_
    predicted = tagger.tag(depfs.tokens_to_treebank([b.forms]))[0]
    assert [t.pos_ for t in mixed[1]] == predicted.upos
    assert [t.tag_ for t in mixed[1]] == predicted.xpos


def test_attributes_an_earlier_component_set_are_kept(models):
    """A doc with pos_ and tag_ but no lemma_ or morph, for a model that reads LEMMA: it
    is tagged, the tagger's lemmas and features fill the empty attributes, and pos_ and
    tag_ (here unlike the tagger's) stay and are what the parser reads.
    Planted: the tags written over every attribute fail here."""
    nlp = nlp_with(model=models["lemma"])
    forms = ["some", "cats", "laugh", "."]
    upos, xpos = ["X", "X", "X", "PUNCT"], ["XX", "XX", "XX", "XX"]
    doc = nlp(by_hand(nlp, forms, pos_=upos, tag_=xpos))
    parser = depfs.load(models["lemma"])
    predicted = parser.tagger_.tag(depfs.tokens_to_treebank([forms]))[0]
    assert predicted.upos != upos and predicted.xpos != xpos
    assert [t.pos_ for t in doc] == upos and [t.tag_ for t in doc] == xpos
    assert [t.lemma_ for t in doc] == predicted.lemmas
    assert [str(t.morph) or "_" for t in doc] == predicted.feats
    words = [
        Word(f, lemma=lemma, upos=u, xpos=x, feats=feats)
        for f, lemma, u, x, feats in zip(forms, predicted.lemmas, upos, xpos, predicted.feats)
    ]
    own = depfs.Treebank.from_string(_conllu([(" ".join(forms), words)], 1))
    expected = parser.parse(own, tag=False)[0]
    assert heads_labels(doc) == (list(expected.heads), expected.deprels)


def test_a_saved_pipeline_carries_its_models(
    gold: depfs.Treebank, models, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """to_disk copies the model and the tagger into the pipeline's folder: spacy.load from
    another folder, with the config's files deleted (or replaced by another model), parses
    as before; so do to_bytes/from_bytes and pickle.
    Planted: to_disk writing no model fails here."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir(), second.mkdir()
    shutil.copy(models["plain"], first / "m.depfs")
    shutil.copy(models["tagger"], first / "t.depfs")
    monkeypatch.chdir(first)
    nlp = nlp_with(model="m.depfs", tagger="t.depfs")

    def annotations(nlp: Language) -> list[tuple]:
        docs = nlp.pipe(texts(gold)[:5])
        return [(heads_labels(d), [t.pos_ for t in d], [t.lemma_ for t in d]) for d in docs]

    before = annotations(nlp)
    data = nlp.to_bytes()
    nlp.to_disk(tmp_path / "pipe")
    (first / "m.depfs").unlink(), (first / "t.depfs").unlink()
    monkeypatch.chdir(second)
    assert annotations(spacy.load(tmp_path / "pipe")) == before
    shutil.copy(models["eager"], second / "m.depfs")  # the config's path, another model
    assert annotations(spacy.load(tmp_path / "pipe")) == before
    again = spacy.blank("en")
    again.add_pipe("depfs", config={"model": "gone.depfs", "tagger": "gone.depfs"})
    with pytest.raises(depfs.errors.DepfsIOError, match="gone.depfs"):
        again("a doc before from_bytes")  # a missing model is named at the first doc
    assert annotations(again.from_bytes(data)) == before
    assert annotations(pickle.loads(pickle.dumps(nlp))) == before


def test_whitespace_heads_are_found_in_linear_time():
    """A whitespace token's head is the word before it, else after it, else token 0; each
    flag is read at most twice (one pass each way), however many whitespace tokens.
    Planted: the search from each whitespace token (quadratic) fails here."""
    from depfs.spacy_component import _space_heads

    class Counting(list):
        reads = 0

        def __getitem__(self, k):
            Counting.reads += 1
            return super().__getitem__(k)

    def reference(space: list[bool]) -> list[int]:
        words = [k for k, s in enumerate(space) if not s]
        return [
            -1
            if not s
            else max(
                [w for w in words if w < k], default=min([w for w in words if w > k], default=0)
            )
            for k, s in enumerate(space)
        ]

    rng = random.Random(4)
    for n in (0, 1, 2, 5, 30):
        for _ in range(50):
            space = [rng.random() < 0.4 for _ in range(n)]
            assert _space_heads(space) == reference(space)
    assert _space_heads([True, True, False, True]) == [2, 2, -1, 2]
    for n in (1000, 2000):  # half whitespace
        Counting.reads = 0
        _space_heads(Counting([k % 2 == 0 for k in range(n)]))
        assert Counting.reads <= 2 * n


def test_a_text_of_underscores_is_parsed(models):
    """'_' is a word (UD: a FORM '_' is the underscore itself), not an empty FORM.
    Planted: FORM counted as missing on '_' raises here."""
    doc = nlp_with(model=models["lemma"])("_ _ _ x")
    assert [t.text for t in doc] == ["_", "_", "_", "x"]
    assert sum(t.head.i == t.i for t in doc) == 1 and all(t.pos_ for t in doc)
