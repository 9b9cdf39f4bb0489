"""Tag-then-parse: `depfs parse --tagger`, a tagger inside the parser's model file
(`depfs train --tagger`, `tagger=`, `tagger_`), older model files, and jackknifed tags
(`depfs jackknife`, `depfs.jackknife`)."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import depfs
import depfs.pipeline
import pytest
from click.testing import CliRunner
from depfs import ArcEagerParser, Tagger, Treebank
from depfs.cli import main
from depfs.datasets import synthetic, synthetic_conllu
from depfs.errors import MissingColumnsError, ModelError
from depfs.jackknifing import fold_bounds
from small_models import AE_SET, small_graph
from test_tagger import SMALL, blank

DATA = Path(__file__).resolve().parent / "data"
#: Seconds a thread of a test may wait for another before the test fails.
GUARD = 60


@pytest.fixture(scope="module")
def tagger() -> Tagger:
    return Tagger(SMALL, epochs=2).fit(synthetic(200, seed=0))


@pytest.fixture(scope="module")
def parser() -> ArcEagerParser:
    return ArcEagerParser(AE_SET, epochs=2).fit(synthetic(200, seed=1))


@pytest.fixture()
def files(tmp_path: Path, tagger: Tagger, parser: ArcEagerParser) -> dict[str, Path]:
    """A tagger and a parser (without a tagger) on disk, and an untagged input of 60
    sentences whose tagging is not perfect (a test that the tags came from the tagger)."""
    f = {"tagger": tmp_path / "t.depfs", "parser": tmp_path / "p.depfs"}
    tagger.save(f["tagger"])
    parser.save(f["parser"])
    f["gold"] = tmp_path / "gold.conllu"
    f["gold"].write_text(synthetic_conllu(60, seed=9))
    f["untagged"] = tmp_path / "untagged.conllu"
    f["untagged"].write_text(blank(f["gold"].read_text()))
    return f


def by_hand(tagger: Tagger, parser: ArcEagerParser, path: Path) -> str:
    """Tag, then parse, the whole file in two steps."""
    tagged = tagger.tag(depfs.read_conllu(path))
    return parser.parse(tagged, tag=False).to_string()


def with_stale_margins(text: str) -> str:
    """`text` (CoNLL-U) with a `Margin=` item in the MISC of every other word line, before
    or after what MISC has: margins of heads some other parse wrote."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit() and i % 2:
            items = [] if cols[9] == "_" else [cols[9]]
            cols[9] = "|".join(
                [f"Margin={i / 7:.4f}", *items] if i % 4 == 1 else [*items, "Margin=abc"]
            )
            lines[i] = "\t".join(cols)
    return "\n".join(lines)


def test_a_streamed_parse_writes_the_bytes_of_the_api_parse(
    files: dict[str, Path],
    parser: ArcEagerParser,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`depfs parse` writes each batch by copying its input around HEAD and DEPREL;
    with `--scores` (margins in MISC) it writes the parse itself. Either way, for any
    batch size and CRLF input, the bytes of the API's parse. Planted: the copy used with
    `--scores` fails (the margins are lost). An input with margins (another parse's) gives
    the same parse: its margins are dropped, or replaced with --scores. Planted: the copy
    keeping the input's MISC fails."""
    monkeypatch.setattr(depfs.pipeline, "CHECK_SENTENCES", 1)
    crlf = tmp_path / "crlf.conllu"
    crlf.write_bytes(files["gold"].read_bytes().replace(b"\n", b"\r\n"))
    stale = tmp_path / "stale.conllu"
    stale.write_text(with_stale_margins(files["gold"].read_text()))
    assert stale.read_text().count("Margin=") > 50
    tb = depfs.read_conllu(files["gold"])
    for scores in (False, True):
        expected = parser.parse(tb, scores=scores).to_string()
        assert ("Margin=" in expected) == scores
        assert parser.parse(depfs.read_conllu(stale), scores=scores).to_string() == expected
        for inp in (files["gold"], crlf, stale):
            for batch in ("7", "5000"):
                out = tmp_path / "out.conllu"
                args = ["parse", str(files["parser"]), str(inp), "-o", str(out)]
                args += ["--batch-size", batch, *(["--scores"] if scores else [])]
                res = CliRunner().invoke(main, args)
                assert res.exit_code == 0, res.output
                assert out.read_text() == expected, (scores, inp.name, batch)


def test_parse_with_tagger_is_tag_then_parse_by_hand(
    files: dict[str, Path],
    tagger: Tagger,
    parser: ArcEagerParser,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Batches of 7 sentences from the first on (it is 1000 sentences otherwise).
    monkeypatch.setattr(depfs.pipeline, "CHECK_SENTENCES", 1)
    expected = by_hand(tagger, parser, files["untagged"])
    assert (
        expected
        != parser.parse(depfs.read_conllu(files["untagged"]), allow_missing_tags=True).to_string()
    )
    for batch in ("7", "5000"):  # tagged per streamed batch: the same bytes
        out = tmp_path / f"out{batch}.conllu"
        args = ["parse", str(files["parser"]), str(files["untagged"]), "-o", str(out)]
        res = CliRunner().invoke(
            main, [*args, "--tagger", str(files["tagger"]), "--batch-size", batch]
        )
        assert res.exit_code == 0, res.output
        assert out.read_text() == expected
    # Input that has tags: the tagger's overwrite them (the same parse as from blank).
    out = tmp_path / "from_gold.conllu"
    args = ["parse", str(files["parser"]), str(files["gold"]), "-o", str(out)]
    res = CliRunner().invoke(main, [*args, "--tagger", str(files["tagger"])])
    assert res.exit_code == 0 and out.read_text() == expected
    # stdin, and several files (--out-dir): the same path.
    untagged = files["untagged"].read_text()
    res = CliRunner().invoke(
        main, ["parse", str(files["parser"]), "--tagger", str(files["tagger"])], input=untagged
    )
    assert res.exit_code == 0 and res.stdout == expected
    outdir = tmp_path / "many"
    outdir.mkdir()
    res = CliRunner().invoke(
        main,
        ["parse", str(files["parser"]), str(files["untagged"]), "--out-dir", str(outdir)]
        + ["--tagger", str(files["tagger"])],
    )
    assert res.exit_code == 0, res.output
    assert (outdir / "untagged.conllu").read_text() == expected


def test_parse_with_tagger_on_a_dask_cluster(files: dict[str, Path], tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    outdir = tmp_path / "there"
    outdir.mkdir()
    args = ["parse", str(files["parser"]), str(files["untagged"]), "--out-dir", str(outdir)]
    args += ["--tagger", str(files["tagger"]), "--scheduler", "local", "--workers", "1"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    expected = by_hand(depfs.load(files["tagger"]), depfs.load(files["parser"]), files["untagged"])
    assert (outdir / "untagged.conllu").read_text() == expected


def _killed_once(marker: str, output: str, fn: Any, *args: Any, **kw: Any) -> Any:
    """Runs on a Dask worker: the first task here starts writing its output, then kills
    its own worker process (SIGKILL: no clean-up, its temporary file stays), as a machine
    lost mid-write would; every later task just runs `fn`."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return fn(*args, **kw)
    from depfs.files import atomic_stream

    with atomic_stream(output) as f:
        f.write(b"# half a file\n")
        f.flush()
        os.kill(os.getpid(), signal.SIGKILL)


class _KillOnce:
    """An executor that runs each parse_file call through :func:`_killed_once`."""

    def __init__(self, inner: Any, marker: Path) -> None:
        self.inner, self.marker = inner, str(marker)

    def submit(self, fn: Any, *args: Any, **kw: Any) -> Any:
        return self.inner.submit(_killed_once, self.marker, args[2], fn, *args, **kw)


def test_a_killed_dask_workers_share_is_redone(tmp_path: Path) -> None:
    """A worker killed while it writes an output: Dask parses that file again on a live
    worker; every output is the local parse byte for byte and no temporary file is left."""
    pytest.importorskip("distributed")
    import cloudpickle
    from depfs.pipeline import parse_file, parse_files
    from depfs.select.engine import dask_executor

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests
    model = tmp_path / "m.depfs"
    ArcEagerParser(AE_SET, epochs=1).fit(synthetic(60, seed=2)).save(model)
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    pairs = []
    for k in range(4):
        inp = tmp_path / f"in{k}.conllu"
        inp.write_text(synthetic_conllu(20 + 5 * k, seed=40 + k))
        parse_file(str(model), str(inp), str(here / inp.name))
        pairs.append((str(inp), str(there / inp.name)))
    executor, client = dask_executor("local", 2)
    marker = tmp_path / "killed"
    try:
        done = parse_files(str(model), pairs, _KillOnce(executor, marker), batch_size=7)
    finally:
        client.close()
    assert marker.exists()  # a worker did die mid-write
    assert sorted(p.input for p in done) == sorted(i for i, _ in pairs)
    for inp, out in pairs:
        assert Path(out).read_bytes() == (here / Path(inp).name).read_bytes()
    assert sorted(p.name for p in there.iterdir()) == sorted(Path(i).name for i, _ in pairs)


def _messy(sentences: int, seed: int) -> bytes:
    """CoNLL-U the reader accepts and the writer normalises: a BOM, CRLF line ends,
    several blank lines between some sentences, blank lines ending CR CR LF (the reader
    strips every CR before an LF: a chunk cut that did not lost sentences), no final
    blank line."""
    text = synthetic_conllu(sentences, seed=seed).replace("\n\n", "\n\n\n\n", 9)
    text = text.replace("\n", "\r\n").replace("\r\n\r\n# ", "\r\n\r\r\n# ", 12)
    return ("\ufeff" + text).rstrip("\r\n").encode()


def test_chunks_are_whole_sentences_with_their_comments(tmp_path: Path) -> None:
    """conllu_chunks: the file's bytes in order, each chunk starting at a sentence's
    first comment line and holding `sentences` whole sentences (the last one the rest),
    read by the reader as those sentences; first_line is the chunk's line in the file."""
    from depfs.pipeline import conllu_chunks

    inp = tmp_path / "in.conllu"
    inp.write_bytes(_messy(23, seed=3))
    data = inp.read_bytes()
    whole = depfs.read_conllu(inp)
    chunks = conllu_chunks(str(inp), 5)
    assert [c.sentences for c in chunks] == [5, 5, 5, 5, 3]
    assert b"".join(data[c.start : c.end] for c in chunks) == data
    done = 0
    for c in chunks:
        part = data[c.start : c.end]
        assert c.index == 0 or part.startswith(b"# sent_id = ")
        assert data[: c.start].count(b"\n") + 1 == c.first_line
        tb = Treebank.from_bytes(part)
        assert [s.sent_id for s in tb] == [whole[done + i].sent_id for i in range(c.sentences)]
        done += c.sentences
    assert [c.sentences for c in conllu_chunks(str(inp), 23)] == [23]


class _Backwards:
    """An executor that runs `total` tasks on a thread, `group` at a time (fewer for the
    last), each group last-submitted first: chunks come back out of order."""

    def __init__(self, total: int, group: int) -> None:
        import threading

        self.left, self.group, self.pending = total, group, []
        self.ready = threading.Condition()
        threading.Thread(target=self._run, daemon=True).start()

    def submit(self, fn: Any, *args: Any, **kw: Any) -> Any:
        import concurrent.futures as cf

        fut: cf.Future = cf.Future()
        with self.ready:
            self.pending.append((fut, fn, args, kw))
            self.ready.notify()
        return fut

    def _run(self) -> None:
        while self.left:
            with self.ready:
                # (A guard against hangs when fewer tasks come: the caller's count fails.)
                self.ready.wait_for(lambda: len(self.pending) >= min(self.group, self.left), 60)
                if not self.pending:
                    return
                group, self.pending = self.pending, []
            for fut, fn, args, kw in reversed(group):
                self.left -= 1
                try:
                    fut.set_result(fn(*args, **kw))
                except Exception as e:  # noqa: BLE001 - handed to the caller as Dask would
                    fut.set_exception(e)


def test_a_file_in_chunks_is_the_whole_file_parse(
    tmp_path: Path, tagger: Tagger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """parse_files cuts a large CoNLL-U file into chunks and writes their outputs in
    order: the same bytes as parse_file of the whole file (plain and gzip output; a
    parser with a tagger inside on untagged input: the file's first batch decides, the
    note said once); the bar gets every word; a bad line in a later chunk is named by
    its line in the file and nothing is written."""
    import concurrent.futures as cf
    import gzip

    from depfs.pipeline import parse_file, parse_files

    monkeypatch.setattr(depfs.pipeline, "CHECK_SENTENCES", 1)  # chunks of 4 sentences
    monkeypatch.setattr(depfs.pipeline, "CHUNKS_IN_FLIGHT", 3)
    plain = tmp_path / "plain.conllu"
    plain.write_bytes(_messy(30, seed=6))
    untagged = tmp_path / "untagged.conllu"
    untagged.write_text(blank(synthetic_conllu(30, seed=7)))
    model, inside = tmp_path / "m.depfs", tmp_path / "inside.depfs"
    ArcEagerParser(AE_SET, epochs=1).fit(synthetic(60, seed=2)).save(model)
    ArcEagerParser(AE_SET, epochs=1, tagger=tagger).fit(synthetic(60, seed=2)).save(inside)
    out, here = tmp_path / "out", tmp_path / "here"
    out.mkdir()
    here.mkdir()
    for m, inp, name in [
        (model, plain, "plain.conllu"),
        (model, plain, "plain.conllu.gz"),
        (inside, untagged, "untagged.conllu"),
    ]:
        whole = parse_file(str(m), str(inp), str(here / name), batch_size=3)
        words: list[int] = []
        backwards = _Backwards(8, 3)  # 30 sentences in chunks of 4, 3 in flight
        got = parse_files(
            str(m),
            [(str(inp), str(out / name))],
            backwards,
            batch_size=3,
            chunk_sentences=4,
            on_words=words.append,
        )
        assert backwards.left == 0
        assert (out / name).read_bytes() == (here / name).read_bytes(), name
        assert len(words) == 8 and sum(words) == whole.words == got[0].words
        assert got[0].notes == whole.notes and got[0].sentences == 30
    assert len(whole.notes) == 1 and "own tagger" in whole.notes[0]
    gold = gzip.decompress((out / "plain.conllu.gz").read_bytes())
    assert gold == (here / "plain.conllu").read_bytes()
    lines = plain.read_bytes().split(b"\r\n")
    k = max(i for i, line in enumerate(lines) if line[:1].isdigit()) - 30
    lines[k] = lines[k].replace(b"\t", b" ", 1)
    bad = tmp_path / "bad.conllu"
    bad.write_bytes(b"\r\n".join(lines))
    with pytest.raises(depfs.errors.FormatError) as whole_error:
        parse_file(str(model), str(bad), str(tmp_path / "bad.out"))
    with pytest.raises(depfs.errors.FormatError) as chunked_error:
        parse_files(
            str(model),
            [(str(bad), str(out / "bad.conllu"))],
            cf.ThreadPoolExecutor(2),
            batch_size=3,
            chunk_sentences=4,
        )
    assert f"bad.conllu:{k + 1}:" in str(whole_error.value)
    assert str(chunked_error.value) == str(whole_error.value)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["plain.conllu", "plain.conllu.gz", "untagged.conllu"]
    )


def test_a_file_in_chunks_checks_what_a_local_parse_checks(
    tmp_path: Path, parser: ArcEagerParser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk is checked in the batches a whole-file parse reads (the column rule is a
    vote per batch): a stretch of sentences with UPOS on their first word only, which
    one batch of the local parse refuses, is refused by the chunked parse too, with the
    same message (a chunk read as one batch outvoted it, and parsed it silently bad);
    a BOM at a chunk's start is the line error the file's reader gives (a chunk read
    as a file of its own took it for the file's BOM)."""
    import concurrent.futures as cf

    from depfs.pipeline import parse_file, parse_files

    monkeypatch.setattr(depfs.pipeline, "CHECK_SENTENCES", 1)
    model = tmp_path / "m.depfs"
    parser.save(model)
    sentences = synthetic_conllu(120, seed=8).rstrip("\n").split("\n\n")

    def upos_on_first_word_only(sentence: str) -> str:
        lines, first = [], True
        for line in sentence.split("\n"):
            cols = line.split("\t")
            if len(cols) == 10 and cols[0].isdigit():
                cols[3] = cols[3] if first else "_"
                first = False
            lines.append("\t".join(cols))
        return "\n".join(lines)

    # Batches of 20 (the first one too; ~200 words, above the rule for small input):
    # sentences 81-100 are one; chunks of 60 sentences.
    patched = [upos_on_first_word_only(x) if 80 <= i < 100 else x for i, x in enumerate(sentences)]
    patchy = tmp_path / "patchy.conllu"
    patchy.write_text("\n\n".join(patched) + "\n\n")
    bom = tmp_path / "bom.conllu"
    text = "\n\n".join(sentences[:60]) + "\n\n\ufeff" + "\n\n".join(sentences[60:]) + "\n\n"
    bom.write_bytes(text.encode())
    for inp, error in [(patchy, MissingColumnsError), (bom, depfs.errors.FormatError)]:
        with pytest.raises(error) as whole:
            parse_file(str(model), str(inp), str(tmp_path / "whole.out"), batch_size=20)
        with pytest.raises(error) as chunked:
            with cf.ThreadPoolExecutor(2) as pool:
                parse_files(
                    str(model),
                    [(str(inp), str(tmp_path / "chunked.out"))],
                    pool,
                    batch_size=20,
                    chunk_sentences=60,
                )
        assert str(chunked.value) == str(whole.value)
        assert ("sentences 81-100" if inp == patchy else "bom.conllu:") in str(whole.value)
    assert not (tmp_path / "whole.out").exists() and not (tmp_path / "chunked.out").exists()


def test_streams_that_end_out_of_order_restore_the_warnings(parser: ArcEagerParser) -> None:
    """Two streams in threads of one process (parse_files over a thread pool), the first
    begun ending first: each parse's warnings are its own stream's notes, and once both
    end, `warnings` is as it was (nested catch_warnings left out of order put the
    other stream's hook and an "always" filter back for good)."""
    import io

    class Warns:
        def __init__(self, name: str) -> None:
            self.name = name

        def __getattr__(self, attr: str) -> Any:
            return getattr(parser, attr)

        def parse(self, tb: Any, threads: int = 1, **kw: Any) -> Any:
            warnings.warn(f"{self.name} {len(tb)}", stacklevel=1)
            return parser.parse(tb, threads=threads, **kw)

    go = {"a": threading.Event(), "b": threading.Event()}
    begun = {"a": threading.Event(), "b": threading.Event()}

    def batches(name: str) -> Any:
        yield synthetic(3, seed=1)
        begun[name].set()
        go[name].wait(GUARD)
        yield synthetic(4, seed=2)

    show, filters = warnings.showwarning, warnings.filters[:]
    done: dict[str, Any] = {}

    def run(name: str) -> None:
        done[name] = depfs.pipeline.parse_stream(Warns(name), batches(name), io.BytesIO())

    a = threading.Thread(target=run, args=("a",))
    a.start()
    assert begun["a"].wait(GUARD)
    b = threading.Thread(target=run, args=("b",))
    b.start()
    assert begun["b"].wait(GUARD)
    go["a"].set()
    a.join(GUARD)
    go["b"].set()
    b.join(GUARD)
    assert sorted(done["a"].notes) == ["a 3", "a 4"] and sorted(done["b"].notes) == ["b 3", "b 4"]
    assert warnings.showwarning is show and warnings.filters == filters


def _dies_once(marker: str, fn: Any, *args: Any, **kw: Any) -> Any:
    """Runs on a Dask worker: the first task here kills its own worker process
    (SIGKILL), as a lost machine would; every later task just runs `fn`."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return fn(*args, **kw)
    os.kill(os.getpid(), signal.SIGKILL)


class _DieOnce:
    def __init__(self, inner: Any, marker: Path) -> None:
        self.inner, self.marker = inner, str(marker)

    def submit(self, fn: Any, *args: Any, **kw: Any) -> Any:
        return self.inner.submit(_dies_once, self.marker, fn, *args, **kw)


def test_a_large_file_in_chunks_on_a_dask_cluster_with_a_killed_worker(
    tmp_path: Path,
) -> None:
    """`depfs parse --scheduler local --chunk-sentences 1000`: a 2,500-sentence file in
    three chunks, the same bytes as the local parse; and through parse_files with a
    worker killed by the first chunk it runs: that chunk is parsed again elsewhere."""
    pytest.importorskip("distributed")
    import cloudpickle
    from depfs.pipeline import parse_files
    from depfs.select.engine import dask_executor

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests
    model, inp = tmp_path / "m.depfs", tmp_path / "big.conllu"
    ArcEagerParser(AE_SET, epochs=1).fit(synthetic(60, seed=2)).save(model)
    inp.write_bytes(_messy(2500, seed=8))
    here, there, again = tmp_path / "here", tmp_path / "there", tmp_path / "again"
    for folder in (here, there, again):
        folder.mkdir()
    assert (
        CliRunner()
        .invoke(main, ["parse", str(model), str(inp), "-o", str(here / "big.conllu")])
        .exit_code
        == 0
    )
    args = ["parse", str(model), str(inp), "--out-dir", str(there), "--scheduler", "local"]
    res = CliRunner().invoke(main, [*args, "--workers", "2", "--chunk-sentences", "1000"])
    assert res.exit_code == 0, res.output
    assert (there / "big.conllu").read_bytes() == (here / "big.conllu").read_bytes()
    executor, client = dask_executor("local", 2)
    marker = tmp_path / "killed"
    try:
        done = parse_files(
            str(model),
            [(str(inp), str(again / "big.conllu"))],
            _DieOnce(executor, marker),
            chunk_sentences=1000,
        )
    finally:
        client.close()
    assert marker.exists() and done[0].sentences == 2500  # a worker did die
    assert (again / "big.conllu").read_bytes() == (here / "big.conllu").read_bytes()
    assert [p.name for p in again.iterdir()] == ["big.conllu"]


def test_progress_counts_the_words_of_each_batch(tmp_path: Path) -> None:
    """The bar of `depfs parse FILES...` moves by the words of each batch written and
    ends at the input's words (count_words, its length)."""
    from depfs.pipeline import CHECK_SENTENCES, count_words, parse_file

    model, inp = tmp_path / "m.depfs", tmp_path / "in.conllu"
    ArcEagerParser(AE_SET, epochs=1).fit(synthetic(30, seed=3)).save(model)
    inp.write_text(synthetic_conllu(CHECK_SENTENCES + 150, seed=5))
    batches: list[int] = []
    parse_file(
        str(model), str(inp), str(tmp_path / "out.conllu"), batch_size=100, on_batch=batches.append
    )
    words = depfs.read_conllu(inp).n_words
    assert len(batches) == 3 and sum(batches) == words == count_words(str(inp))
    tb = depfs.read_conllu(inp)
    assert batches[0] == sum(len(tb[i]) for i in range(CHECK_SENTENCES))


def test_untagged_input_without_a_tagger_points_at_tagger(files: dict[str, Path]) -> None:
    res = CliRunner().invoke(main, ["parse", str(files["parser"]), str(files["untagged"])])
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert res.output.startswith("depfs: error: ") and "untagged.conllu" in res.output
    assert "depfs parse --tagger TAGGER" in res.output and "--allow-missing-tags" in res.output


def test_tagger_option_errors_are_one_line(files: dict[str, Path], tmp_path: Path) -> None:
    cases = [
        (
            [
                "parse",
                str(files["parser"]),
                str(files["untagged"]),
                "--tagger",
                str(files["parser"]),
            ],
            "not a tagger model",
        ),
        (
            [
                "parse",
                str(files["parser"]),
                str(files["untagged"]),
                "--tagger",
                str(tmp_path / "no"),
            ],
            "no",
        ),
    ]
    for args, needle in cases:
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 2, res.output
        assert res.output.count("\n") == 1 and res.output.startswith("depfs: error: ")
        assert needle in res.output and "Traceback" not in res.output
    # A tagger whose training data had no XPOS cannot feed a parser that reads XPOS.
    no_xpos = Treebank.from_string(blank(synthetic_conllu(100, seed=0), columns=(4,)))
    Tagger(SMALL, epochs=1).fit(no_xpos).save(tmp_path / "t_no_xpos.depfs")
    p = ArcEagerParser("xpos(QUEUE_0)\nupos(STACK_0)", epochs=1).fit(synthetic(50))
    p.save(tmp_path / "xpos.depfs")
    args = ["parse", str(tmp_path / "xpos.depfs"), str(files["untagged"])]
    res = CliRunner().invoke(main, [*args, "--tagger", str(tmp_path / "t_no_xpos.depfs")])
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert "XPOS" in res.output and "predicts only UPOS, FEATS, LEMMA" in res.output


def test_tagger_inside_round_trips_and_tags_untagged_input_first(
    files: dict[str, Path], tagger: Tagger, parser: ArcEagerParser, tmp_path: Path
) -> None:
    assert parser.tagger_ is None
    model = tmp_path / "with.depfs"
    piped = ArcEagerParser(AE_SET, epochs=2, tagger=tagger).fit(synthetic(200, seed=1))
    assert piped.tagger_ is tagger
    piped.save(model)
    # The same parser, byte for byte, with the tagger's file inside; kind unchanged.
    assert model.stat().st_size > files["parser"].stat().st_size
    assert depfs.model_info(model)["kind"] == "arc-eager"
    back = depfs.load(model)
    assert isinstance(back, ArcEagerParser) and isinstance(back.tagger_, Tagger)
    assert back.tagger_.columns_ == ["UPOS", "XPOS", "FEATS", "LEMMA"]
    untagged = depfs.read_conllu(files["untagged"])
    assert back.tagger_.tag(untagged).to_string() == tagger.tag(untagged).to_string()
    expected = by_hand(tagger, parser, files["untagged"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert back.parse(untagged).to_string() == expected
    assert any(isinstance(w.message, depfs.base.TaggedWarning) for w in caught)
    # Tagged input keeps its own tags (no tagging, no warning); tag=True retags it.
    gold = depfs.read_conllu(files["gold"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert back.parse(gold).to_string() == parser.parse(gold).to_string()
    assert back.parse(gold, tag=True).to_string() == expected
    # The CLI: tags first and says so in a note; info shows the tagger.
    out = tmp_path / "out.conllu"
    res = CliRunner().invoke(main, ["parse", str(model), str(files["untagged"]), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text() == expected
    assert "note: the input leaves tag columns empty: tagged first" in res.output
    res = CliRunner().invoke(main, ["parse", str(model), str(files["gold"]), "-o", str(out)])
    assert res.exit_code == 0 and "tagged first" not in res.output
    # depfs tag uses the tagger inside a parser's file; a parser without one is refused.
    tagged = tmp_path / "tagged.conllu"
    res = CliRunner().invoke(main, ["tag", str(model), str(files["untagged"]), "-o", str(tagged)])
    assert res.exit_code == 0, res.output
    assert tagged.read_text() == tagger.tag(untagged).to_string()
    res = CliRunner().invoke(main, ["tag", str(files["parser"]), str(files["untagged"])])
    assert res.exit_code == 2 and "no tagger inside" in res.output, res.output
    info = CliRunner().invoke(main, ["info", str(model)])
    assert "tagger inside: predicts UPOS, XPOS, FEATS, LEMMA" in info.output, info.output
    d = json.loads(CliRunner().invoke(main, ["info", str(model), "--json"]).output)
    assert d["tagger"]["columns"] == ["UPOS", "XPOS", "FEATS", "LEMMA"]
    assert d["tagger"]["training"]["train"]["sentences"] == 200
    assert depfs.model_info(files["parser"])["tagger"] is None
    # Removing it: a plain parser again, which refuses untagged input.
    back.tagger_ = None
    back.save(tmp_path / "plain.depfs")
    assert depfs.load(tmp_path / "plain.depfs").tagger_ is None
    with pytest.raises(MissingColumnsError, match="--tagger"):
        back.parse(untagged)


def test_graph_parser_holds_a_tagger_too(tagger: Tagger, tmp_path: Path) -> None:
    g = small_graph(epochs=1)
    g.tagger = tagger
    g.fit(synthetic(60, seed=3))
    g.save(tmp_path / "g.depfs")
    back = depfs.load(tmp_path / "g.depfs")
    assert isinstance(back.tagger_, Tagger)
    untagged = Treebank.from_string(blank(synthetic_conllu(10, seed=4)))
    assert back.parse(untagged, tag=True).to_string() == g.parse(tagger.tag(untagged)).to_string()


def test_cli_train_with_tagger_stores_it(files: dict[str, Path], tmp_path: Path) -> None:
    train = tmp_path / "train.conllu"
    train.write_text(synthetic_conllu(100, seed=1))
    ae = tmp_path / "ae.txt"
    ae.write_text(AE_SET)
    model = tmp_path / "m.depfs"
    base = ["train", "--parser", "arc-eager", "--train", str(train), "--out", str(model)]
    base += ["--epochs", "1", "--templates", str(ae)]
    res = CliRunner().invoke(main, [*base, "--tagger", str(files["tagger"])])
    assert res.exit_code == 0, res.output
    assert "with the tagger" in res.output
    assert isinstance(depfs.load(model).tagger_, Tagger)
    res = CliRunner().invoke(main, [*base, "--tagger", str(files["parser"])])
    assert res.exit_code == 2 and "not a tagger model" in res.output
    res = CliRunner().invoke(
        main,
        ["train", "--parser", "tagger", "--train", str(train), "--out", str(model)]
        + ["--tagger", str(files["tagger"])],
    )
    assert res.exit_code == 2 and "--tagger" in res.output


def test_cli_train_on_several_files_trains_on_their_sentences_together(tmp_path: Path) -> None:
    """`depfs train --train A --train B` (e.g. jackknifed and gold tags) is the parser
    fitted on A's sentences followed by B's; one --train is as before."""
    a, b, test = (synthetic_conllu(60, seed=s) for s in (1, 2, 3))
    paths = {"a": tmp_path / "a.conllu", "b": tmp_path / "b.conllu"}
    paths["a"].write_text(a)
    paths["b"].write_text(b)
    ae = tmp_path / "ae.txt"
    ae.write_text(AE_SET)
    model = tmp_path / "m.depfs"
    args = ["train", "--parser", "arc-eager", "--out", str(model), "--epochs", "2"]
    args += ["--templates", str(ae), "--seed", "3"]
    res = CliRunner().invoke(main, [*args, "--train", str(paths["a"]), "--train", str(paths["b"])])
    assert res.exit_code == 0, res.output
    both = ArcEagerParser(AE_SET, epochs=2, random_state=3).fit(Treebank.from_string(a + b))
    only_a = ArcEagerParser(AE_SET, epochs=2, random_state=3).fit(Treebank.from_string(a))
    loaded, gold = depfs.load(model), Treebank.from_string(test)
    assert loaded.parse(gold).to_string() == both.parse(gold).to_string()
    assert both.parse(gold).to_string() != only_a.parse(gold).to_string()  # B made a difference
    train = depfs.model_info(model)["training"]["train"]
    assert train["sentences"] == 120 and train["file"] == f"{paths['a']} + {paths['b']}"
    res = CliRunner().invoke(main, [*args, "--train", str(paths["a"])])
    assert res.exit_code == 0, res.output
    assert depfs.load(model).parse(gold).to_string() == only_a.parse(gold).to_string()
    for twice in (["--train", str(paths["a"]), "--train", str(model)], ["--train", str(model)]):
        model.write_bytes(b"")  # --out is the second --train file (or the only one): refused
        res = CliRunner().invoke(main, [*args, *twice])
        assert res.exit_code == 2 and "is the --train file" in res.output, res.output


def test_damaged_parser_with_tagger_is_refused(tagger: Tagger, tmp_path: Path) -> None:
    model = tmp_path / "with.depfs"
    ArcEagerParser(AE_SET, epochs=1, tagger=tagger).fit(synthetic(40)).save(model)
    data = model.read_bytes()
    for damaged in (data[: len(data) - 10], data[:-1] + bytes([data[-1] ^ 0x40])):
        model.write_bytes(damaged)
        with pytest.raises(ModelError):
            depfs.load(model)
        res = CliRunner().invoke(main, ["info", str(model)])
        assert res.exit_code == 2 and res.output.count("\n") == 1, res.output


@pytest.mark.parametrize("name", ["arceager_v5", "arceager", "graph1"])
def test_older_model_files_load_without_a_tagger(name: str) -> None:
    """Files written before parsers could hold a tagger (format 5 by commit 0930bb7,
    format 3 on 2026-11-23) load, have no tagger and parse as they did."""
    parser = depfs.load(DATA / f"{name}.depfs")
    assert parser.tagger_ is None
    expected = (DATA / "expected" / f"{name}.conllu").read_text(encoding="utf-8")
    assert parser.parse(depfs.read_conllu(DATA / "input.conllu")).to_string() == expected
    assert depfs.model_info(DATA / f"{name}.depfs")["tagger"] is None


# ---------- jackknifing ----------


def lemma(i: int) -> str:
    return "L" + "".join("abcdefghij"[int(d)] for d in str(i))


def planted(n: int, seed: int = 0) -> str:
    """Synthetic text where sentence i's first word is `zqI` with UPOS `UI`, XPOS `XI`,
    lemma `lemma(I)` (letters, so no edit script of another form makes it): tags no
    other sentence has. One sentence also gets a multiword-token line, and every
    sentence a comment of its own."""
    out, i = [], -1
    for line in synthetic_conllu(n, seed=seed).splitlines():
        cols = line.split("\t")
        if line.startswith("# sent_id"):
            i += 1
            out.append(line)
            out.append(f"# note = sentence {i}")
            continue
        if len(cols) == 10 and cols[0] == "1":
            cols[1:5] = [f"zq{i}", lemma(i), f"U{i}", f"X{i}"]
            if i == 3:
                out.append("1-2\tzqmw\t_\t_\t_\t_\t_\t_\t_\t_")
        out.append("\t".join(cols))
    return "\n".join(out) + "\n"


def test_fold_bounds_are_contiguous_and_near_equal() -> None:
    b = fold_bounds(23, 4)
    assert b == [(0, 5), (5, 11), (11, 17), (17, 23)]
    for n, k in ((10, 10), (100, 7), (12543, 10)):
        b = fold_bounds(n, k)
        assert len(b) == k and b[0][0] == 0 and b[-1][1] == n
        assert all(x[1] == y[0] for x, y in zip(b, b[1:]))
        assert max(e - s for s, e in b) - min(e - s for s, e in b) <= 1


def test_jackknife_tags_each_sentence_with_a_tagger_that_never_saw_it() -> None:
    text = planted(30)
    tb = Treebank.from_string(text)
    out = depfs.jackknife(tb, folds=5, templates=SMALL, epochs=2)
    assert len(out) == 30
    for i, (before, after) in enumerate(zip(tb, out)):
        assert before.upos[0] == f"U{i}"
        # A tagger that saw sentence i would know zq{i}: U{i}, X{i}, its lemma.
        assert after.upos[0] != f"U{i}" and after.xpos[0] != f"X{i}", (i, after.upos)
        assert after.lemmas[0] != lemma(i)
        assert after.forms == before.forms
    # ... while a tagger trained on all of it does know them (the check can fail).
    full = Tagger(SMALL, epochs=2).fit(tb).tag(tb)
    assert sum(s.upos[0] == f"U{i}" for i, s in enumerate(full)) >= 25
    # Every other column, comment and multiword-token line is kept byte for byte.
    kept = (0, 1, 6, 7, 8, 9)
    a_lines, b_lines = text.splitlines(), out.to_string().splitlines()
    assert len(a_lines) == len(b_lines)
    changed = 0
    for a, b in zip(a_lines, b_lines):
        ca, cb = a.split("\t"), b.split("\t")
        if len(ca) == 10 and ca[0].isdigit():
            assert [ca[c] for c in kept] == [cb[c] for c in kept]
            changed += ca[2:6] != cb[2:6]
        else:
            assert a == b
    assert changed >= 30  # at least the planted words got predicted tags
    # Deterministic: the same call, the same bytes.
    again = depfs.jackknife(tb, folds=5, templates=SMALL, epochs=2)
    assert again.to_string() == out.to_string()


def test_jackknife_fold_counts_that_cannot_work_are_clean_errors() -> None:
    tb = synthetic(6)
    for k in (1, 0, -3):
        with pytest.raises(ValueError, match="at least 2"):
            depfs.jackknife(tb, folds=k)
    with pytest.raises(ValueError, match="7 folds for 6 sentences"):
        depfs.jackknife(tb, folds=7)


def test_cli_jackknife(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import click
    import depfs.cli

    def drawn(length: int, label: str, **kw: Any) -> Any:  # the bar, drawn off a terminal too
        return click.progressbar(length=length, label=label, file=sys.stderr, **kw)

    monkeypatch.setattr(depfs.cli, "progress", drawn)
    train = tmp_path / "train.conllu"
    train.write_text(planted(24))
    small = tmp_path / "small.txt"
    small.write_text(SMALL)
    out = tmp_path / "jk.conllu"
    args = ["jackknife", "--train", str(train), "-o", str(out), "--templates", str(small)]
    res = CliRunner().invoke(main, [*args, "--folds", "4", "--epochs", "2"])
    assert res.exit_code == 0, res.output
    assert "wrote" in res.output and "fold 4/4" in res.output
    api = depfs.jackknife(depfs.read_conllu(train), 4, templates=SMALL, epochs=2)
    assert out.read_text() == api.to_string()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jk.conllu", "small.txt", "train.conllu"]
    for folds, needle in (
        ("1", "'--folds': 1 is not in the range x>=2"),
        ("25", "25 folds for 24 sentences"),
    ):
        res = CliRunner().invoke(main, [*args, "--folds", folds])
        assert res.exit_code == 2, res.output
        assert res.output.count("\n") == 1 and res.output.startswith("depfs: error: ")
        assert needle in res.output
    res = CliRunner().invoke(main, ["jackknife", "--train", str(train), "-o", str(train)])
    assert res.exit_code == 2 and "--force" in res.output


class _Watched:
    """A parser whose parse records how many calls run at once, with which thread count,
    and sleeps on the batches of `slow` sentences (so that a later batch ends first)."""

    def __init__(self, parser: ArcEagerParser, slow: int) -> None:
        self.parser, self.slow = parser, slow
        self.running = self.most = 0
        self.threads: list[int] = []
        self.lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.parser, name)

    def parse(self, tb: Any, threads: int = 1, **kw: Any) -> Any:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.threads.append(threads)
        if len(tb) == self.slow:
            time.sleep(0.3)
        try:
            return self.parser.parse(tb, threads=threads, **kw)
        finally:
            with self.lock:
                self.running -= 1


@pytest.mark.parametrize("threads", [1, 2])
def test_overlapped_reads_and_writes_keep_the_batches_in_order(
    parser: ArcEagerParser, threads: int
) -> None:
    """parse_stream reads the next batch and writes the previous one in other threads
    while it parses, and with threads > 1 parses two batches at once, each on all the
    threads: the output is the batches' parses in input order even when a later batch
    is done first, and a reading error surfaces at its batch (after the batches before
    it were written). Planted: writing in the order the parses end fails; so does
    parsing one batch at a time, or each on one thread, at threads=2."""
    import io

    batches = [synthetic(n, seed=40 + n) for n in (1, 9, 2, 7, 3, 5)]
    watched = _Watched(parser, slow=9)
    out = io.BytesIO()
    done = depfs.pipeline.parse_stream(watched, iter(batches), out, threads=threads)
    assert out.getvalue() == b"".join(parser.parse(b).to_bytes() for b in batches)
    assert done.sentences == sum(len(b) for b in batches)
    used = min(threads, os.cpu_count() or 1)  # capped at the cores
    assert watched.most == used and set(watched.threads) == {used}

    def failing() -> Any:
        yield from batches[:2]
        raise ValueError("batch 3 is bad")

    out = io.BytesIO()
    with pytest.raises(ValueError, match="batch 3 is bad"):
        depfs.pipeline.parse_stream(watched, failing(), out, threads=threads)
    assert out.getvalue() == b"".join(parser.parse(b).to_bytes() for b in batches[:2])


@pytest.mark.parametrize("threads", [1, 2])
def test_only_the_parse_threads_warnings_are_the_parse_notes(
    parser: ArcEagerParser, threads: int
) -> None:
    """A warning raised while a batch is parsed is a note of the parse (on_note, or the
    notes returned), once per batch; a warning of another thread (the reader's, which
    names its own file and line) goes where warnings went before, not into the notes.
    Planted: every warning taken as a parse note fails."""
    import io

    class Warns(_Watched):
        def parse(self, tb: Any, threads: int = 1, **kw: Any) -> Any:
            warnings.warn(f"parse note {len(tb)}", stacklevel=1)
            return super().parse(tb, threads=threads, **kw)

    def reading() -> Any:
        for i, n in enumerate((3, 4, 5, 6)):
            if i == 2:
                warnings.warn("reader note", stacklevel=1)
            yield synthetic(n, seed=n)

    for on_note in (None, []):
        with warnings.catch_warnings(record=True) as outer:
            warnings.simplefilter("always")
            done = depfs.pipeline.parse_stream(
                Warns(parser, slow=4),
                reading(),
                io.BytesIO(),
                threads=threads,
                on_note=None if on_note is None else on_note.append,
            )
        notes = done.notes if on_note is None else on_note
        assert sorted(notes) == [f"parse note {n}" for n in (3, 4, 5, 6)]
        assert [str(w.message) for w in outer] == ["reader note"]
        assert on_note is None or done.notes == []


def test_a_bad_model_is_reported_before_a_bad_input_and_each_alone(tmp_path: Path) -> None:
    # The model loads in a thread while the first batch is read: which error wins must
    # not depend on which finishes first.
    from depfs.errors import FormatError

    data = Path(__file__).parent / "data"
    bad_model, bad_input = tmp_path / "bad.depfs", tmp_path / "bad.conllu"
    bad_model.write_bytes(b"not a model at all")
    bad_input.write_text("1\tonly three\tcolumns\n\n")
    out = str(tmp_path / "out.conllu")
    parse = depfs.pipeline.parse_file
    with pytest.raises(ModelError, match="bad.depfs"):
        parse(str(bad_model), str(bad_input), out)
    with pytest.raises(ModelError, match="bad.depfs"):
        parse(str(bad_model), str(data / "input.conllu"), out)
    with pytest.raises(FormatError, match="bad.conllu:1"):
        parse(str(data / "arceager.depfs"), str(bad_input), out)
    assert not os.path.exists(out)
    assert parse(str(data / "arceager.depfs"), str(data / "input.conllu"), out).words > 0


# The checked-in parser models (every kind of parser the project has).
PARSERS = ["arceager", "arceager_v5", "graph1", "graph1_cle", "graph2", "dynfs1_v5"]


def parsed_in_batches(model: Any, path: Path, columns: list[str] | None) -> bytes:
    """A parse of `path` in batches of 7 sentences, each written through its text; the
    batches read only `columns` when given."""
    reader = depfs._core.ConlluBatches(str(path), sentences=7, keep_text=True)
    if columns is not None:
        reader.read_columns(columns)
    out = []
    for tb, text in reader:
        if columns is not None:
            with pytest.raises(ValueError, match="read with some columns left out"):
                tb.to_bytes()
        out.append(text.rewrite(model.parse(tb, allow_missing_tags=True)))
    return b"".join(out)


@pytest.fixture(scope="module")
def ud_sample(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """The first 150 sentences of en_ewt dev (comments, DEPS, MISC, multiword tokens and
    empty nodes), when the UD data is here."""
    from test_treebank import ud_dir

    ud = ud_dir()
    if ud is None:
        return None
    text = (ud / "en_ewt" / "dev.conllu").read_text(encoding="utf-8")
    path = tmp_path_factory.mktemp("ud") / "sample.conllu"
    path.write_text("".join(s + "\n\n" for s in text.split("\n\n")[:150]), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", PARSERS)
def test_batches_read_in_part_parse_and_write_as_the_whole_file(
    name: str, ud_sample: Path | None, tmp_path: Path
) -> None:
    """A streamed parse reads only the columns a parser can read (`PARSE_COLUMNS`) and
    writes through the input's text: for every kind of parser, the bytes of a parse of
    the whole file read in full. Planted: leaving UPOS out of `PARSE_COLUMNS` fails."""
    model = depfs.load(DATA / f"{name}.depfs")
    for path in [DATA / "input.conllu", *([ud_sample] if ud_sample else [])]:
        whole = model.parse(depfs.read_conllu(path), allow_missing_tags=True).to_bytes()
        assert parsed_in_batches(model, path, None) == whole, path.name
        assert parsed_in_batches(model, path, depfs.pipeline.PARSE_COLUMNS) == whole, path.name
        # Margins in the input (another parse's) are dropped, as the heads are replaced:
        # the same bytes. Planted: a parser that keeps them fails.
        stale = tmp_path / "stale.conllu"
        stale.write_text(with_stale_margins(path.read_text(encoding="utf-8")), encoding="utf-8")
        parsed = model.parse(depfs.read_conllu(stale), allow_missing_tags=True)
        assert parsed.to_bytes() == whole, path.name
        assert parsed_in_batches(model, stale, depfs.pipeline.PARSE_COLUMNS) == whole, path.name


def test_a_treebank_read_in_part_is_written_only_through_its_text(tmp_path: Path) -> None:
    reader = depfs._core.ConlluBatches(str(DATA / "input.conllu"), sentences=2, keep_text=True)
    reader.read_columns(["form", "UPOS"])
    tb, text = next(reader)
    s = tb[0]
    assert s.forms[:2] == ["a", "old"] and s.upos[:2] == ["DET", "ADJ"]
    assert set(s.lemmas) == set(s.xpos) == set(s.feats) == {"_"} and s.comments == []
    for write in (tb.to_bytes, tb.to_string, s.to_string, lambda: tb.write(tmp_path / "o")):
        with pytest.raises(ValueError, match="read with some columns left out"):
            write()
    assert not (tmp_path / "o").exists()
    # Its text is the input's.
    head = (DATA / "input.conllu").read_bytes().split(b"\n\n")[:2]
    assert text.rewrite(tb) == b"".join(h + b"\n\n" for h in head)
    with pytest.raises(ValueError, match='unknown column "HEADS"'):
        reader.read_columns(["HEADS"])
    plain = depfs._core.ConlluBatches(str(DATA / "input.conllu"))
    with pytest.raises(ValueError, match="needs keep_text=True"):
        plain.read_columns(["FORM"])


def test_parse_file_reads_in_part_only_what_it_writes_through_the_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tagger: Tagger, files: dict[str, Path]
) -> None:
    """`depfs parse` reads the batches after the first in part when it writes through
    the input's text: not with --scores, a tagger, or a parser's own tagger (a tagged
    batch is written whole). Planted: reading in part with a tagger inside fails."""
    calls: list[list[str]] = []
    real = depfs.pipeline.input_batches

    def spied(*args: Any, **kw: Any) -> Any:
        batches, fmt = real(*args, **kw)
        reader = batches.reader

        class Spy:
            def read_columns(self, columns: list[str]) -> None:
                calls.append(list(columns))
                reader.read_columns(columns)

            def __next__(self) -> Any:
                return next(reader)

        batches.reader = Spy()
        return batches, fmt

    monkeypatch.setattr(depfs.pipeline, "input_batches", spied)
    monkeypatch.setattr(depfs.pipeline, "CHECK_SENTENCES", 1)
    out = tmp_path / "out.conllu"
    model, inp = DATA / "arceager_v5.depfs", DATA / "input.conllu"
    depfs.pipeline.parse_file(str(model), str(inp), str(out), batch_size=3)
    assert calls == [depfs.pipeline.PARSE_COLUMNS]
    assert out.read_bytes() == (DATA / "expected" / "arceager_v5.conllu").read_bytes()
    calls.clear()
    depfs.pipeline.parse_file(str(model), str(inp), str(out), batch_size=3, scores=True)
    depfs.pipeline.parse_file(
        str(model), str(inp), str(out), batch_size=3, tagger_path=str(files["tagger"])
    )
    assert calls == []
    # A parser with its own tagger, on untagged input (tagged first: written whole).
    piped = tmp_path / "piped.depfs"
    ArcEagerParser(AE_SET, epochs=1, tagger=tagger).fit(synthetic(50, seed=1)).save(piped)
    done = depfs.pipeline.parse_file(str(piped), str(files["untagged"]), str(out), batch_size=3)
    assert calls == [] and any("tagged first" in n for n in done.notes)
    with pytest.warns(depfs.base.TaggedWarning):
        tb = depfs.load(piped).parse(depfs.read_conllu(files["untagged"]))
    assert out.read_bytes() == tb.to_bytes()


def test_batches_read_while_the_model_loads_keep_their_order_and_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the model loads, `parse_file` reads batches ahead (a core would idle): the
    output is the same, and a bad line in a batch read ahead is reported in its turn,
    after the batches before it are written. Planted: raising the error at once fails."""
    import io
    import threading

    from depfs.errors import FormatError

    ready = threading.Event()
    ahead: list[int] = []
    real_model, real_read_while = depfs.pipeline._model, depfs.pipeline._ConlluStream.read_while

    def loading(path: str, stamps: Any = None) -> Any:
        assert ready.wait(30)  # the model "loads" until the reading ahead is done
        return real_model(path, stamps)

    def read_while(self: Any, going: Any) -> None:
        real_read_while(self, going)
        ahead.append(len(self._head))
        ready.set()

    monkeypatch.setattr(depfs.pipeline, "_model", loading)
    monkeypatch.setattr(depfs.pipeline._ConlluStream, "read_while", read_while)
    monkeypatch.setattr(depfs.pipeline, "CHECK_SENTENCES", 1)
    monkeypatch.setattr(depfs.pipeline, "LOAD_AHEAD_SENTENCES", 9)
    model, inp = str(DATA / "arceager_v5.depfs"), DATA / "input.conllu"
    out = tmp_path / "out.conllu"
    depfs.pipeline.parse_file(model, str(inp), str(out), batch_size=3)
    assert ahead == [4]  # the first batch and three more
    expected = (DATA / "expected" / "arceager_v5.conllu").read_bytes()
    assert out.read_bytes() == expected
    # A bad HEAD in the third batch (sentences 7 to 9).
    text = inp.read_text()
    sents = text.split("\n\n")
    lines = sents[6].split("\n")
    cols = lines[-1].split("\t")
    cols[6] = "99"
    lines[-1] = "\t".join(cols)
    sents[6] = "\n".join(lines)
    bad = tmp_path / "bad.conllu"
    bad.write_text("\n\n".join(sents))
    line = "\n\n".join(sents[:7]).count("\n") + 1
    ready.clear()
    stream = io.BytesIO()
    with pytest.raises(FormatError, match=f"bad.conllu:{line}: HEAD 99"):
        depfs.pipeline.parse_file(model, str(bad), None, out=stream, batch_size=3)
    assert ahead[-1] == 2  # the error stopped the reading ahead
    assert stream.getvalue() == b"".join(s + b"\n\n" for s in expected.split(b"\n\n")[:6])


def test_sentences_without_features_are_not_refused_as_untagged(
    tagger: Tagger, tmp_path: Path
) -> None:
    """Tagged text leaves FEATS '_' on many words (punctuation, particles): a sentence with
    no features is tagged, not untagged, whether its tags are gold or a tagger's. Empty
    UPOS beside empty FEATS still is untagged. Planted: FEATS counted alone (the
    half-the-words rule for every column) fails every case below."""
    p = ArcEagerParser("feats(QUEUE_0)\nupos(STACK_0)\nform(QUEUE_0)", epochs=1)
    p.fit(synthetic(60, seed=3))
    no_feats = Treebank.from_string(blank(synthetic_conllu(3, seed=4), columns=(5,)))
    parsed = p.parse(no_feats)  # gold UPOS, no FEATS: parsed, not refused
    assert [len(s) for s in parsed] == [len(s) for s in no_feats]
    untagged = Treebank.from_string(blank(synthetic_conllu(3, seed=4), columns=(3, 5)))
    with pytest.raises(MissingColumnsError, match="UPOS, FEATS"):
        p.parse(untagged)
    # Through the CLI with a tagger, on words the tagger gives no features.
    p.save(tmp_path / "feats.depfs")
    tagger.save(tmp_path / "t.depfs")
    text = tmp_path / "punct.txt"
    text.write_text("on . on .\n. . .\n")
    out = tmp_path / "out.conllu"
    args = [
        "parse",
        str(tmp_path / "feats.depfs"),
        str(text),
        "--tagger",
        str(tmp_path / "t.depfs"),
    ]
    res = CliRunner().invoke(main, [*args, "-o", str(out)])
    assert res.exit_code == 0, res.output
    tagged = depfs.read_conllu(out)
    assert [s.forms for s in tagged] == [["on", ".", "on", "."], [".", ".", "."]]
    assert all(f == "_" for s in tagged for f in s.feats)  # the case of the bug


def test_parse_refuses_a_tagger_model_and_writes_nothing(files: dict[str, Path]) -> None:
    """A tagger given to `depfs parse` as the model is refused (it used to write the input
    back unchanged, exit 0: the fast path copies the input around HEAD and DEPREL)."""
    out = files["gold"].parent / "out.conllu"
    res = CliRunner().invoke(
        main, ["parse", str(files["tagger"]), str(files["gold"]), "-o", str(out)]
    )
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert "is a tagger, not a parser" in res.output and "depfs tag" in res.output
    assert not out.exists()
    with pytest.raises(ModelError, match="a tagger, not a parser"):
        depfs.pipeline.parse_file(str(files["tagger"]), str(files["gold"]), str(out))
    assert not out.exists()


def test_the_cli_loads_the_model_beside_the_first_reads(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`depfs parse` leaves the model's load to `parse_file`, which runs it in a thread
    while the input is read (design.md, "Reading while the model loads"); the CLI reads
    only the file's header. Planted: loading the model in the CLI first (as it did) fails."""
    import threading

    import depfs.models

    threads: list[str] = []
    load = depfs.models.load

    def recording(path: Any) -> Any:
        threads.append(threading.current_thread().name)
        return load(path)

    monkeypatch.setattr(depfs.models, "load", recording)
    monkeypatch.setattr(depfs.pipeline, "_MODELS", {})
    out = files["gold"].parent / "out.conllu"
    res = CliRunner().invoke(
        main, ["parse", str(files["parser"]), str(files["gold"]), "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert len(threads) == 1 and threads[0] != threading.main_thread().name, threads


def test_stdin_is_read_in_batches_with_the_bytes_of_the_whole_parse(
    parser: ArcEagerParser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`depfs parse MODEL < file` reads stdin `--batch-size` sentences at a time (it read
    it whole: memory grew with the input), with the output of the whole-file parse, on
    messy input too (BOM, CRLF, runs of blank lines, no final blank line); an error in a
    later batch names its line in the whole input. Planted: cutting a batch one byte
    early (inside its blank line) fails the bytes; no line offset fails the error."""
    import io

    from depfs.pipeline import stream_batches

    monkeypatch.setattr(depfs.pipeline, "CHECK_SENTENCES", 1)
    model = tmp_path / "p.depfs"
    parser.save(model)
    for data in (synthetic_conllu(40, seed=3).encode(), _messy(40, seed=4)):
        batches, fmt = stream_batches(io.BytesIO(data), batch_size=7)
        sizes = [len(tb) for tb in batches]
        assert fmt == "conllu" and sizes == [7] * 5 + [5], sizes
        res = CliRunner().invoke(main, ["parse", str(model), "--batch-size", "7"], input=data)
        assert res.exit_code == 0, res.output
        whole = parser.parse(Treebank.from_bytes(data)).to_string()
        assert res.stdout == whole
    text = synthetic_conllu(40, seed=3)
    lines = text.splitlines()
    bad = next(i for i in range(len(lines) // 2, len(lines)) if lines[i][:1].isdigit())
    lines[bad] = lines[bad].replace("\t", " ", 1)
    res = CliRunner().invoke(
        main, ["parse", str(model), "--batch-size", "7"], input="\n".join(lines) + "\n"
    )
    assert res.exit_code == 2 and f"<stdin>:{bad + 1}:" in res.output, res.output


def test_input_whose_heads_have_several_roots_is_parsed(
    parser: ArcEagerParser, tmp_path: Path
) -> None:
    """HEAD 0 on every word (how some tools blank a file) is no reason to refuse input
    whose HEAD the parse overwrites: the output is the parse of the blanked input, from a
    file and from stdin. Planted: INPUT_ROOTS = False fails both."""
    from test_bad_input import _without_heads

    gold = synthetic_conllu(12, seed=6)
    zeros = "\n".join(
        "\t".join(c if i != 6 else "0" for i, c in enumerate(line.split("\t")))
        for line in gold.splitlines()
    )
    model, inp = tmp_path / "p.depfs", tmp_path / "zeros.conllu"
    parser.save(model)
    inp.write_text(zeros + "\n")
    expected = parser.parse(Treebank.from_string(_without_heads(gold))).to_string()
    res = CliRunner().invoke(main, ["parse", str(model), str(inp)])
    assert res.exit_code == 0 and res.stdout == expected, res.output
    res = CliRunner().invoke(main, ["parse", str(model)], input=zeros + "\n")
    assert res.exit_code == 0 and res.stdout == expected, res.output


def half_tagged(gold: str, tagged: int) -> str:
    """CoNLL-U `gold` with the tag columns of every sentence after the first `tagged`
    blanked: a file tagged in part."""
    sentences = gold.rstrip("\n").split("\n\n")
    rest = [blank(s).rstrip("\n") for s in sentences[tagged:]]
    return "\n\n".join(sentences[:tagged] + rest) + "\n\n"


def test_input_tagged_in_part_is_refused_naming_the_first_untagged_sentence(
    files: dict[str, Path], parser: ArcEagerParser, tmp_path: Path
) -> None:
    # 40 of 60 sentences tagged: UPOS is filled on most words, so the share of blanks
    # alone let the last 20 be parsed untagged (exit 0, nothing said).
    gold = files["gold"].read_text()
    inp = tmp_path / "half.conllu"
    inp.write_text(half_tagged(gold, 40))
    assert "UPOS" in depfs.read_conllu(inp).filled_columns()
    with pytest.raises(MissingColumnsError, match=r"sentence 41 \(and 19 more\) has no UPOS"):
        parser.parse(depfs.read_conllu(inp))
    out = tmp_path / "out.conllu"
    args = ["parse", str(files["parser"]), str(inp), "-o", str(out)]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert "half.conllu: sentence 41" in res.output and "--allow-missing-tags" in res.output
    assert not out.exists()  # nothing written
    assert CliRunner().invoke(main, [*args, "--allow-missing-tags"]).exit_code == 0
    # Batches after the first (of 1,000 sentences at least) are checked too: they were
    # parsed however untagged. Batches of 7: the first untagged one, 1,001-1,007.
    inp.write_text(half_tagged(synthetic_conllu(1020, seed=9), 1000))
    out.unlink()
    res = CliRunner().invoke(main, [*args, "--batch-size", "7"])
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert "sentences 1001-1007 of the input leaves" in res.output, res.output
    assert not out.exists()
    inp.write_text(half_tagged(synthetic_conllu(1020, seed=9), 1005))  # 5 of its 7 tagged
    res = CliRunner().invoke(main, [*args, "--batch-size", "7"])
    assert res.exit_code == 2 and "sentence 1006 (and 1 more) has no UPOS" in res.output


def test_stdin_is_parsed_and_tagged_into_the_output_file(
    files: dict[str, Path], tmp_path: Path
) -> None:
    # `-o FILE` with stdin went unheeded: the parse went to stdout, no file, exit 0.
    data = files["gold"].read_bytes()
    for cmd, model in (("parse", files["parser"]), ("tag", files["tagger"])):
        out = tmp_path / f"{cmd}.conllu"
        res = CliRunner().invoke(main, [cmd, str(model), "-o", str(out)], input=data)
        assert res.exit_code == 0, res.output
        assert res.stdout == "" and out.exists()
        via_file = CliRunner().invoke(main, [cmd, str(model), str(files["gold"])])
        assert out.read_text() == via_file.stdout
    res = CliRunner().invoke(main, ["parse", str(files["parser"]), "-o", ""], input=data)
    assert res.exit_code == 2 and "-o '': an empty path" in res.output, res.output


def test_gzipped_stdin_is_read_as_a_gzipped_file_is(files: dict[str, Path]) -> None:
    import gzip

    data = files["gold"].read_bytes()
    want = CliRunner().invoke(main, ["parse", str(files["parser"]), str(files["gold"])])
    got = CliRunner().invoke(main, ["parse", str(files["parser"])], input=gzip.compress(data))
    assert got.exit_code == 0 and got.stdout == want.stdout, got.output
    cut = gzip.compress(data)[:-40]  # damaged: one line naming stdin, exit 2
    res = CliRunner().invoke(main, ["tag", str(files["tagger"])], input=cut)
    assert res.exit_code == 2 and "<stdin>: read error after line" in res.output, res.output
    assert "damaged gzip data" in res.output and res.output.count("\n") == 1


def test_whether_input_is_refused_does_not_depend_on_the_batch_size(
    files: dict[str, Path], parser: ArcEagerParser, tmp_path: Path
) -> None:
    # A tagged sentence whose second word has no LEMMA or FEATS (en_ewt's `goeswith`
    # pairs): alone in a batch, "empty on most words" refused it as untagged.
    text = files["gold"].read_text().rstrip("\n").split("\n\n")
    lines = text[3].split("\n")
    words = [i for i, line in enumerate(lines) if line.split("\t")[0].isdigit()]
    for i in words[len(words) // 2 :]:
        cols = lines[i].split("\t")
        cols[2], cols[5] = "_", "_"
        lines[i] = "\t".join(cols)
    text[3] = "\n".join(lines)
    inp = tmp_path / "in.conllu"
    inp.write_text("\n\n".join(text) + "\n\n")
    lemmas = ArcEagerParser("lemma(QUEUE_0)\nupos(STACK_0)\nform(QUEUE_0)", epochs=1)
    lemmas.fit(synthetic(100, seed=1)).save(tmp_path / "lemma.depfs")
    assert lemmas.model_.input_columns == ["FORM", "LEMMA", "UPOS"]
    alone = depfs.read_conllu(inp)[3:4]
    assert len(lemmas.parse(alone)) == 1
    outs = []
    for size in ("1", "2", "5000"):
        res = CliRunner().invoke(
            main, ["parse", str(tmp_path / "lemma.depfs"), str(inp), "--batch-size", size]
        )
        assert res.exit_code == 0, (size, res.output)
        outs.append(res.stdout)
    assert outs[0] == outs[1] == outs[2]
    # A sentence wholly untagged is still refused alone.
    untagged = depfs.Treebank.from_string(blank(text[3] + "\n\n"))
    with pytest.raises(MissingColumnsError):
        lemmas.parse(untagged)


def test_parse_and_tag_of_a_path_take_several_roots_as_depfs_parse_does(
    files: dict[str, Path], parser: ArcEagerParser, tagger: Tagger, tmp_path: Path
) -> None:
    lines = files["gold"].read_text().split("\n")
    first = next(  # a word of the first sentence that is not its root: now a second root
        i for i, line in enumerate(lines) if line.split("\t")[6:7] not in ([], ["0"])
    )
    cols = lines[first].split("\t")
    cols[6] = "0"
    lines[first] = "\t".join(cols)
    multi = tmp_path / "multi.conllu"
    multi.write_text("\n".join(lines))
    with pytest.raises(depfs.errors.FormatError, match="several roots"):
        depfs.read_conllu(multi)  # (as gold: one root a sentence)
    want = CliRunner().invoke(main, ["parse", str(files["parser"]), str(multi)]).stdout
    assert parser.parse(str(multi)).to_string() == want
    assert len(tagger.tag(multi)) == 60
    # A tagger where a parser is expected takes a parser's keywords, not any.
    with pytest.raises(TypeError):
        tagger.parse(depfs.read_conllu(files["gold"]), bogus=1)
    with pytest.raises(ValueError, match="scores=True"):
        tagger.parse(depfs.read_conllu(files["gold"]), scores=True)


def test_one_command_parses_with_one_model(
    tmp_path: Path, parser: ArcEagerParser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model file replaced while files are parsed (a training writing it): each file
    and chunk loaded the model again, and one run wrote files, even one file, parsed in
    part by each model (exit 0). Now the change is refused, naming the file; in a new
    command the new model is used (the process's copy replaced, not kept beside)."""
    import concurrent.futures as cf

    from depfs.errors import ModelError
    from depfs.pipeline import parse_files

    model, other = tmp_path / "m.depfs", tmp_path / "other.depfs"
    parser.save(model)
    small_graph(epochs=1).fit(synthetic(30, seed=2)).save(other)
    pairs = []
    for name in "abc":
        (tmp_path / f"{name}.conllu").write_text(synthetic_conllu(20, seed=ord(name)))
        pairs.append((str(tmp_path / f"{name}.conllu"), str(tmp_path / f"{name}.out")))

    class ReplacesAfterFirst:
        def __init__(self) -> None:
            self.inner, self.submitted = cf.ThreadPoolExecutor(1), 0

        def submit(self, fn: Any, *args: Any, **kw: Any) -> Any:
            self.submitted += 1
            if self.submitted == 2:
                self.inner.submit(lambda: None).result()  # the first one done
                os.replace(other, model)  # as `depfs train --out` does
            return self.inner.submit(fn, *args, **kw)

    with pytest.raises(ModelError, match="m.depfs: the model file changed while this"):
        parse_files(str(model), pairs, ReplacesAfterFirst())
    done = parse_files(str(model), pairs, cf.ThreadPoolExecutor(1))  # a new command
    assert [p.sentences for p in done] == [20, 20, 20]
    assert isinstance(depfs.pipeline._MODELS[str(model)][1], depfs.GraphParser)


def test_depfs_parse_out_dir_parses_with_one_model(
    tmp_path: Path, parser: ArcEagerParser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`depfs parse M a b --out-dir D` with M replaced after `a` is written: refused at
    `b` (it parsed `b` with the new model, exit 0)."""
    model, other = tmp_path / "m.depfs", tmp_path / "other.depfs"
    parser.save(model)
    small_graph(epochs=1).fit(synthetic(30, seed=2)).save(other)
    for name in "ab":
        (tmp_path / f"{name}.conllu").write_text(synthetic_conllu(20, seed=ord(name)))
    real = depfs.pipeline.parse_file

    def then_replaced(*args: Any, **kw: Any) -> Any:
        done = real(*args, **kw)
        if other.exists():
            os.replace(other, model)
        return done

    monkeypatch.setattr(depfs.pipeline, "parse_file", then_replaced)
    (tmp_path / "out").mkdir()
    args = ["parse", str(model), str(tmp_path / "a.conllu"), str(tmp_path / "b.conllu")]
    res = CliRunner().invoke(main, [*args, "--out-dir", str(tmp_path / "out")])
    assert res.exit_code == 2 and "the model file changed while this command ran" in res.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.conllu"]
