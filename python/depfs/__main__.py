"""`python -m depfs`: the `depfs` command line."""

from .cli import main

main(prog_name="depfs")
