"""``report.html`` of a dedup job: the page's assembly and its public entry points.

The page is self-contained and readable: the counts, per-stage timings, plots (cluster sizes,
verified-pair similarity or Hamming distance, candidate vs verified pairs per band, stage
timings) embedded as base64 SVG data URIs, side-by-side views of sample clusters with the
passages members share with their representative marked, the hot LSH buckets, the index of a
``--against`` run, and the exact job config with the preset versions. It loads nothing from
the network and needs no JavaScript. Every document text, id and config value is HTML-escaped.

:func:`build_report` and :func:`write_report_html` build it from the files of an output
directory (``neardup report``; what they read is described in ``report.data``);
:func:`report_page` is the job's own writer, from the report and the collected samples,
reading no output. The images job's page (thumbnails instead of texts) is ``report.images``,
built from the same sections and helpers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa

from neardup_udfs.io.storage import Storage
from neardup_udfs.report.data import (
    Output,
    Samples,
    Scores,
    config_of,
    default_metric,
    load_report,
    read_samples,
    read_scores,
    samples_of,
    stored_scores,
    write_page,
)
from neardup_udfs.report.sections import (
    CLUSTER_COUNT_ROWS,
    config_section,
    hot_buckets_section,
    plots_section,
    summary_section,
    timings_section,
)
from neardup_udfs.report.style import as_int, fact_list, fmt_int, html_page, section
from neardup_udfs.report.texts import side_by_side_section

__all__ = ["build_report", "report_page", "write_report_html"]


_COUNT_ROWS = (
    ("Input documents", "input", ""),
    ("Rejected", "rejected", "unreadable or invalid input"),
    ("Exact duplicates", "exact-duplicates", "removed before fingerprinting"),
    ("Near duplicates removed", "near-duplicates", "removed − exact duplicates"),
    ("Removed in total", "removed", ""),
    ("Kept", "kept", ""),
    ("Fraction removed", "fraction-removed", "removed / input"),
    ("No visible text", "empty", "kept: nothing left to compare after normalization"),
    ("Candidate pairs", "candidates", "pairs sharing an LSH bucket"),
    ("Verified pairs", "verified", "candidates confirmed similar"),
    ("Clusters (2+ members)", "clusters", ""),
    *CLUSTER_COUNT_ROWS,
)
_CONTAINMENT_ROWS = (
    ("Removed as contained", "contained", "inside a kept document with more shingles"),
    ("Containment pairs", "containment-pairs", "kept documents verified inside another"),
    ("Kept though contained", "containment-kept", "a document removed in its favour is not "
     "inside the container too, or no container stays"),
)  # fmt: skip


def _count_rows(config: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """The summary's rows: a containment run's after the near-duplicate ones."""
    if config.get("containment") is None:
        return _COUNT_ROWS
    at = [key for _, key, _ in _COUNT_ROWS].index("removed")
    return _COUNT_ROWS[:at] + _CONTAINMENT_ROWS + _COUNT_ROWS[at:]


def _index(report: Mapping[str, Any]) -> str | None:
    """The index section (a ``--against`` run), or None when the run used no index."""
    raw = report.get("index")
    if not isinstance(raw, dict):
        return None
    batches = raw.get("batches_matched")
    listed = [str(b) for b in batches] if isinstance(batches, list) else []

    def count(key: str) -> str:
        return fmt_int(as_int(raw.get(key)))

    facts = [
        ("Index", "index-path", raw.get("path", "—")),
        ("Batches matched against", "index-batches", ", ".join(listed) or "none (a new index)"),
        ("Indexed documents", "index-documents", count("indexed_documents")),
        ("Removed as duplicates of the index", "index-matches", count("matches")),
    ]
    if "batch_id" in raw:
        added = (
            "already committed: nothing added"
            if raw.get("already_committed")
            else f"{count('added')} kept documents"
        )
        facts += [
            ("Added as batch", "index-batch-id", raw.get("batch_id", "—")),
            ("Added", "index-added", added),
            ("Indexed documents now", "index-after", count("documents_after")),
        ]
    note = (
        '<p class="caption">Clusters with a member near an indexed document keep no member:'
        " the index represents them (matches/ lists the pairs).</p>"
    )
    return section("index", "Index", f"{fact_list(facts)}{note}")


# --- public API -----------------------------------------------------------------------------------


def build_report(output_dir: str | os.PathLike[str]) -> str:
    """The HTML of ``report.html`` for a dedup output directory (nothing is written).

    Reads ``report.json`` (required) and the optional ``samples/`` parquet dataset through
    pyarrow's filesystem of the path or URI (an output written before report.json carried
    ``scores`` and samples/ ``cluster_size``: pairs/ or clusters/ too). The page is
    self-contained: plots are inline SVG data URIs, the CSS is inline, there are no scripts
    and no external URLs; every document text, id and config value is HTML-escaped. Raises
    :class:`ReportError` naming the directory when ``report.json`` is missing, unreadable or
    not a JSON object, naming the dataset when a parquet dataset cannot be read, and naming
    the scheme when pyarrow cannot open it.
    """
    out = Output(output_dir)
    report = load_report(out)
    metric, scores = read_scores(out, report, config_of(report))
    return _build(report, metric, scores, read_samples(out), out)


def _build(
    report: Mapping[str, Any],
    metric: str,
    scores: Scores | None,
    samples: Samples | None,
    out: Output | None,
    where: str | None = None,
) -> str:
    config = config_of(report)
    method = config.get("method") or ("simhash" if metric == "distance" else "minhash")
    index = _index(report)
    sections = [
        summary_section(report, _count_rows(config), "exact-duplicates"),
        *([index] if index is not None else []),
        timings_section(report),
        plots_section(report, metric, scores),
        side_by_side_section(out, samples),
        hot_buckets_section(report),
        config_section(report),
    ]
    shown = where if where is not None else str(out)
    subtitle = f"{method} deduplication of {config.get('input', '?')} → {shown}"
    extra = [("index", "Index")] if index is not None else []
    return html_page("neardup report", subtitle, sections, extra)


def write_report_html(output_dir: str | os.PathLike[str]) -> str:
    """Write ``report.html`` next to ``report.json`` in ``output_dir`` (a path or a URI
    pyarrow opens); return its location.

    The page (:func:`build_report`) is written under a temporary name in the same directory
    and renamed into place, so readers never see a partial file. Raises
    :class:`ReportError` as :func:`build_report` does; nothing is written then.
    """
    page = build_report(output_dir)
    return write_page(Output(output_dir).store, str(output_dir), page)


def report_page(samples: pa.Table | None) -> Callable[[Storage, str, dict[str, Any]], str]:
    """A job's ``report.html`` writer (``io.report_files.write_report``'s page): built from the
    report itself (its ``scores``, histogram, bands, hot buckets) and ``samples`` (the
    samples frame collected: a bounded number of rows), written through the job's storage.
    The driver reads no output."""

    def write_report_html(store: Storage, output: str, report: dict[str, Any]) -> str:
        stored = stored_scores(report)
        metric, scores = stored or (default_metric(config_of(report)), None)
        found = samples_of(samples) if samples is not None else None
        return write_page(store, output, _build(report, metric, scores, found, None, output))

    return write_report_html
