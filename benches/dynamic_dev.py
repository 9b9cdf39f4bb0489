"""One dev experiment of prefix-margin training for the arc-eager parser: trains a dynamic
model with the given training options on en_ewt train (the epoch kept by dev LAS at the
training margin), prints its dev LAS by epoch and training CPU time, and parses dev at
fractions of the training margin (LAS, UAS, templates per move and per label decision).
The table of docs/methods.md "Perceptron steps and the full sum" was made with it:

    python -m benches.dynamic_dev [--update perceptron|adagrad] [--full-sum S]
                                  [--margin M] [--l2 L] [--seed 1] [--fracs 0.6,1,1.5,inf]
    python -m benches.dynamic_dev --ordinary      # the full model's dev LAS

With --parser tagger the same for the tagger on `tagger_en_ewt` (10 epochs, the last one
kept: trained without dev), tagging dev at fractions of the training margin (UPOS, the mean
of the four columns, templates per column decision); the tagger table of that section:

    python -m benches.dynamic_dev --parser tagger [--update U] [--full-sum S] [--margin M]
                                  [--fracs 0.8,1,1.5,inf]
    python -m benches.dynamic_dev --parser tagger --ordinary
"""

from __future__ import annotations

import argparse
import time

import depfs
from depfs.arceager import ArcEagerParser, TrainingSet
from depfs.dynamic.strubell2015 import margin_point, tag_point
from depfs.evaluate import evaluate
from depfs.templates import TemplateSet

from .bench_arceager import data_dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parser", choices=("arc-eager", "tagger"), default="arc-eager")
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--update", default="perceptron")
    ap.add_argument("--full-sum", type=float, default=None, help="[ArcEagerParser's]")
    ap.add_argument("--margin", type=float, default=None, help="[TRAIN_MARGIN of the update]")
    ap.add_argument("--l2", type=float, default=None, help="[ArcEagerParser's]")
    ap.add_argument("--epochs", type=int, default=None, help="[arc-eager 17, tagger 10]")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ordinary", action="store_true", help="the full model instead")
    ap.add_argument("--fracs", default="0.2,0.4,0.6,0.8,1.0,1.1,1.2,1.3,1.5,inf")
    a = ap.parse_args()
    d = data_dir() / a.treebank
    train, dev = (depfs.read_conllu(d / f"{s}.conllu") for s in ("train", "dev"))
    order = TemplateSet.load("arc_eager_en_ewt")
    options = {
        k: v
        for k, v in (("full_sum", a.full_sum), ("train_margin", a.margin), ("l2", a.l2))
        if v is not None
    }
    if a.parser == "tagger":
        return tagger_dev(a, train, dev, options)
    p = ArcEagerParser(
        order,
        epochs=a.epochs or 17,
        random_state=a.seed,
        **({} if a.ordinary else {"dynamic": True, "update": a.update, **options}),
    )
    t0 = time.process_time()
    p.fit(TrainingSet(train), dev=dev)
    print(f"training CPU s {time.process_time() - t0:.1f}, epoch kept {p.best_epoch_}")
    print("dev LAS by epoch:", [round(r["dev_las"], 2) for r in p.history_])
    if a.ordinary:
        s = evaluate(dev, p.parse(dev, 1))
        print(f"full model: LAS {s.las:.2f} UAS {s.uas:.2f}")
        return
    train_m = p.margin_presets_["train"]
    print("presets", p.margin_presets_)
    for f in a.fracs.split(","):
        m = float("inf") if f == "inf" else float(f) * train_m
        pt = margin_point(p.model_, dev, m)
        print(
            f"m {m:9.1f} LAS {pt.las:6.2f} UAS {pt.uas:6.2f} "
            f"templates/move {pt.move_templates:6.2f} /label {pt.label_templates:6.2f}",
            flush=True,
        )


def tagger_dev(a: argparse.Namespace, train, dev, options: dict) -> None:
    """The tagger's experiment (see the module doc)."""
    t = depfs.Tagger(
        "tagger_en_ewt",
        epochs=a.epochs or 10,
        random_state=a.seed,
        **({} if a.ordinary else {"dynamic": True, "update": a.update, **options}),
    )
    t0 = time.process_time()
    t.fit(train)
    print(f"training CPU s {time.process_time() - t0:.1f}")
    presets = t.margin_presets_
    fracs = ["inf"] if presets is None else a.fracs.split(",")
    for f in fracs:
        m = float("inf") if f == "inf" else float(f) * presets["train"]
        pt = tag_point(t.model_, dev, m)
        print(
            f"m {m:9.1f} UPOS {pt.columns['UPOS']['accuracy']:6.2f} mean {pt.accuracy:6.2f} "
            f"templates/decision {pt.templates:6.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
