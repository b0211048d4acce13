"""datatrove's MinHash deduplication on a JSON lines corpus, as its documentation sets it up,
run by the python of the bench's own datatrove venv (``lib.datatrove_peer``), never by the
project's: this file imports datatrove and nothing of the project.

    out/bench-venvs/datatrove/bin/python bench/lib/datatrove_run.py --input corpus.jsonl
        --workdir DIR --kept kept.txt [--tasks 2] [--workers 2]

1. the corpus split into ``--tasks`` JSON lines shards of consecutive lines (datatrove's
   readers give each task whole files: one file would leave all but one task idle);
2. datatrove's four MinHash stages, each a ``LocalPipelineExecutor`` with ``--workers``
   worker processes, all with ``MinhashConfig()`` unchanged (its defaults: 5-grams of its
   English word tokenizer on its normalized text, 14 buckets x 8 hashes, 64-bit xxhash):
   a. signatures: ``JsonlReader`` (text key ``text``, id key ``doc_id``) +
      ``MinhashDedupSignature``, ``--tasks`` tasks;
   b. buckets: ``MinhashDedupBuckets``; datatrove requires its task count to be a multiple
      of the number of buckets, so 14 tasks (on ``--workers`` workers);
   c. cluster: ``MinhashDedupCluster``; datatrove requires a single task;
   d. filter: ``JsonlReader`` + ``MinhashDedupFilter`` + ``JsonlWriter`` (uncompressed),
      ``--tasks`` tasks: the kept documents;
3. the kept documents' ids collected to ``--kept`` (one a line), and DIR/run.json: seconds
   per stage, counts, the configuration and the package versions.

Everything lives under DIR (shards, signatures, buckets, removal lists, kept documents,
datatrove's logs); DIR is emptied first. Exit 1 when a stage leaves a task incomplete.
"""

import argparse
import json
import os
import shutil
import sys
import time
from importlib.metadata import version
from pathlib import Path


def split(corpus: Path, shards: Path, parts: int) -> int:
    """``corpus`` as ``parts`` files of consecutive lines; returns the line count."""
    with open(corpus, encoding="utf-8") as fh:
        lines = [line for line in fh if line.strip()]
    shards.mkdir(parents=True)
    size = -(-len(lines) // parts)
    for k in range(parts):
        with open(shards / f"part-{k:05d}.jsonl", "w", encoding="utf-8") as out:
            out.writelines(lines[k * size : (k + 1) * size])
    return len(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", type=Path, required=True)
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--kept", type=Path, required=True)
    p.add_argument("--tasks", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here reads the hub

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import (
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.dedup.minhash import MinhashConfig
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers.jsonl import JsonlWriter

    started = time.perf_counter()
    work = args.workdir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    shards, sigs, buckets = work / "shards", work / "signatures", work / "buckets"
    remove, kept_docs, logs = work / "remove_ids", work / "kept_docs", work / "logs"
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    docs = split(args.input, shards, args.tasks)
    seconds["split"] = round(time.perf_counter() - clock, 2)

    config = MinhashConfig()

    def reader():
        return JsonlReader(str(shards), text_key="text", id_key="doc_id")

    stages = [
        ("signatures", [reader(), MinhashDedupSignature(str(sigs), config=config)], args.tasks),
        ("buckets", [MinhashDedupBuckets(str(sigs), str(buckets), config=config)], None),
        ("cluster", [MinhashDedupCluster(str(buckets), str(remove), config=config)], 1),
        (
            "filter",
            [
                reader(),
                MinhashDedupFilter(str(remove)),
                JsonlWriter(str(kept_docs), compression=None),
            ],
            args.tasks,
        ),
    ]
    for name, pipeline, tasks in stages:
        tasks = config.num_buckets if tasks is None else tasks
        clock = time.perf_counter()
        executor = LocalPipelineExecutor(
            pipeline=pipeline,
            tasks=tasks,
            workers=min(args.workers, tasks),
            logging_dir=str(logs / name),
        )
        executor.run()
        seconds[name] = round(time.perf_counter() - clock, 2)
        incomplete = executor.get_incomplete_ranks(range(tasks))
        if incomplete:
            print(f"datatrove_run: stage {name}: tasks {incomplete} incomplete", file=sys.stderr)
            return 1

    clock = time.perf_counter()
    kept = []
    for path in sorted(kept_docs.glob("*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            kept.extend(json.loads(line)["id"] for line in fh if line.strip())
    args.kept.parent.mkdir(parents=True, exist_ok=True)
    args.kept.write_text("".join(f"{d}\n" for d in kept), "utf-8")
    seconds["collect"] = round(time.perf_counter() - clock, 2)
    info = {
        "docs": docs,
        "kept": len(kept),
        "removed": docs - len(kept),
        "config": str(config),
        "tasks": {"signatures": args.tasks, "buckets": config.num_buckets, "cluster": 1}
        | {"filter": args.tasks},
        "workers": args.workers,
        "seconds": seconds,
        "total_seconds": round(time.perf_counter() - started, 2),
        "versions": {k: version(k) for k in ("datatrove", "numpy", "spacy", "xxhash")},
    }
    (work / "run.json").write_text(json.dumps(info, indent=1), "utf-8")
    print(f"datatrove_run: {json.dumps(info)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
