"""The tagger on en_ewt (or --treebank) against UDPipe 1 in the same run.

Trains depfs's tagger on train (default template set, one core; wall and CPU time), tags
test with LEMMA, UPOS, XPOS and FEATS blanked on one thread, and scores it with the one scorer
(CoNLL 2018 definitions on gold words). UDPipe 1 (`ufal.udpipe`): a tagger-only model
(its default MorphoDiTa tagger and lemmatizer with one training iteration instead of 20:
enough for timing, since tagging reads the same features whatever the weights; tokenizer
and parser off) trained on the same file once and cached in bench-results/; its
`Pipeline` is timed on the same blanked text with the tagger on and the parser off.
Timing: --reps rounds, each tagging with depfs then with UDPipe 1 (alternating, odd rounds in
the reverse order, CoNLL-U in memory, reading and writing excluded on both sides); speeds
are from the median CPU time of the process (`time.process_time`, less sensitive than wall
time to other jobs on a shared machine; the median wall time is printed too), the ratio is
of the two medians, and the load average is printed. Its
accuracy here is that of the one-iteration model: compare accuracy with UDPipe 1's
published en_ewt model (UPOS 94.4, XPOS 93.9, UFeats 95.4, lemmas 96.8, UD 2.3).

    python -m benches.bench_tagger [--treebank en_ewt] [--reps 5] [--skip-udpipe]
        [--templates SET] [--min-known N] [--epochs N] [--baseline] [--plain] [--previous]
        [--clusters FILE] [--no-rules] [--upos-pass]

--baseline also trains the tagger as it was before per-column sets and line-local hashing
(the single `tagger` set for every column, min_known 2, the earlier weight layout) and times
it in the same rounds (A B C A B C ...): the paired ratio of this build's default to it.
--plain does the same for the default before the backward pass (`PLAIN_SETS`, no backward
pass, one dictionary threshold of 2, no case rule): what the pass and its sets cost and gain.
--previous does it for the default before the case rule and `tagger_upos_caps` (`BIDI_SETS`
with the backward pass, `cased=False`).
--clusters FILE trains the tagger with that Brown-cluster paths file (`Tagger(clusters=FILE)`:
the default templates are then `CLUSTER_SETS`) and, as the paired comparison, the default
without clusters, timed in the same rounds; it also prints both model files' sizes and
the median time of `depfs.load` of each (--reps loads, alternating).
--no-rules also trains the tagger without the candidate rules (`Tagger(rules=False)`: the
dictionary's XPOS, FEATS and lemma candidates alone, docs/design.md § Tagger, "Candidate
rules"), with the same clusters if any, and times it in the same rounds.
--upos-pass also trains the default before its backward pass predicted XPOS (a UPOS pass and
`UPOS_PASS_SETS`, or `UPOS_PASS_CLUSTER_SETS` with --clusters; docs/design.md § Tagger, "The
backward pass predicting XPOS") and times it in the same rounds.

Prints a table and writes bench-results/tagger_<treebank>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import depfs
from depfs import Tagger, Treebank, evaluate
from depfs.tagger import (
    BIDI_SETS,
    DEFAULT_BACKWARD,
    PLAIN_SETS,
    UPOS_PASS_CLUSTER_SETS,
    UPOS_PASS_SETS,
)

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


def scores(s: object) -> dict[str, float]:
    """The tag scores of an evaluation, rounded."""
    return {k: round(getattr(s, k), 2) for k in ("upos", "xpos", "ufeats", "alltags", "lemmas")}


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


def model_files(with_c: Tagger, without: Tagger, reps: int, blank_tb: Any) -> dict[str, object]:
    """Sizes of the two models' files, the median wall time of `depfs.load` of each
    (`reps` loads, alternating) and the tokens per CPU second of each model as loaded (as
    `depfs tag` runs it: its weights read from the file; `reps` taggings of `blank_tb`,
    alternating, median), printed."""
    import tempfile

    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {"clusters": Path(tmp) / "c.depfs", "no_clusters": Path(tmp) / "n.depfs"}
        with_c.save(paths["clusters"])
        without.save(paths["no_clusters"])
        loads: dict[str, list[float]] = {k: [] for k in paths}
        for _ in range(reps):
            for k, p in paths.items():
                t0 = time.perf_counter()
                depfs.load(p)
                loads[k].append(time.perf_counter() - t0)
        loaded = {k: depfs.load(p) for k, p in paths.items()}
        tag_cpu: dict[str, list[float]] = {k: [] for k in paths}
        for r in range(reps):
            for k in paths if r % 2 == 0 else list(paths)[::-1]:
                c0 = time.process_time()
                loaded[k].tag(blank_tb, threads=1)
                tag_cpu[k].append(time.process_time() - c0)
        for k, p in paths.items():
            size, load_s = p.stat().st_size, statistics.median(loads[k])
            speed = round(blank_tb.n_words / statistics.median(tag_cpu[k]))
            out[k] = {"bytes": size, "load_s": round(load_s, 4), "tokens_per_cpu_s_loaded": speed}
            print(
                f"model file, {k}: {size:,} bytes, depfs.load {load_s * 1000:.0f} ms (median); "
                f"as loaded {speed:,} tokens/CPU-s"
            )
    table = with_c.model_.clusters
    if table is not None:
        out["table"] = {"words": table[0], "clusters": table[1]}
        print(f"cluster table: {table[0]:,} words, {table[1]:,} clusters")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--templates", default=None, help="a set name or file (default: the tagger's)")
    ap.add_argument("--min-known", type=int, default=None)
    ap.add_argument("--baseline", action="store_true")
    ap.add_argument("--plain", action="store_true")
    ap.add_argument("--previous", action="store_true")
    ap.add_argument("--skip-udpipe", action="store_true")
    ap.add_argument("--clusters", default=None, help="a Brown-cluster paths file")
    ap.add_argument("--no-rules", action="store_true", help="also the tagger without rules")
    ap.add_argument("--upos-pass", action="store_true", help="also the tagger with a UPOS pass")
    args = ap.parse_args(argv)
    d = data_dir() / args.treebank
    train, dev = depfs.read_conllu(d / "train.conllu"), depfs.read_conllu(d / "dev.conllu")
    gold_text = (d / "test.conllu").read_text(encoding="utf-8")
    gold = Treebank.from_string(gold_text)
    test_blank = blank_tags(gold_text)
    blank_tb = Treebank.from_string(test_blank)

    opts = {
        k: v for k, v in (("epochs", args.epochs), ("min_known", args.min_known)) if v is not None
    }
    tagger = Tagger(args.templates, clusters=args.clusters, **opts)
    t0, c0 = time.perf_counter(), time.process_time()
    tagger.fit(train, dev=dev)
    train_s, train_cpu = time.perf_counter() - t0, time.process_time() - c0
    base = None
    if args.baseline:
        base = Tagger("tagger", min_known=2, line_hashing=False).fit(train, dev=dev)
    plain = None
    if args.plain:
        plain = Tagger(PLAIN_SETS, cased=False, **opts).fit(train, dev=dev)
    prev = None
    if args.previous:
        prev = Tagger(
            BIDI_SETS, backward=DEFAULT_BACKWARD, cased=False, backward_xpos=False, **opts
        ).fit(train, dev=dev)
    plain_default = None
    if args.clusters:
        plain_default = Tagger(args.templates, **opts).fit(train, dev=dev)
    no_rules = None
    if args.no_rules:
        no_rules = Tagger(args.templates, clusters=args.clusters, rules=False, **opts)
        no_rules.fit(train, dev=dev)
    upos_pass = None
    if args.upos_pass:
        sets = UPOS_PASS_SETS if args.clusters is None else UPOS_PASS_CLUSTER_SETS
        upos_pass = Tagger(
            sets, backward=DEFAULT_BACKWARD, clusters=args.clusters, backward_xpos=False, **opts
        ).fit(train, dev=dev)
    pipe = None
    if not args.skip_udpipe:
        from ufal.udpipe import Pipeline, ProcessingError

        model, u_train_s = udpipe_model(
            d / "train.conllu", OUT / f"udpipe1_tagger_iter1_{args.treebank}.model"
        )
        pipe = Pipeline(model, "conllu", Pipeline.DEFAULT, Pipeline.NONE, "conllu")
        err = ProcessingError()

    def timed(call: object) -> tuple[object, float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        out = call()  # type: ignore[operator]
        return out, time.process_time() - c0, time.perf_counter() - t0

    load_before = os.getloadavg()[0]
    times: list[tuple[float, float]] = []
    u_times: list[tuple[float, float]] = []
    b_times: list[float] = []
    p_times: list[float] = []
    v_times: list[float] = []
    n_times: list[float] = []
    r_times: list[float] = []
    x_times: list[float] = []
    # Each round times every model once; odd rounds in the reverse order (A B C, C B A, ...),
    # so that no model always runs first or after the same one (the default first in every
    # round had made a model with a cluster table look 1.15-1.18x slower than the one after
    # it, 1.08x in reversed rounds).
    out_of: dict[str, object] = {}
    runs: list[tuple[str, Any, list[Any]]] = [("default", tagger, times)]
    # (Not named `model`: that name holds UDPipe's model, which `pipe` needs alive.)
    for key, timed_model, acc in (
        ("base", base, b_times),
        ("plain", plain, p_times),
        ("prev", prev, v_times),
        ("nocl", plain_default, n_times),
        ("norules", no_rules, r_times),
        ("upospass", upos_pass, x_times),
    ):
        if timed_model is not None:
            runs.append((key, timed_model, acc))
    if pipe is not None:
        runs.append(("udpipe", pipe, u_times))
    for r in range(args.reps):
        for key, timed_model, acc in runs if r % 2 == 0 else runs[::-1]:
            if key == "udpipe":
                out_of[key], u_cpu, u_wall = timed(lambda: pipe.process(test_blank, err))
                acc.append((u_cpu, u_wall))
            else:
                out_of[key], t_cpu, t_wall = timed(lambda m=timed_model: m.tag(blank_tb, threads=1))
                acc.append((t_cpu, t_wall) if key == "default" else t_cpu)
    tagged = out_of["default"]
    base_tagged, plain_tagged = out_of.get("base"), out_of.get("plain")
    prev_tagged, nocl_tagged, out = out_of.get("prev"), out_of.get("nocl"), out_of.get("udpipe")
    load = f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after timing"
    s = evaluate(gold, tagged)
    words = gold.n_words
    cpu = statistics.median(t[0] for t in times)
    wall = statistics.median(t[1] for t in times)
    result: dict[str, object] = {
        "treebank": args.treebank,
        "words": words,
        "load": load,
        "depfs": {
            "templates": args.templates or "default",
            "train_s": round(train_s, 1),
            "train_cpu_s": round(train_cpu, 1),
            "best_epoch": tagger.best_epoch_,
            "tag_cpu_s": cpu,
            "tag_wall_s": wall,
            "tokens_per_cpu_s": round(words / cpu),
            "tokens_per_wall_s": round(words / wall),
            **scores(s),
        },
    }
    print(f"{args.treebank} test, {words} words, tags blanked; {load}")
    print(
        f"depfs   train {train_s:.1f}s wall, {train_cpu:.1f}s CPU "
        f"(best epoch {tagger.best_epoch_})  "
        f"{words / cpu:,.0f} tokens/CPU-s ({words / wall:,.0f} tokens/wall-s)  UPOS {s.upos:.2f} "
        f"XPOS {s.xpos:.2f} UFeats {s.ufeats:.2f} AllTags {s.alltags:.2f} Lemmas {s.lemmas:.2f}"
    )

    def other(key: str, label: str, tagged, times, note) -> None:
        """The row of a model timed in the same rounds as the default."""
        o = evaluate(gold, tagged)
        o_cpu = statistics.median(times)
        result[key] = {"tag_cpu_s": o_cpu, "tokens_per_cpu_s": round(words / o_cpu), **scores(o)}
        print(
            f"{label:<7} {words / o_cpu:,.0f} tokens/CPU-s  UPOS {o.upos:.2f} XPOS {o.xpos:.2f} "
            f"UFeats {o.ufeats:.2f} AllTags {o.alltags:.2f} Lemmas {o.lemmas:.2f}  ({note(o_cpu)})"
        )

    if base is not None:
        other(
            "baseline",
            "earlier",
            base_tagged,
            b_times,
            lambda t: f"the default {t / cpu:.2f}x faster",
        )
    if plain is not None:
        other(
            "plain",
            "plain",
            plain_tagged,
            p_times,
            lambda t: f"no backward pass; the default takes {cpu / t:.2f}x its time",
        )
    if prev is not None:
        other(
            "previous",
            "previous",
            prev_tagged,
            v_times,
            lambda t: f"no case rule, tagger_upos_bi; the default takes {cpu / t:.2f}x its time",
        )
    if plain_default is not None:
        other(
            "no_clusters",
            "no-clus",
            nocl_tagged,
            n_times,
            lambda t: f"the default without clusters; with them {cpu / t:.2f}x its time",
        )
        result["model_files"] = model_files(tagger, plain_default, args.reps, blank_tb)
    if no_rules is not None:
        other(
            "no_rules",
            "no-rules",
            out_of["norules"],
            r_times,
            lambda t: f"the same without candidate rules; with them {cpu / t:.2f}x its time",
        )
    if upos_pass is not None:
        other(
            "upos_pass",
            "upos-pass",
            out_of["upospass"],
            x_times,
            lambda t: f"the backward pass predicting UPOS; with XPOS {cpu / t:.2f}x its time",
        )
    if pipe is not None:
        if err.occurred():
            raise RuntimeError(err.message)
        us = evaluate(gold, Treebank.from_string(out))
        u_cpu = statistics.median(t[0] for t in u_times)
        u_wall = statistics.median(t[1] for t in u_times)
        result["udpipe1"] = {
            "train_s": None if u_train_s is None else round(u_train_s, 1),
            "tag_cpu_s": u_cpu,
            "tag_wall_s": u_wall,
            "tokens_per_cpu_s": round(words / u_cpu),
            **scores(us),
        }
        result["speed_ratio"] = round(u_cpu / cpu, 1)
        print(
            f"UDPipe1 {words / u_cpu:,.0f} tokens/CPU-s  UPOS {us.upos:.2f} XPOS {us.xpos:.2f} "
            f"UFeats {us.ufeats:.2f} AllTags {us.alltags:.2f} Lemmas {us.lemmas:.2f}  "
            f"(depfs {result['speed_ratio']}x faster, median CPU times of {args.reps} "
            "alternating runs)"
        )
    OUT.mkdir(exist_ok=True)
    (OUT / f"tagger_{args.treebank}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
