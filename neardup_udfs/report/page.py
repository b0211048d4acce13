"""``report.html`` of a dedup job: the page's assembly and its public entry points.

The page is self-contained and readable: the counts, per-stage timings, plots (cluster sizes,
verified-pair similarity or Hamming distance, candidate vs verified pairs per band, stage
timings) embedded as base64 PNG data URIs, side-by-side views of sample clusters with the
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

from neardup_udfs.io.storage import Storage, join
from neardup_udfs.report.data import (
    REPORT_HTML,
    Samples,
    Scores,
    _config_of,
    _default_metric,
    _load_report,
    _Output,
    _read_samples,
    _read_scores,
    _stored_scores,
    samples_of,
)
from neardup_udfs.report.sections import (
    _config,
    _facts,
    _hot_buckets,
    _plots,
    _row,
    _stages,
    _timings,
)
from neardup_udfs.report.style import _esc, _fmt_int, _fmt_pct, _int, _page, _section
from neardup_udfs.report.texts import _side_by_side

__all__ = ["build_report", "report_page", "write_report_html"]


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
