"""Prefix-margin dynamic feature selection: margin sweeps and presets.

Strubell, Vilnis, Silverstein & McCallum (2015), *Learning Dynamic Feature Selection for
Fast Sequential Prediction* (ACL), §4 and §6. The rule itself (Algorithm 1: add
templates in order, stop a decision once one class leads by the margin m) and its
training (Algorithm 2: every prefix trained by the loss-augmented hinge until the gold
class leads by m) run in Rust (``rust/depfs-core/src/transition/prefix_margin.rs`` for the parser,
``rust/depfs-core/src/tagger/prefix_margin.rs`` for the tagger's columns);
``ArcEagerParser(dynamic=True)`` and ``Tagger(dynamic=True)`` train such models. This
module measures margins and chooses the ones a user asks for by name, on dev:

- ``accurate``: the cheapest margin (fewest templates per decision) whose dev score (a
  parser's LAS, a tagger's mean accuracy over its columns) is within 0.1 of the
  model's best margin (a cascade's: of its full model);
- ``fast``: the cheapest within 1.0.

A cascade (``ArcEagerParser(dynamic=True, cascade=...)``: ordinary models of the first k
templates settle the decisions they lead by the margin, the full model the rest) is swept
and chosen the same way, on its nominal margin.

The sweep runs up to 1.5 times the training margin. Margins above it help only a model
whose full sum was trained on every decision (``full_sum``, the default of the parser
and the tagger): with Algorithm 2 alone, as in the paper, later templates are trained
only on the decisions earlier ones could not settle, and such a model's best margin is
its training margin (the sweep's points above it then lose and are not chosen). A
cascade's sweep runs on to 3 times its nominal margin (a stage's margin is in the units
of its own perceptron weights; one in small tables needs more to settle as accurately).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .. import _core

#: Margins swept on dev, as fractions of the training margin: on to 1.5 for models whose
#: full sum was trained on every decision.
SWEEP = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5)

#: A cascade's sweep, of its nominal margin: on to 3, since a stage in small tables
#: needs margins above 1.5 to come within 0.1 LAS of its full model on dev
#: (docs/methods.md, "The cascade's configuration").
CASCADE_SWEEP = SWEEP + (2.0, 2.5, 3.0)

#: How far below the best dev score each preset may be (LAS or accuracy points).
PRESET_LOSS = {"accurate": 0.1, "fast": 1.0}

#: The tagger's dev score of each column (an attribute of :class:`depfs.evaluate`'s scores).
TAG_SCORES = {"UPOS": "upos", "XPOS": "xpos", "FEATS": "ufeats", "LEMMA": "lemmas"}


@dataclass(frozen=True)
class MarginPoint:
    """One margin's parse of a treebank: scores and templates computed per decision."""

    margin: float
    uas: float
    las: float
    move_templates: float
    """Templates per move decision (configurations with more than one valid move)."""
    label_templates: float
    """Templates per label decision (arc moves whose label needed scores)."""

    @property
    def score(self) -> float:
        """What the presets are chosen by."""
        return self.las

    @property
    def templates(self) -> float:
        """What the presets minimise."""
        return self.move_templates

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class TagMarginPoint:
    """One margin's tagging of a treebank: accuracy and templates computed per decision."""

    margin: float
    accuracy: float
    """Mean accuracy over the columns the tagger predicts (percent)."""
    templates: float
    """Templates per decision over every column (decisions with more than one candidate)."""
    columns: dict[str, dict[str, float]]
    """Per column: ``accuracy`` and ``templates`` per decision."""

    @property
    def score(self) -> float:
        return self.accuracy

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def margin_point(model: Any, treebank: _core.Treebank, margin: float | str) -> MarginPoint:
    """Parses `treebank` at `margin` (one thread; a number, or a dynamic model's
    ``"accurate"`` or ``"fast"``) and scores it against itself."""
    from ..evaluate import evaluate

    margin = _numeric(model, margin)

    parsed, n = model.parse_counted(treebank, float(margin), 1)
    s = evaluate(treebank, parsed)
    return MarginPoint(
        margin=float(margin),
        uas=s.uas,
        las=s.las,
        move_templates=n["move_templates"] / max(1, n["move_decisions"]),
        label_templates=n["label_templates"] / max(1, n["label_decisions"]),
    )


def tag_point(model: Any, treebank: _core.Treebank, margin: float | str) -> TagMarginPoint:
    """Tags `treebank` (a copy) at `margin` (one thread; a number, or a dynamic tagger's
    ``"accurate"`` or ``"fast"``) and scores it against itself."""
    from ..evaluate import evaluate

    margin = _numeric(model, margin)

    tagged, n = model.tag_counted(treebank, float(margin), 1)
    s = evaluate(treebank, tagged)
    columns = {
        c: {"accuracy": getattr(s, TAG_SCORES[c]), "templates": used / max(1, decided)}
        for c, (used, decided) in n.items()
    }
    used, decided = (sum(v[i] for v in n.values()) for i in (0, 1))
    return TagMarginPoint(
        margin=float(margin),
        accuracy=sum(c["accuracy"] for c in columns.values()) / max(1, len(columns)),
        templates=used / max(1, decided),
        columns=columns,
    )


def _numeric(model: Any, margin: float | str) -> float:
    """`margin` as a number: a preset name looked up in `model`'s presets, checked."""
    m = resolve_margin(model.margin_presets, margin)
    return float("inf") if m is None else m


def margin_sweep(
    model: Any, treebank: _core.Treebank, margins: Sequence[float] | None = None
) -> list[Any]:
    """:func:`margin_point` (a tagger: :func:`tag_point`) at each margin (default:
    :data:`SWEEP` × the training margin; a cascade's :data:`CASCADE_SWEEP`)."""
    if margins is None:
        presets = model.margin_presets
        if presets is None:
            raise ValueError("give the margins: this model was not trained with dynamic=True")
        sweep = CASCADE_SWEEP if getattr(model, "cascade", None) is not None else SWEEP
        margins = [f * presets["train"] for f in sweep]
    point = tag_point if isinstance(model, _core.TaggerModel) else margin_point
    return [point(model, treebank, m) for m in margins]


def choose_presets(
    points: Sequence[MarginPoint | TagMarginPoint], reference: float | None = None
) -> dict[str, float]:
    """The ``accurate`` and ``fast`` margins of a dev sweep (see the module doc): for
    each, the margin with the fewest templates per decision (a parser's move
    decisions) among those within its :data:`PRESET_LOSS` of the best score (or of
    `reference`, e.g. a cascade's full model: the loss is the cascade's against it, and
    margins that score above it by chance do not raise the bar; the best-scoring margin
    when none is within)."""
    if not points:
        raise ValueError("no margins to choose from")
    best = max(p.score for p in points) if reference is None else reference
    chosen = {}
    for name, loss in PRESET_LOSS.items():
        ok = [p for p in points if p.score >= best - loss - 1e-9]
        ok = ok or [max(points, key=lambda p: (p.score, -p.templates))]
        chosen[name] = min(ok, key=lambda p: (p.templates, p.margin)).margin
    return chosen


def training_margin(
    update: str, train_margin: float | None, stagewise: bool, defaults: dict[str, float]
) -> float:
    """The margin Algorithm 2 trains at: `train_margin` when given, else the default of
    the update rule (`defaults`: per ``"adagrad"`` / ``"perceptron"``; the stagewise
    baseline takes AdaGrad steps whatever `update` says)."""
    if update not in defaults:
        raise ValueError(f"update must be 'adagrad' or 'perceptron', got {update!r}")
    if train_margin is not None:
        return float(train_margin)
    return defaults["adagrad" if stagewise else update]


def resolve_margin(presets: dict[str, float] | None, margin: float | str | None) -> float | None:
    """The numeric margin a model with `presets` (None: an ordinary model) uses for
    `margin`: a number, ``"accurate"`` or ``"fast"``, or None (a dynamic model's
    ``accurate``; an ordinary model's every template, None)."""
    if isinstance(margin, str) or (margin is None and presets is not None):
        name = "accurate" if margin is None else margin
        if name not in ("accurate", "fast"):
            raise ValueError(f"margin must be a number, 'accurate' or 'fast', got {margin!r}")
        if presets is None:
            raise ValueError(
                f"margin {name!r} is a preset of dynamic models; this model was trained "
                "without dynamic=True (give a number)"
            )
        return float(presets[name])
    if margin is None:
        return None
    if isinstance(margin, bool) or not isinstance(margin, numbers.Real):  # True is not 1.0
        raise ValueError(f"margin must be a number, 'accurate' or 'fast', got {margin!r}")
    from ..base import as_float

    value = as_float(margin)
    if not value >= 0:
        raise ValueError(f"margin must be a number ≥ 0, got {margin!r}")
    return value


def warn_untrained_margin(m: float | None, presets: dict[str, float] | None, what: str) -> None:
    """Warns when margin `m` (numeric) is used by a model without `presets` (not trained
    dynamic): its template prefixes were not trained to decide alone, so `what` (``"the
    parse loses"``, ``"the tags lose"``) accuracy."""
    import warnings

    if m is not None and m != math.inf and presets is None:
        warnings.warn(
            f"margin {m:g} on a model trained without --dynamic (Python: dynamic=True): its "
            "template prefixes were not trained to decide alone (Strubell et al. 2015, §6.1), so "
            f"{what} accuracy; train with --dynamic for the prefix-margin rule",
            stacklevel=3,
        )
    # A margin is in the model's own score units, which differ by model by orders of
    # magnitude (a cascade's presets ~2-5, a prefix-trained parser's thousands): a number
    # far below the fast preset decides on the first templates alone.
    fast = (presets or {}).get("fast")
    if m is not None and m != math.inf and fast is not None and m < fast / 2:
        warnings.warn(
            f"margin {m:g} is below half this model's 'fast' preset ({fast:g}; margins are "
            f"in each model's own score units, `depfs info` shows its presets), so {what} "
            "much accuracy",
            stacklevel=3,
        )


def fit_presets(model: Any, dev: _core.Treebank) -> tuple[Any, list[dict[str, Any]]]:
    """A dynamic `model` with presets chosen by a :func:`margin_sweep` on `dev`, and the
    sweep (one dict per margin)."""
    points = margin_sweep(model, dev)
    reference = None
    if getattr(model, "cascade", None) is not None:
        from ..evaluate import evaluate

        reference = evaluate(dev, model.parse(dev, 1, False, None)).las  # the full model
    presets = choose_presets(points, reference)
    return model.with_presets(presets["accurate"], presets["fast"]), [p.as_dict() for p in points]
