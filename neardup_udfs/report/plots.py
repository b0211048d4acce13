"""The report's matplotlib figures, each returned as a ``data:image/png;base64,...`` URI.

Figures are drawn on the Agg backend with fixed margins (pyplot is imported on first use and
never opens a window) and closed once encoded, so a page embeds them inline and loads nothing
from the network.
"""

from __future__ import annotations

import base64
import io
import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from neardup_udfs.report.data import SIMILARITY_STEPS, Scores

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


DISCRETE_VALUES = 100
"""At most this many distinct similarity values are plotted one bar each (no binning)."""
SIMILARITY_BINS = 40
FILL, EDGE = "#73d216", "#4e9a06"


@contextmanager
def _figure(width: float, height: float) -> Iterator[tuple[Figure, Axes]]:
    """A new pyplot figure on the Agg backend, closed on exit."""
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")  # before pyplot's first import: never opens a window
    import matplotlib.pyplot as plt

    # Fixed margins (in inches, the same on every figure): a layout engine measures every
    # label first and costs a second or more per report.
    fig, ax = plt.subplots(figsize=(width, height), dpi=100)
    fig.subplots_adjust(
        left=0.95 / width, right=1 - 0.2 / width, bottom=0.6 / height, top=1 - 0.4 / height
    )
    try:
        yield fig, ax
    finally:
        plt.close(fig)


def _png_uri(fig: Figure) -> str:
    """The figure as a ``data:image/png;base64,...`` URI."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _plot_cluster_sizes(histogram: Mapping[int, int]) -> str:
    """Log-log plot of the number of clusters of each size (a data URI)."""
    sizes = sorted(histogram)
    with _figure(7, 3.6) as (fig, ax):
        ax.plot(sizes, [histogram[s] for s in sizes], "o", color="#3465a4", markersize=5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("cluster size (documents)")
        ax.set_ylabel("number of clusters")
        ax.set_title("Cluster size distribution")
        ax.grid(True, which="major", alpha=0.3)
        return _png_uri(fig)


def _draw_distances(ax: Axes, counts: npt.NDArray[np.int64], k: float) -> float:
    """One bar per integer distance, up to k + 1 at least; returns where the k line goes."""
    from matplotlib.ticker import MaxNLocator

    top = int(max(len(counts) - 1, k + 1))
    counts = np.pad(counts, (0, top + 1 - len(counts)))
    ax.bar(np.arange(top + 1), counts, width=0.9, color=FILL, edgecolor=EDGE)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("Hamming distance (bits)")
    return k + 0.5


def _draw_similarities(ax: Axes, scores: Scores, threshold: float) -> None:
    """Similarities as one bar per distinct value when they are few (MinHash estimates are
    multiples of 1/k, which fixed-width bins would alias), else as a 40-bin histogram."""
    counts = scores.counts if scores.counts is not None else np.zeros(1, dtype=np.int64)
    occupied = np.flatnonzero(counts)
    values = occupied / SIMILARITY_STEPS
    lo = max(min(scores.low, threshold, 0.99), 0.0)
    if len(occupied) <= DISCRETE_VALUES:
        gap = float(np.diff(values).min()) if len(values) > 1 else 0.01
        ax.bar(values, counts[occupied], width=min(0.8 * gap, 0.02), color=FILL, edgecolor=EDGE)
    else:
        edges = np.linspace(math.floor(lo * 100) / 100, 1.0, SIMILARITY_BINS + 1)
        ax.hist(values, bins=edges.tolist(), weights=counts[occupied], color=FILL, edgecolor=EDGE)
    ax.set_xlim(lo - 0.03 * (1.0 - lo) - 0.005, 1.01)
    ax.set_xlabel("Jaccard similarity (MinHash estimate)")


def _plot_scores(scores: Scores, threshold: float) -> str:
    """Histogram of pair similarity (or Hamming distance) with the threshold line."""
    with _figure(7, 3.6) as (fig, ax):
        if scores.metric == "distance":
            counts = scores.counts if scores.counts is not None else np.zeros(0, dtype=np.int64)
            line = _draw_distances(ax, counts, threshold)
            label = f"k = {threshold:g} (distance ≤ k is a duplicate)"
        else:
            _draw_similarities(ax, scores, threshold)
            line, label = threshold, f"threshold = {threshold:g}"
        ax.axvline(line, color="#cc0000", linestyle="--", linewidth=1.5, label=label)
        ax.set_ylabel("pairs")
        ax.set_title(f"Verified {scores.metric} ({scores.count:,} values)")
        ax.legend(loc="best")
        return _png_uri(fig)


def _plot_bands(bands: Sequence[tuple[int, int, int]]) -> str:
    """Candidate and verified pairs per LSH band (or SimHash block), side by side, log y."""
    with _figure(7, 3.6) as (fig, ax):
        x = np.arange(len(bands))
        ax.bar(x - 0.2, [c for _, c, _ in bands], width=0.4, color="#c4a000", label="candidates")
        ax.bar(x + 0.2, [v for _, _, v in bands], width=0.4, color=FILL, label="verified")
        ax.set_xticks(x, [str(b) for b, _, _ in bands])
        ax.set_yscale("symlog", linthresh=1)
        ax.set_xlabel("band (MinHash) or block (SimHash)")
        ax.set_ylabel("pairs")
        ax.set_title("Candidate vs verified pairs per band")
        ax.legend(loc="best")
        return _png_uri(fig)


def _plot_timings(stages: Sequence[tuple[str, float]]) -> str:
    """Horizontal bar chart of the wall seconds of each stage, first stage on top."""
    with _figure(7, 0.4 * len(stages) + 1.2) as (fig, ax):
        names = [s for s, _ in stages]
        ax.barh(names, [t for _, t in stages], color="#75507b")
        ax.invert_yaxis()
        ax.set_xlabel("wall seconds")
        ax.set_title("Stage timings")
        ax.grid(True, axis="x", alpha=0.3)
        return _png_uri(fig)
