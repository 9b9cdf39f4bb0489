"""The arc-eager transition system (Nivre 2003) from Python.

- `projectivize(treebank)` / `deprojectivize(treebank)`: pseudo-projective parsing
  (Nivre & Nilsson 2005, HEAD encoding: a lifted word's label becomes `r↑h`).
- `oracle_trajectories(treebank, beta, random_state)`: the dynamic oracle of Goldberg &
  Nivre (2012) along trajectories that follow the oracle with probability `beta` and a
  random valid move otherwise; every loop runs in Rust, arrays come back.

Move kinds are numbered 0 SHIFT, 1 REDUCE, 2 LEFT-ARC, 3 RIGHT-ARC (`MOVES`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy.typing as npt

from . import _core

MOVES = ("SHIFT", "REDUCE", "LEFT-ARC", "RIGHT-ARC")


def projectivize(treebank: _core.Treebank) -> tuple[_core.Treebank, dict[str, int]]:
    """A projective copy (lifted labels encoded `r↑h`) and counts of what was lifted."""
    return _core.arceager_projectivize(treebank)


def deprojectivize(treebank: _core.Treebank) -> _core.Treebank:
    """A copy with every `r↑h` word moved back under the nearest `h` of its head's subtree."""
    return _core.arceager_deprojectivize(treebank)


def oracle_trajectories(
    treebank: _core.Treebank,
    beta: float = 1.0,
    random_state: int = 0,
    sentences: Sequence[int] | None = None,
) -> dict[str, npt.NDArray[Any]]:
    """Configurations of the sentences with a complete projective tree, as arrays:
    `sentence`, `s0`, `b0` (n,); `cost` (n, 4) of each move kind (-1 = invalid);
    `followed` and `oracle` (n,) move kinds."""
    return _core.arceager_oracle_trajectories(
        treebank, beta, random_state, None if sentences is None else list(sentences)
    )
