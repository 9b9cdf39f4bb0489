"""Atomic writes of small files (orders, groups, plots) and of streamed outputs, with
the rules of the Rust core's `io::atomic`: a regular file is replaced only once its new
bytes are complete (readers never see half a file, an interrupted write leaves the old
one) and keeps its permission bits; a symlink's target is replaced, not the link; a
device, FIFO or socket is written in place, never replaced.

On Linux the bytes go to an unnamed file (``O_TMPFILE``) in the target's folder, named
(``linkat`` of ``/proc/self/fd/N``) and renamed over the target only once complete and
synced: a process killed while writing, SIGKILL included, leaves no file behind. Where
``O_TMPFILE`` is not supported (a file system without it, other systems) the bytes go
to a named hidden temporary file, removed on any error or Ctrl-C but left by a kill
(:func:`temporary_pattern`).
"""

from __future__ import annotations

import contextlib
import errno
import glob
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

#: The errors of ``O_TMPFILE`` where it is not supported (then a named file is used).
_NO_TMPFILE = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_stream(path) as f:
        f.write(data)


@contextlib.contextmanager
def atomic_stream(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary stream whose bytes replace `path` only when the block ends without an
    error (same rules as :func:`write_bytes_atomic`); on an error, or Ctrl-C, `path` is
    untouched and no temporary file is left."""
    target = Path(os.path.realpath(path))
    if target.exists() and not target.is_file() and not target.is_dir():
        with open(target, "wb") as f:  # /dev/null, a FIFO: in place
            yield f
        return
    folder = target.parent if str(target.parent) else Path(".")
    mode = target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_umask()
    fd = _unnamed_file(folder)
    if fd == -1:
        with _named_temporary(folder, target, mode) as f:
            yield f
        return
    with os.fdopen(fd, "wb") as f:
        yield f
        f.flush()
        os.fchmod(fd, mode)
        os.fsync(fd)
        _publish(fd, folder, target)


def _unnamed_file(folder: Path) -> int:
    """The descriptor of an unnamed file in `folder` (mode 0600 until published), or -1
    where ``O_TMPFILE`` is not supported (or no /proc is mounted to name it through)."""
    if not hasattr(os, "O_TMPFILE") or not os.path.isdir("/proc/self/fd"):
        return -1
    try:
        return os.open(folder, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    except OSError as e:
        if e.errno in _NO_TMPFILE:
            return -1
        raise


def _publish(fd: int, folder: Path, target: Path) -> None:
    """Names the unnamed file `fd` (a fresh hidden name in `folder`) and renames it over
    `target`: the name lives for the microseconds between the two calls."""
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        while True:
            tmp = f".{target.name}.{secrets.token_hex(6)}.tmp"  # see temporary_pattern
            try:
                os.link(f"/proc/self/fd/{fd}", tmp, dst_dir_fd=dir_fd, follow_symlinks=True)
                break
            except FileExistsError:
                continue
        try:
            os.replace(tmp, target.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            os.unlink(tmp, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)


@contextlib.contextmanager
def _named_temporary(folder: Path, target: Path, mode: int) -> Iterator[BinaryIO]:
    """The fallback of :func:`atomic_stream`: a named hidden temporary file, renamed
    over `target` when the block ends without an error, removed otherwise."""
    # The name is known before the file exists, so that an interruption at any point
    # (Ctrl-C between creating the file and entering `try`) still removes it.
    tmp = folder / f".{target.name}.{secrets.token_hex(6)}.tmp"  # see temporary_pattern
    fd = -1
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as err:
        if not (fd == -1 and isinstance(err, FileExistsError)):  # not someone else's file
            tmp.unlink(missing_ok=True)
        raise


def temporary_pattern(path: str | os.PathLike[str]) -> str:
    """The glob pattern of the temporary files that writes of `path` use (in its folder)."""
    return f".{glob.escape(Path(os.path.realpath(path)).name)}.*.tmp"


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
