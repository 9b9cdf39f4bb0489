"""The selection engine on en_ewt (or --treebank): throughput and the wrapper runs.

    python -m benches.bench_select throughput [--parser arc-eager|graph] [--n 24]
    python -m benches.bench_select wrapper --parser arc-eager|graph|tagger [--pool POOL]
                                           [--candidates M] [--plot PATH]
    python -m benches.bench_select compare --pool-size 30 [--shortlist M:R ...] [--plot PATH]
    python -m benches.bench_select quality --order-file ORDER  # top-k prefixes on test
    python -m benches.bench_select settings --pool arc_eager_en_ewt --pool-size 30
                                            [--max-length N|all] [--epochs E] [--full-epochs 17]
                                            [--candidates M --rerank-every R] [--seed-check S]
                                            [--plot PATH]
    python -m benches.bench_select settings --parser tagger --pool tagger_en_ewt --pool-size 30

`throughput` evaluates the same random candidates (template subsets of 5 to 30 of the
default set, seeded; sentences of at most 20 words, one epoch) with one local worker,
two local workers and a two-worker Dask LocalCluster, and reports candidate evaluations
per minute from the log's wall-clock times: each worker's first candidate (it reads the
treebanks) is left out, the rate is the rest over the span from their first start to the
last end. The three runs must give the same scores.

`wrapper` orders a pool with the forward wrapper (log in bench-results/, so a rerun
resumes), writes the order file and the selection curve (to --plot PATH if given), and
prints the sizes of the groups `depfs select groups --k 7` cuts the order into (He et al.
2013's seven groups). `compare` runs the exact wrapper and each cheaper one (`--shortlist
M:R`, repeatable: M candidates, a full re-rank every R steps; default --candidates 5
--rerank-every 10) on the first --pool-size templates of the pool, and prints each one's
trainings, best dev score, the gap between its curve and the exact one (|exact − it| at
each number of templates: largest and mean) and the Spearman correlation of its order with
the exact order (over the templates both ordered); one plot holds every curve. Results go
to bench-results/select_*.json.

`settings` checks other_settings training settings (train sentences of at most --max-length
words, or `all`; --epochs epochs; with --candidates M, the cheaper wrapper) against full
settings (every train sentence, --full-epochs epochs: by default the parser's or tagger's
own default, 17 or 10): the exact wrapper orders the first --pool-size templates of the
pool at full settings, the chosen wrapper at the short ones, then the short order's
prefixes are trained at full settings too. It prints Spearman's ρ of the two orders, the
gap between the two orders' dev curves at full settings (largest and mean over the prefix
sizes, and the prefix sizes where it exceeds 0.3) and the CPU minutes of each part (summed
from the log, so a resumed run reports the same). The bar (issue 15): ρ ≥ 0.8, or every
gap ≤ 0.3. --seed-check S retrains both orders' prefixes with seed S: how far the same
order's curve moves with the seed alone, and the two orders on a seed neither was chosen on;
--seed-check 2,3,4 compares the two orders' mean curves over those seeds (a prefix's score
moves with the seed; its mean over n seeds about 1/sqrt(n) as much). On a pool that is a
shipped order's own prefix (`--pool arc_eager_en_ewt`, `--parser tagger --pool
tagger_en_ewt`), the run at the settings it was made with gives back that prefix, so the
check is of the shipped order itself (else that order's prefixes are trained at full
settings and checked too). One log
per pool, bench-results/select_settings_*.jsonl, holds every setting's trainings (a rerun,
or a run at other short settings, retrains nothing it holds).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from depfs.select import (
    Candidate,
    Engine,
    Log,
    cut_groups,
    dask_executor,
    forward_wrapper,
    order_text,
    plot_curves,
)
from depfs.select.wrapper import planned_steps
from depfs.templates import TemplateSet

from .bench_arceager import data_dir

OUT = Path("bench-results")
FAMILY = {"arc-eager": "config", "graph": "arc", "tagger": "token"}
DEFAULT_POOL = {"arc-eager": "arc_eager", "graph": "first_order", "tagger": "tagger"}
#: Full training settings' epochs: the ArcEagerParser's, GraphParser's and Tagger's defaults.
FULL_EPOCHS = {"arc-eager": 17, "graph": 10, "tagger": 10}
#: Groups He et al. 2013 cut their order into (`depfs select groups --k 7`).
GROUPS = 7


def curve_gaps(exact: list[float], other: list[float]) -> tuple[float, float]:
    """Largest and mean of |exact − other| over the prefix sizes both curves have: how far
    the cheaper wrapper's curve strays from the exact one, above or below."""
    gaps = [abs(e - o) for e, o in zip(exact, other)]
    return max(gaps), sum(gaps) / len(gaps)


def spearman(a: list[str], b: list[str]) -> float:
    """Spearman's rank correlation of two orders over the items both contain
    (1 − 6 Σd² / (n(n² − 1)), ranks taken within those items; no ties in an order)."""
    common = [x for x in a if x in set(b)]
    n = len(common)
    if n < 2:
        return float("nan")
    rank_b = {x: i for i, x in enumerate(y for y in b if y in set(common))}
    d2 = sum((i - rank_b[x]) ** 2 for i, x in enumerate(common))
    return 1 - 6 * d2 / (n * (n * n - 1))


def paths(treebank: str) -> tuple[str, str]:
    d = data_dir() / treebank
    return str(d / "train.conllu"), str(d / "dev.conllu")


def rate(results: list[Any], workers: int) -> float:
    """Evaluations per minute, each worker's first (start-up) candidate left out."""
    rs = sorted(results, key=lambda r: r.start)[workers:]
    span = max(r.end for r in rs) - min(r.start for r in rs)
    return 60.0 * len(rs) / span


def throughput(args: argparse.Namespace) -> dict[str, Any]:
    train, dev = paths(args.treebank)
    if args.parser == "tagger":
        raise SystemExit("throughput: arc-eager or graph")
    pool = list(TemplateSet.load(DEFAULT_POOL[args.parser], FAMILY[args.parser]))
    rng = random.Random(7)
    cands = [
        Candidate(args.parser, tuple(rng.sample(pool, rng.randint(5, 30))), max_length=20)
        for _ in range(args.n)
    ]
    runs: dict[str, Any] = {}
    for name, workers, scheduler in [
        ("1 worker", 1, None),
        ("2 workers", 2, None),
        ("dask 2", 2, "local"),
    ]:
        executor, client = dask_executor(scheduler, workers) if scheduler else (None, None)
        with tempfile.TemporaryDirectory() as tmp:
            log = Log(Path(tmp) / "log.jsonl")
            with Engine(train, dev, executor=executor, workers=workers, log=log) as eng:
                results = {c.key(): r for c, r in eng.run(cands)}
        if client is not None:
            client.close()
        runs[name] = {
            "per_minute": rate(list(results.values()), workers),
            "scores": [results[c.key()].dev_las for c in cands],
        }
        print(f"{args.parser} {name}: {runs[name]['per_minute']:.1f} evaluations/min", flush=True)
    base = runs["1 worker"]
    out = {
        "parser": args.parser,
        "candidates": args.n,
        "per_minute": {k: v["per_minute"] for k, v in runs.items()},
        "speedup_2_workers": runs["2 workers"]["per_minute"] / base["per_minute"],
        "speedup_dask_2": runs["dask 2"]["per_minute"] / base["per_minute"],
        "same_scores": all(v["scores"] == base["scores"] for v in runs.values()),
    }
    print(json.dumps(out, indent=1))
    OUT.mkdir(exist_ok=True)
    (OUT / f"select_throughput_{args.parser}.json").write_text(json.dumps(out, indent=1))
    return out


def wrapper(args: argparse.Namespace) -> dict[str, Any]:
    train, dev = paths(args.treebank)
    # Settings other than the default (≤ 20 words, 1 epoch) name their own log and order.
    other_settings = (args.max_length, args.epochs) != (20, 1)
    name = f"{args.treebank}_{args.parser.replace('-', '')}_{args.pool}" + (
        f"_m{args.candidates}" if args.candidates else ""
    )
    if other_settings:
        name += f"_ml{args.max_length or 'all'}_e{args.epochs}"
    OUT.mkdir(exist_ok=True)
    t0 = time.time()
    r = forward_wrapper(
        args.pool,
        train,
        dev,
        parser=args.parser,
        epochs=args.epochs,
        max_length=args.max_length,
        candidates=args.candidates,
        rerank_every=args.rerank_every,
        limit=args.limit,
        workers=args.workers,
        log=OUT / f"select_{name}.jsonl",
        on_step=lambda s: print(f"{s.template.text}  {s.score:.2f}  ({s.candidates})", flush=True),
    )
    header = f"python -m benches.bench_select wrapper --parser {args.parser} --pool {args.pool}"
    if args.treebank != "en_ewt":
        header += f" --treebank {args.treebank}"
    if args.candidates:
        header += f" --candidates {args.candidates} --rerank-every {args.rerank_every}"
    if other_settings:
        header += f" --max-length {args.max_length or 'all'} --epochs {args.epochs}"
    if args.limit:
        header += f" --limit {args.limit}"
    (OUT / f"select_{name}.txt").write_text(order_text(r.order, r.scores, r.metric, header))
    plot = Path(args.plot) if args.plot else OUT / f"select_{name}.png"
    plot_curves(plot, [("forward wrapper", r.scores)], r.metric, title=name)
    groups = cut_groups(r.scores, GROUPS)
    out = {
        "name": name,
        "minutes": (time.time() - t0) / 60,
        "evaluated": r.evaluated,
        "reused": r.reused,
        "scores": r.scores,
        "groups": groups,
    }
    (OUT / f"select_{name}.json").write_text(json.dumps(out, indent=1))
    print(f"{name}: {len(r.steps)} templates in {out['minutes']:.1f} min ({r.evaluated} trained)")
    print(f"groups (depfs select groups --k {GROUPS}): {', '.join(map(str, groups))}")
    print(f"wrote {plot}")
    return out


def shortlists(args: argparse.Namespace) -> list[tuple[int, int]]:
    """The (M, R) pairs of `compare`: each --shortlist M:R, else --candidates / --rerank-every."""
    if not args.shortlist:
        return [(args.candidates or 5, args.rerank_every)]
    pairs = []
    for text in args.shortlist:
        m, _, r = text.partition(":")
        if not (m.isdigit() and r.isdigit() and int(m) > 0 and int(r) > 0):
            raise SystemExit(f"--shortlist {text}: expected M:R, two positive integers")
        pairs.append((int(m), int(r)))
    return pairs


def compare(args: argparse.Namespace) -> dict[str, Any]:
    train, dev = paths(args.treebank)
    pool = TemplateSet.load(args.pool, FAMILY[args.parser])[: args.pool_size]
    OUT.mkdir(exist_ok=True)
    log = OUT / f"select_compare_{args.parser}_{args.pool_size}.jsonl"
    runs: list[tuple[str, int | None, int]] = [("exact", None, args.rerank_every)]
    runs += [(f"shortlist M={m}, R={r}", m, r) for m, r in shortlists(args)]
    curves: list[tuple[str, list[float]]] = []
    out: dict[str, Any] = {}
    for label, m, every in runs:
        t0 = time.time()
        r = forward_wrapper(
            pool,
            train,
            dev,
            parser=args.parser,
            epochs=args.epochs,
            max_length=args.max_length,
            candidates=m,
            rerank_every=every,
            workers=args.workers,
            log=log,
        )
        row: dict[str, Any] = {
            "trained": r.evaluated,
            "reused": r.reused,
            "minutes": (time.time() - t0) / 60,
            "scores": r.scores,
            "order": [t.text for t in r.order],
        }
        exact = out.get("exact")
        line = f"{label}: {r.evaluated + r.reused} candidates, best {max(r.scores):.2f}"
        if exact is not None:
            row["max_gap"], row["mean_gap"] = curve_gaps(exact["scores"], r.scores)
            row["spearman"] = spearman(exact["order"], row["order"])
            share = (r.evaluated + r.reused) / (exact["trained"] + exact["reused"])
            line += (
                f" ({share:.0%} of the exact wrapper's); curve vs exact: max gap "
                f"{row['max_gap']:.2f}, mean gap {row['mean_gap']:.2f}; "
                f"Spearman of the orders {row['spearman']:.2f}"
            )
        print(line, flush=True)
        curves.append((f"{label} ({r.evaluated + r.reused})", r.scores))
        out[label] = row
    plot = Path(args.plot) if args.plot else OUT / f"select_compare_{args.parser}.png"
    title = f"forward wrapper, first {len(pool)} {args.pool} templates, {args.treebank} dev"
    plot_curves(plot, curves, r.metric, title=title)
    print(f"wrote {plot}")
    (OUT / f"select_compare_{args.parser}.json").write_text(json.dumps(out, indent=1))
    return out


#: The bar of the settings check (issue 15): curves within this at every prefix size.
GAP_BAR = 0.3


def over_bar(full: list[float], short: list[float], bar: float = GAP_BAR) -> str:
    """Where the short order's curve strays more than `bar` from the full order's: runs of
    prefix sizes ("4-17, 20"), 1-based; "" when nowhere."""
    bad = [k for k, (a, b) in enumerate(zip(full, short), 1) if abs(b - a) > bar]
    runs: list[list[int]] = []
    for k in bad:
        if runs and runs[-1][1] == k - 1:
            runs[-1][1] = k
        else:
            runs.append([k, k])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def projected_minutes(samples: list[tuple[int, float]], steps: list[int]) -> float:
    """CPU minutes of a wrapper run whose step k trains steps[k] candidates of k + 1
    templates, from (templates, CPU seconds) samples at the same settings: the least-squares
    line of seconds on templates, summed over the run (an extrapolation past the samples)."""
    n = len(samples)
    mx = sum(k for k, _ in samples) / n
    my = sum(c for _, c in samples) / n
    sxx = sum((k - mx) ** 2 for k, _ in samples)
    slope = sum((k - mx) * (c - my) for k, c in samples) / sxx if sxx else 0.0
    return sum(m * (my + slope * (k + 1 - mx)) for k, m in enumerate(steps)) / 60


def max_length_arg(text: str) -> int | None:
    """--max-length: a positive number of words, or `all` (every sentence)."""
    if text == "all":
        return None
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of words or all, got {text}")
    return int(text)


def seeds_arg(text: str) -> list[int]:
    """--seed-check: one seed or a comma-separated list of distinct ones, none of them 1 (the
    seed the two orders were chosen on)."""
    try:
        seeds = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seeds like 2 or 2,3,4, got {text}") from None
    if 1 in seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise argparse.ArgumentTypeError(f"expected distinct seeds other than 1, got {text}")
    return seeds


def seeds_text(seeds: list[int]) -> str:
    """2, 3 and 4."""
    if len(seeds) == 1:
        return str(seeds[0])
    return ", ".join(map(str, seeds[:-1])) + f" and {seeds[-1]}"


def settings_name(args: argparse.Namespace) -> str:
    """The short settings in a file name: max length, epochs, and the shortlist if any."""
    name = f"ml{args.max_length or 'all'}_e{args.epochs}"
    if args.candidates:
        name += f"_m{args.candidates}r{args.rerank_every}"
    return name


def settings_label(args: argparse.Namespace) -> str:
    """The short settings in words, for the plot."""
    text = f"≤ {args.max_length} words" if args.max_length else "all sentences"
    text += f", {args.epochs} epoch" + ("s" if args.epochs > 1 else "")
    if args.candidates:
        text += f", M={args.candidates} R={args.rerank_every}"
    return text


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """The short-settings order against the full-settings one on a small pool (see the
    module doc): Spearman's ρ, and their dev curves at full settings."""
    train, dev = paths(args.treebank)
    pool = TemplateSet.load(args.pool, FAMILY[args.parser])[: args.pool_size]
    OUT.mkdir(exist_ok=True)
    log = OUT / f"select_settings_{args.treebank}_{args.parser}_{args.pool}_{args.pool_size}.jsonl"
    full_epochs = args.full_epochs or FULL_EPOCHS[args.parser]
    common = dict(parser=args.parser, metric=args.metric, workers=args.workers, log=log)
    runs = {}
    cpu: dict[str, float] = {}
    samples: dict[str, list[tuple[int, float]]] = {}
    for label, epochs, max_length, m in [
        ("short", args.epochs, args.max_length, args.candidates),
        ("full", full_epochs, None, None),
    ]:
        t0 = time.time()
        seconds: list[tuple[int, float]] = []
        r = forward_wrapper(
            pool,
            train,
            dev,
            epochs=epochs,
            max_length=max_length,
            candidates=m,
            rerank_every=args.rerank_every,
            on_result=lambda c, r, seconds=seconds: seconds.append(
                (len(c.templates), r.cpu_seconds)
            ),
            **common,
        )
        runs[label], cpu[label], samples[label] = r, sum(c for _, c in seconds) / 60, seconds
        print(
            f"{label} settings (epochs {epochs}, max length {max_length}"
            + (f", shortlist M={m} R={args.rerank_every}" if m else "")
            + f"): {r.evaluated} trained, {r.reused} from the log, "
            f"{(time.time() - t0) / 60:.1f} min of wall time, {cpu[label]:.1f} min of CPU",
            flush=True,
        )
    short, full = runs["short"], runs["full"]
    # The short order's prefixes, trained at full settings; and the pool's own order's (the
    # shipped one's, when the pool is a shipped order) if the short run did not give it back.
    orders = {"short order": list(short.order)}
    if [t.text for t in pool] != [t.text for t in short.order]:
        orders["pool order"] = list(pool)
    cands = {
        label: [
            Candidate(args.parser, tuple(o[:k]), epochs=full_epochs) for k in range(1, 1 + len(o))
        ]
        for label, o in orders.items()
    }
    with Engine(train, dev, workers=args.workers, log=Log(log)) as engine:
        results = {c.key(): r for c, r in engine.run(c for cs in cands.values() for c in cs)}
    at_full = {
        label: [results[c.key()].score(full.metric) for c in cs] for label, cs in cands.items()
    }
    short_at_full = at_full["short order"]
    cpu["prefixes"] = sum(results[c.key()].cpu_seconds for c in cands["short order"]) / 60
    checks = {}
    for label, o in orders.items():
        curve = at_full[label]
        max_gap, mean_gap = curve_gaps(full.scores, curve)
        rho = spearman([t.text for t in full.order], [t.text for t in o])
        where = over_bar(full.scores, curve)
        meets = rho >= 0.8 or not where
        checks[label] = {
            "spearman": rho,
            "max_gap": max_gap,
            "mean_gap": mean_gap,
            "over_bar": where,
            "meets_bar": meets,
        }
        print(
            f"{label}: Spearman with the full order {rho:.3f}; dev {full.metric} at full "
            f"settings against the full order's: max gap {max_gap:.2f}, mean gap "
            f"{mean_gap:.2f}, over {GAP_BAR} at {where or 'no'} templates; best "
            f"{max(curve):.2f} against {max(full.scores):.2f}; "
            f"{'meets' if meets else 'misses'} the bar (rho >= 0.8 or every gap <= {GAP_BAR})",
            flush=True,
        )
    noise = None
    if args.seed_check:
        # The bar against the seed. Both orders' prefixes retrained with other seeds: the
        # full order's curve moves by this much with the seed alone (and its seed-1 curve is
        # the best of each step's candidates on that seed, so it sits high), and the two
        # orders compared on seeds neither was chosen on. With several seeds the curves
        # compared are each order's mean over them: a prefix's dev score varies with the
        # seed (about 0.2 LAS for arc-eager), its mean over n seeds about 1/sqrt(n) as much.
        seeds = args.seed_check
        again = {
            (label, seed): [
                Candidate(args.parser, tuple(o[:k]), epochs=full_epochs, seed=seed)
                for k in range(1, len(o) + 1)
            ]
            for label, o in [("full", full.order), ("short", short.order)]
            for seed in seeds
        }
        with Engine(train, dev, workers=args.workers, log=Log(log)) as engine:
            got = {c.key(): r for c, r in engine.run(c for cs in again.values() for c in cs)}
        reseeded = {
            label: [
                sum(got[again[label, seed][k].key()].score(full.metric) for seed in seeds)
                / len(seeds)
                for k in range(len(o))
            ]
            for label, o in [("full", full.order), ("short", short.order)]
        }
        noise = {
            "seeds": seeds,
            "full_scores": reseeded["full"],
            "short_scores": reseeded["short"],
            "per_seed": {
                f"{label} seed {seed}": [got[c.key()].score(full.metric) for c in cs]
                for (label, seed), cs in again.items()
            },
        }
        for label, (a, b) in {
            "full_seed_vs_seed_1": (full.scores, reseeded["full"]),
            "short_vs_full_on_seed": (reseeded["full"], reseeded["short"]),
        }.items():
            max_gap, mean_gap = curve_gaps(a, b)
            mean_signed = sum(y - x for x, y in zip(a, b)) / len(b)
            noise[label] = {
                "max_gap": max_gap,
                "mean_gap": mean_gap,
                "mean_signed": mean_signed,
                "over_bar": over_bar(a, b),
            }
        f, sh = noise["full_seed_vs_seed_1"], noise["short_vs_full_on_seed"]
        on = f"seed {seeds[0]}" if len(seeds) == 1 else f"the mean of seeds {seeds_text(seeds)}"
        print(
            f"{on}: the full order's prefixes against seed 1's: max gap {f['max_gap']:.2f},"
            f" mean gap {f['mean_gap']:.2f} ({f['mean_signed']:+.2f} on average), over "
            f"{GAP_BAR} at {f['over_bar'] or 'no'} templates; the short order against the full "
            f"order, both on {on}: max gap {sh['max_gap']:.2f}, mean gap "
            f"{sh['mean_gap']:.2f} ({sh['mean_signed']:+.2f} on average), over {GAP_BAR} at "
            f"{sh['over_bar'] or 'no'} templates",
            flush=True,
        )
        for k, (a, b) in enumerate(zip(reseeded["full"], reseeded["short"]), 1):
            print(f"  {k:3d}  {on}: full order {a:6.2f}  short order {b:6.2f}  {b - a:+.2f}")
    print(
        f"CPU minutes: short order {cpu['short']:.1f}, its prefixes at full settings "
        f"{cpu['prefixes']:.1f}, full order {cpu['full']:.1f}",
        flush=True,
    )
    # What ordering the whole pool would cost at each settings: the exact wrapper, and the
    # cheaper one at the README's M=10, R=5.
    whole = len(TemplateSet.load(args.pool, FAMILY[args.parser]))
    projected = {
        f"{label} {variant}": projected_minutes(samples[label], planned_steps(whole, None, m, 2, 5))
        for label in ("short", "full")
        for variant, m in [("exact", None), ("M=10 R=5", 10)]
    }
    print(
        f"the whole {args.pool} ({whole} templates), projected from these trainings' CPU times,"
        f" exact / cheaper wrapper (M=10, R=5): at the short settings "
        f"{projected['short exact']:.0f} / {projected['short M=10 R=5']:.0f} CPU min, at full "
        f"settings {projected['full exact']:.0f} / {projected['full M=10 R=5']:.0f}",
        flush=True,
    )
    for k, (a, b) in enumerate(zip(full.scores, short_at_full), 1):
        line = f"  {k:3d}  full order {a:6.2f}  short order {b:6.2f}  {b - a:+.2f}"
        if "pool order" in at_full:
            c = at_full["pool order"][k - 1]
            line += f"  pool order {c:6.2f}  {c - a:+.2f}"
        print(line)
    name = f"{args.treebank}_{args.parser}_{settings_name(args)}"
    plot = Path(args.plot) if args.plot else OUT / f"select_settings_{name}.png"
    curves = [
        ("order from full settings", full.scores),
        (f"order from {settings_label(args)}", short_at_full),
    ]
    if "pool order" in at_full:
        curves.append((f"{args.pool} (its own order)", at_full["pool order"]))
    plot_curves(
        plot,
        curves,
        full.metric,
        title=f"first {len(pool)} {args.pool} templates, {args.treebank} dev, full settings",
    )
    print(f"wrote {plot}")
    out = {
        "short_settings": {
            "max_length": args.max_length,
            "epochs": args.epochs,
            "candidates": args.candidates,
            "rerank_every": args.rerank_every if args.candidates else None,
        },
        "full_epochs": full_epochs,
        "metric": full.metric,
        **checks["short order"],
        "pool_order_check": checks.get("pool order"),
        "cpu_minutes": cpu,
        "projected_cpu_minutes_whole_pool": projected,
        "short_order": [t.text for t in short.order],
        "full_order": [t.text for t in full.order],
        "short_scores_short_settings": short.scores,
        "full_scores": full.scores,
        "short_scores_full_settings": short_at_full,
        "pool_scores_full_settings": at_full.get("pool order"),
        "seed_check": noise,
    }
    (OUT / f"select_settings_{name}.json").write_text(json.dumps(out, indent=1))
    return out


def quality(args: argparse.Namespace) -> dict[str, Any]:
    """Top-k prefixes of an order, retrained on all of train with default epochs and
    scored on test, beside the full set, three random sets of 20 and nilsson_nugues."""
    import depfs
    from depfs.select import read_order

    if args.parser == "tagger":
        raise SystemExit("quality: arc-eager or graph parsers only")
    family = FAMILY[args.parser]
    order, _ = read_order(args.order_file, family)
    d = data_dir() / args.treebank
    train, test = depfs.read_conllu(d / "train.conllu"), depfs.read_conllu(d / "test.conllu")
    full = TemplateSet.load(args.pool, family)
    rng = random.Random(11)
    sets = {f"top {k}": order[:k] for k in (10, 20, 40)}
    sets.update(
        {f"random 20 #{i}": TemplateSet(rng.sample(list(full), 20), family) for i in (1, 2, 3)}
    )
    sets["full " + args.pool] = full
    if args.parser == "arc-eager":
        sets["nilsson_nugues"] = TemplateSet.load("nilsson_nugues", family)
    out: dict[str, Any] = {}
    for name, ts in sets.items():
        t0 = time.time()
        if args.parser == "arc-eager":
            p: Any = depfs.ArcEagerParser(ts.text, random_state=1).fit(train)
        else:
            p = depfs.GraphParser(arc_templates=ts.text, random_state=1).fit(train)
        s = depfs.evaluate(test, p.parse(test, threads=1))
        out[name] = {"templates": len(ts), "uas": s.uas, "las": s.las, "seconds": time.time() - t0}
        print(
            f"{name:24s} {len(ts):4d} templates  test UAS {s.uas:.2f} LAS {s.las:.2f}", flush=True
        )
    OUT.mkdir(exist_ok=True)
    (OUT / f"select_quality_{args.parser}.json").write_text(json.dumps(out, indent=1))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("what", choices=["throughput", "wrapper", "compare", "quality", "settings"])
    ap.add_argument(
        "--order-file",
        help="quality: the order file of a wrapper run, or a shipped order (arc_eager_en_ewt)",
    )
    ap.add_argument("--parser", choices=list(FAMILY), default="arc-eager")
    ap.add_argument("--treebank", default="en_ewt")
    ap.add_argument("--pool", default=None, help="[default: arc_eager / first_order / tagger]")
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--max-length", type=max_length_arg, default=20, help="words, or all")
    ap.add_argument("--candidates", type=int, default=None)
    ap.add_argument("--rerank-every", type=int, default=10)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--pool-size", type=int, default=30)
    ap.add_argument(
        "--full-epochs", type=int, default=None, help="settings: [default: 17 parser, 10 tagger]"
    )
    ap.add_argument("--metric", default=None, help="settings: [default: the parser's]")
    ap.add_argument(
        "--seed-check",
        type=seeds_arg,
        default=None,
        metavar="S[,S...]",
        help="settings: retrain both orders' prefixes with these seeds (several: their mean)",
    )
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--shortlist", action="append", metavar="M:R", help="compare: a cheaper wrapper (repeat)"
    )
    ap.add_argument("--plot", help="wrapper, compare: write the curves' PNG here")
    args = ap.parse_args(argv)
    args.pool = args.pool or DEFAULT_POOL[args.parser]
    run = {
        "throughput": throughput,
        "wrapper": wrapper,
        "compare": compare,
        "quality": quality,
        "settings": settings,
    }
    run[args.what](args)


if __name__ == "__main__":
    main()
