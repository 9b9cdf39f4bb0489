"""Greedy left-to-right morphological tagger: UPOS, XPOS, FEATS and LEMMA.

One averaged-perceptron classifier per column over token templates (the ``token``
family: attributes of the words at i±k, the columns already predicted, and ``ambig``,
the tags the tag dictionary allows for a word); FEATS is one class per whole string, as
in UDPipe 1; LEMMA an edit-script class (Chrupała 2008) backed by a dictionary of seen
forms. Columns the training data leaves empty (``_``) are not learnt and are left as
they are when tagging.

    tagger = Tagger().fit(train, dev=dev)
    tagged = tagger.tag(test)          # a copy with UPOS, XPOS, FEATS, LEMMA predicted
    tagger.save("en.tagger"); tagger = depfs.load("en.tagger")

Strubell et al. (2015) run their prefix-margin inference on such a tagger; each column
keeps its own ordered template set (``templates`` may give four, in column order).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from . import _core
from .base import HistoryRow, TrainableModel
from .templates import resolve_templates

COLUMNS = ("UPOS", "XPOS", "FEATS", "LEMMA")

# History column of each predicted column's dev accuracy.
_DEV_KEYS = {"UPOS": "dev_upos", "XPOS": "dev_xpos", "FEATS": "dev_ufeats", "LEMMA": "dev_lemmas"}


class Tagger(TrainableModel):
    """Greedy morphological tagger (sklearn style: `fit` returns self, learned attributes
    end in _). ``history_`` rows carry ``dev_upos``, ``dev_xpos``, ``dev_ufeats``,
    ``dev_lemmas`` (percent, CoNLL 2018 definitions) for the columns it predicts, and
    ``dev_accuracy``, their mean, which picks the best epoch."""

    kind = "tagger"
    _core_model = _core.TaggerModel
    _dev_key = "dev_accuracy"

    def __init__(
        self,
        templates: str | os.PathLike[str] | Sequence[str] = "tagger",
        *,
        epochs: int = 10,
        random_state: int = 1,
        # A form seen at least this often is known to the tag dictionary (its classes
        # are restricted to those seen); rarer ones train the unknown-word path.
        # Chosen on en_ewt dev (see the README).
        min_known: int = 2,
    ) -> None:
        self.templates = templates
        self.epochs = epochs
        self.random_state = random_state
        self.min_known = min_known

    def _template_texts(self) -> list[str]:
        t = self.templates
        if isinstance(t, (list, tuple)):
            if len(t) != len(COLUMNS):
                raise ValueError(
                    f"templates: one set for every column, or {len(COLUMNS)} "
                    f"({', '.join(COLUMNS)}); got {len(t)}"
                )
            return [resolve_templates(x, "token") for x in t]
        return [resolve_templates(t, "token")]

    def _trainer(self, train: Any) -> _core.TaggerTrainer:
        if not isinstance(train, _core.Treebank):
            raise TypeError(f"a tagger trains on a Treebank, got {type(train).__name__}")
        if self.min_known < 1:
            raise ValueError(f"min_known must be at least 1, got {self.min_known}")
        return _core.TaggerTrainer(
            train, self._template_texts(), seed=self.random_state, min_known=self.min_known
        )

    @staticmethod
    def _params_of(model: _core.TaggerModel) -> dict[str, Any]:
        sets = ["\n".join(model.templates(c)) for c in model.columns]
        return {"templates": sets[0] if len(set(sets)) == 1 else sets}

    @staticmethod
    def _dev_scores(model: Any, dev: _core.Treebank) -> dict[str, float]:
        from .evaluate import evaluate

        scores = evaluate(dev, model.tag(dev, 1))
        row = {
            _DEV_KEYS[c]: getattr(scores, _DEV_KEYS[c][4:]) for c in model.columns if c in _DEV_KEYS
        }
        row["dev_accuracy"] = sum(row.values()) / len(row)
        return row

    @classmethod
    def _dev_label(cls, row: HistoryRow) -> str:
        shown = [f"{k[4:].upper()} {v:.2f}" for k, v in row.items() if k in _DEV_KEYS.values()]
        return "tagger dev " + " ".join(shown)

    @property
    def columns_(self) -> list[str]:
        """The columns it predicts (those the training data fills)."""
        return list(self._model().columns)

    def tag(self, treebank: _core.Treebank, threads: int = 1) -> _core.Treebank:
        """A copy of ``treebank`` with the predicted columns written; other columns are
        untouched (``threads=0``: all cores)."""
        return self._model().tag(treebank, threads=threads)

    def parse(self, treebank: _core.Treebank, threads: int = 1, **_: Any) -> _core.Treebank:
        """Same as :meth:`tag` (a tagger in a pipeline where parsers are expected)."""
        return self.tag(treebank, threads)
