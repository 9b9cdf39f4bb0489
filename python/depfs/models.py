"""`depfs.load(path)`: reads any depfs model file and returns the parser it holds."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from . import _core

__all__ = ["load", "model_info"]


def load(path: str | os.PathLike[str]) -> Any:
    """Loads a model file; returns e.g. a :class:`depfs.GraphParser`."""
    check_model_file(path)
    return _wrap(*_core.load_model(Path(path)))


def check_model_file(path: str | os.PathLike[str]) -> None:
    """Refuses a model "file" that is a pipe (`<(cat m.depfs)`, `/dev/stdin`): a model is
    read more than once (its header, then the whole), which a pipe cannot give."""
    from .errors import ModelError
    from .files import is_stream

    if not os.fspath(path):  # (it said ".: is a directory")
        raise ValueError("the model path is empty")
    if is_stream(os.fspath(path)):
        raise ModelError(
            f"{os.fspath(path)}: a pipe or device, not a model file (give the file's path)"
        )


def _wrap(kind: str, model: Any, tagger: Any) -> Any:
    """The Python model around a Rust `model` of `kind` (and the `tagger` stored with it)."""
    if kind == "ensemble":
        from .arceager import Ensemble

        e = Ensemble.__new__(Ensemble)
        e.model_ = model
        return e
    cls: Any
    if kind == "graph":
        from .graph import GraphParser as cls
    elif kind == "arc-eager":
        from .arceager import ArcEagerParser as cls
    else:
        from .tagger import Tagger as cls
    return cls.with_tagger(cls.from_model(model), tagger)


def model_info(path: str | os.PathLike[str]) -> dict[str, Any]:
    """What a model file holds: kind, format version, size on disk, the input columns it
    needs, its templates and labels, and what training did (``training``: the
    constructor's arguments, training data size and file, epochs with dev scores, the
    epoch kept; empty for files written before format version 5), and ``tagger``: the
    tagger stored inside a parser's file (its columns, templates and training; None
    when there is none)."""
    check_model_file(path)
    version, kind = _core.model_file_header(path)
    loaded = load(path)
    m = loaded.model_
    if kind == "graph":
        templates = {
            "arc": len(m.arc_templates),
            "labeler": len(m.labeler_templates),
            **({"sibling": len(m.sibling_templates)} if m.order == 2 else {}),
        }
    elif kind == "arc-eager":
        templates = {"config": len(m.templates)}
    elif kind == "tagger":
        templates = _tagger_templates(m)
    else:
        templates = {f"member {i + 1}": len(t) for i, t in enumerate(m.member_templates)}
    labels = getattr(m, "labels", None)
    tagger = getattr(loaded, "tagger_", None)
    return {
        "path": os.fspath(path),
        "kind": kind,
        "format_version": version,
        "size_bytes": os.path.getsize(path),
        "input_columns": list(m.input_columns),
        "templates": templates,
        "labels": len(labels) if labels is not None else None,
        # Of those, the labels of arcs lifted by pseudo-projective parsing (`dep↑head`):
        # the parser's own, never written (a parse lowers them back).
        "lifted_labels": sum("↑" in x for x in labels) if labels is not None else None,
        "training": json.loads(m.info) if m.info else {},
        "tagger": None if tagger is None else _tagger_info(tagger._model()),
        # A prefix-margin model's margins (Strubell et al. 2015): train, accurate, fast.
        "margin_presets": getattr(m, "margin_presets", None),
        # A cascade's stages (template counts; the full model decides the rest), else None.
        "cascade": list(c) if (c := getattr(m, "cascade", None)) is not None else None,
        # A DynFS model's groups and policy threshold (He et al. 2013).
        "dynfs": _dynfs_info(
            getattr(m, "dynfs", None),
            len(m.arc_templates),
            getattr(m, "dynfs_prune_margin", None),
            getattr(m, "dynfs_label_stop", None),
            getattr(m, "dynfs_label_dict", None),
            getattr(m, "dynfs_lex", None) is not None,
            getattr(m, "dynfs_label_prefix_trained", None),
            getattr(m, "dynfs_tree_margin", None),
        )
        if kind == "graph"
        else None,
    }


def _dynfs_info(
    d: Any,
    n_arc: int,
    prune_margin: float | None = None,
    label_stop: Any = None,
    label_dict: Any = None,
    lexical: bool = False,
    label_prefix_trained: bool | None = None,
    tree_margin: float | None = None,
) -> dict[str, Any] | None:
    """Group sizes: first-order groups, then (second order) sibling groups, whose
    template indices follow the arc templates'; the prune margin, the tree margin and the
    labeler's stop margin (None: none); the entries of the stop's label dictionary (None:
    none); whether the policy has lexical features (group 1's features of the arc, He et
    al. §5.4); whether the stop adds a prefix-trained labeler (None: no stop)."""
    if d is None:
        return None
    groups, _, threshold = d
    return {
        "groups": [len(g) for g in groups if g[0] < n_arc],
        "sibling_groups": [len(g) for g in groups if g[0] >= n_arc],
        "threshold": threshold,
        "prune_margin": prune_margin,
        "tree_margin": tree_margin,
        "label_margin": None if label_stop is None else label_stop[1],
        "label_dict": None if label_dict is None else len(label_dict),
        "label_prefix_trained": label_prefix_trained,
        "policy_lexical": lexical,
    }


def _tagger_templates(t: Any) -> dict[str, int]:
    """A tagger's templates per column, and its backward pass's if it has one ("backward
    UPOS", or "backward XPOS" for a pass that predicts XPOS)."""
    counts = {c: len(t.templates(c)) for c in t.columns}
    backward = t.backward_templates
    if backward is not None:
        counts[f"backward {t.backward_column}"] = len(backward)
    return counts


def _tagger_info(t: Any) -> dict[str, Any]:
    """What `model_info` says of a tagger stored inside a parser's model file."""
    return {
        "columns": list(t.columns),
        "templates": _tagger_templates(t),
        "training": json.loads(t.info) if t.info else {},
    }
