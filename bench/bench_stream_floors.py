"""The floors of what the local engine's streamed stages do, on one core, for a JSON-lines
corpus: the bare parse of every line (pyarrow, a block at a time), the web normalization
of every text, the MinHash signatures and shingle sets of every normalized text, and the
bare Parquet write of the parsed rows.

    .venv/bin/python bench/bench_stream_floors.py out/bench_hamming/corpus-500000.jsonl

Each figure is one pass in this process, one core, nothing else running (the streamed
fingerprint stage does the parse, the normalization and the kernel on two processes).
Prints one JSON line: seconds per floor, and the documents and bytes read.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neardup_udfs.config import load_config  # noqa: E402
from neardup_udfs.driver.blocks import plan_blocks  # noqa: E402
from neardup_udfs.io.storage import LocalStorage  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: bench_stream_floors.py CORPUS.jsonl", file=sys.stderr)
        return 2
    path = argv[0]
    conf = str(ROOT / "conf/dedup.toml")
    pipeline = load_config(conf, input=path, output="unused").pipeline()  # the job's
    blocks = plan_blocks(list(LocalStorage().files(path)))
    figures: dict[str, float] = {"parse": 0.0, "normalize": 0.0, "kernel": 0.0, "write": 0.0}
    docs = 0
    with tempfile.TemporaryDirectory() as tmp:
        writer = None
        for block in blocks:
            t = time.perf_counter()
            table = block.read()
            figures["parse"] += time.perf_counter() - t
            texts = table.column("text").to_pylist()
            docs += len(texts)
            for lo in range(0, len(texts), 4096):
                batch = texts[lo : lo + 4096]
                t = time.perf_counter()
                prepared = pipeline.normalize_batch(batch)
                figures["normalize"] += time.perf_counter() - t
                t = time.perf_counter()
                pipeline.signature_and_sets_batch(prepared, normalized=True)
                figures["kernel"] += time.perf_counter() - t
            t = time.perf_counter()
            if writer is None:
                writer = pq.ParquetWriter(f"{tmp}/floor.parquet", table.schema)
            writer.write_table(table.cast(writer.schema))
            figures["write"] += time.perf_counter() - t
        if writer is not None:
            writer.close()
    out = {k: round(v, 1) for k, v in figures.items()}
    size = Path(path).stat().st_size
    print(json.dumps({"corpus": path, "docs": docs, "bytes": size, "one_core_seconds": out}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
