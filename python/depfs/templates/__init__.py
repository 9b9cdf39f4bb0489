"""Feature templates as values: the text language, templates, template sets, shipped sets.

A template is a conjunction of atoms joined by ``&``, e.g. ``upos(h) & upos(m) & dir & dist``
(arc templates of the graph parser: h, m, h±1, h±2, m±1, m±2, in-between ``b``, sibling ``s``,
grandparent ``g``; ``sdist`` is the binned sibling-modifier distance) or ``upos(STACK_1 lc pw)``
(configuration templates of the transition parser: ``STACK_i`` / ``QUEUE_i`` followed by
navigation steps h, lc, rc, ls, rs, pw, fw, plus ``deprel``, ``lval``, ``rval`` and ``dist``).
Attributes: form, lower, lemma, upos, xpos, ``feat:KEY``, ``prefix:K``, ``suffix:K``, shape. A
template file has one template per line and ``#`` comments; a ``#! max_atoms = N`` line raises
the bound on word atoms (default 3) for the lines after it.

:class:`Template` is a frozen, hashable value: canonical ``text`` (also ``str(t)``), stable ``id``
(hash of the canonical text), ``cost`` estimate, ``order`` (2 when it reads ``s`` or ``g``),
``family`` (``"arc"``, ``"config"`` or ``"token"``: the tagger's) and ``atoms``. Equality is by
canonical text and family.

Atoms are ``(address, attribute)`` string pairs in canonical order and spelling::

    upos(STACK_1 lc pw) & form(QUEUE_0) -> (("STACK_1 lc pw", "upos"), ("QUEUE_0", "form"))
    upos(h) & upos(m) & dir & dist -> (("h", "upos"), ("m", "upos"), ("", "dir"), ("", "dist"))
    xpos(b) & feat:Case(m-1) & sdist -> (("m-1", "feat:Case"), ("b", "xpos"), ("", "sdist"))

A word atom's address is an arc address (``h``, ``m``, ``h+1`` ... ``m-2``, ``b``, ``s``, ``g``)
or a configuration address (``STACK_i`` / ``QUEUE_i`` and navigation steps, space separated); its
attribute is a word attribute or, in configuration templates, ``deprel``, ``lval``, ``rval``. The
edge atoms ``dir``, ``dist`` and ``sdist`` have the empty address ``""``. A pair is written back as
``attribute(address)`` (or the bare attribute for an empty address), so
``Template.from_atoms(t.atoms, t.family) == t`` with the same id. Templates are always built by
the Rust parser (:meth:`Template.parse`, :meth:`Template.from_atoms`), never by hand, so their
canonical text and id are exactly those the parsers use.

:class:`TemplateSet` is an ordered, duplicate-free, immutable sequence of templates of one family
with ``text`` (a template file), ``ids``, ``cost``, ``subset``, ``+`` / ``add``, indexing and
slicing; :meth:`TemplateSet.load` reads a shipped set or a file. The parsers accept a set name, a
file path, template text, a :class:`TemplateSet` or a list of :class:`Template`
(:func:`resolve_templates`).

Errors in template text or atoms raise :class:`depfs.errors.TemplateError` quoting the template
(and its line). The shipped sets live in the Rust core crate (``rust/depfs-core/src/templates/
sets/``) and reach Python through ``depfs._core``: ``first_order`` (MST-style arc templates),
``first_order_fast``, ``second_order`` (siblings), ``labeler``, ``arc_eager`` (Zhang & Nivre 2011
style) and ``nilsson_nugues`` (a small address set).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

from .. import _core

__all__ = [
    "Template",
    "TemplateSet",
    "parse_templates",
    "template_sets",
    "template_set_text",
    "resolve_templates",
]

FAMILIES = ("arc", "config", "token")

Atom = tuple[str, str]
"""An atom as an ``(address, attribute)`` pair; the address is ``""`` for dir, dist, sdist."""


def _check_family(family: str) -> str:
    if family not in FAMILIES:
        raise ValueError(f"unknown template family {family!r} (arc or config)")
    return family


@dataclass(frozen=True)
class Template:
    """One template: a frozen value, equal (and hashed) by canonical text and family.

    Build it with :meth:`parse` or :meth:`from_atoms` (or get it from :func:`parse_templates`,
    :class:`TemplateSet`); both go through the Rust parser.
    """

    text: str
    """Canonical text (atoms sorted, lower-case names)."""
    id: int = field(compare=False)
    """Stable id: hash of the canonical text."""
    cost: float = field(compare=False)
    """Estimated evaluation cost in weight lookups."""
    order: int = field(compare=False)
    """2 when it reads the sibling or grandparent, else 1."""
    family: str = "arc"
    """``"arc"`` (graph parser), ``"config"`` (transition parser) or ``"token"`` (tagger)."""
    atoms: tuple[Atom, ...] = field(default=(), compare=False)
    """``(address, attribute)`` pairs in canonical order; address ``""`` for dir, dist, sdist."""

    @classmethod
    def _from_core(
        cls, t: tuple[str, int, float, int, list[tuple[str, str]]], family: str
    ) -> Template:
        text, id_, cost, order, atoms = t
        return cls(text, id_, cost, order, family, tuple((a, b) for a, b in atoms))

    @classmethod
    def parse(cls, text: str, family: str = "arc", *, max_atoms: int | None = None) -> Template:
        """Parses one template. ``max_atoms`` bounds its word atoms (default: the language's
        bound, 8; template files default to 3)."""
        if len(text.splitlines()) > 1:  # (a line with its line end is one template)
            raise ValueError(f"one template per call, got {len(text.splitlines())} lines")
        if max_atoms is not None:
            from ..base import check_count

            check_count(max_atoms, "max_atoms", 1)  # (an OverflowError of the core, unnamed)
        return cls._from_core(_core.parse_template(text, _check_family(family), max_atoms), family)

    @classmethod
    def from_atoms(
        cls, atoms: Iterable[Atom], family: str = "arc", *, max_atoms: int | None = None
    ) -> Template:
        """Builds a template from ``(address, attribute)`` pairs, in any order.

        >>> Template.from_atoms([("m", "upos"), ("", "dir"), ("h", "upos")]).text
        'upos(h) & upos(m) & dir'
        """
        pairs = [(str(a), str(b)) for a, b in atoms]
        return cls._from_core(
            _core.template_from_atoms(pairs, _check_family(family), max_atoms), family
        )

    @property
    def n_word_atoms(self) -> int:
        """Number of word atoms (those with an address; the ones ``max_atoms`` bounds)."""
        return sum(1 for address, _ in self.atoms if address)

    def __str__(self) -> str:
        return self.text


class TemplateSet(Sequence[Template]):
    """An ordered, duplicate-free, immutable sequence of templates of one family.

    ``TemplateSet(templates, family=None)``: repeated templates keep their first occurrence;
    the family defaults to that of the templates (an empty set needs it). Operations return
    new sets.
    """

    __slots__ = ("_family", "_templates")

    def __init__(self, templates: Iterable[Template] = (), family: str | None = None) -> None:
        items: list[Template] = []
        seen: set[Template] = set()
        for t in templates:
            if not isinstance(t, Template):
                raise TypeError(f"a TemplateSet holds Template values, got {type(t).__name__}")
            if family is None:
                family = t.family
            if t.family != family:
                raise ValueError(
                    f"template {t.text!r} is a {t.family} template, the set is {family}"
                )
            if t not in seen:
                seen.add(t)
                items.append(t)
        if family is None:
            raise ValueError("an empty TemplateSet needs a family ('arc' or 'config')")
        self._family = _check_family(family)
        self._templates = tuple(items)

    @classmethod
    def parse(cls, text: str, family: str = "arc", max_atoms: int = 3) -> TemplateSet:
        """Parses template file text (one template per line, ``#`` comments, ``#!`` directives)."""
        return cls(parse_templates(text, family, max_atoms), family)

    @classmethod
    def load(cls, name_or_path: str | os.PathLike[str], family: str | None = None) -> TemplateSet:
        """A shipped set by name (its own family) or a template file (family default ``"arc"``).

        A ``family`` that differs from a shipped set's raises ValueError.
        """
        if isinstance(name_or_path, str) and name_or_path in template_sets():
            own, text = _core.template_set_text(name_or_path)
            if family is not None and family != own:
                raise ValueError(f"template set {name_or_path!r} is {own}, not {family}")
            return cls.parse(text, own)
        if not os.path.isfile(name_or_path):
            raise FileNotFoundError(
                f"no template set or file {os.fspath(name_or_path)!r} "
                f"(shipped: {', '.join(template_sets())})"
            )
        # (resolve_templates: a file that is not UTF-8 is named, with its line)
        return cls.parse(resolve_templates(Path(name_or_path)), family or "arc")

    @property
    def family(self) -> str:
        """``"arc"`` or ``"config"``."""
        return self._family

    @property
    def templates(self) -> tuple[Template, ...]:
        return self._templates

    @property
    def text(self) -> str:
        """A template file of the set: canonical texts, one per line, parsing back to this set.

        Starts with a ``#! max_atoms = N`` line when a template has more word atoms than the
        default bound (3).
        """
        lines = [t.text for t in self._templates]
        widest = max((t.n_word_atoms for t in self._templates), default=0)
        if widest > _core.TEMPLATE_DEFAULT_MAX_ATOMS:
            lines.insert(0, f"#! max_atoms = {widest}")
        return "".join(line + "\n" for line in lines)

    @property
    def ids(self) -> tuple[int, ...]:
        return tuple(t.id for t in self._templates)

    @property
    def cost(self) -> float:
        """Sum of the templates' cost estimates."""
        return sum(t.cost for t in self._templates)

    @property
    def order(self) -> int:
        """Highest order of any template (1 or 2)."""
        return max((t.order for t in self._templates), default=1)

    def __len__(self) -> int:
        return len(self._templates)

    def __iter__(self) -> Iterator[Template]:
        return iter(self._templates)

    @overload
    def __getitem__(self, index: int) -> Template: ...
    @overload
    def __getitem__(self, index: slice) -> TemplateSet: ...
    def __getitem__(self, index: int | slice) -> Template | TemplateSet:
        if isinstance(index, slice):
            return TemplateSet(self._templates[index], self._family)
        return self._templates[index]

    def __contains__(self, item: object) -> bool:
        return item in self._templates

    def subset(self, indices: Iterable[int]) -> TemplateSet:
        """The templates at ``indices``, in that order (repeats dropped).

        IndexError when an index is out of range."""
        return TemplateSet([self._templates[i] for i in indices], self._family)

    def add(self, *templates: Template | str) -> TemplateSet:
        """A new set with ``templates`` appended (text is parsed in the set's family);
        templates already in the set are skipped."""
        new = [t if isinstance(t, Template) else Template.parse(t, self._family) for t in templates]
        return TemplateSet([*self._templates, *new], self._family)

    def __add__(self, other: object) -> TemplateSet:
        if isinstance(other, TemplateSet):
            return TemplateSet([*self._templates, *other._templates], self._family)
        if isinstance(other, (list, tuple)):
            return self.add(*other)
        return NotImplemented

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TemplateSet):
            return NotImplemented
        return self._family == other._family and self._templates == other._templates

    def __hash__(self) -> int:
        return hash((self._family, self._templates))

    def __repr__(self) -> str:
        return f"<TemplateSet {self._family}, {len(self)} templates, cost {self.cost:.1f}>"


def model_text(templates: Iterable[str]) -> str:
    """Template file text of a model's templates (as the model lists them), which may be
    wider than the default bound on word atoms (a set's ``#! max_atoms`` allowed them):
    its first line allows the language's bound, so the text trains again as it is."""
    lines = [f"#! max_atoms = {_core.TEMPLATE_MAX_ATOMS_BOUND}", *templates]
    return "".join(line + "\n" for line in lines)


def parse_templates(text: str, family: str = "arc", max_atoms: int = 3) -> list[Template]:
    """Parses template text (one per line); repeated templates keep their first occurrence."""
    return [Template._from_core(t, family) for t in _core.parse_templates(text, family, max_atoms)]


def template_sets() -> list[str]:
    """Names of the template sets shipped with depfs."""
    return list(_core.template_set_names())


def template_set_text(name: str) -> str:
    """The file text of a shipped template set."""
    return _core.template_set_text(name)[1]


def _may_be_a_template(line: str) -> bool:
    """Whether one line of text can be template text: it has an atom ``attr(address)``,
    is a comment, or parses as a template of some family (``dir & sdist``). A misspelt
    set name or a missing file's path is none of these: it was parsed as a template
    ("expected attr(address), dir or dist")."""
    text = line.strip()
    if not text or text.startswith("#") or "(" in text:
        return True
    for family in FAMILIES:
        try:
            _core.parse_templates(text, family, _core.TEMPLATE_MAX_ATOMS_BOUND)
            return True
        except ValueError:
            continue
    return False


def resolve_templates(
    spec: str | os.PathLike[str] | TemplateSet | Iterable[Template], family: str | None = None
) -> str:
    """Template text from a shipped set name, a template file path, template text itself, a
    :class:`TemplateSet` or a list of :class:`Template`.

    With ``family``, a set (or templates) of the other family raises ValueError.
    """
    if isinstance(spec, str) and spec in template_sets():
        its_family, text = _core.template_set_text(spec)
        if family is not None and its_family != family:
            raise ValueError(
                f"template set {spec} holds {its_family} templates; this needs {family} templates"
            )
        return text
    if isinstance(spec, os.PathLike) or (
        isinstance(spec, str) and "\n" not in spec and os.path.isfile(spec)
    ):
        if os.path.isdir(spec):
            raise IsADirectoryError(f"{os.fspath(spec)}: a folder, not a template file")
        from ..files import MODEL_MAGIC

        with open(spec, "rb") as f:
            data = f.read()
        if data.startswith(MODEL_MAGIC):
            raise ValueError(f"{os.fspath(spec)}: a depfs model file, not a template file")
        try:
            return data.decode("utf-8").removeprefix("\ufeff")  # a BOM, as CoNLL-U's
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            raise ValueError(f"{os.fspath(spec)}:{line}: not UTF-8 text") from None
    if isinstance(spec, str):
        if "\n" not in spec and os.path.isdir(spec):
            raise IsADirectoryError(f"{spec}: a folder, not a template file")
        if "\n" not in spec and not _may_be_a_template(spec):
            raise FileNotFoundError(
                f"{spec}: no such template file or shipped set (the sets: "
                f"{', '.join(template_sets())})"
            )
        return spec
    if not isinstance(spec, Iterable):  # (5: "'int' object is not iterable")
        raise TypeError(
            "templates must be a set name, a file, template text or a list of templates, "
            f"got {type(spec).__name__}"
        )
    templates = spec if isinstance(spec, TemplateSet) else TemplateSet(spec, family)
    if family is not None and templates.family != family:
        raise ValueError(f"expected {family} templates, got a {templates.family} set")
    return templates.text
