"""WARC and WET files as rows of documents: every record becomes one row, with its text or
the reason it is not a document, and every unreadable byte range becomes a row too.

No Spark here: ``io.read_input`` runs :func:`record_batches` inside the executors, one file
per task, reading the file as a stream (never whole).

Reader: warcio (Webrecorder). Parsing is not this pipeline's bottleneck (fingerprinting is,
at about 1k documents/s per core; warcio parses the real crawl samples at several thousand
records/s including decompression), and warcio is lenient where crawls are sloppy: a
response that declares chunked transfer but stores the body de-chunked, gzip content
encodings. FastWARC 2.0 was faster but failed on such a record of a real sample
(iana.warc.gz) and could not continue the file afterwards.

Brotli (``Content-Encoding: br``) is decoded here, with Google's ``brotli`` package, not by
warcio: warcio 1.8's brotli hook is written for brotlipy's decompressor (it sets an
attribute on it and calls ``decompress``), which Google's ``brotli.Decompressor`` refuses,
so every brotli page failed as ``undecodable payload (AttributeError)``.

gzip and deflate are decoded here too, with :mod:`zlib`: warcio passes a body its
decompressor refuses at the first block through as it is, silently stops at a stream that
ends early or breaks later, and knows no ``x-gzip``, so garbage declared gzip became a
document of its bytes (issue 50). The reader keeps warcio's one leniency that crawls need
(a page some crawlers store decoded under the Content-Encoding it was served with) only
for bodies that are text (:func:`_binary`), and rejects the rest by name.
"""

from __future__ import annotations

import codecs
import functools
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

import brotli
import pandas as pd
from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import ChunkedDataReader
from warcio.recordloader import ArcWarcRecord

from neardup_udfs.io.reasons import too_large
from neardup_udfs.schemas import CHARSET_OVERRIDDEN

__all__ = [
    "COLUMNS",
    "DEFAULT_CONTENT_TYPES",
    "EXTRACTORS",
    "SCHEMA_DDL",
    "WarcOptions",
    "read_file",
    "record_batches",
]

DEFAULT_CONTENT_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
EXTRACTORS = ("raw", "resiliparse")
GZIP_MAGIC = b"\x1f\x8b\x08"
BROTLI_BLOCK = 1 << 16  # compressed bytes read at a time from a brotli payload
INFLATE_BLOCK = 1 << 16  # compressed bytes read at a time from a gzip or deflate payload
# Content-Encoding values that leave the body as it is ("none" is not standard but is sent)
IDENTITY = frozenset({"", "identity", "none"})
SNIFF_BYTES = 1445  # how much of a body is looked at to tell text from binary (WHATWG sniffing)
# bytes that text never holds: WHATWG MIME sniffing's "binary data bytes"
BINARY_BYTES = frozenset([*range(0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])

# one row per record (or unreadable byte range); read_error set = the row goes to rejects/
COLUMNS = (
    "doc_id",  # WARC-Record-ID; <file URI>@<offset> for a range that holds no readable record
    "url",  # WARC-Target-URI
    "warc_date",  # WARC-Date, as written (ISO 8601, so it sorts)
    "warc_type",  # response | resource | conversion | request | revisit | ...
    "content_type",  # the HTTP payload's media type (response), else the record's
    "http_status",  # response records only
    "path",  # the file's URI
    "offset",  # where the record (or unreadable range) starts in the file, in file bytes
    "text",  # the document's text (null when read_error is set)
    "read_error",  # why the row is not a document (null for documents)
    "lost_bytes",  # unreadable range: its length; truncated record: the bytes missing
    CHARSET_OVERRIDDEN,  # the text is not what the declared charset gives (see _decode)
)
SCHEMA_DDL = (
    "doc_id string, url string, warc_date string, warc_type string, content_type string, "
    "http_status int, path string, offset bigint, text string, read_error string, "
    f"lost_bytes bigint, {CHARSET_OVERRIDDEN} boolean"
)
# payload = "bytes" (images): ``content`` (the decoded payload's bytes) instead of ``text``
BYTES_COLUMNS = tuple("content" if c == "text" else c for c in COLUMNS)
BYTES_SCHEMA_DDL = SCHEMA_DDL.replace("text string", "content binary")
IMAGE_CONTENT_TYPES = (  # the formats kernels.phash decodes
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/bmp",
    "image/tiff",
    "image/x-icon",
    "image/vnd.microsoft.icon",
)


@dataclass(frozen=True)
class WarcOptions:
    """What counts as a document and how its text is made.

    ``content_types``: media types read as documents (others are rejected by type);
    ``extractor``: ``raw`` hands the decoded HTML to the preset's normalization (what ditto
    does), ``resiliparse`` extracts the main content's plain text first;
    ``max_bytes``: a longer payload is rejected without being held in memory;
    ``payload``: ``text`` (a ``text`` column) or ``bytes`` (a ``content`` column: the
    payload as served, content-decoded; for images).
    """

    content_types: tuple[str, ...] = DEFAULT_CONTENT_TYPES
    extractor: str = "raw"
    max_bytes: int = 10_000_000
    payload: str = "text"

    @property
    def columns(self) -> tuple[str, ...]:
        return BYTES_COLUMNS if self.payload == "bytes" else COLUMNS

    @property
    def schema_ddl(self) -> str:
        return BYTES_SCHEMA_DDL if self.payload == "bytes" else SCHEMA_DDL


Row = dict[str, Any]
Opener = Callable[[str], tuple[IO[bytes], int]]


def read_file(fh: IO[bytes], path: str, size: int, options: WarcOptions) -> Iterator[Row]:
    """Every record of one WARC/WET file (``.warc``, ``.warc.gz``, ``.wet.gz``) as a row.

    Guarantees: rows come in file order; a record that cannot be read whole (cut short by
    the end of the file) is a row with ``read_error`` ``truncated record``; in a gzip file
    (one member per record, as crawlers write them) a corrupt member loses only itself: the
    reader resumes at the next member that starts a readable record, and the unreadable
    range is one row (``doc_id`` = ``<path>@<offset>``, ``lost_bytes`` = its length; for a
    truncated record, the bytes it declares but the file lacks).
    """
    gzipped = _starts_with_gzip(fh)
    start = 0
    while start < size:
        end: int | None = None  # where the last record read whole in this pass ends
        broken: int | None = None  # where the record being read starts, until it is read
        failed = False
        fh.seek(start)
        records = ArchiveIterator(fh, arc2warc=False, ensure_http_headers=False)
        try:
            for record in records:
                broken = records.offset  # the current record's start (get_record_offset reads)
                yield _row(record, path, broken, options)
                end = broken + records.get_record_length()
                broken = None
        except Exception:  # noqa: BLE001 -- any parse or decompression error: resync below
            failed = True
        bad = broken if broken is not None else start if end is None else end
        if not failed and _blank(fh, bad, size):
            return
        resume = _next_member(fh, bad + 1, size) if gzipped else None
        reason = "corrupt data" if failed else "truncated file"
        yield _lost(path, bad, (size if resume is None else resume) - bad, reason)
        if resume is None:
            return
        start = resume


def record_batches(
    files: Iterable[tuple[str, int]],
    open_file: Opener,
    options: WarcOptions,
    rows: int = 1000,
    max_batch_bytes: int = 64 << 20,
) -> Iterator[pd.DataFrame]:
    """The rows of every file, at most ``rows`` at a time and, beyond the first row of a
    batch, at most ``max_batch_bytes`` of payload (bounded memory whatever the file size)."""
    batch: list[Row] = []
    held = 0
    for path, size in files:
        fh, actual = open_file(path)
        with fh:
            for row in read_file(fh, path, actual if actual >= 0 else size, options):
                payload = row["text"] if row["text"] is not None else row["content"]
                held += len(payload) if payload is not None else 0
                batch.append(row)
                if len(batch) >= rows or held >= max_batch_bytes:
                    yield _frame(batch, options.columns)
                    batch, held = [], 0
    if batch:
        yield _frame(batch, options.columns)


def _frame(rows: list[Row], columns: tuple[str, ...]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=list(columns))
    df["http_status"] = df["http_status"].astype("Int32")
    df["offset"] = df["offset"].astype("int64")
    df["lost_bytes"] = df["lost_bytes"].astype("int64")
    df[CHARSET_OVERRIDDEN] = df[CHARSET_OVERRIDDEN].astype("bool")
    return df


def _row(record: ArcWarcRecord, path: str, offset: int, options: WarcOptions) -> Row:
    if record.format != "warc":  # warcio reads anything else as an old ARC record
        raise ValueError(f"not a WARC record at offset {offset}")
    headers = record.rec_headers
    warc_type = record.rec_type
    row = _located(path, offset)
    row.update(
        doc_id=headers.get_header("WARC-Record-ID") or row["doc_id"],
        url=headers.get_header("WARC-Target-URI"),
        warc_date=headers.get_header("WARC-Date"),
        warc_type=warc_type,
    )
    http = record.http_headers if warc_type in ("response", "revisit") else None
    if http is not None:
        status = http.get_statuscode()
        row["http_status"] = int(status) if status and status.isdigit() else None
    content_type = (
        http.get_header("Content-Type") if http is not None else headers.get_header("Content-Type")
    )
    media, charset = _media_type(content_type)
    row["content_type"] = media
    reason = _not_a_document(record, row, media, options)
    if reason is None:
        text = options.payload != "bytes"
        payload, reason, row["lost_bytes"] = _payload(record, options.max_bytes, text)
        if reason is None and options.payload == "bytes":
            row["content"] = payload
        elif reason is None and payload.startswith(GZIP_MAGIC):
            reason = "undecodable payload (gzip data not declared)"  # no Content-Encoding says so
        elif reason is None:
            row["text"], row[CHARSET_OVERRIDDEN] = _text(payload, media, charset, options.extractor)
    if reason is not None:
        row["read_error"] = reason
    if not headers.get_header("WARC-Record-ID"):
        row["read_error"] = "record has no WARC-Record-ID"
        row["text"] = row["content"] = None
        row[CHARSET_OVERRIDDEN] = False
    return row


def _not_a_document(
    record: ArcWarcRecord, row: Row, media: str | None, options: WarcOptions
) -> str | None:
    warc_type = row["warc_type"]
    if warc_type == "revisit":
        return "revisit record (payload not stored)"
    if warc_type not in ("response", "resource", "conversion"):
        return f"warc {warc_type} record (not a document)"
    status = row["http_status"]
    if warc_type == "response" and record.http_headers is not None:
        if status is None or not 200 <= status < 300:
            return f"HTTP status {status} (not 2xx)"
    if media is None:
        return "no content type"
    if media not in options.content_types:
        return f"content type {media} is not a document type"
    length = int(record.rec_headers.get_header("Content-Length") or 0)
    if length > options.max_bytes:
        return too_large(options.max_bytes)
    return None


def _payload(
    record: ArcWarcRecord, max_bytes: int, text: bool = True
) -> tuple[bytes, str | None, int]:
    """The record's payload (de-chunked, content-decoded), or why it cannot be had; and how
    many of the bytes the record declares the file does not hold.

    A brotli, gzip or deflate payload that ends unfinished is a ``truncated record`` when the
    file lacks bytes of the record, else ``undecodable payload (<encoding> data cut
    short)``."""
    try:
        data = _content(record, max_bytes + 1, text)
    except _CutShort as e:
        missing = int(getattr(record.raw_stream, "limit", 0))  # the body was read to its end
        if missing > 0:
            return b"", "truncated record", missing
        return b"", f"undecodable payload ({e})", 0
    except _Undecodable as e:
        return b"", f"undecodable payload ({e})", 0
    except Exception as e:  # noqa: BLE001 -- a broken content encoding is the record's fault
        return b"", f"undecodable payload ({type(e).__name__})", 0
    if len(data) > max_bytes:
        return b"", too_large(max_bytes), 0
    missing = int(getattr(record.raw_stream, "limit", 0))
    if missing > 0:
        return b"", "truncated record", missing
    return data, None, 0


class _Undecodable(ValueError):
    """The payload is not what its content encoding says; the message says how."""


class _CutShort(_Undecodable):
    """The encoded payload ends before its encoding does."""


def _content(record: ArcWarcRecord, limit: int, text: bool = True) -> bytes:
    """At most ``limit`` bytes of the record's payload, de-chunked and content-decoded:
    brotli (``Content-Encoding: br``) by :func:`_unbrotli`, gzip (``x-gzip``) and deflate by
    :func:`_inflate`, no encoding (or ``identity``) by warcio's de-chunking.

    Raises :class:`_Undecodable` (``unsupported content encoding <name>``) for any other
    encoding (``zstd``, ``compress``, a list of codings) when ``text`` (a text document is
    read) and the body is binary; a body that is text is taken as stored decoded, as it is.
    Not ``text`` (``payload = "bytes"``: images), a body is never judged by its bytes: one
    that is not the declared stream passes as it is, for the image decoder to judge."""
    http = record.http_headers
    encoding = http.get_header("Content-Encoding") if http is not None else None
    coding = (encoding or "").strip().lower()
    if coding in IDENTITY:
        return record.content_stream().read(limit)
    chunked = (http.get_header("Transfer-Encoding") or "").strip().lower() == "chunked"
    # de-chunked only (no decomp_type): warcio's decompressors never see the encoded bytes
    body = ChunkedDataReader(record.raw_stream) if chunked else record.raw_stream
    if coding == "br":
        return _unbrotli(body, limit)
    if coding in ("gzip", "x-gzip", "deflate"):
        return _inflate(body, limit, "deflate" if coding == "deflate" else "gzip", text)
    head = body.read(min(limit, INFLATE_BLOCK))
    if text and _binary(head):
        raise _Undecodable(f"unsupported content encoding {coding}")
    return head + body.read(limit - len(head))


def _binary(head: bytes) -> bool:
    """Is a body that starts with ``head`` binary, not text? WHATWG MIME sniffing's rule for
    "text or binary": a UTF-8 or UTF-16 byte order mark is text, else any of
    ``BINARY_BYTES`` in the first ``SNIFF_BYTES`` bytes is binary."""
    if head.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE)):
        return False
    return not BINARY_BYTES.isdisjoint(head[:SNIFF_BYTES])


def _zlib_header(head: bytes) -> bool:
    """Does ``head`` start with a zlib stream's header (RFC 1950: deflate, window <= 32 KiB,
    check bits)?"""
    return (
        len(head) >= 2
        and head[0] & 0x0F == 8
        and head[0] >> 4 <= 7
        and (head[0] << 8 | head[1]) % 31 == 0
    )


def _inflate(body: IO[bytes], limit: int, coding: str, text: bool = True) -> bytes:
    """The first ``limit`` bytes (all, when fewer) of what the ``gzip`` or ``deflate`` body
    decodes to; an empty ``body`` is an empty payload.

    What the body is, first match wins: gzip magic (``gzip``) or a zlib header
    (``deflate``): that stream; text (not :func:`_binary`), or any body when not ``text``
    (images, see :func:`_content`): a payload stored decoded, returned as it is (warcio's
    leniency, which crawls need); ``deflate``: raw deflate data (servers send both); else
    not ``gzip``. The first stream only is decoded: bytes after its end are
    ignored (as browsers and warcio do).

    Guarantees: ``body`` is read ``INFLATE_BLOCK`` bytes at a time and decoding stops once
    ``limit`` bytes are out (bounded memory, as :func:`_unbrotli`). Raises
    :class:`_Undecodable` (``corrupt <coding> data``) for bytes that are not the stream or
    break it (a failed check, a bad block), and :class:`_CutShort` (``<coding> data cut
    short``) for a stream that ends unfinished.
    """
    data = body.read(INFLATE_BLOCK)
    if not data:
        return b""
    if coding == "gzip" and data.startswith(GZIP_MAGIC[:2]):
        wbits = 16 + zlib.MAX_WBITS
    elif coding == "deflate" and _zlib_header(data):
        wbits = zlib.MAX_WBITS
    elif not text or not _binary(data):
        return (data + body.read(max(0, limit - len(data))))[:limit]
    elif coding == "deflate":
        wbits = -zlib.MAX_WBITS
    else:
        raise _Undecodable("corrupt gzip data")
    inflater = zlib.decompressobj(wbits)
    pieces: list[bytes] = []
    held = 0
    while held < limit and not inflater.eof:
        if not data:
            data = body.read(INFLATE_BLOCK)
            if not data:
                raise _CutShort(f"{coding} data cut short")
        try:
            piece = inflater.decompress(data, limit - held)
        except zlib.error as e:
            raise _Undecodable(f"corrupt {coding} data") from e
        pieces.append(piece)
        held += len(piece)
        data = inflater.unconsumed_tail
    return b"".join(pieces)[:limit]


def _unbrotli(body: IO[bytes], limit: int) -> bytes:
    """The first ``limit`` bytes (all, when fewer) of what the brotli stream ``body`` decodes
    to; an empty ``body`` is an empty payload.

    Guarantees: ``body`` is read ``BROTLI_BLOCK`` bytes at a time and decoding stops once
    ``limit`` bytes are out, so a small stream that decodes to gigabytes holds about
    ``limit`` bytes of output (plus one 32 KiB output step of the decoder, and its window of
    at most 16 MiB), never the whole. Raises
    :class:`_Undecodable` (``corrupt brotli data``) for bytes that are not a brotli stream or
    that go on after its end, and :class:`_CutShort` (``brotli data cut short``) for a stream
    that ends unfinished.
    """
    decoder = brotli.Decompressor()
    pieces: list[bytes] = []
    held = 0
    fed = False
    while held < limit and not decoder.is_finished():
        # the decoder may hold output back (the limit): drain it before feeding more
        block = body.read(BROTLI_BLOCK) if decoder.can_accept_more_data() else b""
        fed = fed or bool(block)
        try:
            piece = decoder.process(block, output_buffer_limit=limit - held)
        except brotli.error as e:
            raise _Undecodable("corrupt brotli data") from e
        if not block and not piece:
            break  # the body has ended and the decoder has nothing more to give
        pieces.append(piece)
        held += len(piece)
    if held < limit:
        if fed and not decoder.is_finished():
            raise _CutShort("brotli data cut short")
        if fed and body.read(1):
            raise _Undecodable("corrupt brotli data")  # bytes after the stream's end
    return b"".join(pieces)[:limit]


def _text(
    payload: bytes, media: str | None, charset: str | None, extractor: str
) -> tuple[str, bool]:
    """The document's text, and whether its declared charset was set aside (:func:`_decode`).

    Both extractors decode the payload by the same rule, so byte-identical payloads give the
    same HTML to extract from; ``resiliparse`` differs only where nothing decides (no usable
    declaration, not UTF-8): it asks uchardet instead of assuming Windows-1252."""
    if extractor == "resiliparse" and media in HTML_TYPES:
        from resiliparse.extract.html2text import extract_plain_text

        html, overridden = _decode(payload, charset, fallback=_detected)
        return str(extract_plain_text(html, main_content=True)), overridden
    return _decode(payload, charset)


def _windows_1252(payload: bytes) -> str:
    return payload.decode("cp1252", errors="replace")


def _detected(payload: bytes) -> str:
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding

    return str(bytes_to_str(payload, detect_encoding(payload) or "utf-8"))


# byte order marks, longest first (a UTF-32LE BOM starts with the UTF-16LE one)
BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
BOM_PREFIXES = tuple(bom for bom, _ in BOMS)
WIDE = ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be")
# without a BOM, the generic wide codecs mean little-endian (as WHATWG reads "utf-16"), on
# every machine (Python's would follow the machine's byte order)
NO_BOM = {"utf-16": "utf-16-le", "utf-32": "utf-32-le"}
ASCII = bytes(range(128))


def _decode(
    payload: bytes, charset: str | None, fallback: Callable[[bytes], str] = _windows_1252
) -> tuple[str, bool]:
    """The payload's text, and whether the declared charset was set aside for it.

    The bytes decide where they can, the declaration where they cannot; first match wins:

    1. a byte order mark (UTF-8, UTF-16 or UTF-32, LE or BE): that encoding, the mark
       stripped, whatever is declared (as browsers do);
    2. the declared charset, when the bytes bear it out and decode in it without error: a
       UTF-16/32 declaration and a NUL byte in the payload, or an ISO-2022 declaration and
       an ESC byte (a UTF-16 page has a NUL in every ASCII character, an ISO-2022-JP page
       is 7-bit with ESC shifts: both can be valid UTF-8, but UTF-8 text has neither byte);
    3. valid UTF-8: UTF-8, whatever is declared. A page in another charset is very
       unlikely to be valid UTF-8 once it holds one non-ASCII character; and pure ASCII
       reads the same under every ASCII-compatible charset, while under the others (UTF-7,
       HZ, EBCDIC, Python's Shift_JISX0213 reading 0x5C as a yen sign, UTF-16/32 without
       the NULs of 2.) no browser reads ASCII bytes as anything but ASCII either;
    4. the declared charset, invalid bytes replaced by U+FFFD (an unknown name, or a codec
       that is not a charset such as ``base64``, counts as undeclared);
    5. ``fallback``: Windows-1252 (resiliparse: uchardet's guess).

    So byte-identical payloads decode to the same text whatever they declare, except where
    the declaration is all there is to go on: bytes that are not UTF-8, and the NUL or ESC
    bytes of 2. (which no UTF-8 text holds). The declared charset is set aside (the second
    value) when one that Python knows was declared and the text differs from what it gives:
    a UTF-8 page declared Shift_JIS or ISO-8859-1 is counted, an ASCII page declared
    ISO-8859-1 is not (same text).
    """
    declared = _codec(charset)
    for bom, name in BOMS:
        if payload.startswith(bom):
            text = payload[len(bom) :].decode(name, errors="replace")
            return text, _set_aside(payload, declared, text)
    if declared is not None and _borne_out(payload, declared):
        try:
            return payload.decode(NO_BOM.get(declared, declared)), False
        except UnicodeDecodeError:
            pass
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        if declared is None:
            return fallback(payload), False
        return payload.decode(NO_BOM.get(declared, declared), errors="replace"), False
    return text, _set_aside(payload, declared, text)


def _borne_out(payload: bytes, declared: str) -> bool:
    """Do the bytes hold the byte the declared charset uses and UTF-8 text never does?"""
    if declared in WIDE:
        return b"\x00" in payload
    return declared.startswith("iso2022") and b"\x1b" in payload


def _set_aside(payload: bytes, declared: str | None, text: str) -> bool:
    """Does ``text`` differ from what the declared charset makes of ``payload``?"""
    if declared is None:
        return False
    bom = payload.startswith(BOM_PREFIXES)
    if declared in ("utf-8", "utf-8-sig") and not bom:  # decoded as declared
        return False
    if payload.isascii() and _ascii_safe(declared):
        return False
    codec = declared if bom else NO_BOM.get(declared, declared)
    own = payload.decode(codec, errors="replace")
    return own.removeprefix("\ufeff") != text


@functools.cache
def _ascii_safe(codec: str) -> bool:
    """Does ``codec`` read every ASCII byte as that ASCII character?"""
    return ASCII.decode(NO_BOM.get(codec, codec), errors="replace") == ASCII.decode("ascii")


@functools.lru_cache(maxsize=1024)  # the charsets of a crawl are few, but headers are free text
def _codec(charset: str | None) -> str | None:
    """Python's name of the declared charset's codec; None when undeclared, unknown, or not
    a charset (``base64``, ``rot13``, ``idna``: no bytes-to-text decoding with replacement)."""
    if not charset:
        return None
    try:
        info = codecs.lookup(charset)
        if not getattr(info, "_is_text_encoding", True):
            return None
        b"<p>\xff".decode(info.name, errors="replace")
    except (LookupError, UnicodeError, ValueError, TypeError):
        return None
    return info.name


def _media_type(content_type: str | None) -> tuple[str | None, str | None]:
    if not content_type:
        return None, None
    parts = [p.strip() for p in content_type.split(";")]
    media = parts[0].lower() or None
    charset = None
    for p in parts[1:]:
        key, _, value = p.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip("\"'") or None
    return media, charset


def _located(path: str, offset: int) -> Row:
    """A row of every column, named by its location (``<path>@<offset>``), nothing read yet."""
    row: Row = dict.fromkeys(COLUMNS + ("content",))
    row.update(doc_id=f"{path}@{offset}", path=path, offset=offset, lost_bytes=0)
    row[CHARSET_OVERRIDDEN] = False
    return row


def _lost(path: str, offset: int, n: int, reason: str) -> Row:
    row = _located(path, offset)
    row.update(read_error=reason, lost_bytes=n)
    return row


def _blank(fh: IO[bytes], start: int, size: int) -> bool:
    """Is the file from ``start`` to its end empty or line breaks only (the blank lines an
    uncompressed WARC puts after its last record)?"""
    if start >= size:
        return True
    if size - start > 64:
        return False
    fh.seek(start)
    return not fh.read(size - start).strip(b"\r\n")


def _starts_with_gzip(fh: IO[bytes]) -> bool:
    fh.seek(0)
    head = fh.read(2)
    fh.seek(0)
    return head == GZIP_MAGIC[:2]


def _next_member(fh: IO[bytes], start: int, size: int) -> int | None:
    """The first offset >= ``start`` where a gzip member holding a WARC record begins."""
    pos = start
    while pos < size:
        fh.seek(pos)
        window = fh.read(1 << 20)
        if not window:
            return None
        i = window.find(GZIP_MAGIC)
        if i < 0:
            pos += max(1, len(window) - len(GZIP_MAGIC) + 1)
            continue
        if _holds_record(fh, pos + i):
            return pos + i
        pos += i + 1
    return None


def _holds_record(fh: IO[bytes], offset: int) -> bool:
    """Does a gzip member start at ``offset`` and decompress to the start of a WARC record?"""
    fh.seek(offset)
    inflate = zlib.decompressobj(31)
    try:
        head = inflate.decompress(fh.read(1 << 12), 16)
    except zlib.error:
        return False
    return head.startswith(b"WARC/")
