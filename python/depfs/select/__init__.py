"""Feature-set selection: the engine the search methods share, the forward wrapper,
and grouping.

    from depfs.select import forward_wrapper

    if __name__ == "__main__":  # (in a script: the worker processes import it again)
        result = forward_wrapper("nilsson_nugues", "train.conllu", "dev.conllu",
                                 parser="arc-eager", epochs=1, max_length=20,
                                 log="wrapper.jsonl")
        print(result.order, result.scores)

Candidates (a parser family, templates, training options) are trained on train and scored
on dev in worker processes (:mod:`depfs.select.engine`): a local process pool, or any
:class:`concurrent.futures.Executor` such as a Dask cluster's (``dask_executor``). Every
result is appended to a JSONL log, and a rerun with the same log evaluates nothing twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:
    from .engine import Candidate, Engine, Log, Result, dask_executor, evaluate_candidate
    from .groups import (
        cut_groups,
        groups_text,
        order_text,
        read_groups,
        read_order,
        read_order_base,
        read_order_file,
    )
    from .plot import plot_curves
    from .wrapper import Step, WrapperResult, forward_wrapper, planned_evaluations

__all__ = [
    "Candidate",
    "Engine",
    "Log",
    "Result",
    "Step",
    "WrapperResult",
    "cut_groups",
    "dask_executor",
    "evaluate_candidate",
    "forward_wrapper",
    "groups_text",
    "order_text",
    "planned_evaluations",
    "plot_curves",
    "read_groups",
    "read_order",
    "read_order_base",
    "read_order_file",
]

# Imported on first use: `depfs --help` loads this package for its `select` command.
__getattr__, __dir__ = attach(
    __name__,
    {
        **dict.fromkeys(
            ["Candidate", "Engine", "Log", "Result", "dask_executor", "evaluate_candidate"],
            ".engine",
        ),
        **dict.fromkeys(
            [
                "cut_groups",
                "groups_text",
                "order_text",
                "read_groups",
                "read_order",
                "read_order_base",
                "read_order_file",
            ],
            ".groups",
        ),
        "plot_curves": ".plot",
        **dict.fromkeys(
            ["Step", "WrapperResult", "forward_wrapper", "planned_evaluations"], ".wrapper"
        ),
    },
)
