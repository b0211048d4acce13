"""SimHash candidate keys: the multi-table scheme (the default) against ditto's k + 1 blocks,
and against MinHash, on bench_dedup's scaled corpus (real texts of ../shared/data).

    .venv/bin/python bench/bench_hamming.py [--docs 50000] [--timeout S]

Each system is one whole ``spark-submit jobs/dedup.py`` process with Spark's defaults
(``--master local[2]``), in turn (``--systems`` picks some), on the same JSON-lines
corpus (the first ``--docs`` documents of ``lib.corpora.scaled_corpus``, seed as there):

- ``simhash-multi``: SimHash k = 3, the default scheme (6 blocks, 20 tables), no hot bucket
  (``--hot-bucket-size`` above any bucket);
- ``simhash-ditto``: the same with ``--hamming-blocks 4`` (ditto's k + 1 blocks);
- ``simhash``: SimHash with every default (hot buckets at 1,000);
- ``minhash``: MinHash with every default;
- ``io-floor``: ``bench/io_floor.py``, which reads the same JSON lines and writes them as
  Parquet (the I/O floor of issue 20's throughput target: the job's throughput is this
  run's seconds over the job's).

Prints a table (wall seconds, candidate and verified pairs, candidates per verified pair)
and whether the two no-hot-bucket SimHash runs verified exactly the same pairs; one JSON
line last. Working files go to out/bench_hamming/.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from lib.corpora import SHARED_DATA, load_real, scaled_corpus
from lib.processes import spark_submit, timed_process

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "out" / "bench_hamming"
NO_HOT = str(10**9)

SYSTEMS: dict[str, list[str]] = {
    "simhash-multi": ["--method", "simhash", "--max-distance", "3", "--hot-bucket-size", NO_HOT],
    "simhash-ditto": ["--method", "simhash", "--max-distance", "3", "--hot-bucket-size", NO_HOT]
    + ["--hamming-blocks", "4"],
    "simhash": ["--method", "simhash", "--max-distance", "3"],
    "minhash": ["--method", "minhash"],
    "io-floor": [],
}


def corpus(n: int) -> Path:
    path = WORK / f"corpus-{n}.jsonl"
    if not path.exists():
        real = [d for docs in load_real().values() for d in docs]
        docs = scaled_corpus(real, n).docs  # as bench_dedup builds it
        WORK.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            for doc_id, text in docs:
                fh.write(json.dumps({"doc_id": doc_id, "text": text}, ensure_ascii=False) + "\n")
    return path


def pairs(out: Path) -> set[tuple[str, str]]:
    table = pq.read_table(out / "pairs", columns=["a", "b"])
    return set(zip(table.column("a").to_pylist(), table.column("b").to_pylist(), strict=True))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--docs", type=int, default=50_000)
    p.add_argument("--timeout", type=float, default=3600)
    p.add_argument("--min-free-gb", type=float, default=10.0)
    p.add_argument(
        "--systems",
        type=lambda v: v.split(","),
        default=list(SYSTEMS),
        help=f"comma-separated, of {', '.join(SYSTEMS)} (default: all)",
    )
    args = p.parse_args(argv)
    if not SHARED_DATA.is_dir():
        print(f"bench_hamming: skipped: {SHARED_DATA} is absent (real texts needed)")
        return 0
    path = corpus(args.docs)
    figures: dict[str, Any] = {"docs": args.docs}
    for system in args.systems:
        flags = SYSTEMS[system]
        out = WORK / system
        cmd = [spark_submit(), "--master", "local[2]", "--driver-memory", "2g"]
        if system == "io-floor":
            cmd += [str(ROOT / "bench/io_floor.py"), str(path), str(out)]
        else:
            cmd += [str(ROOT / "jobs/dedup.py"), "--config", str(ROOT / "conf/dedup.toml")]
            cmd += ["--input", str(path), "--input-format", "jsonl", "--id-col", "doc_id"]
            cmd += ["--output", str(out), "--outputs", "docs,clusters,pairs,rejects", *flags]
        run = timed_process(system, cmd, 0, args, args.timeout)
        done = run.rc == 0 and system != "io-floor"
        report = json.loads((out / "report.json").read_text()) if done else {}
        counts = report.get("counts", {})
        figures[system] = {
            "seconds": round(run.seconds, 1),
            "rc": run.rc,
            "candidates": counts.get("candidates"),
            "verified": counts.get("verified"),
            "hamming": report.get("hamming"),
            "stages": report.get("seconds"),
        }
    same = None
    ran = [s for s in ("simhash-multi", "simhash-ditto") if s in figures]
    if len(ran) == 2 and figures["simhash-multi"]["rc"] == figures["simhash-ditto"]["rc"] == 0:
        same = pairs(WORK / "simhash-multi") == pairs(WORK / "simhash-ditto")
    figures["same_verified_pairs_without_hot_buckets"] = same
    print(f"{'system':<15}{'seconds':>10}{'candidates':>14}{'verified':>12}{'cand/ver':>10}")
    for system in args.systems:
        f = figures[system]
        ratio = f["candidates"] / f["verified"] if f["verified"] else float("nan")
        print(
            f"{system:<15}{f['seconds']:>10.1f}{f['candidates'] or 0:>14,}"
            f"{f['verified'] or 0:>12,}{ratio:>10.2f}"
        )
    print(f"same verified pairs (multi-table vs ditto blocks, no hot bucket): {same}")
    if "io-floor" in figures and figures["io-floor"]["rc"] == 0:
        floor = figures["io-floor"]["seconds"]
        share = {s: round(floor / f["seconds"], 3) for s, f in figures.items()
                 if isinstance(f, dict) and s != "io-floor" and f.get("rc") == 0}  # fmt: skip
        figures["throughput_vs_io_floor"] = share
        print(f"throughput as a share of the I/O floor's (target >= 0.333): {share}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
