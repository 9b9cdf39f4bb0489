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
as cascade<stages>_b<move>_<label>.depfs (time them with benches.prefix_lazy).

    python -m benches.cascade_dev --models DIR [--stages 10/30/10,30] [--margins 6,8,10]
                                  [--alg2 | --bits 20,15/16,12]
"""

from __future__ import annotations

import argparse
from pathlib import Path

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
    args = ap.parse_args()
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
            order = TemplateSet.load("arc_eager_en_ewt")
            p = ArcEagerParser(order[:k], epochs=17, random_state=args.seed)
            p.fit(TrainingSet(train), dev=dev).save(path)
        return prefix.setdefault(k, ArcEagerParser.load(path).model_)

    for spec in args.stages.split("/"):
        ks = [int(k) for k in spec.split(",")]
        cascade = full.with_stages([stage(k) for k in ks], 1.0)
        for m in (float(x) for x in args.margins.split(",")):
            p = margin_point(cascade, tb, m)
            print(
                f"stages {spec:<8} m {m:5.1f} LAS {p.las:6.2f} ({p.las - full_las:+.2f}) "
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


if __name__ == "__main__":
    main()
