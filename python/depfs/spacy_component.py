"""depfs as a spaCy pipeline component (spaCy ≥ 3; ``pip install 'depfs[spacy]'``).

>>> nlp = spacy.blank("en")
>>> nlp.add_pipe("sentencizer")          # optional: without it a doc is one sentence
>>> nlp.add_pipe("depfs", config={"model": "en.depfs"})
>>> doc = nlp("Dogs bark at the cat.")
>>> [(t.text, t.dep_, t.head.i) for t in doc]

The factory ``depfs`` is registered through the ``spacy_factories`` entry point, so
``add_pipe("depfs")`` works without importing depfs first. It sets ``token.head`` and
``token.dep_``; a doc's sentences (from an earlier sentencizer or parser; otherwise the
whole doc) are parsed one by one, and ``doc.sents`` then follows the trees, so
``displacy.render(doc, style="dep")`` draws them.

Config:

- ``model``: a depfs model file (graph or arc-eager parser).
- ``tagger``: optional path of a depfs tagger (or of a parser with a tagger inside).
- ``allow_missing_tags``: parse docs that lack tags the model reads (a poor parse), as
  ``depfs parse --allow-missing-tags``.
- ``threads``: parsing threads (0 = all cores).

Tags: each doc is decided on its own. A doc that carries the tags the model reads
(``pos_``, ``tag_``, ``morph``, ``lemma_`` set by an earlier component) is parsed with
them; a doc that leaves one empty is tagged by ``tagger``, or by the tagger inside the
model file, and the tagger's columns fill the attributes left empty: ``pos_`` (UPOS),
``tag_`` (XPOS), ``morph`` (FEATS), ``lemma_``. An attribute an earlier component set is
never overwritten. Without a tagger, :class:`depfs.errors.MissingColumnsError` says what to
add.

``nlp.pipe(texts, batch_size=N)`` parses N docs (spaCy's default: 1000) with one call
into Rust, which releases the GIL while it parses.
Whitespace tokens (``token.is_space``) are not parsed: each is attached to the word
before it (or after it, at the start of a sentence) with the label ``dep``.

``nlp.to_disk(path)`` copies the model (and a ``tagger`` given in the config) into the
component's folder, and ``spacy.load(path)`` reads them from there, wherever it runs and
whatever the config's paths now hold; ``nlp.to_bytes()`` and ``pickle`` carry them too.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Optional

import numpy as np
import srsly
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.parts_of_speech import IDS as POS_IDS
from spacy.tokens import Doc
from spacy.util import minibatch

from . import _core
from .base import missing_columns, tagger_fills
from .errors import MissingColumnsError
from .text import Word, _conllu

__all__ = ["DepfsComponent", "make_depfs"]

#: The label of a whitespace token's arc.
SPACE_LABEL = "dep"

#: The files of a component's folder (``to_disk``): the parser, and a tagger given apart.
MODEL_FILE, TAGGER_FILE = "model.depfs", "tagger.depfs"


class DepfsComponent:
    """The ``depfs`` pipeline component (see the module doc)."""

    def __init__(
        self,
        nlp: Language,
        name: str,
        model: str,
        tagger: str | None = None,
        allow_missing_tags: bool = False,
        threads: int = 1,
    ) -> None:
        self.name = name
        self.allow_missing_tags = allow_missing_tags
        self.threads = threads
        self._paths = (model, tagger)
        self.parser: Any = None
        self.tagger: Any = None
        self._own_tagger = False  # a tagger given apart from the model (saved apart)
        # A saved pipeline (spacy.load) reads its models in from_disk: the config's paths
        # may be gone by then, so they are read only when there (else at the first doc).
        if os.path.exists(model) and (tagger is None or os.path.exists(tagger)):
            self._load()

    def _load(self) -> None:
        """Reads the models at the config's paths (one clear error when missing)."""
        from .models import load
        from .pipeline import _tagger

        model, tagger = self._paths
        self._set(load(model), _tagger(tagger) if tagger else None, model)

    def _set(self, parser: Any, tagger: Any, model: str) -> None:
        if getattr(parser, "kind", None) not in ("graph", "arc-eager", "ensemble"):
            raise ValueError(f"{model}: not a parser model (a {parser.kind} model)")
        self.parser = parser
        self._own_tagger = tagger is not None
        self.tagger = tagger if tagger is not None else getattr(parser, "tagger_", None)

    def __call__(self, doc: Doc) -> Doc:
        self._parse([doc])
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: int = 1000) -> Iterator[Doc]:
        for batch in minibatch(docs, size=batch_size):
            self._parse(batch)
            yield from batch

    # ---------- saving: the models travel with the pipeline ----------

    def to_disk(self, path: str | os.PathLike[str], *, exclude: Iterable[str] = ()) -> None:
        """Writes the parser (and a tagger given apart) into the folder `path`."""
        self._loaded()
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self.parser.save(path / MODEL_FILE)
        if self._own_tagger:
            self.tagger.save(path / TAGGER_FILE)

    def from_disk(self, path: str | os.PathLike[str], *, exclude: Iterable[str] = ()) -> Any:
        """Reads the models `to_disk` wrote (a folder without them, from a depfs that did
        not save them, leaves the config's paths in use)."""
        from .models import load

        path = Path(path)
        if (path / MODEL_FILE).exists():
            tagger = path / TAGGER_FILE
            self._set(
                load(path / MODEL_FILE),
                load(tagger) if tagger.exists() else None,
                str(path / MODEL_FILE),
            )
        return self

    def to_bytes(self, *, exclude: Iterable[str] = ()) -> bytes:
        """The model files' bytes (what ``nlp.to_bytes()`` and pickle carry)."""
        self._loaded()
        return srsly.msgpack_dumps(
            {
                "model": _file_bytes(self.parser),
                "tagger": _file_bytes(self.tagger) if self._own_tagger else None,
            }
        )

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = ()) -> Any:
        """Reads the models :meth:`to_bytes` wrote."""
        files = srsly.msgpack_loads(data)
        tagger = files.get("tagger")
        self._set(
            _from_file_bytes(files["model"]),
            None if tagger is None else _from_file_bytes(tagger),
            "<bytes>",
        )
        return self

    def __reduce__(self) -> Any:
        return (_unpickle, (self.name, self.allow_missing_tags, self.threads, self.to_bytes()))

    def _loaded(self) -> None:
        if self.parser is None:
            self._load()

    # ---------- one batch ----------

    def _parse(self, docs: list[Doc]) -> None:
        """Tags the docs that need it, each doc decided alone (what a doc gets never
        depends on the docs batched with it), then parses the batch's sentences in one
        call. O(words of the batch) besides the models."""
        self._loaded()
        model = self.parser.model_
        spans = [_sentences(doc) for doc in docs]
        own = [_tag_columns(doc) for doc in docs]  # what an earlier component set
        words = [
            [ws for span in sents if (ws := _words(span, columns))]
            for sents, columns in zip(spans, own)
        ]
        flat = [ws for doc_words in words for ws in doc_words]
        tagged = [False] * len(docs)
        parsed: list[Any] = [None] * len(flat)
        if flat:
            treebank = _core.Treebank.from_string(_text(flat))
            keep: list[int] = []  # the sentences parsed as they are
            to_tag: list[int] = []  # those of the docs that need the tagger
            first = 0
            for d, doc_words in enumerate(words):
                sentences = range(first, first + len(doc_words))
                first += len(doc_words)
                if not doc_words:
                    continue
                # The rule of parse(tag=None), on this doc: base.needs_tagger and
                # base.unfilled_columns, from one look at its columns.
                missing = missing_columns(model.input_columns, treebank.select(sentences))
                predicted = self.tagger.columns_ if self.tagger is not None else []
                tagged[d] = tagger_fills(missing, predicted)
                missing = [c for c in missing if not tagged[d] or c not in predicted]
                if missing and not self.allow_missing_tags:
                    raise MissingColumnsError(_missing_message(model, missing))
                (to_tag if tagged[d] else keep).extend(sentences)
            parts = [treebank.select(keep) if to_tag else treebank] if keep else []
            if to_tag:
                done = self.tagger.tag(treebank.select(to_tag) if keep else treebank, self.threads)
                if any(t and columns for t, columns in zip(tagged, own)):
                    # The tagger fills only what an earlier component left empty.
                    for i, s in zip(to_tag, done):
                        _fill(flat[i], s, self.tagger.columns_)
                    done = _core.Treebank.from_string(_text([flat[i] for i in to_tag]))
                parts.append(done)
            kw = {"tag": False} if getattr(self.parser, "tagger_", None) is not None else {}
            batch = parts[0] if len(parts) == 1 else _core.Treebank.concat(parts)
            # The columns were checked doc by doc above.
            result = self.parser.parse(batch, self.threads, allow_missing_tags=True, **kw)
            for i, s in zip(keep + to_tag, result):
                parsed[i] = s
        it = iter(parsed)
        columns = self.tagger.columns_ if self.tagger is not None else []
        for doc, sents, t, set_before in zip(docs, spans, tagged, own):
            _write(doc, sents, it, columns if t else [], set_before)


def _unpickle(name: str, allow_missing_tags: bool, threads: int, data: bytes) -> DepfsComponent:
    component = DepfsComponent.__new__(DepfsComponent)
    component.name = name
    component.allow_missing_tags = allow_missing_tags
    component.threads = threads
    component._paths = ("<pickle>", None)
    return component.from_bytes(data)


def _file_bytes(model: Any) -> bytes:
    """The bytes of `model`'s file (as its ``save`` writes it)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.depfs"
        model.save(path)
        return path.read_bytes()


def _from_file_bytes(data: bytes) -> Any:
    """The model of a file's bytes (:func:`_file_bytes`)."""
    from .models import load

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.depfs"
        path.write_bytes(data)
        return load(path)


def _text(sentences: list[list[Word]]) -> str:
    return _conllu(((" ".join(w.form for w in ws), ws) for ws in sentences), 1)


_WORD_FIELDS = {"UPOS": "upos", "XPOS": "xpos", "FEATS": "feats", "LEMMA": "lemma"}


def _tagged_values(sentence: Any) -> dict[str, list[str]]:
    """A tagged sentence's tag columns by name."""
    return {
        "UPOS": sentence.upos,
        "XPOS": sentence.xpos,
        "FEATS": sentence.feats,
        "LEMMA": sentence.lemmas,
    }


def _fill(words: list[Word], tagged: Any, columns: Sequence[str]) -> None:
    """Fills the fields of `words` left empty ('_') from the `columns` of the `tagged`
    sentence: what an earlier component set stays."""
    values = _tagged_values(tagged)
    for column in columns:
        field = _WORD_FIELDS[column]
        for w, v in zip(words, values[column]):
            if getattr(w, field) == "_":
                setattr(w, field, v)


def _sentences(doc: Doc) -> list[list[Any]]:
    """The tokens of each sentence of `doc` (the whole doc without sentence starts)."""
    if len(doc) == 0:
        return []
    spans = list(doc.sents) if doc.has_annotation("SENT_START") else [doc[:]]
    return [list(span) for span in spans]


def _clean(value: str) -> str:
    """A CoNLL-U field: no tabs or line breaks, `_` when empty."""
    if "\t" in value or "\n" in value or "\r" in value:
        value = " ".join(value.split())
    return value or "_"


#: The CoNLL-U columns of spaCy's token annotations (has_annotation name, attribute).
_COLUMNS = {"UPOS": ("POS", "pos_"), "XPOS": ("TAG", "tag_"), "LEMMA": ("LEMMA", "lemma_")}


def _tag_columns(doc: Doc) -> list[str]:
    """The tag columns an earlier component set on `doc`."""
    columns = [c for c, (a, _) in _COLUMNS.items() if doc.has_annotation(a)]
    return columns + (["FEATS"] if doc.has_annotation("MORPH") else [])


def _words(tokens: list[Any], columns: list[str]) -> list[Word]:
    """CoNLL-U words of spaCy tokens, whitespace tokens left out, with the tag
    `columns` an earlier component set."""
    words = []
    for t in tokens:
        if t.is_space:
            continue
        w = Word(_clean(t.text))
        for c in columns:
            if c == "FEATS":
                w.feats = _clean(str(t.morph))
            else:
                setattr(w, c.lower(), _clean(getattr(t, _COLUMNS[c][1])))
        words.append(w)
    return words


def _missing_message(model: Any, missing: list[str]) -> str:
    """The refusal of an untagged doc, in spaCy's terms."""
    needed = model.input_columns
    attrs = {"UPOS": "pos_", "XPOS": "tag_", "FEATS": "morph", "LEMMA": "lemma_"}
    return (
        f"depfs component: the docs leave {', '.join(attrs.get(c, c) for c in missing)} "
        f"empty, and the model reads {', '.join(needed)}: a parse would be silently bad. "
        "Add a component that sets them before depfs, give a depfs tagger "
        '(config={"tagger": PATH}, or a model trained with depfs train --tagger), or '
        'allow it anyway (config={"allow_missing_tags": True})'
    )


_TAG_ATTRS = {"UPOS": "pos_", "XPOS": "tag_", "LEMMA": "lemma_"}


def _write(
    doc: Doc, sents: list[list[Any]], parsed: Iterator[Any], columns: list[str], own: list[str]
) -> None:
    """Sets the heads and labels of `doc` from its parsed sentences (taken in order from
    `parsed`), and the tag `columns` a depfs tagger predicted where `doc` left them empty
    (`own`: the columns an earlier component set on some of its tokens)."""
    n = len(doc)
    if n == 0:
        return
    heads = np.arange(n, dtype=np.int64)  # absolute; a root is its own head
    labels = [SPACE_LABEL] * n
    for span in sents:
        words = [t for t in span if not t.is_space]
        if words:
            s = next(parsed)
            for t, h, label in zip(words, s.heads, s.deprels):
                heads[t.i] = words[h - 1].i if h > 0 else t.i
                labels[t.i] = label
            if columns:
                _set_tags(words, s, columns, own)
        if len(words) < len(span):
            for k, h in enumerate(_space_heads([t.is_space for t in span])):
                if h >= 0:
                    heads[span[k].i] = span[h].i
    strings = doc.vocab.strings
    array = np.empty((n, 2), dtype=np.uint64)
    array[:, 0] = (heads - np.arange(n)).astype(np.uint64)
    array[:, 1] = [strings.add(label) for label in labels]
    doc.from_array([HEAD, DEP], array)


def _space_heads(space: Sequence[bool]) -> list[int]:
    """The head of each whitespace token of a sentence (`space[k]` true): the nearest word
    before it, else the nearest after it, else token 0 (a sentence of whitespace); -1 for
    a word. One forward and one backward pass: O(n), each entry read twice."""
    n = len(space)
    heads = [-1] * n
    before = -1
    for k in range(n):
        if space[k]:
            heads[k] = before
        else:
            before = k
    after = 0
    for k in range(n - 1, -1, -1):
        if not space[k]:
            after = k
        elif heads[k] < 0:
            heads[k] = after
    return heads


def _set_tags(tokens: list[Any], sentence: Any, columns: list[str], own: list[str]) -> None:
    """Sets the tagger's `columns` of `sentence` on the `tokens` whose attribute is empty
    (looked at only for the `own` columns, those an earlier component set on some token)."""
    values = _tagged_values(sentence)
    for column in columns:
        check = column in own
        for t, v in zip(tokens, values[column]):
            if v == "_" and not (column == "LEMMA" and t.text == "_"):
                continue
            if column == "FEATS":
                if not (check and t.has_morph()):
                    t.set_morph(v)
            elif column == "UPOS":
                if not (check and t.pos_) and v in POS_IDS:
                    t.pos_ = v
            elif not (check and getattr(t, _TAG_ATTRS[column])):
                setattr(t, _TAG_ATTRS[column], v)


@Language.factory(
    "depfs",
    default_config={
        "model": None,
        "tagger": None,
        "allow_missing_tags": False,
        "threads": 1,
    },
)
def make_depfs(
    nlp: Language,
    name: str,
    model: Optional[str],  # noqa: UP045 (spaCy evaluates these; `X | None` needs 3.10)
    tagger: Optional[str],  # noqa: UP045
    allow_missing_tags: bool,
    threads: int,
) -> DepfsComponent:
    """The factory behind ``nlp.add_pipe("depfs", config={"model": PATH})``."""
    if model is None:
        raise ValueError('the depfs component needs a model: config={"model": PATH}')
    return DepfsComponent(
        nlp,
        name,
        model,
        tagger=tagger,
        allow_missing_tags=allow_missing_tags,
        threads=threads,
    )
