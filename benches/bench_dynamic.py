"""Prefix-margin dynamic feature selection (Strubell et al. 2015) on the arc-eager parser
and the tagger.

Trains on en_ewt train (or --treebank), dev for the epochs kept and the presets, all in
one process and one run: the full model trained the ordinary way on the shipped ordered
set (`arc_eager_en_ewt`, 104 templates), the dynamic model on the same set, and the
fixed-prefix baselines (one ordinary model per prefix length k) and the stagewise
baseline (§6.1: each template in order trained alone for one epoch, the ones before it
frozen; its own presets and margins). Then parses test on one
thread — each model or margin best of --reps runs in CPU time, taken in turn with the full
model's so each speed-up is a paired ratio; CoNLL-U in memory (reading and writing
excluded) — and prints a table in the style of Strubell et al. Table 2: LAS,
UAS, templates per move decision and per label decision, words/s and the speed-up over
the full model in the same run. Writes bench-results/dynamic_<treebank>.json and, with
--plot, a Pareto plot (LAS against words/s).

With --parser tagger the same for the tagger (Strubell et al. Table 1): the full tagger
trained the ordinary way on the shipped order `tagger_en_ewt` (the wrapper's order of the
50 `tagger` templates, used by every column), the dynamic tagger on the same order, the
stagewise baseline (§6.1: each template trained alone for one epoch, then frozen) and
fixed prefixes of 1, 5, 10, 20, 30 and 40 templates; UPOS and the mean accuracy of the
four columns, templates per column decision, tokens/s (all four columns).

    python -m benches.bench_dynamic [--parser arc-eager|tagger] [--treebank en_ewt]
                                    [--reps 3] [--plot PNG] [--prefixes 1,5,10]
                                    [--models DIR] [--no-stagewise]
                                    [--update perceptron|adagrad] [--full-sum S]
                                    [--train-margin M] [--cascade default|K1,K2|none]
                                    [--no-dynamic]

The parser's table also has the cascade (``ArcEagerParser(dynamic=True, cascade=...)``:
ordinary models of the first k1 < k2 < ... templates settle the decisions they lead by the
margin, the full model the rest; trained in the run, its presets chosen on dev) at its
presets and the fractions of its nominal margin: --cascade default (the parser's default
stages, `cascade=True`), --cascade K1,K2 for others, --cascade none to skip it; on the
parser's cascade order (CASCADE_TEMPLATES), or on --order when given.

--update, --full-sum and --train-margin set the dynamic parser's or tagger's training
(default: the ArcEagerParser or Tagger defaults; `--update adagrad --full-sum 0` is
Algorithm 2 as the paper). --no-dynamic skips the prefix-trained dynamic parser. --warm
times each parse after an untimed one of the same model (each model with its own tables in
cache, as when parsing a long stream) rather than just after the other model's.

With --models DIR the models are saved there (full.depfs, dynamic.depfs, stagewise.depfs,
fixed<k>.depfs, cascade.depfs; the tagger's: .tagger) and loaded from there when present,
so a change to parsing alone is re-timed on the same models without retraining (training
CPU s then print as nan).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import depfs
from depfs import evaluate
from depfs.arceager import ArcEagerParser, TrainingSet
from depfs.dynamic.strubell2015 import margin_point, tag_point
from depfs.templates import TemplateSet

from .bench_arceager import data_dir
from .bench_tagger import blank_tags

OUT = Path("bench-results")
PREFIXES = (1, 5, 10, 20, 30, 40, 60)
#: Parse-time margins, as fractions of the training margin (the presets come on top; above
#: 1 for a model whose full sum was trained).
FRACTIONS = (0.2, 0.3, 0.4, 0.6, 0.8, 1.0, 1.2, 1.5)


def timed(parse, test, reps: int, full=None, warm: bool = False) -> tuple[float, float, object]:
    """Best CPU time of `reps` parses of `test` (one thread; CPU time, so that other
    processes on the shared machine do not count), the same for the `full` model's
    parse run in turn with it (the speed-up is their ratio: pairing cancels the
    machine's drift during a run; `secs` itself when `full` is None), and the parse.
    With `warm`, each timed parse follows an untimed one of the same model, so that
    each is timed with its own tables in cache rather than just after the other's (a
    parse of test is ~0.1 s: a model's first rows cost a visible share of it)."""
    best, best_full, out = float("inf"), float("inf"), None
    for _ in range(reps):
        if warm:
            parse(test)
        t0 = time.process_time()
        out = parse(test)
        best = min(best, time.process_time() - t0)
        if full is not None:
            if warm:
                full(test)
            t0 = time.process_time()
            full(test)
            best_full = min(best_full, time.process_time() - t0)
    return best, (best if full is None else best_full), out


def training_options(args: argparse.Namespace) -> dict[str, object]:
    """The dynamic model's training options given on the command line (--update,
    --full-sum, --train-margin); the others keep the model's defaults."""
    given = [("update", args.update), ("full_sum", args.full_sum)]
    given.append(("train_margin", args.train_margin))
    return {k: v for k, v in given if v is not None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parser", choices=("arc-eager", "tagger"), default="arc-eager")
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument(
        "--order", default=None, help="ordered template set [arc_eager_en_ewt, tagger_en_ewt]"
    )
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=None, help="[arc-eager 17, tagger 10]")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plot", default=None, help="PNG of LAS against words/s")
    ap.add_argument("--no-prefixes", action="store_true", help="skip the fixed-prefix models")
    ap.add_argument(
        "--no-stagewise", action="store_true", help="skip the stagewise baseline (arc-eager)"
    )
    ap.add_argument("--prefixes", default=None, help="fixed-prefix lengths [1,5,10,20,30,40,60]")
    ap.add_argument("--models", default=None, help="keep (and reuse) the models here")
    ap.add_argument("--update", default=None, help="the dynamic model's prefix steps [the model's]")
    ap.add_argument(
        "--full-sum",
        type=float,
        default=None,
        help="the dynamic model's step on the full sum, 0: none [the model's]",
    )
    ap.add_argument("--train-margin", type=float, default=None, help="[the model's for --update]")
    ap.add_argument(
        "--cascade",
        default="default",
        help="the cascade's stages K1,K2,..., 'default' (the parser's default stages, the default) "
        "or none (no cascade)",
    )
    ap.add_argument("--no-dynamic", action="store_true", help="skip the prefix-trained parser")
    ap.add_argument(
        "--warm", action="store_true", help="an untimed parse before each timed one (parser)"
    )
    args = ap.parse_args()
    d = data_dir() / args.treebank
    train, dev, test = (depfs.read_conllu(d / f"{s}.conllu") for s in ("train", "dev", "test"))
    if args.parser == "tagger":
        return bench_tagger(args, train, dev, test)
    args.epochs = args.epochs or 17
    prepared = TrainingSet(train)
    order = TemplateSet.load(args.order or "arc_eager_en_ewt", family="config")
    words = test.n_words
    rows: list[dict] = []
    base: dict[str, object] = {}  # the full model's parse, once trained

    def add(name: str, parser: ArcEagerParser, margin, train_s: float, counts=None) -> None:
        secs, full_secs, parsed = timed(
            lambda tb: parser.parse(tb, 1, margin=margin),
            test,
            args.reps,
            base.get("parse"),
            args.warm,
        )
        s = evaluate(test, parsed)
        row = {
            "model": name,
            "margin": margin,
            "las": s.las,
            "uas": s.uas,
            "move_templates": counts.move_templates if counts else None,
            "label_templates": counts.label_templates if counts else None,
            "words_per_s": words / secs,
            "speedup": full_secs / secs,
            "train_cpu_s": train_s,
        }
        rows.append(row)
        print(
            f"{name:<18} {str(margin):>10} LAS {s.las:6.2f} UAS {s.uas:6.2f} "
            f"tmpl/move {row['move_templates'] or len(parser.templates_):6.2f} "
            f"{row['words_per_s']:>11,.0f} words/s",
            flush=True,
        )

    models = Path(args.models) if args.models else None

    def fit(parser: ArcEagerParser, name: str) -> tuple[ArcEagerParser, float]:
        path = models / f"{name}.depfs" if models else None
        if path is not None and path.exists():
            return ArcEagerParser.load(path), float("nan")
        t0 = time.process_time()
        parser.fit(prepared, dev=dev)
        secs = time.process_time() - t0
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            parser.save(path)
        return parser, secs

    def add_margins(name: str, model: ArcEagerParser, train_s: float) -> None:
        """Rows of a dynamic model or a cascade: its presets and FRACTIONS of its nominal margin."""
        p = model.margin_presets_
        for m in sorted({p["accurate"], p["fast"], *(f * p["train"] for f in FRACTIONS)}):
            label = {p["accurate"]: f"{name} accurate", p["fast"]: f"{name} fast"}.get(m, name)
            add(label, model, m, train_s, margin_point(model.model_, test, m))

    full, full_s = fit(ArcEagerParser(order, epochs=args.epochs, random_state=args.seed), "full")
    add("full", full, None, full_s)
    base["parse"] = lambda tb: full.parse(tb, 1)
    options = training_options(args)
    presets, dyn_s, dyn = {}, float("nan"), None
    if not args.no_dynamic:
        dyn, dyn_s = fit(
            ArcEagerParser(
                order, epochs=args.epochs, random_state=args.seed, dynamic=True, **options
            ),
            "dynamic",
        )
        presets = dyn.margin_presets_
        add_margins("dynamic", dyn, dyn_s)
    cas_s = float("nan")
    if args.cascade != "none":
        # The parser's own cascade order (CASCADE_TEMPLATES) unless --order names one.
        stages = True if args.cascade == "default" else tuple(map(int, args.cascade.split(",")))
        cas, cas_s = fit(
            ArcEagerParser(
                order if args.order else None,
                epochs=args.epochs,
                random_state=args.seed,
                dynamic=True,
                cascade=stages,
            ),
            "cascade",
        )
        add_margins("cascade", cas, cas_s)
    if not args.no_stagewise:
        # Stagewise (§6.1): each template in order trained alone for one epoch, the ones
        # before it frozen; its own presets from dev, and the fractions of its own training
        # margin (it takes AdaGrad steps, whose margins are on another scale than the
        # perceptron steps of the dynamic model).
        sw, sw_s = fit(
            ArcEagerParser(order, epochs=1, random_state=args.seed, dynamic=True, stagewise=True),
            "stagewise",
        )
        sp = sw.margin_presets_
        for m in sorted({sp["accurate"], sp["fast"], *(f * sp["train"] for f in FRACTIONS)}):
            add("stagewise", sw, m, sw_s, margin_point(sw.model_, test, m))
    if not args.no_prefixes:
        prefixes = [int(k) for k in args.prefixes.split(",")] if args.prefixes else PREFIXES
        for k in prefixes:
            p, s = fit(
                ArcEagerParser(order[:k], epochs=args.epochs, random_state=args.seed), f"fixed{k}"
            )
            add(f"fixed {k}", p, None, s)
    print(f"\n{'model':<18} {'m':>6} {'LAS':>6} {'UAS':>6} {'tmpl':>6} {'speed-up':>8}")
    for r in rows:
        t = r["move_templates"] if r["move_templates"] is not None else None
        m = "" if r["margin"] is None else f"{r['margin']:.1f}"
        print(
            f"{r['model']:<18} {m:>6} {r['las']:6.2f} {r['uas']:6.2f} "
            f"{'' if t is None else f'{t:.2f}':>6} {r['speedup']:7.2f}x"
        )
    print(f"training CPU s: full {full_s:.1f}, dynamic {dyn_s:.1f} ({dyn_s / full_s:.2f}x)")
    print(f"training CPU s: cascade {cas_s:.1f} ({cas_s / full_s:.2f}x)")
    OUT.mkdir(exist_ok=True)
    (OUT / f"dynamic_{args.treebank}.json").write_text(
        json.dumps(
            {"presets": presets, "curve": getattr(dyn, "margin_curve_", []), "rows": rows},
            indent=1,
        )
    )
    if args.plot:
        plot(rows, args.plot, args.treebank)


TAGGER_PREFIXES = (1, 5, 10, 20, 30, 40)


def bench_tagger(args: argparse.Namespace, train, dev, test) -> None:
    """The tagger's table (see the module doc)."""
    from depfs import Tagger

    epochs = args.epochs or 10
    order = TemplateSet.load(args.order or "tagger_en_ewt", family="token")
    blank = depfs.Treebank.from_string(blank_tags(test.to_string()))
    words = test.n_words
    rows: list[dict] = []
    base: dict[str, object] = {}  # the full tagger's run, once trained

    def add(name: str, tagger: Tagger, margin, train_s: float, point=None) -> None:
        secs, full_secs, tagged = timed(
            lambda tb: tagger.tag(tb, 1, margin=margin), blank, args.reps, base.get("parse")
        )
        s = evaluate(test, tagged)
        row = {
            "model": name,
            "margin": margin,
            "upos": s.upos,
            "accuracy": (s.upos + s.xpos + s.ufeats + s.lemmas) / 4,
            "templates": point.templates if point else None,
            "upos_templates": point.columns["UPOS"]["templates"] if point else None,
            "words_per_s": words / secs,
            "speedup": full_secs / secs,
            "train_cpu_s": train_s,
        }
        rows.append(row)
        print(
            f"{name:<18} {str(margin):>10} UPOS {s.upos:6.2f} mean {row['accuracy']:6.2f} "
            f"tmpl {row['templates'] or len(tagger.model_.templates('UPOS')):6.2f} "
            f"{row['words_per_s']:>11,.0f} tokens/s",
            flush=True,
        )

    models = Path(args.models) if args.models else None

    def fit(tagger: Tagger, name: str) -> tuple[Tagger, float]:
        path = models / f"{name}.tagger" if models else None
        if path is not None and path.exists():
            return Tagger.load(path), float("nan")
        t0 = time.process_time()
        tagger.fit(train, dev=dev)
        secs = time.process_time() - t0
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tagger.save(path)
        return tagger, secs

    full, full_s = fit(Tagger(order, epochs=epochs, random_state=args.seed), "full")
    add("full", full, None, full_s)
    base["parse"] = lambda tb: full.tag(tb, 1)
    options = training_options(args)
    dyn, dyn_s = fit(
        Tagger(order, epochs=epochs, random_state=args.seed, dynamic=True, **options), "dynamic"
    )
    presets = dyn.margin_presets_
    margins = sorted(
        {presets["accurate"], presets["fast"], *(f * presets["train"] for f in FRACTIONS)}
    )
    for m in margins:
        name = {presets["accurate"]: "dynamic accurate", presets["fast"]: "dynamic fast"}.get(
            m, "dynamic"
        )
        add(name, dyn, m, dyn_s, tag_point(dyn.model_, test, m))
    # Stagewise (§6.1): each template trained alone for one epoch, then frozen.
    sw, sw_s = fit(
        Tagger(order, epochs=1, random_state=args.seed, dynamic=True, stagewise=True), "stagewise"
    )
    sp = sw.margin_presets_
    for m in sorted({sp["accurate"], sp["fast"]}):
        add("stagewise", sw, m, sw_s, tag_point(sw.model_, test, m))
    if not args.no_prefixes:
        for k in TAGGER_PREFIXES:
            t, s = fit(Tagger(order[:k], epochs=epochs, random_state=args.seed), f"fixed{k}")
            add(f"fixed {k}", t, None, s)
    print(f"\n{'model':<18} {'m':>6} {'UPOS':>6} {'mean':>6} {'tmpl':>6} {'speed-up':>8}")
    for r in rows:
        t = r["templates"]
        m = "" if r["margin"] is None else f"{r['margin']:.1f}"
        print(
            f"{r['model']:<18} {m:>6} {r['upos']:6.2f} {r['accuracy']:6.2f} "
            f"{'' if t is None else f'{t:.2f}':>6} {r['speedup']:7.2f}x"
        )
    print(f"training CPU s: full {full_s:.1f}, dynamic {dyn_s:.1f} ({dyn_s / full_s:.2f}x)")
    OUT.mkdir(exist_ok=True)
    (OUT / f"dynamic_tagger_{args.treebank}.json").write_text(
        json.dumps(
            {"presets": presets, "curve": getattr(dyn, "margin_curve_", []), "rows": rows},
            indent=1,
        )
    )
    if args.plot:
        plot(rows, args.plot, args.treebank, score="upos", what="tagger", unit="tokens")


def plot(
    rows: list[dict],
    path: str,
    treebank: str,
    score: str = "las",
    what: str = "arc-eager parser",
    unit: str = "words",
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from depfs.files import atomic_stream

    fig, ax = plt.subplots(figsize=(6, 4))
    styles = (("dynamic", "o-"), ("fixed", "s--"), ("stagewise", "^:"), ("cascade", "D-"))
    for kind, style in styles:
        pts = sorted((r["speedup"], r[score]) for r in rows if r["model"].startswith(kind))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=kind)
    full = rows[0]
    ax.plot([1.0], [full[score]], "k*", markersize=12, label="full model")
    ax.set_xscale("log")
    ax.set_xlabel(f"speed-up over the full model ({unit}/s, one thread, paired; log)")
    ax.set_ylabel(f"{score.upper()}, test")
    ax.set_title(f"Prefix-margin {what}, {treebank}")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with atomic_stream(path) as f:
        fig.savefig(f, format="png", dpi=110)


if __name__ == "__main__":
    main()
