import subprocess
import sys
from pathlib import Path

import depfs
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


def test_a_model_shows_the_arguments_it_was_made_with():
    # (it was <depfs.arceager.ArcEagerParser object at 0x...>)
    assert repr(depfs.ArcEagerParser(epochs=4, dynamic=True)) == (
        "ArcEagerParser(epochs=4, dynamic=True)"
    )
    assert repr(depfs.Tagger()) == "Tagger()"
    text = "upos(h) & upos(m)\nform(h)\n"
    assert repr(depfs.GraphParser(order=2, arc_templates=text)) == (
        "GraphParser(order=2, epochs=8, arc_templates=<2 lines of template text>)"
    )
    long = repr(depfs.ArcEagerParser(templates="upos(STACK_0)" * 10))
    assert long.endswith("...)") and len(long) < 100


def test_every_public_name_resolves_and_a_parse_runs_without_numpy(tmp_path):
    # The package's names are imported on first use: each must still resolve, to the
    # object its module defines, and `depfs parse` must not pay for numpy nor for the
    # `depfs select` commands at start-up (those are imported when named).
    data = Path(__file__).parent / "data"
    out = tmp_path / "out.conllu"
    code = (
        "import sys, depfs.cli\n"
        f"args = ['parse', {str(data / 'arceager.depfs')!r}, {str(data / 'input.conllu')!r}]\n"
        f"depfs.cli.main(args + ['-o', {str(out)!r}], standalone_mode=False)\n"
        "assert 'numpy' not in sys.modules, 'numpy imported'\n"
        "assert 'depfs.select.cli' not in sys.modules, 'select commands imported'\n"
        "assert 'select' in depfs.cli.main.list_commands(None)\n"
        "assert depfs.cli.main.get_command(None, 'select').name == 'select'\n"
        "import depfs, depfs.select, depfs.evaluate\n"
        "assert callable(depfs.evaluate) and depfs.evaluate.__module__ == 'depfs.evaluate'\n"
        "for name in depfs.__all__:\n"
        "    assert getattr(depfs, name) is not None, name\n"
        "for name in depfs.select.__all__:\n"
        "    assert getattr(depfs.select, name) is not None, name\n"
        "assert set(depfs.__all__) <= set(dir(depfs))\n"
        "try:\n"
        "    depfs.no_such_name\n"
        "except AttributeError as e:\n"
        "    assert 'no_such_name' in str(e)\n"
        "else:\n"
        "    raise AssertionError('no AttributeError')\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.endswith("ok\n"), r.stderr
    expected = depfs.load(data / "arceager.depfs").parse(depfs.read_conllu(data / "input.conllu"))
    assert out.read_text() == expected.to_string()
    assert depfs.Treebank is depfs.treebank.Treebank


def test_the_demo_trains_parses_two_sentences_as_trees_and_scores() -> None:
    import os
    import re

    from depfs.arceager import CASCADE_STAGES

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
    # The knob: the cascade's full model (`inf`) and its two presets, each with its LAS and
    # templates per move; a preset adds at least its first stage's templates and fewer than
    # all 104 of the shipped order on average, `fast` no more than `accurate`.
    full = re.search(r"^\s*inf \(full model\)\s+([\d.]+)\s+all\s", r.stdout, re.M)
    assert full and float(full[1]) > 90.0, r.stdout
    rows = {
        k: (float(las), float(templates))
        for k, las, templates in re.findall(
            r"^\s*(accurate|fast) \([\d.e+]+\)\s+([\d.]+)\s+([\d.]+)", r.stdout, re.M
        )
    }
    assert set(rows) == {"accurate", "fast"}, r.stdout
    assert CASCADE_STAGES[0] <= rows["fast"][1] <= rows["accurate"][1] < 104.0, r.stdout
    assert min(las for las, _ in rows.values()) > 90.0, r.stdout


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
    long call (a Rust one releases the GIL and never looks at signals) goes on in its own
    thread. The call here returns only when the test lets it, after the interruption has
    been raised: no timing decides the test (it used to bet on a 1.2 s Rust call still
    running after 0.05 s). Planted: interruptible calling `fn` directly fails it."""
    import _thread
    import threading

    from depfs.base import interruptible

    started, gate, finished = threading.Event(), threading.Event(), threading.Event()

    def long_call() -> None:
        started.set()
        gate.wait(60)  # as a call that ignores signals: it ends when it ends
        finished.set()

    def interrupt_once_started() -> None:
        started.wait(60)
        _thread.interrupt_main()

    threading.Thread(target=interrupt_once_started, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        interruptible(long_call)
    assert not finished.is_set()  # the interruption did not wait for the call
    gate.set()
    assert finished.wait(30)  # the abandoned call ends in its own thread


def test_optional_dependencies_missing_say_which_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """scikit-learn (DynFS training) and matplotlib (--plot) are extras, not requirements of
    a parse: without them, the feature that needs one says which extra installs it (a DepfsError:
    one line from the CLI). Planted: a bare import fails the messages."""
    import numpy as np
    from depfs.dynamic.he2013 import fit_policy
    from depfs.errors import MissingExtraError
    from depfs.select.plot import plot_curves

    monkeypatch.setitem(sys.modules, "sklearn.linear_model", None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    x, y = np.ones((4, 2), dtype=np.float32), np.array([0, 1, 0, 1], dtype=np.uint8)
    with pytest.raises(MissingExtraError, match=r"scikit-learn.*pip install 'depfs\[dynfs\]'"):
        fit_policy(x, y)
    with pytest.raises(MissingExtraError, match=r"matplotlib.*pip install 'depfs\[plot\]'"):
        plot_curves(tmp_path / "c.png", [("a", [1.0, 2.0])], "las")
    assert not (tmp_path / "c.png").exists()
    tomllib = pytest.importorskip("tomllib")
    with open(Path(__file__).resolve().parents[1] / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    assert not any(d.startswith(("scikit-learn", "matplotlib")) for d in project["dependencies"])
    assert project["optional-dependencies"]["dynfs"] and project["optional-dependencies"]["plot"]
