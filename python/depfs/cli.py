"""The `depfs` command line (click). Errors print one line on stderr and exit 2."""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import math
import sys
import warnings
from collections.abc import Iterator
from typing import Any, Callable, TypeVar, cast

import click

from . import __version__
from .cli_options import (
    MarginType,
    above_bar,
    count,
    decoder_option,
    input_option,
    order_option,
    parser_option,
    progress,
    scheduler_address,
    seed_option,
    tokenizer_option,
)
from .errors import DepfsError

F = TypeVar("F", bound=Callable[..., Any])

#: Exit status of every failure the user can fix (bad input, unreadable file).
EXIT_USAGE = 2
#: Exit status after Ctrl-C (128 + SIGINT) and after SIGTERM (128 + 15), as shells report them.
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class _Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an interruption so that temporary files are cleaned up."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated()


class Threads(click.ParamType):
    """A thread count: 0 = all cores; more than the cores is capped, with a note."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        from .base import at_most_cores

        n = click.IntRange(0, 2**63 - 1).convert(value, param, ctx)
        return at_most_cores(n, "--threads")  # 0 (all cores) stays 0


#: A hint of the Python reader that names no option of the command line.
_API_HINT = " (reading with multiple_roots=True accepts this)"


#: Errors only a write gives (a full disk or quota, a file too large).
_WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _fail(err: BaseException) -> None:
    """One line on stderr, no traceback, exit status 2."""
    if isinstance(err, BrokenPipeError):  # `depfs ... | head`, caught as an OSError
        _quiet_stdout()
        sys.exit(0)
    if isinstance(err, OSError) and err.filename is not None and err.strerror:
        err = OSError(f"{err.filename}: {err.strerror}")  # not "[Errno 2] ...: 'x'"
    elif isinstance(err, OSError) and err.errno in _WRITE_ERRNOS and err.strerror:
        # A write error naming no file: files are written by the Rust core, which names
        # them, so this is stdout (`depfs parse ... > /dev/full`).
        err = OSError(f"stdout: {err.strerror}")
    message = " ".join(str(err).replace(_API_HINT, "").split()) or type(err).__name__
    click.echo(f"depfs: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def handle_errors(fn: F) -> F:
    """No traceback reaches a user: depfs errors, OS errors and bad values are one stderr
    line + exit 2; Ctrl-C one line + exit 130; anything else one line naming the error
    and `--debug` (which lets the traceback through)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with warnings.catch_warnings():
                # A warning raised anywhere in the command (the reader thread's too) is one
                # note line; depfs's warnings name their file and line themselves.
                warnings.showwarning = lambda message, *_a, **_k: click.echo(
                    f"depfs: note: {message}", err=True
                )
                return fn(*args, **kwargs)
        except BrokenPipeError:  # `depfs parse ... | head`: stdout's reader is done (stderr's
            # going is not an error either: `_SurvivingStderr`)
            _quiet_stdout()
            sys.exit(0)
        except (DepfsError, OSError, ValueError, OverflowError) as err:
            _fail(err)
        except KeyboardInterrupt as err:
            with second_ctrl_c_ignored():
                click.echo(_interrupted_line(), err=True)
            sys.exit(EXIT_TERMINATED if isinstance(err, _Terminated) else EXIT_INTERRUPTED)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except Exception as err:
            if _DEBUG:
                raise
            if type(err).__name__ == "KilledWorker":  # Dask's: not a bug of depfs
                from .errors import WorkersLostError

                _fail(WorkersLostError(f"Dask workers kept dying (out of memory? killed?): {err}"))
            message = " ".join(str(err).split())
            click.echo(
                f"depfs: internal error: {type(err).__name__}: {message} "
                "(run with --debug for the traceback)",
                err=True,
            )
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


#: Whether the running command is the process's own command line (`_Group.main`).
_OWN_PROCESS = [False]


@contextlib.contextmanager
def second_ctrl_c_ignored() -> Iterator[None]:
    """Once an interruption is being reported, another Ctrl-C (a second press; `timeout`
    signals the process, then its group) does nothing: it cut the one line short with a
    traceback, or with click's "Aborted!" and exit 1 during the exit's cleanup. A
    handler that does nothing, not SIG_IGN, so that no process started meanwhile is
    born deaf to Ctrl-C. It stays until the process ends, unless the command was called
    from another program (tests, notebooks), whose handler is back after the report."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, lambda *_: None)
    try:
        yield
    finally:
        if not _OWN_PROCESS[0]:
            signal.signal(signal.SIGINT, old)


_DEBUG = False

#: The output files of the running command (from `_check_output`, before any work),
#: each with what was at its path then: the line after Ctrl-C says which were written.
_OUTPUTS: dict[str, tuple[int, ...] | None] = {}
#: Whether the running command streams its output to stdout (a parse or tag without -o).
_STREAMING_STDOUT = [False]


def _identity(path: str) -> tuple[int, ...] | None:
    """What is at `path` (the file a symlink points to): a replaced file is a new inode;
    None when nothing is."""
    import os

    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def _names(paths: list[str]) -> str:
    shown = ", ".join(paths[:3])
    return shown if len(paths) <= 3 else f"{shown} and {len(paths) - 3} more"


def _note_now(source: str) -> Callable[[str], None]:
    """A note on stderr as soon as it is raised (before the long work it announces)."""
    return lambda note: click.echo(f"depfs: note: {source}: {note}", err=True)


def _stdout() -> Any:
    """stdout as a parse's or tagging's stream (said after Ctrl-C: it holds whole sentences)."""
    _STREAMING_STDOUT[0] = True
    return _WholeWrites(sys.stdout.buffer)


class _WholeWrites:
    """A binary stream whose `write` writes all of its bytes or raises. Under `python -u`
    (PYTHONUNBUFFERED) stdout's binary layer is the raw file, whose write may take
    part of the bytes on a full disk or at a file-size limit and say so in its return:
    the rest was dropped, the output cut short with exit 0."""

    def __init__(self, out: Any) -> None:
        self.out = out

    def write(self, data: bytes) -> int:
        view = memoryview(data).cast("B")
        while view:
            n = self.out.write(view)
            if not n:  # (a blocking descriptor never writes nothing without an error)
                raise OSError(errno.EIO, "stdout: a write took no bytes")
            view = view[n:]
        return len(data)

    def flush(self) -> None:
        self.out.flush()


def _interrupted_line() -> str:
    """The one line after Ctrl-C (or SIGTERM): which outputs were written, which were
    not (their old files untouched: outputs replace their target only once complete),
    and which were written in place (a device or FIFO) and may hold part of the output."""
    import os

    written, not_written, in_place = [], [], []
    for path, before in _OUTPUTS.items():
        if os.path.exists(path) and not os.path.isfile(path):
            in_place.append(path)
        elif _identity(path) != before:
            written.append(path)
        else:
            not_written.append(path)
    if not _OUTPUTS and _STREAMING_STDOUT[0]:
        return (
            "depfs: interrupted; stdout holds the sentences parsed before it, each whole "
            "(no file was written)"
        )
    if not _OUTPUTS:
        return "depfs: interrupted (nothing half-written is left)"
    if written and not not_written and not in_place:
        verb = "was" if len(written) == 1 else "were"
        return f"depfs: interrupted after {_names(written)} {verb} written"
    said = []
    if written:
        said.append(f"{_names(written)} {'was' if len(written) == 1 else 'were'} written")
    if not_written:
        old = [p for p in not_written if _OUTPUTS[p] is not None]
        if len(old) == len(not_written):
            why = "the old file is untouched" if len(old) == 1 else "the old files are untouched"
        else:
            why = "no file was made" if not old else "old files untouched, no new ones made"
        verb = "was" if len(not_written) == 1 else "were"
        said.append(f"{_names(not_written)} {verb} not written ({why})")
    if in_place:
        said.append(f"{_names(in_place)} (written in place) may hold part of the output")
    return "depfs: interrupted: " + "; ".join(said)


class _SurvivingStderr:
    """sys.stderr for a command: once its reader is gone (`2>&1 | head -1`, a `tee` that
    died), what the command says there is dropped and the work goes on. A note or an
    epoch line that raised BrokenPipeError ended `train`, `parse` and `select` with exit
    0 before they wrote their output. Its descriptor then points at /dev/null, so the
    interpreter's last flush has nowhere to fail."""

    def __init__(self, stream: Any) -> None:
        self._stream, self.gone = stream, False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return int(self._stream.write(text))
            except BrokenPipeError:
                self._lost()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._lost()

    def _lost(self) -> None:
        import os

        self.gone = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # (a stream without a descriptor)
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush
    does not print a second error."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


class _Refused(click.ClickException):
    """A click error (bad option value, missing argument) said on one line like every
    other error: ``depfs: error: ...``, exit 2, without click's usage lines."""

    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        click.echo(f"depfs: error: {' '.join(self.message.split())}", err=True)


def _one_line(err: click.ClickException) -> _Refused:
    return _Refused(err.format_message())


#: click's "no arguments given: here is the help" (click >= 8.2; earlier versions print
#: it themselves): shown whole, as click shows it, not squeezed onto one error line.
_NO_ARGS = getattr(click.exceptions, "NoArgsIsHelpError", None)
_HELP_ERRORS: tuple[type[Exception], ...] = () if _NO_ARGS is None else (_NO_ARGS,)


class _Group(click.Group):
    """A group whose commands all get `handle_errors`, so commands added later
    (in other modules) cannot forget it, and whose click errors are one line. Its
    subgroups in modules of their own are imported when named: `depfs parse` does not
    pay for the import of `depfs select`'s commands at every start."""

    LAZY = {"select": ("depfs.select.cli", "select")}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.LAZY and name not in self.commands:
            import importlib

            module, attr = self.LAZY[name]
            self.add_command(getattr(importlib.import_module(module), attr))
        return super().get_command(ctx, name)

    def main(self, args: Any = None, *rest: Any, **kwargs: Any) -> Any:
        # The process's own command line (`depfs ...`, `python -m depfs`), not a call
        # from another program (tests, notebooks): see `second_ctrl_c_ignored`.
        _OWN_PROCESS[0] = args is None
        return super().main(args, *rest, **kwargs)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except _HELP_ERRORS:
            raise
        except click.ClickException as err:
            raise _one_line(err) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return handle_errors(super().invoke)(ctx)
        except (_Refused, *_HELP_ERRORS):
            raise
        except click.ClickException as err:
            raise _one_line(err) from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="depfs")
@click.option("--debug", is_flag=True, help="Show the traceback of an unexpected error.")
def main(debug: bool) -> None:
    """depfs: fast feature-based dependency parsing."""
    global _DEBUG
    _DEBUG = debug
    _OUTPUTS.clear()
    _STREAMING_STDOUT[0] = False
    # (None: `2>&-`, no stderr at all; Python's own dropping of what goes there stays)
    if sys.stderr is not None and not isinstance(sys.stderr, _SurvivingStderr):
        sys.stderr = _SurvivingStderr(sys.stderr)  # type: ignore[assignment]
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)


def _check_output(
    output: str,
    others: dict[str, str | None],
    force: bool,
    option: str = "-o",
    appended: bool = False,
) -> None:
    """Refuses, before any work, an output whose folder does not exist or cannot be
    written (the temporary file goes there), and one that is the model or an input file
    (writing it would destroy it) unless `force`; an `appended` one (a search's log)
    that cannot be written. Records it for the line after Ctrl-C."""
    import os

    if not output:
        raise click.UsageError(f"{option} '': an empty path (give a file name, or - for stdout)")
    if os.path.isdir(output):  # (-o's click type refuses it too; --out-dir's outputs here)
        raise click.UsageError(f"{output}: a folder, not an output file")
    folder = os.path.dirname(os.path.realpath(output))
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise click.UsageError(f"{output}: {folder} is a file, not a folder")
    if not os.path.isdir(folder):
        raise click.UsageError(f"{output}: the folder {folder} does not exist")
    in_place = os.path.exists(output) and not os.path.isfile(output)  # a device, a FIFO
    if not in_place and not os.access(folder, os.W_OK | os.X_OK):
        raise click.UsageError(f"{output}: the folder {folder} is not writable")
    if appended and os.path.isfile(output) and not os.access(output, os.W_OK):
        # (--force cannot help: a log is appended to, never replaced)
        raise click.UsageError(
            f"{output}: the file cannot be written (its mode), and {option} is appended "
            f"to: make it writable, or give another {option}"
        )
    if os.path.isfile(output) and not force and not appended:
        # As `cp` and the shell's `>`: a file its mode protects is not replaced (root
        # may, as theirs may); found now, not after the work.
        if not os.access(output, os.W_OK):
            raise click.UsageError(
                f"{output}: the file is read-only (its mode): --force to replace it"
            )
        st, dir_st = os.stat(output), os.stat(folder)
        me = os.geteuid()
        if dir_st.st_mode & 0o1000 and me not in (0, st.st_uid, dir_st.st_uid):
            raise click.UsageError(
                f"{output}: another user's file in a sticky folder ({folder}): it cannot be "
                "replaced; write another name"
            )
    for what, path in others.items():
        if path and os.path.exists(output) and os.path.samefile(output, path) and not force:
            # (--out-dir names a folder: the output in it is the file that collides)
            which = (
                f"{option}: its output {output}" if option == "--out-dir" else f"{option} {output}"
            )
            raise click.UsageError(f"{which} is {what}: it would be overwritten (--force to do so)")
    _OUTPUTS[output] = _identity(output)


def _name_training_file(err: ValueError, files: str) -> None:
    """Fails naming `files` when `err` is a refusal of the training data, which the core
    makes without knowing the file ("no training sentence ...", "the training treebank
    leaves UPOS empty ..."); returns otherwise."""
    if str(err).startswith(("no training sentence", "the training treebank")):
        _fail(ValueError(f"{files}: {err}"))


#: What each trainer's per-epoch `train_accuracy` counts, during its online pass over
#: the training data (the words are not comparable between parsers: "train accuracy"
#: was 46 for the graph parser and 90 for arc-eager on the same data).
_TRAIN_MEASURE = {
    "graph": "train % heads right (cost-augmented decode)",
    "arc-eager": "train % moves right",
    "tagger": "train % tags right",
}

_FAMILY_OF = {
    "arc": "arc templates (the graph parser)",
    "config": "configuration templates (the arc-eager parser)",
    "token": "token templates (the tagger)",
}


def _check_templates(value: str, option: str, family: str) -> None:
    """Template text (or a set name or file) that does not parse is refused before any
    work, naming the option."""
    from . import _core
    from .templates import parse_templates, resolve_templates, template_sets

    if value in template_sets():
        other = _core.template_set_text(value)[0]
        if other != family:
            fits = [n for n in template_sets() if _core.template_set_text(n)[0] == family][:3]
            raise click.UsageError(
                f"{option} {value}: {_FAMILY_OF[other]}, not {_FAMILY_OF[family]}: "
                f"use e.g. {', '.join(fits)} (depfs templates list shows every set)"
            )
    try:
        parsed = parse_templates(resolve_templates(value), family, max_atoms=1000)
    except (DepfsError, ValueError, OSError) as e:
        if isinstance(e, OSError) and e.strerror:  # not "[Errno 13] ...: 'x'"
            raise click.UsageError(f"{option} {value}: {e.strerror}") from None
        raise click.UsageError(f"{option} {value.splitlines()[0]!r}: {e}") from None
    if not parsed:
        raise click.UsageError(
            f"{option} {value.splitlines()[0]!r}: no template in it (only comments or blank lines)"
        )


def _template_pipe(value: Any, option: str = "--templates") -> Any:
    """A template option's value, with a pipe or device (`<(depfs templates show x)`,
    `/dev/stdin`) read once into its text: the value is read again later (checked
    before the work, then trained), and a pipe gives its bytes once. Other values as
    given. Large or endless input is refused (:data:`depfs.text.MAX_LINE_BYTES`)."""
    import os

    from .files import is_stream
    from .text import MAX_LINE_BYTES

    if not isinstance(value, str) or "\n" in value or not value or not os.path.exists(value):
        return value
    if not is_stream(value):
        return value
    with open(value, "rb") as f:
        data = f.read(MAX_LINE_BYTES + 1)
    if len(data) > MAX_LINE_BYTES:
        raise click.UsageError(f"{option} {value}: more than {MAX_LINE_BYTES >> 20} MiB")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise click.UsageError(f"{option} {value}: not UTF-8 text") from None


def _finite(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """A click callback: `value` unless it is NaN or infinite (FloatRange lets NaN by)."""
    if not math.isfinite(value):
        raise click.BadParameter(f"{value!r} is not a finite number", ctx, param)
    return value


def _check_template_path(value: str | None, option: str = "--templates") -> None:
    """A template option's value that names a folder is refused; one that looks like a
    file path (a slash, or a .txt name) must be an existing file, not be read as template
    text."""
    import os

    if value and "\n" not in value and os.path.isdir(value):
        raise click.UsageError(f"{option} {value}: a folder, not a template file")
    if value and "\n" not in value and ("/" in value or value.endswith(".txt")):
        if not os.path.isfile(value):
            raise click.UsageError(f"{option} {value}: no such template file")
    import re

    from .templates import template_sets

    # A bare name is a set's or a file's (template text has `attr(address)`, or is
    # `dir` / `dist` alone): a mistyped one was read as template text.
    if value and re.fullmatch(r"[A-Za-z_][\w.-]*", value) and value not in ("dir", "dist"):
        if value in template_sets() and os.path.isfile(value):
            click.echo(
                f"depfs: note: {option} {value}: the shipped set of that name (the file "
                f"here is ./{value})",
                err=True,
            )
        elif value not in template_sets() and not os.path.isfile(value):
            raise click.UsageError(
                f"{option} {value}: no such shipped template set or file "
                "(depfs templates list shows the sets)"
            )


@main.command(short_help="Train a parser or a tagger on CoNLL-U and write the model.")
@parser_option("graph", tagger=True)
@order_option
@decoder_option
@click.option(
    "--train",
    "train_paths",
    required=True,
    multiple=True,
    type=click.Path(dir_okay=False),
    help="The training file; given more than once, the files' sentences together (e.g. "
    "jackknifed and gold tags: each sentence twice per epoch).",
)
@click.option(
    "--dev",
    "dev_path",
    type=click.Path(dir_okay=False),
    help="Dev file: UAS/LAS (tagger: tag accuracies) per epoch.",
)
@click.option(
    "-o",
    "--out",
    "out_path",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="The model file (- for stdout, when it is not a terminal).",
)
@click.option(
    "--epochs",
    type=count(1),
    default=None,
    help="Training epochs [default: the model's own: graph 10 (order 2: 8), arc-eager 17, "
    "tagger 10].",
)
@click.option(
    "--templates",
    "arc_templates",
    default=None,
    help="Templates: set name, file or text [default: first_order (graph), arc_eager, tagger].",
)
@click.option(
    "--labeler-templates",
    default=None,
    help="Graph parser: the labeler's templates, a set name, file or text [default: "
    "labeler]. Arc-eager labels with its --templates.",
)
@click.option(
    "--sibling-templates",
    default=None,
    help="Graph parser of --order 2: sibling templates, a set name, file or text "
    "[default: second_order].",
)
@click.option(
    "--max-bits",
    type=click.IntRange(6, 30),
    default=18,
    show_default=True,
    help="Graph parser: largest weight block, 2**bits rows.",
)
@click.option(
    "--keep",
    type=click.Choice(["best", "last"]),
    default="best",
    show_default=True,
    help="With --dev: keep the epoch with the best dev LAS (tagger: mean tag accuracy), "
    "or the last one.",
)
@click.option(
    "--dynamic",
    is_flag=True,
    help="Arc-eager or tagger: prefix-margin dynamic feature selection (Strubell et al. "
    "2015): every prefix of an ordered template set trained [default set: arc_eager_en_ewt, "
    "tagger_en_ewt; with --cascade arc_eager_en_ewt_full15]; parse (tag) with --margin, "
    "whose presets 'accurate' and 'fast' are chosen on --dev (without it both are the "
    "training margin).",
)
@click.option(
    "--cascade",
    "cascade",
    default=None,
    metavar="K1,K2,...",
    help="Arc-eager, with --dynamic: a cascade instead of prefix training: ordinary models of "
    "the first K1 < K2 < ... templates settle the decisions they lead by the margin, the full "
    "model the rest; 'default' is 15,40 [default order: arc_eager_en_ewt_full15].",
)
@click.option(
    "--dynfs",
    is_flag=True,
    help="Graph: dynamic feature selection (He, Daumé & Eisner 2013): the full model, then "
    "fold parsers and a lock/add policy trained by DAgger (needs --dev); parse uses it "
    "(--no-dynfs: the full model).",
)
@click.option(
    "--policy-lex/--no-policy-lex",
    default=True,
    show_default=True,
    help="With --dynfs: the policy sees the arc's acquired parsing features (He et al. "
    "2013, §5.4: group 1's, a lexical weight table) beside its meta-features.",
)
@click.option(
    "--groups",
    "groups_path",
    default=None,
    help="With --dynfs: the template groups, a groups file (depfs select groups) or set "
    "name [default: dynfs_en_ewt, with --order 2 dynfs2_en_ewt; shipped too: dynfs_pt_bosque, "
    "whose first group was ranked on pt_bosque, and dynfs_en_ewt_113 and dynfs_en_ewt_100, "
    "the first 113 (its best dev score) and 100 templates of dynfs_en_ewt's order: faster; "
    "their --no-dynfs is the model of those templates]; its first-order groups are "
    "the model's arc templates, its groups after '# order 2' the sibling templates.",
)
@click.option(
    "--folds",
    type=count(2),
    default=4,
    show_default=True,
    help="With --dynfs: DAgger folds (a parser trained on the other folds for each).",
)
@click.option(
    "--dagger-iterations",
    type=count(1),
    default=None,
    help="With --dynfs: DAgger iterations, visiting the folds in turn [default: 2 x folds].",
)
@click.option(
    "--dynfs-tolerance",
    type=click.FloatRange(min=0),
    callback=_finite,
    default=0.2,
    show_default=True,
    help="With --dynfs: the choices on dev (the policy's threshold, the margins, the labeler's "
    "stop) take the fewest templates within this many points of the full model's dev UAS "
    "(the stop: LAS); lower: slower, closer to the full model.",
)
@click.option(
    "--threads",
    type=Threads(),
    default=0,
    show_default=True,
    help="With --dynfs: threads of its parses (DAgger's folds, the choices on dev; the "
    "model is the same for any number); 0 = all cores.",
)
@click.option(
    "--tagger",
    "tagger_path",
    type=click.Path(dir_okay=False),
    help="Graph, arc-eager: a tagger model stored inside the parser's model file, so that "
    "depfs parse tags untagged input first. The parser trains on the tags of --train as "
    "they are (predicted tags: depfs jackknife); --dev is tagged by it.",
)
@click.option(
    "--clusters",
    "clusters_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Tagger, arc-eager: a Brown-cluster paths file (BITSTRING<TAB>WORD<TAB>COUNT lines, "
    "as Liang's wcluster writes), stored in the model and read by cluster templates (the "
    "default templates become depfs.tagger.CLUSTER_SETS, or the arc-eager parser's "
    "arc_eager_clusters; with --dynamic give --templates: its default orders read no "
    "cluster). docs/usage.md: how to get one.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Allow an --out path that is --train, --dev, --tagger or --clusters, or read-only.",
)
@seed_option
@click.pass_context
def train(
    ctx: click.Context,
    parser_kind: str,
    order: int,
    decoder: str,
    train_paths: tuple[str, ...],
    dev_path: str | None,
    out_path: str,
    epochs: int | None,
    arc_templates: str | None,
    labeler_templates: str | None,
    sibling_templates: str | None,
    max_bits: int,
    keep: str,
    dynamic: bool,
    cascade: str | None,
    dynfs: bool,
    groups_path: str | None,
    folds: int,
    dagger_iterations: int | None,
    dynfs_tolerance: float,
    threads: int,
    policy_lex: bool,
    tagger_path: str | None,
    clusters_path: str | None,
    force: bool,
    seed: int,
) -> None:
    """Train a parser (or a tagger) on a CoNLL-U file and write the model."""
    import os

    from . import Treebank, read_conllu
    from .arceager import ArcEagerParser
    from .base import TrainableModel
    from .errors import DepfsError
    from .graph import GraphParser
    from .tagger import Tagger

    given = {
        p: ctx.get_parameter_source(p) != click.core.ParameterSource.DEFAULT
        for p in ("order", "decoder", "max_bits", "labeler_templates", "sibling_templates")
    }
    if parser_kind != "graph" and any(given.values()):
        names = ", ".join("--" + p.replace("_", "-") for p, g in given.items() if g)
        raise click.UsageError(f"{names}: graph parser options (this is --parser {parser_kind})")
    if dynamic and parser_kind == "graph":
        raise click.UsageError("--dynamic: arc-eager or tagger only (this is --parser graph)")
    if dev_path is None and ctx.get_parameter_source("keep") != click.core.ParameterSource.DEFAULT:
        raise click.UsageError("--keep: which epoch to keep by its --dev score (give --dev)")
    stages = None
    if cascade is not None:
        if not (dynamic and parser_kind == "arc-eager"):
            raise click.UsageError("--cascade: an option of --parser arc-eager --dynamic")
        try:
            stages = True if cascade == "default" else tuple(int(k) for k in cascade.split(","))
        except ValueError:
            raise click.UsageError(
                f"--cascade: template counts K1,K2,... or 'default', got {cascade!r}"
            ) from None
    dynfs_given = [
        f"--{p.replace('_', '-')}"
        for p in (
            "groups_path",
            "folds",
            "dagger_iterations",
            "dynfs_tolerance",
            "threads",
            "policy_lex",
        )
        if ctx.get_parameter_source(p) != click.core.ParameterSource.DEFAULT
    ]
    if dynfs_given and not dynfs:
        names = ", ".join(n.replace("-path", "") for n in dynfs_given)
        raise click.UsageError(f"{names}: options of --dynfs")
    if dynfs:
        if parser_kind != "graph":
            raise click.UsageError(f"--dynfs: graph parser only (this is --parser {parser_kind})")
        if arc_templates is not None:
            raise click.UsageError("--dynfs: the arc templates are the groups' (--groups)")
        if sibling_templates is not None:
            raise click.UsageError(
                "--dynfs: the sibling templates are the groups' after '# order 2' (--groups)"
            )
        if dev_path is None:
            raise click.UsageError("--dynfs: the policy is chosen on --dev: give one")
        if decoder == "cle":
            raise click.UsageError(
                "--dynfs --decoder cle: DynFS ends with a projective Eisner round (He et al. "
                "2013, §4.2), so its full model is the projective one: leave out --decoder"
            )
        _check_template_path(groups_path, "--groups")
        if groups_path is not None and "\n" not in groups_path:
            from .templates import template_sets

            if groups_path not in template_sets() and not os.path.isfile(groups_path):
                named = f"--groups {groups_path}" if groups_path.strip() else "--groups ''"
                raise click.UsageError(
                    f"{named}: no such set or file (shipped groups: "
                    "dynfs_en_ewt, dynfs2_en_ewt, dynfs_pt_bosque, dynfs_en_ewt_113, "
                    "dynfs_en_ewt_100; or a file of "
                    "`depfs select groups`)"
                )
        # The groups file read before training: its errors, and a section the order
        # lacks or does not use, named with --groups.
        from .dynamic.he2013 import (
            DEFAULT_GROUPS,
            DEFAULT_GROUPS_2,
            has_sibling_groups,
            load_groups,
        )

        given = groups_path or (DEFAULT_GROUPS_2 if order == 2 else DEFAULT_GROUPS)
        try:
            n_first = len(load_groups(given))
            siblings = has_sibling_groups(given)
        except (DepfsError, ValueError, OSError) as e:
            raise click.UsageError(f"--groups: {e}") from None  # (the error names the file)
        given = given if "\n" not in given else "<template text>"
        if order != 2 and n_first < 2:
            raise click.UsageError(
                f"--groups {given}: one group: first-order DynFS needs at least two (the "
                "policy decides whether to add the next; with one, every template is computed "
                "on every arc: train without --dynfs)"
            )
        if order != 2 and siblings:
            raise click.UsageError(
                f"--groups {given}: its groups after '# order 2' are sibling "
                "templates: give --order 2 (or a groups file without them, such as "
                "dynfs_en_ewt)"
            )
        if order == 2 and not siblings:
            raise click.UsageError(
                f"--groups {given}: no sibling groups (a '# order 2' section after the "
                "first-order groups): --order 2 needs them, as in dynfs2_en_ewt"
            )
    if tagger_path is not None and parser_kind == "tagger":
        raise click.UsageError("--tagger: graph and arc-eager parsers only (this is a tagger)")
    if clusters_path is not None and parser_kind not in ("tagger", "arc-eager"):
        raise click.UsageError(
            "--clusters: --parser tagger or arc-eager only (graph templates read no clusters; "
            "a parser's --tagger is a trained tagger, its cluster table inside)"
        )
    if clusters_path is not None and dynamic and arc_templates is None:
        from .arceager import CASCADE_TEMPLATES

        default = "tagger_en_ewt"
        if parser_kind == "arc-eager":
            default = CASCADE_TEMPLATES if cascade is not None else "arc_eager_en_ewt"
        raise click.UsageError(
            f"--clusters {clusters_path} --dynamic: the dynamic default order ({default}) "
            "reads no cluster: give --templates, an order with cluster(...) templates"
        )
    if order == 2 and decoder == "cle":
        raise click.UsageError("--decoder cle is first-order only (order 2 decodes with Eisner2)")
    if sibling_templates is not None and order != 2:
        raise click.UsageError("--sibling-templates: second-order graph parser only (--order 2)")
    arc_templates = _template_pipe(arc_templates, "--templates")
    labeler_templates = _template_pipe(labeler_templates, "--labeler-templates")
    sibling_templates = _template_pipe(sibling_templates, "--sibling-templates")
    for option, value, family in (
        ("--templates", arc_templates, "config" if parser_kind == "arc-eager" else "arc"),
        ("--labeler-templates", labeler_templates, "arc"),
        ("--sibling-templates", sibling_templates, "arc"),
    ):
        if value is not None and not value.strip():
            raise click.UsageError(f"{option} is empty")
        _check_template_path(value, option)
        if value is not None:
            _check_templates(value, option, "token" if parser_kind == "tagger" else family)
    for option, path in [*(("--train", p) for p in train_paths), ("--dev", dev_path)]:
        if path == "-":  # (`-` is stdin for parse, tag, stats and eval)
            raise click.UsageError(f"{option} -: training reads files, not stdin (give a file)")
    trains = {f"the --train file {p}": p for p in train_paths}
    if len(train_paths) == 1:
        trains = {"the --train file": train_paths[0]}
    if out_path == "-":
        if sys.stdout.isatty():
            raise click.UsageError(
                "-o -: stdout is a terminal, and a model file is binary: redirect it "
                "(> FILE) or give a file name"
            )
    else:
        _check_output(
            out_path,
            {
                **trains,
                "the --dev file": dev_path,
                "the --tagger": tagger_path,
                "the --clusters file": clusters_path,
                **{
                    f"the {option} file": value
                    for option, value in (
                        ("--templates", arc_templates),
                        ("--labeler-templates", labeler_templates),
                        ("--sibling-templates", sibling_templates),
                        ("--groups", groups_path),
                    )
                    if value is not None and os.path.isfile(value)
                },
            },
            force,
            "--out",
        )
    try:
        from .pipeline import _tagger

        own_tagger = None if tagger_path is None else _tagger(tagger_path)
        # Several roots in a sentence are no reason to refuse a whole file: a tagger never
        # reads HEAD, and a parser's training skips such a sentence with a note (as `fit`).
        roots = True
        train_tb = read_conllu(train_paths[0], multiple_roots=roots)
        if len(train_paths) > 1:  # one treebank, the files' sentences in order
            more = (read_conllu(p, multiple_roots=roots) for p in train_paths[1:])
            train_tb = Treebank.concat([train_tb, *more])
        dev_tb = read_conllu(dev_path, multiple_roots=roots) if dev_path else None
        if dynfs and folds > len(train_tb):  # refused before the full models are trained
            n = len(train_tb)
            raise click.UsageError(
                f"--folds {folds}: needs at least {folds} training sentences (one a fold), "
                f"and the training data has {n} sentence{'s' if n != 1 else ''}"
            )
        parser: TrainableModel
        if parser_kind == "tagger":
            parser = Tagger(
                arc_templates, random_state=seed, dynamic=dynamic, clusters=clusters_path
            )
        elif parser_kind == "arc-eager":
            parser = ArcEagerParser(
                arc_templates,
                random_state=seed,
                dynamic=dynamic,
                cascade=stages,
                tagger=own_tagger,
                clusters=clusters_path,
            )
            if stages:  # checked against the template set before any training
                try:
                    parser._stages()
                except ValueError as e:
                    msg = str(e).replace("cascade must be", "must be").split(", got")[0]
                    if cascade == "default":  # say what it stands for
                        from .arceager import CASCADE_STAGES

                        msg = f"({','.join(map(str, CASCADE_STAGES))}) {msg}"
                    raise click.UsageError(f"--cascade {cascade}: {msg}") from None
        else:
            parser = GraphParser(
                order=order,
                decoder=decoder,
                arc_templates=arc_templates or "first_order",
                labeler_templates=labeler_templates or "labeler",
                sibling_templates=sibling_templates or "second_order",
                max_bits=max_bits,
                random_state=seed,
                tagger=own_tagger,
                dynfs=dynfs,
                groups=groups_path,
                folds=folds,
                dagger_iterations=dagger_iterations,
                dynfs_tolerance=dynfs_tolerance,
                policy_lex=policy_lex,
            )
        if epochs is not None:
            parser.epochs = epochs
        with progress(parser.epochs, "training") as bar:

            def report(row: dict[str, float]) -> None:
                bar.update(1)
                dev = ""
                if parser._dev_key in row:
                    dev = " " + parser._dev_label(row).split(" ", 1)[1]
                above_bar(
                    bar,
                    f"  epoch {int(row['epoch'])}: {_TRAIN_MEASURE[parser_kind]}"
                    f" {100 * row['train_accuracy']:.2f} ({row['seconds']:.1f}s){dev}",
                )

            import warnings

            files = " + ".join(train_paths)
            kw: dict[str, Any] = {"dev": dev_tb, "keep": keep, "on_epoch": report}
            if isinstance(parser, GraphParser) and dynfs:
                kw["report"] = lambda line: above_bar(bar, line)
                kw["threads"] = threads
            with warnings.catch_warnings():  # a note (sentences skipped) is one line
                warnings.simplefilter("always")
                warnings.showwarning = lambda message, *_a, **_k: above_bar(
                    bar, f"depfs: note: {files}: {message}"
                )
                try:
                    parser.fit(train_tb, **kw)
                except ValueError as e:  # fit's refusals of a dev set or tagger: named
                    for what, path in (("dev", dev_path), ("tagger", tagger_path)):
                        if str(e).startswith(f"{what}: "):
                            msg = str(e).removeprefix(f"{what}: ")
                            raise type(e)(f"--{what} {path}: {msg}") from None
                    raise
            parser.train_info_["file"] = files
    except ValueError as e:
        _name_training_file(e, " + ".join(train_paths))
        raise
    try:
        if dev_tb is not None:
            kept = parser.history_[parser.best_epoch_ - 1]
            label = parser._dev_label(kept).split(" ", 1)[1]
            click.echo(f"kept epoch {parser.best_epoch_} ({label})", err=True)
        r = getattr(parser, "dynfs_result_", None)
        if r is not None:
            click.echo(
                f"dynfs: policy of DAgger iteration {r.iteration}, threshold {r.threshold:g}"
                + (f", prune margin {r.prune_margin:g}" if r.prune_margin is not None else "")
                + (f", tree margin {r.tree_margin:g}" if r.tree_margin is not None else "")
                + (f", label margin {r.label_margin:g}" if r.label_margin is not None else "")
                + (" with its label dictionary" if getattr(r, "label_dict", False) else "")
                + ": "
                f"dev UAS {r.dev_uas:.2f} (full model {r.full_dev_uas:.2f}) at "
                f"{r.dev_cost:.1f}% of the templates; expert {r.expert_dev_uas:.2f} at "
                f"{r.expert_dev_cost:.1f}% (fold parsers and DAgger {r.seconds:.0f} s, the "
                f"choices on dev {r.choice_seconds:.0f} s)",
                err=True,
            )
        for row in getattr(parser, "margin_curve_", []):
            click.echo(f"  margin {row['margin']:g}: dev {_margin_row(row)}", err=True)
        if dynamic and isinstance(parser, (ArcEagerParser, Tagger)):
            p = parser.margin_presets_ or {}
            click.echo(
                f"margins: accurate {p.get('accurate', 0):g}, fast {p.get('fast', 0):g}"
                f" (trained at {p.get('train', 0):g}"
                + (
                    "; no --dev to choose them on: both the training margin)"
                    if dev_tb is None
                    else ")"
                ),
                err=True,
            )
        if out_path == "-":
            _model_to_stdout(parser)
        else:
            parser.save(out_path)
    except (DepfsError, OSError, ValueError) as e:
        _fail(e)
    inside = f" (with the tagger {tagger_path} inside)" if tagger_path else ""
    click.echo(f"wrote {'the model to stdout' if out_path == '-' else out_path}{inside}", err=True)


def _model_to_stdout(model: Any) -> None:
    """`-o -`: the model file (saved in a temporary folder, removed after) on stdout.
    O(model size)."""
    from .base import model_file_bytes

    sys.stdout.buffer.write(model_file_bytes(model.save))
    sys.stdout.buffer.flush()


@main.command(short_help="Parse CoNLL-U or text files (stdin) with a parser model.")
@click.argument("model", type=click.Path(dir_okay=False))
@click.argument("inputs", nargs=-1, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Output file of one input; - or none: stdout.",
)
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False),
    help="Folder for the outputs of several inputs (same file names).",
)
@click.option("--threads", type=Threads(), default=0, show_default=True, help="0 = all cores.")
@click.option(
    "--allow-missing-tags",
    is_flag=True,
    help="Parse input that lacks tag columns the model was trained on (a poor parse).",
)
@click.option(
    "--force", is_flag=True, help="Allow an output path that is the model, the input or read-only."
)
@click.option(
    "--batch-size",
    type=count(1),
    default=5000,
    show_default=True,
    help="Sentences read, parsed and written at a time (memory stays bounded on any file).",
)
@click.option(
    "--scheduler",
    callback=scheduler_address,
    help="Spread the inputs over a Dask cluster: a scheduler address, or 'local'.",
)
@click.option("--workers", type=count(1), help="With --scheduler local: worker processes.")
@click.option(
    "--chunk-sentences",
    type=count(1),
    default=None,
    help="With --scheduler: a plain CoNLL-U file of more sentences is parsed in chunks of "
    "this many whole sentences spread over the workers, written in order (at least the "
    "first batch: 1000 or --batch-size) [default: 20000].",
)
@click.option(
    "--scores",
    is_flag=True,
    help="Write each word's margin (how far its head won) to MISC as Margin=x.",
)
@click.option(
    "--margin",
    type=MarginType(),
    default=None,
    help="Arc-eager: stop each decision once a move leads by this margin (Strubell et al. "
    "2015): 'accurate' or 'fast' (a dynamic model's presets, chosen on its dev set; default "
    "'accurate'), 'inf' for every template, or a number in the model's own score units, "
    "which differ from model to model (depfs info MODEL shows its presets). The parser's "
    "margin: a tagger (--tagger, or one inside the model) tags at its own default.",
)
@click.option(
    "--no-dynfs",
    is_flag=True,
    help="A graph model trained with --dynfs: parse with the full model instead.",
)
@click.option(
    "--policy-threshold",
    type=float,
    default=None,
    help="A graph model trained with --dynfs: the lock/add boundary of its policy (higher: "
    "fewer locks, slower, more accurate) [default: the one chosen on dev].",
)
@click.option(
    "--prune-margin",
    type=float,
    default=None,
    help="A graph model trained with --dynfs: rule out an added word's arcs more than this "
    "below its best (lower: faster, less accurate; 'inf': none) [default: the model's].",
)
@click.option(
    "--tree-margin",
    type=float,
    default=None,
    help="A graph model trained with --dynfs: after round 1, rule out every arc whose best "
    "tree is more than this below the best tree (lower: faster, less accurate; 'inf': none) "
    "[default: the model's].",
)
@click.option(
    "--label-margin",
    type=float,
    default=None,
    help="A graph model trained with --dynfs: keep a word's label once the best leads by "
    "this margin (lower: faster, fewer right labels; 'inf': the full model's labeler; a "
    "finite margin runs the stop's own prefix-trained labeler when the model has one, so "
    "a huge margin is not 'inf') [default: the model's].",
)
@click.option(
    "--no-label-dict",
    is_flag=True,
    help="A graph model trained with --dynfs whose labeler's stop has a label dictionary: "
    "score every label, not only those seen in training for the arc's tags and direction.",
)
@click.option(
    "--tagger",
    "tagger_path",
    type=click.Path(dir_okay=False),
    help="Tag each batch with this tagger model first, then parse (untagged input). Tags "
    "already in the input are overwritten in the columns the tagger predicts.",
)
@input_option
@tokenizer_option
@click.pass_context
def parse(
    ctx: click.Context,
    model: str,
    inputs: tuple[str, ...],
    output: str | None,
    out_dir: str | None,
    threads: int,
    allow_missing_tags: bool,
    force: bool,
    batch_size: int,
    scheduler: str | None,
    workers: int | None,
    chunk_sentences: int | None,
    scores: bool,
    margin: float | str | None,
    no_dynfs: bool,
    policy_threshold: float | None,
    prune_margin: float | None,
    tree_margin: float | None,
    label_margin: float | None,
    no_label_dict: bool,
    tagger_path: str | None,
    input_format: str | None,
    tokenizer: str | None,
) -> None:
    """Parse INPUTS (CoNLL-U or text files, gzipped or not; stdin when none) with MODEL.

    A file is streamed: read, parsed and written BATCH_SIZE sentences at a time, the
    output the same bytes as a whole-file parse; an output file appears only once
    complete. Several inputs go to --out-dir, one after the other or, with --scheduler,
    spread over a Dask cluster (each worker loads the model once; a CoNLL-U file of
    more than --chunk-sentences sentences goes in chunks of whole sentences).

    With --tagger, each batch is tagged, then parsed. A MODEL trained with a tagger
    inside (depfs train --tagger) tags input that leaves its tag columns empty first,
    and says so in a note; tagged input is parsed with its own tags.

    Text input (--input horizontal or vertical, or detected; raw text with --tokenizer)
    has words only: the output is CoNLL-U with sent_id and text comments, and a model
    that reads tags needs --tagger (or a tagger inside)."""
    import os

    from ._core import model_kind
    from .pipeline import _model, _tagger, parse_file

    if output == "-":
        output = None
    if inputs == ("-",):
        inputs = ()  # `-` is stdin, as `-o -` is stdout
    _check_tokenizer(input_format, tokenizer)
    # The kind from the file's header: the model itself is loaded by the parse, beside the
    # first batches' reading (pipeline.parse_file), unless an option needs it first.
    from .models import check_model_file

    check_model_file(model)
    kind = model_kind(model, checked=False)  # the load checks the rest of the file
    if kind == "tagger":
        raise click.UsageError(
            f"{model} is a tagger, not a parser: depfs tag {model} INPUT tags a file "
            "(depfs parse --tagger TAGGER parses with it)"
        )
    if tagger_path is not None:
        _tagger(tagger_path)  # refused here, before any work, when it is not a tagger
    if margin is not None and kind != "arc-eager":
        raise click.UsageError(f"--margin: arc-eager models only ({model} holds a {kind} model)")
    if margin in ("accurate", "fast") and _model(model).margin_presets_ is None:
        raise click.UsageError(
            f"--margin {margin}: a preset of dynamic models; {model} was trained without "
            "--dynamic (give a number, or inf)"
        )
    knobs: dict[str, Any] = {"margin": margin}
    dyn_knobs = {
        "--policy-threshold": policy_threshold,
        "--prune-margin": prune_margin,
        "--tree-margin": tree_margin,
        "--label-margin": label_margin,
        "--no-label-dict": False if no_label_dict else None,
    }
    given = [flag for flag, v in dyn_knobs.items() if v is not None]
    has_dynfs = (
        kind == "graph"
        and (no_dynfs or bool(given) or scores)
        and getattr(_model(model).model_, "dynfs", None) is not None
    )
    if no_dynfs or given:
        if not has_dynfs:
            flag = "--no-dynfs" if no_dynfs else given[0]
            raise click.UsageError(f"{flag}: {model} was not trained with --dynfs")
        if no_dynfs and given:
            what = " and ".join(given)
            raise click.UsageError(
                f"{what}: {'knobs' if len(given) > 1 else 'a knob'} of the dynamic parse, "
                "which --no-dynfs turns off (give one or the other)"
            )
        if no_label_dict and label_margin == math.inf:
            raise click.UsageError(
                "--no-label-dict: the label dictionary serves the labeler's stop, which "
                "--label-margin inf turns off (give one or the other)"
            )
        core = _model(model).model_
        if no_label_dict and getattr(core, "dynfs_label_dict", None) is None:
            from .graph import _no_label_dict

            raise click.UsageError(f"--no-label-dict: {model}: {_no_label_dict(core)}")
        from .base import F32_MAX

        if policy_threshold is not None and not abs(policy_threshold) <= F32_MAX:
            raise click.UsageError(
                f"--policy-threshold {policy_threshold}: a finite number within "
                f"±{F32_MAX:.4g} (a 32-bit float)"
            )
        if prune_margin is not None and not prune_margin >= 0:
            raise click.UsageError(f"--prune-margin {prune_margin}: a number >= 0, or inf")
        if tree_margin is not None and not tree_margin >= 0:
            raise click.UsageError(f"--tree-margin {tree_margin}: a number >= 0, or inf")
        if label_margin is not None and not label_margin >= 0:
            raise click.UsageError(f"--label-margin {label_margin}: a number >= 0, or inf")
        knobs.update(
            dynfs=not no_dynfs,
            threshold=policy_threshold,
            prune_margin=prune_margin,
            tree_margin=tree_margin,
            label_margin=label_margin,
            label_dict=False if no_label_dict else None,
        )
    if scores and has_dynfs and not no_dynfs:
        raise click.UsageError("--scores: margins come from the full model; add --no-dynfs")
    if scheduler and ctx.get_parameter_source("threads") != click.core.ParameterSource.DEFAULT:
        raise click.UsageError(
            "--threads: with --scheduler each task parses on one thread of its worker "
            "(the workers are the parallelism: --workers with --scheduler local)"
        )
    if workers is not None and scheduler != "local":
        raise click.UsageError("--workers: the worker processes of --scheduler local")
    if chunk_sentences is not None and not scheduler:
        raise click.UsageError("--chunk-sentences: chunks are spread over --scheduler")
    if len(inputs) > 1 or out_dir or scheduler:
        if not out_dir or output:
            if out_dir:
                raise click.UsageError(
                    "-o and --out-dir: give one (-o FILE for one input, --out-dir D to write "
                    "each input to D under its own name)"
                )
            why = "several inputs" if len(inputs) > 1 else "--scheduler"
            raise click.UsageError(
                f"{why}: give --out-dir D (each input is written to D under its own name)"
                + (", not -o" if output else "")
            )
        if not inputs:
            raise click.UsageError(
                "--out-dir and --scheduler take INPUTS files (stdin is parsed to stdout)"
            )
        if not os.path.isdir(out_dir):
            raise click.UsageError(f"--out-dir {out_dir}: no such folder")
        for inp in inputs:  # all of them before the first is parsed and written
            if not os.path.exists(inp):
                raise click.UsageError(f"{inp}: no such file (nothing was parsed)")
            if os.path.isdir(inp):
                raise click.UsageError(f"{inp}: a folder, not an input file")
        from .pipeline import is_stream

        for inp in inputs:
            if is_stream(inp):
                raise click.UsageError(
                    f"{inp} is a pipe: --out-dir and --scheduler take files (give a pipe "
                    "alone, with -o, or as stdin)"
                )
        pairs = [(i, os.path.join(out_dir, os.path.basename(i))) for i in inputs]
        for inp, out in pairs:
            others = {"the model": model, "the input": inp, "the --tagger model": tagger_path}
            _check_output(out, others, force, option="--out-dir")
        seen: dict[str, str] = {}
        for inp, out in pairs:
            if out in seen:
                raise click.UsageError(
                    f"{seen[out]} and {inp} have the same file name: their outputs would "
                    f"collide in {out}"
                )
            seen[out] = inp
        _parse_many(
            model,
            pairs,
            threads,
            batch_size,
            allow_missing_tags,
            scheduler,
            workers,
            knobs,
            tagger_path,
            input_format,
            tokenizer,
            chunk_sentences,
            scores,
        )
        return
    if output is not None:
        others = {
            "the model": model,
            "the input": inputs[0] if inputs else None,
            "the --tagger model": tagger_path,
        }
        _check_output(output, others, force)
    if inputs:
        fmt = _input_format(inputs[0], input_format, tokenizer)
        done = parse_file(
            model,
            inputs[0],
            output,
            threads=threads,
            batch_size=batch_size,
            allow_missing_tags=allow_missing_tags,
            scores=scores,
            knobs=knobs,
            out=None if output else _stdout(),
            tagger_path=tagger_path,
            input_format=fmt,
            tokenizer=tokenizer,
            on_note=_note_now(inputs[0]),
        )
    else:
        done = _stdin(
            _model(model),
            input_format,
            tokenizer,
            batch_size,
            output,
            threads=threads,
            allow_missing_tags=allow_missing_tags,
            scores=scores,
            knobs=knobs,
            tagger=None if tagger_path is None else _tagger(tagger_path),
        )
    for note in done.notes:
        click.echo(f"depfs: note: {note}", err=True)


def _check_tokenizer(input_format: str | None, tokenizer: str | None) -> None:
    """--tokenizer reads raw text (not with --input); made here, before any work, so
    that a missing spaCy or a bad value is one line."""
    if tokenizer is None:
        return
    if input_format is not None:
        raise click.UsageError(f"--tokenizer reads raw text: leave out --input {input_format}")
    from .pipeline import _tokenizer

    try:
        _tokenizer(tokenizer)
    except ImportError as e:
        _fail(e)


def _input_format(path: str, input_format: str | None, tokenizer: str | None) -> str | None:
    """The format of the file at `path`: given, or detected (and said when not CoNLL-U)."""
    from .pipeline import detect_input, detected_note, is_stream

    if input_format is not None or tokenizer is not None or is_stream(path):
        return input_format  # a pipe is detected as it is read (the note comes then)
    fmt = detect_input(path)
    if fmt != "conllu":
        click.echo(f"depfs: note: {path}: {detected_note(fmt)}", err=True)
    return fmt


def _stdin(
    model: Any,
    input_format: str | None,
    tokenizer: str | None,
    batch_size: int,
    output: str | None,
    **kw: Any,
) -> Any:
    """Parses (or tags) stdin as it comes, `batch_size` sentences at a time, to `output`
    (written atomically, as a file input's parse) or stdout (None): its format given or
    detected (and said)."""
    import contextlib

    from .pipeline import _output_stream, detected_note, parse_stream, stream_batches

    # A reader of its own over fd 0, not sys.stdin's: after Ctrl-C or SIGTERM, the
    # reading thread may stay blocked in it (stdin idle), and the interpreter's exit
    # would wait for sys.stdin's lock to close it, then abort. (A stdin that is no
    # file, as a test's, is read as it is.)
    try:
        stdin: Any = open(sys.stdin.fileno(), "rb", closefd=False)  # noqa: SIM115
    except (OSError, ValueError):
        stdin = sys.stdin.buffer
    batches, fmt = stream_batches(stdin, input_format, tokenizer=tokenizer, batch_size=batch_size)
    if input_format is None and tokenizer is None and fmt != "conllu":
        click.echo(f"depfs: note: <stdin>: {detected_note(fmt)}", err=True)
    with contextlib.ExitStack() as stack:
        out = _stdout() if output is None else stack.enter_context(_output_stream(output))
        return parse_stream(
            model, batches, out, input_format=fmt, on_note=_note_now("<stdin>"), **kw
        )


@main.command(short_help="Tag CoNLL-U or text (stdin) with a tagger model.")
@click.argument("model", type=click.Path(dir_okay=False))
@click.argument("input", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Output file; - or none: stdout.",
)
@click.option("--threads", type=Threads(), default=0, show_default=True, help="0 = all cores.")
@click.option(
    "--force", is_flag=True, help="Allow an output path that is the model, the input or read-only."
)
@click.option(
    "--batch-size",
    type=count(1),
    default=5000,
    show_default=True,
    help="Sentences read, tagged and written at a time.",
)
@click.option(
    "--margin",
    type=MarginType(),
    default=None,
    help="Stop each column decision once a class leads by this margin (Strubell et al. "
    "2015): 'accurate' or 'fast' (a dynamic tagger's presets, chosen on its dev set; default "
    "'accurate'), 'inf' for every template, or a number in the model's own score units, "
    "which differ from model to model (depfs info MODEL shows its presets).",
)
@input_option
@tokenizer_option
def tag(
    model: str,
    input: str | None,
    output: str | None,
    threads: int,
    force: bool,
    batch_size: int,
    margin: float | str | None,
    input_format: str | None,
    tokenizer: str | None,
) -> None:
    """Tag INPUT (CoNLL-U or text, gzipped or not; stdin when none) with the tagger MODEL
    (a tagger file, or a parser's with a tagger inside): UPOS, XPOS, FEATS and LEMMA
    predicted (those the tagger learnt), other columns kept. Text input: as depfs parse."""
    from ._core import model_kind
    from .errors import ModelError
    from .pipeline import _tagger, parse_file

    if output == "-":
        output = None
    if input == "-":
        input = None  # stdin, as `-o -` is stdout
    _check_tokenizer(input_format, tokenizer)
    try:
        tagger = _tagger(model)
    except ModelError as e:
        raise click.UsageError(f"{e}: depfs tag needs a tagger") from None
    if margin in ("accurate", "fast") and tagger.margin_presets_ is None:
        whose = model if model_kind(model) == "tagger" else f"the tagger inside {model}"
        raise click.UsageError(
            f"--margin {margin}: a preset of dynamic models; {whose} was trained without "
            "--dynamic (give a number, or inf)"
        )
    if output is not None:
        _check_output(output, {"the model": model, "the input": input}, force)
    if input is not None:
        done = parse_file(
            model,
            input,
            output,
            threads=threads,
            batch_size=batch_size,
            knobs={"margin": margin},
            out=None if output else _stdout(),
            tag_only=True,
            input_format=_input_format(input, input_format, tokenizer),
            tokenizer=tokenizer,
            on_note=_note_now(input),
        )
    else:
        done = _stdin(
            tagger,
            input_format,
            tokenizer,
            batch_size,
            output,
            threads=threads,
            knobs={"margin": margin},
        )
    for note in done.notes:  # as depfs parse says them
        click.echo(f"depfs: note: {note}", err=True)


@main.command(short_help="Predict the tags of --train by k-fold jackknifing.")
@click.option("--train", "train_path", required=True, type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="The jackknifed file (- for stdout; gzip when it ends in .gz).",
)
@click.option(
    "--folds",
    type=count(2),
    default=10,
    show_default=True,
    help="Contiguous blocks of sentences; each is tagged by a tagger trained on the others.",
)
@click.option(
    "--templates", default=None, help="Tagger templates (default: the tagger's per-column sets)."
)
@click.option(
    "--clusters",
    "clusters_path",
    type=click.Path(exists=True, dir_okay=False),
    help="A Brown-cluster paths file for the taggers (as depfs train --parser tagger --clusters).",
)
@click.option("--epochs", type=count(1), default=10, show_default=True)
@click.option("--threads", type=Threads(), default=1, show_default=True, help="0 = all cores.")
@click.option("--force", is_flag=True, help="Allow an output path that is the input or read-only.")
@seed_option
def jackknife(
    train_path: str,
    output: str,
    folds: int,
    templates: str | None,
    clusters_path: str | None,
    epochs: int,
    threads: int,
    force: bool,
    seed: int,
) -> None:
    """Write --train with UPOS, XPOS, FEATS and LEMMA predicted by jackknifing: fold k of
    --folds is tagged by a tagger trained on the other folds, so a parser trained on the
    output sees the tags it will see at parse time (Strubell et al. 2015: 10 folds).
    Other columns and comments are kept as they are (the file is written with LF line
    ends and without a byte-order mark)."""
    import gzip
    import os

    from . import read_conllu
    from .files import atomic_stream
    from .jackknifing import fold_bounds, jackknife

    templates = _template_pipe(templates)
    if templates is not None:
        _check_template_path(templates)
        _check_templates(templates, "--templates", "token")
    if output != "-":
        others = {"the input": train_path, "the --clusters file": clusters_path}
        if templates is not None and os.path.isfile(templates):
            others["the --templates file"] = templates
        _check_output(output, others, force)
    treebank = read_conllu(train_path, multiple_roots=True)  # (taggers never read HEAD)
    try:
        fold_bounds(len(treebank), folds)  # too many folds: refused before any training
    except ValueError as e:
        raise ValueError(f"{train_path}: --folds {folds}: {e}") from None
    with progress(folds * epochs, f"fold 1/{folds}") as bar:

        def report(fold: int, row: dict[str, float]) -> None:
            bar.label = f"fold {fold}/{folds}"
            bar.update(1)

        try:
            tagged = jackknife(
                treebank,
                folds,
                templates=templates,
                clusters=clusters_path,
                epochs=epochs,
                random_state=seed,
                threads=threads,
                on_epoch=report,
            )
        except ValueError as e:
            _name_training_file(e, train_path)
            raise
    data = tagged.to_bytes()
    if output == "-":
        out = _WholeWrites(sys.stdout.buffer)
        out.write(data)
        out.flush()
    else:
        with atomic_stream(output) as f:
            if output.endswith(".gz"):
                with gzip.GzipFile(fileobj=f, mode="wb", mtime=0) as gz:
                    gz.write(data)
            else:
                f.write(data)
        click.echo(f"wrote {output} ({len(tagged)} sentences, {folds} folds)", err=True)


def _absolute(path: str | None) -> Any:
    import os

    return None if path is None else os.path.abspath(path)


def _parse_many(
    model: str,
    pairs: list[tuple[str, str]],
    threads: int,
    batch_size: int,
    allow: bool,
    scheduler: str | None,
    workers: int | None,
    knobs: dict[str, Any],
    tagger_path: str | None = None,
    input_format: str | None = None,
    tokenizer: str | None = None,
    chunk_sentences: int | None = None,
    scores: bool = False,
) -> None:
    """Several files: one after the other here, or spread over a Dask cluster (a large
    CoNLL-U file in chunks); each file's format is given or detected (said in a note
    when not CoNLL-U). The progress bar counts words: per batch here, per file or
    chunk from a cluster."""
    import concurrent.futures as cf
    import os

    from .pipeline import CHUNK_SENTENCES, count_words, parse_files
    from .select.engine import close_dask, dask_executor

    executor: cf.Executor
    client = None
    if scheduler:
        executor, client = dask_executor(scheduler, workers)
    else:
        executor = cf.ThreadPoolExecutor(1)  # in order, with all the threads for each file
    try:
        total = 0
        if sys.stderr is not None and sys.stderr.isatty():  # words are counted for the bar only
            total = sum(count_words(i, input_format, tokenizer) for i, _ in pairs)
        with progress(total, f"parsing {len(pairs)} files (words)") as bar:

            def done(p: Any) -> None:
                for note in p.notes:
                    click.echo(f"depfs: note: {p.input}: {note}", err=True)

            if scheduler:
                if scheduler != "local":
                    # A remote worker opens paths in its own folder: give it this one's.
                    model, tagger_path = _absolute(model), _absolute(tagger_path)
                    pairs = [(os.path.abspath(i), os.path.abspath(o)) for i, o in pairs]
                parse_files(
                    model,
                    pairs,
                    executor,
                    batch_size=batch_size,
                    allow_missing_tags=allow,
                    scores=scores,
                    knobs=knobs,
                    on_done=done,
                    on_words=bar.update,
                    tagger_path=tagger_path,
                    input_format=input_format,
                    tokenizer=tokenizer,
                    chunk_sentences=chunk_sentences or CHUNK_SENTENCES,
                )
            else:
                from .pipeline import model_stamps, parse_file

                stamps = model_stamps(model, tagger_path)  # one model for every file
                for inp, out in pairs:
                    done(
                        parse_file(
                            model,
                            inp,
                            out,
                            threads=threads,
                            batch_size=batch_size,
                            allow_missing_tags=allow,
                            scores=scores,
                            knobs=knobs,
                            tagger_path=tagger_path,
                            input_format=input_format,
                            tokenizer=tokenizer,
                            on_batch=bar.update,
                            stamps=stamps,
                        )
                    )
    finally:
        if client is not None:
            close_dask(executor, client)
        executor.shutdown()


def _preset_rows(
    presets: dict[str, float], curve: list[dict[str, Any]]
) -> dict[str, dict[str, Any]] | None:
    """The dev curve's row of each preset (`accurate`, `fast`), or None if one has none. The
    model keeps a margin as a 32-bit float: the curve's 6600.000000000001 is 6600 there."""
    rows = {
        n: next((r for r in curve if math.isclose(r["margin"], presets[n], rel_tol=1e-6)), None)
        for n in ("accurate", "fast")
    }
    return None if None in rows.values() else cast(dict[str, dict[str, Any]], rows)


def _margin_row(row: dict[str, Any]) -> str:
    """One margin of a dynamic model's dev sweep: its score and templates per decision."""
    if "las" in row:
        return f"LAS {row['las']:.2f} at {row['move_templates']:.1f} templates per move decision"
    return f"accuracy {row['accuracy']:.2f} at {row['templates']:.1f} templates per decision"


@main.group()
def templates() -> None:
    """Inspect the shipped template sets."""


@templates.command("list")
def templates_list() -> None:
    """List the shipped template sets."""
    from . import _core
    from .templates import parse_templates, template_sets

    for name in template_sets():
        family, text = _core.template_set_text(name)
        n = len(parse_templates(text, family, max_atoms=1000))
        click.echo(f"{name}\t{family}\t{n} templates")


@templates.command("show")
@click.argument("name")
@click.option("--canonical", is_flag=True, help="Print canonical forms with ids and costs.")
def templates_show(name: str, canonical: bool) -> None:
    """Print a shipped template set (or a template file) NAME."""
    import os

    from . import _core
    from .errors import DepfsError
    from .templates import FAMILIES, parse_templates, resolve_templates, template_sets

    piped = _template_pipe(name, "NAME")  # (the same value unless NAME is a pipe)
    try:
        if piped is not name:
            shipped, text = False, piped
        else:
            shipped = name in template_sets()
            if not shipped and os.path.isdir(name):
                raise ValueError(f"{name}: a folder, not a template file")
            if not shipped and not os.path.isfile(name):
                known = ", ".join(template_sets())
                raise ValueError(f"{name}: no such template set or file (sets: {known})")
            text = resolve_templates(name)
        if shipped:
            families = [_core.template_set_text(name)[0]]
        else:  # a file: the first family its templates parse in (else it is refused)
            families = list(FAMILIES)
        errors: list[ValueError] = []
        for family in families:
            try:
                parsed = parse_templates(text, family, max_atoms=1000)
                break
            except ValueError as e:
                errors.append(e)
        else:  # the family that read furthest names the line at fault
            import re

            def line(e: ValueError) -> int:
                m = re.search(r"\(line (\d+)\)", str(e))
                return int(m.group(1)) if m else 0

            raise ValueError(f"{name}: not a template file ({max(errors, key=line)})")
        if not canonical:
            click.echo(text if text.endswith("\n") else text + "\n", nl=False)
            return
        for t in parsed:
            click.echo(f"{t.id:016x}\t{t.cost:.2f}\t{t.text}")
    except (DepfsError, OSError, ValueError) as e:
        _fail(e)


def _read_arg(path: str, multiple_roots: bool = False) -> Any:
    """The treebank of a file argument; ``-``: stdin."""
    from .evaluate import as_treebank
    from .treebank import Treebank

    if path == "-":
        data = sys.stdin.buffer.read()
        return Treebank.from_bytes(data, name="<stdin>", multiple_roots=multiple_roots)
    return as_treebank(path, multiple_roots=multiple_roots)


@main.command("eval", short_help="Score SYSTEM against GOLD (CoNLL 2018 metrics).")
@click.argument("gold", type=click.Path(dir_okay=False, allow_dash=True))
@click.argument("system", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option(
    "--full-labels", is_flag=True, help="Compare whole DEPREL values (default: part before ':')."
)
def eval_command(gold: str, system: str, as_json: bool, full_labels: bool) -> None:
    """Score SYSTEM against GOLD: CoNLL-U files with the same words and the same sentences
    (words are not aligned across other sentence boundaries). One of them may be - (stdin).

    UAS, LAS (universal part of DEPREL unless --full-labels) and label accuracy, with
    and without punctuation (gold UPOS PUNCT; n/a when GOLD has no UPOS), as the CoNLL
    2018 scorer computes them on gold tokenisation; UPOS, XPOS, UFeats and Lemmas where
    both files have that column on some word, AllTags where the first three are scored
    (else n/a; --json: null). Multiword-token ranges and empty nodes are not scored.
    """
    from .errors import AlignmentError
    from .evaluate import evaluate

    if gold == "-" and system == "-":
        raise click.UsageError("only one of GOLD and SYSTEM can be - (stdin)")
    gold_name, system_name = (p if p != "-" else "<stdin>" for p in (gold, system))
    gold_tb, system_tb = _read_arg(gold), _read_arg(system)
    try:
        scores = evaluate(gold_tb, system_tb, full_labels=full_labels)
    except ValueError as e:
        if isinstance(e, AlignmentError):  # name the two files
            raise AlignmentError(
                f"{system_name} against {gold_name}: {e} (the two files must have the same "
                "words and the same sentences)"
            ) from None
        # The scorer names the side ("gold sentence 3 ..."); say which file that is.
        side = gold_name if str(e).startswith("gold") else system_name
        raise ValueError(f"{side}: {e}") from None
    d = scores.as_dict(digits=2, tags=True)
    if not scores.punct_known:
        click.echo(
            f"depfs: note: {gold_name} has no UPOS: no word is known to be punctuation, "
            "so the no-punct scores are n/a",
            err=True,
        )
    if as_json:
        _echo_json(d)
        return

    def cell(v: float | int | None, width: int) -> str:
        return f"{'n/a':>{width}}" if v is None else f"{v:>{width}.2f}"

    click.echo(f"{'metric':<10} {'all':>8} {'no punct':>9}")
    for name, key in (("UAS", "uas"), ("LAS", "las"), ("label acc", "label_acc")):
        click.echo(f"{name:<10} {cell(d[key], 8)} {cell(d[key + '_nopunct'], 9)}")
    for name, key in (
        ("UPOS", "upos"),
        ("XPOS", "xpos"),
        ("UFeats", "ufeats"),
        ("AllTags", "alltags"),
        ("Lemmas", "lemmas"),
    ):
        click.echo(f"{name:<10} {cell(d[key], 8)}")
    nopunct = "n/a" if d["words_nopunct"] is None else d["words_nopunct"]
    click.echo(f"{'words':<10} {d['words']:>8} {nopunct:>9}")


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.1f} KiB"


def _echo_json(d: Any) -> None:
    """`d` as one line of standard JSON: a float that is not finite (a NaN a model's
    training information may hold) becomes the string "nan", "inf" or "-inf"."""

    def safe(x: Any) -> Any:
        if isinstance(x, float) and not math.isfinite(x):
            return str(x)
        if isinstance(x, dict):
            return {k: safe(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [safe(v) for v in x]
        return x

    click.echo(json.dumps(safe(d), allow_nan=False))


@main.command("info")
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def info_command(model: str, as_json: bool) -> None:
    """What MODEL holds and how it was trained."""
    from .models import model_info

    d = model_info(model)
    if as_json:
        _echo_json(d)
        return
    t = d["training"]
    click.echo(
        f"{d['path']}: {d['kind']} model, format version {d['format_version']}, "
        f"{_size(d['size_bytes'])}"
    )
    click.echo(f"  needs columns: {', '.join(d['input_columns']) or '-'}")
    click.echo("  templates:     " + ", ".join(f"{n} {k}" for k, n in d["templates"].items()))
    if d["labels"] is not None:
        lifted = d.get("lifted_labels") or 0
        click.echo(
            f"  labels:        {d['labels'] - lifted}"
            + (
                f" (and {lifted} lifted {'one' if lifted == 1 else 'ones'} of pseudo-projective "
                "parsing, never written)"
                if lifted
                else ""
            )
        )
    if d.get("margin_presets"):
        p = d["margin_presets"]
        what = (
            f"a cascade of the first {', '.join(map(str, d['cascade']))} templates, then all "
            "(depfs parse --margin)"
            if d.get("cascade")
            else f"trained at {p['train']:g} (prefix-margin model: depfs parse/tag --margin)"
        )
        click.echo(
            f"  margins:       accurate {p['accurate']:g} (default), fast {p['fast']:g}; {what}"
        )
        rows = _preset_rows(p, t.get("margin_curve", []))
        if rows is not None:
            click.echo(
                "  on dev:        " + ", ".join(f"{n} {_margin_row(r)}" for n, r in rows.items())
            )
    if d.get("dynfs"):
        dy = d["dynfs"]
        chosen = d["training"].get("dynfs") or {}
        dev = (
            f"; dev UAS {chosen['dev_uas']:.2f} (full {chosen['full_dev_uas']:.2f}) at "
            f"{chosen['dev_cost']:.1f}% of the templates"
            if chosen
            else ""
        )
        sib = dy.get("sibling_groups")
        sib = f", sibling groups of {', '.join(map(str, sib))}" if sib else ""
        prune = dy.get("prune_margin")
        prune = f", prune margin {prune:g}" if prune is not None else ""
        if dy.get("tree_margin") is not None:
            prune += f", tree margin {dy['tree_margin']:g}"
        if dy.get("label_margin") is not None:
            prune += f", label margin {dy['label_margin']:g}"
            if dy.get("label_prefix_trained"):
                prune += " on a prefix-trained labeler"
        if dy.get("label_dict") is not None:
            prune += f" with a label dictionary of {dy['label_dict']:,} entries"
        lex = " (lexical features: group 1's)" if dy.get("policy_lexical") else ""
        click.echo(
            f"  dynfs:         groups of {', '.join(map(str, dy['groups']))}{sib}; policy "
            f"threshold {dy['threshold']:g}{lex}{prune}{dev} (depfs parse --policy-threshold, "
            "--no-dynfs)"
        )
    if d.get("tagger"):
        tg = d["tagger"]
        tt = tg["training"].get("train", {})
        source = f"; trained on {tt['file']}" if tt.get("file") else ""
        n = ", ".join(f"{k} {v}" for k, v in tg["templates"].items())
        click.echo(
            f"  tagger inside: predicts {', '.join(tg['columns'])} ({n} templates{source}); "
            "tags input that leaves the tag columns empty before parsing"
        )
    if not t:
        click.echo("  training:      not recorded (file written before format version 5)")
        return
    tr = t.get("train", {})
    source = f"{tr['file']}, " if tr.get("file") else ""
    words = f", {tr['words']:,} words" if tr.get("words") else ""
    click.echo(
        f"  trained on:    {source}{tr.get('sentences', '?'):,} sentences{words}"
        f" (depfs {t.get('depfs', '?')})"
    )
    params = dict(t.get("params", {}))
    if params.get("dynfs"):  # the arc templates are the groups' (resolved when the default)
        from .dynamic.he2013 import DEFAULT_GROUPS, DEFAULT_GROUPS_2

        params.pop("arc_templates", None)
        if params.get("groups") is None:
            default = DEFAULT_GROUPS_2 if params.get("order") == 2 else DEFAULT_GROUPS
            params["groups"] = f"{default} (the default)"
    opts = " ".join(f"{k}={v}" for k, v in params.items())
    click.echo(f"  options:       {opts}")
    for row in t.get("history", []):
        shown = [
            f"{name} {row[key]:.2f}"
            for name, key in (
                ("UAS", "dev_uas"),
                ("LAS", "dev_las"),
                ("UPOS", "dev_upos"),
                ("XPOS", "dev_xpos"),
                ("UFeats", "dev_ufeats"),
                ("Lemmas", "dev_lemmas"),
            )
            if key in row
        ]
        dev = "  dev " + " ".join(shown) if shown else ""
        kept = "  <- kept" if int(row["epoch"]) == t.get("best_epoch") and dev else ""
        click.echo(
            f"  epoch {int(row['epoch']):3d}: {_TRAIN_MEASURE.get(d['kind'], 'train accuracy')} "
            f"{100 * row['train_accuracy']:.2f}{dev}{kept}"
        )


#: What `depfs stats` says of projectivity when no word has a HEAD (it said 0, 0.00%).
_NO_ARCS = "n/a (no word has a HEAD)"


@main.command("stats", short_help="Sentences, words, lengths, labels, projectivity.")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def stats_command(file: str, as_json: bool) -> None:
    """Sentences, words, lengths, labels, non-projectivity, multiword tokens, empty nodes
    and roots (a sentence with several is counted, not refused) of FILE (- : stdin)."""
    from .evaluate import stats

    st = stats(_read_arg(file, multiple_roots=True))
    if as_json:
        _echo_json(st.as_dict())
        return
    several = st.multiroot_sentences
    sentences = "sentence" if several == 1 else "sentences"
    rows = [
        ("sentences", f"{st.sentences}"),
        ("words", f"{st.words}"),
        ("mean length", f"{st.mean_length:.2f}"),
        ("max length", f"{st.max_length}"),
        (
            "non-projective sentences",
            f"{st.nonprojective_sentences} ({100 * st.nonprojective_sentence_share:.2f}%)"
            if st.arcs
            else _NO_ARCS,
        ),
        (
            "non-projective arcs",
            f"{st.nonprojective_arcs} ({100 * st.nonprojective_arc_share:.2f}%)"
            if st.arcs
            else _NO_ARCS,
        ),
        ("multiword tokens", f"{st.multiword_tokens}"),
        ("empty nodes", f"{st.empty_nodes}"),
        ("roots", f"{st.roots}" + (f" ({several} {sentences} with several)" if several else "")),
        ("labels", f"{len(st.labels)}"),
    ]
    for name, value in rows:
        click.echo(f"{name:<26} {value}")
    for label, n in sorted(st.labels.items(), key=lambda kv: (-kv[1], kv[0])):
        click.echo(f"  {label:<24} {n}")


if __name__ == "__main__":
    main()
