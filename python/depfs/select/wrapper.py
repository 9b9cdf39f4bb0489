"""The forward wrapper (Kohavi & John 1997), as He, Daumé & Eisner (2013, §4.1) and
Strubell et al. (2015, §4.5.2) rank templates with it.

From an empty set, or from a fixed base that is always present, repeatedly add the
template whose addition gives the best dev score (ties: lower cost, then canonical
text); optionally the best gain per unit of cost. The result is a total order of the
pool with the dev score after each prefix.

The exact wrapper trains O(T²) candidates. The cheaper variant (``candidates=M``)
re-evaluates, after the first ``full_steps`` steps, only the M templates that ranked
best at the previous evaluation of each, with a full re-rank every ``rerank_every``
steps (a template that looked weak stays out of the shortlist until the next full
step; measured against the exact wrapper in the README).
"""

from __future__ import annotations

import concurrent.futures as cf
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..templates import Template, TemplateSet
from .engine import FAMILY, PARSER_METRICS, Candidate, Engine, Log, Result


@dataclass
class Step:
    """One wrapper step: the template added, the dev score with it, and how many
    candidates the step evaluated."""

    template: Template
    score: float
    dev_uas: float | None
    dev_las: float | None
    evaluations_per_word: float
    candidates: int


@dataclass
class WrapperResult:
    """The order found: ``order[i]`` was added at step i with dev score ``scores[i]``."""

    steps: list[Step]
    metric: str
    base: TemplateSet
    base_score: float | None
    log_path: Path | None
    evaluated: int = 0
    reused: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def order(self) -> TemplateSet:
        return TemplateSet(
            [s.template for s in self.steps], self.base.family if self.steps else None
        )

    @property
    def scores(self) -> list[float]:
        return [s.score for s in self.steps]


def _as_set(templates: TemplateSet | Sequence[Template] | str, family: str) -> TemplateSet:
    if isinstance(templates, TemplateSet):
        return templates
    if isinstance(templates, str):
        return (
            TemplateSet.load(templates, family)
            if _is_set_or_file(templates)
            else TemplateSet.parse(templates, family)
        )
    return TemplateSet(templates, family)


def _is_set_or_file(s: str) -> bool:
    from ..templates import template_sets

    return s in template_sets() or os.path.isfile(s)


def forward_wrapper(
    pool: TemplateSet | Sequence[Template] | str,
    train: str | os.PathLike[str],
    dev: str | os.PathLike[str],
    *,
    parser: str = "arc-eager",
    base: TemplateSet | Sequence[Template] | str | None = None,
    metric: str | None = None,
    epochs: int = 1,
    max_length: int | None = None,
    order: int = 1,
    decoder: str = "eisner",
    seed: int = 1,
    limit: int | None = None,
    candidates: int | None = None,
    full_steps: int = 2,
    rerank_every: int = 5,
    per_cost: bool = False,
    executor: cf.Executor | None = None,
    workers: int | None = None,
    log: str | os.PathLike[str] | None = None,
    on_result: Callable[[Candidate, Result], None] | None = None,
    on_step: Callable[[Step], None] | None = None,
) -> WrapperResult:
    """Orders `pool` by forward selection on `dev` (paths; workers read them once).

    `parser` "arc-eager" (configuration templates), "graph" (arc templates; with
    ``order=2`` the pool is sibling templates and `base` the arc templates) or "tagger"
    (token templates, one order for every column). `metric` defaults to LAS for
    arc-eager, UAS for the graph parser and, for the tagger, ``accuracy`` (the mean
    over the columns it predicts; or ``upos``). `limit` stops after that
    many templates. `candidates` turns on the cheaper variant (see the module doc).
    `per_cost` picks the best gain per unit of template cost instead of the best score.
    `executor` is any Executor (you own it); else a process pool of `workers`.
    `log` is a JSONL file: rerunning with it evaluates nothing twice."""
    if parser not in PARSER_METRICS:
        raise ValueError(f"unknown parser {parser!r} (arc-eager, graph or tagger)")
    family = FAMILY[parser]
    metric = metric or PARSER_METRICS[parser][0]
    if metric not in PARSER_METRICS[parser]:
        allowed = " or ".join(PARSER_METRICS[parser])
        raise ValueError(f"metric {metric!r} does not apply to the {parser} ({allowed})")
    for name, v in [
        ("epochs", epochs),
        ("limit", limit),
        ("candidates", candidates),
        ("rerank_every", rerank_every),
    ]:
        if v is not None and v < 1:
            raise ValueError(f"{name} must be at least 1, got {v}")
    for name, path in (("train", train), ("dev", dev)):
        if not isinstance(path, (str, os.PathLike)):  # (a Treebank: "No such file")
            raise TypeError(
                f"{name} must be the path of a CoNLL-U file (each worker reads it once), "
                f"got {type(path).__name__}"
            )
    pool_set = _as_set(pool, family)
    base_set = _as_set(base, family) if base is not None else TemplateSet([], family)
    if parser == "graph" and order == 2:
        if not base_set:
            raise ValueError("a second-order wrapper needs --base (the arc templates)")
        # Each set of its own kind: the other kind in a place fails only later, when
        # `select groups` or the training that reads the groups file meets it.
        for what, ts, want in (("pool", pool_set, 2), ("base", base_set, 1)):
            wrong = [t.text for t in ts if t.order != want]
            if wrong:
                kind = "sibling (s) templates" if want == 2 else "first-order arc templates"
                raise ValueError(
                    f"a second-order wrapper's {what} is {kind}; it has {wrong[0]!r}"
                    + (f" and {len(wrong) - 1} more" if len(wrong) > 1 else "")
                )
    else:
        overlap = [t.text for t in pool_set if t in base_set]
        if overlap:
            raise ValueError(f"templates both in the pool and the base: {overlap[:3]}")
    if not pool_set:
        raise ValueError("the template pool is empty")

    def cand(ts: Sequence[Template]) -> Candidate:
        return Candidate(
            parser=parser,
            templates=tuple(ts),
            base=tuple(base_set),
            epochs=epochs,
            max_length=max_length,
            order=order,
            decoder=decoder,
            seed=seed,
        )

    _check_dev(parser, str(train), str(dev))
    the_log = Log(log)
    engine = Engine(str(train), str(dev), executor=executor, workers=workers, log=the_log)
    steps: list[Step] = []
    chosen: list[Template] = []
    remaining = list(pool_set)
    last_seen: dict[Template, float] = {}  # score of each template when last evaluated
    prev = None
    base_score: float | None = None
    n = min(limit or len(remaining), len(remaining))
    try:
        if base_set and not (parser == "graph" and order == 2):
            # The score before the first step (the base alone), for gains and plots.
            for _, r in engine.run([cand([])]):
                base_score = r.score(metric)
        prev = base_score
        for k in range(n):
            if _shortlisted(k, candidates, full_steps, rerank_every):
                ranked = sorted(
                    remaining, key=lambda t: (-last_seen.get(t, float("-inf")), t.cost, t.text)
                )
                consider = ranked[:candidates]
            else:
                consider = list(remaining)
            results: dict[Template, Result] = {}
            by_key = {cand(chosen + [t]).key(): t for t in consider}
            for c, r in engine.run(cand(chosen + [t]) for t in consider):
                t = by_key[c.key()]
                results[t] = r
                last_seen[t] = r.score(metric)
                if on_result is not None:
                    on_result(c, r)

            def rank(
                t: Template, results: dict[Template, Result] = results, prev: float | None = prev
            ) -> tuple[float, float, str]:
                s = results[t].score(metric)
                if per_cost:
                    s = (s - (prev if prev is not None else 0.0)) / max(t.cost, 1e-9)
                return (-s, t.cost, t.text)

            best = min(consider, key=rank)
            r = results[best]
            step = Step(
                best, r.score(metric), r.dev_uas, r.dev_las, r.evaluations_per_word, len(consider)
            )
            steps.append(step)
            chosen.append(best)
            remaining.remove(best)
            prev = step.score
            if on_step is not None:
                on_step(step)
    finally:
        engine.close()
    return WrapperResult(
        steps=steps,
        metric=metric,
        base=base_set,
        base_score=base_score,
        log_path=Path(log) if log is not None else None,
        evaluated=engine.evaluated,
        reused=engine.reused,
    )


def _check_dev(parser: str, train: str, dev: str) -> None:
    """Refuses, before any training, a dev set that cannot score the candidates: a parser's
    without HEAD, or one that leaves empty a tag column the training set fills (every
    candidate would fail on it, or be scored on an untagged parse). O(words)."""
    from ..base import missing_columns
    from ..evaluate import evaluate
    from ..treebank import read_conllu

    # A tagger's data is read as `depfs train --parser tagger` reads it: trees unread.
    tags_only = parser == "tagger"
    dev_tb = read_conllu(dev, multiple_roots=tags_only)
    if not tags_only:
        try:
            evaluate(dev_tb, dev_tb)
        except ValueError as e:
            raise ValueError(
                f"{dev}: the dev set cannot score a parse: {str(e).removeprefix('gold ')}"
            ) from None
    filled = read_conllu(train, multiple_roots=tags_only).filled_columns()
    tags = [c for c in filled if c in ("UPOS", "XPOS", "FEATS", "LEMMA")]
    missing = missing_columns(tags, dev_tb)
    if missing:
        raise ValueError(
            f"{dev}: the dev set leaves {', '.join(missing)} empty ('_' on most words), which the "
            f"training set {train} fills: give a tagged dev set"
        )


def _shortlisted(k: int, candidates: int | None, full_steps: int, rerank_every: int) -> bool:
    """Whether step k (0-based) of the cheaper variant re-evaluates only its shortlist."""
    return candidates is not None and k >= full_steps and k % rerank_every != 0


def planned_steps(
    pool_size: int, limit: int | None, candidates: int | None, full_steps: int, rerank_every: int
) -> list[int]:
    """How many candidates each step of a run trains (step k's have k + 1 templates)."""
    n = min(limit or pool_size, pool_size)
    return [
        min(candidates, pool_size - k)
        if candidates is not None and _shortlisted(k, candidates, full_steps, rerank_every)
        else pool_size - k
        for k in range(n)
    ]


def planned_evaluations(
    pool_size: int, limit: int | None, candidates: int | None, full_steps: int, rerank_every: int
) -> int:
    """How many candidates a run trains (for a progress bar's length)."""
    return sum(planned_steps(pool_size, limit, candidates, full_steps, rerank_every))
