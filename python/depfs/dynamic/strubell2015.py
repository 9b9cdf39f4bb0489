"""Prefix-margin dynamic feature selection: margin sweeps and presets.

Strubell, Vilnis, Silverstein & McCallum (2015), *Learning Dynamic Feature Selection for
Fast Sequential Prediction* (ACL), §4 and §6. The rule itself (Algorithm 1: add
templates in order, stop a decision once one class leads by the margin m) and its
training (Algorithm 2: every prefix trained by the loss-augmented hinge until the gold
class leads by m) run in Rust (``rust/depfs-core/src/transition/prefix_margin.rs``);
``ArcEagerParser(dynamic=True)`` trains such a model. This module chooses the margins
a user asks for by name, on dev:

- ``accurate``: the cheapest margin (fewest templates per decision) whose dev LAS is
  within 0.1 of the model's best margin;
- ``fast``: the cheapest within 1.0.

As in the paper, parse-time margins above the training margin are not useful (later
templates are trained only on the decisions earlier ones could not settle), so the
sweep runs up to the training margin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .. import _core

#: Margins swept on dev, as fractions of the training margin.
SWEEP = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

#: How far below the best dev LAS each preset may be (LAS points).
PRESET_LOSS = {"accurate": 0.1, "fast": 1.0}


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

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def margin_point(model: Any, treebank: _core.Treebank, margin: float) -> MarginPoint:
    """Parses `treebank` at `margin` (one thread) and scores it against itself."""
    from ..evaluate import evaluate

    parsed, n = model.parse_counted(treebank, float(margin), 1)
    s = evaluate(treebank, parsed)
    return MarginPoint(
        margin=float(margin),
        uas=s.uas,
        las=s.las,
        move_templates=n["move_templates"] / max(1, n["move_decisions"]),
        label_templates=n["label_templates"] / max(1, n["label_decisions"]),
    )


def margin_sweep(
    model: Any, treebank: _core.Treebank, margins: Sequence[float] | None = None
) -> list[MarginPoint]:
    """:func:`margin_point` at each margin (default: :data:`SWEEP` × the training margin)."""
    if margins is None:
        presets = model.margin_presets
        if presets is None:
            raise ValueError("give the margins: this model was not trained with dynamic=True")
        margins = [f * presets["train"] for f in SWEEP]
    return [margin_point(model, treebank, m) for m in margins]


def choose_presets(points: Sequence[MarginPoint]) -> dict[str, float]:
    """The ``accurate`` and ``fast`` margins of a dev sweep (see the module doc): for
    each, the margin with the fewest move templates per decision among those within its
    :data:`PRESET_LOSS` of the best LAS."""
    if not points:
        raise ValueError("no margins to choose from")
    best = max(p.las for p in points)
    chosen = {}
    for name, loss in PRESET_LOSS.items():
        ok = [p for p in points if p.las >= best - loss - 1e-9]
        chosen[name] = min(ok, key=lambda p: (p.move_templates, p.margin)).margin
    return chosen
