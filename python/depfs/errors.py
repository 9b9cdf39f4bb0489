"""Exception classes of depfs. Every error the Rust core raises is one of these."""

from __future__ import annotations

from typing import Any


class DepfsError(Exception):
    """Base class of every depfs error."""


class FormatError(DepfsError, ValueError):
    """Malformed treebank input; the message names file, line and problem."""


class DepfsIOError(DepfsError, OSError):
    """A file could not be read or written."""


class AlignmentError(DepfsError, ValueError):
    """Gold and system files whose words do not line up."""


class TemplateError(DepfsError, ValueError):
    """A feature template that does not parse or compile."""


class ModelError(DepfsError):
    """A model file that is truncated, corrupted or of an unknown version."""


class NoSpanningTreeError(DepfsError, ValueError):
    """A decoder found no spanning tree among the arcs that are not -inf."""


class MissingExtraError(DepfsError, ImportError):
    """A feature that needs an optional dependency that is not installed; the message
    says which extra installs it."""


def optional_import(module: str, package: str, extra: str, what: str) -> Any:
    """`import module`, or a :class:`MissingExtraError` saying that `what` needs
    `package` (``pip install 'depfs[extra]'``)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f"{what} needs {package}, which is not installed: pip install 'depfs[{extra}]'"
        ) from None


class WorkersLostError(DepfsError, RuntimeError):
    """The worker processes of a pool or a Dask cluster kept dying on a task (out of
    memory, killed): not a bug of depfs, and not of the task's input."""


class MissingColumnsError(DepfsError, ValueError):
    """Input that lacks columns the model reads (e.g. untagged text for a model trained
    on tags): parsing it would give a silently bad parse."""


__all__ = [
    "DepfsError",
    "FormatError",
    "DepfsIOError",
    "AlignmentError",
    "TemplateError",
    "ModelError",
    "MissingExtraError",
    "NoSpanningTreeError",
    "MissingColumnsError",
    "WorkersLostError",
]
