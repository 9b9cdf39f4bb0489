"""Dynamic feature selection for graph-based parsing: He, Daumé III & Eisner (2013),
*Dynamic Feature Selection for Dependency Parsing* (EMNLP).

Parsing (their Algorithm 1: length-dictionary filter, group T₁ on every arc left, rounds
in which a policy locks confident arcs of the current tree or adds the next group to
their modifier's arcs, a projective last round) runs in Rust (``GraphModel.run_dynfs``).
This module holds what surrounds it:

* the template groups (§4.1): a groups file (``depfs select groups``) whose groups, one
  after the other, are the model's arc templates (shipped: ``dynfs_en_ewt``) and, for a
  second-order model, whose groups after ``# order 2`` are its sibling templates
  (``dynfs2_en_ewt``): K₁ first-order rounds (CLE, the K₁th projective Eisner), then K₂
  sibling rounds decoded with Eisner2, the sibling groups computed only on the parts of
  the modifiers the policy did not lock;
* the rounds' model: a first-order parser of the same arc templates whose every group
  prefix is trained (``GraphParser(prefix_groups=...)``), since partial sums of the full
  model's weights are poor parsers; the last round (first order) or the first sibling
  round (second order) switches to the full model's weights;
* DAgger (§5.2–5.3, Algorithm 2): the training sentences are cut into N folds, a parser
  is trained on the other folds for each; iteration i runs policy πᵢ (π₁: the expert,
  which locks exactly the gold arcs) over fold i with that fold's parser, every state it
  visits is labelled with the expert's action, the data are aggregated and πᵢ₊₁ is
  fitted on all of them — a linear classifier over the meta-features of §5.4 and, as
  §5.4 says ("a feature vector ψ that concatenates all previously acquired parsing
  features together with meta-features"), the arc's features of group T₁ (computed for
  every arc by the first decision), hashed into ``_core.dynfs_lex_size()`` weights
  (logistic regression; they used a linear SVM; :data:`POLICY_LEX`);
* the choice on dev (§6.1: "the best policy evaluated on the development set"): each
  iteration's policy at each threshold of a grid, run on dev with the rounds' model and
  the full model's last round; kept:
  the lowest share of templates computed whose dev UAS is within ``tolerance`` of the
  full model's (the most accurate when none is);
* fewer rounds (:func:`fewer_rounds`): the kept policy may lock (almost) nothing in the
  middle rounds — on en_ewt it locks after T₁ only, and each middle round then costs a
  CLE decode, a pass of decisions and, for its groups, a second weight table read, for
  nothing. The first-order groups after the first j are merged into the projective last
  round (:func:`merge_rounds`) when dev UAS and cost stay within ``ROUNDS_SLACK``;
* margin pruning (:func:`choose_pruning`, not in He et al.): a word the policy adds
  keeps only the arcs within a margin of its best, so the later groups are computed on
  fewer arcs (in the first-order rounds, of either order); margin and threshold are
  chosen together on dev by the same rule;
* tree-margin pruning (:func:`choose_pruning`, not in He et al.: the max-marginal
  filter of Weiss & Taskar's structured prediction cascades, 2010): after round 1, every
  arc whose best projective tree under T₁'s scores is more than a margin below the best
  tree is ruled out, for every word, and a word left with one head is locked — a filter
  that sees the tree, where margin pruning sees one word's arcs (en_ewt dev, round 1's
  scores: 1.8 arcs per word keep the full model's head for 98.2% of the words, against
  2.7 for the per-word margin); chosen on dev with the prune margin and the threshold;
* the labeler's stop (:func:`choose_label_stop`, not in He et al., who parse unlabeled):
  the prefix-margin rule of Strubell et al. (2015) on each word's label — the labeler's
  templates added in descending order of their rows' spread on the training arcs, a
  word's label kept once the best leads every other by a margin scaled to what the
  templates left can still move; the margin chosen on dev with a LAS tolerance. The stop
  adds the full model's labeler weights or, when dev finds it cheaper within the same
  tolerance, those of a labeler whose every prefix of that order was trained as a labeler
  (Strubell et al.'s Algorithm 2 on labels; trained in a model of its own:
  :data:`LABEL_PREFIX`), since a prefix of weights trained only as a sum labels poorly.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _core
from ..jackknifing import fold_bounds
from ..templates import TemplateSet, resolve_templates

__all__ = [
    "DEFAULT_GROUPS",
    "DEFAULT_GROUPS_2",
    "DaggerResult",
    "arc_set_of",
    "choose_label_stop",
    "choose_pruning",
    "fewer_rounds",
    "label_order",
    "fit_policy",
    "load_groups",
    "merge_rounds",
    "load_sibling_groups",
    "sibling_set_of",
    "train_policy",
]

DEFAULT_GROUPS = "dynfs_en_ewt"
"""The shipped groups: the forward wrapper's en_ewt order of the first-order templates
cut into groups of 5, 15, 40 and 109 (``# group k`` lines; the file's header says why)."""

POLICY_LEX = True
"""Whether :func:`train_policy` gives the policy the arc's group-1 features (He et al.
§5.4's acquired parsing features, hashed) beside the meta-features; False: the
meta-features only (the policy of models before them)."""

THRESHOLDS = tuple(float(t) for t in np.arange(-1.0, 6.01, 0.25))
"""Thresholds tried on dev for each DAgger iteration's policy (w · ψ in logit units).
Up to 6: the lexical policy's scores run wider (pt_bosque, margin 3: dev 86.49 at 32.1% of
the templates at threshold 4, 86.50 at 33.4% at 5, against the full model's 86.70 − 0.2;
up to 4, the rule kept margin 4 at 40.6%)."""


DEFAULT_GROUPS_2 = "dynfs2_en_ewt"
"""The shipped second-order groups: those of ``dynfs_en_ewt``, then the sibling templates
of ``second_order`` in groups of 4, 10 and 10 (file order; the file's header says why)."""


def load_groups(spec: str | os.PathLike[str], order: int = 1) -> list[TemplateSet]:
    """The first-order groups (`order` 1) or the sibling groups (2: after ``# order 2``)
    of a groups file or shipped set with ``# group k`` lines."""
    from ..select.groups import parse_groups

    name = str(spec) if "\n" not in str(spec) else "<template text>"
    if "\n" not in str(spec) and not _is_set_or_file(spec):  # one line is no groups text
        raise FileNotFoundError(f"{name}: no such groups file or shipped set")
    groups = parse_groups(resolve_templates(spec), name).get(order, [])
    if not groups:
        where = "" if order == 1 else " after '# order 2'"
        raise ValueError(
            f"{name}: no '# group k' lines{where} (a groups file: depfs select groups)"
        )
    return groups


def _is_set_or_file(spec: str | os.PathLike[str]) -> bool:
    from ..templates import template_sets

    return str(spec) in template_sets() or os.path.exists(spec)


def has_sibling_groups(spec: str | os.PathLike[str]) -> bool:
    """Whether a groups file or shipped set has groups after ``# order 2``."""
    from ..select.groups import parse_groups

    name = str(spec) if "\n" not in str(spec) else "<template text>"
    return bool(parse_groups(resolve_templates(spec), name).get(2))


def load_sibling_groups(spec: str | os.PathLike[str]) -> list[TemplateSet]:
    """The sibling groups (after ``# order 2``) of a groups file or shipped set."""
    return load_groups(spec, 2)


def sibling_set_of(groups: Sequence[TemplateSet], n_arc: int) -> tuple[str, list[list[int]]]:
    """The sibling template text of a second-order DynFS model (the sibling groups one
    after the other) and each group's indices as the policy spec numbers them: after
    the `n_arc` arc templates."""
    text, index = arc_set_of(groups)
    return text, [[n_arc + t for t in g] for g in index]


def arc_set_of(groups: Sequence[TemplateSet]) -> tuple[str, list[list[int]]]:
    """The arc template text of a DynFS model (the groups one after the other) and each
    group's template indices in it."""
    text, index, start = [], [], 0
    widest = max((t.n_word_atoms for g in groups for t in g), default=0)
    if widest > 3:
        text.append(f"#! max_atoms = {widest}")
    for g in groups:
        text += [t.text for t in g]
        index.append(list(range(start, start + len(g))))
        start += len(g)
    return "\n".join(text) + "\n", index


ROUNDS_SLACK = (0.05, 2.0)
"""How far a policy with fewer rounds may be from the kept one on dev to replace it:
UAS points lower, template-cost points higher (:func:`fewer_rounds`). The template cost
does not count a round's own work (a CLE decode, a pass of decisions, the earlier
groups read again in the last round): on en_ewt test a middle round made the parse
0.82× as fast at 1.2 points less cost, so 2 points (0.5 before the lexical policy,
whose 5 | 164 came out just over 0.5 points above its 5 | 15 | 149 on dev and 1.22× as
fast on test)."""


def merge_rounds(
    groups: Sequence[Sequence[int]], weights: Sequence[float], keep: int, n_arc: int
) -> tuple[list[list[int]], list[float]]:
    """The same policy with fewer first-order rounds: the first `keep` (≥ 1) first-order
    groups as they are, the later ones (arc templates: indices below `n_arc`) merged into
    one, the projective last round; sibling groups unchanged. The policy's per-group
    weights (next-group one-hot, margins times it: see ``_core.dynfs_n_features``) follow
    their decisions: those before groups 1 … `keep` and the sibling groups keep theirs,
    those before the merged-away groups are dropped."""
    k = len(groups)
    k1 = sum(1 for g in groups if g and g[0] < n_arc)
    if not 1 <= keep < k1:
        raise ValueError(f"keep must be between 1 and {k1 - 1} (first-order groups), got {keep}")
    base = _core.dynfs_n_features(0)
    if len(weights) != _core.dynfs_n_features(k):
        raise ValueError(f"{len(weights)} policy weights for {k} groups")
    merged = [list(g) for g in groups[:keep]] + [[t for g in groups[keep:k1] for t in g]]
    merged += [list(g) for g in groups[k1:]]
    old = list(range(keep + 1)) + list(range(k1, k))  # new group index -> old
    k2 = len(merged)
    w = list(weights[:base]) + [0.0] * (3 * k2)
    for j, i in enumerate(old):
        for block in range(3):
            w[base + block * k2 + j] = weights[base + block * k + i]
    return merged, w


def fewer_rounds(
    model: Any,
    dev: _core.Treebank,
    *,
    slack: tuple[float, float] = ROUNDS_SLACK,
    threads: int = 1,
    report: Callable[[str], None] | None = None,
) -> tuple[Any, int | None, float | None, float | None]:
    """`model` (a first-order ``_core.GraphModel`` with DynFS) with the fewest rounds
    (:func:`merge_rounds`) whose dev UAS is at most ``slack[0]`` below and cost at most
    ``slack[1]`` points above its own, how many groups it keeps before the merged one,
    and its dev UAS and cost (None, None, None: `model` itself, also for a second-order
    model). Same threshold."""
    groups, weights, threshold = model.dynfs
    n_arc = len(model.arc_templates)
    k1 = sum(1 for g in groups if g and g[0] < n_arc)
    if k1 < 3 or k1 < len(groups):
        return model, None, None, None
    say = report or (lambda _msg: None)

    def on_dev(m: Any) -> tuple[float, float]:
        parsed, st, _, _ = m.run_dynfs(dev, threads=threads)
        return _uas(dev, parsed), 100 * st["cost"]

    uas, cost = on_dev(model)
    for keep in range(1, k1 - 1):
        g, w = merge_rounds(groups, weights, keep, n_arc)
        cand = model.with_dynfs(
            g,
            w,
            threshold,
            prune_margin=model.dynfs_prune_margin,
            tree_margin=model.dynfs_tree_margin,
        )
        u, c = on_dev(cand)
        say(
            f"fewer rounds: groups {', '.join(str(len(x)) for x in g)}: dev UAS {u:.2f} at "
            f"{c:.1f}% (all rounds: {uas:.2f} at {cost:.1f}%)"
        )
        if u >= uas - slack[0] and c <= cost + slack[1]:
            return cand, keep, u, c
    return model, None, None, None


PRUNE_MARGINS = (4.0, 3.0, 2.5, 2.0, 1.5)
"""Prune margins tried on dev (score units of the rounds' model; :func:`choose_pruning`)."""

TREE_MARGINS = (4.0, 3.0, 2.5, 2.0, 1.5)
"""Tree margins tried on dev (score units of the rounds' model, as the prune margins;
:func:`choose_pruning`). en_ewt dev, with the policy at threshold 5 and prune margin 4:
tree margin 2 computes 12.6% of the templates at −0.20 UAS, 2.5 15.5% at −0.13 (without
it: 23.4% at −0.16)."""


def choose_pruning(
    model: Any,
    dev: _core.Treebank,
    full_uas: float,
    *,
    tolerance: float = 0.2,
    margins: Sequence[float] = PRUNE_MARGINS,
    tree_margins: Sequence[float] = TREE_MARGINS,
    thresholds: Sequence[float] = THRESHOLDS,
    threads: int = 1,
    report: Callable[[str], None] | None = None,
) -> tuple[Any, float | None, float | None, float, float]:
    """A tree margin, a prune margin and a policy threshold for `model` (with DynFS; both
    margins prune in the first-order rounds, also a second-order model's) chosen together
    on dev by :func:`train_policy`'s rule — the lowest share of templates whose dev UAS is
    within `tolerance` of `full_uas` — against the model as it is (its threshold, neither
    margin), which wins ties and stays when nothing is within. Each margin is also tried
    alone (None in the grid): with the default grids, about 1,000 dev parses (3–4 minutes
    of a first-order en_ewt training). Returns the model kept, its prune and tree margins
    (None: none), dev UAS and cost."""
    say = report or (lambda _msg: None)
    groups, weights, threshold = model.dynfs
    inf = float("inf")

    def on_dev(thr: float, margin: float | None, tree: float | None) -> tuple[float, float]:
        parsed, st, _, _ = model.run_dynfs(
            dev,
            threshold=thr,
            prune_margin=inf if margin is None else margin,
            tree_margin=inf if tree is None else tree,
            threads=threads,
        )
        return _uas(dev, parsed), 100 * st["cost"]

    n_runs = len(thresholds) * (len(margins) + len(tree_margins) * (len(margins) + 1))
    say(
        f"choosing the tree margin, prune margin and threshold together on dev: {n_runs} dev "
        f"parses, a line after each of {len(tree_margins) + 1} tree margins"
    )
    uas, cost = on_dev(threshold, None, None)
    best: tuple[float, float, float, float | None, float | None] = (
        cost,
        uas,
        threshold,
        None,
        None,
    )
    for tree in (None, *tree_margins):
        for margin in (None, *margins) if tree is not None else margins:
            for thr in thresholds:
                u, c = on_dev(thr, margin, tree)
                if u >= full_uas - tolerance and (c < best[0] or best[1] < full_uas - tolerance):
                    best = (c, u, thr, margin, tree)
        say(
            f"tree margin {'none' if tree is None else f'{tree:g}'}: best so far {best[1]:.2f} "
            f"UAS at {best[0]:.1f}%"
        )
    cost, uas, thr, margin, tree = best
    kept = model.with_dynfs(groups, weights, thr, prune_margin=margin, tree_margin=tree)
    return kept, margin, tree, uas, cost


LABEL_MARGINS = (2.0, 1.75, 1.5, 1.25, 1.0, 0.75, 0.6, 0.5, 0.4, 0.35, 0.3, 0.25)
"""Labeler margins tried on dev, in units of the root of the sum of the squared template
spreads of the labeler the stop adds (en_ewt: 56.4 score units for the full model's
labeler; :func:`choose_label_stop`). The full model's labeler needs 1 to 1.5 (en_ewt dev:
−0.14 LAS at 1.25, −0.60 at 0.75), the prefix-trained one 0.3 to 0.5 (−0.21 at 0.3)."""

LABEL_PREFIX: tuple[float, float] | None = (5.0, 13.0)
"""The prefix-trained labeler of the stop (``GraphParser(label_prefix=...)``, a model of
group 1's arc templates and the labeler's, trained on train, its epoch kept on dev):
(training margin, whole-sum step), or None for none (the stop
then adds the full model's labeler weights, as in models before it, with the margins of
:data:`LABEL_MARGINS`). Strubell et al.'s
Algorithm 2 on each gold arc's label, perceptron steps: the prefixes of the stop's order
are added until the gold label leads by the margin, each one before taking a step, and
the whole sum a step of 13 (about one per prefix checked) so that it stays as good a
labeler as the full model's (en_ewt dev, the same trees: full sum 84.94 LAS against the
full model's labeler's 84.91; a step of 1: 84.73; training margin 0: 84.92, 20: 84.77 with
a step of 1). At the stop, within 0.2 LAS of the full model's labeler, it computes 22.8%
of the labeler's templates against 34.6% for the full model's labeler (with the label
dictionary; margin 0.3 against 1.25)."""

LABEL_EVERY = 4
"""The labeler's lead is checked after every 4th template (a labeler of fewer than 32
templates: every len // 8th, at least each): a check costs about a row
(callgrind, en_ewt test at margin 70: 1,370 M instructions per parse against 1,416 M
checking after each; dev LAS 84.76 at 40.4% of the labeler's templates against 84.73 at
37.2%)."""


def label_order(model: Any, train: _core.Treebank) -> tuple[list[int], list[float], int]:
    """The labeler stop's template order for `model` (descending mean spread of the
    template's rows over `train`'s gold arcs, ``GraphModel.label_spreads``), the spreads
    and the stop's check interval (:data:`LABEL_EVERY`)."""
    spreads = [float(x) for x in model.label_spreads(train)]
    order = [int(t) for t in np.argsort(-np.asarray(spreads), kind="stable")]
    return order, spreads, max(1, min(LABEL_EVERY, len(order) // 8))


def choose_label_stop(
    model: Any,
    train: _core.Treebank,
    dev: _core.Treebank,
    *,
    tolerance: float = 0.2,
    margins: Sequence[float] = LABEL_MARGINS,
    label_dict: bool = True,
    threads: int = 1,
    report: Callable[[str], None] | None = None,
    prefix_labeler: Any = None,
) -> tuple[Any, float | None, float, float]:
    """The labeler's stop rule for `model` (with DynFS): templates ordered by their rows'
    mean spread over `train`'s gold arcs (``GraphModel.label_spreads``), `margins` (times
    the root of the sum of the squared spreads; scaled along the order by
    ``GraphModel.label_tail_scales``) tried on dev, each without and (with `label_dict`)
    with the label dictionary of `train` (``GraphModel.label_dict``: only the labels seen
    for an arc's head UPOS, modifier UPOS and direction are scored), kept: the fewest
    labeler templates whose dev LAS is within `tolerance` of the same parse with the full
    labeler (none within: the full labeler). With `prefix_labeler` (a model of the same
    labeler templates and labels whose labeler was trained with ``label_prefix`` on this
    order, :data:`LABEL_PREFIX`), its labeler is tried as the stop's too, with its own
    scale and margin unit, and kept when it computes fewer templates within the same
    tolerance of the full model's labeler; without it, a model whose stop adds a
    prefix-trained labeler already tries that one. Returns the model kept, its margin (None: the
    full labeler), dev LAS and the share of labeler templates computed (%); the
    dictionary kept is the model's ``dynfs_label_dict``, the labeler its
    ``dynfs_label_prefix_trained``."""
    from ..evaluate import evaluate

    say = report or (lambda _msg: None)
    groups, weights, threshold = model.dynfs
    order, spreads, every = label_order(model, train)
    dicts: list[list[Any]] = [[]] + ([model.label_dict(train)] if label_dict else [])
    # The labelers the stop may add, as run_dynfs's label_weights (the model itself: its
    # own labeler; None: its stop's stored weights), with their spreads.
    labelers: list[tuple[Any, list[float]]] = [(model, spreads)]
    if prefix_labeler is not None:
        labelers.append((prefix_labeler, [float(x) for x in prefix_labeler.label_spreads(train)]))
    elif model.dynfs_label_prefix_trained:  # a model chosen before: its own prefix labeler
        labelers.append((None, [float(x) for x in model.label_spreads(train, stop=True)]))

    def on_dev(
        labeler: Any, scale: list[float], margin: float, entries: list[Any]
    ) -> tuple[float, float]:
        parsed, st, _, _ = model.run_dynfs(
            dev,
            threads=threads,
            label_margin=margin,
            label_order=order,
            label_scale=scale,
            label_every=every,
            label_dict=entries,
            label_weights=labeler,
        )
        return evaluate(dev, parsed).las, 100 * st["lab_cost"]

    full_las, _ = on_dev(model, [1.0] * len(order), float("inf"), [])
    best: tuple[float, float, float | None, list[Any], Any, list[float]] = (
        100.0,
        full_las,
        None,
        [],
        model,
        [],
    )
    for labeler, its_spreads in labelers:
        scale = _core.GraphModel.label_tail_scales(order, its_spreads)
        unit = float(np.sqrt(np.sum(np.square(its_spreads))))
        for entries in dicts:
            for margin in (m * unit for m in margins):
                las, cost = on_dev(labeler, scale, margin, entries)
                if las >= full_las - tolerance and cost < best[0]:
                    best = (cost, las, margin, entries, labeler, scale)
                say(
                    f"label margin {margin:g}{', dictionary' if entries else ''}"
                    f"{'' if labeler is model else ', prefix-trained labeler'}: dev LAS "
                    f"{las:.2f} (full labeler {full_las:.2f}) at {cost:.1f}%"
                )
    cost, las, margin, entries, labeler, scale = best
    stop = None if margin is None else (order, margin, scale, every)
    kept = model.with_dynfs(
        groups,
        weights,
        threshold,
        prune_margin=model.dynfs_prune_margin,
        tree_margin=model.dynfs_tree_margin,
        label_stop=stop,
        label_dict=entries or None,
        **({} if stop is None else {"label_weights": labeler}),
    )
    return kept, margin, las, cost


def fit_policy(
    x: npt.NDArray[np.float32],
    y: npt.NDArray[np.uint8],
    c: float = 1.0,
    lex_ids: npt.NDArray[np.uint32] | None = None,
) -> list[float]:
    """Weights of a linear lock (1) / add (0) classifier over the policy features (the
    first is the bias): logistic regression, w · ψ > 0 when P(lock) > 1/2. With
    `lex_ids` (one row of lexical indices per state, ``run_dynfs(record=True)``'s
    ``lex_ids``), over ψ and the one-hot lexical features (a sparse design of
    ``_core.dynfs_lex_size()`` more columns): the weights of ψ, then the lexical table."""
    from ..errors import optional_import

    LogisticRegression = optional_import(
        "sklearn.linear_model", "scikit-learn", "dynfs", "DynFS training (--dynfs)"
    ).LogisticRegression

    n_lex = 0 if lex_ids is None else _core.dynfs_lex_size()
    if len(set(y.tolist())) < 2:  # one action only: a constant policy
        bias = 10.0 if (len(y) and y[0] == 1) else -10.0
        return [bias] + [0.0] * (x.shape[1] - 1 + n_lex)
    design: Any = x
    if lex_ids is not None:
        from scipy import sparse

        n, width = lex_ids.shape
        if n != len(x):
            raise ValueError(f"{n} rows of lexical indices for {len(x)} states")
        rows = np.repeat(np.arange(n), width)
        ones = np.ones(n * width, dtype=np.float64)
        lex = sparse.csr_matrix((ones, (rows, lex_ids.ravel())), shape=(n, n_lex))
        design = sparse.hstack([sparse.csr_matrix(x.astype(np.float64)), lex]).tocsr()
    model = LogisticRegression(C=c, fit_intercept=False, max_iter=2000)
    model.fit(design, y)
    return [float(w) for w in model.coef_[0]]


@dataclass
class DaggerResult:
    """What :func:`train_policy` chose and measured (dev scores are UAS in %)."""

    weights: list[float]
    threshold: float
    full_dev_uas: float
    expert_dev_uas: float
    expert_dev_cost: float
    iteration: int
    """The DAgger iteration whose policy was kept (1 = fitted on the expert's states)."""
    dev_uas: float
    dev_cost: float
    groups_kept: int | None = None
    """With fewer rounds (:func:`fewer_rounds`): the first-order groups kept before the
    merged last one (None: every group a round)."""
    prune_margin: float | None = None
    """The margin pruning of added words chosen on dev (:func:`choose_pruning`)."""
    tree_margin: float | None = None
    """The tree-margin pruning after round 1 chosen on dev (:func:`choose_pruning`)."""
    label_margin: float | None = None
    """The labeler's stop margin chosen on dev (:func:`choose_label_stop`; None: the full
    labeler), its dev LAS and share of the labeler's templates (%)."""
    label_dev_las: float | None = None
    label_cost: float | None = None
    label_dict: bool | None = None
    """Whether the labeler's stop kept the label dictionary (:func:`choose_label_stop`)."""
    label_prefix_trained: bool | None = None
    """Whether the labeler's stop kept the prefix-trained labeler (:data:`LABEL_PREFIX`)
    rather than the full model's labeler weights (:func:`choose_label_stop`)."""
    lex: npt.NDArray[np.float32] | None = None
    """The kept policy's lexical weights (``with_dynfs(lex=...)``; None: meta-features
    only, :data:`POLICY_LEX`)."""
    rows: list[dict[str, float]] = field(default_factory=list)
    """Per iteration: states so far, fold, and the dev UAS / cost at each threshold."""
    seconds: float = 0.0
    """Wall seconds of the fold parsers and DAgger (:func:`train_policy`)."""
    choice_seconds: float = 0.0
    """Wall seconds of the choices on dev after it: rounds, margins, the labeler's stop."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "full_dev_uas": self.full_dev_uas,
            "expert_dev_uas": self.expert_dev_uas,
            "expert_dev_cost": self.expert_dev_cost,
            "iteration": self.iteration,
            "dev_uas": self.dev_uas,
            "dev_cost": self.dev_cost,
            "groups_kept": self.groups_kept,
            "prune_margin": self.prune_margin,
            "tree_margin": self.tree_margin,
            "label_margin": self.label_margin,
            "label_dev_las": self.label_dev_las,
            "label_cost": self.label_cost,
            "label_dict": self.label_dict,
            "label_prefix_trained": self.label_prefix_trained,
            "policy_lexical": self.lex is not None,
        }


def _uas(gold: _core.Treebank, parsed: _core.Treebank) -> float:
    from ..evaluate import evaluate

    return evaluate(gold, parsed).uas


def _split(treebank: _core.Treebank, folds: int) -> list[tuple[_core.Treebank, _core.Treebank]]:
    """(other folds, fold) for each of `folds` contiguous folds."""
    n = len(treebank)
    return [
        (treebank.select([*range(a), *range(b, n)]), treebank[a:b])
        for a, b in fold_bounds(n, folds)
    ]


def train_policy(
    rounds: Any,
    train: _core.Treebank,
    dev: _core.Treebank,
    groups: list[list[int]],
    fold_parser: Callable[[_core.Treebank], Any],
    *,
    reference: Any = None,
    folds: int = 4,
    iterations: int | None = None,
    tolerance: float = 0.2,
    lex: bool = POLICY_LEX,
    threads: int = 1,
    report: Callable[[str], None] | None = None,
) -> DaggerResult:
    """DAgger (He et al. 2013, Algorithm 2) for the lock/add policy of the model whose
    scores the rounds decide on: `rounds`, a trained first-order ``_core.GraphModel``
    whose arc set the `groups` partition (prefix-trained, see
    ``GraphParser(prefix_groups=...)``). `fold_parser(treebank)` trains a model of the
    same kind on a treebank and returns its ``_core.GraphModel``. `iterations` (default
    2 × folds) visit the folds in turn. Dev runs use `rounds` with `reference`'s weights
    in the last round (the full model, whose dev UAS the tolerance is measured against;
    `rounds` itself when None). With `lex`, the policy also weighs the arc's group-1
    features (:func:`fit_policy`), its lexical table in the result's ``lex``."""
    t0 = time.time()
    say = report or (lambda _msg: None)
    iterations = iterations if iterations is not None else 2 * folds
    if iterations < 1:
        raise ValueError(f"iterations must be at least 1, got {iterations}")
    reference = reference if reference is not None else rounds
    full_uas = _uas(dev, reference.parse(dev, threads=threads))
    k = len(groups)
    # The dev model: the full model with the rounds' weights (its policy changes below).
    full = reference.with_dynfs(groups, [0.0] * _core.dynfs_n_features(k), 0.0, rounds)
    parsed, st, _, _ = full.run_dynfs(dev, expert=True, threads=threads)
    expert_uas, expert_cost = _uas(dev, parsed), 100 * st["cost"]
    say(
        f"full model dev UAS {full_uas:.2f}; expert policy: dev UAS {expert_uas:.2f} "
        f"at {expert_cost:.1f}% of the templates"
    )
    parts = _split(train, folds)
    fold_models = []
    for k, (rest, _) in enumerate(parts, 1):
        say(f"fold parser {k}/{folds} on {len(rest)} sentences")
        fold_models.append(fold_parser(rest))
    xs: list[npt.NDArray[np.float32]] = []
    ys: list[npt.NDArray[np.uint8]] = []
    ids: list[npt.NDArray[np.uint32]] = []
    weights: list[float] | None = None  # None: the expert (π₁)
    none = np.zeros(0, dtype=np.float32)
    lex_w = none  # the policy's lexical table (empty: none)
    n_meta = _core.dynfs_n_features(len(groups))
    rows: list[dict[str, float]] = []
    # cost, uas, threshold, iteration, weights, lexical weights
    best: tuple[float, float, float, int, list[float], npt.NDArray[np.float32]] | None = None
    best_any: tuple[float, float, float, int, list[float], npt.NDArray[np.float32]] | None = None
    for it in range(1, iterations + 1):
        f = (it - 1) % folds
        model, (_, fold) = fold_models[f], parts[f]
        _, st, x, y = model.run_dynfs(
            fold,
            groups=groups,
            weights=weights,
            threshold=0.0,
            expert=weights is None,
            record=True,
            threads=threads,
            lex=lex_w,
        )
        xs.append(x)
        ys.append(y)
        ids.append(st["lex_ids"])
        w = fit_policy(
            np.concatenate(xs), np.concatenate(ys), lex_ids=np.concatenate(ids) if lex else None
        )
        weights, lex_w = w[:n_meta], (np.asarray(w[n_meta:], dtype=np.float32) if lex else none)
        row: dict[str, float] = {"iteration": it, "fold": f + 1, "states": sum(map(len, ys))}
        for thr in THRESHOLDS:
            parsed, st, _, _ = full.run_dynfs(
                dev, weights=weights, threshold=thr, threads=threads, lex=lex_w
            )
            uas, cost = _uas(dev, parsed), 100 * st["cost"]
            row[f"uas@{thr:g}"], row[f"cost@{thr:g}"] = uas, cost
            cand = (cost, uas, thr, it, weights, lex_w)
            if uas >= full_uas - tolerance and (best is None or cost < best[0]):
                best = cand
            if best_any is None or uas > best_any[1]:
                best_any = cand
        rows.append(row)
        say(
            f"DAgger iteration {it}/{iterations} (fold {f + 1}, {row['states']:.0f} states): "
            f"threshold 0: dev UAS {row['uas@0']:.2f} at {row['cost@0']:.1f}%"
        )
    cost, uas, thr, it, w, lw = best if best is not None else best_any  # type: ignore[misc]
    return DaggerResult(
        weights=w,
        lex=lw if lex else None,
        threshold=thr,
        full_dev_uas=full_uas,
        expert_dev_uas=expert_uas,
        expert_dev_cost=expert_cost,
        iteration=it,
        dev_uas=uas,
        dev_cost=cost,
        rows=rows,
        seconds=time.time() - t0,
    )
