"""The selection engine: candidate template sets trained and scored on dev, in parallel.

A :class:`Candidate` is a parser family, a template list and training options;
:func:`evaluate_candidate` trains it on train (optionally only sentences of at most
``max_length`` words, as Bawden & Crabbé 2016 pre-rank) and scores dev with the one
scorer (:func:`depfs.evaluate`). It runs in a worker process: each worker reads a
treebank once and keeps it (tasks carry paths, never treebanks), and arc-eager
candidates share one prepared :class:`depfs.arceager.TrainingSet` per worker, so a
candidate pays only for its own templates.

:class:`Engine` evaluates batches on any :class:`concurrent.futures.Executor` (a local
process pool by default, or a Dask cluster's executor), appends every result to a JSONL
log as one complete line, never evaluates a logged candidate again (a rerun resumes),
and retries a candidate whose worker died.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import json
import logging
import math
import multiprocessing
import multiprocessing.forkserver
import os
import time
import warnings
from collections.abc import Iterable, Iterator
from concurrent.futures.process import BrokenProcessPool
from dataclasses import MISSING, asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..templates import Template, TemplateSet

PARSERS = ("arc-eager", "graph", "tagger")
METRICS = ("las", "uas", "accuracy", "upos")
#: The metrics of each family (the first is its default).
PARSER_METRICS = {
    "arc-eager": ("las", "uas"),
    "graph": ("uas", "las"),
    "tagger": ("accuracy", "upos"),
}
#: The template family each parser reads.
FAMILY = {"arc-eager": "config", "graph": "arc", "tagger": "token"}


@contextlib.contextmanager
def children_deaf_to_ctrl_c() -> Iterator[None]:
    """Processes started inside are born ignoring SIGINT. A terminal's Ctrl-C goes to its
    whole foreground group, and a pool's worker interrupted mid-import or mid-task printed
    tracebacks, or a Rust panic (numpy's capsule import cut short); this process takes
    the interrupt and stops its workers. Only an ignored signal stays so across exec (a
    blocked one does not: multiprocessing's spawn clears the mask), and Python keeps it
    ignored. A Ctrl-C in that moment (a pool's fork and exec, milliseconds) is lost.
    Only in the main thread (where Python sets handlers); elsewhere as before."""
    import signal
    import threading

    handler = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or handler is None:
        yield
        return
    try:  # (set inside: a Ctrl-C taken right after it still restores the handler)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        yield
    finally:
        signal.signal(signal.SIGINT, handler)


def dask_setup(worker: Any) -> None:
    """Dask's preload hook (``preload=["depfs.select.engine"]``): a LocalCluster's worker
    ignores SIGINT once started, for the reason of :func:`children_deaf_to_ctrl_c` (a
    Ctrl-C printed each worker's `KeyboardInterrupt` traceback); `close_dask` stops it."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _exit_with_parent(parent: int) -> None:
    """Pool-worker initializer: a watcher thread ends this worker once its parent is gone.

    A parent killed outright (SIGKILL, or SIGTERM without a handler) runs no cleanup, and its
    pool's workers would otherwise live on as orphans, waiting on the task queue or finishing
    a training nobody reads."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="depfs-exit-with-parent", daemon=True).start()


@dataclass(frozen=True)
class Candidate:
    """A template set to train and score: ``templates`` in set order; ``base`` templates
    are always present: for arc-eager they come first in the same set, for the graph
    parser of order 2 they are the arc (first-order) templates and ``templates`` the
    sibling ones."""

    parser: str
    templates: tuple[Template, ...]
    base: tuple[Template, ...] = ()
    epochs: int = 1
    max_length: int | None = None
    order: int = 1
    decoder: str = "eisner"
    seed: int = 1

    def __post_init__(self) -> None:
        if self.parser not in PARSERS:
            raise ValueError(f"unknown parser {self.parser!r} (arc-eager, graph or tagger)")

    def key(self) -> str:
        """Canonical identity: what was trained, on which options (not where or when)."""
        d = self.options()
        d["templates"] = [t.id for t in self.templates]
        d["base"] = [t.id for t in self.base]
        return json.dumps(d, sort_keys=True, separators=(",", ":"))

    def options(self) -> dict[str, Any]:
        """Everything but the templates."""
        return {
            "parser": self.parser,
            "epochs": self.epochs,
            "max_length": self.max_length,
            "order": self.order,
            "decoder": self.decoder,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class Result:
    """One evaluated candidate, as logged."""

    key: str
    dev_uas: float | None
    """A parser's dev scores (None for a tagger)."""
    dev_las: float | None
    evaluations_per_word: float
    cpu_seconds: float
    seed: int
    start: float
    end: float
    dev_accuracy: float | None = None
    """A tagger's dev scores: the mean accuracy of the columns it predicts, and UPOS."""
    dev_upos: float | None = None

    def score(self, metric: str) -> float:
        s = getattr(self, f"dev_{metric}", None) if metric in METRICS else None
        if s is None:
            raise ValueError(f"this result has no {metric!r} score")
        return float(s)


# ---------------------------------------------------------------------------------------
# Worker side: treebanks read once per process.

#: Keyed by path and, in a search, by the data's fingerprint: a worker that serves
#: several searches (a remote Dask cluster) reads a changed file again, where it scored
#: a new search on the old data kept here, under the new data's name.
_CACHE: dict[tuple[Any, ...], Any] = {}


def _treebank(
    path: str, max_length: int | None, data: str | None = None, *, tags_only: bool = False
) -> Any:
    """`path` read once per process (sentences of at most `max_length` words). With
    `tags_only` (a tagger's data) the trees are not read for anything, so several roots
    are no reason to refuse the file, as `depfs train --parser tagger` reads it."""
    key = ("treebank", path, max_length, data, tags_only)
    if key not in _CACHE:
        from ..treebank import read_conllu

        tb = read_conllu(path, multiple_roots=tags_only)
        if max_length is not None:
            keep = [s.index for s in tb if len(s) <= max_length]
            if not keep:
                shortest = min((len(s) for s in tb), default=0)
                raise ValueError(
                    f"{path}: max length {max_length} leaves no sentence (the shortest has "
                    f"{shortest} words)"
                )
            tb = tb.select(keep)
        _CACHE[key] = tb
    return _CACHE[key]


def _training_set(path: str, max_length: int | None, data: str | None = None) -> Any:
    key = ("training_set", path, max_length, data)
    if key not in _CACHE:
        from ..arceager import TrainingSet

        _CACHE[key] = TrainingSet(_treebank(path, max_length, data))
    return _CACHE[key]


def _same_data(path: str, expected: str | None) -> None:
    """Once per worker process and file: refuses a file that is no longer the data the
    search's log is bound to (`expected`, :func:`data_fingerprint`). A worker reads the
    files itself; one started after the file changed (a pool restarted after a worker
    died, a Dask worker restarted) scored its candidates on other data, logged under the
    old data's name, and a resume reused them. O(bytes), once."""
    if expected is None or ("checked", path, expected) in _CACHE:
        return
    now = data_fingerprint(path)
    if now != expected:
        raise ValueError(
            f"{path} changed during the search (its log's data: {expected}; now {now}): "
            "put it back and rerun to resume, or search the new data with another --log"
        )
    _CACHE[("checked", path, expected)] = True


def evaluate_candidate(
    cand: Candidate, train: str, dev: str, data: dict[str, str] | None = None
) -> Result:
    """Trains `cand` on `train` and scores `dev`. Deterministic for a candidate. With
    `data` (the log's ``{"train": ..., "dev": ...}`` fingerprints), the files are first
    checked to be that data.

    Template evaluations per word: for the graph parser, the arc-template
    evaluations of scoring dev with the length dictionary (sibling templates for
    order 2 count one per scored sibling part); for arc-eager, templates times the
    parser's decisions on dev, per word; for the tagger, templates times its column
    decisions with more than one candidate, per word."""
    from .. import evaluate
    from ..arceager import ArcEagerParser
    from ..graph import GraphParser

    start, cpu0 = time.time(), time.process_time()
    train_data, dev_data = (data or {}).get("train"), (data or {}).get("dev")
    _same_data(train, train_data)
    _same_data(dev, dev_data)
    tagger = cand.parser == "tagger"
    dev_tb = _treebank(dev, None, dev_data, tags_only=tagger)

    def text(ts: tuple[Template, ...]) -> str:
        return TemplateSet(ts, ts[0].family if ts else None).text  # keeps a max_atoms line

    full = text(cand.base + cand.templates)
    if tagger:
        from ..dynamic.strubell2015 import TAG_SCORES
        from ..tagger import Tagger

        tg = Tagger(full, epochs=cand.epochs, random_state=cand.seed)
        tg.fit(_treebank(train, cand.max_length, train_data, tags_only=True))
        # Every template (margin inf), counted; the tags alone scored (a tagger's dev
        # set may leave HEAD blank).
        tagged, counts = tg.model_.tag_counted(dev_tb, float("inf"), 1)
        s = evaluate(dev_tb, tagged, tags_only=True)
        columns = [getattr(s, TAG_SCORES[c]) for c in counts]
        return Result(
            key=cand.key(),
            dev_uas=None,
            dev_las=None,
            evaluations_per_word=sum(u for u, _ in counts.values()) / max(dev_tb.n_words, 1),
            cpu_seconds=time.process_time() - cpu0,
            seed=cand.seed,
            start=start,
            end=time.time(),
            dev_accuracy=sum(columns) / max(len(columns), 1),
            dev_upos=s.upos,
        )
    if cand.parser == "arc-eager":
        model: Any = ArcEagerParser(full, epochs=cand.epochs, random_state=cand.seed)
        model.fit(_training_set(train, cand.max_length, train_data))
        parsed = model.parse(dev_tb, threads=1)
        decisions = len(model.trajectories(dev_tb, beta=0.0, random_state=0).sentence)
        words = sum(len(s) for s in dev_tb)
        per_word = len(cand.base + cand.templates) * decisions / max(words, 1)
    else:
        arc, sib = (full, None) if cand.order == 1 else (text(cand.base), text(cand.templates))
        kw: dict[str, Any] = {"arc_templates": arc}
        if sib is not None:
            kw["sibling_templates"] = sib
        model = GraphParser(
            order=cand.order, decoder=cand.decoder, epochs=cand.epochs, random_state=cand.seed, **kw
        )
        model.fit(_treebank(train, cand.max_length, train_data))
        parsed = model.parse(dev_tb, threads=1)
        # Arc templates with the length dictionary (order 2: the sibling ones not counted).
        counts = model._model().template_evaluations(dev_tb)
        per_word = float(counts.sum()) / max(dev_tb.n_words, 1)
    scores = evaluate(dev_tb, parsed)
    return Result(
        key=cand.key(),
        dev_uas=scores.uas,
        dev_las=scores.las,
        evaluations_per_word=per_word,
        cpu_seconds=time.process_time() - cpu0,
        seed=cand.seed,
        start=start,
        end=time.time(),
    )


# ---------------------------------------------------------------------------------------
# The log.


def data_fingerprint(path: str | os.PathLike[str]) -> str:
    """A data file's identity in a log: its size and the start of its SHA-256 (the
    content: a copy or a touched file matches, an edited one does not). O(bytes)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return f"{Path(path).stat().st_size} bytes, sha256 {h.hexdigest()[:16]}"


class UncheckedLogWarning(UserWarning):
    """A selection log holds lines that do not say which data they were scored on."""


class Log:
    """Evaluated candidates, one complete JSON line each (``key`` plus the result and
    the candidate's options), appended and flushed to disk as each result arrives. A
    torn last line (a kill mid-write) is dropped on open, so the log always resumes;
    blank lines are skipped. A run holds the log (:meth:`lock`): a second run on the same
    log is refused rather than training everything again beside the first.

    A log is tied to its data, not to the depfs version: after an upgrade that changes
    training, start a new log."""

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = Path(path) if path is not None else None
        self.results: dict[str, Result] = {}
        #: The data its results were scored on (see :meth:`bind`), and what each line says.
        self.data: dict[str, str] | None = None
        self._made_on: list[tuple[int, dict[str, str] | None]] = []
        self._lock: Any = None
        self._created = False
        if self.path is None or not self.path.exists():
            return
        if not self.path.is_file():  # a FIFO would be read forever, a device is no log
            raise ValueError(
                f"{self.path}: not a regular file: a log is read, then appended to "
                "(give a file's path)"
            )
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        lines = data[:end].split(b"\n")[:-1]
        torn = data[end:]
        # Every line is checked before the file is touched: a file that is not a log
        # (a model, notes without a last newline) is refused as it is, not cut first.
        for n, raw in enumerate(lines, 1):
            if raw.strip():
                self._read_line(n, raw)
        if not torn:
            return
        n = len(lines) + 1
        try:
            whole = json.loads(torn)
        except ValueError:
            whole = None
        if whole is None and torn.startswith(b"{") and not any(r.strip() for r in lines):
            # Nothing but one unfinished line: not surely a log (a file of one's own
            # starting with "{" was emptied), so it is left as it is.
            raise ValueError(
                f"{self.path}:{n}: one unfinished line and no whole one: not a log to resume "
                "(if it is one, cut short by a kill, remove it to start afresh)"
            )
        if whole is not None or not torn.startswith(b"{"):
            # A whole line without its newline (or a file that is not a log): read as a
            # line, which refuses what is not a log line.
            self._read_line(n, torn)
        # A torn last line (a kill mid-write): dropped, the file cut back to its last
        # whole line (a whole one gets its newline) -- unless another run holds the log
        # and may be writing that line now (then lock() refuses this run).
        with open(self.path, "r+b") as f:
            try:
                import fcntl

                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except ImportError:  # Windows
                pass
            except BlockingIOError:
                return
            if whole is None:
                f.truncate(end)
            else:
                f.seek(0, os.SEEK_END)
                f.write(b"\n")

    def _read_line(self, n: int, raw: bytes) -> None:
        """Line `n` of the log, checked: one JSON object of a :class:`Result` with finite
        numbers (a ValueError naming the file and line otherwise)."""

        def bad(why: str) -> ValueError:
            return ValueError(f"{self.path}:{n}: not a selection log line ({why})")

        try:
            d = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise bad("invalid UTF-8") from None
        except ValueError as err:
            raise bad(str(err)) from None
        if not isinstance(d, dict):
            raise bad(f"a JSON {type(d).__name__}, not an object")
        fields = Result.__dataclass_fields__
        missing = [k for k, f in fields.items() if k not in d and f.default is MISSING]
        if missing:
            raise bad(f"no {', '.join(missing)}")
        if not isinstance(d["key"], str):
            raise bad("key is not a string")
        for k in fields:
            v = d.get(k)
            if k == "key" or (v is None and k.startswith("dev_")):  # a tagger's dev_uas
                continue
            if k == "seed":
                if isinstance(v, bool) or not isinstance(v, int):
                    raise bad(f"seed {v!r} is not an integer")
            elif isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise bad(f"{k} {v!r} is not a finite number")
        r = Result(**{k: d[k] for k in fields if k in d})
        self.results[r.key] = r
        self._made_on.append((n, d.get("data")))

    def bind(self, data: dict[str, str]) -> None:
        """Ties the log to the train and dev data its results are scored on (`data`, see
        :func:`data_fingerprint`): a log of results scored on other data is refused, not
        reused. Lines written before logs named their data cannot be checked: they are
        reused, with one :class:`UncheckedLogWarning`."""
        for n, made_on in self._made_on:
            if made_on is not None and made_on != data:
                theirs = ", ".join(f"{k} {v}" for k, v in sorted(made_on.items()))
                ours = ", ".join(f"{k} {v}" for k, v in sorted(data.items()))
                raise ValueError(
                    f"{self.path}:{n}: this log was made on other data ({theirs}; now {ours}): "
                    "give another --log, or remove it to start afresh"
                )
        unchecked = [n for n, made_on in self._made_on if made_on is None]
        if unchecked:
            warnings.warn(
                UncheckedLogWarning(
                    f"{self.path}: {len(unchecked)} of its {len(self._made_on)} lines (first "
                    f"line {unchecked[0]}) come from a depfs that did not record the data they "
                    "were scored on: they are reused as scored on this --train and --dev; "
                    "remove the log to train them again"
                ),
                stacklevel=2,
            )
        self.data = data

    def lock(self) -> None:
        """Holds the log for this run (an exclusive lock on the file; none where the
        platform has no ``fcntl``): a second run on the same log raises ValueError."""
        if self.path is None or self._lock is not None:
            return
        try:
            import fcntl
        except ImportError:  # Windows
            return
        self._created = not self.path.exists()
        f = open(self.path, "ab")  # noqa: SIM115 - held until unlock()
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            raise ValueError(
                f"{self.path}: another run is using this log: wait for it to end, or give "
                "another --log"
            ) from None
        self._lock = f

    def unlock(self) -> None:
        """Lets the log go; one this run made and left empty (it failed before any
        result) is removed."""
        if self._lock is not None:
            if self._created and self.path is not None:
                with contextlib.suppress(OSError):
                    here, held = self.path.stat(), os.fstat(self._lock.fileno())
                    # (this run's file: another run's new log at the path is left alone)
                    same = (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)
                    if same and here.st_size == 0:
                        self.path.unlink()
            self._lock.close()
            self._lock = None

    def add(self, cand: Candidate, r: Result) -> None:
        self.results[r.key] = r
        if self.path is None:
            return
        d = asdict(r)
        d["candidate"] = cand.options()
        d["templates"] = [t.id for t in cand.templates]
        d["base"] = [t.id for t in cand.base]
        if self.data is not None:
            d["data"] = self.data
        line = json.dumps(d, sort_keys=True) + "\n"
        try:
            if self._lock is not None:
                # Through the locked file: opening the path again wrote to whatever was
                # there now (the log removed mid-run: a new file another run could take).
                if os.fstat(self._lock.fileno()).st_nlink == 0:
                    raise ValueError(
                        f"{self.path}: the log was removed during the run, and the results "
                        "would go with it: rerun to start afresh"
                    )
                self._lock.write(line.encode("utf-8"))
                self._lock.flush()
                os.fsync(self._lock.fileno())
            else:
                with open(self.path, "a", encoding="utf-8") as f:
                    f.write(line)
                    f.flush()
                    os.fsync(f.fileno())
        except OSError as e:  # a full disk, a quota: named by the log (it said "stdout")
            if e.filename is None:
                e.filename = os.fspath(self.path)
            raise


# ---------------------------------------------------------------------------------------
# The engine.


@dataclass
class Engine:
    """Evaluates candidates on train/dev paths with an executor, through a log.

    ``executor``: any :class:`concurrent.futures.Executor` (the caller owns it); when
    None, the engine starts a process pool of ``workers`` processes (default: all
    cores) and restarts it if a worker dies. A failed candidate is retried
    ``retries`` times, then the error is raised."""

    train: str
    dev: str
    executor: cf.Executor | None = None
    workers: int | None = None
    log: Log = field(default_factory=lambda: Log(None))
    retries: int = 2
    #: Candidates trained by this engine, and candidates found in the log.
    evaluated: int = 0
    reused: int = 0

    def __post_init__(self) -> None:
        for p in (self.train, self.dev):
            if Path(p).exists() and not Path(p).is_file():  # read by every worker, again
                raise ValueError(
                    f"{p}: a pipe or device, not a file (each candidate's worker reads it "
                    "again: give a file)"
                )
            if not Path(p).is_file():
                raise FileNotFoundError(f"{p}: no such file")
        self.train, self.dev = str(Path(self.train).resolve()), str(Path(self.dev).resolve())
        self._data = {"train": data_fingerprint(self.train), "dev": data_fingerprint(self.dev)}
        self.log.bind(self._data)
        self.log.lock()
        self._own: cf.ProcessPoolExecutor | None = None

    def _pool(self) -> cf.Executor:
        if self.executor is not None:
            return self.executor
        if self._own is None:
            n = worker_count(self.workers)
            # spawn: a forked child would inherit the parent's Rust thread pools mid-state.
            ctx = multiprocessing.get_context("spawn")
            self._own = cf.ProcessPoolExecutor(
                max_workers=n,
                mp_context=ctx,
                initializer=_exit_with_parent,
                initargs=(os.getpid(),),
            )
        return self._own

    def close(self) -> None:
        """Stops its own pool, busy workers too, and lets the log go (another run may take it).

        A worker busy in a training is killed: what it would give is lost either way (the
        log holds finished candidates only), and a Rust training is not interrupted by a
        signal, so the interpreter's exit would otherwise wait for it (a Ctrl-C that prints
        its message, then keeps the shell for as long as the trainings under way take)."""
        if self._own is not None:
            # Python 3.14 has terminate_workers(); before it, the pool's own process table.
            workers = list((getattr(self._own, "_processes", None) or {}).values())
            manager = getattr(self._own, "_executor_manager_thread", None)
            self._own.shutdown(wait=False, cancel_futures=True)
            for w in workers:
                if w.is_alive():
                    w.terminate()
            # Its manager thread ends once the workers are gone. Left running, the
            # interpreter's exit met it half-closed ("Exception ignored ... Bad file
            # descriptor"), or a second SIGINT landed in the exit's join of it.
            if manager is not None:
                manager.join(timeout=5)
            self._own = None
        self.log.unlock()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, cands: Iterable[Candidate]) -> Iterator[tuple[Candidate, Result]]:
        """Yields (candidate, result) for every candidate: logged ones first, then the
        others as they finish (in completion order)."""
        todo: list[Candidate] = []
        for c in dict.fromkeys(cands):
            r = self.log.results.get(c.key())
            if r is not None:
                self.reused += 1
                yield c, r
            else:
                todo.append(c)
        tries = dict.fromkeys(todo, 0)
        pending: dict[cf.Future[Result], Candidate] = {}

        def submit(c: Candidate) -> None:
            with children_deaf_to_ctrl_c():  # (a submit may start the pool's workers)
                fut = self._pool().submit(evaluate_candidate, c, self.train, self.dev, self._data)
            pending[fut] = c

        for c in todo:
            submit(c)
        try:
            while pending:
                done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    if fut not in pending:  # from a broken pool, already resubmitted
                        continue
                    c = pending.pop(fut)
                    try:
                        r = fut.result()
                    except Exception as err:
                        if not _worker_died(err):
                            raise  # the candidate itself failed: the same again every time
                        tries[c] += 1
                        if tries[c] > self.retries:
                            from ..errors import WorkersLostError

                            raise WorkersLostError(
                                f"candidate failed {tries[c]} times: its worker died each "
                                "time (out of memory? killed? or, in a script, a search not "
                                "under `if __name__ == '__main__':`, which worker processes "
                                f"import again): {err}"
                            ) from err
                        if isinstance(err, BrokenProcessPool) and self._own is not None:
                            # A dead worker breaks the whole pool: start a new one and
                            # resubmit everything still pending.
                            self._own.shutdown(wait=False, cancel_futures=True)
                            self._own = None
                            again = [c] + list(pending.values())
                            pending.clear()
                            for a in again:
                                submit(a)
                        else:
                            submit(c)
                        continue
                    self.log.add(c, r)
                    self.evaluated += 1
                    yield c, r
        finally:
            # Our own pool's work ends with close(), which kills its workers. Cancelling
            # its futures here would leave cancelled ones in its queue, and Python 3.11's
            # pool, finding its workers dead, sets an error on each: InvalidStateError, a
            # traceback printed after the interrupt message.
            if self._own is None:
                for fut in pending:
                    fut.cancel()


def _worker_died(err: BaseException) -> bool:
    """A lost worker (process pool or Dask), as opposed to an error of the candidate."""
    return isinstance(err, BrokenProcessPool) or type(err).__name__ in (
        "KilledWorker",
        "CommClosedError",
    )


def worker_count(workers: int | None) -> int:
    """Local worker processes for ``--workers`` (None: one per core): more than the cores
    are the cores, with the note ``--threads`` gets (:func:`depfs.base.at_most_cores`)."""
    from ..base import at_most_cores, check_count

    if workers is None:
        return os.cpu_count() or 1
    return at_most_cores(check_count(workers, "workers", 1), "--workers")


def dask_executor(scheduler: str, workers: int | None = None) -> tuple[cf.Executor, Any]:
    """An executor on a Dask distributed cluster: ``"local"`` starts a LocalCluster of
    `workers` single-threaded worker processes, anything else is a scheduler address.
    Returns (executor, client); stop both with :func:`close_dask` when done."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as err:  # pragma: no cover - depends on the installation
        raise RuntimeError("--scheduler needs dask: pip install 'depfs[dask]'") from err
    if scheduler == "local":
        n = worker_count(workers)
        _open_files_for_a_cluster()
        _quiet_cluster_exit()
        # Quiet: a task's error reaches the caller as its exception (one 'depfs: error:'
        # line), and our own cluster's shutdown is no news; Dask's WARNING/ERROR log
        # lines with a traceback in them, from the workers and from this process, are not
        # a user's (a scheduler address given keeps that cluster's own logging).
        with _workers_deaf_to_ctrl_c():
            try:
                cluster = LocalCluster(
                    n_workers=n,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",
                    silence_logs=logging.CRITICAL,
                    preload=[__name__],  # its workers ignore Ctrl-C: `dask_setup`
                )
            except BaseException:
                # Cut short (Ctrl-C, SIGTERM): the nannies still starting fail, and Dask
                # and asyncio log it at exit ("Nanny failed to start", "Task exception
                # was never retrieved"), tracebacks after depfs's one line.
                for name in ("distributed", "asyncio"):
                    logging.getLogger(name).setLevel(logging.CRITICAL + 1)
                raise
        try:
            client = Client(cluster)
        except BaseException:  # (Ctrl-C included) the cluster just started goes too
            cluster.close()
            raise
    else:
        try:  # an address nobody answers at fails in seconds, not after Dask's 30 s
            client = Client(scheduler, timeout="3s")
        except (OSError, TimeoutError, ValueError) as err:
            raise ValueError(f"--scheduler {scheduler}: {err}") from None
    return client.get_executor(pure=False), client


@contextlib.contextmanager
def _workers_deaf_to_ctrl_c() -> Iterator[None]:
    """A LocalCluster's worker processes started inside are born ignoring SIGINT, while
    this process still takes it. Spawned (Dask's default), a worker interrupted by a
    terminal's Ctrl-C before its preload (`dask_setup`) ran printed a `KeyboardInterrupt`
    traceback from the middle of its imports, dozens of lines after depfs's one. So the
    workers are forked from a fork server started here with SIGINT ignored
    (:func:`children_deaf_to_ctrl_c`: a few milliseconds), which keeps it ignored for
    every child. Its stderr is the null device: a worker's messages are Dask's, which
    the cluster silences anyway (its task errors reach this process as exceptions), and a
    worker still unpickling its start-up state when this process exits printed a
    `FileNotFoundError` traceback (its semaphore gone with the parent)."""
    import dask
    from distributed.utils import get_mp_context

    method = dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"})
    get_mp_context()  # (Dask's preload of the fork server, set before it starts)
    with children_deaf_to_ctrl_c(), _stderr_to_null():
        multiprocessing.forkserver.ensure_running()
    yield
    # Dask's own method back once the cluster is up. Not after an interruption: the
    # cluster's thread may still be starting workers, which must not be spawned.
    method.__exit__(None, None, None)


@contextlib.contextmanager
def _stderr_to_null() -> Iterator[None]:
    """File descriptor 2 on the null device inside (processes started there inherit it),
    restored after. O(1)."""
    import sys

    if sys.stderr is not None:
        sys.stderr.flush()
    try:
        saved: int | None = os.dup(2)
    except OSError:  # (no stderr at all: `2>&-`)
        saved = None
    null = os.open(os.devnull, os.O_WRONLY)  # (2 itself when there was none)
    try:
        if null != 2:
            os.dup2(null, 2)
        yield
    finally:
        if saved is None:
            os.close(2)  # none again
        else:
            os.dup2(saved, 2)
            os.close(saved)
        if null != 2:
            os.close(null)


#: Open files a LocalCluster's processes need at least (sockets between the scheduler,
#: the nannies and the workers, the files Python opens): under `ulimit -n 16` it printed
#: `Too many open files` tracebacks by the million and never started; under 32 its
#: nanny failed to start. Linux's usual soft limit is 1,024; macOS's 256.
CLUSTER_OPEN_FILES = 256


def _open_files_for_a_cluster() -> None:
    """Raises the soft limit on open files to :data:`CLUSTER_OPEN_FILES` if it is lower
    (as far as the hard limit allows: any process may, and the cluster's processes
    inherit it), or refuses when the hard limit is lower."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = CLUSTER_OPEN_FILES
    if soft == resource.RLIM_INFINITY or soft >= need:
        return
    if hard != resource.RLIM_INFINITY and hard < need:
        raise ValueError(
            f"--scheduler local: a local cluster needs at least {need} open files and this "
            f"process may open {hard} (ulimit -Hn): raise that limit, or parse without "
            "--scheduler"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def _quiet_cluster_exit() -> None:
    """Dask closes the clusters left open when the process exits; one cut short while
    it started (Ctrl-C, SIGTERM) fails an assertion there and prints a traceback after
    the one line depfs says. Closed the same way here, the failure is not a user's:
    the worker processes end with this one anyway."""
    import atexit

    from distributed.deploy import spec

    close = getattr(spec, "close_clusters", None)
    if close is None or getattr(close, "_depfs_quiet", False):
        return

    def close_quietly() -> None:
        with contextlib.suppress(Exception, KeyboardInterrupt):  # (a second Ctrl-C too)
            close()

    close_quietly._depfs_quiet = True  # type: ignore[attr-defined]
    atexit.unregister(close)
    atexit.register(close_quietly)
    spec.close_clusters = close_quietly


def close_dask(executor: cf.Executor, client: Any) -> None:
    """Stops what :func:`dask_executor` started. The executor first: its shutdown runs on the
    client's event loop, which a client of a scheduler address closes with itself ("IOLoop
    is closed" otherwise, after all the work was done); tasks still queued after a failure
    are cancelled, not waited for. Then our own LocalCluster (``"local"``: its workers
    before its scheduler, quietly), then the client."""
    executor.shutdown(wait=False)
    cluster = getattr(client, "cluster", None)
    if cluster is not None:
        cluster.close()
    client.close()
