"""An index laid out on disk as ``add_batch`` writes one, with pyarrow (no Spark), for the
tests that read, check or show one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from neardup_udfs.index.store import (
    Batch,
    IndexManifest,
    batch_contents,
    commit,
    new_manifest,
    next_batch,
    seq_base,
)
from neardup_udfs.presets import resolve

SEMBLANCE = resolve("semblance", bands=25, rows=5, k=125)


def spark_parquet(path: Path, table: pa.Table) -> None:
    """A Parquet file as Spark leaves it on Hadoop's local filesystem: with a ``.crc``
    sidecar, and a ``_SUCCESS`` marker in its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    (path.parent / f".{path.name}.crc").write_bytes(b"crc of " + path.name.encode())
    (path.parent / "_SUCCESS").write_bytes(b"")


def write_index(
    root: Path, batches: list[tuple[str, int, int]], record: bool = True
) -> IndexManifest:
    """A small index laid out as ``add_batch`` writes one, with pyarrow (no Spark): one
    ``(batch_id, documents, rejected)`` per batch, committed in order with the contents
    each batch records (``record=False``: as committed before contents were recorded)."""
    path = str(root)
    manifest, previous = new_manifest("semblance", SEMBLANCE, max_distance=3), None
    for batch_id, documents, rejected in batches:
        number, rel = next_batch(manifest, batch_id)
        folder = root / rel
        seqs = [seq_base(number) + i for i in range(documents)]
        ids = [f"{batch_id}-{i}" for i in range(documents)]
        spark_parquet(
            folder / "docs" / "part-00000.parquet", pa.table({"seq": seqs, "doc_id": ids})
        )
        keys = pa.table({"key": [7] * documents, "seq": seqs})
        spark_parquet(folder / "keys" / "band=0" / "depth=1" / "part-00000.parquet", keys)
        spark_parquet(folder / "keys" / "band=-1" / "depth=5" / "part-00001.parquet", keys)
        if rejected:
            reasons = pa.table({"doc_id": [f"r{i}" for i in range(rejected)]})
            spark_parquet(folder / "rejects" / "part-00000.parquet", reasons)
        contents = batch_contents(path, rel) if record else None
        batch = Batch(batch_id, number, rel, documents, rejected, 0.0, contents)
        manifest = commit(path, previous, replace(manifest, batches=(*manifest.batches, batch)))
        previous = manifest
    return manifest
