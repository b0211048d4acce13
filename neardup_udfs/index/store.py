"""The persistent index's layout and manifest: what an index holds and how a batch commits.

An index is a directory on any filesystem of the storage layer (``storage``: Hadoop's in
the jobs, pyarrow's in the CLI)::

    DIR/_INDEX.json                       the manifest: pipeline, LSH shape, committed batches
    DIR/batches/<NNNNN>-<nonce>/docs/     seq, doc_id, exact_key, fingerprint | signature
    DIR/batches/<NNNNN>-<nonce>/keys/     band=B/depth=D/ parquet files of (key, seq)
    DIR/batches/<NNNNN>-<nonce>/rejects/  input rows the batch could not index, with a reason

Only the batches the manifest lists exist for readers: a batch's files are written first,
then a new manifest listing it replaces the old one in one rename, so a crash in between
leaves the index as it was. No Spark here: the CLI reads indexes without a JVM.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from neardup_udfs import __version__
from neardup_udfs.io.storage import ArrowStorage, Storage, StorageError, join
from neardup_udfs.kernels.hamming_tables import Scheme
from neardup_udfs.presets import Pipeline, resolve

__all__ = [
    "EXACT_BAND",
    "FORMAT",
    "MANIFEST",
    "Batch",
    "IndexManifest",
    "IndexMismatch",
    "IndexStoreError",
    "check_compatible",
    "commit",
    "describe",
    "exists",
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


class IndexStoreError(ValueError):
    """An index that cannot be opened, created or written as asked; the message names it."""


class IndexMismatch(IndexStoreError):
    """The index was built with another pipeline or LSH shape than the job's configuration."""


@dataclass(frozen=True)
class Batch:
    """One committed batch: its id (given by the user; adding it again is a no-op), its
    number (1, 2, ...: the high bits of its documents' ``seq``) and its directory."""

    batch_id: str
    number: int
    dir: str  # relative to the index root
    documents: int
    rejected: int
    created: float


@dataclass(frozen=True)
class IndexManifest:
    """What ``_INDEX.json`` holds. ``generation`` grows by one with every commit."""

    preset: str
    pipeline_id: str
    pipeline_version: str
    kind: str  # simhash | minhash
    shape: Mapping[str, int]  # simhash: {"k"}; minhash: {"bands", "rows"}
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
        try:
            d = json.loads(text)
            if not isinstance(d, dict):
                raise TypeError(f"a JSON object is expected, not {type(d).__name__}")
            if d.get("format") != FORMAT:
                raise IndexStoreError(
                    f"{where}: format {d.get('format')!r} is not {FORMAT!r} "
                    "(written by another neardup version?)"
                )
            d.pop("documents", None)
            d["batches"] = tuple(Batch(**b) for b in d["batches"])
            return IndexManifest(**d)
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise IndexStoreError(f"{where} is not a valid index manifest: {e}") from None


def shape_of(pipeline: Pipeline, k: int, blocks: int | None = None) -> dict[str, int]:
    """The LSH shape an index stores for ``pipeline``: for SimHash the distance ``k`` and the
    ``blocks`` of its multi-table keys (``kernels.hamming_tables``; default ``k + 1``,
    ditto's index), for MinHash the pipeline's bands x rows."""
    if pipeline.kind == "simhash":
        return {"k": int(k), "blocks": int(blocks if blocks is not None else k + 1)}
    return {"bands": pipeline.param("bands"), "rows": pipeline.param("rows")}


def scheme_of(manifest: IndexManifest) -> Scheme:
    """A SimHash index's key scheme: the blocks it was created with (an index made before
    the scheme was recorded has ditto's ``k + 1``)."""
    k = int(manifest.shape["k"])
    return Scheme(int(manifest.shape.get("blocks", k + 1)), k)


def new_manifest(
    preset: str, pipeline: Pipeline, k: int, scheme: Scheme | None = None
) -> IndexManifest:
    """The manifest of an empty index for ``pipeline`` (and, for SimHash, ``k`` and the key
    ``scheme``'s blocks: ditto's ``k + 1`` when None)."""
    return IndexManifest(
        preset=preset,
        pipeline_id=pipeline.id,
        pipeline_version=pipeline.version,
        kind=pipeline.kind,
        shape=shape_of(pipeline, k, scheme.blocks if scheme is not None else None),
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
    manifest: IndexManifest, pipeline: Pipeline, k: int, where: str, blocks: int | None = None
) -> None:
    """Raise IndexMismatch unless ``manifest`` was built with ``pipeline``'s id and version
    and the same LSH shape; the message names both sides. SimHash: ``blocks`` is the key
    scheme a run asked for (None: whatever the index has, which every batch and query then
    uses); another one than the index's is a mismatch."""
    shape = shape_of(pipeline, k)
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


def _read_text(store: Storage, path: str) -> str | None:
    data = store.read_bytes(path)
    return None if data is None else data.decode("utf-8")


def open_index(path: str, storage: Storage | None = None) -> IndexManifest:
    """The manifest of the index at ``path``; IndexStoreError when there is none.
    ``storage``: the filesystem layer to read it with (default: pyarrow's for ``path``)."""
    text = _read_text(_storage(path, storage), join(path, MANIFEST))
    if text is None:
        raise IndexStoreError(f"no index at {path!r} (no {MANIFEST}): build one first")
    return IndexManifest.from_json(text, f"{path}/{MANIFEST}")


def exists(path: str, storage: Storage | None = None) -> bool:
    return _storage(path, storage).kind(join(path, MANIFEST)) is not None


def next_batch(manifest: IndexManifest, batch_id: str) -> tuple[int, str]:
    """Number and fresh directory (relative) for a new batch: a crashed attempt's files
    never share a directory with a later one."""
    number = max((b.number for b in manifest.batches), default=0) + 1
    if number >= 1 << (63 - _BATCH_BITS):
        raise IndexStoreError(f"index has {number - 1} batches: no more fit")
    return number, f"batches/{number:05d}-{uuid.uuid4().hex[:12]}"


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


def remove_uncommitted(
    path: str, manifest: IndexManifest | None, storage: Storage | None = None
) -> list[str]:
    """Delete batch directories no committed manifest lists (left by crashed adds); returns
    them. Assumes one writer at a time."""
    store = _storage(path, storage)
    listed = {b.dir for b in manifest.batches} if manifest else set()
    base = join(path, "batches")
    removed = []
    for name in store.list(base):
        rel = f"batches/{name}"
        if rel not in listed and store.kind(join(base, name)) == "dir":
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
