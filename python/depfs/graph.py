"""Graph-based dependency parser: first-order (Eisner / CLE) or second-order sibling
(Eisner2) arc scores from feature templates, averaged perceptron training, and a
second-stage labeler. Training and parsing run in Rust with the GIL released.

>>> parser = depfs.GraphParser(order=1, decoder="eisner", epochs=10).fit(train, dev=dev)
>>> parsed = parser.parse(test, threads=1)
>>> parser.save("en.depfs"); parser = depfs.load("en.depfs")
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from . import _core
from .base import (
    F32_MAX,
    HistoryRow,
    SkippedSentencesWarning,
    TrainableModel,
    all_or_nothing,
    as_int,
    as_treebank,
    check_columns,
    check_count,
    check_flag,
    check_number,
    check_real,
    check_threads,
    used_info,
    without_untagged,
)
from .templates import model_text, resolve_templates

if TYPE_CHECKING:  # numpy is imported where it is used: not by a parse
    import numpy as np
    import numpy.typing as npt

__all__ = ["GraphParser", "LongSentenceWarning"]


class LongSentenceWarning(UserWarning):
    """Some sentences were too long to decode exactly and were parsed in chunks."""


def _no_label_dict(model: Any) -> str:
    """Why a DynFS model's labeler has no label dictionary to turn on or off."""
    if model.dynfs_label_stop is None:
        return "this model's labeler has no stop (it scores every template), so no label dictionary"
    return "this model's labeler stop has no label dictionary"


class GraphParser(TrainableModel):
    """First- or second-order graph-based parser with a labeler.

    Templates are shipped set names (``"first_order"``, ``"second_order"``, ``"labeler"``),
    template file paths or template text. ``max_bits`` bounds each template's weight block
    (2**max_bits rows); blocks are sized from a count of the training features. The default
    18 was chosen on en_ewt dev: the same accuracy as 20 (UAS 86.72 vs 86.43, before cost
    augmentation) at half the model size, so parsing reads a smaller table. ``epochs=None``
    trains for ``DEFAULT_EPOCHS[order]``, chosen on en_ewt dev as well (cost-augmented
    training): 10 for first order (UAS 87.53 at 6, 87.69 at 10, 87.71 at 11) and 8 for second
    order (88.58 / 88.54 / 88.60 at 6 / 7 / 8). ``cost_augmented`` decodes training sentences
    with +1 on every non-gold arc (dev UAS 87.69 vs 86.80 without, first order, 10 epochs).
    ``tagger``: a fitted :class:`depfs.Tagger` that tags untagged input first and is saved
    inside the model file (``tagger_``; see :class:`depfs.ArcEagerParser`).

    ``dynfs=True``: dynamic feature selection (He, Daumé & Eisner 2013; see
    :mod:`depfs.dynamic.he2013`). The arc templates are then those of ``groups`` (a
    groups file or shipped set with ``# group k`` lines; default the en_ewt groups,
    ``dynfs_en_ewt``, or with ``order=2`` ``dynfs2_en_ewt``), one group after the other,
    and with ``order=2`` the sibling templates those of its groups after ``# order 2``;
    ``fit`` trains the full model as usual, then the first-order model the rounds score
    with (``prefix_groups``: every group prefix trained as a parser of its own), ``folds``
    fold parsers of both kinds and the lock/add policy by DAgger
    (``dagger_iterations``, default 2 × folds), and picks the policy and threshold with
    the fewest templates computed on ``dev`` within ``dynfs_tolerance`` UAS of the full
    model (``dynfs_result_``); last, the labeler's prefix-margin stop, its margin the one
    computing the fewest labeler templates within ``dynfs_tolerance`` LAS of the full
    labeler on ``dev`` (``depfs.dynamic.he2013.choose_label_stop``), on the full model's
    labeler or on a labeler whose every prefix of the stop's order is trained as a labeler
    of its own (Strubell et al. 2015, Algorithm 2; a model of group 1's arc templates,
    ``depfs.dynamic.he2013.LABEL_PREFIX``), whichever computes fewer templates.
    ``label_prefix`` (labeler template order, the interval the lead is checked at, a
    training margin, a whole-sum step) trains this model's labeler that way: it is how
    that labeler model is fitted (the models of ``dynfs`` are fitted without it). The
    policy sees the meta-features and, with ``policy_lex`` (the default), the acquired
    parsing features of the arc (He et al. §5.4: group 1's hashed features, a lexical weight
    table). The policy and the stop are saved in the model file; :meth:`parse` uses them
    unless ``dynfs=False``. Without ``dynfs`` the DynFS settings (``groups``, ``folds``,
    ``dagger_iterations``, ``dynfs_tolerance``, ``policy_lex``) are kept but not used, as
    scikit-learn's estimators keep a parameter a grid sets for another setting (the CLI
    refuses them without ``--dynfs``).
    """

    DEFAULT_EPOCHS = {1: 10, 2: 8}
    kind = "graph"
    _core_model = _core.GraphModel

    def __init__(
        self,
        order: int = 1,
        decoder: str = "eisner",
        epochs: int | None = None,
        arc_templates: str | os.PathLike[str] = "first_order",
        sibling_templates: str | os.PathLike[str] = "second_order",
        labeler_templates: str | os.PathLike[str] = "labeler",
        max_bits: int = 18,
        min_bits: int = 6,
        prune: bool = True,
        max_atoms: int = 3,
        update: str = "mira",
        mira_c: float = 1.0,
        cost_augmented: bool = True,
        random_state: int = 1,
        tagger: Any = None,
        dynfs: bool = False,
        groups: str | os.PathLike[str] | None = None,
        folds: int = 4,
        dagger_iterations: int | None = None,
        dynfs_tolerance: float = 0.2,
        prefix_groups: Sequence[Sequence[int]] | None = None,
        policy_lex: bool = True,
        label_prefix: tuple[Sequence[int], int, float, float] | None = None,
    ) -> None:
        self.label_prefix = label_prefix
        self.tagger = tagger
        self.policy_lex = policy_lex
        self.dynfs = dynfs
        self.groups = groups
        self.folds = folds
        self.dagger_iterations = dagger_iterations
        self.dynfs_tolerance = dynfs_tolerance
        self.prefix_groups = prefix_groups
        self.order = order
        self.decoder = decoder
        self.epochs = epochs if epochs is not None else self.DEFAULT_EPOCHS.get(order, 10)
        self.arc_templates = arc_templates
        self.sibling_templates = sibling_templates
        self.labeler_templates = labeler_templates
        self.max_bits = max_bits
        self.min_bits = min_bits
        self.prune = prune
        self.max_atoms = max_atoms
        self.update = update
        self.mira_c = mira_c
        self.cost_augmented = cost_augmented
        self.random_state = random_state

    def _trainer(self, train: _core.Treebank | _core.TrainingSet) -> _core.GraphTrainer:
        if not isinstance(train, _core.Treebank):
            raise TypeError(
                "GraphParser trains on a Treebank (TrainingSet is for arc-eager models)"
            )
        if self.order == 2 and self.decoder == "cle":  # (order and decoder: checked in fit)
            raise ValueError(
                "decoder='cle' is first-order only (order 2 decodes with projective Eisner2)"
            )
        for name, low, high in (
            ("max_bits", 6, 30),
            ("min_bits", 6, 30),
            ("max_atoms", 1, 2**32 - 1),  # (above the language's bound: that bound)
        ):
            check_count(getattr(self, name), name, low, high)
        check_real(self.mira_c, "mira_c")  # (its range: checked by the core)
        for name in ("prune", "cost_augmented"):
            check_flag(getattr(self, name), name)
        arc_text, sibling_text = self._arc_text(), self._sibling_text()
        labeler_text = resolve_templates(self.labeler_templates)
        sets = {"arc_templates": arc_text, "labeler_templates": labeler_text}
        if self.order == 2:  # (first order reads no sibling template)
            sets["sibling_templates"] = sibling_text
        for name, text in sets.items():
            if not any(
                line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()
            ):
                raise ValueError(f"{name}: the template set is empty (only comments or blanks)")
        return _core.GraphTrainer(
            train,
            arc_text,
            sibling_text,
            labeler_text,
            order=self.order,
            decoder=self.decoder,
            seed=self.random_state,
            min_bits=self.min_bits,
            max_bits=self.max_bits,
            prune=self.prune,
            max_atoms=self.max_atoms,
            update=self.update,
            mira_c=self.mira_c,
            cost_augmented=self.cost_augmented,
            prefix_groups=None if self.prefix_groups is None else self._prefix_groups(),
            label_prefix=None if self.label_prefix is None else self._label_prefix(),
        )

    def _groups(self) -> str | os.PathLike[str]:
        """The groups file or set of dynfs (the shipped one of the order by default)."""
        from .dynamic.he2013 import DEFAULT_GROUPS, DEFAULT_GROUPS_2

        if self.groups is not None:
            return self.groups
        return DEFAULT_GROUPS_2 if self.order == 2 else DEFAULT_GROUPS

    def _prefix_groups(self) -> list[list[int]]:
        """``prefix_groups`` as lists of arc-template indices, checked: int() read "01" as
        the groups 0 and 1 and [[1.5]] as [[1]] (then "arc template 2 is in no group")."""
        given = self.prefix_groups
        ok = isinstance(given, (list, tuple)) and all(
            isinstance(g, (list, tuple)) and all(_index(i) for i in g) for g in given
        )
        if not ok:
            raise ValueError(f"prefix_groups must be lists of arc-template indices, got {given!r}")
        return [[int(i) for i in g] for g in given]

    def _label_prefix(self) -> tuple[list[int], int, float, float]:
        """``label_prefix`` as (template order, every, margin, full step), checked here
        for its shape and by the core for its values."""
        given = self.label_prefix
        ok = (
            isinstance(given, (list, tuple))
            and len(given) == 4
            and isinstance(given[0], (list, tuple))
            and all(not isinstance(i, bool) and as_int(i) is not None for i in given[0])
            and not isinstance(given[1], bool)
            and as_int(given[1]) is not None
        )
        if not ok:
            raise ValueError(
                "label_prefix must be (labeler template order, every, margin, full step), "
                f"got {given!r}"
            )
        order, every, margin, full = given
        if not all(0 <= int(i) < 2**32 for i in order) or not 1 <= int(every) < 2**32:
            raise ValueError(
                "label_prefix: template indices >= 0 and every >= 1, "
                f"got {list(order)!r}, {every!r}"
            )
        check_real(margin, "label_prefix margin")
        check_real(full, "label_prefix full step")
        return [int(i) for i in order], int(every), float(margin), float(full)

    def _check_order_and_decoder(self) -> None:
        if isinstance(self.order, bool) or as_int(self.order) not in (1, 2):
            raise ValueError(f"order must be 1 or 2, got {self.order!r}")
        if self.decoder not in ("eisner", "cle"):
            raise ValueError(f"decoder must be 'eisner' or 'cle', got {self.decoder!r}")

    def _arc_text(self) -> str:
        """The arc templates: with dynfs, the groups' one after the other."""
        if not self.dynfs:
            return resolve_templates(self.arc_templates)
        from .dynamic.he2013 import arc_set_of, load_groups

        return arc_set_of(load_groups(self._groups()))[0]

    def _sibling_text(self) -> str:
        """The sibling templates: with dynfs (order 2), the sibling groups' in order."""
        if not (self.dynfs and self.order == 2):
            return resolve_templates(self.sibling_templates)
        from .dynamic.he2013 import arc_set_of, load_sibling_groups

        return arc_set_of(load_sibling_groups(self._groups()))[0]

    def _dynfs_groups(self) -> tuple[list[list[int]], list[list[int]]]:
        """The first-order groups (arc template indices) and the sibling groups (indices
        after the arc templates; empty in first order) of the policy spec."""
        from .dynamic.he2013 import (
            arc_set_of,
            has_sibling_groups,
            load_groups,
            load_sibling_groups,
            sibling_set_of,
        )

        first = load_groups(self._groups())
        index = arc_set_of(first)[1]
        if self.order != 2 and len(first) < 2:
            raise ValueError(
                f"groups {self._groups()!s}: one group: first-order DynFS needs at least two "
                "(the policy decides whether to add the next; with one, every template is "
                "computed on every arc: train without dynfs)"
            )
        if self.order != 2:
            if has_sibling_groups(self._groups()):  # they would be left out unsaid
                raise ValueError(
                    f"groups {self._groups()!s}: its groups after '# order 2' are sibling "
                    "templates, read by order=2 only (a first-order model: a groups file "
                    "without them, such as dynfs_en_ewt)"
                )
            return index, []
        n_arc = sum(len(g) for g in first)
        return index, sibling_set_of(load_sibling_groups(self._groups()), n_arc)[1]

    def _fitted(self, trainer: _core.GraphTrainer) -> None:
        self.skipped_sentences_ = trainer.skipped_sentences

    def _used(self, train: _core.Treebank, trainer: _core.GraphTrainer) -> dict[str, Any]:
        """The sentences trained on: a complete tree of at most GRAPH_MAX_EXACT_WORDS
        words (a longer one's decode is cubic: minutes and gigabytes an epoch)."""
        bound = _core.GRAPH_MAX_EXACT_WORDS

        def why(s: int) -> str:
            if len(train[s]) > bound:
                return f"longer than {bound} words"
            heads = train[s].heads
            return "several roots" if sum(h == 0 for h in heads) > 1 else "no complete tree"

        return used_info(train, trainer.used_sentences, why=why)

    @all_or_nothing
    def fit(  # type: ignore[override]
        self,
        train: _core.Treebank | _core.TrainingSet,
        dev: _core.Treebank | None = None,
        *,
        keep: str = "best",
        progress: bool = False,
        on_epoch: Callable[[HistoryRow], None] | None = None,
        report: Callable[[str], None] | None = None,
        threads: int = 1,
    ) -> GraphParser:
        """:meth:`TrainableModel.fit`; with ``dynfs``, then the policy by DAgger (needs
        ``dev``; ``report`` sees a line per step, ``threads`` parse the folds and dev)."""
        train = as_treebank(train, "train", prepared=True)
        if isinstance(train, _core.Treebank):  # (DynFS's folds are cut from it too)
            train = without_untagged(train)
        dev = None if dev is None else as_treebank(dev, "dev")
        check_flag(self.dynfs, "dynfs")  # "no" is true
        self._check_order_and_decoder()
        threads = check_threads(threads)  # (read by DynFS, after the full model's training)
        if self.dynfs and self.decoder == "cle":
            raise ValueError(
                "dynfs=True, decoder='cle': DynFS ends with a projective Eisner round (He et "
                "al. 2013, §4.2), so its full model is the projective one: leave out decoder"
            )
        if self.groups is not None and not isinstance(self.groups, (str, os.PathLike)):
            raise TypeError(f"groups must be a groups file or set name, got {self.groups!r}")
        if self.dynfs:
            # Checked before hours of training, not where DynFS reads them.
            check_number(self.dynfs_tolerance, "dynfs_tolerance")
            check_flag(self.policy_lex, "policy_lex")
            check_count(self.folds, "folds", 2)
            if self.dagger_iterations is not None:
                check_count(self.dagger_iterations, "dagger_iterations", 1)
            if dev is None:
                raise ValueError("dynfs: the policy and its threshold are chosen on dev: give dev")
            self._dynfs_groups()  # a bad groups file fails before training
        super().fit(train, dev, keep=keep, progress=progress, on_epoch=on_epoch)
        if self.dynfs:
            assert dev is not None and isinstance(train, _core.Treebank)
            with warnings.catch_warnings():  # the fit above said what the folds skip
                warnings.simplefilter("ignore", SkippedSentencesWarning)
                self._fit_dynfs(train, dev, report, threads)
        return self

    def _fit_dynfs(
        self,
        train: _core.Treebank,
        dev: _core.Treebank,
        report: Callable[[str], None] | None,
        threads: int,
    ) -> None:
        """The prefix-trained model of the rounds, fold parsers and the policy. Second
        order: the rounds' model is first-order; a fold parser is a second-order model
        with a rounds' model of its own, both trained on the other folds."""
        from .dynamic.he2013 import (
            LABEL_PREFIX,
            arc_set_of,
            choose_label_stop,
            choose_pruning,
            fewer_rounds,
            label_order,
            load_groups,
            train_policy,
        )

        say = report or (lambda _msg: None)
        groups, sib_groups = self._dynfs_groups()
        if self.tagger_ is not None:
            dev = self.tagger_.tag(dev, threads)
        params = {k: getattr(self, k) for k in self._init_names()}
        params.update(
            dynfs=False,
            tagger=None,
            label_prefix=None,  # (the rounds' and fold parsers' labelers are never read)
            arc_templates=self._arc_text(),
            sibling_templates=self._sibling_text(),
        )

        def prefix_parser(tb: _core.Treebank, dev: _core.Treebank | None = None) -> Any:
            first = {**params, "prefix_groups": groups}
            if sib_groups:  # the rounds of a second-order model: first order, Eisner last
                first.update(order=1, decoder="eisner")
            return GraphParser(**first).fit(tb, dev)._model()

        def fold_parser(tb: _core.Treebank) -> Any:
            rounds = prefix_parser(tb)
            if not sib_groups:
                return rounds
            full = GraphParser(**params).fit(tb)._model()
            zeros = [0.0] * _core.dynfs_n_features(len(all_groups))
            return full.with_dynfs(all_groups, zeros, 0.0, rounds)

        say(f"prefix-trained model of the rounds on {len(train)} sentences")
        rounds = prefix_parser(train, dev)
        # The stop's other candidate: a labeler whose every prefix of the stop's order is
        # trained, in a model of its own (its epoch kept by its dev LAS; trained inside the
        # rounds' model, it moved that model's kept epoch, hence the policy) whose arcs are
        # group 1's alone, since only its labeler is used (trained on gold arcs, whatever
        # the arc templates).
        labeler = None
        if LABEL_PREFIX is not None:
            order, _, every = label_order(self.model_, train)
            say(f"prefix-trained labeler of the stop on {len(train)} sentences")
            labeler = (
                GraphParser(
                    **{
                        **params,
                        "order": 1,
                        "decoder": "eisner",
                        "arc_templates": arc_set_of(load_groups(self._groups())[:1])[0],
                        "prefix_groups": None,
                        "label_prefix": (order, every, *LABEL_PREFIX),
                    }
                )
                .fit(train, dev)
                ._model()
            )
        all_groups = groups + sib_groups
        self.dynfs_result_ = train_policy(
            rounds,
            train,
            dev,
            all_groups,
            fold_parser,
            reference=self.model_,
            folds=self.folds,
            iterations=self.dagger_iterations,
            tolerance=self.dynfs_tolerance,
            threads=threads,
            report=report,
            lex=self.policy_lex,
        )
        r = self.dynfs_result_
        started = time.monotonic()
        # The lexical weights (if any) stay as they are through the choices below.
        self.model_ = self.model_.with_dynfs(all_groups, r.weights, r.threshold, rounds, lex=r.lex)
        self.model_, r.groups_kept, uas, cost = fewer_rounds(
            self.model_, dev, threads=threads, report=report
        )
        if uas is not None and cost is not None:
            r.dev_uas, r.dev_cost = uas, cost
        # Either order: the margin prunes in the first-order rounds (of a second-order
        # model too, before its sibling rounds).
        self.model_, r.prune_margin, r.tree_margin, r.dev_uas, r.dev_cost = choose_pruning(
            self.model_,
            dev,
            r.full_dev_uas,
            tolerance=self.dynfs_tolerance,
            threads=threads,
            report=report,
        )
        r.threshold = self.model_.dynfs[2]
        self.model_, r.label_margin, r.label_dev_las, r.label_cost = choose_label_stop(
            self.model_,
            train,
            dev,
            tolerance=self.dynfs_tolerance,
            threads=threads,
            report=report,
            prefix_labeler=labeler,
        )
        r.label_dict = self.model_.dynfs_label_dict is not None
        r.label_prefix_trained = bool(self.model_.dynfs_label_prefix_trained)
        r.choice_seconds = time.monotonic() - started

    @classmethod
    def _init_names(cls) -> list[str]:
        import inspect

        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    def training_info(self) -> dict[str, Any]:
        info = super().training_info()
        if info and hasattr(self, "dynfs_result_"):
            info["dynfs"] = self.dynfs_result_.as_dict()
        return info

    @staticmethod
    def _params_of(model: _core.GraphModel) -> dict[str, Any]:
        return {
            "order": model.order,
            "decoder": model.decoder,
            "dynfs": model.dynfs is not None,
            "arc_templates": model_text(model.arc_templates),
            "sibling_templates": model_text(model.sibling_templates),
            "labeler_templates": model_text(model.labeler_templates),
        }

    def parse(
        self,
        treebank: _core.Treebank,
        threads: int = 1,
        *,
        allow_missing_tags: bool = False,
        scores: bool = False,
        tag: bool | None = None,
        dynfs: bool | None = None,
        threshold: float | None = None,
        prune_margin: float | None = None,
        label_margin: float | None = None,
        label_dict: bool | None = None,
        tree_margin: float | None = None,
    ) -> _core.Treebank:
        """A copy of ``treebank`` with HEAD and DEPREL predicted (``threads=0``: all cores).

        A model trained with ``dynfs`` parses with its policy (``dynfs_stats_`` then says
        what it computed) unless ``dynfs=False`` (the full model); ``threshold`` moves the
        lock/add boundary (higher: fewer locks, slower, more accurate; default the one
        chosen on dev); ``prune_margin`` the margin pruning of added words (lower: faster,
        less accurate; ``inf``: none; default the model's, chosen on dev); ``tree_margin``
        the tree-margin pruning after round 1 (arcs whose best tree is more than this below
        the best tree are ruled out; lower: faster, less accurate; ``inf``: none; default
        the model's, chosen on dev); ``label_margin`` the labeler's prefix-margin stop
        (lower: fewer labeler templates, faster, fewer right labels; ``inf``: the full
        labeler; default the model's);
        ``label_dict=False`` scores every label even where the stop's label dictionary
        (chosen on dev) allows fewer. Sentences
        longer than ``_core.GRAPH_MAX_EXACT_WORDS`` words are parsed in chunks of
        ``_core.GRAPH_CHUNK_WORDS`` (second order: ``GRAPH_CHUNK_WORDS_2``) words joined
        into one tree (exact decoding is cubic), with a
        :class:`LongSentenceWarning`. Untagged input: see
        :meth:`TrainableModel.parse`."""
        treebank = as_treebank(treebank, "treebank", to_parse=True)
        check_flag(allow_missing_tags, "allow_missing_tags")
        check_flag(scores, "scores")
        long = sum(1 for s in treebank if len(s) > _core.GRAPH_MAX_EXACT_WORDS)
        if long:
            order = self._model().order
            chunk = _core.GRAPH_CHUNK_WORDS_2 if order == 2 else _core.GRAPH_CHUNK_WORDS
            warnings.warn(
                f"{long} sentence(s) longer than {_core.GRAPH_MAX_EXACT_WORDS} words parsed in "
                f"chunks of {chunk} words (exact decoding is cubic)",
                LongSentenceWarning,
                stacklevel=2,
            )
        model = self._model()
        threads = check_threads(threads)
        use = model.dynfs is not None if dynfs is None else check_flag(dynfs, "dynfs")
        if label_dict is not None:
            check_flag(label_dict, "label_dict")
        if use and model.dynfs is None:
            raise ValueError("dynfs=True: this model has no dynamic feature selection")
        if not use:
            knobs = (threshold, prune_margin, tree_margin, label_margin, label_dict)
            if any(k is not None for k in knobs):
                raise ValueError(
                    "threshold, prune_margin, tree_margin, label_margin, label_dict: a "
                    "dynamic feature selection model's knobs"
                )
            return super().parse(
                treebank, threads, allow_missing_tags=allow_missing_tags, scores=scores, tag=tag
            )
        if scores:
            raise ValueError(
                "scores=True: margins come from the full model (parse(..., dynfs=False))"
            )
        if threshold is not None:
            threshold = check_number(threshold, "threshold", low=-F32_MAX, high=F32_MAX)
        treebank, tagger = self._tag_first(treebank, threads, tag)
        check_columns(model, treebank, allow_missing_tags, tagger)
        if prune_margin is not None:
            prune_margin = check_number(prune_margin, "prune_margin", finite=False)  # inf: none
        if tree_margin is not None:
            tree_margin = check_number(tree_margin, "tree_margin", finite=False)  # inf: none
        if label_margin is not None:
            label_margin = check_number(label_margin, "label_margin", finite=False)
        if label_dict is not None and model.dynfs_label_dict is None:
            raise ValueError(f"label_dict={label_dict}: {_no_label_dict(model)}")
        parsed, self.dynfs_stats_, _, _ = model.run_dynfs(
            treebank,
            threshold=threshold,
            threads=threads,
            prune_margin=prune_margin,
            tree_margin=tree_margin,
            label_margin=label_margin,
            label_dict=[] if label_dict is False else None,
        )
        return parsed

    def arc_scores(
        self,
        treebank: _core.Treebank,
        sentences: Sequence[int],
        templates: Sequence[int] | None = None,
        prune: bool = False,
    ) -> list[npt.NDArray[np.float64]]:
        """Score matrices ``[dep, head]`` restricted to the given arc template indices."""
        return self._model().arc_scores(
            treebank,
            _indices(sentences, "sentences"),
            None if templates is None else _indices(templates, "templates"),
            check_flag(prune, "prune"),
        )

    def group_scores(
        self,
        treebank: _core.Treebank,
        sentences: Sequence[int],
        groups: Sequence[Sequence[int]],
        prune: bool = False,
    ) -> list[npt.NDArray[np.float64]]:
        """Per-group partial scores, one (G, n+1, n+1) array per sentence."""
        return self._model().group_scores(
            treebank,
            _indices(sentences, "sentences"),
            [_indices(g, "groups") for g in groups],
            check_flag(prune, "prune"),
        )

    def length_dict_stats(self, treebank: _core.Treebank) -> dict[str, float]:
        """Gold / non-gold arcs the length dictionary prunes on ``treebank``."""
        return self._model().length_dict_stats(treebank)


def _indices(values: Sequence[int], name: str) -> list[int]:
    """A list of indices (integers >= 0), checked: a ValueError naming `name`, not the
    core's "can't convert negative int to unsigned". O(len)."""
    return [check_count(v, f"{name}[{i}]") for i, v in enumerate(values)]


def _index(value: object) -> bool:
    """Whether `value` is an index: an integer >= 0 (numpy's too), not a bool."""
    n = as_int(value)
    return n is not None and n >= 0
