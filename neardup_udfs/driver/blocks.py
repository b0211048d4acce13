"""JSON-lines input too large to hold, read a block at a time (the ``local`` engine's
streamed read): each block is parsed, checked and fingerprinted where it is read, on as
many processes as the driver has cores, and only its documents' ids, reject reasons and
sketches are kept; texts are read again by position where a later step needs them (the
exact checks, the samples, repeated ids, the ``docs/`` output).

What it gives equals :func:`driver.read.read_jsonl` followed by the core's fingerprint
pass over the same files: the same columns, ids, rejects and sketches, or
:class:`driver.read.Declined` for the same inputs.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from neardup_udfs.driver.batches import document_features_fn
from neardup_udfs.driver.fork import can_fork, in_parts, split
from neardup_udfs.driver.near import SET_CHUNK, SMALL_COLUMNS, Sketches, sketches_of
from neardup_udfs.driver.read import (
    Counted,
    Declined,
    checked_columns,
    input_files,
    input_table,
    later_copies,
    made_ids,
    merged_types,
    parse_json_lines,
    reject_reasons,
    rejects_table,
    repeated_ids,
)
from neardup_udfs.io.reasons import DUPLICATE_ID, rejects_by_reason
from neardup_udfs.io.scratch import ScratchSpaceError, check_room, full, make_scratch
from neardup_udfs.io.storage import Listed, LocalStorage
from neardup_udfs.presets import Pipeline
from neardup_udfs.schemas import DOC_ID, EMPTY_TEXT, EXACT_KEY, LENGTH, TEXT

__all__ = [
    "Block",
    "BlockTexts",
    "SpilledSets",
    "StreamedInput",
    "plan_blocks",
    "read_streamed",
]

_log = logging.getLogger("neardup.driver")
I64 = npt.NDArray[np.int64]
BLOCK_BYTES = 16 << 20
"""Bytes of JSON lines parsed at a time (a block ends at the first line end after it)."""
_BATCH = 4096  # texts per call of the feature kernel


@dataclass(frozen=True)
class Block:
    """A run of whole lines of one input file: bytes ``[start, end)``."""

    uri: str
    file: int  # the file's place among the input's files
    start: int
    end: int

    def read(self, text_col: str | None = None) -> pa.Table:
        """The block's records (:func:`driver.read.parse_json_lines`)."""
        with open(self.uri.removeprefix("file:"), "rb") as fh:
            fh.seek(self.start)
            data = fh.read(self.end - self.start)
        return parse_json_lines(data, self.uri, first=self.start == 0, text_col=text_col)


def plan_blocks(
    files: list[Listed], size: int = BLOCK_BYTES, max_line: int | None = None
) -> list[Block]:
    """The non-empty ``files`` cut into blocks of about ``size`` bytes, each ending at a line
    end (or at the file's end), in file order; :class:`Declined` for a line that runs more
    than ``max_line`` bytes past a cut (so no block exceeds ``size + max_line``)."""
    blocks = []
    for i, f in enumerate(files):
        start = 0
        with open(f.uri.removeprefix("file:"), "rb") as fh:
            while start < f.length:
                end = f.length
                if start + size < f.length:
                    fh.seek(start + size)
                    tail = fh.readline(-1 if max_line is None else max_line + 1)
                    if max_line is not None and len(tail) > max_line:
                        raise Declined(
                            f"{f.uri}: a line longer than {max_line} bytes near byte {start + size}"
                        )
                    end = min(f.length, start + size + len(tail))
                blocks.append(Block(f.uri, i, start, end))
                start = end
    return blocks


@dataclass
class _BlockRows:
    """What one block leaves behind: its records' ids and reject reasons, and the sketches
    of those that pass the per-row rules."""

    rows: int
    schema: pa.Schema
    ids: pa.Array | None  # the id column as strings (None: ids are made later)
    reason: npt.NDArray[Any]  # None, or the reason a row is rejected
    size: I64  # text bytes per row (0 for a null text)
    order: pa.Array | None  # the order column as read
    small: pa.Table | None  # the passing rows' exact_key, empty_text, length
    set_sizes: I64 | None = None  # the passing rows' shingle-set sizes (spilled in order)


def _block_rows(block: Block, args: tuple[Any, ...], spill: _Spill) -> _BlockRows:
    """One block read, checked and fingerprinted (``args``: the id, text and order columns,
    the text limit and the pipeline), its passing rows' sketches (and shingle sets) to
    ``spill``."""
    id_col, text_col, order_col, max_text_bytes, pipeline = args
    table = block.read(text_col)
    n = table.num_rows
    text = _strings(table, text_col, block)
    ids = _strings(table, id_col, block) if id_col else None
    size = pc.fill_null(pc.binary_length(text), 0).to_numpy().astype(np.int64)
    reason = reject_reasons(ids, text, size, max_text_bytes)
    passing = np.flatnonzero(reason == None)  # noqa: E711 (an object array)
    order = table.column(order_col).combine_chunks() if order_col in table.column_names else None
    small = None
    if len(passing):
        chosen = pa.table(
            {DOC_ID: pa.nulls(len(passing), pa.string()), TEXT: text.take(pa.array(passing))}
        )
        run = document_features_fn(pipeline, spill.add_sets if spill.sets else None)
        out = pa.Table.from_batches(list(run(iter(chosen.to_batches(max_chunksize=_BATCH)))))
        features = sketches_of(out.combine_chunks(), pipeline)
        spill.add_sketches(features)
        small = features.table.drop_columns([DOC_ID])
    sizes = spill.taken() if spill.sets else None
    return _BlockRows(n, table.schema, ids, reason, size, order, small, sizes)


def _strings(table: pa.Table, name: str, block: Block) -> pa.Array:
    """Column ``name`` as strings (all null when absent), or :class:`Declined` when it holds
    something other than strings, whole numbers or booleans."""
    if name not in table.column_names:
        return pa.nulls(table.num_rows, pa.string())
    column = table.column(name).combine_chunks()
    if not (pa.types.is_null(column.type) or column.type in (pa.string(), pa.int64(), pa.bool_())):
        raise Declined(f"{block.uri}: field {name!r} is {column.type}")
    return column.cast(pa.string())


class _Spill:
    """The passing rows' sketches, band keys and (``sets``) shingle sets, appended to
    scratch files ``<name><suffix>`` in ``folder`` as the feature pass makes them."""

    NAMES = ("sketch", "keys", "sets")

    def __init__(self, folder: str, suffix: str, sets: bool) -> None:
        self.folder = folder
        self.sets = sets
        self.files = {n: open(os.path.join(folder, n + suffix), "wb") for n in self.NAMES}  # noqa: SIM115
        self.sizes: list[I64] = []

    def add_sketches(self, features: Sketches) -> None:
        keys = features.band_keys
        self._write("sketch", features.sketch.astype(np.int64, copy=False))
        if keys is not None:
            self._write("keys", keys.astype(np.int64, copy=False))

    def add_sets(self, hashes: Any, offsets: Any) -> None:
        self._write("sets", np.ascontiguousarray(hashes, dtype=np.uint64))
        self.sizes.append(np.diff(offsets).astype(np.int64))

    def _write(self, name: str, values: npt.NDArray[Any]) -> None:
        """``values`` appended to scratch file ``name``; ScratchSpaceError (naming
        ``spark.local.dir``) when its filesystem has no room for them."""
        check_room(self.folder, values.nbytes)
        try:
            values.tofile(self.files[name])
        except OSError as e:
            raise full(e, self.folder) or e from None

    def taken(self) -> I64:
        """The sizes of the sets added since the last call."""
        sizes = np.concatenate(self.sizes) if self.sizes else np.empty(0, np.int64)
        self.sizes = []
        return sizes

    def close(self) -> None:
        for f in self.files.values():
            f.close()


def _read_blocks(
    blocks: list[Block], max_rows: int, args: tuple[Any, ...], spill: tuple[str, str, bool]
) -> list[_BlockRows]:
    """:func:`_block_rows` of ``blocks`` in order (their sketches and sets to scratch files,
    ``spill``: folder, suffix, sets or not), or :class:`Declined` once more than
    ``max_rows`` rows have passed."""
    out, passed = [], 0
    files = _Spill(*spill)
    try:
        for block in blocks:
            got = _block_rows(block, args, files)
            passed += int((got.reason == None).sum())  # noqa: E711
            if passed > max_rows:
                raise Declined(f"the input holds more than {max_rows} documents for the budget")
            out.append(got)
    finally:
        files.close()
    return out


def _read_all(
    blocks: list[Block],
    max_rows: int,
    workers: int,
    args: tuple[Any, ...],
    scratch: str,
    sets: bool,
) -> list[_BlockRows]:
    """:func:`_read_blocks` of every block, cut into ``workers`` runs of blocks when
    ``workers`` is 2 or more, each but the first in a forked process of its own
    (``driver.fork.in_parts``; a run whose process fails is redone here). The sketches, band
    keys and (``sets``) shingle sets go to the files ``sketch``, ``keys`` and ``sets`` of
    folder ``scratch``, in block order."""
    if workers < 2 or not can_fork() or len(blocks) < 2:
        return _read_blocks(blocks, max_rows, args, (scratch, "", sets))
    runs = [blocks[lo:hi] for lo, hi in split(len(blocks), workers)]
    share = max(1, max_rows * 6 // (5 * len(runs)))  # a run past its share declines early
    spills = [(scratch, f"-{i}" if i else "", sets) for i in range(len(runs))]
    tasks = [
        partial(_read_blocks, run, share, args, spill)
        for run, spill in zip(runs, spills, strict=True)
    ]
    got = in_parts(tasks, raised=(Declined, ScratchSpaceError))
    done: list[_BlockRows] = []
    for run, spill, rows in zip(runs, spills, got, strict=True):
        if rows is None:
            _log.warning("a process of the streamed read failed: its blocks ran here")
            rows = _read_blocks(run, share, args, spill)
        done.extend(rows)
    for name in _Spill.NAMES:  # each later run's files after the first's, in order
        base = os.path.join(scratch, name)
        for _, suffix, _ in spills[1:]:
            check_room(scratch, os.path.getsize(base + suffix))
            try:
                with open(base, "ab") as whole, open(base + suffix, "rb") as rest:
                    shutil.copyfileobj(rest, whole, 16 << 20)
            except OSError as e:
                raise full(e, scratch) or e from None
            os.remove(base + suffix)
    return done


@dataclass
class StreamedInput(Counted):
    """What :func:`read_streamed` read: :class:`driver.read.LocalInput`'s counts and
    rejects, the accepted documents' sketches, and how to read their rows again."""

    sketches: Sketches  # one row per accepted document, in input order
    order: pa.Array | None  # the order column of the accepted documents
    rejects: pa.Table  # doc_id, reason
    counts: dict[str, int]
    text_col: str
    text_bytes: int
    file_bytes: int
    blocks: list[Block]
    types: dict[str, pa.DataType]  # every input field's type
    good: I64  # the accepted documents' input rows (rows counted over all blocks)
    block_starts: I64  # each block's first input row; the total last
    id_col: str | None  # None: ids made from the file and record index
    stats: dict[str, Any] = field(default_factory=dict)
    sets: SpilledSets | None = None  # the accepted documents' shingle sets, when kept
    scratch: str | None = None  # the folder of this read's own that holds them

    def close(self) -> None:
        """Removes the scratch folder (the kept shingle sets)."""
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)

    @property
    def n_good(self) -> int:
        return len(self.good)

    def texts(self) -> BlockTexts:
        """The accepted documents' texts by their rows in :attr:`sketches`."""
        return BlockTexts(self.blocks, self.block_starts, self.text_col, self.good)

    def tables(self, keep: npt.NDArray[np.bool_]) -> Iterator[pa.Table]:
        """The accepted rows whose ``keep`` is true, every column as
        :func:`driver.read.read_jsonl` gives it, a block at a time in input order."""
        wanted = np.zeros(int(self.block_starts[-1]), dtype=bool)
        wanted[self.good[keep]] = True
        names = sorted(self.types)
        for i, block in enumerate(self.blocks):
            lo, hi = int(self.block_starts[i]), int(self.block_starts[i + 1])
            rows = np.flatnonzero(wanted[lo:hi])
            if not len(rows):
                continue
            table = block.read(self.text_col)
            ids = None if self.id_col else made_ids(block.uri, lo - self._file_start(i), hi - lo)
            whole = input_table(table, self.types, names, self.id_col, self.text_col, ids)
            yield whole.take(pa.array(rows))

    def empty(self) -> pa.Table:
        """No rows, with the columns :meth:`tables` gives."""
        names = sorted(self.types)
        none = pa.table({n: pa.array([], self.types[n]) for n in names})
        ids = None if self.id_col else pa.array([], pa.string())
        return input_table(none, self.types, names, self.id_col, self.text_col, ids)

    def _file_start(self, i: int) -> int:
        """The input row of the first record of block ``i``'s file."""
        j = i
        while j > 0 and self.blocks[j - 1].file == self.blocks[i].file:
            j -= 1
        return int(self.block_starts[j])


@dataclass(frozen=True)
class SpilledSets:
    """A :class:`driver.near.SetSource` over shingle sets kept in a scratch file: set ``j``
    is ``offsets[j]:offsets[j + 1]`` of its 64-bit values; an accepted document's set is
    ``index[row]``."""

    path: str
    offsets: I64
    index: I64

    def shingle_sets(self, rows: I64) -> tuple[Any, I64, I64]:
        if self.offsets[-1] == 0:
            return np.empty(0, dtype=np.uint64), self.offsets, self.index[rows]
        hashes = np.memmap(self.path, dtype=np.uint64, mode="r", shape=(int(self.offsets[-1]),))
        return hashes, self.offsets, self.index[rows]


@dataclass(frozen=True)
class BlockTexts:
    """A :class:`driver.near.TextSource` over input files: the texts of accepted documents
    (by their place among them), each block read once per call."""

    blocks: list[Block]
    block_starts: I64
    text_col: str
    good: I64

    def chunks(self, rows: I64) -> Iterator[tuple[I64, list[str]]]:
        where = self.good[rows]
        by_row = np.argsort(where, kind="stable")
        block = np.searchsorted(self.block_starts, where[by_row], side="right") - 1
        for lo, hi in _runs(block):
            b = int(block[lo])
            text = _strings(self.blocks[b].read(self.text_col), self.text_col, self.blocks[b])
            for at in range(lo, hi, SET_CHUNK):
                which = by_row[at : min(hi, at + SET_CHUNK)]
                local = where[which] - int(self.block_starts[b])
                yield which, text.take(pa.array(local)).to_pylist()


def _runs(values: I64) -> Iterator[tuple[int, int]]:
    """``[lo, hi)`` of every run of equal ``values``."""
    if not len(values):
        return
    cut = np.flatnonzero(values[1:] != values[:-1]) + 1
    edges = np.concatenate([[0], cut, [len(values)]])
    yield from zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True)


def read_streamed(
    path: str,
    id_col: str | None,
    text_col: str,
    max_text_bytes: int,
    pipeline: Pipeline,
    *,
    order_col: str | None = None,
    store: LocalStorage | None = None,
    workers: int = 1,
    max_rows: int,
    block_bytes: int | None = None,
    sets: bool = False,
    scratch_dir: str | None = None,
    claimed: Callable[[str], None] | None = None,
) -> StreamedInput:
    """``path`` read, checked and fingerprinted a block at a time: the rejects, counts and
    columns of :func:`driver.read.read_jsonl` and the sketches of the core's fingerprint
    pass, for the same files, or :class:`Declined` (also once more than ``max_rows``
    documents pass, before the rest is read). Blocks are ``block_bytes`` (default
    :data:`BLOCK_BYTES`). The sketches (and, with ``sets``, for MinHash's exact checks,
    the accepted documents' shingle sets) are kept in files of a scratch folder of this
    call's own under ``scratch_dir`` (default: the system's temporary folder), mapped
    into memory; ``claimed`` is told its path before anything is written to it.
    :meth:`StreamedInput.close` removes it, as does a failed or interrupted call
    (``KeyboardInterrupt``, ``SystemExit``); ``io.scratch.ScratchSpaceError``, naming
    ``spark.local.dir``, when its filesystem lacks the room for a write."""
    files = input_files(store or LocalStorage(), path)
    # a JSON string spends at most 6 bytes a byte of text (\u00XX): a longer line is an
    # over-long text, which Spark's reader rejects on its own
    blocks = plan_blocks(files, block_bytes or BLOCK_BYTES, 6 * max_text_bytes + (1 << 20))
    args = (id_col, text_col, order_col, max_text_bytes, pipeline)
    scratch = make_scratch(scratch_dir or tempfile.gettempdir())
    try:
        if claimed is not None:
            claimed(scratch)
        return _read_streamed(blocks, files, max_rows, workers, args, scratch, sets)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def _read_streamed(
    blocks: list[Block],
    files: list[Listed],
    max_rows: int,
    workers: int,
    args: tuple[Any, ...],
    scratch: str,
    sets: bool,
) -> StreamedInput:
    id_col, text_col, order_col, _, pipeline = args
    got = _read_all(blocks, max_rows, workers, args, scratch, sets)
    nonempty = [g.schema for g in got if g.rows]
    if not nonempty:
        raise Declined("the input holds no records")
    types = merged_types(nonempty)
    checked_columns(types, id_col, text_col, order_col)
    starts = np.zeros(len(blocks) + 1, dtype=np.int64)
    np.cumsum([g.rows for g in got], out=starts[1:])
    if id_col:
        ids = pa.concat_arrays([g.ids for g in got if g.ids is not None])
    else:
        per_file: dict[int, int] = {}
        parts = []
        for block, g in zip(blocks, got, strict=True):
            seen = per_file.get(block.file, 0)
            parts.append(made_ids(block.uri, seen, g.rows))
            per_file[block.file] = seen + g.rows
        ids = pa.concat_arrays(parts)
    reason = np.concatenate([g.reason for g in got])
    size = np.concatenate([g.size for g in got])
    passing = np.flatnonzero(reason == None)  # noqa: E711
    repeats = repeated_ids(ids.take(pa.array(passing)))
    if len(repeats):
        rows = passing[repeats]
        source = BlockTexts(blocks, starts, text_col, rows)
        texts: list[str | None] = [None] * len(rows)
        for which, chunk in source.chunks(np.arange(len(rows), dtype=np.int64)):
            for j, t in zip(which.tolist(), chunk, strict=True):
                texts[j] = t
        copies = later_copies(ids.take(pa.array(rows)), pa.array(texts, pa.string()))
        reason[rows[copies]] = _REPEATED
    good = np.flatnonzero(reason == None)  # noqa: E711
    bad = np.flatnonzero(reason != None)  # noqa: E711
    at = np.searchsorted(passing, good)  # an accepted row's place among the passing
    spilled = None
    if sets:
        sizes = [g.set_sizes for g in got if g.set_sizes is not None]
        offsets = np.zeros(len(passing) + 1, dtype=np.int64)
        if sizes:
            np.cumsum(np.concatenate(sizes), out=offsets[1:])
        spilled = SpilledSets(os.path.join(scratch, "sets"), offsets, at)
    order_values = None
    if order_col:
        dtype = types[order_col]
        columns = [
            g.order.cast(dtype) if g.order is not None else pa.nulls(g.rows, dtype) for g in got
        ]
        order_values = pa.concat_arrays(columns).take(pa.array(good))
    sketches = _assembled(got, reason, ids.take(pa.array(good)), at, len(passing), pipeline,
                          scratch)  # fmt: skip
    counts, rejects = rejects_table(ids, reason, bad, made=not id_col)
    file_bytes = sum(f.length for f in files)
    stats = {"rejects_by_reason": rejects_by_reason(counts)}
    out = StreamedInput(
        sketches, order_values, rejects, counts, text_col, int(size[good].sum()), file_bytes,
        blocks, types, good, starts, id_col, stats, spilled, scratch,
    )  # fmt: skip
    return out


def _assembled(
    got: list[_BlockRows],
    reason: npt.NDArray[Any],
    ids: pa.Array,
    at: I64,
    passing: int,
    pipeline: Pipeline,
    scratch: str,
) -> Sketches:
    """The accepted rows' sketches, in input order: rows ``at`` of the ``passing`` rows'
    sketches and band keys in the scratch files, mapped (copied only when some passing
    rows were dropped as repeated ids); their small columns from the blocks."""
    if pipeline.kind == "simhash":
        shape: tuple[int, ...] = ()
        bands = None
    else:
        shape = (pipeline.param("bands") * pipeline.param("rows"),)
        bands = (pipeline.param("bands"),)
    sketch = _mapped(os.path.join(scratch, "sketch"), passing, shape)
    band_keys = _mapped(os.path.join(scratch, "keys"), passing, bands) if bands else None
    if len(at) != passing:  # repeated ids dropped: the accepted rows only
        sketch = sketch[at]
        band_keys = band_keys[at] if band_keys is not None else None
    small, row = [], 0
    for g in got:
        mine = reason[row : row + g.rows]
        row += g.rows
        if g.small is None:
            continue
        read_passing = mine[(mine == None) | (mine == _REPEATED)]  # noqa: E711
        keep = np.flatnonzero(read_passing == None)  # noqa: E711 (repeated ids dropped)
        small.append(g.small.take(pa.array(keep)))
    if small:
        table = pa.concat_tables(small).combine_chunks()
    else:
        table = pa.table({c: pa.array([], t) for c, t in _SMALL_TYPES if c != DOC_ID})
    table = table.add_column(0, DOC_ID, ids)
    return Sketches(table.select(SMALL_COLUMNS), sketch, band_keys)


def _mapped(path: str, rows: int, shape: tuple[int, ...]) -> I64:
    """The ``rows`` int64 rows of ``shape`` in file ``path``, mapped read-only."""
    if rows == 0:
        return np.empty((0, *shape), dtype=np.int64)
    return np.memmap(path, dtype=np.int64, mode="r", shape=(rows, *shape))


_SMALL_TYPES = [(DOC_ID, pa.string()), (EXACT_KEY, pa.string()), (EMPTY_TEXT, pa.bool_()),
                (LENGTH, pa.int64())]  # fmt: skip
_REPEATED = DUPLICATE_ID
