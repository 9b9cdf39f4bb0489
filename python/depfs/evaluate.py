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


def as_treebank(source: TreebankLike, multiple_roots: bool = False) -> _core.Treebank:
    """`source` itself if it is a Treebank, else the treebank read from that path."""
    if isinstance(source, _core.Treebank):
        return source
    if isinstance(source, (str, os.PathLike)):
        from .treebank import read_conllu

        return read_conllu(source, multiple_roots=multiple_roots)
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
    # Words whose UPOS, XPOS, FEATS, LEMMA is not `_`, in gold and in the system.
    gold_upos: int = 0
    gold_xpos: int = 0
    gold_feats: int = 0
    gold_lemma: int = 0
    system_upos: int = 0
    system_xpos: int = 0
    system_feats: int = 0
    system_lemma: int = 0

    @property
    def tag_scores(self) -> tuple[str, ...]:
        """The tag scores that apply: UPOS, XPOS, UFeats, Lemmas where gold and the system
        both have the column on some word (gold without it has nothing to score against; a
        system without it did not predict it); AllTags where UPOS, XPOS and UFeats do."""
        out = tuple(
            key
            for key, column in (
                ("upos", "upos"),
                ("xpos", "xpos"),
                ("ufeats", "feats"),
                ("lemmas", "lemma"),
            )
            if getattr(self, "gold_" + column) and getattr(self, "system_" + column)
        )
        if {"upos", "xpos", "ufeats"} <= set(out):
            out = out[:3] + ("alltags",) + out[3:]
        return out

    @property
    def punct_known(self) -> bool:
        """Whether gold has UPOS (on some word): else no word is known to be punctuation,
        and the no-punct scores would equal the others."""
        return self.gold_upos > 0

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

    def as_dict(
        self, digits: int | None = None, tags: bool = False
    ) -> dict[str, float | int | None]:
        """Percentages (rounded to `digits` if given) and word counts; with `tags`, also
        UPOS, XPOS, UFeats, AllTags and Lemmas. The keys are always the same: a score that
        does not apply is None (the no-punct ones when gold has no UPOS, a tag score
        outside :attr:`tag_scores`)."""
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
        na = {"upos", "xpos", "ufeats", "alltags", "lemmas"} - set(self.tag_scores)
        if not self.punct_known:
            na |= {"uas_nopunct", "las_nopunct", "label_acc_nopunct"}
        out: dict[str, float | int | None] = {}
        for k in keys:
            v: float = getattr(self, k)
            out[k] = None if k in na else round(v, digits) if digits is not None else v
        out["words"] = self.words
        out["words_nopunct"] = self.words_nopunct if self.punct_known else None
        return out


def evaluate(
    gold: TreebankLike, system: TreebankLike, full_labels: bool = False, *, tags_only: bool = False
) -> Scores:
    """Scores `system` against `gold` (both on the same words and the same sentences).

    LAS compares the universal part of DEPREL (before ``:``) unless `full_labels`.
    Multiword-token ranges and empty nodes are not scored; punctuation (gold UPOS
    ``PUNCT``) is left out of the ``*_nopunct`` scores. Raises
    `depfs.errors.AlignmentError` naming the first place where the words diverge, and
    ValueError for a gold word without HEAD or DEPREL or a system word without HEAD,
    unless `tags_only`: only the tag columns are scored (the tree scores are 0), as a
    tagger's dev set is, which may have no trees.
    """
    from .base import check_flag

    # (named: the core said "'str' object is not an instance of 'bool'")
    full_labels = check_flag(full_labels, "full_labels")
    tags_only = check_flag(tags_only, "tags_only")
    counts = _core.evaluate_counts(as_treebank(gold), as_treebank(system), full_labels, tags_only)
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
    # Words with HEAD 0, and sentences with more than one (UD has one a sentence).
    roots: int = 0
    multiroot_sentences: int = 0

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
    """Sentences, words, lengths, label counts, non-projectivity, multiword tokens, empty
    nodes, roots (a file is read with several roots a sentence allowed: they are counted)."""
    counts = dict(_core.treebank_stats_counts(as_treebank(treebank, multiple_roots=True)))
    labels = cast("dict[str, int]", counts.pop("labels"))
    return Stats(labels=labels, **cast("dict[str, int]", counts))


__all__ = ["Scores", "Stats", "as_treebank", "evaluate", "stats"]
