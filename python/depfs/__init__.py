"""depfs: fast feature-based dependency parsing with automatically selected templates."""

from __future__ import annotations

from . import errors
from ._core import __version__
from .treebank import Sentence, Treebank, read_conllu

__all__ = ["__version__", "errors"]
__all__ += ["Sentence", "Treebank", "read_conllu"]
