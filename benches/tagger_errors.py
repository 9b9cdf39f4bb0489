"""Error analysis of the tagger on a treebank's dev file (docs/design.md § Tagger).

Trains `Tagger(random_state=SEED, clusters=FILE)` on train with dev for the kept epoch (or loads
`--model`), tags dev, and counts its XPOS, FEATS and LEMMA errors by what the tag dictionary
knew: whether the word's UPOS was right (else the other column mostly follows the UPOS
error), whether its form was unknown to train, whether its (form, UPOS) pair was seen there
and with how many values of the column; the confusion pairs that dominate; FEATS strings
that differ in one feature; lemma errors by class (case only, (lower form, UPOS) seen in
train with the gold lemma, unknown form, ...).

    python -m benches.tagger_errors [--treebank en_ewt] [--clusters FILE] [--seed 1]
        [--model TAGGER] [--save TAGGER] [--top 12] [--options JSON]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from typing import Any

import depfs
from depfs import Tagger

from .bench_arceager import data_dir

COLS = ("upos", "xpos", "feats", "lemmas")


# The features UFeats compares (the CoNLL 2018 scorer's, as depfs's eval.rs).
UNIVERSAL = set(
    "PronType NumType Poss Reflex Foreign Abbr Gender Animacy Number Case Definite Degree "
    "VerbForm Mood Tense Aspect Voice Evident Polarity Person Polite".split()
)


def ufeats(feats: str) -> str:
    """The part of a FEATS value UFeats compares: its universal features, sorted."""
    return "|".join(sorted(f for f in feats.split("|") if f.split("=", 1)[0] in UNIVERSAL))


def words(tb: Any) -> list[tuple[str, str, str, str, str]]:
    """(form, upos, xpos, universal feats, lemma) of every word."""
    out = []
    for s in tb:
        out.extend(zip(s.forms, s.upos, s.xpos, map(ufeats, s.feats), s.lemmas))
    return out


def same(gold: tuple[str, ...], pred: tuple[str, ...], k: int) -> bool:
    """Whether column k is right, as the scorer counts it (a gold lemma `_` is right)."""
    return gold[k] == pred[k] or (k == 4 and gold[k] == "_")


def feats_diff(a: str, b: str) -> str:
    """The features that differ between two FEATS strings, as 'Name=x>y' (sorted)."""
    fa = dict(x.split("=", 1) for x in a.split("|") if "=" in x)
    fb = dict(x.split("=", 1) for x in b.split("|") if "=" in x)
    names = sorted(set(fa) | set(fb))
    diff = [n for n in names if fa.get(n) != fb.get(n)]
    return ",".join(f"{n}={fa.get(n, '-')}>{fb.get(n, '-')}" for n in diff)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--clusters", default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--model", default=None, help="a saved tagger instead of training one")
    ap.add_argument("--save", default=None, help="save the trained tagger here")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--options", default="{}", help="more Tagger options, as JSON")
    args = ap.parse_args(argv)
    d = data_dir() / args.treebank
    train, dev = depfs.read_conllu(d / "train.conllu"), depfs.read_conllu(d / "dev.conllu")
    if args.model:
        tagger = depfs.load(args.model)
    else:
        opts = json.loads(args.options)
        tagger = Tagger(random_state=args.seed, clusters=args.clusters, **opts).fit(train, dev=dev)
        if args.save:
            tagger.save(args.save)
    gold, pred = words(dev), words(tagger.tag(dev))
    tr = words(train)
    form_n: Counter[str] = Counter(w[0] for w in tr)
    lower_n: Counter[str] = Counter(w[0].lower() for w in tr)
    pair_vals: dict[tuple[str, str], list[Counter[str]]] = defaultdict(
        lambda: [Counter() for _ in range(3)]
    )
    lower_upos_lemma: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for f, u, x, ft, lem in tr:
        for k, v in enumerate((x, ft, lem)):
            pair_vals[(f, u)][k][v] += 1
        lower_upos_lemma[(f.lower(), u)][lem] += 1
    n = len(gold)
    print(f"{args.treebank} dev: {n} words")
    wrong = {c: 0 for c in COLS}
    for g, p in zip(gold, pred):
        for k, c in enumerate(COLS):
            wrong[c] += not same(g, p, k + 1)
    print("accuracy: " + ", ".join(f"{c} {100 - 100 * wrong[c] / n:.2f}" for c in COLS))

    for k, col in ((2, "xpos"), (3, "feats"), (4, "lemmas")):
        cats: Counter[str] = Counter()
        conf: Counter[tuple[str, str]] = Counter()
        conf_ok: Counter[tuple[str, str]] = Counter()
        for g, p in zip(gold, pred):
            if same(g, p, k):
                continue
            form, upos_ok = g[0], g[1] == p[1]
            cats["all"] += 1
            conf[(g[k], p[k])] += 1
            if not upos_ok:
                cats["UPOS wrong"] += 1
                continue
            conf_ok[(g[k], p[k])] += 1
            vals = pair_vals.get((form, p[1]))
            cnt = sum(vals[k - 2].values()) if vals else 0
            if form_n[form] == 0 and lower_n[form.lower()] == 0:
                cats["UPOS right: form unknown (nor lower-cased)"] += 1
            elif form_n[form] == 0:
                cats["UPOS right: form known only lower-cased"] += 1
            elif cnt == 0:
                cats["UPOS right: form known, (form, UPOS) unseen"] += 1
            elif cnt == 1:
                cats["UPOS right: (form, UPOS) seen once"] += 1
            elif vals is not None and g[k] not in vals[k - 2]:
                cats["UPOS right: (form, UPOS) seen >= 2, gold value never with it"] += 1
            elif vals is not None and len(vals[k - 2]) == 1:
                cats["UPOS right: (form, UPOS) seen >= 2, one value"] += 1
            else:
                cats["UPOS right: (form, UPOS) seen >= 2, several values (classifier)"] += 1
        print(f"\n{col} errors: {cats['all']} ({100 * cats['all'] / n:.2f}% of words)")
        for c, v in sorted(cats.items(), key=lambda x: -x[1]):
            if c != "all":
                print(f"  {c:66s} {v:5d}  {100 * v / max(cats['all'], 1):5.1f}%")
        if col == "lemmas":
            continue
        print("  top confusions (gold -> predicted), all / with UPOS right:")
        for (a, b), v in conf.most_common(args.top):
            shown_a, shown_b = (a, b) if col == "xpos" else (a[:40], b[:40])
            extra = f"   diff {feats_diff(a, b)}" if col == "feats" else ""
            print(f"    {shown_a:>12s} -> {shown_b:12s} {v:4d} / {conf_ok[(a, b)]:4d}{extra}")
        if col == "feats":
            by_feat: Counter[str] = Counter()
            n_one = 0
            for (a, b), v in conf_ok.items():
                dd = feats_diff(a, b)
                if "," not in dd:
                    n_one += v
                    by_feat[dd.split("=")[0]] += v
            top = dict(by_feat.most_common(8))
            print(f"  UPOS right, one feature differs: {n_one}; by feature: {top}")

    # Lemma errors on words with the right UPOS, by class.
    lc: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    for g, p in zip(gold, pred):
        if same(g, p, 4) or g[1] != p[1]:
            continue
        form, lem, plem, u = g[0], g[4], p[4], g[1]
        seen = lower_upos_lemma.get((form.lower(), u))
        if lem.lower() == plem.lower():
            c = "case only"
        elif form_n[form] == 0 and lower_n[form.lower()] == 0:
            c = "form unknown (edit script of the back-off)"
        elif seen and lem in seen and plem not in seen:
            c = "(lower form, UPOS) seen with the gold lemma, predicted unseen"
        elif seen and lem in seen:
            c = "(lower form, UPOS) seen with both lemmas"
        elif seen:
            c = "(lower form, UPOS) seen, never with the gold lemma"
        else:
            c = "form known, (lower form, UPOS) unseen"
        lc[c] += 1
        if len(examples[c]) < 6:
            examples[c].append(f"{form}/{u}: {lem} -> {plem}")
    print(f"\nlemma errors with UPOS right: {sum(lc.values())}")
    for c, v in lc.most_common():
        print(f"  {c:66s} {v:5d}   e.g. {'; '.join(examples[c])}")


if __name__ == "__main__":
    main()
