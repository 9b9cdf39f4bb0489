"""Attachment scores and treebank statistics.

`evaluate` follows the CoNLL 2018 shared-task scorer on gold tokenisation (UAS, LAS
on the universal part of DEPREL); `stats` describes one treebank. Both accept a
`Treebank` or a path to a CoNLL-U file.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Union, cast

from . import _core

TreebankLike = Union[_core.Treebank, str, "os.PathLike[str]"]


def as_treebank(source: TreebankLike) -> _core.Treebank:
    """`source` itself if it is a Treebank, else the treebank read from that path."""
    if isinstance(source, _core.Treebank):
        return source
    if isinstance(source, (str, os.PathLike)):
        from .treebank import read_conllu

        return read_conllu(source)
    raise TypeError(f"expected a Treebank or a path, got {type(source).__name__}")


def _percent(correct: int, total: int) -> float:
    return 100.0 * correct / total if total else 0.0


@dataclass(frozen=True)
class Scores:
    """Correct-word counts of a system against gold; percentages are properties."""

    words: int
    words_nopunct: int
    uas_correct: int
    las_correct: int
    label_correct: int
    uas_correct_nopunct: int
    las_correct_nopunct: int
    label_correct_nopunct: int
    upos_correct: int = 0
    xpos_correct: int = 0
    ufeats_correct: int = 0
    alltags_correct: int = 0
    lemma_correct: int = 0

    # Tagging, as the CoNLL 2018 scorer on gold words: UFeats compares the universal
    # features; a gold lemma `_` counts as right.
    @property
    def upos(self) -> float:
        return _percent(self.upos_correct, self.words)

    @property
    def xpos(self) -> float:
        return _percent(self.xpos_correct, self.words)

    @property
    def ufeats(self) -> float:
        return _percent(self.ufeats_correct, self.words)

    @property
    def alltags(self) -> float:
        return _percent(self.alltags_correct, self.words)

    @property
    def lemmas(self) -> float:
        return _percent(self.lemma_correct, self.words)

    @property
    def uas(self) -> float:
        return _percent(self.uas_correct, self.words)

    @property
    def las(self) -> float:
        return _percent(self.las_correct, self.words)

    @property
    def label_acc(self) -> float:
        return _percent(self.label_correct, self.words)

    @property
    def uas_nopunct(self) -> float:
        return _percent(self.uas_correct_nopunct, self.words_nopunct)

    @property
    def las_nopunct(self) -> float:
        return _percent(self.las_correct_nopunct, self.words_nopunct)

    @property
    def label_acc_nopunct(self) -> float:
        return _percent(self.label_correct_nopunct, self.words_nopunct)

    def as_dict(self, digits: int | None = None, tags: bool = False) -> dict[str, float | int]:
        """Percentages (rounded to `digits` if given) and word counts; with `tags`, also
        UPOS, XPOS, UFeats, AllTags and Lemmas."""
        keys: tuple[str, ...] = (
            "uas",
            "las",
            "uas_nopunct",
            "las_nopunct",
            "label_acc",
            "label_acc_nopunct",
        )
        if tags:
            keys += ("upos", "xpos", "ufeats", "alltags", "lemmas")
        out: dict[str, float | int] = {}
        for k in keys:
            v: float = getattr(self, k)
            out[k] = round(v, digits) if digits is not None else v
        out["words"] = self.words
        out["words_nopunct"] = self.words_nopunct
        return out


def evaluate(gold: TreebankLike, system: TreebankLike, full_labels: bool = False) -> Scores:
    """Scores `system` against `gold` (both on the same words).

    LAS compares the universal part of DEPREL (before ``:``) unless `full_labels`.
    Multiword-token ranges and empty nodes are not scored; punctuation (gold UPOS
    ``PUNCT``) is left out of the ``*_nopunct`` scores. Raises
    `depfs.errors.AlignmentError` naming the first place where the words diverge.
    """
    counts = _core.evaluate_counts(as_treebank(gold), as_treebank(system), full_labels)
    return Scores(**counts)


@dataclass(frozen=True)
class Stats:
    """Descriptive statistics of a treebank (`depfs stats`)."""

    sentences: int
    words: int
    max_length: int
    arcs: int
    nonprojective_sentences: int
    nonprojective_arcs: int
    multiword_tokens: int
    empty_nodes: int
    labels: dict[str, int] = field(default_factory=dict, hash=False)

    @property
    def mean_length(self) -> float:
        return self.words / self.sentences if self.sentences else 0.0

    @property
    def nonprojective_sentence_share(self) -> float:
        return self.nonprojective_sentences / self.sentences if self.sentences else 0.0

    @property
    def nonprojective_arc_share(self) -> float:
        return self.nonprojective_arcs / self.arcs if self.arcs else 0.0

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = asdict(self)
        out["mean_length"] = self.mean_length
        out["nonprojective_sentence_share"] = self.nonprojective_sentence_share
        out["nonprojective_arc_share"] = self.nonprojective_arc_share
        out["labels"] = dict(self.labels)
        return out


def stats(treebank: TreebankLike) -> Stats:
    """Sentences, words, lengths, label counts, non-projectivity, multiword tokens, empty nodes."""
    counts = dict(_core.treebank_stats_counts(as_treebank(treebank)))
    labels = cast("dict[str, int]", counts.pop("labels"))
    return Stats(labels=labels, **cast("dict[str, int]", counts))


__all__ = ["Scores", "Stats", "as_treebank", "evaluate", "stats"]
