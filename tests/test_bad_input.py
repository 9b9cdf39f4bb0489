"""Bad input, one table per class of issue 18: writes that must destroy nothing, hangs,
tracebacks, silently wrong results, options that lie, unclear messages.

A CLI row runs `depfs` in this process (click's CliRunner) unless it needs a real
process (signals, a guard against hangs, `python -m depfs`) and asserts the exit
status, that stderr is one `depfs: error: ...` line holding the row's words (file,
line or sentence, problem) with no traceback, and what is left on disk: outputs
untouched, no hidden `.*.tmp` file. An API row asserts the exception and its words.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import gzip
import io
import os
import re
import shlex
import signal
import stat
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import depfs
import depfs.base
import depfs.files
import depfs.jackknifing
import depfs.pipeline
import numpy as np
import pytest
from click.testing import CliRunner
from depfs import decode
from depfs.cli import main
from depfs.datasets import synthetic, synthetic_conllu
from small_models import AE_SET, small_graph
from test_tagger import SMALL

#: The checked-in models (tests/data/make_models.py): an order-2 graph model, a DynFS one.
DATA = Path(__file__).parent / "data"

#: A guard against hangs for rows run in a process: a hang is minutes, every row here
#: ends in seconds (this bounds the wait; it measures nothing).
GUARD = 60


def _without_heads(text: str) -> str:
    rows = []
    for line in text.splitlines():
        cols = line.split("\t")
        if len(cols) == 10:
            cols[6] = "_"
        rows.append("\t".join(cols))
    return "\n".join(rows) + "\n"


def _long_sentence(words: int) -> str:
    """One fully tagged sentence of `words` words (a chain), from the synthetic grammar's
    word rows."""
    rows = [ln.split("\t") for ln in synthetic_conllu(40, seed=4).splitlines() if "\t" in ln]
    out = []
    for i in range(1, words + 1):
        cols = list(rows[i % len(rows)])
        cols[0], cols[6], cols[7] = str(i), str(i - 1), "root" if i == 1 else "dep"
        out.append("\t".join(cols))
    return "\n".join(out) + "\n\n"


@pytest.fixture(scope="module")
def d(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Small models and odd files, made once; tests copy what they overwrite."""
    root = tmp_path_factory.mktemp("bad")
    f = {
        k: root / v
        for k, v in {
            "ae": "ae.depfs",
            "graph": "g.depfs",
            "tagger": "t.depfs",
            "gold": "gold.conllu",
            "nohead": "nohead.conllu",
            "untagged": "untagged.conllu",
            "empty": "empty.conllu",
            "bom": "bom.conllu",
            "crlf": "crlf.conllu",
            "roots": "roots.conllu",
            "trunc_gz": "trunc.txt.gz",
            "bad_gz": "badgz.conllu.gz",
            "dir": "adir",
            "long": "long.conllu",
            "big": "big.conllu",
            "pool": "pool.txt",
            "clusters": "clusters.txt",
            "order": "order.txt",
        }.items()
    }
    gold_text = synthetic_conllu(40, seed=0)
    gold = depfs.Treebank.from_string(gold_text)
    f["gold"].write_text(gold_text)
    depfs.ArcEagerParser(AE_SET, epochs=1).fit(gold).save(f["ae"])
    small_graph(epochs=1).fit(gold).save(f["graph"])
    depfs.Tagger(SMALL, epochs=1).fit(gold).save(f["tagger"])
    f["nohead"].write_text(_without_heads(gold_text))
    f["untagged"].write_text(
        "\n".join(
            "\t".join(c if i not in (2, 3, 4, 5) else "_" for i, c in enumerate(line.split("\t")))
            for line in gold_text.splitlines()
        )
        + "\n"
    )
    f["empty"].write_bytes(b"")
    f["bom"].write_bytes(b"\xef\xbb\xbf" + gold_text.encode())
    f["crlf"].write_bytes(gold_text.replace("\n", "\r\n").encode())
    f["roots"].write_text("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n2\tb\tb\tX\t_\t_\t0\troot\t_\t_\n\n")
    f["trunc_gz"].write_bytes(gzip.compress(b"some words here\n" * 500)[:60])
    f["bad_gz"].write_bytes(b"\x1f\x8b" + bytes(range(200)))
    f["dir"].mkdir()
    f["long"].write_text(_long_sentence(10_000))
    f["big"].write_text(synthetic_conllu(3000, seed=6))
    f["pool"].write_text("form(STACK_0)\nupos(STACK_0)\n")
    f["clusters"].write_text("0101\tthe\t100\n")
    f["order"].write_text("upos(h) & upos(m)\n# score 1 uas 50.0\nform(m)\n# score 2 uas 60.0\n")
    return f


def _subs(args: list[str], d: dict[str, Path], tmp: Path) -> list[str]:
    """`{name}` in a row's arguments: a file of the fixture; `{tmp}`: the row's folder."""
    return [a.format(tmp=tmp, **{k: str(v) for k, v in d.items()}) for a in args]


def _cli(args: list[str], stdin: bytes | None = None) -> tuple[int, str, str]:
    """Runs the CLI in this process: (exit status, stdout, stderr). A Python exception
    that escaped the CLI's handler fails the test here."""
    res = CliRunner().invoke(main, args, input=stdin)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise AssertionError(f"{args}: an exception escaped: {res.exception!r}")
    return res.exit_code, res.stdout, res.stderr


def _process(args: list[str], timeout: float = GUARD, **kw: Any) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "depfs", *args],
        capture_output=True,
        timeout=timeout,
        check=False,
        **kw,
    )


def _one_line_error(stderr: str, words: list[str]) -> None:
    """One stderr line, `depfs: error: ...`, naming each of `words`; no traceback."""
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("depfs: error: "), stderr
    for w in words:
        assert w in lines[0], (w, stderr)


def _no_temporaries(*folders: Path) -> None:
    for folder in folders:
        left = [p.name for p in folder.iterdir() if p.name.startswith(".")]
        assert not left, left


def _not_writable(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """`os.access` says `path` is not writable, as for a user other than root (root may
    write anything); every other path keeps its real access."""
    real_access = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda p, mode: (
            mode & os.W_OK == 0 and real_access(p, mode)
            if os.fspath(p) == str(path)
            else real_access(p, mode)
        ),
    )


def _parsed(d: dict[str, Path], model: str = "ae") -> bytes:
    return depfs.load(d[model]).parse(depfs.read_conllu(d["gold"])).to_string().encode()


# ---------------------------------------------------------------- writes


def _fifo(tmp: Path) -> Callable[[], bytes]:
    """A FIFO at tmp/out with a reader collecting what is written into it."""
    path = tmp / "out"
    os.mkfifo(path)
    got: list[bytes] = []

    def read() -> None:
        with open(path, "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def done() -> bytes:
        reader.join(GUARD)
        assert stat.S_ISFIFO(path.lstat().st_mode)  # still a FIFO, not a regular file
        return got[0]

    return done


def _device(tmp: Path) -> Callable[[], bytes]:
    """A character device (like /dev/null: major 1, minor 3) at tmp/out."""
    path = tmp / "out"
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))

    def done() -> bytes:
        assert stat.S_ISCHR(path.lstat().st_mode)
        return b""

    return done


def _symlink(tmp: Path) -> Callable[[], bytes]:
    target = tmp / "target.conllu"
    target.write_text("old\n")
    (tmp / "out").symlink_to(target)

    def done() -> bytes:
        assert (tmp / "out").is_symlink() and os.readlink(tmp / "out") == str(target)
        return target.read_bytes()

    return done


def _mode(mode: int) -> Callable[[Path], Callable[[], bytes]]:
    def make(tmp: Path) -> Callable[[], bytes]:
        out = tmp / "out"
        out.write_text("old\n")
        out.chmod(mode)

        def done() -> bytes:
            assert stat.S_IMODE(out.stat().st_mode) == mode
            return out.read_bytes()

        return done

    return make


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(_fifo, id="fifo-written-in-place"),
        pytest.param(
            _device,
            id="device-written-in-place",
            marks=pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root"),
        ),
        pytest.param(_symlink, id="symlink-target-replaced-not-the-link"),
        pytest.param(_mode(0o600), id="mode-0600-kept"),
        pytest.param(_mode(0o444), id="mode-0444-kept"),
    ],
)
def test_writes_keep_the_node_at_the_output_path(
    d: dict[str, Path], tmp_path: Path, make: Callable[[Path], Callable[[], bytes]]
) -> None:
    """`-o NODE`: a FIFO or device is written in place, a symlink's target is replaced,
    a regular file keeps its mode; the bytes are the parse."""
    done = make(tmp_path)
    code, _, err = _cli(["parse", str(d["ae"]), str(d["gold"]), "-o", str(tmp_path / "out")])
    assert code == 0, err
    got = done()
    if make is not _device:
        assert got == _parsed(d)
    _no_temporaries(tmp_path)


def _through_fifo(tmp: Path, data: bytes) -> Path:
    """A FIFO at tmp/in.fifo with a writer feeding it `data` once (the pipe holds 64 KiB:
    the reader must read while it is written)."""
    path = tmp / "in.fifo"
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as f:
            f.write(data)

    threading.Thread(target=write, daemon=True).start()
    return path


@pytest.mark.parametrize("kind", ["conllu", "gzip", "horizontal"])
@pytest.mark.parametrize("command", ["parse", "tag"])
def test_a_pipe_input_is_read_once_and_whole(
    d: dict[str, Path], tmp_path: Path, kind: str, command: str
) -> None:
    """A FIFO (as `<(zcat x.gz)` gives) or `/dev/stdin` as INPUT: opened once, nothing
    lost to format or gzip sniffing (each extra open used to drop the first 4 KiB), the
    same bytes as the same input read from a regular file."""
    big = d["big"].read_bytes()
    words = [s.forms for s in depfs.read_conllu(d["big"])][:400]
    data = {
        "conllu": big,
        "gzip": gzip.compress(big, mtime=0),
        "horizontal": "".join(" ".join(w) + "\n" for w in words).encode(),
    }[kind]
    assert len(data) > 3 * 4096
    plain = tmp_path / "in.file"
    plain.write_bytes(data)
    model = str(d["tagger" if command == "tag" else "ae"])
    extra = ["--allow-missing-tags"] if command == "parse" and kind == "horizontal" else []
    want = _process([command, model, str(plain), *extra])
    assert want.returncode == 0, want.stderr
    got = _process([command, model, str(_through_fifo(tmp_path, data)), *extra])
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout
    out = tmp_path / "out.conllu"
    got = _process([command, model, "/dev/stdin", *extra, "-o", str(out)], input=data)
    assert got.returncode == 0, got.stderr
    assert out.read_bytes() == want.stdout


def test_every_writer_gives_a_new_file_the_mode_open_gives(
    d: dict[str, Path], tmp_path: Path
) -> None:
    """One writer (Rust's `io::atomic`) behind model files, CoNLL-U and `depfs.files`: a
    new file gets 0666 less the umask, as `open(2)` gives it, whichever layer writes."""
    old = os.umask(0o027)
    try:
        (tmp_path / "plain").write_bytes(b"")
        depfs.files.write_text_atomic(tmp_path / "order.txt", "form(h)\n")
        depfs.read_conllu(d["gold"]).write(tmp_path / "out.conllu")
        depfs.load(d["ae"]).save(tmp_path / "m.depfs")
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert modes == dict.fromkeys(["plain", "order.txt", "out.conllu", "m.depfs"], 0o640)


# (arguments, exit status, words of the message, the files that must be left as they were)
WRITE_REFUSALS = [
    (["parse", "{ae}", "{gold}", "-o", "{ae}"], ["is the model"], ["ae"]),
    (["parse", "{ae}", "{gold}", "-o", "{gold}"], ["is the input"], ["gold"]),
    (["tag", "{tagger}", "{gold}", "-o", "{tagger}"], ["is the model"], ["tagger"]),
    (["jackknife", "--train", "{gold}", "-o", "{gold}"], ["is the input"], ["gold"]),
    (["train", "--train", "{gold}", "--out", "{gold}"], ["--out", "is the --train file"], ["gold"]),
    (
        ["train", "--train", "{gold}", "--dev", "{nohead}", "--out", "{nohead}"],
        ["is the --dev file"],
        ["nohead"],
    ),
    (["train", "--train", "{gold}", "--out", "{tmp}/no/m.depfs"], ["no", "does not exist"], []),
    (["parse", "{ae}", "{gold}", "-o", "{tmp}/no/out.conllu"], ["does not exist"], []),
    (["parse", "{ae}", "{gold}", "--out-dir", "{tmp}/no"], ["--out-dir", "no such folder"], []),
    (
        ["parse", "{ae}", "{gold}", "{gold}", "--out-dir", "{dir}"],
        ["gold.conllu and", "gold.conllu have the same file name", "collide in"],
        [],
    ),
    (
        ["parse", "{ae}", "{gold}", "--tagger", "{tagger}", "-o", "{tagger}"],
        ["-o", "is the --tagger model"],
        ["tagger"],
    ),
    (
        ["jackknife", "--train", "{gold}", "--clusters", "{clusters}", "-o", "{clusters}"],
        ["is the --clusters file"],
        ["clusters"],
    ),
    (
        ["train", "--train", "{gold}", "--parser", "arc-eager", "--templates", "{pool}"]
        + ["--out", "{pool}"],
        ["is the --templates file"],
        ["pool"],
    ),
    (
        ["select", "wrapper", "--pool", "{pool}", "--train", "{gold}", "--dev", "{gold}"]
        + ["--out", "{gold}"],
        ["--out", "is the --train file"],
        ["gold"],
    ),
    (
        ["select", "wrapper", "--pool", "{pool}", "--train", "{gold}", "--dev", "{gold}"]
        + ["--out", "{pool}"],
        ["--out", "is the --pool file"],
        ["pool"],
    ),
    (
        ["select", "wrapper", "--pool", "{pool}", "--train", "{gold}", "--dev", "{gold}"]
        + ["--out", "{tmp}/o.txt", "--log", "{tmp}/o.txt"],
        ["--out", "is also --log"],
        [],
    ),
    (
        ["select", "groups", "{order}", "--k", "2", "--out", "{order}"],
        ["is the first order"],
        ["order"],
    ),
    (["parse", "{ae}", "{gold}", "-o", "{gold}/x"], ["is a file, not a folder"], []),
]


@pytest.mark.parametrize(("args", "words", "kept"), WRITE_REFUSALS)
def test_writes_that_would_destroy_are_refused_before_any_work(
    d: dict[str, Path], tmp_path: Path, args: list[str], words: list[str], kept: list[str]
) -> None:
    before = {k: d[k].read_bytes() for k in kept}
    code, _, err = _cli(_subs(args, d, tmp_path))
    assert code == 2
    _one_line_error(err, words)
    assert {k: d[k].read_bytes() for k in kept} == before
    _no_temporaries(tmp_path, d["gold"].parent)


def test_an_unwritable_output_folder_is_refused_before_training(
    d: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(The tests may run as root, for whom every folder is writable: os.access says no.)"""
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, m, **kw: not m & os.W_OK and real(p, m, **kw))
    out = tmp_path / "m.depfs"
    code, _, err = _cli(["train", "--train", str(d["gold"]), "--out", str(out), "--epochs", "1"])
    assert code == 2
    _one_line_error(err, ["m.depfs", "is not writable"])
    assert "epoch" not in err and not out.exists()


def test_force_overwrites_the_input_and_dash_is_stdout(d: dict[str, Path], tmp_path: Path) -> None:
    copy = tmp_path / "in.conllu"
    copy.write_bytes(d["gold"].read_bytes())
    code, _, _ = _cli(["parse", str(d["ae"]), str(copy), "-o", str(copy), "--force"])
    assert code == 0 and copy.read_bytes() == _parsed(d)
    code, out, _ = _cli(["parse", str(d["ae"]), str(d["gold"]), "-o", "-"])
    assert code == 0 and out.encode() == _parsed(d)


def test_a_failed_parse_leaves_the_old_output(d: dict[str, Path], tmp_path: Path) -> None:
    """A bad line far into the input: named by its line, the old output untouched."""
    lines = d["gold"].read_text().splitlines()
    k = max(i for i, line in enumerate(lines) if line[:1].isdigit())
    lines[k] = lines[k].replace("\t", " ", 1)
    bad, out = tmp_path / "bad.conllu", tmp_path / "out.conllu"
    bad.write_text("\n".join(lines) + "\n")
    out.write_text("old\n")
    code, _, err = _cli(["parse", str(d["ae"]), str(bad), "-o", str(out), "--batch-size", "3"])
    assert code == 2
    _one_line_error(err, [f"bad.conllu:{k + 1}:", "columns"])
    assert out.read_text() == "old\n"
    _no_temporaries(tmp_path)


def _writing_into(pid: int, folder: Path) -> bool:
    """Whether process `pid` has a file of `folder` open: the output it is writing (an
    unnamed file shows as `folder/#INODE (deleted)`, a named temporary by its name)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(f"{folder}/"):
                return True
        except FileNotFoundError:
            pass
    return False


def _start_writing(
    argv: list[str], folder: Path, pre_input: bytes = b"", **kw: Any
) -> subprocess.Popen | None:
    """Starts `argv` and returns it once it has a file of `folder` open for writing; None
    if it ended first. A shell running the tests in the background ignores SIGINT in
    its children: the child gets its default handling back. `pre_input`: written to its
    stdin (a pipe) at once, which is left open."""
    proc = subprocess.Popen(
        argv, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kw
    )
    if pre_input:
        proc.stdin.write(pre_input)  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
    deadline = time.monotonic() + GUARD
    while not _writing_into(proc.pid, folder):
        if proc.poll() is not None:
            return None
        assert time.monotonic() < deadline, "the write never started"
        time.sleep(0.0005)
    return proc


#: A child that writes a treebank with the Rust writer (`io::atomic`, which model files
#: use too), `argv[1]` times the synthetic corpus (the write lasts a while).
RUST_WRITER = """
import sys, depfs
from depfs.datasets import synthetic_conllu
tb = depfs.Treebank.from_string(synthetic_conllu(500, seed=1) * int(sys.argv[1]))
tb.write(sys.argv[2])
"""

#: A child that writes through `depfs.files.atomic_stream` and stays in the write.
PYTHON_WRITER = """
import sys
from depfs.files import atomic_stream
with atomic_stream(sys.argv[2]) as f:
    f.write(b"1\\tA" * 2**20)
    f.flush()
    sys.stdin.read()  # until killed
"""

KILLED = [
    # (what writes: a child's arguments after the interpreter; OUT is the output)
    pytest.param(["-c", RUST_WRITER, "40", "OUT"], id="rust-writer"),
    pytest.param(["-c", PYTHON_WRITER, "1", "OUT"], id="atomic-stream"),
    pytest.param(
        ["-m", "depfs", "parse", "{graph}", "{big}", "-o", "OUT", "--threads", "1"]
        + ["--batch-size", "1"],
        id="depfs-parse",
    ),
]


@pytest.mark.parametrize("args", KILLED)
def test_a_write_killed_midway_leaves_nothing(
    d: dict[str, Path], tmp_path: Path, args: list[str]
) -> None:
    """SIGKILL while the output is written (no handler runs): the old output untouched
    and no other file in its folder. The child is stopped first and checked to be still
    in the write, so the kill is known to land mid-write (a write that ended before the
    check is tried again)."""
    out = tmp_path / "out.conllu"
    argv = [sys.executable, *(a.replace("OUT", str(out)) for a in _subs(args, d, tmp_path))]
    for _ in range(10):
        out.write_text("old\n")
        proc = _start_writing(argv, tmp_path, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc is None:
            continue
        proc.send_signal(signal.SIGSTOP)
        mid_write = _writing_into(proc.pid, tmp_path) and out.read_text() == "old\n"
        proc.kill()
        proc.communicate(timeout=GUARD)
        if mid_write:
            break
    else:
        pytest.fail("every write ended before it could be stopped")
    assert proc.returncode == -signal.SIGKILL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.conllu"]
    assert out.read_text() == "old\n"


@pytest.mark.parametrize(
    ("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_an_interrupted_parse_writes_nothing_and_says_so(
    d: dict[str, Path], tmp_path: Path, sig: int, status: int
) -> None:
    """Interrupted while the output is being written: exit 130 / 143, one line saying
    the output was not written, nothing left in its folder."""
    out = tmp_path / "out.conllu"
    argv = [sys.executable, "-m", "depfs", "parse", str(d["graph"]), str(d["big"])]
    argv += ["-o", str(out), "--threads", "1", "--batch-size", "1"]
    proc = _start_writing(argv, tmp_path, stderr=subprocess.PIPE, text=True)
    assert proc is not None, "the parse ended early"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=GUARD)
    assert proc.returncode == status, err
    assert err == f"depfs: interrupted: {out} was not written (no file was made)\n"
    assert not out.exists()
    _no_temporaries(tmp_path)


def _pipe_full(fd: int) -> None:
    """Waits until the pipe read at `fd` holds a pipe's worth of bytes nobody reads: its
    writer is then blocked in a write."""
    import fcntl
    import termios

    deadline = time.monotonic() + GUARD
    while True:
        pending = bytearray(4)
        fcntl.ioctl(fd, termios.FIONREAD, pending)
        if int.from_bytes(pending, sys.byteorder) >= 60_000:
            return
        assert time.monotonic() < deadline, "the pipe never filled"
        time.sleep(0.01)


def _ends_on_sigterm(proc: subprocess.Popen) -> str:
    """SIGTERM to `proc`, which must then end with exit 143 (not stay blocked in a read
    or write of another thread); its stderr."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("still running 20 s after SIGTERM")
    err = proc.stderr.read() if proc.stderr else ""
    assert proc.returncode == 143, err
    return err.decode() if isinstance(err, bytes) else err


def test_sigterm_ends_a_parse_blocked_on_a_full_stdout(d: dict[str, Path]) -> None:
    """`depfs parse M big | (a reader that stops reading)`: SIGTERM ends it (exit 143,
    its one line); the writing thread, blocked on the full pipe, used to keep the
    process alive until the pipe's reader went away. Planted: waiting for the writer
    after an interruption fails."""
    argv = [sys.executable, "-m", "depfs", "parse", str(d["graph"]), str(d["big"])]
    proc = subprocess.Popen(
        [*argv, "--threads", "1", "--batch-size", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _pipe_full(proc.stdout.fileno())  # type: ignore[union-attr]
        err = _ends_on_sigterm(proc)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    assert err.startswith("depfs: interrupted; stdout holds") and err.count("\n") == 1, err


def test_sigterm_ends_a_parse_of_an_idle_stdin(d: dict[str, Path], tmp_path: Path) -> None:
    """`(cat in; sleep) | depfs parse M -o OUT`: SIGTERM while stdin is idle ends it
    (143, one line, no output made); the reading thread, blocked on stdin, used to keep
    the interpreter from exiting, and a reader on sys.stdin's own buffer aborts it."""
    out = tmp_path / "out.conllu"
    argv = [sys.executable, "-m", "depfs", "parse", str(d["graph"]), "-o", str(out)]
    proc = _start_writing(
        [*argv, "--threads", "1", "--batch-size", "5"],
        tmp_path,
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pre_input=d["gold"].read_bytes() * 3,
    )
    assert proc is not None, "the parse ended early"
    try:
        time.sleep(0.3)  # the batches read are parsed: the reader waits on stdin
        err = _ends_on_sigterm(proc)
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    assert err == f"depfs: interrupted: {out} was not written (no file was made)\n"
    assert not out.exists()
    _no_temporaries(tmp_path)


def test_sigterm_ends_a_parse_into_a_fifo_nobody_reads(d: dict[str, Path], tmp_path: Path) -> None:
    """`-o FIFO` whose reader stops reading: the first SIGTERM ends the parse (143, one
    line). It used to be ignored, and a second one gave `internal error: RuntimeError:
    Already borrowed` (exit 1): the output was dropped while a write held it."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # opened, never read
    argv = [sys.executable, "-m", "depfs", "parse", str(d["graph"]), str(d["big"])]
    proc = subprocess.Popen(
        [*argv, "-o", str(fifo), "--threads", "1", "--batch-size", "1"], stderr=subprocess.PIPE
    )
    try:
        _pipe_full(reader)
        err = _ends_on_sigterm(proc)
    finally:
        proc.kill()
        proc.wait()
        os.close(reader)
        proc.stderr.close()  # type: ignore[union-attr]
    assert err == f"depfs: interrupted: {fifo} (written in place) may hold part of the output\n"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_dev_stdout_is_stdout_written_through(d: dict[str, Path], tmp_path: Path) -> None:
    """`-o /dev/stdout` (`/dev/fd/1`): to a pipe, the bytes of a parse to stdout (it was
    "No such file or directory": the link's target `pipe:[…]` was taken for a path);
    to a file the shell opened for appending (`>> log`), appended, not a new file
    renamed over it (which lost the earlier lines)."""
    plain = _process(["parse", str(d["ae"]), str(d["gold"])])
    assert plain.returncode == 0 and plain.stdout
    for name in ["/dev/stdout", "/dev/fd/1"]:
        res = _process(["parse", str(d["ae"]), str(d["gold"]), "-o", name])
        assert res.returncode == 0 and res.stderr == b"", res.stderr
        assert res.stdout == plain.stdout, name
        log = tmp_path / "log.txt"
        log.write_bytes(b"earlier\n")
        inode = log.stat().st_ino
        with open(log, "ab") as append:
            argv = [sys.executable, "-m", "depfs", "parse", str(d["ae"]), str(d["gold"])]
            code = subprocess.run([*argv, "-o", name], stdout=append, timeout=GUARD).returncode
        assert code == 0
        assert log.read_bytes() == b"earlier\n" + plain.stdout, name
        assert log.stat().st_ino == inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.txt"]


def test_an_out_dir_output_that_is_a_folder_is_refused_before_any_work(
    d: dict[str, Path], tmp_path: Path
) -> None:
    """`--out-dir D` where D/b.conllu is a folder: refused before a.conllu is parsed
    and written (it was found only when b's turn came, after a was written)."""
    out = tmp_path / "out"
    (out / "b.conllu").mkdir(parents=True)
    a, b = tmp_path / "a.conllu", tmp_path / "b.conllu"
    a.write_bytes(d["gold"].read_bytes())
    b.write_bytes(d["gold"].read_bytes())
    code, _, err = _cli(["parse", str(d["ae"]), str(a), str(b), "--out-dir", str(out)])
    assert code == 2 and "b.conllu: a folder, not an output file" in err, err
    assert sorted(p.name for p in out.iterdir()) == ["b.conllu"]


def test_the_temporary_pattern_of_an_output_is_its_own() -> None:
    """The leftovers removed for output `a` are `.a.XXXXXX.tmp`, never the temporary
    file of an output `a.b.conllu` in the same folder (`.a.b.conllu.XXXXXX.tmp`),
    which a concurrent write may still be using."""
    import fnmatch

    pattern = depfs.files.temporary_pattern("/somewhere/a")
    assert fnmatch.fnmatch(".a.Ab12Cd.tmp", pattern)
    assert not fnmatch.fnmatch(".a.b.conllu.Ab12Cd.tmp", pattern)


def test_a_remote_scheduler_gets_absolute_paths(
    d: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`depfs parse model in/a.conllu --out-dir out --scheduler ADDRESS`: a remote worker
    opens the paths in its own folder, so they go to it absolute (relative ones made
    a worker parse another file, or fail on a model it could not find, with exit 0 or a
    wrong message); `--scheduler local` (workers in this folder) keeps them as given."""
    import concurrent.futures as cf

    import depfs.select.engine as engine

    seen: list[tuple[Any, ...]] = []
    real = depfs.pipeline.parse_files

    def spy(model: str, pairs: Any, executor: Any, **kw: Any) -> Any:
        seen.append((model, kw["tagger_path"], *[p for pair in pairs for p in pair]))
        return real(model, pairs, executor, **kw)

    monkeypatch.setattr(depfs.pipeline, "parse_files", spy)
    monkeypatch.setattr(engine, "dask_executor", lambda *a: (cf.ThreadPoolExecutor(1), None))
    monkeypatch.setattr(engine, "close_dask", lambda ex, client: ex.shutdown())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "in" / "a.conllu").write_bytes(d["gold"].read_bytes())
    (tmp_path / "m.depfs").write_bytes(d["ae"].read_bytes())
    (tmp_path / "t.depfs").write_bytes(d["tagger"].read_bytes())
    args = ["parse", "m.depfs", "in/a.conllu", "--out-dir", "out", "--tagger", "t.depfs"]
    assert _cli([*args, "--scheduler", "tcp://127.0.0.1:8786"])[0] == 0
    assert all(os.path.isabs(p) for p in seen[-1]), seen
    assert seen[-1][2:] == (str(tmp_path / "in/a.conllu"), str(tmp_path / "out/a.conllu"))
    assert (tmp_path / "out/a.conllu").exists()


def test_dask_clusters_cut_short_close_quietly_at_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A LocalCluster interrupted while it started fails an assertion in Dask's own
    close at exit, whose traceback followed depfs's one line: that close runs quietly."""
    pytest.importorskip("distributed")
    import atexit

    import depfs.select.engine as engine
    from distributed.deploy import spec

    def failing() -> None:
        raise AssertionError("Status.init")

    registered: list[Any] = []
    monkeypatch.setattr(spec, "close_clusters", failing)
    monkeypatch.setattr(atexit, "unregister", lambda fn: registered.append(("off", fn)))
    monkeypatch.setattr(atexit, "register", lambda fn: registered.append(("on", fn)))
    engine._quiet_cluster_exit()
    engine._quiet_cluster_exit()  # once is enough
    assert [r[0] for r in registered] == ["off", "on"] and registered[0][1] is failing
    registered[1][1]()  # no exception
    spec.close_clusters()


def _interrupt(
    owner: Any, attr: str, when: str, nth: int = 1
) -> Callable[[pytest.MonkeyPatch], None]:
    """Ctrl-C at the `nth` call of `owner.attr`, `before` it runs or `after` it returns
    (where a signal that arrives during a call into the Rust core is raised)."""

    def plant(monkeypatch: pytest.MonkeyPatch) -> None:
        real = getattr(owner, attr)
        calls = []

        def wrapped(*args: Any, **kw: Any) -> Any:
            calls.append(1)
            if len(calls) == nth and when == "before":
                raise KeyboardInterrupt
            result = real(*args, **kw)
            if len(calls) == nth:
                raise KeyboardInterrupt
            return result

        monkeypatch.setattr(owner, attr, wrapped)

    return plant


#: A context manager wrapped like :func:`_interrupt` ``after``: Ctrl-C once it has ended.
def _interrupt_after_block(monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib

    real = depfs.files.atomic_stream

    @contextlib.contextmanager
    def wrapped(path: Any) -> Any:
        with real(path) as f:
            yield f
        raise KeyboardInterrupt

    monkeypatch.setattr(depfs.files, "atomic_stream", wrapped)


_TRAIN = ["train", "--train", "{gold}", "--epochs", "1", "--out"]
INTERRUPTS = [
    # (arguments, outputs that exist before, where Ctrl-C strikes, the line it prints)
    pytest.param(
        [*_TRAIN, "{tmp}/m.depfs"],
        ["m.depfs"],
        _interrupt(depfs.base.TrainableModel, "save", "before"),
        "interrupted: {tmp}/m.depfs was not written (the old file is untouched)",
        id="train-before-the-save",
    ),
    pytest.param(
        [*_TRAIN, "{tmp}/m.depfs"],
        [],
        _interrupt(depfs.base.TrainableModel, "save", "after"),
        "interrupted after {tmp}/m.depfs was written",
        id="train-during-the-save",
    ),
    pytest.param(
        ["parse", "{ae}", "{gold}", "-o", "{tmp}/p.conllu"],
        [],
        _interrupt(depfs.pipeline, "parse_stream", "after"),
        "interrupted: {tmp}/p.conllu was not written (no file was made)",
        id="parse-during-the-write",
    ),
    pytest.param(
        ["parse", "{ae}", "{gold}"],
        [],
        _interrupt(depfs.pipeline, "parse_stream", "after"),
        "interrupted; stdout holds the sentences parsed before it, each whole (no file was "
        "written)",
        id="parse-to-stdout",
    ),
    pytest.param(
        ["parse", "{ae}", "{gold}", "-o", "{tmp}/p.conllu"],
        ["p.conllu"],
        _interrupt(depfs.pipeline, "parse_file", "after"),
        "interrupted after {tmp}/p.conllu was written",
        id="parse-after-the-write",
    ),
    pytest.param(
        ["parse", "{ae}", "{gold}", "{nohead}", "--out-dir", "{tmp}", "--threads", "1"],
        [],
        _interrupt(depfs.pipeline, "parse_file", "before", nth=2),
        "interrupted: {tmp}/gold.conllu was written; {tmp}/nohead.conllu was not written "
        "(no file was made)",
        id="parse-out-dir-between-files",
    ),
    pytest.param(
        ["tag", "{tagger}", "{gold}", "-o", "{tmp}/t.conllu"],
        ["t.conllu"],
        _interrupt(depfs.pipeline, "parse_stream", "after"),
        "interrupted: {tmp}/t.conllu was not written (the old file is untouched)",
        id="tag-during-the-write",
    ),
    pytest.param(
        ["tag", "{tagger}", "{gold}", "-o", "{tmp}/t.conllu"],
        [],
        _interrupt(depfs.pipeline, "parse_file", "after"),
        "interrupted after {tmp}/t.conllu was written",
        id="tag-after-the-write",
    ),
    pytest.param(
        ["jackknife", "--train", "{gold}", "--folds", "2", "--epochs", "1", "-o", "{tmp}/j"],
        ["j"],
        _interrupt(depfs.jackknifing, "jackknife", "before"),
        "interrupted: {tmp}/j was not written (the old file is untouched)",
        id="jackknife-while-training",
    ),
    pytest.param(
        ["jackknife", "--train", "{gold}", "--folds", "2", "--epochs", "1", "-o", "{tmp}/j"],
        ["j"],
        _interrupt_after_block,
        "interrupted after {tmp}/j was written",
        id="jackknife-after-the-write",
    ),
]


@pytest.mark.parametrize(("args", "existing", "plant", "line"), INTERRUPTS)
def test_ctrl_c_says_what_was_and_was_not_written(
    d: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    existing: list[str],
    plant: Callable[[pytest.MonkeyPatch], None],
    line: str,
) -> None:
    """Ctrl-C before, during or after an output is written: exit 130 and one line
    naming each output as written or not, which is what is on disk: an output not
    written holds its old bytes (or does not exist), one written is complete."""
    for name in existing:
        (tmp_path / name).write_text("old\n")
    plant(monkeypatch)
    code, _, err = _cli(_subs(args, d, tmp_path))
    line = line.format(tmp=tmp_path)
    assert code == 130
    assert err.endswith(f"\ndepfs: {line}\n" if "\n" in err[:-1] else f"depfs: {line}\n")
    assert err.count("depfs:") == 1, err  # (train's epoch lines come before)
    for name in existing:  # old bytes where the line says not written
        path = tmp_path / name
        assert (path.read_text() == "old\n") == (f"{path} was not written" in line)
    if "interrupted after" in line:
        written = Path(line.split("after ")[1].split(" was")[0])
        assert written.stat().st_size > 4  # complete: checked by the tests of each command
    _no_temporaries(tmp_path)


# ---------------------------------------------------------------- hangs


def _is_one_tree(text: str, words: int) -> bool:
    tb = depfs.Treebank.from_string(text)  # the reader refuses cycles and several roots
    return len(tb) == 1 and tb.n_words == words


HANGS = [
    # (arguments, exit status, what stderr says, check of stdout)
    (
        ["parse", "{ae}", "{gold}", "--threads", "1000000"],
        0,
        "capped at the",
        lambda out, d: out == _parsed(d),
    ),
    (
        ["parse", "{graph}", "{long}", "--threads", "1"],
        0,
        "parsed in chunks",
        lambda out, d: _is_one_tree(out.decode(), 10_000),
    ),
    # Second order and DynFS chunk it too (review 2, M1).
    (
        ["parse", str(DATA / "graph2.depfs"), "{long}", "--threads", "1"],
        0,
        "parsed in chunks",
        lambda out, d: _is_one_tree(out.decode(), 10_000),
    ),
    (
        ["parse", str(DATA / "dynfs1_v5.depfs"), "{long}", "--threads", "1"],
        0,
        "parsed in chunks",
        lambda out, d: _is_one_tree(out.decode(), 10_000),
    ),
    (
        ["parse", "{ae}", "{gold}", "--out-dir", "{tmp}", "--scheduler", "tcp://127.0.0.1:1"],
        2,
        "--scheduler tcp://127.0.0.1:1: Timed out",
        lambda out, d: out == b"",
    ),
]


@pytest.mark.parametrize(
    ("args", "status", "says", "check"),
    HANGS,
    ids=["threads", "10k", "10k-order2", "10k-dynfs", "dask"],
)
def test_no_hang(
    d: dict[str, Path], tmp_path: Path, args: list[str], status: int, says: str, check: Any
) -> None:
    """Huge thread counts, a 10,000-word sentence on the graph parsers, a scheduler
    nobody answers at: each run ends (in seconds) with its result or one line."""
    res = _process(_subs(args, d, tmp_path))
    err = res.stderr.decode()
    assert res.returncode == status, err
    assert says in err and "Traceback" not in err and err.count("\n") == 1
    assert check(res.stdout, d)


def test_a_bad_input_on_a_local_dask_cluster_is_the_one_line_of_a_local_run(
    d: dict[str, Path], tmp_path: Path
) -> None:
    """`depfs parse A B --out-dir D --scheduler local`: a worker's FormatError is the one
    line a run without --scheduler prints, not that line under Dask's log of the failed
    task (ERROR "Compute Failed" with its traceback, a WARNING about the cancelled other
    task) from the worker processes; a good run says nothing at all."""
    pytest.importorskip("distributed")
    bad, here, there = tmp_path / "bad.conllu", tmp_path / "here", tmp_path / "there"
    bad.write_text("1\tThe\tthe\n\n")
    here.mkdir()
    there.mkdir()
    args = ["parse", str(d["ae"]), str(bad), str(d["gold"])]
    local = _process([*args, "--out-dir", str(here)])
    dask = _process([*args, "--out-dir", str(there), "--scheduler", "local", "--workers", "1"])
    assert local.returncode == dask.returncode == 2
    _one_line_error(local.stderr.decode(), ["bad.conllu:1", "10 tab-separated columns"])
    assert dask.stderr.decode() == local.stderr.decode()
    (tmp_path / "good").mkdir()
    good = [*args[:2], str(d["gold"]), "--out-dir", str(tmp_path / "good")]
    res = _process([*good, "--scheduler", "local", "--workers", "1"])
    assert res.returncode == 0 and res.stderr == b""
    assert (tmp_path / "good" / "gold.conllu").read_bytes() == _parsed(d)


def test_no_hang_in_the_api() -> None:
    m = np.random.default_rng(0).random((5, 5))
    assert len(decode.cle_batch([m] * 3, threads=10**6)) == 3
    assert len(decode.eisner_batch([m], threads=10**30)) == 1  # capped, not an overflow


# ---------------------------------------------------------------- tracebacks

TRACEBACKS = [
    # (arguments, words of the one-line message)
    (["eval", "{nohead}", "{nohead}"], ["nohead.conllu: gold sentence 1", "HEAD"]),
    # (the range was shown as 0<=x<=18446744073709551615)
    (
        ["train", "--train", "{gold}", "--out", "{tmp}/m", "--seed", "-1"],
        ["--seed", "-1", "not in the range 0 to 2^64-1"],
    ),
    (["train", "--train", "{gold}", "--out", "{tmp}/m", "--seed", str(2**70)], ["--seed"]),
    (["train", "--train", "{gold}", "--out", "{tmp}/m", "--epochs", str(2**70)], ["--epochs"]),
    (["parse", "{ae}", "{gold}", "--threads", "99999999999999999999"], ["--threads"]),
    (["parse", "{ae}", "{gold}", "--batch-size", str(2**70)], ["--batch-size"]),
    (["tag", "{tagger}", "{gold}", "--batch-size", str(2**64)], ["--batch-size"]),
    (["jackknife", "--train", "{gold}", "-o", "{tmp}/j", "--folds", str(2**70)], ["--folds"]),
    (
        ["parse", "{ae}", "{trunc_gz}", "--input", "horizontal", "--allow-missing-tags"],
        ["trunc.txt.gz: read error after line", "gzip"],
    ),
    (["parse", "{ae}", "{bad_gz}"], ["badgz.conllu.gz", "gzip"]),
    (["stats", "{bad_gz}"], ["badgz.conllu.gz"]),
    (["stats", "{dir}"], ["adir", "is a directory"]),
    (["parse", "{dir}", "{gold}"], ["adir", "is a directory"]),
    (["train", "--train", "{gold}", "--out", "{dir}"], ["adir", "is a directory"]),
]


@pytest.mark.parametrize(("args", "words"), TRACEBACKS)
def test_no_traceback_from_the_cli(
    d: dict[str, Path], tmp_path: Path, args: list[str], words: list[str]
) -> None:
    code, _, err = _cli(_subs(args, d, tmp_path))
    assert code == 2
    _one_line_error(err, words)
    _no_temporaries(tmp_path)


def test_an_unexpected_error_is_one_line_and_debug_shows_it(
    d: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: Any, **kw: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(depfs.pipeline, "parse_file", boom)
    code, _, err = _cli(["parse", str(d["ae"]), str(d["gold"])])
    assert code == 1 and err.count("\n") == 1
    assert "internal error: RuntimeError: boom" in err and "--debug" in err
    res = CliRunner().invoke(main, ["--debug", "parse", str(d["ae"]), str(d["gold"])])
    assert isinstance(res.exception, RuntimeError)


API_TRACEBACKS = [
    # (call, exception, words): Python errors, not OverflowError from the binding
    (
        lambda d: depfs.GraphParser(random_state=-1, epochs=1).fit(synthetic(5)),
        ValueError,
        "random_state",
    ),
    (
        lambda d: depfs.ArcEagerParser(AE_SET, random_state=2**64, epochs=1).fit(synthetic(5)),
        ValueError,
        "random_state",
    ),
    (lambda d: depfs.load(d["ae"]).parse(synthetic(2), threads=-1), ValueError, "threads"),
    (lambda d: depfs.load(d["tagger"]).tag(synthetic(2), threads=-1), ValueError, "threads"),
    (lambda d: decode.eisner_kbest(np.zeros((3, 3)), 10**30), ValueError, "k must be"),
]


def test_numpy_numbers_are_hyperparameters_and_bools_are_not(d: dict[str, Path]) -> None:
    # sklearn grids (ParameterGrid over np.arange) pass numpy integers and reals.
    tb = synthetic(5)
    want = depfs.ArcEagerParser(AE_SET, epochs=1, random_state=3).fit(tb).parse(tb).to_string()
    fitted = depfs.ArcEagerParser(AE_SET, epochs=np.int64(1), random_state=np.int64(3)).fit(tb)
    assert fitted.parse(tb, threads=np.int64(1)).to_string() == want
    assert depfs.load(d["tagger"]).tag(tb, threads=np.int32(1)).to_string()
    assert depfs.base.check_count(np.uint8(3), "x") == 3
    assert type(depfs.base.check_count(np.int64(3), "x")) is int
    assert depfs.base.check_number(np.float32(0.5), "x") == 0.5
    assert depfs.base.check_seed(np.uint64(2**64 - 1)) == 2**64 - 1
    assert depfs.jackknifing.fold_bounds(4, np.int64(2)) == [(0, 2), (2, 4)]
    for bad in (True, np.True_, 1.0, np.float64(1.0), "1"):
        with pytest.raises(ValueError, match="epochs must be an integer"):
            depfs.ArcEagerParser(AE_SET, epochs=bad).fit(tb)
        with pytest.raises(TypeError, match="threads must be an integer"):
            fitted.parse(tb, threads=bad)
    with pytest.raises(ValueError, match="random_state"):
        depfs.ArcEagerParser(AE_SET, epochs=1, random_state=np.True_).fit(tb)
    for bad in (True, np.True_, "0.5", 1j):
        with pytest.raises(ValueError, match="must be a number"):
            depfs.base.check_number(bad, "x")


def test_huge_thread_counts_are_capped_in_the_api(d: dict[str, Path]) -> None:
    tb = depfs.read_conllu(d["gold"])
    assert depfs.load(d["graph"]).parse(tb, threads=10**30).to_string().encode() == _parsed(
        d, "graph"
    )


def test_huge_worker_counts_are_capped_with_a_note(
    d: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """--workers (select wrapper, parse --scheduler local) gets the cap and the note of
    --threads: not 10**6 worker processes."""
    from depfs.select.engine import Engine, worker_count

    cores = os.cpu_count() or 1
    assert worker_count(None) == cores and worker_count(1) == 1
    assert worker_count(10**6) == cores
    assert f"depfs: note: --workers {10**6} capped at the {cores} cores" in capsys.readouterr().err
    engine = Engine(str(d["gold"]), str(d["gold"]), workers=10**6)
    try:
        assert engine._pool()._max_workers == cores  # type: ignore[attr-defined]
    finally:
        engine.close()
    with pytest.raises(ValueError, match="workers"):
        worker_count(0)


# ---------------------------------------------------------------- silently wrong

SILENT_CLI = [
    # (arguments, words of the refusal)
    (["train", "--train", "{gold}", "--order", "2", "--decoder", "cle"], ["first-order only"]),
    (["train", "--train", "{gold}", "--templates", ""], ["--templates is empty"]),
    (["train", "--train", "{gold}", "--dev", "{nohead}"], ["--dev", "nohead.conllu", "no HEAD"]),
    (["train", "--train", "{nohead}"], ["nohead.conllu", "no training sentence"]),
    # A parser's dev without tags chose its epoch on a silently bad parse (review 2, M6).
    (
        ["train", "--parser", "arc-eager", "--train", "{gold}", "--dev", "{untagged}"],
        ["dev", "UPOS", "empty"],
    ),
    (["train", "--train", "{gold}", "--dev", "{untagged}"], ["dev", "UPOS", "empty"]),
    # A tagger's dev without gold tags scored 0.00 and chose its epoch on that.
    (
        ["train", "--parser", "tagger", "--train", "{gold}", "--dev", "{untagged}"],
        ["--dev", "untagged.conllu", "UPOS, XPOS, FEATS, LEMMA empty"],
    ),
    # Probe six: a mistyped set name was read as template text ("atom ... expected
    # attr(address)"); `--train -` said "No such file"; a model as --clusters "not UTF-8".
    (
        ["train", "--parser", "arc-eager", "--templates", "arc_eagr", "--train", "{gold}"],
        ["--templates arc_eagr", "no such shipped template set or file"],
    ),
    (["train", "--train", "-"], ["--train -", "not stdin"]),
    # A parser's --tagger that untagged input could not use (probe six): the model was
    # written, its tagger never ran (untagged --train), or every parse was refused.
    (
        ["train", "--parser", "arc-eager", "--tagger", "{tagger}", "--train", "{untagged}"],
        ["--tagger", "t.depfs", "leaves the tag columns empty", "never run"],
    ),
    # (it named arc_eager_en_ewt, the prefix-trained parser's order, not the cascade's)
    (
        ["train", "--parser", "arc-eager", "--dynamic", "--cascade", "default"]
        + ["--clusters", "{clusters}", "--train", "{gold}"],
        ["order (arc_eager_en_ewt_full15) reads no cluster"],
    ),
    (["train", "--train", "{gold}", "--dev", "-"], ["--dev -", "not stdin"]),
    (
        ["train", "--parser", "tagger", "--clusters", "{ae}", "--train", "{gold}"],
        ["ae.depfs", "a depfs model file, not a word-cluster paths file"],
    ),
]


@pytest.mark.parametrize(("args", "words"), SILENT_CLI)
def test_what_would_train_silently_wrong_is_refused(
    d: dict[str, Path], tmp_path: Path, args: list[str], words: list[str]
) -> None:
    out = tmp_path / "m.depfs"
    code, _, err = _cli(_subs(args, d, tmp_path) + ["--out", str(out), "--epochs", "1"])
    assert code == 2
    _one_line_error(err, words)
    assert not out.exists()
    _no_temporaries(tmp_path)


@pytest.mark.parametrize("odd", ["bom", "crlf"])
def test_a_bom_or_crlf_input_parses_as_the_plain_file(
    d: dict[str, Path], tmp_path: Path, odd: str
) -> None:
    """Read as CoNLL-U (a BOM once made it horizontal text), the same parse."""
    code, out, err = _cli(["parse", str(d["ae"]), str(d[odd])])
    assert code == 0 and err == ""
    assert out.encode() == _parsed(d)


SILENT_API = [
    # (call, words of the ValueError)
    (
        lambda: depfs.GraphParser(order=2, decoder="cle", epochs=1).fit(synthetic(5)),
        "first-order only",
    ),
    (lambda: depfs.GraphParser(arc_templates="", epochs=1).fit(synthetic(5)), "empty"),
    (lambda: depfs.GraphParser(arc_templates="# none\n", epochs=1).fit(synthetic(5)), "empty"),
    (lambda: depfs.GraphParser(epochs=0).fit(synthetic(5)), "epochs"),
    (
        lambda: depfs.GraphParser(dynfs=True, groups="dynfs2_en_ewt").fit(
            synthetic(5), synthetic(5)
        ),
        "groups dynfs2_en_ewt: its groups after '# order 2' are sibling templates",
    ),
    (lambda: decode.tree_score(np.full((3, 3), np.nan), [-1, 0, 1]), "NaN|nan"),
    (lambda: decode.tree_score(np.zeros((3, 3)), [-1, 0.5, 1]), "whole numbers"),
    (lambda: decode.tree_score(np.zeros((3, 3)), [-1, 2, 1]), "not a tree"),
    (lambda: decode.tree_score(np.zeros((3, 3)), [-1, 1, 0]), "not a tree"),
]


#: One non-projective sentence: the arc 3 -> 1 spans word 2, whose head 4 is outside it.
NON_PROJECTIVE = (
    "".join(
        f"{i}\tw{i}\tw{i}\tX\t_\t_\t{h}\t{'root' if h == 0 else 'dep'}\t_\t_\n"
        for i, h in [(1, 3), (2, 4), (3, 0), (4, 3)]
    )
    + "\n"
)

SILENT_API += [
    # Probe six: it said "no complete single-rooted tree" of a complete non-projective one.
    (
        lambda: depfs.ArcEagerParser(AE_SET, epochs=1, pseudo_projective=False).fit(
            depfs.Treebank.from_string(NON_PROJECTIVE)
        ),
        "no training sentence has a complete single-rooted projective tree",
    ),
]


@pytest.mark.parametrize(("call", "words"), SILENT_API)
def test_what_would_be_silently_wrong_in_the_api_raises(call: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        call()


# ---------------------------------------------------------------- options that lie

LIES = [
    # (it said "the graph is scored by": the parser)
    (
        ["select", "wrapper", "--parser", "graph", "--metric", "upos", "--pool", "{pool}"]
        + ["--train", "{gold}", "--dev", "{gold}", "--out", "{tmp}/o.txt"],
        ["--metric upos", "the graph parser is scored by uas or las"],
    ),
    # (arguments, words of the refusal)
    (["train", "--parser", "arc-eager", "--order", "2"], ["--order: graph parser options"]),
    (["train", "--parser", "arc-eager", "--decoder", "cle"], ["--decoder"]),
    (["train", "--parser", "arc-eager", "--max-bits", "12"], ["--max-bits"]),
    (["train", "--dynfs", "--dev", "{gold}", "--decoder", "cle"], ["--dynfs --decoder cle"]),
    (
        ["train", "--dynfs", "--dev", "{gold}", "--folds", "1000"],
        ["--folds 1000: needs at least 1000", "the training data has 40 sentences"],
    ),
    (["train", "--dynfs", "--dev", "{gold}", "--groups", "nosuch"], ["--groups nosuch", "no such"]),
    # An empty value (an unset shell variable) was named as "--groups :".
    (["train", "--dynfs", "--dev", "{gold}", "--groups", ""], ["--groups '': no such set"]),
    # --scheduler without --out-dir was told "several inputs ... not -o" (no -o was given).
    (["parse", "{ae}", "{gold}", "--scheduler", "local"], ["--scheduler: give --out-dir D"]),
    # A second-order groups file's sibling groups were left out of a first-order model.
    (
        ["train", "--dynfs", "--dev", "{gold}", "--groups", "dynfs2_en_ewt"],
        ["--groups dynfs2_en_ewt: its groups after '# order 2'", "give --order 2"],
    ),
    (["train", "--templates", "{dir}"], ["a folder, not a template file"]),
    (["train", "--no-policy-lex"], ["--policy-lex: options of --dynfs"]),
    (["train", "--parser", "arc-eager", "--labeler-templates", "form(m)"], ["graph parser"]),
    (["train", "--parser", "tagger", "--sibling-templates", "x"], ["graph parser options"]),
    (["train", "--sibling-templates", "upos(s)"], ["second-order graph parser only"]),
    # A shipped set of another parser failed inside its first template ("dir exists only
    # in arc templates", "bad arc address STACK_0"), the set's kind not named (review 26).
    (
        ["train", "--parser", "arc-eager", "--templates", "first_order"],
        ["--templates first_order: arc templates (the graph parser)", "use e.g. arc_eager"],
    ),
    (
        ["train", "--templates", "arc_eager"],
        ["--templates arc_eager: configuration templates", "use e.g. first_order"],
    ),
    (
        ["train", "--parser", "tagger", "--templates", "first_order"],
        ["not token templates (the tagger)", "use e.g. tagger"],
    ),
    (["train", "--templates", "upos(STACK_0)"], ["--templates 'upos(STACK_0)'", "STACK_0"]),
    # -o with --out-dir was told "--scheduler: give --out-dir D" (no --scheduler given).
    (
        ["parse", "{ae}", "{gold}", "--out-dir", "{tmp}", "-o", "{tmp}/x.conllu"],
        ["-o and --out-dir: give one"],
    ),
    (["train", "--dynamic"], ["--dynamic", "arc-eager or tagger only"]),
    # --clusters promises cluster templates by default; --dynamic's default orders read
    # none: it ended in "a cluster table, but no template reads it", no option named.
    (
        ["train", "--parser", "arc-eager", "--dynamic", "--clusters", "{clusters}"],
        ["--clusters", "--dynamic: the dynamic default order (arc_eager_en_ewt)"],
    ),
    (
        ["train", "--parser", "tagger", "--dynamic", "--clusters", "{clusters}"],
        ["--clusters", "(tagger_en_ewt) reads no cluster"],
    ),
    (["train", "--folds", "3"], ["--folds", "--dynfs"]),
    (["train", "--threads", "2"], ["--threads: options of --dynfs"]),
    (["train", "--dynfs-tolerance", "0.1"], ["--dynfs-tolerance: options of --dynfs"]),
    (["train", "--dynfs", "--dynfs-tolerance", "-1"], ["--dynfs-tolerance", "-1"]),
    (["train", "--dynfs", "--dynfs-tolerance", "nan"], ["--dynfs-tolerance", "not a finite"]),
    (["train", "--parser", "tagger", "--tagger", "{tagger}"], ["--tagger", "graph and arc-eager"]),
    (["parse", "{ae}", "{gold}", "--workers", "2"], ["--workers", "--scheduler local"]),
    # A blank --scheduler was taken as none: the work ran locally without a word.
    (
        ["parse", "{ae}", "{gold}", "--out-dir", "{tmp}", "--scheduler", ""],
        ["'--scheduler'", "empty"],
    ),
    (
        ["select", "wrapper", "--pool", "{pool}", "--train", "{gold}", "--dev", "{gold}"]
        + ["--out", "{tmp}/o.txt", "--scheduler", " "],
        ["'--scheduler'", "empty"],
    ),
    (["parse", "{ae}", "{gold}", "--chunk-sentences", "9"], ["--chunk-sentences", "--scheduler"]),
    (["parse", "{graph}", "{gold}", "--margin", "1"], ["--margin", "arc-eager models only"]),
    (["parse", "{ae}", "{gold}", "--policy-threshold", "1"], ["--policy-threshold", "--dynfs"]),
    (["parse", "{ae}", "{gold}", "--tagger", "{ae}"], ["ae.depfs", "not a tagger"]),
    (["tag", "{ae}", "{gold}"], ["ae.depfs", "depfs tag needs a tagger"]),
    (["parse", "{tagger}", "{gold}"], ["t.depfs is a tagger, not a parser", "depfs tag"]),
    (["train", "--keep", "last"], ["--keep", "give --dev"]),
    (
        ["train", "--parser", "arc-eager", "--dynamic", "--cascade", "200"],
        ["--cascade 200: must be increasing template counts between 1 and"],
    ),
    (
        ["train", "--parser", "arc-eager", "--dynamic", "--cascade", "1"]
        + ["--templates", "form(STACK_0)"],
        ["this set has 1"],
    ),
    # What "default" stands for, when the set is too small for it.
    (
        ["train", "--parser", "arc-eager", "--dynamic", "--cascade", "default"]
        + ["--templates", "nilsson_nugues"],
        ["--cascade default: (15,40) must be increasing template counts between 1 and 16"],
    ),
    (
        ["parse", "{ae}", "{gold}", "--out-dir", "{tmp}", "--scheduler", "local", "--threads", "2"],
        ["--threads", "one thread of its worker"],
    ),
]


@pytest.mark.parametrize(("args", "words"), LIES)
def test_options_that_do_not_apply_are_refused(
    d: dict[str, Path], tmp_path: Path, args: list[str], words: list[str]
) -> None:
    args = _subs(args, d, tmp_path)
    out = tmp_path / "m.depfs"
    if args[0] == "train":
        args += ["--train", str(d["gold"]), "--out", str(out), "--epochs", "1"]
    code, stdout, err = _cli(args)
    assert code == 2 and stdout == ""
    _one_line_error(err, words)
    assert not out.exists()


# ---------------------------------------------------------------- unclear messages

UNCLEAR = [
    # (arguments, stdin, words the one line must hold, words it must not)
    (["parse", "{ae}"], b"1\tbad\n", ["<stdin>:1: expected 10 tab-separated columns"], []),
    (["templates", "show", "{gold}"], None, ["gold.conllu: not a template file"], []),
    (
        ["parse", "{ae}"],
        b"1\t\xff\xfe\t_\tX\t_\t_\t0\troot\t_\t_\n\n",
        ["<stdin>:1: invalid UTF-8"],
        [],
    ),
    (["eval", "{gold}", "{roots}"], None, ["roots.conllu:2: several roots"], ["multiple_roots"]),
    (["parse", "{ae}", "{empty}"], None, ["empty.conllu:1: empty input"], []),
    # Empty stdin and empty text gave exit 0 and no output, where an empty file is refused.
    (["parse", "{ae}"], b"", ["<stdin>: empty input: no sentence found"], []),
    (["parse", "{ae}", "--input", "horizontal", "{empty}"], None, ["empty input"], []),
    (["parse", "{ae}", "--input", "conllu"], b"\n\n", ["<stdin>: empty input"], []),
    # click's own word for a word given as a seed: "not a valid integer range".
    (
        ["train", "--train", "{gold}", "-o", "{tmp}/m", "--seed", "x"],
        None,
        ["'x' is not a valid integer"],
        ["range"],
    ),
    (["parse", "{ae}", "{tmp}/nope.conllu"], None, ["nope.conllu: No such file"], ["Errno", "'"]),
    (["parse", "{tmp}/nope.depfs", "{gold}"], None, ["nope.depfs: No such file"], ["Errno"]),
    (["info", "{tmp}/nope.depfs"], None, ["nope.depfs: No such file"], ["os error"]),
    (["info", "{gold}"], None, ["gold.conllu: not a depfs model file"], []),
    (
        ["train", "--train", "{gold}", "--out", "{tmp}/m", "--templates", "./nofile.txt"],
        None,
        ["--templates ./nofile.txt: no such template file"],
        [],
    ),
    (
        ["train", "--train", "{gold}", "--out", "{tmp}/m", "--labeler-templates", "a/b.txt"],
        None,
        ["--labeler-templates a/b.txt: no such"],
        [],
    ),
    (
        ["train", "--train", "{gold}", "--out", "{tmp}/m", "--labeler-templates", " "],
        None,
        ["--labeler-templates is empty"],
        [],
    ),
    (
        ["train", "--train", "{gold}", "--out", "{tmp}/m", "--templates", "upos(h"],
        None,
        ["--templates 'upos(h'", "missing closing parenthesis"],
        [],
    ),
    (
        ["jackknife", "--train", "{gold}", "-o", "{tmp}/j", "--templates", "bogus(("],
        None,
        ["--templates 'bogus(('"],
        [],
    ),
    # A DynFS groups file's faults, found before training (they were found after it, as
    # "every group needs a template" and "template index 1 out of range").
    (
        ["train", "--train", "{gold}", "--out", "{tmp}/m", "--dynfs", "--dev", "{gold}"]
        + ["--groups", "# group 1\n# group 2\nform(m)"],
        None,
        ["<template text>:1: a group with no template"],
        [],
    ),
    (
        ["train", "--train", "{gold}", "--out", "{tmp}/m", "--dynfs", "--dev", "{gold}"]
        + ["--groups", "# group 1\nupos(h)\n# group 2\nupos(h)"],
        None,
        ["<template text>:4: the template of line 2 again"],
        [],
    ),
    # select wrapper's --pool and --base: a path is not template text (it was: "template
    # \"nofile.txt\" (line 1): atom ..."), a bad template is named with its option.
    (
        ["select", "wrapper", "--pool", "{tmp}/nofile.txt", "--train", "{gold}", "--dev"]
        + ["{gold}", "--out", "{tmp}/o.txt"],
        None,
        ["--pool ", "nofile.txt: no such template file"],
        [],
    ),
    (
        ["select", "wrapper", "--pool", "{dir}", "--train", "{gold}", "--dev", "{gold}"]
        + ["--out", "{tmp}/o.txt"],
        None,
        ["--pool ", "adir: a folder, not a template file"],
        [],
    ),
    (
        ["select", "wrapper", "--pool", "{pool}", "--base", "a/b.txt", "--train", "{gold}"]
        + ["--dev", "{gold}", "--out", "{tmp}/o.txt"],
        None,
        ["--base a/b.txt: no such template file"],
        [],
    ),
    (
        ["select", "wrapper", "--parser", "graph", "--pool", "{pool}", "--train", "{gold}"]
        + ["--dev", "{gold}", "--out", "{tmp}/o.txt"],
        None,
        ["--pool ", "pool.txt'", "bad arc address"],
        [],
    ),
    # A preset margin on a model trained without --dynamic: the option and the model
    # named (it said "this model was trained without dynamic=True", an API word).
    (
        ["parse", "{ae}", "{gold}", "--margin", "fast"],
        None,
        ["--margin fast: a preset of dynamic models", "ae.depfs was trained without --dynamic"],
        ["dynamic=True"],
    ),
    (
        ["tag", "{tagger}", "{gold}", "--margin", "accurate"],
        None,
        ["--margin accurate", "t.depfs was trained without --dynamic"],
        ["dynamic=True"],
    ),
    (["train", "--bogus"], None, ["No such option", "--bogus"], ["Usage:"]),
    (["--bogus"], None, ["No such option", "--bogus"], ["Usage:"]),
    (["bogus"], None, ["No such command", "bogus"], ["Usage:"]),
    (["parse", "{ae}", "{gold}", "--batch-size", "0"], None, ["--batch-size", "0"], ["Usage:"]),
    (["eval", "{gold}"], None, ["Missing argument"], ["Usage:"]),
]


@pytest.mark.parametrize(("args", "stdin", "words", "not_words"), UNCLEAR)
def test_messages_name_file_line_and_problem(
    d: dict[str, Path],
    tmp_path: Path,
    args: list[str],
    stdin: bytes | None,
    words: list[str],
    not_words: list[str],
) -> None:
    code, _, err = _cli(_subs(args, d, tmp_path), stdin)
    assert code == 2
    _one_line_error(err, words)
    for w in not_words:
        assert w not in err, (w, err)
    _no_temporaries(tmp_path)


UNCLEAR_API = [
    # (call, exception, words it must hold, words it must not)
    (
        lambda t: depfs.Treebank.from_string("1\tx\udcff\tx\tX\t_\t_\t0\troot\t_\t_\n\n"),
        depfs.errors.FormatError,
        ["<string>:1: invalid UTF-8"],
        ["surrogates"],
    ),
    (
        lambda t: depfs.read_conllu(t / "nope.conllu"),
        depfs.errors.DepfsIOError,
        ["nope.conllu: No such file"],
        ["os error"],
    ),
    (
        lambda t: depfs.load(t / "nope.depfs"),
        depfs.errors.DepfsIOError,
        ["nope.depfs: No such file"],
        ["os error"],
    ),
    (
        lambda t: synthetic(2).write(str(t / "no" / "x.conllu")),
        depfs.errors.DepfsIOError,
        ["x.conllu"],
        ["os error", ".tmp"],
    ),
    (
        lambda t: depfs.Tagger(SMALL, epochs=1).fit(synthetic(5)).save(t / "no" / "t.depfs"),
        depfs.errors.DepfsIOError,
        ["t.depfs: the folder", "does not exist"],
        ["os error", ".tmp"],
    ),
    # A sentence given as a str was read as a path: "The cat sat .: No such file".
    (
        lambda t: depfs.ArcEagerParser(epochs=1).fit(synthetic(5)).parse("The cat sat ."),
        depfs.errors.DepfsIOError,
        ["The cat sat .: No such file", "depfs.text_to_treebank(text)"],
        ["os error"],
    ),
    # (it failed in the set's first template: "dir exists only in arc templates")
    (
        lambda t: depfs.ArcEagerParser(templates="first_order", epochs=1).fit(synthetic(5)),
        ValueError,
        ["template set first_order holds arc templates; this needs config templates"],
        ["dir exists only"],
    ),
]


@pytest.mark.parametrize(("call", "error", "words", "not_words"), UNCLEAR_API)
def test_api_messages_name_the_file_and_not_a_temporary(
    tmp_path: Path, call: Any, error: type, words: list[str], not_words: list[str]
) -> None:
    with pytest.raises(error) as info:
        call(tmp_path)
    message = str(info.value)
    assert all(w in message for w in words) and not any(w in message for w in not_words), message


@pytest.mark.parametrize("command", ["parse", "tag"])
def test_a_dash_input_is_stdin(d: dict[str, Path], command: str) -> None:
    """`depfs parse MODEL -` reads stdin, as `-o -` writes stdout."""
    model = str(d["tagger" if command == "tag" else "ae"])
    want = _process([command, model, str(d["gold"])])
    got = _process([command, model, "-"], input=d["gold"].read_bytes())
    assert want.returncode == got.returncode == 0, got.stderr
    assert got.stdout == want.stdout


@pytest.mark.parametrize("command", ["info", "parse"])
def test_a_model_from_a_pipe_is_refused_in_one_line(d: dict[str, Path], command: str) -> None:
    """A model is read more than once (header, then whole): from a pipe it is refused by
    name, not reported as damaged ("bad magic bytes")."""
    args = [command, "/dev/stdin"] + ([str(d["gold"])] if command == "parse" else [])
    got = _process(args, input=d["ae"].read_bytes())
    assert got.returncode == 2
    _one_line_error(got.stderr.decode(), ["/dev/stdin: a pipe or device, not a model file"])


def test_every_load_refuses_a_fifo_without_waiting_on_it(
    d: dict[str, Path], tmp_path: Path
) -> None:
    """depfs.load refused a FIFO; the classes' own load read one (and waited forever on
    one nobody writes to). A writer offers a model on it here, so a load that reads the
    FIFO gets one and fails the test, where it would hang."""
    import threading

    fifo = tmp_path / "m.fifo"
    os.mkfifo(fifo)

    def offer() -> None:
        with contextlib.suppress(OSError), open(fifo, "wb") as f:  # waits for a reader
            f.write(d["ae"].read_bytes())

    loads = [depfs.load, depfs.ArcEagerParser.load, depfs.GraphParser.load, depfs.Tagger.load]
    for load in (*loads, depfs.arceager.Ensemble.load):
        writer = threading.Thread(target=offer, daemon=True)
        writer.start()
        try:
            with pytest.raises(depfs.errors.ModelError, match="a pipe or device, not a model"):
                load(fifo)
        finally:  # a reader that opens and goes lets the writer's open return (again
            # until it has: the writer may not have reached its open yet)
            deadline = time.monotonic() + GUARD
            while writer.is_alive() and time.monotonic() < deadline:
                os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
                writer.join(timeout=0.05)
            assert not writer.is_alive()


@pytest.mark.parametrize("command", ["parse", "tag"])
def test_a_damaged_model_payload_is_refused_before_anything_is_written(
    d: dict[str, Path], tmp_path: Path, command: str
) -> None:
    """`depfs parse` and `depfs tag` read a model's kind from its header alone before they
    load it beside the input: a payload damaged past the header is still refused, by the
    load, in one line, with no output."""
    model = tmp_path / "damaged.depfs"
    data = bytearray(d["tagger" if command == "tag" else "ae"].read_bytes())
    data[-100] ^= 1
    model.write_bytes(bytes(data))
    out = tmp_path / "out.conllu"
    got = _process([command, str(model), str(d["gold"]), "-o", str(out)])
    assert got.returncode == 2
    _one_line_error(got.stderr.decode(), [f"{model}: corrupted file: checksum mismatch"])
    assert not out.exists()


# ---------------------------------------------------------------- review 2: M1, M5, M6, M9


def _gold(d: dict[str, Path]) -> depfs.Treebank:
    return depfs.read_conllu(d["gold"])


def test_graph_training_skips_sentences_over_the_exact_bound(d: dict[str, Path]) -> None:
    """A sentence over GRAPH_MAX_EXACT_WORDS words is not trained on (its decode is cubic:
    minutes and gigabytes at 5,000 words), with one note naming it; the model records the
    sentences and words used."""
    gold = _gold(d)
    words = depfs._core.GRAPH_MAX_EXACT_WORDS + 1
    train = gold + depfs.Treebank.from_string(_long_sentence(words))
    with pytest.warns(depfs.base.SkippedSentencesWarning) as notes:
        parser = small_graph(epochs=1).fit(train)
    assert len(notes) == 1
    assert str(notes[0].message) == (
        f"1 of {len(train)} training sentences skipped: longer than "
        f"{words - 1} words, first at sentence {len(train)}"
    )
    assert parser.training_info()["train"] == {"sentences": len(gold), "words": gold.n_words}


@pytest.mark.parametrize("kind", ["arc-eager", "graph"])
def test_training_says_which_sentences_it_skips_and_records_the_rest(
    d: dict[str, Path], tmp_path: Path, kind: str
) -> None:
    """Sentences without a complete tree are skipped with one note (how many, the
    first), and `depfs info` counts only the sentences trained on."""
    gold, nohead = _gold(d), depfs.read_conllu(d["nohead"])
    parser = (
        depfs.ArcEagerParser(AE_SET, epochs=1) if kind == "arc-eager" else small_graph(epochs=1)
    )
    with pytest.warns(depfs.base.SkippedSentencesWarning) as notes:
        parser.fit(gold + nohead)
    assert [str(n.message) for n in notes] == [
        f"{len(nohead)} of {len(gold) + len(nohead)} training sentences skipped: no complete "
        f"tree, first at sentence {len(gold) + 1} (sent_id {nohead[0].sent_id})"
    ]
    parser.save(tmp_path / "m.depfs")
    info = depfs.model_info(tmp_path / "m.depfs")["training"]["train"]
    assert info == {"sentences": len(gold), "words": gold.n_words}


def test_a_prepared_training_set_records_its_usable_sentences(d: dict[str, Path]) -> None:
    gold, nohead = _gold(d), depfs.read_conllu(d["nohead"])
    prepared = depfs.arceager.TrainingSet(gold + nohead)
    with pytest.warns(depfs.base.SkippedSentencesWarning, match="first at sentence 41$"):
        parser = depfs.ArcEagerParser(AE_SET, epochs=1).fit(prepared)
    assert parser.train_info_ == {"sentences": len(gold), "words": gold.n_words}


def _untagged_dev(d: dict[str, Path]) -> depfs.Treebank:
    return depfs.read_conllu(d["untagged"])


DEV_REFUSALS = [
    # (model, dev set, exception, words): a dev set that cannot be scored chose the
    # epoch kept (review 2, M6)
    (
        lambda: depfs.ArcEagerParser(AE_SET, epochs=2),
        lambda d: _gold(d)[0:0],
        ValueError,
        "dev: the dev set has no sentences",
    ),
    (lambda: depfs.Tagger(SMALL, epochs=2), lambda d: _gold(d)[0:0], ValueError, "dev: "),
    (lambda: small_graph(epochs=2), lambda d: _gold(d)[0:0], ValueError, "dev: "),
    (
        lambda: depfs.ArcEagerParser(AE_SET, epochs=2),
        _untagged_dev,
        depfs.errors.MissingColumnsError,
        "dev: the dev set leaves UPOS",
    ),
    (
        lambda: small_graph(epochs=2),
        _untagged_dev,
        depfs.errors.MissingColumnsError,
        "dev: the dev set leaves UPOS",
    ),
    (
        lambda: depfs.Tagger(SMALL, epochs=2),
        _untagged_dev,
        ValueError,
        "dev: the dev set leaves UPOS, XPOS",
    ),
    (
        lambda: depfs.ArcEagerParser(AE_SET, epochs=2),
        lambda d: depfs.read_conllu(d["nohead"]),
        ValueError,
        "dev: sentence 1",
    ),
]


@pytest.mark.parametrize(("model", "dev", "error", "words"), DEV_REFUSALS)
def test_a_dev_set_that_cannot_be_scored_is_refused(
    d: dict[str, Path], model: Any, dev: Any, error: type, words: str
) -> None:
    with pytest.raises(error, match=words):
        model().fit(_gold(d), dev(d))


def test_an_untagged_dev_set_is_accepted_when_the_parsers_tagger_tags_it(
    d: dict[str, Path],
) -> None:
    tagger = depfs.load(d["tagger"])
    parser = depfs.ArcEagerParser(AE_SET, epochs=1, tagger=tagger).fit(_gold(d), _untagged_dev(d))
    assert parser.history_[0]["dev_uas"] > 0


_MARGIN = "margin must be a number, 'accurate' or 'fast'"


def _dynfs() -> Any:
    return depfs.load(DATA / "dynfs1_v5.depfs")


WRONG_TYPES = [
    # (call, exception, words): an API entry given the wrong type (review 2, M9)
    (lambda d: depfs.load(d["ae"]).parse(None), TypeError, "treebank must be a depfs.Treebank"),
    (lambda d: depfs.load(d["ae"]).parse([["The", "dog"]]), TypeError, "tokens_to_treebank"),
    (lambda d: depfs.load(d["graph"]).parse(3), TypeError, "treebank must be"),
    (lambda d: depfs.load(d["tagger"]).tag(b"x"), TypeError, "treebank must be"),
    (lambda d: depfs.ArcEagerParser(AE_SET).fit(None), TypeError, "train must be"),
    (lambda d: small_graph().fit(_gold(d), dev=["x"]), TypeError, "dev must be"),
    (lambda d: depfs.Tagger(SMALL).fit(42), TypeError, "train must be"),
    (lambda d: depfs.load(d["ae"]).parse(_gold(d), scores="yes"), TypeError, "scores"),
    (
        lambda d: depfs.load(DATA / "dynfs1_v5.depfs").parse(_gold(d), allow_missing_tags="no"),
        TypeError,
        "allow_missing_tags",
    ),
    (
        lambda d: depfs.load(d["ae"]).parse(_gold(d), allow_missing_tags="no"),
        TypeError,
        "allow_missing_tags",
    ),
    (lambda d: depfs.tokens_to_treebank("abc"), TypeError, "got a str"),
    (lambda d: depfs.tokens_to_treebank([[1, 2]]), TypeError, "sentence 1: token 1"),
    (lambda d: depfs.tokens_to_treebank(["ab", "c"]), TypeError, "sentence 1 must be a list"),
    (
        lambda d: depfs.ArcEagerParser(cascade_bits=-1, cascade=[5], dynamic=True).fit(_gold(d)),
        ValueError,
        "cascade_bits",
    ),
    (
        lambda d: depfs.ArcEagerParser(AE_SET, explore_from=-1).fit(_gold(d)),
        ValueError,
        "explore_from must be an integer >= 0",
    ),
    (
        lambda d: depfs.ArcEagerParser(AE_SET, min_lifted_label_count=-1).fit(_gold(d)),
        ValueError,
        "min_lifted_label_count",
    ),
    (
        lambda d: depfs.ArcEagerParser(AE_SET, explore_p=float("nan")).fit(_gold(d)),
        ValueError,
        "explore_p",
    ),
    (
        lambda d: small_graph(dynfs=True, dynfs_tolerance=float("nan")).fit(_gold(d), _gold(d)),
        ValueError,
        "dynfs_tolerance",
    ),
    (
        lambda d: small_graph(dynfs=True, dynfs_tolerance=-1).fit(_gold(d), _gold(d)),
        ValueError,
        "dynfs_tolerance",
    ),
    (lambda d: small_graph(dynfs=True, folds=-1).fit(_gold(d), _gold(d)), ValueError, "folds"),
    (lambda d: small_graph(max_bits=-1).fit(_gold(d)), ValueError, "max_bits"),
    (lambda d: depfs.Tagger(SMALL, min_known=-1).fit(_gold(d)), ValueError, "min_known"),
    # Constructor arguments fit read as truthy, as template text, or in a combination
    # that trains a wrong model (probe 3).
    (lambda d: small_graph(dynfs="no").fit(_gold(d), _gold(d)), TypeError, "dynfs must be True"),
    (
        lambda d: depfs.ArcEagerParser(AE_SET, dynamic="no").fit(_gold(d)),
        TypeError,
        "dynamic must be True or False",
    ),
    (
        lambda d: depfs.Tagger(SMALL, dynamic="no").fit(_gold(d)),
        TypeError,
        "dynamic must be True or False",
    ),
    (
        lambda d: small_graph(dynfs=True, groups=123).fit(_gold(d), _gold(d)),
        TypeError,
        "groups must be a groups file or set name",
    ),
    (
        lambda d: small_graph(dynfs=True, groups="nosuch.txt").fit(_gold(d), _gold(d)),
        FileNotFoundError,
        "nosuch.txt: no such groups file or shipped set",
    ),
    (
        lambda d: small_graph(dynfs=True, decoder="cle").fit(_gold(d), _gold(d)),
        ValueError,
        "DynFS ends with a projective Eisner round",
    ),
    # The parse-time knobs of issues 15 and 16: True is not the number 1, "no" is not False
    # (all were taken, as 1.0 or as true; a list or str met float() or >= inside).
    (lambda d: depfs.load(d["ae"]).parse(_gold(d), margin=True), ValueError, _MARGIN),
    (lambda d: depfs.load(d["ae"]).parse(_gold(d), margin=[1]), ValueError, _MARGIN),
    (lambda d: depfs.load(d["tagger"]).tag(_gold(d), margin=np.True_), ValueError, _MARGIN),
    (lambda d: _dynfs().parse(_gold(d), threshold=True), ValueError, "threshold must be a"),
    (lambda d: _dynfs().parse(_gold(d), threshold="1"), ValueError, "threshold must be a"),
    # An integer beyond a float's range met float() inside: OverflowError, no name.
    (
        lambda d: _dynfs().parse(_gold(d), threshold=10**400),
        ValueError,
        "threshold must be a finite number",
    ),
    (
        lambda d: small_graph(dynfs=True, dynfs_tolerance=-(10**400)).fit(_gold(d), _gold(d)),
        ValueError,
        "dynfs_tolerance",
    ),
    (lambda d: _dynfs().parse(_gold(d), prune_margin=True), ValueError, "prune_margin must"),
    (lambda d: _dynfs().parse(_gold(d), tree_margin=True), ValueError, "tree_margin must"),
    (lambda d: _dynfs().parse(_gold(d), label_margin="x"), ValueError, "label_margin must"),
    (lambda d: _dynfs().parse(_gold(d), dynfs="no"), TypeError, "dynfs must be True or False"),
    (lambda d: _dynfs().parse(_gold(d), label_dict="no"), TypeError, "label_dict must be True"),
    # Probe 8: arguments unchecked (an unnamed OverflowError or TypeError of the core,
    # "no" taken as true, '3' read as 3.0) or checked after hours of training.
    (lambda d: small_graph(order=-1).fit(_gold(d)), ValueError, "order must be 1 or 2, got -1"),
    (lambda d: small_graph(order=None).fit(_gold(d)), ValueError, "order must be 1 or 2"),
    (lambda d: small_graph(order=True).fit(_gold(d)), ValueError, "order must be 1 or 2"),
    (lambda d: small_graph(decoder=None).fit(_gold(d)), ValueError, "decoder must be 'eisner'"),
    (lambda d: small_graph(prune=0).fit(_gold(d)), TypeError, "prune must be True or False"),
    (lambda d: small_graph(max_bits=10**30).fit(_gold(d)), ValueError, "max_bits must be an"),
    (lambda d: small_graph(max_atoms=10**30).fit(_gold(d)), ValueError, "max_atoms must be an"),
    (lambda d: small_graph().fit(_gold(d), threads="x"), TypeError, "threads must be"),
    (
        lambda d: small_graph(dynfs=True).fit(_gold(d), _gold(d), threads=-1),
        ValueError,
        "threads must be >= 0",
    ),
    (
        lambda d: depfs.ArcEagerParser(AE_SET, explore_from=10**30).fit(_gold(d)),
        ValueError,
        "explore_from must be an integer <=",
    ),
    (
        lambda d: depfs.ArcEagerParser(AE_SET, explore_p=None).fit(_gold(d)),
        ValueError,
        "explore_p must be a number",
    ),
    (
        lambda d: depfs.ArcEagerParser(AE_SET, pseudo_projective=0).fit(_gold(d)),
        TypeError,
        "pseudo_projective must be True or False",
    ),
    (
        lambda d: depfs.ArcEagerParser(AE_SET, full_sum="3").fit(_gold(d)),
        ValueError,
        "full_sum must be a number",
    ),
    (
        lambda d: depfs.ArcEagerParser(AE_SET, train_margin="3").fit(_gold(d)),
        ValueError,
        "train_margin must be a number",
    ),
    (
        lambda d: depfs.ArcEagerParser(AE_SET, dynamic=True, stagewise="no").fit(_gold(d)),
        TypeError,
        "stagewise must be True or False",
    ),
    (
        lambda d: depfs.Tagger(SMALL, dynamic=True, stagewise="no").fit(_gold(d)),
        TypeError,
        "stagewise must be True or False",
    ),
    (lambda d: depfs.Tagger(SMALL, min_known=None).fit(_gold(d)), ValueError, "min_known must"),
    (lambda d: small_graph(prefix_groups="01").fit(_gold(d)), ValueError, "prefix_groups must"),
    (lambda d: small_graph(prefix_groups=[[1.5]]).fit(_gold(d)), ValueError, "prefix_groups"),
    (lambda d: small_graph(prefix_groups=[[-1, 0]]).fit(_gold(d)), ValueError, "prefix_groups"),
    # A probe of the API (twenty-ninth session): raw conversion errors naming nothing
    # ("'str' object is not an instance of 'bool'", "can't convert negative int to
    # unsigned", "'NoneType' object has no attribute 'strip'"), or epochs=0 accepted.
    *(
        (lambda d, k=k: depfs.Tagger(SMALL, epochs=1, **{k: "no"}).fit(_gold(d)), TypeError, k)
        for k in ("cased", "rules", "line_hashing", "backward_xpos")
    ),
    (lambda d: depfs.evaluate(_gold(d), _gold(d), full_labels="yes"), TypeError, "full_labels"),
    (lambda d: depfs.evaluate(_gold(d), _gold(d), tags_only=1), TypeError, "tags_only"),
    (lambda d: depfs.text_to_treebank(None), TypeError, "text must be a str or bytes"),
    (
        lambda d: depfs.load(d["ae"]).trajectories(_gold(d), random_state=-1),
        ValueError,
        "random_state",
    ),
    (
        lambda d: depfs.arceager.oracle_trajectories(_gold(d), random_state=-1),
        ValueError,
        "random_state",
    ),
    *(
        (
            lambda d, kw=kw: depfs.arceager.train_local(
                depfs.load(d["ae"]).trajectories(_gold(d)), "upos(STACK_0)", np.ones(1), **kw
            ),
            ValueError,
            next(iter(kw)),
        )
        for kw in ({"epochs": 0}, {"epochs": -1}, {"threads": -1}, {"random_state": -1})
    ),
    (
        lambda d: depfs.arceager.trajectory_features(
            depfs.load(d["ae"]).trajectories(_gold(d)), "upos(STACK_0)", threads=-1
        ),
        ValueError,
        "threads",
    ),
    (lambda d: depfs.load(d["graph"]).arc_scores(_gold(d), [-1]), ValueError, r"sentences\[0\]"),
    (
        lambda d: depfs.load(d["graph"]).arc_scores(_gold(d), [0], templates=[0, -1]),
        ValueError,
        r"templates\[1\]",
    ),
    (lambda d: depfs.load(d["graph"]).group_scores(_gold(d), [0], [[-1]]), ValueError, "groups"),
    (lambda d: depfs.load(d["graph"]).arc_scores(_gold(d), [0], prune="x"), TypeError, "prune"),
    (lambda d: small_graph(mira_c="1").fit(_gold(d)), ValueError, "mira_c must be a number"),
    (lambda d: depfs.ArcEagerParser(5).fit(_gold(d)), TypeError, "templates must be a set name"),
    (
        lambda d: depfs.load(d["ae"]).template_scores(np.zeros(3, np.uint64)),
        ValueError,
        "features must be 2-D",
    ),
    (lambda d: depfs.decode.tree_score(np.zeros((3, 3)), [-1, 0, 2**63]), ValueError, "heads"),
    (lambda d: depfs.ArcEagerParser(AE_SET).fit(_gold(d), progress="x"), TypeError, "progress"),
    (lambda d: depfs.load(""), ValueError, "the model path is empty"),
    (lambda d: depfs.load(d["ae"]).save(""), ValueError, "the model path is empty"),
    (
        lambda d: depfs.select.forward_wrapper(AE_SET, _gold(d), str(d["gold"])),
        TypeError,
        "train must be the path of a CoNLL-U file",
    ),
]


@pytest.mark.parametrize(("call", "error", "words"), API_TRACEBACKS + WRONG_TYPES)
def test_bad_api_arguments_raise_naming_the_problem(
    d: dict[str, Path], call: Any, error: type, words: str
) -> None:
    """No OverflowError or AttributeError from deep inside: a ValueError or TypeError that
    names the argument."""
    with pytest.raises(error, match=words):
        call(d)


def test_every_fit_parse_and_tag_takes_a_path(d: dict[str, Path]) -> None:
    gold = _gold(d)
    assert depfs.load(d["ae"]).parse(d["gold"]).to_string().encode() == _parsed(d)
    assert depfs.load(d["graph"]).parse(str(d["gold"])).to_string().encode() == _parsed(d, "graph")
    tagger = depfs.load(d["tagger"])
    assert tagger.tag(d["gold"]).to_string() == tagger.tag(gold).to_string()
    fitted = depfs.ArcEagerParser(AE_SET, epochs=1).fit(str(d["gold"]), dev=d["gold"])
    assert fitted.train_info_ == {"sentences": len(gold), "words": gold.n_words}


def test_the_long_sentence_note_comes_before_the_parse(d: dict[str, Path]) -> None:
    """`depfs parse` says a long sentence is parsed in chunks as soon as the parse meets
    it (on_note), not after the minutes it may take."""
    from depfs.pipeline import parse_stream

    model = depfs.load(d["graph"])
    events: list[str] = []
    real = model.parse

    def parse(*args: Any, **kw: Any) -> Any:
        out = real(*args, **kw)
        events.append("parsed")
        return out

    model.parse = parse  # type: ignore[method-assign]
    tb = depfs.Treebank.from_string(_long_sentence(500))
    done = parse_stream(model, iter([tb]), io.BytesIO(), on_note=lambda n: events.append(n))
    assert len(events) == 2 and "parsed in chunks" in events[0] and events[1] == "parsed"
    assert done.notes == []


def test_train_says_skipped_sentences_in_one_note_and_names_a_bad_dev_file(
    d: dict[str, Path], tmp_path: Path
) -> None:
    mixed = tmp_path / "mixed.conllu"
    mixed.write_text(d["gold"].read_text() + d["nohead"].read_text())
    out = tmp_path / "m.depfs"
    code, _, err = _cli(
        ["train", "--parser", "arc-eager", "--train", str(mixed), "--out", str(out)]
    )
    assert code == 0, err
    notes = [line for line in err.splitlines() if "sentences skipped" in line]
    assert notes == [
        f"depfs: note: {mixed}: 40 of 80 training sentences skipped: no complete tree, first "
        "at sentence 41 (sent_id synthetic-0-1)"
    ]
    args = ["train", "--parser", "arc-eager", "--train", str(d["gold"]), "--out", str(out)]
    code, _, err = _cli([*args, "--dev", str(d["untagged"])])
    assert code == 2
    _one_line_error(err, [f"--dev {d['untagged']}: the dev set leaves"])


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", ["parse", "info"])
def test_a_full_disk_on_stdout_is_named(d: dict[str, Path], command: str) -> None:
    args = [command, str(d["ae"])] + ([str(d["gold"])] if command == "parse" else [])
    with open("/dev/full", "wb") as full:
        got = subprocess.run(
            [sys.executable, "-m", "depfs", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=GUARD,
        )
    assert got.returncode == 2
    _one_line_error(got.stderr.decode(), ["stdout: No space left on device"])


# ---------------------------------------------------------------- probe 3: selection logs

_WRAPPER = ["select", "wrapper", "--pool", "{pool}", "--train", "{gold}", "--dev", "{gold}"]
_WRAPPER += ["--workers", "1", "--out", "{tmp}/o.txt", "--log"]

#: A line of a real log (its numbers do not matter: the rows below are refused before
#: any training).
_LOG_LINE = (
    '{"base": [], "cpu_seconds": 0.1, "dev_accuracy": null, "dev_las": 8.5, "dev_uas": 15.0, '
    '"dev_upos": null, "end": 2.0, "evaluations_per_word": 1.6, "key": "k", "seed": 1, '
    '"start": 1.0, "templates": [1]}\n'
)

DAMAGED_LOGS = [
    # (the --log file's bytes, words of the refusal): each is refused before anything is
    # trained, and the file is left byte for byte (a file that is not a log used to be
    # cut back to its last newline first: notes lost their last line, a model its tail).
    (b"my notes\nthe last line, without a newline", ["log:1: not a selection log line"]),
    ((DATA / "graph2.depfs").read_bytes(), ["log:1: not a selection log line (invalid UTF-8)"]),
    (_LOG_LINE.encode() + b"\xff\xfe junk", ["log:2: not a selection log line (invalid UTF-8)"]),
    (_LOG_LINE.replace("8.5", "NaN").encode(), ["log:1:", "dev_las nan is not a finite"]),
    (_LOG_LINE.replace("8.5", '"x"').encode(), ["log:1:", "dev_las 'x' is not a finite"]),
    (_LOG_LINE.replace('"k"', "5").encode(), ["log:1:", "key is not a string"]),
    (b"[1, 2]\n", ["log:1:", "a JSON list, not an object"]),
    (b"{}\n", ["log:1:", "no key, dev_uas"]),
]


@pytest.mark.parametrize(("data", "words"), DAMAGED_LOGS)
def test_a_damaged_or_foreign_log_is_refused_and_left_as_it_is(
    d: dict[str, Path], tmp_path: Path, data: bytes, words: list[str]
) -> None:
    log = tmp_path / "log"
    log.write_bytes(data)
    code, _, err = _cli(_subs(_WRAPPER, d, tmp_path) + [str(log)])
    assert code == 2
    _one_line_error(err, words)
    assert log.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log"]


def test_a_torn_last_log_line_is_dropped_and_a_whole_one_kept(tmp_path: Path) -> None:
    """A kill mid-write leaves a torn last line: cut off, the run resumes; a whole line
    that lost only its newline is kept (and gets it)."""
    from depfs.select.engine import Log

    torn = tmp_path / "torn.jsonl"
    torn.write_text(_LOG_LINE + _LOG_LINE[:40])
    assert list(Log(torn).results) == ["k"] and torn.read_text() == _LOG_LINE
    whole = tmp_path / "whole.jsonl"
    whole.write_text(_LOG_LINE + _LOG_LINE.replace('"k"', '"k2"').rstrip("\n"))
    assert list(Log(whole).results) == ["k", "k2"]
    assert whole.read_text() == _LOG_LINE + _LOG_LINE.replace('"k"', '"k2"')


@pytest.mark.parametrize("node", ["fifo", "device"])
def test_a_log_that_is_a_pipe_or_device_is_refused_not_read_forever(
    d: dict[str, Path], tmp_path: Path, node: str
) -> None:
    """`--log FIFO` read the FIFO until a writer came (forever); `--log /dev/null` ended
    in `[Errno 22] Invalid argument`."""
    log = tmp_path / "log"
    if node == "fifo":
        os.mkfifo(log)
    else:
        log = Path("/dev/null")
    res = _process(_subs(_WRAPPER, d, tmp_path) + [str(log)], timeout=GUARD)
    assert res.returncode == 2
    _one_line_error(res.stderr.decode(), [f"--log {log}: a pipe or device, not a log file"])
    assert not (tmp_path / "o.txt").exists()


def test_a_refused_wrapper_run_leaves_no_empty_log(d: dict[str, Path], tmp_path: Path) -> None:
    """--max-length that leaves no training sentence is found by the first candidate's
    training: the log that run made (and left empty) is removed."""
    args = _subs(_WRAPPER, d, tmp_path) + [str(tmp_path / "o.jsonl"), "--max-length", "2"]
    code, _, err = _cli(args)
    assert code == 2
    _one_line_error(err, ["max length 2 leaves no sentence"])
    assert list(tmp_path.iterdir()) == []


def test_a_groups_file_names_itself_and_the_line_of_a_bad_template(tmp_path: Path) -> None:
    """A bad template in a later group was named by its line within the group ("line
    2"), without the file."""
    from depfs.select.groups import read_groups

    groups = tmp_path / "g.txt"
    groups.write_text("# group 1\nupos(h)\nform(h)\n# group 2\nupos(STACK_0)\n")
    with pytest.raises(ValueError) as err:
        read_groups(groups)
    assert str(err.value).startswith(f'{groups}:5: template "upos(STACK_0)": bad arc address')
    assert "(line" not in str(err.value)


@pytest.mark.parametrize(
    "text, message",
    [
        # Each directive is checked: an unknown one before a good one was dropped unread.
        ("#! foo = 1\n#! max_atoms = 4\n# group 1\nupos(h)\n", ':1: directive "#! foo = 1"'),
        # Named at its own line, as a directive (it was the first template's line, line 5).
        (
            "# group 1\nupos(h)\n#! max_atoms = 99\n# group 2\nform(h)\n",
            ':3: directive "#! max_atoms = 99": max_atoms must be 1..8',
        ),
    ],
)
def test_a_groups_files_directives_are_checked_at_their_lines(
    tmp_path: Path, text: str, message: str
) -> None:
    from depfs.select.groups import read_groups

    groups = tmp_path / "g.txt"
    groups.write_text(text)
    with pytest.raises(ValueError) as err:
        read_groups(groups)
    assert str(err.value).startswith(f"{groups}{message}"), err.value


def test_a_groups_files_directive_applies_to_the_templates_after_it(tmp_path: Path) -> None:
    """As in a template file: the last directive of the file was applied to every group."""
    from depfs.select.groups import read_groups
    from depfs.templates import TemplateSet

    wide = "upos(h) & upos(m) & form(m)"  # three atoms: over a limit of 2
    groups = tmp_path / "g.txt"
    groups.write_text(
        f"#! max_atoms = 3\n# group 1\n{wide}\n#! max_atoms = 2\n# group 2\nupos(h)\n"
    )
    assert [[t.text for t in g] for g in read_groups(groups)[1]] == [
        [t.text for t in TemplateSet.parse(wide, "arc")],
        ["upos(h)"],
    ]
    groups.write_text(f"#! max_atoms = 2\n# group 1\nupos(h)\n{wide}\n#! max_atoms = 3\n")
    with pytest.raises(ValueError) as err:
        read_groups(groups)
    assert str(err.value).startswith(f"{groups}:4: template"), err.value


def test_dynfs_groups_are_read_before_training_and_named(
    d: dict[str, Path], tmp_path: Path
) -> None:
    """`--order 2` with groups that have no sibling section said "no '# group k' lines after
    '# order 2'" of a file with no such line, and without --groups; a bad groups file was
    found only once training had begun."""
    out = tmp_path / "m"
    args = ["train", "--parser", "graph", "--dynfs", "--train", str(d["gold"]), "--out", str(out)]
    args += ["--dev", str(d["gold"])]
    code, _, err = _cli([*args, "--order", "2", "--groups", "dynfs_en_ewt"])
    assert code == 2
    _one_line_error(err, ["--groups dynfs_en_ewt: no sibling groups", "--order 2 needs them"])
    bad = tmp_path / "g.txt"
    bad.write_text("# group 1\nupos(h)\n# group 2\n")
    code, _, err = _cli([*args, "--groups", str(bad)])
    assert code == 2
    _one_line_error(err, [f"--groups: {bad}:3: a group with no template"])
    # One group leaves the policy nothing to decide: twenty minutes of DAgger for a full parse.
    one = tmp_path / "one.txt"
    one.write_text("# group 1\nupos(h) & upos(m)\nform(m)\n")
    code, _, err = _cli([*args, "--groups", str(one)])
    assert code == 2
    _one_line_error(err, [f"--groups {one}: one group: first-order DynFS needs at least two"])
    with pytest.raises(ValueError, match="one group: first-order DynFS needs at least two"):
        depfs.GraphParser(dynfs=True, groups=str(one)).fit(_gold(d), _gold(d))
    assert not out.exists()


def test_a_folder_named_without_a_slash_is_not_template_text(
    d: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--templates adir` (a folder in the working directory) was parsed as the template
    text "adir"."""
    monkeypatch.chdir(d["dir"].parent)
    args = ["train", "--train", str(d["gold"]), "--out", str(tmp_path / "m")]
    code, _, err = _cli([*args, "--templates", "adir"])
    assert code == 2
    _one_line_error(err, ["--templates adir: a folder, not a template file"])


def test_a_margin_beyond_a_float_is_infinite(d: dict[str, Path]) -> None:
    """margin=10**400 (an int no float holds) is margin=inf, as `--margin 1e400` is on
    the command line, not an OverflowError."""
    gold = _gold(d)
    model, tagger = depfs.load(d["ae"]), depfs.load(d["tagger"])
    assert model.parse(gold, margin=10**400).to_string() == model.parse(gold).to_string()
    assert tagger.tag(gold, margin=10**400).to_string() == tagger.tag(gold).to_string()


def test_templates_show_names_the_bad_line_and_a_folder(d: dict[str, Path], tmp_path: Path) -> None:
    """A template file with one bad line was reported by the last family tried (token),
    whose error is at line 1 (`form(h)`, a good arc template); a folder was "no such
    template set or file"."""
    bad = tmp_path / "bad.txt"
    bad.write_text("form(h)\nupos(m)\nbogus\n")
    code, _, err = _cli(["templates", "show", str(bad)])
    assert code == 2
    _one_line_error(err, [f"{bad}: not a template file", '"bogus" (line 3)'])
    code, _, err = _cli(["templates", "show", str(d["dir"])])
    assert code == 2
    _one_line_error(err, [f"{d['dir']}: a folder, not a template file"])


def test_select_wrapper_refuses_a_pipe_as_train_and_select_groups_reads_one(
    d: dict[str, Path], tmp_path: Path
) -> None:
    """Each wrapper candidate's worker reads --train and --dev again: a pipe (`<(zcat
    x.gz)`) was refused as "/proc/PID/fd/pipe:[INODE]: no such file". An order file is
    read once: `select groups <(...)` said "no order file or shipped set"."""
    fifo = tmp_path / "train.fifo"
    os.mkfifo(fifo)
    args = ["select", "wrapper", "--pool", str(d["pool"]), "--train", str(fifo)]
    res = _process([*args, "--dev", str(d["gold"]), "--out", str(tmp_path / "o.txt")])
    assert res.returncode == 2
    _one_line_error(res.stderr.decode(), [f"--train {fifo}: a pipe or device, not a file"])
    order = _through_fifo(tmp_path, d["order"].read_bytes())
    out = tmp_path / "g.txt"
    code, _, err = _cli(["select", "groups", str(order), "--k", "2", "--out", str(out)])
    assert code == 0, err
    made = f"# depfs select groups {shlex.quote(str(order))} --k 2\n"
    assert out.read_text() == made + "# group 1\nupos(h) & upos(m)\n# group 2\nform(m)\n"


def test_select_out_dash_is_stdout_not_a_file_named_dash(
    d: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-o -` is stdout everywhere in depfs; `select groups --out -` wrote a file named
    `-`, and `select wrapper --out -` a file `-` and a log `-.jsonl`."""
    monkeypatch.chdir(tmp_path)
    code, out, err = _cli(["select", "groups", str(d["order"]), "--k", "2", "--out", "-"])
    assert code == 0, err
    made = f"# depfs select groups {shlex.quote(str(d['order']))} --k 2\n"
    assert out == made + "# group 1\nupos(h) & upos(m)\n# group 2\nform(m)\n"
    args = ["select", "wrapper", "--pool", str(d["pool"]), "--train", str(d["gold"])]
    code, _, err = _cli([*args, "--dev", str(d["gold"]), "--out", "-"])
    assert code == 2
    _one_line_error(err, ["--out - (stdout): give --log"])
    assert list(tmp_path.iterdir()) == []


def test_select_wrapper_out_that_is_no_regular_file_needs_a_log(
    d: dict[str, Path], tmp_path: Path
) -> None:
    """`--out /dev/null` without `--log` made its default log /dev/null.jsonl (run as root,
    a file in /dev); a FIFO's default log landed beside it."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    args = ["select", "wrapper", "--pool", str(d["pool"]), "--train", str(d["gold"])]
    # A process with a time bound: without the check it went on to train (and then to
    # write into the FIFO, which nobody reads).
    res = _process([*args, "--dev", str(d["gold"]), "--out", str(fifo)])
    assert res.returncode == 2
    _one_line_error(res.stderr.decode(), [f"--out {fifo} (not a regular file): give --log"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.fifo"]


def test_untagged_training_sentences_beside_tagged_ones_are_skipped_with_a_note() -> None:
    """A tagged treebank and its untagged copy joined (raw text added by mistake): the
    sentences with no UPOS on any word are skipped with one note. Learning from both,
    a parser read the tags yet recorded that it needed none (so untagged input was
    parsed silently badly), and a tagger learned `_` as a tag and predicted it. A
    treebank untagged throughout is not touched (a parser of words alone); jackknife
    names the fold whose tagger had no tags to learn from."""
    from test_tagger import blank

    gold = synthetic_conllu(60, seed=21)
    tagged = depfs.Treebank.from_string(gold)
    mixed = depfs.Treebank.from_string(gold + blank(gold))
    for model in (
        depfs.ArcEagerParser(AE_SET, epochs=1),
        small_graph(epochs=1),
        depfs.Tagger(SMALL, epochs=1),
    ):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            model.fit(mixed)
        notes = [str(w.message) for w in seen if w.category is depfs.base.SkippedSentencesWarning]
        assert len(notes) == 1 and "60 of 120" in notes[0] and "no UPOS" in notes[0], notes
        assert model.train_info_["sentences"] == 60
        if isinstance(model, depfs.Tagger):
            out = model.tag(depfs.Treebank.from_string(blank(gold)))
            assert "_" not in {u for s in out for u in s.upos}
        else:
            assert "UPOS" in model.model_.input_columns
    # The same treebank prepared as a TrainingSet (arc-eager) trained on all 120, with no
    # note, and parsed otherwise: now the same sentences, note and parses.
    from depfs.arceager import TrainingSet

    prepared = TrainingSet(mixed)
    assert prepared.untagged == list(range(60, 120)) and prepared.usable == list(range(60))
    parses = []
    for data in (mixed, prepared):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            model = depfs.ArcEagerParser(AE_SET, epochs=2).fit(data)
        notes = [str(w.message) for w in seen if w.category is depfs.base.SkippedSentencesWarning]
        assert len(notes) == 1 and "60 of 120" in notes[0] and "no UPOS" in notes[0], notes
        assert model.train_info_["sentences"] == 60
        parses.append(model.parse(tagged).to_string())
    assert parses[0] == parses[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no note: nothing to skip
        parser = depfs.ArcEagerParser(AE_SET, epochs=1).fit(depfs.Treebank.from_string(blank(gold)))
    assert parser.model_.input_columns == ["FORM"]
    # Tagged long sentences, then short ones untagged: the treebank has UPOS on most
    # words, but the tagger of fold 1 would learn from the untagged fold 2 alone.
    by_length = sorted(range(len(tagged)), key=lambda i: -len(tagged[i]))
    long, short = tagged.select(by_length[:30]), tagged.select(by_length[30:])
    halves = depfs.Treebank.from_string(long.to_string() + blank(short.to_string()))
    assert "UPOS" in halves.filled_columns()
    with pytest.raises(ValueError, match=r"without fold 1 \(sentences 1-30\) leaves UPOS empty"):
        depfs.jackknife(halves, folds=2, epochs=1)


def test_tagger_training_and_jackknife_take_several_roots(
    d: dict[str, Path], tmp_path: Path
) -> None:
    """A tagger never reads HEAD: its training file, its --dev and jackknife's input may
    have several roots (`depfs tag` takes them); they were refused. Jackknife keeps HEAD
    and DEPREL as they were. A parser's training skips such a sentence."""
    roots = tmp_path / "roots.conllu"
    lines = d["gold"].read_text().splitlines()  # one more word of a sentence on ROOT:
    k = next(i for i, line in enumerate(lines) if line[:1].isdigit() and "\t0\t" not in line)
    cols = lines[k].split("\t")
    cols[6], cols[7] = "0", "root"
    lines[k] = "\t".join(cols)
    roots.write_text("\n".join(lines) + "\n")
    out = tmp_path / "t.depfs"
    args = ["train", "--parser", "tagger", "--train", str(roots), "--epochs", "1", "-o", str(out)]
    assert _cli([*args, "--dev", str(roots)])[0] == 0 and out.exists()
    jk = tmp_path / "jk.conllu"
    code, _, err = _cli(["jackknife", "--train", str(roots), "--folds", "2", "-o", str(jk)])
    assert code == 0, err
    heads = [line.split("\t")[6:8] for line in jk.read_text().splitlines() if line[:1].isdigit()]
    assert heads == [line.split("\t")[6:8] for line in lines if line[:1].isdigit()]
    # A parser's training skips that sentence with a note, as `fit` does and usage.md says
    # (the CLI refused the whole file for it).
    for parser in ("arc-eager", "graph"):
        code, _, err = _cli(["train", "--parser", parser, "--train", str(roots), "-o", str(out)])
        assert code == 0 and "note:" in err and "training sentences skipped" in err, err


def test_a_parsers_tagger_must_predict_what_the_parser_reads(d: dict[str, Path]) -> None:
    """`ArcEagerParser(tagger=T).fit(train)` where the parser reads XPOS and T does not
    predict it: refused before training (the model was written, and every parse of
    untagged input refused)."""
    from test_tagger import blank

    gold = d["gold"].read_text()
    no_xpos = depfs.Tagger(SMALL, epochs=1).fit(depfs.Treebank.from_string(blank(gold, (4,))))
    assert "XPOS" not in no_xpos.columns_
    reads_xpos = "xpos(STACK_0)\nupos(QUEUE_0)\nform(QUEUE_0)\n"
    parser = depfs.ArcEagerParser(reads_xpos, epochs=1, tagger=no_xpos)
    with pytest.raises(ValueError, match="tagger predicts only UPOS.*leave XPOS empty"):
        parser.fit(depfs.Treebank.from_string(gold))
    assert not hasattr(parser, "model_")


def test_select_groups_refuses_an_arc_eager_order_as_the_sibling_order(
    d: dict[str, Path], tmp_path: Path
) -> None:
    """SECOND_PATH must be an order of sibling templates: an arc-eager order there wrote
    a groups file that only the training reading it refused."""
    config = tmp_path / "ae_order.txt"
    config.write_text(
        "# depfs select wrapper --parser arc-eager --metric las\n"
        "upos(STACK_0)\n# score 1 las 40\nform(QUEUE_0)\n# score 2 las 45\n"
    )
    out = tmp_path / "g.txt"
    args = ["select", "groups", str(d["order"]), str(config), "--k", "2"]
    code, _, err = _cli([*args, "--out", str(out)])
    assert code == 2
    _one_line_error(err, ["ae_order.txt", "SECOND_PATH", "arc-eager templates"])
    assert not out.exists()


@pytest.mark.parametrize("command", ["parse", "tag"])
def test_stdout_cut_short_under_python_u_is_an_error(
    d: dict[str, Path], tmp_path: Path, command: str
) -> None:
    """Under `python -u` (PYTHONUNBUFFERED) stdout's binary layer is the raw file: at a
    file-size limit (or a full disk) a write took part of its bytes and the rest was
    dropped, exit 0, the output cut mid-line. Now: exit 2, `stdout: File too large`."""
    import resource

    model = d["ae"] if command == "parse" else d["tagger"]
    out = tmp_path / "out.conllu"
    with open(out, "wb") as f:
        res = subprocess.run(
            [sys.executable, "-m", "depfs", command, str(model), str(d["big"])],
            stdout=f,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000)),
            timeout=GUARD,
            check=False,
        )
    assert res.returncode == 2, res.stderr
    _one_line_error(res.stderr.decode(), ["stdout: File too large"])


def test_training_prepares_its_data_where_ctrl_c_is_taken_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A trainer is built (the data prepared: ~15 s for a tagger on twice en_ewt train,
    in one Rust call) in the helper thread the epochs run in: on the main thread, Ctrl-C
    and SIGTERM waited until the call returned."""
    seen: list[bool] = []
    real = depfs.Tagger._trainer

    def watched(self: Any, train: Any) -> Any:
        seen.append(threading.current_thread() is threading.main_thread())
        return real(self, train)

    monkeypatch.setattr(depfs.Tagger, "_trainer", watched)
    depfs.Tagger(SMALL, epochs=1).fit(synthetic(20, seed=3))
    assert seen == [False]


def test_a_protected_output_is_refused_before_the_work(
    d: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `cp` and `>`: an output whose mode forbids writing it is refused up front
    (`--force` replaces it), and so is another user's file in a sticky folder (its
    rename failed with "Operation not permitted" after the whole parse); both were
    replaced, or failed late, before. (Seen as another user: root may write anything,
    so the process's user and its access are what they would be for user 65534.)"""
    out = tmp_path / "r.conllu"
    out.write_text("precious\n")
    out.chmod(0o444)
    real_access = os.access
    monkeypatch.setattr(os, "geteuid", lambda: 65534)
    _not_writable(monkeypatch, out)
    args = ["parse", str(d["ae"]), str(d["gold"]), "-o", str(out)]
    code, _, err = _cli(args)
    assert code == 2 and out.read_text() == "precious\n"
    _one_line_error(err, ["r.conllu: the file is read-only", "--force"])
    code, _, err = _cli([*args, "--force"])
    assert code == 0 and out.read_bytes() == _parsed(d), err
    monkeypatch.setattr(os, "access", real_access)
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    theirs = sticky / "theirs.conllu"
    theirs.write_text("theirs\n")
    args[-1] = str(theirs)
    code, _, err = _cli(args)
    assert code == 2 and theirs.read_text() == "theirs\n"
    _one_line_error(err, ["theirs.conllu: another user's file in a sticky folder"])


def test_a_full_disk_under_the_selection_log_names_the_log(
    d: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write error of `select wrapper`'s log (a full disk, a quota) names the log: it
    said `stdout: No space left on device` (an error naming no file was taken for
    stdout's)."""
    import errno as errno_

    def full(fd: int) -> None:
        raise OSError(errno_.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    log = tmp_path / "w.jsonl"
    args = ["select", "wrapper", "--pool", str(d["pool"]), "--train", str(d["gold"])]
    args += ["--dev", str(d["gold"]), "--out", str(tmp_path / "o.txt"), "--log", str(log)]
    code, _, err = _cli([*args, "--workers", "1", "--epochs", "1"])
    assert code == 2
    _one_line_error(err, [f"{log}: No space left on device"])


@pytest.mark.parametrize("command", ["stats", "parse", "eval"])
def test_an_input_without_line_ends_is_refused_in_bounded_memory(
    d: dict[str, Path], tmp_path: Path, command: str
) -> None:
    """A file of zeros (a sparse file; `/dev/zero`; a gzip of zeros) has no line end:
    each command grew its memory without bound (24 GB in 79 s for `parse /dev/zero`)
    in calls Ctrl-C did not stop. Now one line at the cap, naming the file and line."""
    from depfs.text import MAX_LINE_BYTES

    zeros = tmp_path / "zeros"
    with open(zeros, "wb") as f:
        f.truncate(MAX_LINE_BYTES + (2 << 20))
    args = {
        "stats": ["stats", str(zeros)],
        "parse": ["parse", str(d["ae"]), str(zeros), "-o", str(tmp_path / "o.conllu")],
        "eval": ["eval", str(zeros), str(d["gold"])],
    }[command]
    code, _, err = _cli(args)
    assert code == 2
    _one_line_error(err, [f"{zeros}:1: a line of more than 64 MiB with no line end"])


def test_template_files_may_be_pipes(d: dict[str, Path], tmp_path: Path) -> None:
    """`--templates <(depfs templates show x)` (a pipe, read once) trains as the file
    would, and `templates show PIPE` prints it: both said "no such template file" (and
    a pipe read twice, once to check and once to train, gives nothing the second
    time)."""
    text = "upos(STACK_0)\nform(QUEUE_0)\n"
    code, out, err = _cli(["templates", "show", str(_through_fifo(tmp_path, text.encode()))])
    assert code == 0 and out == text, err
    (tmp_path / "in.fifo").unlink()
    model = tmp_path / "m.depfs"
    args = ["train", "--parser", "arc-eager", "--train", str(d["gold"]), "--epochs", "1"]
    fifo = _through_fifo(tmp_path, text.encode())
    code, _, err = _cli([*args, "--templates", str(fifo), "--out", str(model)])
    assert code == 0, err
    assert depfs.load(model).templates_ == ["upos(STACK_0)", "form(QUEUE_0)"]


# ---------------------------------------------------------------- memory limits
def _limited(
    code: str, extra_mib: int, *, before_import: bool = False
) -> subprocess.CompletedProcess[str]:
    """`code` run in a fresh Python whose address space is limited (`ulimit -v`, as a
    cluster's `h_vmem` sets it) to what it uses plus `extra_mib` MiB: set by `limit()`
    in `code`, or with `before_import`, before `import depfs` as a shell's would be."""
    prelude = (
        "import resource\n"
        "def limit():\n"
        "    status = open('/proc/self/status').read().split('VmSize:')[1]\n"
        f"    soft = (int(status.split()[0]) << 10) + ({extra_mib} << 20)\n"
        "    resource.setrlimit(resource.RLIMIT_AS, (soft, resource.RLIM_INFINITY))\n"
    )
    prelude += "limit()\nimport depfs\n" if before_import else "import depfs\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=60
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and RLIMIT_AS")
def test_k_best_trees_beyond_a_memory_limit_are_an_error_not_an_abort() -> None:
    """The k-best decoder's derivations grow with k: past the memory a limit leaves, the
    process aborted (`memory allocation of N bytes failed`), where the other decoders
    raise a ValueError. Now it raises one too, saying how far it got."""
    code = (
        "import numpy as np\n"
        "scores = np.zeros((301, 301))\n"
        "limit()\n"
        "try:\n"
        "    depfs.decode.eisner_kbest(scores, 100_000)\n"
        "except ValueError as e:\n"
        "    print(e)\n"
    )
    run = _limited(code, 128)
    assert run.returncode == 0, run.stderr[-500:]
    assert re.fullmatch(
        r"eisner_kbest: memory ran out after [0-9]+ of the k trees of a sentence of "
        r"n = 300 words: ask for fewer",
        run.stdout.strip(),
    ), run.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and RLIMIT_AS")
@pytest.mark.parametrize("extra_mib", [32, 96], ids=["read", "mapped"])
def test_a_model_too_large_for_a_memory_limit_is_an_error_not_an_abort(
    tmp_path: Path, extra_mib: int
) -> None:
    """Under an address-space limit too small for a model, loading the en_ewt arc-eager
    model aborted the process (`memory allocation of N bytes failed`, exit 134). Now a
    ModelError naming the file, before any copy. A 64 MiB payload of zeros (without the
    limit, a model of another kind; the build before read it so under the limit too, or
    said `out of memory` only when it could not map it): under +32 MiB the file is not
    even mapped (it is read, and that buffer is refused), under +96 MiB it is mapped and
    the room for its weights is refused."""
    import zlib

    n = 64 << 20
    kind = b"arc-eager"
    crc = 0
    zeros = bytes(1 << 20)
    for _ in range(n >> 20):
        crc = zlib.crc32(zeros, crc)
    model = tmp_path / "big.depfs"
    with open(model, "wb") as f:
        f.write(b"DEPFSMDL" + (5).to_bytes(4, "little") + len(kind).to_bytes(4, "little") + kind)
        f.write(n.to_bytes(8, "little") + crc.to_bytes(4, "little"))
        f.truncate(f.tell() + n)  # sparse: no 64 MiB written
    with pytest.raises(depfs.errors.ModelError, match='payload holds "graph"'):
        depfs.load(model)
    load = f"depfs.load({str(model)!r})"
    code = f"limit()\ntry:\n    {load}\nexcept depfs.errors.ModelError as e:\n    print(e)\n"
    run = _limited(code, extra_mib)
    assert run.returncode == 0, run.stderr[-500:]
    # (the payload, or the whole file when it is read)
    want = re.escape(f"{model}: not enough memory to load it ") + r"\(6[45] MiB\)"
    want += re.escape(": is a memory limit set (ulimit -v)?")
    assert re.fullmatch(want, run.stdout.strip()), run.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and RLIMIT_AS")
def test_threads_under_a_memory_limit_leave_room_for_the_work() -> None:
    """glibc gives each thread that allocates its own arena, 64 MiB of address space
    reserved at once: a streamed parse (loader, reader, writer and parse threads)
    aborted under `ulimit -v` of up to ~700 MiB while using ~200 MiB. Under a limit,
    `import depfs` keeps two arenas (`depfs._limits`): eight threads that allocate
    leave a 150 MiB buffer room under a limit of +300 MiB (without the cap, their
    arenas take the room: MemoryError)."""
    code = (
        "import threading\n"
        "threading.stack_size(1 << 18)\n"
        "go, done = threading.Barrier(9, timeout=20), threading.Barrier(9, timeout=20)\n"
        "def work():\n"
        "    x = bytearray(1 << 16)  # a malloc in this thread: its arena\n"
        "    go.wait(); done.wait()\n"
        "threads = [threading.Thread(target=work) for _ in range(8)]\n"
        "for t in threads: t.start()\n"
        "go.wait()\n"
        "try:\n"
        "    buf = bytearray(150 << 20)\n"
        "finally:\n"
        "    done.wait()\n"
        "print('ok', len(buf) >> 20)\n"
    )
    run = _limited(code, 300, before_import=True)
    assert run.returncode == 0 and run.stdout.strip() == "ok 150", run.stderr[-500:]


@pytest.mark.parametrize("hard", [False, True], ids=["soft", "hard"])
def test_a_local_cluster_under_a_low_open_files_limit(
    d: dict[str, Path], tmp_path: Path, hard: bool
) -> None:
    """`--scheduler local` under `ulimit -n 16` printed `Too many open files` tracebacks
    by the million and never started (32: `internal error: Nanny failed to start`).
    A low soft limit is raised (the cluster starts, the same bytes as a local parse);
    a hard limit below what a cluster needs is one line, at once."""
    pytest.importorskip("distributed")
    import resource

    def low() -> None:
        _, top = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16 if hard else top))

    out = tmp_path / "out"
    out.mkdir()
    args = ["parse", str(d["ae"]), str(d["gold"]), "--out-dir", str(out), "--scheduler", "local"]
    res = _process([*args, "--workers", "1"], timeout=60, preexec_fn=low)
    if hard:
        assert res.returncode == 2
        _one_line_error(res.stderr.decode(), ["--scheduler local", "256 open files", "16"])
        assert list(out.iterdir()) == []
    else:
        assert res.returncode == 0 and res.stderr == b""
        assert (out / "gold.conllu").read_bytes() == _parsed(d)


# ---------------------------------------------------------------- probe 8: the API's objects
def test_a_loaded_model_keeps_its_settings_and_refits_with_them(tmp_path: Path) -> None:
    """A loaded model said the constructor's defaults for everything its weights do not
    decide (and a graph model for its templates too), so `fit` on it trained another
    model: other templates, epochs, seed and table size. Now its settings are those it
    was trained with, and a refit on the same data parses as the original does."""
    train = synthetic(60, seed=3)
    test = synthetic(20, seed=4)
    wide = "#! max_atoms = 4\nupos(h) & upos(m) & form(m) & form(h) & dir\nupos(m) & dir\n"
    g = small_graph(arc_templates=wide, max_bits=9, epochs=2, random_state=7).fit(train)
    t = depfs.Tagger(SMALL, epochs=1, min_known=5, random_state=4).fit(train)
    a = depfs.ArcEagerParser(AE_SET, epochs=2, random_state=5, explore_p=0.5).fit(train)
    for model, settings in (
        (g, {"max_bits": 9, "epochs": 2, "random_state": 7}),
        (t, {"min_known": 5, "epochs": 1, "random_state": 4}),
        (a, {"epochs": 2, "random_state": 5, "explore_p": 0.5}),
    ):
        model.save(tmp_path / "m.depfs")
        loaded = depfs.load(tmp_path / "m.depfs")
        assert {k: getattr(loaded, k) for k in settings} == settings
        loaded.fit(train)
        if isinstance(model, depfs.Tagger):
            assert loaded.tag(test).to_string() == model.tag(test).to_string()
        else:
            assert loaded.parse(test).to_string() == model.parse(test).to_string()


def test_a_refit_keeps_nothing_of_the_fit_before(d: dict[str, Path]) -> None:
    """A refit without a tagger kept the earlier fit's: saved with the new model, and
    tagging untagged input with it. Each learned attribute (`name_`) is now the new fit's."""
    train = synthetic(40, seed=1)
    tagger = depfs.Tagger(SMALL, epochs=1).fit(train)
    p = depfs.ArcEagerParser(AE_SET, epochs=1, tagger=tagger).fit(train)
    assert p.tagger_ is tagger
    p.earlier_fit_ = "a learned attribute of another fit"
    p.tagger = None
    p.fit(train)
    assert p.tagger_ is None and not hasattr(p, "earlier_fit_")


@pytest.mark.parametrize("stop", [ValueError, KeyboardInterrupt])
def test_a_fit_that_raises_leaves_the_model_as_it_was(stop: type[BaseException]) -> None:
    """A refit cut short (an error, Ctrl-C) kept the old model beside the new fit's
    history and training information, and `save` wrote both. Now nothing changes."""
    train = synthetic(40, seed=1)
    p = depfs.ArcEagerParser(AE_SET, epochs=2).fit(train, synthetic(10, seed=2))
    before = {k: v for k, v in vars(p).items() if k.endswith("_")}

    def fail(row: Any) -> None:
        raise stop("stopped")

    p.epochs = 3
    with pytest.raises(stop):
        p.fit(train[:20], on_epoch=fail)
    after = {k: v for k, v in vars(p).items() if k.endswith("_")}
    assert after.keys() == before.keys()
    assert all(after[k] is before[k] for k in before)


def test_a_numpy_flag_is_a_flag_and_recorded_as_one() -> None:
    """`np.True_` for a flag trained, but its model recorded the string 'np.True_'."""
    p = depfs.ArcEagerParser(AE_SET, epochs=1, pseudo_projective=np.True_).fit(synthetic(20))
    assert p.training_info()["params"]["pseudo_projective"] is True


def test_small_api_inconsistencies_of_probe_8(d: dict[str, Path], tmp_path: Path) -> None:
    """`filled_columns` named columns in upper case and `vocab` took lower case only; a
    missing template file or a misspelt set name was parsed as a template ("expected
    attr(address), dir or dist"); a non-Tagger assigned as `tagger_` failed at parse
    time with an AttributeError; `tree_score`'s range was one too wide."""
    gold = _gold(d)
    assert "UPOS" in gold.filled_columns() and gold.vocab("UPOS") == gold.vocab("upos")
    for spec in (str(tmp_path / "typo.txt"), "arc_eager_en_ewtt"):
        with pytest.raises(FileNotFoundError, match="no such template file or shipped set"):
            depfs.ArcEagerParser(spec).fit(gold)
    p = depfs.load(d["ae"])
    p.tagger_ = p.model_
    untagged = depfs.tokens_to_treebank([["a", "b"]])
    with pytest.raises(TypeError, match="tagger must be a fitted depfs.Tagger"):
        p.parse(untagged)
    with pytest.raises(ValueError, match=r"heads\[1\] = 4 is not a position in 0\.\.3"):
        decode.tree_score(np.zeros((4, 4)), [-1, 4, 0, 0])


def test_more_api_inconsistencies_of_probe_8(d: dict[str, Path]) -> None:
    """A Tagger given a list of four Template objects read it as one set per column
    (TypeError: 'Template' object is not iterable); `Template.parse` of two lines said
    "nested parentheses", of `max_atoms=-1` raised OverflowError; `perturb` refused a
    path, which every other entry takes."""
    from depfs.datasets import perturb
    from depfs.templates import Template

    four = [Template.parse(x, "token") for x in SMALL.splitlines()[:4]]
    tagger = depfs.Tagger(four, epochs=1).fit(synthetic(20))
    assert tagger.model_.templates("UPOS") == [t.text for t in four]
    with pytest.raises(ValueError, match="one template per call, got 2 lines"):
        Template.parse("upos(h)\nupos(m)")
    with pytest.raises(ValueError, match="max_atoms must be an integer >= 1"):
        Template.parse("upos(h)", max_atoms=-1)
    assert perturb(d["gold"], seed=1).to_string() == perturb(_gold(d), seed=1).to_string()
    masked = np.ma.masked_array(np.zeros((3, 3)), mask=np.eye(3, dtype=bool))
    with pytest.raises(
        TypeError, match=r"masked array's mask would be ignored: give scores\.filled"
    ):
        decode.cle(masked)  # (the masked arcs were scored as they were)
    with pytest.raises(TypeError, match="from_bytes takes bytes: give text to"):
        depfs.Treebank.from_bytes(d["gold"].read_text())  # ("Can't extract 'str' to 'Vec'")


# ---------------------------------------------------------------- probe 9: long runs
@pytest.mark.parametrize("command", ["train", "parse"])
def test_a_closed_stderr_pipe_does_not_stop_the_work(
    d: dict[str, Path], tmp_path: Path, command: str
) -> None:
    """`depfs train ... 2>&1 | head -1`: the first note or epoch line after the reader
    left raised BrokenPipeError, taken for stdout's reader leaving: exit 0, and the
    model (the parse, the order) never written. What is said on stderr is now dropped."""
    out = tmp_path / ("m.depfs" if command == "train" else "o.conllu")
    text = tmp_path / "words.txt"
    text.write_text("The cat sat .\nDogs bark .\n")  # parsed with a note: read as text
    args = {
        "train": ["train", "--parser", "arc-eager", "--train", str(d["gold"]), "--dev"]
        + [str(d["gold"]), "--epochs", "2", "--templates", AE_SET, "-o", str(out)],
        "parse": ["parse", str(d["ae"]), "--allow-missing-tags", str(text), "-o", str(out)],
    }[command]
    p = subprocess.Popen([sys.executable, "-m", "depfs", *args], stderr=subprocess.PIPE)
    assert p.stderr is not None
    p.stderr.close()  # before the command says anything
    assert p.wait(timeout=GUARD) == 0
    assert out.is_file() and out.stat().st_size > 0


@pytest.mark.parametrize("how", ["ctrl-c, workers", "ctrl-c, local cluster", "sigterm"])
def test_an_interrupted_search_says_one_line_with_its_status(
    d: dict[str, Path], tmp_path: Path, how: str
) -> None:
    """A terminal's Ctrl-C reaches every process of its foreground group: a search's
    workers printed their KeyboardInterrupt tracebacks under the one line (a Dask
    LocalCluster's in 7 of 8 tries, ~60 lines; a local pool's now and then, once a Rust
    panic). Its workers now ignore SIGINT (born so, or so once started), and the search
    stops them. SIGTERM exited 130 where the docs say 143. (Step lines come before.)"""
    if "cluster" in how:
        pytest.importorskip("distributed")
    import signal

    pool, out = tmp_path / "pool.txt", tmp_path / "o.txt"
    pool.write_text(AE_SET)
    args = ["select", "wrapper", "--pool", str(pool), "--train", str(d["big"]), "--dev"]
    args += [str(d["gold"]), "--epochs", "2", "-o", str(out), "--workers", "2"]
    args += ["--scheduler", "local"] if "cluster" in how else []
    p = subprocess.Popen(
        [sys.executable, "-m", "depfs", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own group, as a terminal's foreground job
    )
    log, deadline = Path(f"{out}.jsonl"), time.monotonic() + GUARD
    while not (log.exists() and log.stat().st_size > 0):  # mid-run: a candidate is done
        assert p.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    if how == "sigterm":
        p.send_signal(signal.SIGTERM)
    else:
        os.killpg(p.pid, signal.SIGINT)
    err = p.communicate(timeout=GUARD)[1].decode()
    assert p.returncode == (143 if how == "sigterm" else 130)
    said = [line for line in err.splitlines() if not line.startswith("  step ")]
    assert len(said) == 1 and said[0].startswith("depfs: interrupted; "), err


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux's /proc)."""
    kids = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    kids.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return kids


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("after", [0.1, 0.4])
@pytest.mark.parametrize("twice", [False, True])
def test_ctrl_c_while_a_local_cluster_starts_says_one_line(
    d: dict[str, Path], tmp_path: Path, after: float, twice: bool
) -> None:
    """A Ctrl-C while `--scheduler local` started its workers printed 40-70 lines under the
    one line: the workers' KeyboardInterrupt tracebacks from the middle of their imports
    (they ignore SIGINT only once started), Dask's "Nanny failed to start" and asyncio's
    "Task exception was never retrieved" at exit, or a worker's FileNotFoundError once this
    process was gone; a second Ctrl-C (`timeout` signals the process, then its group) cut
    the line short with the handler's traceback, or click's "Aborted!" and exit 1."""
    pytest.importorskip("distributed")
    import signal

    out = tmp_path / "o.txt"
    args = ["select", "wrapper", "--pool", str(d["pool"]), "--train", str(d["gold"]), "--dev"]
    args += [str(d["gold"]), "--epochs", "1", "-o", str(out), "--scheduler", "local"]
    p = subprocess.Popen(
        [sys.executable, "-m", "depfs", *args, "--workers", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own group, as a terminal's foreground job
    )
    deadline = time.monotonic() + GUARD
    while not _children(p.pid):  # the cluster starts its first process
        assert p.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(after)  # its workers under way
    os.killpg(p.pid, signal.SIGINT)
    assert p.stderr is not None
    first = p.stderr.read(1)  # the line has begun
    if twice:  # and another Ctrl-C comes while it is said and the cluster closes
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGINT)
    err = (first + p.stderr.read()).decode()
    p.wait(timeout=GUARD)
    time.sleep(0.5)  # (a worker outliving this process would write after it)
    # (A second Ctrl-C once the interpreter is ending, its handlers gone, ends it by
    # SIGINT: the shell's status is 130 either way.)
    assert p.returncode == 130 or (twice and p.returncode == -signal.SIGINT), err
    assert len(err.splitlines()) == 1 and err.startswith("depfs: interrupted"), err


@pytest.mark.parametrize("force", [False, True])
def test_a_read_only_log_is_named_as_one_appended_to(
    d: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, force: bool
) -> None:
    """A read-only `--log` was told "--force to replace it", and `--force` then failed
    with "Permission denied": a log is appended to, never replaced. (Seen as another
    user: root may write anything, so the access is what user 65534's would be.)"""
    log = tmp_path / "l.jsonl"
    log.write_text("")
    log.chmod(0o444)
    _not_writable(monkeypatch, log)
    args = ["select", "wrapper", "--pool", str(d["pool"]), "--train", str(d["gold"]), "--dev"]
    args += [str(d["gold"]), "-o", str(tmp_path / "o.txt"), "--log", str(log), "--workers", "1"]
    code, _, err = _cli([*args, "--force"] if force else args)
    assert code == 2
    _one_line_error(err, ["l.jsonl: the file cannot be written", "--log is appended to"])
    assert "--force" not in err


def test_a_file_of_one_unfinished_line_is_not_emptied_as_a_log(tmp_path: Path) -> None:
    """A file of one line starting with `{` (not JSON, no newline) given as `--log` was
    taken for a log whose last line a kill cut off, and emptied. It is now refused and
    left as it is."""
    from depfs.select.engine import Log

    mine = tmp_path / "notes.json"
    mine.write_text('{"key": "x", "note": "my own json, no newline')
    with pytest.raises(ValueError, match="notes.json:1: one unfinished line and no whole one"):
        Log(mine)
    assert mine.read_text() == '{"key": "x", "note": "my own json, no newline'


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("term", "columns", "drawn"), [("xterm", 100, True), ("dumb", 100, False), ("xterm", 30, False)]
)
def test_progress_lines_go_above_a_bar_that_fits_the_terminal(
    monkeypatch: pytest.MonkeyPatch, term: str, columns: int, drawn: bool
) -> None:
    """On a terminal, an epoch line or note was written onto the bar's row (and wrapped);
    `TERM=dumb` got the bar's escape codes; a terminal narrower than the bar's line
    flooded (each redraw of the wrapped line added rows). A line now clears the bar's
    row first; a dumb or narrow terminal gets lines and no bar."""
    from depfs.cli_options import above_bar, progress

    screen = _Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    monkeypatch.setenv("TERM", term)
    monkeypatch.setenv("COLUMNS", str(columns))
    with progress(4, "training") as bar:
        bar.update(1)
        above_bar(bar, "  epoch 1: train accuracy 90.00")
    text = screen.getvalue()
    assert ("training" in text) == drawn
    if drawn:  # the bar's row blanked, then the line, then the bar again
        before = text.split("  epoch 1")[0]
        assert before.endswith("\r") and before.rstrip("\r").endswith(" " * 20)
    else:
        assert text == "  epoch 1: train accuracy 90.00\n"


def test_a_search_off_a_terminal_says_each_step(d: dict[str, Path], tmp_path: Path) -> None:
    """`select wrapper ... 2> log` said nothing until its last line: an hour's search
    under nohup gave no sign of life. Each step is now a line."""
    out = tmp_path / "o.txt"
    args = ["select", "wrapper", "--pool", str(d["pool"]), "--train", str(d["gold"]), "--dev"]
    code, _, err = _cli([*args, str(d["gold"]), "-o", str(out), "--workers", "1"])
    assert code == 0, err
    steps = [line for line in err.splitlines() if line.startswith("  step ")]
    assert len(steps) == 2 and steps[0].startswith("  step 1: ") and "(dev " in steps[0]


def test_dask_workers_that_keep_dying_are_one_line_not_an_internal_error(
    d: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dask's KilledWorker (a task's workers died, out of memory or killed) was shown as
    `depfs: internal error: KilledWorker: ...`, exit 1, as if depfs had a bug."""

    class KilledWorker(Exception):  # (Dask's, by name: distributed is optional)
        pass

    def dies(*_a: Any, **_k: Any) -> Any:
        raise KilledWorker("Attempted to run task 'parse_chunk-1' on 4 different workers")

    monkeypatch.setattr(depfs.pipeline, "parse_files", dies)
    args = ["parse", str(d["ae"]), str(d["gold"]), "--out-dir", str(tmp_path)]
    code, _, err = _cli([*args, "--scheduler", "local"])
    assert code == 2
    _one_line_error(err, ["Dask workers kept dying (out of memory? killed?)", "parse_chunk-1"])


def test_a_log_removed_mid_run_is_not_shared_by_two_runs(tmp_path: Path) -> None:
    """A run held its log by a lock on the file it opened, yet opened the path again for
    each line: with the log removed mid-run it wrote a new, unlocked file, which a
    second run then shared (92 duplicate lines in the probe). Lines now go through the
    locked file, and a run whose log was removed stops with one line."""
    from depfs.select.engine import Candidate, Log, Result
    from depfs.templates import TemplateSet

    log = tmp_path / "l.jsonl"
    a = Log(log)
    a.lock()
    log.unlink()  # removed while run A holds it
    b = Log(log)
    b.lock()  # run B: a new log at the path
    r = Result("k", 1.0, 1.0, 1.0, cpu_seconds=0.0, seed=1, start=0.0, end=0.0)
    cand = Candidate("arc-eager", tuple(TemplateSet.parse("upos(QUEUE_0)", "config")))
    with pytest.raises(ValueError, match="l.jsonl: the log was removed during the run"):
        a.add(cand, r)  # (into the removed file, its results lost without a word)
    assert log.read_text() == ""  # A's line is not in B's log
    a.unlock()
    assert log.exists()  # A's unlock leaves B's new, empty log alone
    b.add(cand, r)
    b.unlock()
    assert Log(log).results.keys() == {"k"}


def test_models_and_treebanks_pickle(d: dict[str, Path]) -> None:
    """Models and treebanks refused `pickle` and `copy.deepcopy` (`cannot pickle
    'depfs._core.ArcEagerModel'`), which multiprocessing and joblib need. A model now
    pickles as its model file's bytes beside its attributes (a parser's tagger too), a
    treebank as its CoNLL-U bytes; each parses, tags and writes as the original."""
    import copy
    import pickle

    gold = _gold(d)
    tagger = depfs.Tagger(SMALL, epochs=1).fit(gold)
    with_tagger = depfs.ArcEagerParser(AE_SET, epochs=1, tagger=tagger).fit(gold)
    models = [with_tagger, depfs.load(d["graph"]), tagger, _dynfs()]
    for m in models:
        for twin in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
            assert type(twin) is type(m) and twin.training_info() == m.training_info()
            if isinstance(m, depfs.Tagger):
                assert twin.tag(gold).to_string() == m.tag(gold).to_string()
            else:
                assert twin.parse(gold).to_string() == m.parse(gold).to_string()
    assert isinstance(pickle.loads(pickle.dumps(with_tagger)).tagger_, depfs.Tagger)
    roots = depfs.read_conllu(d["roots"], multiple_roots=True)  # (several roots read back)
    for tb in (gold, gold[3:9], roots):
        assert pickle.loads(pickle.dumps(tb)).to_string() == tb.to_string()


# ---------------------------------------------------------------- review of this session's fixes
def test_a_loaded_parser_with_its_tagger_refits_with_it(tmp_path: Path) -> None:
    """A parser loaded from a file with its tagger inside lost the tagger when refit
    (its `tagger` argument was None): `save` then wrote the file without it."""
    train = synthetic(40, seed=1)
    tagger = depfs.Tagger(SMALL, epochs=1).fit(train)
    depfs.ArcEagerParser(AE_SET, epochs=1, tagger=tagger).fit(train).save(tmp_path / "p.depfs")
    loaded = depfs.load(tmp_path / "p.depfs")
    loaded.fit(train)
    assert isinstance(loaded.tagger_, depfs.Tagger)
    loaded.save(tmp_path / "again.depfs")
    assert depfs.model_info(tmp_path / "again.depfs")["tagger"] is not None


def test_no_stderr_at_all_is_no_error(d: dict[str, Path], tmp_path: Path) -> None:
    """`depfs ... 2>&-` (no descriptor 2: sys.stderr is None) exited 120, and a parse
    that had a note to give wrote no output."""
    text = tmp_path / "words.txt"
    text.write_text("The cat sat .\n")
    out = tmp_path / "o.conllu"
    for args in (
        ["info", str(d["ae"])],
        ["parse", str(d["ae"]), "--allow-missing-tags", str(text), "-o", str(out)],
    ):
        res = _process(args, preexec_fn=lambda: os.close(2))
        assert res.returncode == 0, args
    assert out.stat().st_size > 0


def test_templates_without_parentheses_and_without_resource(tmp_path: Path) -> None:
    """One-line templates with no atom in parentheses (`dir & sdist`, `DIR & DIST`) were
    refused as "no such template file"; `Template.parse` refused a line with its line
    end; `import depfs` needed the POSIX-only `resource` module (Windows)."""
    from depfs.templates import Template, resolve_templates

    for text in ("dir & sdist", "DIR & DIST", "dir"):
        assert resolve_templates(text) == text
    assert Template.parse("upos(h) & upos(m)\n") == Template.parse("upos(h) & upos(m)")
    code = "import sys; sys.modules['resource'] = None; import depfs; print(depfs.__version__)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_a_worker_serving_two_searches_reads_changed_data_again(tmp_path: Path) -> None:
    """A worker that serves several searches (a remote Dask cluster) kept each file's
    treebank by path: a new search on a changed file was scored on the old data, under
    the new data's name. The cache is now keyed by the data's fingerprint too."""
    from depfs.select.engine import Engine, Log, data_fingerprint, evaluate_candidate
    from depfs.templates import TemplateSet

    train, dev = tmp_path / "train.conllu", tmp_path / "dev.conllu"
    synthetic(60, seed=1).write(str(train))
    synthetic(20, seed=2).write(str(dev))
    cand = depfs.select.Candidate("arc-eager", tuple(TemplateSet.parse(AE_SET, "config")))
    with cf.ThreadPoolExecutor(1) as ex:  # (one worker for both searches)
        with Engine(str(train), str(dev), executor=ex, log=Log(None)) as eng:
            list(eng.run([cand]))
        synthetic(60, seed=3).write(str(train))
        with Engine(str(train), str(dev), executor=ex, log=Log(None)) as eng:
            (_, second), *_ = list(eng.run([cand]))
    fresh = tmp_path / "fresh.conllu"
    fresh.write_bytes(train.read_bytes())
    want = evaluate_candidate(cand, str(fresh), str(dev), {"train": data_fingerprint(fresh)})
    assert (second.dev_uas, second.dev_las) == (want.dev_uas, want.dev_las)


def test_a_loaded_dynfs_model_keeps_its_groups() -> None:
    """A loaded DynFS model said `groups=None` (the shipped groups), so a refit mixed
    its recorded settings with other groups; now the recorded file or set name."""
    loaded = _dynfs()
    assert (
        loaded.groups == depfs.model_info(DATA / "dynfs1_v5.depfs")["training"]["params"]["groups"]
    )


def test_a_parse_during_a_refit_uses_the_model_before_it() -> None:
    """A parse in another thread while the same object refits failed ("not trained
    yet") for the whole fit: the learned attributes were removed at its start."""
    train = synthetic(200, seed=1)
    p = depfs.ArcEagerParser(AE_SET, epochs=1).fit(train)
    errors: list[BaseException] = []
    done = threading.Event()

    def parse_meanwhile() -> None:
        while not done.is_set():
            try:
                p.parse(train[:5])
            except BaseException as e:  # noqa: BLE001 - counted, the test says which
                errors.append(e)

    t = threading.Thread(target=parse_meanwhile)
    t.start()
    p.epochs = 6
    p.fit(train)
    done.set()
    t.join()
    assert errors == []


def test_a_tagger_with_wide_templates_loads(tmp_path: Path) -> None:
    """A tagger whose backward pass read a template of 4 word atoms (its set's
    `#! max_atoms = 4` allowed it) trained and saved a file that could not be loaded
    ("inconsistent tagger: ... 4 word atoms, the limit is 3"). A saved model's
    templates are read with the language's bound: they were checked when it trained."""
    wide = "#! max_atoms = 4\nlower(i-1) & lower(i) & lower(i+1) & lower(i+2)\nlower(i)\n"
    train = synthetic(40, seed=1)
    tagger = depfs.Tagger(SMALL, epochs=1, backward=wide).fit(train)
    tagger.save(tmp_path / "t.depfs")
    loaded = depfs.load(tmp_path / "t.depfs")
    assert loaded.tag(train).to_string() == tagger.tag(train).to_string()
    loaded.fit(train)  # (its backward text, as the model holds it, trains again)
