"""Small template sets and a small graph parser shared by the tests: they train in about
a second on toy or synthetic treebanks. tests/data/make_models.py made the checked-in
arc-eager model with AE_SET and the graph models with SIB (model files keep their own
template texts, so editing a set here does not change what those files hold)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from depfs import GraphParser

# Arc-eager configuration templates.
AE_SET = """\
upos(QUEUE_0)
form(QUEUE_0)
upos(STACK_0)
form(STACK_0)
upos(STACK_0) & upos(QUEUE_0)
upos(QUEUE_1)
upos(STACK_1)
deprel(STACK_0 lc)
deprel(STACK_0 rc)
upos(STACK_0 h)
lval(STACK_0) & upos(STACK_0)
upos(STACK_0) & upos(QUEUE_0) & dist
"""

# Graph parser: arc, sibling and labeler templates.
ARC = "upos(h) & upos(m) & dir & dist\nform(h) & upos(m)\nupos(h) & upos(b) & upos(m)\n"
ARC += "upos(m) & dir\n"
# Sibling templates that carry real information: with these the order-2 parse differs
# from the arc-only parse (see test_net_models.test_order_two_model_round_trip).
SIB = "upos(h) & upos(s) & upos(m)\nupos(s) & upos(m) & dir\n"
LAB = "upos(h) & upos(m) & dir\nform(m)\n"


def small_graph(order: int = 1, decoder: str = "eisner", **kw: Any) -> GraphParser:
    """A GraphParser over ARC / SIB / LAB with 3 epochs and max_bits=10; `kw` overrides
    any constructor argument."""
    args: dict[str, Any] = dict(
        order=order,
        decoder=decoder,
        epochs=3,
        arc_templates=ARC,
        sibling_templates=SIB,
        labeler_templates=LAB,
        max_bits=10,
    )
    args.update(kw)
    return GraphParser(**args)


def two_class_paths(path: Path, nouns: list[str], verbs: list[str]) -> Path:
    """A Brown paths file (BITSTRING TAB WORD TAB COUNT) whose first bit is the word's
    class (0 noun, 1 verb) and the rest its own number: the cluster tests' table."""
    lines = [f"0{k:06b}\t{w}\t{10 + k}" for k, w in enumerate(nouns)]
    lines += [f"1{k:06b}\t{w}\t{10 + k}" for k, w in enumerate(verbs)]
    path.write_text("\n".join(lines) + "\n")
    return path
