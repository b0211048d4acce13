"""The sections both report pages share (the dedup page, ``report.page``, and the images
page, ``report.images``): pipeline facts, stage timings, the distribution plots, hot buckets
and the configuration, each an HTML ``<section>`` (or part of one) built from report.json.

Malformed report.json entries are dropped rather than fatal; a section with nothing to show
says so. Every value taken from the report is HTML-escaped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from neardup_udfs.config import DEFAULT_THRESHOLD
from neardup_udfs.presets import get_preset, preset_names
from neardup_udfs.report.data import Scores, _config_of
from neardup_udfs.report.plots import (
    _plot_bands,
    _plot_cluster_sizes,
    _plot_scores,
    _plot_timings,
)
from neardup_udfs.report.style import _esc, _fmt_int, _fmt_pct, _img, _int, _section

__all__ = ["HOT_BUCKETS_SHOWN", "STAGES"]


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


def _threshold(config: Mapping[str, Any], metric: str) -> float:
    """The threshold marked on the score plot: the largest distance (simhash; ``k`` in the
    report.json of earlier runs) or the Jaccard threshold."""
    if metric == "distance":
        k = config.get("max_distance", config.get("k"))
        return float(k) if isinstance(k, int | float) else 0.0
    t = config.get("threshold")
    return float(t) if isinstance(t, int | float) else DEFAULT_THRESHOLD


def _row(label: str, key: str, shown: str, value: object, note: str = "") -> str:
    """One summary row; the value cell has ``id="count-KEY"`` and the raw value in data-value."""
    return (
        f'<tr><th scope="row">{_esc(label)}</th><td id="count-{key}" class="num"'
        f' data-value="{_esc(value)}">{_esc(shown)}</td><td class="note">{_esc(note)}</td></tr>'
    )


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


def _plots(report: Mapping[str, Any], metric: str, scores: Scores | None) -> str:
    """Section 3: cluster sizes, score distribution, candidate vs verified pairs per band."""
    body = (
        f'<div class="plots"><figure>{_size_plot(_histogram(report))}</figure>'
        f"{_score_plot(_config_of(report), metric, scores)}{_band_plot(report)}</div>"
    )
    return _section("plots", "Distributions", body)


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
