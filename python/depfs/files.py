"""Atomic writes of small files (orders, groups, plots) and of streamed outputs, through
the Rust core's one writer (``io::atomic``, which model files and CoNLL-U writes use):
a regular file is replaced only once its new bytes are complete (readers never see half
a file, an interrupted write leaves the old one) and keeps its permission bits (a new
one gets 0666 less the umask); a symlink's target is replaced, not the link; a device,
FIFO or socket is written in place, never replaced.

On Linux the bytes go to an unnamed file (``O_TMPFILE``) in the target's folder, named
and renamed over the target only once complete and synced: a process killed while
writing, SIGKILL included, leaves no file behind. Where ``O_TMPFILE`` is not supported
the bytes go to a named hidden temporary file, removed on any error or Ctrl-C but left
by a kill (:func:`temporary_pattern`).
"""

from __future__ import annotations

import contextlib
import glob
import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from . import _core

#: The first bytes of every depfs model file (`io::model::MAGIC` in the core): a model
#: given where text is read is named as one.
MODEL_MAGIC = b"DEPFSMDL"


class _AtomicStream(io.RawIOBase):
    """A binary stream over ``_core.AtomicFile`` (for ``gzip``, ``savefig`` and the
    parse's writer: anything that takes a file object)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self._file = _core.AtomicFile(os.fspath(path))

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        return self._file.write(data if isinstance(data, bytes) else bytes(data))

    def flush(self) -> None:
        self._file.flush()

    def commit(self) -> None:
        self._file.commit()

    def abort(self) -> None:
        self._file.abort()


@contextlib.contextmanager
def atomic_stream(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary stream whose bytes replace `path` only when the block ends without an
    error; on an error, or Ctrl-C, `path` is untouched and no temporary file is left."""
    stream = _AtomicStream(path)
    try:
        yield stream  # type: ignore[misc]
    except BaseException:
        stream.abort()
        raise
    stream.commit()


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_stream(path) as f:
        f.write(data)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def is_stream(path: str) -> bool:
    """Whether `path` is a pipe, FIFO, character device or socket (`/dev/stdin`,
    `<(zcat x.gz)`): read once, as it comes, never opened twice nor cut into chunks."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # the reader names the problem
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def temporary_pattern(path: str | os.PathLike[str]) -> str:
    """The glob pattern of the temporary files that writes of `path` use (in its folder):
    `.NAME.XXXXXX.tmp`, six random characters (`.NAME.*.tmp` would match those of an
    output `NAME.more` too)."""
    # The name cut as the writer cuts it (`io::atomic::HIDDEN_NAME_BYTES`: 200 bytes).
    name = Path(os.path.realpath(path)).name.encode("utf-8", "surrogateescape")[:200]
    return f".{glob.escape(name.decode('utf-8', 'ignore'))}.??????.tmp"
