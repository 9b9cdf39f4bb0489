"""Dynamic feature selection for the graph parser (He, Daumé & Eisner 2013), their Table 1.

Trains (or loads, --model) a first-order (or --order 2) DynFS model on en_ewt train (or
--treebank) with dev for the epochs kept and the policy: `depfs train --parser graph --dynfs` in one
process, timed (full model, prefix-trained model of the rounds, fold parsers, DAgger).
Then parses test on one thread — each setting --reps runs in CPU time, each taken in turn
with a parse by the full model, the speed-up the median of the pairs' ratios; CoNLL-U in
memory —
and prints: the full model; DynFS at the threshold chosen on dev and around it; the
expert policy (locks exactly the gold arcs: an upper bound); the Amdahl bound (lock every
arc after the first group: T₁, one CLE decode and the labeler; with a tree margin, also
with its max-marginals); static prefixes (the
first k templates of the rounds' model on every arc, one CLE decode; first order only);
second order: the policy that never locks (every group, but sibling parts only where the
dictionary leaves both arcs, no margin pruning); with a prune margin (chosen on dev), the
dev threshold without it and at other margins; with a tree margin (chosen on dev), the
dev setting without it and at other tree margins; with a labeler stop (chosen on dev), the
full labeler and other label margins; with a prefix-trained labeler for the stop (kept on
dev), the stop on the full model's labeler weights, its margin chosen on dev by the same
rule, parsed in turn with it; with a label dictionary (chosen on dev), the stop
without it; the policy's lexical features (He et al. §5.4) are said in the header (compare
a meta-feature policy with --also). Columns: speed-up [the quartiles of its paired
ratios], cost (% of the templates computed on the arcs the length dictionary leaves), UAS(D),
UAS(F) (punctuation included), LAS, words/s, labeler templates computed. Also the length
dictionary's pruning on dev.
Writes bench-results/dynfs_<treebank>.json and, with --plot, a Pareto plot of UAS
against cost (dynamic thresholds against static prefixes; --replot JSON redraws one).

    python -m benches.bench_dynfs [--treebank en_ewt] [--order 1|2] [--model M] [--reps 3]
        [--epochs E] [--folds N] [--iterations I] [--also M2 ...] [--reference FULL]
        [--out JSON] [--plot PNG]
    python -m benches.bench_dynfs --replot JSON [JSON ...] --plot PNG
    python -m benches.bench_dynfs --mean JSON [JSON ...]

--mean reads JSONs this script wrote (say one per seed, each run against its own seed's
full model) and prints each one's dev-choice row and their mean speed-up and UAS loss:
the reading of docs/methods.md, "Both cut recipes on three seeds".
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import depfs
from depfs import evaluate
from depfs.dynamic.he2013 import choose_label_stop

from .bench_arceager import data_dir

OUT = Path("bench-results")
PREFIXES = (1, 2, 5, 9, 20, 40, 80, 120)
OFFSETS = (-1.0, -0.5, 0.0, 0.5, 1.0, 2.0)


def timed(
    parse: Any, test: Any, reps: int, full: Any
) -> tuple[float, float, tuple[float, float], Any]:
    """Median CPU time of `reps` runs of `parse(test)`, the median of the ratios to
    `full(test)` run in turn with each (pairing cancels the machine's drift; A B A B),
    the ratios' quartiles (how far this host's noise moves them) and the last result."""
    secs, ratios, out = [], [], None
    for _ in range(reps):
        t0 = time.process_time()
        out = parse(test)
        secs.append(time.process_time() - t0)
        t0 = time.process_time()
        full(test)
        ratios.append((time.process_time() - t0) / secs[-1])
    q1, _, q3 = statistics.quantiles(ratios, n=4) if reps > 1 else (ratios[0],) * 3
    return statistics.median(secs), statistics.median(ratios), (q1, q3), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--model", help="A model trained with --dynfs (else trained here).")
    ap.add_argument("--groups", help="[default: the shipped groups of the order]")
    ap.add_argument("--order", type=int, default=1, choices=(1, 2))
    ap.add_argument("--epochs", type=int, help="Training epochs [default: the parser's].")
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--iterations", type=int, help="DAgger iterations [default: 2 x folds].")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--also",
        nargs="*",
        default=[],
        help="Other DynFS model files of the same full model (e.g. an earlier build's), each "
        "parsed with its own policy in the same run.",
    )
    ap.add_argument(
        "--reference",
        help="A full first-order model to time and score every row against (e.g. one of "
        "`depfs train --parser graph`, every first_order template), for a DynFS model whose "
        "groups keep a prefix of the order (`depfs select groups --limit N`); its own full model "
        "is then a row. Cost is then a share of the reference's templates [default: the DynFS "
        "model's own full model].",
    )
    ap.add_argument("--plot")
    ap.add_argument(
        "--out", help="The JSON written [default: bench-results/dynfs[2]_TREEBANK.json]."
    )
    ap.add_argument(
        "--replot",
        nargs="+",
        help="Only plot JSONs this script wrote (to --plot): one, its UAS against cost; "
        "several (e.g. a model over all templates and one over a cut, --reference), their "
        "UAS against speed-up on one plot.",
    )
    ap.add_argument(
        "--mean",
        nargs="+",
        metavar="JSON",
        help="Only print the dev-choice row of each JSON this script wrote (e.g. one per "
        "seed) and the mean of their speed-ups and UAS losses.",
    )
    args = ap.parse_args()
    if args.mean:
        print_mean([json.loads(Path(p).read_text()) for p in args.mean], args.mean)
        return
    if args.replot:
        if not args.plot:
            raise SystemExit("--replot: give --plot PNG")
        results = [json.loads(Path(p).read_text()) for p in args.replot]
        if len(results) == 1:
            plot(results[0]["rows"], results[0]["treebank"], args.plot)
        else:
            plot_speed(results, args.plot)
        return
    d = data_dir() / args.treebank
    train, dev, test = (depfs.read_conllu(d / f"{p}.conllu") for p in ("train", "dev", "test"))
    OUT.mkdir(exist_ok=True)
    train_s = None
    if args.model:
        parser = depfs.load(args.model)
    else:
        t0 = time.time()
        parser = depfs.GraphParser(
            dynfs=True,
            order=args.order,
            groups=args.groups,
            epochs=args.epochs,
            folds=args.folds,
            dagger_iterations=args.iterations,
        )
        parser.fit(train, dev, report=lambda line: print("  " + line, flush=True))
        train_s = time.time() - t0
        parser.save(OUT / f"dynfs{args.order}_{args.treebank}.depfs")
        print(f"trained in {train_s / 60:.1f} min (wall)")
    model = parser.model_
    all_groups, weights, threshold = model.dynfs
    margin = model.dynfs_prune_margin
    tree = model.dynfs_tree_margin
    label = model.dynfs_label_stop
    label_margin = None if label is None else label[1]
    label_gain = dict_gain = prefix_gain = None
    n_arc = len(model.arc_templates)
    groups = [g for g in all_groups if g[0] < n_arc]
    sib_groups = [g for g in all_groups if g[0] >= n_arc]
    order = 2 if sib_groups else 1
    k = len(groups)
    n_templates = sum(len(g) for g in groups)
    prune = model.length_dict_stats(dev)
    own_full = lambda tb: model.parse(tb, 1)  # noqa: E731
    full_parse, cost_scale, n_ref = own_full, 1.0, n_arc
    if args.reference:  # the full model of every template: the rows' speed-ups and losses
        ref = depfs.load(args.reference).model_
        if ref.order != order:
            raise SystemExit(f"{args.reference}: order {ref.order}, not {order}")
        n_ref = len(ref.arc_templates)
        full_parse = lambda tb: ref.parse(tb, 1)  # noqa: E731
        cost_scale = n_arc / n_ref  # the templates computed, as a share of the reference's
    gold_uas = evaluate(test, full_parse(test)).uas
    rows: list[dict[str, Any]] = []

    def add(name: str, parse: Any, kind: str, **extra: Any) -> None:
        # (a share of the reference's templates: the own full model's is cost_scale)
        full_cost = 1.0 if kind == "full" else cost_scale
        secs, speedup, (q1, q3), out = timed(parse, test, args.reps, full_parse)
        parsed, st = out if isinstance(out, tuple) else (out, None)
        sc = evaluate(test, parsed)
        row = {
            "setting": name,
            "kind": kind,
            "speedup": speedup,
            "speedup_quartiles": [q1, q3],
            "cost": 100 * (cost_scale * st["cost"] if st else full_cost),
            "uas": sc.uas,
            "las": sc.las,
            "full_uas": gold_uas,
            "words_per_s": test.n_words / secs,
            **extra,
        }
        if st:
            row.update(fails=st["fails"], rounds=st["rounds"] / max(1, st["sentences"]))
            row.update(lab_cost=100 * st["lab_cost"])
            row.update(arc_cost=100 * st["arc_cost"], sib_cost=100 * st["sib_cost"])
        rows.append(row)
        split = (
            f" (arc {row['arc_cost']:.1f}, sib {row['sib_cost']:.1f})" if order == 2 and st else ""
        )
        print(
            f"{name:<34} {row['speedup']:5.2f}x [{q1:.2f}-{q3:.2f}]  "
            f"cost {row['cost']:5.1f}%{split}  "
            f"UAS {sc.uas:.2f} (full {gold_uas:.2f})  LAS {sc.las:.2f}  "
            f"{row['words_per_s']:8.0f} w/s" + (f"  labeler {row['lab_cost']:.1f}%" if st else ""),
            flush=True,
        )

    def dyn(**kw: Any) -> Any:
        return lambda tb: model.run_dynfs(tb, **kw)[:2]

    sib = (
        f", {sum(map(len, sib_groups))} sibling templates in {len(sib_groups)} groups "
        f"({', '.join(str(len(g)) for g in sib_groups)})"
        if sib_groups
        else ""
    )
    print(
        f"{args.treebank}: {n_templates} arc templates in {k} groups "
        f"({', '.join(str(len(g)) for g in groups)}){sib}; chosen threshold {threshold:g}"
        f"{'' if margin is None else f', prune margin {margin:g}'}"
        f"{'' if tree is None else f', tree margin {tree:g}'}"
        f"{'' if label_margin is None else f', label margin {label_margin:g}'}"
        f"{'' if model.dynfs_lex is None else ', policy with lexical features'}; "
        f"speed-ups: median [quartiles] of {args.reps} paired CPU-time ratios to the full model"
        + (
            f" {Path(args.reference).name} ({n_ref} templates; cost: a share of them)"
            if args.reference
            else ""
        )
    )
    print(
        f"length dictionary on dev: prunes {100 * prune['other_pruned_share']:.1f}% of the "
        f"non-gold arcs and {100 * prune['gold_pruned_share']:.2f}% of the gold arcs"
    )
    add(f"full model ({'Eisner2' if order == 2 else 'Eisner'})", full_parse, "full")
    if args.reference:
        add(f"own full model ({n_arc} templates)", own_full, "own_full")
    if order == 2:
        # every group, every usable part
        never = dyn(threshold=1e6, prune_margin=float("inf"), tree_margin=float("inf"))
        add("never lock (dictionary-pruned parts)", never, "never")
    for off in OFFSETS:
        t = threshold + off
        name = f"DynFS threshold {t:g}" + (" (dev)" if off == 0 else "")
        add(name, dyn(threshold=t), "dynfs", threshold=t)
    if margin is not None:  # the margin pruning chosen on dev, against none and others
        for pm in (float("inf"), margin + 1.0, margin - 0.5):
            if pm >= 0:
                add(
                    f"DynFS threshold {threshold:g}, prune margin {pm:g}",
                    dyn(threshold=threshold, prune_margin=pm),
                    "margin",
                    threshold=threshold,
                    prune_margin=pm,
                )
    if tree is not None:  # the tree margin chosen on dev, against none and others
        for tm in (float("inf"), tree + 0.5, tree - 0.5):
            if tm >= 0:
                add(f"DynFS (dev), tree margin {tm:g}", dyn(tree_margin=tm), "tree", tree_margin=tm)
    if label_margin is not None:  # the labeler's stop chosen on dev, against the full labeler
        for lm in (float("inf"), label_margin + 20.0, label_margin - 10.0):
            add(
                f"DynFS (dev), label margin {lm:g}",
                dyn(label_margin=lm),
                "label",
                label_margin=lm,
            )
        # The stop's own gain, paired directly (the two parses differ in the labeler only).
        _, gain, _, _ = timed(dyn(), test, args.reps, dyn(label_margin=float("inf")))
        print(f"  the labeler's stop against the full labeler, paired: {gain:.3f}x")
        label_gain = gain
    if model.dynfs_label_prefix_trained:  # the stop's prefix-trained labeler, against the
        # stop on the full model's labeler weights, chosen on dev by the same rule
        # (the model without its stop: only the full model's labeler is tried)
        plain = model.with_dynfs(
            all_groups, weights, threshold, prune_margin=margin, tree_margin=tree
        )
        own, own_margin, _, _ = choose_label_stop(plain, train, dev)
        how = (
            "no margin within: the full labeler" if own_margin is None else f"margin {own_margin:g}"
        )
        own_parse = lambda tb: own.run_dynfs(tb)[:2]  # noqa: E731
        add(f"DynFS (dev), the stop on the full labeler's weights ({how})", own_parse, "label_own")
        _, gain, _, _ = timed(dyn(), test, args.reps, own_parse)
        print(
            f"  the prefix-trained labeler against the full labeler's weights, paired: {gain:.3f}x"
        )
        prefix_gain = gain
    if model.dynfs_label_dict is not None:  # the label dictionary chosen on dev, against none
        add("DynFS (dev), no label dictionary", dyn(label_dict=[]), "label_dict")
        _, gain, _, _ = timed(dyn(), test, args.reps, dyn(label_dict=[]))
        print(f"  the label dictionary against the stop alone, paired: {gain:.3f}x")
        dict_gain = gain
    also_gains: dict[str, float] = {}
    for path in args.also:
        other = depfs.load(path).model_
        theirs = lambda tb, m=other: m.run_dynfs(tb)[:2]  # noqa: E731
        add(f"{Path(path).name} (its own policy)", theirs, "also")
        # This model against the other directly (same full model: only DynFS differs).
        _, gain, _, _ = timed(dyn(), test, args.reps, theirs)
        print(f"  this model's DynFS against {Path(path).name}'s, paired: {gain:.3f}x")
        also_gains[Path(path).name] = gain
    add("expert policy (upper bound)", dyn(expert=True), "expert")
    # T1, one CLE decode and the labeler: no tree margin (its max-marginals are not free).
    lock_all = {"threshold": -1e6, "tree_margin": float("inf")}
    add("Amdahl: lock all after T1", dyn(**lock_all), "amdahl")
    if tree is not None:
        add("lock all after T1, with the tree margin", dyn(threshold=-1e6), "amdahl_tree")
    if label_margin is not None:
        add("Amdahl, full labeler", dyn(**lock_all, label_margin=float("inf")), "amdahl_full")
    if model.dynfs_label_dict is not None:
        add("Amdahl, no label dictionary", dyn(**lock_all, label_dict=[]), "amdahl_nodict")
    for p in PREFIXES if order == 1 else ():
        if p < n_templates:
            g = [list(range(p)), list(range(p, n_templates))]
            zero = [0.0] * depfs._core.dynfs_n_features(len(g))
            static = dyn(groups=g, weights=zero, threshold=-1e6, tree_margin=float("inf"))
            add(f"static prefix {p}", static, "static", k=p)
    result = {
        "treebank": args.treebank,
        "order": order,
        "groups": [len(g) for g in groups],
        "sibling_groups": [len(g) for g in sib_groups],
        "threshold": threshold,
        "prune_margin": margin,
        "tree_margin": tree,
        "label_margin": label_margin,
        "label_stop_gain": label_gain,
        "label_dict": model.dynfs_label_dict is not None,
        "label_dict_gain": dict_gain,
        "label_prefix_trained": bool(model.dynfs_label_prefix_trained),
        "label_prefix_gain": prefix_gain,
        "also_gains": also_gains,
        "policy_lexical": model.dynfs_lex is not None,
        "prune": prune,
        "reference": args.reference,
        "reference_templates": n_ref,
        "templates": n_arc,
        "train_seconds": train_s,
        "training": parser.training_info().get("dynfs"),
        "rows": rows,
    }
    out = (
        Path(args.out) if args.out else OUT / f"dynfs{'' if order == 1 else 2}_{args.treebank}.json"
    )
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")
    if args.plot:
        plot(rows, args.treebank, args.plot)


def plot(rows: list[dict[str, Any]], treebank: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    # Cost, not time: it does not move with the machine (the speed-ups are in the table).
    for kind, style, label in [
        ("static", "s--", "static prefix (first k templates, rounds' model)"),
        ("dynfs", "o-", "DynFS (policy threshold)"),
        ("tree", "d:", "DynFS (tree margin; rightmost: none)"),
    ]:
        pts = sorted((r["cost"], r["speedup"], r["uas"]) for r in rows if r["kind"] == kind)
        if pts:
            ax.plot([p[0] for p in pts], [p[2] for p in pts], style, label=label)
    for kind, marker, label in [
        ("full", "*", "full model"),
        ("own_full", "P", "own full model (the templates kept)"),
        ("expert", "^", "expert policy (bound)"),
        ("amdahl", "v", "lock all after group 1"),
        ("never", "D", "never lock (dictionary-pruned parts)"),
    ]:
        for r in rows:
            if r["kind"] == kind:
                ax.plot(r["cost"], r["uas"], marker, markersize=11, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("cost: % of the templates computed on the arcs left by the length dictionary")
    ax.set_ylabel("test UAS")
    order = " second order" if any(r["kind"] == "never" for r in rows) else ""
    ax.set_title(f"He et al. (2013) dynamic feature selection{order}, {treebank}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def dev_choice(result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A run's full-model row and its DynFS row at the settings chosen on dev."""
    rows = result["rows"]
    full = next(r for r in rows if r["kind"] == "full")
    dev = next(r for r in rows if r["kind"] == "dynfs" and r["setting"].endswith("(dev)"))
    return full, dev


def print_mean(results: list[dict[str, Any]], names: list[str]) -> None:
    """Each run's dev-choice row (speed-up against its full model, UAS loss, cost) and the
    mean over the runs: with one run per seed, the seeds' mean."""
    losses, speedups = [], []
    for name, res in zip(names, results, strict=True):
        full, dev = dev_choice(res)
        lo, hi = dev.get("speedup_quartiles") or (dev["speedup"], dev["speedup"])
        loss = dev["uas"] - full["uas"]
        losses.append(loss)
        speedups.append(dev["speedup"])
        print(
            f"{name}: {dev['setting']}  {dev['speedup']:.2f}x [{lo:.2f}-{hi:.2f}]  "
            f"UAS {dev['uas']:.2f} ({loss:+.2f} against {full['uas']:.2f})  "
            f"cost {dev['cost']:.1f}%  {dev['words_per_s']:.0f} w/s"
        )
    print(
        f"mean of {len(results)}: {statistics.mean(speedups):.2f}x at "
        f"{statistics.mean(losses):+.2f} UAS"
    )


def plot_speed(results: list[dict[str, Any]], path: str) -> None:
    """UAS against speed-up for several runs' DynFS rows (the policy's thresholds, the
    margins), each run one series named by its template count, with its full model(s):
    the runs are comparable when their speed-ups are to the same full model (--reference)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    full_uas = results[0]["rows"][0]["full_uas"]
    for res, marker in zip(results, "os^vD"):
        n = res.get("templates") or sum(res["groups"])
        pts = sorted(
            (r["speedup"], r["uas"])
            for r in res["rows"]
            if r["kind"] in ("dynfs", "margin", "tree")
        )
        ax.plot(
            [p[0] for p in pts],
            [p[1] for p in pts],
            marker,
            alpha=0.8,
            label=f"DynFS over {n} templates (settings)",
        )
        for r in res["rows"]:
            if r["kind"] == "own_full":
                ax.plot(
                    r["speedup"],
                    r["uas"],
                    "P",
                    markersize=11,
                    label=f"full model of those {n} (a static cut)",
                )
    ax.plot(1.0, full_uas, "*", markersize=13, label="full model (every template)")
    ax.axhline(full_uas - 0.3, color="grey", linestyle=":", label="0.3 UAS below it")
    ax.axvline(2.5, color="grey", linestyle="--", linewidth=0.8, label="2.5x")
    ax.set_xlabel("speed-up over the full model (paired CPU time, one thread)")
    ax.set_ylabel("test UAS")
    ax.set_title(f"DynFS over a static cut, {results[0]['treebank']}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
