"""Exact decoders for graph-based dependency parsing (Rust core).

Conventions (those of ufal.chu_liu_edmonds, SuPar and Stanza): ``scores[dep, head]`` of shape
``(n+1, n+1)``, index 0 = ROOT, ``-inf`` marks a pruned arc; the ROOT row and the diagonal are
ignored. Heads come back as an int64 array with ``heads[0] = -1``. float32 and float64 arrays,
C- or F-ordered, are accepted (other array-likes are converted with ``numpy.asarray``). NaN,
``+inf``, wrong shapes or dtypes raise ``ValueError``; when the arcs that are not ``-inf`` admit
no tree, :class:`depfs.errors.NoSpanningTreeError` (a ``ValueError``) is raised.

- :func:`cle`: maximum spanning tree (Tarjan 1977 / Camerini et al. 1979), O(n²), with the
  exact single-root constraint (Zmigrod et al. 2020) on by default.
- :func:`eisner`: best projective tree (Eisner 1996), O(n³).
- :func:`eisner2`: projective, arc + adjacent-sibling scores (McDonald & Pereira 2006), O(n³).
- :func:`eisner_kbest`: the k best projective trees (Huang & Chiang 2005).
- :func:`cle_batch`, :func:`eisner_batch`: many sentences per call, GIL released.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import _core

__all__ = [
    "cle",
    "eisner",
    "eisner2",
    "eisner_kbest",
    "cle_batch",
    "eisner_batch",
    "tree_score",
]


def _array(x: Any) -> Any:
    return x if isinstance(x, np.ndarray) else np.asarray(x, dtype=np.float64)


def _check_threads(threads: int) -> int:
    from .base import check_threads

    return check_threads(threads)


def cle(scores: Any, single_root: bool = True) -> NDArray[np.int64]:
    """Maximum spanning tree of ``scores[dep, head]``; heads with ``heads[0] = -1``."""
    return _core.decode_cle(_array(scores), single_root)


def eisner(scores: Any, single_root: bool = True) -> NDArray[np.int64]:
    """Best projective tree of ``scores[dep, head]``; heads with ``heads[0] = -1``."""
    return _core.decode_eisner(_array(scores), single_root)


def eisner2(arc: Any, sib: Any, single_root: bool = True) -> NDArray[np.int64]:
    """Best projective tree under ``arc[dep, head]`` plus ``sib[dep, head, sibling]``.

    ``sibling`` is the child of ``head`` adjacent to ``dep`` on the same side, between the two;
    ``sibling == head`` when ``dep`` is the innermost child on that side.
    """
    return _core.decode_eisner2(_array(arc), _array(sib), single_root)


#: The most trees :func:`eisner_kbest` returns in one call.
MAX_KBEST = 100_000


def eisner_kbest(
    scores: Any, k: int, single_root: bool = True
) -> list[tuple[NDArray[np.int64], float]]:
    """The ``k`` best projective trees, best first, as ``(heads, score)`` (fewer if fewer
    exist); ``k`` at most :data:`MAX_KBEST` (time and memory grow with k: 100,000 trees of
    a 200-word sentence take about 3 s)."""
    if not 1 <= k <= MAX_KBEST:
        raise ValueError(f"eisner_kbest: k must be in 1..{MAX_KBEST:,}, got {k}")
    return _core.decode_eisner_kbest(_array(scores), k, single_root)


def cle_batch(
    matrices: Sequence[Any], single_root: bool = True, threads: int = 1
) -> list[NDArray[np.int64]]:
    """:func:`cle` over many matrices in one call with the GIL released.

    ``threads`` > 1 decodes on a rayon pool of that size (0 = one thread per core).
    """
    threads = _check_threads(threads)
    return _core.decode_cle_batch([_array(m) for m in matrices], single_root, threads)


def eisner_batch(
    matrices: Sequence[Any], single_root: bool = True, threads: int = 1
) -> list[NDArray[np.int64]]:
    """:func:`eisner` over many matrices in one call, GIL released (see :func:`cle_batch`)."""
    threads = _check_threads(threads)
    return _core.decode_eisner_batch([_array(m) for m in matrices], single_root, threads)


def tree_score(scores: Any, heads: Any) -> float:
    """Sum of ``scores[d, heads[d]]`` over the words ``d >= 1`` of the tree ``heads``
    (``heads[0]`` is ignored). NaN or ``+inf`` scores, heads that are not whole numbers
    and heads that do not form a tree rooted at 0 raise ``ValueError``."""
    s = _array(scores)
    h = np.asarray(heads)
    whole = h.dtype.kind in "iu" or (
        h.dtype.kind == "f" and bool(np.all(np.isfinite(h)) and np.all(h == np.round(h)))
    )
    if h.ndim != 1 or not whole:
        raise ValueError(f"heads must be whole numbers (positions), got {heads!r}")
    if s.dtype.kind == "f":
        bad = np.isnan(s) | (s == np.inf)
        if bad.any():
            d, g = (int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"score [{d}, {g}] is {s[d, g]} (scores must be finite or -inf)")
    positions = [int(x) for x in h]
    score = _core.decode_tree_score(s, positions)  # checks the shapes and the range
    for d in range(1, len(positions)):  # every word reaches the root 0
        w, steps = d, 0
        while w != 0 and steps < len(positions):
            w, steps = positions[w], steps + 1
        if w != 0:
            raise ValueError(f"heads {positions} are not a tree: word {d} does not reach 0")
    return score
