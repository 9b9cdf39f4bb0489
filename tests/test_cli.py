"""The `depfs` command line: eval, stats, --version, --help, one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import depfs
import pytest
from click.testing import CliRunner
from depfs.cli import main
from depfs.datasets import perturb, synthetic
from small_models import AE_SET

SENT = "# sent_id = s1\n1\tDogs\tdog\tNOUN\t_\t_\t2\tnsubj\t_\t_\n2\tbark\tbark\tVERB\t_\t_\t0\troot\t_\t_\n3\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_\n\n"  # noqa: E501


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("cli")
    gold = synthetic(100, seed=0)
    gold.write(d / "gold.conllu")
    perturb(gold, 0.2, 0.2, seed=3).write(d / "sys.conllu")
    return d / "gold.conllu", d / "sys.conllu"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "depfs.cli", *args], capture_output=True, text=True, check=False
    )


def test_eval_json_has_the_keys_and_two_decimals(files: tuple[Path, Path]):
    gold, system = files
    res = CliRunner().invoke(main, ["eval", str(gold), str(system), "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    assert {"uas", "las", "uas_nopunct", "las_nopunct", "label_acc", "words"} <= set(d)
    expected = depfs.evaluate(gold, system)
    assert d["uas"] == round(expected.uas, 2) and d["las"] == round(expected.las, 2)
    assert d["words"] == expected.words
    for k in ("uas", "las", "uas_nopunct", "las_nopunct", "label_acc", "label_acc_nopunct"):
        assert round(d[k], 2) == d[k]


def test_eval_table_and_full_labels(files: tuple[Path, Path], tmp_path: Path):
    gold, system = files
    res = CliRunner().invoke(main, ["eval", str(gold), str(system)])
    assert res.exit_code == 0
    lines = res.output.splitlines()
    assert lines[0].split() == ["metric", "all", "no", "punct"]
    s = depfs.evaluate(gold, system)
    assert lines[1].split() == ["UAS", f"{s.uas:.2f}", f"{s.uas_nopunct:.2f}"]
    # Full labels: a subtype difference lowers LAS only with --full-labels.
    g, sy = tmp_path / "g.conllu", tmp_path / "s.conllu"
    g.write_text(SENT.replace("nsubj", "nsubj:pass"))
    sy.write_text(SENT)
    plain = json.loads(CliRunner().invoke(main, ["eval", str(g), str(sy), "--json"]).output)
    full = json.loads(
        CliRunner().invoke(main, ["eval", str(g), str(sy), "--json", "--full-labels"]).output
    )
    assert (plain["las"], full["las"]) == (100.0, 66.67)


EVAL_KEYS = {
    *("uas", "las", "uas_nopunct", "las_nopunct", "label_acc", "label_acc_nopunct"),
    *("upos", "xpos", "ufeats", "alltags", "lemmas", "words", "words_nopunct"),
}


def columns(text: str, **values: str) -> str:
    """`text` (CoNLL-U) with the named columns (upos, xpos, feats, lemma, head, deprel)
    set to the value on every word line."""
    at = {"lemma": 2, "upos": 3, "xpos": 4, "feats": 5, "head": 6, "deprel": 7}
    out = []
    for line in text.split("\n"):
        cols = line.split("\t")
        if len(cols) == 10:
            for name, v in values.items():
                cols[at[name]] = v
        out.append("\t".join(cols))
    return "\n".join(out)


def eval_json(gold: str, system: str, tmp_path: Path) -> tuple[dict[str, Any], str]:
    g, sy = tmp_path / "g.conllu", tmp_path / "s.conllu"
    g.write_text(gold)
    sy.write_text(system)
    res = CliRunner().invoke(main, ["eval", str(g), str(sy), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), res.stderr


def test_eval_scores_a_tag_column_either_file_has_on_some_word(tmp_path: Path):
    """The tag scores and their JSON keys do not depend on how many words have a value:
    FEATS on one word of three is scored (planted: the old rule, FEATS on most words,
    drops UFeats and AllTags); a column either file lacks altogether is null."""
    gold = SENT.replace("NOUN\t_\t_", "NOUN\tNNS\tNumber=Plur").replace("VERB\t_", "VERB\tVBP")
    gold = gold.replace("PUNCT\t_", "PUNCT\t.")
    system = gold.replace("Number=Plur", "Number=Sing")
    d, _ = eval_json(gold, system, tmp_path)
    assert set(d) == EVAL_KEYS
    assert (d["upos"], d["xpos"], d["ufeats"], d["alltags"], d["lemmas"]) == (
        100.0,
        100.0,
        66.67,
        66.67,
        100.0,
    )
    # The system predicted no tags at all: each tag score is null, the keys are there.
    d, _ = eval_json(gold, columns(gold, upos="_", xpos="_", feats="_", lemma="_"), tmp_path)
    assert set(d) == EVAL_KEYS and d["uas"] == 100.0
    assert [d[k] for k in ("upos", "xpos", "ufeats", "alltags", "lemmas")] == [None] * 5
    # Gold without XPOS: XPOS and AllTags are not scored, the others are.
    d, _ = eval_json(columns(gold, xpos="_"), system, tmp_path)
    assert (d["xpos"], d["alltags"], d["upos"], d["ufeats"]) == (None, None, 100.0, 66.67)
    table = CliRunner().invoke(
        main, ["eval", str(tmp_path / "g.conllu"), str(tmp_path / "s.conllu")]
    )
    rows = {line.split()[0]: line.split()[1:] for line in table.stdout.splitlines()}
    assert (rows["XPOS"], rows["AllTags"], rows["UFeats"]) == (["n/a"], ["n/a"], ["66.67"])


def test_eval_refuses_gold_without_deprel_and_a_system_that_is_not_a_parse(tmp_path: Path):
    """Each refusal names the file (planted: scoring them, LAS 0 and UAS 0); gold without
    UPOS gives n/a no-punct scores and says why (planted: no-punct = all, unsaid)."""
    g, sy = tmp_path / "gold.conllu", tmp_path / "sys.conllu"
    for gold, system, says in (
        (columns(SENT, deprel="_"), SENT, [f"{g}: gold sentence 1", "has no DEPREL"]),
        (SENT, columns(SENT, head="_"), [f"{sy}: system sentence 1", "no HEAD", "not a parse"]),
    ):
        g.write_text(gold)
        sy.write_text(system)
        res = CliRunner().invoke(main, ["eval", str(g), str(sy)])
        assert res.exit_code == 2, res.output
        assert all(w in res.stderr for w in says) and res.stderr.count("\n") == 1, res.stderr
    d, err = eval_json(columns(SENT, upos="_"), SENT, tmp_path)
    assert (d["uas"], d["upos"], d["words_nopunct"]) == (100.0, None, None)
    assert d["uas_nopunct"] is None and d["las_nopunct"] is None
    assert "g.conllu has no UPOS" in err and "n/a" in err
    table = CliRunner().invoke(
        main, ["eval", str(tmp_path / "g.conllu"), str(tmp_path / "s.conllu")]
    )
    assert table.stdout.splitlines()[1].split() == ["UAS", "100.00", "n/a"]


def test_eval_and_stats_read_stdin(files: tuple[Path, Path]):
    gold, system = files
    want = CliRunner().invoke(main, ["eval", str(gold), str(system), "--json"]).stdout
    for args in (["eval", str(gold), "-"], ["eval", "-", str(system)]):
        piped = system if args[-1] == "-" else gold
        res = CliRunner().invoke(main, [*args, "--json"], input=piped.read_bytes())
        assert res.exit_code == 0 and res.stdout == want, res.output
    res = CliRunner().invoke(main, ["eval", "-", "-"], input=b"")
    assert res.exit_code == 2 and "only one of GOLD and SYSTEM" in res.output
    res = CliRunner().invoke(main, ["stats", "-", "--json"], input=gold.read_bytes())
    assert res.exit_code == 0 and json.loads(res.stdout)["sentences"] == 100


def test_stats_counts_the_roots_of_a_file_with_several(tmp_path: Path):
    """Another parser's output may root several words: stats describes it (planted: read
    with one root a sentence, as before, it fails)."""
    two = tmp_path / "two_roots.conllu"
    two.write_text(SENT + SENT.replace("\t2\tpunct", "\t0\troot"))
    res = CliRunner().invoke(main, ["stats", str(two), "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert (d["sentences"], d["roots"], d["multiroot_sentences"]) == (2, 3, 1)
    text = CliRunner().invoke(main, ["stats", str(two)]).stdout
    assert "roots                      3 (1 sentence with several)" in text
    assert depfs.stats(two).roots == 3


def test_stats_text_and_json(files: tuple[Path, Path]):
    gold, _ = files
    res = CliRunner().invoke(main, ["stats", str(gold), "--json"])
    assert res.exit_code == 0
    d = json.loads(res.output)
    assert d["sentences"] == 100 and d["words"] == depfs.stats(gold).words
    assert {"mean_length", "max_length", "labels", "nonprojective_sentence_share"} <= set(d)
    text = CliRunner().invoke(main, ["stats", str(gold)]).output
    assert "sentences" in text and "non-projective arcs" in text and "nsubj" in text
    assert "n/a" not in text
    # A file without HEAD has no arcs to be projective or not (it said "0 (0.00%)").
    blank = gold.parent / "blank_heads.conllu"
    blank.write_text(
        "\n".join(
            "\t".join(c if i not in (6, 7) else "_" for i, c in enumerate(line.split("\t")))
            if line[:1].isdigit()
            else line
            for line in gold.read_text().splitlines()
        )
        + "\n"
    )
    text = CliRunner().invoke(main, ["stats", str(blank)]).output
    assert "non-projective arcs        n/a (no word has a HEAD)" in text


def test_version_and_help():
    runner = CliRunner()
    assert depfs.__version__ in runner.invoke(main, ["--version"]).output
    for args in (["--help"], ["eval", "--help"], ["stats", "--help"]):
        res = runner.invoke(main, args)
        assert res.exit_code == 0 and "Usage:" in res.output
    assert "--full-labels" in runner.invoke(main, ["eval", "--help"]).output
    help_words = " ".join(runner.invoke(main, ["eval", "--help"]).output.split())
    assert "same words and the same sentences" in help_words


def test_errors_are_one_line_with_exit_2(files: tuple[Path, Path], tmp_path: Path):
    gold, _ = files
    other = tmp_path / "other.conllu"
    other.write_text(SENT)
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tx\tx\tX\t_\t_\t7\troot\t_\t_\n\n")
    cases = [
        (
            ["eval", str(gold), str(other)],
            f"{other} against {gold}: gold has 100 sentences, system has 1 (the two files "
            "must have the same words and the same sentences)",
        ),
        (["eval", str(gold), str(tmp_path / "missing.conllu")], "missing.conllu"),
        (["stats", str(bad)], "bad.conllu:1"),
    ]
    for args, needle in cases:
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 2, (args, res.output)
        assert res.output.count("\n") == 1 and res.output.startswith("depfs: error: ")
        assert needle in res.output
        assert "Traceback" not in res.output


def test_subprocess_exit_codes(files: tuple[Path, Path], tmp_path: Path):
    gold, system = files
    ok = run("eval", str(gold), str(system), "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["words"] > 0 and ok.stderr == ""
    missing = run("stats", str(tmp_path / "nope.conllu"))
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.startswith("depfs: error: ") and missing.stderr.count("\n") == 1
    other = tmp_path / "other.conllu"
    other.write_text(SENT)
    misaligned = run("eval", str(gold), str(other))
    assert misaligned.returncode == 2 and "Traceback" not in misaligned.stderr
    usage = run("eval", str(gold))  # click's own usage error: also exit 2
    assert usage.returncode == 2 and "Missing argument" in usage.stderr


def blank_column(tb: depfs.Treebank, column: int) -> depfs.Treebank:
    """`tb` with CoNLL-U column `column` (0-based) set to `_` on every word."""
    lines = []
    for line in tb.to_string().splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[column] = "_"
        lines.append("\t".join(cols))
    return depfs.Treebank.from_string("\n".join(lines) + "\n")


def test_untagged_input_is_refused_not_parsed_badly(tmp_path: Path):
    # XPOS is empty in the training data (as in pt_bosque), so the model does not need it.
    train = blank_column(synthetic(40, seed=3), 4)
    assert train.filled_columns() == ["FORM", "LEMMA", "UPOS", "FEATS"]
    templates = "upos(QUEUE_0)\nform(QUEUE_0)\nxpos(STACK_0)"
    parser = depfs.ArcEagerParser(templates, epochs=1).fit(train)
    assert parser.model_.input_columns == ["FORM", "UPOS"]
    untagged = blank_column(train, 3)
    with pytest.raises(depfs.errors.MissingColumnsError, match="UPOS"):
        parser.parse(untagged)
    assert len(parser.parse(untagged, allow_missing_tags=True)) == len(train)
    # The columns survive save/load; the CLI names the input and the way out.
    model, inp = tmp_path / "m.depfs", tmp_path / "in.conllu"
    parser.save(model)
    assert depfs.load(model).model_.input_columns == ["FORM", "UPOS"]
    untagged.write(str(inp))
    res = CliRunner().invoke(main, ["parse", str(model), str(inp)])
    assert res.exit_code == 2
    assert (
        "in.conllu" in res.output and "UPOS" in res.output and "--allow-missing-tags" in res.output
    )
    res = CliRunner().invoke(main, ["parse", str(model), str(inp), "--allow-missing-tags"])
    assert res.exit_code == 0 and res.output.count("\n\n") == len(train)
    graph = depfs.GraphParser(epochs=1, arc_templates="upos(h) & upos(m)").fit(train)
    with pytest.raises(depfs.errors.MissingColumnsError):
        graph.parse(untagged)


def test_a_closed_pipe_is_not_an_error(files: tuple[Path, Path]):
    gold, _ = files
    res = subprocess.run(
        f"{sys.executable} -m depfs.cli stats {gold} --json | head -c 1",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0 and "Error" not in res.stderr and "Broken pipe" not in res.stderr
    # A reader gone before the first write (deterministic, unlike `| head`): exit 0, no
    # message, also where a command catches OSError itself (`templates show` printed
    # `[Errno 32] Broken pipe`). Planted: _fail without its broken-pipe case fails this.
    import os

    for args in (["templates", "show", "--canonical", "tagger"], ["stats", str(gold)]):
        read, write = os.pipe()
        os.close(read)
        try:
            res = subprocess.run(
                [sys.executable, "-m", "depfs.cli", *args],
                stdout=write,
                stderr=subprocess.PIPE,
                text=True,
                check=False,
            )
        finally:
            os.close(write)
        assert res.returncode == 0 and res.stderr == "", (args, res.stderr)


def test_train_writes_the_model_to_stdout_with_dash_but_not_to_a_terminal(
    files: tuple[Path, Path], tmp_path: Path
):
    # `-o -` wrote a file named `-` (every other -o reads - as stdout).
    import os
    import pty

    gold, _ = files
    args = [sys.executable, "-m", "depfs.cli", "train", "--parser", "tagger", "--train", str(gold)]
    args += ["--epochs", "1"]
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}  # where the model is saved first
    piped = subprocess.run(
        [*args, "-o", "-"], capture_output=True, cwd=tmp_path, env=env, check=False
    )
    assert piped.returncode == 0, piped.stderr
    assert "wrote the model to stdout" in piped.stderr.decode()
    assert run(*args[3:], "-o", str(tmp_path / "m.depfs")).returncode == 0
    assert piped.stdout == (tmp_path / "m.depfs").read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["m.depfs", "tmp"]  # no file `-`
    assert not os.listdir(tmp_path / "tmp")  # nor the temporary copy
    # A terminal gets no binary: refused before training.
    leader, follower = pty.openpty()
    try:
        res = subprocess.run(
            [*args, "-o", "-"], stdout=follower, stderr=subprocess.PIPE, cwd=tmp_path, check=False
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert res.returncode == 2 and "stdout is a terminal" in res.stderr.decode()
    assert "epoch" not in res.stderr.decode()


def test_info_says_what_a_model_holds_and_how_it_was_trained(
    files: tuple[Path, Path], tmp_path: Path
):
    gold, system = files
    model = tmp_path / "m.depfs"
    args = ["train", "--parser", "arc-eager", "--templates", "nilsson_nugues", "--train", str(gold)]
    res = CliRunner().invoke(
        main, [*args, "--dev", str(system), "--epochs", "3", "-o", str(model)]
    )  # -o: --out's short form, as for parse
    assert res.exit_code == 0, res.output
    d = json.loads(CliRunner().invoke(main, ["info", str(model), "--json"]).output)
    assert (d["kind"], d["format_version"], d["templates"]) == ("arc-eager", 5, {"config": 17})
    t = d["training"]
    assert t["train"]["file"] == str(gold) and t["train"]["sentences"] == len(
        depfs.read_conllu(gold)
    )
    assert [int(r["epoch"]) for r in t["history"]] == [1, 2, 3] and t["params"]["epochs"] == 3
    las = [r["dev_las"] for r in t["history"]]
    assert t["best_epoch"] == 1 + las.index(max(las))
    text = CliRunner().invoke(main, ["info", str(model)]).output
    assert "format version 5" in text and "<- kept" in text and "nilsson_nugues" in text
    # A model trained in Python and saved keeps the same record; an old file has none.
    p = depfs.ArcEagerParser("upos(QUEUE_0)", epochs=2).fit(depfs.read_conllu(gold))
    p.save(tmp_path / "p.depfs")
    assert "file" not in depfs.model_info(tmp_path / "p.depfs")["training"]["train"]
    assert len(depfs.model_info(tmp_path / "p.depfs")["training"]["history"]) == 2
    old = Path(__file__).parent / "data" / "graph2.depfs"
    assert (
        depfs.model_info(old)["training"] == {}
        and "not recorded" in CliRunner().invoke(main, ["info", str(old)]).output
    )
    # The labels of the treebank; pseudo-projective parsing's own (`r↑h`) said apart
    # (they were counted as the treebank's: 17 where it has 16).
    lifted = Path(__file__).parent / "data" / "arceager.depfs"
    d = depfs.model_info(lifted)
    assert (d["labels"], d["lifted_labels"]) == (17, 1)
    text = CliRunner().invoke(main, ["info", str(lifted)]).output
    assert "labels:        16 (and 1 lifted one of pseudo-projective parsing" in text


def test_graph_labeler_and_sibling_templates_are_settable(files: tuple[Path, Path], tmp_path: Path):
    gold, _ = files
    model = tmp_path / "g.depfs"
    args = ["train", "--train", str(gold), "--epochs", "1", "--out", str(model), "--order", "2"]
    sets = [
        "--labeler-templates",
        "form(m)\nupos(h) & upos(m)",
        "--sibling-templates",
        "upos(s) & upos(m)",
    ]
    res = CliRunner().invoke(main, [*args, *sets])
    assert res.exit_code == 0, res.output
    assert depfs.model_info(model)["templates"] == {"arc": 169, "labeler": 2, "sibling": 1}
    res = CliRunner().invoke(main, [*args[:-2]])  # the defaults
    labeler = len(
        depfs.templates.parse_templates(
            depfs.templates.resolve_templates("labeler"), "arc", max_atoms=1000
        )
    )
    assert depfs.model_info(model)["templates"]["labeler"] == labeler != 2
    help_text = " ".join(CliRunner().invoke(main, ["train", "--help"]).output.split())
    assert "[default: labeler]" in help_text and "[default: second_order]" in help_text


def test_sigterm_ends_cleanly_with_143_and_no_temporary_files(tmp_path: Path):
    """A terminated training run: one line, exit 143, no hidden temporary file left."""
    import signal

    train = tmp_path / "train.conllu"
    synthetic(400, seed=5).write(str(train))
    out = tmp_path / "m.depfs"
    cmd = [sys.executable, "-m", "depfs.cli", "train", "--train", str(train), "--out", str(out)]
    proc = subprocess.Popen([*cmd, "--epochs", "200"], stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    seen = ""
    while "epoch 1:" not in seen:  # training is under way (the handler is installed)
        line = proc.stderr.readline()
        assert line, f"the run ended early: {seen}"
        seen += line
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "interrupted" in err and "Traceback" not in err
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("kind", ["arc-eager", "graph"])
def test_streamed_parse_is_the_whole_file_parse(
    files: tuple[Path, Path], tmp_path: Path, kind: str
):
    """`depfs parse` reads, parses and writes a batch at a time: the same bytes as a
    whole-file parse, for any batch size; gzip output holds the same text."""
    import gzip

    gold, _ = files
    model = tmp_path / "m.depfs"
    if kind == "arc-eager":
        p: object = depfs.ArcEagerParser("upos(QUEUE_0)\nform(STACK_0)", epochs=1)
    else:
        p = depfs.GraphParser(arc_templates="upos(h) & upos(m)", epochs=1)
    p.fit(depfs.read_conllu(gold)).save(model)  # type: ignore[attr-defined]
    whole = tmp_path / "whole.conllu"
    depfs.load(model).parse(depfs.read_conllu(gold)).write(str(whole))
    for size in ["1", "7", "5000"]:
        out = tmp_path / f"out{size}.conllu"
        res = CliRunner().invoke(
            main, ["parse", str(model), str(gold), "-o", str(out), "--batch-size", size]
        )
        assert res.exit_code == 0, res.output
        assert out.read_bytes() == whole.read_bytes(), size
    gz = tmp_path / "out.conllu.gz"
    assert CliRunner().invoke(main, ["parse", str(model), str(gold), "-o", str(gz)]).exit_code == 0
    assert gzip.decompress(gz.read_bytes()) == whole.read_bytes()
    # A bad line far into the file: named by its line in the whole file, nothing written.
    lines = gold.read_text().splitlines()
    k = max(i for i, line in enumerate(lines) if line[:1].isdigit())
    cols = lines[k].split("\t")
    cols[6] = "999"
    lines[k] = "\t".join(cols)
    bad = tmp_path / "bad.conllu"
    bad.write_text("\n".join(lines) + "\n")
    out = tmp_path / "never.conllu"
    res = CliRunner().invoke(
        main, ["parse", str(model), str(bad), "-o", str(out), "--batch-size", "3"]
    )
    assert res.exit_code == 2 and f"bad.conllu:{k + 1}:" in res.output, res.output
    assert not out.exists() and not [q for q in tmp_path.iterdir() if q.name.endswith(".tmp")]


def _model_and_inputs(tmp_path: Path, n: int) -> tuple[Path, depfs.ArcEagerParser, list[str]]:
    """A small arc-eager model saved in `tmp_path`, and `n` input files of 30, 40, ...
    sentences."""
    model = tmp_path / "m.depfs"
    parser = depfs.ArcEagerParser("upos(QUEUE_0)\nform(STACK_0)", epochs=1)
    parser.fit(synthetic(60, seed=8)).save(model)
    inputs = []
    for k in range(n):
        p = tmp_path / f"in{k}.conllu"
        synthetic(30 + 10 * k, seed=20 + k).write(str(p))
        inputs.append(str(p))
    return model, parser, inputs


def test_several_files_locally_and_on_a_dask_cluster_give_the_same_bytes(tmp_path: Path):
    """`depfs parse MODEL A B --out-dir D`, here and with --scheduler local: the outputs
    are the whole-file parses of each input."""
    pytest.importorskip("distributed")
    model, _, inputs = _model_and_inputs(tmp_path, 3)
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    runner = CliRunner()
    res = runner.invoke(
        main, ["parse", str(model), *inputs, "--out-dir", str(here), "--threads", "1"]
    )
    assert res.exit_code == 0, res.output
    args = [
        "parse",
        str(model),
        *inputs,
        "--out-dir",
        str(there),
        "--scheduler",
        "local",
        "--workers",
        "2",
    ]
    res = runner.invoke(main, args)
    assert res.exit_code == 0, res.output
    parser = depfs.load(model)
    for inp in inputs:
        name = Path(inp).name
        whole = parser.parse(depfs.read_conllu(inp)).to_string().encode()
        assert (here / name).read_bytes() == whole == (there / name).read_bytes()
    res = runner.invoke(main, ["parse", str(model), *inputs, "-o", str(tmp_path / "x.conllu")])
    assert res.exit_code == 2 and "--out-dir" in res.output


def test_several_files_on_a_dask_scheduler_address_give_the_same_bytes(tmp_path: Path):
    """`depfs parse MODEL A B --out-dir D --scheduler ADDRESS` (a cluster not ours): the
    whole-file parses, exit 0 and nothing on stderr (the executor was shut down after its
    client had closed the event loop: 'internal error: RuntimeError: IOLoop is closed',
    exit 1, once every file was written)."""
    distributed = pytest.importorskip("distributed")
    model, parser, inputs = _model_and_inputs(tmp_path, 2)
    out = tmp_path / "out"
    out.mkdir()
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,  # its worker a thread here, its scheduler at a tcp:// address
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=":0",
    ) as cluster:
        res = run(
            "parse",
            str(model),
            *inputs,
            "--out-dir",
            str(out),
            "--scheduler",
            cluster.scheduler_address,
        )
    assert res.returncode == 0 and res.stderr == "", res.stderr
    for inp in inputs:
        whole = parser.parse(depfs.read_conllu(inp)).to_string().encode()
        assert (out / Path(inp).name).read_bytes() == whole


def test_scores_reach_every_output_of_several_files_and_of_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """`--scores` with several inputs (`--out-dir`), and through parse_files' chunks (what
    `--scheduler` runs): each output is the whole-file parse with its margins (it used to
    be dropped silently). `--out-dir` without inputs is refused, not a silent no-op.
    Planted: parse_files without `scores` fails the chunked half."""
    import concurrent.futures as cf

    import depfs.pipeline
    from depfs.pipeline import parse_files

    monkeypatch.setattr(depfs.pipeline, "CHECK_SENTENCES", 1)  # chunks of 10 sentences

    model, parser, inputs = _model_and_inputs(tmp_path, 2)
    here, chunked = tmp_path / "here", tmp_path / "chunked"
    here.mkdir()
    chunked.mkdir()
    args = ["parse", str(model), *inputs, "--out-dir", str(here), "--scores"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    with cf.ThreadPoolExecutor(2) as pool:
        pairs = [(i, str(chunked / Path(i).name)) for i in inputs]
        done = parse_files(str(model), pairs, pool, batch_size=10, chunk_sentences=10, scores=True)
    assert sorted(d.sentences for d in done) == [30, 40]
    for inp in inputs:
        whole = parser.parse(depfs.read_conllu(inp), scores=True).to_string().encode()
        assert b"Margin=" in whole
        name = Path(inp).name
        assert (here / name).read_bytes() == whole == (chunked / name).read_bytes()
    res = CliRunner().invoke(main, ["parse", str(model), "--out-dir", str(here)], input="")
    assert res.exit_code == 2 and "INPUTS" in res.output, res.output


def test_templates_show_reads_a_file_in_its_own_family(tmp_path: Path):
    """`depfs templates show FILE` prints a template file, and `--canonical` parses it in
    the family its templates belong to (a transition parser's file was parsed as arc
    templates and refused); a name that is neither a set nor a file is one clear line."""
    pool = tmp_path / "pool.txt"
    pool.write_text("form(STACK_0)\nupos(QUEUE_0)\n")
    runner = CliRunner()
    res = runner.invoke(main, ["templates", "show", str(pool)])
    assert res.exit_code == 0 and res.output == pool.read_text(), res.output
    res = runner.invoke(main, ["templates", "show", "--canonical", str(pool)])
    assert res.exit_code == 0, res.output
    assert [line.split("\t")[2] for line in res.output.splitlines()] == [
        "form(STACK_0)",
        "upos(QUEUE_0)",
    ]
    res = runner.invoke(main, ["templates", "show", "nosuch"])
    assert res.exit_code == 2 and "nosuch: no such template set or file" in res.output


def test_a_group_without_a_command_shows_its_help_whole():
    # It was squeezed onto one "depfs: error: Usage: ..." line.
    for args in ([], ["templates"], ["select"]):
        res = CliRunner().invoke(main, args, prog_name="depfs")
        assert res.exit_code in (0, 2), res.output  # (click 8.1: 0; 8.2 on: 2)
        assert "depfs: error" not in res.output, res.output
        assert res.output.startswith("Usage: depfs") and "\nCommands:\n" in res.output


def test_values_that_apply_to_no_model_are_still_checked_and_info_json_is_json(
    tmp_path: Path,
):
    train = synthetic(20, seed=1)
    for kw, needle in (
        ({"update": "bogus"}, "update must be 'adagrad' or 'perceptron'"),
        ({"train_margin": float("nan")}, "train_margin must be a positive number"),
        ({"train_margin": 3.5e38}, "train_margin must be a positive number up to 3.403e"),
    ):
        with pytest.raises(ValueError, match=needle):  # were trained and stored
            depfs.ArcEagerParser(AE_SET, epochs=1, **kw).fit(train)
    # A model whose training information holds a NaN (as such models were saved).
    model = tmp_path / "m.depfs"
    parser = depfs.ArcEagerParser(AE_SET, epochs=1).fit(train)
    parser.train_margin = float("nan")  # after fit: only the stored information
    parser.save(model)
    res = CliRunner().invoke(main, ["info", str(model), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["training"]["params"]["train_margin"] == "nan"


def test_a_model_file_given_for_templates_is_named(tmp_path: Path):
    # select groups / wrapper read order files with Python's own decoding error (no
    # file, no line: "'utf-8' codec can't decode byte 0xb7 in position 33").
    model = tmp_path / "m.depfs"
    depfs.ArcEagerParser(AE_SET, epochs=1).fit(synthetic(20, seed=1)).save(model)
    argvs = [
        ["select", "groups", str(model), "--k", "2", "-o", str(tmp_path / "g")],
        [
            "select",
            "wrapper",
            "--pool",
            str(model),
            "--train",
            str(model),
            "--dev",
            str(model),
            "-o",
            str(tmp_path / "o"),
        ],
        ["train", "--templates", str(model), "--train", str(model), "-o", str(tmp_path / "x")],
    ]
    for argv in argvs:
        res = CliRunner().invoke(main, argv)
        assert res.exit_code == 2 and res.output.count("\n") == 1, (argv, res.output)
        assert f"{model}: a depfs model file, not a template file" in res.output, res.output


def test_every_input_of_out_dir_is_checked_before_the_first_is_parsed(
    tmp_path: Path, files: tuple[Path, Path]
):
    gold, _ = files
    model = tmp_path / "m.depfs"
    depfs.ArcEagerParser(AE_SET, epochs=1).fit(synthetic(20, seed=1)).save(model)
    out = tmp_path / "out"
    out.mkdir()
    for bad in (tmp_path / "missing.conllu", tmp_path):
        res = CliRunner().invoke(
            main, ["parse", str(model), str(gold), str(bad), "--out-dir", str(out)]
        )
        assert res.exit_code == 2 and str(bad) in res.output, res.output
        assert list(out.iterdir()) == []  # the first input's output was written before


def test_out_dir_names_the_output_that_is_an_input(tmp_path: Path, files: tuple[Path, Path]):
    gold, _ = files
    model = tmp_path / "m.depfs"
    depfs.ArcEagerParser(AE_SET, epochs=1).fit(synthetic(20, seed=1)).save(model)
    res = CliRunner().invoke(main, ["parse", str(model), str(gold), "--out-dir", str(gold.parent)])
    assert res.exit_code == 2, res.output
    assert f"--out-dir: its output {gold} is the input: it would be overwritten" in res.output


def test_a_numpy_seed_saves_the_same_bytes_and_a_tagger_checks_its_margin(tmp_path: Path):
    import numpy as np

    train = synthetic(30, seed=1)
    a, b = tmp_path / "a.depfs", tmp_path / "b.depfs"
    depfs.ArcEagerParser(AE_SET, epochs=1, random_state=7).fit(train).save(a)
    depfs.ArcEagerParser(AE_SET, epochs=1, random_state=np.int64(7)).fit(train).save(b)
    assert a.read_bytes() == b.read_bytes()  # the seed was recorded as 'np.int64(7)'
    with pytest.raises(ValueError, match="train_margin must be a positive number"):
        depfs.Tagger(epochs=1, train_margin=-1.0).fit(train)


def test_a_hidden_progress_bar_says_where_the_work_is_now_and_then(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # With stderr in a log (no bar), a search's first step on real data said nothing for
    # minutes. A hidden bar now says how far it is, at most every HEARTBEAT_SECONDS and
    # not right after a line of its own.
    from depfs import cli_options

    clock = [100.0]
    monkeypatch.setattr("time.monotonic", lambda: clock[0])
    with cli_options.progress(5, "wrapper") as bar:
        assert bar.hidden
        clock[0] += 10
        bar.update(1)  # 10 s: too soon
        clock[0] += 25
        bar.update(1)  # 35 s since the start
        clock[0] += 40
        cli_options.above_bar(bar, "  step 1: form(h)")
        bar.update(1)  # a line was just said
        clock[0] += 29
        bar.update(0)  # 29 s after that line: too soon
        clock[0] += 2
        bar.update(1)  # 31 s after it
        clock[0] += 60
        bar.update(1)  # the last: no line for it (the work is done)
    assert capsys.readouterr().err.splitlines() == [
        "  wrapper: 2 of 5 (35 s)",
        "  step 1: form(h)",
        "  wrapper: 4 of 5 (1 min 46 s)",
    ]


def test_ctrl_c_while_the_command_starts_is_one_line() -> None:
    # A Ctrl-C in the tenth of a second the command's imports take printed the traceback
    # of an import. Here the import of click is what Ctrl-C cuts short.
    code = (
        "import sys\n"
        "class Stop:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'click':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Stop())\n"
        "sys.argv = ['depfs', 'stats', '-']\n"
        "from depfs._entry import main\n"
        "main()\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert res.returncode == 130
    assert res.stderr == "depfs: interrupted while starting: nothing was done\n"


def test_no_stderr_at_all_is_no_reason_to_stop(files: tuple[Path, Path], tmp_path: Path) -> None:
    # `depfs train ... 2>&-`: the progress bar asked a missing stderr whether it was a
    # terminal, and the command stopped with exit 1 (saying nothing, having nowhere to).
    import os

    gold, system = files
    out = tmp_path / "m.depfs"
    args = ["train", "--parser", "arc-eager", "--train", str(gold), "--epochs", "1", "-o", str(out)]
    (tmp_path / "p").mkdir()
    parse = ["parse", str(out), str(gold), str(system), "--out-dir", str(tmp_path / "p")]
    # and a search on a local Dask cluster (its workers' stderr is made the null device
    # for their start: with none to save and restore, the fds were mixed up)
    select = ["select", "wrapper", "--pool", "upos(STACK_0)\nform(QUEUE_0)", "--train"]
    select += [str(gold), "--dev", str(gold), "--epochs", "1", "--scheduler", "local"]
    select += ["--workers", "1", "-o", str(tmp_path / "o.txt")]
    for argv in (args, parse, select):
        res = subprocess.run(
            [sys.executable, "-m", "depfs", *argv],
            stdout=subprocess.DEVNULL,
            preexec_fn=lambda: os.close(2),  # as the shell's `2>&-`
            check=False,
        )
        assert res.returncode == 0, argv
    assert out.is_file() and (tmp_path / "p" / gold.name).is_file()
    assert (tmp_path / "o.txt").read_text().count("# score") == 2
