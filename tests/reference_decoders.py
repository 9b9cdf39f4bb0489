"""Readable pure-Python references of the decoders in :mod:`depfs.decode`, for tests.

Slow on purpose: each follows the textbook statement of its algorithm, with no optimisation, so
that the Rust kernels can be checked against something easy to read. Conventions as in
:mod:`depfs.decode`: ``scores[dep][head]``, index 0 = ROOT, ``-inf`` = no arc, heads[0] = -1.
Every decoder returns ``None`` when no tree exists.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

Matrix = Sequence[Sequence[float]]
NEG = -math.inf


def tree_score(scores: Matrix, heads: Sequence[int]) -> float:
    """Sum of the arc scores of a tree."""
    return sum(scores[d][heads[d]] for d in range(1, len(heads)))


def sibling_pairs(heads: Sequence[int]) -> list[tuple[int, int, int]]:
    """(dep, head, sibling) for every arc: the adjacent sibling between head and dep, or head."""
    out = []
    n1 = len(heads)
    for h in range(n1):
        right = [d for d in range(h + 1, n1) if heads[d] == h]
        left = [d for d in range(h - 1, 0, -1) if heads[d] == h]
        for side in (right, left):
            prev = h
            for d in side:
                out.append((d, h, prev))
                prev = d
    return out


def tree_score2(arc: Matrix, sib: Sequence[Matrix], heads: Sequence[int]) -> float:
    """Arc scores plus adjacent-sibling scores of a tree."""
    return tree_score(arc, heads) + sum(sib[d][h][s] for d, h, s in sibling_pairs(heads))


def is_tree(heads: Sequence[int]) -> bool:
    """Every word reaches ROOT (0) by following heads."""
    n1 = len(heads)
    for d in range(1, n1):
        seen, x = set(), d
        while x != 0:
            if x in seen or not 0 <= heads[x] < n1 or heads[x] == x:
                return False
            seen.add(x)
            x = heads[x]
    return True


def is_projective(heads: Sequence[int]) -> bool:
    """No two arcs cross (ROOT at position 0, arcs drawn above the words)."""
    arcs = [tuple(sorted((d, heads[d]))) for d in range(1, len(heads))]
    return not any(a1 < a2 < b1 < b2 for (a1, b1) in arcs for (a2, b2) in arcs)


def all_trees(n1: int, projective: bool = False, single_root: bool = False) -> list[list[int]]:
    """Every tree over words 1..n1-1 (brute force over all head assignments)."""
    out = []
    for hs in itertools.product(range(n1), repeat=n1 - 1):
        heads = [-1, *hs]
        if any(heads[d] == d for d in range(1, n1)) or not is_tree(heads):
            continue
        if single_root and hs.count(0) != 1:
            continue
        if projective and not is_projective(heads):
            continue
        out.append(heads)
    return out


# --- Chu-Liu-Edmonds ------------------------------------------------------------------------


def _mst(arcs: dict[tuple[int, int], float], nodes: set[int]) -> dict[int, int] | None:
    """Chu-Liu-Edmonds on arcs {(head, dep): weight}: best head of every node but 0."""
    best: dict[int, int] = {}
    for d in nodes - {0}:
        into = [(w, h) for (h, dd), w in arcs.items() if dd == d and h != d and w > NEG]
        if not into:
            return None
        best[d] = max(into)[1]
    cycle = _find_cycle(best)
    if cycle is None:
        return best
    # Contract the cycle into a new node c; remember which original arc each new arc stands for.
    c = max(nodes) + 1
    cycle_weight = {d: arcs[(best[d], d)] for d in cycle}
    new_arcs: dict[tuple[int, int], float] = {}
    origin: dict[tuple[int, int], tuple[int, int]] = {}
    for (h, d), w in arcs.items():
        if h in cycle and d in cycle:
            continue
        if d in cycle:
            key, w = (h, c), w - cycle_weight[d]
        elif h in cycle:
            key = (c, d)
        else:
            key = (h, d)
        if key not in new_arcs or w > new_arcs[key]:
            new_arcs[key], origin[key] = w, (h, d)
    sub = _mst(new_arcs, (nodes - cycle) | {c})
    if sub is None:
        return None
    # Expand: the arc into c breaks the cycle at its original dependent.
    tree = {}
    for d, h in sub.items():
        oh, od = origin[(h, d)]
        tree[od] = oh
    for d in cycle:
        tree.setdefault(d, best[d])
    return tree


def _find_cycle(best: dict[int, int]) -> set[int] | None:
    for start in best:
        path, x = [], start
        while x in best and x not in path:
            path.append(x)
            x = best[x]
        if x in path:
            return set(path[path.index(x) :])
    return None


def chu_liu_edmonds(scores: Matrix, single_root: bool = True) -> list[int] | None:
    """Maximum spanning tree. With ``single_root``, the best over each choice of ROOT's child."""
    n1 = len(scores)
    arcs = {(h, d): scores[d][h] for d in range(1, n1) for h in range(n1) if h != d}
    candidates = [arcs] if not single_root else []
    if single_root:
        for r in range(1, n1):
            only_r = {(h, d): w for (h, d), w in arcs.items() if h != 0 or d == r}
            candidates.append(only_r)
    best_heads, best_score = None, NEG
    for cand in candidates:
        tree = _mst(cand, set(range(n1)))
        if tree is None:
            continue
        heads = [-1] + [tree[d] for d in range(1, n1)]
        s = tree_score(scores, heads)
        if best_heads is None or s > best_score:
            best_heads, best_score = heads, s
    if n1 == 1:
        return [-1]
    return best_heads if best_score > NEG else None


# --- Eisner (first order) -------------------------------------------------------------------


def eisner(scores: Matrix, single_root: bool = True) -> list[int] | None:
    """Eisner's O(n³) algorithm: complete (comp) and incomplete (inc) spans, right (>), left (<)."""
    n1 = len(scores)
    if n1 == 1:
        return [-1]
    comp = {(s, s, d): (0.0, None) for s in range(n1) for d in "><"}
    inc: dict[tuple[int, int, str], tuple[float, int | None]] = {}

    def val(table: dict, key: tuple) -> float:
        return table[key][0] if key in table else NEG

    for width in range(1, n1):
        for s in range(n1 - width):
            t = s + width
            splits = [s] if (s == 0 and single_root) else range(s, t)
            joins = [(val(comp, (s, r, ">")) + val(comp, (r + 1, t, "<")), r) for r in splits]
            best = max(joins, key=lambda x: x[0])
            inc[(s, t, ">")] = (best[0] + scores[t][s], best[1])
            if s > 0:  # ROOT is never a dependent
                inc[(s, t, "<")] = (best[0] + scores[s][t], best[1])
            right = [
                (val(inc, (s, r, ">")) + val(comp, (r, t, ">")), r) for r in range(s + 1, t + 1)
            ]
            comp[(s, t, ">")] = max(right, key=lambda x: x[0])
            if s > 0:
                left = [(val(comp, (s, r, "<")) + val(inc, (r, t, "<")), r) for r in range(s, t)]
                comp[(s, t, "<")] = max(left, key=lambda x: x[0])
    if val(comp, (0, n1 - 1, ">")) == NEG:
        return None
    heads = [-1] * n1

    def walk(kind: str, s: int, t: int, d: str) -> None:
        if s == t:
            return
        r = (comp if kind == "C" else inc)[(s, t, d)][1]
        assert r is not None
        if kind == "I":
            if d == ">":
                heads[t] = s
            else:
                heads[s] = t
            walk("C", s, r, ">")
            walk("C", r + 1, t, "<")
        elif d == ">":
            walk("I", s, r, ">")
            walk("C", r, t, ">")
        else:
            walk("C", s, r, "<")
            walk("I", r, t, "<")

    walk("C", 0, n1 - 1, ">")
    return heads


# --- Eisner with adjacent siblings (McDonald & Pereira 2006) -----------------------------------


def eisner2(arc: Matrix, sib: Sequence[Matrix], single_root: bool = True) -> list[int] | None:
    """Second-order projective decoding; the chart keeps the best tree of every item."""
    n1 = len(arc)
    if n1 == 1:
        return [-1]
    # Each item maps to (score, arcs) with arcs a tuple of (dep, head): simple, not fast.
    Item = tuple[float, tuple[tuple[int, int], ...]]
    empty: Item = (0.0, ())
    none: Item = (NEG, ())
    comp: dict[tuple[int, int, str], Item] = {}
    inc: dict[tuple[int, int, str], Item] = {}
    sib_span: dict[tuple[int, int], Item] = {}
    for s in range(n1):
        comp[(s, s, ">")] = comp[(s, s, "<")] = empty

    def join(*items: Item, extra: float = 0.0, add: tuple = ()) -> Item:
        return (sum(i[0] for i in items) + extra, sum((i[1] for i in items), ()) + add)

    def best(items: list[Item]) -> Item:
        return max(items, key=lambda x: x[0]) if items else none

    for width in range(1, n1):
        for s in range(n1 - width):
            t = s + width
            sib_span[(s, t)] = best(
                [join(comp[(s, r, ">")], comp.get((r + 1, t, "<"), none)) for r in range(s, t)]
            )
            # s -> t: innermost right child, or after the previous right child r.
            cands = [join(comp.get((s + 1, t, "<"), none), extra=sib[t][s][s])]
            if not (s == 0 and single_root):
                cands += [
                    join(inc[(s, r, ">")], sib_span[(r, t)], extra=sib[t][s][r])
                    for r in range(s + 1, t)
                ]
            b = best(cands)
            inc[(s, t, ">")] = join(b, extra=arc[t][s], add=((t, s),))
            if s > 0:
                cands = [join(comp[(s, t - 1, ">")], extra=sib[s][t][t])]
                cands += [
                    join(sib_span[(s, r)], inc[(r, t, "<")], extra=sib[s][t][r])
                    for r in range(s + 1, t)
                ]
                b = best(cands)
                inc[(s, t, "<")] = join(b, extra=arc[s][t], add=((s, t),))
            comp[(s, t, ">")] = best(
                [join(inc[(s, r, ">")], comp[(r, t, ">")]) for r in range(s + 1, t + 1)]
            )
            if s > 0:
                comp[(s, t, "<")] = best(
                    [join(comp[(s, r, "<")], inc[(r, t, "<")]) for r in range(s, t)]
                )
            else:
                comp[(s, t, "<")] = none
    score, arcs = comp[(0, n1 - 1, ">")]
    if score == NEG:
        return None
    heads = [-1] * n1
    for d, h in arcs:
        heads[d] = h
    return heads


# --- k-best Eisner --------------------------------------------------------------------------


def eisner_kbest(scores: Matrix, k: int, single_root: bool = True) -> list[tuple[list[int], float]]:
    """k best projective trees: every chart item keeps its k best (score, arcs), found exhaustively.

    Each projective tree has exactly one derivation in Eisner's chart, so the lists hold
    distinct trees.
    """
    n1 = len(scores)
    if n1 == 1:
        return [([-1], 0.0)]
    Lst = list[tuple[float, tuple[tuple[int, int], ...]]]
    comp: dict[tuple[int, int, str], Lst] = {}
    inc: dict[tuple[int, int, str], Lst] = {}
    for s in range(n1):
        comp[(s, s, ">")] = comp[(s, s, "<")] = [(0.0, ())]

    def combine(pairs: list[tuple[Lst, Lst]], extra: float, add: tuple) -> Lst:
        out = [(a[0] + b[0] + extra, a[1] + b[1] + add) for la, lb in pairs for a in la for b in lb]
        out = [x for x in out if x[0] > NEG]
        out.sort(key=lambda x: -x[0])
        return out[:k]

    for width in range(1, n1):
        for s in range(n1 - width):
            t = s + width
            splits = [s] if (s == 0 and single_root) else range(s, t)
            pairs = [(comp[(s, r, ">")], comp.get((r + 1, t, "<"), [])) for r in splits]
            inc[(s, t, ">")] = combine(pairs, scores[t][s], ((t, s),))
            inc[(s, t, "<")] = combine(pairs, scores[s][t], ((s, t),)) if s > 0 else []
            pairs = [(inc[(s, r, ">")], comp[(r, t, ">")]) for r in range(s + 1, t + 1)]
            comp[(s, t, ">")] = combine(pairs, 0.0, ())
            if s > 0:
                pairs = [(comp[(s, r, "<")], inc[(r, t, "<")]) for r in range(s, t)]
                comp[(s, t, "<")] = combine(pairs, 0.0, ())
            else:
                comp[(s, t, "<")] = []
    out = []
    for score, arcs in comp[(0, n1 - 1, ">")]:
        heads = [-1] * n1
        for d, h in arcs:
            heads[d] = h
        out.append((heads, score))
    return out
