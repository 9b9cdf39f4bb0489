"""`python -m depfs`: the `depfs` command line."""

from ._entry import main

main()
