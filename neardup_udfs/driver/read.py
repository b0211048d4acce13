"""JSON-lines input read without Spark (the dedup run's ``local`` engine): the rows, columns,
ids and rejects Spark's read stage gives for the same files, or :class:`Declined` with the
reason, for an input only Spark's reader reads as the job promises.

Taken here: local files (a file, or a folder of files directly in it) of UTF-8 JSON lines,
every line a JSON object, every value a string, a whole number, true/false or null, one
type per field across the files. Everything else (a glob, sub-folders, hidden files, ``.gz``,
UTF-16/32, a line that does not parse, a float, an object or a list as a value, invalid
UTF-8, field names equal but for case) is :class:`Declined`, and the run reads through
Spark as before, with the same outputs.
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from neardup_udfs.driver.strings import string_buffers
from neardup_udfs.io.input_files import unread_files
from neardup_udfs.io.reasons import (
    DUPLICATE_ID,
    ID_NULL,
    NOT_UNICODE,
    NULL_ID,
    NULL_TEXT,
    READER,
    ROW_RULES,
    TEXT_NULL,
    TEXT_SIZE,
    TEXT_TYPE,
    rejects_by_reason,
    too_large,
)
from neardup_udfs.io.storage import Listed, LocalStorage, StorageError
from neardup_udfs.schemas import DOC_ID, REASON, TEXT

__all__ = [
    "Counted",
    "Declined",
    "LocalInput",
    "checked_columns",
    "input_files",
    "input_table",
    "later_copies",
    "lone_surrogates",
    "made_ids",
    "merged_types",
    "parse_json_lines",
    "read_jsonl",
    "reject_reasons",
    "rejects_table",
    "repeated_ids",
    "spark_file_uri",
]

_GLOB = "*?[]{}\\"
_TYPES = (pa.string(), pa.int64(), pa.bool_())  # Spark: string, bigint, boolean
_MAX_BLOCK = (1 << 31) - 1


class Declined(Exception):
    """The input needs Spark's reader; the message says why."""


class Counted:
    """Rows read: accepted (``n_good``) and rejected (``counts``: rows per reason)."""

    counts: dict[str, int]

    @property
    def n_good(self) -> int:
        raise NotImplementedError

    @property
    def n_rejected(self) -> int:
        return sum(self.counts.values())

    @property
    def rows(self) -> int:
        return self.n_good + self.n_rejected


@dataclass(frozen=True)
class LocalInput(Counted):
    """What ``stages.read.read_checked`` gives for the same input, as Arrow tables."""

    good: pa.Table  # every input column (Spark's order), plus doc_id and text
    rejects: pa.Table  # doc_id, reason
    counts: dict[str, int]  # rejected rows per reason
    text_col: str  # the input's own name of the text column
    text_bytes: int  # the accepted rows' text, in UTF-8 bytes
    file_bytes: int  # the bytes of the files read
    stats: dict[str, Any] = field(default_factory=dict)  # report.json "input"

    @property
    def n_good(self) -> int:
        return self.good.num_rows


def input_files(store: LocalStorage, path: str) -> list[Listed]:
    """The files of local JSON-lines input ``path`` this reader takes (empty ones included),
    or :class:`Declined`."""
    if any(c in path for c in _GLOB) and not store.exists_literally(path):
        raise Declined("the input path is a glob")
    try:
        unread = unread_files(store, path)
    except StorageError as e:
        raise Declined(str(e)) from None
    if unread.hidden or unread.dangling:
        raise Declined("the input holds hidden files or dangling links")
    if not unread.read or not any(f.length for f in unread.read):
        raise Declined("the input holds no records")
    for f in unread.read:
        if "/" in f.under:
            raise Declined(f"the input has sub-folders ({f.under})")
        if f.uri.endswith(".gz"):
            raise Declined(f"{f.uri} is compressed")
    return list(unread.read)


def read_jsonl(
    path: str,
    id_col: str | None,
    text_col: str,
    max_text_bytes: int,
    order_col: str | None = None,
    store: LocalStorage | None = None,
    max_file_bytes: int | None = None,
) -> LocalInput:
    """``path`` read and checked as ``stages.read.read_checked`` reads and checks JSON lines
    (the same columns in the same order, ids, rejects and reasons), or :class:`Declined`.

    Notes:
        Columns come in Spark's order (field names sorted), a field null on every line is a
        string, ``doc_id`` is ``id_col`` as a string or ``<file URI>:<record index>``. Rejects,
        first match wins: ``null doc_id``, ``null text``, ``text larger than N bytes``; then,
        of the passing rows of a repeated id, all but the one with the smallest text
        (UTF-8 byte order) are ``duplicate doc_id``. Files of more than ``max_file_bytes``
        in all are :class:`Declined` before they are read.
    """
    store = store or LocalStorage()
    files = input_files(store, path)
    total = sum(f.length for f in files)
    if max_file_bytes is not None and total > max_file_bytes:
        raise Declined(f"the input's {total} bytes exceed the local engine's {max_file_bytes}")
    tables = [(f, _read_file(f, text_col)) for f in files if f.length > 0]
    tables = [(f, t) for f, t in tables if t.num_rows > 0]
    if not tables:
        raise Declined("the input holds no records")
    types = merged_types([t.schema for _, t in tables])
    checked_columns(types, id_col, text_col, order_col)
    names = sorted(types)
    parts = []
    for f, t in tables:
        ids = None if id_col else made_ids(f.uri, 0, t.num_rows)
        parts.append(input_table(t, types, names, id_col, text_col, ids))
    whole = pa.concat_tables(parts)
    return _checked(whole, text_col, max_text_bytes, total, made=not id_col)


def checked_columns(
    types: dict[str, pa.DataType], id_col: str | None, text_col: str, order_col: str | None
) -> None:
    """:class:`Declined` unless the input's fields (``types``) hold the columns the run
    reads, no reserved ``doc_id`` of its own, and a string text column."""
    for col in (c for c in (id_col, text_col, order_col) if c):
        if col not in types:
            raise Declined(f"the input has no column {col!r}")
    if DOC_ID in types and id_col != DOC_ID:
        raise Declined(f"the input has the reserved column {DOC_ID!r}")
    if types[text_col] != pa.string():
        raise Declined(f"text column {text_col!r} is not a string")


def made_ids(uri: str, first: int, rows: int) -> pa.Array:
    """The ids ``<file URI>:<record index>`` of ``rows`` records of file ``uri`` from record
    ``first`` on."""
    index = pa.array(np.arange(first, first + rows).astype(str))
    return pc.binary_join_element_wise(pa.scalar(spark_file_uri(uri)), index, ":")


def input_table(
    table: pa.Table,
    types: dict[str, pa.DataType],
    names: list[str],
    id_col: str | None,
    text_col: str,
    ids: pa.Array | None,
) -> pa.Table:
    """Records as read (``table``) with every input field (``names``, typed as ``types``),
    then ``doc_id`` (``id_col`` as a string, or ``ids``) and ``text``, in Spark's order."""
    cols = {n: _column(table, n, types[n]) for n in names}
    cols[DOC_ID] = pc.cast(cols[id_col], pa.string()) if id_col else ids
    # Spark's withColumn: in place when the name is there, else last
    cols[TEXT] = cols[text_col]
    out = pa.table(cols)
    return out if id_col else _required(out, DOC_ID)  # a made id is never null


def _required(table: pa.Table, name: str) -> pa.Table:
    """``table`` with field ``name`` declared non-nullable."""
    at = table.schema.get_field_index(name)
    return table.cast(table.schema.set(at, table.schema.field(at).with_nullable(False)))


_URI_PATH_SAFE = frozenset(string.ascii_letters + string.digits + "-_.!~*'(),;:$&+=/@")


def spark_file_uri(uri: str) -> str:
    """A ``file:`` URI as Spark's ``_metadata.file_path`` gives it (Hadoop's ``Path.toUri``,
    java.net.URI's quoting): ASCII outside a path's legal characters and non-ASCII space
    and control characters as %XX of their UTF-8 bytes, other non-ASCII characters as they
    are."""
    path = uri.removeprefix("file:")
    out = []
    for ch in path:
        keep = ch in _URI_PATH_SAFE or (
            ord(ch) > 0x7F and unicodedata.category(ch) not in ("Zs", "Zl", "Zp", "Cc")
        )
        out.append(ch if keep else "".join(f"%{b:02X}" for b in ch.encode("utf-8")))
    return "file:" + "".join(out)


def _read_file(f: Listed, text_col: str) -> pa.Table:
    """One file's records (:func:`parse_json_lines`), or :class:`Declined`."""
    with open(f.uri.removeprefix("file:"), "rb") as fh:
        data = fh.read()
    return parse_json_lines(data, f.uri, first=True, text_col=text_col)


def parse_json_lines(
    data: bytes, uri: str, *, first: bool, text_col: str | None = None
) -> pa.Table:
    """Records of JSON lines ``data`` (of file ``uri``; ``first``: from its start) as pyarrow
    infers them (fields inferred as timestamps re-read as the strings they are), checked
    as valid UTF-8, or :class:`Declined`.

    A lone surrogate escape (``\\ud800`` without its pair) is read as Spark reads it: in
    column ``text_col`` it stays, as its own three bytes, for :func:`lone_surrogates` to
    find (the row is a reject, ``readers.NOT_UNICODE``); in any other string column it is
    ``?``. One in a field name is :class:`Declined`."""
    if first and (data[:3] == b"\xef\xbb\xbf" or _wide(data[:4])):
        raise Declined(f"{uri} is not plain UTF-8")
    marked = _marked(data)
    if marked is not None:  # the marks are not UTF-8: the input's own bytes must be
        _check_utf8(data, uri)
        data = marked
    options = pj.ReadOptions(block_size=min(_MAX_BLOCK, max(len(data) + 1, 1 << 20)))
    try:
        table = pj.read_json(pa.BufferReader(data), read_options=options)
        strings = [x.name for x in table.schema if pa.types.is_temporal(x.type)]
        if strings:
            explicit = pa.schema([(n, pa.string()) for n in strings])
            parse = pj.ParseOptions(explicit_schema=explicit, unexpected_field_behavior="infer")
            table = pj.read_json(pa.BufferReader(data), read_options=options, parse_options=parse)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as e:
        raise Declined(f"{uri}: {str(e).splitlines()[0]}") from None
    except UnicodeDecodeError:  # a field name with a mark
        raise Declined(f"{uri}: a field name holds a lone surrogate") from None
    if marked is not None:
        return _surrogates_as_spark_reads_them(table, uri, text_col)
    try:
        table.validate(full=True)  # invalid UTF-8: Spark's reader rejects those lines
    except pa.ArrowInvalid as e:
        raise Declined(f"{uri} is not valid UTF-8 ({e})") from None
    return table


# a run of backslashes, u and a surrogate's 4 hex digits (JSON's \u is lower case), and the
# low surrogate escape right after it, if any: the run's length tells whether the first is an
# escape (odd) or text (an escaped backslash, then "ud800")
_SURROGATE = re.compile(
    rb"(\\+)u([dD][89a-fA-F][0-9a-fA-F]{2})(?:\\u([dD][c-fC-F][0-9a-fA-F]{2}))?"
)


def _mark(code: bytes) -> bytes:
    """The lone surrogate escaped as ``code`` (4 hex digits) as its own three bytes
    (surrogatepass UTF-8: ED A0..BF xx, which valid UTF-8 never holds)."""
    return chr(int(code, 16)).encode("utf-8", "surrogatepass")


def _marked(data: bytes) -> bytes | None:
    """``data`` with each lone surrogate escape (a high one without the low one after it, a
    low one alone) as its three bytes (:func:`_mark`); None when it holds none."""
    if b"\\ud" not in data and b"\\uD" not in data:
        return None
    found = False

    def lone(m: re.Match[bytes]) -> bytes:
        nonlocal found
        run, first, low = m.group(1), m.group(2), m.group(3)
        if len(run) % 2 == 0:  # "\\" then text: only the low escape after it counts
            if low is None:
                return m.group(0)
            found = True
            return run + b"u" + first + _mark(low)
        if low is not None and first[1:2] in b"89abAB":  # a pair
            return m.group(0)
        found = True
        return run[:-1] + _mark(first) + (b"" if low is None else _mark(low))

    out = _SURROGATE.sub(lone, data)
    return out if found else None


def _check_utf8(data: bytes, uri: str) -> None:
    """:class:`Declined` unless ``data`` is valid UTF-8 (Spark's reader rejects the lines
    that are not), checked without a copy."""
    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int64))
    whole = pa.Array.from_buffers(pa.large_string(), 1, [None, offsets, pa.py_buffer(data)])
    try:
        whole.validate(full=True)
    except pa.ArrowInvalid as e:
        raise Declined(f"{uri} is not valid UTF-8 ({e})") from None


def _surrogates_as_spark_reads_them(table: pa.Table, uri: str, text_col: str | None) -> pa.Table:
    """``table`` (read from marked lines, :func:`_marked`) with each mark outside column
    ``text_col`` replaced by ``?``, as Spark reads a lone surrogate into a string."""
    columns = []
    for name, column in zip(table.column_names, table.columns, strict=True):
        if name != text_col and pa.types.is_string(column.type):
            column = column.combine_chunks()
            rows = lone_surrogates(column)
            if rows.any():
                fixed = [
                    _SURROGATE_CHAR.sub("?", v.decode("utf-8", "surrogatepass"))
                    for v in column.filter(pa.array(rows)).cast(pa.binary()).to_pylist()
                ]
                column = pc.replace_with_mask(column, pa.array(rows), pa.array(fixed, pa.string()))
        columns.append(column)
    return pa.table(columns, names=table.column_names)


_SURROGATE_CHAR = re.compile("[\ud800-\udfff]")


def lone_surrogates(strings: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.bool_]:
    """Which of ``strings`` hold a lone surrogate, as :func:`parse_json_lines` leaves one in
    the text column: the three bytes ED A0..BF xx, never in valid UTF-8."""
    chunks = strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]
    parts = [_marked_rows(c) for c in chunks]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)


def _marked_rows(array: pa.Array) -> npt.NDArray[np.bool_]:
    n = len(array)
    out = np.zeros(n, dtype=bool)
    large = pa.types.is_large_string(array.type)
    if not n or not (large or pa.types.is_string(array.type)):
        return out
    data, at = string_buffers(array)
    if not len(data):
        return out
    body = data[at[0] : at[-1]]
    lead = np.flatnonzero(body[:-1] == 0xED)
    marks = lead[body[lead + 1] >= 0xA0] + at[0]
    out[np.searchsorted(at, marks, side="right") - 1] = True
    return out


def _wide(head: bytes) -> bool:
    """UTF-16 / UTF-32 text (a byte order mark, or zero bytes among the first four)."""
    return head[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in head


def merged_types(schemas: list[pa.Schema]) -> dict[str, pa.DataType]:
    """Each field's type over all ``schemas`` as Spark infers it, or :class:`Declined`."""
    seen: dict[str, pa.DataType] = {}
    folded: dict[str, str] = {}
    for schema in schemas:
        for x in schema:
            other = folded.setdefault(x.name.lower(), x.name)
            if other != x.name:
                raise Declined(f"fields {other!r} and {x.name!r} differ only in case")
            if pa.types.is_null(x.type):
                seen.setdefault(x.name, x.type)
                continue
            if x.type not in _TYPES:
                raise Declined(f"field {x.name!r} is {x.type}")
            before = seen.get(x.name)
            if before is not None and not pa.types.is_null(before) and before != x.type:
                raise Declined(f"field {x.name!r} is {before} and {x.type}")
            seen[x.name] = x.type
    return {n: pa.string() if pa.types.is_null(t) else t for n, t in seen.items()}


def _column(table: pa.Table, name: str, dtype: pa.DataType) -> pa.ChunkedArray:
    if name not in table.column_names:
        return pa.chunked_array([pa.nulls(table.num_rows, dtype)])
    return table.column(name).cast(dtype)


def reject_reasons(
    ids: pa.Array | pa.ChunkedArray | None,
    text: pa.Array | pa.ChunkedArray,
    size: npt.NDArray[np.int64],
    max_text_bytes: int,
) -> npt.NDArray[Any]:
    """Each row's reason for rejects by the per-row rules ``io.reasons.ROW_RULES`` (None: it
    passes), the first that matches, as ``stages.rejects.split_rejects`` gives it: the
    reader's own (:data:`reasons.NOT_UNICODE`, a text with a lone surrogate,
    :func:`lone_surrogates`), ``null doc_id`` (``ids`` None: never), ``null text``, ``text
    larger than N bytes``."""
    reason = np.full(len(text), None, dtype=object)
    never = np.zeros(len(text), dtype=bool)
    rules = {  # io.reasons.ROW_RULES, as (matches, reason) masks
        READER: (lone_surrogates(text), NOT_UNICODE),
        ID_NULL: (never if ids is None else ids.is_null().to_numpy(zero_copy_only=False), NULL_ID),
        TEXT_TYPE: (never, ""),  # the reader gives a string column or declines the input
        TEXT_NULL: (text.is_null().to_numpy(zero_copy_only=False), NULL_TEXT),
        TEXT_SIZE: (size > max_text_bytes, too_large(max_text_bytes)),
    }
    for rule in reversed(ROW_RULES):  # the first rule that matches wins: applied last
        matches, why = rules[rule]
        reason[matches] = why
    return reason


def repeated_ids(ids: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.int64]:
    """The positions of the ``ids`` that occur more than once."""
    values = ids.to_numpy(zero_copy_only=False)
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    return np.flatnonzero(counts[inverse] > 1)


def later_copies(
    ids: pa.Array | pa.ChunkedArray, texts: pa.Array | pa.ChunkedArray
) -> npt.NDArray[np.int64]:
    """The positions of the rows ``stages.rejects.split_rejects`` rejects as a ``duplicate
    doc_id`` (``ids`` and ``texts`` of rows that pass every other check): of each repeated
    id, every row but the one with the smallest text."""
    keyed = pa.table({"i": ids, "t": texts})
    order = pc.sort_indices(keyed, [("i", "ascending"), ("t", "ascending")]).to_numpy()
    sorted_ids = keyed.column("i").take(order).to_numpy(zero_copy_only=False)
    again = np.zeros(len(order), dtype=bool)
    again[1:] = sorted_ids[1:] == sorted_ids[:-1]
    return order[again]


def rejects_table(
    ids: pa.Array | pa.ChunkedArray,
    reason: npt.NDArray[Any],
    bad: npt.NDArray[np.int64],
    made: bool,
) -> tuple[dict[str, int], pa.Table]:
    """The rejected rows ``bad``: rows per reason, and their ``doc_id, reason`` table."""
    rejects = pa.table(
        {DOC_ID: ids.take(pa.array(bad)), REASON: pa.array(reason[bad].tolist(), pa.string())}
    )
    named, n = np.unique(reason[bad].astype(str), return_counts=True)
    counts = {str(r): int(c) for r, c in zip(named, n, strict=True)}
    return counts, _required(rejects, DOC_ID) if made else rejects


def _checked(
    table: pa.Table, text_col: str, max_text_bytes: int, file_bytes: int, made: bool
) -> LocalInput:
    """``stages.rejects.split_rejects`` of ``table`` (with ``doc_id`` and ``text``)."""
    ids, text = table.column(DOC_ID), table.column(TEXT)
    size = pc.fill_null(pc.binary_length(text), 0).to_numpy()
    reason = reject_reasons(None if made else ids, text, size, max_text_bytes)
    passing = np.flatnonzero(reason == None)  # noqa: E711 (an object array)
    if len(passing):
        reason[passing[later_copies(ids.take(passing), text.take(passing))]] = DUPLICATE_ID
    good_rows = np.flatnonzero(reason == None)  # noqa: E711
    bad_rows = np.flatnonzero(reason != None)  # noqa: E711
    counts, rejects = rejects_table(ids, reason, bad_rows, made)
    good = table.take(good_rows)
    text_bytes = int(size[good_rows].sum())
    stats = {"rejects_by_reason": rejects_by_reason(counts)}
    return LocalInput(good, rejects, counts, text_col, text_bytes, file_bytes, stats)
