"""Queries against a persistent index: ditto ``Index.Near`` and semblance ``Forest.query``
semantics over the index's candidates, and a reader that answers a few queries without
Spark (the ``neardup near`` / ``neardup similar`` commands).

The ranking functions take the candidates a key lookup found and run the single-machine
kernels on them, so a result is, by construction, what the kernel would return over the
whole index: every document the kernel could return is among the candidates.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from neardup_udfs.index.store import IndexManifest, IndexStoreError, check_index, scheme_of
from neardup_udfs.io.storage import ArrowStorage, StorageError
from neardup_udfs.kernels import hamming_index, lsh
from neardup_udfs.kernels.hamming_index import Match
from neardup_udfs.kernels.lsh_forest import Forest

__all__ = [
    "LocalIndex",
    "Similar",
    "near_ranked",
    "shared_prefix",
    "similar_ranked",
]

U64 = npt.NDArray[np.uint64]


@dataclass(frozen=True)
class Similar:
    """One ``similar`` result: rank 1, 2, ... in the Forest's order."""

    rank: int
    id: str
    jaccard: float  # estimated: the fraction of equal signature slots


def near_ranked(
    fp: int, k: int, index_k: int, ids: Sequence[str], fps: Sequence[int], seqs: Sequence[int]
) -> list[Match]:
    """ditto ``Index.Near(fp, k)`` over the candidates (added in ``seq`` order): every one
    within ``min(k, index_k)`` bits, by distance then id (byte-wise)."""
    index = hamming_index.Index(index_k)
    for i in np.argsort(np.asarray(seqs, dtype=np.int64), kind="stable"):
        index.add(ids[i], int(fps[i]) & 0xFFFFFFFFFFFFFFFF)
    return index.near(int(fp) & 0xFFFFFFFFFFFFFFFF, k)


def shared_prefix(query: U64, sigs: U64, trees: int, depth: int) -> npt.NDArray[np.int64]:
    """``(m, trees)``: how many leading values of each tree's key every signature shares
    with ``query``."""
    q = np.asarray(query, dtype=np.uint64).reshape(1, trees, depth)
    s = np.asarray(sigs, dtype=np.uint64).reshape(-1, trees, depth)
    return np.cumprod(s == q, axis=2).sum(axis=2)


def similar_ranked(
    query: U64,
    n: int,
    trees: int,
    depth: int,
    level: int,
    ids: Sequence[str],
    sigs: U64,
    seqs: Sequence[int],
) -> list[Similar] | None:
    """semblance ``Forest.query(query, n)`` over candidates that include every indexed
    document sharing at least ``level`` leading values of some tree with ``query``.

    Returns:
        The results, or None when fewer than ``n`` candidates share ``level`` values: the
        Forest's walk would then go below ``level``, so the caller must look up the
        candidates of ``level - 1``. At level 1 the results are final.

    Notes:
        Candidates are added in ``seq`` order (the index's insertion order). An id stored
        more than once reports the Jaccard of the entry through which the Forest's walk met
        it (the same whatever ``n`` and ``level``).
    """
    sigs = np.asarray(sigs, dtype=np.uint64).reshape(-1, trees * depth)
    prefix = shared_prefix(query, sigs, trees, depth).max(axis=1, initial=0)
    deep = {ids[int(i)] for i in np.flatnonzero(prefix >= level)}
    if level > 1 and len(deep) < n:
        return None
    forest = Forest(trees, depth)
    order = np.argsort(np.asarray(seqs, dtype=np.int64), kind="stable")
    for i in order:
        if prefix[i] >= 1:  # no shared first value in any tree: never a result
            forest.add(ids[i], sigs[i])
    q = np.asarray(query, dtype=np.uint64)
    found = forest.query(q, n)
    met = _entries_met(found, ids, sigs, order, shared_prefix(q, sigs, trees, depth), depth)
    return [
        Similar(rank, id, float(np.mean(sigs[met[id]] == q)))
        for rank, id in enumerate(found, start=1)
    ]


def _entries_met(
    found: Sequence[str],
    ids: Sequence[str],
    sigs: U64,
    order: npt.NDArray[np.intp],
    prefix: npt.NDArray[np.int64],
    depth: int,
) -> dict[str, int]:
    """For each found id, the candidate row through which the Forest's walk met it first:
    the deepest shared prefix, then the first tree with it, then that tree's key, then seq.
    The walk's order does not depend on how many results are asked for, so neither does
    the entry (and its Jaccard) reported for an id stored more than once."""
    wanted = set(found)
    best: dict[str, tuple[tuple[int, int, tuple[int, ...], int], int]] = {}
    for rank_in_seq, i in enumerate(order):
        if ids[i] not in wanted or prefix[i].max() < 1:
            continue
        deepest = int(prefix[i].max())
        tree = int(np.argmax(prefix[i] == deepest))
        key = tuple(int(v) for v in sigs[i, tree * depth : (tree + 1) * depth])
        walk = (-deepest, tree, key, rank_in_seq)
        if ids[i] not in best or walk < best[ids[i]][0]:
            best[ids[i]] = (walk, int(i))
    return {id: row for id, (_, row) in best.items()}


class LocalIndex:
    """An index opened for a few queries in this process (pyarrow, no Spark): each lookup
    reads only the key partitions and row groups that can hold the query's keys.

    Opening checks the index (``index.store.check_index``: the manifest, every batch
    folder and its files); a damaged index, found then or by a lookup (a Parquet file
    pyarrow cannot read), is an IndexStoreError naming the index, never a pyarrow error."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            store = ArrowStorage(path)
        except StorageError as e:
            raise IndexStoreError(str(e)) from None
        self.manifest: IndexManifest = check_index(path, store)
        self._fs, root = store.fs, store.path(path)
        # an empty batch (every document of its crawl was a duplicate) has no files to read
        dirs = [posixpath.join(root, b.dir) for b in self.manifest.batches if b.documents]
        self._keys = [self._dataset(posixpath.join(d, "keys"), "hive") for d in dirs]
        self._docs = [self._dataset(posixpath.join(d, "docs"), None) for d in dirs]

    def _dataset(self, path: str, partitioning: str | None) -> ds.Dataset:
        try:
            return ds.dataset(
                path, format="parquet", filesystem=self._fs, partitioning=partitioning
            )
        except (pa.ArrowException, OSError) as e:
            raise self._damaged(e) from None

    def _damaged(self, e: Exception) -> IndexStoreError:
        line = next((x for x in str(e).splitlines() if x.strip()), type(e).__name__)
        return IndexStoreError(f"index {self.path!r} is damaged: {line}")

    def _scan(
        self, datasets: list[ds.Dataset], columns: list[str], cond: ds.Expression
    ) -> list[pa.Table]:
        """Each dataset's ``columns`` of the rows matching ``cond``; IndexStoreError when a
        file cannot be read (damaged since the index was opened or checked)."""
        try:
            return [d.to_table(columns=columns, filter=cond) for d in datasets]
        except (pa.ArrowException, OSError) as e:
            raise self._damaged(e) from None

    def lookup(self, depth: int, band_keys: dict[int, set[int]]) -> pa.Table:
        """``key, seq, band`` of the stored keys at ``depth`` equal to any of ``band_keys``
        (band -> signed 64-bit keys): one filtered scan per batch."""
        wanted = {(band, key) for band, keys in band_keys.items() for key in keys}
        every_key = pa.array(sorted({key for _, key in wanted}), pa.int64())
        cond = (
            (ds.field("depth") == depth)
            & ds.field("band").isin(pa.array(sorted(band_keys), pa.int32()))
            & ds.field("key").isin(every_key)
        )
        schema = pa.schema([("key", pa.int64()), ("seq", pa.int64()), ("band", pa.int32())])
        parts = self._scan(self._keys, ["key", "seq", "band"], cond)
        found = pa.concat_tables([t.cast(schema) for t in parts]) if parts else schema.empty_table()
        pairs = zip(found.column("band").to_pylist(), found.column("key").to_pylist(), strict=True)
        return found.filter(pa.array([p in wanted for p in pairs], pa.bool_()))

    def documents(self, seqs: Sequence[int], value: str) -> pa.Table:
        """``seq, doc_id, <value>`` of the stored documents with these seqs."""
        wanted = pa.array(sorted(set(seqs)), pa.int64())
        cond = ds.field("seq").isin(wanted)
        parts = self._scan(self._docs, ["seq", "doc_id", value], cond)
        return pa.concat_tables(parts) if parts else pa.table({"seq": [], "doc_id": [], value: []})

    def near(self, fp: int, k: int) -> list[Match]:
        """ditto ``Index.Near``: every indexed document within ``k`` bits (k clamped down to
        the index's k), by distance then id."""
        self.require_kind("simhash", "near")
        index_k = int(self.manifest.shape["k"])
        keys = scheme_of(self.manifest).keys(np.array([fp], dtype=np.uint64))
        blocks = keys[0].view(np.int64)
        found = self.lookup(1, {b: {int(v)} for b, v in enumerate(blocks)})
        docs = self.documents(found.column("seq").to_pylist(), "fingerprint")
        return near_ranked(
            fp,
            k,
            index_k,
            docs.column("doc_id").to_pylist(),
            docs.column("fingerprint").to_pylist(),
            docs.column("seq").to_pylist(),
        )

    def similar(self, sig: U64, n: int) -> list[Similar]:
        """semblance ``Forest.query(sig, n)`` with trees x depth = the index's bands x rows,
        walking down one prefix depth at a time until the result is settled."""
        self.require_kind("minhash", "similar")
        trees, depth = int(self.manifest.shape["bands"]), int(self.manifest.shape["rows"])
        sig = np.asarray(sig, dtype=np.uint64)
        prefixes = lsh.prefix_keys_batch(sig.reshape(1, -1), trees, depth)[0].view(np.int64)
        for level in range(depth, 0, -1):
            found = self.lookup(level, {b: {int(prefixes[b, level - 1])} for b in range(trees)})
            docs = self.documents(found.column("seq").to_pylist(), "signature")
            sigs = _signature_matrix(docs.column("signature"), trees * depth)
            ranked = similar_ranked(
                sig,
                n,
                trees,
                depth,
                level,
                docs.column("doc_id").to_pylist(),
                sigs,
                docs.column("seq").to_pylist(),
            )
            if ranked is not None:
                return ranked
        raise AssertionError("level 1 always settles")  # pragma: no cover

    def require_kind(self, kind: str, what: str) -> None:
        """IndexStoreError unless the index holds ``kind`` values (``what`` needs them)."""
        if self.manifest.kind != kind:
            other = "similar (MinHash)" if kind == "simhash" else "near (SimHash)"
            raise IndexStoreError(
                f"index {self.path!r} holds {self.manifest.kind} values "
                f"({self.manifest.pipeline_id}): {what} needs a {kind} index; use {other}"
            )


def _signature_matrix(column: pa.ChunkedArray, width: int) -> U64:
    flat = pc.list_flatten(column).to_numpy(zero_copy_only=False).astype(np.int64)
    return flat.view(np.uint64).reshape(-1, width)
