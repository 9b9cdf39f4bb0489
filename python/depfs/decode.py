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


def _check_threads(threads: int) -> None:
    if threads < 0:
        raise ValueError(f"threads must be >= 0 (0 = one per core), got {threads}")


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


def eisner_kbest(
    scores: Any, k: int, single_root: bool = True
) -> list[tuple[NDArray[np.int64], float]]:
    """The ``k`` best projective trees, best first, as ``(heads, score)`` (fewer if fewer exist)."""
    if k < 1:
        raise ValueError(f"eisner_kbest: k must be at least 1, got {k}")
    return _core.decode_eisner_kbest(_array(scores), k, single_root)


def cle_batch(
    matrices: Sequence[Any], single_root: bool = True, threads: int = 1
) -> list[NDArray[np.int64]]:
    """:func:`cle` over many matrices in one call with the GIL released.

    ``threads`` > 1 decodes on a rayon pool of that size (0 = one thread per core).
    """
    _check_threads(threads)
    return _core.decode_cle_batch([_array(m) for m in matrices], single_root, threads)


def eisner_batch(
    matrices: Sequence[Any], single_root: bool = True, threads: int = 1
) -> list[NDArray[np.int64]]:
    """:func:`eisner` over many matrices in one call, GIL released (see :func:`cle_batch`)."""
    _check_threads(threads)
    return _core.decode_eisner_batch([_array(m) for m in matrices], single_root, threads)


def tree_score(scores: Any, heads: Any) -> float:
    """Sum of ``scores[d, heads[d]]`` over the words ``d >= 1``."""
    return _core.decode_tree_score(_array(scores), [int(h) for h in heads])
