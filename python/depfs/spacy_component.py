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

Tags: when the docs carry the tags the model reads (``pos_``, ``tag_``, ``morph``,
``lemma_`` set by an earlier component), they are used. Otherwise the docs are tagged by
``tagger``, or by the tagger inside the model file, and the columns that tagger predicts
are written to ``pos_`` (UPOS), ``tag_`` (XPOS), ``morph`` (FEATS) and ``lemma_``;
without a tagger, :class:`depfs.errors.MissingColumnsError` says what to add.

``nlp.pipe(texts, batch_size=N)`` parses N docs (spaCy's default: 1000) with one call
into Rust, which releases the GIL while it parses.
Whitespace tokens (``token.is_space``) are not parsed: each is attached to the word
before it (or after it, at the start of a sentence) with the label ``dep``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Optional

import numpy as np
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.parts_of_speech import IDS as POS_IDS
from spacy.tokens import Doc
from spacy.util import minibatch

from . import _core
from .base import missing_columns, needs_tagger
from .errors import MissingColumnsError
from .text import Word, _conllu

__all__ = ["DepfsComponent", "make_depfs"]

#: The label of a whitespace token's arc.
SPACE_LABEL = "dep"


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
        from .models import load
        from .pipeline import _tagger

        self.name = name
        self.parser = load(model)
        if getattr(self.parser, "kind", None) not in ("graph", "arc-eager", "ensemble"):
            raise ValueError(f"{model}: not a parser model (a {self.parser.kind} model)")
        self.tagger = _tagger(tagger) if tagger else getattr(self.parser, "tagger_", None)
        self.allow_missing_tags = allow_missing_tags
        self.threads = threads

    def __call__(self, doc: Doc) -> Doc:
        self._parse([doc])
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: int = 1000) -> Iterator[Doc]:
        for batch in minibatch(docs, size=batch_size):
            self._parse(batch)
            yield from batch

    # ---------- one batch ----------

    def _parse(self, docs: list[Doc]) -> None:
        spans = [_sentences(doc) for doc in docs]
        words = [
            _words(span, _tag_columns(doc)) for doc, sents in zip(docs, spans) for span in sents
        ]
        words = [ws for ws in words if ws]
        parsed: list[Any] = []
        tagged = False
        if words:
            text = _conllu(((" ".join(w.form for w in ws), ws) for ws in words), 1)
            treebank = _core.Treebank.from_string(text)
            tagged = self.tagger is not None and needs_tagger(
                self.parser.model_.input_columns, self.tagger.columns_, treebank
            )
            if tagged:
                treebank = self.tagger.tag(treebank, self.threads)
            own = {"tag": False} if getattr(self.parser, "tagger_", None) is not None else {}
            try:
                parsed = list(
                    self.parser.parse(
                        treebank, self.threads, allow_missing_tags=self.allow_missing_tags, **own
                    )
                )
            except MissingColumnsError:
                message = _missing_message(self.parser.model_, treebank)
                raise MissingColumnsError(message) from None
        columns = self.tagger.columns_ if tagged else []
        it = iter(parsed)
        for doc, sents in zip(docs, spans):
            _write(doc, sents, it, columns)


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


def _missing_message(model: Any, treebank: _core.Treebank) -> str:
    """The refusal of untagged docs, in spaCy's terms."""
    needed = model.input_columns
    missing = missing_columns(needed, treebank)
    attrs = {"UPOS": "pos_", "XPOS": "tag_", "FEATS": "morph", "LEMMA": "lemma_"}
    return (
        f"depfs component: the docs leave {', '.join(attrs.get(c, c) for c in missing)} "
        f"empty, and the model reads {', '.join(needed)}: a parse would be silently bad. "
        "Add a component that sets them before depfs, give a depfs tagger "
        '(config={"tagger": PATH}, or a model trained with depfs train --tagger), or '
        'allow it anyway (config={"allow_missing_tags": True})'
    )


_TAG_ATTRS = {"UPOS": "pos_", "XPOS": "tag_", "LEMMA": "lemma_"}


def _write(doc: Doc, sents: list[list[Any]], parsed: Iterator[Any], columns: list[str]) -> None:
    """Sets the heads and labels of `doc` from its parsed sentences (taken in order from
    `parsed`) and the tag `columns` a depfs tagger predicted."""
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
                _set_tags(words, s, columns)
        for k, t in enumerate(span):
            if t.is_space:  # to the word before it, else after it, else the first token
                before = [u for u in span[:k] if not u.is_space]
                after = [u for u in span[k + 1 :] if not u.is_space]
                heads[t.i] = (before[-1] if before else after[0] if after else span[0]).i
    strings = doc.vocab.strings
    array = np.empty((n, 2), dtype=np.uint64)
    array[:, 0] = (heads - np.arange(n)).astype(np.uint64)
    array[:, 1] = [strings.add(label) for label in labels]
    doc.from_array([HEAD, DEP], array)


def _set_tags(tokens: list[Any], sentence: Any, columns: list[str]) -> None:
    values = {
        "UPOS": sentence.upos,
        "XPOS": sentence.xpos,
        "LEMMA": sentence.lemmas,
        "FEATS": sentence.feats,
    }
    for column in columns:
        for t, v in zip(tokens, values[column]):
            if v == "_":
                continue
            if column == "FEATS":
                t.set_morph(v)
            elif column == "UPOS":
                if v in POS_IDS:
                    t.pos_ = v
            else:
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
