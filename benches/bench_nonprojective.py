"""Why does the non-projective decoder (CLE) score below Eisner on a treebank with
non-projective trees (pt_bosque, 8.7% of sentences)? Measured, per decoder and model:

* a model trained with Eisner and one trained with CLE (first order, same templates,
  epochs and seed), each decoded with BOTH decoders (training vs decoding-only effect);
* with and without the length dictionary (He et al. 2013, §4.2) at decoding time;
* UAS overall, on gold non-projective arcs vs the other arcs, on non-projective vs
  projective sentences; share of predicted trees / arcs that are non-projective and the
  precision of the predicted non-projective arcs (how often such an arc is the gold arc);
* the share of gold non-projective arcs that the length dictionary prunes;
* a candidate fix, "projective unless confident": keep Eisner's tree and take CLE's only
  when its score beats Eisner's by more than a margin chosen on DEV (then applied to
  the reported split).

An arc h → d is non-projective when some word strictly between h and d is not a
descendant of h. Decoding goes through the public API: ``GraphParser.arc_scores`` gives
the score matrices, ``depfs.decode.eisner`` / ``depfs.decode.cle`` the trees (single root,
as the parser does); when the dictionary leaves no tree, the unpruned scores are used, as
the parser does. The comparison system in the same run is the other decoder.

    python -m benches.bench_nonprojective [--treebank pt_bosque] [--epochs 6] [--split test]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import depfs
import numpy as np
from depfs import decode
from depfs.errors import DepfsError

from .bench_arceager import data_dir


def nonprojective_arcs(heads: np.ndarray) -> np.ndarray:
    """``out[d]`` is True when arc heads[d] → d is non-projective (heads[0] = -1 is ROOT's).
    O(n · span · depth): walks up from each word between head and dependent."""
    n1 = len(heads)
    out = np.zeros(n1, dtype=bool)
    for d in range(1, n1):
        h = int(heads[d])
        for k in range(min(h, d) + 1, max(h, d)):
            a = k
            while a != h and a > 0:
                a = int(heads[a])
            if a != h:
                out[d] = True
                break
    return out


def decode_all(
    parser: depfs.GraphParser, tb: depfs.Treebank, decoder: str, prune: bool
) -> tuple[list[np.ndarray], list[float]]:
    """Heads (with heads[0] = -1) of every sentence of ``tb`` under ``decoder``, and
    each tree's score."""
    fn = decode.eisner if decoder == "eisner" else decode.cle
    heads, tree_scores = [], []
    idx = list(range(len(tb)))
    mats = parser.arc_scores(tb, idx, prune=prune)
    for s, m in zip(idx, mats):
        try:
            h = np.asarray(fn(m))
        except DepfsError:
            # The dictionary left no tree: score everything (as GraphParser.parse does).
            m = parser.arc_scores(tb, [s], prune=False)[0]
            h = np.asarray(fn(m))
        heads.append(h)
        tree_scores.append(decode.tree_score(m, h))
    return heads, tree_scores


def hybrid(
    proj: list[np.ndarray], proj_score: list[float],
    nonproj: list[np.ndarray], nonproj_score: list[float], margin: float,
) -> list[np.ndarray]:  # fmt: skip
    """Eisner's tree unless CLE's scores more than ``margin`` higher."""
    return [
        n if ns - ps > margin else p
        for p, ps, n, ns in zip(proj, proj_score, nonproj, nonproj_score)
    ]


def choose_margin(
    gold: list[np.ndarray], proj: list[np.ndarray], proj_score: list[float],
    nonproj: list[np.ndarray], nonproj_score: list[float],
) -> float:  # fmt: skip
    """The margin with the most correct heads on these (dev) sentences: every observed
    score gap is a candidate (ties: the larger margin, i.e. fewer non-projective trees)."""
    gaps = sorted({ns - ps for ps, ns in zip(proj_score, nonproj_score)})
    best, best_ok = float("inf"), -1
    for margin in [float("inf"), *reversed([g - 1e-9 for g in gaps])]:
        picked = hybrid(proj, proj_score, nonproj, nonproj_score, margin)
        ok = sum(int((g == p)[1:].sum()) for g, p in zip(gold, picked))
        if ok > best_ok:
            best, best_ok = margin, ok
    return best


def analyse(gold: list[np.ndarray], pred: list[np.ndarray]) -> dict[str, float]:
    """Attachment scores split by gold (non-)projectivity, and predicted non-projectivity."""
    c = dict.fromkeys(
        [
            "words", "ok", "np_arcs", "np_ok", "np_sent_words", "np_sent_ok",
            "pred_np_trees", "pred_np_arcs", "pred_np_arcs_ok", "gold_np_trees",
        ],
        0,
    )  # fmt: skip
    for g, p in zip(gold, pred):
        ok = (g == p)[1:]
        g_np = nonprojective_arcs(g)[1:]
        p_np = nonprojective_arcs(p)[1:]
        c["words"] += len(ok)
        c["ok"] += int(ok.sum())
        c["np_arcs"] += int(g_np.sum())
        c["np_ok"] += int((ok & g_np).sum())
        if g_np.any():
            c["gold_np_trees"] += 1
            c["np_sent_words"] += len(ok)
            c["np_sent_ok"] += int(ok.sum())
        c["pred_np_trees"] += int(p_np.any())
        c["pred_np_arcs"] += int(p_np.sum())
        c["pred_np_arcs_ok"] += int((p_np & ok).sum())
    n_sent = len(gold)

    def pct(a: float, b: float) -> float:
        return 100.0 * a / b if b else float("nan")

    return {
        "uas": pct(c["ok"], c["words"]),
        "uas_gold_np_arcs": pct(c["np_ok"], c["np_arcs"]),
        "uas_other_arcs": pct(c["ok"] - c["np_ok"], c["words"] - c["np_arcs"]),
        "uas_np_sentences": pct(c["np_sent_ok"], c["np_sent_words"]),
        "uas_proj_sentences": pct(c["ok"] - c["np_sent_ok"], c["words"] - c["np_sent_words"]),
        "pred_np_tree_share": pct(c["pred_np_trees"], n_sent),
        "gold_np_tree_share": pct(c["gold_np_trees"], n_sent),
        "pred_np_arc_share": pct(c["pred_np_arcs"], c["words"]),
        "gold_np_arc_share": pct(c["np_arcs"], c["words"]),
        "pred_np_arc_precision": pct(c["pred_np_arcs_ok"], c["pred_np_arcs"]),
        "gold_np_arcs": c["np_arcs"],
        "pred_np_arcs": c["pred_np_arcs"],
    }


def dictionary_on_gold(
    parser: depfs.GraphParser, tb: depfs.Treebank, gold: list[np.ndarray]
) -> dict[str, float]:
    """Share of gold non-projective and of other gold arcs the length dictionary prunes."""
    np_arcs = np_pruned = other = other_pruned = 0
    for s, g in enumerate(gold):
        mask = parser.model_.length_dict_mask(tb, s)  # [dep, head], True = kept
        g_np = nonprojective_arcs(g)
        for d in range(1, len(g)):
            kept = bool(mask[d, g[d]])
            if g_np[d]:
                np_arcs += 1
                np_pruned += not kept
            else:
                other += 1
                other_pruned += not kept
    return {
        "gold_np_arcs_pruned_pct": 100.0 * np_pruned / max(np_arcs, 1),
        "gold_other_arcs_pruned_pct": 100.0 * other_pruned / max(other, 1),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--treebank", default="pt_bosque")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--split", default="test", choices=["dev", "test"])
    ap.add_argument(
        "--train-prune", default="on", choices=["on", "off"],
        help="length dictionary during training (decoding is measured both ways)",
    )  # fmt: skip
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    d = data_dir() / args.treebank
    train = depfs.read_conllu(d / "train.conllu")
    evalset = depfs.read_conllu(d / f"{args.split}.conllu")
    gold = [np.concatenate([[-1], s.heads]).astype(np.int64) for s in evalset]
    devset = depfs.read_conllu(d / "dev.conllu")
    dev_gold = [np.concatenate([[-1], s.heads]).astype(np.int64) for s in devset]
    result: dict[str, Any] = {
        "treebank": args.treebank,
        "split": args.split,
        "epochs": args.epochs,
        "train_prune": args.train_prune,
        "rows": [],
    }
    parsers = {}
    for trained in ("eisner", "cle"):
        t0 = time.process_time()
        p = depfs.GraphParser(
            order=1, decoder=trained, epochs=args.epochs, prune=args.train_prune == "on"
        ).fit(train)
        parsers[trained] = p
        native = depfs.evaluate(evalset, p.parse(evalset, threads=1))
        result[f"native_{trained}"] = {
            "uas": native.uas,
            "las": native.las,
            "train_cpu_s": time.process_time() - t0,
        }
    result["dictionary"] = dictionary_on_gold(parsers["eisner"], evalset, gold)
    decoded: dict[tuple[str, str], tuple[list[np.ndarray], list[float]]] = {}
    for trained, p in parsers.items():
        for decoder in ("eisner", "cle"):
            for prune in (True, False):
                row: dict[str, Any] = {"trained": trained, "decoder": decoder, "prune": prune}
                heads, tree_scores = decode_all(p, evalset, decoder, prune)
                if prune:
                    decoded[(trained, decoder)] = (heads, tree_scores)
                row.update(analyse(gold, heads))
                result["rows"].append(row)
    # Candidate fix: projective unless CLE is confident, margin chosen on dev.
    result["hybrid"] = []
    for trained, p in parsers.items():
        dev_e, dev_c = (decode_all(p, devset, dec, True) for dec in ("eisner", "cle"))
        margin = choose_margin(dev_gold, *dev_e, *dev_c)
        dev_uas = analyse(dev_gold, hybrid(*dev_e, *dev_c, margin))["uas"]
        hrow: dict[str, Any] = {
            "trained": trained,
            # None = never take CLE's tree (JSON has no infinity).
            "margin": margin if np.isfinite(margin) else None,
            "dev_uas": dev_uas,
            "dev_uas_eisner": analyse(dev_gold, dev_e[0])["uas"],
            "dev_uas_cle": analyse(dev_gold, dev_c[0])["uas"],
        }
        hrow.update(
            analyse(gold, hybrid(*decoded[(trained, "eisner")], *decoded[(trained, "cle")], margin))
        )
        result["hybrid"].append(hrow)

    cols = [
        ("uas", "UAS"),
        ("uas_gold_np_arcs", "npArc"),
        ("uas_other_arcs", "othArc"),
        ("uas_np_sentences", "npSent"),
        ("uas_proj_sentences", "prSent"),
        ("pred_np_tree_share", "%npTree"),
        ("pred_np_arc_share", "%npArc"),
        ("pred_np_arc_precision", "npPrec"),
    ]
    print(
        f"{args.treebank} {args.split}, first order, {args.epochs} epochs, "
        f"dictionary in training: {args.train_prune}"
    )
    for trained in parsers:
        nat = result[f"native_{trained}"]
        print(
            f"  native parse, trained+decoded {trained}: UAS {nat['uas']:.2f} LAS {nat['las']:.2f}"
        )
    r0 = result["rows"][0]
    print(
        f"  gold: {r0['gold_np_tree_share']:.1f}% non-projective trees, "
        f"{r0['gold_np_arc_share']:.2f}% non-projective arcs ({r0['gold_np_arcs']})"
    )
    dic = result["dictionary"]
    print(
        f"  length dictionary prunes {dic['gold_np_arcs_pruned_pct']:.1f}% of gold non-projective "
        f"arcs, {dic['gold_other_arcs_pruned_pct']:.2f}% of the other gold arcs"
    )
    print(f"{'trained':<8}{'decoder':<8}{'dict':<6}" + "".join(f"{h:>9}" for _, h in cols))
    for row in result["rows"]:
        line = f"{row['trained']:<8}{row['decoder']:<8}{'on' if row['prune'] else 'off':<6}"
        print(line + "".join(f"{row[k]:>9.2f}" for k, _ in cols))
    for row in result["rows"]:
        if row["decoder"] == "cle" and row["prune"]:
            other = next(
                r for r in result["rows"]
                if r["trained"] == row["trained"] and r["decoder"] == "eisner" and r["prune"]
            )  # fmt: skip
            print(
                f"  trained {row['trained']}: CLE / Eisner UAS ratio "
                f"{row['uas'] / other['uas']:.4f} (difference {row['uas'] - other['uas']:+.2f})"
            )
    for h in result["hybrid"]:
        print(
            f"  projective unless confident, trained {h['trained']}: margin {h['margin']} "
            f"(dev: UAS {h['dev_uas']:.2f}, Eisner {h['dev_uas_eisner']:.2f}, "
            f"CLE {h['dev_uas_cle']:.2f}) "
            f"-> {args.split} UAS {h['uas']:.2f}, npArc {h['uas_gold_np_arcs']:.2f}, "
            f"%npTree {h['pred_np_tree_share']:.2f}, npPrec {h['pred_np_arc_precision']:.2f}"
        )
    out = args.out or Path(f"bench-results/nonprojective_{args.treebank}_{args.split}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=2))
    tmp.replace(out)


if __name__ == "__main__":
    main()
