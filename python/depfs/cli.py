"""The `depfs` command line (click). Errors print one line on stderr and exit 2."""

from __future__ import annotations

import functools
import json
import sys
from typing import Any, Callable, TypeVar

import click

from . import __version__
from .errors import DepfsError

F = TypeVar("F", bound=Callable[..., Any])

#: Exit status of every failure the user can fix (bad input, unreadable file).
EXIT_USAGE = 2


def _fail(err: BaseException) -> None:
    """One line on stderr, no traceback, exit status 2."""
    message = " ".join(str(err).split()) or type(err).__name__
    click.echo(f"depfs: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def handle_errors(fn: F) -> F:
    """Turns depfs errors and OS errors on input files into one stderr line + exit 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (DepfsError, OSError) as err:
            if isinstance(err, BrokenPipeError):  # `depfs stats x | head`: not an error
                sys.exit(0)
            _fail(err)

    return wrapper  # type: ignore[return-value]


class _Group(click.Group):
    """A group whose commands all get `handle_errors`, so commands added later
    (in other modules) cannot forget it."""

    def invoke(self, ctx: click.Context) -> Any:
        return handle_errors(super().invoke)(ctx)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="depfs")
def main() -> None:
    """depfs: fast feature-based dependency parsing."""


_path_arg = functools.partial(click.argument, type=click.Path(dir_okay=False))


@main.command("eval")
@_path_arg("gold")
@_path_arg("system")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option(
    "--full-labels", is_flag=True, help="Compare whole DEPREL values (default: part before ':')."
)
def eval_command(gold: str, system: str, as_json: bool, full_labels: bool) -> None:
    """Score SYSTEM against GOLD (CoNLL-U files with the same words).

    UAS, LAS (universal part of DEPREL unless --full-labels) and label accuracy, with
    and without punctuation (gold UPOS PUNCT), as the CoNLL 2018 scorer computes them
    on gold tokenisation. Multiword-token ranges and empty nodes are not scored.
    """
    from .evaluate import evaluate

    scores = evaluate(gold, system, full_labels=full_labels)
    d = scores.as_dict(digits=2)
    if as_json:
        click.echo(json.dumps(d))
        return
    click.echo(f"{'metric':<10} {'all':>8} {'no punct':>9}")
    for name, key in (("UAS", "uas"), ("LAS", "las"), ("label acc", "label_acc")):
        click.echo(f"{name:<10} {d[key]:>8.2f} {d[key + '_nopunct']:>9.2f}")
    click.echo(f"{'words':<10} {d['words']:>8} {d['words_nopunct']:>9}")


@main.command("stats")
@_path_arg("file")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def stats_command(file: str, as_json: bool) -> None:
    """Sentences, words, lengths, labels, non-projectivity, multiword tokens, empty nodes."""
    from .evaluate import stats

    st = stats(file)
    if as_json:
        click.echo(json.dumps(st.as_dict()))
        return
    rows = [
        ("sentences", f"{st.sentences}"),
        ("words", f"{st.words}"),
        ("mean length", f"{st.mean_length:.2f}"),
        ("max length", f"{st.max_length}"),
        (
            "non-projective sentences",
            f"{st.nonprojective_sentences} ({100 * st.nonprojective_sentence_share:.2f}%)",
        ),
        (
            "non-projective arcs",
            f"{st.nonprojective_arcs} ({100 * st.nonprojective_arc_share:.2f}%)",
        ),
        ("multiword tokens", f"{st.multiword_tokens}"),
        ("empty nodes", f"{st.empty_nodes}"),
        ("labels", f"{len(st.labels)}"),
    ]
    for name, value in rows:
        click.echo(f"{name:<26} {value}")
    for label, count in sorted(st.labels.items(), key=lambda kv: (-kv[1], kv[0])):
        click.echo(f"  {label:<24} {count}")


if __name__ == "__main__":
    main()
