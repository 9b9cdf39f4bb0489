"""The tagger on en_ewt (or --treebank) against UDPipe 1 in the same run.

Trains depfs's tagger on train (default template set, one core; wall time), tags test
with LEMMA, UPOS, XPOS and FEATS blanked on one thread (best of --reps runs; CoNLL-U
in memory, reading and writing excluded on both sides), and scores it with the one scorer
(CoNLL 2018 definitions on gold words). UDPipe 1 (`ufal.udpipe`): a tagger-only model
(its default MorphoDiTa tagger and lemmatizer with one training iteration instead of 20:
enough for timing, since tagging reads the same features whatever the weights; tokenizer
and parser off) trained on the same file once and cached in bench-results/; its
`Pipeline` is timed on the same blanked text with the tagger on and the parser off. Its
accuracy here is that of the one-iteration model: compare accuracy with UDPipe 1's
published en_ewt model (UPOS 94.4, XPOS 93.9, UFeats 95.4, lemmas 96.8, UD 2.3).

    python -m benches.bench_tagger [--treebank en_ewt] [--reps 3] [--skip-udpipe]

Prints a table and writes bench-results/tagger_<treebank>.json.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import depfs
from depfs import Tagger, Treebank, evaluate

from .bench_arceager import data_dir, udpipe_sentences

OUT = Path("bench-results")


def blank_tags(conllu: str) -> str:
    """LEMMA, UPOS, XPOS and FEATS set to `_` on every word line."""
    out = []
    for line in conllu.splitlines():
        cols = line.split("\t")
        if len(cols) == 10:
            cols[2:6] = ["_"] * 4
            line = "\t".join(cols)
        out.append(line)
    return "\n".join(out) + "\n"


def udpipe_model(train_path: Path, cache: Path) -> tuple[object, float | None]:
    from ufal.udpipe import Model, ProcessingError, Sentences, Trainer

    train_s = None
    if not cache.exists():
        sents, err = udpipe_sentences(train_path), ProcessingError()
        t0 = time.perf_counter()
        model = Trainer.train(
            "morphodita_parsito", sents, Sentences(), "none", "iterations=1", "none", err
        )
        train_s = time.perf_counter() - t0
        if err.occurred():
            raise RuntimeError(err.message)
        cache.parent.mkdir(exist_ok=True)
        cache.write_bytes(model.encode("latin-1") if isinstance(model, str) else model)
    return Model.load(str(cache)), train_s


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--skip-udpipe", action="store_true")
    args = ap.parse_args(argv)
    d = data_dir() / args.treebank
    train, dev = depfs.read_conllu(d / "train.conllu"), depfs.read_conllu(d / "dev.conllu")
    gold_text = (d / "test.conllu").read_text(encoding="utf-8")
    gold = Treebank.from_string(gold_text)
    test_blank = blank_tags(gold_text)
    blank_tb = Treebank.from_string(test_blank)

    tagger = Tagger() if args.epochs is None else Tagger(epochs=args.epochs)
    t0 = time.perf_counter()
    tagger.fit(train, dev=dev)
    train_s = time.perf_counter() - t0
    times = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        tagged = tagger.tag(blank_tb, threads=1)
        times.append(time.perf_counter() - t0)
    s = evaluate(gold, tagged)
    words = gold.n_words
    result: dict[str, object] = {
        "treebank": args.treebank,
        "words": words,
        "depfs": {
            "train_s": round(train_s, 1),
            "best_epoch": tagger.best_epoch_,
            "tag_s": min(times),
            "tokens_per_s": round(words / min(times)),
            **{k: round(getattr(s, k), 2) for k in ("upos", "xpos", "ufeats", "alltags", "lemmas")},
        },
    }
    print(f"{args.treebank} test, {words} words, tags blanked")
    print(
        f"depfs   train {train_s:.1f}s (best epoch {tagger.best_epoch_})  "
        f"{words / min(times):,.0f} tokens/s  UPOS {s.upos:.2f} XPOS {s.xpos:.2f} "
        f"UFeats {s.ufeats:.2f} AllTags {s.alltags:.2f} Lemmas {s.lemmas:.2f}"
    )
    if not args.skip_udpipe:
        from ufal.udpipe import Pipeline, ProcessingError

        model, u_train_s = udpipe_model(
            d / "train.conllu", OUT / f"udpipe1_tagger_iter1_{args.treebank}.model"
        )
        pipe = Pipeline(model, "conllu", Pipeline.DEFAULT, Pipeline.NONE, "conllu")
        err = ProcessingError()
        u_times = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            out = pipe.process(test_blank, err)
            u_times.append(time.perf_counter() - t0)
        if err.occurred():
            raise RuntimeError(err.message)
        us = evaluate(gold, Treebank.from_string(out))
        result["udpipe1"] = {
            "train_s": None if u_train_s is None else round(u_train_s, 1),
            "tag_s": min(u_times),
            "tokens_per_s": round(words / min(u_times)),
            **{
                k: round(getattr(us, k), 2) for k in ("upos", "xpos", "ufeats", "alltags", "lemmas")
            },
        }
        result["speed_ratio"] = round(min(u_times) / min(times), 1)
        print(
            f"UDPipe1 {words / min(u_times):,.0f} tokens/s  UPOS {us.upos:.2f} XPOS {us.xpos:.2f} "
            f"UFeats {us.ufeats:.2f} AllTags {us.alltags:.2f} Lemmas {us.lemmas:.2f}  "
            f"(depfs {result['speed_ratio']}x faster)"
        )
    OUT.mkdir(exist_ok=True)
    (OUT / f"tagger_{args.treebank}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
