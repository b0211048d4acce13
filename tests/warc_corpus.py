"""Generated WARC and WET crawls (warcio's writer) for the WARC reader's and jobs' tests.

Nothing here is committed as a binary: every test writes the files it reads into its own
temporary directory, deterministically (fixed record ids, dates and payloads).
"""

from __future__ import annotations

import gzip
import io
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import brotli
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

DATE = "2026-11-30T12:00:00Z"
NAMESPACE = uuid.UUID("6f1c2a52-7d0e-4d0b-9a51-3c1d2f7e8b90")


def record_id(name: str) -> str:
    """The WARC-Record-ID the generator gives the record named ``name``."""
    return f"<urn:uuid:{uuid.uuid5(NAMESPACE, name)}>"


def html_page(text: str, title: str = "Page") -> str:
    body = "".join(f"<p>{p}</p>\n" for p in text.split("\n\n"))
    return f"<html><head><title>{title}</title></head><body>\n{body}</body></html>"


BROTLI_PAGE = html_page(
    "The ferry timetable changes on Monday: the first crossing leaves at 06:40.\n\n"
    "Caf\u00e9 and kiosk open from 06:15 \u2014 tickets \u20ac 3,50.",
    title="Ferry timetable",
)


@dataclass
class Crawl:
    """What was written: the files, and for each record name the reason it must be rejected
    (None = a document, with its expected text)."""

    files: list[Path] = field(default_factory=list)
    documents: dict[str, str] = field(default_factory=dict)  # record id -> expected text
    rejected: dict[str, str] = field(default_factory=dict)  # record id -> reason
    urls: dict[str, str] = field(default_factory=dict)  # record id -> url


class CrawlWriter:
    """Writes records into one WARC file, remembering the offset where each starts."""

    def __init__(self, path: Path, crawl: Crawl, gzip_members: bool = True) -> None:
        self.path = path
        self.crawl = crawl
        self.buf = io.BytesIO()
        self.writer = WARCWriter(self.buf, gzip=gzip_members)
        self.offsets: dict[str, int] = {}

    def _write(self, name: str, url: str, rtype: str, payload: bytes, **kw: object) -> str:
        rid = record_id(name)
        headers = {"WARC-Record-ID": rid, "WARC-Date": DATE}
        record = self.writer.create_warc_record(
            url, rtype, payload=io.BytesIO(payload), warc_headers_dict=headers, **kw
        )
        self.offsets[name] = self.buf.tell()
        self.writer.write_record(record)
        self.crawl.urls[rid] = url
        return rid

    def response(
        self,
        name: str,
        url: str,
        body: bytes,
        content_type: str = "text/html; charset=utf-8",
        status: str = "200 OK",
        extra: Iterable[tuple[str, str]] = (),
        expect: str | None = None,
        reason: str | None = None,
    ) -> str:
        http = StatusAndHeaders(
            status, [("Content-Type", content_type), *extra], protocol="HTTP/1.1"
        )
        rid = self._write(name, url, "response", body, http_headers=http)
        if reason is not None:
            self.crawl.rejected[rid] = reason
        else:
            self.crawl.documents[rid] = (
                expect if expect is not None else body.decode("utf-8", "replace")
            )
        return rid

    def other(self, name: str, url: str, rtype: str, payload: bytes, content_type: str) -> str:
        rid = self._write(name, url, rtype, payload, warc_content_type=content_type)
        return rid

    def close(self) -> Path:
        self.path.write_bytes(self.buf.getvalue())
        self.crawl.files.append(self.path)
        return self.path


def write_documents(
    path: Path, docs: Iterable[tuple[str, str]], crawl: Crawl, with_requests: bool = True
) -> CrawlWriter:
    """One HTML response per (name, text), each preceded by its request record (as crawlers
    write them); returns the open writer so callers can add more records."""
    w = CrawlWriter(path, crawl)
    for name, text in docs:
        url = f"http://news.example/{name}"
        if with_requests:
            rid = w.other(
                f"{name}/request",
                url,
                "request",
                f"GET /{name} HTTP/1.1\r\nHost: news.example\r\n\r\n".encode(),
                "application/http; msgtype=request",
            )
            crawl.rejected[rid] = "warc request record (not a document)"
        page = html_page(text)
        w.response(name, url, page.encode("utf-8"), expect=page)
    return w


def add_odd_records(w: CrawlWriter) -> dict[str, str]:
    """Every kind of record a crawl holds besides plain pages: returns name -> record id."""
    crawl = w.crawl
    ids: dict[str, str] = {}
    latin = (
        "<html><body><p>Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, na\u00efve fa\u00e7ade.</p>"
        "</body></html>"
    )
    ids["latin1"] = w.response(
        "latin1",
        "http://news.example/latin1",
        latin.encode("latin-1"),
        content_type="text/html; charset=ISO-8859-1",
        expect=latin,
    )
    zipped = "<html><body><p>compressed on the wire, stored as sent</p></body></html>"
    ids["gzip"] = w.response(
        "gzip",
        "http://news.example/gzip",
        gzip.compress(zipped.encode(), mtime=0),
        extra=[("Content-Encoding", "gzip")],
        expect=zipped,
    )
    ids["brotli"] = w.response(
        "brotli",
        "http://news.example/brotli",
        brotli.compress(BROTLI_PAGE.encode()),
        extra=[("Content-Encoding", "br")],
        expect=BROTLI_PAGE,
    )
    ids["brotli-corrupt"] = w.response(  # declared br, sent as is: not a brotli stream
        "brotli-corrupt",
        "http://news.example/brotli-corrupt",
        BROTLI_PAGE.encode(),
        extra=[("Content-Encoding", "br")],
        reason="undecodable payload (corrupt brotli data)",
    )
    chunked_text = "<html><body><p>sent in two chunks</p></body></html>"
    raw = chunked_text.encode()
    chunks = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (20, raw[:20], len(raw) - 20, raw[20:])
    ids["chunked"] = w.response(
        "chunked",
        "http://news.example/chunked",
        chunks,
        extra=[("Transfer-Encoding", "chunked")],
        expect=chunked_text,
    )
    plain = "A plain text file served as text/plain."
    ids["plain"] = w.response(
        "plain", "http://news.example/notes.txt", plain.encode(), content_type="text/plain"
    )
    ids["png"] = w.response(
        "png",
        "http://news.example/logo.png",
        b"\x89PNG\r\n\x1a\n" + bytes(64),
        content_type="image/png",
        reason="content type image/png is not a document type",
    )
    ids["pdf"] = w.response(
        "pdf",
        "http://news.example/report.pdf",
        b"%PDF-1.4 not really",
        content_type="application/pdf",
        reason="content type application/pdf is not a document type",
    )
    ids["404"] = w.response(
        "404",
        "http://news.example/missing",
        b"<html><body>Not found</body></html>",
        status="404 Not Found",
        reason="HTTP status 404 (not 2xx)",
    )
    ids["redirect"] = w.response(
        "redirect",
        "http://news.example/old",
        b"",
        status="301 Moved Permanently",
        extra=[("Location", "http://news.example/new")],
        reason="HTTP status 301 (not 2xx)",
    )
    http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
    ids["revisit"] = w._write(
        "revisit",
        "http://news.example/again",
        "revisit",
        b"",
        http_headers=http,
    )
    crawl.rejected[ids["revisit"]] = "revisit record (payload not stored)"
    ids["metadata"] = w.other(
        "metadata",
        "http://news.example/again",
        "metadata",
        b"via: http://news.example/\r\n",
        "application/warc-fields",
    )
    crawl.rejected[ids["metadata"]] = "warc metadata record (not a document)"
    return ids


JAPANESE_PAGE = html_page(
    "港の新しい橋の工事が始まりました。完成は来年の春の予定です。\n\n"
    "地元の人々は渋滞の解消を期待しています。",
    title="ニュース",
)
SHIFT_JIS_PAGE = html_page(
    "図書館は月曜日に休館します。年末年始の開館時間は別途お知らせします。",
    title="お知らせ",
)


def add_charset_twins(w: CrawlWriter) -> dict[str, str]:
    """The same UTF-8 page twice, byte for byte: ``twin-sjis`` declared Shift_JIS (a
    mislabelling server), ``twin-utf8`` declared UTF-8; and ``real-sjis``, a genuine
    Shift_JIS page declared Shift_JIS. Returns name -> record id; every one's expected text
    is its page (the twins: ``JAPANESE_PAGE``, byte-identical payloads, the same text)."""
    body = JAPANESE_PAGE.encode("utf-8")
    return {
        "twin-sjis": w.response(
            "twin-sjis",
            "http://news.example/ja/mislabelled",
            body,
            content_type="text/html; charset=Shift_JIS",
            expect=JAPANESE_PAGE,
        ),
        "twin-utf8": w.response(
            "twin-utf8",
            "http://news.example/ja/labelled",
            body,
            content_type="text/html; charset=UTF-8",
            expect=JAPANESE_PAGE,
        ),
        "real-sjis": w.response(
            "real-sjis",
            "http://news.example/ja/library",
            SHIFT_JIS_PAGE.encode("shift_jis"),
            content_type="text/html; charset=Shift_JIS",
            expect=SHIFT_JIS_PAGE,
        ),
    }


def corrupt(path: Path, offset: int, n: int = 24) -> None:
    """Overwrite ``n`` bytes, starting 40 bytes into the gzip member at ``offset``."""
    data = bytearray(path.read_bytes())
    data[offset + 40 : offset + 40 + n] = bytes(n)
    path.write_bytes(bytes(data))


def write_wet(path: Path, docs: Iterable[tuple[str, str]], crawl: Crawl) -> Path:
    """A WET file (Common Crawl layout): a warcinfo record, then one conversion record
    (text/plain, the page's extracted text) per document."""
    w = CrawlWriter(path, crawl)
    info = w.other(
        "wet-info", "", "warcinfo", b"software: neardup tests\r\n", "application/warc-fields"
    )
    crawl.rejected[info] = "warc warcinfo record (not a document)"
    for name, text in docs:
        rid = w.other(
            f"{name}/wet", f"http://news.example/{name}", "conversion", text.encode(), "text/plain"
        )
        crawl.documents[rid] = text
    return w.close()
