"""Parsing files: the one path behind `depfs parse`, on this machine or on Dask workers.

:func:`parse_file` streams one CoNLL-U file through a model: it reads, parses and
writes a batch of sentences at a time (the output is the same bytes as a whole-file
parse; memory stays bounded on any corpus), and the output appears only once complete.
Workers keep each model they load (one load per worker and model file), so a list of
files can be spread over a `concurrent.futures.Executor` — a Dask cluster's included —
with :func:`parse_files`. The unit of work is a file, or a chunk of whole sentences of
a large CoNLL-U file (:func:`conllu_chunks`): a chunk's output comes back to the caller,
which writes the chunks in order into the output file (atomically), so the output is
the same bytes as a whole-file parse; a lost worker's files and chunks are simply
parsed again.

Input: CoNLL-U, or text with words only (horizontal, vertical, or raw text split by a
spaCy tokenizer; :mod:`depfs.text`), detected when not given (:func:`input_batches`).

Tag-then-parse: with a tagger (``tagger_path``, or a tagger inside the parser's model
file), each batch is tagged, then parsed. A tagger given explicitly tags every input,
overwriting the columns it predicts; a parser's own tagger tags only input that leaves
the parser's tag columns empty (decided on the first batch, said in the notes).
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import contextlib
import glob
import gzip
import io
import itertools
import os
import queue
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from . import _core
from .files import is_stream

#: Sentences of a streamed input on which its columns are checked: one short sentence
#: may lack FEATS, a thousand tell whether the input was tagged.
CHECK_SENTENCES = 1000

#: The UTF-8 byte-order mark: read past at the start of an input, an error elsewhere.
_BOM = b"\xef\xbb\xbf"

#: Sentences per chunk of a CoNLL-U file spread over a cluster (:func:`parse_files`):
#: a larger file is split into chunks of this many whole sentences.
CHUNK_SENTENCES = 20_000

#: Chunks of one file parsed at a time (the caller holds at most this many chunk
#: outputs of a file in memory while an earlier one is still being parsed).
CHUNKS_IN_FLIGHT = 16

#: Models loaded in this process: path -> (its file's stamp, the model).
_MODELS: dict[str, tuple[tuple[int, int], Any]] = {}


def model_stamps(*paths: str | None) -> dict[str, tuple[int, int]]:
    """:func:`model_stamp` of each path given (None: none)."""
    return {p: model_stamp(p) for p in paths if p is not None}


def model_stamp(path: str) -> tuple[int, int]:
    """What says a model file is the one a command began with: its modification time
    (whole seconds: the same seen through any mount of a shared disk) and size."""
    st = os.stat(path)
    return (int(st.st_mtime), st.st_size)


def _model(path: str, stamps: Mapping[str, Any] | None = None) -> Any:
    """The model at `path`, loaded once per process and kept while its file stays the
    same (a file replaced, a new training, is loaded again, in the old one's place).
    With `stamps` (path -> :func:`model_stamp` when the command began), a file changed
    since is refused: one command's outputs come from one model (a training replacing
    it mid-run gave a file parsed in part by each)."""
    from .errors import ModelError
    from .models import load

    key, want = os.path.abspath(path), (stamps or {}).get(path)

    def check(now: tuple[int, int]) -> None:
        if want is not None and now != tuple(want):
            raise ModelError(
                f"{path}: the model file changed while this command ran (replaced by a "
                "training?): its outputs would come from two models; run the command again"
            )

    now = model_stamp(path)
    check(now)
    cached = _MODELS.get(key)
    if cached is not None and cached[0] == now:
        return cached[1]
    model = load(path)
    check(model_stamp(path))  # (replaced while it loaded)
    _MODELS[key] = (now, model)
    return model


def _tagger(path: str, stamps: Mapping[str, Any] | None = None) -> Any:
    """The tagger at `path` (loaded once per process, as :func:`_model`): a tagger model
    file, or a parser's with a tagger inside; another model is refused."""
    from ._core import model_kind
    from .errors import ModelError

    kind = model_kind(path, checked=False)  # loaded below: checked then
    if kind == "tagger":
        return _model(path, stamps)
    inside = getattr(_model(path, stamps), "tagger_", None)
    if inside is None:
        raise ModelError(
            f"{path}: not a tagger model (it holds a model of kind {kind!r} with no tagger inside)"
        )
    return inside


_TOKENIZERS: dict[str, Any] = {}


def _tokenizer(spec: str) -> Any:
    """The raw-text tokenizer of a ``--tokenizer`` value (``spacy:LANG``), made once per
    process. ImportError (spaCy missing) and ValueError (bad value) say what to do."""
    from .text import SpacyTokenizer

    if spec not in _TOKENIZERS:
        _TOKENIZERS[spec] = SpacyTokenizer.from_spec(spec)
    return _TOKENIZERS[spec]


#: What a note says of each detected text format.
FORMAT_NAMES = {
    "horizontal": "horizontal text (one sentence per line, tokens split on spaces)",
    "vertical": "vertical text (one token per line, a blank line between sentences)",
}


def detected_note(fmt: str) -> str:
    """The note on a detected input format that is not CoNLL-U."""
    return f"read as {FORMAT_NAMES[fmt]}; --input chooses the format"


def detect_input(path: str) -> str:
    """The format of a file: see :func:`depfs.text.detect_format` (stdin, and any
    :func:`is_stream` path: :func:`stream_batches`, which detects on what it reads)."""
    from .errors import FormatError
    from .text import DETECT_LINES, GZIP_ERRORS, _open, bounded_lines, detect_format, gzip_message

    head: list[bytes] = []
    try:
        with _open(path) as f:
            for line in itertools.islice(bounded_lines(f, path), DETECT_LINES):
                head.append(line)
    except GZIP_ERRORS as e:
        raise FormatError(gzip_message(path, len(head), e)) from None
    return detect_format((line.decode("utf-8", "replace") for line in head), path)


def input_batches(
    source: str,
    input_format: str | None = None,
    *,
    name: str | None = None,
    tokenizer: str | None = None,
    batch_size: int = 5000,
    keep_text: bool = False,
) -> tuple[Iterator[Any], str]:
    """The treebank batches of a file (`source`, a path; named `name`, default the path;
    stdin: :func:`stream_batches`), and the format read. `input_format`: ``conllu``,
    ``horizontal``, ``vertical`` or None (detected); `tokenizer` (``spacy:LANG``):
    raw text, the format is then ``raw text``. A CoNLL-U file's first batch holds at
    least :data:`CHECK_SENTENCES` sentences (the columns are checked on it). With
    `keep_text`, a CoNLL-U file's batches come as pairs (treebank, `BatchText`): see
    :func:`parse_stream`."""
    from .text import FORMATS, _open, text_batches

    label = name or source
    if is_stream(source):
        return _stream_file_batches(source, input_format, label, tokenizer, batch_size)
    if tokenizer is not None:
        fmt = "raw text"
    else:
        fmt = input_format or detect_input(source)
        if fmt not in FORMATS:
            raise ValueError(f"unknown input format {fmt!r} (known: {', '.join(FORMATS)})")
    if fmt == "conllu":
        reader = _core.ConlluBatches(
            source, sentences=batch_size, keep_text=keep_text, multiple_roots=INPUT_ROOTS
        )
        first = reader.next_batch(max(batch_size, CHECK_SENTENCES))
        return _ConlluStream(first, reader, batch_size), fmt
    split = None if tokenizer is None else _tokenizer(tokenizer)

    def batches() -> Iterator[_core.Treebank]:
        with _open(source) as stream:
            yield from text_batches(stream, fmt, name=label, batch_size=batch_size, tokenizer=split)

    return batches(), fmt


def _stream_file_batches(
    path: str, input_format: str | None, name: str, tokenizer: str | None, batch_size: int
) -> tuple[Iterator[Any], str]:
    """:func:`stream_batches` of the pipe or FIFO at `path`, opened once (and closed when
    its batches are done): opening it again for detection would lose what was read."""
    from .text import _open

    stream = _open(path)
    try:
        batches, fmt = stream_batches(
            stream, input_format, name=name, tokenizer=tokenizer, batch_size=batch_size
        )
    except BaseException:
        stream.close()
        raise

    def closing() -> Iterator[Any]:
        with stream:
            yield from batches

    return closing(), fmt


def stream_batches(
    stream: BinaryIO,
    input_format: str | None = None,
    *,
    name: str = "<stdin>",
    tokenizer: str | None = None,
    batch_size: int = 5000,
) -> tuple[Iterator[Any], str]:
    """As :func:`input_batches`, from a binary stream (stdin) read as it comes: memory
    holds one batch, not the whole input; gzip data is gunzipped. The format is detected
    on the first lines."""
    from .text import DETECT_LINES, FORMATS, detect_format, stream_lines, text_batches

    rest = stream_lines(stream, name)
    head = list(itertools.islice(rest, DETECT_LINES))
    lines = itertools.chain(head, rest)  # the lines read for detection, then the rest
    if tokenizer is not None:
        fmt = "raw text"
    else:
        fmt = input_format or detect_format((x.decode("utf-8", "replace") for x in head), name)
        if fmt not in FORMATS:
            raise ValueError(f"unknown input format {fmt!r} (known: {', '.join(FORMATS)})")
    if fmt == "conllu":
        return _conllu_from_stream(lines, name, batch_size), fmt
    split = None if tokenizer is None else _tokenizer(tokenizer)
    return text_batches(lines, fmt, name=name, batch_size=batch_size, tokenizer=split), fmt


def _conllu_from_stream(lines: Iterable[bytes], name: str, batch_size: int) -> Iterator[Any]:
    """CoNLL-U batches of `batch_size` whole sentences read from `lines` (the first one
    at least :data:`CHECK_SENTENCES`, as a file's): errors name the line in the whole
    stream. O(bytes); memory: a batch."""
    first = max(batch_size, CHECK_SENTENCES)
    for group, _, first_line, count in sentence_groups(lines, first, batch_size, keep=True):
        if count:
            yield _from_bytes_at(b"".join(group), name, first_line)


def sentence_groups(
    lines: Iterable[bytes], first: int, size: int, *, keep: bool
) -> Iterator[tuple[list[bytes], int, int, int]]:
    """CoNLL-U lines in groups of whole sentences, `first` sentences then `size` each (the
    last group the rest), as the reader splits sentences: a line that is empty once its
    line end (LF, and every CR before it) is stripped ends a sentence; a group starts at
    the first line of a sentence, its comments included, and ends after the blank lines
    that follow its last one. Yields (its lines if `keep`, else [], its bytes, its first
    line, its sentences). O(lines)."""
    group: list[bytes] = []
    nbytes, first_line, count, line_no, inside, want = 0, 1, 0, 0, False, first
    for line in lines:
        line_no += 1
        # As the reader: every CR before the LF ends the line (`\r\r\n` too).
        body = line.removesuffix(b"\n").rstrip(b"\r")
        if line_no == 1:
            body = body.removeprefix(_BOM)
        if not body:
            count += inside
            inside = False
        else:
            if not inside and count == want:
                yield group, nbytes, first_line, count
                group, nbytes, first_line, count, want = [], 0, line_no, 0, size
            inside = True
        nbytes += len(line)
        if keep:
            group.append(line)
    if line_no:
        yield group, nbytes, first_line, count + inside


def _from_bytes_at(data: bytes, name: str, first_line: int) -> Any:
    """`data` read as CoNLL-U lines from `first_line` of the input `name` on: an error
    names its line in the whole input."""
    from .errors import FormatError

    if first_line > 1 and data.startswith(_BOM):
        # A BOM is the input's first bytes or a character of its line: as the file's
        # reader, the line it starts is read after a line (an empty one, one line up).
        data, first_line = b"\n" + data, first_line - 1
    try:
        return _core.Treebank.from_bytes(data, name=name, multiple_roots=INPUT_ROOTS)
    except FormatError as e:
        line, sep, rest = str(e).removeprefix(f"{name}:").partition(":")
        if not (sep and line.isdigit()):
            raise
        raise FormatError(f"{name}:{int(line) + first_line - 1}:{rest}") from None


#: Input to parse or tag may have several roots: its HEAD is overwritten, and some tools
#: blank a file by setting every HEAD to 0 (heads out of range or in a cycle are refused).
INPUT_ROOTS = True


#: The columns a parser's templates can read: a streamed parse written through the
#: input's text reads only these (:meth:`_core.ConlluBatches.read_columns`). Not the
#: model's ``input_columns``: those are the ones it needs, which leave out a column its
#: templates read but that was blank in training, and reading that one as ``_`` could
#: change the parse.
PARSE_COLUMNS = ["FORM", "LEMMA", "UPOS", "XPOS", "FEATS"]


#: Sentences a streamed parse reads on while its model loads (a core would be idle): at
#: most this many more than the first batch, whole batches, at least one.
LOAD_AHEAD_SENTENCES = 20_000

#: `sink` is set while this thread parses a batch of a stream: its warnings are that
#: stream's notes (several streams may run at once, in threads of one process).
_PARSING = threading.local()


class _ConlluStream:
    """The batches of a CoNLL-U file, the first one read already, and their reader."""

    def __init__(self, first: Any, reader: _core.ConlluBatches, batch_size: int) -> None:
        self.reader, self._batch_size = reader, batch_size
        # Batches read ahead, oldest first (a deque: up to LOAD_AHEAD_SENTENCES of them
        # with batches of one sentence).
        self._head: collections.deque[Any] = collections.deque([] if first is None else [first])
        self._error: Exception | None = None

    def __iter__(self) -> _ConlluStream:
        return self

    def __next__(self) -> Any:
        if self._head:
            return self._head.popleft()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return next(self.reader)

    def read_while(self, going: Callable[[], bool]) -> None:
        """Reads batches ahead while `going()` (at most :data:`LOAD_AHEAD_SENTENCES`
        sentences); a reading error is raised when its batch's turn comes, as before."""
        for _ in range(max(1, LOAD_AHEAD_SENTENCES // self._batch_size)):
            if self._error is not None or not going():
                return
            try:
                tb = next(self.reader, None)
            except Exception as e:  # raised in its turn (after the batches before it)
                self._error = e
                return
            if tb is None:
                return
            self._head.append(tb)


@dataclass
class Parsed:
    """What parsing one file did."""

    input: str
    output: str | None
    sentences: int = 0
    words: int = 0
    notes: list[str] = field(default_factory=list)


class _Daemon:
    """One daemon thread running the calls submitted to it, in order, each giving a
    future (as a one-thread executor). A daemon: a read or write blocked on a pipe
    nobody reads or writes (stdin idle, stdout full) does not keep the process alive
    after Ctrl-C or SIGTERM, where an executor's thread is joined at exit."""

    def __init__(self, name: str) -> None:
        self._calls: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any) -> cf.Future[Any]:
        future: cf.Future[Any] = cf.Future()
        self._calls.put((future, fn, args))
        return future

    def _run(self) -> None:
        while (call := self._calls.get()) is not None:
            future, fn, args = call
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as e:  # the caller's to raise, at its turn
                future.set_exception(e)

    def shutdown(self, wait: bool) -> None:
        """Ends the thread once the calls before run (`wait`: waits for them); without
        `wait`, calls not yet started are cancelled."""
        if not wait:
            while True:
                try:
                    call = self._calls.get_nowait()
                except queue.Empty:
                    break
                if call is not None:
                    call[0].cancel()
        self._calls.put(None)
        if wait:
            self._thread.join()


class _Overlapped:
    """Reads the next batch and writes the previous one while batches are parsed:
    reading and writing CoNLL-U and parsing are Rust calls that release the GIL. With
    `threads` > 1, two batches are parsed at once, each on all the threads: the steps
    of a batch's parse that run on one thread (the vocabulary's hashes, the copy with
    the trees, the call itself) and the wait for its slowest sentences then overlap
    the other batch's parallel work instead of leaving cores idle. Memory stays
    bounded (two batches parsed, one read ahead, one being written); one
    reading and one writing thread: the output keeps its order."""

    def __init__(self, out: BinaryIO, on_batch: Callable[[int], None] | None, threads: int) -> None:
        self.at_once = 1 if threads == 1 else 2
        self._reader = _Daemon("depfs-read")
        self._writer = _Daemon("depfs-write")
        # One batch at a time parses on the calling thread: no pool.
        self._parser = (
            cf.ThreadPoolExecutor(self.at_once, thread_name_prefix="depfs-parse")
            if self.at_once > 1
            else None
        )
        self._written: cf.Future[None] | None = None
        self._out, self._on_batch = out, on_batch

    def read(self, batches: Any) -> Iterator[Any]:
        it = iter(batches)
        ahead = self._reader.submit(next, it, None)
        while True:
            tb = ahead.result()  # a reading error surfaces at its batch, as before
            if tb is None:
                return
            ahead = self._reader.submit(next, it, None)
            yield tb

    def parse(self, fn: Callable[..., Any], *args: Any) -> cf.Future[Any]:
        """`fn(*args)` on a parse thread; one batch at a time, on this thread (a serial
        loop's: no hand-over between threads per batch)."""
        if self._parser is not None:
            return self._parser.submit(fn, *args)
        done: cf.Future[Any] = cf.Future()
        try:
            done.set_result(fn(*args))
        except Exception as e:  # raised in its turn, as a parse thread's would be
            done.set_exception(e)
        return done

    def write(self, parsed: Any, text: Any = None) -> None:
        if self._written is not None:
            self._written.result()  # one batch behind at most
        self._written = self._writer.submit(self._write, parsed, text)

    def _write(self, parsed: Any, text: Any) -> None:
        self._out.write(parsed.to_bytes() if text is None else text.rewrite(parsed))
        if self._on_batch is not None:
            self._on_batch(parsed.n_words)

    def finish(self) -> None:
        if self._written is not None:
            self._written.result()
        self._out.flush()

    def close(self, interrupted: bool = False) -> None:
        # The batches parsed before an error are written, as a serial loop would have,
        # before the caller closes its output; a read or parse under way is abandoned.
        # After Ctrl-C or SIGTERM nothing is waited for: a write may be blocked for
        # good (a full pipe), and the output is dropped anyway.
        self._writer.shutdown(wait=not interrupted)
        if self._parser is not None:
            self._parser.shutdown(wait=False, cancel_futures=True)
        self._reader.shutdown(wait=False)


def parse_stream(
    model: Any,
    batches: Any,
    out: BinaryIO,
    *,
    threads: int = 1,
    allow_missing_tags: bool = False,
    scores: bool = False,
    knobs: Mapping[str, Any] | None = None,
    source: str = "<stdin>",
    tagger: Any = None,
    input_format: str = "conllu",
    on_batch: Callable[[int], None] | None = None,
    own_tags: bool | None = None,
    on_note: Callable[[str], None] | None = None,
    first_sentence: int = 0,
) -> Parsed:
    """Parses treebank `batches` with `model`, writing CoNLL-U bytes to `out`; with
    `tagger` (a :class:`depfs.Tagger`), each batch is tagged first. `knobs` are the
    model's parse-time keyword arguments (``margin``, ``dynfs``, ``threshold``,
    ``prune_margin``, ``tree_margin``, ``label_margin``), as given to its ``parse``; a None
    value is left out, so the model's own default holds (the same for every function here that
    takes `knobs`). A parser with a tagger
    inside (``tagger_``) tags the input first when its first batch leaves the parser's
    tag columns empty (`own_tags`: when the caller has decided it already, for a chunk
    of a file). Every batch's columns are checked (:func:`depfs.base.check_columns`;
    the first batch holds at least :data:`CHECK_SENTENCES` sentences; a message counts
    `first_sentence` sentences before them, those of a file's earlier chunks).
    `input_format` other than ``conllu`` (text with words only) changes what the
    refusal of untagged input says. `on_batch` sees the words of
    each batch once written (a progress bar). A batch may come with its input text (a
    pair, see :func:`input_batches`): when only HEAD and DEPREL change (no tagger, no
    margins in MISC), its parse is then written by copying the input around those two
    fields: the same bytes as ``to_bytes`` for less than half its CPU. A warning of the
    model's parse (long sentences parsed in chunks) goes to `on_note` as it is raised,
    before the work it announces (else into the notes returned). With `threads` > 1
    (0: one per core), two batches are parsed at once, each on that many threads, as
    :class:`_Overlapped` says: the output is the same bytes."""
    from .base import check_columns, check_threads, tagged_note
    from .errors import MissingColumnsError

    done = Parsed(source, None)
    own = getattr(model, "tagger_", None)
    kw = {k: v for k, v in (knobs or {}).items() if v is not None}
    if scores:
        kw["scores"] = True
    if own is not None:
        kw["tag"] = False  # decided below, once per input
    workers = check_threads(threads) or os.cpu_count() or 1

    def work(tb: Any, threads: int, tagger: Any, first_sentence: int) -> Any:
        """One batch tagged (with `tagger`), its columns checked (`first_sentence`: the
        input's sentences before it, for the message) and parsed."""
        _PARSING.sink = on_note or done.notes.append
        try:
            if tagger is not None:
                tb = tagger.tag(tb, threads)
            if not allow_missing_tags:
                check_columns(model.model_, tb, False, tagger, first_sentence)
            return model.parse(tb, threads=threads, allow_missing_tags=True, **kw)
        finally:
            _PARSING.sink = None

    def written(batch: tuple[cf.Future[Any], Any]) -> None:
        """The oldest batch's parse, once done, handed to the writer."""
        future, text = batch
        try:
            parsed = future.result()
        except MissingColumnsError as e:
            if input_format != "conllu" and tagger is None:
                raise MissingColumnsError(_words_only(source, input_format, model)) from None
            raise MissingColumnsError(f"{source}: {e}") from None
        done.sentences += len(parsed)
        done.words += parsed.n_words
        io_.write(parsed, None if tagger is not None or scores else text)

    io_ = _Overlapped(out, on_batch, workers)
    read = first_sentence  # sentences read
    parsing: collections.deque[tuple[cf.Future[Any], Any]] = collections.deque()
    interrupted = False
    try:
        with _parse_notes():
            reading = enumerate(io_.read(batches))
            while True:
                try:
                    i, item = next(reading)
                except StopIteration:
                    break
                except Exception:  # a reading error: the batches before it are written first
                    while parsing:
                        written(parsing.popleft())
                    raise
                tb, text = item if isinstance(item, tuple) else (item, None)
                if i == 0 and tagger is None and own is not None:
                    if own_tags is None and model.tagger_needed(tb):
                        done.notes.append(tagged_note(own))
                        tagger = own
                    elif own_tags:
                        tagger = own
                # Every batch's columns are checked: a file may be tagged in part.
                parsing.append((io_.parse(work, tb, workers, tagger, read), text))
                read += len(tb)
                if len(parsing) >= io_.at_once:
                    written(parsing.popleft())
            while parsing:
                written(parsing.popleft())
            if read == first_sentence:  # as a CoNLL-U file's reader says, for stdin and text too
                from .errors import FormatError

                raise FormatError(f"{source}: empty input: no sentence found")
            io_.finish()
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        io_.close(interrupted)
    return done


#: Streams running in this process, and what warnings did before the first one began.
_NOTES_LOCK = threading.Lock()
_NOTES_STATE: dict[str, Any] = {"streams": 0}


@contextlib.contextmanager
def _parse_notes() -> Iterator[None]:
    """While a stream runs, a warning raised while one of its batches is parsed (long
    sentences parsed in chunks, ...) goes to that stream's sink (``_PARSING.sink``),
    each time; those of other threads and times (the reader's name their own file and
    line) go where they went before. Warnings are process-wide: the first stream to
    begin routes them, the last to end puts back what was there (streams in threads of
    one process may end in any order)."""
    with _NOTES_LOCK:
        if _NOTES_STATE["streams"] == 0:
            _NOTES_STATE["saved"] = (warnings.showwarning, warnings.filters[:])
            before = warnings.showwarning

            def show(message: Any, category: Any, filename: str, lineno: int, *rest: Any) -> None:
                sink = getattr(_PARSING, "sink", None)
                if sink is not None:
                    sink(str(message))
                else:
                    before(message, category, filename, lineno, *rest)

            warnings.simplefilter("always")
            warnings.showwarning = show
        _NOTES_STATE["streams"] += 1
    try:
        yield
    finally:
        with _NOTES_LOCK:
            _NOTES_STATE["streams"] -= 1
            if _NOTES_STATE["streams"] == 0:
                warnings.showwarning, filters = _NOTES_STATE.pop("saved")
                warnings.filters[:] = filters
                # (as catch_warnings does: the filters' cached verdicts are stale)
                getattr(warnings, "_filters_mutated", lambda: None)()


def _words_only(source: str, input_format: str, model: Any) -> str:
    """Why text with words only is refused by a model that reads tags, and the ways out."""
    columns = ", ".join(c for c in model._model().input_columns if c != "FORM")
    what = input_format if input_format.endswith("text") else f"{input_format} text"
    return (
        f"{source}: {what} gives words only, and the model reads {columns} too: "
        "a parse would be silently bad. Tag it first (depfs parse --tagger TAGGER, or a "
        "parser trained with depfs train --tagger), or parse it anyway "
        "(--allow-missing-tags)"
    )


def parse_file(
    model_path: str,
    input_path: str,
    output_path: str | None,
    *,
    threads: int = 1,
    batch_size: int = 5000,
    allow_missing_tags: bool = False,
    scores: bool = False,
    knobs: Mapping[str, Any] | None = None,
    out: BinaryIO | None = None,
    tagger_path: str | None = None,
    tag_only: bool = False,
    input_format: str | None = "conllu",
    tokenizer: str | None = None,
    on_batch: Callable[[int], None] | None = None,
    on_note: Callable[[str], None] | None = None,
    stamps: Mapping[str, Any] | None = None,
) -> Parsed:
    """Parses `input_path` (gzipped or not) with the model at `model_path` into
    `output_path` (gzip when it ends in .gz; written atomically), or into the binary
    stream `out`; with `tagger_path`, each batch is first tagged by that tagger. With
    `tag_only`, only tags, with the tagger at `model_path` (a parser's own included).
    `input_format`, `tokenizer`: as :func:`input_batches` (a format detected that is
    not CoNLL-U is said in the notes); `on_batch`, `on_note`: as :func:`parse_stream`;
    `stamps`: the model files as the command began (:func:`_model`)."""
    # The model loads (without the GIL) while the first batch is read: neither waits
    # for the other at start-up. A bad model is reported before a bad input, as when
    # the two were serial.
    keep_text = not tag_only and tagger_path is None and not scores
    with cf.ThreadPoolExecutor(1) as pool:
        loading = pool.submit(_tagger if tag_only else _model, model_path, stamps)
        try:
            batches, fmt = input_batches(
                input_path,
                input_format,
                tokenizer=tokenizer,
                batch_size=batch_size,
                keep_text=keep_text,
            )
        except Exception:  # (an interruption is not held up by the model's error)
            loading.result()
            raise
        if isinstance(batches, _ConlluStream):
            batches.read_while(lambda: not loading.done())
        model = loading.result()
    if not tag_only and getattr(model, "kind", None) == "tagger":
        from .errors import ModelError

        raise ModelError(f"{model_path}: a tagger, not a parser (tag with tag_only=True)")
    # Written through the input's text (only HEAD and DEPREL change: no tagger, not even
    # the parser's own), the later batches need only what the parse reads.
    if keep_text and isinstance(batches, _ConlluStream) and getattr(model, "tagger_", None) is None:
        batches.reader.read_columns(PARSE_COLUMNS)
    tagger = None if tagger_path is None else _tagger(tagger_path, stamps)
    with contextlib.ExitStack() as stack:
        sink: Any = out
        if sink is None:
            if output_path is None:
                raise ValueError("parse_file needs an output path or a stream")
            sink = stack.enter_context(_output_stream(output_path))
        done = parse_stream(
            model,
            batches,
            sink,
            threads=threads,
            allow_missing_tags=allow_missing_tags,
            scores=scores,
            knobs=knobs,
            source=input_path,
            tagger=tagger,
            input_format=fmt,
            on_batch=on_batch,
            on_note=on_note,
        )
    if input_format is None and fmt in FORMAT_NAMES:
        done.notes.insert(0, f"{input_path}: {detected_note(fmt)}")
    done.output = output_path
    return done


@dataclass(frozen=True)
class Chunk:
    """Whole sentences of a CoNLL-U file: bytes `start` to `end`, the first of them on
    line `first_line` and the file's sentence `before` + 1; chunk `index` 0 is the
    file's first `sentences` sentences."""

    index: int
    start: int
    end: int
    first_line: int
    sentences: int
    before: int = 0


def conllu_chunks(path: str, sentences: int) -> list[Chunk]:
    """A plain CoNLL-U file cut into chunks of `sentences` whole sentences (the last one
    takes the rest), as the reader splits sentences: a line that is empty once its line
    end (LF or CRLF) is stripped ends a sentence; a chunk starts at the first line of a
    sentence, its comments included, and ends after the blank lines that follow the
    last one (:func:`sentence_groups`). A file of at most `sentences` sentences is one
    chunk."""
    chunks: list[Chunk] = []
    start = before = 0
    with open(path, "rb") as f:
        for _, nbytes, first_line, count in sentence_groups(f, sentences, sentences, keep=False):
            chunks.append(Chunk(len(chunks), start, start + nbytes, first_line, count, before))
            start += nbytes
            before += count
    return chunks or [Chunk(0, 0, 0, 1, 0)]


def parse_chunk(
    model_path: str,
    input_path: str,
    chunk: Chunk,
    *,
    batch_size: int = 5000,
    allow_missing_tags: bool = False,
    scores: bool = False,
    knobs: Mapping[str, Any] | None = None,
    tagger_path: str | None = None,
    stamps: Mapping[str, Any] | None = None,
) -> tuple[Parsed, bytes]:
    """Parses one chunk of a CoNLL-U file (:func:`conllu_chunks`) on one thread: what
    it did and the output bytes, those of its sentences in a whole-file parse. Chunk 0
    is read as the whole file's start (the same first batch: the columns are checked
    and a tagger inside decided on it); a later chunk is read from its bytes, its
    errors named by their line in the file, and tagged by a tagger inside when the
    file's first batch says so."""

    model = _model(model_path, stamps)
    tagger = None if tagger_path is None else _tagger(tagger_path, stamps)
    out = io.BytesIO()
    kw: dict[str, Any] = dict(knobs=knobs, source=input_path, scores=scores)
    if chunk.index == 0:
        batches = _first_sentences(input_path, chunk.sentences, batch_size)
        done = parse_stream(
            model, batches, out, allow_missing_tags=allow_missing_tags, tagger=tagger, **kw
        )
        _check_cut(input_path, chunk, done.sentences)
        return done, out.getvalue()
    own_tags = None
    if tagger is None and getattr(model, "tagger_", None) is not None:
        own_tags = model.tagger_needed(next(_first_sentences(input_path, 1, batch_size)))
    with open(input_path, "rb") as f:
        f.seek(chunk.start)
        data = f.read(chunk.end - chunk.start)
    tb = _from_bytes_at(data, input_path, chunk.first_line)
    _check_cut(input_path, chunk, len(tb))
    done = parse_stream(
        model,
        _file_batches(tb, chunk.before, batch_size),
        out,
        allow_missing_tags=allow_missing_tags,
        tagger=tagger,
        own_tags=own_tags,
        first_sentence=chunk.before,
        **kw,
    )
    return done, out.getvalue()


def _check_cut(path: str, chunk: Chunk, read: int) -> None:
    """A chunk holds the sentences it was cut with: else the cut and the reader split the
    file differently, and sentences would be lost or parsed twice."""
    if read != chunk.sentences:
        raise RuntimeError(
            f"{path}: chunk {chunk.index} (line {chunk.first_line} on) was cut with "
            f"{chunk.sentences} sentences, and {read} were read"
        )


def _file_batches(tb: Any, before: int, batch_size: int) -> Iterator[Any]:
    """`tb`, the file's sentences `before` + 1 on, cut where a whole-file read cuts its
    batches (the first one :data:`CHECK_SENTENCES` or `batch_size` sentences, then
    `batch_size` each): every batch's columns are checked as a local parse checks them."""
    first = max(batch_size, CHECK_SENTENCES)
    # The first cut after sentence `before`: O(1), then one slice per batch.
    cut = first if before < first else first + ((before - first) // batch_size + 1) * batch_size
    at, end = before, before + len(tb)
    while at < end:
        stop = min(cut, end)
        yield tb[at - before : stop - before]
        at, cut = stop, cut + batch_size


def _first_sentences(path: str, sentences: int, batch_size: int) -> Iterator[_core.Treebank]:
    """The batches of a CoNLL-U file's first `sentences` sentences (at least its first
    batch), read as :func:`input_batches` reads the whole file."""
    reader = _core.ConlluBatches(path, sentences=batch_size, multiple_roots=INPUT_ROOTS)
    size, left = max(batch_size, CHECK_SENTENCES), sentences
    while left > 0:
        tb = reader.next_batch(size)
        if tb is None:
            return
        yield tb
        left -= len(tb)
        size = min(batch_size, left)


@contextlib.contextmanager
def _output_stream(path: str) -> Iterator[BinaryIO]:
    """The stream of an output file, written atomically (gzip when it ends in .gz)."""
    from .files import atomic_stream

    with atomic_stream(path) as f:
        if path.endswith(".gz"):
            with gzip.GzipFile(fileobj=f, mode="wb", mtime=0) as gz:
                blocks = _InBlocks(gz)
                yield blocks  # type: ignore[misc]
                blocks.close()
        else:
            yield f


class _InBlocks:
    """Hands `out` (a gzip stream) the bytes written in whole blocks, the rest at
    `close`, and never flushes it: the compressor sees the same calls, and writes the
    same bytes, however the text was cut (batches, chunks)."""

    SIZE = 1 << 16

    def __init__(self, out: BinaryIO) -> None:
        self.out, self.buf = out, bytearray()

    def write(self, data: bytes) -> int:
        self.buf += data
        whole = len(self.buf) - len(self.buf) % self.SIZE
        for i in range(0, whole, self.SIZE):
            self.out.write(self.buf[i : i + self.SIZE])
        del self.buf[:whole]
        return len(data)

    def flush(self) -> None:
        """Nothing: a gzip flush would change the compressed bytes."""

    def close(self) -> None:
        self.out.write(self.buf)
        self.buf.clear()


def _chunks(
    path: str, input_format: str | None, tokenizer: str | None, sentences: int
) -> list[Chunk]:
    """The chunks of an input (:func:`conllu_chunks`) when it is a plain CoNLL-U file
    that may hold more than `sentences` sentences; else none (parsed whole)."""
    if is_stream(path) or tokenizer is not None or (input_format or detect_input(path)) != "conllu":
        return []
    with open(path, "rb") as f:
        if f.read(2) == b"\x1f\x8b":  # gzip: no byte offsets to cut at
            return []
    # A sentence takes at least 21 bytes (10 columns, 9 tabs, 2 line ends).
    if os.path.getsize(path) < 21 * sentences:
        return []
    return conllu_chunks(path, sentences)


def parse_files(
    model_path: str,
    pairs: Sequence[tuple[str, str]],
    executor: cf.Executor,
    *,
    batch_size: int = 5000,
    allow_missing_tags: bool = False,
    scores: bool = False,
    knobs: Mapping[str, Any] | None = None,
    on_done: Callable[[Parsed], None] | None = None,
    on_words: Callable[[int], None] | None = None,
    tagger_path: str | None = None,
    input_format: str | None = "conllu",
    tokenizer: str | None = None,
    chunk_sentences: int = CHUNK_SENTENCES,
) -> list[Parsed]:
    """Parses every (input, output) pair on `executor` (one thread per task: the
    executor's workers are the parallelism; they open the model and the files, so a
    cluster whose workers run in other folders needs absolute paths), reported in
    completion order (`on_done` per file, `on_words` per file or chunk parsed: a
    progress bar); with `tagger_path`,
    tagged first (each worker loads the tagger once too); `scores`: each word's margin in
    MISC, as :func:`parse_stream`. A plain (not gzipped) CoNLL-U
    file of more than `chunk_sentences` sentences (at least its first batch,
    :data:`CHECK_SENTENCES` or `batch_size`) is parsed in chunks, written here in order."""
    task_kw: dict[str, Any] = dict(
        batch_size=batch_size,
        allow_missing_tags=allow_missing_tags,
        scores=scores,
        knobs=knobs,
        tagger_path=tagger_path,
        # One model for every file and chunk: a file replaced meanwhile is refused.
        stamps=model_stamps(model_path, tagger_path),
    )
    size = max(chunk_sentences, batch_size, CHECK_SENTENCES)
    files: dict[cf.Future, str] = {}
    chunked: list[_Chunked] = []
    results: list[Parsed] = []
    with contextlib.ExitStack() as outputs:  # on an error, chunked outputs are dropped
        try:
            for inp, out in pairs:
                chunks = _chunks(inp, input_format, tokenizer, size)
                if len(chunks) > 1:
                    c = _Chunked(model_path, inp, out, chunks, executor, task_kw)
                    outputs.enter_context(c.stack)
                    chunked.append(c)
                    continue
                fut = executor.submit(
                    parse_file,
                    model_path,
                    inp,
                    out,
                    threads=1,
                    input_format=input_format,
                    tokenizer=tokenizer,
                    **task_kw,
                )
                files[fut] = inp
            for c in chunked:
                c.submit_more()
            while files or any(c.running for c in chunked):
                waiting = [f for f in [*files, *_running(chunked)] if not f.done()]
                if waiting:
                    cf.wait(waiting, return_when=cf.FIRST_COMPLETED)
                finished = []
                for fut in [f for f in files if f.done()]:
                    del files[fut]
                    finished.append(fut.result())
                    if on_words is not None:
                        on_words(finished[-1].words)
                for c in chunked:
                    finished += c.write_finished(on_words)
                for r in finished:
                    results.append(r)
                    if on_done is not None:
                        on_done(r)
        finally:
            for fut in [*files, *_running(chunked)]:
                fut.cancel()
    for _, out in pairs:
        remove_leftovers(out)
    return results


def _running(chunked: list[_Chunked]) -> list[cf.Future]:
    return [f for c in chunked for f in c.running]


class _Chunked:
    """A file parsed in chunks: at most :data:`CHUNKS_IN_FLIGHT` chunks submitted at a
    time, their outputs written in order into the output file, which appears once the
    last one is written (`stack` closed); dropped if `stack` ends with an error."""

    def __init__(
        self,
        model_path: str,
        inp: str,
        output: str,
        chunks: list[Chunk],
        executor: cf.Executor,
        task_kw: dict[str, Any],
    ) -> None:
        self.model_path, self.input, self.executor = model_path, inp, executor
        self.task_kw = task_kw  # parse_chunk's keyword arguments
        self.todo = list(reversed(chunks))
        self.running: list[cf.Future] = []
        self.stack = contextlib.ExitStack()
        self.stream = self.stack.enter_context(_output_stream(output))
        self.done = Parsed(inp, output)

    def submit_more(self) -> None:
        while self.todo and len(self.running) < CHUNKS_IN_FLIGHT:
            args = (self.model_path, self.input, self.todo.pop())
            self.running.append(self.executor.submit(parse_chunk, *args, **self.task_kw))

    def write_finished(self, on_words: Callable[[int], None] | None) -> list[Parsed]:
        """Writes the chunks finished in order from the first; returns the file's result
        once its last chunk is written and the output complete, else nothing."""
        if not self.running:
            return []
        while self.running and self.running[0].done():
            part, data = self.running.pop(0).result()
            self.stream.write(data)
            self.done.sentences += part.sentences
            self.done.words += part.words
            self.done.notes += [n for n in part.notes if n not in self.done.notes]
            if on_words is not None:
                on_words(part.words)
        self.submit_more()
        if self.running:
            return []
        self.stack.close()
        return [self.done]


def remove_leftovers(output: str) -> None:
    """Removes the temporary files that writes of `output` left behind when their process
    was killed (a lost Dask worker: its file was parsed again elsewhere). Call it only
    once `output` is complete and nothing else writes it."""
    from .files import temporary_pattern

    folder = os.path.dirname(os.path.realpath(output))
    for path in glob.glob(os.path.join(glob.escape(folder), temporary_pattern(output))):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)


def count_words(
    path: str, input_format: str | None = "conllu", tokenizer: str | None = None
) -> int:
    """The words of an input file, read as :func:`parse_file` reads it (the length of a
    progress bar over words)."""
    batches, _ = input_batches(path, input_format, tokenizer=tokenizer)
    return sum(tb.n_words for tb in batches)
