"""Jackknifed tags for training a parser on predicted tags (`depfs jackknife`).

A parser trained on gold tags and run on predicted ones meets, at parse time, tag errors
it never saw. Jackknifing gives the training data the tags it will see instead: the
sentences are cut into K contiguous folds, and each fold is tagged by a tagger trained
on the other K-1 (Strubell et al. 2015 use K = 10), so no sentence is tagged by a model
that saw it. Only UPOS, XPOS, FEATS and LEMMA change; every other column, comment,
multiword-token and empty-node line stays byte for byte.

    train = depfs.read_conllu("train.conllu")
    jackknifed = depfs.jackknife(train, folds=10)
    parser = depfs.ArcEagerParser(tagger=depfs.Tagger().fit(train)).fit(jackknifed)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from . import _core
from .base import HistoryRow, as_int, as_treebank
from .tagger import COLUMNS, Tagger

__all__ = ["fold_bounds", "jackknife"]


def fold_bounds(n_sentences: int, folds: int) -> list[tuple[int, int]]:
    """The [start, end) sentence ranges of `folds` contiguous folds of nearly equal
    size (sizes differ by at most one sentence)."""
    k = as_int(folds)
    if k is None or k < 2:
        raise ValueError(f"folds must be an integer of at least 2, got {folds!r}")
    folds = k
    if folds > n_sentences:
        raise ValueError(
            f"{folds} folds for {n_sentences} sentences: at most one fold per sentence"
        )
    cuts = [n_sentences * k // folds for k in range(folds + 1)]
    return list(zip(cuts[:-1], cuts[1:]))


def jackknife(
    treebank: _core.Treebank | str | os.PathLike[str],
    folds: int = 10,
    *,
    templates: str | os.PathLike[str] | Sequence[str] | None = None,
    clusters: str | os.PathLike[str] | None = None,
    epochs: int = 10,
    random_state: int = 1,
    threads: int = 1,
    on_epoch: Callable[[int, HistoryRow], None] | None = None,
) -> _core.Treebank:
    """A copy of `treebank` (or of the CoNLL-U file at that path) whose UPOS, XPOS, FEATS
    and LEMMA come from taggers that never saw the sentence: fold k (of `folds`
    contiguous blocks) is tagged by a :class:`depfs.Tagger` (`templates`, `clusters`,
    `epochs`, `random_state`) trained on the other folds. Columns the treebank leaves
    empty stay empty; other columns and comments are kept as they are. `on_epoch(fold,
    row)` sees each tagger's epochs (fold from 1)."""
    treebank = as_treebank(treebank, "treebank")  # a Treebank, or a path read as CoNLL-U
    bounds = fold_bounds(len(treebank), folds)
    wanted = [c for c in COLUMNS if c in set(treebank.filled_columns())]
    n = len(treebank)

    tagged: list[_core.Treebank] = []
    for k, (start, end) in enumerate(bounds, 1):
        rest = treebank.select([*range(start), *range(end, n)])
        tagger = Tagger(templates, epochs=epochs, random_state=random_state, clusters=clusters)
        report: Any = None if on_epoch is None else (lambda row, k=k: on_epoch(k, row))
        try:
            tagger.fit(rest, on_epoch=report)
        except ValueError as e:
            if "UPOS" not in wanted:  # the whole treebank lacks it: as the tagger says
                raise
            # The treebank has tags, the other folds not: say which fold's tagger.
            what = f"the training treebank without fold {k} (sentences {start + 1}-{end})"
            raise ValueError(str(e).replace("the training treebank", what, 1)) from None
        lost = [c for c in wanted if c not in tagger.columns_]
        if lost:
            raise ValueError(
                f"fold {k} (sentences {start + 1}-{end}): the other folds leave "
                f"{', '.join(lost)} empty on most words, so their tagger cannot predict it; "
                "the fold would keep its own tags (use fewer folds)"
            )
        tagged.append(tagger.tag(treebank[start:end], threads))
    return _core.Treebank.concat(tagged)
