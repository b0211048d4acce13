"""report.html from small hand-made dedup output directories (pyarrow only, no Spark)."""

from __future__ import annotations

import base64
import html
import io
import json
import math
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from PIL import Image
from report_outputs import (
    BANDS,
    COUNTS,
    SECONDS,
    SHARED,
    make_output,
    sample,
    standard_output,
    words,
)

from neardup_udfs.cli import main
from neardup_udfs.kernels import winnow
from neardup_udfs.report import (
    MEMBERS_SHOWN,
    TEXT_LIMIT,
    WINNOW_K,
    WINNOW_W,
    ReportError,
    build_report,
    write_report_html,
)
from neardup_udfs.report.data import SIMILARITY_STEPS, Scores
from neardup_udfs.report.plots import (
    DISCRETE_VALUES,
    SIMILARITY_BINS,
    plot_bands,
    plot_cluster_sizes,
    plot_scores,
    plot_timings,
)

PLOTS = ("plot-cluster-sizes", "plot-scores", "plot-bands", "plot-timings")

# --- reading the page ---------------------------------------------------------------------------


class Elements(HTMLParser):
    """Attributes and text of every element with an id."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.attrs: dict[str, dict[str, str]] = {}
        self.text: dict[str, str] = {}
        self._open: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.attrs[a["id"]] = {"tag": tag, **a}
            self.text[a["id"]] = ""
        if tag not in ("img", "meta", "br"):
            self._open.append(a.get("id"))

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for i in self._open:
            if i is not None:
                self.text[i] += data


def elements(page: str) -> Elements:
    parser = Elements()
    parser.feed(page)
    return parser


def articles(page: str, kind: str) -> dict[str, str]:
    """doc id -> inner HTML of each ``<article class="doc KIND">``."""
    found = re.findall(
        rf'<article class="doc {kind}" data-doc-id="([^"]*)">(.*?)</article>', page, re.S
    )
    return {html.unescape(i): body for i, body in found}


def marks(fragment: str) -> list[str]:
    return [html.unescape(m) for m in re.findall(r"<mark>(.*?)</mark>", fragment, re.S)]


def text_of(fragment: str) -> str:
    """The text of an HTML fragment (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


SVG_PREFIX = "data:image/svg+xml;base64,"
SVG = "{http://www.w3.org/2000/svg}"


def svg_of(uri: str) -> ET.Element:
    """The root of the SVG document in a ``data:image/svg+xml;base64,...`` URI."""
    assert uri.startswith(SVG_PREFIX)
    root = ET.fromstring(base64.b64decode(uri[len(SVG_PREFIX) :], validate=True))
    assert root.tag == f"{SVG}svg"
    return root


def svg(page: str, plot_id: str) -> ET.Element:
    """The root of the SVG figure the page's ``<img id=plot_id>`` shows."""
    attrs = elements(page).attrs[plot_id]
    assert attrs["tag"] == "img" and attrs["alt"].strip()
    return svg_of(attrs["src"])


def shapes(root: ET.Element, kind: str) -> list[ET.Element]:
    """The marks of one kind (``bar``, ``point``, ``threshold``), in document order."""
    return [e for e in root.iter() if e.get("class") == kind]


def texts(root: ET.Element) -> list[str]:
    return [e.text or "" for e in root.iter(f"{SVG}text")]


def size(root: ET.Element) -> tuple[int, int]:
    return int(root.get("width", "0")), int(root.get("height", "0"))


def similarity_scores(values: dict[float, int]) -> Scores:
    """A similarity summary with ``values[v]`` values equal to ``v``."""
    counts = np.zeros(SIMILARITY_STEPS + 1, dtype=np.int64)
    for v, n in values.items():
        counts[round(v * SIMILARITY_STEPS)] += n
    total = sum(v * n for v, n in values.items())
    return Scores(
        "similarity", "pairs", sum(values.values()), min(values), max(values), [total], counts
    )


# --- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def standard(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = standard_output(tmp_path_factory.mktemp("std") / "out")
    return root, build_report(root)


# --- summary, plots, sections ---------------------------------------------------------------------


def test_counts_equal_report_json(standard: tuple[Path, str]) -> None:
    _, page = standard
    el = elements(page)
    for key, value in COUNTS.items():
        if key == "hot_buckets":
            continue
        cell = f"count-{key.replace('_', '-')}"
        assert el.attrs[cell]["data-value"] == str(value), cell
        assert int(el.text[cell].replace(",", "")) == value, cell
    near = COUNTS["removed"] - COUNTS["exact_duplicates"]
    assert el.attrs["count-near-duplicates"]["data-value"] == str(near)
    assert el.text["count-near-duplicates"] == f"{near:,}"
    fraction = float(el.attrs["count-fraction-removed"]["data-value"])
    assert fraction == pytest.approx(COUNTS["removed"] / COUNTS["input"], abs=1e-6)
    assert el.text["pipeline-id"] == "semblance/1;bands=25,k=125,rows=5"
    assert el.text["pipeline-version"] == "semblance/1"
    assert el.text["neardup-version"] == "0.1.0"


def test_near_duplicates_never_negative(tmp_path: Path) -> None:
    counts = dict(COUNTS, removed=4, exact_duplicates=9)
    page = build_report(make_output(tmp_path / "out", {"a": [("b", 0.9)]}, counts=counts))
    assert elements(page).attrs["count-near-duplicates"]["data-value"] == "0"


def test_timings_table_and_shares(standard: tuple[Path, str]) -> None:
    el = elements(standard[1])
    for stage, seconds in SECONDS.items():
        assert float(el.text[f"seconds-{stage}"]) == pytest.approx(seconds)
    assert float(el.text["seconds-total"]) == pytest.approx(sum(SECONDS.values()))
    assert "26.67 %" in standard[1]  # candidates: 4 of 15 seconds


@pytest.mark.parametrize("plot_id", PLOTS)
def test_every_plot_is_a_valid_svg(standard: tuple[Path, str], plot_id: str) -> None:
    root = svg(standard[1], plot_id)
    height = 40 * len(SECONDS) + 120 if plot_id == "plot-timings" else 360
    assert size(root) == (700, height)
    assert root.get("viewBox") == f"0 0 700 {height}"
    kind = "point" if plot_id == "plot-cluster-sizes" else "bar"
    assert len(shapes(root, kind)) >= 1
    # self-contained: no links, scripts, embedded images, styles or fonts to fetch
    for e in root.iter():
        assert e.tag.startswith(SVG) and e.tag[len(SVG) :] in {
            "svg", "title", "rect", "line", "circle", "text",
        }  # fmt: skip
        assert not any("href" in a for a in e.attrib), e.attrib
        assert "url(" not in "".join(e.attrib.values())
    assert root.get("font-family") == "sans-serif"


def test_band_plot_caption_sums_report_json(standard: tuple[Path, str]) -> None:
    page = standard[1]
    total_c = sum(b["candidates"] for b in BANDS)
    total_v = sum(b["verified"] for b in BANDS)
    assert f"25 bands; {total_c:,} candidate and {total_v:,} verified" in page
    assert 'id="no-band-data"' not in page


def test_page_is_self_contained(standard: tuple[Path, str]) -> None:
    page = standard[1]
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page.lower()
    assert re.search(r"<style>.+</style>", page, re.S)
    sources = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert sources and all(s.startswith((SVG_PREFIX, "#")) for s in sources)


def test_hot_buckets_top_20_biggest_first(standard: tuple[Path, str]) -> None:
    table = re.search(r'<table class="hot-buckets">(.*?)</table>', standard[1], re.S)
    assert table is not None
    sizes = [int(s.replace(",", "")) for s in re.findall(r'num">([\d,]+)</td></tr>', table[1])]
    assert sizes == [1024 - i for i in range(20)]
    assert f"<code>{18:016x}</code>" in table[1] and f"<code>{4:016x}</code>" not in table[1]


def test_config_and_preset_versions(tmp_path: Path) -> None:
    config = {"method": "minhash", "threshold": 0.8, "input": "<img src=x>", "k": 3}
    page = build_report(make_output(tmp_path / "out", {"a": [("b", 0.9)]}, config=config))
    shown = elements(page).text["config-json"]
    assert json.loads(shown) == config
    assert "<img src=x>" not in page and "&lt;img src=x&gt;" in page
    assert '<tr class="used"><td><code>semblance</code></td><td><code>semblance/1</code>' in page
    assert "threshold 0.8" in elements(page).attrs["plot-scores"]["alt"]


# --- score histogram ------------------------------------------------------------------------------


def test_zero_duplicates_says_no_similarity_data(tmp_path: Path) -> None:
    singletons: dict[str, list[tuple[str, float]]] = {f"d{i}": [] for i in range(5)}
    counts = dict.fromkeys(COUNTS, 0) | {"input": 5, "kept": 5, "rounds": 1}
    page = build_report(make_output(tmp_path / "out", singletons, counts=counts))
    el = elements(page)
    assert "plot-scores" not in el.attrs
    assert "No similarity data" in el.text["no-score-data"]
    assert len(shapes(svg(page, "plot-cluster-sizes"), "point")) == 1  # 5 clusters of 1
    assert el.text["count-fraction-removed"] == "0.00 %"
    assert "samples output" in el.text["no-samples"]
    assert "plot-bands" not in el.attrs and "No per-band" in el.text["no-band-data"]


def test_giant_cluster_renders(tmp_path: Path) -> None:
    members = [(f"m{i:04d}", 0.7 + (i % 300) / 1000) for i in range(1999)]
    counts = dict(COUNTS, input=2000, clusters=1, removed=1999, kept=1, exact_duplicates=0)
    page = build_report(make_output(tmp_path / "out", {"giant": members}, counts=counts))
    el = elements(page)
    assert el.attrs["count-removed"]["data-value"] == "1999"
    plot = svg(page, "plot-scores")  # 300 distinct similarities: binned
    assert len(shapes(plot, "bar")) == SIMILARITY_BINS and len(shapes(plot, "threshold")) == 1
    assert sum(float(b.get("data-count", "0")) for b in shapes(plot, "bar")) == 1999
    assert "1,999 values from cluster members" in page  # no pairs/: clusters/ scores


def test_simhash_distance_histogram(tmp_path: Path) -> None:
    clusters = {"a": [("b", 0), ("c", 2), ("d", 3)], "e": [("f", 1)]}
    pairs = [("a", "b", 0), ("a", "c", 2), ("c", "d", 1), ("e", "f", 1)]
    config = {"method": "simhash", "threshold": None, "k": 3, "input": "corpus"}
    root = make_output(tmp_path / "out", clusters, metric="distance", pairs=pairs, config=config)
    page = build_report(root)
    attrs = elements(page).attrs["plot-scores"]
    assert attrs["data-metric"] == "distance"
    assert "Hamming distance" in attrs["alt"] and "k = 3" in attrs["alt"]
    assert "4 values from verified pairs" in page
    plot = svg(page, "plot-scores")
    counts = [int(b.get("data-count", "")) for b in shapes(plot, "bar")]
    assert counts == [1, 2, 1, 0, 0]  # distances 0..k+1
    assert len(shapes(plot, "threshold")) == 1


def test_simhash_without_data_says_no_distance_data(tmp_path: Path) -> None:
    config = {"method": "simhash", "k": 3}
    page = build_report(make_output(tmp_path / "o", {"a": []}, metric="distance", config=config))
    assert "No distance data" in elements(page).text["no-score-data"]


# --- the figures (report.plots: inline SVG, no Spark) --------------------------------------------


def test_distance_plot_has_a_bar_per_distance_up_to_k_plus_1_and_the_k_line() -> None:
    scores = Scores("distance", "pairs", 4, 0, 2, [4.0], np.array([1, 2, 1]))
    root = svg_of(plot_scores(scores, 3.0))
    bars = shapes(root, "bar")
    assert [b.get("data-value") for b in bars] == ["0", "1", "2", "3", "4"]
    assert [b.get("data-count") for b in bars] == ["1", "2", "1", "0", "0"]
    (line,) = shapes(root, "threshold")
    x = float(line.get("x1", "nan"))
    assert line.get("stroke-dasharray") and line.get("x2") == line.get("x1")

    def centre(bar: ET.Element) -> float:
        return float(bar.get("x", "nan")) + float(bar.get("width", "nan")) / 2

    assert centre(bars[3]) < x < centre(bars[4])  # at k + 0.5
    assert "k = 3 (distance ≤ k is a duplicate)" in texts(root)
    assert "Hamming distance (bits)" in texts(root) and "Verified distance (4 values)" in texts(
        root
    )
    tall = [float(b.get("height", "nan")) for b in bars]
    assert tall[1] > tall[0] == tall[2] > 0 and tall[3] == tall[4] == 0
    longer = Scores("distance", "pairs", 9, 0, 8, [9.0], np.ones(9, dtype=np.int64))
    assert len(shapes(svg_of(plot_scores(longer, 0.0)), "bar")) == 9  # 0..8, beyond k + 1


def test_similarity_plot_draws_few_values_one_bar_each_and_many_binned() -> None:
    few = similarity_scores({0.72: 3, 0.8: 1, 0.84: 10, 0.96: 5, 1.0: 40})
    root = svg_of(plot_scores(few, 0.8))
    bars = shapes(root, "bar")
    assert [float(b.get("data-value", "nan")) for b in bars] == [0.72, 0.8, 0.84, 0.96, 1.0]
    assert [b.get("data-count") for b in bars] == ["3", "1", "10", "5", "40"]
    assert len(shapes(root, "threshold")) == 1 and "threshold = 0.8" in texts(root)
    assert "Jaccard similarity (MinHash estimate)" in texts(root) and "pairs" in texts(root)
    assert "Verified similarity (59 values)" in texts(root)
    many = similarity_scores({0.5 + i / 400: 1 + i % 7 for i in range(DISCRETE_VALUES + 1)})
    binned = shapes(svg_of(plot_scores(many, 0.7)), "bar")
    assert len(binned) == SIMILARITY_BINS
    assert sum(float(b.get("data-count", "0")) for b in binned) == many.count


def test_band_plot_has_two_bars_per_band_and_thins_its_labels() -> None:
    bands = [(b, 300 - 10 * b, 0 if b == 3 else 40 + b) for b in range(25)]
    root = svg_of(plot_bands(bands))
    bars = shapes(root, "bar")
    assert len(bars) == 2 * len(bands)
    assert [b.get("data-series") for b in bars[:4]] == ["candidates", "verified"] * 2
    assert [b.get("data-band") for b in bars[::2]] == [str(b) for b, _, _ in bands]
    zero = [b for b in bars if b.get("data-band") == "3" and b.get("data-series") == "verified"]
    assert float(zero[0].get("height", "nan")) == 0  # 0 is drawable on this log scale
    labels = texts(root)
    assert {"candidates", "verified"} <= set(labels) and "0" in labels and "24" in labels
    many = svg_of(plot_bands([(b, 10**6, 1) for b in range(300)]))
    assert len(shapes(many, "bar")) == 600
    shown = [t for t in texts(many) if t.isdigit() and int(t) < 300]
    assert 3 <= len(shown) < 60  # band numbers thinned, not 300 overlapping labels


def test_timings_plot_one_bar_per_stage_first_on_top_and_text_escaped() -> None:
    stages = [("read", 2.5), ("a <b> & c", 1.0), ('quote"d\x00', 4.0), ("write", 0.0)]
    root = svg_of(plot_timings(stages))  # parses: every text escaped
    assert size(root) == (700, 40 * len(stages) + 120)
    bars = shapes(root, "bar")
    assert [b.get("data-stage") for b in bars] == ["read", "a <b> & c", 'quote"d\ufffd', "write"]
    ys = [float(b.get("y", "nan")) for b in bars]
    assert ys == sorted(ys)  # first stage on top
    widths = [float(b.get("width", "nan")) for b in bars]
    assert widths[2] > widths[0] > widths[1] > widths[3] == 0
    assert "a <b> & c" in texts(root) and "wall seconds" in texts(root)
    assert "Stage timings" in texts(root)


def test_cluster_size_plot_one_point_per_size_on_log_axes() -> None:
    histogram = {1: 27, 2: 500, 3: 120, 12: 1, 150: 2}
    root = svg_of(plot_cluster_sizes(histogram))
    points = shapes(root, "point")
    assert [int(p.get("data-size", "0")) for p in points] == sorted(histogram)
    xs = [float(p.get("cx", "nan")) for p in points]
    assert xs == sorted(xs)
    labels = texts(root)
    assert {"1", "10", "100", "1,000"} <= set(labels)  # decade ticks
    assert {"cluster size (documents)", "number of clusters"} <= set(labels)
    assert "Cluster size distribution" in labels


def test_plots_of_empty_and_degenerate_input_still_draw() -> None:
    empty_similarity = Scores("similarity", "pairs")
    uris = [
        plot_cluster_sizes({}),
        plot_cluster_sizes({5: 1}),
        plot_scores(Scores("distance", "pairs"), 3.0),
        plot_scores(Scores("distance", "pairs", 2, 0, 0, [], np.array([2])), 0.0),
        plot_scores(empty_similarity, 0.8),
        plot_scores(similarity_scores({1.0: 7}), 1.0),
        plot_scores(similarity_scores({0.0: 7}), float("nan")),
        plot_bands([]),
        plot_bands([(0, 0, 0)]),
        plot_timings([]),
        plot_timings([("read", 0.0)]),
        plot_timings([("read", float("nan")), ("write", -1.0)]),
    ]
    for uri in uris:
        root = svg_of(uri)
        assert size(root)[0] == 700 and size(root)[1] >= 120
        assert texts(root)  # at least the title
    assert len(shapes(svg_of(uris[1]), "point")) == 1
    assert len(shapes(svg_of(uris[2]), "bar")) == 5  # distances 0..k+1, all empty
    assert len(shapes(svg_of(uris[4]), "threshold")) == 1


# --- side by side ---------------------------------------------------------------------------------


def test_shared_passages_are_marked(standard: tuple[Path, str]) -> None:
    page = standard[1]
    members = articles(page, "member")
    near = marks(members["d02"])
    assert near, "the near duplicate shares a passage"
    assert all(m in f"\n{SHARED}\n" for m in near)
    assert sum(len(m) for m in near) >= len(SHARED) // 2
    unrelated = [i for i in members if i != "d02" and i.startswith("d0")]
    assert unrelated and all("<mark>" not in members[i] for i in unrelated)
    rep = articles(page, "representative")["d01"]
    assert marks(rep) and all(m in f"\n{SHARED}\n" for m in marks(rep))


def test_at_most_members_shown_and_the_rest_counted(standard: tuple[Path, str]) -> None:
    page = standard[1]
    cluster = re.search(r'data-cluster-id="d01">(.*?)</section>', page, re.S)
    assert cluster is not None
    assert cluster[1].count('<article class="doc member"') == MEMBERS_SHOWN
    assert f"… and {8 - 1 - MEMBERS_SHOWN:,} more member(s) not shown." in cluster[1]
    assert "d02" in articles(cluster[1], "member")  # least similar first
    order = re.findall(r'data-cluster-id="([^"]+)"', page)
    assert order == ["d01", "d10"]  # biggest cluster first


def test_document_text_and_ids_are_escaped(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script> & more"
    bad_id = '"><b>x</b>'
    samples = [sample("a", "a", "plain representative text"), sample("a", bad_id, evil, 0.9)]
    root = make_output(tmp_path / "out", {"a": [(bad_id, 0.9)]}, samples=samples)
    page = build_report(root)
    assert "<script" not in page and "<b>x</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in page
    assert bad_id in articles(page, "member")


def cjk(i: int) -> str:
    return chr(0x4E00 + (i * 7919) % 20000)


def test_multibyte_text_highlights_whole_characters(tmp_path: Path) -> None:
    tokens = [f"{cjk(i)}{cjk(i + 1)}é{i}ü" for i in range(60)]
    shared = "naïve café 東京 " + " ".join(tokens)
    # Insertions shift the diagonal, so spans start and end at many byte offsets.
    edited = "naïve café 東京 " + " ".join(t + "★★" * (i % 8 == 7) for i, t in enumerate(tokens))
    rep = f"representative only intro R\n{shared}\nR ending of the rep"
    member = f"member has another start M\n{edited}\nM and another end"
    data = member.encode()
    spans = winnow.overlaps(rep, member, WINNOW_K, WINNOW_W)
    assert any(data[s.pos_b] & 0xC0 == 0x80 for s in spans), "a span starts mid-character"
    samples = [sample("r", "r", rep), sample("r", "m", member, 0.9)]
    page = build_report(make_output(tmp_path / "out", {"r": [("m", 0.9)]}, samples=samples))
    assert "\ufffd" not in page
    found = marks(articles(page, "member")["m"])
    assert len(found) > 1 and all(m in rep and m in edited for m in found)
    assert sum(len(m) for m in found) >= len(shared) // 2
    assert "naïve café 東京" in text_of(articles(page, "member")["m"])
    assert any("café 東京" in m for m in found)
    in_rep = marks(articles(page, "representative")["r"])
    assert in_rep and all(m in member and m in shared for m in in_rep)


def test_long_text_is_truncated_with_a_note(tmp_path: Path) -> None:
    long_text = words("long", 1500) + " THE-END"
    samples = [sample("a", "a", "short rep"), sample("a", "b", long_text, 0.9)]
    page = build_report(make_output(tmp_path / "out", {"a": [("b", 0.9)]}, samples=samples))
    body = articles(page, "member")["b"]
    note = re.search(r"… \(([\d,]+) more characters\)", body)
    assert note is not None
    hidden = int(note[1].replace(",", ""))
    text = text_of(body.split('<span class="more">')[0])
    shown = text.split("shares", 1)[-1]
    assert "THE-END" not in page
    assert TEXT_LIMIT * 0.9 <= len(long_text) - hidden <= TEXT_LIMIT
    assert long_text[: len(long_text) - hidden] in shown


def test_short_text_has_no_truncation_note(standard: tuple[Path, str]) -> None:
    assert "more characters)" not in standard[1]


# --- errors, writing, CLI -------------------------------------------------------------------------


def test_missing_report_json_names_the_directory(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match=re.escape(str(tmp_path))) as info:
        build_report(tmp_path)
    assert isinstance(info.value, ValueError)
    (tmp_path / "report.json").write_text("{not json")
    with pytest.raises(ReportError, match=re.escape(str(tmp_path))):
        build_report(tmp_path)


def test_write_report_html_replaces_atomically(tmp_path: Path) -> None:
    root = make_output(tmp_path / "out", {"a": [("b", 0.9)]})
    (root / "report.html").write_text("old")
    path = write_report_html(root)
    assert path == str(root / "report.html")
    assert Path(path).read_text(encoding="utf-8") == build_report(root)
    assert sorted(p.name for p in root.iterdir() if p.is_file()) == ["report.html", "report.json"]


def test_cli_report_writes_and_prints_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_output(tmp_path / "out", {"a": [("b", 0.9)]})
    report = json.loads((root / "report.json").read_text())
    (root / "_MANIFEST.json").write_text(json.dumps({"job": "dedup", **report}))
    assert main(["report", str(root)]) == 0
    out = capsys.readouterr().out.strip()
    assert out == str(root / "report.html")
    assert (root / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_cli_report_without_report_json_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "not-an-output"
    empty.mkdir()
    (empty / "_MANIFEST.json").write_text("{}")  # finished, but its report.json is gone
    assert main(["report", str(empty)]) == 2
    captured = capsys.readouterr()
    assert str(empty) in captured.err and "report.json" in captured.err
    assert not (empty / "report.html").exists()


def test_index_section_only_for_runs_against_an_index(tmp_path: Path) -> None:
    plain = build_report(make_output(tmp_path / "plain", {"a": [("b", 0.9)]}))
    assert 'id="index"' not in plain and 'href="#index"' not in plain
    out = make_output(tmp_path / "against", {"a": [("b", 0.9)]})
    report = json.loads((out / "report.json").read_text())
    report["index"] = {
        "path": "idx/<w48>",
        "batches_matched": ["w46", "w47"],
        "indexed_documents": 120000,
        "matches": 907,
        "batch_id": "w48",
        "added": 3769,
        "already_committed": False,
        "documents_after": 123769,
    }
    (out / "report.json").write_text(json.dumps(report))
    page = build_report(out)
    text = elements(page).text
    assert 'href="#index"' in page and "&lt;w48&gt;" in page and "<w48>" not in page
    assert text["index-batches"] == "w46, w47" and text["index-documents"] == "120,000"
    assert text["index-matches"] == "907" and text["index-added"] == "3,769 kept documents"
    assert text["index-after"] == "123,769"
    report["index"]["already_committed"] = True
    (out / "report.json").write_text(json.dumps(report))
    assert "already committed" in elements(build_report(out)).text["index-added"]


def test_only_the_shown_members_are_read_from_samples() -> None:
    """The CLI reads the texts of a cluster's representative and its MEMBERS_SHOWN least
    similar members only (distance: the farthest), unscored members last, ties by id."""
    import pyarrow as pa

    from neardup_udfs.report.data import MEMBERS_SHOWN, shown_ids

    keys = pa.table(
        {
            "cluster_id": ["c"] * 7 + ["d"] * 2,
            "doc_id": ["c", "m1", "m2", "m3", "m4", "m5", "m6", "d", "x"],
            "is_representative": [True] + [False] * 6 + [True, False],
            "similarity": [1.0, 0.9, 0.71, None, 0.8, 0.75, 0.75, 1.0, 0.95],
        }
    )
    assert MEMBERS_SHOWN == 4
    assert sorted(shown_ids(keys, "similarity")) == ["c", "d", "m2", "m4", "m5", "m6", "x"]
    far = keys.set_column(3, "distance", pa.array([0, 1, 9, None, 5, 3, 3, 0, 2]))
    assert sorted(shown_ids(far, "distance")) == ["c", "d", "m2", "m4", "m5", "m6", "x"]
    assert sorted(shown_ids(keys.drop_columns(["similarity"]), None)) == [
        "c", "d", "m1", "m2", "m3", "m4", "x"
    ]  # fmt: skip


# --- the images run's page (neardup_udfs.report.images) ---------------------------------------

IMAGE_COUNTS = {
    "input": 50,
    "rejected": 2,
    "hashed": 48,
    "identical": 5,
    "candidates": 60,
    "verified": 20,
    "clusters": 3,
    "kept": 30,
    "removed": 18,
    "chained": 0,
    "hot_buckets": 0,
    "rounds": 2,
    "driver_edges": 0,
}


def picture(seed: int, mode: str = "RGB", size: tuple[int, int] = (120, 80)) -> bytes:
    """A small encoded picture: a gradient tinted by ``seed`` (PNG)."""
    import numpy as np

    y, x = np.mgrid[0 : size[1], 0 : size[0]]
    rgb = np.stack([x * 2 % 256, y * 3 % 256, np.full_like(x, seed * 40 % 256)], axis=-1)
    im = Image.fromarray(rgb.astype("uint8")).convert(mode)
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def image_report(samples: pa.Table | None) -> str:
    from neardup_udfs.report import build_image_report

    report = {
        "counts": IMAGE_COUNTS,
        "seconds": {"read + hash": 3.0, "identical": 1.0, "candidates": 1.0, "report": 1.0},
        "pipeline": {"id": "phash/1", "version": "phash/1"},
        "config": {"input": "photos/", "k": 10, "max_pixels": 50_000_000},
        "cluster_size_histogram": {"1": 27, "2": 2, "12": 1},
        "hot_buckets": [],
        "scores": {
            "metric": "distance",
            "source": "verified pairs",
            "count": 20,
            "low": 0.0,
            "high": 9.0,
            "total": 60.0,
            "steps": [0, 2, 9],
            "counts": [8, 10, 2],
        },
        "neardup_version": "0.1.0",
    }
    return build_image_report(report, samples, "out/images")


def image_samples(thumbs: dict[str, str | None]) -> pa.Table:
    """Cluster ``c/0.png`` (12 images: the representative and 11 members at distances 0-10)
    and cluster ``d.webp`` (its representative and one member); ``thumbs`` by path."""
    rows = [("c/0.png", "c/0.png", True, 0, 12)]
    rows += [("c/0.png", f"c/{i}.png", False, i - 1, 12) for i in range(1, 12)]
    rows += [("d.webp", "d.webp", True, 0, 2), ("d.webp", 'e"<b>.webp', False, 3, 2)]
    return pa.table(
        {
            "cluster_id": [r[0] for r in rows],
            "path": [r[1] for r in rows],
            "is_representative": [r[2] for r in rows],
            "distance": pa.array([r[3] for r in rows], pa.int32()),
            "cluster_size": pa.array([r[4] for r in rows], pa.int64()),
            "thumbnail": [thumbs.get(r[1]) for r in rows],
        }
    )


def test_image_page_counts_distances_and_thumbnails() -> None:
    from neardup_udfs.report.images import MEMBERS_SHOWN, thumbnail_uri

    uri = thumbnail_uri(picture(1))
    assert uri is not None
    thumbs: dict[str, str | None] = {f"c/{i}.png": uri for i in range(12)}
    thumbs.update({"d.webp": uri, 'e"<b>.webp': None})  # no thumbnail could be made
    page = image_report(image_samples(thumbs))
    el = elements(page)
    for key, value in IMAGE_COUNTS.items():
        if key != "hot_buckets":
            assert el.attrs[f"count-{key.replace('_', '-')}"]["data-value"] == str(value)
    assert el.attrs["count-near-duplicates"]["data-value"] == "13"  # removed - identical
    assert el.text["pipeline-id"] == "phash/1"
    distances = shapes(svg(page, "plot-scores"), "bar")  # the verified distances, 0..k+1
    expected = ["0"] * 12
    expected[0], expected[2], expected[9] = "8", "10", "2"
    assert [b.get("data-count") for b in distances] == expected
    assert "20 values from verified pairs; min 0, mean 3, max 9" in page
    assert float(el.text["seconds-read + hash"]) == pytest.approx(3.0)
    # cluster c: the representative and the 8 farthest members (distances 10 down to 3)
    c = page[page.index('data-cluster-id="c/0.png"') : page.index('data-cluster-id="d.webp"')]
    shown = re.findall(r'data-path="([^"]*)" data-distance="(\d+)"', c)
    assert MEMBERS_SHOWN == 8
    assert shown == [("c/0.png", "0")] + [(f"c/{i}.png", str(i - 1)) for i in range(11, 3, -1)]
    assert "Hamming distance 10" in c and "representative (kept)" in c
    assert "… and 3 more image(s) not shown." in c
    assert c.count('<img class="thumb" src="data:image/jpeg;base64,') == 9
    # cluster d: the member without a thumbnail is shown without a picture, escaped
    d = page[page.index('data-cluster-id="d.webp"') :]
    assert '<div class="no-thumb">no picture</div>' in d
    assert "e&quot;&lt;b&gt;.webp" in d and 'e"<b>' not in page
    assert page.count('<img class="thumb"') == 9 + 1
    assert "http://" not in page and "https://" not in page and "<script" not in page
    sources = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert all(s.startswith(("data:image/", "#")) for s in sources)


def test_image_page_without_samples_or_scores() -> None:
    page = image_report(None)
    assert 'id="no-samples"' in page and '<figure class="thumb' not in page
    empty = image_samples({}).slice(0, 0)
    assert "No cluster has two or more images" in image_report(empty)


def test_thumbnails_are_small_inline_pictures_or_none() -> None:
    from neardup_udfs.report import thumbnail_uri

    def decoded(uri: str | None) -> Image.Image:
        assert uri is not None
        kind, data = uri.split(",", 1)
        im = Image.open(io.BytesIO(base64.b64decode(data, validate=True)))
        assert kind == f"data:image/{im.format.lower()};base64"
        return im

    photo = decoded(thumbnail_uri(picture(2, size=(400, 300))))
    assert (photo.format, photo.size) == ("JPEG", (96, 72))
    alpha = decoded(thumbnail_uri(picture(3, "RGBA")))
    assert alpha.format == "PNG" and alpha.mode == "RGBA"
    import numpy as np

    grey16 = Image.fromarray((np.arange(64 * 64).reshape(64, 64) * 16).astype(np.uint16))
    buf = io.BytesIO()
    grey16.save(buf, "PNG")
    levels = np.asarray(decoded(thumbnail_uri(buf.getvalue())).convert("L"))
    assert levels.min() < 30 and levels.max() > 200  # scaled, not clipped to white
    frames = [Image.new("RGB", (50, 50), c) for c in ((250, 10, 10), (10, 10, 250))]
    anim = io.BytesIO()
    frames[0].save(anim, "WEBP", save_all=True, append_images=frames[1:], lossless=True)
    r, g, b = decoded(thumbnail_uri(anim.getvalue())).convert("RGB").getpixel((10, 10))
    assert r > 200 and b < 60  # the first frame
    assert thumbnail_uri(b"not an image") is None
    assert thumbnail_uri(picture(4)[:200]) is None  # truncated
    assert thumbnail_uri(picture(4, size=(400, 300)), max_pixels=1000) is None


def test_image_page_is_written_through_the_jobs_storage() -> None:
    from neardup_udfs.report import image_report_page

    class Store:
        written: dict[str, bytes] = {}

        def write_bytes(self, path: str, data: bytes) -> None:
            self.written[path] = data

    store = Store()
    report = {"counts": IMAGE_COUNTS, "config": {"input": "x"}}
    target = image_report_page(image_samples({}))(store, "s3://bucket/run", report)  # type: ignore[arg-type]
    assert target == "s3://bucket/run/report.html"
    assert store.written[target].startswith(b"<!DOCTYPE html>")
    assert b"neardup image report" in store.written[target]


@pytest.mark.parametrize("metric", ["similarity", "distance"])
def test_merged_summaries_are_the_summary_of_all_values(metric: str) -> None:
    """``Scores.merge``: summaries of parts (one of them empty) folded together are the
    summary of every value, bins of unequal lengths included."""
    rng = np.random.default_rng(3)
    values = rng.uniform(0, 1 if metric == "similarity" else 20, 300)
    whole = Scores(metric, "pairs")
    whole.add(values)
    merged = Scores(metric, "pairs")
    for part in (values[:10], values[10:10], values[10:200], values[200:]):
        one = Scores(metric, "")
        one.add(np.sort(part)[: len(part) // 2] if metric == "distance" else part)
        one.add(np.sort(part)[len(part) // 2 :] if metric == "distance" else part[:0])
        merged.merge(one)
    assert merged.to_json() == whole.to_json()


def test_the_total_is_the_correctly_rounded_sum_whatever_the_batches_and_merges() -> None:
    """``Scores.total`` is ``math.fsum`` of every value: added in one batch or several,
    merged in any order, through JSON (``exact``) or not; report.json's form has no terms."""
    values = np.array([1e16, 1.0, -1e16, 0.1, 0.2, 0.3, 1e-20, 3.0] * 5)
    expected = math.fsum(values.tolist())
    assert float(values.sum()) != expected  # a plain float sum would miss it
    whole = Scores("similarity", "pairs")
    whole.add(values)
    assert whole.total == expected and "terms" not in whole.to_json()
    parts = [values[i::3] for i in range(3)]
    for order in ([0, 1, 2], [2, 0, 1], [1, 2, 0]):
        merged = Scores("similarity", "pairs")
        for i in order:
            one = Scores("similarity", "")
            one.add(parts[i][:2])
            one.add(parts[i][2:])
            merged.merge(Scores.from_json(json.loads(json.dumps(one.to_json(exact=True)))))
        assert merged.total == expected and merged.to_json() == whole.to_json(), order
