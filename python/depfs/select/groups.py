"""Template orders and groups as files, and cutting an order into groups.

An order file is a template file: one template per line, each followed by a comment
with the dev score after that prefix (``# score 3 las 84.21``). A wrapper run with a base
(``--base``, templates always present) writes the base first, then :data:`RANKED_MARK`, then
the ranked templates, so that the file trains the set each score was measured on. A groups
file has a ``# group k`` line before each group; it may hold the first-order groups, then a line
``# order 2``, then the sibling groups. Both load as ordinary template files
(``depfs train --templates FILE``), the comments being comments.

:func:`cut_groups` follows He, Daumé & Eisner (2013, §4.1): groups of roughly equal
dev-score gain along the order (their 1, 4, 10, 12, 47, 33, 161).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from ..files import write_text_atomic
from ..templates import Template, TemplateSet, resolve_templates

_SCORE = re.compile(r"^#\s*score\s+(\d+)\s+(\w+)\s+(\S+)\s*$")
_SCORE_LIKE = re.compile(r"^#\s*score\b")
_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]*)?$")
_GROUP = re.compile(r"^#\s*group\s+(\d+)\s*$")
_ORDER = re.compile(r"^#\s*order\s+([12])\s*$")
_LINE = re.compile(r" \(line \d+\)")

#: In an order file, between a wrapper's base templates and the ranked ones.
RANKED_MARK = "# ranked (each score below is with the base templates above)"


def _max_atoms_line(templates: Sequence[Template]) -> list[str]:
    """`#! max_atoms = N` when a template has more word atoms than the default 3."""
    widest = max((sum(1 for a, _ in t.atoms if a) for t in templates), default=0)
    return [f"#! max_atoms = {widest}"] if widest > 3 else []


def order_text(
    order: Sequence[Template],
    scores: Sequence[float],
    metric: str,
    header: str = "",
    base: Sequence[Template] = (),
) -> str:
    """An order file: the `base` templates (if any) and :data:`RANKED_MARK`, then each
    ranked template and the dev score after its prefix (and a `#! max_atoms = N` line
    when a template has more word atoms than the default 3)."""
    lines = [f"# {line}" for line in header.splitlines()] + _max_atoms_line([*base, *order])
    if base:
        lines += [t.text for t in base] + [RANKED_MARK]
    for k, (t, s) in enumerate(zip(order, scores), 1):
        lines += [t.text, f"# score {k} {metric} {s:.2f}"]
    return "\n".join(lines) + "\n"


def _header_family(text: str) -> str | None:
    """The template family of the parser a wrapper's order file names in its header."""
    from .engine import FAMILY

    for line in text.splitlines()[:3]:
        words = line.split()
        if words[:4] == ["#", "depfs", "select", "wrapper"] and "--parser" in words:
            i = words.index("--parser") + 1
            return FAMILY.get(words[i]) if i < len(words) else None
    return None


class OrderFile(NamedTuple):
    """An order file as :func:`read_order_file` reads it."""

    templates: TemplateSet  # the ranked templates
    scores: list[float]  # the dev score after each prefix (of the base and the ranked)
    base: TemplateSet  # the base they were ranked on (empty: none)


def read_order(
    path: str | os.PathLike[str], family: str | None = None
) -> tuple[TemplateSet, list[float]]:
    """:func:`read_order_file`'s templates and scores."""
    order = read_order_file(path, family)
    return order.templates, order.scores


def read_order_base(path: str | os.PathLike[str], family: str | None = None) -> TemplateSet:
    """The base templates of an order file (those before :data:`RANKED_MARK`, written by
    a wrapper run with a base), in the family :func:`read_order` reads it in; empty when
    it has none."""
    return read_order_file(path, family).base


def read_order_file(path: str | os.PathLike[str], family: str | None = None) -> OrderFile:
    """Templates of an order file, or of a shipped order by its set name (``arc_eager_en_ewt``,
    in its own family), and the scores after each prefix (empty when the file has no score
    comments). A file of that name in the working directory wins over the set. `family`
    defaults to the shipped set's, else to the parser named in the file's header (``#
    depfs select wrapper --parser arc-eager ...`` gives ``"config"``), else ``"arc"``; one
    that differs from a shipped set's raises ValueError.

    The scores are checked line by line (ValueError naming the file and line): each
    ``# score K METRIC VALUE`` follows the K-th template, with a finite VALUE; the scored
    templates are a prefix of the order (a partial order scores its first templates); no
    template comes twice."""
    import math

    name, text, family = _order_source(path, family)  # (read once: it may be a pipe)
    base_text, text = _base_split(text)
    try:
        order = TemplateSet.parse(text, family)  # refuses a bad template, naming its line
        base = TemplateSet.parse(base_text, family)
    except ValueError as e:
        raise type(e)(f"{name}: {e}") from None
    scores: list[float] = []
    seen: dict[str, int] = {}  # canonical text -> line
    directives: list[str] = []
    last = 0  # line of the last template
    unscored: int | None = None  # line of the first template left without a score
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("#!"):
            directives.append(line)
        elif _SCORE_LIKE.match(line):
            m = _SCORE.match(line)
            if m is None:
                raise ValueError(f"{name}:{n}: expected '# score K METRIC VALUE', found {line!r}")
            value = float(m.group(3)) if _NUMBER.match(m.group(3)) else math.nan
            if not math.isfinite(value):
                raise ValueError(f"{name}:{n}: score {m.group(3)!r} is not a finite number")
            if unscored is not None:
                raise ValueError(
                    f"{name}:{n}: a score after line {unscored}'s template, which has none: "
                    "the scored templates come first"
                )
            if int(m.group(1)) != len(seen) or len(scores) != len(seen) - 1:
                raise ValueError(
                    f"{name}:{n}: '# score {m.group(1)}' after template {len(seen)}: each "
                    "template's score comes right after it, numbered by its place in the order"
                )
            scores.append(value)
        elif line and not line.startswith("#"):
            canonical = TemplateSet.parse("\n".join([*directives, line]), family)[0].text
            if canonical in seen:
                raise ValueError(f"{name}:{n}: the template of line {seen[canonical]} again")
            if scores and len(scores) < len(seen) and unscored is None:
                unscored = last
            seen[canonical], last = n, n
    return OrderFile(order, scores, base)


def _order_source(path: str | os.PathLike[str], family: str | None) -> tuple[str, str, str]:
    """An order's name, text and family (see :func:`read_order`)."""
    from .. import _core
    from ..templates import template_sets

    name = os.fspath(path)
    if isinstance(path, str) and path in template_sets() and not os.path.exists(path):
        own, text = _core.template_set_text(path)
        if family is not None and family != own:
            raise ValueError(f"template set {path!r} is {own}, not {family}")
        family = own
    elif os.path.isdir(path):
        raise IsADirectoryError(f"{name}: a folder, not an order file")
    elif not os.path.exists(path):
        shipped = ", ".join(template_sets())
        raise FileNotFoundError(f"no order file or shipped set {name!r} (shipped: {shipped})")
    else:
        text = resolve_templates(Path(path))  # (a file not UTF-8: named, with its line)
    return name, text, family or _header_family(text) or "arc"


def _base_split(text: str) -> tuple[str, str]:
    """An order file's text as (its base, the rest): the lines before :data:`RANKED_MARK`
    are the base's; in the rest they are blanked but for comments and directives, so that
    its line numbers stay the file's. No mark: no base. O(lines)."""
    lines = text.splitlines()
    mark = next((i for i, line in enumerate(lines) if line.strip() == RANKED_MARK), None)
    if mark is None:
        return "", text
    head = lines[:mark]
    kept = [line if line.strip().startswith("#") else "" for line in head]
    return "\n".join(head), "\n".join([*kept, *lines[mark:]])


def cut_groups(scores: Sequence[float], k: int, start: float | None = None) -> list[int]:
    """Group sizes (summing to len(scores)) cutting an order into `k` groups of roughly
    equal gain: group j ends at the first prefix whose gain over `start` (default: the
    first score, so the first template is a group of its own as in He et al.) reaches
    j/k of the total. Every group gets at least one template. O(len(scores))."""
    n = len(scores)
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if n == 0:
        return []
    k = min(k, n)
    if start is None:
        # The first template alone is group 1; the rest share the remaining gain.
        if k == 1:
            return [n]
        return [1] + cut_groups(scores[1:], k - 1, scores[0])
    best = max(scores)
    total = best - start
    ends: list[int] = []
    for j in range(1, k):
        target = start + total * j / k
        lo = (ends[-1] + 1) if ends else 1
        hi = n - (k - j)  # leave at least one template for each later group
        i = next((i for i in range(lo, hi + 1) if scores[i - 1] >= target), hi)
        ends.append(max(i, lo))
    ends.append(n)
    sizes = [ends[0]] + [b - a for a, b in zip(ends, ends[1:])]
    return sizes


def groups_text(
    groups: Sequence[Sequence[Template]],
    second: Sequence[Sequence[Template]] = (),
    header: str = "",
) -> str:
    """A groups file: `header`'s lines as comments (what made it), ``# group k`` before
    each group; sibling groups after ``# order 2``."""
    lines = [f"# {line}" for line in header.splitlines()]
    lines += _max_atoms_line([t for g in (*groups, *second) for t in g])
    for g, ts in enumerate(groups, 1):
        lines.append(f"# group {g}")
        lines += [t.text for t in ts]
    if second:
        lines.append("# order 2")
        for g, ts in enumerate(second, 1):
            lines.append(f"# group {g}")
            lines += [t.text for t in ts]
    return "\n".join(lines) + "\n"


def read_groups(path: str | os.PathLike[str], family: str = "arc") -> dict[int, list[TemplateSet]]:
    """The groups of a groups file by order (1, and 2 if it has ``# order 2``)."""
    return parse_groups(resolve_templates(Path(path)), str(path), family)


def parse_groups(
    text: str, source: str = "<text>", family: str = "arc"
) -> dict[int, list[TemplateSet]]:
    """The groups of a groups file's text by order; `source` names it in errors.

    Checked line by line (a ValueError naming `source` and the line): each directive
    (``#! max_atoms = N``) and template parses; each ``# group k`` line has a template; no
    template comes twice in an order (the model's templates are the groups' one after the
    other: a template in two groups would be one template that two groups claim). A
    directive applies to the templates after it, as in a template file."""
    # Per order: (line of '# group k', [(line, template, the directive before it)]).
    out: dict[int, list[tuple[int, list[tuple[int, str, str]]]]] = {1: []}
    order, directive = 1, ""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("#!"):
            try:
                TemplateSet.parse(line, family)
            except ValueError as e:  # its "(line 1)" counts within the one line
                raise type(e)(f"{source}:{n}: {_LINE.sub('', str(e))}") from None
            directive = line
        elif m := _ORDER.match(line):
            order = int(m.group(1))
            out.setdefault(order, [])
        elif _GROUP.match(line):
            out[order].append((n, []))
        elif line and not line.startswith("#"):
            if not out[order]:
                raise ValueError(f"{source}:{n}: template before the first '# group k' line")
            out[order][-1][1].append((n, line, directive))
    groups: dict[int, list[TemplateSet]] = {}
    for o, gs in out.items():
        seen: dict[str, int] = {}  # canonical text -> line
        for head, g in gs:
            if not g:
                raise ValueError(f"{source}:{head}: a group with no template")
            for n, line, before in g:
                try:
                    parsed = TemplateSet.parse("\n".join([before, line]), family)
                except ValueError as e:  # its "(line 2)" counts within the one line
                    raise type(e)(f"{source}:{n}: {_LINE.sub('', str(e))}") from None
                for t in parsed:
                    if t.text in seen:
                        raise ValueError(
                            f"{source}:{n}: the template of line {seen[t.text]} again (each "
                            "template belongs to one group)"
                        )
                    seen[t.text] = n
        if gs:
            # Each template after its own directive (a line of its own only where it changes).
            groups[o] = [
                TemplateSet.parse(
                    "\n".join(
                        f"{d}\n{t}" if i == 0 or d != g[i - 1][2] else t
                        for i, (_, t, d) in enumerate(g)
                    ),
                    family,
                )
                for _, g in gs
            ]
    return groups


def write(path: str | os.PathLike[str], text: str) -> None:
    write_text_atomic(path, text)
