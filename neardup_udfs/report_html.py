"""``report.html``: a self-contained, readable page about one dedup job's output directory.

The page is built from the files of the output directory only (pyarrow, no Spark): the
counts, per-stage timings, plots (cluster sizes, verified-pair similarity or Hamming
distance, stage timings) embedded as base64 PNG data URIs, side-by-side views of sample
clusters with the passages members share with their representative marked, the hot LSH
buckets, and the exact job config with the preset versions. It loads nothing from the
network and needs no JavaScript. Every document text, id and config value is HTML-escaped.

Inputs (all written by ``jobs/dedup.py``; only ``report.json`` is required):

- ``report.json``: ``counts``, ``seconds``, ``pipeline``, ``config``,
  ``cluster_size_histogram``, ``hot_buckets``, ``neardup_version``.
- ``clusters/``: parquet ``doc_id``, ``cluster_id``, ``is_representative`` and either
  ``similarity`` (double, MinHash) or ``distance`` (int, SimHash).
- ``pairs/`` (optional): parquet ``a``, ``b`` and ``similarity`` or ``distance``.
- ``samples/`` (optional): the member texts of the clusters shown side by side.

``samples/`` schema (a parquet dataset, one row per shown document):

====================  ================  ==================================================
column                type              meaning
====================  ================  ==================================================
``cluster_id``        string, not null  the cluster (= its representative's ``doc_id``)
``doc_id``            string, not null  the document
``is_representative`` bool, not null    True for the cluster's representative (one a cluster)
``similarity``        double, nullable  MinHash runs: Jaccard to the representative
``distance``          int, nullable     SimHash runs: Hamming distance to the representative
``text``              string, nullable  the document text, possibly truncated by the job
``truncated``         bool, nullable    True when the job cut ``text`` short
====================  ================  ==================================================

Exactly one of ``similarity`` / ``distance`` is present, as in ``clusters/``. The job picks
the clusters (``neardup_udfs.stages.samples.sample_clusters``: the largest, then a
reproducible sample) and writes every member of each; the report shows at most
:data:`MEMBERS_SHOWN` members a cluster, least similar first, and counts the rest.

The images job's page (thumbnails instead of texts) is ``neardup_udfs.report_images``,
built with this module's sections and helpers.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.dataset as ds

from neardup_udfs.config import DEFAULT_THRESHOLD, KGRAM_BYTES, WINDOW
from neardup_udfs.io.storage import ArrowStorage, Storage, StorageError, join
from neardup_udfs.kernels import winnow
from neardup_udfs.presets import get_preset, preset_names

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "DEFAULT_THRESHOLD",
    "MEMBERS_SHOWN",
    "ReportError",
    "build_report",
    "write_report_html",
]

REPORT_JSON = "report.json"
REPORT_HTML = "report.html"
MEMBERS_SHOWN = 4
"""Members shown per side-by-side cluster (besides the representative)."""
TEXT_LIMIT = 4000
"""Characters of a document shown; the rest is replaced by a "… (N more characters)" note."""
WINNOW_K, WINNOW_W = KGRAM_BYTES, WINDOW  # overlaps are highlighted as the spans job finds them
HOT_BUCKETS_SHOWN = 20
STAGES = (
    "read",
    "normalize",
    "exact",
    "fingerprint",
    "candidates",
    "verify",
    "against",
    "bands",
    "cluster",
    "components",  # reports of runs before the cluster stage
    "select",
    "write",
    "report",
    "update-index",
)
SIMILARITY_STEPS = 10_000
"""Similarities are counted rounded to 1/10,000 (fine enough to keep MinHash's 1/k steps)."""
DISCRETE_VALUES = 100
"""At most this many distinct similarity values are plotted one bar each (no binning)."""
SIMILARITY_BINS = 40
FILL, EDGE = "#73d216", "#4e9a06"

F64 = npt.NDArray[np.float64]
Ranges = list[tuple[int, int]]
Segments = list[tuple[str, bool]]


class ReportError(ValueError):
    """The output directory cannot be reported on; the message names the directory or file."""


# --- reading the output directory -----------------------------------------------------------------


class _Output:
    """An output directory read through pyarrow's filesystem of its path or URI."""

    def __init__(self, location: str | os.PathLike[str]) -> None:
        self.shown = str(location)
        try:
            self.store = ArrowStorage(self.shown)
        except StorageError as e:
            raise ReportError(str(e)) from None

    def path(self, name: str) -> str:
        return self.store.path(join(self.shown, name))

    def __str__(self) -> str:
        return self.shown


def _load_report(out: _Output) -> dict[str, Any]:
    """report.json as a dict; ReportError naming the directory when missing or unreadable."""
    try:
        raw = out.store.read_bytes(join(out.shown, REPORT_JSON))
        if raw is None:
            raise ReportError(f"{out.shown!r} has no {REPORT_JSON} (not a dedup output?)")
        data = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ReportError(f"cannot read {REPORT_JSON} in {out.shown!r}: {e}") from e
    if not isinstance(data, dict):
        raise ReportError(f"{REPORT_JSON} in {out.shown!r} is not a JSON object")
    return data


def _dataset(out: _Output, name: str) -> ds.Dataset | None:
    """The parquet dataset ``name`` of the output (None when absent); ReportError when
    unreadable."""
    if out.store.kind(join(out.shown, name)) is None:
        return None
    try:
        return ds.dataset(out.path(name), format="parquet", filesystem=out.store.fs)
    except (OSError, pa.ArrowException) as e:
        raise ReportError(f"cannot read parquet {join(out.shown, name)!r}: {e}") from e


def _read(dataset: ds.Dataset, columns: Sequence[str], path: str) -> pa.Table:
    """The given columns of ``dataset``; ReportError naming ``path`` on failure."""
    try:
        return dataset.to_table(columns=list(columns))
    except (OSError, pa.ArrowException) as e:
        raise ReportError(f"cannot read parquet {path!r}: {e}") from e


def _score_name(names: Sequence[str]) -> str | None:
    """``similarity`` or ``distance``, whichever of ``names`` is one (None if neither)."""
    return next((n for n in ("similarity", "distance") if n in names), None)


def _score_column(dataset: ds.Dataset) -> str | None:
    """``similarity`` or ``distance``, whichever the dataset has (None if neither)."""
    return _score_name(dataset.schema.names)


@dataclass
class Scores:
    """A streamed summary of a similarity or distance column (no values kept in memory).

    ``counts[i]`` counts the values that round to ``i``: for ``similarity``, to
    ``i / SIMILARITY_STEPS`` (values outside [0, 1] are clipped); for ``distance``, to the
    integer distance ``i`` (negative values count as 0).
    """

    metric: str
    source: str
    count: int = 0
    low: float = math.inf
    high: float = -math.inf
    total: float = 0.0
    counts: npt.NDArray[np.int64] | None = None

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Scores:
        """The summary report.json stores as ``scores`` (``stages.summaries.score_summary``:
        the count, low, high, total and the nonzero bins as ``steps`` and ``counts``)."""
        steps = np.asarray(data.get("steps") or [], dtype=np.int64)
        counts = np.zeros(int(steps.max()) + 1 if len(steps) else 0, dtype=np.int64)
        counts[steps] = np.asarray(data.get("counts") or [], dtype=np.int64)
        count = int(data.get("count") or 0)
        return Scores(
            str(data["metric"]),
            str(data.get("source", "")),
            count,
            float(data["low"]) if count else math.inf,
            float(data["high"]) if count else -math.inf,
            float(data.get("total") or 0.0),
            counts,
        )

    def add(self, values: F64) -> None:
        """Fold a batch of finite values into the summary."""
        if len(values) == 0:
            return
        self.count += len(values)
        self.low = min(self.low, float(values.min()))
        self.high = max(self.high, float(values.max()))
        self.total += float(values.sum())
        if self.metric == "distance":
            bins = np.bincount(np.clip(np.rint(values), 0, None).astype(np.int64))
        else:
            steps = np.clip(np.rint(values * SIMILARITY_STEPS), 0, SIMILARITY_STEPS)
            bins = np.bincount(steps.astype(np.int64), minlength=SIMILARITY_STEPS + 1)
        old = self.counts if self.counts is not None else np.zeros(0, dtype=np.int64)
        size = max(len(old), len(bins))
        self.counts = np.pad(old, (0, size - len(old))) + np.pad(bins, (0, size - len(bins)))


def _finite(column: pa.Array | pa.ChunkedArray) -> F64:
    """The non-null values of a numeric column as float64, NaNs and infinities dropped."""
    values = np.asarray(column.drop_null().to_numpy(), dtype=np.float64)
    return values[np.isfinite(values)]


def _scan_scores(
    out: _Output, name: str, source: str, members_only: bool, metric_hint: str
) -> tuple[str, Scores | None]:
    """(metric, summary) of the score column of dataset ``name``, one batch at a time.

    ``members_only`` skips representatives (clusters/). The summary is None when the dataset
    is absent, has no score column or holds no finite score; the metric is then the hint.
    """
    dataset = _dataset(out, name)
    metric = _score_column(dataset) if dataset is not None else None
    if dataset is None or metric is None:
        return metric_hint, None
    scores = Scores(metric, source)
    where = ~ds.field("is_representative") if members_only else None
    try:
        for batch in dataset.to_batches(columns=[metric], filter=where):
            scores.add(_finite(batch.column(0)))
    except (OSError, pa.ArrowException) as e:
        raise ReportError(f"cannot read parquet {join(out.shown, name)!r}: {e}") from e
    return metric, scores if scores.count else None


def _read_scores(
    out: _Output, report: Mapping[str, Any], config: Mapping[str, Any]
) -> tuple[str, Scores | None]:
    """The scores report.json carries (the job's Spark aggregate of the verified pairs);
    for an output written before it did, a scan of pairs/, else of clusters/ members."""
    stored = _stored_scores(report)
    if stored is not None:
        return stored
    metric, found = _scan_scores(
        out, "pairs", "verified pairs (pairs/)", False, _default_metric(config)
    )
    if found is not None:
        return metric, found
    source = "cluster members vs. their representative (clusters/)"
    return _scan_scores(out, "clusters", source, True, metric)


def _stored_scores(report: Mapping[str, Any]) -> tuple[str, Scores | None] | None:
    """(metric, summary) of report.json's ``scores`` (summary None when it counts nothing);
    None when the report has none (an output written before it did)."""
    stored = report.get("scores")
    if not isinstance(stored, Mapping) or not stored.get("metric"):
        return None
    scores = Scores.from_json(stored)
    return scores.metric, scores if scores.count else None


def _cluster_sizes(out: _Output, ids: Sequence[str]) -> dict[str, int]:
    """Number of documents of each of the clusters ``ids`` according to clusters/ (outputs
    whose samples/ predate its ``cluster_size`` column)."""
    path = join(out.shown, "clusters")
    dataset = _dataset(out, "clusters")
    if dataset is None or not ids:
        return {}
    try:
        table = dataset.to_table(
            columns=["cluster_id"], filter=ds.field("cluster_id").isin(list(ids))
        )
    except (OSError, pa.ArrowException) as e:
        raise ReportError(f"cannot read parquet {path!r}: {e}") from e
    counts = table.group_by("cluster_id").aggregate([("cluster_id", "count")])
    return dict(
        zip(
            counts.column("cluster_id").to_pylist(),
            counts.column("cluster_id_count").to_pylist(),
            strict=True,
        )
    )


@dataclass
class Doc:
    """One document of ``samples/``."""

    doc_id: str
    text: str
    score: float | None
    truncated: bool


@dataclass
class Sample:
    """One cluster of ``samples/``: its representative (if present), members and size."""

    cluster_id: str
    representative: Doc | None
    members: list[Doc]
    size: int | None = None  # the whole cluster's members (samples/ ``cluster_size``)


_SAMPLE_COLUMNS = ("cluster_id", "doc_id", "is_representative", "text")
Samples = tuple[str | None, list[Sample]]


def _read_samples(out: _Output) -> Samples | None:
    """(metric, clusters) from ``samples/``; None when the job wrote no samples."""
    dataset = _dataset(out, "samples")
    if dataset is None:
        return None
    path = join(out.shown, "samples")
    names = dataset.schema.names
    missing = [c for c in _SAMPLE_COLUMNS if c not in names]
    if missing:
        raise ReportError(f"samples {path!r} lacks column(s) {', '.join(missing)}")
    metric = _score_name(names)
    extra = [c for c in (metric, "truncated", "cluster_size") if c is not None and c in names]
    keys = _read(dataset, ["cluster_id", "doc_id", "is_representative", *extra[:1]], path)
    wanted = pa.array(_shown_ids(keys, metric), pa.string())
    try:  # only the texts the page shows: samples/ holds every member of its clusters
        shown = dataset.to_table(
            columns=[*_SAMPLE_COLUMNS, *extra], filter=ds.field("doc_id").isin(wanted)
        )
    except (OSError, pa.ArrowException) as e:
        raise ReportError(f"cannot read parquet {path!r}: {e}") from e
    return samples_of(shown)


def _shown_ids(keys: pa.Table, metric: str | None) -> list[str]:
    """The doc_ids the page shows of samples/ rows (``cluster_id, doc_id,
    is_representative`` and the score): per cluster its representative and the
    MEMBERS_SHOWN least similar members (``stages.samples.shown_samples``' rule)."""
    if not keys.num_rows:
        return []
    rep = keys.column("is_representative").fill_null(False)
    table = keys.append_column("__member", pa.compute.invert(rep))
    order = [("cluster_id", "ascending"), ("__member", "ascending")]
    if metric is not None:  # unscored members last, as Spark's asc/desc_nulls_last
        far = metric == "distance"
        score = pa.compute.cast(table.column(metric), pa.float64())
        table = table.append_column("__score", score.fill_null(-math.inf if far else math.inf))
        order.append(("__score", "descending" if far else "ascending"))
    order.append(("doc_id", "ascending"))
    ranked = table.take(pa.compute.sort_indices(table, sort_keys=order))
    cluster = ranked.column("cluster_id").to_numpy(zero_copy_only=False)
    member = ranked.column("__member").to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(
        np.r_[True, (cluster[1:] != cluster[:-1]) | (member[1:] != member[:-1])]
    )
    rank = np.arange(len(cluster)) - np.repeat(starts, np.diff(np.r_[starts, len(cluster)]))
    keep = rank < np.where(member, MEMBERS_SHOWN, 1)
    return [str(d) for d in np.asarray(ranked.column("doc_id").to_pylist(), dtype=object)[keep]]


def samples_of(table: pa.Table) -> Samples:
    """(metric, clusters) of a samples table (``stages.samples.sample_clusters``' rows: the
    job hands them over collected, the CLI reads them from samples/)."""
    metric = _score_name(table.schema.names)
    groups: dict[str, Sample] = {}
    for row in table.to_pylist():
        cid = str(row["cluster_id"])
        size = row.get("cluster_size")
        sample = groups.setdefault(cid, Sample(cid, None, [], None if size is None else int(size)))
        score = row.get(metric) if metric else None
        doc = Doc(
            str(row["doc_id"]),
            row["text"] or "",
            None if score is None else float(score),
            bool(row.get("truncated")),
        )
        if row["is_representative"] and sample.representative is None:
            sample.representative = doc
        else:
            sample.members.append(doc)
    return metric, list(groups.values())


# --- small formatting helpers ---------------------------------------------------------------------


def _esc(value: object) -> str:
    """``str(value)`` HTML-escaped, quotes included (safe in text and attribute values)."""
    return html.escape(str(value), quote=True)


def _int(value: object) -> int | None:
    """An int count, or None when the value is missing or not an integer."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value)


def _fmt_int(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _fmt_pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.2f} %" if whole > 0 else "—"


def _threshold(config: Mapping[str, Any], metric: str) -> float:
    """The threshold marked on the score plot: the largest distance (simhash; ``k`` in the
    report.json of earlier runs) or the Jaccard threshold."""
    if metric == "distance":
        k = config.get("max_distance", config.get("k"))
        return float(k) if isinstance(k, int | float) else 0.0
    t = config.get("threshold")
    return float(t) if isinstance(t, int | float) else DEFAULT_THRESHOLD


# --- plots ----------------------------------------------------------------------------------------


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


def _img(plot_id: str, uri: str, alt: str, metric: str = "") -> str:
    extra = f' data-metric="{_esc(metric)}"' if metric else ""
    return f'<img id="{_esc(plot_id)}" class="plot"{extra} src="{uri}" alt="{_esc(alt)}">'


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


# --- shared passages ------------------------------------------------------------------------------


def _snap(data: bytes, lo: int, hi: int) -> tuple[int, int]:
    """Byte range [lo, hi) clipped to ``data`` and widened to whole UTF-8 characters."""
    n = len(data)
    lo, hi = min(max(lo, 0), n), min(max(hi, 0), n)
    while 0 < lo < n and data[lo] & 0xC0 == 0x80:
        lo -= 1
    while hi < n and data[hi] & 0xC0 == 0x80:
        hi += 1
    return lo, hi


def _merge(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sorted, non-overlapping, non-adjacent ranges covering the non-empty input ranges."""
    out: Ranges = []
    for lo, hi in sorted(ranges):
        if lo >= hi:
            continue
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _shared_ranges(rep: bytes, member: bytes) -> tuple[Ranges, Ranges]:
    """Byte ranges (in rep, in member) of the passages they share, character-aligned."""
    spans = winnow.overlaps(rep, member, WINNOW_K, WINNOW_W)
    in_rep = [_snap(rep, s.pos_a, s.pos_a + s.length) for s in spans]
    in_member = [_snap(member, s.pos_b, s.pos_b + s.length) for s in spans]
    return _merge(in_rep), _merge(in_member)


def _segments(data: bytes, ranges: Ranges) -> Segments:
    """``data`` decoded as (text, marked) pieces; ``ranges`` must be merged and aligned."""
    out: Segments = []
    at = 0
    for lo, hi in ranges:
        if lo > at:
            out.append((data[at:lo].decode("utf-8", errors="replace"), False))
        out.append((data[lo:hi].decode("utf-8", errors="replace"), True))
        at = hi
    if at < len(data):
        out.append((data[at:].decode("utf-8", errors="replace"), False))
    return out


def _cut_point(text: str, limit: int) -> int:
    """Where to cut ``text`` to at most ``limit`` characters: at a space near the limit if any."""
    space = max(text.rfind(" ", limit - limit // 10, limit), text.rfind("\n", 0, limit))
    return space + 1 if space >= limit - limit // 10 else limit


def _truncate(segments: Segments, limit: int) -> tuple[Segments, int]:
    """The first characters of ``segments`` (at most ``limit``) and how many were left out."""
    total = sum(len(s) for s, _ in segments)
    if total <= limit:
        return segments, 0
    cut = _cut_point("".join(s for s, _ in segments), limit)
    out: Segments = []
    left = cut
    for text, marked in segments:
        if left <= 0:
            break
        out.append((text[:left], marked))
        left -= len(text)
    return out, total - cut


def _encode(text: str) -> bytes:
    """Text as the winnowing kernel sees it (UTF-8, lone surrogates as their 3-byte form)."""
    return text.encode("utf-8", errors="surrogatepass")


# --- HTML sections --------------------------------------------------------------------------------


def _row(label: str, key: str, shown: str, value: object, note: str = "") -> str:
    """One summary row; the value cell has ``id="count-KEY"`` and the raw value in data-value."""
    return (
        f'<tr><th scope="row">{_esc(label)}</th><td id="count-{key}" class="num"'
        f' data-value="{_esc(value)}">{_esc(shown)}</td><td class="note">{_esc(note)}</td></tr>'
    )


_COUNT_ROWS = (
    ("Input documents", "input", ""),
    ("Rejected", "rejected", "unreadable or invalid input"),
    ("Exact duplicates", "exact-duplicates", "removed before fingerprinting"),
    ("Near duplicates removed", "near-duplicates", "removed − exact duplicates"),
    ("Removed in total", "removed", ""),
    ("Kept", "kept", ""),
    ("No visible text", "empty", "kept: nothing left to compare after normalization"),
    ("Candidate pairs", "candidates", "pairs sharing an LSH bucket"),
    ("Verified pairs", "verified", "candidates confirmed similar"),
    ("Clusters (2+ members)", "clusters", ""),
    ("Chained members", "chained", "clustering connected: joined only through another member"),
    ("Cluster rounds", "rounds", "rounds of the cluster stage"),
    ("Finished on the driver", "driver-edges", "undecided edges left after the rounds"),
)


def _counts(report: Mapping[str, Any]) -> dict[str, int | None]:
    """The counts by row key (``exact-duplicates``...), with the derived near duplicates."""
    raw = report.get("counts")
    c = raw if isinstance(raw, dict) else {}
    n = {key.replace("_", "-"): _int(value) for key, value in c.items()}
    removed = n.get("removed")
    n["near-duplicates"] = (
        None if removed is None else max(removed - (n.get("exact-duplicates") or 0), 0)
    )
    return n


def _summary(report: Mapping[str, Any]) -> str:
    """Section 1: the counts, pipeline and versions."""
    n = _counts(report)
    rows = [
        _row(label, key, _fmt_int(n.get(key)), n.get(key), note) for label, key, note in _COUNT_ROWS
    ]
    removed, inp = n.get("removed"), n.get("input")
    if removed is not None and inp:
        fraction = _row(
            "Fraction removed",
            "fraction-removed",
            _fmt_pct(removed, inp),
            f"{removed / inp:.6f}",
            "removed / input",
        )
    else:
        fraction = _row("Fraction removed", "fraction-removed", "—", "", "removed / input")
    rows.insert(6, fraction)
    table = '<table class="counts"><tbody>' + "".join(rows) + "</tbody></table>"
    return _section("summary", "Summary", f"{_facts(report)}{table}")


def _facts(report: Mapping[str, Any]) -> str:
    """The pipeline id and version and the neardup version, as a definition list."""
    pipeline = report.get("pipeline")
    p = pipeline if isinstance(pipeline, dict) else {}
    facts = [
        ("Pipeline", "pipeline-id", p.get("id", "—")),
        ("Pipeline version", "pipeline-version", p.get("version", "—")),
        ("neardup version", "neardup-version", report.get("neardup_version", "—")),
    ]
    dl = "".join(
        f'<dt>{_esc(label)}</dt><dd><code id="{i}">{_esc(value)}</code></dd>'
        for label, i, value in facts
    )
    return f'<dl class="facts">{dl}</dl>'


def _stages(seconds: object) -> list[tuple[str, float]]:
    """(stage, seconds) in pipeline order, unknown stages after, non-numbers dropped."""
    if not isinstance(seconds, dict):
        return []
    known = [s for s in STAGES if s in seconds] + sorted(s for s in seconds if s not in STAGES)
    out = []
    for stage in known:
        value = seconds[stage]
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            out.append((str(stage), float(value)))
    return out


def _timings(stages: Sequence[tuple[str, float]]) -> str:
    """Section 2: per-stage seconds and share of the total, with the bar chart."""
    if not stages:
        return _section("timings", "Stage timings", '<p class="empty">No timings recorded.</p>')
    total = sum(t for _, t in stages)
    rows = "".join(
        f'<tr><th scope="row">{_esc(s)}</th><td class="num" id="seconds-{_esc(s)}">{t:,.3f}</td>'
        f'<td class="num">{_fmt_pct(t, total)}</td></tr>'
        for s, t in stages
    )
    table = (
        '<table class="timings"><thead><tr><th>Stage</th><th>Seconds</th><th>Share</th></tr>'
        f'</thead><tbody>{rows}</tbody><tfoot><tr><th scope="row">Total</th>'
        f'<td class="num" id="seconds-total">{total:,.3f}</td><td class="num">100 %</td></tr>'
        "</tfoot></table>"
    )
    plot = _img(
        "plot-timings",
        _plot_timings(stages),
        "Horizontal bar chart of the wall seconds spent in each pipeline stage",
    )
    return _section("timings", "Stage timings", f'<div class="pair">{table}{plot}</div>')


def _histogram(report: Mapping[str, Any]) -> dict[int, int]:
    """cluster_size_histogram with int sizes and counts (malformed entries dropped)."""
    raw = report.get("cluster_size_histogram")
    out: dict[int, int] = {}
    for size, count in raw.items() if isinstance(raw, dict) else ():
        s, c = _int(int(size)) if str(size).isdecimal() else None, _int(count)
        if s is not None and c is not None and s > 0 and c > 0:
            out[s] = c
    return out


def _size_plot(histogram: Mapping[int, int]) -> str:
    if not histogram:
        return '<p class="empty" id="no-cluster-sizes">No cluster size histogram recorded.</p>'
    uri = _plot_cluster_sizes(histogram)
    alt = "Cluster size distribution on log-log axes: number of clusters of each size"
    return _img("plot-cluster-sizes", uri, alt)


def _score_plot(config: Mapping[str, Any], metric: str, scores: Scores | None) -> str:
    """The similarity/distance histogram, or a sentence saying there is no data."""
    if scores is None:
        word = "distance" if metric == "distance" else "similarity"
        return (
            f'<p class="empty" id="no-score-data">No {word} data: the run has no verified pairs'
            " and no cluster member besides the representatives.</p>"
        )
    threshold = _threshold(config, scores.metric)
    alt = (
        f"Histogram of Hamming distance, k = {threshold:g} marked"
        if scores.metric == "distance"
        else f"Histogram of Jaccard similarity, threshold {threshold:g} marked"
    )
    stats = (
        f'<p class="caption">{scores.count:,} values from {_esc(scores.source)}; min'
        f" {scores.low:.4g}, mean {scores.total / scores.count:.4g}, max {scores.high:.4g}.</p>"
    )
    uri = _plot_scores(scores, threshold)
    return f"<figure>{_img('plot-scores', uri, alt, scores.metric)}{stats}</figure>"


def _bands(report: Mapping[str, Any]) -> list[tuple[int, int, int]]:
    """report.json's ``bands`` as (band, candidates, verified), malformed entries dropped."""
    raw = report.get("bands")
    out: list[tuple[int, int, int]] = []
    for entry in raw if isinstance(raw, list) else ():
        if isinstance(entry, dict):
            values = (_int(entry.get("band")), _int(entry.get("candidates")))
            v = _int(entry.get("verified"))
            if values[0] is not None and values[1] is not None and v is not None:
                out.append((values[0], values[1], v))
    return sorted(out)


def _band_plot(report: Mapping[str, Any]) -> str:
    bands = _bands(report)
    if not bands:
        return '<p class="empty" id="no-band-data">No per-band counts recorded.</p>'
    alt = "Bar chart of candidate and verified pairs produced by each LSH band, log scale"
    total_c, total_v = sum(c for _, c, _ in bands), sum(v for _, _, v in bands)
    caption = (
        f'<p class="caption">{len(bands)} bands; {total_c:,} candidate and {total_v:,} verified'
        " band-pairs (a pair found by several bands counts in each).</p>"
    )
    return f"<figure>{_img('plot-bands', _plot_bands(bands), alt)}{caption}</figure>"


def _config_of(report: Mapping[str, Any]) -> dict[str, Any]:
    config = report.get("config")
    return config if isinstance(config, dict) else {}


def _default_metric(config: Mapping[str, Any]) -> str:
    return "distance" if config.get("method") == "simhash" else "similarity"


def _plots(report: Mapping[str, Any], metric: str, scores: Scores | None) -> str:
    """Section 3: cluster sizes, score distribution, candidate vs verified pairs per band."""
    body = (
        f'<div class="plots"><figure>{_size_plot(_histogram(report))}</figure>'
        f"{_score_plot(_config_of(report), metric, scores)}{_band_plot(report)}</div>"
    )
    return _section("plots", "Distributions", body)


def _doc_text(segments: Segments, truncated: bool) -> str:
    """A document's text block: escaped, marks for shared passages, truncation notes."""
    shown, hidden = _truncate(segments, TEXT_LIMIT)
    body = "".join(f"<mark>{_esc(text)}</mark>" if marked else _esc(text) for text, marked in shown)
    if hidden:
        body += f'<span class="more">… ({hidden:,} more characters)</span>'
    if truncated:
        body += '<span class="more">[text truncated by the job]</span>'
    return f'<div class="doc-text">{body}</div>'


def _score_label(metric: str | None, score: float | None) -> str:
    if score is None or metric is None:
        return ""
    if metric == "distance":
        return f"Hamming distance {score:g}"
    return f"Jaccard {score:.3f}"


def _member(doc: Doc, metric: str | None, rep_bytes: bytes | None) -> tuple[str, Ranges]:
    """A member's article, and the rep's byte ranges it shares (for marking the rep)."""
    data = _encode(doc.text)
    in_rep, in_member = _shared_ranges(rep_bytes, data) if rep_bytes else ([], [])
    segments = _segments(data, in_member)
    marked = sum(len(t) for t, m in segments if m)
    total = sum(len(t) for t, _ in segments)
    share = f"shares {marked:,} of {total:,} characters ({_fmt_pct(marked, total)})"
    label = " · ".join(x for x in (_score_label(metric, doc.score), share) if x)
    article = (
        f'<article class="doc member" data-doc-id="{_esc(doc.doc_id)}"><header>'
        f'<code class="doc-id">{_esc(doc.doc_id)}</code> <span class="meta">{_esc(label)}'
        f"</span></header>{_doc_text(segments, doc.truncated)}</article>"
    )
    return article, in_rep


def _member_order(metric: str | None) -> Callable[[Doc], tuple[bool, float, str]]:
    """Sort key for members: the least similar first (the ones worth checking), then id."""

    def key(doc: Doc) -> tuple[bool, float, str]:
        if doc.score is None:
            return True, 0.0, doc.doc_id
        return False, (-doc.score if metric == "distance" else doc.score), doc.doc_id

    return key


def _cluster_view(sample: Sample, size: int, metric: str | None, index: int) -> str:
    """One side-by-side cluster: the representative left, up to MEMBERS_SHOWN members right."""
    rep = sample.representative
    rep_bytes = _encode(rep.text) if rep is not None else None
    members = sorted(sample.members, key=_member_order(metric))[:MEMBERS_SHOWN]
    articles, rep_ranges = [], []
    for doc in members:
        article, ranges = _member(doc, metric, rep_bytes)
        articles.append(article)
        rep_ranges.extend(ranges)
    more = max(size - 1 - len(members), 0)
    if more:
        articles.append(f'<p class="more-members">… and {more:,} more member(s) not shown.</p>')
    if rep is None or rep_bytes is None:
        left = '<p class="empty">The representative\'s text is not in samples/.</p>'
    else:
        left = (
            f'<article class="doc representative" data-doc-id="{_esc(rep.doc_id)}"><header>'
            f'<code class="doc-id">{_esc(rep.doc_id)}</code> <span class="meta">representative'
            f" (kept)</span></header>"
            f"{_doc_text(_segments(rep_bytes, _merge(rep_ranges)), rep.truncated)}</article>"
        )
    return (
        f'<section class="cluster" id="cluster-{index}"'
        f' data-cluster-id="{_esc(sample.cluster_id)}">'
        f'<h3>Cluster <code>{_esc(sample.cluster_id)}</code> <span class="meta">{size:,}'
        f' documents</span></h3><div class="side-by-side"><div class="rep-col">{left}</div>'
        f'<div class="member-col">{"".join(articles)}</div></div></section>'
    )


def _side_by_side(out: _Output | None, samples: Samples | None) -> str:
    """Section 4: sample clusters side by side (or why there are none)."""
    title = "Clusters side by side"
    if samples is None:
        note = (
            '<p class="empty" id="no-samples">Side-by-side views need the job\'s samples output'
            " (a samples/ directory in the output); this run has none.</p>"
        )
        return _section("clusters", title, note)
    metric, groups = samples
    unsized = [s.cluster_id for s in groups if s.size is None]
    sizes = _cluster_sizes(out, unsized) if unsized and out is not None else {}

    def size(s: Sample) -> int:
        if s.size is not None:
            return s.size
        return sizes.get(s.cluster_id, len(s.members) + (s.representative is not None))

    groups = sorted(groups, key=lambda s: (-size(s), s.cluster_id))
    if not groups:
        return _section("clusters", title, '<p class="empty">samples/ holds no clusters.</p>')
    intro = (
        '<p class="caption">Marked passages (<mark>like this</mark>) are shared with the'
        f" representative (winnowing, k = {WINNOW_K}, w = {WINNOW_W} bytes; edges are"
        f" approximate). Up to {MEMBERS_SHOWN} members per cluster, least similar first;"
        f" texts are cut after {TEXT_LIMIT:,} characters.</p>"
    )
    views = "".join(_cluster_view(s, size(s), metric, i) for i, s in enumerate(groups, 1))
    return _section("clusters", title, intro + views)


def _hot_buckets(report: Mapping[str, Any]) -> str:
    """Section 5: the biggest hot LSH buckets."""
    raw = report.get("hot_buckets")
    buckets = [b for b in raw if isinstance(b, dict)] if isinstance(raw, list) else []
    total = _int((report.get("counts") or {}).get("hot_buckets"))
    if not buckets:
        return _section("hot-buckets", "Hot buckets", '<p class="empty">No hot buckets.</p>')
    top = sorted(buckets, key=lambda b: (-(_int(b.get("size")) or 0), str(b.get("band"))))
    rows = "".join(
        f'<tr><td class="num">{_esc(b.get("band", ""))}</td><td><code>{_esc(b.get("key", ""))}'
        f'</code></td><td class="num">{_fmt_int(_int(b.get("size")))}</td></tr>'
        for b in top[:HOT_BUCKETS_SHOWN]
    )
    count = total if total is not None else len(buckets)
    caption = (
        f'<p class="caption">{count:,} bucket(s) were too big to verify pairwise; the'
        f" {min(HOT_BUCKETS_SHOWN, len(buckets))} biggest are listed.</p>"
    )
    table = (
        '<table class="hot-buckets"><thead><tr><th>Band</th><th>Key</th><th>Size</th></tr>'
        f"</thead><tbody>{rows}</tbody></table>"
    )
    return _section("hot-buckets", "Hot buckets", caption + table)


def _index(report: Mapping[str, Any]) -> str | None:
    """The index section (a ``--against`` run), or None when the run used no index."""
    raw = report.get("index")
    if not isinstance(raw, dict):
        return None
    batches = raw.get("batches_matched")
    listed = [str(b) for b in batches] if isinstance(batches, list) else []
    facts = [
        ("Index", "index-path", raw.get("path", "—")),
        ("Batches matched against", "index-batches", ", ".join(listed) or "none (a new index)"),
        ("Indexed documents", "index-documents", _fmt_int(_int(raw.get("indexed_documents")))),
        ("Removed as duplicates of the index", "index-matches", _fmt_int(_int(raw.get("matches")))),
    ]
    if "batch_id" in raw:
        added = (
            "already committed: nothing added"
            if raw.get("already_committed")
            else (f"{_fmt_int(_int(raw.get('added')))} kept documents")
        )
        facts += [
            ("Added as batch", "index-batch-id", raw.get("batch_id", "—")),
            ("Added", "index-added", added),
            ("Indexed documents now", "index-after", _fmt_int(_int(raw.get("documents_after")))),
        ]
    dl = "".join(
        f'<dt>{_esc(label)}</dt><dd><code id="{i}">{_esc(value)}</code></dd>'
        for label, i, value in facts
    )
    note = (
        '<p class="caption">Clusters with a member near an indexed document keep no member:'
        " the index represents them (matches/ lists the pairs).</p>"
    )
    return _section("index", "Index", f'<dl class="facts">{dl}</dl>{note}')


def _config(report: Mapping[str, Any]) -> str:
    """Section 6: the exact job config and the registered preset versions."""
    config = json.dumps(report.get("config", {}), indent=2, ensure_ascii=False, sort_keys=False)
    pipeline = report.get("pipeline") or {}
    used = pipeline.get("version") if isinstance(pipeline, dict) else None
    rows = []
    for name in preset_names():
        p = get_preset(name)
        mark = ' class="used"' if p.version == used else ""
        rows.append(
            f"<tr{mark}><td><code>{_esc(name)}</code></td><td><code>{_esc(p.version)}</code>"
            f"</td><td>{_esc(p.description)}</td></tr>"
        )
    presets = (
        '<h3>Preset versions</h3><table class="presets"><thead><tr><th>Preset</th>'
        f"<th>Version</th><th>Description</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    body = f'<h3>Job config</h3><pre id="config-json">{_esc(config)}</pre>{presets}'
    return _section("config", "Configuration", body)


def _section(section_id: str, title: str, body: str) -> str:
    return f'<section id="{section_id}"><h2>{_esc(title)}</h2>{body}</section>'


_CSS = """
:root { --fg: #1d1f21; --muted: #5c6166; --line: #d8dadd; --bg: #ffffff; --panel: #f6f7f8;
  --accent: #204a87; --mark: #fce94f; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 1.5rem 1.5rem 4rem; }
header.page h1 { margin: 0 0 .25rem; font-size: 1.6rem; }
header.page p { margin: 0; color: var(--muted); }
nav { margin: 1rem 0 0; display: flex; flex-wrap: wrap; gap: .4rem 1rem; }
nav a { color: var(--accent); text-decoration: none; }
nav a:hover { text-decoration: underline; }
section { margin-top: 2.2rem; }
h2 { font-size: 1.25rem; border-bottom: 2px solid var(--line); padding-bottom: .3rem; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 .5rem; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { padding: .3rem .75rem; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; }
thead th { background: var(--panel); }
tbody tr:nth-child(even) { background: #fafbfc; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.note, .caption, .meta { color: var(--muted); font-size: .9em; }
tr.used { font-weight: 600; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  font-size: .9em; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px;
  padding: .8rem 1rem; overflow-x: auto; }
.pair, .plots { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; }
figure { margin: 0; }
img.plot { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
.empty { color: var(--muted); font-style: italic; }
.cluster { border: 1px solid var(--line); border-radius: 8px; padding: .2rem 1rem 1rem;
  margin-top: 1.2rem; }
.side-by-side { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
@media (max-width: 800px) { .side-by-side { grid-template-columns: 1fr; } }
.rep-col .doc { position: sticky; top: .5rem; border-color: #729fcf; }
.doc { border: 1px solid var(--line); border-radius: 6px; background: var(--panel);
  margin-bottom: .8rem; }
.doc header { padding: .4rem .7rem; border-bottom: 1px solid var(--line); }
.doc-text { padding: .6rem .7rem; white-space: pre-wrap; overflow-wrap: anywhere;
  max-height: 28rem; overflow-y: auto; font-size: .92em; }
mark { background: var(--mark); color: inherit; padding: 0; }
.more { display: block; margin-top: .4rem; color: var(--muted); font-style: italic; }
.more-members { color: var(--muted); }
"""

_NAV = (
    ("summary", "Summary"),
    ("timings", "Timings"),
    ("plots", "Distributions"),
    ("clusters", "Clusters"),
    ("hot-buckets", "Hot buckets"),
    ("config", "Configuration"),
)


def _page(
    title: str,
    subtitle: str,
    sections: Sequence[str],
    extra_nav: Sequence[tuple[str, str]] = (),
    extra_css: str = "",
) -> str:
    entries = (*_NAV[:1], *extra_nav, *_NAV[1:])
    nav = "".join(f'<a href="#{i}">{_esc(label)}</a>' for i, label in entries)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_esc(title)}</title><style>{_CSS}{extra_css}</style></head><body><main>"
        f'<header class="page"><h1>{_esc(title)}</h1><p>{_esc(subtitle)}</p>'
        f"<nav>{nav}</nav></header>{''.join(sections)}</main></body></html>\n"
    )


# --- public API -----------------------------------------------------------------------------------


def build_report(output_dir: str | os.PathLike[str]) -> str:
    """The HTML of ``report.html`` for a dedup output directory (nothing is written).

    Reads ``report.json`` (required) and the optional ``samples/`` parquet dataset through
    pyarrow's filesystem of the path or URI (an output written before report.json carried
    ``scores`` and samples/ ``cluster_size``: pairs/ or clusters/ too). The page is
    self-contained: plots are inline PNG data URIs, the CSS is inline, there are no scripts
    and no external URLs; every document text, id and config value is HTML-escaped. Raises
    :class:`ReportError` naming the directory when ``report.json`` is missing, unreadable or
    not a JSON object, naming the dataset when a parquet dataset cannot be read, and naming
    the scheme when pyarrow cannot open it.
    """
    out = _Output(output_dir)
    report = _load_report(out)
    metric, scores = _read_scores(out, report, _config_of(report))
    return _build(report, metric, scores, _read_samples(out), out)


def _build(
    report: Mapping[str, Any],
    metric: str,
    scores: Scores | None,
    samples: Samples | None,
    out: _Output | None,
    where: str | None = None,
) -> str:
    config = _config_of(report)
    method = config.get("method") or ("simhash" if metric == "distance" else "minhash")
    index = _index(report)
    sections = [
        _summary(report),
        *([index] if index is not None else []),
        _timings(_stages(report.get("seconds"))),
        _plots(report, metric, scores),
        _side_by_side(out, samples),
        _hot_buckets(report),
        _config(report),
    ]
    shown = where if where is not None else str(out)
    subtitle = f"{method} deduplication of {config.get('input', '?')} → {shown}"
    extra = [("index", "Index")] if index is not None else []
    return _page("neardup report", subtitle, sections, extra)


def write_report_html(output_dir: str | os.PathLike[str]) -> str:
    """Write ``report.html`` next to ``report.json`` in ``output_dir`` (a path or a URI
    pyarrow opens); return its location.

    The page (:func:`build_report`) is written under a temporary name in the same directory
    and renamed into place, so readers never see a partial file. Raises
    :class:`ReportError` as :func:`build_report` does; nothing is written then.
    """
    page = build_report(output_dir)
    target = join(str(output_dir), REPORT_HTML)
    _Output(output_dir).store.write_bytes(target, page.encode("utf-8"))
    return target


def report_page(samples: pa.Table | None) -> Callable[[Storage, str, dict[str, Any]], str]:
    """A job's ``report.html`` writer (``runtime.write_report``'s page): built from the
    report itself (its ``scores``, histogram, bands, hot buckets) and ``samples`` (the
    samples frame collected: a bounded number of rows), written through the job's storage.
    The driver reads no output."""

    def write_report_html(store: Storage, output: str, report: dict[str, Any]) -> str:
        stored = _stored_scores(report)
        metric, scores = stored or (_default_metric(_config_of(report)), None)
        found = samples_of(samples) if samples is not None else None
        page = _build(report, metric, scores, found, None, output)
        target = join(output, REPORT_HTML)
        store.write_bytes(target, page.encode("utf-8"))
        return target

    return write_report_html
