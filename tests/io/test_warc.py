"""The WARC/WET reader (neardup_udfs.io.warc), without Spark: every record becomes a row with
its text or a reason, and a damaged file loses only what cannot be read."""

from __future__ import annotations

import gzip
import io
import os
import tracemalloc
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import brotli
import pandas as pd
import pytest
from warc_corpus import (
    BROTLI_PAGE,
    JAPANESE_PAGE,
    SHIFT_JIS_PAGE,
    Crawl,
    CrawlWriter,
    add_charset_twins,
    add_odd_records,
    corrupt,
    html_page,
    record_id,
    write_documents,
    write_wet,
)
from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import BufferedReader

from neardup_udfs.io.warc import COLUMNS, EXTRACTORS, WarcOptions, read_file, record_batches

SHARED_CRAWL = Path(__file__).resolve().parents[3] / "shared" / "data" / "crawl"
DOCS = [(f"page{i}", f"Story number {i}.\n\nIt has two paragraphs, this is {i}.") for i in range(6)]


def _rows(path: Path, options: WarcOptions | None = None) -> list[dict]:
    with open(path, "rb") as fh:
        return list(read_file(fh, str(path), os.path.getsize(path), options or WarcOptions()))


def _crawl(tmp_path: Path) -> tuple[Crawl, CrawlWriter]:
    crawl = Crawl()
    w = write_documents(tmp_path / "a.warc.gz", DOCS, crawl)
    add_odd_records(w)
    w.close()
    return crawl, w


def test_every_record_is_a_row_with_its_text_or_its_reason(tmp_path: Path) -> None:
    crawl, _ = _crawl(tmp_path)
    rows = _rows(crawl.files[0])
    by_id = {r["doc_id"]: r for r in rows}
    assert set(by_id) == set(crawl.documents) | set(crawl.rejected)
    assert len(rows) == len(by_id)
    for rid, text in crawl.documents.items():
        assert by_id[rid]["read_error"] is None, rid
        assert by_id[rid]["text"] == text
    for rid, reason in crawl.rejected.items():
        assert by_id[rid]["read_error"] == reason, rid
        assert by_id[rid]["text"] is None
    assert sum(r["lost_bytes"] for r in rows) == 0
    assert [r["offset"] for r in rows] == sorted(r["offset"] for r in rows)


def test_metadata_columns(tmp_path: Path) -> None:
    crawl, w = _crawl(tmp_path)
    row = {r["doc_id"]: r for r in _rows(crawl.files[0])}[record_id("page3")]
    assert row["url"] == "http://news.example/page3"
    assert row["warc_date"] == "2026-11-30T12:00:00Z"
    assert row["warc_type"] == "response"
    assert row["content_type"] == "text/html"
    assert row["http_status"] == 200
    assert row["path"] == str(crawl.files[0])
    assert row["offset"] == w.offsets["page3"]
    plain = {r["doc_id"]: r for r in _rows(crawl.files[0])}[record_id("plain")]
    assert plain["content_type"] == "text/plain"
    missing = {r["doc_id"]: r for r in _rows(crawl.files[0])}[record_id("404")]
    assert missing["http_status"] == 404


def test_payloads_are_decoded_by_charset_content_and_transfer_encoding(tmp_path: Path) -> None:
    crawl, _ = _crawl(tmp_path)
    by_id = {r["doc_id"]: r for r in _rows(crawl.files[0])}
    assert "Caf\u00e9 cr\u00e8me" in by_id[record_id("latin1")]["text"]
    assert by_id[record_id("gzip")]["text"].startswith("<html><body><p>compressed")
    assert by_id[record_id("chunked")]["text"] == (
        "<html><body><p>sent in two chunks</p></body></html>"
    )


def _chunked(body: bytes, n: int) -> bytes:
    """``body`` as HTTP chunked transfer coding, in ``n`` chunks."""
    size = -(-len(body) // n)
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in parts) + b"0\r\n\r\n"


@pytest.mark.parametrize("warcio_hook", ["installed", "absent"])
def test_brotli_payloads_are_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warcio_hook: str
) -> None:
    """A real page compressed with brotli (``Content-Encoding: br``) reads as the page's text:
    sent whole, chunked, with the encoding named in capitals, and empty. The reader decodes
    brotli itself: warcio's hook (installed, it raises AttributeError with Google's brotli)
    is never called, so the result is the same without it."""
    if warcio_hook == "absent":  # warcio would then pass the brotli bytes through undecoded
        monkeypatch.delitem(BufferedReader.DECOMPRESSORS, "br", raising=False)
    body = BROTLI_PAGE.encode()
    packed = brotli.compress(body)
    assert packed != body and brotli.decompress(packed) == body
    crawl = Crawl()
    w = CrawlWriter(tmp_path / "br.warc.gz", crawl)
    br = [("Content-Encoding", "br")]
    w.response("whole", "http://x/whole", packed, extra=br)
    chunked = [*br, ("Transfer-Encoding", "chunked")]
    w.response("chunked", "http://x/chunked", _chunked(packed, 3), extra=chunked)
    w.response("capitals", "http://x/capitals", packed, extra=[("Content-Encoding", "BR")])
    w.response("empty", "http://x/empty", b"", extra=br)
    w.response("after", "http://x/after", b"<p>plain</p>")
    w.close()
    by_id = {r["doc_id"]: r for r in _rows(crawl.files[0])}
    for name in ("whole", "chunked", "capitals"):
        row = by_id[record_id(name)]
        assert (row["read_error"], row["text"]) == (None, BROTLI_PAGE), name
        assert "\u20ac 3,50" in row["text"]
    empty = by_id[record_id("empty")]
    assert (empty["read_error"], empty["text"]) == (None, "")
    assert by_id[record_id("after")]["text"] == "<p>plain</p>"


def test_a_broken_brotli_payload_is_a_named_reject(tmp_path: Path) -> None:
    """Bytes that are not brotli, a stream with bytes after its end, and a stream cut short
    are rejects naming why; the records after them are read."""
    packed = brotli.compress(BROTLI_PAGE.encode())
    crawl = Crawl()
    w = CrawlWriter(tmp_path / "bad.warc.gz", crawl)
    br = [("Content-Encoding", "br")]
    w.response("not-brotli", "http://x/1", BROTLI_PAGE.encode(), extra=br)
    w.response("junk-after", "http://x/2", packed + b"<p>trailing</p>", extra=br)
    w.response("cut", "http://x/3", packed[: len(packed) // 2], extra=br)
    chunked = [*br, ("Transfer-Encoding", "chunked")]
    w.response("cut-chunked", "http://x/4", _chunked(packed[:-5], 2), extra=chunked)
    w.response("after", "http://x/5", b"<p>plain</p>")
    w.close()
    rows = _rows(crawl.files[0])
    reasons = {r["doc_id"]: r["read_error"] for r in rows}
    corrupt = "undecodable payload (corrupt brotli data)"
    short = "undecodable payload (brotli data cut short)"
    assert reasons == {
        record_id("not-brotli"): corrupt,
        record_id("junk-after"): corrupt,
        record_id("cut"): short,
        record_id("cut-chunked"): short,
        record_id("after"): None,
    }
    assert all(r["text"] is None and r["lost_bytes"] == 0 for r in rows if r["read_error"])


def _second_record_cut(
    tmp_path: Path, first: bytes, second: bytes, cut: int, **headers: Any
) -> dict[str, Any]:
    """The row of the second of two responses (``headers`` its own) in a plain WARC whose
    last ``cut`` bytes are cut off; checks that the first is read whole."""
    w = CrawlWriter(tmp_path / "plain.warc", Crawl(), gzip_members=False)
    w.response("first", "http://x/1", first)
    w.response("second", "http://x/2", second, **headers)
    path = w.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - cut])
    by_id = {r["doc_id"]: r for r in _rows(path)}
    assert by_id[record_id("first")]["read_error"] is None
    return by_id[record_id("second")]


def test_a_brotli_record_cut_by_the_end_of_the_file_is_a_truncated_record(
    tmp_path: Path,
) -> None:
    packed = brotli.compress(BROTLI_PAGE.encode())
    br = [("Content-Encoding", "br")]
    second = _second_record_cut(tmp_path, b"<p>one</p>", packed, 50, extra=br)
    assert (second["read_error"], second["lost_bytes"]) == ("truncated record", 50 - 4)


def test_a_brotli_bomb_is_rejected_in_bounded_memory(tmp_path: Path) -> None:
    """About 530 bytes on disk, 72 MiB decoded: rejected as too large after decoding about
    max_bytes, never the whole payload (the memory traced stays far below it)."""
    bomb = brotli.compress(b"<p>bomb</p> " * (6 << 20), quality=5)
    assert len(bomb) < 4096
    crawl = Crawl()
    w = CrawlWriter(tmp_path / "bomb.warc.gz", crawl)
    br = [("Content-Encoding", "br")]
    w.response("bomb", "http://x/bomb", bomb, extra=br)
    w.response("small", "http://x/small", brotli.compress(b"<p>fine</p>"), extra=br)
    w.close()
    tracemalloc.start()
    try:
        rows = _rows(crawl.files[0], WarcOptions(max_bytes=100_000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    by_id = {r["doc_id"]: r for r in rows}
    assert by_id[record_id("bomb")]["read_error"] == "text larger than 100000 bytes"
    assert by_id[record_id("small")]["text"] == "<p>fine</p>"
    assert peak < 4 << 20, peak


GZIP_PAGE = html_page(
    "The harbour wall was repaired after the storm.\n\nBoats may moor again from Friday.",
    title="Harbour",
)


def test_gzip_and_deflate_payloads_are_decoded(tmp_path: Path) -> None:
    """gzip (also named ``x-gzip``, in capitals, chunked), deflate as zlib data and as raw
    deflate (servers send both), an empty body, and bytes after the end of the stream
    (ignored, as browsers do) read as the page's text; so does a page stored decoded under
    the Content-Encoding it was served with (some crawlers write it so: its bytes are text,
    not gzip, and are kept as they are)."""
    body = GZIP_PAGE.encode()
    packed = gzip.compress(body, mtime=0)
    deflated = zlib.compress(body)
    crawl = Crawl()
    w = CrawlWriter(tmp_path / "gz.warc.gz", crawl)
    gz = [("Content-Encoding", "gzip")]
    deflate = [("Content-Encoding", "deflate")]
    w.response("gzip", "http://x/gzip", packed, extra=gz)
    w.response("x-gzip", "http://x/x-gzip", packed, extra=[("Content-Encoding", "x-gzip")])
    w.response("capitals", "http://x/capitals", packed, extra=[("Content-Encoding", "GZIP")])
    chunked = [*gz, ("Transfer-Encoding", "chunked")]
    w.response("chunked", "http://x/chunked", _chunked(packed, 3), extra=chunked)
    w.response("zlib", "http://x/zlib", deflated, extra=deflate)
    w.response("raw-deflate", "http://x/raw-deflate", deflated[2:-4], extra=deflate)
    w.response("bytes-after", "http://x/bytes-after", packed + b"\r\n", extra=gz)
    w.response("stored-decoded", "http://x/stored", body, extra=gz)
    w.response("stored-decoded-deflate", "http://x/stored-deflate", body, extra=deflate)
    w.response("identity", "http://x/identity", body, extra=[("Content-Encoding", "identity")])
    w.response("empty", "http://x/empty", b"", extra=gz)
    w.close()
    by_id = {r["doc_id"]: r for r in _rows(crawl.files[0])}
    names = ("gzip", "x-gzip", "capitals", "chunked", "zlib", "raw-deflate", "bytes-after")
    for name in (*names, "stored-decoded", "stored-decoded-deflate", "identity"):
        row = by_id[record_id(name)]
        assert (row["read_error"], row["text"]) == (None, GZIP_PAGE), name
    empty = by_id[record_id("empty")]
    assert (empty["read_error"], empty["text"]) == (None, "")


def test_a_broken_gzip_or_deflate_payload_is_a_named_reject(tmp_path: Path) -> None:
    """Issue 50: a body declared gzip or deflate that does not decode was a document of its
    raw bytes (``\\x1f\\x8b\\x08garbage`` read as ``'\\x1f\\ufffd\\x08garbage'``). Bytes that are
    not the declared encoding (and are not text stored decoded: they hold bytes text never
    does), a stream broken inside, and a stream cut short are rejects naming why; so are gzip
    bytes served without a Content-Encoding (warcio does not inflate them either: the text
    was the gzip bytes), and binary bytes under an encoding the reader does not know. The
    records after them are read."""
    body = GZIP_PAGE.encode()
    packed = gzip.compress(body, mtime=0)
    deflated = zlib.compress(body)
    crawl = Crawl()
    w = CrawlWriter(tmp_path / "bad.warc.gz", crawl)
    gz = [("Content-Encoding", "gzip")]
    deflate = [("Content-Encoding", "deflate")]
    w.response("gzip-garbage", "http://x/1", b"\x1f\x8b\x08garbage", extra=gz)
    w.response("not-gzip", "http://x/2", b"\x1f\xff\x08garbage", extra=gz)
    w.response("gzip-header-only", "http://x/3", b"\x1f\x8b\x08\x00", extra=gz)
    w.response("gzip-cut", "http://x/4", packed[: len(packed) // 2], extra=gz)
    chunked = [*gz, ("Transfer-Encoding", "chunked")]
    w.response("gzip-cut-chunked", "http://x/5", _chunked(packed[:-5], 2), extra=chunked)
    broken = packed[:12] + bytes(16) + packed[28:]
    w.response("gzip-broken", "http://x/6", broken, extra=gz)
    w.response("deflate-garbage", "http://x/7", b"\x78\x9c\xffgarbage\x00", extra=deflate)
    w.response("raw-deflate-garbage", "http://x/8", b"\x00\xff\x08garbage", extra=deflate)
    w.response("deflate-cut", "http://x/9", deflated[: len(deflated) // 2], extra=deflate)
    w.response("undeclared-gzip", "http://x/10", packed)
    zstd = [("Content-Encoding", "zstd")]
    w.response("zstd", "http://x/11", b"\x28\xb5\x2f\xfd\x00\x58\x01\x00garbage", extra=zstd)
    w.response("after", "http://x/12", b"<p>plain</p>")
    w.close()
    rows = _rows(crawl.files[0])
    reasons = {r["doc_id"]: r["read_error"] for r in rows}
    corrupt_gzip = "undecodable payload (corrupt gzip data)"
    short_gzip = "undecodable payload (gzip data cut short)"
    corrupt_deflate = "undecodable payload (corrupt deflate data)"
    assert reasons == {
        record_id("gzip-garbage"): corrupt_gzip,
        record_id("not-gzip"): corrupt_gzip,
        record_id("gzip-header-only"): short_gzip,
        record_id("gzip-cut"): short_gzip,
        record_id("gzip-cut-chunked"): short_gzip,
        record_id("gzip-broken"): corrupt_gzip,
        record_id("deflate-garbage"): corrupt_deflate,
        record_id("raw-deflate-garbage"): corrupt_deflate,
        record_id("deflate-cut"): "undecodable payload (deflate data cut short)",
        record_id("undeclared-gzip"): "undecodable payload (gzip data not declared)",
        record_id("zstd"): "undecodable payload (unsupported content encoding zstd)",
        record_id("after"): None,
    }
    assert all(r["text"] is None and r["lost_bytes"] == 0 for r in rows if r["read_error"])


def test_a_gzip_record_cut_by_the_end_of_the_file_is_a_truncated_record(
    tmp_path: Path,
) -> None:
    packed = gzip.compress(GZIP_PAGE.encode(), mtime=0)
    gz = [("Content-Encoding", "gzip")]
    second = _second_record_cut(tmp_path, b"<p>one</p>", packed, 50, extra=gz)
    assert (second["read_error"], second["lost_bytes"]) == ("truncated record", 50 - 4)


def test_undeclared_charset_is_utf8_else_windows_1252(tmp_path: Path) -> None:
    crawl = Crawl()
    w = CrawlWriter(tmp_path / "c.warc.gz", crawl)
    w.response("u", "http://x/u", "na\u00efve \u2014 ok".encode(), content_type="text/html")
    w.response("w", "http://x/w", "na\u00efve \u2014 ok".encode("cp1252"), content_type="text/html")
    w.close()
    by_id = {r["doc_id"]: r["text"] for r in _rows(crawl.files[0])}
    assert by_id[record_id("u")] == "na\u00efve \u2014 ok"
    assert by_id[record_id("w")] == "na\u00efve \u2014 ok"


def _declared(
    tmp_path: Path, bodies: dict[str, tuple[bytes, str]], extractor: str = "raw"
) -> dict[str, dict]:
    """One text/html response per name (body, charset; "" = none declared): name -> row."""
    crawl = Crawl()
    w = CrawlWriter(tmp_path / "charsets.warc.gz", crawl)
    for name, (body, charset) in bodies.items():
        declared = f"; charset={charset}" if charset else ""
        w.response(name, f"http://x/{name}", body, content_type=f"text/html{declared}")
    w.close()
    by_id = {r["doc_id"]: r for r in _rows(crawl.files[0], WarcOptions(extractor=extractor))}
    return {name: by_id[record_id(name)] for name in bodies}


@pytest.mark.parametrize("extractor", EXTRACTORS)
def test_byte_identical_utf8_payloads_decode_alike_whatever_they_declare(
    tmp_path: Path, extractor: str
) -> None:
    """A valid multi-byte UTF-8 body is UTF-8, whatever its header says (Shift_JIS gives
    mojibake with replacement characters, ISO-8859-1 clean-looking mojibake, an unknown
    name used to fail the resiliparse path); set aside = a known charset said otherwise."""
    body = JAPANESE_PAGE.encode("utf-8")
    rows = _declared(
        tmp_path,
        {
            "sjis": (body, "Shift_JIS"),
            "utf8": (body, "UTF-8"),
            "latin1": (body, "ISO-8859-1"),
            "euc": (body, "EUC-JP"),
            "none": (body, ""),
            "bogus": (body, "x-no-such-charset"),
        },
        extractor,
    )
    assert {n: r["read_error"] for n, r in rows.items()} == dict.fromkeys(rows)
    texts = {r["text"] for r in rows.values()}
    assert len(texts) == 1
    (text,) = texts
    if extractor == "raw":
        assert text == JAPANESE_PAGE
    else:
        assert "\u6e2f\u306e\u65b0\u3057\u3044\u6a4b" in text and "<p>" not in text
    overridden = {n for n, r in rows.items() if r["charset_overridden"]}
    assert overridden == {"sjis", "latin1", "euc"}


@pytest.mark.parametrize("extractor", EXTRACTORS)
def test_a_genuine_shift_jis_page_still_decodes_as_shift_jis(
    tmp_path: Path, extractor: str
) -> None:
    sjis = SHIFT_JIS_PAGE.encode("shift_jis")
    cyrillic = html_page("\u041d\u043e\u0432\u043e\u0441\u0442\u0438 \u0434\u043d\u044f.")
    with pytest.raises(UnicodeDecodeError):
        sjis.decode("utf-8")  # what lets the declaration decide
    rows = _declared(
        tmp_path,
        {
            "sjis": (sjis, "Shift_JIS"),
            "cp932": (sjis, "cp932"),
            "cp1251": (cyrillic.encode("cp1251"), "windows-1251"),
        },
        extractor,
    )
    for name, r in rows.items():
        assert r["read_error"] is None and not r["charset_overridden"], name
    if extractor == "raw":
        assert rows["sjis"]["text"] == rows["cp932"]["text"] == SHIFT_JIS_PAGE
        assert rows["cp1251"]["text"] == cyrillic
    else:
        assert "\u56f3\u66f8\u9928" in rows["sjis"]["text"]
        assert "\u041d\u043e\u0432\u043e\u0441\u0442\u0438" in rows["cp1251"]["text"]


def test_ascii_payloads_decode_alike_under_any_declaration(tmp_path: Path) -> None:
    """ASCII bytes are ASCII, also under the charsets that would read them otherwise
    (Shift_JISX0213: 0x5C is a yen sign, 0x7E an overline; UTF-16 with no NUL byte: CJK;
    EBCDIC); counted as set aside only there, where the text differs."""
    body = b"<html><body><p>C:\\temp ~user {a|b} [c]</p></body></html>"
    charsets = ["UTF-8", "Shift_JIS", "ISO-8859-1", "shift_jisx0213", "UTF-16", "cp500", ""]
    rows = _declared(tmp_path, {f"c{i}": (body, cs) for i, cs in enumerate(charsets)})
    assert {r["text"] for r in rows.values()} == {body.decode("ascii")}
    overridden = {charsets[int(n[1:])] for n, r in rows.items() if r["charset_overridden"]}
    assert overridden == {"shift_jisx0213", "UTF-16", "cp500"}


def test_a_bom_wins_and_the_bytes_can_bear_out_a_wide_or_iso2022_declaration(
    tmp_path: Path,
) -> None:
    """Byte order marks decide (stripped); a UTF-16 page without one, or an ISO-2022-JP
    page (7-bit, so valid UTF-8 too), keeps its declaration when the bytes bear it out."""
    page = JAPANESE_PAGE
    rows = _declared(
        tmp_path,
        {
            "utf16-bom-latin1": (page.encode("utf-16"), "ISO-8859-1"),
            "utf16-bom-none": (page.encode("utf-16"), ""),
            "utf8-bom-utf8": (b"\xef\xbb\xbf" + page.encode(), "utf-8"),
            "utf8-bom-sjis": (b"\xef\xbb\xbf" + page.encode(), "Shift_JIS"),
            "utf16le-declared": (page.encode("utf-16-le"), "UTF-16LE"),
            "utf16-declared": (page.encode("utf-16-le"), "UTF-16"),
            "iso2022": (page.encode("iso2022_jp"), "ISO-2022-JP"),
        },
    )
    assert {n: r["text"] for n, r in rows.items()} == dict.fromkeys(rows, page)
    overridden = {n for n, r in rows.items() if r["charset_overridden"]}
    assert overridden == {"utf16-bom-latin1", "utf8-bom-sjis"}


def test_charset_overridden_is_set_only_on_documents_decoded_against_their_charset(
    tmp_path: Path,
) -> None:
    crawl = Crawl()
    w = write_documents(tmp_path / "a.warc.gz", DOCS[:2], crawl)
    odd = add_odd_records(w)  # latin1: a genuine ISO-8859-1 page, declared so
    twins = add_charset_twins(w)
    mislabelled = JAPANESE_PAGE.encode()
    gone = w.response(
        "gone",
        "http://x/gone",
        mislabelled,
        content_type="text/html; charset=Shift_JIS",
        status="404 Not Found",
        reason="HTTP status 404 (not 2xx)",
    )
    path = w.close()
    corrupt(path, w.offsets["page1"])
    rows = _rows(path)
    flagged = {r["doc_id"] for r in rows if r["charset_overridden"]}
    assert flagged == {twins["twin-sjis"]}
    by_id = {r["doc_id"]: r for r in rows}
    assert by_id[odd["latin1"]]["text"] == crawl.documents[odd["latin1"]]
    assert by_id[gone]["charset_overridden"] is False  # never decoded: not a document
    assert [r["charset_overridden"] for r in rows if r["read_error"] == "corrupt data"] == [False]
    # every row has the column, a boolean, in the frames Spark reads
    opener = lambda p: (open(p, "rb"), os.path.getsize(p))  # noqa: E731
    (frame,) = record_batches([(str(path), os.path.getsize(path))], opener, WarcOptions())
    assert str(frame["charset_overridden"].dtype) == "bool"
    assert int(frame["charset_overridden"].sum()) == 1


def test_content_types_option_decides_what_is_a_document(tmp_path: Path) -> None:
    crawl, _ = _crawl(tmp_path)
    rows = _rows(crawl.files[0], WarcOptions(content_types=("text/html",)))
    plain = {r["doc_id"]: r for r in rows}[record_id("plain")]
    assert plain["read_error"] == "content type text/plain is not a document type"


def test_a_payload_over_max_bytes_is_rejected(tmp_path: Path) -> None:
    crawl = Crawl()
    w = CrawlWriter(tmp_path / "big.warc.gz", crawl)
    w.response("small", "http://x/s", b"<p>short</p>")
    w.response("big", "http://x/b", b"<p>" + b"long " * 400 + b"</p>")
    zipped = gzip.compress(b"<p>" + b"bomb " * 10_000 + b"</p>")
    w.response("bomb", "http://x/z", zipped, extra=[("Content-Encoding", "gzip")])
    w.close()
    by_id = {r["doc_id"]: r for r in _rows(crawl.files[0], WarcOptions(max_bytes=1000))}
    assert by_id[record_id("small")]["text"] == "<p>short</p>"
    assert by_id[record_id("big")]["read_error"] == "text larger than 1000 bytes"
    # small on disk, large once decoded: rejected after reading max_bytes + 1, not all of it
    assert len(zipped) < 1000
    assert by_id[record_id("bomb")]["read_error"] == "text larger than 1000 bytes"


def test_a_corrupt_gzip_member_loses_only_its_record(tmp_path: Path) -> None:
    crawl, w = _crawl(tmp_path)
    path = crawl.files[0]
    names = list(w.offsets)
    victim = names.index("page2")
    start, end = w.offsets["page2"], w.offsets[names[victim + 1]]
    corrupt(path, start)
    rows = _rows(path)
    by_id = {r["doc_id"]: r for r in rows}
    assert record_id("page2") not in by_id
    lost = by_id[f"{path}@{start}"]
    assert lost["read_error"] == "corrupt data"
    assert lost["lost_bytes"] == end - start
    assert lost["offset"] == start
    # everything else is read, before and after the damage
    expected = (set(crawl.documents) | set(crawl.rejected)) - {record_id("page2")}
    assert expected <= set(by_id)
    assert by_id[record_id("page5")]["text"] == crawl.documents[record_id("page5")]


def test_two_corrupt_members_in_a_row_are_one_range(tmp_path: Path) -> None:
    crawl, w = _crawl(tmp_path)
    path = crawl.files[0]
    names = list(w.offsets)
    i = names.index("page1")
    corrupt(path, w.offsets[names[i]])
    corrupt(path, w.offsets[names[i + 1]])
    rows = _rows(path)
    lost = [r for r in rows if r["read_error"] == "corrupt data"]
    assert len(lost) == 1
    assert lost[0]["lost_bytes"] == w.offsets[names[i + 2]] - w.offsets[names[i]]


def test_a_file_cut_short_reports_the_missing_tail(tmp_path: Path) -> None:
    crawl, w = _crawl(tmp_path)
    path = crawl.files[0]
    data = path.read_bytes()
    cut = w.offsets["page4"] + 30
    path.write_bytes(data[:cut])
    rows = _rows(path)
    by_id = {r["doc_id"]: r for r in rows}
    assert by_id[record_id("page3")]["text"] == crawl.documents[record_id("page3")]
    tail = rows[-1]
    assert tail["read_error"] in ("truncated file", "truncated record")
    assert tail["offset"] == w.offsets["page4"]
    assert tail["lost_bytes"] == cut - w.offsets["page4"]


def test_a_record_cut_inside_its_payload_is_a_truncated_record(tmp_path: Path) -> None:
    one, two = b"<p>" + b"one " * 50 + b"</p>", b"<p>" + b"two " * 50 + b"</p>"
    second = _second_record_cut(tmp_path, one, two, 100)
    assert second["read_error"] == "truncated record"
    assert second["lost_bytes"] == 100 - 4  # the record's 4 closing CRLF bytes are not counted


def test_uncompressed_warc(tmp_path: Path) -> None:
    crawl = Crawl()
    w = CrawlWriter(tmp_path / "u.warc", crawl, gzip_members=False)
    for name, text in DOCS:
        w.response(name, f"http://x/{name}", html_page(text).encode())
    path = w.close()
    rows = _rows(path)
    assert [r["doc_id"] for r in rows] == [record_id(n) for n, _ in DOCS]
    assert all(r["read_error"] is None for r in rows)


def test_garbage_is_one_unreadable_range(tmp_path: Path) -> None:
    path = tmp_path / "junk.warc.gz"
    path.write_bytes(b"this is not a WARC file at all" * 10)
    rows = _rows(path)
    assert len(rows) == 1
    assert rows[0]["read_error"] == "corrupt data"
    assert rows[0]["lost_bytes"] == 300


def test_a_record_without_an_id_is_rejected_under_its_location(tmp_path: Path) -> None:
    body = b"<p>anonymous</p>"
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
    record = (
        b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://x/anon\r\n"
        b"Content-Type: application/http; msgtype=response\r\n"
        b"Content-Length: %d\r\n\r\n%s\r\n\r\n" % (len(block), block)
    )
    path = tmp_path / "anon.warc.gz"
    path.write_bytes(gzip.compress(record))
    (row,) = _rows(path)
    assert row["doc_id"] == f"{path}@0"
    assert row["read_error"] == "record has no WARC-Record-ID"
    assert row["text"] is None


def test_wet_conversion_records_are_documents(tmp_path: Path) -> None:
    crawl = Crawl()
    path = write_wet(tmp_path / "a.warc.wet.gz", DOCS, crawl)
    rows = _rows(path)
    docs = {r["doc_id"]: r["text"] for r in rows if r["read_error"] is None}
    assert docs == crawl.documents
    assert {r["warc_type"] for r in rows} == {"warcinfo", "conversion"}


def test_resiliparse_extracts_the_text_of_html(tmp_path: Path) -> None:
    crawl, _ = _crawl(tmp_path)
    rows = _rows(crawl.files[0], WarcOptions(extractor="resiliparse"))
    text = {r["doc_id"]: r["text"] for r in rows}[record_id("page1")]
    assert "<p>" not in text and "<html>" not in text
    assert "Story number 1." in text and "this is 1." in text
    # not HTML: passed through as decoded
    plain = {r["doc_id"]: r["text"] for r in rows}[record_id("plain")]
    assert plain == "A plain text file served as text/plain."


def test_record_batches_are_bounded_and_keep_every_row(tmp_path: Path) -> None:
    crawl, _ = _crawl(tmp_path)
    crawl2 = Crawl()
    write_documents(tmp_path / "b.warc.gz", DOCS, crawl2).close()
    files = [(str(p), os.path.getsize(p)) for p in crawl.files + crawl2.files]

    def opener(path: str) -> tuple[io.BufferedReader, int]:
        return open(path, "rb"), os.path.getsize(path)

    batches = list(record_batches(files, opener, WarcOptions(), rows=5))
    assert all(len(b) <= 5 for b in batches)
    assert all(list(b.columns) == list(COLUMNS) for b in batches)
    both = pd.concat(batches)
    assert len(both) == len(crawl.documents) + len(crawl.rejected) + len(crawl2.documents) + len(
        crawl2.rejected
    )
    assert str(both["http_status"].dtype) == "Int32"


def _warcio_counts(path: Path) -> Counter:
    with open(path, "rb") as fh:
        return Counter(r.rec_type for r in ArchiveIterator(fh))


@pytest.mark.skipif(
    not SHARED_CRAWL.is_dir(),
    reason=f"opt-in: the real crawl samples are not at {SHARED_CRAWL}",
)
@pytest.mark.parametrize(
    "name",
    sorted(str(p.relative_to(SHARED_CRAWL)) for p in SHARED_CRAWL.rglob("*.gz"))
    if SHARED_CRAWL.is_dir()
    else ["absent"],
)
def test_real_crawl_samples_read_whole(name: str) -> None:
    """Third-party WARC/WET/WAT files: every record warcio sees is one of our rows, and
    nothing is reported unreadable."""
    path = SHARED_CRAWL / name
    rows = _rows(path)
    assert Counter(r["warc_type"] for r in rows) == _warcio_counts(path)
    assert not [r for r in rows if r["lost_bytes"]]
    documents = [r for r in rows if r["read_error"] is None]
    for r in documents:
        assert r["text"] is not None and r["doc_id"].startswith("<urn:")


def test_bytes_payload_keeps_image_records_as_bytes(tmp_path: Path) -> None:
    from neardup_udfs.io.warc import BYTES_COLUMNS, IMAGE_CONTENT_TYPES

    crawl = Crawl()
    w = CrawlWriter(tmp_path / "img.warc.gz", crawl)
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
    w.response("logo", "http://x/logo.png", png, content_type="image/png")
    w.response("page", "http://x/", b"<p>hi</p>")
    w.close()
    options = WarcOptions(content_types=IMAGE_CONTENT_TYPES, payload="bytes")
    by_id = {r["doc_id"]: r for r in _rows(crawl.files[0], options)}
    assert by_id[record_id("logo")]["content"] == png
    assert by_id[record_id("logo")]["read_error"] is None
    assert by_id[record_id("page")]["read_error"] == (
        "content type text/html is not a document type"
    )
    assert by_id[record_id("page")]["content"] is None
    files = [(str(crawl.files[0]), os.path.getsize(crawl.files[0]))]
    (frame,) = record_batches(files, lambda p: (open(p, "rb"), os.path.getsize(p)), options)
    assert list(frame.columns) == list(BYTES_COLUMNS)


def test_bytes_payload_under_a_content_encoding(tmp_path: Path) -> None:
    """Images (``payload = "bytes"``) are binary, so their bytes never tell a body stored
    decoded from garbage: a gzip image is inflated, one stored decoded under its
    Content-Encoding (or under one the reader does not know) passes as it is, for the image
    decoder to judge; a gzip stream that breaks is still a named reject."""
    from neardup_udfs.io.warc import IMAGE_CONTENT_TYPES

    png = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
    packed = gzip.compress(png, mtime=0)
    crawl = Crawl()
    w = CrawlWriter(tmp_path / "img.warc.gz", crawl)
    gz = [("Content-Encoding", "gzip")]
    w.response("gzip", "http://x/a.png", packed, content_type="image/png", extra=gz)
    w.response("stored", "http://x/b.png", png, content_type="image/png", extra=gz)
    zstd = [("Content-Encoding", "zstd")]
    w.response("zstd", "http://x/c.png", png, content_type="image/png", extra=zstd)
    w.response("cut", "http://x/d.png", packed[:20], content_type="image/png", extra=gz)
    w.close()
    options = WarcOptions(content_types=IMAGE_CONTENT_TYPES, payload="bytes")
    by_id = {r["doc_id"]: r for r in _rows(crawl.files[0], options)}
    for name in ("gzip", "stored", "zstd"):
        row = by_id[record_id(name)]
        assert (row["read_error"], row["content"]) == (None, png), name
    cut = by_id[record_id("cut")]
    short = "undecodable payload (gzip data cut short)"
    assert (cut["read_error"], cut["content"]) == (short, None)


def test_record_batches_are_bounded_by_bytes_too(tmp_path: Path) -> None:
    crawl = Crawl()
    w = CrawlWriter(tmp_path / "b.warc.gz", crawl)
    for i in range(6):
        w.response(f"p{i}", f"http://x/{i}", b"<p>" + b"x" * 1000 + b"</p>")
    w.close()
    files = [(str(crawl.files[0]), os.path.getsize(crawl.files[0]))]
    opener = lambda p: (open(p, "rb"), os.path.getsize(p))  # noqa: E731
    batches = list(record_batches(files, opener, WarcOptions(), rows=100, max_batch_bytes=2500))
    assert [len(b) for b in batches] == [3, 3]
