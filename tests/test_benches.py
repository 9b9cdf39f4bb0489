"""The figures benches print that are computed in Python, not timed: rank correlation and
curve gaps of `bench_select compare`, the column check of `bench_pipeline`, and how
`run_all` calls each bench."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from benches import run_all
from benches.bench_pipeline import other_columns_identical
from benches.bench_select import (
    curve_gaps,
    max_length_arg,
    over_bar,
    projected_minutes,
    seeds_arg,
    seeds_text,
    settings_label,
    settings_name,
    shortlists,
    spearman,
)


def test_spearman_of_orders() -> None:
    assert spearman(list("abcd"), list("abcd")) == 1.0
    assert spearman(list("abcd"), list("dcba")) == -1.0
    # One swap among four: 1 - 6 * (1 + 1) / (4 * 15).
    assert spearman(list("abcd"), list("bacd")) == pytest.approx(0.8)
    # Templates only one wrapper ordered do not count; ranks are within the common ones.
    assert spearman(list("abxcd"), list("ybacd")) == pytest.approx(0.8)


def test_curve_gaps_are_absolute() -> None:
    largest, mean = curve_gaps([70.0, 75.0, 78.0], [70.0, 72.5, 78.5])
    assert largest == pytest.approx(2.5)
    assert mean == pytest.approx((0.0 + 2.5 + 0.5) / 3)
    # Above the exact curve counts as much as below it.
    assert curve_gaps([70.0, 75.0], [70.0, 78.0]) == (3.0, 1.5)
    # A shorter curve: only the prefix sizes both have.
    assert curve_gaps([70.0, 75.0], [69.0]) == (1.0, 1.0)


def test_over_bar_names_the_prefix_sizes() -> None:
    full = [46.0, 75.0, 78.0, 79.0, 80.0, 81.0]
    # Gaps 0.1, 0.31, 0.5, 0.3 (not over), 0.4 above, 0.2: runs of 1-based prefix sizes.
    short = [46.1, 74.69, 77.5, 78.7, 80.4, 81.2]
    assert over_bar(full, short) == "2-3, 5"
    assert over_bar(full, full) == ""
    assert over_bar([70.0, 71.0, 72.0], [69.0, 70.0, 71.0]) == "1-3"


def test_settings_names_and_max_length() -> None:
    assert max_length_arg("all") is None
    assert max_length_arg("40") == 40
    for bad in ("0", "-3", "x"):
        with pytest.raises(argparse.ArgumentTypeError, match="all"):
            max_length_arg(bad)
    ns = types.SimpleNamespace(max_length=None, epochs=3, candidates=None, rerank_every=10)
    assert settings_name(ns) == "mlall_e3"
    ns = types.SimpleNamespace(max_length=40, epochs=1, candidates=10, rerank_every=5)
    assert settings_name(ns) == "ml40_e1_m10r5"
    assert settings_label(ns) == "≤ 40 words, 1 epoch, M=10 R=5"
    ns = types.SimpleNamespace(max_length=None, epochs=3, candidates=None, rerank_every=10)
    assert settings_label(ns) == "all sentences, 3 epochs"


def test_seed_check_takes_held_out_seeds() -> None:
    assert seeds_arg("2") == [2]
    assert seeds_arg("2,3,4") == [2, 3, 4]
    assert seeds_text([2]) == "2"
    assert seeds_text([2, 3, 4]) == "2, 3 and 4"
    # Seed 1 chose both orders: a check on it would compare an order with itself.
    for bad in ("1", "2,1", "2,2", "x", "2,,3", "-2"):
        with pytest.raises(argparse.ArgumentTypeError, match="seeds"):
            seeds_arg(bad)


def test_projected_minutes_sums_the_fitted_line_over_the_steps() -> None:
    # Seconds = 1 + 0.5 * templates; steps of 3, 2, 1 candidates with 1, 2, 3 templates.
    samples = [(1, 1.5), (3, 2.5), (2, 2.0)]
    assert projected_minutes(samples, [3, 2, 1]) == pytest.approx((3 * 1.5 + 2 * 2.0 + 2.5) / 60)
    # One template count only: the mean, flat.
    assert projected_minutes([(2, 3.0), (2, 5.0)], [2, 1]) == pytest.approx(3 * 4.0 / 60)


def test_shortlist_pairs() -> None:
    ns = types.SimpleNamespace(shortlist=["5:10", "10:5"], candidates=None, rerank_every=10)
    assert shortlists(ns) == [(5, 10), (10, 5)]
    assert shortlists(types.SimpleNamespace(shortlist=None, candidates=7, rerank_every=3)) == [
        (7, 3)
    ]
    with pytest.raises(SystemExit, match="M:R"):
        shortlists(types.SimpleNamespace(shortlist=["5"], candidates=None, rerank_every=10))


GOLD = (
    "# sent_id = 1\n"
    "1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t_\t_\n"
    "2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\tSpaceAfter=No\n\n"
)


def test_dynfs_mean_reads_each_runs_dev_choice(capsys: pytest.CaptureFixture[str]) -> None:
    """`bench_dynfs --mean`: each run's row chosen on dev (not its first or fastest DynFS
    row), its loss against its own full model, and the mean over the runs."""
    from benches.bench_dynfs import print_mean

    def run(full: float, dev: tuple[float, float], other: tuple[float, float]) -> dict:
        row = {"cost": 10.0, "words_per_s": 1.0}
        return {
            "rows": [
                {
                    "kind": "full",
                    "setting": "full model (Eisner)",
                    "uas": full,
                    "speedup": 1.0,
                    **row,
                },
                {
                    "kind": "dynfs",
                    "setting": "DynFS threshold 3",
                    "uas": other[0],
                    "speedup": other[1],
                    **row,
                },
                {
                    "kind": "dynfs",
                    "setting": "DynFS threshold 4 (dev)",
                    "uas": dev[0],
                    "speedup": dev[1],
                    **row,
                },
                {
                    "kind": "tree",
                    "setting": "DynFS (dev), tree margin 2",
                    "uas": 80.0,
                    "speedup": 9.0,
                    **row,
                },
            ]
        }

    print_mean(
        [run(88.0, (87.7, 2.4), (87.0, 3.0)), run(87.0, (86.9, 2.7), (86.0, 3.5))], ["a", "b"]
    )
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0].startswith("a: DynFS threshold 4 (dev)  2.40x") and "-0.30 against 88.00" in out[0]
    )
    assert out[-1] == "mean of 2: 2.55x at -0.20 UAS"


def test_other_columns_identical() -> None:
    retagged = GOLD.replace("\tdog\tNOUN\tNNS\tNumber=Plur\t", "\tdogs\tPROPN\tNNP\t_\t")
    assert other_columns_identical(GOLD, retagged)
    assert not other_columns_identical(GOLD, GOLD.replace("\t2\tnsubj\t", "\t0\tnsubj\t"))
    assert not other_columns_identical(GOLD, GOLD.replace("\tSpaceAfter=No", "\t_"))
    assert not other_columns_identical(GOLD, GOLD.replace("sent_id = 1", "sent_id = 2"))
    assert not other_columns_identical(GOLD, GOLD + GOLD)


def test_run_all_skips_benches_that_need_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_all.main(["long_sentence", "threads"]) == 0
    out = capsys.readouterr().out
    assert "bench_long_sentence: skipped, needs --model" in out
    assert "bench_threads: skipped, needs --model" in out


def test_run_all_refuses_a_name_that_is_no_bench(capsys: pytest.CaptureFixture[str]) -> None:
    # A mistyped name used to run nothing and exit 0.
    assert run_all.main(["threads", "thread"]) == 2
    captured = capsys.readouterr()
    assert "no bench named thread " in captured.err
    assert "bench_threads" not in captured.out  # nothing ran
    assert run_all.main(["--help"]) == 0
    assert "Usage: python -m benches.run_all" in capsys.readouterr().out


def test_run_all_calls_mains_with_and_without_argv(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    old_style = types.ModuleType("benches.bench_old")
    old_style.main = lambda: seen.append(sys.argv[1:])  # type: ignore[attr-defined]
    new_style = types.ModuleType("benches.bench_new")
    new_style.main = lambda argv: seen.append(argv)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "benches.bench_old", old_style)
    monkeypatch.setitem(sys.modules, "benches.bench_new", new_style)
    monkeypatch.setattr(sys, "argv", ["run_all", "--not-for-the-benches"])
    run_all.run("bench_old", ["throughput"])
    run_all.run("bench_new", [])
    assert seen == [["throughput"], []]
    assert sys.argv == ["run_all", "--not-for-the-benches"]


def test_run_all_reports_a_failing_bench(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def fail(argv: list[str]) -> None:
        raise SystemExit(2)  # what argparse does on a missing argument

    broken = types.ModuleType("benches.bench_read")
    broken.main = fail  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "benches.bench_read", broken)
    assert run_all.main(["read"]) == 1
    assert "failed: bench_read" in capsys.readouterr().out


ROOT = Path(__file__).resolve().parent.parent
BENCH_COMMAND = re.compile(r"python\s+-m\s+benches\.(\w+)([^`]*)`")


BENCH_LINE = re.compile(r"python\s+-m\s+benches\.(\w+)([^#\n]*)")
FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)


def bench_commands() -> list[tuple[str, str, str]]:
    """(file, bench, argument text) of each `python -m benches.NAME ...` in README and docs:
    in a fenced block a command ends with its line (or a # comment), in running text with
    the closing backtick of its code span (which may wrap across lines)."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for block in FENCED.finditer(text):
            for m in BENCH_LINE.finditer(block.group(1)):
                found.append((path.name, m.group(1), " ".join(m.group(2).split())))
        for m in BENCH_COMMAND.finditer(FENCED.sub("", text)):
            found.append((path.name, m.group(1), " ".join(m.group(2).split())))
    return found


def test_docs_name_real_benches_and_options() -> None:
    """Every bench the docs name exists, and every --option beside it is in its --help."""
    commands = bench_commands()
    assert len(commands) > 30, "the pattern finds the docs' bench commands"
    helps: dict[str, str] = {}
    wrong = []
    for file, bench, args in commands:
        if bench not in helps:
            if not (ROOT / "benches" / f"{bench}.py").is_file():
                wrong.append(f"{file}: no benches/{bench}.py")
                continue
            out = subprocess.run(
                [sys.executable, "-m", f"benches.{bench}", "--help"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            )
            helps[bench] = out.stdout
        for option in re.findall(r"(?<![\w-])--[a-z][\w-]*", args):
            if not re.search(rf"{re.escape(option)}\b", helps[bench]):
                wrong.append(f"{file}: benches.{bench} has no {option}")
    assert not wrong, "\n".join(sorted(set(wrong)))


def test_run_all_gives_every_bench_arguments_it_accepts(monkeypatch: pytest.MonkeyPatch) -> None:
    """`make bench` runs every `bench_*` with its defaults (and ARGS): each one not in SKIP
    must parse them (a required option made `make bench` always fail). The benches are
    stopped right after parsing. Planted: bench_tagger_builds out of SKIP fails this."""
    import pkgutil

    class Parsed(Exception):
        pass

    parse_args = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        parse_args(self, args, namespace)  # SystemExit(2) when a required one is missing
        raise Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    here = Path(run_all.__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    assert "bench_tagger" in names and "bench_dynfs" in names
    for name in names:
        if name not in run_all.SKIP:
            with pytest.raises(Parsed):
                run_all.run(name, run_all.ARGS.get(name, []))
