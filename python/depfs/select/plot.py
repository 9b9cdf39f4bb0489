"""Selection curves: dev score against the number of templates (matplotlib PNG)."""

from __future__ import annotations

import io
import os
from collections.abc import Sequence

from ..files import write_bytes_atomic


def plot_curves(
    path: str | os.PathLike[str],
    curves: Sequence[tuple[str, Sequence[float]]],
    metric: str,
    title: str = "",
    reference: Sequence[tuple[str, float]] = (),
) -> None:
    """One line per (label, scores after each prefix); horizontal lines for
    `reference` scores (e.g. the full set). Written atomically."""
    from ..errors import optional_import

    optional_import("matplotlib", "matplotlib", "plot", "A plot (--plot)").use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    for label, scores in curves:
        ax.plot(range(1, len(scores) + 1), scores, marker=".", label=label)
    for label, y in reference:
        ax.axhline(y, linestyle="--", linewidth=0.8, color="grey")
        ax.annotate(label, (1, y), textcoords="offset points", xytext=(2, 2), fontsize=8)
    ax.set_xlabel("templates")
    ax.set_ylabel(f"dev {metric.upper()}")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    if len(curves) > 1:
        ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    write_bytes_atomic(path, buf.getvalue())
