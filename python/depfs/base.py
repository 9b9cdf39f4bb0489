"""The one base of depfs's trainable models (after SuPar's one base parser).

Every model is sklearn-style: ``fit(train, dev=None, ...)`` returns self; learned attributes
end in ``_``; ``parse``, ``save``, ``load``; and ``history_``, one row per epoch with the same
keys for every model: ``epoch`` (from 1), ``train_accuracy``, ``seconds`` and, with a dev
file, ``dev_uas`` / ``dev_las`` in percent from the one scorer (:func:`depfs.evaluate`:
punctuation included, LAS on the universal part of DEPREL). ``depfs.load`` returns the
right class for any model file. A subclass says how to start a trainer and how to wrap
a loaded model; the epoch loop, dev scoring, progress bar and callback live here once.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import numbers
import operator
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from . import _core
from ._core import __version__

HistoryRow = dict[str, float]


def as_int(value: Any) -> int | None:
    """An integer argument as a Python int: any ``numbers.Integral`` (numpy integers too,
    through ``operator.index``), never a bool (True is not 1 here); None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    return operator.index(value)


def check_threads(threads: int) -> int:
    """A thread count for the core: an integer >= 0 (0 = one per core); more than the
    cores is the cores (the core caps there anyway, and a huge value must not overflow)."""
    value = as_int(threads)
    if value is None:
        raise TypeError(f"threads must be an integer, got {threads!r}")
    threads = value
    if threads < 0:
        raise ValueError(f"threads must be >= 0 (0 = one per core), got {threads}")
    return min(threads, os.cpu_count() or 1)


def at_most_cores(n: int, option: str) -> int:
    """`n` (a count of threads or worker processes, >= 1) capped at the core count, with a
    note on stderr when capped: more cannot run at once on CPU-bound work, and a huge
    count must not start thousands of processes or overflow the core."""
    cores = os.cpu_count() or 1
    if n <= cores:
        return n
    print(f"depfs: note: {option} {n} capped at the {cores} cores", file=sys.stderr)
    return cores


def as_treebank(value: Any, name: str, prepared: bool = False, to_parse: bool = False) -> Any:
    """The treebank an API entry was given as `name`: a Treebank itself, a path read as
    CoNLL-U (``prepared``: a prepared TrainingSet too; ``to_parse``: input to parse or
    tag, whose HEAD may root several words, as ``depfs parse`` reads it); anything else a
    TypeError naming the argument (not an AttributeError deep inside, or a str read as a
    sequence)."""
    if prepared and isinstance(value, _core.TrainingSet):
        return value
    from .errors import DepfsIOError
    from .evaluate import as_treebank as read

    try:
        return read(value, multiple_roots=to_parse)
    except DepfsIOError as e:
        # A sentence given as a str was read as a path ("The cat sat .: No such file").
        if to_parse and isinstance(value, str) and " " in value and not os.path.exists(value):
            raise DepfsIOError(
                f"{e} (a str is read as a path; for text give depfs.text_to_treebank(text) "
                "or depfs.tokens_to_treebank(token lists))"
            ) from None
        raise
    except TypeError:
        what = "a depfs.Treebank, a TrainingSet" if prepared else "a depfs.Treebank"
        hint = (
            " (token lists: depfs.tokens_to_treebank)" if isinstance(value, (list, tuple)) else ""
        )
        raise TypeError(
            f"{name} must be {what} or a path to a CoNLL-U file, got {type(value).__name__}{hint}"
        ) from None


def _numpy_bool(value: Any) -> bool:
    return (
        type(value).__module__ == "numpy"
        and getattr(getattr(value, "dtype", None), "kind", "") == "b"
    )


def check_flag(value: Any, name: str) -> bool:
    """A True/False argument (a numpy bool too; not "no", which is true), as a bool."""
    if _numpy_bool(value):
        return bool(value)
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


def check_count(value: Any, name: str, minimum: int = 0, maximum: int = 2**32 - 1) -> int:
    """An integer argument in `minimum`..`maximum`, checked where it is read: a ValueError
    naming it (not an OverflowError of the core, or a TypeError of iterating over it)."""
    n = as_int(value)
    if n is None or n < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if n > maximum:
        raise ValueError(f"{name} must be an integer <= {maximum}, got {value!r}")
    return n


def as_float(value: numbers.Real) -> float:
    """`value` as a float; an integer beyond a float's range is that infinity (float()
    raises OverflowError, naming no argument)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


#: The largest finite 32-bit float: the core reads margins and thresholds as f32, so a
#: finite number beyond it would arrive as infinity.
F32_MAX = 3.4028234663852886e38


def check_number(
    value: Any, name: str, low: float = 0.0, high: float = float("inf"), finite: bool = True
) -> float:
    """A number argument in [low, high] (``finite``: not inf), NaN refused: a ValueError
    naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    v = as_float(value)
    if not low <= v <= high or (finite and math.isinf(v)):
        bound = f" between {low:g} and {high:g}" if high != float("inf") else f" >= {low:g}"
        bound = "" if low == -float("inf") and high == float("inf") else bound
        raise ValueError(
            f"{name} must be a {'finite ' if finite else ''}number{bound}, got {value!r}"
        )
    return v


def check_real(value: Any, name: str) -> None:
    """A number argument whose range is checked elsewhere (a string such as '3' was
    read as 3.0 and recorded as the string): a ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")


def check_seed(seed: int) -> int:
    """A random_state the core can use: an integer in 0..2**64-1 (numpy's too), as an int."""
    value = as_int(seed)
    if value is None or not 0 <= value < 2**64:
        raise ValueError(f"random_state must be an integer in 0..2**64-1, got {seed!r}")
    return value


#: Constructor arguments that default to None and take a file or set name, recorded as
#: the string given: a loaded model restores them too (a DynFS model refitted with the
#: shipped groups instead of its own, a parser or tagger without its cluster file).
_RECORDED_PATHS = ("groups", "clusters")


def _learned(model: Any) -> dict[str, Any]:
    """`model`'s learned attributes (``name_``, the scikit-learn convention)."""
    return {k: v for k, v in vars(model).items() if k.endswith("_") and not k.startswith("_")}


def all_or_nothing(fit: Callable[..., Any]) -> Callable[..., Any]:
    """Wraps a ``fit``: the learned attributes after it are this fit's alone (a refit kept
    an earlier fit's tagger, saved it and tagged with it, and an earlier DynFS policy's
    summary), and a fit that raises (Ctrl-C included) leaves them as they were (a refit
    cut short kept the old model beside the new fit's history and training information,
    and ``save`` wrote both). The earlier fit's attributes stay until the fit ends (a
    parse in another thread meanwhile uses the old model); those it did not set again
    are then removed (:meth:`TrainableModel.__setattr__` notes what it sets). A
    subclass's ``fit`` calling its parent's is one fit."""

    @functools.wraps(fit)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if "_fitting" in vars(self):
            return fit(self, *args, **kwargs)
        before = _learned(self)
        self._fitting = set()
        try:
            result = fit(self, *args, **kwargs)
        except BaseException:
            for name in _learned(self).keys() - before.keys():
                delattr(self, name)
            vars(self).update(before)
            raise
        else:
            for name in before.keys() - self._fitting:
                delattr(self, name)
            return result
        finally:
            del self._fitting

    return wrapper


class TrainableModel:
    """Base of the parsers: the epoch loop, dev scores, history, model files."""

    def __setattr__(self, name: str, value: Any) -> None:
        # During a fit, which learned attributes it sets (see `all_or_nothing`).
        fitting = self.__dict__.get("_fitting")
        if fitting is not None and name.endswith("_") and not name.startswith("_"):
            fitting.add(name)
        object.__setattr__(self, name, value)

    kind: ClassVar[str] = ""
    """The model-file kind this class reads and writes."""
    _core_model: ClassVar[Any] = None
    """The Rust model class of that kind (its ``load`` reads the file)."""

    epochs: int
    model_: Any
    tagger_: Any = None
    """A parser's tagger (a fitted :class:`depfs.Tagger`), which tags input that leaves
    empty the tag columns the parser reads before parsing it, and is saved inside the
    parser's model file; None: no tagger. The ``tagger`` constructor argument sets it in
    ``fit``; assigning it on a fitted or loaded parser adds, replaces or removes one."""

    def __repr__(self) -> str:
        """The class and the constructor arguments that differ from their defaults, as
        scikit-learn shows an estimator: ``ArcEagerParser(epochs=4, dynamic=True)``."""
        shown = []
        for name, p in inspect.signature(type(self).__init__).parameters.items():
            if name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            v = getattr(self, name, p.default)
            try:
                same = v is p.default or bool(type(v) is type(p.default) and v == p.default)
            except (TypeError, ValueError):  # (an array's == is not one truth value)
                same = False
            if same:
                continue
            if isinstance(v, str) and "\n" in v:
                text = f"<{len(v.splitlines())} lines of template text>"
            else:
                text = repr(os.fspath(v) if isinstance(v, os.PathLike) else v)
                text = text if len(text) <= 60 else text[:57] + "..."
            shown.append(f"{name}={text}")
        return f"{type(self).__name__}({', '.join(shown)})"

    # ---------- what a subclass provides ----------

    def _trainer(self, train: _core.Treebank | _core.TrainingSet) -> Any:
        """A Rust trainer: ``epoch() -> dict`` (epoch, train_accuracy, seconds), ``model()``."""
        raise NotImplementedError

    @staticmethod
    def _params_of(model: Any) -> dict[str, Any]:
        """The constructor arguments a loaded Rust model decides (the rest keep defaults)."""
        raise NotImplementedError

    _dev_key: ClassVar[str] = "dev_las"
    """The history column that picks the best epoch."""

    @staticmethod
    def _dev_scores(model: Any, dev: _core.Treebank) -> dict[str, float]:
        """Dev scores of an epoch's model (history columns)."""
        from .evaluate import evaluate

        scores = evaluate(dev, model.parse(dev, 1))
        return {"dev_uas": scores.uas, "dev_las": scores.las}

    @classmethod
    def _dev_label(cls, row: HistoryRow) -> str:
        return f"{cls.kind} dev UAS {row['dev_uas']:.2f} LAS {row['dev_las']:.2f}"

    # ---------- training ----------

    @all_or_nothing
    def fit(
        self,
        train: _core.Treebank | _core.TrainingSet,
        dev: _core.Treebank | None = None,
        *,
        keep: str = "best",
        progress: bool = False,
        on_epoch: Callable[[HistoryRow], None] | None = None,
    ) -> TrainableModel:
        """Trains for ``epochs`` epochs; with ``dev``, scores each epoch's model on it
        (``history_``) and keeps the epoch with the best dev LAS (a tagger: the best mean
        tag accuracy; ``keep="last"``: the last epoch; ``best_epoch_`` says which was
        kept). ``on_epoch`` sees each history row; ``progress`` shows a bar."""
        check_flag(progress, "progress")  # ("x" was taken for True)
        train = as_treebank(train, "train", prepared=True)
        if isinstance(train, _core.Treebank):
            train = without_untagged(train)
        dev = None if dev is None else as_treebank(dev, "dev")
        epochs = as_int(self.epochs)
        if epochs is None or epochs < 1:
            raise ValueError(f"epochs must be an integer of at least 1, got {self.epochs!r}")
        check_seed(getattr(self, "random_state", 0))
        if keep not in ("best", "last"):
            raise ValueError(f"keep must be 'best' or 'last', got {keep!r}")
        if dev is not None:
            if len(dev) == 0:  # every epoch would score 0 and the first be kept
                raise ValueError(
                    "dev: the dev set has no sentences: give one with sentences, or none"
                )
            self._check_dev(dev, train)
        best: tuple[float, int, Any] | None = None  # (dev score, epoch, model)
        tagger = getattr(self, "tagger", None)
        if tagger is not None:
            _check_tagger(tagger)
            if dev is not None:  # dev scores (and the epoch kept) are the pipeline's
                dev = tagger.tag(dev)
        # (in a helper thread, as the epochs: preparing the data takes seconds on a large
        # treebank, a tagger's the longest, and Ctrl-C must not wait for it)
        trainer = interruptible(lambda: self._trainer(train))
        if tagger is not None:
            _check_tagger_fits(trainer.model().input_columns, tagger)
        if dev is not None:
            self._check_dev_columns(trainer, dev, tagger)
        self.train_info_: dict[str, Any] = self._used(train, trainer)
        self.history_: list[HistoryRow] = []
        n_epochs = self._n_epochs()
        bar = _progress(n_epochs, f"{self.kind} epochs") if progress else None
        try:
            for _ in range(n_epochs):
                row: HistoryRow = {k: float(v) for k, v in interruptible(trainer.epoch).items()}
                if dev is not None:
                    model = trainer.model()
                    row.update(self._dev_scores(model, dev))
                    score = row[self._dev_key]
                    if keep == "best" and (best is None or score > best[0]):
                        best = (score, int(row["epoch"]), model)
                self.history_.append(row)
                if on_epoch is not None:
                    on_epoch(row)
                if bar is not None:
                    bar.update(1)
                    if self._dev_key in row:
                        bar.label = self._dev_label(row)
        finally:
            if bar is not None:
                bar.render_finish()
        if best is not None:
            self.model_, self.best_epoch_ = best[2], best[1]
        else:
            self.model_, self.best_epoch_ = trainer.model(), len(self.history_)
        self.tagger_ = tagger
        self._fitted(trainer)
        return self

    def _check_dev(self, dev: _core.Treebank, train: Any) -> None:
        """Hook: refuses a dev set that cannot be scored, before training (a parser's: one
        without HEAD; its message says "dev")."""
        from .evaluate import evaluate

        try:
            evaluate(dev, dev)
        except ValueError as e:
            raise ValueError(f"dev: {str(e).removeprefix('gold ')}") from None

    def _check_dev_columns(self, trainer: Any, dev: _core.Treebank, tagger: Any) -> None:
        """Hook: refuses a dev set that leaves empty a column the model reads (the rule of
        :meth:`parse`; a parser's own ``tagger`` has tagged it): its scores, which choose
        the epoch kept, would be those of a silently bad parse."""
        model = trainer.model()
        missing = unfilled_columns(model, dev, tagger)
        if missing:
            from .errors import MissingColumnsError

            raise MissingColumnsError(
                f"dev: the dev set leaves {', '.join(missing)} empty ('_' on most words), and "
                f"the model reads {', '.join(model.input_columns)}: its dev scores, which "
                "choose the epoch kept, would be meaningless. Give a tagged dev set, or the "
                "parser a tagger (tagger=..., depfs train --tagger)"
            )

    def _used(self, train: Any, trainer: Any) -> dict[str, Any]:
        """Hook: what training uses of `train` (``train_info_``: sentences, words), with
        one :class:`SkippedSentencesWarning` for the sentences it skips. Here: all."""
        return {"sentences": len(train), "words": train.n_words}

    def _n_epochs(self) -> int:
        """Hook: the trainer's epochs in all (a stagewise tagger's run per template)."""
        return self.epochs

    def _fitted(self, trainer: Any) -> None:
        """Hook: learned attributes a subclass reads off the finished trainer."""

    # ---------- parsing and model files ----------

    def _model(self) -> Any:
        model = getattr(self, "model_", None)
        if model is None:
            raise ValueError(
                f"this {type(self).__name__} is not trained yet: call fit() or depfs.load()"
            )
        return model

    def parse(
        self,
        treebank: _core.Treebank,
        threads: int = 1,
        *,
        allow_missing_tags: bool = False,
        scores: bool = False,
        tag: bool | None = None,
    ) -> _core.Treebank:
        """A copy of ``treebank`` with HEAD and DEPREL predicted (``threads=0``: all cores).

        Input that leaves empty (``_`` on most words) a column the model was trained on,
        e.g. untagged text, is tagged first by the parser's ``tagger_`` when it has one
        (with a :class:`TaggedWarning`; ``tag=True``: always, overwriting the columns the
        tagger predicts; ``tag=False``: never); otherwise it raises
        :class:`depfs.errors.MissingColumnsError` unless ``allow_missing_tags``: the parse
        would be silently bad. With ``scores``, each word's margin (how far its head won;
        see :func:`depfs.margins`) goes to MISC as ``Margin=x``."""
        model = self._model()
        treebank = as_treebank(treebank, "treebank", to_parse=True)
        check_flag(allow_missing_tags, "allow_missing_tags")
        check_flag(scores, "scores")
        threads = check_threads(threads)
        treebank, tagger = self._tag_first(treebank, threads, tag)
        check_columns(model, treebank, allow_missing_tags, tagger)
        return model.parse(treebank, threads=threads, scores=scores)

    def tagger_needed(self, treebank: _core.Treebank) -> bool:
        """Whether ``treebank`` leaves empty a column this parser reads that its
        ``tagger_`` predicts (the rule of ``parse(tag=None)``)."""
        if self.tagger_ is None:
            return False
        _check_tagger(self.tagger_)  # (assigned by hand: an AttributeError deep in)
        return needs_tagger(self._model().input_columns, self.tagger_.columns_, treebank)

    def _tag_first(
        self, treebank: _core.Treebank, threads: int, tag: bool | None
    ) -> tuple[_core.Treebank, Any]:
        """``treebank`` tagged by ``tagger_`` as ``parse(tag=...)`` says, and the tagger
        used (None when it was not tagged)."""
        if tag is not None:
            check_flag(tag, "tag")
        if tag is None:
            tag = self.tagger_needed(treebank)
            if tag:
                warnings.warn(TaggedWarning(tagged_note(self.tagger_)), stacklevel=3)
        if not tag:
            return treebank, None
        if self.tagger_ is None:
            raise ValueError(f"tag=True: this {type(self).__name__} has no tagger_")
        return self.tagger_.tag(treebank, threads), self.tagger_

    def __getstate__(self) -> dict[str, Any]:
        """A model pickles (multiprocessing, joblib, ``copy.deepcopy``) as its attributes
        with ``model_`` as the bytes of its model file: the Rust model does not pickle.
        Its ``tagger_`` pickles the same way, as a Tagger of its own. O(model size)."""
        state = dict(vars(self))
        state.pop("_fitting", None)
        model = state.pop("model_", None)
        if model is not None:
            state["_model_file"] = model_file_bytes(lambda path: model.save(path, None))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        data = state.pop("_model_file", None)
        vars(self).update(state)
        if data is not None:
            self.model_ = from_model_file_bytes(data, lambda p: _core.load_model(p, self.kind)[1])

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the model file atomically (format-versioned, checksummed), with what
        training did (:meth:`training_info`; a loaded model keeps its file's)."""
        if not os.fspath(path):  # (it said ".: is a directory")
            raise ValueError("the model path is empty")
        info = self.training_info()
        text = json.dumps(info) if info else None
        if self.tagger_ is None:
            self._model().save(Path(path), text)
            return
        _check_tagger(self.tagger_)
        tagger_info = self.tagger_.training_info()
        self._model().save(
            Path(path),
            text,
            self.tagger_._model(),
            json.dumps(tagger_info) if tagger_info else None,
        )

    def training_info(self) -> dict[str, Any]:
        """What `depfs info` shows of a model trained here: the constructor's arguments,
        the training data's size (and file, when the CLI trained it), the epochs with
        their scores, the epoch kept. Empty for a model loaded from a file."""
        if not hasattr(self, "history_"):
            return {}
        params: dict[str, Any] = {}
        for name in inspect.signature(type(self).__init__).parameters:
            v = getattr(self, name, None)
            if name in ("self", "tagger"):  # the tagger's own information is kept with it
                continue
            if isinstance(v, os.PathLike):
                v = os.fspath(v)  # (its repr, "PosixPath(...)", named no file)
            if isinstance(v, str) and "\n" in v:
                v = f"<{len(v.splitlines())} lines of template text>"
            elif _numpy_bool(v):
                v = bool(v)  # as True is recorded (it was 'np.True_')
            elif isinstance(v, numbers.Integral) and not isinstance(v, bool):
                v = int(v)  # a numpy integer: the same model as the int, the same bytes
            elif isinstance(v, numbers.Real) and not isinstance(v, bool):
                v = float(v)
            params[name] = v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)
        info: dict[str, Any] = {
            "depfs": __version__,
            "kind": self.kind,
            "params": params,
            "train": self.train_info_,
            # Timings left out: the same training gives the same file, byte for byte.
            "history": [{k: v for k, v in row.items() if k != "seconds"} for row in self.history_],
            "best_epoch": self.best_epoch_,
        }
        curve = getattr(self, "margin_curve_", None)
        if curve:  # a prefix-margin model's dev sweep: its templates per decision (issue 15)
            info["margin_curve"] = curve
        return info

    @classmethod
    def from_model(cls, model: Any) -> Any:
        """A fitted instance of this class around a Rust model of its kind."""
        want = cls._core_model
        if want is not None and not isinstance(model, want):  # (an AttributeError deep in)
            raise TypeError(
                f"{cls.__name__}.from_model needs a depfs._core.{want.__name__}, "
                f"got {type(model).__name__}"
            )
        parser = cls(**{**cls._recorded_params(model), **cls._params_of(model)})
        parser.model_ = model
        return parser

    @classmethod
    def _recorded_params(cls, model: Any) -> dict[str, Any]:
        """The constructor arguments recorded in a loaded model's training information
        (``depfs info``), so that a loaded model's settings are those it was trained with
        and ``fit`` on it trains with them too (they were the defaults: another template
        set, seed, table size and number of epochs). Only what the record holds as
        itself: a number, flag or None, or a string where the argument takes one (not
        the note that replaces inline template text, nor the repr of another object);
        what the model's weights decide (its templates) is read off the model instead."""
        try:
            recorded = json.loads(getattr(model, "info", "") or "{}").get("params", {})
        except (ValueError, AttributeError):
            return {}
        if not isinstance(recorded, dict):
            return {}
        params = {}
        for name, p in inspect.signature(cls.__init__).parameters.items():
            if name in ("self", "tagger") or name not in recorded:
                continue
            value, default = recorded[name], p.default
            if value is None or isinstance(value, bool):
                ok = default is None or isinstance(default, bool)
            elif isinstance(value, (int, float)):
                ok = default is None or (
                    isinstance(default, (int, float)) and not isinstance(default, bool)
                )
            elif isinstance(value, str):
                ok = not value.startswith("<") and (
                    isinstance(default, str) or name in _RECORDED_PATHS
                )
            else:
                ok = False
            if ok:
                params[name] = value
        return params

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Any:
        """Reads a model file of this class's kind."""
        from .models import check_model_file

        check_model_file(path)  # (a FIFO: refused as by depfs.load, not read or waited on)
        # One read of the file: the model and the tagger stored inside it.
        _, model, tagger = _core.load_model(Path(path), cls.kind)
        return cls.with_tagger(cls.from_model(model), tagger)

    @staticmethod
    def with_tagger(parser: Any, tagger: Any) -> Any:
        """`parser` with the Rust `tagger` read from its file (if any) as its ``tagger_``."""
        if tagger is not None:
            from .tagger import Tagger

            # The constructor's argument too: a refit of the loaded parser keeps its
            # tagger (it dropped it, and saved the file without it).
            parser.tagger = parser.tagger_ = Tagger.from_model(tagger)
        return parser


T = TypeVar("T")


def model_file_bytes(save: Callable[[Path], Any]) -> bytes:
    """The bytes of the model file `save(path)` writes (in a temporary folder, removed
    after): how a Rust model, which does not pickle, travels. O(model size)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="depfs-") as folder:
        path = Path(folder) / "model.depfs"
        save(path)
        return path.read_bytes()


def from_model_file_bytes(data: bytes, load: Callable[[Path], T]) -> T:
    """`load(path)` of a model file holding `data` (see :func:`model_file_bytes`)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="depfs-") as folder:
        path = Path(folder) / "model.depfs"
        path.write_bytes(data)
        return load(path)


class SkippedSentencesWarning(UserWarning):
    """Training skipped training sentences it cannot use (the message says how many,
    why, and the first)."""


#: Why a training sentence with no UPOS is skipped (`without_untagged`).
UNTAGGED_WHY = "no UPOS on any word, where the others are tagged"


def without_untagged(train: _core.Treebank) -> _core.Treebank:
    """`train` without its sentences that have no UPOS on any word when others have
    one (a tagged treebank and raw text joined by mistake), with a
    :class:`SkippedSentencesWarning`. Learning from both, a parser reads the tags yet
    would need none (a column is needed when most training words fill it) and parse
    untagged text silently badly; a tagger would learn `_` as a tag. O(words)."""
    untagged = train.untagged_sentences()
    if not untagged or len(untagged) == len(train):
        return train
    skip = set(untagged)
    sid = train[untagged[0]].sent_id
    first = f"first at sentence {untagged[0] + 1}" + (f" (sent_id {sid})" if sid else "")
    warnings.warn(
        SkippedSentencesWarning(
            f"{len(untagged)} of {len(train)} training sentences skipped: {UNTAGGED_WHY}, {first}"
        ),
        stacklevel=4,
    )
    return train.select([i for i in range(len(train)) if i not in skip])


def used_info(
    train: Any, used: list[int], words: int | None = None, why: Callable[[int], str] | None = None
) -> dict[str, Any]:
    """``train_info_`` of training on the sentences `used` (indices in order) of `train` (a
    Treebank, or a TrainingSet with their `words`), and one :class:`SkippedSentencesWarning`
    when some are left out, saying how many of how many, why (`why(s)`; default: no
    complete tree) and the first. O(sentences)."""
    total = len(train) if isinstance(train, _core.Treebank) else train.n_sentences
    if len(used) < total:
        kept, groups = set(used), {}  # reason -> skipped sentences
        for s in range(total):
            if s not in kept:
                groups.setdefault(why(s) if why else "no complete tree", []).append(s)

        def first(ss: list[int]) -> str:
            sid = train[ss[0]].sent_id if isinstance(train, _core.Treebank) else None
            return f"first at sentence {ss[0] + 1}" + (f" (sent_id {sid})" if sid else "")

        detail = "; ".join(
            f"{reason}, {first(ss)}" if len(groups) == 1 else f"{len(ss)} {reason}, {first(ss)}"
            for reason, ss in groups.items()
        )
        # stacklevel: the caller of a model's fit (model.fit -> TrainableModel.fit -> here).
        warnings.warn(
            SkippedSentencesWarning(
                f"{total - len(used)} of {total} training sentences skipped: {detail}"
            ),
            stacklevel=5,
        )
    if words is None:
        words = train.n_words if len(used) == total else sum(len(train[s]) for s in used)
    return {"sentences": len(used), "words": words}


class TaggedWarning(UserWarning):
    """Untagged input was tagged by the parser's own tagger before parsing."""


def tagged_note(tagger: Any) -> str:
    """What :class:`TaggedWarning` and ``depfs parse`` say when a parser's own tagger tags."""
    return (
        "the input leaves tag columns empty: tagged first by the model's own tagger "
        f"({', '.join(tagger.columns_)} predicted)"
    )


def _check_tagger(tagger: Any) -> None:
    from .tagger import Tagger

    if not isinstance(tagger, Tagger):
        raise TypeError(f"tagger must be a fitted depfs.Tagger, got {type(tagger).__name__}")
    tagger._model()  # a clear error when it is not fitted


def _check_tagger_fits(needed: list[str], tagger: Any) -> None:
    """Refuses, before training, a parser's `tagger` that untagged input could not
    use: the parser (reading the columns `needed`) reads none it predicts (its training
    data left them empty: the tagger would never run), or one it does not predict
    (every untagged parse would be refused)."""
    tags = [c for c in needed if c != "FORM"]
    if not tags:
        raise ValueError(
            "tagger: the training treebank leaves the tag columns empty, so the parser reads "
            "none and its tagger would never run: train on tagged data (depfs jackknife "
            "gives tags like those the tagger predicts)"
        )
    lacking = [c for c in tags if c not in tagger.columns_]
    if lacking:
        raise ValueError(
            f"tagger: the parser reads {', '.join(tags)}, and the tagger predicts only "
            f"{', '.join(tagger.columns_)}: untagged input would leave {', '.join(lacking)} "
            "empty, and every such parse be refused; give a tagger trained on data with "
            "those columns"
        )


class Stagewise:
    """A prefix-margin trainer driven stagewise, the baseline of Strubell et al. 2015
    (§6.1): epoch e trains only template e // per_stage (its trainer's ``set_stage``),
    the templates before it frozen."""

    def __init__(self, trainer: Any, per_stage: int) -> None:
        self.trainer, self.per_stage, self.done = trainer, per_stage, 0

    def epoch(self) -> dict[str, float]:
        self.trainer.set_stage(self.done // self.per_stage)
        self.done += 1
        return self.trainer.epoch()

    def model(self) -> Any:
        return self.trainer.model()


def interruptible(call: Callable[[], Any]) -> Any:
    """``call()`` (a Rust call that releases the GIL, e.g. a training epoch) run in a
    helper thread, so that Ctrl-C and SIGTERM reach the main thread at once instead of
    when the call returns (Python runs signal handlers only between bytecodes of the
    main thread). On an interruption the call is abandoned: its thread is a daemon and
    its result is dropped."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = call()
        except BaseException as err:  # handed to the caller below
            out["error"] = err

    worker = threading.Thread(target=run, name="depfs-call", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.1)
    if "error" in out:
        raise out["error"]
    return out["value"]


def _progress(total: int, label: str) -> Any:
    import click

    bar = click.progressbar(length=total, label=label, file=None)
    bar.render_progress()
    return bar


def missing_columns(columns: Iterable[str], treebank: _core.Treebank) -> list[str]:
    """The columns among `columns` that `treebank` leaves empty ('_' on most words).

    FEATS alone is never missing: tagged text leaves it '_' on many words (a third of
    en_ewt's; most words of a sentence of punctuation, particles and names), so it counts
    only beside another empty column, the sign of untagged input. O(words)."""
    filled = set(treebank.filled_columns())
    missing = [c for c in columns if c not in filled]
    return [] if missing == ["FEATS"] else missing


def needs_tagger(
    columns: Iterable[str], predicted: Iterable[str], treebank: _core.Treebank
) -> bool:
    """Whether `treebank` leaves empty a column among `columns` (what a parser reads) that a
    tagger predicts (`predicted`): the rule of ``parse(tag=None)``."""
    return tagger_fills(missing_columns(columns, treebank), predicted)


def tagger_fills(missing: Iterable[str], predicted: Iterable[str]) -> bool:
    """Whether a tagger predicting `predicted` fills one of the `missing` columns: the rule
    of :func:`needs_tagger`, for a caller that has the missing columns at hand (the spaCy
    component, deciding doc by doc)."""
    return bool(set(missing) & set(predicted))


def unfilled_columns(model: Any, treebank: _core.Treebank, tagger: Any = None) -> list[str]:
    """The columns `model` reads that `treebank` leaves empty (:func:`missing_columns`),
    but those `tagger` predicted (what the tagger just predicted is its answer, '_'
    included): the rule of ``parse`` and of a parser's dev set."""
    missing = missing_columns(model.input_columns, treebank)
    if tagger is not None:
        missing = [c for c in missing if c not in tagger.columns_]
    return missing


def check_columns(
    model: Any,
    treebank: _core.Treebank,
    allow_missing_tags: bool,
    tagger: Any = None,
    first_sentence: int = 0,
) -> None:
    """Raises MissingColumnsError when `treebank` leaves empty a column `model` needs
    (`tagger`: the tagger that tagged it, named in the message), or when a model that
    reads UPOS is given sentences without one on any word among tagged ones (the column
    is filled overall: a half-tagged file). `first_sentence`: the number of sentences
    before `treebank` in its input (a batch of a stream), for the message."""
    if allow_missing_tags:
        return
    from .errors import MissingColumnsError

    missing = unfilled_columns(model, treebank, tagger)
    if not missing:
        untagged = [] if "UPOS" not in model.input_columns else treebank.untagged_sentences()
        if untagged and (tagger is None or "UPOS" not in tagger.columns_):
            more = f" (and {len(untagged) - 1} more)" if len(untagged) > 1 else ""
            raise MissingColumnsError(
                f"sentence {first_sentence + untagged[0] + 1}{more} has no UPOS on any "
                "word, and the model reads UPOS: a parse of it would be silently bad. "
                "Tag the input first (depfs tag, or depfs parse --tagger TAGGER), or "
                "allow it anyway (allow_missing_tags=True, --allow-missing-tags)"
            )
        return

    where = "the input"
    if first_sentence:  # a later batch of a stream
        where = f"sentences {first_sentence + 1}-{first_sentence + len(treebank)} of the input"
    problem = (
        f"{where} leaves {', '.join(missing)} empty ('_' on most words), and the model "
        f"was trained with {', '.join(model.input_columns)}: a parse would be silently bad. "
    )
    if tagger is not None:
        raise MissingColumnsError(
            problem.replace(f"{where} leaves", f"{where}, once tagged, leaves")
            + f"The tagger predicts only {', '.join(tagger.columns_)}; use a tagger trained "
            "on data with those columns, or allow it anyway (--allow-missing-tags)"
        )
    raise MissingColumnsError(
        problem + "Tag the input first (depfs parse --tagger TAGGER, or a parser trained "
        "with depfs train --tagger; in Python parser.tagger_), or allow it anyway "
        "(allow_missing_tags=True, --allow-missing-tags)"
    )
