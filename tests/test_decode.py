"""depfs.decode: every decoder against brute force (n <= 6), the pure-Python references
(hypothesis), and the error paths."""

from __future__ import annotations

import functools
import math
import os
import signal
import subprocess
import sys
import time

import depfs
import depfs.decode as dec
import numpy as np
import pytest
import reference_decoders as ref
from depfs.errors import NoSpanningTreeError
from hypothesis import given, settings
from hypothesis import strategies as st

NEG = -math.inf


@functools.cache
def trees(n1: int, projective: bool, single_root: bool) -> np.ndarray:
    """All trees of the class as an (m, n1) int array (brute force)."""
    return np.array(ref.all_trees(n1, projective, single_root), dtype=np.int64).reshape(-1, n1)


def scores_of(scores: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Arc-factored score of every tree in t (vectorised)."""
    n1 = scores.shape[0]
    if n1 == 1:
        return np.zeros(len(t))
    return scores[np.arange(1, n1), t[:, 1:]].sum(axis=1)


def scores2_of(arc: np.ndarray, sib: np.ndarray, t: np.ndarray) -> np.ndarray:
    return np.array([ref.tree_score2(arc, sib, list(h)) for h in t])


def random_matrix(rng: np.random.Generator, n1: int, kind: int) -> np.ndarray:
    if kind == 0:  # small integers: many ties
        return rng.integers(-1, 2, size=(n1, n1)).astype(np.float64)
    if kind == 1:  # reals
        return rng.normal(size=(n1, n1))
    m = rng.integers(-2, 3, size=(n1, n1)).astype(np.float64)  # ties and a -inf mask
    m[rng.random((n1, n1)) < 0.3] = NEG
    return m


def check_best(got_heads, all_scores: np.ndarray, score_fn, trees_arr: np.ndarray) -> None:
    best = all_scores.max() if len(all_scores) else NEG
    assert best > NEG
    assert any((trees_arr == np.asarray(got_heads)).all(axis=1)), got_heads
    assert score_fn(got_heads) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("single_root", [True, False])
def test_brute_force(n: int, single_root: bool) -> None:
    n1 = n + 1
    rng = np.random.default_rng(100 * n + single_root)
    all_t = trees(n1, False, single_root)
    proj_t = trees(n1, True, single_root)
    for trial in range(60):
        s = random_matrix(rng, n1, trial % 3)
        sib = random_matrix(rng, n1 * n1, trial % 3).reshape(-1)[: n1**3].reshape(n1, n1, n1)
        for decoder, class_t in ((dec.cle, all_t), (dec.eisner, proj_t)):
            sc = scores_of(s, class_t)
            if len(sc) == 0 or sc.max() == NEG:
                with pytest.raises(NoSpanningTreeError):
                    decoder(s, single_root=single_root)
            else:
                heads = decoder(s, single_root=single_root)
                check_best(heads, sc, functools.partial(ref.tree_score, s), class_t)
        sc2 = scores2_of(s, sib, proj_t)
        if len(sc2) == 0 or sc2.max() == NEG:
            with pytest.raises(NoSpanningTreeError):
                dec.eisner2(s, sib, single_root=single_root)
        else:
            heads = dec.eisner2(s, sib, single_root=single_root)
            check_best(heads, sc2, functools.partial(ref.tree_score2, s, sib), proj_t)
        # k-best: the top k scores of the enumeration, distinct trees, best first.
        k = 1 + trial % 20
        sc = scores_of(s, proj_t)
        want = np.sort(sc[sc > NEG])[::-1][:k]
        if len(want) == 0:
            with pytest.raises(NoSpanningTreeError):
                dec.eisner_kbest(s, k, single_root=single_root)
            continue
        got = dec.eisner_kbest(s, k, single_root=single_root)
        assert [g[1] for g in got] == pytest.approx(list(want), abs=1e-9)
        assert len({tuple(h) for h, _ in got}) == len(got)
        for h, score in got:
            assert score == pytest.approx(ref.tree_score(s, h))
            assert any((proj_t == h).all(axis=1))


def test_hand_example() -> None:
    # Greedy arcs 1 <-> 3 form a cycle; entering it at 1 from 2 loses least: 10 + 9 + 11.
    s = np.full((4, 4), NEG)
    s[1, 0], s[2, 0], s[3, 0] = 1, 10, 1
    s[1, 2], s[3, 2], s[1, 3], s[3, 1] = 9, 8, 11, 11
    assert dec.cle(s).tolist() == [-1, 2, 0, 1]
    assert dec.tree_score(s, [-1, 2, 0, 1]) == 30.0
    # A head outside the sentence is an error, not a score of -inf.
    for bad in ([-1, 2, 0, 7], [-1, -3, 0, 1]):
        with pytest.raises(ValueError, match="not a position"):
            dec.tree_score(s, bad)


def test_single_root_matters() -> None:
    s = np.zeros((3, 3))
    s[1, 0] = s[2, 0] = 5.0
    assert dec.cle(s, single_root=False).tolist() == [-1, 0, 0]
    assert ref.chu_liu_edmonds(s.tolist(), True) is not None
    assert (dec.cle(s) == 0).sum() == 1
    assert (dec.eisner(s) == 0).sum() == 1


matrices = st.integers(1, 7).flatmap(
    lambda n1: st.lists(
        st.one_of(st.integers(-3, 3).map(float), st.floats(-5, 5), st.just(NEG)),
        min_size=n1 * n1,
        max_size=n1 * n1,
    ).map(lambda v: np.array(v).reshape(n1, n1))
)


def same_or_no_tree(fast, slow, score) -> None:
    try:
        got = fast()
    except NoSpanningTreeError:
        assert slow() is None
        return
    want = slow()
    assert want is not None
    assert score(got) == pytest.approx(score(want), abs=1e-9)


# The two first-order decoders, each against its own reference (150 examples each).
@pytest.mark.parametrize(
    "decode,reference",
    [(dec.cle, ref.chu_liu_edmonds), (dec.eisner, ref.eisner)],
    ids=["cle", "eisner"],
)
@settings(max_examples=150, deadline=None)
@given(matrices, st.booleans())
def test_first_order_vs_reference(decode, reference, s: np.ndarray, single_root: bool) -> None:
    same_or_no_tree(
        lambda: decode(s, single_root),
        lambda: reference(s.tolist(), single_root),
        lambda h: ref.tree_score(s, h),
    )


@settings(max_examples=100, deadline=None)
@given(matrices, st.booleans(), st.integers(0, 2**32 - 1))
def test_eisner2_vs_reference(s: np.ndarray, single_root: bool, seed: int) -> None:
    n1 = s.shape[0]
    sib = np.random.default_rng(seed).integers(-2, 3, size=(n1, n1, n1)).astype(float)
    same_or_no_tree(
        lambda: dec.eisner2(s, sib, single_root),
        lambda: ref.eisner2(s.tolist(), sib.tolist(), single_root),
        lambda h: ref.tree_score2(s, sib, h),
    )


@settings(max_examples=100, deadline=None)
@given(matrices, st.integers(1, 30), st.booleans())
def test_kbest_vs_reference(s: np.ndarray, k: int, single_root: bool) -> None:
    want = ref.eisner_kbest(s.tolist(), k, single_root)
    if not want:
        with pytest.raises(NoSpanningTreeError):
            dec.eisner_kbest(s, k, single_root)
        return
    got = dec.eisner_kbest(s, k, single_root)
    assert [g for _, g in got] == pytest.approx([w for _, w in want], abs=1e-9)


def test_reference_kbest_top_is_eisner() -> None:
    rng = np.random.default_rng(3)
    s = rng.normal(size=(6, 6))
    assert ref.eisner_kbest(s.tolist(), 1)[0][0] == ref.eisner(s.tolist())


def test_dtypes_orders_and_lists() -> None:
    rng = np.random.default_rng(1)
    s = rng.normal(size=(8, 8))
    want = dec.cle(s)
    assert want.dtype == np.int64 and want[0] == -1
    assert dec.cle(np.asfortranarray(s)).tolist() == want.tolist()
    assert dec.cle(s.tolist()).tolist() == want.tolist()
    s32 = s.astype(np.float32)
    assert dec.cle(s32).tolist() == dec.cle(s32.astype(np.float64)).tolist()
    # A transposed (Fortran-ordered) view: the decoders must read it through its strides,
    # i.e. decode the matrix s.T, not the buffer of s (the two trees differ here).
    t = s.T
    assert t.flags.f_contiguous and not t.flags.c_contiguous
    for decode, reference in ((dec.eisner, ref.eisner), (dec.cle, ref.chu_liu_edmonds)):
        got = decode(t).tolist()
        assert got == decode(np.ascontiguousarray(t)).tolist()
        assert got == reference(t.tolist())
        assert got != decode(s).tolist()
    # A non-contiguous view.
    big = rng.normal(size=(16, 16))
    view = big[::2, ::2]
    assert dec.eisner(view).tolist() == dec.eisner(np.ascontiguousarray(view)).tolist()
    assert dec.cle(np.zeros((1, 1))).tolist() == [-1]


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (np.zeros((3, 4)), "shape"),
        (np.zeros(9), "2 dimensions"),
        (np.zeros((3, 3, 3)), "2 dimensions"),
        (np.zeros((0, 0)), "shape"),
        (np.zeros((3, 3), dtype=bool), "dtype"),
        (np.zeros((3, 3), dtype=np.complex128), "dtype"),
        (np.array([[0.0, 1.0], [np.nan, 0.0]]), "NaN"),
        (np.array([[0.0, 1.0], [np.inf, 0.0]]), r"\+inf"),
    ],
)
@pytest.mark.parametrize("decoder", [dec.cle, dec.eisner, lambda s: dec.eisner_kbest(s, 2)])
def test_bad_input(bad: np.ndarray, match: str, decoder) -> None:
    with pytest.raises(ValueError, match=match):
        decoder(bad)


def test_bad_input_eisner2_and_k() -> None:
    with pytest.raises(ValueError, match="sib"):
        dec.eisner2(np.zeros((3, 3)), np.zeros((4, 4, 4)))
    with pytest.raises(ValueError, match="sib"):
        dec.eisner2(np.zeros((3, 3)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="NaN"):
        dec.eisner2(np.zeros((2, 2)), np.full((2, 2, 2), np.nan))
    with pytest.raises(ValueError, match="k must be"):
        dec.eisner_kbest(np.zeros((3, 3)), 0)
    with pytest.raises(ValueError, match="k must be"):
        dec.eisner_kbest(np.zeros((3, 3)), -2)
    # A k that would run for minutes (10**6 trees of 30 words) is refused at once.
    assert len(dec.eisner_kbest(np.zeros((3, 3)), dec.MAX_KBEST)) == 2
    with pytest.raises(ValueError, match="k must be in 1..100,000"):
        dec.eisner_kbest(np.zeros((31, 31)), 10**6)
    with pytest.raises(ValueError, match="threads"):
        dec.cle_batch([np.zeros((3, 3))], threads=-1)
    with pytest.raises(ValueError, match="ndarray|float"):
        dec.cle(np.array([["a", "b"], ["c", "d"]]))


def test_no_spanning_tree() -> None:
    s = np.zeros((3, 3))
    s[2, :] = NEG  # word 2 has no possible head
    for decoder in (dec.cle, dec.eisner):
        with pytest.raises(NoSpanningTreeError, match="no spanning tree"):
            decoder(s)
    s = np.full((3, 3), NEG)
    s[1, 0] = s[2, 0] = 0.0  # only ROOT arcs: a tree, but not a single-root one
    assert dec.cle(s, single_root=False).tolist() == [-1, 0, 0]
    with pytest.raises(NoSpanningTreeError):
        dec.cle(s)
    with pytest.raises(NoSpanningTreeError):
        dec.eisner(s)


@pytest.mark.parametrize("threads", [1, 2, 0])
def test_batches_match_single_calls(threads: int) -> None:
    rng = np.random.default_rng(5)
    mats = [rng.normal(size=(n1, n1)) for n1 in rng.integers(1, 30, size=40)]
    for batch, single in ((dec.cle_batch, dec.cle), (dec.eisner_batch, dec.eisner)):
        got = batch(mats, threads=threads)
        assert [g.tolist() for g in got] == [single(m).tolist() for m in mats]
        got = batch(mats, single_root=False, threads=threads)
        assert [g.tolist() for g in got] == [single(m, False).tolist() for m in mats]


def test_batch_errors_name_the_matrix() -> None:
    mats = [np.zeros((3, 3)), np.zeros((3, 3))]
    mats[1][2, :] = NEG
    with pytest.raises(NoSpanningTreeError, match=r"matrices\[1\]"):
        dec.cle_batch(mats)
    with pytest.raises(ValueError, match=r"matrices\[0\]"):
        dec.eisner_batch([np.zeros((2, 3))])
    assert dec.cle_batch([]) == []


@pytest.mark.parametrize("threads", [1, 2])
def test_batches_of_many_groups_match_single_calls_and_name_the_bad_matrix(threads: int) -> None:
    # 60 matrices of up to 120 words: the one-thread batch decodes them in several groups.
    rng = np.random.default_rng(7)
    mats = [rng.normal(size=(n1, n1)) for n1 in rng.integers(2, 121, size=60)]
    mats[10] = mats[10].astype(np.float32)
    mats[20] = np.asfortranarray(mats[20])
    mats[30] = mats[30][::2, ::2]  # a strided view
    for batch, single in ((dec.cle_batch, dec.cle), (dec.eisner_batch, dec.eisner)):
        got = batch(mats, threads=threads)
        assert [g.tolist() for g in got] == [single(m).tolist() for m in mats]
    bad = [m.copy() for m in mats]
    bad[57][1, :] = NEG  # word 1 has no possible head
    with pytest.raises(NoSpanningTreeError, match=r"matrices\[57\]"):
        dec.cle_batch(bad, threads=threads)
    bad[53] = np.zeros((3, 4))
    with pytest.raises(ValueError, match=r"eisner_batch: matrices\[53\]"):
        dec.eisner_batch(bad, threads=threads)


def test_integer_and_half_matrices_decode_as_float64_and_flags_are_checked() -> None:
    # One rule for arrays and lists: every real dtype but float32/float64 becomes float64.
    s = np.random.default_rng(2).integers(-5, 6, size=(7, 7))
    want = dec.eisner(s.astype(np.float64)).tolist()
    # (">f8"/">f4": floats of the other byte order, refused as "not float32 or float64")
    for dtype in (np.int64, np.int32, np.uint8, np.float16, np.dtype(">f8"), np.dtype(">f4")):
        m = np.abs(s).astype(dtype) if dtype == np.uint8 else s.astype(dtype)
        assert dec.eisner(m).tolist() == dec.eisner(m.astype(np.float64)).tolist()
        assert dec.cle(m).tolist() == dec.cle(m.astype(np.float64)).tolist()
    assert dec.eisner(s).tolist() == want == dec.eisner(s.tolist()).tolist()
    assert dec.eisner_batch([s])[0].tolist() == want
    assert dec.eisner(s, single_root=np.True_).tolist() == want
    assert dec.cle(s, np.False_).tolist() == dec.cle(s, False).tolist()
    with pytest.raises(TypeError, match="single_root must be True or False, got 'no'"):
        dec.cle(s, single_root="no")
    for k in (2.5, True, "2"):
        with pytest.raises(TypeError, match="k must be an integer"):
            dec.eisner_kbest(s, k)
    assert len(dec.eisner_kbest(s, np.int64(2))) == 2
    # [-1, 0, True, 2] is the chain 0 -> 1 -> 2 -> 3 if True counted as 1: refused.
    with pytest.raises(TypeError, match="not bools"):
        dec.tree_score(s[:4, :4], [-1, 0, True, 2])
    assert dec.tree_score(s[:4, :4], [-1, 0, 1, 2]) == s[1, 0] + s[2, 1] + s[3, 2]
    assert dec.tree_score(s[:4, :4].astype(">f8"), [-1, 0, 1, 2]) == s[1, 0] + s[2, 1] + s[3, 2]
    # heads[0] is ignored whatever it holds (it raised OverflowError for these).
    chain = s[1, 0] + s[2, 1] + s[3, 2]
    assert dec.tree_score(s[:4, :4], [-1e30, 0, 1, 2]) == chain
    assert dec.tree_score(s[:4, :4], np.array([2**63, 0, 1, 2], np.uint64)) == chain
    with pytest.raises(ValueError, match="dtype float32 or float64, got float128"):
        dec.eisner(s.astype(np.longdouble))  # (its precision would be lost: refused)


def test_a_matrix_too_large_for_memory_is_an_error_naming_n() -> None:
    # Zero-stride views cost no memory; copying one of 10**6 x 10**6 would take 8 TB, and
    # the decoders used to abort the process (Rust's allocation failure) instead of raising.
    huge = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(10**6, 10**6), strides=(0, 0))
    sib = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(10**6,) * 3, strides=(0, 0, 0))
    calls = [
        lambda: dec.cle(huge),
        lambda: dec.eisner(huge),
        lambda: dec.eisner_kbest(huge, 2),
        lambda: dec.eisner2(huge, sib),
        lambda: dec.cle_batch([np.zeros((3, 3)), huge]),
        lambda: dec.eisner_batch([huge], threads=2),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"n = 999999 words.* cannot be allocated"):
            call()


@pytest.mark.parametrize(
    ("call", "name"),
    [("D.eisner(a)", "decode_eisner"), ("D.eisner_batch([a[:9, :9], a])", "decode_eisner_batch")],
)
def test_a_single_eisner_call_stops_on_ctrl_c(tmp_path, call: str, name: str) -> None:
    # The child logs the profile events of the decoder's C call: a Ctrl-C during the call must
    # end the call itself with KeyboardInterrupt (c_exception), not wait until it returns
    # (c_return). The child says "start" on entering the call; the timeout guards a hang only.
    child = tmp_path / "child.py"
    child.write_text(
        "import sys, numpy as np, depfs.decode as D\n"
        "events = []\n"
        "def prof(frame, event, arg):\n"
        "    if event.startswith('c_') and getattr(arg, '__name__', '') == NAME:\n"
        "        events.append(event)\n"
        "        if event == 'c_call':\n"
        "            print('start', flush=True)\n"
        "a = np.random.default_rng(0).normal(size=(3000, 3000))\n"
        "sys.setprofile(prof)\n"
        "try:\n"
        "    CALL\n"
        "except KeyboardInterrupt:\n"
        "    events.append('KeyboardInterrupt')\n"
        "sys.setprofile(None)\n"
        "print(events, flush=True)\n".replace("NAME", repr(name)).replace("CALL", call)
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.Popen([sys.executable, str(child)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert p.stdout is not None and p.stdout.readline() == "start\n"
        time.sleep(0.2)  # into the C call (an ordering delay, not a measured threshold)
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=600)
    finally:
        p.kill()
    assert out.strip() == "['c_call', 'c_exception', 'KeyboardInterrupt']"
    assert p.returncode == 0


def test_float64_minimum_masks_decode_as_cle_does() -> None:
    # Masked rows (every arc into words 2 and 3 at finfo.min, as masked_fill does): the
    # chart sums used to overflow to -inf and the Eisner family reported no tree.
    low = np.finfo(np.float64).min
    for seed in range(20):
        s = np.random.RandomState(seed).randn(6, 6)
        s[[2, 3], :] = low
        assert ref.is_tree(dec.cle(s).tolist())
        for heads in (
            dec.eisner(s),
            dec.eisner(s, single_root=False),
            dec.eisner2(s, np.zeros((6, 6, 6))),
            dec.eisner_kbest(s, 3)[0][0],
            dec.eisner_batch([s, s], threads=2)[1],
        ):
            h = heads.tolist()
            assert ref.is_tree(h) and ref.is_projective(h)
        # Sums stay finite (clamped at -1e300 a score): the k best are three trees.
        assert [math.isfinite(x) for _, x in dec.eisner_kbest(s, 3)] == [True] * 3
        # A mask that leaves a tree of unmasked arcs: the same tree as a -inf mask.
        m = np.random.RandomState(seed).randn(6, 6)
        cut = np.random.RandomState(seed + 99).rand(6, 6) < 0.3
        inf_mask = np.where(cut, NEG, m)
        try:
            want = dec.eisner(inf_mask).tolist()
        except NoSpanningTreeError:
            continue
        assert dec.eisner(np.where(cut, low, m)).tolist() == want
        assert dec.eisner(np.where(cut, -1e305, m)).tolist() == want
    # Huge positive scores are clamped too (+1e308 sums would overflow to +inf).
    big = np.full((5, 5), 1e308)
    assert ref.is_tree(dec.eisner(big).tolist())
    # tree_score is the plain float sum, not clamped (documented): it overflows.
    assert dec.tree_score(big, [-1, 0, 1, 2, 3]) == math.inf


def test_package_exports_decode() -> None:
    assert depfs.decode is dec
    assert "decode" in depfs.__all__
