"""Tag, then parse: the depfs tagger in front of the arc-eager parser on untagged test text.

Trains the tagger on train; tags train by 10-fold jackknifing (each fold by a tagger
trained on the others, Strubell et al. 2015); trains the arc-eager parser on the
jackknifed train with the tagger inside (dev tagged by it, the best dev epoch kept) and,
for comparison, the same parser on gold-tagged train. Test has LEMMA, UPOS, XPOS and
FEATS blanked; each parser tags it with the tagger, then parses. Prints UAS / LAS of both
(the one scorer, universal labels) and the tagger's test accuracies; the time of each step
(tagger training, jackknifing, each parser's training with dev scoring: wall and CPU
seconds), and the gold-trained parser's scores on test with its gold tags; the jackknifed
train's tag accuracies against the gold train, and whether every other column and comment
of it is byte-identical to train's.

    python -m benches.bench_pipeline [--treebank en_ewt] [--folds 10] [--clusters FILE]
        [--parser-clusters] [--compare R] [--seed 1] [--cache DIR] [--with-gold]

--clusters FILE: the tagger and the jackknifing taggers read that Brown-cluster paths file
(`Tagger(clusters=FILE)`, whose default templates are then `CLUSTER_SETS`).
--parser-clusters: the parsers read it too (`ArcEagerParser(clusters=FILE)`, whose default
templates are then `depfs.arceager.CLUSTER_TEMPLATES`).
--compare R (with --parser-clusters): also train the parser without clusters on the
jackknifed tags and print its test scores; then time both parsers parsing the tagged test
(one thread, parse only) in R rounds, alternating which goes first, and print each one's
median words per CPU second and the median of the paired ratios.
--with-gold: also train the parser on the jackknifed and the gold train together (each
sentence twice per epoch, once with each tags; `depfs train --train JK --train GOLD`) and
print its test scores; with --compare, time it against the parser trained on jackknifed
tags alone in the same way.
--cache DIR: keep the trained tagger and the jackknifed train in DIR and reuse them when a
later run asks for the same treebank, folds and clusters (their times are then not printed).
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
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
    ap.add_argument(
        "--parser-clusters", action="store_true", help="the parsers read --clusters too"
    )
    ap.add_argument("--cache", default=None, help="a directory for the tagger and jackknifed train")
    ap.add_argument(
        "--compare", type=int, default=0, help="rounds of the paired speed comparison (0: none)"
    )
    ap.add_argument(
        "--with-gold",
        action="store_true",
        help="also train the parser on the jackknifed and the gold train together",
    )
    args = ap.parse_args(argv)
    if args.parser_clusters and args.clusters is None:
        ap.error("--parser-clusters needs --clusters FILE")
    d = data_dir() / args.treebank
    train, dev = depfs.read_conllu(d / "train.conllu"), depfs.read_conllu(d / "dev.conllu")
    test_path = d / "test.conllu"
    untagged = depfs.Treebank.from_string(blank_tags(test_path.read_text(encoding="utf-8")))
    gold_test = depfs.read_conllu(test_path)
    tagger_file = jk_file = None
    if args.cache is not None:
        # Keyed by what decides them: the treebank, the folds and the cluster file's bytes.
        cl = b"" if args.clusters is None else Path(args.clusters).read_bytes()
        key = hashlib.sha256(f"{args.treebank}/{args.folds}/".encode() + cl).hexdigest()[:16]
        Path(args.cache).mkdir(parents=True, exist_ok=True)
        tagger_file = Path(args.cache) / f"tagger-{key}.depfs"
        jk_file = Path(args.cache) / f"train-jk-{key}.conllu"
    if tagger_file is not None and tagger_file.exists():
        tagger = depfs.load(tagger_file)
        print(f"tagger: cached {tagger_file}")
    else:
        tagger = timed(
            "tagger training", lambda: depfs.Tagger(clusters=args.clusters).fit(train, dev=dev)
        )
        if tagger_file is not None:
            tagger.save(tagger_file)
    if jk_file is not None and jk_file.exists():
        jk = depfs.read_conllu(jk_file)
        print(f"{args.folds}-fold jackknifing: cached {jk_file}")
    else:
        jk = timed(
            f"{args.folds}-fold jackknifing",
            lambda: depfs.jackknife(train, folds=args.folds, clusters=args.clusters),
        )
        if jk_file is not None:
            jk_file.write_text(jk.to_string(), encoding="utf-8")
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
    parser_clusters = args.clusters if args.parser_clusters else None
    runs = [("jackknifed tags", jk, parser_clusters), ("gold tags", train, parser_clusters)]
    if args.with_gold:
        both = depfs.Treebank.from_string(jk.to_string() + train.to_string())
        runs.append(("jackknifed and gold tags together", both, parser_clusters))
    compare = bool(args.compare and parser_clusters)
    if compare:
        runs.append(("jackknifed tags", jk, None))
    parsers = []
    for name, tb, clusters in runs:
        which = "with word clusters" if clusters else "without word clusters"
        parser = depfs.ArcEagerParser(tagger=tagger, random_state=args.seed, clusters=clusters)
        parsers.append(parser)
        timed(
            f"arc-eager training on {name} ({epochs} epochs, dev scored after each)",
            partial(parser.fit, tb, dev=dev),
        )
        s = depfs.evaluate(test_path, parser.parse(untagged, threads=1))
        print(
            f"arc-eager {which} trained on {name} (epoch {parser.best_epoch_} kept), test "
            f"tagged by the depfs tagger: UAS {s.uas:.2f}, LAS {s.las:.2f}"
        )
        if tb is train:  # the gold-trained parser on gold-tagged test as well
            g = depfs.evaluate(test_path, parser.parse(gold_test, threads=1, tag=False))
            print(
                f"arc-eager {which} trained on gold tags, test with its gold tags: "
                f"UAS {g.uas:.2f}, LAS {g.las:.2f}"
            )
    if compare:
        tagged = tagger.tag(untagged, threads=1)
        pair = ("with clusters", "without")
        paired_speed(parsers[0], parsers[-1], tagged, args.compare, pair)
        if args.with_gold:
            pair = ("trained on jackknifed and gold tags", "on jackknifed tags")
            paired_speed(parsers[2], parsers[0], tagged, args.compare, pair)


def paired_speed(
    a: depfs.ArcEagerParser,
    b: depfs.ArcEagerParser,
    test: depfs.Treebank,
    rounds: int,
    names: tuple[str, str],
) -> None:
    """Words per CPU second of `a` and `b` (`names`) parsing `test` (tagged), one thread,
    alternating which goes first; medians and the median paired ratio of a's time to b's."""
    import statistics

    def cpu(p: depfs.ArcEagerParser) -> float:
        c0 = time.process_time()
        p.parse(test, threads=1, tag=False)
        return time.process_time() - c0

    n = test.n_words
    ta, tb = [], []
    for r in range(rounds):
        if r % 2:
            tb.append(cpu(b))
            ta.append(cpu(a))
        else:
            ta.append(cpu(a))
            tb.append(cpu(b))
    ratio = statistics.median(x / y for x, y in zip(ta, tb))
    print(
        f"parse speed, tagged test, one thread, {rounds} alternating rounds: {names[0]} "
        f"{n / statistics.median(ta):,.0f} words/CPU-s, {names[1]} "
        f"{n / statistics.median(tb):,.0f}; "
        f"median paired time ratio {ratio:.3f}x"
    )


if __name__ == "__main__":
    main()
