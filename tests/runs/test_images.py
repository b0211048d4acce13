"""jobs/images.py: the edited copies of an image (resized, re-encoded, cropped, grey,
watermarked) cluster with it at the default k; unrelated images do not; bad files are
rejected with a reason and the job succeeds."""

from __future__ import annotations

import base64
import html
import io
import json
import re
from pathlib import Path

import images as images_job
import pytest
from image_edits import encode, scene, variants
from PIL import Image
from pyspark.sql import functions as F
from warc_corpus import Crawl, CrawlWriter, record_id

import neardup_udfs
from neardup_udfs.config import ConfigError, load_images_config
from neardup_udfs.io.input_files import HIDDEN_REASON
from neardup_udfs.io.readers import InputError
from neardup_udfs.kernels.phash import phash, phash_distance, phash_from_hex, phash_hex
from neardup_udfs.stages.images import EMPTY_FILE

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "phash-images"


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """A folder of families (an original and its six variants: the golden circle and four
    generated scenes), three unrelated scenes, and five bad files; family name -> file names."""
    root = tmp_path_factory.mktemp("photos")
    families: dict[str, list[str]] = {}
    originals = {"circle": Image.open(GOLDEN / "circle_128.png").convert("RGB")}
    originals.update({f"scene{s}": scene(s) for s in range(4)})
    for name, im in originals.items():
        (root / f"{name}.png").write_bytes(encode(im))
        families[name] = [f"{name}.png"]
        for v, data in variants(im).items():
            ext = "jpg" if v == "jpeg50" else "png"
            (root / f"{name}-{v}.{ext}").write_bytes(data)
            families[name].append(f"{name}-{v}.{ext}")
    for s in (10, 11, 12):
        (root / "other").mkdir(exist_ok=True)
        (root / "other" / f"scene{s}.jpg").write_bytes(encode(scene(s), "JPEG", quality=90))
    bad = root / "bad"
    bad.mkdir()
    (bad / "notes.txt").write_text("not an image at all")
    png = encode(scene(20))
    (bad / "truncated.png").write_bytes(png[: len(png) // 2])
    (bad / "huge.png").write_bytes(encode(Image.new("L", (3000, 2000), 7)))  # 6 Mpx
    (bad / "picture.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')  # vector
    (bad / "big.bin").write_bytes(bytes(300_000))
    return root, families


def _run(spark, src: Path, out: Path, **overrides: object) -> images_job.Summary:  # type: ignore[no-untyped-def]
    settings: dict[str, object] = {
        "max_pixels": 5_000_000,
        "max_bytes": 200_000,
        "outputs": ("clusters", "hashes", "rejects", "pairs"),
    }
    settings.update(overrides)
    cfg = load_images_config(
        str(ROOT / "conf" / "images.toml"), input=str(src), output=str(out), **settings
    )
    summary = images_job.run(spark, cfg)
    assert spark._jsparkSession.sharedState().cacheManager().isEmpty()
    return summary


@pytest.fixture(scope="module")
def photos_run(spark, photos, tmp_path_factory):  # type: ignore[no-untyped-def]
    """One run of the job over ``photos`` (every output, pairs too): (summary, output dir)."""
    out = tmp_path_factory.mktemp("images") / "out"
    return _run(spark, photos[0], out), out


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def test_variants_are_within_k_and_families_apart() -> None:
    """The corpus is what the job test assumes: every variant within 10 bits of its
    original, different pictures more than 10 bits apart."""
    base = {s: phash(encode(scene(s))) for s in (0, 1, 2, 3, 10, 11, 12)}
    for s in (0, 1, 2, 3):
        for v, data in variants(scene(s)).items():
            assert phash_distance(base[s], phash(data)) <= 10, (s, v)
    seeds = sorted(base)
    assert min(phash_distance(base[a], base[b]) for a in seeds for b in seeds if a < b) > 10


def test_images_job_clusters_the_families(spark, photos, photos_run) -> None:  # type: ignore[no-untyped-def]
    _, families = photos
    s, out = photos_run
    clusters = spark.read.parquet(str(out / "clusters")).collect()
    groups: dict[str, set[str]] = {}
    for r in clusters:
        groups.setdefault(r.cluster_id, set()).add(_name(r.path))
    found = sorted(sorted(g) for g in groups.values() if len(g) > 1)
    assert found == sorted(sorted(f) for f in families.values())
    # unrelated images are clusters of their own
    singles = {_name(p) for g in groups.values() if len(g) == 1 for p in g}
    assert singles == {"scene10.jpg", "scene11.jpg", "scene12.jpg"}
    # the representative: the largest pixel count (the x2 copy), distances to it <= k
    for r in clusters:
        if r.is_representative:
            assert _name(r.path) in {"scene10.jpg", "scene11.jpg", "scene12.jpg"} or _name(
                r.path
            ).endswith("-double.png")
        assert r.distance <= 10
    assert (s.kept, s.removed, s.rejected) == (5 + 3, 5 * 6, 5)
    assert s.kept + s.removed + s.rejected == s.input == 5 * 7 + 3 + 5


def test_images_job_outputs_hashes_and_rejects(spark, photos, photos_run) -> None:  # type: ignore[no-untyped-def]
    root, _ = photos
    _, out = photos_run
    hashes = {_name(r.path): r for r in spark.read.parquet(str(out / "hashes")).collect()}
    circle = hashes["circle.png"]
    assert circle.phash == phash_hex(phash((root / "circle.png").read_bytes()))
    assert (circle.width, circle.height, circle.format) == (128, 128, "PNG")
    assert (hashes["scene0-half.png"].width, hashes["scene0-half.png"].height) == (160, 120)
    assert hashes["scene0-jpeg50.jpg"].format == "JPEG"
    reasons = {_name(r.path): r.reason for r in spark.read.parquet(str(out / "rejects")).collect()}
    assert set(reasons) == {"notes.txt", "truncated.png", "huge.png", "picture.svg", "big.bin"}
    assert "unknown or unsupported image format" in reasons["notes.txt"]
    assert "unknown or unsupported image format" in reasons["picture.svg"]
    assert "over the limit of 5000000" in reasons["huge.png"]
    assert reasons["big.bin"] == "file larger than 200000 bytes"
    assert reasons["truncated.png"]  # Go's PNG reader and ours: unexpected EOF / truncated
    report = json.loads((out / "report.json").read_text())
    assert report["counts"]["rejected"] == 5
    assert sum(report["input"]["rejects_by_reason"].values()) == 5
    assert report["pipeline"]["id"] == "phash/1" == circle.pipeline
    assert (out / "_MANIFEST.json").exists()
    pairs = spark.read.parquet(str(out / "pairs"))
    assert pairs.count() > 0 and pairs.agg({"distance": "max"}).first()[0] <= 10


def _figures(page: str) -> list[dict[str, str]]:
    """The thumbnails' figures of report.html: path, role, distance, img src (or none)."""
    found = []
    pattern = r'<figure class="thumb ([a-z]+)"([^>]*)>(.*?)</figure>'
    for role, attrs, body in re.findall(pattern, page, re.S):
        fields = dict(re.findall(r'([a-z-]+)="([^"]*)"', attrs))
        src = re.search(r'<img class="thumb" src="([^"]*)"', body)
        meta = re.search(r'<span class="meta">([^<]*)</span>', body)
        found.append(
            {
                "role": role,
                "path": html.unescape(fields["data-path"]),
                "distance": fields.get("data-distance", ""),
                "src": src.group(1) if src else "",
                "meta": html.unescape(meta.group(1)) if meta else "",
            }
        )
    return found


def test_neardup_report_leaves_an_image_runs_page_alone(photos_run, capsys) -> None:  # type: ignore[no-untyped-def]
    """The image page is the job's own (thumbnails of its samples): ``neardup report``
    refuses to replace it with a text page, and leaves it as it was."""
    from neardup_udfs.cli import main as cli_main

    _, out = photos_run
    before = (out / "report.html").read_bytes()
    assert cli_main(["report", str(out)]) == 2
    assert "images job" in capsys.readouterr().err
    assert (out / "report.html").read_bytes() == before


def test_images_report_html(spark, photos_run) -> None:  # type: ignore[no-untyped-def]
    """report.html: the counts of report.json, the distance histogram of the verified
    pairs, and each sampled cluster's images as inline thumbnails with their distances."""
    _, out = photos_run
    page = (out / "report.html").read_text()
    report = json.loads((out / "report.json").read_text())
    for key, value in report["counts"].items():
        if key != "hot_buckets":  # a section of its own
            assert f'id="count-{key.replace("_", "-")}" class="num" data-value="{value}"' in page
    assert report["scores"]["metric"] == "distance"
    assert report["scores"]["count"] == spark.read.parquet(str(out / "pairs")).count()
    assert 'id="plot-scores"' in page and 'id="plot-timings"' in page
    figures = _figures(page)
    clusters = {r.path: r for r in spark.read.parquet(str(out / "clusters")).collect()}
    # the 5 families (7 images each, within the 8 members shown) are every sampled cluster
    assert len(figures) == 5 * 7 and len({f["path"] for f in figures}) == 35
    for f in figures:
        row = clusters[f["path"]]
        assert f["src"].startswith(("data:image/jpeg;base64,", "data:image/png;base64,"))
        thumb = Image.open(io.BytesIO(base64.b64decode(f["src"].split(",", 1)[1])))
        assert max(thumb.size) <= 96
        if f["role"] == "representative":
            assert row.is_representative and f["meta"] == "representative (kept)"
        else:
            assert f["meta"] == f"Hamming distance {row.distance}" and f["distance"] == str(
                row.distance
            )
    assert page.count('<img class="thumb" src="data:image/') == len(figures)
    assert "http://" not in page and "https://" not in page and "<script" not in page
    sources = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert all(src.startswith(("data:image/", "#")) for src in sources)
    manifest = json.loads((out / "_MANIFEST.json").read_text())
    assert "page_errors" not in manifest


# --- formats beyond the reference's decoders ---------------------------------------------------


def _animation(first: Image.Image, fmt: str) -> bytes:
    """``first`` followed by two unrelated scenes (pHash 28-38 bits away from it)."""
    rest = [scene(40), scene(41)]
    if fmt == "GIF":
        first, rest = first.convert("P"), [r.convert("P") for r in rest]
    kw: dict[str, object] = {"quality": 80} if fmt == "WEBP" else {}
    return encode(first, fmt, save_all=True, append_images=rest, duration=100, loop=0, **kw)


WEB_FAMILIES = {  # file -> (format, animated, go_reference)
    "scene5": {
        "scene5.png": ("PNG", False, True),
        "scene5.jpg": ("JPEG", False, True),
        "scene5-lossless.webp": ("WEBP", False, False),
        "scene5-lossy.webp": ("WEBP", False, False),
        "scene5-crop.webp": ("WEBP", False, False),
        "scene5.bmp": ("BMP", False, False),
        "scene5.tiff": ("TIFF", False, False),
        "scene5-anim.webp": ("WEBP", True, False),
        "scene5-anim.gif": ("GIF", True, True),
    },
    "scene6": {
        "scene6.png": ("PNG", False, True),
        "scene6.webp": ("WEBP", False, False),
        "scene6.bmp": ("BMP", False, False),
    },
}
WEB_REJECTS = {  # file -> what its reason says
    "corrupt.webp": "corrupt or truncated WEBP data",
    "cut.webp": "truncated WEBP: the RIFF header declares",
    "huge.webp": "over the limit of 5000000",
    "vector.svg": "unknown or unsupported image format",
}


@pytest.fixture(scope="module")
def web_run(spark, tmp_path_factory):  # type: ignore[no-untyped-def]
    """The job over WebP, BMP, TIFF and animated copies of two scenes beside their PNG and
    JPEG, and four bad files: (summary, output dir)."""
    root = tmp_path_factory.mktemp("web")
    im5, im6 = scene(5), scene(6)
    w, h = im5.size
    dx, dy = round(w * 0.025), round(h * 0.025)
    lossy = encode(im5, "WEBP", quality=60)
    files = {
        "scene5.png": encode(im5),
        "scene5.jpg": encode(im5, "JPEG", quality=90),
        "scene5-lossless.webp": encode(im5, "WEBP", lossless=True),
        "scene5-lossy.webp": lossy,
        "scene5-crop.webp": encode(im5.crop((dx, dy, w - dx, h - dy)), "WEBP", quality=60),
        "scene5.bmp": encode(im5, "BMP"),
        "scene5.tiff": encode(im5, "TIFF", compression="tiff_lzw"),
        "scene5-anim.webp": _animation(im5, "WEBP"),
        "scene5-anim.gif": _animation(im5, "GIF"),
        "scene6.png": encode(im6),
        "scene6.webp": encode(im6, "WEBP", quality=75),
        "scene6.bmp": encode(im6, "BMP"),
        "corrupt.webp": lossy[:40] + bytes(b ^ 0x5A for b in lossy[40:]),
        "cut.webp": lossy[: len(lossy) // 2],
        "huge.webp": encode(Image.new("RGB", (3000, 2000), (9, 90, 200)), "WEBP", lossless=True),
        "vector.svg": b'<svg xmlns="http://www.w3.org/2000/svg"/>',
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    out = tmp_path_factory.mktemp("web-out") / "out"
    return _run(spark, root, out, max_bytes=400_000), out


def test_web_formats_cluster_with_png_and_jpeg(spark, web_run) -> None:  # type: ignore[no-untyped-def]
    s, out = web_run
    groups: dict[str, set[str]] = {}
    for r in spark.read.parquet(str(out / "clusters")).collect():
        groups.setdefault(r.cluster_id, set()).add(_name(r.path))
    assert sorted(sorted(g) for g in groups.values()) == sorted(
        sorted(f) for f in WEB_FAMILIES.values()
    )
    assert (s.input, s.rejected, s.kept, s.removed) == (16, 4, 2, 10)


def test_web_formats_hashes_record_format_and_go_reference(spark, web_run) -> None:  # type: ignore[no-untyped-def]
    _, out = web_run
    hashes = {_name(r.path): r for r in spark.read.parquet(str(out / "hashes")).collect()}
    want = {f: v for family in WEB_FAMILIES.values() for f, v in family.items()}
    assert {f: (r.format, r.animated, r.go_reference) for f, r in hashes.items()} == want
    assert {r.pipeline for r in hashes.values()} == {"phash/1"}
    assert all((r.width, r.height) == (320, 240) for f, r in hashes.items() if "crop" not in f)
    # distances to the PNG's hash, measured: 0 for every copy of the whole picture (lossy
    # WebP q60 and q75, the animations' first frames included), 4 for the 5 % crop
    for family in WEB_FAMILIES:
        png = phash_from_hex(hashes[f"{family}.png"].phash)
        for f in WEB_FAMILIES[family]:
            bound = 4 if "crop" in f else 0
            assert phash_distance(png, phash_from_hex(hashes[f].phash)) <= bound, f


def test_web_format_rejects_name_the_problem(spark, web_run) -> None:  # type: ignore[no-untyped-def]
    _, out = web_run
    reasons = {_name(r.path): r.reason for r in spark.read.parquet(str(out / "rejects")).collect()}
    assert set(reasons) == set(WEB_REJECTS)
    for name, problem in WEB_REJECTS.items():
        assert problem in reasons[name], (name, reasons[name])


def test_bounded_keys_by_default_and_the_guarantee_on_request(  # type: ignore[no-untyped-def]
    spark, photos, photos_run, tmp_path
) -> None:
    """k = 10: 20 tables of 12 sampled bits (report.json says so, with the model's recall);
    hamming_blocks = 11 gives ditto's guaranteed keys, which find every pair within k: here
    the same verified pairs as the sampled keys, from more candidates."""
    s, out = photos_run
    report = json.loads((out / "report.json").read_text())
    assert report["hamming"] == {
        "tables": 20,
        "key_bits": [12, 12],
        "scheme": "sampled bits",
        "guaranteed": False,
        "model_recall_at_k": 0.8899,
    }
    guaranteed = _run(spark, photos[0], tmp_path / "blocks", hamming_blocks=11)
    blocks = json.loads((tmp_path / "blocks" / "report.json").read_text())["hamming"]
    assert blocks["scheme"] == "ditto k+1 blocks" and blocks["guaranteed"] is True

    def pairs(where: Path) -> set[tuple[str, str, int]]:
        return {(r.a, r.b, r.distance) for r in spark.read.parquet(str(where / "pairs")).collect()}

    assert pairs(out) == pairs(tmp_path / "blocks") and pairs(out)
    assert s.candidates < guaranteed.candidates


def test_smaller_k_splits_the_crops_off(spark, photos, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root, families = photos
    s = _run(spark, root, tmp_path / "out", max_distance=0, representative="min_id")
    assert s.removed < 5 * 6  # exact-hash copies still cluster, edited ones no longer all do
    clusters = spark.read.parquet(str(tmp_path / "out" / "clusters")).collect()
    for r in clusters:
        assert r.distance == 0
        if r.is_representative:
            assert r.path == r.cluster_id
    reps = {r.cluster_id for r in clusters}
    assert all(
        min(p for p in (c.path for c in clusters if c.cluster_id == cid)) == cid for cid in reps
    )


def test_warc_image_records(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    crawl = Crawl()
    (tmp_path / "crawl").mkdir()
    w = CrawlWriter(tmp_path / "crawl" / "a.warc.gz", crawl)
    im = scene(0)
    w.response("orig", "http://x/a.png", encode(im), content_type="image/png")
    w.response("copy", "http://x/a.jpg", variants(im)["jpeg50"], content_type="image/jpeg")
    w.response("other", "http://x/b.png", encode(scene(11)), content_type="image/png")
    w.response("page", "http://x/", b"<p>a page</p>")
    w.close()
    # the same crawl file twice: every record id is read twice
    (tmp_path / "crawl" / "b.warc.gz").write_bytes((tmp_path / "crawl" / "a.warc.gz").read_bytes())
    s = _run(spark, tmp_path / "crawl", tmp_path / "out", input_format="warc")
    assert (s.input, s.rejected, s.kept, s.removed) == (8, 5, 2, 1)
    clusters = {
        r.path: r.cluster_id
        for r in spark.read.parquet(str(tmp_path / "out" / "clusters")).collect()
    }
    assert clusters[record_id("orig")] == clusters[record_id("copy")]
    assert clusters[record_id("other")] != clusters[record_id("orig")]
    hashes = {r.path: r.url for r in spark.read.parquet(str(tmp_path / "out" / "hashes")).collect()}
    assert hashes[record_id("copy")] == "http://x/a.jpg"
    reasons = sorted(
        r.reason for r in spark.read.parquet(str(tmp_path / "out" / "rejects")).collect()
    )
    assert reasons == ["content type text/html is not a document type"] + ["duplicate path"] * 4
    # report.html's thumbnails of a crawl: the records read again from their WARC file
    figures = _figures((tmp_path / "out" / "report.html").read_text())
    assert {f["path"] for f in figures} == {record_id("orig"), record_id("copy")}
    assert all(f["src"].startswith("data:image/jpeg;base64,") for f in figures)


def _accounted(spark, out: Path) -> tuple[dict[str, str], dict[str, str]]:  # type: ignore[no-untyped-def]
    """A run's ``clusters/`` (path -> cluster_id) and ``rejects/`` (path -> reason)."""
    clusters = {r.path: r.cluster_id for r in spark.read.parquet(str(out / "clusters")).collect()}
    rejects = {r.path: r.reason for r in spark.read.parquet(str(out / "rejects")).collect()}
    return clusters, rejects


def test_files_spark_skips_and_empty_files_are_named_rejects(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Spark's binaryFile never reads a hidden name and yields no row for a 0-byte file:
    each is a reject of its own, so every file is in clusters/ or rejects/, and counted."""
    src = tmp_path / "in"
    (src / "_drafts").mkdir(parents=True)
    im = scene(0)
    files = {
        "a.png": encode(im),
        "a.jpg": variants(im)["jpeg50"],
        "b.png": encode(scene(11)),
        "empty.png": b"",
        "_a.png": encode(im),
        ".b.png": encode(scene(11)),
        "_drafts/c.png": encode(scene(12)),
    }
    for name, data in files.items():
        (src / name).write_bytes(data)
    (src / "_SUCCESS").write_bytes(b"")  # Spark's own marker: not a user file
    out = tmp_path / "out"
    s = _run(spark, src, out)
    uri = {name: f"file:{src / name}" for name in files}
    clusters, rejects = _accounted(spark, out)
    assert rejects == {
        uri["empty.png"]: EMPTY_FILE,
        uri["_a.png"]: HIDDEN_REASON,
        uri[".b.png"]: HIDDEN_REASON,
        uri["_drafts/c.png"]: HIDDEN_REASON,
    }
    assert set(clusters) == {uri["a.png"], uri["a.jpg"], uri["b.png"]}
    assert clusters[uri["a.png"]] == clusters[uri["a.jpg"]] != clusters[uri["b.png"]]
    assert (s.input, s.hashed, s.rejected, s.kept, s.removed) == (7, 3, 4, 2, 1)
    report = json.loads((out / "report.json").read_text())
    assert report["counts"]["input"] == 7 and report["counts"]["rejected"] == 4
    assert report["input"]["rejects_by_reason"] == {HIDDEN_REASON: 3, EMPTY_FILE: 1}
    assert report["input"]["skipped_files"] == 3
    assert (out / "_MANIFEST.json").exists()


def test_a_hidden_warc_file_is_a_named_reject(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A WARC file under a hidden name is one reject (its records are never read); so is a
    crawl of such files only, not an empty input."""
    crawl, src = Crawl(), tmp_path / "crawl"
    src.mkdir()
    for name, seed in (("a.warc.gz", 0), ("_b.warc.gz", 11)):
        w = CrawlWriter(src / name, crawl)
        w.response(name, f"http://x/{seed}.png", encode(scene(seed)), content_type="image/png")
        w.close()
    s = _run(spark, src, tmp_path / "out", input_format="warc")
    clusters, rejects = _accounted(spark, tmp_path / "out")
    assert rejects == {f"file:{src / '_b.warc.gz'}": HIDDEN_REASON}
    assert set(clusters) == {record_id("a.warc.gz")}
    assert (s.input, s.hashed, s.rejected) == (2, 1, 1)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["input"]["skipped_files"] == 1
    (src / "a.warc.gz").unlink()
    s = _run(spark, src, tmp_path / "only-hidden", input_format="warc")
    assert (s.input, s.hashed, s.rejected) == (1, 0, 1)
    assert _accounted(spark, tmp_path / "only-hidden") == ({}, rejects)


def test_bad_settings_and_missing_input(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="config key 'max_distance'"):
        load_images_config(input="a", output="b", max_distance=64)
    with pytest.raises(ConfigError, match="input_format"):
        load_images_config(input="a", output="b", input_format="jsonl")
    with pytest.raises(ConfigError, match="outputs"):
        load_images_config(input="a", output="b", outputs=("docs",))
    with pytest.raises(InputError, match="does not exist"):
        _run(spark, tmp_path / "nowhere", tmp_path / "out")


def test_cli_exit_status(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert images_job.main(["--input", "x", "--output", str(tmp_path), "--max-distance", "99"]) == 2


def test_dedup_images_of_a_frame_gives_the_jobs_rows(spark, photos, photos_run) -> None:  # type: ignore[no-untyped-def]
    """``neardup_udfs.dedup_images`` on the same images as a DataFrame: the job's clusters,
    pairs and hashes, the same rows rejected, and the caller's own rows kept."""
    summary, out = photos_run
    df = (
        spark.read.format("binaryFile")
        .option("recursiveFileLookup", "true")
        .load(str(photos[0]))
        .select(F.col("path").alias("uri"), F.col("content").alias("bytes"), "length")
    )
    with neardup_udfs.dedup_images(df, "uri", "bytes", pairs=True, max_pixels=5_000_000,
                                   max_bytes=200_000) as r:  # fmt: skip
        assert r.pairs is not None
        for name, frame in (("clusters", r.clusters), ("pairs", r.pairs), ("hashes", r.hashes)):
            written = spark.read.parquet(str(out / name))
            assert sorted(frame.collect()) == sorted(written.collect()), name
        job_rejects = spark.read.parquet(str(out / "rejects")).select("path").collect()
        assert sorted(r.rejects.select("path").collect()) == sorted(job_rejects)
        assert r.counts["kept"] == summary.kept and r.counts["removed"] == summary.removed
        assert r.kept.columns == ["uri", "bytes", "length"]
        assert r.kept.count() == summary.kept
        assert r.removed.count() == summary.removed


def test_dedup_images_names_bad_arguments(spark) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame([], "path string, content string")
    with pytest.raises(InputError, match="content_col 'content' is string, not binary"):
        neardup_udfs.dedup_images(df)
    with pytest.raises(InputError, match="path_col 'file' is not a column"):
        neardup_udfs.dedup_images(df, path_col="file")
    with pytest.raises(ConfigError, match="input: not a setting of dedup_images"):
        neardup_udfs.dedup_images(df, input="x")
