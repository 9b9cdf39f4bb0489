"""Greedy left-to-right morphological tagger: UPOS, XPOS, FEATS and LEMMA.

One averaged-perceptron classifier per column over token templates (the ``token``
family: attributes of the words at i±k, the columns already predicted, and ``ambig``,
the tags the tag dictionary allows for a word); FEATS is one class per whole string, as
in UDPipe 1; LEMMA an edit-script class (Chrupała 2008) backed by a dictionary of seen
forms. Columns the training data leaves empty (``_``) are not learnt and are left as
they are when tagging. By default a cheap backward (right-to-left) pass runs first and the
templates read its tags as ``bupos`` (right context; trained on jackknifed tags); it predicts
XPOS where the treebank has XPOS, else UPOS (``backward_xpos=False``: UPOS).
``Tagger(clusters=PATH)`` reads Brown word clusters (a paths file) with ``cluster(i)`` /
``cluster:K(i)`` templates (``CLUSTER_SETS`` by default) and stores the table in the model.
By default, candidate rules widen a known word's XPOS and FEATS candidates beyond the tag
dictionary's (XPOS values that share forms, FEATS values productive with the predicted XPOS)
and keep the lemma back-off's scripts that make a known lemma (``rules=False``: none).

    tagger = Tagger().fit(train, dev=dev)
    tagged = tagger.tag(test)          # a copy with UPOS, XPOS, FEATS, LEMMA predicted
    tagger.save("en.tagger"); tagger = depfs.load("en.tagger")

Dynamic feature selection (Strubell et al. 2015, who test it on such a tagger, their
Table 1; :mod:`depfs.dynamic.strubell2015`): ``Tagger(dynamic=True)`` trains every
prefix of each column's ordered template set (``templates`` may give four, in column
order), so that a decision can stop once one class leads by a margin;
``tag(tb, margin=M)`` chooses M at tagging time: a number, or ``"accurate"`` (the
default) / ``"fast"``, presets chosen on dev.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from . import _core
from .base import (
    HistoryRow,
    Stagewise,
    TrainableModel,
    all_or_nothing,
    as_treebank,
    check_count,
    check_flag,
    check_real,
    check_threads,
    missing_columns,
)
from .templates import Template, model_text, resolve_templates

COLUMNS = ("UPOS", "XPOS", "FEATS", "LEMMA")
# The default templates: one shipped set per column, in COLUMNS order, reading the tags of
# the default backward pass (DEFAULT_BACKWARD, which predicts XPOS where the treebank has it)
# as `bupos`.
DEFAULT_SETS = ("tagger_upos_caps", "tagger_xpos_bx", "tagger_feats_bx", "tagger_lemma")
DEFAULT_BACKWARD = "tagger_backward"
# upos_min_known with a backward pass, unless given.
BACKWARD_UPOS_MIN_KNOWN = 8
# The default before the backward pass (no pass; upos_min_known=2).
PLAIN_SETS = ("tagger_upos", "tagger_xpos", "tagger_feats", "tagger_lemma")
# The default before the case rule and tagger_upos_caps: `Tagger(BIDI_SETS, backward=
# DEFAULT_BACKWARD, cased=False, backward_xpos=False)`.
BIDI_SETS = ("tagger_upos_bi", "tagger_xpos_bi", "tagger_feats_bi", "tagger_lemma")
# The default templates with a word-cluster file (`Tagger(clusters=PATH)`): DEFAULT_SETS with
# two UPOS templates of the word's Brown-cluster path (docs/design.md § Tagger, "Word clusters").
CLUSTER_SETS = ("tagger_upos_clusters", "tagger_xpos_bx", "tagger_feats_bx", "tagger_lemma")
# The defaults before the backward pass predicted XPOS, without and with clusters:
# `Tagger(UPOS_PASS_SETS, backward=DEFAULT_BACKWARD, backward_xpos=False)`.
UPOS_PASS_SETS = ("tagger_upos_caps", "tagger_xpos_bi", "tagger_feats_bi", "tagger_lemma")
UPOS_PASS_CLUSTER_SETS = ("tagger_upos_clusters", *UPOS_PASS_SETS[1:])

# Forms a FEATS value must be seen with to be productive with an XPOS, or two XPOS values to
# share to be siblings (the candidate rules, `Tagger(rules=...)`; en_ewt dev).
RULE_MIN_FORMS = 20

#: The training margin of each kind of prefix step, chosen on en_ewt dev (docs/methods.md,
#: "Dynamic feature selection"): margins are in units of the steps; a perceptron step of
#: template j counts the violating prefixes from j on (up to 50), an AdaGrad step is at most 1.
TAGGER_TRAIN_MARGIN = {"adagrad": 50.0, "perceptron": 2000.0}

#: The full sum's step of prefix-margin training (perceptron steps), chosen on en_ewt dev.
TAGGER_FULL_SUM = 128.0

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
        # Default: the shipped per-column sets (DEFAULT_SETS, with the backward pass
        # DEFAULT_BACKWARD); PLAIN_SETS: the default before the pass; the single `tagger` set
        # serves every column of taggers before them; a dynamic tagger walks `tagger_en_ewt`,
        # the forward wrapper's order of it.
        templates: str | os.PathLike[str] | Sequence[str] | None = None,
        *,
        epochs: int = 10,
        random_state: int = 1,
        # A (form, UPOS) pair seen at least this often is known to the tag dictionary
        # (its XPOS, FEATS and lemma scripts are restricted to those seen); rarer ones
        # train the back-off. On en_ewt dev 8 rather than 2 gains 0.2 of mean accuracy
        # for 20% more time, but loses on test (UPOS -0.41, lemmas -0.54): 2.
        min_known: int = 2,
        # A form seen at least this often takes only the UPOS tags it was seen with;
        # rarer ones weigh every tag. None: 8 with a backward pass (best on en_ewt dev,
        # docs/design.md § Tagger), else min_known.
        upos_min_known: int | None = None,
        # Prefix-margin training (Strubell et al. 2015): the margin every prefix is
        # trained to reach, the unit of tagging-time margins (None: TAGGER_TRAIN_MARGIN
        # of the update); the prefix steps: "adagrad" (AdaGrad with ℓ2 strength `l2` per
        # word, as the paper §4.4) or "perceptron" (averaged perceptron steps, `l2`
        # unused); full_sum: also the full model's update of the sum of all templates on
        # every decision, of this size (0: none). As the parser's; chosen on en_ewt dev.
        dynamic: bool = False,
        train_margin: float | None = None,
        l2: float = 3e-4,
        update: str = "perceptron",
        full_sum: float = TAGGER_FULL_SUM,
        # The stagewise baseline (Strubell et al. §6.1), with dynamic=True: each
        # template in order trained alone for `epochs` epochs, then frozen.
        stagewise: bool = False,
        # Line-local hashing: every class of a feature in one cache line of weights, so a
        # decision reads one line per template (see docs/design.md § Tagger); False: the
        # layout of taggers saved before it (one scattered weight per class and template).
        line_hashing: bool = True,
        # Templates of a backward (right-to-left) UPOS pass run first, whose tags the
        # templates read as `bupos` (docs/design.md § Tagger). None: DEFAULT_BACKWARD
        # with the default templates or any that read `bupos` (not dynamic), else no pass.
        backward: str | os.PathLike[str] | None = None,
        # A form the dictionary knows only lower-cased keeps its case: its UPOS is open, and
        # its lemma is made from the form as written unless the lower-cased entry has the
        # predicted UPOS (docs/design.md § Tagger). None: on, but for dynamic taggers and
        # the layout before line hashing (which cannot have it).
        cased: bool | None = None,
        # A Brown-cluster "paths" file (BITSTRING<TAB>WORD<TAB>COUNT lines, as Liang's
        # wcluster writes) that `cluster(i)` / `cluster:K(i)` templates read; its table is
        # stored in the model. With the default templates it selects CLUSTER_SETS. None: no
        # clusters (the tagger of before, bit for bit).
        clusters: str | os.PathLike[str] | None = None,
        # Candidate rules beyond the tag dictionary (docs/design.md § Tagger, "Candidate
        # rules"): a known (form, UPOS) is also offered the XPOS values that share forms with
        # its own (VB and VBP) and the FEATS values productive with its predicted XPOS (a
        # verb's Number and Person); the lemma back-off keeps the scripts that make a lemma
        # known with the UPOS. None: on, but for dynamic taggers and the layout before line
        # hashing (which cannot have them).
        rules: bool | None = None,
        # The backward pass predicts XPOS rather than UPOS where the treebank has XPOS
        # (`bupos` then reads its XPOS tags; docs/design.md § Tagger, "The backward pass
        # predicting XPOS").
        backward_xpos: bool = True,
    ) -> None:
        self.templates = templates
        self.epochs = epochs
        self.random_state = random_state
        self.min_known = min_known
        self.upos_min_known = upos_min_known
        self.dynamic = dynamic
        self.train_margin = train_margin
        self.l2 = l2
        self.update = update
        self.full_sum = full_sum
        self.stagewise = stagewise
        self.line_hashing = line_hashing
        self.backward = backward
        self.cased = cased
        self.clusters = clusters
        self.rules = rules
        self.backward_xpos = backward_xpos

    def _template_texts(self) -> list[str]:
        t = self.templates
        if t is None:
            t = "tagger_en_ewt" if self.dynamic else self._default_sets()
        # A list of Template objects is one set (a list of 4 was read as a set per column).
        if isinstance(t, (list, tuple)) and not any(isinstance(x, Template) for x in t):
            if len(t) != len(COLUMNS):
                raise ValueError(
                    f"templates: one set for every column, or {len(COLUMNS)} "
                    f"({', '.join(COLUMNS)}); got {len(t)}"
                )
            return [resolve_templates(x, "token") for x in t]
        return [resolve_templates(t, "token")]

    def _default_sets(self) -> tuple[str, ...]:
        return DEFAULT_SETS if self.clusters is None else CLUSTER_SETS

    def _trainer(self, train: Any) -> Any:
        if not isinstance(train, _core.Treebank):
            raise TypeError(f"a tagger trains on a Treebank, got {type(train).__name__}")
        check_count(self.min_known, "min_known", 1)
        if self.upos_min_known is not None:
            check_count(self.upos_min_known, "upos_min_known", 1)
        check_flag(self.stagewise, "stagewise")  # "no" is true
        # (the core read "no" as "'str' object is not an instance of 'bool'", unnamed)
        for name in ("line_hashing", "backward_xpos"):
            check_flag(getattr(self, name), name)
        for name in ("cased", "rules"):  # (None: the default)
            if getattr(self, name) is not None:
                check_flag(getattr(self, name), name)
        for name in ("l2", "full_sum"):
            check_real(getattr(self, name), name)
        if self.train_margin is not None:
            check_real(self.train_margin, "train_margin")
        backward = self._backward_text()
        upos_min_known = self.upos_min_known
        if upos_min_known is None:
            upos_min_known = self.min_known if backward is None else BACKWARD_UPOS_MIN_KNOWN
        check_flag(self.dynamic, "dynamic")  # "no" is true
        margin = self._train_margin()  # (checked when not dynamic too, as the parser's)
        if (self.dynamic or self.train_margin is not None) and not (0 < margin < float("inf")):
            raise ValueError(f"train_margin must be a positive number, got {self.train_margin}")
        if self.stagewise and not self.dynamic:
            raise ValueError("stagewise=True is a prefix-margin baseline: it needs dynamic=True")
        trainer = _core.TaggerTrainer(
            train,
            self._template_texts(),
            seed=self.random_state,
            min_known=self.min_known,
            upos_min_known=upos_min_known,
            prefix_margin=margin if self.dynamic else None,
            prefix_l2=self.l2,
            # The stagewise baseline keeps AdaGrad steps and no full sum (its template
            # alone learns, on the prefix that ends with it).
            prefix_perceptron=self.update == "perceptron" and not self.stagewise,
            prefix_full=0.0 if self.stagewise else float(self.full_sum),
            line_hashing=self.line_hashing,
            backward=backward,
            cased=self._cased(),
            clusters=None if self.clusters is None else os.fspath(self.clusters),
            backward_xpos=self.backward_xpos,
            **self._rule_options(),
        )
        return Stagewise(trainer, self.epochs) if self.stagewise else trainer

    def _train_margin(self) -> float:
        from .dynamic.strubell2015 import training_margin

        return training_margin(self.update, self.train_margin, self.stagewise, TAGGER_TRAIN_MARGIN)

    def _rule_options(self) -> dict[str, Any]:
        r = self.rules
        on = (not self.dynamic and self.line_hashing) if r is None else r
        forms = RULE_MIN_FORMS if on else None
        return {"feats_by_xpos": forms, "known_lemmas": on, "xpos_siblings": forms}

    def _cased(self) -> bool:
        c = self.cased
        return (not self.dynamic and self.line_hashing) if c is None else c

    def _backward_text(self) -> str | None:
        b = self.backward
        if b is None and not self.dynamic:
            # The default sets, or any that read the backward pass's tags: its default.
            if self.templates is None or any("bupos(" in t for t in self._template_texts()):
                b = DEFAULT_BACKWARD
        return None if b is None else resolve_templates(b, "token")

    def _n_epochs(self) -> int:
        if not self.stagewise:
            return self.epochs
        from .templates import TemplateSet

        return self.epochs * max(len(TemplateSet.parse(t, "token")) for t in self._template_texts())

    @staticmethod
    def _params_of(model: _core.TaggerModel) -> dict[str, Any]:
        sets = [model_text(model.templates(c)) for c in model.columns]
        presets = model.margin_presets
        backward = model.backward_templates
        return {
            "cased": model.cased,
            "rules": model.rules,
            "templates": sets[0] if len(set(sets)) == 1 else sets,
            "backward": None if backward is None else model_text(backward),
            "backward_xpos": model.backward_column == "XPOS",
            "dynamic": presets is not None,
            **({"train_margin": presets["train"]} if presets else {}),
        }

    @staticmethod
    def _dev_scores(model: Any, dev: _core.Treebank) -> dict[str, float]:
        """Dev scores of an epoch; a dynamic tagger tags at its training margin."""
        from .evaluate import evaluate

        presets = model.margin_presets
        margin = None if presets is None else presets["train"]
        scores = evaluate(dev, model.tag(dev, 1, margin), tags_only=True)  # (no tree needed)
        row = {
            _DEV_KEYS[c]: getattr(scores, _DEV_KEYS[c][4:]) for c in model.columns if c in _DEV_KEYS
        }
        row["dev_accuracy"] = sum(row.values()) / len(row)
        return row

    @classmethod
    def _dev_label(cls, row: HistoryRow) -> str:
        # The names `depfs eval` and `depfs info` print.
        names = {
            "dev_upos": "UPOS",
            "dev_xpos": "XPOS",
            "dev_ufeats": "UFeats",
            "dev_lemmas": "Lemmas",
        }
        shown = [f"{names[k]} {v:.2f}" for k, v in row.items() if k in names]
        return "tagger dev " + " ".join(shown)

    @all_or_nothing
    def fit(self, train: Any, dev: _core.Treebank | None = None, **kwargs: Any) -> Tagger:
        """As :meth:`TrainableModel.fit`; a dynamic tagger then sweeps margins on ``dev``
        (``margin_curve_``) and keeps the ``accurate`` and ``fast`` presets chosen there
        (without ``dev`` both are the training margin)."""
        train = as_treebank(train, "train", prepared=True)
        dev = None if dev is None else as_treebank(dev, "dev")
        super().fit(train, dev, **kwargs)
        self.margin_curve_: list[dict[str, Any]] = []
        if self.dynamic and dev is not None:
            from .dynamic.strubell2015 import fit_presets

            self.model_, self.margin_curve_ = fit_presets(self.model_, dev)
        return self

    def _check_dev(self, dev: _core.Treebank, train: Any) -> None:
        """A tagger's dev set is scored on the columns it learns (those `train` fills):
        refused when it leaves one of them empty."""
        if not isinstance(train, _core.Treebank):
            return  # refused by the trainer
        filled = set(train.filled_columns())
        missing = missing_columns([c for c in COLUMNS if c in filled], dev)
        if missing:
            raise ValueError(
                f"dev: the dev set leaves {', '.join(missing)} empty ('_' on most words); the "
                "tagger learns them from the training set and is scored on them: give dev "
                "gold tags"
            )

    def _check_dev_columns(self, trainer: Any, dev: _core.Treebank, tagger: Any) -> None:
        """A tagger reads only FORM (its own predictions for the rest)."""

    @property
    def columns_(self) -> list[str]:
        """The columns it predicts (those the training data fills)."""
        return list(self._model().columns)

    @property
    def margin_presets_(self) -> dict[str, float] | None:
        """A dynamic tagger's margins: ``train``, ``accurate``, ``fast`` (None otherwise)."""
        return self._model().margin_presets

    def tag(
        self, treebank: _core.Treebank, threads: int = 1, *, margin: float | str | None = None
    ) -> _core.Treebank:
        """A copy of ``treebank`` with the predicted columns written; other columns are
        untouched (``threads=0``: all cores). ``margin``: the prefix-margin rule (Strubell
        et al. 2015) at a number, ``"accurate"`` or ``"fast"`` (a dynamic tagger's
        presets; ``"accurate"`` is its default), ``float("inf")`` for every template; an
        ordinary tagger uses every template unless given a number."""
        from .dynamic.strubell2015 import resolve_margin, warn_untrained_margin

        model = self._model()
        treebank = as_treebank(treebank, "treebank", to_parse=True)
        threads = check_threads(threads)
        m = resolve_margin(model.margin_presets, margin)
        warn_untrained_margin(m, model.margin_presets, "the tags lose")
        return model.tag(treebank, threads, m)

    def parse(
        self,
        treebank: _core.Treebank,
        threads: int = 1,
        *,
        margin: float | str | None = None,
        allow_missing_tags: bool = False,
        scores: bool = False,
    ) -> _core.Treebank:
        """Same as :meth:`tag` (a tagger in a pipeline where parsers are expected):
        ``allow_missing_tags`` is a parser's (a tagger reads words only); ``scores`` (a
        parser's margins) is refused; any other keyword is a TypeError."""
        check_flag(allow_missing_tags, "allow_missing_tags")
        if check_flag(scores, "scores"):
            raise ValueError("scores=True: margins of heads, a parser's; a tagger tags")
        return self.tag(treebank, threads, margin=margin)
