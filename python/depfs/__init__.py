"""depfs: fast feature-based dependency parsing with automatically selected templates."""

from __future__ import annotations

from . import datasets, decode, errors, templates
from ._core import __version__
from .arceager import ArcEagerParser
from .evaluate import Scores, Stats, evaluate, stats
from .graph import GraphParser
from .jackknifing import jackknife
from .models import load, model_info
from .tagger import Tagger
from .text import read_text, text_to_treebank, tokens_to_treebank
from .treebank import Sentence, Treebank, margins, read_conllu

__all__ = ["__version__", "errors"]
__all__ += ["Sentence", "Treebank", "margins", "read_conllu"]
__all__ += ["ArcEagerParser", "GraphParser", "Tagger", "load", "model_info", "templates"]
__all__ += ["Scores", "Stats", "datasets", "evaluate", "stats"]
__all__ += ["decode", "jackknife"]
__all__ += ["read_text", "text_to_treebank", "tokens_to_treebank"]
