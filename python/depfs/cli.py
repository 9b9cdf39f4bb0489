"""The `depfs` command line (click). Errors print one line on stderr and exit 2."""

from __future__ import annotations

import click

from . import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="depfs")
def main() -> None:
    """depfs: fast feature-based dependency parsing."""


def _fail(err: Exception) -> None:
    """One clear line on stderr, exit status 2."""
    click.echo(f"depfs: error: {err}", err=True)
    raise SystemExit(2)


@main.command()
@click.option(
    "--parser", "parser_kind", type=click.Choice(["graph"]), default="graph", show_default=True
)
@click.option("--order", type=click.IntRange(1, 2), default=1, show_default=True)
@click.option(
    "--decoder", type=click.Choice(["eisner", "cle"]), default="eisner", show_default=True
)
@click.option("--train", "train_path", required=True, type=click.Path(dir_okay=False))
@click.option(
    "--dev", "dev_path", type=click.Path(dir_okay=False), help="Dev file: UAS/LAS per epoch."
)
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False))
@click.option("--epochs", type=click.IntRange(1), default=10, show_default=True)
@click.option(
    "--templates",
    "arc_templates",
    default="first_order",
    show_default=True,
    help="Arc templates: set name, file or text.",
)
@click.option("--max-bits", type=click.IntRange(4, 30), default=20, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
def train(
    parser_kind: str,
    order: int,
    decoder: str,
    train_path: str,
    dev_path: str | None,
    out_path: str,
    epochs: int,
    arc_templates: str,
    max_bits: int,
    seed: int,
) -> None:
    """Train a parser on a CoNLL-U file and write the model."""
    from . import read_conllu
    from .errors import DepfsError
    from .graph import GraphParser

    try:
        train_tb = read_conllu(train_path)
        dev_tb = read_conllu(dev_path) if dev_path else None
        parser = GraphParser(
            order=order,
            decoder=decoder,
            epochs=epochs,
            arc_templates=arc_templates,
            max_bits=max_bits,
            random_state=seed,
        )
        with click.progressbar(
            length=epochs, label="training", file=click.get_text_stream("stderr")
        ) as bar:

            def report(st: dict) -> None:
                bar.update(1)
                dev = ""
                if "dev_uas" in st:
                    dev = f" dev UAS {100 * st['dev_uas']:.2f} LAS {100 * st['dev_las']:.2f}"
                click.echo(
                    f"  epoch {st['epoch']}: train UAS {100 * st['train_uas']:.2f}"
                    f" ({st['seconds']:.1f}s){dev}",
                    err=True,
                )

            parser.fit(train_tb, dev=dev_tb, callback=report)
        parser.save(out_path)
    except (DepfsError, OSError, ValueError) as e:
        _fail(e)
    click.echo(f"wrote {out_path}", err=True)


@main.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.argument("input_path", required=False, type=click.Path(dir_okay=False))
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Output file (default stdout)."
)
@click.option(
    "--threads", type=click.IntRange(0), default=0, show_default=True, help="0 = all cores."
)
def parse(model: str, input_path: str | None, output: str | None, threads: int) -> None:
    """Parse INPUT (CoNLL-U; stdin when omitted) with MODEL."""
    import sys

    from . import Treebank, load, read_conllu
    from .errors import DepfsError

    try:
        parser = load(model)
        tb = read_conllu(input_path) if input_path else Treebank.from_string(sys.stdin.read())
        parsed = parser.parse(tb, threads=threads)
        if output:
            parsed.write(output)
        else:
            sys.stdout.write(parsed.to_string())
    except (DepfsError, OSError, ValueError) as e:
        _fail(e)


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
    from . import _core
    from .errors import DepfsError
    from .templates import parse_templates, resolve_templates, template_sets

    try:
        if canonical:
            family = _core.template_set_text(name)[0] if name in template_sets() else "arc"
            for t in parse_templates(resolve_templates(name), family, max_atoms=1000):
                click.echo(f"{t.id:016x}\t{t.cost:.2f}\t{t.text}")
        elif name in template_sets():
            click.echo(_core.template_set_text(name)[1], nl=False)
        else:
            _fail(ValueError(f"no template set {name!r} (known: {', '.join(template_sets())})"))
    except (DepfsError, OSError, ValueError) as e:
        _fail(e)


if __name__ == "__main__":
    main()
