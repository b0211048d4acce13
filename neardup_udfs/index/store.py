"""The persistent index's layout and manifest: what an index holds and how a batch commits.

An index is a directory on any filesystem of the storage layer (``storage``: Hadoop's in
the jobs, pyarrow's in the CLI)::

    DIR/_INDEX.json                       the manifest: pipeline, LSH shape, committed batches
    DIR/batches/<NNNNN>-<nonce>/docs/     seq, doc_id, exact_key, fingerprint | signature
    DIR/batches/<NNNNN>-<nonce>/keys/     band=B/depth=D/ parquet files of (key, seq)
    DIR/batches/<NNNNN>-<nonce>/rejects/  input rows the batch could not index, with a reason

Only the batches the manifest lists exist for readers: a batch's files are written first,
then a new manifest listing it replaces the old one in one rename, so a crash in between
leaves the index as it was. The manifest records, per batch folder, the count, total size
and a digest of the names and sizes of its data files (:class:`Fileset`), so
:func:`check_index` finds a deleted, truncated or added file without reading any data.
No Spark here: the CLI reads indexes without a JVM.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from neardup_udfs import __version__
from neardup_udfs.io.storage import ArrowStorage, HadoopStorage, Storage, StorageError, join
from neardup_udfs.kernels.hamming_tables import Scheme
from neardup_udfs.normalization import NORMALIZATIONS
from neardup_udfs.presets import Pipeline, resolve

__all__ = [
    "BATCHES",
    "EXACT_BAND",
    "FORMAT",
    "MANIFEST",
    "Batch",
    "Fileset",
    "IndexCheck",
    "IndexManifest",
    "IndexMismatch",
    "IndexStoreError",
    "batch_contents",
    "check_compatible",
    "check_index",
    "commit",
    "describe",
    "exists",
    "inspect_index",
    "is_batch_name",
    "new_manifest",
    "next_batch",
    "open_index",
    "remove_uncommitted",
    "seq_base",
    "scheme_of",
    "shape_of",
]

FORMAT = "neardup-index/1"
MANIFEST = "_INDEX.json"
EXACT_BAND = -1  # keys/ band of a document's exact-duplicate key (its canonical form's hash)
_BATCH_BITS = 32  # seq = batch number << 32 | rank of the doc_id within its batch
BATCHES = "batches"  # the folder of the batch folders
_BATCH_NAME = re.compile(r"(\d{5,})-([0-9a-f]{12})")  # next_batch's names: NNNNN-<nonce>
_SUBFOLDERS = ("docs", "keys", "rejects")  # what a batch folder holds (Parquet datasets)


class IndexStoreError(ValueError):
    """An index that cannot be opened, created or written as asked; the message names it."""


class IndexMismatch(IndexStoreError):
    """The index was built with another pipeline or LSH shape than the job's configuration."""


@dataclass(frozen=True)
class Fileset:
    """The data files of one batch subfolder (docs/, keys/, rejects/) as committed: how many,
    their total bytes, and a digest of their relative names and sizes (Spark's ``_``
    markers and hidden files, such as Hadoop's ``.crc`` sidecars, left out)."""

    files: int
    bytes: int
    digest: str


@dataclass(frozen=True)
class Batch:
    """One committed batch: its id (given by the user; adding it again is a no-op), its
    number (1, 2, ...: the high bits of its documents' ``seq``) and its directory.
    ``contents``: its subfolders' data files at commit (None: committed before they were
    recorded; such a batch is checked for the presence of data files only)."""

    batch_id: str
    number: int
    dir: str  # relative to the index root
    documents: int
    rejected: int
    created: float
    contents: Mapping[str, Fileset] | None = None


@dataclass(frozen=True)
class IndexManifest:
    """What ``_INDEX.json`` holds. ``generation`` grows by one with every commit."""

    preset: str
    pipeline_id: str
    pipeline_version: str
    kind: str  # simhash | minhash
    shape: Mapping[str, int]  # simhash: {"k": max_distance, "blocks"}; minhash: {"bands", "rows"}
    params: Mapping[str, int] = field(default_factory=dict)  # the preset's options
    normalization: str = "none"  # web | none (indexes written before it existed: none)
    generation: int = 0
    batches: tuple[Batch, ...] = ()
    format: str = FORMAT
    neardup_version: str = __version__
    created: float = field(default_factory=time.time)

    @property
    def documents(self) -> int:
        return sum(b.documents for b in self.batches)

    @property
    def full_depth(self) -> int:
        """The ``depth`` of keys/ rows that are whole band keys (SimHash blocks: 1)."""
        return int(self.shape["rows"]) if self.kind == "minhash" else 1

    def batch(self, batch_id: str) -> Batch | None:
        return next((b for b in self.batches if b.batch_id == batch_id), None)

    def to_json(self) -> str:
        d = asdict(self)
        d["shape"] = dict(self.shape)
        d["params"] = dict(self.params)
        d["documents"] = self.documents
        return json.dumps(d, indent=2, sort_keys=True) + "\n"

    @staticmethod
    def from_json(text: str, where: str) -> IndexManifest:
        """The manifest ``text`` holds. IndexStoreError naming ``where`` when it is not JSON
        (damaged: a truncated file), another format, or a field is missing or invalid
        (:func:`_field_problems`)."""
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise IndexStoreError(
                f"index manifest {where} is damaged (truncated or not JSON: {e}); restore it "
                "from a copy or rebuild the index"
            ) from None
        try:
            if not isinstance(d, dict):
                raise TypeError(f"a JSON object is expected, not {type(d).__name__}")
            if d.get("format") != FORMAT:
                raise IndexStoreError(
                    f"{where}: format {d.get('format')!r} is not {FORMAT!r} "
                    "(written by another neardup version?)"
                )
            total = d.pop("documents", None)
            d["batches"] = tuple(_batch_of(b) for b in d["batches"])
            manifest = IndexManifest(**d)
        except (KeyError, TypeError, ValueError) as e:
            if isinstance(e, IndexStoreError):
                raise
            why = f"field {e} is missing" if isinstance(e, KeyError) else str(e)
            raise IndexStoreError(f"{where} is not a valid index manifest: {why}") from None
        problems = _field_problems(manifest, total)
        if problems:
            raise IndexStoreError(f"{where} is not a valid index manifest: {problems[0]}")
        return manifest


def _batch_of(d: Any) -> Batch:
    if not isinstance(d, dict):
        raise TypeError(f"a batch is a JSON object, not {type(d).__name__}")
    contents = d.get("contents")
    if contents is not None:
        if not isinstance(contents, dict):
            raise TypeError(f"batch contents is a JSON object, not {type(contents).__name__}")
        d = {**d, "contents": {str(k): Fileset(**v) for k, v in contents.items()}}
    return Batch(**d)


def _count(value: Any, least: int = 0) -> bool:
    """True when ``value`` is an integer (not a bool) >= ``least``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _field_problems(m: IndexManifest, total: Any = None) -> list[str]:
    """What is wrong with the fields of ``m`` (empty: nothing). ``total``: the manifest's
    redundant ``documents`` (None: not recorded), which must be the batches' sum."""
    out: list[str] = []
    for name in ("preset", "pipeline_id", "pipeline_version", "neardup_version"):
        if not isinstance(getattr(m, name), str) or not getattr(m, name):
            out.append(f"{name} must be a non-empty string, got {getattr(m, name)!r}")
    if m.kind not in ("simhash", "minhash"):
        out.append(f"kind must be 'simhash' or 'minhash', got {m.kind!r}")
    elif not isinstance(m.shape, Mapping):
        out.append(f"shape must be an object, got {m.shape!r}")
    elif m.kind == "simhash":
        k: Any = m.shape.get("k")
        blocks: Any = m.shape.get("blocks")  # None: made before the scheme was recorded
        if not (
            _count(k) and k <= 63 and (blocks is None or (_count(blocks) and k < blocks <= 64))
        ):
            out.append(
                f"shape of a simhash index must be {{k <= 63, k < blocks <= 64}}, got "
                f"{dict(m.shape)}"
            )
    elif not (_count(m.shape.get("bands"), 1) and _count(m.shape.get("rows"), 1)):
        out.append(f"shape of a minhash index must be {{bands, rows}} >= 1, got {dict(m.shape)}")
    if not isinstance(m.params, Mapping):
        out.append(f"params must be an object, got {m.params!r}")
    if m.normalization not in NORMALIZATIONS:
        out.append(f"normalization must be one of {list(NORMALIZATIONS)}, got {m.normalization!r}")
    if not _count(m.generation):
        out.append(f"generation must be a non-negative integer, got {m.generation!r}")
    if not isinstance(m.created, int | float) or isinstance(m.created, bool):
        out.append(f"created must be a number, got {m.created!r}")
    seen: dict[str, set[Any]] = {"batch_id": set(), "number": set(), "dir": set()}
    for i, b in enumerate(m.batches, start=1):
        out += [f"batch {i} ({b.batch_id!r}): {p}" for p in _batch_problems(b)]
        for name, values in seen.items():
            value = getattr(b, name)
            if isinstance(value, str | int) and value in values:
                out.append(f"batch {i}: {name} {value!r} is listed twice")
            elif isinstance(value, str | int):
                values.add(value)
    if not out and total is not None and total != m.documents:
        out.append(f"documents is {total!r}, but its batches hold {m.documents}")
    return out


def _batch_problems(b: Batch) -> list[str]:
    out: list[str] = []
    if not isinstance(b.batch_id, str) or not b.batch_id:
        out.append(f"batch_id must be a non-empty string, got {b.batch_id!r}")
    if not _count(b.number, 1) or b.number >= 1 << (63 - _BATCH_BITS):
        out.append(f"number must be an integer in [1, 2**31), got {b.number!r}")
    name = b.dir.removeprefix(f"{BATCHES}/") if isinstance(b.dir, str) else ""
    match = _BATCH_NAME.fullmatch(name) if isinstance(b.dir, str) and name != b.dir else None
    if match is None:
        out.append(f"dir must be {BATCHES}/NNNNN-<12 hex digits>, got {b.dir!r}")
    elif int(match.group(1)) != b.number:
        out.append(f"dir {b.dir!r} is not the folder of batch number {b.number!r}")
    for name in ("documents", "rejected"):
        if not _count(getattr(b, name)):
            out.append(f"{name} must be a non-negative integer, got {getattr(b, name)!r}")
    if not isinstance(b.created, int | float) or isinstance(b.created, bool):
        out.append(f"created must be a number, got {b.created!r}")
    for sub, fs in (b.contents or {}).items():
        if sub not in _SUBFOLDERS:
            out.append(f"contents names {sub!r}, not one of {list(_SUBFOLDERS)}")
        if not (_count(fs.files) and _count(fs.bytes) and isinstance(fs.digest, str)):
            out.append(f"contents of {sub!r} must be {{files, bytes, digest}}, got {fs!r}")
    return out


def shape_of(pipeline: Pipeline, max_distance: int, blocks: int | None = None) -> dict[str, int]:
    """The LSH shape an index stores for ``pipeline``: for SimHash ``max_distance`` (stored
    as ``k``, ditto's name) and the ``blocks`` of its multi-table keys
    (``kernels.hamming_tables``; default ``max_distance + 1``, ditto's index), for MinHash
    the pipeline's bands x rows."""
    if pipeline.kind == "simhash":
        blocks = blocks if blocks is not None else max_distance + 1
        return {"k": int(max_distance), "blocks": int(blocks)}
    return {"bands": pipeline.param("bands"), "rows": pipeline.param("rows")}


def scheme_of(manifest: IndexManifest) -> Scheme:
    """A SimHash index's key scheme: the blocks it was created with (an index made before
    the scheme was recorded has ditto's ``max_distance + 1``)."""
    max_distance = int(manifest.shape["k"])
    return Scheme(int(manifest.shape.get("blocks", max_distance + 1)), max_distance)


def new_manifest(
    preset: str, pipeline: Pipeline, max_distance: int, scheme: Scheme | None = None
) -> IndexManifest:
    """The manifest of an empty index for ``pipeline`` (and, for SimHash, ``max_distance``
    and the key ``scheme``'s blocks: ditto's ``max_distance + 1`` when None)."""
    return IndexManifest(
        preset=preset,
        pipeline_id=pipeline.id,
        pipeline_version=pipeline.version,
        kind=pipeline.kind,
        shape=shape_of(pipeline, max_distance, scheme.blocks if scheme is not None else None),
        params=dict(pipeline.params),
        normalization=pipeline.normalization.name,
    )


def pipeline_of(manifest: IndexManifest) -> Pipeline:
    """The pipeline an index was built with (its preset, options and normalization): what
    queries against it must use."""
    return resolve(manifest.preset, normalize=manifest.normalization, **manifest.params)


def _describe(pipeline_id: str, shape: Mapping[str, int]) -> str:
    return f"{pipeline_id!r} with " + ", ".join(f"{k}={v}" for k, v in sorted(shape.items()))


def check_compatible(
    manifest: IndexManifest,
    pipeline: Pipeline,
    max_distance: int,
    where: str,
    blocks: int | None = None,
) -> None:
    """Raise IndexMismatch unless ``manifest`` was built with ``pipeline``'s id and version
    and the same LSH shape; the message names both sides. SimHash: ``blocks`` is the key
    scheme a run asked for (None: whatever the index has, which every batch and query then
    uses); another one than the index's is a mismatch."""
    shape = shape_of(pipeline, max_distance)
    if manifest.normalization != pipeline.normalization.name:
        raise IndexMismatch(
            f"index {where} was built with normalization {manifest.normalization!r} "
            f"(pipeline {manifest.pipeline_id!r}); this job normalizes texts with "
            f"{pipeline.normalization.name!r}. Pass --normalize {manifest.normalization} "
            f'(config key normalize = "{manifest.normalization}") to use this index, or '
            "build a new one"
        )
    built_shape = {key: v for key, v in manifest.shape.items() if key != "blocks"}
    wanted_shape = {key: v for key, v in shape.items() if key != "blocks"}
    if (
        manifest.pipeline_id != pipeline.id
        or manifest.pipeline_version != pipeline.version
        or built_shape != wanted_shape
    ):
        built = _describe(manifest.pipeline_id, built_shape)
        wanted = _describe(pipeline.id, wanted_shape)
        raise IndexMismatch(
            f"index {where} was built with pipeline {built}; this job is configured for "
            f"{wanted}. Fingerprints of different pipelines are not comparable: use the "
            "index's settings or build a new index"
        )
    if pipeline.kind == "simhash" and blocks is not None:
        have = scheme_of(manifest).blocks
        if blocks != have:
            raise IndexMismatch(
                f"index {where} keys its SimHashes on {have} blocks (hamming_blocks = {have}); "
                f"this job asks for hamming_blocks = {blocks}. An index keeps the scheme it "
                f"was created with: pass --hamming-blocks {have}, or leave it out to use the "
                "index's"
            )


def _storage(path: str, storage: Storage | None) -> Storage:
    """``storage``, or pyarrow's filesystem of ``path`` (the CLI, no JVM)."""
    if storage is not None:
        return storage
    try:
        return ArrowStorage(path)
    except StorageError as e:
        raise IndexStoreError(f"cannot open index location {path!r}: {e}") from None


def _first_line(e: BaseException) -> str:
    """An exception's message in one line (a JVM exception: its class and message)."""
    java = getattr(e, "java_exception", None)  # py4j's Py4JJavaError
    text = str(java.toString()) if java is not None else str(e)
    return next((line.strip() for line in text.splitlines() if line.strip()), type(e).__name__)


def _read_text(store: Storage, path: str) -> str | None:
    """The manifest file's text (None: no file). IndexStoreError naming ``path`` when it
    cannot be read, or is damaged: its bytes fail Hadoop's checksum (a file changed behind
    the ``.crc`` sidecar of Hadoop's local filesystem, e.g. truncated) or are not UTF-8."""
    try:
        data = store.read_bytes(path)
    except Exception as e:  # OSError (pyarrow, StorageError) or py4j's Py4JJavaError
        if not isinstance(e, OSError) and getattr(e, "java_exception", None) is None:
            raise
        message = _first_line(e)
        if "ChecksumException" in message:
            raise IndexStoreError(
                f"index manifest {path} is damaged: its bytes do not match their checksum "
                f"({message}); restore it from a copy or rebuild the index"
            ) from None
        raise IndexStoreError(f"cannot read index manifest {path}: {message}") from None
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise IndexStoreError(
            f"index manifest {path} is damaged (not UTF-8 text: {e}); restore it from a copy "
            "or rebuild the index"
        ) from None


def open_index(path: str, storage: Storage | None = None) -> IndexManifest:
    """The manifest of the index at ``path``, its fields checked; IndexStoreError naming
    the manifest file when there is none, it cannot be read, it is damaged (truncated,
    failing its checksum) or a field is invalid. The batch folders are not looked at
    (:func:`check_index` does). ``storage``: the filesystem layer to read it with
    (default: pyarrow's for ``path``)."""
    text = _read_text(_storage(path, storage), join(path, MANIFEST))
    if text is None:
        raise IndexStoreError(f"no index at {path!r} (no {MANIFEST}): build one first")
    return IndexManifest.from_json(text, f"{path}/{MANIFEST}")


def _hidden(rel: str) -> bool:
    """A path Spark's readers skip: a component starting with ``.`` (Hadoop's ``.crc``
    files), or with ``_`` and not a partition (``_SUCCESS``, ``_temporary``)."""
    return any(
        part.startswith(".") or (part.startswith("_") and "=" not in part)
        for part in rel.split("/")
    )


def _data_files(store: Storage, root: str) -> dict[str, int] | None:
    """Every data file under directory ``root``: its path relative to ``root`` -> bytes
    (hidden files out: :func:`_hidden`); empty when ``root`` is missing. None when
    ``store`` cannot list sizes (neither Hadoop's nor pyarrow's layer)."""
    if isinstance(store, HadoopStorage):
        found = {f.under: f.length for f in store.files(root)}
    elif isinstance(store, ArrowStorage):
        import pyarrow.fs as pafs

        base = store.path(root).rstrip("/")
        selector = pafs.FileSelector(base, recursive=True, allow_not_found=True)
        found = {
            i.path[len(base) + 1 :]: int(i.size)
            for i in store.fs.get_file_info(selector)
            if i.type == pafs.FileType.File
        }
    else:
        return None
    return {rel: size for rel, size in found.items() if rel and not _hidden(rel)}


def _fileset(files: Mapping[str, int]) -> Fileset:
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(f"{rel}\t{files[rel]}\n".encode())
    return Fileset(len(files), sum(files.values()), digest.hexdigest()[:16])


def _under(files: Mapping[str, int], sub: str) -> dict[str, int]:
    """The files of ``files`` inside subfolder ``sub``, relative to it."""
    return {rel[len(sub) + 1 :]: n for rel, n in files.items() if rel.startswith(f"{sub}/")}


def batch_contents(
    path: str, rel: str, storage: Storage | None = None
) -> dict[str, Fileset] | None:
    """The :class:`Fileset` of each subfolder (docs, keys, rejects) of batch folder ``rel``
    of the index at ``path`` that holds data files: what the batch records at commit.
    None when ``storage`` cannot list file sizes (the batch then records nothing)."""
    files = _data_files(_storage(path, storage), join(path, rel))
    if files is None:
        return None
    contents = {sub: _under(files, sub) for sub in _SUBFOLDERS}
    return {sub: _fileset(f) for sub, f in contents.items() if f}


@dataclass(frozen=True)
class IndexCheck:
    """What :func:`inspect_index` found. ``manifest``: None when it could not be read (the
    one problem says why). ``verified``: batches whose files matched their recorded
    :class:`Fileset` s; ``present``: batches checked for data files only (committed before
    contents were recorded, or a filesystem layer that lists no sizes); ``rows``: whether
    the documents of docs/ were counted (Parquet footers)."""

    path: str
    manifest: IndexManifest | None
    problems: tuple[str, ...]
    verified: int = 0
    present: int = 0
    rows: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems


def inspect_index(path: str, storage: Storage | None = None, *, rows: bool = False) -> IndexCheck:
    """Every problem of the index at ``path`` that can be found without reading its data,
    one line each naming the file or folder at fault: the manifest (missing, unreadable,
    damaged, an invalid field: :func:`open_index`), then each listed batch: its folder is
    there, and its docs/, keys/ and rejects/ hold the data files its commit recorded (their
    count, bytes and a digest of names and sizes), or, for a batch committed before those
    were recorded, some data file wherever it has documents (docs/, keys/) or rejects.

    ``rows`` (pyarrow's layer only: the CLI): also count docs/ rows from the Parquet
    footers against the batch's ``documents`` (an unreadable footer is a damaged file).
    Never raises for a problem of the index; reads no row data.
    """
    try:
        store = _storage(path, storage)
        manifest = open_index(path, store)
    except IndexStoreError as e:
        return IndexCheck(path, None, (str(e),))
    count_rows = rows and isinstance(store, ArrowStorage)
    problems: list[str] = []
    verified = present = 0
    for b in manifest.batches:
        found, exact = _check_batch(store, path, b, count_rows)
        problems += found
        if not found:
            verified, present = verified + exact, present + (not exact)
    return IndexCheck(path, manifest, tuple(problems), verified, present, count_rows)


def _check_batch(store: Storage, path: str, b: Batch, rows: bool) -> tuple[list[str], bool]:
    """The problems of batch ``b``, and whether its files were compared with a recorded
    :class:`Fileset` (else: checked for presence)."""
    root = join(path, b.dir)
    what = f"batch {b.batch_id!r}"
    try:
        if store.kind(root) != "dir":
            return [f"{what}: its folder {root} is missing (listed in {MANIFEST})"], False
        files = _data_files(store, root)
    except Exception as e:  # OSError (pyarrow) or py4j's Py4JJavaError: cannot list
        return [f"{what}: cannot list its folder {root}: {_first_line(e)}"], False
    if files is None:  # a layer that lists no sizes: names only
        files = {
            f"{sub}/{name}": 0
            for sub in _SUBFOLDERS
            for name in store.list(join(root, sub))
            if not _hidden(name)
        }
        exact = False
    else:
        exact = b.contents is not None
    problems = []
    if exact:
        recorded = b.contents or {}
        for sub in _SUBFOLDERS:  # a subfolder recorded without files must still have none
            want, have = recorded.get(sub) or _fileset({}), _fileset(_under(files, sub))
            if have == want:
                continue
            where = join(root, sub)
            if (have.files, have.bytes) == (want.files, want.bytes):
                problems.append(
                    f"{what}: {where} holds other files than its commit recorded "
                    "(names or sizes changed)"
                )
            else:
                problems.append(
                    f"{what}: {where} holds {have.files} data files of {have.bytes} bytes; "
                    f"its commit recorded {want.files} of {want.bytes} bytes (files deleted, "
                    "truncated or added)"
                )
    else:
        needed = [("docs", b.documents), ("keys", b.documents), ("rejects", b.rejected)]
        for sub, n in needed:
            if n and not _under(files, sub):
                problems.append(
                    f"{what}: {join(root, sub)} holds no data files, but the batch has {n} "
                    f"{'rejects' if sub == 'rejects' else 'documents'}"
                )
    if rows and not problems and isinstance(store, ArrowStorage):
        problems += _row_problems(store, what, join(root, "docs"), _under(files, "docs"), b)
    return problems, exact


def _row_problems(
    store: ArrowStorage, what: str, docs: str, files: Mapping[str, int], b: Batch
) -> list[str]:
    import pyarrow.parquet as pq

    total = 0
    for rel in sorted(files):
        where = join(docs, rel)
        try:
            total += pq.read_metadata(store.path(where), filesystem=store.fs).num_rows
        except Exception as e:  # pyarrow: ArrowInvalid (no footer), OSError
            return [f"{what}: {where} is damaged (not a readable Parquet file: {_first_line(e)})"]
    if total != b.documents:
        return [f"{what}: {docs} holds {total} documents; the manifest records {b.documents}"]
    return []


def check_index(path: str, storage: Storage | None = None) -> IndexManifest:
    """The manifest of the index at ``path`` once :func:`inspect_index` found no problem:
    what a job or a query opens an index with, before any work. IndexStoreError otherwise,
    naming the first missing or damaged file or folder (and how many more problems
    ``neardup index check`` would list)."""
    result = inspect_index(path, storage)
    if result.manifest is None:
        raise IndexStoreError(result.problems[0])
    if result.problems:
        more = len(result.problems) - 1
        tail = f" (and {more} more: `neardup index check {path}` lists them)" if more else ""
        raise IndexStoreError(f"index {path!r} is damaged: {result.problems[0]}{tail}")
    return result.manifest


def exists(path: str, storage: Storage | None = None) -> bool:
    return _storage(path, storage).kind(join(path, MANIFEST)) is not None


def next_batch(manifest: IndexManifest, batch_id: str) -> tuple[int, str]:
    """Number and fresh directory (relative) for a new batch: a crashed attempt's files
    never share a directory with a later one."""
    number = max((b.number for b in manifest.batches), default=0) + 1
    if number >= 1 << (63 - _BATCH_BITS):
        raise IndexStoreError(f"index has {number - 1} batches: no more fit")
    return number, f"{BATCHES}/{number:05d}-{uuid.uuid4().hex[:12]}"


def seq_base(number: int) -> int:
    """The first ``seq`` of batch ``number``; its documents get ``seq_base + rank``."""
    return number << _BATCH_BITS


def commit(
    path: str,
    previous: IndexManifest | None,
    manifest: IndexManifest,
    storage: Storage | None = None,
) -> IndexManifest:
    """Make ``manifest`` the index's manifest, as one rename, if the index still has
    ``previous`` (None: no index yet); returns the committed manifest.

    Raises:
        IndexStoreError: another writer committed since ``previous`` was read (nothing
            changes; retry the add).
    """
    store = _storage(path, storage)
    target = join(path, MANIFEST)
    current = _read_text(store, target)
    now = None if current is None else IndexManifest.from_json(current, target)
    if (now is None) != (previous is None) or (
        now is not None and previous is not None and now.generation != previous.generation
    ):
        raise IndexStoreError(
            f"index {path!r} changed while this batch was written (another writer?): "
            "nothing was committed; run the add again"
        )
    new = replace(manifest, generation=(previous.generation if previous else 0) + 1)
    store.write_bytes(target, new.to_json().encode("utf-8"))
    return new


def is_batch_name(name: str) -> bool:
    """True for the names the index gives its batch folders (``NNNNN-<12 hex digits>``,
    :func:`next_batch`): the only folders it may ever delete."""
    return _BATCH_NAME.fullmatch(name) is not None


def remove_uncommitted(
    path: str, manifest: IndexManifest | None, storage: Storage | None = None
) -> list[str]:
    """Delete the batch folders no committed manifest lists (left by crashed adds); returns
    them. Only folders directly in ``batches/`` named as the index names its batches
    (:func:`is_batch_name`) are deleted: any other file or folder there is left alone.
    Assumes one writer at a time."""
    store = _storage(path, storage)
    listed = {b.dir for b in manifest.batches} if manifest else set()
    base = join(path, BATCHES)
    removed = []
    for name in store.list(base):
        rel = f"{BATCHES}/{name}"
        if rel in listed or not is_batch_name(name):
            continue
        if store.kind(join(base, name)) == "dir":
            store.delete(join(base, name))
            removed.append(rel)
    return sorted(removed)


def describe(manifest: IndexManifest) -> dict[str, Any]:
    """A short summary for logs and reports."""
    return {
        "pipeline": manifest.pipeline_id,
        "shape": dict(manifest.shape),
        "documents": manifest.documents,
        "batches": [b.batch_id for b in manifest.batches],
        "generation": manifest.generation,
    }
