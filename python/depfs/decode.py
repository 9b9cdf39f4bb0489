"""Exact decoders for graph-based dependency parsing (Rust core).

Conventions (those of ufal.chu_liu_edmonds, SuPar and Stanza): ``scores[dep, head]`` of shape
``(n+1, n+1)``, index 0 = ROOT, ``-inf`` marks a pruned arc; the ROOT row and the diagonal are
ignored. Heads come back as an int64 array with ``heads[0] = -1``. float32 and float64 arrays,
C- or F-ordered, are read as they are; every other real dtype (integers, float16, floats of
the other byte order such as ``>f8``), in an array
or a nested list alike, is converted to float64, as ``numpy.asarray(x, float64)`` does (exact
for integers up to 2**53); bool, complex, object and longdouble arrays are refused. NaN or
``+inf`` anywhere (the ignored cells too: a NaN is a bug upstream), wrong shapes or dtypes
raise ``ValueError``; when the arcs that are not ``-inf`` admit
no tree, :class:`depfs.errors.NoSpanningTreeError` (a ``ValueError``) is raised. Finite scores
beyond ±1e300 (masks such as ``np.finfo(np.float64).min``) are decoded as ±1e300, so that
chart sums never overflow to ``-inf``; a tree that needs masked arcs is then still found, as
any tree scored so. A matrix too large for memory raises ``ValueError`` naming n, and a long
single call stops on Ctrl-C (``KeyboardInterrupt``).

- :func:`cle`: maximum spanning tree (Tarjan 1977 / Camerini et al. 1979), O(n²), with the
  exact single-root constraint (Zmigrod et al. 2020) on by default.
- :func:`eisner`: best projective tree (Eisner 1996), O(n³).
- :func:`eisner2`: projective, arc + adjacent-sibling scores (McDonald & Pereira 2006), O(n³).
- :func:`eisner_kbest`: the k best projective trees (Huang & Chiang 2005).
- :func:`cle_batch`, :func:`eisner_batch`: many sentences per call, GIL released.
"""

from __future__ import annotations

import operator
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
    """An ndarray as it is (the core converts integer and float16 dtypes to float64 and
    refuses the rest); anything else through ``numpy.asarray``, so a list follows the same
    rule as the array it makes. A masked array is refused: its mask would be dropped and
    the masked arcs scored as they are."""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(
            "a masked array's mask would be ignored: give scores.filled(-np.inf), whose "
            "masked arcs are then never chosen"
        )
    return x if isinstance(x, np.ndarray) else np.asarray(x)


def _flag(value: Any) -> bool:
    """single_root: a bool or numpy bool (not "no", which is true)."""
    if value is True or value is False:
        return value
    if not isinstance(value, np.bool_):
        raise TypeError(f"single_root must be True or False, got {value!r}")
    return bool(value)


def _k(value: Any) -> int:
    """k of eisner_kbest: an integer (numpy's too), not a bool or a float."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"eisner_kbest: k must be an integer, got {value!r}")
    try:
        k = operator.index(value)
    except TypeError:
        raise TypeError(f"eisner_kbest: k must be an integer, got {value!r}") from None
    if not 1 <= k <= MAX_KBEST:
        raise ValueError(f"eisner_kbest: k must be in 1..{MAX_KBEST:,}, got {k}")
    return k


def _check_threads(threads: int) -> int:
    from .base import check_threads

    return check_threads(threads)


def cle(scores: Any, single_root: bool = True) -> NDArray[np.int64]:
    """Maximum spanning tree of ``scores[dep, head]``; heads with ``heads[0] = -1``."""
    if single_root is not True:  # the default costs one comparison
        single_root = _flag(single_root)
    return _core.decode_cle(_array(scores), single_root)


def eisner(scores: Any, single_root: bool = True) -> NDArray[np.int64]:
    """Best projective tree of ``scores[dep, head]``; heads with ``heads[0] = -1``."""
    if single_root is not True:  # the default costs one comparison
        single_root = _flag(single_root)
    return _core.decode_eisner(_array(scores), single_root)


def eisner2(arc: Any, sib: Any, single_root: bool = True) -> NDArray[np.int64]:
    """Best projective tree under ``arc[dep, head]`` plus ``sib[dep, head, sibling]``.

    ``sibling`` is the child of ``head`` adjacent to ``dep`` on the same side, between the two;
    ``sibling == head`` when ``dep`` is the innermost child on that side.
    """
    if single_root is not True:  # the default costs one comparison
        single_root = _flag(single_root)
    return _core.decode_eisner2(_array(arc), _array(sib), single_root)


#: The most trees :func:`eisner_kbest` returns in one call.
MAX_KBEST = 100_000


def eisner_kbest(
    scores: Any, k: int, single_root: bool = True
) -> list[tuple[NDArray[np.int64], float]]:
    """The ``k`` best projective trees, best first, as ``(heads, score)`` (fewer if fewer
    exist); ``k`` at most :data:`MAX_KBEST` (time and memory grow with k: 100,000 trees of
    a 200-word sentence take about 3 s)."""
    if single_root is not True:  # the default costs one comparison
        single_root = _flag(single_root)
    return _core.decode_eisner_kbest(_array(scores), _k(k), single_root)


def cle_batch(
    matrices: Sequence[Any], single_root: bool = True, threads: int = 1
) -> list[NDArray[np.int64]]:
    """:func:`cle` over many matrices in one call with the GIL released.

    ``threads`` > 1 decodes on a rayon pool of that size (0 = one thread per core).
    """
    threads = _check_threads(threads)
    if single_root is not True:  # the default costs one comparison
        single_root = _flag(single_root)
    return _core.decode_cle_batch([_array(m) for m in matrices], single_root, threads)


def eisner_batch(
    matrices: Sequence[Any], single_root: bool = True, threads: int = 1
) -> list[NDArray[np.int64]]:
    """:func:`eisner` over many matrices in one call, GIL released (see :func:`cle_batch`)."""
    threads = _check_threads(threads)
    if single_root is not True:  # the default costs one comparison
        single_root = _flag(single_root)
    return _core.decode_eisner_batch([_array(m) for m in matrices], single_root, threads)


def tree_score(scores: Any, heads: Any) -> float:
    """Sum of ``scores[d, heads[d]]`` over the words ``d >= 1`` of the tree ``heads``
    (``heads[0]`` is ignored). NaN or ``+inf`` scores, heads that are not whole numbers
    and heads that do not form a tree rooted at 0 raise ``ValueError``.
    The plain float64 sum, unclamped: scores near the float64 limits can add up to ``±inf``
    (a score, not a decode: the decoders clamp beyond ±1e300, see the module doc)."""
    s = _array(scores)
    h = np.asarray(heads)
    if not isinstance(heads, np.ndarray) and any(
        isinstance(x, (bool, np.bool_)) for x in np.ravel(np.asarray(heads, dtype=object))
    ):
        raise TypeError(f"heads must be positions (integers), not bools, got {heads!r}")
    whole = h.dtype.kind in "iu" or (
        h.dtype.kind == "f" and bool(np.all(np.isfinite(h)) and np.all(h == np.round(h)))
    )
    if h.ndim != 1 or not whole:
        raise ValueError(f"heads must be whole numbers (positions), got {heads!r}")
    h = h.copy()
    if len(h):
        h[0] = 0  # ROOT's own "head" is ignored, whatever it holds (-1e30, 2**63)
    if len(h) > 1 and (np.any(h[1:] < 0) or np.any(h[1:] >= len(h))):
        d = 1 + int(np.argmax((h[1:] < 0) | (h[1:] >= len(h))))
        raise ValueError(f"heads[{d}] = {h[d]} is not a position in 0..{len(h) - 1}")
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
