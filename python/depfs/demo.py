"""`python -m depfs.demo` (what `make demo` runs).

Statistics of a treebank, the scores of a seeded, perturbed copy of it against the
original, a briefly trained graph parser, then the prefix-margin knob (Strubell et al.
2015) of a dynamic arc-eager parser: one model parsed at three margins. Uses UD English-EWT dev when
`DEPFS_DATA` (or ../shared/data/ud) has it, else the synthetic treebank.
"""

from __future__ import annotations

import time
from typing import Any

from .datasets import perturb, synthetic, ud_available, ud_path
from .evaluate import evaluate, stats


def main() -> None:
    t0 = time.perf_counter()
    if ud_available("en_ewt", "dev"):
        from .treebank import read_conllu

        path = ud_path("en_ewt", "dev")
        source = str(path)
        gold = read_conllu(path)
    else:
        source = "synthetic grammar (2000 sentences, seed 0); set DEPFS_DATA for UD"
        gold = synthetic(2000, seed=0)
    t_read = time.perf_counter() - t0
    print(f"data: {source} (loaded in {t_read:.2f}s)")

    st = stats(gold)
    print(
        f"{st.sentences} sentences, {st.words} words, mean length {st.mean_length:.1f}, "
        f"max {st.max_length}, {len(st.labels)} labels"
    )
    print(
        f"non-projective: {100 * st.nonprojective_sentence_share:.2f}% of sentences, "
        f"{100 * st.nonprojective_arc_share:.2f}% of arcs; multiword tokens {st.multiword_tokens}, "
        f"empty nodes {st.empty_nodes}"
    )
    top = sorted(st.labels.items(), key=lambda kv: -kv[1])[:8]
    print("most frequent labels: " + ", ".join(f"{label} {n}" for label, n in top))

    print("\nperturbed copy (seed 1) scored against the original:")
    print(f"{'head rate':>9} {'label rate':>10} {'UAS':>7} {'LAS':>7} {'LAS-P':>7} {'label':>7}")
    for head_rate, label_rate in ((0.0, 0.0), (0.05, 0.05), (0.1, 0.1), (0.2, 0.1), (0.3, 0.3)):
        system = perturb(gold, head_rate=head_rate, label_rate=label_rate, seed=1)
        s = evaluate(gold, system)
        print(
            f"{head_rate:>9.2f} {label_rate:>10.2f} {s.uas:>7.2f} {s.las:>7.2f} "
            f"{s.las_nopunct:>7.2f} {s.label_acc:>7.2f}"
        )
    print("(LAS-P: LAS without punctuation)")
    graph_demo()
    margin_demo()


def _train_test() -> tuple[Any, Any, str]:
    """en_ewt train and dev when UD is there, else synthetic treebanks; and which."""
    if ud_available("en_ewt", "train") and ud_available("en_ewt", "dev"):
        from .treebank import read_conllu

        train, test = read_conllu(ud_path("en_ewt", "train")), read_conllu(ud_path("en_ewt", "dev"))
        return train, test, "en_ewt train -> dev"
    return synthetic(2000, seed=0), synthetic(500, seed=1), "synthetic 2000 -> 500 sentences"


def graph_demo() -> None:
    """Trains the first-order graph parser briefly and scores it."""
    from .graph import GraphParser

    train, test, what = _train_test()
    print(f"\ngraph parser (first order, Eisner, 2 epochs, {what}):")
    t0 = time.perf_counter()
    parser = GraphParser(epochs=2, max_bits=18).fit(train)
    t_train = time.perf_counter() - t0
    t0 = time.perf_counter()
    parsed = parser.parse(test, threads=1)
    t_parse = time.perf_counter() - t0
    s = evaluate(test, parsed)
    print(
        f"UAS {s.uas:.2f} LAS {s.las:.2f}; trained in {t_train:.0f}s, "
        f"parsed {test.n_words / t_parse:,.0f} words/s (1 thread)"
    )


def margin_demo() -> None:
    """A dynamic arc-eager parser (shipped en_ewt template order) parsed at its `fast` and
    `accurate` presets, its training margin and every template (inf)."""
    from .arceager import ArcEagerParser
    from .dynamic.strubell2015 import margin_point

    train, test, what = _train_test()
    print(f"\ndynamic arc-eager parser (arc_eager_en_ewt order, 8 epochs, {what}):")
    t0 = time.perf_counter()
    parser = ArcEagerParser("arc_eager_en_ewt", epochs=8, dynamic=True).fit(train, dev=test)
    print(f"trained in {time.perf_counter() - t0:.0f}s; presets {parser.margin_presets_}")
    print(f"{'margin':>14} {'LAS':>6} {'templates/move':>15} {'words/s':>10}")
    presets = parser.margin_presets_ or {}
    for name in ("fast", "accurate", "train", "inf"):
        m = float("inf") if name == "inf" else presets[name]
        t0 = time.perf_counter()
        parsed = parser.parse(
            test, threads=1, margin=name if name in presets and name != "train" else m
        )
        speed = test.n_words / (time.perf_counter() - t0)
        point = margin_point(parser.model_, test, m)
        s = evaluate(test, parsed)
        print(f"{name + f' ({m:g})':>14} {s.las:6.2f} {point.move_templates:15.1f} {speed:10,.0f}")
    print("(a margin above the training margin only adds templates trained on hard cases)")
    print("(the knob: depfs parse MODEL --margin fast|accurate|NUMBER)")


if __name__ == "__main__":
    main()
