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

import string
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from neardup_udfs.io.input_files import unread_files
from neardup_udfs.io.storage import Listed, LocalStorage, StorageError
from neardup_udfs.schemas import DOC_ID, REASON, TEXT
from neardup_udfs.stages.read import rejects_by_reason

__all__ = [
    "Counted",
    "Declined",
    "LocalInput",
    "checked_columns",
    "input_files",
    "input_table",
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
    tables = [(f, _read_file(f)) for f in files if f.length > 0]
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


def _read_file(f: Listed) -> pa.Table:
    """One file's records (:func:`parse_json_lines`), or :class:`Declined`."""
    with open(f.uri.removeprefix("file:"), "rb") as fh:
        data = fh.read()
    return parse_json_lines(data, f.uri, first=True)


def parse_json_lines(data: bytes, uri: str, *, first: bool) -> pa.Table:
    """Records of JSON lines ``data`` (of file ``uri``; ``first``: from its start) as pyarrow
    infers them (fields inferred as timestamps re-read as the strings they are), checked
    as valid UTF-8, or :class:`Declined`."""
    if first and (data[:3] == b"\xef\xbb\xbf" or _wide(data[:4])):
        raise Declined(f"{uri} is not plain UTF-8")
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
    try:
        table.validate(full=True)  # invalid UTF-8: Spark's reader rejects those lines
    except pa.ArrowInvalid as e:
        raise Declined(f"{uri} is not valid UTF-8 ({e})") from None
    return table


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
    """Each row's reason for rejects by the per-row rules of ``stages.rejects.split_rejects``
    (None: it passes), the first that matches: ``null doc_id`` (``ids`` None: never),
    ``null text``, ``text larger than N bytes``."""
    reason = np.full(len(text), None, dtype=object)
    rules = [
        (size > max_text_bytes, f"text larger than {max_text_bytes} bytes"),
        (text.is_null().to_numpy(zero_copy_only=False), "null text"),
    ]
    if ids is not None:
        rules.append((ids.is_null().to_numpy(zero_copy_only=False), "null doc_id"))
    for mask, why in rules:  # the first rule that matches wins: applied last
        reason[mask] = why
    return reason


def repeated_ids(ids: pa.Array | pa.ChunkedArray) -> npt.NDArray[np.int64]:
    """The positions of the ``ids`` that occur more than once."""
    values = ids.to_numpy(zero_copy_only=False)
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    return np.flatnonzero(counts[inverse] > 1)


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
        keyed = pa.table({"i": ids.take(passing), "t": text.take(passing)})
        order = pc.sort_indices(keyed, [("i", "ascending"), ("t", "ascending")]).to_numpy()
        sorted_ids = keyed.column("i").take(order).to_numpy(zero_copy_only=False)
        repeat = np.zeros(len(order), dtype=bool)
        repeat[1:] = sorted_ids[1:] == sorted_ids[:-1]
        reason[passing[order[repeat]]] = "duplicate doc_id"
    good_rows = np.flatnonzero(reason == None)  # noqa: E711
    bad_rows = np.flatnonzero(reason != None)  # noqa: E711
    counts, rejects = rejects_table(ids, reason, bad_rows, made)
    good = table.take(good_rows)
    text_bytes = int(size[good_rows].sum())
    stats = {"rejects_by_reason": rejects_by_reason(counts)}
    return LocalInput(good, rejects, counts, text_col, text_bytes, file_bytes, stats)
