"""Tag, then parse: the depfs tagger in front of the arc-eager parser on untagged test text.

Trains the tagger on train; tags train by 10-fold jackknifing (each fold by a tagger
trained on the others, Strubell et al. 2015); trains the arc-eager parser on the
jackknifed train with the tagger inside (dev tagged by it, the best dev epoch kept) and,
for comparison, the same parser on gold-tagged train. Test has LEMMA, UPOS, XPOS and
FEATS blanked; each parser tags it with the tagger, then parses. Prints UAS / LAS of both
(the one scorer, universal labels) and the tagger's test accuracies; the time of each step
(tagger training, jackknifing, each parser's training with dev scoring: wall and CPU
seconds); the jackknifed train's tag accuracies against the gold train, and whether every
other column and comment of it is byte-identical to train's.

    python -m benches.bench_pipeline [--treebank en_ewt] [--folds 10] [--clusters FILE]

--clusters FILE: the tagger and the jackknifing taggers read that Brown-cluster paths file
(`Tagger(clusters=FILE)`, whose default templates are then `CLUSTER_SETS`).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial
from typing import TypeVar

import depfs

from .bench_arceager import data_dir
from .bench_tagger import blank_tags

T = TypeVar("T")
#: CoNLL-U columns the tagger predicts (0-based): LEMMA, UPOS, XPOS, FEATS.
TAG_COLUMNS = (2, 3, 4, 5)


def timed(what: str, fn: Callable[[], T]) -> T:
    """fn(), its wall and CPU seconds printed."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    print(f"{what}: {time.perf_counter() - t0:.0f} s wall ({time.process_time() - c0:.0f} s CPU)")
    return out


def other_columns_identical(a: str, b: str) -> bool:
    """Whether two CoNLL-U texts agree byte for byte outside the tagger's four columns."""
    la, lb = a.splitlines(), b.splitlines()
    if len(la) != len(lb):
        return False
    for x, y in zip(la, lb):
        cx, cy = x.split("\t"), y.split("\t")
        if len(cx) == 10 and len(cy) == 10:
            cx = [c for i, c in enumerate(cx) if i not in TAG_COLUMNS]
            cy = [c for i, c in enumerate(cy) if i not in TAG_COLUMNS]
        if cx != cy:
            return False
    return True


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--clusters", default=None, help="a Brown-cluster paths file")
    ap.add_argument(
        "--seed", type=int, default=1, help="the parsers' seed (the taggers keep theirs)"
    )
    args = ap.parse_args(argv)
    d = data_dir() / args.treebank
    train, dev = depfs.read_conllu(d / "train.conllu"), depfs.read_conllu(d / "dev.conllu")
    test_path = d / "test.conllu"
    untagged = depfs.Treebank.from_string(blank_tags(test_path.read_text(encoding="utf-8")))
    tagger = timed(
        "tagger training", lambda: depfs.Tagger(clusters=args.clusters).fit(train, dev=dev)
    )
    jk = timed(
        f"{args.folds}-fold jackknifing",
        lambda: depfs.jackknife(train, folds=args.folds, clusters=args.clusters),
    )
    acc = depfs.evaluate(train, jk)
    same = other_columns_identical(train.to_string(), jk.to_string())
    print(
        f"jackknifed train against gold train: UPOS {acc.upos:.2f}, XPOS {acc.xpos:.2f}, "
        f"UFeats {acc.ufeats:.2f}, lemmas {acc.lemmas:.2f}; every other column and comment "
        f"byte-identical: {same}"
    )
    tags = depfs.evaluate(test_path, tagger.tag(untagged, threads=1))
    print(
        f"tagger on {args.treebank} test: UPOS {tags.upos:.2f}, XPOS {tags.xpos:.2f}, "
        f"UFeats {tags.ufeats:.2f}, lemmas {tags.lemmas:.2f}"
    )
    epochs = depfs.ArcEagerParser().epochs
    for name, tb in [("jackknifed tags", jk), ("gold tags", train)]:
        parser = depfs.ArcEagerParser(tagger=tagger, random_state=args.seed)
        timed(
            f"arc-eager training on {name} ({epochs} epochs, dev scored after each)",
            partial(parser.fit, tb, dev=dev),
        )
        s = depfs.evaluate(test_path, parser.parse(untagged, threads=1))
        print(
            f"arc-eager trained on {name} (epoch {parser.best_epoch_} kept), test tagged by "
            f"the depfs tagger: UAS {s.uas:.2f}, LAS {s.las:.2f}"
        )


if __name__ == "__main__":
    main()
