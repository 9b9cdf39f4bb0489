"""`depfs.load(path)`: reads any depfs model file and returns the parser it holds."""

from __future__ import annotations

import os
from typing import Any

from . import _core
from .errors import ModelError

__all__ = ["load"]


def load(path: str | os.PathLike[str]) -> Any:
    """Loads a model file; returns e.g. a :class:`depfs.GraphParser`."""
    kind = _core.model_kind(path)
    if kind == "graph":
        from .graph import GraphParser

        return GraphParser.load(path)
    if kind == "arc-eager":
        from .arceager import ArcEagerParser

        return ArcEagerParser.load(path)
    if kind == "ensemble":
        from .arceager import Ensemble

        return Ensemble.load(path)
    raise ModelError(f"{os.fspath(path)}: unknown model kind {kind!r}")
