"""The report's four figures, each returned as a ``data:image/svg+xml;base64,...`` URI.

What this module guarantees:

- Every figure is a self-contained SVG document drawn here in pure Python (numpy only for
  the binning) by a small SVG writer: no third-party plotting library, and nothing external
  in the document (no fonts, links, images or scripts; text uses the generic ``sans-serif``
  family), so report.html embeds them inline and loads nothing from the network.
- Every text put in a figure (titles, stage names, labels) is XML-escaped, and characters XML
  cannot hold are replaced, so a figure is always well-formed XML.
- Empty or degenerate input (no values, a single value, all zeros) draws the axes and what
  there is without raising or dividing by zero.
- Each mark carries a class (``bar``, ``point``, ``threshold``) so tests can count them.

Why not matplotlib: importing it and drawing the first figure cost about a second per job
run, which dominated small runs; these figures take a few milliseconds.

Sizes are those of the former matplotlib figures (7 x 3.6 inches at 100 dpi): 700 x 360
pixels, the timings 700 x (40 n + 120) for n stages.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape

import numpy as np
import numpy.typing as npt

from neardup_udfs.report.data import SIMILARITY_STEPS, Scores

DISCRETE_VALUES = 100
"""At most this many distinct similarity values are plotted one bar each (no binning)."""
SIMILARITY_BINS = 40
FILL, EDGE = "#73d216", "#4e9a06"

WIDTH, HEIGHT = 700, 360
LEFT, RIGHT, TOP, BOTTOM = 95, 20, 40, 60
"""Fixed margins around the axes box, in pixels (the timings widen LEFT for long names)."""
TICK_FONT, LABEL_FONT, TITLE_FONT = 12, 13, 15
POINT_COLOR, CANDIDATE_COLOR, TIMING_COLOR = "#3465a4", "#c4a000", "#75507b"
THRESHOLD_COLOR, GRID_COLOR, AXIS_COLOR, TEXT_COLOR = "#cc0000", "#d0d0d0", "#333333", "#1d1f21"
MAX_DISTANCE_BARS = 1024
"""The distance plot extends its bars to k + 1 but not past this distance (distances are bits
of a 64-bit hash: a larger k is a misconfiguration, not a reason to draw a million bars)."""

# Characters XML 1.0 cannot hold, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

Bar = tuple[float, float, float]
"""A bar in data units: (left, right, height)."""


def _xml(text: object) -> str:
    """``text`` escaped for SVG element content and attribute values."""
    return escape(_NOT_XML.sub("\ufffd", str(text)), {'"': "&quot;"})


def _num(v: float) -> str:
    """A pixel coordinate as short SVG text."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _text_width(text: str, size: float) -> float:
    """A generous estimate of the width of ``text`` in a sans-serif font of ``size`` px."""
    return 0.6 * size * len(text)


# --- scales and ticks -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Scale:
    """Maps data values in [lo, hi] linearly to pixels in [start, end]."""

    lo: float
    hi: float
    start: float
    end: float

    def __call__(self, v: float) -> float:
        span = self.hi - self.lo
        if not (span > 0 and math.isfinite(span) and math.isfinite(v)):
            return (self.start + self.end) / 2
        return self.start + (v - self.lo) / span * (self.end - self.start)

    def contains(self, v: float) -> bool:
        return self.lo <= v <= self.hi


def _nice_step(span: float, target: int) -> float:
    """The 1-2-5 step giving about ``target`` intervals over ``span``."""
    raw = span / max(target, 1)
    if not (raw > 0 and math.isfinite(raw)):
        return 1.0
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 5.0):
        if raw <= m * magnitude * (1 + 1e-9):
            return m * magnitude
    return 10 * magnitude


def _ticks(lo: float, hi: float, target: int = 6, integer: bool = False) -> list[float]:
    """Round tick values (1-2-5 steps) inside [lo, hi]; whole numbers only if ``integer``."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
        return []
    step = _nice_step(hi - lo, target)
    if integer:
        step = max(step, 1.0)
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


def _tick_label(v: float, ticks: Sequence[float]) -> str:
    """``v`` with as many decimals as the tick step needs (thousands separated)."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    if step >= 1 and float(v).is_integer():
        return f"{int(v):,}"
    digits = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 2
    return f"{v:,.{digits}f}"


def _count_axis(top: float) -> tuple[float, list[float]]:
    """The upper limit and the (whole-number) ticks of a count axis starting at 0."""
    hi = top * 1.05 if top > 0 and math.isfinite(top) else 1.0
    return hi, _ticks(0.0, hi, 6, integer=True)


def _decades(values: Sequence[float]) -> tuple[float, float, list[int]]:
    """A log10 range holding every value (padded by 5 %) and the whole decades in it."""
    logs = [math.log10(v) for v in values]
    lo = math.floor(min(logs)) if logs else 0
    hi = math.ceil(max(logs)) if logs else 1
    hi = max(hi, lo + 1)
    pad = 0.05 * (hi - lo)
    return lo - pad, hi + pad, list(range(lo, hi + 1))


def _minor_logs(lo: float, hi: float) -> list[float]:
    """log10 of 2..9 times each decade, inside the log10 range [lo, hi]."""
    logs = (d + math.log10(m) for d in range(math.floor(lo), math.ceil(hi)) for m in range(2, 10))
    return [v for v in logs if lo <= v <= hi]


def _decade_label(exponent: int) -> str:
    return f"{10**exponent:,}" if exponent >= 0 else f"{10.0**exponent:g}"


# --- the SVG writer -------------------------------------------------------------------------------


class _Svg:
    """An SVG document being written: a white canvas with one axes box (``x0..x1`` by
    ``y0..y1`` in pixels, y growing downwards) and the pixel boxes of its marks."""

    def __init__(self, width: int, height: int, left: float = LEFT) -> None:
        self.width, self.height = width, height
        self.x0, self.x1 = float(left), float(width - RIGHT)
        self.y0, self.y1 = float(TOP), float(max(height - BOTTOM, TOP + 1))
        self.parts: list[str] = [
            f'<rect class="background" x="0" y="0" width="{width}" height="{height}"'
            ' fill="#ffffff"/>'
        ]
        self.boxes: list[tuple[float, float, float, float]] = []

    # primitives

    def rect(
        self, x: float, y: float, w: float, h: float, fill: str, cls: str, extra: str = ""
    ) -> None:
        self.parts.append(
            f'<rect class="{cls}" x="{_num(x)}" y="{_num(y)}" width="{_num(max(w, 0.0))}"'
            f' height="{_num(max(h, 0.0))}" fill="{fill}"{extra}/>'
        )

    def line(
        self, x1: float, y1: float, x2: float, y2: float, stroke: str, cls: str, extra: str = ""
    ) -> None:
        self.parts.append(
            f'<line class="{cls}" x1="{_num(x1)}" y1="{_num(y1)}" x2="{_num(x2)}"'
            f' y2="{_num(y2)}" stroke="{stroke}"{extra}/>'
        )

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: int = TICK_FONT,
        anchor: str = "middle",
        cls: str = "tick-label",
        rotate: bool = False,
    ) -> None:
        """``text`` centred vertically on ``y`` (rotated a quarter turn left if ``rotate``)."""
        base = y + 0.35 * size
        turn = f' transform="rotate(-90 {_num(x)} {_num(y)})"' if rotate else ""
        self.parts.append(
            f'<text class="{cls}" x="{_num(x)}" y="{_num(base)}" font-size="{size}"'
            f' text-anchor="{anchor}" fill="{TEXT_COLOR}"{turn}>{_xml(text)}</text>'
        )

    # marks

    def bar(
        self, left: float, right: float, top: float, bottom: float, fill: str, extra: str = ""
    ) -> None:
        """A bar between two pixel columns and rows, clipped to the axes box."""
        left, right = sorted((left, right))
        top, bottom = sorted((top, bottom))
        left, right = max(left, self.x0), min(right, self.x1)
        top, bottom = max(top, self.y0), min(bottom, self.y1)
        if right < left or bottom < top:
            return
        self.rect(left, top, right - left, bottom - top, fill, "bar", extra)
        self.boxes.append((left, top, right, bottom))

    def point(self, x: float, y: float, fill: str, extra: str = "") -> None:
        self.parts.append(
            f'<circle class="point" cx="{_num(x)}" cy="{_num(y)}" r="3.5" fill="{fill}"{extra}/>'
        )
        self.boxes.append((x - 3.5, y - 3.5, x + 3.5, y + 3.5))

    def threshold(self, x: float) -> None:
        """The dashed red vertical line marking the threshold."""
        self.line(
            x,
            self.y0,
            x,
            self.y1,
            THRESHOLD_COLOR,
            "threshold",
            ' stroke-width="1.5" stroke-dasharray="6 4"',
        )
        self.boxes.append((x - 1, self.y0, x + 1, self.y1))

    # axes

    def xticks(self, scale: _Scale, ticks: Sequence[float], labels: Sequence[str]) -> None:
        for v, label in zip(ticks, labels, strict=True):
            x = scale(v)
            self.line(x, self.y1, x, self.y1 + 5, AXIS_COLOR, "tick")
            self.text(x, self.y1 + 8 + TICK_FONT / 2, label)

    def yticks(self, scale: _Scale, ticks: Sequence[float], labels: Sequence[str]) -> None:
        for v, label in zip(ticks, labels, strict=True):
            y = scale(v)
            self.line(self.x0 - 5, y, self.x0, y, AXIS_COLOR, "tick")
            self.text(self.x0 - 8, y, label, anchor="end")

    def minor_ticks(self, xs: Sequence[float] = (), ys: Sequence[float] = ()) -> None:
        """Short unlabelled ticks at the given pixel columns and rows (log axes: 2 to 9)."""
        for x in xs:
            self.line(x, self.y1, x, self.y1 + 3, AXIS_COLOR, "minor-tick")
        for y in ys:
            self.line(self.x0 - 3, y, self.x0, y, AXIS_COLOR, "minor-tick")

    def grid(self, xs: Sequence[float] = (), ys: Sequence[float] = ()) -> None:
        """Light grid lines at the given pixel columns and rows (drawn under the marks)."""
        for x in xs:
            self.line(x, self.y0, x, self.y1, GRID_COLOR, "grid")
        for y in ys:
            self.line(self.x0, y, self.x1, y, GRID_COLOR, "grid")

    def labels(self, title: str, xlabel: str, ylabel: str) -> None:
        mid_x, mid_y = (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2
        self.text(mid_x, TOP / 2, title, TITLE_FONT, cls="title")
        self.text(mid_x, self.height - 18, xlabel, LABEL_FONT, cls="axis-label")
        if ylabel:
            self.text(18, mid_y, ylabel, LABEL_FONT, cls="axis-label", rotate=True)

    def frame(self) -> None:
        """The axes box, drawn over the marks."""
        self.parts.append(
            f'<rect class="frame" x="{_num(self.x0)}" y="{_num(self.y0)}"'
            f' width="{_num(self.x1 - self.x0)}" height="{_num(self.y1 - self.y0)}"'
            f' fill="none" stroke="{AXIS_COLOR}"/>'
        )

    def legend(self, entries: Sequence[tuple[str, str, str]]) -> None:
        """A legend of (kind, colour, label) entries, kind ``swatch`` or ``line``, in the top
        corner its box overlaps the marks least (like matplotlib's ``loc="best"``)."""
        pad, row, key = 8.0, 18.0, 22.0
        w = 2 * pad + key + 6 + max(_text_width(label, TICK_FONT) for _, _, label in entries)
        h = 2 * pad + row * len(entries) - (row - TICK_FONT)
        inner = self.x1 - self.x0
        spots = [self.x1 - 8 - w, self.x0 + 8, self.x0 + (inner - w) / 2]

        y = self.y0 + 8

        def overlap(x: float) -> float:
            area = 0.0
            for left, top, right, bottom in self.boxes:
                dx = min(x + w, right) - max(x, left)
                dy = min(y + h, bottom) - max(y, top)
                area += max(dx, 0.0) * max(dy, 0.0)
            return area

        x = min(spots, key=overlap)
        self.parts.append(
            f'<rect class="legend" x="{_num(x)}" y="{_num(y)}" width="{_num(w)}"'
            f' height="{_num(h)}" fill="#ffffff" fill-opacity="0.85" stroke="#cccccc" rx="3"/>'
        )
        for i, (kind, colour, label) in enumerate(entries):
            cy = y + pad + TICK_FONT / 2 + i * row
            if kind == "line":
                self.line(
                    x + pad,
                    cy,
                    x + pad + key,
                    cy,
                    colour,
                    "legend-key",
                    ' stroke-width="1.5" stroke-dasharray="6 4"',
                )
            else:
                self.rect(x + pad, cy - 5, key, 10, colour, "legend-key")
            self.text(x + pad + key + 6, cy, label, anchor="start", cls="legend-label")

    def uri(self, title: str) -> str:
        """The document as a ``data:image/svg+xml;base64,...`` URI."""
        doc = (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}"'
            f' height="{self.height}" viewBox="0 0 {self.width} {self.height}"'
            f' font-family="sans-serif" role="img"><title>{_xml(title)}</title>'
            + "".join(self.parts)
            + "</svg>"
        )
        return "data:image/svg+xml;base64," + base64.b64encode(doc.encode("utf-8")).decode("ascii")


# --- the figures ----------------------------------------------------------------------------------


def plot_cluster_sizes(histogram: Mapping[int, int]) -> str:
    """Log-log plot of the number of clusters of each size (a data URI)."""
    points = sorted((s, c) for s, c in histogram.items() if 0 < s < math.inf and 0 < c < math.inf)
    svg = _Svg(WIDTH, HEIGHT)
    xlo, xhi, xdec = _decades([s for s, _ in points])
    ylo, yhi, ydec = _decades([c for _, c in points])
    x = _Scale(xlo, xhi, svg.x0, svg.x1)
    y = _Scale(ylo, yhi, svg.y1, svg.y0)
    svg.grid([x(d) for d in xdec], [y(d) for d in ydec])
    for size, count in points:
        svg.point(
            x(math.log10(size)),
            y(math.log10(count)),
            POINT_COLOR,
            f' data-size="{size}" data-count="{count}"',
        )
    svg.minor_ticks([x(v) for v in _minor_logs(xlo, xhi)], [y(v) for v in _minor_logs(ylo, yhi)])
    svg.xticks(x, xdec, [_decade_label(d) for d in xdec])
    svg.yticks(y, ydec, [_decade_label(d) for d in ydec])
    title = "Cluster size distribution"
    svg.labels(title, "cluster size (documents)", "number of clusters")
    svg.frame()
    return svg.uri(title)


def _distance_bars(
    counts: npt.NDArray[np.int64], k: float
) -> tuple[list[Bar], tuple[float, float], float]:
    """One bar per integer distance, up to k + 1 at least; the x range and where the k line
    goes (k + 0.5: between the last duplicate distance and the first kept one)."""
    top = len(counts) - 1
    if math.isfinite(k):
        top = max(top, min(math.floor(k + 1), MAX_DISTANCE_BARS))
    top = max(top, 0)
    padded = np.pad(counts, (0, top + 1 - len(counts)))
    bars = [(i - 0.45, i + 0.45, float(padded[i])) for i in range(top + 1)]
    return bars, (-0.6, top + 0.6), k + 0.5


def _similarity_bars(scores: Scores, threshold: float) -> tuple[list[Bar], tuple[float, float]]:
    """Similarities as one bar per distinct value when they are few (MinHash estimates are
    multiples of 1/k, which fixed-width bins would alias), else as a 40-bin histogram; and
    the x range (from just below the lowest value or the threshold to 1)."""
    counts = scores.counts if scores.counts is not None else np.zeros(1, dtype=np.int64)
    occupied = np.flatnonzero(counts)
    values = occupied / SIMILARITY_STEPS
    t = threshold if math.isfinite(threshold) else 0.99
    lo = max(min(scores.low, t, 0.99), 0.0)
    if len(occupied) <= DISCRETE_VALUES:
        gap = float(np.diff(values).min()) if len(values) > 1 else 0.01
        half = min(0.8 * gap, 0.02) / 2
        heights = counts[occupied]
        bars = [(v - half, v + half, float(c)) for v, c in zip(values, heights, strict=True)]
    else:
        edges = np.linspace(math.floor(lo * 100) / 100, 1.0, SIMILARITY_BINS + 1)
        heights, _ = np.histogram(values, bins=edges, weights=counts[occupied])
        bars = [(edges[i], edges[i + 1], float(heights[i])) for i in range(SIMILARITY_BINS)]
    return bars, (lo - 0.03 * (1.0 - lo) - 0.005, 1.01)


def plot_scores(scores: Scores, threshold: float) -> str:
    """Histogram of pair similarity (or Hamming distance) with the threshold line."""
    svg = _Svg(WIDTH, HEIGHT)
    if scores.metric == "distance":
        counts = scores.counts if scores.counts is not None else np.zeros(0, dtype=np.int64)
        bars, (xlo, xhi), line = _distance_bars(counts, threshold)
        label = f"k = {threshold:g} (distance ≤ k is a duplicate)"
        xlabel = "Hamming distance (bits)"
        xticks = _ticks(math.ceil(xlo), math.floor(xhi), 10, integer=True)
    else:
        bars, (xlo, xhi) = _similarity_bars(scores, threshold)
        line, label = threshold, f"threshold = {threshold:g}"
        xlabel = "Jaccard similarity (MinHash estimate)"
        xticks = _ticks(xlo, xhi, 8)
    x = _Scale(xlo, xhi, svg.x0, svg.x1)
    yhi, yticks = _count_axis(max((h for _, _, h in bars), default=0.0))
    y = _Scale(0.0, yhi, svg.y1, svg.y0)
    for left, right, height in bars:
        svg.bar(
            x(left),
            x(right),
            y(height),
            y(0.0),
            FILL,
            f' stroke="{EDGE}" data-value="{(left + right) / 2:.10g}" data-count="{height:.15g}"',
        )
    if x.contains(line):
        svg.threshold(x(line))
    svg.xticks(x, xticks, [_tick_label(v, xticks) for v in xticks])
    svg.yticks(y, yticks, [_tick_label(v, yticks) for v in yticks])
    title = f"Verified {scores.metric} ({scores.count:,} values)"
    svg.labels(title, xlabel, "pairs")
    svg.frame()
    svg.legend([("line", THRESHOLD_COLOR, label)])
    return svg.uri(title)


def plot_bands(bands: Sequence[tuple[int, int, int]]) -> str:
    """Candidate and verified pairs per LSH band (or SimHash block), side by side, on a log
    scale that can draw 0 (y = log10(1 + pairs), as matplotlib's symlog with linthresh 1)."""

    def f(v: float) -> float:
        return math.log10(1.0 + max(v, 0.0))

    svg = _Svg(WIDTH, HEIGHT)
    n = len(bands)
    x = _Scale(-0.6, max(n, 1) - 0.4, svg.x0, svg.x1)
    top = max([f(c) for _, c, _ in bands] + [f(v) for _, _, v in bands] + [math.log10(2)])
    y = _Scale(0.0, 1.05 * top, svg.y1, svg.y0)
    values = [0.0] + [10.0**e for e in range(0, 19) if f(10.0**e) <= 1.05 * top]
    svg.grid(ys=[y(f(v)) for v in values[1:]])
    for i, (band, candidates, verified) in enumerate(bands):
        for left, value, colour, series in (
            (i - 0.4, candidates, CANDIDATE_COLOR, "candidates"),
            (i, verified, FILL, "verified"),
        ):
            svg.bar(
                x(left),
                x(left + 0.4),
                y(f(value)),
                y(0.0),
                colour,
                f' data-series="{series}" data-band="{band}" data-count="{value}"',
            )
    names = [str(b) for b, _, _ in bands]
    widest = max((_text_width(s, TICK_FONT) for s in names), default=0.0) + 6
    every = 1
    while n and every * (svg.x1 - svg.x0) / n < widest:  # thin: every 1, 2, 5, 10, 20, ...
        every = every * 5 // 2 if str(every)[0] == "2" else every * 2
    shown = list(range(0, n, every))
    svg.xticks(x, [float(i) for i in shown], [names[i] for i in shown])
    svg.yticks(y, [f(v) for v in values], [f"{v:,.0f}" for v in values])
    title = "Candidate vs verified pairs per band"
    svg.labels(title, "band (MinHash) or block (SimHash)", "pairs")
    svg.frame()
    svg.legend([("swatch", CANDIDATE_COLOR, "candidates"), ("swatch", FILL, "verified")])
    return svg.uri(title)


def plot_timings(stages: Sequence[tuple[str, float]]) -> str:
    """Horizontal bar chart of the wall seconds of each stage, first stage on top."""
    limit = 34  # characters of a stage name shown
    names = [s if len(s) <= limit else s[: limit - 1] + "…" for s, _ in stages]
    seconds = [t if math.isfinite(t) else 0.0 for _, t in stages]
    widest = max((_text_width(s, TICK_FONT) for s in names), default=0.0)
    svg = _Svg(WIDTH, 40 * len(stages) + 120, left=min(max(widest + 16, LEFT), 280))
    lo, hi = min([0.0, *seconds]) * 1.05, max([0.0, *seconds]) * 1.05
    if hi <= lo:
        hi = lo + 1.0
    x = _Scale(lo, hi, svg.x0, svg.x1)
    ticks = _ticks(lo, hi, 6)
    svg.grid(xs=[x(v) for v in ticks])
    slot = (svg.y1 - svg.y0) / max(len(stages), 1)
    for i, ((stage, _), name, t) in enumerate(zip(stages, names, seconds, strict=True)):
        middle = svg.y0 + (i + 0.5) * slot
        svg.bar(
            x(0.0),
            x(t),
            middle - 0.4 * slot,
            middle + 0.4 * slot,
            TIMING_COLOR,
            f' data-stage="{_xml(stage)}" data-seconds="{t:.15g}"',
        )
        svg.line(svg.x0 - 5, middle, svg.x0, middle, AXIS_COLOR, "tick")
        svg.text(svg.x0 - 8, middle, name, anchor="end")
    svg.xticks(x, ticks, [_tick_label(v, ticks) for v in ticks])
    title = "Stage timings"
    svg.labels(title, "wall seconds", "")
    svg.frame()
    return svg.uri(title)
