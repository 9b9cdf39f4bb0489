"""`depfs select`: the forward wrapper and grouping on the command line."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path
from typing import Any

import click

from ..cli_options import (
    above_bar,
    count,
    decoder_option,
    order_option,
    out_option,
    parser_option,
    progress,
    scheduler_address,
    seed_option,
)
from ..templates import TemplateSet


@click.group()
def select() -> None:
    """Search for feature template sets."""


def _templates(value: str, family: str) -> TemplateSet:
    from .wrapper import _as_set

    return _as_set(value, family)


def _option_templates(value: str, option: str, family: str) -> TemplateSet:
    """`_templates` of an option's value: a path that is no file (or a folder) is refused
    as such, not read as template text, and a template that does not parse is named
    with the option (as `depfs train --templates` does)."""
    from ..cli import _check_template_path, _template_pipe

    value = _template_pipe(value, option)
    _check_template_path(value, option)
    try:
        return _templates(value, family)
    except ValueError as e:
        if not value.strip():
            raise
        raise click.UsageError(f"{option} {value.splitlines()[0]!r}: {e}") from None


def _file(value: str | None) -> bool:
    """Whether an option's value (a set name, template text or a file) is a file."""
    import os

    return value is not None and os.path.isfile(value)


def _check_outputs(
    outputs: list[tuple[str, str | None]], inputs: dict[str, str], force: bool
) -> None:
    """Each output's folder exists and it is none of `inputs` nor another output (unless
    `force`), before any work: `depfs.cli`'s rule for -o."""
    import os

    from ..cli import _check_output

    given = [(o, p) for o, p in outputs if p is not None]
    for option, p in given:
        same = [o for o, q in given if o != option and os.path.realpath(q) == os.path.realpath(p)]
        if same:
            raise click.UsageError(f"{option} {p} is also {same[0]}: give each output its own path")
        _check_output(p, inputs, force, option, appended=option == "--log")


@select.command("wrapper")
@parser_option("arc-eager", tagger=True, dynfs=False)
@click.option("--pool", required=True, help="Templates to order: set name, file or text.")
@click.option("--train", "train_path", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--dev", "dev_path", required=True, type=click.Path(exists=True, dir_okay=False))
@out_option("Order file")
@order_option
@decoder_option
@click.option("--base", help="Templates always present (graph order 2: the arc templates).")
@click.option(
    "--metric",
    type=click.Choice(["las", "uas", "accuracy", "upos"]),
    help="[default: las arc-eager, uas graph, accuracy tagger (mean over its columns)]",
)
@click.option("--max-length", type=count(1), help="Train only on sentences of at most N words.")
@click.option("--epochs", type=count(1), default=1, show_default=True)
@click.option("--limit", type=count(1), help="Stop after K templates.")
@click.option("--candidates", type=count(1), help="Cheaper variant: re-evaluate only the M best.")
@click.option("--rerank-every", type=count(1), default=5, show_default=True)
@click.option("--per-cost", is_flag=True, help="Pick the best gain per unit of template cost.")
@click.option("--workers", type=count(1), help="Local worker processes [default: all cores].")
@click.option(
    "--scheduler",
    callback=scheduler_address,
    help="Dask scheduler address, or 'local' for a LocalCluster.",
)
@click.option(
    "--log", "log_path", type=click.Path(dir_okay=False), help="JSONL log [default: OUT.jsonl]."
)
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="Selection curve PNG.")
@click.option("--force", is_flag=True, help="Allow an output path that is an input or read-only.")
@seed_option
def wrapper_command(
    parser_kind: str,
    pool: str,
    train_path: str,
    dev_path: str,
    out_path: str,
    order: int,
    decoder: str,
    base: str | None,
    metric: str | None,
    max_length: int | None,
    epochs: int,
    limit: int | None,
    candidates: int | None,
    rerank_every: int,
    per_cost: bool,
    workers: int | None,
    scheduler: str | None,
    log_path: str | None,
    plot_path: str | None,
    force: bool,
    seed: int,
) -> None:
    """Order templates by forward selection on dev (a rerun with the same log resumes)."""
    from ..files import is_stream
    from .engine import FAMILY, PARSER_METRICS, close_dask, dask_executor
    from .groups import order_text
    from .plot import plot_curves
    from .wrapper import forward_wrapper, planned_evaluations

    if parser_kind != "graph" and (order != 1 or decoder != "eisner"):
        raise click.UsageError("--order and --decoder apply to the graph parser only")
    if order == 2 and decoder == "cle":
        raise click.UsageError("--decoder cle is first-order only (order 2 decodes with Eisner2)")
    given = click.get_current_context().get_parameter_source("rerank_every")
    if candidates is None and given is click.core.ParameterSource.COMMANDLINE:
        raise click.UsageError(
            "--rerank-every applies to the cheaper variant (--candidates M): the exact wrapper "
            "re-evaluates every template at every step"
        )
    if metric is not None and metric not in PARSER_METRICS[parser_kind]:
        raise click.UsageError(
            f"--metric {metric}: the {parser_kind}"
            + ("" if parser_kind == "tagger" else " parser")
            + " is scored by "
            + " or ".join(PARSER_METRICS[parser_kind])
        )
    family = FAMILY[parser_kind]
    pool_set = _option_templates(pool, "--pool", family)
    base_set = _option_templates(base, "--base", family) if base else None
    if log_path is None and (out_path == "-" or is_stream(out_path)):
        # Its default log would be named after it: "-.jsonl", or /dev/null.jsonl in /dev.
        what = "- (stdout)" if out_path == "-" else f"{out_path} (not a regular file)"
        raise click.UsageError(
            f"--out {what}: give --log, whose default is named after --out (OUT.jsonl)"
        )
    log_path = log_path or out_path + ".jsonl"
    # Fail before hours of work, not after: folders, and outputs that are inputs.
    inputs = {"the --train file": train_path, "the --dev file": dev_path}
    inputs.update({f"the {o} file": v for o, v in (("--pool", pool), ("--base", base)) if _file(v)})
    outputs = [
        ("--out", None if out_path == "-" else out_path),
        ("--log", log_path),
        ("--plot", plot_path),
    ]
    _check_outputs(outputs, inputs, force)
    for option, path in (("--train", train_path), ("--dev", dev_path)):
        if is_stream(path):  # a pipe: read once, then gone for the next worker
            raise click.UsageError(
                f"{option} {path}: a pipe or device, not a file (each candidate's worker "
                "reads it again: give a file)"
            )
    if is_stream(log_path):
        raise click.UsageError(
            f"--log {log_path}: a pipe or device, not a log file (a log is read, then "
            "appended to: give a file's path)"
        )
    total = planned_evaluations(len(pool_set), limit, candidates, 2, rerank_every)
    executor, client = dask_executor(scheduler, workers) if scheduler else (None, None)
    state: dict[str, Any] = {"best": None, "k": 0}
    t0 = time.time()
    try:
        with progress(total, "wrapper", show_eta=True) as bar:

            def on_result(_c: Any, _r: Any) -> None:
                bar.update(1)

            def on_step(step: Any) -> None:
                state["k"] += 1
                bar.label = f"wrapper: {state['k']} templates, dev {step.score:.2f}"
                # A line a step: a search of an hour said nothing in a log (`2> log`).
                above_bar(bar, f"  step {state['k']}: {step.template.text} (dev {step.score:.2f})")

            result = forward_wrapper(
                pool_set,
                train_path,
                dev_path,
                parser=parser_kind,
                base=base_set,
                metric=metric,
                epochs=epochs,
                max_length=max_length,
                order=order,
                decoder=decoder,
                seed=seed,
                limit=limit,
                candidates=candidates,
                rerank_every=rerank_every,
                per_cost=per_cost,
                executor=executor,
                workers=workers,
                log=log_path,
                on_result=on_result,
                on_step=on_step,
            )
    except KeyboardInterrupt as err:
        import os

        from ..cli import EXIT_INTERRUPTED, EXIT_TERMINATED, _Terminated, second_ctrl_c_ignored

        kept = (
            f"every finished candidate is in {log_path}: rerun the same command to resume"
            if os.path.exists(log_path)  # (none finished: no log was made)
            else f"no candidate had finished ({log_path} was not made)"
        )
        unwritten = "nothing written to stdout" if out_path == "-" else f"{out_path} not written"
        with second_ctrl_c_ignored():
            click.echo(f"depfs: interrupted; {kept} ({unwritten})", err=True)
        # (SIGTERM is an interruption too, with its own status: it was 130 here)
        sys.exit(EXIT_TERMINATED if isinstance(err, _Terminated) else EXIT_INTERRUPTED)
    finally:
        if client is not None:
            close_dask(executor, client)
    header = (
        f"depfs select wrapper --parser {parser_kind} --metric {result.metric} --epochs {epochs}"
        + (f" --max-length {max_length}" if max_length else "")
        + (f" --order {order}" if parser_kind == "graph" else "")
        + (f" --decoder {decoder}" if parser_kind == "graph" and order == 1 else "")
        # The sets as given (a name, a file or template text), so that the header says
        # what was ordered, and on what (order 2's base is not scored alone).
        + "".join(f" {o} {_shell_word(v)}" for o, v in (("--pool", pool), ("--base", base)) if v)
        # And whatever else changes the order, so that the header reruns as written.
        + (f" --limit {limit}" if limit else "")
        + (f" --candidates {candidates} --rerank-every {rerank_every}" if candidates else "")
        + (" --per-cost" if per_cost else "")
        + (f" --seed {seed}" if seed != 1 else "")
        + (
            f"\nbase: {len(result.base)} templates, dev {result.metric} {result.base_score:.2f}"
            if result.base_score is not None
            else ""
        )
    )
    from ..files import write_text_atomic

    # The base (of the pool's kind: not order 2's arc templates under sibling ones) goes
    # into the file, so that it trains the set each score was measured on.
    written_base = () if parser_kind == "graph" and order == 2 else tuple(result.base)
    text = order_text(result.order, result.scores, result.metric, header, written_base)
    if out_path == "-":  # stdout, as -o - everywhere in depfs
        click.echo(text, nl=False)
    else:
        write_text_atomic(out_path, text)
    if plot_path:
        plot_curves(
            plot_path,
            [("forward wrapper", result.scores)],
            result.metric,
            title="depfs select wrapper" if out_path == "-" else Path(out_path).name,
        )
    click.echo(
        f"wrote {'stdout' if out_path == '-' else out_path}: {len(result.steps)} templates, "
        f"best dev {result.metric} "
        f"{max(result.scores):.2f} ({result.evaluated} trained, {result.reused} from the log, "
        f"{time.time() - t0:.0f}s)",
        err=True,
    )


def _grouped(order: Any, sizes: list[int], base: Any) -> list[list[Any]]:
    """`order`'s templates in groups of `sizes`, a base the order was ranked on (always
    present, so computed first) in group 1."""
    templates, out, i = list(order), [], 0
    for n in sizes:
        out.append(templates[i : i + n])
        i += n
    out[0] = [*base, *out[0]]
    return out


class _Cuts(click.ParamType):
    """--cuts: increasing positive counts, comma-separated."""

    name = "N,N,..."

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        try:
            cuts = tuple(int(v) for v in str(value).split(","))
        except ValueError:
            self.fail(f"{value!r} is not a comma-separated list of counts", param, ctx)
        if any(c >= 2**63 for c in cuts):
            self.fail(f"{value!r}: a count does not fit in 63 bits", param, ctx)
        if any(c < 1 for c in cuts) or list(cuts) != sorted(set(cuts)):
            self.fail(f"{value!r}: counts must be increasing, from 1", param, ctx)
        return cuts


class _Limit(click.ParamType):
    """--limit: a count, or 'best'."""

    name = "N|best"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "best" or isinstance(value, int):
            return value
        try:
            int(value)
        except ValueError:
            self.fail(f"{value!r} is neither a count nor 'best'", param, ctx)
        return count(1).convert(value, param, ctx)


#: What `str.splitlines` breaks a line at: a header's command keeps each of them escaped,
#: else reading the file back would see the rest as a line of its own.
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def _shell_word(value: str) -> str:
    """`value` as one word of a shell command line (bash, zsh): template text of several
    lines, or a name with any other line break, in ANSI-C quotes (`$'form(h)\\nupos(m)'`),
    which keep a header's command on one line that reruns as written."""
    if not _LINE_BREAKS.intersection(value):
        return shlex.quote(value)

    def escape(c: str) -> str:
        if c in "\\'":
            return "\\" + c
        if c == "\n":
            return "\\n"
        if c not in _LINE_BREAKS:
            return c
        return f"\\x{ord(c):02x}" if ord(c) < 0x80 else f"\\u{ord(c):04x}"

    return "$'" + "".join(map(escape, value)) + "'"


def _path_word(path: str) -> str:
    """An input path as a word of a header's command: one that starts with `-` as
    `./-...` (the same file), which the command does not take for an option."""
    return _shell_word(f"./{path}" if path.startswith("-") else path)


@select.command("groups")
@click.argument("order_path")
@click.argument("second_path", required=False)
@click.option(
    "--k",
    "k",
    type=count(1),
    help="Groups of the first order file, of roughly equal dev gain (this or --cuts is needed).",
)
@click.option(
    "--cuts",
    type=_Cuts(),
    help="Instead of --k: cut the first order after these numbers of ranked templates "
    "(increasing, comma-separated: --cuts 5,20 gives groups of 5, 15 and the rest, as "
    "dynfs_en_ewt's 5, 20, 60).",
)
@click.option("--k2", type=count(1), help="Groups of the second (sibling) order file [default: K].")
@click.option(
    "--limit",
    type=_Limit(),
    metavar="N|best",
    help="Keep only the first order's first N ranked templates (a static cut: a DynFS model "
    "of these groups never computes the others, and its full model is that of the N); 'best': "
    "up to the order's best dev score (the wrapper's best prefix; the first of equal ones) "
    "[default: all].",
)
@click.option(
    "--family",
    type=click.Choice(["arc", "config", "token"]),
    help="[default: a shipped order's own, else the parser its header names "
    "(--parser arc-eager: config, tagger: token), else arc]",
)
@out_option("Groups file")
@click.option("--force", is_flag=True, help="Allow an output path that is an input or read-only.")
def groups_command(
    order_path: str,
    second_path: str | None,
    k: int | None,
    cuts: tuple[int, ...] | None,
    k2: int | None,
    limit: int | str | None,
    family: str | None,
    out_path: str,
    force: bool,
) -> None:
    """Cut an order (and a second-order one) into groups of roughly equal dev gain (--k) or
    at given counts (--cuts), optionally kept to a prefix (--limit).

    ORDER_PATH (and SECOND_PATH) is an order file written by `depfs select wrapper`, or a
    shipped order by name (`depfs templates list`: arc_eager_en_ewt, first_order_en_ewt ...)."""
    from ..files import write_text_atomic
    from .groups import cut_groups, groups_text, read_order_file

    if k2 is not None and second_path is None:
        raise click.UsageError("--k2 cuts a second order file (SECOND_PATH): none was given")
    if (k is None) == (cuts is None):
        which = "not both" if k is not None else "one of them is needed"
        raise click.UsageError(f"give --k (groups of equal gain) or --cuts (where to cut): {which}")
    if cuts is not None and second_path is not None and k2 is None:
        raise click.UsageError("--cuts cuts the first order: give --k2 for SECOND_PATH's groups")

    def cut(path: str, k: int | None, sibling: bool = False) -> list[list[Any]]:
        """`path`'s order in `k` groups (`sibling`: the second, of sibling templates)."""
        order, scores, base = read_order_file(path, family)  # (one read: it may be a pipe)
        if not order:
            raise click.UsageError(f"{path}: the order has no template")
        # A graph order is first-order (arc) or second-order (sibling) templates: the
        # other kind in a place fails only in the training that reads the groups file.
        orders = {t.order for t in order.templates} if order.family == "arc" else set()
        if not sibling and 2 in orders:
            raise click.UsageError(
                f"{path}: an order of sibling templates: give it as SECOND_PATH, after an "
                "order of first-order templates"
            )
        if not sibling and second_path is not None and order.family != "arc":
            kind = {"config": "arc-eager", "token": "tagger"}.get(order.family, order.family)
            raise click.UsageError(
                f"{path}: {kind} templates; a SECOND_PATH of sibling templates goes after an "
                "order of the graph parser's first-order templates"
            )
        if sibling and (1 in orders or order.family != "arc"):
            kind = {"config": "arc-eager", "token": "tagger"}.get(order.family, order.family)
            what = "first-order templates" if 1 in orders else f"{kind} templates"
            raise click.UsageError(
                f"{path}: SECOND_PATH is the order of sibling templates; this one has {what}"
            )
        keep = None if sibling else limit
        if keep == "best":
            if not scores:
                raise click.UsageError(
                    f"{path}: --limit best needs the order's dev scores ('# score' lines)"
                )
            # The first prefix at the best score: templates after it did not raise it.
            keep = scores.index(max(scores)) + 1
            # A partial order (the wrapper stopped early) scores only its first templates.
            of = "" if len(scores) == len(order) else f" (of the {len(scores)} scored)"
            click.echo(
                f"depfs: note: {path}: its best dev score{of} is at {keep} templates", err=True
            )
            made.append(f"--limit best: {keep} templates, dev {max(scores):.2f}")
        if isinstance(keep, int):
            if keep < len(order):
                order, scores = order[:keep], scores[:keep]
            elif limit != "best":
                click.echo(
                    f"depfs: note: {path}: --limit {keep} keeps all {len(order)} templates",
                    err=True,
                )
        if cuts and not sibling:  # given cuts (increasing: the last must fall inside); no scores
            if cuts[-1] >= len(order):
                raise click.UsageError(
                    f"{path}: --cuts {','.join(map(str, cuts))}: the order keeps "
                    f"{len(order)} templates; cut before its end"
                )
            sizes = [b - a for a, b in zip([0, *cuts], [*cuts, len(order)])]
            return _grouped(order, sizes, base)
        if len(scores) != len(order):
            raise click.UsageError(
                f"{path}: needs a '# score' line after each template (it scores "
                f"{len(scores)} of its {len(order)}): groups of equal gain are cut by the scores"
            )
        if k > len(order):
            click.echo(
                f"depfs: note: {path}: {k} groups asked of {len(order)} templates: "
                f"{len(order)} groups of one",
                err=True,
            )
        return _grouped(order, cut_groups(scores, k), base)

    inputs = {
        f"the {w} order": p for w, p in (("first", order_path), ("second", second_path)) if _file(p)
    }
    _check_outputs([("--out", None if out_path == "-" else out_path)], inputs, force)
    # The command in the file's header, as the wrapper's order files have theirs.
    made = [
        " ".join(
            ["depfs select groups", *(_path_word(p) for p in (order_path, second_path) if p)]
            + [
                f"{o} {v}"
                for o, v in (
                    ("--k", k),
                    ("--cuts", ",".join(map(str, cuts or ()))),
                    ("--k2", k2),
                    ("--limit", limit),
                    ("--family", family),
                )
                if v
            ]
        )
    ]
    first = cut(order_path, k)
    second = cut(second_path, k2 or k, sibling=True) if second_path else []
    text = groups_text(first, second, "\n".join(made))
    if out_path == "-":  # stdout, as -o - everywhere in depfs
        click.echo(text, nl=False)
    else:
        write_text_atomic(out_path, text)
    sizes = ", ".join(str(len(g)) for g in first)
    more = f"; order 2: {', '.join(str(len(g)) for g in second)}" if second else ""
    where = "stdout" if out_path == "-" else out_path
    click.echo(f"wrote {where}: groups of {sizes}{more}", err=True)
