"""depfs: fast feature-based dependency parsing with automatically selected templates."""

from __future__ import annotations

from . import decode, errors
from ._core import __version__

__all__ = ["__version__", "errors"]
__all__ += ["decode"]
