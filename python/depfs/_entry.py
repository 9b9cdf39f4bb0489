"""The `depfs` command's entry point: the command line (:mod:`depfs.cli`), imported here so
that a Ctrl-C during its imports (a tenth of a second) ends with one line and exit 130, as
one during the command does, not with a traceback from inside an import."""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from .cli import main as command
    except KeyboardInterrupt:
        if sys.stderr is not None:  # (none at all: `2>&-`)
            sys.stderr.write("depfs: interrupted while starting: nothing was done\n")
        raise SystemExit(130) from None
    command(prog_name="depfs")
