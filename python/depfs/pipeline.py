"""Parsing files: the one path behind `depfs parse`, on this machine or on Dask workers.

:func:`parse_file` streams one CoNLL-U file through a model: it reads, parses and
writes a batch of sentences at a time (the output is the same bytes as a whole-file
parse; memory stays bounded on any corpus), and the output appears only once complete.
Workers keep each model they load (one load per worker and model file), so a list of
files can be spread over a `concurrent.futures.Executor` — a Dask cluster's included —
with :func:`parse_files`; a file is the unit of work, so a lost worker's files are
simply parsed again.

Tag-then-parse: with a tagger (``tagger_path``, or a tagger inside the parser's model
file), each batch is tagged, then parsed. A tagger given explicitly tags every input,
overwriting the columns it predicts; a parser's own tagger tags only input that leaves
the parser's tag columns empty (decided on the first batch, said in the notes).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import gzip
import itertools
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from . import _core

#: Sentences of a streamed input on which its columns are checked: one short sentence
#: may lack FEATS, a thousand tell whether the input was tagged.
CHECK_SENTENCES = 1000

_MODELS: dict[tuple[str, float], Any] = {}


def _model(path: str) -> Any:
    """The model at `path`, loaded once per process (and again if the file changes)."""
    from .models import load

    key = (os.path.abspath(path), os.path.getmtime(path))
    if key not in _MODELS:
        _MODELS[key] = load(path)
    return _MODELS[key]


def _tagger(path: str) -> Any:
    """The tagger at `path` (loaded once per process): a tagger model file, or a parser's
    with a tagger inside; another model is refused."""
    from ._core import model_kind
    from .errors import ModelError

    kind = model_kind(path)
    if kind == "tagger":
        return _model(path)
    inside = getattr(_model(path), "tagger_", None)
    if inside is None:
        raise ModelError(
            f"{path}: not a tagger model (it holds a model of kind {kind!r} with no tagger inside)"
        )
    return inside


@dataclass
class Parsed:
    """What parsing one file did."""

    input: str
    output: str | None
    sentences: int = 0
    words: int = 0
    notes: list[str] = field(default_factory=list)


def parse_stream(
    model: Any,
    batches: Any,
    out: BinaryIO,
    *,
    threads: int = 1,
    allow_missing_tags: bool = False,
    scores: bool = False,
    margin: float | str | None = None,
    dynfs: bool | None = None,
    threshold: float | None = None,
    source: str = "<stdin>",
    tagger: Any = None,
) -> Parsed:
    """Parses treebank `batches` with `model`, writing CoNLL-U bytes to `out`; with
    `tagger` (a :class:`depfs.Tagger`), each batch is tagged first. A parser with a tagger
    inside (``tagger_``) tags the input first when its first batch leaves the parser's
    tag columns empty. The input's columns are checked on the first batch only (see
    :data:`CHECK_SENTENCES`)."""
    from .base import check_columns, tagged_note
    from .errors import MissingColumnsError

    done = Parsed(source, None)
    own = getattr(model, "tagger_", None)
    for i, tb in enumerate(batches):
        if i == 0 and tagger is None and own is not None and model.tagger_needed(tb):
            tagger = own
            done.notes.append(tagged_note(own))
        try:
            if tagger is not None:
                tb = tagger.tag(tb, threads)
                if not allow_missing_tags:
                    check_columns(model.model_, tb, False, tagger)
            with warnings.catch_warnings(record=True) as notes:
                warnings.simplefilter("always")
                kw: dict[str, Any] = {"scores": True} if scores else {}
                if margin is not None:
                    kw["margin"] = margin
                if dynfs is not None:
                    kw["dynfs"] = dynfs
                if threshold is not None:
                    kw["threshold"] = threshold
                if own is not None:
                    kw["tag"] = False  # decided above, once per input
                parsed = model.parse(
                    tb, threads=threads, allow_missing_tags=allow_missing_tags, **kw
                )
        except MissingColumnsError as e:
            raise MissingColumnsError(f"{source}: {e}") from None
        allow_missing_tags = True
        done.notes += [str(n.message) for n in notes]
        done.sentences += len(parsed)
        done.words += parsed.n_words
        out.write(parsed.to_string().encode("utf-8"))
    out.flush()
    return done


def parse_file(
    model_path: str,
    input_path: str,
    output_path: str | None,
    *,
    threads: int = 1,
    batch_size: int = 5000,
    allow_missing_tags: bool = False,
    scores: bool = False,
    margin: float | str | None = None,
    dynfs: bool | None = None,
    threshold: float | None = None,
    out: BinaryIO | None = None,
    tagger_path: str | None = None,
    tag_only: bool = False,
) -> Parsed:
    """Parses `input_path` (CoNLL-U, gzipped or not) with the model at `model_path` into
    `output_path` (gzip when it ends in .gz; written atomically), or into the binary
    stream `out`; with `tagger_path`, each batch is first tagged by that tagger. With
    `tag_only`, only tags, with the tagger at `model_path` (a parser's own included)."""
    from .files import atomic_stream

    model = _tagger(model_path) if tag_only else _model(model_path)
    tagger = None if tagger_path is None else _tagger(tagger_path)
    reader = _core.ConlluBatches(input_path, sentences=batch_size)
    first = reader.next_batch(max(batch_size, CHECK_SENTENCES))
    batches = itertools.chain([first] if first is not None else [], reader)
    with contextlib.ExitStack() as stack:
        sink: Any = out
        if sink is None:
            if output_path is None:
                raise ValueError("parse_file needs an output path or a stream")
            sink = stack.enter_context(atomic_stream(output_path))
            if output_path.endswith(".gz"):
                sink = stack.enter_context(gzip.GzipFile(fileobj=sink, mode="wb", mtime=0))
        done = parse_stream(
            model,
            batches,
            sink,
            threads=threads,
            allow_missing_tags=allow_missing_tags,
            scores=scores,
            margin=margin,
            dynfs=dynfs,
            threshold=threshold,
            source=input_path,
            tagger=tagger,
        )
    done.output = output_path
    return done


def parse_files(
    model_path: str,
    pairs: Sequence[tuple[str, str]],
    executor: cf.Executor,
    *,
    batch_size: int = 5000,
    allow_missing_tags: bool = False,
    margin: float | str | None = None,
    dynfs: bool | None = None,
    threshold: float | None = None,
    on_done: Callable[[Parsed], None] | None = None,
    tagger_path: str | None = None,
) -> list[Parsed]:
    """Parses every (input, output) pair on `executor` (one thread per task: the
    executor's workers are the parallelism), in completion order; with `tagger_path`,
    tagged first (each worker loads the tagger once too)."""
    futures = [
        executor.submit(
            parse_file,
            model_path,
            inp,
            out,
            threads=1,
            batch_size=batch_size,
            allow_missing_tags=allow_missing_tags,
            margin=margin,
            dynfs=dynfs,
            threshold=threshold,
            tagger_path=tagger_path,
        )
        for inp, out in pairs
    ]
    results = []
    for fut in cf.as_completed(futures):
        r = fut.result()
        results.append(r)
        if on_done is not None:
            on_done(r)
    return results
