"""The small-run floor (issue 20): the whole dedup job against a bare spark-submit that reads
the same JSON lines and writes them as Parquet (``bench/io_floor.py``), on a small input,
both with Spark's defaults.

    .venv/bin/python bench/bench_floor.py [--docs 1334] [--runs 3]

The input is the first ``--docs`` documents of the 50,000-document dense corpus (real
texts of ../shared/data, built and cached by lib.dense_corpus, as for bench_dense). Each
system is one whole ``spark-submit --master local[2] --driver-memory 2g`` process; one
untimed warm-up of each, then ``--runs`` pairs, floor and job in turn, so a pair shares
the machine's state. Prints each run, the medians, the ratio job / floor pair by pair
(target: <= 3) and one JSON line; the job's stage seconds and Spark job count come from its
report.json. Working files go to out/bench_floor/.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from lib.corpora import SHARED_DATA
from lib.dense_corpus import SEED, load_or_build
from lib.processes import SPARK_ARGS, spark_submit, timed_process

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "out" / "bench_floor"


def corpus(n: int) -> Path:
    """The first ``n`` documents of the 50,000-document dense corpus, as JSON lines."""
    path = WORK / f"corpus-{n}.jsonl"
    if not path.exists():
        whole = load_or_build(50_000, SEED).path
        WORK.mkdir(parents=True, exist_ok=True)
        with open(whole, encoding="utf-8") as src, open(path, "w", encoding="utf-8") as dst:
            for i, line in enumerate(src):
                if i == n:
                    break
                dst.write(line)
    return path


def commands(path: Path) -> dict[str, list[str]]:
    submit = [spark_submit(), *SPARK_ARGS]
    return {
        "floor": [*submit, str(ROOT / "bench/io_floor.py"), str(path), str(WORK / "floor")],
        "job": [
            *submit,
            str(ROOT / "jobs/dedup.py"),
            "--config",
            str(ROOT / "conf/dedup.toml"),
            "--input",
            str(path),
            "--input-format",
            "jsonl",
            "--id-col",
            "doc_id",
            "--output",
            str(WORK / "job"),
        ],  # fmt: skip
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--docs", type=int, default=1334)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--min-free-gb", type=float, default=5.0)
    args = p.parse_args(argv)
    if not SHARED_DATA.is_dir():
        shared = SHARED_DATA
        print(f"bench_floor: skipped: {shared} is absent (real texts needed)")
        return 0
    cmds = commands(corpus(args.docs))
    seconds: dict[str, list[float]] = {"floor": [], "job": []}
    reports: list[dict[str, Any]] = []
    for i in range(args.runs + 1):  # run 0: the warm-up of both
        for system, cmd in cmds.items():
            run = timed_process(system, cmd, i, args, args.timeout)
            if run.rc != 0:
                print(f"bench_floor: {system} run {i} failed (exit {run.rc}, log {run.log})")
                return 1
            if i:
                seconds[system].append(run.seconds)
        if i:
            reports.append(json.loads((WORK / "job" / "report.json").read_text()))
    ratios = [j / f for j, f in zip(seconds["job"], seconds["floor"], strict=True)]
    med = {s: statistics.median(v) for s, v in seconds.items()}
    mid = reports[sorted(range(len(reports)), key=lambda i: seconds["job"][i])[len(reports) // 2]]
    figures = {
        "docs": args.docs,
        "seconds": {s: [round(x, 1) for x in v] for s, v in seconds.items()},
        "median": {s: round(v, 1) for s, v in med.items()},
        "ratio_pairs": [round(r, 2) for r in ratios],
        "ratio_median": round(statistics.median(ratios), 2),
        "job_stages": mid["seconds"],
        "job_spark": mid["spark"],
    }
    for s in cmds:
        runs = ", ".join(f"{x:.1f}" for x in seconds[s])
        print(f"{s:<6} median {med[s]:6.1f} s  ({runs})")
    print(f"job / floor: {figures['ratio_median']} (pairs {figures['ratio_pairs']}; target <= 3)")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
