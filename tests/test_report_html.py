"""report.html from small hand-made dedup output directories (pyarrow only, no Spark)."""

from __future__ import annotations

import base64
import html
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

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

COUNTS = {
    "input": 12345,
    "rejected": 3,
    "exact_duplicates": 10,
    "candidates": 4567,
    "verified": 890,
    "clusters": 2,
    "kept": 12295,
    "removed": 47,
    "chained": 4,
    "hot_buckets": 25,
    "rounds": 3,
}
SECONDS = {
    "read": 2.5,
    "exact": 1.0,
    "fingerprint": 3.0,
    "candidates": 4.0,
    "verify": 2.0,
    "components": 1.5,
    "select": 0.5,
    "write": 0.5,
}
PLOTS = ("plot-cluster-sizes", "plot-scores", "plot-bands", "plot-timings")

# --- building output directories ----------------------------------------------------------------


def words(tag: str, n: int) -> str:
    """n distinct words, so that texts built from different tags share no 16-byte run."""
    return " ".join(f"{tag}{i}q{(i * 7919) % 997}" for i in range(n))


def write_parquet(directory: Path, rows: list[dict[str, Any]], schema: pa.Schema) -> None:
    directory.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), directory / "part-00000.parquet")
    (directory / "_SUCCESS").write_bytes(b"")  # as Spark leaves it


def score_field(metric: str) -> pa.Field:
    return pa.field(metric, pa.int32() if metric == "distance" else pa.float64())


def make_output(
    root: Path,
    clusters: dict[str, list[tuple[str, float]]],
    *,
    metric: str = "similarity",
    pairs: list[tuple[str, str, float]] | None = None,
    samples: list[dict[str, Any]] | None = None,
    counts: dict[str, int] | None = None,
    config: dict[str, Any] | None = None,
    hot_buckets: list[dict[str, Any]] | None = None,
    bands: list[dict[str, int]] | None = None,
) -> Path:
    """An output directory; ``clusters`` maps representative id -> [(member id, score)]."""
    root.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    histogram: dict[str, int] = {}
    for rep, members in clusters.items():
        rows.append({"doc_id": rep, "cluster_id": rep, "is_representative": True, metric: None})
        for doc_id, score in members:
            rows.append(
                {"doc_id": doc_id, "cluster_id": rep, "is_representative": False, metric: score}
            )
        size = str(len(members) + 1)
        histogram[size] = histogram.get(size, 0) + 1
    schema = pa.schema(
        [
            pa.field("doc_id", pa.string()),
            pa.field("cluster_id", pa.string()),
            pa.field("is_representative", pa.bool_()),
            score_field(metric),
        ]
    )
    write_parquet(root / "clusters", rows, schema)
    if pairs is not None:
        pair_schema = pa.schema([("a", pa.string()), ("b", pa.string()), score_field(metric)])
        pair_rows = [{"a": a, "b": b, metric: s} for a, b, s in pairs]
        write_parquet(root / "pairs", pair_rows, pair_schema)
    if samples is not None:
        sample_schema = pa.schema(
            [
                pa.field("cluster_id", pa.string()),
                pa.field("doc_id", pa.string()),
                pa.field("is_representative", pa.bool_()),
                score_field(metric),
                pa.field("text", pa.string()),
                pa.field("truncated", pa.bool_()),
            ]
        )
        write_parquet(root / "samples", samples, sample_schema)
    method = "simhash" if metric == "distance" else "minhash"
    report = {
        "counts": counts or COUNTS,
        "seconds": SECONDS,
        "pipeline": {"id": "semblance/1;bands=25,k=125,rows=5", "version": "semblance/1"},
        "config": config or {"method": method, "threshold": None, "k": 3, "input": "corpus"},
        "cluster_size_histogram": histogram,
        "hot_buckets": hot_buckets or [],
        "neardup_version": "0.1.0",
    }
    if bands is not None:
        report["bands"] = bands
    (root / "report.json").write_text(json.dumps(report, indent=2))
    return root


def sample(cid: str, doc_id: str, text: str, score: float | None = None) -> dict[str, Any]:
    return {
        "cluster_id": cid,
        "doc_id": doc_id,
        "is_representative": doc_id == cid,
        "similarity": score,
        "text": text,
        "truncated": False,
    }


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


def png(page: str, plot_id: str) -> bytes:
    attrs = elements(page).attrs[plot_id]
    assert attrs["tag"] == "img" and attrs["alt"].strip()
    prefix = "data:image/png;base64,"
    assert attrs["src"].startswith(prefix)
    return base64.b64decode(attrs["src"][len(prefix) :], validate=True)


# --- fixtures -------------------------------------------------------------------------------------

BANDS = [{"band": b, "candidates": 300 - 10 * b, "verified": 40 + b} for b in range(25)]
SHARED = words("shared", 60)
REP_TEXT = f"{words('rep', 20)} R\n{SHARED}\nR {words('reptail', 20)}"
NEAR_TEXT = f"{words('near', 25)} M\n{SHARED}\nM {words('neartail', 10)}"
UNRELATED = words("other", 80)


@pytest.fixture(scope="module")
def standard(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    members = [(f"d{i:02d}", 0.70 + i / 100) for i in range(2, 9)]
    clusters: dict[str, list[tuple[str, float]]] = {
        "d01": members,
        "d10": [("d11", 0.95)],
        "d20": [],
        "d21": [],
    }
    pairs = [("d01", d, s) for d, s in members] + [("d10", "d11", 0.95)]
    samples = [sample("d01", "d01", REP_TEXT), sample("d01", "d02", NEAR_TEXT, 0.72)]
    samples += [sample("d01", f"d{i:02d}", UNRELATED + f" {i}", 0.8) for i in range(3, 9)]
    samples += [sample("d10", "d10", "short"), sample("d10", "d11", "short!", 0.95)]
    buckets = [{"band": i % 5, "key": f"{i:016x}", "size": 1000 + i} for i in range(25)]
    root = make_output(
        tmp_path_factory.mktemp("std") / "out",
        clusters,
        pairs=pairs,
        samples=samples,
        hot_buckets=buckets,
        bands=BANDS,
    )
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
def test_every_plot_is_a_valid_png(standard: tuple[Path, str], plot_id: str) -> None:
    data = png(standard[1], plot_id)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 5000
    with Image.open(io.BytesIO(data)) as image:
        image.verify()
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG" and image.width > 300 and image.height > 150


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
    assert sources and all(s.startswith(("data:image/png;base64,", "#")) for s in sources)


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
    assert png(page, "plot-cluster-sizes")[:4] == b"\x89PNG"
    assert el.text["count-fraction-removed"] == "0.00 %"
    assert "samples output" in el.text["no-samples"]
    assert "plot-bands" not in el.attrs and "No per-band" in el.text["no-band-data"]


def test_giant_cluster_renders(tmp_path: Path) -> None:
    members = [(f"m{i:04d}", 0.7 + (i % 300) / 1000) for i in range(1999)]
    counts = dict(COUNTS, input=2000, clusters=1, removed=1999, kept=1, exact_duplicates=0)
    page = build_report(make_output(tmp_path / "out", {"giant": members}, counts=counts))
    el = elements(page)
    assert el.attrs["count-removed"]["data-value"] == "1999"
    assert len(png(page, "plot-scores")) > 5000
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
    assert png(page, "plot-scores")[:4] == b"\x89PNG"


def test_simhash_without_data_says_no_distance_data(tmp_path: Path) -> None:
    config = {"method": "simhash", "k": 3}
    page = build_report(make_output(tmp_path / "o", {"a": []}, metric="distance", config=config))
    assert "No distance data" in elements(page).text["no-score-data"]


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

    from neardup_udfs.report.data import MEMBERS_SHOWN, _shown_ids

    keys = pa.table(
        {
            "cluster_id": ["c"] * 7 + ["d"] * 2,
            "doc_id": ["c", "m1", "m2", "m3", "m4", "m5", "m6", "d", "x"],
            "is_representative": [True] + [False] * 6 + [True, False],
            "similarity": [1.0, 0.9, 0.71, None, 0.8, 0.75, 0.75, 1.0, 0.95],
        }
    )
    assert MEMBERS_SHOWN == 4
    assert sorted(_shown_ids(keys, "similarity")) == ["c", "d", "m2", "m4", "m5", "m6", "x"]
    far = keys.set_column(3, "distance", pa.array([0, 1, 9, None, 5, 3, 3, 0, 2]))
    assert sorted(_shown_ids(far, "distance")) == ["c", "d", "m2", "m4", "m5", "m6", "x"]
    assert sorted(_shown_ids(keys.drop_columns(["similarity"]), None)) == [
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
    assert png(page, "plot-scores")[:8] == b"\x89PNG\r\n\x1a\n"  # the verified distances
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
