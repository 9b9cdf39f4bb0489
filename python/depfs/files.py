"""Atomic writes of small files (orders, groups, plots), with the rules of the Rust
core's `io::atomic`: a regular file is replaced through a temporary file in the same
folder (readers never see half a file, an interrupted write leaves the old one) and
keeps its permission bits; a symlink's target is replaced, not the link; a device, FIFO
or socket is written in place, never replaced.
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_stream(path) as f:
        f.write(data)


@contextlib.contextmanager
def atomic_stream(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary stream whose bytes replace `path` only when the block ends without an
    error (same rules as :func:`write_bytes_atomic`); on an error, or Ctrl-C, the
    temporary file is removed and `path` is untouched."""
    target = Path(os.path.realpath(path))
    if target.exists() and not target.is_file() and not target.is_dir():
        with open(target, "wb") as f:  # /dev/null, a FIFO: in place
            yield f
        return
    folder = target.parent if str(target.parent) else Path(".")
    mode = target.stat().st_mode & 0o7777 if target.exists() else None
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
        os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())
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
