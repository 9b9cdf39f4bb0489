"""Cascades of kept models on en_ewt dev (or --split): the full model and ordinary models of
its first k templates (fixed<k>.depfs, as `bench_dynamic --models DIR` keeps them; one is
trained, 17 epochs with dev for the epoch kept, when missing), put together for each list
of stages and parsed at each margin. Prints LAS (and its difference to the full model),
templates per move and per label decision (a stage's k, + T at the full model) — the
feasibility measurement behind the cascade (docs/methods.md, "A cascade with a full-model
fallback"). Parsing only: no timing. With --alg2 the stages are the prefix-trained model's
(dynamic.depfs, Algorithm 2) first k templates, cut from it, instead. With --bits the
cascades are trained here (`ArcEagerParser(dynamic=True, cascade=..., cascade_bits=...)`,
dev for the epoch and presets), one per stage list and (move, label) table bits, and kept
as cascade<stages>_b<move>_<label>.depfs (time them with benches.prefix_lazy). With
--pool as well, one full model and every stage model the lists need are trained together,
epoch by epoch, each kept at the full model's best dev epoch — the models `fit` trains for
each cascade (its trainers are independent: the same seed gives the same weights), with
one full model for all; a stage may then have its own bits (`--stages 10@12,9+30@16,12`).

    python -m benches.cascade_dev --models DIR [--stages 10/30/10,30] [--margins 6,8,10]
                                  [--alg2 | --bits 20,15/16,12 [--pool]]
    python -m benches.cascade_dev --models DIR --time full.depfs@inf,a.depfs@15,...
                                  [--split dev] [--rounds 5] [--times 20]

--time runs `benches.prefix_lazy FILE SPLIT --margins M --times N --mean` for each
FILE@M in turn (one process each: its steady state), --rounds times, and prints per
round the ratio of the first's CPU time per parse to each one's (paired ratios against
the first, e.g. the full model) and their medians over the rounds.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import depfs
from depfs.arceager import ArcEagerParser, TrainingSet
from depfs.dynamic.strubell2015 import margin_point
from depfs.templates import TemplateSet

from .bench_arceager import data_dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", required=True, help="full.depfs and fixed<k>.depfs")
    ap.add_argument("--stages", default="10/30/10,30", help="lists of stages, '/' between")
    ap.add_argument("--margins", default="4,6,8,10,12,15")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--seed", type=int, default=1, help="of a fixed-prefix model trained here")
    ap.add_argument("--alg2", action="store_true", help="stages cut from dynamic.depfs")
    ap.add_argument("--bits", help="train cascades with stage tables MOVE,LABEL bits, '/' between")
    ap.add_argument("--pool", action="store_true", help="one full model for all (with --bits)")
    ap.add_argument("--time", help="FILE@MARGIN,... (files in --models): paired CPU-time ratios")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--times", type=int, default=20)
    ap.add_argument(
        "--order",
        default="arc_eager_en_ewt",
        help="the template order the stages are cut from: set name or file [default: %(default)s]",
    )
    args = ap.parse_args()
    if args.time:
        return time_ratios(args)
    if args.bits and args.pool:
        return train_pool(args)
    if args.bits:
        return train_bits(args)
    d = data_dir() / "en_ewt"
    tb = depfs.read_conllu(d / f"{args.split}.conllu")
    models = Path(args.models)
    full = ArcEagerParser.load(models / "full.depfs").model_
    full_las = depfs.evaluate(tb, full.parse(tb, 1, False, None)).las
    print(f"full LAS {full_las:.2f}", flush=True)
    prefix: dict[int, object] = {}

    def stage(k: int) -> object:
        if args.alg2:
            dyn = prefix.setdefault(0, ArcEagerParser.load(models / "dynamic.depfs").model_)
            return dyn.prefix(k)  # type: ignore[attr-defined]
        path = models / f"fixed{k}.depfs"
        if not path.exists():
            train, dev = (depfs.read_conllu(d / f"{s}.conllu") for s in ("train", "dev"))
            order = TemplateSet.load(args.order, "config")
            p = ArcEagerParser(order[:k], epochs=17, random_state=args.seed)
            p.fit(TrainingSet(train), dev=dev).save(path)
        return prefix.setdefault(k, ArcEagerParser.load(path).model_)

    for spec in args.stages.split("/"):
        ks = [int(k) for k in spec.split(",")]
        cascade = full.with_stages([stage(k) for k in ks], 1.0)
        sweep(f"stages {spec:<8}", cascade, tb, args.margins, full_las)


def sweep(label: str, model: Any, tb: Any, margins: str, full_las: float) -> None:
    """One line per margin of `margins` ("M,M,..."): LAS against the full model's,
    templates per move and per label decision."""
    for m in (float(x) for x in margins.split(",")):
        p = margin_point(model, tb, m)
        print(
            f"{label} m {m:5.1f} LAS {p.las:6.2f} ({p.las - full_las:+.2f}) "
            f"tmpl/move {p.move_templates:6.2f} tmpl/label {p.label_templates:6.2f}",
            flush=True,
        )


def train_bits(args: argparse.Namespace) -> None:
    """Trains, keeps and sweeps a cascade per stage list and stage table bits."""
    d = data_dir() / "en_ewt"
    train, dev = (depfs.read_conllu(d / f"{s}.conllu") for s in ("train", "dev"))
    tb = dev if args.split == "dev" else depfs.read_conllu(d / f"{args.split}.conllu")
    prepared = TrainingSet(train)
    for spec in args.stages.split("/"):
        for bits_spec in args.bits.split("/"):
            mb, lb = (int(b) for b in bits_spec.split(","))
            p = ArcEagerParser(
                dynamic=True,
                cascade=tuple(int(k) for k in spec.split(",")),
                cascade_bits=(mb, lb),
                random_state=args.seed,
            ).fit(prepared, dev=dev)
            p.save(Path(args.models) / f"cascade{spec.replace(',', '_')}_b{mb}_{lb}.depfs")
            full_las = depfs.evaluate(tb, p.parse(tb, margin=float("inf"))).las
            print(
                f"stages {spec} bits {mb},{lb} presets {p.margin_presets_} full LAS {full_las:.2f}"
            )
            for m in (float(x) for x in args.margins.split(",")):
                pt = margin_point(p.model_, tb, m)
                print(
                    f"stages {spec:<8} bits {mb},{lb} m {m:5.1f} LAS {pt.las:6.2f} "
                    f"({pt.las - full_las:+.2f}) tmpl/move {pt.move_templates:6.2f} "
                    f"tmpl/label {pt.label_templates:6.2f}",
                    flush=True,
                )


def _pool_specs(args: argparse.Namespace) -> list[tuple[str, list[tuple[int, tuple[int, int]]]]]:
    """(name, [(k, (move bits, label bits))]) per cascade: each stage list with each --bits,
    or a list whose stages carry their own bits (`10@12,9+30@16,12`)."""
    out = []
    for spec in args.stages.split("/"):
        if "@" in spec:
            stages = [
                (int(k), tuple(int(b) for b in bits.split(",")))
                for k, bits in (st.split("@") for st in spec.split("+"))
            ]
            name = "_".join(f"{k}b{b[0]}_{b[1]}" for k, b in stages)
            out.append((name, stages))  # type: ignore[arg-type]
            continue
        for bits_spec in args.bits.split("/"):
            mb, lb = (int(b) for b in bits_spec.split(","))
            ks = [int(k) for k in spec.split(",")]
            out.append((f"{'_'.join(map(str, ks))}_b{mb}_{lb}", [(k, (mb, lb)) for k in ks]))
    return out


def pool_models(
    maker: ArcEagerParser,
    train: object,
    dev: depfs.Treebank,
    order: TemplateSet,
    need: list[tuple[int, tuple[int, int]]],
) -> tuple[object, dict[tuple[int, tuple[int, int]], object]]:
    """The full model of `order` and a stage model per (k, (move bits, label bits)) in
    `need`, trained by `maker`'s trainers (its options: seed, epochs, ...) together, epoch
    by epoch, and kept at the full model's best dev epoch: the models
    `ArcEagerParser(..., cascade=(k, ...), cascade_bits=bits).fit(train, dev=dev)` trains
    (its trainers are independent). O(epochs · (T + Σ k) · training set)."""
    full_t = maker._core_trainer(train, order.text, False)  # type: ignore[arg-type]
    stage_t = {st: maker._core_trainer(train, order[: st[0]].text, False, st[1]) for st in need}  # type: ignore[arg-type]
    best: tuple[float, object, dict] | None = None
    for epoch in range(maker.epochs):
        for t in stage_t.values():
            t.epoch()
        full_t.epoch()
        full = full_t.model()
        las = depfs.evaluate(dev, full.parse(dev, 1, False, None)).las
        print(f"epoch {epoch + 1} full dev LAS {las:.2f}", flush=True)
        if best is None or las > best[0]:  # as fit: the first best epoch
            best = (las, full, {st: t.model() for st, t in stage_t.items()})
    assert best is not None
    return best[1], best[2]


def train_pool(args: argparse.Namespace) -> None:
    """Trains one full model and every stage model of the cascades together (as `fit`
    trains each cascade: the same trainers, kept at the full model's best dev epoch),
    then sweeps each cascade on --split, chooses its presets on dev as `fit` does and
    keeps it as cascade<name>.depfs."""
    from depfs.arceager import CASCADE_MARGIN
    from depfs.dynamic.strubell2015 import fit_presets

    d = data_dir() / "en_ewt"
    train, dev = (depfs.read_conllu(d / f"{s}.conllu") for s in ("train", "dev"))
    tb = dev if args.split == "dev" else depfs.read_conllu(d / f"{args.split}.conllu")
    specs = _pool_specs(args)
    need = sorted({st for _, stages in specs for st in stages})
    maker = ArcEagerParser(dynamic=True, cascade=(1,), random_state=args.seed)
    order = TemplateSet.load(args.order, "config")
    full, stage_m = pool_models(maker, TrainingSet(train), dev, order, need)
    full_las = depfs.evaluate(tb, full.parse(tb, 1, False, None)).las  # type: ignore[attr-defined]
    print(f"full LAS {full_las:.2f}", flush=True)
    for name, stages in specs:
        cascade = full.with_stages([stage_m[st] for st in stages], CASCADE_MARGIN)  # type: ignore[attr-defined]
        model, _ = fit_presets(cascade, dev)
        ArcEagerParser.from_model(model).save(Path(args.models) / f"cascade{name}.depfs")
        print(f"cascade {name} presets {model.margin_presets}", flush=True)
        sweep(f"cascade {name:<18}", model, tb, args.margins, full_las)


def time_ratios(args: argparse.Namespace) -> None:
    """Paired steady-state CPU-time ratios of each FILE@M against the first, in turn."""
    import os
    import re
    import statistics
    import subprocess
    import sys

    split = data_dir() / "en_ewt" / f"{args.split}.conllu"
    runs = [spec.rsplit("@", 1) for spec in args.time.split(",")]
    ratios: list[list[float]] = [[] for _ in runs]
    for r in range(args.rounds):
        secs = []
        for path, m in runs:
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "benches.prefix_lazy",
                    os.fspath(Path(args.models) / path),
                    os.fspath(split),
                    "--margins",
                    m,
                    "--times",
                    str(args.times),
                    "--mean",
                ],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            found = re.search(r"LAS ([\d.]+) mean CPU ([\d.]+) s", out)
            assert found, out
            secs.append((float(found.group(1)), float(found.group(2))))
        for i, (_, s) in enumerate(secs):
            ratios[i].append(secs[0][1] / s)
        print(
            f"round {r + 1} (load {os.getloadavg()[0]:.1f}): "
            + "  ".join(
                f"{p}@{m} {las:.2f} {s:.4f}s {secs[0][1] / s:.2f}x"
                for (p, m), (las, s) in zip(runs, secs)
            ),
            flush=True,
        )
    for (p, m), rs in zip(runs, ratios):
        print(f"{p}@{m}: median {statistics.median(rs):.2f}x ({min(rs):.2f}-{max(rs):.2f})")


if __name__ == "__main__":
    main()
