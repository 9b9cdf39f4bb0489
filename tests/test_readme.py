"""Every code block of README.md runs as printed; the docs' commands and snippets are checked.

README blocks run in document order in one temporary folder (a later block uses the models an
earlier one trained), with `depfs` on PATH and `DEPFS_DATA` pointing at a small copy of UD:
en_ewt train and dev cut to their first sentences so that training takes seconds, test whole.
Without UD the same files come from the synthetic treebank, and shown outputs that describe the
real files (`depfs stats` of en_ewt test) are not compared. ```python blocks are executed,
```sh blocks run line by line under `bash -e` (`make TARGET` lines as `make -n TARGET`: the
target exists; `pip install` lines are not run, they build the extension for minutes),
```console blocks run each `$ ` line and compare its output with the lines shown (`...` stands
for any lines). In docs/*.md, Python blocks must compile and each `depfs` command line must name
a real command and only options its --help lists.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from depfs.datasets import synthetic_conllu, ud_available, ud_path

ROOT = Path(__file__).resolve().parent.parent
# Sentences kept of en_ewt train and dev: enough for every parser to train in seconds.
TRAIN_SENTENCES, DEV_SENTENCES = 150, 50
# README lines that are not run, and why (see the module docstring).
NOT_RUN = ("pip install ",)


@dataclass
class Block:
    file: str
    line: int
    lang: str
    text: str


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, with the line each starts on."""
    out, lang, start, body = [], None, 0, []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("```"):
            if lang is None:
                lang, start, body = line[3:].strip(), n, []
            else:
                out.append(Block(path.name, start, lang, "\n".join(body) + "\n"))
                lang = None
        elif lang is not None:
            body.append(line)
    assert lang is None, f"{path}: unclosed code block from line {start}"
    return out


def first_sentences(text: str, n: int) -> str:
    return "".join(s + "\n\n" for s in text.split("\n\n")[:n] if s.strip())


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], bool]:
    """A folder to run in, the environment (DEPFS_DATA, depfs on PATH), and whether it is UD."""
    base = tmp_path_factory.mktemp("readme")
    data, work, bin_dir = base / "ud" / "en_ewt", base / "work", base / "bin"
    for d in (data, work, bin_dir):
        d.mkdir(parents=True)
    real = all(ud_available("en_ewt", split) for split in ("train", "dev", "test"))
    for split, keep in (("train", TRAIN_SENTENCES), ("dev", DEV_SENTENCES), ("test", None)):
        if real:
            text = ud_path("en_ewt", split).read_text(encoding="utf-8")
        else:
            text = synthetic_conllu(keep or 500, seed={"train": 0, "dev": 1, "test": 2}[split])
        (data / f"{split}.conllu").write_text(
            text if keep is None else first_sentences(text, keep), encoding="utf-8"
        )
    depfs_cmd = bin_dir / "depfs"
    depfs_cmd.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m depfs.cli "$@"\n')
    depfs_cmd.chmod(0o755)
    env = {
        **os.environ,
        "DEPFS_DATA": str(base / "ud"),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "python"), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
    }
    return work, env, real


def run_python(block: Block, work: Path, env: dict[str, str]) -> None:
    if "import spacy" in block.text:
        pytest.importorskip("spacy", reason="the optional extra depfs[spacy]")
    r = subprocess.run(
        [sys.executable, "-c", block.text], cwd=work, env=env, capture_output=True, text=True
    )
    assert r.returncode == 0, f"{block.file}:{block.line}: python block failed:\n{r.stderr}"


def run_sh(block: Block, work: Path, env: dict[str, str]) -> None:
    for line in block.text.splitlines():
        command = line.split(" #")[0].strip()
        if not command or command.startswith(NOT_RUN):
            continue
        if command.startswith("make "):
            target = command.split()[1]
            argv = ["make", "-n", "-C", str(ROOT), target]
            r = subprocess.run(argv, env=env, capture_output=True, text=True)
        else:
            argv = ["bash", "-e", "-o", "pipefail", "-c", command]
            r = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True)
        assert r.returncode == 0, f"{block.file}:{block.line}: `{command}` failed:\n{r.stderr}"


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether actual lines match expected ones, where a `...` line stands for any lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def run_console(block: Block, work: Path, env: dict[str, str], real: bool) -> None:
    steps: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"{block.file}:{block.line}: output before any `$ ` command"
            steps[-1][1].append(line)
    for command, expected in steps:
        r = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", command],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, f"{block.file}:{block.line}: `{command}` failed:\n{r.stderr}"
        # The shown output describes the real en_ewt; the synthetic stand-in differs.
        if real:
            assert matches(expected, r.stdout.splitlines()), (
                f"{block.file}:{block.line}: `{command}` printed\n{r.stdout}\nnot\n"
                + "\n".join(expected)
            )


def test_every_readme_block_runs_as_printed(workdir: tuple[Path, dict[str, str], bool]) -> None:
    work, env, real = workdir
    found = blocks(ROOT / "README.md")
    assert {b.lang for b in found} <= {"python", "sh", "console"}, [b.lang for b in found]
    for block in found:
        {"python": lambda b: run_python(b, work, env), "sh": lambda b: run_sh(b, work, env)}.get(
            block.lang, lambda b: run_console(b, work, env, real)
        )(block)
    # What the blocks were meant to make is there.
    for made in ("en.depfs", "tagger.depfs", "graph2.depfs", "parsed.conllu", "scored.conllu"):
        assert (work / made).stat().st_size > 0, made


def test_readme_lines_not_run_are_the_install_lines() -> None:
    skipped = [
        line.split(" #")[0].strip()
        for b in blocks(ROOT / "README.md")
        if b.lang == "sh"
        for line in b.text.splitlines()
        if line.startswith(NOT_RUN)
    ]
    assert skipped == [
        "pip install .",
        "pip install '.[spacy]'",
        "pip install '.[dynfs,plot]'",
        "pip install '.[dask]'",
    ]
    # The extras they name exist.
    for extra in ("spacy", "dynfs", "plot", "dask"):
        assert re.search(rf"^{extra} = \[", (ROOT / "pyproject.toml").read_text(), re.M), extra


def test_console_output_matching() -> None:
    assert matches(["a", "...", "z"], ["a", "b", "c", "z"])
    assert matches(["a", "..."], ["a"])
    assert not matches(["a", "...", "z"], ["a", "b"])
    assert not matches(["a", "b"], ["a", "c"])


def help_options(command: list[str], cache: dict[tuple[str, ...], set[str]]) -> set[str]:
    """The options `depfs COMMAND --help` lists (empty if the command does not exist)."""
    key = tuple(command)
    if key not in cache:
        r = subprocess.run(
            [sys.executable, "-m", "depfs.cli", *command, "--help"], capture_output=True, text=True
        )
        cache[key] = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*|-[a-z])\b", r.stdout))
        cache[key] |= {"--help"} if r.returncode == 0 else set()
    return cache[key]


def test_docs_commands_and_snippets_are_real() -> None:
    cache: dict[tuple[str, ...], set[str]] = {}
    groups = {"select", "templates"}  # commands whose first argument is a subcommand
    checked = 0
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in blocks(path):
            if block.lang == "python":
                compile(block.text, f"{block.file}:{block.line}", "exec")
                continue
            for line in block.text.replace("\\\n", " ").splitlines():
                words = shlex.split(line.split(" #")[0].lstrip("$ "))
                if not words or words[0] != "depfs" or len(words) < 2:
                    continue
                command = words[1:3] if words[1] in groups and len(words) > 2 else words[1:2]
                if command[0].startswith("-"):
                    command = []
                known = help_options(command, cache)
                assert "--help" in known, f"{block.file}:{block.line}: no command {command}"
                used = {w.split("=")[0] for w in words[1:] if re.match(r"--?[a-z]", w)}
                assert used <= known, f"{block.file}:{block.line}: {sorted(used - known)}"
                checked += 1
    assert checked > 20


def test_no_merge_conflict_markers_are_committed() -> None:
    """A merge resolved in one file and committed with markers left in another (as
    docs/usage.md once was) shows up here, not in a reader's face."""
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.split()
    if not files:
        pytest.skip("not a git checkout")
    marker = re.compile(rb"^(<<<<<<<|>>>>>>>) ", re.MULTILINE)
    found = [
        f
        for f in files
        if (ROOT / f).is_file()
        and not f.startswith(("fuzz/corpus/", "tests/data/"))
        and marker.search((ROOT / f).read_bytes())
    ]
    assert not found, found
