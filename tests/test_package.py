import subprocess
import sys

import depfs
import numpy as np
import pytest


def test_version_matches_cli():
    out = subprocess.run(
        [sys.executable, "-m", "depfs.cli", "--version"], capture_output=True, text=True, check=True
    )
    assert depfs.__version__ in out.stdout
    assert out.stdout.startswith("depfs")


def test_parsers_and_loader_are_top_level():
    # The issues promise depfs.GraphParser, depfs.ArcEagerParser and depfs.load.
    from depfs.arceager import ArcEagerParser
    from depfs.graph import GraphParser

    assert depfs.ArcEagerParser is ArcEagerParser
    assert depfs.GraphParser is GraphParser
    assert callable(depfs.load)


def test_the_demo_trains_parses_two_sentences_as_trees_and_scores() -> None:
    import os
    import re

    env = {**os.environ, "DEPFS_DATA": "/nonexistent"}
    r = subprocess.run(
        [sys.executable, "-m", "depfs.demo"], capture_output=True, text=True, env=env, check=False
    )
    assert r.returncode == 0, r.stderr
    assert "synthetic treebank" in r.stdout
    assert sum(line.endswith("(root)") for line in r.stdout.splitlines()) == 2, r.stdout
    m = re.search(r"UAS ([\d.]+), LAS ([\d.]+), ([\d,]+) words/s", r.stdout)
    assert m, r.stdout
    assert float(m[1]) > 90.0 and float(m[2]) > 90.0, r.stdout
    assert int(m[3].replace(",", "")) > 0


def test_the_demo_draws_each_word_under_its_head() -> None:
    from depfs.demo import tree

    rows = [
        ("The", 2, "det"),
        ("cat", 3, "nsubj"),
        ("sat", 0, "root"),
        ("on", 6, "case"),
        ("the", 6, "det"),
        ("mat", 3, "obl"),
        (".", 3, "punct"),
    ]
    text = "".join(
        f"{i}\t{form}\t_\tX\t_\t_\t{head}\t{rel}\t_\t_\n"
        for i, (form, head, rel) in enumerate(rows, start=1)
    )
    sentence = depfs.Treebank.from_string(text + "\n")[0]
    assert tree(sentence) == [
        "sat (root)",
        "├── cat (nsubj)",
        "│   └── The (det)",
        "├── mat (obl)",
        "│   ├── on (case)",
        "│   └── the (det)",
        "└── . (punct)",
    ]


def test_an_interruption_reaches_python_during_a_long_rust_call():
    """Training epochs run through base.interruptible: Ctrl-C raises at once, while the
    Rust call (which releases the GIL and never looks at signals) goes on in its own
    thread; called directly, the interruption would only come when it returns."""
    import _thread
    import threading

    from depfs import decode
    from depfs.base import interruptible

    m = np.random.default_rng(0).normal(size=(101, 101))
    finished = threading.Event()

    def long_call() -> None:  # ~1.2 s or more of Rust with the GIL released
        # The interruption is timed from here, in the call's own thread: timed from
        # before `interruptible`, a busy machine could deliver it before the call starts.
        threading.Timer(0.05, _thread.interrupt_main).start()
        decode.cle_batch([m] * 60_000, threads=1)
        finished.set()

    with pytest.raises(KeyboardInterrupt):
        interruptible(long_call)
    assert not finished.is_set()
    # The abandoned call ends in its own thread (direct: the interruption lands first).
    assert finished.wait(30), "the interruption waited for the Rust call to end"
