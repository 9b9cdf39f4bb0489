"""Tag, then parse: the depfs tagger in front of the arc-eager parser on untagged test text.

Trains the tagger on train; tags train by 10-fold jackknifing (each fold by a tagger
trained on the others, Strubell et al. 2015); trains the arc-eager parser on the
jackknifed train with the tagger inside (dev tagged by it, the best dev epoch kept) and,
for comparison, the same parser on gold-tagged train. Test has LEMMA, UPOS, XPOS and
FEATS blanked; each parser tags it with the tagger, then parses. Prints UAS / LAS of both
(the one scorer, universal labels) and the tagger's test accuracies.

    python -m benches.bench_pipeline [--treebank en_ewt] [--folds 10]
"""

from __future__ import annotations

import argparse
import time

import depfs

from .bench_arceager import data_dir
from .bench_tagger import blank_tags


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--folds", type=int, default=10)
    args = ap.parse_args(argv)
    d = data_dir() / args.treebank
    train, dev = depfs.read_conllu(d / "train.conllu"), depfs.read_conllu(d / "dev.conllu")
    test_path = d / "test.conllu"
    untagged = depfs.Treebank.from_string(blank_tags(test_path.read_text(encoding="utf-8")))
    t0 = time.perf_counter()
    tagger = depfs.Tagger().fit(train, dev=dev)
    jk = depfs.jackknife(train, folds=args.folds)
    print(f"tagger and {args.folds}-fold jackknifing: {time.perf_counter() - t0:.0f} s")
    tags = depfs.evaluate(test_path, tagger.tag(untagged, threads=1))
    print(
        f"tagger on {args.treebank} test: UPOS {tags.upos:.2f}, XPOS {tags.xpos:.2f}, "
        f"UFeats {tags.ufeats:.2f}, lemmas {tags.lemmas:.2f}"
    )
    for name, tb in [("jackknifed tags", jk), ("gold tags", train)]:
        parser = depfs.ArcEagerParser(tagger=tagger).fit(tb, dev=dev)
        s = depfs.evaluate(test_path, parser.parse(untagged, threads=1))
        print(
            f"arc-eager trained on {name} (epoch {parser.best_epoch_} kept), test tagged by "
            f"the depfs tagger: UAS {s.uas:.2f}, LAS {s.las:.2f}"
        )


if __name__ == "__main__":
    main()
