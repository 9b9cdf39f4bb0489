"""Greedy arc-eager parser (Nivre 2003) with configuration templates.

Trained by an averaged perceptron with the dynamic oracle of Goldberg & Nivre (2012)
(exploration of error states), seeded and deterministic; non-projective treebanks are
handled by pseudo-projective parsing (Nivre & Nilsson 2005, HEAD encoding).

    parser = ArcEagerParser(templates="arc_eager", epochs=17).fit(train, dev=dev)
    parsed = parser.parse(test, threads=1)
    parser.save("en.depfs"); parser = depfs.load("en.depfs")

A parser can carry the tagger that tags its input (the tag-then-parse pipeline):
``ArcEagerParser(tagger=depfs.Tagger().fit(train)).fit(jackknifed_train)`` (the tagger is
used as given, not trained; train the parser on jackknifed tags, :func:`depfs.jackknife`),
or ``parser.tagger_ = tagger`` on a fitted or loaded parser. ``save`` stores the tagger
inside the model file and ``depfs.load`` gives it back as ``tagger_``; ``parse`` then
tags input that leaves the parser's tag columns empty first (``tag=True``: always).

Dynamic feature selection (Strubell et al. 2015; :mod:`depfs.dynamic.strubell2015`):
``ArcEagerParser(dynamic=True)`` trains every prefix of an ordered template set (by
default ``arc_eager_en_ewt``, the forward wrapper's order on en_ewt) so that a decision
can stop once one move (or label) leads by a margin; ``parse(tb, margin=M)`` chooses M
at parse time: a number, or ``"accurate"`` (the default) / ``"fast"``, presets chosen on
the dev set given to ``fit``. ``ArcEagerParser(dynamic=True, cascade=True)`` trains a
cascade instead: an ordinary model of the first 15 templates, then one of the first 40
(``cascade=(30,)``: of the first 30 alone) settle the decisions where their best move (or
label) leads by the margin, the full model, trained the ordinary way, decides the rest
(Algorithm 1 with a full-model fallback; at an infinite margin the full model's parse). A
cascade's default order is ``arc_eager_en_ewt_full15``, whose first 15 templates were
ranked at full training settings (CASCADE_TEMPLATES).

Training many models on one treebank (the selection methods train hundreds): prepare it
once, `prepared = TrainingSet(train)` (projectivised, label set, gold trees; vocabulary
hashes and block sizes cached as models ask), then `fit(prepared)` for each model.

What the selection methods need (all loops in Rust):

- `trajectories(treebank, beta, random_state)`: the decisions reached by following the
  oracle with probability `beta` and the model otherwise, stored as replayable move
  histories (`Trajectories`: `sentence`, `followed`, `model_move` (n,), `valid` and
  `zero_cost` (n, 4) of the dynamic oracle) — DAgger. `Trajectories.features(templates)`
  replays the moves and gives the features (n, T) of ANY configuration template set on
  demand; features are never stored.
- `template_scores(features)`: per-template move scores (n, T, 4); a cumulative sum
  over an ordering of the templates gives prefix scores (Strubell et al. 2015).
- `train_local(trajectories, templates, sample_weight)`: a local move and label
  classifier over its own templates, trained on weighted decisions; it keeps its
  weights (`predict`), and `Ensemble([(alpha, clf), ...])` is their weighted vote, which
  parses and is saved like a parser (SAMME, Bawden & Crabbé 2016).

Transition system alone (no model): `projectivize` / `deprojectivize` (HEAD encoding,
a lifted word's label becomes `r↑h`) and `oracle_trajectories(treebank, beta, random_state)`
(oracle with probability `beta`, else a random valid move; costs of every move kind).

Move kinds are numbered 0 SHIFT, 1 REDUCE, 2 LEFT-ARC, 3 RIGHT-ARC (`MOVES`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core
from .base import (
    F32_MAX,
    UNTAGGED_WHY,
    Stagewise,
    TrainableModel,
    all_or_nothing,
    as_int,
    as_treebank,
    check_columns,
    check_count,
    check_flag,
    check_real,
    check_seed,
    check_threads,
    from_model_file_bytes,
    model_file_bytes,
    used_info,
)
from .templates import model_text, resolve_templates

if TYPE_CHECKING:  # numpy is imported where it is used: not by a parse
    import numpy as np
    import numpy.typing as npt

TrainingSet = _core.TrainingSet

MOVES = ("SHIFT", "REDUCE", "LEFT-ARC", "RIGHT-ARC")

#: ℓ2 strength of prefix-margin training with AdaGrad steps, chosen on en_ewt dev
#: (docs/methods.md, prefix-margin training).
ARC_EAGER_L2 = 3e-4

#: The training margin of each kind of prefix step, chosen on en_ewt dev (docs/methods.md,
#: "Dynamic feature selection"): margins are in units of the steps, and a perceptron step
#: of template j counts the violating prefixes from j on (up to 104), where an AdaGrad
#: step is at most 1.
TRAIN_MARGIN = {"adagrad": 50.0, "perceptron": 6000.0}

#: The full sum's step of prefix-margin training (perceptron steps), chosen on en_ewt dev.
ARC_EAGER_FULL_SUM = 128.0

#: The stages of a cascade (``cascade=True``) on its default order CASCADE_TEMPLATES:
#: chosen on en_ewt dev and test (docs/methods.md, "The cascade on a full-settings order":
#: as fast as the other stage lists at `accurate`, the most accurate at `fast`).
CASCADE_STAGES = (15, 40)

#: A cascade's default order: arc_eager_en_ewt with its first 15 templates ranked again at
#: full training settings (a stage is an ordinary model of the order's first k templates,
#: so the order's head is what a stage is; docs/methods.md, "The cascade on a
#: full-settings order").
CASCADE_TEMPLATES = "arc_eager_en_ewt_full15"

#: The stages' weight-table bits (move, label blocks; the full model's are 20 and 15):
#: chosen on en_ewt dev (docs/methods.md, "A cascade with a full-model fallback"): the
#: stage of 30 in 6.6 MB instead of 27.5, 1.82x against 1.71x at `accurate`, LAS alike.
CASCADE_BITS = (16, 12)

#: The default templates with a word-cluster file (``ArcEagerParser(clusters=PATH)``): the
#: ``arc_eager`` set with Brown-cluster templates (docs/design.md, "Word clusters in the
#: parser").
CLUSTER_TEMPLATES = "arc_eager_clusters"

#: A cascade's nominal margin, the unit of its dev sweep: a stage's margin is in the units
#: of its averaged perceptron weights (en_ewt dev: the full model's LAS at m = 12 for stage 30).
CASCADE_MARGIN = 10.0


class ArcEagerParser(TrainableModel):
    """Greedy arc-eager parser (sklearn style: `fit` returns self, learned attributes end in _)."""

    kind = "arc-eager"
    _core_model = _core.ArcEagerModel

    def __init__(
        self,
        templates: Any = None,
        *,
        # Chosen on en_ewt dev: UAS rises to 88.93 at 17 epochs, then falls (88.87 at 20).
        epochs: int = 17,
        random_state: int = 1,
        explore_from: int = 1,
        explore_p: float = 0.9,
        pseudo_projective: bool = True,
        # Lifted labels r↑h seen fewer times in training become plain r: fewer label
        # columns, a faster parser; chosen on en_ewt dev (docs/design.md, lifted labels).
        min_lifted_label_count: int = 20,
        # Prefix-margin training (Strubell et al. 2015): the margin every prefix is
        # trained to reach, the unit of parse-time margins (None: TRAIN_MARGIN of the
        # update, chosen on en_ewt dev); the prefix steps: "perceptron" (averaged
        # perceptron steps) or "adagrad" (AdaGrad with ℓ2 strength `l2` per decision,
        # as the paper §4.4); full_sum: also the full model's update of the sum of all
        # templates on every decision, of this size (0: none). The defaults were
        # chosen on en_ewt dev.
        dynamic: bool = False,
        train_margin: float | None = None,
        l2: float = ARC_EAGER_L2,
        update: str = "perceptron",
        full_sum: float = ARC_EAGER_FULL_SUM,
        # The stagewise baseline (Strubell et al. §6.1), with dynamic=True: each
        # template in order trained alone for `epochs` epochs, then frozen.
        stagewise: bool = False,
        # With dynamic=True, a cascade instead of prefix training: ordinary models of the
        # first k1 < k2 < ... templates of the order, each settling the decisions it leads
        # by the margin, then the full model (True: CASCADE_STAGES; None or False: none).
        cascade: bool | Sequence[int] | None = None,
        # The cascade stages' weight tables: at most 2^move_bits rows per move block and
        # 2^label_bits per label block (None: CASCADE_BITS), smaller than the full
        # model's (20, 15) so that more of a stage's rows stay in cache.
        cascade_bits: tuple[int, int] | None = None,
        # A fitted depfs.Tagger that tags untagged input first and is saved inside the
        # model file (``tagger_``); it is used as it is, not trained by ``fit``.
        tagger: Any = None,
        # A Brown-cluster paths file (BITSTRING<TAB>WORD<TAB>COUNT per line) that the
        # templates' cluster(NODE) / cluster:K(NODE) attributes read; the table is saved
        # inside the model file. With a file and no `templates`: CLUSTER_TEMPLATES. A
        # prepared TrainingSet carries its own table (TrainingSet(train, clusters=PATH)).
        clusters: str | os.PathLike[str] | None = None,
    ) -> None:
        self.tagger = tagger
        self.clusters = clusters
        self.templates = templates
        self.dynamic = dynamic
        self.train_margin = train_margin
        self.l2 = l2
        self.update = update
        self.full_sum = full_sum
        self.stagewise = stagewise
        self.cascade = cascade
        self.cascade_bits = cascade_bits
        self.epochs = epochs
        self.random_state = random_state
        self.explore_from = explore_from
        self.explore_p = explore_p
        self.pseudo_projective = pseudo_projective
        self.min_lifted_label_count = min_lifted_label_count

    def _template_text(self) -> str:
        default = "arc_eager_en_ewt" if self.dynamic else "arc_eager"
        if self.dynamic and self.cascade is not None and self.cascade is not False:
            default = CASCADE_TEMPLATES
        if self.clusters is not None and not self.dynamic:
            default = CLUSTER_TEMPLATES
        return resolve_templates(default if self.templates is None else self.templates, "config")

    def _stages(self) -> tuple[int, ...]:
        """The cascade's stages (empty: no cascade), checked against the template set."""
        if self.cascade is None or self.cascade is False:
            return ()
        if self.cascade is not True and not isinstance(self.cascade, (list, tuple)):
            raise ValueError(f"cascade must be True or template counts, got {self.cascade!r}")
        given = CASCADE_STAGES if self.cascade is True else tuple(self.cascade)
        # numpy integers too; a non-integer (None from as_int) is dropped, so the lengths differ
        stages = tuple(k for k in map(as_int, given) if k is not None)
        if not self.dynamic or self.stagewise:
            raise ValueError(
                "cascade is a kind of dynamic model: it needs dynamic=True, stagewise=False"
            )
        from .templates import TemplateSet

        n = len(TemplateSet.parse(self._template_text(), "config"))
        if n < 2:
            raise ValueError(
                f"cascade: a stage has fewer templates than the full model, and this set has {n}"
            )
        if (
            not stages
            or len(stages) != len(given)
            or list(stages) != sorted(set(stages))
            or stages[0] < 1
            or stages[-1] >= n
        ):
            raise ValueError(
                f"cascade must be increasing template counts between 1 and {n - 1}, "
                f"got {self.cascade!r}"
            )
        return stages

    def _cascade_bits(self) -> tuple[int, int]:
        """The stages' (move, label) table bits, checked."""
        if self.cascade_bits is None:
            return CASCADE_BITS
        given = self.cascade_bits if isinstance(self.cascade_bits, (list, tuple)) else ()
        bits = tuple(b for b in map(as_int, given) if b is not None)
        if len(given) != 2 or len(bits) != 2 or not all(6 <= b <= 26 for b in bits):
            raise ValueError(
                "cascade_bits must be (move_bits, label_bits), each 6..26, "
                f"got {self.cascade_bits!r}"
            )
        return (bits[0], bits[1])

    def _core_trainer(
        self,
        train: _core.Treebank | TrainingSet,
        text: str,
        dynamic: bool,
        bits: tuple[int, int] | None = None,
    ) -> Any:
        move_bits, label_bits = (20, 15) if bits is None else bits
        # (the ranges of explore_p, l2 and full_sum are checked by the core, with their names)
        check_count(self.explore_from, "explore_from")
        check_flag(self.pseudo_projective, "pseudo_projective")
        for name in ("explore_p", "l2", "full_sum"):
            check_real(getattr(self, name), name)
        check_count(self.min_lifted_label_count, "min_lifted_label_count")
        # A cascade stage (bits given) that reads no clusters trains without the table; a
        # prepared TrainingSet carries its own (the trainer refuses another).
        clusters = None
        if self.clusters is not None and (
            bits is None or isinstance(train, TrainingSet) or _reads_clusters(text)
        ):
            clusters = os.fspath(self.clusters)
        return _core.ArcEagerTrainer(
            train,
            text,
            seed=self.random_state,
            explore_from=self.explore_from,
            explore_p=self.explore_p,
            pseudo_projective=self.pseudo_projective,
            min_lifted_label_count=self.min_lifted_label_count,
            prefix_margin=self._train_margin() if dynamic else None,
            prefix_l2=self.l2,
            # The stagewise baseline keeps AdaGrad steps and no full sum (its template
            # alone learns, on the prefix that ends with it).
            prefix_perceptron=self.update == "perceptron" and not self.stagewise,
            prefix_full=0.0 if self.stagewise else float(self.full_sum),
            max_bits=move_bits,
            label_max_bits=label_bits,
            clusters=clusters,
        )

    def _trainer(self, train: _core.Treebank | TrainingSet) -> Any:
        check_flag(self.stagewise, "stagewise")  # "no" is true
        if self.stagewise and not self.dynamic:
            raise ValueError("stagewise=True is a prefix-margin baseline: it needs dynamic=True")
        stages = self._stages()
        if stages:
            from .templates import TemplateSet

            order = TemplateSet.parse(self._template_text(), "config")
            return _Cascade(
                self._core_trainer(train, order.text, False),
                [
                    self._core_trainer(train, order[:k].text, False, self._cascade_bits())
                    for k in stages
                ],
            )
        text = self._template_text()
        if (
            self.templates is None
            and not self.dynamic
            and isinstance(train, TrainingSet)
            and train.clusters is not None
        ):  # a set with a table: the default that reads it, as clusters= gives
            text = resolve_templates(CLUSTER_TEMPLATES)
        trainer = self._core_trainer(train, text, self.dynamic)
        return Stagewise(trainer, self.epochs) if self.stagewise else trainer

    def _train_margin(self) -> float:
        from .dynamic.strubell2015 import training_margin

        return training_margin(self.update, self.train_margin, self.stagewise, TRAIN_MARGIN)

    def _n_epochs(self) -> int:
        if not self.stagewise:
            return self.epochs
        from .templates import TemplateSet

        return self.epochs * len(TemplateSet.parse(self._template_text(), "config"))

    @staticmethod
    def _params_of(model: _core.ArcEagerModel) -> dict[str, Any]:
        presets = model.margin_presets
        cascade = model.cascade
        return {
            "templates": model_text(model.templates),
            "pseudo_projective": model.pseudo_projective,
            "dynamic": presets is not None,
            **({"train_margin": presets["train"]} if presets and cascade is None else {}),
            **({"cascade": tuple(cascade)} if cascade is not None else {}),
        }

    @staticmethod
    def _dev_scores(model: Any, dev: _core.Treebank) -> dict[str, float]:
        """Dev scores of an epoch; a dynamic model parses at its training margin, a
        cascade with its full model (the stages are kept at the full model's best epoch)."""
        from .evaluate import evaluate

        presets = model.margin_presets
        margin = None if presets is None or model.cascade is not None else presets["train"]
        scores = evaluate(dev, model.parse(dev, 1, False, margin))
        return {"dev_uas": scores.uas, "dev_las": scores.las}

    @all_or_nothing
    def fit(
        self,
        train: _core.Treebank | TrainingSet,
        dev: _core.Treebank | None = None,
        **kwargs: Any,
    ) -> ArcEagerParser:
        """As :meth:`TrainableModel.fit`; a dynamic model then sweeps margins on ``dev``
        (``margin_curve_``) and keeps the ``accurate`` and ``fast`` presets chosen there
        (without ``dev`` both are the training margin)."""
        train = as_treebank(train, "train", prepared=True)
        dev = None if dev is None else as_treebank(dev, "dev")
        check_flag(self.dynamic, "dynamic")  # "no" is true
        # Checked also when not used (dynamic=False): a NaN or a misspelt update is a
        # mistake whatever the model, and would be stored in its training information.
        if self.train_margin is not None:
            check_real(self.train_margin, "train_margin")
        margin = self._train_margin()
        if (self.dynamic or self.train_margin is not None) and not (0 < margin <= F32_MAX):
            raise ValueError(
                f"train_margin must be a positive number up to {F32_MAX:.4g} (a 32-bit float), "
                f"got {self.train_margin}"
            )
        stages = self._stages()  # checked before training
        if self.cascade_bits is not None and not stages:
            raise ValueError("cascade_bits sizes a cascade's stages: it needs cascade=")
        super().fit(train, dev, **kwargs)
        self.margin_curve_: list[dict[str, float]] = []
        if self.dynamic and dev is not None:
            from .dynamic.strubell2015 import fit_presets

            self.model_, self.margin_curve_ = fit_presets(self.model_, dev)
        return self

    def _used(self, train: _core.Treebank | TrainingSet, trainer: Any) -> dict[str, Any]:
        """The sentences trained on: those whose tree the static oracle rebuilds (a
        complete single-rooted tree, projective once projectivised), a TrainingSet's rule;
        for a treebank, a set of its own says which (O(words), once per fit)."""
        pp = train.pseudo_projective if isinstance(train, TrainingSet) else self.pseudo_projective
        why = "no complete tree" if pp else "no complete projective tree"
        if isinstance(train, TrainingSet):
            # (its untagged sentences among tagged ones: left out as `fit` of a treebank
            # leaves them, `without_untagged`)
            untagged = set(train.untagged)
            return used_info(
                train,
                train.usable,
                train.usable_words,
                lambda s: UNTAGGED_WHY if s in untagged else why,
            )
        usable = TrainingSet(
            train,
            pseudo_projective=self.pseudo_projective,
            min_lifted_label_count=self.min_lifted_label_count,
        ).usable
        return used_info(train, usable, why=lambda _s: why)

    def training_info(self) -> dict[str, Any]:
        """As :meth:`TrainableModel.training_info`; ``clusters`` only when there is a file,
        so that a parser without one is saved byte for byte as before the option."""
        info = super().training_info()
        if self.clusters is None:
            info.get("params", {}).pop("clusters", None)
        elif "params" in info:
            info["params"]["clusters"] = os.fspath(self.clusters)
        return info

    def _margin(self, margin: float | str | None) -> float | None:
        """The numeric margin of `margin` (None: every template)."""
        from .dynamic.strubell2015 import resolve_margin

        return resolve_margin(self._model().margin_presets, margin)

    def parse(
        self,
        treebank: _core.Treebank,
        threads: int = 1,
        *,
        allow_missing_tags: bool = False,
        scores: bool = False,
        margin: float | str | None = None,
        tag: bool | None = None,
    ) -> _core.Treebank:
        """As :meth:`TrainableModel.parse`, with the prefix-margin rule (Strubell et al.
        2015) at ``margin``: a number, ``"accurate"`` or ``"fast"`` (a dynamic model's
        presets; ``"accurate"`` is its default), ``float("inf")`` for every template.
        An ordinary model parses with every template unless given a number."""
        model = self._model()
        treebank = as_treebank(treebank, "treebank", to_parse=True)
        check_flag(allow_missing_tags, "allow_missing_tags")
        check_flag(scores, "scores")
        threads = check_threads(threads)
        treebank, tagger = self._tag_first(treebank, threads, tag)
        check_columns(model, treebank, allow_missing_tags, tagger)
        from .dynamic.strubell2015 import warn_untrained_margin

        m = self._margin(margin)
        warn_untrained_margin(m, model.margin_presets, "the parse loses")
        return model.parse(treebank, threads, scores, m)

    @property
    def margin_presets_(self) -> dict[str, float] | None:
        """A dynamic model's margins: ``train``, ``accurate``, ``fast`` (None otherwise)."""
        return self._model().margin_presets

    @property
    def labels_(self) -> list[str]:
        return self._model().labels

    @property
    def templates_(self) -> list[str]:
        return self._model().templates

    # ---------- arrays for the selection methods ----------

    def trajectories(
        self,
        treebank: _core.Treebank,
        beta: float = 0.0,
        random_state: int = 0,
        sentences: Sequence[int] | None = None,
    ) -> Trajectories:
        """Decisions along oracle/model mixtures (`beta` = oracle probability per move)."""
        return self._model().trajectories(
            treebank,
            beta,
            check_seed(random_state),
            None if sentences is None else list(sentences),
        )

    def template_scores(self, features: npt.NDArray[np.uint64]) -> npt.NDArray[np.float32]:
        """Per-template move scores (n, T, 4) of configurations given by their features (n, T)."""
        import numpy as np

        f = np.asarray(features)
        if f.dtype != np.uint64 and not (f.dtype.kind in "iu" and (f >= 0).all()):
            raise TypeError(f"features must be uint64 feature hashes, got {f.dtype}")
        if f.ndim != 2:  # (the core said "dimensionality mismatch: from=1, to=2")
            raise ValueError(f"features must be 2-D (decisions, templates), got shape {f.shape}")
        return self._model().template_scores(np.ascontiguousarray(f, dtype=np.uint64))


def _reads_clusters(text: str) -> bool:
    """Whether configuration template text reads word clusters."""
    from .templates import TemplateSet

    return any(
        attr.split(":")[0] == "cluster"
        for t in TemplateSet.parse(text, "config")
        for _, attr in t.atoms
    )


class _Cascade:
    """Trains a cascade: the full model and each stage the ordinary way, epoch by epoch
    (dev scores, and so the epoch kept, are the full model's)."""

    def __init__(self, full: Any, stages: list[Any]) -> None:
        self.full, self.stages = full, stages

    def epoch(self) -> dict[str, float]:
        for s in self.stages:
            s.epoch()
        return self.full.epoch()

    def model(self) -> _core.ArcEagerModel:
        return self.full.model().with_stages([s.model() for s in self.stages], CASCADE_MARGIN)


Trajectories = _core.Trajectories
LocalClassifier = _core.LocalClassifier


def trajectory_features(
    trajectories: Trajectories, templates: Any, threads: int = 1
) -> npt.NDArray[np.uint64]:
    """Features (n, T) of the configuration templates `templates` (set name, file, text or
    template values) at every decision of `trajectories`, replayed on demand."""
    return trajectories.features(resolve_templates(templates), check_threads(threads))


def train_local(
    trajectories: Trajectories,
    templates: Any,
    sample_weight: npt.NDArray[np.floating[Any]],
    *,
    epochs: int = 5,
    random_state: int = 1,
    threads: int = 1,
) -> LocalClassifier:
    """Trains a local move and label classifier over `templates` on the decisions of
    `trajectories` weighted by `sample_weight` (one per decision)."""
    import numpy as np

    return _core.LocalClassifier(
        trajectories,
        resolve_templates(templates),
        np.ascontiguousarray(sample_weight, dtype=np.float32),
        epochs=check_count(epochs, "epochs", 1),  # (0 was an untrained classifier)
        seed=check_seed(random_state),
        threads=check_threads(threads),
    )


class Ensemble:
    """A weighted vote of local classifiers that parses (SAMME's final classifier)."""

    def __init__(self, members: Sequence[tuple[float, LocalClassifier]]) -> None:
        self.model_ = _core.Ensemble([(float(a), m) for a, m in members])

    @property
    def weights_(self) -> list[float]:
        return list(self.model_.weights)

    @property
    def member_templates_(self) -> list[list[str]]:
        return self.model_.member_templates

    def parse(
        self, treebank: _core.Treebank, threads: int = 1, *, allow_missing_tags: bool = False
    ) -> _core.Treebank:
        """A copy of `treebank` with HEAD and DEPREL from the members' weighted vote
        (untagged input: see :meth:`ArcEagerParser.parse`)."""
        treebank = as_treebank(treebank, "treebank", to_parse=True)
        check_columns(self.model_, treebank, check_flag(allow_missing_tags, "allow_missing_tags"))
        return self.model_.parse(treebank, check_threads(threads))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the model file atomically."""
        self.model_.save(Path(path))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Ensemble:
        from .models import check_model_file

        check_model_file(path)
        e = cls.__new__(cls)
        e.model_ = _core.Ensemble.load(Path(path))
        return e

    def __getstate__(self) -> dict[str, bytes]:
        """Pickles (``copy.deepcopy``, multiprocessing) as the bytes of its model file, as
        the parsers do (:meth:`depfs.base.TrainableModel.__getstate__`). O(model size)."""
        return {"_model_file": model_file_bytes(self.save)}

    def __setstate__(self, state: dict[str, bytes]) -> None:
        self.model_ = from_model_file_bytes(state["_model_file"], _core.Ensemble.load)


def projectivize(treebank: _core.Treebank) -> tuple[_core.Treebank, dict[str, int]]:
    """A projective copy (lifted labels encoded `r↑h`) and counts of what was lifted."""
    return _core.arceager_projectivize(treebank)


def deprojectivize(treebank: _core.Treebank) -> _core.Treebank:
    """A copy with every `r↑h` word moved back under the nearest `h` of its head's subtree."""
    return _core.arceager_deprojectivize(treebank)


def oracle_trajectories(
    treebank: _core.Treebank,
    beta: float = 1.0,
    random_state: int = 0,
    sentences: Sequence[int] | None = None,
) -> dict[str, npt.NDArray[Any]]:
    """Configurations of the sentences with a complete projective tree, as arrays:
    `sentence`, `s0`, `b0` (n,); `cost` (n, 4) of each move kind (-1 = invalid);
    `followed` and `oracle` (n,) move kinds."""
    return _core.arceager_oracle_trajectories(
        treebank, beta, check_seed(random_state), None if sentences is None else list(sentences)
    )
