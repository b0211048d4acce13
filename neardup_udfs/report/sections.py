"""The sections both report pages share (the dedup page, ``report.page``, and the images
page, ``report.images``): the summary (pipeline facts and counts), stage timings, the
distribution plots, hot buckets and the configuration, each an HTML ``<section>`` built from
report.json; a page passes its own count rows and adds its own sections.

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
from neardup_udfs.report.data import Scores, config_of
from neardup_udfs.report.plots import plot_bands, plot_cluster_sizes, plot_scores, plot_timings
from neardup_udfs.report.style import as_int, esc, fact_list, fmt_int, fmt_pct, plot_img, section

__all__ = [
    "CLUSTER_COUNT_ROWS",
    "HOT_BUCKETS_SHOWN",
    "STAGES",
    "config_section",
    "hot_buckets_section",
    "plots_section",
    "summary_section",
    "timings_section",
]


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
    "containment",
    "components",  # reports of runs before the cluster stage
    "select",
    "write",
    "report",
    "update-index",
)
CLUSTER_COUNT_ROWS = (
    ("Chained members", "chained", "clustering connected: joined only through another member"),
    ("Cluster rounds", "rounds", "rounds of the cluster stage"),
    ("Finished on the driver", "driver-edges", "undecided edges left after the rounds"),
)
"""The summary rows (label, count key, note) of the cluster stage, the same in every job."""


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
        f'<tr><th scope="row">{esc(label)}</th><td id="count-{key}" class="num"'
        f' data-value="{esc(value)}">{esc(shown)}</td><td class="note">{esc(note)}</td></tr>'
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
    return fact_list(facts)


def summary_section(
    report: Mapping[str, Any], rows: Sequence[tuple[str, str, str]], exact: str
) -> str:
    """Section 1: the pipeline facts and a table of report.json's counts, one row per
    (label, key, note) of ``rows`` in that order (a count ``some_name`` is key
    ``some-name``). Two keys are derived: ``near-duplicates``, removed less the ``exact``
    count and the ``contained`` one (never negative), and ``fraction-removed``, removed /
    input. A count that is missing or not a whole number shows as a dash."""
    raw = report.get("counts")
    n = {k.replace("_", "-"): as_int(v) for k, v in (raw if isinstance(raw, dict) else {}).items()}
    removed, inp = n.get("removed"), n.get("input")
    others = (n.get(exact) or 0) + (n.get("contained") or 0)  # containment: its own row
    n["near-duplicates"] = None if removed is None else max(removed - others, 0)
    cells = []
    for label, key, note in rows:
        if key != "fraction-removed":
            cells.append(_row(label, key, fmt_int(n.get(key)), n.get(key), note))
        elif removed is not None and inp:
            cells.append(_row(label, key, fmt_pct(removed, inp), f"{removed / inp:.6f}", note))
        else:
            cells.append(_row(label, key, "—", "", note))
    table = '<table class="counts"><tbody>' + "".join(cells) + "</tbody></table>"
    return section("summary", "Summary", f"{_facts(report)}{table}")


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


def timings_section(report: Mapping[str, Any]) -> str:
    """Section 2: report.json's per-stage seconds and share of the total, with the bar
    chart."""
    stages = _stages(report.get("seconds"))
    if not stages:
        return section("timings", "Stage timings", '<p class="empty">No timings recorded.</p>')
    total = sum(t for _, t in stages)
    rows = "".join(
        f'<tr><th scope="row">{esc(s)}</th><td class="num" id="seconds-{esc(s)}">{t:,.3f}</td>'
        f'<td class="num">{fmt_pct(t, total)}</td></tr>'
        for s, t in stages
    )
    table = (
        '<table class="timings"><thead><tr><th>Stage</th><th>Seconds</th><th>Share</th></tr>'
        f'</thead><tbody>{rows}</tbody><tfoot><tr><th scope="row">Total</th>'
        f'<td class="num" id="seconds-total">{total:,.3f}</td><td class="num">100 %</td></tr>'
        "</tfoot></table>"
    )
    plot = plot_img(
        "plot-timings",
        plot_timings(stages),
        "Horizontal bar chart of the wall seconds spent in each pipeline stage",
    )
    return section("timings", "Stage timings", f'<div class="pair">{table}{plot}</div>')


def _histogram(report: Mapping[str, Any]) -> dict[int, int]:
    """cluster_size_histogram with int sizes and counts (malformed entries dropped)."""
    raw = report.get("cluster_size_histogram")
    out: dict[int, int] = {}
    for size, count in raw.items() if isinstance(raw, dict) else ():
        s, c = as_int(int(size)) if str(size).isdecimal() else None, as_int(count)
        if s is not None and c is not None and s > 0 and c > 0:
            out[s] = c
    return out


def _size_plot(histogram: Mapping[int, int]) -> str:
    if not histogram:
        return '<p class="empty" id="no-cluster-sizes">No cluster size histogram recorded.</p>'
    uri = plot_cluster_sizes(histogram)
    alt = "Cluster size distribution on log-log axes: number of clusters of each size"
    return plot_img("plot-cluster-sizes", uri, alt)


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
        f'<p class="caption">{scores.count:,} values from {esc(scores.source)}; min'
        f" {scores.low:.4g}, mean {scores.total / scores.count:.4g}, max {scores.high:.4g}.</p>"
    )
    uri = plot_scores(scores, threshold)
    return f"<figure>{plot_img('plot-scores', uri, alt, scores.metric)}{stats}</figure>"


def _bands(report: Mapping[str, Any]) -> list[tuple[int, int, int]]:
    """report.json's ``bands`` as (band, candidates, verified), malformed entries dropped."""
    raw = report.get("bands")
    out: list[tuple[int, int, int]] = []
    for entry in raw if isinstance(raw, list) else ():
        if isinstance(entry, dict):
            values = (as_int(entry.get("band")), as_int(entry.get("candidates")))
            v = as_int(entry.get("verified"))
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
    return f"<figure>{plot_img('plot-bands', plot_bands(bands), alt)}{caption}</figure>"


def plots_section(
    report: Mapping[str, Any], metric: str, scores: Scores | None, bands: bool = True
) -> str:
    """Section 3: cluster sizes, the ``metric`` distribution of ``scores`` and, if
    ``bands``, candidate vs verified pairs per band."""
    band_plot = _band_plot(report) if bands else ""
    body = (
        f'<div class="plots"><figure>{_size_plot(_histogram(report))}</figure>'
        f"{_score_plot(config_of(report), metric, scores)}{band_plot}</div>"
    )
    return section("plots", "Distributions", body)


def hot_buckets_section(report: Mapping[str, Any]) -> str:
    """Section 5: the biggest hot LSH buckets."""
    raw = report.get("hot_buckets")
    buckets = [b for b in raw if isinstance(b, dict)] if isinstance(raw, list) else []
    total = as_int((report.get("counts") or {}).get("hot_buckets"))
    if not buckets:
        return section("hot-buckets", "Hot buckets", '<p class="empty">No hot buckets.</p>')
    top = sorted(buckets, key=lambda b: (-(as_int(b.get("size")) or 0), str(b.get("band"))))
    rows = "".join(
        f'<tr><td class="num">{esc(b.get("band", ""))}</td><td><code>{esc(b.get("key", ""))}'
        f'</code></td><td class="num">{fmt_int(as_int(b.get("size")))}</td></tr>'
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
    return section("hot-buckets", "Hot buckets", caption + table)


def config_section(report: Mapping[str, Any]) -> str:
    """Section 6: the exact job config and the registered preset versions."""
    config = json.dumps(report.get("config", {}), indent=2, ensure_ascii=False, sort_keys=False)
    pipeline = report.get("pipeline") or {}
    used = pipeline.get("version") if isinstance(pipeline, dict) else None
    rows = []
    for name in preset_names():
        p = get_preset(name)
        mark = ' class="used"' if p.version == used else ""
        rows.append(
            f"<tr{mark}><td><code>{esc(name)}</code></td><td><code>{esc(p.version)}</code>"
            f"</td><td>{esc(p.description)}</td></tr>"
        )
    presets = (
        '<h3>Preset versions</h3><table class="presets"><thead><tr><th>Preset</th>'
        f"<th>Version</th><th>Description</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    body = f'<h3>Job config</h3><pre id="config-json">{esc(config)}</pre>{presets}'
    return section("config", "Configuration", body)
