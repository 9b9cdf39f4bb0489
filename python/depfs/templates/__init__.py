"""Feature templates: the text language, the shipped sets and template files.

A template is a conjunction of atoms joined by ``&``, e.g. ``upos(h) & upos(m) & dir & dist``
(arc templates of the graph parser: h, m, h±1, h±2, m±1, m±2, in-between ``b``, sibling ``s``,
grandparent ``g``; ``sdist`` is the binned sibling-modifier distance) or ``upos(STACK_1 lc pw)``
(configuration templates of the transition parser: ``STACK_i`` / ``QUEUE_i`` followed by
navigation steps h, lc, rc, ls, rs, pw, fw, plus ``deprel``, ``lval``, ``rval`` and ``dist``).
Attributes: form, lower, lemma, upos, xpos, ``feat:KEY``, ``prefix:K``, ``suffix:K``, shape. A
template file has one template per line and ``#`` comments. Parsing gives canonical text, a
stable id and a cost estimate; errors raise :class:`depfs.errors.TemplateError` quoting the
template and its line.

The shipped sets are the ``*.txt`` files beside this module (also embedded in the Rust core):
``first_order`` (MST-style arc templates), ``second_order`` (siblings), ``labeler``,
``arc_eager`` (Zhang & Nivre 2011 style) and ``nilsson_nugues`` (a small address set).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .. import _core

__all__ = ["Template", "parse_templates", "template_sets", "template_set_text", "resolve_templates"]


@dataclass(frozen=True)
class Template:
    """One parsed template."""

    text: str
    """Canonical text (atoms sorted, lower-case names)."""
    id: int
    """Stable id: hash of the canonical text."""
    cost: float
    """Estimated evaluation cost in weight lookups."""
    order: int
    """2 when it reads the sibling or grandparent, else 1."""


def parse_templates(text: str, family: str = "arc", max_atoms: int = 3) -> list[Template]:
    """Parses template text (one per line); repeated templates keep their first occurrence."""
    return [Template(*t) for t in _core.parse_templates(text, family, max_atoms)]


def template_sets() -> list[str]:
    """Names of the template sets shipped with depfs."""
    return list(_core.template_set_names())


def template_set_text(name: str) -> str:
    """The text of a shipped template set."""
    return _core.template_set_text(name)[1]


def resolve_templates(spec: str | os.PathLike[str]) -> str:
    """Template text from a shipped set name, a template file path, or template text itself."""
    if isinstance(spec, str) and spec in template_sets():
        return template_set_text(spec)
    if isinstance(spec, os.PathLike) or (
        isinstance(spec, str) and "\n" not in spec and os.path.isfile(spec)
    ):
        with open(spec, encoding="utf-8") as f:
            return f.read()
    return str(spec)
