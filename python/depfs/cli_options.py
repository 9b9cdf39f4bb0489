"""Options shared by the `depfs` commands (one definition each: same names, defaults, help)."""

from __future__ import annotations

from typing import Any, Callable

import click


class _IntRange(click.IntRange):
    """click's IntRange, whose refusal of a word says "not a valid integer" (click's
    own says "not a valid integer range")."""

    name = "integer"


class _Seed(_IntRange):
    def _describe_range(self) -> str:
        return "0 to 2^64-1"  # (its 20 digits told a reader nothing)


#: A seed: any value of an unsigned 64-bit integer.
SEED = _Seed(0, 2**64 - 1)


class _Count(_IntRange):
    def _describe_range(self) -> str:
        return f"x>={self.min}"  # the 64-bit bound is not worth a line of help

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        n = click.INT.convert(value, param, ctx)
        if self.max is not None and n > self.max:
            self.fail(f"{n} does not fit in a signed 64-bit integer", param, ctx)
        return super().convert(n, param, ctx)


def count(minimum: int = 1) -> click.IntRange:
    """A count option (epochs, folds, sentences per batch, workers): at least `minimum`
    and within a signed 64-bit integer, so that the core never sees a value it cannot
    hold (a bigger one is refused with the option's name)."""
    return _Count(minimum, 2**63 - 1)


def parser_option(default: str, tagger: bool = False, dynfs: bool = True) -> Callable[[Any], Any]:
    """--parser graph|arc-eager (and tagger); `dynfs`: the command has --dynfs."""
    return click.option(
        "--parser",
        "parser_kind",
        type=click.Choice(["graph", "arc-eager", *(["tagger"] if tagger else [])]),
        default=default,
        show_default=True,
        help="arc-eager: greedy transitions, the fastest and most accurate on en_ewt and "
        "pt_bosque (the README's first choice); graph: exact decoding (Eisner, or CLE with "
        "--decoder cle), --order 2 for sibling features"
        + (", --dynfs for dynamic feature selection" if dynfs else "")
        + ("; tagger: UPOS, XPOS, FEATS and LEMMA" if tagger else "")
        + ".",
    )


order_option = click.option(
    "--order", type=click.IntRange(1, 2), default=1, show_default=True, help="Graph parser."
)
decoder_option = click.option(
    "--decoder",
    type=click.Choice(["eisner", "cle"]),
    default="eisner",
    show_default=True,
    help="Graph parser of order 1 (order 2 decodes with projective Eisner2).",
)
seed_option = click.option("--seed", type=SEED, default=1, show_default=True)


def out_option(what: str) -> Callable[[Any], Any]:
    """A required --out (`out_path`) for `what`, a file or - for stdout."""
    return click.option(
        "-o",
        "--out",
        "out_path",
        required=True,
        type=click.Path(dir_okay=False, allow_dash=True),
        help=f"{what} to write (- for stdout).",
    )


def scheduler_address(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """--scheduler's callback: a blank address is refused (it was taken as no
    --scheduler, and the work ran locally without a word)."""
    if value is not None and not value.strip():
        raise click.BadParameter("empty: a Dask scheduler address, or 'local'")
    return value


class MarginType(click.ParamType):
    """A prefix-margin: a number ≥ 0 (``inf`` for every template), or a preset name."""

    name = "margin"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float) or value in ("accurate", "fast"):
            return value
        try:
            m = float(value)
        except ValueError:
            self.fail(f"{value!r} is not a number, 'accurate' or 'fast'", param, ctx)
        if not m >= 0:
            self.fail(f"{value!r}: a margin is a number ≥ 0", param, ctx)
        return m


input_option = click.option(
    "--input",
    "input_format",
    type=click.Choice(["conllu", "horizontal", "vertical"]),
    default=None,
    help="Input format: CoNLL-U; horizontal text (one sentence per line, tokens split on "
    "spaces); vertical text (one token per line, a blank line between sentences) "
    "[default: detected, said on stderr when not CoNLL-U].",
)
tokenizer_option = click.option(
    "--tokenizer",
    metavar="spacy:LANG",
    help="Raw text: split into sentences and tokens by spaCy's blank LANG tokenizer and "
    "its sentencizer (no model download; pip install 'depfs[spacy]').",
)


#: The narrowest terminal that gets a progress bar.
MIN_BAR_COLUMNS = 60


def progress(length: int, label: str, **kw: Any) -> Any:
    """A progress bar on stderr, drawn only when stderr is a terminal that can draw it (a
    log or a pipe gets no bar lines, so an error after the work started is still one
    line; `TERM=dumb` got its escape codes), as wide as the terminal (a fixed width
    wrapped on a narrow one)."""
    import os
    import sys

    # A terminal narrower than a label and a short bar gets none: each redraw of a
    # wrapped line added rows (254 rows for 36 updates at 10 columns). Its width is
    # stderr's own (shutil's and click's are stdout's, 80 when it goes to a file).
    # (no stderr at all, `2>&-`: no bar, and the work goes on; it stopped with exit 1)
    shown = sys.stderr is not None and sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
    columns = _stderr_columns()
    shown = shown and columns >= MIN_BAR_COLUMNS
    bar = click.progressbar(
        length=length,
        label=label,
        file=sys.stderr,
        hidden=not shown,
        width=max(10, columns - BAR_CLUTTER),
        **kw,
    )
    if not shown:
        _heartbeat(bar)
    return bar


#: Seconds between the lines a hidden bar says where it is (a log gets no bar).
HEARTBEAT_SECONDS = 30.0


def _heartbeat(bar: Any) -> None:
    """A hidden bar's `update` also says, at most every :data:`HEARTBEAT_SECONDS`, how far
    the work is (`  wrapper: 40 of 169 (2 min 30 s)`): with stderr in a log, a search's
    first step on real data said nothing for minutes. O(1) per update."""
    import time

    start = last = time.monotonic()
    plain = bar.update

    def update(n_steps: int, current_item: Any = None) -> None:
        nonlocal last
        plain(n_steps, current_item)
        now = time.monotonic()
        last = max(last, getattr(bar, "said_at", last))  # (a line of its own: `above_bar`)
        if now - last >= HEARTBEAT_SECONDS and bar.pos < bar.length:
            last = now
            took = int(now - start)
            since = f"{took // 60} min {took % 60} s" if took >= 60 else f"{took} s"
            click.echo(f"  {bar.label}: {bar.pos} of {bar.length} ({since})", err=True)

    bar.update = update


#: Room a bar's line keeps for its label, percentage and time left.
BAR_CLUTTER = 55


def _stderr_columns() -> int:
    """The width of the terminal stderr is on (``COLUMNS`` first, as shutil's rule), 0
    when it is none."""
    import os
    import sys

    try:
        return int(os.environ.get("COLUMNS", "")) or 0
    except ValueError:
        pass
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 0


def above_bar(bar: Any, line: str) -> None:
    """`line` on stderr above a progress bar: the bar's row is cleared first (a line
    written after the bar's last frame began on it, and wrapped), then the bar is drawn
    again below it."""
    import time

    shown = not bar.hidden
    if shown:  # (spaces over the bar's widest frame, as click clears its own)
        click.echo("\r" + " " * (getattr(bar, "max_width", None) or 0) + "\r", nl=False, err=True)
    click.echo(line, err=True)
    bar.said_at = time.monotonic()  # (a hidden bar's heartbeat waits as long again)
    if shown:
        bar.render_progress()
