"""The selection engine, the forward wrapper and grouping, on small synthetic data."""

from __future__ import annotations

import concurrent.futures as cf
import json
from pathlib import Path

import depfs
import pytest
from click.testing import CliRunner
from depfs.cli import main
from depfs.datasets import synthetic
from depfs.select import (
    Candidate,
    Engine,
    Log,
    cut_groups,
    evaluate_candidate,
    forward_wrapper,
    groups_text,
    planned_evaluations,
    read_groups,
    read_order,
)
from depfs.select.groups import RANKED_MARK, order_text
from depfs.select.wrapper import planned_steps
from depfs.templates import TemplateSet

POOL = "upos(QUEUE_0)\nform(QUEUE_0)\nupos(STACK_0)\nupos(STACK_0) & upos(QUEUE_0)"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    d = tmp_path_factory.mktemp("select")
    train, dev = d / "train.conllu", d / "dev.conllu"
    synthetic(120, seed=1).write(str(train))
    synthetic(30, seed=2).write(str(dev))
    return str(train), str(dev)


def cand(text: str, **kw: object) -> Candidate:
    return Candidate("arc-eager", tuple(TemplateSet.parse(text, "config")), **kw)  # type: ignore[arg-type]


def test_a_candidate_gives_the_same_result_twice(data: tuple[str, str]):
    a = evaluate_candidate(cand(POOL, epochs=2), *data)
    b = evaluate_candidate(cand(POOL, epochs=2), *data)
    assert (a.key, a.dev_uas, a.dev_las, a.evaluations_per_word) == (
        b.key,
        b.dev_uas,
        b.dev_las,
        b.evaluations_per_word,
    )
    assert 0 < a.dev_las <= a.dev_uas <= 100
    # 4 templates, between 1 and 2 decisions a word.
    assert 4 <= a.evaluations_per_word <= 8
    # Training only on short sentences is a different candidate with another result.
    short = evaluate_candidate(cand(POOL, epochs=2, max_length=5), *data)
    assert short.key != a.key and short.dev_las != a.dev_las


def test_wrapper_orders_the_pool_and_a_rerun_resumes_from_the_log(
    data: tuple[str, str], tmp_path: Path
):
    log = tmp_path / "w.jsonl"
    with cf.ThreadPoolExecutor(2) as ex:
        r = forward_wrapper(POOL, *data, epochs=2, executor=ex, log=log)
    assert sorted(t.text for t in r.order) == sorted(
        t.text for t in TemplateSet.parse(POOL, "config")
    )
    assert r.evaluated == planned_evaluations(4, None, None, 2, 5) == 4 + 3 + 2 + 1
    lines = log.read_text().splitlines()
    assert len(lines) == r.evaluated and all(json.loads(x)["key"] for x in lines)
    # Each step took the best candidate of its step: no other candidate beat it.
    for k, step in enumerate(r.steps):
        assert step.score == max(
            json.loads(x)["dev_las"] for x in lines if len(json.loads(x)["templates"]) == k + 1
        )
    # A torn last line (a kill mid-write) is dropped; the rerun trains only that candidate.
    log.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:20])
    with cf.ThreadPoolExecutor(2) as ex:
        again = forward_wrapper(POOL, *data, epochs=2, executor=ex, log=log)
    assert [t.text for t in again.order] == [t.text for t in r.order]
    assert again.scores == r.scores
    assert (again.evaluated, again.reused) == (1, r.evaluated - 1)
    assert len(Log(log).results) == r.evaluated  # the torn bytes did not glue onto a line
    # A log made on other data is refused, not reused (it used to give the old order).
    other = tmp_path / "other.conllu"
    synthetic(60, seed=5).write(str(other))
    with cf.ThreadPoolExecutor(2) as ex, pytest.raises(ValueError, match="other data"):
        forward_wrapper(POOL, other, data[1], epochs=2, executor=ex, log=log)
    assert len({json.dumps(json.loads(x)["data"]) for x in lines}) == 1
    assert " bytes, sha256 " in json.loads(lines[0])["data"]["train"]
    log.write_text("not json\n")
    with pytest.raises(ValueError, match="w.jsonl:1"):
        Log(log)


def test_process_pool_and_dask_cluster_give_the_same_order(data: tuple[str, str]):
    distributed = pytest.importorskip("distributed")
    local = forward_wrapper(POOL, *data, epochs=1, workers=2, limit=2)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        on_dask = forward_wrapper(POOL, *data, epochs=1, executor=client.get_executor(), limit=2)
    assert [t.text for t in on_dask.order] == [t.text for t in local.order]
    assert on_dask.scores == local.scores


def test_close_dask_stops_our_local_cluster_and_its_client() -> None:
    """`--scheduler local` (select wrapper and parse alike): the LocalCluster we started is
    stopped with its client, not left to the interpreter's exit."""
    pytest.importorskip("distributed")
    from depfs.select.engine import close_dask, dask_executor

    ex, client = dask_executor("local", workers=1)
    cluster = client.cluster
    assert ex.submit(sum, [1, 2]).result() == 3
    close_dask(ex, client)
    assert client.status == "closed"
    assert cluster.status.name == "closed"


class FlakyExecutor(cf.ThreadPoolExecutor):
    """Fails the first `failures` submissions, as a dying worker would."""

    def __init__(self, failures: int) -> None:
        super().__init__(2)
        self.failures = failures

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        if self.failures > 0:
            self.failures -= 1
            fut: cf.Future[object] = cf.Future()
            fut.set_exception(cf.process.BrokenProcessPool("worker died"))
            return fut
        return super().submit(fn, *args, **kwargs)


def test_a_failed_candidate_is_retried_then_reported(data: tuple[str, str]):
    cands = [cand("upos(QUEUE_0)"), cand("form(QUEUE_0)")]
    with FlakyExecutor(2) as ex:
        got = list(Engine(*data, executor=ex).run(cands))
    assert sorted(c.key() for c, _ in got) == sorted(c.key() for c in cands)
    # (not a bug of depfs: a DepfsError, one line from the CLI; it was "internal error")
    dead = pytest.raises(depfs.errors.WorkersLostError, match="failed 3 times: its worker died")
    with FlakyExecutor(10) as ex, dead:
        list(Engine(*data, executor=ex, retries=2).run(cands[:1]))


def test_a_candidate_that_fails_by_itself_is_not_retried(data: tuple[str, str]):
    """Retries are for dead workers; an error of the candidate is raised at once."""
    calls = []

    class Counting(cf.ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
            calls.append(args[0])
            return super().submit(fn, *args, **kwargs)

    # Arc templates given to the arc-eager parser: fails the same way every time.
    wrong = Candidate("arc-eager", tuple(TemplateSet.parse("upos(h) & upos(m)", "arc")))
    with Counting(1) as ex, pytest.raises(depfs.errors.DepfsError):
        list(Engine(*data, executor=ex).run([wrong]))
    assert len(calls) == 1


def test_templates_with_more_word_atoms_keep_their_bound(data: tuple[str, str]):
    """A pool template with 4 word atoms (shipped first_order has some) trains: the
    candidate's set text carries its max_atoms line."""
    wide = TemplateSet.parse("#! max_atoms = 4\nform(h) & upos(h) & form(m) & upos(m)", "arc")
    r = evaluate_candidate(Candidate("graph", tuple(wide), epochs=1), *data)
    assert r.dev_uas > 0


def test_cheaper_variant_trains_fewer_candidates(data: tuple[str, str]):
    with cf.ThreadPoolExecutor(2) as ex:
        exact = forward_wrapper(POOL, *data, epochs=2, executor=ex)
        cheap = forward_wrapper(POOL, *data, epochs=2, executor=ex, candidates=1, full_steps=1)
    assert (
        cheap.evaluated == planned_evaluations(4, None, 1, 1, 5) == 4 + 1 + 1 + 1 < exact.evaluated
    )
    assert [s.candidates for s in cheap.steps] == planned_steps(4, None, 1, 1, 5) == [4, 1, 1, 1]
    # Its first step is the exact one.
    assert cheap.order[0] == exact.order[0]


def test_planned_steps() -> None:
    assert planned_steps(4, None, None, 2, 5) == [4, 3, 2, 1]
    # M=2 after two full steps, a full re-rank at every third step (k = 3), the shortlist
    # never longer than the templates left; --limit stops early.
    assert planned_steps(6, None, 2, 2, 3) == [6, 5, 2, 3, 2, 1]
    assert planned_steps(6, 3, 2, 2, 3) == [6, 5, 2]


def test_graph_wrapper_with_a_base(data: tuple[str, str]):
    with cf.ThreadPoolExecutor(2) as ex:
        r = forward_wrapper(
            "form(h) & form(m)\nupos(m) & dir",
            *data,
            parser="graph",
            base="upos(h) & upos(m)",
            epochs=1,
            executor=ex,
        )
    assert r.metric == "uas" and len(r.steps) == 2 and r.base_score is not None
    assert all(s.evaluations_per_word > 0 for s in r.steps)
    with pytest.raises(ValueError, match="both in the pool and the base"):
        forward_wrapper("upos(h) & upos(m)", *data, parser="graph", base="upos(h) & upos(m)")


def test_a_based_order_file_trains_the_sets_its_scores_were_measured_on(
    data: tuple[str, str], tmp_path: Path
):
    # The file held the ranked templates alone, so a model trained on it (as order files
    # are meant to be used) lacked the base every score included.
    from depfs.select import read_order_base

    out, groups = tmp_path / "order.txt", tmp_path / "groups.txt"
    base = "upos(STACK_0) & upos(QUEUE_0)"
    pool = "form(STACK_0)\nupos(QUEUE_1)\nupos(QUEUE_0 lc)"
    args = ["select", "wrapper", "--parser", "arc-eager", "--pool", pool, "--base", base]
    args += ["--train", data[0], "--dev", data[1], "--epochs", "1", "--workers", "1"]
    res = CliRunner().invoke(main, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    order, scores = read_order(out)
    assert len(order) == len(scores) == 3 and base not in [t.text for t in order]
    assert [t.text for t in read_order_base(out)] == [base]
    whole = TemplateSet.parse(out.read_text(), "config")  # as `depfs train --templates` reads it
    assert [t.text for t in whole] == [base, *(t.text for t in order)]
    # Each prefix of the file trains to the score written after it.
    for k in (1, 3):
        got = evaluate_candidate(
            cand("\n".join(t.text for t in list(whole)[: k + 1]), epochs=1), *data
        )
        assert got.dev_las == pytest.approx(scores[k - 1], abs=0.006), k
    # Groups: the base is computed first, in group 1.
    res = CliRunner().invoke(main, ["select", "groups", str(out), "--k", "2", "-o", str(groups)])
    assert res.exit_code == 0, res.output
    first = [t.text for t in read_groups(groups, "config")[1][0]]
    assert first[:2] == [base, order[0].text]
    assert read_order_base("arc_eager_en_ewt") == TemplateSet([], "config")


def test_groups_of_equal_gain():
    # Linear gains after the first template: equal group sizes.
    assert cut_groups([10, 11, 12, 13, 14, 15, 16], 4) == [1, 2, 2, 2]
    # Most of the gain early: small early groups, a big last one (He et al.'s shape).
    sizes = cut_groups([50, 70, 80, 85, 87, 88, 88.5, 88.7, 88.8, 88.9], 4)
    assert sum(sizes) == 10 and sizes[0] == 1 and sizes[-1] == max(sizes)
    assert cut_groups([1.0, 2.0], 5) == [1, 1]
    assert cut_groups([], 3) == []
    with pytest.raises(ValueError):
        cut_groups([1.0], 0)
    # Every group gets a template, also when one prefix reaches two targets or the gain
    # comes only at the end; the total is the best score's, not the last's (planted, each
    # failed: the next group may start at the last's end; the last groups may be empty;
    # the total gain up to the last score).
    assert cut_groups([0, 10, 10, 10], 4) == [1, 1, 1, 1]
    assert cut_groups([0, 0, 0, 0, 10], 3) == [1, 3, 1]
    assert cut_groups([0, 4, 6, 10, 2], 3) == [1, 2, 2]


def test_order_and_groups_files_round_trip(tmp_path: Path):
    arc = TemplateSet.parse("upos(h) & upos(m)\nform(h)\nform(m) & dir", "arc")
    sib = TemplateSet.parse("upos(s) & upos(m)\nupos(h) & upos(s)", "arc")
    path = tmp_path / "groups.txt"
    path.write_text(groups_text([arc[:1], arc[1:]], [sib[:1], sib[1:]]))
    groups = read_groups(path)
    assert [list(g) for g in groups[1]] == [list(arc[:1]), list(arc[1:])]
    assert [list(g) for g in groups[2]] == [list(sib[:1]), list(sib[1:])]
    # The same file loads as an ordinary template file.
    assert len(TemplateSet.load(str(path), "arc")) == 5


def test_cli_wrapper_then_groups_then_train(data: tuple[str, str], tmp_path: Path):
    train, dev = data
    out, groups, model = tmp_path / "order.txt", tmp_path / "groups.txt", tmp_path / "m.depfs"
    pool = tmp_path / "pool.txt"
    pool.write_text(POOL + "\n")
    runner = CliRunner()
    args = ["select", "wrapper", "--pool", str(pool), "--train", train, "--dev", dev]
    res = runner.invoke(
        main,
        [
            *args,
            "--out",
            str(out),
            "--epochs",
            "1",
            "--workers",
            "1",
            "--limit",
            "3",
            "--plot",
            str(tmp_path / "c.png"),
        ],
    )
    assert res.exit_code == 0, res.output
    order, scores = read_order(out, "config")
    assert len(order) == len(scores) == 3
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    assert Path(str(out) + ".jsonl").exists()
    res = runner.invoke(
        main, ["select", "groups", str(out), "--k", "2", "--family", "config", "-o", str(groups)]
    )
    assert res.exit_code == 0, res.output
    assert read_groups(groups, "config")[1][0][0] == order[0]
    res = runner.invoke(
        main,
        [
            "train",
            "--parser",
            "arc-eager",
            "--train",
            train,
            "--templates",
            str(groups),
            "--epochs",
            "1",
            "--out",
            str(model),
        ],
    )
    assert res.exit_code == 0, res.output
    # Options that do not apply, and an output folder that does not exist: refused up front.
    res = runner.invoke(main, [*args, "--out", str(out), "--order", "2"])
    assert res.exit_code == 2 and "graph parser only" in res.output
    res = runner.invoke(main, [*args, "--out", str(tmp_path / "no" / "order.txt")])
    assert res.exit_code == 2 and "does not exist" in res.output


def test_each_order_of_a_second_order_search_is_of_its_own_kind(
    data: tuple[str, str], tmp_path: Path
):
    # A first-order pool was ranked as sibling templates, and an arc-eager order was cut
    # with a sibling one into a groups file that training refused ("bad configuration
    # address"): both are refused where they are given.
    arc, sib = "upos(h) & upos(m)\nform(m)", "upos(h) & upos(s) & upos(m)"
    for pool, base, wrong in ((arc, "form(h)", "pool is sibling"), (sib, sib, "base is first")):
        with pytest.raises(ValueError, match=wrong):
            forward_wrapper(pool, *data, parser="graph", order=2, base=base, epochs=1)
    eager, sibling = tmp_path / "eager.txt", tmp_path / "sib.txt"
    eager.write_text("# depfs select wrapper --parser arc-eager\nform(STACK_0)\n# score 1 las 5\n")
    sibling.write_text(f"{sib}\n# score 1 uas 5\n")
    res = CliRunner().invoke(
        main, ["select", "groups", str(eager), str(sibling), "--k", "1", "-o", "-"]
    )
    assert res.exit_code == 2 and "arc-eager templates; a SECOND_PATH" in res.output
    res = CliRunner().invoke(main, ["select", "groups", str(eager), "--k", "1", "-o", "-"])
    assert res.exit_code == 0 and "form(STACK_0)" in res.output  # alone, it is an order


def test_a_second_order_wrappers_header_names_its_pool_and_base(
    data: tuple[str, str], tmp_path: Path
) -> None:
    """The order file's header is the command: --pool and --base as given (order 2's base,
    the arc templates, is never scored alone, so nothing else said which it was), and
    --decoder only in first order (order 2 decodes with Eisner2; its header said
    '--decoder eisner')."""
    out, base = tmp_path / "o.txt", tmp_path / "arc.txt"
    base.write_text("upos(h) & upos(m)\nform(m)\n")
    args = ["select", "wrapper", "--parser", "graph", "--order", "2", "--base", str(base)]
    args += ["--pool", "upos(h) & upos(s) & upos(m)", "--train", data[0], "--dev", data[1]]
    res = CliRunner().invoke(main, [*args, "--out", str(out), "--workers", "1", "--limit", "1"])
    assert res.exit_code == 0, res.output
    header = out.read_text().splitlines()[0]
    assert header == (
        "# depfs select wrapper --parser graph --metric uas --epochs 1 --order 2"
        f" --pool 'upos(h) & upos(s) & upos(m)' --base {base} --limit 1"
    )
    # Every option that changes the order is in it (a header without --seed 2 reran as seed 1).
    more = ["--candidates", "1", "--rerank-every", "3", "--per-cost", "--seed", "2"]
    res = CliRunner().invoke(
        main, [*args, "--out", str(out), "--workers", "1", "--limit", "1", *more]
    )
    assert res.exit_code == 0, res.output
    assert (
        out.read_text()
        .splitlines()[0]
        .endswith(f"--base {base} --limit 1 --candidates 1 --rerank-every 3 --per-cost --seed 2")
    )
    # A pool of several lines given inline: in the header as one shell word (it was left
    # out, and the header named no pool at all).
    import shutil
    import subprocess

    pool = "upos(h) & upos(s) & upos(m)\nform(s) & form(m)\n# it's a 'pool'\\"
    args[args.index("--pool") + 1] = pool
    res = CliRunner().invoke(main, [*args, "--out", str(out), "--workers", "1", "--limit", "1"])
    assert res.exit_code == 0, res.output
    header = out.read_text().splitlines()[0].removeprefix("# ")
    assert "--pool $'" in header
    if shutil.which("bash"):  # the words a shell makes of it
        words = subprocess.run(
            ["bash", "-c", f"printf '%s\\0' {header}"], capture_output=True, text=True
        ).stdout.split("\0")
        assert words[words.index("--pool") + 1] == pool


@pytest.mark.parametrize(
    "name, pool, family",
    [
        ("arc_eager_en_ewt", "arc_eager", "config"),
        ("first_order_en_ewt", "first_order", "arc"),
        ("first_order_cle_en_ewt", "first_order", "arc"),
        ("second_order_en_ewt", "second_order", "arc"),
        ("tagger_en_ewt", "tagger", "token"),
        ("tagger_pt_bosque", "tagger", "token"),
    ],
)
def test_shipped_orders_are_grouped_permutations_of_their_pool(
    tmp_path: Path, name: str, pool: str, family: str
) -> None:
    from depfs.templates import template_set_text

    path = tmp_path / f"{name}.txt"
    path.write_text(template_set_text(name))
    order, scores = read_order(path, family)
    assert sorted(t.text for t in order) == sorted(t.text for t in TemplateSet.load(pool))
    assert len(scores) == len(order)
    groups = read_groups(path, family)[1]
    assert [t.text for g in groups for t in g] == [t.text for t in order]


@pytest.mark.parametrize(
    "name, scored", [("arc_eager_pt_bosque", 40), ("arc_eager_en_ewt_full15", 15)]
)
def test_a_limited_order_is_its_wrapper_prefix_then_the_en_ewt_order(
    tmp_path: Path, name: str, scored: int
) -> None:
    """`arc_eager_pt_bosque` (the wrapper on pt_bosque dev, stopped after 40 steps) and
    `arc_eager_en_ewt_full15` (on en_ewt dev at full training settings, stopped after 15):
    permutations of `arc_eager` whose scored templates (the wrapper's steps) come first,
    then the rest in the en_ewt order."""
    from depfs.templates import template_set_text

    path = tmp_path / f"{name}.txt"
    path.write_text(template_set_text(name))
    order, scores = read_order(path, "config")
    pool = TemplateSet.load("arc_eager")
    assert sorted(t.text for t in order) == sorted(t.text for t in pool)
    assert len(scores) == scored
    head = {t.text for t in order[:scored]}
    en = [t.text for t in TemplateSet.load("arc_eager_en_ewt")]
    assert [t.text for t in order[scored:]] == [t for t in en if t not in head]


def test_the_pt_bosque_dynfs_groups_are_its_own_head_then_the_en_ewt_groups() -> None:
    """`dynfs_pt_bosque`: a first group of 5 ranked on pt_bosque (no XPOS there, so none of
    its five reads it), then `dynfs_en_ewt`'s other templates in their order, cut like it."""
    from depfs.dynamic.he2013 import arc_set_of, load_groups

    pt, en = load_groups("dynfs_pt_bosque"), load_groups("dynfs_en_ewt")
    assert [len(g) for g in pt] == [5, 15, 40, 109]
    first = [t.text for t in pt[0]]
    assert not any("xpos" in t for t in first)
    assert [t.text for g in pt[1:] for t in g] == [
        t.text for g in en for t in g if t.text not in first
    ]
    # The same templates as the full first-order set: only their grouping differs.
    pool = sorted(t.text for t in TemplateSet.load("first_order"))
    assert sorted(t.text for g in pt for t in g) == pool
    assert len(arc_set_of(pt)[1]) == 4


def test_the_cut_dynfs_groups_are_the_en_ewt_order_to_its_100th_template() -> None:
    """`dynfs_en_ewt_100`: `dynfs_en_ewt`'s groups of 5 and 15, then its next 80 templates,
    in the order's order (the static cut its header describes)."""
    from depfs.dynamic.he2013 import load_groups

    cut, en = load_groups("dynfs_en_ewt_100"), load_groups("dynfs_en_ewt")
    assert [len(g) for g in cut] == [5, 15, 80]
    assert [[t.text for t in g] for g in cut[:2]] == [[t.text for t in g] for g in en[:2]]
    order = [t.text for g in en for t in g]
    assert [t.text for g in cut for t in g] == order[:100]


def test_order_and_groups_files_carry_wide_templates(tmp_path: Path) -> None:
    from depfs.select.groups import order_text

    wide = TemplateSet.parse(
        "#! max_atoms = 4\nupos(h) & upos(h+1) & upos(m) & upos(m-1)\nform(m)\n"
    )
    path = tmp_path / "order.txt"
    path.write_text(order_text(list(wide), [1.0, 2.0], "uas"))
    order, scores = read_order(path, "arc")
    assert [t.text for t in order] == [t.text for t in wide] and scores == [1.0, 2.0]
    path.write_text(groups_text([[order[0]], [order[1]]]))
    assert [[t.text for t in g] for g in read_groups(path)[1]] == [[t.text] for t in wide]


def test_an_order_file_is_read_in_the_family_its_header_names(tmp_path: Path) -> None:
    # An arc-eager wrapper's order, read without --family, failed on its first template
    # ("bad arc address STACK_0"): its header says which parser made it.
    path = tmp_path / "order.txt"
    body = "form(STACK_0)\n# score 1 las 50.0\nupos(QUEUE_0)\n# score 2 las 60.0\n"
    path.write_text("# depfs select wrapper --parser arc-eager --pool arc_eager\n" + body)
    order, scores = read_order(path)
    assert [t.text for t in order] == ["form(STACK_0)", "upos(QUEUE_0)"] and scores == [50, 60]
    path.write_text("# depfs select wrapper --parser tagger --pool tagger\nform(i)\n")
    assert [t.text for t in read_order(path)[0]] == ["form(i)"]
    path.write_text("# a note\n" + body)  # no header: arc, as before
    with pytest.raises(ValueError, match="STACK_0"):
        read_order(path)


TAG_POOL = "lower(i+1)\nsuffix:2(i)\nform(i)\nhasdigit(i-2)"


def test_the_tagger_wrapper_orders_token_templates_by_mean_accuracy(
    data: tuple[str, str], tmp_path
):
    with cf.ThreadPoolExecutor(1) as ex:
        r = forward_wrapper(TAG_POOL, *data, parser="tagger", epochs=2, executor=ex, limit=2)
    assert r.metric == "accuracy"
    # The word itself (or its suffix) comes first: the next word's form, or whether the word
    # two back has a digit (never, in this grammar), says little about a word's tags. (A shape
    # two words back did: on this small dev set it ties with form(i) to a word or two.)
    assert r.order[0].text in ("form(i)", "suffix:2(i)"), r.order
    assert r.scores[0] > 60.0 and r.steps[0].dev_las is None
    one = evaluate_candidate(
        Candidate("tagger", tuple(TemplateSet.parse("form(i)", "token")), epochs=2), *data
    )
    assert one.score("accuracy") == one.dev_accuracy and one.dev_upos is not None
    assert 0 < one.evaluations_per_word <= 4  # one template, at most four column decisions
    with pytest.raises(ValueError, match="metric 'las' does not apply to the tagger"):
        forward_wrapper(TAG_POOL, *data, parser="tagger", metric="las")
    # The CLI writes an order file of token templates with accuracy scores.
    out = tmp_path / "order.txt"
    res = CliRunner().invoke(
        main,
        ["select", "wrapper", "--parser", "tagger", "--pool", TAG_POOL, "--train", data[0],
         "--dev", data[1], "--limit", "1", "--epochs", "2", "--workers", "1", "--out", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    order, scores = read_order(out, "token")
    assert [t.text for t in order] == [r.order[0].text] and len(scores) == 1


def _edit_trees(src: str, dst: Path, edit) -> str:
    """`src` with each word line's columns passed through `edit(cols, line_index)`."""
    lines = Path(src).read_text().split("\n")
    for i, line in enumerate(lines):
        if line and not line.startswith("#"):
            cols = line.split("\t")
            edit(cols, i)
            lines[i] = "\t".join(cols)
    dst.write_text("\n".join(lines))
    return str(dst)


def test_the_tagger_wrapper_reads_data_whose_trees_a_tagger_never_reads(
    data: tuple[str, str], tmp_path: Path
):
    # Its dev set without HEAD and its training set with several roots in a sentence were
    # refused (one in a worker, naming no file), though `depfs train --parser tagger`
    # reads both: a tagger's candidates score the same on them.
    def blank(cols: list[str], _: int) -> None:
        cols[6] = cols[7] = "_"

    def root(cols: list[str], i: int) -> None:
        if i < 40:  # the first sentences' words all become roots
            cols[6], cols[7] = "0", "root"

    train = _edit_trees(data[0], tmp_path / "roots.conllu", root)
    dev = _edit_trees(data[1], tmp_path / "nohead.conllu", blank)
    with cf.ThreadPoolExecutor(1) as ex:
        want = forward_wrapper(TAG_POOL, *data, parser="tagger", epochs=1, executor=ex, limit=2)
        got = forward_wrapper(TAG_POOL, train, dev, parser="tagger", epochs=1, executor=ex, limit=2)
    assert [t.text for t in got.order] == [t.text for t in want.order]
    assert got.scores == want.scores


def _gone(pid: int) -> bool:
    """The process has exited (a zombie nobody reaps counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone before the open, or the read
        return True


def _still_alive_after(pids: list[int], seconds: float = 30) -> list[int]:
    """The processes of `pids` still running after up to `seconds` (each is then killed,
    so that a failing test leaves none behind)."""
    import os
    import signal
    import time

    deadline = time.monotonic() + seconds
    while not all(_gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    alive = [p for p in pids if not _gone(p)]
    for p in alive:
        os.kill(p, signal.SIGKILL)
    return alive


def test_pool_workers_end_when_their_parent_is_killed(data: tuple[str, str]):
    # A parent killed outright runs no cleanup: its workers, busy, must not live on.
    import signal
    import subprocess
    import sys

    script = (
        "import os, sys, time\n"
        "from depfs.select import Engine\n"
        f"eng = Engine({data[0]!r}, {data[1]!r}, workers=2)\n"
        "pool = eng._pool()\n"
        "busy = [pool.submit(time.sleep, 120) for _ in range(2)]\n"
        "while len(pool._processes) < 2:\n"
        "    time.sleep(0.05)\n"
        "print(*sorted(pool._processes), flush=True)\n"
        "time.sleep(120)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in child.stdout.readline().split()]  # type: ignore[union-attr]
        assert len(pids) == 2
        assert not any(_gone(p) for p in pids)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    alive = _still_alive_after(pids)
    assert not alive, f"pool workers {alive} outlived their killed parent"


def test_closing_the_engine_ends_its_busy_workers(data: tuple[str, str]):
    # After an interrupt the engine is closed with trainings under way: the process must
    # not wait for them (a Rust training does not see the signal) before it can exit.
    import time

    eng = Engine(*data, workers=2)
    pool = eng._pool()
    # Two running, up to three in the pool's call queue (2 workers + 1), the rest still
    # pending: each way close() can catch a future (CI once caught the second still pending).
    busy = [pool.submit(time.sleep, 120) for _ in range(8)]
    while len(pool._processes) < 2:  # type: ignore[attr-defined]
        time.sleep(0.05)
    pids = list(pool._processes)  # type: ignore[attr-defined]
    eng.close()
    alive = _still_alive_after(pids)
    assert not alive, f"busy pool workers {alive} outlived the engine's close()"
    # Their futures end too, so nothing waits on them: failed (the pool is broken) or, the
    # ones no worker had taken, cancelled. A cancelled future is done() but cf.wait never
    # hears of it (only set_running_or_notify_cancel() tells waiters), hence the polling.
    deadline = time.monotonic() + 30
    while not all(f.done() for f in busy) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(f.done() for f in busy), [f for f in busy if not f.done()]
    assert any(f.cancelled() for f in busy)
    broken = cf.process.BrokenProcessPool
    assert all(f.cancelled() or isinstance(f.exception(), broken) for f in busy)


def test_an_engine_closed_mid_run_leaves_its_pool_thread_without_error(
    data: tuple[str, str], monkeypatch: pytest.MonkeyPatch
):
    # An interrupted run: its generator closed with candidates still queued, then close().
    # Python 3.11's pool, finding its workers killed, sets an error on every queued future;
    # one that run() had cancelled raised InvalidStateError in the pool's thread, a
    # traceback printed after the interrupt message.
    import threading

    seen: list[type] = []
    monkeypatch.setattr(threading, "excepthook", lambda a: seen.append(a.exc_type))
    texts = [*POOL.splitlines(), "form(STACK_0)", "upos(QUEUE_1)"]
    eng = Engine(*data, workers=1)
    gen = eng.run([cand(t, epochs=40) for t in texts])
    next(gen)
    gen.close()
    manager = eng._own._executor_manager_thread  # type: ignore[union-attr]
    eng.close()
    manager.join(30)
    assert not manager.is_alive() and not seen, seen


def test_select_groups_reads_a_shipped_order_by_name(tmp_path: Path, monkeypatch) -> None:
    """`depfs select groups arc_eager_en_ewt`: the shipped set's order and scores, cut as
    from its file; an unknown name is refused in one line that names it, nothing written."""
    from depfs.templates import template_set_text

    path = tmp_path / "order.txt"
    path.write_text(template_set_text("arc_eager_en_ewt"))
    assert [t.text for t in read_order("arc_eager_en_ewt", "config")[0]] == [
        t.text for t in read_order(path, "config")[0]
    ]
    assert read_order("arc_eager_en_ewt", "config")[1] == read_order(path, "config")[1]
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    by_name, by_file = tmp_path / "a.txt", tmp_path / "b.txt"
    for src, out in (("arc_eager_en_ewt", by_name), (str(path), by_file)):
        res = runner.invoke(
            main, ["select", "groups", src, "--k", "3", "--family", "config", "--out", str(out)]
        )
        assert res.exit_code == 0, res.output
    # The same groups; the first line, the command, names each source.
    made = "# depfs select groups {} --k 3 --family config"
    name_lines, file_lines = by_name.read_text().splitlines(), by_file.read_text().splitlines()
    assert name_lines[0] == made.format("arc_eager_en_ewt")
    assert file_lines[0] == made.format(path)
    assert name_lines[1:] == file_lines[1:] and name_lines[1] == "# group 1"
    res = runner.invoke(main, ["select", "groups", "no_such_order", "--k", "3", "--out", "x.txt"])
    assert res.exit_code == 2 and "no_such_order" in res.output
    assert isinstance(res.exception, SystemExit)
    assert not (tmp_path / "x.txt").exists()


def test_more_groups_than_templates_is_said(tmp_path: Path) -> None:
    order = tmp_path / "o.txt"
    order.write_text("upos(h) & upos(m)\n# score 1 uas 50.0\nform(m)\n# score 2 uas 60.0\n")
    res = CliRunner().invoke(
        main, ["select", "groups", str(order), "--k", "5", "--out", str(tmp_path / "g.txt")]
    )
    assert res.exit_code == 0, res.output
    assert "5 groups asked of 2 templates" in res.stderr
    assert [len(g) for g in read_groups(tmp_path / "g.txt")[1]] == [1, 1]


def test_select_groups_limit_keeps_the_orders_first_templates(tmp_path: Path) -> None:
    """`--limit N`: the groups hold the order's first N templates, in order, cut by their
    own scores; with a base, the base stays in group 1 and N counts the ranked ones; a limit
    past the order keeps it all, with a note."""
    order = tmp_path / "o.txt"
    texts = ["upos(h) & upos(m)", "form(m)", "upos(m)", "form(h)", "xpos(m)"]
    scored = (f"{t}\n# score {i} uas {50 + 5 * i}\n" for i, t in enumerate(texts, 1))
    order.write_text("".join(scored))
    run = CliRunner().invoke
    out = tmp_path / "g.txt"
    res = run(main, ["select", "groups", str(order), "--k", "2", "--limit", "3", "--out", str(out)])
    assert res.exit_code == 0, res.output
    groups = read_groups(out)[1]
    assert [[t.text for t in g] for g in groups] == [texts[:1], texts[1:3]]
    based = tmp_path / "b.txt"
    based.write_text(f"xpos(h)\n{RANKED_MARK}\n" + order.read_text())
    res = run(main, ["select", "groups", str(based), "--k", "2", "--limit", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert [[t.text for t in g] for g in read_groups(out)[1]] == [["xpos(h)", texts[0]], texts[1:2]]
    res = run(main, ["select", "groups", str(order), "--k", "2", "--limit", "9", "--out", str(out)])
    assert res.exit_code == 0 and "--limit 9 keeps all 5 templates" in res.stderr
    assert sum(len(g) for g in read_groups(out)[1]) == 5


def test_select_groups_cuts_and_the_best_prefix(tmp_path: Path) -> None:
    """`--cuts A,B`: groups end after A and B ranked templates, the rest last, no score
    needed; `--limit best` keeps the order to its first best dev score. The shipped DynFS
    groups are these cuts of their order, so the command remakes them."""
    from depfs.dynamic.he2013 import load_groups

    order = tmp_path / "o.txt"
    texts = ["upos(h) & upos(m)", "form(m)", "upos(m)", "form(h)", "xpos(m)", "lemma(m)"]
    uas = [50, 60, 70, 70, 65, 69]  # best first reached at 3 (a tie at 4 is not taken)
    order.write_text(
        "".join(f"{t}\n# score {i} uas {v}\n" for i, (t, v) in enumerate(zip(texts, uas), 1))
    )
    run = CliRunner().invoke
    out = tmp_path / "g.txt"

    def groups(*args: str) -> list[list[str]]:
        res = run(main, ["select", "groups", str(order), *args, "--out", str(out)])
        assert res.exit_code == 0, res.output
        return [[t.text for t in g] for g in read_groups(out)[1]]

    assert groups("--cuts", "1,4") == [texts[:1], texts[1:4], texts[4:]]
    assert groups("--cuts", "2", "--limit", "best") == [texts[:2], texts[2:3]]
    assert groups("--k", "1", "--limit", "best") == [texts[:3]]
    res = run(main, ["select", "groups", str(order), "--k", "1", "--limit", "best", "-o", "-"])
    assert res.exit_code == 0 and "its best dev score is at 3 templates" in res.stderr
    # The file says what made it, the best prefix resolved.
    assert res.stdout.startswith(
        f"# depfs select groups {order} --k 1 --limit best\n"
        "# --limit best: 3 templates, dev 70.00\n"
    )
    # The best at the last template: the one note, not one of a --limit never given.
    rising = tmp_path / "r.txt"
    rising.write_text("".join(f"{t}\n# score {i} uas {i}\n" for i, t in enumerate(texts[:3], 1)))
    res = run(main, ["select", "groups", str(rising), "--cuts", "1", "--limit", "best", "-o", "-"])
    assert res.exit_code == 0 and res.stderr.splitlines() == [
        f"depfs: note: {rising}: its best dev score is at 3 templates",
        "wrote stdout: groups of 1, 2",
    ]
    # A partial order (the wrapper stopped early): the best of the templates it scored.
    partial = tmp_path / "p.txt"
    scored = zip(texts[:3], uas[:3], strict=True)
    partial.write_text(
        "".join(f"{t}\n# score {i} uas {v}\n" for i, (t, v) in enumerate(scored, 1))
        + "form(h)\nxpos(m)\n"
    )
    res = run(main, ["select", "groups", str(partial), "--k", "1", "--limit", "best", "-o", "-"])
    assert res.exit_code == 0, res.output
    assert "its best dev score (of the 3 scored) is at 3 templates" in res.stderr
    unscored = tmp_path / "u.txt"
    unscored.write_text("\n".join(texts) + "\n")
    res = run(main, ["select", "groups", str(unscored), "--cuts", "2,3", "-o", str(out)])
    assert res.exit_code == 0 and [len(g) for g in read_groups(out)[1]] == [2, 1, 3]
    res = run(
        main, ["select", "groups", str(unscored), "--cuts", "2", "--limit", "best", "-o", "-"]
    )
    assert res.exit_code == 2 and "--limit best needs the order's dev scores" in res.stderr
    for name, cuts, limit in (
        ("dynfs_en_ewt", "5,20,60", []),
        ("dynfs_en_ewt_100", "5,20", ["--limit", "100"]),
        ("dynfs_en_ewt_113", "5,20", ["--limit", "best"]),
    ):
        res = run(
            main, ["select", "groups", "first_order_en_ewt", "--cuts", cuts, *limit, "-o", str(out)]
        )
        assert res.exit_code == 0, res.output
        shipped = [[t.text for t in g] for g in load_groups(name)]
        assert [[t.text for t in g] for g in read_groups(out)[1]] == shipped, name
    # A sibling order beside --cuts is cut by --k2 into groups of equal gain, as with --k.
    both = ["first_order_en_ewt", "second_order_en_ewt", "--k2", "3", "-o"]
    res = run(main, ["select", "groups", *both, str(out), "--cuts", "5,20"])
    assert res.exit_code == 0, res.output
    by_k = tmp_path / "k.txt"
    assert run(main, ["select", "groups", *both, str(by_k), "--k", "3"]).exit_code == 0
    assert [len(g) for g in read_groups(out)[1]] == [5, 15, 149]
    assert [[t.text for t in g] for g in read_groups(out)[2]] == [
        [t.text for t in g] for g in read_groups(by_k)[2]
    ]


@pytest.mark.parametrize(
    "name", ["x\rorder 2\r", "y\u2028group 9\u2029", "-dash.txt", "it's \\ a\x0bname", "p q.txt"]
)
def test_select_groups_header_keeps_an_odd_order_path_on_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A groups file's first line is the command that made it, one line that reruns as
    written. A path with a character `splitlines` breaks at was split there, and its pieces
    read back as `# order 2` or `# group 9`; one that starts with `-` reran as an option."""
    import os
    import subprocess

    monkeypatch.chdir(tmp_path)
    Path(name).write_text("upos(h) & upos(m)\n# score 1 uas 50\nform(m)\n# score 2 uas 60\n")
    res = CliRunner().invoke(main, ["select", "groups", "--k", "2", "-o", "g.txt", "--", name])
    assert res.exit_code == 0, res.output
    text = Path("g.txt").read_text()
    assert len(text.splitlines()) == 5, text  # the command, two groups of one template
    groups = [[t.text for t in g] for g in read_groups("g.txt")[1]]
    assert groups == [["upos(h) & upos(m)"], ["form(m)"]]
    # bash reads the command back word for word: the same file, and rerun, the same groups.
    command = text.splitlines()[0].removeprefix("# ")
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    bash = ["bash", "-c", f"printf '%s\\0' {command}"]
    words = subprocess.run(bash, capture_output=True, env=env, check=True).stdout.decode()
    words_list = words.split("\0")[:-1]
    assert words_list[:3] == ["depfs", "select", "groups"] and len(words_list) == 6, words_list
    assert Path(words_list[3]).samefile(name)
    rerun = CliRunner().invoke(main, [*words_list[1:], "-o", "again.txt"])
    assert rerun.exit_code == 0, rerun.output
    assert Path("again.txt").read_text() == text


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "give --k (groups of equal gain) or --cuts (where to cut): one of them is needed"),
        (["--k", "2", "--cuts", "3"], "or --cuts (where to cut): not both"),
        (["--cuts", "3,2"], "'3,2': counts must be increasing, from 1"),
        (["--cuts", "0,2"], "counts must be increasing, from 1"),
        (["--cuts", "2,2"], "counts must be increasing, from 1"),
        (["--cuts", "2,x"], "'2,x' is not a comma-separated list of counts"),
        (["--cuts", "3,9223372036854775808"], "a count does not fit in 63 bits"),
        (["--cuts", "2,169"], "--cuts 2,169: the order keeps 169 templates; cut before its end"),
        (["--cuts", "5", "--limit", "5"], "--cuts 5: the order keeps 5 templates"),
        (["--k", "2", "--limit", "most"], "'most' is neither a count nor 'best'"),
        (["--k", "2", "--limit", "0"], "0 is not in the range x>=1"),
        (["--cuts", "5", "first_order_en_ewt"], "give --k2 for SECOND_PATH's groups"),
    ],
)
def test_select_groups_refuses_cuts_that_do_not_apply(args: list[str], message: str) -> None:
    """Each wrong --cuts / --limit / --k combination: exit 2, one line naming it."""
    second = [a for a in args if a == "first_order_en_ewt"]
    opts = [a for a in args if a != "first_order_en_ewt"]
    res = CliRunner().invoke(
        main, ["select", "groups", "first_order_en_ewt", *second, *opts, "-o", "-"]
    )
    assert res.exit_code == 2, res.output
    assert message in res.stderr and isinstance(res.exception, SystemExit)


@pytest.mark.parametrize(
    "text, message",
    [
        # A template twice: said, not dropped first and then misreported as a missing score.
        (
            "form(m)\n# score 1 uas 50\nupos(m)\n# score 2 uas 60\nform(m)\n# score 3 uas 61\n",
            "o.txt:5: the template of line 1 again",
        ),
        ("form(m)\n# score 1 uas nan\n", "o.txt:2: score 'nan' is not a finite number"),
        # Two scores in a row: the second is not taken as the next template's.
        ("form(m)\n# score 1 uas 50\n# score 2 uas 55\nupos(m)\n", "o.txt:3: '# score 2'"),
        (
            "form(m)\n# score 1 uas 50\nupos(m)\nlemma(m)\n# score 3 uas 55\n",
            "o.txt:5: a score after line 3's template",
        ),
        ("form(m)\n# score 1 uas\n", "o.txt:2: expected '# score K METRIC VALUE'"),
        # A score numbered for another place (planted: the number unchecked; it failed).
        ("form(m)\n# score 2 uas 50\nupos(m)\n# score 3 uas 60\n", "o.txt:2: '# score 2'"),
    ],
)
def test_an_order_file_is_checked_line_by_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "o.txt"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        read_order(path)
    assert message in str(err.value)
    res = CliRunner().invoke(
        main, ["select", "groups", str(path), "--k", "2", "--out", str(tmp_path / "g.txt")]
    )
    assert res.exit_code == 2 and message in res.stderr and isinstance(res.exception, SystemExit)
    assert not (tmp_path / "g.txt").exists()


def test_select_groups_takes_a_shipped_orders_family_and_refuses_what_it_cannot_cut(
    tmp_path: Path,
) -> None:
    runner = CliRunner()
    out = tmp_path / "g.txt"
    # The example of its own --help: a config order, with no --family.
    res = runner.invoke(
        main, ["select", "groups", "arc_eager_en_ewt", "--k", "3", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert read_groups(out, "config")[1][0][0] == read_order("arc_eager_en_ewt")[0][0]
    out.unlink()
    for args, message in [
        (["arc_eager_en_ewt", "--family", "arc"], "is config, not arc"),
        (["arc_eager_pt_bosque"], "it scores 40 of its 104"),  # a partial order
        (["first_order_en_ewt", "--k2", "3"], "--k2 cuts a second order file"),
        # The other kind in a place: a groups file whose training then failed.
        (["second_order_en_ewt"], "an order of sibling templates: give it as SECOND_PATH"),
        (["first_order_en_ewt", "first_order_en_ewt"], "this one has first-order templates"),
    ]:
        res = runner.invoke(main, ["select", "groups", *args, "--k", "2", "--out", str(out)])
        assert res.exit_code == 2 and message in res.output, res.output
    empty = tmp_path / "empty.txt"
    empty.write_text("# no template\n")
    res = runner.invoke(main, ["select", "groups", str(empty), "--k", "2", "--out", str(out)])
    assert res.exit_code == 2 and "the order has no template" in res.output
    assert not out.exists()


def test_a_log_skips_blank_lines_and_is_held_by_one_run(data: tuple[str, str], tmp_path: Path):
    log = tmp_path / "w.jsonl"
    with cf.ThreadPoolExecutor(1) as ex:
        r = forward_wrapper(POOL, *data, epochs=1, executor=ex, log=log, limit=1)
    log.write_text("\n" + log.read_text() + "\n  \n")
    assert len(Log(log).results) == r.evaluated
    # A second engine on the same log while the first holds it: refused, nothing trained.
    first = Engine(*data, executor=cf.ThreadPoolExecutor(1), log=Log(log))
    with pytest.raises(ValueError, match="another run is using this log"):
        Engine(*data, executor=cf.ThreadPoolExecutor(1), log=Log(log))
    first.close()
    with Engine(*data, executor=cf.ThreadPoolExecutor(1), log=Log(log)) as again:
        assert [r.key for _, r in again.run([cand(POOL, epochs=1)])]


def test_log_lines_that_name_no_data_are_reused_with_a_note(data: tuple[str, str], tmp_path):
    from depfs.select.engine import UncheckedLogWarning

    log = tmp_path / "w.jsonl"
    with cf.ThreadPoolExecutor(1) as ex:
        r = forward_wrapper(POOL, *data, epochs=1, executor=ex, log=log, limit=1)
    old = [json.loads(x) for x in log.read_text().splitlines()]
    for d in old:
        del d["data"]  # as a depfs before logs named their data wrote it
    log.write_text("".join(json.dumps(d) + "\n" for d in old))
    with pytest.warns(UncheckedLogWarning, match=f"{len(old)} of its {len(old)} lines"):
        with cf.ThreadPoolExecutor(1) as ex:
            again = forward_wrapper(POOL, *data, epochs=1, executor=ex, log=log, limit=1)
    assert again.reused == r.evaluated and again.evaluated == 0


def test_wrapper_refuses_a_dev_set_it_cannot_score_before_training(
    data: tuple[str, str], tmp_path: Path
) -> None:
    tb = depfs.read_conllu(data[1])
    text = tb.to_string()
    nohead, notags = tmp_path / "nohead.conllu", tmp_path / "notags.conllu"
    rows = [line.split("\t") for line in text.splitlines()]
    nohead.write_text(
        "\n".join("\t".join(r[:6] + ["_"] + r[7:]) if len(r) == 10 else r[0] for r in rows) + "\n"
    )
    notags.write_text(
        "\n".join("\t".join(r[:2] + ["_"] * 4 + r[6:]) if len(r) == 10 else r[0] for r in rows)
        + "\n"
    )
    log = tmp_path / "w.jsonl"
    for dev, message in [(nohead, "cannot score a parse"), (notags, "leaves ")]:
        with cf.ThreadPoolExecutor(1) as ex, pytest.raises(ValueError, match=message) as err:
            forward_wrapper(POOL, data[0], dev, epochs=1, executor=ex, log=log)
        assert str(dev) in str(err.value)
    assert not log.exists()  # refused before the log was opened
    # --max-length that leaves nothing: said as such, not as "no complete tree".
    with cf.ThreadPoolExecutor(1) as ex, pytest.raises(ValueError, match="leaves no sentence"):
        forward_wrapper(POOL, *data, epochs=1, executor=ex, max_length=0 + 1, limit=1)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rerank-every", "3"], "--rerank-every applies to the cheaper variant"),
        (
            ["--parser", "graph", "--order", "2", "--decoder", "cle", "--base", "upos(h)"],
            "--decoder cle is first-order only",
        ),
    ],
)
def test_wrapper_options_that_do_not_apply_are_refused(
    data: tuple[str, str], tmp_path: Path, args: list[str], message: str
):
    out = tmp_path / "o.txt"
    res = CliRunner().invoke(
        main,
        ["select", "wrapper", "--pool", POOL, "--train", data[0], "--dev", data[1], "--out"]
        + [str(out), *args],
    )
    assert res.exit_code == 2 and message in res.output, res.output
    assert not Path(str(out) + ".jsonl").exists()


class ScoringExecutor(cf.Executor):
    """Runs no training: a candidate's dev score is the sum of its templates' values
    (base and pool), so that the wrapper's choices can be checked by hand."""

    def __init__(self, values: dict[str, float]) -> None:
        self.values = values
        self.submitted: list[Candidate] = []

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        c = args[0]
        self.submitted.append(c)
        s = sum(self.values[t.text] for t in c.base + c.templates)
        fut: cf.Future[object] = cf.Future()
        fut.set_result(depfs.select.engine.Result(c.key(), s, s, 1.0, 0.0, c.seed, 0.0, 0.0))
        return fut


A, B, C, D, E = (
    "upos(QUEUE_0)",  # cost 1.25
    "form(QUEUE_0)",  # 1.25
    "upos(STACK_0)",  # 1.25
    "upos(STACK_0) & upos(QUEUE_0)",  # 1.5
    "upos(QUEUE_1)",  # 1.25
)
F = "form(STACK_0) & upos(QUEUE_0)"  # 1.5


def test_the_wrapper_breaks_ties_by_cost_and_shortlists_the_best_last_seen(
    data: tuple[str, str],
) -> None:
    """On made-up scores: equal scores go to the cheaper template (planted: the costlier;
    it failed); the cheaper variant re-evaluates the M templates that scored best when
    last evaluated (planted, each failed: the worst M; scores not updated after a step)."""
    pool = "\n".join([A, B, C, D])
    ex = ScoringExecutor({A: 5, B: 10, C: 1, D: 10})
    r = forward_wrapper(pool, *data, executor=ex, limit=1)
    assert [t.text for t in r.order] == [B] and r.scores == [10]  # D ties at 10, costs more
    ex = ScoringExecutor({A: 8, B: 10, C: 1, D: 6, E: 2})
    pool = "\n".join([A, B, C, D, E])
    r = forward_wrapper(pool, *data, executor=ex, candidates=2, full_steps=1)
    considered = [
        {c.templates[-1].text for c in ex.submitted if len(c.templates) == k} for k in (2, 3)
    ]
    # After step 1 (B): A 8 and D 6 scored best; after step 2 (A): D (16), then E (2).
    assert considered == [{A, D}, {D, E}]
    assert [t.text for t in r.order] == [B, A, D, E, C]
    assert r.scores == [10, 18, 24, 26, 27]


def test_the_wrapper_per_cost_ranks_the_gain_over_the_last_step(data: tuple[str, str]) -> None:
    """per_cost: the gain over the previous step's score (the base's first) per unit of
    cost (planted, each failed: the score per cost; the gain over the base at every step)."""
    ex = ScoringExecutor({E: 50, A: 9, D: 12, F: 11.4})
    r = forward_wrapper("\n".join([A, D, F]), *data, base=E, executor=ex, per_cost=True)
    # Step 1: D 12/1.5 = 8 > F 7.6 > A 7.2; step 2, over 62: F 7.6 > A 7.2.
    assert r.base_score == 50 and [t.text for t in r.order] == [D, F, A]
    assert r.scores == [62, 73.4, 82.4]


def test_a_candidate_s_key_names_its_seed_and_base_and_the_engine_runs_it_once(
    data: tuple[str, str],
) -> None:
    """A log is keyed by what was trained: another seed or base is another candidate
    (planted: the key without the seed, without the base; each failed); a candidate
    given twice is trained once (planted: no dedup; it failed)."""
    base = tuple(TemplateSet.parse(A, "config"))
    keys = {
        cand(B).key(),
        cand(B, seed=2).key(),
        cand(B, base=base).key(),
        cand(B, max_length=5).key(),
    }
    assert len(keys) == 4
    ex = ScoringExecutor({A: 1, B: 2})
    engine = Engine(*data, executor=ex)
    got = list(engine.run([cand(B), cand(B), cand(B, base=base)]))
    engine.close()
    assert sorted(r.dev_las for _, r in got) == [2, 3] and len(ex.submitted) == 2  # any order


def test_arc_eager_evaluations_per_word_count_the_base(data: tuple[str, str]) -> None:
    """The base is part of the arc-eager set: A as base plus B is the set A, B, also in
    its template evaluations per word (planted: the pool templates only; it failed)."""
    base = tuple(TemplateSet.parse(A, "config"))
    with_base = evaluate_candidate(cand(B, base=base), *data)
    whole = evaluate_candidate(cand(f"{A}\n{B}"), *data)
    assert with_base.evaluations_per_word == whole.evaluations_per_word
    assert with_base.dev_las == whole.dev_las


def test_max_length_keeps_sentences_of_exactly_that_length(data: tuple[str, str]) -> None:
    """max_length L trains on sentences of at most L words (planted: fewer than L; it failed)."""
    from depfs.select.engine import _treebank

    tb = depfs.read_conllu(data[0])
    shortest = min(len(s) for s in tb)
    kept = _treebank(data[0], shortest)
    assert len(kept) == sum(1 for s in tb if len(s) == shortest) > 0


def test_cli_wrapper_passes_its_options_to_the_wrapper(
    data: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`select wrapper`'s options reach forward_wrapper (planted, each failed: --seed,
    --per-cost, --max-length, --candidates, --rerank-every not passed)."""
    from depfs.select import wrapper

    seen: dict[str, object] = {}
    pool = TemplateSet.parse(POOL, "config")

    def spy(*_args, **kw):  # type: ignore[no-untyped-def]
        seen.update(kw)
        step = wrapper.Step(pool[0], 50.0, 60.0, 50.0, 1.0, 4)
        return wrapper.WrapperResult([step], "las", TemplateSet([], "config"), None, None)

    monkeypatch.setattr(wrapper, "forward_wrapper", spy)
    out = tmp_path / "order.txt"
    options = ["--seed", "3", "--per-cost", "--max-length", "7", "--candidates", "2"]
    options += ["--rerank-every", "3", "--epochs", "2", "--limit", "1", "--workers", "1"]
    res = CliRunner().invoke(
        main,
        [
            "select",
            "wrapper",
            "--pool",
            POOL,
            "--train",
            data[0],
            "--dev",
            data[1],
            "--out",
            str(out),
        ]
        + options,
    )
    assert res.exit_code == 0, res.output
    got = {k: seen[k] for k in ("seed", "per_cost", "max_length", "candidates", "rerank_every")}
    assert got == {"seed": 3, "per_cost": True, "max_length": 7, "candidates": 2, "rerank_every": 3}
    assert (seen["epochs"], seen["limit"], seen["workers"]) == (2, 1, 1)
    assert read_order(out, "config")[1] == [50.0]


def test_select_groups_cuts_the_second_order_into_k2_groups(tmp_path: Path) -> None:
    """--k2 cuts the second order file (planted: --k used for both; it failed)."""
    first = TemplateSet.parse("upos(h)\nform(h)\nupos(m)\nform(m)", "arc")
    second = TemplateSet.parse("upos(s)\nform(s)\nupos(s) & upos(m)\nform(s) & upos(h)", "arc")
    for name, ts in (("first.txt", first), ("second.txt", second)):
        (tmp_path / name).write_text(order_text(list(ts), [1.0, 2.0, 3.0, 4.0], "uas"))
    out = tmp_path / "groups.txt"
    res = CliRunner().invoke(
        main,
        ["select", "groups", str(tmp_path / "first.txt"), str(tmp_path / "second.txt")]
        + ["--k", "2", "--k2", "3", "--out", str(out)],
    )
    assert res.exit_code == 0, res.output
    groups = read_groups(out)
    assert ([len(g) for g in groups[1]], [len(g) for g in groups[2]]) == ([1, 3], [1, 2, 1])


def test_ctrl_c_before_any_candidate_says_no_log_was_made(
    data: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # It said "every finished candidate is in O.jsonl", a file that did not exist.
    import depfs.select.wrapper

    def interrupted(*args: object, **kw: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(depfs.select.wrapper, "forward_wrapper", interrupted)
    pool, out = tmp_path / "pool.txt", tmp_path / "order.txt"
    pool.write_text(POOL + "\n")
    args = ["select", "wrapper", "--pool", str(pool), "--train", data[0], "--dev", data[1]]
    res = CliRunner().invoke(main, [*args, "--out", str(out), "--workers", "1"])
    assert res.exit_code == 130, res.output
    assert f"no candidate had finished ({out}.jsonl was not made)" in res.output, res.output
    assert not out.exists()


def test_data_changed_during_a_search_is_refused_not_logged(tmp_path: Path):
    """Each worker reads the data files itself: one started after a file changed (a pool
    restarted after a worker died) scored candidates on other data, logged them under
    the old data's name, and a resume on the old data reused them. A worker now checks
    the files against the log's data first."""
    train, dev, log = tmp_path / "train.conllu", tmp_path / "dev.conllu", tmp_path / "l.jsonl"
    synthetic(60, seed=1).write(str(train))
    synthetic(20, seed=2).write(str(dev))
    with cf.ThreadPoolExecutor(1) as ex:  # (a worker in this process: one read, checked)
        eng = Engine(str(train), str(dev), executor=ex, log=Log(str(log)))
        synthetic(60, seed=3).write(str(train))  # replaced while the search runs
        with pytest.raises(ValueError, match=f"{train} changed during the search"):
            list(eng.run([cand(POOL, epochs=1)]))
        eng.close()
    assert not log.exists() or log.read_text() == ""
