"""depfs: fast feature-based dependency parsing with automatically selected templates.

The names below are imported on first use (PEP 562), so that ``depfs parse`` and
``depfs --help`` do not pay for numpy and every parser module before they need them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._core import __version__
from ._lazy import attach
from ._limits import fewer_arenas_under_a_limit

# Not lazy: the function `evaluate` shares its name with its module, which would shadow
# it once any import of `depfs.evaluate` set the package's attribute (and it is cheap).
from .evaluate import Scores, Stats, evaluate, stats

# Before depfs starts any thread (the model's loader, the reader, the parse's).
fewer_arenas_under_a_limit()

# name -> the module that defines it (a submodule's own name: the submodule itself)
_LAZY = {
    "datasets": ".datasets",
    "decode": ".decode",
    "errors": ".errors",
    "templates": ".templates",
    "ArcEagerParser": ".arceager",
    "GraphParser": ".graph",
    "jackknife": ".jackknifing",
    "load": ".models",
    "model_info": ".models",
    "Tagger": ".tagger",
    "read_text": ".text",
    "text_to_treebank": ".text",
    "tokens_to_treebank": ".text",
    "Sentence": ".treebank",
    "Treebank": ".treebank",
    "margins": ".treebank",
    "read_conllu": ".treebank",
}

__all__ = ["__version__", "errors"]
__all__ += ["Sentence", "Treebank", "margins", "read_conllu"]
__all__ += ["ArcEagerParser", "GraphParser", "Tagger", "load", "model_info", "templates"]
__all__ += ["Scores", "Stats", "datasets", "evaluate", "stats"]
__all__ += ["decode", "jackknife"]
__all__ += ["read_text", "text_to_treebank", "tokens_to_treebank"]


__getattr__, __dir__ = attach(__name__, _LAZY)

if TYPE_CHECKING:
    from . import datasets, decode, errors, templates
    from .arceager import ArcEagerParser
    from .graph import GraphParser
    from .jackknifing import jackknife
    from .models import load, model_info
    from .tagger import Tagger
    from .text import read_text, text_to_treebank, tokens_to_treebank
    from .treebank import Sentence, Treebank, margins, read_conllu
