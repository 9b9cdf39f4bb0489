"""The `depfs` command line (click). Errors print one line on stderr and exit 2."""

from __future__ import annotations

import click

from . import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="depfs")
def main() -> None:
    """depfs: fast feature-based dependency parsing."""


if __name__ == "__main__":
    main()
